// A sweep's results as clustered bars. See sweep_results_view.h.

#include "dstudio/viz/sweep_results_view.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>

#include "dstudio/common/csv.h"

namespace dstudio::viz {
namespace {

// The note above a bar: the seeds it pools, and of how many when some have not finished.
QString seeds_note(const SweepBar& b) {
  return b.complete() ? QStringLiteral("n=%1").arg(b.finished)
                      : QStringLiteral("n=%1 of %2").arg(b.finished).arg(b.cells);
}

// Bars of the same dataset and setting, in cluster order per setting: the figure's series.
std::vector<BarSeries> series_of(const SweepBars& sb) {
  std::vector<BarSeries> series;
  for (const auto& setting : sb.settings) {
    BarSeries s{setting, {}, {}, {}};
    s.bars.assign(sb.datasets.size(), Bar{setting, std::nan(""), 0.0});
    s.notes.assign(sb.datasets.size(), QString());
    s.faint.assign(sb.datasets.size(), false);
    for (const auto& b : sb.bars) {
      if (b.setting != setting) continue;
      const auto c = static_cast<std::size_t>(
          std::find(sb.datasets.begin(), sb.datasets.end(), b.dataset) - sb.datasets.begin());
      s.bars[c] = Bar{setting, b.mean, b.std};
      s.notes[c] = seeds_note(b);
      s.faint[c] = !b.complete();
    }
    series.push_back(std::move(s));
  }
  return series;
}

// rliable's four aggregates, in the order its figures draw them.
const QString kStatistics[] = {QStringLiteral("IQM"), QStringLiteral("Median"),
                               QStringLiteral("Mean"), QStringLiteral("Optimality gap")};

Bar interval_bar(const analysis::Interval& i) {
  Bar b;
  b.mean = i.estimate;
  b.low = i.low;
  b.high = i.high;
  return b;
}

}  // namespace

SweepBars sweep_bars(const std::vector<sweep::GroupResult>& groups, SweepMeasure measure) {
  SweepBars sb;
  for (const auto& g : groups) {
    const QString dataset = QString::fromStdString(g.dataset),
                  setting = QString::fromStdString(g.setting);
    if (std::find(sb.datasets.begin(), sb.datasets.end(), dataset) == sb.datasets.end())
      sb.datasets.push_back(dataset);
    if (std::find(sb.settings.begin(), sb.settings.end(), setting) == sb.settings.end())
      sb.settings.push_back(setting);
    const bool best = measure == SweepMeasure::Best;
    sb.bars.push_back({dataset, setting, best ? g.best_mean : g.score_mean,
                       best ? g.best_std : g.score_std, g.finished, g.cells});
  }
  return sb;
}

QString sweep_measure_label(SweepMeasure measure) {
  return measure == SweepMeasure::Best ? QObject::tr("best evaluation (normalised score)")
                                       : QObject::tr("normalised score");
}

std::vector<std::string> save_sweep_scores(const std::string& base,
                                           const std::vector<sweep::GroupResult>& groups,
                                           SweepMeasure measure, const FigureStyle& style) {
  const SweepBars sb = sweep_bars(groups, measure);
  const FigureStyle s = with_defaults(
      style, {measure == SweepMeasure::Best ? QObject::tr("Best evaluation over seeds")
                                            : QObject::tr("Final score over seeds"),
              {},
              sweep_measure_label(measure)});
  auto written = save_clustered_bars(base, sb.datasets, series_of(sb), s.y_title, s);
  CsvWriter csv({"dataset", "setting", "measure", "mean", "std", "seeds", "cells"}, 6);
  for (const auto& b : sb.bars) {
    csv << b.dataset.toStdString() << b.setting.toStdString()
        << (measure == SweepMeasure::Best ? "best" : "final") << b.mean << b.std << b.finished
        << b.cells;
    csv.end_row();
  }
  csv.write(base + ".csv");
  written.push_back(base + ".csv");
  return written;
}

// The four aggregates as rliable draws them: a panel each on a scale of its own (the optimality
// gap, near 100, beside an IQM near 1 would flatten it), a row a setting with its interval.
std::vector<std::string> save_sweep_aggregates(
    const std::string& base, const std::vector<sweep::SettingAggregate>& aggregates, bool best,
    const FigureStyle& style) {
  std::vector<QString> names;
  std::vector<IntervalPanel> panels(std::size(kStatistics));
  for (std::size_t k = 0; k < panels.size(); ++k) panels[k].title = kStatistics[k];
  std::vector<analysis::AggregateSummary> shown;
  for (const auto& a : aggregates) {
    const auto& summary = best ? a.best : a.last;
    if (!summary) continue;
    names.push_back(QString::fromStdString(a.setting));
    std::size_t k = 0;
    for (const auto* i :
         {&summary->iqm, &summary->median, &summary->mean, &summary->optimality_gap})
      panels[k++].rows.push_back(interval_bar(*i));
    shown.push_back(*summary);
  }
  if (names.empty()) return {};
  FigureStyle s = style;
  if (s.title.isEmpty())
    s.title = best ? QStringLiteral("Best evaluation: aggregates with 95% intervals")
                   : QStringLiteral("Final score: aggregates with 95% intervals");
  return save_interval_panels(base, names, panels, QStringLiteral("normalised score"),
                              QString::fromStdString(sweep::aggregates_note(shown)), s);
}

// P(X > Y) as rliable draws it: a row a pair, on 0 to 1 with a line at 0.5 (neither better),
// the final scores and the best evaluations in panels side by side.
std::vector<std::string> save_sweep_improvement(const std::string& base,
                                                const std::vector<sweep::SettingImprovement>& pairs,
                                                const FigureStyle& style) {
  std::vector<QString> names;
  IntervalPanel last, best;
  last.title = QStringLiteral("final score");
  best.title = QStringLiteral("best evaluation");
  for (auto* panel : {&last, &best}) {
    panel->lowest = 0.0;
    panel->highest = 1.0;
    panel->reference = 0.5;
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const auto& p : pairs) {
    if (!p.last && !p.best) continue;
    names.push_back(QString::fromStdString(p.x + " > " + p.y));
    last.rows.push_back(p.last ? interval_bar(*p.last) : Bar{{}, nan, 0.0});
    best.rows.push_back(p.best ? interval_bar(*p.best) : Bar{{}, nan, 0.0});
  }
  if (names.empty()) return {};
  std::vector<IntervalPanel> panels{last};
  if (std::any_of(best.rows.begin(), best.rows.end(),
                  [](const Bar& b) { return std::isfinite(b.mean); }))
    panels.push_back(best);
  FigureStyle s = style;
  if (s.title.isEmpty()) s.title = QStringLiteral("Probability of improvement, 95% intervals");
  return save_interval_panels(base, names, panels, QStringLiteral("P(X > Y)"), {}, s);
}

SweepResultsView::SweepResultsView(QWidget* parent)
    : QWidget(parent), measure_(new QComboBox), caption_(new QLabel), plot_(new QCustomPlot) {
  measure_->addItem(tr("final score"));
  measure_->addItem(tr("best evaluation"));
  measure_->setToolTip(tr(
      "The final policy's score, or the best of the periodic evaluations (training.eval_every)"));
  caption_->setWordWrap(true);
  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("Bars")));
  controls->addWidget(measure_);
  controls->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(controls);
  layout->addWidget(plot_, 1);
  layout->addWidget(caption_);
  plot_->setMinimumSize(260, 200);
  plot_->legend->setVisible(false);
  plot_->setMouseTracking(true);
  keep_text_fitted(plot_);
  connect(measure_, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
  connect(plot_, &QCustomPlot::mouseMove, this, [this](QMouseEvent* event) {
    const QString tip = toolTipAt(event->position());
    if (tip.isEmpty())
      QToolTip::hideText();
    else
      QToolTip::showText(event->globalPosition().toPoint(), tip, plot_);
  });
  redraw();
}

void SweepResultsView::setGroups(std::vector<sweep::GroupResult> groups, const QString& title) {
  groups_ = std::move(groups);
  title_ = title;
  redraw();
}

void SweepResultsView::setMeasure(SweepMeasure measure) {
  measure_->setCurrentIndex(measure == SweepMeasure::Best ? 1 : 0);
}

SweepMeasure SweepResultsView::measure() const {
  return measure_->currentIndex() == 1 ? SweepMeasure::Best : SweepMeasure::Final;
}

bool SweepResultsView::hasFigure() const {
  return std::any_of(bars_.bars.begin(), bars_.bars.end(),
                     [](const SweepBar& b) { return std::isfinite(b.mean); });
}

FigureText SweepResultsView::figureText() const {
  return {title_, {}, sweep_measure_label(measure())};
}

std::vector<std::string> SweepResultsView::exportFigure(const std::string& base,
                                                        const FigureStyle& style) const {
  if (!hasFigure()) return {};
  return save_sweep_scores(base, groups_, measure(), with_defaults(style, figureText()));
}

void SweepResultsView::redraw() {
  // The screen shows what the figure shows: the same bar positions, colours and notes.
  bars_ = sweep_bars(groups_, measure());
  plot_->clearPlottables();
  plot_->clearItems();
  const int count = static_cast<int>(bars_.settings.size());
  plot_->legend->clearItems();
  QFont small = font();
  small.setPointSizeF(0.8 * small.pointSizeF());
  add_clustered_bars(*plot_, bars_.datasets, series_of(bars_), 1.0, 1.2, small);
  plot_->yAxis->setLabel(sweep_measure_label(measure()));
  plot_->legend->setVisible(count > 1);
  if (count > 1) legend_above(plot_);
  QString note;
  if (groups_.empty())
    note = tr("Open a sweep folder to see its results.");
  else if (!hasFigure())
    note = measure() == SweepMeasure::Best
               ? tr("No finished cell has a periodic evaluation (training.eval_every) yet.")
               : tr("No cell has finished with a score yet.");
  set_centred_note(plot_, note);
  plot_->replot();
  int unfinished = 0;
  for (const auto& b : bars_.bars) unfinished += b.complete() ? 0 : 1;
  caption_->setText(
      groups_.empty()
          ? QString()
          : tr("%1 over the seeds that finished, ± one standard deviation (n - 1).%2")
                .arg(measure() == SweepMeasure::Best ? tr("Best periodic evaluation, mean")
                                                     : tr("Final normalised score, mean"))
                .arg(unfinished > 0
                         ? (unfinished == 1 ? tr(" Faint, dashed: a group with unfinished seeds.")
                                            : tr(" Faint, dashed: %1 groups with unfinished seeds.")
                                                  .arg(unfinished))
                         : QString()));
}

QString SweepResultsView::toolTipAt(const QPointF& pos) const {
  const int count = static_cast<int>(bars_.settings.size());
  if (count == 0) return {};
  const double key = plot_->xAxis->pixelToCoord(pos.x()),
               value = plot_->yAxis->pixelToCoord(pos.y());
  const double half = clustered_bar_width(count) / 2;
  for (const auto& b : bars_.bars) {
    const auto c =
        static_cast<int>(std::find(bars_.datasets.begin(), bars_.datasets.end(), b.dataset) -
                         bars_.datasets.begin());
    const auto k =
        static_cast<int>(std::find(bars_.settings.begin(), bars_.settings.end(), b.setting) -
                         bars_.settings.begin());
    const double at = clustered_bar_key(c, k, count);
    if (std::abs(key - at) > half) continue;
    // The whole column over the bar answers, so a short bar is easy to point at.
    (void)value;
    const QString numbers = std::isfinite(b.mean)
                                ? tr("%1 ± %2").arg(b.mean, 0, 'f', 1).arg(b.std, 0, 'f', 1)
                                : tr("no score yet");
    return tr("<b>%1</b> on %2<br>%3 over %4 of %5 seeds")
        .arg(b.setting.toHtmlEscaped(), b.dataset.toHtmlEscaped(), numbers)
        .arg(b.finished)
        .arg(b.cells);
  }
  return {};
}

}  // namespace dstudio::viz
