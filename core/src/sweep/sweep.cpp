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
#include "dstudio/common/json_fields.h"
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

// What a field's check throws (every table throws the same).
[[noreturn]] void refuse(const std::string& message) {
  JsonFields<Cell>::refuse(message);
}

// `over`'s keys on top of `base` (both objects).
ordered_json merged(ordered_json base, const ordered_json& over) {
  for (auto it = over.begin(); it != over.end(); ++it) base[it.key()] = it.value();
  return base;
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

// A grid's dataset, made absolute as from `relative_to`.
std::string dataset_path(const std::string& path, const fs::path& relative_to) {
  fs::path p = path;
  if (p.is_relative()) p = relative_to / p;
  return fs::absolute(p).lexically_normal().string();
}

std::uint64_t seed_of(const ordered_json& v, const std::string& where) {
  if ((!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0)) ||
      v.get<std::uint64_t>() > models::kMaxSeed)
    refuse(where + " is " + v.dump() + ", not a whole number in [0, 2^63 - 1]");
  return v.get<std::uint64_t>();
}

// A member holding a JSON object as text (a cell's overrides): in the file, the object itself.
template <class T>
void object_text(JsonFields<T>& t, const char* key, std::string T::*member) {
  t.computed(
      key, [member](const T& x) { return ordered_json::parse(x.*member); },
      [member](T& x, const ordered_json& v, const std::string& where) {
        if (!v.is_object()) refuse(where + " is not a JSON object");
        x.*member = v.dump();
      });
}

// Where a cell is written: the manifest holds every field; a grid lists cells by their variant,
// dataset, seed and overrides, and variants by their variant, merger, mixer and configuration.
enum class CellIn { Manifest, GridCells, GridVariants };

JsonFields<Cell> cell_fields(CellIn in) {
  const bool manifest = in == CellIn::Manifest, variant = in == CellIn::GridVariants;
  JsonFields<Cell> t;
  if (manifest) t.field("index", &Cell::index).required().field("name", &Cell::name).required();
  t.field("variant", &Cell::variant)
      .required()
      .field("merger", &Cell::merger)
      .required_if(manifest)
      .field("mixer", &Cell::mixer)
      .required_if(manifest);
  if (!variant) {
    t.field("dataset", &Cell::dataset).required();
    if (!manifest)
      t.checked([](const Cell& c, const std::string& where) {
        if (c.dataset.empty()) refuse(where + " is empty, not a path");
      });
    t.computed(
         "seed", [](const Cell& c) { return ordered_json(c.seed); },
         [](Cell& c, const ordered_json& v, const std::string& where) {
           c.seed = seed_of(v, where);
         })
        .required_if(manifest);
  }
  object_text(t, "config", &Cell::config);
  t.required_if(manifest);
  if (!variant) {
    object_text(t, "training", &Cell::training);
    t.required_if(manifest);
  }
  if (manifest) t.field("group", &Cell::group).required();
  return t;
}

const JsonFields<Cell>& manifest_cell_fields() {
  static const auto fields = cell_fields(CellIn::Manifest);
  return fields;
}

}  // namespace

std::string utc_now() {
  return utc_time_now();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Grids

namespace {

// A grid as written, before its product is taken.
struct Grid {
  std::vector<Cell> variants;  // each with its variant, merger, mixer and configuration
  std::vector<std::string> datasets;
  std::vector<std::uint64_t> seeds{0};
  std::string config = "{}", training = "{}";
  std::vector<std::pair<std::string, ordered_json>> axes;  // "config.<field>": values, in order
  std::vector<Cell> cells;
  int eval_episodes = 10;
};

// A grid as a user writes it refuses a key it does not know (a misspelt one must not pass
// unnoticed); as a manifest keeps it, a later studio's addition is left alone.
JsonFields<Grid> grid_table(bool as_written) {
  static const auto variant_fields = cell_fields(CellIn::GridVariants);
  static const auto listed_fields = cell_fields(CellIn::GridCells);
  JsonFields<Grid> t;
  t.computed(
       "variants",
       [](const Grid& g) {
         auto out = ordered_json::array();
         for (const auto& v : g.variants) out.push_back(variant_fields.write(v));
         return out;
       },
       [](Grid& g, const ordered_json& v, const std::string& where) {
         if (!v.is_array() || v.empty()) refuse(where + " must be a list of variants");
         for (std::size_t i = 0; i < v.size(); ++i) {
           const auto at = where + "[" + std::to_string(i) + "]";
           if (v[i].is_string()) {
             Cell c;
             c.variant = v[i].get<std::string>();
             g.variants.push_back(std::move(c));
           } else if (v[i].is_object()) {
             try {
               g.variants.push_back(variant_fields.read(v[i], at));
             } catch (const Error& e) {
               refuse(e.what());
             }
           } else {
             refuse(at + " is " + v[i].dump() + ", not a variant's name or an object naming one");
           }
         }
       })
      // Datasets and seeds span the product with the variants; without them, nothing.
      .field("datasets", &Grid::datasets)
      .checked([](const Grid& g, const std::string& where) {
        if (g.variants.empty()) return;
        if (g.datasets.empty()) refuse(where + " must list at least one dataset for the variants");
        for (std::size_t i = 0; i < g.datasets.size(); ++i)
          if (g.datasets[i].empty())
            refuse(where + "[" + std::to_string(i) + "] is empty, not a path");
      })
      .computed(
          "seeds", [](const Grid& g) { return ordered_json(g.seeds); },
          [](Grid& g, const ordered_json& v, const std::string& where) {
            if (!v.is_array() || (v.empty() && !g.variants.empty()))
              refuse(where + " must be a list of whole numbers");
            g.seeds.clear();
            for (std::size_t i = 0; i < v.size(); ++i)
              g.seeds.push_back(seed_of(v[i], where + "[" + std::to_string(i) + "]"));
          });
  object_text(t, "config", &Grid::config);
  object_text(t, "training", &Grid::training);
  t.computed(
       "axes",
       [](const Grid& g) {
         auto out = ordered_json::object();
         for (const auto& [key, values] : g.axes) out[key] = values;
         return out;
       },
       [](Grid& g, const ordered_json& v, const std::string& where) {
         if (!v.is_object()) refuse(where + " is not a JSON object");
         for (const auto& [key, values] : v.items()) {
           if (!key.starts_with("config.") && !key.starts_with("training."))
             refuse(where + ": '" + key + "' is not config.<field> or training.<field>");
           if (!values.is_array() || values.empty())
             refuse(where + "." + key + " must be a list of values");
           g.axes.emplace_back(key, values);
         }
       })
      .objects("cells", &Grid::cells, listed_fields)
      .field("eval_episodes", &Grid::eval_episodes, {0, 1000})
      .errors_as<UsageError>();
  if (as_written) t.refuse_unknown_keys();
  return t;
}

const JsonFields<Grid>& grid_fields() {
  static const auto fields = grid_table(true);
  return fields;
}

const JsonFields<Grid>& kept_grid_fields() {
  static const auto fields = grid_table(false);
  return fields;
}

Grid read_grid(const std::string& text) {
  ordered_json g;
  try {
    g = ordered_json::parse(text);
  } catch (const json::parse_error& e) {
    throw UsageError(std::string("the grid is not JSON: ") + e.what());
  }
  if (!g.is_object()) throw UsageError("the grid must be a JSON object");
  return grid_fields().read(g, "the grid");
}

std::vector<Cell> cells_of_grid(const Grid& g, const fs::path& relative_to) {
  const auto base_config = ordered_json::parse(g.config);
  const auto base_training = ordered_json::parse(g.training);
  std::vector<Cell> cells;
  if (!g.variants.empty()) {
    // Extra axes: every combination of their values, in the order given.
    std::vector<std::pair<ordered_json, ordered_json>> settings{
        {ordered_json::object(), ordered_json::object()}};
    for (const auto& [key, values] : g.axes) {
      std::vector<std::pair<ordered_json, ordered_json>> next;
      const bool config = key.starts_with("config.");
      const std::string field = key.substr(config ? 7 : 9);
      for (const auto& s : settings)
        for (const auto& v : values) {
          auto t = s;
          (config ? t.first : t.second)[field] = v;
          next.push_back(std::move(t));
        }
      settings = std::move(next);
    }
    for (const auto& base : g.variants) {
      const ordered_json config = merged(base_config, ordered_json::parse(base.config));
      for (const auto& d : g.datasets)
        for (const auto& [axis_config, axis_training] : settings)
          for (const auto s : g.seeds) {
            Cell c = base;
            c.dataset = dataset_path(d, relative_to);
            c.seed = s;
            c.config = merged(config, axis_config).dump();
            c.training = merged(base_training, axis_training).dump();
            finish_cell(c, static_cast<int>(cells.size()),
                        "cell " + std::to_string(cells.size()) + ": ");
            cells.push_back(std::move(c));
          }
    }
  }
  for (std::size_t k = 0; k < g.cells.size(); ++k) {
    Cell c = g.cells[k];
    c.dataset = dataset_path(c.dataset, relative_to);
    c.config = merged(base_config, ordered_json::parse(c.config)).dump();
    c.training = merged(base_training, ordered_json::parse(c.training)).dump();
    finish_cell(c, static_cast<int>(cells.size()), "cells[" + std::to_string(k) + "]: ");
    cells.push_back(std::move(c));
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
  return cells_of_grid(read_grid(text), relative_to);
}

int grid_eval_episodes(const std::string& text) {
  return read_grid(text).eval_episodes;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Sweep folders

namespace {

const JsonFields<Sweep>& manifest_fields() {
  static const auto fields = [] {
    JsonFields<Sweep> t;
    t.constant("format", kFormat)
        .computed(
            "version", [](const Sweep&) { return ordered_json(kVersion); },
            [](Sweep&, const ordered_json& v, const std::string& where) {
              if (!v.is_number()) refuse(where + " is not a number");
              // Before the cells: a later version's may mean something else.
              if (v > kVersion)
                refuse(where + " is " + v.dump() + ": made by a newer Decision Studio");
            })
        .field("created", &Sweep::created)
        .computed(
            "grid", [](const Sweep& s) { return ordered_json::parse(s.grid); },
            [](Sweep& s, const ordered_json& v, const std::string& where) {
              try {
                s.eval_episodes = kept_grid_fields().read(v, where).eval_episodes;
              } catch (const Error& e) {
                refuse(e.what());
              }
              s.grid = v.dump();
            })
        .required()
        .objects("cells", &Sweep::cells, manifest_cell_fields())
        .required()
        .checked([](const Sweep& s, const std::string& where) {
          for (std::size_t i = 0; i < s.cells.size(); ++i) {
            const auto& c = s.cells[i];
            if (c.index != static_cast<int>(i) || c.name.empty() ||
                c.name.find('/') != std::string::npos || c.name == "." || c.name == "..")
              refuse(where + "[" + std::to_string(i) + "] is out of order or misnamed");
          }
        });
    return t;
  }();
  return fields;
}

}  // namespace

std::string to_json(const Sweep& sweep) {
  return manifest_fields().write(sweep).dump(2) + "\n";
}

Sweep create_sweep(const fs::path& dir, const std::vector<Cell>& cells, const std::string& grid) {
  Sweep s;
  s.dir = fs::absolute(dir).lexically_normal();
  s.cells = cells;
  s.grid = grid;
  s.eval_episodes = grid_eval_episodes(grid);
  std::error_code ec;
  if (fs::exists(s.dir / "sweep.json", ec)) {
    const auto existing = read_sweep(s.dir);
    bool same = existing.cells.size() == cells.size();
    for (std::size_t i = 0; same && i < cells.size(); ++i)
      same =
          manifest_cell_fields().write(existing.cells[i]) == manifest_cell_fields().write(cells[i]);
    if (!same) throw UsageError(s.dir.string() + " holds another sweep; choose a new folder");
    return existing;
  }
  fs::create_directories(s.dir / "cells", ec);
  if (ec) throw Error(s.dir.string() + ": cannot make the sweep's folder: " + ec.message());
  for (const auto& c : cells) {
    fs::create_directories(cell_dir(s, c), ec);
    if (ec) throw Error(cell_dir(s, c).string() + ": " + ec.message());
  }
  s.created = utc_now();
  write_text_atomically(s.dir / "sweep.json", to_json(s));
  return s;
}

Sweep read_sweep(const fs::path& dir) {
  const auto at = fs::absolute(dir).lexically_normal();
  const auto file = at / "sweep.json";
  std::ifstream in(file);
  if (!in) throw Error(file.string() + ": no sweep here (dstudio sweep create makes one)");
  ordered_json m;
  try {
    m = ordered_json::parse(in);
  } catch (const json::exception& e) {
    throw Error(file.string() + ": damaged sweep manifest: " + e.what());
  }
  try {
    Sweep s = manifest_fields().read(m, file.string());
    s.dir = at;
    return s;
  } catch (const Error& e) {
    // A grid refused in it is a damaged file, not a wrong request.
    throw Error(e.what());
  }
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

namespace {

// A number written as null when it is not finite (a loss before any step, a score not taken).
ordered_json finite_or_null(double v) {
  return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr);
}

// A score of the cell: task.json is a file anyone can edit, so a value that is not a number within
// kMaxScore is left out (NaN) and said in `problems` rather than refused.
void score(JsonFields<CellStatus>& t, const char* key, double CellStatus::*member) {
  t.computed(
      key, [member](const CellStatus& st) { return finite_or_null(st.*member); },
      [key, member](CellStatus& st, const ordered_json& v, const std::string&) {
        st.*member = std::numeric_limits<double>::quiet_NaN();
        if (v.is_null()) return;
        if (!v.is_number()) {
          st.problems.push_back(std::string(key) + " is " + v.dump().substr(0, 40) +
                                ", not a number");
          return;
        }
        const double d = v.get<double>();
        if (!std::isfinite(d) || std::abs(d) > kMaxScore) {
          st.problems.push_back(std::string(key) + " is " + v.dump() +
                                ", not a score within +-1e6");
          return;
        }
        st.*member = d;
      });
}

const JsonFields<CellStatus>& status_fields() {
  static const auto fields = [] {
    using S = CellStatus;
    JsonFields<S> t;
    t.computed(
         "state", [](const S& st) { return ordered_json(to_string(st.state)); },
         [](S& st, const ordered_json& v, const std::string& where) {
           if (!v.is_string()) refuse(where + " is not a text");
           // A state this studio does not know is one it has yet to start.
           st.state = CellState::Pending;
           for (const auto state : {CellState::Running, CellState::Finished, CellState::Failed})
             if (v == to_string(state)) st.state = state;
         })
        .field("step", &S::step)
        .field("total", &S::total)
        .computed(
            "loss", [](const S& st) { return finite_or_null(st.loss); },
            [](S& st, const ordered_json& v, const std::string&) {
              st.loss = v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN();
            })
        .field("host", &S::host)
        .field("pid", &S::pid)
        .field("slurm_job", &S::slurm_job)
        .field("restarts", &S::restarts)
        .field("error", &S::error)
        .field("updated", &S::updated);
    score(t, "score", &S::score);
    score(t, "score_std", &S::score_std);
    score(t, "best_score", &S::best_score);
    return t;
  }();
  return fields;
}

}  // namespace

std::string to_json(const CellStatus& status) {
  return status_fields().write(status).dump(2) + "\n";
}

CellStatus read_cell_status(const Sweep& sweep, const Cell& cell) {
  CellStatus st;
  st.loss = st.score = st.score_std = st.best_score = std::numeric_limits<double>::quiet_NaN();
  const auto path = cell_dir(sweep, cell) / "task.json";
  std::ifstream in(path);
  if (!in) return st;
  const std::string damaged = path.string() + " is damaged";
  try {
    return status_fields().read(ordered_json::parse(in), damaged, st);
  } catch (const json::exception& e) {
    st.error = damaged + ": " + e.what();
  } catch (const Error& e) {
    st.error = e.what();
  }
  st.state = CellState::Failed;
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
  CellStatus now = st;
  now.updated = utc_now();
  write_text_atomically(cell_dir(sweep, cell) / "task.json", to_json(now));
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
