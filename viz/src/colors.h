#pragma once
// Colour-blind-safe colours (Okabe & Ito) used across the studio's views.

#include <QColor>
#include <vector>

#include "dstudio/common/palette.h"

namespace dstudio::viz::colors {
inline QColor of(palette::Rgb c) {
  return QColor(c.r, c.g, c.b);
}
inline const QColor kBlue = of(palette::kBlue);
inline const QColor kVermillion = of(palette::kVermillion);
inline const QColor kSkyBlue = of(palette::kSkyBlue);
inline const QColor kBluishGreen = of(palette::kBluishGreen);
inline const QColor kGrey = of(palette::kGrey);
inline const QColor kOrange = of(palette::kOrange);

// The Okabe-Ito set in an order that stays distinct in grey scale too, for categories.
inline const std::vector<QColor>& categorical() {
  static const std::vector<QColor> c = {
      kBlue,    kVermillion,          kBluishGreen,   kOrange, QColor(204, 121, 167),
      kSkyBlue, QColor(240, 228, 66), QColor(0, 0, 0)};
  return c;
}
}  // namespace dstudio::viz::colors
