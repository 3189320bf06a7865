#pragma once
// The studio's own environments, each family in its own file and written as a plugin writes one:
// definitions whose functions hold the task. environments() registers them on first use.

#include <vector>

#include "dstudio/env/environment.h"

namespace dstudio::env {

/// Hopper, Walker2d and HalfCheetah as Gym's v3 tasks, and their "-po" views (locomotion.cpp).
std::vector<EnvironmentDefinition> locomotion_environments();
/// D4RL's six antmaze-*-v2 tasks (antmaze.cpp).
std::vector<EnvironmentDefinition> antmaze_environments();
/// D4RL's Adroit hand tasks (adroit.cpp).
std::vector<EnvironmentDefinition> adroit_environments();
/// D4RL's Franka Kitchen tasks: kitchen-complete-v0, kitchen-partial-v0, kitchen-mixed-v0
/// (kitchen.cpp).
std::vector<EnvironmentDefinition> kitchen_environments();

}  // namespace dstudio::env
