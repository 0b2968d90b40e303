// The shared arithmetic helpers of the plugin rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "bench/generator/generator.hpp"
#include "plugins/evaluate.hpp"
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

// Where C++ is undefined, Go's int64 arithmetic on amd64: min int64 / -1
// wraps to min int64; sums and differences wrap; a float64 outside int64's
// range (or NaN) converts to min int64 (CVTTSD2SQ's "integer indefinite").
TEST(GoArithmetic, WrapsAndConvertsAsGoOnAmd64) {
  EXPECT_EQ(div_trunc(INT64_MIN, -1), INT64_MIN);
  EXPECT_EQ(div_trunc(INT64_MAX, -1), -INT64_MAX);
  EXPECT_EQ(go_add(INT64_MAX, 1), INT64_MIN);
  EXPECT_EQ(go_sub(INT64_MIN, 1), INT64_MAX);
  EXPECT_EQ(go_mul(INT64_MAX, 2), -2);
  EXPECT_EQ(go_float_to_int64(-0.9), 0);
  EXPECT_EQ(go_float_to_int64(99.99), 99);
  EXPECT_EQ(go_float_to_int64(-9223372036854775808.0), INT64_MIN);
  EXPECT_EQ(go_float_to_int64(9223372036854774784.0), 9223372036854774784);  // the largest double below 2^63
  EXPECT_EQ(go_float_to_int64(9223372036854775808.0), INT64_MIN);
  EXPECT_EQ(go_float_to_int64(-1e20), INT64_MIN);
  EXPECT_EQ(go_float_to_int64(1e300), INT64_MIN);
  EXPECT_EQ(go_float_to_int64(std::nan("")), INT64_MIN);
}

TEST(NormalizeScore, DefaultAndReverseAsUpstream) {
  // DefaultNormalizeScore: 100*s/max, reverse 100 - that; max 0 leaves 0 / gives 100.
  EXPECT_EQ(normalize_score(NormalizeKind::Default, 3, NormStats{0, 7}), 42);
  EXPECT_EQ(normalize_score(NormalizeKind::Default, 0, NormStats{0, 0}), 0);
  EXPECT_EQ(normalize_score(NormalizeKind::DefaultReverse, 1, NormStats{0, 2}), 50);
  EXPECT_EQ(normalize_score(NormalizeKind::DefaultReverse, 0, NormStats{0, 0}), 100);
  EXPECT_EQ(normalize_score(NormalizeKind::None, 37, NormStats{0, 99}), 37);
}

// Statistics over a list of raw scores, as every backend gathers them.
NormStats stats_of(std::initializer_list<int64_t> raws) {
  NormStats st = empty_norm_stats();
  for (int64_t r : raws) add_to_stats(st, r);
  return st;
}

// PodTopologySpread's NormalizeScore: 100*(max+min-s)/max over the nodes not
// ignored (min from +inf, max from 0), ignored nodes 0, max 0 gives 100.
TEST(NormalizeScore, SpreadAsUpstream) {
  const NormStats st = stats_of({kIgnoredScore, 0, 2, 4});
  EXPECT_EQ(st.min, 0);
  EXPECT_EQ(st.max, 4);
  EXPECT_EQ(normalize_score(NormalizeKind::Spread, 0, st), 100);
  EXPECT_EQ(normalize_score(NormalizeKind::Spread, 2, st), 50);
  EXPECT_EQ(normalize_score(NormalizeKind::Spread, 4, st), 0);
  EXPECT_EQ(normalize_score(NormalizeKind::Spread, kIgnoredScore, st), 0);
  // The minimum counts: 100*(5+3-s)/5.
  const NormStats st2 = stats_of({3, 5});
  EXPECT_EQ(normalize_score(NormalizeKind::Spread, 3, st2), 100);
  EXPECT_EQ(normalize_score(NormalizeKind::Spread, 5, st2), 60);
  EXPECT_EQ(normalize_score(NormalizeKind::Spread, 4, stats_of({3, 4, 7})), 85);  // 100*6/7 truncated
  // Every node scoring 0: max 0, all 100 (ignored ones still 0).
  EXPECT_EQ(normalize_score(NormalizeKind::Spread, 0, stats_of({0, 0, kIgnoredScore})), 100);
  // Every node ignored: the statistics stay empty, every score 0.
  const NormStats none = stats_of({kIgnoredScore, kIgnoredScore});
  EXPECT_EQ(none.min, INT64_MAX);
  EXPECT_EQ(normalize_score(NormalizeKind::Spread, kIgnoredScore, none), 0);
}

// InterPodAffinity's NormalizeScore: int64(100 * (float64(s-min)/float64(max-min))),
// raw scores possibly negative, max == min gives 0 everywhere.
TEST(NormalizeScore, MinMaxAsUpstream) {
  const NormStats st = stats_of({-5, 0, 5});
  EXPECT_EQ(normalize_score(NormalizeKind::MinMax, -5, st), 0);
  EXPECT_EQ(normalize_score(NormalizeKind::MinMax, 0, st), 50);
  EXPECT_EQ(normalize_score(NormalizeKind::MinMax, 5, st), 100);
  // Division before the product, in float64, as upstream: 29/100 is
  // 0.28999999999999998, times 100 truncates to 28 (an integer 100*29/100
  // would give 29).
  EXPECT_EQ(normalize_score(NormalizeKind::MinMax, 29, stats_of({0, 29, 100})), 28);
  EXPECT_EQ(normalize_score(NormalizeKind::MinMax, 1, stats_of({0, 1, 3})), 33);
  EXPECT_EQ(normalize_score(NormalizeKind::MinMax, 7, stats_of({7, 7})), 0);
  EXPECT_EQ(normalize_score(NormalizeKind::MinMax, -3, stats_of({-3, -3})), 0);
}

// Default kinds read a negative maximum as 0 (upstream's max starts at 0).
TEST(NormalizeScore, DefaultWithNegativeRawScores) {
  EXPECT_EQ(normalize_score(NormalizeKind::Default, -4, stats_of({-4, -2})), -4);
  EXPECT_EQ(normalize_score(NormalizeKind::DefaultReverse, -4, stats_of({-4, -2})), 100);
}

// The one total order: higher totals first whatever their sign, then the
// lower node (the random tie-break's draw among tied nodes is made after).
TEST(Selection, KeysOrderNegativeTotalsBelowPositiveOnes) {
  for (const TieBreak tie : {TieBreak::First, TieBreak::Random}) {
    PodQueryView q;
    q.tie_break = tie;
    q.tie_seed = 42;
    const int64_t totals[] = {INT32_MIN, -100000, -5, -1, 0, 1, 3, 700, INT32_MAX};
    for (size_t i = 0; i + 1 < std::size(totals); ++i)
      for (uint32_t a = 0; a < 4; ++a)
        for (uint32_t b = 0; b < 4; ++b)
          EXPECT_TRUE(ranks_before(selection_key(totals[i + 1], a, q), a, selection_key(totals[i], b, q), b))
              << totals[i + 1] << " vs " << totals[i];
  }
  PodQueryView first;
  first.tie_break = TieBreak::First;
  EXPECT_TRUE(ranks_before(selection_key(-7, 2, first), 2, selection_key(-7, 9, first), 9));
  EXPECT_TRUE(ranks_before(5, 1, 5, 2));  // equal keys: the lower node
  EXPECT_FALSE(ranks_before(5, 2, 5, 2));
}

}  // namespace
}  // namespace bulkscore
