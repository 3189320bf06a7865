// The played episode's timeline. See episode_timeline.h.

#include "dstudio/viz/episode_timeline.h"

#include <qcustomplot.h>

#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>

#include "colors.h"
#include "dstudio/common/csv.h"
#include "dstudio/viz/figures.h"
#include "dstudio/viz/step_marks.h"

namespace dstudio::viz {

EpisodeTimeline::EpisodeTimeline(QWidget* parent) : QWidget(parent), plot_(new QCustomPlot) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(plot_);
  plot_->setMinimumHeight(150);
  keep_text_fitted(plot_);
  plot_->xAxis->setLabel(tr("step"));
  plot_->yAxis->setLabel(tr("return"));
  plot_->yAxis2->setVisible(true);
  plot_->yAxis2->setLabel(tr("attention entropy (nats)"));
  // The traces as decision-viewer and the lessons name them (dstudio/common/palette.h).
  const auto trace = [this](QCPGraph* graph, const palette::TraceStyle& style, double width) {
    graph->setName(tr(std::string(style.name).c_str()));
    graph->setPen(
        QPen(colors::of(style.colour), width, style.dashed ? Qt::DashLine : Qt::SolidLine));
  };
  trace(plot_->addGraph(), palette::kReturnToGo, 1.5);
  trace(plot_->addGraph(), palette::kReturnSoFar, 1.5);
  trace(plot_->addGraph(plot_->xAxis, plot_->yAxis2), palette::kEntropy, 1.2);
  // The main run's joint, when the forks' right axis shows a joint.
  divergence_name_ = tr("action difference");
  main_divergence_graph_ = plot_->addGraph(plot_->xAxis, plot_->yAxis2);
  main_divergence_graph_->setPen(QPen(colors::of(palette::kMainRun), 1.0));
  main_divergence_graph_->setVisible(false);
  main_divergence_graph_->removeFromLegend();
  plot_->legend->setVisible(true);
  plot_->legend->setFont(QFont(font().family(), 8));
  // The legend in a row of its own above the plot, so it never hides a curve.
  plot_->plotLayout()->insertRow(0);
  plot_->plotLayout()->addElement(0, 0, plot_->legend);
  plot_->legend->setFillOrder(QCPLegend::foColumnsFirst, true);
  plot_->legend->setBorderPen(Qt::NoPen);
  plot_->legend->setMargins(QMargins(4, 2, 4, 0));
  plot_->plotLayout()->setRowStretchFactor(0, 0.001);
  // Before the first step the plot says what it will show, rather than draw empty axes.
  placeholder_ = new QCPItemText(plot_);
  placeholder_->setClipToAxisRect(false);
  placeholder_->position->setType(QCPItemPosition::ptAxisRectRatio);
  placeholder_->position->setCoords(0.5, 0.5);
  placeholder_->setPositionAlignment(Qt::AlignCenter);
  placeholder_->setTextAlignment(Qt::AlignCenter);
  placeholder_->setColor(Qt::gray);
  placeholder_->setText(
      tr("No step played yet: the return-to-go, the return so far and the\n"
         "attention entropy are drawn here as the episode plays."));
  cursor_line_ = new QCPItemStraightLine(plot_);
  cursor_line_->setPen(QPen(QColor(200, 30, 30), 1.2));
  cursor_line_->point1->setCoords(0, 0);
  cursor_line_->point2->setCoords(0, 1);
  showEmpty(true);
  connect(plot_, &QCustomPlot::mousePress, this, [this](QMouseEvent* e) {
    dragging_ = true;
    seekTo(plot_->xAxis->pixelToCoord(e->position().x()));
  });
  connect(plot_, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) {
    if (dragging_ && (e->buttons() & Qt::LeftButton))
      seekTo(plot_->xAxis->pixelToCoord(e->position().x()));
  });
  connect(plot_, &QCustomPlot::mouseRelease, this, [this](QMouseEvent*) { dragging_ = false; });
  plot_->setToolTip(tr("Click or drag to move the episode's cursor"));
}

void EpisodeTimeline::showEmpty(bool empty) {
  // No step: no numbers on the axes (QCustomPlot's 0 to 5 would pass for values), no cursor.
  placeholder_->setVisible(empty);
  cursor_line_->setVisible(!empty);
  for (auto* axis : {plot_->xAxis, plot_->yAxis, plot_->yAxis2}) {
    axis->setTickLabels(!empty);
    axis->setTicks(!empty);
  }
  plot_->legend->setVisible(!empty);
}

bool EpisodeTimeline::placeholderShown() const {
  return placeholder_->visible();
}

void EpisodeTimeline::clear() {
  rtg_.clear();
  collected_.clear();
  entropy_.clear();
  cursor_ = 0;
  dirty_ = true;
}

void EpisodeTimeline::addStep(int step, double return_to_go, double return_so_far, double entropy) {
  if (step < 0) return;
  const auto n = static_cast<std::size_t>(step);
  if (n < rtg_.size()) {
    rtg_.resize(n);
    collected_.resize(n);
    entropy_.resize(n);
  }
  // Steps arrive in order; fill a gap (which should not happen) with NaN rather than shift.
  while (rtg_.size() < n) {
    rtg_.push_back(std::nan(""));
    collected_.push_back(std::nan(""));
    entropy_.push_back(std::nan(""));
  }
  rtg_.push_back(return_to_go);
  collected_.push_back(return_so_far);
  entropy_.push_back(entropy);
  dirty_ = true;
}

void EpisodeTimeline::setForks(std::vector<Fork> forks) {
  const bool same_set = forks.size() == forks_.size() &&
                        std::equal(forks.begin(), forks.end(), forks_.begin(),
                                   [](const Fork& a, const Fork& b) { return a.name == b.name; });
  forks_ = std::move(forks);
  dirty_ = true;
  if (same_set) return;
  for (auto* g : fork_graphs_) plot_->removeGraph(g);
  fork_graphs_.clear();
  for (const auto& f : forks_) {
    auto* ret = plot_->addGraph();
    ret->setName(f.name + tr(": return"));
    ret->setPen(QPen(f.colour, 1.5, Qt::DotLine));
    auto* diff = plot_->addGraph(plot_->xAxis, plot_->yAxis2);
    diff->setPen(QPen(f.colour, 1.0));
    fork_graphs_.push_back(ret);
    fork_graphs_.push_back(diff);
  }
  showDivergence();
}

void EpisodeTimeline::setDivergence(const QString& name, std::vector<double> main_run) {
  divergence_name_ = name;
  main_divergence_ = std::move(main_run);
  dirty_ = true;
  showDivergence();
}

QString EpisodeTimeline::divergenceAxis() const {
  // The norm spelt out: "L2" would read as layer 2 beside the Interventions tab's layers.
  return main_divergence_.empty() ? divergence_name_ + tr(" from the main run (Euclidean norm)")
                                  : divergence_name_;
}

void EpisodeTimeline::showDivergence() {
  // With forks the right axis is theirs; the entropy is the main run's alone.
  const bool divergence = !forks_.empty();
  plot_->graph(2)->setVisible(!divergence);
  if (divergence)
    plot_->graph(2)->removeFromLegend();
  else
    plot_->graph(2)->addToLegend();
  for (std::size_t i = 0; i < forks_.size() && 2 * i + 1 < fork_graphs_.size(); ++i)
    fork_graphs_[2 * i + 1]->setName(forks_[i].name + ": " + divergence_name_);
  const bool main_shown = divergence && !main_divergence_.empty();
  main_divergence_graph_->setName(tr("main run: ") + divergence_name_);
  main_divergence_graph_->setVisible(main_shown);
  if (main_shown)
    main_divergence_graph_->addToLegend();
  else
    main_divergence_graph_->removeFromLegend();
  plot_->yAxis2->setLabel(divergence ? divergenceAxis() : tr("attention entropy (nats)"));
}

void EpisodeTimeline::setCursor(int step) {
  if (step == cursor_) return;
  cursor_ = step;
  dirty_ = true;
}

void EpisodeTimeline::replotIfChanged() {
  if (!dirty_) return;
  dirty_ = false;
  const auto n = static_cast<int>(rtg_.size());
  const int span = setCurves(n);
  // A window of at least 100 steps, so the first steps do not fill the width.
  plot_->xAxis->setRange(0, std::max(100, span));
  align_step_marks(plot_);
  fitReturnRange();
  fitRightAxisRange();
  cursor_line_->point1->setCoords(cursor_, 0);
  cursor_line_->point2->setCoords(cursor_, 1);
  showEmpty(n == 0);
  fitLegendRows();
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

int EpisodeTimeline::setCurves(int n) {
  QVector<double> x(n);
  for (int i = 0; i < n; ++i) x[i] = i;
  auto values = [](const std::vector<double>& v) { return QVector<double>(v.begin(), v.end()); };
  plot_->graph(0)->setData(x, values(rtg_), true);
  plot_->graph(1)->setData(x, values(collected_), true);
  plot_->graph(2)->setData(x, values(entropy_), true);
  // The legend names the curves there are: a behaviour policy has no return-to-go and neither it
  // nor a dataset's replay an entropy (the first step has none yet for any policy).
  const auto any_value = [](const std::vector<double>& v) {
    return std::any_of(v.begin(), v.end(), [](double y) { return std::isfinite(y); });
  };
  const auto in_legend = [](QCPGraph* g, bool shown) {
    if (shown)
      g->addToLegend();
    else
      g->removeFromLegend();
  };
  in_legend(plot_->graph(0), n < 2 || any_value(rtg_));
  // The right axis is the entropy's, or the forks' divergence: without either, no axis.
  const bool entropy_shown = n < 2 || any_value(entropy_);
  if (forks_.empty()) in_legend(plot_->graph(2), entropy_shown);
  plot_->yAxis2->setVisible(!forks_.empty() || entropy_shown);
  {
    QVector<double> xs(static_cast<int>(main_divergence_.size()));
    for (int k = 0; k < xs.size(); ++k) xs[k] = k;
    main_divergence_graph_->setData(xs, values(main_divergence_), true);
  }
  int span = n;
  for (std::size_t i = 0; i < forks_.size() && 2 * i + 1 < fork_graphs_.size(); ++i) {
    const auto& f = forks_[i];
    const auto along = [](const std::vector<double>& v) {
      QVector<double> xs(static_cast<int>(v.size()));
      for (int k = 0; k < xs.size(); ++k) xs[k] = k;
      return xs;
    };
    fork_graphs_[2 * i]->setData(along(f.return_so_far), values(f.return_so_far), true);
    fork_graphs_[2 * i + 1]->setData(along(f.divergence), values(f.divergence), true);
    span = std::max(span, static_cast<int>(f.return_so_far.size()));
  }
  return span;
}

void EpisodeTimeline::fitReturnRange() {
  // The returns' range: the return-to-go's, the return so far's and the forks', whichever have
  // values (a behaviour policy has no return-to-go).
  bool found = false;
  QCPRange left;
  const auto widen = [&](QCPGraph* g) {
    bool any = false;
    const QCPRange other = g->getValueRange(any);
    if (!any) return;
    if (found)
      left.expand(other);
    else
      left = other;
    found = true;
  };
  widen(plot_->graph(0));
  widen(plot_->graph(1));
  for (std::size_t i = 0; i < fork_graphs_.size(); i += 2) widen(fork_graphs_[i]);
  if (found) {
    if (left.size() < 1e-9) left = QCPRange(left.lower - 1, left.upper + 1);
    plot_->yAxis->setRange(left.lower - 0.05 * left.size(), left.upper + 0.08 * left.size());
  }
}

void EpisodeTimeline::fitRightAxisRange() {
  if (forks_.empty()) {
    // The entropy's range alone: a single value (the first step) gets a unit around it, where
    // QCustomPlot would keep the previous range's width.
    bool any = false;
    QCPRange entropy = plot_->graph(2)->getValueRange(any);
    if (any) {
      if (entropy.size() < 1e-9) entropy = QCPRange(entropy.lower - 0.5, entropy.upper + 0.5);
      plot_->yAxis2->setRange(entropy);
    } else {
      plot_->yAxis2->setRange(0.0, 1.0);  // no step has acted yet
    }
  } else if (main_divergence_.empty()) {
    double top = 0.0;
    for (const auto& f : forks_)
      for (double d : f.divergence)
        if (std::isfinite(d)) top = std::max(top, d);
    plot_->yAxis2->setRange(0.0, top > 0.0 ? 1.08 * top : 1.0);
  } else {
    // A joint: every run's range.
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    const auto widen_to = [&](const std::vector<double>& v) {
      for (double d : v)
        if (std::isfinite(d)) lo = std::min(lo, d), hi = std::max(hi, d);
    };
    widen_to(main_divergence_);
    for (const auto& f : forks_) widen_to(f.divergence);
    if (!std::isfinite(lo)) lo = 0.0, hi = 1.0;
    if (hi - lo < 1e-9) lo -= 0.5, hi += 0.5;
    plot_->yAxis2->setRange(lo - 0.05 * (hi - lo), hi + 0.08 * (hi - lo));
  }
}

void EpisodeTimeline::fitLegendRows() {
  // As many names a row as the width holds whole (a fork adds two): narrow beside a lesson, the
  // legend takes a second row rather than cut "return so far" short.
  int widest = 0;
  const QFontMetrics names(plot_->legend->font());
  for (int i = 0; i < plot_->legend->itemCount(); ++i)
    if (auto* item = qobject_cast<QCPPlottableLegendItem*>(plot_->legend->item(i)))
      widest = std::max(widest, names.horizontalAdvance(item->plottable()->name()) +
                                    plot_->legend->iconSize().width() +
                                    plot_->legend->iconTextPadding() + item->margins().left() +
                                    item->margins().right());
  const int per_row = widest > 0 ? std::max(1, (plot_->width() - 20) / widest) : 1;
  if (plot_->legend->wrap() != per_row) {
    plot_->legend->setWrap(per_row);
    plot_->legend->setFillOrder(QCPLegend::foColumnsFirst, true);  // the items laid out anew
  }
}

QString EpisodeTimeline::figureName() const {
  return forks_.empty() ? QStringLiteral("episode") : QStringLiteral("divergence");
}

QString EpisodeTimeline::figureTitle() const {
  return forks_.empty() ? tr("Viewer: the episode's timeline")
                        : tr("Viewer: the forks against the main run");
}

FigureText EpisodeTimeline::figureText() const {
  return {forks_.empty() ? tr("The episode") : tr("Counterfactual forks"), tr("step"),
          tr("return")};
}

std::vector<std::string> EpisodeTimeline::exportFigure(const std::string& base,
                                                       const FigureStyle& style) const {
  if (!hasFigure()) return {};
  const FigureStyle s = with_defaults(style, figureText());
  const auto series_of = [](const QString& name, const std::vector<double>& v, bool right) {
    Series out{name, {}, {}, {}, {}, right};
    for (std::size_t t = 0; t < v.size(); ++t)
      if (std::isfinite(v[t])) out.x.push_back(static_cast<double>(t)), out.y.push_back(v[t]);
    return out;
  };
  // One column per curve, one row per step (empty where a run has no value), in a CSV beside it.
  std::vector<std::pair<QString, const std::vector<double>*>> columns;
  std::vector<Series> series;
  if (forks_.empty()) {
    columns = {{tr("return-to-go"), &rtg_},
               {tr("return so far"), &collected_},
               {tr("entropy, layer 1"), &entropy_}};
  } else {
    columns.emplace_back(tr("main run: return"), &collected_);
    for (const auto& f : forks_) columns.emplace_back(f.name + tr(": return"), &f.return_so_far);
    if (!main_divergence_.empty())
      columns.emplace_back(tr("main run: ") + divergence_name_, &main_divergence_);
    for (const auto& f : forks_)
      columns.emplace_back(f.name + ": " + divergence_name_, &f.divergence);
  }
  std::size_t steps = 0;
  std::vector<std::string> header = {"step"};
  for (const auto& [name, values] : columns) {
    const bool right =
        forks_.empty() ? values == &entropy_ : name.endsWith(": " + divergence_name_);
    series.push_back(series_of(name, *values, right));
    header.push_back(name.toStdString());
    steps = std::max(steps, values->size());
  }
  auto written = save_lines(base, series, s.x_title, s.y_title, s,
                            forks_.empty() ? tr("attention entropy (nats)") : divergenceAxis());
  CsvWriter csv(header, 9);
  for (std::size_t t = 0; t < steps; ++t) {
    csv << t;
    for (const auto& column : columns)
      csv << (t < column.second->size() ? (*column.second)[t] : std::nan(""));
    csv.end_row();
  }
  csv.write(base + ".csv");
  written.push_back(base + ".csv");
  return written;
}

void EpisodeTimeline::seekTo(double x) {
  if (rtg_.empty()) return;
  const int step =
      std::clamp(static_cast<int>(std::lround(x)), 0, static_cast<int>(rtg_.size()) - 1);
  emit seekRequested(step);
}

}  // namespace dstudio::viz
