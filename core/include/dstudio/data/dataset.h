#pragma once
/// \file
/// An offline-RL dataset in memory: the transitions of a D4RL or Minari file, cut into episodes.
///
/// Arrays are held as float32 whatever the file stores (float64 replay files are converted on
/// load; the source dtype is kept in `ArrayInfo`), row-major, one row per transition. Episodes are
/// never merged: each has an end reason, and steps after the last boundary (D4RL's unterminated
/// tail, or a Minari episode with neither flag at its last step) are kept as an `Unterminated`
/// episode that is reported but excluded from statistics and sampling, as in the Decision
/// Transformer reference code.

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "dstudio/common/progress.h"

namespace dstudio::data {

/// Why an episode ended.
enum class EndReason {
  Terminal,      ///< `terminals` (Minari: `terminations`) set at its last step
  Timeout,       ///< `timeouts` (Minari: `truncations`) set, or cut at 1000 steps in old files
  Unterminated,  ///< no flag at its last step: the file ended (or the episode group ended) first
};

/// "terminal", "timeout" or "unterminated".
const char* to_string(EndReason reason);

/// One episode: a contiguous run of transitions `[start, start + length)`.
struct Episode {
  std::int64_t start = 0;
  std::int64_t length = 0;
  EndReason end = EndReason::Unterminated;
  double ret = 0.0;  ///< undiscounted sum of rewards

  [[nodiscard]] bool complete() const { return end != EndReason::Unterminated; }
};

/// One `infos/` array of `dim` columns, row-major, one row per transition.
struct InfoColumns {
  std::int64_t dim = 0;
  std::vector<float> values;
  bool operator==(const InfoColumns&) const = default;
};

/// The `infos/` keys the loader reads into TransitionArrays::state_infos when a file holds them:
/// D4RL's Adroit get_env_state() keys beyond qpos and qvel (hand_qpos, a copy of qpos's first
/// values, is not among them).
inline constexpr const char* kStateInfoKeys[] = {"desired_orien", "door_body_pos", "board_pos",
                                                 "obj_pos",       "target_pos",    "palm_pos"};

/// The transitions in the D4RL layout, as the writer takes them and the loader returns them.
/// Arrays are row-major with one row per transition; optional arrays are empty when absent.
struct TransitionArrays {
  std::int64_t obs_dim = 0;
  std::int64_t act_dim = 0;
  std::int64_t qpos_dim = 0;  ///< 0 when there is no `infos/qpos`
  std::int64_t qvel_dim = 0;  ///< 0 when there is no `infos/qvel`
  std::int64_t goal_dim = 0;  ///< 0 when there is no `infos/goal` (AntMaze's collection goal)

  std::vector<float> observations;       ///< (N, obs_dim)
  std::vector<float> next_observations;  ///< (N, obs_dim); optional
  std::vector<float> actions;            ///< (N, act_dim)
  std::vector<float> rewards;            ///< (N)
  std::vector<std::uint8_t> terminals;   ///< (N), 0 or 1
  std::vector<std::uint8_t> timeouts;    ///< (N), 0 or 1
  std::vector<float> qpos;               ///< (N, qpos_dim); optional
  std::vector<float> qvel;               ///< (N, qvel_dim); optional
  std::vector<float> goals;              ///< (N, goal_dim); optional
  /// Further `infos/` arrays that hold a task's state beyond qpos and qvel, by key without the
  /// "infos/" (D4RL's Adroit files: `desired_orien`, `door_body_pos`, `board_pos`, `obj_pos`,
  /// `target_pos`, `palm_pos`; kStateInfoKeys): what a replay needs to put the scene back.
  std::map<std::string, InfoColumns> state_infos;

  /// Number of transitions (rows of `observations`).
  [[nodiscard]] std::int64_t size() const {
    return obs_dim > 0 ? static_cast<std::int64_t>(observations.size()) / obs_dim : 0;
  }
  /// Bytes held by the arrays.
  [[nodiscard]] std::int64_t memory_bytes() const;
  bool operator==(const TransitionArrays&) const = default;
};

/// Name, dtype and shape of one array as the file stores it.
struct ArrayInfo {
  std::string key;    ///< e.g. "observations", "infos/qpos", "episode_0/actions"
  std::string dtype;  ///< "float32", "float64", "bool", "uint8", ...
  std::vector<std::int64_t> shape;
};

/// A numeric array kept from `metadata/policy/` (D4RL's expert files keep their behaviour
/// policy's layers there), read as float32 with its shape.
struct MetadataArray {
  std::vector<std::int64_t> shape;
  std::vector<float> values;  ///< row-major
  bool operator==(const MetadataArray&) const = default;
};

/// A loaded dataset: transitions, episodes and the statistics the models need.
struct Dataset {
  std::string path;
  /// The format that read it, by its name in data::dataset_format_registry(): "d4rl", "minari",
  /// or a plugin's.
  std::string format;
  TransitionArrays data;
  /// True when the file has no `timeouts` and episodes were cut every 1000 steps.
  bool timeouts_synthesized = false;

  std::vector<Episode> episodes;  ///< in file order, unterminated ones included
  std::vector<ArrayInfo> arrays;  ///< every array found, as stored
  /// Scalar entries of `metadata/` (D4RL) or root attributes (Minari), as text.
  std::map<std::string, std::string> metadata;
  /// The numeric arrays below `metadata/policy/`, by their key below `metadata/` ("policy/fc0/
  /// weight"); behaviour/d4rl_policy.h makes a policy of them.
  std::map<std::string, MetadataArray> metadata_arrays;
  /// Environment id when the file names one (Minari `env_spec`, or `metadata/env`), else empty.
  std::string env_id;

  /// Mean and standard deviation (population) of the states of complete episodes.
  std::vector<float> state_mean;
  std::vector<float> state_std;
  /// "xxh3-128:<hex>" over dims and the float32 contents of observations, actions, rewards,
  /// terminals and timeouts: equal for the same data whatever the file's dtype or compression.
  std::string fingerprint;
  /// Things a user should know that do not make the dataset unusable.
  std::vector<std::string> warnings;
  /// How the file was read where that is expected and not a problem (the unterminated tail of a
  /// D4RL file, left out as D4RL's reference code leaves it out): shown where a user asks about
  /// the dataset (`dataset info`, the Dataset tab), not repeated by every command that loads it.
  std::vector<std::string> notes;
  /// Set when the dataset is of a task that shares a name with another and must not be compared
  /// with it (Minari's D4RL/antmaze is Gymnasium-Robotics' AntMaze, not D4RL's): what differs.
  /// Shown wherever the dataset or a score on it is.
  std::string task_caveat;

  [[nodiscard]] std::int64_t transitions() const { return data.size(); }
  /// Bytes held in memory by this dataset (arrays, episodes, statistics).
  [[nodiscard]] std::int64_t memory_bytes() const;
};

/// Counts and return statistics of a dataset, as `dstudio dataset info` prints them.
struct DatasetSummary {
  std::int64_t transitions = 0;
  std::int64_t episodes = 0;  ///< complete episodes only
  std::int64_t terminated = 0;
  std::int64_t timed_out = 0;
  std::int64_t unterminated_episodes = 0;
  std::int64_t tail_steps = 0;  ///< steps in unterminated episodes
  std::int64_t obs_dim = 0;
  std::int64_t act_dim = 0;
  double return_min = 0, return_mean = 0, return_max = 0, return_std = 0;  ///< complete episodes
  /// Quantiles of complete episodes' returns (linear interpolation between order statistics).
  double return_p10 = 0, return_p25 = 0, return_median = 0, return_p75 = 0, return_p90 = 0;
  std::int64_t length_min = 0, length_max = 0;
  double length_mean = 0;
};

/// Summarises a dataset; return and length statistics cover complete episodes only.
DatasetSummary summarize(const Dataset& dataset);

/// The share of the action variance a linear function of the state explains: least squares with
/// an intercept over every transition, R^2 = 1 - (sum of squared residuals) / (total sum of
/// squares), the action dimensions pooled. Near 1 the state determines the action, and a
/// return-to-go has nothing left to tell a model (docs/findings.md). NaN without transitions or
/// when the actions do not vary. Polls `progress` (throws Cancelled when it is cancelled).
double linear_action_r2(const TransitionArrays& data, const Progress& progress = {});

/// The dataset's D4RL-style name, e.g. "hopper-medium-replay": from the metadata of a generated
/// file (env_id and kind), else from the file name (hopper_medium_replay-v2.hdf5 and
/// hopper-medium-v2.hdf5 both give hopper-medium-replay / hopper-medium). Lower case, without
/// the version.
std::string dataset_name(const Dataset& dataset);

/// Cuts transitions into episodes at every index where `terminals[i] || timeouts[i]`; when
/// `cut_every > 0` an episode is also ended (as a timeout) after that many steps, as D4RL does for
/// files without `timeouts`. Steps after the last boundary form one `Unterminated` episode.
/// Returns are computed from `rewards`. The flag vectors may be empty (meaning all zero).
std::vector<Episode> segment_episodes(const std::vector<float>& rewards,
                                      const std::vector<std::uint8_t>& terminals,
                                      const std::vector<std::uint8_t>& timeouts,
                                      std::int64_t cut_every = 0);

/// D4RL's AntMaze episodes: `terminals` (and rewards) are 1 on every step within 0.5 of the goal
/// and the ant goes on, so only `timeouts` end an episode, and a jump of more than `jump` in the
/// first two observation columns (x, y) between rows, where D4RL's v0 files reset the ant without
/// a timeout (D4RL#77). Such an end is a Timeout; returns are computed from `rewards`.
std::vector<Episode> segment_goal_episodes(const TransitionArrays& data, double jump = 2.0);

/// The D4RL antmaze task a file of D4RL's own is, by its name: the download names
/// ("Ant_maze_big-maze_noisy_multistart_True_multigoal_False_sparse_fixed.hdf5" is
/// antmaze-medium-play-v2) and "antmaze-<maze>-v<N>" file names. Empty when neither.
std::string d4rl_antmaze_task_of_file(const std::string& path);

/// The D4RL Adroit task a file of D4RL's own is, by its name: v1 downloads
/// ("door-expert-v1.hdf5") and v0 ones ("door-v0_demos_clipped.hdf5" is door-human-v0,
/// "door-demos-v0-bc-combined.hdf5" door-cloned-v0, "door-v0_expert_clipped.hdf5"
/// door-expert-v0). Empty when neither.
std::string d4rl_adroit_task_of_file(const std::string& path);

/// The D4RL kitchen task a file of D4RL's own is, by its name: the download names
/// ("mini_kitchen_microwave_kettle_light_slider-v0.hdf5" is kitchen-complete-v0,
/// "kitchen_microwave_kettle_light_slider-v0.hdf5" kitchen-partial-v0,
/// "kitchen_microwave_kettle_bottomburner_light-v0.hdf5" kitchen-mixed-v0) and
/// "kitchen-<task>-v<N>" file names. Empty when neither.
std::string d4rl_kitchen_task_of_file(const std::string& path);

/// Mean and population standard deviation of the states of the complete episodes, per dimension.
void state_statistics(const TransitionArrays& data, const std::vector<Episode>& episodes,
                      std::vector<float>& mean, std::vector<float>& std);

/// The content fingerprint described at `Dataset::fingerprint`.
std::string content_fingerprint(const TransitionArrays& data);

}  // namespace dstudio::data
