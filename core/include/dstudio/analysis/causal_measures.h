#pragma once
/// \file
/// The numbers the causal analyses report, free of any model: the fraction of an action change
/// that a patch recovers, and ridge probes with their held-out R^2. docs/analyses.md defines each.

#include <cstdint>
#include <span>
#include <vector>

namespace dstudio::analysis {

/// How much of the change from the clean to the other action a patch recovers, averaged over
/// windows: ||a_patched - a_clean|| / ||a_other - a_clean|| in norm, and |.| / |.| per action
/// dimension. A window (or a dimension of it) whose clean and other actions are closer than
/// `floor` says nothing about recovery and is left out of that mean; how many were kept is counted.
struct Recovered {
  double norm = 0.0;            ///< NaN when every window is under the floor
  std::vector<double> per_dim;  ///< A values, NaN where every window is under the floor
  int windows = 0;              ///< windows kept for the norm
  std::vector<int> windows_per_dim;
};
/// Actions are (B, A) row-major.
Recovered fraction_recovered(std::span<const float> clean, std::span<const float> other,
                             std::span<const float> patched, int B, int A, double floor = 1e-3);

/// A ridge regression fitted on standardised features: y ~ w . (x - mean) / std + b.
struct RidgeProbe {
  std::vector<double> mean, scale, weights;
  double intercept = 0.0;
  [[nodiscard]] double predict(const float* x) const;
};
/// Fits rows `rows` of X (N, D row-major) to y (N) with penalty `lambda` on the standardised
/// weights (a feature constant on these rows gets weight 0). Throws std::invalid_argument for
/// fewer than 2 rows.
RidgeProbe fit_ridge(std::span<const float> X, std::span<const double> y, int D,
                     std::span<const int64_t> rows, double lambda);
/// 1 - SSE / SST of the probe on rows `rows` (SST about their own mean); NaN when y is constant
/// there.
double r_squared(const RidgeProbe& probe, std::span<const float> X, std::span<const double> y,
                 int D, std::span<const int64_t> rows);

}  // namespace dstudio::analysis
