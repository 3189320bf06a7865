// A recording drawn again from its recipe. See clip_render.h.

#include "clip_render.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QFont>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "dstudio/common/error.h"
#include "dstudio/common/figure_recipe.h"
#include "dstudio/models/episode_player.h"
#include "dstudio/models/playback.h"
#include "dstudio/viz/scene_view.h"
#include "video_writer.h"
#include "view_recipes.h"
#include "viewer_panel.h"

namespace dstudio::studio {

struct ClipRender::Plan {
  FigureRecipe recipe;
  recipes::ClipShown clip;
};

ClipRender::ClipRender(QString recipe, QString out, QStringList roots, QObject* parent)
    : QObject(parent),
      recipe_path_(std::move(recipe)),
      out_(std::move(out)),
      roots_(std::move(roots)) {}

ClipRender::~ClipRender() = default;

void ClipRender::start() {
  QTimer::singleShot(0, this, &ClipRender::run);
}

void ClipRender::fail(const QString& message) {
  if (done_) return;
  done_ = true;
  // A clip cut short is not the clip: its unfinished video goes, whatever was at `out` stays.
  if (panel_) {
    panel_->abandonRecording();
    panel_->clear(QString());
  }
  emit finished(false, message);
}

void ClipRender::when(const std::function<bool()>& ready, const std::function<void()>& next,
                      const QString& waiting) {
  // The player works on its own thread; its state is looked at as the panel would, every few
  // milliseconds, for as long as a slow machine needs (a stuck player fails after ten minutes).
  auto clock = std::make_shared<QElapsedTimer>();
  clock->start();
  auto check = std::make_shared<std::function<void()>>();
  // Each wait's timer holds the check; the check holds only itself weakly (no cycle).
  *check = [this, ready, next, waiting, clock, self = std::weak_ptr(check)] {
    if (done_) return;
    panel_->sync();
    const auto state = panel_->shown();
    if (!state.error.empty()) return fail(QString::fromStdString(state.error));
    if (!state.fork_error.empty()) return fail(QString::fromStdString(state.fork_error));
    if (ready()) return next();
    if (clock->elapsed() > 600'000) return fail(tr("gave up %1").arg(waiting));
    QTimer::singleShot(5, this, [again = self.lock()] { (*again)(); });
  };
  (*check)();
}

void ClipRender::run() {
  const std::string where = recipe_path_.toStdString();
  plan_ = std::make_unique<Plan>();
  std::shared_ptr<models::EpisodePlayer> player;
  try {
    player = replayedRun(where);
  } catch (const std::exception& e) {
    return fail(QString::fromUtf8(e.what()));
  }
  showPanel(player);
  const auto& clip = plan_->clip;
  try {
    for (const auto& f : clip.run.forks) {
      auto change = models::parse_branch_change(f.change);
      change.label = f.change;
      if (!f.checkpoint.empty()) change.checkpoint = f.checkpoint;  // where it was found
      panel_->forkAt(f.step, change);
    }
  } catch (const std::exception& e) {
    return fail(QString::fromUtf8(e.what()));
  }
  const auto forks = clip.run.forks.size();
  when([this, forks] { return panel_->shown().branch_frames.size() == forks; },
       [this] { seekToFirst(); }, tr("waiting for the forks"));
}

std::shared_ptr<models::EpisodePlayer> ClipRender::replayedRun(const std::string& where) {
  if (!out_.endsWith(QLatin1String(".mp4")))
    throw UsageError("--out " + out_.toStdString() + ": a clip is drawn as an MP4 (.mp4)");
  if (!VideoWriter::ffmpegAvailable())
    throw Error("drawing a clip needs ffmpeg with the libx264 encoder on the PATH");
  if (!viz::SceneView::openGlAvailable())
    throw Error("drawing a clip needs OpenGL, which the Qt platform \"" +
                QGuiApplication::platformName().toStdString() +
                "\" does not have: run under a display or xvfb-run");
  std::vector<std::filesystem::path> roots;
  for (const auto& r : roots_) roots.emplace_back(r.toStdString());
  plan_->recipe = read_figure_recipe(where, roots);
  plan_->clip = recipes::clip_shown(plan_->recipe, where);
  check_inputs(plan_->recipe);
  recipes::check_clip_within_episode(plan_->clip, where);
  const auto& clip = plan_->clip;
  // The run played again, re-conditioned where the user changed it, to the last step recorded
  // (and the step after, which it acted at) and every fork's step.
  auto player = std::make_shared<models::EpisodePlayer>(clip.run.checkpoint);
  const int last =
      models::recorded_step(clip.first, clip.frames - 1, clip.fps, clip.speed, player->dt());
  int needed = last + 2;
  for (const auto& f : clip.run.forks) needed = std::max(needed, f.step + 1);
  std::fprintf(stderr, "playing steps 0 to %d of the episode (seed %llu)\n", needed - 1,
               static_cast<unsigned long long>(clip.run.seed));
  models::replay_conditions(*player, clip.run.seed, clip.run.changes, needed);
  return player;
}

void ClipRender::showPanel(const std::shared_ptr<models::EpisodePlayer>& player) {
  const auto& clip = plan_->clip;
  // The panel as it was: its type, size, clock and what it records, then the run and its look.
  if (!clip.look.font.empty()) {
    QFont font;
    if (font.fromString(QString::fromStdString(clip.look.font))) QApplication::setFont(font);
  }
  // Inside a frameless window of its size, as inside the studio's tab: a panel that is a window
  // itself would take a window's margins.
  window_ = std::make_unique<QWidget>();
  window_->setAttribute(Qt::WA_DontShowOnScreen);
  auto* layout = new QVBoxLayout(window_.get());
  layout->setContentsMargins(0, 0, 0, 0);
  panel_ = new ViewerPanel;
  layout->addWidget(panel_);
  window_->resize(clip.panel_width, clip.panel_height);
  connect(panel_, &ViewerPanel::message, this, [this](const QString& m) { said_ = m; });
  panel_->setRecordArea(clip.scene_only ? ViewerPanel::RecordArea::Scene
                                        : ViewerPanel::RecordArea::Panel);
  panel_->setRecordFrameRate(clip.fps);
  panel_->setSpeed(clip.speed);
  std::vector<Bookmark> bookmarks;
  for (const auto& b : clip.run.bookmarks)
    bookmarks.push_back({BookmarkPlace::Viewer, {}, static_cast<int>(b.step), b.name, b.note});
  panel_->setBookmarks(std::move(bookmarks));
  panel_->setPlayer(QString::fromStdString(clip.title), player, /*autoplay=*/false, clip.targets);
  window_->show();
}

void ClipRender::seekToFirst() {
  panel_->setClipLook(plan_->clip.look);
  panel_->seek(plan_->clip.first);
  when([this] { return panel_->shown().cursor == plan_->clip.first; }, [this] { recordClip(); },
       tr("waiting for step %1").arg(plan_->clip.first));
}

void ClipRender::recordClip() {
  const auto& c = plan_->clip;
  panel_->settleLayout();
  const QSize panel(c.panel_width, c.panel_height), frame(c.width, c.height);
  const QSize drawn = c.scene_only ? panel_->scene()->size() : panel_->size();
  if (panel_->size() != panel || drawn != frame)
    return fail(tr("the panel came out %1x%2 (its %3 %4x%5), the clip was "
                   "recorded at %6x%7 (%8x%9)")
                    .arg(panel_->width())
                    .arg(panel_->height())
                    .arg(c.scene_only ? tr("scene") : tr("frames"))
                    .arg(drawn.width())
                    .arg(drawn.height())
                    .arg(panel.width())
                    .arg(panel.height())
                    .arg(frame.width())
                    .arg(frame.height()));
  connect(
      panel_, &ViewerPanel::recordingFinished, this,
      [this](const QString& path, int frames, const QString& error) {
        if (done_) return;
        if (!error.isEmpty()) return fail(error);
        if (frames != plan_->clip.frames) {
          // Not the clip: none of it stays.
          const QString base = out_.left(out_.size() - 4);
          for (const QString& f : {out_, base + ".json", base + ".recipe.json"}) QFile::remove(f);
          return fail(tr("%1 frames drawn, the clip has %2").arg(frames).arg(plan_->clip.frames));
        }
        done_ = true;
        emit finished(true, tr("wrote %1 (%2 frames)").arg(path).arg(frames));
      });
  const QString base = out_.left(out_.size() - 4);
  if (!panel_->startRecordingInto(base, c.frames))
    fail(tr("the recording could not start: %1").arg(said_));
}

}  // namespace dstudio::studio
