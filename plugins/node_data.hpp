// NodeData (Filter, Score): bulkscore's own plugin, not upstream's
// (docs/plugins.md). An embedder's own rule (a license, a maintenance
// window, a cost model) as data instead of a fork of the plugin list: the
// embedder sets, per node, a verdict in a named filter column and a score
// in a named score column (Engine::set_node_filter, set_node_score, ...;
// the snapshot's node data columns), and a profile's args say which
// columns the plugin reads, how the score is normalized and what a node
// without data gets.
//
// Filter: a node whose entry passes fits; one that fails is rejected
// (UnschedulableAndUnresolvable: evicting pods does not change the data)
// with the reason text set with it; a node without data gets
// `filterDefault` (Pass, or Fail with "node(s) had no <column> data").
// Score: the node's score (0..100), or `scoreDefault` without data,
// normalized as `scoreNormalization` says (None, Default: 100 * raw / max,
// Reverse: 100 - 100 * raw / max).
#pragma once

#include "host/snapshot/snapshot.hpp"
#include "plugins/plugin_api.hpp"

namespace bulkscore {

namespace plugins {

struct NodeData {
  static constexpr const char* kName = "NodeData";
  static constexpr bool kHasFilter = true;
  // Filter reads the node's entry in an embedder's column, which no pod changes (plugin_api.hpp).
  static constexpr FilterReach kFilterReach = FilterReach::kNodeLocal;
  static constexpr bool kHasScore = true;
  // The profile's scoreNormalization picks the kind; see normalize_for().
  static constexpr NormalizeKind kNormalize = NormalizeKind::None;
  static constexpr bool kPreScoreFeasible = false;

  // Reason bits: reason id k (1..63) of the filter column is bit k - 1;
  // a node without data that filterDefault fails has this one.
  static constexpr uint64_t kNoData = uint64_t(1) << 63;

  struct State {
    int32_t filter_row;  // the filter column's view row; -1: no such column (no node has data)
    int32_t score_row;   // the score column's view row; -1 likewise
    // The filter column's name (for the "no data" reason).
    Span<char> filter_column;
    uint8_t filter_default_fails;  // filterDefault: Fail
    uint8_t score_default;         // scoreDefault, 0..100
    NormalizeKind normalize;
    uint8_t padding_[5] = {};  // explicit: a query is compared byte for byte (docs/batching.md)
  };

  static PrepareResult prepare(const PrepareContext& ctx, State& st, Arena& arena);
  static NormalizeKind normalize_for(const State& st) { return st.normalize; }

  static BULKSCORE_HD FilterOutcome filter(const SnapshotView& s, const State& st, const uint8_t*, uint32_t node) {
    const uint8_t entry =
        st.filter_row < 0 ? kNodeDataNone : s.node_filter_entry(static_cast<uint32_t>(st.filter_row), node);
    if (entry == 0) return filter_pass();
    if (entry == kNodeDataNone)
      return st.filter_default_fails ? filter_fail(Code::UnschedulableAndUnresolvable, kNoData) : filter_pass();
    return filter_fail(Code::UnschedulableAndUnresolvable, uint64_t(1) << (entry - 1));
  }

  static BULKSCORE_HD int64_t score(const SnapshotView& s, const State& st, const uint8_t*, uint32_t node) {
    const uint8_t entry =
        st.score_row < 0 ? kNodeDataNone : s.node_score_entry(static_cast<uint32_t>(st.score_row), node);
    return entry == kNodeDataNone ? st.score_default : entry;
  }

  static void reasons(uint64_t bits, const Snapshot& snap, const State& st, const uint8_t* arena, uint32_t node,
                      std::vector<std::string>& out);
};
}  // namespace plugins
}  // namespace bulkscore
