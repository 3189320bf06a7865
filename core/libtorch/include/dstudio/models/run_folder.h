#pragma once
/// \file
/// Training run folders as the studio and `dstudio train` write them: a new folder for a run, and
/// what an existing folder says about the run that made it (its metrics, its variant label, seed
/// and length), for comparing runs trained elsewhere or earlier.

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "dstudio/analysis/curves.h"

namespace dstudio::models {

/// What a run folder holds.
struct RunFolder {
  std::filesystem::path dir;  ///< absolute
  std::string name;           ///< the folder's name
  std::string label;  ///< what groups it with others: the variant (hier: hier-<merger>-<mixer>)
  std::string seed;   ///< empty when nothing says
  std::int64_t total_steps = 0;  ///< 0 when nothing says
  bool complete = false;         ///< checkpoint.pt is there
  analysis::RunMetrics metrics;
  /// Its configuration (run_config_values) from run.json or its checkpoint; empty when neither
  /// says.
  std::vector<std::pair<std::string, std::string>> config;
};

/// Reads `dir`: its metrics (analysis::read_run_metrics, which throws naming the folder when it
/// has none), then what produced it: run.json (label, training.seed, training.steps), else its
/// checkpoint's description, else the folder's name <label>-seed<N>[-...]. A run.json whose
/// configuration cannot be read still names the run; its config stays empty.
RunFolder read_run_folder(const std::filesystem::path& dir);

/// Makes `root`/<label>-seed<seed>-<stamp> (with -2, -3, ... when that is taken) and returns it.
/// Throws Error naming `root` when it cannot be made.
std::filesystem::path make_run_folder(const std::filesystem::path& root, const std::string& label,
                                      std::uint64_t seed, const std::string& stamp);

}  // namespace dstudio::models
