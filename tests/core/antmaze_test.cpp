// AntMaze against D4RL's constants (maze_env.py, ant.py, goal_reaching_env.py, locomotion's
// registrations): the maps and their walls in the compiled model, the goal and start noise, the
// 0.5 threshold, the horizons, the action scaling, the observation, and the navigator's
// breadth-first search.

#include "dstudio/env/antmaze.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cmath>
#include <numbers>

#include "dstudio/env/environment.h"

namespace dstudio::env::antmaze {
namespace {

using testing::HasSubstr;

int count_walls(const Maze& m) {
  int n = 0;
  for (const auto& row : m.grid) n += static_cast<int>(std::count(row.begin(), row.end(), '#'));
  return n;
}

TEST(AntMaze, TheSixTasksAreD4rlsV2TasksWithTheirHorizons) {
  const std::pair<const char*, int> tasks[] = {
      {"antmaze-umaze-v2", 700},        {"antmaze-umaze-diverse-v2", 700},
      {"antmaze-medium-play-v2", 1000}, {"antmaze-medium-diverse-v2", 1000},
      {"antmaze-large-play-v2", 1000},  {"antmaze-large-diverse-v2", 1000}};
  for (const auto& [name, horizon] : tasks) {
    const auto& t = task(name);
    EXPECT_EQ(t.name, name);
    EXPECT_EQ(t.max_episode_steps, horizon) << name;
    EXPECT_EQ(t.obs_dim, 29) << name;
    EXPECT_EQ(t.act_dim, 8) << name;
    EXPECT_EQ(t.frame_skip, 5) << name;
    EXPECT_EQ(t.ref_min_score, 0.0) << name;
    EXPECT_EQ(t.ref_max_score, 1.0) << name;
    EXPECT_TRUE(t.goal_reaching) << name;
    ASSERT_EQ(t.observation_names.size(), 29u);
  }
  // Datasets of the earlier versions find the same task.
  EXPECT_EQ(task("antmaze-umaze-v0").name, "antmaze-umaze-v2");
  EXPECT_EQ(task("antmaze-umaze-diverse-v0").name, "antmaze-umaze-diverse-v2");
  EXPECT_EQ(task("antmaze-large-play-v1").name, "antmaze-large-play-v2");
  EXPECT_EQ(task("hopper-medium-v2").name, "hopper");
  EXPECT_EQ(task("walker2d").name, "walker2d");
}

TEST(AntMaze, TheMapsAreD4rlsAndTheirWallsSitWhereMazeEnvPutsThem) {
  EXPECT_EQ(maze("U_MAZE_TEST").rows(), 5);
  EXPECT_EQ(maze("U_MAZE_TEST").cols(), 5);
  EXPECT_EQ(maze("BIG_MAZE_TEST").rows(), 8);
  EXPECT_EQ(maze("BIG_MAZE_TEST").cols(), 8);
  EXPECT_EQ(maze("HARDEST_MAZE_TEST").rows(), 9);
  EXPECT_EQ(maze("HARDEST_MAZE_TEST").cols(), 12);
  EXPECT_EQ(count_walls(maze("HARDEST_MAZE_TEST")), 62);
  // The generation maps differ from the evaluation maps only in their G cells.
  EXPECT_EQ(maze("BIG_MAZE").goals(), (std::vector<Cell>{{2, 6}, {5, 1}, {6, 5}}));
  EXPECT_EQ(maze("HARDEST_MAZE").goals().size(), 7u);
  EXPECT_TRUE(maze("BIG_MAZE_DIVERSE").goals().empty());

  // Nominal goals: umaze (0, 8), medium (20, 20), large (32, 24).
  EXPECT_EQ(nominal_goal(maze("U_MAZE_TEST")), (Point{0.0, 8.0}));
  EXPECT_EQ(nominal_goal(maze("BIG_MAZE_TEST")), (Point{20.0, 20.0}));
  EXPECT_EQ(nominal_goal(maze("HARDEST_MAZE_TEST")), (Point{32.0, 24.0}));

  for (const char* name : {"antmaze-umaze-v2", "antmaze-medium-play-v2", "antmaze-large-play-v2"}) {
    const auto& t = task(name);
    const Maze& m = *task_maps(name).evaluation;
    const ModelPtr model = load_model(t);
    EXPECT_EQ(model->nq, 15);
    EXPECT_EQ(model->nv, 14);
    EXPECT_EQ(model->nu, 8);
    EXPECT_DOUBLE_EQ(model->opt.timestep, 0.02);
    EXPECT_EQ(model->opt.integrator, mjINT_RK4);
    int boxes = 0;
    for (int i = 0; i < m.rows(); ++i)
      for (int j = 0; j < m.cols(); ++j) {
        const std::string block = "block_" + std::to_string(i) + "_" + std::to_string(j);
        const int id = mj_name2id(model.get(), mjOBJ_GEOM, block.c_str());
        if (m.grid[i][j] != '#') {
          EXPECT_EQ(id, -1) << block;
          continue;
        }
        ASSERT_GE(id, 0) << name << " " << block;
        ++boxes;
        // pos = (j s - torso_x, i s - torso_y, h/2 s) with the start at (1, 1): torso (4, 4).
        EXPECT_NEAR(model->geom_pos[3 * id + 0], j * 4.0 - 4.0, 1e-9);
        EXPECT_NEAR(model->geom_pos[3 * id + 1], i * 4.0 - 4.0, 1e-9);
        EXPECT_NEAR(model->geom_pos[3 * id + 2], 1.0, 1e-9);
        EXPECT_NEAR(model->geom_size[3 * id + 0], 2.0, 1e-9);
        EXPECT_NEAR(model->geom_size[3 * id + 1], 2.0, 1e-9);
        EXPECT_NEAR(model->geom_size[3 * id + 2], 1.0, 1e-9);
        EXPECT_EQ(model->geom_type[id], mjGEOM_BOX);
      }
    EXPECT_EQ(boxes, count_walls(m)) << name;
    // D4RL's actuator order and +/-30 motors of gear 1.
    const char* order[] = {"hip_4", "ankle_4", "hip_1", "ankle_1",
                           "hip_2", "ankle_2", "hip_3", "ankle_3"};
    for (int a = 0; a < 8; ++a) {
      EXPECT_STREQ(mj_id2name(model.get(), mjOBJ_JOINT, model->actuator_trnid[2 * a]), order[a]);
      EXPECT_EQ(model->actuator_ctrlrange[2 * a], -30.0);
      EXPECT_EQ(model->actuator_ctrlrange[2 * a + 1], 30.0);
      EXPECT_EQ(model->actuator_gear[6 * a], 1.0);
    }
  }
}

TEST(AntMaze, GoalsCarryD4rlsNoiseOfAtMostOneAndAHalfOnEachAxis) {
  for (const char* name : {"U_MAZE_TEST", "BIG_MAZE_TEST", "HARDEST_MAZE_TEST"}) {
    const Maze& m = maze(name);
    const Point nominal = nominal_goal(m);
    Random random(5);
    double sum[2] = {0, 0};
    double low[2] = {1e9, 1e9}, high[2] = {-1e9, -1e9};
    const int n = 20000;
    for (int k = 0; k < n; ++k) {
      const Point g = sample_goal(m, random);
      for (int a = 0; a < 2; ++a) {
        const double d = g[static_cast<std::size_t>(a)] - nominal[static_cast<std::size_t>(a)];
        sum[a] += d, low[a] = std::min(low[a], d), high[a] = std::max(high[a], d);
      }
    }
    for (int a = 0; a < 2; ++a) {
      // U(0, 1) + U(0, 0.5): in [0, 1.5], mean 0.75, and it reaches near both ends.
      EXPECT_GE(low[a], 0.0) << name;
      EXPECT_LE(high[a], 1.5) << name;
      EXPECT_LT(low[a], 0.05) << name;
      EXPECT_GT(high[a], 1.4) << name;
      EXPECT_NEAR(sum[a] / n, 0.75, 0.01) << name;
    }
  }
  // Goals of a map without G cells come from every free cell; starts never from a G cell.
  Random random(9);
  for (int k = 0; k < 2000; ++k) {
    const Maze& diverse = maze("BIG_MAZE_DIVERSE");
    const Point g = sample_goal(diverse, random);
    EXPECT_TRUE(diverse.free({static_cast<int>(std::floor(g[1] / 4.0 + 1.0)),
                              static_cast<int>(std::floor(g[0] / 4.0 + 1.0))}));
    const Maze& play = maze("BIG_MAZE");
    const Point s = sample_start(play, random);
    const Cell c = {static_cast<int>(std::floor(s[1] / 4.0 + 1.0)),
                    static_cast<int>(std::floor(s[0] / 4.0 + 1.0))};
    EXPECT_TRUE(play.free(c));
    EXPECT_NE(play.at(c), 'G');
  }
}

TEST(AntMaze, ResetObservationAndActionScalingFollowD4rlsAnt) {
  Environment e("antmaze-umaze-v2");
  std::vector<float> obs(29);
  e.reset(11, obs);
  const auto* m = e.model();
  EXPECT_DOUBLE_EQ(m->qpos0[2], 0.75);  // the torso's z: gym takes qpos0, not <numeric init_qpos>
  for (int i = 0; i < 15; ++i) {
    EXPECT_LE(std::abs(e.qpos()[i] - m->qpos0[i]), 0.1);
    EXPECT_EQ(obs[i], static_cast<float>(e.qpos()[i]));
  }
  for (int i = 0; i < 14; ++i) EXPECT_EQ(obs[15 + i], static_cast<float>(e.qvel()[i]));
  // The goal of this episode lies within the noise of the nominal goal.
  ASSERT_EQ(e.task_state().size(), 2u);
  EXPECT_GE(e.task_state()[0], 0.0);
  EXPECT_LE(e.task_state()[0], 1.5);
  EXPECT_GE(e.task_state()[1], 8.0);
  EXPECT_LE(e.task_state()[1], 9.5);
  // Actions in [-1, 1] map linearly onto +/-30, beyond that they are clipped.
  const std::vector<float> action = {1.0f, -1.0f, 0.5f, -0.25f, 0.0f, 2.0f, -3.0f, 0.1f};
  e.step(action, obs);
  const double expect[] = {30, -30, 15, -7.5, 0, 30, -30, 3};
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(e.data()->ctrl[i], expect[i], 1e-5) << i;
}

// A step replayed from one state with the goal 0.499 and 0.501 from where the ant ends up.
TEST(AntMaze, TheRewardIsOneWithinHalfAUnitOfTheGoalAndTheEpisodeEndsThere) {
  Environment e("antmaze-umaze-v2");
  std::vector<float> obs(29), action(8, 0.3f);
  e.reset(4, obs);
  const PhysicsState before = e.save_state();
  e.step(action, obs);
  const double x = e.qpos()[0], y = e.qpos()[1];
  for (const double offset : {0.499, 0.501}) {
    PhysicsState s = before;
    s.task_state = {x + offset * 0.6, y + offset * 0.8};
    e.restore_state(s);
    const auto r = e.step(action, obs);
    const bool inside = offset < 0.5;
    EXPECT_EQ(r.reward, inside ? 1.0 : 0.0) << offset;
    EXPECT_EQ(r.terminated, inside) << offset;
    EXPECT_EQ(r.success, inside) << offset;
  }
  // Far from the goal the episode runs to the task's horizon, then is cut.
  for (const auto& [name, horizon] :
       {std::pair<const char*, int>{"antmaze-umaze-v2", 700}, {"antmaze-medium-play-v2", 1000}}) {
    Environment far(name);
    far.reset(1, obs);
    const std::vector<double> nowhere = {-100.0, -100.0};
    far.set_task_state(nowhere);
    int steps = 0;
    StepResult r;
    std::vector<float> zero(8, 0.0f);
    do {
      r = far.step(zero, obs);
      ++steps;
      ASSERT_EQ(r.reward, 0.0);
    } while (!r.terminated && !r.truncated);
    EXPECT_TRUE(r.truncated) << name;
    EXPECT_EQ(steps, horizon) << name;
  }
}

TEST(AntMaze, TheNavigatorTakesD4rlsShortestPathAndItsHalfCellOffset) {
  const Maze& u = maze("U_MAZE_TEST");
  // int(1 + y/4), int(1 + x/4), floored at 1e-4: the start's centre and points just short of the
  // next cell's centre are the start's cell.
  EXPECT_EQ(u.navigator_cell({0.0, 0.0}), (Cell{1, 1}));
  EXPECT_EQ(u.navigator_cell({-1.5, -1.0}), (Cell{1, 1}));
  EXPECT_EQ(u.navigator_cell({3.99, 0.0}), (Cell{1, 1}));
  EXPECT_EQ(u.navigator_cell({4.0, 0.0}), (Cell{1, 2}));
  EXPECT_EQ(u.navigator_cell({0.5, 8.7}), (Cell{3, 1}));
  // Around the U: right, right, down, down, left, left.
  Cell c = {1, 1};
  const Cell target = {3, 1};
  std::vector<Cell> path;
  while (c != target) {
    c = next_cell(u, c, target);
    path.push_back(c);
  }
  EXPECT_EQ(path, (std::vector<Cell>{{1, 2}, {1, 3}, {2, 3}, {3, 3}, {3, 2}, {3, 1}}));
  // The waypoint is the next cell's centre plus U(0, 1), or the target itself in its cell.
  Random random(2);
  for (int k = 0; k < 200; ++k) {
    const Waypoint w = navigate(u, {0.2, 0.1}, {0.6, 8.4}, random);
    EXPECT_EQ(w.cell, (Cell{1, 2}));
    EXPECT_GE(w.xy[0], 4.0);
    EXPECT_LE(w.xy[0], 5.0);
    EXPECT_GE(w.xy[1], 0.0);
    EXPECT_LE(w.xy[1], 1.0);
  }
  const Waypoint last = navigate(u, {1.0, 8.2}, {0.6, 8.4}, random);
  EXPECT_EQ(last.xy, (Point{0.6, 8.4}));
  // A maze without a way through is an error, not a hang.
  Maze closed{"closed", {"#####", "#R#.#", "#####"}};
  EXPECT_THAT(
      [&] {
        next_cell(closed, {1, 1}, {1, 3});
      },
      testing::ThrowsMessage<EnvError>(HasSubstr("no path")));
}

// What the viewers draw: the goal, and the next cell's centre the navigator sends the ant to.
TEST(AntMaze, TheViewersMarkTheGoalAndTheNavigatorsNextWaypoint) {
  const auto& t = task("antmaze-umaze-v2");
  ASSERT_TRUE(t.markers);
  const std::vector<double> qpos = {0.3, -0.2, 0.75}, goal = {0.6, 8.4};
  const auto marks = t.markers(qpos, goal);
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_EQ(marks[0].label, "goal");
  EXPECT_EQ(marks[0].x, 0.6);
  EXPECT_EQ(marks[0].y, 8.4);
  EXPECT_EQ(marks[0].radius, 0.5);
  EXPECT_EQ(marks[1].label, "waypoint");
  EXPECT_EQ(marks[1].x, 4.0);  // cell (1, 2)
  EXPECT_EQ(marks[1].y, 0.0);
  // In the goal's cell the waypoint is the goal itself.
  const std::vector<double> near = {1.0, 8.2};
  EXPECT_EQ(t.markers(near, goal)[1].x, 0.6);
  // The locomotion tasks draw nothing beyond the body.
  EXPECT_FALSE(task("hopper").markers);
}

TEST(AntMaze, TheGoalReachersInputIsTheStateWithTheGoalRescaledToLengthTen) {
  std::vector<double> qpos(15), qvel(14);
  for (int i = 0; i < 15; ++i) qpos[i] = 0.1 * i;
  for (int i = 0; i < 14; ++i) qvel[i] = -0.2 * i;
  std::vector<float> input(29);
  goal_reacher_input(qpos, qvel, {0.0 + 3.0, 0.1 + 4.0}, input);
  for (int i = 0; i < 13; ++i) EXPECT_EQ(input[i], static_cast<float>(qpos[2 + i]));
  for (int i = 0; i < 14; ++i) EXPECT_EQ(input[13 + i], static_cast<float>(qvel[i]));
  EXPECT_NEAR(input[27], 6.0, 1e-6);
  EXPECT_NEAR(input[28], 8.0, 1e-6);

  // The open plane: goals within 10 of the origin, seen relative to the torso as they are,
  // reward -distance, no end before 300 steps.
  const auto d = goal_reaching_definition();
  Environment e(d, load_model(d));
  std::vector<float> obs(29), zero(8, 0.0f);
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    e.reset(seed, obs);
    EXPECT_LE(std::hypot(e.task_state()[0], e.task_state()[1]), 10.0);
    EXPECT_FLOAT_EQ(obs[27], static_cast<float>(e.task_state()[0] - e.qpos()[0]));
    EXPECT_FLOAT_EQ(obs[28], static_cast<float>(e.task_state()[1] - e.qpos()[1]));
    for (int i = 0; i < 13; ++i) EXPECT_EQ(obs[i], static_cast<float>(e.qpos()[2 + i]));
  }
  const auto r = e.step(zero, obs);
  EXPECT_NEAR(r.reward,
              -std::hypot(e.qpos()[0] - e.task_state()[0], e.qpos()[1] - e.task_state()[1]), 1e-12);
  EXPECT_FALSE(r.terminated);
  EXPECT_EQ(d.max_episode_steps, 300);

  // Turned over, the ant goes on as D4RL's does (behaviour navigate counts the turned over).
  std::vector<double> qpos_upturned(e.qpos().begin(), e.qpos().end());
  std::vector<double> qvel_still(14, 0.0);
  qpos_upturned[2] = 0.3;
  qpos_upturned[3] = 0.0, qpos_upturned[4] = 1.0, qpos_upturned[5] = 0.0, qpos_upturned[6] = 0.0;
  e.set_state(qpos_upturned, qvel_still);
  const auto upturned = e.step(zero, obs);
  EXPECT_FALSE(upturned.terminated);
  EXPECT_LT(torso_up(e.qpos()), 0.0);
  EXPECT_NEAR(upturned.reward,
              -std::hypot(e.qpos()[0] - e.task_state()[0], e.qpos()[1] - e.task_state()[1]), 1e-12);
}

// The goal sequence: the plane's first goal, then a new one 2 to 10 from the torso every 25 to
// 100 steps, the step paid against the goal it was taken for; 1000 steps; the same episode for
// the same seed, also after its state is saved and restored mid-way.
TEST(AntMaze, TheGoalSequenceMovesTheGoalWhileTheAntRuns) {
  const auto d = goal_sequence_definition();
  EXPECT_EQ(d.max_episode_steps, 1000);
  Environment e(d, load_model(d));
  std::vector<float> obs(29), zero(8, 0.0f);
  int changes = 0;
  for (std::uint64_t seed = 0; seed < 4; ++seed) {
    e.reset(seed, obs);
    EXPECT_LE(std::hypot(e.task_state()[0], e.task_state()[1]), 10.0);
    int last_change = 0;
    for (int t = 1; t <= 400; ++t) {
      const std::vector<double> before(e.task_state().begin(), e.task_state().end());
      const auto r = e.step(zero, obs);
      EXPECT_NEAR(r.reward, -std::hypot(e.qpos()[0] - before[0], e.qpos()[1] - before[1]), 1e-12);
      if (e.task_state()[0] != before[0]) {
        ++changes;
        const int gap = t - last_change;
        if (last_change == 0)
          EXPECT_LE(gap, 100);
        else
          EXPECT_TRUE(gap >= 25 && gap <= 100) << gap;
        last_change = t;
        const double away =
            std::hypot(e.task_state()[0] - e.qpos()[0], e.task_state()[1] - e.qpos()[1]);
        EXPECT_GE(away, 2.0);
        EXPECT_LE(away, 10.0);
      }
      EXPECT_FLOAT_EQ(obs[27], static_cast<float>(e.task_state()[0] - e.qpos()[0]));
    }
  }
  EXPECT_GE(changes, 4 * 4);  // at least one every 100 steps

  // Saved and restored mid-way, an episode draws the same goals as one that never stopped.
  e.reset(9, obs);
  for (int t = 0; t < 150; ++t) e.step(zero, obs);
  const auto saved = e.save_state();
  std::vector<double> goals_straight;
  for (int t = 0; t < 300; ++t) {
    e.step(zero, obs);
    goals_straight.push_back(e.task_state()[0]);
  }
  Environment other(d, load_model(d));
  other.reset(1, obs);
  other.restore_state(saved);
  for (int t = 0; t < 300; ++t) {
    other.step(zero, obs);
    EXPECT_EQ(other.task_state()[0], goals_straight[static_cast<std::size_t>(t)]);
  }
}

// The torso's up axis from its quaternion (w, x, y, z): upright 1, a quarter turn about x 0, half
// a turn about x or y -1; a turn about z leaves it up; an unnormalised quaternion reads the same.
TEST(AntMaze, TheTorsosUpAxisTellsAnUpturnedAnt) {
  const double h = std::sqrt(0.5);
  const auto up = [](double w, double x, double y, double z) {
    return torso_up(std::vector<double>{0.0, 0.0, 0.75, w, x, y, z});
  };
  EXPECT_DOUBLE_EQ(up(1, 0, 0, 0), 1.0);
  EXPECT_NEAR(up(h, h, 0, 0), 0.0, 1e-15);
  EXPECT_DOUBLE_EQ(up(0, 1, 0, 0), -1.0);
  EXPECT_DOUBLE_EQ(up(0, 0, 1, 0), -1.0);
  EXPECT_DOUBLE_EQ(up(h, 0, 0, h), 1.0);
  EXPECT_DOUBLE_EQ(up(2, 0, 0, 0), 1.0);
  // 60 degrees about y: cos 60 = 0.5.
  EXPECT_NEAR(up(std::cos(std::numbers::pi / 6), 0, std::sin(std::numbers::pi / 6), 0), 0.5, 1e-15);
  EXPECT_THROW(torso_up(std::vector<double>{0.0, 0.0, 0.75}), EnvError);
}

}  // namespace
}  // namespace dstudio::env::antmaze
