#include "dstudio/analysis/window_maps.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <span>

#include "dstudio/analysis/entropy.h"
#include "dstudio/common/atomic_file.h"
#include "dstudio/common/csv.h"
#include "dstudio/common/error.h"

namespace dstudio::analysis {

namespace {
// Triplet windows start with a return-to-go token; merged and unified ones have a token a step.
int tokens_per_step(const models::WindowInspection& w) {
  return !w.token_types.empty() && w.token_types.front() == 'R' ? 3 : 1;
}
}  // namespace

TokenMatrix select_window_map(const models::WindowInspection& w, const MapSelection& selection,
                              std::string* note) {
  switch (selection.kind) {
    case MapKind::Layer: {
      const int layers = static_cast<int>(w.layers.size());
      if (selection.layer < 1 || selection.layer > layers)
        throw UsageError("layer " + std::to_string(selection.layer) +
                         ": the model has layers 1 to " + std::to_string(layers));
      const auto& l = w.layers[static_cast<std::size_t>(selection.layer - 1)];
      const bool has_head = selection.head >= 1 && selection.head <= l.heads;
      if (selection.head != 0 && !has_head && note)
        *note = "it has " + std::to_string(l.heads) + (l.heads == 1 ? " head" : " heads") +
                ", so its mean over heads is used";
      return has_head ? head_of(l, selection.head - 1) : mean_over_heads(l);
    }
    case MapKind::MeanOverLayers:
      return mean_over_layers(w.layers);
    case MapKind::Rollout:
      return attention_rollout(w.layers);
  }
  return {};
}

TokenMatrix select_map(const std::vector<models::WindowInspection>& windows,
                       const MapSelection& selection, std::string* note) {
  if (windows.empty()) throw UsageError("no windows to draw a map of");
  std::vector<TokenMatrix> per_window;
  for (const auto& w : windows) per_window.push_back(select_window_map(w, selection, note));
  return mean_of(per_window);
}

std::vector<HeadEntropy> head_entropies(const std::vector<models::WindowInspection>& windows) {
  std::vector<HeadEntropy> out;
  if (windows.empty()) return out;
  const int group = tokens_per_step(windows.front());
  const double count = static_cast<double>(windows.size());
  for (std::size_t l = 0; l < windows.front().layers.size(); ++l) {
    const auto& first = windows.front().layers[l];
    for (int h = 0; h < first.heads; ++h) {
      HeadEntropy e{static_cast<int>(l) + 1, h + 1, first.mixer, 0.0, 0.0, 0.0};
      for (const auto& w : windows) {
        const auto& lm = w.layers[l];
        const auto n = static_cast<std::size_t>(lm.tokens) * static_cast<std::size_t>(lm.tokens);
        const std::span<const float> m(lm.values.data() + n * static_cast<std::size_t>(h), n);
        e.entropy += attention_entropy(m, lm.tokens, w.valid) / count;
        e.intra_step += intra_step_entropy(m, lm.tokens, w.valid, group) / count;
        e.inter_step += inter_step_entropy(m, lm.tokens, w.valid, group) / count;
      }
      // With one token a step there is nothing within a step.
      if (group == 1) e.intra_step = std::numeric_limits<double>::quiet_NaN();
      out.push_back(e);
    }
  }
  return out;
}

std::vector<std::string> window_labels(const std::vector<models::WindowInspection>& windows) {
  if (windows.empty()) return {};
  const auto& first = windows.front();
  return windows.size() == 1 ? token_labels(first.token_types, first.token_steps)
                             : relative_token_labels(first.token_types);
}

std::string map_csv(const TokenMatrix& map, const std::vector<std::string>& labels) {
  std::vector<std::string> header = {"query"};
  header.insert(header.end(), labels.begin(), labels.end());
  CsvWriter out(header, 6);
  for (int i = 0; i < map.tokens; ++i) {
    out << labels[static_cast<std::size_t>(i)];
    for (int j = 0; j < map.tokens; ++j) out << map.at(i, j);
    out.end_row();
  }
  return out.text();
}

void write_map_csv(const std::filesystem::path& path, const TokenMatrix& map,
                   const std::vector<std::string>& labels) {
  write_text_atomically(path, map_csv(map, labels));
}

}  // namespace dstudio::analysis
