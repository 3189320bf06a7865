#pragma once
/// \file
/// What a rollout is asked for and what it returns: per-episode traces and per-target summaries
/// with D4RL's normalised score, and the modality-zeroing ablation's settings and outcome. Plain
/// data, drawn by the views; rolling out is the models library's (evaluation.h).

#include <cstdint>
#include <string>
#include <vector>

#include "dstudio/analysis/aggregate.h"
#include "dstudio/models/variant_config.h"

namespace dstudio::models {

struct RolloutConfig {
  std::vector<double>
      targets;        ///< initial returns, in the environment's units; empty: the task's defaults
  int episodes = 10;  ///< per target
  std::uint64_t seed = 0;  ///< episode e resets with seed + e, for every target and zeroing alike
  ModalityZeroing zeroing = ModalityZeroing::None;
  int max_steps = 0;   ///< 0: the task's limit (1000)
  bool traces = true;  ///< keep states, actions, rewards and returns-to-go of every step
  bool entropy =
      false;  ///< the first layer's attention entropy at every step (a full pass per step)
  std::vector<int> inspect_steps;  ///< steps whose mixing matrices (every layer) are kept
  int threads = 1;                 ///< parts of the batch computed on their own cores
  std::string env_id;              ///< empty: the checkpoint's environment
};

/// The mixing matrices of one step's window (the inspection of the full pass).
struct StepInspection {
  int step = 0;
  int tokens = 0;                          ///< T
  std::vector<char> token_types;           ///< 'R', 's', 'a' or 't' (merged step)
  std::vector<int> token_steps;            ///< the episode step of each token; -1 for padding
  std::vector<std::string> mixers;         ///< per layer
  std::vector<int> heads;                  ///< per layer
  std::vector<std::vector<float>> mixing;  ///< per layer: heads x T x T, rows are queries
};

struct EpisodeTrace {
  double target = 0.0;
  std::uint64_t seed = 0;
  double episode_return = 0.0;
  double score = 0.0;  ///< D4RL's normalised score
  int length = 0;
  bool terminated = false;            ///< left the healthy set (else it ran to the time limit)
  bool success = false;               ///< reached the task's goal (goal-reaching tasks: AntMaze)
  std::vector<float> states;          ///< length x S, as observed (not normalised)
  std::vector<float> actions;         ///< length x A
  std::vector<double> rewards;        ///< length
  std::vector<double> returns_to_go;  ///< length: what the policy was conditioned on, unscaled
  std::vector<double>
      entropy;  ///< length, when asked: first layer, mean over heads and real queries
  std::vector<StepInspection> inspections;
};

struct TargetSummary {
  double target = 0.0;
  int episodes = 0;
  double mean_return = 0.0, std_return = 0.0;
  double mean_score = 0.0, std_score = 0.0;
  /// The interquartile mean of the episodes' normalised scores with its 95% bootstrap interval
  /// (rliable, aggregate.h; 2000 resamples, seed 0).
  analysis::Interval iqm_score;
  /// Tasks that report success (EnvironmentDefinition::reports_success): episodes that succeeded.
  int successes = 0;
  [[nodiscard]] double success_rate() const { return episodes ? double(successes) / episodes : 0; }
};

struct RolloutResult {
  std::string env_id;
  /// The task reports success (EnvironmentDefinition::reports_success): summaries' success rates
  /// mean something.
  bool reports_success = false;
  /// The model's reward shift (TrainingConfig::reward_shift): targets and returns-to-go are in its
  /// units; returns and scores are the task's.
  double reward_shift = 0.0;
  std::vector<EpisodeTrace>
      episodes;  ///< target-major: episodes of targets[0], then targets[1], ...
  std::vector<TargetSummary> summary;  ///< one per target
  double seconds = 0.0;
  std::int64_t env_steps = 0;
};

/// The DC paper's modality-zeroing ablation (fig. 5): at one target, `episodes` rollouts for each
/// of `seeds` evaluation seeds, once with each zeroing of kModalityZeroings.
struct AblationConfig {
  double target = 0.0;  ///< 0: the task's first default target
  int episodes = 10;    ///< per seed
  int seeds = 1;        ///< seed s resets its episodes with seed + 1000 s + e
  std::uint64_t seed = 0;
  int threads = 1;
  int max_steps = 0;  ///< 0: the task's limit
};

/// One zeroing's outcome.
struct ZeroingResult {
  ModalityZeroing zeroing = ModalityZeroing::None;
  TargetSummary summary;               ///< over every episode of every seed
  double std_over_seeds = 0.0;         ///< spread of the seeds' mean scores
  std::vector<EpisodeTrace> episodes;  ///< seed-major, without per-step traces
};

struct AblationResult {
  double target = 0.0;
  std::vector<ZeroingResult> zeroings;  ///< in the order of kModalityZeroings
};

}  // namespace dstudio::models
