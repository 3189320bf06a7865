// An analysis: how far back a model looks, in steps, and how much of each token's mixing lands on
// the nearest state token (the latest s_t at or before it; for one-token-a-step models, the step's
// own token). Markov locality, as Decision ConvFormer argues for, shows as mass at distance 0 and
// a large share on the nearest state.
//
// For every real query token i of a window, with its step q(i), and every real key j <= i:
//   mass[d]   += M[i, j]   where d = q(i) - q(j) in steps (0 .. K-1)
//   distance  += M[i, j] (q(i) - q(j))
//   nearest   += M[i, s(i)]
// averaged over queries and windows, per layer, of the mixing matrices inspection returns (the
// attention weights, or a mixer's equivalent matrix).

#include <dstudio/analysis/analysis_registry.h>
#include <dstudio/models/windows.h>
#include <dstudio/plugins/plugin.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

using namespace dstudio;

analysis::AnalysisResult token_distance(const analysis::AnalysisInputs& in,
                                        const Progress& progress) {
  const int windows = static_cast<int>(in.options.integer("windows"));
  const int head = static_cast<int>(in.options.integer("head"));
  const Progress inner{[&](double f, std::string_view stage) { progress.update(0.9 * f, stage); },
                       progress.cancel};
  const auto inspected = models::inspect_on_dataset(in.checkpoint, windows, in.dataset, inner);
  const auto& inspections = inspected.inspections;
  if (inspections.empty()) throw Error(in.checkpoint + ": no window could be inspected");
  const int K = inspected.info.variant.context_length;
  const auto layers = inspections.front().layers.size();
  if (head > inspections.front().layers.front().heads)
    throw UsageError("--head " + std::to_string(head) + ": the model has " +
                     std::to_string(inspections.front().layers.front().heads) +
                     " heads (0: their mean)");

  std::vector<std::vector<double>> mass(layers,
                                        std::vector<double>(static_cast<std::size_t>(K), 0.0));
  std::vector<double> distance(layers, 0.0), tokens_distance(layers, 0.0), nearest(layers, 0.0),
      queries(layers, 0.0);
  for (std::size_t w = 0; w < inspections.size(); ++w) {
    progress.update(0.9 + 0.1 * static_cast<double>(w) / static_cast<double>(inspections.size()),
                    "distances");
    const auto& ins = inspections[w];
    const int T = static_cast<int>(ins.token_types.size());
    for (std::size_t l = 0; l < layers; ++l) {
      const auto m = head > 0 ? analysis::head_of(ins.layers[l], head - 1)
                              : analysis::mean_over_heads(ins.layers[l]);
      int latest_state = -1;
      for (int i = 0; i < T; ++i) {
        const bool state = ins.token_types[static_cast<std::size_t>(i)] == 's' ||
                           ins.token_types[static_cast<std::size_t>(i)] == 't';
        if (!ins.valid[static_cast<std::size_t>(i)]) continue;
        if (state) latest_state = i;
        const int q = ins.token_steps[static_cast<std::size_t>(i)];
        for (int j = 0; j <= i; ++j) {
          if (!ins.valid[static_cast<std::size_t>(j)]) continue;
          const double a = m.at(i, j);
          const int d = std::clamp(q - ins.token_steps[static_cast<std::size_t>(j)], 0, K - 1);
          mass[l][static_cast<std::size_t>(d)] += a;
          distance[l] += a * d;
          tokens_distance[l] += a * (i - j);
        }
        if (latest_state >= 0) nearest[l] += m.at(i, latest_state);
        queries[l] += 1.0;
      }
    }
  }

  analysis::AnalysisResult result;
  nlohmann::ordered_json per_layer = nlohmann::ordered_json::array();
  analysis::AnalysisTable by_distance{"mass_by_distance", {"layer", "distance_steps", "mass"}, {}};
  analysis::AnalysisTable summary_table{
      "token_distance",
      {"layer", "mean_distance_steps", "mean_distance_tokens", "nearest_state_share"},
      {}};
  analysis::AnalysisFigure lines{"attention_by_distance",
                                 "Mixing mass by distance",
                                 "distance (steps)",
                                 "mass per query",
                                 analysis::AnalysisFigure::Kind::Lines,
                                 {},
                                 {}};
  analysis::AnalysisFigure bars{"nearest_state_share",
                                "Share on the nearest state token",
                                "",
                                "share",
                                analysis::AnalysisFigure::Kind::Bars,
                                {{"share", {}, {}, {}}},
                                {}};
  for (std::size_t l = 0; l < layers; ++l) {
    const double n = std::max(queries[l], 1.0);
    analysis::AnalysisSeries series{"layer " + std::to_string(l + 1), {}, {}, {}};
    for (int d = 0; d < K; ++d) {
      const double v = mass[l][static_cast<std::size_t>(d)] / n;
      series.x.push_back(d);
      series.y.push_back(v);
      by_distance.rows.push_back({static_cast<double>(l + 1), static_cast<double>(d), v});
    }
    lines.series.push_back(std::move(series));
    const double total = std::max(1e-12, [&] {
      double s = 0.0;
      for (double v : mass[l]) s += v;
      return s;
    }());
    const double steps = distance[l] / total, tokens = tokens_distance[l] / total,
                 share = nearest[l] / n;
    summary_table.rows.push_back({static_cast<double>(l + 1), steps, tokens, share});
    bars.series.front().x.push_back(static_cast<double>(l));
    bars.series.front().y.push_back(share);
    bars.categories.push_back("layer " + std::to_string(l + 1));
    per_layer.push_back({{"layer", l + 1},
                         {"mixer", inspections.front().layers[l].mixer},
                         {"mean_distance_steps", steps},
                         {"mean_distance_tokens", tokens},
                         {"nearest_state_share", share}});
  }
  result.summary_json = nlohmann::ordered_json{
      {"windows", inspections.size()},
      {"context_length", K},
      {"head", head == 0 ? nlohmann::ordered_json("mean") : nlohmann::ordered_json(head)},
      {"layers", per_layer}}.dump();
  result.tables = {std::move(summary_table), std::move(by_distance)};
  result.figures = {std::move(lines), std::move(bars)};
  return result;
}

}  // namespace

DSTUDIO_PLUGIN("token-distance", "1.0.0",
               "How far back each layer mixes, and its share on the nearest state token") {
  using Type = analysis::AnalysisOption::Type;
  analysis::AnalysisDefinition d;
  d.name = "token-distance";
  d.title = "Token distance";
  d.description =
      "Mixing mass by distance in steps, mean distance and the share on the nearest state token, "
      "per layer";
  d.options = {
      {"windows", "dataset windows averaged", Type::Integer, "32", {}, 1, 4096},
      {"head", "this head (from 1); 0: the mean over heads", Type::Integer, "0", {}, 0, 64}};
  d.run = token_distance;
  registrar.add_analysis(d);
}
