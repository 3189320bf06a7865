// Every variant's tokenizer, token merger and token mixer. docs/models.md states the maths.

// Index of this file:
//   [SECTION] Dropout and the operators
//   [SECTION] Masks
//   [SECTION] The studio's token mixers
//   [SECTION] Blocks
//   [SECTION] Token mergers
//   [SECTION] The model
//   [SECTION] Acting from a point in the stream
//   [SECTION] Registered mixer modules

#include "dstudio/models/decision_model.h"

#include <cmath>
#include <map>
#include <mutex>
#include <stdexcept>

#include "dstudio/common/error.h"
#include "dstudio/models/token_mixer.h"
#include "dstudio/models/variant_registry.h"

namespace dstudio::models {
namespace F = torch::nn::functional;

namespace {
// ---------------------------------------------------------------------------------------------
// [SECTION] Dropout and the operators

// A depthwise 1-D convolution without padding (the caller pads on the left for causality).
torch::Tensor depthwise(const torch::Tensor& x, const torch::Tensor& kernel,
                        const torch::Tensor& bias, int64_t groups) {
  const std::vector<int64_t> one{1}, zero{0};
  return torch::conv1d(x, kernel, bias, one, zero, one, groups);
}

thread_local RandomStream* t_stream = nullptr;

// splitmix64's finaliser: a bijective mix, so distinct counters give independent-looking words.
inline std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// A mask of 0 and 1 / (1 - p), two 32-bit draws per 64-bit word.
torch::Tensor dropout_mask(const torch::Tensor& like, double p, RandomStream& stream) {
  auto mask = torch::empty(like.sizes(), like.options().dtype(torch::kFloat));
  float* m = mask.data_ptr<float>();
  const std::int64_t n = mask.numel();
  const auto threshold = static_cast<std::uint32_t>(std::min(p, 1.0) * 4294967295.0);
  const float keep = static_cast<float>(1.0 / (1.0 - p));
  const std::uint64_t base = stream.key + stream.counter * 0x9E3779B97F4A7C15ULL;
  for (std::int64_t i = 0; i < n; i += 2) {
    const std::uint64_t w = mix(base + static_cast<std::uint64_t>(i / 2) * 0x9E3779B97F4A7C15ULL);
    m[i] = static_cast<std::uint32_t>(w) >= threshold ? keep : 0.0f;
    if (i + 1 < n) m[i + 1] = static_cast<std::uint32_t>(w >> 32) >= threshold ? keep : 0.0f;
  }
  stream.counter += static_cast<std::uint64_t>((n + 1) / 2);
  return mask;
}

}  // namespace

DropoutStreamScope::DropoutStreamScope(RandomStream& stream) : previous_(t_stream) {
  t_stream = &stream;
}
DropoutStreamScope::~DropoutStreamScope() {
  t_stream = previous_;
}

torch::Tensor DropoutImpl::forward(const torch::Tensor& x) {
  if (!is_training() || p_ <= 0.0) return x;
  if (p_ >= 1.0) return torch::zeros_like(x);
  if (!t_stream) return F::dropout(x, F::DropoutFuncOptions().p(p_).training(true));
  return x * dropout_mask(x, p_, *t_stream);
}

torch::Tensor type_convolution(const torch::Tensor& x, const torch::Tensor& weight,
                               const torch::Tensor& bias) {
  const int64_t B = x.size(0), T = x.size(1), H = x.size(2), types = weight.size(0),
                L = weight.size(2);
  auto padded = F::pad(x.transpose(1, 2), F::PadFuncOptions({L - 1, 0}));  // (B, H, T + L - 1)
  torch::Tensor out = torch::zeros({B, H, T}, x.options());
  for (int64_t t = 0; t < types; ++t) {
    // conv1d correlates: kernel index k meets X[p - (L - 1) + k], i.e. tap l = L - 1 - k.
    auto y = depthwise(padded, weight[t].flip(-1).unsqueeze(1), bias[t], H);
    if (types == 1) return y.transpose(1, 2);
    out = out + y * (torch::arange(T) % types == t).to(x.options()).view({1, 1, T});
  }
  return out.transpose(1, 2);
}

torch::Tensor gaussian_bias(int64_t T, double w, double b) {
  auto pos = torch::arange(T, torch::kFloat);
  auto d = (pos.unsqueeze(1) - pos.unsqueeze(0)).abs();
  return -(w * d * d + b).abs();
}

torch::Tensor pooling_matrix(int64_t T, int64_t P) {
  // Row i averages what is available of the last P tokens.
  auto m = torch::zeros({T, T});
  for (int64_t i = 0; i < T; ++i) {
    const int64_t first = std::max<int64_t>(0, i - P + 1);
    for (int64_t j = first; j <= i; ++j) m[i][j] = 1.0 / static_cast<double>(i - first + 1);
  }
  return m;
}

ModelInputs rows_of(const ModelInputs& in, int64_t first, int64_t rows) {
  ModelInputs out;
  out.states = in.states.narrow(0, first, rows);
  out.actions = in.actions.narrow(0, first, rows);
  out.returns_to_go = in.returns_to_go.narrow(0, first, rows);
  out.timesteps = in.timesteps.narrow(0, first, rows);
  if (in.mask.defined()) out.mask = in.mask.narrow(0, first, rows);
  return out;
}

ModelInputs apply_zeroing(const ModelInputs& in, ModalityZeroing zeroing) {
  ModelInputs out = in;
  switch (zeroing) {
    case ModalityZeroing::None:
      break;
    case ModalityZeroing::ReturnsToGo:
      out.returns_to_go = torch::zeros_like(in.returns_to_go);
      break;
    case ModalityZeroing::Actions:
      out.actions = torch::zeros_like(in.actions);
      break;
    case ModalityZeroing::PastStates: {
      // The current state is the last position: windows are left-padded, so it is always real.
      out.states = in.states.clone();
      out.states.narrow(1, 0, in.states.size(1) - 1).zero_();
      break;
    }
  }
  return out;
}

namespace {

torch::Tensor activate(const torch::Tensor& x, const std::string& activation) {
  return activation == "gelu" ? F::gelu(x) : torch::relu(x);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] Masks

struct Masks : MixerMasks {};

// Whether `reach` leaves out any key within `taps` positions of its query (a causal filter of that
// length): when it does not, a convolution computes exactly what it computes unlimited.
static bool cuts_within(const torch::Tensor& reach, int64_t taps) {
  const int64_t T = reach.size(0);
  for (int64_t l = 0; l < taps && l < T; ++l)
    if (!torch::diagonal(reach, -l).all().item<bool>()) return true;
  return false;
}

// A large finite negative (not -inf) keeps rows whose keys are all padding finite; real queries
// always see themselves. Without padding the causal mask alone is used, broadcast over the batch.
// With `context` > 0 steps of `per_step` tokens, a query sees only keys of its own step and the
// context - 1 steps before it (MixerMasks::reach).
static Masks make_masks(const torch::Tensor& valid, int64_t T, int64_t context = 0,
                        int64_t per_step = 1) {
  Masks m;
  auto causal = torch::ones({T, T}, torch::kBool).tril();
  if (context > 0 && context * per_step < T) {
    const auto step = torch::arange(T, torch::kLong).div(per_step, "floor");
    m.reach = causal & (step.unsqueeze(0) > step.unsqueeze(1) - context);
    causal = m.reach;
  }
  m.allowed =
      (valid.all().item<bool>() ? causal.unsqueeze(0) : causal.unsqueeze(0) & valid.unsqueeze(1))
          .unsqueeze(1);
  m.additive =
      torch::zeros(m.allowed.sizes(), torch::kFloat).masked_fill(m.allowed.logical_not(), -1e9);
  return m;
}

namespace {

using MixerImpl = TokenMixer;

// Softmax attention (plain, Gaussian-biased, direct) and linear attention.
enum class AttentionKind { Plain, Gaussian, Direct, Linear };

// ---------------------------------------------------------------------------------------------
// [SECTION] The studio's token mixers

struct AttentionMixer : MixerImpl {
  AttentionMixer(const VariantConfig& c, AttentionKind kind)
      : kind_(kind),
        heads_(kind == AttentionKind::Direct ? 1 : c.heads),
        hidden_(c.hidden),
        w_(c.gaussian_w),
        b_(c.gaussian_b) {
    if (kind == AttentionKind::Direct) {
      value_ = register_module("value", torch::nn::Linear(c.hidden, c.hidden));
      logits_ = register_parameter("logits", torch::zeros({c.tokens(), c.tokens()}));
    } else {
      qkv_ = register_module("qkv", torch::nn::Linear(c.hidden, 3 * c.hidden));
    }
    proj_ = register_module("proj", torch::nn::Linear(c.hidden, c.hidden));
    attn_drop_ = register_module("attn_drop", Dropout(c.attention_dropout));
  }
  [[nodiscard]] std::string name() const override {
    switch (kind_) {
      case AttentionKind::Gaussian:
        return "gaussian-attention";
      case AttentionKind::Direct:
        return "direct-attention";
      case AttentionKind::Linear:
        return "linear-attention";
      case AttentionKind::Plain:
        break;
    }
    return "attention";
  }
  [[nodiscard]] bool honours_reach() const override { return true; }

  torch::Tensor forward(const torch::Tensor& x, const MixerMasks& masks,
                        torch::Tensor* matrix) override {
    const int64_t B = x.size(0), T = x.size(1), hd = hidden_ / heads_;
    torch::Tensor weights, v;
    if (kind_ == AttentionKind::Direct) {
      // The matrix itself is the parameter, shared by every input; V is learned as usual.
      weights = torch::softmax(logits_.narrow(0, 0, T).narrow(1, 0, T) + masks.additive, -1)
                    .expand({B, 1, T, T});
      v = value_->forward(x).view({B, T, 1, hidden_}).transpose(1, 2);
    } else {
      // Heads folded into the batch: 3-D bmm is many times faster than a 4-D matmul whose head
      // dimension broadcasts (measured on this stack).
      auto qkv = qkv_->forward(x)
                     .view({B, T, 3, heads_, hd})
                     .permute({2, 0, 3, 1, 4})
                     .reshape({3, B * heads_, T, hd});
      v = qkv[2].view({B, heads_, T, hd});
      weights = attend(qkv[0], qkv[1], masks, B, T, 0, T);
    }
    if (matrix) *matrix = weights.detach();
    const int64_t h = weights.size(1);
    auto out =
        torch::bmm(attn_drop_->forward(weights).reshape({B * h, T, T}), v.reshape({B * h, T, hd}))
            .view({B, h, T, hd});
    if (masks.edit_heads) out = masks.edit_heads(out, 0);
    return proj_->forward(out.transpose(1, 2).reshape({B, T, hidden_}));
  }

  // One query row: keys and values for every token, the query for `row` alone.
  torch::Tensor forward_row(const torch::Tensor& x, const MixerMasks& masks, int64_t row) override {
    const int64_t B = x.size(0), T = x.size(1), hd = hidden_ / heads_, H = hidden_;
    torch::Tensor weights, v;
    if (kind_ == AttentionKind::Direct) {
      auto logits = logits_.narrow(0, row, 1).narrow(1, 0, T) + masks.additive.narrow(2, row, 1);
      weights = torch::softmax(logits, -1).expand({B, 1, 1, T});
      v = value_->forward(x).view({B, 1, T, H});
    } else {
      const auto& W = qkv_->weight;
      const auto& bias = qkv_->bias;
      auto q = F::linear(x.narrow(1, row, 1), W.narrow(0, 0, H), bias.narrow(0, 0, H))
                   .view({B, 1, heads_, hd})
                   .transpose(1, 2);
      auto kv = F::linear(x, W.narrow(0, H, 2 * H), bias.narrow(0, H, 2 * H))
                    .view({B, T, 2, heads_, hd})
                    .permute({2, 0, 3, 1, 4});
      v = kv[1];
      weights = attend(q.reshape({B * heads_, 1, hd}), kv[0].reshape({B * heads_, T, hd}), masks, B,
                       T, row, 1);
    }
    const int64_t h = weights.size(1);
    auto out =
        torch::bmm(weights.reshape({B * h, 1, T}), v.reshape({B * h, T, hd})).view({B, h, 1, hd});
    if (masks.edit_heads) out = masks.edit_heads(out, row);
    return proj_->forward(out.transpose(1, 2).reshape({B, 1, H}));
  }

  // Attention weights (B, heads, rows, T) of queries q (B * heads, rows, hd) at positions
  // first..first+rows-1 over keys k (B * heads, T, hd).
  torch::Tensor attend(const torch::Tensor& q, const torch::Tensor& k, const MixerMasks& masks,
                       int64_t B, int64_t T, int64_t first, int64_t rows) const {
    const int64_t hd = hidden_ / heads_;
    if (kind_ == AttentionKind::Linear) {
      // phi(x) = elu(x) + 1; A[i, j] = phi(q_i).phi(k_j) / sum_{j' <= i} phi(q_i).phi(k_j').
      auto scores =
          torch::bmm(F::elu(q) + 1, (F::elu(k) + 1).transpose(1, 2)).view({B, heads_, rows, T});
      scores = scores.masked_fill(masks.allowed.narrow(2, first, rows).logical_not(), 0.0);
      return scores / scores.sum(-1, true).clamp_min(1e-6);
    }
    auto logits = torch::bmm(q, k.transpose(1, 2)).view({B, heads_, rows, T}) /
                  std::sqrt(static_cast<double>(hd));
    if (kind_ == AttentionKind::Gaussian) {
      // GDT eq. 6: subtract |w d_ij^2 + b|, d_ij = |i - j| in token positions.
      logits = logits + gaussian_bias(T, w_, b_).narrow(0, first, rows);
    }
    return torch::softmax(logits + masks.additive.narrow(2, first, rows), -1);
  }

  AttentionKind kind_;
  int64_t heads_, hidden_;
  double w_, b_;
  torch::nn::Linear qkv_{nullptr}, value_{nullptr}, proj_{nullptr};
  Dropout attn_drop_{nullptr};
  torch::Tensor logits_;
};

// DC eq. 4: C[p, q] = sum_l w_{type(p)}[q, l] X[p - l, q], zero-padded on the left, with one
// filter per token type (R, s, a) or a single filter. Computed as one depthwise convolution per
// filter over the whole sequence, keeping each output where its position has that type.
struct ConvMixer : MixerImpl {
  explicit ConvMixer(const VariantConfig& c)
      : types_(c.single_filter || c.tokenizer != Tokenizer::Triplet ? 1 : 3),
        window_(c.conv_window) {
    weight_ = register_parameter("weight", torch::randn({types_, c.hidden, window_}) * 0.02);
    bias_ = register_parameter("bias", torch::zeros({types_, c.hidden}));
  }
  [[nodiscard]] std::string name() const override {
    return types_ == 3 ? "conv (3 filters)" : "conv (1 filter)";
  }
  [[nodiscard]] bool honours_reach() const override { return true; }

  torch::Tensor forward(const torch::Tensor& x, const MixerMasks& masks,
                        torch::Tensor* matrix) override {
    const int64_t B = x.size(0), T = x.size(1), L = window_;
    const bool cut = masks.reach.defined() && cuts_within(masks.reach, L);
    auto out = cut ? within_reach(x, masks.reach) : type_convolution(x, weight_, bias_);
    if (matrix) {
      // Equivalent matrix: M[p, p - l] = mean over channels of |w_{type(p)}[q, l]|, the taps'
      // magnitudes (a signed mean would let channels cancel).
      auto taps = weight_.detach().abs().mean(1);  // (types, L)
      auto m = torch::zeros({T, T});
      for (int64_t p = 0; p < T; ++p)
        for (int64_t l = 0; l < L && p - l >= 0; ++l)
          m[p][p - l] = taps[types_ == 1 ? 0 : p % 3][l];
      if (masks.reach.defined()) m = m * masks.reach;
      *matrix = m.view({1, 1, T, T}).expand({B, 1, T, T});
    }
    return out;
  }

  // DC eq. 4 with the taps whose key lies beyond `reach` left out: tap l at position p adds
  // w_{type(p)}[l] X[p - l] only where reach[p][p - l].
  torch::Tensor within_reach(const torch::Tensor& x, const torch::Tensor& reach) const {
    const int64_t T = x.size(1);
    const auto type =
        types_ == 1 ? torch::zeros({T}, torch::kLong) : torch::arange(T, torch::kLong).remainder(3);
    auto out = bias_.index_select(0, type).unsqueeze(0).expand({x.size(0), T, x.size(2)});
    for (int64_t l = 0; l < window_ && l < T; ++l) {
      const auto shifted = F::pad(x, F::PadFuncOptions({0, 0, l, 0})).narrow(1, 0, T);
      const auto keep =
          F::pad(torch::diagonal(reach, -l).to(x.scalar_type()), F::PadFuncOptions({l, 0}));
      out = out + shifted * weight_.select(2, l).index_select(0, type).unsqueeze(0) *
                      keep.view({1, T, 1});
    }
    return out;
  }

  int64_t types_, window_;
  torch::Tensor weight_, bias_;
};

// UDC: W_o(DWConv(P1 x) * SiLU(P2 x)) with a causal depthwise convolution.
struct GatedConvMixer : MixerImpl {
  explicit GatedConvMixer(const VariantConfig& c) : kernel_(c.gated_kernel) {
    in_ = register_module("in_proj", torch::nn::Linear(c.hidden, 2 * c.hidden));
    weight_ =
        register_parameter("weight", torch::randn({c.hidden, kernel_}) * 0.02);  // taps l = 0..k-1
    bias_ = register_parameter("bias", torch::zeros({c.hidden}));
    out_ = register_module("out", torch::nn::Linear(c.hidden, c.hidden));
  }
  [[nodiscard]] std::string name() const override { return "gated-conv"; }
  [[nodiscard]] bool honours_reach() const override { return true; }
  torch::Tensor forward(const torch::Tensor& x, const MixerMasks& masks,
                        torch::Tensor* matrix) override {
    const int64_t B = x.size(0), T = x.size(1), H = x.size(2), k = kernel_;
    auto parts = in_->forward(x).chunk(2, -1);
    torch::Tensor h;
    if (masks.reach.defined() && cuts_within(masks.reach, k)) {
      // Tap l at position p (weight_[:, l] times u[p - l]) only where reach[p][p - l].
      h = bias_.view({1, 1, H}).expand({B, T, H});
      for (int64_t l = 0; l < k && l < T; ++l) {
        const auto shifted = F::pad(parts[0], F::PadFuncOptions({0, 0, l, 0})).narrow(1, 0, T);
        const auto keep =
            F::pad(torch::diagonal(masks.reach, -l).to(x.scalar_type()), F::PadFuncOptions({l, 0}));
        h = h + shifted * weight_.select(1, l).view({1, 1, H}) * keep.view({1, T, 1});
      }
    } else {
      auto padded = F::pad(parts[0].transpose(1, 2), F::PadFuncOptions({k - 1, 0}));
      h = depthwise(padded, weight_.flip(-1).unsqueeze(1), bias_, H).transpose(1, 2);
    }
    if (matrix) {
      // The convolution branch's matrix; the gate is an input-dependent elementwise factor.
      auto taps = weight_.detach().abs().mean(0);
      auto m = torch::zeros({T, T});
      for (int64_t p = 0; p < T; ++p)
        for (int64_t l = 0; l < k && p - l >= 0; ++l) m[p][p - l] = taps[l];
      if (masks.reach.defined()) m = m * masks.reach;
      *matrix = m.view({1, 1, T, T}).expand({B, 1, T, T});
    }
    return out_->forward(h * F::silu(parts[1]));
  }
  int64_t kernel_;
  torch::nn::Linear in_{nullptr}, out_{nullptr};
  torch::Tensor weight_, bias_;
};

// The studio's own mixers' modules, registered by name as a plugin registers its own (pooling's
// is in mixers/pooling.cpp, the way a new one is added).
[[maybe_unused]] const bool kBuiltinModules = [] {
  for (const auto& [name, kind] : {std::pair{"attention", AttentionKind::Plain},
                                   std::pair{"gaussian-attention", AttentionKind::Gaussian},
                                   std::pair{"direct-attention", AttentionKind::Direct},
                                   std::pair{"linear-attention", AttentionKind::Linear}})
    register_token_mixer(name, [kind = kind](const VariantConfig& c) {
      return std::make_shared<AttentionMixer>(c, kind);
    });
  register_token_mixer("conv",
                       [](const VariantConfig& c) { return std::make_shared<ConvMixer>(c); });
  register_token_mixer("gated-conv",
                       [](const VariantConfig& c) { return std::make_shared<GatedConvMixer>(c); });
  return true;
}();

// ---------------------------------------------------------------------------------------------
// [SECTION] Blocks

// One MetaFormer block: x += Mixer(LN(x)); x += MLP(LN(x)). The mixer "none" skips the first half.
struct BlockImpl : torch::nn::Module {
  BlockImpl(const VariantConfig& c, const std::string& mixer)
      : activation_(c.activation), none_(mixer == "none") {
    ln1_ = register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.hidden})));
    ln2_ = register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.hidden})));
    if (!none_) mixer_ = make_token_mixer(c, mixer);
    if (mixer_) register_module("mixer", mixer_);
    if (c.mixer_projection && mixer_)
      proj_ = register_module("proj", torch::nn::Linear(c.hidden, c.hidden));
    fc1_ = register_module("fc1", torch::nn::Linear(c.hidden, c.mlp_ratio * c.hidden));
    fc2_ = register_module("fc2", torch::nn::Linear(c.mlp_ratio * c.hidden, c.hidden));
    drop_ = register_module("drop", Dropout(c.dropout));
  }

  // Every position (B, T, H), with the mixing matrix when `matrix` is given.
  torch::Tensor forward(const torch::Tensor& x, const Masks& masks, torch::Tensor* matrix,
                        const ForwardHooks* hooks = nullptr, int layer = 0) {
    return run(x, masks, -1, matrix, hooks, layer);
  }
  // The output at one position (B, 1, H): what the last block computes when only the action at
  // the last step is wanted.
  torch::Tensor forward_row(const torch::Tensor& x, const Masks& masks, int64_t row,
                            const ForwardHooks* hooks = nullptr, int layer = 0) {
    return run(x, masks, row, nullptr, hooks, layer);
  }
  // The block at every position (row < 0) or at `row` only; with `hooks`, block `layer` (from 1)
  // hands them its sites (ForwardHooks), in the one order both forms share.
  torch::Tensor run(const torch::Tensor& x, const Masks& masks, int64_t row, torch::Tensor* matrix,
                    const ForwardHooks* hooks, int layer) {
    const bool one_row = row >= 0;
    const int64_t first = one_row ? row : 0;
    auto r = one_row ? x.narrow(1, row, 1) : x;
    if (mixer_) {
      const auto normed = ln1_->forward(x);
      const MixerMasks m = hooks ? hooked(masks, *hooks, layer) : MixerMasks(masks);
      auto y = one_row ? mixer_->forward_row(normed, m, row) : mixer_->forward(normed, m, matrix);
      if (proj_) y = proj_->forward(y);
      y = drop_->forward(y);
      if (hooks) y = at(*hooks, layer, HookSite::Mixer, y, first);
      r = r + y;
    } else if (matrix) {
      const int64_t B = x.size(0), T = x.size(1);
      *matrix = torch::eye(T).view({1, 1, T, T}).expand({B, 1, T, T});
    }
    auto h = drop_->forward(fc2_->forward(activate(fc1_->forward(ln2_->forward(r)), activation_)));
    if (hooks) h = at(*hooks, layer, HookSite::Mlp, h, first);
    r = r + h;
    return hooks ? at(*hooks, layer, HookSite::Resid, r, first) : r;
  }
  // The hook's value at a site, or the value itself when it leaves it.
  static torch::Tensor at(const ForwardHooks& hooks, int layer, HookSite site,
                          const torch::Tensor& value, int64_t first) {
    if (!hooks.at) return value;
    auto changed = hooks.at(layer, site, value, first);
    return changed.defined() ? changed : value;
  }
  // The masks with this layer's heads handed to the hooks; a context limit needs a mixer that
  // honours it.
  MixerMasks hooked(const Masks& masks, const ForwardHooks& hooks, int layer) const {
    if (masks.reach.defined() && !mixer_->honours_reach())
      throw UsageError("context:" + std::to_string(hooks.context) + ": layer " +
                       std::to_string(layer) + "'s mixer (" + mixer_->name() +
                       ") cannot be limited to a context");
    MixerMasks m = masks;
    if (hooks.at)
      m.edit_heads = [&hooks, layer](const torch::Tensor& heads, int64_t first) {
        return at(hooks, layer, HookSite::Heads, heads, first);
      };
    return m;
  }
  std::string mixer_name() const { return mixer_ ? mixer_->name() : "none"; }

  std::string activation_;
  bool none_;
  std::shared_ptr<MixerImpl> mixer_;
  torch::nn::LayerNorm ln1_{nullptr}, ln2_{nullptr};
  torch::nn::Linear proj_{nullptr}, fc1_{nullptr}, fc2_{nullptr};
  Dropout drop_{nullptr};
};

// ---------------------------------------------------------------------------------------------
// [SECTION] Token mergers

// DHi attention merger: self-attention within a step's three tokens, then their mean.
struct AttentionMerger : torch::nn::Module {
  explicit AttentionMerger(int64_t hidden) : hidden_(hidden) {
    qkv_ = register_module("qkv", torch::nn::Linear(hidden, 3 * hidden));
    proj_ = register_module("proj", torch::nn::Linear(hidden, hidden));
  }
  torch::Tensor forward(const torch::Tensor& triplets) {  // (B, K, 3, H)
    auto qkv = qkv_->forward(triplets).chunk(3, -1);
    auto w = torch::softmax(
        torch::matmul(qkv[0], qkv[1].transpose(-2, -1)) / std::sqrt(static_cast<double>(hidden_)),
        -1);
    return proj_->forward(torch::matmul(w, qkv[2]).mean(2));
  }
  int64_t hidden_;
  torch::nn::Linear qkv_{nullptr}, proj_{nullptr};
};

// DHi convolution merger: a kernel of width 3 across the step's tokens, per channel
// (merged[q] = sum_k w[k, q] e_k[q] + b[q]); initialised to the mean of the three.
struct ConvolutionMerger : torch::nn::Module {
  explicit ConvolutionMerger(int64_t hidden) {
    weight_ = register_parameter("weight", torch::full({3, hidden}, 1.0 / 3.0));
    bias_ = register_parameter("bias", torch::zeros({hidden}));
  }
  torch::Tensor forward(const torch::Tensor& triplets) {
    return (triplets * weight_).sum(2) + bias_;
  }
  torch::Tensor weight_, bias_;
};

void init_gpt2(torch::nn::Module& module) {
  // GPT-2's initialisation, as the reference implementations use: N(0, 0.02), zero biases.
  torch::NoGradGuard no_grad;
  for (auto& m : module.modules(/*include_self=*/false)) {
    if (auto* linear = m->as<torch::nn::Linear>()) {
      linear->weight.normal_(0.0, 0.02);
      if (linear->bias.defined()) linear->bias.zero_();
    } else if (auto* embedding = m->as<torch::nn::Embedding>()) {
      embedding->weight.normal_(0.0, 0.02);
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] The model

DecisionModelImpl::DecisionModelImpl(const VariantConfig& config) : config_(config) {
  config_.validate();
  const auto& c = config_;
  if (c.state_dim < 1 || c.act_dim < 1) throw Error("the model needs state_dim and act_dim");
  const int64_t H = c.hidden;
  if (c.tokenizer == Tokenizer::State) {
    // Behaviour cloning: a_t = MLP(s_t) at every position.
    state_mlp_ = torch::nn::Sequential();
    int64_t in = c.state_dim;
    for (int i = 0; i < c.layers; ++i) {
      state_mlp_->push_back(torch::nn::Linear(in, H));
      if (c.activation == "gelu")
        state_mlp_->push_back(torch::nn::GELU());
      else
        state_mlp_->push_back(torch::nn::ReLU());
      state_mlp_->push_back(Dropout(c.dropout));
      in = H;
    }
    state_mlp_->push_back(torch::nn::Linear(H, c.act_dim));
    register_module("state_mlp", state_mlp_);
    return;  // PyTorch's default initialisation, as the reference MLP baseline uses
  }
  timestep_ = register_module("timestep", torch::nn::Embedding(c.max_ep_len, H));
  if (c.tokenizer == Tokenizer::Unified) {
    unified_return_ = register_module("unified_return", torch::nn::Linear(1, c.return_embedding));
    unified_ = register_module("unified",
                               torch::nn::Linear(c.return_embedding + c.state_dim + c.act_dim, H));
  } else {
    embed_return_ = register_module("embed_return", torch::nn::Linear(1, H));
    embed_state_ = register_module("embed_state", torch::nn::Linear(c.state_dim, H));
    embed_action_ = register_module("embed_action", torch::nn::Linear(c.act_dim, H));
    if (c.tokenizer == Tokenizer::Merged) {
      switch (c.merger) {
        case Merger::Concat:
          concat_ = register_module("concat", torch::nn::Linear(c.act_dim + 1 + c.state_dim, H));
          break;
        case Merger::Attention:
          merger_ = register_module("merger", std::make_shared<AttentionMerger>(H));
          break;
        case Merger::Convolution:
          merger_ = register_module("merger", std::make_shared<ConvolutionMerger>(H));
          break;
        case Merger::Pooling:
          break;
      }
    }
  }
  embed_ln_ = register_module("embed_ln", torch::nn::LayerNorm(torch::nn::LayerNormOptions({H})));
  embed_dropout_ = register_module("embed_dropout", Dropout(c.dropout));
  blocks_ = register_module("blocks", torch::nn::ModuleList());
  for (int i = 0; i < c.layers; ++i) {
    // DC hybrid: the last block attends.
    blocks_->push_back(std::make_shared<BlockImpl>(
        c, c.hybrid && i == c.layers - 1 ? std::string("attention") : c.mixer));
  }
  final_ln_ = register_module("final_ln", torch::nn::LayerNorm(torch::nn::LayerNormOptions({H})));
  head_ = register_module("head", torch::nn::Linear(H, c.act_dim));
  init_gpt2(*this);
}

torch::Tensor DecisionModelImpl::embed(const ModelInputs& in, Inspection* inspection) {
  const auto& c = config_;
  const int64_t B = in.states.size(0), K = in.states.size(1), H = c.hidden;
  auto time = timestep_->forward(in.timesteps);  // (B, K, H)
  auto rtg = in.returns_to_go.dim() == 2 ? in.returns_to_go.unsqueeze(-1) : in.returns_to_go;
  // The previous action (0 at a window's first real step) for the shifted layouts.
  auto previous = [&]() {
    auto prev = torch::cat(
        {torch::zeros_like(in.actions.narrow(1, 0, 1)), in.actions.narrow(1, 0, K - 1)}, 1);
    auto prev_real =
        torch::cat({torch::zeros({B, 1}, in.mask.options()), in.mask.narrow(1, 0, K - 1)}, 1);
    return prev * prev_real.unsqueeze(-1);
  };
  torch::Tensor tokens;
  if (c.tokenizer == Tokenizer::Unified) {
    auto e_r = torch::sigmoid(unified_return_->forward(rtg));
    tokens = unified_->forward(torch::cat({e_r, in.states, previous()}, -1)) + time;
  } else {
    const bool merged = c.tokenizer == Tokenizer::Merged;
    auto actions = merged ? previous() : in.actions;
    auto e_r = embed_return_->forward(rtg) + time;
    auto e_s = embed_state_->forward(in.states) + time;
    auto e_a = embed_action_->forward(actions) + time;
    if (inspection)
      inspection->tokens_before_merge =
          torch::stack({e_r, e_s, e_a}, 2).reshape({B, 3 * K, H}).detach();
    if (!merged) {
      tokens = torch::stack({e_r, e_s, e_a}, 2).reshape({B, 3 * K, H});  // R_1, s_1, a_1, ...
    } else {
      auto triplets = torch::stack({e_a, e_r, e_s}, 2);  // (a_{t-1}, R_t, s_t)
      switch (c.merger) {
        case Merger::Concat:
          tokens = concat_->forward(torch::cat({actions, rtg, in.states}, -1)) + time;
          break;
        case Merger::Pooling:
          tokens = triplets.mean(2);
          break;
        case Merger::Attention:
          tokens = std::static_pointer_cast<AttentionMerger>(merger_)->forward(triplets);
          break;
        case Merger::Convolution:
          tokens = std::static_pointer_cast<ConvolutionMerger>(merger_)->forward(triplets);
          break;
      }
    }
  }
  tokens = embed_dropout_->forward(embed_ln_->forward(tokens));
  if (inspection) {
    inspection->tokens = tokens.detach();
    inspection->token_types.clear();
    for (int64_t t = 0; t < K; ++t) {
      if (c.tokenizer == Tokenizer::Triplet)
        inspection->token_types.insert(inspection->token_types.end(), {'R', 's', 'a'});
      else
        inspection->token_types.push_back('t');
    }
  }
  return tokens;
}

torch::Tensor DecisionModelImpl::read_out(const torch::Tensor& stream) {
  const auto& c = config_;
  auto x = final_ln_->forward(stream);
  if (c.tokenizer == Tokenizer::Triplet)
    x = x.view({x.size(0), x.size(1) / 3, 3, c.hidden}).select(2, 1);  // the s_t tokens
  auto out = head_->forward(x);
  return c.action_tanh ? torch::tanh(out) : out;
}

ModelInputs DecisionModelImpl::prepare(const ModelInputs& raw, ModalityZeroing zeroing) const {
  ModelInputs in = apply_zeroing(raw, zeroing);
  const int64_t B = in.states.size(0), K = in.states.size(1);
  if (K > config_.context_length && config_.mixer == "direct-attention")
    throw Error("direct attention was built for " + std::to_string(config_.context_length) +
                " steps, not " + std::to_string(K));
  if (!in.mask.defined()) in.mask = torch::ones({B, K});
  return in;
}

Masks DecisionModelImpl::masks_for(const ModelInputs& in, int64_t tokens, int context) const {
  auto valid = in.mask > 0.5;
  const int64_t per_step = config_.tokenizer == Tokenizer::Triplet ? 3 : 1;
  if (per_step == 3) valid = valid.repeat_interleave(3, 1);
  return make_masks(valid, tokens, context, per_step);
}

torch::Tensor DecisionModelImpl::forward(const ModelInputs& raw, Inspection* inspection,
                                         ModalityZeroing zeroing, const ForwardHooks* hooks) {
  const ModelInputs in = prepare(raw, zeroing);
  const auto& c = config_;
  if (inspection) *inspection = Inspection{};

  if (c.tokenizer == Tokenizer::State) {
    auto out = state_mlp_->forward(in.states);
    return c.action_tanh ? torch::tanh(out) : out;
  }
  auto x = embed(in, inspection);
  const Masks masks = masks_for(in, x.size(1), hooks ? hooks->context : 0);
  int layer = 0;
  for (const auto& module : *blocks_) {
    auto* block = module->as<BlockImpl>();
    torch::Tensor matrix;
    x = block->forward(x, masks, inspection ? &matrix : nullptr, hooks, ++layer);
    if (inspection) {
      inspection->mixing.push_back(matrix);
      inspection->mixers.push_back(block->mixer_name());
    }
  }
  return read_out(x);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Acting from a point in the stream

torch::Tensor DecisionModelImpl::act(const ModelInputs& raw, ModalityZeroing zeroing,
                                     const ForwardHooks* hooks) {
  const ModelInputs in = prepare(raw, zeroing);
  const auto& c = config_;
  if (c.tokenizer == Tokenizer::State) {
    auto out = state_mlp_->forward(in.states.select(1, in.states.size(1) - 1));
    return c.action_tanh ? torch::tanh(out) : out;
  }
  return blocks_to_action(in, embed(in, nullptr), 1, hooks);
}

torch::Tensor DecisionModelImpl::blocks_to_action(const ModelInputs& in, torch::Tensor x, int layer,
                                                  const ForwardHooks* hooks) {
  const auto& c = config_;
  const int64_t K = in.states.size(1);
  const Masks masks = masks_for(in, x.size(1), hooks ? hooks->context : 0);
  // Every block but the last needs all tokens (they are the next block's keys); the last one
  // only the token the action is read from: s_K, or the last merged step.
  const int64_t row = action_token(K - 1);
  const auto n = static_cast<int64_t>(blocks_->size());
  for (int64_t i = layer - 1; i + 1 < n; ++i)
    x = (*blocks_)[static_cast<std::size_t>(i)]->as<BlockImpl>()->forward(x, masks, nullptr, hooks,
                                                                          static_cast<int>(i + 1));
  if (layer <= n)
    x = (*blocks_)[static_cast<std::size_t>(n - 1)]->as<BlockImpl>()->forward_row(
        x, masks, row, hooks, static_cast<int>(n));
  else
    x = x.narrow(1, row, 1);
  auto out = head_->forward(final_ln_->forward(x)).squeeze(1);
  return c.action_tanh ? torch::tanh(out) : out;
}

torch::Tensor DecisionModelImpl::embed_tokens(const ModelInputs& raw) {
  if (config_.tokenizer == Tokenizer::State)
    throw UsageError("the model (" + config_.variant + ") has no tokens");
  return embed(prepare(raw, ModalityZeroing::None), nullptr);
}

torch::Tensor DecisionModelImpl::act_from(const ModelInputs& raw, const torch::Tensor& stream,
                                          int layer, const ForwardHooks* hooks) {
  const auto& c = config_;
  if (c.tokenizer == Tokenizer::State)
    throw UsageError("the model (" + c.variant + ") has no blocks");
  if (layer < 1 || layer > c.layers + 1)
    throw UsageError("block " + std::to_string(layer) + ": the model has " +
                     std::to_string(c.layers) + " layers");
  return blocks_to_action(prepare(raw, ModalityZeroing::None), stream, layer, hooks);
}

DecisionModelImpl::ReadOutParts DecisionModelImpl::read_out_parts(const torch::Tensor& stream) {
  const auto& o = final_ln_->options;
  const auto var = stream.var(-1, /*unbiased=*/false, /*keepdim=*/true);
  return {torch::rsqrt(var + o.eps()),
          final_ln_->weight,
          final_ln_->bias,
          head_->weight,
          head_->bias,
          head_->forward(final_ln_->forward(stream))};
}

int64_t DecisionModelImpl::action_token(int64_t step) const {
  return config_.tokenizer == Tokenizer::Triplet ? 3 * step + 1 : step;
}

namespace {
// ---------------------------------------------------------------------------------------------
// [SECTION] Registered mixer modules

std::mutex& factories_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, TokenMixerFactory>& factories() {
  static auto* f =
      new std::map<std::string, TokenMixerFactory>();  // never destroyed, as the registries
  return *f;
}
}  // namespace

void register_token_mixer(const std::string& name, TokenMixerFactory factory) {
  std::lock_guard lock(factories_mutex());
  if (!factory) throw UsageError("the token mixer '" + name + "' needs a factory");
  if (!factories().emplace(name, std::move(factory)).second)
    throw UsageError("the token mixer '" + name + "' already has a module");
}

void unregister_token_mixer(const std::string& name) {
  std::lock_guard lock(factories_mutex());
  factories().erase(name);
}

std::shared_ptr<TokenMixer> make_token_mixer(const VariantConfig& config, const std::string& name) {
  TokenMixerFactory factory;
  {
    std::lock_guard lock(factories_mutex());
    if (auto it = factories().find(name); it != factories().end()) factory = it->second;
  }
  if (!factory) {
    if (!config.plugin.empty())
      throw MissingPluginError(config.plugin, config.plugin_version, "the mixer '" + name + "'");
    throw UsageError("no module for the token mixer '" + name + "'");
  }
  auto mixer = factory(config);
  if (!mixer) throw Error("the token mixer '" + name + "' made no module");
  return mixer;
}

}  // namespace dstudio::models
