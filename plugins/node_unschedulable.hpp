// NodeUnschedulable (Filter): a cordoned node (spec.unschedulable) admits only
// pods tolerating node.kubernetes.io/unschedulable:NoSchedule.
#pragma once

#include "host/snapshot/snapshot.hpp"
#include "plugins/plugin_api.hpp"

namespace bulkscore {

namespace plugins {

struct NodeUnschedulable {
  static constexpr const char* kName = "NodeUnschedulable";
  static constexpr bool kHasFilter = true;
  // Filter reads the node's own spec (plugin_api.hpp).
  static constexpr FilterReach kFilterReach = FilterReach::kNodeLocal;
  static constexpr bool kHasScore = false;
  static constexpr NormalizeKind kNormalize = NormalizeKind::None;
  static constexpr bool kPreScoreFeasible = false;

  struct State {
    bool tolerates_unschedulable;  // decided once per pod: the taint is fixed
  };

  static PrepareResult prepare(const PrepareContext& ctx, State& st, Arena& arena);

  static BULKSCORE_HD FilterOutcome filter(const SnapshotView& s, const State& st, const uint8_t*, uint32_t node) {
    if (s.unschedulable[node] && !st.tolerates_unschedulable) return filter_fail(Code::UnschedulableAndUnresolvable);
    return filter_pass();
  }

  // Host: filter() of many nodes (a byte loop compilers vectorize).
  static void filter_nodes(const SnapshotView& s, const State& st, const uint8_t*, const uint32_t* nodes,
                           uint32_t count, uint8_t* fails) {
    const uint8_t cordoned_fails = st.tolerates_unschedulable ? 0 : 1;
    if (is_contiguous_run(nodes, count)) {
      const uint8_t* u = s.unschedulable + (count ? nodes[0] : 0);
      for (uint32_t i = 0; i < count; ++i) fails[i] = static_cast<uint8_t>(u[i] & cordoned_fails);
      return;
    }
    for (uint32_t i = 0; i < count; ++i) fails[i] = static_cast<uint8_t>(s.unschedulable[nodes[i]] & cordoned_fails);
  }

  static void reasons(uint64_t bits, const Snapshot& snap, const State& st, const uint8_t* arena, uint32_t node,
                      std::vector<std::string>& out);
};
}  // namespace plugins
}  // namespace bulkscore
