// Stochastic behaviour policies: half precision against the compiler's own conversion, the
// policy's forward pass against a plain double-precision reference, exact file round trips,
// policy sets, and datasets generated from them.

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "dstudio/behaviour/ars.h"
#include "dstudio/behaviour/default_datasets.h"
#include "dstudio/behaviour/demonstrations.h"
#include "dstudio/behaviour/gaussian_policy.h"
#include "dstudio/behaviour/generate.h"
#include "dstudio/behaviour/policy_set.h"
#include "dstudio/common/error.h"
#include "dstudio/common/resources.h"
#include "dstudio/data/dataset.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/env/environment.h"
#include "h5_fixture.h"

namespace dstudio::behaviour {
namespace {

std::uint16_t reference_half(float f) {
  const auto h = static_cast<_Float16>(f);  // GCC's correctly rounded conversion
  std::uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}

TEST(HalfPrecision, EveryHalfValueRoundTripsExactly) {
  for (std::uint32_t u = 0; u < 65536; ++u) {
    const auto h = static_cast<std::uint16_t>(u);
    const bool nan = ((h >> 10) & 0x1F) == 0x1F && (h & 0x3FF) != 0;
    const float f = half_to_float(h);
    if (nan) {
      EXPECT_TRUE(std::isnan(f));
      continue;
    }
    _Float16 ref;
    std::memcpy(&ref, &h, 2);
    ASSERT_EQ(f, static_cast<float>(ref)) << std::hex << u;
    ASSERT_EQ(float_to_half(f), h) << std::hex << u;
  }
}

TEST(HalfPrecision, RoundsLikeTheCompilerOnEveryKindOfFloat) {
  Random random(5);
  int checked = 0;
  for (int k = 0; k < 2'000'000; ++k) {
    // Random bit patterns cover subnormals, ties, overflow and infinities.
    const auto bits = static_cast<std::uint32_t>(random.next());
    float f;
    std::memcpy(&f, &bits, 4);
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_half(f), reference_half(f)) << std::hexfloat << f;
    ++checked;
  }
  for (float f : {0.0f, -0.0f, 65504.0f, 65519.99f, 65520.0f, 0x1p-24f, 0x1p-25f, 0x1.000002p-25f,
                  0x1.8p-24f, 0x1p-14f, 1.0f + 0x1p-11f, 1.0f + 0x3p-11f, -2.5e-8f})
    EXPECT_EQ(float_to_half(f), reference_half(f)) << std::hexfloat << f;
  EXPECT_GT(checked, 1'900'000);
}

GaussianPolicy random_policy(int obs, int act, std::vector<int> hidden, std::uint64_t seed,
                             double scale = 0.5) {
  auto p = zero_gaussian_policy(obs, act, hidden);
  Random r(seed);
  for (auto& l : p.layers) {
    for (auto& w : l.weight) w = static_cast<float>(scale * r.normal());
    for (auto& b : l.bias) b = static_cast<float>(0.1 * r.normal());
  }
  return p;
}

// The MLP in double with weights indexed as (out, in), written independently of the policy.
std::vector<double> reference_outputs(const GaussianPolicy& p, const std::vector<float>& obs) {
  std::vector<double> x(obs.begin(), obs.end());
  for (std::size_t k = 0; k < p.layers.size(); ++k) {
    const auto& l = p.layers[k];
    std::vector<double> y(static_cast<std::size_t>(l.out));
    for (int o = 0; o < l.out; ++o) {
      double v = l.bias[o];
      for (int i = 0; i < l.in; ++i)
        v += static_cast<double>(l.weight[static_cast<std::size_t>(i) * l.out + o]) * x[i];
      y[o] = k + 1 < p.layers.size() ? std::max(v, 0.0) : v;
    }
    x = y;
  }
  return x;
}

TEST(GaussianPolicy, ActsAndSamplesAsTheTanhGaussianOfItsNetwork) {
  const auto p = random_policy(11, 3, {32, 32}, 1);
  Random inputs(2);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<float> obs(11);
    for (auto& o : obs) o = static_cast<float>(inputs.normal());
    const auto out = reference_outputs(p, obs);
    std::vector<float> action(3), sampled(3);
    p.act(obs, action);
    Random noise(100 + trial), same(100 + trial);
    p.sample(obs, sampled, noise);
    for (int j = 0; j < 3; ++j) {
      EXPECT_NEAR(action[j], std::tanh(out[j]), 1e-5);
      const double log_std = std::clamp(out[3 + j], -20.0, 2.0);
      EXPECT_NEAR(sampled[j], std::tanh(out[j] + std::exp(log_std) * same.normal()), 1e-5);
    }
  }
}

TEST(GaussianPolicy, LogStdIsClampedToItsBounds) {
  auto p = zero_gaussian_policy(2, 1, {4});
  p.layers.back().bias = {0.3f, 50.0f};  // log std far above 2
  std::vector<float> obs{0.0f, 0.0f}, mean(1), log_std(1);
  p.distribution(obs, mean, log_std);
  EXPECT_FLOAT_EQ(mean[0], 0.3f);
  EXPECT_FLOAT_EQ(log_std[0], kLogStdMax);
  p.layers.back().bias = {0.3f, -50.0f};
  p.distribution(obs, mean, log_std);
  EXPECT_FLOAT_EQ(log_std[0], kLogStdMin);
}

// The shipped ARS files, written by an earlier release: each reads and writes back byte for byte.
TEST(ArsRunFile, TheShippedFilesReadAndWriteBackUnchanged) {
  for (const char* name :
       {"policies/hopper.json", "policies/walker2d.json", "policies/halfcheetah.json"}) {
    SCOPED_TRACE(name);
    const auto text = embedded_resource(name);
    ASSERT_TRUE(text);
    const std::string file(*text);
    const auto run = behaviour::ars_run_from_json(file);
    EXPECT_FALSE(run.snapshots.empty());
    EXPECT_EQ(behaviour::to_json(run) + "\n", file);
  }
  // A wrong value is named by its key, inside the nesting.
  std::string text(*embedded_resource("policies/hopper.json"));
  const auto at = text.find("\"directions\": ");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 14, "\"directions\": -");
  EXPECT_THAT([&] { (void)behaviour::ars_run_from_json(text); },
              testing::ThrowsMessage<dstudio::Error>(
                  testing::HasSubstr("behaviour-policy file: ars: directions must be at least 1")));
}

TEST(GaussianPolicy, JsonRoundTripIsExactOnceRoundedToHalf) {
  auto p = random_policy(17, 6, {64, 64}, 3);
  round_to_half(p);
  const auto back = gaussian_policy_from_json_text(to_json_text(p));
  EXPECT_TRUE(back == p);
  // Rounding is idempotent and keeps the policy close.
  auto again = back;
  round_to_half(again);
  EXPECT_TRUE(again == back);
}

TEST(GaussianPolicy, BadFilesSayWhatIsWrong) {
  auto p = random_policy(3, 1, {4}, 4);
  round_to_half(p);
  auto text = to_json_text(p);
  EXPECT_THAT([&] { gaussian_policy_from_json_text("{}"); },
              testing::ThrowsMessage<dstudio::Error>(testing::HasSubstr("tanh-gaussian-mlp")));
  auto cut = text;
  cut.replace(cut.find("weight_f16\":\"") + 13, 4, "");  // four base64 characters fewer: 3 bytes
  EXPECT_THAT(
      [&] { gaussian_policy_from_json_text(cut); },
      testing::ThrowsMessage<dstudio::Error>(testing::HasSubstr("layers[0]: weight_f16 holds")));
  auto wrong = text;
  wrong.replace(wrong.find("\"in\":4"), 6, "\"in\":5");
  EXPECT_THAT([&] { gaussian_policy_from_json_text(wrong); },
              testing::ThrowsMessage<dstudio::Error>(testing::HasSubstr("layers[1]: ")));
  auto bad_char = text;
  bad_char[bad_char.find("bias_f16\":\"") + 11] = '*';
  EXPECT_THAT([&] { gaussian_policy_from_json_text(bad_char); },
              testing::ThrowsMessage<dstudio::Error>(testing::HasSubstr("not base64")));
}

// A SAC-style set for hopper whose policies act (almost) deterministically with a constant action
// of their own, so the source of every transition can be read off its action.
PolicySet constant_set() {
  PolicySet set;
  set.env = "hopper";
  set.algorithm = PolicyAlgorithm::Sac;
  set.random_steps = 1000;
  const float means[3] = {0.2f, -0.3f, 0.5f};
  const std::int64_t steps[3] = {3000, 5000, 9000};
  for (int k = 0; k < 3; ++k) {
    auto p = zero_gaussian_policy(11, 3, {8});
    p.layers.back().bias = {means[k], means[k], means[k], -20.0f, -20.0f, -20.0f};
    set.snapshots.push_back({steps[k], 0.0, 0.0, p});
  }
  set.replay = {0, 1};
  set.medium = 1;
  set.expert = 2;
  return set;
}

TEST(PolicySet, JsonRoundTripIsExact) {
  auto set = constant_set();
  set.snapshots[0].policy = [] {
    auto p = random_policy(11, 3, {16, 16}, 9);
    round_to_half(p);
    return p;
  }();
  set.snapshots[1].behaviour_return = 1234.5;
  for (auto& snapshot : set.snapshots) round_to_half(std::get<GaussianPolicy>(snapshot.policy));
  set.command = "dstudio behaviour sac --env hopper";
  const auto back = policy_set_from_text(to_json(set), 0.0);
  EXPECT_EQ(back.env, "hopper");
  EXPECT_EQ(back.random_steps, 1000);
  EXPECT_EQ(back.replay, set.replay);
  EXPECT_EQ(back.medium, 1);
  EXPECT_EQ(back.expert, 2);
  EXPECT_EQ(back.command, set.command);
  ASSERT_EQ(back.snapshots.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(back.snapshots[i].env_steps, set.snapshots[i].env_steps);
    EXPECT_EQ(back.snapshots[i].behaviour_return, set.snapshots[i].behaviour_return);
    EXPECT_TRUE(std::get<GaussianPolicy>(back.snapshots[i].policy) ==
                std::get<GaussianPolicy>(set.snapshots[i].policy));
  }
}

TEST(PolicySet, TheShippedSacPoliciesWriteBackAsTheyWereWritten) {
  for (const char* env : {"hopper", "halfcheetah", "walker2d", "ant-goal-reaching"}) {
    const auto text = embedded_resource(std::string("policies/") + env + "-sac.json");
    if (!text) continue;  // not every task ships SAC policies
    std::string written(*text);
    while (!written.empty() && written.back() == '\n') written.pop_back();
    EXPECT_EQ(to_json(policy_set_from_text(written, 0.0)), written) << env;
  }
  EXPECT_TRUE(embedded_resource("policies/hopper-sac.json"));
}

TEST(PolicySet, AWrongFieldIsNamedByItsPath) {
  auto set = constant_set();
  for (auto& snapshot : set.snapshots) round_to_half(std::get<GaussianPolicy>(snapshot.policy));
  const auto refusal = [](const nlohmann::json& j) -> std::string {
    try {
      (void)policy_set_from_text(j.dump(), 0.0);
    } catch (const dstudio::Error& e) {
      return e.what();
    }
    return "(read)";
  };
  const auto good = nlohmann::json::parse(to_json(set));
  auto j = good;
  j["snapshots"][1]["policy"]["layers"][0]["in"] = 0;
  EXPECT_THAT(refusal(j),
              testing::HasSubstr("snapshots[1]: policy: layers[0]: in must be at least 1"));
  j = good;
  j["snapshots"][0]["policy"]["layers"][0]["bias_f16"] = "AAAAAA==";
  EXPECT_THAT(
      refusal(j),
      testing::HasSubstr("snapshots[0]: policy: layers[0]: bias_f16 holds 2 values, expected"));
  j = good;
  j["snapshots"][2].erase("env_steps");
  EXPECT_THAT(refusal(j), testing::HasSubstr("snapshots[2]: no env_steps"));
  j = good;
  j["env"] = "hopperr";
  EXPECT_THAT(refusal(j), testing::HasSubstr("env: "));
  j = good;
  j["medium"] = 1.5;
  EXPECT_THAT(refusal(j), testing::HasSubstr("medium is not a whole number"));
  EXPECT_EQ(refusal(good), "(read)");
}

TEST(PolicySet, RefusesSetsThatDoNotFitTheirEnvironment) {
  auto set = constant_set();
  set.medium = 7;
  EXPECT_THAT([&] { set.validate(); }, testing::ThrowsMessage<dstudio::Error>(
                                           testing::HasSubstr("outside the 3 snapshots")));
  set = constant_set();
  set.env = "walker2d";
  EXPECT_THAT([&] { set.validate(); },
              testing::ThrowsMessage<dstudio::Error>(testing::HasSubstr("walker2d has 17 and 6")));
  EXPECT_THAT(
      [&] { policy_set_from_text("[1, 2]", 0.0); },
      testing::ThrowsMessage<dstudio::Error>(testing::HasSubstr("not a behaviour-policy file")));
  EXPECT_THAT(
      [&] {
        policy_set_from_text("{\"format\": \"dstudio-sac-policies-1\", \"env\": \"hopper\"}", 0.0);
      },
      testing::ThrowsMessage<dstudio::Error>(testing::HasSubstr("missing or wrong field")));
  EXPECT_THROW(parse_algorithm("ppo"), dstudio::UsageError);
}

TEST(PolicySet, ArsRunsActAsTheirLinearPolicyWithNoise) {
  const auto run = shipped_policies("hopper");
  const auto set = policy_set_from_ars(run, 0.05);
  EXPECT_EQ(set.algorithm, PolicyAlgorithm::Ars);
  std::vector<float> obs(11, 0.1f), a(3), b(3);
  Random r1(4), r2(4);
  set.act(set.medium, obs, a, r1);
  run.snapshots[run.medium].policy.act_noisy(obs, b, 0.05, r2);
  EXPECT_EQ(a, b);
  // Read from its file, the same.
  std::ifstream in(std::string(DSTUDIO_RESOURCES_DIR) + "/policies/hopper.json");
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  const auto read = policy_set_from_text(text, 0.05);
  EXPECT_EQ(read.snapshots.size(), run.snapshots.size());
  EXPECT_EQ(read.replay.size(), static_cast<std::size_t>(run.medium + 1));
}

TEST(PolicySet, EvaluationDoesNotDependOnTheThreadCount) {
  const auto set = policy_set_from_ars(shipped_policies("hopper"), 0.05);
  EXPECT_EQ(evaluate_snapshot(set, set.medium, 3, 7, true, 1),
            evaluate_snapshot(set, set.medium, 3, 7, true, 2));
}

GenerateConfig config(DatasetKind kind, std::int64_t n, int threads) {
  GenerateConfig c;
  c.env = "hopper";
  c.kind = kind;
  c.transitions = n;
  c.seed = 5;
  c.threads = threads;
  return c;
}

TEST(GenerateSac, MediumReplayIsTheWarmUpThenEachSnapshotForItsShareOfSteps) {
  const auto set = constant_set();
  const auto made = generate_dataset(config(DatasetKind::MediumReplay, 5000, 2), set);
  ASSERT_EQ(made.arrays.size(), 5000);
  // Shares 1000 (random) : 2000 (snapshot 0, steps 1000..3000) : 2000 (medium, 3000..5000).
  auto source = [&](std::int64_t t) {
    const float a = made.arrays.actions[static_cast<std::size_t>(t * 3)];
    if (std::abs(a - std::tanh(0.2f)) < 1e-6f) return 0;
    if (std::abs(a - std::tanh(-0.3f)) < 1e-6f) return 1;
    return -1;
  };
  std::int64_t first0 = -1, first1 = -1;
  for (std::int64_t t = 0; t < 5000; ++t) {
    const int s = source(t);
    if (s == 0 && first0 < 0) first0 = t;
    if (s == 1 && first1 < 0) first1 = t;
    if (first1 >= 0) {
      ASSERT_EQ(s, 1) << "row " << t << ": the medium segment is last";
    } else if (first0 >= 0) {
      ASSERT_EQ(s, 0) << "row " << t;
    }
  }
  // Each segment ends at the first episode boundary at or past its share.
  const auto eps =
      data::segment_episodes(made.arrays.rewards, made.arrays.terminals, made.arrays.timeouts);
  auto switches_at_first_boundary_after = [&](std::int64_t row, std::int64_t share) {
    for (std::size_t i = 1; i < eps.size(); ++i)
      if (eps[i].start == row) return eps[i - 1].start < share && row >= share;
    return false;
  };
  EXPECT_TRUE(switches_at_first_boundary_after(first0, 1000)) << first0;
  EXPECT_TRUE(switches_at_first_boundary_after(first1, 3000)) << first1;
  EXPECT_EQ(made.metadata.at("behaviour_algorithm"), "sac");
}

TEST(GenerateSac, SameSeedSameBytesWhateverTheThreadCount) {
  test::TempDir dir;
  auto set = constant_set();
  set.snapshots[2].policy = random_policy(11, 3, {16, 16}, 12, 0.3);
  auto a = generate_dataset(config(DatasetKind::MediumExpert, 4000, 1), set);
  auto b = generate_dataset(config(DatasetKind::MediumExpert, 4000, 2), set);
  data::write_d4rl(dir / "a.hdf5", a.arrays, a.metadata);
  data::write_d4rl(dir / "b.hdf5", b.arrays, b.metadata);
  std::ifstream fa(dir / "a.hdf5", std::ios::binary), fb(dir / "b.hdf5", std::ios::binary);
  const std::string ba{std::istreambuf_iterator<char>(fa), {}},
      bb{std::istreambuf_iterator<char>(fb), {}};
  EXPECT_EQ(ba, bb);
  // The expert half samples: its actions vary from step to step.
  const auto& acts = a.arrays.actions;
  EXPECT_NE(acts[acts.size() - 3], acts[acts.size() - 6]);
}

TEST(GenerateSac, DefaultSizesAreD4rls) {
  const auto set = constant_set();
  EXPECT_EQ(d4rl_transitions("hopper", DatasetKind::Medium, &set), 1'000'000);
  EXPECT_EQ(d4rl_transitions("hopper", DatasetKind::MediumExpert, &set), 2'000'000);
  EXPECT_EQ(d4rl_transitions("hopper", DatasetKind::MediumReplay, &set),
            5000);  // the steps to reach medium
  EXPECT_EQ(d4rl_transitions("walker2d", DatasetKind::MediumReplay, nullptr), 302'000);
}

TEST(DatasetStatistics, LinearActionR2AgainstConstructedData) {
  data::TransitionArrays d;
  d.obs_dim = 3;
  d.act_dim = 2;
  Random r(8);
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const double s0 = r.normal(), s1 = r.normal(), s2 = 5.0 + r.normal();
    d.observations.insert(d.observations.end(),
                          {static_cast<float>(s0), static_cast<float>(s1), static_cast<float>(s2)});
    // Action 0 is exactly linear; action 1 has half its variance from s1 and half from noise.
    d.actions.insert(d.actions.end(), {static_cast<float>(0.5 * s0 - 2.0 * s2 + 1.0),
                                       static_cast<float>(s1 + r.normal())});
  }
  // Pooled: residual variance 1 (action 1's noise) of a total 0.25 + 4 + 2 = 6.25.
  EXPECT_NEAR(data::linear_action_r2(d), 1.0 - 1.0 / 6.25, 0.01);
  for (int i = 0; i < n; ++i)
    d.actions[static_cast<std::size_t>(2 * i + 1)] =
        d.actions[static_cast<std::size_t>(2 * i)] * 3.0f;
  EXPECT_NEAR(data::linear_action_r2(d), 1.0, 1e-6);
  for (auto& a : d.actions) a = static_cast<float>(r.normal());
  EXPECT_NEAR(data::linear_action_r2(d), 0.0, 0.002);
  EXPECT_TRUE(std::isnan(data::linear_action_r2(data::TransitionArrays{})));
  // A pass the Dataset tab no longer waits for stops at its next poll.
  Progress cancelled;
  cancelled.cancel.cancel();
  EXPECT_THROW(data::linear_action_r2(d, cancelled), Cancelled);
}

TEST(DatasetStatistics, ReturnQuantilesInterpolateBetweenEpisodes) {
  data::Dataset ds;
  for (int k = 0; k < 11; ++k) {
    data::Episode ep;
    ep.ret = 10.0 * k;  // 0, 10, ..., 100
    ep.length = 5;
    ep.end = data::EndReason::Timeout;
    ds.episodes.push_back(ep);
  }
  ds.episodes.push_back({});
  ds.episodes.back().end = data::EndReason::Unterminated;
  ds.episodes.back().ret = 1e6;  // the tail never counts
  const auto s = data::summarize(ds);
  EXPECT_DOUBLE_EQ(s.return_p10, 10.0);
  EXPECT_DOUBLE_EQ(s.return_p25, 25.0);
  EXPECT_DOUBLE_EQ(s.return_median, 50.0);
  EXPECT_DOUBLE_EQ(s.return_p90, 90.0);
}

}  // namespace
}  // namespace dstudio::behaviour

namespace dstudio::behaviour {
namespace {

TEST(DefaultDatasets, ArsNamesAreThoseOlderCheckpointsRecorded) {
  // The shipped hopper checkpoints were trained on this file; its name must not change.
  EXPECT_EQ(default_dataset_path("hopper", DatasetKind::Medium, PolicyAlgorithm::Ars).filename(),
            "hopper-medium-dstudio-522ddb6a.hdf5");
  EXPECT_EQ(default_transitions("hopper", DatasetKind::MediumExpert, PolicyAlgorithm::Ars),
            kDefaultTransitions);
}

TEST(DefaultDatasets, SacDefaultsHaveD4rlSizesAndNamesOfTheirOwn) {
  const auto set = shipped_policy_set("halfcheetah", PolicyAlgorithm::Sac);
  EXPECT_EQ(default_transitions("halfcheetah", DatasetKind::Medium, PolicyAlgorithm::Sac),
            1'000'000);
  EXPECT_EQ(default_transitions("halfcheetah", DatasetKind::MediumExpert, PolicyAlgorithm::Sac),
            2'000'000);
  EXPECT_EQ(default_transitions("halfcheetah", DatasetKind::MediumReplay, PolicyAlgorithm::Sac),
            set.snapshots[static_cast<std::size_t>(set.medium)].env_steps);
  const auto sac = default_dataset_path("halfcheetah", DatasetKind::Medium, PolicyAlgorithm::Sac)
                       .filename()
                       .string();
  EXPECT_THAT(sac, testing::StartsWith("halfcheetah-medium-dstudio-sac-"));
  EXPECT_NE(sac, default_dataset_path("halfcheetah", DatasetKind::Medium, PolicyAlgorithm::Ars)
                     .filename()
                     .string());
}

// Another process making the same default dataset holds `<file>.lock`: a second caller waits
// (cancellably) and then takes the other's file instead of making its own.
// Set when a caller's progress says it waits for another process; the test waits on it.
class Said {
 public:
  Progress progress() {
    Progress p;
    p.report = [this](double, std::string_view stage) {
      if (stage.find("waiting for another process") == std::string_view::npos) return;
      const std::lock_guard lock(mutex_);
      said_ = true;
      changed_.notify_all();
    };
    return p;
  }
  // True once it was said; false if it was not within a generous minute.
  bool wait() {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, std::chrono::minutes(1), [this] { return said_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool said_ = false;
};

TEST(DefaultDatasets, WaitsForAnotherProcessMakingTheSameFile) {
  test::TempDir dir;
  const char* old = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old ? old : "";
  ::setenv("XDG_CACHE_HOME", dir.path().c_str(), 1);
  const auto path = default_dataset_path("hopper", DatasetKind::Random, PolicyAlgorithm::Ars);
  std::filesystem::create_directories(path.parent_path());
  const int other = ::open((path.string() + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(other, 0);
  ASSERT_EQ(::flock(other, LOCK_EX), 0);

  // Cancelled while waiting: it throws Cancelled and leaves nothing behind.
  Said waiting;
  Progress progress = waiting.progress();
  bool cancelled = false;
  std::thread first([&] {
    try {
      (void)ensure_default_dataset("hopper", DatasetKind::Random, progress, PolicyAlgorithm::Ars);
    } catch (const Cancelled&) {
      cancelled = true;
    }
  });
  EXPECT_TRUE(waiting.wait());
  progress.cancel.cancel();
  first.join();
  EXPECT_TRUE(cancelled);
  EXPECT_FALSE(std::filesystem::exists(path));

  // The other process finishes: the waiting caller returns its file, untouched.
  std::filesystem::path returned;
  Said waiting_again;
  std::thread second([&] {
    returned = ensure_default_dataset("hopper", DatasetKind::Random, waiting_again.progress(),
                                      PolicyAlgorithm::Ars);
  });
  EXPECT_TRUE(waiting_again.wait());
  { std::ofstream(path, std::ios::binary) << "made by the other process"; }
  ::close(other);
  second.join();
  EXPECT_EQ(returned, path);
  std::ifstream in(path, std::ios::binary);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()),
            "made by the other process");
  // The lock file goes with the lock: the cache lists only datasets.
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".lock"));

  // A holder that removes its lock file before releasing it (as the studio's own do): the waiter
  // locks the path afresh, finds the file and leaves no lock file either.
  std::filesystem::remove(path);
  const int third = ::open((path.string() + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(third, 0);
  ASSERT_EQ(::flock(third, LOCK_EX), 0);
  Said waiting_third;
  std::thread fourth([&] {
    returned = ensure_default_dataset("hopper", DatasetKind::Random, waiting_third.progress(),
                                      PolicyAlgorithm::Ars);
  });
  EXPECT_TRUE(waiting_third.wait());
  { std::ofstream(path, std::ios::binary) << "made by a tidy process"; }
  std::filesystem::remove(path.string() + ".lock");
  ::close(third);
  fourth.join();
  EXPECT_EQ(returned, path);
  EXPECT_EQ(std::filesystem::file_size(path), std::string("made by a tidy process").size());
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".lock"));

  if (old)
    ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  else
    ::unsetenv("XDG_CACHE_HOME");
}

}  // namespace
}  // namespace dstudio::behaviour

namespace dstudio::behaviour {
namespace {

// The studio's own datasets are told apart by their file names wherever they are: the window's
// default, `dstudio dataset default`'s and an ARS-era checkpoint's each have a label and the
// command that makes them; other files are none of them.
TEST(DefaultDatasets, EachIsNamedWithTheCommandThatMakesIt) {
  const auto story = identify_default_dataset(
      default_dataset_path(kStoryDataset.env, kStoryDataset.kind, kStoryDataset.algorithm));
  ASSERT_TRUE(story);
  EXPECT_TRUE(story->story);
  EXPECT_EQ(story->label, "hopper medium-expert (SAC behaviour policies, 2,000,000 transitions)");
  EXPECT_EQ(story->command, "dstudio dataset default");
  const auto ars = identify_default_dataset(
      "/elsewhere/" + default_dataset_path("hopper", DatasetKind::Medium, PolicyAlgorithm::Ars)
                          .filename()
                          .string());
  ASSERT_TRUE(ars);
  EXPECT_FALSE(ars->story);
  EXPECT_EQ(ars->command, "dstudio dataset default --kind medium --algorithm ars");
  EXPECT_EQ(ars->label, "hopper medium (ARS behaviour policies, 100,000 transitions)");
  const auto walker = identify_default_dataset(
      default_dataset_path("walker2d", DatasetKind::Random, PolicyAlgorithm::Sac));
  ASSERT_TRUE(walker);
  EXPECT_EQ(walker->command, "dstudio dataset default --env walker2d --kind random");
  EXPECT_EQ(walker->name, "walker2d random");
  EXPECT_EQ(story->name, "hopper medium-expert");
  // A task with one dataset is named by the task alone, not by a kind it does not have.
  const auto maze = identify_default_dataset(antmaze_dataset_path("antmaze-umaze-v2"));
  ASSERT_TRUE(maze);
  EXPECT_EQ(maze->name, "antmaze-umaze-v2");
  EXPECT_EQ(maze->command, "dstudio dataset default --env antmaze-umaze-v2");
  const auto pen = identify_default_dataset(adroit_human_dataset_path("pen"));
  ASSERT_TRUE(pen);
  EXPECT_EQ(pen->name, "pen human");
  EXPECT_FALSE(identify_default_dataset("/data/hopper_medium-v2.hdf5"));
  EXPECT_FALSE(identify_default_dataset("hopper-medium-dstudio-sac-00000000.hdf5"))
      << "the right shape, no such settings";
}

}  // namespace
}  // namespace dstudio::behaviour
