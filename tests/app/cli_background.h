#pragma once
// The dstudio command line started in the background, and waiting for what it writes: for the
// tests that act on a running process (a second writer, a signal mid-run). They wait for a sign
// (a file's content, the process's end), never for a time.

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "dstudio/common/subprocess.h"

namespace dstudio::test {

/// `dstudio args` started in the background (its output in files of `dir`); the process is
/// dstudio's own, so a signal reaches it.
inline pid_t start_cli(const std::string& args, const std::filesystem::path& dir,
                       const std::string& name) {
  const std::string cmd = "exec " + std::string(DSTUDIO_CLI) + " " + args + " >" +
                          (dir / (name + ".out")).string() + " 2>" +
                          (dir / (name + ".err")).string();
  dstudio::SpawnOptions options;
  options.search_path = true;
  return dstudio::spawn_program("sh", {"sh", "-c", cmd}, options);
}

/// The whole of a text file (empty when it cannot be read).
inline std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Waits for what a running program writes in `folder` (made by it or already there): the folder
/// is watched with inotify, and `ready` is asked again at each change in it and when `pid` ends.
/// True once `ready` holds; false if `pid` ended first, or after ten minutes without it (a machine
/// that slow fails the test rather than hangs it).
template <typename Ready>
bool wait_for(pid_t pid, const std::filesystem::path& folder, Ready ready) {
  const int changes = ::inotify_init1(IN_CLOEXEC);
  // Through syscall(): Debian 12's <sys/pidfd.h> declares pidfd_open without C linkage.
  const int ended = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (changes < 0 || ended < 0) {
    ADD_FAILURE() << "cannot watch " << folder << " and process " << pid << ": "
                  << std::strerror(errno);
    return false;
  }
  constexpr std::uint32_t kWritten = IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO;
  ::inotify_add_watch(changes, folder.parent_path().c_str(), IN_CREATE | IN_MOVED_TO);
  bool watched = false;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(10);
  bool ok = false;
  for (;;) {
    if (!watched && std::filesystem::is_directory(folder))
      watched = ::inotify_add_watch(changes, folder.c_str(), kWritten) >= 0;
    if ((ok = ready())) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          give_up - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) break;
    pollfd fds[2] = {{changes, POLLIN, 0}, {ended, POLLIN, 0}};
    if (::poll(fds, 2, static_cast<int>(left)) < 0 && errno != EINTR) break;
    if (fds[1].revents & POLLIN) {  // the program ended: what it wrote is all there will be
      ok = ready();
      break;
    }
    char events[4096];
    if (fds[0].revents & POLLIN) (void)!::read(changes, events, sizeof events);
  }
  ::close(changes);
  ::close(ended);
  return ok;
}

/// Sends `signal` to `pid` and reaps it.
inline void kill_and_reap(pid_t pid, int signal) {
  ::kill(pid, signal);
  ::waitpid(pid, nullptr, 0);
}

}  // namespace dstudio::test
