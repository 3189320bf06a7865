#pragma once
// Two panes in a splitter, the room beyond their sizes shared out by stretch factors: how the
// studio's panels lay out their parts.

#include <QSplitter>

namespace dstudio::studio {

inline QSplitter* paneSplitter(Qt::Orientation orientation, QWidget* first, QWidget* second,
                               int first_stretch, int second_stretch) {
  auto* split = new QSplitter(orientation);
  split->addWidget(first);
  split->addWidget(second);
  split->setStretchFactor(0, first_stretch);
  split->setStretchFactor(1, second_stretch);
  return split;
}

}  // namespace dstudio::studio
