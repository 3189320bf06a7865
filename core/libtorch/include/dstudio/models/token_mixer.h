#pragma once
/// \file
/// A token mixer as a module: the interface every mixer implements, the studio's own and those of
/// plugins, registered by name through the same register_token_mixer (the studio's pooling, in
/// core/libtorch/src/models/mixers/pooling.cpp, is a worked example). A mixer gets the tokens after
/// layer norm, (B, T, H), and returns what it mixes into them, (B, T, H). Asked for its mixing
/// matrix, it also returns the (B, heads, T, T) matrix M whose rows say how much each earlier token
/// contributes to each position: the attention weights for attention, and for other mixers an
/// equivalent matrix derived from their parameters (docs/models.md), which the attention views,
/// entropies and ablations read. Needs LibTorch.

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>

#include "dstudio/models/variant_config.h"

namespace dstudio::models {

/// What every mixer of a forward pass shares, computed once per pass.
struct MixerMasks {
  torch::Tensor allowed;   ///< (B or 1, 1, T, T) bool: causal, padded keys excluded
  torch::Tensor additive;  ///< the same as 0 / -1e9, to add to logits
  /// Set only while an intervention limits the context (context:C): (T, T) bool, true where key q
  /// lies within the context of query p. `allowed` and `additive` include it already; a mixer that
  /// does not read them (a convolution, pooling) must leave out what lies beyond it and say so
  /// with honours_reach().
  torch::Tensor reach;
  /// Set only while an intervention reads or changes heads (head:L.H): a mixer with heads calls it
  /// with their mixing outputs (B, heads, rows, hd), before its output projection, for the token
  /// positions first..first+rows-1, and goes on with what it returns.
  std::function<torch::Tensor(const torch::Tensor& heads, int64_t first)> edit_heads;
};

/// A token mixer. Causal: position p may use only positions <= p (where `allowed` says so).
class TokenMixer : public torch::nn::Module {
 public:
  /// The mixed tokens (B, T, H); with `matrix`, also its mixing matrix (B, heads, T, T).
  virtual torch::Tensor forward(const torch::Tensor& x, const MixerMasks& masks,
                                torch::Tensor* matrix) = 0;
  /// The output at position `row` only, (B, 1, H): what acting needs from the last block.
  /// Mixers whose rows cost little compute them all and keep the one.
  virtual torch::Tensor forward_row(const torch::Tensor& x, const MixerMasks& masks, int64_t row) {
    return forward(x, masks, nullptr).narrow(1, row, 1);
  }
  /// The name the inspection shows for this layer.
  [[nodiscard]] virtual std::string name() const = 0;
  /// Whether the mixer leaves out keys beyond MixerMasks::reach (reading `allowed` or `additive`
  /// does): a context:C intervention is refused on a model with a mixer that does not.
  [[nodiscard]] virtual bool honours_reach() const { return false; }
};

/// Makes the mixer of one block from a validated configuration (mixer_option() reads its options).
using TokenMixerFactory = std::function<std::shared_ptr<TokenMixer>(const VariantConfig& config)>;

/// Registers the module of a mixer, under the name its MixerDefinition has (variant_registry.h).
/// Throws UsageError when the name is taken.
void register_token_mixer(const std::string& name, TokenMixerFactory factory);
/// Forgets the module of `name` (a plugin whose registration failed).
void unregister_token_mixer(const std::string& name);
/// The mixer `name` for one block of `config` (its own mixer, or attention for a hybrid's last
/// block); throws UsageError (or MissingPluginError) when no module is registered under it.
std::shared_ptr<TokenMixer> make_token_mixer(const VariantConfig& config, const std::string& name);

}  // namespace dstudio::models
