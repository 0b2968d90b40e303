// TaintToleration (Filter, PreScore, Score; weight 3 by default).
// Filter: every NoSchedule/NoExecute taint must be tolerated.
// Score: the number of PreferNoSchedule taints not tolerated by the pod's
// tolerations with effect "" or PreferNoSchedule; reverse-normalized.
#pragma once

#include "plugins/toleration.hpp"

namespace bulkscore {

namespace plugins {

struct TaintToleration {
  static constexpr const char* kName = "TaintToleration";
  static constexpr bool kHasFilter = true;
  // Filter reads the node's taints (plugin_api.hpp).
  static constexpr FilterReach kFilterReach = FilterReach::kNodeLocal;
  static constexpr bool kHasScore = true;
  static constexpr NormalizeKind kNormalize = NormalizeKind::DefaultReverse;
  static constexpr bool kPreScoreFeasible = false;

  struct State {
    Span<TolerationRule> all;     // for Filter
    Span<TolerationRule> prefer;  // effect "" or PreferNoSchedule, for Score
  };

  static PrepareResult prepare(const PrepareContext& ctx, State& st, Arena& arena);

  static BULKSCORE_HD bool tolerated(const TolerationRule* rules, uint32_t n, int32_t k, int32_t v, uint8_t e) {
    for (uint32_t i = 0; i < n; ++i)
      if (rules[i].tolerates(k, v, e)) return true;
    return false;
  }

  static BULKSCORE_HD FilterOutcome filter(const SnapshotView& s, const State& st, const uint8_t* arena,
                                           uint32_t node) {
    const TolerationRule* rules = st.all.data(arena);
    for (uint32_t i = s.taint_offsets[node], e = s.taint_offsets[node + 1]; i < e; ++i) {
      const uint8_t eff = s.taint_effects[i];
      if (eff == static_cast<uint8_t>(TaintEffect::PreferNoSchedule)) continue;
      if (!tolerated(rules, st.all.count, s.taint_keys[i], s.taint_values[i], eff))
        return filter_fail(Code::UnschedulableAndUnresolvable);
    }
    return filter_pass();
  }

  // Host: out[i] = 1 where nodes[i] has taints, else 0; whether any has.
  template <class T>
  static bool mark_tainted(const SnapshotView& s, const uint32_t* nodes, uint32_t count, T* out) {
    T tainted = 0;
    if (is_contiguous_run(nodes, count)) {
      const uint32_t* off = s.taint_offsets + (count ? nodes[0] : 0);
      for (uint32_t i = 0; i < count; ++i) tainted |= out[i] = static_cast<T>(off[i] != off[i + 1]);
    } else {
      for (uint32_t i = 0; i < count; ++i)
        tainted |= out[i] = static_cast<T>(s.taint_offsets[nodes[i]] != s.taint_offsets[nodes[i] + 1]);
    }
    return tainted != 0;
  }

  // Host: filter() of many nodes; most nodes have no taints, which pass
  // without looking at the pod's tolerations.
  static void filter_nodes(const SnapshotView& s, const State& st, const uint8_t* arena, const uint32_t* nodes,
                           uint32_t count, uint8_t* fails) {
    if (!mark_tainted(s, nodes, count, fails)) return;
    // The tainted nodes: the rule.
    for (uint32_t i = 0; i < count; ++i)
      if (fails[i]) fails[i] = static_cast<uint8_t>(!filter(s, st, arena, nodes[i]).ok());
  }

  static BULKSCORE_HD int64_t score(const SnapshotView& s, const State& st, const uint8_t* arena, uint32_t node) {
    const TolerationRule* rules = st.prefer.data(arena);
    int64_t intolerable = 0;
    for (uint32_t i = s.taint_offsets[node], e = s.taint_offsets[node + 1]; i < e; ++i) {
      const uint8_t eff = s.taint_effects[i];
      if (eff != static_cast<uint8_t>(TaintEffect::PreferNoSchedule)) continue;
      if (!tolerated(rules, st.prefer.count, s.taint_keys[i], s.taint_values[i], eff)) ++intolerable;
    }
    return intolerable;
  }

  // Host: score() of many nodes; a node without taints scores 0 without
  // looking at the pod's tolerations (most nodes), the tainted ones take
  // the rule.
  static void score_nodes(const SnapshotView& s, const State& st, const uint8_t* arena, const uint32_t* nodes,
                          uint32_t count, int64_t* out);

  // Whether no node of the snapshot has a taint: then every node passes
  // Filter (prepare's filter_passes_all) and scores 0 (uniform_score).
  static bool untainted(const SnapshotView& s) {
    return s.taint_offsets == nullptr || s.taint_offsets[s.num_nodes] == s.taint_offsets[0];
  }

  // Host: on a cluster without taints every node scores 0.
  static bool uniform_score(const SnapshotView& s, const State&, const uint8_t*, int64_t& value) {
    if (!untainted(s)) return false;
    value = 0;
    return true;
  }

  static void reasons(uint64_t bits, const Snapshot& snap, const State& st, const uint8_t* arena, uint32_t node,
                      std::vector<std::string>& out);
};
}  // namespace plugins
}  // namespace bulkscore
