#pragma once
/// \file
/// The configuration of every model variant, with the papers' defaults. Free of LibTorch, so the
/// command line and the GUI can list, edit and validate variants without it.
///
/// Every variant is a MetaFormer: tokens -> N x [x += Mixer(LN(x)); x += MLP(LN(x))] -> LN ->
/// action head. Variants differ in how (return-to-go R, state s, action a) become tokens and in
/// the token mixer. docs/models.md states each one precisely.

#include <array>
#include <map>
#include <string>
#include <vector>

#include "dstudio/common/enum_names.h"

namespace dstudio::models {

/// How (R, s, a) become tokens.
enum class Tokenizer {
  Triplet,  ///< DT/DC/GDT: (R_1, s_1, a_1, ..., R_K, s_K, a_K), 3K tokens; a_t read at s_t
  Unified,  ///< UDT/UDC: one token per step from concat(sigmoid(Linear(R)), s_t, a_{t-1})
  Merged,   ///< Decision HiFormer: (a_{t-1}, R_t, s_t) embedded, then merged into one token
  State,    ///< MLP behaviour cloning: a_t from s_t alone
};

/// How DHi's Token Merger fuses a step's three embeddings (Merged tokenizer only).
enum class Merger { Concat, Attention, Convolution, Pooling };

/// Which modality to remove at inference (the ablations of the papers).
enum class ModalityZeroing {
  None,
  ReturnsToGo,  ///< every return-to-go
  PastStates,   ///< every state but the current (last) one
  Actions,      ///< every action
};

/// A variant's full configuration. Field names follow the papers.
struct VariantConfig {
  std::string variant =
      "dt";  ///< dt, dc, dc-1filter, dc-hybrid, direct-attention, gdt, udt, udc, dhi, mlp-bc, hier

  // Shapes (filled from the dataset when training starts).
  int state_dim = 0;
  int act_dim = 0;
  int context_length = 20;  ///< K: steps in a window
  int max_ep_len = 1000;    ///< size of the timestep embedding

  // MetaFormer.
  int hidden = 128;  ///< H (d)
  int layers = 3;    ///< N
  int heads = 1;
  int mlp_ratio = 4;                ///< MLP inner width = mlp_ratio * H
  std::string activation = "relu";  ///< relu or gelu
  double dropout = 0.1;             ///< embedding, residual and MLP dropout
  double attention_dropout = 0.1;
  bool action_tanh = true;

  // Tokens.
  Tokenizer tokenizer = Tokenizer::Triplet;
  Merger merger = Merger::Convolution;
  int return_embedding = 32;  ///< UDT: width of sigmoid(Linear(1, 32)(R))

  // Mixers.
  /// How tokens exchange information: the name of a token mixer of mixer_registry()
  /// (variant_registry.h). The studio's own: attention (GPT-2 style causal self-attention),
  /// gaussian-attention (GDT: logits - |w d^2 + b|), direct-attention (DC fig. 3b: a learned
  /// matrix, row-softmaxed), conv (DC: causal depthwise convolution), linear-attention (feature
  /// map elu + 1), pooling (DHi: mean of the last P tokens), gated-conv (UDC:
  /// W_o(DWConv(P1 x) * SiLU(P2 x))) and none (MLP only); then those of plugins.
  std::string mixer = "attention";
  bool hybrid = false;            ///< DC hybrid: the last block uses causal attention
  int conv_window = 6;            ///< DC: filter length L in tokens (6 = current and previous step)
  bool single_filter = false;     ///< DC 1-filter: one filter for every token type
  bool mixer_projection = false;  ///< DC's optional Linear(H, H) after the mixer
  double gaussian_w = 0.1;        ///< GDT: w >= 0
  double gaussian_b = -0.05;      ///< GDT: b <= 0 penalises the token itself
  int pool_size = 2;              ///< DHi: P
  int gated_kernel = 4;           ///< UDC: depthwise kernel size (the paper leaves it open)

  // What plugins add. Written to JSON only when set, so the studio's own variants read and write
  // exactly as before.
  std::map<std::string, double>
      mixer_options;   ///< the mixer's own options (variant_registry.h's MixerOption)
  std::string plugin;  ///< the plugin that defines this variant or its mixer
  std::string plugin_version;

  /// Tokens per window (3K for triplets, K otherwise).
  [[nodiscard]] int tokens() const {
    return tokenizer == Tokenizer::Triplet ? 3 * context_length : context_length;
  }
  /// Throws UsageError naming the first field that is out of range, MissingPluginError
  /// (variant_registry.h) when its mixer comes from a plugin that is not loaded.
  void validate() const;
  bool operator==(const VariantConfig&) const = default;
};

/// Floating-point operations of one forward pass over `batch` windows (multiply-adds count 2),
/// counted from the configuration: every Linear, the attention products, convolutions and
/// pooling. A training step costs about three forward passes.
double forward_flops(const VariantConfig& config, int batch);

/// Names of the variants `make_variant` knows: the studio's own in a fixed order, then those of
/// plugins (variant_registry.h).
std::vector<std::string> variant_names();
/// The defaults of a variant. `hier` takes its merger ("none" means DT's triplets) and mixer
/// ("none", "attention", "linear-attention", "conv", "pooling", or a plugin's mixer). Throws
/// UsageError listing the known names.
VariantConfig make_variant(const std::string& name, const std::string& merger = "conv",
                           const std::string& mixer = "pooling");

/// The papers' settings that depend on the dataset. Decision ConvFormer (Table 4): hidden 256 on
/// hopper-medium and hopper-medium-replay, else 128; learning rate 1e-4 on hopper-medium,
/// hopper-medium-replay, walker2d-medium and antmaze, else 1e-3. `dataset` is a D4RL-style name
/// ("hopper-medium-replay"); other variants and unknown names get nothing (0 = no change).
struct DatasetDefaults {
  int hidden = 0;
  double learning_rate = 0.0;
  std::string source;  ///< where the numbers come from, for messages
};
DatasetDefaults dataset_defaults(const std::string& variant, const std::string& dataset);

/// JSON text of a configuration (every field), and back. Unknown keys and bad values throw
/// UsageError naming them; missing keys keep the variant's defaults.
std::string to_json(const VariantConfig& config);
VariantConfig variant_from_json(const std::string& text);
/// Applies the keys of a JSON object (e.g. from --config) on top of `config`.
VariantConfig with_overrides(const VariantConfig& config, const std::string& json_object);

/// Whether `config` uses its field `key` (a key of to_json): the form shows only these. A field of
/// a mixer, tokenizer or merger the configuration does not have changes nothing it computes
/// (gaussian_w without Gaussian attention, heads with DirectAttention's single matrix). Keys it
/// does not know, and every field of a plugin's mixer, count as used.
bool uses_field(const VariantConfig& config, const std::string& key);

const char* to_string(Tokenizer t);
const char* to_string(Merger m);
/// Every name to_string gives, in the enumerations' order; mixer_names() the registry's, the
/// studio's own first.
std::vector<std::string> tokenizer_names();
std::vector<std::string> merger_names();
std::vector<std::string> mixer_names();
/// "none", "rtg", "states" or "actions", as the command line names them.
/// The names zeroings are written with: none, rtg, states, actions.
const EnumNames<ModalityZeroing>& modality_zeroing_names();
const char* to_string(ModalityZeroing z);
/// The inverse of to_string; throws UsageError listing the names.
ModalityZeroing zeroing_from_string(const std::string& name);
/// Every zeroing, in the order the DC paper's figure 5 and the studio's charts show them.
inline constexpr std::array<ModalityZeroing, 4> kModalityZeroings{
    ModalityZeroing::None, ModalityZeroing::ReturnsToGo, ModalityZeroing::PastStates,
    ModalityZeroing::Actions};
/// What charts, menus and tables call it, as the DC paper does: "nothing", "RTG", "past states",
/// "actions".
const char* zeroing_label(ModalityZeroing z);

}  // namespace dstudio::models
