// Live and compared training curves. See run_curves_view.h.

#include "dstudio/viz/run_curves_view.h"

#include <qcustomplot.h>

#include <QGridLayout>
#include <QLabel>
#include <QVBoxLayout>
#include <cmath>

#include "colors.h"
#include "dstudio/analysis/metrics_row.h"
#include "dstudio/viz/figures.h"

namespace dstudio::viz {
namespace {

// Okabe-Ito, without black and yellow (too faint as a band on white).
const QColor kGroupColours[] = {colors::kBlue,         colors::kVermillion, colors::kBluishGreen,
                                QColor(204, 121, 167), QColor(230, 159, 0), colors::kSkyBlue,
                                colors::kGrey};

QColor group_colour(std::size_t g) {
  return kGroupColours[g % (sizeof kGroupColours / sizeof kGroupColours[0])];
}

QColor with_alpha(QColor c, int alpha) {
  c.setAlpha(alpha);
  return c;
}

QVector<double> to_qvector(const std::vector<double>& v) {
  return QVector<double>(v.begin(), v.end());
}

void set_log_y(QCustomPlot* plot, bool log_y) {
  if (log_y) {
    plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
    plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    plot->yAxis->setNumberFormat("gb");
    plot->yAxis->setNumberPrecision(2);
  } else {
    plot->yAxis->setScaleType(QCPAxis::stLinear);
    plot->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    plot->yAxis->setNumberFormat("gb");
    plot->yAxis->setNumberPrecision(3);
  }
}

QCustomPlot* make_plot(const QString& y_label) {
  auto* plot = new QCustomPlot;
  plot->xAxis->setLabel(QObject::tr("step"));
  plot->yAxis->setLabel(y_label);
  plot->setMinimumSize(220, 150);
  dstudio::viz::keep_text_fitted(plot);
  plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  return plot;
}

// A line with small discs, readable with one point as with thousands.
QCPGraph* add_line(QCustomPlot* plot, QCPAxis* value_axis, const QColor& colour,
                   const QString& name) {
  auto* g = plot->addGraph(plot->xAxis, value_axis);
  g->setPen(QPen(colour, 1.5));
  g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, colour, colour, 4));
  g->setAdaptiveSampling(false);
  g->setName(name);
  return g;
}

// Fits the axes to the data with a little margin, so no point sits on the frame; a flat curve
// gets a span of a few percent of its value instead of an axis of rounding noise.
void fit(QCustomPlot* plot) {
  plot->rescaleAxes(true);
  for (QCPAxis* axis : {plot->yAxis, plot->yAxis2}) {
    if (!axis->visible()) continue;
    const bool log = axis->scaleType() == QCPAxis::stLogarithmic;
    bool found = false;
    QCPRange r;
    for (int i = 0; i < plot->graphCount(); ++i) {
      QCPGraph* g = plot->graph(i);
      if (g->valueAxis() != axis || g->dataCount() == 0) continue;
      bool here = false;
      const QCPRange gr = g->getValueRange(here, log ? QCP::sdPositive : QCP::sdBoth);
      if (!here) continue;
      r = found ? QCPRange(std::min(r.lower, gr.lower), std::max(r.upper, gr.upper)) : gr;
      found = true;
    }
    if (!found) continue;
    if (log) {
      axis->setRange(r.lower / 1.25, r.upper * 1.25);
      continue;
    }
    const double centre = r.center();
    const double span = std::max(r.size(), std::max(0.04 * std::abs(centre), 1e-12));
    axis->setRange(centre - 0.56 * span, centre + 0.56 * span);
  }
  const auto x = plot->xAxis->range();
  if (x.size() <= 0) plot->xAxis->setRange(x.lower - 1, x.upper + 1);
  // The markers on the first and last points stay whole.
  else
    plot->xAxis->setRange(x.lower - 0.03 * x.size(), x.upper + 0.03 * x.size());
}

const analysis::Curve* column(const analysis::RunMetrics& m, const char* key) {
  const auto it = m.columns.find(key);
  return it == m.columns.end() ? nullptr : &it->second;
}

void draw_curve(QCPGraph* graph, const analysis::Curve* curve) {
  if (curve)
    graph->setData(to_qvector(curve->x), to_qvector(curve->y), true);
  else
    graph->data()->clear();
}

}  // namespace

TrainingCurvesView::TrainingCurvesView(QWidget* parent)
    : QWidget(parent),
      title_(new QLabel),
      loss_(make_plot(tr("loss (action MSE)"))),
      lr_(make_plot(tr("learning rate"))),
      rate_(make_plot(tr("steps per second"))),
      eval_(make_plot(tr("normalised score"))) {
  set_log_y(loss_, true);
  add_line(loss_, loss_->yAxis, colors::kBlue, tr("loss"));
  add_line(lr_, lr_->yAxis, colors::kBluishGreen, tr("learning rate"));
  lr_->yAxis->setNumberPrecision(3);
  add_line(rate_, rate_->yAxis, colors::kGrey, tr("steps/s"));

  eval_->yAxis2->setVisible(true);
  eval_->yAxis2->setLabel(tr("attention entropy, layer 1"));
  add_line(eval_, eval_->yAxis, colors::kBlue, tr("score"));
  auto* entropy = add_line(eval_, eval_->yAxis2, colors::kVermillion, tr("entropy"));
  entropy->setPen(QPen(colors::kVermillion, 1.5, Qt::DashLine));
  entropy->setScatterStyle(
      QCPScatterStyle(QCPScatterStyle::ssSquare, colors::kVermillion, colors::kVermillion, 4));
  // Score -/+ its std over the evaluation's episodes, as a band behind the score.
  auto* low = eval_->addGraph(eval_->xAxis, eval_->yAxis);
  auto* high = eval_->addGraph(eval_->xAxis, eval_->yAxis);
  low->setPen(Qt::NoPen);
  high->setPen(Qt::NoPen);
  high->setBrush(with_alpha(colors::kBlue, 40));
  high->setChannelFillGraph(low);
  low->removeFromLegend();
  high->removeFromLegend();
  eval_->legend->setVisible(true);
  legend_above(eval_);
  QFont small = font();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  eval_->legend->setFont(small);

  title_->setWordWrap(true);
  auto* grid = new QGridLayout;
  grid->addWidget(loss_, 0, 0);
  grid->addWidget(lr_, 0, 1);
  grid->addWidget(rate_, 1, 0);
  grid->addWidget(eval_, 1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(title_);
  layout->addLayout(grid, 1);
  clear();
}

void TrainingCurvesView::clear() {
  setRun(tr("No run yet: choose a variant and press Start."), {});
}

void TrainingCurvesView::setRun(const QString& title, const analysis::RunMetrics& metrics) {
  title_->setText(title);
  title_->setVisible(!title.isEmpty());
  draw_curve(loss_->graph(0), column(metrics, analysis::metrics::kLoss));
  draw_curve(lr_->graph(0), column(metrics, analysis::metrics::kLearningRate));
  draw_curve(rate_->graph(0), column(metrics, analysis::metrics::kStepsPerSecond));
  const auto* score = column(metrics, analysis::metrics::kEvalScore);
  draw_curve(eval_->graph(0), score);
  draw_curve(eval_->graph(1), column(metrics, analysis::metrics::kEntropyLayer1));
  const auto* spread = column(metrics, analysis::metrics::kEvalScoreStd);
  if (score && spread && spread->y.size() == score->y.size()) {
    QVector<double> lo, hi;
    for (std::size_t i = 0; i < score->y.size(); ++i) {
      lo << score->y[i] - spread->y[i];
      hi << score->y[i] + spread->y[i];
    }
    eval_->graph(2)->setData(to_qvector(score->x), lo, true);
    eval_->graph(3)->setData(to_qvector(score->x), hi, true);
  } else {
    eval_->graph(2)->data()->clear();
    eval_->graph(3)->data()->clear();
  }
  const bool evaluated = eval_->graph(0)->dataCount() > 0 || eval_->graph(1)->dataCount() > 0;
  eval_->legend->setVisible(evaluated);
  set_centred_note(eval_, evaluated ? QString()
                                    : tr("No evaluation yet (eval_every > 0 rolls the policy out "
                                         "and measures its attention entropy)"));
  eval_->yAxis->setLabel(score || !evaluated ? tr("normalised score")
                                             : tr("(no environment: entropy only)"));
  for (QCustomPlot* plot : {loss_, lr_, rate_, eval_}) {
    fit(plot);
    plot->replot(QCustomPlot::rpQueuedReplot);
  }
}

RunComparisonView::RunComparisonView(QWidget* parent) : QWidget(parent), plot_(new QCustomPlot) {
  plot_->xAxis->setLabel(tr("step"));
  plot_->setMinimumSize(300, 200);
  keep_text_fitted(plot_);
  plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot_->legend->setVisible(true);
  legend_above(plot_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(plot_);
}

void RunComparisonView::setGroups(std::vector<CurveGroup> groups, const QString& y_label,
                                  bool log_y, const QString& empty_text) {
  groups_ = std::move(groups);
  y_label_ = y_label;
  plot_->clearGraphs();
  plot_->clearItems();
  plot_->yAxis->setLabel(y_label);
  set_log_y(plot_, log_y);
  // Bands and raw means first, so every smoothed mean is drawn over every band.
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const auto& group = groups_[g];
    const QColor colour = group_colour(g);
    auto* low = plot_->addGraph();
    auto* high = plot_->addGraph();
    low->setPen(Qt::NoPen);
    high->setPen(Qt::NoPen);
    high->setBrush(with_alpha(colour, 45));
    high->setChannelFillGraph(low);
    low->setData(to_qvector(group.x), to_qvector(group.low), true);
    high->setData(to_qvector(group.x), to_qvector(group.high), true);
    low->removeFromLegend();
    high->removeFromLegend();
    auto* raw = plot_->addGraph();
    raw->setPen(QPen(with_alpha(colour, 70), 1.0));
    raw->setData(to_qvector(group.raw_x), to_qvector(group.raw_mean), true);
    raw->removeFromLegend();
  }
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    auto* mean = plot_->addGraph();
    mean->setPen(QPen(group_colour(g), 2.0));
    mean->setName(groups_[g].name);
    mean->setData(to_qvector(groups_[g].x), to_qvector(groups_[g].mean), true);
    // A few points (evaluations) are marked, so that a single one is seen at all.
    if (groups_[g].x.size() <= 12)
      mean->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, group_colour(g), 6));
  }
  show_legend_above(plot_, !groups_.empty());
  set_centred_note(plot_, groups_.empty() ? empty_text : QString());
  if (!groups_.empty()) fit(plot_);
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

std::vector<CurveGroup> drawn_groups(const std::vector<analysis::CurveGroup>& groups) {
  std::vector<CurveGroup> drawn;
  for (const auto& g : groups) {
    const QString label = QString::fromStdString(g.label);
    drawn.push_back({g.runs == 1 ? label : QObject::tr("%1 (%2 runs)").arg(label).arg(g.runs), g.x,
                     g.mean, g.low, g.high, g.raw_x, g.raw_mean});
  }
  return drawn;
}

std::vector<std::string> save_run_comparison(const std::string& base,
                                             const std::vector<analysis::CurveGroup>& groups,
                                             const QString& y_label, double smoothing,
                                             analysis::Band band, const FigureStyle& style) {
  std::vector<Series> series;
  for (const auto& g : drawn_groups(groups))
    series.push_back({g.name, g.x, g.mean, g.low, g.high, false});
  auto written = save_lines(base, series, QObject::tr("step"), y_label, style);
  // The numbers behind the figure, next to it.
  analysis::write_curve_groups_csv(base + ".csv", groups, smoothing, band);
  written.push_back(base + ".csv");
  return written;
}

QString RunCurvesFigure::figureTitle() const {
  return QObject::tr("Training: the run's curves");
}

bool RunCurvesFigure::hasFigure() const {
  const auto* m = metrics_();
  if (!m) return false;
  const auto loss = m->columns.find(analysis::metrics::kLoss);
  return loss != m->columns.end() && !loss->second.y.empty();
}

FigureText RunCurvesFigure::figureText() const {
  return {metrics_() ? name_() : QString(), QObject::tr("step"), {}};
}

std::vector<std::string> RunCurvesFigure::exportFigure(const std::string& base,
                                                       const FigureStyle& style) const {
  if (!hasFigure()) return {};
  const auto& metrics = *metrics_();
  const auto& columns = metrics.columns;
  const auto series = [&](const char* key, const QString& name, bool right) {
    const auto& c = columns.at(key);
    return Series{name, c.x, c.y, {}, {}, right};
  };
  const QString name = figureText().title;
  const QString step = QObject::tr("step"), loss = QObject::tr("loss (action MSE)");
  std::vector<std::string> written = save_lines(
      base + "_loss", {series(analysis::metrics::kLoss, QObject::tr("loss"), false)}, step, loss,
      with_defaults(style, {QObject::tr("%1: training loss").arg(name), step, loss}));
  if (columns.count(analysis::metrics::kEvalScore)) {
    const QString score = QObject::tr("normalised score");
    const QString entropy_name = QObject::tr("attention entropy, layer 1");
    std::vector<Series> eval = {series(analysis::metrics::kEvalScore, score, false)};
    const bool entropy = columns.count(analysis::metrics::kEntropyLayer1) > 0;
    if (entropy) eval.push_back(series(analysis::metrics::kEntropyLayer1, entropy_name, true));
    for (auto& f :
         save_lines(base + "_evaluation", eval, step, score,
                    with_defaults(style, {QObject::tr("%1: evaluation").arg(name), step, score}),
                    entropy ? entropy_name : QString()))
      written.push_back(std::move(f));
  }
  analysis::write_run_metrics_csv(base + ".csv", metrics);
  written.push_back(base + ".csv");
  return written;
}

}  // namespace dstudio::viz
