#pragma once
/// \file
/// Starting other programs: one way, posix_spawn, for the dataset reader, the sweep's tasks and
/// Slurm's commands. Nothing runs in the child between fork and exec but what posix_spawn does, so
/// starting a program from a threaded process (the window, a training run) is safe.

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace dstudio {

/// How a child's file descriptors and signals are set up.
struct SpawnOptions {
  /// Look the program up on PATH (as a shell would) rather than take it as a path.
  bool search_path = false;
  /// Standard input from /dev/null (a child never reads the terminal).
  bool stdin_from_null = true;
  /// Standard output and error: a descriptor of the parent's, or -1 to inherit them.
  int stdout_fd = -1;
  int stderr_fd = -1;
  /// Standard error to /dev/null (what a crashing library prints is not for the user).
  bool stderr_to_null = false;
  /// More descriptors handed over: (parent's descriptor, number in the child).
  std::vector<std::pair<int, int>> pass_fds;
  /// Every signal at its default disposition and none blocked in the child, whatever the parent
  /// ignores (a shell's background job ignores SIGINT, which the child would inherit).
  bool default_signals = false;
};

/// Starts `program` with `argv` (argv[0] included); returns its process id. Throws Error naming
/// the program when it cannot be started (not found, not executable, out of processes).
pid_t spawn_program(const std::string& program, const std::vector<std::string>& argv,
                    const SpawnOptions& options = {});

/// Waits for `pid` (through interruptions by signals) and returns its exit status, or 128 plus the
/// signal that ended it, as shells report it.
int wait_for_exit(pid_t pid);

/// What a program printed (standard output and error together) and how it ended.
struct ProgramOutput {
  int code = 0;      ///< exit status (wait_for_exit); 127 when it could not be started
  std::string text;  ///< what it printed; why it could not start when code is 127
};

/// Runs `argv` (argv[0] searched on PATH) with no input, collects what it prints and waits for it.
ProgramOutput run_program(const std::vector<std::string>& argv);

}  // namespace dstudio
