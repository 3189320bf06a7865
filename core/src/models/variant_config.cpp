#include "dstudio/models/variant_config.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "dstudio/common/error.h"
#include "dstudio/models/config_fields.h"
#include "dstudio/models/variant_registry.h"

namespace dstudio::models {
namespace {

template <class E>
struct Names {
  E value;
  const char* name;
};

constexpr Names<Tokenizer> kTokenizers[] = {{Tokenizer::Triplet, "triplet"},
                                            {Tokenizer::Unified, "unified"},
                                            {Tokenizer::Merged, "merged"},
                                            {Tokenizer::State, "state"}};
constexpr Names<Merger> kMergers[] = {{Merger::Concat, "concat"},
                                      {Merger::Attention, "attention"},
                                      {Merger::Convolution, "conv"},
                                      {Merger::Pooling, "pooling"}};

template <class E, std::size_t N>
const char* name_of(const Names<E> (&table)[N], E value) {
  for (const auto& n : table)
    if (n.value == value) return n.name;
  return "?";
}

template <class E, std::size_t N>
E parse(const Names<E> (&table)[N], const std::string& text, const char* what) {
  std::string known;
  for (const auto& n : table) {
    if (text == n.name) return n.value;
    known += (known.empty() ? "" : ", ") + std::string(n.name);
  }
  throw UsageError(std::string("unknown ") + what + " '" + text + "'; known: " + known);
}

}  // namespace

const char* to_string(Tokenizer t) {
  return name_of(kTokenizers, t);
}
const char* to_string(Merger m) {
  return name_of(kMergers, m);
}

namespace {
// The registered mixer `text` names; throws UsageError listing the known names.
std::shared_ptr<const MixerDefinition> parse_mixer(const std::string& text) {
  if (auto d = mixer_registry().find(text)) return d;
  throw UsageError("unknown mixer '" + text + "'; known: " + mixer_registry().joined_names());
}
}  // namespace

namespace {
template <class E, std::size_t N>
std::vector<std::string> names_of(const Names<E> (&table)[N]) {
  std::vector<std::string> out;
  for (const auto& n : table) out.emplace_back(n.name);
  return out;
}
}  // namespace

namespace {
nlohmann::ordered_json as_json(const VariantConfig& c);
}  // namespace

std::vector<std::string> tokenizer_names() {
  return names_of(kTokenizers);
}
std::vector<std::string> merger_names() {
  return names_of(kMergers);
}
std::vector<std::string> mixer_names() {
  return mixer_registry().names();
}

void VariantConfig::validate() const {
  auto require = [](bool ok, const std::string& what) {
    if (!ok) throw UsageError("variant configuration: " + what);
  };
  require(context_length >= 1, "context_length must be at least 1");
  require(max_ep_len >= 1, "max_ep_len must be at least 1");
  require(hidden >= 1 && layers >= 1 && mlp_ratio >= 1,
          "hidden, layers and mlp_ratio must be positive");
  require(heads >= 1 && hidden % heads == 0, "hidden (" + std::to_string(hidden) +
                                                 ") must be a multiple of heads (" +
                                                 std::to_string(heads) + ")");
  require(activation == "relu" || activation == "gelu",
          "activation must be relu or gelu, not '" + activation + "'");
  require(dropout >= 0 && dropout < 1 && attention_dropout >= 0 && attention_dropout < 1,
          "dropout must be in [0, 1)");
  require(conv_window >= 1, "conv_window must be at least 1");
  require(gaussian_w >= 0, "gaussian_w must be >= 0");
  require(pool_size >= 1, "pool_size must be at least 1");
  require(gated_kernel >= 1, "gated_kernel must be at least 1");
  require(return_embedding >= 1, "return_embedding must be at least 1");
  require(state_dim >= 0 && state_dim <= 100000 && act_dim >= 0 && act_dim <= 100000,
          "state_dim and act_dim must be in [0, 100000]");
  require(std::isfinite(gaussian_w) && std::isfinite(gaussian_b) && std::isfinite(dropout) &&
              std::isfinite(attention_dropout),
          "numbers must be finite");
  // Every number in its documented range (config_fields.h), upper bounds included.
  const auto j = as_json(*this);
  for (const auto& f : variant_fields())
    if (f.choices.empty() && j.contains(f.key) && j[f.key].is_number() &&
        !in_range(f, j[f.key].get<double>()))
      require(false, f.key + " must be in " + range_text(f) + ", not " + j[f.key].dump());
  const auto definition = mixer_registry().find(mixer);
  if (!definition) {
    if (!plugin.empty())
      throw MissingPluginError(plugin, plugin_version, "the mixer '" + mixer + "'");
    throw UsageError("variant configuration: unknown mixer '" + mixer +
                     "'; known: " + mixer_registry().joined_names());
  }
  if (definition->options.empty()) {
    require(mixer_options.empty(), "mixer_options are for a plugin's mixer, not '" + mixer + "'");
    return;
  }
  for (const auto& [key, value] : mixer_options) {
    const MixerOption* option = nullptr;
    for (const auto& o : definition->options)
      if (o.field.key == key) option = &o;
    require(option != nullptr, "the mixer '" + mixer + "' has no option '" + key + "'");
    const bool ok =
        option->field.above ? value > option->field.minimum : value >= option->field.minimum;
    require(ok, key + " must be " + (option->field.above ? "above " : "at least ") +
                    std::to_string(option->field.minimum));
    require(!option->integer || value == static_cast<double>(static_cast<long long>(value)),
            key + " must be a whole number");
  }
}

namespace {
const std::string kAttention = "attention", kNoMixer = "none";
}  // namespace

double forward_flops(const VariantConfig& c, int batch) {
  const double B = batch, K = c.context_length, T = c.tokens(), H = c.hidden, S = c.state_dim,
               A = c.act_dim;
  const double N = B * T;  // tokens in the batch
  if (c.tokenizer == Tokenizer::State)
    return 2.0 * B * K * (S * H + (c.layers - 1) * H * H + H * A);
  double flops = 0.0;
  // Embeddings and merging.
  if (c.tokenizer == Tokenizer::Unified)
    flops += 2.0 * B * K * (c.return_embedding + (c.return_embedding + S + A) * H);
  else
    flops += 2.0 * B * K * (1 + S + A) * H +
             (c.merger == Merger::Concat ? 2.0 * B * K * (1 + S + A) * H : 0.0) +
             (c.tokenizer == Tokenizer::Merged && c.merger == Merger::Attention
                  ? 2.0 * B * K * (4 * H * H + 2 * 9 * H)
                  : 0.0);
  for (int layer = 0; layer < c.layers; ++layer) {
    // DC hybrid: the last block attends.
    const std::string& mixer = c.hybrid && layer == c.layers - 1 ? kAttention : c.mixer;
    if (const auto d = mixer_registry().find(mixer); d && d->flops) flops += d->flops(c, N);
    if (c.mixer_projection && mixer != kNoMixer) flops += 2.0 * N * H * H;
    flops += 2.0 * N * H * c.mlp_ratio * H * 2;  // the MLP's two layers
  }
  return flops + 2.0 * B * K * H * A;  // action head
}

namespace {

// Decision ConvFormer (Table 4): K 8, GELU, L 6; one filter per token type unless `single`.
void decision_convformer(VariantConfig& c, bool single, bool hybrid) {
  c.mixer = "conv";
  c.context_length = 8;
  c.activation = "gelu";
  c.single_filter = single;
  c.hybrid = hybrid;
}

// Decision HiFormer: convolution merger + pooling P 2, GELU (Table S2).
void decision_hiformer(VariantConfig& c) {
  c.activation = "gelu";
  c.tokenizer = Tokenizer::Merged;
  c.merger = Merger::Convolution;
  c.mixer = "pooling";
}

// hier: HiFormer's grid, any token merger ("none": DT's triplets) with any registered mixer.
void hier_grid(VariantConfig& c, const std::string& merger, const std::string& mixer) {
  if (merger == "none")
    c.tokenizer = Tokenizer::Triplet;
  else
    c.merger = parse(kMergers, merger, "merger");
  const auto d = parse_mixer(mixer);
  if (!d->in_hier_grid) {
    std::string grid;
    for (const auto& m : hier_mixers()) grid += (grid.empty() ? "" : ", ") + m;
    throw UsageError("hier: the mixer '" + mixer + "' is not one of its grid's (" + grid + ")");
  }
  c.mixer = d->name;
  for (const auto& o : d->options) c.mixer_options[o.field.key] = o.value;
  if (!d->origin.builtin()) {
    c.plugin = d->origin.plugin;
    c.plugin_version = d->origin.version;
  }
  if (c.mixer == "conv" && c.tokenizer != Tokenizer::Triplet) c.conv_window = 2;  // two steps
  c.single_filter = c.tokenizer != Tokenizer::Triplet;
}

// The studio's own variants, in the order `dstudio variants` lists them: each a definition as a
// plugin writes one, its defaults what it changes from VariantConfig's (which are DT's: 3 layers,
// 1 head, H 128, K 20, ReLU, dropout 0.1).
std::vector<VariantDefinition> builtin_variants() {
  auto row = [](std::string name, std::string description,
                std::function<void(VariantConfig&)> changes) {
    VariantDefinition d;
    d.name = name;
    d.description = std::move(description);
    d.defaults = [name, changes = std::move(changes)] {
      VariantConfig c;
      c.variant = name;
      changes(c);
      return c;
    };
    return d;
  };
  std::vector<VariantDefinition> rows = {
      row("dt", "Decision Transformer: causal attention over (R, s, a) triplets",
          [](VariantConfig&) {}),
      row("dc", "Decision ConvFormer: causal convolution, one filter per token type",
          [](VariantConfig& c) { decision_convformer(c, false, false); }),
      row("dc-1filter", "Decision ConvFormer with one filter for every token type",
          [](VariantConfig& c) { decision_convformer(c, true, false); }),
      row("dc-hybrid", "Decision ConvFormer whose last block attends",
          [](VariantConfig& c) { decision_convformer(c, false, true); }),
      row("direct-attention", "DC fig. 3b: a learned attention matrix shared by every input",
          [](VariantConfig& c) { c.mixer = "direct-attention"; }),
      // Gaussian-biased DT: 2 heads, w 0.1, b -0.05 (VariantConfig's defaults).
      row("gdt", "Gaussian-biased Decision Transformer: attention minus |w d^2 + b|",
          [](VariantConfig& c) {
            c.mixer = "gaussian-attention";
            c.heads = 2;
          }),
      row("udt", "Unified-token Decision Transformer: one token per step",
          [](VariantConfig& c) { c.tokenizer = Tokenizer::Unified; }),
      row("udc", "Unified-token Decision ConvFormer: gated convolution",
          [](VariantConfig& c) {
            c.tokenizer = Tokenizer::Unified;
            c.mixer = "gated-conv";
            c.activation = "gelu";
          }),
      row("dhi", "Decision HiFormer: token merger + pooling", decision_hiformer),
      row("mlp-bc", "Behaviour cloning with an MLP (no sequence)",
          [](VariantConfig& c) {
            c.tokenizer = Tokenizer::State;
            c.mixer = "none";
          }),
      row("hier", "HiFormer's grid: any token merger with any token mixer", decision_hiformer),
  };
  rows.back().grid = hier_grid;
  return rows;
}

}  // namespace

Registry<VariantDefinition>& variant_registry() {
  // Never destroyed: plugins' definitions must not outlive their code at exit.
  static auto* registry = [] {
    auto* r = new Registry<VariantDefinition>("variant");
    for (auto& d : builtin_variants()) r->add(std::move(d));
    return r;
  }();
  return *registry;
}

Registry<MixerDefinition>& mixer_registry() {
  // Never destroyed, as variant_registry().
  static auto* registry = [] {
    auto* r = new Registry<MixerDefinition>("token mixer");
    for (auto& d : builtin_mixers()) r->add(std::move(d));
    return r;
  }();
  return *registry;
}

double mixer_option(const VariantConfig& config, const std::string& key) {
  if (auto it = config.mixer_options.find(key); it != config.mixer_options.end()) return it->second;
  if (const auto d = mixer_registry().find(config.mixer))
    for (const auto& o : d->options)
      if (o.field.key == key) return o.value;
  throw UsageError("the mixer '" + config.mixer + "' has no option '" + key + "'");
}

MissingPluginError::MissingPluginError(const std::string& plugin, const std::string& version,
                                       const std::string& what)
    : Error(what + " comes from the plugin '" + plugin + (version.empty() ? "" : " " + version) +
            "', which is not loaded (put it in a plugin folder, see `dstudio plugins`)"),
      plugin_(plugin) {}

std::vector<std::string> variant_names() {
  return variant_registry().names();
}

VariantConfig make_variant(const std::string& name, const std::string& merger,
                           const std::string& mixer) {
  const auto definition = variant_registry().find(name);
  if (!definition)
    throw UsageError("unknown variant '" + name +
                     "'; known variants: " + variant_registry().joined_names());
  VariantConfig c = definition->defaults();
  c.variant = name;
  if (!definition->origin.builtin()) {
    c.plugin = definition->origin.plugin;
    c.plugin_version = definition->origin.version;
  }
  if (definition->grid) definition->grid(c, merger, mixer);
  return c;
}

namespace {

nlohmann::ordered_json as_json(const VariantConfig& c) {
  nlohmann::ordered_json j = {{"variant", c.variant},
                              {"state_dim", c.state_dim},
                              {"act_dim", c.act_dim},
                              {"context_length", c.context_length},
                              {"max_ep_len", c.max_ep_len},
                              {"hidden", c.hidden},
                              {"layers", c.layers},
                              {"heads", c.heads},
                              {"mlp_ratio", c.mlp_ratio},
                              {"activation", c.activation},
                              {"dropout", c.dropout},
                              {"attention_dropout", c.attention_dropout},
                              {"action_tanh", c.action_tanh},
                              {"tokenizer", to_string(c.tokenizer)},
                              {"merger", to_string(c.merger)},
                              {"return_embedding", c.return_embedding},
                              {"mixer", c.mixer},
                              {"hybrid", c.hybrid},
                              {"conv_window", c.conv_window},
                              {"single_filter", c.single_filter},
                              {"mixer_projection", c.mixer_projection},
                              {"gaussian_w", c.gaussian_w},
                              {"gaussian_b", c.gaussian_b},
                              {"pool_size", c.pool_size},
                              {"gated_kernel", c.gated_kernel}};
  if (!c.mixer_options.empty()) j["mixer_options"] = c.mixer_options;
  if (!c.plugin.empty()) {
    j["plugin"] = c.plugin;
    j["plugin_version"] = c.plugin_version;
  }
  return j;
}

// A whole number that fits an int, as written: 2.5 or 1e12 hidden units are refused, not cut.
int whole(const std::string& key, const nlohmann::json& value) {
  const bool integral =
      value.is_number_integer() || value.is_number_unsigned() ||
      (value.is_number_float() && std::floor(value.get<double>()) == value.get<double>());
  if (!integral)
    throw UsageError("configuration key '" + key + "' takes a whole number, not " + value.dump());
  const double v = value.get<double>();
  if (v < -2147483648.0 || v > 2147483647.0)
    throw UsageError("configuration key '" + key + "' is out of range: " + value.dump());
  return static_cast<int>(v);
}

void apply(VariantConfig& c, const nlohmann::json& j) {
  if (!j.is_object()) throw UsageError("a variant configuration must be a JSON object");
  const auto known = as_json(c);
  for (const auto& [key, value] : j.items()) {
    const bool optional = key == "mixer_options" || key == "plugin" || key == "plugin_version";
    if (!known.contains(key) && !optional)
      throw UsageError("unknown configuration key '" + key + "'");
    try {
      if (key == "variant")
        c.variant = value.get<std::string>();
      else if (key == "state_dim")
        c.state_dim = whole(key, value);
      else if (key == "act_dim")
        c.act_dim = whole(key, value);
      else if (key == "context_length")
        c.context_length = whole(key, value);
      else if (key == "max_ep_len")
        c.max_ep_len = whole(key, value);
      else if (key == "hidden")
        c.hidden = whole(key, value);
      else if (key == "layers")
        c.layers = whole(key, value);
      else if (key == "heads")
        c.heads = whole(key, value);
      else if (key == "mlp_ratio")
        c.mlp_ratio = whole(key, value);
      else if (key == "activation")
        c.activation = value.get<std::string>();
      else if (key == "dropout")
        c.dropout = value.get<double>();
      else if (key == "attention_dropout")
        c.attention_dropout = value.get<double>();
      else if (key == "action_tanh")
        c.action_tanh = value.get<bool>();
      else if (key == "tokenizer")
        c.tokenizer = parse(kTokenizers, value.get<std::string>(), "tokenizer");
      else if (key == "merger")
        c.merger = parse(kMergers, value.get<std::string>(), "merger");
      else if (key == "return_embedding")
        c.return_embedding = whole(key, value);
      else if (key == "mixer") {
        const auto d = parse_mixer(value.get<std::string>());
        c.mixer = d->name;
        if (d->options.empty()) c.mixer_options.clear();
      } else if (key == "mixer_options")
        c.mixer_options = value.get<std::map<std::string, double>>();
      else if (key == "plugin")
        c.plugin = value.get<std::string>();
      else if (key == "plugin_version")
        c.plugin_version = value.get<std::string>();
      else if (key == "hybrid")
        c.hybrid = value.get<bool>();
      else if (key == "conv_window")
        c.conv_window = whole(key, value);
      else if (key == "single_filter")
        c.single_filter = value.get<bool>();
      else if (key == "mixer_projection")
        c.mixer_projection = value.get<bool>();
      else if (key == "gaussian_w")
        c.gaussian_w = value.get<double>();
      else if (key == "gaussian_b")
        c.gaussian_b = value.get<double>();
      else if (key == "pool_size")
        c.pool_size = whole(key, value);
      else if (key == "gated_kernel")
        c.gated_kernel = whole(key, value);
    } catch (const nlohmann::json::exception&) {
      throw UsageError("configuration key '" + key + "' has the wrong type: " + value.dump());
    }
  }
}

}  // namespace

bool uses_field(const VariantConfig& c, const std::string& key) {
  // Behaviour cloning maps a state to an action with an MLP: no tokens mix, in no block.
  if (c.tokenizer == Tokenizer::State)
    for (const char* mixing :
         {"heads", "attention_dropout", "hybrid", "conv_window", "single_filter",
          "mixer_projection", "gaussian_w", "gaussian_b", "pool_size", "gated_kernel"})
      if (key == mixing) return false;
  if (key == "merger") return c.tokenizer == Tokenizer::Merged;
  if (key == "return_embedding") return c.tokenizer == Tokenizer::Unified;
  // DC hybrid: the last block uses plain causal attention instead of the mixer (also instead of
  // Gaussian attention, or of no mixer at all).
  if (key == "hybrid") return c.mixer != kAttention;
  if (key == "mixer_projection") return c.mixer != kNoMixer;
  const bool mixing = key == "heads" || key == "attention_dropout" || key == "conv_window" ||
                      key == "single_filter" || key == "gaussian_w" || key == "gaussian_b" ||
                      key == "pool_size" || key == "gated_kernel";
  if (!mixing) return true;
  if (c.hybrid && (key == "heads" || key == "attention_dropout"))
    return true;  // the attending last block
  // Each mixer says which fields it reads; a plugin's may read heads and attention_dropout.
  const auto d = mixer_registry().find(c.mixer);
  if (d && d->uses_field) return d->uses_field(c, key);
  return key == "heads" || key == "attention_dropout";
}

std::string to_json(const VariantConfig& config) {
  return as_json(config).dump(2);
}

VariantConfig variant_from_json(const std::string& text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) throw UsageError("the variant configuration is not valid JSON");
  if (!j.is_object()) throw UsageError("a variant configuration must be a JSON object");
  for (const char* key : {"variant", "plugin", "plugin_version"})
    if (j.contains(key) && !j[key].is_string())
      throw UsageError(std::string("configuration key '") + key + "' must be a string, not " +
                       j[key].dump());
  if (j.contains("plugin")) {
    // A configuration a plugin made: say which plugin is missing rather than what is unknown.
    const auto plugin = j["plugin"].get<std::string>();
    const auto version = j.value("plugin_version", std::string());
    const auto variant = j.value("variant", std::string("dt"));
    if (!variant_registry().find(variant) && variant != "hier")
      throw MissingPluginError(plugin, version, "the variant '" + variant + "'");
    if (j.contains("mixer") && j["mixer"].is_string()) {
      const auto mixer = j["mixer"].get<std::string>();
      try {
        parse_mixer(mixer);
      } catch (const UsageError&) {
        throw MissingPluginError(plugin, version, "the mixer '" + mixer + "'");
      }
    }
  }
  VariantConfig c = make_variant(j.value("variant", "dt"), "conv", "pooling");
  apply(c, j);
  c.validate();
  return c;
}

VariantConfig with_overrides(const VariantConfig& config, const std::string& json_object) {
  const auto j = nlohmann::json::parse(json_object, nullptr, false);
  if (j.is_discarded()) throw UsageError("--config is not valid JSON: " + json_object);
  VariantConfig c = config;
  apply(c, j);
  c.validate();
  return c;
}

DatasetDefaults dataset_defaults(const std::string& variant, const std::string& dataset) {
  DatasetDefaults d;
  if (dataset.empty() || (variant != "dc" && variant != "dc-1filter" && variant != "dc-hybrid"))
    return d;
  const bool hopper_m = dataset == "hopper-medium" || dataset == "hopper-medium-replay";
  d.hidden = hopper_m ? 256 : 128;
  d.learning_rate =
      hopper_m || dataset == "walker2d-medium" || dataset.rfind("antmaze", 0) == 0 ? 1e-4 : 1e-3;
  d.source = "Decision ConvFormer's Table 4 for " + dataset;
  return d;
}

const EnumNames<ModalityZeroing>& modality_zeroing_names() {
  static const EnumNames<ModalityZeroing> names{{ModalityZeroing::None, "none"},
                                                {ModalityZeroing::ReturnsToGo, "rtg"},
                                                {ModalityZeroing::PastStates, "states"},
                                                {ModalityZeroing::Actions, "actions"}};
  return names;
}

const char* to_string(ModalityZeroing z) {
  return modality_zeroing_names().name(z);
}

ModalityZeroing zeroing_from_string(const std::string& name) {
  if (const auto z = modality_zeroing_names().parse(name)) return *z;
  throw UsageError("zeroing " + name + ": expected none, rtg, states or actions");
}

const char* zeroing_label(ModalityZeroing z) {
  switch (z) {
    case ModalityZeroing::None:
      return "nothing";
    case ModalityZeroing::ReturnsToGo:
      return "RTG";
    case ModalityZeroing::PastStates:
      return "past states";
    case ModalityZeroing::Actions:
      return "actions";
  }
  return "nothing";
}

}  // namespace dstudio::models
