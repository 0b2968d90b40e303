// NodeResourcesBalancedAllocation (PreScore, Score; weight 1 by default), the
// v1.35 formula: score = int64((1 - std) * 100) where std is the (population)
// standard deviation of min(requested/allocatable, 1) over the resources,
// |f1 - f2| / 2 for two. Actual requests, no non-zero defaults. Float64 in the
// same operation order as upstream; builds must not use fast-math or FMA
// contraction so both backends produce the same bits.
#pragma once

#include <cmath>

#include "plugins/resource_allocation.hpp"

namespace bulkscore {

namespace plugins {

struct NodeResourcesBalancedAllocation {
  static constexpr const char* kName = "NodeResourcesBalancedAllocation";
  static constexpr bool kHasFilter = false;
  static constexpr bool kHasScore = true;
  static constexpr NormalizeKind kNormalize = NormalizeKind::None;
  static constexpr bool kPreScoreFeasible = false;
  static constexpr uint32_t kMaxResources = 16;

  struct State {
    Span<ScoredResource> scored;
  };

  static PrepareResult prepare(const PrepareContext& ctx, State& st, Arena& arena);

  static BULKSCORE_HD int64_t score(const SnapshotView& s, const State& st, const uint8_t* arena, uint32_t node) {
    const ScoredResource* res = st.scored.data(arena);
    double fractions[kMaxResources];
    uint32_t n = 0;
    double total = 0.0;
    for (uint32_t i = 0; i < st.scored.count && n < kMaxResources; ++i) {
      int64_t req, alloc;
      resource_pair(s, res[i], node, req, alloc);
      if (alloc == 0) continue;
      double f = static_cast<double>(req) / static_cast<double>(alloc);
      if (f > 1) f = 1;
      total += f;
      fractions[n++] = f;
    }
    double std_dev = 0.0;
    if (n == 2) {
      std_dev = fabs((fractions[0] - fractions[1]) / 2);
    } else if (n > 2) {
      const double mean = total / static_cast<double>(n);
      double sum = 0.0;
      for (uint32_t i = 0; i < n; ++i) {
        const double d = fractions[i] - mean;
        const double sq = d * d;
        sum = sum + sq;
      }
      std_dev = sqrt(sum / static_cast<double>(n));
    }
    return go_float_to_int64((1 - std_dev) * 100.0);
  }

  // Host: score() of `count` nodes (two resources as a vectorized column
  // loop, plugins/resource_scores_nodes.cpp; other counts node by node).
  static void score_nodes(const SnapshotView& s, const State& st, const uint8_t* arena, const uint32_t* nodes,
                          uint32_t count, int64_t* out);
  // Host: this pod's part in the resource allocation scorer's shared kernel
  // (resource_allocation_scores), where its column loop applies.
  static bool shared_score(const State& st, const uint8_t* arena, SharedScorePart& part);

  static void reasons(uint64_t, const Snapshot&, const State&, const uint8_t*, uint32_t, std::vector<std::string>&) {}
};
}  // namespace plugins
}  // namespace bulkscore
