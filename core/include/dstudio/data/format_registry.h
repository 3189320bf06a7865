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
  /// Whether `detect` opens the file with libhdf5, which crashes or hangs on some damaged files:
  /// when loading is isolated (LoadOptions::isolate), such a format is asked in the reader
  /// process, not here (with its plugin loaded there, for the first such plugin format).
  bool detect_reads_hdf5 = false;
  Origin origin;
};

/// Every format, the built-in ones first. `load_dataset` reads a path with the first format whose
/// `detect` claims it, asking the plugins' formats before the built-in ones, so a plugin can claim
/// files the built-in layouts would refuse.
Registry<DatasetFormatDefinition>& dataset_format_registry();

}  // namespace dstudio::data
