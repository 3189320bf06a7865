#pragma once
/// \file
/// What D4RL's kitchen tasks (kitchen-complete-v0, kitchen-partial-v0, kitchen-mixed-v0) define
/// beyond an environment's step: the task's elements and the relabelled reward D4RL's datasets
/// carry, and the extra observation D4RL's demonstration playback draws between steps.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dstudio/env/environment.h"

namespace dstudio::env::kitchen {

/// The four elements of a kitchen task, in D4RL's order ("microwave", "kettle", "light switch",
/// "slide cabinet" for complete and partial). Throws EnvError for a task that is not a kitchen's.
std::vector<std::string> task_elements(std::string_view task);

/// How many of the task's elements are within 0.3 (BONUS_THRESH) of their goals in a 60-D
/// observation: the reward of D4RL's kitchen datasets, relabelled with completed elements kept
/// (REMOVE_TASKS_WHEN_COMPLETE = False), a count at every step.
int elements_at_goal(std::string_view task, std::span<const float> observation);

/// Draws a new noisy observation of the environment's current state, as a call of D4RL's
/// KitchenV0._get_obs() does: 60 uniforms from the episode's noise stream, the noisy qpos made
/// the controller's reference (the last observation). D4RL's playback of a demonstration calls
/// it before every step. Throws EnvError when `env` is not a kitchen task.
void observe_again(Environment& env);

}  // namespace dstudio::env::kitchen
