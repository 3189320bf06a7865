#include "job.h"

#include <QTimer>
#include <QtConcurrent/QtConcurrentRun>
#include <atomic>
#include <mutex>

#include "dstudio/common/system_info.h"
#include "dstudio/models/device.h"

namespace dstudio::studio {

struct Job::Shared {
  std::atomic<double> fraction{0.0};
  std::mutex mutex;
  QString stage;
};

Job::Job(QString name, QObject* parent)
    : QObject(parent), name_(std::move(name)), timer_(new QTimer(this)) {
  timer_->setInterval(100);
  connect(timer_, &QTimer::timeout, this, [this] { emit progressed(fraction(), stage()); });
  connect(&watcher_, &QFutureWatcher<Outcome>::finished, this, &Job::onFinished);
}

Job::~Job() {
  cancelAndWait();
}

void Job::cancelAndWait() {
  waiting_.reset();
  cancel_.cancel();
  watcher_.waitForFinished();
}

void Job::start(Work work, const QString& label) {
  if (watcher_.isRunning()) {
    waiting_.emplace(std::move(work), label);
    cancel_.cancel();
    emit restarting(label);
    return;
  }
  launch(std::move(work), label);
}

void Job::launch(Work work, const QString& label) {
  label_ = label;
  cancel_ = CancelToken();
  shared_ = std::make_shared<Shared>();
  Progress progress;
  progress.cancel = cancel_;
  // The worker only stores numbers; the timer shows them at the GUI's pace.
  progress.report = [shared = shared_](double f, std::string_view stage) {
    shared->fraction = f;
    std::lock_guard lock(shared->mutex);
    shared->stage = QString::fromUtf8(stage.data(), static_cast<qsizetype>(stage.size()));
  };
  watcher_.setFuture(QtConcurrent::run([work = std::move(work), progress] {
    lower_thread_priority();  // background work yields to the window
    // With the threads the command line computes with: a figure drawn again from its recipe
    // computes the numbers the window showed.
    models::compute_on_one_thread();
    Outcome out;
    try {
      out.deliver = work(progress);
    } catch (const Cancelled&) {
      out.end = End::Cancelled;
    } catch (const std::exception& e) {
      out.end = End::Failed;
      out.error = QString::fromStdString(e.what());
    }
    return out;
  }));
  timer_->start();
  emit started(label);
}

void Job::cancel() {
  waiting_.reset();
  cancel_.cancel();
}

bool Job::isRunning() const {
  return watcher_.isRunning() || waiting_.has_value();
}

double Job::fraction() const {
  return shared_ ? shared_->fraction.load() : 0.0;
}

QString Job::stage() const {
  if (!shared_) return {};
  std::lock_guard lock(shared_->mutex);
  return shared_->stage;
}

void Job::onFinished() {
  timer_->stop();
  Outcome out = watcher_.result();
  if (waiting_) {  // the run was replaced: its outcome is of no interest
    auto [work, label] = std::move(*waiting_);
    waiting_.reset();
    launch(std::move(work), label);
    return;
  }
  emit stopped();
  last_end_ = out.end;
  last_error_ = out.error;
  if (out.end == End::Done && out.deliver) {
    try {
      out.deliver();
    } catch (const std::exception& e) {  // showing the result failed: a failure like any other
      last_end_ = End::Failed;
      last_error_ = QString::fromStdString(e.what());
    }
  }
  emit progressed(last_end_ == End::Done ? 1.0 : fraction(), stage());
  emit finished(last_end_, last_error_);
}

}  // namespace dstudio::studio
