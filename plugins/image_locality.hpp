// ImageLocality (Score; weight 1 by default): favours nodes that already have
// the pod's images, each image counted as size x (nodes having it / all nodes).
#pragma once

#include "host/snapshot/snapshot.hpp"
#include "plugins/plugin_api.hpp"

namespace bulkscore {

namespace plugins {

struct ImageLocality {
  static constexpr const char* kName = "ImageLocality";
  static constexpr bool kHasFilter = false;
  static constexpr bool kHasScore = true;
  static constexpr NormalizeKind kNormalize = NormalizeKind::None;
  static constexpr bool kPreScoreFeasible = false;

  static constexpr int64_t kMiB = int64_t{1024} * 1024;
  static constexpr int64_t kMinThreshold = 23 * kMiB;
  static constexpr int64_t kMaxContainerThreshold = 1000 * kMiB;

  // One container's image: the id the node lists it under and its
  // spread-scaled size, which does not depend on the node.
  struct ImageTerm {
    int32_t image;
    int32_t padding_ = 0;  // explicit: a query is compared byte for byte (docs/batching.md)
    int64_t scaled_size;
  };

  struct State {
    Span<ImageTerm> images;  // init containers first, duplicates kept
    int64_t max_threshold;   // 1000 MiB x number of containers
  };

  static PrepareResult prepare(const PrepareContext& ctx, State& st, Arena& arena);

  static BULKSCORE_HD int64_t score(const SnapshotView& s, const State& st, const uint8_t* arena, uint32_t node) {
    int64_t sum = 0;
    const ImageTerm* img = st.images.data(arena);
    for (uint32_t i = 0; i < st.images.count; ++i)
      if (s.has_image(node, img[i].image)) sum += img[i].scaled_size;
    if (sum < kMinThreshold)
      sum = kMinThreshold;
    else if (sum > st.max_threshold)
      sum = st.max_threshold;
    return div_trunc(100 * (sum - kMinThreshold), st.max_threshold - kMinThreshold);
  }

  // Host: score() of `count` nodes; without image terms (no node can reach
  // the threshold) every node scores the same, computed once.
  static void score_nodes(const SnapshotView& s, const State& st, const uint8_t* arena, const uint32_t* nodes,
                          uint32_t count, int64_t* out);

  // Host: without image terms every node scores the same.
  static bool uniform_score(const SnapshotView& s, const State& st, const uint8_t* arena, int64_t& value) {
    if (st.images.count != 0 || s.num_nodes == 0) return false;
    value = score(s, st, arena, 0);  // reads no node column
    return true;
  }

  static void reasons(uint64_t, const Snapshot&, const State&, const uint8_t*, uint32_t, std::vector<std::string>&) {}
};
}  // namespace plugins
}  // namespace bulkscore
