// rliable's aggregates, stratified bootstrap, performance profiles and probability of
// improvement. See aggregate.h.

#include "dstudio/analysis/aggregate.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <utility>

#include "dstudio/common/error.h"
#include "dstudio/common/random.h"
#include "dstudio/common/text.h"

namespace dstudio::analysis {
namespace {

// `prefix` tells the settings of a probability of improvement apart ("setting X: ").
void check_scores(const ScoreMatrix& scores, const std::string& prefix = "") {
  if (scores.empty()) throw UsageError(prefix + "no scores: give at least one task with runs");
  for (std::size_t t = 0; t < scores.size(); ++t) {
    if (scores[t].empty()) throw UsageError(prefix + "task " + std::to_string(t) + " has no runs");
    for (std::size_t r = 0; r < scores[t].size(); ++r) {
      const double v = scores[t][r];
      if (std::isnan(v))
        throw UsageError(prefix + "the score of task " + std::to_string(t) + ", run " +
                         std::to_string(r) + " is NaN");
      if (std::isinf(v))
        throw UsageError(prefix + "the score of task " + std::to_string(t) + ", run " +
                         std::to_string(r) + " is infinite");
    }
  }
}

void check_options(const BootstrapOptions& o) {
  if (o.resamples < 1)
    throw UsageError("resamples must be at least 1, not " + std::to_string(o.resamples));
  if (!(o.confidence > 0.0 && o.confidence < 1.0))
    throw UsageError("confidence must be in (0, 1), not " + general_number(o.confidence));
}

// Type-7 quantile of values already sorted ascending, non-empty, p in [0, 1].
double sorted_quantile(const std::vector<double>& x, double p) {
  const double h = static_cast<double>(x.size() - 1) * p;
  const double lo = std::floor(h);
  const auto i = static_cast<std::size_t>(lo);
  if (i + 1 >= x.size()) return x.back();
  return x[i] + (h - lo) * (x[i + 1] - x[i]);
}

// The percentile interval of a bootstrap distribution (sorted here).
Interval percentile_interval(double estimate, std::vector<double>& distribution,
                             double confidence) {
  std::sort(distribution.begin(), distribution.end());
  return {estimate, sorted_quantile(distribution, (1.0 - confidence) / 2.0),
          sorted_quantile(distribution, (1.0 + confidence) / 2.0)};
}

double mean_of(const std::vector<double>& v) {
  double sum = 0.0;
  for (const double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

std::vector<double> task_means(const ScoreMatrix& scores) {
  std::vector<double> means;
  means.reserve(scores.size());
  for (const auto& task : scores) means.push_back(mean_of(task));
  return means;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

// The statistics without input checks: the bootstrap checks once and evaluates them many times.
double mean_unchecked(const ScoreMatrix& s) {
  return mean_of(task_means(s));
}
double median_unchecked(const ScoreMatrix& s) {
  return median_of(task_means(s));
}

double iqm_unchecked(const ScoreMatrix& s, std::vector<double>& pooled) {
  pooled.clear();
  for (const auto& task : s) pooled.insert(pooled.end(), task.begin(), task.end());
  std::sort(pooled.begin(), pooled.end());
  const std::size_t cut = pooled.size() / 4;  // scipy's int(0.25 * n)
  double sum = 0.0;
  for (std::size_t i = cut; i < pooled.size() - cut; ++i) sum += pooled[i];
  return sum / static_cast<double>(pooled.size() - 2 * cut);
}

double optimality_gap_unchecked(const ScoreMatrix& s, double gamma) {
  double sum = 0.0;
  for (const auto& task : s) {
    double shortfall = 0.0;
    for (const double x : task) shortfall += std::max(gamma - x, 0.0);
    sum += shortfall / static_cast<double>(task.size());
  }
  return sum / static_cast<double>(s.size());
}

double fraction_above(const ScoreMatrix& s, double tau) {
  double sum = 0.0;
  for (const auto& task : s) {
    std::size_t above = 0;
    for (const double x : task) above += x > tau ? 1 : 0;
    sum += static_cast<double>(above) / static_cast<double>(task.size());
  }
  return sum / static_cast<double>(s.size());
}

// Mann-Whitney U / (m n) of one task, from sorted y: per x_i, the y below it count 1, the equal
// ones 1/2. Counted in halves so the sum is an exact integer.
double task_improvement(const std::vector<double>& x, std::vector<double>& sorted_y) {
  std::sort(sorted_y.begin(), sorted_y.end());
  std::uint64_t halves = 0;
  for (const double xi : x) {
    const auto lower = std::lower_bound(sorted_y.begin(), sorted_y.end(), xi);
    const auto upper = std::upper_bound(lower, sorted_y.end(), xi);
    halves += 2 * static_cast<std::uint64_t>(lower - sorted_y.begin()) +
              static_cast<std::uint64_t>(upper - lower);
  }
  return static_cast<double>(halves) /
         (2.0 * static_cast<double>(x.size()) * static_cast<double>(sorted_y.size()));
}

double improvement_unchecked(const ScoreMatrix& x, ScoreMatrix& y) {
  double sum = 0.0;
  for (std::size_t t = 0; t < x.size(); ++t) sum += task_improvement(x[t], y[t]);
  return sum / static_cast<double>(x.size());
}

// A matrix shaped like `scores`, to hold resamples.
ScoreMatrix same_shape(const ScoreMatrix& scores) {
  ScoreMatrix m(scores.size());
  for (std::size_t t = 0; t < scores.size(); ++t) m[t].resize(scores[t].size());
  return m;
}

// One stratified resample into `out`, in the order aggregate.h documents.
void draw_stratified(const ScoreMatrix& scores, Random& rng, ScoreMatrix& out) {
  for (std::size_t t = 0; t < scores.size(); ++t) {
    const auto& task = scores[t];
    const auto n = static_cast<std::uint64_t>(task.size());
    for (auto& slot : out[t]) slot = task[rng.below(n)];
  }
}

}  // namespace

double quantile(std::vector<double> values, double p) {
  if (values.empty()) throw UsageError("the quantile of no values");
  if (!(p >= 0.0 && p <= 1.0))
    throw UsageError("a quantile's p must be in [0, 1], not " + general_number(p));
  for (std::size_t i = 0; i < values.size(); ++i)
    if (std::isnan(values[i]))
      throw UsageError("value " + std::to_string(i) + " of a quantile's values is NaN");
  std::sort(values.begin(), values.end());
  return sorted_quantile(values, p);
}

double aggregate_mean(const ScoreMatrix& scores) {
  check_scores(scores);
  return mean_unchecked(scores);
}

double aggregate_median(const ScoreMatrix& scores) {
  check_scores(scores);
  return median_unchecked(scores);
}

double aggregate_iqm(const ScoreMatrix& scores) {
  check_scores(scores);
  std::vector<double> pooled;
  return iqm_unchecked(scores, pooled);
}

double aggregate_optimality_gap(const ScoreMatrix& scores, double gamma) {
  check_scores(scores);
  if (std::isnan(gamma)) throw UsageError("the optimality gap's gamma is NaN");
  return optimality_gap_unchecked(scores, gamma);
}

AggregateSummary aggregate_summary(const ScoreMatrix& scores, const BootstrapOptions& options,
                                   double gamma) {
  check_scores(scores);
  check_options(options);
  if (std::isnan(gamma)) throw UsageError("the optimality gap's gamma is NaN");

  std::vector<double> pooled;
  AggregateSummary s;
  s.tasks = static_cast<int>(scores.size());
  for (const auto& task : scores) s.runs += static_cast<int>(task.size());

  const auto n = static_cast<std::size_t>(options.resamples);
  std::vector<double> iqm(n), median(n), mean(n), gap(n);
  Random rng(options.seed);
  ScoreMatrix resample = same_shape(scores);
  for (std::size_t r = 0; r < n; ++r) {
    draw_stratified(scores, rng, resample);
    iqm[r] = iqm_unchecked(resample, pooled);
    median[r] = median_unchecked(resample);
    mean[r] = mean_unchecked(resample);
    gap[r] = optimality_gap_unchecked(resample, gamma);
  }
  s.iqm = percentile_interval(iqm_unchecked(scores, pooled), iqm, options.confidence);
  s.median = percentile_interval(median_unchecked(scores), median, options.confidence);
  s.mean = percentile_interval(mean_unchecked(scores), mean, options.confidence);
  s.optimality_gap =
      percentile_interval(optimality_gap_unchecked(scores, gamma), gap, options.confidence);
  return s;
}

Interval bootstrap_interval(const ScoreMatrix& scores,
                            const std::function<double(const ScoreMatrix&)>& statistic,
                            const BootstrapOptions& options) {
  check_scores(scores);
  check_options(options);
  const double estimate = statistic(scores);
  if (std::isnan(estimate)) throw UsageError("the statistic is NaN on the scores");

  std::vector<double> distribution(static_cast<std::size_t>(options.resamples));
  Random rng(options.seed);
  ScoreMatrix resample = same_shape(scores);
  for (std::size_t r = 0; r < distribution.size(); ++r) {
    draw_stratified(scores, rng, resample);
    distribution[r] = statistic(resample);
    if (std::isnan(distribution[r]))
      throw UsageError("the statistic is NaN on resample " + std::to_string(r));
  }
  return percentile_interval(estimate, distribution, options.confidence);
}

std::vector<ProfilePoint> performance_profile(const ScoreMatrix& scores,
                                              const std::vector<double>& taus,
                                              const BootstrapOptions& options) {
  check_scores(scores);
  check_options(options);
  for (std::size_t i = 0; i < taus.size(); ++i)
    if (std::isnan(taus[i]))
      throw UsageError("threshold " + std::to_string(i) + " of the performance profile is NaN");

  const auto n = static_cast<std::size_t>(options.resamples);
  // [tau][resample], so each tau's distribution is contiguous for sorting.
  std::vector<std::vector<double>> distributions(taus.size(), std::vector<double>(n));
  Random rng(options.seed);
  ScoreMatrix resample = same_shape(scores);
  for (std::size_t r = 0; r < n; ++r) {
    draw_stratified(scores, rng, resample);
    for (std::size_t i = 0; i < taus.size(); ++i)
      distributions[i][r] = fraction_above(resample, taus[i]);
  }

  std::vector<ProfilePoint> profile;
  profile.reserve(taus.size());
  for (std::size_t i = 0; i < taus.size(); ++i) {
    const Interval band =
        percentile_interval(fraction_above(scores, taus[i]), distributions[i], options.confidence);
    profile.push_back({taus[i], band.estimate, band.low, band.high});
  }
  return profile;
}

std::vector<double> profile_taus(const ScoreMatrix& scores, int n) {
  check_scores(scores);
  if (n < 1)
    throw UsageError("a performance profile needs at least 1 threshold, not " + std::to_string(n));
  double lo = scores[0][0], hi = lo;
  for (const auto& task : scores)
    for (const double x : task) {
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
  std::vector<double> taus(static_cast<std::size_t>(n), lo);
  if (n == 1) return taus;
  const double step = (hi - lo) / static_cast<double>(n - 1);
  for (int i = 1; i < n - 1; ++i)
    taus[static_cast<std::size_t>(i)] = lo + static_cast<double>(i) * step;
  taus.back() = hi;  // exactly, whatever the rounding of the steps
  return taus;
}

Interval probability_of_improvement(const ScoreMatrix& x, const ScoreMatrix& y,
                                    const BootstrapOptions& options) {
  check_scores(x, "setting X: ");
  check_scores(y, "setting Y: ");
  if (x.size() != y.size())
    throw UsageError("the settings must be scored on the same tasks: X has " +
                     std::to_string(x.size()) + " tasks and Y has " + std::to_string(y.size()));
  check_options(options);

  ScoreMatrix y_copy = y;  // sorted in place per task
  const double estimate = improvement_unchecked(x, y_copy);

  std::vector<double> distribution(static_cast<std::size_t>(options.resamples));
  Random rng(options.seed);
  ScoreMatrix x_resample = same_shape(x), y_resample = same_shape(y);
  for (auto& p : distribution) {
    draw_stratified(x, rng, x_resample);
    draw_stratified(y, rng, y_resample);
    p = improvement_unchecked(x_resample, y_resample);
  }
  return percentile_interval(estimate, distribution, options.confidence);
}

std::string interval_text(const Interval& interval, int decimals) {
  const auto number = [decimals](double v) {
    std::string text = fixed_number(v, decimals);
    // "-0.0" reads as a sign the value does not have.
    if (!text.empty() && text[0] == '-' && text.find_first_not_of("0.", 1) == std::string::npos)
      text.erase(0, 1);
    return text;
  };
  return number(interval.estimate) + " [" + number(interval.low) + ", " + number(interval.high) +
         "]";
}

}  // namespace dstudio::analysis
