#pragma once
/// \file
/// Whether a dataset can be read through a checkpoint's model. Every analysis, `dstudio predict`,
/// the studio and decision-viewer ask it before a window of the dataset is built for the model,
/// wherever the two were chosen apart (`--dataset`, File ▸ Open): a state of another size would
/// otherwise be copied into a window of the model's size.

#include <string>

#include "dstudio/data/dataset.h"
#include "dstudio/models/checkpoint_info.h"

namespace dstudio::models {

/// Throws CheckpointError naming both files and both sizes when the dataset's states or actions
/// have another size than the checkpoint's model takes. Returns a warning naming both
/// environments when the dataset's environment is not the checkpoint's (walker2d and halfcheetah
/// share their sizes), and an empty string when they agree or either does not say.
std::string check_dataset_fits(const CheckpointInfo& info, const data::Dataset& dataset);

/// The same check from the sizes and the environment alone (what a window or a workspace knows
/// of a dataset without holding it): `dataset` names the data in messages.
std::string check_dataset_fits(const CheckpointInfo& info, const std::string& dataset,
                               std::int64_t state_dim, std::int64_t act_dim,
                               const std::string& env_id);

}  // namespace dstudio::models
