#pragma once
/// \file
/// Analyses, the studio's own and those plugins add: each says once what it takes (a checkpoint, a
/// dataset, options with defaults and ranges) and computes its numbers with a plain function that
/// reports progress and can be cancelled. From that one definition the studio makes `dstudio
/// analyze <name>` with its
/// --help, the window's panel with its option form, and its exported figure and CSV files. The
/// result is data only (a summary, tables, figure series); drawing is the views' job. No Qt, no
/// LibTorch.

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "dstudio/analysis/attention_maps.h"
#include "dstudio/common/progress.h"
#include "dstudio/common/registry.h"

namespace dstudio::models {
struct LoadedCheckpoint;
}

namespace dstudio::analysis {

/// Dataset windows the studio's inspections average over unless told otherwise (attention maps,
/// locality, the per-head entropies): the analyses' default and what the window inspects a
/// checkpoint on.
inline constexpr int kInspectionWindows = 16;

/// One option of an analysis, as the command line and the option form show it.
struct AnalysisOption {
  enum class Type { Integer, Number, Text, Choice, Flag, NumberList };
  std::string key;          ///< "--key" on the command line
  std::string description;  ///< one line
  Type type = Type::Number;
  std::string default_value;         ///< as text; "" for none
  std::vector<std::string> choices;  ///< Choice only
  double minimum = -std::numeric_limits<double>::infinity();
  double maximum = std::numeric_limits<double>::infinity();
  bool required = false;  ///< must be given (no default)
};

/// Option values by key, as text, checked against their definitions by resolve_options.
class AnalysisOptions {
 public:
  AnalysisOptions() = default;
  explicit AnalysisOptions(std::map<std::string, std::string> values)
      : values_(std::move(values)) {}
  [[nodiscard]] std::int64_t integer(const std::string& key) const;
  [[nodiscard]] double number(const std::string& key) const;
  [[nodiscard]] std::string text(const std::string& key) const;
  [[nodiscard]] bool flag(const std::string& key) const;
  /// False for an option without a default that was not given (its value is empty).
  [[nodiscard]] bool given(const std::string& key) const;
  /// A NumberList: "0.5,1,2" as numbers; empty when the option was left empty.
  [[nodiscard]] std::vector<double> numbers(const std::string& key) const;
  [[nodiscard]] const std::map<std::string, std::string>& values() const { return values_; }

 private:
  std::map<std::string, std::string> values_;
};

/// What an analysis runs on.
struct AnalysisInputs {
  std::string checkpoint;  ///< empty when the analysis needs none
  std::string dataset;     ///< empty: the checkpoint's own dataset
  AnalysisOptions options;
  /// `checkpoint` read already (the window's open model, shared with its views): used instead of
  /// reading the file again when its path is `checkpoint`. Null: read from `checkpoint`.
  std::shared_ptr<const models::LoadedCheckpoint> opened;
};

/// One cell of a table: a number (NaN: left empty) or a text such as a layer's mixer.
using AnalysisCell = std::variant<double, std::string>;

/// A table with named columns (written as <name>.csv).
struct AnalysisTable {
  std::string name;
  std::vector<std::string> columns;
  std::vector<std::vector<AnalysisCell>> rows;
};

/// One line, one set of bars or one group of points of a figure.
struct AnalysisSeries {
  std::string name;
  std::vector<double> x, y;
  std::vector<double> spread;  ///< optional: a band (lines) or error bars (bars) of +/- spread
  bool right_axis = false;     ///< Lines: drawn against a second y axis titled `right_label`
  /// optional, instead of `spread`: a band or error bars from low to high (an interval that is
  /// not symmetric about y, such as a bootstrap's)
  std::vector<double> low, high;
};

/// A figure as data: lines over x, bars whose x are indices into `categories`, a token-by-token
/// heatmap, groups of points, or a grid of labelled rows and columns (e.g. layer x token).
struct AnalysisFigure {
  enum class Kind { Lines, Bars, Heatmap, Scatter, Grid };
  std::string name;  ///< file name without extension
  std::string title, x_label, y_label;
  Kind kind = Kind::Lines;
  std::vector<AnalysisSeries> series;   ///< Lines; Bars: the first; Scatter: a group each
  std::vector<std::string> categories;  ///< Bars: the label of each x
  // Lines:
  std::string right_label;
  std::vector<std::pair<std::string, double>> references;  ///< horizontal lines: (name, y)
  bool log_x = false;
  // Heatmap: rows are queries, labelled; entries above the diagonal are masked.
  TokenMatrix matrix;
  std::vector<std::string> labels;
  bool diverging = false;    ///< a colour map centred at zero (differences); Grid too
  std::string colour_label;  ///< Heatmap and Grid
  // Grid: `cells` is row_labels.size() x labels.size(), row-major, NaN left blank; `labels` name
  // the columns (token labels such as "R1", "s1" are thinned to steps as on a heatmap).
  std::vector<std::string> row_labels;
  std::vector<double> cells;
  /// Grid: the colours follow value^colour_power, the colour bar labelled in the values
  /// themselves. 1 is linear; 0.5, a square-root scale, tells values near 0 from 0 and still
  /// keeps the largest apart (fractions from 0.01 to 1 on one map).
  double colour_power = 1.0;
  /// Grid: the colour scale spans at least [colour_from, colour_to], widened to every value (NaN:
  /// the values' own range). Fractions of 0 to 1 so keep one scale on every figure.
  double colour_from = std::numeric_limits<double>::quiet_NaN();
  double colour_to = std::numeric_limits<double>::quiet_NaN();
  /// What a reader must know with the figure, drawn under it (intervals over too few episodes).
  std::string note;
};

/// What an analysis computed.
struct AnalysisResult {
  std::string summary_json;  ///< one JSON object: the numbers a script reads (summary.json)
  std::vector<AnalysisTable> tables;
  std::vector<AnalysisFigure> figures;
  /// Further files as (file name, text): what other commands read back, such as the steering
  /// analysis's directions (direction_L<layer>.json).
  std::vector<std::pair<std::string, std::string>> documents;
};

/// An analysis.
struct AnalysisDefinition {
  std::string name;         ///< "dstudio analyze <name>"
  std::string title;        ///< what the window's panel and menus call it
  std::string description;  ///< one line for --help
  bool needs_checkpoint = true;
  /// The studio's own analyses have a view of their own in the window as well.
  bool has_own_view = false;
  std::vector<AnalysisOption> options;
  /// Computes the result; polls `progress` and throws Cancelled when asked to stop, Error for
  /// input it cannot use.
  std::function<AnalysisResult(const AnalysisInputs& inputs, const Progress& progress)> run;
  Origin origin;
};

/// Every analysis: the studio's own first, then those plugins added.
Registry<AnalysisDefinition>& analysis_registry();

/// `given` checked against `definition`'s options and completed with their defaults. Throws
/// UsageError naming an unknown option, a value of the wrong type or out of range, or a choice
/// that is not offered.
AnalysisOptions resolve_options(const AnalysisDefinition& definition,
                                const std::map<std::string, std::string>& given);

/// Runs `definition` on `inputs` (options resolved first). Throws what the analysis throws, and
/// Error when it returns a summary that is not a JSON object.
AnalysisResult run_analysis(const AnalysisDefinition& definition, AnalysisInputs inputs,
                            const Progress& progress = {});

/// A table as CSV text (9 significant digits), as write_result_files writes each one.
std::string table_csv(const AnalysisTable& table);

/// Writes <dir>/summary.json and <dir>/<table>.csv for every table, each atomically (a temporary
/// name, then a rename); numbers with 9 significant digits, NaN as an empty field. Returns the
/// paths written.
std::vector<std::string> write_result_files(const AnalysisResult& result, const std::string& dir);

}  // namespace dstudio::analysis
