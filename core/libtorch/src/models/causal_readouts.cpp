// The causal analyses that read what the stream holds: attribution of the action to each head,
// MLP and the embeddings; ridge probes of the stream after each block; and steering along the
// return-to-go direction. docs/analyses.md defines each number.

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "analysis_parts.h"
#include "causal_parts.h"
#include "dstudio/analysis/analysis_registry.h"
#include "dstudio/analysis/causal_measures.h"
#include "dstudio/analysis/entropy.h"
#include "dstudio/common/error.h"
#include "dstudio/common/figure_recipe.h"
#include "dstudio/common/text.h"
#include "dstudio/models/evaluation.h"
#include "dstudio/models/intervene.h"
#include "dstudio/models/steering_direction.h"

namespace dstudio::models {
namespace {

using namespace analysis_parts;
using namespace causal_parts;

// ---------------------------------------------------------------------------------------------
// Attribution: each part's share of the pre-tanh action.

AnalysisResult attribution(const AnalysisInputs& in, const Progress& progress) {
  torch::NoGradGuard no_grad;
  auto m = model_with_blocks(in, "stream to attribute");
  const auto& c = m.config();
  auto& model = *m.handle;
  const auto windows = dataset_windows(*m.checkpoint, in.dataset,
                                       static_cast<int>(in.options.integer("windows")), progress);
  progress.update(0.5, "attributing");
  const auto a = attribute_actions(model, windows.inputs);
  const double sum_error = (a.contributions.sum(0) - a.pre_tanh).abs().max().item<double>();
  const auto P = static_cast<int64_t>(a.parts.size());
  const int A = c.act_dim;
  const auto mean = a.contributions.mean(1), magnitude = a.contributions.abs().mean(1);  // (P, A)
  AnalysisTable table{"attribution", {"part", "joint", "mean", "mean_abs"}, {}};
  std::vector<double> signed_cells, magnitude_cells;
  ordered_json parts = ordered_json::array();
  for (int64_t p = 0; p < P; ++p) {
    ordered_json means = ordered_json::array(), abs = ordered_json::array();
    for (int j = 0; j < A; ++j) {
      const double v = mean[p][j].item<double>(), w = magnitude[p][j].item<double>();
      table.rows.push_back(
          {a.parts[static_cast<std::size_t>(p)], static_cast<double>(j + 1), v, w});
      signed_cells.push_back(v);
      magnitude_cells.push_back(w);
      means.push_back(v);
      abs.push_back(w);
    }
    parts.push_back(
        {{"part", a.parts[static_cast<std::size_t>(p)]}, {"mean", means}, {"mean_abs", abs}});
  }
  const auto joints = joint_names(m.info(), A);
  const std::string who = checkpoint_label(in.checkpoint);
  AnalysisFigure size;
  size.kind = AnalysisFigure::Kind::Grid;
  size.name = "attribution_magnitude";
  size.title = who + ": each part's share of the action before the tanh";
  size.x_label = "joint";
  size.y_label = "part";
  size.row_labels = a.parts;
  size.labels = joints;
  size.cells = magnitude_cells;
  size.colour_label = "mean |contribution|";
  AnalysisFigure sign = size;
  sign.name = "attribution_mean";
  sign.title = who + ": each part's mean push on each joint";
  sign.cells = signed_cells;
  sign.diverging = true;
  sign.colour_label = "mean contribution";
  ordered_json summary = {{"variant", c.variant},
                          {"windows", windows.count},
                          {"largest_sum_error", sum_error},
                          {"parts", parts}};
  return causal_result({table}, {size, sign}, summary, windows);
}

// ---------------------------------------------------------------------------------------------
// Probes: ridge regressions from the stream to what the window holds.

// The windows' episodes in an order drawn with `seed`: the first half fit the probes, the other
// half test them.
std::vector<int> shuffled_episodes(const DatasetWindows& windows, std::uint64_t seed) {
  std::vector<int> episodes;
  for (const auto& w : windows.windows)
    if (std::find(episodes.begin(), episodes.end(), w.episode) == episodes.end())
      episodes.push_back(w.episode);
  if (episodes.size() < 2)
    throw UsageError(windows.dataset.string() +
                     ": the windows come from one episode; probes are tested on other episodes");
  std::mt19937_64 rng(seed);
  std::shuffle(episodes.begin(), episodes.end(), rng);
  return episodes;
}

// The streams: the embedded tokens (layer 0) and after each block, (B, T, H) each.
std::vector<torch::Tensor> probed_streams(DecisionModelImpl& model, const ModelInputs& inputs) {
  std::vector<torch::Tensor> streams;
  torch::InferenceMode inference;
  Activations acts;
  record_activations(model, inputs, acts);
  streams.push_back(model.embed_tokens(inputs).contiguous());
  for (const auto& r : acts.resid) streams.push_back(r.contiguous());
  return streams;
}

// What is probed, per real step of each window: its return-to-go, its timestep, and each
// velocity the observation holds (none when the velocities are hidden): the dimensions from
// first_velocity on that the task names as velocities, v_... or w_... (hopper's v_rootx ...,
// AntMaze's v_x ... w_z ...).
struct ProbeTarget {
  std::string name;
  std::vector<double> y;
  int dimension = -1;  // of the observation; -1 for the return-to-go and the timestep
};

// The probes' rows, a real step of a window each, split into those that fit and those that test,
// with each target's value at each row.
struct ProbeRows {
  std::vector<ProbeTarget> targets;
  std::vector<std::pair<int64_t, int64_t>> steps;  // (window, step) of each row
  std::vector<int64_t> fit_rows, test_rows;
};

ProbeRows probe_rows(const DatasetWindows& windows, const std::vector<int>& fit_episodes,
                     const env::EnvironmentDefinition& task, int K, int S) {
  ProbeRows out;
  auto& targets = out.targets;
  targets = {{"return-to-go", {}}, {"timestep", {}}};
  for (int v = std::min(task.first_velocity, S); v < S; ++v)
    if (static_cast<std::size_t>(v) < task.observation_names.size() &&
        (task.observation_names[static_cast<std::size_t>(v)].starts_with("v_") ||
         task.observation_names[static_cast<std::size_t>(v)].starts_with("w_")))
      targets.push_back({task.observation_names[static_cast<std::size_t>(v)], {}, v});
  for (std::size_t b = 0; b < windows.windows.size(); ++b) {
    const auto& w = windows.windows[b];
    const bool fit =
        std::find(fit_episodes.begin(), fit_episodes.end(), w.episode) != fit_episodes.end();
    for (int k = 0; k < K; ++k) {
      if (w.mask[static_cast<std::size_t>(k)] < 0.5f) continue;
      (fit ? out.fit_rows : out.test_rows).push_back(static_cast<int64_t>(out.steps.size()));
      out.steps.push_back({static_cast<int64_t>(b), k});
      targets[0].y.push_back(w.returns_to_go[static_cast<std::size_t>(k)]);
      targets[1].y.push_back(static_cast<double>(w.timesteps[static_cast<std::size_t>(k)]));
      for (std::size_t t = 2; t < targets.size(); ++t)
        targets[t].y.push_back(w.states[static_cast<std::size_t>(k) * S +
                                        static_cast<std::size_t>(targets[t].dimension)]);
    }
  }
  return out;
}

// The token types probed ("R", "s", "a", or "t" for one token a step) and their offsets within a
// step's tokens.
using ProbedTypes = std::vector<std::pair<std::string, int>>;

// Figures: return-to-go, timestep, and the mean over the velocities, R^2 against layer.
std::vector<AnalysisFigure> probe_figures(const std::string& who, bool velocities,
                                          const ProbedTypes& types) {
  std::vector<AnalysisFigure> figures;
  for (const std::string name : {"return-to-go", "timestep", "velocities (mean)"}) {
    if (name.starts_with("velocities") && !velocities) continue;
    AnalysisFigure f;
    f.name = "probes_" + name.substr(0, name.find(' '));
    f.title = who + ": " + name + " read from the stream";
    f.x_label = "after block (0: the embedded tokens)";
    f.y_label = "held-out R^2";
    for (const auto& [type, offset] : types)
      f.series.push_back({type + " tokens", {}, {}, {}, false});
    figures.push_back(std::move(f));
  }
  return figures;
}

// The probes of stream l, one a token type and target, fitted and tested: their R^2 in the table
// and on the figures, and by token type for the summary. `X` holds the rows' tokens.
ordered_json probe_stream(const torch::Tensor& streams_l, std::size_t l, const ProbedTypes& types,
                          bool triplet, int H, const ProbeRows& rows, double lambda,
                          std::vector<float>& X, AnalysisTable& table,
                          std::vector<AnalysisFigure>& figures) {
  const auto& targets = rows.targets;
  const bool velocities = targets.size() > 2;
  const float* stream = streams_l.data_ptr<float>();
  const int64_t T = streams_l.size(1);
  ordered_json by_type = ordered_json::object();
  for (std::size_t ty = 0; ty < types.size(); ++ty) {
    const int offset = types[ty].second;
    for (int64_t r = 0; r < static_cast<int64_t>(rows.steps.size()); ++r) {
      const auto [b, k] = rows.steps[static_cast<std::size_t>(r)];
      const int64_t token = triplet ? 3 * k + offset : k;
      std::copy_n(stream + (b * T + token) * H, H, X.data() + r * H);
    }
    ordered_json scores = ordered_json::object();
    double velocity_sum = 0.0;
    int velocity_count = 0;
    for (std::size_t t = 0; t < targets.size(); ++t) {
      const auto probe = analysis::fit_ridge(X, targets[t].y, H, rows.fit_rows, lambda);
      const double r2 = analysis::r_squared(probe, X, targets[t].y, H, rows.test_rows);
      table.rows.push_back({static_cast<double>(l), types[ty].first, targets[t].name, r2});
      scores[targets[t].name] = finite_or_null(r2);
      if (t >= 2 && std::isfinite(r2)) velocity_sum += r2, ++velocity_count;
      if (t < 2) {
        figures[t].series[ty].x.push_back(static_cast<double>(l));
        figures[t].series[ty].y.push_back(r2);
      }
    }
    if (velocities) {
      const double mean_velocity = velocity_count ? velocity_sum / velocity_count : std::nan("");
      scores["velocities (mean)"] = finite_or_null(mean_velocity);
      figures[2].series[ty].x.push_back(static_cast<double>(l));
      figures[2].series[ty].y.push_back(mean_velocity);
    }
    by_type[types[ty].first] = scores;
  }
  return by_type;
}

AnalysisResult probes(const AnalysisInputs& in, const Progress& progress) {
  torch::NoGradGuard no_grad;
  const auto& o = in.options;
  auto m = model_with_blocks(in, "stream to probe");
  const auto& info = m.info();
  const auto& c = m.config();
  auto& model = *m.handle;
  const auto windows = dataset_windows(
      *m.checkpoint, in.dataset, static_cast<int>(o.integer("windows")), progress.part(0, 0.2));
  const double lambda = o.number("ridge");
  // Half the episodes (drawn with the seed) fit the probes, the other half test them.
  const std::vector<int> episodes =
      shuffled_episodes(windows, static_cast<std::uint64_t>(o.integer("seed")));
  const std::vector<int> fit_episodes(episodes.begin(),
                                      episodes.begin() + static_cast<long>(episodes.size() / 2));
  const std::vector<torch::Tensor> streams = probed_streams(model, windows.inputs);
  const auto& task = task_of(info);
  const int K = c.context_length, H = c.hidden, S = c.state_dim;
  const ProbeRows rows = probe_rows(windows, fit_episodes, task, K, S);
  const bool triplet = c.tokenizer == Tokenizer::Triplet;
  const ProbedTypes types =
      triplet ? ProbedTypes{{"R", 0}, {"s", 1}, {"a", 2}} : ProbedTypes{{"t", 0}};
  AnalysisTable table{"probes", {"layer", "token", "target", "r2"}, {}};
  const bool velocities = rows.targets.size() > 2;
  std::vector<AnalysisFigure> figures =
      probe_figures(checkpoint_label(in.checkpoint), velocities, types);
  ordered_json layers = ordered_json::array();
  std::vector<float> X(rows.steps.size() * static_cast<std::size_t>(H));
  for (std::size_t l = 0; l < streams.size(); ++l) {
    progress.update(0.2 + 0.8 * static_cast<double>(l) / static_cast<double>(streams.size()),
                    "fitting probes");
    const ordered_json by_type =
        probe_stream(streams[l], l, types, triplet, H, rows, lambda, X, table, figures);
    layers.push_back({{"layer", l}, {"r2", by_type}});
  }
  ordered_json summary = {{"variant", c.variant},
                          {"windows", windows.count},
                          {"fit_rows", rows.fit_rows.size()},
                          {"test_rows", rows.test_rows.size()},
                          {"fit_episodes", fit_episodes.size()},
                          {"test_episodes", episodes.size() - fit_episodes.size()},
                          {"ridge", lambda},
                          {"layers", layers}};
  return causal_result({table}, std::move(figures), summary, windows);
}

// ---------------------------------------------------------------------------------------------
// Steering: the return-to-go direction added to the stream, against changing the target.

// The blocks to steer after: --layers, by default every one.
std::vector<int> steered_layers(const analysis::AnalysisOptions& o, const VariantConfig& c) {
  std::vector<int> steered;
  for (const double l : o.numbers("layers")) {
    if (l != std::floor(l) || l < 1 || l > c.layers)
      throw UsageError("--layers " + std::to_string(l) + ": the model has " +
                       std::to_string(c.layers) + " layers, 1 to " + std::to_string(c.layers));
    steered.push_back(static_cast<int>(l));
  }
  if (steered.empty())
    for (int l = 1; l <= c.layers; ++l) steered.push_back(l);
  return steered;
}

// The steering directions, one a block by the name steer specs give it ("L2"), with the document
// written for each (direction_L2.json) and the summary's list of them.
struct SteeringDirections {
  InterventionSources sources;
  std::vector<std::pair<std::string, std::string>> documents;
  ordered_json list = ordered_json::array();
};

// The direction after each block: the mean state-token stream at the high target less that at
// the low one, over the windows' real steps.
SteeringDirections steering_directions(DecisionModelImpl& model, const AnalysisInputs& in,
                                       const CheckpointInfo& info, const VariantConfig& c,
                                       const DatasetWindows& windows, double high, double low) {
  SteeringDirections out;
  // Read back by steer specs, which refuse a direction made for another checkpoint.
  const std::string checkpoint_hash = file_content_hash(in.checkpoint);
  torch::InferenceMode inference;
  Activations at_high, at_low;
  record_activations(model, at_target(windows.inputs, high, info.rtg_scale), at_high);
  record_activations(model, at_target(windows.inputs, low, info.rtg_scale), at_low);
  const int K = c.context_length;
  std::vector<int64_t> state_tokens;
  for (int k = 0; k < K; ++k) state_tokens.push_back(model.action_token(k));
  const auto index = torch::tensor(state_tokens, torch::kLong);
  const auto weight = windows.inputs.mask.unsqueeze(-1);  // (B, K, 1)
  for (int l = 1; l <= c.layers; ++l) {
    const auto mean_at = [&](const Activations& a) {
      const auto s = a.resid[static_cast<std::size_t>(l - 1)].index_select(1, index);
      return (s * weight).sum(std::vector<int64_t>{0, 1}) / weight.sum();
    };
    const auto direction = (mean_at(at_high) - mean_at(at_low)).contiguous();
    const std::string name = "L" + std::to_string(l);
    out.sources.directions[name] = direction;
    std::vector<double> v(direction.data_ptr<float>(),
                          direction.data_ptr<float>() + direction.numel());
    const double norm = direction.norm().item<double>();
    const std::string file = "direction_L" + std::to_string(l) + ".json";
    out.documents.push_back(
        {file, steering_direction_text({v, l, high, low, norm, in.checkpoint, checkpoint_hash})});
    out.list.push_back({{"layer", l}, {"file", file}, {"norm", norm}});
  }
  return out;
}

// The closed-loop runs of steering, `total` of them, each its share of the progress: what each
// scored goes into the table, the summary's runs and a figure's series.
struct SteeringRuns {
  DecisionModelImpl& model;
  const CheckpointInfo& info;
  const AnalysisInputs& in;
  const Progress& progress;
  const VariantConfig& c;
  int episodes;
  std::size_t total;
  AnalysisTable& table;
  ordered_json& runs;
  std::size_t done = 0;

  analysis::Interval run(const InterventionPlan& plan, double target) {
    const auto part = progress.part(0.05 + 0.95 * done / total, 0.05 + 0.95 * (done + 1) / total);
    ++done;
    return score_interval(closed_loop_scores(model, info, plan, in, target, episodes, part),
                          static_cast<std::uint64_t>(in.options.integer("seed")));
  }

  // The target changed instead: what the direction is meant to stand for.
  AnalysisSeries retargeted(const std::vector<double>& alphas, double high, double low) {
    AnalysisSeries retarget{"target low + alpha (high - low)", {}, {}, {}, false};
    for (const double alpha : alphas) {
      const double target = low + alpha * (high - low);
      const auto s = run(InterventionPlan({}, c, {}), target);
      table.rows.push_back({"target", std::nan(""), alpha, target, s.estimate, s.low, s.high});
      runs.push_back({{"how", "target"},
                      {"alpha", alpha},
                      {"target", target},
                      {"score", finite_or_null(s.estimate)},
                      {"score_low", finite_or_null(s.low)},
                      {"score_high", finite_or_null(s.high)}});
      retarget.x.push_back(alpha);
      retarget.y.push_back(s.estimate);
      retarget.low.push_back(s.low);
      retarget.high.push_back(s.high);
    }
    return retarget;
  }

  // Steered after block l by alpha times its direction, at the low target.
  AnalysisSeries steered(int l, const std::vector<double>& alphas, double low,
                         const InterventionSources& sources) {
    AnalysisSeries line{"steered after block " + std::to_string(l), {}, {}, {}, false};
    for (const double alpha : alphas) {
      std::ostringstream spec;
      spec << "steer:" << l << "=" << alpha << "*L" << l;
      const InterventionPlan plan({parse_intervention(spec.str())}, c, sources);
      const auto s = run(plan, low);
      table.rows.push_back(
          {"steer", static_cast<double>(l), alpha, low, s.estimate, s.low, s.high});
      runs.push_back({{"how", "steer"},
                      {"layer", l},
                      {"alpha", alpha},
                      {"target", low},
                      {"score", finite_or_null(s.estimate)},
                      {"score_low", finite_or_null(s.low)},
                      {"score_high", finite_or_null(s.high)}});
      line.x.push_back(alpha);
      line.y.push_back(s.estimate);
      line.low.push_back(s.low);
      line.high.push_back(s.high);
    }
    return line;
  }
};

AnalysisResult steering(const AnalysisInputs& in, const Progress& progress) {
  torch::NoGradGuard no_grad;
  const auto& o = in.options;
  auto m = model_with_blocks(in, "stream to steer");
  const auto& info = m.info();
  const auto& c = m.config();
  auto& model = *m.handle;
  const auto windows = dataset_windows(
      *m.checkpoint, in.dataset, static_cast<int>(o.integer("windows")), progress.part(0, 0.05));
  const auto [high, low] = contrast_targets(o, windows);
  std::vector<double> alphas = o.numbers("alphas");
  if (alphas.empty()) alphas = {0.0, 0.5, 1.0, 1.5, 2.0};
  const std::vector<int> steered = steered_layers(o, c);
  const int episodes = static_cast<int>(o.integer("episodes"));
  SteeringDirections directions = steering_directions(model, in, info, c, windows, high, low);
  const std::string who = checkpoint_label(in.checkpoint);
  AnalysisTable table{
      "steering", {"how", "layer", "alpha", "target", "score", "score_low", "score_high"}, {}};
  AnalysisFigure f;
  f.name = "steering";
  f.title = who + ": steered from " + fixed_number(low, 0) + " towards " + fixed_number(high, 0);
  f.x_label = "alpha";
  f.y_label = "normalised score (95% interval)";
  f.note = few_episodes_note(episodes);
  ordered_json runs = ordered_json::array();
  if (episodes > 0) {
    SteeringRuns play{model, info, in, progress, c, episodes, (steered.size() + 1) * alphas.size(),
                      table, runs};
    f.series.push_back(play.retargeted(alphas, high, low));
    for (const int l : steered)
      f.series.push_back(play.steered(l, alphas, low, directions.sources));
  }
  ordered_json summary = {{"variant", c.variant}, {"windows", windows.count},
                          {"high_target", high},  {"low_target", low},
                          {"episodes", episodes}, {"directions", directions.list},
                          {"runs", runs}};
  note_few_episodes(summary, episodes);
  std::vector<AnalysisFigure> figures;
  if (episodes > 0) figures.push_back(std::move(f));
  auto result = causal_result({table}, std::move(figures), summary, windows);
  result.documents = std::move(directions.documents);
  return result;
}

// Registered after causal_analyses.cpp's (this file links after it).
[[maybe_unused]] const bool registered = [] {
  auto& r = analysis::analysis_registry();
  r.add(studio("attribution", "Direct attribution",
               "Each head's, MLP's and the embeddings' share of each joint's action before the "
               "tanh, the final norm's scale frozen at the run: the parts sum to the action",
               with_common({{"windows", "Dataset windows", Type::Integer, "64", {}, 1, 10000}}),
               attribution));
  r.add(studio(
      "probes", "Linear probes",
      "Ridge probes of the stream after each block, per token type, for the return-to-go, the "
      "timestep and each velocity: R^2 on episodes the probe was not fitted on",
      with_common(
          {{"windows", "Dataset windows", Type::Integer, "256", {}, 4, 100000},
           {"ridge", "Penalty on the standardised weights", Type::Number, "1", {}, 0, 1e9}}),
      probes));
  r.add(studio(
      "steering", "Steering",
      "The return-to-go direction after each block (mean stream at a high target less at a low "
      "one), written as direction_L<layer>.json; episodes steered by alpha times it at the low "
      "target, beside the target moved by alpha instead",
      with_common(
          {{"windows", "Dataset windows for the directions", Type::Integer, "64", {}, 1, 10000},
           {"high",
            "High target (default: the data's best return)",
            Type::Number,
            "",
            {},
            -1e12,
            1e12},
           {"low",
            "Low target (default: the data's median return)",
            Type::Number,
            "",
            {},
            -1e12,
            1e12},
           {"alphas", "Steps along the direction", Type::NumberList, "0,0.5,1,1.5,2"},
           {"layers", "Blocks to steer after (default: every one)", Type::NumberList, ""},
           {"episodes",
            "Episodes at each alpha (0: directions only)",
            Type::Integer,
            "10",
            {},
            0,
            1000}}),
      steering));
  return true;
}();

}  // namespace
}  // namespace dstudio::models
