#pragma once
/// \file
/// Which target returns to condition a model on. The papers' reference targets belong to the
/// D4RL data they trained on; a model trained on weaker data is better started from what its
/// data reached. The window offers both, and says which one is in use.
///
/// A model trained with a reward shift (TrainingConfig::reward_shift; IQL and CORL use -1 on
/// AntMaze) counts returns in its own units: every reward plus the shift. Its returns-to-go,
/// targets and the returns its targets are chosen from are in those units; scores and successes
/// stay the task's own.

#include <cstdint>
#include <string>
#include <vector>

#include "dstudio/env/environment.h"
#include "dstudio/models/checkpoint_info.h"

namespace dstudio::models {

/// The largest target return (in magnitude) a viewer is asked for, from a workspace or the
/// command line: far beyond any task's returns, yet a number a slider can hold.
inline constexpr double kMaxTargetReturn = 1e6;

/// One target return on offer.
struct TargetChoice {
  double value = 0.0;
  std::string label;  ///< e.g. "task reference 3600", "data's best episode 1305"
};

/// A step's reward as a model trained with `shift` counts it.
inline double model_reward(double reward, double shift) {
  return reward + shift;
}
/// An episode's return of `length` steps as a model trained with `shift` counts it.
inline double model_return(double episode_return, std::int64_t length, double shift) {
  return episode_return + shift * static_cast<double>(length);
}

/// The task's reference targets in the units of a model trained with `shift`: a goal-reaching
/// task's (the goal's reward) as the goal reached at the first step, 1 + shift; any other task's as
/// a full-length episode with that return, target + shift x max_episode_steps.
std::vector<double> reference_targets(const env::EnvironmentDefinition& task, double shift);
/// The first of reference_targets(task, shift); 0 for a task without reference targets.
double first_reference_target(const env::EnvironmentDefinition& task, double shift);
/// The first reference target of the checkpoint's task (hopper's when it names none), in its
/// model's units.
double default_target(const CheckpointInfo& info);
/// "" without a shift; otherwise what it means, for every place that shows such a model's
/// returns: "rewards shifted by -1 (returns-to-go and targets count r - 1 a step; scores are the
/// task's)".
std::string reward_shift_note(double shift);

/// The targets to offer for a model of `task` trained on data whose complete episodes returned
/// `returns` (in the model's units, model_return): the first is the default. It is the task's first
/// reference target when the data reach at least half of it; otherwise the data's best episode,
/// since a reference far beyond anything in the data asks for a return the model never saw. Then
/// the other reference targets and the data's best, 90th percentile and median episode returns
/// (those the data have), without repeats. With `shift`, the reference targets are
/// reference_targets(task, shift).
std::vector<TargetChoice> target_choices(const env::EnvironmentDefinition& task,
                                         std::vector<double> returns, double shift = 0.0);

}  // namespace dstudio::models
