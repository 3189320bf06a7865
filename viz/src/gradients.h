#pragma once
// Colour maps shared by the views and the exported figures: viridis for magnitudes (colour-blind
// safe, readable in grey), and blue-white-red centred at zero for differences.

#include <qcustomplot.h>

#include <vector>

namespace dstudio::viz {

inline QCPColorGradient viridis() {
  QCPColorGradient g;
  g.clearColorStops();
  const std::vector<QColor> stops = {
      QColor(68, 1, 84),    QColor(72, 40, 120),  QColor(62, 74, 137),  QColor(49, 104, 142),
      QColor(38, 130, 142), QColor(31, 158, 137), QColor(53, 183, 121), QColor(110, 206, 88),
      QColor(181, 222, 43), QColor(253, 231, 37)};
  for (std::size_t i = 0; i < stops.size(); ++i)
    g.setColorStopAt(static_cast<double>(i) / (stops.size() - 1), stops[i]);
  g.setNanHandling(QCPColorGradient::nhTransparent);
  return g;
}

// Blue - white - red (ColorBrewer RdBu, reversed), centred by a symmetric data range.
inline QCPColorGradient diverging() {
  QCPColorGradient g;
  g.clearColorStops();
  g.setColorStopAt(0.0, QColor(33, 102, 172));
  g.setColorStopAt(0.25, QColor(146, 197, 222));
  g.setColorStopAt(0.5, QColor(247, 247, 247));
  g.setColorStopAt(0.75, QColor(244, 165, 130));
  g.setColorStopAt(1.0, QColor(178, 24, 43));
  g.setNanHandling(QCPColorGradient::nhTransparent);
  return g;
}

}  // namespace dstudio::viz
