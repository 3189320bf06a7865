// What the studio's registered analyses share. See analysis_parts.h.

#include "analysis_parts.h"

#include <cmath>
#include <system_error>

#include "dstudio/common/error.h"
#include "dstudio/models/checkpoint_model.h"
#include "dstudio/models/targets.h"

namespace dstudio::models::analysis_parts {

// NaN (e.g. the correlation of a constant series) as JSON null.
ordered_json finite_or_null(double v) {
  return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr);
}

// What loading the dataset warned of goes into the summary, each line naming the file, and
// `dstudio analyze` prints it: a damaged file's losses are never passed over in silence.
void note_dataset_warnings(ordered_json& summary, const std::filesystem::path& dataset,
                           const std::vector<std::string>& warnings) {
  if (warnings.empty()) return;
  ordered_json& lines = summary["dataset_warnings"] = ordered_json::array();
  for (const auto& w : warnings) lines.push_back(dataset.string() + ": " + w);
}

// The result of an analysis that writes one table and one figure.
AnalysisResult one_table_result(AnalysisTable table, AnalysisFigure figure,
                                const ordered_json& summary) {
  AnalysisResult result;
  result.tables.push_back(std::move(table));
  result.figures.push_back(std::move(figure));
  result.summary_json = summary.dump();
  return result;
}

// A second checkpoint or a run folder named by an option: it must be there.
std::string existing(const analysis::AnalysisOptions& o, const std::string& key) {
  const std::string path = o.text(key);
  std::error_code ec;
  if (!path.empty() && !fs::exists(path, ec))
    throw UsageError("--" + key + " " + path + ": no such file or folder");
  return path;
}

// The checkpoint an analysis runs on: the window's open model when that is the one named, else read
// here, once for the whole analysis.
std::shared_ptr<const LoadedCheckpoint> opened(const AnalysisInputs& in) {
  if (in.opened && in.opened->path == fs::path(in.checkpoint)) return in.opened;
  return open_checkpoint(in.checkpoint);
}

const env::EnvironmentDefinition& task_of(const CheckpointInfo& info) {
  return env::task(info.env_id.empty() ? "hopper" : info.env_id);
}

double target_of(const AnalysisInputs& in, const CheckpointInfo& info) {
  return in.options.given("target") ? in.options.number("target") : default_target(info);
}

// Options every analysis that acts or samples takes, as the command line always had them.
std::vector<AnalysisOption> with_common(std::vector<AnalysisOption> options) {
  options.push_back({"threads", "Cores to use", Type::Integer, "2", {}, 1, 64});
  options.push_back({"seed", "Episode e resets with seed + e", Type::Integer, "0", {}, 0, 9.0e15});
  return options;
}

AnalysisFigure heatmap(std::string name, std::string title, const analysis::TokenMatrix& m,
                       const std::vector<std::string>& labels, bool diverging,
                       std::string colour_label) {
  AnalysisFigure f;
  f.name = std::move(name);
  f.title = std::move(title);
  f.x_label = "key";
  f.y_label = "query";
  f.kind = AnalysisFigure::Kind::Heatmap;
  f.matrix = m;
  f.labels = labels;
  f.diverging = diverging;
  f.colour_label = std::move(colour_label);
  return f;
}

analysis::AnalysisDefinition studio(std::string name, std::string title, std::string description,
                                    std::vector<AnalysisOption> options,
                                    decltype(analysis::AnalysisDefinition::run) run,
                                    bool needs_checkpoint) {
  analysis::AnalysisDefinition d;
  d.name = std::move(name);
  d.title = std::move(title);
  d.description = std::move(description);
  d.needs_checkpoint = needs_checkpoint;
  d.has_own_view = true;
  d.options = std::move(options);
  d.run = std::move(run);
  return d;
}

}  // namespace dstudio::models::analysis_parts
