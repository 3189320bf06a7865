// Whether a dataset fits a checkpoint. See dataset_fit.h.

#include "dstudio/models/dataset_fit.h"

#include "dstudio/env/environment.h"

namespace dstudio::models {
namespace {

// The task an environment id names ("hopper-medium-v2" and "hopper" are hopper), or the id itself
// when it names none the studio knows.
std::string task_name(const std::string& env_id) {
  try {
    return env::task(env_id).name;
  } catch (const std::exception&) {
    return env_id;
  }
}

}  // namespace

std::string check_dataset_fits(const CheckpointInfo& info, const std::string& dataset,
                               std::int64_t state_dim, std::int64_t act_dim,
                               const std::string& env_id) {
  const auto& c = info.variant;
  const std::string model =
      "the model (" + c.variant + (info.env_id.empty() ? std::string() : ", " + info.env_id) + ")";
  if (state_dim != c.state_dim || act_dim != c.act_dim)
    throw CheckpointError(dataset + " does not fit " + info.path + ": its states have " +
                          std::to_string(state_dim) + " values and its actions " +
                          std::to_string(act_dim) + "; " + model + " takes " +
                          std::to_string(c.state_dim) + " and " + std::to_string(c.act_dim));
  if (info.env_id.empty() || env_id.empty() || task_name(info.env_id) == task_name(env_id))
    return {};
  return dataset + " is " + env_id + " data, but " + info.path + " was trained on " + info.env_id +
         ": the model reads states of another body";
}

std::string check_dataset_fits(const CheckpointInfo& info, const data::Dataset& dataset) {
  try {
    return check_dataset_fits(info, dataset.path, dataset.data.obs_dim, dataset.data.act_dim,
                              dataset.env_id);
  } catch (const CheckpointError& e) {
    // A dataset of another task under a shared name (Minari's D4RL/kitchen) says what it is.
    if (dataset.task_caveat.empty()) throw;
    throw CheckpointError(std::string(e.what()) + ". " + dataset.task_caveat);
  }
}

}  // namespace dstudio::models
