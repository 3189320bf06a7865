// Training curves: EMA smoothing, mean and spread across runs, and run folders, against values
// worked out by hand.

#include "dstudio/analysis/curves.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>

#include "dstudio/analysis/metrics_row.h"
#include "dstudio/common/error.h"
#include "h5_fixture.h"

namespace dstudio::analysis {
namespace {

TEST(Curves, EmaFollowsTheRecurrenceFromTheFirstValue) {
  // s0 = 1; s1 = .5 * 1 + .5 * 3 = 2; s2 = .5 * 2 + .5 * 2 = 2; s3 = .5 * 2 + .5 * 6 = 4.
  EXPECT_THAT(ema_smooth({1, 3, 2, 6}, 0.5), testing::ElementsAre(1.0, 2.0, 2.0, 4.0));
  // s1 = .9 * 10 + .1 * 0 = 9; s2 = .9 * 9 + .1 * 0 = 8.1.
  const auto s = ema_smooth({10, 0, 0}, 0.9);
  EXPECT_DOUBLE_EQ(s[1], 9.0);
  EXPECT_DOUBLE_EQ(s[2], 8.1);
  EXPECT_THAT(ema_smooth({4, -1, 7}, 0.0), testing::ElementsAre(4.0, -1.0, 7.0));
  EXPECT_TRUE(ema_smooth({}, 0.5).empty());
  EXPECT_THROW(ema_smooth({1}, 1.0), dstudio::UsageError);
  EXPECT_THROW(ema_smooth({1}, -0.1), dstudio::UsageError);
}

TEST(Curves, EmaSkipsNonFiniteValues) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto s = ema_smooth({2, nan, 4}, 0.5);
  EXPECT_DOUBLE_EQ(s[0], 2.0);
  EXPECT_TRUE(std::isnan(s[1]));
  EXPECT_DOUBLE_EQ(s[2], 3.0);  // .5 * 2 + .5 * 4: the NaN left the average alone
}

TEST(Curves, SpreadOfTwoSeedsOnTheSameSteps) {
  const Curve a{{10, 20, 30}, {1.0, 4.0, 2.0}};
  const Curve b{{10, 20, 30}, {3.0, 2.0, 2.0}};
  const auto s = curve_spread({a, b});
  EXPECT_THAT(s.x, testing::ElementsAre(10.0, 20.0, 30.0));
  EXPECT_THAT(s.mean, testing::ElementsAre(2.0, 3.0, 2.0));
  EXPECT_THAT(s.std, testing::ElementsAre(1.0, 1.0, 0.0));  // population: |a - b| / 2
  EXPECT_THAT(s.min, testing::ElementsAre(1.0, 2.0, 2.0));
  EXPECT_THAT(s.max, testing::ElementsAre(3.0, 4.0, 2.0));
  EXPECT_THAT(s.count, testing::ElementsAre(2, 2, 2));
}

TEST(Curves, SpreadInterpolatesAndCoversEachCurveOnlyInItsRange) {
  // b logs every 20 steps and stops at 20; a logs every 10 steps up to 30.
  const Curve a{{10, 20, 30}, {2.0, 2.0, 8.0}};
  const Curve b{{0, 20}, {0.0, 4.0}};
  const Curve c{{5, 15, 25, 35}, {9.0, 9.0, 9.0, 9.0}};
  const auto s = curve_spread({a, b});
  EXPECT_THAT(s.x, testing::ElementsAre(0.0, 10.0, 20.0, 30.0));
  // Step 0: b only. Step 10: a 2, b halfway from 0 to 4 = 2. Step 20: (2 + 4) / 2. Step 30: a only.
  EXPECT_THAT(s.mean, testing::ElementsAre(0.0, 2.0, 3.0, 8.0));
  EXPECT_THAT(s.count, testing::ElementsAre(1, 2, 2, 1));
  const auto three = curve_spread({a, b, c});
  ASSERT_EQ(three.x.size(), 8u);  // 0 5 10 15 20 25 30 35
  EXPECT_DOUBLE_EQ(three.x[1], 5.0);
  EXPECT_DOUBLE_EQ(three.mean[1], (1.0 + 9.0) / 2.0);  // a does not reach back to 5
  EXPECT_DOUBLE_EQ(three.mean[5], (5.0 + 9.0) / 2.0);  // step 25: a halfway from 2 to 8, b ended
  const double m = (2.0 + 2.0 + 9.0) / 3.0;            // step 10
  EXPECT_DOUBLE_EQ(three.std[2], std::sqrt(((2 - m) * (2 - m) * 2 + (9 - m) * (9 - m)) / 3.0));
}

TEST(Curves, SpreadLeavesOutNonFiniteValuesAndEmptyCurves) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto s = curve_spread({Curve{{1, 2}, {nan, 5.0}}, Curve{{1, 2}, {3.0, 7.0}}, Curve{}});
  EXPECT_THAT(s.mean, testing::ElementsAre(3.0, 6.0));
  EXPECT_THAT(s.count, testing::ElementsAre(1, 2));
  EXPECT_TRUE(curve_spread({}).x.empty());
}

TEST(Curves, ReadsARunFolderFromJsonLinesWithEvaluations) {
  test::TempDir dir;
  std::ofstream(dir / "metrics.jsonl")
      << R"({"step":5,"loss":0.5,"learning_rate":0.001,"steps_per_second":20.0})"
         "\n"
      << R"({"step":10,"loss":0.25,"learning_rate":0.001,"steps_per_second":21.0,"eval_score":12.5,"entropy_layer1":1.5})"
         "\n";
  std::ofstream(dir / "metrics.csv") << "step,loss\n5,99\n";  // ignored: the JSON lines win
  const auto m = read_run_metrics(dir.path());
  EXPECT_THAT(m.columns.at("loss").x, testing::ElementsAre(5.0, 10.0));
  EXPECT_THAT(m.columns.at("loss").y, testing::ElementsAre(0.5, 0.25));
  EXPECT_THAT(m.columns.at("eval_score").x, testing::ElementsAre(10.0));
  EXPECT_THAT(m.columns.at("entropy_layer1").y, testing::ElementsAre(1.5));
  EXPECT_THAT(m.source, testing::EndsWith("metrics.jsonl"));
}

// The trainer's row as it was written before it had a type of its own (the line of a run made
// then, byte for byte), read back whole; what is no row is said to be none.
TEST(Curves, AMetricsRowWritesAsBeforeAndReadsBack) {
  namespace m = dstudio::analysis::metrics;
  const auto row = m::metrics_row_json(2500, 0.125, 1e-4, 37.5,
                                       {{"eval_score", 61.25}, {"entropy_layer1", 1.75}});
  EXPECT_EQ(row.dump(),
            R"({"step":2500,"loss":0.125,"learning_rate":0.0001,"steps_per_second":37.5,)"
            R"("entropy_layer1":1.75,"eval_score":61.25})");
  const auto back = m::read_metrics_row(row.dump());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->step, 2500);
  EXPECT_EQ(back->columns.size(), 5u);
  EXPECT_EQ(back->get(m::kLearningRate), 1e-4);
  EXPECT_EQ(back->get(m::kEvalScore), 61.25);
  EXPECT_FALSE(back->get(m::kEvalReturn));
  EXPECT_FALSE(m::read_metrics_row(R"({"step":25)"));             // cut short by a crash
  EXPECT_FALSE(m::read_metrics_row(R"({"loss":0.5})"));           // no step
  EXPECT_FALSE(m::read_metrics_row(R"({"step":2.5,"loss":1})"));  // not a whole step
  EXPECT_FALSE(m::read_metrics_row("[1, 2]"));
  // A column that is not a number (a later version's text) is not a curve.
  EXPECT_EQ(m::read_metrics_row(R"({"step":1,"note":"x","loss":2})")->columns.size(), 1u);
  // A checkpoint's metrics as another writer left them: the columns without a step.
  EXPECT_EQ(m::read_metrics_columns(R"({"loss":0.5})"),
            (std::map<std::string, double>{{"loss", 0.5}}));
  EXPECT_TRUE(m::read_metrics_columns("").empty());
}

TEST(Curves, ReadsARunFolderFromCsvAndExplainsAnEmptyOne) {
  test::TempDir dir;
  std::ofstream(dir / "metrics.csv")
      << "step,loss,learning_rate,steps_per_second\n100,0.75,0.0001,50\n200,0.5,0.0002,55\n300,0.2";
  const auto m = read_run_metrics(dir.path());
  EXPECT_THAT(m.columns.at("loss").y,
              testing::ElementsAre(0.75, 0.5));  // the truncated row is dropped
  EXPECT_THAT(m.columns.at("steps_per_second").x, testing::ElementsAre(100.0, 200.0));

  test::TempDir empty;
  try {
    read_run_metrics(empty.path());
    FAIL() << "an empty folder has no metrics";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("no training metrics"));
    EXPECT_THAT(e.what(), testing::HasSubstr(empty.path().string()));
  }
  EXPECT_THROW(read_run_metrics(empty / "missing"), std::runtime_error);
}

// A run's metrics written as CSV read back as the same curves, the evaluations' sparse columns
// (empty cells between evaluations) included.
TEST(Curves, RunMetricsWrittenAsCsvReadBackExactly) {
  test::TempDir dir;
  std::ofstream(dir / "metrics.jsonl")
      << R"({"step":5,"loss":0.1,"learning_rate":0.001})"
         "\n"
      << R"({"step":10,"loss":0.30000000000000004,"learning_rate":0.001,"eval_score":12.5,"entropy_layer1":1.5})"
         "\n"
      << R"({"step":15,"loss":1e-07,"learning_rate":0.0005})"
         "\n";
  const auto m = read_run_metrics(dir.path());
  test::TempDir out;
  write_run_metrics_csv(out / "metrics.csv", m);
  std::ifstream in(out / "metrics.csv");
  std::string header, row;
  std::getline(in, header);
  EXPECT_EQ(header, "step,entropy_layer1,eval_score,learning_rate,loss");
  std::getline(in, row);
  EXPECT_EQ(row, "5,,,0.001,0.10000000000000001");
  const auto back = read_run_metrics(out.path());
  ASSERT_EQ(back.columns.size(), m.columns.size());
  for (const auto& [name, curve] : m.columns) {
    EXPECT_EQ(back.columns.at(name).x, curve.x) << name;
    EXPECT_EQ(back.columns.at(name).y, curve.y) << name;
  }
  EXPECT_THAT(back.columns.at("eval_score").x, testing::ElementsAre(10.0));
}

TEST(Curves, GroupsAverageTheirRunsByLabelInTheOrderLabelsAppear) {
  const Curve a1{{10, 20}, {0.8, 0.4}}, b{{10, 20}, {1.0, 1.0}}, a2{{10, 20}, {0.6, 0.2}};
  const std::vector<std::pair<std::string, const Curve*>> curves = {
      {"dt", &a1}, {"dc", &b}, {"dt", &a2}};
  auto groups = group_curves(curves, 0.0, Band::MinMax);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].label, "dt");
  EXPECT_EQ(groups[0].runs, 2);
  EXPECT_EQ(groups[1].label, "dc");
  EXPECT_EQ(groups[1].runs, 1);
  // The mean of (0.8, 0.6) and (0.4, 0.2); the band their range.
  EXPECT_NEAR(groups[0].mean[0], 0.7, 1e-12);
  EXPECT_NEAR(groups[0].mean[1], 0.3, 1e-12);
  EXPECT_NEAR(groups[0].low[0], 0.6, 1e-12);
  EXPECT_NEAR(groups[0].high[0], 0.8, 1e-12);
  // One standard deviation (population: 0.1) about the mean.
  groups = group_curves(curves, 0.0, Band::MeanStd);
  EXPECT_NEAR(groups[0].low[1], 0.2, 1e-12);
  EXPECT_NEAR(groups[0].high[1], 0.4, 1e-12);
  // Smoothing 0.5: the second point is 0.5 * 0.7 + 0.5 * 0.3 = 0.5; the raw mean stays 0.3.
  groups = group_curves(curves, 0.5, Band::MinMax);
  EXPECT_NEAR(groups[0].mean[1], 0.5, 1e-12);
  EXPECT_NEAR(groups[0].raw_mean[1], 0.3, 1e-12);
}

TEST(Curves, GroupsAreWrittenAsCsvWithTheirBandAndRawMean) {
  test::TempDir dir;
  const Curve a{{10, 20}, {0.8, 0.4}}, b{{10}, {2.0}};
  const auto groups = group_curves({{"hier-conv,pooling", &a}, {"dc", &b}}, 0.0, Band::MeanStd);
  const auto path = dir / "compare.csv";
  write_curve_groups_csv(path, groups, 0.25, Band::MeanStd);
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "group,smoothing,step,mean,mean_minus_std,mean_plus_std,raw_mean");
  EXPECT_EQ(lines[1],
            "\"hier-conv,pooling\",0.25,10,0.8,0.8,0.8,0.8");  // a comma in a label is quoted
  EXPECT_EQ(lines[3], "dc,0.25,10,2,2,2,2");
  EXPECT_THROW(
      write_curve_groups_csv(dir / "no" / "such" / "folder.csv", groups, 0.0, Band::MinMax), Error);
}

}  // namespace
}  // namespace dstudio::analysis
