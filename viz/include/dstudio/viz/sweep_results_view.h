#pragma once
/// \file
/// A sweep's results as a paper shows them (core's sweep::collect_groups): for each dataset a
/// cluster of bars, one a setting (the variant and the fields that vary over the sweep), the bar
/// the mean D4RL-normalised score over the seeds that finished, the error bar one standard
/// deviation over those seeds (n - 1), and "n=3" above it. A group whose cells have not all
/// finished is drawn faint with a dashed outline and says so ("n=1 of 3"); one with nothing
/// finished has no bar. A switch chooses the final policy's score or the best of the periodic
/// evaluations. The view is a FigureSource ("scores"), so the export dialog writes it as PDF, SVG
/// and PNG in any venue style with its numbers as CSV; save_sweep_scores writes the same figure
/// without a window (`dstudio sweep collect`).

#include <QWidget>
#include <string>
#include <vector>

#include "dstudio/sweep/sweep.h"
#include "dstudio/viz/figures.h"

class QComboBox;
class QCustomPlot;
class QLabel;

namespace dstudio::viz {

/// What a sweep's figure shows of each group.
enum class SweepMeasure {
  Final,  ///< the final policy's score (task.json "score"), GroupResult::score_mean / score_std
  Best,   ///< the best periodic evaluation ("best_score"), GroupResult::best_mean / best_std
};

/// One bar of a sweep's figure: a group's mean and std of `measure`, and how many seeds it pools.
struct SweepBar {
  QString dataset, setting;
  double mean = 0.0, std = 0.0;  ///< NaN when no finished cell has the measure
  int finished = 0, cells = 0;   ///< seeds finished of the group's seeds
  [[nodiscard]] bool complete() const { return finished == cells; }
};

/// The groups' bars in figure order: datasets (clusters) and settings (series) as they first
/// appear in `groups`.
struct SweepBars {
  std::vector<QString> datasets, settings;
  std::vector<SweepBar> bars;  ///< every group, in `groups`' order
};
SweepBars sweep_bars(const std::vector<sweep::GroupResult>& groups, SweepMeasure measure);

/// The y axis title of `measure`.
QString sweep_measure_label(SweepMeasure measure);

/// Writes the figure as base.{pdf,svg,png} (as `style` asks) and its numbers as base.csv
/// (dataset, setting, measure, mean, std, seeds finished, cells). Returns the paths written.
/// Needs a FigureContext (or an application).
std::vector<std::string> save_sweep_scores(const std::string& base,
                                           const std::vector<sweep::GroupResult>& groups,
                                           SweepMeasure measure, const FigureStyle& style = {});

/// rliable's aggregates of each setting (its final scores, or with `best` its best evaluations)
/// as rliable draws them: a panel each for the IQM, median, mean and optimality gap, every one on
/// a scale of its own (a gap near 100 beside an IQM near 1 would flatten it), a row a setting with
/// its 95% interval; under them sweep::aggregates_note (an IQM that trims nothing is the mean).
/// Writes base.{pdf,svg,png}; none when no setting has the measure. Needs a FigureContext.
std::vector<std::string> save_sweep_aggregates(
    const std::string& base, const std::vector<sweep::SettingAggregate>& aggregates, bool best,
    const FigureStyle& style = {});

/// The probability of improvement P(X > Y) of each pair of settings with its 95% interval, as
/// rliable draws it: a row a pair on 0 to 1 with a dashed line at 0.5 (neither better), the final
/// scores and the best evaluations (when there are any) in panels side by side. Writes
/// base.{pdf,svg,png}; none without a pair. Needs a FigureContext.
std::vector<std::string> save_sweep_improvement(const std::string& base,
                                                const std::vector<sweep::SettingImprovement>& pairs,
                                                const FigureStyle& style = {});

class SweepResultsView : public QWidget, public FigureSource {
  Q_OBJECT
 public:
  explicit SweepResultsView(QWidget* parent = nullptr);

  /// Draws `groups` (collect_groups of the sweep called `title`); an empty list clears the view.
  void setGroups(std::vector<sweep::GroupResult> groups, const QString& title = {});
  [[nodiscard]] const std::vector<sweep::GroupResult>& groups() const { return groups_; }
  void setMeasure(SweepMeasure measure);
  [[nodiscard]] SweepMeasure measure() const;
  /// "final score" (item 0) or "best evaluation" (item 1).
  [[nodiscard]] QComboBox* measureChooser() const { return measure_; }
  /// Per setting k: plottable 4k the bars of its finished groups and 4k + 1 their error bars,
  /// 4k + 2 and 4k + 3 the same of its unfinished (faint) groups; the "n=" notes are text items.
  [[nodiscard]] QCustomPlot* plot() const { return plot_; }
  /// What the bars are, in plot order: what a tooltip says and the CSV holds.
  [[nodiscard]] const SweepBars& bars() const { return bars_; }
  /// The tooltip of the bar under `pos` (plot pixels); empty where there is none.
  [[nodiscard]] QString toolTipAt(const QPointF& pos) const;

  /// "scores".
  [[nodiscard]] QString figureName() const override { return QStringLiteral("scores"); }
  [[nodiscard]] QString figureTitle() const override { return tr("Sweep: scores over seeds"); }
  [[nodiscard]] bool hasFigure() const override;
  [[nodiscard]] FigureText figureText() const override;
  std::vector<std::string> exportFigure(const std::string& base,
                                        const FigureStyle& style) const override;

 private:
  void redraw();

  std::vector<sweep::GroupResult> groups_;
  SweepBars bars_;
  QString title_;
  QComboBox* measure_;
  QLabel* caption_;
  QCustomPlot* plot_;
};

}  // namespace dstudio::viz
