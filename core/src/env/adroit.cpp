// D4RL's Adroit hand tasks (d4rl/hand_manipulation_suite), written as a plugin writes an
// environment. See docs/environments.md.

// Index of this file:
//   [SECTION] The hand
//   [SECTION] What the tasks share
//   [SECTION] Pen (pen_v0.py)
//   [SECTION] Door (door_v0.py)
//   [SECTION] Hammer (hammer_v0.py)
//   [SECTION] Relocate (relocate_v0.py)
//   [SECTION] The list of tasks

#include <mujoco/mujoco.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "builtin_environments.h"

namespace dstudio::env {
namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] The hand

constexpr const char* kAssets = "environments/adroit/";

// The files every task's model includes, as D4RL ships them.
std::vector<std::string> shared_assets() {
  std::vector<std::string> out = {std::string(kAssets) + "assets/DAPG_Adroit.xml",
                                  std::string(kAssets) + "assets/DAPG_assets.xml"};
  for (const char* mesh : {"forearm_simple", "wrist", "palm", "lfmetacarpal", "knuckle", "F3", "F2",
                           "F1", "TH3_z", "TH2_z", "TH1_z"})
    out.push_back(std::string(kAssets) + "Adroit/resources/meshes/" + mesh + ".stl");
  for (const char* texture : {"wood", "square", "silverRaw", "woodb", "marble"})
    out.push_back(std::string(kAssets) + "Adroit/resources/textures/" + texture + ".png");
  return out;
}

// The hand's 24 joints in qpos order.
const std::vector<std::string>& hand_joints() {
  static const std::vector<std::string> names = {"WRJ1", "WRJ0", "FFJ3", "FFJ2", "FFJ1", "FFJ0",
                                                 "MFJ3", "MFJ2", "MFJ1", "MFJ0", "RFJ3", "RFJ2",
                                                 "RFJ1", "RFJ0", "LFJ4", "LFJ3", "LFJ2", "LFJ1",
                                                 "LFJ0", "THJ4", "THJ3", "THJ2", "THJ1", "THJ0"};
  return names;
}

int id_of(const mjModel* m, mjtObj type, const char* name) {
  const int id = mj_name2id(m, type, name);
  if (id < 0) throw EnvError(std::string("the Adroit model has no '") + name + "'");
  return id;
}

// The sensitivity every task's constructor sets in code (the shipped XML says the same): the
// wrist's actuators gain 10 bias -10, the fingers' and thumb's gain 1 bias -1.
void set_hand_gains(mjModel* m) {
  const auto set = [m](const char* first, const char* last, double gain) {
    for (int i = id_of(m, mjOBJ_ACTUATOR, first); i <= id_of(m, mjOBJ_ACTUATOR, last); ++i) {
      m->actuator_gainprm[i * mjNGAIN + 0] = gain;
      m->actuator_gainprm[i * mjNGAIN + 1] = 0.0;
      m->actuator_gainprm[i * mjNGAIN + 2] = 0.0;
      m->actuator_biasprm[i * mjNBIAS + 0] = 0.0;
      m->actuator_biasprm[i * mjNBIAS + 1] = -gain;
      m->actuator_biasprm[i * mjNBIAS + 2] = 0.0;
    }
  };
  set("A_WRJ1", "A_WRJ0", 10.0);
  set("A_FFJ3", "A_THJ0", 1.0);
}

// D4RL's step: an action in [-1, 1] (clipped) to the middle of each actuator's control range plus
// the action times half the range.
void apply_normalised_action(std::span<const float> action, Simulation& sim) {
  const mjModel* m = sim.model;
  for (int i = 0; i < m->nu; ++i) {
    const double lo = m->actuator_ctrlrange[2 * i], hi = m->actuator_ctrlrange[2 * i + 1];
    const double a =
        std::clamp(static_cast<double>(action[static_cast<std::size_t>(i)]), -1.0, 1.0);
    sim.data->ctrl[i] = 0.5 * (lo + hi) + a * 0.5 * (hi - lo);
  }
}

// d4rl/utils/quatmath.py's euler2quat, (w, x, y, z).
std::array<double, 4> euler2quat(double ex, double ey, double ez) {
  const double ai = ez / 2, aj = -ey / 2, ak = ex / 2;
  const double si = std::sin(ai), sj = std::sin(aj), sk = std::sin(ak);
  const double ci = std::cos(ai), cj = std::cos(aj), ck = std::cos(ak);
  const double cc = ci * ck, cs = ci * sk, sc = si * ck, ss = si * sk;
  return {cj * cc + sj * ss, cj * cs - sj * sc, -(cj * ss + sj * cc), cj * sc - sj * cs};
}

std::array<double, 3> site(const mjData* d, int id) {
  return {d->site_xpos[3 * id], d->site_xpos[3 * id + 1], d->site_xpos[3 * id + 2]};
}

double norm(const std::array<double, 3>& v) {
  return std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

// A site pair's length on its body, as D4RL measures pen_length and tar_length at start-up.
double site_distance(const mjModel* m, int a, int b) {
  return norm({m->site_pos[3 * a] - m->site_pos[3 * b],
               m->site_pos[3 * a + 1] - m->site_pos[3 * b + 1],
               m->site_pos[3 * a + 2] - m->site_pos[3 * b + 2]});
}

// The unit vector from a body's bottom site to its top site.
std::array<double, 3> axis(const mjModel* m, const mjData* d, const char* top, const char* bottom) {
  const int t = id_of(m, mjOBJ_SITE, top), b = id_of(m, mjOBJ_SITE, bottom);
  const auto pt = site(d, t), pb = site(d, b);
  const double length = site_distance(m, t, b);
  return {(pt[0] - pb[0]) / length, (pt[1] - pb[1]) / length, (pt[2] - pb[2]) / length};
}

// Observation names: `prefix` x, y, z.
void add_xyz(std::vector<std::string>& names, const std::string& prefix) {
  for (const char* c : {"_x", "_y", "_z"}) names.push_back(prefix + c);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] What the tasks share

// What pen, door, hammer and relocate share.
EnvironmentDefinition adroit_task(const std::string& name, const std::string& model,
                                  const std::string& description) {
  EnvironmentDefinition d;
  d.name = name;
  d.base = name;
  d.family = "adroit";
  d.description = description;
  d.model_file = std::string(kAssets) + "assets/" + model;
  d.model_assets = shared_assets();
  d.frame_skip = 5;
  d.apply_action = apply_normalised_action;
  d.reports_success = true;
  d.rtg_scale = 1000.0;
  d.camera.track = false;
  d.camera.followable = false;  // the hand works in place: the task's view is the whole scene
  d.camera.elevation = -45.0;   // mujoco-py's default, which D4RL's viewers keep
  d.camera.lookat[0] = 0.0, d.camera.lookat[1] = -0.16, d.camera.lookat[2] = 0.2;
  return d;
}

using RecordedInfos = std::map<std::string, std::span<const float>>;

// The replay of a task whose task state is one recorded value (pen's desired_orien, door's
// door_body_pos, hammer's board_pos) then the goal steps, which no file records (0). Without the
// key, or with a row of another width, the model's own value: the XML's, so the scene stays whole.
std::function<std::vector<double>(const mjModel*, std::span<const double>, std::span<const float>,
                                  const RecordedInfos&)>
replay_from_info(const char* key, std::size_t width,
                 std::function<const double*(const mjModel*)> model_value) {
  return [key, width, model_value](const mjModel* m, std::span<const double>,
                                   std::span<const float>, const RecordedInfos& infos) {
    std::vector<double> s(width + 1, 0.0);
    const auto found = infos.find(key);
    if (found != infos.end() && found->second.size() == width)
      std::copy(found->second.begin(), found->second.end(), s.begin());
    else
      std::copy_n(model_value(m), width, s.begin());
    return s;
  };
}

// The first `count` values of the task state, for recorded_state.
std::vector<double> first(const std::vector<double>& task_state, std::size_t count) {
  return {task_state.begin(), task_state.begin() + static_cast<std::ptrdiff_t>(count)};
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Pen (pen_v0.py)

constexpr double kPenDropZ = 0.075;  // the pen's body below this height ends the episode
constexpr int kPenGoalSteps = 20;    // more goal-achieved steps than this: a success

struct PenState {
  std::array<double, 3> obj_pos, desired_pos, obj_orien, desired_orien;
};

PenState pen_state(const Simulation& sim) {
  const mjModel* m = sim.model;
  const mjData* d = sim.data;
  const int obj = id_of(m, mjOBJ_BODY, "Object");
  PenState s;
  s.obj_pos = {d->xpos[3 * obj], d->xpos[3 * obj + 1], d->xpos[3 * obj + 2]};
  s.desired_pos = site(d, id_of(m, mjOBJ_SITE, "eps_ball"));
  s.obj_orien = axis(m, d, "object_top", "object_bottom");
  s.desired_orien = axis(m, d, "target_top", "target_bottom");
  return s;
}

// The viewers' line for a task whose goal-achieved steps are counted in its task state's last
// value: how many so far, and the count past which the episode is a success.
std::function<SuccessProgress(std::span<const double>)> goal_progress(int needed) {
  return [needed](std::span<const double> task_state) -> SuccessProgress {
    if (task_state.empty()) return {};
    const auto steps = static_cast<long>(task_state.back());
    const std::string count =
        "goal achieved on " + std::to_string(steps) + (steps == 1 ? " step" : " steps");
    if (steps > needed)
      return {count + ": a success (more than " + std::to_string(needed) + ")", true};
    return {count + "; more than " + std::to_string(needed) + " is a success", false};
  };
}

EnvironmentDefinition pen() {
  auto d = adroit_task("pen", "DAPG_pen.xml",
                       "D4RL's Adroit pen: turn the pen to the target's orientation");
  d.obs_dim = 45, d.act_dim = 24, d.nq = 30, d.nv = 30;
  d.max_episode_steps = 100;
  d.ref_min_score = 96.262799, d.ref_max_score = 3076.8331017826877;
  d.default_targets = {3100.0, 1550.0};
  d.observation_names = hand_joints();
  add_xyz(d.observation_names, "pen");
  for (const char* v : {"v_pen_x", "v_pen_y", "v_pen_z", "w_pen_x", "w_pen_y", "w_pen_z"})
    d.observation_names.push_back(v);
  add_xyz(d.observation_names, "pen_axis");
  add_xyz(d.observation_names, "target_axis");
  add_xyz(d.observation_names, "pen_from_goal");
  add_xyz(d.observation_names, "axis_error");
  d.first_velocity = 27;
  // The target's orientation (its body quaternion, D4RL's infos/desired_orien) and the steps the
  // goal has been achieved so far.
  d.task_state_size = 5;
  // Close enough that the pen in the hand and the target pen beside it (0.2 m along x) fill the
  // picture, looking at the point between them.
  d.camera.azimuth = -90.0, d.camera.distance = 0.6;
  d.camera.lookat[0] = 0.1, d.camera.lookat[1] = -0.2, d.camera.lookat[2] = 0.25;

  d.reset = [](Simulation& sim, Random& random) {
    // qpos and qvel are the model's qpos0 and 0 (mj_resetData); the target turns by two draws.
    const double ex = random.uniform(-1.0, 1.0), ey = random.uniform(-1.0, 1.0);
    const auto q = euler2quat(ex, ey, 0.0);
    auto& s = *sim.task_state;
    std::copy(q.begin(), q.end(), s.begin());
    s[4] = 0.0;
  };
  d.configure_model = [](mjModel* m, std::span<const double> s) {
    set_hand_gains(m);
    const int target = id_of(m, mjOBJ_BODY, "target");
    std::copy_n(s.begin(), 4, m->body_quat + 4 * target);
  };
  d.recorded_state = [](const Simulation& sim) {
    return std::map<std::string, std::vector<double>>{{"desired_orien", first(*sim.task_state, 4)}};
  };
  d.replayed_task_state = replay_from_info("desired_orien", 4, [](const mjModel* m) {
    return m->body_quat + 4 * id_of(m, mjOBJ_BODY, "target");
  });
  d.observe = [](const Simulation& sim, std::span<float> obs) {
    const auto s = pen_state(sim);
    const mjData* data = sim.data;
    std::size_t k = 0;
    for (int i = 0; i < 24; ++i) obs[k++] = static_cast<float>(data->qpos[i]);
    for (double v : s.obj_pos) obs[k++] = static_cast<float>(v);
    for (int i = 24; i < 30; ++i) obs[k++] = static_cast<float>(data->qvel[i]);
    for (double v : s.obj_orien) obs[k++] = static_cast<float>(v);
    for (double v : s.desired_orien) obs[k++] = static_cast<float>(v);
    for (int i = 0; i < 3; ++i) obs[k++] = static_cast<float>(s.obj_pos[i] - s.desired_pos[i]);
    for (int i = 0; i < 3; ++i) obs[k++] = static_cast<float>(s.obj_orien[i] - s.desired_orien[i]);
  };
  d.outcome = [](const Simulation& sim, const StepContext&) {
    const auto s = pen_state(sim);
    const double dist = norm({s.obj_pos[0] - s.desired_pos[0], s.obj_pos[1] - s.desired_pos[1],
                              s.obj_pos[2] - s.desired_pos[2]});
    const double similarity = s.obj_orien[0] * s.desired_orien[0] +
                              s.obj_orien[1] * s.desired_orien[1] +
                              s.obj_orien[2] * s.desired_orien[2];
    StepResult r;
    r.reward = -dist + similarity;
    if (dist < 0.075 && similarity > 0.9) r.reward += 10.0;
    if (dist < 0.075 && similarity > 0.95) r.reward += 50.0;
    if (s.obj_pos[2] < kPenDropZ) {
      r.reward -= 5.0;
      r.terminated = true;
    }
    auto& goal_steps = (*sim.task_state)[4];
    if (dist < 0.075 && similarity > 0.95) goal_steps += 1.0;
    r.success = goal_steps > kPenGoalSteps;
    return r;
  };
  d.progress = goal_progress(kPenGoalSteps);
  return d;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Door (door_v0.py)

constexpr int kGoalSteps = 25;  // door, hammer, relocate: more goal-achieved steps, a success

// Counts a goal-achieved step in the task state's last value; the episode is a success past
// `needed`.
bool count_goal_step(const Simulation& sim, bool achieved, int needed) {
  auto& steps = sim.task_state->back();
  if (achieved) steps += 1.0;
  return steps > needed;
}

std::array<double, 3> minus(const std::array<double, 3>& a, const std::array<double, 3>& b) {
  return {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
}

std::array<double, 3> body(const mjData* d, int id) {
  return {d->xpos[3 * id], d->xpos[3 * id + 1], d->xpos[3 * id + 2]};
}

// The sum of the squared joint velocities, which door's and hammer's rewards penalise.
double squared_speed(const Simulation& sim) {
  double sum = 0.0;
  for (int i = 0; i < sim.model->nv; ++i) sum += sim.data->qvel[i] * sim.data->qvel[i];
  return sum;
}

// The configure_model of a task whose episode moves one body: the hand's gains, then the body at
// the task state's first three values.
std::function<void(mjModel*, std::span<const double>)> move_body(const char* name) {
  return [name](mjModel* m, std::span<const double> s) {
    set_hand_gains(m);
    std::copy_n(s.begin(), 3, m->body_pos + 3 * id_of(m, mjOBJ_BODY, name));
  };
}

struct DoorState {
  std::array<double, 3> palm, handle;
  double hinge;
};

DoorState door_state(const Simulation& sim) {
  const mjModel* m = sim.model;
  const mjData* d = sim.data;
  return {site(d, id_of(m, mjOBJ_SITE, "S_grasp")), site(d, id_of(m, mjOBJ_SITE, "S_handle")),
          d->qpos[28]};
}

EnvironmentDefinition door() {
  auto d = adroit_task("door", "DAPG_door.xml",
                       "D4RL's Adroit door: undo the latch and swing the door open");
  d.obs_dim = 39, d.act_dim = 28, d.nq = 30, d.nv = 30;
  d.max_episode_steps = 200;
  d.ref_min_score = -56.512833, d.ref_max_score = 2880.5693087298737;
  d.default_targets = {2900.0, 1450.0};
  d.observation_names = {"ARRx", "ARRy", "ARRz"};
  for (const auto& j : hand_joints()) d.observation_names.push_back(j);
  d.observation_names.push_back("latch");
  d.observation_names.push_back("door_hinge");
  add_xyz(d.observation_names, "palm");
  add_xyz(d.observation_names, "handle");
  add_xyz(d.observation_names, "palm_from_handle");
  d.observation_names.push_back("door_open");
  d.first_velocity = d.obs_dim;  // no velocity is observed
  // The door frame's position (D4RL's infos/door_body_pos), then the goal-achieved steps.
  d.task_state_size = 4;
  d.camera.azimuth = 90.0, d.camera.distance = 1.5;

  d.reset = [](Simulation& sim, Random& random) {
    auto& s = *sim.task_state;
    s[0] = random.uniform(-0.3, -0.2);
    s[1] = random.uniform(0.25, 0.35);
    s[2] = random.uniform(0.252, 0.35);
    s[3] = 0.0;
  };
  d.configure_model = move_body("frame");
  d.recorded_state = [](const Simulation& sim) {
    return std::map<std::string, std::vector<double>>{{"door_body_pos", first(*sim.task_state, 3)}};
  };
  d.replayed_task_state = replay_from_info("door_body_pos", 3, [](const mjModel* m) {
    return m->body_pos + 3 * id_of(m, mjOBJ_BODY, "frame");
  });
  d.observe = [](const Simulation& sim, std::span<float> obs) {
    const mjData* data = sim.data;
    const auto [palm, handle, hinge] = door_state(sim);
    std::size_t k = 0;
    for (int i = 1; i < 28; ++i) obs[k++] = static_cast<float>(data->qpos[i]);
    obs[k++] = static_cast<float>(data->qpos[29]);
    obs[k++] = static_cast<float>(hinge);
    for (double v : palm) obs[k++] = static_cast<float>(v);
    for (double v : handle) obs[k++] = static_cast<float>(v);
    for (double v : minus(palm, handle)) obs[k++] = static_cast<float>(v);
    obs[k++] = hinge > 1.0 ? 1.0f : -1.0f;
  };
  d.outcome = [](const Simulation& sim, const StepContext&) {
    const auto [palm, handle, hinge] = door_state(sim);
    const double qvel2 = squared_speed(sim);
    StepResult r;
    r.reward =
        -0.1 * norm(minus(palm, handle)) - 0.1 * (hinge - 1.57) * (hinge - 1.57) - 1e-5 * qvel2;
    if (hinge > 0.2) r.reward += 2.0;
    if (hinge > 1.0) r.reward += 8.0;
    if (hinge > 1.35) r.reward += 10.0;
    r.success = count_goal_step(sim, hinge >= 1.35, kGoalSteps);
    return r;
  };
  d.progress = goal_progress(kGoalSteps);
  return d;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Hammer (hammer_v0.py)

// d4rl/utils/quatmath.py's quat2euler (quat2mat, then mat2euler).
std::array<double, 3> quat2euler(const double* q) {
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  const double n = w * w + x * x + y * y + z * z;
  double mat[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  if (n > std::numeric_limits<double>::epsilon()) {
    const double s = 2.0 / n, X = x * s, Y = y * s, Z = z * s;
    const double wX = w * X, wY = w * Y, wZ = w * Z, xX = x * X, xY = x * Y, xZ = x * Z, yY = y * Y,
                 yZ = y * Z, zZ = z * Z;
    mat[0][0] = 1.0 - (yY + zZ), mat[0][1] = xY - wZ, mat[0][2] = xZ + wY;
    mat[1][0] = xY + wZ, mat[1][1] = 1.0 - (xX + zZ), mat[1][2] = yZ - wX;
    mat[2][0] = xZ - wY, mat[2][1] = yZ + wX, mat[2][2] = 1.0 - (xX + yY);
  }
  const double cy = std::sqrt(mat[2][2] * mat[2][2] + mat[1][2] * mat[1][2]);
  if (cy > 4.0 * std::numeric_limits<double>::epsilon())
    return {-std::atan2(mat[1][2], mat[2][2]), -std::atan2(-mat[0][2], cy),
            -std::atan2(mat[0][1], mat[0][0])};
  return {0.0, -std::atan2(-mat[0][2], cy), -std::atan2(-mat[1][0], mat[1][1])};
}

struct HammerState {
  std::array<double, 3> obj_pos, palm_pos, tool_pos, target_pos, goal_pos;
};

HammerState hammer_state(const Simulation& sim) {
  const mjModel* m = sim.model;
  const mjData* d = sim.data;
  return {body(d, id_of(m, mjOBJ_BODY, "Object")), site(d, id_of(m, mjOBJ_SITE, "S_grasp")),
          site(d, id_of(m, mjOBJ_SITE, "tool")), site(d, id_of(m, mjOBJ_SITE, "S_target")),
          site(d, id_of(m, mjOBJ_SITE, "nail_goal"))};
}

EnvironmentDefinition hammer() {
  auto d = adroit_task("hammer", "DAPG_hammer.xml",
                       "D4RL's Adroit hammer: pick up the hammer and drive the nail in");
  d.obs_dim = 46, d.act_dim = 26, d.nq = 33, d.nv = 33;
  d.max_episode_steps = 200;
  d.ref_min_score = -274.856578, d.ref_max_score = 12794.134825156867;
  d.default_targets = {12800.0, 6400.0};
  d.observation_names = {"ARRx", "ARRy"};
  for (const auto& j : hand_joints()) d.observation_names.push_back(j);
  d.observation_names.push_back("nail_dir");
  for (const char* v :
       {"v_hammer_x", "v_hammer_y", "v_hammer_z", "w_hammer_x", "w_hammer_y", "w_hammer_z"})
    d.observation_names.push_back(v);
  add_xyz(d.observation_names, "palm");
  add_xyz(d.observation_names, "hammer");
  for (const char* v : {"hammer_rx", "hammer_ry", "hammer_rz"}) d.observation_names.push_back(v);
  add_xyz(d.observation_names, "nail");
  d.observation_names.push_back("nail_impact");
  d.first_velocity = 27;
  // The nail board's position (D4RL's infos/board_pos), then the goal-achieved steps.
  d.task_state_size = 4;
  d.camera.azimuth = 45.0, d.camera.distance = 2.0;

  d.reset = [](Simulation& sim, Random& random) {
    // The board moves up or down only; x and y stay the model's.
    const mjModel* m = sim.model;
    const int board = id_of(m, mjOBJ_BODY, "nail_board");
    auto& s = *sim.task_state;
    s[0] = m->body_pos[3 * board], s[1] = m->body_pos[3 * board + 1];
    s[2] = random.uniform(0.1, 0.25);
    s[3] = 0.0;
  };
  d.configure_model = move_body("nail_board");
  d.recorded_state = [](const Simulation& sim) {
    const auto target = hammer_state(sim).target_pos;
    return std::map<std::string, std::vector<double>>{
        {"board_pos", first(*sim.task_state, 3)}, {"target_pos", {target.begin(), target.end()}}};
  };
  d.replayed_task_state = replay_from_info("board_pos", 3, [](const mjModel* m) {
    return m->body_pos + 3 * id_of(m, mjOBJ_BODY, "nail_board");
  });
  d.observe = [](const Simulation& sim, std::span<float> obs) {
    const mjModel* m = sim.model;
    const mjData* data = sim.data;
    const auto s = hammer_state(sim);
    const int obj = id_of(m, mjOBJ_BODY, "Object");
    std::size_t k = 0;
    for (int i = 0; i < 27; ++i) obs[k++] = static_cast<float>(data->qpos[i]);
    for (int i = 27; i < 33; ++i)
      obs[k++] = static_cast<float>(std::clamp(data->qvel[i], -1.0, 1.0));
    for (double v : s.palm_pos) obs[k++] = static_cast<float>(v);
    for (double v : s.obj_pos) obs[k++] = static_cast<float>(v);
    for (double v : quat2euler(data->xquat + 4 * obj)) obs[k++] = static_cast<float>(v);
    for (double v : s.target_pos) obs[k++] = static_cast<float>(v);
    const int nail = id_of(m, mjOBJ_SENSOR, "S_nail");
    obs[k++] = static_cast<float>(std::clamp(data->sensordata[m->sensor_adr[nail]], -1.0, 1.0));
  };
  d.outcome = [](const Simulation& sim, const StepContext&) {
    const auto s = hammer_state(sim);
    const double qvel2 = squared_speed(sim);
    const double nail = norm(minus(s.target_pos, s.goal_pos));
    StepResult r;
    r.reward = -0.1 * norm(minus(s.palm_pos, s.obj_pos)) - norm(minus(s.tool_pos, s.target_pos)) -
               10.0 * nail - 1e-2 * std::sqrt(qvel2);
    if (s.obj_pos[2] > 0.04 && s.tool_pos[2] > 0.04) r.reward += 2.0;
    if (nail < 0.020) r.reward += 25.0;
    if (nail < 0.010) r.reward += 75.0;
    r.success = count_goal_step(sim, nail < 0.010, kGoalSteps);
    return r;
  };
  d.progress = goal_progress(kGoalSteps);
  return d;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Relocate (relocate_v0.py)

struct RelocateState {
  std::array<double, 3> obj_pos, palm_pos, target_pos;
};

RelocateState relocate_state(const Simulation& sim) {
  const mjModel* m = sim.model;
  const mjData* d = sim.data;
  return {body(d, id_of(m, mjOBJ_BODY, "Object")), site(d, id_of(m, mjOBJ_SITE, "S_grasp")),
          site(d, id_of(m, mjOBJ_SITE, "target"))};
}

EnvironmentDefinition relocate() {
  auto d = adroit_task("relocate", "DAPG_relocate.xml",
                       "D4RL's Adroit relocate: carry the ball to the target");
  d.obs_dim = 39, d.act_dim = 30, d.nq = 36, d.nv = 36;
  d.max_episode_steps = 200;
  d.ref_min_score = -6.425911, d.ref_max_score = 4233.877797728884;
  d.default_targets = {4300.0, 2150.0};
  d.observation_names = {"ARTx", "ARTy", "ARTz", "ARRx", "ARRy", "ARRz"};
  for (const auto& j : hand_joints()) d.observation_names.push_back(j);
  add_xyz(d.observation_names, "palm_from_ball");
  add_xyz(d.observation_names, "palm_from_target");
  add_xyz(d.observation_names, "ball_from_target");
  d.first_velocity = d.obs_dim;  // no velocity is observed
  // The ball's base position and the target's (D4RL's model edits), then the goal-achieved steps.
  d.task_state_size = 7;
  d.camera.azimuth = 90.0, d.camera.distance = 1.5;

  d.reset = [](Simulation& sim, Random& random) {
    const mjModel* m = sim.model;
    auto& s = *sim.task_state;
    s[0] = random.uniform(-0.15, 0.15);
    s[1] = random.uniform(-0.15, 0.3);
    s[2] = m->body_pos[3 * id_of(m, mjOBJ_BODY, "Object") + 2];  // stays on the table
    s[3] = random.uniform(-0.2, 0.2);
    s[4] = random.uniform(-0.2, 0.2);
    s[5] = random.uniform(0.15, 0.35);
    s[6] = 0.0;
  };
  d.configure_model = [ball = move_body("Object")](mjModel* m, std::span<const double> s) {
    ball(m, s);
    std::copy_n(s.begin() + 3, 3, m->site_pos + 3 * id_of(m, mjOBJ_SITE, "target"));
  };
  // Recorded per step, as D4RL meant: its own files hold one row repeated (views, not copies).
  d.recorded_state = [](const Simulation& sim) {
    const auto s = relocate_state(sim);
    const auto values = [](const std::array<double, 3>& v) {
      return std::vector<double>(v.begin(), v.end());
    };
    return std::map<std::string, std::vector<double>>{
        {"hand_qpos", std::vector<double>(sim.data->qpos, sim.data->qpos + 30)},
        {"obj_pos", values(s.obj_pos)},
        {"target_pos", values(s.target_pos)},
        {"palm_pos", values(s.palm_pos)}};
  };
  // From the episode's first observation, which D4RL's files hold correctly: the palm where qpos
  // puts it, the ball and the target at their observed offsets from it, the ball's base its
  // position less the displacement of its slide joints (qpos[30:33]).
  d.replayed_task_state = [](const mjModel* m, std::span<const double> qpos,
                             std::span<const float> obs, const RecordedInfos&) {
    if (obs.size() < 36 || qpos.size() < 33)
      throw EnvError("a relocate step is replayed from 39 observed values and 36 of qpos");
    std::unique_ptr<mjData, void (*)(mjData*)> data(mj_makeData(m), mj_deleteData);
    if (!data) throw EnvError("MuJoCo could not allocate the data of relocate's model");
    std::copy_n(qpos.begin(), std::min<std::size_t>(qpos.size(), m->nq), data->qpos);
    mj_kinematics(m, data.get());
    const auto palm = site(data.get(), id_of(m, mjOBJ_SITE, "S_grasp"));
    std::vector<double> s(7, 0.0);
    for (std::size_t i = 0; i < 3; ++i) {
      const double ball = palm[i] - obs[30 + i];
      s[i] = ball - qpos[30 + i];
      s[3 + i] = palm[i] - obs[33 + i];
    }
    return s;
  };
  d.observe = [](const Simulation& sim, std::span<float> obs) {
    const auto s = relocate_state(sim);
    std::size_t k = 0;
    for (int i = 0; i < 30; ++i) obs[k++] = static_cast<float>(sim.data->qpos[i]);
    for (double v : minus(s.palm_pos, s.obj_pos)) obs[k++] = static_cast<float>(v);
    for (double v : minus(s.palm_pos, s.target_pos)) obs[k++] = static_cast<float>(v);
    for (double v : minus(s.obj_pos, s.target_pos)) obs[k++] = static_cast<float>(v);
  };
  d.outcome = [](const Simulation& sim, const StepContext&) {
    const auto s = relocate_state(sim);
    const double to_target = norm(minus(s.obj_pos, s.target_pos));
    StepResult r;
    r.reward = -0.1 * norm(minus(s.palm_pos, s.obj_pos));
    if (s.obj_pos[2] > 0.04) {
      r.reward += 1.0;
      r.reward += -0.5 * norm(minus(s.palm_pos, s.target_pos));
      r.reward += -0.5 * to_target;
    }
    if (to_target < 0.1) r.reward += 10.0;
    if (to_target < 0.05) r.reward += 20.0;
    r.success = count_goal_step(sim, to_target < 0.1, kGoalSteps);
    return r;
  };
  d.progress = goal_progress(kGoalSteps);
  return d;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] The list of tasks

std::vector<EnvironmentDefinition> adroit_environments() {
  std::vector<EnvironmentDefinition> all;
  for (auto* task : {pen, door, hammer, relocate}) all.push_back(task());
  return all;
}

}  // namespace dstudio::env
