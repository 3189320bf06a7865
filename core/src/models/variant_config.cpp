#include "dstudio/models/variant_config.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "config_tables.h"
#include "dstudio/common/error.h"
#include "dstudio/models/config_fields.h"
#include "dstudio/models/variant_registry.h"

namespace dstudio::models {
namespace {

const EnumNames<Tokenizer>& tokenizer_table() {
  static const EnumNames<Tokenizer> names{{Tokenizer::Triplet, "triplet"},
                                          {Tokenizer::Unified, "unified"},
                                          {Tokenizer::Merged, "merged"},
                                          {Tokenizer::State, "state"}};
  return names;
}
const EnumNames<Merger>& merger_table() {
  static const EnumNames<Merger> names{{Merger::Concat, "concat"},
                                       {Merger::Attention, "attention"},
                                       {Merger::Convolution, "conv"},
                                       {Merger::Pooling, "pooling"}};
  return names;
}

// The registered mixer `text` names; throws UsageError listing the known names.
std::shared_ptr<const MixerDefinition> parse_mixer(const std::string& text) {
  if (auto d = mixer_registry().find(text)) return d;
  throw UsageError("unknown mixer '" + text + "'; known: " + mixer_registry().joined_names());
}

Merger parse_merger(const std::string& text) {
  if (const auto m = merger_table().parse(text)) return *m;
  throw UsageError("unknown merger '" + text + "'; known: " + merger_table().joined());
}

}  // namespace

const char* to_string(Tokenizer t) {
  return tokenizer_table().name(t);
}
const char* to_string(Merger m) {
  return merger_table().name(m);
}
std::vector<std::string> tokenizer_names() {
  return tokenizer_table().names();
}
std::vector<std::string> merger_names() {
  return merger_table().names();
}
std::vector<std::string> mixer_names() {
  return mixer_registry().names();
}

const JsonFields<VariantConfig>& variant_table() {
  using C = VariantConfig;
  using Json = nlohmann::json;
  static const auto table = [] {
    JsonFields<C> t;
    t.field("variant", &C::variant)
        .field("state_dim", &C::state_dim, {0, 100000})
        .field("act_dim", &C::act_dim, {0, 100000})
        .field("context_length", &C::context_length, {1, 1000})
        .says("K: steps in a window")
        .field("max_ep_len", &C::max_ep_len, {1, 1000000})
        .says("size of the timestep embedding")
        .field("hidden", &C::hidden, {1, 8192})
        .says("H: width of every token")
        .field("layers", &C::layers, {1, 128})
        .says("N: MetaFormer blocks")
        .field("heads", &C::heads, {1, 256})
        .says("attention heads (hidden must be a multiple)")
        .field("mlp_ratio", &C::mlp_ratio, {1, 64})
        .says("MLP inner width = mlp_ratio x H")
        .field("activation", &C::activation)
        .says("the MLP's nonlinearity: relu (DT) or gelu (DC, DHi, UDC)")
        .choices([] {
          return std::vector<std::string>{"relu", "gelu"};
        })
        .field("dropout", &C::dropout, {0, 1, false, /*below=*/true})
        .says("embedding, residual and MLP dropout, in [0, 1)")
        .field("attention_dropout", &C::attention_dropout, {0, 1, false, /*below=*/true})
        .says("dropout of the attention weights, in [0, 1)")
        .field("action_tanh", &C::action_tanh)
        .says("squash predicted actions with tanh")
        .named("tokenizer", &C::tokenizer, tokenizer_table())
        .says("how (R, s, a) become tokens")
        .named("merger", &C::merger, merger_table())
        .says("DHi's token merger (merged tokenizer only)")
        .field("return_embedding", &C::return_embedding, {1, 8192})
        .says("UDT: width of sigmoid(Linear(1, w)(R))")
        .computed(
            "mixer", [](const C& c) { return nlohmann::ordered_json(c.mixer); },
            [](C& c, const Json& value, const std::string& where) {
              if (!value.is_string()) JsonFields<C>::refuse(where + " is not a text");
              const auto d = mixer_registry().find(value.get<std::string>());
              if (!d)
                JsonFields<C>::refuse(where + " is '" + value.get<std::string>() +
                                      "', not one of " + mixer_registry().joined_names());
              c.mixer = d->name;
              // Options belong to the mixer they were given for.
              if (d->options.empty()) c.mixer_options.clear();
            })
        .says("how tokens exchange information")
        .choices(mixer_names)
        .field("hybrid", &C::hybrid)
        .says("DC hybrid: the last block uses causal attention")
        .field("conv_window", &C::conv_window, {1, 3000})
        .says("DC: filter length L in tokens")
        .field("single_filter", &C::single_filter)
        .says("DC 1-filter: one filter for every token type")
        .field("mixer_projection", &C::mixer_projection)
        .says("DC's optional Linear(H, H) after the mixer")
        .field("gaussian_w", &C::gaussian_w, {0, 1e6})
        .says("GDT: w >= 0")
        .field("gaussian_b", &C::gaussian_b, {-1e6, 1e6})
        .says("GDT: b <= 0 penalises the token itself")
        .field("pool_size", &C::pool_size, {1, 3000})
        .says("DHi: P, tokens pooled")
        .field("gated_kernel", &C::gated_kernel, {1, 3000})
        .says("UDC: depthwise kernel size")
        // What plugins add, written only when set: the studio's own variants write as before.
        .field("mixer_options", &C::mixer_options)
        .written_if([](const C& c) { return !c.mixer_options.empty(); })
        .field("plugin", &C::plugin)
        .written_if([](const C& c) { return !c.plugin.empty(); })
        .field("plugin_version", &C::plugin_version)
        .written_if([](const C& c) { return !c.plugin.empty(); })
        .refuse_unknown_keys()
        .errors_as<UsageError>();
    return t;
  }();
  return table;
}

void VariantConfig::validate() const {
  auto require = [](bool ok, const std::string& what) {
    if (!ok) throw UsageError("variant configuration: " + what);
  };
  const auto definition = mixer_registry().find(mixer);
  if (!definition) {
    if (!plugin.empty())
      throw MissingPluginError(plugin, plugin_version, "the mixer '" + mixer + "'");
    throw UsageError("variant configuration: unknown mixer '" + mixer +
                     "'; known: " + mixer_registry().joined_names());
  }
  // Every field in its range (config_fields.h lists them), a text among its names.
  variant_table().check(*this, "variant configuration");
  require(hidden % heads == 0, "hidden (" + std::to_string(hidden) +
                                   ") must be a multiple of heads (" + std::to_string(heads) + ")");
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
    c.merger = parse_merger(merger);
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
  return variant_table().write(config).dump(2);
}

VariantConfig variant_from_json(const std::string& text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) throw UsageError("the variant configuration is not valid JSON");
  if (!j.is_object()) throw UsageError("variant configuration: not a JSON object");
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
  auto c = variant_table().read(j, "variant configuration",
                                make_variant(j.value("variant", "dt"), "conv", "pooling"));
  c.validate();
  return c;
}

VariantConfig with_overrides(const VariantConfig& config, const std::string& json_object) {
  const auto j = nlohmann::json::parse(json_object, nullptr, false);
  if (j.is_discarded()) throw UsageError("--config is not valid JSON: " + json_object);
  auto c = variant_table().read(j, "variant configuration", config);
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
