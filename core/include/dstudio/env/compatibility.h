#pragma once
/// \file
/// Whether a dataset can be evaluated or replayed in an environment, and the partially observed
/// view of a dataset.

#include <map>
#include <string>

#include "dstudio/data/dataset.h"
#include "dstudio/env/environment.h"

namespace dstudio::env {

/// Throws EnvError naming every dimension that differs (observations, actions, and qpos/qvel when
/// the dataset carries them) between `dataset` and `spec`.
void check_dataset_matches(const data::Dataset& dataset, const EnvironmentDefinition& spec);

/// A dataset as its partially observed task sees it (EnvironmentDefinition::positions_only).
struct PartialView {
  const EnvironmentDefinition* task = nullptr;  ///< the "-po" task
  data::TransitionArrays data;  ///< observations and next observations cut to the positions
  std::map<std::string, std::string> metadata;  ///< the dataset's, with env set to the "-po" task
};

/// `dataset` with the velocities taken out of every observation: the positions qpos[1:] stay
/// (the first nq - 1 columns of a D4RL observation), actions, rewards, ends and the simulator
/// states unchanged. Throws EnvError when the dataset names no task or does not fit it, and
/// UsageError when it is partially observed already.
PartialView hide_velocities(const data::Dataset& dataset);

}  // namespace dstudio::env
