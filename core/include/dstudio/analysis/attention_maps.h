#pragma once
/// \file
/// Attention maps as the papers show them (DC fig. 3, GDT fig. 4, DHi fig. 2): one layer and
/// head, the mean over heads, the mean over layers, attention rollout across layers, and the
/// difference of two models on the same window. Plain T x T matrices, row-major, rows are
/// queries; no LibTorch.

#include <string>
#include <vector>

namespace dstudio::analysis {

/// A square matrix over the tokens of one window.
struct TokenMatrix {
  int tokens = 0;
  std::vector<double> values;  ///< tokens x tokens, row-major

  [[nodiscard]] double at(int row, int col) const {
    return values[static_cast<std::size_t>(row) * tokens + col];
  }
};

/// One layer's matrices: heads x T x T, as inspection returns them.
struct LayerMixing {
  int heads = 1;
  int tokens = 0;
  std::vector<float> values;
  std::string mixer;  ///< "attention", "conv (3 filters)", "pooling", ...
};

/// Head `head` of a layer.
TokenMatrix head_of(const LayerMixing& layer, int head);
/// The mean over a layer's heads.
TokenMatrix mean_over_heads(const LayerMixing& layer);
/// The mean over layers of their means over heads.
TokenMatrix mean_over_layers(const std::vector<LayerMixing>& layers);
/// Attention rollout (Abnar and Zuidema, 2020): the product, from the last layer down to the
/// first, of 0.5 A_l + 0.5 I with A_l the mean over heads, each row renormalised; the residual
/// stream's share of the information flow. Rows sum to 1 when the layers' rows do.
TokenMatrix attention_rollout(const std::vector<LayerMixing>& layers);
/// a - b (same size); the GDT paper's difference of two models on the same input.
TokenMatrix difference(const TokenMatrix& a, const TokenMatrix& b);
/// The element-wise mean of several matrices of one size (e.g. over the windows of a dataset).
TokenMatrix mean_of(const std::vector<TokenMatrix>& matrices);

/// Labels of a window's tokens: "R3", "s3", "a3" (step within the episode), "t3" for a merged
/// step, "pad" for padding. `types` from inspection ('R', 's', 'a', 't'), `steps` -1 for padding.
std::vector<std::string> token_labels(const std::vector<char>& types,
                                      const std::vector<int>& steps);

/// Labels relative to a window's last step, for maps averaged over windows: "s-3", "R0", "t-19".
/// Triplet windows (types starting with 'R') have three tokens a step, merged ones one.
std::vector<std::string> relative_token_labels(const std::vector<char>& types);

/// How the matrix of a mixer was derived, for figure captions and the JSON output.
std::string mixing_derivation(const std::string& mixer);

}  // namespace dstudio::analysis
