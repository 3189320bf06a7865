// Mixing weight by lag. See locality.h.

#include "dstudio/analysis/locality.h"

#include <algorithm>
#include <cmath>

namespace dstudio::analysis {

double LagProfile::mean_lag() const {
  double m = 0.0;
  for (std::size_t l = 0; l < weight.size(); ++l) m += static_cast<double>(l) * weight[l];
  return m;
}

double LagProfile::mass_within(int lags) const {
  double m = 0.0;
  for (std::size_t l = 0; l < weight.size() && static_cast<int>(l) <= lags; ++l) m += weight[l];
  return m;
}

LagProfile lag_profile(const LayerMixing& layer, std::span<const int> token_steps,
                       std::span<const char> valid) {
  const int T = layer.tokens;
  int lowest = 0, highest = 0;
  bool any = false;
  for (int i = 0; i < T; ++i)
    if (valid[static_cast<std::size_t>(i)]) {
      lowest = any ? std::min(lowest, token_steps[static_cast<std::size_t>(i)])
                   : token_steps[static_cast<std::size_t>(i)];
      highest = any ? std::max(highest, token_steps[static_cast<std::size_t>(i)])
                    : token_steps[static_cast<std::size_t>(i)];
      any = true;
    }
  LagProfile out;
  if (!any) return out;
  out.weight.assign(static_cast<std::size_t>(highest - lowest + 1), 0.0);
  const auto n = static_cast<std::size_t>(T) * static_cast<std::size_t>(T);
  int rows = 0;
  for (int h = 0; h < layer.heads; ++h) {
    const float* m = layer.values.data() + n * static_cast<std::size_t>(h);
    for (int i = 0; i < T; ++i) {
      if (!valid[static_cast<std::size_t>(i)]) continue;
      double total = 0.0;
      for (int j = 0; j <= i; ++j)
        if (valid[static_cast<std::size_t>(j)])
          total += std::abs(m[static_cast<std::size_t>(i) * T + j]);
      if (total <= 0.0) continue;
      for (int j = 0; j <= i; ++j) {
        if (!valid[static_cast<std::size_t>(j)]) continue;
        const int lag =
            token_steps[static_cast<std::size_t>(i)] - token_steps[static_cast<std::size_t>(j)];
        if (lag >= 0)
          out.weight[static_cast<std::size_t>(lag)] +=
              std::abs(m[static_cast<std::size_t>(i) * T + j]) / total;
      }
      ++rows;
    }
  }
  if (rows > 0)
    for (auto& w : out.weight) w /= rows;
  return out;
}

std::vector<LagProfile> layer_lag_profiles(const std::vector<models::WindowInspection>& windows) {
  std::vector<LagProfile> layers;
  std::vector<int> counts;
  for (const auto& w : windows)
    for (std::size_t l = 0; l < w.layers.size(); ++l) {
      const auto p = lag_profile(w.layers[l], w.token_steps, w.valid);
      if (p.weight.empty()) continue;
      if (layers.size() <= l) layers.resize(l + 1), counts.resize(l + 1, 0);
      auto& sum = layers[l].weight;
      if (sum.size() < p.weight.size()) sum.resize(p.weight.size(), 0.0);
      for (std::size_t k = 0; k < p.weight.size(); ++k) sum[k] += p.weight[k];
      ++counts[l];
    }
  for (std::size_t l = 0; l < layers.size(); ++l)
    for (auto& w : layers[l].weight) w /= std::max(1, counts[l]);
  return layers;
}

LagProfile window_lag_profile(const models::WindowInspection& window,
                              const MapSelection& selection) {
  const TokenMatrix m = select_window_map(window, selection);
  const LayerMixing one{1, m.tokens, std::vector<float>(m.values.begin(), m.values.end()), {}};
  return lag_profile(one, window.token_steps, window.valid);
}

LagProfile selected_lag_profile(const std::vector<models::WindowInspection>& windows,
                                const MapSelection& selection) {
  LagProfile mean;
  int count = 0;
  for (const auto& w : windows) {
    const auto p = window_lag_profile(w, selection);
    if (p.weight.empty()) continue;
    if (mean.weight.size() < p.weight.size()) mean.weight.resize(p.weight.size(), 0.0);
    for (std::size_t k = 0; k < p.weight.size(); ++k) mean.weight[k] += p.weight[k];
    ++count;
  }
  for (auto& w : mean.weight) w /= std::max(1, count);
  return mean;
}

}  // namespace dstudio::analysis
