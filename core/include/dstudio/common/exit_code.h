#pragma once
/// \file
/// The exit codes of every program of the studio (dstudio, decision-studio, decision-viewer), and
/// the one mapping from an error to its code, so that a script reads them alike from all three.

#include <exception>
#include <functional>
#include <string_view>

namespace dstudio {

/// Exit codes scripts can rely on.
enum ExitCode : int {
  kExitOk = 0,
  kExitFailed = 1,       ///< the work could not be done: bad input data, an I/O error
  kExitUsage = 2,        ///< the command line itself is wrong (a UsageError)
  kExitCancelled = 130,  ///< interrupted (128 + SIGINT), as shells report it
};

/// The exit code for `e`: kExitUsage for a UsageError, kExitCancelled for Cancelled, else
/// kExitFailed.
[[nodiscard]] ExitCode exit_code_of(const std::exception& e);

/// Runs `body` and returns what it returns; when it throws, prints "PROGRAM: error: WHAT" (or
/// "PROGRAM: cancelled") on stderr and returns exit_code_of the exception.
int run_reporting(std::string_view program, const std::function<int()>& body);

}  // namespace dstudio
