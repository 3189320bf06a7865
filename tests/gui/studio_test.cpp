// The studio window driven as a user drives it: open, fail, drop, cancel, remember.

#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <QApplication>
#include <QDir>
#include <QDoubleSpinBox>
#include <QDropEvent>
#include <QFileInfo>
#include <QImage>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTest>
#include <QTreeWidget>
#include <QUrl>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "analyses_panel.h"
#include "default_dataset.h"
#include "dstudio/analysis/analysis_registry.h"
#include "dstudio/behaviour/antmaze_data.h"
#include "dstudio/behaviour/default_datasets.h"
#include "dstudio/behaviour/gaussian_policy.h"
#include "dstudio/common/figure_recipe.h"
#include "dstudio/common/read_file.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/data/synthetic.h"
#include "dstudio/models/checkpoint.h"
#include "dstudio/models/evaluation.h"
#include "dstudio/viz/analysis_view.h"
#include "dstudio/viz/attention_map_view.h"
#include "dstudio/viz/dataset_view.h"
#include "dstudio/viz/entropy_reward_view.h"
#include "dstudio/viz/export_dialog.h"
#include "dstudio/viz/figures.h"
#include "dstudio/viz/markov_lab_view.h"
#include "dstudio/viz/return_analysis_view.h"
#include "dstudio/viz/return_histogram.h"
#include "dstudio/viz/scene_view.h"
#include "dstudio/viz/target_chooser.h"
#include "dstudio/viz/tsne_view.h"
#include "dstudio/viz/workspace_view.h"
#include "figure_render.h"
#include "h5_fixture.h"
#include "job.h"
#include "main_window.h"
#include "maze_episode.h"
#include "screenshot_tour.h"
#include "test_application.h"
#include "training_panel.h"
#include "tsne_job.h"

namespace dstudio::studio {
namespace {

// An analysis in the registry for as long as the test runs, under the origin "gui-test".
struct RegisteredForTheTest {
  explicit RegisteredForTheTest(const analysis::AnalysisDefinition& d) {
    analysis::analysis_registry().add(d);
  }
  ~RegisteredForTheTest() { analysis::analysis_registry().remove_plugin("gui-test"); }
  RegisteredForTheTest(const RegisteredForTheTest&) = delete;
  RegisteredForTheTest& operator=(const RegisteredForTheTest&) = delete;
};

class Studio : public testing::Test {
 protected:
  static void SetUpTestSuite() { test::ensure_application(); }

  void SetUp() override {
    QSettings().clear();
    test::D4rlSpec spec;
    spec.n = 12;
    spec.terminals = {0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    spec.timeouts = {0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0};
    good = QString::fromStdString((dir / "good.hdf5").string());
    test::write_d4rl_fixture(good.toStdString(), spec);
  }

  // Opens `path` and waits for the window to report the outcome.
  bool open(MainWindow& w, const QString& path) {
    QSignalSpy opened(&w, &MainWindow::datasetOpened);
    QSignalSpy failed(&w, &MainWindow::loadFailed);
    w.openDataset(path);
    return opened.wait(10000) || !failed.isEmpty() ? !opened.isEmpty() : false;
  }

  static void save_screenshot(QWidget& w, const QString& name) {
    const QString dir = DSTUDIO_SCREENSHOT_DIR;
    QDir().mkpath(dir);
    w.grab().save(QDir(dir).filePath(name));
  }

  test::TempDir dir;
  QString good;
};

TEST_F(Studio, OpensADatasetAndShowsSummaryEpisodesAndHistogram) {
  MainWindow w;
  w.resize(1200, 760);
  w.show();
  ASSERT_TRUE(open(w, good));
  EXPECT_EQ(w.currentPath(), good);
  auto* view = w.datasetView();
  EXPECT_EQ(view->episodeTable()->model()->rowCount(), 3);  // two episodes and the tail
  double counted = 0;
  for (const auto& [centre, count] : view->returnHistogram()->bars()) counted += count;
  EXPECT_EQ(counted, 2.0);  // only complete episodes are binned
  EXPECT_FALSE(
      view->summary()->findItems("Transitions", Qt::MatchRecursive | Qt::MatchExactly).isEmpty());
  const auto tail =
      view->summary()->findItems("Unterminated tail", Qt::MatchRecursive | Qt::MatchExactly);
  ASSERT_EQ(tail.size(), 1);
  EXPECT_EQ(tail.front()->text(1), "5 steps in 1 episode");
  // The tail is a note (expected of a D4RL file), shown quietly; nothing here is a warning.
  EXPECT_TRUE(view->notesLine()->isVisible());
  EXPECT_TRUE(view->notesLine()->text().contains("last 5 steps"));
  EXPECT_FALSE(view->warningsBanner()->isVisible());
  EXPECT_TRUE(w.windowTitle().startsWith("good.hdf5"));
  // The state -> action R^2 is computed off the GUI thread and fills its row when done.
  const auto r2 =
      view->summary()->findItems("State → action linear R²", Qt::MatchRecursive | Qt::MatchExactly);
  ASSERT_EQ(r2.size(), 1);
  const double expected = data::linear_action_r2(view->dataset()->data);
  QSignalSpy completed(view, &viz::DatasetView::summaryCompleted);
  EXPECT_TRUE(view->summaryComplete() || completed.wait(10000));
  EXPECT_TRUE(view->summaryComplete());
  EXPECT_NE(r2.front()->text(1), "computing…");
  EXPECT_EQ(r2.front()->text(1), std::isfinite(expected) ? QString::number(expected, 'f', 3)
                                                         : QString("undefined (constant actions)"));
  view->episodeTable()->selectRow(1);
  save_screenshot(w, "dataset-view.png");
}

TEST_F(Studio, ABadFileShowsTheErrorAndKeepsWhatWasOpen) {
  MainWindow w;
  w.show();
  ASSERT_TRUE(open(w, good));
  const QString bad = QString::fromStdString((dir / "bad.hdf5").string());
  std::ofstream(bad.toStdString()) << "this is not HDF5";
  QSignalSpy failed(&w, &MainWindow::loadFailed);
  w.openDataset(bad);
  ASSERT_TRUE(failed.wait(10000));
  EXPECT_TRUE(failed.front().front().toString().contains("bad.hdf5: is not an HDF5 file"));
  auto* dialog = w.findChild<QMessageBox*>("datasetErrorDialog");
  ASSERT_NE(dialog, nullptr);
  EXPECT_TRUE(dialog->isVisible());
  EXPECT_TRUE(dialog->informativeText().contains("bad.hdf5"));
  save_screenshot(w, "dataset-error-window.png");
  save_screenshot(*dialog, "dataset-error-dialog.png");
  dialog->accept();
  // The previous dataset is still shown, untouched.
  EXPECT_EQ(w.currentPath(), good);
  EXPECT_EQ(w.datasetView()->episodeTable()->model()->rowCount(), 3);
}

TEST_F(Studio, DroppingAFileOpensIt) {
  MainWindow w;
  w.show();
  QMimeData mime;
  mime.setUrls({QUrl::fromLocalFile(good)});
  QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(&w, &enter);
  EXPECT_TRUE(enter.isAccepted());
  QSignalSpy opened(&w, &MainWindow::datasetOpened);
  QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(&w, &drop);
  ASSERT_TRUE(opened.wait(10000));
  EXPECT_EQ(w.currentPath(), good);
}

TEST_F(Studio, CancellingALoadKeepsThePreviousDataset) {
  data::SyntheticSpec spec;
  spec.transitions = 400'000;
  const auto big = dir / "big.hdf5";
  data::write_d4rl(big, data::make_synthetic(spec));
  MainWindow w;
  w.show();
  ASSERT_TRUE(open(w, good));
  QSignalSpy cancelled(&w, &MainWindow::loadCancelled);
  w.openDataset(QString::fromStdString(big.string()));
  EXPECT_TRUE(w.isLoading());
  w.cancelLoad();
  ASSERT_TRUE(cancelled.wait(10000));
  EXPECT_FALSE(w.isLoading());
  EXPECT_EQ(w.currentPath(), good);
}

TEST_F(Studio, RemembersRecentDatasets) {
  {
    MainWindow w;
    ASSERT_TRUE(open(w, good));
  }
  const QStringList recent = QSettings().value("recentFiles").toStringList();
  ASSERT_FALSE(recent.isEmpty());
  EXPECT_EQ(recent.front(), good);
}

TEST_F(Studio, OpensTheEmbeddedDefaultDataset) {
  MainWindow w;
  QSignalSpy opened(&w, &MainWindow::datasetOpened);
  w.openDefaultDataset();
  ASSERT_TRUE(opened.wait(280000));  // made on first use: 2M transitions, about 100 s on two cores
  // The story dataset: hopper medium-expert made by the shipped SAC behaviour policies.
  EXPECT_TRUE(w.currentPath().contains("hopper-medium-expert-dstudio-sac"));
  EXPECT_EQ(data::summarize(*w.datasetView()->dataset()).transitions, 2000000);
  EXPECT_EQ(w.datasetView()->dataset()->env_id, "hopper");
}

// File ▸ Open Default Dataset lists every task whose data a shipped policy makes; a task's item
// opens its cached file, and one not made yet starts making it, cancellably and leaving no file.
TEST_F(Studio, OpensATasksDefaultDataFromTheMenuAndCancelsItsMaking) {
  test::TempDir cache;
  const char* old = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old ? old : "";
  ::setenv("XDG_CACHE_HOME", cache.path().c_str(), 1);
  struct Restore {
    const char* old;
    std::string saved;
    ~Restore() {
      old ? ::setenv("XDG_CACHE_HOME", saved.c_str(), 1) : ::unsetenv("XDG_CACHE_HOME");
    }
  } restore{old, saved};

  // A small umaze file where the cache looks for the task's data (2,500 transitions of a
  // small goal-reacher, not the shipped one's million).
  behaviour::AntMazeDataConfig config;
  config.task = "antmaze-umaze-v2";
  config.transitions = 2500;
  config.threads = 1;
  auto reacher = behaviour::zero_gaussian_policy(29, 8, {16});
  const auto made = behaviour::generate_antmaze_dataset(config, reacher);
  const auto umaze = behaviour::default_dataset_path("antmaze-umaze-v2");
  std::filesystem::create_directories(umaze.parent_path());
  data::write_d4rl(umaze, made.arrays, made.metadata);

  MainWindow w;
  auto* menu = w.findChild<QMenu*>("defaultDatasetMenu");
  ASSERT_NE(menu, nullptr);
  std::map<QString, QAction*> items;
  for (auto* action : menu->actions())
    if (!action->isSeparator()) items[action->text()] = action;
  EXPECT_EQ(items.size(), 11u);  // the story, six mazes and four Adroit tasks
  EXPECT_TRUE(items.count("hopper medium-expert (the Studio's Story)"));
  for (const char* task :
       {"antmaze-umaze-v2", "antmaze-umaze-diverse-v2", "antmaze-medium-play-v2",
        "antmaze-medium-diverse-v2", "antmaze-large-play-v2", "antmaze-large-diverse-v2"})
    EXPECT_TRUE(items.count(task)) << task;
  EXPECT_TRUE(items.count("door expert (made by the DAPG Expert)"));

  EXPECT_EQ(w.shippedTaskOfDefaultCheckpoint(), "") << "no data open: the story's DT";
  QSignalSpy opened(&w, &MainWindow::datasetOpened);
  items.at("antmaze-umaze-v2")->trigger();
  ASSERT_TRUE(opened.wait(60000));
  EXPECT_EQ(w.currentPath().toStdString(), umaze.string());
  EXPECT_EQ(w.datasetView()->dataset()->env_id, "antmaze-umaze-v2");
  EXPECT_EQ(data::summarize(*w.datasetView()->dataset()).transitions, 2500);
  // The task has a DT of its own shipped: File ▸ Open Default Checkpoint names and opens it.
  EXPECT_EQ(w.shippedTaskOfDefaultCheckpoint(), "antmaze-umaze-v2");
  auto* file_menu = qobject_cast<QMenu*>(menu->parent());
  ASSERT_NE(file_menu, nullptr);
  emit file_menu->aboutToShow();
  EXPECT_EQ(w.findChild<QAction*>("defaultCheckpointAction")->text(),
            "Open Default C&heckpoint (DT on antmaze-umaze-v2)");

  // Not made yet: the status bar says what is being made; Cancel stops it and nothing is left.
  const auto large = behaviour::default_dataset_path("antmaze-large-play-v2");
  QSignalSpy cancelled(&w, &MainWindow::loadCancelled);
  items.at("antmaze-large-play-v2")->trigger();
  EXPECT_TRUE(w.isLoading());
  bool said = false;
  for (auto* label : w.statusBar()->findChildren<QLabel*>())
    said =
        said || label->text().startsWith("First use: making antmaze-large-play-v2 (D4RL's recipe");
  EXPECT_TRUE(said);
  // The bar beside that long text keeps its width, so the stage it names stays readable.
  auto* bar = w.statusBar()->findChild<QProgressBar*>();
  ASSERT_NE(bar, nullptr);
  EXPECT_GE(bar->minimumWidth(), 320);
  w.cancelLoad();
  ASSERT_TRUE(cancelled.wait(60000));
  EXPECT_FALSE(std::filesystem::exists(large));
  EXPECT_EQ(w.currentPath().toStdString(), umaze.string());
  // Another task's data (no DT of its own shipped): the story's DT again.
  ASSERT_TRUE(open(w, good));
  EXPECT_EQ(w.shippedTaskOfDefaultCheckpoint(), "");
}

// The shipped DT checkpoint: its attention maps on dataset windows, computed on a worker thread.
TEST_F(Studio, ShowsTheAttentionMapsOfTheDefaultCheckpoint) {
  MainWindow w;
  w.resize(1100, 800);
  QSignalSpy shown(&w, &MainWindow::checkpointShown);
  QSignalSpy failed(&w, &MainWindow::checkpointFailed);
  w.openDefaultCheckpoint();
  EXPECT_TRUE(w.isInspecting());
  ASSERT_TRUE(shown.wait(180000)) << (failed.isEmpty()
                                          ? "timed out"
                                          : failed.front().front().toString().toStdString());
  auto* view = w.attentionView();
  EXPECT_EQ(w.currentPage(), view);
  ASSERT_EQ(view->layerCount(), 3);
  ASSERT_EQ(view->tokenCount(), 60);  // K 20 steps of R, s, a
  // Attention rows sum to 1 over the keys a query may see; nothing above the diagonal.
  for (int i = 0; i < 60; ++i) {
    double sum = 0.0;
    for (int j = 0; j <= i; ++j) sum += view->matrix().at(i, j);
    EXPECT_NEAR(sum, 1.0, 1e-4) << "row " << i;
  }
  EXPECT_EQ(view->labels()[58], "s0");  // the last state token, relative to the window's last step
  EXPECT_TRUE(view->cellText(58, 0).startsWith("query s0, key R-19: "));
  EXPECT_TRUE(view->cellText(0, 58).contains("masked"));
  // One entropy row per layer and head; grouping by step never raises entropy (Theorem 3.1).
  auto* table = view->entropyTable();
  ASSERT_EQ(table->rowCount(), 3);
  for (int r = 0; r < 3; ++r)
    EXPECT_LE(table->item(r, viz::AttentionMapView::ColumnInterStep)->text().toDouble(),
              table->item(r, viz::AttentionMapView::ColumnEntropy)->text().toDouble() + 1e-3);
  w.show();
  save_screenshot(w, "attention-view.png");
  view->setMode(viz::AttentionMapView::Mode::Rollout);
  double sum = 0.0;
  for (int j = 0; j < 60; ++j) sum += view->matrix().at(59, j);
  EXPECT_NEAR(sum, 1.0, 1e-4);
  save_screenshot(w, "attention-rollout.png");
  // Export: the three figure formats and the numbers; the PDF embeds its fonts (no Type 3).
  const auto base = (dir / "rollout").string();
  const auto written = view->exportFigure(base);
  ASSERT_EQ(written.size(), 4u);
  for (const auto& f : written) EXPECT_GT(std::filesystem::file_size(f), 1000u) << f;
  if (std::system("command -v pdffonts > /dev/null") == 0) {
    const std::string fonts = (dir / "fonts.txt").string();
    ASSERT_EQ(std::system(("pdffonts " + base + ".pdf > " + fonts).c_str()), 0);
    std::ifstream in(fonts);
    const std::string listing((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
    EXPECT_EQ(listing.find("Type 3"), std::string::npos) << listing;
    EXPECT_NE(listing.find("TrueType"), std::string::npos) << listing;
  }
}

TEST_F(Studio, AnInspectionCanBeCancelledAndTheNewestRequestWins) {
  MainWindow w;
  QSignalSpy shown(&w, &MainWindow::checkpointShown);
  QSignalSpy cancelled(&w, &MainWindow::checkpointCancelled);
  QSignalSpy failed(&w, &MainWindow::checkpointFailed);
  // Cancelled at once: it stops at its next stage and nothing is shown.
  w.openDefaultCheckpoint();
  ASSERT_TRUE(w.isInspecting());
  w.cancelInspection();
  ASSERT_TRUE(cancelled.wait(120000));
  EXPECT_EQ(cancelled.front().front().toString(), defaultCheckpoint());
  EXPECT_TRUE(shown.isEmpty());
  EXPECT_TRUE(w.checkpointPath().isEmpty());
  EXPECT_FALSE(w.isInspecting());
  // Two requests in a row: the first stops, the second is the one shown.
  w.openCheckpoint(defaultCheckpoint("dt"));
  w.openCheckpoint(defaultCheckpoint("dc"));
  ASSERT_TRUE(shown.wait(180000)) << (failed.isEmpty()
                                          ? "timed out"
                                          : failed.front().front().toString().toStdString());
  EXPECT_EQ(shown.size(), 1);
  EXPECT_EQ(shown.front().front().toString(), defaultCheckpoint("dc"));
  EXPECT_EQ(w.checkpointPath(), defaultCheckpoint("dc"));
  EXPECT_EQ(w.attentionView()->tokenCount(), 24);  // DC: K 8 steps of R, s, a
}

TEST_F(Studio, AFileThatIsNotACheckpointIsExplained) {
  MainWindow w;
  w.show();
  QSignalSpy failed(&w, &MainWindow::checkpointFailed);
  w.openCheckpoint(good);
  ASSERT_TRUE(failed.wait(30000));
  EXPECT_TRUE(failed.front().front().toString().contains("good.hdf5"));
  auto* dialog = w.findChild<QMessageBox*>("checkpointErrorDialog");
  ASSERT_NE(dialog, nullptr);
  EXPECT_TRUE(dialog->isVisible());
  save_screenshot(*dialog, "checkpoint-error-dialog.png");
  dialog->accept();
  EXPECT_EQ(w.attentionView()->tokenCount(), 0);
}

// A rollout of the shipped DT from the window: entropy next to reward, on a worker thread that
// can be cancelled.
TEST_F(Studio, RollsTheCheckpointOutAndShowsEntropyAgainstReward) {
  MainWindow w;
  w.resize(1100, 700);
  QSignalSpy shown(&w, &MainWindow::checkpointShown);
  w.openDefaultCheckpoint();
  ASSERT_TRUE(shown.wait(180000));
  auto* view = w.rolloutView();
  auto config = view->request();
  EXPECT_EQ(config.targets.front(), 3600.0);  // hopper's default target: the data reach 3241
  // The targets on offer say where each comes from; choosing one sets the target.
  auto* chooser = view->targetChooser();
  EXPECT_EQ(view->targetChooser()->inUse(), "hopper reference 3600");
  ASSERT_GE(chooser->count(), 4);
  EXPECT_TRUE(chooser->itemText(2).startsWith("data's best episode "))
      << chooser->itemText(2).toStdString();
  chooser->setCurrentIndex(2);
  emit chooser->activated(2);
  EXPECT_EQ(view->request().targets.front(),
            std::round(chooser->itemText(2).section(' ', -1).toDouble()));
  EXPECT_TRUE(w.returnsView()->targetChooser()->inUse().startsWith("hopper reference 3600"));
  auto* field = view->findChild<QDoubleSpinBox*>();
  ASSERT_NE(field, nullptr);
  field->setValue(1234);
  EXPECT_EQ(chooser->inUse(), "own value");
  chooser->setCurrentIndex(0);
  emit chooser->activated(0);
  config = view->request();
  EXPECT_EQ(config.targets.front(), 3600.0);
  EXPECT_TRUE(config.entropy);

  // Cancelled at once: the worker stops at its next step and the window says so.
  QSignalSpy stopped(&w, &MainWindow::rolloutStopped);
  config.episodes = 50;
  w.runRollout(config);
  EXPECT_TRUE(w.isRollingOut());
  w.cancelRollout();
  ASSERT_TRUE(stopped.wait(60000));
  EXPECT_EQ(stopped.front().front().toString(), "cancelled");

  QSignalSpy done(&w, &MainWindow::rolloutShown);
  config.episodes = 2;
  w.runRollout(config);
  ASSERT_TRUE(done.wait(120000));
  EXPECT_GT(view->pairs(), 100);  // steps with full windows
  EXPECT_TRUE(std::isfinite(view->pearson()));
  EXPECT_GE(view->pearson(), -1.0);
  EXPECT_LE(view->pearson(), 1.0);
  EXPECT_GT(view->seriesPlot()->graph(0)->dataCount(), 100);
  w.showPage(view);
  w.show();
  save_screenshot(w, "entropy-reward-view.png");
}

// The View menu's tab shortcuts are digits (Ctrl+1 ... Ctrl+0), never punctuation past 9.
TEST_F(Studio, TheTabShortcutsAreDigits) {
  MainWindow w;
  int with_shortcut = 0;
  for (auto* menu : w.menuBar()->findChildren<QMenu*>())
    for (auto* action : menu->actions()) {
      const QString keys = action->shortcut().toString(QKeySequence::PortableText);
      if (!keys.startsWith("Ctrl+") || keys.size() != 6) continue;
      const QChar key = keys.back();
      EXPECT_TRUE(key.isLetter() || key.isDigit())
          << keys.toStdString() << " for " << action->text().toStdString();
      with_shortcut += key.isDigit();
    }
  EXPECT_EQ(with_shortcut, std::min(10, w.tabs()->count()));
}

// Modality zeroing and the target sweep from the window, on worker threads.
TEST_F(Studio, RunsTheAblationAndTheTargetSweep) {
  MainWindow w;
  w.resize(1100, 600);
  QSignalSpy shown(&w, &MainWindow::checkpointShown);
  const auto parses = models::checkpoint_parse_count();
  w.openDefaultCheckpoint();
  ASSERT_TRUE(shown.wait(180000));
  // Its inspection, its player and every view of it from one reading of the file.
  EXPECT_EQ(models::checkpoint_parse_count() - parses, 1u);
  auto* view = w.returnsView();
  view->setEpisodes(2);
  QSignalSpy done(&w, &MainWindow::returnsShown);
  // Before a run each plot says which button fills it, not bare axes.
  EXPECT_TRUE(viz::centred_note(view->ablationPlot()).startsWith("Run ablation"))
      << viz::centred_note(view->ablationPlot()).toStdString();
  EXPECT_TRUE(viz::centred_note(view->sweepPlot()).startsWith("Run sweep"))
      << viz::centred_note(view->sweepPlot()).toStdString();
  w.runAblation();
  ASSERT_TRUE(done.wait(120000));
  EXPECT_EQ(viz::centred_note(view->ablationPlot()), "") << "the bars replace the note";
  EXPECT_TRUE(viz::centred_note(view->sweepPlot()).startsWith("Run sweep"));
  EXPECT_FALSE(done.front().front().toBool());
  auto* bars = qobject_cast<QCPBars*>(view->ablationPlot()->plottable(0));
  ASSERT_NE(bars, nullptr);
  ASSERT_EQ(bars->data()->size(), 4);  // nothing, RTG, past states, actions zeroed
  // The bars are core's ablation at the default target, one bar a zeroing in its order.
  models::AblationConfig config;
  config.episodes = 2;
  const auto expected = models::zeroing_ablation(studio::defaultCheckpoint().toStdString(), config);
  ASSERT_EQ(expected.zeroings.size(), 4u);
  for (int k = 0; k < 4; ++k)
    EXPECT_EQ(bars->data()->at(k)->value,
              expected.zeroings[static_cast<std::size_t>(k)].summary.mean_score)
        << k;
  // The ablation in the window acted on the model read when the checkpoint opened; only the
  // reference computation above read the file again.
  EXPECT_EQ(models::checkpoint_parse_count() - parses, 2u);
  EXPECT_EQ(view->sweepTargets(), (std::vector<double>{1800, 3600, 7200, 18000, 36000, 72000}));
  w.runSweep();
  // The empty plot says what runs and how far it is until the curve arrives.
  EXPECT_TRUE(view->progressText().startsWith("Playing the target sweep"))
      << view->progressText().toStdString();
  // Only the sweep's button turns into Cancel; the ablation's waits.
  EXPECT_EQ(view->sweepButton()->text(), "Cancel");
  EXPECT_EQ(view->ablationButton()->text(), "Run ablation");
  EXPECT_FALSE(view->ablationButton()->isEnabled());
  ASSERT_TRUE(done.wait(120000));
  EXPECT_TRUE(done.back().front().toBool());
  EXPECT_EQ(view->sweepPlot()->graph(2)->dataCount(), 6);
  EXPECT_EQ(view->progressText(), "") << "the curve replaces the progress";
  EXPECT_EQ(models::checkpoint_parse_count() - parses, 2u)
      << "the sweep too acted on the model read once";
  {
    // And the t-SNE lays out that model's tokens (a few windows, the fewest iterations).
    auto source = w.tsneJob()->tokenSource();
    source.count = 3;
    w.tsneJob()->setTokenSource(source);
    QSignalSpy laid_out(w.tsneJob(), &TsneJob::finished);
    w.tsneJob()->startFromCheckpoint(5, 250);
    ASSERT_TRUE(laid_out.wait(120000));
    EXPECT_TRUE(w.tsneJob()->outcome().error.isEmpty())
        << w.tsneJob()->outcome().error.toStdString();
    EXPECT_GT(w.tsneJob()->outcome().points, 0);
    EXPECT_EQ(models::checkpoint_parse_count() - parses, 2u)
        << "the t-SNE acted on the model read once";
  }
  // The sweep's "done" stays with its tab: another tab's status says what is open.
  EXPECT_EQ(w.statusText(), "Target sweep done");
  w.showPage(w.datasetView());
  EXPECT_EQ(w.statusText(), "Open: model hopper-medium-expert-dt");
  w.showPage(view);
  w.show();
  save_screenshot(w, "returns-view.png");

  // Export All Views names each entry after its tab, once; the zeroing and the sweep are there,
  // enabled, and the Analyses tab's ablation and rtg-sweep (never run there) are not listed.
  const auto sources = w.figureSources();
  QStringList titles;
  for (const auto* source : sources) titles << source->figureTitle();
  EXPECT_EQ(titles.removeDuplicates(), 0) << titles.join(", ").toStdString();
  EXPECT_TRUE(titles.contains("Zeroing and target sweep")) << titles.join(", ").toStdString();
  for (const auto* source : sources) {
    EXPECT_NE(source->figureName(), "ablation");
    EXPECT_NE(source->figureName(), "rtg-sweep");
    if (source == view) {
      EXPECT_TRUE(source->hasFigure());
    }
  }
  viz::ExportDialog dialog(&w, true);
  dialog.setSources(sources);
  std::vector<const viz::FigureSource*> with_content;
  for (const auto* source : sources)
    if (source->hasFigure()) with_content.push_back(source);
  EXPECT_EQ(dialog.chosenSources(), with_content) << "chosen: the views with content, enabled";
  EXPECT_NE(std::find(with_content.begin(), with_content.end(), view), with_content.end());
  {
    // And so do the registered analyses of the Analyses tab.
    QSignalSpy analysed(w.analysesPanel(), &AnalysesPanel::resultShown);
    ASSERT_TRUE(w.analysesPanel()->view("attention")->setOption("windows", "2"));
    ASSERT_TRUE(w.analysesPanel()->run("attention"));
    ASSERT_TRUE(analysed.wait(60000));
    ASSERT_TRUE(w.analysesPanel()->view("attention")->hasFigure());
    EXPECT_EQ(models::checkpoint_parse_count() - parses, 2u)
        << "the Analyses tab acted on the model read once";
  }
}

// --screenshot-all: every view filled with real content, one PNG each.
TEST_F(Studio, TheScreenshotTourSavesEveryView) {
  MainWindow w;
  w.resize(1100, 700);
  w.show();
  const QString out = QString::fromStdString((dir / "tour").string());
  ScreenshotTour tour(w, out);
  // The maze view replays an AntMaze episode (made here: no goal-reacher needs to ship for it).
  const auto maze = dir / "antmaze-umaze-v2.hdf5";
  test::write_maze_episode(maze, 400);
  tour.setMazeDataset(QString::fromStdString(maze.string()));
  QSignalSpy finished(&tour, &ScreenshotTour::finished);
  tour.start();
  // Within ctest's 1800 s for it: about two minutes on two quiet cores, several times that beside
  // another build.
  ASSERT_TRUE(finished.wait(1700000));
  ASSERT_TRUE(finished.front().at(0).toBool()) << finished.front().at(1).toString().toStdString();
  ASSERT_EQ(tour.written().size(), 26);
  for (const auto& name : {"dataset.png",
                           "attention.png",
                           "attention-difference.png",
                           "attention-side-by-side.png",
                           "attention-locality.png",
                           "entropy-reward.png",
                           "zeroing-and-sweep.png",
                           "tsne.png",
                           "analyses.png",
                           "training.png",
                           "viewer.png",
                           "workspace.png",
                           "markov-lab.png",
                           "presentation-attention.png",
                           "presentation-entropy-reward.png",
                           "presentation-zeroing-and-sweep.png",
                           "presentation-training.png",
                           "presentation-viewer.png",
                           "presentation-markov-lab.png",
                           "lesson-attention-disperses.png",
                           "lesson-markov-pooling-floor.png",
                           "lesson-what-the-model-relies-on.png",
                           "user-guide.png",
                           "viewer-maze.png",
                           "viewer-hand.png",
                           "viewer-kitchen.png"}) {
    const QImage image(QDir(out).filePath(name));
    EXPECT_FALSE(image.isNull()) << name;
    EXPECT_GE(image.width(), 1000) << name;
    QDir().mkpath(DSTUDIO_SCREENSHOT_DIR);
    image.save(QDir(DSTUDIO_SCREENSHOT_DIR).filePath(QString("tour-") + name));
  }

  // Every figure the tour exported (File ▸ Export All Views of every filled view) has its recipe
  // beside it, and `dstudio figure render` draws it again from the recipe alone: the same bytes
  // (the PNG of a view; the PDF of the Analyses tab's figures, whose numbers the window computes
  // as the command line does) and the same numbers, in the same layout.
  const auto bytes = [](const QString& path) {
    return read_regular_file(path.toStdString(), std::uint64_t{1} << 30);
  };
  const QDir figures(QDir(out).filePath("figures"));
  // The views' figures, then the Analyses tab's in their own folder, by `dstudio analyze`'s names.
  auto pngs = figures.entryList({"*.png"}, QDir::Files, QDir::Name);
  for (const auto& png : QDir(figures.filePath("analyses")).entryList({"*.png"}, QDir::Files))
    pngs << "analyses/" + png;
  EXPECT_TRUE(pngs.contains("analyses/patching_stream.png")) << pngs.join(' ').toStdString();
  std::set<std::string> analyses;
  int pdfs = 0;
  // A panel drawn from what another panel's drawing again computes anew (the rollout, the lab's
  // run) is not computed a second time: its recipe is that panel's but for the figure.
  const std::map<QString, QString> shared = {{"entropy_reward_correlation", "entropy_reward"},
                                             {"markov_lab_mixing", "markov_lab_loss"}};
  const auto but_the_figure = [&](const QString& stem) {
    auto r = read_figure_recipe(figures.filePath(stem + ".recipe.json").toStdString());
    r.figure.name.clear();
    r.outputs.clear();
    r.created.clear();
    return r;
  };
  for (const auto& png : pngs) {
    const QString stem = png.chopped(4);
    const QString recipe_path = figures.filePath(stem + ".recipe.json");
    ASSERT_TRUE(tour.figures().contains(recipe_path)) << png.toStdString() << " has no recipe";
    const auto recipe = read_figure_recipe(recipe_path.toStdString());
    analyses.insert(recipe.analysis);
    if (const auto other = shared.find(stem); other != shared.end()) {
      EXPECT_EQ(to_json(but_the_figure(stem)), to_json(but_the_figure(other->second)));
      continue;
    }
    const bool analysis = recipe.analysis.rfind("studio-", 0) != 0;
    const QString drawn = figures.filePath(stem + (analysis ? ".pdf" : ".png"));
    const QString again = QDir(out).filePath("again-" + QFileInfo(drawn).fileName());
    pdfs += analysis ? 1 : 0;
    ASSERT_EQ(test::figure_render(recipe_path.toStdString(), again.toStdString(), "/dev/null"), 0)
        << recipe_path.toStdString();
    EXPECT_EQ(bytes(again), bytes(drawn)) << drawn.toStdString() << " drawn again";
    // Its numbers, where the panel has its own.
    const QString csv = figures.filePath(stem + ".csv");
    if (QFileInfo::exists(csv)) {
      EXPECT_EQ(bytes(again.chopped(4) + ".csv"), bytes(csv)) << png.toStdString() << "'s numbers";
    }
  }
  EXPECT_GE(pngs.size(), 15) << "the tour's views each exported";
  EXPECT_EQ(pdfs, 3) << "the Analyses tab's patching: stream, components, joints";
  for (const char* view : {"studio-attention", "studio-entropy-reward", "studio-returns",
                           "studio-tsne", "studio-training-curves", "studio-run-comparison",
                           "studio-viewer-timeline", "studio-markov-lab", "patching"})
    EXPECT_TRUE(analyses.count(view)) << view << " among the recipes";
  // The Viewer tab's recording, where its scene has OpenGL: drawn again from its recipe, the same
  // clip log and the same video, byte for byte.
  if (viz::SceneView::openGlAvailable()) {
    ASSERT_FALSE(tour.clip().isEmpty());
    const QString again = QDir(out).filePath("again-clip.mp4");
    ASSERT_EQ(test::figure_render(tour.clip().chopped(4).toStdString() + ".recipe.json",
                                  again.toStdString()),
              0);
    EXPECT_EQ(bytes(again.chopped(4) + ".json"), bytes(tour.clip().chopped(4) + ".json"))
        << "the clip log";
    EXPECT_EQ(bytes(again), bytes(tour.clip())) << "the clip drawn again";
  }
  // File ▸ Copy Figure Recipe: the recipe of the tab on screen, or why there is none.
  {
    QString why;
    w.showPage(w.markovLab());
    const std::string text = w.figureRecipeText(&why);
    ASSERT_FALSE(text.empty()) << why.toStdString();
    EXPECT_EQ(parse_figure_recipe(text, "clipboard").analysis, "studio-markov-lab");
    w.showPage(w.workspaceView());
    EXPECT_TRUE(w.figureRecipeText(&why).empty());
    EXPECT_EQ(why, "This tab draws no figure.");
  }
  // A view's recipe whose checkpoint changed is refused, naming the hash that differs.
  {
    auto recipe = read_figure_recipe(figures.filePath("attention.recipe.json").toStdString());
    const std::string made = recipe.checkpoint_hash;
    recipe.checkpoint_hash = "xxh3-128:00000000000000000000000000000000";
    const QString changed = QDir(out).filePath("changed.recipe.json");
    write_figure_recipe(changed.toStdString(), recipe);
    const QString log = QDir(out).filePath("changed.log");
    EXPECT_NE(
        test::figure_render(changed.toStdString(), QDir(out).filePath("changed.png").toStdString(),
                            log.toStdString()),
        0);
    const std::string said = bytes(log);
    EXPECT_NE(said.find(made), std::string::npos) << said;
    EXPECT_NE(said.find(recipe.checkpoint_hash), std::string::npos) << said;
    EXPECT_FALSE(QFileInfo::exists(QDir(out).filePath("changed.png")));
  }

  // On a projector nothing is clipped: every plot's text stays on its plot, every button and
  // one-line label has the room its text needs, the entropy table shows all its columns; and
  // leaving presentation mode gives the window back its size.
  for (int t = 0; t < w.tabs()->count(); ++t)
    EXPECT_LE(w.page(t)->minimumSizeHint().width(), 1260)
        << w.tabs()->tabText(t).toStdString() << " fits a laptop's screen";
  // Every tab laid out once, so that the window's size is one it can keep.
  for (int t = 0; t < w.tabs()->count(); ++t) {
    w.tabs()->setCurrentIndex(t);
    test::deliver_posted_events();
  }
  w.resize(w.size().expandedTo(w.minimumSizeHint()));
  test::deliver_posted_events();
  const QSize before = w.size();
  w.setPresentationMode(true);
  for (int t = 0; t < w.tabs()->count(); ++t) {
    w.tabs()->setCurrentIndex(t);
    test::deliver_posted_events();
    const std::string tab = w.tabs()->tabText(t).toStdString();
    for (auto* plot : w.page(t)->findChildren<QCustomPlot*>()) {
      if (!plot->isVisible() || plot->width() < 120 || plot->height() < 120) continue;
      plot->replot();
      test::deliver_posted_events();  // the replot queued by fitting the text
      plot->replot();
      for (const auto& problem : viz::text_layout(*plot).problems(0))
        if (problem.find("edge") != std::string::npos) ADD_FAILURE() << tab << ": " << problem;
    }
    for (auto* button : w.page(t)->findChildren<QPushButton*>()) {
      if (button->isVisible() && !button->text().isEmpty()) {
        EXPECT_GE(button->width(), button->fontMetrics().horizontalAdvance(button->text()) + 8)
            << tab << ": button " << button->text().toStdString();
      }
    }
    for (auto* label : w.page(t)->findChildren<QLabel*>()) {
      if (label->isVisible() && !label->wordWrap() && label->pixmap().isNull() &&
          !label->text().isEmpty()) {
        EXPECT_GE(label->width(), label->minimumSizeHint().width())
            << tab << ": label " << label->text().toStdString();
      }
    }
  }
  w.showPage(w.attentionView());
  test::deliver_posted_events();
  auto* table = w.attentionView()->entropyTable();
  for (int c = 0; c < table->columnCount(); ++c) {
    if (!table->isColumnHidden(c)) {
      EXPECT_LE(table->columnViewportPosition(c) + table->columnWidth(c),
                table->viewport()->width())
          << "entropy column " << c;
    }
  }
  w.setPresentationMode(false);
  EXPECT_TRUE(test::wait_until([&] { return w.size() == before; }, 10000))
      << w.size().width() << " x " << w.size().height();
}

// Every job the window runs in the background stops when asked: the comparison, the ablation,
// the sweep, the t-SNE and a registered analysis (the load, the inspection and the rollout have
// their own tests above), and after each the window still works.
TEST_F(Studio, EveryLongJobInTheWindowCanBeCancelled) {
  // An analysis registered as a plugin would: it counts up to --steps, one step a millisecond.
  analysis::AnalysisDefinition counting;
  counting.name = "count-steps";
  counting.title = "Count steps";
  counting.description = "Counts to --steps, slowly";
  counting.options = {
      {"steps", "how far", analysis::AnalysisOption::Type::Integer, "100000", {}, 1, 1e9}};
  counting.run = [](const analysis::AnalysisInputs& in, const Progress& progress) {
    const auto steps = in.options.integer("steps");
    for (std::int64_t i = 0; i < steps; ++i) {
      progress.update(static_cast<double>(i) / static_cast<double>(steps), "counting");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    analysis::AnalysisResult r;
    r.summary_json = "{\"counted\": " + std::to_string(steps) + "}";
    return r;
  };
  counting.origin = {"gui-test", "1.0"};
  const RegisteredForTheTest registered(counting);

  MainWindow w;
  QSignalSpy shown(&w, &MainWindow::checkpointShown);
  w.openDefaultCheckpoint();
  ASSERT_TRUE(shown.wait(180000));
  for (Job* job : w.jobs()) EXPECT_FALSE(job->isRunning()) << job->name().toStdString();
  EXPECT_GE(w.jobs().size(), 7u);  // load, inspect, compare, rollout, returns, t-SNE, each analysis

  QSignalSpy compare_failed(&w, &MainWindow::comparisonFailed);
  w.compareCheckpoint(defaultCheckpoint("dt"));
  EXPECT_TRUE(w.isComparing());
  w.cancelComparison();
  ASSERT_TRUE(compare_failed.wait(60000));
  EXPECT_EQ(compare_failed.front().front().toString(), "cancelled");
  EXPECT_FALSE(w.isComparing());

  QSignalSpy stopped(&w, &MainWindow::rolloutStopped);
  w.returnsView()->setEpisodes(50);
  w.runAblation();
  EXPECT_TRUE(w.isRollingOut());
  w.cancelRollout();
  ASSERT_TRUE(stopped.wait(60000));
  EXPECT_EQ(stopped.back().front().toString(), "cancelled");
  w.runSweep();
  EXPECT_TRUE(w.isRollingOut());
  w.cancelRollout();
  ASSERT_TRUE(stopped.wait(60000));
  EXPECT_EQ(stopped.size(), 2);
  EXPECT_EQ(stopped.back().front().toString(), "cancelled");

  QSignalSpy tsne_finished(w.tsneJob(), &TsneJob::finished);
  emit w.tsneView()->runRequested(30, 5000);
  EXPECT_TRUE(w.tsneJob()->isRunning());
  emit w.tsneView()->cancelRequested();
  ASSERT_TRUE(tsne_finished.wait(60000));
  EXPECT_TRUE(w.tsneJob()->outcome().cancelled);

  auto* panel = w.analysesPanel();
  auto* view = panel->view("count-steps");
  ASSERT_NE(view, nullptr);
  QSignalSpy analysis_finished(panel->job("count-steps"), &Job::finished);
  ASSERT_TRUE(panel->run("count-steps"));
  ASSERT_TRUE(test::wait_until([&] { return panel->job("count-steps")->fraction() > 0.0; }, 10000));
  emit view->cancelRequested();  // the panel's Cancel button
  ASSERT_TRUE(analysis_finished.wait(10000));
  EXPECT_EQ(panel->job("count-steps")->lastEnd(), Job::End::Cancelled);
  EXPECT_TRUE(view->status().contains("cancelled")) << view->status().toStdString();
  EXPECT_FALSE(view->hasResult());

  // A second Run while one runs restarts it visibly; the newest options are the ones computed.
  QSignalSpy restarting(panel->job("count-steps"), &Job::restarting);
  QSignalSpy result_shown(panel, &AnalysesPanel::resultShown);
  ASSERT_TRUE(panel->run("count-steps"));
  ASSERT_TRUE(view->setOption("steps", "20"));
  ASSERT_TRUE(panel->run("count-steps"));
  EXPECT_EQ(restarting.size(), 1);
  ASSERT_TRUE(result_shown.wait(30000));
  ASSERT_TRUE(view->hasResult());
  EXPECT_NE(view->result()->summary_json.find("\"counted\": 20"), std::string::npos)
      << view->result()->summary_json;
  for (Job* job : w.jobs()) EXPECT_FALSE(job->isRunning()) << job->name().toStdString();
}

// The studio's own analyses have panels too, with every option of `dstudio analyze`: the form
// leaves out what the command line leaves out, and the attention analysis run from its panel
// draws the very map the Attention tab shows.
TEST_F(Studio, TheStudiosAnalysesRunFromTheirPanelsAsOnTheCommandLine) {
  MainWindow w;
  w.resize(1200, 760);
  auto* panel = w.analysesPanel();
  EXPECT_EQ(panel->names().mid(0, 7), (QStringList{"attention", "entropy", "tsne", "ablation",
                                                   "training", "locality", "rtg-sweep"}));
  auto* view = panel->view("attention");
  EXPECT_EQ(view->options(), (std::map<std::string, std::string>{{"compare", ""},
                                                                 {"seed", "0"},
                                                                 {"source", "dataset"},
                                                                 {"threads", "2"},
                                                                 {"windows", "16"}}));
  ASSERT_TRUE(view->setOption("layer", "2"));
  EXPECT_EQ(view->options().at("layer"), "2");
  ASSERT_TRUE(view->setOption("layer", ""));
  EXPECT_EQ(view->options().count("layer"), 0u) << "back to the default: all layers";
  EXPECT_FALSE(panel->run("attention")) << "no checkpoint yet";
  QSignalSpy shown(&w, &MainWindow::checkpointShown);
  w.openDefaultCheckpoint();
  ASSERT_TRUE(shown.wait(180000));
  QSignalSpy result(panel, &AnalysesPanel::resultShown);
  ASSERT_TRUE(panel->run("attention"));
  ASSERT_TRUE(result.wait(120000)) << view->status().toStdString();
  const auto& figures = view->result()->figures;
  ASSERT_EQ(figures.size(), 5u);  // three layers, their mean, the rollout
  EXPECT_EQ(figures[3].name, "attention_mean_layers");
  w.attentionView()->setMode(viz::AttentionMapView::Mode::MeanOverLayers);
  const auto& on_tab = w.attentionView()->matrix();
  ASSERT_EQ(figures[3].matrix.tokens, on_tab.tokens);
  double largest = 0.0;
  for (std::size_t k = 0; k < on_tab.values.size(); ++k)
    largest = std::max(largest, std::abs(figures[3].matrix.values[k] - on_tab.values[k]));
  EXPECT_LT(
      largest,
      1e-6);  // the same windows; float32 passes may split their sums differently across threads
  w.showPage(panel);
  panel->select("attention");
  view->showFigure(3);
  w.show();
  save_screenshot(w, "studio-analysis-panel.png");

  // Exported from the panel, each figure has its recipe beside it, and `dstudio figure render`
  // draws it again byte for byte; the figure on screen's recipe is what Copy Figure Recipe copies.
  const auto recipe = parse_figure_recipe(view->figureRecipeText(), "clipboard");
  EXPECT_EQ(recipe.analysis, "attention");
  EXPECT_EQ(recipe.figure.name, "attention_mean_layers");
  EXPECT_EQ(recipe.checkpoint_hash, file_content_hash(recipe.checkpoint));
  const QString folder = QDir::temp().filePath(
      QStringLiteral("dstudio-panel-recipes-%1").arg(QCoreApplication::applicationPid()));
  QDir(folder).removeRecursively();
  QDir().mkpath(folder);
  viz::FigureStyle png;
  png.pdf = png.svg = false;
  const auto base = QDir(folder).filePath("analysis").toStdString();
  const auto written = view->exportFigure(base, png);
  const std::string figure = base + "_attention_mean_layers";
  ASSERT_TRUE(std::find(written.begin(), written.end(), figure + ".recipe.json") != written.end());
  const std::string again = QDir(folder).filePath("again.png").toStdString();
  ASSERT_EQ(test::figure_render(figure + ".recipe.json", again, "/dev/null"), 0) << figure;
  const auto bytes = [](const std::string& path) {
    return read_regular_file(path, std::uint64_t{1} << 30);
  };
  EXPECT_EQ(bytes(again), bytes(figure + ".png")) << "the PNG the panel exported, drawn again";

  // A figure whose analysis writes a table of its name has that table beside it, as `dstudio
  // analyze` and `figure render` write it: the same CSV, in the same layout.
  auto* lens = panel->view("action-lens");
  ASSERT_NE(lens, nullptr);
  ASSERT_TRUE(lens->setOption("windows", "2"));
  ASSERT_TRUE(panel->run("action-lens"));
  ASSERT_TRUE(result.wait(120000)) << lens->status().toStdString();
  const auto lens_base = QDir(folder).filePath("lens").toStdString();
  (void)lens->exportFigure(lens_base, png);
  const std::string lens_figure = lens_base + "_action_lens";
  const std::string lens_again = QDir(folder).filePath("lens-again.png").toStdString();
  ASSERT_EQ(test::figure_render(lens_figure + ".recipe.json", lens_again, "/dev/null"), 0);
  EXPECT_EQ(bytes(lens_again), bytes(lens_figure + ".png"));
  EXPECT_EQ(bytes(QDir(folder).filePath("lens-again.csv").toStdString()),
            bytes(lens_figure + ".csv"))
      << "the numbers beside the panel's export, as figure render writes them";
  EXPECT_EQ(bytes(lens_figure + ".csv").substr(0, 18), "layer,joint,error\n");
  QDir(folder).removeRecursively();
}

// A second checkpoint never inherits the first one's results: the rollout, the zeroing and sweep,
// the t-SNE and the analyses' panels are cleared (and their running work stopped), each view
// names the model it now belongs to, and an export holds only the new model's figures.
TEST_F(Studio, OpeningAnotherCheckpointClearsEveryViewOfThePreviousOne) {
  MainWindow w;
  QSignalSpy shown(&w, &MainWindow::checkpointShown);
  w.openCheckpoint(defaultCheckpoint("dt"));
  ASSERT_TRUE(shown.wait(180000));
  auto config = w.rolloutView()->request();
  config.episodes = 1;
  QSignalSpy rolled(&w, &MainWindow::rolloutShown);
  w.runRollout(config);
  ASSERT_TRUE(rolled.wait(120000));
  ASSERT_TRUE(w.rolloutView()->hasFigure());
  w.returnsView()->setEpisodes(1);
  QSignalSpy returned(&w, &MainWindow::returnsShown);
  w.runAblation();
  ASSERT_TRUE(returned.wait(120000));
  ASSERT_TRUE(w.returnsView()->hasFigure());
  QSignalSpy analysed(w.analysesPanel(), &AnalysesPanel::resultShown);
  ASSERT_TRUE(w.analysesPanel()->view("attention")->setOption("windows", "2"));
  ASSERT_TRUE(w.analysesPanel()->run("attention"));
  ASSERT_TRUE(analysed.wait(60000));
  ASSERT_TRUE(w.analysesPanel()->view("attention")->hasFigure());
  // A sweep still running when the other model arrives is stopped, not shown under it.
  w.returnsView()->setEpisodes(50);
  QSignalSpy stopped(&w, &MainWindow::rolloutStopped);
  w.runSweep();
  w.openCheckpoint(defaultCheckpoint("dc"));
  ASSERT_TRUE(shown.wait(180000));
  EXPECT_EQ(w.checkpointPath(), defaultCheckpoint("dc"));
  ASSERT_TRUE(stopped.wait(60000));
  EXPECT_EQ(stopped.back().front().toString(), "cancelled");
  test::deliver_posted_events();  // anything a cancelled job had queued
  EXPECT_FALSE(w.rolloutView()->hasFigure());
  EXPECT_FALSE(w.returnsView()->hasFigure());
  EXPECT_FALSE(w.tsneView()->hasFigure());
  EXPECT_FALSE(w.analysesPanel()->view("attention")->hasFigure());
  EXPECT_EQ(w.rolloutView()->pairs(), 0);
  const QString dc = QFileInfo(defaultCheckpoint("dc")).completeBaseName();
  bool named = false;
  for (const auto* label : w.rolloutView()->findChildren<QLabel*>())
    named |= label->text().contains(dc);
  EXPECT_TRUE(named) << "the rollout view names the model it belongs to";
  // Export All Views now writes the new model's attention only.
  std::vector<const viz::FigureSource*> sources = {w.attentionView(), w.rolloutView(),
                                                   w.returnsView(), w.tsneView()};
  for (const auto* source : w.analysesPanel()->figureSources()) sources.push_back(source);
  const auto written = viz::export_all(sources, (dir / "after").string(), {});
  ASSERT_FALSE(written.empty());
  for (const auto& f : written)
    EXPECT_TRUE(std::filesystem::path(f).filename().string().rfind("attention.", 0) == 0) << f;
}

// A run in the training list opens in the analysis views from its menu, named by its run folder,
// and compares with the open model.
TEST_F(Studio, ARunOpensFromTheRunListAndIsNamedByItsFolder) {
  const auto run = dir / "dt-seed3-20260101-120000";
  std::filesystem::create_directories(run);
  std::filesystem::copy_file(defaultCheckpoint("dt").toStdString(), run / "checkpoint.pt");
  std::ofstream(run / "metrics.csv")
      << "step,loss,learning_rate,steps_per_second\n10,0.8,1e-4,50\n";
  const auto bare = dir / "dc-seed1-20260101-120000";  // metrics only: nothing to open
  std::filesystem::create_directories(bare);
  std::ofstream(bare / "metrics.csv")
      << "step,loss,learning_rate,steps_per_second\n10,0.8,1e-4,50\n";
  MainWindow w;
  auto* panel = w.trainingPanel();
  ASSERT_TRUE(panel->addRunFolder(QString::fromStdString(run.string())));
  ASSERT_TRUE(panel->addRunFolder(QString::fromStdString(bare.string())));
  std::unique_ptr<QMenu> menu(panel->runMenu(0));
  ASSERT_NE(menu, nullptr);
  auto* open = menu->findChild<QAction*>("Open in the Analysis Views");
  auto* compare = menu->findChild<QAction*>("Compare with the Open Model");
  auto* resume = menu->findChild<QAction*>("Continue Training");
  ASSERT_TRUE(open && compare && resume);
  EXPECT_TRUE(open->isEnabled());
  EXPECT_FALSE(resume->isEnabled()) << "no dataset is open to continue on";
  std::unique_ptr<QMenu> bare_menu(panel->runMenu(1));
  EXPECT_FALSE(bare_menu->findChild<QAction*>("Open in the Analysis Views")->isEnabled());
  EXPECT_EQ(panel->runMenu(2), nullptr);

  QSignalSpy shown(&w, &MainWindow::checkpointShown);
  open->trigger();
  ASSERT_TRUE(shown.wait(180000));
  EXPECT_EQ(std::filesystem::path(w.checkpointPath().toStdString()), run / "checkpoint.pt");
  bool named = false;
  for (const auto* label : w.attentionView()->findChildren<QLabel*>())
    named |= label->text().contains("dt-seed3-20260101-120000");
  EXPECT_TRUE(named) << "the attention view names the run, not \"checkpoint\"";
  // Compared with itself from the menu: the difference is zero.
  QSignalSpy compared(&w, &MainWindow::comparisonShown);
  std::unique_ptr<QMenu> again(panel->runMenu(0));
  again->findChild<QAction*>("Compare with the Open Model")->trigger();
  ASSERT_TRUE(compared.wait(60000));
  EXPECT_EQ(std::filesystem::path(compared.front().front().toString().toStdString()),
            run / "checkpoint.pt");
}

// An analysis from a plugin appears as a panel of its own: its form from its options, its
// result's summary, tables and figure, and its figure in Export All Views.
TEST_F(Studio, ARegisteredAnalysisRunsFromItsPanel) {
  analysis::AnalysisDefinition returns;
  returns.name = "episode-lengths";
  returns.title = "Episode lengths";
  returns.description = "The lengths of a dataset's episodes";
  returns.needs_checkpoint = false;
  returns.options = {
      {"longest", "episodes listed", analysis::AnalysisOption::Type::Integer, "5", {}, 1, 1000},
      {"scale", "a factor", analysis::AnalysisOption::Type::Number, "1", {}, 0, 10},
      {"order",
       "the order",
       analysis::AnalysisOption::Type::Choice,
       "longest",
       {"longest", "shortest"}},
      {"bars", "as bars", analysis::AnalysisOption::Type::Flag, "false"}};
  returns.run = [](const analysis::AnalysisInputs& in, const Progress& progress) {
    const auto ds = data::load_dataset(in.dataset, {}, progress);
    std::vector<double> lengths;
    for (const auto& e : ds.episodes)
      lengths.push_back(in.options.number("scale") * static_cast<double>(e.length));
    std::sort(lengths.begin(), lengths.end());
    if (in.options.text("order") == "longest") std::reverse(lengths.begin(), lengths.end());
    analysis::AnalysisResult r;
    r.summary_json = "{\"episodes\": " + std::to_string(ds.episodes.size()) + "}";
    analysis::AnalysisTable t{"lengths", {"rank", "length"}, {}};
    analysis::AnalysisFigure f{"lengths",
                               "Episode lengths",
                               "rank",
                               "steps",
                               in.options.flag("bars") ? analysis::AnalysisFigure::Kind::Bars
                                                       : analysis::AnalysisFigure::Kind::Lines,
                               {{"length", {}, {}, {}}},
                               {}};
    for (std::size_t i = 0;
         i < lengths.size() && i < static_cast<std::size_t>(in.options.integer("longest")); ++i) {
      t.rows.push_back({static_cast<double>(i + 1), lengths[i]});
      f.series.front().x.push_back(static_cast<double>(i + 1));
      f.series.front().y.push_back(lengths[i]);
    }
    r.tables.push_back(t);
    r.figures.push_back(f);
    return r;
  };
  returns.origin = {"gui-test", "1.0"};
  const RegisteredForTheTest registered(returns);

  MainWindow w;
  w.resize(1200, 760);
  auto* panel = w.analysesPanel();
  auto* view = panel->view("episode-lengths");
  ASSERT_NE(view, nullptr);
  // The form holds the schema's defaults, typed.
  EXPECT_EQ(view->options(),
            (std::map<std::string, std::string>{
                {"bars", "false"}, {"longest", "5"}, {"order", "longest"}, {"scale", "1"}}));
  // Without a dataset it runs and fails with the analysis's own message, shown in its panel.
  QSignalSpy ended(panel->job("episode-lengths"), &Job::finished);
  ASSERT_TRUE(panel->run("episode-lengths"));
  ASSERT_TRUE(ended.wait(30000));
  EXPECT_EQ(panel->job("episode-lengths")->lastEnd(), Job::End::Failed);
  EXPECT_TRUE(view->status().startsWith("Stopped: ")) << view->status().toStdString();
  EXPECT_FALSE(view->hasResult());
  ASSERT_TRUE(open(w, good));
  ASSERT_TRUE(view->setOption("order", "shortest"));
  ASSERT_TRUE(view->setOption("scale", "2"));
  QSignalSpy result_shown(panel, &AnalysesPanel::resultShown);
  ASSERT_TRUE(panel->run("episode-lengths"));
  ASSERT_TRUE(result_shown.wait(30000));
  // good.hdf5: episodes of 3 and 4 steps and a tail, scaled by 2 and shortest first.
  const auto ds = data::load_dataset(good.toStdString());
  std::vector<double> expected;
  for (const auto& e : ds.episodes) expected.push_back(2.0 * static_cast<double>(e.length));
  std::sort(expected.begin(), expected.end());
  auto* table = qobject_cast<QTableWidget*>(view->tables()->widget(0));
  ASSERT_NE(table, nullptr);
  ASSERT_EQ(table->rowCount(), static_cast<int>(expected.size()));
  for (int r = 0; r < table->rowCount(); ++r)
    EXPECT_EQ(table->item(r, 1)->text().toDouble(), expected[static_cast<std::size_t>(r)]);
  ASSERT_EQ(view->summary()->topLevelItemCount(), 1);
  EXPECT_EQ(view->summary()->topLevelItem(0)->text(1), QString::number(ds.episodes.size()));
  w.showPage(panel);
  panel->select("episode-lengths");
  w.show();
  save_screenshot(w, "registered-analysis.png");
  // Its figure exports with the others.
  const auto written = viz::export_all(panel->figureSources(), (dir / "export").string(), {});
  ASSERT_EQ(written.size(), 5u);  // pdf, svg, png, csv and its recipe
  EXPECT_TRUE(std::any_of(written.begin(), written.end(), [](const auto& f) {
    return f.ends_with("/episode-lengths_lengths.png");
  }));
  EXPECT_TRUE(std::any_of(written.begin(), written.end(), [](const auto& f) {
    return f.ends_with("/episode-lengths_lengths.recipe.json");
  }));
  for (const auto& f : written)
    if (f.ends_with(".csv")) {
      // Its table of the figure's name, as `dstudio analyze` writes beside the figure.
      std::ifstream in(f);
      const std::string csv((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      EXPECT_EQ(csv.substr(0, csv.find('\n', csv.find('\n') + 1)), "rank,length\n1,6") << csv;
    } else {
      EXPECT_GT(std::filesystem::file_size(f), 1000u) << f;
    }
}

}  // namespace
}  // namespace dstudio::studio
