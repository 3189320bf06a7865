// The attention map view. See attention_map_view.h.

#include "dstudio/common/error.h"
#include "dstudio/viz/attention_map_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHeaderView>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QHBoxLayout>
#include <QLabel>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>

#include "dstudio/analysis/window_maps.h"
#include "dstudio/viz/export_dialog.h"
#include "dstudio/viz/figures.h"
#include "gradients.h"

namespace dstudio::viz {

AttentionMapView::AttentionMapView(QWidget* parent)
    : QWidget(parent),
      mode_(new QComboBox),
      layer_(new QComboBox),
      head_(new QComboBox),
      caption_(new QLabel),
      export_(new QPushButton(tr("Export figure…"))),
      entropy_(new QTableWidget),
      compare_(new QPushButton(tr("Compare with…"))),
      difference_(new QCheckBox(tr("Difference"))),
      plot_(new QCustomPlot),
      map_(new QCPColorMap(plot_->xAxis, plot_->yAxis)),
      scale_(new QCPColorScale(plot_)) {
  mode_->addItems({tr("One layer"), tr("Mean over layers"), tr("Attention rollout")});
  // Wide enough for "2: attention" before any item exists. Longer names ("mean over heads",
  // "3: gaussian-attention") show in full in the popup, and the window fits a laptop screen.
  for (auto* box : {mode_, layer_, head_}) {
    box->setMinimumContentsLength(11);
    box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  }
  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("Show")));
  controls->addWidget(mode_);
  controls->addWidget(new QLabel(tr("Layer")));
  controls->addWidget(layer_);
  controls->addWidget(new QLabel(tr("Head")));
  controls->addWidget(head_);
  controls->addStretch(1);
  controls->addWidget(compare_);
  controls->addWidget(difference_);
  controls->addWidget(export_);
  compare_->setToolTip(tr("Inspect another checkpoint on the same windows, to show this model's map minus its map"));
  compare_->setEnabled(false);
  difference_->setToolTip(tr("This model minus the compared one, on a diverging map centred at zero"));
  difference_->setEnabled(false);
  connect(compare_, &QPushButton::clicked, this, &AttentionMapView::compareRequested);
  connect(difference_, &QCheckBox::toggled, this, [this] { refresh(); });
  ExportDialog::attach(export_, this, *this, caption_);
  caption_->setWordWrap(true);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(controls);
  layout->addWidget(caption_);
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(plot_);
  split->addWidget(entropy_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  layout->addWidget(split, 1);
  entropy_->setColumnCount(5);
  entropy_->setHorizontalHeaderLabels({tr("Layer"), tr("Head"), tr("Entropy"), tr("Intra-step"), tr("Inter-step")});
  entropy_->verticalHeader()->hide();
  entropy_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  entropy_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  entropy_->setToolTip(tr("Attention entropy (HiFormer eq. 3) over real queries and keys, averaged over the windows. "
                          "Intra-step: within a step's R, s, a; inter-step: over steps. Lower is more focused."));

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
    head_->addItem(tr("mean over heads"));
    if (!windows_.empty() && layer_->currentIndex() >= 0)
      for (int h = 0; h < windows_.front().layers[static_cast<std::size_t>(layer_->currentIndex())].heads; ++h)
        head_->addItem(QString::number(h + 1));
    head_->setCurrentIndex(std::clamp(previous, 0, head_->count() - 1));
    refresh();
  });
  connect(head_, &QComboBox::currentIndexChanged, this, [this] { refresh(); });
  connect(plot_, &QCustomPlot::mouseMove, this, &AttentionMapView::showTip);
  clear(tr("Open a checkpoint to see how its tokens mix: File ▸ Open Checkpoint."));
}

void AttentionMapView::setInspections(const QString& title, std::vector<models::WindowInspection> windows) {
  windows_ = std::move(windows);
  title_ = title;
  compare_->setEnabled(!windows_.empty());
  if (!other_.empty() && (other_.size() != windows_.size() || windows_.empty() ||
                          other_.front().token_types != windows_.front().token_types))
    clearComparison();
  {
    const QSignalBlocker block(layer_);
    layer_->clear();
    if (!windows_.empty())
      for (std::size_t l = 0; l < windows_.front().layers.size(); ++l)
        layer_->addItem(QString("%1: %2").arg(l + 1).arg(QString::fromStdString(windows_.front().layers[l].mixer)));
    layer_->setCurrentIndex(-1);
  }
  layer_->setCurrentIndex(0);  // rebuilds the head list and redraws
  fillEntropy();
}

void AttentionMapView::setComparison(const QString& title, std::vector<models::WindowInspection> windows) {
  if (windows.size() != windows_.size() || windows.empty())
    throw Error("the compared model was inspected on " + std::to_string(windows.size()) + " windows, this one on " +
                                std::to_string(windows_.size()));
  if (windows.front().token_types != windows_.front().token_types)
    throw Error("the two models make different tokens of a window (" +
                                std::to_string(windows.front().token_types.size()) + " against " +
                                std::to_string(windows_.front().token_types.size()) + "), so their maps cannot be subtracted");
  other_ = std::move(windows);
  other_title_ = title;
  difference_->setEnabled(true);
  difference_->setToolTip(tr("This model minus %1, on a diverging map centred at zero").arg(title));
  if (difference_->isChecked()) refresh();
  else difference_->setChecked(true);
}

void AttentionMapView::clearComparison() {
  other_.clear();
  other_title_.clear();
  other_matrix_ = {};
  const QSignalBlocker block(difference_);
  difference_->setChecked(false);
  difference_->setEnabled(false);
  difference_->setToolTip(tr("This model minus the compared one, on a diverging map centred at zero"));
}

void AttentionMapView::setComparable(bool on) {
  compare_->setVisible(on);
  difference_->setVisible(on);
  if (!on) clearComparison();
}

void AttentionMapView::setShowDifference(bool on) { difference_->setChecked(on && hasComparison()); }
bool AttentionMapView::showingDifference() const { return difference_->isChecked() && hasComparison(); }

void AttentionMapView::clear(const QString& message) {
  clearComparison();
  compare_->setEnabled(false);
  windows_.clear();
  matrix_ = {};
  labels_.clear();
  layer_->clear();
  head_->clear();
  map_->data()->clear();
  export_->setEnabled(false);
  entropy_->setRowCount(0);
  caption_->setText(message);
  plot_->replot();
}

void AttentionMapView::setMode(Mode mode) { mode_->setCurrentIndex(static_cast<int>(mode)); }
void AttentionMapView::setLayer(int layer) { layer_->setCurrentIndex(layer); }
void AttentionMapView::setHead(int head) { head_->setCurrentIndex(head + 1); }
int AttentionMapView::layerCount() const { return windows_.empty() ? 0 : static_cast<int>(windows_.front().layers.size()); }

QString AttentionMapView::cellText(int query, int key) const {
  if (query < 0 || key < 0 || query >= matrix_.tokens || key >= matrix_.tokens) return {};
  const auto& q = labels_[static_cast<std::size_t>(query)];
  const auto& k = labels_[static_cast<std::size_t>(key)];
  if (key > query) return tr("query %1, key %2: masked (a query sees only earlier tokens)").arg(QString::fromStdString(q), QString::fromStdString(k));
  if (showingDifference())
    return tr("query %1, key %2: %3 − %4 = %5")
        .arg(QString::fromStdString(q), QString::fromStdString(k))
        .arg(a_matrix_.at(query, key), 0, 'g', 4)
        .arg(other_matrix_.at(query, key), 0, 'g', 4)
        .arg(matrix_.at(query, key), 0, 'g', 4);
  return tr("query %1, key %2: %3").arg(QString::fromStdString(q), QString::fromStdString(k)).arg(matrix_.at(query, key), 0, 'g', 4);
}

void AttentionMapView::refresh() {
  if (windows_.empty()) return;
  const int layer = std::max(0, layer_->currentIndex());
  QString problem;
  a_matrix_ = selection(windows_, nullptr);
  other_matrix_ = hasComparison() ? selection(other_, &problem) : analysis::TokenMatrix{};
  const bool diff = showingDifference() && other_matrix_.tokens == a_matrix_.tokens;
  matrix_ = diff ? analysis::difference(a_matrix_, other_matrix_) : a_matrix_;

  // Several windows: labels relative to the window's last step ("s-3"); one: the episode's steps.
  const auto& first = windows_.front();
  const int T = matrix_.tokens;
  labels_ = analysis::window_labels(windows_);
  map_->data()->setSize(T, T);
  map_->data()->setRange(QCPRange(0, T - 1), QCPRange(0, T - 1));
  double hi = 0.0;
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < T; ++j) {
      const bool blank = j > i || labels_[static_cast<std::size_t>(i)] == "pad" || labels_[static_cast<std::size_t>(j)] == "pad";
      map_->data()->setCell(j, i, blank ? std::nan("") : matrix_.at(i, j));
      if (!blank) hi = std::max(hi, std::abs(matrix_.at(i, j)));
    }
  // A few large weights (the first queries have one key) would flatten the rest: the colours end
  // at the 99th percentile; hovering still shows every exact value.
  std::vector<double> seen;
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < T; ++j)
      if (!std::isnan(map_->data()->cell(j, i))) seen.push_back(std::abs(map_->data()->cell(j, i)));
  if (seen.size() > 20) {
    std::sort(seen.begin(), seen.end());
    hi = std::min(hi, seen[seen.size() * 99 / 100]);
  }
  // A difference is centred at zero on a diverging map; weights run from zero on viridis.
  scale_->setGradient(diff ? diverging() : viridis());
  scale_->setDataRange(diff ? QCPRange(-std::max(hi, 1e-9), std::max(hi, 1e-9)) : QCPRange(0.0, std::max(hi, 1e-9)));
  const QString what = diff ? tr("weight difference") : tr("weight");
  scale_->axis()->setLabel(seen.size() > 20 ? tr("%1 (colours clipped at p99)").arg(what) : what);
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  for (int k = 0; k < T; ++k)
    if (T <= 24 || labels_[static_cast<std::size_t>(k)][0] == 's' || labels_[static_cast<std::size_t>(k)][0] == 't')
      ticker->addTick(k, QString::fromStdString(labels_[static_cast<std::size_t>(k)]));
  plot_->xAxis->setTicker(ticker);
  plot_->yAxis->setTicker(ticker);
  plot_->xAxis->setRange(-0.5, T - 0.5);
  plot_->yAxis->setRange(-0.5, T - 0.5);
  const auto& mixer = first.layers[static_cast<std::size_t>(layer)].mixer;
  QString caption = tr("%1 — %2 windows. %3").arg(diff ? tr("%1 minus %2").arg(title_, other_title_) : title_).arg(windows_.size())
                        .arg(QString::fromStdString(mode_->currentIndex() == 0 ? analysis::mixing_derivation(mixer)
                                                                                : std::string("Rows are queries; blank cells are masked.")));
  if (!problem.isEmpty()) caption += tr(" (The compared model: %1.)").arg(problem);
  caption_->setText(caption);
  export_->setEnabled(true);
  plot_->replot();
}

analysis::TokenMatrix AttentionMapView::selection(const std::vector<models::WindowInspection>& windows, QString* problem) const {
  analysis::MapSelection selection;
  switch (static_cast<Mode>(mode_->currentIndex())) {
    case Mode::Layer: selection.kind = analysis::MapKind::Layer; break;
    case Mode::MeanOverLayers: selection.kind = analysis::MapKind::MeanOverLayers; break;
    case Mode::Rollout: selection.kind = analysis::MapKind::Rollout; break;
  }
  selection.layer = std::max(0, layer_->currentIndex()) + 1;
  selection.head = std::max(0, head_->currentIndex());  // item 0 is the mean over heads
  try {
    std::string note;
    auto m = analysis::select_map(windows, selection, &note);
    if (problem) *problem = QString::fromStdString(note);
    return m;
  } catch (const std::exception& e) {  // e.g. a compared model with fewer layers
    if (problem) *problem = QString::fromStdString(e.what());
    return {};
  }
}

FigureText AttentionMapView::figureText() const {
  QString title = showingDifference() ? tr("%1 minus %2").arg(title_, other_title_) : title_;
  title += '\n';
  title += mode_->currentText();
  if (mode_->currentIndex() == 0) title += tr(", layer %1, %2").arg(layer_->currentText(), head_->currentText());
  return {title, tr("key"), tr("query")};
}

std::vector<std::string> AttentionMapView::exportFigure(const std::string& base, const FigureStyle& style) const {
  if (matrix_.tokens == 0) return {};
  const bool diff = showingDifference();
  auto written = save_heatmap(base, matrix_, labels_, diff, diff ? tr("weight difference") : tr("weight"),
                              with_defaults(style, figureText()));
  if (analysis::write_map_csv(base + ".csv", matrix_, labels_)) written.push_back(base + ".csv");
  return written;
}

void AttentionMapView::fillEntropy() {
  entropy_->setRowCount(0);
  for (const auto& h : analysis::head_entropies(windows_)) {
    const int row = entropy_->rowCount();
    entropy_->insertRow(row);
    const QStringList cells = {QString::number(h.layer), QString::number(h.head), QString::number(h.entropy, 'f', 3),
                               std::isfinite(h.intra_step) ? QString::number(h.intra_step, 'f', 3) : QStringLiteral("—"),
                               QString::number(h.inter_step, 'f', 3)};
    for (int c = 0; c < cells.size(); ++c) {
      auto* item = new QTableWidgetItem(cells[c]);
      item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      entropy_->setItem(row, c, item);
    }
  }
}

void AttentionMapView::showTip(QMouseEvent* event) {
  if (matrix_.tokens == 0) return;
  const int key = static_cast<int>(std::lround(plot_->xAxis->pixelToCoord(event->position().x())));
  const int query = static_cast<int>(std::lround(plot_->yAxis->pixelToCoord(event->position().y())));
  const QString text = cellText(query, key);
  if (text.isEmpty()) QToolTip::hideText();
  else QToolTip::showText(event->globalPosition().toPoint(), text, plot_);
}

}  // namespace dstudio::viz
