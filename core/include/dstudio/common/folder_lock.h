#pragma once
/// \file
/// One writer per folder: a training run's folder or a sweep's cell is claimed by the process
/// that writes there, for as long as it writes. The claim is an exclusive `flock` on a file in the
/// folder (`.dstudio-lock`), so the kernel releases it when the process ends, however it ends: a
/// process killed with SIGKILL leaves nothing stale. A second process that asks is refused at once
/// with a FolderBusy naming the folder and the process that holds it.
///
/// Claims are per process and counted: a sweep task that claims its cell and then starts a run in
/// it (which claims the same folder) holds one lock. The lock file itself stays behind; it holds
/// the holder's process id, host and command line, for the message.

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>

#include "dstudio/common/error.h"

namespace dstudio {

/// The file in a folder that carries its lock.
inline constexpr const char* kFolderLockFile = ".dstudio-lock";

/// Another process writes in the folder.
class FolderBusy : public Error {
 public:
  FolderBusy(const std::string& message, pid_t holder) : Error(message), holder_(holder) {}
  /// The holder's process id (0 when it could not be read).
  [[nodiscard]] pid_t holder() const { return holder_; }

 private:
  pid_t holder_;
};

/// Who holds a folder's lock: "process 1234 on host (dstudio train ...)".
struct FolderHolder {
  pid_t pid = 0;
  std::string description;
};

/// An exclusive claim on a folder for this process, released on destruction.
class FolderLock {
 public:
  /// Creates `folder` if missing and claims it. Throws FolderBusy when another process holds it,
  /// Error when the lock file cannot be made (a read-only folder, a full disk).
  explicit FolderLock(const std::filesystem::path& folder);
  ~FolderLock();
  FolderLock(FolderLock&& other) noexcept;
  FolderLock& operator=(FolderLock&& other) noexcept;
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

  [[nodiscard]] const std::filesystem::path& folder() const { return folder_; }

 private:
  void release() noexcept;
  std::filesystem::path folder_;  // empty once moved from
};

/// The process holding `folder`'s lock, if another process holds it now. Never blocks; this
/// process's own claims are not reported.
std::optional<FolderHolder> folder_holder(const std::filesystem::path& folder);

}  // namespace dstudio
