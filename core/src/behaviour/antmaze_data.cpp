// AntMaze datasets as D4RL made them. See antmaze_data.h.

#include "dstudio/behaviour/antmaze_data.h"

#include <mujoco/mujoco.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>

#include "dstudio/behaviour/policy_set.h"
#include "dstudio/common/error.h"
#include "dstudio/common/random.h"
#include "dstudio/common/system_info.h"
#include "dstudio/env/antmaze.h"
#include "dstudio/env/environment.h"
#include "for_each_episode.h"

namespace dstudio::behaviour {
namespace {

using env::antmaze::Point;

constexpr std::uint64_t kNavigationSalt = 0xA11A3E0ULL;

// The goal-reacher's action towards `waypoint` from the environment's state.
void reach(const GaussianPolicy& policy, const env::Environment& e, Point waypoint, bool sampled,
           Random& random, std::span<float> input, std::span<float> action) {
  env::antmaze::goal_reacher_input(e.qpos(), e.qvel(), waypoint, input);
  if (sampled)
    policy.sample(input, action, random);
  else
    policy.act(input, action);
}

Point xy_of(const env::Environment& e) {
  return {e.qpos()[0], e.qpos()[1]};
}

}  // namespace

GeneratedDataset generate_antmaze_dataset(const AntMazeDataConfig& config,
                                          const GaussianPolicy& goal_reacher,
                                          const Progress& progress) {
  const auto& spec = env::task(config.task);
  const auto maps = env::antmaze::task_maps(spec.name);
  if (config.transitions < 1) throw UsageError("a dataset needs at least one transition");
  if (config.max_episode_steps < 1) throw UsageError("an episode needs at least one step");
  goal_reacher.validate();
  if (goal_reacher.obs_dim != 29 || goal_reacher.act_dim != spec.act_dim)
    throw Error("the goal-reacher takes " + std::to_string(goal_reacher.obs_dim) +
                " inputs and gives " + std::to_string(goal_reacher.act_dim) +
                " actions; AntMaze needs 29 and 8");
  const Point evaluation_goal = env::antmaze::nominal_goal(*maps.evaluation);
  const env::ModelPtr model = env::load_model(spec);

  const std::int64_t n = config.transitions;
  const std::int64_t per_episode = config.max_episode_steps + 1;  // ts = 0 .. 1000
  const std::int64_t episodes = (n + per_episode - 1) / per_episode;
  const std::int64_t S = spec.obs_dim, A = spec.act_dim, Q = spec.nq, V = spec.nv;
  data::TransitionArrays d;
  d.obs_dim = S, d.act_dim = A, d.qpos_dim = Q, d.qvel_dim = V, d.goal_dim = 2;
  d.observations.resize(static_cast<std::size_t>(n * S));
  d.next_observations.resize(static_cast<std::size_t>(n * S));
  d.actions.resize(static_cast<std::size_t>(n * A));
  d.rewards.resize(static_cast<std::size_t>(n));
  d.terminals.resize(static_cast<std::size_t>(n));
  d.timeouts.resize(static_cast<std::size_t>(n));
  d.qpos.resize(static_cast<std::size_t>(n * Q));
  d.qvel.resize(static_cast<std::size_t>(n * V));
  d.goals.resize(static_cast<std::size_t>(n * 2));

  std::atomic<std::int64_t> done{0};
  std::mutex report_mutex;
  for_each_episode(episodes, config.threads, [&](std::int64_t k) {
    env::Environment e(spec, model);
    Random random(Random::derive(config.seed, static_cast<std::uint64_t>(k)));
    std::vector<float> obs(static_cast<std::size_t>(S)), next(obs.size()), input(29),
        action(static_cast<std::size_t>(A));
    // set_target_goal, then the reset; a multistart reset puts the ant on a random free cell.
    const Point goal = env::antmaze::sample_goal(*maps.generation, random);
    e.reset(random.next(), obs);
    const std::vector<double> goal_state = {goal[0], goal[1]};
    e.set_task_state(goal_state);
    if (maps.multistart) {
      const Point start = env::antmaze::sample_start(*maps.generation, random);
      std::vector<double> qpos(e.qpos().begin(), e.qpos().end());
      const std::vector<double> qvel(e.qvel().begin(), e.qvel().end());
      qpos[0] = start[0], qpos[1] = start[1];
      e.set_state(qpos, qvel);
      e.observe(obs);
    }
    const std::int64_t first = k * per_episode;
    const std::int64_t last = std::min(n, first + per_episode);
    for (std::int64_t row = first; row < last; ++row) {
      const auto waypoint = env::antmaze::navigate(*maps.generation, xy_of(e), goal, random);
      reach(goal_reacher, e, waypoint.xy, config.sampled, random, input, action);
      for (auto& a : action)
        a = static_cast<float>(
            std::clamp(static_cast<double>(a) + config.action_noise * random.normal(), -1.0, 1.0));
      // infos/qpos and infos/qvel hold the state the observation was taken at (docs say how
      // D4RL's own files differ).
      std::copy(e.qpos().begin(), e.qpos().end(), d.qpos.begin() + row * Q);
      std::copy(e.qvel().begin(), e.qvel().end(), d.qvel.begin() + row * V);
      e.step(action, next);
      std::copy(obs.begin(), obs.end(), d.observations.begin() + row * S);
      std::copy(next.begin(), next.end(), d.next_observations.begin() + row * S);
      std::copy(action.begin(), action.end(), d.actions.begin() + row * A);
      d.goals[static_cast<std::size_t>(row * 2)] = static_cast<float>(goal[0]);
      d.goals[static_cast<std::size_t>(row * 2 + 1)] = static_cast<float>(goal[1]);
      // relabel_antmaze_rewards.py: the evaluation goal, at the next observation.
      const bool reached = std::hypot(next[0] - evaluation_goal[0], next[1] - evaluation_goal[1]) <=
                           env::antmaze::kGoalRadius;
      d.rewards[static_cast<std::size_t>(row)] = reached ? 1.0f : 0.0f;
      d.terminals[static_cast<std::size_t>(row)] = reached;
      d.timeouts[static_cast<std::size_t>(row)] = row - first >= config.max_episode_steps;
      obs = next;
    }
    const std::int64_t now = done += last - first;
    std::lock_guard lock(report_mutex);
    progress.update(static_cast<double>(now) / static_cast<double>(n),
                    std::to_string(now) + " transitions");
  });

  GeneratedDataset out;
  out.metadata = {
      {"generator", "dstudio dataset generate"},
      {"env_id", spec.name},
      {"kind", "antmaze"},
      {"seed", std::to_string(config.seed)},
      {"transitions", std::to_string(n)},
      {"behaviour_policy",
       std::string("D4RL's navigator (breadth-first search over the maze's cells, waypoints with "
                   "U(0, 1) noise) driving the studio's goal-reaching ant (SAC), actions ") +
           (config.sampled ? "sampled" : "at the mean") + " plus N(0, " +
           std::to_string(config.action_noise) + "^2) noise"},
      {"behaviour_algorithm", "sac"},
      {"action_noise_std", std::to_string(config.action_noise)},
      {"collection_map", maps.generation->name},
      {"evaluation_map", maps.evaluation->name},
      {"multistart", maps.multistart ? "true" : "false"},
      {"reward_goal",
       std::to_string(evaluation_goal[0]) + " " + std::to_string(evaluation_goal[1])},
      {"rewards",
       "relabelled: 1 when the next observation's x, y is within 0.5 of the "
       "evaluation goal; terminals equal rewards; the episode goes on"},
      {"software", studio_version() + ", MuJoCo " + mj_versionString()},
  };
  out.arrays = std::move(d);
  return out;
}

NavigationResult navigation_success(const std::string& task, const GaussianPolicy& goal_reacher,
                                    int episodes, std::uint64_t seed, int threads,
                                    const Progress& progress, bool sampled) {
  const auto& spec = env::task(task);
  const auto maps = env::antmaze::task_maps(spec.name);
  if (episodes < 1) throw UsageError("a success rate needs at least one episode");
  goal_reacher.validate();
  const env::ModelPtr model = env::load_model(spec);
  std::vector<int> steps(static_cast<std::size_t>(episodes), 0);  // 0: not reached
  std::vector<char> upturned(static_cast<std::size_t>(episodes), 0);
  EpisodesFinished finished(episodes, progress);
  for_each_episode(episodes, threads, [&](std::int64_t k) {
    env::Environment e(spec, model);
    std::vector<float> obs(29), input(29), action(8);
    e.reset(Random::derive(seed, static_cast<std::uint64_t>(k)), obs);
    Random random(Random::derive(seed ^ kNavigationSalt, static_cast<std::uint64_t>(k)));
    const Point goal = {e.task_state()[0], e.task_state()[1]};
    for (;;) {
      const auto waypoint = env::antmaze::navigate(*maps.evaluation, xy_of(e), goal, random);
      reach(goal_reacher, e, waypoint.xy, sampled, random, input, action);
      const auto r = e.step(action, obs);
      if (r.success) steps[static_cast<std::size_t>(k)] = e.elapsed_steps();
      if (r.terminated || r.truncated) break;
    }
    upturned[static_cast<std::size_t>(k)] = env::antmaze::torso_up(e.qpos()) < 0.0;
    finished.count_one();
  });
  NavigationResult result;
  result.sampled = sampled;
  result.episodes = episodes;
  double total = 0.0;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    if (steps[k] > 0) ++result.successes, total += steps[k];
    if (steps[k] == 0 && upturned[k]) ++result.upturned;
  }
  result.mean_steps_to_goal = result.successes ? total / result.successes : 0.0;
  return result;
}

std::string controller_success_text(const std::string& task, const NavigationResult& r) {
  char text[320];
  std::snprintf(text, sizeof text,
                "%d of %d episodes reach the goal within %d steps (mean %.0f steps; the navigator "
                "and the goal-reacher's %s, without the collection's noise)",
                r.successes, r.episodes, env::task(task).max_episode_steps, r.mean_steps_to_goal,
                r.sampled ? "sampled actions" : "mean action");
  std::string out = text;
  if (r.upturned > 0)
    out += "; " + std::to_string(r.upturned) + " of the " +
           std::to_string(r.episodes - r.successes) +
           " that do not reach it end with the ant on its back";
  return out;
}

GaussianPolicy load_goal_reacher(const std::string& path) {
  const PolicySet set = path.empty() ? shipped_policy_set(kGoalReacherTask, PolicyAlgorithm::Sac)
                                     : read_policy_set(path, 0.0);
  const std::string where = path.empty() ? std::string("the shipped goal-reacher") : path;
  if (!is_goal_reacher_task(set.env) || set.expert < 0 ||
      !std::holds_alternative<GaussianPolicy>(
          set.snapshots[static_cast<std::size_t>(set.expert)].policy))
    throw UsageError(where + ": not a goal-reacher's policies (" + set.env +
                     "); they come from dstudio behaviour sac --env ant-goal-reaching");
  return std::get<GaussianPolicy>(set.snapshots[static_cast<std::size_t>(set.expert)].policy);
}

GaussianPolicy shipped_goal_reacher() {
  return load_goal_reacher();
}

}  // namespace dstudio::behaviour
