#pragma once
/// \file
/// Checkpoints that are refused when damaged. A checkpoint is a zip archive (LibTorch's format);
/// the studio seals each one it writes with a digest of all its bytes (XXH3-128, in the archive's
/// comment), so a single flipped bit or a truncated copy anywhere in the file is found before the
/// weights are used. Files without a seal (written before the seal existed, or by other programs)
/// are checked record by record against the zip's CRC-32s. Needs no LibTorch.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace dstudio::models {

/// The largest checkpoint (or torch.save file) read: a limit checked before reading, so a device
/// or a damaged size is refused rather than filling the memory. The studio's own are megabytes.
inline constexpr std::uint64_t kMaxCheckpointBytes = std::uint64_t{4} << 30;

/// What verification found in a checkpoint that passed it.
struct CheckpointIntegrity {
  bool sealed = false;        ///< the studio's digest is present and matches
  std::string digest;         ///< the digest, 32 hexadecimal digits (sealed only)
  std::uint64_t bytes = 0;    ///< the file's size
  std::uint64_t records = 0;  ///< zip records, each checked against its CRC-32
};

/// Appends the seal to an archive held in memory (LibTorch's output: a zip without a comment).
/// Throws CheckpointError if `archive` is not such a zip.
void seal_checkpoint(std::string& archive);

/// Checks a checkpoint's bytes: the seal when there is one, then every record's CRC-32. Throws
/// CheckpointError starting with `where` and naming what is damaged (the damaged record when the
/// zip's own checks find it).
CheckpointIntegrity verify_checkpoint_bytes(std::string_view bytes, const std::string& where);

/// Reads and verifies a file. Throws CheckpointError naming it (missing, unreadable, damaged).
CheckpointIntegrity verify_checkpoint_file(const std::filesystem::path& path);

/// Reads a file whole and verifies it, for loading from the returned bytes. Throws CheckpointError
/// (also for a FIFO, a device or a file over kMaxCheckpointBytes: read_regular_file).
std::string read_verified_checkpoint(const std::filesystem::path& path,
                                     CheckpointIntegrity* integrity = nullptr);

}  // namespace dstudio::models
