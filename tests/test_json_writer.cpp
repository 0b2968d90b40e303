#include "host/io/json_writer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "host/common.hpp"

namespace bulkscore {
namespace {

std::string number(double v) {
  std::string out;
  JsonWriter::append_number(out, v);
  return out;
}

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

TEST(JsonWriter, IndentsEachElementOnItsOwnLineLikeUpstreamResultsFiles) {
  std::string out;
  JsonWriter w(out, 2);
  w.begin_object().field("version", "v1").key("items").begin_array();
  w.begin_object().field("n", 1.5).key("empty").begin_object().end_object().key("list").begin_array().end_array();
  w.end_object().value(uint64_t(7)).end_array().field("ok", false).end_object();
  EXPECT_EQ(out,
            "{\n"
            "  \"version\": \"v1\",\n"
            "  \"items\": [\n"
            "    {\n"
            "      \"n\": 1.5,\n"
            "      \"empty\": {},\n"
            "      \"list\": []\n"
            "    },\n"
            "    7\n"
            "  ],\n"
            "  \"ok\": false\n"
            "}");
}

TEST(JsonWriter, DoublesAreShortestRoundTripInGosLayout) {
  EXPECT_EQ(number(0), "0");
  EXPECT_EQ(number(-0.0), "-0");
  EXPECT_EQ(number(1), "1");
  EXPECT_EQ(number(-2.5), "-2.5");
  EXPECT_EQ(number(0.1), "0.1");  // not 0.10000000000000001
  EXPECT_EQ(number(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(number(1234567.125), "1234567.125");
  EXPECT_EQ(number(1e20), "100000000000000000000");
  // Exponent form below 1e-6 and from 1e21 on, as Go's encoding/json.
  EXPECT_EQ(number(1e21), "1e+21");
  EXPECT_EQ(number(1.5e300), "1.5e+300");
  EXPECT_EQ(number(0.000001), "0.000001");
  EXPECT_EQ(number(1e-7), "1e-7");
  EXPECT_EQ(number(-1.25e-10), "-1.25e-10");
  EXPECT_EQ(number(5e-324), "5e-324");
  EXPECT_EQ(number(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
}

TEST(JsonWriter, EveryDoubleReadsBackExactly) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 20000; ++i) {
    double v;
    const uint64_t bits = rng();
    std::memcpy(&v, &bits, sizeof v);
    if (!std::isfinite(v)) continue;
    const std::string text = number(v);
    EXPECT_EQ(std::strtod(text.c_str(), nullptr), v) << text;
  }
}

TEST(JsonWriter, NanAndInfinityAreErrorsNotNumbers) {
  std::string out;
  JsonWriter w(out);
  w.begin_array();
  EXPECT_THROW(w.value(std::numeric_limits<double>::quiet_NaN()), Error);
  EXPECT_THROW(w.value(std::numeric_limits<double>::infinity()), Error);
  EXPECT_THROW(w.value(-std::numeric_limits<double>::infinity()), Error);
}

}  // namespace
}  // namespace bulkscore
