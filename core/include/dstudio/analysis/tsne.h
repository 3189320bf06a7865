#pragma once
/// \file
/// t-SNE (van der Maaten and Hinton, 2008) with Barnes-Hut gradients (van der Maaten, 2014), as
/// the papers use it for token embeddings (DHi fig. 5). Defaults follow scikit-learn's: perplexity
/// 30, early exaggeration 12 for the first 250 of 1000 iterations, learning rate max(N / 12 / 4,
/// 50), momentum 0.5 then 0.8, gains, PCA initialisation, theta 0.5. Neighbours are exact
/// (3 x perplexity per point). Plain arrays; no LibTorch.

#include <cstdint>
#include <functional>
#include <vector>

#include "dstudio/common/progress.h"

namespace dstudio::analysis {

struct TsneConfig {
  double perplexity = 30.0;
  int iterations = 1000;
  int exaggeration_iterations = 250;
  double early_exaggeration = 12.0;
  double theta = 0.5;           ///< Barnes-Hut opening angle; 0 computes the exact gradient (O(N^2))
  double learning_rate = 0.0;   ///< 0: max(N / early_exaggeration / 4, 50)
  int snapshot_every = 0;       ///< keep the layout every this many iterations (for animation); 0: none
  int threads = 1;
  /// Called with each snapshot as it is taken (iteration, N x 2 layout), on the computing thread,
  /// so a viewer can animate the run while it iterates; the same layouts are kept in `snapshots`.
  std::function<void(int iteration, const std::vector<double>& embedding)> on_snapshot;
};

struct TsneResult {
  std::vector<double> embedding;  ///< N x 2
  double kl = 0.0;                ///< KL(P || Q) of the final layout, computed exactly
  double seconds = 0.0;
  std::vector<int> snapshot_iterations;
  std::vector<std::vector<double>> snapshots;  ///< N x 2 each
};

/// Embeds `n` points of `dims` values each (row-major) in 2-D. Throws UsageError for
/// fewer than 3 points or a perplexity that needs more neighbours than there are points
/// (perplexity must be below N / 3); throws Cancelled.
TsneResult tsne(const std::vector<float>& points, int n, int dims, const TsneConfig& config = {}, const Progress& progress = {});

}  // namespace dstudio::analysis
