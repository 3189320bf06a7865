// Every kind of unusable file gets a DatasetError that names the file, the key and the problem.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "dstudio/data/dataset_io.h"
#include "dstudio/models/checkpoint_info.h"
#include "dstudio/models/dataset_fit.h"
#include "dstudio/models/training_config.h"
#include "dstudio/models/variant_config.h"
#include "h5_fixture.h"

namespace dstudio::data {
namespace {

using testing::HasSubstr;

// Loads `path` expecting a DatasetError on `key` whose message contains `problem`.
void expect_error(const std::filesystem::path& path, const std::string& key,
                  const std::string& problem, const LoadOptions& options = {}) {
  try {
    load_dataset(path, options);
    FAIL() << "loading " << path << " should have failed with: " << problem;
  } catch (const DatasetError& e) {
    EXPECT_EQ(e.key(), key) << e.what();
    EXPECT_THAT(e.what(), HasSubstr(path.filename().string()));
    EXPECT_THAT(e.what(), HasSubstr(problem));
    if (!key.empty()) {
      EXPECT_THAT(e.what(), HasSubstr("'" + key + "'"));
    }
  }
}

class BadInput : public testing::Test {
 protected:
  test::TempDir dir;
  std::filesystem::path file = dir / "bad.hdf5";
};

TEST_F(BadInput, MissingFile) {
  expect_error(dir / "nope.hdf5", "", "no such file");
}

TEST_F(BadInput, EmptyFile) {
  std::ofstream(file).close();
  expect_error(file, "", "empty");
}

TEST_F(BadInput, NotHdf5) {
  std::ofstream(file) << "observations,actions\n1,2\n";
  expect_error(file, "", "not an HDF5 file");
}

TEST_F(BadInput, Truncated) {
  test::D4rlSpec spec;
  spec.n = 5000;
  test::write_d4rl_fixture(dir / "good.hdf5", spec);
  const auto size = std::filesystem::file_size(dir / "good.hdf5");
  std::filesystem::copy_file(dir / "good.hdf5", file);
  std::filesystem::resize_file(file, size / 2);
  expect_error(file, "", "truncated");
}

TEST_F(BadInput, FolderThatIsNotAMinariDataset) {
  expect_error(dir.path(), "", "not a Minari dataset");
}

TEST_F(BadInput, NeitherLayout) {
  {
    test::H5Writer w(file);
    w.numbers("obs", {1, 2}, {2}, H5T_IEEE_F32LE);
  }
  expect_error(file, "", "top-level keys are: obs");
}

TEST_F(BadInput, MissingRequiredKey) {
  for (const std::string key : {"actions", "rewards", "terminals"}) {
    test::D4rlSpec spec;
    test::write_d4rl_fixture(file, spec);
    {
      hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
      H5Ldelete(f, key.c_str(), H5P_DEFAULT);
      H5Fclose(f);
    }
    expect_error(file, key, "missing");
  }
}

TEST_F(BadInput, LengthsDisagree) {
  {
    test::H5Writer w(file);
    w.numbers("observations", std::vector<double>(20, 0.0), {10, 2}, H5T_IEEE_F32LE);
    w.numbers("actions", std::vector<double>(9, 0.0), {9, 1}, H5T_IEEE_F32LE);
    w.numbers("rewards", std::vector<double>(10, 0.0), {10}, H5T_IEEE_F32LE);
    w.bools("terminals", std::vector<int>(10, 0), {10});
  }
  expect_error(file, "actions", "has 9 rows but 'observations' has 10");
}

TEST_F(BadInput, WrongRank) {
  {
    test::H5Writer w(file);
    w.numbers("observations", std::vector<double>(10, 0.0), {10}, H5T_IEEE_F32LE);
  }
  expect_error(file, "observations", "expected a 2-D array");
  {
    test::H5Writer w(file);
    w.numbers("observations", std::vector<double>(20, 0.0), {10, 2}, H5T_IEEE_F32LE);
    w.numbers("actions", std::vector<double>(10, 0.0), {10, 1}, H5T_IEEE_F32LE);
    w.numbers("rewards", std::vector<double>(20, 0.0), {10, 2}, H5T_IEEE_F32LE);
    w.bools("terminals", std::vector<int>(10, 0), {10});
  }
  expect_error(file, "rewards", "expected (N) or (N, 1)");
}

TEST_F(BadInput, UnsupportedDtype) {
  {
    test::H5Writer w(file);
    w.numbers("observations", std::vector<double>(20, 1.0), {10, 2}, H5T_STD_I32LE);
    w.numbers("actions", std::vector<double>(10, 0.0), {10, 1}, H5T_IEEE_F32LE);
    w.numbers("rewards", std::vector<double>(10, 0.0), {10}, H5T_IEEE_F32LE);
    w.bools("terminals", std::vector<int>(10, 0), {10});
  }
  expect_error(file, "observations", "unsupported dtype int32; expected float32 or float64");
}

TEST_F(BadInput, FlagsThatAreNotZeroOrOne) {
  {
    test::H5Writer w(file);
    w.numbers("observations", std::vector<double>(6, 1.0), {3, 2}, H5T_IEEE_F32LE);
    w.numbers("actions", std::vector<double>(3, 0.0), {3, 1}, H5T_IEEE_F32LE);
    w.numbers("rewards", std::vector<double>(3, 0.0), {3}, H5T_IEEE_F32LE);
    w.numbers("terminals", {0, 0.5, 1}, {3}, H5T_IEEE_F32LE);
  }
  expect_error(file, "terminals", "holds 0.5 at row 1");
}

TEST_F(BadInput, NaNAndInfAreCountedWithTheFirstIndex) {
  test::D4rlSpec spec;
  test::write_d4rl_fixture(file, spec);
  {
    // Overwrite two observation values and one reward with non-finite numbers.
    hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "observations", H5P_DEFAULT);
    std::vector<float> obs(30);
    H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, obs.data());
    obs[4 * 3 + 2] = std::numeric_limits<float>::quiet_NaN();
    obs[7 * 3 + 0] = std::numeric_limits<float>::infinity();
    H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, obs.data());
    H5Dclose(d);
    H5Fclose(f);
  }
  expect_error(file, "observations", "2 values are NaN or Inf; the first at row 4, column 2");
}

TEST_F(BadInput, ZeroTransitions) {
  {
    test::H5Writer w(file);
    w.numbers("observations", {}, {0, 11}, H5T_IEEE_F32LE);
    w.numbers("actions", {}, {0, 3}, H5T_IEEE_F32LE);
    w.numbers("rewards", {}, {0}, H5T_IEEE_F32LE);
    w.bools("terminals", {}, {0});
  }
  expect_error(file, "observations", "zero transitions");
}

TEST_F(BadInput, AbsurdDeclaredSizeIsRefusedBeforeAllocating) {
  {
    // A trillion rows declared, nothing stored: the file itself is tiny.
    test::H5Writer w(file);
    w.declare_only("observations", {1'000'000'000'000ULL, 11});
    w.declare_only("actions", {1'000'000'000'000ULL, 3});
    w.declare_only("rewards", {1'000'000'000'000ULL});
    w.declare_only("terminals", {1'000'000'000'000ULL});
  }
  EXPECT_LT(std::filesystem::file_size(file), 100'000u);
  expect_error(file, "observations", "refusing to allocate");
}

TEST_F(BadInput, MemoryLimitIsConfigurable) {
  test::D4rlSpec spec;
  spec.n = 1000;
  test::write_d4rl_fixture(file, spec);
  LoadOptions options;
  options.max_bytes = 1000;  // less than 1000 x 3 floats
  expect_error(file, "observations", "refusing to allocate", options);
}

TEST_F(BadInput, MinariObservationsWithoutTheResetRow) {
  {
    test::H5Writer w(file);
    w.numbers("episode_0/observations", std::vector<double>(4, 0.0), {2, 2}, H5T_IEEE_F32LE);
    w.numbers("episode_0/actions", {0, 0}, {2, 1}, H5T_IEEE_F32LE);
    w.numbers("episode_0/rewards", {0, 0}, {2}, H5T_IEEE_F32LE);
    w.bools("episode_0/terminations", {0, 1}, {2});
    w.bools("episode_0/truncations", {0, 0}, {2});
  }
  expect_error(file, "episode_0/observations", "needs steps + 1 = 3");
}

TEST_F(BadInput, MinariEpisodesThatDisagreeOnDims) {
  {
    test::H5Writer w(file);  // two episodes with different observation dims
    w.numbers("episode_0/observations", std::vector<double>(6, 0.0), {3, 2}, H5T_IEEE_F32LE);
    w.numbers("episode_0/actions", {0, 0}, {2, 1}, H5T_IEEE_F32LE);
    w.numbers("episode_0/rewards", {0, 0}, {2}, H5T_IEEE_F32LE);
    w.bools("episode_0/terminations", {0, 1}, {2});
    w.bools("episode_0/truncations", {0, 0}, {2});
    w.numbers("episode_1/observations", std::vector<double>(9, 0.0), {3, 3}, H5T_IEEE_F32LE);
    w.numbers("episode_1/actions", {0, 0}, {2, 1}, H5T_IEEE_F32LE);
    w.numbers("episode_1/rewards", {0, 0}, {2}, H5T_IEEE_F32LE);
    w.bools("episode_1/terminations", {0, 1}, {2});
    w.bools("episode_1/truncations", {0, 0}, {2});
  }
  expect_error(file, "episode_1", "earlier episodes have 2/1");
}

}  // namespace
}  // namespace dstudio::data

namespace dstudio::models {
namespace {

// A dataset read through a checkpoint's model: sizes that differ are refused naming both files and
// both sizes; another environment of the same sizes (walker2d and halfcheetah) is said, naming
// both; names of one task ("hopper-medium-v2", "hopper") agree.
TEST(DatasetFit, SizesMustAgreeAndAnotherEnvironmentIsNamed) {
  CheckpointInfo info;
  info.path = "walker.pt";
  info.variant.variant = "dt";
  info.variant.state_dim = 17;
  info.variant.act_dim = 6;
  info.env_id = "walker2d";
  EXPECT_EQ(check_dataset_fits(info, "w.hdf5", 17, 6, "walker2d-medium-v2"), "");
  EXPECT_EQ(check_dataset_fits(info, "w.hdf5", 17, 6, ""), "");
  EXPECT_EQ(check_dataset_fits(info, "c.hdf5", 17, 6, "halfcheetah"),
            "c.hdf5 is halfcheetah data, but walker.pt was trained on walker2d: the model reads "
            "states of another body");
  try {
    check_dataset_fits(info, "h.hdf5", 11, 3, "hopper");
    ADD_FAILURE() << "a dataset of another size fitted";
  } catch (const CheckpointError& e) {
    EXPECT_EQ(std::string(e.what()),
              "h.hdf5 does not fit walker.pt: its states have 11 values and its actions 3; the "
              "model (dt, walker2d) takes 17 and 6");
  }
  EXPECT_THROW(check_dataset_fits(info, "a.hdf5", 17, 3, "walker2d"), CheckpointError);
}

// A description's numbers are checked before they are converted: a step beyond any integer, a step
// written with a fraction and a state mean beyond a float are refused by name, never converted.
TEST(CheckpointDescription, NumbersOutsideTheirTypeAreRefused) {
  VariantConfig variant;
  variant.state_dim = 2;
  variant.act_dim = 1;
  auto description = nlohmann::json::object();
  description["format"] = "dstudio-checkpoint-1";
  description["variant"] = nlohmann::json::parse(to_json(variant));
  description["training"] = nlohmann::json::parse(to_json(TrainingConfig{}));
  description["dataset"] = {{"path", "d.hdf5"},
                            {"fingerprint", "f"},
                            {"env_id", "hopper"},
                            {"state_mean", {0.5, -1.0}},
                            {"state_std", {1.0, 2.0}}};
  description["rtg_scale"] = 1000.0;
  description["step"] = 40;
  description["metrics"] = nlohmann::json::object();
  description["software"] = "dstudio";
  const CheckpointInfo info = checkpoint_info_from_description("c.pt", description.dump());
  EXPECT_EQ(info.step, 40);
  EXPECT_EQ(info.state_mean, (std::vector<float>{0.5F, -1.0F}));
  const auto refused = [&](nlohmann::json changed, const std::string& message) {
    try {
      checkpoint_info_from_description("c.pt", changed.dump());
      ADD_FAILURE() << "accepted " << changed.dump();
    } catch (const CheckpointError& e) {
      EXPECT_EQ(std::string(e.what()), "c.pt: its description: " + message);
    }
  };
  auto big_step = description;
  big_step["step"] = 1.08889e+82;
  refused(big_step, "step is too large");
  auto fraction = description;
  fraction["step"] = 2.5;
  refused(fraction, "step is not a whole number");
  auto huge_step = description;
  huge_step["step"] = std::uint64_t{1} << 63U;
  refused(huge_step, "step is too large");
  auto big_mean = description;
  big_mean["dataset"]["state_mean"] = {1e300, 0.0};
  refused(big_mean, "dataset: state_mean[0] must be at most 3.4028234663852886e+38 (is 1e+300)");
  auto text_std = description;
  text_std["dataset"]["state_std"] = {1.0, "2"};
  refused(text_std, "dataset: state_std[1] is not a number");
}

}  // namespace
}  // namespace dstudio::models
