// Valid UTF-8 from untrusted bytes. See text.h.

#include "dstudio/common/text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>

namespace dstudio {

std::string fixed_number(double v, int decimals) {
  if (!std::isfinite(v)) return std::string(kMissingNumber);
  char text[400];  // 309 digits of the largest double, the point and up to 40 decimals
  const auto r = std::to_chars(text, text + sizeof text, v, std::chars_format::fixed,
                               std::clamp(decimals, 0, 40));
  return r.ec == std::errc() ? std::string(text, r.ptr) : std::string(kMissingNumber);
}

std::string exact_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char text[32];
  const auto r = std::to_chars(text, text + sizeof text, v);
  return std::string(text, r.ptr);
}

std::string general_number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

namespace {

void escape(std::string& out, unsigned char byte) {
  static const char* digits = "0123456789abcdef";
  out += "\\x";
  out += digits[byte >> 4];
  out += digits[byte & 0xf];
}

// The length of the well-formed UTF-8 sequence starting at text[i], or 0 (RFC 3629, table 3-7 of
// the Unicode standard: no overlong forms, no surrogates, nothing past U+10FFFF).
std::size_t sequence_length(std::string_view text, std::size_t i) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = at(i);
  if (b0 < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;
  if (b0 >= 0xc2 && b0 <= 0xdf)
    n = 2;
  else if (b0 >= 0xe0 && b0 <= 0xef) {
    n = 3;
    if (b0 == 0xe0) lo = 0xa0;
    if (b0 == 0xed) hi = 0x9f;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    n = 4;
    if (b0 == 0xf0) lo = 0x90;
    if (b0 == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  if (at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (at(i + k) < 0x80 || at(i + k) > 0xbf) return 0;
  return n;
}

std::string sanitised(std::string_view text, bool controls) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    const std::size_t n = sequence_length(text, i);
    if (n == 0 || (controls && (b < 0x20 || b == 0x7f))) {
      escape(out, b);
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace

std::string valid_utf8(std::string_view text) {
  return sanitised(text, false);
}

std::string printable_name(std::string_view name) {
  return sanitised(name, true);
}

}  // namespace dstudio
