// Attention entropy on matrices with known answers, HiFormer's Theorem 3.1, and the correlations.

#include "dstudio/analysis/entropy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace dstudio::analysis {
namespace {

TEST(Entropy, OneHotRowsHaveZeroAndUniformRowsLogN) {
  const int T = 6;
  std::vector<float> one_hot(T * T, 0.0f), uniform(T * T, 0.0f);
  for (int i = 0; i < T; ++i) {
    one_hot[static_cast<std::size_t>(i * T + i / 2)] = 1.0f;
    for (int j = 0; j <= i; ++j)
      uniform[static_cast<std::size_t>(i * T + j)] = 1.0f / static_cast<float>(i + 1);
  }
  const std::vector<char> all(T, 1);
  EXPECT_DOUBLE_EQ(attention_entropy(one_hot, T, all), 0.0);
  // Causal uniform rows: row i is uniform over i + 1 keys.
  double expected = 0.0;
  for (int i = 0; i < T; ++i) expected += std::log(i + 1.0) / T;
  EXPECT_NEAR(attention_entropy(uniform, T, all), expected, 1e-6);
  // Padding: the first 3 tokens are not real; real queries 3..5 over real keys only.
  std::vector<float> padded(T * T, 0.0f);
  for (int i = 3; i < T; ++i)
    for (int j = 3; j <= i; ++j)
      padded[static_cast<std::size_t>(i * T + j)] = 1.0f / static_cast<float>(i - 2);
  const std::vector<char> tail = {0, 0, 0, 1, 1, 1};
  EXPECT_NEAR(attention_entropy(padded, T, tail),
              (std::log(1.0) + std::log(2.0) + std::log(3.0)) / 3.0, 1e-6);
  // A convolution's equivalent rows do not sum to 1: they are normalised (magnitudes) first.
  const std::vector<float> taps = {0.3f, 0.0f, -0.3f, 0.3f};
  EXPECT_NEAR(attention_entropy(taps, 2, std::vector<char>{1, 1}), (0.0 + std::log(2.0)) / 2.0,
              1e-6);
}

TEST(Entropy, GroupingNeverRaisesEntropy) {
  // Theorem 3.1 on random causal attention: H(P) >= H(P'), P' the weights summed per step, and the
  // chain rule H(P) = H(P') + sum_s P'(s) H(P | s) holds row by row.
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  const int T = 12;
  const std::vector<char> all(T, 1);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<float> m(T * T, 0.0f);
    for (int i = 0; i < T; ++i) {
      float sum = 0.0f;
      for (int j = 0; j <= i; ++j)
        sum += (m[static_cast<std::size_t>(i * T + j)] = std::pow(u(rng), 4.0f));
      for (int j = 0; j <= i; ++j) m[static_cast<std::size_t>(i * T + j)] /= sum;
    }
    EXPECT_GE(attention_entropy(m, T, all) + 1e-12, inter_step_entropy(m, T, all));
  }
  // One row, by hand: weights (0.1, 0.2, 0.3 | 0.4, 0, 0) over two steps of three tokens.
  const std::vector<float> row = {0.1f, 0.2f, 0.3f, 0.4f, 0.0f, 0.0f};
  std::vector<float> m(36, 0.0f);
  std::copy(row.begin(), row.end(), m.begin() + 30);  // the last query
  const std::vector<char> last_only = {1, 1, 1, 1, 1, 1};
  const double h_full = entropy(std::vector<double>{0.1, 0.2, 0.3, 0.4});
  const double h_steps = entropy(std::vector<double>{0.6, 0.4});
  const double h_within = 0.6 * entropy(std::vector<double>{1.0 / 6, 2.0 / 6, 3.0 / 6});
  EXPECT_NEAR(h_full, h_steps + h_within, 1e-12);
  EXPECT_GE(h_full, h_steps);
}

TEST(Entropy, IntraAndInterStepByHand) {
  // Two steps of three tokens; query i attends uniformly to keys 0..i.
  const int T = 6;
  std::vector<float> m(T * T, 0.0f);
  for (int i = 0; i < T; ++i)
    for (int j = 0; j <= i; ++j)
      m[static_cast<std::size_t>(i * T + j)] = 1.0f / static_cast<float>(i + 1);
  const std::vector<char> all(T, 1);
  // Within a step the weights are uniform over the keys it holds: (query, step) pairs give
  // log 1, log 2, log 3 (queries 0-2), then log 3 + log 1, log 3 + log 2, log 3 + log 3.
  EXPECT_NEAR(intra_step_entropy(m, T, all), (2 * std::log(2.0) + 5 * std::log(3.0)) / 9.0, 1e-6);
  // Over steps: queries 0-2 see one step (0); then masses (3/4, 1/4), (3/5, 2/5), (1/2, 1/2).
  const double inter = (entropy(std::vector<double>{0.75, 0.25}) +
                        entropy(std::vector<double>{0.6, 0.4}) + std::log(2.0)) /
                       6.0;
  EXPECT_NEAR(inter_step_entropy(m, T, all), inter, 1e-6);
}

TEST(Correlation, PearsonAndSpearmanOnKnownValues) {
  const std::vector<double> x = {1, 2, 3, 4, 5}, y = {2, 1, 4, 3, 5};
  EXPECT_NEAR(pearson(x, y), 0.8, 1e-12);
  EXPECT_NEAR(spearman(x, y), 0.8, 1e-12);
  const std::vector<double> cubic = {1, 8, 27, 64, 125};
  EXPECT_NEAR(spearman(x, cubic), 1.0, 1e-12);
  EXPECT_LT(pearson(x, cubic), 1.0);
  // Ties take their average rank: ranks (1.5, 1.5, 3) against (1, 2, 3).
  EXPECT_NEAR(spearman(std::vector<double>{1, 1, 2}, std::vector<double>{1, 2, 3}),
              pearson(std::vector<double>{1.5, 1.5, 3}, std::vector<double>{1, 2, 3}), 1e-12);
  EXPECT_TRUE(std::isnan(pearson(std::vector<double>{1, 1, 1}, std::vector<double>{1, 2, 3})));
  const double third = 1.0 / 3.0;  // constant up to rounding
  EXPECT_TRUE(std::isnan(pearson(std::vector<double>{third * 3.0, 1.0, third + third + third},
                                 std::vector<double>{1, 2, 3})));
  const auto ms = mean_std(std::vector<double>{1, 3});
  EXPECT_DOUBLE_EQ(ms.mean, 2.0);
  EXPECT_DOUBLE_EQ(ms.std, 1.0);
}

}  // namespace
}  // namespace dstudio::analysis
