#include "dstudio/behaviour/default_datasets.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "dstudio/behaviour/adroit_data.h"
#include "dstudio/behaviour/antmaze_data.h"
#include "dstudio/behaviour/demonstrations.h"
#include "dstudio/common/error.h"
#include "dstudio/common/resources.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/env/environment.h"

namespace dstudio::behaviour {

std::filesystem::path cache_folder() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::filesystem::path(xdg) / "decision-studio";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::filesystem::path(home) / ".cache" / "decision-studio";
  return std::filesystem::temp_directory_path() / "decision-studio";
}

namespace {

PolicySet default_policies(const std::string& env, DatasetKind kind, PolicyAlgorithm algorithm) {
  if (kind == DatasetKind::Random) return {};
  if (algorithm == PolicyAlgorithm::Ars)
    return policy_set_from_ars(shipped_policies(env), kBehaviourNoise);
  return shipped_policy_set(env, algorithm);
}

}  // namespace

std::int64_t default_transitions(const std::string& env, DatasetKind kind,
                                 PolicyAlgorithm algorithm) {
  if (algorithm == PolicyAlgorithm::Ars) return kDefaultTransitions;
  const auto policies = default_policies(env, kind, algorithm);
  return d4rl_transitions(env, kind, kind == DatasetKind::Random ? nullptr : &policies);
}

namespace {

std::string short_hash(const std::string& settings) {
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(settings.data(), settings.size())));
  return std::string(hash, 8);
}

bool is_antmaze(const std::string& env_name) {
  return env::task(env_name).family == "antmaze";
}

bool is_adroit(const std::string& env_name) {
  return env::task(env_name).family == "adroit";
}

// Thousands separated, as the window prints counts; built piece by piece (GCC 12's -Wrestrict
// misreads an insert here).
std::string grouped(std::int64_t value) {
  const std::string digits = std::to_string(value);
  std::string count;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) count += ',';
    count += digits[i];
  }
  return count;
}

}  // namespace

std::filesystem::path antmaze_dataset_path(const std::string& task) {
  const std::string name = env::task(task).name;
  const auto policies =
      embedded_resource(std::string("policies/") + kGoalReacherTask + "-sac.json");
  const AntMazeDataConfig config;
  const std::string settings = std::string(policies.value_or("")) + "|" + name + "|" +
                               std::to_string(config.transitions) + "|seed0|noise" +
                               std::to_string(config.action_noise) + "|antmaze-v1";
  return cache_folder() / "datasets" / (name + "-dstudio-" + short_hash(settings) + ".hdf5");
}

std::filesystem::path adroit_expert_dataset_path(const std::string& task) {
  const std::string name = env::task(task).name;
  const auto policy = embedded_resource("policies/" + name + "-dapg.json");
  const AdroitExpertConfig config;
  const std::string settings = std::string(policy.value_or("")) + "|" + name + "|" +
                               std::to_string(config.episodes) + "|seed0|sampled|adroit-v1";
  return cache_folder() / "datasets" /
         (name + "-expert-dstudio-dapg-" + short_hash(settings) + ".hdf5");
}

std::filesystem::path adroit_human_dataset_path(const std::string& task) {
  const std::string name = env::task(task).name;
  const auto demos = embedded_resource("demonstrations/" + name + "-human.json");
  const std::string settings =
      std::string(demos.value_or("")) + "|" + name + "|clipped|adroit-human-v1";
  return cache_folder() / "datasets" /
         (name + "-human-dstudio-dapg-demos-" + short_hash(settings) + ".hdf5");
}

std::filesystem::path default_dataset_path(const std::string& env_name, DatasetKind kind,
                                           PolicyAlgorithm algorithm) {
  if (is_antmaze(env_name)) return antmaze_dataset_path(env_name);
  if (is_adroit(env_name)) return adroit_expert_dataset_path(env_name);
  const std::string name = env::task(env_name).name;
  std::string settings;
  std::string file = name + "-" + to_string(kind) + "-dstudio-";
  if (algorithm == PolicyAlgorithm::Ars) {
    // Unchanged from the first defaults, so the names recorded in older checkpoints still match.
    const auto policies = embedded_resource("policies/" + name + ".json");
    settings = std::string(policies.value_or("")) + "|" + to_string(kind) + "|" +
               std::to_string(kDefaultTransitions) + "|seed0|noise" +
               std::to_string(kBehaviourNoise) + "|v1";
  } else {
    const auto policies = embedded_resource("policies/" + name + "-sac.json");
    settings = std::string(policies.value_or("")) + "|" + to_string(kind) + "|" +
               std::to_string(default_transitions(name, kind, algorithm)) + "|seed0|sac-v1";
    file += "sac-";
  }
  return cache_folder() / "datasets" / (file + short_hash(settings) + ".hdf5");
}

std::optional<DefaultDatasetInfo> identify_default_dataset(const std::filesystem::path& path) {
  const auto name = path.filename();
  for (const auto& task : env::task_names()) {
    if (!is_adroit(task) || name.string().rfind(task + "-human-dstudio-", 0) != 0 ||
        adroit_human_dataset_path(task).filename() != name)
      continue;
    DefaultDatasetInfo info;
    info.env = task;
    info.kind = DatasetKind::Expert;  // not a kind a policy makes; `human` tells it apart
    info.human = true;
    info.name = task + " human";
    info.label = task + " human (the studio's, made as D4RL made " + task +
                 "-human-v1: DAPG's 25 demonstrations replayed)";
    info.command = "dstudio dataset default --env " + task + " --kind human";
    return info;
  }
  for (const auto& task : env::task_names()) {
    if (!is_adroit(task) || adroit_expert_dataset_path(task).filename() != name) continue;
    DefaultDatasetInfo info;
    info.env = task;
    info.kind = DatasetKind::Expert;
    info.name = task + " expert";
    info.label = task + " expert (the studio's, made as D4RL made " + task +
                 "-expert-v1: D4RL's DAPG expert policy, " +
                 grouped(AdroitExpertConfig{}.episodes) + " episodes)";
    info.command = "dstudio dataset default --env " + task;
    return info;
  }
  for (const auto& task : env::task_names()) {
    if (!is_antmaze(task) || name.string().rfind(task + "-dstudio-", 0) != 0) continue;
    if (antmaze_dataset_path(task).filename() != name) continue;
    DefaultDatasetInfo info;
    info.env = task;
    info.name = task;
    info.label = task + " (D4RL's recipe: the studio's goal-reaching ant and navigator, " +
                 grouped(AntMazeDataConfig{}.transitions) + " transitions)";
    info.command = "dstudio dataset default --env " + task;
    return info;
  }
  for (const char* env : {"hopper", "walker2d", "halfcheetah"})
    for (auto kind : {DatasetKind::Random, DatasetKind::Medium, DatasetKind::MediumReplay,
                      DatasetKind::Expert, DatasetKind::MediumExpert})
      for (auto algorithm : {PolicyAlgorithm::Sac, PolicyAlgorithm::Ars}) {
        // Each name starts with "<env>-<kind>-dstudio-": only those can match.
        if (name.string().rfind(std::string(env) + "-" + to_string(kind) + "-dstudio-", 0) != 0)
          continue;
        if (default_dataset_path(env, kind, algorithm).filename() != name) continue;
        DefaultDatasetInfo info;
        info.env = env, info.kind = kind, info.algorithm = algorithm;
        info.story = env == std::string(kStoryDataset.env) && kind == kStoryDataset.kind &&
                     algorithm == kStoryDataset.algorithm;
        info.name = std::string(env) + " " + to_string(kind);
        const std::string count = grouped(default_transitions(env, kind, algorithm));
        info.label = std::string(env) + " " + to_string(kind) + " (" +
                     (kind == DatasetKind::Random
                          ? std::string("random actions")
                          : std::string(algorithm == PolicyAlgorithm::Sac ? "SAC" : "ARS") +
                                " behaviour policies") +
                     ", " + count + " transitions)";
        info.command = "dstudio dataset default";
        if (!info.story) {
          if (std::string(env) != "hopper") info.command += std::string(" --env ") + env;
          info.command += std::string(" --kind ") + to_string(kind);
          if (algorithm == PolicyAlgorithm::Ars) info.command += " --algorithm ars";
        }
        return info;
      }
  return std::nullopt;
}

namespace {

// An exclusive lock on `<dataset>.lock`, so that two processes asking for the same default dataset
// (a studio and a command, or tests run in parallel) make it once: the second waits, cancellably,
// and then finds the file. The holder removes the lock file before releasing it, so the cache
// keeps only datasets; a waiter that then holds a lock on the removed file sees that its
// descriptor no longer names the path and locks the path anew.
class MakingLock {
 public:
  MakingLock(const std::filesystem::path& dataset, const Progress& progress)
      : file_(dataset.string() + ".lock") {
    bool told = false;
    for (;;) {
      fd_ = ::open(file_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
      if (fd_ < 0) return;  // a read-only cache: make it without the lock, as before
      while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK && errno != EINTR) {
          const int error = errno;
          ::close(fd_);
          throw Error(file_ + ": cannot lock: " + std::strerror(error));
        }
        if (!told)
          progress.update(0.0, "waiting for another process making " + dataset.filename().string());
        told = true;
        try {
          progress.check();
        } catch (...) {
          ::close(fd_);
          throw;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
      struct stat held {};
      struct stat named {};
      if (::fstat(fd_, &held) == 0 && ::stat(file_.c_str(), &named) == 0 &&
          held.st_dev == named.st_dev && held.st_ino == named.st_ino)
        return;
      ::close(fd_);  // the holder we waited for removed this file: lock the path's new one
    }
  }
  ~MakingLock() {
    if (fd_ < 0) return;
    ::unlink(file_.c_str());  // still held: nobody can have locked the path's file meanwhile
    ::close(fd_);             // closing releases the lock
  }
  MakingLock(const MakingLock&) = delete;
  MakingLock& operator=(const MakingLock&) = delete;

 private:
  std::string file_;
  int fd_ = -1;
};

}  // namespace

std::filesystem::path ensure_default_dataset(const std::string& env_name, DatasetKind kind,
                                             const Progress& progress, PolicyAlgorithm algorithm) {
  const auto path = default_dataset_path(env_name, kind, algorithm);
  if (std::filesystem::exists(path)) return path;
  std::filesystem::create_directories(path.parent_path());
  const MakingLock lock(path, progress);
  if (std::filesystem::exists(path)) return path;  // made by the process we waited for
  if (is_adroit(env_name)) {
    AdroitExpertConfig config;
    config.task = env::task(env_name).name;
    const MlpPolicy expert = shipped_dapg_policy(config.task);
    auto made = generate_adroit_expert_dataset(config, expert, progress);
    data::write_d4rl(path, made.arrays, made.metadata);
    return path;
  }
  if (is_antmaze(env_name)) {
    AntMazeDataConfig config;
    config.task = env::task(env_name).name;
    auto made = generate_antmaze_dataset(config, shipped_goal_reacher(), progress.part(0, 0.95));
    const auto rate = navigation_success(config.task, shipped_goal_reacher(), 100, 1, 2,
                                         progress.part(0.95, 1.0));
    made.metadata["controller_success"] = controller_success_text(config.task, rate);
    data::write_d4rl(path, made.arrays, made.metadata);
    return path;
  }
  GenerateConfig config;
  config.env = env::task(env_name).name;
  config.kind = kind;
  config.transitions = default_transitions(config.env, kind, algorithm);
  const PolicySet policies = default_policies(config.env, kind, algorithm);
  auto made = generate_dataset(config, policies, progress);
  data::write_d4rl(path, made.arrays, made.metadata);  // atomic: a crash leaves no partial file
  return path;
}

std::filesystem::path ensure_adroit_human_dataset(const std::string& task,
                                                  const Progress& progress) {
  const auto demonstrations = shipped_demonstrations(task);  // refuses a task without
  const auto path = adroit_human_dataset_path(task);
  if (std::filesystem::exists(path)) return path;
  std::filesystem::create_directories(path.parent_path());
  const MakingLock lock(path, progress);
  if (std::filesystem::exists(path)) return path;
  auto made = replay_demonstrations(demonstrations, progress);
  data::write_d4rl(path, made.arrays, made.metadata);
  return path;
}

std::filesystem::path ensure_story_dataset(const Progress& progress) {
  return ensure_default_dataset(kStoryDataset.env, kStoryDataset.kind, progress,
                                kStoryDataset.algorithm);
}

}  // namespace dstudio::behaviour
