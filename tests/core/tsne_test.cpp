// t-SNE at scale: the FFT and Barnes-Hut repulsion against every pair, approximate neighbours
// against exact ones, FFT t-SNE against Barnes-Hut t-SNE, the automatic choices, and progress
// and cancellation during the neighbour search.

#include "dstudio/analysis/tsne.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>

namespace dstudio::analysis {
namespace {

std::size_t at(int i) {
  return static_cast<std::size_t>(i);
}

// `n` points in `d` dimensions around `clusters` centres N(0, spread^2), unit noise.
std::vector<float> clustered(int n, int d, int clusters, double spread, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> centres(at(clusters) * at(d)), x(at(n) * at(d));
  for (auto& v : centres) v = static_cast<float>(spread) * g(rng);
  for (int i = 0; i < n; ++i)
    for (int q = 0; q < d; ++q)
      x[at(i) * at(d) + at(q)] = centres[at(i % clusters) * at(d) + at(q)] + g(rng);
  return x;
}

// A 2-D layout like t-SNE's late in a run: a few clusters tens of units apart.
std::vector<double> layout(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> g(0.0, 1.0);
  std::vector<double> y(at(n) * 2);
  const double centres[4][2] = {{-20, -5}, {15, 12}, {3, -18}, {8, 4}};
  for (int i = 0; i < n; ++i)
    for (int a = 0; a < 2; ++a) y[at(i) * 2 + at(a)] = centres[i % 4][a] + 3.0 * g(rng);
  return y;
}

// ||a - b|| / ||b||.
double relative_error(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0.0, norm = 0.0;
  for (std::size_t e = 0; e < b.size(); ++e) {
    diff += (a[e] - b[e]) * (a[e] - b[e]);
    norm += b[e] * b[e];
  }
  return std::sqrt(diff / norm);
}

// The repulsion from the FFT grid matches the sum over every pair: closely with 5 nodes a box
// and half-unit boxes, and about as well as Barnes-Hut at theta 0.5 with FIt-SNE's defaults
// (3 nodes, unit boxes).
TEST(TsneRepulsion, FftMatchesEveryPair) {
  const auto y = layout(400, 7);
  TsneConfig c;
  c.threads = 2;
  const auto exact = tsne_repulsion(y, TsneMethod::Exact, c);
  c.interpolation_points = 5;
  c.boxes_per_unit = 2.0;
  const auto fine = tsne_repulsion(y, TsneMethod::Fft, c);
  EXPECT_LT(relative_error(fine.force, exact.force), 1e-3);
  EXPECT_NEAR(fine.z, exact.z, 1e-4 * exact.z);
  // The KL's grid (5 nodes) on layouts too wide for half-unit boxes within 1,024 nodes a side:
  // this one stretched to about 200 and 400 units, where its boxes become one unit wide.
  for (const double stretch : {4.0, 8.0}) {
    auto wide = y;
    for (auto& v : wide) v *= stretch;
    const auto [lo, hi] = std::minmax_element(wide.begin(), wide.end());
    c.boxes_per_unit = kl_grid_boxes_per_unit(*hi - *lo);
    EXPECT_EQ(c.boxes_per_unit, 1.0);
    const double z = tsne_repulsion(wide, TsneMethod::Exact, c).z;
    EXPECT_NEAR(tsne_repulsion(wide, TsneMethod::Fft, c).z, z, 2e-4 * z)
        << "stretched " << stretch << " times";
  }
  EXPECT_EQ(kl_grid_boxes_per_unit(60.0), 2.0);
  c.interpolation_points = 3;
  c.boxes_per_unit = 1.0;
  const auto coarse = tsne_repulsion(y, TsneMethod::Fft, c);
  std::printf(
      "relative error of the forces: fine grid %.2g, FIt-SNE's grid %.2g, Barnes-Hut %.2g\n",
      relative_error(fine.force, exact.force), relative_error(coarse.force, exact.force),
      relative_error(tsne_repulsion(y, TsneMethod::BarnesHut, c).force, exact.force));
  EXPECT_LT(relative_error(coarse.force, exact.force), 5e-2);
  EXPECT_NEAR(coarse.z, exact.z, 5e-3 * exact.z);
  // Barnes-Hut at theta 0.5 for comparison, and a layout too small for 50 unit boxes.
  const auto bh = tsne_repulsion(y, TsneMethod::BarnesHut, c);
  EXPECT_LT(relative_error(bh.force, exact.force), 5e-2);
  auto small = y;
  for (auto& v : small) v *= 0.01;
  EXPECT_LT(relative_error(tsne_repulsion(small, TsneMethod::Fft, c).force,
                           tsne_repulsion(small, TsneMethod::Exact, c).force),
            1e-3);
}

// Approximate neighbours find nearly all the exact ones on clustered points.
TEST(TsneNeighbourSearch, ApproximateRecallsTheExactNeighbours) {
  const int n = 4000, d = 32, k = 91;
  const auto x = clustered(n, d, 10, 4.0, 11);
  const auto exact = nearest_neighbours(x, n, d, k, TsneNeighbours::Exact, 2);
  const auto approx = nearest_neighbours(x, n, d, k, TsneNeighbours::Approximate, 2);
  ASSERT_EQ(approx.index.size(), exact.index.size());
  std::size_t found = 0;
  for (int i = 0; i < n; ++i) {
    const std::set<int> truth(exact.index.begin() + static_cast<std::ptrdiff_t>(at(i) * k),
                              exact.index.begin() + static_cast<std::ptrdiff_t>(at(i + 1) * k));
    for (int m = 0; m < k; ++m) {
      const int j = approx.index[at(i) * k + at(m)];
      EXPECT_NE(j, i);
      found += truth.count(j);
      if (m > 0) {
        EXPECT_LE(approx.dist2[at(i) * k + at(m) - 1], approx.dist2[at(i) * k + at(m)]);
      }
    }
  }
  const double recall = static_cast<double>(found) / (static_cast<double>(n) * k);
  EXPECT_GE(recall, 0.9);
  // The exact search agrees with a direct computation for one point.
  std::vector<std::pair<double, int>> all;
  for (int j = 1; j < n; ++j) {
    double s = 0.0;
    for (int q = 0; q < d; ++q)
      s += (x[at(q)] - x[at(j) * d + at(q)]) * (x[at(q)] - x[at(j) * d + at(q)]);
    all.emplace_back(s, j);
  }
  std::sort(all.begin(), all.end());
  for (int m = 0; m < k; ++m)
    EXPECT_NEAR(exact.dist2[at(m)], all[at(m)].first, 1e-3 * all[at(m)].first);
}

// The FFT gradient with approximate neighbours lands within 5% of Barnes-Hut with exact ones.
TEST(Tsne, FftAndApproximateNeighboursMatchBarnesHut) {
  const int n = 2000, d = 32;
  const auto x = clustered(n, d, 8, 4.0, 5);
  TsneConfig c;
  c.threads = 2;
  c.iterations = 600;  // both layouts settle by then; keeps the test short
  c.method = TsneMethod::BarnesHut;
  c.neighbours = TsneNeighbours::Exact;
  const auto bh = tsne(x, n, d, c);
  EXPECT_EQ(bh.method, TsneMethod::BarnesHut);
  EXPECT_EQ(bh.neighbours, TsneNeighbours::Exact);
  c.method = TsneMethod::Fft;
  c.neighbours = TsneNeighbours::Approximate;
  const auto fft = tsne(x, n, d, c);
  EXPECT_EQ(fft.method, TsneMethod::Fft);
  EXPECT_EQ(fft.neighbours, TsneNeighbours::Approximate);
  EXPECT_TRUE(fft.kl_exact);
  EXPECT_GT(fft.kl, 0.0);
  std::printf("KL: Barnes-Hut with exact neighbours %.4f, FFT with approximate neighbours %.4f\n",
              bh.kl, fft.kl);
  EXPECT_NEAR(fft.kl, bh.kl, 0.05 * bh.kl);
  // Points of one cluster stay together: nearly every point's nearest point is of its cluster.
  int wrong = 0;
  for (int i = 0; i < n; ++i) {
    double best = 1e300;
    int nearest = -1;
    for (int j = 0; j < n; ++j) {
      if (j == i) continue;
      const double dx = fft.embedding[at(i) * 2] - fft.embedding[at(j) * 2],
                   dy = fft.embedding[at(i) * 2 + 1] - fft.embedding[at(j) * 2 + 1];
      if (dx * dx + dy * dy < best) best = dx * dx + dy * dy, nearest = j;
    }
    wrong += nearest % 8 != i % 8;
  }
  EXPECT_LT(wrong, n / 100);
}

// Auto: exact gradient at theta 0, Barnes-Hut below fft_from_points, FFT from there; exact
// neighbours below approximate_from_points.
// The names the command line takes are the names reports print.
TEST(Tsne, MethodsAndNeighbourSearchesAreNamedBothWays) {
  for (const auto m : {TsneMethod::Auto, TsneMethod::Exact, TsneMethod::BarnesHut, TsneMethod::Fft})
    EXPECT_EQ(tsne_method_named(to_string(m)), m);
  for (const auto m : {TsneNeighbours::Auto, TsneNeighbours::Exact, TsneNeighbours::Approximate})
    EXPECT_EQ(tsne_neighbours_named(to_string(m)), m);
  EXPECT_EQ(tsne_method_named("barnes-hut"), TsneMethod::BarnesHut);
  EXPECT_EQ(tsne_method_named("FFT"), TsneMethod::Auto);
  EXPECT_EQ(tsne_neighbours_named("approximate"), TsneNeighbours::Approximate);
}

TEST(Tsne, AutoChoosesByTheNumberOfPoints) {
  const int n = 200, d = 8;
  const auto x = clustered(n, d, 4, 4.0, 2);
  TsneConfig c;
  c.perplexity = 10;
  c.iterations = 50;
  c.exaggeration_iterations = 25;
  auto r = tsne(x, n, d, c);
  EXPECT_EQ(r.method, TsneMethod::BarnesHut);
  EXPECT_EQ(r.neighbours, TsneNeighbours::Exact);
  c.fft_from_points = 200;
  c.approximate_from_points = 200;
  r = tsne(x, n, d, c);
  EXPECT_EQ(r.method, TsneMethod::Fft);
  EXPECT_EQ(r.neighbours, TsneNeighbours::Approximate);
  c.theta = 0.0;
  EXPECT_EQ(tsne(x, n, d, c).method, TsneMethod::Exact);
  EXPECT_STREQ(to_string(TsneMethod::BarnesHut), "barnes-hut");
  EXPECT_STREQ(to_string(TsneNeighbours::Approximate), "approximate");
}

// The neighbour search reports progress as it goes and stops when cancelled.
TEST(Tsne, NeighbourSearchReportsProgressAndCancels) {
  const int n = 6000, d = 64;
  const auto x = clustered(n, d, 10, 4.0, 3);
  for (const auto search : {TsneNeighbours::Exact, TsneNeighbours::Approximate}) {
    TsneConfig c;
    c.threads = 2;
    c.neighbours = search;
    Progress progress;
    int reports = 0;
    double last = -1.0;
    bool monotonic = true;
    progress.report = [&](double fraction, std::string_view stage) {
      monotonic = monotonic && fraction >= last;
      last = fraction;
      if (stage.rfind("neighbours", 0) == 0 && fraction > 0.0 && fraction < 0.1) ++reports;
      if (fraction > 0.02) progress.cancel.cancel();  // still searching for neighbours
    };
    EXPECT_THROW(tsne(x, n, d, c, progress), Cancelled) << to_string(search);
    EXPECT_GE(reports, 1) << to_string(search);
    EXPECT_LT(last, 0.1) << to_string(search);  // it stopped within the neighbour search
    EXPECT_TRUE(monotonic);
  }
}

}  // namespace
}  // namespace dstudio::analysis
