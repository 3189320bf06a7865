#pragma once
/// \file
/// Which target returns to condition a model on. The papers' reference targets belong to the
/// D4RL data they trained on; a model trained on weaker data is better started from what its
/// data reached. The window offers both, and says which one is in use.

#include <string>
#include <vector>

#include "dstudio/env/environment.h"

namespace dstudio::models {

/// The largest target return (in magnitude) a viewer is asked for, from a workspace or the
/// command line: far beyond any task's returns, yet a number a slider can hold.
inline constexpr double kMaxTargetReturn = 1e6;

/// One target return on offer.
struct TargetChoice {
  double value = 0.0;
  std::string label;  ///< e.g. "task reference 3600", "data's best episode 1305"
};

/// The targets to offer for a model of `task` trained on data whose complete episodes returned
/// `returns`: the first is the default. It is the task's first reference target when the data
/// reach at least half of it; otherwise the data's best episode, since a reference far beyond
/// anything in the data asks for a return the model never saw. Then the other reference targets
/// and the data's best, 90th percentile and median episode returns (those the data have), without
/// repeats.
std::vector<TargetChoice> target_choices(const env::EnvironmentDefinition& task,
                                         std::vector<double> returns);

}  // namespace dstudio::models
