// Two processes on one folder: a second `train` or `sweep task` on a run or a cell another process
// writes is refused naming that process, a second `sweep run` skips the cell, and a holder killed
// with SIGKILL leaves the folder usable; a finished run is replaced only with --overwrite; a run
// killed between a metrics row and its next checkpoint resumes with one row a step. Then what a
// sweep takes from its files: seeds within 2^63 - 1, a grid that cannot be scored refused before
// training, and hand-edited results warned about and left out.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "cli_background.h"
#include "cli_run.h"
#include "dstudio/common/folder_lock.h"
#include "h5_fixture.h"

namespace {

namespace fs = std::filesystem;
using dstudio::test::kill_and_reap;
using dstudio::test::read_text;
using dstudio::test::run_cli;
using dstudio::test::start_cli;
using dstudio::test::wait_for;
using testing::HasSubstr;
using testing::Not;

const char* kTiny = R"('{"hidden": 16, "layers": 1, "context_length": 5}')";

// The steps of a metrics file's rows (CSV: the first field after the header; JSON lines: "step").
std::vector<long long> csv_steps(const fs::path& file) {
  std::vector<long long> steps;
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line))
    if (!line.empty()) steps.push_back(std::stoll(line.substr(0, line.find(','))));
  return steps;
}
std::vector<long long> jsonl_steps(const fs::path& file) {
  std::vector<long long> steps;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) steps.push_back(nlohmann::json::parse(line)["step"].get<long long>());
  return steps;
}

class TwoWriters : public dstudio::test::RandomDatasetSuite {
 protected:
  static std::string train(const fs::path& out, long long steps, const std::string& extra = "") {
    return "train --variant dt --dataset " + dataset() + " --out " + out.string() + " --steps " +
           std::to_string(steps) + " --config " + kTiny +
           R"( --training '{"batch_size": 8, "log_every": 10, "checkpoint_every": 500}' --threads 1 )" +
           extra;
  }
};

TEST_F(TwoWriters, ASecondTrainingOfOneRunIsRefusedAndAKilledOneResumesWithOneMetricsRowAStep) {
  dstudio::test::TempDir work;
  const auto run = work / "run";
  const pid_t first = start_cli(train(run, 1'000'000), work.path(), "first");
  // Ready: it holds the folder, has written a checkpoint, and has rows past it.
  const auto past_checkpoint = [&] {
    if (!fs::exists(run / "checkpoint.pt")) return false;
    const auto steps = csv_steps(run / "metrics.csv");
    return !steps.empty() && steps.back() % 500 != 0;
  };
  ASSERT_TRUE(wait_for(first, run, [&] { return dstudio::folder_holder(run).has_value(); }))
      << read_text(work / "first.err");

  auto r = run_cli(train(run, 100), work);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr(run.string()));
  EXPECT_THAT(r.err, HasSubstr("process " + std::to_string(first)));
  EXPECT_THAT(r.out, Not(HasSubstr("checkpoint")));

  ASSERT_TRUE(wait_for(first, run, past_checkpoint)) << read_text(work / "first.err");
  kill_and_reap(first, SIGKILL);
  EXPECT_FALSE(dstudio::folder_holder(run).has_value());
  r = run_cli("checkpoint info " + (run / "checkpoint.pt").string() + " --json", work);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const long long saved = nlohmann::json::parse(r.out)["step"].get<long long>();
  ASSERT_GT(csv_steps(run / "metrics.csv").back(), saved)
      << "the kill left rows past the checkpoint";

  r = run_cli("train --resume " + (run / "checkpoint.pt").string() + " --steps " +
                  std::to_string(saved + 30),
              work);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const auto& steps : {csv_steps(run / "metrics.csv"), jsonl_steps(run / "metrics.jsonl")}) {
    ASSERT_FALSE(steps.empty());
    EXPECT_EQ(steps.back(), saved + 30);
    for (std::size_t i = 1; i < steps.size(); ++i)
      EXPECT_LT(steps[i - 1], steps[i]) << "row " << i << ": one row a step, in order";
  }

  // Finished: a new run there is refused unless asked to start again.
  r = run_cli(train(run, 20), work);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("holds a run already"));
  EXPECT_THAT(r.err, HasSubstr("--overwrite"));
  EXPECT_EQ(csv_steps(run / "metrics.csv").back(), saved + 30) << "the refused run changed nothing";
  r = run_cli(train(run, 20, "--overwrite"), work);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(csv_steps(run / "metrics.csv"), (std::vector<long long>{10, 20}));
}

// SIGTERM (a batch system's time limit, the end of a session) stops a training as Ctrl-C does:
// at the next step, with a checkpoint at that step that --resume continues from.
TEST_F(TwoWriters, ATrainingStoppedBySigtermKeepsACheckpointAtItsStep) {
  dstudio::test::TempDir work;
  const auto run = work / "run";
  const pid_t pid = start_cli(train(run, 1'000'000), work.path(), "term");
  ASSERT_TRUE(wait_for(pid, run, [&] { return !csv_steps(run / "metrics.csv").empty(); }))
      << read_text(work / "term.err");
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "ended by the signal, not by itself";
  EXPECT_EQ(WEXITSTATUS(status), 130);
  const std::string out = read_text(work / "term.out");
  const auto at = out.find("stopped at step ");
  ASSERT_NE(at, std::string::npos) << out;
  const long long step = std::stoll(out.substr(at + 16));
  EXPECT_GE(step, csv_steps(run / "metrics.csv").back());
  const auto saved = run / ("checkpoint-" + std::to_string(step) + ".pt");
  auto r = run_cli("checkpoint info " + saved.string() + " --json", work);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["step"].get<long long>(), step);
}

TEST_F(TwoWriters, ASecondTaskOnACellIsRefusedASecondSweepRunSkipsItAndAKilledTaskLeavesItUsable) {
  dstudio::test::TempDir work;
  const auto grid = work / "grid.json";
  std::ofstream(grid) << R"({"variants": ["dt"], "datasets": [")" << dataset()
                      << R"("], "seeds": [0],
      "config": {"hidden": 16, "layers": 1, "context_length": 5},
      "training": {"steps": 1000000, "batch_size": 8, "log_every": 10, "checkpoint_every": 500}, "eval_episodes": 0})";
  const auto sweep = work / "sweep";
  auto r = run_cli("sweep create --grid " + grid.string() + " --out " + sweep.string() + " --json",
                   work);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto cell = sweep / "cells" / nlohmann::json::parse(r.out)[0]["name"].get<std::string>();

  const pid_t first = start_cli("sweep task " + sweep.string() + " --index 0", work.path(), "task");
  ASSERT_TRUE(wait_for(first, cell, [&] {
    return dstudio::folder_holder(cell).has_value() && fs::exists(cell / "task.json");
  })) << read_text(work / "task.err");
  r = run_cli("sweep task " + sweep.string() + " --index 0", work);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr(cell.string()));
  EXPECT_THAT(r.err, HasSubstr("process " + std::to_string(first)));
  EXPECT_THAT(read_text(cell / "task.json"), Not(HasSubstr("\"failed\"")))
      << "the refused task leaves the holder's status";

  r = run_cli("sweep run " + sweep.string(), work);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("is being trained by process " + std::to_string(first) + " on "));
  EXPECT_THAT(r.out, HasSubstr("1 held by other processes"));

  kill_and_reap(first, SIGKILL);
  // The cell is free at once: a new task claims it, and stops cleanly on SIGTERM.
  const pid_t again =
      start_cli("sweep task " + sweep.string() + " --index 0", work.path(), "again");
  ASSERT_TRUE(wait_for(again, cell, [&] {
    const auto holder = dstudio::folder_holder(cell);
    return holder && holder->pid == again &&
           read_text(cell / "task.json").find("\"pid\": " + std::to_string(again)) !=
               std::string::npos;
  })) << read_text(work / "again.err");
  ::kill(again, SIGTERM);
  int status = 0;
  ::waitpid(again, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << read_text(work / "again.err");
  EXPECT_TRUE(fs::exists(cell / "checkpoint.pt"));
}

TEST_F(TwoWriters, SeedsBeyondTwoToTheSixtyThreeAreRefusedWhereTheyEnter) {
  dstudio::test::TempDir work;
  const auto grid = [&](const std::string& seeds) {
    const auto path = work / "grid.json";
    std::ofstream(path) << R"({"variants": ["dt"], "datasets": [")" << dataset()
                        << R"("], "seeds": )" << seeds
                        << R"(, "training": {"steps": 10}, "eval_episodes": 0})";
    return path.string();
  };
  auto r = run_cli("sweep create --dry-run --grid " + grid("[9223372036854775808]") + " --out " +
                       (work / "s").string(),
                   work);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("[0, 2^63 - 1]"));
  r = run_cli("sweep create --dry-run --grid " + grid("[18446744073709551615]") + " --out " +
                  (work / "s").string(),
              work);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = run_cli("sweep create --dry-run --grid " + grid("[9223372036854775807]") + " --out " +
                  (work / "s").string(),
              work);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run_cli("train --variant dt --dataset " + dataset() + " --out " + (work / "r").string() +
                  " --seed 9223372036854775808",
              work);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_FALSE(fs::exists(work / "r"));
}

TEST_F(TwoWriters, AGridThatCannotBeScoredIsRefusedBeforeAnythingTrains) {
  dstudio::test::TempDir work;
  auto r =
      run_cli("dataset synth --transitions 2000 --out " + (work / "synth.hdf5").string(), work);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto grid = work / "grid.json";
  std::ofstream(grid)
      << R"({"variants": ["dt"], "datasets": ["synth.hdf5"], "training": {"steps": 10}, "eval_episodes": 1})";
  r = run_cli("sweep create --grid " + grid.string() + " --out " + (work / "s").string(), work);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("synth.hdf5: names no environment"));
  EXPECT_THAT(r.err, HasSubstr("\"eval_episodes\": 0"));
  EXPECT_FALSE(fs::exists(work / "s"));
  std::ofstream(grid)
      << R"({"variants": ["dt"], "datasets": ["synth.hdf5"], "training": {"steps": 10}, "eval_episodes": 0})";
  r = run_cli("sweep create --grid " + grid.string() + " --out " + (work / "s").string(), work);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(TwoWriters, CollectLeavesOutHandEditedResultsWithAWarningAndMarksGroupsWithUnfinishedSeeds) {
  dstudio::test::TempDir work;
  const auto grid = work / "grid.json";
  std::ofstream(grid) << R"({"variants": ["dt"], "datasets": [")" << dataset()
                      << R"("], "seeds": [0, 1, 2],
      "training": {"steps": 10}, "eval_episodes": 0})";
  const auto sweep = work / "sweep";
  auto r = run_cli("sweep create --grid " + grid.string() + " --out " + sweep.string() + " --json",
                   work);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto cells = nlohmann::json::parse(r.out);
  const auto dir = [&](int i) { return sweep / "cells" / cells[i]["name"].get<std::string>(); };
  // 0: "finished" without a checkpoint; 1: a real score, a best score that is text; 2: a score
  // no policy reaches.
  std::ofstream(dir(0) / "task.json")
      << R"({"state": "finished", "step": 10, "total": 10, "score": 1e308, "score_std": 0})";
  std::ofstream(dir(1) / "task.json")
      << R"({"state": "finished", "step": 10, "total": 10, "score": 50, "score_std": 1, "best_score": "abc"})";
  std::ofstream(dir(1) / "checkpoint.pt") << "x";
  std::ofstream(dir(2) / "task.json")
      << R"({"state": "finished", "step": 10, "total": 10, "score": 1e308, "score_std": 0})";
  std::ofstream(dir(2) / "checkpoint.pt") << "x";
  r = run_cli("sweep collect " + sweep.string() + " --json", work);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("cell 0 (" + cells[0]["name"].get<std::string>() +
                               "): said to be finished, but its checkpoint.pt is missing"));
  EXPECT_THAT(r.err, HasSubstr("cell 1 (" + cells[1]["name"].get<std::string>() +
                               "): task.json: best_score is \"abc\", not a number"));
  EXPECT_THAT(r.err, HasSubstr("cell 2 (" + cells[2]["name"].get<std::string>() +
                               "): task.json: score is 1e+308"));
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["groups"].size(), 1u);
  EXPECT_EQ(j["groups"][0]["finished"], 2);
  EXPECT_EQ(j["groups"][0]["score_mean"], 50.0);
  EXPECT_EQ(j["groups"][0]["score_std"], 0.0);
  EXPECT_EQ(j["cells"][0]["state"], "failed");
  const auto table = read_text(sweep / "results" / "table.tex");
  EXPECT_THAT(table, HasSubstr("50.0 $\\pm$ 0.0} (2 of 3)"));
  EXPECT_THAT(table, Not(HasSubstr("e+")));
}

}  // namespace
