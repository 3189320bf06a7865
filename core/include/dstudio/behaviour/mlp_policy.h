#pragma once
/// \file
/// The expert policies of D4RL's Adroit datasets: the DAPG-finetuned Gaussian policies of
/// Rajeswaran et al. (2018), as mjrl's `MLP` (mjrl/policies/gaussian_mlp.py) computes them. The
/// mean action is a multilayer perceptron of the observation with input and output scaling
/// (mjrl/utils/fc_network.py):
///
///     x    = (obs - in_shift) / (in_scale + 1e-8)
///     h    = tanh(W_k h + b_k)  for every layer but the last
///     mean = (W_last h + b_last) * out_scale + out_shift
///
/// and the policy acts with a Gaussian around it whose log standard deviation does not depend on
/// the state: a = mean + exp(log_std) * eps, eps ~ N(0, I), without squashing. D4RL made
/// {pen,door,hammer,relocate}-expert with these sampled actions, clipped to [-1, 1]
/// (scripts/generation/hand_dapg_policies.py).
///
/// The four policies ship as resources/policies/<task>-dapg.json (format dstudio-mlp-policy-1),
/// converted from aravindr93/hand_dapg's pickles by packaging/convert-dapg-policies.py with every
/// number the float32 the pickle holds. Plain C++: arithmetic is in float32 as in torch, each
/// layer's sums accumulated in double in a fixed order, so a policy gives the same actions on every
/// machine and agrees with mjrl to float32 rounding.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dstudio/common/random.h"

namespace dstudio::behaviour {

/// One torch.nn.Linear: y = W x + b, with W in torch's own layout.
struct MlpLayer {
  int in = 0, out = 0;
  std::vector<float> weight;  ///< (out, in), row-major: weight[o * in + i] multiplies input i
  std::vector<float> bias;    ///< (out)
  bool operator==(const MlpLayer&) const = default;
};

/// What mjrl adds to in_scale before dividing by it (fc_network.py's forward), in float32.
inline constexpr float kMlpInScaleEpsilon = 1e-8f;

struct MlpPolicy {
  std::string task;    ///< the environment it acts in ("pen")
  std::string source;  ///< where its numbers come from, and their licence
  int obs_dim = 0, act_dim = 0;
  /// The hidden layers' nonlinearity, as mjrl's FCNetwork names it: "tanh" or "relu".
  std::string nonlinearity = "tanh";
  std::vector<float> in_shift, in_scale;    ///< obs_dim each
  std::vector<float> out_shift, out_scale;  ///< act_dim each
  std::vector<MlpLayer> layers;             ///< obs_dim -> ... -> act_dim
  std::vector<float> log_std;               ///< act_dim; the same in every state

  /// The Gaussian's mean (mjrl's `model(obs)`) and its log standard deviation.
  void distribution(std::span<const float> obs, std::span<float> mean,
                    std::span<float> log_std) const;
  /// The mean action: mjrl's get_action(obs)[1]['evaluation'].
  void act(std::span<const float> obs, std::span<float> action) const;
  /// A sampled action, mjrl's get_action(obs)[0]: mean + exp(log_std) * eps, eps drawn from
  /// `random` (act_dim standard normals, in order). Not clipped.
  void sample(std::span<const float> obs, std::span<float> action, Random& random) const;
  /// Checks the sizes (the vectors against obs_dim and act_dim, each layer against the one before)
  /// and the numbers (finite, no in_scale that makes the division meaningless); throws Error
  /// saying what is wrong.
  void validate() const;
  bool operator==(const MlpPolicy&) const = default;
};

/// Reads a dstudio-mlp-policy-1 document. Throws Error starting with `where` (the file's name) and
/// saying what is wrong: another format, a missing or mistyped field, sizes that disagree, a
/// number that is not finite, an in_scale of 0.
MlpPolicy mlp_policy_from_json_text(std::string_view text, const std::string& where);

/// The DAPG expert policy shipped for the Adroit task `task` ("pen", or a dataset's name such as
/// "door-expert-v1"). Throws Error when the task has none (only pen, door, hammer and relocate do)
/// or when the shipped policy does not fit the task's observation and action sizes.
MlpPolicy shipped_dapg_policy(std::string_view task);

}  // namespace dstudio::behaviour
