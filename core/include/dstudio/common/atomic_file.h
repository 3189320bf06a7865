#pragma once
/// \file
/// Files written whole or not at all: the content goes to a temporary file beside the target,
/// which is renamed over it once complete. A failure (a full disk, a throw while writing, a
/// crash) leaves the previous file as it was and no temporary behind.

#include <filesystem>
#include <functional>
#include <string_view>

namespace dstudio {

/// Calls `write` with a temporary path in `path`'s folder, then renames it to `path`. Throws
/// Error naming `path` when the rename fails; rethrows what `write` throws. Either way the
/// temporary is removed.
void write_file_atomically(const std::filesystem::path& path, const std::function<void(const std::filesystem::path& temp)>& write);

/// `text` as the whole content of `path`, atomically. Throws Error naming `path` on failure.
void write_text_atomically(const std::filesystem::path& path, std::string_view text);

}  // namespace dstudio
