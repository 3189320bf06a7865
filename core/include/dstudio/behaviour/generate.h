#pragma once
/// \file
/// Datasets in the D4RL layout made by the project's own behaviour policies, following D4RL's
/// recipe (docs/environments.md):
///
/// - random: uniform random actions;
/// - medium: the medium policy (about a third of the expert's return), its actions sampled from
///   the policy (SAC's own tanh-Gaussian; ARS's linear policy with a fixed Gaussian noise);
/// - expert: the expert policy, sampled likewise;
/// - medium-replay: what the learner produced until it reached the medium level: SAC's uniformly
///   random warm-up, then its kept snapshots in training order, each for the steps it stands
///   for (ARS: every snapshot up to the medium one, each an equal share);
/// - medium-expert: medium then expert, concatenated at an episode boundary.
///
/// Without a size the datasets have D4RL's: 1M transitions (medium-expert 2M), and medium-replay
/// as many as the learner took to reach the medium policy.
///
/// Every episode draws its reset and noise from seeds derived from the dataset seed and its index,
/// and episodes are appended in index order, so the same arguments give the same bytes whatever
/// the thread count. The last episode is cut at the requested size and is then the file's
/// unterminated tail, as in D4RL.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "dstudio/behaviour/ars.h"
#include "dstudio/behaviour/policy_set.h"
#include "dstudio/common/progress.h"
#include "dstudio/data/dataset.h"

namespace dstudio::behaviour {

enum class DatasetKind { Random, Medium, MediumReplay, Expert, MediumExpert };

/// Std of the Gaussian noise added to the ARS behaviour policies' actions. Linear policies are
/// fragile: at 0.1 the hopper expert lost a quarter of its return, at 0.05 it keeps it (3265 of
/// 3287), as D4RL's expert data keeps its policy's.
inline constexpr double kBehaviourNoise = 0.05;

/// "random", "medium", "medium-replay", "expert", "medium-expert".
const char* to_string(DatasetKind kind);
/// Parses a kind; throws UsageError listing the known kinds.
DatasetKind parse_kind(const std::string& text);

struct GenerateConfig {
  std::string env;
  DatasetKind kind = DatasetKind::Medium;
  std::int64_t transitions = 0;  ///< 0: D4RL's size (`d4rl_transitions`)
  std::uint64_t seed = 0;
  int threads = 2;
};

/// Arrays in the D4RL layout (with next_observations and infos/qpos, infos/qvel) and the metadata
/// that says how they were made.
struct GeneratedDataset {
  data::TransitionArrays arrays;
  std::map<std::string, std::string> metadata;
};

/// D4RL's size of a dataset of `kind`; medium-replay's is the steps SAC took to reach the medium
/// policy of `policies` (D4RL's own sizes for other policies).
std::int64_t d4rl_transitions(const std::string& env, DatasetKind kind,
                              const PolicySet* policies = nullptr);

/// Generates a dataset with the behaviour policies of `policies` (unused for random).
GeneratedDataset generate_dataset(const GenerateConfig& config, const PolicySet& policies,
                                  const Progress& progress = {});

}  // namespace dstudio::behaviour
