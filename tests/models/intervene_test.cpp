// Interventions inside the forward pass, for every variant with blocks: the identities that hold
// whatever the weights (patching from the same input, context:K, mean ablation at the mean, the
// whole stream patched after the last block, the lens of the last layer), the locality context:1
// enforces, act() agreeing with forward() under interventions, and the sources a spec needs.

#include "dstudio/models/intervene.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "dstudio/common/error.h"
#include "dstudio/common/figure_recipe.h"
#include "dstudio/models/decision_model.h"
#include "dstudio/models/interventions.h"
#include "dstudio/models/steering_direction.h"
#include "dstudio/models/variant_registry.h"

namespace dstudio::models {
namespace {

constexpr int kS = 3, kA = 2, kK = 5, kB = 3;

struct Named {
  std::string label;
  VariantConfig config;
};

void PrintTo(const Named& n, std::ostream* os) {
  *os << n.label;
}

// Every variant that has blocks, small, with two heads where heads apply.
std::vector<Named> variants_with_blocks() {
  std::vector<Named> out;
  for (const auto& name : variant_names()) {
    if (name == "hier" || name == "mlp-bc") continue;
    out.push_back({name, make_variant(name)});
  }
  for (const std::string merger : {"none", "attention", "pooling"})
    for (const std::string mixer : {"none", "linear-attention", "conv", "pooling"})
      out.push_back({"hier-" + merger + "-" + mixer, make_variant("hier", merger, mixer)});
  for (auto& v : out) {
    v.config.state_dim = kS;
    v.config.act_dim = kA;
    v.config.context_length = kK;
    v.config.hidden = 16;
    v.config.heads = 2;
    v.config.layers = 2;
    v.config.max_ep_len = 50;
    v.config.conv_window = 4;  // reaches into the previous step, so a context of 1 cuts it
    v.config.pool_size = 4;
  }
  return out;
}

// One of them by its label.
VariantConfig small_variant(const std::string& label) {
  for (const auto& named : variants_with_blocks())
    if (named.label == label) return named.config;
  throw UsageError("no variant " + label);
}

ModelInputs random_inputs(std::uint64_t seed, int64_t B = kB) {
  torch::manual_seed(seed);
  ModelInputs in;
  in.states = torch::randn({B, kK, kS});
  in.actions = torch::randn({B, kK, kA}).tanh();
  in.returns_to_go = torch::randn({B, kK, 1});
  in.timesteps = torch::arange(kK).unsqueeze(0).repeat({B, 1}) + 3;
  in.mask = torch::ones({B, kK});
  return in;
}

double largest_difference(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

// Every spec with the same replacement `how` at every site of every layer the model has.
std::vector<Intervention> every_site(const VariantConfig& c, const std::string& how) {
  std::vector<Intervention> out;
  for (int l = 1; l <= c.layers; ++l) {
    for (int h = 1; h <= layer_heads(c, l); ++h)
      out.push_back(how == "patch"
                        ? parse_patch("head:" + std::to_string(l) + "." + std::to_string(h))
                        : parse_intervention("head:" + std::to_string(l) + "." + std::to_string(h) +
                                             "=" + how));
    if (layer_mixer(c, l) != "none")
      out.push_back(how == "patch" ? parse_patch("mixer:" + std::to_string(l))
                                   : parse_intervention("mixer:" + std::to_string(l) + "=" + how));
    out.push_back(how == "patch" ? parse_patch("mlp:" + std::to_string(l))
                                 : parse_intervention("mlp:" + std::to_string(l) + "=" + how));
  }
  return out;
}

class Intervened : public testing::TestWithParam<Named> {
 protected:
  void SetUp() override {
    torch::manual_seed(11);
    model = DecisionModel(GetParam().config);
    model->eval();
  }
  DecisionModel model{nullptr};
  torch::NoGradGuard no_grad;
};

TEST(SteeringDirectionFile, WritesAndReadsBackExactly) {
  const SteeringDirectionFile file{{0.25, -1.5, 3e38}, 2, 3.6, 1.2, 3.0, "/a/dt.pt", "sha256:ab"};
  const std::string text = steering_direction_text(file);
  EXPECT_EQ(text.rfind(R"({
  "direction": [
    0.25,)",
                       0),
            0u);
  const auto back = read_steering_direction(text, "d.json");
  EXPECT_EQ(back.direction, file.direction);
  EXPECT_EQ(back.layer, 2);
  EXPECT_EQ(back.high_target, 3.6);
  EXPECT_EQ(back.low_target, 1.2);
  EXPECT_EQ(back.norm, 3.0);
  EXPECT_EQ(back.checkpoint, "/a/dt.pt");
  EXPECT_EQ(back.checkpoint_hash, "sha256:ab");
  EXPECT_EQ(steering_direction_text(back), text);
  // A file that gives only the direction (one written by hand) reads, saying nothing else.
  const auto bare = read_steering_direction(R"({"direction": [1, 2]})", "d.json");
  EXPECT_EQ(bare.direction, (std::vector<double>{1, 2}));
  EXPECT_TRUE(bare.checkpoint_hash.empty());
  EXPECT_THROW((void)read_steering_direction(R"({"norm": 1})", "d.json"), UsageError);
  try {
    (void)read_steering_direction(R"({"direction": [1], "layer": -1})", "d.json");
    ADD_FAILURE() << "a negative layer was read";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "d.json: layer must be at least 0 (is -1)");
  }
}

TEST_P(Intervened, NoInterventionAndContextOfTheWholeWindowChangeNothing) {
  const auto& c = GetParam().config;
  const auto in = random_inputs(1);
  const auto plain = model->forward(in);
  const InterventionPlan none({}, c, {});
  EXPECT_TRUE(torch::equal(none.forward(*model, in), plain));
  const InterventionPlan whole({parse_intervention("context:" + std::to_string(kK))}, c, {});
  EXPECT_TRUE(torch::equal(whole.forward(*model, in), plain));
  EXPECT_TRUE(torch::equal(whole.act(*model, in), model->act(in)));
  // Hooks that only read change nothing either.
  Activations recorded;
  EXPECT_TRUE(torch::equal(record_activations(*model, in, recorded), plain));
  ASSERT_EQ(recorded.resid.size(), static_cast<std::size_t>(c.layers));
  EXPECT_EQ(recorded.resid.back().size(1), c.tokens());
}

TEST_P(Intervened, PatchingFromTheSameInputChangesNothing) {
  const auto& c = GetParam().config;
  const auto in = random_inputs(2);
  InterventionSources sources;
  record_activations(*model, in, sources.patch);
  auto specs = every_site(c, "patch");
  for (int t = 1; t <= c.tokens(); t += 4)
    specs.push_back(parse_patch("resid:1." + std::to_string(t)));
  const InterventionPlan plan(specs, c, std::move(sources));
  EXPECT_LT(largest_difference(plan.forward(*model, in), model->forward(in)), 1e-6);
  EXPECT_LT(largest_difference(plan.act(*model, in), model->act(in)), 1e-5);
}

TEST_P(Intervened, PatchingTheWholeStreamAfterTheLastBlockGivesTheOtherInputsActions) {
  const auto& c = GetParam().config;
  const auto clean = random_inputs(3), other = random_inputs(4);
  InterventionSources sources;
  record_activations(*model, other, sources.patch);
  std::vector<Intervention> specs;
  for (int t = 1; t <= c.tokens(); ++t)
    specs.push_back(parse_patch("resid:" + std::to_string(c.layers) + "." + std::to_string(t)));
  const InterventionPlan plan(specs, c, std::move(sources));
  const auto patched = plan.forward(*model, clean), theirs = model->forward(other);
  EXPECT_GT(largest_difference(model->forward(clean), theirs), 1e-3) << "the inputs differ";
  EXPECT_LT(largest_difference(patched, theirs), 1e-6);
}

TEST_P(Intervened, MeanAblationWhereEveryWindowIsTheMeanChangesNothing) {
  const auto& c = GetParam().config;
  // Three copies of one window: the mean over them at each position is that window's value.
  auto in = random_inputs(5, 1);
  for (auto* t : {&in.states, &in.actions, &in.returns_to_go, &in.timesteps, &in.mask})
    *t = t->repeat_interleave(kB, 0);
  Activations recorded;
  record_activations(*model, in, recorded);
  InterventionSources sources;
  sources.mean = mean_over_windows(recorded);
  const InterventionPlan plan(every_site(c, "mean"), c, std::move(sources));
  EXPECT_LT(largest_difference(plan.forward(*model, in), model->forward(in)), 1e-5);
}

TEST_P(Intervened, ZeroAblationChangesTheActionsAndActAgreesWithForward) {
  const auto& c = GetParam().config;
  const auto in = random_inputs(6);
  for (const auto& iv : every_site(c, "zero")) {
    const InterventionPlan plan({iv}, c, {});
    const auto full = plan.forward(*model, in);
    EXPECT_LT(largest_difference(plan.act(*model, in), full.select(1, kK - 1)), 1e-5)
        << to_spec(iv);
  }
  // The whole last MLP zeroed changes what the model does.
  const InterventionPlan mlp({parse_intervention("mlp:" + std::to_string(c.layers) + "=zero")}, c,
                             {});
  EXPECT_GT(largest_difference(mlp.forward(*model, in), model->forward(in)), 1e-6);
  // Limited to one step, only that step's actions (and, causally, later ones) change.
  const InterventionPlan one_step({parse_intervention("mlp:1=zero@step:3")}, c, {});
  const auto limited = one_step.forward(*model, in), plain = model->forward(in);
  EXPECT_LT(largest_difference(limited.narrow(1, 0, 2), plain.narrow(1, 0, 2)), 1e-6);
  EXPECT_GT(largest_difference(limited.select(1, 2), plain.select(1, 2)), 1e-6);
}

TEST_P(Intervened, AContextOfOneStepIgnoresEveryEarlierStep) {
  const auto& c = GetParam().config;
  const auto in = random_inputs(7);
  auto earlier = in;
  earlier.states = in.states.clone();
  earlier.returns_to_go = in.returns_to_go.clone();
  earlier.actions = in.actions.clone();
  earlier.states.narrow(1, 0, kK - 1).add_(2.0);
  earlier.returns_to_go.narrow(1, 0, kK - 1).add_(2.0);
  earlier.actions.narrow(1, 0, kK - 1).mul_(-1.0);
  const InterventionPlan one({parse_intervention("context:1")}, c, {});
  const auto a = one.forward(*model, in).select(1, kK - 1);
  const auto b = one.forward(*model, earlier).select(1, kK - 1);
  if (c.tokenizer == Tokenizer::Triplet) {
    EXPECT_LT(largest_difference(a, b), 1e-6);
  } else {
    // A merged or unified step carries the previous action in its token: only states and
    // returns-to-go of earlier steps are out of its reach.
    auto states_only = in;
    states_only.states = earlier.states;
    states_only.returns_to_go = earlier.returns_to_go;
    EXPECT_LT(largest_difference(a, one.forward(*model, states_only).select(1, kK - 1)), 1e-6);
  }
  EXPECT_LT(largest_difference(one.act(*model, in), a), 1e-5);
  // Without the limit the earlier steps matter (unless the model mixes nothing).
  if (layer_mixer(c, 1) != "none") {
    EXPECT_GT(largest_difference(model->forward(in).select(1, kK - 1),
                                 model->forward(earlier).select(1, kK - 1)),
              1e-6);
  }
}

TEST_P(Intervened, TheLastLayersLensIsThePrediction) {
  const auto& c = GetParam().config;
  const auto in = random_inputs(8);
  const auto lens = action_lens(*model, in);
  ASSERT_EQ(lens.sizes(), (std::vector<int64_t>{kB, kK, c.layers, kA}));
  EXPECT_TRUE(torch::equal(lens.select(2, c.layers - 1), model->forward(in)));
  const InterventionPlan plan({parse_intervention("mlp:1=zero")}, c, {});
  EXPECT_TRUE(torch::equal(action_lens(*model, in, &plan).select(2, c.layers - 1),
                           plan.forward(*model, in)));
}

TEST_P(Intervened, ActingFromAnyBlocksStreamIsActing) {
  const auto& c = GetParam().config;
  const auto in = random_inputs(9);
  Activations recorded;
  record_activations(*model, in, recorded);
  const auto acted = model->act(in);
  EXPECT_TRUE(torch::equal(model->act_from(in, model->embed_tokens(in), 1), acted));
  for (int l = 1; l <= c.layers; ++l)
    EXPECT_LT(largest_difference(model->act_from(in, recorded.resid[l - 1], l + 1), acted), 1e-5)
        << "after block " << l;
}

// The sweep that reuses the clean blocks before a patch and batches the patches agrees with a
// whole forward pass per patch; patching after the last block at the action's token gives the
// other input's action, and at a later token changes nothing.
TEST_P(Intervened, ThePatchingSweepAgreesWithAWholePassPerPatch) {
  const auto& c = GetParam().config;
  const auto clean = random_inputs(10), other = random_inputs(11);
  const auto fast = patching_sweep(*model, clean, other, true, {}, /*max_rows=*/7);
  const auto slow = patching_sweep(*model, clean, other, false);
  ASSERT_EQ(fast.stream.sizes(), (std::vector<int64_t>{c.layers, c.tokens(), kB, kA}));
  ASSERT_EQ(fast.components.size(0), static_cast<int64_t>(block_components(c).size()));
  EXPECT_LT(largest_difference(fast.stream, slow.stream), 1e-5);
  EXPECT_LT(largest_difference(fast.components, slow.components), 1e-5);
  const int64_t row = model->action_token(kK - 1);
  EXPECT_LT(largest_difference(fast.stream[c.layers - 1][row], fast.other), 1e-5);
  for (int64_t t = row + 1; t < c.tokens(); ++t)
    EXPECT_LT(largest_difference(fast.stream[c.layers - 1][t], fast.clean), 1e-6);
}

TEST_P(Intervened, AttributionPartsSumToThePreTanhAction) {
  const auto& c = GetParam().config;
  const auto in = random_inputs(12);
  const auto a = attribute_actions(*model, in);
  ASSERT_EQ(a.contributions.size(0), static_cast<int64_t>(a.parts.size()));
  EXPECT_EQ(a.parts.front(), "embeddings");
  EXPECT_EQ(a.parts.back(), "biases");
  EXPECT_LT(largest_difference(a.contributions.sum(0), a.pre_tanh), 1e-4);
  const auto plain = model->forward(in).select(1, kK - 1);
  EXPECT_LT(largest_difference(c.action_tanh ? torch::tanh(a.pre_tanh) : a.pre_tanh, plain), 1e-5);
  // Every head is a part of its own.
  for (int l = 1; l <= c.layers; ++l)
    for (int h = 1; h <= layer_heads(c, l); ++h)
      EXPECT_NE(std::find(a.parts.begin(), a.parts.end(),
                          "L" + std::to_string(l) + " H" + std::to_string(h)),
                a.parts.end());
}

INSTANTIATE_TEST_SUITE_P(Variants, Intervened, testing::ValuesIn(variants_with_blocks()),
                         [](const auto& instance) {
                           std::string name = instance.param.label;
                           for (auto& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

TEST(InterventionPlan, RefusesASpecWhoseSourceIsMissing) {
  auto c = make_variant("dt");
  c.state_dim = kS;
  c.act_dim = kA;
  const auto message = [&](const std::string& spec, bool patch) {
    try {
      InterventionPlan({patch ? parse_patch(spec) : parse_intervention(spec)}, c, {});
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(message("head:1.1=mean", false),
            "head:1.1=mean: needs the mean over dataset windows, which was not given");
  EXPECT_EQ(message("mlp:2=resample", false),
            "mlp:2=resample: needs resampled windows, which was not given");
  EXPECT_EQ(message("resid:1.3", true),
            "resid:1.3: needs a second input (--patch-from), which was not given");
  EXPECT_EQ(message("steer:1=2*rtg.json", false),
            "steer:1=2*rtg.json: no direction rtg.json was read");
  EXPECT_EQ(message("head:4.1=zero", false), "head:4.1=zero: the model has 3 layers, 1 to 3");
}

// A context that cuts none of a convolution's or a pooling's taps computes exactly what the
// unlimited mixer computes (the taps of 4 tokens reach one step back).
TEST(InterventionPlan, AContextWiderThanTheFiltersChangesNothingBitForBit) {
  for (const std::string name : {"dc", "dhi"}) {
    const auto c = small_variant(name);
    torch::manual_seed(5);
    DecisionModel model(c);
    model->eval();
    torch::NoGradGuard no_grad;
    const auto in = random_inputs(10);
    // DC: 4 tokens are this step and the one before; DHi pools 4 merged steps.
    const int wide = c.tokenizer == Tokenizer::Triplet ? 2 : 4;
    const InterventionPlan plan({parse_intervention("context:" + std::to_string(wide))}, c, {});
    EXPECT_TRUE(torch::equal(plan.forward(*model, in), model->forward(in))) << name;
    const InterventionPlan narrower({parse_intervention("context:" + std::to_string(wide - 1))}, c,
                                    {});
    EXPECT_FALSE(torch::equal(narrower.forward(*model, in), model->forward(in))) << name;
  }
}

TEST(InterventionPlan, SteeringAddsTheDirectionAtStateTokensAfterItsBlock) {
  const auto c = small_variant("dt");
  torch::manual_seed(3);
  DecisionModel model(c);
  model->eval();
  torch::NoGradGuard no_grad;
  const auto in = random_inputs(9);
  InterventionSources sources;
  sources.directions["d"] = torch::randn({16});
  const InterventionPlan plan({parse_intervention("steer:2=0.5*d")}, c, sources);
  // After the last block, the stream at s_k is read out: the lens of the steered stream is the
  // read-out of the clean stream plus the direction at the state tokens.
  Activations clean;
  record_activations(*model, in, clean);
  auto expected_stream = clean.resid.back().clone();
  for (int k = 0; k < kK; ++k)
    expected_stream.select(1, 3 * k + 1).add_(0.5 * sources.directions["d"]);
  EXPECT_LT(largest_difference(plan.forward(*model, in), model->read_out(expected_stream)), 1e-6);

  // A direction file: JSON with a list of the stream's width.
  const std::string path = testing::TempDir() + "/direction.json";
  {
    std::ofstream f(path);
    f << R"({"layer": 1, "direction": [)";
    for (int i = 0; i < 16; ++i) f << (i ? ", " : "") << i * 0.25;
    f << "]}";
  }
  CheckpointInfo info;
  info.variant.hidden = 16;
  const auto read = read_direction(path, info);
  ASSERT_EQ(read.numel(), 16);
  EXPECT_FLOAT_EQ(read[5].item<float>(), 1.25f);
  try {
    info.variant.hidden = 32;
    read_direction(path, info);
    ADD_FAILURE() << "a direction of the wrong width was read";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ": the direction has 16 numbers, the model's stream 32");
  }

  // A direction records the checkpoint it was made for; another checkpoint of the same width
  // refuses it, naming both files and hashes.
  const std::string mine = testing::TempDir() + "/mine.pt",
                    other = testing::TempDir() + "/other.pt";
  std::ofstream(mine) << "the weights the direction was made from";
  std::ofstream(other) << "another model's weights";
  {
    std::ofstream f(path);
    f << R"({"direction": [)";
    for (int i = 0; i < 16; ++i) f << (i ? ", " : "") << i * 0.25;
    f << R"(], "checkpoint": ")" << mine << R"(", "checkpoint_hash": ")" << file_content_hash(mine)
      << "\"}";
  }
  info.variant.hidden = 16;
  info.path = mine;
  EXPECT_EQ(read_direction(path, info).numel(), 16);
  info.path = other;
  try {
    read_direction(path, info);
    ADD_FAILURE() << "a direction made for another checkpoint was read";
  } catch (const UsageError& e) {
    EXPECT_THAT(
        std::string(e.what()),
        testing::AllOf(testing::HasSubstr("made for " + mine + " (" + file_content_hash(mine)),
                       testing::HasSubstr("not for " + other + " (" + file_content_hash(other))));
  }
}

// Well formed but meaningless: a direction whose numbers overflow float32 (3e39 is a finite JSON
// number, inf as float) is refused naming the entry, and so is an ALPHA whose product with a
// finite direction leaves float32's range; nothing becomes an inf or nan action.
TEST(InterventionPlan, SteeringRefusesWhatWouldPutInfInTheStream) {
  const std::string path = testing::TempDir() + "/overflowing.json";
  {
    std::ofstream f(path);
    f << R"({"direction": [)";
    for (int i = 0; i < 16; ++i) f << (i ? ", " : "") << (i == 7 ? "3e39" : "0.5");
    f << "]}";
  }
  CheckpointInfo info;
  info.variant.hidden = 16;
  try {
    read_direction(path, info);
    ADD_FAILURE() << "a direction beyond float32 was read";
  } catch (const UsageError& e) {
    EXPECT_THAT(std::string(e.what()), testing::AllOf(testing::HasSubstr(": direction[7] is 3e+39"),
                                                      testing::HasSubstr("beyond float32")));
  }

  const auto c = small_variant("dt");
  InterventionSources sources;
  sources.directions["d"] = torch::full({16}, 1e10f);
  EXPECT_NO_THROW(InterventionPlan({parse_intervention("steer:2=1e20*d")}, c, sources));
  try {
    InterventionPlan({parse_intervention("steer:2=1e30*d")}, c, sources);
    ADD_FAILURE() << "an ALPHA that overflows the stream was accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(std::string(e.what()), testing::HasSubstr("beyond float32"));
  }
}

}  // namespace
}  // namespace dstudio::models
