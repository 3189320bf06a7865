#pragma once
/// \file
/// A set of behaviour policies from one training run, as the dataset generator uses them: the
/// snapshots of a learning curve, which of them is the medium and which the expert policy, and
/// which stand for the learner's history up to the medium level (medium-replay).
///
/// Two trainers make them: SAC (`sac.h`), D4RL's own, whose stochastic tanh-Gaussian policies
/// sample their actions; and Augmented Random Search (`ars.h`), linear policies acting with a
/// fixed Gaussian action noise. Both ship in resources/policies (<env>-sac.json, <env>.json).

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "dstudio/behaviour/ars.h"
#include "dstudio/behaviour/gaussian_policy.h"
#include "dstudio/common/random.h"
#include "dstudio/env/environment.h"

namespace dstudio::behaviour {

enum class PolicyAlgorithm { Sac, Ars };
/// "sac" or "ars".
const char* to_string(PolicyAlgorithm algorithm);
/// Parses "sac" or "ars"; throws UsageError naming both.
PolicyAlgorithm parse_algorithm(const std::string& text);

/// One policy of a learning curve.
struct BehaviourSnapshot {
  std::int64_t env_steps = 0;       ///< environment steps of training when it was taken
  double deterministic_return = 0;  ///< mean return acting with the mean action
  double behaviour_return = 0;      ///< mean return acting as the behaviour policy (sampled)
  std::variant<GaussianPolicy, LinearPolicy> policy;
};

struct PolicySet {
  std::string env;
  PolicyAlgorithm algorithm = PolicyAlgorithm::Sac;
  /// Std of the Gaussian noise a linear (ARS) policy adds to its actions; unused by SAC, whose
  /// policies carry their own spread.
  double action_noise = 0.0;
  /// Uniformly random actions at the start of training (SAC's warm-up), which medium-replay
  /// reproduces before its first snapshot.
  std::int64_t random_steps = 0;
  std::vector<BehaviourSnapshot> snapshots;  ///< in training order
  int medium = -1;
  int expert = -1;
  /// Snapshots in training order that stand for the learner's history up to the medium policy,
  /// each for the environment steps since the one before it (medium-replay).
  std::vector<int> replay;
  std::string command;  ///< how the run was made

  /// The behaviour action of snapshot `index`: sampled from its distribution.
  void act(int index, std::span<const float> obs, std::span<float> action, Random& random) const;
  /// The deterministic action of snapshot `index`.
  void act_deterministic(int index, std::span<const float> obs, std::span<float> action) const;
  /// One line saying what snapshot `index` is.
  [[nodiscard]] std::string describe(int index) const;
  /// Checks indices and shapes; throws Error saying what is wrong.
  void validate() const;
};

/// The ARS run as a policy set whose linear policies act with `action_noise`.
PolicySet policy_set_from_ars(const ArsRun& run, double action_noise);

/// JSON text of a SAC policy set (policies in half precision) and back. `policy_set_from_text`
/// also reads an ARS run file, taking `ars_action_noise` as its behaviour noise.
std::string to_json(const PolicySet& set);
PolicySet policy_set_from_text(const std::string& text, double ars_action_noise);

/// policy_set_from_text of the file `path`; errors name the file.
PolicySet read_policy_set(const std::string& path, double ars_action_noise);

/// The policies shipped for `env` and `algorithm` (resources/policies). Throws std::runtime_error
/// when none ship.
PolicySet shipped_policy_set(const std::string& env, PolicyAlgorithm algorithm);

/// Mean return of snapshot `index` over `episodes` episodes seeded from `seed`, acting as the
/// behaviour policy (`sampled`) or with the mean action. Episodes run on up to `threads` threads;
/// the result does not depend on the thread count.
double evaluate_snapshot(const PolicySet& set, int index, int episodes, std::uint64_t seed,
                         bool sampled, int threads = 1);

/// The task a behaviour policy acts in: a registered environment, or the open plane in which the
/// goal-reaching ant learns ("ant-goal-reaching", then "ant-goal-sequence": env/antmaze.h).
/// Throws EnvError.
const env::EnvironmentDefinition& training_task(std::string_view name);

/// Per-episode returns of one policy, acting through `act` with the episode's own random stream.
std::vector<double> episode_returns(
    const std::string& env, int episodes, std::uint64_t seed, int threads,
    const std::function<void(std::span<const float>, std::span<float>, Random&)>& act);

}  // namespace dstudio::behaviour
