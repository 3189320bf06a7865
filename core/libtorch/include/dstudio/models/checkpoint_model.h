#pragma once
/// \file
/// Loading a checkpoint's weights into a model (needs LibTorch).

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "dstudio/models/checkpoint.h"
#include "dstudio/models/decision_model.h"

namespace torch::serialize {
class OutputArchive;
}

namespace dstudio::models {

/// The model of a checkpoint, in eval mode; fills `info` when given. Throws CheckpointError.
DecisionModel load_checkpoint_model(const std::filesystem::path& path,
                                    CheckpointInfo* info = nullptr);

/// A checkpoint read once: its description and its model (eval mode), for whoever needs the open
/// model (its inspection, its player), so that opening it does not parse the file again for each.
struct LoadedCheckpoint {
  std::filesystem::path path;
  CheckpointInfo info;
  DecisionModel model{nullptr};
};

// open_checkpoint and checkpoint_parse_count are declared in checkpoint.h (no LibTorch there).

/// The description a checkpoint holds (its "meta" record, JSON), which
/// checkpoint_info_from_description reads back; `origin` says where the weights came from.
std::string checkpoint_description(const CheckpointInfo& info, const std::string& origin);

/// Writes a checkpoint of weights and description only (no optimiser or random streams), e.g.
/// for imported models; `origin` says where the weights came from. It can be loaded and
/// evaluated, not resumed. Atomic; throws CheckpointError when the file cannot be written.
void save_weights_checkpoint(const std::filesystem::path& path, DecisionModel& model,
                             const CheckpointInfo& info, const std::string& origin);

/// Writes any LibTorch archive as the studio writes checkpoints: serialised in memory, sealed
/// (checkpoint_integrity.h), then written atomically and flushed to disk. Throws CheckpointError
/// naming `path` and the reason ("disk full") and leaves the previous file as it was.
void save_sealed_archive(torch::serialize::OutputArchive& archive,
                         const std::filesystem::path& path);

}  // namespace dstudio::models
