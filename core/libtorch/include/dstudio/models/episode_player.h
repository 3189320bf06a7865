#pragma once
/// \file
/// One episode of a policy, played step by step as a viewer needs it: every step is kept (the
/// physics state, what the policy was conditioned on, its action, the first layer's attention
/// entropy and the mixing matrices of its window), so a viewer can step back and forth, and the
/// target return or the modality zeroing can change mid-episode, branching from any kept step.
///
/// `EpisodePlayer` does the work on the calling thread and computes exactly what `rollout` does
/// for one episode (same window, same arithmetic). `LivePlayer` owns one on a thread of its own,
/// paced to real time times a speed, and takes requests from another thread (a GUI) as intents
/// it applies between steps; the other thread reads copies of shared, immutable frames.
/// Free of LibTorch.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "dstudio/behaviour/mlp_policy.h"
#include "dstudio/data/dataset.h"
#include "dstudio/env/environment.h"
#include "dstudio/models/checkpoint.h"
#include "dstudio/models/playback.h"
#include "dstudio/models/variant_config.h"
#include "dstudio/models/windows.h"

namespace dstudio::models {

/// Step t of a played episode: the state before acting, and what happened there.
struct PlayerFrame {
  int step = 0;
  env::PhysicsState physics;       ///< the simulator before acting at this step
  std::vector<float> observation;  ///< as observed (not normalised)
  double return_to_go = 0.0;       ///< what the policy is conditioned on here, unscaled
  double return_so_far = 0.0;      ///< rewards of the steps before this one
  double target = 0.0;             ///< the target return in force
  ModalityZeroing zeroing = ModalityZeroing::None;
  /// The interventions inside the forward pass in force (interventions.h specs, as `dstudio
  /// predict --intervene` takes them); empty for none.
  std::vector<std::string> interventions;

  bool acted = false;  ///< the fields below are set
  std::vector<float> action;
  /// What the policy would have done here with no intervention and no zeroing, when some were in
  /// force (else empty): the effect of the surgery, joint by joint, is action minus this.
  std::vector<float> action_without;
  double reward = 0.0;
  double entropy =
      std::numeric_limits<double>::quiet_NaN();  ///< first layer, mean over heads and real queries
  std::shared_ptr<const WindowInspection>
      inspection;  ///< every layer's mixing of this step's window

  bool terminal = false;    ///< the episode ended here; no action follows
  bool terminated = false;  ///< ... because the state left the healthy set (else the time limit)
};
using FramePtr = std::shared_ptr<const PlayerFrame>;

/// The frame whose window a viewer shows the mixing of while `shown` is on screen: `shown` itself
/// once it has acted, else the step before it, whose action brought the body to the state shown
/// (while a policy plays, the newest frame has not acted yet). Null when neither has a window
/// (the first step before acting, a replay). `frames` are consecutive frames of the episode
/// (LivePlayer::frames(from)) that hold the step before `shown`.
[[nodiscard]] FramePtr acted_window(const std::vector<FramePtr>& frames, const FramePtr& shown);

/// What the interventions in force changed in `frame`'s action, joint by joint (action minus
/// action_without); `act_dim` zeros when it has not acted or kept no plain action.
[[nodiscard]] std::vector<double> action_change(const PlayerFrame& frame, int act_dim);
/// By step, the distance ||a_fork - a_main|| between two runs' actions, NaN where either has not
/// acted (frames consecutive from step 0, `fork` as long as it is).
[[nodiscard]] std::vector<double> action_difference(const std::vector<FramePtr>& fork,
                                                    const std::vector<FramePtr>& main);
/// By step, one coordinate of the body (qpos[qpos_index], env::joint_coordinates), NaN where a
/// frame has no such coordinate.
[[nodiscard]] std::vector<double> joint_trace(const std::vector<FramePtr>& frames, int qpos_index);

struct LoadedCheckpoint;

/// A policy playing one episode, on the calling thread.
class EpisodePlayer {
 public:
  /// Loads the checkpoint's model and its environment (`env_id` overrides the checkpoint's).
  /// Throws CheckpointError or env::EnvError naming what does not fit.
  explicit EpisodePlayer(const std::filesystem::path& checkpoint, const std::string& env_id = {});
  /// The same with a checkpoint read already (checkpoint_model.h's open_checkpoint): its model is
  /// shared, not read again. Only this player may run it while the player lives.
  explicit EpisodePlayer(const std::shared_ptr<const LoadedCheckpoint>& checkpoint,
                         const std::string& env_id = {});
  /// Replays episode `episode` of a dataset from its `infos/qpos` and `infos/qvel`: every frame
  /// is kept from the start, with the recorded actions and rewards and the episode's own
  /// returns-to-go; no policy acts, so step() and branch() do nothing. Throws Error when the
  /// dataset has no simulator states, names no environment, or its states do not fit the
  /// environment, and UsageError for an episode it does not have.
  static std::unique_ptr<EpisodePlayer> replay(const data::Dataset& dataset, int episode);
  /// A behaviour policy (behaviour/mlp_policy.h: the DAPG expert of an Adroit task, or a D4RL
  /// file's metadata/policy) playing `env_id` with its mean action clipped to [-1, 1], as D4RL's
  /// expert script's evaluation mode and score_adroit_expert with the mean play it. Every frame is
  /// kept as for a checkpoint, without mixing to inspect (no attention); the target a frame carries
  /// conditions nothing, and interventions are refused. `name` says which policy it is ("dapg",
  /// the file) as info().path. Throws Error when the policy does not fit the task.
  static std::unique_ptr<EpisodePlayer> behaviour(const behaviour::MlpPolicy& policy,
                                                  const std::string& env_id,
                                                  const std::string& name);
  ~EpisodePlayer();
  EpisodePlayer(const EpisodePlayer&) = delete;
  EpisodePlayer& operator=(const EpisodePlayer&) = delete;

  /// A new episode reset with `seed` (as rollout's episode with that seed), aiming at `target`.
  void reset(std::uint64_t seed, double target, ModalityZeroing zeroing = ModalityZeroing::None);
  /// Acts at the last frame and steps the simulator. Returns false, doing nothing, once the
  /// episode has ended.
  bool step();
  /// Keeps frames [0, frame] and re-conditions `frame`: the target becomes `target` (the
  /// return-to-go there is target minus the return so far) and `zeroing` applies from it on.
  /// Stepping then continues from that frame's physics state exactly. The interventions in force
  /// stay.
  void branch(int frame, double target, ModalityZeroing zeroing);
  /// The same with `interventions` (specs; head, mixer and MLP zero or mean ablations, context,
  /// modality and steering) in force from `frame` on, replacing those before. A spec that does
  /// not parse or fit the model, or needs a second input (resample, patch), is refused with a
  /// UsageError naming it before anything changes. Mean ablations take their means over the
  /// checkpoint's dataset (read once); steering reads its direction file.
  void branch(int frame, double target, ModalityZeroing zeroing,
              const std::vector<std::string>& interventions);
  /// A second player continuing this episode from `frame` (clamped to the frames kept): frames
  /// [0, frame] and the histories are copied, the model and the compiled physics shared, the
  /// conditioning in force kept. It plays on independently (re-condition it with branch()); a
  /// fork with the same settings plays exactly what this player plays from `frame`. Only one
  /// thread may run the two at a time (they share the model).
  [[nodiscard]] std::unique_ptr<EpisodePlayer> fork(int frame) const;
  /// Takes over `from`'s episode at `frame` with this player's own policy (another checkpoint of
  /// the same task, or a behaviour policy, which needs no context): frames [0, frame], the
  /// simulation state and the context are copied (the context normalised with this checkpoint's
  /// statistics), the target and zeroing kept, the interventions dropped (they belonged to the
  /// other model). From `frame` on this policy acts. Throws UsageError for a replay or a player of
  /// another task.
  void continue_from(const EpisodePlayer& from, int frame);
  /// Whether steps keep the mixing of their window (inspection, entropy; on by default). Off, the
  /// player computes the same actions, bit for bit, without copying the mixing out.
  void set_inspection(bool on);
  /// Whether steps with interventions or zeroing in force also compute the plain action
  /// (PlayerFrame::action_without: a second forward pass). On by default.
  void set_plain_actions(bool on);
  /// Checks `interventions` as branch() does, against `config`, without playing.
  static void check_interventions(const std::vector<std::string>& interventions,
                                  const VariantConfig& config);

  [[nodiscard]] const std::vector<FramePtr>& frames() const { return frames_; }
  [[nodiscard]] bool finished() const { return !frames_.empty() && frames_.back()->terminal; }
  /// A dataset replay (no policy).
  [[nodiscard]] bool isReplay() const;
  /// A behaviour policy plays (behaviour()), not a checkpoint.
  [[nodiscard]] bool isBehaviour() const;
  [[nodiscard]] std::uint64_t seed() const { return seed_; }
  [[nodiscard]] const CheckpointInfo& info() const;
  [[nodiscard]] const VariantConfig& config() const;
  [[nodiscard]] const env::EnvironmentDefinition& task() const;
  /// The compiled MuJoCo model, shared (e.g. with a renderer).
  [[nodiscard]] const env::ModelPtr& physics_model() const;
  /// Simulated seconds per step.
  [[nodiscard]] double dt() const;

 private:
  EpisodePlayer();
  bool step_behaviour();
  struct State;
  std::unique_ptr<State> s_;
  std::vector<FramePtr> frames_;
  std::uint64_t seed_ = 0;
};

/// A fork of `main`'s episode at frame `at` (clamped to its frames) with `change`, as LivePlayer
/// makes its branches: `other` (another checkpoint's player, for a `checkpoint=` change, or a
/// behaviour policy's, for a `behaviour=` change) takes the
/// episode over, else a copy of `main` that keeps no mixing; then the target, zeroing and
/// interventions the change asks for apply from `at` on. Throws what the change's parts throw.
std::shared_ptr<EpisodePlayer> make_fork(const EpisodePlayer& main, int at,
                                         const BranchChange& change,
                                         std::shared_ptr<EpisodePlayer> other = {});

/// The steps of `frames` (consecutive from step 0) where the conditioning changed, the first
/// frame's always: what replay_conditions plays again.
std::vector<StepConditions> condition_changes(const std::vector<FramePtr>& frames);
/// Plays a new episode of `player` with `seed`, conditioned from each step of `changes` (sorted,
/// the first at step 0) as given, until it keeps `frames` frames or the episode ends. A run a
/// viewer played, re-conditioned on the way (LivePlayer's set_target, set_zeroing and
/// set_interventions at those steps), is played again exactly. Polls `progress`.
void replay_conditions(EpisodePlayer& player, std::uint64_t seed,
                       const std::vector<StepConditions>& changes, int frames,
                       const Progress& progress = {});

/// What a LivePlayer shows at one moment.
struct PlaybackState {
  int cursor = 0;  ///< the frame on screen
  int frames = 0;  ///< frames kept
  bool playing = false;
  bool finished = false;  ///< the episode has ended (its last frame is terminal)
  double speed = 1.0;     ///< times real time; 0 as fast as the policy goes
  std::uint64_t seed = 0;
  std::uint64_t generation = 0;  ///< grows when kept frames are dropped (branch or restart)
  FramePtr frame;                ///< the frame at the cursor
  std::string error;             ///< why the player stopped, when it failed
  bool busy = false;             ///< a step or a request is under way, or waits to be taken up
  /// Each branch's frame at the cursor (its last, when it ended before), in branch order.
  std::vector<FramePtr> branch_frames;
  std::uint64_t branch_generation = 0;  ///< grows when a branch is made, removed or re-made
  std::string fork_error;               ///< why the last fork could not be made, if it failed
  /// The episode has ended and its last frame is on screen: nothing follows to play or record.
  [[nodiscard]] bool at_end() const { return finished && cursor + 1 >= frames; }
};

/// One counterfactual branch beside a LivePlayer's main run.
struct BranchInfo {
  int fork_step = 0;       ///< the step it was forked at (rewinding goes back here)
  std::string label;       ///< the change, as given ("target=1800", "head:2.1=zero")
  std::string checkpoint;  ///< the policy playing it, when another checkpoint took over
  int frames = 0;          ///< frames kept, the copied ones before the fork included
  bool finished = false;   ///< its episode has ended
  BranchChange change;     ///< the change itself (change_text writes it for --fork)
};

/// An EpisodePlayer on its own thread, with up to kMaxBranches counterfactual forks of it played on
/// the same clock: every step of the cursor steps every branch that has not reached it (all on
/// the player thread, which shares one model between the main run and its forks). Forks of the
/// same policy keep no mixing (EpisodePlayer::set_inspection(false)) but act exactly as the main
/// run does: a fork that changes nothing plays the main run's episode; a fork another checkpoint
/// takes over keeps its mixing, to be shown beside the main run's. Every method
/// may be called from any thread and returns at once; requests take effect between steps.
class LivePlayer {
 public:
  /// Takes the player, which only the player thread touches from now on (reset or not: a new
  /// episode with seed 0 at the task's first default target starts when it has no frames).
  explicit LivePlayer(std::shared_ptr<EpisodePlayer> player);
  /// Stops the thread (within one step).
  ~LivePlayer();
  LivePlayer(const LivePlayer&) = delete;
  LivePlayer& operator=(const LivePlayer&) = delete;

  void play();
  void pause();
  /// Pauses and moves one frame on, acting when the cursor is at the newest frame.
  void step_forward();
  /// Pauses and moves one frame back.
  void step_back();
  /// Pauses and shows `frame` (clamped to the frames kept).
  void seek(int frame);
  /// Times real time (simulated dt per step); 0 runs as fast as the policy goes.
  void set_speed(double speed);
  /// New target return from the frame on screen now on (frames after it are dropped), even if the
  /// cursor moves before the player thread gets to it; the cursor then returns to that frame.
  void set_target(double target);
  /// New modality zeroing from the frame on screen now on, as set_target.
  void set_zeroing(ModalityZeroing zeroing);
  /// New interventions inside the forward pass from the frame on screen now on, as set_target
  /// (EpisodePlayer::branch). Throws UsageError at once for a spec it refuses; one that fails
  /// later (a dataset that cannot be read for a mean) stops the player with its error.
  void set_interventions(const std::vector<std::string>& interventions);
  /// A new episode with `seed`, keeping the target and zeroing. Its branches are dropped.
  void restart(std::uint64_t seed);

  /// Forks the main run at `step` with `change` (playback.h): the branch copies the simulation
  /// state and context there and plays on the same clock. A step the main run has not reached
  /// yet is forked when it gets there (should the episode end at or before it, the fork is not
  /// made and fork_error says why). What can be checked here is, at once: a change that does not
  /// fit (an intervention the model refuses, a checkpoint that cannot be read or is of another
  /// task), a step at or after the end of an episode that has ended (nothing follows its last
  /// state) or a fork beyond kMaxBranches throws UsageError, CheckpointError or env::EnvError;
  /// the fork is then made between steps.
  void fork(int step, const BranchChange& change);
  /// Whether the main run and the branches compute the plain action beside an intervened one
  /// (EpisodePlayer::set_plain_actions; on by default), from the next step on. A viewer turns it
  /// on only while it draws the effect: it costs a second forward pass a step.
  void set_plain_actions(bool on);
  /// Drops branch `branch` (0-based, in the order made); the others keep their places.
  void remove_branch(int branch);
  /// Drops every branch.
  void clear_branches();
  /// The branches as they are now.
  [[nodiscard]] std::vector<BranchInfo> branches() const;
  /// Frames [from, end) of branch `branch` (empty for a branch that does not exist).
  [[nodiscard]] std::vector<FramePtr> branch_frames(int branch, int from = 0) const;

  [[nodiscard]] PlaybackState state() const;
  /// Blocks until `done` holds for the state (checked at once and after every change the player
  /// makes) or `timeout` passes; returns the last state seen. For scripts and tests that act on
  /// what the player did, never on how long it took.
  PlaybackState wait_until(const std::function<bool(const PlaybackState&)>& done,
                           std::chrono::milliseconds timeout) const;
  /// Frames [from, end) as they are now (shared, immutable).
  [[nodiscard]] std::vector<FramePtr> frames(int from = 0) const;
  /// The task, model and timing of the player (fixed for its life).
  [[nodiscard]] const env::EnvironmentDefinition& task() const { return task_; }
  [[nodiscard]] const env::ModelPtr& physics_model() const { return physics_model_; }
  [[nodiscard]] const CheckpointInfo& info() const { return info_; }
  [[nodiscard]] const VariantConfig& config() const { return config_; }
  [[nodiscard]] double dt() const { return dt_; }
  /// Whether it replays a dataset episode (no policy: target and zeroing do nothing).
  [[nodiscard]] bool replay() const { return replay_; }
  /// Whether a behaviour policy plays (no model: target, zeroing and interventions do nothing).
  [[nodiscard]] bool behaviour() const { return behaviour_; }
  /// Target return and zeroing in force for the next step.
  [[nodiscard]] double target() const;
  [[nodiscard]] ModalityZeroing zeroing() const;
  [[nodiscard]] std::vector<std::string> interventions() const;

 private:
  void run();
  struct Shared;
  std::unique_ptr<Shared> s_;
  env::EnvironmentDefinition task_;
  env::ModelPtr physics_model_;
  CheckpointInfo info_;
  VariantConfig config_;
  double dt_ = 0.0;
  bool replay_ = false;
  bool behaviour_ = false;
};

}  // namespace dstudio::models
