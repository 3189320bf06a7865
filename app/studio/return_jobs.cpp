// The rollout, ablation and target-sweep jobs of the open checkpoint. See return_jobs.h.

#include "return_jobs.h"

#include <vector>

#include "dstudio/models/checkpoint.h"
#include "dstudio/models/evaluation.h"
#include "dstudio/viz/entropy_reward_view.h"
#include "dstudio/viz/return_analysis_view.h"
#include "job.h"

namespace dstudio::studio {

ReturnJobs::ReturnJobs(viz::EntropyRewardView* rollout_view, viz::ReturnAnalysisView* returns_view,
                       Job* rollout_job, Job* returns_job, QObject* parent)
    : QObject(parent),
      rollout_view_(rollout_view),
      returns_view_(returns_view),
      rollout_job_(rollout_job),
      returns_job_(returns_job) {
  connect(returns_view_, &viz::ReturnAnalysisView::ablationRequested, this,
          &ReturnJobs::runAblation);
  connect(returns_view_, &viz::ReturnAnalysisView::sweepRequested, this, &ReturnJobs::runSweep);
  connect(returns_view_, &viz::ReturnAnalysisView::cancelRequested, this, &ReturnJobs::cancel);
  connect(rollout_view_, &viz::EntropyRewardView::runRequested, this, &ReturnJobs::runRollout);
  connect(rollout_view_, &viz::EntropyRewardView::cancelRequested, this, &ReturnJobs::cancel);
  connect(rollout_job_, &Job::progressed, this, [this](double fraction, const QString&) {
    if (rollout_job_->isRunning())
      emit status(tr("Rolling out… %1%").arg(static_cast<int>(100.0 * fraction)));
  });
  connect(rollout_job_, &Job::stopped, this, [this] { rollout_view_->setRunning(false); });
  connect(returns_job_, &Job::stopped, this, [this] { returns_view_->setRunning(false); });
  connect(rollout_job_, &Job::finished, this, [this](Job::End end, const QString&) {
    if (end != Job::End::Done) emit stopped(tr("Rollout stopped: %1"), rollout_job_);
  });
  connect(returns_job_, &Job::progressed, this, [this](double fraction, const QString& stage) {
    if (!returns_job_->isRunning()) return;
    emit status(tr("Rolling out… %1%").arg(static_cast<int>(100.0 * fraction)));
    returns_view_->setProgress(fraction, stage);
  });
  connect(returns_job_, &Job::finished, this, [this](Job::End end, const QString&) {
    if (end != Job::End::Done) emit stopped(tr("Stopped: %1"), returns_job_);
  });
  rollout_view_->setFigureRecipeMaker([this] {
    return recipes::entropy_reward_recipe(rollout_path_, rollout_config_, *rollout_view_);
  });
  returns_view_->setFigureRecipeMaker(
      [this] { return recipes::returns_recipe(returns_path_, returns_shown_); });
  for (Job* job : {rollout_job_, returns_job_})
    connect(job, &Job::restarting, this, [this, job] {
      emit status(tr("%1: the earlier run stops, this one follows").arg(job->name()));
    });
}

void ReturnJobs::setCheckpoint(std::shared_ptr<const models::LoadedCheckpoint> checkpoint,
                               const models::CheckpointInfo& info, const QString& label,
                               double best_score) {
  cancel();
  checkpoint_ = std::move(checkpoint);
  path_ = QString::fromStdString(info.path);
  context_ = info.variant.context_length;
  label_ = label;
  best_score_ = best_score;
  compared_.clear();
  returns_shown_ = {};
}

void ReturnJobs::setCompared(const QString& path) {
  compared_ = path;
}

bool ReturnJobs::isRunning() const {
  return rollout_job_->isRunning() || returns_job_->isRunning();
}

void ReturnJobs::cancel() {
  rollout_job_->cancel();
  returns_job_->cancel();
}

void ReturnJobs::runRollout(const models::RolloutConfig& config) {
  if (!checkpoint_) return;
  rollout_view_->setRunning(true);
  const auto checkpoint = checkpoint_;
  const QString title = label_;
  const int context = context_;
  rollout_job_->start(
      [this, checkpoint, config, title, context](const Progress& progress) -> Job::Deliver {
        auto result =
            std::make_shared<models::RolloutResult>(models::rollout(*checkpoint, config, progress));
        return [this, result, title, context, config] {
          rollout_path_ = path_.toStdString();
          rollout_config_ = config;
          rollout_view_->setRollout(title, *result, context - 1);
          emit status(tr("Rollout: %1 episodes in %2 s")
                          .arg(result->episodes.size())
                          .arg(result->seconds, 0, 'f', 1));
          emit rolloutShown();
        };
      },
      path_);
}

void ReturnJobs::runAblation() {
  startReturns(false);
}
void ReturnJobs::runSweep() {
  startReturns(true);
}

void ReturnJobs::startReturns(bool sweep) {
  if (!checkpoint_) return;
  const std::vector<double> targets = sweep ? returns_view_->sweepTargets() : std::vector<double>{};
  if (sweep && targets.empty()) {
    emit status(tr("Type target multiples, e.g. 0.5, 1, 2, 5"));
    return;
  }
  returns_view_->setRunning(true, sweep);
  const int episodes = returns_view_->episodes();
  const double base = returns_view_->baseTarget();
  const auto checkpoint = checkpoint_;
  // A sweep also runs the compared checkpoint, so the two curves share the same targets.
  const std::string compared = sweep ? compared_.toStdString() : std::string();
  const QString title = label_;
  const QString compared_title =
      compared.empty() ? QString() : QString::fromStdString(models::checkpoint_label(compared));
  returns_job_->start(
      [this, checkpoint, compared, sweep, targets, episodes, base, title,
       compared_title](const Progress& progress) -> Job::Deliver {
        auto mine = std::make_shared<std::vector<models::TargetSummary>>();
        if (!sweep) {
          // The same ablation as `dstudio analyze ablation`, at the view's target (--target).
          models::AblationConfig config;
          config.episodes = episodes;
          config.target = base;
          for (const auto& z : models::zeroing_ablation(*checkpoint, config, progress).zeroings)
            mine->push_back(z.summary);
          return [this, title, mine, episodes, base] {
            // A new checkpoint's first result: the other panel went with the previous one.
            if (returns_path_ != path_.toStdString()) returns_shown_ = {};
            returns_path_ = path_.toStdString();
            returns_shown_.ablation = recipes::ReturnsShown::Ablation{episodes, base};
            returns_view_->setAblation(title, *mine);
            emit status(tr("Modality zeroing done"));
            emit returnsShown(false);
          };
        }
        auto theirs = std::make_shared<std::vector<models::TargetSummary>>();
        models::RolloutConfig config;
        config.episodes = episodes;
        config.traces = false;
        config.targets = targets;
        const int jobs = compared.empty() ? 1 : 2;
        for (int k = 0; k < jobs; ++k) {
          // Each checkpoint's sweep is an equal part of the progress.
          const auto part = progress.part(double(k) / jobs, double(k + 1) / jobs);
          const auto result = k == 1 ? models::rollout(compared, config, part)
                                     : models::rollout(*checkpoint, config, part);
          auto& into = k == 1 ? *theirs : *mine;
          into.insert(into.end(), result.summary.begin(), result.summary.end());
        }
        return [this, title, compared_title, mine, theirs, episodes, targets, compared] {
          if (returns_path_ != path_.toStdString()) returns_shown_ = {};
          returns_path_ = path_.toStdString();
          returns_shown_.sweep =
              recipes::ReturnsShown::Sweep{episodes, targets, compared, best_score_};
          returns_view_->setSweep(title, *mine, best_score_);
          if (!theirs->empty()) returns_view_->addSweep(compared_title, *theirs);
          emit status(tr("Target sweep done"));
          emit returnsShown(true);
        };
      },
      path_);
}

}  // namespace dstudio::studio
