// Starting other programs with posix_spawn. See subprocess.h.

#include "dstudio/common/subprocess.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "dstudio/common/error.h"

extern char** environ;

namespace dstudio {

pid_t spawn_program(const std::string& program, const std::vector<std::string>& argv,
                    const SpawnOptions& options) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (options.stdin_from_null)
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (options.stdout_fd >= 0)
    posix_spawn_file_actions_adddup2(&actions, options.stdout_fd, STDOUT_FILENO);
  if (options.stderr_to_null)
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  else if (options.stderr_fd >= 0)
    posix_spawn_file_actions_adddup2(&actions, options.stderr_fd, STDERR_FILENO);
  for (const auto& [from, to] : options.pass_fds)
    posix_spawn_file_actions_adddup2(&actions, from, to);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (options.default_signals) {
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  }
  pid_t pid = -1;
  const int failed =
      options.search_path
          ? posix_spawnp(&pid, program.c_str(), &actions, &attr, args.data(), environ)
          : posix_spawn(&pid, program.c_str(), &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (failed != 0) throw Error("cannot start " + program + ": " + std::strerror(failed));
  return pid;
}

int wait_for_exit(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return 128 + SIGKILL;  // not our child any more: reaped elsewhere
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

ProgramOutput run_program(const std::vector<std::string>& argv) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw Error("cannot run " + argv.front() + ": " + std::strerror(errno));
  SpawnOptions options;
  options.search_path = true;
  options.stdout_fd = options.stderr_fd = fds[1];
  pid_t pid = -1;
  try {
    pid = spawn_program(argv.front(), argv, options);
  } catch (const Error& e) {
    ::close(fds[0]);
    ::close(fds[1]);
    return {127, e.what()};
  }
  ::close(fds[1]);
  ProgramOutput out;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n > 0)
      out.text.append(buffer, static_cast<std::size_t>(n));
    else if (n == 0 || errno != EINTR)
      break;
  }
  ::close(fds[0]);
  out.code = wait_for_exit(pid);
  return out;
}

}  // namespace dstudio
