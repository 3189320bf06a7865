#pragma once
/// \file
/// t-SNE (van der Maaten and Hinton, 2008), as the papers use it for token embeddings (DHi fig. 5),
/// from a few hundred points to a dataset's worth of tokens (10^5 and more).
///
/// Defaults follow scikit-learn's: perplexity 30, early exaggeration 12 for the first 250 of 1000
/// iterations, learning rate max(N / 12 / 4, 50), momentum 0.5 then 0.8, gains, PCA
/// initialisation, 3 x perplexity neighbours per point. Two choices scale it:
/// - the input similarities come from exact nearest neighbours (brute force, O(N^2 d)) for small
///   N and from a forest of random-projection trees (approximate, as Annoy) for large N;
/// - the repulsive forces are exact (O(N^2)), Barnes-Hut's (van der Maaten, 2014; a quadtree,
///   O(N log N)) for small N, or FIt-SNE's (Linderman et al., 2019: polynomial interpolation on
///   an equispaced grid and convolution by FFT, O(N)) for large N.
/// Plain arrays; no LibTorch.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dstudio/common/progress.h"

namespace dstudio::analysis {

/// How the repulsive forces (and the normalisation Z) are computed at each iteration.
enum class TsneMethod {
  Auto,       ///< Exact when theta is 0, Barnes-Hut below `fft_from_points`, FFT from there
  Exact,      ///< every pair, O(N^2)
  BarnesHut,  ///< quadtree with opening angle theta, O(N log N)
  Fft,        ///< FIt-SNE's interpolation on a grid and FFT convolution, O(N + grid log grid)
};

/// How the nearest neighbours that define the input similarities are found.
enum class TsneNeighbours {
  Auto,         ///< Exact below `approximate_from_points`, Approximate from there
  Exact,        ///< brute force over every pair
  Approximate,  ///< a forest of random-projection trees searched best-first (recall 0.9 or more on
                ///< clustered points of moderate dimension; about 0.7 on isotropic 128-dimensional
                ///< clusters, whose points are all nearly equidistant)
};

/// The method's name as the command line and reports print it ("exact", "barnes-hut", "fft").
const char* to_string(TsneMethod method);
/// The neighbour search's name ("exact", "approximate").
const char* to_string(TsneNeighbours neighbours);
/// The method or neighbour search of a name to_string gives ("auto" too); Auto for another name
/// (the command line offers only these names).
TsneMethod tsne_method_named(const std::string& name);
TsneNeighbours tsne_neighbours_named(const std::string& name);

struct TsneConfig {
  double perplexity = 30.0;
  int iterations = 1000;
  int exaggeration_iterations = 250;
  double early_exaggeration = 12.0;
  double theta =
      0.5;  ///< Barnes-Hut opening angle; 0 with method Auto computes the exact gradient (O(N^2))
  double learning_rate = 0.0;  ///< 0: max(N / early_exaggeration / 4, 50)
  int snapshot_every = 0;  ///< keep the layout every this many iterations (for animation); 0: none
  int threads = 1;
  TsneMethod method = TsneMethod::Auto;
  TsneNeighbours neighbours = TsneNeighbours::Auto;
  int fft_from_points = 5000;  ///< Auto uses the FFT gradient from this many points
  int approximate_from_points =
      8000;                      ///< Auto searches neighbours approximately from this many points
  int interpolation_points = 3;  ///< FFT: interpolation nodes per grid box and dimension
  double boxes_per_unit =
      1.0;  ///< FFT: grid boxes per unit of layout length (at least 50 boxes a side)
  /// FFT: no point moves further than this in one iteration (FIt-SNE's default, 5); 0: no limit.
  /// Barnes-Hut and the exact gradient take scikit-learn's steps, unlimited.
  double max_step_norm = 5.0;
  /// Called with each snapshot as it is taken (iteration, N x 2 layout), on the computing thread,
  /// so a viewer can animate the run while it iterates; the same layouts are kept in `snapshots`
  /// unless `keep_snapshots` is false (a viewer that keeps its own: 1.6 MB each at 10^5 points).
  std::function<void(int iteration, const std::vector<double>& embedding)> on_snapshot;
  bool keep_snapshots = true;
};

struct TsneResult {
  std::vector<double> embedding;  ///< N x 2
  double kl = 0.0;                ///< KL(P || Q) of the final layout
  bool kl_exact = true;  ///< Z summed over every pair (up to 20,000 points); else from a fine FFT
                         ///< grid (kl_grid_boxes_per_unit; relative error about 1e-4)
  double seconds = 0.0;
  double neighbour_seconds = 0.0;                     ///< of `seconds`, finding the neighbours
  TsneMethod method = TsneMethod::BarnesHut;          ///< the gradient used (never Auto)
  TsneNeighbours neighbours = TsneNeighbours::Exact;  ///< the neighbour search used (never Auto)
  std::vector<int> snapshot_iterations;
  std::vector<std::vector<double>> snapshots;  ///< N x 2 each
};

/// Boxes per unit of the grid the final KL divergence takes Z from (5 nodes a box) on a layout
/// `span` units wide: 2 while that fits 1,024 nodes a side, fewer for wider layouts, at least 1.
double kl_grid_boxes_per_unit(double span);

/// Embeds `n` points of `dims` values each (row-major) in 2-D. Throws UsageError for
/// fewer than 3 points or a perplexity that needs more neighbours than there are points
/// (perplexity must be below N / 3); throws Cancelled.
TsneResult tsne(const std::vector<float>& points, int n, int dims, const TsneConfig& config = {},
                const Progress& progress = {});

/// The k nearest neighbours of every point (itself excluded), nearest first.
struct NeighbourGraph {
  int k = 0;
  std::vector<int> index;     ///< N x k
  std::vector<double> dist2;  ///< N x k squared Euclidean distances
};

/// The `k` nearest neighbours of each of `n` points (row-major, `dims` values each), exactly or
/// approximately (`Auto` is taken as Exact). Reports progress in [0, 1] at least every few tenths
/// of a second and throws Cancelled.
NeighbourGraph nearest_neighbours(const std::vector<float>& points, int n, int dims, int k,
                                  TsneNeighbours search, int threads = 1,
                                  const Progress& progress = {});

/// The repulsive part of the t-SNE gradient of a 2-D layout `y` (N x 2): for each point i,
/// sum over j != i of q_ij^2 (y_i - y_j) with q_ij = 1 / (1 + |y_i - y_j|^2), and
/// Z = sum over i != j of q_ij. The gradient's repulsion is force / Z.
struct Repulsion {
  std::vector<double> force;  ///< N x 2, not divided by Z
  double z = 0.0;
};

/// Computes the repulsion with `method` (Auto is taken as Fft); `config` gives theta, the threads
/// and the FFT grid (interpolation_points, boxes_per_unit).
Repulsion tsne_repulsion(const std::vector<double>& y, TsneMethod method,
                         const TsneConfig& config = {});

}  // namespace dstudio::analysis
