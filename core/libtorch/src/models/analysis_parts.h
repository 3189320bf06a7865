#pragma once
// What the studio's registered analyses share (studio_analyses.cpp, causal_analyses.cpp): the
// checkpoint they run on, options every analysis that acts takes, JSON and figure helpers, and the
// definition of a studio analysis.

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dstudio/analysis/analysis_registry.h"
#include "dstudio/env/environment.h"
#include "dstudio/models/checkpoint.h"

namespace dstudio::models::analysis_parts {

// The names every analysis file uses, brought in with `using namespace analysis_parts`.
namespace fs = std::filesystem;
using analysis::AnalysisFigure;
using analysis::AnalysisInputs;
using analysis::AnalysisOption;
using analysis::AnalysisResult;
using analysis::AnalysisSeries;
using analysis::AnalysisTable;
using nlohmann::ordered_json;
using Type = AnalysisOption::Type;

/// NaN (e.g. the correlation of a constant series) as JSON null.
nlohmann::ordered_json finite_or_null(double v);
/// What loading the dataset warned of goes into the summary, each line naming the file, and
/// `dstudio analyze` prints it: a damaged file's losses are never passed over in silence.
void note_dataset_warnings(nlohmann::ordered_json& summary, const std::filesystem::path& dataset,
                           const std::vector<std::string>& warnings);
/// The result of an analysis that writes one table and one figure.
analysis::AnalysisResult one_table_result(analysis::AnalysisTable table,
                                          analysis::AnalysisFigure figure,
                                          const nlohmann::ordered_json& summary);
/// A second checkpoint or a run folder named by option `key`: it must be there ("" when not given).
std::string existing(const analysis::AnalysisOptions& o, const std::string& key);
/// The checkpoint an analysis runs on: the window's open model when that is the one named, else
/// read here, once for the whole analysis.
std::shared_ptr<const LoadedCheckpoint> opened(const analysis::AnalysisInputs& in);
/// The checkpoint's task (hopper for a checkpoint that names none).
const env::EnvironmentDefinition& task_of(const CheckpointInfo& info);
/// The analysis's --target, else the task's first default target.
double target_of(const AnalysisInputs& in, const CheckpointInfo& info);
/// Options every analysis that acts or samples takes, as the command line always had them.
std::vector<analysis::AnalysisOption> with_common(std::vector<analysis::AnalysisOption> options);
/// A token-by-token heatmap figure.
analysis::AnalysisFigure heatmap(std::string name, std::string title,
                                 const analysis::TokenMatrix& m,
                                 const std::vector<std::string>& labels, bool diverging,
                                 std::string colour_label);
/// A studio analysis's definition (it has its own panel in the window).
analysis::AnalysisDefinition studio(std::string name, std::string title, std::string description,
                                    std::vector<analysis::AnalysisOption> options,
                                    decltype(analysis::AnalysisDefinition::run) run,
                                    bool needs_checkpoint = true);

}  // namespace dstudio::models::analysis_parts
