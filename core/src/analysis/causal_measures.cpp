// Patching's fraction recovered and ridge probes; see causal_measures.h.

#include "dstudio/analysis/causal_measures.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace dstudio::analysis {

Recovered fraction_recovered(std::span<const float> clean, std::span<const float> other,
                             std::span<const float> patched, int B, int A, double floor) {
  const auto n = static_cast<std::size_t>(B) * A;
  if (clean.size() != n || other.size() != n || patched.size() != n)
    throw std::invalid_argument("fraction_recovered: the actions are not B x A");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Recovered r;
  r.per_dim.assign(static_cast<std::size_t>(A), 0.0);
  r.windows_per_dim.assign(static_cast<std::size_t>(A), 0);
  double sum = 0.0;
  for (int b = 0; b < B; ++b) {
    double moved = 0.0, change = 0.0;
    for (int a = 0; a < A; ++a) {
      const auto i = static_cast<std::size_t>(b) * A + a;
      const double dp = patched[i] - clean[i], dc = other[i] - clean[i];
      moved += dp * dp;
      change += dc * dc;
      if (std::abs(dc) >= floor) {
        r.per_dim[static_cast<std::size_t>(a)] += std::abs(dp) / std::abs(dc);
        ++r.windows_per_dim[static_cast<std::size_t>(a)];
      }
    }
    if (std::sqrt(change) >= floor) {
      sum += std::sqrt(moved) / std::sqrt(change);
      ++r.windows;
    }
  }
  r.norm = r.windows ? sum / r.windows : nan;
  for (int a = 0; a < A; ++a) {
    auto& v = r.per_dim[static_cast<std::size_t>(a)];
    const int k = r.windows_per_dim[static_cast<std::size_t>(a)];
    v = k ? v / k : nan;
  }
  return r;
}

double RidgeProbe::predict(const float* x) const {
  double y = intercept;
  for (std::size_t d = 0; d < weights.size(); ++d)
    if (scale[d] > 0) y += weights[d] * (x[d] - mean[d]) / scale[d];
  return y;
}

RidgeProbe fit_ridge(std::span<const float> X, std::span<const double> y, int D,
                     std::span<const int64_t> rows, double lambda) {
  const std::size_t n = rows.size(), d = static_cast<std::size_t>(D);
  if (n < 2) throw std::invalid_argument("a ridge probe needs at least 2 rows");
  RidgeProbe p;
  p.mean.assign(d, 0.0);
  p.scale.assign(d, 0.0);
  p.weights.assign(d, 0.0);
  double y_mean = 0.0;
  for (const auto r : rows) {
    for (std::size_t j = 0; j < d; ++j) p.mean[j] += X[static_cast<std::size_t>(r) * d + j];
    y_mean += y[static_cast<std::size_t>(r)];
  }
  for (auto& m : p.mean) m /= static_cast<double>(n);
  y_mean /= static_cast<double>(n);
  for (const auto r : rows)
    for (std::size_t j = 0; j < d; ++j) {
      const double v = X[static_cast<std::size_t>(r) * d + j] - p.mean[j];
      p.scale[j] += v * v;
    }
  for (auto& s : p.scale) s = std::sqrt(s / static_cast<double>(n));
  // Normal equations (Z'Z + lambda I) w = Z'(y - mean y) on the standardised features Z,
  // solved by Cholesky; a constant feature's row and column are the identity (weight 0).
  std::vector<double> G(d * d, 0.0), rhs(d, 0.0), z(d);
  for (const auto r : rows) {
    for (std::size_t j = 0; j < d; ++j)
      z[j] =
          p.scale[j] > 0 ? (X[static_cast<std::size_t>(r) * d + j] - p.mean[j]) / p.scale[j] : 0.0;
    const double t = y[static_cast<std::size_t>(r)] - y_mean;
    for (std::size_t j = 0; j < d; ++j) {
      rhs[j] += z[j] * t;
      for (std::size_t k = 0; k <= j; ++k) G[j * d + k] += z[j] * z[k];
    }
  }
  for (std::size_t j = 0; j < d; ++j) G[j * d + j] += p.scale[j] > 0 ? lambda : 1.0;
  for (std::size_t j = 0; j < d; ++j) {  // G = L L' in place (lower triangle)
    for (std::size_t k = 0; k < j; ++k) {
      double s = G[j * d + k];
      for (std::size_t m = 0; m < k; ++m) s -= G[j * d + m] * G[k * d + m];
      G[j * d + k] = s / G[k * d + k];
    }
    double s = G[j * d + j];
    for (std::size_t m = 0; m < j; ++m) s -= G[j * d + m] * G[j * d + m];
    if (s <= 0) throw std::invalid_argument("ridge: the system is not positive definite");
    G[j * d + j] = std::sqrt(s);
  }
  for (std::size_t j = 0; j < d; ++j) {  // L u = rhs
    double s = rhs[j];
    for (std::size_t m = 0; m < j; ++m) s -= G[j * d + m] * rhs[m];
    rhs[j] = s / G[j * d + j];
  }
  for (std::size_t j = d; j-- > 0;) {  // L' w = u
    double s = rhs[j];
    for (std::size_t m = j + 1; m < d; ++m) s -= G[m * d + j] * p.weights[m];
    p.weights[j] = s / G[j * d + j];
  }
  p.intercept = y_mean;
  return p;
}

double r_squared(const RidgeProbe& probe, std::span<const float> X, std::span<const double> y,
                 int D, std::span<const int64_t> rows) {
  double mean = 0.0;
  for (const auto r : rows) mean += y[static_cast<std::size_t>(r)];
  mean /= static_cast<double>(rows.size());
  double sse = 0.0, sst = 0.0;
  for (const auto r : rows) {
    const double t = y[static_cast<std::size_t>(r)];
    const double e =
        t - probe.predict(&X[static_cast<std::size_t>(r) * static_cast<std::size_t>(D)]);
    sse += e * e;
    sst += (t - mean) * (t - mean);
  }
  return sst > 0 ? 1.0 - sse / sst : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace dstudio::analysis
