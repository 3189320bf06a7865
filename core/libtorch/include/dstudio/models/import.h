#pragma once
/// \file
/// Import of checkpoints that researchers already have into Decision Studio checkpoints. Free of
/// LibTorch; implemented in the models library.

#include <filesystem>
#include <string>
#include <vector>

#include "dstudio/models/checkpoint.h"

namespace dstudio::models {

/// What a CORL checkpoint does not say about itself.
struct CorlImportOptions {
  int heads = 1;            ///< attention heads (CORL's default 1); in_proj weights do not tell
  int seq_len = 0;          ///< K; 0 reads it from the blocks' causal_mask (3K x 3K)
  double rtg_scale = 1000;  ///< returns-to-go are divided by this (CORL's reward_scale 0.001)
  std::string env_id;       ///< e.g. "hopper"; empty if unknown
};

/// Maps a state_dict saved by PyTorch from CORL's single-file Decision Transformer
/// (algorithms/offline/dt.py: state_emb, blocks.N.attention.in_proj_weight, action_head.0, ...)
/// onto the studio's `dt` and writes it to `out` as a weights-only checkpoint. Accepts a plain
/// state_dict or CORL's checkpoint dict {"model_state", "state_mean", "state_std"}; without
/// statistics the mean is 0 and the std 1. Throws CheckpointError (or PyTorchFileError for an
/// unreadable file) naming what is missing or of the wrong shape. Returns the description written.
CheckpointInfo import_corl_dt(const std::filesystem::path& file, const std::filesystem::path& out,
                              const CorlImportOptions& options = {});

}  // namespace dstudio::models
