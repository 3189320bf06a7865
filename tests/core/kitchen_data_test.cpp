// The kitchen's data: D4RL's kitchen files (no timeouts, a terminal per demonstration, 'infos'
// an array), Minari's D4RL/kitchen (another task: nested dict observations) and D4RL/<adroit>
// files (states under each episode), and relay-policy-learning's .mjl logs replayed into D4RL's
// layout as D4RL's script replayed them.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cmath>
#include <cstring>
#include <fstream>

#include "dstudio/behaviour/kitchen_demos.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/env/environment.h"
#include "dstudio/models/dataset_fit.h"
#include "h5_fixture.h"

namespace dstudio {
namespace {

using testing::HasSubstr;

// D4RL's kitchen file as its script wrote it: float32 terminals on each demonstration's last
// step, no timeouts, 'infos' the demonstration index (an int array, not a group).
void write_d4rl_kitchen(const std::filesystem::path& path, const std::vector<int>& lengths) {
  test::H5Writer w(path);
  std::vector<double> obs, act, rew, term, infos;
  for (std::size_t k = 0; k < lengths.size(); ++k)
    for (int t = 0; t < lengths[k]; ++t) {
      for (int j = 0; j < 60; ++j) obs.push_back(0.001 * t + 0.01 * j);
      for (int a = 0; a < 9; ++a) act.push_back(0.1 * a);
      rew.push_back(t % 3);
      term.push_back(t + 1 == lengths[k] ? 1.0 : 0.0);
      infos.push_back(static_cast<double>(k));
    }
  const auto n = static_cast<hsize_t>(rew.size());
  w.numbers("observations", obs, {n, 60}, H5T_IEEE_F32LE, true);
  w.numbers("actions", act, {n, 9}, H5T_IEEE_F32LE, true);
  w.numbers("rewards", rew, {n}, H5T_IEEE_F32LE, true);
  w.numbers("terminals", term, {n}, H5T_IEEE_F32LE, true);
  w.numbers("infos", infos, {n}, H5T_STD_I64LE, true);
}

TEST(KitchenData, D4rlsKitchenFilesAreDemonstrationsEndedByTerminalsWithoutTimeouts) {
  test::TempDir dir;
  const auto file = dir / "mini_kitchen_microwave_kettle_light_slider-v0.hdf5";
  // A demonstration longer than 1,000 steps is not cut as a file without timeouts would be.
  write_d4rl_kitchen(file, {1200, 5, 4});
  const auto ds = data::load_dataset(file);
  EXPECT_EQ(ds.env_id, "kitchen-complete-v0");
  EXPECT_FALSE(ds.timeouts_synthesized);
  ASSERT_EQ(ds.episodes.size(), 3u);
  EXPECT_EQ(ds.episodes[0].length, 1200);
  EXPECT_EQ(ds.episodes[1].length, 5);
  EXPECT_EQ(ds.episodes[2].length, 4);
  for (const auto& ep : ds.episodes) EXPECT_EQ(ep.end, data::EndReason::Terminal);
  EXPECT_DOUBLE_EQ(ds.episodes[1].ret, 0 + 1 + 2 + 0 + 1);
  for (const auto& w : ds.warnings) EXPECT_THAT(w, testing::Not(HasSubstr("timeouts"))) << w;
  std::string notes;
  for (const auto& n : ds.notes) notes += n + "\n";
  EXPECT_THAT(notes, HasSubstr("no 'timeouts'"));
  EXPECT_THAT(notes, HasSubstr("3 episodes is one demonstration (4 to 1200 steps)"));
  EXPECT_THAT(notes, HasSubstr("within 0.3 of their goals"));
  EXPECT_THAT(notes, HasSubstr("'infos' is one array"));
  bool infos_listed = false;
  for (const auto& a : ds.arrays) infos_listed |= a.key == "infos";
  EXPECT_TRUE(infos_listed);
  EXPECT_EQ(env::task(ds.env_id).name, "kitchen-complete-v0");

  EXPECT_EQ(data::d4rl_kitchen_task_of_file("/x/kitchen_microwave_kettle_light_slider-v0.hdf5"),
            "kitchen-partial-v0");
  EXPECT_EQ(data::d4rl_kitchen_task_of_file("kitchen_microwave_kettle_bottomburner_light-v0.hdf5"),
            "kitchen-mixed-v0");
  EXPECT_EQ(data::d4rl_kitchen_task_of_file("kitchen-mixed-v0.hdf5"), "kitchen-mixed-v0");
  EXPECT_EQ(data::d4rl_kitchen_task_of_file("hopper-medium-v2.hdf5"), "");
  // Read in the reader process too.
  data::LoadOptions isolated;
  isolated.isolate = true;
  EXPECT_EQ(data::load_dataset(file, isolated).episodes.size(), 3u);
}

// Minari's D4RL/kitchen/complete-v2: FrankaKitchen-v1's nested dict observations, truncated
// episodes (Minari ends an episode the collector left open with a truncation).
void write_minari_kitchen(const std::filesystem::path& path) {
  std::filesystem::create_directories(path.parent_path());
  test::H5Writer w(path);
  const std::vector<std::pair<std::string, int>> elements = {
      {"kettle", 7}, {"light switch", 2}, {"microwave", 1}, {"slide cabinet", 1}};
  const int lengths[] = {4, 3};
  for (int e = 0; e < 2; ++e) {
    const std::string g = "episode_" + std::to_string(e);
    const int T = lengths[e];
    const auto rows = static_cast<hsize_t>(T + 1);
    for (const char* part : {"achieved_goal", "desired_goal"})
      for (const auto& [name, dim] : elements) {
        std::vector<double> v;
        for (int t = 0; t <= T; ++t)
          for (int j = 0; j < dim; ++j) v.push_back(part[0] == 'a' ? 0.5 * t : -0.75);
        w.numbers(g + "/observations/" + part + "/" + name, v, {rows, static_cast<hsize_t>(dim)},
                  H5T_IEEE_F64LE);
      }
    std::vector<double> observation, act, rew;
    for (int t = 0; t <= T; ++t)
      for (int j = 0; j < 59; ++j) observation.push_back(100.0 * e + t + 0.001 * j);
    for (int t = 0; t < T; ++t) {
      for (int k = 0; k < 9; ++k) act.push_back(0.01 * k);
      rew.push_back(t == T - 1 ? 1.0 : 0.0);
    }
    w.numbers(g + "/observations/observation", observation, {rows, 59}, H5T_IEEE_F64LE);
    w.numbers(g + "/actions", act, {rows - 1, 9}, H5T_IEEE_F32LE);
    w.numbers(g + "/rewards", rew, {rows - 1}, H5T_IEEE_F64LE);
    std::vector<int> term(static_cast<std::size_t>(T), 0), trunc(static_cast<std::size_t>(T), 0);
    trunc.back() = 1;
    w.bools(g + "/terminations", term, {rows - 1});
    w.bools(g + "/truncations", trunc, {rows - 1});
    std::vector<double> ctrl(static_cast<std::size_t>((T + 1) * 9), 0.2);
    w.numbers(g + "/infos/ctrl", ctrl, {rows, 9}, H5T_IEEE_F64LE);
  }
  w.attribute("/", "total_episodes", static_cast<std::int64_t>(2));
  w.attribute("/", "total_steps", static_cast<std::int64_t>(7));
  w.attribute("/", "dataset_id", std::string("D4RL/kitchen/complete-v2"));
  w.attribute("/", "env_spec",
              std::string(R"({"id": "FrankaKitchen-v1", "max_episode_steps": 280})"));
}

TEST(KitchenData, MinarisKitchenLoadsItsNestedDictsAndIsNamedAsTheOtherTaskItIs) {
  test::TempDir dir;
  const auto file = dir / "D4RL" / "kitchen" / "complete-v2" / "data" / "main_data.hdf5";
  write_minari_kitchen(file);
  const auto ds = data::load_dataset(file.parent_path().parent_path());
  EXPECT_EQ(ds.format, "minari");
  EXPECT_EQ(ds.env_id, "FrankaKitchen-v1");
  // achieved_goal 11, desired_goal 11, observation 59.
  ASSERT_EQ(ds.data.obs_dim, 81);
  ASSERT_EQ(ds.episodes.size(), 2u);
  EXPECT_EQ(ds.episodes[0].length, 4);
  EXPECT_EQ(ds.episodes[0].end, data::EndReason::Timeout);
  EXPECT_EQ(ds.episodes[1].length, 3);
  // Row 5 is episode 1's step 1: its achieved kettle (column 0) 0.5, desired (11) -0.75, and its
  // observation from column 22.
  EXPECT_FLOAT_EQ(ds.data.observations[5 * 81 + 0], 0.5f);
  EXPECT_FLOAT_EQ(ds.data.observations[5 * 81 + 11], -0.75f);
  EXPECT_FLOAT_EQ(ds.data.observations[5 * 81 + 22], 101.0f);
  EXPECT_FLOAT_EQ(ds.data.observations[5 * 81 + 22 + 58], 101.058f);
  EXPECT_THAT(ds.task_caveat, HasSubstr("not D4RL's kitchen"));
  EXPECT_THAT(ds.task_caveat, HasSubstr("59"));
  EXPECT_THAT(ds.task_caveat, HasSubstr("10x smaller"));
  std::string warnings;
  for (const auto& w : ds.warnings) warnings += w + "\n";
  EXPECT_THAT(warnings, HasSubstr("achieved_goal/kettle 0-6"));
  EXPECT_THAT(warnings, HasSubstr("observation 22-80"));
  EXPECT_THAT([&] { env::task(ds.env_id); }, testing::ThrowsMessage<env::EnvError>(
                                                 HasSubstr("Gymnasium-Robotics' FrankaKitchen")));
  data::LoadOptions isolated;
  isolated.isolate = true;
  EXPECT_EQ(data::load_dataset(file, isolated).task_caveat, ds.task_caveat);
  // A checkpoint of D4RL's kitchen is refused against it, saying which task it is.
  models::CheckpointInfo info;
  info.path = "kitchen-complete.pt";
  info.env_id = "kitchen-complete-v0";
  info.variant.state_dim = 60;
  info.variant.act_dim = 9;
  EXPECT_THAT([&] { models::check_dataset_fits(info, ds); },
              testing::ThrowsMessage<models::CheckpointError>(
                  testing::AllOf(HasSubstr("81"), HasSubstr("not D4RL's kitchen"))));
}

// Minari's D4RL/door/human-v2: infos/success with the reset's row, and the states the step
// callback recorded (env.get_env_state()) under state/.
void write_minari_adroit(const std::filesystem::path& path, const std::string& id, bool states) {
  std::filesystem::create_directories(path.parent_path());
  test::H5Writer w(path);
  const int lengths[] = {3, 2};
  for (int e = 0; e < 2; ++e) {
    const std::string g = "episode_" + std::to_string(e);
    const int T = lengths[e];
    const auto rows = static_cast<hsize_t>(T + 1);
    std::vector<double> obs, act, rew, qpos, qvel, door;
    for (int t = 0; t <= T; ++t) {
      for (int j = 0; j < 39; ++j) obs.push_back(t + 0.01 * j);
      for (int j = 0; j < 30; ++j) qpos.push_back(10.0 * e + t + 0.001 * j);
      for (int j = 0; j < 30; ++j) qvel.push_back(-t - 0.001 * j);
      for (int j = 0; j < 3; ++j) door.push_back(0.3 * e + 0.1 * j);
    }
    for (int t = 0; t < T; ++t) {
      for (int k = 0; k < 28; ++k) act.push_back(0.0);
      rew.push_back(1.0);
    }
    w.numbers(g + "/observations", obs, {rows, 39}, H5T_IEEE_F64LE);
    w.numbers(g + "/actions", act, {rows - 1, 28}, H5T_IEEE_F32LE);
    w.numbers(g + "/rewards", rew, {rows - 1}, H5T_IEEE_F64LE);
    std::vector<int> term(static_cast<std::size_t>(T), 0), trunc(static_cast<std::size_t>(T), 0);
    trunc.back() = 1;
    w.bools(g + "/terminations", term, {rows - 1});
    w.bools(g + "/truncations", trunc, {rows - 1});
    w.bools(g + "/infos/success", std::vector<int>(rows, 0), {rows});
    if (states) {
      w.numbers(g + "/state/qpos", qpos, {rows, 30}, H5T_IEEE_F64LE);
      w.numbers(g + "/state/qvel", qvel, {rows, 30}, H5T_IEEE_F64LE);
      w.numbers(g + "/state/door_body_pos", door, {rows, 3}, H5T_IEEE_F64LE);
    }
  }
  w.attribute("/", "total_episodes", static_cast<std::int64_t>(2));
  w.attribute("/", "total_steps", static_cast<std::int64_t>(5));
  w.attribute("/", "dataset_id", id);
  w.attribute("/", "env_spec",
              std::string(R"({"id": "AdroitHandDoor-v1", "max_episode_steps": 300})"));
}

TEST(KitchenData, MinarisAdroitFilesAreD4rlsTaskWithTheirStatesForReplay) {
  test::TempDir dir;
  const auto file = dir / "D4RL" / "door" / "human-v2" / "data" / "main_data.hdf5";
  write_minari_adroit(file, "D4RL/door/human-v2", true);
  const auto ds = data::load_dataset(file);
  EXPECT_EQ(ds.env_id, "door-human-v2");
  EXPECT_EQ(env::task(ds.env_id).name, "door");
  EXPECT_TRUE(ds.task_caveat.empty());
  ASSERT_EQ(ds.transitions(), 5);
  ASSERT_EQ(ds.data.qpos_dim, 30);
  ASSERT_EQ(ds.data.qvel_dim, 30);
  // Row 3 is episode 1's first step: its reset state, and the final row of episode 0 left out.
  EXPECT_FLOAT_EQ(ds.data.qpos[3 * 30 + 1], 10.001f);
  EXPECT_FLOAT_EQ(ds.data.qpos[2 * 30], 2.0f);
  EXPECT_FLOAT_EQ(ds.data.qvel[4 * 30 + 2], -1.002f);
  ASSERT_EQ(ds.data.state_infos.count("door_body_pos"), 1u);
  EXPECT_FLOAT_EQ(ds.data.state_infos.at("door_body_pos").values[3 * 3 + 2], 0.5f);
  std::string notes;
  for (const auto& n : ds.notes) notes += n + "\n";
  EXPECT_THAT(notes, HasSubstr("replay from them"));
  EXPECT_THAT(notes, HasSubstr("sign error"));

  // Without states: said.
  const auto bare = dir / "D4RL" / "pen" / "expert-v2" / "data" / "main_data.hdf5";
  write_minari_adroit(bare, "D4RL/pen/expert-v2", false);
  const auto pen = data::load_dataset(bare);
  EXPECT_EQ(pen.env_id, "pen-expert-v2");
  EXPECT_EQ(pen.data.qpos_dim, 0);
  notes.clear();
  for (const auto& n : pen.notes) notes += n + "\n";
  EXPECT_THAT(notes, HasSubstr("cannot be replayed"));
}

// --- .mjl logs -------------------------------------------------------------------------------

struct Header {
  std::int32_t nq = 30, nv = 29, nu = 9, nmocap = 1, nsensordata = 0, nuserdata = 0;
  std::string name = "franka_kitchen";
};

void append_i32(std::string& bytes, std::int32_t v) {
  bytes.append(reinterpret_cast<const char*>(&v), 4);  // x86: little-endian, as the logs are
}
void append_f32(std::string& bytes, double v) {
  const auto f = static_cast<float>(v);
  bytes.append(reinterpret_cast<const char*>(&f), 4);
}

// A log of the studio's kitchen driven by position targets that change every 40 physics steps:
// one record (time, qpos, qvel, ctrl, a mocap body) per physics step, the ctrl the one held.
// The microwave starts open and the slide cabinet slid (both at their goals).
struct RecordedLog {
  std::string bytes;
  std::vector<std::vector<double>> qpos, ctrl;  // per record
};

RecordedLog record_log(int records, const Header& h = {}) {
  const auto& spec = env::task("kitchen-complete-v0");
  const auto model = env::load_model(spec);
  mjData* d = mj_makeData(model.get());
  env::Environment e(spec.name);
  std::vector<float> obs(60);
  e.reset(7, obs);
  std::copy(e.qpos().begin(), e.qpos().end(), d->qpos);
  d->qpos[22] = -0.7;  // microwave
  d->qpos[19] = 0.36;  // slide cabinet
  mj_forward(model.get(), d);
  RecordedLog log;
  append_i32(log.bytes, h.nq);
  append_i32(log.bytes, h.nv);
  append_i32(log.bytes, h.nu);
  append_i32(log.bytes, h.nmocap);
  append_i32(log.bytes, h.nsensordata);
  append_i32(log.bytes, h.nuserdata);
  append_i32(log.bytes, static_cast<std::int32_t>(h.name.size()));
  log.bytes += h.name;
  std::vector<double> target(9);
  for (int r = 0; r < records; ++r) {
    if (r % 40 == 0)
      for (int k = 0; k < 9; ++k)
        target[k] = d->qpos[k] + (k < 7 ? 0.05 * std::sin(0.3 * r / 40 + k) : 0.0);
    std::copy(target.begin(), target.end(), d->ctrl);
    append_f32(log.bytes, d->time);
    log.qpos.emplace_back(d->qpos, d->qpos + 30);
    log.ctrl.push_back(target);
    for (int k = 0; k < 30; ++k) append_f32(log.bytes, d->qpos[k]);
    for (int k = 0; k < 29; ++k) append_f32(log.bytes, d->qvel[k]);
    for (int k = 0; k < 9; ++k) append_f32(log.bytes, d->ctrl[k]);
    for (int k = 0; k < 7; ++k) append_f32(log.bytes, 0.5);  // mocap position and quaternion
    mj_step(model.get(), d);
  }
  mj_deleteData(d);
  return log;
}

void save(const std::filesystem::path& path, const std::string& bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TEST(KitchenData, AnMjlLogReplaysIntoD4rlsLayoutAsD4rlsScriptReplayedIt) {
  test::TempDir dir;
  const auto log = record_log(40 * 6 + 1);      // 7 kept records: 6 transitions
  const auto shorter = record_log(40 * 3 + 5);  // 4 kept records: 3 transitions
  // A folder of folders: for kitchen-complete only the microwave_kettle_switch_slide ones.
  save(dir / "demos" / "friday_microwave_kettle_switch_slide" / "a.mjl", log.bytes);
  save(dir / "demos" / "friday_microwave_kettle_switch_slide" / "b.mjl", shorter.bytes);
  save(dir / "demos" / "friday_kettle_bottomknob_hinge_slide" / "c.mjl", log.bytes);

  const auto read =
      behaviour::read_mjl(dir / "demos" / "friday_microwave_kettle_switch_slide" / "a.mjl");
  EXPECT_EQ(read.records, 241);
  EXPECT_EQ(read.frames, 7);
  EXPECT_EQ(read.name, "franka_kitchen");
  EXPECT_EQ(read.nmocap, 1);
  EXPECT_FLOAT_EQ(static_cast<float>(read.ctrl[2 * 9 + 3]), static_cast<float>(log.ctrl[80][3]));

  behaviour::KitchenImportConfig config;
  config.task = "kitchen-complete-v0";
  config.inputs = {dir / "demos"};
  const auto made = behaviour::import_kitchen_demos(config);
  ASSERT_EQ(made.logs.size(), 2u);
  const auto& d = made.arrays;
  ASSERT_EQ(d.size(), 9);
  EXPECT_EQ(made.lengths, (std::vector<std::int64_t>{6, 3}));
  const double goal[60] = {};
  (void)goal;
  for (std::int64_t i = 0; i < d.size(); ++i) {
    const bool first_log = i < 6;
    const std::int64_t t = first_log ? i : i - 6;
    const auto& src = first_log ? log : shorter;
    const float* o = &d.observations[static_cast<std::size_t>(i * 60)];
    // The replay follows the log: each observation is the log's state 40 t physics steps on,
    // within the observation noise (0.01 for the arm) and what float32 records change.
    for (int k = 0; k < 30; ++k)
      EXPECT_NEAR(o[k], src.qpos[static_cast<std::size_t>(40 * t)][static_cast<std::size_t>(k)],
                  0.0101 + 2e-3)
          << "row " << i << " qpos " << k;
    // The goal block is the task's: microwave -0.75 at 30 + 22, slide 0.37 at 30 + 19, the
    // kettle's, the light switch's; zeros elsewhere.
    EXPECT_FLOAT_EQ(o[30 + 22], -0.75f);
    EXPECT_FLOAT_EQ(o[30 + 19], 0.37f);
    EXPECT_FLOAT_EQ(o[30 + 17], -0.69f);
    EXPECT_FLOAT_EQ(o[30 + 23], -0.23f);
    EXPECT_FLOAT_EQ(o[30 + 11], 0.0f);
    // The action takes the servo target from the observed arm to the log's ctrl.
    for (int k = 0; k < 9; ++k) {
      const double want = std::clamp(
          (src.ctrl[static_cast<std::size_t>(40 * t)][static_cast<std::size_t>(k)] - o[k]) / 0.08 /
              2.0,
          -0.999, 0.999);
      EXPECT_NEAR(d.actions[static_cast<std::size_t>(i * 9 + k)], want, 1e-5) << i << " " << k;
    }
    // Microwave and slide cabinet at their goals, kettle and light switch not: 2, from the
    // observation (D4RL's relabelling keeps completed elements).
    EXPECT_EQ(d.rewards[static_cast<std::size_t>(i)], 2.0f) << i;
    EXPECT_EQ(d.terminals[static_cast<std::size_t>(i)], i == 5 || i == 8) << i;
  }
  EXPECT_EQ(d.qpos_dim, 30);
  EXPECT_EQ(made.metadata.at("env_id"), "kitchen-complete-v0");

  // kitchen-mixed reads every folder, and counts its own elements (the microwave only).
  config.task = "kitchen-mixed-v0";
  const auto mixed = behaviour::import_kitchen_demos(config);
  EXPECT_EQ(mixed.logs.size(), 3u);
  EXPECT_EQ(mixed.arrays.rewards.front(), 1.0f);

  // Written as D4RL wrote it and read back as D4RL's kitchen file.
  data::WriteOptions options;
  options.write_timeouts = false;
  data::write_d4rl(dir / "complete.hdf5", made.arrays, made.metadata, options);
  const auto back = data::load_dataset(dir / "complete.hdf5");
  EXPECT_EQ(back.env_id, "kitchen-complete-v0");
  ASSERT_EQ(back.episodes.size(), 2u);
  EXPECT_EQ(back.episodes[0].length, 6);
  EXPECT_EQ(back.episodes[0].ret, 12.0);
  EXPECT_EQ(back.episodes[1].end, data::EndReason::Terminal);
}

TEST(KitchenData, TruncatedWrongAndForeignLogsAreRefusedNamingTheFileAndTheOffset) {
  test::TempDir dir;
  const auto log = record_log(81);
  // Cut inside the last record: the header (28 + 14) and 80 whole records of 76 floats.
  save(dir / "cut.mjl", log.bytes.substr(0, log.bytes.size() - 10));
  EXPECT_THAT([&] { behaviour::read_mjl(dir / "cut.mjl"); },
              testing::ThrowsMessage<data::DatasetError>(testing::AllOf(
                  HasSubstr("cut.mjl"), HasSubstr("byte offset " + std::to_string(42 + 80 * 304)),
                  HasSubstr("cut short"))));
  save(dir / "header.mjl", log.bytes.substr(0, 20));
  EXPECT_THAT([&] { behaviour::read_mjl(dir / "header.mjl"); },
              testing::ThrowsMessage<data::DatasetError>(
                  testing::AllOf(HasSubstr("header.mjl"), HasSubstr("byte offset 20"))));
  Header negative;
  negative.nv = -3;
  save(dir / "negative.mjl", record_log(3, negative).bytes);
  EXPECT_THAT([&] { behaviour::read_mjl(dir / "negative.mjl"); },
              testing::ThrowsMessage<data::DatasetError>(testing::AllOf(
                  HasSubstr("negative.mjl"), HasSubstr("byte offset 4"), HasSubstr("nv is -3"))));
  // A whole log of another model: its counts say so.
  Header other;
  other.nq = 31;
  const auto foreign = record_log(81, other);  // records of nq 31 (one value more each)
  save(dir / "other" / "foreign.mjl",
       foreign.bytes.substr(0, 28 + 14) + std::string(static_cast<std::size_t>(81 * 77 * 4), '\0'));
  behaviour::KitchenImportConfig config;
  config.inputs = {dir / "other"};
  EXPECT_THAT([&] { behaviour::import_kitchen_demos(config); },
              testing::ThrowsMessage<data::DatasetError>(testing::AllOf(
                  HasSubstr("foreign.mjl"), HasSubstr("byte offset 0"), HasSubstr("nq 31"))));
  // Cancelled: nothing is returned.
  save(dir / "good" / "a.mjl", log.bytes);
  config.inputs = {dir / "good"};
  Progress cancelled;
  cancelled.cancel.cancel();
  EXPECT_THROW(behaviour::import_kitchen_demos(config, cancelled), Cancelled);
}

}  // namespace
}  // namespace dstudio
