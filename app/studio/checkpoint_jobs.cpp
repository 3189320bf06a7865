// Opening and comparing checkpoints for the Attention tab. See checkpoint_jobs.h.

#include "checkpoint_jobs.h"

#include <QFileInfo>
#include <utility>

#include "dstudio/analysis/analysis_registry.h"
#include "dstudio/common/error.h"
#include "dstudio/models/episode_player.h"
#include "dstudio/viz/attention_map_view.h"
#include "job.h"
#include "view_recipes.h"

namespace dstudio::studio {

namespace {
// The command line's steps (dstudio analyze attention): the analyses' windows of the dataset.
constexpr int kWindows = analysis::kInspectionWindows;
}  // namespace

CheckpointJobs::CheckpointJobs(viz::AttentionMapView* view, Job* open_job, Job* compare_job,
                               QObject* parent)
    : QObject(parent), view_(view), open_job_(open_job), compare_job_(compare_job) {
  connect(open_job_, &Job::finished, this, [this](Job::End end, const QString& error) {
    const QString path = std::exchange(opening_, QString());
    if (end == Job::End::Cancelled) {
      emit status(
          path_.isEmpty()
              ? tr("Inspection cancelled; no checkpoint is open.")
              : tr("Inspection cancelled; still showing %1.").arg(QFileInfo(path_).fileName()));
      emit openStopped(path, true, QString());
    } else if (end == Job::End::Failed) {
      emit status(tr("Could not inspect %1").arg(QFileInfo(path).fileName()));
      emit openStopped(path, false, error);
    }
  });
  connect(open_job_, &Job::restarting, this, [this](const QString& path) {
    emit status(tr("Inspecting %1 next…").arg(QFileInfo(path).fileName()));
  });
  connect(compare_job_, &Job::finished, this, [this](Job::End end, const QString& error) {
    if (end == Job::End::Cancelled) {
      emit status(tr("Comparison cancelled; the maps on screen stay."));
      emit comparisonStopped(compare_job_->label(), true, QString());
    } else if (end == Job::End::Failed) {
      emit status(tr("Could not compare with %1").arg(QFileInfo(compare_job_->label()).fileName()));
      emit comparisonStopped(compare_job_->label(), false, error);
    }
  });
  // An exported map says what it shows: the checkpoints, the windows, the layer and head chosen.
  view_->setFigureRecipeMaker([this] {
    return recipes::attention_recipe(path_.toStdString(), compared_.toStdString(), kWindows,
                                     *view_);
  });
}

QString CheckpointJobs::title(const QString& path, const models::CheckpointInfo& info) {
  return recipes::model_title(path.toStdString(), info);
}

bool CheckpointJobs::isOpening() const {
  return open_job_->isRunning();
}

bool CheckpointJobs::isComparing() const {
  return compare_job_->isRunning();
}

void CheckpointJobs::open(const QString& path) {
  if (!open_job_->isRunning()) emit status(tr("Inspecting %1…").arg(QFileInfo(path).fileName()));
  opening_ = path;
  open_job_->start(
      [this, path](const Progress& progress) -> Job::Deliver {
        // The file is read once; the inspection, the player and the analyses share it.
        progress.update(0.0, "reading the checkpoint");
        auto opened = std::make_shared<OpenedCheckpoint>();
        opened->path = path;
        opened->checkpoint = models::open_checkpoint(path.toStdString());
        opened->inspected = models::inspect_on_dataset(*opened->checkpoint, kWindows, {}, progress);
        opened->title = title(path, opened->inspected.info);
        try {
          opened->player = std::make_shared<models::EpisodePlayer>(opened->checkpoint);
        } catch (const std::exception& e) {
          opened->player_error = QString::fromStdString(e.what());
        }
        progress.check();
        return [this, opened] { show(*opened); };
      },
      path);
}

void CheckpointJobs::cancelOpen() {
  if (!open_job_->isRunning()) return;
  open_job_->cancel();
  emit status(tr("Cancelling the inspection…"));
}

void CheckpointJobs::show(const OpenedCheckpoint& checkpoint) {
  // A comparison with the previous model stops; its maps leave with it.
  compare_job_->cancel();
  view_->setInspections(checkpoint.title, checkpoint.inspected.inspections);
  path_ = checkpoint.path;
  windows_ = checkpoint.inspected.windows;
  compared_.clear();
  emit opened(checkpoint);
}

bool CheckpointJobs::compare(const QString& path) {
  if (windows_.empty()) return false;
  emit status(tr("Inspecting %1 on the same windows…").arg(QFileInfo(path).fileName()));
  const auto windows = windows_;
  compare_job_->start(
      [this, path, windows](const Progress& progress) -> Job::Deliver {
        progress.update(0.0, "reading the checkpoint");
        const auto other = models::open_checkpoint(path.toStdString());
        const models::CheckpointInfo info = models::info_of(*other);
        if (info.variant.context_length != windows.front().steps)
          throw Error(path.toStdString() + ": sees windows of " +
                      std::to_string(info.variant.context_length) + " steps, the open checkpoint " +
                      std::to_string(windows.front().steps));
        progress.update(0.5, "running the model on the windows");
        auto inspections = std::make_shared<std::vector<models::WindowInspection>>(
            models::inspect_windows(*other, windows));
        progress.check();
        return [this, path, info, inspections] {
          try {
            view_->setComparison(title(path, info), *inspections);
          } catch (const std::exception& e) {
            throw Error(QFileInfo(path).fileName().toStdString() + ": " + e.what());
          }
          compared_ = path;
          emit status(
              tr("Attention: compared with %1 on the same windows, as a difference or side by side")
                  .arg(title(path, info)));
          emit compared(path, info);
        };
      },
      path);
  return true;
}

void CheckpointJobs::cancelComparison() {
  compare_job_->cancel();
}

}  // namespace dstudio::studio
