// Loading plugins: one that works adds a variant, an analysis and a dataset format that work; each
// broken one is refused with a message naming its file, and leaves the registries as they were.

#include "dstudio/plugins/plugin.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "dstudio/analysis/analysis_registry.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/data/format_registry.h"
#include "dstudio/models/variant_registry.h"
#include "dstudio/plugins/loader.h"
#include "dstudio/plugins/sdk_version.h"

namespace fs = std::filesystem;
using namespace dstudio;

namespace {

const fs::path kPlugins = DSTUDIO_TEST_PLUGINS;

fs::path temp_dir(const std::string& name) {
  auto dir = fs::temp_directory_path() /
             ("dstudio-plugin-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Loaded once per process (a plugin is never unloaded).
const plugins::PluginRecord& good() {
  static const auto record = plugins::load_plugin(kPlugins / "good.so");
  return record;
}

}  // namespace

TEST(Plugins, AWorkingPluginAddsItsVariantAnalysisAndDatasetFormat) {
  const auto& r = good();
  ASSERT_TRUE(r.loaded) << r.error;
  EXPECT_EQ(r.name, "test-good");
  EXPECT_EQ(r.version, "0.1.0");
  EXPECT_EQ(r.variants, std::vector<std::string>{"dt-small"});
  EXPECT_EQ(r.analyses, std::vector<std::string>{"episode-returns"});
  EXPECT_EQ(r.dataset_formats, std::vector<std::string>{"csv-transitions"});

  // The variant: after the studio's own, stamped with the plugin, and its JSON round-trips.
  const auto names = models::variant_names();
  EXPECT_EQ(names.front(), "dt");
  EXPECT_EQ(names.back(), "dt-small");
  const auto c = models::make_variant("dt-small");
  EXPECT_EQ(c.hidden, 64);
  EXPECT_EQ(c.layers, 1);
  EXPECT_EQ(c.plugin, "test-good");
  EXPECT_EQ(c.plugin_version, "0.1.0");
  EXPECT_EQ(models::variant_from_json(models::to_json(c)), c);
}

TEST(Plugins, APluginDatasetFormatLoadsThroughLoadDatasetWithTheUsualStatistics) {
  ASSERT_TRUE(good().loaded);
  const auto dir = temp_dir("csv");
  const auto file = dir / "tiny.transitions.csv";
  {
    std::ofstream out(file);
    out << "2,1\n";
    // Two episodes: a terminal after 3 steps (returns 1+2+3), a timeout after 2 (10+20).
    out << "0,1,0.5,1,0,0\n1,2,0.5,2,0,0\n2,3,0.5,3,1,0\n";
    out << "3,4,-0.5,10,0,0\n4,5,-0.5,20,0,1\n";
  }
  const auto ds = data::load_dataset(file);
  EXPECT_EQ(ds.format, "csv-transitions");
  ASSERT_EQ(ds.episodes.size(), 2u);
  EXPECT_DOUBLE_EQ(ds.episodes[0].ret, 6.0);
  EXPECT_DOUBLE_EQ(ds.episodes[1].ret, 30.0);
  // Statistics over complete episodes, computed by load_dataset, not the plugin.
  ASSERT_EQ(ds.state_mean.size(), 2u);
  EXPECT_FLOAT_EQ(ds.state_mean[0], 2.0f);
  EXPECT_FLOAT_EQ(ds.state_mean[1], 3.0f);
  EXPECT_FALSE(ds.fingerprint.empty());
  // Read as the programs read untrusted files, in the plugin reader process: the same dataset.
  data::LoadOptions isolated;
  isolated.isolate = true;
  const auto read_apart = data::load_dataset(file, isolated);
  EXPECT_EQ(read_apart.format, "csv-transitions");
  EXPECT_EQ(read_apart.fingerprint, ds.fingerprint);
  EXPECT_EQ(read_apart.data.observations, ds.data.observations);
  EXPECT_EQ(read_apart.state_mean, ds.state_mean);
  ASSERT_EQ(read_apart.episodes.size(), 2u);
  EXPECT_DOUBLE_EQ(read_apart.episodes[1].ret, 30.0);
  // The built-in formats still read their files: a CSV that is not one of the plugin's is refused
  // by the HDF5 loader, as before.
  std::ofstream(dir / "other.csv") << "1,2\n";
  EXPECT_THROW(data::load_dataset(dir / "other.csv"), data::DatasetError);
  fs::remove_all(dir);
}

// The calls a plugin makes, used for entries that ship with the studio: a format and a variant
// added through them are listed, read and made exactly as the studio's own are.
TEST(Plugins, ABuiltInFormatAndVariantAddedThroughThePluginCallsWorkLikeTheShippedOnes) {
  data::DatasetFormatDefinition format;
  format.name = "steps-text";
  format.description = "one transition a line: observation, action, reward, terminal, timeout";
  format.detect = [](const fs::path& p) { return p.extension() == ".steps"; };
  format.load = [](const fs::path& p, const data::LoadOptions&, const Progress&) {
    std::ifstream in(p);
    data::Dataset ds;
    ds.path = p.string();
    auto& d = ds.data;
    d.obs_dim = 1, d.act_dim = 1;
    for (double o, a, r, term, tout; in >> o >> a >> r >> term >> tout;) {
      d.observations.push_back(static_cast<float>(o));
      d.actions.push_back(static_cast<float>(a));
      d.rewards.push_back(static_cast<float>(r));
      d.terminals.push_back(term != 0.0);
      d.timeouts.push_back(tout != 0.0);
    }
    ds.episodes = data::segment_episodes(d.rewards, d.terminals, d.timeouts);
    return ds;
  };
  plugins::builtin_registrar().add_dataset_format(format);
  models::VariantDefinition variant;
  variant.name = "dt-one-layer";
  variant.description = "DT with one block";
  variant.defaults = [] {
    auto c = models::make_variant("dt");
    c.layers = 1;
    return c;
  };
  plugins::builtin_registrar().add_variant(variant);

  const auto entry = data::dataset_format_registry().find("steps-text");
  ASSERT_TRUE(entry);
  EXPECT_TRUE(entry->origin.builtin());
  const auto dir = temp_dir("builtin-format");
  {
    std::ofstream out(dir / "two.steps");
    out << "1 0.5 1 0 0\n3 0.5 2 1 0\n5 -0.5 4 0 1\n";
  }
  const auto ds = data::load_dataset(dir / "two.steps");
  EXPECT_EQ(ds.format, "steps-text");
  ASSERT_EQ(ds.episodes.size(), 2u);
  EXPECT_DOUBLE_EQ(ds.episodes[0].ret, 3.0);
  EXPECT_DOUBLE_EQ(ds.episodes[1].ret, 4.0);
  ASSERT_EQ(ds.state_mean.size(), 1u);  // load_dataset's own statistics: mean of 1, 3, 5
  EXPECT_FLOAT_EQ(ds.state_mean[0], 3.0f);
  EXPECT_FALSE(ds.fingerprint.empty());

  const auto names = models::variant_names();
  EXPECT_TRUE(has(names, "dt-one-layer"));
  const auto c = models::make_variant("dt-one-layer");
  EXPECT_EQ(c.layers, 1);
  EXPECT_TRUE(c.plugin.empty());  // built in: its configurations name no plugin
  EXPECT_EQ(models::variant_from_json(models::to_json(c)), c);
  fs::remove_all(dir);
}

TEST(Plugins, APluginAnalysisRunsWithItsOptionsCheckedAndWritesItsFiles) {
  ASSERT_TRUE(good().loaded);
  const auto def = analysis::analysis_registry().find("episode-returns");
  ASSERT_NE(def, nullptr);
  EXPECT_EQ(def->origin.label(), "test-good 0.1.0");
  const auto dir = temp_dir("analysis");
  const auto file = dir / "tiny.transitions.csv";
  std::ofstream(file) << "1,1\n0,0,1,1,0\n0,0,5,0,0\n0,0,2,1,0\n";  // returns 1, 5+2
  const auto result = analysis::run_analysis(
      *def, {"", file.string(),
             analysis::AnalysisOptions(std::map<std::string, std::string>{{"top", "1"}})});
  const auto summary = nlohmann::json::parse(result.summary_json);
  EXPECT_EQ(summary["episodes"], 2);
  EXPECT_DOUBLE_EQ(summary.at("best").get<double>(), 7.0);
  ASSERT_EQ(result.tables.size(), 1u);
  EXPECT_EQ(result.tables[0].rows.size(), 1u);  // --top 1

  // Options: the default fills in, a wrong value is refused naming the option.
  EXPECT_EQ(analysis::resolve_options(*def, {}).integer("top"), 5);
  EXPECT_THROW(analysis::resolve_options(*def, {{"top", "0"}}), UsageError);
  EXPECT_THROW(analysis::resolve_options(*def, {{"top", "2.5"}}), UsageError);
  EXPECT_THROW(analysis::resolve_options(*def, {{"bottom", "2"}}), UsageError);
  try {
    analysis::resolve_options(*def, {{"top", "many"}});
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--top"), std::string::npos) << e.what();
  }

  const auto files = analysis::write_result_files(result, (dir / "out").string());
  ASSERT_EQ(files.size(), 2u);
  std::ifstream csv(dir / "out" / "returns.csv");
  std::string header, row;
  std::getline(csv, header);
  std::getline(csv, row);
  EXPECT_EQ(header, "rank,return");
  EXPECT_EQ(row, "1,7");
  fs::remove_all(dir);
}

TEST(Plugins, APluginOfAnotherInterfaceVersionIsRefusedBeforeItsCodeRuns) {
  const auto r = plugins::load_plugin(kPlugins / "bad_abi.so");  // its registration would abort
  EXPECT_FALSE(r.loaded);
  EXPECT_NE(r.file.find("bad_abi.so"), std::string::npos);
  EXPECT_NE(r.error.find("interface " + std::to_string(DSTUDIO_PLUGIN_ABI_VERSION + 998)),
            std::string::npos)
      << r.error;
  EXPECT_NE(r.error.find("rebuild"), std::string::npos) << r.error;
}

TEST(Plugins, ARegistrationThatThrowsIsRefusedAndWhatItAddedIsTakenOut) {
  const auto before = models::variant_names();
  const auto r = plugins::load_plugin(kPlugins / "throwing.so");
  EXPECT_FALSE(r.loaded);
  EXPECT_NE(r.error.find("deliberate failure after one variant"), std::string::npos) << r.error;
  EXPECT_TRUE(r.variants.empty());
  EXPECT_EQ(models::variant_names(), before);
  EXPECT_FALSE(has(models::variant_names(), "half-registered"));
  EXPECT_THROW(models::make_variant("half-registered"), UsageError);
}

TEST(Plugins, APluginClaimingABuiltInNameIsRefusedAndTheBuiltInStays) {
  const auto r = plugins::load_plugin(kPlugins / "duplicate.so");
  EXPECT_FALSE(r.loaded);
  EXPECT_NE(r.error.find("'dt' is already defined (built in)"), std::string::npos) << r.error;
  EXPECT_EQ(models::make_variant("dt").mixer, "attention");
}

TEST(Plugins, ATruncatedLibraryAndALibraryWithoutEntryPointsAreRefused) {
  const auto dir = temp_dir("truncated");
  fs::copy_file(kPlugins / "good.so", dir / "truncated.so");
  fs::resize_file(dir / "truncated.so", fs::file_size(dir / "truncated.so") / 3);
  const auto truncated = plugins::load_plugin(dir / "truncated.so");
  EXPECT_FALSE(truncated.loaded);
  EXPECT_NE(truncated.error.find("cannot be loaded as a shared library"), std::string::npos)
      << truncated.error;

  std::ofstream(dir / "text.so") << "not an ELF file\n";
  EXPECT_NE(
      plugins::load_plugin(dir / "text.so").error.find("cannot be loaded as a shared library"),
      std::string::npos);

  const auto foreign = plugins::load_plugin(kPlugins / "not_a.so");
  EXPECT_FALSE(foreign.loaded);
  EXPECT_NE(foreign.error.find("is not a Decision Studio plugin"), std::string::npos)
      << foreign.error;
  fs::remove_all(dir);
}

TEST(Plugins, AFolderIsLoadedOnceEachFileAndBrokenPluginsDoNotStopTheOthers) {
  ASSERT_TRUE(good().loaded);
  // The fixture folder: good.so was loaded above and is not tried again; every other file is
  // tried once and refused.
  const auto records = plugins::load_plugins({kPlugins});
  for (const auto& r : records) {
    EXPECT_EQ(r.file.find("good.so"), std::string::npos);
    EXPECT_FALSE(r.loaded) << r.file;
    EXPECT_FALSE(r.error.empty()) << r.file;
  }
  EXPECT_TRUE(plugins::load_plugins({kPlugins}).empty());
  const auto json = nlohmann::json::parse(plugins::records_json(plugins::plugin_records()));
  ASSERT_TRUE(json.is_array());
  bool found_good = false;
  for (const auto& r : json) found_good |= r["name"] == "test-good" && r["loaded"] == true;
  EXPECT_TRUE(found_good);
  EXPECT_TRUE(models::make_variant("dt-small").layers == 1);
}

TEST(Plugins, AConfigurationFromAMissingPluginNamesThePlugin) {
  const std::string json =
      R"({"variant": "lstm-dt", "mixer": "lstm", "plugin": "recurrent-tokens", "plugin_version": "2.1.0"})";
  try {
    models::variant_from_json(json);
    FAIL();
  } catch (const models::MissingPluginError& e) {
    EXPECT_EQ(e.plugin(), "recurrent-tokens");
    EXPECT_NE(std::string(e.what()).find("'recurrent-tokens 2.1.0'"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("not loaded"), std::string::npos) << e.what();
  }
  // A known variant with a plugin's mixer that is missing: the mixer is named.
  try {
    models::variant_from_json(
        R"({"variant": "hier", "mixer": "lstm", "plugin": "recurrent-tokens"})");
    FAIL();
  } catch (const models::MissingPluginError& e) {
    EXPECT_NE(std::string(e.what()).find("the mixer 'lstm'"), std::string::npos) << e.what();
  }
  // Without a plugin named, an unknown mixer stays a usage error.
  EXPECT_THROW(models::variant_from_json(R"({"variant": "dt", "mixer": "lstm"})"), UsageError);
}

TEST(Plugins, TheStudiosOwnConfigurationsWriteNoPluginKeys) {
  for (const auto& name : {"dt", "dc", "dhi", "udc"}) {
    const auto j = nlohmann::json::parse(models::to_json(models::make_variant(name)));
    EXPECT_FALSE(j.contains("plugin")) << name;
    EXPECT_FALSE(j.contains("mixer_options")) << name;
  }
}

// A plugin whose registration crashes is loaded first in a child process: there it crashes, here
// it is refused by name, and what it registered before crashing is nowhere.
TEST(Plugins, APluginThatCrashesWhileLoadingIsRefusedByNameAndThisProcessCarriesOn) {
  const auto r = plugins::load_plugin(kPlugins / "crashing.so");
  EXPECT_FALSE(r.loaded);
  EXPECT_NE(r.file.find("crashing.so"), std::string::npos);
  EXPECT_NE(r.error.find("crashed while loading (signal 11"), std::string::npos) << r.error;
  EXPECT_FALSE(models::variant_registry().find("crash-registered"));
}

// A crashing plugin in the plugin path no longer takes every command with it: `dstudio --help`
// names it and works; --no-plugins and DSTUDIO_NO_PLUGINS=1 start without trying any plugin.
TEST(Plugins, ACrashingPluginIsNamedAndSkippedByEveryCommandAndCanBeLeftOutAltogether) {
  const test::TempDir dir;
  fs::copy_file(kPlugins / "crashing.so", dir / "crashing.so");
  ::setenv("DSTUDIO_PLUGIN_PATH", dir.path().c_str(), 1);  // the commands below inherit it
  auto r = test::run_cli("--help", dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("crashing.so refused: it crashed while loading"), std::string::npos)
      << r.err;
  r = test::run_cli("variants", dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("crashing.so"), std::string::npos) << r.err;
  r = test::run_cli("--no-plugins variants", dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("crashing.so"), std::string::npos) << r.err;
  ::setenv("DSTUDIO_NO_PLUGINS", "1", 1);
  r = test::run_cli("plugins", dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("crashing.so"), std::string::npos) << r.err;
  ::unsetenv("DSTUDIO_NO_PLUGINS");
  ::unsetenv("DSTUDIO_PLUGIN_PATH");
}

// A plugin format that crashes on a file: read in the plugin reader process, the file is refused
// naming the format and the crash, and this process carries on.
TEST(Plugins, APluginFormatThatCrashesOnAFileIsRefusedInTheReaderProcess) {
  const auto r = plugins::load_plugin(kPlugins / "formats" / "crashing_format.so");
  ASSERT_TRUE(r.loaded) << r.error;
  const auto dir = temp_dir("crashing-format");
  std::ofstream(dir / "episode.crashes") << "anything";
  data::LoadOptions isolated;
  isolated.isolate = true;
  try {
    (void)data::load_dataset(dir / "episode.crashes", isolated);
    ADD_FAILURE() << "a file the format crashes on was loaded";
  } catch (const data::DatasetError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find((dir / "episode.crashes").string()), std::string::npos) << what;
    EXPECT_NE(what.find("the crashing-format format (plugin test-crashing-format 0.1.0) crashed "
                        "(Segmentation fault)"),
              std::string::npos)
        << what;
  }
  fs::remove_all(dir);
}
