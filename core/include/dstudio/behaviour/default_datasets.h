#pragma once
/// \file
/// The studio's default datasets: made on first use from the shipped behaviour policies and
/// cached in the user's cache folder ($XDG_CACHE_HOME or ~/.cache, under decision-studio/), so
/// nothing large is committed or downloaded.

#include <cstdint>
#include <filesystem>
#include <string>

#include "dstudio/behaviour/generate.h"
#include "dstudio/common/progress.h"

namespace dstudio::behaviour {

/// Size of the default datasets: large enough to train the papers' models, small enough to be
/// made in seconds.
inline constexpr std::int64_t kDefaultTransitions = 100'000;

/// The cache path of a default dataset. The name carries a hash of the shipped policies and of
/// the generation settings, so new policies or settings never reuse a stale file.
std::filesystem::path default_dataset_path(const std::string& env = "hopper", DatasetKind kind = DatasetKind::Medium);

/// Generates the default dataset if it is not cached yet and returns its path.
std::filesystem::path ensure_default_dataset(const std::string& env = "hopper", DatasetKind kind = DatasetKind::Medium,
                                             const Progress& progress = {});

/// The user's cache folder for the studio.
std::filesystem::path cache_folder();

}  // namespace dstudio::behaviour
