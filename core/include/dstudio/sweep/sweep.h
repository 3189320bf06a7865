#pragma once
/// \file
/// A sweep: the grid of training runs behind a paper's table (variants x datasets x seeds, with
/// configuration and training overrides), laid out as one folder per cell under a sweep folder
/// with a manifest, sweep.json. Any machine that sees the folder (this one, or the nodes of a
/// Slurm cluster on a shared filesystem) runs a cell by its index, and each cell's folder says
/// how far it got (task.json), so the sweep's status and results are read from the folder alone.
/// Plain data and JSON, free of LibTorch; training a cell is the models library's. The layout is
/// documented in docs/sweeps.md.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "dstudio/analysis/aggregate.h"

namespace dstudio::sweep {

/// One training run of a sweep.
struct Cell {
  int index = 0;
  std::string name;             ///< its folder under cells/: "<index>-<variant>-<dataset>-s<seed>"
  std::string variant;          ///< a registered variant
  std::string merger = "conv";  ///< hier only
  std::string mixer = "pooling";  ///< hier only
  std::string dataset;            ///< absolute path
  std::uint64_t seed = 0;
  std::string config = "{}";    ///< JSON object: variant fields over the variant's defaults
  std::string training = "{}";  ///< JSON object: training fields over the defaults
  std::string group;  ///< what its seeds share: variant, dataset and overrides, without the seed
};

/// A sweep's cells and where they live.
struct Sweep {
  std::filesystem::path dir;  ///< the sweep folder (absolute)
  std::vector<Cell> cells;
  std::string grid;  ///< the grid's JSON as given, kept in the manifest
  /// The grid's "eval_episodes": rollouts scoring a finished cell (0: none).
  int eval_episodes = 10;
  std::string created;  ///< when the manifest was written (UTC, ISO 8601)
};

/// Reads a grid (a JSON object):
/// - "variants": names, or objects {"variant", "merger", "mixer", "config"}; with "datasets" and
///   "seeds" (whole numbers) they span the cartesian product, in that nesting order;
/// - "config" and "training": objects applied to every cell (a variant object's "config" on top);
/// - "axes": {"config.<field>" or "training.<field>": [values, ...]}, more cartesian axes;
/// - "cells": explicit cells {"variant", "dataset", "seed", "config", "training", ...} added after;
/// - "eval_episodes": rollouts that score each finished cell (default 10; 0: none).
/// Relative dataset paths are taken from `relative_to`; every dataset must exist. Variant fields
/// and training fields are checked as `dstudio train` checks them (ranges, types). Throws
/// UsageError naming the key at fault; a key the grid does not know is refused.
std::vector<Cell> parse_grid(const std::string& json, const std::filesystem::path& relative_to);

/// The grid's "eval_episodes" (10 when it gives none). Throws UsageError for a grid that is not
/// one, as parse_grid does, without looking at its datasets.
int grid_eval_episodes(const std::string& json);

/// Writes the manifest `dir`/sweep.json and an empty folder per cell, atomically. A folder that
/// already holds a different sweep is refused (UsageError); the same sweep again changes nothing.
Sweep create_sweep(const std::filesystem::path& dir, const std::vector<Cell>& cells,
                   const std::string& grid);

/// Reads `dir`/sweep.json. Throws Error naming the file when it is missing or damaged.
Sweep read_sweep(const std::filesystem::path& dir);

/// The manifest's text for `sweep`, as create_sweep writes it to sweep.json: its format and
/// version, `created`, the grid and every cell (a cell's overrides as JSON objects).
std::string to_json(const Sweep& sweep);

/// A cell's folder.
std::filesystem::path cell_dir(const Sweep& sweep, const Cell& cell);

/// What a cell's task.json says: written by the task that trains it, read by status and collect.
enum class CellState { Pending, Running, Finished, Failed };
const char* to_string(CellState state);

struct CellStatus {
  CellState state = CellState::Pending;
  std::int64_t step = 0, total = 0;
  double loss = 0.0;      ///< the last reported (NaN before any)
  std::string host;       ///< where it ran
  long long pid = 0;      ///< the task's process
  std::string slurm_job;  ///< "<array job>_<task>" under Slurm
  int restarts = 0;       ///< times it resumed from its checkpoint
  double score = 0.0,
         score_std =
             0.0;  ///< Finished: D4RL normalised score of the final policy (NaN: not scored)
  double best_score = 0.0;  ///< the best of the periodic evaluations (eval_every; NaN: none)
  std::string error;        ///< Failed: why
  std::string updated;      ///< when task.json was written (UTC, ISO 8601)
  /// What in task.json could not be taken as written (a score that is not a number, or not a
  /// finite one within kMaxScore), each naming the key; those values read as NaN.
  std::vector<std::string> problems;
};

/// The largest score magnitude taken from task.json: D4RL's normalised scores and raw returns of
/// the tasks simulated are far inside it; a larger value is an edited or damaged file.
inline constexpr double kMaxScore = 1e6;

/// The time now, UTC, ISO 8601 ("2026-11-25T20:15:00Z"): what task.json and the Slurm record keep.
std::string utc_now();

/// Reads the cell's task.json; Pending when there is none, Failed naming the file ("<path> is
/// damaged: ...") when it cannot be read.
CellStatus read_cell_status(const Sweep& sweep, const Cell& cell);
/// Writes the cell's task.json atomically, `updated` the time now.
void write_cell_status(const Sweep& sweep, const Cell& cell, const CellStatus& status);
/// task.json's text for `status`, its `updated` as it is (NaNs as null; `problems` are not kept).
std::string to_json(const CellStatus& status);

/// A cell's status as results count it: read_cell_status, where a cell said to be finished whose
/// checkpoint.pt is missing counts as failed, and every problem (CellStatus::problems, the missing
/// checkpoint) is added to `warnings` naming the cell.
CellStatus result_status(const Sweep& sweep, const Cell& cell,
                         std::vector<std::string>* warnings = nullptr);

/// A group's results: the cells that differ only in their seed.
struct GroupResult {
  std::string group;
  std::string setting;  ///< a table's column: the variant and the fields that vary over the sweep
                        ///< ("dt hidden=64")
  std::string dataset;  ///< the dataset's file stem (a table's row)
  int cells = 0, finished = 0;
  double score_mean = 0.0,
         score_std =
             0.0;  ///< final scores of the finished cells (std over seeds, n - 1; 0 for one)
  double best_mean = 0.0, best_std = 0.0;   ///< best periodic evaluations (NaN without any)
  std::vector<double> scores, best_scores;  ///< the finished seeds' final and best scores
  /// The interquartile mean over seeds with its stratified-bootstrap 95% interval (aggregate.h),
  /// of the final and of the best scores; NaN where no seed has one.
  analysis::Interval score_iqm, best_iqm;
};

/// Each group's results (from result_status), in the order the groups first appear; NaN means
/// where no finished cell has a score. What could not be counted is added to `warnings`.
std::vector<GroupResult> collect_groups(const Sweep& sweep,
                                        std::vector<std::string>* warnings = nullptr,
                                        const analysis::BootstrapOptions& bootstrap = {});

/// The final (or best) scores of `setting` as rliable takes them: a task a dataset of `datasets`
/// (in that order), its runs the finished seeds' scores. A dataset without one is left out.
analysis::ScoreMatrix score_matrix(const std::vector<GroupResult>& groups,
                                   const std::string& setting, bool best,
                                   std::vector<std::string>* datasets = nullptr);

/// The settings of `groups` in the order they first appear.
std::vector<std::string> settings_of(const std::vector<GroupResult>& groups);

/// One setting over every dataset it has finished seeds on: rliable's IQM, median, mean and
/// optimality gap (gamma 100, D4RL-normalised scores) with stratified-bootstrap intervals, of the
/// final scores and of the best periodic evaluations side by side (unset without any).
struct SettingAggregate {
  std::string setting;
  std::vector<std::string> datasets;  ///< the tasks of `last`
  std::optional<analysis::AggregateSummary> last, best;
};
std::vector<SettingAggregate> aggregate_settings(const std::vector<GroupResult>& groups,
                                                 const analysis::BootstrapOptions& bootstrap = {});

/// The probability that setting `x` scores above setting `y` (rliable), over the datasets both
/// have finished seeds on, final and best scores; for each pair of settings in their order.
struct SettingImprovement {
  std::string x, y;
  std::vector<std::string> datasets;
  std::optional<analysis::Interval> last, best;
};
std::vector<SettingImprovement> setting_improvements(
    const std::vector<GroupResult>& groups, const analysis::BootstrapOptions& bootstrap = {});

/// A setting's performance profile (rliable's score distribution): the fraction of its runs above
/// each threshold, averaged over its datasets, with bootstrap bands; every setting on the same
/// thresholds, `points` of them from the lowest score of any setting to the highest.
struct SettingProfile {
  std::string setting;
  std::vector<analysis::ProfilePoint> points;
};
std::vector<SettingProfile> setting_profiles(const std::vector<GroupResult>& groups, bool best,
                                             int points = 101,
                                             const analysis::BootstrapOptions& bootstrap = {});

/// rliable's statistics of a sweep's settings, as `sweep collect` and the Sweep tab show them.
struct SweepStatistics {
  std::vector<SettingAggregate> aggregates;
  std::vector<SettingImprovement> improvements;
  std::vector<SettingProfile> profiles, best_profiles;
};

/// All of SweepStatistics for `groups`: what `sweep collect` writes and draws.
SweepStatistics sweep_statistics(const std::vector<GroupResult>& groups,
                                 const analysis::BootstrapOptions& bootstrap = {});

/// What anything that shows IQMs over these numbers of runs must say with them: the IQM trims a
/// quarter of the runs from each end, rounded down, so over fewer than 4 runs it trims nothing
/// and is their plain mean: "IQM over fewer than 4 runs trims nothing: over 3 it is their mean."
/// Empty when every count is 4 or more.
std::string iqm_note(const std::vector<int>& runs);

/// iqm_note of the aggregates' runs (and of `more_runs`, other IQMs shown beside them, such as
/// each group's over its seeds), and, when an aggregate is over a single dataset, that its median
/// over datasets is that dataset's mean too: the footnote of the aggregates' figure and of the
/// Sweep tab's tables. Empty when neither applies.
std::string aggregates_note(const std::vector<analysis::AggregateSummary>& shown,
                            const std::vector<int>& more_runs = {});

/// A paper's table of "IQM [low, high]" (booktabs): datasets as rows, each setting's final and
/// best scores as columns (the IQM over seeds and its 95% interval), and a last row "All" with
/// rliable's IQM over every dataset and seed of the setting; "--" where there is none.
std::string latex_iqm_table(const std::vector<GroupResult>& groups,
                            const std::vector<SettingAggregate>& aggregates);

/// A paper's table: datasets as rows, settings as columns, "mean $\pm$ std" over seeds (booktabs),
/// the best of each row in bold, "--" where a group has no finished cell, and "(n of N)" after a
/// group whose seeds have not all finished.
std::string latex_table(const std::vector<GroupResult>& groups);

}  // namespace dstudio::sweep
