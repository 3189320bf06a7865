#pragma once
/// \file
/// Reading a file the user named, whole, without trusting what it is: only a regular file is read
/// (a FIFO would block forever, /dev/zero never ends), and only up to a size given by the caller,
/// checked before a byte is read. Checkpoints and workspaces are read this way; datasets go
/// through the reader process (data/reader_process.h), which checks the same.

#include <cstdint>
#include <filesystem>
#include <string>

#include "dstudio/common/error.h"

namespace dstudio {

/// The whole content of `path`. Throws Error "PATH: ..." when it does not exist, is a folder, a
/// device, a FIFO or a socket, is larger than `max_bytes`, or cannot be read.
std::string read_regular_file(const std::filesystem::path& path, std::uint64_t max_bytes);

/// A size as people read it: "64 MiB", "1.5 GiB", "812 bytes".
std::string byte_size_text(std::uint64_t bytes);

}  // namespace dstudio
