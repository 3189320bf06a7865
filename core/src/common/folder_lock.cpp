// One writer per folder. See folder_lock.h.

#include "dstudio/common/folder_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <utility>

namespace dstudio {
namespace fs = std::filesystem;
namespace {

struct Claim {
  int fd = -1;
  int count = 0;
  pid_t pid = 0;  // the process that made it: a forked child inherits the map, not the claim
};

// This process's claims: flock conflicts between two descriptors of one process too, so a
// second claim on a folder this process holds is counted, not locked again.
std::mutex& claims_mutex() {
  static std::mutex m;
  return m;
}
std::map<fs::path, Claim>& claims() {
  static std::map<fs::path, Claim> c;
  // Claims a forked child inherited are its parent's: forgotten here (closing the inherited
  // descriptor leaves the parent's lock in place; only an explicit unlock would release it).
  for (auto it = c.begin(); it != c.end();) {
    if (it->second.pid != getpid()) {
      ::close(it->second.fd);
      it = c.erase(it);
    } else {
      ++it;
    }
  }
  return c;
}

fs::path key_of(const fs::path& folder) {
  std::error_code ec;
  const auto canonical = fs::weakly_canonical(folder, ec);
  return ec ? fs::absolute(folder).lexically_normal() : canonical;
}

std::string own_description() {
  std::string command;
  if (std::ifstream in("/proc/self/cmdline", std::ios::binary); in) {
    std::stringstream s;
    s << in.rdbuf();
    command = s.str();
    for (char& c : command)
      if (c == '\0') c = ' ';
    while (!command.empty() && command.back() == ' ') command.pop_back();
    if (command.size() > 300) command = command.substr(0, 300) + "...";
  }
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "?");
  return std::to_string(getpid()) + "\n" + host + "\n" + command + "\n";
}

// What the holder wrote: its pid, host and command line.
FolderHolder read_holder(int fd) {
  FolderHolder h;
  std::string text(1024, '\0');
  const ssize_t n = pread(fd, text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  std::istringstream in(text);
  std::string pid, host, command;
  std::getline(in, pid);
  std::getline(in, host);
  std::getline(in, command);
  try {
    h.pid = static_cast<pid_t>(std::stol(pid));
  } catch (const std::exception&) {
    h.pid = 0;
  }
  if (h.pid > 0) {
    h.description = "process " + std::to_string(h.pid) + (host.empty() ? "" : " on " + host);
    if (!command.empty()) h.description += " (" + command + ")";
  } else {
    h.description = "another process";
  }
  return h;
}

}  // namespace

FolderLock::FolderLock(const fs::path& folder) {
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) throw Error(folder.string() + ": cannot be made (" + ec.message() + ")");
  const auto key = key_of(folder);
  std::lock_guard guard(claims_mutex());
  if (auto it = claims().find(key); it != claims().end()) {
    ++it->second.count;
    folder_ = key;
    return;
  }
  const auto file = key / kFolderLockFile;
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0)
    throw Error(folder.string() + ": cannot make its lock file " + kFolderLockFile + " (" +
                std::strerror(errno) + ")");
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int why = errno;
    const auto holder = read_holder(fd);
    ::close(fd);
    if (why == EWOULDBLOCK)
      throw FolderBusy(folder.string() + ": " + holder.description +
                           " is writing there; two processes cannot write one run. Wait for it to "
                           "end, or stop it",
                       holder.pid);
    throw Error(folder.string() + ": cannot lock " + kFolderLockFile + " (" + std::strerror(why) +
                ")");
  }
  const std::string me = own_description();
  // The description is only for messages: a failure to write it does not stop the claim.
  if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, me.data(), me.size(), 0);
  claims()[key] = {fd, 1, getpid()};
  folder_ = key;
}

FolderLock::~FolderLock() {
  release();
}

FolderLock::FolderLock(FolderLock&& other) noexcept : folder_(std::exchange(other.folder_, {})) {}

FolderLock& FolderLock::operator=(FolderLock&& other) noexcept {
  if (this != &other) {
    release();
    folder_ = std::exchange(other.folder_, {});
  }
  return *this;
}

void FolderLock::release() noexcept {
  if (folder_.empty()) return;
  std::lock_guard guard(claims_mutex());
  const auto it = claims().find(folder_);
  if (it != claims().end() && --it->second.count == 0) {
    ::close(it->second.fd);  // releases the flock
    claims().erase(it);
  }
  folder_.clear();
}

std::optional<FolderHolder> folder_holder(const fs::path& folder) {
  const auto key = key_of(folder);
  {
    std::lock_guard guard(claims_mutex());
    if (claims().count(key)) return std::nullopt;
  }
  const int fd = ::open((key / kFolderLockFile).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return std::nullopt;
  std::optional<FolderHolder> holder;
  if (::flock(fd, LOCK_SH | LOCK_NB) == 0)
    ::flock(fd, LOCK_UN);
  else if (errno == EWOULDBLOCK)
    holder = read_holder(fd);
  ::close(fd);
  return holder;
}

}  // namespace dstudio
