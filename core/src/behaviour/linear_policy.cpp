#include "dstudio/behaviour/linear_policy.h"

#include <algorithm>

namespace dstudio::behaviour {

LinearPolicy LinearPolicy::zeros(int obs_dim, int act_dim) {
  LinearPolicy p;
  p.obs_dim = obs_dim;
  p.act_dim = act_dim;
  p.weights.assign(static_cast<std::size_t>(obs_dim) * act_dim, 0.0);
  p.obs_mean.assign(static_cast<std::size_t>(obs_dim), 0.0);
  p.obs_std.assign(static_cast<std::size_t>(obs_dim), 1.0);
  return p;
}

namespace {

// W (s - mean) / std for action dimension a, before the clip.
double mean_action(const LinearPolicy& p, std::span<const float> obs, int a) {
  double z = 0.0;
  const double* w = &p.weights[static_cast<std::size_t>(a) * p.obs_dim];
  for (int k = 0; k < p.obs_dim; ++k) z += w[k] * ((obs[k] - p.obs_mean[k]) / p.obs_std[k]);
  return z;
}

}  // namespace

void LinearPolicy::act(std::span<const float> obs, std::span<float> action) const {
  for (int a = 0; a < act_dim; ++a)
    action[a] = static_cast<float>(std::clamp(mean_action(*this, obs, a), -1.0, 1.0));
}

void LinearPolicy::act_noisy(std::span<const float> obs, std::span<float> action, double noise_std,
                             Random& random) const {
  for (int a = 0; a < act_dim; ++a)
    action[a] = static_cast<float>(
        std::clamp(mean_action(*this, obs, a) + noise_std * random.normal(), -1.0, 1.0));
}

}  // namespace dstudio::behaviour
