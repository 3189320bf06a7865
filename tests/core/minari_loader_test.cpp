// The Minari loader: one group per episode, observations with steps + 1 rows.

#include <gtest/gtest.h>

#include "dstudio/data/dataset_io.h"
#include "h5_fixture.h"

namespace dstudio::data {
namespace {

TEST(MinariLoader, FlattensEpisodesAndDropsTheFinalObservation) {
  test::TempDir dir;
  const auto file = dir / "pointmass/test-v0/data/main_data.hdf5";
  test::write_minari_fixture(
      file, {{3, true, false, 0.0}, {2, false, true, 100.0}, {4, false, false, 200.0}});

  // The dataset folder resolves to data/main_data.hdf5.
  const Dataset ds = load_dataset(dir / "pointmass/test-v0");
  EXPECT_EQ(ds.format, "minari");
  EXPECT_EQ(ds.path, file.string());
  EXPECT_EQ(ds.env_id, "PointMass-v0");
  EXPECT_EQ(ds.metadata.at("total_episodes"), "3");
  ASSERT_EQ(ds.transitions(), 9);
  ASSERT_EQ(ds.data.obs_dim, 2);
  ASSERT_EQ(ds.data.act_dim, 1);
  // Episode 1 starts at row 3 with its reset observation base + 0.
  EXPECT_FLOAT_EQ(ds.data.observations[3 * 2 + 0], 100.0f);
  EXPECT_FLOAT_EQ(ds.data.observations[3 * 2 + 1], 100.1f);
  EXPECT_FLOAT_EQ(ds.data.observations[4 * 2 + 0], 101.0f);
  // Its last step's observation is t = 1; the final observation (t = 2) is not a transition.
  EXPECT_FLOAT_EQ(ds.data.observations[5 * 2 + 0], 200.0f);
  EXPECT_FLOAT_EQ(ds.data.actions[2], 1.0f);
  ASSERT_EQ(ds.episodes.size(), 3u);
  EXPECT_EQ(ds.episodes[0].end, EndReason::Terminal);
  EXPECT_EQ(ds.episodes[1].end, EndReason::Timeout);
  EXPECT_EQ(ds.episodes[2].end, EndReason::Unterminated);
  EXPECT_DOUBLE_EQ(ds.episodes[0].ret, 1 + 2 + 3);
  EXPECT_DOUBLE_EQ(ds.episodes[2].ret, 1 + 2 + 3 + 4);
  const auto s = summarize(ds);
  EXPECT_EQ(s.episodes, 2);
  EXPECT_EQ(s.tail_steps, 4);
  EXPECT_EQ(s.unterminated_episodes, 1);
}

TEST(MinariLoader, OrdersEpisodesByNumberNotByName) {
  test::TempDir dir;
  std::vector<test::MinariEpisodeSpec> eps;
  for (int e = 0; e < 12; ++e) eps.push_back({1, true, false, 10.0 * e});
  test::write_minari_fixture(dir / "main_data.hdf5", eps);
  const Dataset ds = load_dataset(dir / "main_data.hdf5");
  ASSERT_EQ(ds.transitions(), 12);
  for (int e = 0; e < 12; ++e)
    EXPECT_FLOAT_EQ(ds.data.observations[e * 2], 10.0f * e) << "episode " << e;
}

TEST(MinariLoader, ConcatenatesDictObservations) {
  test::TempDir dir;
  {
    test::H5Writer w(dir / "main_data.hdf5");
    w.numbers("episode_0/observations/achieved_goal", {1, 2, 3}, {3, 1}, H5T_IEEE_F32LE);
    w.numbers("episode_0/observations/observation", {10, 11, 20, 21, 30, 31}, {3, 2},
              H5T_IEEE_F32LE);
    w.numbers("episode_0/actions", {0, 0}, {2, 1}, H5T_IEEE_F32LE);
    w.numbers("episode_0/rewards", {0, 1}, {2}, H5T_IEEE_F32LE);
    w.bools("episode_0/terminations", {0, 1}, {2});
    w.bools("episode_0/truncations", {0, 0}, {2});
  }
  const Dataset ds = load_dataset(dir / "main_data.hdf5");
  ASSERT_EQ(ds.data.obs_dim, 3);
  EXPECT_EQ(ds.data.observations, (std::vector<float>{1, 10, 11, 2, 20, 21}));
  ASSERT_FALSE(ds.warnings.empty());
  EXPECT_NE(ds.warnings.front().find("dict"), std::string::npos);
}

}  // namespace
}  // namespace dstudio::data
