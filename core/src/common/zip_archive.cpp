// Zip archives of stored records. See zip_archive.h.

#include "zip_archive.h"

#include <zlib.h>

#include <array>
#include <limits>
#include <optional>
#include <string>

namespace dstudio::zip {
namespace {
constexpr std::uint64_t kMaxInflated = std::uint64_t{64} << 20;
}  // namespace

std::uint32_t crc32(const unsigned char* data, std::size_t n) {
  static const auto table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < n; ++i) c = table[(c ^ data[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

Archive::Archive(std::string where, std::string_view bytes)
    : where_(std::move(where)), bytes_(bytes) {
  read_directory();
}

std::uint64_t Archive::le(std::uint64_t at, int n) const {
  if (at > bytes_.size() || static_cast<std::uint64_t>(n) > bytes_.size() - at)
    fail("is truncated (a zip record runs past the end of the file)");
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i)
    v = (v << 8) | static_cast<unsigned char>(bytes_[at + static_cast<std::uint64_t>(i)]);
  return v;
}

void Archive::read_directory() {
  // The end-of-central-directory record is the last 22 bytes, before an optional comment.
  if (bytes_.size() < 22) fail("is truncated (too short for a zip archive)");
  std::optional<std::uint64_t> eocd;
  const std::uint64_t lowest = bytes_.size() > 22 + 65535 ? bytes_.size() - 22 - 65535 : 0;
  for (std::uint64_t at = bytes_.size() - 22 + 1; at-- > lowest;)
    if (le(at, 4) == 0x06054b50) {
      eocd = at;
      break;
    }
  if (!eocd) fail("is truncated or not a zip archive (no end of central directory)");
  eocd_ = *eocd;
  comment_length_ = le(*eocd + 20, 2);
  if (*eocd + 22 + comment_length_ != bytes_.size())
    fail("is damaged (its end-of-directory record does not end the file)");
  std::uint64_t count = le(*eocd + 10, 2), dir = le(*eocd + 16, 4);
  if (dir == 0xFFFFFFFFu || count == 0xFFFF) {
    // Zip64: the locator sits right before the record and points at the 64-bit record.
    if (*eocd < 20 || le(*eocd - 20, 4) != 0x07064b50)
      fail("has a zip64 directory without its locator");
    const std::uint64_t z = le(*eocd - 20 + 8, 8);
    if (le(z, 4) != 0x06064b50) fail("has a broken zip64 directory record");
    count = le(z + 32, 8);
    dir = le(z + 48, 8);
  }
  if (count > bytes_.size() / 46)
    fail("has a broken central directory (more records than could fit)");
  std::uint64_t at = dir;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (le(at, 4) != 0x02014b50)
      fail("has a broken central directory (entry " + std::to_string(i) + ")");
    const auto method = le(at + 10, 2);
    const auto crc = static_cast<std::uint32_t>(le(at + 16, 4));
    std::uint64_t size = le(at + 20, 4), usize = le(at + 24, 4), local = le(at + 42, 4);
    const auto name_len = le(at + 28, 2), extra_len = le(at + 30, 2), comment_len = le(at + 32, 2);
    if (at + 46 + name_len > bytes_.size()) fail("is truncated (in its central directory)");
    std::string name(bytes_.data() + at + 46, name_len);
    // LibTorch's zip reader (miniz) takes an entry whose MS-DOS attributes carry the folder bit,
    // or whose name ends in '/', for a folder and "extracts" it by writing nothing: the tensor
    // would keep whatever its memory held. No writer of these archives makes folders.
    if ((le(at + 38, 4) & 0x10) != 0 || (!name.empty() && name.back() == '/'))
      fail("entry " + name + " is damaged (its directory entry marks it as a folder)");
    // Zip64 extra field: the 64-bit values of the fields saturated at 0xFFFFFFFF, in order.
    for (std::uint64_t x = at + 46 + name_len; x + 4 <= at + 46 + name_len + extra_len;) {
      const auto id = le(x, 2), len = le(x + 2, 2);
      if (id == 0x0001) {
        std::uint64_t y = x + 4;
        if (usize == 0xFFFFFFFFu) usize = le(y, 8), y += 8;
        if (size == 0xFFFFFFFFu) size = le(y, 8), y += 8;
        if (local == 0xFFFFFFFFu) local = le(y, 8);
      }
      x += 4 + len;
    }
    if (le(local, 4) != 0x04034b50) fail("has a broken local header for " + name);
    const std::uint64_t data = local + 30 + le(local + 26, 2) + le(local + 28, 2);
    if (data > bytes_.size() || size > bytes_.size() - data)
      fail("is truncated (entry " + name + " runs past the end of the file)");
    if (method == 0 && usize != size)
      fail("has a broken central directory (stored entry " + name + " with two sizes)");
    if (method != 0 && method != 8)
      fail("entry " + name + " uses a compression other than deflate (method " +
           std::to_string(method) + ")");
    // Deflate shrinks by at most about 1032:1; a larger claim is a damaged size, not a record.
    if (method == 8 && usize > 1032 * size + 1024)
      fail("entry " + name + " is damaged (its sizes are impossible)");
    // LibTorch deflates only its small code records; a larger claim is not inflated into memory.
    if (method == 8 && usize > kMaxInflated)
      fail("entry " + name + " claims " + std::to_string(usize) +
           " bytes once inflated, more than a checkpoint's code holds");
    if (!records_.emplace(name, Record{local, data, size, usize, crc, method}).second)
      fail("lists the entry " + name + " twice");
    at += 46 + name_len + extra_len + comment_len;
  }
}

std::string Archive::inflate(const std::string& name, const Record& r) const {
  std::string out(r.unpacked_size, '\0');
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK)
    fail("entry " + name + " cannot be inflated (zlib could not start)");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes_.data() + r.offset));
  z.avail_in = static_cast<uInt>(std::min<std::uint64_t>(r.size, std::numeric_limits<uInt>::max()));
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out =
      static_cast<uInt>(std::min<std::uint64_t>(out.size(), std::numeric_limits<uInt>::max()));
  const int result = ::inflate(&z, Z_FINISH);
  const auto produced = z.total_out;
  inflateEnd(&z);
  if (result != Z_STREAM_END || produced != r.unpacked_size)
    fail("entry " + name + " is damaged (it does not inflate to its size)");
  return out;
}

std::string_view Archive::read(const std::string& name) const {
  auto it = records_.find(name);
  if (it == records_.end()) fail("has no entry " + name);
  const auto& r = it->second;
  if (r.method != 0)
    fail("entry " + name + " is compressed; torch.save writes stored entries only");
  // The local header repeats the name; a flip there would otherwise go unseen.
  const auto name_len = le(r.header + 26, 2);
  if (name_len != name.size() || bytes_.substr(r.header + 30, name_len) != name)
    fail("entry " + name + " is damaged (its local header names another entry)");
  const auto* p = reinterpret_cast<const unsigned char*>(bytes_.data() + r.offset);
  if (crc32(p, r.size) != r.crc)
    fail("entry " + name + " is damaged (its CRC-32 does not match its bytes)");
  return bytes_.substr(r.offset, r.size);
}

void Archive::check_all() const {
  for (const auto& [name, record] : records_) {
    if (record.method == 0) {
      (void)read(name);
      continue;
    }
    const auto name_len = le(record.header + 26, 2);
    if (name_len != name.size() || bytes_.substr(record.header + 30, name_len) != name)
      fail("entry " + name + " is damaged (its local header names another entry)");
    const std::string data = inflate(name, record);
    if (crc32(reinterpret_cast<const unsigned char*>(data.data()), data.size()) != record.crc)
      fail("entry " + name + " is damaged (its CRC-32 does not match its bytes)");
  }
}

}  // namespace dstudio::zip
