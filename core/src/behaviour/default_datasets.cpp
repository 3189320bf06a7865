#include "dstudio/behaviour/default_datasets.h"

#include <xxhash.h>

#include <cstdio>
#include <cstdlib>

#include "dstudio/common/resources.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/env/environment.h"

namespace dstudio::behaviour {

std::filesystem::path cache_folder() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "decision-studio";
  if (const char* home = std::getenv("HOME"); home && *home) return std::filesystem::path(home) / ".cache" / "decision-studio";
  return std::filesystem::temp_directory_path() / "decision-studio";
}

namespace {

PolicySet default_policies(const std::string& env, DatasetKind kind, PolicyAlgorithm algorithm) {
  if (kind == DatasetKind::Random) return {};
  if (algorithm == PolicyAlgorithm::Ars) return policy_set_from_ars(shipped_policies(env), kBehaviourNoise);
  return shipped_policy_set(env, algorithm);
}

}  // namespace

std::int64_t default_transitions(const std::string& env, DatasetKind kind, PolicyAlgorithm algorithm) {
  if (algorithm == PolicyAlgorithm::Ars) return kDefaultTransitions;
  const auto policies = default_policies(env, kind, algorithm);
  return d4rl_transitions(env, kind, kind == DatasetKind::Random ? nullptr : &policies);
}

std::filesystem::path default_dataset_path(const std::string& env_name, DatasetKind kind, PolicyAlgorithm algorithm) {
  const std::string name = env::task(env_name).name;
  std::string settings;
  std::string file = name + "-" + to_string(kind) + "-dstudio-";
  if (algorithm == PolicyAlgorithm::Ars) {
    // Unchanged from the first defaults, so the names recorded in older checkpoints still match.
    const auto policies = embedded_resource("policies/" + name + ".json");
    settings = std::string(policies.value_or("")) + "|" + to_string(kind) + "|" + std::to_string(kDefaultTransitions) +
               "|seed0|noise" + std::to_string(kBehaviourNoise) + "|v1";
  } else {
    const auto policies = embedded_resource("policies/" + name + "-sac.json");
    settings = std::string(policies.value_or("")) + "|" + to_string(kind) + "|" +
               std::to_string(default_transitions(name, kind, algorithm)) + "|seed0|sac-v1";
    file += "sac-";
  }
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(XXH3_64bits(settings.data(), settings.size())));
  return cache_folder() / "datasets" / (file + std::string(hash, 8) + ".hdf5");
}

std::filesystem::path ensure_default_dataset(const std::string& env_name, DatasetKind kind, const Progress& progress,
                                             PolicyAlgorithm algorithm) {
  const auto path = default_dataset_path(env_name, kind, algorithm);
  if (std::filesystem::exists(path)) return path;
  std::filesystem::create_directories(path.parent_path());
  GenerateConfig config;
  config.env = env::task(env_name).name;
  config.kind = kind;
  config.transitions = default_transitions(config.env, kind, algorithm);
  const PolicySet policies = default_policies(config.env, kind, algorithm);
  auto made = generate_dataset(config, policies, progress);
  data::write_d4rl(path, made.arrays, made.metadata);  // atomic: a crash leaves no partial file
  return path;
}

std::filesystem::path ensure_story_dataset(const Progress& progress) {
  return ensure_default_dataset(kStoryDataset.env, kStoryDataset.kind, progress, kStoryDataset.algorithm);
}

}  // namespace dstudio::behaviour
