#pragma once
/// \file
/// The attention map view: a token-by-token map of one layer and head, the mean over heads, the
/// mean over layers or attention rollout, averaged over the windows it is given. Rows are
/// queries, labelled by type and step; the causal mask and padding are left blank; hovering a
/// cell shows its query, key and exact weight. It draws what core computed (windows.h) and
/// computes nothing but averages. With a second checkpoint's inspections of the same windows it
/// shows the two maps side by side on one colour scale, or their difference on a diverging map
/// (GDT fig. 4), and the entropy table holds both models' heads. Beside the table, the map's
/// locality: its weight by lag in steps, for both models.

#include <QString>
#include <QWidget>
#include <vector>

#include "dstudio/analysis/attention_maps.h"
#include "dstudio/analysis/locality.h"
#include "dstudio/models/window.h"
#include "dstudio/viz/figures.h"

class QComboBox;
class QCustomPlot;
class QCPAxisRect;
class QCPColorMap;
class QCPColorScale;
class QHBoxLayout;
class QLabel;
class QPushButton;
class QSplitter;
class QTableWidget;
class QTabWidget;
class QMouseEvent;

namespace dstudio::viz {

class AttentionMapView : public QWidget, public FigureSource {
  Q_OBJECT
 public:
  enum class Mode { Layer, MeanOverLayers, Rollout };
  /// How a compared model is shown: not at all, its map beside this one's, or this minus it.
  enum class Comparison { Alone, SideBySide, Difference };

  explicit AttentionMapView(QWidget* parent = nullptr);

  /// Shows `windows` (all of one model and window size), averaged; `title` names the model.
  void setInspections(const QString& title, std::vector<models::WindowInspection> windows);
  /// Nothing to show; `message` says why.
  void clear(const QString& message);
  /// A second model's inspections of the same windows (same count, same tokens): the view can
  /// then show this model's map minus the other's, on a diverging colour map centred at zero.
  /// Throws dstudio::Error when the windows do not match.
  void setComparison(const QString& title, std::vector<models::WindowInspection> windows);
  void clearComparison();
  /// Shows or hides the Compare controls (a view of one live window has no use for them).
  void setComparable(bool on);
  /// Whether the selection (map, layer, head), the comparison, the export and the entropy and
  /// locality beside the map are shown (the default), or the map and its caption alone: the
  /// Viewer tab's map in presentation mode, where the scene needs the room.
  void setControlsShown(bool on);
  [[nodiscard]] bool controlsShown() const { return controls_shown_; }
  /// Without a comparison the view shows this model alone whatever is asked.
  void setComparisonMode(Comparison mode);
  [[nodiscard]] Comparison comparisonMode() const;
  [[nodiscard]] bool showingDifference() const {
    return comparisonMode() == Comparison::Difference;
  }
  [[nodiscard]] bool showingSideBySide() const {
    return comparisonMode() == Comparison::SideBySide;
  }
  /// The maps drawn: 1, or 2 side by side.
  [[nodiscard]] int mapsShown() const;
  /// The axis rect of the compared model's map when side by side, else null.
  [[nodiscard]] QCPAxisRect* comparisonRect() const { return other_rect_; }
  [[nodiscard]] bool hasComparison() const { return !other_.empty(); }

  void setMode(Mode mode);
  void setLayer(int layer);
  /// -1: the mean over heads.
  void setHead(int head);
  [[nodiscard]] Mode mode() const;
  /// The layer shown, from 0.
  [[nodiscard]] int layer() const;
  /// The head shown, from 0; -1: the mean over heads.
  [[nodiscard]] int head() const;

  [[nodiscard]] int layerCount() const;
  [[nodiscard]] int tokenCount() const { return matrix_.tokens; }
  /// The matrix on screen.
  [[nodiscard]] const analysis::TokenMatrix& matrix() const { return matrix_; }
  [[nodiscard]] const std::vector<std::string>& labels() const { return labels_; }
  [[nodiscard]] QCustomPlot* plot() const { return plot_; }
  /// The entropy table's columns. Model shows only with a comparison.
  enum EntropyColumn {
    ColumnModel,
    ColumnLayer,
    ColumnHead,
    ColumnEntropy,
    ColumnIntraStep,
    ColumnInterStep
  };
  /// Per layer and head: entropy, intra-step and inter-step entropy (entropy.h), averaged over
  /// the windows; one row each, and with a comparison the compared model's row after each.
  [[nodiscard]] QTableWidget* entropyTable() const { return entropy_; }
  /// Beside the entropy table: the map on screen as its weight by lag in steps (locality.h),
  /// graph 0 this model's, graph 1 the compared model's.
  [[nodiscard]] QCustomPlot* localityPlot() const { return locality_; }
  [[nodiscard]] const analysis::LagProfile& lagProfile() const { return lag_profile_; }
  [[nodiscard]] const analysis::LagProfile& comparisonLagProfile() const {
    return other_lag_profile_;
  }
  /// The tabs holding the entropy table and the locality plot.
  [[nodiscard]] QTabWidget* sideTabs() const { return side_; }
  /// What hovering the cell (query, key) shows: side by side, both models' weights.
  [[nodiscard]] QString cellText(int query, int key) const;
  /// The comparison model's matrix for the same selection (empty without a comparison).
  [[nodiscard]] const analysis::TokenMatrix& comparisonMatrix() const { return other_matrix_; }
  /// "attention".
  [[nodiscard]] QString figureName() const override { return QStringLiteral("attention"); }
  [[nodiscard]] QString figureTitle() const override { return tr("Attention maps"); }
  [[nodiscard]] bool hasFigure() const override { return matrix_.tokens > 0; }
  /// The model and what is shown (mode, layer, head); key and query.
  [[nodiscard]] FigureText figureText() const override;
  /// The model inspected (not the compared one, which the figure names itself).
  [[nodiscard]] QString figureModel() const override {
    return matrix_.tokens > 0 ? title_ : QString();
  }
  /// Writes the map on screen (side by side: both maps on one scale) as base.pdf, base.svg and
  /// base.png (figures.h) in `style` and its numbers as base.csv; returns the paths written.
  std::vector<std::string> exportFigure(const std::string& base,
                                        const FigureStyle& style = {}) const override;

 signals:
  /// The user asked to compare with another checkpoint (the window picks it and inspects it).
  void compareRequested();

 private:
  // The view's parts, set up in this order by the constructor around its layout: the map, layer
  // and head choices; the row of the caption, the comparison and the export; the entropy table;
  // the map's plot and scale; the locality plot; then the choices' signals and the token labels
  // fitted to the map's size.
  void setUpSelection();
  QHBoxLayout* buildComparisonRow();
  void setUpEntropyTable();
  void setUpMapPlot();
  void setUpLocalityPlot();
  void connectSelection();
  void refresh();
  void showAxes(bool shown);  // the map's axes and scale, off without a window
  void drawLocality();
  [[nodiscard]] analysis::MapSelection mapSelection() const;
  [[nodiscard]] analysis::TokenMatrix selection(
      const std::vector<models::WindowInspection>& windows, QString* problem) const;
  void fillEntropy();
  void fitEntropyWidth();
  void arrangeSplit();
  [[nodiscard]] int entropyWidth() const;
  static constexpr int kMinimumMapWidth = 240;
  QWidget* controls_ = nullptr;  // the map, layer and head choices
  bool controls_shown_ = true;
  bool comparable_ = true;
  // Drops the compared model without redrawing (the caller redraws).
  void forgetComparison();
  // Puts the compared model's map beside this one's (or takes it away), the scale on the right.
  void arrangeMaps(bool side_by_side);
  void showTip(QMouseEvent* event);

 protected:
  void changeEvent(QEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
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
  QCustomPlot* locality_;
  QTabWidget* side_ = nullptr;
  analysis::LagProfile lag_profile_, other_lag_profile_;
  QSplitter* split_ = nullptr;
  QPushButton* compare_;
  QComboBox* comparison_;
  std::vector<models::WindowInspection> other_;
  QString other_title_;
  analysis::TokenMatrix a_matrix_, other_matrix_;
  QCustomPlot* plot_;
  QCPColorMap* map_;
  QCPColorScale* scale_;
  QCPAxisRect* other_rect_ = nullptr;
  QCPColorMap* other_map_ = nullptr;
};

}  // namespace dstudio::viz
