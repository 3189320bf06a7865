// Training runs: the loss falls, the same seed gives the same weights, a resumed run continues
// exactly, a NaN stops the run and keeps the last checkpoint, and bad checkpoints are explained.

#include "dstudio/models/training.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "dstudio/common/error.h"
#include "dstudio/data/synthetic.h"
#include "dstudio/models/checkpoint_model.h"
#include "dstudio/models/config_fields.h"
#include "dstudio/models/run_description.h"
#include "dstudio/models/run_folder.h"
#include "dstudio/models/train_step.h"
#include "h5_fixture.h"

namespace dstudio::models {
namespace {

using testing::HasSubstr;

data::Dataset tiny_dataset() {
  data::SyntheticSpec spec;
  spec.transitions = 3000;
  spec.seed = 2;
  data::Dataset ds;
  ds.path = "tiny.hdf5";
  ds.env_id = "hopper";
  ds.data = data::make_synthetic(spec);
  ds.episodes = data::segment_episodes(ds.data.rewards, ds.data.terminals, ds.data.timeouts);
  data::state_statistics(ds.data, ds.episodes, ds.state_mean, ds.state_std);
  ds.fingerprint = data::content_fingerprint(ds.data);
  return ds;
}

VariantConfig small(const std::string& name) {
  auto c = make_variant(name);
  c.hidden = 32;
  c.layers = 2;
  c.context_length = 5;
  return c;
}

TrainingConfig quick(std::int64_t steps) {
  TrainingConfig t;
  t.steps = steps;
  t.batch_size = 16;
  t.learning_rate = 1e-3;
  t.warmup_steps = 10;
  t.log_every = 10;
  t.checkpoint_every = 0;
  return t;
}

std::vector<torch::Tensor> weights_of(const std::filesystem::path& checkpoint) {
  auto model = load_checkpoint_model(checkpoint);
  std::vector<torch::Tensor> out;
  for (const auto& p : model->parameters()) out.push_back(p.detach().clone());
  return out;
}

bool same_weights(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!torch::equal(a[i], b[i])) return false;
  return true;
}

// The fields' ranges (config_fields.h) are where training_from_json starts refusing, at both ends;
// counts take whole numbers only, and nothing wraps.
TEST(Training, TheFieldsRangesAreWhereTheConfigurationIsRefused) {
  const auto defaults =
      nlohmann::json::parse(dstudio::models::to_json(dstudio::models::TrainingConfig{}));
  for (const auto& f : dstudio::models::training_fields()) {
    if (!std::isfinite(f.minimum)) continue;
    const bool integer =
        defaults[f.key].is_number_integer() || defaults[f.key].is_number_unsigned();
    const auto value = [&](double v) {
      char text[64];
      std::snprintf(text, sizeof text, integer ? "%.0f" : "%.17g", v);
      return std::string(text);
    };
    const auto parse = [&](const std::string& v) {
      return dstudio::models::training_from_json("{\"" + f.key + "\": " + v + "}");
    };
    const double step = integer ? 1.0 : 1e-6;
    EXPECT_NO_THROW(parse(value(f.above ? f.minimum + step : f.minimum))) << f.key;
    EXPECT_THROW(parse(value(f.above ? f.minimum : f.minimum - step)), dstudio::UsageError)
        << f.key;
    ASSERT_TRUE(std::isfinite(f.maximum)) << f.key << " has no upper bound";
    if (f.key != "seed") {  // 2^63 - 1 is not a double
      EXPECT_NO_THROW(parse(value(f.below ? f.maximum - step : f.maximum))) << f.key;
      EXPECT_THROW(parse(value(f.below ? f.maximum : f.maximum + std::max(step, f.maximum * 1e-9))),
                   dstudio::UsageError)
          << f.key;
    }
    if (integer) {
      EXPECT_THROW(parse(value(f.minimum) + ".5"), dstudio::UsageError) << f.key;
    }
    EXPECT_THROW(parse("\"7\""), dstudio::UsageError) << f.key;
  }
  EXPECT_THROW(dstudio::models::training_from_json("{\"seed\": -1}"), dstudio::UsageError);
  EXPECT_THROW(dstudio::models::training_from_json("{\"seed\": 18446744073709551615}"),
               dstudio::UsageError);
  EXPECT_EQ(dstudio::models::training_from_json("{\"seed\": 9223372036854775807}").seed,
            9223372036854775807ULL);
  EXPECT_EQ(dstudio::models::training_from_json("{\"steps\": 1e5}").steps, 100000);
  EXPECT_THROW(dstudio::models::training_from_json("{\"cosine_decay\": 1}"), dstudio::UsageError);
}

// Returns-to-go are scaled as the papers scale them for the dataset's task, unless asked.
TEST(Training, TheReturnToGoScaleIsTheTasksUnlessGiven) {
  TrainingConfig c;
  EXPECT_TRUE(apply_task_rtg_scale(c, "antmaze-umaze-v2", R"({"steps": 10})"));
  EXPECT_EQ(c.rtg_scale, 1.0);
  TrainingConfig given;
  EXPECT_FALSE(apply_task_rtg_scale(given, "antmaze-umaze-v2", R"({"rtg_scale": 5})"));
  EXPECT_EQ(given.rtg_scale, 1000.0);
  TrainingConfig locomotion;
  EXPECT_FALSE(apply_task_rtg_scale(locomotion, "hopper-medium-v2", ""));
  EXPECT_EQ(locomotion.rtg_scale, 1000.0);
  TrainingConfig unknown;
  EXPECT_FALSE(apply_task_rtg_scale(unknown, "pointmass", ""));
  EXPECT_FALSE(apply_task_rtg_scale(unknown, "", ""));
  EXPECT_EQ(unknown.rtg_scale, 1000.0);
}

TEST(Training, ShortRunsLowerTheLossForDtDcAndDhi) {
  const auto ds = tiny_dataset();
  for (const std::string name : {"dt", "dc", "dhi"}) {
    test::TempDir dir;
    Trainer trainer(ds, small(name), quick(150), dir.path());
    std::vector<double> losses;
    trainer.on_progress([&](const TrainingProgress& p) { losses.push_back(p.loss); });
    trainer.run();
    ASSERT_EQ(trainer.state(), TrainingState::Finished) << trainer.error();
    ASSERT_GE(losses.size(), 10u);
    EXPECT_LT(losses.back(), 0.7 * losses.front()) << name;
    EXPECT_TRUE(std::filesystem::exists(dir / "checkpoint.pt"));
    EXPECT_TRUE(std::filesystem::exists(dir / "metrics.csv"));
    EXPECT_TRUE(std::filesystem::exists(dir / "metrics.jsonl"));
  }
}

TEST(Training, SameSeedSameWeightsAndResumeContinuesExactly) {
  const auto ds = tiny_dataset();
  // One worker, and two on their own threads: neither depends on scheduling.
  for (const int threads : {1, 2}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    auto config = quick(40);
    config.threads = threads;
    test::TempDir a, b, c;
    Trainer straight(ds, small("dt"), config, a.path());
    straight.run();
    Trainer again(ds, small("dt"), config, b.path());
    again.run();
    EXPECT_TRUE(same_weights(weights_of(a / "checkpoint.pt"), weights_of(b / "checkpoint.pt")));

    // Stop after 20 steps (cancel from the progress callback), save, resume, finish.
    Trainer first_half(ds, small("dt"), config, c.path());
    first_half.on_progress([&](const TrainingProgress& p) {
      if (p.step == 20) first_half.cancel();
    });
    first_half.run();
    ASSERT_EQ(first_half.state(), TrainingState::Cancelled);
    ASSERT_EQ(first_half.step(), 20);
    const auto saved = first_half.save_checkpoint();
    auto second_half = Trainer::resume(ds, saved, c.path());
    EXPECT_EQ(second_half->step(), 20);
    second_half->run();
    ASSERT_EQ(second_half->state(), TrainingState::Finished) << second_half->error();
    EXPECT_TRUE(same_weights(weights_of(a / "checkpoint.pt"), weights_of(c / "checkpoint.pt")));
  }
}

// A run planned for 40 steps, stopped at 10 and resumed with a new end of 20, is the run planned
// for 20 (the schedule is warm-up then constant, so the plan's length changes nothing before its
// end); an end before the saved step is refused.
TEST(Training, ResumeMovesTheRunsEnd) {
  const auto ds = tiny_dataset();
  test::TempDir a, b;
  Trainer planned(ds, small("dt"), quick(20), a.path());
  planned.run();
  Trainer longer(ds, small("dt"), quick(40), b.path());
  longer.on_progress([&](const TrainingProgress& p) {
    if (p.step == 10) longer.cancel();
  });
  longer.run();
  ASSERT_EQ(longer.step(), 10);
  const auto saved = longer.save_checkpoint();
  EXPECT_THROW(Trainer::resume(ds, saved, b.path(), 5), UsageError);
  auto rest = Trainer::resume(ds, saved, b.path(), 20);
  EXPECT_EQ(rest->training().steps, 20);
  rest->run();
  ASSERT_EQ(rest->state(), TrainingState::Finished) << rest->error();
  EXPECT_EQ(rest->step(), 20);
  EXPECT_TRUE(same_weights(weights_of(a / "checkpoint.pt"), weights_of(b / "checkpoint.pt")));
}

// Every variant, with the grid of DHi's mergers and mixers: a run stopped, saved and resumed ends
// with exactly the weights of a run that never stopped.
TEST(Training, EveryVariantResumesExactly) {
  const auto ds = tiny_dataset();
  std::vector<VariantConfig> variants;
  for (const auto& name : variant_names())
    if (name != "hier") variants.push_back(make_variant(name));
  for (const std::string merger : {"none", "concat", "attention", "conv", "pooling"})
    for (const std::string mixer : {"none", "attention", "linear-attention", "conv", "pooling"})
      variants.push_back(make_variant("hier", merger, mixer));
  for (auto v : variants) {
    v.hidden = 16;
    v.layers = 2;
    v.context_length = 4;
    SCOPED_TRACE(v.variant + " " + to_string(v.tokenizer) + "/" + to_string(v.merger) + "/" +
                 v.mixer);
    auto config = quick(6);
    config.batch_size = 4;
    config.log_every = 1;
    test::TempDir a, b;
    Trainer straight(ds, v, config, a.path());
    straight.run();
    ASSERT_EQ(straight.state(), TrainingState::Finished) << straight.error();
    Trainer first(ds, v, config, b.path());
    first.on_progress([&](const TrainingProgress& p) {
      if (p.step == 3) first.cancel();
    });
    first.run();
    ASSERT_EQ(first.step(), 3);
    auto rest = Trainer::resume(ds, first.save_checkpoint(), b.path());
    rest->run();
    ASSERT_EQ(rest->state(), TrainingState::Finished) << rest->error();
    EXPECT_TRUE(same_weights(weights_of(a / "checkpoint.pt"), weights_of(b / "checkpoint.pt")));
  }
}

// Split over workers, the step is the full batch's step: each part's loss is divided by the whole
// batch's count of real steps, so the summed gradients are the full gradient (dropout off, so the
// masks cannot differ). Padded windows make the parts' counts unequal.
TEST(TrainStep, WorkersComputeTheFullBatchGradient) {
  auto c = small("dt");
  c.dropout = 0.0;
  c.attention_dropout = 0.0;
  c.state_dim = 4;
  c.act_dim = 2;
  c.max_ep_len = 50;
  torch::manual_seed(3);
  ModelInputs in;
  const int B = 6, K = c.context_length;
  in.states = torch::randn({B, K, 4});
  in.actions = torch::rand({B, K, 2}) * 2 - 1;
  in.returns_to_go = torch::rand({B, K, 1});
  in.timesteps = torch::randint(0, 40, {B, K});
  in.mask = torch::ones({B, K});
  in.mask.index_put_({0, torch::indexing::Slice(0, 3)},
                     0.0);  // left padding, in the first part only
  in.mask.index_put_({1, torch::indexing::Slice(0, 1)}, 0.0);

  std::vector<std::vector<torch::Tensor>> after;
  double losses[2];
  for (const int workers : {1, 2}) {
    torch::manual_seed(0);
    DecisionModel model(c);
    torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.1));
    TrainStep step(model, sgd, 1e9, workers, 0);  // no clipping: the update is the gradient
    losses[workers - 1] = step.run(in);
    std::vector<torch::Tensor> w;
    for (const auto& p : model->parameters()) w.push_back(p.detach().clone());
    after.push_back(w);
  }
  // The reference: the masked mean over real steps, computed directly.
  torch::manual_seed(0);
  DecisionModel reference(c);
  auto predicted = reference->forward(in);
  const double expected =
      (((predicted - in.actions).pow(2) * in.mask.unsqueeze(-1)).sum() / (in.mask.sum() * 2))
          .item<double>();
  EXPECT_NEAR(losses[0], expected, 1e-6);
  EXPECT_NEAR(losses[1], expected, 1e-6);
  for (std::size_t i = 0; i < after[0].size(); ++i)
    EXPECT_TRUE(torch::allclose(after[0][i], after[1][i], 1e-5, 1e-6)) << i;
}

TEST(Training, BackgroundRunPausesResumesAndCancels) {
  const auto ds = tiny_dataset();
  test::TempDir dir;
  Trainer trainer(ds, small("dc"), quick(100000), dir.path());
  trainer.start();
  while (trainer.step() < 5) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  trainer.pause();
  // Paused is what the worker says once it has parked: from then on it takes no step.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (trainer.state() != TrainingState::Paused && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(trainer.state(), TrainingState::Paused);
  const auto paused_at = trainer.step();
  EXPECT_EQ(trainer.state(), TrainingState::Paused);
  EXPECT_EQ(trainer.step(), paused_at);  // nothing moves while paused
  trainer.resume();
  while (trainer.step() < paused_at + 5) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  trainer.cancel();
  trainer.wait();
  EXPECT_EQ(trainer.state(), TrainingState::Cancelled);
}

TEST(Training, ANanLossStopsTheRunAndKeepsTheLastCheckpoint) {
  const auto ds = tiny_dataset();
  test::TempDir dir;
  auto t = quick(200);
  t.checkpoint_every = 5;
  t.learning_rate = 1e30;  // diverges within a few steps
  t.warmup_steps = 1;
  t.grad_clip = 1e30;
  Trainer trainer(ds, small("mlp-bc"), t, dir.path());
  trainer.run();
  ASSERT_EQ(trainer.state(), TrainingState::Failed);
  EXPECT_THAT(trainer.error(),
              testing::ContainsRegex("the loss became (NaN|infinite) at step [0-9]+"));
  if (!trainer.last_checkpoint().empty()) {
    EXPECT_THAT(trainer.error(), HasSubstr("the last good checkpoint is"));
    EXPECT_NO_THROW(read_checkpoint_info(trainer.last_checkpoint()));
  }
}

TEST(Checkpoint, SaysWhatProducedItAndRejectsBadFiles) {
  const auto ds = tiny_dataset();
  test::TempDir dir;
  Trainer trainer(ds, small("gdt"), quick(10), dir.path());
  trainer.run();
  const auto info = read_checkpoint_info(dir / "checkpoint.pt");
  EXPECT_EQ(info.variant.variant, "gdt");
  EXPECT_EQ(info.variant.state_dim, 11);
  EXPECT_EQ(info.training.steps, 10);
  EXPECT_EQ(info.dataset_fingerprint, ds.fingerprint);
  EXPECT_EQ(info.env_id, "hopper");
  EXPECT_EQ(info.state_mean, ds.state_mean);
  EXPECT_EQ(info.step, 10);
  EXPECT_THAT(info.software, HasSubstr("LibTorch"));
  EXPECT_NO_THROW(check_compatible(info, ds));

  data::Dataset walker = ds;
  walker.path = "walker.hdf5";
  walker.data.obs_dim = 17;
  walker.env_id = "walker2d";
  try {
    check_compatible(info, walker);
    FAIL();
  } catch (const CheckpointError& e) {
    EXPECT_THAT(
        e.what(),
        HasSubstr(
            "state dim 11 vs the dataset's 17; environment hopper vs the dataset's walker2d"));
  }

  // Truncated, foreign and missing files give clear errors, never a crash.
  const auto size = std::filesystem::file_size(dir / "checkpoint.pt");
  std::filesystem::copy_file(dir / "checkpoint.pt", dir / "cut.pt");
  std::filesystem::resize_file(dir / "cut.pt", size / 2);
  EXPECT_THROW(load_checkpoint_model(dir / "cut.pt"), CheckpointError);
  std::ofstream(dir / "text.pt") << "not a checkpoint";
  try {
    read_checkpoint_info(dir / "text.pt");
    FAIL();
  } catch (const CheckpointError& e) {
    EXPECT_THAT(e.what(), HasSubstr("text.pt: not a checkpoint (not a zip archive)"));
  }
  EXPECT_THROW(read_checkpoint_info(dir / "missing.pt"), CheckpointError);

  // Resuming needs the same data.
  data::Dataset other = ds;
  other.fingerprint = "xxh3-128:0";
  EXPECT_THROW(Trainer::resume(other, dir / "checkpoint.pt"), CheckpointError);
}

TEST(RunFolders, TheStudiosRunJsonReadsBackAndWritesTheSameBytes) {
  // run.json as the Training tab wrote it before its table: the same text comes back.
  auto variant = make_variant("dc");
  variant.conv_window = 4;
  TrainingConfig training;
  training.seed = 7;
  const nlohmann::ordered_json written = {
      {"label", "dc"},
      {"variant", nlohmann::ordered_json::parse(to_json(variant))},
      {"training", nlohmann::ordered_json::parse(to_json(training))},
      {"dataset", {{"path", "/data/hopper.hdf5"}, {"fingerprint", "abc"}}},
      {"evaluation_episodes", 5}};
  const std::string text = written.dump(2) + "\n";
  const auto run = read_run_description(text, "run.json");
  EXPECT_EQ(run.label, "dc");
  ASSERT_TRUE(run.variant && run.training);
  EXPECT_EQ(run.variant->conv_window, 4);
  EXPECT_EQ(run.training->seed, 7u);
  EXPECT_EQ(run.dataset_path, "/data/hopper.hdf5");
  EXPECT_EQ(run.evaluation_episodes, 5);
  EXPECT_EQ(run_description_text(run), text);
  // Without a label it is not a run's description; a configuration that does not read is left out.
  EXPECT_THROW((void)read_run_description(R"({"training": {}})", "run.json"), Error);
  const auto odd = read_run_description(R"({"label": "dt", "variant": {"hidden": "wide"}})", "r");
  EXPECT_FALSE(odd.variant);
  EXPECT_FALSE(odd.training_given);
}

TEST(RunFolders, SayWhatMadeThemFromRunJsonOrTheirName) {
  test::TempDir dir;
  const auto write = [](const std::filesystem::path& folder, const std::string& file,
                        const std::string& text) {
    std::filesystem::create_directories(folder);
    std::ofstream(folder / file) << text;
  };
  const std::string metrics = "step,loss,learning_rate,steps_per_second\n10,0.8,1e-4,50\n";
  // run.json, as the studio writes it.
  write(dir / "a", "metrics.csv", metrics);
  write(dir / "a", "run.json",
        R"({"label": "hier-conv-pooling", "training": {"seed": 7, "steps": 500}})");
  auto run = models::read_run_folder(dir / "a");
  EXPECT_EQ(run.label, "hier-conv-pooling");
  EXPECT_EQ(run.seed, "7");
  EXPECT_EQ(run.total_steps, 500);
  EXPECT_FALSE(run.complete);
  EXPECT_EQ(run.name, "a");
  EXPECT_EQ(run.metrics.columns.at("loss").y, (std::vector<double>{0.8}));
  EXPECT_TRUE(run.config.empty()) << "run.json says no configuration";
  // A whole run.json: its configuration, as the runs table shows it.
  auto variant = make_variant("dc");
  variant.conv_window = 4;
  TrainingConfig training;
  training.steps = 900;
  training.learning_rate = 3e-4;
  write(dir / "b", "metrics.csv", metrics);
  write(dir / "b", "run.json",
        R"({"label": "dc", "variant": )" + to_json(variant) + R"(, "training": )" +
            to_json(training) + "}");
  run = models::read_run_folder(dir / "b");
  EXPECT_EQ(run.config, run_config_values(variant, training));
  const auto value = [&](const std::string& key) {
    for (const auto& [k, v] : run.config)
      if (k == key) return v;
    return std::string("(none)");
  };
  EXPECT_EQ(value("conv_window"), "4");
  EXPECT_EQ(value("learning_rate"), "0.0003");
  EXPECT_EQ(value("steps"), "900");
  // Values of the wrong type (edited by hand): still named and labelled, nothing escapes.
  write(dir / "c", "metrics.csv", metrics);
  write(dir / "c", "run.json", R"({"label": "dt", "training": {"seed": "seven", "steps": [1]}})");
  run = models::read_run_folder(dir / "c");
  EXPECT_EQ(run.label, "dt");
  EXPECT_EQ(run.seed, "0");
  EXPECT_EQ(run.total_steps, 0);
  // Without: the folder's name, <label>-seed<N>-<stamp>.
  write(dir / "dc-seed3-20240101-000000", "metrics.csv", metrics);
  run = models::read_run_folder((dir / "dc-seed3-20240101-000000").string() + "/");
  EXPECT_EQ(run.label, "dc");
  EXPECT_EQ(run.seed, "3");
  EXPECT_EQ(run.total_steps, 0);
  write(dir / "odd name", "metrics.csv", metrics);
  run = models::read_run_folder(dir / "odd name");
  EXPECT_EQ(run.label, "odd name");
  EXPECT_EQ(run.seed, "");
  // A folder without metrics says so, naming it.
  std::filesystem::create_directories(dir / "empty");
  EXPECT_THAT([&] { (void)models::read_run_folder(dir / "empty"); },
              testing::ThrowsMessage<std::exception>(testing::HasSubstr("empty")));
}

TEST(RunFolders, ANewRunNeverTakesAnExistingFolder) {
  test::TempDir dir;
  const auto first = models::make_run_folder(dir / "runs", "dt", 1, "20260101-120000");
  const auto second = models::make_run_folder(dir / "runs", "dt", 1, "20260101-120000");
  EXPECT_EQ(first.filename(), "dt-seed1-20260101-120000");
  EXPECT_EQ(second.filename(), "dt-seed1-20260101-120000-2");
  EXPECT_TRUE(std::filesystem::is_directory(second));
}

}  // namespace
}  // namespace dstudio::models
