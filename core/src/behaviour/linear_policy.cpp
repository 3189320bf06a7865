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

void LinearPolicy::act(std::span<const float> obs, std::span<float> action) const {
  for (int a = 0; a < act_dim; ++a) {
    double z = 0.0;
    const double* w = &weights[static_cast<std::size_t>(a) * obs_dim];
    for (int k = 0; k < obs_dim; ++k) z += w[k] * ((obs[k] - obs_mean[k]) / obs_std[k]);
    action[a] = static_cast<float>(std::clamp(z, -1.0, 1.0));
  }
}

void LinearPolicy::act_noisy(std::span<const float> obs, std::span<float> action, double noise_std,
                             Random& random) const {
  for (int a = 0; a < act_dim; ++a) {
    double z = 0.0;
    const double* w = &weights[static_cast<std::size_t>(a) * obs_dim];
    for (int k = 0; k < obs_dim; ++k) z += w[k] * ((obs[k] - obs_mean[k]) / obs_std[k]);
    action[a] = static_cast<float>(std::clamp(z + noise_std * random.normal(), -1.0, 1.0));
  }
}

}  // namespace dstudio::behaviour
