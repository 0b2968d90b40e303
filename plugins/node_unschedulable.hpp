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

  static void reasons(uint64_t bits, const Snapshot& snap, const State& st, const uint8_t* arena, uint32_t node,
                      std::vector<std::string>& out);
};
}  // namespace plugins
}  // namespace bulkscore
