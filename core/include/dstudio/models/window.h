#pragma once
/// \file
/// A window of K steps and what a model's inspection shows on it: plain data, shared by the
/// analyses in core and the models library that cuts and inspects windows (windows.h).

#include <cstdint>
#include <vector>

#include "dstudio/analysis/attention_maps.h"

namespace dstudio::models {

/// K steps ending at `last_step` of an episode; left-padded (mask 0) when the episode is younger.
struct Window {
  int steps = 0;  ///< K
  int state_dim = 0, act_dim = 0;
  int episode = -1;                     ///< index in the dataset, or in the rollout
  int last_step = 0;                    ///< the episode step of the window's last position
  std::vector<float> states;            ///< K x S
  std::vector<float> actions;           ///< K x A
  std::vector<float> returns_to_go;     ///< K, unscaled
  std::vector<std::int64_t> timesteps;  ///< K
  std::vector<float> mask;              ///< K, 1 for real steps
};

/// What inspection shows on one window.
struct WindowInspection {
  std::vector<analysis::LayerMixing> layers;
  std::vector<char> token_types;
  std::vector<int> token_steps;  ///< the episode step of each token; -1 for padding
  std::vector<char> valid;       ///< per token: a real step
  int hidden = 0;
  std::vector<float>
      tokens_before_merge;    ///< 3K x H: the R, s, a embeddings (empty for unified tokens)
  std::vector<float> tokens;  ///< T x H: what enters the first block
};

}  // namespace dstudio::models
