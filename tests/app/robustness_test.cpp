// What the command line refuses and what it never does, tried as a careful user and as a hostile
// file would: options out of their range exit 2 before any work and make no output; damaged
// checkpoints are refused (exit 1, the file named) by every command that loads one; a training
// run killed at any moment resumes from a valid checkpoint; a full disk says so and keeps the
// previous checkpoint.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_run.h"
#include "h5_fixture.h"

namespace {

namespace fs = std::filesystem;
using testing::HasSubstr;

using dstudio::test::run_cli;

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A hopper dataset from the random behaviour and a small DT trained on it.
class Robustness : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new dstudio::test::TempDir;
    data_ = (*dir_ / "random.hdf5").string();
    auto r = run_cli(
        "dataset generate --env hopper --kind random --transitions 3000 --seed 1 --out " + data_,
        *dir_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run_cli(
        "train --variant dt --dataset " + data_ +
            " --steps 10 --threads 1 --config '{\"hidden\": 16, \"context_length\": 5}' --out " +
            (*dir_ / "dt").string(),
        *dir_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    checkpoint_ = (*dir_ / "dt" / "checkpoint.pt").string();
  }
  static void TearDownTestSuite() { delete dir_; }

  static inline dstudio::test::TempDir* dir_ = nullptr;
  static inline std::string data_, checkpoint_;
};

// Each listed command line exits 2 with a message naming the option, and writes nothing.
TEST_F(Robustness, OptionsOutOfRangeExitTwoBeforeAnyWork) {
  const std::string never = (*dir_ / "never").string();
  const std::string train = "train --variant dt --dataset " + data_ + " --out " + never + " ";
  const std::string attention =
      "analyze attention --checkpoint " + checkpoint_ + " --out " + never + " ";
  struct Case {
    std::string args, names;
  };
  const std::vector<Case> cases = {
      {train + "--steps 0", "--steps"},
      {train + "--steps -1", "--steps"},
      {train + "--steps ''", "--steps"},
      {train + "--steps 99999999999999999999", "--steps"},
      {train + "--steps 1.5", "--steps"},
      {train + "--seed -1", "--seed"},
      {train + "--seed 18446744073709551616", "--seed"},
      {train + "--training '{\"warmup_steps\": -1}'", "warmup_steps"},
      {train + "--training '{\"grad_clip\": -1}'", "grad_clip"},
      {train + "--training '{\"checkpoint_every\": -5}'", "checkpoint_every"},
      {train + "--training '{\"seed\": -1}'", "seed"},
      {train + "--training '{\"steps\": 2.5}'", "steps"},
      {train + "--training '{\"beta2\": 1}'", "beta2"},
      {train + "--config ''", "--config"},
      {train + "--config '{\"hidden\": 1e12}'", "hidden"},
      {train + "--config '{\"dropout\": 1.5}'", "dropout"},
      {"import --format corl-dt " + std::string(DSTUDIO_TEST_DATA) +
           "/corl_dt/a_state_dict.pt --out " + never + " --env bogus",
       "bogus"},
      {attention + "--layer 99", "layer"},
      {attention + "--layer -1", "--layer"},
      {attention + "--head 99", "head"},
      {attention + "--head -1", "--head"},
      {attention + "--step -5", "--step"},
      {attention + "--step 100000000", "--step"},
      {attention + "--width nan", "--width"},
      {attention + "--width 1e6", "--width"},
      {attention + "--height inf", "--height"},
      {attention + "--font -3", "--font"},
      {"analyze tsne --checkpoint " + checkpoint_ + " --out " + never + " --snapshot-every -1",
       "--snapshot-every"},
      {"analyze rtg-sweep --checkpoint " + checkpoint_ + " --out " + never + " --multiples -1",
       "--multiples"},
      {"analyze rtg-sweep --checkpoint " + checkpoint_ + " --out " + never + " --targets nan",
       "--targets"},
      {"analyze rtg-sweep --checkpoint " + checkpoint_ + " --out " + never + " --base inf",
       "--base"},
      {"analyze ablation --checkpoint " + checkpoint_ + " --dataset " + data_ + " --out " + never,
       "--dataset"},
      {"eval --checkpoint " + checkpoint_ + " --targets nan", "--targets"},
      {"dataset generate --env hopper --kind medium --algorithm ars --noise nan --out " + never,
       "--noise"},
      {"dataset generate --env bogus --kind random --out " + never, "bogus"},
      {"dataset synth --seed -3 --out " + never, "--seed"},
      {"lab markov --p nan", "--p"},
      {"lab markov --window 0", "--window"},
      {"behaviour train --env hopper --out " + never + " --step-size nan", "--step-size"},
  };
  for (const auto& c : cases) {
    const auto r = run_cli(c.args, *dir_);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.names)) << c.args;
    EXPECT_FALSE(fs::exists(never)) << c.args;
    fs::remove_all(never);
  }
}

// B windows of K hopper steps with the given states (B x K x 11) for predict: actions 0,
// returns-to-go 1, timesteps 0 to K - 1.
void write_windows(const fs::path& path, hsize_t B, hsize_t K, const std::vector<double>& states) {
  const hsize_t S = 11, A = 3;
  dstudio::test::H5Writer file(path);
  file.numbers("states", states, {B, K, S}, H5T_IEEE_F32LE);
  file.numbers("actions", std::vector<double>(B * K * A, 0.0), {B, K, A}, H5T_IEEE_F32LE);
  file.numbers("returns_to_go", std::vector<double>(B * K, 1.0), {B, K}, H5T_IEEE_F32LE);
  std::vector<double> steps;
  for (hsize_t b = 0; b < B; ++b)
    for (hsize_t k = 0; k < K; ++k) steps.push_back(static_cast<double>(k));
  file.numbers("timesteps", steps, {B, K}, H5T_STD_I64LE);
}

// Windows longer than the model was built for are refused, naming the file and key; nothing is
// written.
TEST_F(Robustness, PredictRefusesWindowsLongerThanTheContext) {
  const auto input = *dir_ / "long-windows.h5";
  const hsize_t B = 2, K = 6;  // the checkpoint's K is 5
  write_windows(input, B, K, std::vector<double>(B * K * 11, 0.1));
  const auto out = *dir_ / "predicted.h5";
  const auto r = run_cli("predict --checkpoint " + checkpoint_ + " --input " + input.string() +
                             " --output " + out.string(),
                         *dir_);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("long-windows.h5"));
  EXPECT_THAT(r.err, HasSubstr("6 steps"));
  EXPECT_FALSE(fs::exists(out));
}

// Well formed but meaningless: states of 3e38 (finite float32) make the model's actions inf or nan
// in window 1; predict names that window and writes no file of nan.
TEST_F(Robustness, PredictRefusesAnActionThatIsNotAFiniteNumberNamingItsWindow) {
  const auto input = *dir_ / "huge-states.h5";
  const hsize_t B = 3, K = 5, S = 11;
  std::vector<double> states(B * K * S, 0.1);
  for (hsize_t i = K * S; i < 2 * K * S; ++i) states[i] = 3e38;  // window 1
  write_windows(input, B, K, states);
  const auto out = *dir_ / "predicted.h5";
  const auto r = run_cli("predict --checkpoint " + checkpoint_ + " --input " + input.string() +
                             " --output " + out.string() + " --no-normalize",
                         *dir_);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("window 1 (counting from 0) of 3"));
  EXPECT_THAT(r.err, HasSubstr("not a finite number"));
  EXPECT_FALSE(fs::exists(out));
}

// The reliability campaign's cases on predict's interventions, as a table: each spec or steering
// file, well formed or not, ends with its exit code and a message that names what is wrong, and
// leaves no file. Well formed but meaningless numbers (a direction past float32, an ALPHA whose
// product overflows the stream) are refused like malformed ones.
TEST_F(Robustness, TheCampaignsInterventionCasesEndWithTheirCodeAndMessage) {
  const auto direction = [&](const std::string& name, const std::string& entries) {
    const auto path = *dir_ / name;
    std::ofstream(path) << R"({"direction": [)" << entries << "]}";
    return path.string();
  };
  std::string sixteen, overflowing, large;
  for (int i = 0; i < 16; ++i) {
    // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on chains of concatenation.
    const char* comma = i ? ", " : "";
    sixteen.append(comma).append("0.25");
    overflowing.append(comma).append(i == 3 ? "3e39" : "0.25");
    large.append(comma).append("1e10");
  }
  const auto ok = direction("ok.json", sixteen);
  const auto past = direction("past-float32.json", overflowing);
  const auto big = direction("big.json", large);
  const auto text = direction("text.json", R"("x")");
  const auto narrow = direction("narrow.json", "0.5, 0.5");
  struct Case {
    std::string args;
    int exit_code;
    std::string said;
  };
  const std::vector<Case> cases = {
      {"--intervene steer:1=1*" + ok, 0, ""},
      {"--intervene steer:1=1*" + past, 2, "direction[3] is 3e+39, beyond float32's range"},
      {"--intervene steer:1=1e30*" + big, 2, "ALPHA times the direction reaches 1e+40"},
      // Inside float32, but the stream's norm overflows: the actions are nan, and said to be.
      {"--intervene steer:1=1e20*" + big, 1,
       "window 0 (counting from 0) of 4: the model's action is not a finite number"},
      {"--intervene steer:1=inf*" + ok, 2, "ALPHA must be a finite number"},
      {"--intervene steer:1=nan*" + ok, 2, "ALPHA must be a finite number"},
      {"--intervene steer:1=1*" + text, 2, "text.json: direction[0] is not a number"},
      {"--intervene steer:1=1*" + narrow, 2, "the direction has 2 numbers, the model's stream 16"},
      {"--intervene steer:1=1*" + (*dir_ / "absent.json").string(), 2,
       "absent.json: not a steering direction"},
      {"--intervene steer:9=1*" + ok, 2, "steer:9="},
      {"--intervene head:9.1=zero", 2, "head:9.1=zero: the model has"},
      {"--intervene head:1=zero", 2, "expected head:L.H=zero|mean|resample"},
      {"--intervene modality:x=zero", 2, "modality:x=zero"},
      {"--patch resid:1.2", 2, "--patch needs --patch-from"},
  };
  const std::string inputs = std::string(DSTUDIO_TEST_DATA) + "/corl_dt/a_inputs.h5";
  const auto out = *dir_ / "campaign.h5";
  for (const auto& c : cases) {
    fs::remove(out);
    const auto r = run_cli("predict --checkpoint " + checkpoint_ + " --input " + inputs +
                               " --no-normalize --output " + out.string() + " " + c.args,
                           *dir_);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.args << "\n" << r.err;
    if (c.exit_code == 0) {
      EXPECT_TRUE(fs::exists(out)) << c.args;
      continue;
    }
    EXPECT_THAT(r.err, HasSubstr(c.said)) << c.args;
    EXPECT_FALSE(fs::exists(out)) << c.args;
  }
}

// Flipped bits and cut files: every command that loads the checkpoint exits 1 and names it.
TEST_F(Robustness, DamagedCheckpointsAreRefusedByEveryCommand) {
  const std::string good = read_all(checkpoint_);
  std::mt19937_64 random(11);
  const std::string inputs = std::string(DSTUDIO_TEST_DATA) + "/corl_dt/a_inputs.h5";
  // One flipped bit and one cut file: the loaders' checks themselves are tried on thousands of
  // each in model_tests (CheckpointIntegrity); here, that every command runs them.
  for (int k = 0; k < 2; ++k) {
    std::string bad = good;
    if (k % 2 == 0) {
      const std::size_t at = random() % good.size();
      bad[at] = static_cast<char>(bad[at] ^ (1 << (random() % 8)));
    } else {
      bad.resize(random() % good.size());
    }
    const auto path = (*dir_ / ("damaged-" + std::to_string(k) + ".pt")).string();
    std::ofstream(path, std::ios::binary)
        .write(bad.data(), static_cast<std::streamsize>(bad.size()));
    const std::string out = (*dir_ / "out").string();
    for (const std::string& command :
         {"checkpoint info " + path, "checkpoint verify " + path,
          "checkpoint slim " + path + " --out " + out,
          "eval --checkpoint " + path + " --episodes 1", "train --resume " + path + " --out " + out,
          "predict --checkpoint " + path + " --input " + inputs + " --output " + out,
          "analyze attention --checkpoint " + path + " --out " + out}) {
      const auto r = run_cli(command, *dir_);
      EXPECT_EQ(r.exit_code, 1) << command << "\n" << r.err;
      EXPECT_THAT(r.err, HasSubstr(path)) << command;
      EXPECT_FALSE(fs::exists(out)) << command;
      fs::remove_all(out);
    }
  }
}

pid_t spawn_cli(const std::vector<std::string>& args, const fs::path& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    std::FILE* f = std::freopen(log.c_str(), "w", stdout);
    (void)f;
    f = std::freopen(log.c_str(), "a", stderr);
    std::vector<char*> argv{const_cast<char*>(DSTUDIO_CLI)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(DSTUDIO_CLI, argv.data());
    _exit(127);
  }
  return pid;
}

// kill -9 at random moments of a run that checkpoints every few steps: whatever is on disk is a
// whole, verified checkpoint, and the run resumes from it to its end.
TEST_F(Robustness, TrainingKilledAtRandomMomentsResumesFromAValidCheckpoint) {
  const fs::path run = *dir_ / "killed";
  const auto checkpoint = run / "checkpoint.pt";
  std::mt19937 random(7);
  int verified = 0;
  for (int round = 0; round < 6; ++round) {
    std::vector<std::string> args;
    if (fs::exists(checkpoint)) {
      args = {"train", "--resume", checkpoint.string()};
    } else {
      args = {"train",
              "--variant",
              "dt",
              "--dataset",
              data_,
              "--steps",
              "3000",
              "--threads",
              "1",
              "--out",
              run.string(),
              "--config",
              "{\"hidden\": 16, \"context_length\": 5}",
              "--training",
              "{\"checkpoint_every\": 3, \"log_every\": 3}"};
    }
    const pid_t pid = spawn_cli(args, *dir_ / "train.log");
    if (round == 0) {
      // However slow the start (a loaded machine), the first kill comes once there is a checkpoint.
      for (int waited = 0; waited < 120'000 && !fs::exists(checkpoint); waited += 20)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      ASSERT_TRUE(fs::exists(checkpoint)) << read_all(*dir_ / "train.log");
    }
    // Anywhere: loading, training, in the middle of writing a checkpoint.
    std::this_thread::sleep_for(std::chrono::milliseconds(random() % 2500));
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    waitpid(pid, &status, 0);
    const auto r = run_cli("checkpoint verify " + checkpoint.string(), *dir_);
    EXPECT_EQ(r.exit_code, 0) << "round " << round << ": " << r.err;
    verified += r.exit_code == 0;
  }
  EXPECT_EQ(verified, 6);
  ASSERT_TRUE(fs::exists(checkpoint));
  // The run resumes to a nearer end and finishes.
  auto r = run_cli("checkpoint info --json " + checkpoint.string(), *dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto at = r.out.find("\"step\": ");
  ASSERT_NE(at, std::string::npos);
  const long step = std::stol(r.out.substr(at + 8));
  r = run_cli("train --resume " + checkpoint.string() + " --steps " + std::to_string(step + 6),
              *dir_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("finished " + std::to_string(step + 6) + " steps"));
  // What the killed writers left half written is gone once a writer of the same file runs.
  for (const auto& entry : fs::directory_iterator(run))
    EXPECT_EQ(entry.path().filename().string().find(".partial"), std::string::npos) << entry.path();
}

// A file system that fills up during training: the command says the disk is full, exits 1, and
// the checkpoint written before is still there and whole. Needs a private mount (root).
TEST_F(Robustness, AFullDiskSaysSoAndKeepsThePreviousCheckpoint) {
  if (geteuid() != 0 || std::system("unshare -m true 2>/dev/null") != 0)
    GTEST_SKIP() << "needs root for a private tmpfs";
  const auto size = fs::file_size(checkpoint_);
  // Room for one checkpoint and the run's logs, not for a second beside it.
  const auto kib = (size * 3 / 2) / 1024 + 8;
  const fs::path mount = *dir_ / "small-disk";
  fs::create_directories(mount);
  const std::string run = (mount / "run").string();
  const std::string script =
      "mount -t tmpfs -o size=" + std::to_string(kib) + "k none " + mount.string() + " && " +
      DSTUDIO_CLI + " train --variant dt --dataset " + data_ + " --steps 40 --threads 1 --out " +
      run +
      " --config '{\"hidden\": 16, \"context_length\": 5}' --training '{\"checkpoint_every\": 5, "
      "\"log_every\": 5}' > " +
      (*dir_ / "full.log").string() + " 2>&1; echo train=$? > " + (*dir_ / "full.status").string() +
      "; " + DSTUDIO_CLI + " checkpoint verify " + run + "/checkpoint.pt >> " +
      (*dir_ / "full.status").string() + " 2>&1; echo verify=$? >> " +
      (*dir_ / "full.status").string() + "; ls -a " + run + " >> " +
      (*dir_ / "full.status").string();
  ASSERT_EQ(std::system(("unshare -m sh -c \"" +
                         std::regex_replace(script, std::regex("([\"$])"), "\\$1") + "\"")
                            .c_str()),
            0);
  const std::string log = read_all(*dir_ / "full.log"), status = read_all(*dir_ / "full.status");
  EXPECT_THAT(status, HasSubstr("train=1")) << log;
  EXPECT_THAT(log, HasSubstr("disk full")) << log;
  EXPECT_THAT(status, HasSubstr("verify=0")) << status;
  EXPECT_THAT(status, HasSubstr("sealed")) << status;
  EXPECT_THAT(status, testing::Not(HasSubstr(".partial"))) << status;
}

}  // namespace
