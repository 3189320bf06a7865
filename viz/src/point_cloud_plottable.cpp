// A point cloud drawn as one raster. See point_cloud_plottable.h.

#include "point_cloud_plottable.h"

#include <algorithm>
#include <cmath>
#include <limits>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace dstudio::viz {
namespace {

// x * a / 255 on the four bytes of premultiplied ARGB at once, two channels per multiply (the
// arithmetic of Qt's own raster engine).
inline std::uint32_t byte_mul(std::uint32_t x, std::uint32_t a) {
  std::uint32_t t = (x & 0xff00ffu) * a;
  t = ((t + ((t >> 8) & 0xff00ffu) + 0x800080u) >> 8) & 0xff00ffu;
  x = ((x >> 8) & 0xff00ffu) * a;
  x = (x + ((x >> 8) & 0xff00ffu) + 0x800080u) & 0xff00ff00u;
  return x | t;
}

// Source over destination, both premultiplied.
inline std::uint32_t src_over(std::uint32_t s, std::uint32_t d) {
  return s + byte_mul(d, 255u - (s >> 24));
}

#if defined(__SSE2__)
// The same for 4 pixels at once, in the same integer arithmetic (16-bit lanes).
inline __m128i src_over4(__m128i s, __m128i d) {
  const __m128i mask = _mm_set1_epi32(0x00ff00ff);
  const __m128i half = _mm_set1_epi16(0x80);
  __m128i a = _mm_srli_epi32(s, 24);
  a = _mm_sub_epi16(_mm_set1_epi16(255), _mm_or_si128(a, _mm_slli_epi32(a, 16)));
  __m128i rb = _mm_mullo_epi16(_mm_and_si128(d, mask), a);
  __m128i ag = _mm_mullo_epi16(_mm_srli_epi16(d, 8), a);
  rb = _mm_srli_epi16(_mm_add_epi16(_mm_add_epi16(rb, _mm_srli_epi16(rb, 8)), half), 8);
  ag = _mm_andnot_si128(mask, _mm_add_epi16(_mm_add_epi16(ag, _mm_srli_epi16(ag, 8)), half));
  return _mm_add_epi32(s, _mm_or_si128(rb, ag));
}
#endif

// Blends `length` pixels, padded to `padded` with transparent ones (which leave dst as it is).
inline void blend_span(std::uint32_t* dst, const std::uint32_t* src, [[maybe_unused]] int length,
                       [[maybe_unused]] int padded) {
#if defined(__SSE2__)
  for (int k = 0; k < padded; k += 4) {
    auto* d = reinterpret_cast<__m128i*>(dst + k);
    _mm_storeu_si128(d, src_over4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + k)),
                                  _mm_loadu_si128(d)));
  }
#else
  for (int k = 0; k < length; ++k) dst[k] = src_over(src[k], dst[k]);
#endif
}

// floor for pixel positions already known to lie within a few thousand pixels of the image:
// truncation of a positive number, without a call to std::floor.
inline int floor_near(double v) {
  constexpr int kShift = 1 << 20;
  return static_cast<int>(v + kShift) - kShift;
}

}  // namespace

PointCloudPlottable::PointCloudPlottable(QCPAxis* key_axis, QCPAxis* value_axis)
    : QCPAbstractPlottable(key_axis, value_axis) {
  // One legend entry cannot show several groups: the owner adds one per group.
  removeFromLegend();
  setSelectable(QCP::stNone);
}

void PointCloudPlottable::setLayout(std::shared_ptr<const std::vector<double>> xy) {
  xy_ = std::move(xy);
  has_range_ = false;
  if (!xy_) return;
  double lo[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  double hi[2] = {-lo[0], -lo[1]};
  const auto& v = *xy_;
  for (std::size_t i = 0; i + 1 < v.size(); i += 2) {
    // NaN fails both comparisons and stays out of the range.
    if (v[i] < lo[0]) lo[0] = v[i];
    if (v[i] > hi[0]) hi[0] = v[i];
    if (v[i + 1] < lo[1]) lo[1] = v[i + 1];
    if (v[i + 1] > hi[1]) hi[1] = v[i + 1];
  }
  has_range_ = lo[0] <= hi[0] && lo[1] <= hi[1];
  std::copy(lo, lo + 2, lo_);
  std::copy(hi, hi + 2, hi_);
}

void PointCloudPlottable::setGroups(std::vector<std::uint16_t> group_of_point,
                                    std::vector<Style> styles) {
  group_ = std::move(group_of_point);
  styles_ = std::move(styles);
  stamp_ratio_ = 0.0;  // rendered again at the next draw
}

void PointCloudPlottable::setOrder(std::vector<int> order) {
  order_ = std::move(order);
}

int PointCloudPlottable::groupsInOrder() const {
  std::vector<char> seen(styles_.size(), 0);
  int groups = 0;
  for (int i : order_) {
    const auto at = static_cast<std::size_t>(i);
    if (at >= group_.size() || group_[at] >= seen.size() || seen[group_[at]]) continue;
    seen[group_[at]] = 1;
    ++groups;
  }
  return groups;
}

QCPScatterStyle PointCloudPlottable::scatterStyle(const Style& style) {
  // QCP's triangle is an outline, its disc filled: the look the view always had.
  return {style.marker == Marker::Triangle ? QCPScatterStyle::ssTriangle : QCPScatterStyle::ssDisc,
          style.colour, style.colour, style.size};
}

double PointCloudPlottable::selectTest(const QPointF&, bool, QVariant*) const {
  return -1.0;
}

QCPRange PointCloudPlottable::range(int column, bool& found, QCP::SignDomain domain) const {
  found = false;
  if (!has_range_) return {};
  if (domain == QCP::sdBoth) {
    found = true;
    return {lo_[column], hi_[column]};
  }
  // Log axes ask for one sign only: rare, so computed when asked.
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  const auto& v = *xy_;
  for (std::size_t i = static_cast<std::size_t>(column); i < v.size(); i += 2) {
    const double c = v[i];
    if ((domain == QCP::sdPositive && c > 0) || (domain == QCP::sdNegative && c < 0))
      lo = std::min(lo, c), hi = std::max(hi, c);
  }
  found = lo <= hi;
  return found ? QCPRange(lo, hi) : QCPRange();
}

QCPRange PointCloudPlottable::getKeyRange(bool& found_range, QCP::SignDomain in_sign_domain) const {
  return range(0, found_range, in_sign_domain);
}

QCPRange PointCloudPlottable::getValueRange(bool& found_range, QCP::SignDomain in_sign_domain,
                                            const QCPRange&) const {
  return range(1, found_range, in_sign_domain);
}

PointCloudPlottable::Transform PointCloudPlottable::transform() const {
  Transform t;
  QCPAxis* key = mKeyAxis.data();
  QCPAxis* value = mValueAxis.data();
  if (!key || !value || key->scaleType() != QCPAxis::stLinear ||
      value->scaleType() != QCPAxis::stLinear)
    return t;
  // Two points of each axis give its affine map; a reversed axis just has a negative slope.
  const auto affine = [](QCPAxis* axis, double& a, double& b) {
    const QCPRange r = axis->range();
    const double lo = r.lower, hi = r.upper > r.lower ? r.upper : r.lower + 1.0;
    const double p_lo = axis->coordToPixel(lo), p_hi = axis->coordToPixel(hi);
    a = (p_hi - p_lo) / (hi - lo);
    b = p_lo - a * lo;
  };
  double ak = 0, bk = 0, av = 0, bv = 0;
  affine(key, ak, bk);
  affine(value, av, bv);
  t.swap = key->orientation() != Qt::Horizontal;
  if (t.swap)
    t.ax = av, t.bx = bv, t.ay = ak, t.by = bk;
  else
    t.ax = ak, t.bx = bk, t.ay = av, t.by = bv;
  t.linear =
      std::isfinite(t.ax) && std::isfinite(t.bx) && std::isfinite(t.ay) && std::isfinite(t.by);
  return t;
}

int PointCloudPlottable::nearest(const QPointF& pixel, double radius) const {
  if (!xy_ || !mKeyAxis || !mValueAxis) return -1;
  const Transform t = transform();
  const int n = pointCount();
  int best = -1;
  double nearest = radius * radius;
  for (int i : order_) {
    if (i < 0 || i >= n) continue;
    const QPointF p = toPixel(t, i);
    const double dx = p.x() - pixel.x(), dy = p.y() - pixel.y();
    if (dx * dx + dy * dy <= nearest) nearest = dx * dx + dy * dy, best = i;
  }
  return best;
}

void PointCloudPlottable::renderStamps(double ratio) {
  stamps_.clear();
  for (const Style& style : styles_) {
    Stamp s;
    // The marker, its 1 px pen and a pixel of antialiasing around it.
    const int half = static_cast<int>(std::ceil((style.size / 2.0 + 2.0) * ratio));
    s.size = 2 * half + 1;
    s.centre = half;
    QImage image(s.size, s.size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    image.setDevicePixelRatio(ratio);
    {
      QCPPainter painter(&image);
      // As QCP draws scatters: antialiased, which also shifts by half a (logical) pixel.
      painter.setAntialiasing(true);
      const QCPScatterStyle scatter = scatterStyle(style);
      scatter.applyTo(&painter, QPen(style.colour));
      // (c + 0.5) * ratio = centre + 0.5: the marker is centred on pixel `centre`.
      const double c = (s.centre + 0.5) / ratio - 0.5;
      scatter.drawShape(&painter, c, c);
    }
    for (int y = 0; y < s.size; ++y) {
      const auto* row = reinterpret_cast<const std::uint32_t*>(image.constScanLine(y));
      int x0 = 0, x1 = s.size;
      while (x0 < x1 && row[x0] == 0) ++x0;
      while (x1 > x0 && row[x1 - 1] == 0) --x1;
      if (x0 == x1) continue;
      const int padded = (x1 - x0 + 3) / 4 * 4;
      s.spans.push_back({y, x0, x1 - x0, padded, static_cast<int>(s.pixels.size())});
      s.pixels.insert(s.pixels.end(), row + x0, row + x1);
      s.pixels.resize(s.pixels.size() + static_cast<std::size_t>(padded - (x1 - x0)), 0u);
      s.reach = std::max(s.reach, x0 + padded);
    }
    stamps_.push_back(std::move(s));
  }
  stamp_ratio_ = ratio;
}

void PointCloudPlottable::draw(QCPPainter* painter) {
  if (!xy_ || order_.empty() || styles_.empty() || !mKeyAxis || !mValueAxis) return;
  const QRect rect = mKeyAxis->axisRect()->rect();
  if (rect.isEmpty()) return;
  // Device pixels per logical one: the screen's ratio, times any scaling of an export (toPixmap).
  double ratio = painter->device() ? painter->device()->devicePixelRatioF() : 1.0;
  const QTransform& world = painter->transform();
  const double scale = std::hypot(world.m11(), world.m12());
  if (scale > 0 && std::isfinite(scale)) ratio *= scale;
  if (stamp_ratio_ != ratio || stamps_.size() != styles_.size()) renderStamps(ratio);

  const QSize size(static_cast<int>(std::ceil(rect.width() * ratio)),
                   static_cast<int>(std::ceil(rect.height() * ratio)));
  if (image_.size() != size) image_ = QImage(size, QImage::Format_ARGB32_Premultiplied);
  image_.fill(Qt::transparent);
  image_.setDevicePixelRatio(ratio);

  const Transform t = transform();
  const int n = pointCount();
  const int w = size.width(), h = size.height();
  auto* bits = reinterpret_cast<std::uint32_t*>(image_.bits());
  const auto stride = static_cast<std::ptrdiff_t>(image_.bytesPerLine() / 4);
  // QCP draws an antialiased marker at pixel p + 0.5 (logical): the same here, in device pixels
  // relative to the image.
  const double left = rect.left() - 0.5, top = rect.top() - 0.5;
  for (int i : order_) {
    if (i < 0 || i >= n) continue;
    const std::size_t g =
        static_cast<std::size_t>(i) < group_.size() ? group_[static_cast<std::size_t>(i)] : 0u;
    if (g >= stamps_.size()) continue;
    const Stamp& s = stamps_[g];
    const QPointF p = toPixel(t, i);
    const double fx = (p.x() - left) * ratio - s.centre, fy = (p.y() - top) * ratio - s.centre;
    // Also rejects NaN and points far outside.
    if (!(fx > -s.size && fx < w && fy > -s.size && fy < h)) continue;
    const int ox = floor_near(fx), oy = floor_near(fy);
    if (ox >= 0 && oy >= 0 && ox + s.reach <= w && oy + s.size <= h) {
      std::uint32_t* corner = bits + oy * stride + ox;
      for (const Span& span : s.spans)
        blend_span(corner + span.dy * stride + span.dx, s.pixels.data() + span.offset, span.length,
                   span.padded);
      continue;
    }
    // At the edge of the axis rect: clipped, one pixel at a time.
    for (const Span& span : s.spans) {
      const int y = oy + span.dy;
      if (y < 0 || y >= h) continue;
      int x0 = ox + span.dx;
      const int x1 = std::min(x0 + span.length, w);
      const std::uint32_t* src = s.pixels.data() + span.offset;
      if (x0 < 0) src -= x0, x0 = 0;
      std::uint32_t* dst = bits + y * stride;
      for (int x = x0; x < x1; ++x, ++src) dst[x] = src_over(*src, dst[x]);
    }
  }
  painter->save();
  // Undo QCP's half-pixel shift of antialiased painting: the image lands pixel for pixel.
  painter->setAntialiasing(false);
  painter->setRenderHint(QPainter::SmoothPixmapTransform, false);
  painter->drawImage(QPointF(rect.topLeft()), image_);
  painter->restore();
}

void PointCloudPlottable::drawLegendIcon(QCPPainter* painter, const QRectF& rect) const {
  if (styles_.empty()) return;
  const QCPScatterStyle scatter = scatterStyle(styles_.front());
  scatter.applyTo(painter, QPen(styles_.front().colour));
  scatter.drawShape(painter, rect.center());
}

}  // namespace dstudio::viz
