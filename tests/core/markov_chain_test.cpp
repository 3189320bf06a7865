// The Markov lab's chains: entropy rates against closed forms and against counts on long samples,
// the stationary law, the kernel's definition, and the ranges.

#include "dstudio/analysis/markov_chain.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

#include "dstudio/common/error.h"

namespace dstudio::analysis {
namespace {

TEST(MarkovChain, FirstOrderBinaryMatchesTheAppendixClosedForm) {
  for (auto [p, q] :
       std::vector<std::pair<double, double>>{{0.2, 0.3}, {0.05, 0.9}, {0.5, 0.5}, {0.7, 0.6}}) {
    const auto chain = MarkovChain::make(p, q);
    // pi = (q, p) / (p + q) for contexts 0 and 1.
    const auto pi = chain.stationary();
    EXPECT_NEAR(pi[0], q / (p + q), 1e-12);
    EXPECT_NEAR(pi[1], p / (p + q), 1e-12);
    EXPECT_NEAR(chain.entropy_rate(), binary_entropy_rate(p, q), 1e-12) << p << ' ' << q;
  }
  // h(0.5) = log 2, and a fair coin chain has that rate.
  EXPECT_NEAR(binary_entropy_rate(0.5, 0.5), std::log(2.0), 1e-15);
  // The hand value for p = 0.2, q = 0.3: (0.3 h(0.2) + 0.2 h(0.3)) / 0.5.
  const double h02 = -0.2 * std::log(0.2) - 0.8 * std::log(0.8),
               h03 = -0.3 * std::log(0.3) - 0.7 * std::log(0.7);
  EXPECT_NEAR(MarkovChain::make(0.2, 0.3).entropy_rate(), (0.3 * h02 + 0.2 * h03) / 0.5, 1e-12);
}

TEST(MarkovChain, SymmetricMultiStateChainHasTheUniformLawAndItsRate) {
  // Stay with 1 - p, move to each of the S - 1 others with p / (S - 1): the stationary law is
  // uniform and the rate is h(p) + p log(S - 1).
  for (int S : {3, 5, 8}) {
    const auto chain = MarkovChain::make(0.3, 0.0, 1, S);
    for (double w : chain.stationary()) EXPECT_NEAR(w, 1.0 / S, 1e-12);
    EXPECT_NEAR(chain.entropy_rate(), binary_entropy(0.3) + 0.3 * std::log(S - 1.0), 1e-12) << S;
  }
}

TEST(MarkovChain, KernelRowsAreLawsThatDependOnTheCounts) {
  const auto chain = MarkovChain::make(0.1, 0.25, 3);
  const auto k = chain.kernel();
  ASSERT_EQ(k.size(), 8u * 2u);
  for (int c = 0; c < 8; ++c) {
    EXPECT_NEAR(k[c * 2] + k[c * 2 + 1], 1.0, 1e-15);
    const int ones = (c & 1) + ((c >> 1) & 1) + ((c >> 2) & 1);
    EXPECT_NEAR(k[c * 2 + 1], 0.1 + (1 - 0.1 - 0.25) * ones / 3.0, 1e-15) << c;
  }
  // next_distribution reads the last m symbols of a sequence: 0 1 1 ends with two ones of three.
  const std::uint8_t seq[] = {1, 0, 1, 1};
  EXPECT_NEAR(chain.next_distribution(seq, 3)[1], 0.1 + 0.65 * 2 / 3.0, 1e-15);
  EXPECT_NEAR(chain.next_distribution(seq, 2)[1], 0.1 + 0.65 * 2 / 3.0, 1e-15);  // 1 0 1
  const std::uint8_t zeros[] = {0, 0, 0};
  EXPECT_NEAR(chain.next_distribution(zeros, 2)[1], 0.1, 1e-15);
}

TEST(MarkovChain, LongSamplesShowTheKernelAndTheEntropyRate) {
  // The plug-in estimate of H(x_{n+1} | last m) from one long sample converges to the rate.
  for (auto [order, states] : std::vector<std::pair<int, int>>{{1, 2}, {2, 2}, {3, 2}, {2, 3}}) {
    const auto chain = MarkovChain::make(0.15, 0.35, order, states);
    const int length = 400000;
    const auto x = chain.sample(1, length, 11);
    std::map<std::vector<int>, std::vector<double>> counts;
    for (int n = order - 1; n + 1 < length; ++n) {
      std::vector<int> context(x.begin() + n - order + 1, x.begin() + n + 1);
      auto& row = counts[context];
      row.resize(states);
      row[x[n + 1]] += 1.0;
    }
    double h = 0.0, total = length - order;
    for (const auto& [context, row] : counts) {
      double sum = 0.0;
      for (double c : row) sum += c;
      for (double c : row)
        if (c > 0) h -= c / total * std::log(c / sum);
    }
    EXPECT_NEAR(h, chain.entropy_rate(), 0.005) << order << ' ' << states;
  }
}

TEST(MarkovChain, HigherOrderDependsOnOlderSymbols) {
  // Order 2 is not order 1: its rate is below that of the first-order chain fitted to it (what
  // x_n alone predicts), which a pooling window of 1 can at best reach.
  const auto chain = MarkovChain::make(0.2, 0.3, 2);
  const auto x = chain.sample(1, 400000, 5);
  double c[2][2] = {{0, 0}, {0, 0}};
  for (size_t n = 0; n + 1 < x.size(); ++n) c[x[n]][x[n + 1]] += 1;
  double h1 = 0.0, total = static_cast<double>(x.size() - 1);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b) h1 -= c[a][b] / total * std::log(c[a][b] / (c[a][0] + c[a][1]));
  EXPECT_GT(h1, chain.entropy_rate() + 0.02);
}

TEST(MarkovChain, SamplesAreFixedBySeedAndStationaryFromTheStart) {
  const auto chain = MarkovChain::make(0.05, 0.2);
  EXPECT_EQ(chain.sample(3, 50, 7), chain.sample(3, 50, 7));
  EXPECT_NE(chain.sample(3, 50, 7), chain.sample(3, 50, 8));
  // The first symbol of many sequences follows pi = (0.8, 0.2), not a fixed start.
  const auto x = chain.sample(20000, 2, 3);
  double ones = 0;
  for (int b = 0; b < 20000; ++b) ones += x[static_cast<size_t>(b) * 2];
  EXPECT_NEAR(ones / 20000, 0.2, 0.015);
}

TEST(MarkovChain, RangesAreChecked) {
  EXPECT_THROW(MarkovChain::make(0.0, 0.3), UsageError);
  EXPECT_THROW(MarkovChain::make(0.2, 1.0), UsageError);
  EXPECT_THROW(MarkovChain::make(std::nan(""), 0.3), UsageError);
  EXPECT_THROW(MarkovChain::make(0.2, 0.3, 0), UsageError);
  EXPECT_THROW(MarkovChain::make(0.2, 0.3, 4), UsageError);
  EXPECT_THROW(MarkovChain::make(0.2, 0.3, 1, 9), UsageError);
  EXPECT_NO_THROW(MarkovChain::make(0.2, 0.0, 1, 3));  // q means nothing for S > 2
  EXPECT_THROW(MarkovChain::make(0.2, 0.3, 3).sample(1, 2, 0), UsageError);
}

}  // namespace
}  // namespace dstudio::analysis
