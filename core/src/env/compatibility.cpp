#include "dstudio/env/compatibility.h"

#include <string>

namespace dstudio::env {

void check_dataset_matches(const data::Dataset& dataset, const TaskSpec& spec) {
  std::string problems;
  auto compare = [&](const char* what, std::int64_t have, int want) {
    if (have == want) return;
    problems += (problems.empty() ? "" : "; ") + std::string(what) + " " + std::to_string(have) + " but " +
                spec.name + " has " + std::to_string(want);
  };
  compare("observation dim", dataset.data.obs_dim, spec.obs_dim);
  compare("action dim", dataset.data.act_dim, spec.act_dim);
  if (dataset.data.qpos_dim > 0) compare("qpos dim", dataset.data.qpos_dim, spec.nq);
  if (dataset.data.qvel_dim > 0) compare("qvel dim", dataset.data.qvel_dim, spec.nv);
  if (!problems.empty()) throw EnvError(dataset.path + ": does not match the " + spec.name + " environment: the dataset has " + problems);
}

}  // namespace dstudio::env
