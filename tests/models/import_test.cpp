// The corl-dt import against PyTorch: tests/reference/corl_dt_reference.py re-implements CORL's
// Decision Transformer with its parameter names and committed its weights, inputs and outputs
// (tests/data/corl_dt). Our DT with the imported weights must reproduce them to 1e-5.

#include "dstudio/models/import.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "dstudio/data/arrays_h5.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/data/synthetic.h"
#include "dstudio/models/checkpoint_model.h"
#include "dstudio/models/predict.h"
#include "dstudio/models/pytorch_file.h"
#include "dstudio/models/training.h"
#include "h5_fixture.h"

namespace dstudio::models {
namespace {

using testing::HasSubstr;
namespace fs = std::filesystem;

const fs::path kData = fs::path(DSTUDIO_TEST_DATA) / "corl_dt";

double max_difference(const fs::path& output, const fs::path& expected) {
  const auto out = data::read_nd_arrays(output, {"actions"}).at("actions");
  const auto want = data::read_nd_arrays(expected, {"actions"}).at("actions");
  EXPECT_EQ(out.shape, want.shape);
  double worst = 0.0;
  for (std::size_t i = 0; i < std::min(out.values.size(), want.values.size()); ++i)
    worst = std::max(worst, std::abs(out.values[i] - want.values[i]));
  return worst;
}

std::string import_error(const fs::path& file, const fs::path& out,
                         const CorlImportOptions& options) {
  try {
    import_corl_dt(file, out, options);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CorlImport, AStateDictMatchesPyTorchTo1e5) {
  test::TempDir dir;
  CorlImportOptions options;
  options.heads = 2;
  const auto info = import_corl_dt(kData / "a_state_dict.pt", dir / "a.pt", options);
  // What the file says about itself: widths, layers, K from the causal mask, timestep rows.
  EXPECT_EQ(info.variant.hidden, 16);
  EXPECT_EQ(info.variant.layers, 2);
  EXPECT_EQ(info.variant.context_length, 5);
  EXPECT_EQ(info.variant.max_ep_len, 45);
  EXPECT_EQ(info.variant.activation, "gelu");
  EXPECT_EQ(read_checkpoint_info(dir / "a.pt").variant, info.variant);

  PredictOptions raw;
  raw.normalize = false;
  predict_file(dir / "a.pt", kData / "a_inputs.h5", dir / "a_out.h5", raw);
  EXPECT_LT(max_difference(dir / "a_out.h5", kData / "a_expected.h5"), 1e-5);
  // Shorter windows than K, no mask, returns-to-go shaped (B, K, 1).
  predict_file(dir / "a.pt", kData / "a_inputs_nomask.h5", dir / "a_nomask.h5", raw);
  EXPECT_LT(max_difference(dir / "a_nomask.h5", kData / "a_expected_nomask.h5"), 1e-5);

  // The head count is not in the file, and it matters: one head gives other actions.
  options.heads = 1;
  import_corl_dt(kData / "a_state_dict.pt", dir / "a1.pt", options);
  predict_file(dir / "a1.pt", kData / "a_inputs.h5", dir / "a1_out.h5", raw);
  EXPECT_GT(max_difference(dir / "a1_out.h5", kData / "a_expected.h5"), 1e-3);
}

TEST(CorlImport, ACorlCheckpointDictCarriesItsStatisticsIntoNormalisation) {
  test::TempDir dir;
  CorlImportOptions options;
  options.env_id = "hopper";
  const auto info = import_corl_dt(kData / "b_checkpoint.pt", dir / "b.pt", options);
  const auto file = read_pytorch_file(kData / "b_checkpoint.pt");
  EXPECT_EQ(info.state_mean, file.tensors.at("state_mean").values);
  EXPECT_EQ(info.state_std, file.tensors.at("state_std").values);
  EXPECT_EQ(info.env_id, "hopper");
  EXPECT_EQ(info.rtg_scale, 1000.0);
  EXPECT_EQ(info.variant.layers, 3);

  // Raw inputs normalised with the checkpoint's statistics, and the network's inputs as given.
  predict_file(dir / "b.pt", kData / "b_inputs_raw.h5", dir / "b_raw.h5");
  EXPECT_LT(max_difference(dir / "b_raw.h5", kData / "b_expected.h5"), 1e-5);
  PredictOptions raw;
  raw.normalize = false;
  predict_file(dir / "b.pt", kData / "b_inputs.h5", dir / "b_out.h5", raw);
  EXPECT_LT(max_difference(dir / "b_out.h5", kData / "b_expected.h5"), 1e-5);
  // Normalising inputs that already are normalised gives something else.
  predict_file(dir / "b.pt", kData / "b_inputs.h5", dir / "b_twice.h5");
  EXPECT_GT(max_difference(dir / "b_twice.h5", kData / "b_expected.h5"), 1e-3);
}

TEST(CorlImport, SaysWhatDoesNotFitAndWritesNothing) {
  test::TempDir dir;
  CorlImportOptions options;
  options.heads = 3;
  EXPECT_THAT(import_error(kData / "a_state_dict.pt", dir / "x.pt", options),
              HasSubstr("does not divide the embedding width 16"));
  options.heads = 1;
  options.seq_len = 4;
  EXPECT_THAT(import_error(kData / "a_state_dict.pt", dir / "x.pt", options),
              HasSubstr("seq_len 5 (its causal mask), not 4"));
  options.seq_len = 0;
  EXPECT_THAT(import_error(fs::path(DSTUDIO_TEST_DATA) / "pytorch_file/known_values.pt",
                           dir / "x.pt", options),
              HasSubstr("not a CORL Decision Transformer"));
  EXPECT_FALSE(fs::exists(dir / "x.pt"));
}

TEST(CorlImport, AnImportedCheckpointIsNotResumable) {
  test::TempDir dir;
  import_corl_dt(kData / "b_checkpoint.pt", dir / "b.pt", {});
  data::SyntheticSpec spec;
  spec.transitions = 500;
  data::Dataset ds;
  ds.data = data::make_synthetic(spec);
  ds.episodes = data::segment_episodes(ds.data.rewards, ds.data.terminals, ds.data.timeouts);
  data::state_statistics(ds.data, ds.episodes, ds.state_mean, ds.state_std);
  try {
    Trainer::resume(ds, dir / "b.pt");
    FAIL() << "resumed an imported checkpoint";
  } catch (const CheckpointError& e) {
    EXPECT_THAT(e.what(), HasSubstr("holds weights only (imported from"));
  }
}

TEST(Predict, RejectsInputsThatDoNotFitAndWritesNothing) {
  test::TempDir dir;
  CorlImportOptions options;
  options.heads = 2;
  import_corl_dt(kData / "a_state_dict.pt", dir / "a.pt", options);
  const auto inputs = data::read_nd_arrays(
      kData / "a_inputs.h5", {"states", "actions", "returns_to_go", "timesteps", "mask"});
  auto error_with = [&](const std::string& key, const std::function<void(data::NdArray&)>& change) {
    auto arrays = inputs;
    change(arrays.at(key));
    data::write_nd_arrays(dir / "in.h5", arrays);
    try {
      predict_file(dir / "a.pt", dir / "in.h5", dir / "out.h5");
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_THAT(error_with("states",
                         [](auto& a) {
                           a.shape = {4, 5, 11, 1};
                         }),
              HasSubstr("'states': has shape (4, 5, 11, 1)"));
  EXPECT_THAT(error_with("actions",
                         [](auto& a) {
                           a.shape = {4, 15};
                         }),
              HasSubstr("'actions': has shape (4, 15); expected (4, 5, 3)"));
  EXPECT_THAT(error_with("timesteps", [](auto& a) { a.values[7] = 45; }),
              HasSubstr("'timesteps': holds 45 at window 1, step 2"));
  EXPECT_THAT(error_with("mask", [](auto& a) { a.values[0] = 0.5; }),
              HasSubstr("a mask is 1 for real steps"));
  auto missing = inputs;
  missing.erase("timesteps");
  data::write_nd_arrays(dir / "in.h5", missing);
  EXPECT_THROW(predict_file(dir / "a.pt", dir / "in.h5", dir / "out.h5"), data::DatasetError);
  EXPECT_FALSE(fs::exists(dir / "out.h5"));
}

}  // namespace
}  // namespace dstudio::models
