// The Markov lab's facts: the loss reaches the entropy rate where the mixer can see the chain's
// memory and stays visibly above it where it cannot; the gap is a KL divergence (never negative);
// the pooling mixer's matrix is the average it is defined as; cancelling stops the run.

#include "dstudio/models/markov_lab.h"

#include <gtest/gtest.h>

#include <cmath>

#include "dstudio/common/error.h"

namespace dstudio::models {
namespace {

MarkovLabResult run(LabMixer mixer, int window, int order = 1, int steps = 600) {
  MarkovLabOptions o;
  o.chain = analysis::MarkovChain::make(0.2, 0.3, order);
  o.mixer = mixer;
  o.window = window;
  o.steps = steps;
  o.eval_every = 100;
  return run_markov_lab(o);
}

TEST(MarkovLab, FirstOrderChainReachesItsEntropyRateWithEveryMixer) {
  for (LabMixer mixer : {LabMixer::Pooling, LabMixer::Attention, LabMixer::Convolution}) {
    const auto r = run(mixer, 2);
    EXPECT_NEAR(r.entropy_rate, analysis::binary_entropy_rate(0.2, 0.3), 1e-12);
    EXPECT_GE(r.gap, 0.0) << to_string(mixer);
    EXPECT_LT(r.gap, 0.01 * r.entropy_rate) << to_string(mixer);
    EXPECT_DOUBLE_EQ(r.final_loss, r.entropy_rate + r.gap);
    EXPECT_GT(r.seconds, 0.0);
    // The curve starts untrained, far above the floor, and falls to it.
    ASSERT_GE(r.curve.size(), 2u);
    EXPECT_EQ(r.curve.front().step, 0);
    EXPECT_GT(r.curve.front().loss, r.entropy_rate + 0.02) << to_string(mixer);
    EXPECT_EQ(r.curve.back().step, 600);
    for (const auto& point : r.curve)
      EXPECT_GE(point.loss, r.entropy_rate) << "KL is never negative";
  }
}

TEST(MarkovLab, PoolingReachesTheFloorOnlyWhenItsWindowSeesTheChainsMemory) {
  // Order 2: a window of 1 cannot see x_{n-1}; a window of 2 sees it exactly.
  const auto narrow = run(LabMixer::Pooling, 1, 2, 1500),
             exact = run(LabMixer::Pooling, 2, 2, 1500);
  EXPECT_GT(narrow.gap, 0.03 * narrow.entropy_rate);
  EXPECT_LT(exact.gap, 0.01 * exact.entropy_rate);
  // Order 3: window 2 falls short, window 3 reaches it.
  const auto short3 = run(LabMixer::Pooling, 2, 3, 1500),
             exact3 = run(LabMixer::Pooling, 3, 3, 1500);
  EXPECT_GT(short3.gap, 0.015 * short3.entropy_rate);
  EXPECT_LT(exact3.gap, 0.01 * exact3.entropy_rate);
  // An average over more than the memory mixes in older symbols it cannot weigh apart; a mixer
  // with a weight per lag (attention with its lag bias, or a convolution) can, and reaches it.
  const auto wide = run(LabMixer::Pooling, 4, 2, 1500);
  EXPECT_GT(wide.gap, 0.01 * wide.entropy_rate);
  for (LabMixer mixer : {LabMixer::Attention, LabMixer::Convolution}) {
    const auto r = run(mixer, 4, 2, 1500);
    EXPECT_LT(r.gap, 0.01 * r.entropy_rate) << to_string(mixer);
  }
}

TEST(MarkovLab, PoolingMatrixIsTheCausalAverage) {
  const auto r = run(LabMixer::Pooling, 3, 1, 5);
  ASSERT_EQ(r.mixing_matrix.size(), static_cast<size_t>(r.length * r.length));
  for (int n = 0; n < r.length; ++n)
    for (int i = 0; i < r.length; ++i) {
      const double expected = (i <= n && n - i < 3) ? 1.0 / std::min(3, n + 1) : 0.0;
      EXPECT_NEAR(r.mixing_matrix[static_cast<size_t>(n * r.length + i)], expected, 1e-6)
          << n << ' ' << i;
    }
  ASSERT_EQ(r.mixing_by_lag.size(), 3u);
  for (double w : r.mixing_by_lag) EXPECT_NEAR(w, 1.0 / 3.0, 1e-6);
}

TEST(MarkovLab, AttentionRowsAreCausalLawsWithinTheWindow) {
  const auto r = run(LabMixer::Attention, 3, 1, 50);
  for (int n = 0; n < r.length; ++n) {
    double sum = 0.0;
    for (int i = 0; i < r.length; ++i) {
      const double w = r.mixing_matrix[static_cast<size_t>(n * r.length + i)];
      if (i > n || n - i >= 3) {
        EXPECT_NEAR(w, 0.0, 1e-9) << n << ' ' << i;
      }
      sum += w;
    }
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
}

TEST(MarkovLab, SameSeedSameCurve) {
  const auto a = run(LabMixer::Convolution, 2, 1, 60), b = run(LabMixer::Convolution, 2, 1, 60);
  ASSERT_EQ(a.curve.size(), b.curve.size());
  for (size_t i = 0; i < a.curve.size(); ++i) EXPECT_EQ(a.curve[i].loss, b.curve[i].loss);
}

TEST(MarkovLab, CancellingThrowsAndPointsArriveAsTheyAreMade) {
  MarkovLabOptions o;
  o.steps = 10000;
  o.eval_every = 10;
  Progress progress;
  int points = 0;
  EXPECT_THROW(run_markov_lab(o, progress,
                              [&](const MarkovLabPoint&) {
                                if (++points == 3) progress.cancel.cancel();
                              }),
               Cancelled);
  EXPECT_EQ(points, 3);
}

TEST(MarkovLab, OptionsOutOfRangeAreNamed) {
  MarkovLabOptions o;
  o.window = 0;
  try {
    o.check();
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("window"), std::string::npos);
  }
  o.window = 2;
  o.length = 4;
  EXPECT_THROW(o.check(), UsageError);
  o.length = 32;
  o.learning_rate = std::nan("");
  EXPECT_THROW(o.check(), UsageError);
  o.learning_rate = 0.01;
  o.chain.p = 2.0;
  EXPECT_THROW(o.check(), UsageError);
  EXPECT_THROW(lab_mixer_from_string("mamba"), UsageError);
  EXPECT_EQ(lab_mixer_from_string("conv"), LabMixer::Convolution);
}

}  // namespace
}  // namespace dstudio::models
