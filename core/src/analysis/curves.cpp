// Smoothing, spread across runs and run metrics. See curves.h.

#include "dstudio/analysis/curves.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "dstudio/analysis/analysis_registry.h"
#include "dstudio/analysis/metrics_row.h"
#include "dstudio/common/atomic_file.h"
#include "dstudio/common/csv.h"
#include "dstudio/common/error.h"

namespace dstudio::analysis {
namespace fs = std::filesystem;

std::vector<double> ema_smooth(const std::vector<double>& y, double smoothing) {
  if (!(smoothing >= 0.0 && smoothing < 1.0))
    throw UsageError("smoothing must be in [0, 1), not " + std::to_string(smoothing));
  std::vector<double> out(y.size());
  double last = 0.0;
  bool started = false;
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (!std::isfinite(y[i])) {
      out[i] = y[i];
      continue;
    }
    last = started ? smoothing * last + (1.0 - smoothing) * y[i] : y[i];
    started = true;
    out[i] = last;
  }
  return out;
}

namespace {

// The curve's value at `at` inside its range, interpolated linearly; NaN outside it.
double value_at(const Curve& c, double at) {
  const auto n = std::min(c.x.size(), c.y.size());
  if (n == 0 || at < c.x.front() || at > c.x[n - 1])
    return std::numeric_limits<double>::quiet_NaN();
  const auto hi = static_cast<std::size_t>(
      std::lower_bound(c.x.begin(), c.x.begin() + static_cast<std::ptrdiff_t>(n), at) -
      c.x.begin());
  if (c.x[hi] == at || hi == 0) return c.y[hi];
  const std::size_t lo = hi - 1;
  const double t = (at - c.x[lo]) / (c.x[hi] - c.x[lo]);
  return c.y[lo] + t * (c.y[hi] - c.y[lo]);
}

}  // namespace

CurveSpread curve_spread(const std::vector<Curve>& curves) {
  std::vector<double> grid;
  for (const auto& c : curves)
    grid.insert(grid.end(), c.x.begin(),
                c.x.begin() + static_cast<std::ptrdiff_t>(std::min(c.x.size(), c.y.size())));
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());

  CurveSpread s;
  std::vector<double> values;
  for (const double at : grid) {
    values.clear();
    for (const auto& c : curves) {
      const double v = value_at(c, at);
      if (std::isfinite(v)) values.push_back(v);
    }
    if (values.empty()) continue;
    const double n = static_cast<double>(values.size());
    double sum = 0.0;
    for (const double v : values) sum += v;
    const double mean = sum / n;
    double squares = 0.0;
    for (const double v : values) squares += (v - mean) * (v - mean);
    s.x.push_back(at);
    s.mean.push_back(mean);
    s.std.push_back(std::sqrt(squares / n));
    s.min.push_back(*std::min_element(values.begin(), values.end()));
    s.max.push_back(*std::max_element(values.begin(), values.end()));
    s.count.push_back(static_cast<int>(values.size()));
  }
  return s;
}

namespace {

void read_jsonl(const fs::path& file, RunMetrics& out) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto row = metrics::read_metrics_row(line);
    if (!row) continue;
    for (const auto& [key, value] : row->columns) {
      auto& curve = out.columns[key];
      curve.x.push_back(static_cast<double>(row->step));
      curve.y.push_back(value);
    }
  }
}

void read_csv(const fs::path& file, RunMetrics& out) {
  std::ifstream in(file);
  std::string line;
  std::vector<std::string> header;
  if (!std::getline(in, line)) return;
  {
    std::stringstream cells(line);
    std::string cell;
    while (std::getline(cells, cell, ',')) header.push_back(cell);
  }
  const auto step_column = std::find(header.begin(), header.end(), metrics::kStep) - header.begin();
  if (step_column == static_cast<std::ptrdiff_t>(header.size())) return;
  while (std::getline(in, line)) {
    // Every cell, the empty ones (a metric not logged at that step) included.
    std::vector<std::string> row;
    std::size_t from = 0;
    for (std::size_t comma; (comma = line.find(',', from)) != std::string::npos; from = comma + 1)
      row.push_back(line.substr(from, comma - from));
    row.push_back(line.substr(from));
    if (row.size() != header.size() || row[static_cast<std::size_t>(step_column)].empty())
      continue;  // a row cut short by a crash
    const double step = std::strtod(row[static_cast<std::size_t>(step_column)].c_str(), nullptr);
    for (std::size_t k = 0; k < header.size(); ++k) {
      if (static_cast<std::ptrdiff_t>(k) == step_column || row[k].empty()) continue;
      auto& curve = out.columns[header[k]];
      curve.x.push_back(step);
      curve.y.push_back(std::strtod(row[k].c_str(), nullptr));
    }
  }
}

}  // namespace

RunMetrics read_run_metrics(const fs::path& dir) {
  RunMetrics out;
  if (!fs::is_directory(dir)) throw Error(dir.string() + ": no such folder");
  // The JSON lines hold the evaluation columns too; the CSV is the fallback.
  for (const char* name : {"metrics.jsonl", "metrics.csv"}) {
    const fs::path file = dir / name;
    if (!fs::exists(file)) continue;
    if (file.extension() == ".jsonl")
      read_jsonl(file, out);
    else
      read_csv(file, out);
    if (!out.columns.empty()) {
      out.source = file.string();
      return out;
    }
  }
  throw Error(dir.string() +
              " holds no training metrics (metrics.jsonl or metrics.csv with a step column)");
}

std::vector<CurveGroup> group_curves(
    const std::vector<std::pair<std::string, const Curve*>>& curves, double smoothing, Band band) {
  std::vector<std::pair<std::string, std::vector<const Curve*>>> by_label;
  for (const auto& [label, curve] : curves) {
    auto g = std::find_if(by_label.begin(), by_label.end(),
                          [&, &l = label](const auto& p) { return p.first == l; });
    if (g == by_label.end()) g = by_label.insert(by_label.end(), {label, {}});
    g->second.push_back(curve);
  }
  std::vector<CurveGroup> out;
  for (const auto& [label, members] : by_label) {
    std::vector<Curve> raw, smooth;
    for (const auto* c : members) {
      raw.push_back(*c);
      smooth.push_back({c->x, ema_smooth(c->y, smoothing)});
    }
    const auto r = curve_spread(raw);
    const auto s = curve_spread(smooth);
    CurveGroup g;
    g.label = label;
    g.runs = static_cast<int>(members.size());
    g.x = s.x;
    g.mean = s.mean;
    if (band == Band::MinMax) {
      g.low = s.min;
      g.high = s.max;
    } else {
      for (std::size_t i = 0; i < s.x.size(); ++i) {
        g.low.push_back(s.mean[i] - s.std[i]);
        g.high.push_back(s.mean[i] + s.std[i]);
      }
    }
    g.raw_x = r.x;
    g.raw_mean = r.mean;
    out.push_back(std::move(g));
  }
  return out;
}

void write_curve_groups_csv(const std::filesystem::path& path,
                            const std::vector<CurveGroup>& groups, double smoothing, Band band) {
  const bool minmax = band == Band::MinMax;
  CsvWriter out({"group", "smoothing", "step", "mean", minmax ? "min" : "mean_minus_std",
                 minmax ? "max" : "mean_plus_std", "raw_mean"},
                10);
  for (const auto& g : groups)
    for (std::size_t i = 0; i < g.x.size(); ++i) {
      const auto raw = std::lower_bound(g.raw_x.begin(), g.raw_x.end(), g.x[i]);
      const bool has_raw = raw != g.raw_x.end() && *raw == g.x[i];
      out << g.label << smoothing;
      out.number(g.x[i], 12) << g.mean[i] << g.low[i] << g.high[i];
      if (has_raw)
        out << g.raw_mean[static_cast<std::size_t>(raw - g.raw_x.begin())];
      else
        out.empty();
      out.end_row();
    }
  out.write(path);
}

void write_run_metrics_csv(const std::filesystem::path& path, const RunMetrics& metrics) {
  std::vector<double> steps;
  for (const auto& [name, curve] : metrics.columns)
    steps.insert(steps.end(), curve.x.begin(), curve.x.end());
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  std::vector<std::string> header = {"step"};
  for (const auto& [name, curve] : metrics.columns) header.push_back(name);
  CsvWriter out(header, 17);
  // Each column's next unwritten value; the steps of a column increase.
  std::map<std::string, std::size_t> next;
  for (double step : steps) {
    out.number(step, 15);
    for (const auto& [name, curve] : metrics.columns) {
      auto& i = next[name];
      if (i < curve.x.size() && curve.x[i] == step)
        out << curve.y[i++];
      else
        out.empty();
    }
    out.end_row();
  }
  out.write(path);
}

}  // namespace dstudio::analysis
