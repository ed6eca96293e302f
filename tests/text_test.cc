// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// text.h: JSON values, and the one escaping of user-chosen text for the
// terminal (the tools, the examples and the library's messages share it).
#include "dataecho/text.h"

#include <cmath>
#include <limits>
#include <string>

#include "dataecho/storage/object_store.h"
#include "gtest/gtest.h"

namespace dataecho {
namespace {

TEST(JsonQuoteTest, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(JsonQuote(""), "\"\"");
  EXPECT_EQ(JsonQuote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(JsonQuote("l1\nl2\tx"), "\"l1\\nl2\\tx\"");
  EXPECT_EQ(JsonQuote(std::string("\x1b[2J\r\0", 6)), "\"\\u001b[2J\\u000d\\u0000\"");
  EXPECT_EQ(JsonQuote("caf\xc3\xa9"), "\"caf\xc3\xa9\"");  // UTF-8 kept as it is
}

TEST(JsonNumberTest, IntegersWithoutFractionOthersWithSixDigitsNonFiniteAsNull) {
  EXPECT_EQ(JsonNumber(0), "0");
  EXPECT_EQ(JsonNumber(-3), "-3");
  EXPECT_EQ(JsonNumber(60000), "60000");
  EXPECT_EQ(JsonNumber(0.5), "0.5");
  EXPECT_EQ(JsonNumber(1.0 / 3), "0.333333");
  EXPECT_EQ(JsonNumber(1e15), "1e+15");
  EXPECT_EQ(JsonNumber(std::nan("")), "null");
  EXPECT_EQ(JsonNumber(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(JsonNumber(-std::numeric_limits<double>::infinity()), "null");
}

TEST(TerminalSafeTest, KeepsPrintableAsciiAndValidUtf8) {
  EXPECT_EQ(TerminalSafe(""), "");
  EXPECT_EQ(TerminalSafe("/data/train-00001.tfrecord?x=1&y=[2]"),
            "/data/train-00001.tfrecord?x=1&y=[2]");
  for (const char* s :
       {"caf\xc3\xa9", "\xe6\x97\xa5\xe6\x9c\xac", "\xf0\x9f\x98\x80", "\xc2\xa0"}) {
    EXPECT_EQ(TerminalSafe(s), s);
  }
}

TEST(TerminalSafeTest, EscapesControlCharactersAndInvalidUtf8) {
  EXPECT_EQ(TerminalSafe("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(TerminalSafe("line\r\nforged\t"), "line\\x0d\\x0aforged\\x09");
  EXPECT_EQ(TerminalSafe(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(TerminalSafe("\x7f"), "\\x7f");
  EXPECT_EQ(TerminalSafe("\xc2\x9b"
                         "31m"),
            "\\xc2\\x9b31m");  // C1 CSI, as UTF-8
  EXPECT_EQ(TerminalSafe("\x9b"
                         "31m"),
            "\\x9b31m");  // C1 CSI, a lone byte
  EXPECT_EQ(TerminalSafe("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(TerminalSafe("\xc3"), "\\xc3");                             // truncated sequence
  EXPECT_EQ(TerminalSafe("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(TerminalSafe("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a UTF-16 surrogate
  EXPECT_EQ(TerminalSafe("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
}

TEST(TerminalSafeTest, IsIdempotentAndWhatRedactUriEscapesWith) {
  const std::string hostile = "/d/\x1b]0;title\x07\xc2\x85x\xff";
  const std::string safe = TerminalSafe(hostile);
  EXPECT_EQ(safe, "/d/\\x1b]0;title\\x07\\xc2\\x85x\\xff");
  EXPECT_EQ(TerminalSafe(safe), safe);
  EXPECT_EQ(RedactUri(hostile), safe);
  EXPECT_EQ(RedactUri("s3://b/k\x9b"), "s3://b/k\\x9b");
}

}  // namespace
}  // namespace dataecho
