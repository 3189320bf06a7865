#pragma once
/// \file
/// Loading a checkpoint's weights into a model (needs LibTorch).

#include <filesystem>

#include "dstudio/models/checkpoint.h"
#include "dstudio/models/decision_model.h"

namespace dstudio::models {

/// The model of a checkpoint, in eval mode; fills `info` when given. Throws CheckpointError.
DecisionModel load_checkpoint_model(const std::filesystem::path& path, CheckpointInfo* info = nullptr);

}  // namespace dstudio::models
