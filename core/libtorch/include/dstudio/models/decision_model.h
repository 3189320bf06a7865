#pragma once
/// \file
/// Every sequence-model variant behind one LibTorch module. Include this only where tensors are
/// needed: the configuration lives in variant_config.h, which does not pull in LibTorch.
///
/// Inputs for a window of K steps: states (B, K, S), actions (B, K, A), returns_to_go (B, K, 1)
/// already divided by the scale, timesteps (B, K) int64, mask (B, K) with 1 for real steps.
/// The output is the predicted action at every position, (B, K, A).
///
/// Inspection returns, per layer, the token-mixing matrix (B, heads, T, T) and the tokens before
/// and after merging; it never changes the prediction. The mixing matrix is the attention weights
/// for attention mixers, and for the others the equivalent matrix derived in docs/models.md
/// (mean over channels of the convolution taps' magnitudes, the pooling weights, the identity for
/// none).

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dstudio/models/variant_config.h"

namespace dstudio::models {

/// A batch of windows.
struct ModelInputs {
  torch::Tensor states;         ///< (B, K, S) float
  torch::Tensor actions;        ///< (B, K, A) float
  torch::Tensor returns_to_go;  ///< (B, K, 1) float
  torch::Tensor timesteps;      ///< (B, K) int64
  torch::Tensor mask;           ///< (B, K) float, 1 for real steps; undefined means all real
};

/// What inspection returns.
struct Inspection {
  std::vector<torch::Tensor> mixing;  ///< per layer, (B, heads, T, T); rows: queries
  std::vector<std::string> mixers;    ///< per layer, the mixer's name
  torch::Tensor tokens_before_merge;  ///< (B, 3K, H): the R, s, a embeddings (not for mlp-bc/udt)
  torch::Tensor tokens;               ///< (B, T, H): what enters the first block
  std::vector<char> token_types;      ///< per token: 'R', 's', 'a', or 't' for a merged step
};

/// A counter-based stream of random numbers for dropout masks: its whole state is two integers,
/// so it is saved in checkpoints, and each training worker owns one (no shared generator, no
/// dependence on thread scheduling).
struct RandomStream {
  std::uint64_t key = 0;
  std::uint64_t counter = 0;
};

/// While alive, dropout in the calling thread draws its masks from `stream`. Without one,
/// dropout uses LibTorch's default generator.
class DropoutStreamScope {
 public:
  explicit DropoutStreamScope(RandomStream& stream);
  ~DropoutStreamScope();
  DropoutStreamScope(const DropoutStreamScope&) = delete;
  DropoutStreamScope& operator=(const DropoutStreamScope&) = delete;

 private:
  RandomStream* previous_;
};

/// Inverted dropout: x * mask / (1 - p) in training, x otherwise; masks from the thread's stream.
class DropoutImpl : public torch::nn::Module {
 public:
  explicit DropoutImpl(double p) : p_(p) {}
  torch::Tensor forward(const torch::Tensor& x);

 private:
  double p_;
};
TORCH_MODULE(Dropout);

struct Masks;

/// The places of a block where a forward pass can be read or changed (intervene.h).
enum class HookSite {
  Heads,  ///< a mixer's heads, before its output projection: (B, heads, T, hd)
  Mixer,  ///< what the mixer adds to the stream: (B, T, H)
  Mlp,    ///< what the MLP adds to the stream: (B, T, H)
  Resid,  ///< the stream after the block: (B, T, H)
};

/// Reads or changes a forward pass. `at` is called at every site of every block (layers from 1)
/// with the value there for token positions first..; a defined tensor it returns replaces the
/// value. act() computes its last block at one position, so `first` is that position there.
struct ForwardHooks {
  std::function<torch::Tensor(int layer, HookSite site, const torch::Tensor& value, int64_t first)>
      at;
  /// Every token mixer sees only the query's own step and the context - 1 steps before it; 0 (or
  /// the whole window) for no limit.
  int context = 0;
};

/// Rows [first, first + rows) of every input (the mask too, when defined).
ModelInputs rows_of(const ModelInputs& inputs, int64_t first, int64_t rows);

/// The model. Construct with a validated configuration whose state_dim and act_dim are set.
class DecisionModelImpl : public torch::nn::Module {
 public:
  explicit DecisionModelImpl(const VariantConfig& config);

  /// Predicted actions (B, K, A). With `inspection`, also fills it; with `hooks`, they read or
  /// change the pass (intervene.h).
  torch::Tensor forward(const ModelInputs& inputs, Inspection* inspection = nullptr,
                        ModalityZeroing zeroing = ModalityZeroing::None,
                        const ForwardHooks* hooks = nullptr);

  /// The action at the last position only (B, A), as a policy acting in an environment needs:
  /// equal to forward(...)[:, -1] (to float rounding) at about two thirds of the last block's cost.
  torch::Tensor act(const ModelInputs& inputs, ModalityZeroing zeroing = ModalityZeroing::None,
                    const ForwardHooks* hooks = nullptr);

  /// The actions a stream (B, T, H) reads as: the final norm and the action head (tanh included)
  /// at the tokens actions are read from, (B, K, A). What forward() ends with.
  torch::Tensor read_out(const torch::Tensor& stream);

  /// The tokens entering the first block (B, T, H); none for mlp-bc.
  torch::Tensor embed_tokens(const ModelInputs& inputs);
  /// The action at the last position (B, A) when `stream` (B, T, H) enters block `layer` (from 1;
  /// layers + 1 reads `stream` out as it is): what act() computes from there on. Patching reuses
  /// the blocks before a patch this way instead of running them again.
  torch::Tensor act_from(const ModelInputs& inputs, const torch::Tensor& stream, int layer,
                         const ForwardHooks* hooks = nullptr);
  /// The final norm's pieces at a stream (B, T, H): its scale 1 / sqrt(var + eps) per token
  /// (B, T, 1), its gain and bias (H), the action head's weight (A, H) and bias (A), and the
  /// pre-tanh action at every token (B, T, A) as the modules compute it. With the scale frozen,
  /// the pre-tanh action is linear in the stream (attribution).
  struct ReadOutParts {
    torch::Tensor scale, gain, shift, weight, bias, pre_tanh;
  };
  ReadOutParts read_out_parts(const torch::Tensor& stream);
  /// The index of the token each step's action is read from (s_t, or the merged step), 0-based.
  [[nodiscard]] int64_t action_token(int64_t step) const;

  [[nodiscard]] const VariantConfig& config() const { return config_; }

 private:
  torch::Tensor embed(const ModelInputs& inputs, Inspection* inspection);
  /// Zeroing applied, the window size checked, a full mask when none is given.
  ModelInputs prepare(const ModelInputs& raw, ModalityZeroing zeroing) const;
  /// The attention masks of a pass over `tokens` tokens, each query seeing `context` steps (0:
  /// all).
  Masks masks_for(const ModelInputs& inputs, int64_t tokens, int context = 0) const;
  /// The blocks from `layer` (from 1) on `x`, the last at the action's row only, and the action
  /// head: the end of act() and act_from().
  torch::Tensor blocks_to_action(const ModelInputs& in, torch::Tensor x, int layer,
                                 const ForwardHooks* hooks);

  VariantConfig config_;
  torch::nn::Embedding timestep_{nullptr};
  torch::nn::Linear embed_return_{nullptr}, embed_state_{nullptr}, embed_action_{nullptr};
  torch::nn::Linear unified_return_{nullptr}, unified_{nullptr};  // UDT/UDC
  torch::nn::Linear concat_{nullptr};                             // DHi concatenation merger
  std::shared_ptr<torch::nn::Module> merger_;  // DHi attention/convolution merger
  torch::nn::LayerNorm embed_ln_{nullptr}, final_ln_{nullptr};
  Dropout embed_dropout_{nullptr};
  torch::nn::ModuleList blocks_;
  torch::nn::Linear head_{nullptr};
  torch::nn::Sequential state_mlp_{nullptr};  // mlp-bc
};
TORCH_MODULE(DecisionModel);

/// DC eq. 4 on x (B, T, H): C[p, q] = sum_{l < L} w_{type(p)}[q, l] X[p - l, q] +
/// bias_{type(p)}[q], with X zero-padded on the left. `weight` is (types, H, L) and `bias` (types,
/// H); with 3 types the type of position p is p mod 3 (R, s, a), with 1 type every position shares
/// the filter.
torch::Tensor type_convolution(const torch::Tensor& x, const torch::Tensor& weight,
                               const torch::Tensor& bias);
/// GDT eq. 6's bias: -|w d_ij^2 + b| with d_ij = |i - j|, as a (T, T) matrix.
torch::Tensor gaussian_bias(int64_t T, double w, double b);
/// DHi's pooling as a matrix: row i averages tokens max(0, i-P+1)..i.
torch::Tensor pooling_matrix(int64_t T, int64_t P);

/// Applies `zeroing` to a copy of the inputs.
ModelInputs apply_zeroing(const ModelInputs& inputs, ModalityZeroing zeroing);

}  // namespace dstudio::models
