// Dataset names in the D4RL style, and the papers' dataset-dependent settings they select.

#include <gtest/gtest.h>

#include "dstudio/data/dataset.h"
#include "dstudio/models/variant_config.h"

namespace dstudio {
namespace {

TEST(DatasetName, FromGeneratedMetadataOrTheFileName) {
  data::Dataset d;
  d.path = "/x/whatever.hdf5";
  d.metadata = {{"env_id", "hopper"}, {"kind", "medium-replay"}};
  EXPECT_EQ(data::dataset_name(d), "hopper-medium-replay");
  d.metadata.clear();
  d.path = "/data/hopper_medium_replay-v2.hdf5";
  EXPECT_EQ(data::dataset_name(d), "hopper-medium-replay");
  d.path = "/data/Walker2d-Medium-v2.hdf5";
  EXPECT_EQ(data::dataset_name(d), "walker2d-medium");
  d.path = "/minari/mujoco/hopper/medium-v0/data/main_data.hdf5";
  EXPECT_EQ(data::dataset_name(d), "medium");  // Minari names the folder, not the task
}

TEST(DatasetDefaults, DecisionConvFormersTable4) {
  auto d = models::dataset_defaults("dc", "hopper-medium");
  EXPECT_EQ(d.hidden, 256);
  EXPECT_EQ(d.learning_rate, 1e-4);
  d = models::dataset_defaults("dc-hybrid", "hopper-medium-replay");
  EXPECT_EQ(d.hidden, 256);
  EXPECT_EQ(d.learning_rate, 1e-4);
  d = models::dataset_defaults("dc", "walker2d-medium");
  EXPECT_EQ(d.hidden, 128);
  EXPECT_EQ(d.learning_rate, 1e-4);
  d = models::dataset_defaults("dc-1filter", "halfcheetah-medium-expert");
  EXPECT_EQ(d.hidden, 128);
  EXPECT_EQ(d.learning_rate, 1e-3);
  d = models::dataset_defaults("dt", "hopper-medium");  // DT's settings do not depend on the dataset
  EXPECT_EQ(d.hidden, 0);
  EXPECT_EQ(d.learning_rate, 0.0);
  EXPECT_TRUE(d.source.empty());
}

}  // namespace
}  // namespace dstudio
