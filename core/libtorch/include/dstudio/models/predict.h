#pragma once
/// \file
/// Predictions of a checkpoint on windows from a file: what `dstudio predict` runs, with
/// interventions inside the forward pass (interventions.h) and the action lens when asked. Free of
/// LibTorch; implemented in the models library.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "dstudio/common/progress.h"

namespace dstudio::models {

struct PredictOptions {
  /// Divide states by the checkpoint's mean/std and returns-to-go by its rtg scale, as in
  /// training. Off: the inputs reach the network exactly as given.
  bool normalize = true;
  int threads = 1;
  /// --intervene specs (interventions.h), applied together.
  std::vector<std::string> interventions;
  /// --patch-from: a second input of the same shape (read as `input` is), and the --patch specs
  /// that take their values from it.
  std::filesystem::path patch_from;
  std::vector<std::string> patches;
  /// Also write `lens` (B, K, layers, A): the action each block's stream reads as.
  bool action_lens = false;
  /// Where mean and resample ablations draw their windows; empty: the checkpoint's own dataset.
  std::filesystem::path dataset;
  /// How many dataset windows a mean is taken over, and the seed that draws resampled windows.
  int mean_windows = 64;
  std::uint64_t seed = 0;
};

struct PredictSummary {
  std::int64_t batch = 0, steps = 0, act_dim = 0;
  int layers = 0;  ///< of the lens, when written
  /// What a user should know that did not stop the work: a --dataset of another environment than
  /// the checkpoint's.
  std::vector<std::string> warnings;
};

/// Reads `input` (HDF5: states (B,K,S), actions (B,K,A), returns_to_go (B,K) or (B,K,1),
/// timesteps (B,K), optionally mask (B,K) with 1 for real steps), runs the checkpoint's model with
/// the options' interventions and writes `output` with actions (B,K,A), the prediction at every
/// position, and `lens` when asked. Throws UsageError for a spec that is malformed or does not
/// fit the model (naming what is valid), data::DatasetError or CheckpointError naming the file,
/// key and problem (shapes that do not fit the checkpoint, timesteps beyond its embedding, a mask
/// that is not 0/1); writes nothing then.
///
/// The windows run kPredictPart at a time, reporting to `progress` after each part (and throwing
/// Cancelled when it is cancelled; nothing is written then): the same numbers as all at once.
PredictSummary predict_file(const std::filesystem::path& checkpoint,
                            const std::filesystem::path& input, const std::filesystem::path& output,
                            const PredictOptions& options = {}, const Progress& progress = {});

/// How many windows predict_file runs through the model at a time.
inline constexpr std::int64_t kPredictPart = 1024;

}  // namespace dstudio::models
