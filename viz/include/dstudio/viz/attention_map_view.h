#pragma once
/// \file
/// The attention map view: a token-by-token map of one layer and head, the mean over heads, the
/// mean over layers or attention rollout, averaged over the windows it is given. Rows are
/// queries, labelled by type and step; the causal mask and padding are left blank; hovering a
/// cell shows its query, key and exact weight. It draws what core computed (windows.h) and
/// computes nothing but averages.

#include <QString>
#include <QWidget>
#include <vector>

#include "dstudio/analysis/attention_maps.h"
#include "dstudio/models/windows.h"
#include "dstudio/viz/figures.h"

class QComboBox;
class QCustomPlot;
class QCPColorMap;
class QCPColorScale;
class QLabel;
class QPushButton;
class QTableWidget;
class QMouseEvent;

namespace dstudio::viz {

class AttentionMapView : public QWidget, public FigureSource {
  Q_OBJECT
 public:
  enum class Mode { Layer, MeanOverLayers, Rollout };

  explicit AttentionMapView(QWidget* parent = nullptr);

  /// Shows `windows` (all of one model and window size), averaged; `title` names the model.
  void setInspections(const QString& title, std::vector<models::WindowInspection> windows);
  /// Nothing to show; `message` says why.
  void clear(const QString& message);

  void setMode(Mode mode);
  void setLayer(int layer);
  /// -1: the mean over heads.
  void setHead(int head);

  [[nodiscard]] int layerCount() const;
  [[nodiscard]] int tokenCount() const { return matrix_.tokens; }
  /// The matrix on screen.
  [[nodiscard]] const analysis::TokenMatrix& matrix() const { return matrix_; }
  [[nodiscard]] const std::vector<std::string>& labels() const { return labels_; }
  [[nodiscard]] QCustomPlot* plot() const { return plot_; }
  /// Per layer and head: entropy, intra-step and inter-step entropy (entropy.h), averaged over
  /// the windows; one row each.
  [[nodiscard]] QTableWidget* entropyTable() const { return entropy_; }
  /// What hovering the cell (query, key) shows.
  [[nodiscard]] QString cellText(int query, int key) const;
  /// "attention".
  [[nodiscard]] QString figureName() const override { return QStringLiteral("attention"); }
  [[nodiscard]] bool hasFigure() const override { return matrix_.tokens > 0; }
  /// The model and what is shown (mode, layer, head); key and query.
  [[nodiscard]] FigureText figureText() const override;
  /// Writes the map on screen as base.pdf, base.svg and base.png (figures.h) in `style` and its
  /// numbers as base.csv; returns the paths written.
  std::vector<std::string> exportFigure(const std::string& base, const FigureStyle& style = {}) const override;

 private:
  void refresh();
  void fillEntropy();
  void showTip(QMouseEvent* event);
  void chooseExport();

  std::vector<models::WindowInspection> windows_;
  QString title_;
  analysis::TokenMatrix matrix_;
  std::vector<std::string> labels_;
  QComboBox* mode_;
  QComboBox* layer_;
  QComboBox* head_;
  QLabel* caption_;
  QPushButton* export_;
  QTableWidget* entropy_;
  QCustomPlot* plot_;
  QCPColorMap* map_;
  QCPColorScale* scale_;
};

}  // namespace dstudio::viz
