#pragma once
/// \file
/// Training windows with the semantics of the official Decision Transformer / Decision ConvFormer
/// code (`get_batch` in their experiment.py):
///
/// - an episode is chosen with probability proportional to its length, among the episodes kept by
///   `pct_traj` (%BC: the top-returning episodes, returns counted with the shift, up to that
///   fraction of all timesteps);
/// - the start is uniform over the episode's steps, and up to K steps are taken;
/// - a short window is left-padded to K: states 0 (then normalised, so they become -mean/std),
///   actions -10, return-to-go 0, timesteps 0, mask 0;
/// - return-to-go has K + 1 values per window, with 0 appended when the window reaches the end
///   of its episode, divided by `rtg_scale`, with `reward_shift` added to every reward (IQL's
///   and CORL's -1 on AntMaze; 0 leaves the rewards as they are);
/// - timesteps at or above `max_ep_len` are clipped to `max_ep_len - 1`;
/// - states are normalised with the dataset's mean and (std + 1e-6).
///
/// Only complete episodes (terminal or timeout) are sampled; an unterminated tail never is.
/// The random stream is `dstudio::Random`, so a seed gives the same windows on every platform and
/// standard library.

#include <cstdint>
#include <vector>

#include "dstudio/common/random.h"
#include "dstudio/data/dataset.h"

namespace dstudio::data {

/// How windows are cut and batched.
struct SamplerConfig {
  int context_length = 20;  ///< K
  int batch_size = 64;
  double rtg_scale = 1000.0;  ///< 1000 for locomotion, 1 for antmaze
  double reward_shift = 0.0;  ///< added to every reward (TrainingConfig::reward_shift)
  int max_ep_len = 1000;
  double pct_traj = 1.0;  ///< fraction of timesteps kept, best episodes first
  std::uint64_t seed = 0;
};

/// A batch of windows; arrays are row-major over (batch, position, feature).
struct WindowBatch {
  int batch = 0, K = 0, state_dim = 0, act_dim = 0;
  std::vector<float> states;            ///< (B, K, S), normalised
  std::vector<float> actions;           ///< (B, K, A)
  std::vector<float> returns_to_go;     ///< (B, K + 1), divided by rtg_scale
  std::vector<std::int64_t> timesteps;  ///< (B, K)
  std::vector<float> mask;              ///< (B, K), 1 for real steps
  std::vector<std::int64_t> episode;    ///< (B) index into Dataset::episodes
  std::vector<std::int64_t> start;      ///< (B) first step of the window within its episode

  void resize(int b, int k, int s, int a);
};

/// Samples training windows from a dataset. Keeps a reference to the dataset, which must outlive
/// it.
class WindowSampler {
 public:
  WindowSampler(const Dataset& dataset, const SamplerConfig& config);

  /// The next batch from this sampler's random stream.
  WindowBatch sample();
  /// Fills row `b` of `batch` with the window of episode `episode` starting at step `start`.
  void fill_window(std::int64_t episode, std::int64_t start, WindowBatch& batch, int b) const;

  /// Indices (into Dataset::episodes) of the episodes that can be drawn.
  [[nodiscard]] const std::vector<std::int64_t>& sampled_episodes() const { return kept_; }
  /// Probability of drawing each episode of `sampled_episodes()`.
  [[nodiscard]] std::vector<double> episode_probabilities() const;
  [[nodiscard]] const SamplerConfig& config() const { return config_; }
  /// The random stream, to save and restore with a training run.
  [[nodiscard]] Random& random() { return random_; }

 private:
  const Dataset& dataset_;
  SamplerConfig config_;
  std::vector<std::int64_t> kept_;        // episode indices, lowest return first
  std::vector<std::int64_t> cumulative_;  // cumulative lengths of kept_
  std::vector<double> rtg_;               // return-to-go of every transition, unscaled
  Random random_;
};

}  // namespace dstudio::data
