// rliable's aggregates against values worked out by hand, and the stratified bootstrap against an
// independent implementation (the Python below).

#include "dstudio/analysis/aggregate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include "dstudio/common/error.h"
#include "dstudio/common/text.h"

namespace dstudio::analysis {
namespace {

using testing::HasSubstr;

// The reference bootstrap values below come from this Python 3 (standard library only); run it to
// regenerate them. It prints the estimate and the (low, high) interval of each case.
//
// M = 2**64 - 1
// class Random:  # dstudio::Random: SplitMix64 and Lemire's bounded integers with rejection
//     def __init__(s, seed): s.state = seed
//     def next(s):
//         s.state = (s.state + 0x9E3779B97F4A7C15) & M
//         z = s.state
//         z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
//         z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
//         return z ^ (z >> 31)
//     def below(s, n):
//         m = s.next() * n
//         if m & M < n:
//             while m & M < (2**64 - n) % n: m = s.next() * n
//         return m >> 64
// def resample(r, scores): return [[t[r.below(len(t))] for _ in t] for t in scores]
// def q7(x, p):
//     x = sorted(x); h = (len(x) - 1) * p; i = int(h)
//     return x[i] if i + 1 >= len(x) else x[i] + (h - i) * (x[i + 1] - x[i])
// def interval(stat, draw, n, seed, c):
//     r = Random(seed); d = [stat(*draw(r)) for _ in range(n)]
//     return q7(d, (1 - c) / 2), q7(d, (1 + c) / 2)
// def iqm(s):
//     x = sorted(v for t in s for v in t); k = len(x) // 4
//     return sum(x[k:len(x) - k]) / (len(x) - 2 * k)
// def poi(x, y):
//     return sum(sum((a > b) + 0.5 * (a == b) for a in tx for b in ty) / (len(tx) * len(ty))
//                for tx, ty in zip(x, y)) / len(x)
// def above(s, tau): return sum(sum(v > tau for v in t) / len(t) for t in s) / len(s)
// A = [[12.5, 80.0, 45.25, 61.0], [99.5, 3.0, 57.75, 70.0, 33.0], [41.0, 88.0, 20.5]]
// X = [[60.0, 70.0, 70.0, 90.0], [10.0, 20.0, 30.0]]
// Y = [[50.0, 70.0, 80.0], [20.0, 20.0, 40.0, 5.0]]
// print(repr(iqm(A)), interval(iqm, lambda r: (resample(r, A),), 200, 7, 0.95))
// print(repr(poi(X, Y)), interval(poi, lambda r: (resample(r, X), resample(r, Y)), 100, 11, 0.95))
// print(repr(above(A, 50)), interval(lambda s: above(s, 50), lambda r: (resample(r, A),), 100, 3,
//                                    0.9))
const ScoreMatrix kA = {
    {12.5, 80.0, 45.25, 61.0}, {99.5, 3.0, 57.75, 70.0, 33.0}, {41.0, 88.0, 20.5}};
const ScoreMatrix kX = {{60.0, 70.0, 70.0, 90.0}, {10.0, 20.0, 30.0}};
const ScoreMatrix kY = {{50.0, 70.0, 80.0}, {20.0, 20.0, 40.0, 5.0}};

// The message of the UsageError `f` throws.
template <class F>
std::string usage_error_of(F&& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no UsageError)";
}

TEST(Aggregate, IqmOfKnownSamplesIsTheMeanOfTheMiddleHalf) {
  // 8 scores pooled over both tasks, sorted 1 2 3 4 5 6 7 100: cut 2 from each end,
  // (3 + 4 + 5 + 6) / 4 = 4.5. The outlier 100 does not move it.
  EXPECT_DOUBLE_EQ(aggregate_iqm({{1, 2, 3, 4}, {5, 6, 7, 100}}), 4.5);
  // 12 scores: 3 12.5 20.5 | 33 41 45.25 57.75 61 70 | 80 88 99.5, 308 / 6.
  EXPECT_DOUBLE_EQ(aggregate_iqm(kA), 308.0 / 6.0);
}

TEST(Aggregate, IqmCutsFloorOfAQuarterFromEachEndWhenTheCountIsNotAMultipleOfFour) {
  // n = 7: floor(1.75) = 1 cut; 1 | 2 3 5 6 7 | 100: 23 / 5 = 4.6.
  EXPECT_DOUBLE_EQ(aggregate_iqm({{7, 1, 3}, {5, 2, 6, 100}}), 4.6);
  // n = 6: 1 cut; 0 | 1 2 3 4 | 50: 10 / 4 = 2.5.
  EXPECT_DOUBLE_EQ(aggregate_iqm({{0, 1, 2, 3, 4, 50}}), 2.5);
  // n = 5: 1 cut; 0 | 10 20 30 | 1000: 20.
  EXPECT_DOUBLE_EQ(aggregate_iqm({{1000, 0}, {30, 10, 20}}), 20.0);
  // n = 3: floor(0.75) = 0, the plain mean (1 + 2 + 9) / 3 = 4; n = 1: the score itself.
  EXPECT_DOUBLE_EQ(aggregate_iqm({{1, 2, 9}}), 4.0);
  EXPECT_DOUBLE_EQ(aggregate_iqm({{42.5}}), 42.5);
}

TEST(Aggregate, MeanIsTheMeanOfTheTaskMeans) {
  // Task means 2 and 10: 6 (the 4 runs pooled would give 16 / 4 = 4).
  EXPECT_DOUBLE_EQ(aggregate_mean({{1, 2, 3}, {10}}), 6.0);
  // Task means 49.6875, 52.65, 49.8333...: 152.170833... / 3.
  EXPECT_NEAR(aggregate_mean(kA), (198.75 / 4 + 263.25 / 5 + 149.5 / 3) / 3, 1e-12);
}

TEST(Aggregate, MedianIsTheMedianOfTheTaskMeans) {
  // Task means 2, 10, 5: median 5.
  EXPECT_DOUBLE_EQ(aggregate_median({{1, 2, 3}, {10}, {4, 6}}), 5.0);
  // Task means 2, 10, 5, 0 sorted 0 2 5 10: (2 + 5) / 2 = 3.5.
  EXPECT_DOUBLE_EQ(aggregate_median({{1, 3}, {10}, {4, 6}, {0}}), 3.5);
  EXPECT_DOUBLE_EQ(aggregate_median({{7, 8}}), 7.5);
}

TEST(Aggregate, OptimalityGapCountsOnlyTheShortfallBelowGamma) {
  // gamma 100: task 0 (10 + 0) / 2 = 5, task 1 50; (5 + 50) / 2 = 27.5.
  EXPECT_DOUBLE_EQ(aggregate_optimality_gap({{90, 110}, {50}}), 27.5);
  // gamma 60: task 0 (0 + 0) / 2, task 1 10; 5.
  EXPECT_DOUBLE_EQ(aggregate_optimality_gap({{90, 110}, {50}}, 60), 5.0);
  // Per task first: task 0 (100 + 0 + 0) / 3, task 1 100; (33.33... + 100) / 2.
  EXPECT_DOUBLE_EQ(aggregate_optimality_gap({{0, 100, 100}, {0}}), (100.0 / 3 + 100) / 2);
}

TEST(Aggregate, Type7QuantileInterpolatesBetweenOrderStatistics) {
  // Sorted 1 2 3 4. p 0.5: h = 1.5, 2 + 0.5 (3 - 2). p 0.25: h = 0.75, 1 + 0.75 (2 - 1).
  EXPECT_DOUBLE_EQ(quantile({3, 1, 4, 2}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile({3, 1, 4, 2}, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(quantile({3, 1, 4, 2}, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(quantile({3, 1, 4, 2}, 1.0), 4.0);
  // 10 20 30 40 50, p 0.9: h = 3.6, 40 + 0.6 (50 - 40) = 46; p 0.025: h = 0.1, 10 + 0.1 * 10.
  EXPECT_DOUBLE_EQ(quantile({50, 10, 40, 20, 30}, 0.9), 46.0);
  EXPECT_DOUBLE_EQ(quantile({50, 10, 40, 20, 30}, 0.025), 11.0);
  // Ties, and a single value.
  EXPECT_DOUBLE_EQ(quantile({5, 5, 5, 9}, 0.5), 5.0);
  EXPECT_DOUBLE_EQ(quantile({-3.5}, 0.3), -3.5);
}

TEST(Aggregate, IqmIntervalMatchesTheReferenceBootstrap) {
  const BootstrapOptions options{200, 0.95, 7};
  const Interval iqm = bootstrap_interval(kA, aggregate_iqm, options);
  EXPECT_NEAR(iqm.estimate, 51.333333333333336, 1e-12);
  EXPECT_NEAR(iqm.low, 30.875, 1e-12);
  EXPECT_NEAR(iqm.high, 71.46770833333333, 1e-12);

  const AggregateSummary summary = aggregate_summary(kA, options);
  EXPECT_NEAR(summary.iqm.estimate, 51.333333333333336, 1e-12);
  EXPECT_NEAR(summary.iqm.low, 30.875, 1e-12);
  EXPECT_NEAR(summary.iqm.high, 71.46770833333333, 1e-12);
  EXPECT_EQ(summary.runs, 12);
  EXPECT_EQ(summary.tasks, 3);
}

TEST(Aggregate, SummaryDrawsTheSameResamplesAsEachStatisticAlone) {
  const BootstrapOptions options{300, 0.9, 21};
  const AggregateSummary s = aggregate_summary(kA, options, 80);
  const auto same = [](const Interval& a, const Interval& b) {
    EXPECT_EQ(a.estimate, b.estimate);
    EXPECT_EQ(a.low, b.low);
    EXPECT_EQ(a.high, b.high);
  };
  same(s.iqm, bootstrap_interval(kA, aggregate_iqm, options));
  same(s.median, bootstrap_interval(kA, aggregate_median, options));
  same(s.mean, bootstrap_interval(kA, aggregate_mean, options));
  same(s.optimality_gap,
       bootstrap_interval(
           kA, [](const ScoreMatrix& m) { return aggregate_optimality_gap(m, 80); }, options));
}

TEST(Aggregate, IntervalOfTheMeanOfSymmetricDataContainsTheEstimate) {
  ScoreMatrix scores(5);
  for (auto& task : scores)
    for (int k = 0; k < 10; ++k) task.push_back(50.0 + (k % 2 == 0 ? 1 : -1) * (5.0 * (k / 2)));
  const Interval mean = aggregate_summary(scores).mean;
  EXPECT_DOUBLE_EQ(mean.estimate, 50.0);
  EXPECT_LT(mean.low, 50.0);
  EXPECT_GT(mean.high, 50.0);
}

TEST(Aggregate, OneResampleGivesADegenerateIntervalAtThatResample) {
  // A constant statistic: every resample gives 3.
  const Interval c = bootstrap_interval(kA, [](const ScoreMatrix&) { return 3.0; }, {1, 0.95, 0});
  EXPECT_EQ(c.estimate, 3.0);
  EXPECT_EQ(c.low, 3.0);
  EXPECT_EQ(c.high, 3.0);
  const Interval one = bootstrap_interval(kA, aggregate_mean, {1, 0.95, 5});
  EXPECT_EQ(one.low, one.high);
}

TEST(Aggregate, SameSeedGivesIdenticalIntervalsAndAnotherSeedDifferentOnes) {
  const BootstrapOptions a{500, 0.95, 1234}, b{500, 0.95, 1235};
  const AggregateSummary first = aggregate_summary(kA, a), again = aggregate_summary(kA, a);
  const AggregateSummary other = aggregate_summary(kA, b);
  EXPECT_EQ(first.iqm.low, again.iqm.low);
  EXPECT_EQ(first.iqm.high, again.iqm.high);
  EXPECT_EQ(first.median.low, again.median.low);
  EXPECT_EQ(first.optimality_gap.high, again.optimality_gap.high);
  EXPECT_EQ(first.iqm.estimate, other.iqm.estimate);
  EXPECT_TRUE(first.iqm.low != other.iqm.low || first.iqm.high != other.iqm.high);
  EXPECT_TRUE(first.mean.low != other.mean.low || first.mean.high != other.mean.high);

  const Interval p = probability_of_improvement(kX, kY, a);
  EXPECT_EQ(p.low, probability_of_improvement(kX, kY, a).low);
  EXPECT_EQ(p.high, probability_of_improvement(kX, kY, a).high);
}

TEST(Aggregate, ProbabilityOfImprovementCountsTiesAsHalf) {
  // Task 0, 4 x 3 pairs: 60 beats 50 (1); each 70 beats 50 and ties 70 (1.5, twice);
  // 90 beats all (3): 7 / 12.
  // Task 1, 3 x 4 pairs: 10 beats 5 (1); 20 beats 5 and ties both 20s (2); 30 beats 20 20 5 (3):
  // 6 / 12. Mean (7 / 12 + 6 / 12) / 2 = 13 / 24.
  EXPECT_DOUBLE_EQ(probability_of_improvement(kX, kY, {10, 0.95, 0}).estimate, 13.0 / 24.0);
  // The other way round, ties count for both: 1 - 13 / 24.
  EXPECT_DOUBLE_EQ(probability_of_improvement(kY, kX, {10, 0.95, 0}).estimate, 11.0 / 24.0);
}

TEST(Aggregate, ProbabilityOfImprovementOfIdenticalSettingsIsOneHalf) {
  const Interval p = probability_of_improvement(kA, kA);
  EXPECT_EQ(p.estimate, 0.5);
  EXPECT_LT(p.low, 0.5);
  EXPECT_GT(p.high, 0.5);
}

TEST(Aggregate, ProbabilityOfImprovementOfSeparatedSettingsIsOneWithADegenerateInterval) {
  const ScoreMatrix good = {{80, 95, 90}, {85, 100}}, bad = {{10, 20}, {0, 5, 15, 20}};
  const Interval p = probability_of_improvement(good, bad);
  EXPECT_EQ(p.estimate, 1.0);
  EXPECT_EQ(p.low, 1.0);
  EXPECT_EQ(p.high, 1.0);
  const Interval q = probability_of_improvement(bad, good);
  EXPECT_EQ(q.estimate, 0.0);
  EXPECT_EQ(q.low, 0.0);
  EXPECT_EQ(q.high, 0.0);
}

TEST(Aggregate, ProbabilityOfImprovementIntervalMatchesTheReferenceBootstrap) {
  const Interval p = probability_of_improvement(kX, kY, {100, 0.95, 11});
  EXPECT_NEAR(p.estimate, 0.5416666666666667, 1e-12);
  EXPECT_NEAR(p.low, 0.25, 1e-12);
  EXPECT_NEAR(p.high, 0.875, 1e-12);
}

TEST(Aggregate, PerformanceProfileIsTheMeanOverTasksOfTheFractionStrictlyAboveTau) {
  const auto profile = performance_profile(kA, {50, 80, 2, 99.5}, {50, 0.95, 0});
  ASSERT_EQ(profile.size(), 4u);
  // tau 50: task 0 80 61 of 4, task 1 99.5 57.75 70 of 5, task 2 88 of 3.
  EXPECT_EQ(profile[0].tau, 50.0);
  EXPECT_NEAR(profile[0].fraction, (2.0 / 4 + 3.0 / 5 + 1.0 / 3) / 3, 1e-15);
  // tau 80: 80 itself is not above it; 99.5 and 88.
  EXPECT_NEAR(profile[1].fraction, (0.0 / 4 + 1.0 / 5 + 1.0 / 3) / 3, 1e-15);
  // tau 2: everything; the highest score: nothing.
  EXPECT_EQ(profile[2].fraction, 1.0);
  EXPECT_EQ(profile[2].low, 1.0);
  EXPECT_EQ(profile[2].high, 1.0);
  EXPECT_EQ(profile[3].fraction, 0.0);
  EXPECT_EQ(profile[3].high, 0.0);
}

TEST(Aggregate, PerformanceProfileFractionIsNonIncreasingInTau) {
  const auto taus = profile_taus(kA, 41);
  const auto profile = performance_profile(kA, taus, {400, 0.95, 9});
  ASSERT_EQ(profile.size(), 41u);
  for (std::size_t i = 1; i < profile.size(); ++i) {
    EXPECT_LE(profile[i].fraction, profile[i - 1].fraction) << "tau " << profile[i].tau;
    // The same resamples serve every tau, so the bands are monotone too.
    EXPECT_LE(profile[i].low, profile[i - 1].low) << "tau " << profile[i].tau;
    EXPECT_LE(profile[i].high, profile[i - 1].high) << "tau " << profile[i].tau;
  }
  for (const auto& point : profile) {
    EXPECT_LE(point.low, point.high);
    EXPECT_GE(point.low, 0.0);
    EXPECT_LE(point.high, 1.0);
  }
}

TEST(Aggregate, PerformanceProfilePointMatchesTheReferenceBootstrap) {
  const auto profile = performance_profile(kA, {50}, {100, 0.9, 3});
  ASSERT_EQ(profile.size(), 1u);
  EXPECT_NEAR(profile[0].fraction, 0.4777777777777778, 1e-12);
  EXPECT_NEAR(profile[0].low, 0.2438888888888889, 1e-12);
  EXPECT_NEAR(profile[0].high, 0.6958333333333333, 1e-12);
}

TEST(Aggregate, ProfileTausSpanTheScoresEvenly) {
  EXPECT_THAT(profile_taus({{0, 10}, {5, 2.5}}, 5), testing::ElementsAre(0.0, 2.5, 5.0, 7.5, 10.0));
  EXPECT_THAT(profile_taus({{4, -2}}, 1), testing::ElementsAre(-2.0));
  EXPECT_THAT(profile_taus({{3, 3}}, 3), testing::ElementsAre(3.0, 3.0, 3.0));
  const auto taus = profile_taus(kA);
  ASSERT_EQ(taus.size(), 101u);
  EXPECT_EQ(taus.front(), 3.0);
  EXPECT_EQ(taus.back(), 99.5);
  EXPECT_NEAR(taus[50], 51.25, 1e-12);  // 3 + 50 * 96.5 / 100
}

TEST(Aggregate, IntervalTextShowsTheEstimateAndItsBounds) {
  EXPECT_EQ(interval_text({72.34, 70.06, 74.51}), "72.3 [70.1, 74.5]");
  EXPECT_EQ(interval_text({0.5, 0.25, 0.876}, 2), "0.50 [0.25, 0.88]");
  EXPECT_EQ(interval_text({61.7, 55.2, 68.9}, 0), "62 [55, 69]");
  // A value that rounds to zero has no sign.
  EXPECT_EQ(interval_text({-0.04, -1.26, 0.3}), "0.0 [-1.3, 0.3]");
  EXPECT_EQ(interval_text({std::nan(""), 1, 2}), std::string(kMissingNumber) + " [1.0, 2.0]");
}

TEST(Aggregate, TwoThousandResamplesOfFiveTasksByTenRunsTakeWellUnderASecond) {
  ScoreMatrix scores(5);
  for (std::size_t t = 0; t < scores.size(); ++t)
    for (int k = 0; k < 10; ++k) scores[t].push_back(static_cast<double>((t * 37 + k * 11) % 100));
  const auto start = std::chrono::steady_clock::now();
  const AggregateSummary s = aggregate_summary(scores);
  const Interval p = probability_of_improvement(scores, scores);
  const auto profile = performance_profile(scores, profile_taus(scores));
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(s.runs, 50);
  EXPECT_EQ(p.estimate, 0.5);
  EXPECT_EQ(profile.size(), 101u);
  EXPECT_LT(took.count(), 1.0);
}

TEST(Aggregate, BadInputThrowsNamingTheProblem) {
  EXPECT_THAT(usage_error_of([] { aggregate_mean({}); }), HasSubstr("no scores"));
  EXPECT_THAT(usage_error_of([] {
                aggregate_iqm({{1}, {}, {2}});
              }),
              HasSubstr("task 1 has no runs"));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THAT(usage_error_of([&] {
                aggregate_summary({{1, 2}, {3, nan}});
              }),
              HasSubstr("task 1, run 1 is NaN"));
  EXPECT_THAT(usage_error_of([] { aggregate_median({{std::numeric_limits<double>::infinity()}}); }),
              HasSubstr("task 0, run 0 is infinite"));
  EXPECT_THAT(usage_error_of([] {
                aggregate_summary(kA, {0, 0.95, 0});
              }),
              HasSubstr("resamples must be at least 1, not 0"));
  for (const double c : {0.0, 1.0, 1.5, -0.5, std::nan("")})
    EXPECT_THAT(usage_error_of([c] {
                  aggregate_summary(kA, {10, c, 0});
                }),
                HasSubstr("confidence must be in (0, 1)"))
        << c;
  EXPECT_THAT(usage_error_of([&] { aggregate_optimality_gap(kA, nan); }),
              HasSubstr("gamma is NaN"));
  EXPECT_THAT(usage_error_of([&] {
                bootstrap_interval(kA, [&](const ScoreMatrix&) { return nan; }, {10, 0.95, 0});
              }),
              HasSubstr("the statistic is NaN"));
  EXPECT_THAT(usage_error_of([] { probability_of_improvement(kX, {{1}}); }),
              HasSubstr("X has 2 tasks and Y has 1"));
  EXPECT_THAT(usage_error_of([] {
                probability_of_improvement(kX, {{1}, {}});
              }),
              HasSubstr("setting Y: task 1 has no runs"));
  EXPECT_THAT(usage_error_of([] { probability_of_improvement({}, kY); }),
              HasSubstr("setting X: no scores"));
  EXPECT_THAT(usage_error_of([&] {
                performance_profile(kA, {10, nan});
              }),
              HasSubstr("threshold 1 of the performance profile is NaN"));
  EXPECT_THAT(usage_error_of([] { profile_taus(kA, 0); }), HasSubstr("at least 1 threshold"));
  EXPECT_THAT(usage_error_of([] { quantile({}, 0.5); }), HasSubstr("no values"));
  EXPECT_THAT(usage_error_of([] { quantile({1, 2}, 1.5); }), HasSubstr("must be in [0, 1]"));
  EXPECT_THAT(usage_error_of([&] { quantile({1, nan}, 0.5); }), HasSubstr("value 1"));
}

}  // namespace
}  // namespace dstudio::analysis
