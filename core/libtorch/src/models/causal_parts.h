#pragma once
// What the causal analyses share (causal_analyses.cpp, causal_readouts.cpp): dataset windows as a
// model's inputs, the same windows at another target, the actions at each window's last step, and
// episodes played by an intervened policy.

#include <torch/torch.h>

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analysis_parts.h"
#include "dstudio/analysis/aggregate.h"
#include "dstudio/common/progress.h"
#include "dstudio/models/checkpoint_model.h"
#include "dstudio/models/intervene.h"
#include "dstudio/models/window.h"

namespace dstudio::models::causal_parts {

/// Windows of a checkpoint's dataset (or the one given) as its model's inputs.
struct DatasetWindows {
  std::filesystem::path dataset;
  std::vector<std::string> warnings;
  std::vector<Window> windows;
  ModelInputs inputs;
  int64_t count = 0;
  /// The returns of the dataset's complete episodes (what "the data's best" and "median" are of).
  std::vector<double> episode_returns;
};
DatasetWindows dataset_windows(const LoadedCheckpoint& checkpoint, const std::string& dataset,
                               int count, const Progress& progress);

/// The checkpoint's action dimensions named by their joints (thigh, leg, foot for the hopper;
/// "joint N" for an environment the studio does not simulate): a figure's per-joint labels.
std::vector<std::string> joint_names(const CheckpointInfo& info, int count);

/// A causal analysis's checkpoint (opened()) with its model callable. A model that sees one step
/// (mlp-bc) is refused: "<checkpoint>: the model (mlp-bc) has no <lacking>".
struct ModelWithBlocks {
  std::shared_ptr<const LoadedCheckpoint> checkpoint;
  DecisionModel handle;  ///< the checkpoint's module
  [[nodiscard]] const CheckpointInfo& info() const { return checkpoint->info; }
  [[nodiscard]] const VariantConfig& config() const { return checkpoint->info.variant; }
};
ModelWithBlocks model_with_blocks(const analysis::AnalysisInputs& in, const std::string& lacking);

/// The targets patching and steering contrast: --high and --low, by default the best and the
/// median return of the dataset's complete episodes. Throws UsageError for a dataset with none.
std::pair<double, double> contrast_targets(const analysis::AnalysisOptions& o,
                                           const DatasetWindows& windows);

/// A result of `tables` and `figures` with `summary`, what loading the windows' dataset warned of
/// noted in it.
analysis::AnalysisResult causal_result(std::vector<analysis::AnalysisTable> tables,
                                       std::vector<analysis::AnalysisFigure> figures,
                                       nlohmann::ordered_json summary,
                                       const DatasetWindows& windows);

/// The windows with their returns-to-go moved so that each starts at `target` (the environment's
/// units): the rewards within a window stay its own, as if the episode had been asked for
/// `target` at the window's first step.
ModelInputs at_target(const ModelInputs& inputs, double target, double rtg_scale);

/// The action each window's last step gets (B, A), with `plan` when given.
torch::Tensor last_actions(DecisionModelImpl& model, const ModelInputs& in,
                           const InterventionPlan* plan = nullptr);

/// The mean over windows of the Euclidean distance between two sets of actions (B, A).
double mean_distance(const torch::Tensor& a, const torch::Tensor& b);

/// Episodes played by the intervened policy at `target`: their normalised scores (the analysis's
/// --seed and --threads).
std::vector<double> closed_loop_scores(DecisionModelImpl& model, const CheckpointInfo& info,
                                       const InterventionPlan& plan,
                                       const analysis::AnalysisInputs& in, double target,
                                       int episodes, const Progress& progress);

/// Closed-loop episodes fewer than this give a 95% interval too rough to read: the analyses warn
/// (summary, stderr, figure) below it.
inline constexpr int kEnoughEpisodes = 10;

/// The mean of closed-loop scores with its 95% interval: the percentile interval of a bootstrap
/// over the episodes (2000 resamples from Random(seed), as the sweep's statistics draw theirs).
/// It never leaves the range of the scores played, where Student's t over two or three episodes
/// runs hundreds of points past what a score can be. One score: the interval is that score; none:
/// all NaN.
analysis::Interval score_interval(const std::vector<double>& scores, std::uint64_t seed);

/// When `episodes` (more than 0) is fewer than kEnoughEpisodes, what the summary's "warnings",
/// stderr and the figures say of the intervals; empty otherwise.
std::string few_episodes_warning(int episodes);
/// The same as a figure's note: short enough to stand under a column-wide figure.
std::string few_episodes_note(int episodes);
/// few_episodes_warning(episodes) added to summary["warnings"] (which `dstudio analyze` prints on
/// stderr), when there is one.
void note_few_episodes(nlohmann::ordered_json& summary, int episodes);

/// The median of `v` (not empty).
double median(std::vector<double> v);

/// "R1", "s1", "a1", ... (or "t1", ... for merged steps) for a model's T tokens.
std::vector<std::string> token_labels(const VariantConfig& config, int64_t tokens);

}  // namespace dstudio::models::causal_parts
