#pragma once
/// \file
/// A sweep on Slurm: the sbatch script of a job array whose tasks train the sweep's cells
/// (`dstudio sweep task DIR --index $SLURM_ARRAY_TASK_ID`), the record of what was submitted
/// (DIR/slurm/jobs.json), and what `squeue` says of the array's tasks. Text in, text out: running
/// sbatch and squeue is the command line's. The script's handling of Slurm's signals is what
/// makes a task resumable: the warning before the time limit (`--signal=B:USR1@S`) is passed to
/// the task, which saves its checkpoint, and the job requeues itself; a preemption or `scontrol
/// requeue` sends SIGTERM, after which the task has saved the same way and Slurm requeues it
/// (`--requeue`). Documented in docs/sweeps.md.

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "dstudio/sweep/sweep.h"

namespace dstudio::sweep {

/// What `dstudio sweep submit --slurm` passes to sbatch.
struct SlurmOptions {
  std::string partition;  ///< --partition (empty: the cluster's default)
  std::string
      time;  ///< --time, Slurm's forms ("90", "2:00:00", "1-00:00:00"); empty: the partition's
  int cpus_per_task = 1;           ///< --cpus-per-task; the task trains with as many threads
  std::string mem;                 ///< --mem ("8G"); empty: the partition's default
  std::string gres;                ///< --gres ("gpu:1")
  int max_concurrent = 0;          ///< the array's %M throttle (0: no throttle)
  int signal_seconds = 120;        ///< the time-limit warning: USR1 this many seconds before it
  std::string job_name;            ///< --job-name (empty: "dstudio-<sweep folder name>")
  std::string device = "cpu";      ///< the task's --device
  std::vector<std::string> extra;  ///< more sbatch arguments, each one "--name=value" as given
};

/// Slurm's array index list for `indices` (sorted, distinct): ranges joined by commas
/// ("0-3,5,7-9"), with "%M" appended for a throttle M > 0. Throws UsageError when `indices` is
/// empty.
std::string array_spec(const std::vector<int>& indices, int max_concurrent);

/// Checks the options before anything is written: a positive CPU count, a time in one of
/// Slurm's forms, extra arguments that start with "-" and are none the script sets itself
/// (--array, --output, --requeue, --signal, --open-mode). Throws UsageError naming the option.
void check_slurm_options(const SlurmOptions& options);

/// The sbatch script for the cells `indices` of `sweep`, run with the program `dstudio`.
std::string sbatch_script(const Sweep& sweep, const std::vector<int>& indices,
                          const SlurmOptions& options, const std::filesystem::path& dstudio);

/// One submission of a sweep: the job id sbatch printed, the cells, the script, when.
struct SlurmJob {
  std::string job;  ///< the array's job id ("1234")
  std::vector<int> cells;
  std::string script;     ///< the script's path
  std::string submitted;  ///< UTC, ISO 8601
};

/// DIR/slurm/jobs.json: every submission, oldest first; none when the sweep was never submitted.
/// Throws Error naming the file when it is damaged.
std::vector<SlurmJob> read_slurm_jobs(const Sweep& sweep);
/// Appends a submission to DIR/slurm/jobs.json (atomically).
void add_slurm_job(const Sweep& sweep, const SlurmJob& job);
/// The text of DIR/slurm/jobs.json recording `jobs`, as add_slurm_job writes it.
std::string to_json(const std::vector<SlurmJob>& jobs);
/// Where the scripts and the tasks' output go: DIR/slurm.
std::filesystem::path slurm_dir(const Sweep& sweep);

/// What Slurm says of one array task.
struct SlurmTaskState {
  std::string job;     ///< "<array job>_<index>"
  std::string state;   ///< PENDING, RUNNING, COMPLETED, FAILED, TIMEOUT, CANCELLED, REQUEUED, ...
  std::string reason;  ///< why pending ("Priority", "BeginTime", "None", ...)
};

/// Parses what Slurm says of the array jobs `jobs`, keyed by cell index: lines
/// "<id>|<state>[|<reason>]" as `squeue -h -r -t all -o '%i|%T|%r'` and `sacct -n -P -X -o
/// JobID,State` print them (a state "CANCELLED by 1000" is CANCELLED). A cell in several
/// submissions keeps the newest (the last of `jobs`). Lines of other jobs are skipped; a pending
/// array's unexpanded line ("12_[3-5%2]") is expanded.
std::map<int, SlurmTaskState> parse_job_states(const std::string& text,
                                               const std::vector<std::string>& jobs);

/// Slurm's word on the array tasks of every submission of a sweep, by cell; empty when it was
/// never submitted. Asks squeue, which knows a job until MinJobAge after its end, then sacct, where
/// the cluster keeps accounting. Throws Error when squeue cannot be asked.
std::map<int, SlurmTaskState> query_slurm_states(const std::vector<SlurmJob>& jobs);

/// True for the states in which Slurm still has the task: pending, running, configuring,
/// completing, requeued, suspended.
bool slurm_state_is_live(const std::string& state);

}  // namespace dstudio::sweep
