#pragma once
// The figures of `dstudio sweep collect`: the groups' final scores (and, when the cells were
// evaluated periodically, their best evaluations) as clustered bars, one cluster a dataset and
// one bar a setting, with error bars over seeds (viz::save_sweep_scores, the figure the studio's
// Sweep tab shows); and rliable's statistics of each setting over its datasets and seeds:
// the aggregates with their intervals, the performance profiles and the probability of
// improvement of each setting over another. Built only with the GUI libraries, which draw the
// figures.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "dstudio/sweep/sweep.h"

namespace dstudio::viz {
struct FigureStyle;
}

namespace dstudio::cli {

struct FigureOptions;

/// The most bootstrap resamples `sweep collect --resamples` and a sweep figure's recipe take.
inline constexpr int kMostResamples = 1000000;

/// The figure options of `sweep collect` (figure_options.h), registered on `cmd`; keep the
/// result as long as the command line.
std::shared_ptr<FigureOptions> add_sweep_figure_options(CLI::App* cmd);

/// Writes `out`/scores.{pdf,svg,png,csv} and, when a group has a best periodic evaluation,
/// `out`/best_scores.*; then aggregates.* (IQM, median, mean and optimality gap of each setting
/// with their 95% intervals, a panel each as rliable draws them, final scores; aggregates_best.*
/// for the best), profiles.* (and profiles_best.*), and, with two settings or more,
/// improvement.* (P(X > Y) with its interval on 0 to 1, final and best), in the style `options`
/// ask for. Returns the paths written. Throws UsageError
/// for options that do not fit.
std::vector<std::string> write_sweep_figures(const std::vector<sweep::GroupResult>& groups,
                                             const sweep::SweepStatistics& statistics,
                                             const std::filesystem::path& out,
                                             const FigureOptions& options);

/// The `analysis` of a recipe of a figure `sweep collect` drew.
inline constexpr const char* kSweepCollectRecipe = "sweep-collect";

/// The figures `sweep collect` draws, by name, in the order it draws them.
const std::vector<std::string>& sweep_figure_names();

/// Draws the figure `name` (of sweep_figure_names) to base.{pdf,svg,png} as `style` asks (and, for
/// scores, its numbers as base.csv); none when it has nothing to draw (no best evaluations, one
/// setting for the improvement). Throws UsageError for another name. Needs a FigureContext.
std::vector<std::string> write_sweep_figure(const std::string& name,
                                            const std::vector<sweep::GroupResult>& groups,
                                            const sweep::SweepStatistics& statistics,
                                            const std::string& base, const viz::FigureStyle& style);

/// Beside each figure `sweep collect` drew (`files`), out/<figure>.recipe.json: the sweep folder,
/// the bootstrap's resamples and seed, the style, and the hashes of what was read (sweep.json,
/// every cell's task.json and checkpoint), so that `dstudio figure render` draws it again, or
/// refuses when a cell has changed since.
void write_sweep_recipes(const sweep::Sweep& sweep, int resamples, std::uint64_t seed,
                         const FigureOptions& figures, const std::vector<std::string>& files,
                         const std::filesystem::path& out);

}  // namespace dstudio::cli
