#pragma once
/// \file
/// Plots of training runs. `TrainingCurvesView` draws one run's metrics as they arrive, in four
/// panels: the loss on a logarithmic axis, the learning rate, steps per second, and the periodic
/// evaluation (normalised score, with the first layer's attention entropy on a second axis).
/// `RunComparisonView` draws several groups of runs (e.g. the seeds of each variant) on one plot:
/// each group's mean as a line over a faint band, with the unsmoothed mean faintly behind it.
/// Both draw what they are given; the numbers come from core (analysis/curves.h).
/// `RunCurvesFigure` is one run's curves as an exported figure.

#include <QWidget>
#include <vector>

#include "dstudio/analysis/curves.h"
#include "dstudio/viz/figures.h"

class QCustomPlot;
class QLabel;

namespace dstudio::viz {

class TrainingCurvesView : public QWidget {
  Q_OBJECT
 public:
  explicit TrainingCurvesView(QWidget* parent = nullptr);

  /// Redraws every panel from `metrics` (columns loss, learning_rate, steps_per_second,
  /// eval_score, eval_score_std, entropy_layer1; missing ones stay empty). `title` names the run
  /// above the panels; empty hides it.
  void setRun(const QString& title, const analysis::RunMetrics& metrics);
  void clear();

  [[nodiscard]] QCustomPlot* lossPlot() const { return loss_; }
  [[nodiscard]] QCustomPlot* learningRatePlot() const { return lr_; }
  [[nodiscard]] QCustomPlot* throughputPlot() const { return rate_; }
  /// Graph 0: normalised score (left axis), 1: attention entropy (right axis).
  [[nodiscard]] QCustomPlot* evaluationPlot() const { return eval_; }

 private:
  QLabel* title_;
  QCustomPlot* loss_;
  QCustomPlot* lr_;
  QCustomPlot* rate_;
  QCustomPlot* eval_;
};

/// One group of runs as drawn by RunComparisonView.
struct CurveGroup {
  QString name;                            ///< e.g. "dt (3 runs)"
  std::vector<double> x, mean, low, high;  ///< smoothed mean and its band (low..high)
  std::vector<double> raw_x, raw_mean;     ///< the unsmoothed mean, drawn faintly
};

class RunComparisonView : public QWidget {
  Q_OBJECT
 public:
  explicit RunComparisonView(QWidget* parent = nullptr);

  /// Draws `groups` against step; `log_y` for losses. An empty list shows `empty_text`.
  void setGroups(std::vector<CurveGroup> groups, const QString& y_label, bool log_y,
                 const QString& empty_text = {});
  [[nodiscard]] const std::vector<CurveGroup>& groups() const { return groups_; }
  [[nodiscard]] QString yLabel() const { return y_label_; }
  /// Per group g: graph 3g the band's lower edge, 3g + 1 its upper edge (filled to the lower),
  /// 3g + 2 the unsmoothed mean; the smoothed means come last, one per group, on top.
  [[nodiscard]] QCustomPlot* plot() const { return plot_; }

 private:
  std::vector<CurveGroup> groups_;
  QString y_label_;
  QCustomPlot* plot_;
};

/// Groups of runs as RunComparisonView draws them: named "dt (3 runs)" when of several.
std::vector<CurveGroup> drawn_groups(const std::vector<analysis::CurveGroup>& groups);
/// The comparison as a figure, base.* (each group's smoothed mean over its band, against the
/// step, `y_label` up the side), and its numbers as base.csv (analysis::write_curve_groups_csv).
std::vector<std::string> save_run_comparison(const std::string& base,
                                             const std::vector<analysis::CurveGroup>& groups,
                                             const QString& y_label, double smoothing,
                                             analysis::Band band, const FigureStyle& style);

/// One run's curves as figures (the Training tab's export): its loss as <base>_loss.*, and its
/// evaluations (normalised score, the first layer's attention entropy on a second axis) as
/// <base>_evaluation.*, with every metric in <base>.csv.
class RunCurvesFigure : public FigureSource {
 public:
  /// `metrics` of the run called `name`; both read when exporting (the run may still grow).
  RunCurvesFigure(std::function<QString()> name,
                  std::function<const analysis::RunMetrics*()> metrics)
      : name_(std::move(name)), metrics_(std::move(metrics)) {}
  [[nodiscard]] QString figureName() const override { return QStringLiteral("training_curves"); }
  [[nodiscard]] QString figureTitle() const override;
  [[nodiscard]] bool hasFigure() const override;
  [[nodiscard]] FigureText figureText() const override;
  std::vector<std::string> exportFigure(const std::string& base,
                                        const FigureStyle& style) const override;

 private:
  std::function<QString()> name_;
  std::function<const analysis::RunMetrics*()> metrics_;
};

}  // namespace dstudio::viz
