#pragma once
/// \file
/// AntMaze datasets made the way D4RL made them (scripts/generation/generate_ant_maze_datasets.py
/// and relabel_antmaze_rewards.py), with the studio's own goal-reaching ant:
///
/// - a navigator (env/antmaze.h) finds the next cell towards the episode's goal by breadth-first
///   search and hands the goal-reacher a waypoint: that cell's centre plus U(0, 1) noise, drawn
///   anew at every step, or the goal itself once in the goal's cell;
/// - the goal-reacher sees qpos[2:15], qvel and the waypoint's direction rescaled to length 10;
///   its action is sampled from its own distribution (rlkit's exploration policy, as D4RL's
///   script loads it), then N(0, 0.2^2) noise is added and the result clipped to [-1, 1];
/// - an episode runs until D4RL's `ts >= 1000` timeout (1001 transitions), then the ant is reset
///   and a new goal drawn; "play" and "diverse" tasks start anywhere free (multistart);
/// - rewards are relabelled against the task's fixed evaluation goal: 1 when the next
///   observation's x, y is within 0.5 of it; terminals equal rewards.
///
/// Episodes draw from seeds derived from the dataset seed and their index and land at fixed
/// offsets, so the same arguments give the same bytes at any thread count.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "dstudio/behaviour/gaussian_policy.h"
#include "dstudio/behaviour/generate.h"
#include "dstudio/common/progress.h"

namespace dstudio::behaviour {

/// The goal-reacher's training task (behaviour::training_task) and the name its policies ship as.
inline constexpr const char* kGoalReacherTask = "ant-goal-reaching";
/// The task it is refined on after that one (env::antmaze::goal_sequence_definition).
inline constexpr const char* kGoalReacherRefinedTask = "ant-goal-sequence";

/// Whether policies of `env` are a goal-reacher's (either of its tasks).
inline bool is_goal_reacher_task(std::string_view env) {
  return env == kGoalReacherTask || env == kGoalReacherRefinedTask;
}

/// The controller's targets: the share of episodes in which the navigator and the goal-reacher's
/// mean action reach the evaluation goal, one maze of each size.
inline constexpr std::pair<const char*, double> kControllerTargets[] = {
    {"antmaze-umaze-v2", 0.9}, {"antmaze-medium-play-v2", 0.8}, {"antmaze-large-play-v2", 0.7}};

struct AntMazeDataConfig {
  std::string task;                      ///< antmaze-umaze-v2, ...
  std::int64_t transitions = 1'000'000;  ///< D4RL's num_samples
  int max_episode_steps = 1000;          ///< D4RL's timeout: ts >= this ends an episode
  double action_noise = 0.2;             ///< std of the Gaussian added to every action
  bool sampled = true;  ///< sample the goal-reacher's action (D4RL), or take its mean
  std::uint64_t seed = 0;
  int threads = 2;
};

/// Collects and relabels one AntMaze dataset with `goal_reacher`. Cancellable through `progress`.
GeneratedDataset generate_antmaze_dataset(const AntMazeDataConfig& config,
                                          const GaussianPolicy& goal_reacher,
                                          const Progress& progress = {});

/// How often the navigator and goal-reacher without the collection's noise reach the evaluation
/// goal of `task` (the task's own reset and v2 goal) within its horizon: the goal-reacher's action
/// sampled from its own distribution, as the data is made (`sampled`), or its mean action.
struct NavigationResult {
  bool sampled = true;
  int episodes = 0;
  int successes = 0;
  double mean_steps_to_goal = 0.0;  ///< over the successful episodes
  int upturned = 0;                 ///< failed episodes that ended with the ant on its back
  [[nodiscard]] double rate() const { return episodes ? double(successes) / episodes : 0.0; }
};
NavigationResult navigation_success(const std::string& task, const GaussianPolicy& goal_reacher,
                                    int episodes, std::uint64_t seed, int threads = 2,
                                    const Progress& progress = {}, bool sampled = true);

/// "93 of 100 episodes reach the goal within 700 steps (mean 312 steps; ...)":
/// what a dataset's metadata and `dataset info` say of its controller.
std::string controller_success_text(const std::string& task, const NavigationResult& result);

/// The goal-reacher of the policies in `path` (`behaviour ship` of an ant-goal-reaching run: its
/// expert snapshot), or with an empty path the shipped one
/// (resources/policies/ant-goal-reaching-sac.json). Throws Error naming the file when it cannot
/// be read or holds another task's policies, or when none ships.
GaussianPolicy load_goal_reacher(const std::string& path = {});
/// load_goal_reacher() of the shipped policies.
GaussianPolicy shipped_goal_reacher();

}  // namespace dstudio::behaviour
