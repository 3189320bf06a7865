#pragma once
/// \file
/// Runs the token t-SNE on a worker thread and animates it in a TsneView: the checkpoint's tokens
/// are gathered as `dstudio analyze tsne` gathers them (gather_tokens: windows spread over the
/// dataset, every step of its longest episodes, or of rollouts), laid out by core's analysis::tsne
/// (Barnes-Hut, or FFT interpolation from 5,000 tokens) with a layout sent every 10 iterations, and
/// each layout reaches the view by a queued signal. It runs as the window's other work does
/// (job.h): Cancel stops it within 10 iterations; Run while it runs starts the new layout once the
/// old one has stopped.

#include <QObject>
#include <QPointer>
#include <QString>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "dstudio/analysis/tsne.h"
#include "dstudio/common/progress.h"
#include "dstudio/models/token_cloud.h"
#include "dstudio/models/windows.h"
#include "view_recipes.h"

namespace dstudio::viz {
class TsneView;
}

namespace dstudio::studio {

class Job;

/// How a run ended.
struct TsneOutcome {
  double kl = 0.0, seconds = 0.0;
  double neighbour_seconds = 0.0;  ///< of `seconds`
  int points = 0;
  QString method;  ///< "barnes-hut", "fft" or "exact"
  QString error;
  bool cancelled = false;
};

class TsneJob : public QObject {
  Q_OBJECT
 public:
  /// Drives `view`: its Run button lays out the checkpoint set with setCheckpoint, its Cancel
  /// button stops the run.
  explicit TsneJob(viz::TsneView* view, QObject* parent = nullptr);
  /// Cancels a run and waits for the worker to return (at most one poll interval).
  ~TsneJob() override;
  TsneJob(const TsneJob&) = delete;
  TsneJob& operator=(const TsneJob&) = delete;

  /// The checkpoint whose tokens Run lays out: `windows` windows of its dataset (the command
  /// line's default is 40) unless setTokenSource says otherwise. An empty path disables Run.
  /// `loaded`, when given, is the checkpoint read already (the window's): its model is used and
  /// the file is not read again.
  void setCheckpoint(const QString& path, const QString& title, int windows = 40,
                     std::shared_ptr<const models::LoadedCheckpoint> loaded = {});
  /// Where Run takes the tokens from: windows, every step of the dataset's longest episodes, or
  /// of rollouts (the view's "Tokens from" choice).
  void setTokenSource(const models::TokenSource& source);
  [[nodiscard]] const models::TokenSource& tokenSource() const { return source_; }
  /// Gathers the checkpoint's tokens and lays them out, on the worker.
  void startFromCheckpoint(double perplexity, int iterations);
  /// Lays out tokens already gathered, on the worker. `config.snapshot_every` 0 becomes 10.
  void start(const QString& title, models::TokenCloud tokens, analysis::TsneConfig config);
  /// Asks the worker to stop; the view keeps the layouts it has.
  void cancel();
  [[nodiscard]] bool isRunning() const;
  /// How the last run ended (valid after `finished`).
  [[nodiscard]] const TsneOutcome& outcome() const { return outcome_; }
  /// The background job that runs it (the window's status bar follows it).
  [[nodiscard]] Job* job() const { return job_; }

 signals:
  /// From the worker: a layout after `iteration` iterations (queued to the view).
  void layout(int iteration, std::vector<double> xy);
  /// On the GUI thread, once the worker has returned.
  void finished(const dstudio::studio::TsneOutcome& outcome);

 private:
  void run(std::function<models::TokenCloud(const Progress&)> gather, const QString& title,
           analysis::TsneConfig config, std::optional<recipes::TsneShown> shown = std::nullopt);

  QPointer<viz::TsneView> view_;
  QString checkpoint_, title_;
  std::shared_ptr<const models::LoadedCheckpoint> loaded_;
  models::TokenSource source_;
  Job* job_;
  TsneOutcome outcome_;
  // What the view lays out, for its figure's recipe; none for tokens handed in (start).
  std::optional<recipes::TsneShown> shown_;
};

}  // namespace dstudio::studio
