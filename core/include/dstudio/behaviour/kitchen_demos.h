#pragma once
/// \file
/// D4RL's kitchen datasets made from the demonstrations they came from: relay-policy-learning's
/// teleoperation logs (`.mjl`), replayed in the studio's kitchen the way D4RL's playback
/// (adept_envs/utils/parse_demos.py) and its generation script
/// (scripts/generation/generate_kitchen_datasets.py) did, into the D4RL layout.
///
/// A `.mjl` log is seven int32 counts (nq, nv, nu, nmocap, nsensordata, nuserdata, name_len),
/// the model's name (name_len bytes), then float32 records of
/// 1 + nq + nv + nu + 7 nmocap + nsensordata + nuserdata values: the time, qpos, qvel, ctrl,
/// the mocap bodies' positions and quaternions, sensor data and user data of a physics step.

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "dstudio/common/progress.h"
#include "dstudio/data/dataset.h"

namespace dstudio::behaviour {

/// One log, every `skip`-th record from the first kept (D4RL's parse_mjl_logs(file, skip)).
struct MjlLog {
  std::string name;  ///< the model name the log was recorded on
  int nq = 0, nv = 0, nu = 0, nmocap = 0, nsensordata = 0, nuserdata = 0;
  std::int64_t records = 0;  ///< records in the file, before skipping
  std::int64_t frames = 0;   ///< records kept
  std::vector<double> time;  ///< (frames)
  std::vector<double> qpos;  ///< (frames, nq)
  std::vector<double> qvel;  ///< (frames, nv)
  std::vector<double> ctrl;  ///< (frames, nu)
};

/// Reads a `.mjl` log. Throws data::DatasetError naming the file and the byte offset of what is
/// wrong: a header cut short, counts no log has, a name or records cut short (the file's size
/// is not the header plus whole records), a value that is not finite.
MjlLog read_mjl(const std::filesystem::path& file, int skip = 40);

/// What to import.
struct KitchenImportConfig {
  std::string task = "kitchen-complete-v0";  ///< kitchen-complete-v0, -partial-v0, -mixed-v0
  /// `.mjl` files, folders of them, or folders of such folders (relay-policy-learning's
  /// kitchen_demos_multitask): a folder's folders are taken in name order, and for
  /// kitchen-complete only those ending in "microwave_kettle_switch_slide", as D4RL's script
  /// chose them; a folder's logs in name order.
  std::vector<std::filesystem::path> inputs;
  int skip = 40;           ///< records per step: 40 physics steps of 0.002 s
  std::uint64_t seed = 0;  ///< the observation noise's stream
};

/// The imported dataset: D4RL's kitchen layout (observations with the task's goal block,
/// actions, the relabelled rewards, a terminal on each demonstration's last step, no timeouts),
/// with infos/qpos and infos/qvel (the simulation's state at each observation) so that a viewer
/// replays it, and metadata saying where it came from.
struct KitchenImport {
  data::TransitionArrays arrays;
  std::map<std::string, std::string> metadata;
  std::vector<std::filesystem::path> logs;  ///< the logs replayed, in order
  std::vector<std::int64_t> lengths;        ///< transitions per log
};

/// Replays each log as D4RL's playback did: the simulation reset, then set to the log's first
/// kept qpos and qvel; at each kept record but the last, an observation drawn (noise and all),
/// the action that takes the servo target from that observation's robot qpos to the log's ctrl,
/// a = clip((ctrl - obs[0:9]) / 0.08 / 2, -0.999, 0.999), stepped. The observations recorded
/// are those drawn before each step, their goal block the task's; a reward counts the task's
/// elements at their goals in the observation (env::kitchen::elements_at_goal). Reports
/// progress per log; cancelled through `progress`, it throws Cancelled and returns nothing.
/// Throws data::DatasetError for an unreadable log or one recorded on another model, and
/// UsageError when there is no log to import.
KitchenImport import_kitchen_demos(const KitchenImportConfig& config,
                                   const Progress& progress = {});

}  // namespace dstudio::behaviour
