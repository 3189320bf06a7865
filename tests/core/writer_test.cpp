// The D4RL writer: exact round trips through the loader, same arrays same bytes, atomic files.

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "dstudio/data/dataset_io.h"
#include "dstudio/data/synthetic.h"
#include "h5_fixture.h"

namespace dstudio::data {
namespace {

std::string bytes_of(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

SyntheticSpec small_spec(std::uint64_t seed = 3) {
  SyntheticSpec spec;
  spec.transitions = 3000;
  spec.seed = seed;
  return spec;
}

TEST(WriteD4rl, RoundTripIsExact) {
  test::TempDir dir;
  const auto arrays = make_synthetic(small_spec());
  write_d4rl(dir / "d.hdf5", arrays, {{"generator", "test"}, {"env", "hopper"}});
  LoadOptions options;
  options.next_observations = true;
  const Dataset ds = load_dataset(dir / "d.hdf5", options);
  EXPECT_TRUE(ds.data == arrays);
  EXPECT_EQ(ds.metadata.at("generator"), "test");
  EXPECT_EQ(ds.env_id, "hopper");
  EXPECT_EQ(ds.fingerprint, content_fingerprint(arrays));
}

TEST(WriteD4rl, Float64AndNoTimeoutsVariantsLoadBack) {
  test::TempDir dir;
  const auto arrays = make_synthetic(small_spec());
  WriteOptions options;
  options.float64 = true;
  options.gzip_level = 0;
  write_d4rl(dir / "d.hdf5", arrays, {}, options);
  const Dataset ds = load_dataset(dir / "d.hdf5");
  EXPECT_EQ(ds.data.observations, arrays.observations);  // float32 -> float64 -> float32 is exact
  EXPECT_EQ(ds.arrays.front().dtype, "float64");

  options.write_timeouts = false;
  write_d4rl(dir / "old.hdf5", arrays, {}, options);
  EXPECT_TRUE(load_dataset(dir / "old.hdf5").timeouts_synthesized);
}

TEST(WriteD4rl, SameArraysGiveTheSameBytes) {
  test::TempDir dir;
  write_d4rl(dir / "a.hdf5", make_synthetic(small_spec()));
  write_d4rl(dir / "b.hdf5", make_synthetic(small_spec()));
  write_d4rl(dir / "c.hdf5", make_synthetic(small_spec(4)));
  EXPECT_EQ(bytes_of(dir / "a.hdf5"), bytes_of(dir / "b.hdf5"));
  EXPECT_NE(bytes_of(dir / "a.hdf5"), bytes_of(dir / "c.hdf5"));
}

TEST(WriteD4rl, FailureLeavesThePreviousFileIntactAndNoPartialFile) {
  test::TempDir dir;
  const auto arrays = make_synthetic(small_spec());
  write_d4rl(dir / "d.hdf5", arrays);
  const std::string before = bytes_of(dir / "d.hdf5");
  auto broken = arrays;
  broken.actions.pop_back();
  EXPECT_THROW(write_d4rl(dir / "d.hdf5", broken), DatasetError);
  EXPECT_EQ(bytes_of(dir / "d.hdf5"), before);
  int files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path()))
    ++files;
  EXPECT_EQ(files, 1);
  EXPECT_THROW(write_d4rl(dir / "missing-folder" / "d.hdf5", arrays), DatasetError);
  // A state array of the wrong length, or a name that is not one, is refused the same way.
  auto short_info = arrays;
  short_info.state_infos["door_body_pos"] = {3, std::vector<float>(3 * arrays.size() - 1, 0.0f)};
  EXPECT_THROW(write_d4rl(dir / "d.hdf5", short_info), DatasetError);
  auto nested = arrays;
  nested.state_infos["a/b"] = {1, std::vector<float>(arrays.size(), 0.0f)};
  EXPECT_THROW(write_d4rl(dir / "d.hdf5", nested), DatasetError);
  EXPECT_EQ(bytes_of(dir / "d.hdf5"), before);
}

// The task's state arrays (D4RL's Adroit infos keys) go out and come back exactly; the loader reads
// the state keys it knows, and leaves others (a policy's action_mean) in the file.
TEST(WriteD4rl, StateInfosRoundTrip) {
  test::TempDir dir;
  auto arrays = make_synthetic(small_spec());
  const auto n = static_cast<std::size_t>(arrays.size());
  InfoColumns orien{4, std::vector<float>(4 * n)}, mean{3, std::vector<float>(3 * n, 0.5f)};
  for (std::size_t i = 0; i < orien.values.size(); ++i) orien.values[i] = 0.001f * i;
  arrays.state_infos["desired_orien"] = orien;
  arrays.state_infos["action_mean"] = mean;
  write_d4rl(dir / "d.hdf5", arrays);
  LoadOptions options;
  options.next_observations = true;
  const Dataset ds = load_dataset(dir / "d.hdf5", options);
  ASSERT_EQ(ds.data.state_infos.size(), 1u);
  EXPECT_EQ(ds.data.state_infos.at("desired_orien"), orien);
  bool listed = false;
  for (const auto& a : ds.arrays) listed |= a.key == "infos/action_mean";
  EXPECT_TRUE(listed);
  arrays.state_infos.erase("action_mean");
  EXPECT_TRUE(ds.data == arrays);
  EXPECT_EQ(ds.data.memory_bytes(), arrays.memory_bytes());
  EXPECT_GE(ds.data.memory_bytes(),
            static_cast<std::int64_t>(sizeof(float) *
                                      (orien.values.size() + arrays.observations.size())));
}

TEST(Synthetic, HasEveryEndReasonAndIsDeterministic) {
  auto spec = small_spec();
  spec.transitions = 20000;
  const auto a = make_synthetic(spec);
  EXPECT_TRUE(a == make_synthetic(spec));
  EXPECT_EQ(a.size(), 20000);
  const auto eps = segment_episodes(a.rewards, a.terminals, a.timeouts);
  int terminal = 0, timeout = 0;
  for (const auto& e : eps) {
    terminal += e.end == EndReason::Terminal;
    timeout += e.end == EndReason::Timeout;
    if (e.complete()) {
      EXPECT_LE(e.length, 1000);
    }
  }
  EXPECT_GT(terminal, 0);
  EXPECT_GT(timeout, 0);
  ASSERT_EQ(eps.back().end, EndReason::Unterminated);
  EXPECT_EQ(eps.back().length, spec.tail_steps);
}

}  // namespace
}  // namespace dstudio::data
