#pragma once
/// \file
/// What each action dimension of a task moves, by the name of its actuated joint: the words a
/// figure puts on a per-joint axis ("thigh", "leg", "foot" for the hopper) instead of j1, j2, j3.

#include <string>
#include <string_view>
#include <vector>

namespace dstudio::env {

/// The task's action dimensions in actuator order, each named by the joint its actuator drives
/// without a "_joint" ending (hopper: thigh, leg, foot; walker2d: thigh, leg, foot, thigh_left,
/// leg_left, foot_left; halfcheetah: bthigh, bshin, bfoot, fthigh, fshin, ffoot). Read from the
/// task's compiled model. Throws EnvError for an unknown task.
std::vector<std::string> action_names(std::string_view task);

/// action_names(task) when the task is known and has `count` actions; otherwise "joint 1" ...
/// "joint <count>", so a model of an environment the studio does not simulate still has names.
std::vector<std::string> action_names_or_numbers(std::string_view task, int count);

}  // namespace dstudio::env
