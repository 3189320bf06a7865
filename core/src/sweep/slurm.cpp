// A sweep on Slurm: the job array's script, the record of submissions, squeue's word. See slurm.h.

#include "dstudio/sweep/slurm.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "dstudio/common/atomic_file.h"
#include "dstudio/common/error.h"
#include "dstudio/common/json_fields.h"
#include "dstudio/common/subprocess.h"

namespace dstudio::sweep {
namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace {

constexpr const char* kJobsFormat = "dstudio-sweep-slurm";

// `s` as one word for bash, whatever it holds.
std::string shell_quoted(const std::string& s) {
  std::string out = "'";
  for (const char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

// A value on an #SBATCH line is not seen by a shell: it must be one word without quotes.
void check_sbatch_value(const std::string& option, const std::string& value) {
  if (value.find_first_of(" \t\n\r'\"\\") != std::string::npos)
    throw UsageError(option + " '" + value +
                     "': spaces, quotes and backslashes cannot go on an #SBATCH line");
}

}  // namespace

std::string array_spec(const std::vector<int>& indices, int max_concurrent) {
  if (indices.empty()) throw UsageError("no cells to submit");
  std::vector<int> sorted(indices);
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::string spec;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (!spec.empty()) spec += ',';
    spec += std::to_string(sorted[i]);
    if (j > i) spec += '-' + std::to_string(sorted[j]);
    i = j + 1;
  }
  if (max_concurrent > 0) spec += '%' + std::to_string(max_concurrent);
  return spec;
}

void check_slurm_options(const SlurmOptions& o) {
  if (o.cpus_per_task < 1)
    throw UsageError("--cpus-per-task " + std::to_string(o.cpus_per_task) + ": must be at least 1");
  if (o.max_concurrent < 0)
    throw UsageError("--max-concurrent " + std::to_string(o.max_concurrent) +
                     ": must be 0 (no limit) or more");
  if (o.signal_seconds < 1 || o.signal_seconds > 65535)
    throw UsageError("--signal-before " + std::to_string(o.signal_seconds) +
                     ": must be 1 to 65535 seconds");
  static const std::regex time_form(
      R"(^((\d+-)?\d+(:\d+){0,2}|UNLIMITED|INFINITE|unlimited|infinite)$)");
  if (!o.time.empty() && !std::regex_match(o.time, time_form))
    throw UsageError("--time '" + o.time +
                     "': not one of Slurm's forms (minutes, M:S, H:M:S, D-H, D-H:M, D-H:M:S)");
  check_sbatch_value("--partition", o.partition);
  check_sbatch_value("--mem", o.mem);
  check_sbatch_value("--gres", o.gres);
  check_sbatch_value("--job-name", o.job_name);
  static const std::set<std::string> set_by_script = {
      "--array",   "-a",           "--output", "-o",          "--error",    "-e",
      "--requeue", "--no-requeue", "--signal", "--open-mode", "--parsable", "--wrap"};
  for (const auto& arg : o.extra) {
    if (arg.empty() || arg[0] != '-')
      throw UsageError("--sbatch-arg '" + arg +
                       "': an sbatch option starts with '-' (e.g. --sbatch-arg=--qos=long)");
    const auto name = arg.substr(0, arg.find('='));
    if (set_by_script.count(name))
      throw UsageError("--sbatch-arg '" + arg + "': " + name +
                       " is set by the sweep's script itself");
    check_sbatch_value("--sbatch-arg", arg);
  }
}

std::string sbatch_script(const Sweep& sweep, const std::vector<int>& indices,
                          const SlurmOptions& o, const fs::path& dstudio) {
  check_slurm_options(o);
  const auto log_dir = slurm_dir(sweep);
  check_sbatch_value("the sweep folder", log_dir.string());
  const std::string name =
      o.job_name.empty() ? "dstudio-" + sweep.dir.filename().string() : o.job_name;
  check_sbatch_value("--job-name", name);
  std::ostringstream s;
  s << "#!/bin/bash\n"
    << "# The cells of the sweep " << sweep.dir.string()
    << " as a Slurm job array: each task trains one\n"
    << "# cell, or continues it from its checkpoint. Written by `dstudio sweep submit`; "
       "docs/sweeps.md.\n"
    << "#SBATCH --job-name=" << name << "\n"
    << "#SBATCH --array=" << array_spec(indices, o.max_concurrent) << "\n"
    << "#SBATCH --output=" << (log_dir / "%A_%a.out").string() << "\n"
    << "#SBATCH --open-mode=append\n"
    << "#SBATCH --cpus-per-task=" << o.cpus_per_task << "\n"
    << "#SBATCH --requeue\n"
    << "#SBATCH --signal=B:USR1@" << o.signal_seconds << "\n";
  if (!o.partition.empty()) s << "#SBATCH --partition=" << o.partition << "\n";
  if (!o.time.empty()) s << "#SBATCH --time=" << o.time << "\n";
  if (!o.mem.empty()) s << "#SBATCH --mem=" << o.mem << "\n";
  if (!o.gres.empty()) s << "#SBATCH --gres=" << o.gres << "\n";
  for (const auto& arg : o.extra) s << "#SBATCH " << arg << "\n";
  s << "\n"
    << "set -u\n"
    << "sweep=" << shell_quoted(sweep.dir.string()) << "\n"
    << "dstudio=" << shell_quoted(dstudio.string()) << "\n"
    << "cell=${SLURM_ARRAY_TASK_ID:?this script runs as a task of a Slurm job array}\n"
    << "task=\n"
    << "warned=0\n"
    << "# Slurm's warning before the time limit: the task saves its checkpoint and stops, and the "
       "job\n"
    << "# goes back to the queue; its next run continues from the checkpoint.\n"
    << "trap 'warned=1; [[ -n $task ]] && kill -USR1 \"$task\" 2>/dev/null' USR1\n"
    << "# scancel, a preemption, `scontrol requeue`: the task saves its checkpoint and stops.\n"
    << "trap '[[ -n $task ]] && kill -TERM \"$task\" 2>/dev/null' TERM INT\n"
    << "echo \"cell $cell on $(hostname), job ${SLURM_ARRAY_JOB_ID}_${cell}, run "
       "${SLURM_RESTART_COUNT:-0}, $(date -u +%FT%TZ)\"\n"
    << "\"$dstudio\" sweep task \"$sweep\" --index \"$cell\" --threads "
       "\"${SLURM_CPUS_PER_TASK:-1}\" --device "
    << o.device << " &\n"
    << "task=$!\n"
    << "# A trap ends a wait early (with 128 + the signal): wait until the task has exited, then "
       "take\n"
    << "# its own status, which bash keeps, however soon after the signal it exited.\n"
    << "wait \"$task\"\n"
    << "while kill -0 \"$task\" 2>/dev/null; do wait \"$task\"; done\n"
    << "wait \"$task\"; code=$?\n"
    << "if (( code == 130 && warned )); then\n"
    << "  scontrol requeue \"${SLURM_ARRAY_JOB_ID}_${cell}\"\n"
    << "fi\n"
    << "exit \"$code\"\n";
  return s.str();
}

fs::path slurm_dir(const Sweep& sweep) {
  return sweep.dir / "slurm";
}

namespace {

// DIR/slurm/jobs.json: the submissions, oldest first.
struct JobsFile {
  std::vector<SlurmJob> jobs;
};

const JsonFields<JobsFile>& jobs_fields() {
  static const auto fields = [] {
    static const auto job_fields = [] {
      JsonFields<SlurmJob> t;
      t.field("job", &SlurmJob::job)
          .required()
          .field("cells", &SlurmJob::cells)
          .required()
          .checked([](const SlurmJob& j, const std::string& where) {
            if (j.cells.empty()) JsonFields<SlurmJob>::refuse(where + " is empty");
          })
          .field("script", &SlurmJob::script)
          .field("submitted", &SlurmJob::submitted);
      return t;
    }();
    JsonFields<JobsFile> t;
    // Version 1 is the only one: nothing reads it yet.
    t.constant("format", kJobsFormat)
        .computed(
            "version", [](const JobsFile&) { return ordered_json(1); },
            [](JobsFile&, const ordered_json&, const std::string&) {})
        .objects("jobs", &JobsFile::jobs, job_fields)
        .required();
    return t;
  }();
  return fields;
}

}  // namespace

std::vector<SlurmJob> read_slurm_jobs(const Sweep& sweep) {
  const auto path = slurm_dir(sweep) / "jobs.json";
  std::error_code ec;
  if (!fs::exists(path, ec)) return {};
  std::ifstream in(path);
  const auto j = ordered_json::parse(in, nullptr, false);
  if (j.is_discarded()) throw Error(path.string() + ": not JSON (damaged?)");
  return jobs_fields().read(j, path.string()).jobs;
}

std::string to_json(const std::vector<SlurmJob>& jobs) {
  return jobs_fields().write({jobs}).dump(2) + "\n";
}

void add_slurm_job(const Sweep& sweep, const SlurmJob& job) {
  auto jobs = read_slurm_jobs(sweep);
  jobs.push_back(job);
  if (jobs.back().submitted.empty()) jobs.back().submitted = utc_now();
  std::error_code ec;
  fs::create_directories(slurm_dir(sweep), ec);
  if (ec) throw Error(slurm_dir(sweep).string() + ": " + ec.message());
  write_text_atomically(slurm_dir(sweep) / "jobs.json", to_json(jobs));
}

std::map<int, SlurmTaskState> parse_job_states(const std::string& text,
                                               const std::vector<std::string>& jobs) {
  std::map<std::string, std::size_t> rank;
  for (std::size_t i = 0; i < jobs.size(); ++i) rank[jobs[i]] = i;
  std::map<int, SlurmTaskState> out;
  std::map<int, std::size_t> out_rank;
  const auto put = [&](int index, std::size_t r, SlurmTaskState st) {
    const auto it = out_rank.find(index);
    if (it != out_rank.end() && it->second > r) return;
    out_rank[index] = r;
    out[index] = std::move(st);
  };
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::vector<std::string> f;
    std::istringstream fields(line);
    for (std::string x; std::getline(fields, x, '|');) f.push_back(x);
    if (f.size() < 2) continue;
    const auto& id = f[0];
    const auto underscore = id.find('_');
    if (underscore == std::string::npos) continue;
    const auto job = id.substr(0, underscore);
    const auto r = rank.find(job);
    if (r == rank.end()) continue;
    SlurmTaskState st{id, f[1].substr(0, f[1].find(' ')), f.size() > 2 ? f[2] : ""};
    auto tasks = id.substr(underscore + 1);
    if (!tasks.empty() && tasks.front() == '[') {
      // "[3-5,7%2]": the pending rest of an array, not yet split into tasks.
      tasks = tasks.substr(1, tasks.find_first_of("%]") - 1);
      std::istringstream parts(tasks);
      for (std::string part; std::getline(parts, part, ',');) {
        try {
          const auto dash = part.find('-');
          const int lo = std::stoi(part.substr(0, dash));
          const int hi = dash == std::string::npos ? lo : std::stoi(part.substr(dash + 1));
          for (int i = lo; i <= hi && i - lo < 1'000'000; ++i) {
            auto each = st;
            each.job = job + "_" + std::to_string(i);
            put(i, r->second, each);
          }
        } catch (const std::exception&) {
          // Not squeue's form: not ours to read.
        }
      }
      continue;
    }
    try {
      std::size_t used = 0;
      const int index = std::stoi(tasks, &used);
      if (used == tasks.size()) put(index, r->second, st);
    } catch (const std::exception&) {
    }
  }
  return out;
}

bool slurm_state_is_live(const std::string& state) {
  static const std::set<std::string> live = {
      "PENDING",      "RUNNING",     "CONFIGURING",  "COMPLETING", "REQUEUED",
      "REQUEUE_HOLD", "REQUEUE_FED", "SUSPENDED",    "RESIZING",   "SIGNALING",
      "STAGE_OUT",    "STOPPED",     "RESV_DEL_HOLD"};
  return live.count(state) > 0;
}

std::map<int, SlurmTaskState> query_slurm_states(const std::vector<SlurmJob>& jobs) {
  std::vector<std::string> ids;
  std::string text;
  // One job at a time: squeue refuses a whole list for one id it has forgotten.
  for (const auto& j : jobs) {
    ids.push_back(j.job);
    const auto out =
        run_program({"squeue", "-h", "-r", "-t", "all", "-j", j.job, "-o", "%i|%T|%r"});
    const bool forgotten = out.code != 0 && out.text.find("Invalid job id") != std::string::npos;
    if (out.code != 0 && !forgotten)
      throw Error("squeue: " + (out.text.empty() ? "exit status " + std::to_string(out.code)
                                                 : out.text.substr(0, out.text.find('\n'))));
    if (!forgotten && out.text.find('|') != std::string::npos) {
      text += out.text;
      continue;
    }
    // Without accounting sacct fails; the folders then say what they can.
    const auto acct = run_program({"sacct", "-n", "-P", "-X", "-j", j.job, "-o", "JobID,State"});
    if (acct.code == 0) text += acct.text;
  }
  return parse_job_states(text, ids);
}

}  // namespace dstudio::sweep
