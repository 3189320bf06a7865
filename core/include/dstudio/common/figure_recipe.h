#pragma once
/// \file
/// Figure recipes: what made an exported figure, written beside it as <figure>.recipe.json, so
/// that an author can trace a figure of a paper to its inputs and draw it again
/// (`dstudio figure render RECIPE --out FILE`). A recipe names the analysis and its options, the
/// checkpoint(s) and dataset with content hashes of what was read, the seeds, the figure's size and
/// fonts in the export dialog's terms, and the files written. Re-rendering first checks that the
/// inputs are still what the recipe was made from (check_inputs): a figure is never drawn again
/// from a checkpoint or a dataset that changed.
///
/// A recipe's paths are where it was written: an input in the recipe's folder or below it is named
/// relative to that folder ("./dt.pt", "./runs/dt"), so that a folder of figures moved or copied
/// with its inputs draws from the inputs beside it; others are absolute, and `figure render --root`
/// looks for them under another folder (read_figure_recipe), taking a file found there only when it
/// carries the recorded hash.
///
/// The JSON is read strictly: every field's type is checked and a problem names its key; keys this
/// version does not know are ignored (a later minor addition); a newer version is refused. No Qt,
/// no LibTorch.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dstudio/common/error.h"
#include "dstudio/common/progress.h"

namespace dstudio {

/// A recipe that cannot be read, or whose inputs are not what it was made from. The message names
/// the file and the key, or the input and the hash that differs.
class FigureRecipeError : public Error {
 public:
  using Error::Error;
};

/// The "format" tag of every recipe.
inline constexpr const char* kFigureRecipeFormat = "decision-studio-figure-recipe";
/// The version written; recipes of a later version are refused. Version 2 names inputs beside or
/// below the recipe relative to its folder; version 1 named every path absolute (still read).
inline constexpr int kFigureRecipeVersion = 2;

/// A step of an episode marked with a name and a note, as the studio's timeline keeps them.
struct RecipeBookmark {
  std::int64_t step = 0;
  std::string name;
  std::string note;
  bool operator==(const RecipeBookmark&) const = default;
};

/// A further file the figure was computed from, with its content hash (a training run's
/// metrics.jsonl for the training curves): `option` is the command-line option that named it.
struct RecipeInput {
  std::string option;  ///< "run", "compare": the option without its dashes
  std::string path;    ///< absolute (in a file: relative to the recipe's folder when in it)
  std::string hash;    ///< file_content_hash(path) when the recipe was made
  bool operator==(const RecipeInput&) const = default;
};

/// How the figure is drawn, in the export dialog's terms (viz::FigureStyle): inches, points, dpi.
/// The values are those in force, a preset's included, so a later change of a venue preset does not
/// change a re-rendered figure; `preset` says which venue they came from.
struct RecipeFigure {
  std::string name;         ///< the analysis's figure: its files are <name>.pdf/.svg/.png/.csv
  std::string preset;       ///< the venue preset's slug or name as given; "" for none
  double width = 3.25;      ///< inches
  double height = 0.0;      ///< inches; 0: the width over the golden ratio
  double font = 8.0;        ///< points: title, legend
  double axis_font = 0.0;   ///< points: axis titles; 0: `font`
  double tick_font = 0.0;   ///< points: tick labels; 0: 0.85 x `font`
  double line_width = 1.2;  ///< points
  std::string font_family = "DejaVu Sans";
  int dpi = 300;                     ///< of the PNG
  std::vector<std::string> formats;  ///< of "pdf", "svg", "png" (a viewer clip: "mp4")
  bool show_title = true;
  /// The title and axis titles given in the export dialog; "" for the figure's own.
  std::string title, x_title, y_title;
  bool operator==(const RecipeFigure&) const = default;
};

/// Everything that made one exported figure.
struct FigureRecipe {
  std::string format = kFigureRecipeFormat;
  int version = kFigureRecipeVersion;
  std::string analysis;  ///< the analysis registry's name ("attention", "rtg-sweep")
  /// The analysis's options in their command-line spelling ("max-tokens"), values as the command
  /// line takes them, defaults included; except those held by the fields below (--compare of a
  /// checkpoint, --seed, --step, --target).
  std::map<std::string, std::string> options;
  /// What a view recipe records beyond its options (a viewer run's changes and forks, a clip's
  /// camera and look), a JSON object as text; in a file, the object itself under "view", left out
  /// when this is "" (every analysis's recipe).
  std::string view;
  /// Every path below is absolute in memory; in a file, one in the recipe's folder or below it is
  /// written relative to that folder ("./dt.pt"), and so is an option naming such a file or
  /// folder.
  std::string checkpoint;       ///< "" when the analysis takes none
  std::string checkpoint_hash;  ///< file_content_hash(checkpoint)
  std::string compare;          ///< a second checkpoint (--compare), absolute; "" for none
  std::string compare_hash;
  /// The dataset the analysis was given (--dataset) or the checkpoint's own where it was found;
  /// "" when there is none (the checkpoint's dataset is not on this machine).
  std::string dataset;
  /// data::Dataset::fingerprint, "xxh3-128:<hex>"; "" when the dataset could not be read (an
  /// analysis that takes only a reference line from it draws without): it must still be unreadable.
  std::string dataset_fingerprint;
  /// True when --dataset named it; false for the checkpoint's own, which the analysis finds itself.
  bool dataset_given = false;
  std::vector<RecipeInput> inputs;  ///< further files read, each with its hash
  std::vector<std::int64_t> seeds;  ///< --seed: episode e of a rollout resets with seed + e
  std::optional<std::int64_t> episode;
  std::optional<std::int64_t> step;
  std::optional<double> target;  ///< the target return
  std::string zeroing;           ///< a modality zeroed ("rtg", "states", "actions"); "" for none
  std::vector<std::string> interventions;  ///< specs as `--intervene` takes them: "head:1.1=zero"
  std::vector<RecipeBookmark> bookmarks;
  RecipeFigure figure;
  std::vector<std::string> outputs;  ///< the files written for the figure, relative to the recipe
  std::string studio_version;        ///< studio_version() of the program that wrote it
  /// When it was made, UTC ("2026-01-31T12:00:00Z"): the only field a re-render need not match.
  std::string created;
  bool operator==(const FigureRecipe&) const = default;
};

/// The recipe as JSON text (2-space indented, fields in the order above; absent optional numbers,
/// and the texts written as null when empty, as null).
std::string to_json(const FigureRecipe& recipe);

/// Reads a recipe's JSON. Throws FigureRecipeError "WHERE: key problem" ("r.json: figure: dpi must
/// be at most 2400 (is 9000)") for text that is not JSON, a missing required key (format, version,
/// analysis, figure, figure.name), a field of the wrong type or out of its range, a hash that is
/// not "xxh3-128:" and 32 hexadecimal digits, a path without its hash, another format tag or a
/// newer version. Unknown keys are ignored.
FigureRecipe parse_figure_recipe(const std::string& text, const std::string& where);

/// An input of a recipe read from another place than the recipe names (read_figure_recipe's
/// roots).
struct RecipeInputFound {
  std::string what;      ///< "checkpoint", "dataset", "--run input", "option --sweep"
  std::string recorded;  ///< the path the recipe names
  std::string found;     ///< the path read instead
  bool operator==(const RecipeInputFound&) const = default;
};

/// parse_figure_recipe of a file (a regular file of at most 16 MiB), its relative paths read as in
/// the recipe's folder (paths in memory are absolute). Throws FigureRecipeError naming it.
///
/// With `roots` (`figure render --root DIR`), each input the recipe names by an absolute path is
/// looked for under each root in turn: the path's tail, longest first (/home/a/paper/ckpt/dt.pt
/// under ROOT: ROOT/home/a/paper/ckpt/dt.pt, ROOT/a/paper/ckpt/dt.pt, ..., ROOT/ckpt/dt.pt,
/// ROOT/dt.pt), and taken only when it carries the recorded hash (a dataset: its fingerprint); an
/// input not found so stays where the recipe names it. An option naming the folder of an input
/// found elsewhere (a run's folder, a sweep's) follows it, and so does every input below that
/// folder. `found`, when given, receives each input and option read from another place.
FigureRecipe read_figure_recipe(const std::filesystem::path& path,
                                const std::vector<std::filesystem::path>& roots = {},
                                std::vector<RecipeInputFound>* found = nullptr);

/// Writes `recipe` (its paths absolute) to `path` atomically, as to_json writes it but for its
/// paths: those in the folder of `path` or below it relative to that folder, "./<path>".
void write_figure_recipe(const std::filesystem::path& path, const FigureRecipe& recipe);

/// `recipe` with its paths as a recipe in `folder` names them (write_figure_recipe): the
/// checkpoints, the dataset, the further inputs and every option naming an existing file or folder,
/// when in `folder` or below it, made "./<path relative to folder>" ("." for the folder itself).
FigureRecipe relative_to_folder(const FigureRecipe& recipe, const std::filesystem::path& folder);
/// The inverse of relative_to_folder: a relative path of `recipe` (an option's only when it
/// starts "./" or is ".", in a recipe of version 2 on) read as in `folder`, made absolute.
FigureRecipe resolved_in_folder(const FigureRecipe& recipe, const std::filesystem::path& folder);

/// "xxh3-128:<32 hexadecimal digits>": XXH3's 128-bit hash of the file's bytes, the high half
/// first (as `xxhsum -H2` prints it). Throws FigureRecipeError naming a file that is missing, is
/// not a regular file or cannot be read.
std::string file_content_hash(const std::filesystem::path& path);

/// What check_inputs throws: one line for each input that changed or is missing.
class RecipeInputsError : public FigureRecipeError {
 public:
  RecipeInputsError(const std::string& message, std::vector<std::string> problems, bool missing)
      : FigureRecipeError(message), problems_(std::move(problems)), missing_(missing) {}
  /// One input each: "checkpoint /x/dt.pt is missing (the recipe was made from xxh3-128:…)".
  [[nodiscard]] const std::vector<std::string>& problems() const { return problems_; }
  /// Whether an input is missing (not only changed): one that moved may be found with a root.
  [[nodiscard]] bool missing() const { return missing_; }

 private:
  std::vector<std::string> problems_;
  bool missing_;
};

/// Checks that the recipe's inputs are what it was made from: the hash of the checkpoint, of the
/// compared checkpoint and of every further input, and the dataset's fingerprint (the dataset is
/// read in the reader process, data/reader_process.h). Throws RecipeInputsError naming every input
/// that changed or is missing, one a line, e.g. "checkpoint /x/dt.pt changed: its hash is
/// xxh3-128:aaaa, the recipe was made from xxh3-128:bbbb"; a single problem is the message itself,
/// several follow a line that counts them (at most kMaxListedInputs, then how many more). Polls
/// `progress` (throws Cancelled).
void check_inputs(const FigureRecipe& recipe, const Progress& progress = {});
/// The most inputs check_inputs lists one by one.
inline constexpr std::size_t kMaxListedInputs = 20;

/// The time now, UTC, as recipes record it: "2026-01-31T12:00:00Z".
std::string recipe_time_now();

}  // namespace dstudio
