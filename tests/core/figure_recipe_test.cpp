// Figure recipes: an exact round trip of every field, strict reading that names the key at fault,
// content hashes against xxhsum's, and inputs that changed refused by name.

#include "dstudio/common/figure_recipe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "dstudio/data/dataset_io.h"
#include "dstudio/data/synthetic.h"
#include "h5_fixture.h"

namespace dstudio {
namespace {

using nlohmann::json;
using testing::HasSubstr;
using testing::Not;

void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

std::string read_file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every field away from its default, so that a field lost or mixed up on the way shows.
FigureRecipe full_recipe() {
  FigureRecipe r;
  r.analysis = "rtg-sweep";
  r.options = {{"episodes", "2"}, {"multiples", "1,2"}, {"max-tokens", "500"}};
  r.checkpoint = "/runs/dt/checkpoint.pt";
  r.checkpoint_hash = "xxh3-128:0123456789abcdef0123456789abcdef";
  r.compare = "/runs/dc/checkpoint-500.pt";
  r.compare_hash = "xxh3-128:fedcba9876543210fedcba9876543210";
  r.dataset = "/data/hopper-medium-v2.hdf5";
  r.dataset_fingerprint = "xxh3-128:00000000000000000000000000000001";
  r.dataset_given = true;
  r.inputs = {{"run", "/runs/dt/metrics.jsonl", "xxh3-128:11111111111111111111111111111111"}};
  r.seeds = {7, 9007199254740993};  // beyond a double's exact integers
  r.episode = 3;
  r.step = 250;
  r.target = 1800.25;
  r.zeroing = "states";
  r.interventions = {"head:1.1=zero", "context:3"};
  r.bookmarks = {{60, "falls", "the torso tips forward"}, {250, "recovers", ""}};
  r.figure = {"rtg_sweep", "ieee",         3.3,  2.5, 8.0, 8.5, 6.8, 0.8, "DejaVu Serif",
              600,         {"pdf", "png"}, false};
  r.outputs = {"rtg_sweep.pdf", "rtg_sweep.png", "rtg_sweep.csv"};
  r.studio_version = "Decision Studio 0.1.0";
  r.created = "2026-01-31T12:00:00Z";
  return r;
}

TEST(FigureRecipe, EveryFieldSurvivesARoundTripThroughJson) {
  const FigureRecipe r = full_recipe();
  const FigureRecipe back = parse_figure_recipe(to_json(r), "r.json");
  EXPECT_EQ(back, r);
  // Field by field too, so that a failure says which.
  EXPECT_EQ(back.options, r.options);
  EXPECT_EQ(back.seeds, r.seeds);
  EXPECT_EQ(back.target, r.target);
  EXPECT_EQ(back.bookmarks, r.bookmarks);
  EXPECT_EQ(back.inputs, r.inputs);
  EXPECT_EQ(back.figure, r.figure);
  // And through a file, written atomically.
  test::TempDir dir;
  write_figure_recipe(dir / "f.recipe.json", r);
  EXPECT_EQ(read_figure_recipe(dir / "f.recipe.json"), r);
  EXPECT_EQ(to_json(read_figure_recipe(dir / "f.recipe.json")), to_json(r));
}

TEST(FigureRecipe, AnEmptyRecipeRoundTripsWithNullsForWhatIsAbsent) {
  FigureRecipe r;
  r.analysis = "training";
  r.figure.name = "training_loss";
  const std::string text = to_json(r);
  const json j = json::parse(text);
  for (const char* key : {"checkpoint", "checkpoint_hash", "compare", "dataset", "episode", "step",
                          "target", "zeroing", "created"})
    EXPECT_TRUE(j.at(key).is_null()) << key;
  EXPECT_EQ(j.at("format"), "decision-studio-figure-recipe");
  EXPECT_EQ(j.at("version"), 2);
  EXPECT_EQ(parse_figure_recipe(text, "r.json"), r);
}

TEST(FigureRecipe, UnknownKeysAreIgnored) {
  json j = json::parse(to_json(full_recipe()));
  j["colour_blind_check"] = true;
  j["figure"]["caption"] = "Figure 3";
  EXPECT_EQ(parse_figure_recipe(j.dump(), "r.json"), full_recipe());
}

// The message of what parsing `j` throws; "" when it does not.
std::string refusal(const json& j) {
  try {
    (void)parse_figure_recipe(j.dump(), "/papers/fig3.recipe.json");
  } catch (const FigureRecipeError& e) {
    return e.what();
  }
  return {};
}

TEST(FigureRecipe, AFieldOfTheWrongTypeIsRefusedNamingItsKey) {
  const json good = json::parse(to_json(full_recipe()));
  // (where the change is made, the value put there, what the message says of the key)
  const std::vector<std::tuple<std::vector<std::string>, json, std::string>> cases = {
      {{"analysis"}, 3, "analysis is not a text"},
      {{"analysis"}, "", "analysis is empty"},
      {{"options"}, json::array(), "options is not a JSON object"},
      {{"options", "episodes"}, 2, "options.episodes is not a text"},
      {{"options", "--episodes"}, "2", "options names '--episodes'"},
      {{"checkpoint"}, false, "checkpoint is not a text"},
      {{"checkpoint_hash"},
       "xxh3-128:abc",
       "checkpoint_hash is 'xxh3-128:abc', not a content hash"},
      {{"checkpoint_hash"}, "md5:0123456789abcdef0123456789abcdef", "checkpoint_hash is 'md5:"},
      {{"compare_hash"}, nullptr, "compare_hash is missing for the compared checkpoint"},
      {{"compare"}, nullptr, "compare_hash is given without a compared checkpoint"},
      {{"dataset_fingerprint"}, 12, "dataset_fingerprint is not a text"},
      {{"dataset"}, nullptr, "dataset_fingerprint is given without a dataset"},
      {{"dataset_given"}, "yes", "dataset_given is not true or false"},
      {{"seeds"}, 7, "seeds is not a list"},
      {{"seeds", "1"}, 1.5, "seeds[1] is not a whole number"},
      {{"episode"}, "3", "episode is not a number"},
      {{"step"}, 2.5, "step is not a whole number"},
      {{"target"}, "1800", "target is not a number"},
      {{"zeroing"}, json::array(), "zeroing is not a text"},
      {{"interventions", "0"}, 1, "interventions[0] is not a text"},
      {{"bookmarks", "1", "step"}, "250", "bookmarks[1]: step is not a number"},
      {{"bookmarks", "0", "note"}, 5, "bookmarks[0]: note is not a text"},
      {{"inputs", "0", "hash"}, "xxh3-128:", "inputs[0]: hash is 'xxh3-128:', not a content hash"},
      {{"inputs", "0", "path"}, "", "inputs[0]: path is empty"},
      {{"figure"}, "rtg_sweep", "figure: not a JSON object"},
      {{"figure", "name"}, nullptr, "figure: name is not a text"},
      {{"figure", "name"}, "../elsewhere", "figure: name is '../elsewhere', not a file name"},
      {{"figure", "width"}, "3.3", "figure: width is not a number"},
      {{"figure", "width"}, 0, "figure: width must be above 0 (is 0)"},
      {{"figure", "height"}, -1, "figure: height must be at least 0 (is -1)"},
      {{"figure", "dpi"}, 300.5, "figure: dpi is not a whole number"},
      {{"figure", "dpi"}, 2401, "figure: dpi must be at most 2400 (is 2401)"},
      {{"figure", "font_family"}, 3, "figure: font_family is not a text"},
      {{"figure", "formats", "1"}, "gif", "figure: formats[1] is 'gif', not pdf, svg, png"},
      {{"figure", "show_title"}, 1, "figure: show_title is not true or false"},
      {{"outputs", "0"}, "/etc/passwd", "outputs[0] is '/etc/passwd', not a file name beside"},
      {{"studio_version"}, 1, "studio_version is not a text"},
      {{"created"}, 1700000000, "created is not a text"},
      {{"format"},
       "decision-studio-workspace",
       "format is 'decision-studio-workspace', not 'decision-studio-figure-recipe'"},
  };
  for (const auto& [where, value, key] : cases) {
    json j = good;
    json* at = &j;
    for (std::size_t i = 0; i + 1 < where.size(); ++i)
      at = at->is_array() ? &(*at)[std::stoul(where[i])] : &(*at)[where[i]];
    if (at->is_array())
      (*at)[std::stoul(where.back())] = value;
    else
      (*at)[where.back()] = value;
    const std::string message = refusal(j);
    EXPECT_THAT(message, HasSubstr("/papers/fig3.recipe.json: " + key)) << j.dump();
  }
}

// A view's record is the object itself in the file, after the options, its keys in their order;
// a recipe without one (every analysis's) has no "view" key and writes as it always did.
TEST(FigureRecipe, AViewsRecordIsANestedObjectLeftOutWhenEmpty) {
  EXPECT_FALSE(json::parse(to_json(full_recipe())).contains("view"));
  FigureRecipe r = full_recipe();
  r.analysis = "studio-viewer-clip";
  r.view = R"({"changes":[{"step":0,"target":3600.0}],"look":{"zeroing":"rtg","font":""},)"
           R"("camera":{"lookat":[0.0,0.5,1.4]}})";
  const std::string text = to_json(r);
  const auto j = nlohmann::ordered_json::parse(text);
  std::vector<std::string> keys;
  for (const auto& item : j.items()) keys.push_back(item.key());
  ASSERT_EQ(keys.at(3), "options");
  EXPECT_EQ(keys.at(4), "view");
  ASSERT_TRUE(j.at("view").is_object());
  EXPECT_EQ(j["view"]["camera"]["lookat"][2], 1.4);
  keys.clear();
  for (const auto& item : j["view"].items()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"changes", "look", "camera"}));
  EXPECT_THAT(text, HasSubstr("\n  \"view\": {\n    \"changes\": [\n"));
  const FigureRecipe back = parse_figure_recipe(text, "r.json");
  EXPECT_EQ(back.view, r.view);
  EXPECT_EQ(back, r);
  EXPECT_EQ(to_json(back), text);
  json wrong = json::parse(text);
  wrong["view"] = "{}";
  EXPECT_THAT(refusal(wrong), HasSubstr("/papers/fig3.recipe.json: view is not a JSON object"));
  wrong["view"] = nullptr;
  EXPECT_THAT(refusal(wrong), HasSubstr("/papers/fig3.recipe.json: view is null"));
  wrong.erase("view");
  EXPECT_EQ(parse_figure_recipe(wrong.dump(), "r.json").view, "");
}

// The Viewer tab's recipes as studios wrote them before "view" (the run, camera and look as JSON
// texts in options) read and are written again byte for byte: nothing moves them.
TEST(FigureRecipe, ViewerRecipesSavedBeforeViewAreWrittenAgainByteForByte) {
  const auto saved = std::filesystem::path(DSTUDIO_TEST_DATA) / "saved" / "figure-recipe";
  test::TempDir dir;
  for (const char* name : {"viewer_timeline.recipe.json", "viewer_clip.recipe.json"}) {
    const std::string text = read_file_text(saved / name);
    ASSERT_FALSE(text.empty()) << name;
    const auto parsed = parse_figure_recipe(text, name);
    EXPECT_EQ(parsed.view, "") << name;
    EXPECT_EQ(parsed.options.count("changes"), 1u) << name;
    EXPECT_EQ(to_json(parsed), text) << name;
    std::filesystem::copy_file(saved / name, dir / name);
    write_figure_recipe(dir / (std::string("again.") + name), read_figure_recipe(dir / name));
    EXPECT_EQ(read_file_text(dir / (std::string("again.") + name)), text) << name;
  }
}

TEST(FigureRecipe, AMissingRequiredKeyIsRefusedNamingIt) {
  const json good = json::parse(to_json(full_recipe()));
  for (const char* key : {"format", "version", "analysis", "figure"}) {
    json j = good;
    j.erase(key);
    EXPECT_THAT(refusal(j), HasSubstr(std::string(": no ") + key)) << key;
  }
  json j = good;
  j["figure"].erase("name");
  EXPECT_THAT(refusal(j), HasSubstr("figure: no name"));
  for (const char* key : {"option", "path", "hash"}) {
    j = good;
    j["inputs"][0].erase(key);
    EXPECT_THAT(refusal(j), HasSubstr(std::string("inputs[0]: no ") + key)) << key;
  }
  j = good;
  j["bookmarks"][0].erase("step");
  EXPECT_THAT(refusal(j), HasSubstr("bookmarks[0]: no step"));
  // A path without its hash cannot be checked.
  j = good;
  j.erase("checkpoint_hash");
  EXPECT_THAT(refusal(j), HasSubstr("checkpoint_hash is missing for the checkpoint"));
  EXPECT_THAT(refusal(json::array()), HasSubstr("not a figure recipe"));
  try {
    (void)parse_figure_recipe("{\"format\": ", "cut.json");
    ADD_FAILURE() << "text that is not JSON was read";
  } catch (const FigureRecipeError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cut.json: not JSON"));
  }
}

TEST(FigureRecipe, ANewerVersionIsRefusedSayingWhatWroteIt) {
  json j = json::parse(to_json(full_recipe()));
  j["version"] = 3;
  j["studio_version"] = "Decision Studio 9.0.0";
  const std::string message = refusal(j);
  EXPECT_THAT(message, HasSubstr("version is 3, newer than this studio reads (2); it was written "
                                 "by Decision Studio 9.0.0"));
  // Before any other field is read: a later version's fields may mean something else.
  j["seeds"] = "all";
  EXPECT_THAT(refusal(j), HasSubstr("version is 3, newer than this studio reads (2)"));
  j.erase("studio_version");
  EXPECT_THAT(refusal(j), HasSubstr("it was written by a later studio"));
  j["version"] = 0;
  EXPECT_THAT(refusal(j), HasSubstr("version must be at least 1 (is 0)"));
}

// Recipes as the studio writes them (tests/data/saved/figure-recipe; its README says how each was
// made): each reads back and is written again byte for byte, through text and through a file.
TEST(FigureRecipe, SavedRecipesReadBackAndAreWrittenAgainByteForByte) {
  const auto saved = std::filesystem::path(DSTUDIO_TEST_DATA) / "saved" / "figure-recipe";
  test::TempDir dir;
  // The folder the full recipe's --run option names beside it, so that it stays a path there.
  std::filesystem::create_directories(dir / "runs" / "dt");
  for (const char* name : {"full.recipe.json", "minimal.recipe.json", "scores.recipe.json",
                           "attention_difference.recipe.json", "attention_layer1.recipe.json"}) {
    const std::string text = read_file_text(saved / name);
    ASSERT_FALSE(text.empty()) << name;
    EXPECT_EQ(to_json(parse_figure_recipe(text, name)), text) << name;
    // Read where it lies (its paths absolute there), written again there.
    std::filesystem::copy_file(saved / name, dir / name);
    const auto read = read_figure_recipe(dir / name);
    write_figure_recipe(dir / (std::string("again.") + name), read);
    EXPECT_EQ(read_file_text(dir / (std::string("again.") + name)), text) << name;
  }
  // Every field of the full one, as it was made.
  const auto full = read_figure_recipe(dir / "full.recipe.json");
  EXPECT_EQ(full.analysis, "rtg-sweep");
  EXPECT_EQ(full.options.at("run"), (dir / "runs" / "dt").string());
  EXPECT_EQ(full.checkpoint, (dir / "ckpt" / "dt.pt").string());
  EXPECT_EQ(full.compare, "/runs/dc/checkpoint-500.pt");
  EXPECT_EQ(full.inputs.size(), 2u);
  EXPECT_EQ(full.inputs[1].path, (dir / "runs" / "dt" / "run.json").string());
  EXPECT_EQ(full.seeds, (std::vector<std::int64_t>{7, -3, 9007199254740993}));
  EXPECT_EQ(full.episode, 3);
  EXPECT_EQ(full.step, 250);
  EXPECT_EQ(full.target, 1800.25);
  EXPECT_EQ(full.zeroing, "states");
  EXPECT_EQ(full.bookmarks.size(), 3u);
  EXPECT_EQ(full.bookmarks[2], (RecipeBookmark{300, "", ""}));
  EXPECT_EQ(full.figure.axis_font, 8.5);
  EXPECT_EQ(full.figure.formats, (std::vector<std::string>{"pdf", "svg", "png"}));
  EXPECT_EQ(full.figure.y_title, "normalised score");
  EXPECT_EQ(full.created, "2026-01-31T12:00:00Z");
  const auto minimal = parse_figure_recipe(read_file_text(saved / "minimal.recipe.json"), "m");
  FigureRecipe expected;
  expected.analysis = "training";
  expected.figure.name = "training_loss";
  EXPECT_EQ(minimal, expected);
}

// Expected values from `xxhsum -H2` (xxHash 0.8.1's command-line tool, an implementation
// independent of this code's use of the library), which prints XXH128 high half first:
//   printf ''                | xxhsum -H2   -> 99aa06d3014798d86001c324468d497f
//   printf 'Decision Studio' | xxhsum -H2   -> c63ac32d96a9023bd4f6823935c622ac
//   3 MiB + 17 bytes, byte i = (31 i + 7) mod 251 -> 213d713f8b290d845384e0bd85749ef1
// The last is longer than the 1 MiB the file is read in, so the streamed hash is checked too.
TEST(FigureRecipe, TheContentHashOfKnownBytesIsXxhsumsXxh128) {
  test::TempDir dir;
  write_bytes(dir / "empty", "");
  EXPECT_EQ(file_content_hash(dir / "empty"), "xxh3-128:99aa06d3014798d86001c324468d497f");
  write_bytes(dir / "name", "Decision Studio");
  EXPECT_EQ(file_content_hash(dir / "name"), "xxh3-128:c63ac32d96a9023bd4f6823935c622ac");
  std::string big(3 * 1024 * 1024 + 17, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 31 + 7) % 251);
  write_bytes(dir / "big", big);
  EXPECT_EQ(file_content_hash(dir / "big"), "xxh3-128:213d713f8b290d845384e0bd85749ef1");

  EXPECT_THROW((void)file_content_hash(dir / "absent"), FigureRecipeError);
  try {
    (void)file_content_hash(dir.path());
    ADD_FAILURE() << "a folder was hashed";
  } catch (const FigureRecipeError& e) {
    EXPECT_THAT(e.what(), HasSubstr("not a regular file"));
  }
}

TEST(FigureRecipe, AChangedCheckpointIsRefusedNamingTheHashThatDiffers) {
  test::TempDir dir;
  const auto checkpoint = dir / "dt.pt";
  std::string bytes(4096, 'w');
  write_bytes(checkpoint, bytes);
  FigureRecipe r;
  r.analysis = "attention";
  r.figure.name = "attention_layer1";
  r.checkpoint = checkpoint.string();
  r.checkpoint_hash = file_content_hash(checkpoint);
  EXPECT_NO_THROW(check_inputs(r));

  bytes[2048] ^= 0x01;  // one bit
  write_bytes(checkpoint, bytes);
  const std::string now = file_content_hash(checkpoint);
  ASSERT_NE(now, r.checkpoint_hash);
  try {
    check_inputs(r);
    ADD_FAILURE() << "a changed checkpoint passed";
  } catch (const FigureRecipeError& e) {
    EXPECT_EQ(std::string(e.what()), "checkpoint " + checkpoint.string() +
                                         " changed: its hash is " + now +
                                         ", the recipe was made from " + r.checkpoint_hash);
  }
}

TEST(FigureRecipe, EveryMissingOrChangedInputIsNamedAtOnce) {
  test::TempDir dir;
  write_bytes(dir / "a.pt", "a");
  write_bytes(dir / "metrics.jsonl", "{\"step\": 1}\n");
  FigureRecipe r;
  r.analysis = "attention";
  r.figure.name = "attention_layer1";
  r.checkpoint = (dir / "a.pt").string();
  r.checkpoint_hash = file_content_hash(dir / "a.pt");
  r.compare = (dir / "gone.pt").string();
  r.compare_hash = r.checkpoint_hash;
  r.inputs = {{"run", (dir / "metrics.jsonl").string(), r.checkpoint_hash}};
  try {
    check_inputs(r);
    ADD_FAILURE() << "a missing checkpoint passed";
  } catch (const FigureRecipeError& e) {
    const std::string message = e.what();
    EXPECT_THAT(message, Not(HasSubstr("checkpoint " + r.checkpoint)));  // unchanged
    EXPECT_THAT(message, HasSubstr("compared checkpoint " + r.compare + " is missing"));
    EXPECT_THAT(message,
                HasSubstr("--run input " + (dir / "metrics.jsonl").string() +
                          " changed: its hash is " + file_content_hash(dir / "metrics.jsonl")));
  }
}

TEST(FigureRecipe, AChangedDatasetIsRefusedNamingTheFingerprintThatDiffers) {
  test::TempDir dir;
  const auto path = dir / "d.hdf5";
  data::SyntheticSpec spec;
  spec.transitions = 2000;
  spec.seed = 3;
  const auto arrays = data::make_synthetic(spec);
  data::write_d4rl(path, arrays);
  FigureRecipe r;
  r.analysis = "attention";
  r.figure.name = "attention_layer1";
  r.dataset = path.string();
  // The fingerprint of the arrays as written, not of what the loader read back.
  r.dataset_fingerprint = data::content_fingerprint(arrays);
  EXPECT_NO_THROW(check_inputs(r));

  spec.seed = 4;
  const auto other = data::make_synthetic(spec);
  data::write_d4rl(path, other);
  try {
    check_inputs(r);
    ADD_FAILURE() << "a changed dataset passed";
  } catch (const FigureRecipeError& e) {
    EXPECT_EQ(std::string(e.what()), "dataset " + path.string() + " changed: its fingerprint is " +
                                         data::content_fingerprint(other) +
                                         ", the recipe was made from " + r.dataset_fingerprint);
  }
  std::filesystem::remove(path);
  EXPECT_THROW(check_inputs(r), FigureRecipeError);
}

TEST(FigureRecipe, ADatasetThatCouldNotBeReadWhenTheRecipeWasMadeMustStillBeUnreadable) {
  test::TempDir dir;
  const auto path = dir / "d.hdf5";
  write_bytes(path, "not an HDF5 file");
  FigureRecipe r;
  r.analysis = "rtg-sweep";
  r.figure.name = "rtg_sweep";
  r.dataset = path.string();
  r.dataset_given = true;
  EXPECT_EQ(parse_figure_recipe(to_json(r), "r.json"), r);
  EXPECT_NO_THROW(check_inputs(r));  // the sweep drew without its reference line, and would again

  data::SyntheticSpec spec;
  spec.transitions = 2000;
  const auto arrays = data::make_synthetic(spec);
  data::write_d4rl(path, arrays);
  try {
    check_inputs(r);
    ADD_FAILURE() << "a dataset that became readable passed";
  } catch (const FigureRecipeError& e) {
    EXPECT_EQ(std::string(e.what()), "dataset " + path.string() +
                                         " changed: the recipe was made when it could not be "
                                         "read, now its fingerprint is " +
                                         data::content_fingerprint(arrays));
  }
}

// A recipe's inputs in its folder or below it are named relative to it; others stay absolute, and
// every path reads back absolute where the recipe now is.
TEST(FigureRecipe, InputsBesideTheRecipeAreNamedRelativeToItsFolder) {
  test::TempDir dir;
  const auto figures = dir / "paper" / "figures";
  std::filesystem::create_directories(figures / "runs" / "dt");
  std::filesystem::create_directories(dir / "elsewhere");
  write_bytes(figures / "dt.pt", "the checkpoint");
  write_bytes(dir / "elsewhere" / "dc.pt", "another checkpoint");
  write_bytes(figures / "runs" / "dt" / "metrics.jsonl", "{\"step\": 1}\n");
  FigureRecipe r;
  r.analysis = "training";
  r.figure.name = "training_loss";
  r.checkpoint = (figures / "dt.pt").string();
  r.checkpoint_hash = file_content_hash(figures / "dt.pt");
  r.compare = (dir / "elsewhere" / "dc.pt").string();
  r.compare_hash = file_content_hash(dir / "elsewhere" / "dc.pt");
  r.dataset = (figures / "data" / "gone.hdf5").string();  // named beside it, though missing
  r.inputs = {{"run", (figures / "runs" / "dt" / "metrics.jsonl").string(),
               file_content_hash(figures / "runs" / "dt" / "metrics.jsonl")}};
  r.options = {{"run", (figures / "runs" / "dt").string()},
               {"here", figures.string()},
               {"name", "/not/a/file"},
               {"other", (dir / "elsewhere").string()}};
  write_figure_recipe(figures / "f.recipe.json", r);
  const json written = json::parse(read_file_text(figures / "f.recipe.json"));
  EXPECT_EQ(written.at("version"), 2);
  EXPECT_EQ(written.at("checkpoint"), "./dt.pt");
  EXPECT_EQ(written.at("compare"), r.compare) << "not below the recipe: absolute";
  EXPECT_EQ(written.at("dataset"), "./data/gone.hdf5");
  EXPECT_EQ(written.at("inputs")[0].at("path"), "./runs/dt/metrics.jsonl");
  EXPECT_EQ(written.at("options").at("run"), "./runs/dt");
  EXPECT_EQ(written.at("options").at("here"), ".");
  EXPECT_EQ(written.at("options").at("name"), "/not/a/file") << "no file: not a path";
  EXPECT_EQ(written.at("options").at("other"), (dir / "elsewhere").string());
  EXPECT_EQ(read_figure_recipe(figures / "f.recipe.json"), r) << "read back absolute";
  r.dataset.clear();  // only its name was of interest
  write_figure_recipe(figures / "f.recipe.json", r);
  EXPECT_NO_THROW(check_inputs(read_figure_recipe(figures / "f.recipe.json")));

  // The folder copied elsewhere reads the copy's files, not the original's.
  const auto copy = dir / "copy";
  std::filesystem::copy(dir / "paper", copy, std::filesystem::copy_options::recursive);
  std::filesystem::remove_all(dir / "paper");
  const auto moved = read_figure_recipe(copy / "figures" / "f.recipe.json");
  EXPECT_EQ(moved.checkpoint, (copy / "figures" / "dt.pt").string());
  EXPECT_EQ(moved.inputs[0].path, (copy / "figures" / "runs" / "dt" / "metrics.jsonl").string());
  EXPECT_EQ(moved.options.at("run"), (copy / "figures" / "runs" / "dt").string());
  EXPECT_EQ(moved.options.at("here"), (copy / "figures").string());
  EXPECT_EQ(moved.compare, r.compare);
  EXPECT_NO_THROW(check_inputs(moved));
}

TEST(FigureRecipe, AVersionOneRecipeKeepsItsAbsolutePaths) {
  test::TempDir dir;
  json j = json::parse(to_json(full_recipe()));
  j["version"] = 1;
  j["options"]["title"] = "./not/a/path";  // version 1 wrote no relative path
  write_bytes(dir / "old.recipe.json", j.dump());
  FigureRecipe expected = full_recipe();
  expected.version = 1;
  expected.options["title"] = "./not/a/path";
  EXPECT_EQ(read_figure_recipe(dir / "old.recipe.json"), expected);
}

// Inputs named by absolute paths that moved are found under a root by the end of their path,
// only with the recorded hash; an option naming their folder follows, and so does every input in
// that folder.
TEST(FigureRecipe, InputsThatMovedAreFoundUnderARootWithTheirHashes) {
  test::TempDir dir;
  const auto was = dir / "home" / "alice" / "paper";
  std::filesystem::create_directories(was / "ckpt");
  std::filesystem::create_directories(was / "runs" / "dt");
  write_bytes(was / "ckpt" / "dt.pt", "the checkpoint");
  write_bytes(was / "runs" / "dt" / "metrics.jsonl", "{\"step\": 1}\n");
  write_bytes(was / "runs" / "dt" / "run.json", "{}\n");
  FigureRecipe r;
  r.analysis = "training";
  r.figure.name = "training_loss";
  r.checkpoint = (was / "ckpt" / "dt.pt").string();
  r.checkpoint_hash = file_content_hash(was / "ckpt" / "dt.pt");
  r.inputs = {{"run", (was / "runs" / "dt" / "metrics.jsonl").string(),
               file_content_hash(was / "runs" / "dt" / "metrics.jsonl")},
              {"run", (was / "runs" / "dt" / "run.json").string(),
               file_content_hash(was / "runs" / "dt" / "run.json")}};
  r.options = {{"run", (was / "runs" / "dt").string()}};
  const auto figures = dir / "figures";
  std::filesystem::create_directories(figures);
  write_figure_recipe(figures / "f.recipe.json", r);

  // The paper moved to another disk; a decoy of the same name and another content comes first.
  const auto disk = dir / "disk";
  std::filesystem::create_directories(disk);
  std::filesystem::rename(dir / "home" / "alice" / "paper", disk / "paper");
  std::filesystem::create_directories(dir / "decoy" / "ckpt");
  write_bytes(dir / "decoy" / "ckpt" / "dt.pt", "another checkpoint");
  try {
    check_inputs(read_figure_recipe(figures / "f.recipe.json"));
    ADD_FAILURE() << "inputs that moved passed";
  } catch (const RecipeInputsError& e) {
    EXPECT_TRUE(e.missing());
    EXPECT_EQ(e.problems().size(), 3u);
  }
  std::vector<RecipeInputFound> found;
  const auto again = read_figure_recipe(figures / "f.recipe.json", {dir / "decoy", disk}, &found);
  EXPECT_EQ(again.checkpoint, (disk / "paper" / "ckpt" / "dt.pt").string());
  EXPECT_EQ(again.inputs[0].path, (disk / "paper" / "runs" / "dt" / "metrics.jsonl").string());
  EXPECT_EQ(again.options.at("run"), (disk / "paper" / "runs" / "dt").string());
  EXPECT_NO_THROW(check_inputs(again));
  ASSERT_GE(found.size(), 3u);
  EXPECT_EQ(found[0], (RecipeInputFound{"checkpoint", r.checkpoint, again.checkpoint}));
  EXPECT_TRUE(std::any_of(found.begin(), found.end(), [&](const RecipeInputFound& f) {
    return f.what == "option --run" && f.found == again.options.at("run");
  }));

  // Where the run's log moved alone, the folder follows it, and the run.json left behind is
  // looked for in the new folder too (and missed there): what the analysis reads is checked.
  std::filesystem::create_directories(dir / "alone");
  std::filesystem::rename(disk / "paper" / "runs" / "dt" / "metrics.jsonl",
                          dir / "alone" / "metrics.jsonl");
  const auto alone = read_figure_recipe(figures / "f.recipe.json", {dir / "alone"});
  EXPECT_EQ(alone.options.at("run"), (dir / "alone").string());
  EXPECT_EQ(alone.inputs[1].path, (dir / "alone" / "run.json").string());
  EXPECT_THROW(check_inputs(alone), RecipeInputsError);
}

// Many inputs missing are a list, one a line, the first kMaxListedInputs of them and a count of
// the rest: a moved sweep's recipe names every cell's files.
TEST(FigureRecipe, MissingInputsAreListedOneALine) {
  test::TempDir dir;
  FigureRecipe r;
  r.analysis = "sweep-collect";
  r.figure.name = "scores";
  for (int cell = 0; cell < 30; ++cell)
    r.inputs.push_back({"task", (dir / ("cell-" + std::to_string(cell)) / "task.json").string(),
                        "xxh3-128:0123456789abcdef0123456789abcdef"});
  try {
    check_inputs(r);
    ADD_FAILURE() << "missing inputs passed";
  } catch (const RecipeInputsError& e) {
    const std::string message = e.what();
    std::vector<std::string> lines;
    std::istringstream in(message);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    ASSERT_EQ(lines.size(), 1 + kMaxListedInputs + 1) << message;
    EXPECT_EQ(lines[0], "30 of the recipe's inputs are missing or not what it was made from:");
    EXPECT_EQ(lines[1], "  --task input " + r.inputs[0].path +
                            " is missing (the recipe was made from " + r.inputs[0].hash + ")");
    EXPECT_EQ(lines.back(), "  ... and 10 more");
    for (const auto& line : lines) EXPECT_LE(line.size(), 200u) << line;
    EXPECT_EQ(e.problems().size(), 30u);
    EXPECT_TRUE(e.missing());
  }
}

}  // namespace
}  // namespace dstudio
