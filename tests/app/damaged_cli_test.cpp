// Damaged datasets on the command line: `dataset info`, `dataset validate` and `train` read them
// in the reader process, so a crash or a hang inside libhdf5 is an ordinary refusal (exit 1, the
// file and what failed named), never a signal; a damaged metadata string costs a warning.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_run.h"
#include "h5_fixture.h"

namespace {

namespace fs = std::filesystem;
using dstudio::test::run_cli;
using testing::HasSubstr;

const fs::path kDamaged = fs::path(DSTUDIO_TEST_DATA) / "damaged";

[[maybe_unused]] std::string read_text(const fs::path& path) {  // the analyses' tests only
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const char* const kTrain =
    "train --variant mlp-bc --steps 2 --config '{\"hidden\": 8}' --training '{\"batch_size\": 4}' "
    "--dataset ";

TEST(DamagedDatasetCli, ACrashInsideLibhdf5IsExit1NamingTheFileAndTheStep) {
  dstudio::test::TempDir dir;
  const std::string file = (kDamaged / "crash_top_level_links.hdf5").string();
  for (const std::string& command :
       {std::string("dataset info "), std::string("dataset validate "), std::string(kTrain)}) {
    const std::string out = command == kTrain ? " --out " + (dir / "run").string() : "";
    const auto r = run_cli(command + file + out, dir);
    EXPECT_EQ(r.exit_code, 1) << command << r.err;
    EXPECT_THAT(r.err, HasSubstr(file + ": the HDF5 library crashed")) << command;
    EXPECT_THAT(r.err, HasSubstr("while listing the links of the file's top level")) << command;
    EXPECT_FALSE(fs::exists(dir / "run" / "checkpoint.pt"));
  }
}

#ifdef DSTUDIO_HAVE_FIGURES
const fs::path kShippedCheckpoint = fs::path(DSTUDIO_TEST_DATA).parent_path().parent_path() /
                                    "resources" / "checkpoints" / "hopper-medium-dt.pt";

// The analyses that read a dataset (--dataset, or the checkpoint's) read it in the reader process
// too.
TEST(DamagedDatasetCli, TheAnalysesReadingADatasetRefuseOneThatCrashesLibhdf5) {
  dstudio::test::TempDir dir;
  const std::string file = (kDamaged / "crash_top_level_links.hdf5").string();
  for (const std::string analysis : {"attention", "entropy --episodes 1", "tsne --iterations 250",
                                     "locality", "rtg-sweep --episodes 1 --multiples 1"}) {
    const auto r = run_cli("analyze " + analysis + " --checkpoint " + kShippedCheckpoint.string() +
                               " --dataset " + file + " --out " + (dir / "out").string(),
                           dir);
    if (analysis.rfind("rtg-sweep", 0) == 0) {
      // The data only give its reference line: the sweep is drawn without it, and says why.
      EXPECT_EQ(r.exit_code, 0) << r.err;
      EXPECT_THAT(read_text(dir / "out" / "summary.json"), HasSubstr("no dataset reference line"));
      continue;
    }
    EXPECT_EQ(r.exit_code, 1) << analysis << r.err;
    EXPECT_THAT(r.err, HasSubstr(file + ": the HDF5 library crashed")) << analysis;
    EXPECT_FALSE(fs::exists(dir / "out" / "summary.json")) << analysis;
  }
}

// What loading the dataset warned of is printed, and kept in summary.json.
TEST(DamagedDatasetCli, TheAnalysesPrintTheDatasetsWarnings) {
  dstudio::test::TempDir dir;
  dstudio::test::D4rlSpec spec;
  spec.n = 400;
  spec.obs_dim = 11;  // Hopper's
  spec.act_dim = 3;
  spec.with_timeouts = false;
  spec.terminals.assign(400, 0);
  for (int i = 99; i < 400; i += 100) spec.terminals[static_cast<std::size_t>(i)] = 1;
  const auto file = dir / "no-timeouts.hdf5";
  dstudio::test::write_d4rl_fixture(file, spec);
  const auto r =
      run_cli("analyze attention --windows 2 --checkpoint " + kShippedCheckpoint.string() +
                  " --dataset " + file.string() + " --out " + (dir / "out").string(),
              dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("warning: " + file.string() + ": the file has no 'timeouts'"));
  EXPECT_THAT(read_text(dir / "out" / "summary.json"), HasSubstr("\"dataset_warnings\""));
}
#endif

TEST(DamagedDatasetCli, ZeroArraysAndDamagedLinksAreRefusedByEveryCommand) {
  dstudio::test::TempDir dir;
  const std::pair<const char*, const char*> cases[] = {
      {"zero_rewards.hdf5", "'rewards': has no chunk found at row 192"},
      {"damaged_link_qpos.hdf5", "'infos/qpos': cannot be read: its link in the file is damaged"}};
  for (const auto& [name, message] : cases) {
    const std::string file = (kDamaged / name).string();
    for (const std::string& command :
         {std::string("dataset info "), std::string("dataset validate "), std::string(kTrain)}) {
      const std::string out = command == kTrain ? " --out " + (dir / "run").string() : "";
      const auto r = run_cli(command + file + out, dir);
      EXPECT_EQ(r.exit_code, 1) << command << name << r.err;
      EXPECT_THAT(r.err, HasSubstr(file + ": " + message)) << command;
    }
  }
}

// A name that is not UTF-8 (a damaged 'infos') reaches the JSON report escaped, not as an error.
TEST(DamagedDatasetCli, InfoWritesValidJsonForNamesOutsideUtf8) {
  dstudio::test::TempDir dir;
  dstudio::test::D4rlSpec spec;
  spec.with_infos = true;
  spec.terminals = {0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  const fs::path file = dir / "d.hdf5";
  dstudio::test::write_d4rl_fixture(file, spec);
  dstudio::test::rename_link(file, "infos", "in\xa0os");
  const auto r = run_cli("dataset info --json " + file.string(), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto report = nlohmann::json::parse(r.out);  // throws on bytes outside UTF-8
  EXPECT_THAT(report.dump(),
              HasSubstr("'infos' is missing and the file has a key 'in\\\\xa0os' instead"))
      << report.dump(2);
}

TEST(DamagedDatasetCli, AHangInTheMetadataIsStoppedAndCostsAWarning) {
  dstudio::test::TempDir dir;
  setenv("DSTUDIO_READER_TIMEOUT", "4", 1);  // room for a loaded machine; the loop costs this much
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_cli("dataset info " + (kDamaged / "hang_in_metadata.hdf5").string(), dir);
  unsetenv("DSTUDIO_READER_TIMEOUT");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 20.0);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("metadata left out: the HDF5 library did not finish reading "
                               "'metadata/algorithm' within 4 s"));
  EXPECT_THAT(r.out, HasSubstr("256"));  // the transitions, all there
}

// Training says so too: what a damaged file cost is never passed over in silence.
TEST(DamagedDatasetCli, ACrashInTheMetadataCostsAWarning) {
  dstudio::test::TempDir dir;
  const std::string file = (kDamaged / "crash_in_metadata.hdf5").string();
  auto r = run_cli("dataset validate " + file, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("warning: metadata left out: the HDF5 library crashed"));
  r = run_cli(kTrain + file + " --out " + (dir / "run").string(), dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err,
              HasSubstr("warning: " + file + ": metadata left out: the HDF5 library crashed"));
}

// A device or a FIFO named as a checkpoint is refused at once and without reading it: /dev/zero
// once grew the process past 1.6 GB and a FIFO blocked it forever. Each command runs in its own
// test process, so the largest child measured is this test's.
TEST(DamagedCheckpointCli, SpecialFilesAreRefusedAtOnceWithinAMemoryBound) {
  dstudio::test::TempDir dir;
  const auto fifo = dir / "policy.pt";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const auto& file : {std::string("/dev/zero"), fifo.string()}) {
    for (const std::string command :
         {"checkpoint info ", "checkpoint verify ", "train --resume "}) {
      const auto r = run_cli(command + file, dir);
      EXPECT_EQ(r.exit_code, 1) << command << file << ": " << r.err;
      EXPECT_THAT(r.err, HasSubstr(file + ": is not a regular file")) << command;
    }
  }
  rusage usage{};
  ASSERT_EQ(::getrusage(RUSAGE_CHILDREN, &usage), 0);
  EXPECT_LT(usage.ru_maxrss, 1024L * 1024L) << "kilobytes at most of any command above: a gigabyte";
}

}  // namespace
