#pragma once
// JSON of behaviour policies, shared by the policy files and the SAC run folders.

#include <nlohmann/json.hpp>

#include "dstudio/behaviour/gaussian_policy.h"
#include "dstudio/behaviour/policy_set.h"

namespace dstudio::behaviour {

nlohmann::ordered_json policy_to_json(const GaussianPolicy& policy);
/// Throws Error "<where>: <key> ..." for a missing or wrong field.
GaussianPolicy policy_from_json(const nlohmann::ordered_json& j, const std::string& where);
nlohmann::ordered_json policy_set_to_json(const PolicySet& set);
/// `chosen`: medium, expert and replay must be valid (a shipped set); a run's curve has none yet.
/// Throws Error "a behaviour-policy file with a missing or wrong field: <key> ...".
PolicySet policy_set_from_json(const nlohmann::ordered_json& j, bool chosen);

}  // namespace dstudio::behaviour
