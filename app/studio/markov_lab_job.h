#pragma once
/// \file
/// Trains the Markov lab on a worker thread and shows it in a MarkovLabView: the view's Train
/// button starts a run of the options its controls show (models::run_markov_lab), each point of
/// the loss curve reaches the view by a queued signal as it is made, and the result (summary and
/// mixing matrix) when the run ends. Cancel stops it at the next optimiser step; the curve so far
/// stays.

#include <QObject>
#include <QPointer>
#include <vector>

#include "dstudio/models/markov_lab_options.h"

namespace dstudio::viz {
class MarkovLabView;
}

namespace dstudio::studio {

class Job;

class MarkovLabJob : public QObject {
  Q_OBJECT
 public:
  explicit MarkovLabJob(viz::MarkovLabView* view, QObject* parent = nullptr);
  /// Cancels a run and waits for the worker to return (at most one optimiser step).
  ~MarkovLabJob() override;
  MarkovLabJob(const MarkovLabJob&) = delete;
  MarkovLabJob& operator=(const MarkovLabJob&) = delete;

  /// Trains the options the view shows.
  void start();
  void cancel();
  [[nodiscard]] bool isRunning() const;
  /// The background job that runs it (the window's status bar follows it).
  [[nodiscard]] Job* job() const { return job_; }

 signals:
  /// From the worker: a point of the loss curve (queued to the view).
  void point(dstudio::models::MarkovLabPoint point);
  /// On the GUI thread, once a run has ended, however it ended.
  void finished();

 private:
  QPointer<viz::MarkovLabView> view_;
  Job* job_;
};

}  // namespace dstudio::studio
