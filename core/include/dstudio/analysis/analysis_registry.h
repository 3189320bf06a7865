#pragma once
/// \file
/// Analyses that plugins add: each says once what it takes (a checkpoint, a dataset, options with
/// defaults and ranges) and computes its numbers with a plain function that reports progress and
/// can be cancelled. From that one definition the studio makes `dstudio analyze <name>` with its
/// --help, the window's panel with its option form, and its exported figure and CSV files. The
/// result is data only (a summary, tables, figure series); drawing is the views' job. No Qt, no
/// LibTorch.

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "dstudio/common/progress.h"
#include "dstudio/common/registry.h"

namespace dstudio::analysis {

/// One option of an analysis, as the command line and the option form show it.
struct AnalysisOption {
  enum class Type { Integer, Number, Text, Choice, Flag };
  std::string key;          ///< "--key" on the command line
  std::string description;  ///< one line
  Type type = Type::Number;
  std::string default_value;         ///< as text; "" for none
  std::vector<std::string> choices;  ///< Choice only
  double minimum = -std::numeric_limits<double>::infinity();
  double maximum = std::numeric_limits<double>::infinity();
};

/// Option values by key, as text, checked against their definitions by resolve_options.
class AnalysisOptions {
 public:
  AnalysisOptions() = default;
  explicit AnalysisOptions(std::map<std::string, std::string> values) : values_(std::move(values)) {}
  [[nodiscard]] std::int64_t integer(const std::string& key) const;
  [[nodiscard]] double number(const std::string& key) const;
  [[nodiscard]] std::string text(const std::string& key) const;
  [[nodiscard]] bool flag(const std::string& key) const;
  [[nodiscard]] const std::map<std::string, std::string>& values() const { return values_; }

 private:
  std::map<std::string, std::string> values_;
};

/// What an analysis runs on.
struct AnalysisInputs {
  std::string checkpoint;  ///< empty when the analysis needs none
  std::string dataset;     ///< empty: the checkpoint's own dataset
  AnalysisOptions options;
};

/// A table of numbers with named columns (written as <name>.csv).
struct AnalysisTable {
  std::string name;
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;
};

/// One line or one set of bars of a figure.
struct AnalysisSeries {
  std::string name;
  std::vector<double> x, y;
  std::vector<double> spread;  ///< optional: a band (lines) or error bars (bars) of +/- spread
};

/// A figure as data: lines over x, or bars whose x are indices into `categories`.
struct AnalysisFigure {
  enum class Kind { Lines, Bars };
  std::string name;  ///< file name without extension
  std::string title, x_label, y_label;
  Kind kind = Kind::Lines;
  std::vector<AnalysisSeries> series;
  std::vector<std::string> categories;  ///< Bars: the label of each x
};

/// What an analysis computed.
struct AnalysisResult {
  std::string summary_json;  ///< one JSON object: the numbers a script reads (summary.json)
  std::vector<AnalysisTable> tables;
  std::vector<AnalysisFigure> figures;
};

/// An analysis.
struct AnalysisDefinition {
  std::string name;         ///< "dstudio analyze <name>"
  std::string title;        ///< what the window's panel and menus call it
  std::string description;  ///< one line for --help
  bool needs_checkpoint = true;
  std::vector<AnalysisOption> options;
  /// Computes the result; polls `progress` and throws Cancelled when asked to stop, Error for
  /// input it cannot use.
  std::function<AnalysisResult(const AnalysisInputs& inputs, const Progress& progress)> run;
  Origin origin;
};

/// The analyses plugins added.
Registry<AnalysisDefinition>& analysis_registry();

/// `given` checked against `definition`'s options and completed with their defaults. Throws
/// UsageError naming an unknown option, a value of the wrong type or out of range, or a choice
/// that is not offered.
AnalysisOptions resolve_options(const AnalysisDefinition& definition, const std::map<std::string, std::string>& given);

/// Runs `definition` on `inputs` (options resolved first). Throws what the analysis throws, and
/// Error when it returns a summary that is not a JSON object.
AnalysisResult run_analysis(const AnalysisDefinition& definition, AnalysisInputs inputs, const Progress& progress = {});

/// Writes <dir>/summary.json and <dir>/<table>.csv for every table, each atomically (a temporary
/// name, then a rename). Returns the paths written.
std::vector<std::string> write_result_files(const AnalysisResult& result, const std::string& dir);

}  // namespace dstudio::analysis
