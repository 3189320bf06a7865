// Models handed to PyTorch code: the corl-dt export against the state_dict that PyTorch itself
// saved for CORL's Decision Transformer (tests/data/corl_dt/a_state_dict.pt, written by
// torch.save from tests/reference/corl_dt_reference.py), the state-dict export of every variant
// round-tripped to identical predictions, and, where Python has torch, the exported file loaded
// by torch.load(weights_only=True) into CORL's module with load_state_dict(strict=True).

#include "dstudio/models/export.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "dstudio/data/arrays_h5.h"
#include "dstudio/models/checkpoint.h"
#include "dstudio/models/checkpoint_model.h"
#include "dstudio/models/import.h"
#include "dstudio/models/intervene.h"
#include "dstudio/models/predict.h"
#include "dstudio/models/pytorch_file.h"
#include "h5_fixture.h"

namespace dstudio::models {
namespace {

using testing::HasSubstr;
namespace fs = std::filesystem;

const fs::path kData = fs::path(DSTUDIO_TEST_DATA) / "corl_dt";
const fs::path kReference = fs::path(DSTUDIO_TEST_DATA) / ".." / "reference";

// Windows in a file as `dstudio predict` reads them.
void write_windows(const fs::path& path, const torch::Tensor& states, const torch::Tensor& actions,
                   const torch::Tensor& returns_to_go, const torch::Tensor& timesteps) {
  const auto array = [](const torch::Tensor& t) {
    const auto d = t.to(torch::kDouble).contiguous();
    data::NdArray a;
    a.shape.assign(d.sizes().begin(), d.sizes().end());
    a.values.assign(d.data_ptr<double>(), d.data_ptr<double>() + d.numel());
    return a;
  };
  data::write_nd_arrays(path, {{"states", array(states)},
                               {"actions", array(actions)},
                               {"returns_to_go", array(returns_to_go)},
                               {"timesteps", array(timesteps)}});
}

std::string export_error(const std::function<void()>& body) {
  try {
    body();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

// Model A (state 11, action 3, seq_len 5, episode_len 40, embedding 16, 2 layers, 2 heads) as
// CORL's module lists its state_dict: names, shapes and dtypes in order (recorded from the file
// PyTorch wrote, tests/data/corl_dt/a_state_dict.pt).
std::vector<TensorLayout> recorded_model_a() {
  std::vector<TensorLayout> out = {
      {"emb_norm.weight", {16}, "float32"},         {"emb_norm.bias", {16}, "float32"},
      {"out_norm.weight", {16}, "float32"},         {"out_norm.bias", {16}, "float32"},
      {"timestep_emb.weight", {45, 16}, "float32"}, {"state_emb.weight", {16, 11}, "float32"},
      {"state_emb.bias", {16}, "float32"},          {"action_emb.weight", {16, 3}, "float32"},
      {"action_emb.bias", {16}, "float32"},         {"return_emb.weight", {16, 1}, "float32"},
      {"return_emb.bias", {16}, "float32"}};
  for (const std::string b : {"blocks.0.", "blocks.1."}) {
    const std::vector<TensorLayout> block = {{b + "causal_mask", {15, 15}, "bool"},
                                             {b + "norm1.weight", {16}, "float32"},
                                             {b + "norm1.bias", {16}, "float32"},
                                             {b + "norm2.weight", {16}, "float32"},
                                             {b + "norm2.bias", {16}, "float32"},
                                             {b + "attention.in_proj_weight", {48, 16}, "float32"},
                                             {b + "attention.in_proj_bias", {48}, "float32"},
                                             {b + "attention.out_proj.weight", {16, 16}, "float32"},
                                             {b + "attention.out_proj.bias", {16}, "float32"},
                                             {b + "mlp.0.weight", {64, 16}, "float32"},
                                             {b + "mlp.0.bias", {64}, "float32"},
                                             {b + "mlp.2.weight", {16, 64}, "float32"},
                                             {b + "mlp.2.bias", {16}, "float32"}};
    out.insert(out.end(), block.begin(), block.end());
  }
  out.push_back({"action_head.0.weight", {3, 16}, "float32"});
  out.push_back({"action_head.0.bias", {3}, "float32"});
  return out;
}

std::vector<TensorLayout> layout_of(const PyTorchFile& file) {
  std::vector<TensorLayout> out;
  for (const auto& name : file.order) {
    const auto& t = file.tensors.at(name);
    out.push_back({name, t.shape, t.dtype});
  }
  return out;
}

TEST(CorlExport, WritesTheStateDictPyTorchSavedForCorlsModuleTensorForTensor) {
  test::TempDir dir;
  CorlImportOptions options;
  options.heads = 2;
  const auto info = import_corl_dt(kData / "a_state_dict.pt", dir / "a.pt", options);
  EXPECT_EQ(corl_dt_refusal(info.variant), "");
  const auto original = read_pytorch_file(kData / "a_state_dict.pt");
  // The layout computed from the configuration is the one PyTorch wrote, and the recorded one.
  EXPECT_EQ(corl_dt_layout(info.variant), layout_of(original));
  EXPECT_EQ(corl_dt_layout(info.variant), recorded_model_a());

  export_corl_dt(dir / "a.pt", dir / "corl.pt");
  const auto exported = read_pytorch_file(dir / "corl.pt");
  EXPECT_EQ(layout_of(exported), recorded_model_a());
  for (const auto& name : original.order)
    EXPECT_EQ(exported.tensors.at(name).values, original.tensors.at(name).values) << name;

  // The constructor's arguments beside it: CORL's episode_len leaves seq_len padding rows.
  const auto sidecar = nlohmann::json::parse(std::ifstream(export_sidecar(dir / "corl.pt")));
  EXPECT_EQ(sidecar["constructor"]["episode_len"], 40);
  EXPECT_EQ(sidecar["constructor"]["seq_len"], 5);
  EXPECT_EQ(sidecar["constructor"]["num_heads"], 2);
  EXPECT_EQ(sidecar["constructor"]["embedding_dim"], 16);
  EXPECT_DOUBLE_EQ(sidecar["reward_scale"].get<double>(), 0.001);

  // Imported again, it predicts what PyTorch predicted.
  import_corl_dt(dir / "corl.pt", dir / "again.pt", options);
  PredictOptions raw;
  raw.normalize = false;
  predict_file(dir / "a.pt", kData / "a_inputs.h5", dir / "first.h5", raw);
  predict_file(dir / "again.pt", kData / "a_inputs.h5", dir / "second.h5", raw);
  EXPECT_EQ(data::read_nd_arrays(dir / "first.h5", {"actions"}).at("actions").values,
            data::read_nd_arrays(dir / "second.h5", {"actions"}).at("actions").values);
}

TEST(CorlExport, AVariantCorlCannotExpressIsRefusedByNameAndNothingIsWritten) {
  test::TempDir dir;
  // The shipped DT uses ReLU in its MLP; CORL's module has GELU.
  const fs::path shipped =
      fs::path(DSTUDIO_RESOURCES_DIR) / "checkpoints" / "hopper-medium-expert-dt.pt";
  EXPECT_THAT(export_error([&] { export_corl_dt(shipped, dir / "x.pt"); }),
              HasSubstr("its MLP uses relu; CORL's uses GELU"));
  EXPECT_FALSE(fs::exists(dir / "x.pt"));
  EXPECT_FALSE(fs::exists(dir / "x.json"));
  auto dc = make_variant("dc");
  EXPECT_THAT(corl_dt_refusal(dc), HasSubstr("it is a 'dc' model"));
  auto wide = make_variant("dt");
  wide.activation = "gelu";
  wide.mlp_ratio = 2;
  EXPECT_THAT(corl_dt_refusal(wide), HasSubstr("its MLP is 2 x the embedding wide"));
  EXPECT_THAT(corl_dt_refusal(make_variant("hier", "none", "attention")),
              HasSubstr("'hier' model"));
}

// A model CORL's module takes, exported and imported again with no option given: the description
// beside the file gives back its heads, state statistics, reward scale and environment, so it
// acts bit for bit as before on normalised inputs. An option that disagrees with the description
// is refused naming both.
TEST(CorlExport, ExportThenImportGivesBackTheSameModelFromItsDescription) {
  test::TempDir dir;
  auto c = make_variant("dt");
  c.activation = "gelu";
  c.state_dim = 11;
  c.act_dim = 3;
  c.context_length = 4;
  c.hidden = 16;
  c.layers = 2;
  c.heads = 4;
  c.max_ep_len = 50;
  ASSERT_EQ(corl_dt_refusal(c), "");
  torch::manual_seed(11);
  DecisionModel model(c);
  model->eval();
  CheckpointInfo info;
  info.variant = c;
  for (int i = 0; i < 11; ++i) {
    info.state_mean.push_back(0.1f * static_cast<float>(i) - 0.3f);
    info.state_std.push_back(0.5f + 0.25f * static_cast<float>(i));
  }
  info.rtg_scale = 500.0;
  info.env_id = "hopper";
  info.metrics = "{}";
  save_weights_checkpoint(dir / "model.pt", model, info, "test");
  export_corl_dt(dir / "model.pt", dir / "corl.pt");
  const auto back = import_corl_dt(dir / "corl.pt", dir / "back.pt");
  EXPECT_EQ(back.variant.heads, 4);
  EXPECT_EQ(back.state_mean, info.state_mean);
  EXPECT_EQ(back.state_std, info.state_std);
  EXPECT_DOUBLE_EQ(back.rtg_scale, 500.0);
  EXPECT_EQ(back.env_id, "hopper");

  // Windows in the dataset's units: normalised with each checkpoint's own statistics.
  torch::manual_seed(12);
  const std::int64_t B = 3, K = 4;
  const auto states = torch::randn({B, K, 11}) * 2 + 1;
  const auto actions = torch::randn({B, K, 3}).tanh();
  const auto rtg = torch::rand({B, K}) * 3000;
  const auto timesteps = torch::arange(K).unsqueeze(0).repeat({B, 1}) + 9;
  write_windows(dir / "in.h5", states, actions, rtg, timesteps);
  predict_file(dir / "model.pt", dir / "in.h5", dir / "first.h5", {});
  predict_file(dir / "back.pt", dir / "in.h5", dir / "second.h5", {});
  EXPECT_EQ(data::read_nd_arrays(dir / "first.h5", {"actions"}).at("actions").values,
            data::read_nd_arrays(dir / "second.h5", {"actions"}).at("actions").values);

  CorlImportOptions other;
  other.heads = 2;
  EXPECT_THAT(export_error([&] { import_corl_dt(dir / "corl.pt", dir / "x.pt", other); }),
              HasSubstr("--heads 2 disagrees with its description " + (dir / "corl.json").string() +
                        " (num_heads 4)"));
  other = {};
  other.rtg_scale = 1000;
  EXPECT_THAT(export_error([&] { import_corl_dt(dir / "corl.pt", dir / "x.pt", other); }),
              HasSubstr("--rtg-scale 1000.000000 disagrees with its description"));
  EXPECT_FALSE(fs::exists(dir / "x.pt"));
  // Without its description, CORL's defaults: one head, statistics 0 and 1.
  fs::remove(dir / "corl.json");
  const auto bare = import_corl_dt(dir / "corl.pt", dir / "bare.pt");
  EXPECT_EQ(bare.variant.heads, 1);
  EXPECT_EQ(bare.state_std, std::vector<float>(11, 1.0f));
}

// predict runs many windows a part at a time (kPredictPart): the actions, the action lens and a
// patch from a second input are those of every window at once; it reports its progress as it goes
// and, cancelled, stops and writes nothing.
TEST(PredictFile, ManyWindowsArePredictedAPartAtATimeAsAllAtOnce) {
  test::TempDir dir;
  auto c = make_variant("dt");
  c.state_dim = 11;
  c.act_dim = 3;
  c.context_length = 4;
  c.hidden = 16;
  c.layers = 2;
  c.max_ep_len = 50;
  torch::manual_seed(21);
  DecisionModel model(c);
  model->eval();
  CheckpointInfo info;
  info.variant = c;
  info.state_mean.assign(11, 0.0f);
  info.state_std.assign(11, 1.0f);
  info.rtg_scale = 1.0;
  info.env_id = "hopper";
  info.metrics = "{}";
  save_weights_checkpoint(dir / "model.pt", model, info, "test");
  const std::int64_t B = 2 * kPredictPart + 37, K = 4;  // three parts, the last short
  const auto random_windows = [&](const fs::path& path) {
    ModelInputs in;
    in.states = torch::randn({B, K, 11});
    in.actions = torch::randn({B, K, 3}).tanh();
    in.returns_to_go = torch::rand({B, K, 1}) * 3;
    in.timesteps = torch::randint(0, 40, {B, K});
    write_windows(path, in.states, in.actions, in.returns_to_go, in.timesteps);
    // As the file holds them (float32).
    in.states = in.states.to(torch::kFloat);
    return in;
  };
  const auto in = random_windows(dir / "in.h5"), other = random_windows(dir / "other.h5");
  PredictOptions options;
  options.normalize = false;
  options.action_lens = true;
  options.patch_from = dir / "other.h5";
  options.patches = {"resid:1.5"};
  std::vector<double> fractions;
  Progress progress;
  progress.report = [&](double f, std::string_view) { fractions.push_back(f); };
  predict_file(dir / "model.pt", dir / "in.h5", dir / "out.h5", options, progress);
  const auto read = data::read_nd_arrays(dir / "out.h5", {"actions", "lens"});
  const auto tensor = [](const data::NdArray& a) {
    return torch::tensor(a.values, torch::kDouble).reshape(a.shape);
  };
  // Every window at once, the patch recorded from every window of the second input.
  torch::InferenceMode inference;
  InterventionSources sources;
  record_activations(*model, other, sources.patch);
  const InterventionPlan plan({parse_patch("resid:1.5")}, c, sources);
  const auto actions = plan.forward(*model, in).to(torch::kDouble);
  const auto lens = action_lens(*model, in, &plan).to(torch::kDouble);
  ASSERT_EQ(tensor(read.at("actions")).sizes(), actions.sizes());
  EXPECT_LT((tensor(read.at("actions")) - actions).abs().max().item<double>(), 1e-6);
  EXPECT_LT((tensor(read.at("lens")) - lens).abs().max().item<double>(), 1e-6);
  // The lens's last block is the action itself, bit for bit: predict reads both from one pass.
  const auto plain_lens = action_lens(*model, in);
  EXPECT_TRUE(torch::equal(plain_lens.select(2, c.layers - 1), model->forward(in)));
  // Three parts: a report before each, and the last at 1.
  ASSERT_GE(fractions.size(), 4u);
  EXPECT_TRUE(std::is_sorted(fractions.begin(), fractions.end()));
  EXPECT_DOUBLE_EQ(fractions.back(), 1.0);

  Progress cancelled;
  cancelled.cancel.cancel();
  EXPECT_THROW(predict_file(dir / "model.pt", dir / "in.h5", dir / "never.h5", options, cancelled),
               Cancelled);
  EXPECT_FALSE(fs::exists(dir / "never.h5"));
}

// predict reads the actions from the action lens's pass when the lens is asked: for every shipped
// model, the lens's last block is the action bit for bit (docs/models.md says so).
TEST(PredictFile, TheLensLastBlockIsTheActionOfEveryShippedModel) {
  for (const auto& entry :
       fs::directory_iterator(fs::path(DSTUDIO_RESOURCES_DIR) / "checkpoints")) {
    const auto checkpoint = open_checkpoint(entry.path());
    DecisionModel handle = checkpoint->model;  // the same module, callable
    auto& model = *handle;
    const auto& c = model.config();
    torch::manual_seed(8);
    const int64_t B = 16, K = c.context_length;
    ModelInputs in;
    in.states = torch::randn({B, K, c.state_dim});
    in.actions = torch::rand({B, K, c.act_dim}) * 2 - 1;
    in.returns_to_go = torch::rand({B, K, 1}) * 3.6;
    in.timesteps = torch::randint(0, 900, {B, K});
    in.mask = torch::ones({B, K});
    torch::InferenceMode inference;
    EXPECT_TRUE(torch::equal(action_lens(model, in).select(2, c.layers - 1), model.forward(in)))
        << entry.path().filename();
  }
}

// Every variant: written as a state_dict in the studio's names with its description beside it,
// imported again, it predicts bit for bit what it predicted.
TEST(StateDictExport, EveryVariantRoundTripsToIdenticalPredictions) {
  test::TempDir dir;
  std::vector<VariantConfig> configs;
  for (const auto& name : variant_names())
    if (name != "hier") configs.push_back(make_variant(name));
  configs.push_back(make_variant("hier", "conv", "pooling"));
  configs.push_back(make_variant("hier", "attention", "linear-attention"));
  torch::manual_seed(5);
  ModelInputs in;
  in.states = torch::randn({2, 4, 11});
  in.actions = torch::randn({2, 4, 3}).tanh();
  in.returns_to_go = torch::randn({2, 4, 1});
  in.timesteps = torch::arange(4).unsqueeze(0).repeat({2, 1}) + 7;
  in.mask = torch::ones({2, 4});
  for (auto c : configs) {
    c.state_dim = 11;
    c.act_dim = 3;
    c.context_length = 4;
    c.hidden = 16;
    c.layers = 2;
    c.max_ep_len = 50;
    const std::string label = c.variant + "/" + c.mixer;
    DecisionModel model(c);
    model->eval();
    CheckpointInfo info;
    info.variant = c;
    info.state_mean.assign(11, 0.5f);
    info.state_std.assign(11, 2.0f);
    info.rtg_scale = 1000.0;
    info.env_id = "hopper";
    info.metrics = "{}";
    save_weights_checkpoint(dir / "model.pt", model, info, "test");
    export_state_dict(dir / "model.pt", dir / "exported.pt");
    ASSERT_TRUE(fs::exists(dir / "exported.json")) << label;
    const auto back = import_state_dict(dir / "exported.pt", dir / "back.pt");
    EXPECT_EQ(back.variant, c) << label;
    EXPECT_EQ(back.state_std, info.state_std) << label;
    auto reloaded = load_checkpoint_model(dir / "back.pt");
    torch::NoGradGuard no_grad;
    EXPECT_TRUE(torch::equal(model->forward(in), reloaded->forward(in))) << label;
  }
}

TEST(StateDictExport, AStateDictThatDoesNotFitItsDescriptionIsRefused) {
  test::TempDir dir;
  CorlImportOptions options;
  options.heads = 2;
  import_corl_dt(kData / "a_state_dict.pt", dir / "a.pt", options);
  export_state_dict(dir / "a.pt", dir / "sd.pt");
  // A CORL state_dict with the studio's description: none of the names fit.
  fs::copy_file(kData / "a_state_dict.pt", dir / "corl.pt");
  fs::copy_file(dir / "sd.json", dir / "corl.json");
  EXPECT_THAT(export_error([&] { import_state_dict(dir / "corl.pt", dir / "x.pt"); }),
              HasSubstr("has no "));
  // No description beside it.
  fs::copy_file(dir / "sd.pt", dir / "alone.pt");
  EXPECT_THAT(export_error([&] { import_state_dict(dir / "alone.pt", dir / "x.pt"); }),
              HasSubstr("its description"));
  EXPECT_FALSE(fs::exists(dir / "x.pt"));
}

// Where Python has torch: PyTorch's own torch.load (weights_only) and CORL's module
// (load_state_dict(strict=True)) take the exported file and predict what the studio predicts.
TEST(CorlExport, CorlsModuleLoadsTheExportStrictlyAndPredictsTheSame) {
  // Debian's Python, where python3-torch installs torch (another python3 may come first on PATH).
  if (std::system("/usr/bin/python3 -c 'import torch' > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "/usr/bin/python3 has no torch here (Debian's python3-torch)";
  test::TempDir dir;
  CorlImportOptions options;
  options.heads = 2;
  import_corl_dt(kData / "a_state_dict.pt", dir / "a.pt", options);
  export_corl_dt(dir / "a.pt", dir / "corl.pt");
  const auto inputs = data::read_nd_arrays(
      kData / "a_inputs.h5", {"states", "actions", "returns_to_go", "timesteps", "mask"});
  nlohmann::json windows;
  for (const auto& [name, array] : inputs) {
    // Nested lists in the array's shape.
    std::function<nlohmann::json(std::size_t, std::size_t)> nest = [&](std::size_t dim,
                                                                       std::size_t at) {
      nlohmann::json list = nlohmann::json::array();
      std::size_t step = 1;
      for (std::size_t d = dim + 1; d < array.shape.size(); ++d)
        step *= static_cast<std::size_t>(array.shape[d]);
      for (std::size_t i = 0; i < static_cast<std::size_t>(array.shape[dim]); ++i)
        list.push_back(dim + 1 == array.shape.size() ? nlohmann::json(array.values[at + i])
                                                     : nest(dim + 1, at + i * step));
      return list;
    };
    windows[name] = nest(0, 0);
  }
  std::ofstream(dir / "windows.json") << windows.dump();
  const std::string command =
      "/usr/bin/python3 '" + (kReference / "corl_dt_load.py").string() + "' '" +
      (dir / "corl.pt").string() + "' '" + (dir / "corl.json").string() + "' '" +
      (dir / "windows.json").string() + "' > '" + (dir / "out.json").string() + "' 2> '" +
      (dir / "err.txt").string() + "'";
  ASSERT_EQ(std::system(command.c_str()), 0) << std::ifstream(dir / "err.txt").rdbuf();
  const auto out = nlohmann::json::parse(std::ifstream(dir / "out.json"));
  PredictOptions raw;
  raw.normalize = false;
  predict_file(dir / "a.pt", kData / "a_inputs.h5", dir / "ours.h5", raw);
  const auto ours = data::read_nd_arrays(dir / "ours.h5", {"actions"}).at("actions");
  std::vector<double> theirs;
  for (const auto& window : out["actions"])
    for (const auto& step : window)
      for (const auto& a : step) theirs.push_back(a.get<double>());
  ASSERT_EQ(theirs.size(), ours.values.size());
  const auto mask = inputs.at("mask").values;
  for (std::size_t i = 0; i < theirs.size(); ++i) {
    if (mask[i / 3] != 0.0f) {
      EXPECT_NEAR(theirs[i], ours.values[i], 1e-5) << i;
    }
  }
}

// The shipped CORL-ready DT (hopper-medium-expert-dt-corl.pt, trained as CORL trains it) exports,
// and CORL's module loads the file strictly and predicts what the studio predicts.
TEST(CorlExport, TheShippedCorlCheckpointIsTakenByCorlsModule) {
  if (std::system("/usr/bin/python3 -c 'import torch' > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "/usr/bin/python3 has no torch here (Debian's python3-torch)";
  test::TempDir dir;
  const fs::path shipped =
      fs::path(DSTUDIO_RESOURCES_DIR) / "checkpoints" / "hopper-medium-expert-dt-corl.pt";
  export_corl_dt(shipped, dir / "corl.pt");
  const auto description = nlohmann::json::parse(std::ifstream(dir / "corl.json"));
  EXPECT_EQ(description["constructor"]["episode_len"], 1000);
  EXPECT_EQ(description["constructor"]["seq_len"], 20);
  // Two windows of 20 steps in the network's units (the statistics are CORL's to apply).
  torch::manual_seed(4);
  const std::int64_t B = 2, K = 20;
  const auto states = torch::randn({B, K, 11}), actions = torch::rand({B, K, 3}) * 2 - 1;
  const auto rtg = torch::rand({B, K}) * 3.6;
  const auto timesteps = torch::arange(K).unsqueeze(0).repeat({B, 1}) + 100;
  const auto nested = [](const torch::Tensor& t) {
    const auto d = t.to(torch::kDouble).contiguous();
    std::vector<double> flat(d.data_ptr<double>(), d.data_ptr<double>() + d.numel());
    nlohmann::json out = nlohmann::json::array();
    const std::int64_t per_window = d.numel() / d.size(0);
    for (std::int64_t b = 0; b < d.size(0); ++b) {
      nlohmann::json window = nlohmann::json::array();
      const std::int64_t width = d.dim() == 3 ? d.size(2) : 1;
      for (std::int64_t k = 0; k < d.size(1); ++k) {
        const auto at = static_cast<std::size_t>(b * per_window + k * width);
        if (d.dim() == 3)
          window.push_back(
              std::vector<double>(flat.begin() + static_cast<std::ptrdiff_t>(at),
                                  flat.begin() + static_cast<std::ptrdiff_t>(at) + width));
        else
          window.push_back(flat[at]);
      }
      out.push_back(window);
    }
    return out;
  };
  nlohmann::json windows = {{"states", nested(states)},
                            {"actions", nested(actions)},
                            {"returns_to_go", nested(rtg)},
                            {"timesteps", nested(timesteps)},
                            {"mask", nested(torch::ones({B, K}))}};
  std::ofstream(dir / "windows.json") << windows.dump();
  const std::string command =
      "/usr/bin/python3 '" + (kReference / "corl_dt_load.py").string() + "' '" +
      (dir / "corl.pt").string() + "' '" + (dir / "corl.json").string() + "' '" +
      (dir / "windows.json").string() + "' > '" + (dir / "out.json").string() + "' 2> '" +
      (dir / "err.txt").string() + "'";
  ASSERT_EQ(std::system(command.c_str()), 0) << std::ifstream(dir / "err.txt").rdbuf();
  const auto out = nlohmann::json::parse(std::ifstream(dir / "out.json"));
  write_windows(dir / "in.h5", states, actions, rtg, timesteps);
  PredictOptions raw;
  raw.normalize = false;
  predict_file(shipped, dir / "in.h5", dir / "ours.h5", raw);
  const auto ours = data::read_nd_arrays(dir / "ours.h5", {"actions"}).at("actions").values;
  std::vector<double> theirs;
  for (const auto& window : out["actions"])
    for (const auto& step : window)
      for (const auto& a : step) theirs.push_back(a.get<double>());
  ASSERT_EQ(theirs.size(), ours.size());
  for (std::size_t i = 0; i < theirs.size(); ++i) EXPECT_NEAR(theirs[i], ours[i], 1e-5) << i;
}

}  // namespace
}  // namespace dstudio::models
