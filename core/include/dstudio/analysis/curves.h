#pragma once
/// \file
/// Training curves across runs: the metrics a run folder holds, exponential-moving-average
/// smoothing, and the mean and spread of several runs (e.g. seeds of one variant) on a shared
/// step grid. What the studio's run comparison draws and exports; free of Qt.

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace dstudio::analysis {

/// One metric of one run: values `y` at increasing steps `x`.
struct Curve {
  std::vector<double> x, y;
};

/// Exponential moving average with weight `smoothing` in [0, 1):
/// s_0 = y_0, s_i = smoothing * s_{i-1} + (1 - smoothing) * y_i. A smoothing of 0 returns `y`.
/// Non-finite values are returned as they are and leave the average untouched. Throws
/// UsageError when `smoothing` is outside [0, 1).
std::vector<double> ema_smooth(const std::vector<double>& y, double smoothing);

/// Mean and spread of several curves at every step any of them logged.
struct CurveSpread {
  std::vector<double> x;     ///< the union of the curves' steps, increasing
  std::vector<double> mean;  ///< over the curves that cover the step
  std::vector<double> std;   ///< population standard deviation (divides by the count)
  std::vector<double> min, max;
  std::vector<int> count;  ///< curves that contributed
};

/// A curve contributes at a step inside its own range [x.front(), x.back()], linearly
/// interpolated between its two nearest logged steps (exact where it logged the step), so runs
/// logged at different intervals still line up. Non-finite values do not contribute; steps no
/// curve covers are left out.
CurveSpread curve_spread(const std::vector<Curve>& curves);

/// The metrics of a training run, one curve per column against `step`: loss, learning_rate,
/// steps_per_second and, on evaluation rows only, eval_score, eval_score_std, eval_return and
/// entropy_layer1.
struct RunMetrics {
  std::map<std::string, Curve> columns;
  std::string source;  ///< the file read
};

/// Reads `dir`/metrics.jsonl (every key, evaluations included), else `dir`/metrics.csv, as the
/// trainer writes them. Throws std::runtime_error naming the folder when it holds neither file or
/// no row with a step.
RunMetrics read_run_metrics(const std::filesystem::path& dir);

/// The run's metrics as CSV: "step" and every column in name order, one row a step any column
/// logged, empty where a column has no value at that step. Written atomically; throws Error
/// naming `path` on failure. read_run_metrics of a folder holding it as metrics.csv reads the
/// same curves back.
void write_run_metrics_csv(const std::filesystem::path& path, const RunMetrics& metrics);

/// How a group's band is drawn: the range of its runs, or one standard deviation about the mean.
enum class Band { MinMax, MeanStd };

/// Runs of one kind (one variant, several seeds) compared as one curve.
struct CurveGroup {
  std::string label;  ///< what the runs share, e.g. "dc"
  int runs = 0;
  std::vector<double> x, mean, low, high;  ///< smoothed, with the band
  std::vector<double> raw_x, raw_mean;     ///< the mean of the unsmoothed curves
};

/// `curves` (label, curve) grouped by label in the order labels first appear; each group's
/// curves are smoothed (ema_smooth) and spread over a shared grid (curve_spread).
std::vector<CurveGroup> group_curves(
    const std::vector<std::pair<std::string, const Curve*>>& curves, double smoothing, Band band);

/// The groups as CSV: group, smoothing, step, mean, min and max (or mean_minus_std and
/// mean_plus_std), raw_mean (empty where the unsmoothed mean has no value at that step). Written
/// atomically; throws Error naming `path` on failure.
void write_curve_groups_csv(const std::filesystem::path& path,
                            const std::vector<CurveGroup>& groups, double smoothing, Band band);

}  // namespace dstudio::analysis
