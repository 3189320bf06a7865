// Figure recipes: an exact round trip of every field, strict reading that names the key at fault,
// content hashes against xxhsum's, and inputs that changed refused by name.

#include "dstudio/common/figure_recipe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
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
  EXPECT_EQ(j.at("version"), 1);
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
  // (where the change is made, the value put there, the key the message must name)
  const std::vector<std::tuple<std::vector<std::string>, json, std::string>> cases = {
      {{"analysis"}, 3, "'analysis'"},
      {{"options"}, json::array(), "'options'"},
      {{"options", "episodes"}, 2, "'options.episodes'"},
      {{"checkpoint"}, false, "'checkpoint'"},
      {{"checkpoint_hash"}, "xxh3-128:abc", "'checkpoint_hash'"},
      {{"checkpoint_hash"}, "md5:0123456789abcdef0123456789abcdef", "'checkpoint_hash'"},
      {{"compare_hash"}, nullptr, "'compare_hash'"},
      {{"dataset_fingerprint"}, 12, "'dataset_fingerprint'"},
      {{"dataset_given"}, "yes", "'dataset_given'"},
      {{"seeds"}, 7, "'seeds'"},
      {{"seeds", "1"}, 1.5, "'seeds[1]'"},
      {{"episode"}, "3", "'episode'"},
      {{"step"}, 2.5, "'step'"},
      {{"target"}, "1800", "'target'"},
      {{"zeroing"}, json::array(), "'zeroing'"},
      {{"interventions", "0"}, 1, "'interventions[0]'"},
      {{"bookmarks", "1", "step"}, "250", "'bookmarks[1].step'"},
      {{"bookmarks", "0", "note"}, 5, "'bookmarks[0].note'"},
      {{"inputs", "0", "hash"}, "xxh3-128:", "'inputs[0].hash'"},
      {{"figure"}, "rtg_sweep", "'figure'"},
      {{"figure", "name"}, nullptr, "'figure.name'"},
      {{"figure", "name"}, "../elsewhere", "'figure.name'"},
      {{"figure", "width"}, "3.3", "'figure.width'"},
      {{"figure", "width"}, 0, "'figure.width'"},
      {{"figure", "height"}, -1, "'figure.height'"},
      {{"figure", "dpi"}, 300.5, "'figure.dpi'"},
      {{"figure", "formats", "1"}, "gif", "'figure.formats[1]'"},
      {{"figure", "show_title"}, 1, "'figure.show_title'"},
      {{"outputs", "0"}, "/etc/passwd", "'outputs[0]'"},
      {{"studio_version"}, 1, "'studio_version'"},
      {{"created"}, 1700000000, "'created'"},
      {{"format"}, "decision-studio-workspace", "'format'"},
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

TEST(FigureRecipe, AMissingRequiredKeyIsRefusedNamingIt) {
  const json good = json::parse(to_json(full_recipe()));
  for (const char* key : {"format", "version", "analysis", "figure"}) {
    json j = good;
    j.erase(key);
    EXPECT_THAT(refusal(j), HasSubstr(std::string("'") + key + "': missing")) << key;
  }
  json j = good;
  j["figure"].erase("name");
  EXPECT_THAT(refusal(j), HasSubstr("'figure.name': missing"));
  // A path without its hash cannot be checked.
  j = good;
  j.erase("checkpoint_hash");
  EXPECT_THAT(refusal(j), HasSubstr("'checkpoint_hash': missing for checkpoint"));
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
  j["version"] = 2;
  j["studio_version"] = "Decision Studio 9.0.0";
  const std::string message = refusal(j);
  EXPECT_THAT(message, HasSubstr("'version': 2 is newer than this studio reads (1)"));
  EXPECT_THAT(message, HasSubstr("Decision Studio 9.0.0"));
  j["version"] = 0;
  EXPECT_THAT(refusal(j), HasSubstr("'version'"));
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

}  // namespace
}  // namespace dstudio
