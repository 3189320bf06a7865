// The Viewer tab's recipes (the timeline's and a clip's): their run, camera and look as JSON
// objects under "view", written and read back byte for byte; recipes written before "view" (each
// part JSON text in an option) still read; a wrong value inside is refused naming its path.

#include "view_recipes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "dstudio/common/figure_recipe.h"
#include "dstudio/common/read_file.h"
#include "h5_fixture.h"

namespace dstudio::recipes {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;
using testing::HasSubstr;

fs::path saved() {
  return fs::absolute(fs::path(DSTUDIO_TEST_DATA) / "saved" / "figure-recipe").lexically_normal();
}

std::string text_of(const fs::path& path) {
  return read_regular_file(path, std::uint64_t{1} << 24);
}

// A folder as the saved viewer recipes were made in: the shipped policy as ckpt/dt.pt and a
// steering direction beside it.
void make_inputs(const fs::path& dir) {
  fs::create_directories(dir / "ckpt");
  fs::copy_file(fs::path(DSTUDIO_TEST_DATA) / "../../resources/checkpoints/hopper-medium-dt.pt",
                dir / "ckpt" / "dt.pt", fs::copy_options::overwrite_existing);
  std::ofstream(dir / "direction_L1.json") << R"({"direction": [0.5, 0.25]})";
}

// The runs and clip of the saved recipes (tests/data/saved/README.md), in `dir`.
TimelineShown sample_timeline(const fs::path& dir) {
  TimelineShown t;
  t.checkpoint = (dir / "ckpt" / "dt.pt").string();
  t.seed = 7;
  models::StepConditions start;
  start.target = 3600.0;
  models::StepConditions later;
  later.step = 40;
  later.target = 1800.5;
  later.zeroing = models::ModalityZeroing::ReturnsToGo;
  later.interventions = {"head:1.1=zero"};
  t.changes = {start, later};
  t.frames = 120;
  t.forks = {{60, "target=500", 60, {}}, {80, "zeroing=states", 40, {}}};
  t.divergence = 2;
  t.divergence_label = "rootz";
  t.bookmarks = {{30, "landing", "the first hop"}};
  return t;
}

ClipShown sample_clip(const fs::path& dir) {
  ClipShown c;
  c.run.checkpoint = (dir / "ckpt" / "dt.pt").string();
  c.run.seed = 3;
  models::StepConditions steered;
  steered.target = 3600.0;
  steered.interventions = {"steer:1=0.5*" + (dir / "direction_L1.json").string()};
  models::StepConditions zeroed;
  zeroed.step = 10;
  zeroed.target = 2400.0;
  zeroed.zeroing = models::ModalityZeroing::PastStates;
  c.run.changes = {steered, zeroed};
  c.run.forks = {{5, "target=500", 0, {}}};
  c.title = "hopper-medium-dt (dt)";
  c.first = 2;
  c.frames = 30;
  c.speed = 0.5;
  c.width = 640;
  c.height = 480;
  c.panel_width = 1000;
  c.panel_height = 700;
  c.targets = {{3600.0, "task reference 3600"}, {1305.5, "data's best episode 1305"}};
  auto& l = c.look;
  l.camera = {-1, 3.5, 120.25, -15.0, 1.4, 0.5, -0.25};
  l.effects = true;
  l.tab = 2;
  l.target_field = 2400.0;
  l.zeroing = models::ModalityZeroing::PastStates;
  l.seed_field = 7;
  l.attention_mode = 1;
  l.attention_layer = 2;
  l.attention_head = 1;
  l.fork_target = 500.0;
  l.click_mode = 1;
  l.patch_target = 1200.0;
  l.font = "DejaVu Sans,9,-1,5,400,0,0,0,0,0,0,0,0,0,0,1";
  return c;
}

// The timeline's recipe as the window's export completes it: with the figure it drew.
FigureRecipe exported(FigureRecipe recipe) {
  recipe.figure.name = "divergence";
  return recipe;
}

// Every value of the saved timeline's run, read from `run` (paths in `dir`).
void expect_sample_timeline(const TimelineShown& run, const fs::path& dir) {
  EXPECT_EQ(run.checkpoint, (dir / "ckpt" / "dt.pt").string());
  EXPECT_EQ(run.seed, 7u);
  EXPECT_EQ(run.frames, 120);
  ASSERT_EQ(run.changes.size(), 2u);
  EXPECT_EQ(run.changes[0], (models::StepConditions{0, 3600.0, models::ModalityZeroing::None, {}}));
  EXPECT_EQ(run.changes[1].step, 40);
  EXPECT_EQ(run.changes[1].target, 1800.5);
  EXPECT_EQ(run.changes[1].zeroing, models::ModalityZeroing::ReturnsToGo);
  EXPECT_EQ(run.changes[1].interventions, std::vector<std::string>{"head:1.1=zero"});
  ASSERT_EQ(run.forks.size(), 2u);
  EXPECT_EQ(run.forks[0].step, 60);
  EXPECT_EQ(run.forks[0].change, "target=500");
  EXPECT_EQ(run.forks[0].frames, 60);
  EXPECT_EQ(run.forks[1].step, 80);
  EXPECT_EQ(run.forks[1].change, "zeroing=states");
  EXPECT_EQ(run.forks[1].frames, 40);
  EXPECT_EQ(run.divergence, 2);
  EXPECT_EQ(run.divergence_label, "rootz");
  ASSERT_EQ(run.bookmarks.size(), 1u);
  EXPECT_EQ(run.bookmarks[0], (RecipeBookmark{30, "landing", "the first hop"}));
}

void expect_sample_clip(const ClipShown& clip, const fs::path& dir) {
  EXPECT_EQ(clip.run.checkpoint, (dir / "ckpt" / "dt.pt").string());
  EXPECT_EQ(clip.run.seed, 3u);
  ASSERT_EQ(clip.run.changes.size(), 2u);
  // The steering direction is the recipe's input, read where the recipe lies.
  EXPECT_EQ(clip.run.changes[0].interventions,
            std::vector<std::string>{"steer:1=0.5*" + (dir / "direction_L1.json").string()});
  EXPECT_EQ(clip.run.changes[1],
            (models::StepConditions{10, 2400.0, models::ModalityZeroing::PastStates, {}}));
  ASSERT_EQ(clip.run.forks.size(), 1u);
  EXPECT_EQ(clip.run.forks[0].step, 5);
  EXPECT_EQ(clip.run.forks[0].change, "target=500");
  EXPECT_EQ(clip.run.forks[0].frames, 0);
  EXPECT_EQ(clip.run.divergence, -1);
  EXPECT_EQ(clip.title, "hopper-medium-dt (dt)");
  EXPECT_EQ(clip.first, 2);
  EXPECT_EQ(clip.frames, 30);
  EXPECT_EQ(clip.fps, 30);
  EXPECT_EQ(clip.speed, 0.5);
  EXPECT_FALSE(clip.scene_only);
  EXPECT_EQ(clip.width, 640);
  EXPECT_EQ(clip.panel_height, 700);
  ASSERT_EQ(clip.targets.size(), 2u);
  EXPECT_EQ(clip.targets[1].value, 1305.5);
  EXPECT_EQ(clip.targets[1].label, "data's best episode 1305");
  // Every field of the look (the camera's too), against the values the clip was made with.
  auto look = sample_clip(dir).look;
  look.divergence = -1;
  EXPECT_EQ(clip.look, look);
  EXPECT_EQ(clip.look.camera.distance, 3.5);
  EXPECT_EQ(clip.look.camera.lookat_y, -0.25);
  EXPECT_EQ(clip.look.zeroing, models::ModalityZeroing::PastStates);
  EXPECT_EQ(clip.look.attention_head, 1);
}

// Recipes written before "view" (tests/data/saved/figure-recipe/viewer_*.recipe.json): every
// value reads as it was recorded, and written again the run goes under "view".
TEST(ViewRecipes, ViewerRecipesWrittenBeforeViewStillRead) {
  const auto timeline_path = saved() / "viewer_timeline.recipe.json";
  const auto timeline = read_figure_recipe(timeline_path);
  ASSERT_TRUE(timeline.view.empty());
  ASSERT_EQ(timeline.options.count("changes"), 1u) << "the saved recipe is of the old form";
  expect_sample_timeline(timeline_shown(timeline, timeline_path.string()), saved());

  const auto clip_path = saved() / "viewer_clip.recipe.json";
  const auto clip = read_figure_recipe(clip_path);
  ASSERT_TRUE(clip.view.empty());
  ASSERT_EQ(clip.options.count("camera"), 1u) << "the saved recipe is of the old form";
  expect_sample_clip(clip_shown(clip, clip_path.string()), saved());

  // Recorded again from what was read, beside its inputs: the parts under "view", none left in
  // the options, the same values.
  test::TempDir dir;
  make_inputs(dir.path());
  fs::copy_file(clip_path, dir / "clip.recipe.json");
  const auto again = clip_recipe(clip_shown(read_figure_recipe(dir / "clip.recipe.json"), "c"));
  for (const char* key : {"changes", "forks", "targets", "camera", "look"})
    EXPECT_EQ(again.options.count(key), 0u) << key;
  const auto view = ordered_json::parse(again.view);
  EXPECT_EQ(view.at("camera").at("distance"), 3.5);
  EXPECT_EQ(view.at("changes").at(1).at("zeroing"), "states");
  EXPECT_EQ(view.at("targets").at(0).at("label"), "task reference 3600");
  write_figure_recipe(dir / "again.recipe.json", again);
  expect_sample_clip(clip_shown(read_figure_recipe(dir / "again.recipe.json"), "again"),
                     dir.path());
}

// A new recipe holds its run, camera and look as objects under "view", keys spelled as before,
// and is read and written again byte for byte.
TEST(ViewRecipes, ANewViewerRecipeIsWrittenReadAndWrittenAgainByteForByte) {
  test::TempDir dir;
  make_inputs(dir.path());

  write_figure_recipe(dir / "timeline.recipe.json",
                      exported(timeline_recipe(sample_timeline(dir.path()))));
  const std::string timeline_text = text_of(dir / "timeline.recipe.json");
  const auto timeline_json = ordered_json::parse(timeline_text);
  const auto& run = timeline_json.at("view");
  std::vector<std::string> keys;
  for (const auto& item : run.items()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"changes", "forks"}));
  EXPECT_EQ(
      run.at("changes").at(1),
      ordered_json::parse(
          R"({"step":40,"target":1800.5,"zeroing":"rtg","interventions":["head:1.1=zero"]})"));
  EXPECT_EQ(run.at("forks").at(1),
            ordered_json::parse(R"({"step":80,"change":"zeroing=states","frames":40})"));
  EXPECT_FALSE(timeline_json.at("options").contains("changes"));
  EXPECT_FALSE(timeline_json.at("options").contains("forks"));
  const auto timeline = timeline_shown(read_figure_recipe(dir / "timeline.recipe.json"), "t");
  expect_sample_timeline(timeline, dir.path());
  write_figure_recipe(dir / "timeline-again.recipe.json", exported(timeline_recipe(timeline)));
  EXPECT_EQ(text_of(dir / "timeline-again.recipe.json"), timeline_text);

  write_figure_recipe(dir / "clip.recipe.json", clip_recipe(sample_clip(dir.path())));
  const std::string clip_text = text_of(dir / "clip.recipe.json");
  const auto clip_json = ordered_json::parse(clip_text);
  const auto& view = clip_json.at("view");
  keys.clear();
  for (const auto& item : view.items()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"changes", "forks", "targets", "camera", "look"}));
  EXPECT_EQ(view.at("camera"),
            ordered_json::parse(R"({"track":-1,"distance":3.5,"azimuth":120.25,)"
                                R"("elevation":-15.0,"lookat":[0.5,-0.25,1.4]})"));
  keys.clear();
  for (const auto& item : view.at("look").items()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"effects", "tab", "target", "zeroing", "seed",
                                            "attention-mode", "attention-layer", "attention-head",
                                            "fork-target", "click", "patch-target", "font"}));
  EXPECT_EQ(view.at("look").at("zeroing"), "states");
  EXPECT_EQ(view.at("targets").at(1).at("value"), 1305.5);
  const auto clip = clip_shown(read_figure_recipe(dir / "clip.recipe.json"), "c");
  expect_sample_clip(clip, dir.path());
  write_figure_recipe(dir / "clip-again.recipe.json", clip_recipe(clip));
  EXPECT_EQ(text_of(dir / "clip-again.recipe.json"), clip_text);
}

// A wrong value inside "view" (or inside an old recipe's option) is refused naming the file and
// the value's path.
TEST(ViewRecipes, AWrongValueInsideIsRefusedNamingItsPath) {
  test::TempDir dir;
  make_inputs(dir.path());
  write_figure_recipe(dir / "clip.recipe.json", clip_recipe(sample_clip(dir.path())));
  write_figure_recipe(dir / "timeline.recipe.json",
                      exported(timeline_recipe(sample_timeline(dir.path()))));
  const auto good_clip = ordered_json::parse(text_of(dir / "clip.recipe.json"));
  const auto good_timeline = ordered_json::parse(text_of(dir / "timeline.recipe.json"));
  // What reading `j` as a clip's (or a timeline's) recipe throws; "" when it reads.
  const auto refusal = [&](const ordered_json& j) {
    const auto path = dir / "wrong.recipe.json";
    std::ofstream(path, std::ios::trunc) << j.dump(2);
    try {
      const auto recipe = read_figure_recipe(path);
      if (recipe.analysis == kClipView)
        (void)clip_shown(recipe, path.string());
      else
        (void)timeline_shown(recipe, path.string());
    } catch (const FigureRecipeError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string at = (dir / "wrong.recipe.json").string() + ": ";
  // (the value changed, its new value, what the message says)
  const std::vector<std::tuple<ordered_json::json_pointer, ordered_json, std::string>> cases = {
      {ordered_json::json_pointer("/view/changes/0/step"), "zero",
       "view: changes[0]: step is not a number"},
      {ordered_json::json_pointer("/view/changes/0/step"), 3,
       "view: changes: the conditioning of the first step is missing"},
      {ordered_json::json_pointer("/view/changes/1/zeroing"), "legs",
       "view: changes[1]: zeroing is 'legs', not one of none, rtg, states, actions"},
      {ordered_json::json_pointer("/view/forks/0/frames"), 2.5,
       "view: forks[0]: frames is not a whole number"},
      {ordered_json::json_pointer("/view/forks/0/change"), "colour=red",
       "view: forks[0]: change: "},
      {ordered_json::json_pointer("/view/targets/1/value"), 2e6,
       "view: targets[1]: value must be at most 1000000 (is 2000000)"},
      {ordered_json::json_pointer("/view/camera/lookat"), ordered_json::array({0.0, 1.0}),
       "view: camera: lookat has 2 items, not 3 (x, y, z)"},
      {ordered_json::json_pointer("/view/camera/distance"), 0,
       "view: camera: distance must be above 0 (is 0)"},
      {ordered_json::json_pointer("/view/look/tab"), 5, "view: look: tab must be at most 2 (is 5)"},
      {ordered_json::json_pointer("/view/look/font"), "two\nlines",
       "view: look: font is more than one line"},
  };
  for (const auto& [pointer, value, said] : cases) {
    auto j = good_clip;
    j[pointer] = value;
    EXPECT_THAT(refusal(j), HasSubstr(at + said)) << pointer.to_string();
  }
  auto no_look = good_clip;
  no_look["view"].erase("look");
  EXPECT_THAT(refusal(no_look), HasSubstr(at + "view: no look"));
  auto wrong_fork = good_timeline;
  wrong_fork["view"]["forks"][1]["frames"] = -1;
  EXPECT_THAT(refusal(wrong_fork), HasSubstr(at + "view: forks[1]: frames must be at least 0"));
  auto no_changes = good_timeline;
  no_changes["view"].erase("changes");
  EXPECT_THAT(refusal(no_changes), HasSubstr(at + "view: no changes"));
  EXPECT_EQ(refusal(good_clip), "");
  EXPECT_EQ(refusal(good_timeline), "");

  // An old recipe's option is read with the same tables.
  auto old = ordered_json::parse(text_of(saved() / "viewer_clip.recipe.json"));
  auto camera = ordered_json::parse(old["options"]["camera"].get<std::string>());
  camera["lookat"] = ordered_json::array({0.0, 1.0});
  old["options"]["camera"] = camera.dump();
  EXPECT_THAT(refusal(old), HasSubstr(at + "options: camera: lookat has 2 items, not 3 (x, y, z)"));
  old["options"]["look"] = "{not json";
  EXPECT_THAT(refusal(old), HasSubstr(at + "'options.look': not JSON"));
}

}  // namespace
}  // namespace dstudio::recipes
