// The shared arithmetic helpers of the plugin rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "bench/generator/generator.hpp"
#include "plugins/plugin_api.hpp"

namespace bulkscore {
namespace {

// div_trunc must equal Go's (and C++'s) integer division everywhere; it takes
// a float64 shortcut for non-negative operands below 2^53.
TEST(DivTrunc, EqualsIntegerDivisionNearMultiplesAndLimits) {
  const int64_t big = (int64_t(1) << 53) - 1;
  const int64_t cases[][2] = {{0, 1},
                              {99, 100},
                              {100, 100},
                              {101, 100},
                              {big, 1},
                              {big, 3},
                              {big - 1, big},
                              {big, big},
                              {big + 1, 7},
                              {-7, 2},
                              {-1, 3},
                              {5, 1},
                              {3400000000000, 34359738368},
                              {std::numeric_limits<int64_t>::max(), 10},
                              {std::numeric_limits<int64_t>::min(), 10}};
  for (const auto& c : cases) EXPECT_EQ(div_trunc(c[0], c[1]), c[0] / c[1]) << c[0] << " / " << c[1];
  SplitMix64 rng(2024);
  for (int i = 0; i < 2000000; ++i) {
    const int64_t b = static_cast<int64_t>(rng.next() >> (11 + rng.next() % 52)) + 1;
    int64_t a = static_cast<int64_t>(rng.next() >> (11 + rng.next() % 52));
    // Near multiples of b (b < 2^50 keeps the product inside int64).
    if (i % 2 && b < (int64_t(1) << 50))
      a = std::max<int64_t>(0, b * static_cast<int64_t>(rng.next() % 4096) - static_cast<int64_t>(rng.next() % 2));
    ASSERT_EQ(div_trunc(a, b), a / b) << a << " / " << b;
  }
}

TEST(NormalizeScore, DefaultAndReverseAsUpstream) {
  // DefaultNormalizeScore: 100*s/max, reverse 100 - that; max 0 leaves 0 / gives 100.
  EXPECT_EQ(normalize_score(NormalizeKind::Default, 3, NormStats{0, 7}), 42);
  EXPECT_EQ(normalize_score(NormalizeKind::Default, 0, NormStats{0, 0}), 0);
  EXPECT_EQ(normalize_score(NormalizeKind::DefaultReverse, 1, NormStats{0, 2}), 50);
  EXPECT_EQ(normalize_score(NormalizeKind::DefaultReverse, 0, NormStats{0, 0}), 100);
  EXPECT_EQ(normalize_score(NormalizeKind::None, 37, NormStats{0, 99}), 37);
}

}  // namespace
}  // namespace bulkscore
