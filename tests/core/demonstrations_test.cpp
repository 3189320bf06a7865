// DAPG's door demonstrations, and door-human made from them as D4RL's hand_dapg_demos.py made it.

#include "dstudio/behaviour/demonstrations.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "dstudio/common/error.h"
#include "dstudio/common/resources.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/env/environment.h"
#include "h5_fixture.h"

namespace dstudio::behaviour {
namespace {

using testing::Contains;
using testing::HasSubstr;

// The shipped demonstrations are hand_dapg's 25, 6,729 steps in all (Minari's door human-v2 counts
// the same), each starting from a full state of the door task.
TEST(Demonstrations, TheDoorsAreDapgsTwentyFive) {
  const auto demos = shipped_demonstrations("door-human-v1");
  EXPECT_EQ(demos.task, "door");
  EXPECT_THAT(demos.source, HasSubstr("hand_dapg"));
  EXPECT_THAT(demos.source, HasSubstr("Apache-2.0"));
  ASSERT_EQ(demos.episodes.size(), 25u);
  EXPECT_EQ(demos.steps(), 6729);
  const auto& spec = env::task("door");
  for (const auto& e : demos.episodes) {
    EXPECT_EQ(e.qpos.size(), static_cast<std::size_t>(spec.nq));
    EXPECT_EQ(e.actions.size(), static_cast<std::size_t>(e.steps * spec.act_dim));
    ASSERT_EQ(e.state.size(), 1u);
    EXPECT_EQ(e.state.at("door_body_pos").size(), 3u);
  }
  // People command beyond the actuators' range: the replay clips, as D4RL's script does.
  const auto& a = demos.episodes[0].actions;
  EXPECT_GT(*std::max_element(a.begin(), a.end()), 1.0f);
}

TEST(Demonstrations, PenHammerAndRelocateNameTheFileToBring) {
  for (const char* task : {"pen", "hammer", "relocate"}) {
    try {
      (void)shipped_demonstrations(task);
      ADD_FAILURE() << task << " has no shipped demonstrations";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(std::string(task) + "-human-v1.hdf5"));
    }
  }
}

std::span<const float> row(const std::vector<float>& values, std::int64_t i, std::int64_t width) {
  return std::span<const float>(values).subspan(static_cast<std::size_t>(i * width),
                                                static_cast<std::size_t>(width));
}

// The replay: one row a step, each demonstration from its own recorded state, the actions
// clipped, no terminal, a timeout at each demonstration's last step whatever the task's horizon,
// and infos/qpos, infos/qvel and infos/door_body_pos the state each observation was taken at. It
// follows the recording: most demonstrations earn the reward they earned when they were recorded
// (a wrong start, a wrong frame or unclipped actions would not).
TEST(Demonstrations, DoorHumanIsTheDemonstrationsReplayedAsD4rlReplaysThem) {
  const auto demos = shipped_demonstrations("door");
  ReplayAgreement agreement;
  const auto made = replay_demonstrations(demos, {}, &agreement);
  const auto& d = made.arrays;
  const auto& spec = env::task("door");
  ASSERT_EQ(d.size(), 6729);
  EXPECT_GE(agreement.within, 14);  // 15 of 25 on MuJoCo 2.2.2
  EXPECT_NEAR(agreement.replayed_return, agreement.recorded_return,
              0.01 * agreement.recorded_return);
  EXPECT_EQ(made.metadata.at("kind"), "human");
  EXPECT_EQ(made.metadata.at("episodes"), "25");

  std::int64_t start = 0;
  env::Environment e("door");
  std::vector<float> obs(static_cast<std::size_t>(spec.obs_dim));
  for (const auto& demo : demos.episodes) {
    const std::int64_t end = start + demo.steps;
    for (std::int64_t i = start; i < end; ++i) {
      EXPECT_EQ(d.terminals[static_cast<std::size_t>(i)], 0);
      EXPECT_EQ(d.timeouts[static_cast<std::size_t>(i)], i == end - 1 ? 1 : 0) << i;
    }
    // The first row: the demonstration's own state.
    for (int j = 0; j < spec.nq; ++j)
      EXPECT_EQ(d.qpos[static_cast<std::size_t>(start * spec.nq + j)],
                static_cast<float>(demo.qpos[static_cast<std::size_t>(j)]));
    const auto& frame = d.state_infos.at("door_body_pos");
    for (int j = 0; j < 3; ++j)
      EXPECT_EQ(frame.values[static_cast<std::size_t>(start * 3 + j)],
                static_cast<float>(demo.state.at("door_body_pos")[static_cast<std::size_t>(j)]));
    // Every action the person's, clipped.
    const auto actions = row(d.actions, start, spec.act_dim);
    for (int j = 0; j < spec.act_dim; ++j)
      EXPECT_EQ(actions[static_cast<std::size_t>(j)],
                std::clamp(demo.actions[static_cast<std::size_t>(j)], -1.0f, 1.0f));
    start = end;
  }

  // A step of the replay is the door task's step from the recorded state: set a middle row's
  // state (qpos, qvel and the frame) in a fresh environment, act, and get the next row, to the
  // float32 rounding of the recorded state. (The row's own observation is not compared: an
  // observation after a step holds the sites' positions of the last physics step's start, as
  // D4RL's does, which setting the state cannot reproduce.)
  const std::int64_t i = 1234;
  ASSERT_EQ(d.timeouts[static_cast<std::size_t>(i)], 0);
  const auto q = row(d.qpos, i, spec.nq), v = row(d.qvel, i, spec.nv);
  const auto f = row(d.state_infos.at("door_body_pos").values, i, 3);
  e.reset(0, obs);
  e.set_task_state(std::vector<double>{f[0], f[1], f[2], 0.0});
  e.set_state(std::vector<double>(q.begin(), q.end()), std::vector<double>(v.begin(), v.end()));
  const auto r = e.step(row(d.actions, i, spec.act_dim), obs);
  const auto next = row(d.observations, i + 1, spec.obs_dim);
  for (int j = 0; j < spec.obs_dim; ++j)
    EXPECT_NEAR(obs[static_cast<std::size_t>(j)], next[static_cast<std::size_t>(j)], 1e-3) << j;
  EXPECT_NEAR(r.reward, d.rewards[static_cast<std::size_t>(i)], 1e-2);
}

TEST(Demonstrations, WrittenAndReadBackWithD4rlsKeysAndEpisodes) {
  auto made = replay_demonstrations(shipped_demonstrations("door"));
  test::TempDir dir;
  data::write_d4rl(dir / "door-human.hdf5", made.arrays, made.metadata);
  const auto back = data::load_dataset(dir / "door-human.hdf5");
  std::vector<std::string> keys;
  for (const auto& a : back.arrays) keys.push_back(a.key);
  for (const char* key : {"observations", "actions", "rewards", "terminals", "timeouts",
                          "infos/qpos", "infos/qvel", "infos/door_body_pos"})
    EXPECT_THAT(keys, Contains(std::string(key)));
  EXPECT_EQ(back.env_id, "door");
  ASSERT_EQ(back.episodes.size(), 25u);
  for (const auto& e : back.episodes) EXPECT_EQ(e.end, data::EndReason::Timeout);
  EXPECT_TRUE(back.data == made.arrays);
}

std::string shipped_text() {
  return std::string(*embedded_resource("demonstrations/door-human.json"));
}

// A damaged document is refused by name: where, which demonstration, which field.
TEST(Demonstrations, DamagedDocumentsAreRefusedSayingWhere) {
  auto j = nlohmann::json::parse(shipped_text());
  const auto refused = [](const nlohmann::json& doc) -> std::string {
    try {
      (void)demonstrations_from_json_text(doc.dump(), "demos.json");
    } catch (const Error& e) {
      return e.what();
    }
    return "accepted";
  };
  auto other = j;
  other["format"] = "dstudio-mlp-policy-1";
  EXPECT_THAT(refused(other), HasSubstr("demos.json: not a dstudio-demonstrations-1 document"));
  auto short_actions = j;
  short_actions["episodes"][3]["steps"] = 1000;
  EXPECT_THAT(refused(short_actions), HasSubstr("\"actions\" in demonstration 3 holds"));
  auto wrong_task = j;
  wrong_task["task"] = "hopper";
  EXPECT_THAT(refused(wrong_task), HasSubstr("hopper has 11 and 3"));
  auto not_base64 = j;
  not_base64["episodes"][0]["qvel"] = "!!!!";
  EXPECT_THAT(refused(not_base64), HasSubstr("\"qvel\" in demonstration 0"));
  // A NaN in a state: 8 bytes of a quiet NaN, little-endian.
  auto nan_state = j;
  nan_state["episodes"][2]["door_body_pos"] = "AAAAAAAA+H8AAAAAAAD4fwAAAAAAAPh/";
  EXPECT_THAT(refused(nan_state), HasSubstr("\"door_body_pos\" in demonstration 2 value 0 is not "
                                            "finite"));
  EXPECT_THAT(refused(nlohmann::json::array()), HasSubstr("demos.json: not a JSON object"));

  // A demonstration without the door's frame cannot be started where it was recorded.
  auto demos = demonstrations_from_json_text(shipped_text(), "door-human.json");
  demos.episodes[4].state.clear();
  try {
    (void)replay_demonstrations(demos);
    ADD_FAILURE() << "replayed without door_body_pos";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("demonstration 4 has no door_body_pos"));
  }
}

}  // namespace
}  // namespace dstudio::behaviour
