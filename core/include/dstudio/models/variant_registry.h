#pragma once
/// \file
/// The model variants and token mixers the studio knows, built in or added by plugins, through one
/// path: the studio's own are entries of these registries written as a plugin writes its own
/// (core/src/models/builtin_mixers.cpp, and the modules in core/libtorch/src/models/mixers/). A
/// variant is a name with its defaults (a VariantConfig: tokenizer, mixer, sizes); a token mixer
/// is a name, the configuration fields or options it reads, its cost, and (in the models library,
/// models/token_mixer.h) the module that computes it and its equivalent mixing matrix.
/// `dstudio variants`, the training form and checkpoints read these. No LibTorch.

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "dstudio/common/registry.h"
#include "dstudio/models/config_fields.h"
#include "dstudio/models/variant_config.h"

namespace dstudio::models {

/// A model variant: what `make_variant(name)` returns.
struct VariantDefinition {
  std::string name;         ///< "dt", "dc", ...; what --variant takes
  std::string description;  ///< one line: the model and where it is from
  /// The variant's defaults (its `variant` field set to `name`).
  std::function<VariantConfig()> defaults;
  /// For a grid of variants (hier: any token merger with any token mixer): sets the merger and
  /// the mixer named on its defaults; throws UsageError for unknown names. Unset for the others.
  std::function<void(VariantConfig& config, const std::string& merger, const std::string& mixer)>
      grid;
  Origin origin;
};

/// A number a plugin's token mixer takes (VariantConfig::mixer_options), with its default.
struct MixerOption {
  ConfigField field;     ///< key, meaning, smallest value
  double value = 0.0;    ///< the default
  bool integer = false;  ///< a count (the form shows a spin box; JSON keeps it whole)
};

/// A token mixer, built in or added by a plugin.
struct MixerDefinition {
  std::string name;         ///< what a configuration's "mixer" says
  std::string description;  ///< one line
  /// Its own options, kept in VariantConfig::mixer_options (the studio's own read VariantConfig's
  /// fields instead and have none).
  std::vector<MixerOption> options;
  /// Whether it reads the configuration field `key` (heads, attention_dropout, conv_window,
  /// single_filter, gaussian_w, gaussian_b, pool_size, gated_kernel): the training form shows only
  /// those. Unset: heads and attention_dropout, which a plugin's mixer may read.
  std::function<bool(const VariantConfig& config, const std::string& key)> uses_field;
  /// Floating-point operations of one layer's mixer over `tokens` tokens (all windows of a batch);
  /// optional: without it the mixer counts as free in forward_flops.
  std::function<double(const VariantConfig& config, double tokens)> flops;
  /// Heads that head:L.H interventions address (interventions.h): the module concatenates their
  /// outputs before an output projection and hands them to MixerMasks::edit_heads. Unset: none;
  /// the mixer is addressed whole (mixer:L).
  std::function<int(const VariantConfig& config)> heads;
  /// How its mixing matrix (token_mixer.h) comes from the module, in one line: what the Attention
  /// tab and `analyze attention` print under the matrix. Empty: they say the definition gives none.
  std::string derivation;
  /// Whether `hier` takes it as the mixer of its grid (any token merger with any mixer, Decision
  /// HiFormer's Table 1).
  bool in_hier_grid = true;
  Origin origin;
};

/// Every variant, the studio's own first (dt, dc, dc-1filter, dc-hybrid, direct-attention, gdt,
/// udt, udc, dhi, mlp-bc, hier), then those of plugins.
Registry<VariantDefinition>& variant_registry();
/// Every token mixer, the studio's own first (attention, gaussian-attention, direct-attention,
/// conv, linear-attention, pooling, gated-conv, none), then those of plugins.
Registry<MixerDefinition>& mixer_registry();
/// The studio's own token mixers, as mixer_registry() starts with them (builtin_mixers.cpp).
std::vector<MixerDefinition> builtin_mixers();

/// The value of a plugin mixer's option: the configuration's, else the mixer's default. Throws
/// UsageError for an option the mixer does not have.
double mixer_option(const VariantConfig& config, const std::string& key);

/// A checkpoint or configuration names a plugin that is not loaded.
class MissingPluginError : public Error {
 public:
  MissingPluginError(const std::string& plugin, const std::string& version,
                     const std::string& what);
  [[nodiscard]] const std::string& plugin() const { return plugin_; }

 private:
  std::string plugin_;
};

}  // namespace dstudio::models
