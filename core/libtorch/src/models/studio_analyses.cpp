// The papers' analyses as registered analyses (analysis_registry.h): attention maps, entropy
// against reward, the token t-SNE, modality zeroing, the target-return sweep and training curves.
// `dstudio analyze <name>` and the window's Analyses tab are made from these definitions; each
// computes its numbers once, here, with the same steps the views use (inspect_on_dataset,
// select_map, head_entropies, token_cloud, zeroing_ablation, read_run_metrics).

// Index of this file:
//   [SECTION] Attention maps
//   [SECTION] Entropy and reward
//   [SECTION] Token t-SNE
//   [SECTION] Modality zeroing
//   [SECTION] Target-return sweep
//   [SECTION] Training curves
//   [SECTION] Locality
//   [SECTION] The registrations

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis_parts.h"
#include "dstudio/analysis/analysis_registry.h"
#include "dstudio/analysis/curves.h"
#include "dstudio/analysis/entropy.h"
#include "dstudio/analysis/locality.h"
#include "dstudio/analysis/metrics_row.h"
#include "dstudio/analysis/tsne.h"
#include "dstudio/analysis/window_maps.h"
#include "dstudio/common/error.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/env/environment.h"
#include "dstudio/models/checkpoint.h"
#include "dstudio/models/checkpoint_model.h"
#include "dstudio/models/evaluation.h"
#include "dstudio/models/targets.h"
#include "dstudio/models/token_cloud.h"
#include "dstudio/models/windows.h"

namespace dstudio::models {
namespace {

// An interval as the summaries write it (null where there is none).
nlohmann::ordered_json interval_json(const analysis::Interval& i) {
  using nlohmann::ordered_json;
  const auto finite = [](double v) { return std::isfinite(v) ? ordered_json(v) : ordered_json(); };
  return {{"estimate", finite(i.estimate)}, {"low", finite(i.low)}, {"high", finite(i.high)}};
}

using namespace analysis_parts;

// ---------------------------------------------------------------------------------------------
// [SECTION] Attention maps

AnalysisResult attention(const AnalysisInputs& in, const Progress& progress) {
  const auto& o = in.options;
  const auto checkpoint = opened(in);
  const auto& info = checkpoint->info;
  const auto& cfg = info.variant;
  const int K = cfg.context_length, per_step = cfg.tokenizer == Tokenizer::Triplet ? 3 : 1;
  const std::string source = o.text("source");
  // What the model has is known from its description: a layer, head or step it lacks is refused
  // before anything runs.
  const int only = o.given("layer") ? static_cast<int>(o.integer("layer")) : 0;
  const int head = o.given("head") ? static_cast<int>(o.integer("head")) : 0;
  if (only > cfg.layers)
    throw UsageError("--layer " + std::to_string(only) + ": the model has layers 1 to " +
                     std::to_string(cfg.layers));
  if (head > cfg.heads)
    throw UsageError("--head " + std::to_string(head) + ": the model has heads 1 to " +
                     std::to_string(cfg.heads));
  if (o.given("step") && o.integer("step") >= cfg.max_ep_len)
    throw UsageError("--step " + std::to_string(o.integer("step")) +
                     ": the model's episodes end before step " + std::to_string(cfg.max_ep_len));
  std::vector<Window> windows;
  std::vector<WindowInspection> inspections;
  std::filesystem::path dataset;
  std::vector<std::string> dataset_warnings;
  if (source == "rollout") {
    RolloutConfig rc;
    rc.episodes = 1;
    rc.seed = static_cast<std::uint64_t>(o.integer("seed"));
    const int step = o.given("step") ? static_cast<int>(o.integer("step")) : 2 * K;
    rc.max_steps = step + 1;
    const auto r = rollout(*checkpoint, rc, progress.part(0.0, 0.8));
    const auto& e = r.episodes.front();
    if (o.given("step") && step >= e.length)
      throw UsageError("--step " + std::to_string(step) + ": the episode (seed " +
                       std::to_string(rc.seed) + ") ended after " + std::to_string(e.length) +
                       " steps; choose a step below " + std::to_string(e.length));
    windows.push_back(
        window_from_trace(e, std::min(step, e.length - 1), K, cfg.state_dim, cfg.act_dim));
    inspections = inspect_windows(*checkpoint, windows);
    progress.update(0.9, "inspected");
  } else {
    auto inspected = inspect_on_dataset(*checkpoint, static_cast<int>(o.integer("windows")),
                                        in.dataset, progress.part(0.0, 0.9));
    dataset = inspected.dataset;
    dataset_warnings = std::move(inspected.dataset_warnings);
    windows = std::move(inspected.windows);
    inspections = std::move(inspected.inspections);
  }
  const auto labels = analysis::window_labels(inspections);
  const int layers = static_cast<int>(inspections.front().layers.size());
  if (only > layers)
    throw UsageError("--layer " + std::to_string(only) + ": the model has layers 1 to " +
                     std::to_string(layers));
  const std::string who = checkpoint_label(in.checkpoint),
                    head_text = head > 0 ? "head " + std::to_string(head) : "mean over heads";
  AnalysisResult result;
  ordered_json layer_json = ordered_json::array();
  for (int l = 0; l < layers; ++l) {
    if (only > 0 && l + 1 != only) continue;
    std::string note;
    const auto m =
        analysis::select_map(inspections, {analysis::MapKind::Layer, l + 1, head}, &note);
    const auto& mixer = inspections.front().layers[static_cast<std::size_t>(l)].mixer;
    result.figures.push_back(heatmap("attention_layer" + std::to_string(l + 1),
                                     who + "\nlayer " + std::to_string(l + 1) + ": " + mixer +
                                         (head > 0 ? ", " + head_text : ""),
                                     m, labels, false, "weight"));
    double entropy = 0.0;
    for (const auto& w : inspections) {
      const auto& lm = w.layers[static_cast<std::size_t>(l)];
      entropy += analysis::mean_head_entropy(lm.values, lm.heads, lm.tokens, w.valid) /
                 static_cast<double>(inspections.size());
    }
    ordered_json entry = {{"layer", l + 1},
                          {"mixer", mixer},
                          {"heads", inspections.front().layers[static_cast<std::size_t>(l)].heads},
                          {"derivation", analysis::mixing_derivation(mixer)},
                          {"mean_entropy", entropy}};
    if (!note.empty()) entry["note"] = note;
    layer_json.push_back(entry);
  }
  const auto mean = analysis::select_map(inspections, {analysis::MapKind::MeanOverLayers});
  result.figures.push_back(
      heatmap("attention_mean_layers", who + "\nmean over layers", mean, labels, false, "weight"));
  result.figures.push_back(heatmap("attention_rollout", who + "\nattention rollout",
                                   analysis::select_map(inspections, {analysis::MapKind::Rollout}),
                                   labels, false, "weight"));
  ordered_json summary = {{"variant", cfg.variant},
                          {"source", source},
                          {"windows", windows.size()},
                          {"tokens", labels.size()},
                          {"layers", layer_json}};
  note_dataset_warnings(summary, dataset, dataset_warnings);
  const std::string compare = existing(o, "compare");
  if (!compare.empty()) {
    const auto other_checkpoint = open_checkpoint(compare);
    const auto& other = other_checkpoint->info;
    if (other.variant.context_length != K ||
        (other.variant.tokenizer == Tokenizer::Triplet) != (per_step == 3))
      throw Error("the two checkpoints see windows of different sizes (" +
                  std::to_string(cfg.tokens()) + " and " + std::to_string(other.variant.tokens()) +
                  " tokens); their maps cannot be subtracted");
    progress.update(0.9, "inspecting the compared checkpoint");
    const auto theirs = inspect_windows(*other_checkpoint, windows);
    const auto diff = analysis::difference(
        mean, analysis::select_map(theirs, {analysis::MapKind::MeanOverLayers}));
    result.figures.push_back(heatmap("attention_difference",
                                     who + " - " + checkpoint_label(compare) + "\nmean over layers",
                                     diff, labels, true, "difference"));
    double largest = 0.0;
    for (double v : diff.values) largest = std::max(largest, std::abs(v));
    summary["compare"] = {{"checkpoint", compare},
                          {"variant", other.variant.variant},
                          {"max_abs_difference", largest}};
  }
  result.summary_json = summary.dump();
  return result;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Entropy and reward

AnalysisResult entropy(const AnalysisInputs& in, const Progress& progress) {
  const auto& o = in.options;
  const auto checkpoint = opened(in);
  const auto& info = checkpoint->info;
  const int K = info.variant.context_length;
  RolloutConfig rc;
  rc.targets = {target_of(in, info)};
  rc.episodes = static_cast<int>(o.integer("episodes"));
  rc.seed = static_cast<std::uint64_t>(o.integer("seed"));
  rc.entropy = true;
  rc.threads = static_cast<int>(o.integer("threads"));
  const auto r = rollout(*checkpoint, rc, progress.part(0.0, 0.8));
  // Only full windows: a younger window has fewer tokens, so less entropy by construction.
  const int skip = o.given("skip") ? static_cast<int>(o.integer("skip")) : K - 1;
  AnalysisResult result;
  AnalysisTable steps{"entropy_reward", {"episode", "step", "entropy", "reward"}, {}};
  std::vector<double> entropies, rewards;
  for (std::size_t e = 0; e < r.episodes.size(); ++e) {
    const auto& ep = r.episodes[e];
    for (int t = 0; t < ep.length; ++t) {
      const auto at = static_cast<std::size_t>(t);
      steps.rows.push_back(
          {static_cast<double>(e), static_cast<double>(t), ep.entropy[at], ep.rewards[at]});
      if (t >= skip) {
        entropies.push_back(ep.entropy[at]);
        rewards.push_back(ep.rewards[at]);
      }
    }
  }
  const auto mean = analysis::mean_std(entropies);
  const double p = analysis::pearson(entropies, rewards),
               s = analysis::spearman(entropies, rewards);

  // Per layer and head, on dataset windows: entropy, intra-step and inter-step.
  AnalysisTable heads_table{
      "entropy_heads", {"layer", "head", "mixer", "entropy", "intra_step", "inter_step"}, {}};
  ordered_json heads = ordered_json::array();
  const auto inspected = inspect_on_dataset(*checkpoint, static_cast<int>(o.integer("windows")),
                                            in.dataset, progress.part(0.8, 1.0));
  for (const auto& h : analysis::head_entropies(inspected.inspections)) {
    // intra_step is NaN (an empty cell) with one token a step.
    heads_table.rows.push_back({static_cast<double>(h.layer), static_cast<double>(h.head), h.mixer,
                                h.entropy, h.intra_step, h.inter_step});
    heads.push_back({{"layer", h.layer},
                     {"head", h.head},
                     {"mixer", h.mixer},
                     {"entropy", h.entropy},
                     {"intra_step", finite_or_null(h.intra_step)},
                     {"inter_step", h.inter_step}});
  }
  result.tables = {steps, heads_table};

  const auto& ep = r.episodes.front();
  AnalysisFigure f;
  f.name = "entropy_reward";
  char title[200];
  // The correlation pools every episode; the curves drawn are the first episode's.
  if (r.episodes.size() == 1)
    std::snprintf(title, sizeof title,
                  "%s, one episode\nPearson %.2f, Spearman %.2f over %zu steps",
                  checkpoint_label(in.checkpoint).c_str(), p, s, entropies.size());
  else
    std::snprintf(
        title, sizeof title, "%s, episode 1 of %zu\nPearson %.2f, Spearman %.2f over all %zu steps",
        checkpoint_label(in.checkpoint).c_str(), r.episodes.size(), p, s, entropies.size());
  f.title = title;
  f.x_label = "step";
  f.y_label = "attention entropy";
  f.right_label = "reward";
  f.series = {{"entropy (layer 1)", {}, {}, {}, false}, {"reward", {}, {}, {}, true}};
  for (int t = 0; t < ep.length; ++t) {
    f.series[0].x.push_back(t);
    f.series[0].y.push_back(ep.entropy[static_cast<std::size_t>(t)]);
    f.series[1].x.push_back(t);
    f.series[1].y.push_back(ep.rewards[static_cast<std::size_t>(t)]);
  }
  result.figures.push_back(std::move(f));
  ordered_json episodes = ordered_json::array();
  for (const auto& e : r.episodes)
    episodes.push_back({{"return", e.episode_return}, {"score", e.score}, {"length", e.length}});
  ordered_json summary = {{"variant", info.variant.variant},
                          {"target", rc.targets.front()},
                          {"skipped_steps", skip},
                          {"mean_entropy", mean.mean},
                          {"std_entropy", mean.std},
                          {"entropy_reward_pearson", finite_or_null(p)},
                          {"entropy_reward_spearman", finite_or_null(s)},
                          {"pairs", entropies.size()},
                          {"episodes", episodes},
                          {"heads", heads}};
  note_dataset_warnings(summary, inspected.dataset, inspected.dataset_warnings);
  result.summary_json = summary.dump();
  return result;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Token t-SNE

// Where the tokens come from: --source, where --episodes alone asks for every step of the
// dataset's episodes. The options another source takes are refused.
std::string token_source_name(const analysis::AnalysisOptions& o) {
  std::string from = o.text("source");
  if (from == "windows" && o.given("episodes")) from = "episodes";
  if (from != "windows" && o.given("windows"))
    throw UsageError("--windows counts windows; with --source " + from + " give --episodes");
  if (from == "windows" && o.given("max-tokens"))
    throw UsageError("--max-tokens limits --source episodes or rollouts; choose fewer --windows");
  if (from != "rollouts" && o.given("target"))
    throw UsageError("--target is the rollouts' target return: give --source rollouts");
  return from;
}

TokenSource token_source(const analysis::AnalysisOptions& o, const std::string& from) {
  TokenSource source;
  source.kind = from == "rollouts"   ? TokenSource::Kind::Rollouts
                : from == "episodes" ? TokenSource::Kind::Episodes
                                     : TokenSource::Kind::Windows;
  if (source.kind == TokenSource::Kind::Windows)
    source.count = o.given("windows") ? static_cast<int>(o.integer("windows")) : 40;
  else
    source.count = o.given("episodes") ? static_cast<int>(o.integer("episodes")) : 10;
  source.max_tokens = o.given("max-tokens") ? static_cast<int>(o.integer("max-tokens")) : 0;
  source.target = o.given("target") ? o.number("target") : 0.0;
  source.seed = static_cast<std::uint64_t>(o.integer("seed"));
  source.threads = static_cast<int>(o.integer("threads"));
  return source;
}

analysis::TsneConfig token_tsne_config(const analysis::AnalysisOptions& o) {
  analysis::TsneConfig tc;
  tc.perplexity = o.number("perplexity");
  tc.iterations = static_cast<int>(o.integer("iterations"));
  tc.snapshot_every = static_cast<int>(o.integer("snapshot-every"));
  tc.threads = static_cast<int>(o.integer("threads"));
  tc.method = analysis::tsne_method_named(o.text("method"));
  tc.neighbours = analysis::tsne_neighbours_named(o.text("neighbours"));
  return tc;
}

// Token i's place in the layout: k = 0 for x, 1 for y.
double layout_at(const analysis::TsneResult& r, int i, int k) {
  return r.embedding[static_cast<std::size_t>(i) * 2 + static_cast<std::size_t>(k)];
}

// The layout's points with what each token is, and the snapshots of the layout as it formed.
std::vector<AnalysisTable> token_tsne_tables(const TokenCloud& cloud,
                                             const analysis::TsneResult& r) {
  const int n = cloud.count();
  const bool goal = cloud.goal_distance.size() == static_cast<std::size_t>(n);
  AnalysisTable points{
      "tsne", {"x", "y", "modality", "window", "episode", "timestep", "return_to_go"}, {}};
  if (goal) points.columns.push_back("goal_distance");
  for (int i = 0; i < n; ++i) {
    const auto at = static_cast<std::size_t>(i);
    points.rows.push_back({layout_at(r, i, 0), layout_at(r, i, 1), cloud.modality[at],
                           static_cast<double>(cloud.window[at]),
                           static_cast<double>(cloud.episode[at]),
                           static_cast<double>(cloud.timestep[at]), cloud.return_to_go[at]});
    if (goal) points.rows.back().push_back(cloud.goal_distance[at]);
  }
  AnalysisTable snapshots{"tsne_snapshots", {"iteration", "index", "x", "y"}, {}};
  for (std::size_t k = 0; k < r.snapshots.size(); ++k)
    for (int i = 0; i < n; ++i)
      snapshots.rows.push_back({static_cast<double>(r.snapshot_iterations[k]),
                                static_cast<double>(i),
                                r.snapshots[k][static_cast<std::size_t>(i) * 2],
                                r.snapshots[k][static_cast<std::size_t>(i) * 2 + 1]});
  return {points, snapshots};
}

// The layout as a scatter of `groups`, token i in group `group_of(i)`.
template <class GroupOf>
AnalysisFigure token_scatter(std::string name, std::string title, std::vector<std::string> groups,
                             const analysis::TsneResult& r, int n, const GroupOf& group_of) {
  AnalysisFigure f;
  f.name = std::move(name);
  f.title = std::move(title);
  f.kind = AnalysisFigure::Kind::Scatter;
  for (auto& g : groups) f.series.push_back({std::move(g), {}, {}, {}, false});
  for (int i = 0; i < n; ++i) {
    auto& s = f.series[static_cast<std::size_t>(group_of(i))];
    s.x.push_back(layout_at(r, i, 0));
    s.y.push_back(layout_at(r, i, 1));
  }
  return f;
}

// Whole numbers for locomotion's returns, three digits for small ones (AntMaze's 0 and 1).
std::string range_label(const char* what, double lo, double hi) {
  char text[96];
  if (std::abs(hi) >= 100 || std::abs(lo) >= 100)
    std::snprintf(text, sizeof text, "%s %.0f-%.0f", what, lo, hi);
  else
    std::snprintf(text, sizeof text, "%s %.3g-%.3g", what, lo, hi);
  return std::string(text);
}

// The layout's tokens by modality, by timestep, by return-to-go and, for goal-reaching tasks, by
// distance to the goal.
std::vector<AnalysisFigure> token_tsne_figures(const TokenCloud& cloud,
                                               const analysis::TsneResult& r,
                                               const std::string& who) {
  const int n = cloud.count();
  std::vector<AnalysisFigure> figures;
  // By modality, in the order the modalities first appear.
  std::vector<std::string> modalities;
  for (const auto& m : cloud.modality)
    if (std::find(modalities.begin(), modalities.end(), m) == modalities.end())
      modalities.push_back(m);
  figures.push_back(
      token_scatter("tsne_modality", who + ": tokens by modality", modalities, r, n, [&](int i) {
        return std::find(modalities.begin(), modalities.end(),
                         cloud.modality[static_cast<std::size_t>(i)]) -
               modalities.begin();
      }));
  // By timestep: up to four groups of equal width over the steps seen (fewer when fewer steps).
  const auto [lowest, highest] = std::minmax_element(cloud.timestep.begin(), cloud.timestep.end());
  const int first_step = *lowest, span = *highest - *lowest + 1, bins = std::min(4, span);
  std::vector<std::string> quarters;
  for (int q = 0; q < bins; ++q)
    quarters.push_back("steps " + std::to_string(first_step + q * span / bins) + "-" +
                       std::to_string(first_step + (q + 1) * span / bins - 1));
  figures.push_back(
      token_scatter("tsne_timestep", who + ": tokens by timestep", quarters, r, n, [&](int i) {
        return std::min(bins - 1,
                        (cloud.timestep[static_cast<std::size_t>(i)] - first_step) * bins / span);
      }));
  // By return-to-go: quartiles of the values seen.
  std::vector<double> rtgs = cloud.return_to_go;
  std::sort(rtgs.begin(), rtgs.end());
  const double q[5] = {rtgs.front(), rtgs[rtgs.size() / 4], rtgs[rtgs.size() / 2],
                       rtgs[rtgs.size() * 3 / 4], rtgs.back()};
  std::vector<std::string> ranges;
  for (int k = 0; k < 4; ++k) ranges.push_back(range_label("RTG", q[k], q[k + 1]));
  figures.push_back(
      token_scatter("tsne_rtg", who + ": tokens by return-to-go", ranges, r, n, [&](int i) {
        const double v = cloud.return_to_go[static_cast<std::size_t>(i)];
        return v < q[1] ? 0 : v < q[2] ? 1 : v < q[3] ? 2 : 3;
      }));
  // By distance to the goal (goal-reaching tasks): quartiles of the distances seen.
  if (cloud.goal_distance.size() == static_cast<std::size_t>(n)) {
    std::vector<double> d = cloud.goal_distance;
    std::sort(d.begin(), d.end());
    const double g[5] = {d.front(), d[d.size() / 4], d[d.size() / 2], d[d.size() * 3 / 4],
                         d.back()};
    std::vector<std::string> bands;
    for (int k = 0; k < 4; ++k) bands.push_back(range_label("distance", g[k], g[k + 1]));
    figures.push_back(token_scatter(
        "tsne_goal", who + ": tokens by distance to the goal", bands, r, n, [&](int i) {
          const double v = cloud.goal_distance[static_cast<std::size_t>(i)];
          return v < g[1] ? 0 : v < g[2] ? 1 : v < g[3] ? 2 : 3;
        }));
  }
  return figures;
}

AnalysisResult token_tsne(const AnalysisInputs& in, const Progress& progress) {
  const auto& o = in.options;
  const std::string from = token_source_name(o);
  const TokenSource source = token_source(o, from);
  const auto gathered = gather_tokens(*opened(in), source, in.dataset, progress.part(0.0, 0.2));
  // The same token cloud the window's t-SNE view shows.
  const auto& cloud = gathered.cloud;
  const int n = cloud.count(), H = cloud.dims;
  const analysis::TsneConfig tc = token_tsne_config(o);
  const auto r = analysis::tsne(cloud.points, n, H, tc, progress.part(0.2, 1.0));
  AnalysisResult result;
  result.tables = token_tsne_tables(cloud, r);
  result.figures = token_tsne_figures(cloud, r, checkpoint_label(in.checkpoint));
  ordered_json summary = {{"variant", gathered.info.variant.variant},
                          {"source", from},
                          {"windows", gathered.windows},
                          {"episodes", gathered.episodes},
                          {"points", n},
                          {"dims", H},
                          {"perplexity", tc.perplexity},
                          {"iterations", tc.iterations},
                          {"method", analysis::to_string(r.method)},
                          {"neighbours", analysis::to_string(r.neighbours)},
                          {"seconds", r.seconds},
                          {"neighbour_seconds", r.neighbour_seconds},
                          {"kl", r.kl},
                          {"kl_exact", r.kl_exact},
                          {"snapshots", r.snapshots.size()}};
  if (source.kind == TokenSource::Kind::Rollouts)
    summary["episode_returns"] = gathered.episode_returns;
  note_dataset_warnings(summary, gathered.dataset, gathered.dataset_warnings);
  result.summary_json = summary.dump();
  return result;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Modality zeroing

AnalysisResult ablation(const AnalysisInputs& in, const Progress& progress) {
  // Every score comes from episodes the model plays; a dataset given here would be ignored.
  if (!in.dataset.empty())
    throw UsageError("--dataset " + in.dataset +
                     ": the ablation plays the policy and reads no dataset");
  const auto& o = in.options;
  AblationConfig config;
  config.target = o.given("target") ? o.number("target") : 0.0;
  config.episodes = static_cast<int>(o.integer("episodes"));
  config.seeds = static_cast<int>(o.integer("seeds"));
  config.seed = static_cast<std::uint64_t>(o.integer("seed"));
  config.threads = static_cast<int>(o.integer("threads"));
  const auto checkpoint = opened(in);
  const auto r = zeroing_ablation(*checkpoint, config, progress);
  ordered_json summary = {{"variant", checkpoint->info.variant.variant},
                          {"target", r.target},
                          {"episodes", config.episodes},
                          {"seeds", config.seeds}};
  AnalysisTable table{"ablation", {"zeroing", "seed", "episode", "return", "score"}, {}};
  AnalysisFigure bars;
  bars.name = "ablation";
  bars.title = checkpoint_label(in.checkpoint) + ": modality zeroed at inference";
  bars.y_label = "normalised score";
  bars.kind = AnalysisFigure::Kind::Bars;
  bars.series = {{"normalised score", {}, {}, {}, false}};
  for (const auto& z : r.zeroings) {
    const std::string key = to_string(z.zeroing);
    for (std::size_t e = 0; e < z.episodes.size(); ++e) {
      const auto seed = e / static_cast<std::size_t>(config.episodes),
                 episode = e % static_cast<std::size_t>(config.episodes);
      table.rows.push_back({key, static_cast<double>(seed), static_cast<double>(episode),
                            z.episodes[e].episode_return, z.episodes[e].score});
    }
    summary[key] = {{"mean", z.summary.mean_score},
                    {"std", z.summary.std_score},
                    {"iqm", interval_json(z.summary.iqm_score)},
                    {"std_over_seeds", z.std_over_seeds},
                    {"episodes", z.summary.episodes}};
    bars.series.front().x.push_back(static_cast<double>(bars.categories.size()));
    bars.series.front().y.push_back(z.summary.mean_score);
    bars.series.front().spread.push_back(z.summary.std_score);
    bars.categories.push_back(zeroing_label(z.zeroing));
  }
  return one_table_result(std::move(table), std::move(bars), summary);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Target-return sweep

AnalysisResult rtg_sweep(const AnalysisInputs& in, const Progress& progress) {
  const auto& o = in.options;
  const auto checkpoint = opened(in);
  const auto& info = checkpoint->info;
  const auto& spec = task_of(info);
  std::vector<double> targets = o.numbers("targets");
  const double base = o.given("base") ? o.number("base") : default_target(info);
  if (targets.empty())
    for (double m : o.numbers("multiples")) targets.push_back(base * m);
  if (targets.empty())
    throw UsageError("--targets and --multiples are both empty: there is nothing to sweep");
  const int episodes = static_cast<int>(o.integer("episodes"));
  ordered_json summary = {{"variant", info.variant.variant},
                          {"env", spec.name},
                          {"base_target", base},
                          {"episodes", episodes}};
  AnalysisTable table{
      "rtg_sweep",
      {"checkpoint", "target", "mean", "std", "mean_return", "iqm", "iqm_low", "iqm_high"},
      {}};
  AnalysisFigure f;
  f.name = "rtg_sweep";
  f.title = "Returns as the target leaves the data";
  f.x_label = "target return";
  f.y_label = "normalised score";
  f.log_x = true;
  const std::string compare = existing(o, "compare");
  const std::vector<std::string> checkpoints =
      compare.empty() ? std::vector<std::string>{in.checkpoint}
                      : std::vector<std::string>{in.checkpoint, compare};
  for (std::size_t k = 0; k < checkpoints.size(); ++k) {
    const auto& ckpt = checkpoints[k];
    RolloutConfig rc;
    rc.targets = targets;
    rc.episodes = episodes;
    rc.seed = static_cast<std::uint64_t>(o.integer("seed"));
    rc.threads = static_cast<int>(o.integer("threads"));
    rc.traces = false;
    const double share = 1.0 / static_cast<double>(checkpoints.size());
    const auto r = rollout(k == 0 ? *checkpoint : *open_checkpoint(ckpt), rc,
                           progress.part(k * share, (k + 1) * share));
    ordered_json points = ordered_json::array();
    analysis::AnalysisSeries line{checkpoint_label(ckpt), {}, {}, {}, false};
    for (const auto& s : r.summary) {
      points.push_back({{"target", s.target},
                        {"mean", s.mean_score},
                        {"std", s.std_score},
                        {"mean_return", s.mean_return},
                        {"iqm", interval_json(s.iqm_score)}});
      table.rows.push_back({checkpoint_label(ckpt), s.target, s.mean_score, s.std_score,
                            s.mean_return, s.iqm_score.estimate, s.iqm_score.low,
                            s.iqm_score.high});
      line.x.push_back(s.target);
      line.y.push_back(s.mean_score);
      line.spread.push_back(s.std_score);
    }
    if (k == 0)
      summary["points"] = points;
    else
      summary["compare"] = {{"checkpoint", ckpt}, {"points", points}};
    f.series.push_back(std::move(line));
  }
  // The best episode of the data as a reference line, when the data can be found.
  try {
    const auto ds = data::load_dataset(
        in.dataset.empty() ? checkpoint_dataset(info).string() : in.dataset, {.isolate = true});
    double best = -1e300;
    for (const auto& e : ds.episodes) best = std::max(best, e.ret);
    summary["dataset_best_return"] = best;
    summary["dataset_best_score"] = env::normalized_score(spec, best);
    note_dataset_warnings(summary, ds.path, ds.warnings);
    f.references.push_back({"best episode in the data", env::normalized_score(spec, best)});
  } catch (const Cancelled&) {
    throw;
  } catch (const std::exception& e) {
    summary["dataset_best_return"] = nullptr;
    summary["dataset_note"] = std::string("no dataset reference line: ") + e.what();
  }
  return one_table_result(std::move(table), std::move(f), summary);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Training curves

AnalysisResult training_curves(const AnalysisInputs& in, const Progress& progress) {
  const auto& o = in.options;
  const std::string run = existing(o, "run"), compare = existing(o, "compare");
  std::vector<std::pair<std::string, analysis::RunMetrics>> runs = {
      {fs::path(run).filename().string(), analysis::read_run_metrics(run)}};
  if (!compare.empty())
    runs.push_back({fs::path(compare).filename().string(), analysis::read_run_metrics(compare)});
  progress.check();
  ordered_json summary = {{"run", run}};
  AnalysisResult result;
  for (const auto& [key, label] :
       {std::pair{analysis::metrics::kLoss, "training loss"},
        std::pair{analysis::metrics::kEntropyLayer1, "attention entropy, layer 1"},
        std::pair{analysis::metrics::kEvalScore, "normalised score"}}) {
    AnalysisFigure f;
    f.name = std::string("training_") + key;
    f.title = label;
    f.x_label = "training step";
    f.y_label = label;
    ordered_json last = ordered_json::object();
    for (const auto& [name, metrics] : runs) {
      auto it = metrics.columns.find(key);
      if (it == metrics.columns.end() || it->second.x.empty()) continue;
      f.series.push_back({name, it->second.x, it->second.y, {}, false});
      last[name] = it->second.y.back();
    }
    if (f.series.empty()) continue;
    summary[key] = {{"last", last}, {"points", f.series.front().x.size()}};
    result.figures.push_back(std::move(f));
  }
  result.summary_json = summary.dump();
  return result;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Locality

// Locality: the mixing weight by lag in timesteps, per layer, for one or two checkpoints, each on
// windows of its own dataset (or the one given).
AnalysisResult locality(const AnalysisInputs& in, const Progress& progress) {
  const auto& o = in.options;
  const std::string compare = existing(o, "compare");
  std::vector<std::string> checkpoints{in.checkpoint};
  if (!compare.empty()) checkpoints.push_back(compare);
  const int windows = static_cast<int>(o.integer("windows"));
  AnalysisResult result;
  AnalysisTable table{"locality", {"model", "layer", "mixer", "lag", "weight"}, {}};
  ordered_json models = ordered_json::array();
  std::vector<AnalysisFigure> figures;
  for (std::size_t c = 0; c < checkpoints.size(); ++c) {
    const double from = static_cast<double>(c) / checkpoints.size(),
                 to = static_cast<double>(c + 1) / checkpoints.size();
    const auto inspected =
        inspect_on_dataset(c == 0 ? *opened(in) : *open_checkpoint(checkpoints[c]), windows,
                           in.dataset, progress.part(from, to));
    const auto profiles = analysis::layer_lag_profiles(inspected.inspections);
    const std::string who = checkpoint_label(checkpoints[c]);
    ordered_json layers = ordered_json::array();
    for (std::size_t l = 0; l < profiles.size(); ++l) {
      const auto& p = profiles[l];
      const std::string mixer = inspected.inspections.front().layers[l].mixer;
      for (std::size_t lag = 0; lag < p.weight.size(); ++lag)
        table.rows.push_back(
            {who, static_cast<double>(l + 1), mixer, static_cast<double>(lag), p.weight[lag]});
      layers.push_back({{"layer", l + 1},
                        {"mixer", mixer},
                        {"mean_lag", p.mean_lag()},
                        {"mass_within_1_step", p.mass_within(1)},
                        {"weight_by_lag", p.weight}});
      // One figure per layer, with a line per model.
      if (figures.size() <= l) {
        AnalysisFigure f;
        f.name = "locality_layer" + std::to_string(l + 1);
        f.title = "layer " + std::to_string(l + 1) + ": mixing weight by lag";
        f.x_label = "lag (steps between query and key)";
        f.y_label = "share of the weight";
        figures.push_back(std::move(f));
      }
      analysis::AnalysisSeries line{who, {}, {}, {}, false};
      for (std::size_t lag = 0; lag < p.weight.size(); ++lag) {
        line.x.push_back(static_cast<double>(lag));
        line.y.push_back(p.weight[lag]);
      }
      figures[l].series.push_back(std::move(line));
    }
    models.push_back({{"checkpoint", checkpoints[c]},
                      {"label", who},
                      {"variant", inspected.info.variant.variant},
                      {"windows", inspected.windows.size()},
                      {"layers", layers}});
    note_dataset_warnings(models.back(), inspected.dataset, inspected.dataset_warnings);
  }
  // A single model's figures name it in the title; two models' lines name them in the legend.
  if (checkpoints.size() == 1)
    for (auto& f : figures) f.title = checkpoint_label(in.checkpoint) + "\n" + f.title;
  result.figures = std::move(figures);
  result.tables = {table};
  ordered_json summary = models.front();
  if (models.size() > 1) summary["compare"] = models[1];
  result.summary_json = summary.dump();
  return result;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The registrations

// Registered when the library is loaded, before any plugin: the studio's analyses come first.
[[maybe_unused]] const bool registered = [] {
  auto& r = analysis::analysis_registry();
  const std::string windows_default = std::to_string(analysis::kInspectionWindows);
  r.add(studio(
      "attention", "Attention maps",
      "Attention maps: per layer, mean over layers, rollout; --compare for a difference",
      with_common(
          {{"compare", "A second checkpoint: the difference of the maps on identical windows",
            Type::Text, ""},
           {"source",
            "dataset: windows spread over the dataset; rollout: the window of one step of a "
            "rollout",
            Type::Choice,
            "dataset",
            {"dataset", "rollout"}},
           {"windows", "Dataset windows averaged", Type::Integer, windows_default, {}, 1, 10000},
           {"step", "Rollout step (default 2K)", Type::Integer, "", {}, 0, 100000},
           {"layer", "Only this layer (from 1; default all)", Type::Integer, "", {}, 1, 1000},
           {"head",
            "This head (from 1) instead of the mean over heads",
            Type::Integer,
            "",
            {},
            1,
            1000}}),
      attention));
  r.add(studio(
      "entropy", "Entropy and reward",
      "Attention entropy over a rollout next to the reward; per head, intra- and inter-step",
      with_common(
          {{"episodes", "Rollout episodes", Type::Integer, "5", {}, 1, 1000},
           {"target", "Target return (default: the task's first)", Type::Number, "", {}, 0, 1e12},
           {"windows",
            "Dataset windows for the per-head entropies",
            Type::Integer,
            windows_default,
            {},
            1,
            10000},
           {"skip",
            "Steps left out of the correlation (default K - 1: only full windows)",
            Type::Integer,
            "",
            {},
            0,
            100000}}),
      entropy));
  r.add(studio(
      "tsne", "Token t-SNE", "t-SNE of token embeddings before and after merging",
      with_common({{"source",
                    "windows: windows spread over the dataset; episodes: every step of its longest "
                    "episodes once; rollouts: every "
                    "step of episodes the model plays (--episodes alone means episodes)",
                    Type::Choice,
                    "windows",
                    {"windows", "episodes", "rollouts"}},
                   {"windows", "Dataset windows (default 40)", Type::Integer, "", {}, 1, 100000},
                   {"episodes",
                    "Episodes of --source episodes or rollouts (default 10)",
                    Type::Integer,
                    "",
                    {},
                    1,
                    100000},
                   {"max-tokens",
                    "At most this many tokens, in whole steps (default: every one)",
                    Type::Integer,
                    "",
                    {},
                    1,
                    10000000},
                   {"target",
                    "Target return of the rollouts (default: the task's first)",
                    Type::Number,
                    "",
                    {},
                    0,
                    1e12},
                   {"perplexity", "Perplexity", Type::Number, "30", {}, 1, 1000},
                   {"iterations", "Iterations", Type::Integer, "1000", {}, 250, 100000},
                   {"method",
                    "Repulsive forces: auto (Barnes-Hut below 5,000 tokens, FFT interpolation from "
                    "there), exact, barnes-hut, fft",
                    Type::Choice,
                    "auto",
                    {"auto", "exact", "barnes-hut", "fft"}},
                   {"neighbours",
                    "Neighbour search: auto (exact below 8,000 tokens), exact, approximate",
                    Type::Choice,
                    "auto",
                    {"auto", "exact", "approximate"}},
                   {"snapshot-every",
                    "Keep the layout every N iterations (tsne_snapshots.csv); 0: never",
                    Type::Integer,
                    "50",
                    {},
                    0,
                    100000}}),
      token_tsne));
  r.add(studio(
      "ablation", "Modality zeroing",
      "Normalised score with RTG, past states or actions zeroed at inference",
      with_common(
          {{"episodes", "Episodes per seed", Type::Integer, "10", {}, 1, 1000},
           {"seeds", "Seeds", Type::Integer, "3", {}, 1, 100},
           {"target", "Target return (default: the task's first)", Type::Number, "", {}, 0, 1e12}}),
      ablation));
  r.add(studio(
      "training", "Training curves",
      "Loss, attention entropy and score over the course of training (metrics.jsonl)",
      {{"run",
        "A training run's folder (dstudio train --out; --eval-every records entropy and score)",
        Type::Text,
        "",
        {},
        0,
        0,
        true},
       {"compare", "A second run's folder", Type::Text, ""}},
      training_curves, /*needs_checkpoint=*/false));
  r.add(studio(
      "locality", "Locality",
      "Mixing weight by lag in timesteps, per layer; mean lag and the mass within one step",
      with_common(
          {{"compare", "A second checkpoint: its curves beside these", Type::Text, ""},
           {"windows", "Dataset windows averaged", Type::Integer, windows_default, {}, 1, 10000}}),
      locality));
  r.add(studio(
      "rtg-sweep", "Target-return sweep",
      "Normalised score as the target return leaves the dataset",
      with_common(
          {{"compare", "A second checkpoint: a second curve", Type::Text, ""},
           {"targets", "Target returns", Type::NumberList, "", {}, -1e9, 1e9},
           {"multiples", "Multiples of --base", Type::NumberList, "0.5,1,2,5,10,20", {}, 0, 1e6},
           {"base", "Base target (default: the task's first)", Type::Number, "", {}, 0, 1e12},
           {"episodes", "Episodes per target", Type::Integer, "10", {}, 1, 1000}}),
      rtg_sweep));
  return true;
}();

}  // namespace
}  // namespace dstudio::models
