#pragma once
/// \file
/// People's demonstrations of an Adroit task, and the human dataset D4RL made from them.
///
/// D4RL's {pen,door,hammer,relocate}-human are the teleoperated demonstrations of the DAPG paper
/// (Rajeswaran et al., 2018), replayed in D4RL's environment by scripts/generation/
/// hand_dapg_demos.py: each demonstration starts from its recorded state (set_env_state of its
/// `init_state_dict`: qpos, qvel and the task's own keys, door_body_pos for the door), and its
/// actions, clipped to [-1, 1], are stepped one after another; before each step the observation,
/// infos/qpos, infos/qvel and the task's state keys are recorded; the terminal is never set and the
/// timeout is set at each demonstration's last step, however long it is (the door's run 200 to 300
/// steps, beyond the task's 200-step horizon).
///
/// Those demonstrations are aravindr93/hand_dapg's dapg/demonstrations/<task>-v0_demos.pickle
/// (Apache-2.0). The studio ships the door's, converted from door-v0_demos.pickle, as
/// resources/demonstrations/door-human.json (format dstudio-demonstrations-1, written by
/// packaging/convert-dapg-demos.py), with the rewards each recorded, so that a replay can be
/// compared with the recording. The pen's, hammer's and relocate's are not converted:
/// for those a user brings D4RL's files.

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "dstudio/behaviour/generate.h"
#include "dstudio/common/progress.h"

namespace dstudio::behaviour {

/// One demonstration: where it starts and what was done.
struct Demonstration {
  int steps = 0;
  std::vector<double> qpos, qvel;  ///< the initial state, exactly as recorded
  /// The task's state keys of the initial state (door: door_body_pos), exactly as recorded.
  std::map<std::string, std::vector<double>> state;
  /// steps x act_dim, as the person commanded them (not clipped; float32 as D4RL's file keeps
  /// them).
  std::vector<float> actions;
  /// The reward the recording got at every step (float32).
  std::vector<float> recorded_rewards;
};

struct Demonstrations {
  std::string task;    ///< "door"
  std::string source;  ///< where they come from, and their licence
  int obs_dim = 0, act_dim = 0;
  std::vector<Demonstration> episodes;
  [[nodiscard]] std::int64_t steps() const;
};

/// Reads a dstudio-demonstrations-1 document. Throws Error starting with `where` and saying what
/// is wrong (another format, a missing field, sizes that disagree, a number that is not finite).
Demonstrations demonstrations_from_json_text(std::string_view text, const std::string& where);

/// The demonstrations shipped for `task` ("door", or a name such as "door-human-v1"). Throws
/// Error naming what a user brings instead for a task without (pen, hammer, relocate).
Demonstrations shipped_demonstrations(std::string_view task);

/// How closely the replay follows the recording (another simulator's: contact makes some
/// demonstrations drift apart).
struct ReplayAgreement {
  int within = 0;  ///< demonstrations whose replayed return is within 1% of the recorded one
  double recorded_return = 0.0, replayed_return = 0.0;  ///< summed over every demonstration
};

/// Replays `demonstrations` as D4RL's hand_dapg_demos.py does (see the file comment) and returns
/// the dataset in D4RL's layout, with the agreement in its metadata. Throws Error when they do not
/// fit their task. Cancellable through `progress`.
GeneratedDataset replay_demonstrations(const Demonstrations& demonstrations,
                                       const Progress& progress = {},
                                       ReplayAgreement* agreement = nullptr);

/// The cache path of the studio's human dataset of `task` (door), named after its origin.
std::filesystem::path adroit_human_dataset_path(const std::string& task);
/// Makes it if it is not cached yet (waiting for another process making it) and returns its path.
/// Throws Error for a task whose demonstrations do not ship.
std::filesystem::path ensure_adroit_human_dataset(const std::string& task,
                                                  const Progress& progress = {});

}  // namespace dstudio::behaviour
