// The attention map view. See attention_map_view.h.

// Index of this file:
//   [SECTION] Construction
//   [SECTION] The windows and the compared model
//   [SECTION] Controls and side by side
//   [SECTION] Clearing and choosing a map
//   [SECTION] Drawing the map
//   [SECTION] Figures
//   [SECTION] The entropy table
//   [SECTION] Resizing and tips

#include "dstudio/viz/attention_map_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QResizeEvent>
#include <QScrollBar>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QTimer>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>
#include <tuple>

#include "colors.h"
#include "dstudio/analysis/locality.h"
#include "dstudio/analysis/window_maps.h"
#include "dstudio/common/error.h"
#include "dstudio/viz/export_dialog.h"
#include "dstudio/viz/figures.h"
#include "dstudio/viz/number_text.h"
#include "gradients.h"

namespace dstudio::viz {

// ---------------------------------------------------------------------------------------------
// [SECTION] Construction

AttentionMapView::AttentionMapView(QWidget* parent)
    : QWidget(parent),
      mode_(new QComboBox),
      layer_(new QComboBox),
      head_(new QComboBox),
      caption_(new QLabel),
      export_(new QPushButton(tr("Export figure…"))),
      entropy_(new QTableWidget),
      locality_(new QCustomPlot),
      compare_(new QPushButton(tr("Compare with…"))),
      comparison_(new QComboBox),
      plot_(new QCustomPlot),
      map_(new QCPColorMap(plot_->xAxis, plot_->yAxis)),
      scale_(new QCPColorScale(plot_)) {
  setUpSelection();
  QHBoxLayout* below = buildComparisonRow();
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(controls_);
  layout->addLayout(below);
  split_ = new QSplitter(Qt::Horizontal);
  split_->addWidget(plot_);
  // The entropy table and the locality curve share the side: both summarise the map.
  side_ = new QTabWidget;
  side_->setDocumentMode(true);
  side_->addTab(entropy_, tr("Entropy"));
  side_->addTab(locality_, tr("Locality"));
  side_->setTabToolTip(
      1, tr("The share of each query's weight on keys 0, 1, 2, … steps before its own: "
            "Markov dynamics need only the current and the previous step"));
  split_->addWidget(side_);
  split_->setStretchFactor(0, 3);
  split_->setStretchFactor(1, 1);
  layout->addWidget(split_, 1);
  setUpEntropyTable();

  setUpMapPlot();

  setUpLocalityPlot();

  connectSelection();
  clear(tr("Open a checkpoint to see how its tokens mix: File ▸ Open Checkpoint."));
}

void AttentionMapView::setUpSelection() {
  // Short names in the list, so that the row fits half a window in large type; figures and
  // tooltips use the whole ones.
  mode_->addItems({tr("One layer"), tr("Layer mean"), tr("Rollout")});
  mode_->setItemData(0, tr("One layer's map, of one head or the mean over its heads"),
                     Qt::ToolTipRole);
  mode_->setItemData(1, tr("The mean over layers of each layer's mean over heads"),
                     Qt::ToolTipRole);
  mode_->setItemData(2, tr("Attention rollout: the layers' maps multiplied through"),
                     Qt::ToolTipRole);
  mode_->setToolTip(tr("What the map shows"));
  // Wide enough for "1: attention" and "Layer mean" before any item exists. Longer names
  // ("3: gaussian-attention") show in full in the popup.
  for (auto* box : {mode_, layer_, head_}) {
    box->setMinimumContentsLength(box == layer_ ? 12 : box == mode_ ? 10 : 5);
    box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  }
  controls_ = new QWidget;
  auto* controls = new QHBoxLayout(controls_);
  controls->setContentsMargins(0, 0, 0, 0);
  controls->addWidget(mode_);
  controls->addWidget(new QLabel(tr("Layer")));
  controls->addWidget(layer_);
  controls->addWidget(new QLabel(tr("Head")));
  controls->addWidget(head_);
  controls->addStretch(1);
}

QHBoxLayout* AttentionMapView::buildComparisonRow() {
  // The comparison and the export beside the caption: the selection row stays narrow enough for
  // the viewer's half of the window, in large type too.
  auto* below = new QHBoxLayout;
  below->addWidget(caption_, 1);
  below->addWidget(compare_, 0, Qt::AlignTop);
  below->addWidget(comparison_, 0, Qt::AlignTop);
  below->addWidget(export_, 0, Qt::AlignTop);
  compare_->setToolTip(
      tr("Inspect another checkpoint on the same windows, to show its map beside this model's or "
         "subtracted from it"));
  compare_->setEnabled(false);
  comparison_->addItems({tr("This model alone"), tr("Side by side"), tr("Difference")});
  comparison_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  comparison_->setToolTip(
      tr("Open a second checkpoint with Compare with… to show the two models side by side or their "
         "difference"));
  comparison_->setEnabled(false);
  connect(compare_, &QPushButton::clicked, this, &AttentionMapView::compareRequested);
  connect(comparison_, &QComboBox::currentIndexChanged, this, [this] {
    fillEntropy();  // "This model alone" lists this model's heads only
    refresh();
  });
  ExportDialog::attach(export_, this, *this, caption_);
  caption_->setWordWrap(true);
  return below;
}

void AttentionMapView::setUpEntropyTable() {
  entropy_->setColumnCount(6);
  entropy_->setHorizontalHeaderLabels(
      {tr("Model"), tr("Layer"), tr("Head"), tr("Entropy"), tr("Intra-step"), tr("Inter-step")});
  entropy_->setColumnHidden(ColumnModel, true);
  entropy_->verticalHeader()->hide();
  entropy_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  entropy_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  entropy_->setToolTip(tr(
      "Attention entropy (HiFormer eq. 3) over real queries and keys, averaged over the windows. "
      "Intra-step: within a step's R, s, a; inter-step: over steps. Lower is more focused."));
}

void AttentionMapView::setUpMapPlot() {
  plot_->plotLayout()->addElement(0, 1, scale_);
  scale_->setType(QCPAxis::atRight);
  scale_->axis()->setLabel(tr("weight"));
  map_->setColorScale(scale_);
  scale_->setGradient(viridis());
  map_->setInterpolate(false);
  plot_->yAxis->setRangeReversed(true);
  plot_->xAxis->setLabel(tr("key"));
  plot_->yAxis->setLabel(tr("query"));
  plot_->xAxis->grid()->setVisible(false);
  plot_->yAxis->grid()->setVisible(false);
  plot_->xAxis->setTickLabelRotation(90);
  plot_->axisRect()->setBackground(QBrush(QColor(238, 238, 238)));  // the causal mask and padding
}

void AttentionMapView::setUpLocalityPlot() {
  locality_->setMinimumSize(160, 140);
  locality_->xAxis->setLabel(tr("lag (steps)"));
  locality_->yAxis->setLabel(tr("share of weight"));
  for (int g = 0; g < 2; ++g) {
    auto* graph = locality_->addGraph();
    const QColor colour = g == 0 ? colors::kBlue : colors::kVermillion;
    graph->setPen(QPen(colour, 2, g == 0 ? Qt::SolidLine : Qt::DashLine));
    graph->setScatterStyle(QCPScatterStyle(
        g == 0 ? QCPScatterStyle::ssDisc : QCPScatterStyle::ssSquare, colour, colour, 5));
  }
  locality_->legend->setVisible(true);
  legend_above(locality_);
  locality_->legend->setWrap(1);  // one model a row: the side is narrow
  keep_text_fitted(locality_);
}

void AttentionMapView::connectSelection() {
  connect(mode_, &QComboBox::currentIndexChanged, this, [this] {
    layer_->setEnabled(mode_->currentIndex() == 0);
    head_->setEnabled(mode_->currentIndex() == 0);
    refresh();
  });
  connect(layer_, &QComboBox::currentIndexChanged, this, [this] {
    // The head list follows the layer's head count.
    const QSignalBlocker block(head_);
    const int previous = head_->currentIndex();
    head_->clear();
    head_->addItem(tr("mean"));
    head_->setItemData(0, tr("The mean over the layer's heads"), Qt::ToolTipRole);
    if (!windows_.empty() && layer_->currentIndex() >= 0)
      for (int h = 0;
           h < windows_.front().layers[static_cast<std::size_t>(layer_->currentIndex())].heads; ++h)
        head_->addItem(QString::number(h + 1));
    head_->setCurrentIndex(std::clamp(previous, 0, head_->count() - 1));
    refresh();
  });
  connect(head_, &QComboBox::currentIndexChanged, this, [this] { refresh(); });
  connect(plot_, &QCustomPlot::mouseMove, this, &AttentionMapView::showTip);
  // Token labels as many as fit the map's size, as it is resized or its type grows.
  connect(plot_, &QCustomPlot::afterLayout, this, [this] {
    bool changed = false;
    for (auto* rect : plot_->axisRects()) {
      const QVariant fitted = rect->property("dstudio_ticks_for");
      if (labels_.empty() ||
          (fitted.isValid() && fitted.toSize() == rect->size() && fitted.toSize().width() > 0 &&
           rect->property("dstudio_ticks_tokens").toInt() == static_cast<int>(labels_.size())))
        continue;
      set_token_ticks(rect, labels_);
      rect->setProperty("dstudio_ticks_for", rect->size());
      rect->setProperty("dstudio_ticks_tokens", static_cast<int>(labels_.size()));
      changed = true;
    }
    if (changed) plot_->replot(QCustomPlot::rpQueuedReplot);
  });
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The windows and the compared model

void AttentionMapView::setInspections(const QString& title,
                                      std::vector<models::WindowInspection> windows) {
  windows_ = std::move(windows);
  title_ = title;
  compare_->setEnabled(!windows_.empty());
  if (!other_.empty() && (other_.size() != windows_.size() || windows_.empty() ||
                          other_.front().token_types != windows_.front().token_types))
    forgetComparison();
  {
    const QSignalBlocker block(layer_);
    layer_->clear();
    if (!windows_.empty())
      for (std::size_t l = 0; l < windows_.front().layers.size(); ++l)
        layer_->addItem(QString("%1: %2").arg(l + 1).arg(
            QString::fromStdString(windows_.front().layers[l].mixer)));
    layer_->setCurrentIndex(-1);
  }
  layer_->setCurrentIndex(0);  // rebuilds the head list and redraws
  fillEntropy();
}

void AttentionMapView::setComparison(const QString& title,
                                     std::vector<models::WindowInspection> windows) {
  if (windows.size() != windows_.size() || windows.empty())
    throw Error("the compared model was inspected on " + std::to_string(windows.size()) +
                " windows, this one on " + std::to_string(windows_.size()));
  if (windows.front().token_types != windows_.front().token_types)
    throw Error("the two models make different tokens of a window (" +
                std::to_string(windows.front().token_types.size()) + " against " +
                std::to_string(windows_.front().token_types.size()) +
                "), so their maps cannot be subtracted");
  other_ = std::move(windows);
  other_title_ = title;
  comparison_->setEnabled(true);
  comparison_->setToolTip(tr("%1 beside this model on one colour scale, or this model minus it on "
                             "a diverging map centred at zero")
                              .arg(title));
  {
    const QSignalBlocker block(comparison_);
    if (comparison_->currentIndex() == static_cast<int>(Comparison::Alone))
      comparison_->setCurrentIndex(static_cast<int>(Comparison::Difference));
  }
  refresh();
  fillEntropy();
}

void AttentionMapView::clearComparison() {
  forgetComparison();
  refresh();
}

void AttentionMapView::forgetComparison() {
  other_.clear();
  other_title_.clear();
  other_matrix_ = {};
  {
    const QSignalBlocker block(comparison_);
    comparison_->setCurrentIndex(static_cast<int>(Comparison::Alone));
  }
  comparison_->setEnabled(false);
  comparison_->setToolTip(
      tr("Open a second checkpoint with Compare with… to show the two models side by side or their "
         "difference"));
  arrangeMaps(false);
  fillEntropy();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Controls and side by side

void AttentionMapView::setControlsShown(bool on) {
  controls_shown_ = on;
  for (QWidget* w : std::initializer_list<QWidget*>{controls_, export_, side_}) w->setVisible(on);
  compare_->setVisible(on && comparable_);
  comparison_->setVisible(on && comparable_);
}

void AttentionMapView::setComparable(bool on) {
  comparable_ = on;
  compare_->setVisible(on && controls_shown_);
  comparison_->setVisible(on && controls_shown_);
  if (!on && hasComparison()) clearComparison();
}

void AttentionMapView::setComparisonMode(Comparison mode) {
  comparison_->setCurrentIndex(static_cast<int>(hasComparison() ? mode : Comparison::Alone));
}

AttentionMapView::Comparison AttentionMapView::comparisonMode() const {
  return hasComparison() ? static_cast<Comparison>(std::max(0, comparison_->currentIndex()))
                         : Comparison::Alone;
}

int AttentionMapView::mapsShown() const {
  return matrix_.tokens == 0 ? 0 : (other_rect_ ? 2 : 1);
}

void AttentionMapView::arrangeMaps(bool side_by_side) {
  if (side_by_side == (other_rect_ != nullptr)) return;
  auto* grid = plot_->plotLayout();
  grid->take(scale_);
  grid->simplify();
  auto* top = plot_->axisRect()->axis(QCPAxis::atTop);
  if (side_by_side) {
    other_rect_ = new QCPAxisRect(plot_);
    grid->addElement(0, 1, other_rect_);
    other_map_ =
        new QCPColorMap(other_rect_->axis(QCPAxis::atBottom), other_rect_->axis(QCPAxis::atLeft));
    other_map_->setColorScale(scale_);
    other_map_->setInterpolate(false);
    other_rect_->setBackground(QBrush(QColor(238, 238, 238)));
    // The second map's text as large as the first's (presentation mode may have scaled it).
    for (auto type : {QCPAxis::atBottom, QCPAxis::atLeft, QCPAxis::atTop}) {
      other_rect_->axis(type)->setLabelFont(plot_->xAxis->labelFont());
      other_rect_->axis(type)->setTickLabelFont(plot_->xAxis->tickLabelFont());
    }
    other_rect_->axis(QCPAxis::atLeft)->setRangeReversed(true);
    other_rect_->axis(QCPAxis::atLeft)->setTickLabels(false);
    other_rect_->axis(QCPAxis::atBottom)->setLabel(tr("key"));
    other_rect_->axis(QCPAxis::atBottom)->setTickLabelRotation(90);
    // Both maps and the scale share their top and bottom, so rows line up across the two.
    auto* group = new QCPMarginGroup(plot_);
    for (QCPLayoutElement* e :
         std::initializer_list<QCPLayoutElement*>{plot_->axisRect(), other_rect_, scale_})
      e->setMarginGroup(QCP::msTop | QCP::msBottom, group);
    // The second map's left margin as wide as the first's (which holds the query labels), so
    // the two maps are equally wide.
    auto* left = new QCPMarginGroup(plot_);
    plot_->axisRect()->setMarginGroup(QCP::msLeft, left);
    other_rect_->setMarginGroup(QCP::msLeft, left);
    for (auto* rect : {plot_->axisRect(), other_rect_}) {
      rect->axis(QCPAxis::atBottom)->grid()->setVisible(false);
      rect->axis(QCPAxis::atLeft)->grid()->setVisible(false);
      auto* title = rect->axis(QCPAxis::atTop);
      title->setVisible(true);
      title->setTicks(false);
      title->setTickLabels(false);
      title->setBasePen(Qt::NoPen);
    }
  } else {
    plot_->removePlottable(other_map_);
    grid->remove(other_rect_);
    grid->simplify();
    other_rect_ = nullptr;
    other_map_ = nullptr;
    top->setVisible(false);
    plot_->axisRect()->setMarginGroup(QCP::msTop | QCP::msBottom | QCP::msLeft, nullptr);
    scale_->setMarginGroup(QCP::msTop | QCP::msBottom, nullptr);
  }
  grid->addElement(0, grid->columnCount(), scale_);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Clearing and choosing a map

void AttentionMapView::clear(const QString& message) {
  forgetComparison();
  compare_->setEnabled(false);
  windows_.clear();
  matrix_ = {};
  labels_.clear();
  layer_->clear();
  head_->clear();
  map_->data()->clear();
  export_->setEnabled(false);
  entropy_->setRowCount(0);
  drawLocality();  // no windows: no curves
  caption_->setText(message);
  showAxes(false);
  plot_->replot();
}

void AttentionMapView::showAxes(bool shown) {
  // Without a window the map has no tokens: no numbers on its axes (QCustomPlot's 0 to 5 would
  // pass for token positions), and no colour scale.
  for (auto* axis : {plot_->xAxis, plot_->yAxis}) {
    axis->setTickLabels(shown);
    axis->setTicks(shown);
  }
  plot_->xAxis->setLabel(shown ? tr("key") : QString());
  plot_->yAxis->setLabel(shown ? tr("query") : QString());
  scale_->setVisible(shown);
}

void AttentionMapView::setMode(Mode mode) {
  mode_->setCurrentIndex(static_cast<int>(mode));
}
void AttentionMapView::setLayer(int layer) {
  layer_->setCurrentIndex(layer);
}
void AttentionMapView::setHead(int head) {
  head_->setCurrentIndex(head + 1);
}
AttentionMapView::Mode AttentionMapView::mode() const {
  return static_cast<Mode>(std::clamp(mode_->currentIndex(), 0, 2));
}
int AttentionMapView::layer() const {
  return std::max(0, layer_->currentIndex());
}
int AttentionMapView::head() const {
  return std::max(-1, head_->currentIndex() - 1);
}
int AttentionMapView::layerCount() const {
  return windows_.empty() ? 0 : static_cast<int>(windows_.front().layers.size());
}

QString AttentionMapView::cellText(int query, int key) const {
  if (query < 0 || key < 0 || query >= matrix_.tokens || key >= matrix_.tokens) return {};
  const auto& q = labels_[static_cast<std::size_t>(query)];
  const auto& k = labels_[static_cast<std::size_t>(key)];
  if (key > query)
    return tr("query %1, key %2: masked (a query sees only earlier tokens)")
        .arg(QString::fromStdString(q), QString::fromStdString(k));
  const bool both = other_matrix_.tokens == a_matrix_.tokens;
  if (showingSideBySide() && both)
    return tr("query %1, key %2: %3 %4, %5 %6")
        .arg(QString::fromStdString(q), QString::fromStdString(k), title_)
        .arg(a_matrix_.at(query, key), 0, 'g', 4)
        .arg(other_title_)
        .arg(other_matrix_.at(query, key), 0, 'g', 4);
  if (showingDifference() && both)
    return tr("query %1, key %2: %3 − %4 = %5")
        .arg(QString::fromStdString(q), QString::fromStdString(k))
        .arg(a_matrix_.at(query, key), 0, 'g', 4)
        .arg(other_matrix_.at(query, key), 0, 'g', 4)
        .arg(matrix_.at(query, key), 0, 'g', 4);
  return tr("query %1, key %2: %3")
      .arg(QString::fromStdString(q), QString::fromStdString(k))
      .arg(matrix_.at(query, key), 0, 'g', 4);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Drawing the map

void AttentionMapView::refresh() {
  if (windows_.empty()) return;
  showAxes(true);
  const int layer = std::max(0, layer_->currentIndex());
  QString problem;
  a_matrix_ = selection(windows_, nullptr);
  other_matrix_ = hasComparison() ? selection(other_, &problem) : analysis::TokenMatrix{};
  const bool both = other_matrix_.tokens == a_matrix_.tokens;
  const bool diff = showingDifference() && both;
  const bool pair = showingSideBySide() && both;
  matrix_ = diff ? analysis::difference(a_matrix_, other_matrix_) : a_matrix_;
  arrangeMaps(pair);

  // Several windows: labels relative to the window's last step ("s-3"); one: the episode's steps.
  const auto& first = windows_.front();
  const int T = matrix_.tokens;
  labels_ = analysis::window_labels(windows_);
  std::vector<double> seen;  // the magnitudes drawn, on either map
  const auto draw = [&](QCPColorMap* map, const analysis::TokenMatrix& m) {
    map->data()->setSize(T, T);
    map->data()->setRange(QCPRange(0, T - 1), QCPRange(0, T - 1));
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j) {
        const bool blank = j > i || labels_[static_cast<std::size_t>(i)] == "pad" ||
                           labels_[static_cast<std::size_t>(j)] == "pad";
        map->data()->setCell(j, i, blank ? std::nan("") : m.at(i, j));
        if (!blank && std::isfinite(m.at(i, j))) seen.push_back(std::abs(m.at(i, j)));
      }
  };
  draw(map_, matrix_);
  if (pair) draw(other_map_, other_matrix_);
  // A few large weights (the first queries have one key) would flatten the rest: the colours end
  // at the 99th percentile; hovering still shows every exact value. Side by side, both maps share
  // one scale, so equal colours are equal weights.
  double hi = 0.0;
  for (double v : seen) hi = std::max(hi, v);
  if (seen.size() > 20) {
    std::sort(seen.begin(), seen.end());
    hi = std::min(hi, seen[seen.size() * 99 / 100]);
  }
  // A difference is centred at zero on a diverging map; weights run from zero on viridis.
  scale_->setGradient(diff ? diverging() : viridis());
  scale_->setDataRange(diff ? QCPRange(-std::max(hi, 1e-9), std::max(hi, 1e-9))
                            : QCPRange(0.0, std::max(hi, 1e-9)));
  const QString what = diff ? tr("weight difference") : tr("weight");
  scale_->axis()->setLabel(seen.size() > 20 ? tr("%1 (colours clipped at p99)").arg(what) : what);
  std::vector<QCPAxisRect*> rects = {plot_->axisRect()};
  if (pair) rects.push_back(other_rect_);
  for (auto* rect : rects) {
    set_token_ticks(rect, labels_);  // for the size it has now; again when it is laid out anew
    rect->setProperty("dstudio_ticks_for", QVariant());
    rect->axis(QCPAxis::atBottom)->setRange(-0.5, T - 0.5);
    rect->axis(QCPAxis::atLeft)->setRange(-0.5, T - 0.5);
  }
  if (pair) {
    plot_->axisRect()->axis(QCPAxis::atTop)->setLabel(title_);
    other_rect_->axis(QCPAxis::atTop)->setLabel(other_title_);
  }
  const auto& mixer = first.layers[static_cast<std::size_t>(layer)].mixer;
  const QString who = diff   ? tr("%1 minus %2").arg(title_, other_title_)
                      : pair ? tr("%1 beside %2").arg(title_, other_title_)
                             : title_;
  QString caption =
      tr("%1 — %2. %3")
          .arg(who)
          .arg(count_text(static_cast<qint64>(windows_.size()), tr("window"), tr("windows")))
          .arg(QString::fromStdString(
              mode_->currentIndex() == 0
                  ? analysis::mixing_derivation(mixer)
                  : std::string("Rows are queries; blank cells are masked.")));
  if (!problem.isEmpty()) caption += tr(" (The compared model: %1.)").arg(problem);
  caption_->setText(caption);
  export_->setEnabled(true);
  drawLocality();
  // The first replot lays the maps out and fits their token labels to it; the second draws them.
  plot_->replot();
  plot_->replot();
}

analysis::MapSelection AttentionMapView::mapSelection() const {
  analysis::MapSelection selection;
  switch (static_cast<Mode>(mode_->currentIndex())) {
    case Mode::Layer:
      selection.kind = analysis::MapKind::Layer;
      break;
    case Mode::MeanOverLayers:
      selection.kind = analysis::MapKind::MeanOverLayers;
      break;
    case Mode::Rollout:
      selection.kind = analysis::MapKind::Rollout;
      break;
  }
  selection.layer = std::max(0, layer_->currentIndex()) + 1;
  selection.head = std::max(0, head_->currentIndex());  // item 0 is the mean over heads
  return selection;
}

analysis::TokenMatrix AttentionMapView::selection(
    const std::vector<models::WindowInspection>& windows, QString* problem) const {
  try {
    std::string note;
    auto m = analysis::select_map(windows, mapSelection(), &note);
    if (problem) *problem = QString::fromStdString(note);
    return m;
  } catch (const std::exception& e) {  // e.g. a compared model with fewer layers
    if (problem) *problem = QString::fromStdString(e.what());
    return {};
  }
}

void AttentionMapView::drawLocality() {
  // The map on screen, as weight by lag; a compared model's curve beside it.
  const auto profile_of = [this](const std::vector<models::WindowInspection>& windows) {
    try {
      return analysis::selected_lag_profile(windows, mapSelection());
    } catch (const std::exception&) {  // a compared model without this layer
      return analysis::LagProfile{};
    }
  };
  lag_profile_ = profile_of(windows_);
  other_lag_profile_ =
      comparisonMode() != Comparison::Alone ? profile_of(other_) : analysis::LagProfile{};
  const std::pair<const analysis::LagProfile*, QString> curves[] = {
      {&lag_profile_, title_}, {&other_lag_profile_, other_title_}};
  const bool two = !other_lag_profile_.weight.empty();
  const auto names =
      two ? distinguishing_names(title_, other_title_) : std::make_pair(title_, QString());
  double top = 0.0;
  int lags = 1;
  for (int g = 0; g < 2; ++g) {
    const auto& p = *curves[g].first;
    QVector<double> x, y;
    for (std::size_t l = 0; l < p.weight.size(); ++l) {
      x << static_cast<double>(l);
      y << p.weight[l];
      top = std::max(top, p.weight[l]);
    }
    lags = std::max(lags, static_cast<int>(p.weight.size()));
    auto* graph = locality_->graph(g);
    graph->setData(x, y, true);
    graph->setName(
        tr("%1: mean lag %2")
            .arg(g == 0 ? names.first : names.second, QString::number(p.mean_lag(), 'f', 2)));
    if (p.weight.empty())
      graph->removeFromLegend();
    else
      graph->addToLegend();
  }
  locality_->xAxis->setRange(-0.5, lags - 0.5);
  locality_->yAxis->setRange(0.0, std::max(0.05, top * 1.1));
  locality_->replot(QCustomPlot::rpQueuedReplot);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Figures

FigureText AttentionMapView::figureText() const {
  // Side by side, each map is titled with its model: the figure's title says what is shown.
  QString title = showingDifference()   ? tr("%1 minus %2").arg(title_, other_title_)
                  : showingSideBySide() ? QString()
                                        : title_;
  if (!title.isEmpty()) title += '\n';
  const QString modes[] = {tr("One layer"), tr("Mean over layers"), tr("Attention rollout")};
  title += modes[std::clamp(mode_->currentIndex(), 0, 2)];
  if (mode_->currentIndex() == 0)
    title += tr(", layer %1, %2")
                 .arg(layer_->currentText(), head_->currentIndex() <= 0
                                                 ? tr("mean over heads")
                                                 : tr("head %1").arg(head_->currentText()));
  return {title, tr("key"), tr("query")};
}

std::vector<std::string> AttentionMapView::exportFigure(const std::string& base,
                                                        const FigureStyle& style) const {
  if (matrix_.tokens == 0) return {};
  if (mapsShown() == 2) {
    auto written = save_heatmap_pair(base, a_matrix_, other_matrix_, labels_, title_, other_title_,
                                     tr("weight"), with_defaults(style, figureText()));
    analysis::write_map_csv(base + ".csv", a_matrix_, labels_);
    written.push_back(base + ".csv");
    analysis::write_map_csv(base + "_compared.csv", other_matrix_, labels_);
    written.push_back(base + "_compared.csv");
    return written;
  }
  const bool diff = showingDifference();
  auto written =
      save_heatmap(base, matrix_, labels_, diff, diff ? tr("weight difference") : tr("weight"),
                   with_defaults(style, figureText()));
  analysis::write_map_csv(base + ".csv", matrix_, labels_);
  written.push_back(base + ".csv");
  return written;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The entropy table

void AttentionMapView::fillEntropy() {
  entropy_->setRowCount(0);
  // With a comparison, each head's row of this model is followed by the compared model's.
  struct Row {
    analysis::HeadEntropy head;
    int model;
  };
  std::vector<Row> rows;
  for (const auto& h : analysis::head_entropies(windows_)) rows.push_back({h, 0});
  const bool both = comparisonMode() != Comparison::Alone;
  if (both)
    for (const auto& h : analysis::head_entropies(other_)) rows.push_back({h, 1});
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return std::tie(a.head.layer, a.head.head, a.model) <
           std::tie(b.head.layer, b.head.head, b.model);
  });
  entropy_->setColumnHidden(ColumnModel, !both);
  // The models by what tells them apart; their whole names in the tooltip.
  const auto [mine, theirs] = distinguishing_names(title_, other_title_);
  for (const auto& [h, model] : rows) {
    const int row = entropy_->rowCount();
    entropy_->insertRow(row);
    const QStringList cells = {model == 0 ? mine : theirs,  QString::number(h.layer),
                               QString::number(h.head),     QString::number(h.entropy, 'f', 3),
                               fixed_text(h.intra_step, 3), QString::number(h.inter_step, 'f', 3)};
    for (int c = 0; c < cells.size(); ++c) {
      auto* item = new QTableWidgetItem(cells[c]);
      item->setTextAlignment(c == ColumnModel ? Qt::AlignLeft | Qt::AlignVCenter
                                              : Qt::AlignRight | Qt::AlignVCenter);
      if (model == 1) item->setForeground(palette().color(QPalette::PlaceholderText));
      item->setToolTip(model == 0 ? title_ : other_title_);
      entropy_->setItem(row, c, item);
    }
  }
  fitEntropyWidth();
}

int AttentionMapView::entropyWidth() const {
  int width = 2 * entropy_->frameWidth() + entropy_->verticalScrollBar()->sizeHint().width();
  for (int c = 0; c < entropy_->columnCount(); ++c)
    if (!entropy_->isColumnHidden(c)) width += entropy_->columnWidth(c);
  return width;
}

void AttentionMapView::fitEntropyWidth() {
  if (!split_) return;
  entropy_->resizeColumnsToContents();
  arrangeSplit();
}

void AttentionMapView::arrangeSplit() {
  // Every column of the table in view without holding the window wider: beside the map when the
  // view is wide enough for both, under it otherwise (the viewer's half of the window).
  const int table = entropyWidth();
  const bool beside = width() >= 1.25 * height() && width() >= table + 3 * kMinimumMapWidth / 2;
  const auto orientation = beside ? Qt::Horizontal : Qt::Vertical;
  if (split_->orientation() != orientation) split_->setOrientation(orientation);
  if (beside)
    split_->setSizes({std::max(1, width() - table), table});
  else
    split_->setSizes({std::max(1, height() * 4 / 5), std::max(1, height() / 5)});
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Resizing and tips

void AttentionMapView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  if (split_) arrangeSplit();
}

void AttentionMapView::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  // Presentation mode's type, once the table has taken it too.
  if (event->type() == QEvent::FontChange)
    QTimer::singleShot(0, this, &AttentionMapView::fitEntropyWidth);
}

void AttentionMapView::showTip(QMouseEvent* event) {
  if (matrix_.tokens == 0) return;
  // Side by side, the map under the mouse gives the cell; the tip names both models' weights.
  auto* rect = other_rect_ && other_rect_->rect().contains(event->position().toPoint())
                   ? other_rect_
                   : plot_->axisRect();
  const int key = static_cast<int>(
      std::lround(rect->axis(QCPAxis::atBottom)->pixelToCoord(event->position().x())));
  const int query = static_cast<int>(
      std::lround(rect->axis(QCPAxis::atLeft)->pixelToCoord(event->position().y())));
  const QString text = cellText(query, key);
  if (text.isEmpty())
    QToolTip::hideText();
  else
    QToolTip::showText(event->globalPosition().toPoint(), text, plot_);
}

}  // namespace dstudio::viz
