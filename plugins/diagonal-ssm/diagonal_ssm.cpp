// A recurrent token mixer: a diagonal linear state-space recurrence (S4D-style), the sequence model
// of Decision S4, the recurrent baseline (DS4) of Decision ConvFormer's Table 1.
//
// Per channel c, over the token positions of a window:
//   h_t[c] = lambda_c h_{t-1}[c] + (1 - lambda_c) u_t[c],   u = W_in x
//   y_t    = W_out(h_t * SiLU(W_gate x_t))                  (the gate is optional)
// with lambda_c = sigmoid(theta_c) in (0, 1), initialised to timescales 1 / (1 - lambda) spread
// log-evenly over [1, timescale_max] tokens. Unrolled, h_t = sum_{l >= 0} (1 - lambda) lambda^l
// u_{t-l}: a causal convolution with an exponentially decaying kernel as long as the window, so the
// equivalent mixing matrix is exact for the recurrence, as for DC's convolution:
//   M[i, j] = mean over channels of (1 - lambda_c) lambda_c^(i - j), j <= i,
// the gate being an input-dependent elementwise factor (as for UDC's gated convolution).

#include <dstudio/models/token_mixer.h>
#include <dstudio/models/variant_registry.h>
#include <dstudio/plugins/plugin.h>

#include <cmath>

namespace {

using dstudio::models::MixerMasks;
using dstudio::models::VariantConfig;

class DiagonalSsmMixer : public dstudio::models::TokenMixer {
 public:
  explicit DiagonalSsmMixer(const VariantConfig& c)
      : gated_(dstudio::models::mixer_option(c, "gate") != 0.0) {
    const int64_t H = c.hidden;
    const double longest = dstudio::models::mixer_option(c, "timescale_max");
    // tau_c log-spaced in [1, longest]; lambda = 1 - 1 / tau, stored as its logit.
    auto tau = torch::exp(torch::linspace(0.0, std::log(std::max(longest, 1.0 + 1e-3)), H));
    auto lambda = (1.0 - 1.0 / tau).clamp(1e-4, 1.0 - 1e-4);
    theta_ = register_parameter("theta", torch::log(lambda / (1.0 - lambda)));
    in_ = register_module("in_proj", torch::nn::Linear(H, H));
    if (gated_) gate_ = register_module("gate", torch::nn::Linear(H, H));
    out_ = register_module("out", torch::nn::Linear(H, H));
  }

  [[nodiscard]] std::string name() const override { return "diagonal-ssm"; }

  torch::Tensor forward(const torch::Tensor& x, const MixerMasks& masks,
                        torch::Tensor* matrix) override {
    const int64_t B = x.size(0), T = x.size(1);
    // Padding (left of a young episode's first step) must not enter the state: the last row of
    // `allowed` is every real token.
    auto real = masks.allowed.select(1, 0).select(1, T - 1).to(x.dtype());  // (B or 1, T)
    auto u = in_->forward(x) * real.unsqueeze(-1);
    auto kernel = transfer(T);  // (T, T, H)
    auto h = torch::einsum("ijc,bjc->bic", {kernel, u});
    if (gated_) h = h * torch::silu(gate_->forward(x));
    if (matrix) {
      auto m = kernel.detach().mean(-1);                        // (T, T)
      auto allowed = masks.allowed.select(1, 0).to(m.dtype());  // (B or 1, T, T)
      *matrix = (m.unsqueeze(0) * allowed).expand({B, T, T}).unsqueeze(1).contiguous();
    }
    return out_->forward(h);
  }

 private:
  // K[i, j, c] = (1 - lambda_c) lambda_c^(i - j) for j <= i, else 0.
  torch::Tensor transfer(int64_t T) const {
    auto lambda = torch::sigmoid(theta_);  // (H)
    auto pos = torch::arange(T, torch::kFloat);
    auto lag = (pos.unsqueeze(1) - pos.unsqueeze(0));  // (T, T)
    auto causal = (lag >= 0).to(torch::kFloat).unsqueeze(-1);
    auto powers = torch::exp(lag.clamp_min(0).unsqueeze(-1) * torch::log(lambda));  // lambda^(i-j)
    return (1.0 - lambda) * powers * causal;
  }

  bool gated_;
  torch::Tensor theta_;
  torch::nn::Linear in_{nullptr}, gate_{nullptr}, out_{nullptr};
};

}  // namespace

DSTUDIO_PLUGIN("diagonal-ssm", "1.0.0",
               "A recurrent token mixer: a diagonal linear state-space recurrence (DS4-style)") {
  using dstudio::models::ConfigField;
  dstudio::models::MixerDefinition mixer;
  mixer.name = "diagonal-ssm";
  mixer.description =
      "h_t = lambda h_{t-1} + (1 - lambda) W_in x_t per channel, gated: Decision S4's recurrence";
  mixer.options = {
      {ConfigField{
           "timescale_max",
           "the longest initial memory, in tokens (timescales 1 / (1 - lambda) from 1 to this)",
           {},
           1.0},
       30.0, false},
      {ConfigField{"gate",
                   "1: multiply by SiLU(W_gate x) before the output projection; 0: no gate",
                   {},
                   0.0},
       1.0, true},
  };
  mixer.derivation =
      "diagonal recurrence: M[i][j] = (1 - lambda) lambda^(i-j) for j <= i, per channel, averaged "
      "over channels (the gate is left out)";
  mixer.flops = [](const VariantConfig& c, double tokens) {
    const double H = c.hidden, T = c.tokens();
    const double projections = dstudio::models::mixer_option(c, "gate") != 0.0 ? 3.0 : 2.0;
    return 2.0 * tokens * H * projections * H + 2.0 * tokens * T * H;
  };
  registrar.add_token_mixer(
      mixer, [](const VariantConfig& c) { return std::make_shared<DiagonalSsmMixer>(c); });

  dstudio::models::VariantDefinition variant;
  variant.name = "dssm";
  variant.description =
      "Decision S4-style: DT's (R, s, a) tokens mixed by a diagonal linear recurrence";
  variant.defaults = [] {
    auto c = dstudio::models::make_variant("dt");
    c.mixer = "diagonal-ssm";
    c.mixer_options = {{"timescale_max", 30.0}, {"gate", 1.0}};
    c.activation = "gelu";
    return c;
  };
  registrar.add_variant(variant);
}
