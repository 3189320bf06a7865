#pragma once
/// \file
/// The model variants and token mixers the studio knows, built in or added by plugins. A variant
/// is a name with its defaults (a VariantConfig: tokenizer, mixer, sizes); a token mixer from a
/// plugin is a name, its own options with their defaults and ranges, and (in the models library,
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
  Origin origin;
};

/// A number a plugin's token mixer takes (VariantConfig::mixer_options), with its default.
struct MixerOption {
  ConfigField field;     ///< key, meaning, smallest value
  double value = 0.0;    ///< the default
  bool integer = false;  ///< a count (the form shows a spin box; JSON keeps it whole)
};

/// A token mixer added by a plugin (the studio's own are the Mixer enumeration).
struct MixerDefinition {
  std::string name;         ///< what a configuration's "mixer" says
  std::string description;  ///< one line
  std::vector<MixerOption> options;
  /// Floating-point operations of one layer's mixer over `tokens` tokens (all windows of a batch);
  /// optional: without it the mixer counts as free in forward_flops.
  std::function<double(const VariantConfig& config, double tokens)> flops;
  Origin origin;
};

/// Every variant, the studio's own first (dt, dc, dc-1filter, dc-hybrid, direct-attention, gdt,
/// udt, udc, dhi, mlp-bc, hier), then those of plugins.
Registry<VariantDefinition>& variant_registry();
/// The token mixers plugins added.
Registry<MixerDefinition>& mixer_registry();

/// The value of a plugin mixer's option: the configuration's, else the mixer's default. Throws
/// UsageError for an option the mixer does not have.
double mixer_option(const VariantConfig& config, const std::string& key);

/// A checkpoint or configuration names a plugin that is not loaded.
class MissingPluginError : public Error {
 public:
  MissingPluginError(const std::string& plugin, const std::string& version, const std::string& what);
  [[nodiscard]] const std::string& plugin() const { return plugin_; }

 private:
  std::string plugin_;
};

}  // namespace dstudio::models
