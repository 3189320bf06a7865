// What the causal analyses share; see causal_parts.h.

#include "causal_parts.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "dstudio/common/error.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/env/action_names.h"
#include "dstudio/models/dataset_fit.h"
#include "dstudio/models/evaluation.h"
#include "dstudio/models/targets.h"
#include "dstudio/models/windows.h"
#include "policy_window.h"

namespace dstudio::models::causal_parts {

std::vector<std::string> joint_names(const CheckpointInfo& info, int count) {
  return env::action_names_or_numbers(info.env_id.empty() ? "hopper" : info.env_id, count);
}

DatasetWindows dataset_windows(const LoadedCheckpoint& checkpoint, const std::string& dataset,
                               int count, const Progress& progress) {
  DatasetWindows out;
  out.dataset = dataset.empty() ? checkpoint_dataset(checkpoint.info, progress)
                                : std::filesystem::path(dataset);
  progress.update(0.0, "loading the dataset");
  const auto ds = data::load_dataset(out.dataset, {.isolate = true}, {{}, progress.cancel});
  out.warnings = ds.warnings;
  // Before any window is cut: a state of another size must not reach the model's tensors.
  if (auto warning = check_dataset_fits(checkpoint.info, ds); !warning.empty())
    out.warnings.push_back(std::move(warning));
  const double shift = checkpoint.info.training.reward_shift;
  out.windows = sample_windows(ds, count, checkpoint.info.variant.context_length, shift);
  out.inputs = window_inputs(out.windows, checkpoint.model->config(), checkpoint.info);
  out.count = static_cast<int64_t>(out.windows.size());
  for (const auto& e : ds.episodes)
    if (e.complete()) out.episode_returns.push_back(model_return(e.ret, e.length, shift));
  return out;
}

ModelWithBlocks model_with_blocks(const analysis::AnalysisInputs& in, const std::string& lacking) {
  ModelWithBlocks out{analysis_parts::opened(in), nullptr};
  const auto& c = out.config();
  if (c.tokenizer == Tokenizer::State)
    throw UsageError(in.checkpoint + ": the model (" + c.variant + ") has no " + lacking);
  out.handle = out.checkpoint->model;
  return out;
}

std::pair<double, double> contrast_targets(const analysis::AnalysisOptions& o,
                                           const DatasetWindows& windows) {
  const auto& returns = windows.episode_returns;
  if (returns.empty())
    throw UsageError(windows.dataset.string() + " has no complete episode to take targets from");
  return {o.given("high") ? o.number("high") : *std::max_element(returns.begin(), returns.end()),
          o.given("low") ? o.number("low") : median(returns)};
}

analysis::AnalysisResult causal_result(std::vector<analysis::AnalysisTable> tables,
                                       std::vector<analysis::AnalysisFigure> figures,
                                       nlohmann::ordered_json summary,
                                       const DatasetWindows& windows) {
  analysis_parts::note_dataset_warnings(summary, windows.dataset, windows.warnings);
  analysis::AnalysisResult result;
  result.tables = std::move(tables);
  result.figures = std::move(figures);
  result.summary_json = summary.dump();
  return result;
}

ModelInputs at_target(const ModelInputs& inputs, double target, double rtg_scale) {
  ModelInputs out = inputs;
  const auto& R = inputs.returns_to_go;  // (B, K, 1)
  // The window's first real step (windows are left-padded).
  auto first = torch::zeros({R.size(0), 1, 1}, torch::kLong);
  if (inputs.mask.defined())
    first = (inputs.mask > 0.5).to(torch::kInt).argmax(1, true).unsqueeze(-1).to(torch::kLong);
  out.returns_to_go = R - R.gather(1, first) + static_cast<float>(target / rtg_scale);
  if (inputs.mask.defined()) out.returns_to_go = out.returns_to_go * inputs.mask.unsqueeze(-1);
  return out;
}

torch::Tensor last_actions(DecisionModelImpl& model, const ModelInputs& in,
                           const InterventionPlan* plan) {
  torch::InferenceMode inference;
  const auto K = in.states.size(1);
  return (plan ? plan->forward(model, in) : model.forward(in)).select(1, K - 1);
}

double mean_distance(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).norm(2, {1}).mean().item<double>();
}

std::vector<double> closed_loop_scores(DecisionModelImpl& model, const CheckpointInfo& info,
                                       const InterventionPlan& plan,
                                       const analysis::AnalysisInputs& in, double target,
                                       int episodes, const Progress& progress) {
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

analysis::Interval score_interval(const std::vector<double>& scores, std::uint64_t seed) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (scores.empty() ||
      !std::all_of(scores.begin(), scores.end(), [](double s) { return std::isfinite(s); }))
    return {nan, nan, nan};
  return analysis::bootstrap_interval({scores}, analysis::aggregate_mean,
                                      {.resamples = 2000, .confidence = 0.95, .seed = seed});
}

std::string few_episodes_warning(int episodes) {
  if (episodes <= 0 || episodes >= kEnoughEpisodes) return {};
  return "the 95% intervals rest on " + std::to_string(episodes) + " episode" +
         (episodes == 1 ? "" : "s") + " each: fewer than " + std::to_string(kEnoughEpisodes) +
         " give an interval too rough to read (a bootstrap over so few understates the spread); "
         "use --episodes " +
         std::to_string(kEnoughEpisodes) + " or more";
}

std::string few_episodes_note(int episodes) {
  if (episodes <= 0 || episodes >= kEnoughEpisodes) return {};
  return "n = " + std::to_string(episodes) + " episode" + (episodes == 1 ? "" : "s") +
         " each: intervals too rough to read (fewer than " + std::to_string(kEnoughEpisodes) + ")";
}

void note_few_episodes(nlohmann::ordered_json& summary, int episodes) {
  const std::string warning = few_episodes_warning(episodes);
  if (warning.empty()) return;
  if (!summary.contains("warnings")) summary["warnings"] = nlohmann::ordered_json::array();
  summary["warnings"].push_back(warning);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<std::string> token_labels(const VariantConfig& c, int64_t tokens) {
  std::vector<std::string> out;
  const bool triplet = c.tokenizer == Tokenizer::Triplet;
  for (int64_t t = 0; t < tokens; ++t) {
    const int64_t step = triplet ? t / 3 + 1 : t + 1;
    const char* type = triplet ? (t % 3 == 0 ? "R" : t % 3 == 1 ? "s" : "a") : "t";
    out.push_back(type + std::to_string(step));
  }
  return out;
}

}  // namespace dstudio::models::causal_parts
