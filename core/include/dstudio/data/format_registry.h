#pragma once
/// \file
/// The dataset formats `load_dataset` reads: D4RL and Minari built in, more from plugins. A format
/// says whether a path is one of its files (cheaply, without reading it all) and loads it into a
/// Dataset's transitions, episodes and metadata; `load_dataset` then adds what every dataset has
/// (statistics, warnings, fingerprint). No Qt, no LibTorch.

#include <filesystem>
#include <functional>
#include <string>

#include "dstudio/common/progress.h"
#include "dstudio/common/registry.h"
#include "dstudio/data/dataset.h"
#include "dstudio/data/dataset_io.h"

namespace dstudio::data {

/// A dataset format.
struct DatasetFormatDefinition {
  std::string name;         ///< "d4rl", "minari", or a plugin's
  std::string description;  ///< one line
  /// True when `path` is a file (or folder) of this format. Must not throw for foreign files.
  std::function<bool(const std::filesystem::path& path)> detect;
  /// Loads `path`: fills path, data (observations, actions, rewards, terminals, timeouts),
  /// episodes, arrays, metadata and env_id. Throws DatasetError naming the file and what is wrong,
  /// Cancelled when asked to stop (polls `progress`).
  std::function<Dataset(const std::filesystem::path& path, const LoadOptions& options,
                        const Progress& progress)>
      load;
  Origin origin;
};

/// Every format, the built-in ones first. `load_dataset` asks the plugins' formats before them,
/// so a plugin can claim files the built-in layouts would refuse.
Registry<DatasetFormatDefinition>& dataset_format_registry();

}  // namespace dstudio::data
