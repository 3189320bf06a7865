#pragma once
/// \file
/// The windows `dstudio predict` reads, checked against the model they are for before any of
/// them reaches it: shapes that fit the checkpoint, windows no longer than its context K, whole
/// timesteps inside its embedding, finite values, a 0/1 mask. No LibTorch.

#include <cstdint>
#include <map>
#include <string>

#include "dstudio/data/arrays_h5.h"
#include "dstudio/models/variant_config.h"

namespace dstudio::models {

/// The keys predict reads: states (B,K,S), actions (B,K,A), returns_to_go (B,K) or (B,K,1),
/// timesteps (B,K); mask (B,K) optional.
struct PredictWindows {
  std::int64_t batch = 0, steps = 0;  ///< B and K
  bool has_mask = false;
};

/// Checks `arrays` (as read from `file`) against `variant`. Throws data::DatasetError naming the
/// file, the key and the problem.
PredictWindows check_predict_arrays(const std::map<std::string, data::NdArray>& arrays,
                                    const VariantConfig& variant, const std::string& file);

}  // namespace dstudio::models
