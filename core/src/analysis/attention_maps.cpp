// Attention maps. See attention_maps.h.

#include "dstudio/analysis/attention_maps.h"

#include <stdexcept>

#include "dstudio/common/error.h"
#include "dstudio/models/variant_registry.h"

namespace dstudio::analysis {

TokenMatrix head_of(const LayerMixing& layer, int head) {
  if (head < 0 || head >= layer.heads)
    throw UsageError("no head " + std::to_string(head) + " in a layer of " +
                     std::to_string(layer.heads));
  TokenMatrix m{layer.tokens, {}};
  const auto n = static_cast<std::size_t>(layer.tokens) * layer.tokens;
  m.values.assign(layer.values.begin() + static_cast<std::ptrdiff_t>(n * head),
                  layer.values.begin() + static_cast<std::ptrdiff_t>(n * (head + 1)));
  return m;
}

TokenMatrix mean_over_heads(const LayerMixing& layer) {
  TokenMatrix m{layer.tokens,
                std::vector<double>(static_cast<std::size_t>(layer.tokens) * layer.tokens, 0.0)};
  const auto n = m.values.size();
  for (int h = 0; h < layer.heads; ++h)
    for (std::size_t k = 0; k < n; ++k)
      m.values[k] += layer.values[n * static_cast<std::size_t>(h) + k] / layer.heads;
  return m;
}

TokenMatrix mean_of(const std::vector<TokenMatrix>& matrices) {
  if (matrices.empty()) return {};
  TokenMatrix m{matrices.front().tokens, std::vector<double>(matrices.front().values.size(), 0.0)};
  for (const auto& x : matrices) {
    if (x.tokens != m.tokens) throw Error("matrices of different sizes cannot be averaged");
    for (std::size_t k = 0; k < m.values.size(); ++k)
      m.values[k] += x.values[k] / static_cast<double>(matrices.size());
  }
  return m;
}

TokenMatrix mean_over_layers(const std::vector<LayerMixing>& layers) {
  std::vector<TokenMatrix> means;
  for (const auto& l : layers) means.push_back(mean_over_heads(l));
  return mean_of(means);
}

TokenMatrix attention_rollout(const std::vector<LayerMixing>& layers) {
  if (layers.empty()) return {};
  const int T = layers.front().tokens;
  const auto n = static_cast<std::size_t>(T);
  TokenMatrix r{T, std::vector<double>(n * n, 0.0)};
  for (std::size_t i = 0; i < n; ++i) r.values[i * n + i] = 1.0;
  for (const auto& layer : layers) {
    auto a = mean_over_heads(layer);
    for (std::size_t i = 0; i < n; ++i) {
      double sum = 0.0;
      for (std::size_t j = 0; j < n; ++j) {
        auto& v = a.values[i * n + j];
        v = 0.5 * v + (i == j ? 0.5 : 0.0);
        sum += v;
      }
      if (sum > 0)
        for (std::size_t j = 0; j < n; ++j) a.values[i * n + j] /= sum;
    }
    // r <- a * r: the later layer mixes what the earlier layers already mixed.
    std::vector<double> next(n * n, 0.0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < n; ++k) {
        const double aik = a.values[i * n + k];
        if (aik == 0.0) continue;
        for (std::size_t j = 0; j < n; ++j) next[i * n + j] += aik * r.values[k * n + j];
      }
    r.values = std::move(next);
  }
  return r;
}

TokenMatrix difference(const TokenMatrix& a, const TokenMatrix& b) {
  if (a.tokens != b.tokens)
    throw Error("the two maps cover different token counts (" + std::to_string(a.tokens) + " and " +
                std::to_string(b.tokens) + ")");
  TokenMatrix d{a.tokens, a.values};
  for (std::size_t k = 0; k < d.values.size(); ++k) d.values[k] -= b.values[k];
  return d;
}

std::vector<std::string> token_labels(const std::vector<char>& types,
                                      const std::vector<int>& steps) {
  std::vector<std::string> out;
  for (std::size_t k = 0; k < types.size(); ++k) {
    const int step = k < steps.size() ? steps[k] : -1;
    std::string label = "pad";  // appended piecewise: GCC 12 warns falsely on chained concatenation
    if (step >= 0) {
      label.assign(1, types[k]);
      label += std::to_string(step);
    }
    out.push_back(label);
  }
  return out;
}

std::vector<std::string> relative_token_labels(const std::vector<char>& types) {
  const int T = static_cast<int>(types.size()),
            per_step = !types.empty() && types.front() == 'R' ? 3 : 1, K = T / per_step;
  std::vector<std::string> out;
  for (int k = 0; k < T; ++k) {
    std::string label(1, types[static_cast<std::size_t>(k)]);
    const int offset = k / per_step - (K - 1);
    label += offset == 0 ? "0" : std::to_string(offset);
    out.push_back(label);
  }
  return out;
}

std::string mixing_derivation(const std::string& mixer) {
  // A layer's mixer is named by its definition, with what varies in brackets: "conv (3 filters)".
  const auto definition = models::mixer_registry().find(mixer.substr(0, mixer.find(" (")));
  if (!definition) return mixer + ": no token mixer of that name is registered";
  if (definition->derivation.empty())
    return definition->name +
           ": the mixing matrix its module returns (its definition says no more)";
  return definition->derivation;
}

}  // namespace dstudio::analysis
