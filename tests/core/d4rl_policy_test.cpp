// The behaviour policy a D4RL expert file carries in metadata/policy: files in D4RL's Adroit
// expert layout, written here through HDF5's C API with the shipped DAPG policies' layers (folded
// as D4RL's extract_params folds them), read back into policies that act as the shipped ones; the
// quirk `dataset info` says; damaged policies refused naming the file and the key.

#include "dstudio/behaviour/d4rl_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "adroit_expert_file.h"
#include "dstudio/behaviour/adroit_data.h"
#include "dstudio/common/error.h"
#include "dstudio/data/dataset_io.h"
#include "h5_fixture.h"

namespace dstudio::behaviour {
namespace {

using testing::HasSubstr;

using test::d4rl_fold;
using test::PolicyArrays;
using test::write_expert_file;

PolicyArrays unfolded(const MlpPolicy& p) {
  PolicyArrays out;
  out.layer("fc0", p.layers[0]);
  out.layer("fc1", p.layers[1]);
  out.layer("last_fc", p.layers[2]);
  out.layer("last_fc_log_std", p.layers[2]);
  return out;
}

// Pen's DAPG policy has no input or output scaling, so D4RL's fold leaves its layers as they are:
// the file's policy is the shipped one, and acts bit for bit as it does on every observation of
// the file. `dataset info`'s summary names its sizes and the last_fc_log_std quirk.
TEST(D4rlPolicy, PensFilePolicyActsBitForBitAsTheShippedOne) {
  const auto shipped = shipped_dapg_policy("pen");
  for (float v : shipped.in_shift) ASSERT_EQ(v, 0.0f);
  for (float v : shipped.in_scale) ASSERT_EQ(v, 1.0f);
  for (float v : shipped.out_shift) ASSERT_EQ(v, 0.0f);
  for (float v : shipped.out_scale) ASSERT_EQ(v, 1.0f);
  const auto folded = d4rl_fold(shipped);
  for (const auto& [key, a] : unfolded(shipped).arrays)
    ASSERT_EQ(folded.arrays.at(key).second, a.second) << key << ": the fold is the identity";

  test::TempDir dir;
  write_expert_file(dir / "pen-expert-v1.hdf5", "pen", folded);
  const auto ds = data::load_dataset(dir / "pen-expert-v1.hdf5", {.isolate = true});
  ASSERT_TRUE(has_d4rl_policy(ds));
  const auto p = d4rl_policy(ds);
  EXPECT_EQ(p.task, "pen");
  ASSERT_EQ(p.layers.size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) EXPECT_TRUE(p.layers[k] == shipped.layers[k]) << k;
  std::vector<float> a(24), b(24);
  ASSERT_GT(ds.data.size(), 10);
  for (std::int64_t i = 0; i < ds.data.size(); ++i) {
    const auto obs =
        std::span<const float>(ds.data.observations).subspan(static_cast<std::size_t>(i * 45), 45);
    p.act(obs, a);
    shipped.act(obs, b);
    ASSERT_EQ(a, b) << "row " << i;
  }

  const auto s = summarize_d4rl_policy(ds);
  EXPECT_TRUE(s.present);
  EXPECT_TRUE(s.usable) << s.refusal;
  EXPECT_EQ(s.sizes, "tanh MLP 45 -> 64 -> 64 -> 24");
  EXPECT_THAT(s.quirk, HasSubstr("last_fc_log_std is a copy of last_fc"));
}

// Door's policy scales its inputs and outputs; D4RL folded the scaling into fc0 and last_fc
// without mjrl's 1e-8 on in_scale. The file's layers are read bit for bit, and its mean action
// is the shipped policy's to float32 rounding along an expert episode.
TEST(D4rlPolicy, DoorsFoldedPolicyIsReadExactlyAndActsAsTheShippedOne) {
  const auto shipped = shipped_dapg_policy("door");
  const auto folded = d4rl_fold(shipped);
  test::TempDir dir;
  write_expert_file(dir / "door-expert-v1.hdf5", "door", folded);
  const auto ds = data::load_dataset(dir / "door-expert-v1.hdf5", {.isolate = true});
  const auto p = d4rl_policy(ds);
  EXPECT_EQ(p.task, "door");
  EXPECT_EQ(p.layers[0].weight, folded.arrays.at("fc0/weight").second);
  EXPECT_EQ(p.layers[0].bias, folded.arrays.at("fc0/bias").second);
  EXPECT_EQ(p.layers[2].weight, folded.arrays.at("last_fc/weight").second);
  EXPECT_EQ(p.layers[2].bias, folded.arrays.at("last_fc/bias").second);
  std::vector<float> a(28), b(28);
  double worst = 0.0;
  for (std::int64_t i = 0; i < ds.data.size(); ++i) {
    const auto obs =
        std::span<const float>(ds.data.observations).subspan(static_cast<std::size_t>(i * 39), 39);
    p.act(obs, a);
    shipped.act(obs, b);
    for (int j = 0; j < 28; ++j)
      worst = std::max(worst, std::abs(static_cast<double>(a[j]) - b[j]));
  }
  EXPECT_LT(worst, 1e-4);
  EXPECT_GT(worst, 0.0) << "the fold rounds: the file's policy is not bit-equal to the pickle's";
  EXPECT_EQ(summarize_d4rl_policy(ds).sizes, "tanh MLP 39 -> 32 -> 32 -> 28");

  // The viewers' name for it: the file, read in the reader process, of door's sizes.
  const auto named = load_behaviour_policy((dir / "door-expert-v1.hdf5").string(), "door");
  EXPECT_TRUE(named.layers == p.layers);
  EXPECT_TRUE(load_behaviour_policy("dapg", "door").layers == shipped.layers);
  EXPECT_THAT([&] { (void)load_behaviour_policy((dir / "door-expert-v1.hdf5").string(), "pen"); },
              testing::ThrowsMessage<UsageError>(HasSubstr("pen has 45 and 24")));
  EXPECT_THROW((void)load_behaviour_policy("dapg", "hopper"), Error);
}

// A damaged policy is refused with the file and the key: a layer missing, a weight of the wrong
// shape, a bias of the wrong length, a value that is not finite, a last layer of the wrong width.
TEST(D4rlPolicy, ADamagedPolicyIsRefusedNamingTheFileAndTheKey) {
  const auto shipped = shipped_dapg_policy("door");
  test::TempDir dir;
  const auto refused = [&](const std::string& name, PolicyArrays arrays,
                           const std::string& message) {
    const auto path = dir / (name + "-door-expert-v1.hdf5");
    write_expert_file(path, "door", arrays);
    const auto ds = data::load_dataset(path, {.isolate = true});
    EXPECT_TRUE(has_d4rl_policy(ds)) << name;
    try {
      (void)d4rl_policy(ds);
      ADD_FAILURE() << name << " was taken";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(path.string())) << name;
      EXPECT_THAT(e.what(), HasSubstr(message)) << name;
    }
    const auto s = summarize_d4rl_policy(ds);
    EXPECT_FALSE(s.usable) << name;
    EXPECT_THAT(s.refusal, HasSubstr(message)) << name;
  };
  auto a = d4rl_fold(shipped);
  a.arrays.erase("last_fc/weight");
  refused("no-last", a, "'metadata/policy/last_fc/weight': is missing");
  a = d4rl_fold(shipped);
  a.arrays.at("fc1/weight").first = {32, 31};
  a.arrays.at("fc1/weight").second.resize(32 * 31);
  refused("fc1-shape", a,
          "'metadata/policy/fc1/weight': takes 31 inputs, but the layer before gives 32");
  a = d4rl_fold(shipped);
  a.arrays.at("fc0/bias").first = {31};
  a.arrays.at("fc0/bias").second.resize(31);
  refused("fc0-bias", a, "'metadata/policy/fc0/bias': must be a vector of 32");
  a = d4rl_fold(shipped);
  a.arrays.at("fc0/weight").second[40] = std::numeric_limits<float>::quiet_NaN();
  refused("nan", a, "'metadata/policy/fc0/weight': cannot be read");
  a = d4rl_fold(shipped);
  a.arrays.at("fc0/weight").first = {32, 40};
  a.arrays.at("fc0/weight").second.resize(32 * 40);
  refused("fc0-in", a, "takes 40 inputs, but the observations have 39");
  a = d4rl_fold(shipped);
  for (const char* part : {"weight", "bias"}) {
    auto& l = a.arrays.at(std::string("last_fc/") + part);
    l.first[0] = 27;
    l.second.resize(l.second.size() / 28 * 27);
  }
  refused("last-width", a, "gives 27 actions, but the actions have 28");
}

}  // namespace
}  // namespace dstudio::behaviour
