#pragma once
/// \file
/// The token embeddings of inspected windows as one cloud of points, with what each point is: its
/// modality, window, episode step and return-to-go. This is the input of the token t-SNE (DHi
/// fig. 5), shared by `dstudio analyze tsne` and the studio's t-SNE view. Only real steps count;
/// padding is left out. Free of LibTorch.

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "dstudio/models/window.h"

namespace dstudio::models {

struct TokenCloud {
  int dims = 0;               ///< H, the embedding width
  std::vector<float> points;  ///< count() x dims, row-major
  /// "R", "s", "a": a step's embeddings before merging; "merged": one token per step after it
  /// (unified and merged tokenizers); "R in block", "s in block", "a in block": the triplet
  /// tokens that enter the first block.
  std::vector<std::string> modality;
  std::vector<int> window;  ///< index in the windows given
  std::vector<int>
      episode;  ///< the window's episode: in the dataset, or the rollout's (-1: not known)
  std::vector<int> timestep;         ///< the episode step
  std::vector<double> return_to_go;  ///< unscaled, at that step
  /// The step's distance to the task's goal (EnvironmentDefinition::goal_distance); empty when
  /// the task has none.
  std::vector<double> goal_distance;

  [[nodiscard]] int count() const { return static_cast<int>(modality.size()); }
  /// The distinct modalities in order of first appearance.
  [[nodiscard]] std::vector<std::string> modalities() const;
};

/// Gathers, for every window and its inspection (same order, same length), the R, s and a
/// embeddings before merging (when the model has them) and then the tokens that enter the first
/// block. Throws Error when the lists do not match.
/// With `goal_distance`, each token also gets its step's distance to the goal.
TokenCloud token_cloud(const std::vector<Window>& windows,
                       const std::vector<WindowInspection>& inspections,
                       const std::function<double(std::span<const float>)>& goal_distance = {});

}  // namespace dstudio::models
