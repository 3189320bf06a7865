#pragma once
/// \file
/// Checkpoints that say what produced them. One file holds the variant and training
/// configurations, the dataset fingerprint, state mean/std, the rtg scale, the environment id,
/// the step, the optimiser state, the random streams, recent metrics and software versions,
/// next to the weights. Files are written atomically. This header needs no LibTorch; loading the
/// weights does (models/checkpoint_model.h).

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "dstudio/common/error.h"
#include "dstudio/data/dataset.h"
#include "dstudio/models/training.h"
#include "dstudio/models/variant_config.h"

namespace dstudio::models {

/// A checkpoint that cannot be read, or does not fit what it is used with.
class CheckpointError : public Error {
 public:
  using Error::Error;
};

/// Everything a checkpoint says about itself.
struct CheckpointInfo {
  std::string path;
  VariantConfig variant;
  TrainingConfig training;
  std::string dataset_path;
  std::string dataset_fingerprint;
  std::string env_id;
  std::vector<float> state_mean, state_std;
  double rtg_scale = 1000.0;
  std::int64_t step = 0;
  std::string metrics;   ///< JSON object: the last logged metrics
  std::string software;  ///< versions of the studio, LibTorch and MuJoCo
};

/// One line of a checkpoint's description, grouped by section ("Model", "Data", "Training",
/// "Software").
struct CheckpointSummaryRow {
  std::string section, field, value;
};
/// What a checkpoint says about itself, as rows for people: the studio's workspace shows them, as
/// `dstudio checkpoint info` prints the same facts.
std::vector<CheckpointSummaryRow> summarize(const CheckpointInfo& info);

/// Reads a checkpoint's description. Throws CheckpointError naming the file for a missing,
/// truncated or foreign file.
CheckpointInfo read_checkpoint_info(const std::filesystem::path& path);

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
