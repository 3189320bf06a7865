// Attention entropy and correlation. See entropy.h.

#include "dstudio/analysis/entropy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace dstudio::analysis {

double entropy(std::span<const double> p) {
  double h = 0.0;
  for (double v : p)
    if (v > 0.0) h -= v * std::log(v);
  return h;
}

namespace {

// Calls f(i, row) for every real query i with its weights over real keys (others set to 0).
template <typename F>
void for_real_rows(std::span<const float> m, int T, std::span<const char> valid, F&& f) {
  std::vector<double> row(static_cast<std::size_t>(T));
  for (int i = 0; i < T; ++i) {
    if (!valid[static_cast<std::size_t>(i)]) continue;
    double total = 0.0;
    for (int j = 0; j < T; ++j) {
      row[static_cast<std::size_t>(j)] = valid[static_cast<std::size_t>(j)]
                                             ? std::abs(m[static_cast<std::size_t>(i) * T + j])
                                             : 0.0;
      total += row[static_cast<std::size_t>(j)];
    }
    // Attention rows already sum to 1; other mixers' equivalent rows are normalised.
    if (total > 0.0 && std::abs(total - 1.0) > 1e-6)
      for (auto& v : row) v /= total;
    f(i, row);
  }
}

}  // namespace

double attention_entropy(std::span<const float> matrix, int T, std::span<const char> valid) {
  double total = 0.0;
  int n = 0;
  for_real_rows(matrix, T, valid, [&](int, const std::vector<double>& row) {
    total += entropy(row);
    ++n;
  });
  return n ? total / n : 0.0;
}

double mean_head_entropy(std::span<const float> matrices, int heads, int T,
                         std::span<const char> valid) {
  const auto n = static_cast<std::size_t>(T) * static_cast<std::size_t>(T);
  double sum = 0.0;
  for (int h = 0; h < heads; ++h)
    sum += attention_entropy(matrices.subspan(n * static_cast<std::size_t>(h), n), T, valid);
  return heads > 0 ? sum / heads : 0.0;
}

double intra_step_entropy(std::span<const float> matrix, int T, std::span<const char> valid,
                          int group) {
  double total = 0.0;
  int n = 0;
  for_real_rows(matrix, T, valid, [&](int, const std::vector<double>& row) {
    for (int s = 0; s * group < T; ++s) {
      const auto first = row.begin() + s * group, last = row.begin() + std::min(T, (s + 1) * group);
      const double mass = std::accumulate(first, last, 0.0);
      if (mass <= 0.0) continue;
      std::vector<double> p(first, last);
      for (auto& v : p) v /= mass;
      total += entropy(p);
      ++n;
    }
  });
  return n ? total / n : 0.0;
}

double inter_step_entropy(std::span<const float> matrix, int T, std::span<const char> valid,
                          int group) {
  double total = 0.0;
  int n = 0;
  for_real_rows(matrix, T, valid, [&](int, const std::vector<double>& row) {
    std::vector<double> steps(static_cast<std::size_t>((T + group - 1) / group), 0.0);
    for (int j = 0; j < T; ++j)
      steps[static_cast<std::size_t>(j / group)] += row[static_cast<std::size_t>(j)];
    total += entropy(steps);
    ++n;
  });
  return n ? total / n : 0.0;
}

double pearson(std::span<const double> x, std::span<const double> y) {
  const std::size_t n = std::min(x.size(), y.size());
  if (n < 2) return std::numeric_limits<double>::quiet_NaN();
  const double mx = std::accumulate(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(n), 0.0) /
                    static_cast<double>(n);
  const double my = std::accumulate(y.begin(), y.begin() + static_cast<std::ptrdiff_t>(n), 0.0) /
                    static_cast<double>(n);
  double sxy = 0.0, sxx = 0.0, syy = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  // A series constant up to rounding (e.g. a pooling mixer's entropy) has no correlation.
  const auto flat = [&](double ss, double m) {
    return ss <= 1e-20 * static_cast<double>(n) * std::max(1.0, m * m);
  };
  if (flat(sxx, mx) || flat(syy, my)) return std::numeric_limits<double>::quiet_NaN();
  return sxy / std::sqrt(sxx * syy);
}

namespace {
std::vector<double> ranks(std::span<const double> v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double average = 0.5 * static_cast<double>(i + j) + 1.0;
    for (std::size_t k = i; k <= j; ++k) r[order[k]] = average;
    i = j + 1;
  }
  return r;
}
}  // namespace

double spearman(std::span<const double> x, std::span<const double> y) {
  const std::size_t n = std::min(x.size(), y.size());
  const auto rx = ranks(x.first(n)), ry = ranks(y.first(n));
  return pearson(rx, ry);
}

double student_t_975(int dof) {
  static constexpr double kTable[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                      2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                      2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                      2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  if (dof < 1) return std::numeric_limits<double>::quiet_NaN();
  if (dof <= 30) return kTable[dof - 1];
  const double z = 1.959963984540054, n = dof;
  return z + (z * z * z + z) / (4 * n) +
         (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * n * n);
}

MeanInterval mean_interval_95(std::span<const double> values) {
  MeanInterval m;
  m.n = static_cast<int>(values.size());
  if (values.empty()) {
    m.mean = m.low = m.high = std::numeric_limits<double>::quiet_NaN();
    return m;
  }
  m.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(m.n);
  m.low = m.high = m.mean;
  if (m.n < 2) return m;
  double ss = 0.0;
  for (double v : values) ss += (v - m.mean) * (v - m.mean);
  const double half =
      student_t_975(m.n - 1) * std::sqrt(ss / (m.n - 1)) / std::sqrt(static_cast<double>(m.n));
  m.low = m.mean - half;
  m.high = m.mean + half;
  return m;
}

MeanStd mean_std(std::span<const double> values) {
  MeanStd m;
  m.n = static_cast<int>(values.size());
  if (values.empty()) return m;
  m.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  double ss = 0.0;
  for (double v : values) ss += (v - m.mean) * (v - m.mean);
  m.std = std::sqrt(ss / static_cast<double>(values.size()));
  return m;
}

}  // namespace dstudio::analysis
