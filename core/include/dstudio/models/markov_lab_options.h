#pragma once
/// \file
/// What a run of the Markov lab is given and what it gives back (models/markov_lab.h trains it):
/// the chain, the mixer, its window, the optimiser's budget; the loss curve against the chain's
/// entropy rate and the learned mixing matrix. Plain data, so the window's controls and plots
/// can hold them without LibTorch.

#include <cstdint>
#include <string>
#include <vector>

#include "dstudio/analysis/markov_chain.h"
#include "dstudio/common/enum_names.h"

namespace dstudio::models {

/// How the lab's model mixes a position with the k before it.
enum class LabMixer { Pooling, Attention, Convolution };

/// "pooling", "attention", "conv".
/// The names the lab's mixers are written with: pooling, attention, conv.
const EnumNames<LabMixer>& lab_mixer_names();
std::string to_string(LabMixer mixer);
/// The mixer of a name to_string gives; UsageError listing the names otherwise.
LabMixer lab_mixer_from_string(const std::string& name);

/// One run of the lab. `check()` states every range.
struct MarkovLabOptions {
  analysis::MarkovChain chain;
  LabMixer mixer = LabMixer::Pooling;
  int window = 2;               ///< k, positions mixed (the current one included), in [1, length]
  int steps = 600;              ///< optimiser steps, in [1, 100000]
  int batch = 32;               ///< sequences per step, in [1, 1024]
  int length = 32;              ///< N, symbols per sequence, in [max(8, order + 1), 256]
  int embedding = 16;           ///< d, in [2, 128]
  int ffn = 32;                 ///< r, the feed-forward's hidden width, in [1, 512]
  double learning_rate = 1e-2;  ///< Adam's, in (0, 1]
  std::uint64_t seed = 0;       ///< the weights' initialisation and the sampled data
  int eval_every =
      25;  ///< steps between two points of the loss curve (and one at the end), in [1, 100000]

  /// Throws UsageError naming the first field out of range.
  void check() const;
};

/// A point of the loss curve.
struct MarkovLabPoint {
  int step = 0;              ///< optimiser steps done
  double training_loss = 0;  ///< the mean cross-entropy of the last step's batch, nats
  double loss =
      0;  ///< the population loss estimate (entropy rate + mean KL) on held-out sequences, nats
};

/// What a run learned.
struct MarkovLabResult {
  double entropy_rate = 0;  ///< the floor, nats
  double final_loss =
      0;           ///< entropy rate + mean KL(true next law || predicted) over held-out positions
  double gap = 0;  ///< final_loss - entropy_rate: the mean KL, >= 0
  double seconds = 0;  ///< wall time of the training
  std::vector<MarkovLabPoint> curve;
  int length = 0;  ///< N, the side of the mixing matrix
  std::vector<double>
      mixing_matrix;  ///< N x N, row-major, queries as rows, mean over held-out sequences
  std::vector<double>
      mixing_by_lag;  ///< k entries: the mean weight at lag 0 .. k-1 over full windows
};

}  // namespace dstudio::models
