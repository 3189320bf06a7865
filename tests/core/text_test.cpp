// Valid UTF-8 from untrusted bytes: valid text passes unchanged, every other byte becomes \xNN.

#include "dstudio/common/text.h"

#include <gtest/gtest.h>

namespace dstudio {
namespace {

TEST(ValidUtf8, WellFormedTextIsUnchanged) {
  for (const std::string text : {"", "timeouts", "line\nnext\ttab", "caf\xc3\xa9", "\xe2\x82\xac 5", "\xf0\x9d\x84\x9e",
                                 "\xef\xbf\xbd", "\xf4\x8f\xbf\xbf", "\xed\x9f\xbf"})
    EXPECT_EQ(valid_utf8(text), text);
}

TEST(ValidUtf8, EachByteOutsideWellFormedSequencesIsEscaped) {
  const std::pair<std::string, std::string> cases[] = {
      {"ti\xea" "eouts", "ti\\xeaeouts"},                 // a lead byte without its continuation
      {"a\x80" "b", "a\\x80b"},                           // a stray continuation byte
      {"\xc0\x80", "\\xc0\\x80"},                         // an overlong NUL
      {"\xe0\x80\xaf", "\\xe0\\x80\\xaf"},                // an overlong '/'
      {"\xed\xa0\x80", "\\xed\\xa0\\x80"},                // a UTF-16 surrogate
      {"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},       // past U+10FFFF
      {"\xff\xfe", "\\xff\\xfe"},                         // never valid
      {"ok\xe2\x82", "ok\\xe2\\x82"},                     // cut at the end
      {"\xe2\x82\xac\xe2", "\xe2\x82\xac\\xe2"},          // a whole sequence, then a cut one
  };
  for (const auto& [in, out] : cases) EXPECT_EQ(valid_utf8(in), out);
}

TEST(PrintableName, ControlCharactersAreEscapedToo) {
  EXPECT_EQ(printable_name("in\x7f" "os"), "in\\x7fos");
  EXPECT_EQ(printable_name(std::string("a\nb\0c", 5)), "a\\x0ab\\x00c");
  EXPECT_EQ(printable_name("caf\xc3\xa9\xff"), "caf\xc3\xa9\\xff");
  EXPECT_EQ(valid_utf8("a\nb"), "a\nb");
}

}  // namespace
}  // namespace dstudio
