#pragma once
/// \file
/// The one way the window runs work off its thread. A `Job` runs a function on a worker with a
/// `Progress` (fraction, stage, a CancelToken); the function returns what to do with its result
/// back on the GUI thread, so a job's result keeps its own type and needs no outcome struct. A
/// run ends Done (the returned step has run), Failed (the exception's message) or Cancelled. A
/// request while a run is under way cancels that run and starts once it has returned, and says so
/// (`restarting`); the newest request wins. The GUI thread never waits on a worker, except in
/// the destructor, which cancels and then waits.

#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <functional>
#include <memory>
#include <optional>

#include "dstudio/common/progress.h"

class QTimer;

namespace dstudio::studio {

class Job : public QObject {
  Q_OBJECT
 public:
  enum class End { Done, Failed, Cancelled };
  Q_ENUM(End)
  /// Runs on the GUI thread once the work has succeeded.
  using Deliver = std::function<void()>;
  /// The work: runs on a worker, polls `progress`, returns how to show its result.
  using Work = std::function<Deliver(const Progress& progress)>;

  /// `name` says what the job does ("Inspecting the checkpoint"), for status lines.
  explicit Job(QString name, QObject* parent = nullptr);
  /// Cancels a run and waits for its worker to return.
  ~Job() override;
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  /// Runs `work` on a worker; `label` names what it runs on (a file, a checkpoint). While a run
  /// is under way, that run is cancelled and `work` follows it (a request already waiting is
  /// replaced).
  void start(Work work, const QString& label = {});
  /// Stops the run at its next poll and drops a waiting request.
  void cancel();
  /// A run is under way (or waiting for the one it replaces).
  [[nodiscard]] bool isRunning() const;
  [[nodiscard]] const QString& name() const { return name_; }
  [[nodiscard]] QString label() const { return label_; }
  /// The latest fraction in [0, 1] and stage the work reported.
  [[nodiscard]] double fraction() const;
  [[nodiscard]] QString stage() const;
  /// How the last run ended, and its error when it failed.
  [[nodiscard]] End lastEnd() const { return last_end_; }
  [[nodiscard]] const QString& lastError() const { return last_error_; }
  /// Cancels, drops a waiting request and blocks until the worker has returned, without running
  /// the event loop: for destructors of what the work refers to.
  void cancelAndWait();

 signals:
  void started(const QString& label);
  /// A request came while a run was under way: that run is being cancelled, this one follows.
  void restarting(const QString& label);
  /// Every 100 ms while running.
  void progressed(double fraction, const QString& stage);
  /// On the GUI thread when the worker has returned, before the result is shown (so a view
  /// leaves its running state before it announces the result).
  void stopped();
  /// On the GUI thread after the run has ended (after `stopped` and, when Done, its Deliver step).
  void finished(dstudio::studio::Job::End end, const QString& error);

 private:
  struct Outcome {
    Deliver deliver;
    End end = End::Done;
    QString error;
  };
  struct Shared;  // progress written by the worker, read by the GUI thread
  void launch(Work work, const QString& label);
  void onFinished();

  QString name_, label_;
  std::shared_ptr<Shared> shared_;
  CancelToken cancel_;
  QFutureWatcher<Outcome> watcher_;
  QTimer* timer_;
  std::optional<std::pair<Work, QString>> waiting_;
  End last_end_ = End::Done;
  QString last_error_;
};

}  // namespace dstudio::studio
