#include "host/io/json_writer.hpp"

#include <gtest/gtest.h>

namespace bulkscore {
namespace {

TEST(JsonWriter, EscapesQuotesBackslashesAndControlCharacters) {
  std::string out;
  JsonWriter::escape(out, std::string("a\"b\\c\nd\re\tf\x01g") + std::string(1, '\0') + "h");
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\nd\\re\\tf\\u0001g\\u0000h\"");
  out.clear();
  JsonWriter::escape(out, "plain ascii and UTF-8 \xc3\xa9");
  EXPECT_EQ(out, "\"plain ascii and UTF-8 \xc3\xa9\"");
  out.clear();
  JsonWriter::escape(out, "");
  EXPECT_EQ(out, "\"\"");
}

TEST(JsonWriter, NestsObjectsAndArraysWithCommas) {
  std::string out;
  JsonWriter w(out);
  w.begin_object().field("a", int64_t(1)).key("b").begin_array().value("x").null().value(true).end_array();
  w.field_null("c").key("d").begin_object().end_object().end_object();
  EXPECT_EQ(out, R"({"a":1,"b":["x",null,true],"c":null,"d":{}})");
}

}  // namespace
}  // namespace bulkscore
