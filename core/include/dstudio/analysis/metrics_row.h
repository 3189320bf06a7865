#pragma once
/// \file
/// One row of a training run's metrics: a line of metrics.jsonl, a row of metrics.csv and the
/// `metrics` of a checkpoint's description. The column names are spelled here only; the trainer
/// writes rows with metrics_row_json, and everything that reads a row (curves, the sweep's
/// status, the trainer trimming rows it writes again) reads it with read_metrics_row.

#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace dstudio::analysis::metrics {

inline constexpr const char* kStep = "step";
inline constexpr const char* kLoss = "loss";
inline constexpr const char* kLearningRate = "learning_rate";
inline constexpr const char* kStepsPerSecond = "steps_per_second";
/// The evaluation's columns, on the rows that evaluated (models::evaluation_hook).
inline constexpr const char* kEvalScore = "eval_score";
inline constexpr const char* kEvalScoreStd = "eval_score_std";
inline constexpr const char* kEvalReturn = "eval_return";
inline constexpr const char* kEvalSuccessRate = "eval_success_rate";
inline constexpr const char* kEntropyLayer1 = "entropy_layer1";

/// The columns of every row, in the order they are written (metrics.csv holds these only).
inline constexpr std::array<const char*, 4> kTrainerColumns = {kStep, kLoss, kLearningRate,
                                                               kStepsPerSecond};

/// A row: the trainer's columns and, when it evaluated, the evaluation's by name. Read, it holds
/// every number of the line by its key (a version that wrote other columns included).
struct Row {
  std::int64_t step = 0;
  std::map<std::string, double> columns;  ///< every column but the step

  /// The column's value, if the row has it.
  std::optional<double> get(std::string_view name) const;
};

/// The trainer's row: its columns in kTrainerColumns' order, then `evaluation`'s in name order.
nlohmann::ordered_json metrics_row_json(std::int64_t step, double loss, double learning_rate,
                                        double steps_per_second,
                                        const std::map<std::string, double>& evaluation);

/// A line of metrics.jsonl (or a checkpoint's metrics): nothing when it is no JSON object with a
/// whole-number step (a line cut short by a crash, or text that is not a row).
std::optional<Row> read_metrics_row(std::string_view line);

/// Every number of a JSON object by its key but the step, whether it has a step or not (a
/// checkpoint's metrics as another writer left them); none for text that is no object.
std::map<std::string, double> read_metrics_columns(std::string_view line);

}  // namespace dstudio::analysis::metrics
