#pragma once
/// \file
/// The Markov lab (decision-hiformer.txt, appendix A): a one-layer sequence model trained in
/// seconds on a Markov chain whose entropy rate is known exactly, so the next-token loss can be
/// watched approaching its floor (Lemma 1: loss = mean KL + entropy rate), and a mixer that cannot
/// see the chain's memory can be watched staying above it.
///
/// The model is the appendix's: embedding plus a trainable positional encoding, a token mixer of
/// window k, LayerNorm, shortcut, feed-forward with shortcut, linear, softmax over the S symbols
/// (the sigmoid of the binary case). The mixer is the appendix's average pooling, or causal
/// attention over the same window with a learned bias per lag, or a causal depthwise convolution
/// of width k. Free of LibTorch.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dstudio/analysis/markov_chain.h"
#include "dstudio/common/progress.h"

namespace dstudio::models {

/// How the lab's model mixes a position with the k before it.
enum class LabMixer { Pooling, Attention, Convolution };

/// "pooling", "attention", "conv".
std::string to_string(LabMixer mixer);
/// The mixer of a name to_string gives; UsageError listing the names otherwise.
LabMixer lab_mixer_from_string(const std::string& name);

/// One run of the lab. `check()` states every range.
struct MarkovLabOptions {
  analysis::MarkovChain chain;
  LabMixer mixer = LabMixer::Pooling;
  int window = 2;        ///< k, positions mixed (the current one included), in [1, length]
  int steps = 600;       ///< optimiser steps, in [1, 100000]
  int batch = 32;        ///< sequences per step, in [1, 1024]
  int length = 32;       ///< N, symbols per sequence, in [max(8, order + 1), 256]
  int embedding = 16;    ///< d, in [2, 128]
  int ffn = 32;          ///< r, the feed-forward's hidden width, in [1, 512]
  double learning_rate = 1e-2;  ///< Adam's, in (0, 1]
  std::uint64_t seed = 0;       ///< the weights' initialisation and the sampled data
  int eval_every = 25;          ///< steps between two points of the loss curve (and one at the end), in [1, 100000]

  /// Throws UsageError naming the first field out of range.
  void check() const;
};

/// A point of the loss curve.
struct MarkovLabPoint {
  int step = 0;             ///< optimiser steps done
  double training_loss = 0; ///< the mean cross-entropy of the last step's batch, nats
  double loss = 0;          ///< the population loss estimate (entropy rate + mean KL) on held-out sequences, nats
};

/// What a run learned.
struct MarkovLabResult {
  double entropy_rate = 0;  ///< the floor, nats
  double final_loss = 0;    ///< entropy rate + mean KL(true next law || predicted) over held-out positions
  double gap = 0;           ///< final_loss - entropy_rate: the mean KL, >= 0
  double seconds = 0;       ///< wall time of the training
  std::vector<MarkovLabPoint> curve;
  int length = 0;                      ///< N, the side of the mixing matrix
  std::vector<double> mixing_matrix;   ///< N x N, row-major, queries as rows, mean over held-out sequences
  std::vector<double> mixing_by_lag;   ///< k entries: the mean weight at lag 0 .. k-1 over full windows
};

/// Trains one model. `on_point` receives each point of the curve as it is made (on the calling
/// thread). Polls `progress` every step; cancelling throws Cancelled.
MarkovLabResult run_markov_lab(const MarkovLabOptions& options, const Progress& progress = {},
                               const std::function<void(const MarkovLabPoint&)>& on_point = {});

}  // namespace dstudio::models
