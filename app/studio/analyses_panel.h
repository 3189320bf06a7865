#pragma once
/// \file
/// The window's page of registered analyses (analysis_registry.h): the studio's own, with every
/// option `dstudio analyze` has, and those plugins add. A list on the left, the chosen analysis's
/// panel (viz::AnalysisView, made from its definition) on the right. Each analysis runs as a Job on
/// the open checkpoint with the panel's options, so it shows progress, can be cancelled, and a
/// second Run restarts it visibly.

#include <QWidget>
#include <map>
#include <memory>
#include <vector>

#include "dstudio/analysis/analysis_registry.h"

class QListWidget;
class QStackedWidget;
class QLabel;

namespace dstudio::viz {
class AnalysisView;
class FigureSource;
}  // namespace dstudio::viz

namespace dstudio::studio {

class Job;

class AnalysesPanel : public QWidget {
  Q_OBJECT
 public:
  /// One panel and one job per analysis registered now (plugins are loaded before the window).
  explicit AnalysesPanel(QWidget* parent = nullptr);

  /// The checkpoint the analyses run on (with windows of its own dataset); empty: none. `opened`
  /// is that file read already (the window's open model): the analyses use it instead of reading
  /// the file again.
  void setCheckpoint(const QString& path, const QString& title,
                     std::shared_ptr<const models::LoadedCheckpoint> opened = nullptr);
  /// The open dataset: what an analysis that needs no checkpoint runs on.
  void setDataset(const QString& path);
  /// Runs the analysis called `name` with its panel's options; false when there is none, or it
  /// needs a checkpoint and none is open.
  bool run(const QString& name);
  /// The panel of the analysis called `name`, or null.
  [[nodiscard]] viz::AnalysisView* view(const QString& name) const;
  /// The panel on screen, or null.
  [[nodiscard]] viz::AnalysisView* currentView() const;
  [[nodiscard]] Job* job(const QString& name) const;
  /// Selects the analysis called `name` in the list.
  void select(const QString& name);
  [[nodiscard]] std::vector<Job*> jobs() const { return jobs_; }
  [[nodiscard]] std::vector<const viz::FigureSource*> figureSources() const;
  [[nodiscard]] int count() const { return static_cast<int>(views_.size()); }
  /// The analyses' names, in the list's order.
  [[nodiscard]] QStringList names() const;
  /// Where an analysis whose result includes files other commands read back (the steering
  /// analysis's directions) keeps its results: a folder per run, named after the checkpoint, the
  /// analysis and the time. Default: $XDG_DATA_HOME/decision-studio/analyses.
  void setResultsDirectory(const QString& dir) { results_dir_ = dir; }
  [[nodiscard]] QString resultsDirectory() const { return results_dir_; }
  /// The folder the last run of `name` wrote its results to; empty when it wrote none.
  [[nodiscard]] QString writtenFolder(const QString& name) const;

 signals:
  /// A line for the status bar.
  void message(const QString& text);
  /// An analysis has shown its result.
  void resultShown(const QString& name);
  /// An analysis wrote its results, with the files other commands read back, to `folder`.
  void resultsWritten(const QString& name, const QString& folder);

 private:
  QListWidget* list_;
  QStackedWidget* stack_;
  std::vector<std::shared_ptr<const analysis::AnalysisDefinition>> definitions_;
  std::vector<viz::AnalysisView*> views_;
  std::vector<Job*> jobs_;
  void updateReady();
  QString checkpoint_, checkpoint_title_, dataset_, results_dir_;
  std::map<QString, QString> written_;  ///< analysis -> the folder its last run wrote
  std::shared_ptr<const models::LoadedCheckpoint> opened_;
};

}  // namespace dstudio::studio
