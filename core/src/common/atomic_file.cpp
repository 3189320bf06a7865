// Files written whole or not at all. See atomic_file.h.

#include "dstudio/common/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "dstudio/common/error.h"

namespace dstudio {
namespace fs = std::filesystem;

namespace {

std::string reason(int error) {
  return error == ENOSPC ? "disk full: " + std::string(std::strerror(error)) : std::strerror(error);
}

// ".<name>.partial-<pid>" beside `path`: hidden, and named by the process, so that two writers of
// one file never share a temporary and remove_stale_temporaries finds a killed writer's.
fs::path temporary_beside(const fs::path& path) {
  std::string name = ".";
  name += path.filename().string();
  name += ".partial-" + std::to_string(getpid());
  return (path.parent_path().empty() ? fs::path(".") : path.parent_path()) / name;
}

}  // namespace

void remove_stale_temporaries(const fs::path& path) {
  // ".<name>.partial-<pid>[-<n>]" of a writer that was killed (kill -9, a power loss) before it
  // could remove it; a live writer's (its process still exists) is left alone.
  // Built by appending: GCC 12 warns falsely (-Wrestrict) on chains of string concatenation.
  std::string prefix = ".";
  prefix += path.filename().string();
  prefix += ".partial-";
  std::error_code ec;
  const fs::path folder = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::vector<fs::path> stale;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
    if (pid > 0 && pid != getpid() && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      stale.push_back(entry.path());
  }
  for (const auto& p : stale) fs::remove(p, ec);
}

void sync_to_disk(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path.string() + ": cannot be flushed to disk (" + reason(errno) + ")");
  const int result = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  // Some file systems cannot flush a folder; what matters there is the file's own flush.
  if (result != 0 && error != EINVAL && error != EROFS)
    throw Error(path.string() + ": cannot be flushed to disk (" + reason(error) + ")");
}

void write_file_atomically(const fs::path& path,
                           const std::function<void(const fs::path& temp)>& write) {
  const fs::path folder = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  const fs::path temp = temporary_beside(path);
  remove_stale_temporaries(path);
  std::error_code ec;
  try {
    write(temp);
    sync_to_disk(temp);
    fs::rename(temp, path, ec);
  } catch (...) {
    fs::remove(temp, ec);
    throw;
  }
  if (ec) {
    const std::string why = ec.message();
    fs::remove(temp, ec);
    throw Error(path.string() + ": cannot be written (" + why + ")");
  }
  sync_to_disk(folder);
}

void write_bytes_atomically(const fs::path& path, std::string_view bytes) {
  write_file_atomically(path, [&](const fs::path& temp) {
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw Error(path.string() + ": cannot be written (" + reason(errno) + ")");
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int error = n < 0 ? errno : ENOSPC;
        ::close(fd);
        throw Error(path.string() + ": cannot be written (" + reason(error) +
                    "); the previous file, if any, is kept");
      }
      done += static_cast<std::size_t>(n);
    }
    if (::close(fd) != 0)
      throw Error(path.string() + ": cannot be written (" + reason(errno) +
                  "); the previous file, if any, is kept");
  });
}

void write_text_atomically(const fs::path& path, std::string_view text) {
  write_bytes_atomically(path, text);
}

AtomicFileGroup::~AtomicFileGroup() {
  if (committed_) return;
  std::error_code ec;
  for (const auto& [temp, target] : files_) fs::remove(temp, ec);
}

fs::path AtomicFileGroup::add(const fs::path& target) {
  for (const auto& [temp, other] : files_)
    if (fs::absolute(other).lexically_normal() == fs::absolute(target).lexically_normal())
      throw UsageError(target.string() + ": named twice among the files written together");
  remove_stale_temporaries(target);
  files_.emplace_back(temporary_beside(target), target);
  return files_.back().first;
}

std::vector<fs::path> AtomicFileGroup::commit() {
  // Every check before any rename: a target that cannot take its file leaves all of them as
  // they were.
  std::error_code ec;
  for (const auto& [temp, target] : files_) {
    if (!fs::is_regular_file(temp, ec))
      throw Error(target.string() + ": cannot be written (nothing was written for it)");
    if (fs::is_directory(target, ec))
      throw Error(target.string() + ": cannot be written (a folder has that name)");
    const fs::path folder = target.parent_path().empty() ? fs::path(".") : target.parent_path();
    if (::access(folder.c_str(), W_OK) != 0)
      throw Error(target.string() + ": cannot be written (" + reason(errno) + ")");
    sync_to_disk(temp);
  }
  std::vector<fs::path> written;
  for (const auto& [temp, target] : files_) {
    fs::rename(temp, target, ec);
    if (ec)
      throw Error(target.string() + ": cannot be written (" + ec.message() + ")" +
                  (written.empty() ? std::string()
                                   : "; written before it: " + written.front().string() +
                                         (written.size() > 1 ? " and others" : "")));
    written.push_back(target);
  }
  committed_ = true;
  for (const auto& [temp, target] : files_)
    sync_to_disk(target.parent_path().empty() ? fs::path(".") : target.parent_path());
  return written;
}

}  // namespace dstudio
