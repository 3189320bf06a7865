// Decision HiFormer's token mixer: each token becomes the mean of itself and the P - 1 tokens
// before it (a causal average pool, parameter-free). Its MixerDefinition (fields, cost) is in
// core/src/models/builtin_mixers.cpp; this file is its module, registered by name as a plugin
// registers its own: a new built-in mixer is a file like this one and its test.

#include "dstudio/models/decision_model.h"
#include "dstudio/models/token_mixer.h"

namespace dstudio::models {
namespace {

struct PoolMixer : TokenMixer {
  explicit PoolMixer(const VariantConfig& c) : pool_(c.pool_size) {}
  [[nodiscard]] std::string name() const override { return "pooling"; }
  [[nodiscard]] bool honours_reach() const override { return true; }
  // The mixing matrix is the pooling itself: row p holds 1 / (number of tokens averaged) on p and
  // the P - 1 tokens before it.
  // Limited to a context, a row averages only the tokens within it.
  torch::Tensor forward(const torch::Tensor& x, const MixerMasks& masks,
                        torch::Tensor* matrix) override {
    const int64_t B = x.size(0), T = x.size(1);
    auto m = pooling_matrix(T, pool_).to(x.options());
    // A context that cuts no pooled token leaves the pooling as it is.
    if (masks.reach.defined() && ((m > 0) & masks.reach.logical_not()).any().item<bool>()) {
      const auto kept = (m > 0) & masks.reach;
      m = kept.to(x.scalar_type()) / kept.sum(-1, true).to(x.scalar_type());
    }
    if (matrix) *matrix = m.view({1, 1, T, T}).expand({B, 1, T, T});
    return torch::matmul(m, x);
  }
  int64_t pool_;
};

[[maybe_unused]] const bool kRegistered = [] {
  register_token_mixer("pooling",
                       [](const VariantConfig& c) { return std::make_shared<PoolMixer>(c); });
  return true;
}();

}  // namespace
}  // namespace dstudio::models
