#pragma once
/// \file
/// Checkpoints that say what produced them (checkpoint_info.h): one file holds that description
/// next to the weights, the optimiser state and the random streams; files are written atomically.
/// The models library reads and writes them; this header needs no LibTorch, loading the weights
/// does (models/checkpoint_model.h).

#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dstudio/common/error.h"
#include "dstudio/data/dataset.h"
#include "dstudio/models/checkpoint_info.h"

namespace dstudio::models {

/// Reads a checkpoint's description. Throws CheckpointError naming the file for a missing,
/// truncated or foreign file.
CheckpointInfo read_checkpoint_info(const std::filesystem::path& path);

/// A checkpoint read once, its description and model (checkpoint_model.h defines it).
struct LoadedCheckpoint;
/// Reads `path` once; throws CheckpointError as load_checkpoint_model does. The inspection and
/// the player of an open model share it (inspect_on_dataset, EpisodePlayer).
std::shared_ptr<const LoadedCheckpoint> open_checkpoint(const std::filesystem::path& path);
/// What a checkpoint read once describes, where LibTorch's types are not at hand.
const CheckpointInfo& info_of(const LoadedCheckpoint& checkpoint);
/// How many times this process has parsed a checkpoint file (what tests count).
std::uint64_t checkpoint_parse_count();

/// Number of learned parameters of the model in a checkpoint (loads its weights; needs the models
/// library). Throws CheckpointError.
std::int64_t checkpoint_parameter_count(const std::filesystem::path& path);

/// Writes a copy of `in` with the weights and the description only, without optimiser state and
/// random streams (about a third of the size): for shipping and sharing. The copy says what it
/// was made from. Throws CheckpointError.
void write_weights_only(const std::filesystem::path& in, const std::filesystem::path& out);

/// Throws CheckpointError listing every mismatch (state and action dims, environment) between a
/// checkpoint and a dataset. A different fingerprint alone is allowed (evaluating on other data).
void check_compatible(const CheckpointInfo& info, const data::Dataset& dataset);

}  // namespace dstudio::models
