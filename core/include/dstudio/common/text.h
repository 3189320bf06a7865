#pragma once
/// \file
/// Texts the studio shows and writes.
///
/// Numbers: one formatter of each kind, so that a missing value reads the same in every table and
/// a number given back as an option reads back exactly.
///
/// Untrusted texts: names of HDF5 links and metadata strings may hold any bytes. Before they reach
/// a message, a JSON document, a Qt label or a terminal they are made valid UTF-8 here: every byte
/// that is not part of a well-formed UTF-8 sequence is written as `\xNN`, so that nothing is lost
/// and nothing downstream throws on it.

#include <string>
#include <string_view>

namespace dstudio {

/// What every table, readout and report shows for a number that is missing (NaN, not measured).
inline constexpr std::string_view kMissingNumber = "\u2014";  // an em dash

/// `v` with `decimals` digits after the point (printf's "%.*f"); kMissingNumber when not finite.
std::string fixed_number(double v, int decimals);
/// The shortest text that reads back as exactly `v` ("0.1", "1e-05"); "inf", "-inf", "nan".
std::string exact_number(double v);
/// `v` to six significant digits (printf's "%g"): for messages.
std::string general_number(double v);

/// `text` with each byte outside well-formed UTF-8 (stray continuation bytes, truncated or overlong
/// sequences, surrogates, code points past U+10FFFF) written as `\xNN`; valid text is unchanged.
std::string valid_utf8(std::string_view text);

/// valid_utf8, and control characters (below 0x20, and 0x7f) written as `\xNN` too: for a name
/// shown on one line.
std::string printable_name(std::string_view name);

}  // namespace dstudio
