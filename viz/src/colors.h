#pragma once
// Colour-blind-safe colours (Okabe & Ito) used across the studio's views.

#include <QColor>

namespace dstudio::viz::colors {
inline const QColor kBlue{0, 114, 178};
inline const QColor kVermillion{213, 94, 0};
inline const QColor kSkyBlue{86, 180, 233};
inline const QColor kBluishGreen{0, 158, 115};
inline const QColor kGrey{120, 120, 120};
}  // namespace dstudio::viz::colors
