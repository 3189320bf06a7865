// Soft Actor-Critic: a run that stops and continues takes exactly the steps of one that never
// stopped; other settings are refused; snapshots are the policy as it ships; the shipped choice
// follows its rules.

#include "dstudio/behaviour/sac.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "dstudio/common/error.h"
#include "h5_fixture.h"

namespace dstudio::behaviour {
namespace {

SacConfig tiny(std::int64_t steps) {
  SacConfig c;
  c.env = "hopper";
  c.total_steps = steps;
  c.hidden = 16;
  c.batch = 16;
  c.random_steps = 1100;  // past the first update, so both phases of acting are covered
  c.replay_size = 5000;
  c.eval_every = 600;
  c.eval_episodes = 1;
  c.checkpoint_every = 700;
  c.seed = 3;
  return c;
}

std::string text_of(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(Sac, StoppingAndContinuingIsExactlyOneRun) {
  test::TempDir dir;
  const auto straight = train_sac(tiny(1800), dir / "straight");
  train_sac(tiny(1800), dir / "chunked", 1300);  // stops mid-episode, after learning started
  EXPECT_EQ(read_sac_run(dir / "chunked").steps, 1300);
  const auto resumed = train_sac(tiny(1800), dir / "chunked");
  EXPECT_EQ(resumed.steps, 1800);
  EXPECT_EQ(text_of(dir / "straight" / "replay.bin"), text_of(dir / "chunked" / "replay.bin"));
  auto a = nlohmann::json::parse(text_of(dir / "straight" / "state.json"));
  auto b = nlohmann::json::parse(text_of(dir / "chunked" / "state.json"));
  EXPECT_EQ(a.at("alpha"), b.at("alpha"));
  EXPECT_EQ(a.at("obs"), b.at("obs"));
  EXPECT_EQ(a.at("env_state"), b.at("env_state"));
  EXPECT_EQ(a.at("policies"), b.at("policies"));  // every snapshot's weights and returns
  ASSERT_EQ(straight.policies.snapshots.size(), 3u);
  EXPECT_EQ(straight.policies.snapshots[2].env_steps, 1800);
  EXPECT_NE(a.at("alpha").get<double>(), 1.0);  // the temperature learned
}

TEST(Sac, RefusesToContinueARunWithOtherSettings) {
  test::TempDir dir;
  train_sac(tiny(700), dir / "run");
  auto other = tiny(1400);
  other.batch = 32;
  other.gamma = 0.98;
  EXPECT_THAT([&] { train_sac(other, dir / "run"); },
              testing::ThrowsMessage<dstudio::Error>(testing::AllOf(
                  testing::HasSubstr("batch 16 (asked 32)"), testing::HasSubstr("gamma"))));
  // A longer run with more threads may continue.
  auto longer = tiny(1400);
  longer.threads = 2;
  EXPECT_EQ(train_sac(longer, dir / "run").steps, 1400);
}

TEST(Sac, ARunThatLostItsReplayBufferContinuesAndSaysWhere) {
  test::TempDir dir;
  train_sac(tiny(1800), dir / "run", 1300);
  std::filesystem::remove(dir / "run" / "replay.bin");
  const auto resumed = train_sac(tiny(1800), dir / "run");
  EXPECT_EQ(resumed.steps, 1800);
  const auto state = nlohmann::json::parse(text_of(dir / "run" / "state.json"));
  EXPECT_EQ(state.at("replay_refilled_from"), nlohmann::json::array({1300}));
  // The refilled buffer holds only what was taken after the loss.
  std::ifstream in(dir / "run" / "replay.bin", std::ios::binary);
  std::int64_t header[5] = {};
  in.read(reinterpret_cast<char*>(header), sizeof header);
  EXPECT_EQ(header[3], 500);
}

TEST(Sac, TheUpturnPenaltyIsTheAntsAndIsPartOfTheRun) {
  test::TempDir dir;
  auto hopper = tiny(700);
  hopper.upturn_penalty = 5.0;
  EXPECT_THROW(train_sac(hopper, dir / "hopper"), UsageError);
  auto negative = tiny(700);
  negative.env = "ant-goal-reaching";
  negative.upturn_penalty = -1.0;
  EXPECT_THROW(train_sac(negative, dir / "negative"), UsageError);

  // Only a torso that faces down pays: qpos[3:7] is its quaternion (w, x, y, z).
  auto ant = tiny(300);
  ant.env = "ant-goal-reaching";
  ant.upturn_penalty = 7.0;
  std::vector<double> qpos(15, 0.0);
  auto reward = [&](const SacConfig& c) { return learned_step(c, qpos, -2.5, false).reward; };
  qpos[3] = 1.0;  // upright
  EXPECT_EQ(reward(ant), -2.5);
  qpos[3] = std::cos(1.2), qpos[4] = std::sin(1.2);  // tilted 137 degrees about x: on its back
  EXPECT_EQ(reward(ant), -9.5);
  EXPECT_FALSE(learned_step(ant, qpos, -2.5, false).terminal);
  // Ended there, the step pays lying on its back for ever: -9.5 a step, discounted by 0.99.
  auto ends = ant;
  ends.upturn_ends = true;
  EXPECT_NEAR(learned_step(ends, qpos, -2.5, false).reward, -950.0, 1e-9);
  EXPECT_TRUE(learned_step(ends, qpos, -2.5, false).terminal);
  qpos[3] = std::cos(0.7), qpos[4] = std::sin(0.7);  // 80 degrees: on its side, not its back
  EXPECT_EQ(reward(ant), -2.5);
  EXPECT_EQ(reward(ends), -2.5);
  EXPECT_FALSE(learned_step(ends, qpos, -2.5, false).terminal);
  EXPECT_TRUE(learned_step(ends, qpos, -2.5, true).terminal);  // the task's own end stays
  auto plain = ant;
  plain.upturn_penalty = 0.0;
  qpos[3] = 0.0, qpos[4] = 1.0;
  EXPECT_EQ(reward(plain), -2.5);
  EXPECT_FALSE(learned_step(plain, qpos, -2.5, false).terminal);
  auto hopper_ends = tiny(700);
  hopper_ends.upturn_ends = true;
  EXPECT_THROW(train_sac(hopper_ends, dir / "hopper_ends"), UsageError);

  // The penalty is part of the run: a run with it is not continued without it.
  ant.random_steps = 300;
  ant.eval_every = 300;
  ant.checkpoint_every = 300;
  ant.replay_size = 1000;
  train_sac(ant, dir / "penalised");
  EXPECT_EQ(read_sac_run(dir / "penalised").config.upturn_penalty, 7.0);
  plain.total_steps = 600;
  EXPECT_THAT([&] { train_sac(plain, dir / "penalised"); },
              testing::ThrowsMessage<dstudio::Error>(testing::HasSubstr("upturn_penalty 7.0")));
}

TEST(Sac, SnapshotsAreThePolicyAsItShips) {
  test::TempDir dir;
  const auto run = train_sac(tiny(1200), dir / "run");
  const auto& set = run.policies;
  ASSERT_EQ(set.snapshots.size(), 2u);
  const auto& policy = std::get<GaussianPolicy>(set.snapshots[1].policy);
  auto rounded = policy;
  round_to_half(rounded);
  EXPECT_TRUE(rounded == policy);  // already in half precision
  EXPECT_EQ(policy.layers.size(), 3u);
  EXPECT_EQ(policy.layers[0].out, 16);
  // Its recorded returns are reproduced by evaluating it again on the same episodes.
  const auto seed = tiny(0).seed ^ 0xE7A15ACULL;
  EXPECT_DOUBLE_EQ(evaluate_snapshot(set, 1, 1, seed, false),
                   set.snapshots[1].deterministic_return);
  EXPECT_DOUBLE_EQ(evaluate_snapshot(set, 1, 1, seed, true), set.snapshots[1].behaviour_return);
}

// A run started from another begins with its networks and its replay buffer; without the buffer
// it acts with, and snapshots, the other run's last actor until its first update (after 1000
// transitions).
TEST(Sac, ARunStartedFromAnotherBeginsWithItsNetworks) {
  test::TempDir dir;
  const auto first = train_sac(tiny(1200), dir / "first");
  auto next = tiny(600);
  next.random_steps = 0;
  next.start_from = (dir / "first").string();
  train_sac(next, dir / "with_buffer");
  {
    std::ifstream in(dir / "with_buffer" / "replay.bin", std::ios::binary);
    std::int64_t header[5] = {};
    in.read(reinterpret_cast<char*>(header), sizeof header);
    EXPECT_EQ(header[3], 1800);  // the first run's 1200 transitions, then its own 600
  }
  std::filesystem::remove(dir / "first" / "replay.bin");
  const auto second = train_sac(next, dir / "second");
  ASSERT_EQ(second.policies.snapshots.size(), 1u);
  EXPECT_TRUE(std::get<GaussianPolicy>(second.policies.snapshots[0].policy) ==
              std::get<GaussianPolicy>(first.policies.snapshots[1].policy));
  const auto state = nlohmann::json::parse(text_of(dir / "second" / "state.json"));
  EXPECT_EQ(state.at("started_from_steps"), 1200);
  EXPECT_EQ(state.at("config").at("start_from"), next.start_from);
  EXPECT_EQ(read_sac_run(dir / "second").config.start_from, next.start_from);
  // It continues as its own run; the source is not read again.
  std::filesystem::remove_all(dir / "first");
  next.total_steps = 700;
  EXPECT_EQ(train_sac(next, dir / "second").steps, 700);

  // A source of another shape, or none, is named.
  train_sac(tiny(700), dir / "small");
  auto wider = tiny(600);
  wider.hidden = 32;
  wider.start_from = (dir / "small").string();
  EXPECT_THAT([&] { train_sac(wider, dir / "wider"); },
              testing::ThrowsMessage<dstudio::Error>(testing::HasSubstr("do not fit hopper")));
  auto missing = tiny(600);
  missing.start_from = (dir / "nowhere").string();
  EXPECT_THAT([&] { train_sac(missing, dir / "missing"); },
              testing::ThrowsMessage<UsageError>(testing::HasSubstr("no checkpoint.pt")));
}

TEST(Sac, ShippedChoiceFollowsTheCurve) {
  // A learning curve made by hand: policies whose constant action makes hopper move more or less.
  SacRun run;
  run.config = tiny(1);
  run.policies.env = "hopper";
  run.policies.random_steps = 1000;
  const float pushes[6] = {0.0f, 0.05f, 0.1f, 0.2f, 0.3f, 0.9f};
  for (int k = 0; k < 6; ++k) {
    auto p = zero_gaussian_policy(11, 3, {4});
    p.layers.back().bias = {pushes[k], -pushes[k], pushes[k], -20.0f, -20.0f, -20.0f};
    round_to_half(p);
    run.policies.snapshots.push_back({1000 * (k + 1), 0, 0, p});
  }
  for (int k = 0; k < 6; ++k)
    run.policies.snapshots[k].behaviour_return = evaluate_snapshot(run.policies, k, 3, 1, true);
  const auto set = choose_shipped_policies(run, 3, 6, 0.5, 2, 1);
  // The expert is the best by fresh episodes; medium the first to reach half of it; replay the
  // snapshots before medium, in order, then medium.
  double best = -1e9;
  int best_k = 0;
  std::vector<double> fresh(6);
  for (int k = 0; k < 6; ++k) {
    fresh[k] =
        evaluate_snapshot(run.policies, k, 3, Random::derive(run.config.seed, 0xF4E54), true);
    if (fresh[k] > best) best = fresh[k], best_k = k;
  }
  EXPECT_EQ(set.snapshots[static_cast<std::size_t>(set.expert)].env_steps, 1000 * (best_k + 1));
  const auto medium_steps = set.snapshots[static_cast<std::size_t>(set.medium)].env_steps;
  const int medium_k = static_cast<int>(medium_steps / 1000) - 1;
  EXPECT_GE(run.policies.snapshots[medium_k].behaviour_return, 0.5 * best);
  for (int k = 0; k < medium_k;
       ++k)  // no earlier snapshot reached half of the expert on both evaluations
    EXPECT_TRUE(run.policies.snapshots[k].behaviour_return < 0.5 * best || fresh[k] < 0.45 * best)
        << k;
  ASSERT_FALSE(set.replay.empty());
  EXPECT_EQ(set.replay.back(), set.medium);
  for (std::size_t i = 1; i < set.replay.size(); ++i)
    EXPECT_LT(set.snapshots[static_cast<std::size_t>(set.replay[i - 1])].env_steps,
              set.snapshots[static_cast<std::size_t>(set.replay[i])].env_steps);
  EXPECT_EQ(set.random_steps, 1000);
  // A later medium on request: never before the step asked (or, with none there before the
  // expert, the expert itself).
  const auto later = choose_shipped_policies(run, 3, 6, 0.5, 2, 1, {}, medium_steps + 1);
  const auto& chosen = later.snapshots[static_cast<std::size_t>(later.medium)];
  EXPECT_TRUE(chosen.env_steps > medium_steps || later.medium == later.expert) << chosen.env_steps;
  // Another score ranks the candidates instead of the return (a goal-reacher's navigation): here
  // one that prefers the snapshot of 2000 steps; each candidate is scored once, and a tie goes to
  // the better return.
  std::vector<int> scored;
  const auto by_score =
      choose_shipped_policies(run, 3, 6, 0.5, 2, 1, {}, 0, [&](const PolicySet& all, int k) {
        scored.push_back(k);
        return all.snapshots[k].env_steps == 2000 ? 1.0 : 0.0;
      });
  EXPECT_EQ(by_score.snapshots[static_cast<std::size_t>(by_score.expert)].env_steps, 2000);
  std::sort(scored.begin(), scored.end());
  EXPECT_EQ(scored, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  const auto tie = choose_shipped_policies(run, 3, 6, 0.5, 2, 1, {}, 0,
                                           [](const PolicySet&, int) { return 0.5; });
  EXPECT_EQ(tie.snapshots[static_cast<std::size_t>(tie.expert)].env_steps, 1000 * (best_k + 1));
}

}  // namespace
}  // namespace dstudio::behaviour
