#include "dstudio/data/synthetic.h"

#include <cmath>

#include "dstudio/common/random.h"

namespace dstudio::data {

TransitionArrays make_synthetic(const SyntheticSpec& spec) {
  TransitionArrays d;
  d.obs_dim = spec.obs_dim;
  d.act_dim = spec.act_dim;
  d.qpos_dim = spec.qpos_dim;
  d.qvel_dim = spec.qvel_dim;
  const std::int64_t n = spec.transitions;
  d.observations.resize(n * spec.obs_dim);
  d.next_observations.resize(n * spec.obs_dim);
  d.actions.resize(n * spec.act_dim);
  d.rewards.resize(n);
  d.terminals.assign(n, 0);
  d.timeouts.assign(n, 0);
  d.qpos.resize(n * spec.qpos_dim);
  d.qvel.resize(n * spec.qvel_dim);

  Random rng(spec.seed);
  // A fixed "behaviour policy": a = tanh(W s) with W drawn once from the seed.
  std::vector<double> W(spec.act_dim * spec.obs_dim);
  for (auto& w : W) w = 0.4 * rng.normal();

  std::vector<double> s(spec.obs_dim), next(spec.obs_dim);
  const std::int64_t body_end = std::max<std::int64_t>(0, n - spec.tail_steps);
  std::int64_t step = 0;
  double skill = 0.0;
  double x = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (step == 0) {
      skill = 0.2 + 2.8 * rng.uniform();
      x = 0.0;
      for (auto& v : s) v = 0.005 * (2.0 * rng.uniform() - 1.0);
    }
    for (std::int64_t a = 0; a < spec.act_dim; ++a) {
      double z = 0.0;
      for (std::int64_t k = 0; k < spec.obs_dim; ++k) z += W[a * spec.obs_dim + k] * s[k];
      d.actions[i * spec.act_dim + a] = static_cast<float>(std::tanh(z + 0.1 * rng.normal()));
    }
    // Damped random walk, nudged by the first action so actions carry information about states.
    for (std::int64_t k = 0; k < spec.obs_dim; ++k)
      next[k] =
          0.97 * s[k] + 0.05 * d.actions[i * spec.act_dim + k % spec.act_dim] + 0.03 * rng.normal();
    const double velocity = skill * (1.0 + 0.2 * rng.normal());
    x += velocity * 0.008;
    double control = 0.0;
    for (std::int64_t a = 0; a < spec.act_dim; ++a)
      control += d.actions[i * spec.act_dim + a] * d.actions[i * spec.act_dim + a];
    d.rewards[i] = static_cast<float>(velocity + 1.0 - 1e-3 * control);
    for (std::int64_t k = 0; k < spec.obs_dim; ++k) {
      d.observations[i * spec.obs_dim + k] = static_cast<float>(s[k]);
      d.next_observations[i * spec.obs_dim + k] = static_cast<float>(next[k]);
    }
    for (std::int64_t k = 0; k < spec.qpos_dim; ++k)
      d.qpos[i * spec.qpos_dim + k] =
          static_cast<float>(k == 0 ? x : (k < spec.obs_dim + 1 ? s[k - 1] : 0.0));
    for (std::int64_t k = 0; k < spec.qvel_dim; ++k)
      d.qvel[i * spec.qvel_dim + k] =
          static_cast<float>(k == 0 ? velocity : s[(k + 4) % spec.obs_dim]);

    ++step;
    // Low-skill episodes "fall" sooner: a per-step hazard ends them with a terminal.
    const bool fell = rng.uniform() < 0.004 * (3.2 - skill) / 3.0;
    if (i < body_end) {
      if (fell)
        d.terminals[i] = 1;
      else if (step == spec.max_episode_steps)
        d.timeouts[i] = 1;
    }
    if (i + 1 == body_end || d.terminals[i] || d.timeouts[i])
      step = 0;
    else
      s = next;
  }
  // The tail must not end an episode; make sure the last boundary is exactly at body_end - 1.
  if (body_end > 0 && body_end < n && !d.terminals[body_end - 1]) d.timeouts[body_end - 1] = 1;
  return d;
}

std::map<std::string, std::string> synthetic_metadata(const SyntheticSpec& spec) {
  return {{"generator", "dstudio synthetic"},
          {"seed", std::to_string(spec.seed)},
          {"note", "synthetic data with hopper's shapes; not physics"}};
}

}  // namespace dstudio::data
