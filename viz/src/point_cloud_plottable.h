#pragma once
/// \file
/// A point cloud QCustomPlot draws as one raster: tens of thousands of scatter points without a
/// QCPGraph per group (which sorts its data and paints every marker with QPainter). Internal to
/// viz; the t-SNE view draws its tokens with it.

#include <qcustomplot.h>

#include <QColor>
#include <QImage>
#include <QPointF>
#include <cstdint>
#include <memory>
#include <vector>

namespace dstudio::viz {

/// Points at (x, y) coordinates of its key and value axes, each in a group that gives its colour,
/// marker and size. draw() rasterises them into an image of the axis rect by blending one
/// antialiased stamp per group (rendered once with QPainter) with integer src-over arithmetic,
/// so its cost grows with the points, not with QPainter calls. It takes no part in selection:
/// nearest() finds the point under the mouse.
class PointCloudPlottable : public QCPAbstractPlottable {
 public:
  enum class Marker { Disc, Triangle };
  /// A group's look: `colour` carries the alpha the points are blended with; `size` in px as
  /// QCPScatterStyle takes it.
  struct Style {
    QColor colour;
    Marker marker = Marker::Disc;
    double size = 5.0;
  };

  /// Registers with the plot of `key_axis` (as every QCP plottable does); not in the legend.
  PointCloudPlottable(QCPAxis* key_axis, QCPAxis* value_axis);

  /// The coordinates, N x 2 interleaved (x0, y0, x1, y1, ...); shared, so the caller's stored
  /// layouts are not copied. Null: nothing to draw.
  void setLayout(std::shared_ptr<const std::vector<double>> xy);
  /// The group of each point (indices into `styles`) and each group's look.
  void setGroups(std::vector<std::uint16_t> group_of_point, std::vector<Style> styles);
  /// The points to draw, in drawing order (later ones on top); points out of range are skipped.
  void setOrder(std::vector<int> order);

  [[nodiscard]] int pointCount() const { return xy_ ? static_cast<int>(xy_->size() / 2) : 0; }
  /// Points in the drawing order, i.e. drawn by the next draw (those inside the axis rect show).
  [[nodiscard]] int orderSize() const { return static_cast<int>(order_.size()); }
  /// The groups with at least one point in the drawing order.
  [[nodiscard]] int groupsInOrder() const;
  [[nodiscard]] const std::vector<Style>& styles() const { return styles_; }

  /// The point of the drawing order nearest to `pixel` (widget coordinates of the plot), within
  /// `radius` px; -1 when none is. O(N) with the axes' linear transform, no per-point QCPAxis
  /// calls.
  [[nodiscard]] int nearest(const QPointF& pixel, double radius) const;

  /// The scatter style the stamps are rendered from (and legend entries should show).
  [[nodiscard]] static QCPScatterStyle scatterStyle(const Style& style);

  // QCPAbstractPlottable
  double selectTest(const QPointF& pos, bool only_selectable,
                    QVariant* details = nullptr) const override;
  QCPRange getKeyRange(bool& found_range,
                       QCP::SignDomain in_sign_domain = QCP::sdBoth) const override;
  QCPRange getValueRange(bool& found_range, QCP::SignDomain in_sign_domain = QCP::sdBoth,
                         const QCPRange& in_key_range = QCPRange()) const override;

 protected:
  void draw(QCPPainter* painter) override;
  void drawLegendIcon(QCPPainter* painter, const QRectF& rect) const override;

 private:
  // A stamp's non-transparent pixels, row by row: `length` pixels from column `dx` of row `dy`,
  // stored from `offset` in `pixels` (premultiplied ARGB), followed by transparent ones up to
  // `padded`, a multiple of 4, so that whole vectors of 4 pixels can be blended.
  struct Span {
    int dy, dx, length, padded, offset;
  };
  struct Stamp {
    int size = 0;    // device pixels, square
    int centre = 0;  // the pixel holding the marker's centre
    int reach = 0;   // columns the padded spans cover
    std::vector<Span> spans;
    std::vector<std::uint32_t> pixels;
  };
  // Widget pixel = a * coordinate + b, per screen direction; `linear` false for log axes, which
  // go through coordsToPixels per point.
  struct Transform {
    bool linear = false;
    bool swap = false;  // keys run vertically: x comes from the value
    double ax = 0, bx = 0, ay = 0, by = 0;
  };

  [[nodiscard]] Transform transform() const;
  [[nodiscard]] QPointF toPixel(const Transform& t, int i) const {
    const auto at = static_cast<std::size_t>(i) * 2;
    const double x = (*xy_)[at], y = (*xy_)[at + 1];
    if (!t.linear) return coordsToPixels(x, y);
    return t.swap ? QPointF(t.ax * y + t.bx, t.ay * x + t.by)
                  : QPointF(t.ax * x + t.bx, t.ay * y + t.by);
  }
  void renderStamps(double ratio);
  QCPRange range(int column, bool& found, QCP::SignDomain domain) const;

  std::shared_ptr<const std::vector<double>> xy_;
  std::vector<std::uint16_t> group_;
  std::vector<Style> styles_;
  std::vector<int> order_;
  // min/max of x and y over every point of the layout, so the axes do not depend on the order.
  double lo_[2] = {0, 0}, hi_[2] = {0, 0};
  bool has_range_ = false;
  std::vector<Stamp> stamps_;
  double stamp_ratio_ = 0.0;  // the device pixel ratio the stamps were rendered at
  QImage image_;
};

}  // namespace dstudio::viz
