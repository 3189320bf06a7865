#pragma once
/// \file
/// Whether a dataset can be evaluated or replayed in an environment.

#include "dstudio/data/dataset.h"
#include "dstudio/env/environment.h"

namespace dstudio::env {

/// Throws EnvError naming every dimension that differs (observations, actions, and qpos/qvel when
/// the dataset carries them) between `dataset` and `spec`.
void check_dataset_matches(const data::Dataset& dataset, const TaskSpec& spec);

}  // namespace dstudio::env
