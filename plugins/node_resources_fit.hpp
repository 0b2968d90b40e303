// NodeResourcesFit (PreFilter, Filter, PreScore, Score; weight 1 by default).
// Filter: pod count, cpu, memory, ephemeral-storage and scalar resources must
// fit allocatable minus requested; every failing resource is reported.
// Score: LeastAllocated, MostAllocated or RequestedToCapacityRatio over the
// configured resources, using the non-zero request defaults for cpu/memory.
#pragma once

#include "plugins/resource_allocation.hpp"

namespace bulkscore {

namespace plugins {

struct NodeResourcesFit {
  static constexpr const char* kName = "NodeResourcesFit";
  static constexpr bool kHasFilter = true;
  // Filter reads the node's allocatable, requested and pod-count columns (plugin_api.hpp).
  static constexpr FilterReach kFilterReach = FilterReach::kNodeLocal;
  static constexpr bool kHasScore = true;
  static constexpr NormalizeKind kNormalize = NormalizeKind::None;
  static constexpr bool kPreScoreFeasible = false;

  // Reason bits: bit r = "Insufficient <resource r>", kTooManyPods = bit 63.
  static constexpr uint64_t kTooManyPods = uint64_t(1) << 63;
  static constexpr uint32_t kMaxResources = 63;

  enum Strategy : uint8_t { kLeastAllocated, kMostAllocated, kRequestedToCapacityRatio };

  struct State {
    // Filter.
    int64_t cpu, memory, ephemeral;   // the pod's Filter request
    Span<uint32_t> scalar_resources;  // requested (> 0), not ignored
    Span<int64_t> scalar_requests;
    bool only_pod_count;  // nothing requested: only the pod count is checked
    // Score.
    uint8_t strategy;
    uint8_t padding_[6] = {};  // explicit: a query is compared byte for byte (docs/batching.md)
    Span<ScoredResource> scored;
    Span<ShapePoint> shape;
  };

  static PrepareResult prepare(const PrepareContext& ctx, State& st, Arena& arena);
  // The part of a pod's requests (pod_requests) Filter checks under `args`:
  // cpu, memory, ephemeral-storage and the scalar resources not ignored
  // (ignoredResources, ignoredResourceGroups), as prepare reads them.
  static ResourceList enforced_requests(const NodeResourcesFitArgs& args, const ResourceList& requests);

  BULKSCORE_HD static void check(int64_t want, uint32_t r, const SnapshotView& s, uint32_t node, uint64_t& bits,
                                 bool& unresolvable) {
    const int64_t alloc = s.alloc(r, node);
    if (want > go_sub(alloc, s.req(r, node))) {
      bits |= uint64_t(1) << r;
      unresolvable = unresolvable || want > alloc;
    }
  }

  static BULKSCORE_HD FilterOutcome filter(const SnapshotView& s, const State& st, const uint8_t* arena,
                                           uint32_t node) {
    uint64_t bits = 0;
    bool unresolvable = false;
    if (static_cast<int64_t>(s.pod_count[node]) + 1 > s.allowed_pods[node]) bits |= kTooManyPods;
    if (!st.only_pod_count) {
      if (st.cpu > 0) check(st.cpu, kCpu, s, node, bits, unresolvable);
      if (st.memory > 0) check(st.memory, kMemory, s, node, bits, unresolvable);
      if (st.ephemeral > 0) check(st.ephemeral, kEphemeralStorage, s, node, bits, unresolvable);
      const uint32_t* rs = st.scalar_resources.data(arena);
      const int64_t* want = st.scalar_requests.data(arena);
      for (uint32_t i = 0; i < st.scalar_resources.count; ++i) check(want[i], rs[i], s, node, bits, unresolvable);
    }
    if (bits == 0) return filter_pass();
    return filter_fail(unresolvable ? Code::UnschedulableAndUnresolvable : Code::Unschedulable, bits);
  }

  static BULKSCORE_HD int64_t score(const SnapshotView& s, const State& st, const uint8_t* arena, uint32_t node) {
    const ScoredResource* res = st.scored.data(arena);
    switch (st.strategy) {
      case kMostAllocated:
        return most_allocated_score(s, res, st.scored.count, node);
      case kRequestedToCapacityRatio:
        return requested_to_capacity_ratio_score(s, res, st.scored.count, st.shape.data(arena), st.shape.count, node);
      default:
        return least_allocated_score(s, res, st.scored.count, node);
    }
  }

  // Host: filter() of `count` nodes as branch-free column loops (pod count,
  // then each requested resource), per SIMD target
  // (plugins/resource_scores_nodes.cpp).
  static void filter_nodes(const SnapshotView& s, const State& st, const uint8_t* arena, const uint32_t* nodes,
                           uint32_t count, uint8_t* fails);

  // Host: score() of `count` nodes (LeastAllocated as a vectorized column
  // loop, plugins/resource_scores_nodes.cpp; the other strategies node by node).
  static void score_nodes(const SnapshotView& s, const State& st, const uint8_t* arena, const uint32_t* nodes,
                          uint32_t count, int64_t* out);
  // Host: this pod's part in the resource allocation scorer's shared kernel
  // (resource_allocation_scores), where its column loop applies.
  static bool shared_score(const State& st, const uint8_t* arena, SharedScorePart& part);
  // Host: Filter as a part of that kernel (kSharedFitFilter), for the CPU
  // backend's loop that filters and scores at once.
  static bool shared_filter(const State& st, const uint8_t* arena, SharedScorePart& part);

  static void reasons(uint64_t bits, const Snapshot& snap, const State& st, const uint8_t* arena, uint32_t node,
                      std::vector<std::string>& out);
};
}  // namespace plugins
}  // namespace bulkscore
