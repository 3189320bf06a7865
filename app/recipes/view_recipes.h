#pragma once
/// \file
/// The recipes of the studio's own views (the Attention, Entropy and reward, Zeroing and target
/// sweep and Markov lab tabs): what the window records when one of them is exported
/// (viz::FigureSource::setFigureRecipeMaker) and how `dstudio figure render` builds the same view
/// again, headless, from a recipe, so that its export is the window's byte for byte. Each view's
/// two directions sit side by side in view_recipes.cpp.
///
/// A view's recipe names the analysis "studio-<view>" and holds what the view was given: the
/// checkpoint (and the compared one) with their hashes, the checkpoint's dataset and its
/// fingerprint, the settings of the computation that fed it (windows, rollouts, the lab's run)
/// and what was chosen on screen (layer, head, episode), in its options. The Viewer tab's recipes
/// keep what is not a single value (the run's changes and forks, a clip's targets, camera and
/// look) as JSON objects in the recipe's `view`; recipes written before it kept each as JSON text
/// in the option of its key, and still read.

#include <QString>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dstudio/analysis/curves.h"
#include "dstudio/common/figure_recipe.h"
#include "dstudio/common/progress.h"
#include "dstudio/models/checkpoint_info.h"
#include "dstudio/models/markov_lab_options.h"
#include "dstudio/models/playback.h"
#include "dstudio/models/rollout.h"
#include "dstudio/models/targets.h"
#include "dstudio/models/windows.h"
#include "dstudio/render/scene_renderer.h"
#include "dstudio/sweep/sweep.h"

namespace dstudio::viz {
class AttentionMapView;
class EntropyRewardView;
class FigureSource;
class MarkovLabView;
class TsneView;
class EpisodeTimeline;
enum class SweepMeasure;
}  // namespace dstudio::viz

namespace dstudio::recipes {

/// The analysis names of the views' recipes.
inline constexpr const char* kAttentionView = "studio-attention";
inline constexpr const char* kEntropyRewardView = "studio-entropy-reward";
inline constexpr const char* kReturnsView = "studio-returns";
inline constexpr const char* kMarkovLabView = "studio-markov-lab";
inline constexpr const char* kTsneView = "studio-tsne";
inline constexpr const char* kTrainingCurvesView = "studio-training-curves";
inline constexpr const char* kRunComparisonView = "studio-run-comparison";
inline constexpr const char* kSweepScoresView = "studio-sweep-scores";
inline constexpr const char* kTimelineView = "studio-viewer-timeline";
/// A recording of the Viewer tab (an MP4 clip, not a figure: `figure render` draws it through
/// decision-studio's --render-clip).
inline constexpr const char* kClipView = "studio-viewer-clip";

/// What the window calls a checkpoint's model: its label and variant, "hopper-medium-dt (dt)".
QString model_title(const std::string& checkpoint, const models::CheckpointInfo& info);

/// Whether `recipe` is one of a studio view's (analysis "studio-…").
bool is_view_recipe(const FigureRecipe& recipe);

/// The Attention tab: `windows` dataset windows of `checkpoint` inspected (and of `compared`, ""
/// for none, on the same windows), shown as `view` shows them now.
FigureRecipe attention_recipe(const std::string& checkpoint, const std::string& compared,
                              int windows, const viz::AttentionMapView& view);

/// The Entropy and reward tab: a rollout of `checkpoint` with `config`, the episode `view` shows.
FigureRecipe entropy_reward_recipe(const std::string& checkpoint,
                                   const models::RolloutConfig& config,
                                   const viz::EntropyRewardView& view);

/// What fed the Zeroing and target sweep tab: its last ablation and its last sweep, each when run.
struct ReturnsShown {
  struct Ablation {
    int episodes = 0;
    double target = 0.0;
  };
  struct Sweep {
    int episodes = 0;
    std::vector<double> targets;
    std::string compared;  ///< swept beside the checkpoint; "" for none
    double best_score = 0.0;
  };
  std::optional<Ablation> ablation;
  std::optional<Sweep> sweep;
};
FigureRecipe returns_recipe(const std::string& checkpoint, const ReturnsShown& shown);

/// The Markov lab: the run shown and the faint previous one (its first `previous_points`).
FigureRecipe markov_lab_recipe(const models::MarkovLabOptions& run,
                               const std::optional<models::MarkovLabOptions>& previous,
                               int previous_points);
/// markov_lab_recipe of what `view` shows.
FigureRecipe markov_lab_recipe(const viz::MarkovLabView& view);

/// What the Token t-SNE tab laid out: the checkpoint's tokens from `source`, with t-SNE's
/// settings as the window's job ran it (the others at analysis::TsneConfig's defaults).
struct TsneShown {
  std::string checkpoint;
  models::TokenSource source;
  double perplexity = 30.0;
  int iterations = 1000;
  int snapshot_every = 10;
  int threads = 1;
};
/// tsne's recipe of what `view` shows (the layout chosen on its slider, its colours) of `shown`.
FigureRecipe tsne_recipe(const TsneShown& shown, const viz::TsneView& view);

/// The Training tab's curves of the run in `folder` (its log, metrics.jsonl or metrics.csv, as a
/// hashed input), called `name` on screen. Throws FigureRecipeError for a folder without a log.
FigureRecipe training_curves_recipe(const std::string& folder, const std::string& name);

/// The Training tab's comparison: the runs checked (each its folder, whose log is a hashed input,
/// and the group it is drawn in), the metric (its key and the label the plot shows) and how the
/// groups are smoothed and banded.
struct ComparedRun {
  std::string folder, group;
};
FigureRecipe run_comparison_recipe(const std::vector<ComparedRun>& runs, const std::string& metric,
                                   const std::string& metric_label, double smoothing,
                                   analysis::Band band);

/// What every figure of a sweep is drawn from, as a recipe's inputs: its folder (option "sweep"),
/// and the hashes of sweep.json and of every cell's task.json and checkpoint.pt that exist.
FigureRecipe sweep_inputs_recipe(const sweep::Sweep& sweep);
/// The Sweep tab's scores of `sweep`, titled `title`, showing `measure`.
FigureRecipe sweep_scores_recipe(const sweep::Sweep& sweep, const std::string& title,
                                 viz::SweepMeasure measure);

/// What the Viewer tab's timeline shows of a policy's episode: the checkpoint, the episode's seed,
/// the conditioning from each step the user changed it (the first at step 0), the frames drawn,
/// the forks beside the main run (each forked at a step with a change, drawn to its frames), what
/// the forks' right axis shows (-1: the action difference, else a joint's qpos index, with its
/// label) and the bookmarks on the timeline.
struct TimelineShown {
  struct Fork {
    int step = 0;
    std::string change;  ///< as LivePlayer labels it ("target=1800", "checkpoint=/x/gdt.pt")
    int frames = 0;
    /// The file another checkpoint's fork plays: "" for the label's (recorded); read back, the
    /// recipe's input of the fork, wherever it was found.
    std::string checkpoint;
  };
  std::string checkpoint;
  std::uint64_t seed = 0;
  std::vector<models::StepConditions> changes;
  int frames = 0;
  std::vector<Fork> forks;
  int divergence = -1;
  std::string divergence_label;
  std::vector<RecipeBookmark> bookmarks;
};
FigureRecipe timeline_recipe(const TimelineShown& shown);
/// timeline_recipe read back (each fork's checkpoint: the recipe's input of the fork, wherever it
/// was found). Throws FigureRecipeError naming `where` and the key, or the path in the recipe's
/// `view` ("<where>: view: changes[0]: step is not a number"), for a recipe that is not a
/// timeline's or holds what a run cannot be.
TimelineShown timeline_shown(const FigureRecipe& recipe, const std::string& where);

/// How the Viewer tab looked while it recorded, beyond the run: where the camera was and what the
/// panel's controls showed (a clip of the whole panel shows them).
struct ClipLook {
  render::CameraView camera;  ///< track_body 1 follows the torso, -1 is a free camera
  bool effects = false;       ///< limbs coloured by the interventions' action change
  int tab = 0;  ///< the tab on show under the scene: conditioning, interventions, forks
  double target_field = 0.0;  ///< the values in the conditioning tab's fields
  models::ModalityZeroing zeroing = models::ModalityZeroing::None;
  int seed_field = 0;
  int attention_mode = 0;  ///< viz::AttentionMapView::Mode, with its layer and head
  int attention_layer = 0;
  int attention_head = 0;
  double fork_target = 0.0;  ///< the forks tab's target field
  int click_mode = 0;        ///< the interventions tab's click: ablate (0) or patch (1)
  double patch_target = 0.0;
  int divergence = -1;  ///< the timeline's right axis (TimelineShown::divergence)
  std::string font;     ///< the panel's type (QFont::toString: presentation mode's is larger)
  bool operator==(const ClipLook&) const = default;
};

/// A recording of the Viewer tab: the run it shows (run.frames unused; each fork's frames unused),
/// the model's title, the first step and the frames recorded at `fps` at `speed` times real time
/// (0: as fast as the policy acts, recorded at 1x), the area recorded (the scene alone or the whole
/// panel) at its size in pixels, the panel's size, the targets offered beside the target field and
/// the panel's look.
struct ClipShown {
  TimelineShown run;
  std::string title;
  int first = 0;
  int frames = 0;
  int fps = 30;
  double speed = 1.0;
  bool scene_only = false;
  int width = 0, height = 0;
  int panel_width = 0, panel_height = 0;
  std::vector<models::TargetChoice> targets;
  ClipLook look;
};
FigureRecipe clip_recipe(const ClipShown& shown);
/// clip_recipe read back. Throws FigureRecipeError naming `where` and the key, or the path in the
/// recipe's `view` ("<where>: view: camera: lookat has 2 items, not 3 (x, y, z)"), for a recipe
/// that is not a clip's or holds what a clip cannot be (no checkpoint, no frames, a size out of
/// range).
ClipShown clip_shown(const FigureRecipe& recipe, const std::string& where);
/// Throws FigureRecipeError naming `where` and the key when the clip's first or last frame, or a
/// fork, is past the end of its checkpoint's episode (the task's horizon): such a clip would play
/// for ever.
void check_clip_within_episode(const ClipShown& clip, const std::string& where);

/// Builds a view again from what was computed for it; on the thread that owns the QApplication.
using ViewBuilder = std::function<std::unique_ptr<viz::FigureSource>()>;
/// Computes what the view of `recipe` was shown (the long part: rollouts, inspections, training;
/// polls `progress`), on any thread, and returns how to build the view from it. The inputs must
/// have been checked (check_inputs). Throws FigureRecipeError naming `where` and the key for a
/// recipe this studio cannot follow.
ViewBuilder compute_view(const FigureRecipe& recipe, const std::string& where,
                         const Progress& progress = {});

}  // namespace dstudio::recipes
