// D4RL's Franka Kitchen (d4rl/kitchen: kitchen_envs.py, adept_envs/franka/kitchen_multitask_v0.py,
// robot/franka_robot.py, robot/franka_config.xml), written as a plugin writes an environment. See
// docs/environments.md.

#include "dstudio/env/kitchen.h"

#include <mujoco/mujoco.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "builtin_environments.h"

namespace dstudio::env {
namespace {

constexpr const char* kAssets = "environments/kitchen/";
constexpr int kRobot = 9;    // N_DOF_ROBOT: the arm's 7 joints and the 2 fingers, qpos[0:9]
constexpr int kObject = 21;  // N_DOF_OBJECT: the kitchen's, qpos[9:30]
constexpr int kQpos = kRobot + kObject;
constexpr int kTaskElements = 4;         // every kitchen task has four
constexpr int kFrameSkip = 40;           // KitchenV0's frame_skip: 40 x 0.002 s = 0.08 s a step
constexpr double kNoiseRatio = 0.1;      // robot_noise_ratio, objects' too
constexpr double kActionScale = 2.0;     // act_amp: an action in [-1, 1] is a joint velocity of ±2
constexpr double kVelocityBound = 10.0;  // vel_bound of the arm and the fingers (never binds)
constexpr double kBonusThreshold = 0.3;  // BONUS_THRESH

// The task state: the last observation's noisy qpos (the controller's reference), whether each
// of the task's four elements is done (1) or still to do (0), and where the noise stream is
// (SplitMix64's counter in two 32-bit halves, each exact in a double).
constexpr int kDone = kQpos;
constexpr int kStream = kDone + kTaskElements;
constexpr int kTaskStateSize = kStream + 2;

// KitchenV0's init_qpos: every episode starts here, at rest.
constexpr std::array<double, kQpos> kInitQpos = {
    1.48388023e-01,  -1.76848573e+00, 1.84390296e+00,  -2.47685760e+00, 2.60252026e-01,
    7.12533105e-01,  1.59515394e+00,  4.79267505e-02,  3.71350919e-02,  -2.66279850e-04,
    -5.18043486e-05, 3.12877220e-05,  -4.51199853e-05, -3.90842156e-06, -4.22629655e-05,
    6.28065475e-05,  4.04984708e-05,  4.62730939e-04,  -2.26906415e-04, -4.65501369e-04,
    -6.44129196e-03, -1.77048263e-03, 1.08009684e-03,  -2.69397440e-01, 3.50383255e-01,
    1.61944683e+00,  1.00618764e+00,  4.06395120e-03,  -6.62095997e-03, -2.68278933e-04};

// franka_config.xml, qpos0 ... qpos29: pos_noise_amp (the robot's then the objects', as
// get_obs slices them), and pos_bound of the robot's nine.
constexpr std::array<double, kQpos> kPosNoiseAmp = {
    0.1,   0.1,    0.1,    0.1,    0.1,    0.1,    0.1,    0.1,   0.1,   0.005,
    0.005, 0.0005, 0.0005, 0.0005, 0.0005, 0.0005, 0.0005, 0.005, 0.005, 0.005,
    0.1,   0.1,    0.1,    0.005,  0.005,  0.005,  0.1,    0.1,   0.1,   0.005};
constexpr std::array<double, kRobot> kPosLow = {-2.9, -1.8, -2.9, -3.1, -2.9, 0.0, -2.9, 0.0, 0.0};
constexpr std::array<double, kRobot> kPosHigh = {2.9, 1.8, 2.9, 0.0, 2.9, 3.8, 2.9, 0.04, 0.04};

// OBS_ELEMENT_INDICES and OBS_ELEMENT_GOALS: which qpos an element is and where it is done.
struct Element {
  const char* name;
  std::vector<int> qpos;
  std::vector<double> goal;
};

const std::vector<Element>& elements() {
  static const std::vector<Element> all = {
      {"bottom burner", {11, 12}, {-0.88, -0.01}},
      {"top burner", {15, 16}, {-0.92, -0.01}},
      {"light switch", {17, 18}, {-0.69, -0.05}},
      {"slide cabinet", {19}, {0.37}},
      {"hinge cabinet", {20, 21}, {0.0, 1.45}},
      {"microwave", {22}, {-0.75}},
      {"kettle", {23, 24, 25, 26, 27, 28, 29}, {-0.23, 0.75, 1.62, 0.99, 0.0, 0.0, -0.06}},
  };
  return all;
}

const Element& element(const std::string& name) {
  for (const auto& e : elements())
    if (name == e.name) return e;
  throw EnvError("the kitchen has no element '" + name + "'");
}

// The joints of qpos in order, as the observation names them; the kettle's free joint is its
// position and quaternion.
std::vector<std::string> qpos_names() {
  std::vector<std::string> names;
  for (int i = 1; i <= 7; ++i) names.push_back("panda0_joint" + std::to_string(i));
  names.insert(names.end(), {"panda0_finger_joint1", "panda0_finger_joint2"});
  for (int i = 1; i <= 4; ++i) {
    names.push_back("knob_Joint_" + std::to_string(i));
    names.push_back("burner_Joint_" + std::to_string(i));
  }
  names.insert(names.end(), {"lightswitch_joint", "light_joint", "slidedoor_joint", "leftdoorhinge",
                             "rightdoorhinge", "microjoint", "kettle_x", "kettle_y", "kettle_z",
                             "kettle_qw", "kettle_qx", "kettle_qy", "kettle_qz"});
  return names;
}

// The episode's noise stream, kept in the task state so that a restored state draws what the
// original drew.
Random noise_stream(const std::vector<double>& s) {
  Random random;
  const auto hi = static_cast<std::uint64_t>(s[kStream]);
  const auto lo = static_cast<std::uint64_t>(s[kStream + 1]);
  random.restore({(hi << 32) | lo, 0.0, false});
  return random;
}

void keep_noise_stream(const Random& random, std::vector<double>& s) {
  const std::uint64_t counter = random.state().counter;
  s[kStream] = static_cast<double>(counter >> 32);
  s[kStream + 1] = static_cast<double>(counter & 0xFFFFFFFFULL);
}

// Robot.get_obs: qpos with uniform noise of half-width 0.1 x pos_noise_amp. D4RL draws four
// vectors in turn: the robot's positions, its velocities, the objects' positions, their
// velocities; the velocities are not observed, but their draws keep the stream's order. The noisy
// qpos becomes the task state's last observation.
void observe_noisy(const double* qpos, std::vector<double>& s, Random& random) {
  for (int i = 0; i < kRobot; ++i)
    s[i] = qpos[i] + kNoiseRatio * kPosNoiseAmp[i] * random.uniform(-1.0, 1.0);
  for (int i = 0; i < kRobot; ++i) random.uniform(-1.0, 1.0);
  for (int i = kRobot; i < kQpos; ++i)
    s[i] = qpos[i] + kNoiseRatio * kPosNoiseAmp[i] * random.uniform(-1.0, 1.0);
  for (int i = kRobot; i < kQpos; ++i) random.uniform(-1.0, 1.0);
}

// KitchenBase._get_task_goal: zeros but the task elements' goals, at their qpos indices.
std::array<double, kQpos> task_goal(const std::vector<std::string>& task) {
  std::array<double, kQpos> goal{};
  for (const auto& name : task) {
    const auto& e = element(name);
    for (std::size_t k = 0; k < e.qpos.size(); ++k) goal[e.qpos[k]] = e.goal[k];
  }
  return goal;
}

// Every file the model reads besides itself, at its place in D4RL's layout.
std::vector<std::string> kitchen_assets() {
  std::vector<std::string> out;
  const auto add = [&out](const std::string& folder, std::initializer_list<const char*> files) {
    for (const char* f : files) out.push_back(std::string(kAssets) + folder + f);
  };
  add("adept_models/scenes/", {"basic_scene.xml", "textures/white_marble_tile2.png"});
  add("third_party/franka/assets/", {"assets.xml", "actuator0.xml", "chain0.xml"});
  add("adept_models/kitchen/assets/",
      {"oven_asset.xml", "oven_chain.xml", "counters_asset.xml", "counters_chain.xml",
       "backwall_asset.xml", "backwall_chain.xml", "slidecabinet_asset.xml",
       "slidecabinet_chain.xml", "hingecabinet_asset.xml", "hingecabinet_chain.xml",
       "microwave_asset.xml", "microwave_chain.xml", "kettle_asset.xml", "kettle_chain.xml"});
  // The arm: a coarse mesh to collide with and a fine one to see, per link, of the same names.
  for (const char* kind : {"collision/", "visual/"})
    for (const char* link :
         {"link0", "link1", "link2", "link3", "link4", "link5", "link6", "link7", "hand"})
      out.push_back(std::string(kAssets) + "third_party/franka/meshes/" + kind + link + ".stl");
  out.push_back(std::string(kAssets) + "third_party/franka/meshes/collision/finger.stl");
  for (const char* mesh : {"burnerplate",  "cabinetbase", "cabinetdrawer", "cabinethandle",
                           "countertop",   "faucet",      "hood",          "kettle",
                           "kettlehandle", "knob",        "lightswitch",   "lightswitchbase",
                           "micro",        "microbutton", "microdoor",     "microfeet",
                           "microhandle",  "microwindow", "oven",          "ovenhandle",
                           "oventop",      "ovenwindow",  "stoverim"})
    out.push_back(std::string(kAssets) + "adept_models/kitchen/meshes/" + mesh + ".stl");
  for (const char* texture : {"marble1", "metal1", "wood1"})
    out.push_back(std::string(kAssets) + "adept_models/kitchen/textures/" + texture + ".png");
  return out;
}

struct TaskRow {
  const char* name;
  std::vector<std::string> elements;
  const char* description;
};

EnvironmentDefinition kitchen_task(const TaskRow& row) {
  EnvironmentDefinition d;
  d.name = row.name;
  d.base = row.name;
  d.family = "kitchen";
  d.description = row.description;
  d.model_file = std::string(kAssets) + "adept_envs/franka/assets/franka_kitchen_jntpos_act_ab.xml";
  d.model_assets = kitchen_assets();
  d.obs_dim = 2 * kQpos, d.act_dim = kRobot, d.nq = kQpos, d.nv = 29;
  d.frame_skip = kFrameSkip;
  d.max_episode_steps = 280;
  d.ref_min_score = 0.0, d.ref_max_score = 4.0;
  // Returns count elements (0 to 4): conditioned as they are, on all four or on two.
  d.rtg_scale = 1.0;
  d.default_targets = {4.0, 2.0};
  d.reports_success = true;
  d.task_state_size = kTaskStateSize;
  d.observation_names = qpos_names();
  for (const auto& n : qpos_names()) d.observation_names.push_back("goal_" + n);
  d.first_velocity = d.obs_dim;  // no velocity is observed
  // Near KitchenTaskRelaxV1's picture (lookat -0.2 0.5 2, azimuth 70, elevation -35, 2.2 m), but
  // more from the front and farther: from its side the bright inner face of the wall beside the
  // microwave filled a third of the picture. From here the whole task is in view, the microwave,
  // the kettle on the burners, the light switch beside the knobs, the cabinets above and the sink,
  // the wall a shaded strip at the left.
  d.camera.track = false;
  d.camera.followable = false;  // the arm is bolted to the counter: nothing to follow
  d.camera.distance = 3.3, d.camera.azimuth = 80.0, d.camera.elevation = -38.0;
  d.camera.lookat[0] = -0.2, d.camera.lookat[1] = 0.6, d.camera.lookat[2] = 2.0;

  // reset_model: init_qpos at rest and a forward pass (which makes the kettle's quaternion, of
  // norm 1.006 in init_qpos, a unit one), then Robot.reset's five observations to fill the cache
  // and reset_model's own, each drawing its noise: the last one is what the policy sees.
  d.reset = [](Simulation& sim, Random& random) {
    std::copy(kInitQpos.begin(), kInitQpos.end(), sim.data->qpos);
    std::fill_n(sim.data->qvel, sim.model->nv, 0.0);
    mj_forward(sim.model, sim.data);
    for (int k = 0; k < 6; ++k) observe_noisy(sim.data->qpos, *sim.task_state, random);
    std::fill_n(sim.task_state->begin() + kDone, kTaskElements, 0.0);
    keep_noise_stream(random, *sim.task_state);
  };
  d.observe = [goal = task_goal(row.elements)](const Simulation& sim, std::span<float> obs) {
    const auto& s = *sim.task_state;
    // Before any reset there is no observation yet: the state itself.
    const bool observed = s.size() == static_cast<std::size_t>(kTaskStateSize);
    for (int i = 0; i < kQpos; ++i)
      obs[i] = static_cast<float>(observed ? s[i] : sim.data->qpos[i]);
    for (int i = 0; i < kQpos; ++i) obs[kQpos + i] = static_cast<float>(goal[i]);
  };
  // Robot_VelAct: the action is a joint velocity, integrated over the step from the robot's qpos
  // as the last observation showed it, noise and all (D4RL's own comment: "This depends on
  // previous observation. This is not ideal as it breaks MDP assumptions"); the target is
  // clipped to pos_bound and held by the position servos for the 40 physics steps.
  d.apply_action = [](std::span<const float> action, Simulation& sim) {
    const auto& s = *sim.task_state;
    const double step = kFrameSkip * sim.model->opt.timestep;  // step_duration
    for (int i = 0; i < kRobot; ++i) {
      const double a = std::clamp(static_cast<double>(action[i]), -1.0, 1.0);
      const double v = std::clamp(kActionScale * a, -kVelocityBound, kVelocityBound);
      sim.data->ctrl[i] = std::clamp(s[i] + v * step, kPosLow[i], kPosHigh[i]);
    }
  };
  // KitchenBase._get_reward_n_score: the new observation is drawn first; an element still to do
  // is done when its noisy qpos is within 0.3 of its goal; the reward counts the elements done
  // at this step, which are then removed. The episode ends when none is left.
  std::vector<const Element*> task;
  for (const auto& name : row.elements) task.push_back(&element(name));
  d.outcome = [task](const Simulation& sim, const StepContext&) {
    auto& s = *sim.task_state;
    Random random = noise_stream(s);
    observe_noisy(sim.data->qpos, s, random);
    keep_noise_stream(random, s);
    StepResult r;
    int done = 0;
    for (int k = 0; k < kTaskElements; ++k) {
      if (s[kDone + k] != 0.0) {
        ++done;
        continue;
      }
      const Element& e = *task[static_cast<std::size_t>(k)];
      double squared = 0.0;
      for (std::size_t j = 0; j < e.qpos.size(); ++j)
        squared += (s[e.qpos[j]] - e.goal[j]) * (s[e.qpos[j]] - e.goal[j]);
      if (std::sqrt(squared) < kBonusThreshold) {
        s[kDone + k] = 1.0;
        r.reward += 1.0;
        ++done;
      }
    }
    r.terminated = done == kTaskElements;
    r.success = r.terminated;
    return r;
  };
  // The four elements as the reward sees them: done once paid, or now within the threshold of
  // the goal in the (noisy) observation, which is what a dataset's episode holds.
  d.subtasks = [task](std::span<const float> obs, std::span<const double> s) {
    std::vector<SubTask> out;
    for (int k = 0; k < kTaskElements; ++k) {
      const Element& e = *task[static_cast<std::size_t>(k)];
      double squared = 0.0;
      for (std::size_t j = 0; j < e.qpos.size(); ++j) {
        const auto i = static_cast<std::size_t>(e.qpos[j]);
        const double q = i < obs.size() ? static_cast<double>(obs[i]) : 0.0;
        squared += (q - e.goal[j]) * (q - e.goal[j]);
      }
      const double distance = std::sqrt(squared);
      const bool paid = s.size() == static_cast<std::size_t>(kTaskStateSize) && s[kDone + k] != 0.0;
      out.push_back({e.name, paid || distance < kBonusThreshold, distance});
    }
    return out;
  };
  return d;
}

const std::vector<TaskRow>& task_rows() {
  static const std::vector<TaskRow> rows = {
      {"kitchen-complete-v0",
       {"microwave", "kettle", "light switch", "slide cabinet"},
       "D4RL's Franka Kitchen: open the microwave, move the kettle, switch the light on, slide "
       "the cabinet open; data: demonstrations that do all four"},
      {"kitchen-partial-v0",
       {"microwave", "kettle", "light switch", "slide cabinet"},
       "D4RL's Franka Kitchen: the same four; data: every demonstration, some doing them"},
      {"kitchen-mixed-v0",
       {"microwave", "kettle", "bottom burner", "light switch"},
       "D4RL's Franka Kitchen: open the microwave, move the kettle, turn the bottom burner, "
       "switch the light on; data: demonstrations that each do some of them"},
  };
  return rows;
}

}  // namespace

std::vector<EnvironmentDefinition> kitchen_environments() {
  std::vector<EnvironmentDefinition> all;
  for (const auto& row : task_rows()) all.push_back(kitchen_task(row));
  return all;
}

namespace kitchen {

std::vector<std::string> task_elements(std::string_view name) {
  const auto found = find_task(name);
  if (found)
    for (const auto& row : task_rows())
      if (found->name == row.name) return row.elements;
  throw EnvError("'" + std::string(name) +
                 "' is not a kitchen task (kitchen-complete-v0, kitchen-partial-v0 or "
                 "kitchen-mixed-v0)");
}

int elements_at_goal(std::string_view task, std::span<const float> observation) {
  if (observation.size() < static_cast<std::size_t>(kQpos))
    throw EnvError("a kitchen observation has 60 values, not " +
                   std::to_string(observation.size()));
  int count = 0;
  for (const auto& name : task_elements(task)) {
    const Element& e = element(name);
    double squared = 0.0;
    for (std::size_t j = 0; j < e.qpos.size(); ++j) {
      const double d = observation[static_cast<std::size_t>(e.qpos[j])] - e.goal[j];
      squared += d * d;
    }
    count += std::sqrt(squared) < kBonusThreshold;
  }
  return count;
}

void observe_again(Environment& env) {
  if (env.spec().family != "kitchen" || env.task_state().size() != kTaskStateSize)
    throw EnvError(env.spec().name + " is not a kitchen task");
  std::vector<double> s(env.task_state().begin(), env.task_state().end());
  Random random = noise_stream(s);
  observe_noisy(env.qpos().data(), s, random);
  keep_noise_stream(random, s);
  env.set_task_state(s);
}

}  // namespace kitchen

}  // namespace dstudio::env
