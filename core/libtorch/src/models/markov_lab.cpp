#include "dstudio/models/markov_lab.h"

#include <torch/torch.h>

#include <chrono>
#include <cmath>

#include "dstudio/common/error.h"

namespace dstudio::models {

namespace {

// The appendix's one-layer model with a choice of mixer.
struct LabNet : torch::nn::Module {
  LabNet(const MarkovLabOptions& o)
      : mixer(o.mixer), window(o.window), length(o.length), dim(o.embedding) {
    const int64_t S = o.chain.states, d = o.embedding;
    embedding = register_module("embedding", torch::nn::Embedding(S, d));
    position = register_parameter("position", torch::randn({length, d}) * 0.02);
    norm = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
    w1 = register_module("w1", torch::nn::Linear(torch::nn::LinearOptions(d, o.ffn).bias(false)));
    w2 = register_module("w2", torch::nn::Linear(torch::nn::LinearOptions(o.ffn, d).bias(false)));
    out = register_module("out", torch::nn::Linear(d, S));
    if (mixer == LabMixer::Attention) {
      wq = register_module("wq", torch::nn::Linear(torch::nn::LinearOptions(d, d).bias(false)));
      wk = register_module("wk", torch::nn::Linear(torch::nn::LinearOptions(d, d).bias(false)));
      wv = register_module("wv", torch::nn::Linear(torch::nn::LinearOptions(d, d).bias(false)));
      lag_bias = register_parameter("lag_bias", torch::zeros({window}));
    } else if (mixer == LabMixer::Convolution) {
      // Taps start as the average, so every mixer starts from the appendix's pooling.
      taps = register_parameter("taps", torch::full({d, 1, window}, 1.0 / window));
    }
    // lag[n][i] = n - i; inside the causal window where 0 <= lag < k.
    auto idx = torch::arange(length);
    lag = idx.unsqueeze(1) - idx.unsqueeze(0);
    in_window = (lag >= 0).logical_and(lag < window);
  }

  // Logits (B, N, S); with `matrix`, the mixing matrix (B, N, N).
  torch::Tensor forward(const torch::Tensor& x, torch::Tensor* matrix) {
    const auto X = embedding->forward(x) + position;  // (B, N, d)
    torch::Tensor mixed;
    switch (mixer) {
      case LabMixer::Pooling: {
        // The mean of the k newest positions; fewer at the start of the sequence.
        auto weights = in_window.to(torch::kFloat);
        weights = weights / weights.sum(1, true);
        mixed = torch::matmul(weights, X);
        if (matrix) *matrix = weights.unsqueeze(0).expand({x.size(0), length, length});
        break;
      }
      case LabMixer::Attention: {
        auto logits =
            torch::matmul(wq->forward(X), wk->forward(X).transpose(1, 2)) / std::sqrt(double(dim));
        auto bias = lag_bias.index({lag.clamp(0, window - 1)});
        logits = (logits + bias).masked_fill(in_window.logical_not(), -1e9);
        auto weights = torch::softmax(logits, -1);
        mixed = torch::matmul(weights, wv->forward(X));
        if (matrix) *matrix = weights;
        break;
      }
      case LabMixer::Convolution: {
        auto padded = torch::constant_pad_nd(X.transpose(1, 2), {window - 1, 0});
        // conv1d correlates: kernel index j meets X[n - (k - 1) + j], i.e. lag k - 1 - j.
        const std::vector<int64_t> one{1}, zero{0};
        mixed = torch::conv1d(padded, taps, torch::Tensor(), one, zero, one, dim).transpose(1, 2);
        if (matrix) {
          // As the studio's convolution mixers: the taps' magnitudes, mean over channels.
          auto by_lag = taps.abs().mean(std::vector<int64_t>{0, 1}).flip(0);  // (k), lag 0 first
          auto m =
              torch::where(in_window, by_lag.index({lag.clamp(0, window - 1)}), torch::zeros({}));
          *matrix = m.unsqueeze(0).expand({x.size(0), length, length});
        }
        break;
      }
    }
    auto y = X + norm->forward(mixed);
    auto z = y + w2->forward(torch::relu(w1->forward(y)));
    return out->forward(z);
  }

  LabMixer mixer;
  int64_t window, length, dim;
  torch::nn::Embedding embedding{nullptr};
  torch::Tensor position, lag_bias, taps, lag, in_window;
  torch::nn::LayerNorm norm{nullptr};
  torch::nn::Linear w1{nullptr}, w2{nullptr}, out{nullptr}, wq{nullptr}, wk{nullptr}, wv{nullptr};
};

torch::Tensor to_tensor(const std::vector<std::uint8_t>& symbols, int count, int length) {
  auto t = torch::empty({count, length}, torch::kLong);
  auto* p = t.data_ptr<int64_t>();
  for (size_t i = 0; i < symbols.size(); ++i) p[i] = symbols[i];
  return t;
}

// Held-out sequences and, at each position with a full context, the chain's true next law.
struct HeldOut {
  torch::Tensor x;        // (B, N)
  torch::Tensor truth;    // (B, N, S); zero rows before the first full context
  torch::Tensor counted;  // (N) bool: the positions with a full context
};

HeldOut make_held_out(const analysis::MarkovChain& chain, int count, int length,
                      std::uint64_t seed) {
  HeldOut h;
  const auto symbols = chain.sample(count, length, seed);
  h.x = to_tensor(symbols, count, length);
  h.truth = torch::zeros({count, length, chain.states}, torch::kDouble);
  auto truth = h.truth.accessor<double, 3>();
  for (int b = 0; b < count; ++b)
    for (int n = chain.order - 1; n < length; ++n) {
      const auto law = chain.next_distribution(symbols.data() + static_cast<size_t>(b) * length, n);
      for (int s = 0; s < chain.states; ++s) truth[b][n][s] = law[s];
    }
  h.counted = torch::arange(length) >= (chain.order - 1);
  return h;
}

// Mean KL(true || predicted) over the held-out positions with a full context (Lemma 1's first
// term).
double mean_kl(LabNet& net, const HeldOut& h) {
  torch::NoGradGuard no_grad;
  auto log_predicted = torch::log_softmax(net.forward(h.x, nullptr), -1).to(torch::kDouble);
  auto truth = h.truth;
  auto kl = (truth * (torch::log(truth.clamp_min(1e-300)) - log_predicted)).sum(-1);  // (B, N)
  return kl.index({torch::indexing::Slice(), h.counted}).mean().item<double>();
}

}  // namespace

MarkovLabResult run_markov_lab(const MarkovLabOptions& o, const Progress& progress,
                               const std::function<void(const MarkovLabPoint&)>& on_point) {
  o.check();
  const auto start = std::chrono::steady_clock::now();
  torch::manual_seed(o.seed);
  LabNet net(o);
  torch::optim::Adam optimiser(net.parameters(), torch::optim::AdamOptions(o.learning_rate));

  MarkovLabResult result;
  result.entropy_rate = o.chain.entropy_rate();
  result.length = o.length;
  // Enough held-out positions that the KL estimate's noise is far below 1% of the floor.
  const HeldOut held_out = make_held_out(o.chain, 256, o.length, o.seed ^ 0x5eedf00dULL);

  auto record = [&](int step, double training_loss) {
    MarkovLabPoint point{step, training_loss, result.entropy_rate + mean_kl(net, held_out)};
    result.curve.push_back(point);
    if (on_point) on_point(point);
  };
  record(0, std::nan(""));
  for (int step = 1; step <= o.steps; ++step) {
    progress.update(static_cast<double>(step - 1) / o.steps, "training");
    // Fresh sequences every step: the population loss is what is minimised, not a fixed sample's.
    const auto x =
        to_tensor(o.chain.sample(o.batch, o.length, o.seed + static_cast<std::uint64_t>(step)),
                  o.batch, o.length);
    auto logits = net.forward(x, nullptr);
    // Position n predicts symbol n + 1.
    auto loss = torch::nn::functional::cross_entropy(
        logits.narrow(1, 0, o.length - 1).reshape({-1, o.chain.states}),
        x.narrow(1, 1, o.length - 1).reshape({-1}));
    optimiser.zero_grad();
    loss.backward();
    optimiser.step();
    if (step % o.eval_every == 0 || step == o.steps) record(step, loss.template item<double>());
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.final_loss = result.curve.back().loss;
  result.gap = result.final_loss - result.entropy_rate;

  torch::NoGradGuard no_grad;
  torch::Tensor matrix;
  net.forward(held_out.x, &matrix);
  auto mean = matrix.mean(0).to(torch::kDouble).contiguous();
  result.mixing_matrix.assign(mean.data_ptr<double>(), mean.data_ptr<double>() + mean.numel());
  // Lags over the queries whose window is whole.
  result.mixing_by_lag.assign(o.window, 0.0);
  const int full = o.length - (o.window - 1);
  for (int n = o.window - 1; n < o.length; ++n)
    for (int l = 0; l < o.window; ++l)
      result.mixing_by_lag[l] +=
          result.mixing_matrix[static_cast<size_t>(n) * o.length + (n - l)] / full;
  progress.update(1.0, "trained");
  return result;
}

}  // namespace dstudio::models
