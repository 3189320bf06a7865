#pragma once
/// \file
/// Aggregate performance over tasks and runs with interval estimates, as rliable computes it
/// (Agarwal et al., "Deep Reinforcement Learning at the Edge of the Statistical Precipice",
/// NeurIPS 2021): the interquartile mean (IQM), median, mean and optimality gap of normalised
/// scores, percentile intervals from a stratified bootstrap, performance profiles (score
/// distributions) with bootstrap bands, and the probability of improvement of one setting over
/// another. Free of Qt; what `sweep collect`, the studio's comparison tab and its LaTeX tables
/// show.
///
/// Scores are a matrix `scores[task][run]`, already normalised (D4RL-normalised, 0..100); tasks may
/// have different numbers of runs. Every function throws UsageError for input that cannot be
/// aggregated: no tasks, a task with no runs, a score that is NaN or infinite (tasks and runs are
/// counted from 0 in the message), resamples < 1, a confidence outside (0, 1).
///
/// The stratified bootstrap draws from `Random(seed)` (SplitMix64, dstudio/common/random.h) in this
/// order, so the same scores, seed and resamples give the same interval on every platform:
///
///     for each resample r = 0 .. resamples-1:
///       for each task t = 0 .. tasks-1, in order:
///         for each run slot k = 0 .. n_t-1, in order:
///           resample[t][k] = scores[t][below(n_t)]      // n_t = scores[t].size()
///       evaluate the statistic on `resample`
///
/// The probability of improvement draws, for each resample, X's tasks in that order and then Y's
/// tasks in that order, from one stream. The interval is the percentile interval: the (1 - c) / 2
/// and (1 + c) / 2 quantiles (quantile(), numpy's default "linear") of the `resamples` values, with
/// the estimate computed on the scores themselves.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace dstudio::analysis {

/// Normalised scores, `[task][run]`.
using ScoreMatrix = std::vector<std::vector<double>>;

/// A point estimate and its interval.
struct Interval {
  double estimate = 0, low = 0, high = 0;
};

/// The stratified bootstrap: how many resamples, the interval's coverage, the random stream.
struct BootstrapOptions {
  int resamples = 2000;
  double confidence = 0.95;
  std::uint64_t seed = 0;
};

/// The type-7 quantile of `values` (numpy.percentile's default, "linear"): with the values sorted
/// ascending as x and h = (N - 1) p, x[floor h] + (h - floor h) (x[floor h + 1] - x[floor h]).
/// Throws UsageError when `values` is empty or holds NaN, or `p` is outside [0, 1].
double quantile(std::vector<double> values, double p);

/// The mean over tasks of each task's mean score (rliable's aggregate_mean).
double aggregate_mean(const ScoreMatrix& scores);
/// The median over tasks of each task's mean score (rliable's aggregate_median); with an even
/// number of tasks, the mean of the middle two.
double aggregate_median(const ScoreMatrix& scores);
/// The interquartile mean of all scores of all tasks pooled (rliable's aggregate_iqm,
/// scipy.stats.trim_mean(scores, 0.25)): sorted, floor(n / 4) cut from each end, the mean of the
/// rest.
double aggregate_iqm(const ScoreMatrix& scores);
/// The mean over tasks of each task's mean shortfall below `gamma`, max(gamma - x, 0) (rliable's
/// aggregate_optimality_gap). Throws UsageError when `gamma` is NaN.
double aggregate_optimality_gap(const ScoreMatrix& scores, double gamma = 100);

/// The four aggregates with their intervals, over how many runs (all tasks) and tasks.
struct AggregateSummary {
  Interval iqm, median, mean, optimality_gap;
  int runs = 0, tasks = 0;
};
/// The four aggregates, each with a stratified-bootstrap percentile interval. All four are
/// evaluated on the same resamples, one pass: each interval equals bootstrap_interval() of that
/// aggregate with the same options.
AggregateSummary aggregate_summary(const ScoreMatrix& scores, const BootstrapOptions& options = {},
                                   double gamma = 100);

/// Any statistic of a score matrix with a stratified-bootstrap percentile interval: `statistic`
/// is evaluated on `scores` for the estimate and on each resample (same shape as `scores`) for
/// the interval. Throws UsageError when it returns NaN.
Interval bootstrap_interval(const ScoreMatrix& scores,
                            const std::function<double(const ScoreMatrix&)>& statistic,
                            const BootstrapOptions& options = {});

/// One point of a performance profile: the fraction of runs scoring above `tau` and its band.
struct ProfilePoint {
  double tau = 0, fraction = 0, low = 0, high = 0;
};
/// The performance profile (rliable's score distribution) at each of `taus`, in their order: the
/// mean over tasks of the fraction of the task's runs with a score strictly above tau, with
/// stratified-bootstrap percentile bands. All taus are evaluated on the same resamples. Throws
/// UsageError when a tau is NaN.
std::vector<ProfilePoint> performance_profile(const ScoreMatrix& scores,
                                              const std::vector<double>& taus,
                                              const BootstrapOptions& options = {});
/// `n` evenly spaced thresholds from the lowest score to the highest, both included (numpy's
/// linspace), for plotting a profile. Throws UsageError when `n` < 1.
std::vector<double> profile_taus(const ScoreMatrix& scores, int n = 101);

/// The probability of improvement P(X > Y) of setting `x` over setting `y`, scored on the same
/// tasks: for each task the Mann-Whitney U over all pairs of runs, [x_i > y_j] + 0.5 [x_i == y_j],
/// divided by m n; then the mean over tasks. Its interval comes from a bootstrap resampling X's
/// and Y's runs independently, stratified by task. Throws UsageError when the settings differ in
/// their number of tasks.
Interval probability_of_improvement(const ScoreMatrix& x, const ScoreMatrix& y,
                                    const BootstrapOptions& options = {});

/// "estimate [low, high]" with `decimals` digits after the point, e.g. "72.3 [70.1, 74.5]": plain
/// text and a LaTeX table cell alike (no characters LaTeX treats specially). A value that rounds to
/// zero has no minus sign; a value that is not finite shows as kMissingNumber (text.h).
std::string interval_text(const Interval& interval, int decimals = 1);

}  // namespace dstudio::analysis
