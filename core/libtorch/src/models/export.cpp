// A studio model as the state_dict that PyTorch code loads. See export.h.

#include "dstudio/models/export.h"

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "corl_names.h"
#include "dstudio/common/atomic_file.h"
#include "dstudio/common/read_file.h"
#include "dstudio/models/checkpoint_model.h"
#include "dstudio/models/pytorch_file.h"

namespace dstudio::models {
namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace {

StoredTensor stored(const torch::Tensor& t) {
  const auto c = t.detach().to(torch::kFloat).contiguous();
  StoredTensor out;
  out.dtype = "float32";
  out.shape.assign(c.sizes().begin(), c.sizes().end());
  out.values.assign(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  return out;
}

// Both files or neither: the description first, then the weights; a failure takes the first back.
void write_pair(const fs::path& out, const std::string& sidecar,
                const std::vector<NamedTensor>& tensors) {
  const auto json = export_sidecar(out);
  write_text_atomically(json, sidecar);
  try {
    write_pytorch_state_dict(out, tensors);
  } catch (...) {
    std::error_code ignored;
    fs::remove(json, ignored);
    throw;
  }
}

}  // namespace

fs::path export_sidecar(const fs::path& file) {
  fs::path json = file;
  return json.replace_extension(".json");
}

std::string corl_dt_refusal(const VariantConfig& c) {
  if (!c.plugin.empty())
    return "it is the plugin variant '" + c.variant +
           "'; CORL's DecisionTransformer is the Decision Transformer alone";
  if (c.variant != "dt")
    return "it is a '" + c.variant +
           "' model; CORL's DecisionTransformer is the Decision Transformer alone";
  if (c.tokenizer != Tokenizer::Triplet) return "its tokens are not R, s, a triplets";
  if (c.mixer != "attention" || c.hybrid)
    return "its token mixer is " + c.mixer + "; CORL's is causal multi-head attention";
  if (c.activation != "gelu") return "its MLP uses " + c.activation + "; CORL's uses GELU";
  if (c.mlp_ratio != 4)
    return "its MLP is " + std::to_string(c.mlp_ratio) + " x the embedding wide; CORL's is 4 x";
  if (!c.action_tanh) return "its action head has no tanh; CORL's has";
  if (c.max_ep_len <= c.context_length)
    return "its timestep table (" + std::to_string(c.max_ep_len) +
           " rows) leaves no episode beside CORL's seq_len padding rows";
  return {};
}

std::vector<TensorLayout> corl_dt_layout(const VariantConfig& c) {
  const std::int64_t H = c.hidden, S = c.state_dim, A = c.act_dim, T = 3LL * c.context_length;
  std::vector<TensorLayout> out;
  const auto add = [&](const std::string& name, std::vector<std::int64_t> shape,
                       const char* dtype = "float32") {
    out.push_back({name, std::move(shape), dtype});
  };
  const auto norm = [&](const std::string& name) {
    add(name + ".weight", {H});
    add(name + ".bias", {H});
  };
  const auto linear = [&](const std::string& name, std::int64_t to, std::int64_t from) {
    add(name + ".weight", {to, from});
    add(name + ".bias", {to});
  };
  norm("emb_norm");
  norm("out_norm");
  add("timestep_emb.weight", {c.max_ep_len, H});
  linear("state_emb", H, S);
  linear("action_emb", H, A);
  linear("return_emb", H, 1);
  for (int l = 0; l < c.layers; ++l) {
    const std::string b = "blocks." + std::to_string(l) + ".";
    add(b + "causal_mask", {T, T}, "bool");
    norm(b + "norm1");
    norm(b + "norm2");
    add(b + "attention.in_proj_weight", {3 * H, H});
    add(b + "attention.in_proj_bias", {3 * H});
    linear(b + "attention.out_proj", H, H);
    linear(b + "mlp.0", 4 * H, H);
    linear(b + "mlp.2", H, 4 * H);
  }
  linear("action_head.0", A, H);
  return out;
}

void export_corl_dt(const fs::path& checkpoint, const fs::path& out) {
  CheckpointInfo info;
  auto model = load_checkpoint_model(checkpoint, &info);
  const auto& c = info.variant;
  if (const auto why = corl_dt_refusal(c); !why.empty())
    throw CheckpointError(checkpoint.string() + ": cannot be written for CORL: " + why +
                          " (--format state-dict writes any variant)");
  std::map<std::string, torch::Tensor> theirs;
  for (const auto& item : model->named_parameters()) theirs[corl_name(item.key())] = item.value();
  std::vector<NamedTensor> tensors;
  for (const auto& t : corl_dt_layout(c)) {
    if (t.dtype == "bool") {
      // CORL's buffer: true where a query may not attend (above the diagonal).
      StoredTensor mask{"bool", t.shape, {}};
      const auto n = t.shape[0];
      mask.values.resize(static_cast<std::size_t>(n * n));
      for (std::int64_t q = 0; q < n; ++q)
        for (std::int64_t k = 0; k < n; ++k)
          mask.values[static_cast<std::size_t>(q * n + k)] = k > q ? 1.0f : 0.0f;
      tensors.emplace_back(t.name, std::move(mask));
      continue;
    }
    const auto it = theirs.find(t.name);
    if (it == theirs.end())
      throw CheckpointError(checkpoint.string() + ": has no parameter for CORL's " + t.name);
    auto s = stored(it->second);
    if (s.shape != t.shape)
      throw CheckpointError(checkpoint.string() + ": its parameter for CORL's " + t.name +
                            " has another shape");
    tensors.emplace_back(t.name, std::move(s));
    theirs.erase(it);
  }
  if (!theirs.empty())
    throw CheckpointError(checkpoint.string() + ": has parameters CORL's model does not (" +
                          theirs.begin()->first + ")");
  ordered_json sidecar = {
      {"format", "corl-dt"},
      {"module", "DecisionTransformer of CORL's algorithms/offline/dt.py"},
      {"load", "model.load_state_dict(torch.load(FILE), strict=True)"},
      {"constructor",
       {{"state_dim", c.state_dim},
        {"action_dim", c.act_dim},
        {"seq_len", c.context_length},
        {"episode_len", c.max_ep_len - c.context_length},
        {"embedding_dim", c.hidden},
        {"num_layers", c.layers},
        {"num_heads", c.heads},
        {"max_action", 1.0}}},
      {"state_mean", info.state_mean},
      {"state_std", info.state_std},
      {"reward_scale", 1.0 / info.rtg_scale},
      {"env", info.env_id},
      {"exported_from", fs::absolute(checkpoint).string()},
  };
  // CORL's name for it (IQL's reward_bias); its DT has none, so whoever evaluates must add it.
  if (info.training.reward_shift != 0.0) sidecar["reward_bias"] = info.training.reward_shift;
  write_pair(out, sidecar.dump(2) + "\n", tensors);
}

void export_state_dict(const fs::path& checkpoint, const fs::path& out) {
  CheckpointInfo info;
  auto model = load_checkpoint_model(checkpoint, &info);
  std::vector<NamedTensor> tensors;
  for (const auto& item : model->named_parameters())
    tensors.emplace_back(item.key(), stored(item.value()));
  for (const auto& item : model->named_buffers())
    tensors.emplace_back(item.key(), stored(item.value()));
  write_pair(out,
             checkpoint_description(info, "exported from " + fs::absolute(checkpoint).string()),
             tensors);
}

CheckpointInfo import_state_dict(const fs::path& file, const fs::path& out) {
  const auto json = export_sidecar(file);
  std::string text;
  try {
    text = read_regular_file(json, 64u << 20);
  } catch (const std::exception& e) {
    throw CheckpointError(file.string() + ": its description " + json.string() +
                          " cannot be read (" + e.what() + ")");
  }
  CheckpointInfo info = checkpoint_info_from_description(json.string(), text);
  const PyTorchFile contents = read_pytorch_file(file);
  DecisionModel model(info.variant);
  std::size_t used = 0;
  {
    torch::NoGradGuard no_grad;
    const auto fill = [&](const std::string& name, torch::Tensor& target) {
      const auto it = contents.tensors.find(name);
      if (it == contents.tensors.end())
        throw CheckpointError(file.string() + ": has no " + name + ", which the " +
                              info.variant.variant + " of " + json.string() + " needs");
      std::vector<std::int64_t> expected(target.sizes().begin(), target.sizes().end());
      if (it->second.shape != expected)
        throw CheckpointError(file.string() + ": " + name + " has another shape than the " +
                              info.variant.variant + " of " + json.string() + " needs");
      target.copy_(torch::from_blob(const_cast<float*>(it->second.values.data()), target.sizes(),
                                    torch::kFloat));
      ++used;
    };
    for (auto& item : model->named_parameters()) fill(item.key(), item.value());
    for (auto& item : model->named_buffers()) fill(item.key(), item.value());
  }
  if (used != contents.tensors.size()) {
    std::string extra;
    for (const auto& name : contents.order) {
      bool ours = false;
      for (const auto& item : model->named_parameters()) ours |= item.key() == name;
      for (const auto& item : model->named_buffers()) ours |= item.key() == name;
      if (!ours) extra += (extra.empty() ? "" : ", ") + name;
    }
    throw CheckpointError(file.string() + ": has tensors the " + info.variant.variant +
                          " does not: " + extra);
  }
  model->eval();
  save_weights_checkpoint(out, model, info, "imported from " + fs::absolute(file).string());
  info.path = out.string();
  return info;
}

}  // namespace dstudio::models
