#pragma once
/// \file
/// Files written whole or not at all: the content goes to a temporary file beside the target, is
/// flushed to the disk (fsync), renamed over the target, and the folder is flushed so the rename
/// itself survives a power loss, as databases do. A failure (a full disk, a throw while writing,
/// a crash) leaves the previous file as it was and no temporary behind.

#include <filesystem>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

namespace dstudio {

/// Calls `write` with a temporary path in `path`'s folder, then renames it to `path`. Throws
/// Error naming `path` when the rename fails; rethrows what `write` throws. Either way the
/// temporary is removed.
void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(const std::filesystem::path& temp)>& write);

/// `bytes` as the whole content of `path`, atomically and durably. Throws Error naming `path` and
/// the system's reason ("No space left on device") on failure.
void write_bytes_atomically(const std::filesystem::path& path, std::string_view bytes);

/// Removes the temporaries a killed writer of `path` left beside it (its process no longer runs).
void remove_stale_temporaries(const std::filesystem::path& path);

/// Flushes a file (or a folder's entries) to the disk. Throws Error naming it on failure.
void sync_to_disk(const std::filesystem::path& path);

/// `text` as the whole content of `path`, atomically. Throws Error naming `path` on failure.
void write_text_atomically(const std::filesystem::path& path, std::string_view text);

/// Several files written together or not at all (a figure, its CSV and its recipe): each is
/// written under a temporary name beside its target (add()), and commit() renames them all once
/// every one is there and every target can take it (none is a folder, each folder is writable).
/// Destroyed without a commit, or when commit() throws, it removes its temporaries and every target
/// is as it was.
class AtomicFileGroup {
 public:
  AtomicFileGroup() = default;
  ~AtomicFileGroup();
  AtomicFileGroup(const AtomicFileGroup&) = delete;
  AtomicFileGroup& operator=(const AtomicFileGroup&) = delete;

  /// The temporary path to write `target`'s content to. Throws UsageError when `target` is
  /// already in the group.
  std::filesystem::path add(const std::filesystem::path& target);
  /// Flushes every temporary and renames it over its target, after checking that every one was
  /// written and every target can be replaced; returns the targets in the order added. Throws
  /// Error naming the first file that cannot be written: a check that fails replaces none (a
  /// rename the system refuses after them names those already replaced).
  std::vector<std::filesystem::path> commit();

 private:
  std::vector<std::pair<std::filesystem::path, std::filesystem::path>> files_;  // temp, target
  bool committed_ = false;
};

}  // namespace dstudio
