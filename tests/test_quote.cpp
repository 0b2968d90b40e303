// Quoting input in messages (host/input/quote.hpp): whatever a message
// echoes of its input can neither flood a line nor reach the terminal as a
// control sequence.
#include "host/input/quote.hpp"

#include <gtest/gtest.h>

#include <string>

namespace bulkscore {
namespace {

TEST(QuoteForMessage, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(quote_for_message("plain-name_1.2/x"), "\"plain-name_1.2/x\"");
  EXPECT_EQ(quote_for_message("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(quote_for_message("\x1b[2J\n\t\r\x7f"), "\"\\x1b[2J\\n\\t\\r\\x7f\"");
  EXPECT_EQ(quote_for_message(std::string("a\0b", 3)), "\"a\\x00b\"");
  EXPECT_EQ(quote_for_message(""), "\"\"");
}

TEST(QuoteForMessage, KeepsUtf8TextButEscapesC1BidiControlsAndBrokenBytes) {
  EXPECT_EQ(quote_for_message("z\xc3\xa9ro \xe2\x82\xac"), "\"z\xc3\xa9ro \xe2\x82\xac\"");  // "zéro €"
  // U+009B is an 8-bit CSI; U+202E reverses the text after it; U+2028
  // breaks the line in some viewers.
  EXPECT_EQ(quote_for_message("\xc2\x9b"
                              "2J"),
            "\"\\u009b2J\"");
  EXPECT_EQ(quote_for_message("ab\xe2\x80\xae"
                              "cd"),
            "\"ab\\u202ecd\"");
  EXPECT_EQ(quote_for_message("\xe2\x80\xa8"), "\"\\u2028\"");
  // A lone continuation byte, a cut sequence, an overlong '/', a surrogate.
  EXPECT_EQ(quote_for_message("\x80"), "\"\\x80\"");
  EXPECT_EQ(quote_for_message("\xe2\x82"), "\"\\xe2\\x82\"");
  EXPECT_EQ(quote_for_message("\xc0\xaf"), "\"\\xc0\\xaf\"");
  EXPECT_EQ(quote_for_message("\xed\xa0\x80"), "\"\\xed\\xa0\\x80\"");
}

TEST(QuoteForMessage, ShortensWithoutCuttingACharacterInTwo) {
  const std::string big(1 << 20, 'x');
  const std::string q = quote_for_message(big);
  EXPECT_EQ(q, "\"" + std::string(80, 'x') + "\"... (1048576 bytes)");
  // The 80-byte cut falls inside the 2-byte "é": it is left out whole.
  const std::string text = std::string(79, 'a') + "\xc3\xa9" + "b";
  EXPECT_EQ(quote_for_message(text), "\"" + std::string(79, 'a') + "\"... (82 bytes)");
  EXPECT_EQ(quote_for_message("abcdef", 3), "\"abc\"... (6 bytes)");
}

TEST(QuoteForMessage, PathKeysAreBareWhenTheyReadAsNamesElseQuoted) {
  std::string p = "metadata.labels";
  append_path_key(p, "topology.kubernetes.io/zone");
  EXPECT_EQ(p, "metadata.labels.topology.kubernetes.io/zone");
  p = "metadata.labels";
  append_path_key(p, "a b\x1b");
  EXPECT_EQ(p, "metadata.labels[\"a b\\x1b\"]");
  p = "x";
  append_path_key(p, "");
  EXPECT_EQ(p, "x[\"\"]");
  p.clear();
  append_path_key(p, "spec");
  EXPECT_EQ(p, "spec");
  p = "x";
  append_path_key(p, std::string(81, 'k'));
  EXPECT_EQ(p, "x[\"" + std::string(80, 'k') + "\"... (81 bytes)]");
  EXPECT_EQ(name_for_message("SchedulingBasic/5000Nodes"), "SchedulingBasic/5000Nodes");
  EXPECT_EQ(name_for_message("two words"), "\"two words\"");
}

TEST(EscapeForTerminal, EscapesControlsButKeepsLinesTabsAndQuotedText) {
  EXPECT_EQ(escape_for_terminal("pods.json: pod \"a\\x1b\": bad\nnext\tline"),
            "pods.json: pod \"a\\x1b\": bad\nnext\tline");
  EXPECT_EQ(escape_for_terminal("raw \x1b[31mred\x07 \xc2\x9b \xff"), "raw \\x1b[31mred\\x07 \\u009b \\xff");
}

}  // namespace
}  // namespace bulkscore
