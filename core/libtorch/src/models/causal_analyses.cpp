// The causal analyses as registered analyses (analysis_registry.h), built on the interventions of
// intervene.h: the context knockout (how much of the past each model uses), every head, mixer and
// MLP ablated in turn, the action lens, and activation patching. Each reads its windows from the
// checkpoint's dataset as the attention views do (sample_windows), and plays episodes with the
// intervened policy where it measures returns. docs/analyses.md defines each number.

// Index of this file:
//   [SECTION] Knockout
//   [SECTION] Heads
//   [SECTION] Action lens
//   [SECTION] Patching
//   [SECTION] The registrations

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis_parts.h"
#include "causal_parts.h"
#include "dstudio/analysis/analysis_registry.h"
#include "dstudio/analysis/causal_measures.h"
#include "dstudio/analysis/entropy.h"
#include "dstudio/common/error.h"
#include "dstudio/common/text.h"
#include "dstudio/models/checkpoint_model.h"
#include "dstudio/models/evaluation.h"
#include "dstudio/models/intervene.h"

namespace dstudio::models {
namespace {

using namespace analysis_parts;
using namespace causal_parts;

// ---------------------------------------------------------------------------------------------
// [SECTION] Knockout
// context:C for C = 1..K.

AnalysisResult knockout(const AnalysisInputs& in, const Progress& progress) {
  torch::NoGradGuard no_grad;
  const auto& o = in.options;
  const std::string compare = existing(o, "compare");
  std::vector<std::string> checkpoints{in.checkpoint};
  if (!compare.empty()) checkpoints.push_back(compare);
  const int count = static_cast<int>(o.integer("windows")),
            episodes = static_cast<int>(o.integer("episodes"));
  const auto seed = static_cast<std::uint64_t>(o.integer("seed"));
  AnalysisTable table{
      "knockout", {"model", "context", "action_error", "score", "score_low", "score_high"}, {}};
  AnalysisFigure error_figure, score_figure;
  error_figure.name = "knockout_action_error";
  error_figure.title = "Open loop: the action without the far past";
  error_figure.x_label = "context (steps each mixer sees)";
  error_figure.y_label = "action error against the full context";
  score_figure.name = "knockout_score";
  score_figure.title = "Closed loop: the return without the far past";
  score_figure.x_label = error_figure.x_label;
  score_figure.y_label = "normalised score (95% interval)";
  score_figure.note = few_episodes_note(episodes);
  ordered_json models = ordered_json::array();
  for (std::size_t m = 0; m < checkpoints.size(); ++m) {
    const auto part = [&](double a, double b) {
      const double n = static_cast<double>(checkpoints.size());
      return progress.part((m + a) / n, (m + b) / n);
    };
    const auto checkpoint = m == 0 ? opened(in) : open_checkpoint(checkpoints[m]);
    const auto& info = checkpoint->info;
    const int K = info.variant.context_length;
    if (info.variant.tokenizer == Tokenizer::State)
      throw UsageError(checkpoints[m] + ": the model (" + info.variant.variant +
                       ") sees one step only; there is no context to knock out");
    DecisionModel handle = checkpoint->model;  // the same module, callable
    auto& model = *handle;
    const auto windows = dataset_windows(*checkpoint, in.dataset, count, part(0.0, 0.1));
    const auto full = last_actions(model, windows.inputs);
    const double target = target_of(in, info);
    const std::string who = checkpoint_label(checkpoints[m]);
    AnalysisSeries errors{who, {}, {}, {}, false}, scores{who, {}, {}, {}, false};
    ordered_json row = {{"checkpoint", checkpoints[m]},
                        {"label", who},
                        {"variant", info.variant.variant},
                        {"windows", windows.count}};
    std::vector<double> means;
    const auto knocked_out = [&](int C) {
      return InterventionPlan({parse_intervention("context:" + std::to_string(C))}, info.variant,
                              {});
    };
    // Every open-loop action before any episode is played: the rollouts set the thread counts
    // their own way, and a forward pass split otherwise sums in another order (C = K would then
    // differ from the whole window in the 7th digit).
    std::vector<double> action_errors;
    for (int C = 1; C <= K; ++C) {
      progress.check();
      const InterventionPlan plan = knocked_out(C);
      action_errors.push_back(mean_distance(last_actions(model, windows.inputs, &plan), full));
    }
    for (int C = 1; C <= K; ++C) {
      progress.check();
      const InterventionPlan plan = knocked_out(C);
      const double error = action_errors[static_cast<std::size_t>(C - 1)];
      analysis::Interval score{std::nan(""), std::nan(""), std::nan("")};
      if (episodes > 0) {
        // The rollout's steps start again at each context: the stage says which one it is at.
        Progress at_context = part(0.1 + 0.9 * (C - 1) / K, 0.1 + 0.9 * C / K);
        if (at_context.report)
          at_context.report = [report = at_context.report, C, K](double f, std::string_view stage) {
            report(f, "context " + std::to_string(C) + " of " + std::to_string(K) + ", " +
                          std::string(stage));
          };
        score = score_interval(
            closed_loop_scores(model, info, plan, in, target, episodes, at_context), seed);
      }
      table.rows.push_back(
          {who, static_cast<double>(C), error, score.estimate, score.low, score.high});
      errors.x.push_back(C);
      errors.y.push_back(error);
      scores.x.push_back(C);
      scores.y.push_back(score.estimate);
      scores.low.push_back(score.low);
      scores.high.push_back(score.high);
      means.push_back(score.estimate);
      row["contexts"].push_back(C);
      row["action_error"].push_back(error);
      row["score"].push_back(finite_or_null(score.estimate));
      row["score_low"].push_back(finite_or_null(score.low));
      row["score_high"].push_back(finite_or_null(score.high));
    }
    // The smallest context whose return keeps 95% of the full context's; a model whose whole
    // window scores nothing (a DT that never reaches a maze's goal) has no score to keep.
    if (episodes > 0 && means.back() > 0.0) {
      const double whole = means.back();
      for (int C = 1; C <= K; ++C)
        if (means[static_cast<std::size_t>(C - 1)] >= 0.95 * whole) {
          row["smallest_context_keeping_95_percent"] = C;
          break;
        }
    }
    note_dataset_warnings(row, windows.dataset, windows.warnings);
    models.push_back(row);
    error_figure.series.push_back(std::move(errors));
    score_figure.series.push_back(std::move(scores));
  }
  AnalysisResult result;
  result.tables = {table};
  result.figures.push_back(std::move(error_figure));
  if (episodes > 0) result.figures.push_back(std::move(score_figure));
  ordered_json summary = {{"episodes", episodes}, {"models", models}};
  note_few_episodes(summary, episodes);
  result.summary_json = summary.dump();
  return result;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Heads
// Every head (a mixer without heads whole) and every MLP ablated in turn.

AnalysisResult heads(const AnalysisInputs& in, const Progress& progress) {
  torch::NoGradGuard no_grad;
  const auto& o = in.options;
  const int count = static_cast<int>(o.integer("windows")),
            episodes = static_cast<int>(o.integer("episodes"));
  auto m = model_with_blocks(in, "blocks to ablate");
  const auto& info = m.info();
  const auto& c = m.config();
  auto& model = *m.handle;
  const auto windows = dataset_windows(*m.checkpoint, in.dataset, count, progress.part(0.0, 0.1));
  const auto full = last_actions(model, windows.inputs);
  InterventionSources sources;
  {
    torch::InferenceMode inference;
    Activations recorded;
    record_activations(model, windows.inputs, recorded);
    sources.mean = mean_over_windows(recorded);
  }
  // The components in order: each layer's heads (or its mixer whole), then its MLP.
  const auto components = block_components(c);
  AnalysisTable table{
      "heads",
      {"component", "replacement", "action_change", "score", "score_low", "score_high"},
      {}};
  AnalysisResult result;
  ordered_json rows = ordered_json::array();
  const double target = target_of(in, info);
  const std::size_t runs = components.size() * 2;
  std::size_t run = 0;
  for (const std::string how : {"zero", "mean"}) {
    AnalysisFigure change;
    change.name = "heads_action_change_" + how;
    change.kind = AnalysisFigure::Kind::Bars;
    change.title = checkpoint_label(in.checkpoint) + ": each component replaced by its " +
                   (how == std::string("zero") ? "zero" : "mean over windows");
    change.y_label = "action change (mean distance)";
    AnalysisFigure score = change;
    score.name = "heads_score_" + how;
    score.y_label = "normalised score (95% interval)";
    score.note = few_episodes_note(episodes);
    AnalysisSeries changes{how, {}, {}, {}, false}, scores{how, {}, {}, {}, false};
    for (std::size_t k = 0; k < components.size(); ++k, ++run) {
      progress.check();
      const auto& component = components[k];
      const InterventionPlan plan({parse_intervention(component.spec + "=" + how)}, c, sources);
      const double moved = mean_distance(last_actions(model, windows.inputs, &plan), full);
      analysis::Interval s{std::nan(""), std::nan(""), std::nan("")};
      if (episodes > 0)
        s = score_interval(
            closed_loop_scores(model, info, plan, in, target, episodes,
                               progress.part(0.1 + 0.9 * run / runs, 0.1 + 0.9 * (run + 1) / runs)),
            static_cast<std::uint64_t>(o.integer("seed")));
      table.rows.push_back({component.label, how, moved, s.estimate, s.low, s.high});
      rows.push_back({{"component", component.label},
                      {"spec", component.spec + "=" + how},
                      {"action_change", moved},
                      {"score", finite_or_null(s.estimate)},
                      {"score_low", finite_or_null(s.low)},
                      {"score_high", finite_or_null(s.high)}});
      change.categories.push_back(component.label);
      changes.x.push_back(static_cast<double>(k));
      changes.y.push_back(moved);
      scores.x.push_back(static_cast<double>(k));
      scores.y.push_back(s.estimate);
      scores.low.push_back(s.low);
      scores.high.push_back(s.high);
    }
    score.categories = change.categories;
    change.series.push_back(std::move(changes));
    score.series.push_back(std::move(scores));
    result.figures.push_back(std::move(change));
    if (episodes > 0) result.figures.push_back(std::move(score));
  }
  ordered_json summary = {{"variant", c.variant},
                          {"windows", windows.count},
                          {"episodes", episodes},
                          {"target", target},
                          {"components", rows}};
  note_few_episodes(summary, episodes);
  return causal_result({table}, std::move(result.figures), summary, windows);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Action lens
// Each block's stream read out as an action, against the final action.

AnalysisResult lens(const AnalysisInputs& in, const Progress& progress) {
  torch::NoGradGuard no_grad;
  const auto& o = in.options;
  const auto checkpoint = opened(in);
  const auto& c = checkpoint->info.variant;
  DecisionModel handle = checkpoint->model;  // the same module, callable
  auto& model = *handle;
  const auto windows =
      dataset_windows(*checkpoint, in.dataset, static_cast<int>(o.integer("windows")), progress);
  torch::Tensor read;
  {
    torch::InferenceMode inference;
    // (B, layers, A) at each window's last step.
    read = action_lens(model, windows.inputs).select(1, c.context_length - 1);
  }
  const auto final_action = read.select(1, c.layers - 1);
  AnalysisTable table{"action_lens", {"layer", "joint", "error"}, {}};
  AnalysisFigure f;
  f.name = "action_lens";
  f.title = checkpoint_label(in.checkpoint) + ": each block's stream read out as the action";
  f.x_label = "layer";
  f.y_label = "mean |lens action - final action|";
  std::vector<AnalysisSeries> joints(static_cast<std::size_t>(c.act_dim));
  const auto names = joint_names(checkpoint->info, c.act_dim);
  AnalysisSeries all{"every joint (distance)", {}, {}, {}, false};
  ordered_json layers = ordered_json::array();
  for (int l = 1; l <= c.layers; ++l) {
    const auto diff = read.select(1, l - 1) - final_action;  // (B, A)
    const auto per_joint = diff.abs().mean(0);
    ordered_json joint_errors = ordered_json::array();
    for (int a = 0; a < c.act_dim; ++a) {
      const double e = per_joint[a].item<double>();
      table.rows.push_back({static_cast<double>(l), static_cast<double>(a + 1), e});
      auto& series = joints[static_cast<std::size_t>(a)];
      series.name = names[static_cast<std::size_t>(a)];
      series.x.push_back(l);
      series.y.push_back(e);
      joint_errors.push_back(e);
    }
    const double distance = diff.norm(2, {1}).mean().item<double>();
    all.x.push_back(l);
    all.y.push_back(distance);
    layers.push_back({{"layer", l}, {"distance", distance}, {"per_joint", joint_errors}});
  }
  f.series.push_back(std::move(all));
  for (auto& s : joints) f.series.push_back(std::move(s));
  ordered_json summary = {{"variant", c.variant}, {"windows", windows.count}, {"layers", layers}};
  note_dataset_warnings(summary, windows.dataset, windows.warnings);
  return one_table_result(std::move(table), std::move(f), summary);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Patching
// The clean run with one site taken from the other, over layer x token and layer x component.

// A Grid figure of `rows` x `columns` cells.
AnalysisFigure grid(std::string name, std::string title, std::vector<std::string> rows,
                    std::vector<std::string> columns, std::vector<double> cells,
                    std::string x_label, std::string y_label, std::string colour_label) {
  AnalysisFigure f;
  f.kind = AnalysisFigure::Kind::Grid;
  f.name = std::move(name);
  f.title = std::move(title);
  f.row_labels = std::move(rows);
  f.labels = std::move(columns);
  f.cells = std::move(cells);
  f.x_label = std::move(x_label);
  f.y_label = std::move(y_label);
  f.colour_label = std::move(colour_label);
  return f;
}

// The fraction recovered by the patched actions (B, A) against the sweep's clean and other.
analysis::Recovered recovered(const PatchingSweep& sweep, const torch::Tensor& patched,
                              double floor) {
  const auto c = sweep.clean.contiguous(), o = sweep.other.contiguous(), p = patched.contiguous();
  const auto B = static_cast<int>(c.size(0)), A = static_cast<int>(c.size(1));
  const auto n = static_cast<std::size_t>(c.numel());
  return analysis::fraction_recovered({c.data_ptr<float>(), n}, {o.data_ptr<float>(), n},
                                      {p.data_ptr<float>(), n}, B, A, floor);
}

// The clean run and the other one whose sites are patched into it, and what the other is ("target
// 3600 from 1800", "from another episode", "from R zeroed").
struct PatchingRuns {
  ModelInputs clean, other;
  std::string what;
};

// Each window's other is the next window drawn from another episode.
ModelInputs from_other_episodes(const DatasetWindows& windows, const ModelInputs& clean) {
  const auto B = static_cast<int64_t>(windows.windows.size());
  std::vector<int64_t> partner(static_cast<std::size_t>(B));
  for (int64_t b = 0; b < B; ++b) {
    int64_t j = (b + 1) % B;
    while (j != b && windows.windows[static_cast<std::size_t>(j)].episode ==
                         windows.windows[static_cast<std::size_t>(b)].episode)
      j = (j + 1) % B;
    if (j == b)
      throw UsageError(windows.dataset.string() +
                       ": every window comes from one episode; patching needs two");
    partner[static_cast<std::size_t>(b)] = j;
  }
  const auto index = torch::tensor(partner, torch::kLong);
  return {clean.states.index_select(0, index), clean.actions.index_select(0, index),
          clean.returns_to_go.index_select(0, index), clean.timesteps.index_select(0, index),
          clean.mask.defined() ? clean.mask.index_select(0, index) : torch::Tensor()};
}

// The runs --contrast asks for: the windows at a high and a low target, each window and one of
// another episode, or the windows and the same with a modality zeroed; the summary says which.
PatchingRuns patching_runs(const analysis::AnalysisOptions& o, const std::string& contrast,
                           const DatasetWindows& windows, const CheckpointInfo& info,
                           ordered_json& summary) {
  PatchingRuns runs{windows.inputs, windows.inputs, {}};
  if (contrast == "targets") {
    const auto [high, low] = contrast_targets(o, windows);
    runs.clean = at_target(windows.inputs, high, info.rtg_scale);
    runs.other = at_target(windows.inputs, low, info.rtg_scale);
    summary["clean_target"] = high;
    summary["other_target"] = low;
    runs.what = "target " + fixed_number(high, 0) + " from " + fixed_number(low, 0);
  } else if (contrast == "episodes") {
    runs.other = from_other_episodes(windows, runs.clean);
    runs.what = "from another episode";
  } else {
    const auto zeroing = modality_zeroing(o.text("zero")[0]);
    runs.other = apply_zeroing(runs.clean, zeroing);
    summary["zeroed"] = o.text("zero");
    runs.what = "from " + o.text("zero") + " zeroed";
  }
  return runs;
}

// Without a window whose action the other run moves, every fraction is 0/0: said before the
// sweep, so that no blank figure is drawn.
void require_something_to_recover(DecisionModelImpl& model, const PatchingRuns& runs, double floor,
                                  const std::string& contrast) {
  const auto actions_clean = last_actions(model, runs.clean),
             actions_other = last_actions(model, runs.other);
  if (recovered({actions_clean, actions_other, {}, {}}, actions_other, floor).windows == 0)
    throw Error(
        "patching has nothing to recover: no window's action changes by --floor (" +
        general_number(floor) + ") or more between the clean run and the other (" + runs.what +
        "; the largest change is " +
        general_number((actions_other - actions_clean).norm(2, {1}).max().item<double>()) + "). " +
        (contrast == "targets" ? "Choose --high and --low further apart, " : std::string()) +
        "choose another --contrast, or a lower --floor");
}

// A row of the patching table: the site, its layer and position, the fraction recovered over
// every joint, the windows it counts, and the fraction per joint.
void add_patching_row(AnalysisTable& table, const std::string& site, int layer,
                      const std::string& position, const analysis::Recovered& r) {
  std::vector<analysis::AnalysisCell> row{site, static_cast<double>(layer), position, r.norm,
                                          static_cast<double>(r.windows)};
  for (const double v : r.per_dim) row.push_back(v);
  table.rows.push_back(std::move(row));
}

// Patching sites ranked by the fraction they recover.
using RankedSites = std::vector<std::pair<double, std::string>>;

// A grid's row and column labels and its cells, row by row.
struct PatchingGrid {
  std::vector<std::string> rows, columns;
  std::vector<double> cells;
};

// The stream patched at each layer and token, on a grid of steps (columns) by layer and token
// type (rows: "L1 R", "L1 s", "L1 a", "L2 R", ...): a window's 3K tokens are too many to name one
// a column at a column's width, and so every token keeps its R/s/a name and step, and each type's
// tokens line up along a row. A model of one token a step has a row a layer.
PatchingGrid patch_stream(const PatchingSweep& sweep, const VariantConfig& c, int64_t per_step,
                          const std::vector<std::string>& layers,
                          const std::vector<std::string>& labels, double floor,
                          AnalysisTable& table, RankedSites& ranked) {
  const int64_t T = sweep.stream.size(1), steps = T / per_step;
  PatchingGrid out;
  for (int l = 1; l <= c.layers; ++l)
    for (int64_t k = 0; k < per_step; ++k)
      out.rows.push_back(per_step == 1 ? layers[static_cast<std::size_t>(l - 1)]
                                       : layers[static_cast<std::size_t>(l - 1)] + " " +
                                             std::string(1, "Rsa"[k]));
  for (int64_t k = 1; k <= steps; ++k) out.columns.push_back(std::to_string(k));
  out.cells.assign(out.rows.size() * out.columns.size(), std::nan(""));
  for (int l = 1; l <= c.layers; ++l)
    for (int64_t t = 0; t < T; ++t) {
      const auto r = recovered(sweep, sweep.stream[l - 1][t], floor);
      const auto row = static_cast<std::size_t>((l - 1) * per_step + t % per_step);
      out.cells[row * out.columns.size() + static_cast<std::size_t>(t / per_step)] = r.norm;
      add_patching_row(table, "resid", l, labels[static_cast<std::size_t>(t)], r);
      if (std::isfinite(r.norm))
        ranked.push_back({r.norm, "resid:" + std::to_string(l) + "." + std::to_string(t + 1) +
                                      " (" + labels[static_cast<std::size_t>(t)] + ")"});
    }
  return out;
}

// Each head, mixer and MLP patched: on a layer x column grid, blank where a layer has no such
// component; per joint, a row a component; and as the summary lists them.
struct ComponentPatches {
  PatchingGrid grid;
  std::vector<std::string> labels;  // the components, the rows of the joints' grid
  std::vector<double> joint_cells;
  ordered_json json = ordered_json::array();
};

ComponentPatches patch_components(const PatchingSweep& sweep,
                                  const std::vector<BlockComponent>& components,
                                  const std::vector<std::string>& layers, double floor,
                                  AnalysisTable& table, RankedSites& ranked) {
  ComponentPatches out;
  auto& columns = out.grid.columns;
  out.grid.rows = layers;
  for (const auto& k : components)
    if (std::find(columns.begin(), columns.end(), k.column) == columns.end())
      columns.push_back(k.column);
  out.grid.cells.assign(layers.size() * columns.size(), std::nan(""));
  for (std::size_t k = 0; k < components.size(); ++k) {
    const auto r = recovered(sweep, sweep.components[static_cast<int64_t>(k)], floor);
    const auto& comp = components[k];
    const auto column = static_cast<std::size_t>(
        std::find(columns.begin(), columns.end(), comp.column) - columns.begin());
    out.grid.cells[static_cast<std::size_t>(comp.layer - 1) * columns.size() + column] = r.norm;
    out.joint_cells.insert(out.joint_cells.end(), r.per_dim.begin(), r.per_dim.end());
    out.labels.push_back(comp.label);
    add_patching_row(table, comp.spec.substr(0, comp.spec.find(':')), comp.layer, comp.label, r);
    ordered_json per_dim = ordered_json::array();
    for (const double v : r.per_dim) per_dim.push_back(finite_or_null(v));
    out.json.push_back({{"component", comp.label},
                        {"spec", comp.spec},
                        {"fraction", finite_or_null(r.norm)},
                        {"per_joint", per_dim}});
    if (std::isfinite(r.norm)) ranked.push_back({r.norm, comp.spec + " (" + comp.label + ")"});
  }
  return out;
}

AnalysisResult patching(const AnalysisInputs& in, const Progress& progress) {
  torch::NoGradGuard no_grad;
  const auto& o = in.options;
  auto m = model_with_blocks(in, "blocks to patch");
  const auto& info = m.info();
  const auto& c = m.config();
  auto& model = *m.handle;
  const auto windows = dataset_windows(
      *m.checkpoint, in.dataset, static_cast<int>(o.integer("windows")), progress.part(0, 0.1));
  const std::string contrast = o.text("contrast");
  const double floor = o.number("floor");
  ordered_json summary = {
      {"variant", c.variant}, {"windows", windows.count}, {"contrast", contrast}};
  const PatchingRuns runs = patching_runs(o, contrast, windows, info, summary);
  require_something_to_recover(model, runs, floor, contrast);
  const auto sweep = patching_sweep(model, runs.clean, runs.other, true, progress.part(0.1, 1.0));
  const auto components = block_components(c);
  const int64_t T = sweep.stream.size(1);
  const int A = c.act_dim;
  const auto labels = token_labels(c, T);
  const std::string who = checkpoint_label(in.checkpoint);
  const std::string colour = "fraction recovered";
  const auto joints = joint_names(info, A);
  std::vector<std::string> columns{"site", "layer", "position", "fraction", "windows"};
  for (auto j : joints) {
    std::replace(j.begin(), j.end(), ' ', '_');
    columns.push_back("fraction_" + j);
  }
  AnalysisTable table{"patching", columns, {}};
  std::vector<std::string> layers;
  for (int l = 1; l <= c.layers; ++l) layers.push_back("L" + std::to_string(l));
  const int64_t per_step = c.tokenizer == Tokenizer::Triplet ? 3 : 1;
  RankedSites ranked;
  const auto stream = patch_stream(sweep, c, per_step, layers, labels, floor, table, ranked);
  const auto parts = patch_components(sweep, components, layers, floor, table, ranked);
  std::sort(ranked.begin(), ranked.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  ordered_json best = ordered_json::array();
  for (std::size_t k = 0; k < std::min<std::size_t>(8, ranked.size()); ++k)
    best.push_back({{"site", ranked[k].second}, {"fraction", ranked[k].first}});
  const auto whole = recovered(sweep, sweep.other, floor);
  summary["windows_used"] = whole.windows;
  summary["windows_under_floor"] = windows.count - whole.windows;
  summary["mean_action_change"] = mean_distance(sweep.other, sweep.clean);
  summary["largest"] = best;
  summary["components"] = parts.json;
  std::vector<AnalysisFigure> figures{
      grid("patching_stream", who + ": stream patched, " + runs.what, stream.rows, stream.columns,
           stream.cells, "step", per_step == 1 ? "after block" : "after block, token", colour),
      grid("patching_components", who + ": component patched, " + runs.what, parts.grid.rows,
           parts.grid.columns, parts.grid.cells, "component", "layer", colour),
      grid("patching_joints", who + ": component patched, per joint", parts.labels, joints,
           parts.joint_cells, "joint", "component", colour)};
  // Fractions run from about 0.01 (one past return token) to 1 (the last block at the action's
  // token): on a square-root scale both ends read, 0.015 apart from 0 and 0.79 apart from 1.
  // One scale, 0 to 1 (or past 1 where a patch overshoots), on every figure of every model.
  for (auto& f : figures) {
    f.colour_power = 0.5;
    f.colour_from = 0.0;
    f.colour_to = 1.0;
  }
  return causal_result({table}, std::move(figures), summary, windows);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The registrations

// Registered after the studio's other analyses (this file links after studio_analyses.cpp).
[[maybe_unused]] const bool registered = [] {
  auto& r = analysis::analysis_registry();
  r.add(studio(
      "knockout", "Context knockout",
      "Every mixer limited to the last C steps, C = 1..K: the action error on dataset windows and "
      "the return of episodes played so; --compare for a second model",
      with_common(
          {{"compare", "A second checkpoint: its curves beside these", Type::Text, ""},
           {"windows", "Dataset windows for the action error", Type::Integer, "64", {}, 1, 10000},
           {"episodes",
            "Episodes at each context (0: no closed loop)",
            Type::Integer,
            "10",
            {},
            0,
            1000},
           {"target", "Target return (default: the task's first)", Type::Number, "", {}, 0, 1e12}}),
      knockout));
  r.add(studio(
      "heads", "Heads and MLPs ablated",
      "Every head (a mixer without heads whole) and every MLP replaced by zero and by its mean: "
      "the action change on dataset windows and the return of episodes played so",
      with_common(
          {{"windows",
            "Dataset windows (the mean is taken over them)",
            Type::Integer,
            "64",
            {},
            2,
            10000},
           {"episodes",
            "Episodes for each ablation (0: no closed loop)",
            Type::Integer,
            "10",
            {},
            0,
            1000},
           {"target", "Target return (default: the task's first)", Type::Number, "", {}, 0, 1e12}}),
      heads));
  r.add(studio(
      "patching", "Activation patching",
      "The clean run with one site taken from another (a lower target, another episode, or a "
      "modality zeroed): the fraction of the action change each stream position and each head, "
      "mixer and MLP recovers",
      with_common(
          {{"windows", "Dataset windows", Type::Integer, "64", {}, 1, 10000},
           {"contrast",
            "What the other run is: the windows at a lower target, other episodes' windows, or "
            "the windows with a modality zeroed",
            Type::Choice,
            "targets",
            {"targets", "episodes", "modality"}},
           {"high",
            "Clean target (default: the data's best return)",
            Type::Number,
            "",
            {},
            -1e12,
            1e12},
           {"low",
            "Other target (default: the data's median return)",
            Type::Number,
            "",
            {},
            -1e12,
            1e12},
           {"zero",
            "The modality zeroed (--contrast modality)",
            Type::Choice,
            "R",
            {"R", "s", "a"}},
           {"floor",
            "Windows whose actions differ by less are left out of the fraction",
            Type::Number,
            "0.001",
            {},
            0,
            1e6}}),
      patching));
  r.add(studio("action-lens", "Action lens",
               "The final norm and action head applied to the stream after each block: how far "
               "each layer's reading is from the final action, per joint",
               with_common({{"windows", "Dataset windows", Type::Integer, "64", {}, 1, 10000}}),
               lens));
  return true;
}();

}  // namespace
}  // namespace dstudio::models
