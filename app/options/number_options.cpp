// Numeric options checked as text. See number_options.h.

#include "number_options.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "dstudio/common/text.h"

namespace dstudio::cli {
namespace {

std::string number_text(double v) {
  return v == std::numeric_limits<double>::max() ? "inf" : exact_number(v);
}

}  // namespace

CLI::Validator whole_number(std::int64_t lo, std::int64_t hi) {
  const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        std::int64_t v = 0;
        const char* end = text.data() + text.size();
        const auto [at, ec] = std::from_chars(text.data(), end, v);
        if (text.empty() || ec != std::errc() || at != end || v < lo || v > hi)
          return "must be a whole number in " + range + ", not '" + text + "'";
        return {};
      },
      "INT in " + range);
}

CLI::Validator seed_number() {
  return whole_number(0, std::numeric_limits<std::int64_t>::max()).description("SEED >= 0");
}

CLI::Validator real_number(double lo, double hi, bool open_low) {
  const std::string range =
      std::string(open_low ? "(" : "[") + number_text(lo) + ", " + number_text(hi) + "]";
  return CLI::Validator(
      [lo, hi, open_low, range](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = text.empty() ? 0.0 : std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || v < lo ||
            v > hi || (open_low && v == lo))
          return "must be a finite number in " + range + ", not '" + text + "'";
        return {};
      },
      "NUMBER in " + range);
}

}  // namespace dstudio::cli
