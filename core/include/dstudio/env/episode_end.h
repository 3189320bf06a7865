// Why an episode ended, in the words the viewers show under the scene.

#pragma once

#include <string>

#include "dstudio/env/environment.h"

namespace dstudio::env {

/// What ended an episode of `task`: "time limit" when it reached its horizon (`terminated`
/// false), otherwise what ends the task's episodes: "the body left its healthy range" (the
/// locomotion tasks), "goal reached" (AntMaze), "the pen dropped" (pen), "every element done"
/// (the kitchen), "the task ended it" (a plugin's task).
std::string episode_end_reason(const EnvironmentDefinition& task, bool terminated);

}  // namespace dstudio::env
