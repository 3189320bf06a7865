// The responsiveness benchmark. See gui_benchmark.h.

#include "gui_benchmark.h"

#include <QElapsedTimer>
#include <QGuiApplication>
#include <QTabWidget>
#include <QTimer>
#include <algorithm>
#include <memory>
#include <thread>
#include <utility>

#include "dstudio/common/system_info.h"
#include "dstudio/models/playback.h"
#include "dstudio/viz/entropy_reward_view.h"
#include "dstudio/viz/scene_view.h"
#include "main_window.h"
#include "training_panel.h"
#include "viewer_panel.h"

namespace dstudio::studio {
namespace {

constexpr int kHeartbeatMs = 5;

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

}  // namespace

GuiBenchmark::GuiBenchmark(MainWindow& window, double seconds, QStringList files)
    : window_(window), seconds_(seconds), files_(std::move(files)) {
  replay_ = !files_.isEmpty() && std::none_of(files_.begin(), files_.end(), [](const QString& f) {
    return f.endsWith(QStringLiteral(".pt"), Qt::CaseInsensitive);
  });
  connect(&window_, &MainWindow::datasetOpened, this, [this] {
    loaded_dataset_ = true;
    if (replay_) {
      // A dataset alone: its first episode replayed from its recorded states.
      if (!window_.replayEpisode(0))
        return fail(QStringLiteral("the dataset's first episode did not replay"));
      return beginViewer();
    }
    if (!loaded_checkpoint_ && files_.isEmpty()) window_.openDefaultCheckpoint();
    if (loaded_checkpoint_) beginViewer();
  });
  connect(&window_, &MainWindow::checkpointShown, this, [this] {
    loaded_checkpoint_ = true;
    if (loaded_dataset_) beginViewer();
  });
  connect(&window_, &MainWindow::loadFailed, this, &GuiBenchmark::fail);
  connect(&window_, &MainWindow::checkpointFailed, this, &GuiBenchmark::fail);
}

void GuiBenchmark::start() {
  if (files_.isEmpty())
    window_.openDefaultDataset();
  else
    window_.openFiles(files_);
}

void GuiBenchmark::beginViewer() {
  if (began_) return;
  began_ = true;
  auto* viewer = window_.viewer();
  window_.showPage(viewer);
  // The Viewer tab draws a frame when a new step comes: real time for the locomotion tasks (125
  // steps a second); a task that steps fewer than 60 times a second at 1x (AntMaze: 10) plays
  // at the locomotion tasks' 125 steps a second (12.5x), so that the frames drawn measure the
  // viewer, not the task's clock, with the policy as busy as for a locomotion task.
  constexpr double kLocomotionStepsPerSecond = 125.0;
  const double real_time = viewer->stepsPerSecond();
  speed_ = real_time >= 60.0 || real_time <= 0.0 ? 1.0 : kLocomotionStepsPerSecond / real_time;
  viewer->setSpeed(speed_);
  viewer->restart();
  viewer->play();
  QTimer::singleShot(1000, this, [this] { measure(tr("viewer alone"), &GuiBenchmark::startLoad); });
}

void GuiBenchmark::startLoad() {
  // The three kinds of background work at once: training, a batch of rollouts, the viewer.
  auto* training = window_.trainingPanel();
  training->setField(QStringLiteral("steps"), 1'000'000);
  training->setField(QStringLiteral("eval_every"), 2000);
  QElapsedTimer start;
  start.start();
  if (!training->startTraining())
    return fail(QStringLiteral("the training run did not start: ") + training->lastError());
  start_ms_ = static_cast<double>(start.nsecsElapsed()) / 1e6;
  if (replay_) {
    // No checkpoint: nothing to roll out; the training run is the load.
    QTimer::singleShot(1000, this, [this] {
      measure(tr("viewer with a training run"), &GuiBenchmark::hideViewer);
    });
    return;
  }
  auto config = window_.rolloutView()->request();
  config.episodes = 100;
  config.entropy = true;
  window_.runRollout(config);
  QTimer::singleShot(1000, this, [this] {
    measure(tr("viewer with a training run and a rollout"), &GuiBenchmark::hideViewer);
  });
}

void GuiBenchmark::hideViewer() {
  window_.showPage(window_.trainingPanel());
  QTimer::singleShot(500, this, [this] {
    measure(replay_ ? tr("Training tab on screen, training run and the viewer's replay behind it")
                    : tr("Training tab on screen, training run, rollout and the viewer's policy "
                         "acting behind it"),
            &GuiBenchmark::report);
  });
}

void GuiBenchmark::measure(const QString& name, void (GuiBenchmark::*next)()) {
  phases_.push_back({});
  phases_.back().name = name;
  auto* heartbeat = new QTimer(this);
  heartbeat->setTimerType(Qt::PreciseTimer);
  heartbeat->setInterval(kHeartbeatMs);
  auto clock = std::make_shared<QElapsedTimer>();
  clock->start();
  auto last = std::make_shared<qint64>(0);
  const long frames_at_start = window_.viewer()->scene()->framesDrawn();
  connect(heartbeat, &QTimer::timeout, this, [this, clock, last, heartbeat, frames_at_start, next] {
    auto& phase = phases_.back();
    const qint64 now = clock->nsecsElapsed();
    phase.gaps_ms.push_back(static_cast<double>(now - *last) / 1e6 - kHeartbeatMs);
    *last = now;
    auto* viewer = window_.viewer();
    const auto shown = viewer->shown();
    if (shown.finished && !shown.playing) {  // keep the policy acting for the whole measurement
      ++restarts_;
      viewer->restart();
      viewer->play();
    }
    const long drawn = viewer->scene()->framesDrawn();
    if (drawn > frames_at_start + phase.frames) {
      phase.frames = drawn - frames_at_start;
      phase.frame_ms.push_back(viewer->scene()->lastFrameMilliseconds());
      phase.scales.push_back(viewer->scene()->lastScale());
    }
    if (viewer->lastMapMilliseconds() != last_map_)
      phase.map_ms.push_back(last_map_ = viewer->lastMapMilliseconds());
    if (viewer->lastTimelineMilliseconds() != last_timeline_)
      phase.timeline_ms.push_back(last_timeline_ = viewer->lastTimelineMilliseconds());
    if (static_cast<double>(now) / 1e9 < seconds_) return;
    heartbeat->stop();
    heartbeat->deleteLater();
    phase.seconds = static_cast<double>(now) / 1e9;
    phase.training_live = window_.trainingPanel()->isTraining();
    phase.rollout_live = window_.isRollingOut();
    (this->*next)();
  });
  heartbeat->start();
}

QString GuiBenchmark::describe(const Phase& p) const {
  const double max_gap =
      p.gaps_ms.empty() ? 0.0 : *std::max_element(p.gaps_ms.begin(), p.gaps_ms.end());
  QString r = QStringLiteral("  %1 (%2 s):\n").arg(p.name).arg(p.seconds, 0, 'f', 1);
  r += QStringLiteral(
           "    GUI thread stall beyond a %1 ms timer: median %2 ms, p99 %3 ms, max %4 ms (%5 "
           "ticks)\n")
           .arg(kHeartbeatMs)
           .arg(percentile(p.gaps_ms, 0.5), 0, 'f', 2)
           .arg(percentile(p.gaps_ms, 0.99), 0, 'f', 2)
           .arg(max_gap, 0, 'f', 2)
           .arg(p.gaps_ms.size());
  r += QStringLiteral(
           "    viewer: %1 frames per second (%2 frames), frame median %3 ms (scene, read-back, "
           "overlay)\n")
           .arg(p.seconds > 0 ? static_cast<double>(p.frames) / p.seconds : 0.0, 0, 'f', 1)
           .arg(p.frames)
           .arg(percentile(p.frame_ms, 0.5), 0, 'f', 2);
  if (!p.scales.empty())
    r += QStringLiteral("    scene drawn at %1 of its size (median; %2 at least)\n")
             .arg(percentile(p.scales, 0.5), 0, 'f', 2)
             .arg(*std::min_element(p.scales.begin(), p.scales.end()), 0, 'f', 2);
  if (!p.map_ms.empty() || !p.timeline_ms.empty())
    r += QStringLiteral(
             "    on the GUI thread: attention map update median %1 ms (max %2), timeline replot "
             "median %3 ms (max %4)\n")
             .arg(percentile(p.map_ms, 0.5), 0, 'f', 1)
             .arg(percentile(p.map_ms, 1.0), 0, 'f', 1)
             .arg(percentile(p.timeline_ms, 0.5), 0, 'f', 1)
             .arg(percentile(p.timeline_ms, 1.0), 0, 'f', 1);
  return r;
}

void GuiBenchmark::report() {
  if (done_) return;
  done_ = true;
  QString r = QStringLiteral("decision-studio --bench-gui %1\n").arg(seconds_);
  const QString pace = QStringLiteral("%1 (%2 steps per second)")
                           .arg(QString::fromStdString(models::speed_label(speed_)))
                           .arg(speed_ * window_.viewer()->stepsPerSecond(), 0, 'f', 0);
  r += QStringLiteral("  platform %1, OpenGL %2, cores %3, BLAS %4, viewer at %5\n")
           .arg(QGuiApplication::platformName(), viz::SceneView::openGlAvailable() ? "yes" : "no")
           .arg(std::thread::hardware_concurrency())
           .arg(QString::fromStdString(active_blas_name()), pace);
  const auto* scene = window_.viewer()->scene();
  const QSize size = scene->size();
  const auto camera = scene->cameraView();
  r += QStringLiteral("  window %1x%2, scene %3x%4, %5 on %6, camera %7\n")
           .arg(window_.width())
           .arg(window_.height())
           .arg(size.width())
           .arg(size.height())
           .arg(window_.viewer()->playerTitle(), window_.viewer()->taskName())
           .arg(camera.track_body >= 0 ? QStringLiteral("following the body")
                                       : QStringLiteral("free (the task's view)"));
  for (const auto& p : phases_) r += describe(p);
  r += QStringLiteral("  starting the training run took %1 ms on the GUI thread\n")
           .arg(start_ms_, 0, 'f', 1);
  const auto& loaded = phases_.back();
  r += QStringLiteral("  under load: training %1, rollout %2; %3 restarted %4\n")
           .arg(loaded.training_live ? "live to the end" : "ended early",
                replay_               ? "none (a replay: no checkpoint)"
                : loaded.rollout_live ? "live to the end"
                                      : "ended early",
                replay_ ? "replays" : "episodes")
           .arg(restarts_);
  window_.trainingPanel()->cancelAll();
  window_.cancelRollout();
  emit finished(true, r);
}

void GuiBenchmark::fail(const QString& why) {
  if (done_) return;
  done_ = true;
  emit finished(false, why);
}

}  // namespace dstudio::studio
