#pragma once
/// \file
/// core's number formatters (dstudio/common/text.h) as QStrings, for labels and table cells: one
/// missing-value dash, one fixed-point form and one count of things in every view.

#include <QString>

#include "dstudio/common/text.h"

namespace dstudio::viz {

/// What a view shows for a missing number (kMissingNumber).
inline QString missing_text() {
  return QString::fromUtf8(kMissingNumber.data(), static_cast<qsizetype>(kMissingNumber.size()));
}

/// `v` with `decimals` digits after the point; missing_text() when it is not finite.
inline QString fixed_text(double v, int decimals) {
  return QString::fromStdString(fixed_number(v, decimals));
}

/// A count with its noun, singular for one: "1 window", "1,024 windows" (grouped as the locale
/// writes numbers).
inline QString count_text(qint64 n, const QString& one, const QString& many) {
  return QStringLiteral("%L1 %2").arg(n).arg(n == 1 ? one : many);
}

}  // namespace dstudio::viz
