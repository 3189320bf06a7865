// Patching's fraction recovered and the ridge probes against values worked by hand.

#include "dstudio/analysis/causal_measures.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace {

using dstudio::analysis::fit_ridge;
using dstudio::analysis::fraction_recovered;
using dstudio::analysis::r_squared;

TEST(FractionRecovered, AveragesTheRatioOfDistancesOverWindowsAboveTheFloor) {
  // Window 1: clean (0, 0), other (3, 4) (change 5), patched (0.6, 0.8): 1 / 5 = 0.2 in norm,
  // 0.6 / 3 = 0.2 and 0.8 / 4 = 0.2 per dimension.
  // Window 2: clean (1, 1), other (1, 3) (change 2), patched (2, 3): sqrt(1 + 4) / 2 in norm;
  // dimension 1 changes by 0 (< floor: left out), dimension 2 by 2 / 2 = 1.
  // Window 3: other equals clean: left out of every mean.
  const std::vector<float> clean{0, 0, 1, 1, 5, 5}, other{3, 4, 1, 3, 5, 5},
      patched{0.6f, 0.8f, 2, 3, 7, 7};
  const auto r = fraction_recovered(clean, other, patched, 3, 2, 1e-3);
  EXPECT_EQ(r.windows, 2);
  EXPECT_NEAR(r.norm, (0.2 + std::sqrt(5.0) / 2) / 2, 1e-6);
  ASSERT_EQ(r.per_dim.size(), 2u);
  EXPECT_NEAR(r.per_dim[0], 0.2, 1e-6);
  EXPECT_EQ(r.windows_per_dim[0], 1);
  EXPECT_NEAR(r.per_dim[1], (0.2 + 1.0) / 2, 1e-6);
  EXPECT_EQ(r.windows_per_dim[1], 2);
}

TEST(FractionRecovered, IsNotANumberWhenEveryWindowIsUnderTheFloor) {
  const std::vector<float> same{1, 2}, patched{3, 4};
  const auto r = fraction_recovered(same, same, patched, 1, 2, 1e-3);
  EXPECT_EQ(r.windows, 0);
  EXPECT_TRUE(std::isnan(r.norm));
  EXPECT_TRUE(std::isnan(r.per_dim[0]));
  EXPECT_THROW(fraction_recovered(same, same, {patched.data(), 1}, 1, 2), std::invalid_argument);
}

TEST(RidgeProbe, OneFeatureShrinksByTheClosedForm) {
  // x = 1, 2, 3 (mean 2, std sqrt(2/3)); z = (x - 2) / std = -1.2247, 0, 1.2247; y = 2, 4, 7
  // (mean 13/3). w = sum z (y - mean) / (sum z^2 + lambda) = 1.2247 * 5 / (3 + 1).
  const std::vector<float> X{1, 2, 3};
  const std::vector<double> y{2, 4, 7};
  const std::vector<int64_t> rows{0, 1, 2};
  const auto p = fit_ridge(X, y, 1, rows, 1.0);
  const double s = std::sqrt(2.0 / 3.0);
  EXPECT_NEAR(p.mean[0], 2.0, 1e-12);
  EXPECT_NEAR(p.scale[0], s, 1e-12);
  EXPECT_NEAR(p.weights[0], (1 / s) * 5 / 4, 1e-9);
  EXPECT_NEAR(p.intercept, 13.0 / 3, 1e-12);
  const float x4 = 4;
  EXPECT_NEAR(p.predict(&x4), 13.0 / 3 + (1 / s) * 5 / 4 * (2 / s), 1e-9);
}

TEST(RidgeProbe, RecoversALinearMapOnHeldOutRowsAndIgnoresAConstantFeature) {
  // y = 3 x1 - 2 x2 + 5, x3 constant; fitted on 0..19, tested on 20..39 with almost no penalty.
  std::vector<float> X;
  std::vector<double> y;
  std::vector<int64_t> fit, test;
  for (int i = 0; i < 40; ++i) {
    const float x1 = std::sin(0.7f * i), x2 = std::cos(1.3f * i);
    X.insert(X.end(), {x1, x2, 4.0f});
    y.push_back(3.0 * x1 - 2.0 * x2 + 5.0);
    (i < 20 ? fit : test).push_back(i);
  }
  const auto p = fit_ridge(X, y, 3, fit, 1e-9);
  EXPECT_EQ(p.weights[2], 0.0);
  EXPECT_NEAR(p.weights[0] / p.scale[0], 3.0, 1e-5);
  EXPECT_NEAR(p.weights[1] / p.scale[1], -2.0, 1e-5);
  EXPECT_NEAR(r_squared(p, X, y, 3, test), 1.0, 1e-9);
  // A probe that predicts the held-out mean has R^2 0; one that misses by more, below 0.
  const auto flat = fit_ridge(X, y, 3, fit, 1e12);
  EXPECT_LT(r_squared(flat, X, y, 3, test), 0.01);
  std::vector<double> constant(40, 1.0);
  EXPECT_TRUE(std::isnan(r_squared(p, X, constant, 3, test)));
}

TEST(RidgeProbe, TwoFeaturesMatchTheNormalEquationsSolvedByHand) {
  // x1 = (-1, 0, 1, 0) and x2 = (0, 1, 0, -1) have mean 0 and std sqrt(1/2), so z = x sqrt(2):
  // orthogonal, z'z = 4 each. y = (1, 2, 3, 6) has mean 3, y - 3 = (-2, -1, 0, 3). With
  // lambda = 4 the system is diagonal: w1 = z1'(y - 3) / 8 = 2 sqrt(2) / 8, w2 = -4 sqrt(2) / 8.
  const std::vector<float> X{-1, 0, 0, 1, 1, 0, 0, -1};
  const std::vector<double> y{1, 2, 3, 6};
  const std::vector<int64_t> rows{0, 1, 2, 3};
  const auto p = fit_ridge(X, y, 2, rows, 4.0);
  const double r2 = std::sqrt(2.0);
  EXPECT_NEAR(p.weights[0], 2 * r2 / 8, 1e-12);
  EXPECT_NEAR(p.weights[1], -4 * r2 / 8, 1e-12);
}

}  // namespace
