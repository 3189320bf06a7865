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

#include <functional>

#include "dstudio/common/progress.h"
#include "dstudio/models/markov_lab_options.h"

namespace dstudio::models {

/// Trains one model. `on_point` receives each point of the curve as it is made (on the calling
/// thread). Polls `progress` every step; cancelling throws Cancelled.
MarkovLabResult run_markov_lab(const MarkovLabOptions& options, const Progress& progress = {},
                               const std::function<void(const MarkovLabPoint&)>& on_point = {});

}  // namespace dstudio::models
