#pragma once
/// \file
/// Workspace files: what the studio had open (dataset, checkpoint, runs), the viewer's settings and
/// the window's layout, as File ▸ Save Workspace writes them; and the lessons' steps, which are
/// workspaces naming shipped files with an "@resources/" prefix. Parsing checks every field's type
/// and range, so the window only ever applies values it can show; keys it does not know are
/// ignored (a newer studio may add some), a newer version is refused. One field table lists the
/// keys (workspace.cpp, json_fields.h): it writes them in its order and reads them back.
///
/// The keys, all optional but the version:
///
///     decision_studio_workspace  integer, 1 .. kWorkspaceVersion
///     dataset, checkpoint        path ("default" as dataset: the default dataset)
///     compare                    path of a checkpoint compared with the open one
///     comparison                 "side by side" or "difference"
///     tab                        the tab shown, by its id ("attention", "markov-lab"; an
///                                earlier studio wrote its title, which the window still takes)
///     viewer                     {target, zeroing, seed, speed, track, step, interventions,
///                                forks, effects}
///     attention                  {map: "layer" | "mean over layers" | "rollout", layer, head}
///     markov_lab                 {p, q, order, states, mixer, window, steps, train}
///     run                        "sweep" or "ablation", started once the checkpoint is open
///     runs                       training run folders, an array of paths
///     sweep                      path of the sweep folder open in the Sweep tab (docs/sweeps.md)
///     figures                    an array of figure recipes' paths (a paper's figures)
///     bookmarks                  [{on: "viewer" | "run", run (a run folder, for "run"), step,
///                                name, note}]
///     window_geometry            base64, as Qt's saveGeometry gives it
///     window_state               base64, as Qt's saveState gives it
///
/// Paths and names are non-empty, without NUL characters and at most kMaxWorkspaceText bytes.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dstudio/common/error.h"
#include "dstudio/models/markov_lab_options.h"
#include "dstudio/models/variant_config.h"

namespace dstudio {

/// The workspace version this studio writes; files of a greater version are refused.
inline constexpr int kWorkspaceVersion = 1;
/// The largest workspace file read (checked before it is read) and the longest path or name in
/// one: a workspace is a few kilobytes, and a value the window would freeze showing is refused.
inline constexpr std::size_t kMaxWorkspaceBytes = std::size_t{4} << 20;
inline constexpr std::size_t kMaxWorkspaceText = 4096;

/// The viewer's playback speeds, times real time; 0 is "as fast as the policy acts".
inline constexpr double kViewerSpeeds[] = {0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 0.0};

/// The viewer's settings ("viewer"). Each is applied only when present.
struct WorkspaceViewer {
  std::optional<double> target;                    ///< return asked for, in [-1e6, 1e6]
  std::optional<models::ModalityZeroing> zeroing;  ///< "none", "rtg", "states", "actions"
  std::optional<int> seed;                         ///< in [0, 1000000]
  std::optional<double> speed;                     ///< one of kViewerSpeeds
  std::optional<bool> track;                       ///< camera tracking
  std::optional<int> step;                         ///< step reached by playing, in [0, 100000]
  /// Interventions inside the forward pass from the first step (interventions.h specs).
  std::vector<std::string> interventions;
  /// Counterfactual forks, "STEP:CHANGE" as decision-viewer's --fork (playback.h), at most four.
  std::vector<std::string> forks;
  std::optional<bool> effects;  ///< limbs coloured by the interventions' action change
  bool operator==(const WorkspaceViewer&) const = default;
};

/// Which attention map the Attention tab shows ("attention").
enum class WorkspaceMap { Layer, MeanOverLayers, Rollout };

/// The attention map's selection; layer and head count from 1 as in the papers, head 0 is the mean
/// over heads (analysis::MapSelection).
struct WorkspaceAttention {
  WorkspaceMap map = WorkspaceMap::Layer;
  int layer = 1;  ///< in [1, 1000]
  int head = 0;   ///< in [0, 1000]
  bool operator==(const WorkspaceAttention&) const = default;
};

/// How a compared checkpoint is shown ("comparison").
enum class WorkspaceComparison { SideBySide, Difference };

/// An analysis started once the checkpoint is open ("run").
enum class WorkspaceRun { Sweep, Ablation };

/// The Markov lab's chain and model ("markov_lab"); what is absent keeps the lab's current value.
/// Each field is checked on its own range here; `apply` checks them together.
struct WorkspaceMarkovLab {
  std::optional<double> p;                ///< in (0, 1)
  std::optional<double> q;                ///< in (0, 1)
  std::optional<int> order;               ///< in [1, 3]
  std::optional<int> states;              ///< in [2, 8]
  std::optional<models::LabMixer> mixer;  ///< "pooling", "attention", "conv"
  std::optional<int> window;              ///< in [1, 256]
  std::optional<int> steps;               ///< in [1, 100000]
  bool train = false;                     ///< start training once set
  bool operator==(const WorkspaceMarkovLab&) const = default;

  /// `options` with these settings applied. Throws UsageError when they do not fit together
  /// (MarkovLabOptions::check: a window longer than the sequences, say).
  [[nodiscard]] models::MarkovLabOptions apply(models::MarkovLabOptions options) const;
};

/// Where a bookmark is: on the viewer's timeline, or on a training run's curves.
enum class BookmarkPlace { Viewer, Run };

/// A named step with a note ("bookmarks"): a moment of the played episode worth coming back to,
/// or a step of a training run's curves (its run folder in `run`). Kept in workspaces, shown by
/// lessons, written into figure recipes.
struct Bookmark {
  BookmarkPlace on = BookmarkPlace::Viewer;
  std::string run;   ///< the run folder, for a bookmark on a run's curves
  int step = 0;      ///< in [0, 100000] on the viewer, [0, 1e9] on a run
  std::string name;  ///< one line, at most 200 characters
  std::string note;  ///< at most 4000 characters
  bool operator==(const Bookmark&) const = default;
};

/// The bookmarks of `bookmarks` that are on `place`, by step (those of one step in their order).
std::vector<Bookmark> bookmarks_on(std::vector<Bookmark> bookmarks, BookmarkPlace place);

/// At most this many bookmarks a workspace.
constexpr int kMaxBookmarks = 1000;

/// A parsed workspace. Strings are empty and optionals unset where the file has no such key.
struct Workspace {
  int version = kWorkspaceVersion;
  std::string dataset;     ///< a path, "default", or "@resources/..." in a lesson
  std::string checkpoint;  ///< a path or "@resources/..."
  std::string compare;     ///< a path or "@resources/..."
  std::optional<WorkspaceComparison> comparison;
  std::string tab;
  std::optional<WorkspaceViewer> viewer;
  std::optional<WorkspaceAttention> attention;
  std::optional<WorkspaceMarkovLab> markov_lab;
  std::optional<WorkspaceRun> run;
  std::vector<std::string> runs;
  std::string sweep;  ///< a sweep folder
  std::vector<Bookmark> bookmarks;
  /// Figure recipes (<figure>.recipe.json, figure_recipe.h): a paper's figures, kept together.
  std::vector<std::string> figures;
  std::string window_geometry;  ///< base64
  std::string window_state;     ///< base64
  bool operator==(const Workspace&) const = default;
};

/// Parses a workspace's JSON text. Throws `dstudio::Error` whose message names the key and what is
/// wrong with it: `workspace: viewer: target is not a number`; for text that is not a JSON object,
/// a file without "decision_studio_workspace" and one of a newer version.
Workspace parse_workspace(std::string_view json_text);

/// The JSON text of `workspace` (every key that is set), which parse_workspace reads back equal.
std::string to_json(const Workspace& workspace);

/// `workspace` with the "@resources/" prefix of its dataset, checkpoint and compare paths replaced
/// by `resources` (the folder holding the shipped checkpoints), as a lesson's steps need.
Workspace resolve_resources(Workspace workspace, const std::filesystem::path& resources);

const char* to_string(WorkspaceMap map);
const char* to_string(WorkspaceComparison comparison);
const char* to_string(WorkspaceRun run);
const char* to_string(BookmarkPlace place);

}  // namespace dstudio
