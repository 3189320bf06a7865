#pragma once
/// \file
/// Equal-width histograms, as the dataset browser draws episode returns.

#include <cstdint>
#include <vector>

namespace dstudio {

/// Counts of `values` in `counts.size()` equal bins covering [lo, lo + width * bins].
struct Histogram {
  double lo = 0.0;
  double width = 1.0;
  std::vector<std::int64_t> counts;

  [[nodiscard]] double left_edge(std::size_t bin) const {
    return lo + width * static_cast<double>(bin);
  }
  [[nodiscard]] double center(std::size_t bin) const { return left_edge(bin) + 0.5 * width; }
  /// The bin holding `value` (clamped to the first and last bins).
  [[nodiscard]] std::size_t bin_of(double value) const;
};

/// Bins `values` into `bins` equal bins spanning their range; `bins` = 0 chooses by the Rice rule
/// (2 n^(1/3), between 5 and 60). The maximum falls into the last bin. Identical values get one
/// unit-wide bin centred on them. Empty input gives an empty histogram.
Histogram histogram(const std::vector<double>& values, int bins = 0);

}  // namespace dstudio
