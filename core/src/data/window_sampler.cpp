#include "dstudio/data/window_sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "dstudio/common/error.h"

namespace dstudio::data {

void WindowBatch::resize(int b, int k, int s, int a) {
  batch = b;
  K = k;
  state_dim = s;
  act_dim = a;
  states.assign(static_cast<std::size_t>(b) * k * s, 0.0f);
  actions.assign(static_cast<std::size_t>(b) * k * a, 0.0f);
  returns_to_go.assign(static_cast<std::size_t>(b) * (k + 1), 0.0f);
  timesteps.assign(static_cast<std::size_t>(b) * k, 0);
  mask.assign(static_cast<std::size_t>(b) * k, 0.0f);
  episode.assign(b, 0);
  start.assign(b, 0);
}

WindowSampler::WindowSampler(const Dataset& dataset, const SamplerConfig& config)
    : dataset_(dataset), config_(config), random_(config.seed) {
  if (config.context_length < 1) throw UsageError("context length K must be at least 1");
  if (config.batch_size < 1) throw UsageError("batch size must be at least 1");
  if (config.max_ep_len < 1) throw UsageError("max_ep_len must be at least 1");
  if (!(config.pct_traj > 0.0 && config.pct_traj <= 1.0))
    throw UsageError("pct_traj must be in (0, 1]");
  if (!(config.rtg_scale > 0.0)) throw UsageError("rtg_scale must be positive");
  if (!std::isfinite(config.reward_shift)) throw UsageError("reward_shift must be a number");

  // Complete episodes, sorted by return (stable, lowest first) as np.argsort does.
  std::vector<std::int64_t> order;
  std::int64_t all_steps = 0;
  for (std::size_t i = 0; i < dataset.episodes.size(); ++i) {
    if (!dataset.episodes[i].complete()) continue;
    order.push_back(static_cast<std::int64_t>(i));
    all_steps += dataset.episodes[i].length;
  }
  if (order.empty()) throw Error("the dataset has no complete episode to sample from");
  const auto shifted_return = [&](std::int64_t e) {
    const Episode& ep = dataset.episodes[static_cast<std::size_t>(e)];
    return ep.ret + config.reward_shift * static_cast<double>(ep.length);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](auto a, auto b) { return shifted_return(a) < shifted_return(b); });

  // %BC: keep the best episode, then the next best while the timestep budget allows.
  const std::int64_t budget = std::max<std::int64_t>(
      static_cast<std::int64_t>(config.pct_traj * static_cast<double>(all_steps)), 1);
  std::int64_t steps = dataset.episodes[order.back()].length;
  std::size_t kept = 1;
  for (auto i = static_cast<std::ptrdiff_t>(order.size()) - 2; i >= 0; --i) {
    const std::int64_t len = dataset.episodes[order[i]].length;
    if (steps + len > budget) break;
    steps += len;
    ++kept;
  }
  kept_.assign(order.end() - static_cast<std::ptrdiff_t>(kept), order.end());
  std::int64_t acc = 0;
  for (auto e : kept_) cumulative_.push_back(acc += dataset.episodes[e].length);

  // Undiscounted return-to-go of every transition of the kept episodes.
  rtg_.assign(static_cast<std::size_t>(dataset.transitions()), 0.0);
  for (auto e : kept_) {
    const Episode& ep = dataset.episodes[e];
    double sum = 0.0;
    for (std::int64_t t = ep.start + ep.length - 1; t >= ep.start; --t) {
      sum += dataset.data.rewards[t] + config.reward_shift;
      rtg_[t] = sum;
    }
  }
}

std::vector<double> WindowSampler::episode_probabilities() const {
  std::vector<double> p;
  const auto total = static_cast<double>(cumulative_.back());
  for (auto e : kept_) p.push_back(static_cast<double>(dataset_.episodes[e].length) / total);
  return p;
}

WindowBatch WindowSampler::sample() {
  WindowBatch batch;
  const auto& d = dataset_.data;
  batch.resize(config_.batch_size, config_.context_length, static_cast<int>(d.obs_dim),
               static_cast<int>(d.act_dim));
  const auto total = static_cast<std::uint64_t>(cumulative_.back());
  for (int b = 0; b < config_.batch_size; ++b) {
    // Drawing a step uniformly over all kept steps picks an episode with p proportional to length.
    const auto step = static_cast<std::int64_t>(random_.below(total));
    const auto k =
        std::upper_bound(cumulative_.begin(), cumulative_.end(), step) - cumulative_.begin();
    const std::int64_t episode = kept_[k];
    const auto start = static_cast<std::int64_t>(random_.below(dataset_.episodes[episode].length));
    fill_window(episode, start, batch, b);
  }
  return batch;
}

void WindowSampler::fill_window(std::int64_t episode, std::int64_t start, WindowBatch& batch,
                                int b) const {
  const auto& d = dataset_.data;
  const Episode& ep = dataset_.episodes.at(episode);
  if (start < 0 || start >= ep.length) throw std::out_of_range("window start outside its episode");
  const int K = batch.K, S = batch.state_dim, A = batch.act_dim;
  const auto tlen = static_cast<int>(std::min<std::int64_t>(K, ep.length - start));
  const int pad = K - tlen;
  const std::int64_t first = ep.start + start;

  float* states = &batch.states[static_cast<std::size_t>(b) * K * S];
  float* actions = &batch.actions[static_cast<std::size_t>(b) * K * A];
  float* rtg = &batch.returns_to_go[static_cast<std::size_t>(b) * (K + 1)];
  std::int64_t* timesteps = &batch.timesteps[static_cast<std::size_t>(b) * K];
  float* mask = &batch.mask[static_cast<std::size_t>(b) * K];

  for (int p = 0; p < K; ++p) {
    const bool real = p >= pad;
    const std::int64_t t = first + (p - pad);  // dataset row of this position when real
    for (int s = 0; s < S; ++s) {
      const double raw = real ? d.observations[t * S + s] : 0.0;
      const double std_eps = static_cast<double>(dataset_.state_std[s]) + 1e-6;
      states[p * S + s] = static_cast<float>((raw - dataset_.state_mean[s]) / std_eps);
    }
    for (int a = 0; a < A; ++a) actions[p * A + a] = real ? d.actions[t * A + a] : -10.0f;
    const std::int64_t timestep = start + (p - pad);
    timesteps[p] = real ? std::min<std::int64_t>(timestep, config_.max_ep_len - 1) : 0;
    mask[p] = real ? 1.0f : 0.0f;
  }
  // K + 1 return-to-go values: the tlen + 1 values from the window start, where the value one
  // past the episode's last step is the appended 0; left-padded with zeros like everything else.
  for (int p = 0; p <= K; ++p) {
    const int i = p - pad;  // offset from the window start
    double value = 0.0;
    if (i >= 0 && start + i < ep.length) value = rtg_[first + i];
    rtg[p] = static_cast<float>(value / config_.rtg_scale);
  }
  batch.episode[b] = episode;
  batch.start[b] = start;
}

}  // namespace dstudio::data
