// Figure recipes. See figure_recipe.h.

// Index of this file:
//   [SECTION] Reading JSON fields
//   [SECTION] Paths beside the recipe
//   [SECTION] Writing and parsing JSON
//   [SECTION] Recipe files
//   [SECTION] Checking inputs

#include "dstudio/common/figure_recipe.h"

#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>

#include "dstudio/common/atomic_file.h"
#include "dstudio/common/read_file.h"
#include "dstudio/common/system_info.h"
#include "dstudio/data/dataset_io.h"

namespace dstudio {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

// ---------------------------------------------------------------------------------------------
// [SECTION] Reading JSON fields

constexpr std::string_view kHashPrefix = "xxh3-128:";
// A recipe is a page of JSON; anything this large is not one.
constexpr std::uint64_t kMaxRecipeBytes = std::uint64_t{16} << 20;

bool is_hash(const std::string& text) {
  if (text.size() != kHashPrefix.size() + 32 || !text.starts_with(kHashPrefix)) return false;
  for (std::size_t i = kHashPrefix.size(); i < text.size(); ++i) {
    const char c = text[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

ordered_json text_or_null(const std::string& text) {
  return text.empty() ? ordered_json(nullptr) : ordered_json(text);
}

// What a JSON value is, for "expected a number, found a string".
std::string kind_of(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    case json::value_t::number_float:
      return "a number";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "a list";
    case json::value_t::object:
      return "an object";
    default:
      return "something else";
  }
}

// Reads the fields of one JSON object, each problem naming the file and the key's full path.
class Fields {
 public:
  Fields(const json& object, std::string where, std::string prefix)
      : object_(object), where_(std::move(where)), prefix_(std::move(prefix)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& problem) const {
    throw FigureRecipeError(where_ + ": '" + prefix_ + key + "': " + problem);
  }
  [[nodiscard]] std::string path(const std::string& key) const { return prefix_ + key; }
  [[nodiscard]] const std::string& where() const { return where_; }

  // The value of `key`; null when it is absent and not required.
  [[nodiscard]] const json& value(const std::string& key, bool required) const {
    static const json null;
    const auto it = object_.find(key);
    if (it == object_.end()) {
      if (required) fail(key, "missing");
      return null;
    }
    return *it;
  }

  [[nodiscard]] std::string text(const std::string& key, bool required = false) const {
    const json& v = value(key, required);
    if (v.is_null() && !required) return {};
    if (!v.is_string()) fail(key, "expected a string, found " + kind_of(v));
    return v.get<std::string>();
  }
  // A content hash, or "" when absent.
  [[nodiscard]] std::string hash(const std::string& key) const {
    std::string h = text(key);
    if (!h.empty() && !is_hash(h))
      fail(key, "\"" + h + "\" is not a content hash (\"xxh3-128:\" and 32 hexadecimal digits)");
    return h;
  }
  [[nodiscard]] std::optional<std::int64_t> integer(const std::string& key) const {
    const json& v = value(key, false);
    if (v.is_null()) return std::nullopt;
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t{INT64_MAX})
      fail(key, "too large");
    if (!v.is_number_integer()) fail(key, "expected an integer, found " + kind_of(v));
    return v.get<std::int64_t>();
  }
  [[nodiscard]] std::optional<double> number(const std::string& key) const {
    const json& v = value(key, false);
    if (v.is_null()) return std::nullopt;
    if (!v.is_number()) fail(key, "expected a number, found " + kind_of(v));
    return v.get<double>();
  }
  [[nodiscard]] std::optional<bool> boolean(const std::string& key) const {
    const json& v = value(key, false);
    if (v.is_null()) return std::nullopt;
    if (!v.is_boolean()) fail(key, "expected true or false, found " + kind_of(v));
    return v.get<bool>();
  }
  // A list (absent: empty); `each` reads one element, named "key[i]".
  template <typename Each>
  void list(const std::string& key, Each each) const {
    const json& v = value(key, false);
    if (v.is_null()) return;
    if (!v.is_array()) fail(key, "expected a list, found " + kind_of(v));
    for (std::size_t i = 0; i < v.size(); ++i) each(v[i], key + "[" + std::to_string(i) + "]");
  }
  [[nodiscard]] Fields object(const json& v, const std::string& key) const {
    if (!v.is_object()) fail(key, "expected an object, found " + kind_of(v));
    return {v, where_, prefix_ + key + "."};
  }

 private:
  const json& object_;
  std::string where_, prefix_;
};

std::string number_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

// A size in inches or points: finite and within what a page could hold.
double measure(const Fields& f, const std::string& key, double fallback, double low, double high,
               bool low_inclusive) {
  const double v = f.number(key).value_or(fallback);
  if (!std::isfinite(v) || v > high || (low_inclusive ? v < low : v <= low))
    f.fail(key, number_text(v) + " is outside " + (low_inclusive ? "[" : "(") + number_text(low) +
                    ", " + number_text(high) + "]");
  return v;
}

RecipeFigure parse_figure(const Fields& f) {
  RecipeFigure out;
  out.name = f.text("name", true);
  if (out.name.empty() || out.name.find('/') != std::string::npos || out.name.front() == '.')
    f.fail("name", "\"" + out.name + "\" is not a file name");
  out.preset = f.text("preset");
  out.width = measure(f, "width", out.width, 0, 40, false);
  out.height = measure(f, "height", out.height, 0, 40, true);
  out.font = measure(f, "font", out.font, 0, 72, false);
  out.axis_font = measure(f, "axis_font", out.axis_font, 0, 72, true);
  out.tick_font = measure(f, "tick_font", out.tick_font, 0, 72, true);
  out.line_width = measure(f, "line_width", out.line_width, 0, 20, false);
  if (const auto family = f.text("font_family"); !family.empty()) out.font_family = family;
  const auto dpi = f.integer("dpi").value_or(out.dpi);
  if (dpi < 1 || dpi > 2400) f.fail("dpi", std::to_string(dpi) + " is outside [1, 2400]");
  out.dpi = static_cast<int>(dpi);
  f.list("formats", [&](const json& v, const std::string& key) {
    if (!v.is_string() || (v != "pdf" && v != "svg" && v != "png" && v != "mp4"))
      f.fail(key,
             "expected \"pdf\", \"svg\", \"png\" or (a viewer clip) \"mp4\", found " + v.dump());
    out.formats.push_back(v.get<std::string>());
  });
  out.show_title = f.boolean("show_title").value_or(true);
  out.title = f.text("title");
  out.x_title = f.text("x_title");
  out.y_title = f.text("y_title");
  return out;
}

// A path named together with its hash: both or neither.
void paired(const Fields& f, const std::string& path_key, const std::string& path,
            const std::string& hash_key, const std::string& hash) {
  if (!path.empty() && hash.empty()) f.fail(hash_key, "missing for " + path_key + " " + path);
  if (path.empty() && !hash.empty()) f.fail(path_key, "missing for " + hash_key + " " + hash);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Paths beside the recipe

// Absolute and normal, without a trailing separator.
fs::path normal_absolute(const fs::path& path) {
  fs::path p = fs::absolute(path).lexically_normal();
  if (p.filename().empty() && p != p.root_path()) p = p.parent_path();
  return p;
}

// An absolute `path` as a recipe in `folder` names it: "./<tail>" in `folder` or below, "." for the
// folder itself; any other path as it is.
std::string written_path(const std::string& path, const fs::path& folder) {
  if (path.empty() || !fs::path(path).is_absolute()) return path;
  const fs::path rel = normal_absolute(path).lexically_relative(folder);
  if (rel.empty() || *rel.begin() == "..") return path;
  if (rel == ".") return ".";
  return "./" + rel.generic_string();
}

// A recipe's `path` read in `folder`: a relative one made absolute there.
std::string read_path(const std::string& path, const fs::path& folder) {
  if (path.empty() || fs::path(path).is_absolute()) return path;
  return normal_absolute(folder / path).string();
}

// Where an absolute `recorded` path may be under `root`: its tails, longest first.
std::vector<fs::path> tails_under(const fs::path& root, const std::string& recorded) {
  std::vector<fs::path> parts;
  for (const auto& part : fs::path(recorded).relative_path()) parts.push_back(part);
  std::vector<fs::path> out;
  for (std::size_t first = 0; first < parts.size(); ++first) {
    fs::path p = root;
    for (std::size_t k = first; k < parts.size(); ++k) p /= parts[k];
    out.push_back(normal_absolute(p));
  }
  return out;
}

std::string fingerprint_or_empty(const fs::path& path) {
  data::LoadOptions options;
  options.infos = false;
  options.isolate = true;
  try {
    return data::load_dataset(path.string(), options).fingerprint;
  } catch (const Error&) {
    return {};
  }
}

// `path` below the folder `folder` (or the folder itself): its tail there; empty when not below.
std::optional<fs::path> tail_below(const fs::path& path, const fs::path& folder) {
  const fs::path rel = path.lexically_relative(folder);
  if (rel.empty() || *rel.begin() == "..") return std::nullopt;
  return rel;
}

// `now` without its last components `tail`: the folder that holds it as `tail` ("." : `now`);
// nullopt when `now` does not end with `tail`.
std::optional<fs::path> without_tail(const fs::path& now, const fs::path& tail) {
  fs::path p = now;
  std::vector<fs::path> parts;
  for (const auto& part : tail)
    if (part != ".") parts.push_back(part);
  for (auto part = parts.rbegin(); part != parts.rend(); ++part) {
    if (p.filename() != *part) return std::nullopt;
    p = p.parent_path();
  }
  return p;
}

// Every input `written` names by an absolute path, looked for under `roots` (read_figure_recipe):
// `r` (the recipe read, its paths absolute) takes those found, and the options naming their
// folders follow them.
void look_under_roots(const FigureRecipe& written, FigureRecipe& r,
                      const std::vector<fs::path>& roots, std::vector<RecipeInputFound>* found) {
  struct Moved {
    fs::path recorded, now;
  };
  std::vector<Moved> moved;
  const auto note = [&](const std::string& what, const std::string& recorded,
                        const std::string& now) {
    if (found && recorded != now) found->push_back({what, recorded, now});
  };
  // The first candidate under a root that `fits`, or "" for none.
  const auto look = [&](const std::string& recorded, const auto& fits) -> std::string {
    if (recorded.empty() || !fs::path(recorded).is_absolute()) return {};
    std::error_code ec;
    for (const auto& root : roots)
      for (const auto& candidate : tails_under(normal_absolute(root), recorded))
        if (fs::is_regular_file(candidate, ec) && fits(candidate)) return candidate.string();
    return {};
  };
  const auto with_hash = [&](const std::string& what, const std::string& recorded,
                             std::string& path, const std::string& hash) {
    const std::string there = look(recorded, [&](const fs::path& candidate) {
      try {
        return file_content_hash(candidate) == hash;
      } catch (const FigureRecipeError&) {
        return false;
      }
    });
    if (there.empty()) return;
    moved.push_back({normal_absolute(recorded), there});
    note(what, recorded, there);
    path = there;
  };
  with_hash("checkpoint", written.checkpoint, r.checkpoint, written.checkpoint_hash);
  with_hash("compared checkpoint", written.compare, r.compare, written.compare_hash);
  for (std::size_t i = 0; i < written.inputs.size(); ++i)
    with_hash("--" + written.inputs[i].option + " input", written.inputs[i].path, r.inputs[i].path,
              written.inputs[i].hash);
  // A dataset unreadable when the recipe was made has no fingerprint to find it by.
  if (!written.dataset_fingerprint.empty()) {
    const std::string there = look(written.dataset, [&](const fs::path& candidate) {
      return fingerprint_or_empty(candidate) == written.dataset_fingerprint;
    });
    if (!there.empty()) {
      note("dataset", written.dataset, there);
      r.dataset = there;
    }
  }
  // An option naming a file found elsewhere, or a folder holding one, follows it; every input in
  // that folder is then read from the new one, so that what the analysis reads there is checked.
  for (auto& [key, value] : r.options) {
    const auto it = written.options.find(key);
    if (it == written.options.end() || !fs::path(it->second).is_absolute()) continue;
    const fs::path recorded = normal_absolute(it->second);
    for (const auto& m : moved) {
      const auto tail = tail_below(m.recorded, recorded);
      const auto folder = tail ? without_tail(m.now, *tail) : std::nullopt;
      if (!folder) continue;
      value = folder->string();
      note("option --" + key, it->second, value);
      for (std::size_t i = 0; i < written.inputs.size(); ++i) {
        const auto& in = written.inputs[i].path;
        if (!fs::path(in).is_absolute()) continue;
        if (const auto below = tail_below(normal_absolute(in), recorded)) {
          const std::string now = normal_absolute(*folder / *below).string();
          if (now != r.inputs[i].path) {
            note("--" + written.inputs[i].option + " input", in, now);
            r.inputs[i].path = now;
          }
        }
      }
      break;
    }
  }
}

std::string digest_text(const XXH128_hash_t& h) {
  char text[64];
  std::snprintf(text, sizeof text, "xxh3-128:%016llx%016llx",
                static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return text;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] Writing and parsing JSON

std::string to_json(const FigureRecipe& r) {
  ordered_json options = ordered_json::object();
  for (const auto& [key, value] : r.options) options[key] = value;
  ordered_json inputs = ordered_json::array();
  for (const auto& i : r.inputs)
    inputs.push_back({{"option", i.option}, {"path", i.path}, {"hash", i.hash}});
  ordered_json bookmarks = ordered_json::array();
  for (const auto& b : r.bookmarks)
    bookmarks.push_back({{"step", b.step}, {"name", b.name}, {"note", b.note}});
  const auto& f = r.figure;
  const ordered_json figure = {{"name", f.name},
                               {"preset", text_or_null(f.preset)},
                               {"width", f.width},
                               {"height", f.height},
                               {"font", f.font},
                               {"axis_font", f.axis_font},
                               {"tick_font", f.tick_font},
                               {"line_width", f.line_width},
                               {"font_family", f.font_family},
                               {"dpi", f.dpi},
                               {"formats", f.formats},
                               {"show_title", f.show_title},
                               {"title", text_or_null(f.title)},
                               {"x_title", text_or_null(f.x_title)},
                               {"y_title", text_or_null(f.y_title)}};
  const auto optional = [](const auto& v) { return v ? ordered_json(*v) : ordered_json(nullptr); };
  const ordered_json j = {{"format", r.format},
                          {"version", r.version},
                          {"analysis", r.analysis},
                          {"options", options},
                          {"checkpoint", text_or_null(r.checkpoint)},
                          {"checkpoint_hash", text_or_null(r.checkpoint_hash)},
                          {"compare", text_or_null(r.compare)},
                          {"compare_hash", text_or_null(r.compare_hash)},
                          {"dataset", text_or_null(r.dataset)},
                          {"dataset_fingerprint", text_or_null(r.dataset_fingerprint)},
                          {"dataset_given", r.dataset_given},
                          {"inputs", inputs},
                          {"seeds", r.seeds},
                          {"episode", optional(r.episode)},
                          {"step", optional(r.step)},
                          {"target", optional(r.target)},
                          {"zeroing", text_or_null(r.zeroing)},
                          {"interventions", r.interventions},
                          {"bookmarks", bookmarks},
                          {"figure", figure},
                          {"outputs", r.outputs},
                          {"studio_version", r.studio_version},
                          {"created", text_or_null(r.created)}};
  return j.dump(2) + "\n";
}

FigureRecipe parse_figure_recipe(const std::string& text, const std::string& where) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw FigureRecipeError(where + ": not JSON (" + e.what() + ")");
  }
  if (!j.is_object())
    throw FigureRecipeError(where + ": not a figure recipe (a JSON object), found " + kind_of(j));
  const Fields f(j, where, "");
  FigureRecipe r;
  // What the file is, first: a later version's fields may mean something else.
  r.format = f.text("format", true);
  if (r.format != kFigureRecipeFormat)
    f.fail("format", "\"" + r.format + "\" is not \"" + kFigureRecipeFormat + "\"");
  const auto version = f.integer("version");
  if (!version) f.fail("version", "missing");
  if (*version > kFigureRecipeVersion)
    f.fail("version", std::to_string(*version) + " is newer than this studio reads (" +
                          std::to_string(kFigureRecipeVersion) + "); it was written by " +
                          (f.text("studio_version").empty() ? std::string("a later studio")
                                                            : f.text("studio_version")));
  if (*version < 1) f.fail("version", std::to_string(*version) + " is not a version");
  r.version = static_cast<int>(*version);

  r.analysis = f.text("analysis", true);
  if (r.analysis.empty()) f.fail("analysis", "empty");
  if (const json& o = f.value("options", false); !o.is_null()) {
    if (!o.is_object()) f.fail("options", "expected an object, found " + kind_of(o));
    for (const auto& [key, value] : o.items()) {
      if (key.empty() || key.starts_with("-"))
        f.fail("options", "\"" + key + "\" is not an option's name (without its dashes)");
      if (!value.is_string())
        f.fail("options." + key, "expected the value as text (\"16\"), found " + kind_of(value));
      r.options[key] = value.get<std::string>();
    }
  }
  r.checkpoint = f.text("checkpoint");
  r.checkpoint_hash = f.hash("checkpoint_hash");
  paired(f, "checkpoint", r.checkpoint, "checkpoint_hash", r.checkpoint_hash);
  r.compare = f.text("compare");
  r.compare_hash = f.hash("compare_hash");
  paired(f, "compare", r.compare, "compare_hash", r.compare_hash);
  r.dataset = f.text("dataset");
  r.dataset_fingerprint = f.hash("dataset_fingerprint");
  // A dataset without a fingerprint could not be read when the recipe was made.
  if (r.dataset.empty() && !r.dataset_fingerprint.empty())
    f.fail("dataset", "missing for dataset_fingerprint " + r.dataset_fingerprint);
  r.dataset_given = f.boolean("dataset_given").value_or(false);
  f.list("inputs", [&](const json& v, const std::string& key) {
    const Fields i = f.object(v, key);
    RecipeInput in{i.text("option", true), i.text("path", true), i.hash("hash")};
    if (in.path.empty()) i.fail("path", "empty");
    if (in.hash.empty()) i.fail("hash", "missing");
    r.inputs.push_back(std::move(in));
  });
  f.list("seeds", [&](const json& v, const std::string& key) {
    if (!v.is_number_integer() ||
        (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t{INT64_MAX}))
      f.fail(key, "expected an integer, found " + kind_of(v));
    r.seeds.push_back(v.get<std::int64_t>());
  });
  r.episode = f.integer("episode");
  r.step = f.integer("step");
  r.target = f.number("target");
  r.zeroing = f.text("zeroing");
  f.list("interventions", [&](const json& v, const std::string& key) {
    if (!v.is_string()) f.fail(key, "expected a string, found " + kind_of(v));
    r.interventions.push_back(v.get<std::string>());
  });
  f.list("bookmarks", [&](const json& v, const std::string& key) {
    const Fields b = f.object(v, key);
    const auto step = b.integer("step");
    if (!step) b.fail("step", "missing");
    r.bookmarks.push_back({*step, b.text("name"), b.text("note")});
  });
  r.figure = parse_figure(f.object(f.value("figure", true), "figure"));
  f.list("outputs", [&](const json& v, const std::string& key) {
    if (!v.is_string()) f.fail(key, "expected a file name, found " + kind_of(v));
    const std::string name = v.get<std::string>();
    // Beside the recipe: a recipe cannot point at files elsewhere.
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
      f.fail(key, "\"" + name + "\" is not a file name beside the recipe");
    r.outputs.push_back(name);
  });
  r.studio_version = f.text("studio_version");
  r.created = f.text("created");
  return r;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Recipe files

FigureRecipe relative_to_folder(const FigureRecipe& recipe, const fs::path& folder) {
  const fs::path in = normal_absolute(folder);
  FigureRecipe r = recipe;
  r.version = kFigureRecipeVersion;  // the version that names paths so
  for (auto* path : {&r.checkpoint, &r.compare, &r.dataset}) *path = written_path(*path, in);
  for (auto& i : r.inputs) i.path = written_path(i.path, in);
  std::error_code ec;
  for (auto& [key, value] : r.options)
    if (fs::path(value).is_absolute() && fs::exists(value, ec)) value = written_path(value, in);
  return r;
}

FigureRecipe resolved_in_folder(const FigureRecipe& recipe, const fs::path& folder) {
  const fs::path in = normal_absolute(folder);
  FigureRecipe r = recipe;
  for (auto* path : {&r.checkpoint, &r.compare, &r.dataset}) *path = read_path(*path, in);
  for (auto& i : r.inputs) i.path = read_path(i.path, in);
  // An option's text is a path only when the recipe wrote it as one beside itself (version 2 on).
  if (r.version >= 2)
    for (auto& [key, value] : r.options)
      if (value == "." || value.starts_with("./")) value = read_path(value, in);
  return r;
}

FigureRecipe read_figure_recipe(const fs::path& path, const std::vector<fs::path>& roots,
                                std::vector<RecipeInputFound>* found) {
  std::string text;
  try {
    text = read_regular_file(path, kMaxRecipeBytes);
  } catch (const FigureRecipeError&) {
    throw;
  } catch (const Error& e) {
    throw FigureRecipeError(e.what());
  }
  const FigureRecipe written = parse_figure_recipe(text, path.string());
  FigureRecipe r = resolved_in_folder(written, normal_absolute(path).parent_path());
  if (!roots.empty()) look_under_roots(written, r, roots, found);
  return r;
}

void write_figure_recipe(const fs::path& path, const FigureRecipe& recipe) {
  write_text_atomically(path,
                        to_json(relative_to_folder(recipe, normal_absolute(path).parent_path())));
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Checking inputs

std::string file_content_hash(const fs::path& path) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (!fs::exists(status)) throw FigureRecipeError(path.string() + ": no such file");
  if (!fs::is_regular_file(status)) throw FigureRecipeError(path.string() + ": not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FigureRecipeError(path.string() + ": cannot be read");
  // Streamed: a checkpoint or a training log may be larger than is worth holding whole.
  const std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(),
                                                                       &XXH3_freeState);
  XXH3_128bits_reset(state.get());
  std::vector<char> buffer(std::size_t{1} << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    XXH3_128bits_update(state.get(), buffer.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) throw FigureRecipeError(path.string() + ": cannot be read");
  return digest_text(XXH3_128bits_digest(state.get()));
}

void check_inputs(const FigureRecipe& recipe, const Progress& progress) {
  std::vector<std::string> problems;
  bool missing = false;
  // A file named with its hash: missing, unreadable or changed is a problem naming it.
  const auto check_file = [&](const std::string& what, const std::string& path,
                              const std::string& made_from) {
    if (path.empty()) return;
    progress.check();
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      problems.push_back(what + " " + path + " is missing (the recipe was made from " + made_from +
                         ")");
      missing = true;
      return;
    }
    std::string now;
    try {
      now = file_content_hash(path);
    } catch (const FigureRecipeError& e) {
      problems.push_back(what + " " + e.what());
      return;
    }
    if (now != made_from)
      problems.push_back(what + " " + path + " changed: its hash is " + now +
                         ", the recipe was made from " + made_from);
  };
  check_file("checkpoint", recipe.checkpoint, recipe.checkpoint_hash);
  check_file("compared checkpoint", recipe.compare, recipe.compare_hash);
  for (const auto& i : recipe.inputs) check_file("--" + i.option + " input", i.path, i.hash);
  if (!recipe.dataset.empty()) {
    std::error_code ec;
    if (!fs::exists(recipe.dataset, ec)) {
      problems.push_back("dataset " + recipe.dataset + " is missing (" +
                         (recipe.dataset_fingerprint.empty()
                              ? std::string("the recipe was made when it was there, unreadable")
                              : "the recipe was made from " + recipe.dataset_fingerprint) +
                         ")");
      missing = true;
    } else {
      // Read as every command reads a dataset a user named: in the reader process, since a
      // damaged HDF5 file can crash the library. The fingerprint covers the arrays, not infos/.
      data::LoadOptions options;
      options.infos = false;
      options.isolate = true;
      try {
        const auto ds = data::load_dataset(recipe.dataset, options, {{}, progress.cancel});
        if (recipe.dataset_fingerprint.empty())
          problems.push_back("dataset " + recipe.dataset +
                             " changed: the recipe was made when it could not be read, now its "
                             "fingerprint is " +
                             ds.fingerprint);
        else if (ds.fingerprint != recipe.dataset_fingerprint)
          problems.push_back("dataset " + recipe.dataset + " changed: its fingerprint is " +
                             ds.fingerprint + ", the recipe was made from " +
                             recipe.dataset_fingerprint);
      } catch (const data::DatasetError& e) {
        // Unreadable then and now: the analysis draws without it as it did (a reference line).
        if (!recipe.dataset_fingerprint.empty())
          problems.push_back("dataset " + std::string(e.what()));
      }
    }
  }
  if (problems.empty()) return;
  // One input a line: a sweep's recipe names every cell's files, and a moved sweep misses them all.
  std::string message = problems.front();
  if (problems.size() > 1) {
    message = std::to_string(problems.size()) +
              " of the recipe's inputs are missing or not what it was made from:";
    const std::size_t listed = std::min(problems.size(), kMaxListedInputs);
    for (std::size_t i = 0; i < listed; ++i) message += "\n  " + problems[i];
    if (listed < problems.size())
      message += "\n  ... and " + std::to_string(problems.size() - listed) + " more";
  }
  throw RecipeInputsError(message, std::move(problems), missing);
}

std::string recipe_time_now() {
  return utc_time_now();
}

}  // namespace dstudio
