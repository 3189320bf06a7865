// dstudio sweep on this machine: a grid's cells created (and only listed with --dry-run), trained
// a few at a time, skipped once finished, a cell stopped by SIGTERM resuming from its checkpoint,
// and status saying where each stands.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "cli_background.h"
#include "cli_run.h"
#include "csv_check.h"
#include "dstudio/common/read_file.h"
#include "h5_fixture.h"

namespace {

namespace fs = std::filesystem;
using dstudio::test::read_text;
using dstudio::test::run_cli;
using dstudio::test::start_cli;
using dstudio::test::wait_for;
using testing::HasSubstr;

class SweepCli : public dstudio::test::RandomDatasetSuite {
 protected:
  // A grid of tiny runs on the random dataset, written beside it.
  static std::string grid(const std::string& name, const std::string& variants,
                          const std::string& seeds, int steps, int eval_episodes) {
    const auto path = *dir_ / name;
    std::ofstream(path) << R"({"variants": )" << variants
                        << R"(, "datasets": ["random.hdf5"], "seeds": )" << seeds
                        << R"(, "config": {"hidden": 16, "layers": 1, "context_length": 5},
        "training": {"steps": )"
                        << steps << R"(, "batch_size": 8, "log_every": 10, "checkpoint_every": 50},
        "eval_episodes": )"
                        << eval_episodes << "}";
    return path.string();
  }

  static nlohmann::json status(const std::string& sweep) {
    const auto r = run_cli("sweep status " + sweep + " --json", *dir_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  }
};

TEST_F(SweepCli, CreatesRunsAndReportsEveryCell) {
  const auto g = grid("two-by-two.json", R"(["dt", "dc"])", "[0, 1]", 30, 2);
  const auto sweep = (*dir_ / "two-by-two").string();
  auto r = run_cli("sweep create --grid " + g + " --out " + sweep + " --dry-run", *dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("4 cells (dry run"));
  EXPECT_FALSE(std::filesystem::exists(sweep)) << "a dry run writes nothing";
  r = run_cli("sweep create --grid " + g + " --out " + sweep, *dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = status(sweep);
  ASSERT_EQ(j["cells"].size(), 4u);
  EXPECT_EQ(j["counts"]["pending"], 4);

  r = run_cli("sweep run " + sweep + " --jobs 2", *dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_THAT(r.out, HasSubstr("4 of 4 cells to train, 2 at a time"));
  j = status(sweep);
  EXPECT_EQ(j["counts"]["finished"], 4);
  for (const auto& c : j["cells"]) {
    EXPECT_EQ(c["state"], "finished") << c;
    EXPECT_EQ(c["step"], 30);
    EXPECT_EQ(c["total"], 30);
    EXPECT_TRUE(c["score"].is_number()) << c;
    EXPECT_TRUE(c["loss"].is_number()) << c;
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(sweep) / "cells" /
                                        c["name"].get<std::string>() / "checkpoint.pt"));
  }
  // As text, each column starts at the same place on every line, the header's included.
  r = run_cli("sweep status " + sweep, *dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines;
  for (std::size_t at = 0, end; (end = r.out.find('\n', at)) != std::string::npos; at = end + 1)
    lines.push_back(r.out.substr(at, end - at));
  ASSERT_GE(lines.size(), 5u) << r.out;
  const auto state_at = lines[0].find("state"), score_end = lines[0].find("score") + 5;
  for (std::size_t i = 1; i <= 4; ++i) {
    EXPECT_EQ(lines[i].find("finished"), state_at) << r.out;
    EXPECT_EQ(lines[i].find("  ", lines[i].find(" +- ") + 4) == std::string::npos
                  ? lines[i].size()
                  : lines[i].find("  ", lines[i].find(" +- ") + 4),
              score_end)
        << r.out;
  }
  // Seeds share a group; the variants do not.
  EXPECT_EQ(j["cells"][0]["group"], j["cells"][1]["group"]);
  EXPECT_NE(j["cells"][0]["group"], j["cells"][2]["group"]);
  // Collected: a row per cell and per group, the same scores as status, and the paper's table.
  r = run_cli("sweep collect " + sweep + " --json", *dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto collected = nlohmann::json::parse(r.out);
  ASSERT_EQ(collected["groups"].size(), 2u);
  for (const auto& group : collected["groups"]) {
    EXPECT_EQ(group["cells"], 2);
    EXPECT_EQ(group["finished"], 2);
  }
  const double s0 = j["cells"][0]["score"].get<double>(), s1 = j["cells"][1]["score"].get<double>();
  EXPECT_NEAR(collected["groups"][0]["score_mean"].get<double>(), (s0 + s1) / 2, 1e-9);
  EXPECT_NEAR(collected["groups"][0]["score_std"].get<double>(), std::abs(s0 - s1) / std::sqrt(2.0),
              1e-9);
  for (const char* file : {"cells.csv", "groups.csv", "results.json", "table.tex"})
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(sweep) / "results" / file)) << file;
  // Finished cells are not trained again.
  r = run_cli("sweep run " + sweep, *dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("0 of 4 cells to train"));
  // Another grid into the same folder is refused; a cell it lacks too.
  const auto other = grid("other.json", R"(["dt"])", "[5]", 30, 0);
  r = run_cli("sweep create --grid " + other + " --out " + sweep, *dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("another sweep"));
  r = run_cli("sweep task " + sweep + " --index 4", *dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("cells 0 to 3"));
}

TEST_F(SweepCli, AStoppedCellResumesFromItsCheckpoint) {
  const auto g = grid("long.json", R"(["dt"])", "[3]", 100000, 0);
  const auto sweep = (*dir_ / "long").string();
  ASSERT_EQ(run_cli("sweep create --grid " + g + " --out " + sweep, *dir_).exit_code, 0);
  // SIGTERM once the task's own status says it runs and has trained past step `after`, as Slurm's
  // time limit or a requeue sends it. Its task.json is watched as it changes (written every two
  // seconds while training) rather than guessing how long a loaded machine takes.
  fs::path cell_dir;
  for (const auto& e : fs::directory_iterator(fs::path(sweep) / "cells")) cell_dir = e.path();
  const auto stop_while_running = [&](long long after, const std::string& name) {
    const pid_t pid = start_cli("sweep task " + sweep + " --index 0", dir_->path(), name);
    const bool running = wait_for(pid, cell_dir, [&] {
      const auto t = nlohmann::json::parse(read_text(cell_dir / "task.json"), nullptr, false);
      return t.is_object() && t.value("state", "") == "running" && t.value("step", 0LL) > after;
    });
    ::kill(pid, SIGTERM);
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(running) << read_text(dir_->path() / (name + ".err"));
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  EXPECT_EQ(stop_while_running(0, "first"), 130);
  auto j = status(sweep);
  const auto& cell = j["cells"][0];
  EXPECT_EQ(cell["state"], "pending");
  const int stopped_at = cell["step"].get<int>();
  EXPECT_GT(stopped_at, 0);
  EXPECT_LT(stopped_at, 100000);
  EXPECT_THAT(cell["error"].get<std::string>(), HasSubstr("resumes from its checkpoint"));
  // The next task goes on from there (and is stopped again: the point is where it starts).
  EXPECT_EQ(stop_while_running(stopped_at, "again"), 130);
  j = status(sweep);
  EXPECT_EQ(j["cells"][0]["restarts"], 1);
  EXPECT_GT(j["cells"][0]["step"].get<int>(), stopped_at);
}

#ifdef DSTUDIO_HAVE_FIGURES
// The width in pixels of a PNG, from its IHDR chunk (bytes 16..19, big-endian).
std::uint32_t png_width(const std::filesystem::path& png) {
  std::ifstream in(png, std::ios::binary);
  unsigned char header[24] = {0};
  in.read(reinterpret_cast<char*>(header), sizeof header);
  return (std::uint32_t{header[16]} << 24) | (std::uint32_t{header[17]} << 16) |
         (std::uint32_t{header[18]} << 8) | header[19];
}

TEST_F(SweepCli, CollectDrawsTheGroupsAsFigures) {
  // Cells whose task.json says they finished with chosen scores: no training needed.
  const auto g = grid("figures.json", R"(["dt", "dc"])", "[0, 1]", 30, 2);
  const auto sweep = (*dir_ / "figures").string();
  auto r = run_cli("sweep create --grid " + g + " --out " + sweep + " --json", *dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto cells = nlohmann::json::parse(r.out);
  ASSERT_EQ(cells.size(), 4u);
  const double scores[] = {40.0, 44.0, 70.0, 71.0}, bests[] = {50.0, 52.0, 75.0, 80.0};
  for (std::size_t i = 0; i < 4; ++i) {
    const auto cell = std::filesystem::path(sweep) / "cells" / cells[i]["name"].get<std::string>();
    std::ofstream(cell / "task.json")
        << R"({"state": "finished", "step": 30, "total": 30, "score": )" << scores[i]
        << R"(, "score_std": 1.0, "best_score": )" << bests[i] << "}";
    std::ofstream(cell / "checkpoint.pt") << "a finished cell has its checkpoint";
  }
  // A venue's size, two of the three formats.
  r = run_cli("sweep collect " + sweep + " --preset neurips --formats pdf,png", *dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto results = std::filesystem::path(sweep) / "results";
  for (const char* file : {"scores.pdf", "scores.png", "scores.csv", "best_scores.pdf",
                           "best_scores.png", "best_scores.csv"})
    EXPECT_TRUE(std::filesystem::exists(results / file)) << file;
  EXPECT_FALSE(std::filesystem::exists(results / "scores.svg")) << "--formats pdf,png";
  EXPECT_EQ(png_width(results / "scores.png"), 1650u) << "NeurIPS's 5.5 in at 300 dpi";
  EXPECT_THAT(r.out, HasSubstr("scores.pdf"));
  // The figure's numbers are the groups': mean and sample std over the seeds.
  std::ifstream csv(results / "scores.csv");
  std::string header, dt, dc;
  std::getline(csv, header);
  std::getline(csv, dt);
  std::getline(csv, dc);
  EXPECT_EQ(header, "dataset,setting,measure,mean,std,seeds,cells");
  EXPECT_EQ(dt, "random,dt,final,42,2.82843,2,2");
  EXPECT_EQ(dc, "random,dc,final,70.5,0.707107,2,2");
  std::ifstream best_csv(results / "best_scores.csv");
  std::getline(best_csv, header);
  std::getline(best_csv, dt);
  EXPECT_EQ(dt, "random,dt,best,51,1.41421,2,2");
  // Every table parses with a standard reader; the groups, named with their JSON settings, whole.
  const auto report = dstudio::test::check_csv_files(results);
  EXPECT_TRUE(dstudio::test::all_ok(report)) << dstudio::test::joined(report);
  EXPECT_EQ(report.size(), 7u) << dstudio::test::joined(report);
  const auto groups = dstudio::test::read_csv_with_python(results / "groups.csv");
  ASSERT_EQ(groups.size(), 3u);
  ASSERT_EQ(groups[0].size(), 15u);
  EXPECT_EQ(groups[0][9], "score_iqm");
  EXPECT_EQ(groups[1][9], "42") << "the IQM of two seeds is their mean";
  // rliable's statistics: each setting's aggregates with intervals, P(dt > dc), the profiles, as
  // tables and figures, and the IQM table.
  for (const char* file : {"aggregates.png", "aggregates_best.png", "profiles.png",
                           "profiles_best.png", "improvement.png", "iqm.tex"})
    EXPECT_TRUE(std::filesystem::exists(results / file)) << file;
  const auto aggregates = dstudio::test::read_csv_with_python(results / "aggregates.csv");
  ASSERT_GE(aggregates.size(), 2u);
  EXPECT_EQ(aggregates[0], (std::vector<std::string>{"setting", "measure", "statistic", "estimate",
                                                     "low", "high", "datasets", "runs"}));
  EXPECT_EQ(aggregates[1][2], "iqm");
  EXPECT_EQ(aggregates[1][3], "42");
  const auto improvement = dstudio::test::read_csv_with_python(results / "improvement.csv");
  ASSERT_GE(improvement.size(), 2u);
  // dc's seeds (70, 71) beat both of dt's (40, 44): P(dt > dc) is 0, its interval too.
  EXPECT_EQ(improvement[1][2], "final");
  EXPECT_EQ(improvement[1][3], "0");
  EXPECT_EQ(improvement[1][5], "0");
  EXPECT_THAT(r.out, HasSubstr("IQM 42.0 ["));
  // Each figure has its recipe: drawn again byte for byte, refused once a cell's task.json changed.
  const auto bytes = [](const std::filesystem::path& path) {
    return dstudio::read_regular_file(path, std::uint64_t{1} << 30);
  };
  for (const char* name : {"scores", "aggregates", "improvement"}) {
    const auto recipe = results / (std::string(name) + ".recipe.json");
    ASSERT_TRUE(std::filesystem::exists(recipe)) << name;
    const auto again = *dir_ / (std::string(name) + "-again.png");
    r = run_cli("figure render " + recipe.string() + " --out " + again.string(), *dir_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(bytes(again), bytes(results / (std::string(name) + ".png"))) << name;
  }
  // The recipe's numbers are read as the command line reads --resamples and --bootstrap-seed: the
  // whole text a whole number in the option's range (12abc was read as 12, -1 and 1e3 accepted,
  // 1e9 resamples ran for minutes).
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"resamples", "12abc"},
                                                        {"resamples", "1000000000"},
                                                        {"resamples", "0"},
                                                        {"bootstrap-seed", "-1"},
                                                        {"bootstrap-seed", "1e3"}}) {
    auto j = nlohmann::json::parse(bytes(results / "scores.recipe.json"));
    j["options"][key] = value;
    const auto changed = results / "changed.recipe.json";
    std::ofstream(changed) << j.dump();
    const auto never = *dir_ / "changed.png";
    r = run_cli("figure render " + changed.string() + " --out " + never.string(), *dir_);
    EXPECT_EQ(r.exit_code, 1) << key << " " << value << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr("'options." + key + "': \"" + value + "\" is not a whole number"))
        << key << " " << value;
    EXPECT_FALSE(std::filesystem::exists(never));
    std::filesystem::remove(changed);
  }
  const auto edited = std::filesystem::path(sweep) / "cells" / cells[0]["name"].get<std::string>();
  std::ofstream(edited / "task.json")
      << R"({"state": "finished", "step": 30, "total": 30, "score": 99.0, "score_std": 1.0})";
  r = run_cli("figure render " + (results / "scores.recipe.json").string() + " --out " +
                  (*dir_ / "never.png").string(),
              *dir_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("task.json changed"));
  EXPECT_FALSE(std::filesystem::exists(*dir_ / "never.png"));
  EXPECT_THAT(groups[1][0], HasSubstr(R"("hidden":16)"));
  EXPECT_EQ(groups[1][2], "random");
  EXPECT_EQ(groups[1][3], "2");
  // An unknown preset is wrong usage, said before anything is written.
  r = run_cli("sweep collect " + sweep + " --preset nosuch --out " + (*dir_ / "never").string(),
              *dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("nosuch"));
  EXPECT_FALSE(std::filesystem::exists(*dir_ / "never"));
}
#endif

TEST_F(SweepCli, ABadGridIsRefusedBeforeAnythingIsWritten) {
  const auto path = *dir_ / "bad.json";
  std::ofstream(path) << R"({"variants": ["dt"], "datasets": ["missing.hdf5"]})";
  const auto r = run_cli(
      "sweep create --grid " + path.string() + " --out " + (*dir_ / "never").string(), *dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("missing.hdf5: no such file"));
  EXPECT_FALSE(std::filesystem::exists(*dir_ / "never"));
  EXPECT_EQ(run_cli("sweep status " + (*dir_ / "nowhere").string(), *dir_).exit_code, 1);
}

}  // namespace

namespace {

TEST_F(SweepCli, SubmitRefusesBadOptionsAndSaysWhereSlurmIsMissing) {
  const auto g = grid("submit.json", R"(["dt"])", "[0, 1]", 30, 0);
  const auto sweep = (*dir_ / "submit").string();
  ASSERT_EQ(run_cli("sweep create --grid " + g + " --out " + sweep, *dir_).exit_code, 0);
  auto r = run_cli("sweep submit " + sweep, *dir_);
  EXPECT_EQ(r.exit_code, 2) << "the scheduler is named";
  EXPECT_THAT(r.err, HasSubstr("--slurm"));
  r = run_cli("sweep submit " + sweep + " --slurm --time 2h", *dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--time '2h'"));
  r = run_cli("sweep submit " + sweep + " --slurm --sbatch-arg=--array=0-5", *dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("set by the sweep's script"));
  r = run_cli("sweep submit " + sweep + " --slurm --device gpu", *dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(sweep) / "slurm"))
      << "nothing written for a refused command";

  // The script without submitting it: both cells, one array.
  r = run_cli("sweep submit " + sweep + " --slurm --dry-run --max-concurrent 1 --time 30", *dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("#SBATCH --array=0-1%1\n"));
  EXPECT_THAT(r.out, HasSubstr("#SBATCH --time=30\n"));
  EXPECT_THAT(r.out, HasSubstr(std::string("dstudio='") + DSTUDIO_CLI + "'"));
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(sweep) / "slurm"));

  // Where there is no sbatch: said, and nothing recorded as submitted.
  const auto out = *dir_ / "no-sbatch.txt";
  const int status = std::system(("PATH=/nonexistent " + std::string(DSTUDIO_CLI) +
                                  " sweep submit " + sweep + " --slurm >" + out.string() + " 2>&1")
                                     .c_str());
  EXPECT_EQ(WEXITSTATUS(status), 1);
  std::ifstream in(out);
  const std::string said((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(said, HasSubstr("sbatch is not on this machine's PATH"));
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(sweep) / "slurm" / "jobs.json"));
}

TEST_F(SweepCli, CudaIsRefusedAtOnceWithoutACudaLibTorch) {
  const auto g = grid("cuda.json", R"(["dt"])", "[0]", 30, 0);
  const auto sweep = (*dir_ / "cuda").string();
  ASSERT_EQ(run_cli("sweep create --grid " + g + " --out " + sweep, *dir_).exit_code, 0);
  for (const auto& args : std::vector<std::string>{
           "sweep task " + sweep + " --index 0 --device cuda",
           "sweep run " + sweep + " --device cuda",
           "train --variant dt --dataset " + (*dir_ / "random.hdf5").string() +
               " --steps 5 --device cuda --out " + (*dir_ / "cuda-run").string()}) {
    const auto r = run_cli(args, *dir_);
    SCOPED_TRACE(args);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_THAT(r.err, HasSubstr("--device cuda: "));
    EXPECT_THAT(r.err, HasSubstr("--device cpu"));
  }
  EXPECT_EQ(status(sweep)["cells"][0]["state"], "pending") << "nothing started";
  EXPECT_FALSE(std::filesystem::exists(*dir_ / "cuda-run"));
}

}  // namespace
