// Gathering tokens for the t-SNE: every step of an episode once, each as the policy saw it (the
// same embedding as the window that ends at that step), from windows, dataset episodes or
// rollouts, in batches, with a limit, and refused for a model without tokens.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <set>
#include <tuple>

#include "dstudio/common/error.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/models/checkpoint_model.h"
#include "dstudio/models/windows.h"
#include "h5_fixture.h"

namespace dstudio::models {
namespace {

using testing::HasSubstr;

constexpr int kS = 11, kA = 3, kK = 5;

// A random hopper-sized model of `variant` saved as a checkpoint.
std::filesystem::path small_checkpoint(const test::TempDir& dir, const std::string& variant) {
  auto c = make_variant(variant);
  c.state_dim = kS;
  c.act_dim = kA;
  c.hidden = 16;
  c.layers = 2;
  c.heads = 2;
  c.context_length = kK;
  torch::manual_seed(11);
  DecisionModel model(c);
  CheckpointInfo info;
  info.variant = c;
  info.env_id = "hopper";
  info.state_mean.assign(kS, 0.0f);
  info.state_std.assign(kS, 4.0f);
  info.metrics = "{}";
  const auto path = dir / (variant + ".pt");
  save_weights_checkpoint(path, model, info, "test");
  return path;
}

// Episodes of 13, 7 and 9 steps (the second one a time-out, all complete).
std::filesystem::path small_dataset(const test::TempDir& dir) {
  test::D4rlSpec spec;
  spec.n = 29;
  spec.obs_dim = kS;
  spec.act_dim = kA;
  spec.terminals.assign(29, 0);
  spec.timeouts.assign(29, 0);
  spec.terminals[12] = 1;
  spec.timeouts[19] = 1;
  spec.terminals[28] = 1;
  const auto path = dir / "tiny.hdf5";
  test::write_d4rl_fixture(path, spec);
  return path;
}

TEST(EpisodeWindows, ShowEveryStepOnceAndNeverAtAWindowsFirstPositionButTheFirstStep) {
  for (const int K : {1, 2, 5, 20})
    for (const int length : {1, 2, 4, 5, 6, 13, 20, 21, 100}) {
      const auto ends = episode_window_ends(length, K);
      std::vector<int> seen(static_cast<std::size_t>(length), 0);
      int previous_end = -1;
      for (const auto& [last, from] : ends) {
        EXPECT_EQ(from, previous_end + 1) << "K " << K << ", length " << length;
        EXPECT_LT(last, length);
        EXPECT_GE(from, 0);
        const int first_position_step = last - K + 1;
        for (int t = from; t <= last; ++t) {
          ++seen[static_cast<std::size_t>(t)];
          // A step at the window's first position lacks its previous action.
          if (K > 1 && t > 0) {
            EXPECT_GT(t, first_position_step)
                << "K " << K << ", length " << length << ", step " << t;
          }
        }
        previous_end = last;
      }
      EXPECT_EQ(previous_end, length - 1);
      EXPECT_EQ(seen, std::vector<int>(static_cast<std::size_t>(length), 1))
          << "K " << K << ", length " << length;
    }
  EXPECT_EQ(episode_window_ends(13, 5),
            (std::vector<std::pair<int, int>>{{4, 0}, {8, 5}, {12, 9}}));
  EXPECT_TRUE(episode_window_ends(0, 5).empty());
}

class GatherTokens : public testing::TestWithParam<std::string> {};

// Each gathered token equals what the model embeds at the last position of the window that ends
// at its step: the window the policy acts from.
TEST_P(GatherTokens, EveryStepOfTheLongestEpisodesOnceAsThePolicySawIt) {
  test::TempDir dir;
  const auto checkpoint = small_checkpoint(dir, GetParam());
  const auto dataset = small_dataset(dir);
  TokenSource source;
  source.kind = TokenSource::Kind::Episodes;
  source.count = 2;  // the episodes of 13 and 9 steps
  const auto got = gather_tokens(checkpoint, source, dataset);
  const auto& c = got.cloud;
  const int per_step = GetParam() == "dt" ? 6 : GetParam() == "udt" ? 1 : 4;
  EXPECT_EQ(got.episodes, 2);
  EXPECT_EQ(got.windows, 3 + 2);
  ASSERT_EQ(c.count(), (13 + 9) * per_step);
  EXPECT_EQ(c.dims, 16);
  ASSERT_EQ(c.points.size(), static_cast<std::size_t>(c.count()) * 16);

  const auto ds = data::load_dataset(dataset);
  CheckpointInfo info;
  DecisionModel model = load_checkpoint_model(checkpoint, &info);
  std::set<std::tuple<int, int, std::string>> seen;
  std::map<int, int> steps_of;
  for (int i = 0; i < c.count(); ++i) {
    const auto at = static_cast<std::size_t>(i);
    EXPECT_TRUE(seen.insert({c.episode[at], c.timestep[at], c.modality[at]}).second)
        << "episode " << c.episode[at] << ", step " << c.timestep[at] << ", " << c.modality[at]
        << " twice";
    ++steps_of[c.episode[at]];
  }
  EXPECT_EQ(steps_of, (std::map<int, int>{{0, 13 * per_step},
                                          {2, 9 * per_step}}));  // longest first: episodes 0 and 2
  // The reference: each step's own window, inspected alone.
  for (const int e : {0, 2}) {
    const int length = static_cast<int>(ds.episodes[static_cast<std::size_t>(e)].length);
    for (int t = 0; t < length; ++t) {
      const auto window = window_from_dataset(ds, e, t, kK);
      const auto own = token_cloud({window}, inspect_windows(*model, info, {window}));
      int compared = 0;
      for (int j = 0; j < own.count(); ++j) {
        if (own.timestep[static_cast<std::size_t>(j)] != t) continue;
        for (int i = 0; i < c.count(); ++i) {
          const auto at = static_cast<std::size_t>(i);
          if (c.episode[at] != e || c.timestep[at] != t ||
              c.modality[at] != own.modality[static_cast<std::size_t>(j)])
            continue;
          for (int q = 0; q < 16; ++q)
            ASSERT_NEAR(c.points[at * 16 + static_cast<std::size_t>(q)],
                        own.points[static_cast<std::size_t>(j) * 16 + static_cast<std::size_t>(q)],
                        1e-5)
                << "episode " << e << ", step " << t << ", " << c.modality[at];
          EXPECT_DOUBLE_EQ(c.return_to_go[at], own.return_to_go[static_cast<std::size_t>(j)]);
          ++compared;
        }
      }
      EXPECT_EQ(compared, per_step) << "episode " << e << ", step " << t;
    }
  }
}

TEST_P(GatherTokens, StopAtWholeStepsWithinTheLimit) {
  test::TempDir dir;
  const auto checkpoint = small_checkpoint(dir, GetParam());
  const auto dataset = small_dataset(dir);
  const int per_step = GetParam() == "dt" ? 6 : GetParam() == "udt" ? 1 : 4;
  TokenSource source;
  source.kind = TokenSource::Kind::Episodes;
  source.count = 3;
  source.max_tokens =
      15 * per_step + per_step - 1;  // 15 whole steps: all 13 of the longest, 2 of the next
  const auto got = gather_tokens(checkpoint, source, dataset);
  EXPECT_EQ(got.cloud.count(), 15 * per_step);
  EXPECT_EQ(got.episodes, 2);
  for (int i = 0; i < got.cloud.count(); ++i)
    if (got.cloud.episode[static_cast<std::size_t>(i)] == 2) {
      EXPECT_LT(got.cloud.timestep[static_cast<std::size_t>(i)], 2);
    }
  if (per_step > 1) {  // fewer tokens than one step
    source.max_tokens = per_step - 1;
    EXPECT_THROW(gather_tokens(checkpoint, source, dataset), UsageError);
  }
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, GatherTokens, testing::Values("dt", "dhi", "udt"));

TEST(GatherTokensFrom, WindowsKeepEveryRealStepOfEachWindow) {
  test::TempDir dir;
  const auto checkpoint = small_checkpoint(dir, "dhi");
  TokenSource source;
  source.count = 4;
  const auto got = gather_tokens(checkpoint, source, small_dataset(dir));
  EXPECT_EQ(got.windows, 4);
  EXPECT_EQ(got.cloud.count(), 4 * kK * 4);
  std::set<int> windows(got.cloud.window.begin(), got.cloud.window.end());
  EXPECT_EQ(windows, (std::set<int>{0, 1, 2, 3}));
}

TEST(GatherTokensFrom, RolloutsTakeEveryStepTheModelPlayed) {
  test::TempDir dir;
  const auto checkpoint = small_checkpoint(dir, "dt");
  TokenSource source;
  source.kind = TokenSource::Kind::Rollouts;
  source.count = 2;
  source.target = 500.0;
  const auto got = gather_tokens(checkpoint, source);
  ASSERT_EQ(got.episode_returns.size(), 2u);
  EXPECT_TRUE(got.dataset.empty());
  std::map<int, std::set<int>> steps;
  for (int i = 0; i < got.cloud.count(); ++i)
    steps[got.cloud.episode[static_cast<std::size_t>(i)]].insert(
        got.cloud.timestep[static_cast<std::size_t>(i)]);
  ASSERT_EQ(steps.size(), 2u);
  int total = 0;
  for (const auto& [e, s] : steps) {
    EXPECT_EQ(*s.begin(), 0);
    EXPECT_EQ(*s.rbegin(), static_cast<int>(s.size()) - 1) << "no step missing in episode " << e;
    total += static_cast<int>(s.size());
  }
  EXPECT_EQ(got.cloud.count(), total * 6);
  // The first step is conditioned on the target.
  for (int i = 0; i < got.cloud.count(); ++i)
    if (got.cloud.timestep[static_cast<std::size_t>(i)] == 0) {
      EXPECT_DOUBLE_EQ(got.cloud.return_to_go[static_cast<std::size_t>(i)], 500.0);
    }
}

TEST(GatherTokensFrom, RefusesAModelWithoutTokensAndStopsWhenCancelled) {
  test::TempDir dir;
  const auto dataset = small_dataset(dir);
  TokenSource source;
  source.kind = TokenSource::Kind::Episodes;
  try {
    (void)gather_tokens(small_checkpoint(dir, "mlp-bc"), source, dataset);
    ADD_FAILURE() << "behaviour cloning has no tokens";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no tokens"));
  }
  Progress cancelled;
  cancelled.cancel.cancel();
  EXPECT_THROW(gather_tokens(small_checkpoint(dir, "dhi"), source, dataset, cancelled), Cancelled);
  source.count = 0;
  EXPECT_THROW(gather_tokens(small_checkpoint(dir, "dhi"), source, dataset), UsageError);
}

}  // namespace
}  // namespace dstudio::models
