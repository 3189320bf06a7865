#pragma once
/// \file
/// Base64 (RFC 4648, the standard alphabet with '=' padding), how the policy files carry their
/// weights: a JSON number per weight would be several times larger, and bytes keep every value
/// exact.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dstudio {

/// `bytes` as base64 text, padded to a multiple of four characters.
std::string base64_encode(std::span<const std::uint8_t> bytes);

/// The bytes of padded base64 `text`. Throws dstudio::Error saying what is wrong: a length that is
/// not a multiple of four, a character outside the alphabet, padding before the end.
std::vector<std::uint8_t> base64_decode(std::string_view text);

}  // namespace dstudio
