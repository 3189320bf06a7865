// A sweep on Slurm, without a cluster: the job array's index list, the options refused before
// anything is written, the sbatch script (its directives, and that bash reads it), the record of
// submissions, and squeue's output read back per cell.

#include "dstudio/sweep/slurm.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "dstudio/common/error.h"
#include "h5_fixture.h"

namespace dstudio::sweep {
namespace {

using testing::HasSubstr;
using testing::Not;

TEST(SlurmArray, IndicesBecomeRangesWithTheThrottle) {
  EXPECT_EQ(array_spec({0, 1, 2, 3}, 0), "0-3");
  EXPECT_EQ(array_spec({9, 0, 1, 2, 3, 5, 7, 8, 3}, 2), "0-3,5,7-9%2");
  EXPECT_EQ(array_spec({4}, 1), "4%1");
  EXPECT_EQ(array_spec({1, 3, 5}, 0), "1,3,5");
  EXPECT_THROW(array_spec({}, 0), UsageError);
}

std::string refusal(const SlurmOptions& o) {
  try {
    check_slurm_options(o);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(SlurmArray, OptionsAreRefusedNamingTheOption) {
  SlurmOptions o;
  EXPECT_EQ(refusal(o), "");
  for (const char* ok : {"90", "30:00", "2:00:00", "1-00", "1-12:30", "2-00:00:00", "UNLIMITED"}) {
    o.time = ok;
    EXPECT_EQ(refusal(o), "") << ok;
  }
  o.time = "2h";
  EXPECT_THAT(refusal(o), HasSubstr("--time '2h'"));
  o.time = "";
  o.cpus_per_task = 0;
  EXPECT_THAT(refusal(o), HasSubstr("--cpus-per-task"));
  o.cpus_per_task = 2;
  o.partition = "gpu large";
  EXPECT_THAT(refusal(o), HasSubstr("--partition"));
  o.partition = "gpu";
  o.extra = {"--array=0-9"};
  EXPECT_THAT(refusal(o), HasSubstr("set by the sweep's script"));
  o.extra = {"qos=long"};
  EXPECT_THAT(refusal(o), HasSubstr("starts with '-'"));
  o.extra = {"--qos=long", "--exclusive"};
  EXPECT_EQ(refusal(o), "");
}

TEST(SlurmArray, TheScriptRunsEachTaskOnItsCellAndPassesTheSignalsOn) {
  test::TempDir dir;
  Sweep s;
  s.dir = dir / "my sweep's folder";  // a space and a quote: the shell must see one word
  SlurmOptions o;
  o.partition = "short";
  o.time = "1:00:00";
  o.cpus_per_task = 4;
  o.mem = "8G";
  o.max_concurrent = 3;
  o.signal_seconds = 90;
  o.extra = {"--qos=long"};
  EXPECT_THROW(sbatch_script(s, {0, 1, 2}, o, "/opt/ds/bin/dstudio"), UsageError)
      << "a space cannot go on an #SBATCH --output line";
  s.dir = dir / "sweep";
  const auto script = sbatch_script(s, {0, 1, 2, 5}, o, "/opt/d's/bin/dstudio");
  EXPECT_THAT(script, HasSubstr("#!/bin/bash\n"));
  EXPECT_THAT(script, HasSubstr("#SBATCH --array=0-2,5%3\n"));
  EXPECT_THAT(script, HasSubstr("#SBATCH --job-name=dstudio-sweep\n"));
  EXPECT_THAT(script,
              HasSubstr("#SBATCH --output=" + (s.dir / "slurm" / "%A_%a.out").string() + "\n"));
  EXPECT_THAT(script, HasSubstr("#SBATCH --cpus-per-task=4\n"));
  EXPECT_THAT(script, HasSubstr("#SBATCH --requeue\n"));
  EXPECT_THAT(script, HasSubstr("#SBATCH --signal=B:USR1@90\n"));
  EXPECT_THAT(script, HasSubstr("#SBATCH --partition=short\n"));
  EXPECT_THAT(script, HasSubstr("#SBATCH --time=1:00:00\n"));
  EXPECT_THAT(script, HasSubstr("#SBATCH --mem=8G\n"));
  EXPECT_THAT(script, HasSubstr("#SBATCH --qos=long\n"));
  EXPECT_THAT(script, Not(HasSubstr("--gres")));
  EXPECT_THAT(script, HasSubstr("dstudio='/opt/d'\\''s/bin/dstudio'\n"));
  EXPECT_THAT(script, HasSubstr("sweep task \"$sweep\" --index \"$cell\" --threads "
                                "\"${SLURM_CPUS_PER_TASK:-1}\" --device cpu"));
  EXPECT_THAT(script, HasSubstr("trap 'warned=1;"));
  EXPECT_THAT(script, HasSubstr("scontrol requeue \"${SLURM_ARRAY_JOB_ID}_${cell}\""));
  // Every #SBATCH line comes before the first command: sbatch stops reading them there.
  const auto last_directive = script.rfind("#SBATCH");
  EXPECT_LT(last_directive, script.find("set -u"));

  // bash reads it, and as a task it runs the program on its cell: a stand-in for dstudio that
  // prints its arguments shows what a task would run.
  const auto fake = dir / "fake-dstudio";
  std::ofstream(fake) << "#!/bin/bash\necho \"args: $*\"\nexit 0\n";
  std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  const auto path = dir / "job.sbatch";
  std::ofstream(path) << sbatch_script(s, {0, 1, 2, 5}, o, fake);
  EXPECT_EQ(std::system(("bash -n " + path.string()).c_str()), 0);
  const auto out = dir / "out.txt";
  const auto cmd = "SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_JOB_ID=77 SLURM_CPUS_PER_TASK=4 bash " +
                   path.string() + " >" + out.string() + " 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream in(out);
  const std::string printed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(printed, HasSubstr("args: sweep task " + s.dir.string() +
                                 " --index 5 --threads 4 --device cpu"));
  EXPECT_THAT(printed, HasSubstr("cell 5 on "));
}

TEST(SlurmArray, TheTaskStoppedByTheWarningIsRequeuedAndItsCodeKept) {
  // The warning (USR1 to the batch shell) reaches the task, which exits 130 as a saved task
  // does; the script then asks Slurm to requeue the task (a stand-in scontrol records it).
  test::TempDir dir;
  Sweep s;
  s.dir = dir / "sweep";
  const auto fake = dir / "fake-dstudio";
  // A task that says it runs (a line into a FIFO) once its trap is set, and waits for a signal;
  // the test sends the warning when it has read that line.
  const auto ready = dir / "ready";
  ASSERT_EQ(::mkfifo(ready.c_str(), 0600), 0);
  std::ofstream(fake) << "#!/bin/bash\ntrap 'kill $idle; echo saved; exit 130' USR1\nsleep "
                         "infinity & idle=$!\necho running > "
                      << ready.string() << "\nwait $idle\n";
  std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  const auto bin = dir / "bin";
  std::filesystem::create_directories(bin);
  std::ofstream(bin / "scontrol") << "#!/bin/bash\necho \"scontrol $*\"\n";
  std::filesystem::permissions(bin / "scontrol", std::filesystem::perms::owner_all);
  const auto path = dir / "job.sbatch";
  std::ofstream(path) << sbatch_script(s, {3}, SlurmOptions{}, fake);
  const auto out = dir / "out.txt";
  const auto cmd = "PATH=" + bin.string() +
                   ":$PATH SLURM_ARRAY_TASK_ID=3 SLURM_ARRAY_JOB_ID=41 bash " + path.string() +
                   " >" + out.string() + " 2>&1 & job=$!; read line < " + ready.string() +
                   "; kill -USR1 $job; wait $job; exit $?";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  std::ifstream in(out);
  const std::string printed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(printed, HasSubstr("saved"));
  EXPECT_THAT(printed, HasSubstr("scontrol requeue 41_3"));
}

TEST(SlurmArray, SubmissionsAreRecordedInOrder) {
  test::TempDir dir;
  Sweep s;
  s.dir = dir.path();
  EXPECT_TRUE(read_slurm_jobs(s).empty());
  add_slurm_job(s, {"101", {0, 1, 2, 3}, "/x/submit-1.sbatch", ""});
  add_slurm_job(s, {"117", {2}, "/x/submit-2.sbatch", "2026-01-01T00:00:00Z"});
  const auto jobs = read_slurm_jobs(s);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].job, "101");
  EXPECT_EQ(jobs[0].cells, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(jobs[0].script, "/x/submit-1.sbatch");
  EXPECT_EQ(jobs[0].submitted.size(), 20u) << "stamped when recorded: " << jobs[0].submitted;
  EXPECT_EQ(jobs[1].job, "117");
  EXPECT_EQ(jobs[1].submitted, "2026-01-01T00:00:00Z");

  std::ofstream(dir / "slurm" / "jobs.json")
      << R"({"format": "dstudio-sweep-slurm", "jobs": [{"job": "1", "cells": ["a"]}]})";
  try {
    read_slurm_jobs(s);
    FAIL() << "a damaged record is refused";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("jobs.json"));
    EXPECT_THAT(e.what(), HasSubstr("jobs[0]: cells[0] is not a number"));
  }
  std::ofstream(dir / "slurm" / "jobs.json") << "{\"jobs\": [";
  EXPECT_THROW(read_slurm_jobs(s), Error);
  // Each refusal names the file and the key.
  for (
      const auto& [text, said] : std::vector<std::pair<std::string, std::string>>{
          {R"({"jobs": []})", "jobs.json: no format (not a 'dstudio-sweep-slurm' file)"},
          {R"({"format": "other", "jobs": []})", "jobs.json: format is not 'dstudio-sweep-slurm'"},
          {R"({"format": "dstudio-sweep-slurm"})", "jobs.json: no jobs"},
          {R"({"format": "dstudio-sweep-slurm", "jobs": [{"cells": [1]}]})",
           "jobs.json: jobs[0]: no job"},
          {R"({"format": "dstudio-sweep-slurm", "jobs": [{"job": "1", "cells": []}]})",
           "jobs.json: jobs[0]: cells is empty"},
          {R"({"format": "dstudio-sweep-slurm", "jobs": [{"job": "1", "cells": [1], "script": 2}]})",
           "jobs.json: jobs[0]: script is not a text"}}) {
    std::ofstream(dir / "slurm" / "jobs.json", std::ios::trunc) << text;
    try {
      read_slurm_jobs(s);
      ADD_FAILURE() << text;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(said)) << text;
    }
  }
}

// A record of submissions as `dstudio sweep submit --slurm` writes it (tests/data/saved/sweep; its
// README says how it was made) reads back and is written again byte for byte.
TEST(SlurmArray, ASavedRecordOfSubmissionsReadsBackByteForByte) {
  Sweep s;
  s.dir = std::filesystem::path(DSTUDIO_TEST_DATA) / "saved" / "sweep" / "table1";
  const auto jobs = read_slurm_jobs(s);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].job, "1");
  EXPECT_EQ(jobs[1].cells, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(jobs[1].submitted, "2026-11-30T06:23:17Z");
  std::ifstream in(slurm_dir(s) / "jobs.json", std::ios::binary);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_EQ(to_json(jobs), text);
}

TEST(SlurmArray, SqueueAndSacctAreReadPerCellNewestSubmissionFirst) {
  const std::string text =
      "101_0|COMPLETED|None\n"
      "101_1|RUNNING|None\n"
      "101_2|TIMEOUT|None\n"
      "999_2|RUNNING|None\n"       // another job: not ours
      "117_2|PENDING|BeginTime\n"  // resubmitted: newer than 101's
      "117_[4-5,7%2]|PENDING|JobArrayTaskLimit\n"
      "118|RUNNING|None\n"  // not an array task
      "garbage\n";
  const auto states = parse_job_states(text, {"101", "117"});
  ASSERT_EQ(states.size(), 6u);
  EXPECT_EQ(states.at(0).state, "COMPLETED");
  EXPECT_EQ(states.at(1).job, "101_1");
  EXPECT_EQ(states.at(1).state, "RUNNING");
  EXPECT_EQ(states.at(2).job, "117_2");
  EXPECT_EQ(states.at(2).state, "PENDING");
  EXPECT_EQ(states.at(2).reason, "BeginTime");
  EXPECT_EQ(states.at(4).job, "117_4");
  EXPECT_EQ(states.at(5).reason, "JobArrayTaskLimit");
  EXPECT_EQ(states.at(7).job, "117_7");
  EXPECT_EQ(states.count(6), 0u);
  // sacct's lines, for a job squeue has forgotten.
  const auto accounted =
      parse_job_states("101_0|COMPLETED\n101_1|CANCELLED by 0\n101_[2-3]|PENDING\n", {"101"});
  ASSERT_EQ(accounted.size(), 4u);
  EXPECT_EQ(accounted.at(1).state, "CANCELLED");
  EXPECT_EQ(accounted.at(3).state, "PENDING");
  EXPECT_EQ(accounted.at(3).reason, "");
  EXPECT_TRUE(slurm_state_is_live("PENDING"));
  EXPECT_TRUE(slurm_state_is_live("REQUEUED"));
  EXPECT_FALSE(slurm_state_is_live("TIMEOUT"));
  EXPECT_FALSE(slurm_state_is_live("COMPLETED"));
}

}  // namespace
}  // namespace dstudio::sweep
