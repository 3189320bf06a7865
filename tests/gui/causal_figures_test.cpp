// The causal analyses' figures: at the venues' widths they keep their text apart and on the page
// (each of the seven analyses run on a small model and a dataset written here, its figures drawn
// at ICML, NeurIPS and IEEE sizes under the text-layout check); the patching stream names each
// token by R/s/a and step and its colours tell DT's small and large fractions apart; the
// closed-loop figures say when their intervals rest on too few episodes.

// LibTorch before Qt: Qt's `slots` macro breaks LibTorch's headers.
#include <torch/torch.h>

// The rest.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <QDir>
#include <QImage>
#include <QSignalSpy>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analyses_panel.h"
#include "dstudio/analysis/analysis_registry.h"
#include "dstudio/models/checkpoint_model.h"
#include "dstudio/models/decision_model.h"
#include "dstudio/models/intervene.h"
#include "dstudio/viz/analysis_view.h"
#include "dstudio/viz/figures.h"
#include "h5_fixture.h"
#include "test_application.h"

namespace dstudio::viz {
namespace {

namespace fs = std::filesystem;
using testing::HasSubstr;

class CausalFigures : public testing::Test {
 protected:
  // Ten episodes of 30 steps with hopper's shapes, and random DTs named as a long run folder
  // would name them (the titles carry it): two heads, two layers and K 5; and the shape of the
  // shipped DT, three layers and K 20, whose stream has DT's 180 cells.
  static void SetUpTestSuite() {
    test::ensure_application();
    dir_ = new test::TempDir;
    test::D4rlSpec spec;
    spec.n = 300;
    spec.obs_dim = 11;
    spec.act_dim = 3;
    spec.timeouts.assign(300, 0);
    for (int k = 29; k < 300; k += 30) spec.timeouts[static_cast<std::size_t>(k)] = 1;
    test::write_d4rl_fixture(dataset(), spec);
    save_model(small(), 2, 2, 5);
    save_model(dt_shaped(), 3, 1, 20);
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  static void save_model(const fs::path& path, int layers, int heads, int context) {
    auto c = models::make_variant("dt");
    c.state_dim = 11;
    c.act_dim = 3;
    c.hidden = 32;
    c.layers = layers;
    c.heads = heads;
    c.context_length = context;
    torch::manual_seed(3);
    models::DecisionModel model(c);
    models::CheckpointInfo info;
    info.variant = c;
    info.env_id = "hopper";
    info.dataset_path = dataset().string();  // the window's analyses use the checkpoint's own
    info.state_mean.assign(11, 0.0f);
    info.state_std.assign(11, 100.0f);
    info.metrics = "{}";
    models::save_weights_checkpoint(path, model, info, "test");
  }

  static fs::path dataset() { return *dir_ / "data.hdf5"; }
  static fs::path small() { return *dir_ / "hopper-medium-expert-dt-seed0-20261125.pt"; }
  static fs::path dt_shaped() { return *dir_ / "hopper-medium-expert-dt-k20.pt"; }

  static analysis::AnalysisResult run(const std::string& name,
                                      const std::map<std::string, std::string>& options,
                                      const fs::path& checkpoint = small()) {
    const auto definition = analysis::analysis_registry().find(name);
    EXPECT_NE(definition, nullptr);
    if (!definition) return {};
    analysis::AnalysisInputs in;
    in.checkpoint = checkpoint.string();
    in.dataset = dataset().string();
    in.options = analysis::resolve_options(*definition, options);
    return definition->run(in, {});
  }

  static const analysis::AnalysisFigure* figure(const analysis::AnalysisResult& result,
                                                const std::string& name) {
    for (const auto& f : result.figures)
      if (f.name == name) return &f;
    return nullptr;
  }

  // Every text the figure draws, one line of it each.
  static std::vector<std::string> texts(const TextLayout& layout) {
    std::vector<std::string> out;
    for (const auto& t : layout.texts) out.push_back(t.text.toStdString());
    return out;
  }

  static test::TempDir* dir_;
};
test::TempDir* CausalFigures::dir_ = nullptr;

TEST_F(CausalFigures, EveryCausalAnalysisAtIcmlNeuripsAndIeeeKeepsItsTextApartAndOnThePage) {
  const std::vector<std::pair<std::string, std::map<std::string, std::string>>> runs{
      {"knockout", {{"windows", "8"}, {"episodes", "2"}}},
      {"heads", {{"windows", "8"}, {"episodes", "1"}}},
      {"action-lens", {{"windows", "8"}}},
      // A random model hardly heeds its target: far apart, so that its action moves.
      {"patching", {{"windows", "8"}, {"high", "20000"}, {"low", "0"}}},
      {"attribution", {{"windows", "8"}}},
      {"probes", {{"windows", "40"}}},
      {"steering", {{"windows", "8"}, {"episodes", "1"}, {"alphas", "0,1,2"}}}};
  std::vector<analysis::AnalysisResult> results;
  for (const auto& [name, options] : runs) {
    SCOPED_TRACE(name);
    results.push_back(run(name, options));
    EXPECT_FALSE(results.back().figures.empty());
  }
  for (const char* venue : {"icml", "neurips", "ieee"}) {
    SCOPED_TRACE(venue);
    TextLayoutLog log;
    auto style = *venue_preset(venue);
    style.svg = style.pdf = style.png = false;  // drawn and laid out, not written
    std::size_t figures = 0;
    for (const auto& result : results)
      for (const auto& figure : result.figures) {
        save_analysis_figure((*dir_ / venue / figure.name).string(), figure, style, false);
        ++figures;
      }
    EXPECT_EQ(log.figures.size(), figures);
    std::string problems;
    for (const auto& [base, layout] : log.figures)
      for (const auto& problem : layout.problems())
        problems += fs::path(base).filename().string() + ": " + problem + "\n";
    EXPECT_EQ(problems, "");
  }
}

// The steering analysis run in the window keeps its directions where the summary says, so the
// live viewer can steer with them: each file is read back by the steer spec's reader for the same
// checkpoint.
TEST_F(CausalFigures, TheWindowsSteeringKeepsItsDirectionsForLiveSteering) {
  test::TempDir dir;
  const auto checkpoint = small();
  studio::AnalysesPanel panel;
  panel.setResultsDirectory(QString::fromStdString((dir / "analyses").string()));
  panel.setCheckpoint(QString::fromStdString(checkpoint.string()), "steered");
  auto* view = panel.view("steering");
  ASSERT_NE(view, nullptr);
  for (const auto& [key, value] : std::map<std::string, std::string>{
           {"windows", "4"}, {"episodes", "1"}, {"alphas", "0,1"}, {"layers", "2"}})
    ASSERT_TRUE(view->setOption(key, value)) << key;
  QSignalSpy written(&panel, &studio::AnalysesPanel::resultsWritten);
  QSignalSpy shown(&panel, &studio::AnalysesPanel::resultShown);
  ASSERT_TRUE(panel.run("steering"));
  ASSERT_TRUE(shown.wait(240000)) << view->status().toStdString();
  ASSERT_EQ(written.size(), 1);
  const QString folder = panel.writtenFolder("steering");
  EXPECT_EQ(written.front().at(1).toString(), folder);
  EXPECT_TRUE(folder.startsWith(QString::fromStdString((dir / "analyses").string())));
  EXPECT_TRUE(view->status().contains(folder)) << view->status().toStdString();
  for (const char* file : {"direction_L1.json", "direction_L2.json", "summary.json"})
    EXPECT_TRUE(QFileInfo::exists(QDir(folder).filePath(file))) << file;
  auto read = models::read_checkpoint_info(checkpoint);
  read.path = checkpoint.string();
  const auto direction =
      models::read_direction(QDir(folder).filePath("direction_L2.json").toStdString(), read);
  EXPECT_EQ(direction.numel(), read.variant.hidden);
}

// The stream's 3K tokens are too many to name one a column at a column's width: the grid has a
// row a layer and token type (R, s, a) and a column a step, so every cell is named by its token,
// and the cells are the patching table's.
TEST_F(CausalFigures, ThePatchingStreamNamesEachTokenByItsTypeAndStep) {
  const auto result = run("patching", {{"windows", "8"}, {"high", "20000"}, {"low", "0"}});
  const auto* stream = figure(result, "patching_stream");
  ASSERT_NE(stream, nullptr);
  EXPECT_EQ(stream->row_labels,
            (std::vector<std::string>{"L1 R", "L1 s", "L1 a", "L2 R", "L2 s", "L2 a"}));
  EXPECT_EQ(stream->labels, (std::vector<std::string>{"1", "2", "3", "4", "5"}));
  EXPECT_EQ(stream->x_label, "step");
  ASSERT_EQ(stream->cells.size(), 30u);
  // Each cell is the table's fraction of resid at its layer and token ("s3": step 3's state).
  ASSERT_EQ(result.tables.size(), 1u);
  int checked = 0;
  for (const auto& row : result.tables.front().rows) {
    if (std::get<std::string>(row[0]) != "resid") continue;
    const int layer = static_cast<int>(std::get<double>(row[1]));
    const auto token = std::get<std::string>(row[2]);
    const auto type = std::string(1, token[0]);
    const int step = std::stoi(token.substr(1));
    const auto at = static_cast<std::size_t>((layer - 1) * 3 + (type == "R"   ? 0
                                                                : type == "s" ? 1
                                                                              : 2));
    const double cell = stream->cells[at * 5 + static_cast<std::size_t>(step - 1)];
    const double fraction = std::get<double>(row[3]);
    if (std::isnan(fraction))
      EXPECT_TRUE(std::isnan(cell)) << token;
    else
      EXPECT_EQ(cell, fraction) << "L" << layer << " " << token;
    ++checked;
  }
  EXPECT_EQ(checked, 30);
  // Drawn at ICML's column: every row's name and every step's number are on the figure.
  TextLayoutLog log;
  auto style = *venue_preset("icml");
  style.svg = style.pdf = style.png = false;
  save_analysis_figure((*dir_ / "stream").string(), *stream, style, false);
  ASSERT_EQ(log.figures.size(), 1u);
  const auto drawn = texts(log.figures.front().second);
  for (const auto& name : stream->row_labels)
    EXPECT_NE(std::find(drawn.begin(), drawn.end(), name), drawn.end()) << name;
  for (const char* step : {"1", "2", "3", "4", "5"})
    EXPECT_NE(std::find(drawn.begin(), drawn.end(), step), drawn.end()) << step;
  EXPECT_NE(std::find(drawn.begin(), drawn.end(), "step"), drawn.end());
}

// DT's fractions, as the shipped checkpoint gives them, on the stream figure the analysis draws:
// 1.00 after the last block at the action's token, 0.79 after the second, 0.50 after the first,
// about 0.015 at every past R token after the first block, 0 elsewhere. The colours tell 1.00
// from 0.79 (no range clipped at the 99th percentile) and 0.015 from 0 (the square-root scale),
// and the colour bar reads as small as 0.01.
TEST_F(CausalFigures, ThePatchingColoursTellOneFromPoint79AndPoint015FromNothing) {
  const auto result =
      run("patching", {{"windows", "4"}, {"high", "20000"}, {"low", "0"}}, dt_shaped());
  const auto* found = figure(result, "patching_stream");
  ASSERT_NE(found, nullptr);
  auto stream = *found;
  const std::size_t rows = stream.row_labels.size(), cols = stream.labels.size();
  ASSERT_EQ(rows, 9u);
  ASSERT_EQ(cols, 20u);
  const auto cell = [&](const std::string& row, int step) -> double& {
    const auto r = static_cast<std::size_t>(
        std::find(stream.row_labels.begin(), stream.row_labels.end(), row) -
        stream.row_labels.begin());
    return stream.cells[r * cols + static_cast<std::size_t>(step - 1)];
  };
  std::fill(stream.cells.begin(), stream.cells.end(), 0.0);
  for (int step = 1; step <= 20; ++step) cell("L1 R", step) = 0.015;
  cell("L1 s", 20) = 0.50;
  cell("L2 s", 20) = 0.79;
  cell("L3 s", 20) = 1.00;
  TextLayoutLog log;
  auto style = *venue_preset("icml");
  style.svg = style.pdf = false;
  const auto base = (*dir_ / "dt-stream").string();
  save_analysis_figure(base, stream, style, false);
  ASSERT_EQ(log.figures.size(), 1u);
  const auto& layout = log.figures.front().second;
  EXPECT_EQ(layout.problems(), std::vector<std::string>{});
  const QImage image(QString::fromStdString(base + ".png"));
  ASSERT_FALSE(image.isNull());
  // The centre of each cell in the PNG: the grid fills the data rectangle (points), scaled to the
  // dpi.
  const double scale = image.width() / layout.page.width();
  const QRectF& area = layout.plot_area;
  const auto colour = [&](const std::string& row, int step) {
    const auto r =
        static_cast<double>(std::find(stream.row_labels.begin(), stream.row_labels.end(), row) -
                            stream.row_labels.begin());
    const double x = area.left() + (step - 0.5) * area.width() / static_cast<double>(cols);
    const double y = area.top() + (r + 0.5) * area.height() / static_cast<double>(rows);
    return image.pixelColor(static_cast<int>(x * scale), static_cast<int>(y * scale));
  };
  const auto distance = [](const QColor& a, const QColor& b) {
    return std::hypot(a.red() - b.red(), a.green() - b.green(), a.blue() - b.blue());
  };
  EXPECT_GT(distance(colour("L3 s", 20), colour("L2 s", 20)), 25.0) << "1.00 against 0.79";
  EXPECT_GT(distance(colour("L2 s", 20), colour("L1 s", 20)), 25.0) << "0.79 against 0.50";
  EXPECT_GT(distance(colour("L1 R", 5), colour("L2 R", 5)), 25.0) << "0.015 against 0";
  EXPECT_LT(distance(colour("L1 R", 5), colour("L1 R", 12)), 1.0) << "0.015 against 0.015";
  // The colour bar says what it is and reads at the small end.
  const auto drawn = texts(layout);
  std::string all;
  for (const auto& t : drawn) all += t + " ";
  EXPECT_THAT(all, HasSubstr("square-root scale"));
  EXPECT_NE(std::find(drawn.begin(), drawn.end(), "0.01"), drawn.end()) << all;
  EXPECT_NE(std::find(drawn.begin(), drawn.end(), "1"), drawn.end()) << all;
}

// Two episodes make an interval that means little: the summary warns, and the figures say so
// under the data; with ten episodes neither does.
TEST_F(CausalFigures, ClosedLoopFiguresSayWhenTooFewEpisodesMakeTheirIntervals) {
  const auto few = run("knockout", {{"windows", "2"}, {"episodes", "2"}});
  const auto summary = nlohmann::json::parse(few.summary_json);
  ASSERT_TRUE(summary.contains("warnings")) << summary.dump();
  EXPECT_THAT(summary["warnings"][0].get<std::string>(),
              HasSubstr("the 95% intervals rest on 2 episodes each"));
  const auto* score = figure(few, "knockout_score");
  ASSERT_NE(score, nullptr);
  EXPECT_THAT(score->note, HasSubstr("n = 2 episodes each"));
  EXPECT_EQ(figure(few, "knockout_action_error")->note, "") << "open loop: no episodes";
  // The interval is drawn as it is, not as a symmetric spread: its ends are the series' own.
  ASSERT_EQ(score->series.size(), 1u);
  EXPECT_EQ(score->series[0].low.size(), score->series[0].y.size());
  for (std::size_t k = 0; k < score->series[0].y.size(); ++k) {
    EXPECT_LE(score->series[0].low[k], score->series[0].y[k]);
    EXPECT_GE(score->series[0].high[k], score->series[0].y[k]);
  }
  TextLayoutLog log;
  auto style = *venue_preset("icml");
  style.svg = style.pdf = style.png = false;
  fs::create_directories(*dir_ / "few");
  const auto base = (*dir_ / "few" / "knockout_score").string();
  const auto written = save_analysis_figure(base, *score, style, true);
  ASSERT_EQ(log.figures.size(), 1u);
  std::string all;
  for (const auto& t : texts(log.figures.front().second)) all += t + " ";
  EXPECT_THAT(all, HasSubstr("too rough to read"));
  EXPECT_EQ(log.figures.front().second.problems(), std::vector<std::string>{});
  // The CSV holds the interval's ends beside the spread.
  ASSERT_EQ(written.size(), 1u);
  std::ifstream csv(base + ".csv");
  std::string header;
  std::getline(csv, header);
  EXPECT_EQ(header, "series,x,y,spread,low,high");

  const auto enough = run("knockout", {{"windows", "2"}, {"episodes", "10"}});
  EXPECT_FALSE(nlohmann::json::parse(enough.summary_json).contains("warnings"));
  EXPECT_EQ(figure(enough, "knockout_score")->note, "");
  // Left to their defaults, the closed-loop analyses play enough episodes to need no warning.
  for (const char* name : {"knockout", "heads", "steering"}) {
    const auto definition = analysis::analysis_registry().find(name);
    ASSERT_NE(definition, nullptr) << name;
    EXPECT_GE(analysis::resolve_options(*definition, {}).integer("episodes"), 10) << name;
  }
}

}  // namespace
}  // namespace dstudio::viz
