#pragma once
/// \file
/// Import of checkpoints that researchers already have into Decision Studio checkpoints. Free of
/// LibTorch; implemented in the models library.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "dstudio/models/checkpoint.h"

namespace dstudio::models {

/// What a CORL checkpoint does not say about itself. Unset values come from the description
/// `dstudio export --format corl-dt` writes beside the file (FILE.json: the constructor's
/// arguments, the state statistics, the reward scale and the environment), else CORL's defaults.
struct CorlImportOptions {
  std::optional<int> heads;         ///< attention heads; in_proj weights do not tell (CORL: 1)
  int seq_len = 0;                  ///< K; 0 reads it from the blocks' causal_mask (3K x 3K)
  std::optional<double> rtg_scale;  ///< returns-to-go are divided by this (CORL: 1000)
  std::string env_id;               ///< e.g. "hopper"; empty: the description's, if any
};

/// Maps a state_dict saved by PyTorch from CORL's single-file Decision Transformer
/// (algorithms/offline/dt.py: state_emb, blocks.N.attention.in_proj_weight, action_head.0, ...)
/// onto the studio's `dt` and writes it to `out` as a weights-only checkpoint. Accepts a plain
/// state_dict or CORL's checkpoint dict {"model_state", "state_mean", "state_std"}; without
/// statistics (in the file or its description) the mean is 0 and the std 1. A description beside
/// the file that disagrees with the file (another constructor, other statistics) or with an option
/// given is refused naming both values. Throws CheckpointError (or PyTorchFileError for an
/// unreadable file) naming what is missing or of the wrong shape. Returns the description written.
CheckpointInfo import_corl_dt(const std::filesystem::path& file, const std::filesystem::path& out,
                              const CorlImportOptions& options = {});

}  // namespace dstudio::models
