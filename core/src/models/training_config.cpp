// A training run's settings and reports as JSON. See training_config.h.

#include "dstudio/models/training_config.h"

#include <cstdint>
#include <nlohmann/json.hpp>

#include "config_tables.h"
#include "dstudio/common/error.h"
#include "dstudio/env/environment.h"

namespace dstudio::models {

const JsonFields<TrainingConfig>& training_table() {
  using C = TrainingConfig;
  constexpr double kSteps = static_cast<double>(kMaxTrainingSteps);
  static const auto table = [&] {
    JsonFields<C> t;
    t.field("steps", &C::steps, {1, kSteps})
        .says("optimiser steps")
        .field("batch_size", &C::batch_size, {1, 65536})
        .says("windows in a batch")
        .field("learning_rate", &C::learning_rate, {0, 1, /*above=*/true})
        .says("peak learning rate of AdamW")
        .field("weight_decay", &C::weight_decay, {0, 10})
        .says("AdamW's decoupled weight decay")
        .field("beta1", &C::beta1, {0, 1, false, /*below=*/true})
        .says("AdamW's first-moment decay")
        .field("beta2", &C::beta2, {0, 1, false, /*below=*/true})
        .says("AdamW's second-moment decay")
        .field("warmup_steps", &C::warmup_steps, {0, kSteps})
        .says("lr x min(1, (step + 1) / warmup)")
        .field("cosine_decay", &C::cosine_decay)
        .says("after warmup, decay to 0 along a half cosine")
        .field("grad_clip", &C::grad_clip, {0, 1e6, /*above=*/true})
        .says("gradient-norm clip")
        .field("rtg_scale", &C::rtg_scale, {0, 1e9, /*above=*/true})
        .says("returns-to-go are divided by this")
        .field("reward_shift", &C::reward_shift, {-1e6, 1e6})
        .says(
            "added to every reward before returns-to-go are counted (IQL and CORL: -1 on AntMaze)")
        .field("pct_traj", &C::pct_traj, {0, 1, /*above=*/true})
        .says("fraction of the best trajectories sampled")
        .field("seed", &C::seed, {0, static_cast<double>(kMaxSeed)})
        .says("seeds the initial weights, the batches and dropout")
        .field("threads", &C::threads, {1, 64})
        .says("workers, each computing part of every batch on its own core")
        .field("log_every", &C::log_every, {1, kSteps})
        .says("steps per metrics row and per live point")
        .field("checkpoint_every", &C::checkpoint_every, {0, kSteps})
        .says("steps between checkpoints; 0: only at the end")
        .field("eval_every", &C::eval_every, {0, kSteps})
        .says("steps between evaluations (rollouts and attention entropy); 0: never")
        .refuse_unknown_keys()
        .errors_as<UsageError>();
    return t;
  }();
  return table;
}

const char* to_string(TrainingState state) {
  switch (state) {
    case TrainingState::Idle:
      return "idle";
    case TrainingState::Running:
      return "running";
    case TrainingState::Paused:
      return "paused";
    case TrainingState::Finished:
      return "finished";
    case TrainingState::Cancelled:
      return "cancelled";
    case TrainingState::Failed:
      return "failed";
  }
  return "?";
}

std::string to_json(const TrainingConfig& config) {
  return training_table().write(config).dump(2);
}

void check_seed(std::uint64_t seed, const std::string& where) {
  if (seed > kMaxSeed)
    throw UsageError(where + (where.empty() ? "" : ": ") +
                     "a seed is a whole number in [0, 2^63 - 1], not " + std::to_string(seed));
}

TrainingConfig training_from_json(const std::string& text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) throw UsageError("the training configuration is not valid JSON");
  return training_table().read(j, "training configuration");
}

bool apply_task_rtg_scale(TrainingConfig& config, const std::string& env_id,
                          const std::string& training_json) {
  if (!training_json.empty()) {
    const auto j = nlohmann::json::parse(training_json, nullptr, false);
    if (j.is_object() && j.contains("rtg_scale")) return false;
  }
  const auto task = env_id.empty() ? nullptr : env::find_task(env_id);
  if (!task || task->rtg_scale == config.rtg_scale) return false;
  config.rtg_scale = task->rtg_scale;
  return true;
}

}  // namespace dstudio::models
