// Sweeps: grids of training runs as folders. See sweep.h.

// Index of this file:
//   [SECTION] Cells
//   [SECTION] Grids
//   [SECTION] Sweep folders
//   [SECTION] A cell's status
//   [SECTION] Results by group
//   [SECTION] Statistics over settings
//   [SECTION] Notes and LaTeX tables

#include "dstudio/sweep/sweep.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

#include "dstudio/common/atomic_file.h"
#include "dstudio/common/error.h"
#include "dstudio/common/system_info.h"
#include "dstudio/models/training_config.h"
#include "dstudio/models/variant_config.h"

namespace dstudio::sweep {
namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

// ---------------------------------------------------------------------------------------------
// [SECTION] Cells

namespace {

constexpr const char* kFormat = "dstudio-sweep";
constexpr int kVersion = 1;

// `over`'s keys on top of `base` (both objects).
ordered_json merged(ordered_json base, const ordered_json& over) {
  for (auto it = over.begin(); it != over.end(); ++it) base[it.key()] = it.value();
  return base;
}

ordered_json object_at(const ordered_json& j, const char* key, const std::string& where) {
  if (!j.contains(key)) return ordered_json::object();
  if (!j[key].is_object()) throw UsageError(where + "\"" + key + "\" must be an object");
  return j[key];
}

// Letters, digits, '-', '_' and '.' only, so the name is a folder name everywhere.
std::string folder_safe(std::string s) {
  for (auto& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) c = '_';
  return s;
}

std::string variant_label(const Cell& c) {
  return c.variant == "hier" ? "hier-" + c.merger + "-" + c.mixer : c.variant;
}

// Checks the cell as `dstudio train` would (names, ranges, types), and names it.
void finish_cell(Cell& c, int index, const std::string& where) {
  c.index = index;
  try {
    const auto variant =
        models::with_overrides(models::make_variant(c.variant, c.merger, c.mixer), c.config);
    (void)variant;
    const auto training = models::training_from_json(c.training);
    (void)training;
  } catch (const UsageError& e) {
    throw UsageError(where + e.what());
  }
  if (json::parse(c.training).contains("seed"))
    throw UsageError(where + "the seed is a cell's own: give it in \"seeds\" or a cell's \"seed\"");
  std::error_code ec;
  if (!fs::is_regular_file(c.dataset, ec) && !fs::is_directory(c.dataset, ec))
    throw UsageError(where + "dataset " + c.dataset + ": no such file");
  const std::string stem = fs::path(c.dataset).stem().string();
  char number[16];
  std::snprintf(number, sizeof number, "%03d", index);
  c.name = folder_safe(std::string(number) + "-" + variant_label(c) + "-" + stem + "-s" +
                       std::to_string(c.seed));
  std::string overrides;
  if (c.config != "{}") overrides += " config " + c.config;
  if (c.training != "{}") overrides += " training " + c.training;
  c.group = variant_label(c) + " on " + stem + overrides;
}

std::string dataset_path(const ordered_json& v, const fs::path& relative_to,
                         const std::string& where) {
  if (!v.is_string() || v.get<std::string>().empty())
    throw UsageError(where + "a dataset is a path");
  fs::path p = v.get<std::string>();
  if (p.is_relative()) p = relative_to / p;
  return fs::absolute(p).lexically_normal().string();
}

std::uint64_t seed_of(const ordered_json& v, const std::string& where) {
  if ((!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0)) ||
      v.get<std::uint64_t>() > models::kMaxSeed)
    throw UsageError(where + "a seed is a whole number in [0, 2^63 - 1], not " + v.dump());
  return v.get<std::uint64_t>();
}

ordered_json cell_json(const Cell& c) {
  return {{"index", c.index},
          {"name", c.name},
          {"variant", c.variant},
          {"merger", c.merger},
          {"mixer", c.mixer},
          {"dataset", c.dataset},
          {"seed", c.seed},
          {"config", ordered_json::parse(c.config)},
          {"training", ordered_json::parse(c.training)},
          {"group", c.group}};
}

}  // namespace

std::string utc_now() {
  return utc_time_now();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Grids

namespace {

std::vector<Cell> cells_of_grid(const std::string& text, const fs::path& relative_to) {
  ordered_json g;
  try {
    g = ordered_json::parse(text);
  } catch (const json::parse_error& e) {
    throw UsageError(std::string("the grid is not JSON: ") + e.what());
  }
  if (!g.is_object()) throw UsageError("the grid must be a JSON object");
  for (auto it = g.begin(); it != g.end(); ++it) {
    static const char* known[] = {"variants", "datasets", "seeds", "config",
                                  "training", "axes",     "cells", "eval_episodes"};
    if (std::find_if(std::begin(known), std::end(known),
                     [&](const char* k) { return it.key() == k; }) == std::end(known))
      throw UsageError(
          "the grid has no key \"" + it.key() +
          "\"; its keys: variants, datasets, seeds, config, training, axes, cells, eval_episodes");
  }
  if (g.contains("eval_episodes") &&
      !(g["eval_episodes"].is_number_integer() && g["eval_episodes"].get<int>() >= 0 &&
        g["eval_episodes"].get<int>() <= 1000))
    throw UsageError("\"eval_episodes\" must be a whole number in [0, 1000]");
  const auto base_config = object_at(g, "config", "");
  const auto base_training = object_at(g, "training", "");
  std::vector<Cell> cells;

  if (g.contains("variants")) {
    if (!g["variants"].is_array() || g["variants"].empty())
      throw UsageError("\"variants\" must be a list of variants");
    if (!g.contains("datasets") || !g["datasets"].is_array() || g["datasets"].empty())
      throw UsageError("\"datasets\" must list at least one dataset for the variants");
    const ordered_json seeds = g.contains("seeds") ? g["seeds"] : ordered_json::array({0});
    if (!seeds.is_array() || seeds.empty())
      throw UsageError("\"seeds\" must be a list of whole numbers");
    // Extra axes: every combination of their values, in the order given.
    std::vector<std::pair<std::string, ordered_json>> axes;
    const auto axes_given = object_at(g, "axes", "");
    for (const auto& [key, values] : axes_given.items()) {
      if (key.rfind("config.", 0) != 0 && key.rfind("training.", 0) != 0)
        throw UsageError("axes: \"" + key + "\" must be config.<field> or training.<field>");
      if (!values.is_array() || values.empty())
        throw UsageError("axes: \"" + key + "\" must be a list of values");
      axes.emplace_back(key, values);
    }
    std::vector<std::pair<ordered_json, ordered_json>> settings{
        {ordered_json::object(), ordered_json::object()}};
    for (const auto& [key, values] : axes) {
      std::vector<std::pair<ordered_json, ordered_json>> next;
      const bool config = key.rfind("config.", 0) == 0;
      const std::string field = key.substr(config ? 7 : 9);
      for (const auto& s : settings)
        for (const auto& v : values) {
          auto t = s;
          (config ? t.first : t.second)[field] = v;
          next.push_back(std::move(t));
        }
      settings = std::move(next);
    }
    for (const auto& entry : g["variants"]) {
      Cell base;
      ordered_json config = base_config;
      if (entry.is_string()) {
        base.variant = entry.get<std::string>();
      } else if (entry.is_object() && entry.contains("variant") && entry["variant"].is_string()) {
        base.variant = entry["variant"].get<std::string>();
        if (entry.contains("merger")) base.merger = entry["merger"].get<std::string>();
        if (entry.contains("mixer")) base.mixer = entry["mixer"].get<std::string>();
        config = merged(config, object_at(entry, "config", "variants: "));
      } else {
        throw UsageError("variants: each is a name or an object with \"variant\", not " +
                         entry.dump());
      }
      for (const auto& d : g["datasets"])
        for (const auto& [axis_config, axis_training] : settings)
          for (const auto& s : seeds) {
            Cell c = base;
            c.dataset = dataset_path(d, relative_to, "datasets: ");
            c.seed = seed_of(s, "seeds: ");
            c.config = merged(config, axis_config).dump();
            c.training = merged(base_training, axis_training).dump();
            finish_cell(c, static_cast<int>(cells.size()),
                        "cell " + std::to_string(cells.size()) + ": ");
            cells.push_back(std::move(c));
          }
    }
  }
  if (g.contains("cells")) {
    if (!g["cells"].is_array()) throw UsageError("\"cells\" must be a list of cells");
    const auto& listed = g["cells"];
    for (std::size_t k = 0; k < listed.size(); ++k) {
      const auto& e = listed[k];
      const std::string where = "cells[" + std::to_string(k) + "]: ";
      if (!e.is_object() || !e.contains("variant") || !e.contains("dataset"))
        throw UsageError(where + "a cell needs \"variant\" and \"dataset\"");
      Cell c;
      c.variant = e["variant"].get<std::string>();
      if (e.contains("merger")) c.merger = e["merger"].get<std::string>();
      if (e.contains("mixer")) c.mixer = e["mixer"].get<std::string>();
      c.dataset = dataset_path(e["dataset"], relative_to, where);
      c.seed = e.contains("seed") ? seed_of(e["seed"], where) : 0;
      c.config = merged(base_config, object_at(e, "config", where)).dump();
      c.training = merged(base_training, object_at(e, "training", where)).dump();
      finish_cell(c, static_cast<int>(cells.size()), where);
      cells.push_back(std::move(c));
    }
  }
  if (cells.empty())
    throw UsageError("the grid has no cells: give \"variants\" and \"datasets\", or \"cells\"");
  // Two cells that would train the same run are one mistake or the other.
  for (std::size_t a = 0; a < cells.size(); ++a)
    for (std::size_t b = a + 1; b < cells.size(); ++b)
      if (cells[a].group == cells[b].group && cells[a].seed == cells[b].seed)
        throw UsageError("cells " + std::to_string(a) + " and " + std::to_string(b) +
                         " are the same run (" + cells[a].group + ", seed " +
                         std::to_string(cells[a].seed) + ")");
  return cells;
}

}  // namespace

std::vector<Cell> parse_grid(const std::string& text, const fs::path& relative_to) {
  try {
    return cells_of_grid(text, relative_to);
  } catch (const json::exception& e) {
    // A value of the wrong type somewhere ("merger": 3).
    throw UsageError(std::string("the grid: ") + e.what());
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Sweep folders

Sweep create_sweep(const fs::path& dir, const std::vector<Cell>& cells, const std::string& grid) {
  Sweep s;
  s.dir = fs::absolute(dir).lexically_normal();
  s.cells = cells;
  s.grid = grid;
  s.eval_episodes = json::parse(grid).value("eval_episodes", 10);
  std::error_code ec;
  if (fs::exists(s.dir / "sweep.json", ec)) {
    const auto existing = read_sweep(s.dir);
    bool same = existing.cells.size() == cells.size();
    for (std::size_t i = 0; same && i < cells.size(); ++i)
      same = cell_json(existing.cells[i]).dump() == cell_json(cells[i]).dump();
    if (!same) throw UsageError(s.dir.string() + " holds another sweep; choose a new folder");
    return existing;
  }
  fs::create_directories(s.dir / "cells", ec);
  if (ec) throw Error(s.dir.string() + ": cannot make the sweep's folder: " + ec.message());
  for (const auto& c : cells) {
    fs::create_directories(cell_dir(s, c), ec);
    if (ec) throw Error(cell_dir(s, c).string() + ": " + ec.message());
  }
  ordered_json manifest = {{"format", kFormat},
                           {"version", kVersion},
                           {"created", utc_now()},
                           {"grid", ordered_json::parse(grid)},
                           {"cells", ordered_json::array()}};
  for (const auto& c : cells) manifest["cells"].push_back(cell_json(c));
  write_text_atomically(s.dir / "sweep.json", manifest.dump(2) + "\n");
  return s;
}

Sweep read_sweep(const fs::path& dir) {
  Sweep s;
  s.dir = fs::absolute(dir).lexically_normal();
  const auto file = s.dir / "sweep.json";
  std::ifstream in(file);
  if (!in) throw Error(file.string() + ": no sweep here (dstudio sweep create makes one)");
  ordered_json m;
  try {
    m = ordered_json::parse(in);
    if (m.value("format", "") != kFormat) throw Error("not a sweep manifest");
    if (m.value("version", 0) > kVersion)
      throw Error("made by a newer Decision Studio (version " +
                  std::to_string(m.value("version", 0)) + ")");
    s.grid = m.at("grid").dump();
    s.eval_episodes = m.at("grid").value("eval_episodes", 10);
    for (const auto& e : m.at("cells")) {
      Cell c;
      c.index = e.at("index").get<int>();
      c.name = e.at("name").get<std::string>();
      c.variant = e.at("variant").get<std::string>();
      c.merger = e.at("merger").get<std::string>();
      c.mixer = e.at("mixer").get<std::string>();
      c.dataset = e.at("dataset").get<std::string>();
      c.seed = seed_of(e.at("seed"), "cell " + std::to_string(s.cells.size()) + ": ");
      c.config = e.at("config").dump();
      c.training = e.at("training").dump();
      c.group = e.at("group").get<std::string>();
      if (c.index != static_cast<int>(s.cells.size()) || c.name.empty() ||
          c.name.find('/') != std::string::npos)
        throw Error("cell " + std::to_string(s.cells.size()) + " is out of order or misnamed");
      s.cells.push_back(std::move(c));
    }
  } catch (const json::exception& e) {
    throw Error(file.string() + ": damaged sweep manifest: " + e.what());
  } catch (const Error& e) {
    throw Error(file.string() + ": " + e.what());
  }
  return s;
}

fs::path cell_dir(const Sweep& sweep, const Cell& cell) {
  return sweep.dir / "cells" / cell.name;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] A cell's status

const char* to_string(CellState state) {
  switch (state) {
    case CellState::Pending:
      return "pending";
    case CellState::Running:
      return "running";
    case CellState::Finished:
      return "finished";
    case CellState::Failed:
      return "failed";
  }
  return "pending";
}

CellStatus read_cell_status(const Sweep& sweep, const Cell& cell) {
  CellStatus st;
  st.loss = st.score = st.score_std = st.best_score = std::numeric_limits<double>::quiet_NaN();
  std::ifstream in(cell_dir(sweep, cell) / "task.json");
  if (!in) return st;
  try {
    const auto j = json::parse(in);
    const std::string state = j.value("state", "pending");
    st.state = state == "running"    ? CellState::Running
               : state == "finished" ? CellState::Finished
               : state == "failed"   ? CellState::Failed
                                     : CellState::Pending;
    st.step = j.value("step", std::int64_t{0});
    st.total = j.value("total", std::int64_t{0});
    if (j.contains("loss") && j["loss"].is_number()) st.loss = j["loss"].get<double>();
    st.host = j.value("host", "");
    st.pid = j.value("pid", 0LL);
    st.slurm_job = j.value("slurm_job", "");
    st.restarts = j.value("restarts", 0);
    st.error = j.value("error", "");
    const auto number = [&](const char* key) {
      const double nan = std::numeric_limits<double>::quiet_NaN();
      if (!j.contains(key) || j[key].is_null()) return nan;
      if (!j[key].is_number()) {
        st.problems.push_back(std::string("\"") + key + "\" is " + j[key].dump().substr(0, 40) +
                              ", not a number");
        return nan;
      }
      const double v = j[key].get<double>();
      if (!std::isfinite(v) || std::abs(v) > kMaxScore) {
        st.problems.push_back(std::string("\"") + key + "\" is " + j[key].dump() +
                              ", not a score within +-1e6");
        return nan;
      }
      return v;
    };
    st.score = number("score");
    st.score_std = number("score_std");
    st.best_score = number("best_score");
    st.updated = j.value("updated", "");
  } catch (const json::exception& e) {
    st.state = CellState::Failed;
    st.error = (cell_dir(sweep, cell) / "task.json").string() + " is damaged: " + e.what();
  }
  return st;
}

CellStatus result_status(const Sweep& sweep, const Cell& cell, std::vector<std::string>* warnings) {
  auto st = read_cell_status(sweep, cell);
  const std::string who = "cell " + std::to_string(cell.index) + " (" + cell.name + ")";
  if (warnings)
    for (const auto& p : st.problems) warnings->push_back(who + ": task.json: " + p + "; left out");
  std::error_code ec;
  if (st.state == CellState::Finished &&
      !fs::is_regular_file(cell_dir(sweep, cell) / "checkpoint.pt", ec)) {
    st.state = CellState::Failed;
    st.error = "said to be finished, but its checkpoint.pt is missing";
    st.score = st.score_std = st.best_score = std::numeric_limits<double>::quiet_NaN();
    if (warnings) warnings->push_back(who + ": " + st.error + "; counted as failed");
  }
  return st;
}

void write_cell_status(const Sweep& sweep, const Cell& cell, const CellStatus& st) {
  ordered_json j = {
      {"state", to_string(st.state)},
      {"step", st.step},
      {"total", st.total},
      {"loss", std::isfinite(st.loss) ? ordered_json(st.loss) : ordered_json(nullptr)},
      {"host", st.host},
      {"pid", st.pid},
      {"slurm_job", st.slurm_job},
      {"restarts", st.restarts},
      {"error", st.error},
      {"updated", utc_now()}};
  const auto finite = [](double v) {
    return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr);
  };
  j["score"] = finite(st.score);
  j["score_std"] = finite(st.score_std);
  j["best_score"] = finite(st.best_score);
  write_text_atomically(cell_dir(sweep, cell) / "task.json", j.dump(2) + "\n");
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Results by group

namespace {

// Mean and standard deviation over seeds (n - 1; 0 for one value); NaN for none.
std::pair<double, double> mean_std(const std::vector<double>& v) {
  if (v.empty()) return {std::nan(""), std::nan("")};
  double mean = 0.0;
  for (double x : v) mean += x / static_cast<double>(v.size());
  double ss = 0.0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return {mean, v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0.0};
}

std::string latex_escaped(const std::string& text) {
  std::string out;
  for (char ch : text) {
    if (ch == '_' || ch == '&' || ch == '%' || ch == '#' || ch == '$' || ch == '{' || ch == '}')
      out += '\\';
    out += ch;
  }
  return out;
}

}  // namespace

std::vector<GroupResult> collect_groups(const Sweep& sweep, std::vector<std::string>* warnings,
                                        const analysis::BootstrapOptions& bootstrap) {
  // A column is named by its variant and the fields that vary over the sweep; the settings every
  // cell shares say nothing in a table.
  std::map<std::string, json> shared;
  std::set<std::string> varying;
  for (const auto& cell : sweep.cells)
    for (const auto& [part, text] : {std::pair<std::string, std::string>{"config.", cell.config},
                                     {"training.", cell.training}}) {
      const auto fields = json::parse(text);
      for (auto it = fields.begin(); it != fields.end(); ++it) {
        const auto key = part + it.key();
        if (&cell == &sweep.cells.front())
          shared[key] = it.value();
        else if (!shared.count(key) || shared[key] != it.value())
          varying.insert(key);
      }
      if (&cell != &sweep.cells.front())
        for (const auto& [key, value] : shared)
          if (key.rfind(part, 0) == 0 && !fields.contains(key.substr(part.size())))
            varying.insert(key);
    }
  const auto setting_of = [&](const Cell& cell) {
    std::string setting = variant_label(cell);
    for (const auto& [part, text] : {std::pair<std::string, std::string>{"config.", cell.config},
                                     {"training.", cell.training}}) {
      const auto fields = json::parse(text);
      for (auto it = fields.begin(); it != fields.end(); ++it)
        if (varying.count(part + it.key())) setting += " " + it.key() + "=" + it.value().dump();
    }
    return setting;
  };
  std::vector<GroupResult> groups;
  std::vector<std::vector<double>> scores, bests;
  for (const auto& cell : sweep.cells) {
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const GroupResult& g) { return g.group == cell.group; });
    if (it == groups.end()) {
      GroupResult g;
      g.group = cell.group;
      g.dataset = fs::path(cell.dataset).stem().string();
      g.setting = setting_of(cell);
      groups.push_back(g);
      scores.emplace_back();
      bests.emplace_back();
      it = groups.end() - 1;
    }
    const auto k = static_cast<std::size_t>(it - groups.begin());
    ++it->cells;
    const auto st = result_status(sweep, cell, warnings);
    if (st.state != CellState::Finished) continue;
    ++it->finished;
    if (std::isfinite(st.score)) scores[k].push_back(st.score);
    if (std::isfinite(st.best_score)) bests[k].push_back(st.best_score);
  }
  const auto iqm = [&](const std::vector<double>& seeds) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    if (seeds.empty()) return analysis::Interval{nan, nan, nan};
    return analysis::bootstrap_interval({seeds}, analysis::aggregate_iqm, bootstrap);
  };
  for (std::size_t k = 0; k < groups.size(); ++k) {
    std::tie(groups[k].score_mean, groups[k].score_std) = mean_std(scores[k]);
    std::tie(groups[k].best_mean, groups[k].best_std) = mean_std(bests[k]);
    groups[k].scores = scores[k];
    groups[k].best_scores = bests[k];
    groups[k].score_iqm = iqm(scores[k]);
    groups[k].best_iqm = iqm(bests[k]);
  }
  return groups;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Statistics over settings

std::vector<std::string> settings_of(const std::vector<GroupResult>& groups) {
  std::vector<std::string> out;
  for (const auto& g : groups)
    if (std::find(out.begin(), out.end(), g.setting) == out.end()) out.push_back(g.setting);
  return out;
}

analysis::ScoreMatrix score_matrix(const std::vector<GroupResult>& groups,
                                   const std::string& setting, bool best,
                                   std::vector<std::string>* datasets) {
  analysis::ScoreMatrix m;
  if (datasets) datasets->clear();
  for (const auto& g : groups) {
    if (g.setting != setting) continue;
    const auto& runs = best ? g.best_scores : g.scores;
    if (runs.empty()) continue;
    m.push_back(runs);
    if (datasets) datasets->push_back(g.dataset);
  }
  return m;
}

std::vector<SettingAggregate> aggregate_settings(const std::vector<GroupResult>& groups,
                                                 const analysis::BootstrapOptions& bootstrap) {
  std::vector<SettingAggregate> out;
  for (const auto& setting : settings_of(groups)) {
    SettingAggregate a;
    a.setting = setting;
    const auto last = score_matrix(groups, setting, false, &a.datasets);
    const auto best = score_matrix(groups, setting, true);
    if (!last.empty()) a.last = analysis::aggregate_summary(last, bootstrap);
    if (!best.empty()) a.best = analysis::aggregate_summary(best, bootstrap);
    out.push_back(std::move(a));
  }
  return out;
}

std::vector<SettingImprovement> setting_improvements(const std::vector<GroupResult>& groups,
                                                     const analysis::BootstrapOptions& bootstrap) {
  const auto settings = settings_of(groups);
  const auto runs_of = [&](const std::string& setting, const std::string& dataset, bool best) {
    for (const auto& g : groups)
      if (g.setting == setting && g.dataset == dataset) return best ? g.best_scores : g.scores;
    return std::vector<double>{};
  };
  std::vector<SettingImprovement> out;
  for (std::size_t i = 0; i < settings.size(); ++i)
    for (std::size_t j = i + 1; j < settings.size(); ++j) {
      SettingImprovement p;
      p.x = settings[i];
      p.y = settings[j];
      for (const bool best : {false, true}) {
        // The tasks both settings have scores on, in the order the groups list them.
        analysis::ScoreMatrix x, y;
        std::vector<std::string> shared;
        for (const auto& g : groups) {
          if (g.setting != p.x) continue;
          const auto a = runs_of(p.x, g.dataset, best), b = runs_of(p.y, g.dataset, best);
          if (a.empty() || b.empty()) continue;
          x.push_back(a);
          y.push_back(b);
          shared.push_back(g.dataset);
        }
        if (x.empty()) continue;
        (best ? p.best : p.last) = analysis::probability_of_improvement(x, y, bootstrap);
        if (!best) p.datasets = shared;
      }
      out.push_back(std::move(p));
    }
  return out;
}

std::vector<SettingProfile> setting_profiles(const std::vector<GroupResult>& groups, bool best,
                                             int points,
                                             const analysis::BootstrapOptions& bootstrap) {
  analysis::ScoreMatrix pooled;
  for (const auto& setting : settings_of(groups))
    for (auto& task : score_matrix(groups, setting, best)) pooled.push_back(std::move(task));
  std::vector<SettingProfile> out;
  if (pooled.empty()) return out;
  const auto taus = analysis::profile_taus(pooled, points);
  for (const auto& setting : settings_of(groups)) {
    const auto m = score_matrix(groups, setting, best);
    if (m.empty()) continue;
    out.push_back({setting, analysis::performance_profile(m, taus, bootstrap)});
  }
  return out;
}

SweepStatistics sweep_statistics(const std::vector<GroupResult>& groups,
                                 const analysis::BootstrapOptions& bootstrap) {
  SweepStatistics s;
  s.aggregates = aggregate_settings(groups, bootstrap);
  s.improvements = setting_improvements(groups, bootstrap);
  s.profiles = setting_profiles(groups, false, 101, bootstrap);
  s.best_profiles = setting_profiles(groups, true, 101, bootstrap);
  return s;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Notes and LaTeX tables

std::string iqm_note(const std::vector<int>& runs) {
  std::set<int> few;
  for (const int n : runs)
    if (n > 0 && n < 4) few.insert(n);
  if (few.empty()) return {};
  std::string counts;
  std::size_t k = 0;
  for (const int n : few)
    counts += (k++ == 0 ? "" : k == few.size() ? " or " : ", ") + std::to_string(n);
  return "IQM over fewer than 4 runs trims nothing: over " + counts + " it is their mean.";
}

std::string aggregates_note(const std::vector<analysis::AggregateSummary>& shown,
                            const std::vector<int>& more_runs) {
  std::vector<int> runs = more_runs;
  bool one_dataset = false;
  for (const auto& a : shown) {
    runs.push_back(a.runs);
    one_dataset |= a.tasks == 1;
  }
  std::string note = iqm_note(runs);
  if (one_dataset)
    note += std::string(note.empty() ? "" : " ") +
            "The median over one dataset is that dataset's mean.";
  return note;
}

std::string latex_iqm_table(const std::vector<GroupResult>& groups,
                            const std::vector<SettingAggregate>& aggregates) {
  std::vector<std::string> rows;
  for (const auto& g : groups)
    if (std::find(rows.begin(), rows.end(), g.dataset) == rows.end()) rows.push_back(g.dataset);
  const auto columns = settings_of(groups);
  const auto cell = [](const analysis::Interval& i) {
    return std::isfinite(i.estimate) ? analysis::interval_text(i, 1) : std::string("--");
  };
  std::ostringstream t;
  t << "% Normalised scores: the interquartile mean over seeds [95% stratified bootstrap "
       "interval],\n"
       "% of the final policy and of the best periodic evaluation; All: over every dataset and "
       "seed\n% (rliable; Agarwal et al., 2021).\n";
  // What the caption must say when an IQM here is over too few seeds to trim any.
  std::vector<int> runs;
  for (const auto& g : groups)
    runs.insert(runs.end(),
                {static_cast<int>(g.scores.size()), static_cast<int>(g.best_scores.size())});
  for (const auto& a : aggregates)
    for (const auto& summary : {a.last, a.best})
      if (summary) runs.push_back(summary->runs);
  if (const auto note = iqm_note(runs); !note.empty()) t << "% For the caption: " << note << "\n";
  t << "\\begin{tabular}{l" << std::string(2 * columns.size(), 'c') << "}\n\\toprule\n";
  for (const auto& c : columns) t << " & \\multicolumn{2}{c}{" << latex_escaped(c) << "}";
  t << " \\\\\nDataset";
  for (std::size_t k = 0; k < columns.size(); ++k) t << " & final & best";
  t << " \\\\\n\\midrule\n";
  for (const auto& r : rows) {
    t << latex_escaped(r);
    for (const auto& c : columns) {
      const GroupResult* found = nullptr;
      for (const auto& g : groups)
        if (g.dataset == r && g.setting == c) found = &g;
      t << " & " << (found ? cell(found->score_iqm) : "--") << " & "
        << (found ? cell(found->best_iqm) : "--");
    }
    t << " \\\\\n";
  }
  t << "\\midrule\nAll";
  for (const auto& c : columns) {
    const SettingAggregate* a = nullptr;
    for (const auto& x : aggregates)
      if (x.setting == c) a = &x;
    t << " & " << (a && a->last ? cell(a->last->iqm) : "--") << " & "
      << (a && a->best ? cell(a->best->iqm) : "--");
  }
  t << " \\\\\n\\bottomrule\n\\end{tabular}\n";
  return t.str();
}

std::string latex_table(const std::vector<GroupResult>& groups) {
  std::vector<std::string> rows, columns;
  for (const auto& g : groups) {
    if (std::find(rows.begin(), rows.end(), g.dataset) == rows.end()) rows.push_back(g.dataset);
    if (std::find(columns.begin(), columns.end(), g.setting) == columns.end())
      columns.push_back(g.setting);
  }
  const auto find = [&](const std::string& row, const std::string& column) -> const GroupResult* {
    for (const auto& g : groups)
      if (g.dataset == row && g.setting == column) return &g;
    return nullptr;
  };
  std::ostringstream t;
  t << "% Normalised scores: mean $\\pm$ standard deviation over seeds; the best of each row in "
       "bold;\n"
       "% (n of N): only n of the group's N seeds have finished.\n";
  t << "\\begin{tabular}{l" << std::string(columns.size(), 'c') << "}\n\\toprule\nDataset";
  for (const auto& c : columns) t << " & " << latex_escaped(c);
  t << " \\\\\n\\midrule\n";
  for (const auto& r : rows) {
    double best = -std::numeric_limits<double>::infinity();
    for (const auto& c : columns)
      if (const auto* g = find(r, c); g && std::isfinite(g->score_mean))
        best = std::max(best, g->score_mean);
    t << latex_escaped(r);
    for (const auto& c : columns) {
      const auto* g = find(r, c);
      t << " & ";
      if (!g || !std::isfinite(g->score_mean)) {
        t << "--";
        continue;
      }
      char cell[64];
      std::snprintf(cell, sizeof cell, "%.1f $\\pm$ %.1f", g->score_mean, g->score_std);
      if (g->score_mean == best)
        t << "\\textbf{" << cell << "}";
      else
        t << cell;
      if (g->finished < g->cells) t << " (" << g->finished << " of " << g->cells << ")";
    }
    t << " \\\\\n";
  }
  t << "\\bottomrule\n\\end{tabular}\n";
  return t.str();
}

}  // namespace dstudio::sweep
