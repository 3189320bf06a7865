// Analyses added by plugins: their options, running them, writing their numbers. See
// analysis_registry.h.

#include "dstudio/analysis/analysis_registry.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "dstudio/common/atomic_file.h"
#include "dstudio/common/csv.h"
#include "dstudio/common/error.h"
#include "dstudio/common/text.h"

namespace dstudio::analysis {
namespace fs = std::filesystem;

Registry<AnalysisDefinition>& analysis_registry() {
  static auto* registry =
      new Registry<AnalysisDefinition>("analysis");  // never destroyed: plugins' code
  return *registry;
}

namespace {

bool parse_number(const std::string& text, double& value) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  value = std::strtod(text.c_str(), &end);
  return errno == 0 && end == text.c_str() + text.size() && std::isfinite(value);
}

bool parse_flag(const std::string& text, bool& value) {
  if (text == "true" || text == "1" || text == "on" || text == "yes")
    value = true;
  else if (text == "false" || text == "0" || text == "off" || text == "no")
    value = false;
  else
    return false;
  return true;
}

const std::string& value_of(const std::map<std::string, std::string>& values,
                            const std::string& key) {
  auto it = values.find(key);
  if (it == values.end()) throw UsageError("the analysis has no option '" + key + "'");
  return it->second;
}

}  // namespace

std::int64_t AnalysisOptions::integer(const std::string& key) const {
  return static_cast<std::int64_t>(number(key));
}

double AnalysisOptions::number(const std::string& key) const {
  double v = 0.0;
  if (!parse_number(value_of(values_, key), v))
    throw UsageError("--" + key + " is not a number: '" + value_of(values_, key) + "'");
  return v;
}

std::string AnalysisOptions::text(const std::string& key) const {
  return value_of(values_, key);
}

bool AnalysisOptions::given(const std::string& key) const {
  return !value_of(values_, key).empty();
}

namespace {

// "0.5, 1,2": the numbers; false at the first that is not one.
bool parse_numbers(const std::string& text, std::vector<double>& out) {
  out.clear();
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto end = std::min(text.find(',', start), text.size());
    std::string item = text.substr(start, end - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    double v = 0.0;
    if (!item.empty() || end < text.size()) {
      if (!parse_number(item, v)) return false;
      out.push_back(v);
    }
    start = end + 1;
  }
  return true;
}

}  // namespace

std::vector<double> AnalysisOptions::numbers(const std::string& key) const {
  std::vector<double> v;
  if (!parse_numbers(value_of(values_, key), v))
    throw UsageError("--" + key + " is not a list of numbers: '" + value_of(values_, key) + "'");
  return v;
}

bool AnalysisOptions::flag(const std::string& key) const {
  bool v = false;
  if (!parse_flag(value_of(values_, key), v))
    throw UsageError("--" + key + " is not true or false: '" + value_of(values_, key) + "'");
  return v;
}

AnalysisOptions resolve_options(const AnalysisDefinition& definition,
                                const std::map<std::string, std::string>& given) {
  std::map<std::string, std::string> values;
  for (const auto& [key, value] : given) {
    bool known = false;
    for (const auto& o : definition.options) known |= o.key == key;
    if (!known) {
      std::string names;
      for (const auto& o : definition.options) names += (names.empty() ? "" : ", ") + o.key;
      throw UsageError("the analysis '" + definition.name + "' has no option '" + key + "'" +
                       (names.empty() ? "" : "; its options: " + names));
    }
  }
  using Type = AnalysisOption::Type;
  for (const auto& o : definition.options) {
    auto it = given.find(o.key);
    std::string text = it != given.end() ? it->second : o.default_value;
    if (o.type == Type::Flag && text.empty()) text = "false";
    if (o.required && text.empty())
      throw UsageError("the analysis '" + definition.name + "' needs --" + o.key + " (" +
                       o.description + ")");
    // An option without a default may be left out: empty, and given() says so.
    if (text.empty() && o.type != Type::Choice && o.type != Type::Flag) {
      values[o.key] = text;
      continue;
    }
    const std::string where = "--" + o.key + " of the analysis '" + definition.name + "'";
    switch (o.type) {
      case Type::Integer:
      case Type::Number: {
        double v = 0.0;
        if (!parse_number(text, v)) throw UsageError(where + " needs a number, not '" + text + "'");
        if (o.type == Type::Integer && v != std::floor(v))
          throw UsageError(where + " needs a whole number, not '" + text + "'");
        if (v < o.minimum || v > o.maximum)
          throw UsageError(where + " must be in [" + exact_number(o.minimum) + ", " +
                           exact_number(o.maximum) + "], not " + text);
        break;
      }
      case Type::Choice: {
        bool offered = false;
        std::string names;
        for (const auto& c : o.choices) {
          offered |= c == text;
          names += (names.empty() ? "" : ", ") + c;
        }
        if (!offered) throw UsageError(where + " takes " + names + ", not '" + text + "'");
        break;
      }
      case Type::Flag: {
        bool v = false;
        if (!parse_flag(text, v))
          throw UsageError(where + " takes true or false, not '" + text + "'");
        break;
      }
      case Type::NumberList: {
        std::vector<double> list;
        if (!parse_numbers(text, list))
          throw UsageError(where + " needs numbers separated by commas, not '" + text + "'");
        for (double v : list)
          if (v < o.minimum || v > o.maximum)
            throw UsageError(where + " takes numbers in [" + exact_number(o.minimum) + ", " +
                             exact_number(o.maximum) + "], not " + exact_number(v));
        break;
      }
      case Type::Text:
        break;
    }
    values[o.key] = text;
  }
  return AnalysisOptions(std::move(values));
}

AnalysisResult run_analysis(const AnalysisDefinition& definition, AnalysisInputs inputs,
                            const Progress& progress) {
  if (definition.needs_checkpoint && inputs.checkpoint.empty())
    throw UsageError("the analysis '" + definition.name + "' needs a checkpoint");
  inputs.options = resolve_options(definition, inputs.options.values());
  if (!definition.run) throw Error("the analysis '" + definition.name + "' has nothing to run");
  progress.update(0.0, definition.title.empty() ? definition.name : definition.title);
  AnalysisResult result = definition.run(inputs, progress);
  if (result.summary_json.empty()) result.summary_json = "{}";
  const auto summary = nlohmann::json::parse(result.summary_json, nullptr, false);
  if (summary.is_discarded() || !summary.is_object())
    throw Error("the analysis '" + definition.name + "' (" + definition.origin.label() +
                ") returned a summary that is not a JSON object");
  for (const auto& t : result.tables)
    for (const auto& row : t.rows)
      if (row.size() != t.columns.size())
        throw Error("the analysis '" + definition.name + "' returned a row of " +
                    std::to_string(row.size()) + " cells for the " +
                    std::to_string(t.columns.size()) + " columns of its table '" + t.name + "'");
  progress.update(1.0, "done");
  return result;
}

std::string table_csv(const AnalysisTable& table) {
  CsvWriter csv(table.columns, 9);
  for (const auto& row : table.rows) {
    for (const auto& cell : row) {
      if (const auto* text = std::get_if<std::string>(&cell))
        csv << *text;
      else
        csv << std::get<double>(cell);
    }
    csv.end_row();
  }
  return csv.text();
}

std::vector<std::string> write_result_files(const AnalysisResult& result, const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(dir + ": cannot make the folder (" + ec.message() + ")");
  std::vector<std::string> written;
  const fs::path summary = fs::path(dir) / "summary.json";
  write_text_atomically(summary, nlohmann::ordered_json::parse(
                                     result.summary_json.empty() ? "{}" : result.summary_json)
                                         .dump(2) +
                                     "\n");
  written.push_back(summary.string());
  for (const auto& t : result.tables) {
    const fs::path path = fs::path(dir) / (t.name + ".csv");
    write_text_atomically(path, table_csv(t));
    written.push_back(path.string());
  }
  for (const auto& [name, text] : result.documents) {
    if (name.empty() || name.find('/') != std::string::npos || name.front() == '.')
      throw Error("an analysis named a file \"" + name + "\" outside its folder");
    const fs::path path = fs::path(dir) / name;
    write_text_atomically(path, text);
    written.push_back(path.string());
  }
  return written;
}

}  // namespace dstudio::analysis
