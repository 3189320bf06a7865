#include "dstudio/common/base64.h"

#include "dstudio/common/error.h"

namespace dstudio {
namespace {

constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

}  // namespace

std::string base64_encode(std::span<const std::uint8_t> bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::uint32_t b0 = bytes[i], b1 = i + 1 < bytes.size() ? bytes[i + 1] : 0,
                        b2 = i + 2 < bytes.size() ? bytes[i + 2] : 0;
    const std::uint32_t v = (b0 << 16) | (b1 << 8) | b2;
    out += kBase64[(v >> 18) & 63];
    out += kBase64[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kBase64[(v >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kBase64[v & 63] : '=';
  }
  return out;
}

std::vector<std::uint8_t> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) throw Error("base64 text whose length is not a multiple of 4");
  std::vector<std::uint8_t> out;
  out.reserve(text.size() / 4 * 3);
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    throw Error(std::string("a character that is not base64: '") + c + "'");
  };
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const int pad = (text[i + 3] == '=') + (text[i + 2] == '=');
    if (pad && i + 4 != text.size()) throw Error("base64 padding before the end");
    std::uint32_t v = static_cast<std::uint32_t>(value(text[i])) << 18 |
                      static_cast<std::uint32_t>(value(text[i + 1])) << 12;
    if (pad < 2) v |= static_cast<std::uint32_t>(value(text[i + 2])) << 6;
    if (pad < 1) v |= static_cast<std::uint32_t>(value(text[i + 3]));
    out.push_back(static_cast<std::uint8_t>(v >> 16));
    if (pad < 2) out.push_back(static_cast<std::uint8_t>(v >> 8));
    if (pad < 1) out.push_back(static_cast<std::uint8_t>(v));
  }
  return out;
}

}  // namespace dstudio
