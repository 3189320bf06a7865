// The training panel driven as a user drives it: generated forms, runs on a background thread that
// finish, cancel, pause and fail, seeds compared against a mean worked out by hand, and run
// folders added from disk.

#include "training_panel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTest>
#include <QTimer>
#include <QTreeWidget>
#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>

#include "dstudio/analysis/curves.h"
#include "dstudio/data/synthetic.h"
#include "dstudio/models/training_config.h"
#include "dstudio/models/variant_config.h"
#include "dstudio/viz/config_form.h"
#include "dstudio/viz/figures.h"
#include "dstudio/viz/run_curves_view.h"
#include "h5_fixture.h"
#include "test_application.h"

namespace dstudio::studio {
namespace {

using testing::HasSubstr;

std::shared_ptr<const data::Dataset> small_dataset() {
  static const auto dataset = [] {
    data::SyntheticSpec spec;
    spec.transitions = 3000;
    spec.seed = 2;
    auto ds = std::make_shared<data::Dataset>();
    ds->path = "synthetic-hopper.hdf5";
    ds->env_id = "hopper";
    ds->data = data::make_synthetic(spec);
    ds->episodes = data::segment_episodes(ds->data.rewards, ds->data.terminals, ds->data.timeouts);
    data::state_statistics(ds->data, ds->episodes, ds->state_mean, ds->state_std);
    ds->fingerprint = data::content_fingerprint(ds->data);
    return std::shared_ptr<const data::Dataset>(ds);
  }();
  return dataset;
}

// step -> loss, read from a run's metrics.csv independently of the project's reader.
std::map<double, double> csv_losses(const QString& dir) {
  std::ifstream in(QDir(dir).filePath("metrics.csv").toStdString());
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "step,loss,learning_rate,steps_per_second");
  std::map<double, double> out;
  while (std::getline(in, line)) {
    std::stringstream cells(line);
    double step = 0, loss = 0;
    char comma = 0;
    cells >> step >> comma >> loss;
    out[step] = loss;
  }
  return out;
}

class TrainingPanelTest : public testing::Test {
 protected:
  static void SetUpTestSuite() { test::ensure_application(); }

  void SetUp() override {
    QSettings().clear();
    panel = std::make_unique<TrainingPanel>();
    panel->resize(1400, 900);
    panel->setRunsDirectory(runs());
    panel->setDataset(small_dataset(), "synthetic-hopper.hdf5");
  }

  QString runs() const { return QString::fromStdString((dir / "runs").string()); }

  // A model and a schedule that train in a fraction of a second.
  void make_small(std::int64_t steps) {
    ASSERT_TRUE(panel->setField("hidden", 16));
    ASSERT_TRUE(panel->setField("layers", 1));
    ASSERT_TRUE(panel->setField("heads", 1));
    ASSERT_TRUE(panel->setField("context_length", 5));
    ASSERT_TRUE(panel->setField("steps", static_cast<int>(steps)));
    ASSERT_TRUE(panel->setField("batch_size", 16));
    ASSERT_TRUE(panel->setField("learning_rate", 1e-3));
    ASSERT_TRUE(panel->setField("warmup_steps", 5));
    ASSERT_TRUE(panel->setField("log_every", 5));
    ASSERT_TRUE(panel->setField("checkpoint_every", 0));
    ASSERT_TRUE(panel->setField("threads", 1));
  }

  static bool wait_until(const std::function<bool()>& done, int ms) {
    return test::wait_until(done, ms);
  }

  int loss_points() const { return panel->liveView()->lossPlot()->graph(0)->dataCount(); }
  QString state_of(int row) const {
    return panel->runList()->topLevelItem(row)->text(TrainingPanel::ColumnState);
  }

  void save_screenshot(const QString& name) {
    test::deliver_posted_events();  // queued replots
    const QImage image = panel->grab().toImage();
    for (const QString& where : {QString(DSTUDIO_SCREENSHOT_DIR), QStringLiteral("/tmp/h-train")}) {
      QDir().mkpath(where);
      image.save(QDir(where).filePath(name));
    }
  }

  test::TempDir dir;
  std::unique_ptr<TrainingPanel> panel;
};

TEST_F(TrainingPanelTest, WithoutADatasetStartIsDisabledAndSaysWhy) {
  TrainingPanel empty;
  EXPECT_FALSE(empty.startButton()->isEnabled());
  EXPECT_THAT(empty.startButton()->toolTip().toStdString(), HasSubstr("Open a dataset"));
  EXPECT_FALSE(empty.startTraining());
  EXPECT_EQ(empty.runList()->topLevelItemCount(), 0);
  EXPECT_TRUE(panel->startButton()->isEnabled());
}

TEST_F(TrainingPanelTest, FormsAreGeneratedFromEachVariantsConfiguration) {
  for (const char* name : {"gdt", "dc", "udc", "mlp-bc"}) {
    panel->variantChooser()->setCurrentText(name);
    const auto json = models::to_json(models::make_variant(name));
    EXPECT_FALSE(panel->variantKeys().contains("state_dim"));
    EXPECT_FALSE(panel->variantKeys().contains("act_dim"));
    EXPECT_FALSE(panel->variantKeys().contains("variant"));
    for (const QString& key : panel->variantKeys()) {
      std::string quoted =
          "\"";  // appended piecewise: GCC 12 warns falsely on chained concatenation
      quoted += key.toStdString();
      quoted += '"';
      EXPECT_THAT(json, HasSubstr(quoted)) << name;
    }
    // Every field (one per line of the indented JSON) but the variant and the two shapes.
    EXPECT_EQ(panel->variantKeys().size(), QString::fromStdString(json).count("\n  \"") - 3)
        << name;
    // The form holds the variant's defaults exactly.
    EXPECT_EQ(panel->variantConfig(), models::make_variant(name)) << name;
  }
  panel->variantChooser()->setCurrentText("dc");
  EXPECT_EQ(qobject_cast<QSpinBox*>(panel->field("context_length"))->value(), 8);
  EXPECT_EQ(qobject_cast<QComboBox*>(panel->field("activation"))->currentText(), "gelu");
  EXPECT_EQ(qobject_cast<QComboBox*>(panel->field("mixer"))->currentText(), "conv");
  EXPECT_NE(qobject_cast<QDoubleSpinBox*>(panel->field("gaussian_b")), nullptr);
  EXPECT_NE(qobject_cast<QCheckBox*>(panel->field("hybrid")), nullptr);

  panel->variantChooser()->setCurrentText("hier");
  EXPECT_TRUE(panel->mergerChooser()->isVisibleTo(panel.get()));
  panel->mergerChooser()->setCurrentText("none");
  panel->mixerChooser()->setCurrentText("attention");
  EXPECT_EQ(qobject_cast<QComboBox*>(panel->field("tokenizer"))->currentText(), "triplet");
  EXPECT_EQ(panel->variantConfig(), models::make_variant("hier", "none", "attention"));
  panel->variantChooser()->setCurrentText("dt");
  EXPECT_FALSE(panel->mergerChooser()->isVisibleTo(panel.get()));

  EXPECT_EQ(models::to_json(panel->trainingConfig()), models::to_json(models::TrainingConfig{}))
      << "the training form holds core's defaults";
  EXPECT_EQ(qobject_cast<QDoubleSpinBox*>(panel->field("learning_rate"))->text(), "0.0001");
}

// The form shows the fields the configuration uses: GDT's Gaussian parameters, not DC's filter;
// turning DC's hybrid on shows the attention of its last block.
TEST_F(TrainingPanelTest, TheFormShowsOnlyTheFieldsTheVariantUses) {
  for (const char* name : {"dt", "dc", "gdt", "udc", "dhi", "mlp-bc"}) {
    panel->variantChooser()->setCurrentText(name);
    const auto config = models::make_variant(name);
    for (const QString& key : panel->variantKeys())
      EXPECT_EQ(panel->variantForm()->isFieldVisible(key),
                models::uses_field(config, key.toStdString()))
          << name << " " << key.toStdString();
  }
  panel->variantChooser()->setCurrentText("gdt");
  EXPECT_TRUE(panel->variantForm()->isFieldVisible("gaussian_w"));
  EXPECT_FALSE(panel->variantForm()->isFieldVisible("conv_window"));
  panel->variantChooser()->setCurrentText("dc");
  EXPECT_FALSE(panel->variantForm()->isFieldVisible("gaussian_w"));
  EXPECT_TRUE(panel->variantForm()->isFieldVisible("conv_window"));
  EXPECT_FALSE(panel->variantForm()->isFieldVisible("heads"));
  qobject_cast<QCheckBox*>(panel->field("hybrid"))->setChecked(true);
  EXPECT_TRUE(panel->variantForm()->isFieldVisible("heads")) << "the hybrid's last block attends";
  // Hidden fields are still read back: the configuration is whole.
  EXPECT_EQ(panel->variantConfig().gaussian_w, models::make_variant("dc").gaussian_w);
}

TEST_F(TrainingPanelTest, RefusesAnInvalidValueAndNamesTheField) {
  make_small(30);
  QSignalSpy started(panel.get(), &TrainingPanel::runStarted);
  ASSERT_TRUE(panel->setField("dropout", 1.5));
  EXPECT_FALSE(panel->startTraining());
  EXPECT_THAT(panel->messageLabel()->text().toStdString(), HasSubstr("dropout"));
  EXPECT_THAT(panel->field("dropout")->styleSheet().toStdString(), HasSubstr("border"));
  EXPECT_TRUE(panel->field("hidden")->styleSheet().isEmpty());

  ASSERT_TRUE(panel->setField("dropout", 0.1));
  ASSERT_TRUE(panel->setField("heads", 3));  // hidden 16 is not a multiple of 3
  EXPECT_FALSE(panel->startTraining());
  EXPECT_THAT(panel->messageLabel()->text().toStdString(), HasSubstr("heads"));

  ASSERT_TRUE(panel->setField("heads", 1));
  ASSERT_TRUE(panel->setField("learning_rate", 0.0));
  EXPECT_FALSE(panel->startTraining());
  EXPECT_THAT(panel->messageLabel()->text().toStdString(), HasSubstr("learning_rate"));

  EXPECT_TRUE(started.isEmpty());
  EXPECT_EQ(panel->runList()->topLevelItemCount(), 0);
  EXPECT_FALSE(panel->isTraining());
  EXPECT_TRUE(QDir(runs()).isEmpty()) << "no run folder for a run that did not start";
  ASSERT_TRUE(panel->setField("learning_rate", 1e-3));
  EXPECT_NO_THROW((void)panel->trainingConfig());
}

TEST_F(TrainingPanelTest, RunsToTheEndWithLiveLossAndACheckpoint) {
  make_small(30);
  QSignalSpy started(panel.get(), &TrainingPanel::runStarted);
  QSignalSpy finished(panel.get(), &TrainingPanel::runFinished);
  ASSERT_TRUE(panel->startTraining()) << panel->messageLabel()->text().toStdString();
  ASSERT_EQ(started.count(), 1);
  const QString run = started.at(0).at(0).toString();
  EXPECT_TRUE(QFileInfo(run).fileName().startsWith("dt-seed0-"));
  EXPECT_TRUE(panel->isTraining());
  ASSERT_TRUE(finished.wait(20000));
  EXPECT_EQ(finished.at(0).at(0).toString(), run);
  EXPECT_EQ(finished.at(0).at(1).toString(), "Finished");
  EXPECT_FALSE(panel->isTraining());
  EXPECT_EQ(panel->messageLabel()->text(), QFileInfo(run).fileName() + ": finished.")
      << "not \"Started\" once it has finished";
  EXPECT_TRUE(QFile::exists(QDir(run).filePath("checkpoint.pt")));
  EXPECT_TRUE(QFile::exists(QDir(run).filePath("run.json")));

  // One live point per log_every steps, equal to what the trainer wrote.
  const auto written = csv_losses(run);
  ASSERT_EQ(written.size(), 6u);
  auto* graph = panel->liveView()->lossPlot()->graph(0);
  ASSERT_EQ(graph->dataCount(), 6);
  int i = 0;
  for (const auto& [step, loss] : written) {
    EXPECT_EQ(graph->data()->at(i)->key, step);
    EXPECT_NEAR(graph->data()->at(i)->value, loss, 1e-5 * std::abs(loss));
    ++i;
  }
  EXPECT_EQ(panel->liveView()->lossPlot()->yAxis->scaleType(), QCPAxis::stLogarithmic);
  EXPECT_EQ(panel->liveView()->learningRatePlot()->graph(0)->dataCount(), 6);
  EXPECT_EQ(panel->liveView()->throughputPlot()->graph(0)->dataCount(), 6);
  EXPECT_EQ(panel->progressBar()->value(), 30);
  EXPECT_EQ(panel->progressBar()->maximum(), 30);

  ASSERT_EQ(panel->runList()->topLevelItemCount(), 1);
  EXPECT_EQ(state_of(0), "Finished");
  const double last = std::prev(written.end())->second;
  EXPECT_NEAR(panel->runList()->topLevelItem(0)->text(TrainingPanel::ColumnLoss).toDouble(), last,
              1e-3 * last);

  // The forms now say 128 for the next run; the chosen run says what it was trained with.
  ASSERT_TRUE(panel->setField("hidden", 128));
  panel->runList()->setCurrentItem(nullptr);
  panel->runList()->setCurrentItem(panel->runList()->topLevelItem(0));
  EXPECT_TRUE(panel->statusLabel()->text().contains("This run's settings: dt, hidden 16, layers 1"))
      << panel->statusLabel()->text().toStdString();
}

TEST_F(TrainingPanelTest, CancelsALongRunWhileTheWindowStaysResponsive) {
  make_small(1'000'000);
  ASSERT_TRUE(panel->setField("eval_every", 10));
  panel->show();
  QSignalSpy finished(panel.get(), &TrainingPanel::runFinished);
  ASSERT_TRUE(panel->startTraining()) << panel->messageLabel()->text().toStdString();
  const QString run = panel->runFolders().front();

  // A 20 ms timer on the GUI thread keeps firing while the run trains and evaluates.
  QElapsedTimer clock;
  clock.start();
  qint64 last_tick = 0, longest_gap = 0;
  QTimer ticker;
  QObject::connect(&ticker, &QTimer::timeout, [&] {
    longest_gap = std::max(longest_gap, clock.elapsed() - last_tick);
    last_tick = clock.elapsed();
  });
  ticker.start(20);
  auto* eval = panel->liveView()->evaluationPlot();
  ASSERT_TRUE(
      wait_until([&] { return loss_points() >= 6 && eval->graph(1)->dataCount() >= 2; }, 30000))
      << loss_points() << " loss points, " << eval->graph(1)->dataCount() << " evaluations";
  EXPECT_GE(eval->graph(0)->dataCount(), 1) << "the normalised score of the rollouts";
  EXPECT_LT(longest_gap, 2000) << "the event loop stalled";
  EXPECT_EQ(state_of(0), "Running");
  save_screenshot("training_panel.png");

  panel->cancelTraining();
  ASSERT_TRUE(finished.wait(20000));
  EXPECT_EQ(finished.at(0).at(1).toString(), "Cancelled");
  EXPECT_EQ(state_of(0), "Cancelled");
  EXPECT_FALSE(panel->isTraining());
  EXPECT_FALSE(panel->progressBar()->value() >= 1'000'000);
  // A cancelled run keeps a resumable checkpoint, as `dstudio train` does on Ctrl-C.
  EXPECT_FALSE(QDir(run).entryList({"checkpoint-*.pt"}).isEmpty());
}

TEST_F(TrainingPanelTest, PausesAndResumes) {
  make_small(1'000'000);
  QSignalSpy finished(panel.get(), &TrainingPanel::runFinished);
  ASSERT_TRUE(panel->startTraining());
  ASSERT_TRUE(wait_until([&] { return loss_points() >= 2; }, 20000));
  panel->pauseTraining();
  ASSERT_TRUE(wait_until([&] { return state_of(0) == "Paused"; }, 10000))
      << state_of(0).toStdString();
  // Paused means the worker has stopped taking steps: once what it sent before is delivered,
  // nothing more arrives.
  test::deliver_posted_events();
  const int paused_at = loss_points();
  test::deliver_posted_events();
  EXPECT_EQ(loss_points(), paused_at) << "nothing moves while paused";
  EXPECT_TRUE(panel->isTraining());

  panel->resumeTraining();
  ASSERT_TRUE(wait_until([&] { return loss_points() >= paused_at + 2; }, 20000));
  EXPECT_EQ(state_of(0), "Running");
  panel->cancelTraining();
  ASSERT_TRUE(finished.wait(20000));
  EXPECT_EQ(finished.at(0).at(1).toString(), "Cancelled");
}

TEST_F(TrainingPanelTest, ComparesTwoSeedsAsTheirMeanWorkedOutByHand) {
  make_small(20);
  QSignalSpy finished(panel.get(), &TrainingPanel::runFinished);
  ASSERT_TRUE(panel->startTraining());
  ASSERT_TRUE(panel->setField("seed", 1));
  ASSERT_TRUE(panel->startTraining());
  ASSERT_TRUE(wait_until([&] { return finished.count() == 2; }, 30000));
  const auto folders = panel->runFolders();
  ASSERT_EQ(folders.size(), 2);
  const auto a = csv_losses(folders[0]), b = csv_losses(folders[1]);
  ASSERT_EQ(a.size(), 4u);
  ASSERT_EQ(b.size(), 4u);

  panel->comparisonMetric()->setCurrentIndex(panel->comparisonMetric()->findData("loss"));
  panel->bandChooser()->setCurrentIndex(0);  // min..max
  panel->smoothingSlider()->setValue(0);
  ASSERT_EQ(panel->comparisonView()->groups().size(), 1u);
  auto g = panel->comparisonView()->groups().front();
  EXPECT_EQ(g.name, "dt (2 runs)");
  ASSERT_EQ(g.x.size(), 4u);
  std::vector<double> hand;
  std::size_t i = 0;
  for (const auto& [step, loss_a] : a) {
    const double loss_b = b.at(step);
    hand.push_back((loss_a + loss_b) / 2.0);
    EXPECT_EQ(g.x[i], step);
    EXPECT_NEAR(g.mean[i], hand.back(), 1e-5 * hand.back());
    EXPECT_NEAR(g.low[i], std::min(loss_a, loss_b), 1e-5 * loss_a);
    EXPECT_NEAR(g.high[i], std::max(loss_a, loss_b), 1e-5 * loss_a);
    ++i;
  }
  // The plot draws the same numbers: the smoothed mean is the last graph.
  auto* plot = panel->comparisonView()->plot();
  auto* mean_graph = plot->graph(plot->graphCount() - 1);
  ASSERT_EQ(mean_graph->dataCount(), 4);
  EXPECT_NEAR(mean_graph->data()->at(2)->value, hand[2], 1e-5 * hand[2]);

  // Mean -/+ std of two values is the mean -/+ half their distance.
  panel->bandChooser()->setCurrentIndex(1);
  g = panel->comparisonView()->groups().front();
  const double half = std::abs(a.begin()->second - b.begin()->second) / 2.0;
  EXPECT_NEAR(g.high[0] - g.mean[0], half, 1e-5 * hand[0]);

  // Smoothing 0.5 averages each point with the smoothed one before it; the raw mean stays.
  panel->smoothingSlider()->setValue(50);
  g = panel->comparisonView()->groups().front();
  EXPECT_NEAR(g.mean[0], hand[0], 1e-5 * hand[0]);
  EXPECT_NEAR(g.mean[1], 0.5 * hand[0] + 0.5 * hand[1], 1e-5 * hand[0]);
  EXPECT_NEAR(g.raw_mean[1], hand[1], 1e-5 * hand[1]);

  // Unchecking a seed leaves the other one's curve.
  panel->runList()->topLevelItem(1)->setCheckState(TrainingPanel::ColumnRun, Qt::Unchecked);
  panel->smoothingSlider()->setValue(0);
  g = panel->comparisonView()->groups().front();
  EXPECT_EQ(g.name, "dt");
  EXPECT_NEAR(g.mean[3], std::prev(a.end())->second, 1e-5 * g.mean[3]);

  // Export: the figure in three formats and its numbers.
  panel->runList()->topLevelItem(1)->setCheckState(TrainingPanel::ColumnRun, Qt::Checked);
  panel->bandChooser()->setCurrentIndex(0);
  const QString base = QDir(runs()).filePath("compare-loss");
  const auto files = panel->exportComparison(base);
  EXPECT_EQ(files.size(), 4u);
  for (const char* ext : {".pdf", ".svg", ".png", ".csv"})
    EXPECT_TRUE(QFile::exists(base + ext)) << ext;
  std::ifstream csv((base + ".csv").toStdString());
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line, "group,smoothing,step,mean,min,max,raw_mean");
  int rows = 0;
  while (std::getline(csv, line)) ++rows;
  EXPECT_EQ(rows, 4);

  // Another variant is a group of its own, drawn next to the first.
  panel->variantChooser()->setCurrentText("dc");
  make_small(20);
  ASSERT_TRUE(panel->startTraining());
  ASSERT_TRUE(wait_until([&] { return finished.count() == 3; }, 30000));
  panel->smoothingSlider()->setValue(60);
  ASSERT_EQ(panel->comparisonView()->groups().size(), 2u);
  EXPECT_EQ(panel->comparisonView()->groups()[0].name, "dt (2 runs)");
  EXPECT_EQ(panel->comparisonView()->groups()[1].name, "dc");
  panel->show();
  save_screenshot("training_compare.png");
}

// A sweep's seeds are read on a worker: the call returns before any folder is read, the folders
// are listed and grouped by their setting once read, and one without metrics is left out.
TEST_F(TrainingPanelTest, ComparesRunFoldersReadOffTheGuiThread) {
  QStringList dirs;
  for (const char* name : {"cell-0", "cell-1", "cell-2"}) {
    const QString folder = QDir(runs()).filePath(name);
    QDir().mkpath(folder);
    if (dirs.size() < 2)
      std::ofstream(QDir(folder).filePath("metrics.csv").toStdString())
          << "step,loss,learning_rate,steps_per_second\n10,0.8,1e-4,50\n";
    dirs << folder;
  }
  QSignalSpy compared(panel.get(), &TrainingPanel::runFoldersCompared);
  panel->compareRunFolders(dirs, {"dt", "dc", "dc"});
  EXPECT_EQ(panel->runList()->topLevelItemCount(), 0) << "nothing is read on the GUI thread";
  ASSERT_TRUE(compared.wait(10000));
  EXPECT_EQ(compared.front().front().toInt(), 2);
  ASSERT_EQ(panel->runList()->topLevelItemCount(), 2);
  EXPECT_EQ(panel->groupByChooser()->currentText(), "setting");
  ASSERT_EQ(panel->comparisonView()->groups().size(), 2u);
}

TEST_F(TrainingPanelTest, AddsRunFoldersFromDiskAndExplainsAnEmptyOne) {
  const QString empty = QDir(runs()).filePath("empty");
  QDir().mkpath(empty);
  EXPECT_FALSE(panel->addRunFolder(empty));
  EXPECT_THAT(panel->lastError().toStdString(), HasSubstr("no training metrics"));
  EXPECT_THAT(panel->statusLabel()->text().toStdString(), HasSubstr("no training metrics"));
  EXPECT_EQ(panel->runList()->topLevelItemCount(), 0);

  // Two seeds of one variant written by hand, grouped by the name of their folders.
  const QString one = QDir(runs()).filePath("dc-seed3-20240101-000000");
  const QString two = QDir(runs()).filePath("dc-seed4-20240101-000001");
  QDir().mkpath(one);
  QDir().mkpath(two);
  std::ofstream(QDir(one).filePath("metrics.csv").toStdString())
      << "step,loss,learning_rate,steps_per_second\n10,0.8,1e-4,50\n20,0.4,1e-4,50\n";
  std::ofstream(QDir(two).filePath("metrics.csv").toStdString())
      << "step,loss,learning_rate,steps_per_second\n10,0.6,1e-4,50\n20,0.2,1e-4,50\n";
  ASSERT_TRUE(panel->addRunFolder(one)) << panel->lastError().toStdString();
  ASSERT_TRUE(panel->addRunFolder(two));
  ASSERT_EQ(panel->runList()->topLevelItemCount(), 2);
  EXPECT_EQ(panel->runList()->topLevelItem(0)->text(TrainingPanel::ColumnVariant), "dc");
  EXPECT_EQ(panel->runList()->topLevelItem(0)->text(TrainingPanel::ColumnSeed), "3");
  EXPECT_EQ(state_of(0), "Incomplete");  // no checkpoint.pt
  panel->smoothingSlider()->setValue(0);
  panel->comparisonMetric()->setCurrentIndex(panel->comparisonMetric()->findData("loss"));
  const auto& g = panel->comparisonView()->groups().front();
  EXPECT_EQ(g.name, "dc (2 runs)");
  EXPECT_NEAR(g.mean[0], 0.7, 1e-12);
  EXPECT_NEAR(g.mean[1], 0.3, 1e-12);
  EXPECT_EQ(panel->liveView()->lossPlot()->graph(0)->dataCount(), 2) << "the added run is shown";
}

// The runs table as Weights & Biases users know it: final metrics and hyperparameters, sortable
// as numbers, the fields the runs differ in shown, grouped by any field.
TEST_F(TrainingPanelTest, TheRunsTableSortsByMetricsAndHyperparametersAndGroupsByAnyField) {
  struct Made {
    const char* name;
    int hidden;
    double score;
  };
  const Made made[] = {{"dt-a", 128, 61.5}, {"dt-b", 64, 80.4}, {"dt-c", 64, 40.0}};
  for (const auto& m : made) {
    const QString folder = QDir(runs()).filePath(m.name);
    QDir().mkpath(folder);
    auto variant = models::make_variant("dt");
    variant.hidden = m.hidden;
    models::TrainingConfig training;
    training.batch_size = 32;
    std::ofstream(QDir(folder).filePath("run.json").toStdString())
        << R"({"label": "dt", "variant": )" << models::to_json(variant) << R"(, "training": )"
        << models::to_json(training) << "}";
    std::ofstream(QDir(folder).filePath("metrics.jsonl").toStdString())
        << R"({"step": 10, "loss": 0.5})"
        << "\n"
        << R"({"step": 20, "loss": 0.25, "eval_score": )" << m.score << R"(, "entropy_layer1": )"
        << m.hidden / 100.0 << "}\n";
    std::ofstream(QDir(folder).filePath("checkpoint.pt").toStdString()) << "";
    ASSERT_TRUE(panel->addRunFolder(folder)) << panel->lastError().toStdString();
  }
  auto* list = panel->runList();
  ASSERT_EQ(list->topLevelItemCount(), 3);
  EXPECT_EQ(list->topLevelItem(1)->text(TrainingPanel::ColumnScore), "80.4");
  EXPECT_EQ(list->topLevelItem(1)->text(TrainingPanel::ColumnEntropy), "0.640");
  const int hidden = panel->configColumn("hidden"), batch = panel->configColumn("batch_size");
  ASSERT_GE(hidden, TrainingPanel::ColumnCount);
  ASSERT_GE(batch, TrainingPanel::ColumnCount);
  EXPECT_EQ(list->headerItem()->text(hidden), "hidden");
  EXPECT_FALSE(list->isColumnHidden(hidden)) << "the runs differ in it";
  EXPECT_TRUE(list->isColumnHidden(batch)) << "every run has 32";
  EXPECT_EQ(list->topLevelItem(0)->text(hidden), "128");
  EXPECT_EQ(panel->configColumn("gaussian_w"), -1) << "DT has no Gaussian bias";

  // Numbers sort as numbers: 64 before 128 (as text "128" < "64").
  list->sortByColumn(hidden, Qt::AscendingOrder);
  EXPECT_EQ(list->topLevelItem(2)->text(TrainingPanel::ColumnRun), "dt-a");
  list->sortByColumn(TrainingPanel::ColumnScore, Qt::DescendingOrder);
  QStringList order;
  for (int r = 0; r < 3; ++r) order << list->topLevelItem(r)->text(TrainingPanel::ColumnRun);
  EXPECT_EQ(order, (QStringList{"dt-b", "dt-a", "dt-c"}));
  // A row's menu acts on the run the row shows, wherever sorting put it.
  std::unique_ptr<QMenu> menu(panel->runMenu(0));
  ASSERT_NE(menu, nullptr);
  QSignalSpy opened(panel.get(), &TrainingPanel::openCheckpointRequested);
  auto* open = menu->findChild<QAction*>("Open in the Analysis Views");
  ASSERT_NE(open, nullptr);
  open->trigger();
  ASSERT_EQ(opened.count(), 1);
  EXPECT_EQ(opened.front().front().toString(),
            QDir(QDir(runs()).filePath("dt-b")).absoluteFilePath("checkpoint.pt"));
  // The header's menu shows a hidden field.
  std::unique_ptr<QMenu> columns(panel->columnMenu());
  auto* batch_action = columns->findChild<QAction*>("batch_size");
  ASSERT_NE(batch_action, nullptr);
  EXPECT_FALSE(batch_action->isChecked());
  batch_action->setChecked(true);
  EXPECT_FALSE(list->isColumnHidden(batch));

  // Grouped by the hidden width: two groups, the 64s' mean worked out by hand.
  panel->smoothingSlider()->setValue(0);
  panel->comparisonMetric()->setCurrentIndex(panel->comparisonMetric()->findData("eval_score"));
  ASSERT_EQ(panel->comparisonView()->groups().size(), 1u);
  EXPECT_EQ(panel->comparisonView()->groups().front().name, "dt (3 runs)");
  panel->groupByChooser()->setCurrentIndex(panel->groupByChooser()->findData("hidden"));
  const auto& groups = panel->comparisonView()->groups();
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].name, "hidden=128");
  EXPECT_EQ(groups[1].name, "hidden=64 (2 runs)");
  EXPECT_NEAR(groups[1].mean.back(), (80.4 + 40.0) / 2, 1e-9);
  panel->show();
  save_screenshot("training-runs-table.png");

  // The selected run's curves and the comparison are figures for an export of every view; the
  // curves' CSV reads back as the run's metrics.
  const auto sources = panel->figureSources();
  ASSERT_EQ(sources.size(), 2u);
  list->setCurrentItem(list->topLevelItem(0));  // dt-b, the best score
  ASSERT_TRUE(sources[0]->hasFigure());
  ASSERT_TRUE(sources[1]->hasFigure());
  const QString out = QString::fromStdString((dir / "figures").string());
  QDir().mkpath(out);
  viz::FigureStyle png;
  png.pdf = png.svg = false;
  const auto curves = sources[0]->exportFigure(QDir(out).filePath("metrics").toStdString(), png);
  EXPECT_EQ(curves.size(), 3u);  // loss, evaluation, CSV
  EXPECT_TRUE(QFile::exists(QDir(out).filePath("metrics_evaluation.png")));
  const auto back = analysis::read_run_metrics(out.toStdString());
  EXPECT_EQ(back.columns.at("eval_score").y, (std::vector<double>{80.4}));
  EXPECT_EQ(back.columns.at("loss").y, (std::vector<double>{0.5, 0.25}));
  const auto compared =
      sources[1]->exportFigure(QDir(out).filePath("run_comparison").toStdString(), png);
  EXPECT_EQ(compared.size(), 2u);
  list->setCurrentItem(nullptr);
  EXPECT_FALSE(sources[0]->hasFigure()) << "no run selected";
}

TEST_F(TrainingPanelTest, AFailedRunShowsItsMessageInsteadOfCrashing) {
  panel->variantChooser()->setCurrentText("mlp-bc");
  make_small(200);
  // Inside the documented ranges, and still divergent: AdamW's decoupled decay with lr 1 and
  // weight decay 10 multiplies every weight by -9 each step, past float's range within ~40 steps.
  ASSERT_TRUE(panel->setField("learning_rate", 1.0));
  ASSERT_TRUE(panel->setField("weight_decay", 10.0));
  ASSERT_TRUE(panel->setField("warmup_steps", 1));
  QSignalSpy finished(panel.get(), &TrainingPanel::runFinished);
  ASSERT_TRUE(panel->startTraining()) << panel->messageLabel()->text().toStdString();
  ASSERT_TRUE(finished.wait(20000));
  EXPECT_EQ(finished.at(0).at(1).toString(), "Failed");
  EXPECT_THAT(state_of(0).toStdString(),
              testing::ContainsRegex("^Failed: the loss became (NaN|infinite) at step"));
  EXPECT_THAT(panel->statusLabel()->text().toStdString(), HasSubstr("the loss became"));
  EXPECT_FALSE(panel->isTraining());
}

TEST_F(TrainingPanelTest, DestroyingThePanelStopsItsRuns) {
  make_small(1'000'000);
  ASSERT_TRUE(panel->startTraining());
  ASSERT_TRUE(panel->setField("seed", 1));
  ASSERT_TRUE(panel->startTraining());
  ASSERT_TRUE(wait_until([&] { return loss_points() >= 1; }, 20000));
  QElapsedTimer clock;
  clock.start();
  panel.reset();  // cancels both runs and joins their threads
  EXPECT_LT(clock.elapsed(), 5000);
}

}  // namespace
}  // namespace dstudio::studio
