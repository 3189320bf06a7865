// Rollouts: determinism, bookkeeping of returns-to-go and summaries, and modality zeroing of an
// input the weights ignore (which must change nothing).

#include "dstudio/models/evaluation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "dstudio/analysis/analysis_registry.h"
#include "dstudio/analysis/entropy.h"
#include "dstudio/behaviour/adroit_data.h"
#include "dstudio/common/error.h"
#include "dstudio/env/environment.h"
#include "dstudio/models/checkpoint_model.h"
#include "dstudio/models/episode_player.h"
#include "dstudio/models/intervene.h"
#include "h5_fixture.h"

namespace dstudio::models {
namespace {

using testing::HasSubstr;

// The sizes and quirks of a small random DT saved as a checkpoint.
struct SmallDt {
  std::string env_id = "hopper";
  int state_dim = 11, act_dim = 3, hidden = 32, layers = 2, heads = 2, context_length = 5;
  int seed = 7;
  // Larger weights than GPT-2's initialisation, so that inputs visibly move the actions.
  double weight_scale = 10.0;
  // A modality whose input weights are zeroed, so that the model does not see it.
  std::string ignore;
  double reward_shift = 0.0;
};

std::filesystem::path save_small_dt(const test::TempDir& dir, const std::string& name,
                                    const SmallDt& s) {
  auto c = make_variant("dt");
  c.state_dim = s.state_dim;
  c.act_dim = s.act_dim;
  c.hidden = s.hidden;
  c.layers = s.layers;
  c.heads = s.heads;
  c.context_length = s.context_length;
  torch::manual_seed(s.seed);
  DecisionModel model(c);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) p.mul_(s.weight_scale);
    for (auto& item : model->named_parameters())
      if (!s.ignore.empty() && item.key() == "embed_" + s.ignore + ".weight") item.value().zero_();
  }
  CheckpointInfo info;
  info.variant = c;
  info.env_id = s.env_id;
  info.state_mean.assign(static_cast<std::size_t>(s.state_dim), 0.0f);
  info.state_std.assign(static_cast<std::size_t>(s.state_dim), 1.0f);
  info.training.reward_shift = s.reward_shift;
  info.metrics = "{}";
  const auto path = dir / name;
  save_weights_checkpoint(path, model, info, "test");
  return path;
}

// A small random hopper DT saved as a checkpoint; `ignore` names a modality whose input weights
// are zeroed.
std::filesystem::path small_checkpoint(const test::TempDir& dir, const std::string& name,
                                       const std::string& ignore = "", double reward_shift = 0.0) {
  return save_small_dt(dir, name, {.ignore = ignore, .reward_shift = reward_shift});
}

std::vector<double> returns_of(const RolloutResult& r) {
  std::vector<double> out;
  for (const auto& e : r.episodes) out.push_back(e.episode_return);
  return out;
}

TEST(Rollout, IsDeterministicAndKeepsItsBooks) {
  test::TempDir dir;
  const auto ckpt = small_checkpoint(dir, "dt.pt");
  RolloutConfig cfg;
  cfg.targets = {3600, 1800};
  cfg.episodes = 3;
  cfg.max_steps = 60;
  cfg.seed = 5;
  const auto a = rollout(ckpt, cfg);
  EXPECT_EQ(returns_of(a), returns_of(rollout(ckpt, cfg)));
  cfg.threads = 2;  // the batch split over two threads: the same seed gives the same returns again
  const auto b = rollout(ckpt, cfg);
  EXPECT_EQ(returns_of(b), returns_of(rollout(ckpt, cfg)));
  ASSERT_EQ(a.episodes.size(), 6u);
  // and the same first actions as one thread, up to the rounding of smaller matrix products.
  for (std::size_t i = 0; i < 6; ++i)
    for (int k = 0; k < 3; ++k)
      EXPECT_NEAR(a.episodes[i].actions[static_cast<std::size_t>(k)],
                  b.episodes[i].actions[static_cast<std::size_t>(k)], 1e-5);
  ASSERT_EQ(a.summary.size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) {
    double sum = 0.0;
    for (int e = 0; e < 3; ++e)
      sum += a.episodes[k * 3 + static_cast<std::size_t>(e)].episode_return;
    EXPECT_NEAR(a.summary[k].mean_return, sum / 3.0, 1e-9);
    EXPECT_NEAR(a.summary[k].mean_score, env::normalized_score(env::task("hopper"), sum / 3.0),
                1e-9);
  }
  for (const auto& e : a.episodes) {
    EXPECT_EQ(e.seed, 5u + (&e - a.episodes.data()) % 3);  // the same starts for every target
    ASSERT_EQ(static_cast<int>(e.rewards.size()), e.length);
    ASSERT_EQ(e.states.size(), static_cast<std::size_t>(e.length) * 11);
    EXPECT_LE(e.length, 60);
    EXPECT_NEAR(e.returns_to_go.front(), e.target, 1e-3);  // as the policy saw it, in float32
    // R_{t+1} = R_t - r_t, in float32 as the policy saw it.
    for (int t = 0; t + 1 < e.length; ++t)
      EXPECT_NEAR(
          e.returns_to_go[static_cast<std::size_t>(t) + 1],
          e.returns_to_go[static_cast<std::size_t>(t)] - e.rewards[static_cast<std::size_t>(t)],
          1e-2);
  }
}

TEST(Rollout, ZeroingAModalityTheWeightsIgnoreChangesNothing) {
  test::TempDir dir;
  RolloutConfig cfg;
  cfg.targets = {3600};
  cfg.episodes = 3;
  cfg.max_steps = 80;
  for (const auto& [ignored, zeroing] : {std::pair{"return", ModalityZeroing::ReturnsToGo},
                                         std::pair{"action", ModalityZeroing::Actions}}) {
    const auto ckpt = small_checkpoint(dir, std::string(ignored) + ".pt", ignored);
    const auto plain = rollout(ckpt, cfg);
    cfg.zeroing = zeroing;
    const auto zeroed = rollout(ckpt, cfg);
    cfg.zeroing = ModalityZeroing::None;
    EXPECT_EQ(returns_of(plain), returns_of(zeroed)) << ignored;
  }
  // A model that does see returns-to-go acts differently without them.
  const auto ckpt = small_checkpoint(dir, "sees.pt");
  const auto plain = rollout(ckpt, cfg);
  cfg.zeroing = ModalityZeroing::ReturnsToGo;
  EXPECT_NE(returns_of(plain), returns_of(rollout(ckpt, cfg)));
}

// The ablation is, for each zeroing in order, the rollouts of each seed (seed + 1000 s) at the
// target, pooled; its spread over seeds is that of the seeds' means.
TEST(Ablation, PoolsEachZeroingsRolloutsOverSeeds) {
  test::TempDir dir;
  const auto ckpt = small_checkpoint(dir, "dt.pt");
  AblationConfig config;
  config.target = 3000;
  config.episodes = 2;
  config.seeds = 2;
  config.seed = 3;
  config.max_steps = 40;
  std::vector<double> fractions;
  Progress progress;
  progress.report = [&](double f, std::string_view) { fractions.push_back(f); };
  const auto ablation = zeroing_ablation(ckpt, config, progress);
  EXPECT_EQ(ablation.target, 3000.0);
  ASSERT_EQ(ablation.zeroings.size(), kModalityZeroings.size());
  EXPECT_TRUE(std::is_sorted(fractions.begin(), fractions.end()));
  EXPECT_EQ(fractions.back(), 1.0);
  for (std::size_t k = 0; k < kModalityZeroings.size(); ++k) {
    const auto& z = ablation.zeroings[k];
    EXPECT_EQ(z.zeroing, kModalityZeroings[k]);
    RolloutConfig rc;
    rc.targets = {3000};
    rc.episodes = 2;
    rc.max_steps = 40;
    rc.zeroing = z.zeroing;
    std::vector<double> scores, means;
    for (const std::uint64_t seed : {3u, 1003u}) {
      rc.seed = seed;
      const auto r = rollout(ckpt, rc);
      for (const auto& e : r.episodes) scores.push_back(e.score);
      means.push_back(r.summary.front().mean_score);
    }
    ASSERT_EQ(z.episodes.size(), 4u);
    for (std::size_t e = 0; e < 4; ++e) EXPECT_EQ(z.episodes[e].score, scores[e]);
    EXPECT_EQ(z.summary.episodes, 4);
    EXPECT_NEAR(z.summary.mean_score, (scores[0] + scores[1] + scores[2] + scores[3]) / 4.0, 1e-9);
    EXPECT_NEAR(z.std_over_seeds, std::abs(means[0] - means[1]) / 2.0, 1e-9);  // population std
    // The IQM of four episodes: the middle two of the sorted scores, with its interval around it.
    auto sorted = scores;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_NEAR(z.summary.iqm_score.estimate, (sorted[1] + sorted[2]) / 2.0, 1e-9);
    EXPECT_LE(z.summary.iqm_score.low, z.summary.iqm_score.estimate);
    EXPECT_GE(z.summary.iqm_score.high, z.summary.iqm_score.estimate);
    EXPECT_GE(z.summary.iqm_score.low, sorted.front());
    EXPECT_LE(z.summary.iqm_score.high, sorted.back());
  }
  // Zeroing the returns-to-go of a model that sees them changes what it does.
  EXPECT_NE(ablation.zeroings[0].summary.mean_return, ablation.zeroings[1].summary.mean_return);
  config.seeds = 0;
  EXPECT_THROW(zeroing_ablation(ckpt, config), UsageError);
}

TEST(Rollout, RecordsEntropyAndInspectionsOnDemand) {
  test::TempDir dir;
  const auto ckpt = small_checkpoint(dir, "dt.pt");
  RolloutConfig cfg;
  cfg.targets = {3600};
  cfg.episodes = 2;
  cfg.max_steps = 20;
  cfg.entropy = true;
  cfg.inspect_steps = {0, 7};
  const auto r = rollout(ckpt, cfg);
  for (const auto& e : r.episodes) {
    ASSERT_EQ(static_cast<int>(e.entropy.size()), e.length);
    // At step 0 one real step (3 tokens): entropies lie in [0, log 3].
    EXPECT_GE(e.entropy[0], 0.0);
    EXPECT_LE(e.entropy[0], std::log(3.0) + 1e-9);
    ASSERT_GE(e.inspections.size(), 1u);
    const auto& s = e.inspections[0];
    EXPECT_EQ(s.step, 0);
    EXPECT_EQ(s.tokens, 15);
    EXPECT_EQ(s.token_steps[12],
              0);  // the last step's R token is step 0; earlier slots are padding
    EXPECT_EQ(s.token_steps[0], -1);
    ASSERT_EQ(s.mixing.size(), 2u);
    EXPECT_EQ(s.mixing[0].size(), 2u * 15 * 15);
    // The recorded entropy is the mean over heads of the first layer's matrix.
    std::vector<char> valid(15, 0);
    for (int k = 12; k < 15; ++k) valid[static_cast<std::size_t>(k)] = 1;
    double mean = 0.0;
    for (int h = 0; h < 2; ++h)
      mean += analysis::attention_entropy({s.mixing[0].data() + h * 225, 225}, 15, valid) / 2.0;
    EXPECT_NEAR(mean, e.entropy[0], 1e-9);
  }
}

TEST(Rollout, SaysWhenTheEnvironmentDoesNotFit) {
  test::TempDir dir;
  const auto ckpt = small_checkpoint(dir, "dt.pt");
  RolloutConfig cfg;
  cfg.env_id = "walker2d";
  try {
    rollout(ckpt, cfg);
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("walker2d has 17"));
  }
}

// ---------------------------------------------------------------------------------------------
// The step-by-step player: the same numbers as a rollout, exact branching, and a live thread.

std::vector<FramePtr> play_to_end(EpisodePlayer& player, int limit = 1000) {
  for (int i = 0; i < limit && player.step(); ++i) {
  }
  return player.frames();
}

TEST(EpisodePlayer, ComputesWhatARolloutComputes) {
  test::TempDir dir;
  const auto ckpt = small_checkpoint(dir, "dt.pt");
  RolloutConfig config;
  config.targets = {3600.0};
  config.episodes = 1;
  config.seed = 5;
  config.entropy = true;
  config.inspect_steps = {0, 3};
  const auto reference = rollout(ckpt, config).episodes.front();
  ASSERT_GT(reference.length, 4);

  EpisodePlayer player(ckpt);
  player.reset(5, 3600.0);
  const auto frames = play_to_end(player);
  ASSERT_EQ(static_cast<int>(frames.size()), reference.length + 1);
  EXPECT_TRUE(frames.back()->terminal);
  EXPECT_EQ(frames.back()->terminated, reference.terminated);
  EXPECT_DOUBLE_EQ(frames.back()->return_so_far, reference.episode_return);
  for (int t = 0; t < reference.length; ++t) {
    const auto& f = *frames[static_cast<std::size_t>(t)];
    ASSERT_TRUE(f.acted);
    EXPECT_EQ(f.step, t);
    const std::vector<float> action(reference.actions.begin() + t * 3,
                                    reference.actions.begin() + t * 3 + 3);
    ASSERT_EQ(f.action, action) << "step " << t;
    EXPECT_EQ(f.reward, reference.rewards[static_cast<std::size_t>(t)]);
    EXPECT_EQ(f.return_to_go, reference.returns_to_go[static_cast<std::size_t>(t)]);
    EXPECT_EQ(f.entropy, reference.entropy[static_cast<std::size_t>(t)]);
  }
  // The kept mixing matrices are the rollout's inspections of the same steps.
  for (const auto& inspected : reference.inspections) {
    const auto& mine = *frames[static_cast<std::size_t>(inspected.step)]->inspection;
    ASSERT_EQ(mine.layers.size(), inspected.mixing.size());
    for (std::size_t l = 0; l < mine.layers.size(); ++l)
      EXPECT_EQ(mine.layers[l].values, inspected.mixing[l]);
    EXPECT_EQ(mine.token_steps, inspected.token_steps);
  }
}

// Without the mixing kept, a player computes the same actions, bit for bit: a fork that changes
// nothing must play the main run's episode, not drift from it by rounding.
TEST(EpisodePlayer, KeepingNoMixingChangesNoAction) {
  test::TempDir dir;
  const auto ckpt = small_checkpoint(dir, "dt.pt");
  EpisodePlayer inspecting(ckpt), acting(ckpt);
  acting.set_inspection(false);
  for (auto* p : {&inspecting, &acting}) {
    p->reset(8, 3600.0);
    p->branch(0, 3600.0, ModalityZeroing::None, {"head:1.2=zero"});
  }
  const auto a = play_to_end(inspecting), b = play_to_end(acting);
  ASSERT_EQ(a.size(), b.size());
  ASSERT_GT(a.size(), 5u);
  for (std::size_t t = 0; t + 1 < a.size(); ++t) {
    ASSERT_EQ(a[t]->action, b[t]->action) << "step " << t;
    ASSERT_EQ(a[t]->action_without, b[t]->action_without) << "step " << t;
    EXPECT_TRUE(a[t]->inspection);
    EXPECT_FALSE(b[t]->inspection);
    EXPECT_TRUE(std::isnan(b[t]->entropy));
  }
}

// The shipped DT, which keeps the hopper up for hundreds of steps.
const std::filesystem::path shipped_dt =
    std::filesystem::path(DSTUDIO_RESOURCES_DIR) / "checkpoints/hopper-medium-expert-dt.pt";

TEST(EpisodePlayer, BranchingWithTheSameSettingsReplaysExactly) {
  EpisodePlayer player(shipped_dt);
  player.reset(2, 3600.0);
  const auto original = play_to_end(player, 40);
  ASSERT_GT(original.size(), 12u);
  player.branch(10, 3600.0, ModalityZeroing::None);
  ASSERT_EQ(player.frames().size(), 11u);
  EXPECT_FALSE(player.frames().back()->acted);
  const auto again = play_to_end(player, static_cast<int>(original.size()) - 11);
  ASSERT_EQ(again.size(), original.size());
  for (std::size_t t = 0; t + 1 < original.size(); ++t) {
    EXPECT_EQ(again[t]->action, original[t]->action) << "step " << t;
    EXPECT_EQ(again[t]->reward, original[t]->reward) << "step " << t;
    EXPECT_EQ(again[t]->physics.qpos, original[t]->physics.qpos) << "step " << t;
  }
}

TEST(EpisodePlayer, ANewTargetReconditionsTheCurrentStep) {
  EpisodePlayer player(shipped_dt);
  player.reset(2, 3600.0);
  const auto original = play_to_end(player, 12);
  ASSERT_EQ(original.size(), 13u);
  player.branch(10, 90000.0, ModalityZeroing::None);
  const auto& kept = *player.frames().back();
  EXPECT_EQ(kept.target, 90000.0);
  EXPECT_NEAR(kept.return_to_go, 90000.0 - original[10]->return_so_far, 1e-2);
  EXPECT_EQ(kept.physics.qpos, original[10]->physics.qpos);
  ASSERT_TRUE(player.step());
  EXPECT_NE(player.frames()[10]->action, original[10]->action)
      << "the return-to-go reaches the policy";
  // Earlier frames keep what they were conditioned on.
  EXPECT_EQ(player.frames()[9]->return_to_go, original[9]->return_to_go);
}

// A model trained with IQL's -1 shift: every step costs it 1 on top of the reward it gets; its
// default target is the task's in its units; returns and scores stay the task's.
TEST(Rollout, AShiftedModelCountsEveryRewardWithItsShift) {
  test::TempDir dir;
  const auto ckpt = small_checkpoint(dir, "shifted.pt", "", -1.0);
  RolloutConfig cfg;
  cfg.episodes = 2;
  cfg.max_steps = 40;
  cfg.seed = 5;
  const auto r = rollout(ckpt, cfg);
  EXPECT_EQ(r.reward_shift, -1.0);
  ASSERT_EQ(r.summary.size(), 2u);  // hopper's two references, each a full episode minus 1000
  EXPECT_EQ(r.summary[0].target, 2600.0);
  EXPECT_EQ(r.summary[1].target, 800.0);
  for (const auto& e : r.episodes) {
    double sum = 0.0;
    for (int t = 0; t < e.length; ++t) {
      sum += e.rewards[static_cast<std::size_t>(t)];
      if (t + 1 < e.length) {
        EXPECT_NEAR(e.returns_to_go[static_cast<std::size_t>(t) + 1],
                    e.returns_to_go[static_cast<std::size_t>(t)] -
                        (e.rewards[static_cast<std::size_t>(t)] - 1.0),
                    1e-2);
      }
    }
    EXPECT_NEAR(e.episode_return, sum, 1e-9);
    EXPECT_NEAR(e.score, env::normalized_score(env::task("hopper"), sum), 1e-9);
  }
  // The player computes the same, and a new target is reconditioned in the model's units.
  EpisodePlayer player(ckpt);
  player.reset(5, 2600.0);
  const auto frames = play_to_end(player, 12);
  const auto& reference = r.episodes.front();
  ASSERT_GE(frames.size(), 4u);
  for (std::size_t t = 0; t < frames.size() && static_cast<int>(t) < reference.length; ++t)
    EXPECT_EQ(frames[t]->return_to_go, reference.returns_to_go[t]) << "step " << t;
  const int at = static_cast<int>(frames.size()) - 2;
  player.branch(at, 500.0, ModalityZeroing::None);
  const auto& kept = *player.frames().back();
  EXPECT_NEAR(kept.return_to_go, 500.0 - (frames[static_cast<std::size_t>(at)]->return_so_far - at),
              1e-2);
}

TEST(EpisodePlayer, ZeroingFromTheFirstStepEqualsZeroingFromTheStart) {
  test::TempDir dir;
  const auto ckpt = small_checkpoint(dir, "dt.pt");
  EpisodePlayer zeroed(ckpt), switched(ckpt);
  zeroed.reset(4, 3600.0, ModalityZeroing::ReturnsToGo);
  switched.reset(4, 3600.0);
  switched.branch(0, 3600.0, ModalityZeroing::ReturnsToGo);
  const auto a = play_to_end(zeroed, 30), b = play_to_end(switched, 30);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t t = 0; t + 1 < a.size(); ++t)
    EXPECT_EQ(a[t]->action, b[t]->action) << "step " << t;
}

// The state once `done` holds: the player says when it changes, the test never guesses how long.
template <typename Predicate>
PlaybackState wait_for(const LivePlayer& live, Predicate done) {
  return live.wait_until(done, std::chrono::minutes(2));
}

TEST(LivePlayer, PlaysPausesStepsBackAndBranchesOnItsOwnThread) {
  auto player = std::make_unique<EpisodePlayer>(shipped_dt);
  player->reset(2, 3600.0);
  LivePlayer live(std::move(player));
  EXPECT_EQ(live.state().frames, 1);
  live.set_speed(0.0);
  live.play();
  auto s = wait_for(live, [](const PlaybackState& p) { return p.frames >= 30; });
  live.pause();
  // A step under way when the pause arrived still lands: wait until the player is idle.
  s = wait_for(live, [](const PlaybackState& p) { return !p.playing && !p.busy; });
  EXPECT_FALSE(s.playing);
  ASSERT_GE(s.frames, 30);
  const int frames = live.state().frames, cursor = live.state().cursor;
  EXPECT_EQ(cursor, frames - 1) << "playing shows the newest frame";

  live.step_back();
  live.step_back();
  EXPECT_EQ(live.state().cursor, cursor - 2);
  live.step_forward();
  s = wait_for(live, [&](const PlaybackState& p) { return p.cursor == cursor - 1; });
  EXPECT_EQ(s.cursor, cursor - 1);
  EXPECT_EQ(s.frames, frames) << "stepping over kept frames replays them";
  EXPECT_EQ(s.frame->step, cursor - 1);

  live.seek(3);
  const auto generation = live.state().generation;
  live.set_target(50000.0);
  s = wait_for(live, [&](const PlaybackState& p) { return p.generation != generation; });
  EXPECT_EQ(s.frames, 4) << "frames after the cursor are dropped";
  EXPECT_EQ(s.frame->target, 50000.0);
  EXPECT_EQ(live.target(), 50000.0);

  live.step_forward();
  s = wait_for(live, [](const PlaybackState& p) { return p.frames == 5 && p.cursor == 4; });
  EXPECT_EQ(s.frames, 5) << "a step at the newest frame acts";
  EXPECT_EQ(s.frame->target, 50000.0);

  // Interventions as the target: from the frame on screen, the frames after it dropped; the
  // step then acts as a headless player branched there with the same set does.
  live.seek(2);
  const auto before_interventions = live.state().generation;
  live.set_interventions({"head:2.1=zero", "context:3"});
  s = wait_for(live, [&](const PlaybackState& p) { return p.generation != before_interventions; });
  EXPECT_EQ(s.frames, 3);
  live.step_forward();
  s = wait_for(live, [](const PlaybackState& p) { return p.frames == 4 && p.cursor == 3; });
  const auto live_frames = live.frames();
  EpisodePlayer headless(shipped_dt);
  headless.reset(2, 3600.0);
  play_to_end(headless, 3);
  headless.branch(3, 50000.0, ModalityZeroing::None);
  headless.branch(2, 50000.0, ModalityZeroing::None, {"head:2.1=zero", "context:3"});
  ASSERT_TRUE(headless.step());
  ASSERT_EQ(live_frames.size(), 4u);
  EXPECT_EQ(live_frames[2]->action, headless.frames()[2]->action);
  EXPECT_EQ(live_frames[2]->interventions, headless.frames()[2]->interventions);
  EXPECT_EQ(live.interventions(), (std::vector<std::string>{"head:2.1=zero", "context:3"}));

  live.restart(9);
  s = wait_for(live, [&](const PlaybackState& p) { return p.seed == 9; });
  EXPECT_EQ(s.frames, 1);
  EXPECT_EQ(s.cursor, 0);
  live.play();  // destroyed while playing: the destructor stops the thread
}

// Interventions set on a playing policy: from the first step they give the episode a rollout
// of the intervened policy plays (another code path: batched, with the plan given up front);
// from a later step, the earlier frames keep their actions and the later ones follow the plan.
TEST(EpisodePlayer, InterventionsFromTheFirstStepPlayWhatTheInterventedRolloutPlays) {
  test::TempDir dir;
  const auto ckpt = small_checkpoint(dir, "dt.pt");
  const std::vector<std::string> specs{"head:1.2=zero", "mlp:2=zero@step:3", "context:2"};
  const auto loaded = open_checkpoint(ckpt);
  std::vector<Intervention> items;
  for (const auto& spec : specs) items.push_back(parse_intervention(spec));
  const InterventionPlan plan(items, loaded->info.variant, {});
  RolloutConfig config;
  config.targets = {3600.0};
  config.episodes = 1;
  config.seed = 6;
  config.entropy = true;  // the full pass the player runs
  DecisionModel model = loaded->model;
  const auto reference = rollout(*model, loaded->info, config, {}, &plan).episodes.front();
  ASSERT_GT(reference.length, 4);

  EpisodePlayer player(ckpt);
  player.reset(6, 3600.0);
  player.branch(0, 3600.0, ModalityZeroing::None, specs);
  const auto frames = play_to_end(player);
  ASSERT_EQ(static_cast<int>(frames.size()), reference.length + 1);
  for (int t = 0; t < reference.length; ++t) {
    const std::vector<float> action(reference.actions.begin() + t * 3,
                                    reference.actions.begin() + t * 3 + 3);
    ASSERT_EQ(frames[static_cast<std::size_t>(t)]->action, action) << "step " << t;
    EXPECT_EQ(frames[static_cast<std::size_t>(t)]->interventions, specs);
  }
}

TEST(EpisodePlayer, InterventionsFromAStepOnLeaveTheStepsBeforeAsTheyWere) {
  EpisodePlayer player(shipped_dt);
  player.reset(2, 3600.0);
  const auto original = play_to_end(player, 30);
  player.branch(12, 3600.0, ModalityZeroing::None, {"mlp:3=zero"});
  const auto changed = play_to_end(player, 18);
  ASSERT_EQ(changed.size(), original.size());
  for (std::size_t t = 0; t < 12; ++t) {
    EXPECT_EQ(changed[t]->action, original[t]->action) << "step " << t;
    EXPECT_TRUE(changed[t]->interventions.empty());
  }
  EXPECT_NE(changed[12]->action, original[12]->action) << "the MLP's output reaches the action";
  EXPECT_EQ(changed[12]->interventions, std::vector<std::string>{"mlp:3=zero"});
  // Taking them away again from step 20 plays the plain policy from that state on.
  player.branch(20, 3600.0, ModalityZeroing::None, {});
  ASSERT_TRUE(player.step());
  EXPECT_TRUE(player.frames()[20]->interventions.empty());
}

// A fork continues the episode from its step: with the same settings it plays exactly what the
// original plays; re-conditioned, exactly what the original plays when re-conditioned there the
// same way; and the original is left as it was.
TEST(EpisodePlayer, AForkPlaysWhatTheOriginalPlaysFromItsStep) {
  EpisodePlayer player(shipped_dt);
  player.reset(3, 3600.0);
  player.branch(0, 3600.0, ModalityZeroing::None, {"head:1.1=zero"});
  const auto original = play_to_end(player, 40);
  ASSERT_EQ(original.size(), 41u);

  auto same = player.fork(15);
  ASSERT_EQ(same->frames().size(), 16u);
  EXPECT_FALSE(same->frames().back()->acted);
  const auto replayed = play_to_end(*same, 25);
  ASSERT_EQ(replayed.size(), original.size());
  for (std::size_t t = 0; t + 1 < original.size(); ++t) {
    ASSERT_EQ(replayed[t]->action, original[t]->action) << "step " << t;
    ASSERT_EQ(replayed[t]->physics.qpos, original[t]->physics.qpos) << "step " << t;
  }
  EXPECT_EQ(player.frames(), original) << "the original keeps its frames";

  auto lower = player.fork(15);
  lower->branch(15, 1200.0, ModalityZeroing::None, {"context:2"});
  const auto forked = play_to_end(*lower, 10);
  player.branch(15, 1200.0, ModalityZeroing::None, {"context:2"});
  const auto branched = play_to_end(player, 10);
  ASSERT_EQ(forked.size(), branched.size());
  for (std::size_t t = 0; t + 1 < forked.size(); ++t)
    ASSERT_EQ(forked[t]->action, branched[t]->action) << "step " << t;
  EXPECT_NE(forked[15]->action, original[15]->action);
}

TEST(EpisodePlayer, RefusesAnInterventionItCannotPlayBeforeChangingAnything) {
  EpisodePlayer player(shipped_dt);
  player.reset(2, 3600.0);
  play_to_end(player, 5);
  const auto before = player.frames();
  const std::vector<std::pair<std::string, std::string>> refused{
      {"head:4.1=zero", "head:4.1=zero: the model has 3 layers, 1 to 3"},
      {"head:1.1=resample", "needs a second input"},
      {"steer:1=2*missing.json", "missing.json"},
      {"head:1=zero", "expected head:L.H"}};
  for (const auto& [spec, message] : refused) {
    try {
      player.branch(2, 3600.0, ModalityZeroing::None, {spec});
      ADD_FAILURE() << spec << " was taken";
    } catch (const dstudio::UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr(message)) << spec;
    }
    EXPECT_EQ(player.frames(), before) << spec;
  }
  LivePlayer live(std::make_unique<EpisodePlayer>(shipped_dt));
  EXPECT_THROW(live.set_interventions({"context:21"}), dstudio::UsageError)
      << "the DT's window has 20 steps";
  EXPECT_TRUE(live.interventions().empty());
}

// Forks on one clock: each branch plays exactly what a headless episode played to the fork step
// and re-conditioned there plays; the main run keeps its frames; seeking back to the fork step
// shows every run's exact state there again, and playing on from it replays the kept frames.
TEST(LivePlayer, ForksPlayOnOneClockAsHeadlessEpisodesAndRewindToTheirState) {
  auto player = std::make_unique<EpisodePlayer>(shipped_dt);
  player->reset(4, 3600.0);
  LivePlayer live(std::move(player));
  live.set_speed(0.0);
  live.play();
  wait_for(live, [](const PlaybackState& p) { return p.frames >= 21; });
  live.pause();
  wait_for(live, [](const PlaybackState& p) { return !p.playing && !p.busy; });
  const auto main_before = live.frames();

  live.fork(10, parse_branch_change("target=1200"));
  live.fork(10, parse_branch_change("head:1.1=zero"));
  auto s =
      wait_for(live, [](const PlaybackState& p) { return p.branch_frames.size() == 2 && !p.busy; });
  ASSERT_EQ(s.branch_frames.size(), 2u) << s.fork_error;
  const auto info = live.branches();
  EXPECT_EQ(info[0].fork_step, 10);
  EXPECT_EQ(info[0].label, "target=1200");
  EXPECT_EQ(info[1].fork_step, 10);
  EXPECT_EQ(info[1].frames, s.cursor + 1) << "forked behind the clock, a branch catches up";
  EXPECT_EQ(live.frames(), main_before) << "forking leaves the main run as it was";

  // One clock: from the cursor on, every run steps until the clock reaches step 40.
  live.seek(10);
  live.play();
  s = wait_for(live, [](const PlaybackState& p) { return p.cursor >= 40; });
  live.pause();
  s = wait_for(live, [](const PlaybackState& p) { return !p.playing && !p.busy; });
  const int reached = s.cursor;
  const auto lower = live.branch_frames(0), ablated = live.branch_frames(1);
  ASSERT_GE(static_cast<int>(lower.size()), reached + 1);
  ASSERT_GE(static_cast<int>(ablated.size()), reached + 1);

  // An episode played to the fork step and re-conditioned there, headless.
  const auto headless = [&](double target, const std::vector<std::string>& interventions) {
    EpisodePlayer p(shipped_dt);
    p.reset(4, 3600.0);
    play_to_end(p, 10);
    p.branch(10, target, ModalityZeroing::None, interventions);
    play_to_end(p, reached - 10);
    return p.frames();
  };
  const auto lower_ref = headless(1200.0, {}), ablated_ref = headless(3600.0, {"head:1.1=zero"}),
             plain_ref = headless(3600.0, {});
  for (int t = 0; t < reached; ++t) {
    const auto i = static_cast<std::size_t>(t);
    ASSERT_EQ(lower[i]->action, lower_ref[i]->action) << "target=1200, step " << t;
    ASSERT_EQ(lower[i]->physics.qpos, lower_ref[i]->physics.qpos) << "step " << t;
    ASSERT_EQ(ablated[i]->action, ablated_ref[i]->action) << "head:1.1=zero, step " << t;
    ASSERT_EQ(ablated[i]->physics.qvel, ablated_ref[i]->physics.qvel) << "step " << t;
  }
  EXPECT_NE(lower[10]->action, main_before[10]->action);
  EXPECT_EQ(lower[10]->target, 1200.0);
  EXPECT_EQ(ablated[12]->interventions, std::vector<std::string>{"head:1.1=zero"});
  // The effect on the body: what the plain policy would have done, beside what was done.
  EXPECT_EQ(ablated[10]->action_without, plain_ref[10]->action);
  EXPECT_NE(ablated[10]->action, plain_ref[10]->action);
  EXPECT_TRUE(main_before[10]->action_without.empty());
  EXPECT_FALSE(ablated[12]->inspection) << "a fork of the same policy keeps no mixing";
  EXPECT_TRUE(main_before[12]->inspection);

  // Rewinding to the fork step shows each run's exact state there; playing on replays.
  live.seek(info[0].fork_step);
  s = live.state();
  ASSERT_EQ(s.branch_frames.size(), 2u);
  EXPECT_EQ(s.branch_frames[0]->physics.qpos, main_before[10]->physics.qpos);
  EXPECT_EQ(s.branch_frames[0]->physics.qvel, main_before[10]->physics.qvel);
  EXPECT_EQ(s.branch_frames[1]->physics.qpos, main_before[10]->physics.qpos);
  EXPECT_EQ(s.frame->physics.qpos, main_before[10]->physics.qpos);
  live.step_forward();
  s = wait_for(live, [](const PlaybackState& p) { return p.cursor == 11 && !p.busy; });
  EXPECT_EQ(s.branch_frames[0], lower[11]) << "kept frames are replayed, not recomputed";
  EXPECT_EQ(live.branch_frames(0).size(), lower.size());

  live.remove_branch(0);
  s = wait_for(live, [](const PlaybackState& p) { return p.branch_frames.size() == 1; });
  EXPECT_EQ(live.branches().front().label, "head:1.1=zero");
  live.restart(5);
  s = wait_for(live, [](const PlaybackState& p) { return p.seed == 5 && !p.busy; });
  EXPECT_TRUE(s.branch_frames.empty()) << "a new episode drops the forks of the old one";
}

// A fork asked for a step the main run has not reached is made when it gets there (a lesson or a
// workspace forks at step 100 of an episode that starts at 0); meanwhile the player is idle.
TEST(LivePlayer, AForkOfAStepNotYetReachedIsMadeWhenTheMainRunGetsThere) {
  auto player = std::make_unique<EpisodePlayer>(shipped_dt);
  player->reset(4, 3600.0);
  LivePlayer live(std::move(player));
  live.fork(15, parse_branch_change("target=1200"));
  live.fork(5, parse_branch_change("target=3600"));  // nothing changed: the main run's episode
  auto s = live.state();
  EXPECT_FALSE(s.busy) << "waiting for step 15 is not work under way";
  EXPECT_TRUE(s.branch_frames.empty());
  live.set_speed(0.0);
  live.play();
  s = wait_for(live, [](const PlaybackState& p) { return p.cursor >= 25; });
  live.pause();
  s = wait_for(live, [](const PlaybackState& p) { return !p.playing && !p.busy; });
  ASSERT_EQ(live.branches().size(), 2u);
  EXPECT_EQ(live.branches()[1].fork_step, 15) << "made second, when the main run got there";
  const auto same = live.branch_frames(0), main = live.frames();
  ASSERT_EQ(same.size(), main.size());
  for (std::size_t t = 0; t + 1 < main.size(); ++t) {
    ASSERT_EQ(same[t]->action, main[t]->action) << "step " << t;
    ASSERT_EQ(same[t]->physics.qpos, main[t]->physics.qpos) << "step " << t;
  }
  const auto f = live.branch_frames(1);
  ASSERT_GT(f.size(), 20u);
  EXPECT_EQ(f[14]->target, 3600.0);
  EXPECT_EQ(f[15]->target, 1200.0);
  EXPECT_EQ(f[15]->physics.qpos, live.frames()[15]->physics.qpos);
}

// An episode that has ended has nothing after its last state to fork: a fork there or later is
// refused at once; one asked for a step the episode then ends before is not made, and the state
// says why.
TEST(LivePlayer, AForkAtOrAfterTheEndOfAnEndedEpisodeIsRefused) {
  auto player = std::make_unique<EpisodePlayer>(shipped_dt);
  player->reset(4, 100.0);  // asked for little, the hopper falls early
  LivePlayer live(std::move(player));
  live.fork(5000, parse_branch_change("target=1200"));  // beyond any episode's end
  live.set_speed(0.0);
  live.play();
  auto s = wait_for(live, [](const PlaybackState& p) { return p.finished && !p.busy; });
  ASSERT_TRUE(s.finished);
  const int last = s.frames - 1;
  EXPECT_TRUE(live.branches().empty());
  EXPECT_THAT(s.fork_error, HasSubstr("the episode ended at step " + std::to_string(last) +
                                      ", before step 5000"));
  for (const int step : {last, last + 3}) {
    try {
      live.fork(step, parse_branch_change("target=1200"));
      ADD_FAILURE() << "a fork at step " << step << " was taken";
    } catch (const dstudio::UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr("the episode ended at step " + std::to_string(last)));
    }
  }
  live.fork(last - 1, parse_branch_change("target=1200"));
  s = wait_for(live, [](const PlaybackState& p) { return p.branch_frames.size() == 1; });
  EXPECT_EQ(live.branches().size(), 1u) << s.fork_error;
}

// Another checkpoint taking over from step 0 plays exactly its own episode from the same seed:
// the comparison of two policies from one start. Forks that cannot be made say why at once.
TEST(LivePlayer, AnotherCheckpointForkedAtTheStartPlaysItsOwnEpisodeFromTheSameSeed) {
  test::TempDir dir;
  const auto other = small_checkpoint(dir, "other.pt");
  auto player = std::make_unique<EpisodePlayer>(shipped_dt);
  player->reset(6, 3600.0);
  LivePlayer live(std::move(player));
  live.fork(0, parse_branch_change("checkpoint=" + other.string()));
  auto s = wait_for(live, [](const PlaybackState& p) { return p.branch_frames.size() == 1; });
  ASSERT_EQ(s.branch_frames.size(), 1u) << s.fork_error;
  EXPECT_EQ(live.branches()[0].checkpoint, other.string());
  live.set_speed(0.0);
  live.play();
  s = wait_for(live, [](const PlaybackState& p) { return p.cursor >= 25 || p.finished; });
  live.pause();
  s = wait_for(live, [](const PlaybackState& p) { return !p.playing && !p.busy; });
  const auto taken = live.branch_frames(0);
  EpisodePlayer alone(other);
  alone.reset(6, 3600.0);
  const auto ref = play_to_end(alone, static_cast<int>(taken.size()) - 1);
  ASSERT_GE(taken.size(), 10u);
  for (std::size_t t = 0; t + 1 < taken.size() && t + 1 < ref.size(); ++t)
    ASSERT_EQ(taken[t]->action, ref[t]->action) << "step " << t;
  EXPECT_NE(taken[0]->action, live.frames()[0]->action) << "another policy acts";

  // Refused before anything changes, naming what does not fit.
  const auto refused = [&](const std::string& change, const std::string& message) {
    try {
      live.fork(3, parse_branch_change(change));
      ADD_FAILURE() << change << " was taken";
    } catch (const dstudio::Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(message)) << change;
    }
  };
  refused("head:4.1=zero", "the model has 3 layers");
  refused("checkpoint=" + (dir / "missing.pt").string(), "missing.pt");
  auto walker = make_variant("dt");
  walker.state_dim = 17;
  walker.act_dim = 6;
  walker.hidden = 16;
  walker.layers = 1;
  walker.heads = 1;
  walker.context_length = 3;
  DecisionModel w(walker);
  CheckpointInfo info;
  info.variant = walker;
  info.env_id = "walker2d";
  info.state_mean.assign(17, 0.0f);
  info.state_std.assign(17, 1.0f);
  info.metrics = "{}";
  save_weights_checkpoint(dir / "walker.pt", w, info, "test");
  refused("checkpoint=" + (dir / "walker.pt").string(), "the episode is of hopper");
  for (int i = 0; i < kMaxBranches - 1; ++i) live.fork(2, parse_branch_change("target=100"));
  refused("target=200", "at most 4 branches");
  EXPECT_THROW(parse_branch_change("speed=2"), dstudio::UsageError);
}

// Patching live from another target: the stream after the last block at the action's token,
// taken from the window at target 1200, is the whole of what that target does to the action; a
// head patched moves the action part of the way; patches from two targets at once are refused.
TEST(EpisodePlayer, PatchingFromAnotherTargetPlaysLive) {
  EpisodePlayer low(shipped_dt), patched_run(shipped_dt), plain(shipped_dt);
  low.reset(5, 1200.0);
  plain.reset(5, 3600.0);
  patched_run.reset(5, 3600.0);
  patched_run.branch(0, 3600.0, ModalityZeroing::None, {"patch[1200]:resid:3.59"});
  ASSERT_TRUE(low.step() && patched_run.step() && plain.step());
  const auto& a = patched_run.frames()[0]->action;
  const auto& b = low.frames()[0]->action;
  ASSERT_EQ(a.size(), 3u);
  for (std::size_t j = 0; j < 3; ++j) EXPECT_NEAR(a[j], b[j], 1e-5) << j;
  EXPECT_NE(plain.frames()[0]->action, b) << "the target moves the action";
  EXPECT_EQ(patched_run.frames()[0]->interventions,
            std::vector<std::string>{"patch[1200]:resid:3.59"});
  EXPECT_EQ(patched_run.frames()[0]->action_without, plain.frames()[0]->action);

  // A head's output from the other window moves the action, not all the way.
  EpisodePlayer head(shipped_dt);
  head.reset(5, 3600.0);
  head.branch(0, 3600.0, ModalityZeroing::None, {"patch[1200]:head:1.1"});
  ASSERT_TRUE(head.step());
  EXPECT_NE(head.frames()[0]->action, plain.frames()[0]->action);
  // Playing on, every step patches from its own window.
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(patched_run.step());

  const std::vector<std::pair<std::string, std::string>> refused{
      {"patch[1200]:head:4.1", "the model has 3 layers"},
      {"patch[12x]:head:1.1", "is not a number"},
      {"patch[1200:head:1.1", "expected patch[T]:SITE"}};
  for (const auto& [spec, message] : refused) {
    try {
      head.branch(1, 3600.0, ModalityZeroing::None, {spec});
      ADD_FAILURE() << spec << " was taken";
    } catch (const dstudio::UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr(message)) << spec;
    }
  }
  try {
    head.branch(1, 3600.0, ModalityZeroing::None, {"patch[1200]:head:1.1", "patch[900]:mlp:2"});
    ADD_FAILURE() << "two targets were taken";
  } catch (const dstudio::UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("patch from one target at a time"));
  }
}

// A dataset episode replayed from its simulator states: the recorded frames, the episode's own
// returns-to-go, and no policy to re-condition.
TEST(EpisodePlayer, ReplaysADatasetEpisodeFromItsStates) {
  data::Dataset ds;
  ds.path = "made-here.hdf5";
  ds.env_id = "hopper";
  auto& t = ds.data;
  t.obs_dim = 11;
  t.act_dim = 3;
  t.qpos_dim = 6;
  t.qvel_dim = 6;
  env::Environment e("hopper");
  std::vector<float> obs(11), action(3);
  e.reset(1, obs);
  const int n = 25;
  for (int k = 0; k < n; ++k) {
    t.observations.insert(t.observations.end(), obs.begin(), obs.end());
    for (double q : e.qpos()) t.qpos.push_back(static_cast<float>(q));
    for (double v : e.qvel()) t.qvel.push_back(static_cast<float>(v));
    for (int i = 0; i < 3; ++i)
      action[static_cast<std::size_t>(i)] = static_cast<float>(0.2 * std::sin(k + i));
    t.actions.insert(t.actions.end(), action.begin(), action.end());
    t.rewards.push_back(static_cast<float>(e.step(action, obs).reward));
    t.terminals.push_back(0);
    t.timeouts.push_back(k == n - 1);
  }
  ds.episodes = data::segment_episodes(t.rewards, t.terminals, t.timeouts);
  ASSERT_EQ(ds.episodes.size(), 1u);

  auto replay = EpisodePlayer::replay(ds, 0);
  EXPECT_TRUE(replay->isReplay());
  const auto& frames = replay->frames();
  ASSERT_EQ(frames.size(), static_cast<std::size_t>(n));
  double total = 0.0;
  for (float r : t.rewards) total += r;
  EXPECT_NEAR(frames.front()->return_to_go, total, 1e-9);
  for (int k = 0; k < n; ++k) {
    const auto& f = *frames[static_cast<std::size_t>(k)];
    EXPECT_EQ(f.step, k);
    EXPECT_FLOAT_EQ(static_cast<float>(f.physics.qpos[1]),
                    t.qpos[static_cast<std::size_t>(k) * 6 + 1]);
    EXPECT_EQ(f.action[2], t.actions[static_cast<std::size_t>(k) * 3 + 2]);
    EXPECT_NEAR(f.return_to_go + f.return_so_far, total, 1e-9)
        << "what is to go and what was collected add up";
  }
  EXPECT_TRUE(replay->finished());
  EXPECT_FALSE(frames.back()->terminated) << "it ended by the time limit";
  EXPECT_FALSE(replay->step());
  replay->branch(3, 1.0, ModalityZeroing::ReturnsToGo);
  EXPECT_EQ(replay->frames().size(), static_cast<std::size_t>(n))
      << "a replay cannot be re-conditioned";

  // Played live, a replay keeps the speed asked for as a policy's steps do: at 1/100 of real time
  // its 25 frames take 20 s, so the second frame on screen is far from the last.
  {
    LivePlayer live(EpisodePlayer::replay(ds, 0));
    live.set_speed(0.01);
    live.play();
    const auto s = live.wait_until([](const PlaybackState& p) { return p.cursor >= 1; },
                                   std::chrono::minutes(2));
    EXPECT_LT(s.cursor, n - 2) << "a replay ran as fast as its loop turns";
    live.set_speed(0.0);  // as fast as it goes: to the end
    const auto end =
        live.wait_until([](const PlaybackState& p) { return !p.playing; }, std::chrono::minutes(2));
    EXPECT_EQ(end.cursor, n - 1);
  }

  ds.data.qpos_dim = 0;
  try {
    EpisodePlayer::replay(ds, 0);
    FAIL() << "a dataset without states was replayed";
  } catch (const dstudio::Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("made-here.hdf5: has no infos/qpos"));
  }
  EXPECT_THROW(EpisodePlayer::replay(ds, 5), dstudio::UsageError);
}

// An Adroit episode replayed from a file: every frame carries the episode's own target (the ball's
// resting place and the target of relocate, taken from the first step), so the viewers draw them
// where the episode had them.
TEST(EpisodePlayer, ReplaysAnAdroitEpisodeWithItsOwnTarget) {
  behaviour::AdroitExpertConfig config;
  config.task = "relocate";
  config.episodes = 2;
  config.threads = 1;
  config.seed = 4;
  const auto made =
      behaviour::generate_adroit_expert_dataset(config, behaviour::shipped_dapg_policy("relocate"));
  data::Dataset ds;
  ds.path = "relocate-made-here.hdf5";
  ds.env_id = "relocate";
  ds.data = made.arrays;
  ds.episodes = data::segment_episodes(ds.data.rewards, ds.data.terminals, ds.data.timeouts);
  ASSERT_EQ(ds.episodes.size(), 2u);
  // The episodes' own targets, from the recorded per-step values of their first steps.
  const auto& target = ds.data.state_infos.at("target_pos").values;
  for (int episode = 0; episode < 2; ++episode) {
    const auto replay = EpisodePlayer::replay(ds, episode);
    const auto first =
        static_cast<std::size_t>(ds.episodes[static_cast<std::size_t>(episode)].start);
    for (const auto& f : replay->frames()) {
      ASSERT_EQ(f->physics.task_state.size(), 7u);
      for (int k = 0; k < 3; ++k)
        EXPECT_NEAR(f->physics.task_state[3 + static_cast<std::size_t>(k)],
                    target[first * 3 + static_cast<std::size_t>(k)], 2e-6);
    }
  }
  EXPECT_NE(EpisodePlayer::replay(ds, 0)->frames().front()->physics.task_state,
            EpisodePlayer::replay(ds, 1)->frames().front()->physics.task_state);
}

// A DT of door's sizes, for a checkpoint's episode a behaviour policy takes over.
std::filesystem::path door_checkpoint(const test::TempDir& dir) {
  return save_small_dt(dir, "door-dt.pt",
                       {.env_id = "door",
                        .state_dim = 39,
                        .act_dim = 28,
                        .hidden = 16,
                        .layers = 1,
                        .heads = 1,
                        .context_length = 3,
                        .seed = 3,
                        .weight_scale = 1.0});
}

// The DAPG expert played as a behaviour policy: its mean action, clipped, every frame kept without
// mixing; its episode with a seed returns what score_adroit_expert's mean-action episode with that
// seed returns, and ends at door's horizon. A fork of it refuses interventions.
TEST(EpisodePlayer, ABehaviourPolicyPlaysAsTheExpertsScoreCountsIt) {
  const auto expert = behaviour::shipped_dapg_policy("door");
  auto player = EpisodePlayer::behaviour(expert, "door", "dapg");
  EXPECT_TRUE(player->isBehaviour());
  EXPECT_FALSE(player->isReplay());
  EXPECT_EQ(player->task().name, "door");
  constexpr std::uint64_t seed = 11;
  // score_adroit_expert's episode 0 resets with the first draw of its derived generator.
  player->reset(Random(Random::derive(seed, 0)).next(), 2880.0);
  const auto frames = play_to_end(*player, 1000);
  ASSERT_EQ(frames.size(), 201u) << "door's horizon is 200 steps";
  double ret = 0.0;
  std::vector<float> mean(28);
  for (std::size_t t = 0; t + 1 < frames.size(); ++t) {
    const auto& f = *frames[t];
    ASSERT_TRUE(f.acted);
    EXPECT_FALSE(f.inspection);
    expert.act(f.observation, mean);
    for (int j = 0; j < 28; ++j) ASSERT_EQ(f.action[j], std::clamp(mean[j], -1.0f, 1.0f)) << t;
    ret += f.reward;
  }
  EXPECT_TRUE(frames.back()->terminal);
  EXPECT_FALSE(frames.back()->terminated);
  const auto score = behaviour::score_adroit_expert("door", expert, 1, /*sampled=*/false, seed, 1);
  EXPECT_EQ(ret, score.mean_return);
  EXPECT_GT(ret, 1000.0) << "the expert opens the door";
  EXPECT_THROW(player->branch(5, 2880.0, ModalityZeroing::None, {"head:0.0=zero"}), UsageError);
  // Branching with nothing changed plays the same episode again.
  player->branch(50, 2880.0, ModalityZeroing::None);
  const auto again = play_to_end(*player, 1000);
  ASSERT_EQ(again.size(), frames.size());
  for (std::size_t t = 0; t < frames.size(); ++t)
    ASSERT_EQ(again[t]->physics.qpos, frames[t]->physics.qpos) << t;
}

// Beside a checkpoint: the expert takes over the checkpoint's episode from a step, from the same
// state, and plays on as it would from that state; the checkpoint's run goes on as it was.
TEST(LivePlayer, TheExpertTakesOverACheckpointsEpisodeFromTheStepOnScreen) {
  test::TempDir dir;
  const auto ckpt = door_checkpoint(dir);
  auto player = std::make_unique<EpisodePlayer>(ckpt);
  player->reset(4, 2880.0);
  LivePlayer live(std::move(player));
  live.fork(20, parse_branch_change("behaviour=dapg"));
  live.set_speed(0.0);
  live.play();
  auto s = wait_for(live, [](const PlaybackState& p) { return p.cursor >= 60 || p.finished; });
  live.pause();
  s = wait_for(live, [](const PlaybackState& p) { return !p.playing && !p.busy; });
  ASSERT_EQ(live.branches().size(), 1u) << s.fork_error;
  EXPECT_EQ(live.branches()[0].label, "behaviour=dapg");
  const auto main = live.frames();
  const auto taken = live.branch_frames(0);
  ASSERT_GT(taken.size(), 40u);
  for (int t = 0; t < 20; ++t) ASSERT_EQ(taken[t]->action, main[t]->action) << t;
  EXPECT_EQ(taken[20]->physics.qpos, main[20]->physics.qpos) << "the same state";
  // From the same state alone, the expert plays what the branch played.
  const auto expert = behaviour::shipped_dapg_policy("door");
  EpisodePlayer checkpoint(ckpt);
  checkpoint.reset(4, 2880.0);
  for (int t = 0; t < 20; ++t) ASSERT_TRUE(checkpoint.step());
  ASSERT_EQ(checkpoint.frames()[20]->physics.qpos, main[20]->physics.qpos);
  auto alone = EpisodePlayer::behaviour(expert, "door", "dapg");
  alone->continue_from(checkpoint, 20);
  const auto ref = play_to_end(*alone, static_cast<int>(taken.size()) - 21);
  for (std::size_t t = 20; t + 1 < taken.size() && t + 1 < ref.size(); ++t)
    ASSERT_EQ(taken[t]->action, ref[t]->action) << "step " << t;
  EXPECT_NE(taken[20]->action, main[20]->action) << "another policy acts";
  // The fork made again from its change alone, as a recipe makes it: the policy it names acts.
  auto remade = make_fork(checkpoint, 20, parse_branch_change("behaviour=dapg"), nullptr);
  EXPECT_TRUE(remade->isBehaviour());
  ASSERT_TRUE(remade->step());
  EXPECT_EQ(remade->frames()[20]->action, ref[20]->action);

  // Refused before anything changes: an intervention on the expert, a policy of another task.
  EXPECT_THROW(live.fork(3, parse_branch_change("behaviour=no-such-file.hdf5")), UsageError);
  try {
    auto p = parse_branch_change("behaviour=dapg");
    p.interventions = {"head:0.0=zero"};
    live.fork(3, p);
    ADD_FAILURE() << "an intervention on a behaviour policy was taken";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no layers of a model"));
  }
}

// The knockout plays its episodes context after context, each rollout counting its steps from 0
// again: its progress says which context it is at, so the stage never seems to go backwards.
TEST(Knockout, ItsProgressSaysWhichContextTheEpisodesArePlayedAt) {
  test::TempDir dir;
  const auto ckpt = small_checkpoint(dir, "dt.pt");
  test::D4rlSpec spec;
  spec.n = 60, spec.obs_dim = 11, spec.act_dim = 3;
  spec.timeouts.assign(60, 0);
  for (int t = 19; t < 60; t += 20) spec.timeouts[static_cast<std::size_t>(t)] = 1;
  const auto data = dir / "hopper-windows.hdf5";
  test::write_d4rl_fixture(data, spec);
  const auto def = analysis::analysis_registry().find("knockout");
  ASSERT_NE(def, nullptr);
  std::mutex lock;
  std::vector<std::string> stages;
  Progress progress;
  progress.report = [&](double, std::string_view stage) {
    const std::lock_guard hold(lock);
    stages.emplace_back(stage);
  };
  const auto result = analysis::run_analysis(
      *def,
      {ckpt.string(), data.string(),
       analysis::AnalysisOptions({{"windows", "2"}, {"episodes", "1"}, {"threads", "1"}}), nullptr},
      progress);
  ASSERT_FALSE(result.tables.empty());
  std::vector<int> contexts;  // in the order their stages came
  for (const auto& stage : stages)
    if (stage.rfind("context ", 0) == 0) {
      EXPECT_NE(stage.find(" of 5, "), std::string::npos) << stage;
      const int c = std::stoi(stage.substr(8));
      if (contexts.empty() || contexts.back() != c) contexts.push_back(c);
    }
  EXPECT_EQ(contexts, (std::vector<int>{1, 2, 3, 4, 5}));
}

// A model whose whole window never scores (a random DT in the umaze, which never reaches the
// goal) has no score for a shorter context to keep: the knockout names no smallest context,
// rather than calling one step enough.
TEST(Knockout, NamesNoSmallestContextWhenTheWholeWindowScoresNothing) {
  test::TempDir dir;
  const auto ckpt = save_small_dt(
      dir, "maze-dt.pt",
      {.env_id = "antmaze-umaze-v2", .state_dim = 29, .act_dim = 8, .context_length = 3});
  test::D4rlSpec spec;
  spec.n = 40, spec.obs_dim = 29, spec.act_dim = 8;
  spec.timeouts.assign(40, 0);
  spec.timeouts[19] = spec.timeouts[39] = 1;
  const auto data = dir / "antmaze-umaze-v2-windows.hdf5";
  test::write_d4rl_fixture(data, spec);
  const auto def = analysis::analysis_registry().find("knockout");
  ASSERT_NE(def, nullptr);
  const auto result = analysis::run_analysis(
      *def,
      {ckpt.string(), data.string(),
       analysis::AnalysisOptions({{"windows", "2"}, {"episodes", "1"}, {"threads", "1"}}), nullptr},
      {});
  const auto summary = nlohmann::json::parse(result.summary_json);
  const auto& row = summary.at("models").at(0);
  ASSERT_EQ(row.at("score").size(), 3u);
  for (const auto& score : row.at("score")) EXPECT_EQ(score.get<double>(), 0.0);
  EXPECT_FALSE(row.contains("smallest_context_keeping_95_percent")) << row.dump();
}

}  // namespace
}  // namespace dstudio::models
