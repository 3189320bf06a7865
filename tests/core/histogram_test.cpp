// Histogram binning against counts worked out by hand.

#include "dstudio/common/histogram.h"

#include <gtest/gtest.h>

#include <numeric>

namespace dstudio {
namespace {

TEST(Histogram, EqualBinsWithTheMaximumInTheLastBin) {
  const auto h = histogram({0, 1, 2, 3, 4, 5, 6, 7, 8, 10}, 5);
  EXPECT_DOUBLE_EQ(h.lo, 0.0);
  EXPECT_DOUBLE_EQ(h.width, 2.0);
  EXPECT_EQ(h.counts, (std::vector<std::int64_t>{2, 2, 2, 2, 2}));
  EXPECT_DOUBLE_EQ(h.center(4), 9.0);
}

TEST(Histogram, RiceRuleBetweenFiveAndSixty) {
  std::vector<double> v(1000);
  std::iota(v.begin(), v.end(), 0.0);
  EXPECT_EQ(histogram(v).counts.size(), 20u);  // 2 * 1000^(1/3)
  EXPECT_EQ(histogram({1, 2}).counts.size(), 5u);
  v.resize(1'000'000);
  std::iota(v.begin(), v.end(), 0.0);
  const auto big = histogram(v);
  EXPECT_EQ(big.counts.size(), 60u);
  EXPECT_EQ(std::accumulate(big.counts.begin(), big.counts.end(), std::int64_t{0}), 1'000'000);
}

TEST(Histogram, IdenticalValuesAndEmptyInput) {
  const auto h = histogram({3, 3, 3});
  ASSERT_EQ(h.counts.size(), 1u);
  EXPECT_EQ(h.counts[0], 3);
  EXPECT_DOUBLE_EQ(h.center(0), 3.0);
  EXPECT_TRUE(histogram({}).counts.empty());
}

}  // namespace
}  // namespace dstudio
