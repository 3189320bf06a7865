// Adroit against D4RL's hand_manipulation_suite (pen_v0.py, its registration and infos.py): the
// model and its dimensions, the action mapping, the observation, the reward with its bonuses, the
// drop that ends a pen episode, and the success rule. Reference values for a fixed target were
// computed from D4RL's equations on the same model, independently of this code.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cmath>
#include <vector>

#include "dstudio/env/environment.h"

namespace dstudio::env {
namespace {

using testing::DoubleNear;

TEST(Adroit, PenIsD4rlsTaskWithItsDimensionsHorizonAndReferences) {
  const auto& pen = task("pen-human-v1");
  EXPECT_EQ(pen.name, "pen");
  EXPECT_EQ(task("pen-expert-v0").name, "pen");
  EXPECT_EQ(find_task("pendulum"), nullptr) << "a name is matched at the end of a word";
  EXPECT_EQ(task("HopperMedium").name, "hopper");
  EXPECT_EQ(pen.family, "adroit");
  EXPECT_EQ(pen.obs_dim, 45);
  EXPECT_EQ(pen.act_dim, 24);
  EXPECT_EQ(pen.max_episode_steps, 100);
  EXPECT_EQ(pen.frame_skip, 5);
  EXPECT_DOUBLE_EQ(pen.ref_min_score, 96.262799);
  EXPECT_DOUBLE_EQ(pen.ref_max_score, 3076.8331017826877);
  const auto model = load_model(pen);
  EXPECT_EQ(model->nq, 30);
  EXPECT_EQ(model->nu, 24);
  EXPECT_DOUBLE_EQ(model->opt.timestep, 0.002);  // 0.01 s a step
  Environment env("pen");
  EXPECT_DOUBLE_EQ(env.dt(), 0.01);
}

TEST(Adroit, ActionsMapOntoEachActuatorsRangeAndAreClipped) {
  Environment env("pen");
  std::vector<float> obs(45);
  env.reset(0, obs);
  const mjModel* m = env.model();
  for (const float a : {-1.0f, 0.0f, 0.5f, 1.0f, 3.0f}) {
    std::vector<float> action(24, a);
    env.step(action, obs);
    for (int i = 0; i < 24; ++i) {
      const double lo = m->actuator_ctrlrange[2 * i], hi = m->actuator_ctrlrange[2 * i + 1];
      const double clipped = std::min(1.0, std::max(-1.0, static_cast<double>(a)));
      EXPECT_DOUBLE_EQ(env.data()->ctrl[i], (lo + hi) / 2 + clipped * (hi - lo) / 2) << i;
    }
  }
  // The thumb's A_THJ4 has no range of its own: the default class's [-1, 1].
  const int thj4 = mj_name2id(m, mjOBJ_ACTUATOR, "A_THJ4");
  EXPECT_EQ(m->actuator_ctrlrange[2 * thj4], -1.0);
  EXPECT_EQ(m->actuator_ctrlrange[2 * thj4 + 1], 1.0);
  // The gains D4RL sets in code.
  const int wrist = mj_name2id(m, mjOBJ_ACTUATOR, "A_WRJ1");
  EXPECT_EQ(m->actuator_gainprm[wrist * mjNGAIN], 10.0);
  EXPECT_EQ(m->actuator_biasprm[wrist * mjNBIAS + 1], -10.0);
}

// D4RL's euler2quat([0.5, -0.5, 0]) as the target: the observation after reset and the reward of
// one step with the action 0, from D4RL's equations.
TEST(Adroit, PenObservesAndRewardsAsD4rlDoes) {
  Environment env("pen");
  std::vector<float> obs(45);
  env.reset(3, obs);
  env.set_task_state(std::vector<double>{0.938791281, 0.239712769, -0.239712769, -0.061208719, 0});
  env.observe(obs);
  const std::vector<double> tail = {0,        -0.2, 0.25, 0, 0,        0,         0,
                                    0,        0,    1,    0, 0.000796, -0.479426, -0.420735,
                                    0.770151, 0,    0,    0, 1.479425, 0.420735,  -0.769355};
  for (int i = 0; i < 24; ++i) EXPECT_EQ(obs[static_cast<std::size_t>(i)], 0.0f) << i;
  for (std::size_t i = 0; i < tail.size(); ++i) EXPECT_NEAR(obs[24 + i], tail[i], 2e-6) << 24 + i;
  const auto r = env.step(std::vector<float>(24, 0.0f), obs);
  EXPECT_THAT(r.reward, DoubleNear(-0.479202132, 1e-6));
  EXPECT_FALSE(r.terminated);
  // The reward follows from the observation: -|pen - goal| + <pen axis, target axis>.
  const double dist = std::hypot(obs[39], obs[40], obs[41]);
  const double similarity = obs[33] * obs[36] + obs[34] * obs[37] + obs[35] * obs[38];
  EXPECT_THAT(r.reward, DoubleNear(-dist + similarity, 1e-5));
}

TEST(Adroit, ThePenDroppedEndsTheEpisodeWithAPenalty) {
  Environment env("pen");
  std::vector<float> obs(45);
  env.reset(1, obs);
  std::vector<double> qpos(env.qpos().begin(), env.qpos().end()),
      qvel(env.qvel().begin(), env.qvel().end());
  // The pen's slide joints are in its turned body's frame: the one along the world's z takes it
  // from 0.25 down to 0.05, under 0.075.
  const mjData* data = env.data();
  int down = -1;
  for (int j = 24; j < 27; ++j)
    if (std::abs(data->xaxis[3 * j + 2]) > 0.99) down = j;
  ASSERT_GE(down, 0);
  qpos[static_cast<std::size_t>(down)] = -0.2 / data->xaxis[3 * down + 2];
  env.set_state(qpos, qvel);
  const auto r = env.step(std::vector<float>(24, 0.0f), obs);
  EXPECT_TRUE(r.terminated);
  const double dist = std::hypot(obs[39], obs[40], obs[41]);
  const double similarity = obs[33] * obs[36] + obs[34] * obs[37] + obs[35] * obs[38];
  EXPECT_LT(obs[26], 0.075);
  EXPECT_THAT(r.reward, DoubleNear(-dist + similarity - 5.0, 1e-5));
}

// A target turned as the pen already is: the goal is achieved (+10 +50) at every step, and the
// episode is a success once it has been for more than 20 steps.
TEST(Adroit, PenSucceedsAfterMoreThanTwentyGoalSteps) {
  Environment env("pen");
  std::vector<float> obs(45);
  env.reset(0, obs);
  const mjModel* m = env.model();
  const int pen = mj_name2id(m, mjOBJ_BODY, "Object");
  std::vector<double> state(m->body_quat + 4 * pen, m->body_quat + 4 * pen + 4);
  state.push_back(19.0);
  env.set_task_state(state);
  auto r = env.step(std::vector<float>(24, 0.0f), obs);
  EXPECT_GT(r.reward, 59.0);
  EXPECT_EQ(env.task_state()[4], 20.0);
  EXPECT_FALSE(r.success);
  r = env.step(std::vector<float>(24, 0.0f), obs);
  EXPECT_EQ(env.task_state()[4], 21.0);
  EXPECT_TRUE(r.success);
}

// The target's orientation lives in the environment's own model: two environments with different
// targets do not disturb each other, and a restored state brings its target back.
TEST(Adroit, EachEnvironmentKeepsItsOwnTarget) {
  Environment a("pen"), b("pen");
  std::vector<float> oa(45), ob(45);
  a.reset(1, oa);
  b.reset(2, ob);
  EXPECT_NE(a.model(), b.model());
  EXPECT_NE(oa[36], ob[36]);
  const auto saved = a.save_state();
  a.reset(2, oa);
  EXPECT_EQ(oa, ob);
  a.restore_state(saved);
  std::vector<float> again(45);
  a.observe(again);
  Environment c("pen");
  std::vector<float> oc(45);
  c.reset(1, oc);
  EXPECT_EQ(again, oc);
}

struct Golden {
  const char* task;
  int obs_dim, act_dim, horizon;
  double ref_min, ref_max;
  std::size_t tail_from;
  std::vector<double> tail;
  double reward;
};

// The task state that puts each task's randomised part where the reference values were computed.
std::vector<double> reference_state(const std::string& name, const Environment& env) {
  if (name == "door") return {-0.25, 0.3, 0.3, 0.0};
  if (name == "hammer") return {env.task_state()[0], env.task_state()[1], 0.175, 0.0};
  return {0.0, 0.075, 0.035, 0.0, 0.0, 0.25, 0.0};  // relocate: the ball and the target
}

// Each task's observation after reset and the reward of one step with the action 0, for a fixed
// draw, from D4RL's equations on the same model.
TEST(Adroit, DoorHammerAndRelocateObserveAndRewardAsD4rlDoes) {
  const std::vector<Golden> golden = {
      {"door",
       39,
       28,
       200,
       -56.512833,
       2880.5693087298737,
       27,
       {0, 0, -0.006920, -0.199960, 0.150387, 0.040000, 0.150000, 0.275000, -0.046920, -0.349960,
        -0.124613, -1},
       -0.289562674},
      {"hammer",
       46,
       26,
       200,
       -274.856578,
       12794.134825156867,
       33,
       {-0.006920, -0.199960, 0.150387, 0, -0.2, 0.035, 1.57, 0, 0, -0.044136, -0.036598, 0.175029,
        0},
       -1.376781887},
      {"relocate",
       39,
       30,
       200,
       -6.425911,
       4233.877797728884,
       30,
       {-0.006920, -0.274960, 0.115387, -0.006920, -0.199960, -0.099613, 0, 0.075, -0.215},
       -0.029757401},
  };
  for (const auto& g : golden) {
    const auto& spec = task(std::string(g.task) + "-expert-v1");
    EXPECT_EQ(spec.name, g.task);
    EXPECT_EQ(spec.obs_dim, g.obs_dim) << g.task;
    EXPECT_EQ(spec.act_dim, g.act_dim) << g.task;
    EXPECT_EQ(spec.max_episode_steps, g.horizon) << g.task;
    EXPECT_DOUBLE_EQ(spec.ref_min_score, g.ref_min) << g.task;
    EXPECT_DOUBLE_EQ(spec.ref_max_score, g.ref_max) << g.task;
    Environment env(g.task);
    std::vector<float> obs(static_cast<std::size_t>(g.obs_dim));
    env.reset(5, obs);
    env.set_task_state(reference_state(g.task, env));
    env.observe(obs);
    for (std::size_t i = 0; i < g.tail.size(); ++i)
      EXPECT_NEAR(obs[g.tail_from + i], g.tail[i], 2e-6) << g.task << " " << i;
    const auto r = env.step(std::vector<float>(static_cast<std::size_t>(g.act_dim), 0.0f), obs);
    EXPECT_THAT(r.reward, DoubleNear(g.reward, 1e-6)) << g.task;
    EXPECT_FALSE(r.terminated) << g.task << " never ends before its horizon";
  }
}

// The randomised parts are D4RL's draws in D4RL's ranges.
TEST(Adroit, ResetsDrawInD4rlsRanges) {
  Environment door("door"), hammer("hammer"), relocate("relocate"), pen("pen");
  std::vector<float> o39(39), o46(46), o45(45);
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    door.reset(seed, o39);
    const auto d = door.task_state();
    EXPECT_TRUE(d[0] >= -0.3 && d[0] < -0.2 && d[1] >= 0.25 && d[1] < 0.35 && d[2] >= 0.252 &&
                d[2] < 0.35);
    hammer.reset(seed, o46);
    EXPECT_TRUE(hammer.task_state()[2] >= 0.1 && hammer.task_state()[2] < 0.25);
    EXPECT_DOUBLE_EQ(hammer.task_state()[0], 0.05);
    relocate.reset(seed, o39);
    const auto r = relocate.task_state();
    EXPECT_TRUE(r[0] >= -0.15 && r[0] < 0.15 && r[1] >= -0.15 && r[1] < 0.3);
    EXPECT_TRUE(r[3] >= -0.2 && r[3] < 0.2 && r[4] >= -0.2 && r[4] < 0.2 && r[5] >= 0.15 &&
                r[5] < 0.35);
    // The observation says where the ball and the target are: obj - target.
    EXPECT_NEAR(o39[36], r[0] - r[3], 1e-6);
    pen.reset(seed, o45);
    const auto q = pen.task_state();
    EXPECT_NEAR(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3], 1.0, 1e-12);
  }
}

}  // namespace
}  // namespace dstudio::env
