// Workspace files, parsed and checked without Qt. See workspace.h.

#include "dstudio/common/workspace.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "dstudio/common/json_fields.h"
#include "dstudio/common/text.h"
#include "dstudio/models/interventions.h"
#include "dstudio/models/playback.h"
#include "dstudio/models/targets.h"

namespace dstudio {
namespace {

using nlohmann::json;
using Viewer = WorkspaceViewer;
using Lab = WorkspaceMarkovLab;

constexpr const char* kWhere = "workspace";
constexpr int kMaxEpisodeStep = 100'000;

[[noreturn]] void fail(const std::string& problem) {
  throw Error(std::string(kWhere) + ": " + problem);
}

// Paths and names: a value the window would freeze showing is refused.
constexpr TextRule kText{1, kMaxWorkspaceText};

bool is_base64(const std::string& s) {
  if (s.size() % 4 != 0) return false;
  std::size_t padding = 0;
  for (const char c : s) {
    const bool alphabet = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                          (c >= '0' && c <= '9') || c == '+' || c == '/';
    if (c == '=')
      ++padding;
    else if (!alphabet || padding > 0)
      return false;  // '=' only at the end
  }
  return padding <= 2;
}

// Each spec of a list read by `parse` (which throws UsageError), the message naming the spec's
// place in the list.
template <class Parse>
void check_specs(const std::vector<std::string>& specs, const std::string& where, Parse parse) {
  for (std::size_t i = 0; i < specs.size(); ++i) {
    try {
      parse(specs[i]);
    } catch (const UsageError& e) {
      JsonFields<Viewer>::refuse(where + "[" + std::to_string(i) + "]: " + e.what());
    }
  }
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

const JsonFields<Viewer>& viewer_table() {
  static const auto table = [] {
    JsonFields<Viewer> t;
    t.field("target", &Viewer::target, {-models::kMaxTargetReturn, models::kMaxTargetReturn})
        .omitted_when_empty()
        .named("zeroing", &Viewer::zeroing, models::modality_zeroing_names())
        .omitted_when_empty()
        .field("seed", &Viewer::seed, {0, 1'000'000})
        .omitted_when_empty()
        .field("speed", &Viewer::speed)
        .omitted_when_empty()
        .checked([](const Viewer& v, const std::string& where) {
          if (!v.speed) return;
          std::string listed;
          for (const double s : kViewerSpeeds) {
            if (*v.speed == s) return;
            listed += (listed.empty() ? "" : ", ") + exact_number(s);
          }
          JsonFields<Viewer>::refuse(where + " is " + exact_number(*v.speed) + ", not one of " +
                                     listed + " (0: as fast as the policy acts)");
        })
        .field("track", &Viewer::track)
        .omitted_when_empty()
        .field("step", &Viewer::step, {0, kMaxEpisodeStep})
        .omitted_when_empty()
        .field("interventions", &Viewer::interventions)
        .omitted_when_empty()
        .checked([](const Viewer& v, const std::string& where) {
          check_specs(v.interventions, where, [](const std::string& spec) {
            if (!models::parse_live_patch(spec)) models::parse_intervention(spec);
          });
        })
        .field("forks", &Viewer::forks)
        .omitted_when_empty()
        .checked([](const Viewer& v, const std::string& where) {
          if (v.forks.size() > static_cast<std::size_t>(models::kMaxBranches))
            JsonFields<Viewer>::refuse(where + " has " + std::to_string(v.forks.size()) +
                                       " forks, at most " + std::to_string(models::kMaxBranches) +
                                       " play beside the main run");
          check_specs(v.forks, where, models::parse_fork);
        })
        .field("effects", &Viewer::effects)
        .omitted_when_empty();
    return t;
  }();
  return table;
}

const JsonFields<WorkspaceAttention>& attention_table() {
  using A = WorkspaceAttention;
  static const auto table = [] {
    JsonFields<A> t;
    t.named("map", &A::map, kMaps)
        .field("layer", &A::layer, {1, 1000})
        .field("head", &A::head, {0, 1000});
    return t;
  }();
  return table;
}

const JsonFields<Lab>& markov_lab_table() {
  static const auto table = [] {
    constexpr NumberRange kOpenUnit{0, 1, /*above=*/true, /*below=*/true};
    JsonFields<Lab> t;
    t.field("p", &Lab::p, kOpenUnit)
        .omitted_when_empty()
        .field("q", &Lab::q, kOpenUnit)
        .omitted_when_empty()
        .field("order", &Lab::order, {1, 3})
        .omitted_when_empty()
        .field("states", &Lab::states, {2, 8})
        .omitted_when_empty()
        .named("mixer", &Lab::mixer, models::lab_mixer_names())
        .omitted_when_empty()
        .field("window", &Lab::window, {1, 256})
        .omitted_when_empty()
        .field("steps", &Lab::steps, {1, 100'000})
        .omitted_when_empty()
        .field("train", &Lab::train);
    return t;
  }();
  return table;
}

const JsonFields<Bookmark>& bookmark_table() {
  using B = Bookmark;
  static const auto table = [] {
    JsonFields<B> t;
    t.named("on", &B::on, kBookmarkPlaces)
        .field("run", &B::run)
        .text(kText)
        .omitted_when_empty()
        .required("a bookmark on a run's curves names its run folder",
                  [](const B& b) { return b.on == BookmarkPlace::Run; })
        .field("step", &B::step, {0, 1e9})
        .required()
        .checked([](const B& b, const std::string& where) {
          if (b.on == BookmarkPlace::Viewer && b.step > kMaxEpisodeStep)
            JsonFields<B>::refuse(where + " must be at most " + std::to_string(kMaxEpisodeStep) +
                                  " on the viewer, a step of an episode (is " +
                                  std::to_string(b.step) + ")");
        })
        .field("name", &B::name)
        .text({1, 200, /*one_line=*/true})
        .field("note", &B::note)
        .text({0, 4000})  // a bookmark may be named only
        .omitted_when_empty();
    return t;
  }();
  return table;
}

// A window's geometry or state, base64 as Qt's saveGeometry and saveState give it.
void add_base64(JsonFields<Workspace>& t, const char* key, std::string Workspace::*member) {
  t.field(key, member)
      .omitted_when_empty()
      .checked([member](const Workspace& w, const std::string& where) {
        if (!is_base64(w.*member)) JsonFields<Workspace>::refuse(where + " is not base64 text");
      });
}

const JsonFields<Workspace>& workspace_table() {
  using W = Workspace;
  static const auto table = [] {
    JsonFields<W> t;
    // The version comes first: a newer file is named as such before its values are read.
    t.field("decision_studio_workspace", &W::version, {1})
        .required("not a Decision Studio workspace")
        .checked([](const W& w, const std::string& where) {
          if (w.version > kWorkspaceVersion)
            JsonFields<W>::refuse(where + " is " + std::to_string(w.version) +
                                  ": written by a newer Decision Studio (this one reads " +
                                  std::to_string(kWorkspaceVersion) + ")");
        })
        .field("dataset", &W::dataset)
        .text(kText)
        .omitted_when_empty()
        .field("checkpoint", &W::checkpoint)
        .text(kText)
        .omitted_when_empty()
        .field("compare", &W::compare)
        .text(kText)
        .omitted_when_empty()
        .named("comparison", &W::comparison, kComparisons)
        .omitted_when_empty()
        .field("tab", &W::tab)
        .text(kText)
        .omitted_when_empty()
        .object("viewer", &W::viewer, viewer_table())
        .omitted_when_empty()
        .object("attention", &W::attention, attention_table())
        .omitted_when_empty()
        .object("markov_lab", &W::markov_lab, markov_lab_table())
        .omitted_when_empty()
        .named("run", &W::run, kRuns)
        .omitted_when_empty()
        .field("runs", &W::runs)
        .text(kText)
        .omitted_when_empty()
        .field("sweep", &W::sweep)
        .text(kText)
        .omitted_when_empty()
        .field("figures", &W::figures)
        .at_most(kMaxBookmarks)
        .text(kText)
        .omitted_when_empty()
        .objects("bookmarks", &W::bookmarks, bookmark_table())
        .at_most(kMaxBookmarks)
        .omitted_when_empty();
    add_base64(t, "window_geometry", &W::window_geometry);
    add_base64(t, "window_state", &W::window_state);
    return t;
  }();
  return table;
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
  return workspace_table().read(w, kWhere);
}

std::string to_json(const Workspace& ws) {
  return workspace_table().write(ws).dump(4);
}

Workspace resolve_resources(Workspace ws, const std::filesystem::path& resources) {
  constexpr std::string_view prefix = "@resources/";
  for (std::string* path : {&ws.dataset, &ws.checkpoint, &ws.compare})
    if (path->starts_with(prefix)) *path = (resources / path->substr(prefix.size())).string();
  return ws;
}

}  // namespace dstudio
