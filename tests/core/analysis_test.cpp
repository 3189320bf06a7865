// Attention maps and t-SNE on constructed cases with known answers.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "dstudio/analysis/attention_maps.h"
#include "dstudio/analysis/entropy.h"
#include "dstudio/analysis/tsne.h"
#include "dstudio/analysis/window_maps.h"
#include "dstudio/common/error.h"

namespace dstudio::analysis {
namespace {

// A causal layer whose head h attends uniformly (h = 0) or to itself only (h = 1).
LayerMixing two_head_layer(int T) {
  LayerMixing l{2, T, std::vector<float>(static_cast<std::size_t>(2 * T * T), 0.0f), "attention"};
  for (int i = 0; i < T; ++i) {
    for (int j = 0; j <= i; ++j)
      l.values[static_cast<std::size_t>(i * T + j)] = 1.0f / static_cast<float>(i + 1);
    l.values[static_cast<std::size_t>(T * T + i * T + i)] = 1.0f;
  }
  return l;
}

// Worked by hand: mean 3, sample std sqrt(2.5), t(0.975, 4) = 2.776.
TEST(Statistics, TheMeansIntervalOfKnownSamples) {
  const std::vector<double> five = {4, 1, 5, 3, 2};
  const auto m = mean_interval_95(five);
  EXPECT_EQ(m.n, 5);
  EXPECT_DOUBLE_EQ(m.mean, 3.0);
  EXPECT_NEAR(m.low, 3.0 - 2.776 * std::sqrt(2.5) / std::sqrt(5.0), 1e-12);
  EXPECT_NEAR(m.high, 4.962929, 1e-6);
  // Student's quantiles from statistical tables, beyond the built-in table too.
  EXPECT_DOUBLE_EQ(student_t_975(1), 12.706);
  EXPECT_NEAR(student_t_975(40), 2.0211, 2e-4);
  EXPECT_NEAR(student_t_975(120), 1.9799, 2e-4);
  EXPECT_NEAR(student_t_975(100000), 1.95998, 1e-4);
  const std::vector<double> one = {7.5};
  EXPECT_EQ(mean_interval_95(one).low, 7.5);
  EXPECT_EQ(mean_interval_95(one).high, 7.5);
  EXPECT_TRUE(std::isnan(mean_interval_95(std::vector<double>{}).mean));
}

TEST(AttentionMaps, HeadsLayersRolloutAndDifference) {
  const int T = 4;
  const auto layer = two_head_layer(T);
  EXPECT_DOUBLE_EQ(head_of(layer, 1).at(2, 2), 1.0);
  const auto mean = mean_over_heads(layer);
  EXPECT_DOUBLE_EQ(mean.at(3, 3), 0.5 * (0.25 + 1.0));
  EXPECT_DOUBLE_EQ(mean.at(3, 0), 0.125);
  EXPECT_DOUBLE_EQ(mean_over_layers({layer, layer}).at(3, 0), 0.125);
  // Rollout of one layer: 0.5 A + 0.5 I, rows renormalised (they already sum to 1).
  const auto one = attention_rollout({layer});
  EXPECT_DOUBLE_EQ(one.at(3, 0), 0.0625);
  EXPECT_DOUBLE_EQ(one.at(3, 3), 0.5 * mean.at(3, 3) + 0.5);
  // Two layers: the product; rows still sum to 1 and nothing appears above the diagonal.
  const auto two = attention_rollout({layer, layer});
  for (int i = 0; i < T; ++i) {
    double sum = 0.0;
    for (int j = 0; j < T; ++j) {
      sum += two.at(i, j);
      if (j > i) {
        EXPECT_EQ(two.at(i, j), 0.0);
      }
    }
    EXPECT_NEAR(sum, 1.0, 1e-12);
  }
  double by_hand = 0.0;  // (R)(3, 0) = sum_k R1(3, k) R1(k, 0)
  for (int k = 0; k < T; ++k) by_hand += one.at(3, k) * one.at(k, 0);
  EXPECT_NEAR(two.at(3, 0), by_hand, 1e-12);
  const auto d = difference(head_of(layer, 0), head_of(layer, 1));
  EXPECT_DOUBLE_EQ(d.at(1, 1), 0.5 - 1.0);
  EXPECT_THROW(difference(mean, TokenMatrix{3, std::vector<double>(9)}), dstudio::Error);
  EXPECT_EQ(token_labels({'R', 's', 'a', 'R'}, {-1, 4, 4, 5}),
            (std::vector<std::string>{"pad", "s4", "a4", "R5"}));
}

// Windows of two triplet steps (R, s, a): head 1 uniform, head 2 on itself.
models::WindowInspection triplet_window() {
  models::WindowInspection w;
  w.layers = {two_head_layer(6), two_head_layer(6)};
  w.token_types = {'R', 's', 'a', 'R', 's', 'a'};
  w.token_steps = {4, 4, 4, 5, 5, 5};
  w.valid.assign(6, 1);
  return w;
}

TEST(WindowMaps, SelectsAveragesAndCountsFromOne) {
  auto w = triplet_window();
  auto other = w;
  other.layers[1].values.assign(other.layers[1].values.size(),
                                0.0f);  // a second window: layer 2 all zero
  const std::vector<models::WindowInspection> windows{w, other};
  // Layer 2, head 2, averaged over the two windows: (1 + 0) / 2 on the diagonal.
  EXPECT_DOUBLE_EQ(select_map(windows, {MapKind::Layer, 2, 2}).at(3, 3), 0.5);
  EXPECT_DOUBLE_EQ(select_map(windows, {MapKind::Layer, 1, 1}).at(3, 0), 0.25);
  EXPECT_DOUBLE_EQ(select_map(windows, {MapKind::Layer, 1, 0}).at(3, 3), 0.5 * (0.25 + 1.0));
  std::string note;
  EXPECT_DOUBLE_EQ(select_map(windows, {MapKind::Layer, 1, 3}, &note).at(3, 3), 0.5 * (0.25 + 1.0));
  EXPECT_THAT(note, testing::HasSubstr("2 heads"));
  EXPECT_THROW(select_map(windows, {MapKind::Layer, 3, 0}), UsageError);
  EXPECT_THROW(select_map(windows, {MapKind::Layer, 0, 0}), UsageError);
  EXPECT_EQ(window_labels({w}), (std::vector<std::string>{"R4", "s4", "a4", "R5", "s5", "a5"}));
  EXPECT_EQ(window_labels(windows).back(), "a0");
}

TEST(WindowMaps, HeadEntropiesByHand) {
  const std::vector<models::WindowInspection> windows{triplet_window()};
  const auto heads = head_entropies(windows);
  ASSERT_EQ(heads.size(), 4u);
  EXPECT_EQ(heads[3].layer, 2);
  EXPECT_EQ(heads[3].head, 2);
  // Head 2 puts all weight on itself: zero entropy everywhere.
  EXPECT_DOUBLE_EQ(heads[1].entropy, 0.0);
  // Head 1, uniform over the i + 1 keys of query i: the mean of log(i + 1) over six queries.
  double expected = 0.0;
  for (int i = 0; i < 6; ++i) expected += std::log(static_cast<double>(i + 1)) / 6.0;
  EXPECT_NEAR(heads[0].entropy, expected, 1e-6);
  EXPECT_TRUE(std::isfinite(heads[0].intra_step));
  // One token a step (merged): nothing within a step.
  auto merged = triplet_window();
  merged.token_types.assign(6, 't');
  EXPECT_TRUE(std::isnan(head_entropies({merged})[0].intra_step));
}

// Three clusters far apart in 20 dimensions: t-SNE must keep every point nearest to points of
// its own cluster, and Barnes-Hut must land near the exact gradient's KL divergence.
TEST(Tsne, KeepsWellSeparatedClustersSeparated) {
  const int per = 60, d = 20, n = 3 * per;
  std::mt19937 rng(1);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(n) * d);
  std::vector<int> label(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    label[static_cast<std::size_t>(i)] = i / per;
    for (int q = 0; q < d; ++q)
      x[static_cast<std::size_t>(i) * d + q] =
          g(rng) + (q == label[static_cast<std::size_t>(i)] ? 30.0f : 0.0f);
  }
  TsneConfig c;
  c.perplexity = 15;
  c.iterations = 500;
  c.threads = 2;
  c.snapshot_every = 100;
  const auto r = tsne(x, n, d, c);
  ASSERT_EQ(r.embedding.size(), static_cast<std::size_t>(n) * 2);
  EXPECT_EQ(r.snapshots.size(), 5u);
  int wrong = 0;
  for (int i = 0; i < n; ++i) {
    double best = 1e300;
    int nearest = -1;
    for (int j = 0; j < n; ++j) {
      if (j == i) continue;
      const double dx = r.embedding[static_cast<std::size_t>(i) * 2] -
                        r.embedding[static_cast<std::size_t>(j) * 2];
      const double dy = r.embedding[static_cast<std::size_t>(i) * 2 + 1] -
                        r.embedding[static_cast<std::size_t>(j) * 2 + 1];
      if (dx * dx + dy * dy < best) best = dx * dx + dy * dy, nearest = j;
    }
    wrong += label[static_cast<std::size_t>(nearest)] != label[static_cast<std::size_t>(i)];
  }
  EXPECT_EQ(wrong, 0);
  // Cluster centres are far apart compared with the clusters' spread.
  double cx[3] = {0, 0, 0}, cy[3] = {0, 0, 0}, spread = 0.0;
  for (int i = 0; i < n; ++i) {
    cx[i / per] += r.embedding[static_cast<std::size_t>(i) * 2] / per;
    cy[i / per] += r.embedding[static_cast<std::size_t>(i) * 2 + 1] / per;
  }
  for (int i = 0; i < n; ++i)
    spread = std::max(spread,
                      std::hypot(r.embedding[static_cast<std::size_t>(i) * 2] - cx[i / per],
                                 r.embedding[static_cast<std::size_t>(i) * 2 + 1] - cy[i / per]));
  for (int a = 0; a < 3; ++a)
    for (int b = a + 1; b < 3; ++b)
      EXPECT_GT(std::hypot(cx[a] - cx[b], cy[a] - cy[b]), 2.0 * spread);
  EXPECT_GT(r.kl, 0.0);
  c.theta = 0.0;  // the exact gradient
  c.snapshot_every = 0;
  const auto exact = tsne(x, n, d, c);
  EXPECT_NEAR(r.kl, exact.kl, 0.05 * exact.kl);
}

// The snapshot callback sees each kept layout as it is taken: the same iterations and the same
// coordinates as `snapshots`, in order, and the last one is the final embedding.
TEST(Tsne, SnapshotCallbackSeesTheKeptLayouts) {
  const int n = 60, d = 5;
  std::mt19937 rng(3);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(n) * d);
  for (auto& v : x) v = g(rng);
  TsneConfig c;
  c.perplexity = 10;
  c.iterations = 300;
  c.snapshot_every = 10;
  std::vector<int> seen_iterations;
  std::vector<std::vector<double>> seen;
  c.on_snapshot = [&](int iteration, const std::vector<double>& y) {
    seen_iterations.push_back(iteration);
    seen.push_back(y);
  };
  const auto r = tsne(x, n, d, c);
  ASSERT_EQ(r.snapshots.size(), 30u);
  EXPECT_EQ(seen_iterations, r.snapshot_iterations);
  EXPECT_EQ(seen_iterations.front(), 10);
  EXPECT_EQ(seen_iterations.back(), 300);
  ASSERT_EQ(seen.size(), r.snapshots.size());
  for (std::size_t k = 0; k < seen.size(); ++k)
    EXPECT_EQ(seen[k], r.snapshots[k]) << "snapshot " << k;
  EXPECT_EQ(seen.back(), r.embedding);
  EXPECT_NE(seen.front(), seen.back());  // the layout moved
  // A viewer that keeps its own layouts: the same ones are sent, none kept in the result.
  const auto kept = seen;
  seen.clear();
  seen_iterations.clear();
  c.keep_snapshots = false;
  const auto unkept = tsne(x, n, d, c);
  EXPECT_TRUE(unkept.snapshots.empty());
  EXPECT_TRUE(unkept.snapshot_iterations.empty());
  EXPECT_EQ(seen, kept);
  EXPECT_EQ(unkept.embedding, r.embedding);
  c.keep_snapshots = true;
  // Without snapshots the callback is never called.
  c.snapshot_every = 0;
  seen.clear();
  tsne(x, n, d, c);
  EXPECT_TRUE(seen.empty());
}

TEST(Tsne, RefusesTooFewPointsForThePerplexity) {
  std::vector<float> x(20 * 3, 1.0f);
  EXPECT_THROW(tsne(x, 20, 3, {}), dstudio::UsageError);  // perplexity 30 needs more than 90 points
  EXPECT_THROW(tsne(x, 20, 4, {}), dstudio::UsageError);  // sizes do not match
}

}  // namespace
}  // namespace dstudio::analysis
