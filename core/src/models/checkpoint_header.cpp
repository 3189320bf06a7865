// A checkpoint's description read without its weights. See checkpoint_info.h.
//
// LibTorch writes an archive's objects to one small pickle record (<name>/data.pkl) and each
// tensor to a record of its own; the description is a string in that pickle. So the zip's
// directory, found at the file's end, says where the pickle lies, and only the directory and the
// pickle are read: a few kilobytes of a checkpoint of megabytes.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "../common/zip_archive.h"
#include "dstudio/models/checkpoint_info.h"

namespace dstudio::models {
namespace {

constexpr std::uint32_t kEndOfDirectory = 0x06054b50, kZip64End = 0x06064b50,
                        kZip64Locator = 0x07064b50, kDirectoryEntry = 0x02014b50,
                        kLocalHeader = 0x04034b50;
constexpr std::size_t kEndLength = 22, kMaxComment = 0xFFFF;
// The directory and the pickle of a checkpoint are kilobytes; more means another kind of file.
constexpr std::uint64_t kMaxDirectory = std::uint64_t{16} << 20,
                        kMaxPickle = std::uint64_t{16} << 20;
constexpr std::string_view kDescriptionStart = "{\"format\":\"dstudio-checkpoint-";

std::uint64_t le(std::string_view b, std::size_t at, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i)
    v = (v << 8) | static_cast<unsigned char>(b[at + static_cast<std::size_t>(i)]);
  return v;
}

// An open file read at offsets; closes itself.
class File {
 public:
  explicit File(const std::filesystem::path& path) : fd_(::open(path.c_str(), O_RDONLY)) {}
  ~File() {
    if (fd_ >= 0) ::close(fd_);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  [[nodiscard]] bool regular(std::uint64_t& size) const {
    struct stat st {};
    if (fd_ < 0 || ::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) return false;
    size = static_cast<std::uint64_t>(st.st_size);
    return true;
  }
  // `n` bytes at `offset`, or nothing when the file ends first.
  [[nodiscard]] std::optional<std::string> read(std::uint64_t offset, std::uint64_t n) const {
    std::string out(n, '\0');
    std::uint64_t done = 0;
    while (done < n) {
      const auto got = ::pread(fd_, out.data() + done, n - done, static_cast<off_t>(offset + done));
      if (got <= 0) return std::nullopt;
      done += static_cast<std::uint64_t>(got);
    }
    return out;
  }

 private:
  int fd_;
};

struct Place {
  std::uint64_t offset = 0, size = 0;
};

// Where the central directory lies, from the end-of-directory record (zip64's where LibTorch used
// it). Nothing when the file's end is not a zip's.
std::optional<Place> central_directory(const File& f, std::uint64_t size,
                                       std::uint64_t tail_length) {
  const auto tail = f.read(size - tail_length, tail_length);
  if (!tail || tail->size() < kEndLength) return std::nullopt;
  for (std::size_t at = tail->size() - kEndLength + 1; at-- > 0;) {
    if (le(*tail, at, 4) != kEndOfDirectory ||
        at + kEndLength + le(*tail, at + 20, 2) != tail->size())
      continue;
    Place cd{le(*tail, at + 16, 4), le(*tail, at + 12, 4)};
    if (cd.offset == 0xFFFFFFFF || cd.size == 0xFFFFFFFF) {
      if (at < 20 || le(*tail, at - 20, 4) != kZip64Locator) return std::nullopt;
      const auto end64 = f.read(le(*tail, at - 20 + 8, 8), 56);
      if (!end64 || le(*end64, 0, 4) != kZip64End) return std::nullopt;
      cd = {le(*end64, 48, 8), le(*end64, 40, 8)};
    }
    if (cd.size > kMaxDirectory || cd.offset > size || cd.size > size - cd.offset)
      return std::nullopt;
    return cd;
  }
  return std::nullopt;
}

std::optional<Place> central_directory(const File& f, std::uint64_t size) {
  // The studio's comment (the seal) is short: a small tail first, the longest a comment allows
  // after that.
  for (const std::uint64_t longest : {std::uint64_t{1024}, kEndLength + kMaxComment + 20}) {
    if (const auto found = central_directory(f, size, std::min(size, longest))) return found;
    if (longest >= size) break;
  }
  return std::nullopt;
}

// The pickle record's data, stored (not deflated) and checked against its CRC-32.
std::optional<std::string> pickle_record(const File& f, std::uint64_t size, const Place& cd) {
  const auto dir = f.read(cd.offset, cd.size);
  if (!dir) return std::nullopt;
  for (std::size_t at = 0; at + 46 <= dir->size();) {
    if (le(*dir, at, 4) != kDirectoryEntry) return std::nullopt;
    const auto name_length = le(*dir, at + 28, 2), extra_length = le(*dir, at + 30, 2),
               comment_length = le(*dir, at + 32, 2);
    if (at + 46 + name_length + extra_length > dir->size()) return std::nullopt;
    const std::string_view name(dir->data() + at + 46, name_length);
    const auto slash = name.find('/');
    if (slash != std::string_view::npos && name.substr(slash) == "/data.pkl") {
      std::uint64_t packed = le(*dir, at + 20, 4), header = le(*dir, at + 42, 4);
      const auto crc = static_cast<std::uint32_t>(le(*dir, at + 16, 4));
      // Zip64's extra field holds the sizes and the offset that did not fit, in that order.
      const std::string_view extra(dir->data() + at + 46 + name_length, extra_length);
      for (std::size_t e = 0; e + 4 <= extra.size();) {
        const auto id = le(extra, e, 2), length = le(extra, e + 2, 2);
        if (id == 1) {
          std::size_t k = e + 4;
          auto next = [&](std::uint64_t& field) {
            if (field == 0xFFFFFFFF && k + 8 <= e + 4 + length) field = le(extra, k, 8), k += 8;
          };
          std::uint64_t unpacked = le(*dir, at + 24, 4);
          next(unpacked);
          next(packed);
          next(header);
        }
        e += 4 + length;
      }
      if (le(*dir, at + 10, 2) != 0 || packed > kMaxPickle || header > size) return std::nullopt;
      const auto local = f.read(header, 30);
      if (!local || le(*local, 0, 4) != kLocalHeader) return std::nullopt;
      const std::uint64_t data = header + 30 + le(*local, 26, 2) + le(*local, 28, 2);
      if (data > size || packed > size - data) return std::nullopt;
      auto bytes = f.read(data, packed);
      if (!bytes ||
          zip::crc32(reinterpret_cast<const unsigned char*>(bytes->data()), bytes->size()) != crc)
        return std::nullopt;
      return bytes;
    }
    at += 46 + name_length + extra_length + comment_length;
  }
  return std::nullopt;
}

// The description: a pickled string (BINUNICODE: 'X', its length in four bytes, its UTF-8).
std::optional<std::string> description_in(std::string_view pickle) {
  for (auto at = pickle.find(kDescriptionStart); at != std::string_view::npos;
       at = pickle.find(kDescriptionStart, at + 1)) {
    if (at < 5 || pickle[at - 5] != 'X') continue;
    const auto length = le(pickle, at - 4, 4);
    if (length <= pickle.size() - at) return std::string(pickle.substr(at, length));
  }
  return std::nullopt;
}

}  // namespace

std::optional<CheckpointInfo> read_checkpoint_header(const std::filesystem::path& path) {
  const File f(path);
  std::uint64_t size = 0;
  if (!f.regular(size))
    throw CheckpointError(path.string() +
                          ": cannot be read as a file (missing, a folder or a device)");
  const auto cd = central_directory(f, size);
  if (!cd) return std::nullopt;
  const auto pickle = pickle_record(f, size, *cd);
  if (!pickle) return std::nullopt;
  const auto description = description_in(*pickle);
  if (!description) return std::nullopt;
  return checkpoint_info_from_description(path.string(), *description);
}

}  // namespace dstudio::models
