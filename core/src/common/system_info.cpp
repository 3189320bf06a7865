#include "dstudio/common/system_info.h"

#include <dlfcn.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

namespace dstudio {

std::string active_blas() {
  // Debian selects the BLAS through the alternatives system; LibTorch, NumPy and friends all load
  // whatever this link points at.
  const std::filesystem::path link = "/etc/alternatives/libblas.so.3-x86_64-linux-gnu";
  std::error_code ec;
  auto target = std::filesystem::canonical(link, ec);
  return ec ? std::string("unknown") : target.string();
}

std::string active_blas_name() {
  const std::string path = active_blas();
  if (path == "unknown") return path;
  const auto dir = std::filesystem::path(path).parent_path().filename().string();
  if (dir == "blas") return "reference";
  return dir;  // openblas-pthread, openblas-openmp, blis-pthread, atlas, ...
}

bool lower_thread_priority() {
#if defined(__linux__)
  // On Linux the nice value belongs to the thread (its task id), not to the whole process.
  return setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 10) == 0;
#else
  return false;
#endif
}

bool set_blas_threads(int threads) {
  // Looked up at run time: which BLAS is loaded is the alternatives system's choice.
  using SetThreads = void (*)(int);
  for (const char* symbol : {"openblas_set_num_threads", "bli_thread_set_num_threads"}) {
    if (auto* f = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, symbol))) {
      f(threads);
      return true;
    }
  }
  return false;
}

void keep_freed_memory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's maximum: tensors below 32 MiB come from the heap
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  mallopt(M_TOP_PAD, 64 << 20);
#endif
}

std::int64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

std::int64_t current_rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::int64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * sysconf(_SC_PAGESIZE);
}

std::int64_t bytes_read_so_far() {
  std::ifstream io("/proc/self/io");
  std::string key;
  std::int64_t value = 0;
  while (io >> key >> value)
    if (key == "rchar:") return value;
  return -1;
}

std::int64_t physical_memory_bytes() {
  return static_cast<std::int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
}

int hardware_threads() {
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::string studio_version() {
  return "Decision Studio " DSTUDIO_VERSION;
}

std::string utc_time_now() {
  const auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace dstudio
