// The Markov lab on a worker thread. See markov_lab_job.h.

#include "markov_lab_job.h"

#include "dstudio/models/markov_lab.h"
#include "dstudio/viz/markov_lab_view.h"
#include "job.h"
#include "view_recipes.h"

namespace dstudio::studio {

MarkovLabJob::MarkovLabJob(viz::MarkovLabView* view, QObject* parent)
    : QObject(parent), view_(view), job_(new Job(tr("Training the Markov lab"), this)) {
  qRegisterMetaType<dstudio::models::MarkovLabPoint>("dstudio::models::MarkovLabPoint");
  connect(
      this, &MarkovLabJob::point, view,
      [view](const models::MarkovLabPoint& p) { view->addPoints({p}); }, Qt::QueuedConnection);
  view->setFigureRecipeMaker([view] { return recipes::markov_lab_recipe(*view); });
  connect(view, &viz::MarkovLabView::trainRequested, this, &MarkovLabJob::start);
  connect(view, &viz::MarkovLabView::cancelRequested, this, &MarkovLabJob::cancel);
  connect(job_, &Job::stopped, this, [this] {
    if (view_) view_->setRunning(false);
  });
  connect(job_, &Job::finished, this, [this](Job::End end, const QString& error) {
    if (view_ && end == Job::End::Cancelled)
      view_->showStopped(tr("Cancelled: the curve so far stays."));
    if (view_ && end == Job::End::Failed) view_->showStopped(tr("Failed: %1").arg(error));
    emit finished();
  });
}

// The worker emits points from this object: it must have returned before this object goes.
MarkovLabJob::~MarkovLabJob() {
  job_->cancelAndWait();
}

void MarkovLabJob::start() {
  // One run at a time: a new curve while the old run's points are still queued would mix them.
  if (!view_ || job_->isRunning()) return;
  models::MarkovLabOptions options;
  try {
    options = view_->options();
    options.check();
  } catch (const std::exception& e) {
    view_->showStopped(QString::fromUtf8(e.what()));
    return;
  }
  view_->beginRun();
  view_->setRunning(true);
  job_->start(
      [this, options](const Progress& progress) -> Job::Deliver {
        auto result = models::run_markov_lab(
            options, progress, [this](const models::MarkovLabPoint& p) { emit point(p); });
        return [this, result = std::move(result)] {
          if (view_) view_->showResult(result);
        };
      },
      tr("%1 mixer, window %2")
          .arg(QString::fromStdString(models::to_string(options.mixer)))
          .arg(options.window));
}

void MarkovLabJob::cancel() {
  job_->cancel();
}

bool MarkovLabJob::isRunning() const {
  return job_->isRunning();
}

}  // namespace dstudio::studio
