#pragma once
/// \file
/// The timeline of a played episode: the return-to-go the policy is conditioned on and the
/// return collected so far (left axis), the first layer's attention entropy (right axis), and a
/// cursor at the step on screen. Clicking or dragging on the plot asks to move the cursor there,
/// so the viewer, the attention map and this plot share one time. With counterfactual forks, each
/// fork's return joins the left axis in its colour and the right axis shows each fork's action
/// difference from the main run (or a chosen joint of every run) instead of the entropy: the
/// runs' divergence on one timeline.

#include <QColor>
#include <QString>
#include <QWidget>
#include <vector>

#include "dstudio/viz/figures.h"

class QCustomPlot;
class QCPItemStraightLine;
class QCPItemText;
class QCPGraph;

namespace dstudio::viz {

class EpisodeTimeline : public QWidget, public FigureSource {
  Q_OBJECT
 public:
  explicit EpisodeTimeline(QWidget* parent = nullptr);

  /// As a figure ("episode", or "divergence" with forks): the returns on the left axis, the
  /// entropy or the forks' divergence (action difference or a joint) on the right, at a venue's
  /// size, with every curve's values in a CSV beside it.
  [[nodiscard]] QString figureName() const override;
  [[nodiscard]] QString figureTitle() const override;
  [[nodiscard]] bool hasFigure() const override { return !rtg_.empty(); }
  [[nodiscard]] FigureText figureText() const override;
  std::vector<std::string> exportFigure(const std::string& base,
                                        const FigureStyle& style) const override;

  /// Drops every step. Without steps the plot has no numbers on its axes and says what it will
  /// show (placeholderShown()).
  void clear();
  [[nodiscard]] bool placeholderShown() const;
  /// Appends step `step` (steps arrive in order; a step already drawn is replaced with the
  /// ones after it dropped).
  void addStep(int step, double return_to_go, double return_so_far, double entropy);
  /// A fork beside the main run, by step from 0 (NaN where it has no value).
  struct Fork {
    QString name;
    QColor colour;
    std::vector<double> return_so_far;
    /// The right axis: ||a_fork - a_main|| where both acted, or the joint chosen (setDivergence).
    std::vector<double> divergence;
  };
  /// The forks drawn (none: the main run alone, with its entropy).
  void setForks(std::vector<Fork> forks);
  [[nodiscard]] const std::vector<Fork>& forks() const { return forks_; }
  /// What the forks' right axis shows: "action difference" (from the main run, the default) or a
  /// joint, such as "thigh_joint (qpos)", with the main run's own values of it drawn beside the
  /// forks' (`main_run`; none for a difference from the main run).
  void setDivergence(const QString& name, std::vector<double> main_run = {});
  [[nodiscard]] const QString& divergenceName() const { return divergence_name_; }
  /// Moves the cursor.
  void setCursor(int step);
  [[nodiscard]] int cursor() const { return cursor_; }
  [[nodiscard]] int steps() const { return static_cast<int>(rtg_.size()); }
  /// The entropy of every step added (NaN where unknown).
  [[nodiscard]] const std::vector<double>& entropy() const { return entropy_; }
  [[nodiscard]] QCustomPlot* plot() const { return plot_; }
  /// Redraws if anything changed since the last call (call it on a timer, not per step).
  void replotIfChanged();

 signals:
  void seekRequested(int step);

 private:
  // replotIfChanged's steps: the episode's `n` steps and the forks put in their graphs, the
  // legend naming the curves there are (returns the steps the longest run spans); the returns'
  // range on the left axis; the entropy's or the divergence's on the right; as many legend names
  // a row as the width holds whole.
  int setCurves(int n);
  void fitReturnRange();
  void fitRightAxisRange();
  void fitLegendRows();
  void seekTo(double x);
  void showDivergence();
  void showEmpty(bool empty);  // the right axis, its curves' names and the legend, as set
  [[nodiscard]] QString divergenceAxis() const;

  QCustomPlot* plot_;
  QCPItemStraightLine* cursor_line_;
  QCPItemText* placeholder_;  // said before the first step
  std::vector<double> rtg_, collected_, entropy_;
  std::vector<Fork> forks_;
  std::vector<QCPGraph*> fork_graphs_;
  QString divergence_name_;
  std::vector<double> main_divergence_;
  QCPGraph* main_divergence_graph_ = nullptr;
  int cursor_ = 0;
  bool dirty_ = false;
  bool dragging_ = false;
};

}  // namespace dstudio::viz
