#pragma once
/// \file
/// The behaviour policies that generate the project's datasets: a linear map of the normalised
/// observation, a = clip(W (s - mean) / std, -1, 1), as Augmented Random Search learns them.
/// Acting as a behaviour policy adds Gaussian noise before the clip, so that datasets hold
/// samples of a stochastic policy rather than its mean, as D4RL's do.

#include <span>
#include <vector>

#include "dstudio/common/random.h"

namespace dstudio::behaviour {

struct LinearPolicy {
  int obs_dim = 0;
  int act_dim = 0;
  std::vector<double> weights;   ///< (act_dim, obs_dim), row-major
  std::vector<double> obs_mean;  ///< (obs_dim)
  std::vector<double> obs_std;   ///< (obs_dim), strictly positive

  /// A zero policy with identity normalisation.
  static LinearPolicy zeros(int obs_dim, int act_dim);
  /// The deterministic action, clipped to [-1, 1].
  void act(std::span<const float> obs, std::span<float> action) const;
  /// The action with N(0, noise_std^2) added to each dimension before the clip.
  void act_noisy(std::span<const float> obs, std::span<float> action, double noise_std,
                 Random& random) const;
  bool operator==(const LinearPolicy&) const = default;
};

}  // namespace dstudio::behaviour
