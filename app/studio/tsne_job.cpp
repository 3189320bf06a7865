// The token t-SNE on a worker thread. See tsne_job.h.

#include "tsne_job.h"

#include <QThread>
#include <algorithm>
#include <exception>

#include "dstudio/data/dataset_io.h"
#include "dstudio/models/checkpoint.h"
#include "dstudio/models/windows.h"
#include "dstudio/viz/number_text.h"
#include "dstudio/viz/tsne_view.h"
#include "job.h"

namespace dstudio::studio {

TsneJob::TsneJob(viz::TsneView* view, QObject* parent)
    : QObject(parent), view_(view), job_(new Job(tr("Laying out the tokens"), this)) {
  qRegisterMetaType<std::vector<double>>("std::vector<double>");
  // Emitted on the worker, delivered on the view's (GUI) thread.
  connect(this, &TsneJob::layout, view, &viz::TsneView::showLayout, Qt::QueuedConnection);
  connect(view, &viz::TsneView::runRequested, this, &TsneJob::startFromCheckpoint);
  view->setFigureRecipeMaker([this]() -> std::optional<FigureRecipe> {
    if (!shown_ || !view_) return std::nullopt;
    return recipes::tsne_recipe(*shown_, *view_);
  });
  connect(view, &viz::TsneView::cancelRequested, this, &TsneJob::cancel);
  // "Tokens from" in the view: the next Run's source.
  connect(view, &viz::TsneView::tokenSourceChanged, this,
          [this](viz::TsneView::Source from, int count) {
            models::TokenSource source;
            source.kind =
                from == viz::TsneView::Source::Rollouts   ? models::TokenSource::Kind::Rollouts
                : from == viz::TsneView::Source::Episodes ? models::TokenSource::Kind::Episodes
                                                          : models::TokenSource::Kind::Windows;
            source.count = count;
            setTokenSource(source);
          });
  connect(job_, &Job::finished, this, [this](Job::End end, const QString& error) {
    if (end != Job::End::Done) {
      outcome_ = {};
      outcome_.cancelled = end == Job::End::Cancelled;
      outcome_.error = error;
    }
    if (view_) {
      if (outcome_.cancelled)
        view_->stop(tr("cancelled"));
      else if (!outcome_.error.isEmpty())
        view_->stop(outcome_.error);
      else
        view_->finish(outcome_.kl, outcome_.seconds);
    }
    emit finished(outcome_);
  });
}

// The worker emits layouts from this object: it must have returned before this object goes.
TsneJob::~TsneJob() {
  job_->cancelAndWait();
}

namespace {

// What Run lays out, in a sentence's words.
QString describe(const models::TokenSource& source) {
  QString what;
  switch (source.kind) {
    case models::TokenSource::Kind::Windows:
      return QObject::tr("%1 of its dataset")
          .arg(viz::count_text(source.count, QObject::tr("window"), QObject::tr("windows")));
    case models::TokenSource::Kind::Episodes:
      what = source.count == 1
                 ? QObject::tr("every step of the longest episode of its dataset")
                 : QObject::tr("every step of the %L1 longest episodes of its dataset")
                       .arg(source.count);
      break;
    case models::TokenSource::Kind::Rollouts:
      what = source.count == 1
                 ? QObject::tr("every step of one episode it plays")
                 : QObject::tr("every step of %L1 episodes it plays").arg(source.count);
      break;
  }
  if (source.max_tokens > 0) what += QObject::tr(", at most %L1 tokens").arg(source.max_tokens);
  return what;
}

}  // namespace

void TsneJob::setCheckpoint(const QString& path, const QString& title, int windows,
                            std::shared_ptr<const models::LoadedCheckpoint> loaded) {
  // Another model: the previous one's layouts leave the view.
  if (path != checkpoint_ || loaded != loaded_) {
    job_->cancel();
    if (view_) view_->clear(QString());
  }
  checkpoint_ = path;
  loaded_ = std::move(loaded);
  title_ = title;
  if (source_.kind == models::TokenSource::Kind::Windows) source_.count = windows;
  if (!view_) return;
  if (source_.kind == models::TokenSource::Kind::Windows)
    view_->setTokenSource(viz::TsneView::Source::Windows, windows);
  if (path.isEmpty())
    view_->setReady(false);
  else
    view_->setReady(true, tr("%1: lay out the embeddings of its tokens on %2 with t-SNE (Run).")
                              .arg(title, describe(source_)));
}

void TsneJob::setTokenSource(const models::TokenSource& source) {
  source_ = source;
  if (view_) {
    const auto from =
        source.kind == models::TokenSource::Kind::Rollouts   ? viz::TsneView::Source::Rollouts
        : source.kind == models::TokenSource::Kind::Episodes ? viz::TsneView::Source::Episodes
                                                             : viz::TsneView::Source::Windows;
    view_->setTokenSource(from, source.count);
  }
  if (view_ && !checkpoint_.isEmpty() && !isRunning())
    view_->setReady(true, tr("%1: lay out the embeddings of its tokens on %2 with t-SNE (Run).")
                              .arg(title_, describe(source_)));
}

void TsneJob::startFromCheckpoint(double perplexity, int iterations) {
  if (checkpoint_.isEmpty()) return;
  analysis::TsneConfig config;
  config.perplexity = perplexity;
  config.iterations = iterations;
  const std::string path = checkpoint_.toStdString();
  const auto loaded = loaded_;
  auto source = source_;
  // Rollouts play on the cores the layout will use after them.
  source.threads = std::max(1, QThread::idealThreadCount() - 1);
  run(
      [path, loaded, source](const Progress& progress) {
        // The command line's steps: the same tokens `dstudio analyze tsne` lays out, of the
        // model the window read when the checkpoint opened when it has one.
        return (loaded ? models::gather_tokens(*loaded, source, {}, progress)
                       : models::gather_tokens(path, source, {}, progress))
            .cloud;
      },
      title_, config, recipes::TsneShown{path, source});
}

void TsneJob::start(const QString& title, models::TokenCloud tokens, analysis::TsneConfig config) {
  run([tokens = std::move(tokens)](const Progress&) { return tokens; }, title, std::move(config));
}

void TsneJob::run(std::function<models::TokenCloud(const Progress&)> gather, const QString& title,
                  analysis::TsneConfig config, std::optional<recipes::TsneShown> shown) {
  if (config.snapshot_every <= 0) config.snapshot_every = 10;
  // One core stays with the window on small machines.
  config.threads = std::max(1, QThread::idealThreadCount() - 1);
  shown_ = std::move(shown);
  if (shown_) {
    shown_->perplexity = config.perplexity;
    shown_->iterations = config.iterations;
    shown_->snapshot_every = config.snapshot_every;
    shown_->threads = config.threads;
  }
  if (view_) {
    view_->setParameters(config.perplexity, config.iterations);
    view_->setRunning(true);
  }
  job_->start(
      [this, gather = std::move(gather), title,
       config](const Progress& progress) mutable -> Job::Deliver {
        // Gathering is the first fifth of the bar; t-SNE reports the rest.
        auto tokens = gather(progress.part(0.0, 0.2));
        // The view learns which tokens are coming before their first layout (same queue, so in
        // order).
        models::TokenCloud labels;
        labels.modality = tokens.modality;
        labels.window = tokens.window;
        labels.episode = tokens.episode;
        labels.timestep = tokens.timestep;
        labels.return_to_go = tokens.return_to_go;
        labels.goal_distance = tokens.goal_distance;
        QMetaObject::invokeMethod(
            this,
            [this, title, labels = std::move(labels)]() mutable {
              if (view_) view_->setTokens(title, std::move(labels));
            },
            Qt::QueuedConnection);
        config.on_snapshot = [this](int iteration, const std::vector<double>& y) {
          emit layout(iteration, y);
        };
        config.keep_snapshots = false;  // the view keeps what it replays
        const auto r = analysis::tsne(tokens.points, tokens.count(), tokens.dims, config,
                                      progress.part(0.2, 1.0));
        TsneOutcome out;
        out.points = tokens.count();
        out.kl = r.kl;
        out.seconds = r.seconds;
        out.neighbour_seconds = r.neighbour_seconds;
        out.method = QString::fromLatin1(analysis::to_string(r.method));
        return [this, out] { outcome_ = out; };
      },
      title);
}

void TsneJob::cancel() {
  job_->cancel();
}

bool TsneJob::isRunning() const {
  return job_->isRunning();
}

}  // namespace dstudio::studio
