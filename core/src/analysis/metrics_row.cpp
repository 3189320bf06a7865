// A training run's metrics rows. See metrics_row.h.

#include "dstudio/analysis/metrics_row.h"

namespace dstudio::analysis::metrics {

std::optional<double> Row::get(std::string_view name) const {
  const auto it = columns.find(std::string(name));
  if (it == columns.end()) return std::nullopt;
  return it->second;
}

nlohmann::ordered_json metrics_row_json(std::int64_t step, double loss, double learning_rate,
                                        double steps_per_second,
                                        const std::map<std::string, double>& evaluation) {
  nlohmann::ordered_json row = {{kStep, step},
                                {kLoss, loss},
                                {kLearningRate, learning_rate},
                                {kStepsPerSecond, steps_per_second}};
  for (const auto& [key, value] : evaluation) row[key] = value;
  return row;
}

namespace {

std::map<std::string, double> columns_of(const nlohmann::json& j) {
  std::map<std::string, double> out;
  if (!j.is_object()) return out;
  for (const auto& [key, value] : j.items())
    if (key != kStep && value.is_number()) out[key] = value.get<double>();
  return out;
}

}  // namespace

std::optional<Row> read_metrics_row(std::string_view line) {
  const auto j = nlohmann::json::parse(line, nullptr, false);
  if (!j.is_object() || !j.contains(kStep) || !j[kStep].is_number_integer()) return std::nullopt;
  return Row{j[kStep].get<std::int64_t>(), columns_of(j)};
}

std::map<std::string, double> read_metrics_columns(std::string_view line) {
  return columns_of(nlohmann::json::parse(line, nullptr, false));
}

}  // namespace dstudio::analysis::metrics
