#pragma once
/// \file
/// The token t-SNE view (DHi fig. 5): the embeddings of R, s and a tokens before merging and of
/// the tokens that enter the first block, laid out by t-SNE and coloured by modality (Okabe-Ito),
/// by timestep or by return-to-go (viridis, with a colour scale). It animates a run as layouts
/// arrive (showLayout, fed by queued signals from the worker that runs core's analysis::tsne),
/// then replays the stored layouts with a slider. It draws; it computes nothing.

#include <QString>
#include <QWidget>
#include <vector>

#include "dstudio/models/token_cloud.h"
#include "dstudio/viz/figures.h"

class QComboBox;
class QCustomPlot;
class QCPColorScale;
class QCPLayoutGrid;
class QLabel;
class QPushButton;
class QSlider;
class QSpinBox;
class QDoubleSpinBox;
class QTimer;

namespace dstudio::viz {

class TsneView : public QWidget, public FigureSource {
  Q_OBJECT
 public:
  enum class ColourBy { Modality, Timestep, ReturnToGo };

  explicit TsneView(QWidget* parent = nullptr);

  /// The tokens a run will lay out (their embeddings are not kept: only what colours them).
  /// Forgets the layouts of an earlier run.
  void setTokens(const QString& title, models::TokenCloud tokens);
  /// Enables Run for a model whose tokens can be gathered, or disables it with `message`.
  void setReady(bool ready, const QString& message = {});
  /// Nothing to show; `message` says why.
  void clear(const QString& message);

  void setColourBy(ColourBy by);
  [[nodiscard]] ColourBy colourBy() const;
  /// The perplexity and iterations Run asks for (a run started elsewhere shows its own here).
  void setParameters(double perplexity, int iterations);
  [[nodiscard]] double perplexity() const;
  [[nodiscard]] int iterations() const;

  [[nodiscard]] int pointCount() const { return static_cast<int>(modality_.size()); }
  /// Layouts received so far (the replay slider's range).
  [[nodiscard]] int snapshotCount() const { return static_cast<int>(iterations_.size()); }
  [[nodiscard]] int snapshotIteration(int index) const { return iterations_.at(static_cast<std::size_t>(index)); }
  /// The layout drawn (index into the snapshots; -1: none).
  [[nodiscard]] int shownSnapshot() const { return shown_; }
  /// Points drawn over all groups, and the groups (graphs) holding them.
  [[nodiscard]] int pointsDrawn() const;
  [[nodiscard]] int groupsDrawn() const;
  /// The colour point `i` is drawn with.
  [[nodiscard]] QColor colourOf(int i) const;
  [[nodiscard]] bool colourScaleShown() const;
  [[nodiscard]] bool isRunning() const { return running_; }
  [[nodiscard]] double kl() const { return kl_; }
  [[nodiscard]] QString status() const;
  [[nodiscard]] QCustomPlot* plot() const { return plot_; }
  /// The point drawn nearest to `pixel` of the plot, within 8 px; -1 when none is.
  [[nodiscard]] int pointAt(const QPointF& pixel) const;
  /// What the tooltip of point `i` says: its modality, window, timestep and return-to-go.
  [[nodiscard]] QString describePoint(int i) const;

  /// "tsne".
  [[nodiscard]] QString figureName() const override { return QStringLiteral("tsne"); }
  [[nodiscard]] bool hasFigure() const override { return shown_ >= 0; }
  [[nodiscard]] QString figureModel() const override { return hasFigure() ? title_ : QString(); }
  [[nodiscard]] FigureText figureText() const override;
  /// The layout on screen, coloured as on screen, as base.*, and base.csv with every point's
  /// coordinates, modality, window, timestep and return-to-go.
  std::vector<std::string> exportFigure(const std::string& base, const FigureStyle& style = {}) const override;

 public slots:
  /// A layout of the run (N x 2, in the order of the tokens) after `iteration` iterations: kept
  /// for replay and drawn, coalesced with the next ones when they come faster than the screen.
  void showLayout(int iteration, std::vector<double> xy);
  /// The run is over: its final KL(P || Q) and time; the slider replays the stored layouts.
  void finish(double kl, double seconds);
  /// The run stopped early (cancelled or failed): the stored layouts stay for replay.
  void stop(const QString& why);
  /// Draws the stored layout `index`.
  void showSnapshot(int index);
  void setRunning(bool running);

 signals:
  void runRequested(double perplexity, int iterations);
  void cancelRequested();

 private:
  void draw();
  void updateStatus();
  void exportWithDialog();
  [[nodiscard]] double valueOf(int i) const;

  QString title_;
  std::vector<std::string> modality_;
  std::vector<std::string> modalities_;  // distinct, in order of first appearance
  std::vector<int> window_, timestep_;
  std::vector<double> rtg_;
  std::vector<int> iterations_;
  std::vector<std::vector<double>> layouts_;
  int shown_ = -1;
  int total_iterations_ = 0;
  double kl_ = -1.0;
  double seconds_ = 0.0;
  bool running_ = false;
  bool finished_ = false;
  bool ready_ = false;
  QString stopped_;
  QComboBox* colour_by_;
  QDoubleSpinBox* perplexity_;
  QSpinBox* iterations_box_;
  QPushButton* run_;
  QPushButton* play_;
  QPushButton* export_;
  QSlider* slider_;
  QLabel* iteration_;
  QLabel* caption_;
  QCustomPlot* plot_;
  QCPColorScale* scale_;
  QCPLayoutGrid* legend_box_;
  QTimer* redraw_;
  QTimer* player_;
};

}  // namespace dstudio::viz
