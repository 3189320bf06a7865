#pragma once
/// \file
/// Texts read from files the studio does not trust (names of HDF5 links, metadata strings) may hold
/// any bytes. Before they reach a message, a JSON document, a Qt label or a terminal they are made
/// valid UTF-8 here: every byte that is not part of a well-formed UTF-8 sequence is written as
/// `\xNN`, so that nothing is lost and nothing downstream throws on it.

#include <string>
#include <string_view>

namespace dstudio {

/// `text` with each byte outside well-formed UTF-8 (stray continuation bytes, truncated or overlong
/// sequences, surrogates, code points past U+10FFFF) written as `\xNN`; valid text is unchanged.
std::string valid_utf8(std::string_view text);

/// valid_utf8, and control characters (below 0x20, and 0x7f) written as `\xNN` too: for a name
/// shown on one line.
std::string printable_name(std::string_view name);

}  // namespace dstudio
