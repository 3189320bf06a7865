// The causal analyses as registered analyses (analysis_registry.h), built on the interventions of
// intervene.h: the context knockout (how much of the past each model uses), every head, mixer and
// MLP ablated in turn, and the action lens. Each reads its windows from the checkpoint's dataset
// as the attention views do (sample_windows), and plays episodes with the intervened policy where
// it measures returns. docs/analyses.md defines each number.

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis_parts.h"
#include "dstudio/analysis/analysis_registry.h"
#include "dstudio/analysis/entropy.h"
#include "dstudio/common/error.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/models/checkpoint_model.h"
#include "dstudio/models/evaluation.h"
#include "dstudio/models/intervene.h"
#include "dstudio/models/windows.h"
#include "policy_window.h"

namespace dstudio::models {
namespace {

using namespace analysis_parts;

// Windows of a checkpoint's dataset (or the one given) as its model's inputs.
struct DatasetWindows {
  fs::path dataset;
  std::vector<std::string> warnings;
  ModelInputs inputs;
  int64_t count = 0;
};

DatasetWindows dataset_windows(const LoadedCheckpoint& checkpoint, const std::string& dataset,
                               int count, const Progress& progress) {
  DatasetWindows out;
  out.dataset = dataset.empty() ? checkpoint_dataset(checkpoint.info, progress) : fs::path(dataset);
  progress.update(0.0, "loading the dataset");
  const auto ds = data::load_dataset(out.dataset, {.isolate = true}, {{}, progress.cancel});
  out.warnings = ds.warnings;
  const auto windows = sample_windows(ds, count, checkpoint.info.variant.context_length);
  out.inputs = window_inputs(windows, checkpoint.model->config(), checkpoint.info);
  out.count = static_cast<int64_t>(windows.size());
  return out;
}

// The action each window's last step gets (B, A), with `plan` when given.
torch::Tensor last_actions(DecisionModelImpl& model, const ModelInputs& in,
                           const InterventionPlan* plan = nullptr) {
  torch::InferenceMode inference;
  const auto K = in.states.size(1);
  return (plan ? plan->forward(model, in) : model.forward(in)).select(1, K - 1);
}

// The mean over windows of the Euclidean distance between two sets of actions (B, A).
double mean_distance(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).norm(2, {1}).mean().item<double>();
}

// Episodes played by the intervened policy at `target`: their normalised scores.
std::vector<double> closed_loop_scores(DecisionModelImpl& model, const CheckpointInfo& info,
                                       const InterventionPlan& plan, const AnalysisInputs& in,
                                       double target, int episodes, const Progress& progress) {
  RolloutConfig rc;
  rc.targets = {target};
  rc.episodes = episodes;
  rc.seed = static_cast<std::uint64_t>(in.options.integer("seed"));
  rc.threads = static_cast<int>(in.options.integer("threads"));
  rc.traces = false;
  const auto r = rollout(model, info, rc, progress, &plan);
  std::vector<double> scores;
  for (const auto& e : r.episodes) scores.push_back(e.score);
  return scores;
}

// ---------------------------------------------------------------------------------------------
// Knockout: context:C for C = 1..K.

AnalysisResult knockout(const AnalysisInputs& in, const Progress& progress) {
  torch::NoGradGuard no_grad;
  const auto& o = in.options;
  const std::string compare = existing(o, "compare");
  std::vector<std::string> checkpoints{in.checkpoint};
  if (!compare.empty()) checkpoints.push_back(compare);
  const int count = static_cast<int>(o.integer("windows")),
            episodes = static_cast<int>(o.integer("episodes"));
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
    for (int C = 1; C <= K; ++C) {
      progress.check();
      const InterventionPlan plan({parse_intervention("context:" + std::to_string(C))},
                                  info.variant, {});
      const double error = mean_distance(last_actions(model, windows.inputs, &plan), full);
      analysis::MeanInterval score{std::nan(""), std::nan(""), std::nan(""), 0};
      if (episodes > 0)
        score = analysis::mean_interval_95(
            closed_loop_scores(model, info, plan, in, target, episodes,
                               part(0.1 + 0.9 * (C - 1) / K, 0.1 + 0.9 * C / K)));
      table.rows.push_back({who, static_cast<double>(C), error, score.mean, score.low, score.high});
      errors.x.push_back(C);
      errors.y.push_back(error);
      scores.x.push_back(C);
      scores.y.push_back(score.mean);
      scores.spread.push_back((score.high - score.low) / 2);
      means.push_back(score.mean);
      row["contexts"].push_back(C);
      row["action_error"].push_back(error);
      row["score"].push_back(finite_or_null(score.mean));
      row["score_low"].push_back(finite_or_null(score.low));
      row["score_high"].push_back(finite_or_null(score.high));
    }
    if (episodes > 0) {
      // The smallest context whose return keeps 95% of the full context's.
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
  result.summary_json = summary.dump();
  return result;
}

// ---------------------------------------------------------------------------------------------
// Heads: every head (a mixer without heads whole) and every MLP ablated in turn.

AnalysisResult heads(const AnalysisInputs& in, const Progress& progress) {
  torch::NoGradGuard no_grad;
  const auto& o = in.options;
  const int count = static_cast<int>(o.integer("windows")),
            episodes = static_cast<int>(o.integer("episodes"));
  const auto checkpoint = opened(in);
  const auto& info = checkpoint->info;
  const auto& c = info.variant;
  if (c.tokenizer == Tokenizer::State)
    throw UsageError(in.checkpoint + ": the model (" + c.variant + ") has no blocks to ablate");
  DecisionModel handle = checkpoint->model;  // the same module, callable
  auto& model = *handle;
  const auto windows = dataset_windows(*checkpoint, in.dataset, count, progress.part(0.0, 0.1));
  const auto full = last_actions(model, windows.inputs);
  InterventionSources sources;
  {
    torch::InferenceMode inference;
    Activations recorded;
    record_activations(model, windows.inputs, recorded);
    sources.mean = mean_over_windows(recorded);
  }
  // The components in order: each layer's heads (or its mixer whole), then its MLP.
  struct Component {
    std::string label, spec;
  };
  std::vector<Component> components;
  for (int l = 1; l <= c.layers; ++l) {
    const std::string L = std::to_string(l);
    const int heads = layer_heads(c, l);
    for (int h = 1; h <= heads; ++h)
      components.push_back(
          {"L" + L + " H" + std::to_string(h), "head:" + L + "." + std::to_string(h)});
    if (heads == 0 && layer_mixer(c, l) != "none")
      components.push_back({"L" + L + " mixer", "mixer:" + L});
    components.push_back({"L" + L + " MLP", "mlp:" + L});
  }
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
    AnalysisSeries changes{how, {}, {}, {}, false}, scores{how, {}, {}, {}, false};
    for (std::size_t k = 0; k < components.size(); ++k, ++run) {
      progress.check();
      const auto& component = components[k];
      const InterventionPlan plan({parse_intervention(component.spec + "=" + how)}, c, sources);
      const double moved = mean_distance(last_actions(model, windows.inputs, &plan), full);
      analysis::MeanInterval s{std::nan(""), std::nan(""), std::nan(""), 0};
      if (episodes > 0)
        s = analysis::mean_interval_95(closed_loop_scores(
            model, info, plan, in, target, episodes,
            progress.part(0.1 + 0.9 * run / runs, 0.1 + 0.9 * (run + 1) / runs)));
      table.rows.push_back({component.label, how, moved, s.mean, s.low, s.high});
      rows.push_back({{"component", component.label},
                      {"spec", component.spec + "=" + how},
                      {"action_change", moved},
                      {"score", finite_or_null(s.mean)},
                      {"score_low", finite_or_null(s.low)},
                      {"score_high", finite_or_null(s.high)}});
      change.categories.push_back(component.label);
      changes.x.push_back(static_cast<double>(k));
      changes.y.push_back(moved);
      scores.x.push_back(static_cast<double>(k));
      scores.y.push_back(s.mean);
      scores.spread.push_back((s.high - s.low) / 2);
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
  note_dataset_warnings(summary, windows.dataset, windows.warnings);
  result.tables = {table};
  result.summary_json = summary.dump();
  return result;
}

// ---------------------------------------------------------------------------------------------
// Action lens: each block's stream read out as an action, against the final action.

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
      series.name = "joint " + std::to_string(a + 1);
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
            "5",
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
            "3",
            {},
            0,
            1000},
           {"target", "Target return (default: the task's first)", Type::Number, "", {}, 0, 1e12}}),
      heads));
  r.add(studio("action-lens", "Action lens",
               "The final norm and action head applied to the stream after each block: how far "
               "each layer's reading is from the final action, per joint",
               with_common({{"windows", "Dataset windows", Type::Integer, "64", {}, 1, 10000}}),
               lens));
  return true;
}();

}  // namespace
}  // namespace dstudio::models
