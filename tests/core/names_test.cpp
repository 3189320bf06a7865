// Dataset names in the D4RL style, and the papers' dataset-dependent settings they select.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "dstudio/behaviour/default_datasets.h"
#include "dstudio/data/dataset.h"
#include "dstudio/env/environment.h"
#include "dstudio/models/checkpoint_info.h"
#include "dstudio/models/targets.h"
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
  d = models::dataset_defaults("dt",
                               "hopper-medium");  // DT's settings do not depend on the dataset
  EXPECT_EQ(d.hidden, 0);
  EXPECT_EQ(d.learning_rate, 0.0);
  EXPECT_TRUE(d.source.empty());
}

// A checkpoint described for people: every fact the studio's workspace lists, from the info.
// Runs made in the window or by `dstudio train` all write checkpoint.pt: they are told apart by
// their run folders in captions, legends, CSV columns and exported file names.
TEST(CheckpointLabel, ARunsCheckpointIsNamedByItsRunFolder) {
  EXPECT_EQ(models::checkpoint_label("resources/checkpoints/hopper-medium-expert-dt.pt"),
            "hopper-medium-expert-dt");
  EXPECT_EQ(models::checkpoint_label("/runs/dt-seed0-20260101-120000/checkpoint.pt"),
            "dt-seed0-20260101-120000");
  EXPECT_EQ(models::checkpoint_label("/runs/dc-seed1-20260101-120000/checkpoint-5000.pt"),
            "dc-seed1-20260101-120000 step 5000");
  EXPECT_EQ(models::checkpoint_label("/runs/./dt-seed2/checkpoint.pt"), "dt-seed2");
  EXPECT_EQ(models::checkpoint_label("/runs/a/checkpointed-best.pt"), "checkpointed-best");
  EXPECT_NE(models::checkpoint_label("/runs/one/checkpoint.pt"),
            models::checkpoint_label("/runs/two/checkpoint.pt"));
}

// The papers' reference targets belong to their data: a model of weaker data starts from what its
// data reached, and the list says where each target comes from.
TEST(TargetChoices, TheDefaultFollowsWhatTheDataReached) {
  const auto& hopper = env::task("hopper");  // references 3600 and 1800
  // Data whose best episode returned 1305, under half of 3600: that episode is the default.
  std::vector<double> weak;
  for (int i = 0; i <= 100; ++i)
    weak.push_back(300.0 + 10.05 * i);  // 300 .. 1305, median 802.5, p90 1204.5
  auto c = models::target_choices(hopper, weak);
  ASSERT_EQ(c.size(), 5u);
  EXPECT_DOUBLE_EQ(c[0].value, 1305.0);
  EXPECT_EQ(c[0].label, "data's best episode 1305");
  EXPECT_DOUBLE_EQ(c[1].value, 3600.0);
  EXPECT_EQ(c[1].label, "hopper reference 3600");
  EXPECT_DOUBLE_EQ(c[2].value, 1800.0);
  EXPECT_NEAR(c[3].value, 1204.5, 1e-9);
  EXPECT_NEAR(c[4].value, 802.5, 1e-9);
  // Data that reach 3241: the paper's 3600 stays the default; the data's returns follow.
  c = models::target_choices(hopper, {1000.0, 3241.0, 2000.0});
  ASSERT_GE(c.size(), 3u);
  EXPECT_DOUBLE_EQ(c[0].value, 3600.0);
  EXPECT_DOUBLE_EQ(c[1].value, 1800.0);
  EXPECT_DOUBLE_EQ(c[2].value, 3241.0);
  // No data: the references alone; a data return equal to a reference is not offered twice.
  c = models::target_choices(hopper, {});
  ASSERT_EQ(c.size(), 2u);
  c = models::target_choices(hopper, {1800.0});
  EXPECT_EQ(c.size(), 2u);  // 3600, 1800 (best = 90th = median = 1800)
}

// A model trained with IQL's -1 shift counts returns in its own units: the references follow.
TEST(TargetChoices, AShiftedModelsReferencesAreInItsUnits) {
  const auto& umaze = env::task("antmaze-umaze-v2");  // reference 1: the goal
  EXPECT_THAT(models::reference_targets(umaze, 0.0), testing::ElementsAre(1.0));
  // The goal reached at the first step: 1 - 1.
  EXPECT_THAT(models::reference_targets(umaze, -1.0), testing::ElementsAre(0.0));
  // A full-length hopper episode of return 3600 counts 3600 - 1000 with the shift.
  EXPECT_THAT(models::reference_targets(env::task("hopper"), -1.0),
              testing::ElementsAre(2600.0, 800.0));
  auto c = models::target_choices(umaze, {-400.0, -150.0}, -1.0);
  ASSERT_FALSE(c.empty());
  EXPECT_EQ(c[0].label, "data's best episode -150");  // the shifted reference 0 is not reached
  EXPECT_TRUE(std::any_of(c.begin(), c.end(), [](const auto& t) { return t.value == 0.0; }));
  EXPECT_DOUBLE_EQ(models::model_return(3.0, 10, -1.0), -7.0);
  EXPECT_EQ(models::reward_shift_note(0.0), "");
  EXPECT_EQ(models::reward_shift_note(-1.0),
            "rewards shifted by -1 (returns-to-go and targets count r - 1 a step; scores are the "
            "task's)");
  models::CheckpointInfo info;
  info.env_id = "antmaze-umaze-v2";
  info.training.reward_shift = -1.0;
  EXPECT_DOUBLE_EQ(models::default_target(info), 0.0);
  bool shown = false;
  for (const auto& row : models::summarize(info)) shown |= row.field == "Reward shift";
  EXPECT_TRUE(shown);
  info.training.reward_shift = 0.0;
  for (const auto& row : models::summarize(info)) EXPECT_NE(row.field, "Reward shift");
}

TEST(CheckpointSummary, ListsModelDataTrainingAndSoftware) {
  models::CheckpointInfo info;
  info.variant = models::make_variant("dhi");
  info.variant.state_dim = 11;
  info.variant.act_dim = 3;
  info.dataset_path = "/data/hopper-medium.hdf5";
  info.dataset_fingerprint = "xxh3-128:abc";
  info.env_id = "hopper";
  info.step = 500;
  info.training.steps = 1000;
  info.metrics = R"({"loss": 0.0125, "note": "text is left out"})";
  info.software = "Decision Studio 0.1.0";
  std::map<std::string, std::string> rows;
  std::vector<std::string> sections;
  for (const auto& r : models::summarize(info)) {
    rows[r.field] = r.value;
    if (sections.empty() || sections.back() != r.section) sections.push_back(r.section);
  }
  EXPECT_EQ(sections, (std::vector<std::string>{"Model", "Data", "Training", "Software"}));
  EXPECT_EQ(rows["Variant"], "dhi");
  EXPECT_EQ(rows["Context K"], std::to_string(info.variant.context_length) + " steps (" +
                                   std::to_string(info.variant.context_length) +
                                   " tokens)");  // one merged token a step
  EXPECT_EQ(rows["State / action"], "11 / 3");
  EXPECT_EQ(rows["Step"], "500 of 1000");
  EXPECT_EQ(rows["loss"], "0.0125");
  EXPECT_EQ(rows.count("note"), 0u);
  EXPECT_EQ(rows["Environment"], "hopper");
  EXPECT_NE(rows["Tokens"].find("merger"), std::string::npos);
  EXPECT_EQ(rows.count("Made by"), 0u) << "not one of the studio's datasets";

  // A shipped hopper-medium-* checkpoint names the ARS-made dataset it was trained on, however its
  // cache folder was called: which it is, and how to make it.
  info.dataset_path = "/home/someone/.cache/decision-studio/datasets/" +
                      behaviour::default_dataset_path("hopper", behaviour::DatasetKind::Medium,
                                                      behaviour::PolicyAlgorithm::Ars)
                          .filename()
                          .string();
  rows.clear();
  for (const auto& r : models::summarize(info)) rows[r.field] = r.value;
  EXPECT_EQ(rows["Made by"],
            "hopper medium (ARS behaviour policies, 100,000 transitions): dstudio dataset default "
            "--kind medium --algorithm ars");
}

}  // namespace
}  // namespace dstudio
