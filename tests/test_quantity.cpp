// resource.Quantity parsing against values worked out from apimachinery's
// rules (quantity.go, suffix.go, scale_int.go).
#include "host/input/quantity.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "host/common.hpp"

namespace bulkscore {
namespace {

constexpr int kValue = 0;  // Value()
constexpr int kMilli = 3;  // MilliValue()

struct ScaledCase {
  const char* text;
  int scale;
  int64_t expected;
};

class QuantityValid : public ::testing::TestWithParam<ScaledCase> {};

TEST_P(QuantityValid, ParsesToExpectedScaledValue) {
  const ScaledCase& c = GetParam();
  EXPECT_EQ(parse_quantity_scaled(c.text, c.scale), c.expected) << c.text << " scale " << c.scale;
}

INSTANTIATE_TEST_SUITE_P(CpuMillis, QuantityValid,
                         ::testing::Values(ScaledCase{"100m", kMilli, 100}, ScaledCase{"0.1", kMilli, 100},
                                           ScaledCase{"1", kMilli, 1000}, ScaledCase{"2", kMilli, 2000},
                                           ScaledCase{"1.0001", kMilli, 1001},  // rounds up
                                           ScaledCase{"2500u", kMilli, 3},      // rounds up
                                           ScaledCase{"2000u", kMilli, 2},      // exact, no rounding
                                           ScaledCase{"1n", kMilli, 1}, ScaledCase{"0.5m", kMilli, 1},
                                           ScaledCase{"1k", kMilli, 1000000}, ScaledCase{"0", kMilli, 0},
                                           ScaledCase{"0m", kMilli, 0}, ScaledCase{"+1", kMilli, 1000},
                                           ScaledCase{"1.", kMilli, 1000}, ScaledCase{".5", kMilli, 500},
                                           ScaledCase{"1E-3", kMilli, 1}, ScaledCase{"1.5e-3", kMilli, 2}));

INSTANTIATE_TEST_SUITE_P(
    MemoryBytes, QuantityValid,
    ::testing::Values(ScaledCase{"1Gi", kValue, 1073741824}, ScaledCase{"500Mi", kValue, 524288000},
                      ScaledCase{"1e3", kValue, 1000}, ScaledCase{"1E3", kValue, 1000},
                      ScaledCase{"1e+3", kValue, 1000}, ScaledCase{"1.5Ki", kValue, 1536},
                      ScaledCase{"0.5", kValue, 1},  // rounds up
                      ScaledCase{"1m", kValue, 1},   // Value() rounds up
                      ScaledCase{"1Ki", kValue, 1024}, ScaledCase{"1Ti", kValue, 1099511627776},
                      ScaledCase{"1Pi", kValue, 1125899906842624}, ScaledCase{"1Ei", kValue, 1152921504606846976},
                      ScaledCase{"1k", kValue, 1000}, ScaledCase{"1M", kValue, 1000000},
                      ScaledCase{"1G", kValue, 1000000000}, ScaledCase{"1T", kValue, 1000000000000},
                      ScaledCase{"1P", kValue, 1000000000000000},
                      ScaledCase{"1E", kValue, 1000000000000000000},  // E alone is exa
                      ScaledCase{"1.5E-2", kValue, 1}, ScaledCase{"100.035k", kValue, 100035},
                      ScaledCase{"10.035M", kValue, 10035000}, ScaledCase{"0.05Gi", kValue, 53687092},
                      ScaledCase{"0.025Ti", kValue, 27487790695}, ScaledCase{"1.G", kValue, 1000000000},
                      ScaledCase{"007", kValue, 7}, ScaledCase{"110", kValue, 110}, ScaledCase{"-1", kValue, -1},
                      ScaledCase{"-1.5", kValue, -2}, ScaledCase{"1.7E18", kValue, 1700000000000000000}));

INSTANTIATE_TEST_SUITE_P(NanoPrecisionAndLimits, QuantityValid,
                         ::testing::Values(
                             // ParseQuantity keeps nano precision, rounding up: 3.001n is 4n.
                             ScaledCase{"3.001n", 9, 4}, ScaledCase{"0.00000000050", 9, 1},
                             ScaledCase{"0.00000012345", 9, 124}, ScaledCase{"0.000000000001Ki", 9, 2},
                             ScaledCase{"0.0000000000000000000000000000000000000000001", kValue, 1},
                             ScaledCase{"1e-2147483647", kMilli, 1}, ScaledCase{"0e2147483647", kValue, 0},
                             ScaledCase{"9223372036854775807", kValue, std::numeric_limits<int64_t>::max()},
                             ScaledCase{"9223372036854775807000m", kValue, std::numeric_limits<int64_t>::max()},
                             ScaledCase{"9223372036854775806001m", kValue, std::numeric_limits<int64_t>::max()},
                             ScaledCase{"9223372036854775807m", kMilli, std::numeric_limits<int64_t>::max()}));

TEST(QuantityLimits, EightExbibytesIsOneBeyondInt64) {
  // 8Ei = 2^63, one more than int64 max: upstream saturates, bulkscore refuses.
  EXPECT_THROW(parse_quantity_scaled("8Ei", kValue), InputError);
  EXPECT_EQ(parse_quantity_scaled("7Ei", kValue), 7 * 1152921504606846976LL);
}

TEST(QuantityLimits, ValuesBeyondInt64AreRefused) {
  for (const char* text : {"9223372036854775808", "9223372036854775807001m", "10E", "1e19",
                           "100000000000000000000000000000", "1e2147483647", "-9223372036854775808"}) {
    EXPECT_THROW(parse_quantity_scaled(text, kValue), InputError) << text;
  }
  // Fits as a Value() but not as a MilliValue().
  EXPECT_EQ(parse_quantity_scaled("9223372036854775", kMilli), 9223372036854775000);
  EXPECT_THROW(parse_quantity_scaled("9223372036854776", kMilli), InputError);
  EXPECT_THROW(parse_quantity_scaled("9Ei", kMilli), InputError);
}

TEST(QuantityLimits, ExponentPastInt32IsRefused) {
  EXPECT_THROW(parse_quantity_scaled("1e2147483648", kValue), InputError);
  EXPECT_THROW(parse_quantity_scaled("1e-2147483648", kValue), InputError);
  EXPECT_THROW(parse_quantity_scaled("1e4294967297", kValue), InputError);
}

class QuantityInvalid : public ::testing::TestWithParam<const char*> {};

TEST_P(QuantityInvalid, IsRefusedWithMessageQuotingTheText) {
  const std::string text = GetParam();
  try {
    parse_quantity_scaled(text, kValue);
    ADD_FAILURE() << "parsed: \"" << text << "\"";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad quantity \"" + text + "\""), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Malformed, QuantityInvalid,
                         ::testing::Values("", "1.2.3", "12x", "Mi", "1 Gi", " ", "1 m", "--1", "+-1", "-", "+", ".",
                                           "1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i",
                                           "-3.01e-", "1e", "1e+", "1ee3", "1e3.5", "1K", "1k3", "1Mi3", "1Gib", "1gi",
                                           "0x10", "1_000", "1,5",
                                           "\xe2\x88\x92"
                                           "1"));

// Quantity's JSON decoding trims surrounding white space (strings.TrimSpace)
// before parsing; inner spaces stay errors.
TEST(QuantitySyntax, SurroundingWhiteSpaceIsTrimmedAsTheApiServerDoes) {
  EXPECT_EQ(parse_quantity_scaled(" 100m ", kMilli), 100);
  EXPECT_EQ(parse_quantity_scaled("\t1Gi\n", kValue), 1073741824);
  EXPECT_THROW(parse_quantity_scaled("1 Gi", kValue), InputError);
}

// Millions of digits parse in linear time (a quadratic parser takes minutes
// here, past the test's timeout) and still round exactly.
TEST(QuantitySyntax, LongQuantitiesRoundExactly) {
  const std::string tiny = "0." + std::string(2000000, '0') + "1";
  EXPECT_EQ(parse_quantity_scaled(tiny, kMilli), 1);  // rounded up to a nano, then to a milli
  EXPECT_EQ(parse_quantity_scaled(tiny, kValue), 1);
  const std::string zero = "0." + std::string(2000000, '0');
  EXPECT_EQ(parse_quantity_scaled(zero, kMilli), 0);
  // 1.5 followed by two million digits, times 10^-2000000 ... rounds up once.
  const std::string long_mantissa = "1" + std::string(2000000, '7') + "e-2000000";
  EXPECT_EQ(parse_quantity_scaled(long_mantissa, kMilli), 1778);  // 1.777... -> 1777.77... m -> 1778
  const std::string big = std::string(2000000, '9');
  EXPECT_THROW(parse_quantity_scaled(big, kValue), InputError);
  const std::string binary = "0." + std::string(100000, '0') + "5Ki";
  EXPECT_EQ(parse_quantity_scaled(binary, kValue), 1);
}

// Messages quote the text shortened and with control characters escaped.
TEST(QuantitySyntax, MessagesQuoteTheTextSafely) {
  try {
    parse_quantity_scaled("1\x1b[2J\n" + std::string(5000, 'x'), kValue);
    FAIL() << "parsed";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("\\x1b[2J\\n"), std::string::npos) << m;
    EXPECT_EQ(m.find('\x1b'), std::string::npos) << m;
    EXPECT_NE(m.find("(5006 bytes)"), std::string::npos) << m;
    EXPECT_LT(m.size(), 200u) << m;
  }
}

TEST(ParseResourceQuantity, CpuUsesMilliValueEverythingElseValue) {
  EXPECT_EQ(parse_resource_quantity("cpu", "1500m"), 1500);
  EXPECT_EQ(parse_resource_quantity("cpu", "2"), 2000);
  EXPECT_EQ(parse_resource_quantity("memory", "1500m"), 2);
  EXPECT_EQ(parse_resource_quantity("memory", "2"), 2);
  EXPECT_EQ(parse_resource_quantity("nvidia.com/gpu", "4"), 4);
  EXPECT_EQ(parse_resource_quantity("hugepages-2Mi", "1Gi"), 1073741824);
  // Only the exact name "cpu" is in millicores.
  EXPECT_EQ(parse_resource_quantity("CPU", "1"), 1);
}

}  // namespace
}  // namespace bulkscore
