// The token t-SNE view. See tsne_view.h.

// Index of this file:
//   [SECTION] Colours and modalities
//   [SECTION] Construction
//   [SECTION] Tokens and parameters
//   [SECTION] Running and the layouts
//   [SECTION] Colouring points
//   [SECTION] Drawing
//   [SECTION] Points and figures

#include "dstudio/viz/tsne_view.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QTimer>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <random>
#include <tuple>
#include <unordered_map>

#include "colors.h"
#include "dstudio/common/csv.h"
#include "dstudio/viz/export_dialog.h"
#include "dstudio/viz/number_text.h"
#include "gradients.h"
#include "point_cloud_plottable.h"

namespace dstudio::viz {
namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] Colours and modalities

// Continuous colours are drawn in bands of the map: a few dozen stamps instead of one per point.
constexpr int kBands = 32;

// The alpha every point is blended with: dense clusters read darker than lone tokens.
constexpr int kAlpha = 170;

// The band of `value` between lo and hi, and the colour of a band.
std::uint16_t band_of(double value, double lo, double hi) {
  return static_cast<std::uint16_t>(
      std::clamp(static_cast<int>((value - lo) / (hi - lo) * kBands), 0, kBands - 1));
}

QColor band_colour(int band, double lo, double hi) {
  return QColor::fromRgb(viridis().color(lo + (band + 0.5) * (hi - lo) / kBands, QCPRange(lo, hi)));
}

// lo and hi of `values`, hi > lo so that bands have a width.
template <typename T>
std::pair<double, double> extent(const std::vector<T>& values) {
  double lo = 1e300, hi = -1e300;
  for (const T& v : values)
    lo = std::min(lo, static_cast<double>(v)), hi = std::max(hi, static_cast<double>(v));
  if (values.empty()) lo = 0.0, hi = 1.0;
  if (hi <= lo) hi = lo + 1.0;
  return {lo, hi};
}

// R, s and a keep their colour before merging and in the block; the tokens that enter the block
// are triangles, the embeddings before merging discs.
QColor modality_colour(const std::string& m, std::size_t index) {
  if (m == "merged") return colors::kOrange;
  if (!m.empty() && m[0] == 'R') return colors::kBlue;
  if (!m.empty() && m[0] == 's') return colors::kVermillion;
  if (!m.empty() && m[0] == 'a') return colors::kBluishGreen;
  return colors::categorical()[(index + 4) % colors::categorical().size()];
}

bool in_block(const std::string& m) {
  return m.size() > 2 && m.find(" in block") != std::string::npos;
}

QString modality_name(const std::string& m) {
  if (m == "R") return QObject::tr("R (return-to-go)");
  if (m == "s") return QObject::tr("s (state)");
  if (m == "a") return QObject::tr("a (action)");
  return QString::fromStdString(m);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] Construction

TsneView::TsneView(QWidget* parent)
    : QWidget(parent),
      colour_by_(new QComboBox),
      source_(new QComboBox),
      count_(new QSpinBox),
      perplexity_(new QDoubleSpinBox),
      iterations_box_(new QSpinBox),
      run_(new QPushButton(tr("Run t-SNE"))),
      play_(new QPushButton(tr("Replay"))),
      export_(new QPushButton(tr("Export figure…"))),
      slider_(new QSlider(Qt::Horizontal)),
      iteration_(new QLabel),
      caption_(new QLabel),
      plot_(new QCustomPlot),
      cloud_(new PointCloudPlottable(plot_->xAxis, plot_->yAxis)),
      scale_(new QCPColorScale(plot_)),
      redraw_(new QTimer(this)),
      player_(new QTimer(this)) {
  setUpParameters();
  layOut();

  setUpPlot();

  connectControls();
  clear(tr("Open a checkpoint to lay its tokens out: File ▸ Open Checkpoint."));
}

void TsneView::setUpParameters() {
  colour_by_->addItems({tr("modality"), tr("timestep"), tr("return-to-go")});
  // Wide enough for "distance to goal", which goal-reaching tokens add later.
  colour_by_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  source_->addItems({tr("windows"), tr("dataset episodes"), tr("rollouts")});
  source_->setToolTip(
      tr("windows: spread over the dataset; dataset episodes: every step of its longest episodes "
         "once; "
         "rollouts: every step of episodes the model plays at the task's first target"));
  count_->setRange(1, 100000);
  count_->setValue(counts_[0]);
  count_->setToolTip(
      tr("How many windows or episodes (a hopper episode is up to 1,000 steps; DHi has 4 tokens a "
         "step, DT 6)"));
  perplexity_->setRange(2.0, 200.0);
  perplexity_->setValue(30.0);
  perplexity_->setDecimals(0);
  perplexity_->setToolTip(
      tr("About the number of neighbours each token keeps close; must stay below a third of the "
         "tokens"));
  iterations_box_->setRange(250, 10000);
  iterations_box_->setSingleStep(250);
  iterations_box_->setValue(1000);
  iterations_box_->setToolTip(
      tr("The first 250 iterations use early exaggeration (van der Maaten and Hinton, 2008)"));
  slider_->setMinimumWidth(160);
  slider_->setToolTip(tr("Replay the layouts of the run, one every 10 iterations (a long run keeps "
                         "%1, spread over it)")
                          .arg(kMaxLayouts));
  iteration_->setMinimumWidth(iteration_->fontMetrics().horizontalAdvance(
      QStringLiteral("iteration 10000 / 10000 · KL 0.000 (000.0 s)")));
  play_->setToolTip(tr("Play the run again from its first layout"));
  export_->setToolTip(
      tr("PDF, SVG and PNG in a venue's size and fonts, with the coordinates as CSV"));
}

void TsneView::layOut() {
  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("Tokens from")));
  controls->addWidget(count_);
  controls->addWidget(source_);
  controls->addSpacing(12);
  controls->addWidget(new QLabel(tr("Perplexity")));
  controls->addWidget(perplexity_);
  controls->addWidget(new QLabel(tr("Iterations")));
  controls->addWidget(iterations_box_);
  controls->addWidget(run_);
  controls->addStretch(1);
  controls->addWidget(export_);
  // The replay gets a row of its own, so the tab fits a laptop screen.
  auto* replay = new QHBoxLayout;
  replay->addWidget(new QLabel(tr("Colour by")));
  replay->addWidget(colour_by_);
  replay->addSpacing(12);
  replay->addWidget(play_);
  replay->addWidget(slider_, 1);
  replay->addWidget(iteration_);
  caption_->setWordWrap(true);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(controls);
  layout->addLayout(replay);
  layout->addWidget(caption_);
  layout->addWidget(plot_, 1);
}

void TsneView::setUpPlot() {
  // The axes of an embedding carry no units.
  for (auto* axis : {plot_->xAxis, plot_->yAxis}) {
    axis->setTicks(false);
    axis->grid()->setVisible(false);
    axis->grid()->setZeroLinePen(Qt::NoPen);
  }
  plot_->xAxis->setLabel(tr("t-SNE 1"));
  plot_->yAxis->setLabel(tr("t-SNE 2"));
  // The legend stands to the right of the points, where it hides none of them, at the top.
  plot_->legend->setVisible(true);
  plot_->legend->setBorderPen(Qt::NoPen);
  plot_->axisRect()->insetLayout()->take(plot_->legend);
  legend_box_ = new QCPLayoutGrid;
  legend_box_->addElement(0, 0, plot_->legend);
  legend_box_->addElement(1, 0, new QCPLayoutElement(plot_));
  legend_box_->setRowStretchFactor(0, 0.001);
  plot_->plotLayout()->addElement(0, 1, legend_box_);
  plot_->plotLayout()->setColumnStretchFactor(1, 0.001);
  scale_->setType(QCPAxis::atRight);
  scale_->setBarWidth(10);
  // Scatter graphs take no colour map: the scale only says what the colours mean.
  scale_->setGradient(viridis());
  scale_->setVisible(false);
  auto* margins = new QCPMarginGroup(plot_);
  plot_->axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
  scale_->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
}

void TsneView::connectControls() {
  redraw_->setSingleShot(true);
  redraw_->setInterval(30);
  connect(redraw_, &QTimer::timeout, this, &TsneView::draw);
  player_->setInterval(40);
  connect(player_, &QTimer::timeout, this, [this] {
    if (shown_ + 1 >= snapshotCount()) {
      stopPlayer();  // and every point of the last layout
      return;
    }
    showSnapshot(shown_ + 1);
  });
  connect(play_, &QPushButton::clicked, this, [this] {
    if (player_->isActive()) {
      stopPlayer();
      return;
    }
    // Playing first, so even the first frame is the quick subset.
    play_->setText(tr("Pause"));
    player_->start();
    if (shown_ + 1 >= snapshotCount()) showSnapshot(0);
  });
  // Hovering a point says which token it is.
  connect(plot_, &QCustomPlot::mouseMove, this, [this](QMouseEvent* event) {
    const int i = pointAt(event->position());
    if (i < 0)
      QToolTip::hideText();
    else
      QToolTip::showText(event->globalPosition().toPoint(), describePoint(i), plot_);
  });
  connect(slider_, &QSlider::valueChanged, this, [this](int index) {
    if (index != shown_) showSnapshot(index);
  });
  connect(source_, &QComboBox::currentIndexChanged, this, [this](int index) {
    {
      const QSignalBlocker block(count_);
      count_->setValue(counts_[std::clamp(index, 0, 2)]);
    }
    emit tokenSourceChanged(tokenSource(), tokenCount());
  });
  connect(count_, &QSpinBox::valueChanged, this, [this](int count) {
    counts_[std::clamp(source_->currentIndex(), 0, 2)] = count;
    emit tokenSourceChanged(tokenSource(), count);
  });
  connect(colour_by_, &QComboBox::currentIndexChanged, this, [this] { draw(); });
  connect(run_, &QPushButton::clicked, this, [this] {
    if (running_)
      emit cancelRequested();
    else
      emit runRequested(perplexity(), iterations());
  });
  connect(export_, &QPushButton::clicked, this, &TsneView::exportWithDialog);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Tokens and parameters

void TsneView::setTokens(const QString& title, models::TokenCloud tokens) {
  player_->stop();
  title_ = title;
  modality_ = std::move(tokens.modality);
  window_ = std::move(tokens.window);
  episode_ = std::move(tokens.episode);
  if (episode_.size() != window_.size()) episode_.assign(window_.size(), -1);  // not known
  timestep_ = std::move(tokens.timestep);
  rtg_ = std::move(tokens.return_to_go);
  goal_ = std::move(tokens.goal_distance);
  if (goal_.size() != rtg_.size()) goal_.clear();
  // "distance to goal" is offered while the tokens have it.
  if (!goal_.empty() && colour_by_->count() < 4) colour_by_->addItem(tr("distance to goal"));
  if (goal_.empty() && colour_by_->count() > 3) {
    if (colourBy() == ColourBy::GoalDistance) setColourBy(ColourBy::Modality);
    colour_by_->removeItem(3);
  }
  modalities_.clear();
  modality_group_.clear();
  modality_group_.reserve(modality_.size());
  std::unordered_map<std::string, std::uint16_t> group_of;
  for (const auto& m : modality_) {
    auto [at, added] = group_of.try_emplace(
        m, static_cast<std::uint16_t>(std::min<std::size_t>(modalities_.size(), 0xffff)));
    if (added) modalities_.push_back(m);
    modality_group_.push_back(at->second);
  }
  // What continuous colours need, once instead of per draw and per colourOf.
  std::tie(timestep_lo_, timestep_hi_) = extent(timestep_);
  std::tie(rtg_lo_, rtg_hi_) = extent(rtg_);
  timestep_band_.resize(timestep_.size());
  for (std::size_t i = 0; i < timestep_.size(); ++i)
    timestep_band_[i] = band_of(timestep_[i], timestep_lo_, timestep_hi_);
  rtg_band_.resize(rtg_.size());
  for (std::size_t i = 0; i < rtg_.size(); ++i) rtg_band_[i] = band_of(rtg_[i], rtg_lo_, rtg_hi_);
  std::tie(goal_lo_, goal_hi_) = extent(goal_);
  goal_band_.resize(goal_.size());
  for (std::size_t i = 0; i < goal_.size(); ++i)
    goal_band_[i] = band_of(goal_[i], goal_lo_, goal_hi_);
  // A fixed seed: the same tokens in every frame of a run, and in every run of these tokens.
  live_subset_.clear();
  if (pointCount() > kLivePoints) {
    std::vector<int> permutation(modality_.size());
    std::iota(permutation.begin(), permutation.end(), 0);
    std::mt19937 rng(20080101u);
    for (std::size_t i = 0; i < static_cast<std::size_t>(kLivePoints);
         ++i)  // the first kLivePoints of a Fisher-Yates shuffle
      std::swap(permutation[i], permutation[i + rng() % (permutation.size() - i)]);
    live_subset_.assign(permutation.begin(), permutation.begin() + kLivePoints);
    std::sort(live_subset_.begin(), live_subset_.end());
  }
  forgetLayouts();
  kl_ = -1.0;
  finished_ = false;
  stopped_.clear();
  int windows = 0;
  for (int w : window_) windows = std::max(windows, w + 1);
  std::vector<int> episodes(episode_.begin(), episode_.end());
  std::sort(episodes.begin(), episodes.end());
  episodes.erase(std::unique(episodes.begin(), episodes.end()), episodes.end());
  const bool known = !episodes.empty() && episodes.front() >= 0;
  QStringList names;
  for (const auto& m : modalities_) names << QString::fromStdString(m);
  caption_->setText(
      tr("%1 — %L2 tokens from %3 (%4). Nearby points are tokens the model embeds alike; the axes "
         "have no units.")
          .arg(title_)
          .arg(pointCount())
          .arg(known ? tr("%1 (%2)").arg(episodes.size() == 1
                                             ? tr("one episode")
                                             : count_text(static_cast<qint64>(episodes.size()),
                                                          tr("episode"), tr("episodes")),
                                         count_text(windows, tr("window"), tr("windows")))
                     : count_text(windows, tr("window"), tr("windows")))
          .arg(names.join(QStringLiteral(", "))));
  draw();
}

void TsneView::setReady(bool ready, const QString& message) {
  ready_ = ready;
  run_->setEnabled(ready || running_);
  perplexity_->setEnabled(ready && !running_);
  iterations_box_->setEnabled(ready && !running_);
  source_->setEnabled(ready && !running_);
  count_->setEnabled(ready && !running_);
  if (!message.isEmpty()) caption_->setText(message);
}

void TsneView::clear(const QString& message) {
  player_->stop();
  title_.clear();
  modality_.clear();
  modalities_.clear();
  modality_group_.clear();
  timestep_band_.clear();
  rtg_band_.clear();
  goal_band_.clear();
  live_subset_.clear();
  window_.clear();
  episode_.clear();
  timestep_.clear();
  rtg_.clear();
  goal_.clear();
  forgetLayouts();
  kl_ = -1.0;
  finished_ = false;
  caption_->setText(message);
  setReady(false);
  draw();
}

void TsneView::setColourBy(ColourBy by) {
  // Distance to goal is on offer only for tokens that have it.
  if (static_cast<int>(by) < colour_by_->count()) colour_by_->setCurrentIndex(static_cast<int>(by));
}
TsneView::ColourBy TsneView::colourBy() const {
  return static_cast<ColourBy>(colour_by_->currentIndex());
}
void TsneView::setParameters(double perplexity, int iterations) {
  perplexity_->setValue(perplexity);
  iterations_box_->setValue(iterations);
}

double TsneView::perplexity() const {
  return perplexity_->value();
}
int TsneView::iterations() const {
  return iterations_box_->value();
}

void TsneView::setTokenSource(Source source, int count) {
  const QSignalBlocker block_source(source_), block_count(count_);
  const int index = std::clamp(static_cast<int>(source), 0, 2);
  source_->setCurrentIndex(index);
  count_->setValue(count);
  counts_[index] = count_->value();
}

TsneView::Source TsneView::tokenSource() const {
  return static_cast<Source>(source_->currentIndex());
}
int TsneView::tokenCount() const {
  return count_->value();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Running and the layouts

void TsneView::setRunning(bool running) {
  running_ = running;
  if (running) {
    // A new run: the layouts of the last one no longer apply.
    total_iterations_ = iterations();
    finished_ = false;
    stopped_.clear();
    player_->stop();
    play_->setText(tr("Replay"));
    forgetLayouts();
    kl_ = -1.0;
    draw();
  }
  run_->setText(running ? tr("Cancel") : tr("Run t-SNE"));
  run_->setEnabled(running || ready_);
  perplexity_->setEnabled(!running && ready_);
  iterations_box_->setEnabled(!running && ready_);
  source_->setEnabled(!running && ready_);
  count_->setEnabled(!running && ready_);
  slider_->setEnabled(!running && snapshotCount() > 1);
  play_->setEnabled(!running && snapshotCount() > 1);
  updateStatus();
}

void TsneView::forgetLayouts() {
  iterations_.clear();
  layouts_.clear();
  arrival_.clear();
  arrived_ = 0;
  stride_ = 1;
  shown_ = -1;
  // The plottable's groups and order belong to the tokens: made again at the next draw.
  drawn_colouring_ = -1;
  drawn_order_ = -1;
}

void TsneView::stopPlayer() {
  player_->stop();
  play_->setText(tr("Replay"));
  draw();  // every point again
}

void TsneView::showLayout(int iteration, std::vector<double> xy) {
  if (xy.size() != modality_.size() * 2 || modality_.empty()) return;  // a layout of other tokens
  const int arrival = arrived_++;
  // The newest layout stays even off the stride, until a newer one takes its place.
  if (!arrival_.empty() && arrival_.back() % stride_ != 0) {
    iterations_.pop_back();
    layouts_.pop_back();
    arrival_.pop_back();
  }
  iterations_.push_back(iteration);
  layouts_.push_back(std::make_shared<const std::vector<double>>(std::move(xy)));
  arrival_.push_back(arrival);
  if (snapshotCount() > kMaxLayouts) {
    // Every other one goes (the first and the newest stay); the next ones come at the new stride.
    stride_ *= 2;
    std::size_t kept = 0;
    for (std::size_t k = 0; k < arrival_.size(); ++k) {
      if (arrival_[k] % stride_ != 0 && k + 1 != arrival_.size()) continue;
      iterations_[kept] = iterations_[k];
      layouts_[kept] = std::move(layouts_[k]);
      arrival_[kept] = arrival_[k];
      ++kept;
    }
    iterations_.resize(kept);
    layouts_.resize(kept);
    arrival_.resize(kept);
  }
  total_iterations_ = std::max(total_iterations_, iteration);
  shown_ = snapshotCount() - 1;
  {
    const QSignalBlocker block(slider_);
    slider_->setRange(0, snapshotCount() - 1);
    slider_->setValue(shown_);
  }
  // Layouts may come faster than the screen redraws: draw the newest one at most every 30 ms.
  if (!redraw_->isActive()) redraw_->start();
  updateStatus();
}

void TsneView::finish(double kl, double seconds) {
  kl_ = kl;
  seconds_ = seconds;
  finished_ = true;
  setRunning(false);
  draw();
}

void TsneView::stop(const QString& why) {
  stopped_ = why;
  setRunning(false);
  draw();
}

void TsneView::showSnapshot(int index) {
  if (snapshotCount() == 0) return;
  shown_ = std::clamp(index, 0, snapshotCount() - 1);
  {
    const QSignalBlocker block(slider_);
    slider_->setValue(shown_);
  }
  draw();
}

QString TsneView::status() const {
  return iteration_->text();
}

void TsneView::updateStatus() {
  if (shown_ < 0) {
    iteration_->setText(running_ ? tr("gathering tokens and neighbours…") : stopped_);
    return;
  }
  QString text = tr("iteration %1 / %2")
                     .arg(iterations_[static_cast<std::size_t>(shown_)])
                     .arg(total_iterations_);
  if (finished_ && kl_ >= 0)
    text += tr(" · KL %1 (%2 s)").arg(kl_, 0, 'f', 3).arg(seconds_, 0, 'f', 1);
  else if (running_)
    text += tr(" · KL at the end");
  else if (!stopped_.isEmpty())
    text += tr(" · %1").arg(stopped_);
  if (drawingLive()) {
    const QLocale locale;
    text += (running_ ? tr(" · drawing %1 of %2 tokens while it runs")
                      : tr(" · drawing %1 of %2 tokens while it plays"))
                .arg(locale.toString(kLivePoints), locale.toString(pointCount()));
  }
  iteration_->setText(text);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Colouring points

double TsneView::valueOf(int i) const {
  const auto at = static_cast<std::size_t>(i);
  switch (colourBy()) {
    case ColourBy::Timestep:
      return static_cast<double>(timestep_[at]);
    case ColourBy::GoalDistance:
      return goal_[at];
    default:
      return rtg_[at];
  }
}

std::pair<double, double> TsneView::valueRange() const {
  switch (colourBy()) {
    case ColourBy::Timestep:
      return {timestep_lo_, timestep_hi_};
    case ColourBy::GoalDistance:
      return {goal_lo_, goal_hi_};
    default:
      return {rtg_lo_, rtg_hi_};
  }
}

QString TsneView::valueLabel() const {
  switch (colourBy()) {
    case ColourBy::Modality:
      return tr("modality");
    case ColourBy::Timestep:
      return tr("timestep");
    case ColourBy::GoalDistance:
      return tr("distance to goal");
    case ColourBy::ReturnToGo:
      break;
  }
  return tr("return-to-go");
}

bool TsneView::drawingLive() const {
  return (running_ || player_->isActive()) && pointCount() > kLivePoints;
}

const std::vector<std::uint16_t>& TsneView::groupOfPoint() const {
  switch (colourBy()) {
    case ColourBy::Timestep:
      return timestep_band_;
    case ColourBy::ReturnToGo:
      return rtg_band_;
    case ColourBy::GoalDistance:
      return goal_band_;
    case ColourBy::Modality:
      break;
  }
  return modality_group_;
}

QColor TsneView::colourOf(int i) const {
  if (i < 0 || i >= pointCount()) return {};
  const auto at = static_cast<std::size_t>(i);
  switch (colourBy()) {
    case ColourBy::Timestep:
      return band_colour(timestep_band_[at], timestep_lo_, timestep_hi_);
    case ColourBy::ReturnToGo:
      return band_colour(rtg_band_[at], rtg_lo_, rtg_hi_);
    case ColourBy::GoalDistance:
      return band_colour(goal_band_[at], goal_lo_, goal_hi_);
    case ColourBy::Modality:
      break;
  }
  const auto k = modality_group_[at];
  return modality_colour(modalities_[k], k);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Drawing

void TsneView::draw() {
  plot_->clearGraphs();  // the legend's entries; the points are the plottable's
  const bool continuous = colourBy() != ColourBy::Modality;
  // Right of the points: the colour scale while colours are continuous, else the legend.
  QCPLayoutElement* side = continuous ? static_cast<QCPLayoutElement*>(scale_) : legend_box_;
  if (plot_->plotLayout()->element(0, 1) != side) {
    QCPLayoutElement* other = continuous ? static_cast<QCPLayoutElement*>(legend_box_) : scale_;
    plot_->plotLayout()->take(other);
    other->setVisible(false);
    plot_->plotLayout()->addElement(0, 1, side);
    plot_->plotLayout()->setColumnStretchFactor(1, 0.001);
    side->setVisible(true);
  }
  plot_->legend->setVisible(!continuous && shown_ >= 0);
  points_drawn_ = 0;
  groups_drawn_ = 0;
  if (shown_ < 0) {
    cloud_->setLayout(nullptr);
  } else {
    const int colouring = static_cast<int>(colourBy());
    const auto& group = groupOfPoint();
    if (colouring != drawn_colouring_) {
      std::vector<PointCloudPlottable::Style> styles;
      if (!continuous) {
        for (std::size_t k = 0; k < modalities_.size(); ++k) {
          QColor c = modality_colour(modalities_[k], k);
          c.setAlpha(kAlpha);
          const bool triangle = in_block(modalities_[k]);
          styles.push_back(
              {c,
               triangle ? PointCloudPlottable::Marker::Triangle : PointCloudPlottable::Marker::Disc,
               triangle ? 6.0 : 5.0});
        }
      } else {
        const auto [lo, hi] = valueRange();
        for (int b = 0; b < kBands; ++b) {
          QColor c = band_colour(b, lo, hi);
          c.setAlpha(kAlpha);
          styles.push_back({c, PointCloudPlottable::Marker::Disc, 5.0});
        }
      }
      cloud_->setGroups(group, std::move(styles));
      drawn_colouring_ = colouring;
      drawn_order_ = -1;
    }
    // Group by group, as the graphs were drawn: the first group underneath.
    const bool live = drawingLive();
    const int order_key = colouring * 2 + (live ? 1 : 0);
    if (order_key != drawn_order_) {
      const int n = live ? kLivePoints : pointCount();
      const auto point = [&](int k) {
        return live ? live_subset_[static_cast<std::size_t>(k)] : k;
      };
      std::vector<int> start(cloud_->styles().size() + 1, 0);
      for (int k = 0; k < n; ++k) ++start[group[static_cast<std::size_t>(point(k))] + 1u];
      std::partial_sum(start.begin(), start.end(), start.begin());
      std::vector<int> order(static_cast<std::size_t>(n));
      for (int k = 0; k < n; ++k) {
        const int i = point(k);
        order[static_cast<std::size_t>(start[group[static_cast<std::size_t>(i)]]++)] = i;
      }
      cloud_->setOrder(std::move(order));
      drawn_order_ = order_key;
    }
    cloud_->setLayout(layouts_[static_cast<std::size_t>(shown_)]);
    points_drawn_ = cloud_->orderSize();
    groups_drawn_ = cloud_->groupsInOrder();
    if (continuous) {
      const auto [lo, hi] = valueRange();
      scale_->setDataRange(QCPRange(lo, hi));
      scale_->axis()->setLabel(valueLabel());
    } else {
      // One legend entry per modality: point-less graphs with the points' marker.
      for (std::size_t k = 0; k < modalities_.size(); ++k) {
        auto* g = plot_->addGraph();
        g->setLineStyle(QCPGraph::lsNone);
        g->setScatterStyle(PointCloudPlottable::scatterStyle(cloud_->styles()[k]));
        g->setName(modality_name(modalities_[k]));
      }
    }
    // The layout grows fast during early exaggeration: the axes follow it.
    plot_->rescaleAxes();
    plot_->xAxis->scaleRange(1.06, plot_->xAxis->range().center());
    plot_->yAxis->scaleRange(1.06, plot_->yAxis->range().center());
  }
  export_->setEnabled(shown_ >= 0);
  updateStatus();
  plot_->replot();
}

bool TsneView::colourScaleShown() const {
  return plot_->plotLayout()->element(0, 1) == scale_ && scale_->visible();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Points and figures

FigureText TsneView::figureText() const {
  return {tr("%1: tokens by %2").arg(title_, valueLabel()), {}, {}};
}

int TsneView::pointAt(const QPointF& pixel) const {
  return shown_ < 0 ? -1 : cloud_->nearest(pixel, 8.0);
}

QString TsneView::describePoint(int i) const {
  if (i < 0 || i >= pointCount()) return {};
  const auto k = static_cast<std::size_t>(i);
  const int episode = k < episode_.size() ? episode_[k] : -1;
  const QString where = episode >= 0 ? tr("episode %1").arg(episode)
                                     : tr("window %1").arg(k < window_.size() ? window_[k] : -1);
  QString text = tr("%1 token, %2, timestep %3\nreturn-to-go %4")
                     .arg(QString::fromStdString(modality_[k]), where)
                     .arg(k < timestep_.size() ? timestep_[k] : -1)
                     .arg(k < rtg_.size() ? rtg_[k] : 0.0, 0, 'f', 1);
  if (k < goal_.size()) text += tr(", %1 from the goal").arg(goal_[k], 0, 'f', 2);
  return text;
}

std::vector<std::string> TsneView::exportFigure(const std::string& base,
                                                const FigureStyle& style) const {
  if (shown_ < 0) return {};
  const auto& xy = *layouts_[static_cast<std::size_t>(shown_)];
  const FigureStyle s = with_defaults(style, figureText());
  std::vector<std::string> written;
  if (colourBy() == ColourBy::Modality) {
    std::vector<ScatterGroup> groups;
    for (std::size_t k = 0; k < modalities_.size(); ++k)
      groups.push_back({modality_name(modalities_[k]),
                        {},
                        {},
                        modality_colour(modalities_[k], k),
                        in_block(modalities_[k]) ? Marker::Triangle : Marker::Disc});
    for (int i = 0; i < pointCount(); ++i) {
      const auto at = static_cast<std::size_t>(i);
      auto& g = groups[modality_group_[at]];
      g.x.push_back(xy[at * 2]);
      g.y.push_back(xy[at * 2 + 1]);
    }
    written = save_scatter(base, groups, s, s.x_title, s.y_title);
  } else {
    std::vector<double> x, y, value;
    for (int i = 0; i < pointCount(); ++i) {
      x.push_back(xy[static_cast<std::size_t>(i) * 2]);
      y.push_back(xy[static_cast<std::size_t>(i) * 2 + 1]);
      value.push_back(valueOf(i));
    }
    written = save_value_scatter(base, x, y, value, valueLabel(), s);
  }
  // The same columns as `dstudio analyze tsne`'s tsne.csv.
  std::vector<std::string> columns = {"x",       "y",        "modality",    "window",
                                      "episode", "timestep", "return_to_go"};
  if (!goal_.empty()) columns.push_back("goal_distance");
  CsvWriter csv(columns, 6);
  for (int i = 0; i < pointCount(); ++i) {
    const auto at = static_cast<std::size_t>(i);
    csv << xy[at * 2] << xy[at * 2 + 1] << modality_[at] << window_[at] << episode_[at]
        << timestep_[at] << rtg_[at];
    if (!goal_.empty()) csv << goal_[at];
    csv.end_row();
  }
  csv.write(base + ".csv");
  written.push_back(base + ".csv");
  return written;
}

void TsneView::exportWithDialog() {
  const auto written = ExportDialog::exportSource(this, *this);
  if (!written.empty())
    caption_->setText(
        tr("Wrote %1 files: %2").arg(written.size()).arg(QString::fromStdString(written.front())));
}

}  // namespace dstudio::viz
