#pragma once
/// \file
/// The Markov lab tab: controls for a chain (p, q, order, symbols) and a one-layer model (mixer,
/// window, steps), the chain's entropy rate as the floor of the loss, the loss curve as it is
/// made (the previous run kept faintly behind it, to compare two settings), and the mixing
/// matrix the model learned. It draws; a run is trained elsewhere (models/markov_lab.h) and
/// handed in point by point.

#include <QWidget>
#include <optional>
#include <vector>

#include "dstudio/models/markov_lab_options.h"
#include "dstudio/viz/figures.h"

class QComboBox;
class QCustomPlot;
class QCPColorMap;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QPushButton;
class QScrollArea;
class QSlider;
class QSpinBox;

namespace dstudio::viz {

class MarkovLabView : public QWidget, public FigureSource {
  Q_OBJECT
 public:
  explicit MarkovLabView(QWidget* parent = nullptr);

  /// The run the controls describe; their ranges are the options' own.
  [[nodiscard]] models::MarkovLabOptions options() const;
  /// Shows `options` in the controls (clamped to their ranges).
  void setOptions(const models::MarkovLabOptions& options);
  /// While a run is under way, Train reads Cancel and the controls wait.
  void setRunning(bool running);
  [[nodiscard]] bool running() const { return running_; }
  /// A new curve for the options shown; the last one stays, faint, as "previous".
  void beginRun();
  /// Points of the run under way, in order.
  void addPoints(const std::vector<models::MarkovLabPoint>& points);
  /// The finished run: its summary and its mixing matrix.
  void showResult(const models::MarkovLabResult& result);
  /// Why the run stopped (cancelled or failed); the curve so far stays.
  void showStopped(const QString& why);

  /// The entropy rate of the chain the controls describe, nats.
  [[nodiscard]] double floor() const { return floor_; }
  /// Graph 0: the loss; 1: the batch loss; 2: the previous run's loss; 3: the floor.
  [[nodiscard]] QCustomPlot* lossPlot() const { return loss_; }
  [[nodiscard]] QCustomPlot* matrixPlot() const { return matrix_plot_; }
  [[nodiscard]] QCPColorMap* matrix() const { return matrix_; }
  [[nodiscard]] QPushButton* trainButton() const { return train_; }
  [[nodiscard]] QLabel* summary() const { return summary_; }
  [[nodiscard]] bool hasResult() const { return has_result_; }
  /// The options of the run shown (not the controls', which may have changed since).
  [[nodiscard]] const models::MarkovLabOptions& runOptions() const { return run_options_; }
  /// The faint previous run's options and how many of its points are drawn (a cancelled run's
  /// first ones); nullopt and 0 when there is none.
  [[nodiscard]] std::optional<models::MarkovLabOptions> previousOptions() const;
  [[nodiscard]] int previousPoints() const;

  // FigureSource: the loss against the floor, and the mixing matrix.
  [[nodiscard]] QString figureName() const override { return "markov_lab"; }
  [[nodiscard]] QString figureTitle() const override { return tr("Markov lab: loss and mixing"); }
  [[nodiscard]] bool hasFigure() const override { return has_result_; }
  [[nodiscard]] FigureText figureText() const override;
  std::vector<std::string> exportFigure(const std::string& base,
                                        const FigureStyle& style) const override;

 signals:
  void trainRequested();
  void cancelRequested();

 private:
  // The tab's parts, built in this order by the constructor: the scrolled column of controls
  // (the chain's box, the model's box with Train, the summary and the story of the floor); the
  // loss against the floor; the learned mixing matrix.
  QScrollArea* buildControls();
  QGroupBox* buildChainBox(const models::MarkovLabOptions& defaults);
  QGroupBox* buildModelBox(const models::MarkovLabOptions& defaults);
  void setUpLossPlot();
  void setUpMatrixPlot();
  void updateFloor();
  void drawFloor();
  [[nodiscard]] QString runName(const models::MarkovLabOptions& o) const;

  QSlider* p_slider_;
  QDoubleSpinBox* p_;
  QSlider* q_slider_;
  QDoubleSpinBox* q_;
  QSpinBox* order_;
  QSpinBox* states_;
  QComboBox* mixer_;
  QSpinBox* window_;
  QSpinBox* steps_;
  QPushButton* train_;
  QLabel* floor_label_;
  QLabel* summary_;
  QCustomPlot* loss_;
  QCustomPlot* matrix_plot_;
  QCPColorMap* matrix_;
  bool running_ = false;
  bool has_run_ = false;                  // a curve is shown (its run under way or ended)
  bool has_result_ = false;               // ... and its run finished
  double floor_ = 0.0;                    // of the controls
  double run_floor_ = 0.0;                // of the run shown
  models::MarkovLabOptions run_options_;  // of the curve shown
  models::MarkovLabResult result_;
  QString previous_name_;
  models::MarkovLabOptions previous_options_;  // of the faint curve, when previous_name_ is set
};

}  // namespace dstudio::viz
