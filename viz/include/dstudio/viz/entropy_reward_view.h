#pragma once
/// \file
/// Attention entropy against reward over a rollout (HiFormer fig. 2): one episode's first-layer
/// entropy and reward on two axes, and every step of every episode as a scatter with its Pearson
/// and Spearman correlation. The controls ask for a rollout (target return, episodes, modality
/// zeroing); whoever owns the worker runs it (core's models::rollout) and hands the result back.

#include <QWidget>

#include "dstudio/models/rollout.h"
#include "dstudio/models/targets.h"
#include "dstudio/viz/figures.h"

class QComboBox;
class QCustomPlot;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace dstudio::viz {

class TargetChooser;

class EntropyRewardView : public QWidget, public FigureSource {
  Q_OBJECT
 public:
  explicit EntropyRewardView(QWidget* parent = nullptr);

  /// Shows a rollout recorded with entropy; the first `skip` steps of each episode (windows not
  /// yet full) stay out of the correlation.
  void setRollout(const QString& title, models::RolloutResult result, int skip);
  /// A new model, `checkpoint` (its label), acting in `env` with `targets` on offer (the first in
  /// use): the previous model's rollout is cleared and the controls enabled, or disabled with
  /// `env` empty.
  void setReady(const QString& env, const std::vector<models::TargetChoice>& targets = {},
                const QString& checkpoint = {});
  [[nodiscard]] TargetChooser* targetChooser() const { return target_from_; }
  /// While a rollout runs: the Run button becomes Cancel.
  void setRunning(bool running);
  void showEpisode(int episode);
  /// The episode on screen, from 0; -1 for none.
  [[nodiscard]] int shownEpisode() const;

  /// What the controls ask for.
  [[nodiscard]] models::RolloutConfig request() const;
  [[nodiscard]] double pearson() const { return pearson_; }
  [[nodiscard]] double spearman() const { return spearman_; }
  [[nodiscard]] int pairs() const { return pairs_; }
  [[nodiscard]] QCustomPlot* seriesPlot() const { return series_; }

  /// "entropy_reward".
  [[nodiscard]] QString figureName() const override { return QStringLiteral("entropy_reward"); }
  [[nodiscard]] QString figureTitle() const override { return tr("Entropy and reward"); }
  [[nodiscard]] bool hasFigure() const override { return !result_.episodes.empty(); }
  [[nodiscard]] QString figureModel() const override { return hasFigure() ? title_ : QString(); }
  [[nodiscard]] FigureText figureText() const override;
  /// The episode on screen (entropy and reward on two axes) as base.*, every step of every
  /// episode as a scatter with its correlations as base_correlation.*, and every episode's
  /// entropy and reward per step as base.csv.
  std::vector<std::string> exportFigure(const std::string& base,
                                        const FigureStyle& style = {}) const override;

 signals:
  void runRequested(const models::RolloutConfig& config);
  void cancelRequested();

 private:
  void drawEpisode();

  models::RolloutResult result_;
  QString title_;
  int skip_ = 0;
  double pearson_ = 0.0, spearman_ = 0.0;
  int pairs_ = 0;
  bool running_ = false;
  QDoubleSpinBox* target_;
  TargetChooser* target_from_;
  QSpinBox* episodes_;
  QComboBox* zeroing_;
  QPushButton* run_;
  QPushButton* export_;
  QComboBox* episode_;
  QLabel* caption_;
  QCustomPlot* series_;
  QCustomPlot* scatter_;
};

}  // namespace dstudio::viz
