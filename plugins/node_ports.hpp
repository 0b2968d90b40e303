// NodePorts (PreFilter, Filter): the pod's host ports must be free on the node.
// A wanted (ip, protocol, port) conflicts with a used one of the same protocol
// and port when either IP is 0.0.0.0 or both are equal.
#pragma once

#include "host/snapshot/snapshot.hpp"
#include "plugins/plugin_api.hpp"

namespace bulkscore {

namespace plugins {

struct NodePorts {
  static constexpr const char* kName = "NodePorts";
  static constexpr bool kHasFilter = true;
  // Filter reads the node's host-port column (plugin_api.hpp).
  static constexpr FilterReach kFilterReach = FilterReach::kNodeLocal;
  static constexpr bool kHasScore = false;
  static constexpr NormalizeKind kNormalize = NormalizeKind::None;
  static constexpr bool kPreScoreFeasible = false;

  struct State {
    Span<HostPortEntry> wanted;
  };

  static PrepareResult prepare(const PrepareContext& ctx, State& st, Arena& arena);

  static BULKSCORE_HD FilterOutcome filter(const SnapshotView& s, const State& st, const uint8_t* arena,
                                           uint32_t node) {
    const HostPortEntry* want = st.wanted.data(arena);
    const HostPortEntry* used = s.ports + s.port_offsets[node];
    const uint32_t n_used = s.port_counts[node];
    for (uint32_t w = 0; w < st.wanted.count; ++w) {
      for (uint32_t u = 0; u < n_used; ++u) {
        if (used[u].port != want[w].port || used[u].protocol != want[w].protocol) continue;
        if (want[w].ip == s.any_ip_id || used[u].ip == s.any_ip_id || used[u].ip == want[w].ip)
          return filter_fail(Code::Unschedulable);
      }
    }
    return filter_pass();
  }

  static void reasons(uint64_t bits, const Snapshot& snap, const State& st, const uint8_t* arena, uint32_t node,
                      std::vector<std::string>& out);
};
}  // namespace plugins
}  // namespace bulkscore
