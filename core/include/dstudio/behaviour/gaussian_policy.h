#pragma once
/// \file
/// The behaviour policies of D4RL's locomotion datasets: a tanh-squashed Gaussian whose mean and
/// log standard deviation come from a multilayer perceptron of the raw observation (two hidden
/// layers of 256 ReLU units, as rlkit's SAC), a = tanh(mu(s) + sigma(s) * eps), eps ~ N(0, I).
/// The spread is learned and depends on the state, which is what makes the same state lead to
/// different returns in the data (docs/environments.md).
///
/// This is the acting side only, in plain C++ with a fixed order of additions, so the same policy
/// and seed give the same actions on every machine and at any thread count. Training is SAC
/// (`dstudio/behaviour/sac.h`). Weights ship rounded to IEEE half precision (`round_to_half`), and
/// the shipped, rounded policy is the one evaluated.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "dstudio/common/random.h"

namespace dstudio::behaviour {

/// One dense layer y = W x + b, W stored input-major ((in, out), row-major) so that the inner
/// loop runs over outputs and vectorises without reordering any sum.
struct DenseLayer {
  int in = 0, out = 0;
  std::vector<float> weight;  ///< (in, out): weight[i * out + o] multiplies input i for output o
  std::vector<float> bias;    ///< (out)
  bool operator==(const DenseLayer&) const = default;
};

/// Bounds of the log standard deviation, as in SAC's reference implementations.
inline constexpr float kLogStdMin = -20.0f, kLogStdMax = 2.0f;

struct GaussianPolicy {
  int obs_dim = 0;
  int act_dim = 0;
  /// Hidden layers with ReLU, then one layer to 2 * act_dim outputs: the mean, then log std.
  std::vector<DenseLayer> layers;

  /// Number of weights and biases.
  [[nodiscard]] std::int64_t parameter_count() const;
  /// Mean and clamped log standard deviation of the pre-tanh Gaussian.
  void distribution(std::span<const float> obs, std::span<float> mean,
                    std::span<float> log_std) const;
  /// The deterministic action tanh(mu(s)).
  void act(std::span<const float> obs, std::span<float> action) const;
  /// A sample tanh(mu + sigma * eps) with eps drawn from `random`: the behaviour policy acting.
  void sample(std::span<const float> obs, std::span<float> action, Random& random) const;
  /// Checks the shapes of the layers; throws Error saying which layer is wrong.
  void validate() const;
  bool operator==(const GaussianPolicy&) const = default;
};

/// A policy of zeros with the given hidden sizes (for tests and as a shape template).
GaussianPolicy zero_gaussian_policy(int obs_dim, int act_dim, const std::vector<int>& hidden);

/// IEEE binary16 conversion, round to nearest even; `half_to_float` is exact.
std::uint16_t float_to_half(float value);
float half_to_float(std::uint16_t half);
/// Every weight and bias replaced by its nearest half-precision value (what ships).
void round_to_half(GaussianPolicy& policy);

/// A compact JSON object of the policy: shapes, and weights as base64 little-endian binary16.
/// Only exact for a policy already rounded to half precision.
std::string to_json_text(const GaussianPolicy& policy);
/// Parses `to_json_text`'s output; throws Error naming what is wrong.
GaussianPolicy gaussian_policy_from_json_text(const std::string& text);

}  // namespace dstudio::behaviour
