#pragma once
// Colour-blind-safe colours (Okabe & Ito) used across the studio's views.

#include <QColor>
#include <vector>

namespace dstudio::viz::colors {
inline const QColor kBlue{0, 114, 178};
inline const QColor kVermillion{213, 94, 0};
inline const QColor kSkyBlue{86, 180, 233};
inline const QColor kBluishGreen{0, 158, 115};
inline const QColor kGrey{120, 120, 120};
inline const QColor kOrange{230, 159, 0};

// The Okabe-Ito set in an order that stays distinct in grey scale too, for categories.
inline const std::vector<QColor>& categorical() {
  static const std::vector<QColor> c = {kBlue, kVermillion, kBluishGreen, kOrange, QColor(204, 121, 167), kSkyBlue,
                                        QColor(240, 228, 66), QColor(0, 0, 0)};
  return c;
}
}  // namespace dstudio::viz::colors
