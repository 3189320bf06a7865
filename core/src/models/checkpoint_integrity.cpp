// Sealed checkpoints. See checkpoint_integrity.h.

#include "dstudio/models/checkpoint_integrity.h"

#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "../common/zip_archive.h"
#include "dstudio/common/read_file.h"
#include "dstudio/models/checkpoint_info.h"

namespace dstudio::models {
namespace {

// The archive comment: this tag, a space, and the digest of every byte before the comment (the
// end-of-directory record included, so the comment's length is covered too).
constexpr std::string_view kTag = "dstudio-xxh3-128";
constexpr std::size_t kSealLength = kTag.size() + 1 + 32;
constexpr std::size_t kEndOfDirectory = 22;

std::string digest_of(std::string_view bytes) {
  const XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
  char text[33];
  std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return text;
}

bool is_end_of_directory(std::string_view bytes, std::size_t at) {
  return at + kEndOfDirectory <= bytes.size() &&
         bytes.substr(at, 4) == std::string_view("PK\x05\x06", 4);
}

std::uint64_t comment_length_at(std::string_view bytes, std::size_t eocd) {
  return static_cast<unsigned char>(bytes[eocd + 20]) |
         (static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[eocd + 21])) << 8);
}

}  // namespace

void seal_checkpoint(std::string& archive) {
  if (archive.size() < kEndOfDirectory ||
      !is_end_of_directory(archive, archive.size() - kEndOfDirectory) ||
      comment_length_at(archive, archive.size() - kEndOfDirectory) != 0)
    throw CheckpointError("a checkpoint being written is not a zip archive without a comment");
  const std::size_t eocd = archive.size() - kEndOfDirectory;
  archive[eocd + 20] = static_cast<char>(kSealLength & 0xFF);
  archive[eocd + 21] = static_cast<char>(kSealLength >> 8);
  const std::string digest = digest_of(archive);
  archive += kTag;
  archive += ' ';
  archive += digest;
}

CheckpointIntegrity verify_checkpoint_bytes(std::string_view bytes, const std::string& where) {
  CheckpointIntegrity out;
  out.bytes = bytes.size();
  if (bytes.size() < 4 || bytes.substr(0, 2) != "PK")
    throw CheckpointError(where + ": not a checkpoint (not a zip archive)");
  // Sealed: the comment is the seal. Unsealed (LibTorch's plain output): the file ends with the
  // end-of-directory record and no comment. Anything else is a seal or a record end that changed.
  const bool sealed =
      bytes.size() >= kEndOfDirectory + kSealLength &&
      is_end_of_directory(bytes, bytes.size() - kSealLength - kEndOfDirectory) &&
      comment_length_at(bytes, bytes.size() - kSealLength - kEndOfDirectory) == kSealLength &&
      bytes.substr(bytes.size() - kSealLength, kTag.size()) == kTag &&
      bytes[bytes.size() - 33] == ' ';
  const bool plain = !sealed && bytes.size() >= kEndOfDirectory &&
                     is_end_of_directory(bytes, bytes.size() - kEndOfDirectory) &&
                     comment_length_at(bytes, bytes.size() - kEndOfDirectory) == 0;
  std::string damage;
  if (sealed) {
    const std::string_view stored = bytes.substr(bytes.size() - 32);
    out.digest = digest_of(bytes.substr(0, bytes.size() - kSealLength));
    // Digits compared exactly: the stored text must be the lower-case digest itself.
    if (stored != out.digest) damage = "its bytes do not match the digest it was sealed with";
  } else if (!plain) {
    damage =
        "it is truncated, or its end (the zip directory's end or the studio's seal) is damaged";
  }
  try {
    const zip::Archive archive(where, bytes);
    archive.check_all();
    out.records = archive.records().size();
  } catch (const zip::ZipError& e) {
    // The zip's own checks name the place when they can.
    throw CheckpointError(std::string(e.what()) + (damage.empty() ? "" : "; " + damage));
  }
  if (!damage.empty())
    throw CheckpointError(
        where + ": is damaged: " + damage +
        " (every record's CRC-32 matches, so the change is in the zip's headers or the seal)");
  out.sealed = sealed;
  return out;
}

std::string read_verified_checkpoint(const std::filesystem::path& path,
                                     CheckpointIntegrity* integrity) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw CheckpointError(path.string() + ": is a folder, not a checkpoint");
  std::string bytes;
  try {
    bytes = read_regular_file(path, kMaxCheckpointBytes);
  } catch (const Error& e) {
    throw CheckpointError(e.what());
  }
  const auto found = verify_checkpoint_bytes(bytes, path.string());
  if (integrity) *integrity = found;
  return bytes;
}

CheckpointIntegrity verify_checkpoint_file(const std::filesystem::path& path) {
  CheckpointIntegrity found;
  (void)read_verified_checkpoint(path, &found);
  return found;
}

}  // namespace dstudio::models
