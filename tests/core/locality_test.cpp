// Locality on matrices with known answers: the identity is all lag 0, a causal uniform map has
// a lag profile worked out by hand, a step's three tokens share a lag, padding and signs are
// handled as the entropy handles them, and windows average alike.

#include "dstudio/analysis/locality.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

namespace dstudio::analysis {
namespace {

LayerMixing layer_of(int T, const std::function<double(int, int)>& weight, int heads = 1) {
  LayerMixing l{heads, T, std::vector<float>(static_cast<size_t>(heads * T * T), 0.0f),
                "attention"};
  for (int h = 0; h < heads; ++h)
    for (int i = 0; i < T; ++i)
      for (int j = 0; j <= i; ++j)
        l.values[static_cast<size_t>((h * T + i) * T + j)] = static_cast<float>(weight(i, j));
  return l;
}

TEST(Locality, TheIdentityIsAllLagZero) {
  const int T = 6;
  const std::vector<int> steps = {10, 11, 12, 13, 14, 15};
  const std::vector<char> valid(T, 1);
  const auto p =
      lag_profile(layer_of(T, [](int i, int j) { return i == j ? 1.0 : 0.0; }), steps, valid);
  ASSERT_EQ(p.weight.size(), 6u);
  EXPECT_DOUBLE_EQ(p.weight[0], 1.0);
  EXPECT_DOUBLE_EQ(p.mean_lag(), 0.0);
  EXPECT_DOUBLE_EQ(p.mass_within(1), 1.0);
}

TEST(Locality, UniformCausalRowsByHand) {
  // One token a step; query i spreads 1/(i+1) over lags 0..i. Over the T queries, lag L gets
  // (1/T) sum_{i >= L} 1/(i+1).
  const int T = 5;
  const std::vector<int> steps = {0, 1, 2, 3, 4};
  const std::vector<char> valid(T, 1);
  const auto p = lag_profile(layer_of(T, [](int i, int) { return 1.0 / (i + 1); }), steps, valid);
  double mean = 0.0;
  for (int L = 0; L < T; ++L) {
    double expected = 0.0;
    for (int i = L; i < T; ++i) expected += 1.0 / (i + 1) / T;
    EXPECT_NEAR(p.weight[static_cast<size_t>(L)], expected, 1e-7) << L;
    mean += L * expected;
  }
  EXPECT_NEAR(p.mean_lag(), mean, 1e-7);
  EXPECT_NEAR(std::accumulate(p.weight.begin(), p.weight.end(), 0.0), 1.0, 1e-7);
}

TEST(Locality, AStepsTokensShareALagAndPaddingAndSignsAreHandled) {
  // R, s, a of steps 0 and 1, the first step padded. The state token of step 1 puts 0.5 on itself
  // and -0.5 (a convolution's signed tap) on the padding: magnitudes over real keys only.
  const int T = 6;
  const std::vector<int> steps = {-1, -1, -1, 1, 1, 1};
  const std::vector<char> valid = {0, 0, 0, 1, 1, 1};
  const auto p = lag_profile(
      layer_of(T, [](int i, int j) { return j < 3 ? -0.5 : (i == j ? 0.5 : 0.1); }), steps, valid);
  ASSERT_EQ(p.weight.size(), 1u);
  EXPECT_NEAR(p.weight[0], 1.0, 1e-7);
  // Two real steps: the state token of step 1 puts 0.2 on step 0's tokens and 0.8 on its own.
  const std::vector<int> two = {0, 0, 0, 1, 1, 1};
  const std::vector<char> all(T, 1);
  const auto q = lag_profile(
      layer_of(T,
               [](int i, int j) {
                 return i == 4 ? (j < 3 ? 0.2 / 3 : j == 4 ? 0.8 : 0.0) : (i == j ? 1.0 : 0.0);
               }),
      two, all);
  // Six queries; only token 4 looks back (0.2 at lag 1).
  EXPECT_NEAR(q.weight[1], 0.2 / 6, 1e-7);
  EXPECT_NEAR(q.weight[0], 1.0 - 0.2 / 6, 1e-7);
  EXPECT_NEAR(q.mean_lag(), 0.2 / 6, 1e-7);
}

TEST(Locality, HeadsAndWindowsAverageAlike) {
  const int T = 3;
  models::WindowInspection a, b;
  for (auto* w : {&a, &b}) {
    w->token_steps = {0, 1, 2};
    w->valid = {1, 1, 1};
  }
  // Window a: head 1 the identity, head 2 all on the first token; window b: the identity.
  LayerMixing two_heads{2, T, std::vector<float>(2 * T * T, 0.0f), "attention"};
  for (int i = 0; i < T; ++i) {
    two_heads.values[static_cast<size_t>(i * T + i)] = 1.0f;
    two_heads.values[static_cast<size_t>(T * T + i * T)] = 1.0f;
  }
  a.layers = {two_heads};
  b.layers = {layer_of(T, [](int i, int j) { return i == j ? 1.0 : 0.0; })};
  const auto profiles = layer_lag_profiles({a, b});
  ASSERT_EQ(profiles.size(), 1u);
  // Head 2 of window a puts lag 0, 1, 2 on queries 0, 1, 2: (1/3 each); a = (2/3, 1/6, 1/6); b =
  // (1, 0, 0).
  EXPECT_NEAR(profiles[0].weight[0], (4.0 / 6 + 1.0) / 2, 1e-7);
  EXPECT_NEAR(profiles[0].weight[1], 1.0 / 12, 1e-7);
  EXPECT_NEAR(profiles[0].weight[2], 1.0 / 12, 1e-7);
}

}  // namespace
}  // namespace dstudio::analysis
