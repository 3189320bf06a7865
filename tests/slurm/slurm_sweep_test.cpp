// Sweeps on a real Slurm: a single-node cluster started from Debian's packages in a temporary
// folder (local-cluster.sh), a sweep handed to it as a job array with `dstudio sweep submit`, and
// what comes back: every cell finished with its checkpoint, collected, and the same results as
// `dstudio sweep run` on this machine; a task requeued while it trains (`scontrol requeue`)
// saves its checkpoint, resumes from it, and ends with exactly the weights of a run that was never
// interrupted; a cancelled task is reported as such and a second submission resumes it. A cluster
// that does not start fails the tests with its daemons' logs.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_run.h"
#include "dstudio/models/checkpoint_model.h"
#include "dstudio/models/decision_model.h"
#include "h5_fixture.h"

namespace {

namespace fs = std::filesystem;
using dstudio::test::run_cli;
using nlohmann::json;
using testing::HasSubstr;

struct ShellResult {
  int code = -1;
  std::string out;  ///< stdout and stderr
};

ShellResult shell(const std::string& command) {
  ShellResult r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  char buffer[4096];
  for (std::size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) r.out.append(buffer, n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string text_of(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<torch::Tensor> weights_of(const fs::path& checkpoint) {
  auto model = dstudio::models::load_checkpoint_model(checkpoint);
  std::vector<torch::Tensor> out;
  for (const auto& p : model->parameters()) out.push_back(p.detach().clone());
  return out;
}

bool same_weights(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  if (a.empty() || a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!torch::equal(a[i], b[i])) return false;
  return true;
}

class SlurmSweep : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new dstudio::test::TempDir;
    cluster_ = (*dir_ / "cluster").string();
    const auto started = shell(std::string(DSTUDIO_LOCAL_CLUSTER) + " start " + cluster_);
    if (started.code != 0) {
      start_error_ = "the single-node Slurm cluster did not start (exit " +
                     std::to_string(started.code) + "):\n" + started.out;
      return;
    }
    setenv("SLURM_CONF", (fs::path(cluster_) / "slurm.conf").c_str(), 1);
    const auto r =
        run_cli("dataset generate --env hopper --kind random --transitions 3000 --seed 1 --out " +
                    (*dir_ / "random.hdf5").string(),
                *dir_);
    if (r.exit_code != 0) start_error_ = "dataset generate: " + r.err;
  }
  static void TearDownTestSuite() {
    // The daemons this suite started, by the process ids in their pid files.
    shell(std::string(DSTUDIO_LOCAL_CLUSTER) + " stop " + cluster_);
    delete dir_;
  }
  void SetUp() override { ASSERT_TRUE(start_error_.empty()) << start_error_; }

  // Writes a grid of tiny runs on the random dataset and makes a sweep of it in `name`.
  static std::string make_sweep(const std::string& name, const std::string& variants,
                                const std::string& seeds, const std::string& training,
                                int eval_episodes) {
    const auto grid = *dir_ / (name + ".json");
    std::ofstream(grid)
        << R"({"variants": )" << variants << R"(, "datasets": ["random.hdf5"], "seeds": )" << seeds
        << R"(, "config": {"hidden": 16, "layers": 1, "context_length": 5}, "training": )"
        << training << R"(, "eval_episodes": )" << eval_episodes << "}";
    const auto sweep = (*dir_ / name).string();
    const auto r = run_cli("sweep create --grid " + grid.string() + " --out " + sweep, *dir_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return sweep;
  }

  static json status(const std::string& sweep) {
    const auto r = run_cli("sweep status " + sweep + " --json", *dir_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out, nullptr, false);
  }

  // What to read when a wait runs out: the sweep's status, its tasks' output, the daemons' logs.
  static std::string diagnostics(const std::string& sweep) {
    std::string d = "status: " + status(sweep).dump(1) + "\n";
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(fs::path(sweep) / "slurm", ec))
      if (e.path().extension() == ".out")
        d += "---- " + e.path().string() + "\n" + text_of(e.path());
    d += "---- squeue\n" + shell("squeue -h -t all -o '%i %T %r'").out;
    d += "---- slurmctld.log (end)\n" + shell("tail -n 30 " + cluster_ + "/slurmctld.log").out;
    d += "---- slurmd.log (end)\n" + shell("tail -n 30 " + cluster_ + "/slurmd.log").out;
    return d;
  }

  // Polls `done` every half second for at most `seconds`.
  static bool wait_for(const std::function<bool()>& done, int seconds) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < end) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    return done();
  }

  static std::string submitted_job(const std::string& out) {
    const auto at = out.find("submitted job ");
    if (at == std::string::npos) return "";
    return out.substr(at + 14, out.find(':', at) - at - 14);
  }

  static inline dstudio::test::TempDir* dir_ = nullptr;
  static inline std::string cluster_, start_error_;
};

TEST_F(SlurmSweep, AJobArrayTrainsEveryCellAsARunHereDoes) {
  const std::string training =
      R"({"steps": 40, "batch_size": 8, "log_every": 10, "checkpoint_every": 0, "eval_every": 20})";
  const auto on_slurm = make_sweep("on-slurm", R"(["dt", "dc"])", "[0, 1]", training, 2);
  const auto here = make_sweep("here", R"(["dt", "dc"])", "[0, 1]", training, 2);

  auto r = run_cli(
      "sweep submit " + on_slurm + " --slurm --max-concurrent 2 --cpus-per-task 1 --time 10",
      *dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto job = submitted_job(r.out);
  ASSERT_FALSE(job.empty()) << r.out;
  EXPECT_THAT(r.out, HasSubstr("4 cells as a job array (0-3%2)"));
  const auto script = text_of(fs::path(on_slurm) / "slurm" / "submit-1.sbatch");
  EXPECT_THAT(script, HasSubstr("#SBATCH --array=0-3%2"));

  // The same cells on this machine meanwhile, one thread each as on Slurm.
  r = run_cli("sweep run " + here + " --jobs 1 --threads 1", *dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;

  json j;
  const bool finished = wait_for(
      [&] {
        j = status(on_slurm);
        return j.is_object() &&
               j["counts"].value("finished", 0) + j["counts"].value("failed", 0) == 4;
      },
      240);
  ASSERT_TRUE(finished) << diagnostics(on_slurm);
  ASSERT_EQ(j["counts"].value("finished", 0), 4) << diagnostics(on_slurm);

  // Submitting again finds nothing to do.
  r = run_cli("sweep submit " + on_slurm + " --slurm", *dir_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("nothing to submit: 4 of 4 cells finished"));

  const auto local = status(here);
  for (int i = 0; i < 4; ++i) {
    const auto& c = j["cells"][i];
    const auto name = c["name"].get<std::string>();
    SCOPED_TRACE(name);
    EXPECT_EQ(c["slurm_job"], job + "_" + std::to_string(i));
    ASSERT_TRUE(c.contains("slurm")) << "squeue still knows the task: " << c;
    EXPECT_EQ(c["slurm"]["state"], "COMPLETED");
    EXPECT_EQ(c["step"], 40);
    const auto slurm_checkpoint = fs::path(on_slurm) / "cells" / name / "checkpoint.pt";
    ASSERT_TRUE(fs::exists(slurm_checkpoint));
    EXPECT_THAT(text_of(fs::path(on_slurm) / "slurm" / (job + "_" + std::to_string(i) + ".out")),
                HasSubstr("cell " + std::to_string(i) + " on "));
    // The same seeds and thread counts give the same cell here and on Slurm: the same weights,
    // the same scores.
    const auto& l = local["cells"][i];
    EXPECT_EQ(l["state"], "finished");
    EXPECT_TRUE(c["score"].is_number()) << c;
    EXPECT_EQ(c["score"], l["score"]);
    EXPECT_EQ(c["score_std"], l["score_std"]);
    EXPECT_TRUE(c["best_score"].is_number()) << c;
    EXPECT_EQ(c["best_score"], l["best_score"]);
    EXPECT_TRUE(same_weights(weights_of(slurm_checkpoint),
                             weights_of(fs::path(here) / "cells" / name / "checkpoint.pt")));
  }

  r = run_cli("sweep collect " + on_slurm + " --json", *dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto collected = json::parse(r.out);
  ASSERT_EQ(collected["groups"].size(), 2u);
  for (const auto& g : collected["groups"]) {
    EXPECT_EQ(g["cells"], 2);
    EXPECT_EQ(g["finished"], 2);
    EXPECT_TRUE(g["score_mean"].is_number()) << g;
  }
  // The group's mean is the mean of its seeds' scores.
  const double mean_dt =
      (j["cells"][0]["score"].get<double>() + j["cells"][1]["score"].get<double>()) / 2;
  EXPECT_NEAR(collected["groups"][0]["score_mean"].get<double>(), mean_dt, 1e-9);
  EXPECT_TRUE(fs::exists(fs::path(on_slurm) / "results" / "table.tex"));
}

TEST_F(SlurmSweep, ARequeuedTaskResumesFromItsCheckpointToTheSameWeights) {
  // Long enough to be caught training; a checkpoint only at the end, so the one it resumes from
  // is the one it saved when Slurm stopped it.
  const std::string training =
      R"({"steps": 8000, "batch_size": 8, "log_every": 100, "checkpoint_every": 0})";
  const auto on_slurm = make_sweep("requeued", R"(["dt"])", "[5]", training, 1);
  const auto here = make_sweep("uninterrupted", R"(["dt"])", "[5]", training, 1);

  auto r = run_cli("sweep submit " + on_slurm + " --slurm --cpus-per-task 1", *dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto job = submitted_job(r.out);
  ASSERT_FALSE(job.empty()) << r.out;
  const auto task = job + "_0";

  // Caught training: its task.json (read directly, as fast as it changes) says so.
  json j;
  const auto task_json = [&] {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(fs::path(on_slurm) / "cells", ec))
      return json::parse(text_of(e.path() / "task.json"), nullptr, false);
    return json();
  };
  ASSERT_TRUE(wait_for(
      [&] {
        j = task_json();
        return j.is_object() && j.value("state", "") == "running" && j.value("step", 0) > 0;
      },
      120))
      << diagnostics(on_slurm);
  const int seen_at = j["step"].get<int>();
  ASSERT_LT(seen_at, 8000) << "the task finished before it could be requeued; make it longer";
  auto q = shell("scontrol requeue " + task);
  ASSERT_EQ(q.code, 0) << q.out;

  // Requeued, it waits for a begin time; let it start again now.
  std::string state;
  ASSERT_TRUE(wait_for(
      [&] {
        state = shell("squeue -h -j " + task + " -o %T").out;
        return state.find("PENDING") != std::string::npos;
      },
      60))
      << "squeue: " << state << diagnostics(on_slurm);
  j = status(on_slurm);
  EXPECT_EQ(j["cells"][0]["state"], "pending");
  const int stopped_at = j["cells"][0]["step"].get<int>();
  EXPECT_GE(stopped_at, seen_at);
  EXPECT_LT(stopped_at, 8000);
  EXPECT_THAT(j["cells"][0]["error"].get<std::string>(), HasSubstr("resumes from its checkpoint"));
  EXPECT_TRUE(fs::exists(fs::path(on_slurm) / "cells" / j["cells"][0]["name"].get<std::string>() /
                         "checkpoint.pt"));
  // Not "now": slurmd refuses a credential made in the second its job's was revoked by the
  // requeue ("Job credential revoked"), and the task would fail instead of resuming.
  q = shell("scontrol update JobId=" + task + " StartTime=now+2");
  EXPECT_EQ(q.code, 0) << q.out;

  // Meanwhile the same cell, never interrupted, here.
  r = run_cli("sweep task " + here + " --index 0 --threads 1", *dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;

  ASSERT_TRUE(wait_for(
      [&] {
        j = status(on_slurm);
        return j.is_object() &&
               (j["cells"][0]["state"] == "finished" || j["cells"][0]["state"] == "failed");
      },
      180))
      << diagnostics(on_slurm);
  const auto& c = j["cells"][0];
  ASSERT_EQ(c["state"], "finished") << diagnostics(on_slurm);
  EXPECT_EQ(c["restarts"], 1);
  EXPECT_EQ(c["step"], 8000);
  EXPECT_EQ(c["slurm_job"], task);
  const auto log = text_of(fs::path(on_slurm) / "slurm" / (task + ".out"));
  EXPECT_THAT(log, HasSubstr("run 0,"));
  EXPECT_THAT(log, HasSubstr("cell 0 stopped at step"));
  EXPECT_THAT(log, HasSubstr("run 1,"));
  const auto name = c["name"].get<std::string>();
  EXPECT_TRUE(same_weights(weights_of(fs::path(on_slurm) / "cells" / name / "checkpoint.pt"),
                           weights_of(fs::path(here) / "cells" / name / "checkpoint.pt")))
      << "stopped at step " << stopped_at << " and resumed";
  EXPECT_EQ(c["score"], status(here)["cells"][0]["score"]);
}

TEST_F(SlurmSweep, ACancelledTaskSaysSoAndASecondSubmissionResumesIt) {
  const std::string training =
      R"({"steps": 8000, "batch_size": 8, "log_every": 100, "checkpoint_every": 0})";
  const auto sweep = make_sweep("cancelled", R"(["dt"])", "[6]", training, 1);
  auto r = run_cli("sweep submit " + sweep + " --slurm --cpus-per-task 1", *dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto task = submitted_job(r.out) + "_0";

  json j;
  ASSERT_TRUE(wait_for(
      [&] {
        j = status(sweep);
        return j.is_object() && j["cells"][0]["state"] == "running" && j["cells"][0]["step"] > 0;
      },
      120))
      << diagnostics(sweep);
  ASSERT_EQ(shell("scancel " + task).code, 0);
  std::string state;
  ASSERT_TRUE(wait_for(
      [&] {
        state = shell("squeue -h -t all -j " + task + " -o %T").out;
        return state.find("CANCELLED") != std::string::npos;
      },
      60))
      << "squeue: " << state << diagnostics(sweep);

  // Not just "pending": the task will not come back by itself, and the status says what does.
  j = status(sweep);
  const auto& c = j["cells"][0];
  EXPECT_EQ(c["state"], "pending") << j.dump(1);
  EXPECT_THAT(c["error"].get<std::string>(), HasSubstr("its Slurm task ended (CANCELLED"));
  EXPECT_THAT(c["error"].get<std::string>(), HasSubstr("sweep submit --slurm again resumes it"));
  r = run_cli("sweep status " + sweep, *dir_);
  EXPECT_THAT(r.out, HasSubstr("sweep submit --slurm again resumes it"));

  r = run_cli("sweep submit " + sweep + " --slurm --cpus-per-task 1", *dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("submitted job "));
  ASSERT_TRUE(wait_for(
      [&] {
        j = status(sweep);
        return j.is_object() &&
               (j["cells"][0]["state"] == "finished" || j["cells"][0]["state"] == "failed");
      },
      180))
      << diagnostics(sweep);
  EXPECT_EQ(j["cells"][0]["state"], "finished") << diagnostics(sweep);
  EXPECT_EQ(j["cells"][0]["step"], 8000);
  EXPECT_EQ(j["cells"][0]["error"], "");
}

}  // namespace
