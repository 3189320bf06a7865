// An environment: a pole on a cart that a motor pushes along a rail, after Gym's
// InvertedPendulum-v2. The observation is the cart's position, the pole's angle and their
// velocities; the reward is 1 for every step the pole stays within 0.2 rad of upright, where the
// episode ends otherwise. It shows what a plugin writes to add an environment: the model, the
// numbers every view reads, and the four functions that are the task.

#include <dstudio/plugins/plugin.h>
#include <mujoco/mujoco.h>

#include <cmath>

namespace {

using namespace dstudio;

constexpr const char* kModel = R"(<mujoco model="inverted-pendulum">
  <compiler inertiafromgeom="true"/>
  <default>
    <joint armature="0" damping="1" limited="true"/>
    <geom contype="0" friction="1 0.1 0.1" rgba="0.7 0.7 0 1"/>
  </default>
  <option gravity="0 0 -9.81" integrator="RK4" timestep="0.02"/>
  <worldbody>
    <light pos="0 0 3" dir="0 0 -1"/>
    <geom name="floor" type="plane" pos="0 0 -0.5" size="4 4 0.1" rgba="0.8 0.9 0.8 1"/>
    <geom name="rail" pos="0 0 0" quat="0.707 0 0.707 0" rgba="0.3 0.3 0.7 1" size="0.02 1" type="capsule"/>
    <body name="cart" pos="0 0 0">
      <joint axis="1 0 0" name="slider" pos="0 0 0" range="-1 1" type="slide"/>
      <geom name="cart" pos="0 0 0" quat="0.707 0 0.707 0" size="0.1 0.1" type="capsule"/>
      <body name="pole" pos="0 0 0">
        <joint axis="0 1 0" name="hinge" pos="0 0 0" range="-90 90" type="hinge"/>
        <geom fromto="0 0 0 0.001 0 0.6" name="pole" rgba="0 0.7 0.7 1" size="0.049 0.3" type="capsule"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor ctrllimited="true" ctrlrange="-3 3" gear="100" joint="slider" name="slide"/>
  </actuator>
</mujoco>
)";

bool upright(const env::Simulation& sim) {
  for (int i = 0; i < sim.model->nq; ++i)
    if (!std::isfinite(sim.data->qpos[i])) return false;
  return std::abs(sim.data->qpos[1]) <= 0.2;
}

env::EnvironmentDefinition inverted_pendulum() {
  env::EnvironmentDefinition d;
  d.name = "inverted-pendulum";
  d.family = "classic control";
  d.description = "A pole balanced on a cart (after Gym's InvertedPendulum-v2)";
  d.model_xml = kModel;
  d.obs_dim = 4, d.act_dim = 1, d.nq = 2, d.nv = 2;
  d.frame_skip = 2;
  d.max_episode_steps = 1000;
  d.observation_names = {"cart", "angle", "v_cart", "v_angle"};
  d.first_velocity = 2;
  d.ref_min_score = 0.0, d.ref_max_score = 1000.0;
  d.rtg_scale = 100.0;
  d.default_targets = {1000.0, 500.0};
  d.camera.distance = 2.5;
  d.camera.track = false;
  // Gym's reset: qpos0 and zero velocity, each plus U(-0.01, 0.01).
  d.reset = [](env::Simulation& sim, Random& random) {
    for (int i = 0; i < sim.model->nq; ++i)
      sim.data->qpos[i] = sim.model->qpos0[i] + random.uniform(-0.01, 0.01);
    for (int i = 0; i < sim.model->nv; ++i) sim.data->qvel[i] = random.uniform(-0.01, 0.01);
  };
  d.observe = [](const env::Simulation& sim, std::span<float> obs) {
    obs[0] = static_cast<float>(sim.data->qpos[0]);
    obs[1] = static_cast<float>(sim.data->qpos[1]);
    obs[2] = static_cast<float>(sim.data->qvel[0]);
    obs[3] = static_cast<float>(sim.data->qvel[1]);
  };
  d.outcome = [](const env::Simulation& sim, const env::StepContext&) {
    env::StepResult r;
    r.reward = 1.0;
    r.terminated = !upright(sim);
    return r;
  };
  d.healthy = upright;
  return d;
}

}  // namespace

DSTUDIO_PLUGIN("inverted-pendulum", "1.0.0", "A pole on a cart, as an environment") {
  registrar.add_environment(inverted_pendulum());
}
