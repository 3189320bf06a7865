#pragma once
/// \file
/// Numeric command-line options of the studio's programs (dstudio, decision-viewer), checked as
/// text before any conversion, so nothing wraps, saturates or defaults silently: "-1" for a count,
/// "1e30" or "" for a step count, "nan" or "inf" for a speed are all refused with exit code 2 and
/// a message naming the option and its range. (CLI11's own Range lets NaN through: every
/// comparison with it is false.)

#include <CLI/CLI.hpp>
#include <cstdint>

namespace dstudio::cli {

/// A whole number in [lo, hi], written in decimal digits.
CLI::Validator whole_number(std::int64_t lo, std::int64_t hi);
/// A seed: a whole number in [0, 2^63 - 1] (models::kMaxSeed).
CLI::Validator seed_number();
/// A finite number in [lo, hi]; `open_low` excludes lo itself (e.g. a positive rate: (0, 1]).
CLI::Validator real_number(double lo, double hi, bool open_low = false);

}  // namespace dstudio::cli
