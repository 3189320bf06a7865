// dstudio sweep: grids of training runs as folders (core/sweep): create one, train a cell (task),
// train every unfinished cell on this machine (run) or hand them to Slurm as a job array
// (submit), and say where each stands (status, with squeue's word for a submitted sweep).

// Index of this file:
//   [SECTION] Stop signals
//   [SECTION] Training a cell
//   [SECTION] Checking and spawning cells
//   [SECTION] Printing columns
//   [SECTION] The sweep commands
//   [SECTION] Benchmark: the status of a sweep

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "bench_two_ways.h"
#include "commands.h"
#include "dstudio/analysis/metrics_row.h"
#include "dstudio/common/atomic_file.h"
#include "dstudio/common/csv.h"
#include "dstudio/common/error.h"
#include "dstudio/common/folder_lock.h"
#include "dstudio/common/read_file.h"
#include "dstudio/common/subprocess.h"
#include "dstudio/common/text.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/env/environment.h"
#include "dstudio/models/checkpoint.h"
#include "dstudio/models/device.h"
#include "dstudio/models/evaluation.h"
#include "dstudio/models/targets.h"
#include "dstudio/models/training.h"
#include "dstudio/sweep/slurm.h"
#include "dstudio/sweep/sweep.h"
#ifdef DSTUDIO_HAVE_FIGURES
#include "sweep_figures.h"
#endif

namespace dstudio::cli {

namespace {

namespace fs = std::filesystem;
using sweep::CellState;

// ---------------------------------------------------------------------------------------------
// [SECTION] Stop signals

// The exit code of a task stopped by a signal after saving its checkpoint: it resumes next time.
constexpr int kInterrupted = 130;

std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");

// SIGTERM (Slurm's time limit, scancel, requeue), SIGUSR1 (Slurm's --signal warning), SIGINT:
// stop at the next step and keep a checkpoint. Only the flag: a handler may not take locks.
void on_stop_signal(int) {
  g_stop = true;
}

// Installed without SA_RESTART, so a blocking waitpid returns and the stop is passed on at once.
struct StopSignals {
  struct sigaction old_term {
  }, old_usr1{}, old_int{};
  StopSignals() {
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGUSR1, &sa, &old_usr1);
    sigaction(SIGINT, &sa, &old_int);
  }
  ~StopSignals() {
    sigaction(SIGTERM, &old_term, nullptr);
    sigaction(SIGUSR1, &old_usr1, nullptr);
    sigaction(SIGINT, &old_int, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
};

// ---------------------------------------------------------------------------------------------
// [SECTION] Training a cell

std::string host_name() {
  char name[256] = {0};
  if (gethostname(name, sizeof name - 1) != 0) return "?";
  return name;
}

std::string slurm_job() {
  const char* array = std::getenv("SLURM_ARRAY_JOB_ID");
  const char* task = std::getenv("SLURM_ARRAY_TASK_ID");
  if (array && task) return std::string(array) + "_" + task;
  const char* job = std::getenv("SLURM_JOB_ID");
  return job ? job : "";
}

// The best eval_score in the cell's metrics.jsonl (NaN without evaluations).
double best_eval_score(const fs::path& dir) {
  double best = std::nan("");
  std::ifstream in(dir / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    const auto row = analysis::metrics::read_metrics_row(line);
    if (const auto v = row ? row->get(analysis::metrics::kEvalScore) : std::nullopt)
      if (std::isnan(best) || *v > best) best = *v;
  }
  return best;
}

const sweep::Cell& cell_at(const sweep::Sweep& s, int index) {
  if (index < 0 || index >= static_cast<int>(s.cells.size()))
    throw UsageError("--index " + std::to_string(index) + ": the sweep has cells 0 to " +
                     std::to_string(s.cells.size() - 1));
  return s.cells[static_cast<std::size_t>(index)];
}

// Cancels `trainer` once a stop signal has come, polling the flag the handler sets.
class StopWatcher {
 public:
  explicit StopWatcher(models::Trainer& trainer)
      : thread_([this, &trainer] {
          while (!done_) {
            if (g_stop) {
              trainer.cancel();
              return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
          }
        }) {}
  ~StopWatcher() {
    done_ = true;
    thread_.join();
  }
  StopWatcher(const StopWatcher&) = delete;
  StopWatcher& operator=(const StopWatcher&) = delete;

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

// Trains one cell: from the start, or from its checkpoint; scores the final policy.
int run_task(const sweep::Sweep& s, const sweep::Cell& cell, int threads) {
  // Handled from here to the end: under Slurm a stop comes more than once (Slurm signals every
  // process of the job and the batch shell passes its own on), and a second one must not end
  // a task that is saving its checkpoint.
  const StopSignals signals;
  const auto dir = sweep::cell_dir(s, cell);
  auto status = sweep::read_cell_status(s, cell);
  const auto checkpoint = dir / "checkpoint.pt";
  std::error_code ec;
  if (status.state == CellState::Finished && fs::exists(checkpoint, ec)) {
    std::printf("cell %d (%s) is finished\n", cell.index, cell.name.c_str());
    return kOk;
  }
  status.host = host_name();
  status.pid = static_cast<long long>(getpid());
  status.slurm_job = slurm_job();
  status.error.clear();
  const auto dataset = load_user_dataset(cell.dataset);
  std::unique_ptr<models::Trainer> trainer;
  if (fs::exists(checkpoint, ec)) {
    trainer = models::Trainer::resume(dataset, checkpoint, dir);
    ++status.restarts;
  } else {
    auto variant = models::with_overrides(
        models::make_variant(cell.variant, cell.merger, cell.mixer), cell.config);
    auto training = models::training_from_json(cell.training);
    models::apply_task_rtg_scale(training, dataset.env_id, cell.training);
    training.seed = cell.seed;
    // A thread count makes results reproducible only with itself: the grid's, else --threads.
    if (!nlohmann::json::parse(cell.training).contains("threads")) training.threads = threads;
    // A cell without a checkpoint starts again: what an earlier attempt wrote goes.
    trainer = std::make_unique<models::Trainer>(dataset, variant, training, dir,
                                                models::ExistingRun::Overwrite);
  }
  if (trainer->training().eval_every > 0)
    trainer->on_evaluation(
        models::evaluation_hook(dataset, trainer->training(), std::max(1, s.eval_episodes)));
  status.state = CellState::Running;
  status.step = trainer->step();
  status.total = trainer->training().steps;
  sweep::write_cell_status(s, cell, status);
  // task.json follows the run at most every two seconds: a shared filesystem is not a log.
  auto last_write = std::chrono::steady_clock::now();
  trainer->on_progress([&](const models::TrainingProgress& p) {
    status.step = p.step;
    status.loss = p.loss;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_write < std::chrono::seconds(2)) return;
    last_write = now;
    sweep::write_cell_status(s, cell, status);
  });
  {
    const StopWatcher watcher(*trainer);  // also a stop that came before the trainer existed
    trainer->run();
  }
  status.step = trainer->step();
  switch (trainer->state()) {
    case models::TrainingState::Finished:
      break;
    case models::TrainingState::Cancelled: {
      // Saved as the cell's checkpoint.pt, which the next task resumes from.
      const auto saved = trainer->save_checkpoint();
      fs::rename(saved, checkpoint);
      status.state = CellState::Pending;
      status.error =
          "stopped at step " + std::to_string(status.step) + "; resumes from its checkpoint";
      sweep::write_cell_status(s, cell, status);
      std::printf("cell %d stopped at step %lld; its checkpoint is saved\n", cell.index,
                  static_cast<long long>(status.step));
      return kInterrupted;
    }
    default:
      status.state = CellState::Failed;
      status.error = trainer->error();
      sweep::write_cell_status(s, cell, status);
      std::fprintf(stderr, "dstudio: error: cell %d (%s): %s\n", cell.index, cell.name.c_str(),
                   status.error.c_str());
      return kFailed;
  }
  status.best_score = best_eval_score(dir);
  if (s.eval_episodes > 0) {
    models::RolloutConfig rc;
    const auto info = models::read_checkpoint_info(checkpoint);
    rc.targets = {models::default_target(info)};
    rc.episodes = s.eval_episodes;
    rc.seed = cell.seed;
    rc.traces = false;
    rc.threads = threads;
    const auto r = models::rollout(checkpoint, rc);
    status.score = r.summary.front().mean_score;
    status.score_std = r.summary.front().std_score;
  }
  status.state = CellState::Finished;
  sweep::write_cell_status(s, cell, status);
  std::printf("cell %d (%s) finished %lld steps", cell.index, cell.name.c_str(),
              static_cast<long long>(status.step));
  if (std::isfinite(status.score))
    std::printf(", score %.1f +- %.1f", status.score, status.score_std);
  std::printf("\n");
  return kOk;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Checking and spawning cells

// Scored cells act in their dataset's task: each dataset must name one the studio simulates, or
// every cell would train in full and then fail. Checked when the sweep is made.
void check_cells_can_be_scored(const std::vector<sweep::Cell>& cells, int eval_episodes) {
  if (eval_episodes <= 0) return;
  std::set<std::string> checked;
  for (const auto& cell : cells) {
    if (!checked.insert(cell.dataset).second) continue;
    const auto dataset = load_user_dataset(cell.dataset);
    const std::string why =
        "so its cells cannot be scored (\"eval_episodes\": " + std::to_string(eval_episodes) +
        "); give \"eval_episodes\": 0 to train them without a score";
    if (dataset.env_id.empty()) throw UsageError(cell.dataset + ": names no environment, " + why);
    try {
      (void)env::task(dataset.env_id);
    } catch (const std::exception& e) {
      throw UsageError(cell.dataset + ": " + e.what() + ", " + why);
    }
  }
}

// `dstudio sweep task` for `index` as a child process of this program.
pid_t spawn_task(const fs::path& dir, int index, int threads, const std::string& device) {
  SpawnOptions inherit;
  inherit.stdin_from_null = false;  // as the runner's own: its output goes where the runner's goes
  return spawn_program("/proc/self/exe",
                       {"dstudio", "sweep", "task", dir.string(), "--index", std::to_string(index),
                        "--threads", std::to_string(threads), "--device", device},
                       inherit);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Printing columns

std::string first_line(const std::string& text) {
  const auto end = text.find('\n');
  return end == std::string::npos ? text : text.substr(0, end);
}

// Code points, not bytes: what a terminal's columns count for the names and texts printed.
std::size_t display_width(const std::string& text) {
  std::size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

// Rows printed as columns as wide as their widest cell (the last column unpadded); `right` says
// which columns are numbers, aligned right.
void print_columns(const std::vector<std::vector<std::string>>& rows,
                   const std::vector<bool>& right) {
  std::vector<std::size_t> width(right.size(), 0);
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c)
      width[c] = std::max(width[c], display_width(row[c]));
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      const std::string pad(c + 1 < row.size() || right[c] ? width[c] - display_width(row[c]) : 0,
                            ' ');
      if (c > 0) line += "  ";
      line += right[c] ? pad + row[c] : row[c] + pad;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    std::printf("%s\n", line.c_str());
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] The sweep commands

namespace {

// dstudio sweep create: write a sweep folder from a grid.
void add_sweep_create(CLI::App* sweep_cmd, int& exit_code) {
  auto* create = sweep_cmd->add_subcommand(
      "create", "Write a sweep folder from a grid: its manifest and one folder per cell");
  struct CreateArgs {
    std::string grid, out;
    bool dry_run = false, json = false;
  };
  auto c = std::make_shared<CreateArgs>();
  create->add_option("--grid", c->grid, "The grid (JSON; docs/sweeps.md)")->required();
  create->add_option("--out", c->out, "The sweep folder")->required();
  create->add_flag("--dry-run", c->dry_run, "Print the cells and write nothing");
  create->add_flag("--json", c->json, "Print the cells as JSON");
  create->callback([&exit_code, c] {
    exit_code = run_guarded([&] {
      std::ifstream in(c->grid);
      if (!in) throw UsageError("--grid " + c->grid + ": no such file");
      std::stringstream text;
      text << in.rdbuf();
      const auto cells = sweep::parse_grid(text.str(), fs::absolute(c->grid).parent_path());
      check_cells_can_be_scored(cells, sweep::grid_eval_episodes(text.str()));
      if (!c->dry_run) sweep::create_sweep(c->out, cells, text.str());
      if (c->json) {
        nlohmann::ordered_json j = nlohmann::ordered_json::array();
        for (const auto& cell : cells)
          j.push_back({{"index", cell.index},
                       {"name", cell.name},
                       {"variant", cell.variant},
                       {"dataset", cell.dataset},
                       {"seed", cell.seed},
                       {"config", nlohmann::json::parse(cell.config)},
                       {"training", nlohmann::json::parse(cell.training)}});
        std::printf("%s\n", j.dump(2).c_str());
        return;
      }
      for (const auto& cell : cells)
        std::printf("%4d  %-40s seed %-4llu %s %s\n", cell.index, cell.name.c_str(),
                    static_cast<unsigned long long>(cell.seed), cell.config.c_str(),
                    cell.training.c_str());
      std::printf(c->dry_run ? "%zu cells (dry run: nothing written)\n" : "%zu cells in %s\n",
                  cells.size(), c->out.c_str());
    });
  });
}

// dstudio sweep task: train one cell (what a Slurm array task runs).
void add_sweep_task(CLI::App* sweep_cmd, int& exit_code) {
  auto* task = sweep_cmd->add_subcommand("task",
                                         "Train one cell of a sweep (from its checkpoint when it "
                                         "has one); what a Slurm array task runs");
  struct TaskArgs {
    std::string dir;
    int index = -1, threads = 1;
    std::string device = "cpu";
  };
  auto t = std::make_shared<TaskArgs>();
  task->add_option("dir", t->dir, "The sweep folder")->required();
  task->add_option("--index", t->index, "The cell (from 0)")
      ->required()
      ->check(whole_number(0, 10'000'000));
  task->add_option("--threads", t->threads,
                   "Cores for the cell, unless its training says (results are reproducible for a "
                   "thread count)")
      ->capture_default_str()
      ->check(whole_number(1, 64));
  task->add_option("--device", t->device,
                   "Where to train: cpu, or cuda (needs a LibTorch built with CUDA and a GPU)")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "cuda"}));
  task->callback([&exit_code, t] {
    int code = kOk;
    exit_code = run_guarded([&] {
      models::require_device(t->device);
      const auto s = sweep::read_sweep(t->dir);
      const auto& cell = cell_at(s, t->index);
      // The cell is this task's until it ends; a second task on it (a requeued Slurm task, a
      // second `sweep run`) is refused here and leaves the cell's status to its holder.
      const FolderLock claim(sweep::cell_dir(s, cell));
      try {
        code = run_task(s, cell, t->threads);
      } catch (const std::exception& e) {
        // The cell says why, for status and for the window.
        auto status = sweep::read_cell_status(s, cell);
        status.state = CellState::Failed;
        status.error = e.what();
        sweep::write_cell_status(s, cell, status);
        throw;
      }
    });
    if (exit_code == kOk) exit_code = code;
  });
}

// dstudio sweep run: train every unfinished cell on this machine.
void add_sweep_run(CLI::App* sweep_cmd, int& exit_code) {
  auto* run = sweep_cmd->add_subcommand(
      "run",
      "Train every unfinished cell on this machine, a few at a time; interrupted ones resume");
  struct RunArgs {
    std::string dir;
    int jobs = 1, threads = 1;
    std::string device = "cpu";
  };
  auto r = std::make_shared<RunArgs>();
  run->add_option("dir", r->dir, "The sweep folder")->required();
  run->add_option("--jobs", r->jobs, "Cells at once")
      ->capture_default_str()
      ->check(whole_number(1, 256));
  run->add_option("--threads", r->threads, "Cores per cell, unless its training says")
      ->capture_default_str()
      ->check(whole_number(1, 64));
  run->add_option("--device", r->device, "Where the cells train: cpu, or cuda")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "cuda"}));
  run->callback([&exit_code, r] {
    int failed = 0, stopped = 0, busy = 0;
    exit_code = run_guarded([&] {
      models::require_device(r->device);
      const auto s = sweep::read_sweep(r->dir);
      std::vector<int> todo;
      for (const auto& cell : s.cells)
        if (sweep::result_status(s, cell).state != CellState::Finished) todo.push_back(cell.index);
      std::printf("%zu of %zu cells to train, %d at a time\n", todo.size(), s.cells.size(),
                  r->jobs);
      std::fflush(stdout);  // before the tasks' own lines
      std::map<pid_t, int> running;
      g_stop = false;
      const StopSignals signals;
      std::size_t next = 0;
      while (next < todo.size() || !running.empty()) {
        while (!g_stop && next < todo.size() && static_cast<int>(running.size()) < r->jobs) {
          const int index = todo[next++];
          const auto& cell = s.cells[static_cast<std::size_t>(index)];
          if (const auto holder = folder_holder(sweep::cell_dir(s, cell))) {
            std::printf("cell %d (%s) is being trained by %s; skipped\n", index, cell.name.c_str(),
                        holder->description.c_str());
            std::fflush(stdout);
            ++busy;
            continue;
          }
          running[spawn_task(s.dir, index, r->threads, r->device)] = index;
        }
        if (g_stop)  // pass the stop on: each task saves its checkpoint
          for (const auto& [pid, index] : running) kill(pid, SIGTERM);
        int wstatus = 0;
        const pid_t done = waitpid(-1, &wstatus, 0);
        if (done < 0) {
          if (errno == EINTR) continue;
          break;
        }
        const auto it = running.find(done);
        if (it == running.end()) continue;
        const int code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
        if (code == kInterrupted)
          ++stopped;
        else if (code != kOk)
          ++failed;
        running.erase(it);
      }
      std::printf("%zu cells trained or tried: %d failed, %d stopped (they resume on the next run)",
                  next - static_cast<std::size_t>(busy), failed, stopped);
      std::printf(busy > 0 ? ", %d held by other processes\n" : "\n", busy);
    });
    if (exit_code == kOk && (failed > 0 || busy > 0)) exit_code = kFailed;
    if (exit_code == kOk && (stopped > 0 || g_stop)) exit_code = kInterrupted;
  });
}

// What `dstudio sweep submit` is given.
struct SubmitArgs {
  std::string dir;
  bool slurm = false, dry_run = false;
  sweep::SlurmOptions o;
};

// What Slurm says of the cells of the earlier submissions `jobs`, keyed by cell index; none
// without any. A queue that cannot be asked stops the submission.
std::map<int, sweep::SlurmTaskState> earlier_submissions(const std::vector<sweep::SlurmJob>& jobs) {
  if (jobs.empty()) return {};
  try {
    return sweep::query_slurm_states(jobs);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) +
                "; cannot tell which cells of the earlier submissions still run, so nothing "
                "was submitted");
  }
}

// Runs sbatch on the script at `path`: the job id it printed.
std::string run_sbatch(const fs::path& path) {
  const auto out = run_program({"sbatch", "--parsable", path.string()});
  if (out.code == 127)
    throw Error(
        "sbatch is not on this machine's PATH: submit from a machine of the cluster (its login "
        "node); the script is " +
        path.string());
  if (out.code != 0)
    throw Error("sbatch " + path.string() + " failed (exit status " + std::to_string(out.code) +
                "): " + first_line(out.text));
  // --parsable prints "<job id>" or "<job id>;<cluster>", after any warnings.
  std::string job;
  std::istringstream lines(out.text);
  for (std::string line; std::getline(lines, line);) {
    const auto id = line.substr(0, line.find(';'));
    if (!id.empty() &&
        std::all_of(id.begin(), id.end(), [](unsigned char ch) { return std::isdigit(ch); }))
      job = id;
  }
  if (job.empty()) throw Error("sbatch printed no job id: " + first_line(out.text));
  return job;
}

// Hands the unfinished cells of `sb.dir` that no earlier submission still queues or runs to Slurm
// as one job array (or prints its script, with --dry-run).
void submit_sweep(const SubmitArgs& sb) {
  sweep::check_slurm_options(sb.o);
  const auto s = sweep::read_sweep(sb.dir);
  const auto jobs = sweep::read_slurm_jobs(s);
  // A cell still queued or running from an earlier submission is not submitted twice.
  const auto queue = earlier_submissions(jobs);
  std::vector<int> todo;
  int finished = 0, live = 0;
  for (const auto& cell : s.cells) {
    if (sweep::result_status(s, cell).state == CellState::Finished) {
      ++finished;
      continue;
    }
    const auto q = queue.find(cell.index);
    if (q != queue.end() && sweep::slurm_state_is_live(q->second.state)) {
      ++live;
      continue;
    }
    todo.push_back(cell.index);
  }
  if (todo.empty()) {
    std::printf("nothing to submit: %d of %zu cells finished, %d queued or running\n", finished,
                s.cells.size(), live);
    return;
  }
  const auto dstudio = fs::read_symlink("/proc/self/exe");
  const auto script = sweep::sbatch_script(s, todo, sb.o, dstudio);
  if (sb.dry_run) {
    std::printf("%s", script.c_str());
    std::printf("# dry run: %zu cells, nothing written or submitted\n", todo.size());
    return;
  }
  const auto dir = sweep::slurm_dir(s);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(dir.string() + ": " + ec.message());
  const auto path = dir / ("submit-" + std::to_string(jobs.size() + 1) + ".sbatch");
  write_text_atomically(path, script);
  const auto job = run_sbatch(path);
  sweep::add_slurm_job(s, {job, todo, path.string(), ""});
  std::printf(
      "submitted job %s: %zu cells as a job array (%s)%s; `dstudio sweep status %s` follows "
      "it\n",
      job.c_str(), todo.size(), sweep::array_spec(todo, sb.o.max_concurrent).c_str(),
      finished + live > 0 ? (", leaving out " + std::to_string(finished) + " finished and " +
                             std::to_string(live) + " queued or running")
                                .c_str()
                          : "",
      s.dir.string().c_str());
}

// dstudio sweep submit: hand the sweep to Slurm as a job array.
void add_sweep_submit(CLI::App* sweep_cmd, int& exit_code) {
  auto* submit =
      sweep_cmd->add_subcommand("submit",
                                "Hand the unfinished cells to Slurm as one job array (sbatch); "
                                "tasks checkpoint before the time limit and resume when requeued");
  auto sb = std::make_shared<SubmitArgs>();
  submit->add_option("dir", sb->dir, "The sweep folder (on a filesystem the cluster's nodes share)")
      ->required();
  submit->add_flag("--slurm", sb->slurm, "Submit to Slurm with sbatch (the scheduler supported)")
      ->required();
  submit->add_option("--partition", sb->o.partition, "sbatch --partition");
  submit->add_option("--time", sb->o.time,
                     "sbatch --time per task (minutes, H:M:S, D-H:M:S); the task saves its "
                     "checkpoint before it and is requeued");
  submit
      ->add_option("--cpus-per-task", sb->o.cpus_per_task,
                   "sbatch --cpus-per-task; the task trains with as many threads")
      ->capture_default_str()
      ->check(whole_number(1, 1024));
  submit->add_option("--mem", sb->o.mem, "sbatch --mem (e.g. 8G)");
  submit->add_option("--gres", sb->o.gres, "sbatch --gres (e.g. gpu:1, with --device cuda)");
  submit
      ->add_option("--max-concurrent", sb->o.max_concurrent,
                   "At most this many tasks at once (the array's %M; 0: no limit)")
      ->capture_default_str()
      ->check(whole_number(0, 1'000'000));
  submit
      ->add_option("--signal-before", sb->o.signal_seconds,
                   "Seconds before the time limit at which a task saves its checkpoint")
      ->capture_default_str()
      ->check(whole_number(1, 65535));
  submit->add_option("--job-name", sb->o.job_name,
                     "sbatch --job-name (default: dstudio-<sweep folder>)");
  submit->add_option("--device", sb->o.device, "What the tasks train on")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "cuda"}));
  submit
      ->add_option("--sbatch-arg", sb->o.extra,
                   "Another sbatch option, as --sbatch-arg=--qos=long (repeatable)")
      ->allow_extra_args(false);
  submit->add_flag("--dry-run", sb->dry_run, "Print the script and submit nothing");
  submit->callback([&exit_code, sb] { exit_code = run_guarded([&] { submit_sweep(*sb); }); });
}

// A number in JSON; null for NaN and the infinities.
nlohmann::ordered_json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

// What `dstudio sweep status` is given.
struct StatusArgs {
  std::string dir;
  bool json = false;
};

// The cell's status as its folder says it, corrected where its task says otherwise: a task that
// wrote "running" and was killed, or whose Slurm task (in `queue`) ended, waits or has started.
sweep::CellStatus status_now(const sweep::Sweep& s, const sweep::Cell& cell,
                             const std::map<int, sweep::SlurmTaskState>& queue) {
  auto cs = sweep::result_status(s, cell);
  // A task that wrote "running" but no longer holds its cell (on any host), or whose process
  // is gone on this host, was killed.
  const auto dir = sweep::cell_dir(s, cell);
  std::error_code ec;
  const bool unheld = fs::exists(dir / kFolderLockFile, ec) && !folder_holder(dir);
  const bool gone = cs.host == host_name() && cs.pid > 0 &&
                    kill(static_cast<pid_t>(cs.pid), 0) != 0 && errno == ESRCH;
  if (cs.state == CellState::Running && (unheld || gone)) {
    cs.state = CellState::Pending;
    cs.error = "its task stopped without a word (killed?); it resumes from its checkpoint";
  }
  const auto queued = queue.find(cell.index);
  if (queued != queue.end()) {
    const auto& q = queued->second;
    if (cs.state == CellState::Running && !sweep::slurm_state_is_live(q.state)) {
      cs.state = CellState::Pending;
      cs.error = "its Slurm task ended (" + q.state +
                 ") before the cell finished; it resumes from its checkpoint";
    } else if (cs.state == CellState::Pending && !sweep::slurm_state_is_live(q.state)) {
      // Its task will not run again by itself: say so rather than "pending" alone.
      const std::string why = q.reason.empty() || q.reason == "None" ? "" : ", " + q.reason;
      cs.error = (cs.error.empty() ? "" : cs.error + "; ") + "its Slurm task ended (" + q.state +
                 why + "): sweep submit --slurm again resumes it";
    } else if (cs.state == CellState::Pending && q.state == "RUNNING") {
      cs.state = CellState::Running;  // started, not yet written its first status
    } else if (cs.state == CellState::Running && (q.state == "PENDING" || q.state == "REQUEUED")) {
      // Requeued after a kill that left no word in its folder.
      cs.state = CellState::Pending;
      cs.error = "requeued; it waits in the queue and resumes from its checkpoint";
    }
  }
  return cs;
}

// The cell as `status --json` lists it; with what Slurm says of its task, when it knows it.
nlohmann::ordered_json cell_status_json(const sweep::Cell& cell, const sweep::CellStatus& cs,
                                        const sweep::SlurmTaskState* queued) {
  nlohmann::ordered_json j = {{"index", cell.index},
                              {"name", cell.name},
                              {"group", cell.group},
                              {"seed", cell.seed},
                              {"state", sweep::to_string(cs.state)},
                              {"step", cs.step},
                              {"total", cs.total},
                              {"loss", number_or_null(cs.loss)},
                              {"score", number_or_null(cs.score)},
                              {"score_std", number_or_null(cs.score_std)},
                              {"best_score", number_or_null(cs.best_score)},
                              {"host", cs.host},
                              {"slurm_job", cs.slurm_job},
                              {"restarts", cs.restarts},
                              {"error", cs.error}};
  if (queued)
    j["slurm"] = {{"job", queued->job}, {"state", queued->state}, {"reason", queued->reason}};
  return j;
}

// The cell's row of the status table: index, name, state, step, loss, score, and where it runs.
std::vector<std::string> cell_status_row(const sweep::Cell& cell, const sweep::CellStatus& cs,
                                         const sweep::SlurmTaskState* queued) {
  const std::string step =
      cs.total > 0 ? std::to_string(cs.step) + "/" + std::to_string(cs.total) : "-";
  const std::string score = std::isfinite(cs.score)
                                ? fixed_number(cs.score, 1) + " +- " + fixed_number(cs.score_std, 1)
                                : std::string(kMissingNumber);
  std::string where = cs.slurm_job.empty() ? cs.host : cs.host + " (" + cs.slurm_job + ")";
  if (queued && sweep::slurm_state_is_live(queued->state)) {
    const auto& q = *queued;
    where = (cs.host.empty() ? "" : where + "  ") + "slurm " + q.job + " " + q.state;
    if (q.state == "PENDING" && !q.reason.empty() && q.reason != "None")
      where += " (" + q.reason + ")";
  }
  if (!cs.error.empty()) where += "  " + cs.error;
  return {std::to_string(cell.index),
          cell.name,
          sweep::to_string(cs.state),
          step,
          fixed_number(cs.loss, 4),
          score,
          where};
}

// Where a sweep's cells stand, as `sweep status` reads it: the manifest, the Slurm record, each
// cell's task.json and lock (never a checkpoint's contents), and squeue for a submitted sweep.
struct SweepNow {
  sweep::Sweep sweep;
  std::vector<sweep::SlurmJob> jobs;
  std::map<int, sweep::SlurmTaskState> queue;
  std::vector<sweep::CellStatus> cells;  // in the manifest's order
  std::map<std::string, int> counts;     // cells in each state
};

SweepNow read_sweep_now(const std::string& dir) {
  SweepNow now;
  now.sweep = sweep::read_sweep(dir);
  now.jobs = sweep::read_slurm_jobs(now.sweep);
  try {
    now.queue = sweep::query_slurm_states(now.jobs);
  } catch (const Error& e) {
    std::fprintf(stderr, "dstudio: warning: %s; the states below are the cells' folders' alone\n",
                 e.what());
  }
  for (const auto& cell : now.sweep.cells) {
    now.cells.push_back(status_now(now.sweep, cell, now.queue));
    ++now.counts[sweep::to_string(now.cells.back().state)];
  }
  return now;
}

// Prints where each cell of `st.dir` stands: a table with the counts of each state and the Slurm
// jobs, or one JSON object.
void show_sweep_status(const StatusArgs& st) {
  const SweepNow now = read_sweep_now(st.dir);
  const auto& s = now.sweep;
  const auto& jobs = now.jobs;
  nlohmann::ordered_json cells = nlohmann::ordered_json::array();
  std::vector<std::vector<std::string>> table = {
      {"cell", "name", "state", "step", "loss", "score", "where"}};
  for (std::size_t i = 0; i < s.cells.size(); ++i) {
    const auto& cell = s.cells[i];
    const auto it = now.queue.find(cell.index);
    const sweep::SlurmTaskState* queued = it != now.queue.end() ? &it->second : nullptr;
    cells.push_back(cell_status_json(cell, now.cells[i], queued));
    if (!st.json) table.push_back(cell_status_row(cell, now.cells[i], queued));
  }
  if (st.json) {
    nlohmann::ordered_json j = {
        {"sweep", s.dir.string()}, {"cells", cells}, {"counts", now.counts}};
    if (!jobs.empty()) {
      j["slurm_jobs"] = nlohmann::ordered_json::array();
      for (const auto& job : jobs)
        j["slurm_jobs"].push_back(
            {{"job", job.job}, {"cells", job.cells}, {"submitted", job.submitted}});
    }
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    print_columns(table, {true, false, false, true, true, true, false});
    std::printf("%zu cells:", s.cells.size());
    for (const auto& [state, n] : now.counts) std::printf(" %d %s", n, state.c_str());
    std::printf("\n");
    for (const auto& job : jobs)
      std::printf("slurm job %s: %zu cells (%s), submitted %s\n", job.job.c_str(), job.cells.size(),
                  sweep::array_spec(job.cells, 0).c_str(), job.submitted.c_str());
  }
}

// dstudio sweep status: where each cell stands.
void add_sweep_status(CLI::App* sweep_cmd, int& exit_code) {
  auto* status_cmd = sweep_cmd->add_subcommand(
      "status", "Where each cell of a sweep stands: pending, running, finished or failed");
  auto st = std::make_shared<StatusArgs>();
  status_cmd->add_option("dir", st->dir, "The sweep folder")->required();
  status_cmd->add_flag("--json", st->json, "Print one JSON object");
  status_cmd->callback(
      [&exit_code, st] { exit_code = run_guarded([&] { show_sweep_status(*st); }); });
}

// What `dstudio sweep collect` is given.
struct CollectArgs {
  std::string dir, out;
  bool json = false;
  int resamples = 2000;
  std::uint64_t seed = 0;
};

#ifdef DSTUDIO_HAVE_FIGURES
using CollectFigures = std::shared_ptr<FigureOptions>;
#else
using CollectFigures = std::shared_ptr<void>;  // a build without the GUI libraries draws none
#endif

nlohmann::ordered_json interval_json(const analysis::Interval& i) {
  return nlohmann::ordered_json{{"estimate", number_or_null(i.estimate)},
                                {"low", number_or_null(i.low)},
                                {"high", number_or_null(i.high)}};
}

// Every cell's scores: cells.csv, and the entries of results.json's "cells" in `cells`. What
// could not be counted is said on stderr.
CsvWriter cell_results(const sweep::Sweep& s, nlohmann::ordered_json& cells) {
  CsvWriter cells_csv({"index", "name", "group", "seed", "state", "step", "total", "score",
                       "score_std", "best_score"},
                      6);
  std::vector<std::string> warnings;
  for (const auto& cell : s.cells) {
    const auto cs = sweep::result_status(s, cell, &warnings);
    cells_csv << cell.index << cell.name << cell.group << cell.seed << sweep::to_string(cs.state)
              << cs.step << cs.total << cs.score << cs.score_std << cs.best_score;
    cells_csv.end_row();
    cells.push_back({{"index", cell.index},
                     {"name", cell.name},
                     {"group", cell.group},
                     {"seed", cell.seed},
                     {"state", sweep::to_string(cs.state)},
                     {"score", number_or_null(cs.score)},
                     {"best_score", number_or_null(cs.best_score)}});
  }
  for (const auto& w : warnings) std::fprintf(stderr, "dstudio: warning: %s\n", w.c_str());
  return cells_csv;
}

// Each group's scores over its seeds: groups.csv, and the entries of results.json's "groups".
CsvWriter group_results(const std::vector<sweep::GroupResult>& groups,
                        nlohmann::ordered_json& entries) {
  CsvWriter groups_csv({"group", "setting", "dataset", "cells", "finished", "score_mean",
                        "score_std", "best_mean", "best_std", "score_iqm", "score_iqm_low",
                        "score_iqm_high", "best_iqm", "best_iqm_low", "best_iqm_high"},
                       6);
  for (const auto& g : groups) {
    groups_csv << g.group << g.setting << g.dataset << g.cells << g.finished << g.score_mean
               << g.score_std << g.best_mean << g.best_std << g.score_iqm.estimate
               << g.score_iqm.low << g.score_iqm.high << g.best_iqm.estimate << g.best_iqm.low
               << g.best_iqm.high;
    groups_csv.end_row();
    entries.push_back({{"group", g.group},
                       {"setting", g.setting},
                       {"dataset", g.dataset},
                       {"cells", g.cells},
                       {"finished", g.finished},
                       {"score_mean", number_or_null(g.score_mean)},
                       {"score_std", number_or_null(g.score_std)},
                       {"best_mean", number_or_null(g.best_mean)},
                       {"best_std", number_or_null(g.best_std)},
                       {"score_iqm", interval_json(g.score_iqm)},
                       {"best_iqm", interval_json(g.best_iqm)}});
  }
  return groups_csv;
}

// rliable's aggregates of each setting (IQM, median, mean, optimality gap), final and best:
// aggregates.csv, and results.json's "aggregates" in `entries`.
CsvWriter aggregate_results(const sweep::SweepStatistics& stats, nlohmann::ordered_json& entries) {
  CsvWriter aggregates_csv(
      {"setting", "measure", "statistic", "estimate", "low", "high", "datasets", "runs"}, 6);
  entries = nlohmann::ordered_json::array();
  for (const auto& a : stats.aggregates) {
    nlohmann::ordered_json entry = {{"setting", a.setting}, {"datasets", a.datasets}};
    for (const auto& [measure, summary] :
         {std::pair{"final", &a.last}, std::pair{"best", &a.best}}) {
      if (!*summary) continue;
      nlohmann::ordered_json m = {{"runs", (*summary)->runs}};
      for (const auto& [name, i] :
           {std::pair{"iqm", &(*summary)->iqm}, std::pair{"median", &(*summary)->median},
            std::pair{"mean", &(*summary)->mean},
            std::pair{"optimality_gap", &(*summary)->optimality_gap}}) {
        aggregates_csv << a.setting << measure << name << i->estimate << i->low << i->high
                       << (*summary)->tasks << (*summary)->runs;
        aggregates_csv.end_row();
        m[name] = interval_json(*i);
      }
      entry[measure] = m;
    }
    entries.push_back(entry);
  }
  return aggregates_csv;
}

// The probability that each setting improves on another, final and best: improvement.csv, and
// results.json's "improvements" in `entries`.
CsvWriter improvement_results(const sweep::SweepStatistics& stats,
                              nlohmann::ordered_json& entries) {
  CsvWriter improvement_csv({"x", "y", "measure", "probability", "low", "high", "datasets"}, 6);
  entries = nlohmann::ordered_json::array();
  for (const auto& p : stats.improvements) {
    nlohmann::ordered_json entry = {{"x", p.x}, {"y", p.y}, {"datasets", p.datasets}};
    for (const auto& [measure, interval] :
         {std::pair{"final", &p.last}, std::pair{"best", &p.best}}) {
      if (!*interval) continue;
      improvement_csv << p.x << p.y << measure << (*interval)->estimate << (*interval)->low
                      << (*interval)->high << p.datasets.size();
      improvement_csv.end_row();
      entry[measure] = interval_json(**interval);
    }
    entries.push_back(entry);
  }
  return improvement_csv;
}

// Each setting's performance profile, final and best: profiles.csv.
CsvWriter profile_results(const sweep::SweepStatistics& stats) {
  CsvWriter profiles_csv({"setting", "measure", "tau", "fraction", "low", "high"}, 6);
  for (const auto& [measure, profiles] :
       {std::pair{"final", &stats.profiles}, std::pair{"best", &stats.best_profiles}})
    for (const auto& p : *profiles)
      for (const auto& point : p.points) {
        profiles_csv << p.setting << measure << point.tau << point.fraction << point.low
                     << point.high;
        profiles_csv.end_row();
      }
  return profiles_csv;
}

// The groups' scores, each setting's IQM over its datasets and the probabilities of improvement,
// as `sweep collect` prints them, with what their signs mean.
void print_results(const std::vector<sweep::GroupResult>& groups,
                   const sweep::SweepStatistics& stats) {
  for (const auto& g : groups)
    std::printf("%-24s %-20s %d/%d finished  score %s +- %s  IQM %s  best %s  IQM %s\n",
                g.setting.c_str(), g.dataset.c_str(), g.finished, g.cells,
                fixed_number(g.score_mean, 1).c_str(), fixed_number(g.score_std, 1).c_str(),
                analysis::interval_text(g.score_iqm).c_str(), fixed_number(g.best_mean, 1).c_str(),
                analysis::interval_text(g.best_iqm).c_str());
  for (const auto& a : stats.aggregates)
    std::printf("%-24s over %zu dataset(s): IQM final %s, best %s\n", a.setting.c_str(),
                a.datasets.size(),
                a.last ? analysis::interval_text(a.last->iqm).c_str() : kMissingNumber.data(),
                a.best ? analysis::interval_text(a.best->iqm).c_str() : kMissingNumber.data());
  for (const auto& p : stats.improvements)
    if (p.last)
      std::printf("P(%s > %s) = %s\n", p.x.c_str(), p.y.c_str(),
                  analysis::interval_text(*p.last, 2).c_str());
  // What the signs mean, once: "+-" is always a standard deviation, [ ] always an interval.
  std::vector<int> runs;
  for (const auto& g : groups) runs.push_back(static_cast<int>(g.scores.size()));
  for (const auto& a : stats.aggregates)
    if (a.last) runs.push_back(a.last->runs);
  std::printf(
      "+-: one standard deviation over the finished seeds (n - 1); [low, high]: 95%% "
      "stratified bootstrap interval.%s%s\n",
      sweep::iqm_note(runs).empty() ? "" : " ", sweep::iqm_note(runs).c_str());
}

// Collects the scores of every cell of `co.dir`, grouped, with rliable's statistics: writes the
// tables, results.json and the figures into the --out folder, and prints the results (or
// results.json with --json).
void collect_sweep(const CollectArgs& co, [[maybe_unused]] const CollectFigures& figures) {
  const auto s = sweep::read_sweep(co.dir);
  const fs::path out = co.out.empty() ? s.dir / "results" : fs::path(co.out);
  nlohmann::ordered_json j = {{"sweep", s.dir.string()},
                              {"cells", nlohmann::ordered_json::array()},
                              {"groups", nlohmann::ordered_json::array()}};
  const auto cells_csv = cell_results(s, j["cells"]);
  analysis::BootstrapOptions bootstrap;
  bootstrap.resamples = co.resamples;
  bootstrap.seed = co.seed;
  const auto groups = sweep::collect_groups(s, nullptr, bootstrap);
  const auto groups_csv = group_results(groups, j["groups"]);
  // rliable's statistics of each setting over its datasets (tasks) and seeds (runs).
  const auto stats = sweep::sweep_statistics(groups, bootstrap);
  j["bootstrap"] = {{"resamples", bootstrap.resamples},
                    {"confidence", bootstrap.confidence},
                    {"seed", bootstrap.seed},
                    {"method", "stratified bootstrap, percentile interval (rliable)"}};
  const auto aggregates_csv = aggregate_results(stats, j["aggregates"]);
  const auto improvement_csv = improvement_results(stats, j["improvements"]);
  const auto profiles_csv = profile_results(stats);
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw Error(out.string() + ": " + ec.message());
  cells_csv.write(out / "cells.csv");
  groups_csv.write(out / "groups.csv");
  write_text_atomically(out / "results.json", j.dump(2) + "\n");
  write_text_atomically(out / "table.tex", sweep::latex_table(groups));
  write_text_atomically(out / "iqm.tex", sweep::latex_iqm_table(groups, stats.aggregates));
  aggregates_csv.write(out / "aggregates.csv");
  improvement_csv.write(out / "improvement.csv");
  profiles_csv.write(out / "profiles.csv");
#ifdef DSTUDIO_HAVE_FIGURES
  const auto figure_files = write_sweep_figures(groups, stats, out, *figures);
  write_sweep_recipes(s, co.resamples, co.seed, *figures, figure_files, out);
#endif
  if (co.json) {
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  print_results(groups, stats);
  std::printf(
      "wrote %s (cells.csv, groups.csv, aggregates.csv, improvement.csv, profiles.csv, "
      "results.json, table.tex, iqm.tex)\n",
      out.string().c_str());
#ifdef DSTUDIO_HAVE_FIGURES
  for (const auto& f : figure_files) std::printf("wrote %s\n", f.c_str());
#endif
}
// dstudio sweep collect: the scores of every cell, grouped, with intervals and figures.
void add_sweep_collect(CLI::App* sweep_cmd, int& exit_code) {
  auto* collect = sweep_cmd->add_subcommand(
      "collect",
      "Final and best scores per cell and per group (mean, std, and the IQM with its stratified "
      "bootstrap 95% interval over seeds), rliable's aggregates of each setting over its datasets, "
      "performance profiles and the probability of improvement: CSV, JSON, LaTeX tables, figures");
  auto co = std::make_shared<CollectArgs>();
  collect->add_option("dir", co->dir, "The sweep folder")->required();
  collect->add_option("--out", co->out,
                      "Where to write cells.csv, groups.csv, results.json, table.tex and the "
                      "figures (default: DIR/results)");
  collect->add_flag("--json", co->json, "Print results.json");
  collect->add_option("--resamples", co->resamples, "Bootstrap resamples of every interval")
      ->capture_default_str()
      ->check(CLI::Range(1, kMostResamples));
  collect
      ->add_option("--bootstrap-seed", co->seed,
                   "Seed of the bootstrap (the same seed gives the same intervals)")
      ->capture_default_str();
#ifdef DSTUDIO_HAVE_FIGURES
  // scores.* (and best_scores.*): the groups as bars, in the export dialog's styles.
  const auto figures = add_sweep_figure_options(collect);
#else
  const std::shared_ptr<void> figures;
#endif
  collect->callback(
      [&exit_code, co, figures] { exit_code = run_guarded([&] { collect_sweep(*co, figures); }); });
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Benchmark: the status of a sweep

// A sweep of finished cells, each holding a copy of `checkpoint` and the task.json a finished
// task writes, under `dir`.
sweep::Sweep finished_sweep(const fs::path& dir, int cells, const fs::path& checkpoint) {
  std::vector<sweep::Cell> list;
  for (int i = 0; i < cells; ++i) {
    sweep::Cell c;
    c.index = i;
    c.variant = "dt";
    c.dataset = (dir / "hopper-medium.hdf5").string();
    c.seed = static_cast<std::uint64_t>(i);
    c.group = "dt-hopper-medium";
    char name[64];
    std::snprintf(name, sizeof name, "%03d-dt-hopper-medium-s%d", i, i);
    c.name = name;
    list.push_back(std::move(c));
  }
  const auto s = sweep::create_sweep(dir / "sweep", list, "{}");
  for (const auto& cell : s.cells) {
    fs::copy_file(checkpoint, sweep::cell_dir(s, cell) / "checkpoint.pt");
    sweep::CellStatus done;
    done.state = CellState::Finished;
    done.step = done.total = 100000;
    done.loss = 0.01;
    done.host = host_name();
    done.score = 50.0;
    done.best_score = 60.0;
    done.updated = sweep::utc_now();
    sweep::write_cell_status(s, cell, done);
  }
  return s;
}

// `sweep status` on a sweep of finished cells: what it reads (task.json and the manifest, never a
// checkpoint), against the same status that also read each cell's checkpoint whole, as a status
// showing each model's description from its weights file would. Time and bytes, alternating.
int run_status_bench(const TwoWaysArgs& a) {
  const fs::path source = bench_checkpoint(a);
  const fs::path root =
      fs::temp_directory_path() / ("dstudio-status-bench-" + std::to_string(::getpid()));
  fs::create_directories(root);
  struct Removed {
    fs::path dir;
    ~Removed() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } removed{root};
  const auto s = finished_sweep(root, a.count, source);
  const auto status = [&] {
    const auto now = read_sweep_now(s.dir.string());
    if (now.counts.size() != 1 || now.counts.begin()->second != a.count)
      throw Error(s.dir.string() + ": the status did not find every cell finished");
  };
  const auto measured = time_two_ways(a.repeats, status, [&] {
    status();
    for (const auto& cell : s.cells)
      (void)models::read_checkpoint_info(sweep::cell_dir(s, cell) / "checkpoint.pt");
  });
  const auto checkpoint_bytes = static_cast<std::int64_t>(fs::file_size(source));
  print_two_ways("a sweep of " + std::to_string(a.count) +
                     " finished cells, each with task.json and a copy of " +
                     source.filename().string() + " (" +
                     byte_size_text(static_cast<std::uint64_t>(checkpoint_bytes)) + ")",
                 "status", "with weights", "cell", a.count, a.repeats, measured);
  // Less than one checkpoint read for the whole sweep: no cell's weights were.
  const bool none = measured.first.bytes < checkpoint_bytes;
  std::printf("checkpoints    %s\n",
              none ? "the status read none" : "the status read at least one checkpoint's bytes");
  return none ? kOk : kFailed;
}

void add_sweep_bench(CLI::App& app, int& exit_code) {
  add_two_ways_bench(app.get_subcommand("bench"), "sweep-status",
                     "dstudio sweep status on a sweep of finished cells: time and bytes read, "
                     "against the same status reading each cell's checkpoint whole",
                     "--cells", "Cells of the sweep", "cell", &run_status_bench, exit_code);
}

}  // namespace

void add_sweep_commands(CLI::App& app, int& exit_code) {
  auto* sweep_cmd = app.add_subcommand(
      "sweep",
      "Grids of training runs (variants x datasets x seeds) as folders, run here or on Slurm");
  sweep_cmd->require_subcommand(1);
  add_sweep_create(sweep_cmd, exit_code);
  add_sweep_task(sweep_cmd, exit_code);
  add_sweep_run(sweep_cmd, exit_code);
  add_sweep_submit(sweep_cmd, exit_code);
  add_sweep_status(sweep_cmd, exit_code);
  add_sweep_collect(sweep_cmd, exit_code);
  add_sweep_bench(app, exit_code);
}

}  // namespace dstudio::cli
