#pragma once
/// \file
/// The studio's default datasets: made on first use from the shipped behaviour policies and
/// cached in the user's cache folder ($XDG_CACHE_HOME or ~/.cache, under decision-studio/), so
/// nothing large is committed or downloaded.
///
/// SAC defaults (D4RL's recipe and policies) have D4RL's sizes; the earlier ARS defaults keep
/// their 100,000 transitions, so checkpoints trained on them still find their data.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "dstudio/behaviour/generate.h"
#include "dstudio/behaviour/policy_set.h"
#include "dstudio/common/progress.h"

namespace dstudio::behaviour {

/// Size of the ARS default datasets.
inline constexpr std::int64_t kDefaultTransitions = 100'000;

/// The dataset the studio's story is told on: its shipped checkpoints were trained on it, and the
/// window opens it when started without arguments (docs/findings.md says why this one).
struct StoryDataset {
  const char* env;
  DatasetKind kind;
  PolicyAlgorithm algorithm;
};
inline constexpr StoryDataset kStoryDataset{"hopper", DatasetKind::MediumExpert,
                                            PolicyAlgorithm::Sac};

/// Number of transitions of a default dataset: D4RL's size for SAC policies, 100,000 for ARS.
std::int64_t default_transitions(const std::string& env, DatasetKind kind,
                                 PolicyAlgorithm algorithm);

/// The cache path of a default dataset. The name carries a hash of the shipped policies and of
/// the generation settings, so new policies or settings never reuse a stale file.
std::filesystem::path default_dataset_path(const std::string& env = "hopper",
                                           DatasetKind kind = DatasetKind::Medium,
                                           PolicyAlgorithm algorithm = PolicyAlgorithm::Sac);

/// The cache path of an AntMaze task's default dataset (D4RL's recipe, 1M transitions, the
/// shipped goal-reacher); the name carries a hash of the goal-reacher and the settings.
std::filesystem::path antmaze_dataset_path(const std::string& task);

/// The cache path of an Adroit task's expert dataset (D4RL's recipe, 5,000 episodes of the shipped
/// DAPG expert); the name carries a hash of the policy and the settings.
std::filesystem::path adroit_expert_dataset_path(const std::string& task);

/// Generates the default dataset if it is not cached yet and returns its path. For an antmaze
/// task `kind` and `algorithm` do not apply: its data is made as D4RL made it (antmaze_data.h);
/// for an Adroit task the one kind a policy can make is made, expert (adroit_data.h).
/// Another process making the same dataset meanwhile is waited for (cancellably), not repeated.
std::filesystem::path ensure_default_dataset(const std::string& env = "hopper",
                                             DatasetKind kind = DatasetKind::Medium,
                                             const Progress& progress = {},
                                             PolicyAlgorithm algorithm = PolicyAlgorithm::Sac);

/// The story dataset (kStoryDataset), made if needed.
std::filesystem::path ensure_story_dataset(const Progress& progress = {});

/// The user's cache folder for the studio.
std::filesystem::path cache_folder();

/// One of the studio's default datasets, told apart by its file name (a checkpoint made on another
/// machine names the same file in another cache folder).
struct DefaultDatasetInfo {
  std::string env;  ///< the task ("hopper", "antmaze-umaze-v2")
  DatasetKind kind = DatasetKind::Medium;
  PolicyAlgorithm algorithm = PolicyAlgorithm::Sac;
  bool story = false;  ///< the studio's default view and the shipped checkpoints' data
  /// An Adroit task's human data, replayed from people's demonstrations (demonstrations.h):
  /// `kind` and `algorithm` do not apply.
  bool human = false;
  /// What it is in a few words: "hopper medium-expert", "pen human", "antmaze-umaze-v2" (a task
  /// with one dataset has no kind).
  std::string name;
  std::string label;  ///< "hopper medium-expert (SAC behaviour policies, 2,000,000 transitions)"
  std::string
      command;  ///< the command that makes it: "dstudio dataset default --kind medium-expert"
};

/// Which default dataset `path` is, or nothing when its file name is none of theirs.
std::optional<DefaultDatasetInfo> identify_default_dataset(const std::filesystem::path& path);

}  // namespace dstudio::behaviour
