// Workspace files, parsed and checked without Qt. See workspace.h.

#include "dstudio/common/workspace.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>

#include "dstudio/models/interventions.h"
#include "dstudio/models/playback.h"
#include "dstudio/models/targets.h"

namespace dstudio {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr const char* kVersionKey = "decision_studio_workspace";
constexpr std::size_t kShownChars = 40;

[[noreturn]] void fail(const std::string& problem) {
  throw Error("workspace: " + problem);
}

// A value as a message shows it: scalars as JSON (long strings cut at a character boundary),
// arrays and objects by their kind, so a deeply nested value is never printed whole.
std::string shown(const json& value) {
  if (value.is_array()) return "an array";
  if (value.is_object()) return "an object";
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > kShownChars) {
    std::size_t cut = kShownChars;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0U) == 0x80U)
      --cut;  // not inside a UTF-8 sequence
    text = text.substr(0, cut) + "...";
  }
  return text;
}

[[noreturn]] void wrong(const std::string& key, const std::string& expected, const json& value) {
  fail("\"" + key + "\" must be " + expected + ", not " + shown(value));
}

double number(const json& value, const std::string& key) {
  if (!value.is_number()) wrong(key, "a number", value);
  const double v = value.get<double>();
  if (!std::isfinite(v)) wrong(key, "a finite number", value);
  return v;
}

double number_in(const json& value, const std::string& key, double lo, double hi) {
  const double v = number(value, key);
  if (v < lo || v > hi) wrong(key, "in [" + shown(json(lo)) + ", " + shown(json(hi)) + "]", value);
  return v;
}

double open_unit(const json& value, const std::string& key) {
  const double v = number(value, key);
  if (!(v > 0.0 && v < 1.0)) wrong(key, "in (0, 1)", value);
  return v;
}

// An integer in [lo, hi]. JSON writers that store every number as a double (Qt's) write integral
// values like 3.0; those are integers too.
int integer_in(const json& value, const std::string& key, int lo, int hi) {
  const std::string range =
      "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (value.is_number_unsigned()) {
    const auto v = value.get<std::uint64_t>();
    if (v > static_cast<std::uint64_t>(hi) || (lo > 0 && v < static_cast<std::uint64_t>(lo)))
      wrong(key, range, value);
    return static_cast<int>(v);
  }
  if (value.is_number_integer()) {
    const auto v = value.get<std::int64_t>();
    if (v < lo || v > hi) wrong(key, range, value);
    return static_cast<int>(v);
  }
  if (value.is_number_float()) {
    const double v = value.get<double>();
    if (!std::isfinite(v) || v != std::floor(v) || v < lo || v > hi) wrong(key, range, value);
    return static_cast<int>(v);
  }
  wrong(key, range, value);
}

bool boolean(const json& value, const std::string& key) {
  if (!value.is_boolean()) wrong(key, "true or false", value);
  return value.get<bool>();
}

std::string text(const json& value, const std::string& key) {
  if (!value.is_string()) wrong(key, "a string", value);
  auto s = value.get<std::string>();
  if (s.empty()) wrong(key, "a non-empty string", value);
  if (s.find('\0') != std::string::npos) wrong(key, "a string without NUL characters", value);
  if (s.size() > kMaxWorkspaceText)
    fail("\"" + key + "\" is " + std::to_string(s.size()) +
         " bytes long; a path or a name in a workspace has at most " +
         std::to_string(kMaxWorkspaceText));
  return s;
}

// One of the names of `names`; the message lists them.
template <class E>
E choice(const json& value, const std::string& key, const EnumNames<E>& names) {
  std::string listed;
  const auto& entries = names.entries();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (i > 0) listed += i + 1 == entries.size() ? " or " : ", ";
    listed.append(1, '"').append(entries[i].second).append(1, '"');
  }
  if (!value.is_string()) wrong(key, listed, value);
  if (const auto found = names.parse(value.get<std::string>())) return *found;
  wrong(key, listed, value);
}

bool is_base64(const std::string& s) {
  if (s.size() % 4 != 0) return false;
  std::size_t padding = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alphabet = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                          (c >= '0' && c <= '9') || c == '+' || c == '/';
    if (c == '=')
      ++padding;
    else if (!alphabet || padding > 0)
      return false;  // '=' only at the end
  }
  return padding <= 2;
}

std::string base64(const json& value, const std::string& key) {
  if (!value.is_string() || !is_base64(value.get<std::string>())) wrong(key, "base64 text", value);
  return value.get<std::string>();
}

const json& object(const json& value, const std::string& key) {
  if (!value.is_object()) wrong(key, "an object", value);
  return value;
}

const EnumNames<WorkspaceMap> kMaps{{WorkspaceMap::Layer, "layer"},
                                    {WorkspaceMap::MeanOverLayers, "mean over layers"},
                                    {WorkspaceMap::Rollout, "rollout"}};
const EnumNames<WorkspaceComparison> kComparisons{{WorkspaceComparison::SideBySide, "side by side"},
                                                  {WorkspaceComparison::Difference, "difference"}};
const EnumNames<WorkspaceRun> kRuns{{WorkspaceRun::Sweep, "sweep"},
                                    {WorkspaceRun::Ablation, "ablation"}};
const EnumNames<BookmarkPlace> kBookmarkPlaces{{BookmarkPlace::Viewer, "viewer"},
                                               {BookmarkPlace::Run, "run"}};

Bookmark bookmark_of(const json& o, const std::string& where) {
  Bookmark b;
  bool has_step = false;
  for (const auto& [key, value] : o.items()) {
    const std::string name = where + "." + key;
    if (key == "on")
      b.on = choice(value, name, kBookmarkPlaces);
    else if (key == "run")
      b.run = text(value, name);
    else if (key == "step")
      b.step = integer_in(value, name, 0, 1'000'000'000), has_step = true;
    else if (key == "name") {
      b.name = text(value, name);
      if (b.name.size() > 200 || b.name.find('\n') != std::string::npos)
        wrong(name, "one line of at most 200 characters", value);
    } else if (key == "note") {
      // A note may be empty (a bookmark named only); text() wants a non-empty string.
      if (!value.is_string()) wrong(name, "a string", value);
      b.note = value.get<std::string>().empty() ? std::string() : text(value, name);
      if (b.note.size() > 4000) wrong(name, "at most 4000 characters", value);
    }
  }
  if (!has_step) fail("\"" + where + "\" has no \"step\"");
  if (b.on == BookmarkPlace::Viewer && b.step > 100'000)
    wrong(where + ".step", "a step of an episode, 0 to 100000", o["step"]);
  if (b.on == BookmarkPlace::Run && b.run.empty())
    fail("\"" + where + "\" is on a run's curves but names no \"run\"");
  return b;
}

WorkspaceViewer viewer_of(const json& o) {
  WorkspaceViewer v;
  for (const auto& [key, value] : o.items()) {
    const std::string name = "viewer." + key;
    if (key == "target")
      v.target = number_in(value, name, -models::kMaxTargetReturn, models::kMaxTargetReturn);
    else if (key == "zeroing")
      v.zeroing = choice(value, name, models::modality_zeroing_names());
    else if (key == "seed")
      v.seed = integer_in(value, name, 0, 1'000'000);
    else if (key == "speed") {
      const double speed = number(value, name);
      bool listed = false;
      for (double s : kViewerSpeeds) listed = listed || speed == s;
      if (!listed)
        wrong(name, "one of 0.1, 0.25, 0.5, 1, 2, 4 or 0 (as fast as the policy acts)", value);
      v.speed = speed;
    } else if (key == "track")
      v.track = boolean(value, name);
    else if (key == "step")
      v.step = integer_in(value, name, 0, 100'000);
    else if (key == "interventions" || key == "forks") {
      if (!value.is_array()) wrong(name, "a list of strings", value);
      auto& list = key == "forks" ? v.forks : v.interventions;
      for (const auto& item : value) {
        if (!item.is_string()) wrong(name, "a list of strings", value);
        const auto spec = item.get<std::string>();
        try {
          if (key == "forks")
            models::parse_fork(spec);
          else if (!models::parse_live_patch(spec))
            models::parse_intervention(spec);
        } catch (const UsageError& e) {
          fail("\"" + name + "\": " + e.what());
        }
        list.push_back(spec);
      }
      if (static_cast<int>(v.forks.size()) > models::kMaxBranches)
        fail("\"" + name + "\" has " + std::to_string(v.forks.size()) + " forks; at most " +
             std::to_string(models::kMaxBranches) + " play beside the main run");
    } else if (key == "effects")
      v.effects = boolean(value, name);
  }
  return v;
}

WorkspaceAttention attention_of(const json& o) {
  WorkspaceAttention a;
  for (const auto& [key, value] : o.items()) {
    const std::string name = "attention." + key;
    if (key == "map")
      a.map = choice(value, name, kMaps);
    else if (key == "layer")
      a.layer = integer_in(value, name, 1, 1000);
    else if (key == "head")
      a.head = integer_in(value, name, 0, 1000);
  }
  return a;
}

WorkspaceMarkovLab markov_lab_of(const json& o) {
  WorkspaceMarkovLab m;
  for (const auto& [key, value] : o.items()) {
    const std::string name = "markov_lab." + key;
    if (key == "p")
      m.p = open_unit(value, name);
    else if (key == "q")
      m.q = open_unit(value, name);
    else if (key == "order")
      m.order = integer_in(value, name, 1, 3);
    else if (key == "states")
      m.states = integer_in(value, name, 2, 8);
    else if (key == "mixer")
      m.mixer = choice(value, name, models::lab_mixer_names());
    else if (key == "window")
      m.window = integer_in(value, name, 1, 256);
    else if (key == "steps")
      m.steps = integer_in(value, name, 1, 100'000);
    else if (key == "train")
      m.train = boolean(value, name);
  }
  return m;
}

}  // namespace

const char* to_string(WorkspaceMap map) {
  return kMaps.name(map);
}
const char* to_string(WorkspaceComparison comparison) {
  return kComparisons.name(comparison);
}
const char* to_string(WorkspaceRun run) {
  return kRuns.name(run);
}
const char* to_string(BookmarkPlace place) {
  return kBookmarkPlaces.name(place);
}

models::MarkovLabOptions WorkspaceMarkovLab::apply(models::MarkovLabOptions options) const {
  options.chain = analysis::MarkovChain::make(
      p.value_or(options.chain.p), q.value_or(options.chain.q), order.value_or(options.chain.order),
      states.value_or(options.chain.states));
  if (mixer) options.mixer = *mixer;
  options.window = window.value_or(options.window);
  options.steps = steps.value_or(options.steps);
  options.check();
  return options;
}

std::vector<Bookmark> bookmarks_on(std::vector<Bookmark> bookmarks, BookmarkPlace place) {
  std::erase_if(bookmarks, [place](const Bookmark& b) { return b.on != place; });
  std::stable_sort(bookmarks.begin(), bookmarks.end(),
                   [](const Bookmark& a, const Bookmark& b) { return a.step < b.step; });
  return bookmarks;
}

Workspace parse_workspace(std::string_view json_text) {
  if (json_text.size() > kMaxWorkspaceBytes)
    fail("is " + std::to_string(json_text.size()) + " bytes; a workspace has at most " +
         std::to_string(kMaxWorkspaceBytes));
  json w;
  try {
    w = json::parse(json_text.begin(), json_text.end());
  } catch (const json::exception& e) {  // a syntax error, or a number too large for a double
    fail("not JSON (" + std::string(e.what()) + ")");
  }
  if (!w.is_object()) fail("not a JSON object");
  const auto version = w.find(kVersionKey);
  if (version == w.end())
    fail("not a Decision Studio workspace (no \"decision_studio_workspace\" key)");
  if (version->is_number() && version->get<double>() > kWorkspaceVersion)
    fail("written by a newer Decision Studio (workspace version " + shown(*version) +
         ", this one reads " + std::to_string(kWorkspaceVersion) + ")");

  Workspace ws;
  ws.version = integer_in(*version, kVersionKey, 1, kWorkspaceVersion);
  for (const auto& [key, value] : w.items()) {
    if (key == "dataset")
      ws.dataset = text(value, key);
    else if (key == "checkpoint")
      ws.checkpoint = text(value, key);
    else if (key == "compare")
      ws.compare = text(value, key);
    else if (key == "comparison")
      ws.comparison = choice(value, key, kComparisons);
    else if (key == "tab")
      ws.tab = text(value, key);
    else if (key == "viewer")
      ws.viewer = viewer_of(object(value, key));
    else if (key == "attention")
      ws.attention = attention_of(object(value, key));
    else if (key == "markov_lab")
      ws.markov_lab = markov_lab_of(object(value, key));
    else if (key == "run")
      ws.run = choice(value, key, kRuns);
    else if (key == "runs") {
      if (!value.is_array()) wrong(key, "an array of paths", value);
      for (std::size_t i = 0; i < value.size(); ++i)
        ws.runs.push_back(text(value[i], "runs[" + std::to_string(i) + "]"));
    } else if (key == "sweep")
      ws.sweep = text(value, key);
    else if (key == "figures") {
      if (!value.is_array()) wrong(key, "an array of paths", value);
      if (value.size() > static_cast<std::size_t>(kMaxBookmarks))
        fail("has " + std::to_string(value.size()) + " figures; at most " +
             std::to_string(kMaxBookmarks));
      for (std::size_t i = 0; i < value.size(); ++i)
        ws.figures.push_back(text(value[i], "figures[" + std::to_string(i) + "]"));
    } else if (key == "bookmarks") {
      if (!value.is_array()) wrong(key, "an array of bookmarks", value);
      if (value.size() > static_cast<std::size_t>(kMaxBookmarks))
        fail("has " + std::to_string(value.size()) + " bookmarks; at most " +
             std::to_string(kMaxBookmarks));
      for (std::size_t i = 0; i < value.size(); ++i) {
        const std::string where = "bookmarks[" + std::to_string(i) + "]";
        ws.bookmarks.push_back(bookmark_of(object(value[i], where), where));
      }
    } else if (key == "window_geometry")
      ws.window_geometry = base64(value, key);
    else if (key == "window_state")
      ws.window_state = base64(value, key);
  }
  return ws;
}

std::string to_json(const Workspace& ws) {
  ordered_json w;
  w[kVersionKey] = ws.version;
  if (!ws.dataset.empty()) w["dataset"] = ws.dataset;
  if (!ws.checkpoint.empty()) w["checkpoint"] = ws.checkpoint;
  if (!ws.compare.empty()) w["compare"] = ws.compare;
  if (ws.comparison) w["comparison"] = to_string(*ws.comparison);
  if (!ws.tab.empty()) w["tab"] = ws.tab;
  if (ws.viewer) {
    ordered_json v = ordered_json::object();
    const auto& s = *ws.viewer;
    if (s.target) v["target"] = *s.target;
    if (s.zeroing) v["zeroing"] = models::to_string(*s.zeroing);
    if (s.seed) v["seed"] = *s.seed;
    if (s.speed) v["speed"] = *s.speed;
    if (s.track) v["track"] = *s.track;
    if (s.step) v["step"] = *s.step;
    if (!s.interventions.empty()) v["interventions"] = s.interventions;
    if (!s.forks.empty()) v["forks"] = s.forks;
    if (s.effects) v["effects"] = *s.effects;
    w["viewer"] = v;
  }
  if (ws.attention)
    w["attention"] = {{"map", to_string(ws.attention->map)},
                      {"layer", ws.attention->layer},
                      {"head", ws.attention->head}};
  if (ws.markov_lab) {
    ordered_json m = ordered_json::object();
    const auto& lab = *ws.markov_lab;
    if (lab.p) m["p"] = *lab.p;
    if (lab.q) m["q"] = *lab.q;
    if (lab.order) m["order"] = *lab.order;
    if (lab.states) m["states"] = *lab.states;
    if (lab.mixer) m["mixer"] = models::to_string(*lab.mixer);
    if (lab.window) m["window"] = *lab.window;
    if (lab.steps) m["steps"] = *lab.steps;
    m["train"] = lab.train;
    w["markov_lab"] = m;
  }
  if (ws.run) w["run"] = to_string(*ws.run);
  if (!ws.runs.empty()) w["runs"] = ws.runs;
  if (!ws.sweep.empty()) w["sweep"] = ws.sweep;
  if (!ws.figures.empty()) w["figures"] = ws.figures;
  if (!ws.bookmarks.empty()) {
    ordered_json list = ordered_json::array();
    for (const auto& b : ws.bookmarks) {
      ordered_json o = {{"on", to_string(b.on)}};
      if (!b.run.empty()) o["run"] = b.run;
      o["step"] = b.step;
      o["name"] = b.name;
      if (!b.note.empty()) o["note"] = b.note;
      list.push_back(o);
    }
    w["bookmarks"] = list;
  }
  if (!ws.window_geometry.empty()) w["window_geometry"] = ws.window_geometry;
  if (!ws.window_state.empty()) w["window_state"] = ws.window_state;
  return w.dump(4);
}

Workspace resolve_resources(Workspace ws, const std::filesystem::path& resources) {
  constexpr std::string_view prefix = "@resources/";
  for (std::string* path : {&ws.dataset, &ws.checkpoint, &ws.compare})
    if (path->starts_with(prefix)) *path = (resources / path->substr(prefix.size())).string();
  return ws;
}

}  // namespace dstudio
