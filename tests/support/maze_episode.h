#pragma once
/// \file
/// An AntMaze dataset for the viewers' tests, made with the umaze's own physics: one episode of
/// uniformly random actions towards the goal its reset drew (kept as `infos/goal`), written in
/// D4RL's layout and ended by a timeout. The viewers draw the maze, the goal, the navigator's
/// waypoint and the path from it without a goal-reacher or a trained policy.

#include <cstdint>
#include <filesystem>
#include <vector>

#include "dstudio/common/random.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/env/environment.h"

namespace dstudio::test {

/// Writes `steps` transitions of antmaze-umaze-v2 (reset with `seed`) to `path`.
inline void write_maze_episode(const std::filesystem::path& path, int steps,
                               std::uint64_t seed = 4) {
  env::Environment e("antmaze-umaze-v2");
  const auto& spec = e.spec();
  data::TransitionArrays a;
  a.obs_dim = spec.obs_dim, a.act_dim = spec.act_dim;
  a.qpos_dim = spec.nq, a.qvel_dim = spec.nv, a.goal_dim = spec.task_state_size;
  std::vector<float> obs(static_cast<std::size_t>(spec.obs_dim));
  std::vector<float> action(static_cast<std::size_t>(spec.act_dim));
  e.reset(seed, obs);
  Random random(seed);
  for (int t = 0; t < steps; ++t) {
    a.observations.insert(a.observations.end(), obs.begin(), obs.end());
    for (const double q : e.qpos()) a.qpos.push_back(static_cast<float>(q));
    for (const double v : e.qvel()) a.qvel.push_back(static_cast<float>(v));
    for (const double g : e.task_state()) a.goals.push_back(static_cast<float>(g));
    for (auto& u : action) u = static_cast<float>(random.uniform(-1.0, 1.0));
    const auto r = e.step(action, obs);
    a.actions.insert(a.actions.end(), action.begin(), action.end());
    a.next_observations.insert(a.next_observations.end(), obs.begin(), obs.end());
    a.rewards.push_back(static_cast<float>(r.reward));
    a.terminals.push_back(r.terminated ? 1 : 0);
    a.timeouts.push_back(t + 1 == steps && !r.terminated ? 1 : 0);
    if (r.terminated) break;
  }
  data::write_d4rl(path, a, {{"env", "antmaze-umaze-v2"}});
}

}  // namespace dstudio::test
