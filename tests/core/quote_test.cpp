// quote_for_message (core/quote.hpp): user data in a message is one printable line of bounded
// length; every byte that could act on a terminal or cut the message is shown escaped.
#include <gtest/gtest.h>

#include <string>

#include "scalelab/core/error.hpp"
#include "scalelab/core/quote.hpp"

namespace scalelab {
namespace {

using namespace std::string_literals;

// True when every byte is printable ASCII or part of a multi-byte UTF-8 character.
bool printable_line(const std::string& s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return false;
  return true;
}

TEST(QuoteForMessage, PlainTextIsQuotedAsIs) {
  EXPECT_EQ(quote_for_message("cat"), "'cat'");
  EXPECT_EQ(quote_for_message(""), "''");
  EXPECT_EQ(quote_for_message("a b-c.d"), "'a b-c.d'");
}

TEST(QuoteForMessage, TerminalEscapeSequencesAreEscaped) {
  const std::string q = quote_for_message("red\x1b[31mword\x1b[0m\a");
  EXPECT_EQ(q, "'red\\x1b[31mword\\x1b[0m\\x07'");
  EXPECT_TRUE(printable_line(q));
  EXPECT_EQ(quote_for_message("\x7f"), "'\\x7f'");
}

TEST(QuoteForMessage, LineBreaksTabsAndQuotesAreEscaped) {
  EXPECT_EQ(quote_for_message("a\nb\rc\td"), "'a\\nb\\rc\\td'");
  EXPECT_EQ(quote_for_message("it's a \\ path"), "'it\\'s a \\\\ path'");
}

TEST(QuoteForMessage, NulIsVisibleAndDoesNotCutTheMessage) {
  const std::string q = quote_for_message("ab\0cd"s);
  EXPECT_EQ(q, "'ab\\0cd'");
  EXPECT_EQ(q.find('\0'), std::string::npos);
  // Through an Error, the part after the NUL still arrives.
  try {
    throw_error("word ", quote_for_message("x\0tail"s), " is bad");
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "word 'x\\0tail' is bad");
  }
}

TEST(QuoteForMessage, ValidUtf8IsKeptInvalidBytesAreEscaped) {
  EXPECT_EQ(quote_for_message("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "'caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80'");
  EXPECT_EQ(quote_for_message("a\xff" "b"), "'a\\xffb'");
  EXPECT_EQ(quote_for_message("\xc3"), "'\\xc3'");                       // truncated sequence
  EXPECT_EQ(quote_for_message("\xc0\xaf"), "'\\xc0\\xaf'");               // overlong '/'
  EXPECT_EQ(quote_for_message("\xed\xa0\x80"), "'\\xed\\xa0\\x80'");     // a UTF-16 surrogate
  EXPECT_EQ(quote_for_message("\xf4\x90\x80\x80"), "'\\xf4\\x90\\x80\\x80'");  // beyond U+10FFFF
  EXPECT_EQ(quote_for_message("\x80x"), "'\\x80x'");                      // lone continuation byte
}

TEST(QuoteForMessage, InvisibleAndReorderingCharactersAreEscaped) {
  EXPECT_EQ(quote_for_message("a\xe2\x80\xae" "b"), "'a\\u{202e}b'");  // right-to-left override
  EXPECT_EQ(quote_for_message("\xc2\x9b" "31m"), "'\\u{009b}31m'");    // C1 CSI
  EXPECT_EQ(quote_for_message("\xe2\x80\xa8"), "'\\u{2028}'");         // line separator
  EXPECT_EQ(quote_for_message("\xef\xbb\xbf"), "'\\u{feff}'");         // byte order mark
}

TEST(QuoteForMessage, LongDataIsCutWithItsLength) {
  const std::string field(9 * 1024 * 1024, 'x');  // 9 MB, as in a hostile predictions file
  const std::string q = quote_for_message(field);
  EXPECT_EQ(q, "'" + std::string(kQuotedMessageBytes, 'x') + "…' (9437184 bytes)");
  EXPECT_LT(q.size(), 200u);
  EXPECT_EQ(quote_for_message("abcdef", 3), "'abc…' (6 bytes)");
  EXPECT_EQ(quote_for_message("abc", 3), "'abc'");
  // The cut never splits a UTF-8 character: the last one is kept whole.
  EXPECT_EQ(quote_for_message("ab\xc3\xa9z", 3), "'ab\xc3\xa9…' (5 bytes)");
}

TEST(QuoteForMessage, EveryByteValueGivesOnePrintableLine) {
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  const std::string q = quote_for_message(all, all.size());
  EXPECT_TRUE(printable_line(q)) << q;
  EXPECT_EQ(q.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace scalelab
