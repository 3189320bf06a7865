// Token embeddings as a point cloud. See token_cloud.h.

#include "dstudio/models/token_cloud.h"

#include <algorithm>
#include <stdexcept>

#include "dstudio/common/error.h"

namespace dstudio::models {

std::vector<std::string> TokenCloud::modalities() const {
  std::vector<std::string> out;
  for (const auto& m : modality)
    if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  return out;
}

TokenCloud token_cloud(const std::vector<Window>& windows,
                       const std::vector<WindowInspection>& inspections,
                       const std::function<double(std::span<const float>)>& goal_distance) {
  if (windows.size() != inspections.size())
    throw Error("token_cloud: one inspection per window is needed");
  TokenCloud c;
  const auto add = [&c, &goal_distance](const std::vector<float>& source, int k,
                                        const std::string& modality, int w, const Window& win,
                                        int p) {
    const auto H = static_cast<std::ptrdiff_t>(c.dims);
    c.points.insert(c.points.end(), source.begin() + k * H, source.begin() + (k + 1) * H);
    c.modality.push_back(modality);
    c.window.push_back(w);
    c.episode.push_back(win.episode);
    c.timestep.push_back(static_cast<int>(win.timesteps[static_cast<std::size_t>(p)]));
    c.return_to_go.push_back(win.returns_to_go[static_cast<std::size_t>(p)]);
    if (goal_distance) {
      const auto S = static_cast<std::size_t>(win.state_dim);
      c.goal_distance.push_back(goal_distance(
          std::span<const float>(win.states).subspan(static_cast<std::size_t>(p) * S, S)));
    }
  };
  for (std::size_t w = 0; w < windows.size(); ++w) {
    const auto& wi = inspections[w];
    const auto& win = windows[w];
    if (c.dims == 0) c.dims = wi.hidden;
    if (wi.hidden != c.dims) throw Error("token_cloud: inspections of different widths");
    const int K = win.steps;
    if (K <= 0) continue;
    // The R, s, a embeddings before merging, three per step.
    if (wi.tokens_before_merge.size() >=
        static_cast<std::size_t>(3 * K) * static_cast<std::size_t>(c.dims))
      for (int k = 0; k < 3 * K; ++k) {
        const int p = k / 3;
        if (win.mask[static_cast<std::size_t>(p)] < 0.5f) continue;
        add(wi.tokens_before_merge, k, std::string(1, "Rsa"[k % 3]), static_cast<int>(w), win, p);
      }
    // Then what enters the first block: one token per step (merged) or three (R, s, a).
    const int T = static_cast<int>(wi.token_types.size());
    const int per = std::max(1, T / K);
    if (wi.tokens.size() < static_cast<std::size_t>(T) * static_cast<std::size_t>(c.dims)) continue;
    for (int k = 0; k < T; ++k) {
      const int p = std::min(K - 1, k / per);
      if (win.mask[static_cast<std::size_t>(p)] < 0.5f) continue;
      std::string m = "merged";
      if (per > 1) {
        m = std::string(1, wi.token_types[static_cast<std::size_t>(k)]);
        m += " in block";
      }
      add(wi.tokens, k, m, static_cast<int>(w), win, p);
    }
  }
  return c;
}

}  // namespace dstudio::models
