#pragma once
/// \file
/// Bookmarks drawn on a plot whose x axis is steps (the viewer's timeline, a run's curves): a
/// dashed line at each bookmarked step with its name along the top, so a moment named once is seen
/// wherever that axis is drawn.

#include <QString>
#include <vector>

class QCustomPlot;

namespace dstudio::viz {

/// One bookmark as a plot shows it.
struct StepMark {
  double step = 0.0;
  QString name;
};

/// Replaces the marks `plot` shows with `marks` (none: takes them all away). Does not replot.
void draw_step_marks(QCustomPlot* plot, const std::vector<StepMark>& marks);

/// Sets which side of its line each name is written on for the x range `plot` shows now (names
/// in its right part read leftwards); call it after changing the range.
void align_step_marks(QCustomPlot* plot);

/// How many marks `plot` shows (what tests count).
int step_mark_count(const QCustomPlot* plot);

}  // namespace dstudio::viz
