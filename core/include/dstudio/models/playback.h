#pragma once
/// \file
/// The clock both viewers play and record by: the speeds on offer, what each is called, and which
/// step of an episode a recorded frame shows. One definition, so that the studio's Viewer tab and
/// decision-viewer offer the same speeds and their recordings of the same run show the same steps.
/// Also the change a counterfactual fork makes (`--fork STEP:CHANGE`), parsed once for both.

#include <cstdint>
#include <deque>
#include <filesystem>
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

/// The rate a viewer really plays at: times real time over the last `window_seconds` of playing,
/// from the steps it showed and when (steps shown x `dt` / seconds). A viewer falls behind the
/// speed asked for when the policy, the physics and the drawing of a step take longer than the
/// step lasts; its speed label then says so (speed_status).
class PlaybackRate {
 public:
  explicit PlaybackRate(double dt, double window_seconds = 2.0);
  /// The step on screen at `seconds` (any steady clock) while playing. A step back (a seek, a new
  /// episode) starts the measure again.
  void add(double seconds, int step);
  /// Forgets what was measured (paused, or the speed changed).
  void reset();
  /// Times real time over the window; none until it spans a second of playing.
  [[nodiscard]] std::optional<double> rate() const;

 private:
  double dt_, window_;
  std::deque<std::pair<double, int>> samples_;
};
/// Whether the rate measured is under nine tenths of the speed asked for (speed 0, as fast as the
/// policy acts, is never behind).
bool falls_behind(double asked, std::optional<double> real);
/// A rate measured, as the speeds on offer are written: two decimals without trailing zeros
/// ("0.42x", "3.1x"), two significant digits under 0.1 ("0.031x").
std::string rate_label(double real);
/// The speed as the viewers show it: speed_label(asked), and the real rate beside it when it
/// falls behind ("1x asked, 0.42x real") or when it is as fast as the policy acts ("max, 3.1x
/// real").
std::string speed_status(double asked, std::optional<double> real);

/// What a recorded clip shows, frame by frame, written beside it (`<clip>.json`) by both viewers:
/// so a clip says what was done (the target, zeroing and interventions in force, the forks beside
/// the main run) and two recordings of the same run can be checked to show the same steps.
class ClipLog {
 public:
  /// One fork on screen in a frame.
  struct Branch {
    std::string label;
    int fork_step = 0;
    int step = 0;  ///< the branch's frame drawn (its last, once it has ended)
    double return_so_far = 0.0;
    bool operator==(const Branch&) const = default;
  };
  /// One recorded frame.
  struct Frame {
    int step = 0;
    double return_so_far = 0.0;
    double target = 0.0;
    std::string zeroing;
    std::vector<std::string> interventions;
    std::vector<Branch> branches;
    bool operator==(const Frame&) const = default;
  };
  /// A clip of `source` (a checkpoint, or a dataset episode) from `first_step`, `fps` frames a
  /// second at `speed` times real time (0 is recorded at 1x), `seed` its episode's.
  ClipLog(std::string viewer, std::string source, std::uint64_t seed, int first_step, int fps,
          double speed);
  void add(Frame frame);
  [[nodiscard]] const std::vector<Frame>& frames() const { return frames_; }
  /// The log as JSON: {"viewer", "source", "seed", "first_step", "fps", "speed", "frames": [...]}.
  [[nodiscard]] std::string json() const;
  /// Writes json() to `path` atomically; throws Error naming it on failure.
  void write(const std::filesystem::path& path) const;
  /// Where the log of a clip goes: `base`.json beside base.mp4 (or the folder of PNG frames).
  static std::filesystem::path path_for(const std::filesystem::path& base);
  /// The steps of a written log's frames, in order; throws Error naming the file when it is not
  /// a clip log.
  static std::vector<int> read_steps(const std::filesystem::path& path);

 private:
  std::string viewer_, source_;
  std::uint64_t seed_ = 0;
  int first_step_ = 0, fps_ = 0;
  double speed_ = 1.0;
  std::vector<Frame> frames_;
};

/// What a fork changes from the step it is made at (the rest is copied: the simulation state, the
/// context, the conditioning in force).
struct BranchChange {
  std::optional<double> target;            ///< `target=1800`
  std::optional<ModalityZeroing> zeroing;  ///< `zeroing=states`
  std::string checkpoint;                  ///< `checkpoint=PATH`: another policy takes over
  /// `behaviour=dapg|FILE`: a behaviour policy takes over, acting with its mean action (the
  /// shipped DAPG expert of an Adroit task, or a D4RL file's metadata/policy or a policy JSON;
  /// behaviour/d4rl_policy.h's load_behaviour_policy).
  std::string behaviour;
  std::vector<std::string> interventions;  ///< specs added to those in force (`head:2.1=zero`)
  bool clear_interventions = false;        ///< `interventions=none`
  /// How the change is written back (the spec given), for legends and overlays.
  std::string label;
};

/// A change as parse_branch_change reads it back (`target=1800`, `interventions=SPEC;SPEC`): what
/// the studio hands decision-viewer's --fork for a fork on screen. A change of one kind: the
/// first that is set, in the order of BranchChange's fields.
std::string change_text(const BranchChange& change);

/// A change's label as a legend shows it: a checkpoint or a behaviour policy's file by its file
/// name, the rest as given.
std::string short_label(const std::string& label);
/// Fork `index` (from 0) in the legends over the scene and in the Forks lists: its number, its
/// ghost's colour as a person names it (palette.h), what it changed and from which step ("fork 1,
/// green ghost: target=1200 from step 100"; a line cut short loses the step first).
std::string fork_legend(int index, int fork_step, const std::string& label);
/// How far a fork's actions are from the main run's at a step: the Euclidean norm of the
/// difference, as the timelines' right axis names it.
inline constexpr const char* kActionDifferenceName =
    "action difference from the main run (Euclidean norm)";

/// Parses one CHANGE: `target=NUMBER`, `zeroing=none|rtg|states|actions`, `checkpoint=PATH`,
/// `behaviour=dapg|FILE`, `interventions=none` (those in force cleared), `interventions=SPEC;SPEC`
/// (exactly these in their place), or an intervention spec (interventions.h's grammar; checked
/// against a model only when the fork is made). Throws UsageError naming what it takes.
BranchChange parse_branch_change(const std::string& change);

/// The conditioning of a played episode from one step on: what a viewer's user set there
/// (episode_player.h's condition_changes and replay_conditions).
struct StepConditions {
  int step = 0;
  double target = 0.0;
  ModalityZeroing zeroing = ModalityZeroing::None;
  std::vector<std::string> interventions;
  bool operator==(const StepConditions&) const = default;
};

/// `STEP:CHANGE` as decision-viewer's --fork takes it (STEP a step of the episode, from 0).
struct ForkSpec {
  int step = 0;
  BranchChange change;
};
ForkSpec parse_fork(const std::string& spec);

/// The viewers' live edits of a set of intervention specs, so both toggle them alike: each site
/// (`head:L.H`, `mixer:L`, `mlp:L`) is ablated at most once, there is at most one context limit
/// and one steering per layer; other specs are kept as they are, in order.
/// "zero", "mean" (or another replacement's name) for an ablated site, "" for one left alone.
std::string ablation_of(const std::vector<std::string>& specs, const std::string& site);
/// The specs with `site` ablated by `replacement` ("zero", "mean"), or no longer ablated ("").
std::vector<std::string> with_ablation(const std::vector<std::string>& specs,
                                       const std::string& site, const std::string& replacement);
/// The context limit in force (steps; 0 for none).
int context_of(const std::vector<std::string>& specs);
/// The specs with the context limited to `steps` (0: no limit).
std::vector<std::string> with_context(const std::vector<std::string>& specs, int steps);
/// The specs with ALPHA times direction `name` added after block `layer` (replacing a steering of
/// that layer), or none there when `name` is empty or ALPHA is 0.
std::vector<std::string> with_steering(const std::vector<std::string>& specs, int layer,
                                       double alpha, const std::string& name);
/// The next replacement a click on a site cycles to: "" -> "zero" -> "mean" -> "".
std::string next_ablation(const std::string& current);

/// Patching live from another target: `patch[T]:SITE`, SITE a patch spec of interventions.h
/// (resid:L.T, head:L.H, mixer:L, mlp:L, with an optional limit): at every step the site's value
/// is taken from the same window with the returns-to-go of target T. Every patch in force reads
/// the same T.
struct LivePatch {
  double target = 0.0;
  std::string site;
};
/// The patch `spec` stands for; nullopt when it is not of the form patch[T]:SITE. Throws
/// UsageError for one that starts so but is malformed.
std::optional<LivePatch> parse_live_patch(const std::string& spec);
/// `patch[T]:SITE`, T written as general_number writes it.
std::string live_patch_spec(double target, const std::string& site);
/// Whether `site` ("head:2.1") is patched from another target in `specs`.
bool patched(const std::vector<std::string>& specs, const std::string& site);
/// The specs with `site` patched from `target` (replacing an ablation or a patch of it), or, with
/// no target, neither patched nor ablated.
std::vector<std::string> with_patch(const std::vector<std::string>& specs, const std::string& site,
                                    std::optional<double> target);

/// Branches a player keeps beside its main run.
inline constexpr int kMaxBranches = 4;

}  // namespace dstudio::models
