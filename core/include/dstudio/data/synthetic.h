#pragma once
/// \file
/// Deterministic synthetic datasets in the D4RL layout, with hopper's shapes by default.
///
/// They are not physics: states follow a damped random walk, actions a fixed linear-tanh policy of
/// the state plus noise, and rewards grow with each episode's hidden skill. Episodes end by a
/// terminal (the walk leaves a band) or by the 1000-step timeout, and the file ends with an
/// unterminated tail, so every part of the dataset layer has something to show. The same
/// specification always gives the same bytes.

#include <cstdint>
#include <map>
#include <string>

#include "dstudio/data/dataset.h"

namespace dstudio::data {

/// What to generate.
struct SyntheticSpec {
  std::int64_t transitions = 20000;
  std::int64_t obs_dim = 11;
  std::int64_t act_dim = 3;
  std::int64_t qpos_dim = 6;
  std::int64_t qvel_dim = 6;
  std::int64_t max_episode_steps = 1000;
  std::int64_t tail_steps = 37;  ///< steps after the last episode boundary
  std::uint64_t seed = 0;
};

/// Generates the arrays (with next_observations and infos) described by `spec`.
TransitionArrays make_synthetic(const SyntheticSpec& spec);

/// The metadata written with a synthetic dataset (generator, seed, shapes).
std::map<std::string, std::string> synthetic_metadata(const SyntheticSpec& spec);

}  // namespace dstudio::data
