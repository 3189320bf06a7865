#pragma once
/// \file
/// Predictions of a checkpoint on windows from a file: what `dstudio predict` runs. Free of
/// LibTorch; implemented in the models library.

#include <cstdint>
#include <filesystem>

namespace dstudio::models {

struct PredictOptions {
  /// Divide states by the checkpoint's mean/std and returns-to-go by its rtg scale, as in
  /// training. Off: the inputs reach the network exactly as given.
  bool normalize = true;
  int threads = 1;
};

struct PredictSummary {
  std::int64_t batch = 0, steps = 0, act_dim = 0;
};

/// Reads `input` (HDF5: states (B,K,S), actions (B,K,A), returns_to_go (B,K) or (B,K,1),
/// timesteps (B,K), optionally mask (B,K) with 1 for real steps), runs the checkpoint's model and
/// writes `output` with actions (B,K,A): the prediction at every position. Throws
/// data::DatasetError or CheckpointError naming the file, key and problem (shapes that do not
/// fit the checkpoint, timesteps beyond its embedding, a mask that is not 0/1); writes nothing
/// then.
PredictSummary predict_file(const std::filesystem::path& checkpoint,
                            const std::filesystem::path& input, const std::filesystem::path& output,
                            const PredictOptions& options = {});

}  // namespace dstudio::models
