// Figure recipes. See figure_recipe.h.

// Index of this file:
//   [SECTION] The recipe's fields
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
#include "dstudio/common/json_fields.h"
#include "dstudio/common/read_file.h"
#include "dstudio/common/system_info.h"
#include "dstudio/data/dataset_io.h"

namespace dstudio {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

// ---------------------------------------------------------------------------------------------
// [SECTION] The recipe's fields

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

// What a field's check throws (every table throws the same).
[[noreturn]] void refuse(const std::string& message) {
  JsonFields<FigureRecipe>::refuse(message);
}

void check_hash(const std::string& hash, const std::string& where) {
  if (!is_hash(hash))
    refuse(where + " is '" + hash +
           "', not a content hash (\"xxh3-128:\" and 32 hexadecimal digits)");
}

// The content hash of a file named by `path` (`what`): a hash when given, and given with the path.
template <class T>
auto hash_of(std::string T::*path, std::string T::*hash, const char* what) {
  return [=](const T& t, const std::string& where) {
    const std::string& h = t.*hash;
    if (!h.empty()) check_hash(h, where);
    if (h.empty() && !(t.*path).empty())
      refuse(where + " is missing for the " + what + " " + t.*path);
    if (!h.empty() && (t.*path).empty()) refuse(where + " is given without a " + what);
  };
}

// A file name beside the recipe: a recipe cannot point at files elsewhere.
bool is_file_name(const std::string& name) {
  return !name.empty() && name.find('/') == std::string::npos && name != "." && name != "..";
}

const JsonFields<RecipeInput>& input_fields() {
  static const auto fields = [] {
    using I = RecipeInput;
    JsonFields<I> t;
    t.field("option", &I::option)
        .required()
        .field("path", &I::path)
        .required()
        .checked([](const I& i, const std::string& where) {
          if (i.path.empty()) refuse(where + " is empty");
        })
        .field("hash", &I::hash)
        .required()
        .checked([](const I& i, const std::string& where) { check_hash(i.hash, where); });
    return t;
  }();
  return fields;
}

const JsonFields<RecipeBookmark>& bookmark_fields() {
  static const auto fields = [] {
    using B = RecipeBookmark;
    JsonFields<B> t;
    t.field("step", &B::step).required().field("name", &B::name).field("note", &B::note);
    return t;
  }();
  return fields;
}

// Sizes in inches and points, within what a page could hold.
const JsonFields<RecipeFigure>& figure_fields() {
  static const auto fields = [] {
    using F = RecipeFigure;
    JsonFields<F> t;
    t.field("name", &F::name)
        .required()
        .checked([](const F& f, const std::string& where) {
          // The figure's files are <name>.pdf and so on, beside the recipe.
          if (!is_file_name(f.name) || f.name.front() == '.')
            refuse(where + " is '" + f.name + "', not a file name");
        })
        .field("preset", &F::preset)
        .empty_as_null()
        .field("width", &F::width, {0, 40, /*above=*/true})
        .field("height", &F::height, {0, 40})
        .field("font", &F::font, {0, 72, /*above=*/true})
        .field("axis_font", &F::axis_font, {0, 72})
        .field("tick_font", &F::tick_font, {0, 72})
        .field("line_width", &F::line_width, {0, 20, /*above=*/true})
        .computed(
            "font_family", [](const F& f) { return ordered_json(f.font_family); },
            [](F& f, const ordered_json& v, const std::string& where) {
              // None given (null or ""): the export dialog's own.
              if (v.is_null()) return;
              if (!v.is_string()) refuse(where + " is not a text");
              if (const auto& family = v.get_ref<const std::string&>(); !family.empty())
                f.font_family = family;
            })
        .field("dpi", &F::dpi, {1, 2400})
        .field("formats", &F::formats)
        .checked([](const F& f, const std::string& where) {
          for (std::size_t i = 0; i < f.formats.size(); ++i)
            if (const auto& x = f.formats[i]; x != "pdf" && x != "svg" && x != "png" && x != "mp4")
              refuse(where + "[" + std::to_string(i) + "] is '" + x +
                     "', not pdf, svg, png or (a viewer clip) mp4");
        })
        .field("show_title", &F::show_title)
        .field("title", &F::title)
        .empty_as_null()
        .field("x_title", &F::x_title)
        .empty_as_null()
        .field("y_title", &F::y_title)
        .empty_as_null();
    return t;
  }();
  return fields;
}

const JsonFields<FigureRecipe>& recipe_fields() {
  static const auto fields = [] {
    using R = FigureRecipe;
    JsonFields<R> t;
    // What the file is, first: the format, then the version, which names the studio that wrote it.
    t.field("format", &R::format)
        .required()
        .checked([](const R& r, const std::string& where) {
          if (r.format != kFigureRecipeFormat)
            refuse(where + " is '" + r.format + "', not '" + kFigureRecipeFormat + "'");
        })
        .read_first()
        .field("version", &R::version, {1})
        .required()
        .checked([](const R& r, const std::string& where) {
          // Before any other field: a later version's fields may mean something else.
          if (r.version > kFigureRecipeVersion)
            refuse(where + " is " + std::to_string(r.version) + ", newer than this studio reads (" +
                   std::to_string(kFigureRecipeVersion) + "); it was written by " +
                   (r.studio_version.empty() ? std::string("a later studio") : r.studio_version));
        })
        .field("analysis", &R::analysis)
        .required()
        .checked([](const R& r, const std::string& where) {
          if (r.analysis.empty()) refuse(where + " is empty");
        })
        .field("options", &R::options)
        .checked([](const R& r, const std::string& where) {
          for (const auto& [name, value] : r.options)
            if (name.empty() || name.starts_with("-"))
              refuse(where + " names '" + name +
                     "', which is not an option's name (without its dashes)");
        })
        // Kept as text (the views' recipes read it with tables of their own), written as the
        // object it holds; none is left out, so that other recipes write as they always did.
        .computed(
            "view",
            [](const R& r) {
              return r.view.empty() ? ordered_json(nullptr) : ordered_json::parse(r.view);
            },
            [](R& r, const ordered_json& v, const std::string& where) {
              if (!v.is_object()) refuse(where + " is not a JSON object");
              r.view = v.dump();
            })
        .omitted_when_empty()
        .field("checkpoint", &R::checkpoint)
        .empty_as_null()
        .field("checkpoint_hash", &R::checkpoint_hash)
        .empty_as_null()
        .checked(hash_of(&R::checkpoint, &R::checkpoint_hash, "checkpoint"))
        .field("compare", &R::compare)
        .empty_as_null()
        .field("compare_hash", &R::compare_hash)
        .empty_as_null()
        .checked(hash_of(&R::compare, &R::compare_hash, "compared checkpoint"))
        .field("dataset", &R::dataset)
        .empty_as_null()
        .field("dataset_fingerprint", &R::dataset_fingerprint)
        .empty_as_null()
        .checked([](const R& r, const std::string& where) {
          // A dataset without a fingerprint could not be read when the recipe was made.
          if (!r.dataset_fingerprint.empty())
            hash_of(&R::dataset, &R::dataset_fingerprint, "dataset")(r, where);
        })
        .field("dataset_given", &R::dataset_given)
        .objects("inputs", &R::inputs, input_fields())
        .field("seeds", &R::seeds)
        .field("episode", &R::episode)
        .field("step", &R::step)
        .field("target", &R::target)
        .field("zeroing", &R::zeroing)
        .empty_as_null()
        .field("interventions", &R::interventions)
        .objects("bookmarks", &R::bookmarks, bookmark_fields())
        .object("figure", &R::figure, figure_fields())
        .required()
        .field("outputs", &R::outputs)
        .checked([](const R& r, const std::string& where) {
          for (std::size_t i = 0; i < r.outputs.size(); ++i)
            if (!is_file_name(r.outputs[i]))
              refuse(where + "[" + std::to_string(i) + "] is '" + r.outputs[i] +
                     "', not a file name beside the recipe");
        })
        .field("studio_version", &R::studio_version)
        .read_first()
        .field("created", &R::created)
        .empty_as_null()
        .errors_as<FigureRecipeError>();
    return t;
  }();
  return fields;
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
  return recipe_fields().write(r).dump(2) + "\n";
}

FigureRecipe parse_figure_recipe(const std::string& text, const std::string& where) {
  ordered_json j;
  try {
    j = ordered_json::parse(text);
  } catch (const json::parse_error& e) {
    throw FigureRecipeError(where + ": not JSON (" + e.what() + ")");
  }
  if (!j.is_object()) throw FigureRecipeError(where + ": not a figure recipe (a JSON object)");
  return recipe_fields().read(j, where);
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
