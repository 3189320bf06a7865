// The D4RL loader on fixtures of every quirk real files have, written through the HDF5 C API.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "dstudio/data/dataset_io.h"
#include "h5_fixture.h"

namespace dstudio::data {
namespace {

using test::D4rlSpec;
using test::FlagType;

// float64 file?, (N, 1) vectors?, flag storage, gzip?
using Quirks = std::tuple<bool, bool, FlagType, bool>;

class D4rlQuirks : public testing::TestWithParam<Quirks> {};

std::string QuirksName(const testing::TestParamInfo<Quirks>& param) {
  const auto [float64, column, flags, gzip] = param.param;
  const char* flag_names[] = {"BoolFlags", "UInt8Flags", "FloatFlags"};
  return std::string(float64 ? "Float64" : "Float32") + (column ? "_Nx1" : "_N") + "_" +
         flag_names[static_cast<int>(flags)] + (gzip ? "_Gzip" : "_Plain");
}

TEST_P(D4rlQuirks, ReadsValuesEpisodesAndDtypesExactly) {
  const auto [float64, column, flags, gzip] = GetParam();
  test::TempDir dir;
  D4rlSpec spec;
  spec.n = 12;
  spec.float64 = float64;
  spec.column_vectors = column;
  spec.flags = flags;
  spec.gzip = gzip;
  spec.with_infos = true;
  spec.terminals = {0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  spec.timeouts = {0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0};
  test::write_d4rl_fixture(dir / "d.hdf5", spec);

  LoadOptions options;
  options.next_observations = true;
  const Dataset ds = load_dataset(dir / "d.hdf5", options);
  EXPECT_EQ(ds.format, "d4rl");
  ASSERT_EQ(ds.transitions(), 12);
  ASSERT_EQ(ds.data.obs_dim, 3);
  ASSERT_EQ(ds.data.act_dim, 2);
  for (int i = 0; i < spec.n; ++i) {
    for (int j = 0; j < 3; ++j) {
      EXPECT_EQ(ds.data.observations[i * 3 + j], static_cast<float>(spec.obs(i, j)));
      EXPECT_EQ(ds.data.next_observations[i * 3 + j], static_cast<float>(spec.obs(i + 1, j)));
    }
    for (int k = 0; k < 2; ++k)
      EXPECT_EQ(ds.data.actions[i * 2 + k], static_cast<float>(spec.act(i, k)));
    EXPECT_EQ(ds.data.rewards[i], static_cast<float>(spec.reward(i)));
    EXPECT_EQ(ds.data.terminals[i], spec.terminals[i]);
    EXPECT_EQ(ds.data.timeouts[i], spec.timeouts[i]);
    EXPECT_EQ(ds.data.qpos[i * 2 + 1], static_cast<float>(spec.obs(i, 1)));
    EXPECT_EQ(ds.data.qvel[i], static_cast<float>(spec.reward(i)));
  }
  ASSERT_EQ(ds.episodes.size(), 3u);
  EXPECT_EQ(ds.episodes[0].end, EndReason::Terminal);
  EXPECT_EQ(ds.episodes[0].length, 3);
  EXPECT_EQ(ds.episodes[1].end, EndReason::Timeout);
  EXPECT_EQ(ds.episodes[1].length, 4);
  EXPECT_EQ(ds.episodes[2].end, EndReason::Unterminated);
  EXPECT_EQ(ds.episodes[2].length, 5);
  // Returns are sums of 1 + 0.25 * (i % 4).
  EXPECT_DOUBLE_EQ(ds.episodes[0].ret, 1.0 + 1.25 + 1.5);
  EXPECT_DOUBLE_EQ(ds.episodes[1].ret, 1.75 + 1.0 + 1.25 + 1.5);

  const auto dtype_of = [&](const std::string& key) {
    for (const auto& a : ds.arrays)
      if (a.key == key) return a.dtype;
    return std::string("absent");
  };
  EXPECT_EQ(dtype_of("observations"), float64 ? "float64" : "float32");
  EXPECT_EQ(dtype_of("terminals"), flags == FlagType::Bool    ? "bool"
                                   : flags == FlagType::UInt8 ? "uint8"
                                                              : "float32");
  EXPECT_EQ(dtype_of("infos/action_log_probs"), float64 ? "float64" : "float32");
  // The tail is reported, never silently merged; as in D4RL it is a note, not a warning that every
  // command loading the file would repeat.
  ASSERT_EQ(ds.notes.size(), 1u);
  EXPECT_NE(ds.notes.back().find("last 5 steps"), std::string::npos);
  for (const auto& w : ds.warnings) EXPECT_EQ(w.find("unterminated"), std::string::npos) << w;
}

INSTANTIATE_TEST_SUITE_P(AllStorageVariants, D4rlQuirks,
                         testing::Combine(testing::Bool(), testing::Bool(),
                                          testing::Values(FlagType::Bool, FlagType::UInt8,
                                                          FlagType::Float32),
                                          testing::Bool()),
                         QuirksName);

TEST(D4rlLoader, StatisticsCoverCompleteEpisodesOnly) {
  test::TempDir dir;
  D4rlSpec spec;
  spec.n = 6;
  spec.obs_dim = 1;
  spec.terminals = {0, 0, 0, 1, 0, 0};  // rows 4, 5 are the tail
  test::write_d4rl_fixture(dir / "d.hdf5", spec);
  const Dataset ds = load_dataset(dir / "d.hdf5");
  // obs = 0, 0.5, 1.0, 1.5 over the complete episode.
  EXPECT_FLOAT_EQ(ds.state_mean[0], 0.75f);
  EXPECT_FLOAT_EQ(ds.state_std[0], std::sqrt(0.3125f));
}

TEST(D4rlLoader, WithoutTimeoutsCutsEvery1000Steps) {
  test::TempDir dir;
  D4rlSpec spec;
  spec.n = 2500;
  spec.obs_dim = 1;
  spec.act_dim = 1;
  spec.with_timeouts = false;
  spec.terminals.assign(2500, 0);
  spec.terminals[99] = 1;
  test::write_d4rl_fixture(dir / "d.hdf5", spec);
  const Dataset ds = load_dataset(dir / "d.hdf5");
  EXPECT_TRUE(ds.timeouts_synthesized);
  EXPECT_TRUE(ds.data.timeouts.empty());
  ASSERT_EQ(ds.episodes.size(), 4u);
  EXPECT_EQ(ds.episodes[0].length, 100);
  EXPECT_EQ(ds.episodes[0].end, EndReason::Terminal);
  EXPECT_EQ(ds.episodes[1].length, 1000);
  EXPECT_EQ(ds.episodes[1].end, EndReason::Timeout);
  EXPECT_EQ(ds.episodes[2].length, 1000);
  EXPECT_EQ(ds.episodes[3].length, 400);
  EXPECT_EQ(ds.episodes[3].end, EndReason::Unterminated);
  const auto s = summarize(ds);
  EXPECT_EQ(s.episodes, 3);
  EXPECT_EQ(s.tail_steps, 400);
}

TEST(D4rlLoader, ReadsMetadataScalarsAndListsArrays) {
  test::TempDir dir;
  D4rlSpec spec;
  spec.with_metadata = true;
  spec.timeouts.assign(10, 0);
  spec.timeouts[9] = 1;
  test::write_d4rl_fixture(dir / "d.hdf5", spec);
  const Dataset ds = load_dataset(dir / "d.hdf5");
  EXPECT_EQ(ds.metadata.at("algorithm"), "SAC");
  EXPECT_EQ(ds.metadata.at("iteration"), "42");
  EXPECT_EQ(ds.metadata.count("policy/fc0/weight"), 0u);  // arrays are listed, not printed
  bool listed = false;
  for (const auto& a : ds.arrays)
    if (a.key == "metadata/policy/fc0/weight") listed = a.shape == std::vector<std::int64_t>{2, 3};
  EXPECT_TRUE(listed);
  EXPECT_TRUE(ds.warnings.empty()) << ds.warnings.front();
}

TEST(D4rlLoader, FingerprintIgnoresStorageButNotContent) {
  test::TempDir dir;
  D4rlSpec spec;
  spec.timeouts.assign(10, 0);
  spec.timeouts[9] = 1;
  test::write_d4rl_fixture(dir / "a.hdf5", spec);
  spec.gzip = false;
  spec.column_vectors = true;
  spec.flags = FlagType::UInt8;
  test::write_d4rl_fixture(dir / "b.hdf5", spec);
  spec.terminals.assign(10, 0);
  spec.terminals[4] = 1;
  test::write_d4rl_fixture(dir / "c.hdf5", spec);
  const auto a = load_dataset(dir / "a.hdf5").fingerprint;
  EXPECT_EQ(load_dataset(dir / "b.hdf5").fingerprint, a);
  EXPECT_NE(load_dataset(dir / "c.hdf5").fingerprint, a);
}

TEST(D4rlLoader, ReportsProgressAndHonoursCancellation) {
  test::TempDir dir;
  D4rlSpec spec;
  spec.n = 300;
  test::write_d4rl_fixture(dir / "d.hdf5", spec);
  std::vector<double> fractions;
  Progress progress;
  progress.report = [&](double f, std::string_view) { fractions.push_back(f); };
  load_dataset(dir / "d.hdf5", {}, progress);
  ASSERT_GE(fractions.size(), 3u);
  EXPECT_TRUE(std::is_sorted(fractions.begin(), fractions.end()));
  EXPECT_DOUBLE_EQ(fractions.back(), 1.0);

  Progress cancelled;
  cancelled.cancel.cancel();
  EXPECT_THROW(load_dataset(dir / "d.hdf5", {}, cancelled), Cancelled);
}

}  // namespace
}  // namespace dstudio::data
