#pragma once
/// \file
/// What a checkpoint says about itself: the variant and training configurations, the dataset
/// fingerprint, state mean/std, the rtg scale, the environment id, the step, recent metrics and
/// software versions; and those facts as rows for people. Reading and writing checkpoints is the
/// models library's (checkpoint.h).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "dstudio/common/error.h"
#include "dstudio/models/training_config.h"
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

/// Parses the description a checkpoint holds (its "meta" record, JSON) and checks it: the
/// configurations' ranges, one mean and one positive standard deviation per state dimension, a
/// positive rtg scale, a step that is not negative. Throws CheckpointError starting with `where`.
CheckpointInfo checkpoint_info_from_description(const std::string& where,
                                                const std::string& json_text);

/// A checkpoint's description read without its weights: the zip directory at the file's end, then
/// the one small record that holds the description, checked against its CRC-32; nothing else of
/// the file is read or verified. For listings of many runs; whatever uses the weights reads the
/// file whole and verifies it (checkpoint.h). Empty when the file is not laid out as the studio
/// and LibTorch lay out checkpoints; throws CheckpointError when it cannot be opened or its
/// description is wrong.
std::optional<CheckpointInfo> read_checkpoint_header(const std::filesystem::path& path);

/// What a checkpoint is called in captions, legends, titles, CSV columns and exported file names:
/// its file's stem; for a run's checkpoint.pt its run folder's name, and for checkpoint-<step>.pt
/// the folder's name and the step ("dt-seed0-20260101-120000 step 5000").
std::string checkpoint_label(const std::filesystem::path& path);

/// One line of a checkpoint's description, grouped by section ("Model", "Data", "Training",
/// "Software").
struct CheckpointSummaryRow {
  std::string section, field, value;
};
/// What a checkpoint says about itself, as rows for people: the studio's workspace shows them, as
/// `dstudio checkpoint info` prints the same facts.
std::vector<CheckpointSummaryRow> summarize(const CheckpointInfo& info);

}  // namespace dstudio::models
