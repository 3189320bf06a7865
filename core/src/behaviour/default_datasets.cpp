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

std::filesystem::path default_dataset_path(const std::string& env_name, DatasetKind kind) {
  const std::string name = env::task(env_name).name;
  const auto policies = embedded_resource("policies/" + name + ".json");
  const std::string settings = std::string(policies.value_or("")) + "|" + to_string(kind) + "|" +
                               std::to_string(kDefaultTransitions) + "|seed0|noise" + std::to_string(kBehaviourNoise) + "|v1";
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(XXH3_64bits(settings.data(), settings.size())));
  return cache_folder() / "datasets" / (name + "-" + to_string(kind) + "-dstudio-" + std::string(hash, 8) + ".hdf5");
}

std::filesystem::path ensure_default_dataset(const std::string& env_name, DatasetKind kind, const Progress& progress) {
  const auto path = default_dataset_path(env_name, kind);
  if (std::filesystem::exists(path)) return path;
  std::filesystem::create_directories(path.parent_path());
  GenerateConfig config;
  config.env = env::task(env_name).name;
  config.kind = kind;
  config.transitions = kDefaultTransitions;
  const PolicySet policies =
      kind == DatasetKind::Random ? PolicySet{} : policy_set_from_ars(shipped_policies(config.env), kBehaviourNoise);
  auto made = generate_dataset(config, policies, progress);
  data::write_d4rl(path, made.arrays, made.metadata);  // atomic: a crash leaves no partial file
  return path;
}

}  // namespace dstudio::behaviour
