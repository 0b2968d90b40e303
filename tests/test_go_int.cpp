// parse_go_int64: Go's strconv.ParseInt(s, 10, 64), edge cases.
#include "host/input/go_int.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

namespace bulkscore {
namespace {

std::optional<int64_t> parse(const std::string& s) {
  int64_t v = 42;
  if (!parse_go_int64(s, v)) {
    EXPECT_EQ(v, 42) << "output written on failure for \"" << s << "\"";
    return std::nullopt;
  }
  return v;
}

TEST(GoInt64, DigitsAndSigns) {
  EXPECT_EQ(parse("0"), 0);
  EXPECT_EQ(parse("7"), 7);
  EXPECT_EQ(parse("+7"), 7);
  EXPECT_EQ(parse("-7"), -7);
  EXPECT_EQ(parse("-0"), 0);
  EXPECT_EQ(parse("+0"), 0);
}

TEST(GoInt64, LeadingZerosAreDecimal) {
  EXPECT_EQ(parse("007"), 7);
  EXPECT_EQ(parse("010"), 10);  // not octal
  EXPECT_EQ(parse("-00000000000000000000000000001"), -1);
}

TEST(GoInt64, Int64Bounds) {
  EXPECT_EQ(parse("9223372036854775807"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(parse("+9223372036854775807"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(parse("-9223372036854775808"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(parse("9223372036854775808"), std::nullopt);   // 2^63
  EXPECT_EQ(parse("-9223372036854775809"), std::nullopt);  // -2^63 - 1
  EXPECT_EQ(parse("18446744073709551616"), std::nullopt);
  EXPECT_EQ(parse("99999999999999999999999999"), std::nullopt);
}

TEST(GoInt64, RejectsEverythingElse) {
  for (const char* s : {"",      "+",    "-",   "+-1", "-+1", "--1", "++1", " 1", "1 ", "\t1", "1\n",
                        "1_000", "0x10", "0b1", "0o7", "1e3", "1.0", ".5",  "1a", "a1", "١",   "+ 1"}) {
    EXPECT_EQ(parse(s), std::nullopt) << "\"" << s << "\"";
  }
}

TEST(GoInt64, EmbeddedNulIsNotTheEnd) {
  EXPECT_EQ(parse(std::string("12\0"
                              "3",
                              4)),
            std::nullopt);
}

}  // namespace
}  // namespace bulkscore
