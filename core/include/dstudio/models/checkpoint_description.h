#pragma once
/// \file
/// The description a checkpoint holds (its "meta" record): one field table writes it and reads it
/// back. A training checkpoint also keeps the trainer's random streams there, so that a resumed run
/// continues the one that stopped; a checkpoint of weights from elsewhere (an export, an import)
/// says where they came from instead. Free of LibTorch; included only where descriptions are
/// written or a run is resumed.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dstudio/common/random.h"
#include "dstudio/models/checkpoint_info.h"

namespace dstudio::models {

/// One counter-based random stream (a dropout thread's): its key and how far it has gone.
struct RandomStreamState {
  std::uint64_t key = 0, counter = 0;
  bool operator==(const RandomStreamState&) const = default;
};

/// What a training checkpoint keeps beside the weights to resume exactly.
struct TrainerState {
  Random::State sampler;  ///< the window sampler's normal stream
  /// One stream per dropout thread; none in checkpoints of versions before they were kept.
  std::optional<std::vector<RandomStreamState>> dropout_streams;
};

/// The description of `info` as a checkpoint holds it (compact JSON, keys in a fixed order): with
/// `trainer`, a training checkpoint's; without, one of weights whose `origin` it names.
/// `info.software` is written as given.
std::string checkpoint_description_text(const CheckpointInfo& info,
                                        const std::optional<TrainerState>& trainer,
                                        const std::string& origin);

/// What a description says beyond `CheckpointInfo`: the trainer's state (none for weights only)
/// and where weights from elsewhere came from.
struct DescriptionExtras {
  std::optional<TrainerState> trainer;
  std::string origin;
};

/// Reads those from a description that `checkpoint_info_from_description` accepted. Throws
/// CheckpointError starting with `where` for a wrong value.
DescriptionExtras description_extras(const std::string& where, const std::string& json_text);

}  // namespace dstudio::models
