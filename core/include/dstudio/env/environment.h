#pragma once
/// \file
/// MuJoCo locomotion environments that match the tasks behind the D4RL datasets (Gym's Hopper-v3,
/// Walker2d-v3 and HalfCheetah-v3): the same observation layout, action bounds, reward,
/// termination, frame skip, reset noise and 1000-step timeout, so a policy trained on a D4RL
/// file can be evaluated here. See docs/environments.md for the facts and where we differ.
///
/// An `Environment` owns one `mjData` on a shared, immutable `mjModel`; `BatchEnvironment` steps
/// many copies in lockstep for batched evaluation. Nothing here is thread-safe on its own: one
/// owner per environment.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "dstudio/common/error.h"

struct mjModel_;
struct mjData_;

namespace dstudio::env {

/// Unknown environments, models that fail to compile, states or actions of the wrong size.
class EnvError : public Error {
 public:
  using Error::Error;
};

/// Everything that defines one task besides its MJCF model.
struct TaskSpec {
  std::string name;        ///< "hopper", "walker2d", "halfcheetah", or one of those with "-po"
  std::string model_file;  ///< path under resources/, e.g. "environments/hopper.xml"
  int obs_dim = 0, act_dim = 0, nq = 0, nv = 0;
  int frame_skip = 1;
  int max_episode_steps = 1000;
  /// reward = forward_weight * dx/dt + healthy_reward - ctrl_cost * |a|^2
  double forward_weight = 1.0, healthy_reward = 0.0, ctrl_cost = 0.0;
  bool clip_qvel = false;   ///< observations clip qvel to [-10, 10]
  bool terminates = false;  ///< the episode ends when the state leaves the healthy set
  /// Healthy set (open intervals): z = qpos[1], angle = qpos[2]; when `state_bound` > 0, also
  /// every value of qpos[2:] and qvel inside (-state_bound, state_bound).
  double min_z = -1e300, max_z = 1e300, min_angle = -1e300, max_angle = 1e300, state_bound = 0.0;
  /// Reset: qpos0 + U(-qpos_noise, qpos_noise); qvel + U(-qvel_noise, qvel_noise), or
  /// qvel_noise * N(0, 1) when `normal_qvel_noise`.
  double qpos_noise = 0.0, qvel_noise = 0.0;
  bool normal_qvel_noise = false;
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
};

/// The task called `name` (case-insensitive; "HalfCheetah", "hopper-medium-v2" and
/// "Hopper-v3" also resolve). Throws EnvError naming the known tasks.
const TaskSpec& task(std::string_view name);
/// Names of every task, in a fixed order.
std::vector<std::string> task_names();
/// D4RL's normalised score: 100 * (return - ref_min) / (ref_max - ref_min).
double normalized_score(const TaskSpec& spec, double episode_return);

/// An immutable compiled MuJoCo model shared by any number of environments.
using ModelPtr = std::shared_ptr<const mjModel_>;
/// Compiles the task's embedded MJCF (or `mjcf` when given) and checks its dimensions against
/// the task. Throws EnvError with MuJoCo's message when it does not compile.
ModelPtr load_model(const TaskSpec& spec, const std::filesystem::path& mjcf = {});

/// A joint with one coordinate (hinge or slide): its name and where that coordinate is in qpos.
struct JointCoordinate {
  std::string name;
  int qpos_index = 0;
};
/// The model's hinge and slide joints in model order (the hopper: rootx, rootz, rooty,
/// thigh_joint, leg_joint, foot_joint); an unnamed joint is called "joint N".
std::vector<JointCoordinate> joint_coordinates(const mjModel_* model);

/// What one step produced.
struct StepResult {
  double reward = 0.0;
  bool terminated = false;  ///< left the healthy set
  bool truncated = false;   ///< reached max_episode_steps without terminating
};

/// Everything that determines how an environment continues: restoring it and stepping with the
/// same actions reproduces the same trajectory bit for bit (the solver's warm start included).
struct PhysicsState {
  std::vector<double> qpos, qvel, qacc_warmstart, ctrl;
  double time = 0.0;
  int elapsed_steps = 0;
};

/// One environment: a MuJoCo state, its task, and a step counter.
class Environment {
 public:
  /// The named task on its embedded model.
  explicit Environment(std::string_view name);
  /// `spec` on an already compiled model (several environments may share one).
  Environment(const TaskSpec& spec, ModelPtr model);
  ~Environment();
  Environment(Environment&&) noexcept;
  Environment& operator=(Environment&&) noexcept;
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

  [[nodiscard]] const TaskSpec& spec() const { return spec_; }
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
  /// The full state, for stepping back and branching (see PhysicsState).
  [[nodiscard]] PhysicsState save_state() const;
  /// Restores a state saved from an environment of the same task; throws EnvError on a size
  /// mismatch.
  void restore_state(const PhysicsState& state);
  /// Whether the current state is in the healthy set.
  [[nodiscard]] bool healthy() const;
  [[nodiscard]] int elapsed_steps() const { return steps_; }
  [[nodiscard]] std::span<const double> qpos() const;
  [[nodiscard]] std::span<const double> qvel() const;

  [[nodiscard]] const mjModel_* model() const { return model_.get(); }
  [[nodiscard]] const mjData_* data() const { return data_; }
  [[nodiscard]] const ModelPtr& shared_model() const { return model_; }

 private:
  TaskSpec spec_;
  ModelPtr model_;
  mjData_* data_ = nullptr;
  int steps_ = 0;
};

/// Many copies of one task stepped in lockstep, for evaluation with one batched policy call per
/// step. Copies whose episode has ended are left alone until the next reset.
class BatchEnvironment {
 public:
  BatchEnvironment(std::string_view name, int copies);

  [[nodiscard]] int size() const { return static_cast<int>(envs_.size()); }
  [[nodiscard]] const TaskSpec& spec() const { return envs_.front().spec(); }
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
