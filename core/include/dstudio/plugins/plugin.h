#pragma once
/// \file
/// The interface of a Decision Studio plugin: a shared library that adds model variants, token
/// mixers, analyses, dataset formats and environments to the studio's registries. A plugin includes
/// this header, links `DecisionStudio::models` (find_package(DecisionStudio)), and defines its
/// registration:
///
///     #include <dstudio/plugins/plugin.h>
///     DSTUDIO_PLUGIN("token-distance", "1.0.0", "Attention distance to the nearest state token") {
///       registrar.add_analysis({...});
///     }
///
/// The studio loads every `*.so` in its plugin folders at start-up (plugins/loader.h). It refuses a
/// plugin built for another interface version (DSTUDIO_PLUGIN_ABI_VERSION) or another LibTorch,
/// and one whose registration throws; what such a plugin had added is taken out again.
///
/// The interface is the C++ types the registrar takes (the *Definition structures, VariantConfig,
/// TokenMixer) compiled with the same compiler family and LibTorch: DSTUDIO_PLUGIN_ABI_VERSION
/// changes whenever one of them changes layout.

#include <functional>
#include <memory>

#include "dstudio/analysis/analysis_registry.h"
#include "dstudio/data/format_registry.h"
#include "dstudio/env/environment.h"
#include "dstudio/models/variant_registry.h"
#include "dstudio/plugins/sdk_version.h"

namespace dstudio::models {
class TokenMixer;  // models/token_mixer.h, which a mixer's code includes (it needs LibTorch)
using TokenMixerFactory = std::function<std::shared_ptr<TokenMixer>(const VariantConfig& config)>;
}  // namespace dstudio::models

/// What a plugin says about itself, read before anything of it runs. Plain C, so that a plugin of
/// another interface version is still understood well enough to be refused.
extern "C" struct DStudioPluginInfo {
  int abi_version;            ///< DSTUDIO_PLUGIN_ABI_VERSION of the SDK it was built with
  const char* sdk_version;    ///< that SDK's studio version
  const char* torch_version;  ///< the LibTorch version that SDK was built with
  const char* name;           ///< unique among plugins; checkpoints name it
  const char* version;
  const char* description;  ///< one line
};

namespace dstudio::plugins {

/// What a plugin's registration adds things through. Each definition is stamped with the plugin's
/// name and version (its `origin`). Every call throws UsageError for a name already taken.
class Registrar {
 public:
  virtual ~Registrar() = default;
  /// A model variant: its defaults (a VariantConfig whose mixer may be one of this plugin's).
  virtual void add_variant(models::VariantDefinition definition) = 0;
  /// A token mixer: its name and options, and the factory of its module (models/token_mixer.h).
  virtual void add_token_mixer(models::MixerDefinition definition,
                               models::TokenMixerFactory factory) = 0;
  /// An analysis: `dstudio analyze <name>` and a panel in the window.
  virtual void add_analysis(analysis::AnalysisDefinition definition) = 0;
  /// A dataset format that `load_dataset` asks before the built-in ones.
  virtual void add_dataset_format(data::DatasetFormatDefinition definition) = 0;
  /// An environment: evaluation, both viewers and `dstudio env list` take it like the studio's
  /// own (env/environment.h says what a definition holds; env::validate checks it first).
  virtual void add_environment(env::EnvironmentDefinition definition) = 0;
};

}  // namespace dstudio::plugins

/// The symbols the studio looks up in a plugin.
#define DSTUDIO_PLUGIN_INFO_SYMBOL "dstudio_plugin_info"
#define DSTUDIO_PLUGIN_REGISTER_SYMBOL "dstudio_plugin_register"

/// Defines a plugin's description and opens its registration function, whose body receives
/// `registrar` (a dstudio::plugins::Registrar&).
#define DSTUDIO_PLUGIN(NAME, VERSION, DESCRIPTION)                                \
  extern "C" __attribute__((visibility("default"))) const DStudioPluginInfo*      \
  dstudio_plugin_info() {                                                         \
    static const DStudioPluginInfo info{DSTUDIO_PLUGIN_ABI_VERSION,               \
                                        DSTUDIO_SDK_VERSION,                      \
                                        DSTUDIO_SDK_TORCH_VERSION,                \
                                        NAME,                                     \
                                        VERSION,                                  \
                                        DESCRIPTION};                             \
    return &info;                                                                 \
  }                                                                               \
  extern "C" __attribute__((visibility("default"))) void dstudio_plugin_register( \
      ::dstudio::plugins::Registrar& registrar)
