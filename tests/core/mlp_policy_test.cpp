// D4RL's Adroit expert policies: the shipped DAPG policies against the mean actions mjrl's own code
// computes (tests/data/dapg-golden.json, written by packaging/convert-dapg-policies.py), mjrl's
// formula on a policy small enough to work out by hand, sampling, the messages for damaged files,
// and base64 against RFC 4648's vectors.

#include "dstudio/behaviour/mlp_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>

#include "dstudio/common/base64.h"
#include "dstudio/common/error.h"
#include "dstudio/common/random.h"
#include "dstudio/common/resources.h"

namespace dstudio::behaviour {
namespace {

using testing::HasSubstr;
using testing::ThrowsMessage;

nlohmann::json golden() {
  std::ifstream in(std::filesystem::path(DSTUDIO_TEST_DATA) / "dapg-golden.json");
  EXPECT_TRUE(in) << "tests/data/dapg-golden.json cannot be read";
  return nlohmann::json::parse(in);
}

std::string shipped_text(const std::string& task) {
  const auto text = embedded_resource("policies/" + task + "-dapg.json");
  EXPECT_TRUE(text.has_value()) << task;
  return std::string(text.value_or(""));
}

std::vector<float> as_floats(const nlohmann::json& values) {
  std::vector<float> out;
  for (const auto& v : values) out.push_back(static_cast<float>(v.get<double>()));
  return out;
}

std::string float_base64(const std::vector<float>& values) {
  std::vector<std::uint8_t> bytes;
  for (float v : values) {
    const auto u = std::bit_cast<std::uint32_t>(v);
    for (int k = 0; k < 4; ++k) bytes.push_back(static_cast<std::uint8_t>(u >> (8 * k)));
  }
  return base64_encode(bytes);
}

TEST(DapgPolicy, ShippedPoliciesGiveTheMeanActionsOfMjrl) {
  const auto g = golden();
  ASSERT_EQ(g.at("tasks").size(), 4u);
  for (const auto& t : g.at("tasks")) {
    const std::string task = t.at("task");
    const auto policy = shipped_dapg_policy(task);
    // mjrl's log_std, exactly: the converter keeps every float32.
    EXPECT_EQ(policy.log_std, as_floats(t.at("log_std"))) << task;
    ASSERT_EQ(t.at("cases").size(), 3u);
    double worst = 0.0;
    for (const auto& c : t.at("cases")) {
      const auto obs = as_floats(c.at("observation"));
      const auto expected = as_floats(c.at("mean_action"));
      ASSERT_EQ(obs.size(), static_cast<std::size_t>(policy.obs_dim)) << task;
      ASSERT_EQ(expected.size(), static_cast<std::size_t>(policy.act_dim)) << task;
      std::vector<float> action(expected.size()), mean(expected.size()), log_std(expected.size());
      policy.act(obs, action);
      policy.distribution(obs, mean, log_std);
      EXPECT_EQ(action, mean) << task;
      EXPECT_EQ(log_std, policy.log_std) << task;
      for (std::size_t j = 0; j < expected.size(); ++j) {
        EXPECT_NEAR(action[j], expected[j], 1e-5) << task << " action " << j;
        worst = std::max(worst, std::abs(static_cast<double>(action[j]) - expected[j]));
      }
    }
    std::cout << task << ": largest difference from mjrl " << worst << "\n";
  }
}

TEST(DapgPolicy, ShippedPoliciesFitTheirTasks) {
  struct Sizes {
    std::string task;
    int obs, act, hidden;
  };
  for (const auto& s : {Sizes{"pen", 45, 24, 64}, Sizes{"door", 39, 28, 32},
                        Sizes{"hammer", 46, 26, 32}, Sizes{"relocate", 39, 30, 32}}) {
    const auto p = shipped_dapg_policy(s.task);
    EXPECT_EQ(p.task, s.task);
    EXPECT_EQ(p.obs_dim, s.obs);
    EXPECT_EQ(p.act_dim, s.act);
    EXPECT_EQ(p.nonlinearity, "tanh");
    ASSERT_EQ(p.layers.size(), 3u) << s.task;
    EXPECT_EQ(p.layers[0].out, s.hidden);
    EXPECT_EQ(p.layers[1].out, s.hidden);
    EXPECT_EQ(p.layers[2].out, s.act);
    EXPECT_THAT(p.source, HasSubstr("aravindr93/hand_dapg@9a1de23df6574e1b94e1da742e3326eb1f61c013:"
                                    "dapg/policies/" +
                                    s.task + "-v0.pickle"));
    EXPECT_THAT(p.source, HasSubstr("Apache-2.0"));
    // mjrl clamps log_std at min_log_std = -3 when it sets parameters.
    for (float v : p.log_std) EXPECT_TRUE(v >= -3.0f && v < 0.0f) << s.task << " " << v;
  }
  // A dataset's name finds its task's policy.
  EXPECT_EQ(shipped_dapg_policy("door-expert-v1"), shipped_dapg_policy("door"));
  EXPECT_THAT([] { shipped_dapg_policy("hopper"); },
              ThrowsMessage<Error>(HasSubstr("no DAPG expert policy ships for hopper")));
}

// One hidden layer of two units, every number chosen so the result can be worked out by hand.
MlpPolicy tiny(const std::string& nonlinearity) {
  MlpPolicy p;
  p.task = "tiny";
  p.obs_dim = 2;
  p.act_dim = 1;
  p.nonlinearity = nonlinearity;
  p.in_shift = {1.0f, -2.0f};
  // 1e-8 is as small as mjrl's epsilon: the input is divided by 2e-8, not by 1e-8.
  p.in_scale = {0.5f, 1e-8f};
  p.out_shift = {0.25f};
  p.out_scale = {4.0f};
  p.layers = {{2, 2, {0.5f, 0.0f, -1.0f, 1e-8f}, {0.0f, 2.0f}}, {2, 1, {1.0f, 2.0f}, {-0.5f}}};
  p.log_std = {std::log(0.5f)};
  p.validate();
  return p;
}

TEST(DapgPolicy, MeanIsMjrlsFormulaWorkedOutByHand) {
  const std::vector<float> obs = {2.0f, -1.98f};
  // x = ((2 - 1) / (0.5 + 1e-8), (-1.98 + 2) / (1e-8 + 1e-8)) in float32.
  const float x0 = 1.0f / (0.5f + 1e-8f);
  const float x1 = (-1.98f + 2.0f) / 2e-8f;
  for (const std::string nl : {"tanh", "relu"}) {
    const auto p = tiny(nl);
    const auto f = [&](double v) { return nl == "tanh" ? std::tanh(v) : std::max(v, 0.0); };
    const double h0 = f(0.5 * x0),
                 h1 = f(-1.0 * x0 + double{1e-8f} * double{x1} + 2.0);  // 0.01 > 0
    const double expected = (h0 + 2.0 * h1 - 0.5) * 4.0 + 0.25;
    float action = 0.0f;
    p.act(obs, {&action, 1});
    EXPECT_NEAR(action, expected, 1e-6) << nl;
  }
}

TEST(DapgPolicy, SampleIsTheMeanPlusExpLogStdTimesOneNormalEach) {
  const auto p = shipped_dapg_policy("door");
  const auto g = golden();
  const auto obs = as_floats(g.at("tasks")[1].at("cases")[0].at("observation"));
  ASSERT_EQ(g.at("tasks")[1].at("task"), "door");
  const auto n = static_cast<std::size_t>(p.act_dim);
  std::vector<float> mean(n), action(n);
  p.act(obs, mean);

  // Exactly mjrl's get_action: one standard normal per action, in order, scaled by exp(log_std).
  Random random(11), same(11);
  for (int draw = 0; draw < 3; ++draw) {
    p.sample(obs, action, random);
    for (std::size_t j = 0; j < n; ++j)
      EXPECT_EQ(action[j],
                static_cast<float>(mean[j] + std::exp(double{p.log_std[j]}) * same.normal()));
  }

  // And over many draws: the sample mean and spread are the policy's mean and exp(log_std).
  constexpr int kDraws = 200000;
  std::vector<double> sum(n, 0.0), sum2(n, 0.0);
  Random stream(3);
  for (int k = 0; k < kDraws; ++k) {
    p.sample(obs, action, stream);
    for (std::size_t j = 0; j < n; ++j) {
      const double d = action[j] - mean[j];
      sum[j] += d;
      sum2[j] += d * d;
    }
  }
  for (std::size_t j = 0; j < n; ++j) {
    const double sigma = std::exp(double{p.log_std[j]});
    const double m = sum[j] / kDraws, sd = std::sqrt(sum2[j] / kDraws - m * m);
    EXPECT_NEAR(m, 0.0, 5.0 * sigma / std::sqrt(double{kDraws})) << "action " << j;
    EXPECT_NEAR(sd / sigma, 1.0, 5.0 / std::sqrt(2.0 * kDraws)) << "action " << j;
  }
}

// The door policy's file with `change` applied, read back.
MlpPolicy door_changed(const std::function<void(nlohmann::json&)>& change) {
  auto j = nlohmann::json::parse(shipped_text("door"));
  change(j);
  return mlp_policy_from_json_text(j.dump(), "door-dapg.json");
}

TEST(DapgPolicy, DamagedFilesAreRefusedSayingWhereAndWhat) {
  const auto refused = [](const std::function<void(nlohmann::json&)>& change,
                          const std::string& message) {
    EXPECT_THAT([&] { door_changed(change); },
                ThrowsMessage<Error>(HasSubstr("door-dapg.json: " + message)));
  };
  EXPECT_EQ(door_changed([](nlohmann::json&) {}), shipped_dapg_policy("door"));
  EXPECT_THAT([] { mlp_policy_from_json_text("{\"format\": ", "door-dapg.json"); },
              ThrowsMessage<Error>(HasSubstr("door-dapg.json: not JSON")));
  refused([](auto& j) { j["format"] = "dstudio-sac-policies-1"; },
          "not an MLP policy: \"format\" is \"dstudio-sac-policies-1\", expected "
          "\"dstudio-mlp-policy-1\"");
  refused([](auto& j) { j.erase("log_std"); }, "no \"log_std\"");
  refused([](auto& j) { j["nonlinearity"] = "sigmoid"; },
          "the nonlinearity \"sigmoid\" is neither tanh nor relu");
  refused([](auto& j) { j["obs_dim"] = 0; }, "\"obs_dim\" is not a whole number");
  // Sizes that disagree.
  refused([](auto& j) { j["in_shift"].erase(38); },
          "in_shift has 38 values, expected obs_dim = 39");
  refused([](auto& j) { j["act_dim"] = 27; }, "out_shift has 28 values, expected act_dim = 27");
  refused([](auto& j) { j["layers"][0]["bias"] = float_base64(std::vector<float>(31, 0.0f)); },
          "layer 0 bias holds 124 bytes, expected 32 float32 = 128");
  refused(
      [](auto& j) {
        j["layers"][1]["in"] = 31;
        j["layers"][1]["weight"] = float_base64(std::vector<float>(31 * 32, 0.0f));
      },
      "layer 1 takes 31 inputs, but layer 0 gives 32");
  refused([](auto& j) { j["layers"].erase(2); },
          "the last layer gives 32 outputs, but act_dim is 28");
  refused([](auto& j) { j["layers"][0]["weight"] = "AAA*"; },
          "layer 0 weight: a character that is not base64: '*'");
  // Numbers that are not finite, in the text (too large for a float) and in the bytes.
  refused([](auto& j) { j["in_scale"][3] = 1e39; }, "in_scale[3] is not finite");
  refused(
      [](auto& j) {
        std::vector<float> bias(28, 0.0f);
        bias[5] = std::numeric_limits<float>::quiet_NaN();
        j["layers"][2]["bias"] = float_base64(bias);
      },
      "layer 2 bias[5] is not finite");
  // A scale the observation is divided by.
  refused([](auto& j) { j["in_scale"][2] = 0.0; },
          "in_scale[2] is 0, and the observation is divided by it");
  // An observation of another size.
  const auto small = tiny("tanh");
  std::vector<float> obs(3), action(1);
  EXPECT_THAT([&] { small.act(obs, action); },
              ThrowsMessage<Error>(HasSubstr("takes 2 observations")));
}

TEST(Base64, RfcVectorsAndEveryLengthRoundTrip) {
  const std::pair<std::string, std::string> rfc4648[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : rfc4648) {
    const std::vector<std::uint8_t> bytes(plain.begin(), plain.end());
    EXPECT_EQ(base64_encode(bytes), encoded);
    EXPECT_EQ(base64_decode(encoded), bytes);
  }
  Random random(1);
  for (std::size_t n = 0; n < 64; ++n) {
    std::vector<std::uint8_t> bytes(n);
    for (auto& b : bytes) b = static_cast<std::uint8_t>(random.below(256));
    EXPECT_EQ(base64_decode(base64_encode(bytes)), bytes) << n;
  }
  EXPECT_THAT([] { base64_decode("Zm9"); }, ThrowsMessage<Error>(HasSubstr("multiple of 4")));
  EXPECT_THAT([] { base64_decode("Zg==Zm9v"); }, ThrowsMessage<Error>(HasSubstr("padding")));
}

}  // namespace
}  // namespace dstudio::behaviour
