#pragma once
/// \file
/// The clock both viewers play and record by: the speeds on offer, what each is called, and which
/// step of an episode a recorded frame shows. One definition, so that the studio's Viewer tab and
/// decision-viewer offer the same speeds and their recordings of the same run show the same steps.
/// Also the change a counterfactual fork makes (`--fork STEP:CHANGE`), parsed once for both.

#include <optional>
#include <string>
#include <vector>

#include "dstudio/models/variant_config.h"

namespace dstudio::models {

/// Times real time, slowest first; 0 (the last) is as fast as the policy acts.
const std::vector<double>& playback_speeds();
/// "0.25x", "1x", "max".
std::string speed_label(double speed);
/// The speed after (`faster`) or before `speed` in playback_speeds(); `speed` itself at either end
/// or when it is not on the list.
double next_speed(double speed, bool faster);

/// The step recorded frame `frame` shows: the step the episode reaches `frame / fps` seconds after
/// `first_step` at `speed` times real time (`dt` simulated seconds per step; speed 0, as fast as
/// the policy acts, records at 1x). Frames are taken at a fixed rate whatever the machine manages.
int recorded_step(int first_step, int frame, int fps, double speed, double dt);

/// What a fork changes from the step it is made at (the rest is copied: the simulation state, the
/// context, the conditioning in force).
struct BranchChange {
  std::optional<double> target;            ///< `target=1800`
  std::optional<ModalityZeroing> zeroing;  ///< `zeroing=states`
  std::string checkpoint;                  ///< `checkpoint=PATH`: another policy takes over
  std::vector<std::string> interventions;  ///< specs added to those in force (`head:2.1=zero`)
  bool clear_interventions = false;        ///< `interventions=none`
  /// How the change is written back (the spec given), for legends and overlays.
  std::string label;
};

/// Parses one CHANGE: `target=NUMBER`, `zeroing=none|rtg|states|actions`, `checkpoint=PATH`,
/// `interventions=none`, or an intervention spec (interventions.h's grammar; checked against a
/// model only when the fork is made). Throws UsageError naming what it takes.
BranchChange parse_branch_change(const std::string& change);

/// `STEP:CHANGE` as decision-viewer's --fork takes it (STEP a step of the episode, from 0).
struct ForkSpec {
  int step = 0;
  BranchChange change;
};
ForkSpec parse_fork(const std::string& spec);

/// Branches a player keeps beside its main run.
inline constexpr int kMaxBranches = 4;

}  // namespace dstudio::models
