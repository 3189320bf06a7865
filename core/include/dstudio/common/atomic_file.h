#pragma once
/// \file
/// Files written whole or not at all: the content goes to a temporary file beside the target, is
/// flushed to the disk (fsync), renamed over the target, and the folder is flushed so the rename
/// itself survives a power loss, as databases do. A failure (a full disk, a throw while writing,
/// a crash) leaves the previous file as it was and no temporary behind.

#include <filesystem>
#include <functional>
#include <string_view>

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

}  // namespace dstudio
