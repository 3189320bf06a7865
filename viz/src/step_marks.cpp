// Bookmarks on plots over steps. See step_marks.h.

#include "dstudio/viz/step_marks.h"

#include <qcustomplot.h>

namespace dstudio::viz {
namespace {

constexpr const char* kMarkProperty = "dstudio_step_mark";

}  // namespace

void draw_step_marks(QCustomPlot* plot, const std::vector<StepMark>& marks) {
  for (int i = plot->itemCount() - 1; i >= 0; --i)
    if (plot->item(i)->property(kMarkProperty).toBool()) plot->removeItem(i);
  const QColor colour(170, 120, 0);  // dark amber: apart from every trace colour of the palette
  for (const auto& m : marks) {
    auto* line = new QCPItemStraightLine(plot);
    line->setProperty(kMarkProperty, true);
    line->setPen(QPen(colour, 1.2, Qt::DashLine));
    line->point1->setCoords(m.step, 0);
    line->point2->setCoords(m.step, 1);
    auto* label = new QCPItemText(plot);
    label->setProperty(kMarkProperty, true);
    label->position->setTypeX(QCPItemPosition::ptPlotCoords);
    label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    label->position->setCoords(m.step, 0.0);
    label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    label->setText(m.name);
    label->setColor(colour);
    label->setPadding(QMargins(3, 1, 3, 1));
    label->setClipToAxisRect(true);
  }
  align_step_marks(plot);
}

void align_step_marks(QCustomPlot* plot) {
  const QCPRange range = plot->xAxis->range();
  for (int i = 0; i < plot->itemCount(); ++i) {
    auto* label = qobject_cast<QCPItemText*>(plot->item(i));
    if (!label || !label->property(kMarkProperty).toBool()) continue;
    // Names in the right part of the plot read leftwards from their line, so none runs off it.
    const bool left = label->position->coords().x() > range.lower + 0.6 * range.size();
    label->setPositionAlignment((left ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignTop);
  }
}

int step_mark_count(const QCustomPlot* plot) {
  int n = 0;
  for (int i = 0; i < plot->itemCount(); ++i)
    if (plot->item(i)->property(kMarkProperty).toBool() &&
        qobject_cast<QCPItemStraightLine*>(plot->item(i)))
      ++n;
  return n;
}

}  // namespace dstudio::viz
