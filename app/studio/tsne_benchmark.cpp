// The t-SNE view's responsiveness benchmark. See tsne_benchmark.h.

#include "tsne_benchmark.h"

#include <QGuiApplication>
#include <QTabWidget>
#include <QThread>
#include <QTimer>
#include <algorithm>
#include <chrono>
#include <thread>

#include "default_dataset.h"
#include "dstudio/common/system_info.h"
#include "dstudio/viz/tsne_view.h"
#include "main_window.h"
#include "tsne_job.h"

namespace dstudio::studio {
namespace {

constexpr int kProbeMs = 5;
// The view's last full draw comes within a frame of the run's end; a second more is watched.
constexpr double kAfterSeconds = 1.5;

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

QString stalls(const std::vector<double>& gaps) {
  return QStringLiteral("median %1 ms, p99 %2 ms, max %3 ms (%4 ticks)")
      .arg(percentile(gaps, 0.5), 0, 'f', 2)
      .arg(percentile(gaps, 0.99), 0, 'f', 2)
      .arg(percentile(gaps, 1.0), 0, 'f', 2)
      .arg(gaps.size());
}

}  // namespace

TsneBenchmark::TsneBenchmark(MainWindow& window, int tokens, QString screenshot)
    : window_(window), tokens_(tokens), screenshot_(std::move(screenshot)) {
  connect(&window_, &MainWindow::checkpointShown, this, [this] {
    if (!started_) QTimer::singleShot(500, this, &TsneBenchmark::run);
    started_ = true;
  });
  connect(&window_, &MainWindow::checkpointFailed, this, &TsneBenchmark::fail);
  connect(&window_, &MainWindow::loadFailed, this, &TsneBenchmark::fail);
}

void TsneBenchmark::start() {
  window_.openCheckpoint(defaultCheckpoint(QStringLiteral("dhi")));
}

void TsneBenchmark::run() {
  auto* view = window_.tsneView();
  auto* job = window_.tsneJob();
  window_.showPage(view);
  models::TokenSource source;
  source.kind = models::TokenSource::Kind::Episodes;
  source.count = 100000;  // as many episodes as the tokens need
  source.max_tokens = tokens_;
  job->setTokenSource(source);
  view->setParameters(30, 1000);
  connect(job, &TsneJob::finished, this, [this](const TsneOutcome& outcome) {
    if (!outcome.error.isEmpty()) return fail(outcome.error);
    if (outcome.cancelled) return fail(QStringLiteral("the run was cancelled"));
    finished_ns_ = clock_.nsecsElapsed();
  });
  clock_.start();
  // A probe thread posts an event every 5 ms; how long each waits for the GUI thread is what a
  // click or a key press would wait. (A fine-grained GUI timer would keep the GUI thread busy
  // polling and so change what it measures.)
  probe_ = std::thread([this] {
    while (!stop_probe_.load()) {
      const qint64 posted = clock_.nsecsElapsed();
      QMetaObject::invokeMethod(
          this, [this, posted] { tick(posted); }, Qt::QueuedConnection);
      std::this_thread::sleep_for(std::chrono::milliseconds(kProbeMs));
    }
  });
  emit view->runRequested(view->perplexity(), view->iterations());  // what Run does
}

TsneBenchmark::~TsneBenchmark() {
  stop_probe_ = true;
  if (probe_.joinable()) probe_.join();
}

void TsneBenchmark::tick(qint64 posted_ns) {
  if (done_) return;
  const qint64 now = clock_.nsecsElapsed();
  const double gap = static_cast<double>(now - posted_ns) / 1e6;
  const bool laid_out = window_.tsneView()->snapshotCount() > 0;
  if (laid_out && first_layout_s_ < 0) first_layout_s_ = static_cast<double>(now) / 1e9;
  if (finished_ns_ >= 0)
    ending_.push_back(gap);
  else if (laid_out)
    iterating_.push_back(gap);
  else
    gathering_.push_back(gap);
  if (finished_ns_ >= 0 && static_cast<double>(now - finished_ns_) / 1e9 > kAfterSeconds) report();
}

void TsneBenchmark::report() {
  if (done_) return;
  done_ = true;
  auto* view = window_.tsneView();
  const auto& outcome = window_.tsneJob()->outcome();
  std::vector<double> all = gathering_;
  all.insert(all.end(), iterating_.begin(), iterating_.end());
  all.insert(all.end(), ending_.begin(), ending_.end());
  QString r = QStringLiteral("decision-studio --bench-tsne %1\n").arg(tokens_);
  r += QStringLiteral("  platform %1, cores %2 (t-SNE threads %3), BLAS %4; checkpoint %5\n")
           .arg(QGuiApplication::platformName())
           .arg(std::thread::hardware_concurrency())
           .arg(std::max(1, QThread::idealThreadCount() - 1))
           .arg(QString::fromStdString(active_blas_name()),
                defaultCheckpoint(QStringLiteral("dhi")));
  r += QStringLiteral(
           "  tokens %1 (every step of the dataset's longest episodes), perplexity %2, %3 "
           "iterations\n")
           .arg(outcome.points)
           .arg(view->perplexity())
           .arg(view->iterations());
  r += QStringLiteral("  first layout after %1 s; t-SNE %2 s (neighbours %3 s), method %4, KL %5\n")
           .arg(first_layout_s_, 0, 'f', 1)
           .arg(outcome.seconds, 0, 'f', 1)
           .arg(outcome.neighbour_seconds, 0, 'f', 1)
           .arg(outcome.method)
           .arg(outcome.kl, 0, 'f', 3);
  r += QStringLiteral("  layouts kept for replay %1; points drawn at the end %2 of %3\n")
           .arg(view->snapshotCount())
           .arg(view->pointsDrawn())
           .arg(view->pointCount());
  r += QStringLiteral("  how long an event posted to the GUI thread every %1 ms waited:\n")
           .arg(kProbeMs);
  r += QStringLiteral("    gathering tokens and neighbours: %1\n").arg(stalls(gathering_));
  r += QStringLiteral("    iterating, layouts drawn:        %1\n").arg(stalls(iterating_));
  r += QStringLiteral("    after the run, every point:      %1\n").arg(stalls(ending_));
  r += QStringLiteral("    whole run:                       %1\n").arg(stalls(all));
  if (!screenshot_.isEmpty()) {
    const bool saved = window_.grab().save(screenshot_);
    r += saved ? QStringLiteral("  saved %1\n").arg(screenshot_)
               : QStringLiteral("  could not save %1\n").arg(screenshot_);
  }
  stop_probe_ = true;
  emit finished(true, r);
}

void TsneBenchmark::fail(const QString& why) {
  if (done_) return;
  done_ = true;
  stop_probe_ = true;
  emit finished(false, why);
}

}  // namespace dstudio::studio
