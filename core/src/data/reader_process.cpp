// The dataset reader process: the child's main and the parent's side. See reader_process.h.

// Index of this file:
//   [SECTION] Talking to the parent
//   [SECTION] Handing the dataset back
//   [SECTION] Reading it back
//   [SECTION] The reader program
//   [SECTION] Running a reader
//   [SECTION] What went wrong
//   [SECTION] Loading in a reader

#include "dstudio/data/reader_process.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <stdexcept>
#include <string_view>

#include "dstudio/common/error.h"
#include "dstudio/common/resources.h"
#include "dstudio/common/subprocess.h"
#include "dstudio/common/system_info.h"
#include "h5.h"
#include "isolation.h"

namespace dstudio::data {

namespace fs = std::filesystem;

namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] Talking to the parent

constexpr const char* kReaderProgram = "dstudio-probe";
constexpr const char* kPluginReaderProgram = "dstudio-plugin-reader";
constexpr int kExitRefused = 1;
constexpr int kExitUsage = 2;
constexpr int kExitNoMemory = 3;
constexpr int kExitFailed = 4;

// One line to the parent, unbuffered: it must be out before a crash that may follow.
void send(std::string line) {
  for (char& c : line)
    if (c == '\n') c = ' ';
  line += '\n';
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(STDOUT_FILENO, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

std::string one_field(std::string text) {
  for (char& c : text)
    if (c == '\t') c = ' ';
  return text;
}

// The dataset handed back to the parent: little-endian fields in a fixed order, every length first.
// The parent checks each length against what is left, so a reader that died while writing cannot
// make it allocate more than the bytes it wrote.
constexpr std::uint64_t kResultMagic = 0x3130534453445344ULL;  // "DSDSDS01"

// ---------------------------------------------------------------------------------------------
// [SECTION] Handing the dataset back

struct ResultWriter {
  int fd;
  bool ok = true;
  void bytes(const void* data, std::size_t n) {
    const char* p = static_cast<const char*>(data);
    while (ok && n > 0) {
      const ssize_t w = ::write(fd, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0)
        ok = false;
      else {
        p += w;
        n -= static_cast<std::size_t>(w);
      }
    }
  }
  void u64(std::uint64_t v) { bytes(&v, sizeof v); }
  void f64(double v) { bytes(&v, sizeof v); }
  void text(const std::string& s) {
    u64(s.size());
    bytes(s.data(), s.size());
  }
  template <typename T>
  void values(const std::vector<T>& v) {
    u64(v.size());
    bytes(v.data(), v.size() * sizeof(T));
  }
};

bool write_result(int fd, const Dataset& ds) {
  ResultWriter w{fd};
  w.u64(kResultMagic);
  w.text(ds.path);
  w.text(ds.format);
  const auto& d = ds.data;
  for (auto dim : {d.obs_dim, d.act_dim, d.qpos_dim, d.qvel_dim, d.goal_dim})
    w.u64(static_cast<std::uint64_t>(dim));
  for (const auto* v :
       {&d.observations, &d.next_observations, &d.actions, &d.rewards, &d.qpos, &d.qvel, &d.goals})
    w.values(*v);
  w.values(d.terminals);
  w.values(d.timeouts);
  w.u64(d.state_infos.size());
  for (const auto& [key, info] : d.state_infos) {
    w.text(key);
    w.u64(static_cast<std::uint64_t>(info.dim));
    w.values(info.values);
  }
  w.u64(ds.timeouts_synthesized);
  w.u64(ds.episodes.size());
  for (const auto& e : ds.episodes) {
    w.u64(static_cast<std::uint64_t>(e.start));
    w.u64(static_cast<std::uint64_t>(e.length));
    w.u64(static_cast<std::uint64_t>(e.end));
    w.f64(e.ret);
  }
  w.u64(ds.arrays.size());
  for (const auto& a : ds.arrays) {
    w.text(a.key);
    w.text(a.dtype);
    w.values(a.shape);
  }
  w.u64(ds.metadata.size());
  for (const auto& [k, v] : ds.metadata) {
    w.text(k);
    w.text(v);
  }
  w.text(ds.env_id);
  w.values(ds.state_mean);
  w.values(ds.state_std);
  w.text(ds.fingerprint);
  w.u64(ds.warnings.size());
  for (const auto& warning : ds.warnings) w.text(warning);
  w.u64(ds.notes.size());
  for (const auto& note : ds.notes) w.text(note);
  w.text(ds.task_caveat);
  w.u64(ds.metadata_arrays.size());
  for (const auto& [key, a] : ds.metadata_arrays) {
    w.text(key);
    w.values(a.shape);
    w.values(a.values);
  }
  w.u64(kResultMagic);
  return w.ok;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Reading it back

struct ResultReader {
  int fd;
  std::uint64_t left;
  bool ok = true;
  void bytes(void* data, std::size_t n) {
    if (!ok || n > left) {
      ok = false;
      return;
    }
    char* p = static_cast<char*>(data);
    while (n > 0) {
      const ssize_t r = ::read(fd, p, n);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        ok = false;
        return;
      }
      p += r;
      n -= static_cast<std::size_t>(r);
      left -= static_cast<std::uint64_t>(r);
    }
  }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    bytes(&v, sizeof v);
    return v;
  }
  double f64() {
    double v = 0;
    bytes(&v, sizeof v);
    return v;
  }
  // A count of items of at least `min_bytes` each: never more than the bytes left could hold.
  std::uint64_t count(std::uint64_t min_bytes) {
    const std::uint64_t n = u64();
    if (n > left / std::max<std::uint64_t>(min_bytes, 1)) ok = false;
    return ok ? n : 0;
  }
  std::string text() {
    std::string s(count(1), '\0');
    bytes(s.data(), s.size());
    return s;
  }
  template <typename T>
  void values(std::vector<T>& v) {
    v.resize(count(sizeof(T)));
    bytes(v.data(), v.size() * sizeof(T));
  }
};

bool read_result(int fd, std::uint64_t size, Dataset& ds) {
  ResultReader r{fd, size};
  if (r.u64() != kResultMagic) return false;
  ds.path = r.text();
  ds.format = r.text();
  auto& d = ds.data;
  for (auto* dim : {&d.obs_dim, &d.act_dim, &d.qpos_dim, &d.qvel_dim, &d.goal_dim})
    *dim = static_cast<std::int64_t>(r.u64());
  for (auto* v :
       {&d.observations, &d.next_observations, &d.actions, &d.rewards, &d.qpos, &d.qvel, &d.goals})
    r.values(*v);
  r.values(d.terminals);
  r.values(d.timeouts);
  for (std::uint64_t k = 0, infos = r.count(24); k < infos; ++k) {
    const std::string key = r.text();
    auto& info = d.state_infos[key];
    info.dim = static_cast<std::int64_t>(r.u64());
    r.values(info.values);
  }
  ds.timeouts_synthesized = r.u64() != 0;
  ds.episodes.resize(r.count(32));
  for (auto& e : ds.episodes) {
    e.start = static_cast<std::int64_t>(r.u64());
    e.length = static_cast<std::int64_t>(r.u64());
    const std::uint64_t end = r.u64();
    e.end = end <= static_cast<std::uint64_t>(EndReason::Unterminated) ? static_cast<EndReason>(end)
                                                                       : EndReason::Unterminated;
    e.ret = r.f64();
  }
  ds.arrays.resize(r.count(24));
  for (auto& a : ds.arrays) {
    a.key = r.text();
    a.dtype = r.text();
    r.values(a.shape);
  }
  for (std::uint64_t i = 0, n = r.count(16); i < n && r.ok; ++i) {
    std::string k = r.text();
    ds.metadata[k] = r.text();
  }
  ds.env_id = r.text();
  r.values(ds.state_mean);
  r.values(ds.state_std);
  ds.fingerprint = r.text();
  ds.warnings.resize(r.count(8));
  for (auto& warning : ds.warnings) warning = r.text();
  ds.notes.resize(r.count(8));
  for (auto& note : ds.notes) note = r.text();
  ds.task_caveat = r.text();
  for (std::uint64_t i = 0, n = r.count(24); i < n && r.ok; ++i) {
    std::string key = r.text();
    auto& a = ds.metadata_arrays[key];
    r.values(a.shape);
    r.values(a.values);
  }
  return r.u64() == kResultMagic && r.ok;
}

// Whether this program was built with AddressSanitizer, which needs terabytes of address space.
constexpr bool kAddressSanitizer =
#if defined(__SANITIZE_ADDRESS__)
    true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    true;
#else
    false;
#endif
#else
    false;
#endif

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] The reader program

int reader_process_main(int argc, char** argv,
                        const std::function<void(const std::string& plugin)>& load_plugin) {
  LoadOptions options;
  std::int64_t memory_limit = 0;
  int result_fd = -1;
  std::string path, plugin;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--no-metadata")
      options.metadata = false;
    else if (arg == "--no-infos")
      options.infos = false;
    else if (arg == "--next-observations")
      options.next_observations = true;
    else if (arg == "--max-bytes" && has_value)
      options.max_bytes = std::atoll(argv[++i]);
    else if (arg == "--max-episode-steps" && has_value)
      options.max_episode_steps = std::atoll(argv[++i]);
    else if (arg == "--memory-limit" && has_value)
      memory_limit = std::atoll(argv[++i]);
    else if (arg == "--result-fd" && has_value)
      result_fd = std::atoi(argv[++i]);
    else if (arg == "--plugin" && has_value && load_plugin)
      plugin = argv[++i];
    else if (!arg.empty() && arg[0] != '-' && path.empty())
      path = arg;
    else {
      std::fprintf(stderr,
                   "usage: %s [--no-metadata] [--no-infos] [--next-observations] [--max-bytes N] "
                   "[--max-episode-steps N] [--memory-limit BYTES] [--result-fd FD]%s <dataset>\n",
                   argv[0], load_plugin ? " [--plugin FILE]" : "");
      return kExitUsage;
    }
  }
  if (path.empty()) return kExitUsage;
  // A crash here is expected on some files: no core dump, and no life beyond the parent's.
  const rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) return kExitFailed;  // the parent is already gone
  if (memory_limit > 0 && !kAddressSanitizer) {
    // Beyond what the program has mapped already: the plugin reader starts with LibTorch's
    // libraries mapped, the HDF5 reader with little.
    long pages = 0;
    if (FILE* statm = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(statm, "%ld", &pages) != 1) pages = 0;
      std::fclose(statm);
    }
    const auto limit = static_cast<rlim_t>(memory_limit) +
                       static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE));
    const rlimit as{limit, limit};
    setrlimit(RLIMIT_AS, &as);
  }
  h5::set_breadcrumb_sink([](const std::string& what, bool optional) {
    send(std::string("at ") + (optional ? "1 " : "0 ") + what);
  });
  int last_percent = -1;
  const Progress progress{[&](double fraction, std::string_view stage) {
                            const int percent = static_cast<int>(fraction * 100);
                            if (percent == last_percent) return;
                            last_percent = percent;
                            send("progress " + std::to_string(fraction) + " " + std::string(stage));
                          },
                          {}};
  int code = 0;
  try {
    if (!plugin.empty()) {
      send("at 0 loading the plugin " + fs::path(plugin).filename().string());
      load_plugin(plugin);
      send("at 0 reading the file");
    }
    const Dataset ds = load_dataset(path, options, progress);
    if (result_fd >= 0 && !write_result(result_fd, ds))
      throw Error(std::string("cannot hand the dataset back: ") + std::strerror(errno));
    send("ok");
  } catch (const DatasetError& e) {
    send("refused " + one_field(e.file()) + "\t" + one_field(e.key()) + "\t" +
         one_field(e.problem()));
    code = kExitRefused;
  } catch (const std::bad_alloc&) {
    send("nomem");
    code = kExitNoMemory;
  } catch (const std::exception& e) {
    send(std::string("failed ") + e.what());
    code = kExitFailed;
  }
  // Straight out: libhdf5's exit handlers would walk whatever a damaged file left behind.
  std::_Exit(code);
}

namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] Running a reader

std::string gib(std::int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1 << 30));
  return text;
}

// What the reader process said and how it ended.
struct Outcome {
  enum class Kind { Ok, Refused, Crashed, TimedOut, OutOfMemory, Failed } kind = Kind::Failed;
  std::string step = "opening the file";  // the last breadcrumb
  bool optional_step = false;
  std::string file, key, problem;  // Refused
  std::string detail;              // Crashed: the signal; Failed: the message
};

// Kills and reaps the child unless it was reaped already.
struct Child {
  pid_t pid = -1;
  ~Child() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      int status = 0;
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
  }
};

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// The reader's command line: what to leave out or keep, the limits, the result's descriptor and
// the file.
std::vector<std::string> reader_arguments(const fs::path& program,
                                          const std::vector<std::string>& extra_args,
                                          const fs::path& file, const LoadOptions& options,
                                          std::int64_t memory_limit) {
  std::vector<std::string> args{program.string()};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  if (!options.metadata) args.emplace_back("--no-metadata");
  if (!options.infos) args.emplace_back("--no-infos");
  if (options.next_observations) args.emplace_back("--next-observations");
  args.insert(args.end(), {"--max-bytes", std::to_string(options.max_bytes), "--max-episode-steps",
                           std::to_string(options.max_episode_steps), "--memory-limit",
                           std::to_string(memory_limit), "--result-fd", "3", file.string()});
  return args;
}

// One line from the reader: a breadcrumb, progress (passed on, scaled to the reading's share), or
// how it ended.
void take_line(const std::string& line, const Progress& progress, Outcome& out) {
  if (line.rfind("at ", 0) == 0 && line.size() >= 5) {
    out.optional_step = line[3] == '1';
    out.step = line.substr(5);
  } else if (line.rfind("progress ", 0) == 0) {
    const std::string rest = line.substr(9);
    const auto space = rest.find(' ');
    const double fraction = std::atof(rest.substr(0, space).c_str());
    if (progress.report && std::isfinite(fraction))
      progress.report(0.95 * fraction,
                      space == std::string::npos ? std::string() : rest.substr(space + 1));
  } else if (line == "ok") {
    out.kind = Outcome::Kind::Ok;
  } else if (line.rfind("refused ", 0) == 0) {
    out.kind = Outcome::Kind::Refused;
    const std::string rest = line.substr(8);
    const auto a = rest.find('\t'), b = rest.find('\t', a == std::string::npos ? a : a + 1);
    out.file = rest.substr(0, a);
    out.key = a == std::string::npos ? "" : rest.substr(a + 1, b - a - 1);
    out.problem = b == std::string::npos ? rest : rest.substr(b + 1);
  } else if (line == "nomem") {
    out.kind = Outcome::Kind::OutOfMemory;
  } else if (line.rfind("failed ", 0) == 0) {
    out.kind = Outcome::Kind::Failed;
    out.detail = line.substr(7);
  }
}

// When the reader must be done: now plus a timeout in seconds, as the steady clock counts.
using Deadline = decltype(std::chrono::steady_clock::now() + std::chrono::duration<double>());

// Takes the reader's lines from `fd` until its output ends; false when the deadline comes first.
// Throws Cancelled.
bool read_lines(int fd, Deadline deadline, const Progress& progress, Outcome& out) {
  std::string buffer;
  for (;;) {
    if (progress.cancel.cancelled()) throw Cancelled();  // the Child guard kills the reader
    if (std::chrono::steady_clock::now() >= deadline) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, 100);  // short: cancellation is noticed within 0.1 s
    if (ready < 0 && errno != EINTR) return true;
    if (ready <= 0) continue;
    char chunk[4096];
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;  // end of output: the reader has exited or closed it
    buffer.append(chunk, static_cast<std::size_t>(n));
    for (std::size_t eol; (eol = buffer.find('\n')) != std::string::npos;) {
      take_line(buffer.substr(0, eol), progress, out);
      buffer.erase(0, eol + 1);
    }
    if (buffer.size() > (1 << 20))
      buffer.clear();  // no line is this long; do not grow without bound
  }
}

// How the reader ended by its exit status, against what its last line said.
void judge_exit(int status, Outcome& out) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    out.kind = sig == SIGXCPU ? Outcome::Kind::TimedOut : Outcome::Kind::Crashed;
    out.detail = std::string(strsignal(sig));
  } else if (WIFEXITED(status)) {
    const int code = WEXITSTATUS(status);
    const bool as_said = (code == 0 && out.kind == Outcome::Kind::Ok) ||
                         (code == kExitRefused && out.kind == Outcome::Kind::Refused) ||
                         (code == kExitFailed && out.kind == Outcome::Kind::Failed);
    if (code == kExitNoMemory) {
      out.kind = Outcome::Kind::OutOfMemory;
    } else if (!as_said) {
      // An exit without its result line: something ended the reader from inside (a sanitizer's
      // report, glibc's abort handler exiting): as good as a crash.
      out.kind = Outcome::Kind::Crashed;
      out.detail = "exit status " + std::to_string(code);
    }
  }
}

// Runs the reader on `file`; on success the dataset is in `result_fd` (a memory file).
Outcome run_reader(const fs::path& program, const std::vector<std::string>& extra_args,
                   const fs::path& file, const LoadOptions& options, double timeout_s,
                   std::int64_t memory_limit, int result_fd, const Progress& progress) {
  const std::vector<std::string> args =
      reader_arguments(program, extra_args, file, options, memory_limit);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw Error(std::string("cannot start the dataset reader: ") + std::strerror(errno));
  Fd read_end{fds[0]};
  Fd write_end{fds[1]};
  SpawnOptions spawn;
  spawn.stdout_fd = write_end.fd;
  spawn.pass_fds = {{result_fd, 3}};
  spawn.stderr_to_null =
      true;  // what libhdf5 and glibc print on their way down is not for the user's terminal
  spawn.default_signals = true;
  Child child;
  try {
    child.pid = spawn_program(program.string(), args, spawn);
  } catch (const Error& e) {
    throw Error(std::string("the dataset reader: ") + e.what());
  }
  ::close(write_end.fd);
  write_end.fd = -1;

  Outcome out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  if (!read_lines(read_end.fd, deadline, progress, out)) {
    out.kind = Outcome::Kind::TimedOut;
    return out;  // the Child guard kills and reaps it
  }
  // Output ended: wait for the exit, within the same deadline.
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(child.pid, &status, WNOHANG);
    if (r == child.pid) break;
    if (r < 0 && errno != EINTR) {
      status = 0;
      break;
    }
    if (progress.cancel.cancelled()) throw Cancelled();
    if (std::chrono::steady_clock::now() >= deadline) {
      out.kind = Outcome::Kind::TimedOut;
      return out;
    }
    ::usleep(10000);
  }
  child.pid = -1;
  judge_exit(status, out);
  return out;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] What went wrong

// What went wrong, as the end of a sentence about the file: the HDF5 library read it, or the
// plugin format `plugin_format`.
std::string describe(const Outcome& o, double timeout_s, std::int64_t memory_limit,
                     const DatasetFormatDefinition* plugin_format) {
  const bool hdf5 = plugin_format == nullptr;
  const std::string culprit = hdf5 ? "the HDF5 library"
                                   : "the " + plugin_format->name + " format (plugin " +
                                         plugin_format->origin.label() + ")";
  const std::string damaged = hdf5 ? ": the file is damaged" : "";
  switch (o.kind) {
    case Outcome::Kind::Crashed:
      return culprit + " crashed (" + o.detail + ") while " + o.step + damaged;
    case Outcome::Kind::TimedOut: {
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%g s", timeout_s);
      return culprit + " did not finish " + o.step + " within " + seconds +
             (hdf5 ? " (it loops forever on some damaged files): the file is damaged" : "");
    }
    case Outcome::Kind::OutOfMemory:
      return culprit + " ran out of memory (" + gib(memory_limit) + " allowed) while " + o.step +
             (hdf5 ? ": a size in the file is damaged" : "");
    case Outcome::Kind::Failed:
      return "the dataset reader failed while " + o.step + ": " + o.detail;
    default:
      return "the dataset reader failed";
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] Loading in a reader

Dataset load_in_reader_process(const fs::path& file, const LoadOptions& given,
                               const Progress& progress,
                               const DatasetFormatDefinition* plugin_format) {
  // A plugin's format is read by the reader that loads plugins, with the plugin that defines it.
  const char* name = plugin_format ? kPluginReaderProgram : kReaderProgram;
  const fs::path program = private_program(name);
  if (program.empty())
    throw Error(std::string("the studio's dataset reader ") + name +
                " is missing: it belongs beside " + executable_path().string() +
                " or in the studio's library folder; the installation is incomplete");
  std::vector<std::string> extra_args;
  if (plugin_format) {
    if (plugin_format->origin.file.empty())
      throw Error("the dataset format '" + plugin_format->name + "' (" +
                  plugin_format->origin.label() + ") names no plugin file to read " +
                  file.string() + " with");
    extra_args = {"--plugin", plugin_format->origin.file};
  }
  std::error_code ec;
  const auto size = fs::file_size(file, ec);
  const std::int64_t bytes = ec ? 0 : static_cast<std::int64_t>(size);
  LoadOptions options = given;
  double timeout_s = options.reader_timeout_seconds;
  if (timeout_s <= 0) {
    const char* env = std::getenv("DSTUDIO_READER_TIMEOUT");
    timeout_s =
        env && std::atof(env) > 0 ? std::atof(env) : 10.0 + static_cast<double>(bytes) / 4e6;
  }
  // Room for the program itself, plus what the arrays of a file this size can need (compressed
  // arrays expand; the loader's own budget refuses more than this anyway).
  const std::int64_t budget =
      options.max_bytes > 0 ? options.max_bytes : physical_memory_bytes() / 2;
  const std::int64_t memory_limit =
      (std::int64_t{1} << 30) +
      std::min(budget, std::max<std::int64_t>(std::int64_t{256} << 20, 64 * bytes));

  auto attempt = [&](Fd& result) {
    result.fd = ::memfd_create("dstudio-dataset", MFD_CLOEXEC);
    if (result.fd < 0)
      throw Error(std::string("cannot start the dataset reader: ") + std::strerror(errno));
    return run_reader(program, extra_args, file, options, timeout_s, memory_limit, result.fd,
                      progress);
  };
  Fd result;
  Outcome o = attempt(result);
  std::vector<std::string> warnings;
  const bool died = o.kind == Outcome::Kind::Crashed || o.kind == Outcome::Kind::TimedOut ||
                    o.kind == Outcome::Kind::OutOfMemory;
  if (died && o.optional_step && options.metadata) {
    // The metadata is what libhdf5 fails on most; the arrays may still be sound.
    warnings.push_back("metadata left out: " + describe(o, timeout_s, memory_limit, plugin_format));
    options.metadata = false;
    ::close(result.fd);
    o = attempt(result);
  }
  switch (o.kind) {
    case Outcome::Kind::Ok:
      break;
    case Outcome::Kind::Refused:
      throw DatasetError(o.file.empty() ? file.string() : o.file, o.key, o.problem);
    default:
      throw DatasetError(file.string(), "", describe(o, timeout_s, memory_limit, plugin_format));
  }
  progress.update(0.97, "receiving the dataset");
  struct stat st {};
  Dataset ds;
  if (::fstat(result.fd, &st) != 0 || ::lseek(result.fd, 0, SEEK_SET) != 0 ||
      !read_result(result.fd, static_cast<std::uint64_t>(st.st_size), ds))
    throw DatasetError(file.string(), "", "the dataset reader handed back an incomplete result");
  ds.warnings.insert(ds.warnings.begin(), warnings.begin(), warnings.end());
  progress.update(1.0, "done");
  return ds;
}

}  // namespace dstudio::data
