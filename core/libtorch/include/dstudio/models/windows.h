#pragma once
/// \file
/// Windows of K steps cut from a dataset or from a rollout's trace, and what a model's
/// inspection shows on them: the inputs of the attention, entropy and t-SNE analyses. Windows
/// hold raw values (states as observed, returns-to-go in the environment's units); each model
/// normalises them with its own checkpoint's statistics, so two checkpoints see identical inputs.
/// Free of LibTorch.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "dstudio/analysis/attention_maps.h"
#include "dstudio/common/progress.h"
#include "dstudio/data/dataset.h"
#include "dstudio/models/checkpoint.h"
#include "dstudio/models/evaluation.h"
#include "dstudio/models/token_cloud.h"
#include "dstudio/models/window.h"

namespace dstudio::models {

class DecisionModelImpl;
struct LoadedCheckpoint;

/// The window ending at `last_step` of episode `episode` of the dataset; returns-to-go are the
/// sums of the episode's rewards from each step on, each reward plus `reward_shift` (the model's
/// TrainingConfig::reward_shift).
Window window_from_dataset(const data::Dataset& dataset, int episode, int last_step, int K,
                           double reward_shift = 0.0);
/// `count` windows spread over the dataset's complete episodes (longest first) and over their
/// steps (evenly spaced, interleaved across episodes, never younger than K - 1 steps),
/// deterministic. Returns-to-go as window_from_dataset counts them.
std::vector<Window> sample_windows(const data::Dataset& dataset, int count, int K,
                                   double reward_shift = 0.0);
/// The window the policy saw at `step` of a rollout (its trace must be kept).
Window window_from_trace(const EpisodeTrace& trace, int step, int K, int state_dim, int act_dim);

/// Runs the model with inspection on each window, normalised with `info`'s statistics.
std::vector<WindowInspection> inspect_windows(DecisionModelImpl& model, const CheckpointInfo& info,
                                              const std::vector<Window>& windows,
                                              ModalityZeroing zeroing = ModalityZeroing::None);
/// The same for a checkpoint read already (checkpoint_model.h's open_checkpoint).
std::vector<WindowInspection> inspect_windows(const LoadedCheckpoint& checkpoint,
                                              const std::vector<Window>& windows,
                                              ModalityZeroing zeroing = ModalityZeroing::None);
/// The same for a checkpoint file; `progress` may stop it between reading and running.
std::vector<WindowInspection> inspect_windows(const std::filesystem::path& checkpoint,
                                              const std::vector<Window>& windows,
                                              ModalityZeroing zeroing = ModalityZeroing::None,
                                              const Progress& progress = {});

/// The dataset a checkpoint was trained on: its recorded path, or, when that file is gone (another
/// machine), the studio's default dataset of the same name made again if its fingerprint matches
/// (which can take minutes: `progress` reports it and can cancel it). Throws CheckpointError
/// saying to pass the dataset otherwise.
std::filesystem::path checkpoint_dataset(const CheckpointInfo& info, const Progress& progress = {});

/// A checkpoint inspected on windows of a dataset: what the attention, entropy and t-SNE analyses
/// start from, in the command line and the window alike.
struct DatasetInspection {
  CheckpointInfo info;
  std::filesystem::path dataset;  ///< where the windows come from
  /// The dataset's best complete episode (NaN without one), in the model's units (model_return:
  /// with its reward shift).
  double best_return = 0.0;
  std::vector<double> episode_returns;  ///< every complete episode's return, in the same units
  std::vector<Window> windows;
  std::vector<WindowInspection> inspections;
  std::vector<std::string>
      dataset_warnings;  ///< what loading the dataset warned of (what a damaged file lost)
};

/// Reads `checkpoint`, loads `dataset` (empty: the checkpoint's own, see checkpoint_dataset),
/// samples `count` windows of the model's K (sample_windows) and inspects them. Reports its
/// stages through `progress` and stops with `Cancelled` between them.
DatasetInspection inspect_on_dataset(const std::filesystem::path& checkpoint, int count,
                                     const std::filesystem::path& dataset = {},
                                     const Progress& progress = {});
/// The same for a checkpoint read already (checkpoint_model.h's open_checkpoint).
DatasetInspection inspect_on_dataset(const LoadedCheckpoint& checkpoint, int count,
                                     const std::filesystem::path& dataset = {},
                                     const Progress& progress = {});

/// Where the token t-SNE takes its tokens from.
struct TokenSource {
  enum class Kind {
    Windows,  ///< `count` windows spread over the dataset (sample_windows), every real step of each
    Episodes,  ///< every step of the dataset's `count` longest complete episodes, once
    Rollouts,  ///< every step of `count` episodes the model plays itself
  };
  Kind kind = Kind::Windows;
  int count = 40;
  /// 0: every token; else whole steps while the tokens stay within this many (Episodes, Rollouts).
  int max_tokens = 0;
  double target = 0.0;     ///< Rollouts: the target return; 0: the task's first
  std::uint64_t seed = 0;  ///< Rollouts: episode e resets with seed + e
  int threads = 1;         ///< Rollouts: cores that play
};

/// The windows that show every step of an episode of `length` steps exactly once, each step as
/// the policy saw it (never at a window's first position, where the previous action is unknown,
/// unless it is the episode's first step): windows of K ending at K - 1, 2K - 2, ... and at the
/// last step. Returns pairs (last step, first step that is new in this window).
std::vector<std::pair<int, int>> episode_window_ends(int length, int K);

/// A checkpoint's tokens, gathered for the t-SNE.
struct GatheredTokens {
  CheckpointInfo info;
  std::filesystem::path dataset;        ///< where the steps come from (empty for rollouts)
  int windows = 0;                      ///< windows the model ran on
  int episodes = 0;                     ///< episodes they come from
  std::vector<double> episode_returns;  ///< Rollouts: the return of each episode played
  TokenCloud cloud;
  std::vector<std::string>
      dataset_warnings;  ///< what loading the dataset warned of (what a damaged file lost)
};

/// Gathers the tokens `source` asks for: windows are inspected in batches, and the inspections
/// are let go once their tokens are taken, so 10^5 tokens need little more memory than their
/// embeddings. `dataset` empty: the checkpoint's own (checkpoint_dataset). Reports progress and
/// stops with Cancelled between batches.
GatheredTokens gather_tokens(const std::filesystem::path& checkpoint, const TokenSource& source,
                             const std::filesystem::path& dataset = {},
                             const Progress& progress = {});
/// The same with a checkpoint read already (open_checkpoint): the window's t-SNE lays out the
/// tokens of the model its other views use, without reading the file again.
GatheredTokens gather_tokens(const LoadedCheckpoint& checkpoint, const TokenSource& source,
                             const std::filesystem::path& dataset = {},
                             const Progress& progress = {});

}  // namespace dstudio::models
