// NodeName (Filter): a pod with spec.nodeName fits only the node of that name.
#pragma once

#include "host/snapshot/snapshot.hpp"
#include "plugins/plugin_api.hpp"

namespace bulkscore {

namespace plugins {

struct NodeName {
  static constexpr const char* kName = "NodeName";
  static constexpr bool kHasFilter = true;
  // Filter reads the node's name (plugin_api.hpp).
  static constexpr FilterReach kFilterReach = FilterReach::kNodeLocal;
  static constexpr bool kHasScore = false;
  static constexpr NormalizeKind kNormalize = NormalizeKind::None;
  static constexpr bool kPreScoreFeasible = false;

  // Sentinel for "the pod names a node the snapshot does not have".
  static constexpr int32_t kUnknownNode = -2;

  struct State {
    int32_t node_name;         // string id, or kUnknownNode
    bool wants_node;           // spec.nodeName is set
    uint8_t padding_[3] = {};  // explicit: a query is compared byte for byte (docs/batching.md)
  };

  static PrepareResult prepare(const PrepareContext& ctx, State& st, Arena& arena);

  static BULKSCORE_HD FilterOutcome filter(const SnapshotView& s, const State& st, const uint8_t*, uint32_t node) {
    if (st.wants_node && s.node_name_id[node] != st.node_name) return filter_fail(Code::UnschedulableAndUnresolvable);
    return filter_pass();
  }

  static void reasons(uint64_t bits, const Snapshot& snap, const State& st, const uint8_t* arena, uint32_t node,
                      std::vector<std::string>& out);
};
}  // namespace plugins
}  // namespace bulkscore
