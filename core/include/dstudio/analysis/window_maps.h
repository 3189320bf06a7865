#pragma once
/// \file
/// What the attention analyses show of a model's inspection on dataset or rollout windows,
/// computed once for the command line and the window alike: the map a user selects (a layer and
/// head, the mean over layers, or attention rollout) averaged over windows, the entropy of every
/// layer's heads (full, intra-step and inter-step; HiFormer fig. 2), and the maps' CSV form.
/// Layers and heads are numbered from 1, as in the papers' figures. No LibTorch.

#include <filesystem>
#include <string>
#include <vector>

#include "dstudio/analysis/attention_maps.h"
#include "dstudio/models/window.h"

namespace dstudio::analysis {

/// Which matrix of each window a map shows.
enum class MapKind {
  Layer,           ///< one layer: one head, or the mean over heads
  MeanOverLayers,  ///< the mean over layers of their means over heads
  Rollout,         ///< attention rollout across layers
};

struct MapSelection {
  MapKind kind = MapKind::Layer;
  int layer = 1;  ///< from 1; with MapKind::Layer
  int head = 0;   ///< from 1; 0 is the mean over heads
};

/// The selected map of one window; throws and notes as select_map does.
TokenMatrix select_window_map(const models::WindowInspection& window, const MapSelection& selection,
                              std::string* note = nullptr);

/// The selected map averaged over `windows` (all of one model and size). A layer the model lacks
/// throws UsageError; a head its layer lacks gives the mean over heads, and `note` (if given) says
/// so, e.g. "it has 1 head, so its mean over heads is used".
TokenMatrix select_map(const std::vector<models::WindowInspection>& windows,
                       const MapSelection& selection, std::string* note = nullptr);

/// One head's entropies in nats, averaged over windows.
struct HeadEntropy {
  int layer = 1, head = 1;  ///< from 1
  std::string mixer;
  double entropy = 0.0;  ///< over every real key of every real query
  double intra_step =
      0.0;  ///< within a step's R, s, a; NaN for one token a step (merged or unified)
  double inter_step = 0.0;  ///< between steps
};

/// Every head of every layer, layer-major.
std::vector<HeadEntropy> head_entropies(const std::vector<models::WindowInspection>& windows);

/// The labels of the windows' tokens: by episode step for one window ("s12"), relative to the
/// last step for several ("s-3").
std::vector<std::string> window_labels(const std::vector<models::WindowInspection>& windows);

/// A map as CSV text: a header "query,<keys...>", then a row a query.
std::string map_csv(const TokenMatrix& map, const std::vector<std::string>& labels);
/// Writes map_csv(map, labels) to `path` atomically. Throws Error naming `path` when it cannot be
/// written.
void write_map_csv(const std::filesystem::path& path, const TokenMatrix& map,
                   const std::vector<std::string>& labels);

}  // namespace dstudio::analysis
