// The token t-SNE on a worker thread. See tsne_job.h.

#include "tsne_job.h"

#include <QThread>
#include <algorithm>
#include <exception>

#include "dstudio/data/dataset_io.h"
#include "dstudio/models/checkpoint.h"
#include "dstudio/models/windows.h"
#include "dstudio/viz/tsne_view.h"
#include "job.h"

namespace dstudio::studio {

TsneJob::TsneJob(viz::TsneView* view, QObject* parent) : QObject(parent), view_(view), job_(new Job(tr("Laying out the tokens"), this)) {
  qRegisterMetaType<std::vector<double>>("std::vector<double>");
  // Emitted on the worker, delivered on the view's (GUI) thread.
  connect(this, &TsneJob::layout, view, &viz::TsneView::showLayout, Qt::QueuedConnection);
  connect(view, &viz::TsneView::runRequested, this, &TsneJob::startFromCheckpoint);
  connect(view, &viz::TsneView::cancelRequested, this, &TsneJob::cancel);
  connect(job_, &Job::finished, this, [this](Job::End end, const QString& error) {
    if (end != Job::End::Done) {
      outcome_ = {};
      outcome_.cancelled = end == Job::End::Cancelled;
      outcome_.error = error;
    }
    if (view_) {
      if (outcome_.cancelled) view_->stop(tr("cancelled"));
      else if (!outcome_.error.isEmpty()) view_->stop(outcome_.error);
      else view_->finish(outcome_.kl, outcome_.seconds);
    }
    emit finished(outcome_);
  });
}

// The worker emits layouts from this object: it must have returned before this object goes.
TsneJob::~TsneJob() { job_->cancelAndWait(); }

void TsneJob::setCheckpoint(const QString& path, const QString& title, int windows) {
  // Another model: the previous one's layouts leave the view.
  if (path != checkpoint_) {
    job_->cancel();
    if (view_) view_->clear(QString());
  }
  checkpoint_ = path;
  title_ = title;
  windows_ = windows;
  if (!view_) return;
  if (path.isEmpty()) view_->setReady(false);
  else view_->setReady(true, tr("%1: lay out the embeddings of its tokens on %2 windows of its dataset with t-SNE (Run).").arg(title).arg(windows));
}

void TsneJob::startFromCheckpoint(double perplexity, int iterations) {
  if (checkpoint_.isEmpty()) return;
  analysis::TsneConfig config;
  config.perplexity = perplexity;
  config.iterations = iterations;
  const std::string path = checkpoint_.toStdString();
  const int count = windows_;
  run(
      [path, count](const Progress& progress) {
        // The command line's steps: windows of the checkpoint's dataset, inspected, gathered.
        Progress cancellable;
        cancellable.cancel = progress.cancel;
        const auto inspected = models::inspect_on_dataset(path, count, {}, cancellable);
        progress.check();
        return models::token_cloud(inspected.windows, inspected.inspections);
      },
      title_, config);
}

void TsneJob::start(const QString& title, models::TokenCloud tokens, analysis::TsneConfig config) {
  run([tokens = std::move(tokens)](const Progress&) { return tokens; }, title, std::move(config));
}

void TsneJob::run(std::function<models::TokenCloud(const Progress&)> gather, const QString& title, analysis::TsneConfig config) {
  if (config.snapshot_every <= 0) config.snapshot_every = 10;
  // One core stays with the window on small machines.
  config.threads = std::max(1, QThread::idealThreadCount() - 1);
  if (view_) {
    view_->setParameters(config.perplexity, config.iterations);
    view_->setRunning(true);
  }
  job_->start(
      [this, gather = std::move(gather), title, config](const Progress& progress) mutable -> Job::Deliver {
        auto tokens = gather(progress);
        // The view learns which tokens are coming before their first layout (same queue, so in order).
        models::TokenCloud labels;
        labels.modality = tokens.modality;
        labels.window = tokens.window;
        labels.timestep = tokens.timestep;
        labels.return_to_go = tokens.return_to_go;
        QMetaObject::invokeMethod(
            this, [this, title, labels = std::move(labels)]() mutable {
              if (view_) view_->setTokens(title, std::move(labels));
            },
            Qt::QueuedConnection);
        config.on_snapshot = [this](int iteration, const std::vector<double>& y) { emit layout(iteration, y); };
        // t-SNE reports its own fraction; the gathering before it is quick.
        const auto r = analysis::tsne(tokens.points, tokens.count(), tokens.dims, config, progress);
        TsneOutcome out;
        out.points = tokens.count();
        out.kl = r.kl;
        out.seconds = r.seconds;
        return [this, out] { outcome_ = out; };
      },
      title);
}

void TsneJob::cancel() { job_->cancel(); }

bool TsneJob::isRunning() const { return job_->isRunning(); }

}  // namespace dstudio::studio
