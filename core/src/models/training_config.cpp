// A training run's settings and reports as JSON. See training_config.h.

#include "dstudio/models/training_config.h"

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "dstudio/common/error.h"
#include "dstudio/env/environment.h"
#include "dstudio/models/config_fields.h"

namespace dstudio::models {
namespace {
using nlohmann::ordered_json;

ordered_json training_json(const TrainingConfig& c) {
  return {{"steps", c.steps},
          {"batch_size", c.batch_size},
          {"learning_rate", c.learning_rate},
          {"weight_decay", c.weight_decay},
          {"beta1", c.beta1},
          {"beta2", c.beta2},
          {"warmup_steps", c.warmup_steps},
          {"cosine_decay", c.cosine_decay},
          {"grad_clip", c.grad_clip},
          {"rtg_scale", c.rtg_scale},
          {"reward_shift", c.reward_shift},
          {"pct_traj", c.pct_traj},
          {"seed", c.seed},
          {"threads", c.threads},
          {"log_every", c.log_every},
          {"checkpoint_every", c.checkpoint_every},
          {"eval_every", c.eval_every}};
}

}  // namespace

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
  return training_json(config).dump(2);
}

void check_seed(std::uint64_t seed, const std::string& where) {
  if (seed > kMaxSeed)
    throw UsageError(where + (where.empty() ? "" : ": ") +
                     "a seed is a whole number in [0, 2^63 - 1], not " + std::to_string(seed));
}

TrainingConfig training_from_json(const std::string& text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw UsageError("the training configuration is not a JSON object");
  TrainingConfig c;
  const auto known = training_json(c);
  for (const auto& [key, value] : j.items()) {
    if (!known.contains(key)) throw UsageError("unknown training key '" + key + "'");
    const auto& expected = known[key];
    if (expected.is_boolean()) {
      if (!value.is_boolean())
        throw UsageError("training key '" + key + "' takes true or false, not " + value.dump());
      continue;
    }
    const ConfigField* field = config_field(key);
    const bool whole = expected.is_number_integer() || expected.is_number_unsigned();
    // Integers are checked as written: nothing wraps (-1 as a seed) or truncates (2.5 steps).
    const bool integral = value.is_number_integer() || value.is_number_unsigned();
    if (!value.is_number() ||
        (whole && !integral &&
         !(value.is_number_float() && std::floor(value.get<double>()) == value.get<double>())))
      throw UsageError("training key '" + key + "' takes " +
                       (whole ? "a whole number" : "a number") + " in " + range_text(*field) +
                       ", not " + value.dump());
    const bool negative = value.is_number_integer() && value.get<std::int64_t>() < 0;
    const double v = value.is_number_unsigned() ? static_cast<double>(value.get<std::uint64_t>())
                                                : value.get<double>();
    if (!std::isfinite(v) ||
        !in_range(*field, negative ? static_cast<double>(value.get<std::int64_t>()) : v) ||
        (value.is_number_unsigned() &&
         value.get<std::uint64_t>() > static_cast<std::uint64_t>(field->maximum)))
      throw UsageError("training key '" + key + "' must be in " + range_text(*field) + ", not " +
                       value.dump());
  }
  try {
    c.steps = j.value("steps", c.steps);
    c.batch_size = j.value("batch_size", c.batch_size);
    c.learning_rate = j.value("learning_rate", c.learning_rate);
    c.weight_decay = j.value("weight_decay", c.weight_decay);
    c.beta1 = j.value("beta1", c.beta1);
    c.beta2 = j.value("beta2", c.beta2);
    c.warmup_steps = j.value("warmup_steps", c.warmup_steps);
    c.cosine_decay = j.value("cosine_decay", c.cosine_decay);
    c.grad_clip = j.value("grad_clip", c.grad_clip);
    c.rtg_scale = j.value("rtg_scale", c.rtg_scale);
    c.reward_shift = j.value("reward_shift", c.reward_shift);
    c.pct_traj = j.value("pct_traj", c.pct_traj);
    c.seed = j.value("seed", c.seed);
    c.threads = j.value("threads", c.threads);
    c.log_every = j.value("log_every", c.log_every);
    c.checkpoint_every = j.value("checkpoint_every", c.checkpoint_every);
    c.eval_every = j.value("eval_every", c.eval_every);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(std::string("a training key has the wrong type: ") + e.what());
  }
  return c;
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
