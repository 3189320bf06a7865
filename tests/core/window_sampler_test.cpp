// Training windows against windows computed by hand from the reference get_batch semantics.

#include "dstudio/data/window_sampler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dstudio/common/error.h"

namespace dstudio::data {
namespace {

using testing::ElementsAre;
using testing::FloatEq;

// Episode A: rows 0-2, obs 10 20 30, rewards 1 2 3, terminal.
// Episode B: rows 3-7, obs 1..5, rewards 1 each, timeout.
// Tail: rows 8-9.
Dataset two_episodes() {
  Dataset ds;
  auto& d = ds.data;
  d.obs_dim = 1;
  d.act_dim = 1;
  d.observations = {10, 20, 30, 1, 2, 3, 4, 5, 99, 99};
  d.actions = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 0.9f};
  d.rewards = {1, 2, 3, 1, 1, 1, 1, 1, 50, 50};
  d.terminals = {0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
  d.timeouts = {0, 0, 0, 0, 0, 0, 0, 1, 0, 0};
  ds.episodes = segment_episodes(d.rewards, d.terminals, d.timeouts);
  // Round numbers make the normalisation easy to check by hand.
  ds.state_mean = {2.0f};
  ds.state_std = {4.0f};
  return ds;
}

float norm(double x) {
  return static_cast<float>((x - 2.0) / (4.0 + 1e-6));
}

SamplerConfig config(int K, double scale = 1.0) {
  SamplerConfig c;
  c.context_length = K;
  c.batch_size = 3;
  c.rtg_scale = scale;
  return c;
}

TEST(WindowSampler, ShortWindowAtTheEpisodeEndIsLeftPaddedWithAZeroAppendedToRtg) {
  const Dataset ds = two_episodes();
  WindowSampler sampler(ds, config(4));
  WindowBatch b;
  b.resize(1, 4, 1, 1);
  sampler.fill_window(0, 1, b, 0);  // episode A from step 1: two real steps
  EXPECT_THAT(b.states, ElementsAre(FloatEq(norm(0)), FloatEq(norm(0)), FloatEq(norm(20)),
                                    FloatEq(norm(30))));
  EXPECT_THAT(b.actions, ElementsAre(-10.0f, -10.0f, 0.2f, 0.3f));
  EXPECT_THAT(b.returns_to_go, ElementsAre(0.0f, 0.0f, 5.0f, 3.0f, 0.0f));
  EXPECT_THAT(b.timesteps, ElementsAre(0, 0, 1, 2));
  EXPECT_THAT(b.mask, ElementsAre(0.0f, 0.0f, 1.0f, 1.0f));
}

TEST(WindowSampler, FullWindowCarriesTheNextRealReturnToGo) {
  const Dataset ds = two_episodes();
  WindowSampler sampler(ds, config(4, 1000.0));
  WindowBatch b;
  b.resize(1, 4, 1, 1);
  sampler.fill_window(1, 0, b, 0);  // episode B from step 0
  EXPECT_THAT(b.states,
              ElementsAre(FloatEq(norm(1)), FloatEq(norm(2)), FloatEq(norm(3)), FloatEq(norm(4))));
  EXPECT_THAT(b.returns_to_go, ElementsAre(FloatEq(0.005f), FloatEq(0.004f), FloatEq(0.003f),
                                           FloatEq(0.002f), FloatEq(0.001f)));
  EXPECT_THAT(b.timesteps, ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(b.mask, ElementsAre(1.0f, 1.0f, 1.0f, 1.0f));
}

TEST(WindowSampler, WindowReachingTheEndExactlyAppendsZero) {
  const Dataset ds = two_episodes();
  WindowSampler sampler(ds, config(2));
  WindowBatch b;
  b.resize(1, 2, 1, 1);
  sampler.fill_window(1, 3, b, 0);  // steps 3 and 4 of B: the window ends with the episode
  EXPECT_THAT(b.returns_to_go, ElementsAre(2.0f, 1.0f, 0.0f));
  EXPECT_THAT(b.mask, ElementsAre(1.0f, 1.0f));
}

TEST(WindowSampler, TimestepsAreClippedToMaxEpisodeLength) {
  const Dataset ds = two_episodes();
  auto c = config(4);
  c.max_ep_len = 3;
  WindowSampler sampler(ds, c);
  WindowBatch b;
  b.resize(1, 4, 1, 1);
  sampler.fill_window(1, 1, b, 0);
  EXPECT_THAT(b.timesteps, ElementsAre(1, 2, 2, 2));
}

TEST(WindowSampler, ChoosesEpisodesByLengthAndNeverTheTail) {
  const Dataset ds = two_episodes();
  auto c = config(2);
  c.batch_size = 1000;
  WindowSampler sampler(ds, c);
  // Lowest return first: B (5) then A (6); probabilities 5/8 and 3/8.
  EXPECT_THAT(sampler.sampled_episodes(), ElementsAre(1, 0));
  EXPECT_THAT(sampler.episode_probabilities(), ElementsAre(5.0 / 8.0, 3.0 / 8.0));
  int from_b = 0, total = 0;
  std::vector<int> starts_b(5, 0);
  for (int r = 0; r < 40; ++r) {
    const auto batch = sampler.sample();
    for (int i = 0; i < batch.batch; ++i) {
      ASSERT_NE(batch.episode[i], 2) << "the unterminated tail must never be sampled";
      ++total;
      if (batch.episode[i] == 1) {
        ++from_b;
        ++starts_b[batch.start[i]];
      }
    }
  }
  EXPECT_NEAR(static_cast<double>(from_b) / total, 5.0 / 8.0, 0.01);
  for (int s : starts_b) EXPECT_NEAR(static_cast<double>(s) / from_b, 0.2, 0.015);
}

TEST(WindowSampler, PercentTrajectoriesKeepsTheBestEpisodes) {
  const Dataset ds = two_episodes();
  auto c = config(2);
  c.pct_traj = 0.5;  // budget 4 of 8 steps: the best episode (A, 3 steps) only
  WindowSampler sampler(ds, c);
  EXPECT_THAT(sampler.sampled_episodes(), ElementsAre(0));
  for (int r = 0; r < 10; ++r)
    for (auto e : sampler.sample().episode) EXPECT_EQ(e, 0);
}

TEST(WindowSampler, ARewardShiftCountsEveryRewardPlusTheShift) {
  const Dataset ds = two_episodes();
  auto c = config(4);
  c.reward_shift = -1.0;  // IQL's AntMaze shift: A's rewards become 0 1 2
  WindowSampler sampler(ds, c);
  WindowBatch b;
  b.resize(1, 4, 1, 1);
  sampler.fill_window(0, 1, b, 0);
  EXPECT_THAT(b.returns_to_go, ElementsAre(0.0f, 0.0f, 3.0f, 2.0f, 0.0f));
  sampler.fill_window(1, 0, b, 0);  // B's rewards of 1 become 0
  EXPECT_THAT(b.returns_to_go, ElementsAre(0.0f, 0.0f, 0.0f, 0.0f, 0.0f));
}

TEST(WindowSampler, PercentTrajectoriesRanksEpisodesByTheirShiftedReturn) {
  const Dataset ds = two_episodes();
  auto c = config(2);
  c.pct_traj = 0.5;
  c.reward_shift = 1.0;  // A: 6 + 3 = 9, B: 5 + 5 = 10, so B is the best and the only one kept
  WindowSampler sampler(ds, c);
  EXPECT_THAT(sampler.sampled_episodes(), ElementsAre(1));
}

TEST(WindowSampler, SameSeedSameBatchesDifferentSeedDifferent) {
  const Dataset ds = two_episodes();
  auto c = config(3);
  c.seed = 7;
  WindowSampler a(ds, c), b(ds, c);
  c.seed = 8;
  WindowSampler other(ds, c);
  bool differs = false;
  for (int r = 0; r < 5; ++r) {
    const auto x = a.sample(), y = b.sample(), z = other.sample();
    EXPECT_EQ(x.states, y.states);
    EXPECT_EQ(x.returns_to_go, y.returns_to_go);
    EXPECT_EQ(x.episode, y.episode);
    EXPECT_EQ(x.start, y.start);
    differs |= x.start != z.start || x.episode != z.episode;
  }
  EXPECT_TRUE(differs);
}

TEST(WindowSampler, SampledRowsMatchTheirHandBuiltWindow) {
  const Dataset ds = two_episodes();
  WindowSampler sampler(ds, config(4));
  const auto batch = sampler.sample();
  for (int i = 0; i < batch.batch; ++i) {
    WindowBatch one;
    one.resize(1, 4, 1, 1);
    sampler.fill_window(batch.episode[i], batch.start[i], one, 0);
    EXPECT_TRUE(std::equal(one.states.begin(), one.states.end(), batch.states.begin() + i * 4));
    EXPECT_TRUE(std::equal(one.returns_to_go.begin(), one.returns_to_go.end(),
                           batch.returns_to_go.begin() + i * 5));
  }
}

TEST(WindowSampler, RejectsImpossibleConfigurations) {
  const Dataset ds = two_episodes();
  auto c = config(0);
  EXPECT_THROW(WindowSampler(ds, c), dstudio::UsageError);
  c = config(2);
  c.pct_traj = 0.0;
  EXPECT_THROW(WindowSampler(ds, c), dstudio::UsageError);
  Dataset tail_only = ds;
  for (auto& e : tail_only.episodes) e.end = EndReason::Unterminated;
  EXPECT_THROW(WindowSampler(tail_only, config(2)), dstudio::Error);
}

}  // namespace
}  // namespace dstudio::data
