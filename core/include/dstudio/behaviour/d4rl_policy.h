#pragma once
/// \file
/// The behaviour policy a D4RL expert file carries in `metadata/policy/` (D4RL's
/// scripts/generation/hand_dapg_policies.py, extract_params): the DAPG expert's layers
/// `fc0/{weight,bias}`, `fc1/...`, `last_fc/...`, torch's (out, in) weights, with mjrl's input
/// scaling folded into fc0 (W diag(1/in_scale), b - W' in_shift) and its output scaling into
/// last_fc, and `nonlinearity` ("tanh") on the hidden layers. The file keeps no log standard
/// deviation: `last_fc_log_std/{weight,bias}` is a copy of last_fc, so what such a file defines is
/// the policy's mean action, and that is what plays. The fold leaves out mjrl's 1e-8 on in_scale,
/// so the file's policy agrees with the pickle's to float32 rounding, and exactly where the
/// scaling is 1 and 0 (pen).

#include <string>

#include "dstudio/behaviour/mlp_policy.h"
#include "dstudio/data/dataset.h"

namespace dstudio::behaviour {

/// Whether the dataset has anything under metadata/policy/ that looks like a layer.
[[nodiscard]] bool has_d4rl_policy(const data::Dataset& dataset);

/// The file's policy as an MlpPolicy (in_shift 0, in_scale 1, out_scale 1, out_shift 0, log_std
/// 0: the file has none). Checks every layer against the one before, the first against the
/// dataset's observations and the last against its actions, and the nonlinearity; throws Error
/// "<file>: 'metadata/policy/<key>': <what is wrong>" for a missing layer, a weight that is not
/// (out, in), a bias that is not (out), a value that is not finite (which the loader left out
/// with a warning it quotes).
[[nodiscard]] MlpPolicy d4rl_policy(const data::Dataset& dataset);

/// What `dataset info` says of the file's policy: its sizes ("tanh MLP 39 -> 32 -> 32 -> 28"),
/// the known quirk when last_fc_log_std is a copy of last_fc, or why it is refused.
struct D4rlPolicySummary {
  bool present = false;
  bool usable = false;
  std::string sizes;    ///< "tanh MLP 39 -> 32 -> 32 -> 28"
  std::string quirk;    ///< empty, or what last_fc_log_std holds
  std::string refusal;  ///< why the policy cannot play, when !usable
};
[[nodiscard]] D4rlPolicySummary summarize_d4rl_policy(const data::Dataset& dataset);

/// A behaviour policy named as the viewers take it, for the Adroit task `task`: "dapg" (the
/// shipped DAPG expert, shipped_dapg_policy), a D4RL file with metadata/policy (`.hdf5`, read in
/// the reader process), or a dstudio-mlp-policy-1 JSON file. Throws UsageError or Error naming
/// what does not fit, including a policy whose sizes are not the task's.
[[nodiscard]] MlpPolicy load_behaviour_policy(const std::string& name, const std::string& task);

}  // namespace dstudio::behaviour
