// The token t-SNE on a worker thread. See tsne_job.h.

#include "tsne_job.h"

#include "dstudio/common/system_info.h"

#include <QThread>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <exception>

#include "dstudio/data/dataset_io.h"
#include "dstudio/models/checkpoint.h"
#include "dstudio/models/windows.h"
#include "dstudio/viz/tsne_view.h"

namespace dstudio::studio {

TsneJob::TsneJob(viz::TsneView* view, QObject* parent) : QObject(parent), view_(view) {
  qRegisterMetaType<std::vector<double>>("std::vector<double>");
  // Emitted on the worker, delivered on the view's (GUI) thread.
  connect(this, &TsneJob::layout, view, &viz::TsneView::showLayout, Qt::QueuedConnection);
  connect(view, &viz::TsneView::runRequested, this, &TsneJob::startFromCheckpoint);
  connect(view, &viz::TsneView::cancelRequested, this, &TsneJob::cancel);
  connect(&watcher_, &QFutureWatcher<TsneOutcome>::finished, this, &TsneJob::onFinished);
}

TsneJob::~TsneJob() {
  cancel_.cancel();
  watcher_.waitForFinished();
}

void TsneJob::setCheckpoint(const QString& path, const QString& title, int windows) {
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
  if (isRunning()) return;
  cancel_ = CancelToken();
  if (config.snapshot_every <= 0) config.snapshot_every = 10;
  // One core stays with the window on small machines.
  config.threads = std::max(1, QThread::idealThreadCount() - 1);
  if (view_) {
    view_->setParameters(config.perplexity, config.iterations);
    view_->setRunning(true);
  }
  const CancelToken cancel = cancel_;
  // The worker only emits signals and posts to this object, which waits for it before it dies.
  watcher_.setFuture(QtConcurrent::run([this, gather = std::move(gather), title, config, cancel]() mutable {
    lower_thread_priority();  // background work yields to the window
    TsneOutcome out;
    Progress progress;
    progress.cancel = cancel;
    try {
      auto tokens = gather(progress);
      out.points = tokens.count();
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
      const auto r = analysis::tsne(tokens.points, tokens.count(), tokens.dims, config, progress);
      out.kl = r.kl;
      out.seconds = r.seconds;
    } catch (const Cancelled&) {
      out.cancelled = true;
    } catch (const std::exception& e) {
      out.error = QString::fromStdString(e.what());
    }
    return out;
  }));
}

void TsneJob::cancel() { cancel_.cancel(); }

bool TsneJob::isRunning() const { return watcher_.isRunning(); }

void TsneJob::onFinished() {
  outcome_ = watcher_.result();
  if (view_) {
    if (outcome_.cancelled) view_->stop(tr("cancelled"));
    else if (!outcome_.error.isEmpty()) view_->stop(outcome_.error);
    else view_->finish(outcome_.kl, outcome_.seconds);
  }
  emit finished(outcome_);
}

}  // namespace dstudio::studio
