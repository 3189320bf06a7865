// The studio's CSV writer, read back by Python's csv module (a standard reader, not ours): every
// field comes back exactly, whatever it holds, and every writer of a table goes through it.

#include "dstudio/common/csv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>

#include "csv_check.h"
#include "dstudio/analysis/analysis_registry.h"
#include "dstudio/analysis/curves.h"
#include "dstudio/analysis/window_maps.h"
#include "dstudio/common/error.h"
#include "h5_fixture.h"

namespace dstudio {
namespace {

namespace fs = std::filesystem;

TEST(CsvWriter, AnyTextComesBackExactlyThroughAStandardReader) {
  test::TempDir dir;
  // What broke a sweep's groups.csv (JSON in a field), and the rest of what RFC 4180 quotes.
  const std::vector<std::string> texts = {
      R"(dt on hopper config {"hidden":32,"layers":1} training {"steps":100})",
      "a, b",
      "say \"hi\"",
      "two\nlines",
      "carriage\r\nreturn",
      " leading",
      "trailing ",
      "",
      "\"",
      ",",
      "plain",
      "ünïcödé · 1,5 ± 0,2",
      "tab\there"};
  CsvWriter csv({"text", "value", "name, with comma"});
  for (std::size_t i = 0; i < texts.size(); ++i) {
    csv << texts[i] << static_cast<double>(i) + 0.5 << static_cast<int>(i);
    csv.end_row();
  }
  csv.write(dir / "t.csv");
  const auto rows = test::read_csv_with_python(dir / "t.csv");
  ASSERT_EQ(rows.size(), texts.size() + 1);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"text", "value", "name, with comma"}));
  for (std::size_t i = 0; i < texts.size(); ++i) {
    ASSERT_EQ(rows[i + 1].size(), 3u) << "row " << i;
    EXPECT_EQ(rows[i + 1][0], texts[i]) << "row " << i;
    EXPECT_EQ(std::stod(rows[i + 1][1]), static_cast<double>(i) + 0.5);
    EXPECT_EQ(rows[i + 1][2], std::to_string(i));
  }
}

TEST(CsvWriter, NumbersKeepTheirDigitsAndMissingValuesAreEmpty) {
  CsvWriter csv({"a", "b", "c", "d", "e"}, 9);
  csv << 0.1 << std::numeric_limits<double>::quiet_NaN() << std::numeric_limits<double>::infinity()
      << -7 << std::int64_t{1} << 40;
  EXPECT_THROW(csv.end_row(), Error) << "six fields under five columns";
  CsvWriter ok({"a", "b", "c", "d"}, 9);
  ok << 1.0 / 3.0 << std::numeric_limits<double>::quiet_NaN()
     << std::uint64_t{18446744073709551615ull};
  ok.number(M_PI, 3);
  ok.end_row();
  EXPECT_EQ(ok.text(), "a,b,c,d\n0.333333333,,18446744073709551615,3.14\n");
  EXPECT_EQ(ok.rows(), 1u);
  CsvWriter open({"a", "b"});
  open << 1;
  EXPECT_THROW((void)open.text(), Error) << "a row still open";
  EXPECT_THROW(CsvWriter({}), Error);
}

TEST(CsvWriter, AppendedRowsHaveNoHeader) {
  CsvWriter row({"step", "loss"}, 6, /*header_line=*/false);
  row << 10 << 0.25;
  row.end_row();
  EXPECT_EQ(row.text(), "10,0.25\n");
}

// Every table writer of core: the analyses' tables, run metrics, curve groups and maps.
TEST(CsvWriter, EveryCoreTableWriterParsesToItsHeadersWidth) {
  test::TempDir dir;
  analysis::AnalysisResult result;
  result.summary_json = "{}";
  result.tables.push_back(
      {"groups",
       {"group", "score"},
       {{std::string(R"({"hidden":32,"layers":1})"), 1.5}, {std::string("a,b"), std::nan("")}}});
  const auto written = analysis::write_result_files(result, (dir / "analysis").string());
  ASSERT_EQ(written.size(), 2u);
  const auto rows = test::read_csv_with_python(dir / "analysis" / "groups.csv");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1][0], R"({"hidden":32,"layers":1})");
  EXPECT_EQ(rows[2], (std::vector<std::string>{"a,b", ""}));

  fs::create_directories(dir / "metrics");
  fs::create_directories(dir / "curves");
  analysis::RunMetrics metrics;
  metrics.columns["loss"] = {{1, 2, 3}, {0.5, 0.25, 0.125}};
  metrics.columns["eval, normalised"] = {{2}, {41.5}};
  analysis::write_run_metrics_csv(dir / "metrics" / "run.csv", metrics);

  const analysis::Curve a{{0, 1, 2}, {1, 2, 3}}, b{{0, 1, 2}, {3, 2, 1}};
  const auto groups = analysis::group_curves({{"dc \"hidden\": 32", &a}, {"dc \"hidden\": 32", &b}},
                                             0.0, analysis::Band::MeanStd);
  analysis::write_curve_groups_csv(dir / "curves" / "groups.csv", groups, 0.0,
                                   analysis::Band::MeanStd);

  analysis::TokenMatrix map{2, {1.0, 0.0, 0.5, 0.5}};
  analysis::write_map_csv(dir / "map.csv", map, {"R,1", "s\"1"});  // throws when not written

  const auto report = test::check_csv_files(dir.path());
  EXPECT_TRUE(test::all_ok(report)) << test::joined(report);
  EXPECT_EQ(report.size(), 4u) << test::joined(report);
  const auto metric_rows = test::read_csv_with_python(dir / "metrics" / "run.csv");
  EXPECT_EQ(metric_rows[0], (std::vector<std::string>{"step", "eval, normalised", "loss"}));
  EXPECT_EQ(metric_rows[2], (std::vector<std::string>{"2", "41.5", "0.25"}));
  const auto map_rows = test::read_csv_with_python(dir / "map.csv");
  EXPECT_EQ(map_rows[0], (std::vector<std::string>{"query", "R,1", "s\"1"}));
  EXPECT_EQ(map_rows[2], (std::vector<std::string>{"s\"1", "0.5", "0.5"}));
}

}  // namespace
}  // namespace dstudio
