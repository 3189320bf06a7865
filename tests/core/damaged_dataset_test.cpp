// Damaged datasets: arrays HDF5 would read as fill values, links it cannot read, totals that do not
// match, sizes the file cannot hold, metadata that fails; and the reader process that keeps a
// crash or a hang inside libhdf5 out of the caller (tests/data/damaged/README.md says how each
// damaged file was made).

#include <gtest/gtest.h>
#include <hdf5.h>

#include <atomic>
#include <chrono>
#include <tuple>

#include "dstudio/data/dataset_io.h"
#include "h5_fixture.h"

namespace dstudio::data {
namespace {

namespace fs = std::filesystem;

const fs::path kDamaged = fs::path(DSTUDIO_TEST_DATA) / "damaged";

// Runs `load` and returns the DatasetError it throws (fails the test when it does not).
template <typename Load>
DatasetError refusal(Load load) {
  try {
    load();
  } catch (const DatasetError& e) {
    return e;
  }
  ADD_FAILURE() << "no DatasetError";
  return DatasetError("", "", "");
}

bool has_warning(const Dataset& ds, const std::string& part) {
  for (const auto& w : ds.warnings)
    if (w.find(part) != std::string::npos) return true;
  return false;
}

LoadOptions isolated(double timeout = 0) {
  LoadOptions o;
  o.isolate = true;
  o.reader_timeout_seconds = timeout;
  return o;
}

// A D4RL file whose `rewards` is declared (chunked) but never written: HDF5 reads it as zeros.
TEST(DamagedDataset, AnArrayWithoutStoredValuesIsRefusedNotReadAsZeros) {
  test::TempDir dir;
  const hsize_t n = 2000;  // the fixture declares chunks of 1024 rows
  {
    test::H5Writer w(dir / "d.hdf5");
    w.numbers("observations", std::vector<double>(n * 2, 1.0), {n, 2}, H5T_IEEE_F32LE, true);
    w.numbers("actions", std::vector<double>(n, 0.5), {n, 1}, H5T_IEEE_F32LE, true);
    w.declare_only("rewards", {n});
    std::vector<int> terminals(n, 0);
    terminals.back() = 1;
    w.bools("terminals", terminals, {n});
    w.bools("timeouts", std::vector<int>(n, 0), {n});
  }
  const auto e = refusal([&] { (void)load_dataset(dir / "d.hdf5"); });
  EXPECT_EQ(e.key(), "rewards");
  EXPECT_NE(e.problem().find("fill value"), std::string::npos) << e.what();
}

// Mutants of the gzip sample whose chunk index misplaces a chunk of `rewards`, or lists a chunk of
// `actions` under a key a read cannot find (HDF5 1.10.8 reads both as zeros without an error).
TEST(DamagedDataset, ADamagedChunkIndexIsRefusedNotReadAsZeros) {
  for (const auto& [file, key] : {std::pair{"zero_rewards.hdf5", "rewards"},
                                  std::pair{"zero_actions_chunk.hdf5", "actions"}}) {
    const auto e = refusal([&] { (void)load_dataset(kDamaged / file); });
    EXPECT_EQ(e.key(), key);
    EXPECT_NE(e.problem().find("fill value"), std::string::npos) << e.what();
  }
}

// A mutant whose link to infos/qpos cannot be read: not "absent" (the viewer would then lose it).
TEST(DamagedDataset, AnUnreadableOptionalLinkIsRefusedNotTakenForAbsent) {
  const auto e = refusal([&] { (void)load_dataset(kDamaged / "damaged_link_qpos.hdf5"); });
  EXPECT_EQ(e.key(), "infos/qpos");
  EXPECT_NE(e.problem().find("link in the file is damaged"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("damaged_link_qpos.hdf5"), std::string::npos);
}

// Writes the default D4RL fixture (with infos and metadata) and renames its link `from` to `to`,
// as a damaged link name or name length would.
fs::path with_renamed_link(const test::TempDir& dir, const std::string& from,
                           const std::string& to) {
  const fs::path path = dir / "d.hdf5";
  test::D4rlSpec spec;
  spec.with_infos = true;
  spec.with_metadata = true;
  spec.terminals = {0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  test::write_d4rl_fixture(path, spec);
  test::rename_link(path, from, to);
  return path;
}

// An array whose name was damaged (a changed byte, bytes added or cut by a damaged length) is not
// absent: without 'timeouts' episodes would be cut every 1,000 steps, so the file is refused.
TEST(DamagedDataset, AnArrayUnderADamagedNameIsRefusedNotTakenForAbsent) {
  // From, to, and the name as the message shows it (bytes outside UTF-8 written as \xNN).
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"timeouts", "timeouus", "timeouus"},
      {"timeouts",
       "ti\xea"
       "eouts",
       "ti\\xeaeouts"},
      {"timeouts", "timeouts\xff\xff", "timeouts\\xff\\xff"},
      {"timeouts", "timeo", "timeo"},
      {"next_observations", "next_obsXrvationZ", "next_obsXrvationZ"},
      {"next_observations", "next_observ", "next_observ"},
      {"terminals", "termina1s", "termina1s"},
  };
  for (const auto& [from, to, shown] : cases) {
    test::TempDir dir;
    const fs::path path = with_renamed_link(dir, from, to);
    const auto e = refusal([&] { (void)load_dataset(path); });
    EXPECT_EQ(e.key(), from) << shown;
    EXPECT_NE(e.problem().find("'" + shown + "' instead"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
}

// A damaged 'infos', 'infos/qpos' or 'metadata' leaves the arrays whole: a warning says what is
// gone.
TEST(DamagedDataset, AnOptionalGroupUnderADamagedNameCostsAWarning) {
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"infos",
       "in\x7f"
       "os",
       "'infos' is missing and the file has a key 'in\\x7fos' instead"},
      {"metadata", "metadataaa",
       "'metadata' is missing and the file has a key 'metadataaa' instead"},
      {"infos/qpos", "infos/qp0s", "'infos/qpos' is missing and the file has 'infos/qp0s' instead"},
  };
  for (const auto& [from, to, warning] : cases) {
    test::TempDir dir;
    const Dataset ds = load_dataset(with_renamed_link(dir, from, to));
    EXPECT_TRUE(has_warning(ds, warning)) << testing::PrintToString(ds.warnings);
    EXPECT_FALSE(ds.timeouts_synthesized) << to;
    EXPECT_EQ(ds.data.rewards.size(), 10U);
    EXPECT_EQ(ds.data.qpos_dim, from == "metadata" ? 2 : 0) << to;
  }
}

// Names that are not UTF-8 (any byte a damaged name may hold) reach warnings and array lists
// escaped, in the reader process as in this one: JSON writers and Qt labels need UTF-8.
TEST(DamagedDataset, NamesOutsideUtf8AreShownEscaped) {
  test::TempDir dir;
  const fs::path path = with_renamed_link(dir, "infos/qvel",
                                          "infos/q\xff"
                                          "el");
  const auto loads = [&](const std::string& warning) {  // in this process, then in the reader's
    std::vector<Dataset> both;
    for (const bool isolate : {false, true}) {
      LoadOptions options;
      options.isolate = isolate;
      both.push_back(load_dataset(path, options));
      EXPECT_TRUE(has_warning(both.back(), warning))
          << testing::PrintToString(both.back().warnings);
      for (const auto& w : both.back().warnings)
        EXPECT_EQ(w.find_first_of("\x01\xff"), std::string::npos) << w;
    }
    return both;
  };
  test::rename_link(path, "infos", "inf\x01s");
  loads("'infos' is missing and the file has a key 'inf\\x01s' instead");
  test::rename_link(path, "inf\x01s", "infos");
  for (const Dataset& ds :
       loads("'infos/qvel' is missing and the file has 'infos/q\\xffel' instead")) {
    bool listed = false;
    for (const auto& a : ds.arrays) listed |= a.key == "infos/q\\xffel";
    EXPECT_TRUE(listed);
  }
}

// A name far from every layout name, or a near one beside the intact original, is an extra key:
// reported, and nothing is refused.
TEST(DamagedDataset, AnUnknownTopLevelNameIsReported) {
  for (const std::string extra : {"returns", "timeouus"}) {
    test::TempDir dir;
    test::D4rlSpec spec;
    spec.terminals = {0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    test::write_d4rl_fixture(dir / "d.hdf5", spec);
    hid_t file = H5Fopen((dir / "d.hdf5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    hsize_t n = 10;
    hid_t space = H5Screate_simple(1, &n, nullptr);
    hid_t d =
        H5Dcreate2(file, extra.c_str(), H5T_STD_U8LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dclose(d);
    H5Sclose(space);
    H5Fclose(file);
    const Dataset ds = load_dataset(dir / "d.hdf5");
    EXPECT_TRUE(has_warning(ds, "'" + extra + "' is not part of the D4RL layout"))
        << testing::PrintToString(ds.warnings);
    EXPECT_FALSE(ds.timeouts_synthesized);
  }
}

// A Minari episode group whose name was damaged no longer looks like an episode: the file's totals
// say one is missing.
TEST(DamagedDataset, MinariTotalsThatDisagreeWithTheGroupsAreRefused) {
  test::TempDir dir;
  const auto path = dir / "main_data.hdf5";
  test::write_minari_fixture(
      path, {{3, true, false, 0.0}, {4, false, true, 10.0}, {5, true, false, 20.0}});
  EXPECT_EQ(load_dataset(path).transitions(), 12);
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(H5Lmove(file, "episode_1", file, "episodd_1", H5P_DEFAULT, H5P_DEFAULT), 0);
  H5Fclose(file);
  const auto e = refusal([&] { (void)load_dataset(path); });
  EXPECT_NE(e.problem().find("declares 3 episodes (total_episodes) but holds 2"), std::string::npos)
      << e.what();
}

// A shape no file of this size can hold is refused before anything is allocated for it.
TEST(DamagedDataset, AShapeLargerThanTheFileCanHoldIsRefusedBeforeAllocating) {
  test::TempDir dir;
  const hsize_t n = 2000;
  {
    test::H5Writer w(dir / "d.hdf5");
    w.numbers("observations", std::vector<double>(n * 2, 1.0), {n, 2}, H5T_IEEE_F32LE);
    w.declare_only("actions", {n, 330893});  // 2.6 GB declared in a file of a few kB
    w.numbers("rewards", std::vector<double>(n, 1.0), {n}, H5T_IEEE_F32LE);
    w.bools("terminals", std::vector<int>(n, 0), {n});
  }
  ASSERT_LT(fs::file_size(dir / "d.hdf5"), 100000u);
  const auto e = refusal([&] { (void)load_dataset(dir / "d.hdf5"); });
  EXPECT_EQ(e.key(), "actions");
  EXPECT_NE(e.problem().find("more values than a file of"), std::string::npos) << e.what();
}

// Metadata too long to be a metadata text costs a warning, not the dataset; the rest of it stays.
TEST(DamagedDataset, AnOversizedMetadataTextCostsAWarningNotTheDataset) {
  test::TempDir dir;
  test::D4rlSpec spec;
  spec.with_metadata = true;
  spec.terminals = {0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  test::write_d4rl_fixture(dir / "d.hdf5", spec);
  hid_t file = H5Fopen((dir / "d.hdf5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t d = H5Dcreate2(file, "metadata/notes", type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  const std::string big(2 << 20, 'x');
  const char* text = big.c_str();
  ASSERT_GE(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, &text), 0);
  H5Dclose(d);
  H5Sclose(space);
  H5Tclose(type);
  H5Fclose(file);
  const Dataset ds = load_dataset(dir / "d.hdf5");
  EXPECT_TRUE(has_warning(ds, "'metadata/notes' declares a text of 2097152 bytes"))
      << testing::PrintToString(ds.warnings);
  EXPECT_EQ(ds.metadata.count("notes"), 0u);
  EXPECT_EQ(ds.metadata.at("algorithm"), "SAC");
  EXPECT_EQ(ds.transitions(), 10);
}

// What the reader process hands back is what an in-process load reads, to the last field.
TEST(DamagedDataset, TheReaderProcessHandsBackExactlyWhatALoadReads) {
  for (const char* sample : {"d4rl_gzip.hdf5", "d4rl_contiguous.hdf5", "minari.hdf5"}) {
    const auto path = kDamaged / "samples" / sample;
    const Dataset here = load_dataset(path);
    const Dataset there = load_dataset(path, isolated());
    EXPECT_EQ(there.data, here.data) << sample;
    EXPECT_EQ(there.fingerprint, here.fingerprint);
    EXPECT_EQ(there.metadata, here.metadata);
    EXPECT_EQ(there.warnings, here.warnings);
    EXPECT_EQ(there.notes, here.notes);
    EXPECT_EQ(there.env_id, here.env_id);
    EXPECT_EQ(there.path, here.path);
    EXPECT_EQ(there.format, here.format);
    EXPECT_EQ(there.state_mean, here.state_mean);
    ASSERT_EQ(there.episodes.size(), here.episodes.size());
    for (std::size_t i = 0; i < here.episodes.size(); ++i) {
      EXPECT_EQ(there.episodes[i].start, here.episodes[i].start);
      EXPECT_EQ(there.episodes[i].end, here.episodes[i].end);
      EXPECT_EQ(there.episodes[i].ret, here.episodes[i].ret);
    }
    ASSERT_EQ(there.arrays.size(), here.arrays.size());
    for (std::size_t i = 0; i < here.arrays.size(); ++i)
      EXPECT_EQ(there.arrays[i].shape, here.arrays[i].shape);
  }
}

// libhdf5 crashes (SIGSEGV) listing this file's top-level links: that is a refusal naming the file.
TEST(DamagedDataset, ACrashInTheReaderIsARefusalNamingTheFileAndTheStep) {
  const auto path = kDamaged / "crash_top_level_links.hdf5";
  const auto e = refusal([&] { (void)load_dataset(path, isolated()); });
  EXPECT_EQ(e.file(), path.string());
  EXPECT_NE(e.problem().find("the HDF5 library crashed"), std::string::npos) << e.what();
  EXPECT_NE(e.problem().find("while listing the links of the file's top level"), std::string::npos)
      << e.what();
}

// libhdf5 crashes reading a metadata string: the dataset loads without its metadata, its arrays
// those of the sample it was made from, and a warning says what was left out.
TEST(DamagedDataset, ACrashInTheMetadataCostsAWarningNotTheDataset) {
  const Dataset ds = load_dataset(kDamaged / "crash_in_metadata.hdf5", isolated());
  const Dataset sample = load_dataset(kDamaged / "samples" / "d4rl_contiguous.hdf5");
  EXPECT_EQ(ds.data, sample.data);
  EXPECT_TRUE(has_warning(ds, "metadata left out: the HDF5 library crashed"))
      << testing::PrintToString(ds.warnings);
  EXPECT_TRUE(has_warning(ds, "'metadata/algorithm'"));
  EXPECT_TRUE(ds.metadata.empty());
}

// libhdf5 loops forever reading a metadata string: the reader is stopped at its time limit.
TEST(DamagedDataset, AHangInTheReaderIsStoppedAtItsTimeLimit) {
  const auto start = std::chrono::steady_clock::now();
  const Dataset ds = load_dataset(kDamaged / "hang_in_metadata.hdf5", isolated(3));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 12.0);
  EXPECT_TRUE(has_warning(ds, "did not finish reading 'metadata/algorithm' within 3 s"))
      << testing::PrintToString(ds.warnings);
  EXPECT_EQ(ds.data, load_dataset(kDamaged / "samples" / "d4rl_contiguous.hdf5").data);
}

// Cancelling while the reader runs stops it at once: cancelled when the reader process first
// reports (it is opening the file it then hangs in), the load ends without waiting out its 60 s.
TEST(DamagedDataset, CancellingStopsAHangingReader) {
  Progress progress;
  std::atomic<bool> reading = false;
  std::chrono::steady_clock::time_point cancelled_at;
  progress.report = [&](double, std::string_view) {
    if (reading.exchange(true)) return;
    cancelled_at = std::chrono::steady_clock::now();
    progress.cancel.cancel();
  };
  EXPECT_THROW((void)load_dataset(kDamaged / "hang_in_metadata.hdf5", isolated(60), progress),
               Cancelled);
  ASSERT_TRUE(reading) << "the reader reported before it hung";
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - cancelled_at).count(),
            3.0);
}

}  // namespace
}  // namespace dstudio::data
