#include "dstudio/env/compatibility.h"

#include <algorithm>
#include <string>

#include "dstudio/common/error.h"

namespace dstudio::env {

void check_dataset_matches(const data::Dataset& dataset, const EnvironmentDefinition& spec) {
  std::string problems;
  auto compare = [&](const char* what, std::int64_t have, int want) {
    if (have == want) return;
    problems += (problems.empty() ? "" : "; ") + std::string(what) + " " + std::to_string(have) +
                " but " + spec.name + " has " + std::to_string(want);
  };
  compare("observation dim", dataset.data.obs_dim, spec.obs_dim);
  compare("action dim", dataset.data.act_dim, spec.act_dim);
  if (dataset.data.qpos_dim > 0) compare("qpos dim", dataset.data.qpos_dim, spec.nq);
  if (dataset.data.qvel_dim > 0) compare("qvel dim", dataset.data.qvel_dim, spec.nv);
  if (!problems.empty())
    throw EnvError(dataset.path + ": does not match the " + spec.name +
                   " environment: the dataset has " + problems);
}

PartialView hide_velocities(const data::Dataset& dataset) {
  if (dataset.env_id.empty())
    throw EnvError(dataset.path +
                   " names no environment (metadata/env), so its velocities cannot be told from "
                   "its positions");
  const EnvironmentDefinition& full = task(dataset.env_id);
  if (full.positions_only)
    throw UsageError(dataset.path + " is partially observed already (" + full.name + ")");
  check_dataset_matches(dataset, full);
  PartialView view;
  const auto partial = environments().find(full.name + "-po");
  if (!partial)
    throw UsageError(dataset.path + ": " + full.name +
                     " has no partially observed view (only the locomotion tasks do)");
  view.task = &task(partial->name);
  const auto S = static_cast<std::size_t>(full.obs_dim),
             P = static_cast<std::size_t>(view.task->obs_dim);
  view.data = dataset.data;
  const auto cut = [S, P](std::vector<float>& rows) {
    const std::size_t n = rows.size() / S;
    for (std::size_t r = 0; r < n; ++r)
      std::copy_n(rows.begin() + static_cast<std::ptrdiff_t>(r * S), P,
                  rows.begin() + static_cast<std::ptrdiff_t>(r * P));
    rows.resize(n * P);
  };
  cut(view.data.observations);
  cut(view.data.next_observations);
  view.data.obs_dim = static_cast<std::int64_t>(P);
  view.metadata = dataset.metadata;
  // Every key a loader reads the environment from names the partially observed task.
  for (const char* key : {"env_id", "environment"})
    if (view.metadata.count(key)) view.metadata[key] = view.task->name;
  view.metadata["env"] = view.task->name;
  view.metadata["observation"] = "positions only (qpos[1:]); velocities hidden";
  view.metadata["derived_from"] = dataset.path;
  return view;
}

}  // namespace dstudio::env
