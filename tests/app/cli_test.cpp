// The dstudio command line, run as a user runs it: exit codes, stdout JSON and stderr messages.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "adroit_expert_file.h"
#include "cli_run.h"
#include "csv_check.h"
#include "h5_fixture.h"

namespace {

using testing::HasSubstr;
using testing::Not;

using Result = dstudio::test::CliResult;

Result run(const std::string& args, const dstudio::test::TempDir& dir) {
  return dstudio::test::run_cli(args, dir);
}

class Cli : public testing::Test {
 protected:
  dstudio::test::TempDir dir;
};

TEST_F(Cli, InfoJsonHasTheDocumentedKeysAndValues) {
  dstudio::test::D4rlSpec spec;
  spec.n = 12;
  spec.terminals = {0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  spec.timeouts = {0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0};
  dstudio::test::write_d4rl_fixture(dir / "d.hdf5", spec);
  const auto r = run("dataset info --json " + (dir / "d.hdf5").string(), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);  // exactly one JSON object on stdout
  EXPECT_EQ(j["transitions"], 12);
  EXPECT_EQ(j["episodes"], 2);
  EXPECT_EQ(j["terminated"], 1);
  EXPECT_EQ(j["timed_out"], 1);
  EXPECT_EQ(j["tail_steps"], 5);
  EXPECT_EQ(j["obs_dim"], 3);
  EXPECT_EQ(j["act_dim"], 2);
  // Returns over complete episodes: 3.75 and 5.5.
  EXPECT_DOUBLE_EQ(j["return_min"].get<double>(), 3.75);
  EXPECT_DOUBLE_EQ(j["return_max"].get<double>(), 5.5);
  EXPECT_DOUBLE_EQ(j["return_mean"].get<double>(), 4.625);
  EXPECT_EQ(j["format"], "d4rl");
  EXPECT_EQ(j["arrays"][0]["dtype"], "float32");
  // Two episode returns: every quantile interpolates between them.
  EXPECT_DOUBLE_EQ(j["return_quantiles"]["median"].get<double>(), 4.625);
  EXPECT_DOUBLE_EQ(j["return_quantiles"]["p10"].get<double>(), 3.75 + 0.1 * 1.75);
  EXPECT_TRUE(j.contains("linear_action_r2"));
}

TEST_F(Cli, InfoTextNamesTheTail) {
  dstudio::test::D4rlSpec spec;
  spec.terminals = {0, 0, 1};
  dstudio::test::write_d4rl_fixture(dir / "d.hdf5", spec);
  const auto r = run("dataset info " + (dir / "d.hdf5").string(), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Tail          7 steps in 1 unterminated episode\n"));
  EXPECT_THAT(r.out, HasSubstr("Note          the last 7 steps end without a terminal or timeout"));
  // Expected of a D4RL file, so not a warning: validate, which checks the file, notes it.
  const auto validated = run("dataset validate " + (dir / "d.hdf5").string(), dir);
  ASSERT_EQ(validated.exit_code, 0) << validated.err;
  EXPECT_THAT(validated.err,
              HasSubstr("note: " + (dir / "d.hdf5").string() + ": the last 7 steps end without"));
  EXPECT_THAT(validated.err, Not(HasSubstr("warning")));
}

// A D4RL Adroit expert file carries its behaviour policy in metadata/policy: info says so with
// the policy's sizes and the known quirk of last_fc_log_std; the JSON has the same.
TEST_F(Cli, InfoTextNamesAnExpertFilesPolicyAndItsQuirk) {
  const auto door = dstudio::behaviour::shipped_dapg_policy("door");
  const auto file = dir / "door-expert-v1.hdf5";
  dstudio::test::write_expert_file(file, "door", dstudio::test::d4rl_fold(door));
  const auto r = run("dataset info " + file.string(), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Policy        metadata/policy: a behaviour policy, tanh MLP 39 -> "
                               "32 -> 32 -> 28; it plays in the viewers"));
  EXPECT_THAT(r.out, HasSubstr("Note          metadata/policy/last_fc_log_std is a copy of "
                               "last_fc (D4RL's extract_params), not the policy's log standard "
                               "deviation"));
  const auto j = nlohmann::json::parse(run("dataset info --json " + file.string(), dir).out);
  ASSERT_TRUE(j["behaviour_policy"].is_object()) << j.dump();
  EXPECT_EQ(j["behaviour_policy"]["usable"], true);
  EXPECT_EQ(j["behaviour_policy"]["sizes"], "tanh MLP 39 -> 32 -> 32 -> 28");
  EXPECT_THAT(j["behaviour_policy"]["quirk"].get<std::string>(),
              HasSubstr("last_fc_log_std is a copy of last_fc"));

  // A file without a policy says nothing of one.
  dstudio::test::D4rlSpec spec;
  spec.terminals = {0, 1};
  dstudio::test::write_d4rl_fixture(dir / "plain.hdf5", spec);
  const auto plain = run("dataset info " + (dir / "plain.hdf5").string(), dir);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_THAT(plain.out, Not(HasSubstr("Policy ")));
  EXPECT_TRUE(
      nlohmann::json::parse(
          run("dataset info --json " + (dir / "plain.hdf5").string(), dir).out)["behaviour_policy"]
          .is_null());
}

TEST_F(Cli, ValidateExitCodes) {
  dstudio::test::D4rlSpec spec;
  spec.terminals = {0, 1};
  dstudio::test::write_d4rl_fixture(dir / "good.hdf5", spec);
  auto r = run("dataset validate " + (dir / "good.hdf5").string(), dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("ok:"));

  std::ofstream(dir / "bad.hdf5") << "not hdf5";
  r = run("dataset validate " + (dir / "bad.hdf5").string(), dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(r.out.empty());
  EXPECT_THAT(r.err, HasSubstr("bad.hdf5: is not an HDF5 file"));

  // Readable but with no complete episode: not usable for training.
  dstudio::test::D4rlSpec tail_only;
  dstudio::test::write_d4rl_fixture(dir / "tail.hdf5", tail_only);
  r = run("dataset validate " + (dir / "tail.hdf5").string(), dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("no complete episode"));
}

TEST_F(Cli, UsageErrorsExitTwoAndHelpExitsZero) {
  EXPECT_EQ(run("", dir).exit_code, 2);
  EXPECT_EQ(run("dataset frobnicate", dir).exit_code, 2);
  auto r = run("dataset info --no-such-option x", dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--no-such-option"));
  r = run("dataset info --help", dir);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("--json"));
  for (const char* cmd : {"--help", "dataset --help", "dataset validate --help",
                          "dataset synth --help", "bench --help", "bench dataset-load --help"})
    EXPECT_EQ(run(cmd, dir).exit_code, 0) << cmd;
}

TEST_F(Cli, SynthWritesALoadableDeterministicFile) {
  const auto a = (dir / "a.hdf5").string(), b = (dir / "b.hdf5").string();
  ASSERT_EQ(run("dataset synth --transitions 5000 --seed 2 --out " + a, dir).exit_code, 0);
  ASSERT_EQ(run("dataset synth --transitions 5000 --seed 2 --out " + b, dir).exit_code, 0);
  const auto ja = nlohmann::json::parse(run("dataset info --json " + a, dir).out);
  const auto jb = nlohmann::json::parse(run("dataset info --json " + b, dir).out);
  EXPECT_EQ(ja["transitions"], 5000);
  EXPECT_EQ(ja["fingerprint"], jb["fingerprint"]);
  EXPECT_GT(ja["tail_steps"].get<int>(), 0);
}

TEST_F(Cli, GenerateWritesTheD4rlLayoutAndRejectsUnknownNames) {
  const auto out = (dir / "random.hdf5").string();
  auto r =
      run("dataset generate --env walker2d --kind random --transitions 1500 --seed 1 --out " + out,
          dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(run("dataset info --json " + out, dir).out);
  EXPECT_EQ(j["transitions"], 1500);
  EXPECT_EQ(j["obs_dim"], 17);
  EXPECT_EQ(j["act_dim"], 6);
  EXPECT_EQ(j["qpos_dim"], 9);
  EXPECT_EQ(j["env_id"], "walker2d");
  EXPECT_EQ(j["metadata"]["kind"], "random");

  r = run("dataset generate --env ant-maze --kind random --transitions 10 --out " + out, dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(
      r.err,
      HasSubstr(
          "unknown environment 'ant-maze'; known environments: hopper, walker2d, halfcheetah"));
  r = run("dataset generate --env hopper --kind replay --transitions 10 --out " + out, dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown dataset kind 'replay'"));
}

// Adroit's expert data: D4RL's DAPG expert as D4RL's script plays it, counted in episodes; the
// door's human data, DAPG's demonstrations replayed; the other human data and the cloned data are
// people's or made from them, and asking for them says so; the expert's score.
TEST_F(Cli, AdroitExpertDataIsMadeAndHumanDataIsBrought) {
  const auto out = (dir / "door-expert-small.hdf5").string();
  auto r = run("dataset generate --env door --episodes 2 --seed 3 --out " + out, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("(400 transitions in 2 episodes)"));
  const auto j = nlohmann::json::parse(run("dataset info --json " + out, dir).out);
  EXPECT_EQ(j["transitions"], 400);
  EXPECT_EQ(j["env_id"], "door");
  EXPECT_EQ(j["metadata"]["algorithm"], "DAPG");
  EXPECT_EQ(j["metadata"]["kind"], "expert");
  const auto human = (dir / "door-human.hdf5").string();
  r = run("dataset generate --env door --kind human --out " + human, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("(6729 transitions in 25 demonstrations; 15 of 25 demonstrations "
                               "replay to within 1% of their recorded return"));
  const auto h = nlohmann::json::parse(run("dataset info --json " + human, dir).out);
  EXPECT_EQ(h["transitions"], 6729);
  EXPECT_EQ(h["metadata"]["kind"], "human");
  r = run("dataset generate --env door --kind human --transitions 100 --out " + out, dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("leave out --episodes, --transitions"));
  r = run("dataset generate --env pen --kind human --out " + out, dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("the human data come from people's demonstrations, not shipped with "
                               "the studio for pen: open D4RL's pen-human-v1.hdf5"));
  r = run("dataset generate --env door --kind cloned --out " + out, dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("open D4RL's door-cloned-v1.hdf5"));
  r = run("dataset default --env pen --kind cloned", dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("open D4RL's pen-cloned-v1.hdf5"));
  r = run("dataset generate --env door --transitions 100 --out " + out, dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("counted in episodes (--episodes)"));
  r = run("dataset generate --env hopper --kind random --episodes 3 --out " + out, dir);
  EXPECT_EQ(r.exit_code, 2);
  r = run("behaviour expert --env relocate --episodes 2", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("relocate: DAPG expert, sampled actions (as D4RL's data): mean "
                               "return"));
  EXPECT_THAT(r.out, HasSubstr("relocate: DAPG expert, mean action:"));
  r = run("behaviour expert --env hopper", dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("hopper is not an Adroit task"));
}

// import-mjl refuses a log it cannot read, naming the file and the byte where it ends, and writes
// nothing (the replay itself is tested in kitchen_data_test.cpp).
TEST_F(Cli, ImportMjlRefusesACutLogWritingNothing) {
  std::ofstream(dir / "cut.mjl") << std::string(20, '\0');
  const auto out = dir / "kitchen.hdf5";
  auto r = run("dataset import-mjl " + (dir / "cut.mjl").string() +
                   " --task kitchen-partial --out " + out.string(),
               dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("cut.mjl"));
  EXPECT_THAT(r.err, HasSubstr("byte offset 20"));
  EXPECT_FALSE(std::filesystem::exists(out));
  r = run(
      "dataset import-mjl " + (dir / "cut.mjl").string() + " --task hopper --out " + out.string(),
      dir);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(out));
}

// A tiny SAC run: it continues where a chunk stopped, Ctrl-C keeps a checkpoint, and its
// policies can be chosen, shipped, evaluated and generated from.
TEST_F(Cli, BehaviourSacRunsInChunksStopsOnInterruptAndShips) {
  const auto folder = (dir / "sac").string();
  const std::string common =
      "behaviour sac --env hopper --steps 1600 --hidden 16 --random-steps 300 "
      "--eval-every 400 --eval-episodes 1 --checkpoint-every 400 --replay-size 4000 --out " +
      folder;
  const std::string sac = common + " --batch 16";
  auto r = run(sac + " --chunk 800", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("hopper: 800 of 1600 steps, 2 snapshots"));
  r = run(sac, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("hopper: 1600 of 1600 steps, 4 snapshots"));
  r = run(common + " --batch 32", dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("batch 16 (asked 32)"));

  // Interrupted, it says where it stopped and continues from there. The interrupt is sent when
  // the run's output, read through a FIFO, says it is running (its handlers are in place),
  // however long a loaded machine takes to get there; the rest of the output goes to the log.
  const auto long_folder = (dir / "sac-long").string();
  const auto long_log = (dir / "long.txt").string();
  const auto output = dir / "long.fifo";
  ASSERT_EQ(::mkfifo(output.c_str(), 0600), 0);
  const std::string cmd =
      std::string(DSTUDIO_CLI) +
      " behaviour sac --env hopper --steps 1000000 --hidden 16 --batch 16 --out " + long_folder +
      " >" + output.string() +
      " 2>&1 & pid=$!; { grep -m1 -q 'Ctrl+C stops it' && kill -INT $pid; cat >" + long_log +
      "; } <" + output.string() + "; wait $pid; echo $?";
  FILE* pipe = popen(cmd.c_str(), "r");
  char code[32] = {};
  ASSERT_NE(fgets(code, sizeof code, pipe), nullptr);
  pclose(pipe);
  EXPECT_STREQ(code, "130\n");
  std::ifstream log(dir / "long.txt");
  const std::string text{std::istreambuf_iterator<char>(log), {}};
  EXPECT_THAT(text, HasSubstr("with a checkpoint; the same command continues it"));
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(long_folder) / "replay.bin"));

  const auto shipped = (dir / "hopper-sac.json").string();
  r = run(
      "behaviour ship --run " + folder + " --episodes 2 --candidates 2 --replay 1 --out " + shipped,
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("expert  SAC tanh-Gaussian policy after"));
  r = run("behaviour eval --env hopper --policies " + shipped + " --episodes 2", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("as the behaviour policy (sampled): mean return"));
  const auto data = (dir / "mr.hdf5").string();
  r = run(
      "dataset generate --env hopper --kind medium-replay --policies " + shipped + " --out " + data,
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(run("dataset info --json " + data, dir).out);
  EXPECT_EQ(j["metadata"]["behaviour_algorithm"], "sac");
  // Without --transitions, medium-replay holds the steps the learner took to reach medium.
  EXPECT_GT(j["transitions"].get<int>(), 0);
  EXPECT_LE(j["transitions"].get<int>(), 1600);
  EXPECT_EQ(j["transitions"].get<int>() % 400, 0);

  r = run("behaviour ship --run " + (dir / "nowhere").string() + " --out " + shipped, dir);
  EXPECT_EQ(r.exit_code, 2);
  // Navigation ranks a goal-reacher's snapshots only; the file already written stays as it was.
  const auto before = std::filesystem::last_write_time(shipped);
  r = run("behaviour ship --run " + folder + " --expert-by navigation --out " + shipped, dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--expert-by navigation ranks a goal-reacher's snapshots; " +
                               folder + " trains hopper"));
  EXPECT_EQ(std::filesystem::last_write_time(shipped), before);
  r = run("behaviour eval --env walker2d --policies " + shipped, dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("policies for hopper, not walker2d"));
  // A damaged file is a problem with the data (1), named with its path; an unknown name is wrong
  // usage (2).
  const auto broken = (dir / "broken.json").string();
  { std::ofstream(broken) << R"({"format": "dstudio-sac-policies-1"})"; }
  r = run("behaviour eval --env hopper --policies " + broken, dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(broken + ": a behaviour-policy file with a missing or wrong field"));
  r = run("behaviour eval --env hopper --algorithm sac --policies " + shipped + " --snapshot best",
          dir);
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

TEST_F(Cli, RenderWithoutADisplaySaysSo) {
  const auto out = (dir / "strip.png").string();
  const auto r = run("render --env hopper --policy random --steps 5 --out " + out, dir);
  if (std::getenv("DISPLAY") == nullptr) {
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_THAT(r.err, HasSubstr("no display"));
    EXPECT_FALSE(std::filesystem::exists(out));
  } else {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(std::filesystem::exists(out));
  }
}

TEST_F(Cli, BenchEnvPrintsMediansThreadsAndBlas) {
  const auto r = run("bench env --env hopper --steps 500 --repeats 3", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("threads        1"));
  EXPECT_THAT(r.out, HasSubstr("blas"));
  EXPECT_THAT(r.out, testing::ContainsRegex("hopper +median +[0-9]+ env steps/s"));
}

TEST_F(Cli, VariantsListsEveryVariantWithItsDefaults) {
  const auto r = run("variants --json", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* name : {"dt", "dc", "dc-1filter", "dc-hybrid", "direct-attention", "gdt", "udt",
                           "udc", "dhi", "mlp-bc", "hier"})
    EXPECT_TRUE(j.contains(name)) << name;
  EXPECT_EQ(j["dc"]["context_length"], 8);
  EXPECT_EQ(j["dc"]["conv_window"], 6);
  EXPECT_EQ(j["gdt"]["gaussian_w"], 0.1);
  EXPECT_EQ(j["dhi"]["mixer"], "pooling");
  EXPECT_EQ(j["dhi"]["merger"], "conv");
}

TEST_F(Cli, TrainWritesACheckpointAndResumes) {
  const auto data = (dir / "d.hdf5").string(), out = (dir / "run").string();
  ASSERT_EQ(run("dataset synth --transitions 3000 --out " + data, dir).exit_code, 0);
  auto r = run("train --variant mlp-bc --dataset " + data +
                   " --steps 20 --config '{\"hidden\": 16}' "
                   "--training '{\"log_every\": 10, \"batch_size\": 8}' --out " +
                   out,
               dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "run" / "checkpoint.pt"));
  EXPECT_TRUE(std::filesystem::exists(dir / "run" / "metrics.csv"));
  r = run("train --resume " + out + "/checkpoint.pt", dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;  // already at its last step: finishes at once

  // A reward shift is recorded in the checkpoint and said wherever its returns are shown.
  const auto shifted = (dir / "shifted").string();
  r = run("train --variant mlp-bc --dataset " + data +
              " --steps 10 --reward-shift -1 --config '{\"hidden\": 16}' "
              "--training '{\"batch_size\": 8}' --out " +
              shifted,
          dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("rewards shifted by -1"));
  r = run("checkpoint info --json " + shifted + "/checkpoint.pt", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["training"]["reward_shift"], -1.0);
  r = run("checkpoint info " + shifted + "/checkpoint.pt", dir);
  EXPECT_THAT(r.out, HasSubstr("rewards shifted by -1 (returns-to-go and targets count r - 1"));
  r = run("train --resume " + shifted + "/checkpoint.pt --reward-shift 0", dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--resume keeps it"));

  r = run("train --variant decision-mamba --dataset " + data + " --out " + out, dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown variant 'decision-mamba'"));
  r = run("train --variant dt --dataset " + data + " --config '{\"hiden\": 3}' --out " + out, dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("variant configuration: unknown key 'hiden'"));
  std::ofstream(dir / "junk.pt") << "junk";
  r = run("train --resume " + (dir / "junk.pt").string(), dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("junk.pt: not a checkpoint (not a zip archive)"));
}

TEST_F(Cli, BenchTrainAndActReportMediansFlopsThreadsAndBlas) {
  auto r =
      run("bench train --variant dc --batch 4 --repeats 2 --config '{\"hidden\": 16}' --json", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["variant"], "dc");
  EXPECT_GT(j["median_ms"].get<double>(), 0.0);
  EXPECT_GT(j["gflop"].get<double>(), 0.0);
  EXPECT_EQ(j["threads"], 1);
  EXPECT_TRUE(j.contains("blas"));
  EXPECT_TRUE(j.contains("peak_rss_mib"));
  r = run("bench act --variant dhi --repeats 2", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("act (one action, no gradient)"));
  EXPECT_EQ(run("bench train --variant nope", dir).exit_code, 2);
  // predict on a file of windows, as the command runs it, beside every window at once.
  r = run("bench predict --windows 40 --repeats 1 --action-lens --json", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto p = nlohmann::json::parse(r.out);
  EXPECT_EQ(p["benchmark"], "predict");
  EXPECT_EQ(p["windows"], 40);
  EXPECT_GT(p["predict_median_s"].get<double>(), 0.0);
  EXPECT_GT(p["all_at_once_median_s"].get<double>(), 0.0);
  EXPECT_TRUE(p.contains("blas"));
}

TEST_F(Cli, BenchSweepStatusReadsNoCheckpoint) {
  // Three finished cells: the status reads their task.json files, tens of KiB, not the 887 KiB
  // checkpoint each holds; the way that reads them whole reads at least three of them.
  const auto r = run("bench sweep-status --cells 3 --repeats 1", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("a sweep of 3 finished cells"));
  EXPECT_THAT(r.out, HasSubstr("checkpoints    the status read none"));
  EXPECT_THAT(r.out, HasSubstr("with weights   median"));
  EXPECT_THAT(r.out,
              ::testing::ContainsRegex("with weights +median [0-9.]+ ms .*, 2\\.[0-9] MiB read"));
}

}  // namespace

namespace {

TEST_F(Cli, ImportAndPredictRunAsDocumented) {
  const std::string data = DSTUDIO_TEST_DATA;
  auto r = run("import --format corl-dt " + data + "/corl_dt/a_state_dict.pt --out " +
                   (dir / "a.pt").string() + " --heads 2",
               dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("K 5, 2 layers x 16 hidden, heads 2"));
  r = run("predict --checkpoint " + (dir / "a.pt").string() + " --input " + data +
              "/corl_dt/a_inputs.h5 --output " + (dir / "out.h5").string() + " --no-normalize",
          dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("actions (4, 5, 3)"));
  EXPECT_TRUE(std::filesystem::exists(dir / "out.h5"));

  // Interventions and the action lens: written beside the actions.
  const std::string predict = "predict --checkpoint " + (dir / "a.pt").string() + " --input " +
                              data + "/corl_dt/a_inputs.h5 --no-normalize --output ";
  r = run(predict + (dir / "lens.h5").string() +
              " --intervene head:2.1=zero --intervene context:3 --action-lens",
          dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("actions (4, 5, 3), lens (4, 5, 2, 3)"));
  r = run(predict + (dir / "patched.h5").string() + " --patch-from " + data +
              "/corl_dt/a_inputs.h5 --patch resid:2.14",
          dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Specs that do not fit the model, or are malformed, exit 2 naming what is valid; nothing is
  // written.
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"--intervene head:4.1=zero", "head:4.1=zero: the model has 2 layers, 1 to 2"},
      {"--intervene head:1.3=mean", "head:1.3=mean: layer 1 has 2 heads, 1 to 2"},
      {"--intervene context:6", "context:6: the model's window has 5 steps, 1 to 5"},
      {"--intervene head:1=zero", "head:1=zero: expected head:L.H=zero|mean|resample"},
      {"--patch resid:1.16 --patch-from " + data + "/corl_dt/a_inputs.h5",
       "resid:1.16: the model's window has 15 tokens, 1 to 15"},
      {"--patch resid:1.2", "--patch needs --patch-from"},
  };
  for (const auto& [args, message] : refused) {
    r = run(predict + (dir / "refused.h5").string() + " " + args, dir);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(message)) << args;
    EXPECT_FALSE(std::filesystem::exists(dir / "refused.h5")) << args;
  }

  // Inputs of another environment: the message names the file and key; nothing is written.
  r = run("predict --checkpoint " + (dir / "a.pt").string() + " --input " + data +
              "/pytorch_file/known_values.pt --output " + (dir / "bad.h5").string(),
          dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("known_values.pt: is not an HDF5 file"));
  EXPECT_FALSE(std::filesystem::exists(dir / "bad.h5"));
  r = run(
      "import --format other " + data + "/corl_dt/a_state_dict.pt --out " + (dir / "x.pt").string(),
      dir);
  EXPECT_EQ(r.exit_code, 2);
  r = run("import --format corl-dt " + data + "/pytorch_file/legacy.pt --out " +
              (dir / "x.pt").string(),
          dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("legacy format"));
}

// Export as documented: CORL's layout for a DT CORL can express, the studio's names for any
// variant, read back by import; a variant CORL cannot express exits 1 naming why, writing nothing.
TEST_F(Cli, ExportWritesStateDictsThatImportReadsBack) {
  const std::string data = DSTUDIO_TEST_DATA;
  auto r = run("import --format corl-dt " + data + "/corl_dt/a_state_dict.pt --out " +
                   (dir / "a.pt").string() + " --heads 2",
               dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run("export --format corl-dt --checkpoint " + (dir / "a.pt").string() + " --out " +
              (dir / "corl.pt").string(),
          dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("corl.json"));
  EXPECT_TRUE(std::filesystem::exists(dir / "corl.json"));
  r = run("import --format corl-dt " + (dir / "corl.pt").string() + " --out " +
              (dir / "back.pt").string() + " --heads 2",
          dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run("export --format state-dict --checkpoint " + (dir / "a.pt").string() + " --out " +
              (dir / "sd.pt").string(),
          dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run("import --format state-dict " + (dir / "sd.pt").string() + " --out " +
              (dir / "sd-back.pt").string(),
          dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("dt: state 11, action 3, K 5"));
  const std::string shipped =
      std::string(DSTUDIO_TEST_DATA) + "/../../resources/checkpoints/hopper-medium-expert-dt.pt";
  r = run("export --format corl-dt --checkpoint " + shipped + " --out " + (dir / "no.pt").string(),
          dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("its MLP uses relu; CORL's uses GELU"));
  EXPECT_FALSE(std::filesystem::exists(dir / "no.pt"));
  EXPECT_FALSE(std::filesystem::exists(dir / "no.json"));
  r = run("export --format onnx --checkpoint " + shipped + " --out " + (dir / "no.pt").string(),
          dir);
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace

namespace {

// A hopper dataset from the random behaviour, and a small DT trained on it for a few steps.
class Analyses : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new dstudio::test::TempDir;
    const auto data = (*dir_ / "random.hdf5").string();
    auto r =
        run("dataset generate --env hopper --kind random --transitions 4000 --seed 1 --out " + data,
            *dir_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run(
        "train --variant dt --dataset " + data +
            " --steps 20 --threads 1 --config '{\"hidden\": 16, \"context_length\": 5}' --out " +
            (*dir_ / "dt").string(),
        *dir_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // The dataset's unterminated tail (4000 steps end mid-episode) is left out as in D4RL, not
    // warned of.
    EXPECT_THAT(r.err, Not(HasSubstr("unterminated"))) << r.err;
    checkpoint_ = (*dir_ / "dt" / "checkpoint.pt").string();
  }
  static void TearDownTestSuite() { delete dir_; }
  void SetUp() override {
#ifndef DSTUDIO_HAVE_FIGURES
    GTEST_SKIP() << "dstudio analyze needs the GUI libraries (DSTUDIO_BUILD_GUI)";
#endif
  }

  static nlohmann::json analyze(const std::string& args, const std::string& out) {
    const auto r = run("analyze " + args + " --checkpoint " + checkpoint_ + " --out " +
                           (*dir_ / out).string() + " --json",
                       *dir_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.err, Not(HasSubstr("unterminated"))) << r.err;
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.out;
    for (const auto& f : j.value("files", nlohmann::json::array()))
      EXPECT_TRUE(std::filesystem::exists(f.get<std::string>())) << f;
    EXPECT_TRUE(std::filesystem::exists(*dir_ / out / "summary.json"));
    return j;
  }

  static inline dstudio::test::TempDir* dir_ = nullptr;
  static inline std::string checkpoint_;
};

TEST_F(Analyses, EvalPrintsScoresPerTarget) {
  const auto r =
      run("eval --checkpoint " + checkpoint_ + " --targets 3600,1800 --episodes 2 --json", *dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["targets"].size(), 2u);
  EXPECT_EQ(j["targets"][1]["target"], 1800.0);
  EXPECT_EQ(j["episodes"].size(), 4u);
  EXPECT_EQ(j["env"], "hopper");
  EXPECT_EQ(run("eval --checkpoint " + checkpoint_ + " --zeroing sideways", *dir_).exit_code, 2);
  // Every step of every episode, as CSV a standard reader parses.
  const auto out = *dir_ / "eval";
  ASSERT_EQ(
      run("eval --checkpoint " + checkpoint_ + " --targets 3600 --episodes 1 --out " + out.string(),
          *dir_)
          .exit_code,
      0);
  const auto report = dstudio::test::check_csv_files(out / "episodes.csv");
  EXPECT_TRUE(dstudio::test::all_ok(report)) << dstudio::test::joined(report);
}

TEST_F(Analyses, AttentionWritesMapsAndTheirDerivation) {
  const auto j = analyze("attention --windows 4 --compare " + checkpoint_, "attention");
  EXPECT_EQ(j["tokens"], 15);
  ASSERT_EQ(j["layers"].size(), 3u);
  EXPECT_THAT(j["layers"][0]["derivation"].get<std::string>(), HasSubstr("softmax"));
  EXPECT_EQ(j["compare"]["max_abs_difference"], 0.0);  // a checkpoint against itself
  bool pdf = false, svg = false, png = false;
  for (const auto& f : j["files"]) {
    const auto name = f.get<std::string>();
    pdf |= name.ends_with("attention_layer1.pdf");
    svg |= name.ends_with("attention_layer1.svg");
    png |= name.ends_with("attention_layer1.png");
  }
  EXPECT_TRUE(pdf && svg && png);
}

TEST_F(Analyses, AttentionCountsLayersFromOne) {
  const auto base = "analyze attention --windows 2 --checkpoint " + checkpoint_ + " --out " +
                    (*dir_ / "layers").string();
  auto r = run(base + " --layer 4", *dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("layers 1 to 3"));
  EXPECT_EQ(run(base + " --layer 0", *dir_).exit_code, 2);
  r = run(base + " --layer 3 --json", *dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["layers"].size(), 1u);
  EXPECT_EQ(j["layers"][0]["layer"], 3);
}

TEST_F(Analyses, EntropyAblationSweepAndTsneSummaries) {
  auto j = analyze("entropy --episodes 2 --windows 4", "entropy");
  // Layers and heads counted from 1, as in the window and the papers' figures.
  ASSERT_FALSE(j["heads"].empty());
  EXPECT_EQ(j["heads"][0]["layer"], 1);
  EXPECT_EQ(j["heads"][0]["head"], 1);
  EXPECT_GT(j["mean_entropy"].get<double>(), 0.0);
  EXPECT_LE(j["mean_entropy"].get<double>(), std::log(15.0));
  EXPECT_TRUE(j.contains("entropy_reward_pearson"));
  j = analyze("ablation --episodes 2 --seeds 1", "ablation");
  for (const char* key : {"none", "rtg", "states", "actions"}) {
    EXPECT_TRUE(j[key].contains("mean")) << key;
    EXPECT_TRUE(j[key].contains("std")) << key;
  }
  j = analyze("rtg-sweep --multiples 1,2 --episodes 2", "sweep");
  ASSERT_EQ(j["points"].size(), 2u);
  EXPECT_EQ(j["points"][1]["target"], 7200.0);
  EXPECT_TRUE(j["points"][0].contains("std"));
  EXPECT_GT(j["dataset_best_return"].get<double>(), 0.0);
  j = analyze("tsne --windows 6 --perplexity 5 --iterations 250", "tsne");
  EXPECT_EQ(j["points"], 6 * 15 * 2);  // R, s, a embeddings and the block inputs of 6 full windows
  EXPECT_EQ(j["source"], "windows");
  EXPECT_EQ(j["method"], "barnes-hut");
  EXPECT_GT(j["kl"].get<double>(), 0.0);
  EXPECT_GT(j["seconds"].get<double>(), 0.0);
  // Every step of the longest episodes once, up to whole steps within 200 tokens, by FFT
  // interpolation.
  j = analyze(
      "tsne --episodes 3 --max-tokens 200 --perplexity 5 --iterations 250 --method fft "
      "--neighbours approximate",
      "tsne-episodes");
  EXPECT_EQ(j["source"], "episodes");
  EXPECT_EQ(j["points"], 200 / 6 * 6);
  EXPECT_GE(j["episodes"].get<int>(), 1);
  EXPECT_LE(j["episodes"].get<int>(), 3);
  EXPECT_EQ(j["method"], "fft");
  EXPECT_EQ(j["neighbours"], "approximate");
  // Counts that belong to the other source are refused before any work.
  const auto r = run("analyze tsne --source rollouts --windows 3 --checkpoint " + checkpoint_ +
                         " --out " + (*dir_ / "never").string(),
                     *dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--episodes"));
  EXPECT_FALSE(std::filesystem::exists(*dir_ / "never"));
  // Every table these analyses and the training run wrote parses with a standard CSV reader.
  const auto report = dstudio::test::check_csv_files(dir_->path());
  EXPECT_TRUE(dstudio::test::all_ok(report)) << dstudio::test::joined(report);
  EXPECT_GE(report.size(), 8u) << dstudio::test::joined(report);
}

// The first page's MediaBox of a PDF Qt wrote (page dictionaries are not compressed): width,
// height.
std::pair<double, double> pdf_size(const std::filesystem::path& pdf) {
  std::ifstream in(pdf, std::ios::binary);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::smatch m;
  if (!std::regex_search(
          text, m,
          std::regex(R"(/MediaBox\s*\[\s*([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s*\])")))
    return {-1, -1};
  return {std::stod(m[3]) - std::stod(m[1]), std::stod(m[4]) - std::stod(m[2])};
}

// A PNG's width and height in pixels and its resolution in dpi (IHDR and pHYs chunks).
struct PngSize {
  int width = -1, height = -1;
  double dpi = -1;
};
PngSize png_size(const std::filesystem::path& png) {
  std::ifstream in(png, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const auto be32 = [&](std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < 4; ++k) v = (v << 8) | static_cast<unsigned char>(bytes[at + k]);
    return v;
  };
  PngSize size;
  if (bytes.size() < 24 || bytes.compare(12, 4, "IHDR") != 0) return size;
  size.width = static_cast<int>(be32(16));
  size.height = static_cast<int>(be32(20));
  const auto phys = bytes.find("pHYs");
  if (phys != std::string::npos && phys + 13 <= bytes.size() && bytes[phys + 12] == 1)
    size.dpi = be32(phys + 4) * 0.0254;
  return size;
}

TEST_F(Analyses, AnalyzePresetIeeeSetsThePngPixelsAndThePdfPoints) {
  analyze("attention --windows 2 --layer 1 --preset IEEE", "ieee");
  const auto base = *dir_ / "ieee" / "attention_layer1";
  for (const char* ext : {".pdf", ".svg", ".png", ".csv"})
    EXPECT_TRUE(std::filesystem::exists(base.string() + ext)) << ext;
  // 3.3 x 2.5 in at 600 dpi.
  const auto png = png_size(base.string() + ".png");
  EXPECT_EQ(png.width, 1980);
  EXPECT_EQ(png.height, 1500);
  EXPECT_NEAR(png.dpi, 600, 1);
  // 237.6 x 180 pt; the canvas is whole points, so within half a point.
  const auto [w, h] = pdf_size(base.string() + ".pdf");
  EXPECT_NEAR(w, 237.6, 0.5);
  EXPECT_NEAR(h, 180.0, 0.5);
  std::ifstream svg(base.string() + ".svg");
  const std::string text{std::istreambuf_iterator<char>(svg), std::istreambuf_iterator<char>()};
  EXPECT_THAT(text, HasSubstr("DejaVu Serif"));  // the preset's serif family

  // The slug and the export dialog's full name are the same preset.
  analyze(
      "attention --windows 2 --layer 1 --formats png --preset 'IEEE column (3.3 × 2.5 in, serif)'",
      "ieee_named");
  const auto named = png_size(*dir_ / "ieee_named" / "attention_layer1.png");
  EXPECT_EQ(named.width, 1980);
  EXPECT_EQ(named.height, 1500);
}

TEST_F(Analyses, AnalyzeExplicitOptionsOverrideThePresetAndFormatsChooseTheFiles) {
  const auto j = analyze(
      "attention --windows 2 --layer 1 --preset ieee --width 6.6 --dpi 300 --formats png "
      "--no-title "
      "--font-family sans --line-width 0.8",
      "override");
  const auto out = *dir_ / "override";
  int png = 0;
  for (const auto& entry : std::filesystem::directory_iterator(out)) {
    const auto ext = entry.path().extension().string();
    EXPECT_TRUE(ext == ".png" || ext == ".csv" || ext == ".json") << entry.path();
    png += ext == ".png";
  }
  EXPECT_EQ(png, 3);  // layer 1, mean over layers, rollout
  for (const auto& f : j["files"])
    EXPECT_FALSE(f.get<std::string>().ends_with(".pdf") || f.get<std::string>().ends_with(".svg"))
        << f;
  EXPECT_TRUE(std::filesystem::exists(out / "attention_layer1.csv"));
  EXPECT_TRUE(std::filesystem::exists(out / "summary.json"));
  // Twice the width at 300 dpi: 6.6 in, 1980 px; the height keeps IEEE's 3.3 : 2.5.
  const auto size = png_size(out / "attention_layer1.png");
  EXPECT_EQ(size.width, 1980);
  EXPECT_EQ(size.height, 1500);
  EXPECT_NEAR(size.dpi, 300, 1);

  // Without a preset, --width and --font still work as before.
  analyze("attention --windows 2 --layer 1 --width 5.5 --font 9 --formats pdf", "plain");
  const auto [w, h] = pdf_size(*dir_ / "plain" / "attention_layer1.pdf");
  EXPECT_NEAR(w, 5.5 * 72, 0.5);
  EXPECT_FALSE(std::filesystem::exists(*dir_ / "plain" / "attention_layer1.png"));
}

TEST_F(Analyses, AnalyzeRefusesUnknownPresetsResolutionsAndFormats) {
  const auto bad = [](const std::string& options, const std::string& out) {
    return run("analyze attention --windows 2 --checkpoint " + checkpoint_ + " --out " +
                   (*dir_ / out).string() + " " + options,
               *dir_);
  };
  auto r = bad("--preset acm", "unknown");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown preset 'acm'"));
  for (const char* known : {"icml", "icml-page", "neurips", "aaai-page", "cvpr-page", "ieee",
                            "nature", "nature-page", "ICML column (3.25 in)"})
    EXPECT_THAT(r.err, HasSubstr(known));
  EXPECT_FALSE(std::filesystem::exists(*dir_ / "unknown"));  // nothing written
  // The export dialog's resolutions only.
  r = bad("--dpi 450", "dpi");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--dpi"));
  EXPECT_FALSE(std::filesystem::exists(*dir_ / "dpi"));
  r = bad("--formats pdf,gif", "gif");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(*dir_ / "gif"));
  r = bad("--width 0", "zero");
  EXPECT_EQ(r.exit_code, 2);
}

TEST_F(Analyses, BadInputSaysWhatAndWhere) {
  const auto r = run("analyze ablation --checkpoint " + std::string(DSTUDIO_TEST_DATA) +
                         "/corl_dt/a_inputs.h5 --out " + (*dir_ / "bad").string(),
                     *dir_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("a_inputs.h5: "));
}

}  // namespace

namespace {

TEST_F(Cli, BenchEvalAndTsnePrintTheirConfigurationAndNumbers) {
  auto r =
      run("bench eval --variant dt --config '{\"hidden\": 16, \"layers\": 1}' --targets 1 "
          "--episodes 2 --json",
          dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["env"], "halfcheetah");
  EXPECT_EQ(j["env_steps"], 2000);  // halfcheetah never ends early: 2 episodes of 1000 steps
  EXPECT_GT(j["median_seconds"].get<double>(), 0.0);
  r = run("bench tsne --points 300 --dims 8 --clusters 3 --threads 1 --json", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["points"], 300);
  EXPECT_GT(j["kl"].get<double>(), 0.0);
}

}  // namespace

TEST_F(Cli, LabMarkovPrintsTheFloorTheLossAndTheMatrix) {
  const auto r =
      run("lab markov --p 0.2 --q 0.3 --mixer pooling --window 2 --steps 400 --json", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // The appendix's closed form, worked out here: (q h(p) + p h(q)) / (p + q).
  const auto h = [](double x) { return -x * std::log(x) - (1 - x) * std::log(1 - x); };
  EXPECT_NEAR(j["entropy_rate"].get<double>(), (0.3 * h(0.2) + 0.2 * h(0.3)) / 0.5, 1e-9);
  EXPECT_NEAR(j["gap"].get<double>(),
              j["final_loss"].get<double>() - j["entropy_rate"].get<double>(), 1e-12);
  EXPECT_GE(j["gap"].get<double>(), 0.0);
  EXPECT_LT(j["relative_gap"].get<double>(), 0.01);
  EXPECT_GT(j["seconds"].get<double>(), 0.0);
  ASSERT_EQ(j["mixing_matrix"].size(), 32u);
  EXPECT_EQ(j["mixing_matrix"][5].size(), 32u);
  EXPECT_NEAR(j["mixing_matrix"][5][4].get<double>(), 0.5, 1e-6);  // the average of two
  EXPECT_EQ(j["mixing_by_lag"].size(), 2u);
  EXPECT_EQ(j["curve"].back()["step"], 400);
  // --out: the numbers and the figures, as the analyses write them.
  const auto out = dir / "lab";
  const auto w = run("lab markov --p 0.2 --q 0.3 --window 2 --steps 50 --out " + out.string(), dir);
  ASSERT_EQ(w.exit_code, 0) << w.err;
  for (const char* file : {"summary.json", "loss.csv"})
    EXPECT_TRUE(std::filesystem::exists(out / file)) << file;
#ifdef DSTUDIO_HAVE_FIGURES
  for (const char* file : {"loss.pdf", "loss.png", "mixing.pdf", "mixing.csv"})
    EXPECT_TRUE(std::filesystem::exists(out / file)) << file;
#endif
  const auto report = dstudio::test::check_csv_files(out);
  EXPECT_TRUE(dstudio::test::all_ok(report)) << dstudio::test::joined(report);
  const auto loss = dstudio::test::read_csv_with_python(out / "loss.csv");
  ASSERT_EQ(loss.size(),
            1u + nlohmann::json::parse(std::ifstream(out / "summary.json"))["curve"].size());
  // Out of range: exit 2 and the option named.
  for (const std::string bad : {"--p 0", "--q 1.5", "--order 4", "--states 9", "--window 0",
                                "--steps 0", "--mixer mamba", "--window 40"}) {
    const auto e = run("lab markov " + bad, dir);
    EXPECT_EQ(e.exit_code, 2) << bad;
    EXPECT_THAT(e.err, HasSubstr(bad.substr(2, bad.find(' ') - 2))) << bad;
  }
}

// The causal analyses keep the identities that hold whatever the model: the whole window as the
// context changes nothing (its score is the plain policy's, which the ablation plays on its own
// path), the last layer's lens is the action, and every component is ablated both ways.
TEST_F(Analyses, TheCausalAnalysesKeepTheirIdentities) {
  auto j = analyze("knockout --windows 6 --episodes 2", "knockout");
  ASSERT_EQ(j["models"].size(), 1u);
  const auto& model = j["models"][0];
  ASSERT_EQ(model["contexts"].size(), 5u);  // K = 5
  EXPECT_EQ(model["action_error"][4].get<double>(), 0.0) << "context:K changes nothing";
  EXPECT_GT(model["action_error"][0].get<double>(), 0.0) << "one step of context changes actions";
  const auto plain = analyze("ablation --episodes 2 --seeds 1", "ablation-for-knockout");
  EXPECT_NEAR(model["score"][4].get<double>(), plain["none"]["mean"].get<double>(), 1e-9);
  EXPECT_LE(model["score_low"][4].get<double>(), model["score"][4].get<double>());
  EXPECT_GE(model["score_high"][4].get<double>(), model["score"][4].get<double>());
  // The interval of two episodes is the two scores themselves (mean -/+ their population std),
  // never Student's t over one degree of freedom, 12.7 times as wide, far past what a score can
  // be; and so few episodes are warned of.
  const double mean = plain["none"]["mean"].get<double>(), std = plain["none"]["std"].get<double>();
  ASSERT_GT(std, 0.0) << "two episodes alike would say nothing of the interval";
  EXPECT_NEAR(model["score_low"][4].get<double>(), mean - std, 1e-9);
  EXPECT_NEAR(model["score_high"][4].get<double>(), mean + std, 1e-9);
  ASSERT_TRUE(j.contains("warnings"));
  EXPECT_THAT(j["warnings"][0].get<std::string>(),
              HasSubstr("the 95% intervals rest on 2 episodes each"));
  EXPECT_TRUE(std::filesystem::exists(*dir_ / "knockout" / "knockout.csv"));
  EXPECT_TRUE(std::filesystem::exists(*dir_ / "knockout" / "knockout_score.png"));

  j = analyze("action-lens --windows 6", "action-lens");
  ASSERT_EQ(j["layers"].size(), 3u);
  EXPECT_EQ(j["layers"][2]["distance"].get<double>(), 0.0) << "the last layer's lens is the action";
  EXPECT_EQ(j["layers"][2]["per_joint"].size(), 3u);
  EXPECT_GT(j["layers"][0]["distance"].get<double>(), 0.0);

  j = analyze("heads --windows 6 --episodes 1", "heads");
  // Three layers of one head and an MLP each, replaced by zero and by their mean.
  ASSERT_EQ(j["components"].size(), 12u);
  EXPECT_EQ(j["components"][0]["spec"], "head:1.1=zero");
  EXPECT_EQ(j["components"][1]["spec"], "mlp:1=zero");
  EXPECT_EQ(j["components"][6]["spec"], "head:1.1=mean");
  for (const auto& c : j["components"]) {
    EXPECT_GT(c["action_change"].get<double>(), 0.0) << c["spec"];
    EXPECT_TRUE(c["score"].is_number()) << c["spec"];
  }
  const auto report = dstudio::test::check_csv_files(*dir_ / "heads");
  EXPECT_TRUE(dstudio::test::all_ok(report)) << dstudio::test::joined(report);
}

// Patching against values that hold whatever the weights: the stream after the last block at the
// last state token is all the action reads (fraction 1), a token after it changes nothing
// (fraction 0); the components are every head and MLP.
TEST_F(Analyses, PatchingRecoversAllAtTheActionsTokenAndNothingAfterIt) {
  for (const std::string contrast : {"targets", "episodes", "modality"}) {
    SCOPED_TRACE(contrast);
    // A model trained for 20 steps hardly heeds the target: far apart, and a low floor. Float
    // rounding (~1e-7) is then a visible share of a small change: fractions hold within 1e-3.
    const auto j = analyze(
        "patching --windows 6 --contrast " + contrast + " --high 20000 --low 0 --floor 1e-5",
        "patching-" + contrast);
    EXPECT_EQ(j["contrast"], contrast);
    ASSERT_GT(j["windows_used"].get<int>(), 0);
    ASSERT_EQ(j["components"].size(), 6u);
    EXPECT_EQ(j["components"][1]["spec"], "mlp:1");
    // The stream table: layer, token, fraction; K = 5, so s5 is token 14 and a5 token 15.
    const auto rows =
        dstudio::test::read_csv_with_python(*dir_ / ("patching-" + contrast) / "patching.csv");
    ASSERT_FALSE(rows.empty());
    ASSERT_EQ(rows[0][0], "site");
    ASSERT_EQ(rows[0][1], "layer");
    ASSERT_EQ(rows[0][2], "position");
    ASSERT_EQ(rows[0][3], "fraction");
    int checked = 0;
    for (const auto& row : rows) {
      if (row[0] != "resid") continue;
      if (row[1] == "3" && row[2] == "s5") {
        EXPECT_NEAR(std::stod(row[3]), 1.0, 1e-3);
        ++checked;
      }
      if (row[2] == "a5") {
        EXPECT_NEAR(std::stod(row[3]), 0.0, 1e-3);
        ++checked;
      }
    }
    EXPECT_EQ(checked, 4);
    // The grids' CSVs (a row label, then a cell per column) read back with Python's reader.
    const auto report = dstudio::test::check_csv_files(*dir_ / ("patching-" + contrast));
    EXPECT_TRUE(dstudio::test::all_ok(report)) << dstudio::test::joined(report);
  }
  auto r = run("analyze patching --contrast nothing --checkpoint " + checkpoint_ + " --out " +
                   (*dir_ / "patching-nothing").string(),
               *dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("targets"));
  // The same target twice moves no action: nothing to recover, said, exit 1, and no folder of
  // blank figures; likewise a floor above every change.
  for (const std::string options : {"--high 1000 --low 1000", "--high 20000 --low 0 --floor 1e6"}) {
    SCOPED_TRACE(options);
    const auto out = *dir_ / "patching-no-change";
    r = run("analyze patching --windows 6 " + options + " --checkpoint " + checkpoint_ + " --out " +
                out.string(),
            *dir_);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr("patching has nothing to recover"));
    EXPECT_THAT(r.err, HasSubstr("--floor"));
    EXPECT_FALSE(std::filesystem::exists(out));
  }
}

// Attribution's parts add up to the action before the tanh; probes are fitted and tested on
// different episodes; steering writes a direction predict reads back, and its alpha 0 plays
// exactly the unsteered policy at the low target.
TEST_F(Analyses, AttributionProbesAndSteeringKeepTheirIdentities) {
  auto j = analyze("attribution --windows 6", "attribution");
  EXPECT_LT(j["largest_sum_error"].get<double>(), 1e-4);
  ASSERT_EQ(j["parts"].size(), 11u);  // embeddings, 3 x (head, mixer bias, MLP), biases
  EXPECT_EQ(j["parts"][0]["part"], "embeddings");
  EXPECT_EQ(j["parts"][1]["part"], "L1 H1");
  EXPECT_EQ(j["parts"][10]["part"], "biases");

  j = analyze("probes --windows 24", "probes");
  EXPECT_GT(j["fit_rows"].get<int>(), 0);
  EXPECT_GT(j["test_rows"].get<int>(), 0);
  ASSERT_EQ(j["layers"].size(), 4u);  // the embedded tokens and three blocks
  for (const auto& layer : j["layers"])
    for (const auto& [type, scores] : layer["r2"].items())
      for (const auto& [target, r2] : scores.items())
        if (r2.is_number()) {
          EXPECT_LE(r2.get<double>(), 1.0) << type << " " << target;
        }
  // The state token's embedding is a linear map of the state (then normalised): its velocities
  // read back well on held-out episodes.
  EXPECT_GT(j["layers"][0]["r2"]["s"]["velocities (mean)"].get<double>(), 0.5);

  j = analyze("steering --windows 6 --episodes 1 --alphas 0,1 --layers 2 --low 500 --high 1500",
              "steering");
  ASSERT_EQ(j["directions"].size(), 3u);
  const auto direction = *dir_ / "steering" / "direction_L2.json";
  ASSERT_TRUE(std::filesystem::exists(direction));
  ASSERT_EQ(j["runs"].size(), 4u);  // the target at alpha 0 and 1, steering at alpha 0 and 1
  EXPECT_EQ(j["runs"][0]["how"], "target");
  EXPECT_EQ(j["runs"][2]["how"], "steer");
  EXPECT_EQ(j["runs"][0]["target"].get<double>(), 500.0);
  EXPECT_EQ(j["runs"][0]["score"].get<double>(), j["runs"][2]["score"].get<double>());
  // predict steers with the file; one of another width is refused naming both widths.
  const std::string predict = "predict --checkpoint " + checkpoint_ + " --input " +
                              std::string(DSTUDIO_TEST_DATA) + "/corl_dt/a_inputs.h5 --output ";
  auto r = run(
      predict + (*dir_ / "steered.h5").string() + " --intervene steer:2=1.5*" + direction.string(),
      *dir_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("actions (4, 5, 3)"));
  std::ofstream(*dir_ / "narrow.json") << R"({"direction": [1, 2, 3]})";
  r = run(predict + (*dir_ / "refused.h5").string() + " --intervene steer:2=1*" +
              (*dir_ / "narrow.json").string(),
          *dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("the direction has 3 numbers, the model's stream 16"));
  EXPECT_FALSE(std::filesystem::exists(*dir_ / "refused.h5"));
}

// A dataset whose states have another size than the model's (walker2d's 17 for a hopper model):
// every analysis that cuts windows from it, and predict's mean ablation, refuse it naming both
// files and both sizes before a window reaches the model; nothing is written.
TEST_F(Analyses, ADatasetOfAnotherSizeIsRefusedBeforeAnyWindowIsBuilt) {
  dstudio::test::D4rlSpec spec;
  spec.n = 400;
  spec.obs_dim = 17;  // Walker2d's
  spec.act_dim = 6;
  spec.terminals.assign(400, 0);
  for (int i = 99; i < 400; i += 100) spec.terminals[static_cast<std::size_t>(i)] = 1;
  const auto walker = *dir_ / "walker-sized.hdf5";
  dstudio::test::write_d4rl_fixture(walker, spec);
  const std::string refusal = walker.string() + " does not fit " + checkpoint_ +
                              ": its states have 17 values and its actions 6; the model (dt, "
                              "hopper) takes 11 and 3";
  for (const std::string analysis :
       {"attention --windows 2", "locality --windows 2", "patching --windows 2",
        "knockout --windows 2 --episodes 1", "heads --windows 2 --episodes 1",
        "action-lens --windows 2", "attribution --windows 2", "probes --windows 8",
        "steering --windows 2 --episodes 1", "tsne --windows 2 --iterations 250"}) {
    const auto out = *dir_ / "misfit";
    const auto r = run("analyze " + analysis + " --checkpoint " + checkpoint_ + " --dataset " +
                           walker.string() + " --out " + out.string(),
                       *dir_);
    EXPECT_EQ(r.exit_code, 1) << analysis << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(refusal)) << analysis;
    EXPECT_FALSE(std::filesystem::exists(out / "summary.json")) << analysis;
  }
  const auto r =
      run("predict --checkpoint " + checkpoint_ + " --input " + std::string(DSTUDIO_TEST_DATA) +
              "/corl_dt/a_inputs.h5 --output " + (*dir_ / "misfit.h5").string() +
              " --intervene head:1.1=mean --dataset " + walker.string(),
          *dir_);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr(refusal));
  EXPECT_FALSE(std::filesystem::exists(*dir_ / "misfit.h5"));
}

TEST_F(Analyses, LocalityWritesTheLagProfilePerLayer) {
  const auto j = analyze("locality --windows 4 --compare " + checkpoint_, "locality");
  ASSERT_EQ(j["layers"].size(), 3u);
  for (const auto& layer : j["layers"]) {
    double total = 0.0, mean = 0.0;
    for (std::size_t lag = 0; lag < layer["weight_by_lag"].size(); ++lag) {
      total += layer["weight_by_lag"][lag].get<double>();
      mean += static_cast<double>(lag) * layer["weight_by_lag"][lag].get<double>();
    }
    EXPECT_NEAR(total, 1.0, 1e-6);
    EXPECT_NEAR(layer["mean_lag"].get<double>(), mean, 1e-9);
    EXPECT_NEAR(layer["mass_within_1_step"].get<double>(),
                layer["weight_by_lag"][0].get<double>() + layer["weight_by_lag"][1].get<double>(),
                1e-9);
  }
  // Against itself: the same curves.
  EXPECT_EQ(j["compare"]["layers"][0]["mean_lag"], j["layers"][0]["mean_lag"]);
  bool figure = false;
  for (const auto& f : j["files"]) figure |= f.get<std::string>().ends_with("locality_layer1.png");
  EXPECT_TRUE(figure);
  EXPECT_TRUE(std::filesystem::exists(*dir_ / "locality" / "locality.csv"));
}
