// What made a figure of a registered analysis, as its recipe says it (analysis_recipes.h).

#include "analysis_recipes.h"

#include <filesystem>
#include <map>
#include <mutex>
#include <utility>

#include "dstudio/behaviour/default_datasets.h"
#include "dstudio/behaviour/demonstrations.h"
#include "dstudio/common/error.h"
#include "dstudio/common/system_info.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/models/checkpoint.h"

namespace dstudio::recipes {

namespace fs = std::filesystem;
using Type = analysis::AnalysisOption::Type;

// Absolute and normal, without a trailing separator: "runs/dc/" and "./runs/dc" name one folder,
// whose name a legend shows.
std::string absolute_path(const std::string& path) {
  fs::path p = fs::absolute(path).lexically_normal();
  if (p.filename().empty() && p != p.root_path()) p = p.parent_path();
  return p.string();
}

const analysis::AnalysisOption* option_of(const analysis::AnalysisDefinition& definition,
                                          const std::string& key) {
  for (const auto& o : definition.options)
    if (o.key == key) return &o;
  return nullptr;
}

bool has_option(const analysis::AnalysisDefinition& definition, const std::string& key, Type type) {
  const auto* o = option_of(definition, key);
  return o && o->type == type;
}

// The second checkpoint of an analysis that compares two: a recipe field of its own.
bool is_compared_checkpoint(const analysis::AnalysisDefinition& definition,
                            const std::string& key) {
  return key == "compare" && definition.needs_checkpoint && has_option(definition, key, Type::Text);
}

// The options a recipe holds in fields of their own: the second checkpoint, the seed, the rollout
// step and the target return.
bool held_by_field(const analysis::AnalysisDefinition& definition, const std::string& key) {
  return is_compared_checkpoint(definition, key) ||
         ((key == "seed" || key == "step") && has_option(definition, key, Type::Integer)) ||
         (key == "target" && has_option(definition, key, Type::Number));
}

// What the training curves read from a run folder (analysis::read_run_metrics): its log.
std::string training_log(const fs::path& folder) {
  std::error_code ec;
  for (const char* name : {"metrics.jsonl", "metrics.csv"})
    if (fs::is_regular_file(folder / name, ec)) return (folder / name).string();
  return {};
}

std::string dataset_fingerprint(const std::string& path) {
  // Read once per version of the file (its size and time): the window's Export All Views asks it
  // of every view of the same checkpoint.
  static std::mutex mutex;
  static std::map<std::string, std::pair<std::string, std::string>> known;  // path -> stamp, fp
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  const auto time = ec ? 0 : fs::last_write_time(path, ec).time_since_epoch().count();
  const std::string stamp = std::to_string(size) + "/" + std::to_string(time);
  if (!ec) {
    std::lock_guard lock(mutex);
    if (const auto it = known.find(path); it != known.end() && it->second.first == stamp)
      return it->second.second;
  }
  data::LoadOptions options;
  options.infos = false;   // not in the fingerprint
  options.isolate = true;  // a file a user named: read in the reader process first
  std::string fingerprint = data::load_dataset(path, options).fingerprint;
  if (!ec) {
    std::lock_guard lock(mutex);
    known[path] = {stamp, fingerprint};
  }
  return fingerprint;
}

// The checkpoint's own dataset where the analyses find it (models::checkpoint_dataset), without
// making a default dataset that is not on this machine: "" when it is not here.
std::string own_dataset(const std::string& checkpoint) {
  models::CheckpointInfo info;
  try {
    info = models::read_checkpoint_info(checkpoint);
  } catch (const Error&) {
    return {};  // a file a plugin's analysis reads, which names no dataset the studio knows
  }
  std::error_code ec;
  if (!info.dataset_path.empty() && fs::exists(info.dataset_path, ec))
    return absolute_path(info.dataset_path);
  // A default dataset made on another machine: the same name in this machine's cache, if its
  // content is the checkpoint's.
  if (const auto d = behaviour::identify_default_dataset(info.dataset_path)) {
    const auto path = d->human ? behaviour::adroit_human_dataset_path(d->env)
                               : behaviour::default_dataset_path(d->env, d->kind, d->algorithm);
    try {
      if (fs::exists(path, ec) && dataset_fingerprint(path.string()) == info.dataset_fingerprint)
        return path.string();
    } catch (const Error&) {
      // Damaged: not the checkpoint's dataset.
    }
  }
  return {};
}

AnalysisCall absolute_call(const analysis::AnalysisDefinition& definition,
                           const std::string& checkpoint, const std::string& dataset,
                           const std::map<std::string, std::string>& given) {
  AnalysisCall call;
  call.checkpoint = checkpoint.empty() ? checkpoint : absolute_path(checkpoint);
  call.dataset = dataset.empty() ? dataset : absolute_path(dataset);
  call.given = given;
  std::error_code ec;
  for (auto& [key, value] : call.given)
    if (has_option(definition, key, Type::Text) && !value.empty() && fs::exists(value, ec))
      value = absolute_path(value);
  return call;
}

FigureRecipe analysis_recipe(const analysis::AnalysisDefinition& definition,
                             const AnalysisCall& call, const std::string& preset,
                             const viz::FigureStyle& style) {
  FigureRecipe r;
  r.analysis = definition.name;
  // Every option in force, defaults included: a later default does not change the figure.
  // The seeds, the rollout step, the target return and a second checkpoint have fields of their
  // own; every other file an option names is hashed as a further input.
  const auto resolved = analysis::resolve_options(definition, call.given);
  std::error_code ec;
  for (const auto& [key, value] : resolved.values()) {
    if (value.empty()) continue;
    if (is_compared_checkpoint(definition, key)) {
      r.compare = value;
      r.compare_hash = file_content_hash(value);
    } else if (held_by_field(definition, key)) {
      if (key == "seed") r.seeds = {resolved.integer(key)};
      if (key == "step") r.step = resolved.integer(key);
      if (key == "target") r.target = resolved.number(key);
    } else {
      r.options[key] = value;
      if (!has_option(definition, key, Type::Text)) continue;
      if (fs::is_regular_file(value, ec)) {
        r.inputs.push_back({key, value, file_content_hash(value)});
      } else if (const auto log = fs::is_directory(value, ec) ? training_log(value) : "";
                 !log.empty()) {
        r.inputs.push_back({key, log, file_content_hash(log)});
      }
    }
  }
  if (!call.checkpoint.empty()) {
    r.checkpoint = call.checkpoint;
    r.checkpoint_hash = file_content_hash(call.checkpoint);
  }
  if (!call.dataset.empty()) {
    r.dataset = call.dataset;
    r.dataset_given = true;
  } else if (definition.needs_checkpoint && !call.checkpoint.empty()) {
    r.dataset = own_dataset(call.checkpoint);
  }
  if (!r.dataset.empty()) {
    try {
      r.dataset_fingerprint = dataset_fingerprint(r.dataset);
    } catch (const Error&) {
      // An analysis that only draws a reference line from the data draws without it (rtg-sweep):
      // the recipe names the dataset without a fingerprint, and a re-render wants it unreadable.
    }
  }
  r.figure = viz::recipe_figure(preset, style);
  r.studio_version = studio_version();
  return r;
}

}  // namespace dstudio::recipes
