#pragma once
/// \file
/// The token t-SNE view (DHi fig. 5): the embeddings of R, s and a tokens before merging and of
/// the tokens that enter the first block, laid out by t-SNE and coloured by modality (Okabe-Ito),
/// by timestep or by return-to-go (viridis, with a colour scale). It animates a run as layouts
/// arrive (showLayout, fed by queued signals from the worker that runs core's analysis::tsne),
/// then replays the stored layouts with a slider. It draws; it computes nothing.
///
/// Tokens are drawn as one raster (a point cloud plottable, not a QCPGraph per group), so 100,000
/// of them stay responsive: while a run is live or the replay plays, a fixed subset of at most
/// kLivePoints is drawn, and every point once the run ends or a layout is chosen with the slider.

#include <QString>
#include <QWidget>
#include <cstdint>
#include <memory>
#include <utility>
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

class PointCloudPlottable;

class TsneView : public QWidget, public FigureSource {
  Q_OBJECT
 public:
  /// GoalDistance is offered for tokens of a goal-reaching task (TokenCloud::goal_distance).
  enum class ColourBy { Modality, Timestep, ReturnToGo, GoalDistance };
  /// Where Run takes the tokens from (models::TokenSource::Kind): windows spread over the
  /// dataset, every step of its longest episodes, or every step of episodes the model plays.
  enum class Source { Windows, Episodes, Rollouts };

  /// Layouts kept for replay. A run that sends more (at 100,000 tokens each is 1.6 MB) drops
  /// every other stored layout, keeping the first and the newest, so the replay still spans the
  /// whole run; the ones after come at the wider spacing.
  static constexpr int kMaxLayouts = 50;
  /// Points drawn while a run is live or the replay plays: the same pseudo-random subset of the
  /// tokens in every frame, so the animation follows the same tokens.
  static constexpr int kLivePoints = 20000;

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
  /// What "Tokens from" shows: the source and how many windows or episodes. Setting it does not
  /// emit tokenSourceChanged (that is for the user's choice).
  void setTokenSource(Source source, int count);
  [[nodiscard]] Source tokenSource() const;
  [[nodiscard]] int tokenCount() const;

  [[nodiscard]] int pointCount() const { return static_cast<int>(modality_.size()); }
  /// Layouts kept (the replay slider's range): every one a run sent, up to kMaxLayouts.
  [[nodiscard]] int snapshotCount() const { return static_cast<int>(iterations_.size()); }
  /// The iteration after which stored layout `index` was made (strictly increasing with index).
  [[nodiscard]] int snapshotIteration(int index) const {
    return iterations_.at(static_cast<std::size_t>(index));
  }
  /// The layout drawn (index into the snapshots; -1: none).
  [[nodiscard]] int shownSnapshot() const { return shown_; }
  /// Points drawn by the last draw (every point, or kLivePoints of them while a run is live or the
  /// replay plays), and the groups holding them: modalities, or bands of the colour map.
  [[nodiscard]] int pointsDrawn() const { return points_drawn_; }
  [[nodiscard]] int groupsDrawn() const { return groups_drawn_; }
  /// Whether the last draw showed a subset of the tokens.
  [[nodiscard]] bool drawsSubset() const {
    return points_drawn_ < pointCount() && points_drawn_ > 0;
  }
  /// The colour point `i` is drawn with.
  [[nodiscard]] QColor colourOf(int i) const;
  [[nodiscard]] bool colourScaleShown() const;
  [[nodiscard]] bool isRunning() const { return running_; }
  [[nodiscard]] double kl() const { return kl_; }
  [[nodiscard]] QString status() const;
  [[nodiscard]] QCustomPlot* plot() const { return plot_; }
  /// The point drawn nearest to `pixel` of the plot, within 8 px; -1 when none is.
  [[nodiscard]] int pointAt(const QPointF& pixel) const;
  /// What the tooltip of point `i` says: its modality, episode (or window), timestep and
  /// return-to-go.
  [[nodiscard]] QString describePoint(int i) const;

  /// "tsne".
  [[nodiscard]] QString figureName() const override { return QStringLiteral("tsne"); }
  [[nodiscard]] QString figureTitle() const override { return tr("Token t-SNE"); }
  [[nodiscard]] bool hasFigure() const override { return shown_ >= 0; }
  [[nodiscard]] QString figureModel() const override { return hasFigure() ? title_ : QString(); }
  [[nodiscard]] FigureText figureText() const override;
  /// The layout on screen, coloured as on screen, as base.*, and base.csv with every point's
  /// coordinates, modality, window, episode, timestep and return-to-go.
  std::vector<std::string> exportFigure(const std::string& base,
                                        const FigureStyle& style = {}) const override;

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
  /// The user chose another source or count under "Tokens from".
  void tokenSourceChanged(dstudio::viz::TsneView::Source source, int count);

 private:
  // The view's parts, set up in this order by the constructor: the token source's and the run's
  // parameters; the rows of controls and the replay over the caption and the plot; the plot's
  // axes, legend and colour scale; then the controls' signals, the replay's and the redraw's
  // timers.
  void setUpParameters();
  void layOut();
  void setUpPlot();
  void connectControls();
  void draw();
  void updateStatus();
  void exportWithDialog();
  void forgetLayouts();
  void stopPlayer();
  [[nodiscard]] double valueOf(int i) const;
  /// The lowest and highest value of the continuous colouring in force, and what it is called.
  [[nodiscard]] std::pair<double, double> valueRange() const;
  [[nodiscard]] QString valueLabel() const;
  [[nodiscard]] bool drawingLive() const;
  [[nodiscard]] const std::vector<std::uint16_t>& groupOfPoint() const;

  QString title_;
  std::vector<std::string> modality_;
  std::vector<std::string> modalities_;  // distinct, in order of first appearance
  std::vector<int> window_, episode_, timestep_;
  std::vector<double> rtg_;
  std::vector<double> goal_;  // distance to the goal; empty for a task without one
  // Per point, made once in setTokens: its modality, and its band of the colour map by timestep
  // and by return-to-go (between the lowest and highest value, which colourOf needs too).
  std::vector<std::uint16_t> modality_group_, timestep_band_, rtg_band_, goal_band_;
  double timestep_lo_ = 0, timestep_hi_ = 1, rtg_lo_ = 0, rtg_hi_ = 1, goal_lo_ = 0, goal_hi_ = 1;
  // The tokens drawn while live: the first kLivePoints of a fixed permutation, ascending.
  std::vector<int> live_subset_;
  std::vector<int> iterations_;
  std::vector<std::shared_ptr<const std::vector<double>>> layouts_;
  std::vector<int> arrival_;  // which layout of the run (0, 1, ...) each stored one is
  int arrived_ = 0;
  int stride_ = 1;            // stored are the arrivals divisible by it, and the newest
  int drawn_colouring_ = -1;  // what the plottable's groups and order were made for
  int drawn_order_ = -1;
  int points_drawn_ = 0;
  int groups_drawn_ = 0;
  int shown_ = -1;
  int total_iterations_ = 0;
  double kl_ = -1.0;
  double seconds_ = 0.0;
  bool running_ = false;
  bool finished_ = false;
  bool ready_ = false;
  QString stopped_;
  QComboBox* colour_by_;
  QComboBox* source_;
  QSpinBox* count_;
  int counts_[3] = {40, 25, 10};  // the count last chosen for each source
  QDoubleSpinBox* perplexity_;
  QSpinBox* iterations_box_;
  QPushButton* run_;
  QPushButton* play_;
  QPushButton* export_;
  QSlider* slider_;
  QLabel* iteration_;
  QLabel* caption_;
  QCustomPlot* plot_;
  PointCloudPlottable* cloud_;
  QCPColorScale* scale_;
  QCPLayoutGrid* legend_box_;
  QTimer* redraw_;
  QTimer* player_;
};

}  // namespace dstudio::viz
