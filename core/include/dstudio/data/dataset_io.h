#pragma once
/// \file
/// Reading D4RL and Minari HDF5 files, and writing the D4RL layout.
///
/// The loader accepts what researchers have on disk (../docs/datasets.md lists every quirk):
/// float32 or float64 arrays, flags shaped (N) or (N, 1) and stored as bool, integers or floats,
/// gzip-compressed or not, with or without `timeouts`, `infos/` and `metadata/`; and Minari's
/// one-group-per-episode layout. A file it cannot use raises `DatasetError`, which names the file,
/// the key and what is wrong; nothing is half-loaded and nothing is allocated for absurd sizes.

#include <cstdint>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>

#include "dstudio/common/error.h"
#include "dstudio/common/progress.h"
#include "dstudio/data/dataset.h"

namespace dstudio::data {

/// Why a dataset could not be read or written. `what()` is a complete sentence for the user:
/// "<file>: '<key>': <problem>".
class DatasetError : public Error {
 public:
  DatasetError(std::string file, std::string key, const std::string& problem);
  /// The file concerned.
  [[nodiscard]] const std::string& file() const { return file_; }
  /// The HDF5 key concerned ("" when the problem is the file as a whole).
  [[nodiscard]] const std::string& key() const { return key_; }
  /// What is wrong, without the file and the key.
  [[nodiscard]] const std::string& problem() const { return problem_; }

 private:
  std::string file_;
  std::string key_;
  std::string problem_;
};

/// Options of `load_dataset`.
struct LoadOptions {
  /// Also load `next_observations` (D4RL only; the sequence models do not need them).
  bool next_observations = false;
  /// Also load `infos/qpos`, `infos/qvel` and `infos/goal` when present (the viewer replays
  /// episodes from them; AntMaze files hold the goal each episode was collected towards).
  bool infos = true;
  /// Refuse files whose arrays would need more memory than this, before allocating anything.
  /// 0 means half of the machine's physical memory.
  std::int64_t max_bytes = 0;
  /// D4RL files without `timeouts` are cut into episodes of at most this many steps.
  std::int64_t max_episode_steps = 1000;
  /// Read the optional metadata (D4RL's `metadata/` group, Minari's root attributes). What of it
  /// cannot be read costs a warning, not the dataset.
  bool metadata = true;
  /// Read the file first in a separate reader process (`dstudio-probe`) with a time and memory
  /// limit, and only then here: libhdf5 crashes, loops or allocates gigabytes on some damaged
  /// files, and this process holds the user's work. A crash, a timeout or exhausted memory there
  /// becomes a DatasetError naming the file and what was being read; when it happened in the
  /// metadata, the dataset is loaded without its metadata and a warning says so. Built-in HDF5
  /// formats only (a plugin's format is read as the plugin reads it).
  bool isolate = false;
  /// The reader process's time limit in seconds; 0 derives it from the file's size (10 s plus a
  /// second per 4 MB), or takes $DSTUDIO_READER_TIMEOUT when set.
  double reader_timeout_seconds = 0;
};

/// Loads a D4RL HDF5 file, a Minari `main_data.hdf5`, or a Minari dataset folder (the one holding
/// `data/main_data.hdf5`). Throws `DatasetError` for unusable input and `Cancelled` when
/// `progress.cancel` is triggered. Safe to call from any thread.
Dataset load_dataset(const std::filesystem::path& path, const LoadOptions& options = {},
                     const Progress& progress = {});

/// Options of `write_d4rl`.
struct WriteOptions {
  bool float64 = false;  ///< store float arrays as float64 (as D4RL's replay files do)
  int gzip_level = 4;    ///< 0 disables compression; D4RL files use gzip (h5py's level 4)
  std::int64_t chunk_rows = 16384;
  bool write_timeouts = true;  ///< false writes an old-style file without `timeouts`
};

/// Writes `data` in the D4RL layout: `observations`, `actions`, `rewards`, `terminals` and
/// `timeouts` (bool), `next_observations` and `infos/qpos`, `infos/qvel`, `infos/goal` when
/// present, and each `metadata` entry as a string dataset `metadata/<key>`. The file appears
/// atomically: it is written beside `path` under a temporary name and renamed when complete, so a
/// failure never leaves a half-written file. Throws `DatasetError` on inconsistent arrays or I/O
/// failure.
void write_d4rl(const std::filesystem::path& path, const TransitionArrays& data,
                const std::map<std::string, std::string>& metadata = {},
                const WriteOptions& options = {});

}  // namespace dstudio::data
