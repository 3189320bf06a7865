#pragma once
/// \file
/// MuJoCo environments that match the tasks behind the D4RL datasets (Gym's Hopper-v3, Walker2d-v3
/// and HalfCheetah-v3; D4RL's antmaze-*-v2): the same observation layout, action bounds, reward,
/// termination, frame skip, reset noise and timeout, so a policy trained on a D4RL file can be
/// evaluated here. Each task is an `EnvironmentDefinition` in the `environments()` registry. See
/// docs/environments.md for the facts and where we differ.
///
/// An `Environment` owns one `mjData` on a shared, immutable `mjModel`; `BatchEnvironment` steps
/// many copies in lockstep for batched evaluation. Nothing here is thread-safe on its own: one
/// owner per environment.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "dstudio/common/error.h"
#include "dstudio/common/random.h"
#include "dstudio/common/registry.h"

struct mjModel_;
struct mjData_;

namespace dstudio::env {

/// Unknown environments, models that fail to compile, states or actions of the wrong size.
class EnvError : public Error {
 public:
  using Error::Error;
};

/// A point the viewers draw beyond the model: a goal, a waypoint.
struct Marker {
  std::string label;  ///< "goal", "waypoint"
  double x = 0.0, y = 0.0, z = 0.0;
  double radius = 0.5;
  float rgba[4] = {0.9f, 0.2f, 0.2f, 0.6f};
};

/// Where a viewer's camera starts: a free camera looking at `lookat` (or tracking the first body
/// when `track` is set).
struct CameraDefault {
  double distance = 4.0, azimuth = 90.0, elevation = -20.0;
  double lookat[3] = {0.0, 0.0, 0.5};
  bool track = true;
  /// Whether a viewer may follow the first body on request when `track` is off (a maze's ant);
  /// false for a scene that is one fixed workspace (the hand, the kitchen), where the viewers
  /// keep the task's view and offer no tracking.
  bool followable = true;
};

/// One element of a task done in stages (a kitchen task's microwave, kettle ...), as the viewers
/// list it.
struct SubTask {
  std::string name;       ///< "microwave", "light switch"
  bool done = false;      ///< completed at this state or before it in the episode
  double distance = 0.0;  ///< how far the observed state is from the element's goal
};

/// How far an episode is towards a success counted over its steps, as the viewers show it.
struct SuccessProgress {
  std::string text;  ///< "goal achieved on 14 steps; more than 20 is a success"
  bool success = false;
};

/// What one step produced.
struct StepResult {
  double reward = 0.0;
  bool terminated = false;  ///< the task ended it (a fall, or the goal reached)
  bool truncated = false;   ///< reached max_episode_steps without terminating
  bool success = false;     ///< the task's goal was reached at this step (goal-reaching tasks)
};

/// What a task's functions see of a simulation: the compiled model, its state, and the values
/// of the episode beyond the physics (`task_state`: AntMaze's goal x, y).
struct Simulation {
  const mjModel_* model = nullptr;
  mjData_* data = nullptr;
  std::vector<double>* task_state = nullptr;
};

/// What a step's outcome is computed from besides the state after it.
struct StepContext {
  std::span<const float> action;        ///< as the policy gave it
  std::span<const double> qpos_before;  ///< qpos before the frame_skip physics steps
  int elapsed_steps = 0;                ///< steps of the episode, this one included
};

/// One environment of the studio: a task on a MuJoCo model, as D4RL defines it. The studio's own
/// tasks are entries of `environments()` written the way a plugin writes one (env/locomotion.cpp,
/// env/antmaze.cpp); a plugin adds one with Registrar::add_environment. The numbers say what every
/// view needs to know without running it; the functions are the task.
struct EnvironmentDefinition {
  std::string name;  ///< "hopper", "antmaze-umaze-v2", or one of the locomotion tasks with "-po"
  Origin origin;
  std::string description;  ///< one line, for `dstudio env list`
  std::string family;       ///< "locomotion", "antmaze", or a plugin's
  /// Other names datasets use for this task ("antmaze-umaze-v0"); matched like `name`.
  std::vector<std::string> aliases;
  std::string model_file;  ///< an embedded resource, e.g. "environments/hopper.xml", or
  std::string model_xml;   ///< the MJCF text itself (a generated maze); used when not empty
  /// Embedded files the model reads (included MJCF, meshes, textures), staged beside it by their
  /// file names, as MuJoCo's virtual file system finds them.
  std::vector<std::string> model_assets;
  int obs_dim = 0, act_dim = 0, nq = 0, nv = 0;
  int frame_skip = 1;
  int max_episode_steps = 1000;
  /// A name per observation dimension ("z", "qw", "hip_1", "v_x" ...), obs_dim of them; a
  /// velocity's name starts with v_ (an angular velocity of a free body's with w_), which is how
  /// the probes find the velocities.
  std::vector<std::string> observation_names;
  /// Where the velocities begin in the observation (obs_dim when it holds none).
  int first_velocity = 0;
  /// D4RL's reference returns for the normalised score.
  double ref_min_score = 0.0, ref_max_score = 1.0;
  /// The return-to-go scale and default target returns of the Decision Transformer papers.
  double rtg_scale = 1000.0;
  std::vector<double> default_targets;
  /// The partially observed variant ("hopper-po"): the observation is the positions qpos[1:]
  /// only, the velocities hidden, so one observation no longer determines the next (the state
  /// is not Markov in what the policy sees). The physics and the rewards are the task's own.
  bool positions_only = false;
  /// The fully observed task this one is a view of ("hopper" for "hopper-po"; itself otherwise).
  std::string base;
  /// Whether an episode's return says it reached a goal (a score is then a success rate).
  bool goal_reaching = false;
  /// Whether an episode succeeds or fails beside its return, as StepResult::success says at its
  /// end: AntMaze's goal reached, Adroit's goal achieved for more than 20 (pen) or 25 steps.
  /// Every goal-reaching task does.
  bool reports_success = false;
  /// Values per episode beyond the physics (AntMaze: the goal's x and y).
  int task_state_size = 0;
  CameraDefault camera;

  /// Sets the episode's first state on `sim` (MuJoCo's data is reset to qpos0 before) and its
  /// task state, drawing all noise from `random`. Required.
  std::function<void(Simulation& sim, Random& random)> reset;
  /// Writes the observation of the current state. Required.
  std::function<void(const Simulation& sim, std::span<float> obs)> observe;
  /// Turns the policy's action (checked finite, act_dim values) into controls. When empty the
  /// action is copied into ctrl as it is (MuJoCo clamps it to ctrlrange).
  std::function<void(std::span<const float> action, Simulation& sim)> apply_action;
  /// Reward and termination of the step that led to `sim`'s state. Required.
  std::function<StepResult(const Simulation& sim, const StepContext& step)> outcome;
  /// Whether a state is inside the task's healthy set; empty: every state is.
  std::function<bool(const Simulation& sim)> healthy;
  /// How far an observation is from the task's goal (AntMaze: its x, y from the evaluation goal's
  /// nominal centre), for views that colour by it; empty for a task without a goal.
  std::function<double(std::span<const float> observation)> goal_distance;
  /// Writes the episode's values into the model, for a task that keeps them there as D4RL does
  /// (Adroit: the pen's target orientation, the door's frame, the hammer's board, the object and
  /// target of the relocation, moved per episode). An environment of such a task owns a copy of
  /// the model, configured at every reset and whenever its task state is set or restored; a
  /// viewer applies it to the model it draws. Empty: one model serves every episode.
  std::function<void(mjModel_* model, std::span<const double> task_state)> configure_model;
  /// D4RL's get_env_state() beyond qpos and qvel, by key (pen: "desired_orien"), as its datasets
  /// record it under infos/ at every step: what a dataset the studio makes records too. Empty:
  /// nothing beyond qpos and qvel.
  std::function<std::map<std::string, std::vector<double>>(const Simulation& sim)> recorded_state;
  /// The task state of a recorded episode, for replaying it: from its first step's qpos,
  /// observation and recorded infos (by key without "infos/"; a key the file lacks is absent).
  /// The first step, since an observation taken after the physics steps, without a forward pass,
  /// holds positions one physics step behind its qpos; a reset's does not. Returns
  /// task_state_size values, the episode's for every step. Empty: the task state is infos/goal
  /// as it is (AntMaze), or zeros.
  std::function<std::vector<double>(const mjModel_* model, std::span<const double> qpos,
                                    std::span<const float> observation,
                                    const std::map<std::string, std::span<const float>>& infos)>
      replayed_task_state;
  /// What the viewers draw at a state beyond the model: the episode's goal, and where a planner
  /// would send the body next ("waypoint": AntMaze's navigator, drawn when a dataset episode is
  /// replayed). Empty: nothing.
  std::function<std::vector<Marker>(std::span<const double> qpos,
                                    std::span<const double> task_state)>
      markers;
  /// The task's elements at a state, in the task's order, for the viewers' list: each done when
  /// the task state says it was completed earlier in the episode or the observation is within the
  /// task's threshold of its goal now (the kitchen: 0.3). A replayed episode carries no task state,
  /// so a viewer keeps an element done from the step it was first done (accumulate_subtasks).
  /// Empty: a task of one stage.
  std::function<std::vector<SubTask>(std::span<const float> observation,
                                     std::span<const double> task_state)>
      subtasks;
  /// A line the viewers show for a task whose success is counted over the episode, from the
  /// task state at a step (Adroit: "goal achieved on 14 steps; more than 20 is a success").
  /// Empty: none.
  std::function<SuccessProgress(std::span<const double> task_state)> progress;
};

/// `so_far` with every element of `now` that is done marked done (an element once done stays
/// done, as D4RL's kitchen pays each once), and `now`'s distances; `now` itself when `so_far`
/// holds other elements.
void accumulate_subtasks(std::vector<SubTask>& so_far, const std::vector<SubTask>& now);

/// The environments the studio simulates: its own (registered on first use) and plugins'.
Registry<EnvironmentDefinition>& environments();

/// The task called `name` (case-insensitive; "HalfCheetah", "hopper-medium-v2", "Hopper-v3" and a
/// definition's aliases also resolve: the longest name or alias that prefixes `name` once
/// both are reduced to letters and digits and a trailing version is dropped, and that ends a
/// word of `name`: "pen-expert-v1" is pen, "pendulum" is not). Throws EnvError
/// naming the known tasks. The reference stays valid while the task is registered.
const EnvironmentDefinition& task(std::string_view name);
/// The task called `name`, or null.
std::shared_ptr<const EnvironmentDefinition> find_task(std::string_view name);
/// Names of every task, in the registry's order (views such as "hopper-po" included).
std::vector<std::string> task_names();
/// D4RL's normalised score: 100 * (return - ref_min) / (ref_max - ref_min).
double normalized_score(const EnvironmentDefinition& spec, double episode_return);
/// Checks a definition before it is registered: its functions, its dimensions, and its names of
/// observation dimensions. Throws UsageError saying what is missing.
void validate(const EnvironmentDefinition& definition);

/// An immutable compiled MuJoCo model shared by any number of environments.
using ModelPtr = std::shared_ptr<const mjModel_>;
/// Compiles the task's embedded MJCF (or `mjcf` when given) and checks its dimensions against
/// the task. Throws EnvError with MuJoCo's message when it does not compile.
ModelPtr load_model(const EnvironmentDefinition& spec, const std::filesystem::path& mjcf = {});

/// A joint with one coordinate (hinge or slide): its name and where that coordinate is in qpos.
struct JointCoordinate {
  std::string name;
  int qpos_index = 0;
};
/// The model's hinge and slide joints in model order (the hopper: rootx, rootz, rooty,
/// thigh_joint, leg_joint, foot_joint); an unnamed joint is called "joint N".
std::vector<JointCoordinate> joint_coordinates(const mjModel_* model);

/// Everything that determines how an environment continues: restoring it and stepping with the
/// same actions reproduces the same trajectory bit for bit (the solver's warm start included).
struct PhysicsState {
  std::vector<double> qpos, qvel, qacc_warmstart, ctrl;
  std::vector<double> task_state;  ///< the episode's values beyond the physics (a goal)
  double time = 0.0;
  int elapsed_steps = 0;
};

/// One environment: a MuJoCo state, its task, and a step counter.
class Environment {
 public:
  /// The named task on its embedded model.
  explicit Environment(std::string_view name);
  /// `spec` on an already compiled model (several environments may share one; a task with
  /// `configure_model` takes its own copy of it).
  Environment(const EnvironmentDefinition& spec, ModelPtr model);
  ~Environment();
  Environment(Environment&&) noexcept;
  Environment& operator=(Environment&&) noexcept;
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

  [[nodiscard]] const EnvironmentDefinition& spec() const { return spec_; }
  /// Seconds of simulated time per step (timestep x frame_skip).
  [[nodiscard]] double dt() const;

  /// Resets with the task's noise drawn from `seed`; writes the first observation to `obs`.
  void reset(std::uint64_t seed, std::span<float> obs);
  /// Applies `action` for frame_skip physics steps; writes the next observation to `obs`.
  StepResult step(std::span<const float> action, std::span<float> obs);
  /// Writes the current observation.
  void observe(std::span<float> obs) const;
  /// Sets qpos and qvel (e.g. from a dataset's infos) and recomputes derived quantities.
  void set_state(std::span<const double> qpos, std::span<const double> qvel);
  /// The episode's values beyond the physics (AntMaze: the goal), task_state_size of them.
  [[nodiscard]] std::span<const double> task_state() const { return task_state_; }
  /// Sets them (a dataset episode's goal); throws EnvError on a size mismatch.
  void set_task_state(std::span<const double> values);
  /// The full state, for stepping back and branching (see PhysicsState).
  [[nodiscard]] PhysicsState save_state() const;
  /// Restores a state saved from an environment of the same task; throws EnvError on a size
  /// mismatch.
  void restore_state(const PhysicsState& state);
  /// Whether the current state is in the task's healthy set (always, for a task without one).
  [[nodiscard]] bool healthy() const;
  [[nodiscard]] int elapsed_steps() const { return steps_; }
  [[nodiscard]] std::span<const double> qpos() const;
  [[nodiscard]] std::span<const double> qvel() const;
  /// What a D4RL file records of the current state beyond qpos and qvel
  /// (EnvironmentDefinition::recorded_state); empty for a task that records nothing more.
  [[nodiscard]] std::map<std::string, std::vector<double>> recorded_state() const;

  /// The model this environment steps: the shared one, or its own copy configured for the
  /// episode (EnvironmentDefinition::configure_model).
  [[nodiscard]] const mjModel_* model() const { return model_.get(); }
  [[nodiscard]] const mjData_* data() const { return data_; }
  [[nodiscard]] const ModelPtr& shared_model() const { return model_; }

 private:
  [[nodiscard]] Simulation simulation() const;
  // Writes the task state into the environment's own model, for a task that keeps it there.
  void configure();

  EnvironmentDefinition spec_;
  ModelPtr model_;
  mjModel_* own_model_ = nullptr;  // model_'s copy, when the task configures it per episode
  mjData_* data_ = nullptr;
  int steps_ = 0;
  std::vector<double> task_state_;
  std::vector<double> qpos_before_;
};

/// Many copies of one task stepped in lockstep, for evaluation with one batched policy call per
/// step. Copies whose episode has ended are left alone until the next reset.
class BatchEnvironment {
 public:
  BatchEnvironment(std::string_view name, int copies);

  [[nodiscard]] int size() const { return static_cast<int>(envs_.size()); }
  [[nodiscard]] const EnvironmentDefinition& spec() const { return envs_.front().spec(); }
  /// Resets copy i with seeds[i]; observations (copies x obs_dim) go to `obs`.
  void reset(std::span<const std::uint64_t> seeds, std::span<float> obs);
  /// Steps every running copy with its row of `actions` (copies x act_dim). Rewards of finished
  /// copies are 0. Returns how many copies are still running.
  int step(std::span<const float> actions, std::span<float> obs, std::span<double> rewards);
  [[nodiscard]] bool running(int i) const { return running_[static_cast<std::size_t>(i)]; }
  /// How the episode of copy i ended (valid once it is no longer running).
  [[nodiscard]] const StepResult& last(int i) const { return last_[static_cast<std::size_t>(i)]; }
  [[nodiscard]] Environment& at(int i) { return envs_[static_cast<std::size_t>(i)]; }

 private:
  std::vector<Environment> envs_;
  std::vector<char> running_;
  std::vector<StepResult> last_;
};

}  // namespace dstudio::env
