#pragma once
/// \file
/// run.json: what produced a training run the studio started (its label, variant and training
/// configurations, dataset and evaluation episodes), written beside its metrics so that the folder
/// can be compared later. One field table writes and reads it. Free of LibTorch.

#include <optional>
#include <string>

#include "dstudio/models/training_config.h"
#include "dstudio/models/variant_config.h"

namespace dstudio::models {

struct RunDescription {
  std::string label;  ///< what groups it with others: the variant (hier: hier-<merger>-<mixer>)
  /// The configurations; none when the file lacks one or holds one that does not read (a file
  /// edited by hand still names its run).
  std::optional<VariantConfig> variant;
  std::optional<TrainingConfig> training;
  bool training_given = false;  ///< the file holds a "training" object, readable or not
  std::string dataset_path, dataset_fingerprint;
  int evaluation_episodes = 0;
};

/// The file's text (indented JSON and a newline).
std::string run_description_text(const RunDescription& run);

/// Reads run.json's text; `where` names it in messages. Throws Error for a file without a label
/// (or not JSON); a configuration that does not read is left out, not refused.
RunDescription read_run_description(const std::string& text, const std::string& where);

}  // namespace dstudio::models
