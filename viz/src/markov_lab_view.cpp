// The Markov lab tab. See markov_lab_view.h.

#include "dstudio/viz/markov_lab_view.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QSlider>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <fstream>

#include "colors.h"
#include "dstudio/analysis/window_maps.h"
#include "dstudio/common/csv.h"
#include "gradients.h"

namespace dstudio::viz {
namespace {

constexpr int kSliderSteps = 998;  // p and q in [0.001, 0.999] by 0.001

// A probability as a slider (for a class to drag) beside an exact field.
QWidget* probability_control(QSlider*& slider, QDoubleSpinBox*& box, double value) {
  auto* row = new QWidget;
  auto* layout = new QHBoxLayout(row);
  layout->setContentsMargins(0, 0, 0, 0);
  slider = new QSlider(Qt::Horizontal);
  slider->setRange(1, kSliderSteps + 1);
  box = new QDoubleSpinBox;
  box->setRange(0.001, 0.999);
  box->setDecimals(3);
  box->setSingleStep(0.01);
  box->setValue(value);
  slider->setValue(static_cast<int>(std::lround(value * 1000)));
  QObject::connect(slider, &QSlider::valueChanged, box, [box](int v) {
    if (std::lround(box->value() * 1000) != v) box->setValue(v / 1000.0);
  });
  QObject::connect(box, &QDoubleSpinBox::valueChanged, slider, [slider](double v) {
    const int at = static_cast<int>(std::lround(v * 1000));
    if (slider->value() != at) slider->setValue(at);
  });
  layout->addWidget(slider, 1);
  layout->addWidget(box);
  return row;
}

QString nats(double v) {
  return QString::number(v, 'f', 4);
}

}  // namespace

MarkovLabView::MarkovLabView(QWidget* parent)
    : QWidget(parent),
      order_(new QSpinBox),
      states_(new QSpinBox),
      mixer_(new QComboBox),
      window_(new QSpinBox),
      steps_(new QSpinBox),
      train_(new QPushButton(tr("Train"))),
      floor_label_(new QLabel),
      summary_(new QLabel),
      loss_(new QCustomPlot),
      matrix_plot_(new QCustomPlot) {
  QScrollArea* scroll = buildControls();

  setUpLossPlot();

  setUpMatrixPlot();

  auto* plots = new QVBoxLayout;
  plots->addWidget(loss_, 3);
  plots->addWidget(matrix_plot_, 2);
  auto* layout = new QHBoxLayout(this);
  layout->addWidget(scroll);
  layout->addLayout(plots, 1);

  for (auto* spin : {order_, states_})
    connect(spin, &QSpinBox::valueChanged, this, [this] { updateFloor(); });
  for (auto* box : {p_, q_})
    connect(box, &QDoubleSpinBox::valueChanged, this, [this] { updateFloor(); });
  connect(train_, &QPushButton::clicked, this,
          [this] { emit running_ ? cancelRequested() : trainRequested(); });
  updateFloor();
}

QScrollArea* MarkovLabView::buildControls() {
  const models::MarkovLabOptions defaults;
  QGroupBox* chain_box = buildChainBox(defaults);

  QGroupBox* model_box = buildModelBox(defaults);

  auto* story = new QLabel(
      tr("The best any model can do on this chain is its entropy rate: the floor. The loss is the "
         "floor plus how far the model's predictions are from the chain's (a KL divergence). A "
         "mixer that sees the last m symbols can reach the floor; with a window k smaller than the "
         "order m it cannot. An average over more than m mixes in symbols it cannot tell apart."));
  story->setWordWrap(true);
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* controls = new QWidget;
  auto* controls_layout = new QVBoxLayout(controls);
  controls_layout->addWidget(chain_box);
  controls_layout->addWidget(model_box);
  controls_layout->addWidget(summary_);
  controls_layout->addWidget(story);
  controls_layout->addStretch(1);
  auto* scroll = new QScrollArea;
  scroll->setWidget(controls);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setMinimumWidth(320);
  scroll->setMaximumWidth(420);
  return scroll;
}

QGroupBox* MarkovLabView::buildChainBox(const models::MarkovLabOptions& defaults) {
  auto* chain_box = new QGroupBox(tr("Chain"));
  auto* chain_form = new QFormLayout(chain_box);
  chain_form->addRow(tr("p (0 → 1)"), probability_control(p_slider_, p_, defaults.chain.p));
  chain_form->addRow(tr("q (1 → 0)"), probability_control(q_slider_, q_, defaults.chain.q));
  order_->setRange(1, 3);
  order_->setToolTip(
      tr("The next symbol depends on this many past symbols (through how often each occurs)"));
  chain_form->addRow(tr("Order m"), order_);
  states_->setRange(2, 8);
  states_->setToolTip(tr("Symbols; above 2 the chain switches with p to any other symbol alike"));
  chain_form->addRow(tr("Symbols S"), states_);
  floor_label_->setWordWrap(true);
  chain_form->addRow(floor_label_);
  return chain_box;
}

QGroupBox* MarkovLabView::buildModelBox(const models::MarkovLabOptions& defaults) {
  auto* model_box = new QGroupBox(tr("Model"));
  auto* model_form = new QFormLayout(model_box);
  mixer_->addItem(tr("pooling (average)"), static_cast<int>(models::LabMixer::Pooling));
  mixer_->addItem(tr("attention"), static_cast<int>(models::LabMixer::Attention));
  mixer_->addItem(tr("convolution"), static_cast<int>(models::LabMixer::Convolution));
  model_form->addRow(tr("Mixer"), mixer_);
  window_->setRange(1, 16);
  window_->setValue(defaults.window);
  window_->setToolTip(tr("k: the positions the mixer sees, the current one included"));
  model_form->addRow(tr("Window k"), window_);
  steps_->setRange(50, 20000);
  steps_->setSingleStep(100);
  steps_->setValue(defaults.steps);
  model_form->addRow(tr("Steps"), steps_);
  model_form->addRow(train_);
  return model_box;
}

void MarkovLabView::setUpLossPlot() {
  // The loss against the floor.
  loss_->xAxis->setLabel(tr("step"));
  loss_->yAxis->setLabel(tr("loss (nats)"));
  loss_->setMinimumSize(300, 220);
  auto* current = loss_->addGraph();
  current->setPen(QPen(colors::kBlue, 2));
  current->setScatterStyle(
      QCPScatterStyle(QCPScatterStyle::ssDisc, colors::kBlue, colors::kBlue, 4));
  current->setName(tr("loss"));
  auto* batch = loss_->addGraph();
  QColor faint = colors::kSkyBlue;
  faint.setAlpha(120);
  batch->setPen(QPen(faint, 1));
  batch->setName(tr("batch"));
  auto* previous = loss_->addGraph();
  QColor grey = colors::kGrey;
  grey.setAlpha(150);
  previous->setPen(QPen(grey, 1.5, Qt::DashLine));
  previous->setName(tr("previous run"));
  previous->removeFromLegend();
  auto* floor = loss_->addGraph();
  floor->setPen(QPen(colors::kVermillion, 2, Qt::DashLine));
  floor->setName(tr("floor"));
  loss_->legend->setVisible(true);
  legend_above(loss_);
  keep_text_fitted(loss_);
}

void MarkovLabView::setUpMatrixPlot() {
  // The learned mixing matrix.
  matrix_plot_->setMinimumSize(260, 220);
  matrix_plot_->xAxis->setLabel(tr("key position"));
  matrix_plot_->yAxis->setLabel(tr("query position"));
  matrix_plot_->yAxis->setRangeReversed(true);
  matrix_ = new QCPColorMap(matrix_plot_->xAxis, matrix_plot_->yAxis);
  auto* scale = new QCPColorScale(matrix_plot_);
  matrix_plot_->plotLayout()->addElement(0, 1, scale);
  scale->setLabel(tr("weight"));
  scale->setGradient(viridis());
  matrix_->setColorScale(scale);
  matrix_->setInterpolate(false);
  auto* margins = new QCPMarginGroup(matrix_plot_);
  matrix_plot_->axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
  scale->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
  set_centred_note(matrix_plot_, tr("Train to see the mixing the model learns"));
  keep_text_fitted(matrix_plot_);
}

models::MarkovLabOptions MarkovLabView::options() const {
  models::MarkovLabOptions o;
  o.chain =
      analysis::MarkovChain::make(p_->value(), q_->value(), order_->value(), states_->value());
  o.mixer = static_cast<models::LabMixer>(mixer_->currentData().toInt());
  o.window = window_->value();
  o.steps = steps_->value();
  o.eval_every = std::max(1, o.steps / 60);  // about 60 points whatever the length
  return o;
}

void MarkovLabView::setOptions(const models::MarkovLabOptions& o) {
  p_->setValue(o.chain.p);
  q_->setValue(o.chain.q);
  order_->setValue(o.chain.order);
  states_->setValue(o.chain.states);
  mixer_->setCurrentIndex(mixer_->findData(static_cast<int>(o.mixer)));
  window_->setValue(o.window);
  steps_->setValue(o.steps);
  updateFloor();
}

void MarkovLabView::updateFloor() {
  q_->setEnabled(states_->value() == 2 && !running_);
  q_slider_->setEnabled(q_->isEnabled());
  const auto chain =
      analysis::MarkovChain::make(p_->value(), q_->value(), order_->value(), states_->value());
  floor_ = chain.entropy_rate();
  floor_label_->setText(tr("Floor: entropy rate %1 nats (%2 bits) per symbol")
                            .arg(nats(floor_), QString::number(floor_ / std::log(2.0), 'f', 4)));
  if (!has_run_) drawFloor();
}

void MarkovLabView::drawFloor() {
  // The floor of the run shown, or of the controls before any run.
  const double level = has_run_ ? run_floor_ : floor_;
  const double last = std::max(1, has_run_ ? run_options_.steps : steps_->value());
  loss_->graph(3)->setData(QVector<double>{0.0, last}, QVector<double>{level, level});
  loss_->rescaleAxes();
  const auto y = loss_->yAxis->range();
  loss_->yAxis->setRange(std::min(y.lower, level) - 0.02, std::max(y.upper, level + 0.05) + 0.02);
  loss_->xAxis->setRange(-0.03 * last, 1.03 * last);  // the markers at step 0 and at the end whole
  loss_->replot(QCustomPlot::rpQueuedReplot);
}

void MarkovLabView::setRunning(bool running) {
  running_ = running;
  train_->setText(running ? tr("Cancel") : tr("Train"));
  for (QWidget* w :
       std::initializer_list<QWidget*>{p_, p_slider_, order_, states_, mixer_, window_, steps_})
    w->setEnabled(!running);
  q_->setEnabled(states_->value() == 2 && !running);
  q_slider_->setEnabled(q_->isEnabled());
}

QString MarkovLabView::runName(const models::MarkovLabOptions& o) const {
  // Short: it names a legend entry.
  return tr("%1, k = %2").arg(QString::fromStdString(models::to_string(o.mixer))).arg(o.window);
}

void MarkovLabView::beginRun() {
  // The curve on screen becomes the faint previous run.
  if (loss_->graph(0)->dataCount() > 0) {
    // A copy: setData with the container itself would share it, and clearing one clears both.
    loss_->graph(2)->data()->set(*loss_->graph(0)->data());
    previous_name_ = runName(run_options_);
    previous_options_ = run_options_;
    loss_->graph(2)->setName(tr("before: %1").arg(previous_name_));
    loss_->graph(2)->addToLegend();
  }
  run_options_ = options();
  run_floor_ = run_options_.chain.entropy_rate();
  has_run_ = true;
  has_result_ = false;
  loss_->graph(0)->data()->clear();
  loss_->graph(1)->data()->clear();
  loss_->graph(0)->setName(runName(run_options_));
  summary_->setText(tr("Training…"));
  drawFloor();
}

std::optional<models::MarkovLabOptions> MarkovLabView::previousOptions() const {
  if (previous_name_.isEmpty() || loss_->graph(2)->dataCount() == 0) return std::nullopt;
  return previous_options_;
}

int MarkovLabView::previousPoints() const {
  return previousOptions() ? loss_->graph(2)->dataCount() : 0;
}

void MarkovLabView::addPoints(const std::vector<models::MarkovLabPoint>& points) {
  for (const auto& p : points) {
    loss_->graph(0)->addData(p.step, p.loss);
    if (p.step > 0 && std::isfinite(p.training_loss))
      loss_->graph(1)->addData(p.step, p.training_loss);
  }
  if (!points.empty()) {
    const auto& last = points.back();
    summary_->setText(tr("Step %1 of %2: loss %3, %4 above the floor")
                          .arg(last.step)
                          .arg(run_options_.steps)
                          .arg(nats(last.loss), nats(last.loss - run_floor_)));
  }
  drawFloor();
}

void MarkovLabView::showResult(const models::MarkovLabResult& r) {
  result_ = r;
  has_result_ = true;
  const double percent = 100.0 * r.gap / r.entropy_rate;
  QStringList lags;
  for (double w : r.mixing_by_lag) lags << QString::number(w, 'f', 2);
  summary_->setText(
      tr("<b>Final loss %1 = floor %2 + KL %3</b> (%4% above the floor), %5 steps in %6 s.<br>"
         "Weight by lag 0, 1, …: %7")
          .arg(nats(r.final_loss), nats(r.entropy_rate), nats(r.gap),
               QString::number(percent, 'f', 2))
          .arg(run_options_.steps)
          .arg(QString::number(r.seconds, 'f', 1), lags.join(", ")));
  const int n = r.length;
  matrix_->data()->setSize(n, n);
  matrix_->data()->setRange(QCPRange(0, n - 1), QCPRange(0, n - 1));
  double top = 0.0;
  for (int row = 0; row < n; ++row)
    for (int col = 0; col < n; ++col) {
      const double w = r.mixing_matrix[static_cast<size_t>(row) * n + col];
      matrix_->data()->setCell(col, row, col > row ? std::nan("") : w);
      if (col <= row) top = std::max(top, w);
    }
  matrix_->setDataRange(QCPRange(0.0, std::max(top, 1e-6)));
  matrix_plot_->xAxis->setRange(-0.5, n - 0.5);
  matrix_plot_->yAxis->setRange(-0.5, n - 0.5);
  set_centred_note(matrix_plot_, {});
  matrix_plot_->replot(QCustomPlot::rpQueuedReplot);
  drawFloor();
}

void MarkovLabView::showStopped(const QString& why) {
  summary_->setText(why);
  drawFloor();
}

FigureText MarkovLabView::figureText() const {
  return {tr("%1 on an order-%2 chain").arg(runName(run_options_)).arg(run_options_.chain.order),
          tr("step"), tr("loss (nats)")};
}

std::vector<std::string> MarkovLabView::exportFigure(const std::string& base,
                                                     const FigureStyle& style) const {
  if (!has_result_) return {};
  const FigureStyle s = with_defaults(style, figureText());
  Series loss{tr("loss"), {}, {}, {}, {}, false};
  for (const auto& p : result_.curve) {
    loss.x.push_back(p.step);
    loss.y.push_back(p.loss);
  }
  std::vector<Series> series{loss};
  // The previous run, when there is one, for the comparison a slide makes (k = 1 against k = 2).
  if (!previous_name_.isEmpty() && loss_->graph(2)->dataCount() > 0) {
    Series before{previous_name_, {}, {}, {}, {}, false};
    loss.name = runName(run_options_);
    series = {loss, before};
    for (auto it = loss_->graph(2)->data()->constBegin(); it != loss_->graph(2)->data()->constEnd();
         ++it) {
      series[1].x.push_back(it->key);
      series[1].y.push_back(it->value);
    }
  }
  auto written = save_lines(base + "_loss", series, s.x_title, s.y_title, s, {},
                            {{tr("entropy rate"), result_.entropy_rate}});
  CsvWriter csv({"step", "loss", "training_loss", "entropy_rate"}, 6);
  for (const auto& p : result_.curve) {
    csv << p.step << p.loss;
    if (p.step > 0)
      csv << p.training_loss;
    else
      csv.empty();
    csv << result_.entropy_rate;
    csv.end_row();
  }
  csv.write(base + "_loss.csv");
  written.push_back(base + "_loss.csv");

  analysis::TokenMatrix m{result_.length, result_.mixing_matrix};
  for (int row = 0; row < m.tokens; ++row)
    for (int col = row + 1; col < m.tokens; ++col)
      m.values[static_cast<size_t>(row) * m.tokens + col] = std::nan("");
  std::vector<std::string> labels;
  for (int t = 0; t < m.tokens; ++t) labels.push_back(QStringLiteral("t%1").arg(t).toStdString());
  FigureStyle ms = style;
  ms.title =
      style.title.isEmpty() ? tr("learned mixing: %1").arg(runName(run_options_)) : style.title;
  ms.x_title = tr("key position");
  ms.y_title = tr("query position");
  for (const auto& path : save_heatmap(base + "_mixing", m, labels, false, tr("weight"), ms))
    written.push_back(path);
  analysis::write_map_csv(base + "_mixing.csv", m, labels);
  written.push_back(base + "_mixing.csv");
  return written;
}

}  // namespace dstudio::viz
