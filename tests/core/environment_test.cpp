// The environments against MuJoCo itself: observation, reward and termination derived from the
// simulator's state by hand, D4RL's dimensions, seeding, and bad input.

#include "dstudio/env/environment.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cmath>
#include <fstream>

#include "dstudio/env/action_names.h"
#include "dstudio/env/compatibility.h"
#include "dstudio/env/episode_end.h"
#include "h5_fixture.h"

namespace dstudio::env {
namespace {

using testing::HasSubstr;

std::vector<double> state_of(const Environment& e, bool velocities) {
  const auto s = velocities ? e.qvel() : e.qpos();
  return {s.begin(), s.end()};
}

TEST(Environment, DimensionsMatchD4rl) {
  struct Expect {
    const char* name;
    int obs, act, nq, nv, frame_skip;
    double dt;
  };
  for (const auto& x :
       {Expect{"hopper", 11, 3, 6, 6, 4, 0.008}, Expect{"walker2d", 17, 6, 9, 9, 4, 0.008},
        Expect{"halfcheetah", 17, 6, 9, 9, 5, 0.05}}) {
    Environment e(x.name);
    EXPECT_EQ(e.spec().obs_dim, x.obs) << x.name;
    EXPECT_EQ(e.spec().act_dim, x.act) << x.name;
    EXPECT_EQ(e.model()->nq, x.nq) << x.name;
    EXPECT_EQ(e.model()->nv, x.nv) << x.name;
    EXPECT_EQ(e.model()->nu, x.act) << x.name;
    EXPECT_EQ(e.spec().frame_skip, x.frame_skip) << x.name;
    EXPECT_DOUBLE_EQ(e.dt(), x.dt) << x.name;
    for (int i = 0; i < e.model()->nu; ++i) {
      EXPECT_EQ(e.model()->actuator_ctrlrange[2 * i], -1.0);
      EXPECT_EQ(e.model()->actuator_ctrlrange[2 * i + 1], 1.0);
    }
  }
  EXPECT_EQ(Environment("hopper").model()->opt.integrator, mjINT_RK4);
  EXPECT_EQ(Environment("halfcheetah").model()->opt.integrator, mjINT_EULER);
}

// The coordinates a viewer can plot: every hinge and slide joint, where it sits in qpos.
TEST(Environment, JointCoordinatesNameEachHingeAndSlideAtItsQposIndex) {
  const auto hopper = joint_coordinates(Environment("hopper").model());
  ASSERT_EQ(hopper.size(), 6u);
  const char* names[] = {"rootx", "rootz", "rooty", "thigh_joint", "leg_joint", "foot_joint"};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(hopper[static_cast<std::size_t>(i)].name, names[i]);
    EXPECT_EQ(hopper[static_cast<std::size_t>(i)].qpos_index, i);
  }
  const auto walker = joint_coordinates(Environment("walker2d").model());
  ASSERT_EQ(walker.size(), 9u);
  EXPECT_EQ(walker.back().qpos_index, 8);
}

// Each action dimension is named by the joint its actuator drives, in actuator order (the words
// Gym's documentation uses), so per-joint figures say "thigh", not "j1".
TEST(Environment, ActionsAreNamedByTheJointsTheirActuatorsDrive) {
  EXPECT_EQ(action_names("hopper"), (std::vector<std::string>{"thigh", "leg", "foot"}));
  EXPECT_EQ(action_names("hopper-po"), action_names("hopper"));
  EXPECT_EQ(
      action_names("walker2d"),
      (std::vector<std::string>{"thigh", "leg", "foot", "thigh_left", "leg_left", "foot_left"}));
  EXPECT_EQ(action_names("halfcheetah"),
            (std::vector<std::string>{"bthigh", "bshin", "bfoot", "fthigh", "fshin", "ffoot"}));
  EXPECT_THROW(action_names("pendulum"), EnvError);
  // A model of another environment, or of another action size, is numbered.
  EXPECT_EQ(action_names_or_numbers("pendulum", 2),
            (std::vector<std::string>{"joint 1", "joint 2"}));
  EXPECT_EQ(action_names_or_numbers("hopper", 4).back(), "joint 4");
  EXPECT_EQ(action_names_or_numbers("hopper", 3).front(), "thigh");
}

TEST(Environment, PartiallyObservedTasksSeeThePositionsOfTheSamePhysics) {
  for (const std::string name : {"hopper", "walker2d", "halfcheetah"}) {
    const auto& po = task(name + "-po");
    EXPECT_TRUE(po.positions_only);
    EXPECT_EQ(po.base, name);
    EXPECT_EQ(po.obs_dim, po.nq - 1);
    EXPECT_EQ(task(name).base, name);
    EXPECT_FALSE(task(name).positions_only);
    // The same seed and actions give the same rewards and states; the observation is the
    // positions the full one starts with.
    Environment full(name), part(name + "-po");
    std::vector<float> a(static_cast<size_t>(full.spec().obs_dim)),
        b(static_cast<size_t>(po.obs_dim));
    full.reset(5, a);
    part.reset(5, b);
    std::vector<float> action(static_cast<size_t>(po.act_dim), 0.3f);
    for (int t = 0; t < 20; ++t) {
      for (int k = 0; k < po.obs_dim; ++k)
        ASSERT_EQ(a[static_cast<size_t>(k)], b[static_cast<size_t>(k)]) << name << " " << t;
      const auto ra = full.step(action, a), rb = part.step(action, b);
      ASSERT_EQ(ra.reward, rb.reward);
      if (ra.terminated) break;
    }
  }
  // Dataset names resolve to the longest task they start with.
  EXPECT_EQ(task("hopper-po-medium-expert-dstudio-sac").name, "hopper-po");
  EXPECT_EQ(task("hopper-medium-v2").name, "hopper");
  EXPECT_EQ(task("Walker2d-PO").name, "walker2d-po");
}

TEST(Environment, HopperStartsAtItsReferenceHeightWithBoundedNoise) {
  Environment e("hopper");
  std::vector<float> obs(11);
  e.reset(7, obs);
  const mjModel* m = e.model();
  EXPECT_DOUBLE_EQ(m->qpos0[1], 1.25);
  for (int i = 0; i < m->nq; ++i) EXPECT_LE(std::abs(e.qpos()[i] - m->qpos0[i]), 0.005);
  for (int i = 0; i < m->nv; ++i) EXPECT_LE(std::abs(e.qvel()[i]), 0.005);
  EXPECT_FLOAT_EQ(obs[0],
                  static_cast<float>(e.qpos()[1]));  // z comes first: qpos[0] (x) is excluded
}

// Steps one environment and, beside it, a bare mjData driven through MuJoCo's own API; the
// observation and reward must follow from that state by the task's formulas.
void check_step_against_mujoco(const char* name, double alive_bonus, double ctrl_cost, bool clip) {
  Environment e(name);
  const auto& spec = e.spec();
  std::vector<float> obs(spec.obs_dim), act(spec.act_dim);
  e.reset(3, obs);
  mjData* raw = mj_makeData(e.model());
  for (int step = 0; step < 40; ++step) {
    // Mirror the environment's state into the bare copy, then step both.
    std::copy(e.qpos().begin(), e.qpos().end(), raw->qpos);
    std::copy(e.qvel().begin(), e.qvel().end(), raw->qvel);
    std::copy(e.data()->qacc_warmstart, e.data()->qacc_warmstart + e.model()->nv,
              raw->qacc_warmstart);
    raw->time = e.data()->time;
    double control = 0.0;
    for (int i = 0; i < spec.act_dim; ++i) {
      act[i] = static_cast<float>(0.9 * std::sin(0.37 * step + i));
      raw->ctrl[i] = act[i];
      control += static_cast<double>(act[i]) * act[i];
    }
    const double x0 = raw->qpos[0];
    for (int k = 0; k < spec.frame_skip; ++k) mj_step(e.model(), raw);
    const double expected_reward =
        (raw->qpos[0] - x0) / (e.model()->opt.timestep * spec.frame_skip) + alive_bonus -
        ctrl_cost * control;
    const auto r = e.step(act, obs);
    ASSERT_NEAR(r.reward, expected_reward, 1e-9) << name << " step " << step;
    for (int i = 1; i < e.model()->nq; ++i)
      ASSERT_EQ(obs[i - 1], static_cast<float>(raw->qpos[i])) << name;
    for (int i = 0; i < e.model()->nv; ++i) {
      const double v = clip ? std::clamp(raw->qvel[i], -10.0, 10.0) : raw->qvel[i];
      ASSERT_EQ(obs[e.model()->nq - 1 + i], static_cast<float>(v)) << name;
    }
    if (r.terminated) break;
  }
  mj_deleteData(raw);
}

TEST(Environment, RewardAndObservationFollowFromMujocoState) {
  check_step_against_mujoco("hopper", 1.0, 1e-3, true);
  check_step_against_mujoco("walker2d", 1.0, 1e-3, true);
  check_step_against_mujoco("halfcheetah", 0.0, 0.1, false);
}

// Sets the state with qpos[index] = value (everything else at rest) and reports health.
bool healthy_with(Environment& e, int index, double value, bool velocity = false) {
  const auto* m = e.model();
  std::vector<double> qpos(m->qpos0, m->qpos0 + m->nq), qvel(static_cast<std::size_t>(m->nv), 0.0);
  (velocity ? qvel : qpos)[static_cast<std::size_t>(index)] = value;
  e.set_state(qpos, qvel);
  return e.healthy();
}

TEST(Environment, HopperTerminationBoundariesOnBothSides) {
  Environment e("hopper");
  EXPECT_TRUE(healthy_with(e, 1, 0.7001));
  EXPECT_FALSE(healthy_with(e, 1, 0.7));  // strictly greater than 0.7
  EXPECT_FALSE(healthy_with(e, 1, 0.6999));
  EXPECT_TRUE(healthy_with(e, 2, 0.1999));
  EXPECT_FALSE(healthy_with(e, 2, 0.2));
  EXPECT_TRUE(healthy_with(e, 2, -0.1999));
  EXPECT_FALSE(healthy_with(e, 2, -0.2));
  EXPECT_TRUE(healthy_with(e, 3, 99.0));  // joint angles inside (-100, 100)
  EXPECT_FALSE(healthy_with(e, 3, 100.0));
  EXPECT_TRUE(healthy_with(e, 0, -99.0, true));
  EXPECT_FALSE(healthy_with(e, 0, -100.0, true));  // velocities too
  EXPECT_TRUE(healthy_with(e, 0, 1e6));            // x is not part of the health check
}

TEST(Environment, Walker2dTerminationBoundariesOnBothSides) {
  Environment e("walker2d");
  EXPECT_TRUE(healthy_with(e, 1, 0.8001));
  EXPECT_FALSE(healthy_with(e, 1, 0.8));
  EXPECT_TRUE(healthy_with(e, 1, 1.9999));
  EXPECT_FALSE(healthy_with(e, 1, 2.0));
  EXPECT_TRUE(healthy_with(e, 2, 0.999));
  EXPECT_FALSE(healthy_with(e, 2, 1.0));
  EXPECT_TRUE(healthy_with(e, 2, -0.999));
  EXPECT_FALSE(healthy_with(e, 2, -1.0));
  EXPECT_TRUE(healthy_with(e, 0, 500.0, true));  // no bound on velocities for walker2d
}

TEST(Environment, AStepFromAnUnhealthyStateTerminatesWithTheAliveBonus) {
  Environment e("hopper");
  std::vector<float> obs(11), act(3, 0.0f);
  e.reset(0, obs);
  const auto* m = e.model();
  std::vector<double> qpos(m->qpos0, m->qpos0 + m->nq), qvel(static_cast<std::size_t>(m->nv), 0.0);
  qpos[1] = 0.5;  // fallen
  e.set_state(qpos, qvel);
  const auto r = e.step(act, obs);
  EXPECT_TRUE(r.terminated);
  EXPECT_FALSE(r.truncated);
  // Gym's Hopper-v3 pays the healthy reward on the terminal step too.
  EXPECT_NEAR(r.reward, (e.qpos()[0] - qpos[0]) / e.dt() + 1.0, 1e-9);
}

TEST(Environment, HalfCheetahNeverTerminatesAndTimesOutAt1000Steps) {
  Environment e("halfcheetah");
  std::vector<float> obs(17), act(6);
  e.reset(1, obs);
  StepResult r;
  int steps = 0;
  do {
    for (int i = 0; i < 6; ++i) act[i] = static_cast<float>(std::sin(steps * 0.5 + i));
    r = e.step(act, obs);
    ++steps;
    ASSERT_FALSE(r.terminated);
  } while (!r.truncated);
  EXPECT_EQ(steps, 1000);
}

TEST(Environment, SameSeedSameTrajectoryDifferentSeedDifferent) {
  auto trajectory = [](std::uint64_t seed) {
    Environment e("walker2d");
    std::vector<float> obs(17), act(6), all;
    e.reset(seed, obs);
    for (int t = 0; t < 50; ++t) {
      for (int i = 0; i < 6; ++i) act[i] = static_cast<float>(std::cos(t * 0.2 + i));
      e.step(act, obs);
      all.insert(all.end(), obs.begin(), obs.end());
    }
    return all;
  };
  EXPECT_EQ(trajectory(5), trajectory(5));
  EXPECT_NE(trajectory(5), trajectory(6));
}

TEST(Environment, BatchStepsCopiesInLockstepLikeSingleEnvironments) {
  BatchEnvironment batch("hopper", 3);
  std::vector<float> obs(3 * 11), act(3 * 3, 0.3f);
  std::vector<double> rewards(3);
  const std::vector<std::uint64_t> seeds = {4, 5, 6};
  batch.reset(seeds, obs);
  Environment single("hopper");
  std::vector<float> single_obs(11);
  single.reset(5, single_obs);
  std::vector<float> a(3, 0.3f);
  for (int t = 0; t < 30; ++t) {
    batch.step(act, obs, rewards);
    const auto r = single.step(a, single_obs);
    ASSERT_EQ(rewards[1], r.reward);
    ASSERT_TRUE(std::equal(single_obs.begin(), single_obs.end(), obs.begin() + 11));
  }
}

TEST(Environment, SetStateReproducesTheObservation) {
  Environment a("hopper"), b("hopper");
  std::vector<float> obs_a(11), obs_b(11), act(3, 0.5f);
  a.reset(9, obs_a);
  for (int t = 0; t < 20; ++t) a.step(act, obs_a);
  b.set_state(state_of(a, false), state_of(a, true));
  b.observe(obs_b);
  EXPECT_EQ(obs_a, obs_b);
}

TEST(Environment, BadInputGetsClearErrors) {
  try {
    Environment("ant-maze-big");
    FAIL();
  } catch (const EnvError& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown environment 'ant-maze-big'; known environments: "
                                    "hopper, walker2d, halfcheetah"));
  }
  EXPECT_EQ(task("Hopper-v3").name, "hopper");
  EXPECT_EQ(task("halfcheetah-medium-v2").name, "halfcheetah");

  Environment e("hopper");
  std::vector<double> four(4, 0.0), six(6, 0.0);
  EXPECT_THROW(e.set_state(four, six), EnvError);
  std::vector<float> obs(11), wrong_action(2, 0.0f), nan_action(3, std::nanf(""));
  e.reset(0, obs);
  EXPECT_THROW(e.step(wrong_action, obs), EnvError);
  EXPECT_THROW(e.step(nan_action, obs), EnvError);

  test::TempDir dir;
  std::ofstream(dir / "broken.xml")
      << "<mujoco><worldbody><body><geom type='capsule'/></body></worldbody></mujoco";
  try {
    load_model(task("hopper"), dir / "broken.xml");
    FAIL();
  } catch (const EnvError& err) {
    EXPECT_THAT(err.what(), HasSubstr("broken.xml: the MJCF model does not compile"));
  }
  std::ofstream(dir / "pendulum.xml") << "<mujoco><worldbody><body><joint type='hinge'/><geom "
                                         "size='.1'/></body></worldbody></mujoco>";
  try {
    load_model(task("hopper"), dir / "pendulum.xml");
    FAIL();
  } catch (const EnvError& err) {
    EXPECT_THAT(err.what(), HasSubstr("the model has nq 1, nv 1, nu 0 but hopper needs 6, 6, 3"));
  }
}

TEST(Environment, DatasetDimensionsMustMatch) {
  data::Dataset ds;
  ds.path = "walker.hdf5";
  ds.data.obs_dim = 17;
  ds.data.act_dim = 6;
  ds.data.qpos_dim = 9;
  EXPECT_NO_THROW(check_dataset_matches(ds, task("walker2d")));
  try {
    check_dataset_matches(ds, task("hopper"));
    FAIL();
  } catch (const EnvError& e) {
    EXPECT_THAT(
        e.what(),
        HasSubstr(
            "walker.hdf5: does not match the hopper environment: the dataset has observation dim "
            "17 but hopper has 11; action dim 6 but hopper has 3; qpos dim 9 but hopper has 6"));
  }
}

TEST(Environment, NormalisedScoreUsesD4rlReferences) {
  const auto& hopper = task("hopper");
  EXPECT_DOUBLE_EQ(normalized_score(hopper, -20.272305), 0.0);
  EXPECT_DOUBLE_EQ(normalized_score(hopper, 3234.3), 100.0);
  EXPECT_NEAR(normalized_score(task("halfcheetah"), 6000.0),
              100.0 * (6000 + 280.178953) / (12135.0 + 280.178953), 1e-12);
}

// The viewers' success line for Adroit: the goal-achieved steps the task counts, against D4RL's
// rule (more than 20 for pen, more than 25 for the others). The count the line reads is the one a
// step's success is decided by.
TEST(Progress, AdroitCountsItsGoalAchievedStepsAgainstD4rlsRule) {
  for (const auto& [name, needed] : std::vector<std::pair<std::string, int>>{
           {"pen", 20}, {"door", 25}, {"hammer", 25}, {"relocate", 25}}) {
    const auto& t = task(name);
    ASSERT_TRUE(t.progress) << name;
    std::vector<double> state(static_cast<std::size_t>(t.task_state_size), 0.0);
    state.back() = needed;
    auto p = t.progress(state);
    EXPECT_FALSE(p.success) << name;
    EXPECT_EQ(p.text, "goal achieved on " + std::to_string(needed) + " steps; more than " +
                          std::to_string(needed) + " is a success");
    state.back() = needed + 1;
    p = t.progress(state);
    EXPECT_TRUE(p.success) << name;
    EXPECT_EQ(p.text, "goal achieved on " + std::to_string(needed + 1) +
                          " steps: a success (more than " + std::to_string(needed) + ")");
    state.back() = 1;
    EXPECT_EQ(t.progress(state).text.rfind("goal achieved on 1 step;", 0), 0u) << name;
    // A step's success follows the same count: one more achieved step past the rule succeeds.
    Environment e(name);
    std::vector<float> obs(static_cast<std::size_t>(t.obs_dim));
    e.reset(0, obs);
    auto saved = e.save_state();
    saved.task_state.back() = needed + 1;
    e.restore_state(saved);
    const auto r = e.step(std::vector<float>(static_cast<std::size_t>(t.act_dim), 0.0f), obs);
    EXPECT_TRUE(r.success) << name;
    EXPECT_TRUE(t.progress(e.save_state().task_state).success) << name;
  }
  EXPECT_FALSE(task("hopper").progress);
  EXPECT_FALSE(task("kitchen-complete-v0").progress);
}

}  // namespace
}  // namespace dstudio::env

namespace dstudio::env {
namespace {

// Restoring a saved state and stepping with the same actions gives the same trajectory bit for
// bit; the step counter comes back too, so the time limit still falls where it should.
TEST(Environment, RestoredStateReplaysExactly) {
  // Hopper's foot is on the ground by step 40, so the contact solver's warm start matters.
  Environment e("hopper");
  std::vector<float> obs(11), action(3);
  e.reset(3, obs);
  auto act = [&](int t) {
    for (int i = 0; i < 3; ++i)
      action[static_cast<std::size_t>(i)] = static_cast<float>(0.3 * std::sin(0.3 * t + i));
    return e.step(action, obs);
  };
  for (int t = 0; t < 40; ++t) act(t);
  const PhysicsState saved = e.save_state();
  EXPECT_EQ(saved.elapsed_steps, 40);
  std::vector<std::vector<float>> first;
  for (int t = 40; t < 60; ++t) {
    act(t);
    first.push_back(obs);
  }
  e.restore_state(saved);
  EXPECT_EQ(e.elapsed_steps(), 40);
  for (int t = 40; t < 60; ++t) {
    act(t);
    EXPECT_EQ(obs, first[static_cast<std::size_t>(t - 40)]) << "step " << t;
  }
  PhysicsState wrong = saved;
  wrong.qvel.pop_back();
  EXPECT_THROW(e.restore_state(wrong), EnvError);
}

// The viewers say what ended an episode in the task's own terms; a horizon is a time limit.
TEST(EpisodeEnd, EachFamilySaysWhatEndsItsEpisodes) {
  EXPECT_EQ(episode_end_reason(task("hopper"), true), "the body left its healthy range");
  EXPECT_EQ(episode_end_reason(task("walker2d-po"), true), "the body left its healthy range");
  EXPECT_EQ(episode_end_reason(task("antmaze-umaze-v2"), true), "goal reached");
  EXPECT_EQ(episode_end_reason(task("pen"), true), "the pen dropped");
  EXPECT_EQ(episode_end_reason(task("kitchen-mixed-v0"), true), "every element done");
  for (const auto& name : task_names())
    EXPECT_EQ(episode_end_reason(task(name), false), "time limit") << name;
  // Pen's episode does end when the pen falls below the table's height: dropped from the start.
  Environment pen("pen");
  std::vector<float> obs(45);
  pen.reset(0, obs);
  std::vector<double> qpos(pen.qpos().begin(), pen.qpos().end());
  // OBJTx, after the hand's 24 joints: the pen's body is turned about y (euler 0 1.57 0), so its
  // x axis points down; a metre down is far below the table.
  qpos[24] += 1.0;
  pen.set_state(qpos, std::vector<double>(qpos.size(), 0.0));
  const auto r = pen.step(std::vector<float>(24, 0.0f), obs);
  EXPECT_TRUE(r.terminated) << "a dropped pen ends the episode: its height " << obs[26];
}

}  // namespace
}  // namespace dstudio::env
