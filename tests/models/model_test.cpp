// Every variant: causality, inspection that changes nothing, attention rows that sum to 1, the
// papers' operators against naive loops, and gradients that lower the loss.

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "dstudio/analysis/locality.h"
#include "dstudio/common/error.h"
#include "dstudio/models/decision_model.h"
#include "dstudio/models/windows.h"

namespace dstudio::models {
namespace {

constexpr int kS = 3, kA = 2, kK = 5, kB = 2;

struct Named {
  std::string label;
  VariantConfig config;
};

std::vector<Named> all_variants() {
  std::vector<Named> out;
  for (const auto& name : variant_names()) {
    if (name == "hier") continue;
    out.push_back({name, make_variant(name)});
  }
  for (const std::string merger : {"none", "concat", "attention", "conv", "pooling"})
    for (const std::string mixer : {"none", "attention", "linear-attention", "conv", "pooling"})
      out.push_back({"hier-" + merger + "-" + mixer, make_variant("hier", merger, mixer)});
  for (auto& v : out) {
    v.config.state_dim = kS;
    v.config.act_dim = kA;
    v.config.context_length = kK;
    v.config.hidden = 16;
    v.config.layers = 2;
    v.config.max_ep_len = 50;
  }
  return out;
}

ModelInputs random_inputs(std::uint64_t seed) {
  torch::manual_seed(seed);
  ModelInputs in;
  in.states = torch::randn({kB, kK, kS});
  in.actions = torch::randn({kB, kK, kA}).tanh();
  in.returns_to_go = torch::randn({kB, kK, 1});
  in.timesteps = torch::arange(kK).unsqueeze(0).repeat({kB, 1}) + 3;
  in.mask = torch::ones({kB, kK});
  return in;
}

void PrintTo(const Named& n, std::ostream* os) {
  *os << n.label;
}

class EveryVariant : public testing::TestWithParam<Named> {};

TEST_P(EveryVariant, AFutureTokenNeverChangesAnEarlierOutput) {
  torch::manual_seed(1);
  DecisionModel model(GetParam().config);
  model->eval();
  torch::NoGradGuard no_grad;
  const auto in = random_inputs(2);
  const auto base = model->forward(in);
  ASSERT_EQ(base.sizes(), (std::vector<int64_t>{kB, kK, kA}));
  for (int j = 0; j < kK; ++j) {
    // State and return-to-go at step j may change outputs from j on, never before.
    auto changed = in;
    changed.states = in.states.clone();
    changed.states.select(1, j).add_(3.0);
    changed.returns_to_go = in.returns_to_go.clone();
    changed.returns_to_go.select(1, j).add_(3.0);
    auto out = model->forward(changed);
    if (j > 0) {
      EXPECT_TRUE(torch::allclose(out.narrow(1, 0, j), base.narrow(1, 0, j), 0, 1e-6))
          << "step " << j;
    }
    // The action a_j is what is predicted at j: it may only change later outputs.
    changed = in;
    changed.actions = in.actions.clone();
    changed.actions.select(1, j).add_(-0.5);
    out = model->forward(changed);
    EXPECT_TRUE(torch::allclose(out.narrow(1, 0, j + 1), base.narrow(1, 0, j + 1), 0, 1e-6))
        << "action " << j;
  }
}

// act() computes only the last position in the last block; it must agree with the full pass,
// with padded windows too, and under modality zeroing.
TEST_P(EveryVariant, ActEqualsTheLastPositionOfTheFullPass) {
  torch::manual_seed(4);
  DecisionModel model(GetParam().config);
  model->eval();
  torch::NoGradGuard no_grad;
  auto in = random_inputs(5);
  in.mask = torch::ones({kB, kK});
  in.mask.index_put_({1, torch::indexing::Slice(0, 2)}, 0.0);
  for (const auto zeroing : {ModalityZeroing::None, ModalityZeroing::ReturnsToGo}) {
    const auto full = model->forward(in, nullptr, zeroing).select(1, kK - 1);
    const auto last = model->act(in, zeroing);
    ASSERT_EQ(last.sizes(), full.sizes());
    EXPECT_TRUE(torch::allclose(last, full, 1e-5, 1e-6)) << (last - full).abs().max().item<float>();
  }
}

TEST_P(EveryVariant, InspectionNeverChangesThePrediction) {
  torch::manual_seed(1);
  DecisionModel model(GetParam().config);
  model->eval();
  torch::NoGradGuard no_grad;
  const auto in = random_inputs(3);
  Inspection inspection;
  const auto plain = model->forward(in);
  const auto inspected = model->forward(in, &inspection);
  EXPECT_TRUE(torch::equal(plain, inspected));
  const auto& c = GetParam().config;
  if (c.tokenizer == Tokenizer::State) return;
  ASSERT_EQ(static_cast<int>(inspection.mixing.size()), c.layers);
  const int64_t T = c.tokens();
  for (const auto& m : inspection.mixing) {
    ASSERT_EQ(m.dim(), 4);
    EXPECT_EQ(m.size(0), kB);
    EXPECT_EQ(m.size(2), T);
    EXPECT_EQ(m.size(3), T);
    // Every mixer is causal: nothing above the diagonal.
    EXPECT_EQ(m.triu(1).abs().max().item<float>(), 0.0f);
  }
  EXPECT_EQ(inspection.tokens.size(1), T);
  EXPECT_EQ(static_cast<int64_t>(inspection.token_types.size()), T);
}

TEST_P(EveryVariant, LocalityIsADistributionOverLags) {
  // What `dstudio analyze locality` computes, on every variant's inspection: per layer, shares
  // over lags 0 .. K-1 that sum to 1; a mixer with a fixed window has nothing beyond it.
  const auto& c = GetParam().config;
  if (c.tokenizer == Tokenizer::State) return;
  torch::manual_seed(2);
  DecisionModel model(c);
  model->eval();
  CheckpointInfo info;
  info.variant = c;
  info.state_mean.assign(kS, 0.0f);
  info.state_std.assign(kS, 1.0f);
  std::vector<Window> windows(2);
  for (auto& w : windows) {
    w = Window{kK,
               kS,
               kA,
               0,
               7,
               std::vector<float>(kK * kS, 0.3f),
               std::vector<float>(kK * kA, 0.1f),
               std::vector<float>(kK, 100.0f),
               {3, 4, 5, 6, 7},
               std::vector<float>(kK, 1.0f)};
    w.states[1] = -0.7f;
  }
  windows[1].mask[0] = 0.0f;  // a padded first step
  const auto profiles = analysis::layer_lag_profiles(inspect_windows(*model, info, windows));
  ASSERT_EQ(static_cast<int>(profiles.size()), c.layers);
  for (const auto& p : profiles) {
    ASSERT_EQ(p.weight.size(), static_cast<size_t>(kK));
    double total = 0.0;
    for (double w : p.weight) {
      EXPECT_GE(w, 0.0);
      total += w;
    }
    EXPECT_NEAR(total, 1.0, 1e-5);
    EXPECT_GE(p.mean_lag(), 0.0);
    EXPECT_LE(p.mean_lag(), kK - 1.0);
    EXPECT_LE(p.mass_within(1), 1.0 + 1e-9);
  }
  // Pooling over two tokens reaches one step back at most.
  if (c.mixer == "pooling" && c.pool_size <= 2) {
    for (const auto& p : profiles) EXPECT_NEAR(p.mass_within(1), 1.0, 1e-6);
  }
}

TEST_P(EveryVariant, AFewOptimiserStepsLowerTheLoss) {
  torch::manual_seed(4);
  auto config = GetParam().config;
  config.dropout = 0.0;
  config.attention_dropout = 0.0;
  DecisionModel model(config);
  const auto in = random_inputs(5);
  torch::optim::AdamW optimiser(model->parameters(), torch::optim::AdamWOptions(1e-3));
  auto loss_of = [&] { return torch::mse_loss(model->forward(in), in.actions); };
  const double first = loss_of().item<double>();
  for (int i = 0; i < 100; ++i) {
    optimiser.zero_grad();
    auto loss = loss_of();
    loss.backward();
    optimiser.step();
  }
  EXPECT_LT(loss_of().item<double>(), 0.7 * first);
}

std::string VariantName(const testing::TestParamInfo<Named>& param) {
  std::string n = param.param.label;
  for (auto& ch : n)
    if (ch == '-') ch = '_';
  return n;
}

// The training form hides the fields a configuration does not use (uses_field). Hidden must mean
// harmless: changing such a field leaves the model's parameters and its outputs (in training
// mode, so that dropout shows) exactly as they were; a field shown changes them.
TEST_P(EveryVariant, AFieldTheFormHidesChangesNothingTheModelComputes) {
  const auto& base = GetParam().config;
  const auto run = [](const VariantConfig& c) {
    torch::manual_seed(7);
    DecisionModel model(c);
    model->train();
    torch::NoGradGuard no_grad;
    const auto in = random_inputs(3);
    torch::manual_seed(8);
    int64_t count = 0;
    for (const auto& p : model->parameters()) count += p.numel();
    return std::make_pair(count, model->forward(in));
  };
  const auto [base_count, base_out] = run(base);
  const std::vector<std::pair<std::string, std::string>> changes = {
      {"heads", base.heads == 2 ? R"({"heads": 4})" : R"({"heads": 2})"},
      {"attention_dropout", R"({"attention_dropout": 0.5})"},
      {"merger",
       base.merger == Merger::Pooling ? R"({"merger": "concat"})" : R"({"merger": "pooling"})"},
      {"return_embedding", R"({"return_embedding": 8})"},
      {"hybrid", base.hybrid ? R"({"hybrid": false})" : R"({"hybrid": true})"},
      {"conv_window", R"({"conv_window": 3})"},
      {"single_filter",
       base.single_filter ? R"({"single_filter": false})" : R"({"single_filter": true})"},
      {"mixer_projection",
       base.mixer_projection ? R"({"mixer_projection": false})" : R"({"mixer_projection": true})"},
      {"gaussian_w", R"({"gaussian_w": 0.7})"},
      {"gaussian_b", R"({"gaussian_b": -0.6})"},
      {"pool_size", R"({"pool_size": 3})"},
      {"gated_kernel", R"({"gated_kernel": 2})"},
  };
  for (const auto& [key, change] : changes) {
    const auto changed = with_overrides(base, change);
    const auto [count, out] = run(changed);
    const bool same = count == base_count && torch::equal(out, base_out);
    if (!uses_field(base, key)) {
      EXPECT_TRUE(same) << key << " is hidden but changes the model";
    } else {
      EXPECT_FALSE(same) << key << " is shown but changes nothing";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, EveryVariant, testing::ValuesIn(all_variants()), VariantName);

TEST(Attention, RowsSumToOneOverUnmaskedKeysAndPaddingIsIgnored) {
  for (const std::string name : {"dt", "gdt", "direct-attention", "udt"}) {
    auto c = make_variant(name);
    c.state_dim = kS, c.act_dim = kA, c.context_length = kK, c.hidden = 16, c.max_ep_len = 50;
    torch::manual_seed(6);
    DecisionModel model(c);
    model->eval();
    torch::NoGradGuard no_grad;
    auto in = random_inputs(7);
    in.mask[0][0] = 0;  // the first step of the first window is padding
    in.mask[0][1] = 0;
    Inspection inspection;
    model->forward(in, &inspection);
    const int per_step = c.tokenizer == Tokenizer::Triplet ? 3 : 1;
    for (const auto& m : inspection.mixing) {
      auto sums = m.sum(-1);
      EXPECT_TRUE(torch::allclose(sums, torch::ones_like(sums), 1e-5, 1e-5)) << name;
      // Queries on real steps give padded keys no weight.
      const int first_real = 2 * per_step;
      auto to_padding = m[0].narrow(1, first_real, m.size(2) - first_real).narrow(2, 0, first_real);
      EXPECT_LT(to_padding.abs().max().item<float>(), 1e-6f) << name;
    }
  }
}

TEST(Operators, ConvolutionIsEquationFourOfDecisionConvFormer) {
  torch::manual_seed(8);
  const int64_t B = 2, T = 9, H = 4, L = 6;
  auto x = torch::randn({B, T, H});
  for (int64_t types : {3, 1}) {
    auto w = torch::randn({types, H, L});
    auto bias = torch::randn({types, H});
    auto fast = type_convolution(x, w, bias);
    auto slow = torch::zeros({B, T, H});
    for (int64_t b = 0; b < B; ++b)
      for (int64_t p = 0; p < T; ++p)
        for (int64_t q = 0; q < H; ++q) {
          const int64_t type = types == 3 ? p % 3 : 0;
          double sum = bias[type][q].item<double>();
          for (int64_t l = 0; l < L; ++l)
            if (p - l >= 0) sum += w[type][q][l].item<double>() * x[b][p - l][q].item<double>();
          slow[b][p][q] = sum;
        }
    EXPECT_TRUE(torch::allclose(fast, slow, 1e-5, 1e-5)) << types << " filters";
  }
}

TEST(Operators, GaussianBiasIsEquationSixOfGdt) {
  const auto bias = gaussian_bias(7, 0.1, -0.05);
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 7; ++j) {
      const double d = std::abs(i - j);
      const double expected = -std::abs(0.1 * d * d - 0.05);
      EXPECT_NEAR(bias[i][j].item<double>(), expected, 1e-6 * std::max(1.0, std::abs(expected)));
    }
  // With Q = K = 0 the attention is softmax of the bias over the causal keys.
  auto c = make_variant("gdt");
  c.state_dim = kS, c.act_dim = kA, c.context_length = 3, c.hidden = 16, c.layers = 1,
  c.max_ep_len = 50;
  DecisionModel model(c);
  model->eval();
  torch::NoGradGuard no_grad;
  for (auto& item : model->named_parameters())
    if (item.key().find("qkv") != std::string::npos) item.value().zero_();
  auto in = random_inputs(9);
  in.states = in.states.narrow(1, 0, 3), in.actions = in.actions.narrow(1, 0, 3);
  in.returns_to_go = in.returns_to_go.narrow(1, 0, 3), in.timesteps = in.timesteps.narrow(1, 0, 3),
  in.mask = in.mask.narrow(1, 0, 3);
  Inspection inspection;
  model->forward(in, &inspection);
  const auto expected = torch::softmax(
      gaussian_bias(9, 0.1, -0.05).masked_fill(torch::ones({9, 9}, torch::kBool).triu(1), -1e9),
      -1);
  EXPECT_TRUE(torch::allclose(inspection.mixing[0][0][0], expected, 1e-5, 1e-6));
}

TEST(Operators, PoolingIsTheMeanOfTheLastPTokens) {
  const auto m = pooling_matrix(5, 2);
  const float expected[5][5] = {
      {1, 0, 0, 0, 0}, {.5, .5, 0, 0, 0}, {0, .5, .5, 0, 0}, {0, 0, .5, .5, 0}, {0, 0, 0, .5, .5}};
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j) EXPECT_FLOAT_EQ(m[i][j].item<float>(), expected[i][j]);
  const auto three = pooling_matrix(4, 3);
  EXPECT_FLOAT_EQ(three[1][0].item<float>(), 0.5f);
  EXPECT_FLOAT_EQ(three[3][1].item<float>(), 1.0f / 3.0f);
}

// What inspection returns for DHi's pooling mixer (P = 3 here) is exactly the formula: row i
// averages tokens max(0, i - 2)..i.
TEST(Operators, DhiInspectionReturnsThePoolingFormula) {
  auto c = make_variant("dhi");
  c.state_dim = kS;
  c.act_dim = kA;
  c.context_length = kK;
  c.hidden = 16;
  c.layers = 2;
  c.max_ep_len = 50;
  c.pool_size = 3;
  torch::manual_seed(2);
  DecisionModel model(c);
  model->eval();
  torch::NoGradGuard no_grad;
  Inspection inspection;
  model->forward(random_inputs(6), &inspection);
  for (const auto& m : inspection.mixing) {
    ASSERT_EQ(m.size(2), kK);
    for (int64_t b = 0; b < kB; ++b)
      for (int i = 0; i < kK; ++i)
        for (int j = 0; j < kK; ++j) {
          const int first = std::max(0, i - 2);
          const float expected =
              j >= first && j <= i ? 1.0f / static_cast<float>(i - first + 1) : 0.0f;
          EXPECT_FLOAT_EQ(m[b][0][i][j].item<float>(), expected);
        }
  }
}

TEST(Zeroing, RemovesExactlyTheChosenModality) {
  const auto in = random_inputs(10);
  auto z = apply_zeroing(in, ModalityZeroing::ReturnsToGo);
  EXPECT_EQ(z.returns_to_go.abs().sum().item<float>(), 0.0f);
  EXPECT_TRUE(torch::equal(z.states, in.states));
  z = apply_zeroing(in, ModalityZeroing::PastStates);
  EXPECT_EQ(z.states.narrow(1, 0, kK - 1).abs().sum().item<float>(), 0.0f);
  EXPECT_TRUE(torch::equal(z.states.select(1, kK - 1), in.states.select(1, kK - 1)));
  z = apply_zeroing(in, ModalityZeroing::Actions);
  EXPECT_EQ(z.actions.abs().sum().item<float>(), 0.0f);
  EXPECT_TRUE(torch::equal(z.returns_to_go, in.returns_to_go));
}

TEST(VariantConfig, JsonRoundTripAndClearErrors) {
  for (const auto& name : variant_names()) {
    auto c = make_variant(name);
    c.state_dim = 11, c.act_dim = 3;
    EXPECT_EQ(variant_from_json(to_json(c)), c) << name;
  }
  EXPECT_EQ(make_variant("dc").context_length, 8);
  EXPECT_EQ(make_variant("gdt").heads, 2);
  EXPECT_EQ(make_variant("dhi").pool_size, 2);
  EXPECT_THROW(make_variant("decision-mamba"), dstudio::UsageError);
  EXPECT_THROW(make_variant("hier", "sum", "pooling"), dstudio::UsageError);
  EXPECT_THROW(with_overrides(make_variant("dt"), R"({"hiden": 64})"), dstudio::UsageError);
  EXPECT_THROW(with_overrides(make_variant("dt"), R"({"hidden": 100, "heads": 3})"),
               dstudio::UsageError);
  EXPECT_THROW(with_overrides(make_variant("dt"), R"({"hidden": "big"})"), dstudio::UsageError);
  EXPECT_EQ(with_overrides(make_variant("dt"), R"({"hidden": 64})").hidden, 64);
}

// Dropout from a stream: exactly 0 or 1 / (1 - p), about a fraction p dropped, the same masks
// from the same stream state, others after it advances; off in eval mode.
TEST(Dropout, StreamMasksAreInvertedReproducibleAndAdvance) {
  Dropout dropout(0.25);
  dropout->train();
  const auto x = torch::ones({200, 100});
  RandomStream stream{12345, 0};
  torch::Tensor first, second, replay;
  {
    DropoutStreamScope scope(stream);
    first = dropout->forward(x);
    second = dropout->forward(x);
  }
  EXPECT_EQ(stream.counter, 20000u);  // two draws of 10,000 words (two values per word)
  const auto kept = (first != 0).to(torch::kFloat);
  EXPECT_TRUE(torch::equal(first * kept, kept * (1.0f / 0.75f)));
  EXPECT_NEAR(kept.mean().item<double>(), 0.75, 0.01);
  EXPECT_FALSE(torch::equal(first, second));
  RandomStream again{12345, 0};
  {
    DropoutStreamScope scope(again);
    replay = dropout->forward(x);
  }
  EXPECT_TRUE(torch::equal(first, replay));
  dropout->eval();
  EXPECT_TRUE(torch::equal(dropout->forward(x), x));
}

}  // namespace
}  // namespace dstudio::models
