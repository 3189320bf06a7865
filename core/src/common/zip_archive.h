#pragma once
// Reading the zip archives LibTorch and torch.save write: stored records (deflated ones for
// LibTorch's code files) listed in a central directory, zip64 where large. Every record can be
// checked against its CRC-32. Used by the torch.save reader and by checkpoint verification;
// internal to the core library.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "dstudio/common/error.h"

namespace dstudio::zip {

/// The archive is not a zip, is truncated, or a record is damaged. The message starts with the
/// file's name.
class ZipError : public Error {
 public:
  using Error::Error;
};

/// The CRC-32 of zip (and gzip, PNG): polynomial 0xEDB88320, reflected.
std::uint32_t crc32(const unsigned char* data, std::size_t n);

struct Record {
  std::uint64_t header = 0;            ///< offset of its local header
  std::uint64_t offset = 0, size = 0;  ///< of its data within the archive
  std::uint64_t unpacked_size = 0;     ///< after inflating (its size, stored)
  std::uint32_t crc = 0;               ///< of the unpacked bytes
  std::uint64_t method = 0;            ///< 0: stored, 8: deflate
};

/// A view of an archive's bytes (which must outlive it) and its directory.
class Archive {
 public:
  /// Reads the central directory; throws ZipError("<where>: ...") when it is broken or a record
  /// would reach past the end. `comment_length` receives the length of the archive comment.
  Archive(std::string where, std::string_view bytes);

  [[nodiscard]] const std::map<std::string, Record>& records() const { return records_; }
  /// Where the end-of-central-directory record starts, and the comment's length after it.
  [[nodiscard]] std::uint64_t end_of_directory() const { return eocd_; }
  [[nodiscard]] std::uint64_t comment_length() const { return comment_length_; }

  /// A record's data, checked against its CRC-32 and its local header. Throws ZipError naming it.
  [[nodiscard]] std::string_view read(const std::string& name) const;
  /// Reads every record, inflating deflated ones: throws ZipError naming the first damaged one.
  void check_all() const;

  [[noreturn]] void fail(const std::string& why) const { throw ZipError(where_ + ": " + why); }

 private:
  [[nodiscard]] std::uint64_t le(std::uint64_t at, int n) const;
  [[nodiscard]] std::string inflate(const std::string& name, const Record& r) const;
  void read_directory();

  std::string where_;
  std::string_view bytes_;
  std::map<std::string, Record> records_;
  std::uint64_t eocd_ = 0, comment_length_ = 0;
};

}  // namespace dstudio::zip
