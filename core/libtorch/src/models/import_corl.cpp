// CORL's Decision Transformer (algorithms/offline/dt.py) onto the studio's `dt`. The two share
// the architecture: timestep embeddings added to the R, s, a embeddings, interleaved tokens,
// LayerNorm and dropout, pre-LN blocks of causal multi-head attention (in_proj packs q, k, v
// with heads contiguous, as our qkv does) and a GELU MLP, a final LayerNorm and a tanh head on
// the state tokens. See import.h.

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "corl_names.h"
#include "dstudio/common/read_file.h"
#include "dstudio/common/text.h"
#include "dstudio/models/checkpoint_model.h"
#include "dstudio/models/export.h"
#include "dstudio/models/import.h"
#include "dstudio/models/pytorch_file.h"

namespace dstudio::models {
namespace fs = std::filesystem;

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::ostringstream s;
  s << '(';
  for (std::size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
  s << (shape.size() == 1 ? ",)" : ")");
  return s.str();
}

// The description beside an exported file (FILE.json), when it is one of a corl-dt export.
struct Described {
  bool found = false;
  nlohmann::json json;
};

Described read_described(const fs::path& file) {
  Described out;
  const fs::path path = export_sidecar(file);
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return out;
  auto j = nlohmann::json::parse(read_regular_file(path, 64u << 20), nullptr, false);
  // Another program's JSON of the same name is not ours to read.
  if (j.is_discarded() || !j.is_object() || j.value("format", std::string()) != "corl-dt")
    return out;
  if (!j.contains("constructor") || !j.at("constructor").is_object())
    throw CheckpointError(file.string() + ": its description " + path.string() +
                          " has no \"constructor\" object");
  out.found = true;
  out.json = std::move(j);
  return out;
}

std::int64_t whole(const nlohmann::json& object, const char* key, const std::string& where) {
  const auto& v = object.at(key);
  if (!v.is_number_integer())
    throw CheckpointError(where + ": \"" + key + "\" is not a whole number");
  return v.get<std::int64_t>();
}

std::vector<float> numbers(const nlohmann::json& v, const char* key, const std::string& where) {
  if (!v.is_array()) throw CheckpointError(where + ": \"" + key + "\" is not a list of numbers");
  std::vector<float> out;
  for (const auto& x : v) {
    if (!x.is_number() || !std::isfinite(x.get<double>()))
      throw CheckpointError(where + ": \"" + key +
                            "\" holds something that is not a finite number");
    out.push_back(x.get<float>());
  }
  return out;
}

// The tensors of a CORL file below the prefix its state_emb.weight sits at (a plain state_dict,
// CORL's {"model_state": ...} or any other nesting), with messages that name the file.
struct CorlTensors {
  const PyTorchFile& contents;
  std::string where, prefix;

  [[nodiscard]] CheckpointError fail(const std::string& why) const {
    return CheckpointError(where + ": " + why);
  }
  [[nodiscard]] const StoredTensor& tensor(const std::string& name) const {
    auto it = contents.tensors.find(prefix + name);
    if (it == contents.tensors.end()) throw fail("has no " + prefix + name);
    return it->second;
  }
  [[nodiscard]] std::vector<int64_t> dims(const std::string& name, std::size_t rank) const {
    const auto& t = tensor(name);
    if (t.shape.size() != rank)
      throw fail(prefix + name + " has shape " + shape_text(t.shape) + ", expected " +
                 std::to_string(rank) + " dimensions");
    return t.shape;
  }
};

CorlTensors find_state_emb(const PyTorchFile& contents, const std::string& where) {
  CorlTensors out{contents, where, {}};
  for (const auto& name : contents.order) {
    const std::string key = "state_emb.weight";
    if (name.size() >= key.size() && name.compare(name.size() - key.size(), key.size(), key) == 0 &&
        (name.size() == key.size() || name[name.size() - key.size() - 1] == '.')) {
      out.prefix = name.substr(0, name.size() - key.size());
      return out;
    }
  }
  std::string some;
  for (std::size_t i = 0; i < contents.order.size() && i < 4; ++i)
    some += (i ? ", " : "") + contents.order[i];
  throw out.fail("is not a CORL Decision Transformer: it has no state_emb.weight (" +
                 std::to_string(contents.order.size()) + " tensors" +
                 (some.empty() ? "" : ", such as " + some) + ")");
}

// The studio's `dt` the tensors' shapes describe: all but the heads, which the shapes do not say.
VariantConfig corl_variant(const CorlTensors& file, const CorlImportOptions& options) {
  const auto& prefix = file.prefix;
  VariantConfig c = make_variant("dt");
  const auto state = file.dims("state_emb.weight", 2);
  c.hidden = static_cast<int>(state[0]);
  c.state_dim = static_cast<int>(state[1]);
  c.act_dim = static_cast<int>(file.dims("action_emb.weight", 2)[1]);
  c.max_ep_len = static_cast<int>(file.dims("timestep_emb.weight", 2)[0]);
  c.layers = 0;
  while (
      file.contents.tensors.count(prefix + "blocks." + std::to_string(c.layers) + ".norm1.weight"))
    ++c.layers;
  if (c.layers == 0)
    throw file.fail("has no transformer blocks (" + prefix + "blocks.0.norm1.weight)");
  const auto inner = file.dims("blocks.0.mlp.0.weight", 2)[0];
  if (inner % c.hidden != 0)
    throw file.fail("its MLP width " + std::to_string(inner) +
                    " is not a multiple of the embedding width " + std::to_string(c.hidden));
  c.mlp_ratio = static_cast<int>(inner / c.hidden);
  c.activation = "gelu";  // CORL's nn.GELU (exact)
  c.action_tanh = true;

  int seq_len = options.seq_len;
  const auto mask = file.contents.tensors.find(prefix + "blocks.0.causal_mask");
  if (mask != file.contents.tensors.end() && mask->second.shape.size() == 2) {
    const auto tokens = mask->second.shape[0];
    if (tokens % 3 != 0)
      throw file.fail(prefix + "blocks.0.causal_mask has " + std::to_string(tokens) +
                      " rows, not 3 per step");
    if (seq_len != 0 && seq_len != tokens / 3)
      throw file.fail("was trained with seq_len " + std::to_string(tokens / 3) +
                      " (its causal mask), not " + std::to_string(seq_len));
    seq_len = static_cast<int>(tokens / 3);
  }
  if (seq_len <= 0)
    throw file.fail("does not say its seq_len (no causal_mask); give it with --seq-len");
  c.context_length = seq_len;
  return c;
}

// The description's constructor must be of the model the file holds; its num_heads (or --heads)
// gives the heads, and the configuration is then whole.
void agree_with_description(VariantConfig& c, const CorlTensors& file, const Described& described,
                            const std::string& desc, const CorlImportOptions& options) {
  const auto& d = described.json;
  if (described.found) {
    const auto& k = d.at("constructor");
    const auto agree = [&](const char* key, std::int64_t ours) {
      if (!k.contains(key)) return;
      const auto theirs = whole(k, key, desc);
      if (theirs != ours)
        throw file.fail("its description " + desc + " is of another model: its " + key + " is " +
                        std::to_string(theirs) + ", the file's " + std::to_string(ours));
    };
    agree("state_dim", c.state_dim);
    agree("action_dim", c.act_dim);
    agree("seq_len", c.context_length);
    agree("episode_len", c.max_ep_len - c.context_length);
    agree("embedding_dim", c.hidden);
    agree("num_layers", c.layers);
  }
  const std::optional<std::int64_t> described_heads =
      described.found && d.at("constructor").contains("num_heads")
          ? std::optional(whole(d.at("constructor"), "num_heads", desc))
          : std::nullopt;
  if (options.heads && described_heads && *options.heads != *described_heads)
    throw file.fail("--heads " + std::to_string(*options.heads) +
                    " disagrees with its description " + desc + " (num_heads " +
                    std::to_string(*described_heads) + ")");
  const std::int64_t heads = options.heads ? *options.heads : described_heads.value_or(1);
  if (heads < 1 || c.hidden % heads != 0)
    throw file.fail((options.heads ? "--heads " : "num_heads ") + std::to_string(heads) +
                    " does not divide the embedding width " + std::to_string(c.hidden));
  c.heads = static_cast<int>(heads);
  try {
    c.validate();
  } catch (const std::exception& e) {
    throw file.fail(std::string("gives an invalid configuration: ") + e.what());
  }
}

// Every parameter of the model from its CORL tensor. Everything of the model must have found a
// place: a tensor left over means another architecture.
void copy_corl_weights(DecisionModel& model, const CorlTensors& file) {
  const auto& prefix = file.prefix;
  std::vector<std::string> used;
  {
    torch::NoGradGuard no_grad;
    for (auto& item : model->named_parameters()) {
      auto& param = item.value();
      const std::string theirs = corl_name(item.key());
      const auto& t = file.tensor(theirs);
      std::vector<int64_t> expected(param.sizes().begin(), param.sizes().end());
      if (t.shape != expected)
        throw file.fail(prefix + theirs + " has shape " + shape_text(t.shape) +
                        ", the configuration needs " + shape_text(expected));
      param.copy_(
          torch::from_blob(const_cast<float*>(t.values.data()), param.sizes(), torch::kFloat));
      used.push_back(prefix + theirs);
    }
  }
  std::string unused;
  for (const auto& name : file.contents.order) {
    if (name.rfind(prefix, 0) != 0 || name.find("causal_mask") != std::string::npos) continue;
    if (name == "state_mean" || name == "state_std") continue;
    if (std::find(used.begin(), used.end(), name) == used.end())
      unused += (unused.empty() ? "" : ", ") + name;
  }
  if (!unused.empty()) throw file.fail("has tensors the Decision Transformer does not: " + unused);
}

// The return-to-go scale and the environment: given, or from the description; both when they
// agree.
void read_scale_and_env(CheckpointInfo& info, const CorlTensors& file, const Described& described,
                        const std::string& desc, const CorlImportOptions& options) {
  const auto& d = described.json;
  // CORL divides rewards by reward_scale's inverse: rtg_scale = 1 / reward_scale.
  std::optional<double> described_scale;
  if (described.found && d.contains("reward_scale")) {
    const auto r = d.at("reward_scale");
    if (!r.is_number() || !(r.get<double>() > 0))
      throw file.fail("its description " + desc +
                      " has a reward_scale that is not a positive number");
    described_scale = 1.0 / r.get<double>();
  }
  if (options.rtg_scale && described_scale &&
      std::abs(*options.rtg_scale - *described_scale) > 1e-9 * *described_scale)
    throw file.fail("--rtg-scale " + fixed_number(*options.rtg_scale, 6) +
                    " disagrees with its description " + desc + " (reward_scale " +
                    fixed_number(1.0 / *described_scale, 9) + ")");
  info.rtg_scale = options.rtg_scale ? *options.rtg_scale : described_scale.value_or(1000.0);
  info.training.rtg_scale = info.rtg_scale;
  const std::string described_env = described.found && d.contains("env") && d.at("env").is_string()
                                        ? d.at("env").get<std::string>()
                                        : std::string();
  if (!options.env_id.empty() && !described_env.empty() && options.env_id != described_env)
    throw file.fail("--env " + options.env_id + " disagrees with its description " + desc +
                    " (env " + described_env + ")");
  info.env_id = options.env_id.empty() ? described_env : options.env_id;
}

// The state's normalisation: 0 and 1 unless the file or the description holds it. CORL keeps the
// statistics beside model_state, as arrays of shape (1, S); the export writes them in its
// description.
void read_state_statistics(CheckpointInfo& info, const CorlTensors& file,
                           const Described& described, const std::string& desc) {
  const auto& d = described.json;
  const auto& c = info.variant;
  info.state_mean.assign(static_cast<std::size_t>(c.state_dim), 0.0f);
  info.state_std.assign(static_cast<std::size_t>(c.state_dim), 1.0f);
  for (const auto& [key, target] :
       {std::pair{"state_mean", &info.state_mean}, std::pair{"state_std", &info.state_std}}) {
    std::optional<std::vector<float>> in_file, in_description;
    if (auto it = file.contents.tensors.find(key); it != file.contents.tensors.end()) {
      if (it->second.numel() != c.state_dim)
        throw file.fail(std::string(key) + " has " + std::to_string(it->second.numel()) +
                        " values for a state of " + std::to_string(c.state_dim));
      in_file = it->second.values;
    }
    if (described.found && d.contains(key)) {
      in_description = numbers(d.at(key), key, desc);
      if (static_cast<int>(in_description->size()) != c.state_dim)
        throw file.fail("its description " + desc + " has " +
                        std::to_string(in_description->size()) + " values of " + key +
                        " for a state of " + std::to_string(c.state_dim));
    }
    if (in_file && in_description && *in_file != *in_description)
      throw file.fail(std::string("its ") + key + " differs from the one in its description " +
                      desc);
    if (in_file)
      *target = *in_file;
    else if (in_description)
      *target = *in_description;
  }
}

}  // namespace

CheckpointInfo import_corl_dt(const fs::path& file, const fs::path& out,
                              const CorlImportOptions& options) {
  const PyTorchFile contents = read_pytorch_file(file);
  const CorlTensors tensors = find_state_emb(contents, file.string());
  VariantConfig c = corl_variant(tensors, options);

  // What the file does not say, from the description `dstudio export` wrote beside it: read, the
  // round trip gives back the model that was exported, not one with CORL's defaults.
  const Described described = read_described(file);
  const std::string desc = export_sidecar(file).string();
  agree_with_description(c, tensors, described, desc, options);

  DecisionModel model(c);
  copy_corl_weights(model, tensors);

  CheckpointInfo info;
  info.variant = c;
  read_scale_and_env(info, tensors, described, desc, options);
  read_state_statistics(info, tensors, described, desc);
  info.metrics = "{}";
  save_weights_checkpoint(
      out, model, info,
      "imported from " + fs::absolute(file).string() + " (CORL Decision Transformer)");
  info.path = out.string();
  return info;
}

}  // namespace dstudio::models
