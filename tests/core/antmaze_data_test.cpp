// AntMaze data as D4RL made it, and D4RL's and Minari's antmaze files read as what they are:
// the keys and shapes of the file, rewards and terminals recomputed from the next observations
// and the evaluation goal, D4RL's timeouts, the same bytes at any thread count; episodes of a
// D4RL file ending at timeouts (not at its terminals), and Minari's antmaze named as the other
// task it is.

#include "dstudio/behaviour/antmaze_data.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "dstudio/data/dataset_io.h"
#include "dstudio/env/antmaze.h"
#include "dstudio/env/environment.h"
#include "h5_fixture.h"

namespace dstudio::behaviour {
namespace {

using testing::HasSubstr;

// A goal-reacher that is not trained: small, with weights that make it act.
GaussianPolicy small_goal_reacher() {
  GaussianPolicy p = zero_gaussian_policy(29, 8, {16});
  for (auto& layer : p.layers)
    for (std::size_t i = 0; i < layer.weight.size(); ++i)
      layer.weight[i] = 0.05f * static_cast<float>(std::sin(0.7 * static_cast<double>(i)));
  return p;
}

AntMazeDataConfig small(const std::string& task, int threads) {
  AntMazeDataConfig c;
  c.task = task;
  c.transitions = 2500;  // two whole episodes of 1001 and a cut third
  c.threads = threads;
  c.seed = 4;
  return c;
}

TEST(AntMazeData, TheFileHasD4rlsKeysShapesTimeoutsAndRelabelledRewards) {
  const auto made = generate_antmaze_dataset(small("antmaze-umaze-v2", 2), small_goal_reacher());
  const auto& d = made.arrays;
  ASSERT_EQ(d.size(), 2500);
  EXPECT_EQ(d.obs_dim, 29);
  EXPECT_EQ(d.act_dim, 8);
  EXPECT_EQ(d.qpos_dim, 15);
  EXPECT_EQ(d.qvel_dim, 14);
  EXPECT_EQ(d.goal_dim, 2);
  // D4RL's `ts >= 1000`: the 1001st transition of an episode is its timeout.
  for (std::int64_t i = 0; i < d.size(); ++i) EXPECT_EQ(d.timeouts[i], i == 1000 || i == 2001) << i;
  const auto goal = env::antmaze::nominal_goal(env::antmaze::maze("U_MAZE_TEST"));
  int near = 0;
  for (std::int64_t i = 0; i < d.size(); ++i) {
    const float* next = &d.next_observations[static_cast<std::size_t>(i * 29)];
    const bool reached = std::hypot(next[0] - goal[0], next[1] - goal[1]) <= 0.5;
    ASSERT_EQ(d.rewards[i], reached ? 1.0f : 0.0f) << i;
    ASSERT_EQ(d.terminals[i], reached ? 1 : 0) << i;
    near += reached;
    // The observation is qpos[0:15] then qvel[0:14] of the state stored beside it.
    for (int k = 0; k < 15; ++k) ASSERT_EQ(d.observations[i * 29 + k], d.qpos[i * 15 + k]) << i;
    for (int k = 0; k < 14; ++k)
      ASSERT_EQ(d.observations[i * 29 + 15 + k], d.qvel[i * 14 + k]) << i;
    // Within an episode the next observation is the next row's.
    if (i + 1 < d.size() && !d.timeouts[i]) {
      for (int k = 0; k < 29; ++k)
        ASSERT_EQ(d.next_observations[i * 29 + k], d.observations[(i + 1) * 29 + k]);
    }
    for (int k = 0; k < 8; ++k) {
      ASSERT_GE(d.actions[i * 8 + k], -1.0f);
      ASSERT_LE(d.actions[i * 8 + k], 1.0f);
    }
  }
  EXPECT_GE(near, 0);  // an untrained ant rarely reaches the goal; the rule above is what counts
  // umaze's collection goal is its one G cell plus noise, the same through an episode.
  for (std::int64_t i = 0; i < d.size(); ++i) {
    EXPECT_GE(d.goals[i * 2], 0.0f);
    EXPECT_LE(d.goals[i * 2], 1.5f);
    EXPECT_GE(d.goals[i * 2 + 1], 8.0f);
    EXPECT_LE(d.goals[i * 2 + 1], 9.5f);
    if (i > 0 && !d.timeouts[i - 1]) {
      EXPECT_EQ(d.goals[i * 2], d.goals[(i - 1) * 2]);
    }
  }
  // Not multistart: every episode starts near the origin.
  for (const std::int64_t start : {0, 1001, 2002}) {
    EXPECT_LE(std::abs(d.observations[start * 29]), 0.1f);
    EXPECT_LE(std::abs(d.observations[start * 29 + 1]), 0.1f);
  }
  EXPECT_EQ(made.metadata.at("env_id"), "antmaze-umaze-v2");
  EXPECT_EQ(made.metadata.at("multistart"), "false");

  // Written and read back: D4RL's keys, with infos/goal.
  test::TempDir dir;
  data::write_d4rl(dir / "umaze.hdf5", d, made.metadata);
  const auto back = data::load_dataset(dir / "umaze.hdf5");
  std::vector<std::string> keys;
  for (const auto& a : back.arrays) keys.push_back(a.key);
  for (const char* key : {"observations", "actions", "rewards", "terminals", "timeouts",
                          "infos/goal", "infos/qpos", "infos/qvel"})
    EXPECT_THAT(keys, testing::Contains(std::string(key)));
  EXPECT_EQ(back.data.goals, d.goals);
  EXPECT_EQ(back.env_id, "antmaze-umaze-v2");
  // Episodes end at the timeouts, whatever the terminals say.
  ASSERT_EQ(back.episodes.size(), 3u);
  EXPECT_EQ(back.episodes[0].length, 1001);
  EXPECT_EQ(back.episodes[1].length, 1001);
  EXPECT_FALSE(back.episodes[2].complete());
}

TEST(AntMazeData, TheSameSeedGivesTheSameBytesAtAnyThreadCount) {
  const auto one =
      generate_antmaze_dataset(small("antmaze-medium-play-v2", 1), small_goal_reacher());
  const auto two =
      generate_antmaze_dataset(small("antmaze-medium-play-v2", 2), small_goal_reacher());
  EXPECT_TRUE(one.arrays == two.arrays);
  // Multistart: episodes start on free cells that are not goal cells, anywhere in the maze.
  const auto& m = env::antmaze::maze("BIG_MAZE");
  for (const std::int64_t start : {0, 1001, 2002}) {
    const float x = one.arrays.observations[start * 29],
                y = one.arrays.observations[start * 29 + 1];
    // The start cell's centre is within (x - 1.1, y - 1.1) .. (x + 0.1, y + 0.1).
    bool on_free_cell = false;
    for (int r = 0; r < m.rows(); ++r)
      for (int c = 0; c < m.cols(); ++c) {
        const auto centre = m.centre({r, c});
        if (m.grid[r][c] != '#' && m.grid[r][c] != 'G' && x - centre[0] > -0.11 &&
            x - centre[0] < 1.11 && y - centre[1] > -0.11 && y - centre[1] < 1.11)
          on_free_cell = true;
      }
    EXPECT_TRUE(on_free_cell) << x << ", " << y;
  }
  // Play data goes to the map's goal cells.
  const auto& goals = one.arrays.goals;
  for (std::size_t i = 0; i < goals.size(); i += 2) {
    bool near_goal_cell = false;
    for (const auto& g : m.goals()) {
      const auto c = m.centre(g);
      near_goal_cell |= goals[i] >= c[0] && goals[i] <= c[0] + 1.5 && goals[i + 1] >= c[1] &&
                        goals[i + 1] <= c[1] + 1.5;
    }
    ASSERT_TRUE(near_goal_cell) << goals[i] << ", " << goals[i + 1];
  }
}

TEST(AntMazeData, AGoalReacherOfTheWrongShapeIsRefused) {
  EXPECT_THAT(
      [] {
        generate_antmaze_dataset(small("antmaze-umaze-v2", 1), zero_gaussian_policy(27, 8, {8}));
      },
      testing::ThrowsMessage<Error>(HasSubstr("needs 29 and 8")));
  EXPECT_THAT([] { generate_antmaze_dataset(small("hopper", 1), small_goal_reacher()); },
              testing::Throws<env::EnvError>());
}

// A file in D4RL's antmaze layout under D4RL's download name, without metadata: x moves 0.1 a
// step, terminals are 1 on steps 3-5 (the ant near the goal, going on), a timeout at step 7, and
// a jump in x without a timeout at step 11 (D4RL's v0 resets).
void write_d4rl_antmaze(const std::filesystem::path& path, int n) {
  test::H5Writer w(path);
  std::vector<double> obs, act, rew, goal;
  std::vector<int> term, tout;
  for (int i = 0; i < n; ++i) {
    const double x = i < 12 ? 0.1 * i : 10.0 + 0.1 * i;
    for (int j = 0; j < 29; ++j) obs.push_back(j == 0 ? x : j == 1 ? 0.05 * i : 0.01 * j);
    for (int k = 0; k < 8; ++k) act.push_back(0.1 * k);
    const bool near = i >= 3 && i <= 5;
    rew.push_back(near ? 1.0 : 0.0);
    term.push_back(near);
    tout.push_back(i == 7);
    goal.push_back(0.5), goal.push_back(8.5);
  }
  // D4RL's infos/qpos and infos/qvel: the state after the step, i.e. the next row's observation.
  std::vector<double> qpos, qvel;
  for (int i = 0; i < n; ++i) {
    const int next = std::min(i + 1, n - 1);
    for (int k = 0; k < 15; ++k) qpos.push_back(obs[static_cast<std::size_t>(next * 29 + k)]);
    for (int k = 0; k < 14; ++k) qvel.push_back(obs[static_cast<std::size_t>(next * 29 + 15 + k)]);
  }
  const auto N = static_cast<hsize_t>(n);
  w.numbers("observations", obs, {N, 29}, H5T_IEEE_F32LE, true);
  w.numbers("actions", act, {N, 8}, H5T_IEEE_F32LE, true);
  w.numbers("rewards", rew, {N}, H5T_IEEE_F32LE, true);
  w.bools("terminals", term, {N});
  w.bools("timeouts", tout, {N});
  w.numbers("infos/goal", goal, {N, 2}, H5T_IEEE_F32LE, true);
  w.numbers("infos/qpos", qpos, {N, 15}, H5T_IEEE_F32LE, true);
  w.numbers("infos/qvel", qvel, {N, 14}, H5T_IEEE_F32LE, true);
}

// The goal-reacher that ships drives D4RL's navigator through the maze: on the first 20 of the
// 100 episodes its documented rates come from (seed 1, mean action; 99 of 100 reach umaze's goal)
// at least 18 reach it, and the refined policy is read as a goal-reacher's.
TEST(AntMazeData, TheShippedGoalReacherGetsThroughUmaze) {
  const GaussianPolicy goal_reacher = shipped_goal_reacher();
  EXPECT_EQ(goal_reacher.obs_dim, 29);
  const auto r = navigation_success("antmaze-umaze-v2", goal_reacher, 20, 1, 2, {}, false);
  EXPECT_GE(r.successes, 18) << controller_success_text("antmaze-umaze-v2", r);
}

TEST(AntMazeData, D4rlsAntmazeFilesEndEpisodesAtTimeoutsAndJumpsNotAtTerminals) {
  test::TempDir dir;
  const auto file =
      dir / "Ant_maze_u-maze_noisy_multistart_False_multigoal_False_sparse_fixed.hdf5";
  write_d4rl_antmaze(file, 16);
  const auto ds = data::load_dataset(file);
  EXPECT_EQ(ds.env_id, "antmaze-umaze-v2");
  EXPECT_EQ(env::task(ds.env_id).name, "antmaze-umaze-v2");
  ASSERT_EQ(ds.episodes.size(), 3u);
  EXPECT_EQ(ds.episodes[0].start, 0);
  EXPECT_EQ(ds.episodes[0].length, 8);  // through the terminals, to the timeout at step 7
  EXPECT_EQ(ds.episodes[0].ret, 3.0);   // three steps at the goal
  EXPECT_EQ(ds.episodes[1].start, 8);
  EXPECT_EQ(ds.episodes[1].length, 4);  // cut where x jumps
  EXPECT_FALSE(ds.episodes[2].complete());
  EXPECT_EQ(ds.data.goal_dim, 2);
  EXPECT_TRUE(ds.task_caveat.empty());
  // The states replayed are the observations' (D4RL stored them one row late).
  for (std::int64_t i = 0; i < ds.data.size(); ++i) {
    for (int k = 0; k < 15; ++k)
      ASSERT_EQ(ds.data.qpos[i * 15 + k], ds.data.observations[i * 29 + k]);
    for (int k = 0; k < 14; ++k)
      ASSERT_EQ(ds.data.qvel[i * 14 + k], ds.data.observations[i * 29 + 15 + k]);
  }

  // The names of D4RL's other files.
  EXPECT_EQ(data::d4rl_antmaze_task_of_file(
                "/x/Ant_maze_big-maze_noisy_multistart_True_multigoal_False_sparse.hdf5"),
            "antmaze-medium-play-v0");
  EXPECT_EQ(data::d4rl_antmaze_task_of_file(
                "Ant_maze_hardest-maze_noisy_multistart_True_multigoal_True_sparse_fixed.hdf5"),
            "antmaze-large-diverse-v2");
  EXPECT_EQ(data::d4rl_antmaze_task_of_file(
                "Ant_maze_u-maze_noisy_multistart_True_multigoal_True_sparse_fixed.hdf5"),
            "antmaze-umaze-diverse-v2");
  EXPECT_EQ(data::d4rl_antmaze_task_of_file("antmaze-large-play-v2.hdf5"), "antmaze-large-play-v2");
  EXPECT_EQ(data::d4rl_antmaze_task_of_file("hopper-medium-v2.hdf5"), "");
}

// Minari's D4RL/antmaze layout: one group per episode, dict observations of Gymnasium-Robotics'
// AntMaze (achieved_goal, desired_goal, observation of 27).
TEST(AntMazeData, MinarisAntmazeLoadsAndIsNamedAsTheOtherTaskItIs) {
  test::TempDir dir;
  const auto file = dir / "D4RL" / "antmaze" / "umaze-v1" / "data" / "main_data.hdf5";
  test::write_minari_antmaze_fixture(file);
  const auto ds = data::load_dataset(file.parent_path().parent_path());
  EXPECT_EQ(ds.format, "minari");
  ASSERT_EQ(ds.episodes.size(), 2u);
  EXPECT_EQ(ds.episodes[0].length, 5);
  EXPECT_EQ(ds.episodes[0].end, data::EndReason::Terminal);
  EXPECT_EQ(ds.episodes[1].length, 3);
  EXPECT_EQ(ds.episodes[1].end, data::EndReason::Timeout);
  EXPECT_EQ(ds.data.obs_dim, 31);
  EXPECT_EQ(ds.env_id, "AntMaze_UMaze-v4");
  EXPECT_THAT(ds.task_caveat, HasSubstr("not D4RL's antmaze"));
  EXPECT_THAT(ds.task_caveat, HasSubstr("0.45"));
  // Not simulated as D4RL's task: asking for it says why.
  EXPECT_THAT([&] { env::task(ds.env_id); },
              testing::ThrowsMessage<env::EnvError>(HasSubstr("Gymnasium-Robotics' AntMaze")));
  // Through the reader process too.
  data::LoadOptions isolated;
  isolated.isolate = true;
  EXPECT_EQ(data::load_dataset(file, isolated).task_caveat, ds.task_caveat);
}

}  // namespace
}  // namespace dstudio::behaviour
