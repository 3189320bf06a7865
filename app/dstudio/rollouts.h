#pragma once
// Rollouts from the command line: run with a progress bar and Ctrl-C, and their JSON summary.
// Shared by `dstudio eval` and the analyses that act in the environment.

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "dstudio/models/evaluation.h"

namespace dstudio::cli {

/// Runs `work` with a terminal progress bar labelled `label`; Ctrl-C cancels it (throws Cancelled).
void run_interruptible(const std::string& label, const std::function<void(const Progress&)>& work);
/// Runs models::rollout with a terminal progress bar; Ctrl-C cancels (throws Cancelled).
models::RolloutResult run_rollout(const std::string& checkpoint,
                                  const models::RolloutConfig& config, const std::string& label);

/// {"env", "targets": [{"target", "episodes", "mean_return", "std_return", "mean", "std"}],
/// "episodes": [{"target", "seed", "return", "score", "length", "terminated"}], "seconds",
/// "env_steps"}; "mean" and "std" are normalised scores.
nlohmann::ordered_json rollout_summary_json(const models::RolloutResult& result);

/// "none", "rtg", "states", "actions"; throws UsageError otherwise.
models::ModalityZeroing parse_zeroing(const std::string& name);

}  // namespace dstudio::cli
