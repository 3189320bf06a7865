// Episode segmentation, summaries and state statistics against values worked out by hand.

#include <gtest/gtest.h>

#include <cmath>

#include "dstudio/data/dataset.h"

namespace dstudio::data {
namespace {

TEST(SegmentEpisodes, CutsAtTerminalsAndTimeoutsAndKeepsTheTail) {
  //              0  1  2  3  4  5  6  7
  std::vector<float> rewards = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<std::uint8_t> terminals = {0, 1, 0, 0, 0, 0, 0, 0};
  std::vector<std::uint8_t> timeouts = {0, 0, 0, 0, 1, 0, 0, 0};
  const auto eps = segment_episodes(rewards, terminals, timeouts);
  ASSERT_EQ(eps.size(), 3u);
  EXPECT_EQ(eps[0].start, 0);
  EXPECT_EQ(eps[0].length, 2);
  EXPECT_EQ(eps[0].end, EndReason::Terminal);
  EXPECT_DOUBLE_EQ(eps[0].ret, 3.0);
  EXPECT_EQ(eps[1].start, 2);
  EXPECT_EQ(eps[1].length, 3);
  EXPECT_EQ(eps[1].end, EndReason::Timeout);
  EXPECT_DOUBLE_EQ(eps[1].ret, 12.0);
  EXPECT_EQ(eps[2].start, 5);
  EXPECT_EQ(eps[2].length, 3);
  EXPECT_EQ(eps[2].end, EndReason::Unterminated);
  EXPECT_DOUBLE_EQ(eps[2].ret, 21.0);
}

TEST(SegmentEpisodes, TerminalWinsWhenBothFlagsAreSet) {
  const auto eps = segment_episodes({1, 1}, {0, 1}, {0, 1});
  ASSERT_EQ(eps.size(), 1u);
  EXPECT_EQ(eps[0].end, EndReason::Terminal);
}

TEST(SegmentEpisodes, WithoutTimeoutsCutsEveryNSteps) {
  std::vector<float> rewards(10, 1.0f);
  std::vector<std::uint8_t> terminals(10, 0);
  terminals[1] = 1;  // an early terminal restarts the step count
  const auto eps = segment_episodes(rewards, terminals, {}, 3);
  // [0,1] terminal, [2,4] cut, [5,7] cut, [8,9] tail
  ASSERT_EQ(eps.size(), 4u);
  EXPECT_EQ(eps[0].length, 2);
  EXPECT_EQ(eps[1].start, 2);
  EXPECT_EQ(eps[1].length, 3);
  EXPECT_EQ(eps[1].end, EndReason::Timeout);
  EXPECT_EQ(eps[2].start, 5);
  EXPECT_EQ(eps[3].start, 8);
  EXPECT_EQ(eps[3].end, EndReason::Unterminated);
}

TEST(SegmentEpisodes, NoTailWhenTheLastStepEndsAnEpisode) {
  const auto eps = segment_episodes({1, 1, 1}, {0, 0, 1}, {});
  ASSERT_EQ(eps.size(), 1u);
  EXPECT_TRUE(eps[0].complete());
}

TEST(Summarize, CountsCompleteEpisodesOnlyInReturns) {
  Dataset ds;
  ds.data.obs_dim = 1;
  ds.data.act_dim = 1;
  ds.data.observations.assign(10, 0.0f);
  ds.episodes = {{0, 2, EndReason::Terminal, 10.0},
                 {2, 5, EndReason::Timeout, 30.0},
                 {7, 3, EndReason::Unterminated, 1000.0}};
  const auto s = summarize(ds);
  EXPECT_EQ(s.transitions, 10);
  EXPECT_EQ(s.episodes, 2);
  EXPECT_EQ(s.terminated, 1);
  EXPECT_EQ(s.timed_out, 1);
  EXPECT_EQ(s.unterminated_episodes, 1);
  EXPECT_EQ(s.tail_steps, 3);
  EXPECT_DOUBLE_EQ(s.return_min, 10.0);
  EXPECT_DOUBLE_EQ(s.return_max, 30.0);
  EXPECT_DOUBLE_EQ(s.return_mean, 20.0);
  EXPECT_DOUBLE_EQ(s.return_std, 10.0);
  EXPECT_EQ(s.length_min, 2);
  EXPECT_EQ(s.length_max, 5);
  EXPECT_DOUBLE_EQ(s.length_mean, 3.5);
}

TEST(StateStatistics, PopulationMomentsOfCompleteEpisodes) {
  TransitionArrays d;
  d.obs_dim = 2;
  // Rows: (1,10) (3,10) (5,40) | tail (100,100)
  d.observations = {1, 10, 3, 10, 5, 40, 100, 100};
  std::vector<Episode> eps = {{0, 3, EndReason::Timeout, 0}, {3, 1, EndReason::Unterminated, 0}};
  std::vector<float> mean, std;
  state_statistics(d, eps, mean, std);
  EXPECT_FLOAT_EQ(mean[0], 3.0f);
  EXPECT_FLOAT_EQ(mean[1], 20.0f);
  EXPECT_FLOAT_EQ(std[0], std::sqrt(8.0f / 3.0f));
  EXPECT_FLOAT_EQ(std[1], std::sqrt(600.0f / 3.0f));
}

TEST(Fingerprint, ChangesWithAnyValueAndNotOtherwise) {
  TransitionArrays d;
  d.obs_dim = 1;
  d.act_dim = 1;
  d.observations = {1, 2};
  d.actions = {0, 0};
  d.rewards = {1, 1};
  d.terminals = {0, 1};
  d.timeouts = {0, 0};
  const auto base = content_fingerprint(d);
  EXPECT_EQ(base.rfind("xxh3-128:", 0), 0u);
  EXPECT_EQ(base.size(), 9u + 32u);
  EXPECT_EQ(content_fingerprint(d), base);
  auto changed = d;
  changed.rewards[0] = 1.0000001f;
  EXPECT_NE(content_fingerprint(changed), base);
  changed = d;
  changed.terminals = {1, 0};
  EXPECT_NE(content_fingerprint(changed), base);
}

}  // namespace
}  // namespace dstudio::data
