// The screenshot tour. See screenshot_tour.h.

#include "screenshot_tour.h"

#include <qcustomplot.h>

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QPushButton>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <algorithm>

#include "analyses_panel.h"
#include "default_dataset.h"
#include "dstudio/behaviour/adroit_data.h"
#include "dstudio/behaviour/antmaze_data.h"
#include "dstudio/behaviour/generate.h"
#include "dstudio/behaviour/mlp_policy.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/viz/analysis_view.h"
#include "dstudio/viz/attention_map_view.h"
#include "dstudio/viz/dataset_view.h"
#include "dstudio/viz/figures.h"
#include "dstudio/viz/markov_lab_view.h"
#include "dstudio/viz/return_analysis_view.h"
#include "dstudio/viz/scene_view.h"
#include "dstudio/viz/tsne_view.h"
#include "dstudio/viz/workspace_view.h"
#include "job.h"
#include "lesson_panel.h"
#include "main_window.h"
#include "markov_lab_job.h"
#include "sweep_panel.h"
#include "training_panel.h"
#include "tsne_job.h"
#include "user_guide.h"
#include "viewer_panel.h"

namespace dstudio::studio {
namespace {
constexpr int kViewerStep = 180;  // where the viewer's screenshot stops the episode
constexpr int kClipFrames = 6;    // the viewer's recording: a fifth of a second at 30 per second
constexpr int kMazeStep = 300;    // where the maze's screenshot stops the replayed episode
// The maze made when none is given: one episode of D4RL's umaze data and the start of the next.
constexpr const char* kMazeTask = "antmaze-umaze-v2";
constexpr std::int64_t kMazeTransitions = 1200;
// The hand: one episode of pen's expert data, made as D4RL made it with the shipped DAPG expert,
// stopped when the pen has turned most of the way to its target.
constexpr const char* kHandTask = "pen";
constexpr int kHandStep = 40;
// The kitchen: one episode of uniformly random actions (no policy of the studio's does the
// kitchen's tasks), stopped halfway through its 280 steps.
constexpr const char* kKitchenTask = "kitchen-complete-v0";
constexpr int kKitchenStep = 140;
}  // namespace

void ScreenshotTour::setMazeDataset(const QString& path) {
  maze_dataset_ = path;
}

ScreenshotTour::ScreenshotTour(MainWindow& window, QString dir)
    : window_(window), dir_(std::move(dir)) {
  // Each view's content arrives from a worker; the next step starts when the previous reports.
  connect(&window_, &MainWindow::datasetOpened, this, [this] {
    auto* view = window_.datasetView();
    view->episodeTable()->selectRow(0);
    auto next = [this] {
      save(0, "dataset.png");
      window_.openDefaultCheckpoint();
    };
    // Rows computed after the dataset is shown (the R^2) belong in the picture too.
    if (view->summaryComplete())
      next();
    else
      connect(view, &viz::DatasetView::summaryCompleted, this, next, Qt::SingleShotConnection);
  });
  connect(&window_, &MainWindow::checkpointShown, this, [this] {
    save(1, "attention.png");
    // The shipped GDT on the same windows: DT minus GDT, as in GDT's figure 4.
    window_.compareCheckpoint(defaultCheckpoint(QStringLiteral("gdt")));
  });
  connect(&window_, &MainWindow::comparisonFailed, this, &ScreenshotTour::fail);
  connect(&window_, &MainWindow::comparisonShown, this, [this] {
    save(1, "attention-difference.png");
    window_.attentionView()->setComparisonMode(viz::AttentionMapView::Comparison::SideBySide);
    save(1, "attention-side-by-side.png");
    // Their locality: DT's weight spread over the steps, GDT's on the last one or two.
    auto* side = window_.attentionView()->sideTabs();
    side->setCurrentWidget(window_.attentionView()->localityPlot());
    save(1, "attention-locality.png");
    side->setCurrentIndex(0);
    window_.attentionView()->setComparisonMode(viz::AttentionMapView::Comparison::Alone);
    auto config = models::RolloutConfig{};
    config.targets = {3600.0};
    config.episodes =
        2;  // the shipped models hop whole 1000-step episodes: two a point keep the tour to minutes
    config.entropy = true;
    window_.runRollout(config);
  });
  connect(&window_, &MainWindow::rolloutShown, this, [this] {
    save(2, "entropy-reward.png");
    window_.returnsView()->setEpisodes(2);
    window_.runAblation();
  });
  connect(&window_, &MainWindow::returnsShown, this, [this](bool sweep) {
    if (!sweep) {
      window_.runSweep();
      return;
    }
    save(3, "zeroing-and-sweep.png");
    showTsne();
  });
  connect(&window_, &MainWindow::loadFailed, this, &ScreenshotTour::fail);
  connect(&window_, &MainWindow::checkpointFailed, this, &ScreenshotTour::fail);
  connect(&window_, &MainWindow::rolloutStopped, this, &ScreenshotTour::fail);
}

void ScreenshotTour::start() {
  QDir().mkpath(dir_);
  window_.openDefaultDataset();
}

void ScreenshotTour::showTsne() {
  auto* job = window_.tsneJob();
  connect(
      job, &TsneJob::finished, this,
      [this](const TsneOutcome& outcome) {
        if (!outcome.error.isEmpty() || outcome.cancelled)
          return fail("t-SNE: " + (outcome.cancelled ? QString("cancelled") : outcome.error));
        save(window_.pageIndex(window_.tsneView()), "tsne.png");
        showAnalyses();
      },
      Qt::SingleShotConnection);
  window_.showPage(window_.tsneView());
  job->startFromCheckpoint(30.0, 500);
}

void ScreenshotTour::showAnalyses() {
  // The first analysis a plugin added, run on the open checkpoint; without plugins, activation
  // patching with every option the command line has.
  auto* panel = window_.analysesPanel();
  const int tab = window_.pageIndex(panel);
  QString name = QStringLiteral("patching");
  for (const auto& n : panel->names())
    if (!panel->view(n)->definition().has_own_view) {
      name = n;
      break;
    }
  connect(
      panel, &AnalysesPanel::resultShown, this,
      [this, tab] {
        QTimer::singleShot(200, this, [this, tab] {
          save(tab, "analyses.png");
          showTraining();
        });
      },
      Qt::SingleShotConnection);
  connect(
      panel->job(name), &Job::finished, this,
      [this, name](Job::End end, const QString& error) {
        if (end != Job::End::Done)
          fail(name + ": " + (end == Job::End::Cancelled ? tr("cancelled") : error));
      },
      Qt::SingleShotConnection);
  window_.showPage(panel);
  panel->select(name);
  // Patching's 16 windows: its figures as the command line's default 64 draw them, in a quarter
  // of the time, and each drawn again from its recipe.
  if (name == QLatin1String("patching")) panel->view(name)->setOption("windows", "16");
  if (!panel->run(name)) fail(name + ": nothing to run on");
}

void ScreenshotTour::showTraining() {
  // A small DT trained for a few hundred steps with two evaluations: live curves of a real run.
  auto* training = window_.trainingPanel();
  window_.showPage(training);
  training->setField("hidden", 32);
  training->setField("layers", 1);
  training->setField("steps", 400);
  training->setField("warmup_steps", 50);
  training->setField("log_every", 10);
  training->setField("eval_every", 200);
  connect(
      training, &TrainingPanel::runFinished, this,
      [this, training](const QString&, const QString& state) {
        if (state != "Finished") return fail("training: " + state + " " + training->lastError());
        QTimer::singleShot(300, this, [this, training] {
          save(window_.pageIndex(training), "training.png");
          showViewer();
        });
      },
      Qt::SingleShotConnection);
  if (!training->startTraining()) fail("training did not start: " + training->lastError());
}

void ScreenshotTour::showViewer() {
  // A fresh episode played as fast as the policy acts, stopped mid-way so the map, the timeline
  // and the scene show one moment of a running policy.
  auto* viewer = window_.viewer();
  if (!viewer->hasPlayer()) return fail("the viewer has no policy to play");
  window_.showPage(viewer);
  viewer->pause();
  viewer->restart();
  viewer->setSpeed(0.0);
  viewer->play();
  auto* poll = new QTimer(this);
  poll->setInterval(20);
  connect(poll, &QTimer::timeout, this, [this, poll, viewer] {
    const auto state = viewer->shown();
    if (state.cursor < kViewerStep && !state.finished) return;
    poll->stop();
    poll->deleteLater();
    viewer->pause();
    viewer->seek(std::min(kViewerStep, state.frames - 1));
    QTimer::singleShot(300, this, [this, viewer] {
      viewer->sync();
      viewer->setSpeed(1.0);
      QTimer::singleShot(200, this, [this, viewer] {
        save(window_.pageIndex(viewer), "viewer.png");
        save(window_.pageIndex(window_.workspaceView()), "workspace.png");
        showMarkovLab();
      });
    });
  });
  poll->start();
}

void ScreenshotTour::showMarkovLab() {
  // The lab's lesson in two runs on an order-2 chain: a pooling window of 1 stays above the
  // floor (kept faintly as the previous run), a window of 2 reaches it.
  auto* lab = window_.markovLab();
  auto* job = window_.markovLabJob();
  window_.showPage(lab);
  auto options = lab->options();
  options.chain = analysis::MarkovChain::make(0.2, 0.3, 2);
  options.mixer = models::LabMixer::Pooling;
  options.window = 1;
  options.steps = 600;
  lab->setOptions(options);
  connect(
      job, &MarkovLabJob::finished, this,
      [this, lab, job, options]() mutable {
        if (!lab->hasResult()) return fail("Markov lab: " + lab->summary()->text());
        options.window = 2;
        lab->setOptions(options);
        connect(
            job, &MarkovLabJob::finished, this,
            [this, lab] {
              if (!lab->hasResult()) return fail("Markov lab: " + lab->summary()->text());
              QTimer::singleShot(300, this, [this, lab] {
                save(window_.pageIndex(lab), "markov-lab.png");
                exportFigures();
                recordClip();
              });
            },
            Qt::SingleShotConnection);
        job->start();
      },
      Qt::SingleShotConnection);
  job->start();
}

void ScreenshotTour::exportFigures() {
  // Every view filled: their figures as File ▸ Export All Views writes them in ICML's column,
  // each with the recipe that draws it again.
  const QString dir = QDir(dir_).filePath(QStringLiteral("figures"));
  try {
    for (const auto& path : viz::export_all(window_.figureSources(), dir.toStdString(),
                                            *viz::venue_preset("icml"), "icml"))
      figures_ << QString::fromStdString(path);
  } catch (const std::exception& e) {
    fail("exporting the figures: " + QString::fromStdString(e.what()));
  }
}

void ScreenshotTour::recordClip() {
  // A fifth of a second of the Viewer tab from the step on screen, as Record writes it, once
  // every figure is exported (a recording's timeline grows from its first step).
  auto* viewer = window_.viewer();
  if (!viewer->scene()->hasScene()) return showPresentation();
  window_.showPage(viewer);
  connect(
      viewer, &ViewerPanel::recordingFinished, this,
      [this](const QString& path, int frames, const QString& error) {
        if (!error.isEmpty()) return fail("recording the viewer: " + error);
        if (frames != kClipFrames)
          return fail(
              QString("recording the viewer: %1 frames, not %2").arg(frames).arg(kClipFrames));
        clip_ = path;
        showPresentation();
      },
      Qt::SingleShotConnection);
  const QString clips = QDir(dir_).filePath(QStringLiteral("clips"));
  QDir(clips).removeRecursively();
  if (!viewer->startRecordingInto(QDir(clips).filePath(QStringLiteral("viewer")), kClipFrames))
    fail("the viewer's recording did not start");
}

void ScreenshotTour::showPresentation() {
  // The same views on a projector: large type in the widgets and the plots, then back.
  const bool was = window_.presentationMode();
  window_.setPresentationMode(true);
  QTimer::singleShot(300, this, [this, was] {
    save(window_.pageIndex(window_.attentionView()), "presentation-attention.png");
    save(2, "presentation-entropy-reward.png");
    save(3, "presentation-zeroing-and-sweep.png");
    save(window_.pageIndex(window_.trainingPanel()), "presentation-training.png");
    save(window_.pageIndex(window_.viewer()), "presentation-viewer.png");
    save(window_.pageIndex(window_.markovLab()), "presentation-markov-lab.png");
    window_.setPresentationMode(was);
    showLessons();
  });
}

void ScreenshotTour::showLessons() {
  // Three lessons as a class sees them, the text beside the views it speaks of: DT and GDT side
  // by side, the Markov lab's window covering the chain's order, DC without its past states.
  const auto current = [this] { return window_.tabs()->currentIndex(); };
  // The tour's first stages answered every checkpoint and comparison shown; the lessons open
  // their own, so those answers go.
  disconnect(&window_, nullptr, this, nullptr);
  // The Analyses tab's results were exported with the other views: they go as well, or a lesson
  // that opens another checkpoint would first ask whether to replace them.
  auto* analyses = window_.analysesPanel();
  for (const QString& name : analyses->names())
    if (auto* view = analyses->view(name)) view->clearResult();
  connect(&window_, &MainWindow::checkpointFailed, this, &ScreenshotTour::fail);
  connect(&window_, &MainWindow::comparisonFailed, this, &ScreenshotTour::fail);
  connect(
      &window_, &MainWindow::comparisonShown, this,
      [this, current] {
        QTimer::singleShot(300, this, [this, current] {
          save(current(), "lesson-attention-disperses.png");
          connect(
              window_.markovLabJob(), &MarkovLabJob::finished, this,
              [this, current] {
                QTimer::singleShot(300, this, [this, current] {
                  save(current(), "lesson-markov-pooling-floor.png");
                  connect(
                      &window_, &MainWindow::checkpointShown, this,
                      [this, current] {
                        auto* viewer = window_.viewer();
                        viewer->play();
                        QTimer::singleShot(2500, this, [this, current, viewer] {
                          viewer->pause();
                          save(current(), "lesson-what-the-model-relies-on.png");
                          window_.lessonPanel()->hide();
                          // A sweep opened with the tour (--sweep): its tab, read by now.
                          if (auto* sweep = window_.sweepPanel(); sweep->readCount() > 0) {
                            save(window_.pageIndex(sweep), "sweep.png");
                            // Its seeds compared in the Training tab.
                            sweep->compareButton()->click();
                            save(current(), "sweep-seeds-compared.png");
                          }
                          // Help ▸ User Guide, a window of its own.
                          window_.showUserGuide();
                          if (auto* guide = window_.userGuide()) {
                            guide->resize(1040, 800);
                            for (int i = 0; i < 3; ++i) QCoreApplication::processEvents();
                            const QString path =
                                QDir(dir_).filePath(QStringLiteral("user-guide.png"));
                            if (guide->grab().save(path))
                              written_ << path;
                            else
                              fail("could not save " + path);
                            guide->close();
                          }
                          showMaze();
                        });
                      },
                      Qt::SingleShotConnection);
                  window_.openLesson(3, 1);
                });
              },
              Qt::SingleShotConnection);
          window_.openLesson(1, 2);
        });
      },
      Qt::SingleShotConnection);
  window_.openLesson(0, 1);
}

void ScreenshotTour::showMaze() {
  // A dataset episode of AntMaze replayed in the Viewer tab: the maze from above, the goal the
  // episode was collected towards, the navigator's waypoint and the path so far. Without a
  // dataset given, one episode is made as D4RL made its data, with the shipped goal-reacher.
  if (!maze_dataset_.isEmpty()) return replayMaze(maze_dataset_);
  const QString path = QDir(dir_).filePath(QStringLiteral("maze/%1.hdf5").arg(kMazeTask));
  QDir().mkpath(QFileInfo(path).path());
  maze_job_ = new Job(tr("Making an AntMaze episode"), this);
  connect(maze_job_, &Job::finished, this, [this, path](Job::End end, const QString& error) {
    if (end == Job::End::Done) return replayMaze(path);
    // No goal-reacher ships with this build: the tour is complete without the maze, and says so.
    skipped_ << QStringLiteral("the maze view (%1)").arg(error);
    showHand();
  });
  maze_job_->start(
      [path](const Progress& progress) -> Job::Deliver {
        behaviour::AntMazeDataConfig config;
        config.task = kMazeTask;
        config.transitions = kMazeTransitions;
        config.threads = 1;
        const auto made = behaviour::generate_antmaze_dataset(
            config, behaviour::shipped_goal_reacher(), progress);
        data::write_d4rl(path.toStdString(), made.arrays, made.metadata);
        return [] {};
      },
      path);
}

void ScreenshotTour::replayMaze(const QString& path) {
  connect(&window_, &MainWindow::loadFailed, this, &ScreenshotTour::fail);
  replay(path, kMazeStep, QStringLiteral("viewer-maze.png"), &ScreenshotTour::showHand);
}

void ScreenshotTour::replay(const QString& path, int step, const QString& name,
                            void (ScreenshotTour::*next)()) {
  connect(
      &window_, &MainWindow::datasetOpened, this,
      [this, step, name, next] {
        auto* viewer = window_.viewer();
        if (!window_.replayEpisode(0))
          return fail("the first episode of " + name + " did not replay");
        viewer->pause();
        viewer->seek(step);
        // The replay holds every frame from the start: the step is there at once.
        QTimer::singleShot(300, this, [this, viewer, name, next] {
          viewer->sync();
          QTimer::singleShot(200, this, [this, viewer, name, next] {
            save(window_.pageIndex(viewer), name);
            (this->*next)();
          });
        });
      },
      Qt::SingleShotConnection);
  window_.openDataset(path);
}

void ScreenshotTour::makeAndReplay(const QString& what, const QString& path,
                                   std::function<behaviour::GeneratedDataset()> make, int step,
                                   const QString& name, void (ScreenshotTour::*next)()) {
  QDir().mkpath(QFileInfo(path).path());
  auto* job = new Job(what, this);
  connect(job, &Job::finished, this,
          [this, path, step, name, next](Job::End end, const QString& error) {
            if (end == Job::End::Done) return replay(path, step, name, next);
            fail(name + ": " + error);
          });
  job->start(
      [path, make = std::move(make)](const Progress&) -> Job::Deliver {
        const auto made = make();
        data::write_d4rl(path.toStdString(), made.arrays, made.metadata);
        return [] {};
      },
      path);
}

void ScreenshotTour::showHand() {
  // The Adroit hand turning the pen: the target pen at the episode's goal orientation, beside it.
  const QString path = QDir(dir_).filePath(QStringLiteral("hand/%1-expert.hdf5").arg(kHandTask));
  makeAndReplay(
      tr("Making a pen episode"), path,
      [] {
        behaviour::AdroitExpertConfig config;
        config.task = kHandTask;
        config.episodes = 1;
        config.threads = 1;
        return behaviour::generate_adroit_expert_dataset(config,
                                                         behaviour::shipped_dapg_policy(kHandTask));
      },
      kHandStep, QStringLiteral("viewer-hand.png"), &ScreenshotTour::showKitchen);
}

void ScreenshotTour::showKitchen() {
  // The kitchen from its camera, with the task's four elements listed over the scene.
  const QString path = QDir(dir_).filePath(QStringLiteral("kitchen/%1.hdf5").arg(kKitchenTask));
  makeAndReplay(
      tr("Making a kitchen episode"), path,
      [] {
        behaviour::GenerateConfig config;
        config.env = kKitchenTask;
        config.kind = behaviour::DatasetKind::Random;
        config.transitions = 280;
        config.threads = 1;
        return behaviour::generate_dataset(config, {});
      },
      kKitchenStep, QStringLiteral("viewer-kitchen.png"), &ScreenshotTour::finish);
}

void ScreenshotTour::finish() {
  if (done_) return;
  done_ = true;
  QString message = QString("saved %1 views to %2").arg(written_.size()).arg(dir_);
  if (!skipped_.isEmpty()) message += "; left out " + skipped_.join("; ");
  emit finished(true, message);
}

void ScreenshotTour::save(int tab, const QString& name) {
  window_.tabs()->setCurrentIndex(tab);
  // Layouts and the replots they queue settle first, as they would before anyone looked.
  for (int i = 0; i < 3; ++i) QCoreApplication::processEvents();
  const QString path = QDir(dir_).filePath(name);
  if (window_.grab().save(path))
    written_ << path;
  else
    fail("could not save " + path);
}

void ScreenshotTour::fail(const QString& why) {
  if (done_) return;
  done_ = true;
  emit finished(false, why);
}

}  // namespace dstudio::studio
