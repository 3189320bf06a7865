#pragma once
// The figures of `dstudio sweep collect`: the groups' final scores (and, when the cells were
// evaluated periodically, their best evaluations) as clustered bars, one cluster a dataset and
// one bar a setting, with error bars over seeds (viz::save_sweep_scores, the figure the studio's
// Sweep tab shows); and rliable's statistics of each setting over its datasets and seeds:
// the aggregates with their intervals, the performance profiles and the probability of
// improvement of each setting over another. Built only with the GUI libraries, which draw the
// figures.

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "dstudio/sweep/sweep.h"

namespace dstudio::cli {

struct FigureOptions;

/// The figure options of `sweep collect` (figure_options.h), registered on `cmd`; keep the
/// result as long as the command line.
std::shared_ptr<FigureOptions> add_sweep_figure_options(CLI::App* cmd);

/// Writes `out`/scores.{pdf,svg,png,csv} and, when a group has a best periodic evaluation,
/// `out`/best_scores.*; then aggregates.* (IQM, median, mean and optimality gap of each setting
/// with their 95% intervals, final scores; aggregates_best.* for the best), profiles.* (and
/// profiles_best.*), and, with two settings or more, improvement.* (P(X > Y) with its interval,
/// final and best), in the style `options` ask for. Returns the paths written. Throws UsageError
/// for options that do not fit.
std::vector<std::string> write_sweep_figures(const std::vector<sweep::GroupResult>& groups,
                                             const sweep::SweepStatistics& statistics,
                                             const std::filesystem::path& out,
                                             const FigureOptions& options);

}  // namespace dstudio::cli
