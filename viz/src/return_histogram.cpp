#include "dstudio/viz/return_histogram.h"

#include <qcustomplot.h>

#include <QToolTip>
#include <QVBoxLayout>
#include <cmath>

#include "colors.h"
#include "dstudio/common/histogram.h"
#include "dstudio/viz/figures.h"

namespace dstudio::viz {

ReturnHistogram::ReturnHistogram(QWidget* parent) : QWidget(parent), plot_(new QCustomPlot(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(plot_);
  plot_->setMinimumSize(240, 160);
  keep_text_fitted(plot_);

  bars_ = new QCPBars(plot_->xAxis, plot_->yAxis);
  bars_->setPen(QPen(colors::kBlue.darker(130)));
  bars_->setBrush(colors::kSkyBlue);
  bars_->setWidthType(QCPBars::wtPlotCoords);
  plot_->xAxis->setLabel(tr("Episode return"));
  plot_->yAxis->setLabel(tr("Episodes"));
  // Counts are whole numbers: ticks at integer multiples only.
  QSharedPointer<QCPAxisTickerFixed> counts(new QCPAxisTickerFixed);
  counts->setTickStep(1.0);
  counts->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
  plot_->yAxis->setTicker(counts);
  plot_->plotLayout()->insertRow(0);
  plot_->plotLayout()->addElement(0, 0,
                                  new QCPTextElement(plot_, tr("Returns of complete episodes"),
                                                     QFont(font().family(), 10, QFont::Bold)));

  marker_ = new QCPItemStraightLine(plot_);
  marker_->setPen(QPen(colors::kVermillion, 2, Qt::DashLine));
  marker_->setVisible(false);

  connect(plot_, &QCustomPlot::mouseMove, this, &ReturnHistogram::showBarTip);
}

void ReturnHistogram::setReturns(const std::vector<double>& returns) {
  const Histogram h = histogram(returns);
  QVector<double> keys, values;
  for (std::size_t i = 0; i < h.counts.size(); ++i) {
    keys.push_back(h.center(i));
    values.push_back(static_cast<double>(h.counts[i]));
  }
  bin_width_ = h.width;
  bars_->setWidth(h.width);
  bars_->setData(keys, values, true);
  auto* title = qobject_cast<QCPTextElement*>(plot_->plotLayout()->element(0, 0));
  if (title)
    title->setText(returns.size() == 1 ? tr("Return of 1 complete episode")
                                       : tr("Returns of %1 complete episodes").arg(returns.size()));
  if (!h.counts.empty()) {
    plot_->xAxis->setRange(h.lo - 0.5 * h.width, h.left_edge(h.counts.size()) + 0.5 * h.width);
    const auto top = *std::max_element(values.begin(), values.end());
    plot_->yAxis->setRange(0, top * 1.1 + 1);
  }
  marker_->setVisible(false);
  plot_->replot();
}

void ReturnHistogram::markReturn(double value) {
  marker_->setVisible(!std::isnan(value));
  if (!std::isnan(value)) {
    marker_->point1->setCoords(value, 0);
    marker_->point2->setCoords(value, 1);
  }
  plot_->replot();
}

std::vector<std::pair<double, double>> ReturnHistogram::bars() const {
  std::vector<std::pair<double, double>> out;
  for (auto it = bars_->data()->constBegin(); it != bars_->data()->constEnd(); ++it)
    out.emplace_back(it->key, it->value);
  return out;
}

void ReturnHistogram::showBarTip(QMouseEvent* event) {
  const double x = plot_->xAxis->pixelToCoord(event->pos().x());
  for (auto it = bars_->data()->constBegin(); it != bars_->data()->constEnd(); ++it) {
    if (std::abs(x - it->key) <= 0.5 * bin_width_) {
      QToolTip::showText(event->globalPosition().toPoint(),
                         tr("%1 to %2: %3 episodes")
                             .arg(it->key - 0.5 * bin_width_, 0, 'f', 1)
                             .arg(it->key + 0.5 * bin_width_, 0, 'f', 1)
                             .arg(it->value),
                         plot_);
      return;
    }
  }
  QToolTip::hideText();
}

}  // namespace dstudio::viz
