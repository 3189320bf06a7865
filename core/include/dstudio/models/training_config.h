#pragma once
/// \file
/// A training run's settings (the papers' defaults) and what it reports: a step's progress and
/// the run's state. Plain data with their JSON; training itself is the models library's
/// (training.h).

#include <cstdint>
#include <string>

namespace dstudio::models {

/// The most steps a run may take (and the largest step count of any interval).
constexpr std::int64_t kMaxTrainingSteps = 1'000'000'000;

/// The largest seed, 2^63 - 1: a checkpoint stores its seed as a JSON integer that every reader
/// (the studio's, Python's) takes as a signed 64-bit number.
inline constexpr std::uint64_t kMaxSeed = 9'223'372'036'854'775'807ULL;
/// Throws UsageError "WHERE: a seed is a whole number in [0, 2^63 - 1], not SEED" for a seed above
/// kMaxSeed. Every seed is checked where it enters: options, grids, sweep folders, runs.
void check_seed(std::uint64_t seed, const std::string& where);

/// Optimisation and sampling settings, with the papers' defaults.
struct TrainingConfig {
  std::int64_t steps = 100'000;
  int batch_size = 64;
  double learning_rate = 1e-4;
  double weight_decay = 1e-4;
  double beta1 = 0.9, beta2 = 0.999;
  std::int64_t warmup_steps = 10'000;  ///< lr * min(1, (step + 1) / warmup)
  bool cosine_decay = false;           ///< after warmup, decay to 0 along a half cosine
  double grad_clip = 0.25;             ///< gradient-norm clip
  double rtg_scale = 1000.0;
  /// Added to every reward before returns-to-go are counted, in training and wherever the model
  /// acts (reward_shift.h): IQL and CORL train on AntMaze with -1, so every step not at the goal
  /// costs 1. Scores and successes stay the task's own.
  double reward_shift = 0.0;
  double pct_traj = 1.0;
  std::uint64_t seed = 0;
  int threads = 1;  ///< workers: parts of each batch on their own threads (train_step.h)
  std::int64_t log_every = 100;            ///< metrics rows
  std::int64_t checkpoint_every = 10'000;  ///< 0: only at the end
  std::int64_t eval_every = 0;             ///< 0: never call the evaluation hook
};
std::string to_json(const TrainingConfig& config);
/// Parses a training configuration (a JSON object; absent keys keep their defaults). Every key
/// must be known and every value of its type (whole numbers for counts) and in its range
/// (config_fields.h); throws UsageError naming the key and the range otherwise.
TrainingConfig training_from_json(const std::string& text);

/// The task's return-to-go scale (EnvironmentDefinition::rtg_scale: 1000 for locomotion, 1 for
/// AntMaze, as the papers scale) unless `training_json` gives rtg_scale itself or `env_id` names
/// no known task. Returns whether it changed `config`.
bool apply_task_rtg_scale(TrainingConfig& config, const std::string& env_id,
                          const std::string& training_json);

/// One progress report.
struct TrainingProgress {
  std::int64_t step = 0;  ///< steps done
  std::int64_t total = 0;
  double loss = 0.0;  ///< mean loss since the previous report
  double learning_rate = 0.0;
  double steps_per_second = 0.0;
  double eta_seconds = 0.0;
};

enum class TrainingState { Idle, Running, Paused, Finished, Cancelled, Failed };
const char* to_string(TrainingState state);

}  // namespace dstudio::models
