// Franka Kitchen against D4RL's d4rl/kitchen (kitchen_envs.py, kitchen_multitask_v0.py,
// franka_robot.py, franka_config.xml and the registration): the model and its timing, the reset,
// the observation's noise and goal block, the velocity controller that integrates from the last
// noisy observation, the reward that counts and removes elements, the termination, and an
// episode's numbers against tests/reference/kitchen_reference.c, which computes them from D4RL's
// equations on MuJoCo's C API with the model read from disk, none of the studio's code.

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "dstudio/env/environment.h"

namespace dstudio::env {
namespace {

namespace fs = std::filesystem;

const char* const kTasks[] = {"kitchen-complete-v0", "kitchen-partial-v0", "kitchen-mixed-v0"};

// KitchenV0.init_qpos.
const std::vector<double> kInit = {
    1.48388023e-01,  -1.76848573e+00, 1.84390296e+00,  -2.47685760e+00, 2.60252026e-01,
    7.12533105e-01,  1.59515394e+00,  4.79267505e-02,  3.71350919e-02,  -2.66279850e-04,
    -5.18043486e-05, 3.12877220e-05,  -4.51199853e-05, -3.90842156e-06, -4.22629655e-05,
    6.28065475e-05,  4.04984708e-05,  4.62730939e-04,  -2.26906415e-04, -4.65501369e-04,
    -6.44129196e-03, -1.77048263e-03, 1.08009684e-03,  -2.69397440e-01, 3.50383255e-01,
    1.61944683e+00,  1.00618764e+00,  4.06395120e-03,  -6.62095997e-03, -2.68278933e-04};

// The noise's half-width per qpos: robot_noise_ratio 0.1 x franka_config.xml's pos_noise_amp.
double half_width(int i) {
  if (i < 9) return 0.01;
  if (i == 9 || i == 10) return 0.0005;
  if (i <= 16) return 0.00005;
  if (i <= 19) return 0.0005;
  if (i <= 22) return 0.01;
  if (i <= 25) return 0.0005;
  if (i <= 28) return 0.01;
  return 0.0005;
}

std::vector<double> qpos_of(const Environment& env) {
  return {env.qpos().begin(), env.qpos().end()};
}

std::vector<double> zeros(int n) {
  return std::vector<double>(static_cast<std::size_t>(n), 0.0);
}

}  // namespace

TEST(Kitchen, TheThreeTasksAreD4rlsWithTheirSizesTimingHorizonAndReferences) {
  for (const char* name : kTasks) {
    const auto& spec = task(name);
    EXPECT_EQ(spec.name, name);
    EXPECT_EQ(spec.family, "kitchen");
    EXPECT_EQ(spec.obs_dim, 60) << name;
    EXPECT_EQ(spec.act_dim, 9) << name;
    EXPECT_EQ(spec.frame_skip, 40) << name;
    EXPECT_EQ(spec.max_episode_steps, 280) << name;
    EXPECT_EQ(spec.ref_min_score, 0.0) << name;
    EXPECT_EQ(spec.ref_max_score, 4.0) << name;
    EXPECT_DOUBLE_EQ(normalized_score(spec, 3.0), 75.0) << name;  // return / 4 x 100
    EXPECT_EQ(spec.default_targets, (std::vector<double>{4.0, 2.0})) << name;
    EXPECT_TRUE(spec.reports_success) << name;
    EXPECT_EQ(spec.first_velocity, 60) << name << " observes no velocity";
  }
  EXPECT_EQ(task("kitchen-mixed-v0").name, "kitchen-mixed-v0");
  EXPECT_EQ(task("Kitchen-Partial-v0").name, "kitchen-partial-v0");
  const auto model = load_model(task("kitchen-complete-v0"));
  EXPECT_EQ(model->nq, 30);
  EXPECT_EQ(model->nv, 29);
  EXPECT_EQ(model->nu, 9);
  EXPECT_EQ(model->opt.timestep, 0.002);
  Environment env("kitchen-complete-v0");
  EXPECT_DOUBLE_EQ(env.dt(), 0.08);
}

// The files shipped are the model and what it reads, in D4RL's layout, and the licences; the
// model staged into MuJoCo's flat file system is the one MuJoCo reads from those folders (the
// arm's visual and collision meshes share their file names).
TEST(Kitchen, ShipsWhatTheModelReadsAndLoadsAsFromItsFolders) {
  const auto& spec = task("kitchen-complete-v0");
  const fs::path resources = DSTUDIO_RESOURCES_DIR;
  std::set<std::string> listed = {spec.model_file};
  for (const auto& asset : spec.model_assets) listed.insert(asset);
  std::set<std::string> shipped, licences;
  for (const auto& entry : fs::recursive_directory_iterator(resources / "environments/kitchen")) {
    if (!entry.is_regular_file()) continue;
    const auto relative = fs::relative(entry.path(), resources).generic_string();
    (entry.path().filename() == "LICENSE" ? licences : shipped).insert(relative);
  }
  EXPECT_EQ(shipped, listed);
  EXPECT_EQ(licences, (std::set<std::string>{"environments/kitchen/LICENSE",
                                             "environments/kitchen/adept_models/LICENSE",
                                             "environments/kitchen/third_party/franka/LICENSE"}));

  const auto staged = load_model(spec);
  char error[1000] = "";
  mjModel* read = mj_loadXML((resources / spec.model_file).c_str(), nullptr, error, sizeof error);
  ASSERT_NE(read, nullptr) << error;
  EXPECT_EQ(staged->nmesh, read->nmesh);
  EXPECT_EQ(staged->nmeshvert, read->nmeshvert);
  for (int i = 0; i < std::min(staged->nmesh, read->nmesh); ++i)
    EXPECT_EQ(staged->mesh_vertnum[i], read->mesh_vertnum[i]) << mj_id2name(read, mjOBJ_MESH, i);
  for (int b = 0; b < read->nbody && b < staged->nbody; ++b)
    EXPECT_EQ(staged->body_mass[b], read->body_mass[b]) << b;
  EXPECT_EQ(staged->ntex, read->ntex);
  EXPECT_EQ(staged->ntexdata, read->ntexdata);
  // The link's fine mesh is seen and its coarse one collided with.
  const int viz = mj_name2id(staged.get(), mjOBJ_MESH, "link0_viz");
  const int col = mj_name2id(staged.get(), mjOBJ_MESH, "link0_col");
  EXPECT_GT(staged->mesh_vertnum[viz], 50 * staged->mesh_vertnum[col]);
  mj_deleteModel(read);
}

// The observation names each dimension: the robot's and the objects' joints in qpos order (the
// model's own names), then the same under goal_.
TEST(Kitchen, NamesEachObservationDimension) {
  const auto& spec = task("kitchen-partial-v0");
  ASSERT_EQ(spec.observation_names.size(), 60u);
  const auto model = load_model(spec);
  for (const auto& joint : joint_coordinates(model.get())) {
    EXPECT_EQ(spec.observation_names[static_cast<std::size_t>(joint.qpos_index)], joint.name);
    EXPECT_EQ(spec.observation_names[30 + static_cast<std::size_t>(joint.qpos_index)],
              "goal_" + joint.name);
  }
  const std::vector<std::string> kettle = {"kettle_x",  "kettle_y",  "kettle_z", "kettle_qw",
                                           "kettle_qx", "kettle_qy", "kettle_qz"};
  EXPECT_TRUE(std::equal(kettle.begin(), kettle.end(), spec.observation_names.begin() + 23));
  EXPECT_EQ(spec.observation_names[22], "microjoint");
  EXPECT_EQ(spec.observation_names[59], "goal_kettle_qz");
}

// reset_model: init_qpos, at rest, whatever the seed; the observation is that state with noise.
TEST(Kitchen, ResetsToInitQposAtRest) {
  Environment env("kitchen-complete-v0");
  std::vector<float> obs(60);
  // MuJoCo's forward pass makes the kettle's quaternion a unit one, as D4RL's reset does before
  // it observes.
  auto expected = kInit;
  const double norm = std::sqrt(kInit[26] * kInit[26] + kInit[27] * kInit[27] +
                                kInit[28] * kInit[28] + kInit[29] * kInit[29]);
  EXPECT_NEAR(norm, 1.0062, 1e-4);
  for (int i = 26; i < 30; ++i) expected[i] /= norm;
  for (std::uint64_t seed : {0u, 1u, 99u}) {
    env.reset(seed, obs);
    const auto qpos = qpos_of(env);
    for (int i = 0; i < 30; ++i) EXPECT_NEAR(qpos[i], expected[i], 1e-15) << i;
    for (double v : env.qvel()) EXPECT_EQ(v, 0.0);
    EXPECT_EQ(env.elapsed_steps(), 0);
    for (int i = 0; i < 30; ++i)
      EXPECT_LE(std::abs(obs[i] - expected[i]), half_width(i) + 1e-6) << i;
  }
}

// KitchenBase._get_task_goal: the goal block is zero but the task's four elements' goals.
TEST(Kitchen, TheGoalBlockHoldsTheTasksFourElements) {
  std::vector<double> complete(30, 0.0);
  complete[22] = -0.75;  // microwave
  const std::vector<double> kettle = {-0.23, 0.75, 1.62, 0.99, 0.0, 0.0, -0.06};
  std::copy(kettle.begin(), kettle.end(), complete.begin() + 23);  // kettle
  complete[17] = -0.69, complete[18] = -0.05;                      // light switch
  std::vector<double> mixed = complete;
  complete[19] = 0.37;                   // slide cabinet
  mixed[11] = -0.88, mixed[12] = -0.01;  // bottom burner
  for (const auto& [name, goal] :
       {std::pair{"kitchen-complete-v0", complete}, std::pair{"kitchen-partial-v0", complete},
        std::pair{"kitchen-mixed-v0", mixed}}) {
    Environment env(name);
    std::vector<float> obs(60);
    env.reset(3, obs);
    for (int i = 0; i < 30; ++i) EXPECT_EQ(obs[30 + i], static_cast<float>(goal[i])) << name << i;
    env.step(std::vector<float>(9, 0.5f), obs);
    for (int i = 0; i < 30; ++i) EXPECT_EQ(obs[30 + i], static_cast<float>(goal[i])) << name << i;
  }
}

// Robot.get_obs adds U(-1, 1) x 0.1 x pos_noise_amp to each qpos: over many observations of the
// same state each dimension's noise stays within its half-width and comes close to it.
TEST(Kitchen, ObservationNoiseHasD4rlsHalfWidths) {
  Environment env("kitchen-mixed-v0");
  std::vector<float> obs(60);
  env.reset(0, obs);
  const auto state = qpos_of(env);
  std::vector<double> widest(30, 0.0);
  double mean_robot = 0.0;
  const int draws = 2000;
  for (int k = 0; k < draws; ++k) {
    env.reset(static_cast<std::uint64_t>(k), obs);
    for (int i = 0; i < 30; ++i) {
      // The noisy qpos itself, before the observation rounds it to float.
      const double noise = env.task_state()[static_cast<std::size_t>(i)] - state[i];
      widest[i] = std::max(widest[i], std::abs(noise));
      EXPECT_EQ(obs[i], static_cast<float>(env.task_state()[static_cast<std::size_t>(i)]));
    }
    mean_robot += (env.task_state()[0] - state[0]) / draws;
  }
  for (int i = 0; i < 30; ++i) {
    EXPECT_LE(widest[i], half_width(i) * (1 + 1e-9)) << i;
    EXPECT_GE(widest[i], half_width(i) * 0.99) << i;
  }
  EXPECT_LT(std::abs(mean_robot), 0.001) << "centred";
}

// The same seed, the same episode; another seed, other noise.
TEST(Kitchen, ASeedGivesTheSameEpisode) {
  Environment a("kitchen-complete-v0"), b("kitchen-complete-v0");
  std::vector<float> oa(60), ob(60);
  a.reset(11, oa);
  b.reset(11, ob);
  EXPECT_EQ(oa, ob);
  for (int t = 0; t < 20; ++t) {
    std::vector<float> act(9);
    for (int i = 0; i < 9; ++i) act[i] = static_cast<float>(std::sin(t + i));
    a.step(act, oa);
    b.step(act, ob);
    ASSERT_EQ(oa, ob) << t;
  }
  b.reset(12, ob);
  a.reset(11, oa);
  EXPECT_NE(oa, ob);
}

// Robot_VelAct: the servo target is the last observation's noisy robot qpos plus 2 clip(a, -1, 1)
// x 0.08 s, not the true qpos plus that: the environment is not Markov in its state.
TEST(Kitchen, TheControllerIntegratesTheActionFromTheLastNoisyObservation) {
  Environment env("kitchen-partial-v0");
  std::vector<float> obs(60);
  env.reset(5, obs);
  for (int t = 0; t < 12; ++t) {
    const std::vector<double> seen(env.task_state().begin(), env.task_state().begin() + 9);
    const std::vector<float> shown(obs.begin(), obs.begin() + 9);
    const auto true_qpos = qpos_of(env);
    std::vector<float> act(9);
    for (int i = 0; i < 9; ++i) act[i] = static_cast<float>(1.3 * std::sin(0.7 * t + i));
    env.step(act, obs);
    const double lo[9] = {-2.9, -1.8, -2.9, -3.1, -2.9, 0.0, -2.9, 0.0, 0.0};
    const double hi[9] = {2.9, 1.8, 2.9, 0.0, 2.9, 3.8, 2.9, 0.04, 0.04};
    double off_true = 0.0;
    for (int i = 0; i < 9; ++i) {
      const double a = std::min(1.0, std::max(-1.0, static_cast<double>(act[i])));
      const double target = std::min(hi[i], std::max(lo[i], seen[i] + 2.0 * a * 0.08));
      EXPECT_DOUBLE_EQ(env.data()->ctrl[i], target) << t << " " << i;
      // What the policy was shown is that reference, to float precision.
      EXPECT_NEAR(env.data()->ctrl[i], std::min(hi[i], std::max(lo[i], shown[i] + 2.0 * a * 0.08)),
                  1e-6);
      const double from_true = std::min(hi[i], std::max(lo[i], true_qpos[i] + 2.0 * a * 0.08));
      off_true = std::max(off_true, std::abs(env.data()->ctrl[i] - from_true));
    }
    EXPECT_GT(off_true, 1e-4) << "the noise moves the target (step " << t << ")";
  }
}

// ctrl_position_limits clips the target to franka_config.xml's pos_bound, which for some joints
// is narrower than the actuator's ctrlrange (joint 6's lower bound 0 against -3.75; joint 2's
// 1.8 against 1.83).
TEST(Kitchen, TheTargetIsClippedToThePositionBounds) {
  Environment env("kitchen-complete-v0");
  std::vector<float> obs(60);
  env.reset(2, obs);
  std::vector<double> s(env.task_state().begin(), env.task_state().end());
  s[1] = 1.75, s[3] = -0.1, s[5] = 0.05, s[7] = 0.039;
  env.set_task_state(s);
  env.step(std::vector<float>{0.0f, 1.0f, 0.0f, 1.0f, 0.0f, -1.0f, 0.0f, 1.0f, -1.0f}, obs);
  const mjData* d = env.data();
  EXPECT_EQ(d->ctrl[1], 1.8);
  EXPECT_EQ(d->ctrl[3], 0.0);
  EXPECT_EQ(d->ctrl[5], 0.0);
  EXPECT_EQ(d->ctrl[7], 0.04);
  EXPECT_EQ(d->ctrl[8], 0.0);
  EXPECT_DOUBLE_EQ(d->ctrl[0], s[0]) << "no action, no motion of the target";
  // Actions beyond [-1, 1] are clipped before they are scaled.
  env.reset(2, obs);
  const std::vector<double> seen(env.task_state().begin(), env.task_state().begin() + 9);
  env.step(std::vector<float>(9, 7.0f), obs);
  EXPECT_DOUBLE_EQ(env.data()->ctrl[0], seen[0] + 0.16);
}

// KitchenBase._get_reward_n_score: an element is done when its noisy qpos is within 0.3 of its
// goal; the step that finds it done is paid 1 and the element is removed, so it pays once; the
// episode ends, a success, when none is left.
TEST(Kitchen, EachElementPaysOnceAndTheEpisodeEndsWhenAllFourAreDone) {
  Environment env("kitchen-complete-v0");
  std::vector<float> obs(60);
  env.reset(4, obs);
  const std::vector<float> still(9, 0.0f);
  auto r = env.step(still, obs);
  EXPECT_EQ(r.reward, 0.0) << "nothing is done at the start";
  auto qpos = qpos_of(env);
  const auto rest = zeros(29);
  // The microwave 0.33 from its goal is not done, 0.27 from it is.
  qpos[22] = -0.75 + 0.33;
  env.set_state(qpos, rest);
  r = env.step(still, obs);
  EXPECT_EQ(r.reward, 0.0);
  qpos[22] = -0.75 + 0.27;
  env.set_state(qpos, rest);
  r = env.step(still, obs);
  EXPECT_EQ(r.reward, 1.0);
  EXPECT_FALSE(r.terminated);
  EXPECT_FALSE(r.success);
  r = env.step(still, obs);
  EXPECT_EQ(r.reward, 0.0) << "a done element is removed";
  // The kettle, the light switch and the slide cabinet at their goals: the hinge cabinet, not
  // one of this task's, pays nothing.
  qpos = qpos_of(env);
  qpos[20] = 0.0, qpos[21] = 1.45;
  env.set_state(qpos, rest);
  EXPECT_EQ(env.step(still, obs).reward, 0.0);
  qpos = qpos_of(env);
  const std::vector<double> kettle = {-0.23, 0.75, 1.62, 0.99, 0.0, 0.0, -0.06};
  std::copy(kettle.begin(), kettle.end(), qpos.begin() + 23);
  env.set_state(qpos, rest);
  r = env.step(still, obs);
  EXPECT_EQ(r.reward, 1.0);
  qpos = qpos_of(env);
  qpos[17] = -0.69, qpos[18] = -0.05, qpos[19] = 0.37;
  env.set_state(qpos, rest);
  r = env.step(still, obs);
  EXPECT_EQ(r.reward, 2.0) << "two elements done at one step pay 2";
  EXPECT_TRUE(r.terminated);
  EXPECT_FALSE(r.truncated);
  EXPECT_TRUE(r.success);
  EXPECT_EQ(env.elapsed_steps(), 7);
}

// The viewers' list of the task's four elements follows the reward: an element ticks off at the
// step that pays it (its noisy observation within 0.3 of the goal) and stays done after it moves
// away; a replayed episode, without a task state, ticks it off from its observations, and keeps
// it done through accumulate_subtasks.
TEST(Kitchen, TheFourElementsTickOffAsTheRewardPaysThem) {
  Environment env("kitchen-complete-v0");
  const auto& task = env.spec();
  ASSERT_TRUE(static_cast<bool>(task.subtasks));
  std::vector<float> obs(60);
  env.reset(4, obs);
  auto list = task.subtasks(obs, env.task_state());
  ASSERT_EQ(list.size(), 4u);
  const char* names[] = {"microwave", "kettle", "light switch", "slide cabinet"};
  for (std::size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(list[k].name, names[k]);
    EXPECT_FALSE(list[k].done) << names[k];
  }
  // The microwave's distance is |qpos[22] + 0.75| as observed.
  EXPECT_NEAR(list[0].distance, std::fabs(obs[22] + 0.75), 1e-6);
  const std::vector<float> still(9, 0.0f);
  auto qpos = qpos_of(env);
  qpos[22] = -0.75 + 0.27;
  env.set_state(qpos, zeros(29));
  EXPECT_EQ(env.step(still, obs).reward, 1.0);
  list = task.subtasks(obs, env.task_state());
  EXPECT_TRUE(list[0].done);
  EXPECT_FALSE(list[1].done || list[2].done || list[3].done);
  // Closed again: still done in live play, whose task state remembers it was paid...
  qpos = qpos_of(env);
  qpos[22] = 0.0;
  env.set_state(qpos, zeros(29));
  env.step(still, obs);
  list = task.subtasks(obs, env.task_state());
  EXPECT_TRUE(list[0].done);
  EXPECT_NEAR(list[0].distance, std::fabs(obs[22] + 0.75), 1e-6);
  // ... not done from the observation alone (a replay's frame carries zeros) ...
  const std::vector<double> replayed(static_cast<std::size_t>(task.task_state_size), 0.0);
  auto later = task.subtasks(obs, replayed);
  EXPECT_FALSE(later[0].done);
  // ... and done again once accumulated over the episode's frames.
  std::vector<SubTask> so_far;
  std::vector<float> open_obs(obs);
  open_obs[22] = -0.75f + 0.2f;
  accumulate_subtasks(so_far, task.subtasks(obs, replayed));
  EXPECT_FALSE(so_far[0].done);
  accumulate_subtasks(so_far, task.subtasks(open_obs, replayed));
  EXPECT_TRUE(so_far[0].done);
  accumulate_subtasks(so_far, later);
  EXPECT_TRUE(so_far[0].done) << "an element once done stays done";
  EXPECT_NEAR(so_far[0].distance, later[0].distance, 1e-12) << "the distance is the frame's own";
  EXPECT_FALSE(so_far[1].done);
}

// kitchen-mixed lists the bottom burner in its place; the locomotion tasks list nothing.
TEST(Kitchen, MixedListsTheBottomBurner) {
  const auto& mixed = task("kitchen-mixed-v0");
  std::vector<float> obs(60, 0.0f);
  obs[11] = -0.88f, obs[12] = -0.01f;
  const auto list = mixed.subtasks(obs, {});
  ASSERT_EQ(list.size(), 4u);
  EXPECT_EQ(list[2].name, "bottom burner");
  EXPECT_TRUE(list[2].done);
  EXPECT_FALSE(list[0].done);
  EXPECT_FALSE(static_cast<bool>(task("hopper").subtasks));
  EXPECT_FALSE(static_cast<bool>(task("pen").subtasks));
}

// kitchen-mixed's bottom burner (knob 2 and its flame, qpos 11 and 12) counts there, and not
// in kitchen-complete, which wants the slide cabinet instead.
TEST(Kitchen, MixedWantsTheBottomBurner) {
  for (const auto& [name, paid] :
       {std::pair{"kitchen-mixed-v0", 1.0}, std::pair{"kitchen-complete-v0", 0.0}}) {
    Environment env(name);
    std::vector<float> obs(60);
    env.reset(8, obs);
    auto qpos = qpos_of(env);
    qpos[11] = -0.88, qpos[12] = -0.01;
    env.set_state(qpos, zeros(29));
    EXPECT_EQ(env.step(std::vector<float>(9, 0.0f), obs).reward, paid) << name;
  }
}

// An episode that runs to the horizon without finishing is truncated, not a success.
TEST(Kitchen, RunsTo280StepsWhenTheTaskIsNotDone) {
  Environment env("kitchen-mixed-v0");
  std::vector<float> obs(60);
  env.reset(0, obs);
  StepResult r;
  int steps = 0;
  while (!r.terminated && !r.truncated) {
    r = env.step(std::vector<float>(9, 0.0f), obs);
    ++steps;
  }
  EXPECT_EQ(steps, 280);
  EXPECT_TRUE(r.truncated);
  EXPECT_FALSE(r.success);
}

// The controller's reference, the elements done and the noise stream are the episode's state:
// restored, or carried into another environment (a fork), the same actions give the same steps.
TEST(Kitchen, ASavedStateContinuesAsTheOriginalDid) {
  Environment env("kitchen-complete-v0");
  std::vector<float> obs(60);
  env.reset(21, obs);
  auto act = [](int t) {
    std::vector<float> a(9);
    for (int i = 0; i < 9; ++i) a[i] = static_cast<float>(std::cos(0.3 * t + 2 * i));
    return a;
  };
  for (int t = 0; t < 5; ++t) env.step(act(t), obs);
  auto qpos = qpos_of(env);
  qpos[22] = -0.6;  // the microwave done at the next step
  env.set_state(qpos, zeros(29));
  const auto saved = env.save_state();
  ASSERT_EQ(saved.task_state.size(), static_cast<std::size_t>(env.spec().task_state_size));
  std::vector<std::vector<float>> first;
  std::vector<double> rewards, ctrl;
  for (int t = 5; t < 15; ++t) {
    rewards.push_back(env.step(act(t), obs).reward);
    first.push_back(obs);
    ctrl.insert(ctrl.end(), env.data()->ctrl, env.data()->ctrl + 9);
  }
  EXPECT_EQ(rewards.front(), 1.0);
  Environment fork("kitchen-complete-v0");
  for (Environment* e : {&env, &fork}) {
    e->restore_state(saved);
    for (int t = 5; t < 15; ++t) {
      const auto k = static_cast<std::size_t>(t - 5);
      EXPECT_EQ(e->step(act(t), obs).reward, rewards[k]);
      EXPECT_EQ(obs, first[k]) << t;
      EXPECT_TRUE(std::equal(e->data()->ctrl, e->data()->ctrl + 9, ctrl.begin() + 9 * k)) << t;
    }
  }
}

// An episode's numbers against the C harness (tests/reference/kitchen_reference.c): seed 7, then
// a_t[i] = 0.9 sin(0.37 t + 0.61 i) for 50 steps: the noisy observations (the stream drawn in
// D4RL's order), the servo targets and the physics.
TEST(Kitchen, AnEpisodeMatchesTheReferenceHarness) {
  const std::vector<double> reset_obs = {
      0.158312908358,     -1.75894233257,     1.83659355644,      -2.47095844608,
      0.251619953052,     0.703698080276,     1.59113023221,      0.0524878031163,
      0.0408113931098,    -0.000490238887107, -0.000411344433539, -5.20401774633e-06,
      -4.29785213489e-05, -7.57742958919e-06, -4.6376787622e-05,  1.76846608315e-05,
      6.19112802122e-05,  0.000901506592507,  -0.00060375218275,  -0.000347867961115,
      -0.0138168990269,   -0.00751180489933,  0.00268938730881,   -0.269194703328,
      0.350362541731,     1.61955838482,      0.995604716812,     0.00421569205006,
      -0.0130455754286,   -8.00503413753e-05};
  const std::vector<double> ctrl_1 = {0.158312908358,
                                      -1.67644941837,
                                      1.97182385925,
                                      -2.3317688499,
                                      0.344562591449,
                                      0.716868988965,
                                      1.51977860868,
                                      0,
                                      0};
  const std::vector<double> qpos_1 = {
      0.148905917209,     -1.73331752057,     1.91636572668,      -2.4124562498,
      0.312217768971,     0.711347676193,     1.54847885169,      0.0350428064259,
      0.0299594273874,    -0.000244145256811, -5.28137156824e-06, 2.83278615807e-05,
      -3.33504364371e-06, 1.15628150085e-05,  -3.19660237401e-06, 4.6654999497e-05,
      3.48330871887e-06,  0.000186226342101,  -6.13818155384e-06, -0.000166693600069,
      -0.00644129196,     -0.000456915573776, 0.000310458416861,  -0.269434498941,
      0.350367294202,     1.61936354692,      0.99999989868,      0.000115378693978,
      0.000323582244299,  -0.000290899565911};
  const std::vector<double> obs_1 = {
      0.154740731614,     -1.7380962905,      1.90702756571,      -2.4204177092,
      0.305945474377,     0.706285896474,     1.55009743837,      0.0302645876408,
      0.0247124719501,    -0.000285895978144, -0.000423625844076, 2.48391264104e-06,
      -3.83825439178e-05, -3.36775789191e-05, -3.84429807094e-05, 8.67568693981e-05,
      2.25180901543e-05,  0.000187687375704,  -0.000494626903482, 8.31714841653e-05,
      -0.00293768439118,  -0.00682804832788,  -0.0012300491957,   -0.269657987889,
      0.350294658545,     1.61934567143,      0.996908027496,     0.00739529675009,
      0.00415286456051,   -0.00078226157453};
  const std::vector<double> ctrl_10 = {
      0.505070403487, -1.64971504012, 1.96156185767, -2.6391198395, -0.114179895558,
      0.275727495229, 1.26023825679,  0.04,          0.04};
  const std::vector<double> qpos_10 = {
      0.523350577865,    -1.60403640863,     2.05905002774,      -2.56581413705,
      -0.0820434154085,  0.277925456071,     1.22180465164,      0.0299324105476,
      0.0383552810778,   -4.12037926086e-05, -8.23555313536e-08, 2.45833210389e-05,
      2.95626926746e-07, 2.45583017923e-05,  2.95457880886e-07,  2.46108135892e-05,
      2.95812684739e-07, 2.16348399247e-05,  5.08181277743e-06,  -1.01848641197e-08,
      -0.00644129196,    -2.95755511892e-08, 2.08583772408e-08,  -0.269446980264,
      0.350370169125,    1.61937447037,      0.999999957298,     3.6572753462e-09,
      1.47896591502e-05, -0.000291866194229};
  const std::vector<double> obs_10 = {
      0.517381059406,     -1.60961748129,    2.06634978788,      -2.57197789601,
      -0.0834695057414,   0.282955218306,    1.22328776905,      0.0230184143576,
      0.0453078783535,    0.000231884438858, -0.000386818528757, 1.7796370853e-05,
      -2.59851079091e-06, 5.95642081229e-05, -4.98455003905e-06, 4.17052679495e-05,
      -3.69559000625e-05, 0.000163462902334, -9.52598261154e-05, 0.000174659946432,
      0.00287727890811,   0.00699098892774,  -0.00442102259032,  -0.269798717284,
      0.350057502422,     1.61941880606,     0.995965353845,     -0.00424050916238,
      -0.00496743894841,  -0.000526868374875};
  const std::vector<double> ctrl_50 = {0.133042313088,
                                       -1.77914925727,
                                       2.39202437031,
                                       -2.20937718008,
                                       0.392613971268,
                                       0.925769244251,
                                       1.62672548207,
                                       0,
                                       0};
  const std::vector<double> qpos_50 = {
      0.178214242369,     -1.7638503884,      2.3653368312,      -2.26974088506,
      0.340595326365,     0.889443390357,     1.61431539728,     0.0313128387465,
      0.0151594611955,    2.45778154819e-05,  2.95590117224e-07, 2.45777415346e-05,
      2.95589228015e-07,  2.45777415346e-05,  2.95589228015e-07, 2.45777415346e-05,
      2.95589228015e-07,  2.16196254244e-05,  5.08073669864e-06, -2.04069104478e-27,
      -0.00644129196,     -1.31367255566e-26, 7.83288362122e-27, -0.269500969372,
      0.350370203973,     1.61937945829,      0.999999955994,    -1.66503818287e-08,
      -5.72115729643e-05, -0.000291098317058};
  const std::vector<double> obs_50 = {
      0.171418933271,    -1.75627763707,    2.36912447305,      -2.26857431413,
      0.348650623681,    0.890498256912,    1.60495442629,      0.0234316731443,
      0.0166062378374,   8.22399966416e-05, 0.000442166447892,  1.62300143453e-05,
      1.79673536433e-05, 1.09915904522e-07, 2.55637762595e-05,  3.46454897096e-05,
      3.31466556801e-05, 0.000417034255069, -5.35926546376e-06, 0.000209281444058,
      -0.0162851791872,  -0.00977155937194, 0.00099153595621,   -0.269068113384,
      0.350369628824,    1.61952715211,     1.00144032919,      -0.00470250064043,
      -0.00576392743651, 1.01436343296e-06};
  Environment env("kitchen-complete-v0");
  std::vector<float> obs(60);
  env.reset(7, obs);
  const auto near = [&env](const std::vector<double>& want, const double* have, double tolerance,
                           const char* what, int step) {
    for (std::size_t i = 0; i < want.size(); ++i)
      EXPECT_NEAR(have[i], want[i], tolerance) << what << " after step " << step << ", " << i;
  };
  near(reset_obs, env.task_state().data(), 1e-10, "observation", 0);
  for (int i = 0; i < 30; ++i) EXPECT_EQ(obs[i], static_cast<float>(reset_obs[i])) << i;
  for (int t = 0; t < 50; ++t) {
    std::vector<float> act(9);
    for (int i = 0; i < 9; ++i) act[i] = static_cast<float>(0.9 * std::sin(0.37 * t + 0.61 * i));
    const auto r = env.step(act, obs);
    EXPECT_EQ(r.reward, 0.0);
    const int step = t + 1;
    if (step == 1) {
      near(ctrl_1, env.data()->ctrl, 1e-10, "ctrl", step);
      near(qpos_1, env.qpos().data(), 1e-9, "qpos", step);
      near(obs_1, env.task_state().data(), 1e-9, "observation", step);
    } else if (step == 10) {
      near(ctrl_10, env.data()->ctrl, 1e-9, "ctrl", step);
      near(qpos_10, env.qpos().data(), 1e-9, "qpos", step);
      near(obs_10, env.task_state().data(), 1e-9, "observation", step);
    } else if (step == 50) {
      near(ctrl_50, env.data()->ctrl, 1e-9, "ctrl", step);
      near(qpos_50, env.qpos().data(), 1e-9, "qpos", step);
      near(obs_50, env.task_state().data(), 1e-9, "observation", step);
      for (int i = 0; i < 30; ++i) EXPECT_EQ(obs[i], static_cast<float>(env.task_state()[i]));
    }
  }
  EXPECT_NEAR(env.data()->time, 4.0, 1e-9);
}

}  // namespace dstudio::env
