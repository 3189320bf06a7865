#pragma once
/// \file
/// A histogram of episode returns (QCustomPlot), with an optional marker at one episode's return.

#include <QWidget>
#include <vector>

class QCustomPlot;
class QCPBars;
class QCPItemStraightLine;

namespace dstudio::viz {

/// Draws a histogram of returns; hovering a bar shows its range and count.
class ReturnHistogram : public QWidget {
  Q_OBJECT
 public:
  explicit ReturnHistogram(QWidget* parent = nullptr);

  /// Replaces the histogram with one of `returns` (complete episodes).
  void setReturns(const std::vector<double>& returns);
  /// Marks `value` with a vertical line; NaN hides the marker.
  void markReturn(double value);

  /// Bars currently drawn (bin centre, count), for tests and export.
  [[nodiscard]] std::vector<std::pair<double, double>> bars() const;
  [[nodiscard]] QCustomPlot* plot() const { return plot_; }

 private:
  void showBarTip(QMouseEvent* event);

  QCustomPlot* plot_;
  QCPBars* bars_;
  QCPItemStraightLine* marker_;
  double bin_width_ = 1.0;
};

}  // namespace dstudio::viz
