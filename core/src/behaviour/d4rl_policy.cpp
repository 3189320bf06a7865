// A D4RL expert file's metadata/policy as a playable policy. See d4rl_policy.h.

#include "dstudio/behaviour/d4rl_policy.h"

#include <algorithm>
#include <filesystem>

#include "dstudio/common/error.h"
#include "dstudio/common/read_file.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/env/environment.h"

namespace dstudio::behaviour {
namespace {

const std::string kPrefix = "metadata/";

bool listed(const data::Dataset& ds, const std::string& key) {
  return std::any_of(ds.arrays.begin(), ds.arrays.end(),
                     [&](const data::ArrayInfo& a) { return a.key == kPrefix + key; });
}

[[noreturn]] void refuse(const data::Dataset& ds, const std::string& key,
                         const std::string& problem) {
  throw Error(ds.path + ": '" + kPrefix + key + "': " + problem);
}

// The array `key` ("policy/fc0/weight"), or a refusal saying why it is not there.
const data::MetadataArray& array(const data::Dataset& ds, const std::string& key) {
  if (const auto it = ds.metadata_arrays.find(key); it != ds.metadata_arrays.end())
    return it->second;
  if (listed(ds, key)) {
    // The loader left it out; its warning says why (a value that is not finite, a damaged type).
    for (const auto& w : ds.warnings)
      if (w.find("'" + kPrefix + key + "'") != std::string::npos)
        refuse(ds, key, "cannot be read (" + w + ")");
    refuse(ds, key, "is not an array of floats");
  }
  refuse(ds, key,
         "is missing; a D4RL policy has fc0, fc1, ... and last_fc, each a weight and a bias");
}

MlpLayer layer(const data::Dataset& ds, const std::string& name, int in) {
  const auto& w = array(ds, "policy/" + name + "/weight");
  const auto& b = array(ds, "policy/" + name + "/bias");
  if (w.shape.size() != 2 || w.shape[0] < 1 || w.shape[1] < 1)
    refuse(ds, "policy/" + name + "/weight",
           "is not a matrix (out, in): it has " + std::to_string(w.shape.size()) + " dimensions");
  if (w.shape[1] != in)
    refuse(ds, "policy/" + name + "/weight",
           "takes " + std::to_string(w.shape[1]) + " inputs, but " +
               (name == "fc0" ? "the observations have " : "the layer before gives ") +
               std::to_string(in));
  if (b.shape.size() != 1 || b.shape[0] != w.shape[0])
    refuse(ds, "policy/" + name + "/bias",
           "must be a vector of " + std::to_string(w.shape[0]) + " (the weight's rows)");
  MlpLayer l;
  l.in = static_cast<int>(w.shape[1]);
  l.out = static_cast<int>(w.shape[0]);
  l.weight = w.values;
  l.bias = b.values;
  return l;
}

}  // namespace

bool has_d4rl_policy(const data::Dataset& dataset) {
  return std::any_of(dataset.arrays.begin(), dataset.arrays.end(), [](const data::ArrayInfo& a) {
    return a.key.starts_with("metadata/policy/") && a.key.ends_with("/weight");
  });
}

MlpPolicy d4rl_policy(const data::Dataset& ds) {
  if (!has_d4rl_policy(ds))
    throw Error(ds.path + ": has no behaviour policy (no metadata/policy/fc0/weight)");
  const int obs_dim = static_cast<int>(ds.data.obs_dim),
            act_dim = static_cast<int>(ds.data.act_dim);
  MlpPolicy p;
  p.obs_dim = obs_dim;
  p.act_dim = act_dim;
  const auto task = ds.env_id.empty() ? std::shared_ptr<const env::EnvironmentDefinition>()
                                      : env::find_task(ds.env_id);
  p.task = task ? task->name : ds.env_id;
  const auto algorithm = ds.metadata.find("algorithm");
  p.source = std::filesystem::path(ds.path).filename().string() + "'s metadata/policy" +
             (algorithm != ds.metadata.end() ? " (" + algorithm->second + ")" : std::string()) +
             "; its mean action (the file keeps no log standard deviation)";
  if (const auto it = ds.metadata.find("policy/nonlinearity"); it != ds.metadata.end())
    p.nonlinearity = it->second;
  if (p.nonlinearity != "tanh" && p.nonlinearity != "relu")
    refuse(ds, "policy/nonlinearity",
           "is \"" + p.nonlinearity + "\"; the studio plays tanh or relu");
  int width = obs_dim;
  for (int k = 0; k == 0 || listed(ds, "policy/fc" + std::to_string(k) + "/weight"); ++k) {
    p.layers.push_back(layer(ds, "fc" + std::to_string(k), width));
    width = p.layers.back().out;
  }
  p.layers.push_back(layer(ds, "last_fc", width));
  if (p.layers.back().out != act_dim)
    refuse(ds, "policy/last_fc/weight",
           "gives " + std::to_string(p.layers.back().out) + " actions, but the actions have " +
               std::to_string(act_dim));
  p.in_shift.assign(static_cast<std::size_t>(obs_dim), 0.0f);
  p.in_scale.assign(static_cast<std::size_t>(obs_dim), 1.0f);
  p.out_shift.assign(static_cast<std::size_t>(act_dim), 0.0f);
  p.out_scale.assign(static_cast<std::size_t>(act_dim), 1.0f);
  p.log_std.assign(static_cast<std::size_t>(act_dim), 0.0f);
  try {
    p.validate();
  } catch (const Error& e) {
    throw Error(ds.path + ": metadata/policy: " + e.what());
  }
  return p;
}

D4rlPolicySummary summarize_d4rl_policy(const data::Dataset& ds) {
  D4rlPolicySummary s;
  s.present = has_d4rl_policy(ds);
  if (!s.present) return s;
  try {
    const auto p = d4rl_policy(ds);
    s.usable = true;
    s.sizes = p.nonlinearity + " MLP " + std::to_string(p.obs_dim);
    for (const auto& l : p.layers) s.sizes += " -> " + std::to_string(l.out);
  } catch (const Error& e) {
    s.refusal = e.what();
  }
  const auto copy = [&](const std::string& part) {
    const auto a = ds.metadata_arrays.find("policy/last_fc/" + part);
    const auto b = ds.metadata_arrays.find("policy/last_fc_log_std/" + part);
    return a != ds.metadata_arrays.end() && b != ds.metadata_arrays.end() && a->second == b->second;
  };
  if (copy("weight") && copy("bias"))
    s.quirk =
        "metadata/policy/last_fc_log_std is a copy of last_fc (D4RL's extract_params), not the "
        "policy's log standard deviation: the file defines the mean action, and that is what "
        "plays";
  return s;
}

MlpPolicy load_behaviour_policy(const std::string& name, const std::string& task) {
  const auto& spec = env::task(task);
  MlpPolicy p;
  if (name == "dapg") {
    p = shipped_dapg_policy(spec.name);
  } else {
    const std::filesystem::path path(name);
    if (!std::filesystem::exists(path))
      throw UsageError(name + ": no such file (a behaviour policy is dapg, a D4RL file with " +
                       "metadata/policy, or a policy JSON)");
    if (path.extension() == ".json") {
      p = mlp_policy_from_json_text(read_regular_file(path, 64u << 20), name);
    } else {
      const auto ds = data::load_dataset(name, {.isolate = true});
      p = d4rl_policy(ds);
    }
  }
  if (p.obs_dim != spec.obs_dim || p.act_dim != spec.act_dim)
    throw UsageError(name + ": a policy of " + std::to_string(p.obs_dim) + " observations and " +
                     std::to_string(p.act_dim) + " actions; " + spec.name + " has " +
                     std::to_string(spec.obs_dim) + " and " + std::to_string(spec.act_dim));
  if (p.task.empty()) p.task = spec.name;
  return p;
}

}  // namespace dstudio::behaviour
