#pragma once
/// \file
/// Rolling a policy out in its environment: many episodes in lockstep, one batched forward pass
/// per step, for a list of target returns. Returns per-episode traces and per-target summaries
/// with D4RL's normalised score. What every analysis that acts in the environment builds on
/// (modality zeroing, target-return sweeps, entropy versus reward). Free of LibTorch.
///
/// The policy follows the Decision Transformer's evaluation: the window holds the last K steps
/// (left-padded with mask 0 at the start of an episode); states are normalised with the
/// checkpoint's mean and std; the return-to-go starts at the target divided by the rtg scale and
/// drops by each reward (also scaled); the action slot of the current step is 0.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "dstudio/common/progress.h"
#include "dstudio/data/dataset.h"
#include "dstudio/models/checkpoint.h"
#include "dstudio/models/training.h"
#include "dstudio/models/variant_config.h"

namespace dstudio::models {

class DecisionModelImpl;

struct RolloutConfig {
  std::vector<double> targets;  ///< initial returns, in the environment's units; empty: the task's defaults
  int episodes = 10;            ///< per target
  std::uint64_t seed = 0;       ///< episode e resets with seed + e, for every target and zeroing alike
  ModalityZeroing zeroing = ModalityZeroing::None;
  int max_steps = 0;            ///< 0: the task's limit (1000)
  bool traces = true;           ///< keep states, actions, rewards and returns-to-go of every step
  bool entropy = false;         ///< the first layer's attention entropy at every step (a full pass per step)
  std::vector<int> inspect_steps;  ///< steps whose mixing matrices (every layer) are kept
  int threads = 1;              ///< parts of the batch computed on their own cores
  std::string env_id;           ///< empty: the checkpoint's environment
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
  bool terminated = false;  ///< left the healthy set (else it ran to the time limit)
  std::vector<float> states;          ///< length x S, as observed (not normalised)
  std::vector<float> actions;         ///< length x A
  std::vector<double> rewards;        ///< length
  std::vector<double> returns_to_go;  ///< length: what the policy was conditioned on, unscaled
  std::vector<double> entropy;        ///< length, when asked: first layer, mean over heads and real queries
  std::vector<StepInspection> inspections;
};

struct TargetSummary {
  double target = 0.0;
  int episodes = 0;
  double mean_return = 0.0, std_return = 0.0;
  double mean_score = 0.0, std_score = 0.0;
};

struct RolloutResult {
  std::string env_id;
  std::vector<EpisodeTrace> episodes;  ///< target-major: episodes of targets[0], then targets[1], ...
  std::vector<TargetSummary> summary;  ///< one per target
  double seconds = 0.0;
  std::int64_t env_steps = 0;
};

/// Rolls out the checkpoint's model. Throws CheckpointError, env::EnvError (unknown environment,
/// dims that do not fit) or Cancelled.
RolloutResult rollout(const std::filesystem::path& checkpoint, const RolloutConfig& config, const Progress& progress = {});

/// The same with a model in memory (e.g. during training) and the description of its data.
RolloutResult rollout(DecisionModelImpl& model, const CheckpointInfo& info, const RolloutConfig& config,
                      const Progress& progress = {});

/// The DC paper's modality-zeroing ablation (fig. 5): at one target, `episodes` rollouts for each
/// of `seeds` evaluation seeds, once with each zeroing of kModalityZeroings.
struct AblationConfig {
  double target = 0.0;     ///< 0: the task's first default target
  int episodes = 10;       ///< per seed
  int seeds = 1;           ///< seed s resets its episodes with seed + 1000 s + e
  std::uint64_t seed = 0;
  int threads = 1;
  int max_steps = 0;       ///< 0: the task's limit
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

/// Runs the ablation on the checkpoint's model (loaded once). Progress runs over all rollouts;
/// throws what rollout() throws.
AblationResult zeroing_ablation(const std::filesystem::path& checkpoint, const AblationConfig& config, const Progress& progress = {});

/// The trainer's periodic evaluation: `episodes` rollouts at the task's first default target
/// (normalised with the dataset's statistics) and the first layer's attention entropy on
/// `windows` fixed windows of the dataset. Reports eval_score, eval_score_std, eval_return and
/// entropy_layer1 (mean over heads and real queries), which the trainer writes to metrics.jsonl:
/// entropy over the course of training. The dataset must outlive the hook.
EvaluationHook evaluation_hook(const data::Dataset& dataset, double rtg_scale, int episodes = 5, int windows = 16);

}  // namespace dstudio::models
