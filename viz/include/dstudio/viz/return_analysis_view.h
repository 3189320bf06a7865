#pragma once
/// \file
/// How the return depends on what the policy is given: the modality-zeroing ablation (DC sec.
/// 5.3) as bars with error bars, and the out-of-distribution target-return sweep (DC fig. 6) as
/// a curve with a band and the dataset's best episode as a reference line. The controls ask for
/// either; whoever owns the worker runs the rollouts (core's models::rollout).

#include <QWidget>
#include <vector>

#include "dstudio/models/rollout.h"
#include "dstudio/models/targets.h"
#include "dstudio/viz/figures.h"

class QCustomPlot;
class QLabel;
class QLineEdit;
class QPushButton;
class QDoubleSpinBox;
class QSpinBox;

namespace dstudio::viz {

class TargetChooser;

class ReturnAnalysisView : public QWidget, public FigureSource {
  Q_OBJECT
 public:
  explicit ReturnAnalysisView(QWidget* parent = nullptr);

  /// A new policy, `checkpoint` (its label), with `targets` on offer (the first is the base
  /// target; none disables the controls): the previous model's bars and curves are cleared.
  void setReady(const std::vector<models::TargetChoice>& targets, const QString& checkpoint = {});
  /// The target the ablation runs at and the sweep multiplies.
  [[nodiscard]] double baseTarget() const;
  [[nodiscard]] TargetChooser* targetChooser() const { return base_from_; }
  /// While the ablation (or, with `sweep`, the sweep) runs: its button becomes Cancel, the other
  /// waits.
  void setRunning(bool running, bool sweep = false);
  /// While it runs: how far it is, written over its plot (which fills only at the end).
  void setProgress(double fraction, const QString& stage);
  /// The text over the running plot (empty when nothing runs).
  [[nodiscard]] QString progressText() const;
  [[nodiscard]] QPushButton* ablationButton() const { return ablation_button_; }
  [[nodiscard]] QPushButton* sweepButton() const { return sweep_button_; }
  /// Normalised scores of the four zeroings, in the order none, RTG, past states, actions.
  void setAblation(const QString& title, const std::vector<models::TargetSummary>& by_zeroing);
  /// A sweep's summaries (one per target); `best_score` is the dataset's best episode (NaN: none).
  void setSweep(const QString& title, const std::vector<models::TargetSummary>& by_target,
                double best_score);
  /// Another model's sweep over the same targets, drawn beside the first in its own colour
  /// (DC fig. 6 compares DT and DC this way).
  void addSweep(const QString& title, const std::vector<models::TargetSummary>& by_target);
  /// Models in the sweep plot.
  [[nodiscard]] int sweepCount() const { return static_cast<int>(sweeps_.size()); }

  [[nodiscard]] int episodes() const;
  void setEpisodes(int episodes);
  /// The targets of a sweep: the multiples typed in, times the default target.
  [[nodiscard]] std::vector<double> sweepTargets() const;
  [[nodiscard]] QCustomPlot* ablationPlot() const { return ablation_; }
  [[nodiscard]] QCustomPlot* sweepPlot() const { return sweep_; }

  /// "returns".
  [[nodiscard]] QString figureName() const override { return QStringLiteral("returns"); }
  [[nodiscard]] QString figureTitle() const override { return tr("Zeroing and target sweep"); }
  [[nodiscard]] bool hasFigure() const override {
    return !ablation_data_.empty() || !sweep_data_.empty();
  }
  /// The model zeroed or swept (the sweep's first model when both were swept).
  [[nodiscard]] QString figureModel() const override {
    return !ablation_data_.empty() ? ablation_title_
           : !sweep_data_.empty()  ? sweep_title_
                                   : QString();
  }
  [[nodiscard]] FigureText figureText() const override;
  /// The zeroing ablation as base_zeroing.* and the target sweep as base_sweep.* (whichever has
  /// been run), each with its numbers as CSV.
  std::vector<std::string> exportFigure(const std::string& base,
                                        const FigureStyle& style = {}) const override;

 signals:
  void ablationRequested();
  void sweepRequested();
  void cancelRequested();

 private:
  void noteWhatIsEmpty();
  QString ablation_title_, sweep_title_;
  std::vector<models::TargetSummary> ablation_data_, sweep_data_;
  std::vector<std::pair<QString, std::vector<models::TargetSummary>>>
      sweeps_;  // every model in the sweep plot
  void drawSweeps();
  double best_score_ = 0.0;
  bool running_ = false, running_sweep_ = false;
  QDoubleSpinBox* base_;
  TargetChooser* base_from_;
  QSpinBox* episodes_;
  QLineEdit* multiples_;
  QPushButton* ablation_button_;
  QPushButton* sweep_button_;
  QPushButton* export_;
  QLabel* caption_;
  QCustomPlot* ablation_;
  QCustomPlot* sweep_;
};

}  // namespace dstudio::viz
