// Gym's Hopper-v3, Walker2d-v3 and HalfCheetah-v3, the tasks behind D4RL's locomotion datasets,
// as registry entries, and their partially observed "-po" views. See docs/environments.md.

#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "builtin_environments.h"

namespace dstudio::env {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// What distinguishes the three tasks: Gym's constants.
struct Locomotion {
  /// reward = forward_weight * dx/dt + healthy_reward - ctrl_cost * |a|^2
  double forward_weight = 1.0, healthy_reward = 0.0, ctrl_cost = 0.0;
  bool clip_qvel = false;   // observations clip qvel to [-10, 10]
  bool terminates = false;  // the episode ends when the state leaves the healthy set
  // Healthy set (open intervals): z = qpos[1], angle = qpos[2]; when `state_bound` > 0, also
  // every value of qpos[2:] and qvel inside (-state_bound, state_bound).
  double min_z = -1e300, max_z = 1e300, min_angle = -1e300, max_angle = 1e300, state_bound = 0.0;
  // Reset: qpos0 + U(-qpos_noise, qpos_noise); qvel + U(-qvel_noise, qvel_noise), or
  // qvel_noise * N(0, 1) when `normal_qvel_noise`.
  double qpos_noise = 0.0, qvel_noise = 0.0;
  bool normal_qvel_noise = false;
};

bool healthy(const Locomotion& p, const mjModel* m, const mjData* d) {
  const double z = d->qpos[1], angle = d->qpos[2];
  if (!(p.min_z < z && z < p.max_z)) return false;
  if (!(p.min_angle < angle && angle < p.max_angle)) return false;
  if (p.state_bound > 0.0) {
    const double b = p.state_bound;
    for (int i = 2; i < m->nq; ++i)
      if (!(-b < d->qpos[i] && d->qpos[i] < b)) return false;
    for (int i = 0; i < m->nv; ++i)
      if (!(-b < d->qvel[i] && d->qvel[i] < b)) return false;
  }
  return true;
}

// The observation names: qpos[1:] by joint (the root's z and angle), then their velocities.
std::vector<std::string> names_of(const std::vector<std::string>& joints, bool positions_only) {
  std::vector<std::string> out(joints.begin() + 1, joints.end());
  if (!positions_only)
    for (const auto& j : joints) out.push_back("v_" + j);
  return out;
}

EnvironmentDefinition define(const std::string& name, const std::string& description,
                             const std::vector<std::string>& joints, int frame_skip,
                             const Locomotion& p, double ref_min, double ref_max,
                             std::vector<double> targets, bool positions_only) {
  EnvironmentDefinition d;
  d.name = positions_only ? name + "-po" : name;
  d.base = name;
  d.family = "locomotion";
  d.description =
      positions_only ? description + ", positions only (velocities hidden)" : description;
  d.model_file = "environments/" + name + ".xml";
  d.nq = d.nv = static_cast<int>(joints.size());
  d.obs_dim = positions_only ? d.nq - 1 : d.nq - 1 + d.nv;
  d.act_dim = d.nq - 3;
  d.frame_skip = frame_skip;
  d.max_episode_steps = 1000;
  d.observation_names = names_of(joints, positions_only);
  d.first_velocity = positions_only ? d.obs_dim : d.nq - 1;
  d.ref_min_score = ref_min, d.ref_max_score = ref_max;
  d.default_targets = std::move(targets);
  d.positions_only = positions_only;
  d.camera.distance = name == "halfcheetah" ? 5.0 : 4.0;

  d.reset = [p](Simulation& sim, Random& random) {
    const mjModel* m = sim.model;
    for (int i = 0; i < m->nq; ++i)
      sim.data->qpos[i] = m->qpos0[i] + random.uniform(-p.qpos_noise, p.qpos_noise);
    for (int i = 0; i < m->nv; ++i)
      sim.data->qvel[i] = p.normal_qvel_noise ? p.qvel_noise * random.normal()
                                              : random.uniform(-p.qvel_noise, p.qvel_noise);
  };
  d.observe = [p, positions_only](const Simulation& sim, std::span<float> obs) {
    const mjModel* m = sim.model;
    int k = 0;
    for (int i = 1; i < m->nq; ++i) obs[k++] = static_cast<float>(sim.data->qpos[i]);
    if (positions_only) return;
    for (int i = 0; i < m->nv; ++i) {
      const double v = sim.data->qvel[i];
      obs[k++] = static_cast<float>(p.clip_qvel ? std::clamp(v, -10.0, 10.0) : v);
    }
  };
  d.outcome = [p, frame_skip](const Simulation& sim, const StepContext& step) {
    double control = 0.0;
    for (const float a : step.action) control += static_cast<double>(a) * a;
    const double dt = sim.model->opt.timestep * frame_skip;
    StepResult r;
    r.reward = p.forward_weight * (sim.data->qpos[0] - step.qpos_before[0]) / dt +
               p.healthy_reward - p.ctrl_cost * control;
    r.terminated = p.terminates && !healthy(p, sim.model, sim.data);
    return r;
  };
  d.healthy = [p](const Simulation& sim) { return healthy(p, sim.model, sim.data); };
  return d;
}

}  // namespace

std::vector<EnvironmentDefinition> locomotion_environments() {
  Locomotion hopper;
  hopper.healthy_reward = 1.0, hopper.ctrl_cost = 1e-3;
  hopper.clip_qvel = true, hopper.terminates = true;
  hopper.min_z = 0.7, hopper.max_z = kInf, hopper.min_angle = -0.2, hopper.max_angle = 0.2;
  hopper.state_bound = 100.0;
  hopper.qpos_noise = 5e-3, hopper.qvel_noise = 5e-3;

  Locomotion walker = hopper;
  walker.min_z = 0.8, walker.max_z = 2.0, walker.min_angle = -1.0, walker.max_angle = 1.0;
  walker.state_bound = 0.0;

  Locomotion cheetah;
  cheetah.ctrl_cost = 0.1;
  cheetah.qpos_noise = 0.1, cheetah.qvel_noise = 0.1, cheetah.normal_qvel_noise = true;

  const std::vector<std::string> hopper_joints = {"rootx", "rootz", "rooty",
                                                  "thigh", "leg",   "foot"};
  const std::vector<std::string> walker_joints = {
      "rootx", "rootz", "rooty", "thigh", "leg", "foot", "thigh_left", "leg_left", "foot_left"};
  const std::vector<std::string> cheetah_joints = {"rootx", "rootz",  "rooty", "bthigh", "bshin",
                                                   "bfoot", "fthigh", "fshin", "ffoot"};
  std::vector<EnvironmentDefinition> all;
  for (const bool po : {false, true}) {
    all.push_back(define("hopper", "Gym's Hopper-v3: a one-legged hopper, forward speed",
                         hopper_joints, 4, hopper, -20.272305, 3234.3, {3600.0, 1800.0}, po));
    all.push_back(define("walker2d", "Gym's Walker2d-v3: a biped walker, forward speed",
                         walker_joints, 4, walker, 1.629008, 4592.3, {5000.0, 2500.0}, po));
    all.push_back(define("halfcheetah", "Gym's HalfCheetah-v3: a planar cheetah, forward speed",
                         cheetah_joints, 5, cheetah, -280.178953, 12135.0, {12000.0, 6000.0}, po));
  }
  return all;
}

}  // namespace dstudio::env
