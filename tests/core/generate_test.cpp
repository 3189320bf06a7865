// Datasets made by the project's behaviour policies: exact round trips, determinism, states that
// replay, and the shipped experts reaching the targets.

#include "dstudio/behaviour/generate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <limits>

#include "dstudio/common/error.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/env/compatibility.h"
#include "dstudio/env/environment.h"
#include "h5_fixture.h"

namespace dstudio::behaviour {
namespace {

// The shipped ARS policies acting with the behaviour noise.
PolicySet ars(const std::string& env) {
  return policy_set_from_ars(shipped_policies(env), kBehaviourNoise);
}

std::string bytes_of(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

GenerateConfig config(const std::string& env, DatasetKind kind, std::int64_t n,
                      std::uint64_t seed = 3) {
  GenerateConfig c;
  c.env = env;
  c.kind = kind;
  c.transitions = n;
  c.seed = seed;
  return c;
}

TEST(Generate, RoundTripThroughTheLoaderIsExactAndMatchesTheEnvironment) {
  test::TempDir dir;
  const auto policies = ars("hopper");
  const auto made = generate_dataset(config("hopper", DatasetKind::Medium, 4000), policies);
  data::write_d4rl(dir / "d.hdf5", made.arrays, made.metadata);
  data::LoadOptions options;
  options.next_observations = true;
  const auto ds = data::load_dataset(dir / "d.hdf5", options);
  EXPECT_TRUE(ds.data == made.arrays);
  EXPECT_EQ(ds.transitions(), 4000);
  EXPECT_EQ(ds.env_id, "hopper");
  EXPECT_EQ(ds.metadata.at("kind"), "medium");
  EXPECT_NO_THROW(env::check_dataset_matches(ds, env::task("hopper")));
  // Every episode but the last ends with a flag; episodes are at most 1000 steps.
  for (std::size_t i = 0; i + 1 < ds.episodes.size(); ++i) {
    EXPECT_TRUE(ds.episodes[i].complete());
    EXPECT_LE(ds.episodes[i].length, 1000);
  }
  // Within an episode, the next observation is the following row's observation.
  for (const auto& ep : ds.episodes)
    for (std::int64_t t = ep.start; t + 1 < ep.start + ep.length; ++t)
      for (int k = 0; k < 11; ++k)
        ASSERT_EQ(ds.data.next_observations[t * 11 + k], ds.data.observations[(t + 1) * 11 + k]);
}

TEST(Generate, InfosHoldTheStateOfEachObservation) {
  const auto made = generate_dataset(config("walker2d", DatasetKind::Random, 600), {});
  env::Environment e("walker2d");
  std::vector<float> obs(17);
  for (int t = 0; t < 600; t += 37) {
    std::vector<double> qpos(made.arrays.qpos.begin() + t * 9,
                             made.arrays.qpos.begin() + (t + 1) * 9);
    std::vector<double> qvel(made.arrays.qvel.begin() + t * 9,
                             made.arrays.qvel.begin() + (t + 1) * 9);
    e.set_state(qpos, qvel);  // float32 storage: the observation agrees to float precision
    e.observe(obs);
    for (int k = 0; k < 17; ++k)
      ASSERT_NEAR(obs[k], made.arrays.observations[t * 17 + k], 1e-5) << "row " << t;
  }
}

TEST(Generate, SameSeedSameBytesWhateverTheThreadCount) {
  test::TempDir dir;
  const auto policies = ars("hopper");
  auto c = config("hopper", DatasetKind::MediumReplay, 3000);
  c.threads = 1;
  auto a = generate_dataset(c, policies);
  data::write_d4rl(dir / "a.hdf5", a.arrays, a.metadata);
  c.threads = 2;
  auto b = generate_dataset(c, policies);
  data::write_d4rl(dir / "b.hdf5", b.arrays, b.metadata);
  c.seed = 4;
  auto other = generate_dataset(c, policies);
  EXPECT_EQ(bytes_of(dir / "a.hdf5"), bytes_of(dir / "b.hdf5"));
  EXPECT_NE(a.arrays.observations, other.arrays.observations);
}

TEST(Generate, RandomActionsAreUniformInTheActionBounds) {
  const auto made = generate_dataset(config("halfcheetah", DatasetKind::Random, 5000), {});
  double sum = 0, sq = 0;
  for (float a : made.arrays.actions) {
    ASSERT_GE(a, -1.0f);
    ASSERT_LE(a, 1.0f);
    sum += a;
    sq += a * a;
  }
  const double n = static_cast<double>(made.arrays.actions.size());
  EXPECT_NEAR(sum / n, 0.0, 0.02);
  EXPECT_NEAR(sq / n, 1.0 / 3.0, 0.02);
  // HalfCheetah never terminates: five full 1000-step episodes, all timeouts.
  const auto eps =
      data::segment_episodes(made.arrays.rewards, made.arrays.terminals, made.arrays.timeouts);
  ASSERT_EQ(eps.size(), 5u);
  for (const auto& e : eps) EXPECT_EQ(e.end, data::EndReason::Timeout);
}

TEST(Generate, MediumExpertJoinsTheHalvesAtAnEpisodeBoundary) {
  const auto policies = ars("hopper");
  const auto made = generate_dataset(config("hopper", DatasetKind::MediumExpert, 6000), policies);
  EXPECT_EQ(made.arrays.size(), 6000);
  const auto eps =
      data::segment_episodes(made.arrays.rewards, made.arrays.terminals, made.arrays.timeouts);
  int unterminated = 0;
  for (const auto& e : eps) unterminated += !e.complete();
  EXPECT_LE(unterminated, 1);
  if (unterminated == 1) {
    EXPECT_FALSE(eps.back().complete());
  }
}

TEST(Generate, ShippedExpertsReachTheTargetsAndMediumIsAboutAThird) {
  struct Target {
    const char* env;
    double expert;
  };
  for (const auto& t :
       {Target{"hopper", 3000.0}, Target{"walker2d", 3000.0}, Target{"halfcheetah", 4000.0}}) {
    const auto run = shipped_policies(t.env);
    const double expert = evaluate_policy(t.env, run.snapshots[run.expert].policy, 3, 11);
    const double noisy =
        evaluate_policy(t.env, run.snapshots[run.expert].policy, 5, 11, kBehaviourNoise);
    const double medium = evaluate_policy(t.env, run.snapshots[run.medium].policy, 3, 11);
    EXPECT_GE(expert, t.expert) << t.env;
    EXPECT_GE(noisy, 0.8 * t.expert) << t.env << ": the behaviour noise must not ruin the expert";
    EXPECT_GT(medium, 0.15 * expert) << t.env;
    EXPECT_LT(medium, 0.7 * expert) << t.env;
  }
}

TEST(Generate, BadInputGetsClearErrors) {
  EXPECT_THROW(parse_kind("medium-random"), dstudio::UsageError);
  try {
    parse_kind("replay");
  } catch (const dstudio::UsageError& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr(
                              "known kinds: random, medium, medium-replay, expert, medium-expert"));
  }
  EXPECT_THROW(generate_dataset(config("hopper", DatasetKind::Medium, 100), ars("halfcheetah")),
               dstudio::Error);
  EXPECT_THROW(generate_dataset(config("ant-maze", DatasetKind::Random, 100), {}), env::EnvError);
}

// A failure on a rollout thread (here NaN actions from NaN noise) reaches the caller as the
// environment's error, whatever the thread count; it never ends the process.
TEST(Generate, AFailureOnAWorkerThreadReachesTheCaller) {
  auto policies = ars("hopper");
  policies.action_noise = std::numeric_limits<double>::quiet_NaN();
  for (int threads : {1, 2, 3}) {
    auto c = config("hopper", DatasetKind::Medium, 500);
    c.threads = threads;
    try {
      (void)generate_dataset(c, policies);
      ADD_FAILURE() << threads << " threads: NaN actions were accepted";
    } catch (const env::EnvError& e) {
      EXPECT_THAT(e.what(), testing::HasSubstr("NaN")) << threads;
    }
  }
}

TEST(Generate, HidingVelocitiesKeepsThePositionsAndWhatThePolicyDid) {
  // The partially observed copy: each observation is its first nq - 1 values (the positions),
  // equal to what the -po environment observes at the recorded state; the rest is unchanged.
  test::TempDir dir;
  const auto made = generate_dataset(config("hopper", DatasetKind::Medium, 3000), ars("hopper"));
  data::write_d4rl(dir / "d.hdf5", made.arrays, made.metadata);
  data::LoadOptions options;
  options.next_observations = true;
  const auto full = data::load_dataset(dir / "d.hdf5", options);
  const auto view = env::hide_velocities(full);
  EXPECT_EQ(view.task->name, "hopper-po");
  ASSERT_EQ(view.data.obs_dim, 5);
  EXPECT_EQ(view.data.actions, full.data.actions);
  EXPECT_EQ(view.data.rewards, full.data.rewards);
  EXPECT_EQ(view.data.qpos, full.data.qpos);
  env::Environment po("hopper-po");
  std::vector<float> seen(5);
  for (std::int64_t t : {0, 17, 1999}) {
    for (int k = 0; k < 5; ++k) {
      EXPECT_EQ(view.data.observations[static_cast<size_t>(t * 5 + k)],
                full.data.observations[static_cast<size_t>(t * 11 + k)]);
      EXPECT_EQ(view.data.next_observations[static_cast<size_t>(t * 5 + k)],
                full.data.next_observations[static_cast<size_t>(t * 11 + k)]);
    }
    const std::vector<double> qpos(full.data.qpos.begin() + t * 6,
                                   full.data.qpos.begin() + (t + 1) * 6);
    const std::vector<double> qvel(full.data.qvel.begin() + t * 6,
                                   full.data.qvel.begin() + (t + 1) * 6);
    po.set_state(qpos, qvel);
    po.observe(seen);
    for (int k = 0; k < 5; ++k)
      EXPECT_NEAR(seen[static_cast<size_t>(k)],
                  view.data.observations[static_cast<size_t>(t * 5 + k)], 1e-6);
  }
  // Written and read back, it names its task and fits it; hiding again is refused.
  data::write_d4rl(dir / "po.hdf5", view.data, view.metadata);
  const auto back = data::load_dataset(dir / "po.hdf5");
  EXPECT_EQ(back.env_id, "hopper-po");
  EXPECT_NO_THROW(env::check_dataset_matches(back, env::task(back.env_id)));
  EXPECT_THROW(env::hide_velocities(back), UsageError);
}

}  // namespace
}  // namespace dstudio::behaviour
