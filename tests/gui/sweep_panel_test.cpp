// The Sweep tab on a sweep folder written here, with cells whose task.json says what a test
// chose (no training): cells grouped by dataset and setting, the groups' means and standard
// deviations against values worked out independently, the figure's bars and error bars equal to
// them, a change on disk shown at the next read with the selection and expansion kept, damaged
// files named and survived, and the seeds compared by setting in the Training tab.

#include "sweep_panel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QJsonObject>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTreeWidget>
#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>

#include "dstudio/sweep/sweep.h"
#include "dstudio/viz/figures.h"
#include "dstudio/viz/run_curves_view.h"
#include "dstudio/viz/sweep_results_view.h"
#include "h5_fixture.h"
#include "main_window.h"
#include "test_application.h"
#include "training_panel.h"

namespace dstudio::studio {
namespace {

namespace fs = std::filesystem;
using sweep::CellState;
using testing::HasSubstr;

// What a test says each cell's task.json holds.
struct Planned {
  CellState state;
  double score, best;  // NaN: none
  std::int64_t step = 60;
  int restarts = 0;
  std::string host = "node1", slurm = "", error = "";
};

const double kNaN = std::nan("");

// 2 variants x 2 datasets x 3 seeds, cells in the grid's nesting order (variants, datasets, seeds).
// dt on hopper: all finished; dc on hopper: one still running; dt on walker2d: one failed;
// dc on walker2d: all finished, one without a periodic evaluation.
const std::vector<Planned>& plan() {
  static const std::vector<Planned> p = {
      {CellState::Finished, 60.0, 70.0},
      {CellState::Finished, 64.0, 72.0},
      {CellState::Finished, 71.0, 75.0},
      {CellState::Finished, 52.0, 58.0},
      {CellState::Finished, 46.0, 50.0},
      {CellState::Failed, kNaN, kNaN, 12, 0, "node2", "", "out of memory"},
      {CellState::Finished, 80.0, 85.0},
      {CellState::Finished, 90.0, 91.0},
      {CellState::Running, kNaN, kNaN, 30, 2, "node7", "4242_2"},
      {CellState::Finished, 50.0, 60.0},
      {CellState::Finished, 55.0, kNaN},
      {CellState::Finished, 57.0, 59.0},
  };
  return p;
}

const char* kHopper = "hopper-medium-v2";
const char* kWalker = "walker2d-medium-v2";

// Mean and sample standard deviation (n - 1), worked out here rather than by core.
std::pair<double, double> mean_std(const std::vector<double>& v) {
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double ss = 0.0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return {mean, v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0.0};
}

QString shown(const std::vector<double>& v) {
  const auto [mean, std] = mean_std(v);
  return QStringLiteral("%1 ± %2").arg(QString::number(mean, 'f', 1), QString::number(std, 'f', 1));
}

class SweepPanelTest : public testing::Test {
 protected:
  void SetUp() override {
    test::ensure_application();
    QSettings().clear();
    std::vector<sweep::Cell> cells;
    int index = 0;
    for (const std::string variant : {"dt", "dc"})
      for (const std::string dataset : {kHopper, kWalker})
        for (std::uint64_t seed = 0; seed < 3; ++seed) {
          sweep::Cell c;
          c.index = index;
          char number[16];
          std::snprintf(number, sizeof number, "%03d", index);
          c.name =
              std::string(number) + "-" + variant + "-" + dataset + "-s" + std::to_string(seed);
          c.variant = variant;
          c.dataset = (dir_ / (dataset + ".hdf5")).string();
          c.seed = seed;
          c.group = variant + " on " + dataset;
          cells.push_back(c);
          ++index;
        }
    sweep_ = sweep::create_sweep(dir_ / "table1", cells, R"({"eval_episodes": 2})");
    for (std::size_t i = 0; i < cells.size(); ++i) write(static_cast<int>(i), plan()[i]);
  }

  void write(int index, const Planned& p) {
    sweep::CellStatus st;
    st.state = p.state;
    st.step = p.step;
    st.total = 60;
    st.loss = 0.25 + 0.01 * index;
    st.score = p.score;
    st.score_std = std::isfinite(p.score) ? 1.5 : kNaN;
    st.best_score = p.best;
    st.host = p.host;
    st.slurm_job = p.slurm;
    st.restarts = p.restarts;
    st.error = p.error;
    sweep::write_cell_status(sweep_, sweep_.cells[static_cast<std::size_t>(index)], st);
    // A finished cell has its checkpoint; results count no cell that lacks one.
    if (p.state == sweep::CellState::Finished)
      std::ofstream(cellDir(index) / "checkpoint.pt") << "finished";
  }

  fs::path cellDir(int index) const {
    return sweep::cell_dir(sweep_, sweep_.cells[static_cast<std::size_t>(index)]);
  }

  // Opens the sweep and waits for its first read.
  void open(SweepPanel& panel) {
    panel.setRefreshInterval(0);
    QSignalSpy opened(&panel, &SweepPanel::sweepOpened);
    panel.openSweep(QString::fromStdString(sweep_.dir.string()));
    ASSERT_TRUE(opened.wait(10000)) << panel.messageLabel()->text().toStdString();
  }

  test::TempDir dir_;
  sweep::Sweep sweep_;
};

TEST_F(SweepPanelTest, GroupsCellsByDatasetAndSettingWithTheirMeansOverSeeds) {
  SweepPanel panel;
  open(panel);
  auto* tree = panel.tree();
  ASSERT_EQ(tree->topLevelItemCount(), 2);
  EXPECT_EQ(tree->topLevelItem(0)->text(SweepPanel::ColumnName), kHopper);
  EXPECT_EQ(tree->topLevelItem(1)->text(SweepPanel::ColumnName), kWalker);
  // Each dataset has both settings, each setting its three seeds, the cells of the right group.
  for (int d = 0; d < 2; ++d) {
    auto* top = tree->topLevelItem(d);
    ASSERT_EQ(top->childCount(), 2);
    for (int g = 0; g < 2; ++g) {
      auto* group = top->child(g);
      EXPECT_EQ(group->text(SweepPanel::ColumnName), g == 0 ? "dt" : "dc");
      ASSERT_EQ(group->childCount(), 3);
      for (int s = 0; s < 3; ++s) {
        const int index = g * 6 + d * 3 + s;  // variants, then datasets, then seeds
        EXPECT_EQ(group->child(s)->data(SweepPanel::ColumnName, Qt::UserRole).toInt(), index);
        EXPECT_EQ(group->child(s)->text(SweepPanel::ColumnSeed), QString::number(s));
        EXPECT_EQ(group->child(s), panel.cellItem(index));
      }
    }
  }
  // The groups' rows: seeds finished, and mean ± std over the finished seeds of score and best.
  auto* dt_hopper = panel.groupItem(kHopper, "dt");
  ASSERT_NE(dt_hopper, nullptr);
  EXPECT_EQ(dt_hopper->text(SweepPanel::ColumnState), "3/3 finished");
  EXPECT_EQ(dt_hopper->text(SweepPanel::ColumnScore), shown({60, 64, 71}));
  EXPECT_EQ(dt_hopper->text(SweepPanel::ColumnBest), shown({70, 72, 75}));
  auto* dc_hopper = panel.groupItem(kHopper, "dc");
  EXPECT_EQ(dc_hopper->text(SweepPanel::ColumnState), "2/3 finished, 1 running");
  EXPECT_EQ(dc_hopper->text(SweepPanel::ColumnScore), shown({80, 90}));
  auto* dt_walker = panel.groupItem(kWalker, "dt");
  EXPECT_EQ(dt_walker->text(SweepPanel::ColumnState), "2/3 finished, 1 failed");
  EXPECT_EQ(dt_walker->text(SweepPanel::ColumnScore), shown({52, 46}));
  auto* dc_walker = panel.groupItem(kWalker, "dc");
  EXPECT_EQ(dc_walker->text(SweepPanel::ColumnScore), shown({50, 55, 57}));
  EXPECT_EQ(dc_walker->text(SweepPanel::ColumnBest), shown({60, 59}))
      << "a seed without periodic evaluations is left out of the best";
  // The IQM over seeds with its bootstrap interval: three seeds keep all three (60, 64, 71).
  EXPECT_TRUE(dt_hopper->text(SweepPanel::ColumnIqm).startsWith("65.0 ["))
      << dt_hopper->text(SweepPanel::ColumnIqm).toStdString();
  EXPECT_TRUE(dc_hopper->text(SweepPanel::ColumnIqm).startsWith("85.0 ["));
  // Each setting over both datasets (rliable): dt's five finished scores 46, 52, 60, 64, 71 lose
  // one from each end, IQM 58.7; P(dt > dc) is 0 on hopper and 1 of 6 pairs on walker.
  auto* aggregates = panel.aggregatesTree();
  ASSERT_GE(aggregates->topLevelItemCount(), 3);
  EXPECT_EQ(aggregates->topLevelItem(0)->text(0), "dt, final");
  EXPECT_TRUE(aggregates->topLevelItem(0)->text(1).startsWith("58.7 ["))
      << aggregates->topLevelItem(0)->text(1).toStdString();
  // P(X > Y) is a probability in a table of its own, not under the aggregates' names.
  for (int k = 0; k < aggregates->topLevelItemCount(); ++k)
    EXPECT_FALSE(aggregates->topLevelItem(k)->text(0).startsWith("P("));
  ASSERT_EQ(panel.improvementsTree()->topLevelItemCount(), 1);
  const auto* improvement = panel.improvementsTree()->topLevelItem(0);
  EXPECT_EQ(improvement->text(0), "P(dt > dc)");
  EXPECT_TRUE(improvement->text(1).startsWith("0.08 [")) << improvement->text(1).toStdString();
  // Under the tables, "±" means one thing, and an IQM over three seeds is said to be their mean
  // (dt on hopper: 65.0, the mean of 60, 64, 71).
  const auto footnote = panel.footnoteLabel()->text().toStdString();
  EXPECT_THAT(footnote, HasSubstr("±: one standard deviation"));
  EXPECT_THAT(footnote, HasSubstr("IQM over fewer than 4 runs trims nothing: over 2 or 3 it is "
                                  "their mean"));
  // A cell's row: state, progress, where it runs, restarts, and why it failed.
  auto* running = panel.cellItem(8);
  EXPECT_EQ(running->text(SweepPanel::ColumnState), "running");
  EXPECT_EQ(running->text(SweepPanel::ColumnProgress), "30/60");
  EXPECT_DOUBLE_EQ(running->data(SweepPanel::ColumnProgress, Qt::UserRole + 1).toDouble(), 0.5);
  EXPECT_EQ(running->text(SweepPanel::ColumnWhere), "node7 (4242_2)");
  EXPECT_EQ(running->text(SweepPanel::ColumnRestarts), "2");
  EXPECT_EQ(running->text(SweepPanel::ColumnScore), "");
  EXPECT_THAT(panel.cellItem(5)->toolTip(SweepPanel::ColumnState).toStdString(),
              HasSubstr("out of memory"));
  EXPECT_EQ(panel.cellItem(0)->text(SweepPanel::ColumnScore), "60.0 ± 1.5");
  EXPECT_THAT(panel.summaryLabel()->text().toStdString(),
              HasSubstr("12 cells, 10 finished, 1 running, 1 failed"));
  EXPECT_FALSE(panel.messageLabel()->isVisibleTo(&panel));
}

TEST_F(SweepPanelTest, TheFiguresBarsAndErrorBarsAreTheGroupsNumbers) {
  SweepPanel panel;
  open(panel);
  auto* view = panel.resultsView();
  auto* plot = view->plot();
  const auto& groups = panel.groups();
  ASSERT_EQ(groups.size(), 4u);
  // Bars of setting k: plottable 2k (finished groups) and 2k + 1 (faint); error bars after each.
  const auto bar_at = [&](const QString& setting, int cluster, bool faint, double& value,
                          double& error) {
    const auto& settings = view->bars().settings;
    const int k =
        static_cast<int>(std::find(settings.begin(), settings.end(), setting) - settings.begin());
    const double key = viz::clustered_bar_key(cluster, k, static_cast<int>(settings.size()));
    auto* bars = qobject_cast<QCPBars*>(plot->plottable(4 * k + (faint ? 2 : 0)));
    auto* errors = qobject_cast<QCPErrorBars*>(plot->plottable(4 * k + (faint ? 3 : 1)));
    if (!bars || !errors) return false;
    for (int i = 0; i < bars->data()->size(); ++i)
      if (std::abs(bars->data()->at(i)->key - key) < 1e-9) {
        value = bars->data()->at(i)->value;
        error = errors->data()->at(i).errorPlus;
        return true;
      }
    return false;
  };
  ASSERT_EQ(plot->plottableCount(), 8) << "per setting: bars and error bars, finished and faint";
  for (const auto& g : groups) {
    const QString setting = QString::fromStdString(g.setting);
    const int cluster = g.dataset == kHopper ? 0 : 1;
    const bool faint = g.finished < g.cells;
    double value = 0, error = 0;
    ASSERT_TRUE(bar_at(setting, cluster, faint, value, error)) << g.setting << " on " << g.dataset;
    EXPECT_DOUBLE_EQ(value, g.score_mean) << g.setting << " on " << g.dataset;
    EXPECT_DOUBLE_EQ(error, g.score_std) << g.setting << " on " << g.dataset;
    double other = 0;
    EXPECT_FALSE(bar_at(setting, cluster, !faint, other, other)) << "one bar a group";
  }
  // Against values worked out here: dc on hopper is faint (a seed still running).
  double value = 0, error = 0;
  ASSERT_TRUE(bar_at("dc", 0, true, value, error));
  EXPECT_NEAR(value, 85.0, 1e-12);
  EXPECT_NEAR(error, mean_std({80, 90}).second, 1e-12);
  // The seeds each bar pools are written above it.
  QStringList notes;
  for (int i = 0; i < plot->itemCount(); ++i)
    if (auto* text = qobject_cast<QCPItemText*>(plot->item(i))) notes << text->text();
  EXPECT_TRUE(notes.contains("n=3"));
  EXPECT_TRUE(notes.contains("n=2 of 3"));
  // The best periodic evaluation instead.
  view->setMeasure(viz::SweepMeasure::Best);
  ASSERT_TRUE(bar_at("dc", 1, false, value, error));
  EXPECT_NEAR(value, mean_std({60, 59}).first, 1e-12);
  EXPECT_NEAR(error, mean_std({60, 59}).second, 1e-12);
  EXPECT_EQ(plot->yAxis->label(), viz::sweep_measure_label(viz::SweepMeasure::Best));
  // Exported as every figure is: the files, and the numbers as CSV, one row a group.
  view->setMeasure(viz::SweepMeasure::Final);
  const auto base = (dir_ / "scores").string();
  viz::FigureStyle style;
  style.dpi = 300;
  const auto written = view->exportFigure(base, style);
  for (const char* ext : {".pdf", ".svg", ".png", ".csv"})
    EXPECT_NE(std::find(written.begin(), written.end(), base + ext), written.end()) << ext;
  std::ifstream csv(base + ".csv");
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line, "dataset,setting,measure,mean,std,seeds,cells");
  std::getline(csv, line);
  std::ostringstream expected;
  expected << kHopper << ",dt,final," << 65 << ',';
  EXPECT_THAT(line, HasSubstr(expected.str()));
  EXPECT_THAT(line, HasSubstr(",3,3"));
  // Text on the page: no overlaps, nothing past its edge.
  viz::TextLayoutLog log;
  (void)view->exportFigure((dir_ / "scores_checked").string(), style);
  ASSERT_FALSE(log.figures.empty());
  for (const auto& problem : log.figures.front().second.problems()) ADD_FAILURE() << problem;
}

TEST_F(SweepPanelTest, AChangeOnDiskShowsAtTheNextReadKeepingSelectionAndExpansion) {
  SweepPanel panel;
  open(panel);
  auto* dc_hopper = panel.groupItem(kHopper, "dc");
  auto* dt_walker = panel.groupItem(kWalker, "dt");
  panel.tree()->setCurrentItem(panel.cellItem(8));
  dt_walker->setExpanded(false);
  // The running seed finishes, on disk; the timer reads it.
  write(8, {CellState::Finished, 100.0, 100.0, 60, 2, "node7", "4242_2"});
  const int reads = panel.readCount();
  panel.setRefreshInterval(100);
  ASSERT_TRUE(test::wait_until([&] { return panel.readCount() > reads; }, 10000));
  EXPECT_EQ(panel.groupItem(kHopper, "dc"), dc_hopper) << "rows are updated in place";
  EXPECT_EQ(dc_hopper->text(SweepPanel::ColumnState), "3/3 finished");
  EXPECT_EQ(dc_hopper->text(SweepPanel::ColumnScore), shown({80, 90, 100}));
  EXPECT_EQ(panel.cellItem(8)->text(SweepPanel::ColumnState), "finished");
  EXPECT_EQ(panel.tree()->currentItem(), panel.cellItem(8));
  EXPECT_FALSE(dt_walker->isExpanded());
  EXPECT_TRUE(dc_hopper->isExpanded());
  // The figure follows: dc on hopper is no longer faint.
  const auto& bars = panel.resultsView()->bars().bars;
  const auto dc = std::find_if(bars.begin(), bars.end(), [](const viz::SweepBar& b) {
    return b.setting == "dc" && b.dataset == kHopper;
  });
  ASSERT_NE(dc, bars.end());
  EXPECT_TRUE(dc->complete());
  EXPECT_NEAR(dc->mean, 90.0, 1e-12);
  panel.setRefreshInterval(0);
}

TEST_F(SweepPanelTest, DamagedFilesAreNamedAndTheTabCarriesOn) {
  SweepPanel panel;
  open(panel);
  // A task.json cut short: its cell shows as failed, the message names the file.
  const auto task = cellDir(3) / "task.json";
  std::ofstream(task) << R"({"state": "runn)";
  const int reads = panel.readCount();
  panel.refresh();
  ASSERT_TRUE(test::wait_until([&] { return panel.readCount() > reads; }, 10000));
  EXPECT_TRUE(panel.messageLabel()->isVisibleTo(&panel));
  EXPECT_THAT(panel.messageLabel()->text().toStdString(), HasSubstr(task.string()));
  EXPECT_EQ(panel.cellItem(3)->text(SweepPanel::ColumnState), "failed");
  EXPECT_THAT(panel.cellItem(3)->toolTip(SweepPanel::ColumnState).toStdString(),
              HasSubstr("damaged"));
  EXPECT_EQ(panel.groupItem(kHopper, "dt")->text(SweepPanel::ColumnState), "3/3 finished")
      << "the other cells are read";
  // A folder that is not a sweep: named, and the open sweep stays.
  QSignalSpy failed(&panel, &SweepPanel::openFailed);
  panel.openSweep(QString::fromStdString(dir_.path().string()));
  ASSERT_TRUE(failed.wait(10000));
  EXPECT_THAT(failed.front().at(0).toString().toStdString(), HasSubstr("sweep.json"));
  EXPECT_EQ(panel.sweepDir().toStdString(), sweep_.dir.string());
  EXPECT_EQ(panel.tree()->topLevelItemCount(), 2);
  // A damaged manifest: named too.
  const auto other = dir_ / "broken";
  fs::create_directories(other);
  std::ofstream(other / "sweep.json") << R"({"format": "dstudio-sweep", "cells": [)";
  panel.openSweep(QString::fromStdString(other.string()));
  ASSERT_TRUE(failed.wait(10000));
  EXPECT_THAT(failed.back().at(0).toString().toStdString(),
              HasSubstr((other / "sweep.json").string()));
  EXPECT_THAT(panel.messageLabel()->text().toStdString(), HasSubstr("sweep.json"));
}

TEST_F(SweepPanelTest, TheWindowComparesTheSeedsBySettingAndRemembersTheSweep) {
  // Metrics for the hopper cells, as the trainer writes them: a loss and two evaluations.
  for (int index : {0, 1, 2, 6, 7, 8}) {
    std::ofstream out(cellDir(index) / "metrics.jsonl");
    for (int step : {10, 20, 30}) {
      out << R"({"step": )" << step << R"(, "loss": )" << 1.0 / step + 0.001 * index;
      if (step != 10) out << R"(, "eval_score": )" << (index < 6 ? 50 : 70) + step + index;
      out << "}\n";
    }
  }
  MainWindow w;
  w.show();
  QSignalSpy opened(w.sweepPanel(), &SweepPanel::sweepOpened);
  w.openSweep(QString::fromStdString(sweep_.dir.string()));
  ASSERT_TRUE(opened.wait(10000));
  EXPECT_EQ(w.currentPage(), w.sweepPanel());
  auto* training = w.trainingPanel();
  ASSERT_TRUE(test::wait_until([&] { return training->runFolders().size() == 6; }, 5000))
      << training->runFolders().size();
  EXPECT_EQ(training->groupByChooser()->currentText(), "setting");
  EXPECT_EQ(training->comparisonMetric()->currentData().toString(), "eval_score");
  const auto& groups = training->comparisonView()->groups();
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].name, "dt (3 runs)");
  EXPECT_EQ(groups[1].name, "dc (3 runs)");
  // The compare button brings the comparison on screen.
  w.sweepPanel()->compareButton()->click();
  EXPECT_EQ(w.currentPage(), training);
  // A saved workspace names the sweep, and opening it opens the sweep.
  const Workspace ws = w.workspace();
  EXPECT_EQ(ws.sweep, sweep_.dir.string());
  MainWindow again;
  QSignalSpy reopened(again.sweepPanel(), &SweepPanel::sweepOpened);
  QString error;
  ASSERT_TRUE(again.applyWorkspace(ws, &error)) << error.toStdString();
  ASSERT_TRUE(reopened.wait(10000));
  EXPECT_EQ(again.sweepPanel()->sweepDir().toStdString(), sweep_.dir.string());
  // A folder that is not a sweep is explained in a dialog naming the file.
  again.openSweep(QString::fromStdString(dir_.path().string()));
  ASSERT_TRUE(test::wait_until(
      [&] { return again.findChild<QMessageBox*>("sweepErrorDialog") != nullptr; }, 10000));
  EXPECT_THAT(again.findChild<QMessageBox*>("sweepErrorDialog")->informativeText().toStdString(),
              HasSubstr("sweep.json"));
}

// rliable's aggregates as rliable draws them: a panel each, on a scale of its own, so an IQM near
// 1.5 is not flattened beside an optimality gap near 98; P(X > Y) on 0 to 1 with 0.5 marked; and
// the note that an IQM over three runs is their mean and a median over one dataset its mean.
TEST(SweepFigures, AggregatesArePanelsOfTheirOwnScaleAndImprovementIsAProbability) {
  test::ensure_application();
  test::TempDir dir;
  const auto summary = [](double centre, double gap) {
    analysis::AggregateSummary a;
    a.iqm = a.mean = a.median = {centre, centre - 0.4, centre + 0.4};
    a.optimality_gap = {gap, gap - 0.4, gap + 0.4};
    a.runs = 3;
    a.tasks = 1;
    return a;
  };
  std::vector<sweep::SettingAggregate> aggregates(2);
  aggregates[0].setting = "dt";
  aggregates[0].last = summary(1.5, 98.5);
  aggregates[1].setting = "dc";
  aggregates[1].last = summary(1.8, 98.2);
  auto style = *viz::venue_preset("icml");
  style.svg = style.pdf = style.png = false;
  viz::TextLayoutLog log;
  viz::save_sweep_aggregates((dir.path() / "aggregates").string(), aggregates, false, style);
  ASSERT_EQ(log.figures.size(), 1u);
  const auto& layout = log.figures.back().second;
  EXPECT_EQ(layout.problems(), std::vector<std::string>{});
  std::vector<std::string> drawn;
  std::string all;
  for (const auto& t : layout.texts) {
    drawn.push_back(t.text.toStdString());
    all += t.text.toStdString() + " ";
  }
  for (const char* title : {"IQM", "Median", "Mean", "Optimality gap", "dt", "dc"})
    EXPECT_NE(std::find(drawn.begin(), drawn.end(), title), drawn.end()) << title << ": " << all;
  // Tick labels from both ends: the IQM's panel reads 1 to 2, the gap's 98 or so.
  const auto number_between = [&](double lo, double hi) {
    return std::any_of(drawn.begin(), drawn.end(), [&](const std::string& t) {
      try {
        std::size_t used = 0;
        const double v = std::stod(t, &used);
        return used == t.size() && v >= lo && v <= hi;
      } catch (const std::exception&) {
        return false;
      }
    });
  };
  EXPECT_TRUE(number_between(1.0, 2.5)) << all;
  EXPECT_TRUE(number_between(97.0, 99.9)) << all;
  EXPECT_THAT(all, HasSubstr("trims nothing"));
  EXPECT_THAT(all, HasSubstr("median over one dataset"));

  std::vector<sweep::SettingImprovement> pairs(1);
  pairs[0].x = "dt";
  pairs[0].y = "dc";
  pairs[0].last = analysis::Interval{0.3, 0.1, 0.6};
  viz::save_sweep_improvement((dir.path() / "improvement").string(), pairs, style);
  ASSERT_EQ(log.figures.size(), 2u);
  EXPECT_EQ(log.figures.back().second.problems(), std::vector<std::string>{});
  drawn.clear();
  all.clear();
  for (const auto& t : log.figures.back().second.texts) {
    drawn.push_back(t.text.toStdString());
    all += t.text.toStdString() + " ";
  }
  // The whole of 0 to 1, its middle marked, nothing beyond.
  for (const char* tick : {"0", "0.5", "1"})
    EXPECT_NE(std::find(drawn.begin(), drawn.end(), tick), drawn.end()) << tick << ": " << all;
  EXPECT_FALSE(number_between(1.01, 1e9)) << all;
  EXPECT_NE(std::find(drawn.begin(), drawn.end(), "dt > dc"), drawn.end()) << all;
}

}  // namespace
}  // namespace dstudio::studio
