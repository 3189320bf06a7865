// Adroit expert data made as D4RL's hand_dapg_policies.py made it, D4RL's Adroit files read with
// their state keys and quirks, and the task state a replay takes from them.

#include "dstudio/behaviour/adroit_data.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cmath>

#include "dstudio/data/dataset_io.h"
#include "dstudio/env/environment.h"
#include "h5_fixture.h"

namespace dstudio::behaviour {
namespace {

using testing::Contains;
using testing::HasSubstr;

AdroitExpertConfig small(const std::string& task, int threads, int episodes = 3) {
  AdroitExpertConfig c;
  c.task = task;
  c.episodes = episodes;
  c.threads = threads;
  c.seed = 7;
  return c;
}

std::span<const float> row(const std::vector<float>& values, std::int64_t i, std::int64_t width) {
  return std::span<const float>(values).subspan(static_cast<std::size_t>(i * width),
                                                static_cast<std::size_t>(width));
}

// Door's expert: 200 steps an episode, the last a timeout and never a terminal; the action the
// expert's sample clipped to [-1, 1]; infos/action_mean and action_log_std the expert's Gaussian at
// the recorded observation; infos/qpos the state the observation was taken at; the door's frame one
// place per episode inside D4RL's reset ranges. The same seed gives the same arrays at any thread
// count.
TEST(AdroitData, TheExpertDataIsRecordedAsD4rlsScriptRecordsIt) {
  const auto expert = shipped_dapg_policy("door");
  const auto made = generate_adroit_expert_dataset(small("door-expert-v1", 1), expert);
  const auto& d = made.arrays;
  ASSERT_EQ(d.size(), 3 * 200);
  EXPECT_EQ(d.qpos_dim, 30);
  EXPECT_EQ(d.qvel_dim, 30);
  const auto& mean = d.state_infos.at("action_mean");
  const auto& log_std = d.state_infos.at("action_log_std");
  const auto& frame = d.state_infos.at("door_body_pos");
  ASSERT_EQ(frame.dim, 3);
  std::vector<float> m(28), l(28);
  for (std::int64_t i = 0; i < d.size(); ++i) {
    const bool last = (i + 1) % 200 == 0;
    EXPECT_EQ(d.timeouts[static_cast<std::size_t>(i)], last) << i;
    EXPECT_EQ(d.terminals[static_cast<std::size_t>(i)], 0) << i;
    for (const float a : row(d.actions, i, 28)) {
      ASSERT_GE(a, -1.0f);
      ASSERT_LE(a, 1.0f);
    }
    expert.distribution(row(d.observations, i, 39), m, l);
    for (int k = 0; k < 28; ++k) {
      ASSERT_EQ(row(mean.values, i, 28)[k], m[k]) << i;
      ASSERT_EQ(row(log_std.values, i, 28)[k], l[k]) << i;
    }
    // Door observes qpos[1:28], then the latch qpos[29]: from the state recorded beside it.
    for (int k = 0; k < 27; ++k)
      ASSERT_EQ(row(d.observations, i, 39)[k], row(d.qpos, i, 30)[k + 1]) << i;
    ASSERT_EQ(row(d.observations, i, 39)[27], row(d.qpos, i, 30)[29]) << i;
    const auto f = row(frame.values, i, 3);
    EXPECT_GE(f[0], -0.3f);
    EXPECT_LE(f[0], -0.2f);
    EXPECT_GE(f[1], 0.25f);
    EXPECT_LE(f[1], 0.35f);
    EXPECT_GE(f[2], 0.252f);
    EXPECT_LE(f[2], 0.35f);
    if (i % 200 != 0) {
      for (int k = 0; k < 3; ++k) ASSERT_EQ(f[k], row(frame.values, i - 1, 3)[k]);
    }
  }
  // The sampled actions differ from the means where the mean is inside [-1, 1] (D4RL sampled).
  int differ = 0;
  for (std::size_t i = 0; i < d.actions.size(); ++i)
    differ += std::abs(mean.values[i]) < 0.9f && d.actions[i] != mean.values[i];
  EXPECT_GT(differ, static_cast<int>(d.actions.size()) / 2);

  const auto two = generate_adroit_expert_dataset(small("door", 2), expert);
  EXPECT_TRUE(two.arrays == d);
  EXPECT_EQ(made.metadata.at("env_id"), "door");
  EXPECT_EQ(made.metadata.at("algorithm"), "DAPG");
  EXPECT_THAT(made.metadata.at("behaviour_policy"), HasSubstr("sampled"));

  // Written and read back: D4RL's keys; the door's frame read as its state, the policy's Gaussian
  // left in the file (a replay does not need it).
  test::TempDir dir;
  data::write_d4rl(dir / "door.hdf5", d, made.metadata);
  const auto back = data::load_dataset(dir / "door.hdf5");
  std::vector<std::string> keys;
  for (const auto& a : back.arrays) keys.push_back(a.key);
  for (const char* key :
       {"observations", "actions", "rewards", "terminals", "timeouts", "infos/qpos", "infos/qvel",
        "infos/door_body_pos", "infos/action_mean", "infos/action_log_std"})
    EXPECT_THAT(keys, Contains(std::string(key)));
  ASSERT_EQ(back.data.state_infos.size(), 1u);
  EXPECT_EQ(back.data.state_infos.at("door_body_pos"), frame);
  EXPECT_EQ(back.env_id, "door");
  ASSERT_EQ(back.episodes.size(), 3u);
  EXPECT_EQ(back.episodes[0].end, data::EndReason::Timeout);

  // Isolated in the reader process, the same.
  data::LoadOptions isolated;
  isolated.isolate = true;
  EXPECT_TRUE(data::load_dataset(dir / "door.hdf5", isolated).data == back.data);
}

// Pen ends when the pen drops: such an episode is shorter, its last step a terminal (never at the
// horizon's last step, which is a timeout). Its target orientation is recorded as D4RL's
// desired_orien, a unit quaternion, and is what a replay puts back.
TEST(AdroitData, PenEndsWhereThePenDropsAndRecordsItsTarget) {
  const auto made = generate_adroit_expert_dataset(small("pen", 2, 12), shipped_dapg_policy("pen"));
  const auto& d = made.arrays;
  const auto& orien = d.state_infos.at("desired_orien");
  ASSERT_EQ(orien.dim, 4);
  std::int64_t start = 0, episodes = 0;
  const auto& spec = env::task("pen");
  const auto model = env::load_model(spec);
  for (std::int64_t i = 0; i < d.size(); ++i) {
    const auto q = row(orien.values, i, 4);
    EXPECT_NEAR(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3], 1.0, 1e-5);
    const bool end =
        d.terminals[static_cast<std::size_t>(i)] || d.timeouts[static_cast<std::size_t>(i)];
    EXPECT_FALSE(d.terminals[static_cast<std::size_t>(i)] &&
                 d.timeouts[static_cast<std::size_t>(i)]);
    if (d.timeouts[static_cast<std::size_t>(i)]) {
      EXPECT_EQ(i - start + 1, 100);
    }
    std::vector<double> qpos(30);
    for (int k = 0; k < 30; ++k) qpos[static_cast<std::size_t>(k)] = row(d.qpos, i, 30)[k];
    const auto state = spec.replayed_task_state(model.get(), qpos, row(d.observations, i, 45),
                                                {{"desired_orien", q}});
    ASSERT_EQ(state.size(), 5u);
    for (int k = 0; k < 4; ++k) EXPECT_EQ(state[static_cast<std::size_t>(k)], q[k]);
    EXPECT_EQ(state[4], 0.0);
    if (end) start = i + 1, ++episodes;
  }
  EXPECT_EQ(episodes, 12);
  EXPECT_EQ(start, d.size());
  // Without the key, the model's own target: the scene stays whole.
  const auto fallback = spec.replayed_task_state(model.get(), std::vector<double>(30, 0.0),
                                                 row(d.observations, 0, 45), {});
  const int target = mj_name2id(model.get(), mjOBJ_BODY, "target");
  for (int k = 0; k < 4; ++k)
    EXPECT_EQ(fallback[static_cast<std::size_t>(k)], model->body_quat[4 * target + k]);
}

// Relocate records each step's ball, target and palm (D4RL's own files repeat one row); a replay
// takes the ball's base and the target from the episode's first observation and qpos, as they
// were set at reset. A later step's observation lags its qpos by a physics step (D4RL reads it
// without a forward pass), so only the first is exact.
TEST(AdroitData, RelocateIsReplayedFromItsFirstObservation) {
  const auto& spec = env::task("relocate");
  const auto model = env::load_model(spec);
  env::Environment e(spec, model);
  std::vector<float> obs(39), action(30);
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    e.reset(seed, obs);
    const auto state = spec.replayed_task_state(model.get(), e.qpos(), obs, {});
    ASSERT_EQ(state.size(), 7u);
    for (int k = 0; k < 6; ++k)
      EXPECT_NEAR(state[static_cast<std::size_t>(k)], e.task_state()[static_cast<std::size_t>(k)],
                  2e-6)
          << "seed " << seed << " value " << k;
  }
  const auto recorded_first = e.recorded_state();
  Random random(5);
  for (int t = 0; t < 30; ++t) {
    for (auto& a : action) a = static_cast<float>(random.uniform(-1.0, 1.0));
    e.step(action, obs);
  }
  const auto recorded_last = e.recorded_state();
  EXPECT_EQ(recorded_last.at("hand_qpos").size(), 30u);
  EXPECT_NE(recorded_first.at("palm_pos"), recorded_last.at("palm_pos"))
      << "each step's values, not one row repeated";
  EXPECT_THROW(
      spec.replayed_task_state(model.get(), e.qpos(), std::span<const float>(obs).first(9), {}),
      env::EnvError);
}

// D4RL's relocate files hold one row in obj_pos, target_pos and palm_pos: read, and said. The
// task comes from D4RL's file names, v1 and v0.
TEST(AdroitData, D4rlsFilesAreNamedByTheirFileNameAndRelocatesQuirkIsSaid) {
  EXPECT_EQ(data::d4rl_adroit_task_of_file("/x/relocate-expert-v1.hdf5"), "relocate-expert-v1");
  EXPECT_EQ(data::d4rl_adroit_task_of_file("door-v0_demos_clipped.hdf5"), "door-human-v0");
  EXPECT_EQ(data::d4rl_adroit_task_of_file("hammer-demos-v0-bc-combined.hdf5"), "hammer-cloned-v0");
  EXPECT_EQ(data::d4rl_adroit_task_of_file("pen-v0_expert_clipped.hdf5"), "pen-expert-v0");
  EXPECT_EQ(data::d4rl_adroit_task_of_file("pendulum-expert-v1.hdf5"), "");
  EXPECT_EQ(data::d4rl_adroit_task_of_file("door-medium-v1.hdf5"), "");

  auto made =
      generate_adroit_expert_dataset(small("relocate", 2, 2), shipped_dapg_policy("relocate"));
  auto& d = made.arrays;
  d.state_infos.erase("action_mean");
  d.state_infos.erase("action_log_std");
  // As D4RL wrote it: no metadata naming the task, and the last row in every row.
  for (const char* key : {"obj_pos", "target_pos", "palm_pos"}) {
    auto& info = d.state_infos.at(key);
    const std::vector<float> last(info.values.end() - 3, info.values.end());
    for (std::size_t i = 0; i < info.values.size(); ++i) info.values[i] = last[i % 3];
  }
  test::TempDir dir;
  data::write_d4rl(dir / "relocate-expert-v1.hdf5", d);
  const auto back = data::load_dataset(dir / "relocate-expert-v1.hdf5");
  EXPECT_EQ(back.env_id, "relocate-expert-v1");
  EXPECT_EQ(env::task(back.env_id).name, "relocate");
  EXPECT_THAT(back.notes, Contains(HasSubstr("the environment is relocate-expert-v1, from D4RL's "
                                             "file name")));
  EXPECT_THAT(back.notes,
              Contains(HasSubstr("infos/obj_pos, infos/palm_pos and infos/target_pos hold one "
                                 "value in every row")));
  EXPECT_EQ(back.data.state_infos.at("obj_pos").dim, 3);
  EXPECT_EQ(back.data.state_infos.count("hand_qpos"), 0u) << "qpos holds it already";
}

// The expert played as D4RL played it: a score is the same for the same seed at any thread count;
// an expert of another task is refused.
TEST(AdroitData, AnExpertsScoreIsReproducibleAndNeedsItsOwnTask) {
  const auto expert = shipped_dapg_policy("hammer");
  const auto one = score_adroit_expert("hammer", expert, 4, true, 3, 1);
  const auto two = score_adroit_expert("hammer", expert, 4, true, 3, 2);
  EXPECT_EQ(one.mean_return, two.mean_return);
  EXPECT_EQ(one.successes, two.successes);
  EXPECT_NEAR(one.mean_score,
              100.0 * (one.mean_return - env::task("hammer").ref_min_score) /
                  (env::task("hammer").ref_max_score - env::task("hammer").ref_min_score),
              1e-9);
  EXPECT_GT(one.score_ci95, 0.0);
  EXPECT_THROW(score_adroit_expert("door", expert, 1, true), Error);
  EXPECT_THROW(score_adroit_expert("hopper", expert, 1, true), UsageError);
}

}  // namespace
}  // namespace dstudio::behaviour
