#pragma once
/// \file
/// Adroit expert datasets made the way D4RL made {pen,door,hammer,relocate}-expert
/// (scripts/generation/hand_dapg_policies.py), with the DAPG expert policies the studio ships
/// (mlp_policy.h):
///
/// - 5,000 episodes, each from the task's own reset, at most the task's horizon (pen 100, the
///   others 200); pen ends early when the pen drops, so its file is shorter;
/// - at every step the observation, infos/qpos, infos/qvel and the task's get_env_state() keys
///   (EnvironmentDefinition::recorded_state) are recorded before the step, with the policy's
///   Gaussian (infos/action_mean, infos/action_log_std);
/// - the action is a sample of the policy (mjrl's get_action(obs)[0]: the mean plus
///   exp(log_std) N(0, 1), not the mean the script's "# eval" comment suggests), clipped to
///   [-1, 1];
/// - a timeout is set at the horizon's last step, where the terminal is forced off.
///
/// Where the studio's file differs on purpose: relocate's obj_pos, target_pos and palm_pos hold
/// each step's values (D4RL's hold one row repeated, the views-not-copies bug, D4RL#196), and the
/// episodes are seeded, so the same arguments give the same bytes at any thread count.

#include <cstdint>
#include <string>

#include "dstudio/behaviour/generate.h"
#include "dstudio/behaviour/mlp_policy.h"
#include "dstudio/common/progress.h"

namespace dstudio::behaviour {

struct AdroitExpertConfig {
  std::string task;                 ///< pen, door, hammer, relocate (or "door-expert-v1")
  std::int64_t episodes = 5'000;    ///< D4RL's num_trajs
  bool sampled = true;              ///< the policy's sampled action (D4RL), or its mean
  bool action_distribution = true;  ///< record infos/action_mean and infos/action_log_std
  std::uint64_t seed = 0;
  int threads = 2;
};

/// Rolls the expert out and returns the dataset in D4RL's layout. Cancellable through `progress`.
GeneratedDataset generate_adroit_expert_dataset(const AdroitExpertConfig& config,
                                                const MlpPolicy& expert,
                                                const Progress& progress = {});

/// How an expert does on its task: per episode return, normalised score and success.
struct ExpertScore {
  int episodes = 0;
  double mean_return = 0.0, std_return = 0.0;
  double mean_score = 0.0;  ///< D4RL's normalised score of the mean return
  double score_ci95 = 0.0;  ///< half-width of the normal 95% interval of the mean score
  int successes = 0;        ///< episodes whose goal was achieved long enough (D4RL's rule)
};
/// Plays `expert` for `episodes` episodes of the task (sampled actions as D4RL, or the mean).
ExpertScore score_adroit_expert(const std::string& task, const MlpPolicy& expert, int episodes,
                                bool sampled, std::uint64_t seed = 0, int threads = 2,
                                const Progress& progress = {});

}  // namespace dstudio::behaviour
