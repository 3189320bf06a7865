// Figure recipes from the command line: every analysis `dstudio analyze` offers writes a recipe
// beside each figure, and `dstudio figure render` draws the figure again from it, the PNG and its
// CSV byte for byte; a checkpoint or dataset changed since is refused, naming what differs.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cli_run.h"
#include "dstudio/common/figure_recipe.h"
#include "h5_fixture.h"

namespace {

namespace fs = std::filesystem;
using testing::HasSubstr;
using testing::Not;
using Result = dstudio::test::CliResult;

std::string bytes_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The shipped DT of hopper-medium: the smallest shipped checkpoint with every kind of map.
const std::string& shipped_checkpoint() {
  static const std::string path =
      fs::canonical(fs::path(DSTUDIO_TEST_DATA) / "../../resources/checkpoints/hopper-medium-dt.pt")
          .string();
  return path;
}

// The shipped DC of hopper-medium: the second checkpoint of a comparison.
const std::string& compared_checkpoint() {
  static const std::string path =
      fs::canonical(fs::path(DSTUDIO_TEST_DATA) / "../../resources/checkpoints/hopper-medium-dc.pt")
          .string();
  return path;
}

// The cheapest options that still draw each studio analysis's figures: few windows, one short
// episode. An analysis not listed (a new one, or a plugin's) runs with its defaults, so it is
// covered too, only slower.
const std::map<std::string, std::string>& cheap_options() {
  static const std::map<std::string, std::string> options = {
      {"attention", "--windows 2 --layer 1"},
      {"entropy", "--episodes 1 --windows 2"},
      {"tsne", "--windows 3 --perplexity 5 --iterations 250 --snapshot-every 0"},
      {"ablation", "--episodes 1 --seeds 1"},
      {"locality", "--windows 2"},
      {"rtg-sweep", "--multiples 1 --episodes 1"},
      // Without closed-loop episodes: one at each of K contexts, or for each head and MLP ablated,
      // costs seconds. Their score figures are lines and bars as the others, and episodes played
      // from a seed are drawn again byte for byte in ablation, rtg-sweep and steering.
      {"knockout", "--windows 2 --episodes 0"},
      {"heads", "--windows 2 --episodes 0"},
      {"patching", "--windows 2"},
      {"action-lens", "--windows 2"},
      {"attribution", "--windows 2"},
      {"probes", "--windows 8"},
      // Directions of one block, and one episode at each of two alphas, so that it draws.
      {"steering", "--windows 2 --episodes 1 --alphas 0,1 --layers 1"},
  };
  return options;
}

// A small hopper dataset of random actions for the analyses' windows (the shipped checkpoint's own
// dataset is made on first use, which takes minutes), and a short training run for the curves.
class FigureRecipes : public testing::Test {
 protected:
  static void SetUpTestSuite() {
#ifdef DSTUDIO_HAVE_FIGURES
    dir_ = new dstudio::test::TempDir;
    auto r = dstudio::test::run_cli(
        "dataset generate --env hopper --kind random --transitions 4000 --seed 1 --out " +
            dataset(),
        *dir_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = dstudio::test::run_cli(
        "train --variant dt --dataset " + dataset() +
            " --steps 20 --threads 1 --config '{\"hidden\": 16, \"context_length\": 5}' --out " +
            run_folder(),
        *dir_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
#endif
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
#ifndef DSTUDIO_HAVE_FIGURES
    GTEST_SKIP() << "dstudio analyze needs the GUI libraries (DSTUDIO_BUILD_GUI)";
#endif
  }

  static std::string dataset() {
    return (*dir_ / "random.hdf5").string();
  }
  static std::string run_folder() {
    return (*dir_ / "run").string();
  }
  static Result run(const std::string& args) {
    return dstudio::test::run_cli(args, *dir_);
  }

  // The command line of `analyze <name>` on the shipped checkpoint (the training curves on the
  // run), writing into `out`.
  static std::string analyze_command(const std::string& name, const fs::path& out) {
    const auto cheap = cheap_options().find(name);
    std::string command = "analyze " + name + " --out " + out.string() + " " +
                          (cheap == cheap_options().end() ? "" : cheap->second);
    if (name == "training") return command + " --run " + run_folder();
    command += " --checkpoint " + shipped_checkpoint();
    // One comparison, so that the recipe's second checkpoint is drawn again too.
    if (name == "locality") command += " --compare " + compared_checkpoint();
    // The zeroing ablation plays episodes only and refuses a dataset.
    if (name != "ablation") command += " --dataset " + dataset();
    return command;
  }

  static inline dstudio::test::TempDir* dir_ = nullptr;
};

// The analyses `dstudio analyze --help` lists, as a user finds them.
std::vector<std::string> offered_analyses(const dstudio::test::TempDir& dir) {
  const auto r = dstudio::test::run_cli("analyze --help", dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> names;
  std::istringstream lines(r.out.substr(r.out.find("Subcommands:")));
  const std::regex entry(R"(^  ([a-z0-9][a-z0-9-]*)\s{2,}\S)");
  for (std::string line; std::getline(lines, line);)
    if (std::smatch m; std::regex_search(line, m, entry)) names.push_back(m[1]);
  return names;
}

TEST_F(FigureRecipes, EveryAnalysisFigureIsDrawnAgainByteForByteFromItsRecipe) {
  const auto analyses = offered_analyses(*dir_);
  // The studio's own at least; plugins' come on top.
  for (const auto& [name, options] : cheap_options())
    EXPECT_THAT(analyses, testing::Contains(name)) << name << " is no longer offered";
  EXPECT_THAT(analyses, testing::Contains("training"));
  const std::string checkpoint_hash = dstudio::file_content_hash(shipped_checkpoint());

  for (const auto& name : analyses) {
    SCOPED_TRACE("analyze " + name);
    const auto out = *dir_ / ("analyze-" + name);
    auto r = run(analyze_command(name, out) + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto summary = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(summary.is_discarded()) << r.out;

    // Every figure file written has a recipe of its name beside it that lists it.
    std::set<std::string> figures, recipes;
    for (const auto& entry : fs::directory_iterator(out)) {
      const std::string file = entry.path().filename().string();
      const auto ext = entry.path().extension().string();
      if (file.ends_with(".recipe.json"))
        recipes.insert(file.substr(0, file.size() - std::string(".recipe.json").size()));
      else if (ext == ".pdf" || ext == ".svg" || ext == ".png")
        figures.insert(entry.path().stem().string());
    }
    EXPECT_FALSE(figures.empty()) << "the cheap options drew no figure";
    EXPECT_EQ(figures, recipes);
    for (const auto& f : summary.at("files")) EXPECT_TRUE(fs::exists(f.get<std::string>())) << f;

    for (const auto& figure : recipes) {
      SCOPED_TRACE(figure);
      const auto recipe_path = out / (figure + ".recipe.json");
      const auto recipe = dstudio::read_figure_recipe(recipe_path);
      EXPECT_EQ(recipe.analysis, name);
      EXPECT_EQ(recipe.figure.name, figure);
      EXPECT_EQ(recipe.figure.formats, (std::vector<std::string>{"pdf", "svg", "png"}));
      for (const char* ext : {".pdf", ".svg", ".png", ".csv"})
        EXPECT_THAT(recipe.outputs, testing::Contains(figure + ext));
      if (name == "training") {
        EXPECT_EQ(recipe.checkpoint, "");
        ASSERT_EQ(recipe.inputs.size(), 1u);
        EXPECT_EQ(recipe.inputs[0].path, (fs::path(run_folder()) / "metrics.jsonl").string());
      } else {
        EXPECT_EQ(recipe.checkpoint, shipped_checkpoint());
        EXPECT_EQ(recipe.checkpoint_hash, checkpoint_hash);
        EXPECT_EQ(recipe.seeds, (std::vector<std::int64_t>{0}));
      }
      if (name == "locality") {
        EXPECT_EQ(recipe.compare, compared_checkpoint());
        EXPECT_EQ(recipe.compare_hash, dstudio::file_content_hash(compared_checkpoint()));
        EXPECT_EQ(recipe.options.count("compare"), 0u);  // a field of its own
      }
      if (name != "training" && name != "ablation") {
        EXPECT_EQ(recipe.dataset, dataset());
        EXPECT_TRUE(recipe.dataset_given);
      }

      // Drawn again, elsewhere: the same pixels and the same numbers.
      const auto again = *dir_ / ("render-" + name) / (figure + ".png");
      fs::create_directories(again.parent_path());
      r = run("figure render " + recipe_path.string() + " --out " + again.string());
      ASSERT_EQ(r.exit_code, 0) << r.err;
      EXPECT_THAT(r.err, Not(HasSubstr("warning")));
      const std::string png = bytes_of(again);
      EXPECT_FALSE(png.empty());
      EXPECT_TRUE(png == bytes_of(out / (figure + ".png")))
          << again << " differs from the analysis's";
      const std::string csv = bytes_of(fs::path(again).replace_extension(".csv"));
      EXPECT_FALSE(csv.empty());
      EXPECT_EQ(csv, bytes_of(out / (figure + ".csv")));
    }
  }
}

// The figure in question, made from a copy of the shipped checkpoint.
fs::path recipe_on(const fs::path& checkpoint, const fs::path& dataset, const fs::path& out,
                   const dstudio::test::TempDir& dir) {
  const auto r = dstudio::test::run_cli("analyze attention --windows 2 --layer 1 --checkpoint " +
                                            checkpoint.string() + " --dataset " + dataset.string() +
                                            " --out " + out.string(),
                                        dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return out / "attention_layer1.recipe.json";
}

TEST_F(FigureRecipes, AChangedCheckpointIsRefusedNamingTheHashThatDiffers) {
  const auto copy = *dir_ / "flipped.pt";
  fs::copy_file(shipped_checkpoint(), copy, fs::copy_options::overwrite_existing);
  const auto recipe_path = recipe_on(copy, dataset(), *dir_ / "before-flip", *dir_);
  const auto recipe = dstudio::read_figure_recipe(recipe_path);
  ASSERT_EQ(recipe.checkpoint, copy.string());

  // One bit of one byte in the middle of the weights.
  std::string bytes = bytes_of(copy);
  bytes[bytes.size() / 2] ^= 0x10;
  std::ofstream(copy, std::ios::binary | std::ios::trunc) << bytes;
  const std::string now = dstudio::file_content_hash(copy);
  ASSERT_NE(now, recipe.checkpoint_hash);

  const auto out = *dir_ / "flipped.png";
  const auto r = run("figure render " + recipe_path.string() + " --out " + out.string());
  EXPECT_EQ(r.exit_code, 1) << r.err;  // bad input, as run_guarded reports it
  EXPECT_THAT(r.err, HasSubstr("checkpoint " + copy.string() + " changed: its hash is " + now +
                               ", the recipe was made from " + recipe.checkpoint_hash));
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(fs::path(out).replace_extension(".csv")));
}

// The reliability campaign's recipe cases, as a table: an analysis's recipe with one value
// changed (a JSON pointer and the value), drawn again, ends with its exit code and a message that
// names the key; nothing is written. (A clip's and a sweep figure's cases are in their own tests.)
TEST_F(FigureRecipes, TheCampaignsRecipeCasesEndWithTheirCodeAndMessage) {
  const auto recipe_path = recipe_on(shipped_checkpoint(), dataset(), *dir_ / "campaign", *dir_);
  const auto original = nlohmann::json::parse(bytes_of(recipe_path));
  struct Case {
    std::string pointer;
    nlohmann::json value;
    int exit_code;
    std::string said;
  };
  const std::vector<Case> cases = {
      {"/options/windows", "12abc", 1, "--windows of the analysis 'attention' needs a number"},
      {"/options/windows", "1e9", 1, "--windows of the analysis 'attention' must be in [1, 10000]"},
      {"/options/windows", "-1", 1, "must be in [1, 10000], not -1"},
      {"/options/threads", "0", 1, "--threads of the analysis 'attention' must be in [1, 64]"},
      {"/options/nosuch", "1", 1, "the analysis 'attention' has no option 'nosuch'"},
      {"/options/layer", "9", 2, "--layer 9: the model has layers 1 to 3"},
      {"/seeds", nlohmann::json::array({-1}), 1, "--seed of the analysis 'attention' must be in"},
      {"/seeds", nlohmann::json::array({1e30}), 1, "seeds[0] is too large"},
      {"/figure/dpi", 0, 1, "figure: dpi must be at least 1 (is 0)"},
      {"/figure/dpi", 100000, 1, "figure: dpi must be at most 2400 (is 100000)"},
      {"/figure/width", -1, 1, "figure: width must be above 0 (is -1)"},
      {"/figure/line_width", 1e9, 1, "figure: line_width must be at most 20 (is 1000000000)"},
      {"/figure/font", 0, 1, "figure: font must be above 0 (is 0)"},
      {"/figure/name", "nosuch", 1, "'figure.name': the analysis drew no figure 'nosuch'"},
      {"/analysis", "nosuch", 1, "'analysis': this studio has no analysis 'nosuch'"},
      {"/version", 99, 1, "version is 99, newer than this studio reads"},
      {"/format", "other", 1, "format is 'other', not 'decision-studio-figure-recipe'"},
      {"/checkpoint_hash", "xxh3-128:00000000000000000000000000000000", 1, "changed: its hash is"},
  };
  const auto changed = recipe_path.parent_path() / "changed.recipe.json";
  const auto out = *dir_ / "campaign-out" / "changed.png";
  for (const auto& c : cases) {
    auto j = original;
    j[nlohmann::json::json_pointer(c.pointer)] = c.value;
    std::ofstream(changed, std::ios::trunc) << j.dump();
    const auto r = run("figure render " + changed.string() + " --out " + out.string());
    EXPECT_EQ(r.exit_code, c.exit_code) << c.pointer << " = " << c.value.dump() << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.said)) << c.pointer << " = " << c.value.dump();
    EXPECT_FALSE(fs::exists(out)) << c.pointer;
    EXPECT_FALSE(fs::exists(fs::path(out).replace_extension(".csv"))) << c.pointer;
  }
}

// A figure and its numbers are written together or not at all: where the CSV cannot be written (a
// folder has its name) neither is, no temporary stays, and nothing is said to be written; where it
// can, both are, and both are named.
TEST_F(FigureRecipes, AFigureAndItsNumbersAreWrittenTogetherOrNotAtAll) {
  const auto recipe_path = recipe_on(shipped_checkpoint(), dataset(), *dir_ / "together", *dir_);
  const auto folder = *dir_ / "together-out";
  const auto out = folder / "sib.png", csv = folder / "sib.csv";
  fs::create_directories(csv);
  auto r = run("figure render " + recipe_path.string() + " --out " + out.string());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr(csv.string() + ": cannot be written (a folder has that name)"));
  EXPECT_THAT(r.out, Not(HasSubstr("wrote")));
  EXPECT_FALSE(fs::exists(out));
  for (const auto& entry : fs::directory_iterator(folder))
    EXPECT_EQ(entry.path(), csv) << "left behind: " << entry.path();
  fs::remove(csv);
  r = run("figure render " + recipe_path.string() + " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("wrote " + out.string() + " and " + csv.string()));
  EXPECT_TRUE(fs::is_regular_file(out));
  EXPECT_TRUE(fs::is_regular_file(csv));
}

TEST_F(FigureRecipes, AChangedDatasetIsRefusedNamingTheFingerprintThatDiffers) {
  const auto data = *dir_ / "changing.hdf5";
  fs::copy_file(dataset(), data, fs::copy_options::overwrite_existing);
  const auto recipe_path = recipe_on(shipped_checkpoint(), data, *dir_ / "before-new-data", *dir_);
  const auto recipe = dstudio::read_figure_recipe(recipe_path);
  ASSERT_EQ(recipe.dataset, data.string());

  // Other transitions of the same shapes under the same name.
  auto r = run("dataset synth --transitions 2000 --out " + data.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = *dir_ / "new-data.png";
  r = run("figure render " + recipe_path.string() + " --out " + out.string());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err,
              HasSubstr("dataset " + data.string() + " changed: its fingerprint is xxh3-128:"));
  EXPECT_THAT(r.err, HasSubstr(", the recipe was made from " + recipe.dataset_fingerprint));
  EXPECT_FALSE(fs::exists(out));
}

// A folder of figures made with its checkpoint and dataset inside it names them relative to the
// recipe: a copy of the folder is drawn again from the copy's inputs, whatever became of the
// original's.
TEST_F(FigureRecipes, ACopiedFolderIsDrawnAgainFromTheCopysInputs) {
  const auto folder = *dir_ / "bundle";
  fs::create_directories(folder / "data");
  fs::copy_file(shipped_checkpoint(), folder / "dt.pt", fs::copy_options::overwrite_existing);
  fs::copy_file(dataset(), folder / "data" / "random.hdf5", fs::copy_options::overwrite_existing);
  const auto recipe_path =
      recipe_on(folder / "dt.pt", folder / "data" / "random.hdf5", folder, *dir_);
  const auto written = nlohmann::json::parse(bytes_of(recipe_path));
  EXPECT_EQ(written.at("checkpoint"), "./dt.pt");
  EXPECT_EQ(written.at("dataset"), "./data/random.hdf5");

  const auto copy = *dir_ / "bundle-copy";
  fs::remove_all(copy);
  fs::copy(folder, copy, fs::copy_options::recursive);
  // The original's checkpoint is now another model, its dataset gone.
  fs::copy_file(compared_checkpoint(), folder / "dt.pt", fs::copy_options::overwrite_existing);
  fs::remove_all(folder / "data");

  const auto again = copy / "again.png";
  auto r = run("figure render " + (copy / "attention_layer1.recipe.json").string() + " --out " +
               again.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(bytes_of(again), bytes_of(copy / "attention_layer1.png"));
  EXPECT_EQ(bytes_of(copy / "again.csv"), bytes_of(copy / "attention_layer1.csv"));
  // The original's recipe is refused: its folder no longer holds what it was made from.
  r = run("figure render " + recipe_path.string() + " --out " + (folder / "again.png").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("checkpoint " + (folder / "dt.pt").string() + " changed"));
}

// A checkpoint names the dataset it was trained on where it was: a copy of a folder holding both
// draws again while that dataset, the same arrays, is still there (the analysis reads it through
// the checkpoint), and says the checkpoint's own dataset is not on this machine once it is gone.
TEST_F(FigureRecipes, ACopiedCheckpointsOwnDatasetIsTheSameArraysWhereverItNamesIt) {
  const auto folder = *dir_ / "trained-bundle";
  fs::remove_all(folder);
  fs::create_directories(folder);
  fs::copy_file(dataset(), folder / "data.hdf5");
  auto r = run("train --variant dt --dataset " + (folder / "data.hdf5").string() +
               " --steps 5 --threads 1 --config '{\"hidden\": 16, \"context_length\": 5}' --out " +
               (folder / "run").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run("analyze attention --windows 2 --layer 1 --checkpoint " +
          (folder / "run" / "checkpoint.pt").string() + " --out " + folder.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto written = nlohmann::json::parse(bytes_of(folder / "attention_layer1.recipe.json"));
  EXPECT_EQ(written.at("checkpoint"), "./run/checkpoint.pt");
  EXPECT_EQ(written.at("dataset"), "./data.hdf5");
  EXPECT_EQ(written.at("dataset_given"), false);

  const auto copy = *dir_ / "trained-bundle-copy";
  fs::remove_all(copy);
  fs::copy(folder, copy, fs::copy_options::recursive);
  const auto recipe = (copy / "attention_layer1.recipe.json").string();
  r = run("figure render " + recipe + " --out " + (copy / "again.png").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(bytes_of(copy / "again.png"), bytes_of(copy / "attention_layer1.png"));
  EXPECT_EQ(bytes_of(copy / "again.csv"), bytes_of(copy / "attention_layer1.csv"));

  fs::remove(folder / "data.hdf5");
  r = run("figure render " + recipe + " --out " + (copy / "gone.png").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("'dataset': the checkpoint's own dataset is not on this machine"));
  EXPECT_FALSE(fs::exists(copy / "gone.png"));
}

// Inputs named by absolute paths that moved since are missing, one a line, with how to find
// them; --root finds each under another folder by the end of its path, only with the recorded
// hash (a file of the same name and another content is passed over).
TEST_F(FigureRecipes, InputsThatMovedAreListedAndFoundUnderRoot) {
  const auto project = *dir_ / "project";
  fs::remove_all(project);
  fs::create_directories(project / "ckpt");
  fs::copy_file(shipped_checkpoint(), project / "ckpt" / "dt.pt");
  fs::copy_file(dataset(), project / "data.hdf5");
  const auto figures = *dir_ / "moved-figures";
  const auto recipe_path =
      recipe_on(project / "ckpt" / "dt.pt", project / "data.hdf5", figures, *dir_);
  const auto disk = *dir_ / "disk";
  fs::remove_all(disk);
  fs::create_directories(disk);
  fs::rename(project, disk / "project");
  const auto decoy = *dir_ / "decoy";
  fs::create_directories(decoy / "ckpt");
  fs::copy_file(compared_checkpoint(), decoy / "ckpt" / "dt.pt",
                fs::copy_options::overwrite_existing);

  const auto out = figures / "again.png";
  auto r = run("figure render " + recipe_path.string() + " --out " + out.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(recipe_path.string() +
                               ": 2 of the recipe's inputs are missing or not what it was made "
                               "from:\n  checkpoint " +
                               (project / "ckpt" / "dt.pt").string() + " is missing"));
  EXPECT_THAT(r.err, HasSubstr("\n  dataset " + (project / "data.hdf5").string() + " is missing"));
  EXPECT_THAT(r.err, HasSubstr("--root DIR"));
  EXPECT_FALSE(fs::exists(out));

  r = run("figure render " + recipe_path.string() + " --out " + out.string() + " --root " +
          decoy.string() + " --root " + disk.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("checkpoint " + (project / "ckpt" / "dt.pt").string() +
                               " read from " + (disk / "project" / "ckpt" / "dt.pt").string()));
  EXPECT_THAT(r.err, HasSubstr("dataset " + (project / "data.hdf5").string() + " read from " +
                               (disk / "project" / "data.hdf5").string()));
  EXPECT_EQ(bytes_of(out), bytes_of(figures / "attention_layer1.png"));
  EXPECT_EQ(bytes_of(figures / "again.csv"), bytes_of(figures / "attention_layer1.csv"));
}

// A recipe of one of the studio's views that this studio cannot follow is refused, naming the
// key, before anything is computed; nothing is written.
TEST_F(FigureRecipes, AViewsRecipeThatCannotBeFollowedIsRefusedNamingTheKey) {
  const auto refused = [&](const std::string& analysis, const std::string& figure,
                           const std::string& said) {
    dstudio::FigureRecipe recipe;
    recipe.analysis = analysis;
    recipe.figure.name = figure;
    const auto path = *dir_ / "view.recipe.json";
    dstudio::write_figure_recipe(path, recipe);
    const auto out = *dir_ / "view.png";
    const auto r = run("figure render " + path.string() + " --out " + out.string());
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr("error: " + path.string() + ": "));
    EXPECT_THAT(r.err, HasSubstr(said));
    EXPECT_FALSE(fs::exists(out));
  };
  refused("studio-nothing", "tsne",
          "'analysis': this studio has no view 'studio-nothing' (it has studio-attention, ");
  refused("studio-nothing", "tsne", "studio-viewer-timeline");
  refused("studio-markov-lab", "tsne",
          "'figure.name': the view 'studio-markov-lab' draws markov_lab*, not tsne");
  refused("studio-markov-lab", "markov_lab_loss", "'options.p': missing");
  refused("studio-viewer-timeline", "divergence", "'checkpoint': missing");
}

// A Viewer tab clip's recipe is checked here before the studio is asked to draw it: an MP4 it
// must be, only a clip is one, what a clip needs is named when missing, and a changed checkpoint
// is refused naming both hashes. Nothing is written. (Drawing clips: gui_render_tests.)
TEST_F(FigureRecipes, AViewerClipsRecipeIsCheckedBeforeTheStudioDrawsIt) {
  const auto copy = *dir_ / "clip-policy.pt";
  fs::copy_file(shipped_checkpoint(), copy, fs::copy_options::overwrite_existing);
  dstudio::FigureRecipe clip;
  clip.analysis = "studio-viewer-clip";
  clip.figure.name = "clip";
  clip.figure.formats = {"mp4"};
  clip.checkpoint = copy.string();
  clip.checkpoint_hash = dstudio::file_content_hash(copy);
  clip.seeds = {3};
  clip.options = {
      {"changes", R"([{"step":0,"target":3600.0,"zeroing":"none","interventions":[]}])"},
      {"forks", "[]"},
      {"divergence", "-1"},
      {"title", "hopper-medium-dt (dt)"},
      {"first", "0"},
      {"frames", "4"},
      {"fps", "30"},
      {"speed", "1"},
      {"area", "scene"},
      {"width", "640"},
      {"height", "480"},
      {"panel-width", "1000"},
      {"panel-height", "700"},
      {"targets", R"([{"value":3600.0,"label":"task reference 3600"}])"},
      {"camera",
       R"({"track":1,"distance":4.0,"azimuth":90.0,"elevation":-10.0,"lookat":[0.0,0.0,1.0]})"},
      {"look",
       R"({"effects":false,"tab":0,"target":3600.0,"zeroing":"none","seed":3,"attention-mode":0,)"
       R"("attention-layer":0,"attention-head":-1,"fork-target":3600.0,"click":0,)"
       R"("patch-target":1200.0,"font":""})"},
  };
  const auto write = [&](const dstudio::FigureRecipe& recipe, const std::string& name) {
    const auto path = *dir_ / (name + ".recipe.json");
    dstudio::write_figure_recipe(path, recipe);
    return path.string();
  };
  const auto refused = [&](const std::string& recipe, const std::string& out, int code,
                           const std::string& said) {
    const auto r = run("figure render " + recipe + " --out " + out);
    EXPECT_EQ(r.exit_code, code) << r.err;
    EXPECT_THAT(r.err, HasSubstr(said));
    EXPECT_FALSE(fs::exists(out)) << out;
  };
  const auto clip_path = write(clip, "clip");
  EXPECT_EQ(dstudio::read_figure_recipe(clip_path), clip) << "an MP4 recipe reads back";
  refused(clip_path, (*dir_ / "clip.png").string(), 2, "a viewer clip is drawn as an MP4 (.mp4)");
  // A figure is not drawn as a video.
  const auto figure = recipe_on(shipped_checkpoint(), dataset(), *dir_ / "not-a-clip", *dir_);
  refused(figure.string(), (*dir_ / "figure.mp4").string(), 2,
          "only a viewer clip's recipe is drawn as an MP4");
  // What a clip needs, named.
  for (const char* key : {"look", "camera", "first", "area"}) {
    auto missing = clip;
    missing.options.erase(key);
    refused(write(missing, std::string("no-") + key), (*dir_ / "missing.mp4").string(), 1,
            std::string("'options.") + key + "': missing");
  }
  // As this studio writes a clip: the run, targets, camera and look as objects under "view"; a
  // wrong value there is named by its path.
  auto nested = clip;
  nlohmann::ordered_json view;
  for (const char* key : {"changes", "forks", "targets", "camera", "look"}) {
    view[key] = nlohmann::ordered_json::parse(nested.options.at(key));
    nested.options.erase(key);
  }
  view["camera"]["lookat"] = {0.0, 1.0};
  nested.view = view.dump();
  const auto nested_path = write(nested, "nested");
  refused(nested_path, (*dir_ / "nested.mp4").string(), 1,
          "error: " + nested_path + ": view: camera: lookat has 2 items, not 3 (x, y, z)");
  auto wrong = clip;
  wrong.options["area"] = "window";
  refused(write(wrong, "wrong-area"), (*dir_ / "wrong.mp4").string(), 1,
          "'options.area': \"window\" is not scene or panel");
  // Numbers read as the command line reads them: the whole text, finite, in range.
  for (const auto& [key, value, said] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"first", "12abc", "is not a whole number in [0, 100000000]"},
           {"first", " 3", "is not a whole number in [0, 100000000]"},
           {"fps", "30.5", "is not a whole number in [1, 120]"},
           {"speed", "nan", "is not a number"},
           {"speed", "1x", "is not a number"}}) {
    auto odd = clip;
    odd.options[key] = value;
    refused(write(odd, "odd-" + key), (*dir_ / "odd.mp4").string(), 1,
            "'options." + key + "': \"" + value + "\" " + said);
  }
  // Steps past the end of the episode (hopper's ends by step 1000) are refused before anything
  // plays: a first step of 100,000,000 played for ever.
  auto far = clip;
  far.options["first"] = "100000000";
  refused(write(far, "far"), (*dir_ / "far.mp4").string(), 1,
          "'options.first': the first frame is step 100000000, past the end of the episode: "
          "hopper ends by step 1000");
  auto longer = clip;
  longer.options["frames"] = "100000000";
  refused(write(longer, "longer"), (*dir_ / "longer.mp4").string(), 1,
          "'options.frames': the last frame is step");
  // A fork to another checkpoint plays only the file the recipe lists with its hash: with that
  // input removed, whatever file is at the path now is not taken.
  auto unlisted = clip;
  unlisted.options["forks"] =
      R"([{"step":2,"change":"checkpoint=)" + compared_checkpoint() + R"(","frames":4}])";
  refused(write(unlisted, "unlisted"), (*dir_ / "unlisted.mp4").string(), 1,
          "'inputs': fork 1 plays the checkpoint " + compared_checkpoint() +
              ", which the recipe does not list with its hash");
  // So does a steering direction the run reads: one the recipe does not hash is not read.
  auto steered = clip;
  const auto direction = (*dir_ / "direction_L1.json").string();
  steered.options["changes"] =
      R"([{"step":0,"target":3600.0,"zeroing":"none","interventions":["steer:1=1*)" + direction +
      R"("]}])";
  refused(write(steered, "steered"), (*dir_ / "steered.mp4").string(), 1,
          "'inputs': the run steers with " + direction +
              ", which the recipe does not list with its hash");
  // The policy changed since it was recorded.
  std::string bytes = bytes_of(copy);
  bytes[bytes.size() / 2] ^= 0x10;
  std::ofstream(copy, std::ios::binary | std::ios::trunc) << bytes;
  const std::string now = dstudio::file_content_hash(copy);
  refused(clip_path, (*dir_ / "changed.mp4").string(), 1,
          "checkpoint " + copy.string() + " changed: its hash is " + now +
              ", the recipe was made from " + clip.checkpoint_hash);
  EXPECT_FALSE(fs::exists(*dir_ / "changed.json"));
}

// Every format is drawn again byte for byte, the PDF too: its creation date is left out.
TEST_F(FigureRecipes, TheFormatComesFromTheFilesExtensionAndEachIsDrawnAgainByteForByte) {
  const auto out = *dir_ / "formats";
  const auto recipe_path = recipe_on(shipped_checkpoint(), dataset(), out, *dir_);
  for (const char* ext : {".svg", ".pdf", ".png"}) {
    const auto again = *dir_ / (std::string("again") + ext);
    const auto r = run("figure render " + recipe_path.string() + " --out " + again.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string drawn = bytes_of(again);
    EXPECT_TRUE(drawn == bytes_of(out / (std::string("attention_layer1") + ext))) << ext;
    if (std::string(ext) == ".pdf") {
      EXPECT_TRUE(drawn.starts_with("%PDF-"));
      EXPECT_THAT(drawn, Not(HasSubstr("/CreationDate")));
    }
    if (std::string(ext) == ".svg") {
      EXPECT_THAT(drawn, HasSubstr("<svg"));
    }
  }
  const auto r =
      run("figure render " + recipe_path.string() + " --out " + (*dir_ / "f.gif").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(".pdf, .svg or .png"));
  EXPECT_FALSE(fs::exists(*dir_ / "f.gif"));
}

}  // namespace
