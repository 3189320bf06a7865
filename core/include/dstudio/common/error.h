#pragma once
/// \file
/// The studio's errors. A problem with what the studio was given (a file, a dataset, a checkpoint,
/// a run folder) is a `dstudio::Error` whose message says what and where: the command line exits
/// with 1 on it and the window shows it. A request that cannot mean anything (an unknown name, a
/// value out of its range, an option that does not fit the data) is a `UsageError`: exit code 2.
/// More specific errors (DatasetError, CheckpointError, EnvError, ...) derive from `Error`.

#include <stdexcept>

namespace dstudio {

/// Something the studio was given is wrong or unreadable; the message names it.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The request itself is wrong: an unknown name, a value out of range, an option that cannot apply.
class UsageError : public Error {
 public:
  using Error::Error;
};

}  // namespace dstudio
