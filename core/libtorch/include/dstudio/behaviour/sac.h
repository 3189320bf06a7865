#pragma once
/// \file
/// Soft Actor-Critic (Haarnoja et al. 2018, with the learned temperature of the second paper), the
/// algorithm that trained D4RL's behaviour policies, on LibTorch. A tanh-squashed Gaussian actor
/// and two Q critics with Polyak-averaged targets, all two hidden layers of 256 ReLU units;
/// Adam at 3e-4; discount 0.99; target rate 0.005; batch 128; target entropy -|A|; one update per
/// environment step after a warm-up of uniformly random actions. Time-limit ends bootstrap, only
/// true terminations cut the return.
///
/// A run lives in a folder and can be stopped and resumed exactly: the networks, optimisers,
/// replay buffer, environment state and every random stream go into a checkpoint there, so a
/// resumed run takes the same steps as one that never stopped (for the same thread count). A folder
/// that kept its checkpoint but lost its replay buffer (replay.bin, the one large file) continues
/// too, from an empty buffer that the actor refills before learning resumes; state.json records
/// the steps where that happened, since such a run is no longer exactly reproducible. Every
/// `eval_every` steps the actor is rounded to half precision, evaluated as it will ship (mean
/// action and sampled), and kept as a snapshot of the learning curve.
///
/// The header needs no LibTorch; the implementation is part of the models library.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>

#include "dstudio/behaviour/policy_set.h"
#include "dstudio/common/progress.h"

namespace dstudio::behaviour {

struct SacConfig {
  std::string env;
  std::int64_t total_steps = 1'000'000;  ///< environment steps (and updates) of the whole run
  int hidden = 256;
  int batch = 128;  ///< rlkit uses 256; 128 halves the cost of an update (docs/environments.md)
  double lr = 3e-4;
  double gamma = 0.99;
  double tau = 0.005;
  std::int64_t random_steps = 10'000;  ///< uniformly random actions before the actor acts
  std::int64_t replay_size = 1'000'000;
  std::int64_t eval_every = 5'000;
  int eval_episodes = 5;
  std::int64_t checkpoint_every = 25'000;
  int threads = 1;
  std::uint64_t seed = 0;
  /// Subtracted from the reward on every step the ant's torso faces down (antmaze tasks only; 0:
  /// the task's own reward). A penalty, not an ended episode: with a reward of -distance, ending
  /// early would pay.
  double upturn_penalty = 0.0;
  /// Whether turning over ends the episode (antmaze tasks only). Its last step then pays what the
  /// upturned ant would have earned from there on: (reward - upturn_penalty) / (1 - gamma), the
  /// value of lying still at that distance, so ending is never the better way out.
  bool upturn_ends = false;
  /// A run folder whose networks, optimisers, temperature and, when it still has it, replay
  /// buffer a new run starts from, e.g. the goal-reacher refined on another task with the same
  /// observation and action (its buffer's transitions are still true ones of the new task's
  /// physics). Empty: from scratch.
  std::string start_from;
  bool operator==(const SacConfig&) const = default;
};

/// What a run folder holds: its configuration, how far it got, its learning curve as snapshots.
struct SacRun {
  SacConfig config;
  std::int64_t steps = 0;  ///< environment steps taken
  PolicySet policies;      ///< every snapshot so far, medium and expert not yet chosen
  std::string command;
};

/// Trains (or, when `folder` holds a checkpoint, continues) until `config.total_steps` or until
/// `stop_at` steps in this call (0: no limit), saving a checkpoint then and every
/// `checkpoint_every` steps. Cancelling saves a checkpoint and throws `Cancelled`. A folder whose
/// checkpoint has a different configuration is refused with the difference named.
SacRun train_sac(const SacConfig& config, const std::filesystem::path& folder,
                 std::int64_t stop_at = 0, const Progress& progress = {},
                 const std::string& command = {});

/// What SAC learns from a step that left the simulation at `qpos`.
struct LearnedStep {
  double reward = 0.0;
  bool terminal = false;  ///< the return is cut here (no bootstrap from the next state)
};

/// The task's `reward` and end, less `config.upturn_penalty` when the ant's torso faces down, and
/// with `config.upturn_ends` ended there with the value of staying down.
LearnedStep learned_step(const SacConfig& config, std::span<const double> qpos, double reward,
                         bool terminated);

/// Reads the run in `folder` (its snapshots and configuration) without the networks.
SacRun read_sac_run(const std::filesystem::path& folder);

/// Chooses what ships from a finished run's snapshots: the expert is the snapshot with the best
/// sampled return over `episodes` fresh episodes among the `candidates` best of the curve; medium
/// is the first snapshot from `medium_after` steps on whose sampled return reaches
/// `medium_fraction` of the expert's (a curve can reach it early with a different gait, e.g. a
/// hopper standing still for 1000 steps); replay holds `replay_count` snapshots spread evenly over
/// the steps before medium, then medium. `expert_score`, when given, ranks the candidates instead
/// of their fresh return (ties by the return): the goal-reacher's is how often it takes the ant
/// through a maze, which its training return only hints at.
PolicySet choose_shipped_policies(
    const SacRun& run, int episodes = 20, int candidates = 8, double medium_fraction = 1.0 / 3.0,
    int replay_count = 4, int threads = 2, const Progress& progress = {},
    std::int64_t medium_after = 0,
    const std::function<double(const PolicySet&, int)>& expert_score = {});

}  // namespace dstudio::behaviour
