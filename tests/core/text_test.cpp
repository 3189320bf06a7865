// Texts: valid UTF-8 from untrusted bytes (valid text passes unchanged, every other byte becomes
// \xNN); the number formatters against printf and strtod; the exit codes of errors.

#include "dstudio/common/text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>

#include "dstudio/common/error.h"
#include "dstudio/common/exit_code.h"
#include "dstudio/common/progress.h"

namespace dstudio {
namespace {

TEST(ValidUtf8, WellFormedTextIsUnchanged) {
  for (const std::string text :
       {"", "timeouts", "line\nnext\ttab", "caf\xc3\xa9", "\xe2\x82\xac 5", "\xf0\x9d\x84\x9e",
        "\xef\xbf\xbd", "\xf4\x8f\xbf\xbf", "\xed\x9f\xbf"})
    EXPECT_EQ(valid_utf8(text), text);
}

TEST(ValidUtf8, EachByteOutsideWellFormedSequencesIsEscaped) {
  const std::pair<std::string, std::string> cases[] = {
      {"ti\xea"
       "eouts",
       "ti\\xeaeouts"},  // a lead byte without its continuation
      {"a\x80"
       "b",
       "a\\x80b"},                                   // a stray continuation byte
      {"\xc0\x80", "\\xc0\\x80"},                    // an overlong NUL
      {"\xe0\x80\xaf", "\\xe0\\x80\\xaf"},           // an overlong '/'
      {"\xed\xa0\x80", "\\xed\\xa0\\x80"},           // a UTF-16 surrogate
      {"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},  // past U+10FFFF
      {"\xff\xfe", "\\xff\\xfe"},                    // never valid
      {"ok\xe2\x82", "ok\\xe2\\x82"},                // cut at the end
      {"\xe2\x82\xac\xe2", "\xe2\x82\xac\\xe2"},     // a whole sequence, then a cut one
  };
  for (const auto& [in, out] : cases) EXPECT_EQ(valid_utf8(in), out);
}

TEST(PrintableName, ControlCharactersAreEscapedToo) {
  EXPECT_EQ(printable_name("in\x7f"
                           "os"),
            "in\\x7fos");
  EXPECT_EQ(printable_name(std::string("a\nb\0c", 5)), "a\\x0ab\\x00c");
  EXPECT_EQ(printable_name("caf\xc3\xa9\xff"), "caf\xc3\xa9\\xff");
  EXPECT_EQ(valid_utf8("a\nb"), "a\nb");
}

}  // namespace
}  // namespace dstudio

namespace dstudio {
namespace {

TEST(NumberText, FixedIsPrintfsFixedAndOneDashWhenMissing) {
  for (double v : {0.0, -0.04, 1.25, 2.675, 3600.0, -1234.5678, 1e15, 123456789.987654321}) {
    for (int d : {0, 1, 2, 4}) {
      char expected[128];
      std::snprintf(expected, sizeof expected, "%.*f", d, v);
      EXPECT_EQ(fixed_number(v, d), expected) << v << " " << d;
    }
  }
  EXPECT_EQ(fixed_number(1.7976931348623157e308, 1).size(),
            311u);  // 309 digits, the point, one decimal
  for (double v : {std::nan(""), std::numeric_limits<double>::infinity(),
                   -std::numeric_limits<double>::infinity()})
    EXPECT_EQ(fixed_number(v, 2), kMissingNumber);
  EXPECT_EQ(kMissingNumber, "\xe2\x80\x94");  // U+2014, the dash every view shows
}

TEST(NumberText, ExactReadsBackAsTheSameDoubleInTheShortestForm) {
  EXPECT_EQ(exact_number(0.1), "0.1");
  EXPECT_EQ(exact_number(3600.0), "3600");
  EXPECT_EQ(exact_number(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(exact_number(std::nan("")), "nan");
  std::mt19937_64 random(7);
  for (int i = 0; i < 10000; ++i) {
    double v;
    const std::uint64_t bits = random();
    std::memcpy(&v, &bits, sizeof v);
    if (!std::isfinite(v)) continue;
    const std::string text = exact_number(v);
    EXPECT_EQ(std::strtod(text.c_str(), nullptr), v) << text;
    char longest[64];
    std::snprintf(longest, sizeof longest, "%.17g", v);
    EXPECT_LE(text.size(), std::string(longest).size()) << text;
  }
  EXPECT_EQ(general_number(1e-4), "0.0001");
  EXPECT_EQ(general_number(3.14159265), "3.14159");
}

}  // namespace
}  // namespace dstudio

namespace dstudio {
namespace {

// One mapping for all three programs: what a script reads from $?.
TEST(ExitCode, UsageIsTwoCancelledIs130AnyOtherErrorIsOne) {
  EXPECT_EQ(exit_code_of(UsageError("unknown name")), 2);
  EXPECT_EQ(exit_code_of(Cancelled()), 130);
  EXPECT_EQ(exit_code_of(Error("bad file")), 1);
  EXPECT_EQ(exit_code_of(std::runtime_error("anything")), 1);
  testing::internal::CaptureStderr();
  EXPECT_EQ(run_reporting("prog", []() -> int { throw UsageError("--x takes a number"); }), 2);
  EXPECT_EQ(run_reporting("prog", []() -> int { throw Cancelled(); }), 130);
  EXPECT_EQ(run_reporting("prog", [] { return 7; }), 7);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "prog: error: --x takes a number\nprog: cancelled\n");
}

}  // namespace
}  // namespace dstudio
