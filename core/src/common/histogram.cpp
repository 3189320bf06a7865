#include "dstudio/common/histogram.h"

#include <algorithm>
#include <cmath>

namespace dstudio {

std::size_t Histogram::bin_of(double value) const {
  if (counts.empty()) return 0;
  const double position = std::floor((value - lo) / width);
  return static_cast<std::size_t>(
      std::clamp(position, 0.0, static_cast<double>(counts.size() - 1)));
}

Histogram histogram(const std::vector<double>& values, int bins) {
  Histogram h;
  if (values.empty()) return h;
  const auto [min_it, max_it] = std::minmax_element(values.begin(), values.end());
  const double lo = *min_it, hi = *max_it;
  if (bins <= 0) {
    const double rice = 2.0 * std::cbrt(static_cast<double>(values.size()));
    bins = static_cast<int>(std::clamp(std::ceil(rice), 5.0, 60.0));
  }
  if (hi == lo) {
    h.lo = lo - 0.5;
    h.width = 1.0;
    h.counts.assign(1, static_cast<std::int64_t>(values.size()));
    return h;
  }
  h.lo = lo;
  h.width = (hi - lo) / bins;
  h.counts.assign(static_cast<std::size_t>(bins), 0);
  for (double v : values) ++h.counts[h.bin_of(v)];
  return h;
}

}  // namespace dstudio
