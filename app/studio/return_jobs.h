#pragma once
/// \file
/// The work of the Entropy–Reward and Zeroing–Sweep tabs on the open checkpoint: rollouts
/// (attention entropy against reward), the modality-zeroing ablation and the target-return sweep
/// (with the compared checkpoint beside it), as `dstudio analyze` runs them. Each runs as a Job
/// of its own, which the window's status bar follows; they act on the model the window read once
/// (a LoadedCheckpoint shared with its views and its player), and a compared checkpoint is read
/// when a sweep needs it. The window says which checkpoint is open and shows what this reports.

#include <QObject>
#include <QString>
#include <memory>

#include "dstudio/models/checkpoint.h"
#include "dstudio/models/rollout.h"
#include "view_recipes.h"

namespace dstudio::viz {
class EntropyRewardView;
class ReturnAnalysisView;
}  // namespace dstudio::viz

namespace dstudio::studio {

class Job;

class ReturnJobs : public QObject {
  Q_OBJECT
 public:
  /// Drives the two views with the two jobs (the window's, made by its addJob): the views' Run
  /// and Cancel buttons start and stop them.
  ReturnJobs(viz::EntropyRewardView* rollout_view, viz::ReturnAnalysisView* returns_view,
             Job* rollout_job, Job* returns_job, QObject* parent = nullptr);

  /// The open checkpoint, read once: what runs on the previous one stops. `best_score` is the
  /// normalised score of its data's best episode (NaN without an environment), drawn on the sweep.
  void setCheckpoint(std::shared_ptr<const models::LoadedCheckpoint> checkpoint,
                     const models::CheckpointInfo& info, const QString& label, double best_score);
  /// The checkpoint a sweep also runs, so the two curves share their targets ("" for none).
  void setCompared(const QString& path);

  void runRollout(const models::RolloutConfig& config);
  void runAblation();
  void runSweep();
  void cancel();
  [[nodiscard]] bool isRunning() const;

 signals:
  /// A line for the status bar.
  void status(const QString& text);
  void rolloutShown();
  void returnsShown(bool sweep);
  /// A job ended without its result: cancelled, or failed (`job->lastError()`). `status` has a %1
  /// for why.
  void stopped(const QString& status, dstudio::studio::Job* job);

 private:
  void startReturns(bool sweep);

  viz::EntropyRewardView* rollout_view_;
  viz::ReturnAnalysisView* returns_view_;
  Job* rollout_job_;
  Job* returns_job_;
  std::shared_ptr<const models::LoadedCheckpoint> checkpoint_;
  QString path_, label_, compared_;
  int context_ = 1;
  double best_score_ = 0.0;
  // What the views show, for their figures' recipes: the checkpoint each ran on and how.
  std::string rollout_path_, returns_path_;
  models::RolloutConfig rollout_config_;
  recipes::ReturnsShown returns_shown_;
};

}  // namespace dstudio::studio
