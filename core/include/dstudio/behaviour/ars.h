#pragma once
/// \file
/// Augmented Random Search (Mania, Guy and Recht 2018, version V2-t) for the behaviour policies.
///
/// Why ARS rather than SAC (D4RL's original): linear policies trained by ARS reach expert returns
/// on these tasks in minutes of CPU on two cores, need no neural-network library, are tiny to
/// ship (a few hundred numbers), and replay deterministically. Its learning curve also yields the
/// medium policy (a snapshot at about a third of the expert return) and the medium-replay data
/// (the snapshots seen before it) the way D4RL's recipe asks.
///
/// Training is deterministic for a seed whatever the thread count: every rollout draws from its
/// own derived seed and the observation statistics are merged in a fixed order.

#include <cstdint>
#include <string>
#include <vector>

#include "dstudio/behaviour/linear_policy.h"
#include "dstudio/common/progress.h"

namespace dstudio::behaviour {

/// ARS hyperparameters; the defaults per task come from `ars_defaults`.
struct ArsConfig {
  std::string env;
  int directions = 8;         ///< N: perturbation directions per iteration
  int top_directions = 4;     ///< b: best directions used in the update
  double step_size = 0.02;    ///< alpha
  double exploration = 0.03;  ///< nu: perturbation scale
  double reward_shift = 0.0;  ///< subtracted from every training reward (removes the alive bonus)
  int max_iterations = 1000;
  double target_return = 0.0;  ///< stop once the evaluated return reaches this (0: never)
  int eval_every = 5;          ///< iterations between evaluations (each one is a snapshot)
  int eval_episodes = 5;
  int threads = 2;
  std::uint64_t seed = 1;
};

/// The hyperparameters of the ARS paper (Table 9, V2-t) for `env`, with the project's targets.
ArsConfig ars_defaults(const std::string& env);

/// A policy at one point of training.
struct Snapshot {
  int iteration = 0;
  std::int64_t env_steps = 0;  ///< environment steps used by training so far
  double eval_return = 0.0;    ///< mean deterministic return over eval_episodes
  LinearPolicy policy;
};

/// Everything a training run leaves: its configuration, its learning curve as snapshots, and the
/// snapshots chosen as the medium and expert behaviour policies.
struct ArsRun {
  ArsConfig config;
  std::vector<Snapshot> snapshots;
  int medium = -1;      ///< first snapshot reaching a third of the expert's return
  int expert = -1;      ///< the best snapshot
  std::string command;  ///< the command line that produced this run
};

/// Trains a linear policy on `config.env`. Progress reports iterations; cancelling throws.
ArsRun train_ars(const ArsConfig& config, const Progress& progress = {});

/// Mean undiscounted return of `policy` over `episodes` episodes with seeds derived from `seed`;
/// `noise_std` > 0 acts as the stochastic behaviour policy.
double evaluate_policy(const std::string& env, const LinearPolicy& policy, int episodes,
                       std::uint64_t seed, double noise_std = 0.0);

/// Chooses `medium` and `expert` in `run` from its snapshots.
void choose_medium_and_expert(ArsRun& run);

/// JSON text of a run (full double precision, so a saved run replays bit for bit) and back.
std::string to_json(const ArsRun& run);
ArsRun ars_run_from_json(const std::string& text);

/// The behaviour policies shipped for `env` (resources/policies/<env>.json). Throws
/// std::runtime_error when none ship for that environment.
ArsRun shipped_policies(const std::string& env);

}  // namespace dstudio::behaviour
