// InterPodAffinity (PreFilter, Filter, PreScore, Score; semantics doc §3.11
// and §5.2, kube-scheduler v1.35.4 interpodaffinity/{filtering,scoring}.go).
//
// Filter, in upstream's order: the incoming pod's required affinity (every
// term's topology key on the node, and existing pods matching all terms in
// the node's domain of each, unless no pod anywhere matches and the pod
// matches its own terms), its required anti-affinity, and the existing
// pods' required anti-affinity terms that match the incoming pod. Score: the
// sum, over the topology keys the node has, of the weights accumulated in
// the node's domain from the incoming pod's preferred terms and the
// existing pods' required (hardPodAffinityWeight) and preferred terms that
// match it; min-max normalized.
//
// Counting never walks the pods per pod: the incoming pod's terms are
// snapshot topology matchers (per-node counters kept current by every
// placement; terminating pods count, as upstream's NodeInfo does), and the
// existing pods' terms are the snapshot's grouped term index with per-domain
// counts (Snapshot::existing_affinity_terms), matched against the incoming
// pod once per distinct term filed under one of its labels. The pod's own
// identical terms are one matcher and one walk over the nodes, weighted by
// how often they appear (upstream counts a repeated term each time), so
// the setup grows with the number of terms, not its square. prepare()
// builds every table (PreScore here reads no feasible list); the rules read
// per-key tables from the arena.
#pragma once

#include "host/snapshot/snapshot.hpp"
#include "plugins/plugin_api.hpp"
#include "plugins/topology_tables.hpp"

namespace bulkscore {

struct ClusterObjects;
struct ProfileConfig;

namespace plugins {

struct InterPodAffinity {
  static constexpr const char* kName = "InterPodAffinity";
  static constexpr bool kHasFilter = true;
  // Filter reads per-domain counts of the terms' pods (filter's `removed`) (plugin_api.hpp).
  static constexpr FilterReach kFilterReach = FilterReach::kPreFilterTables;
  static constexpr bool kHasScore = true;
  static constexpr NormalizeKind kNormalize = NormalizeKind::MinMax;
  static constexpr bool kPreScoreFeasible = false;

  enum Reason : uint64_t { kAffinity = 1, kAntiAffinity = 2, kExistingAntiAffinity = 4 };

  struct State {
    // Filter. One table per distinct topology key of the pod's required
    // affinity terms (pods matching all terms, per domain), of its required
    // anti-affinity terms (pods matching each term), and of the existing
    // pods' required anti-affinity terms that match the pod.
    Span<KeyedCounts> affinity;
    Span<KeyedCounts> anti_affinity;
    Span<KeyedCounts> existing_anti_affinity;
    // Score: summed weights per domain, one table per topology key.
    Span<KeyedCounts> score;
    // No existing pod matches all affinity terms anywhere, and the pod
    // matches them itself: the first pod of a group that attracts itself.
    bool affinity_escape;
    uint8_t padding_[3] = {};  // explicit: a query is compared byte for byte (docs/batching.md)
  };

  // Before prepare, with the snapshot mutable: registers the topology
  // matchers the pod's own terms need.
  static void intern(Snapshot& snap, const Pod& pod, const ProfileConfig& profile, const ClusterObjects* objects);
  static PrepareResult prepare(const PrepareContext& ctx, State& st, Arena& arena);

  static BULKSCORE_HD FilterOutcome filter(const SnapshotView& s, const State& st, const uint8_t* arena,
                                           uint32_t node) {
    if (st.affinity.count) {
      bool pods_exist = true;
      const KeyedCounts* t = st.affinity.data(arena);
      for (uint32_t i = 0; i < st.affinity.count; ++i) {
        bool has_key;
        const int64_t c = t[i].at_node(s, arena, node, has_key);
        if (!has_key) return filter_fail(Code::UnschedulableAndUnresolvable, kAffinity);
        if (c <= 0) pods_exist = false;
      }
      if (!pods_exist && !st.affinity_escape) return filter_fail(Code::UnschedulableAndUnresolvable, kAffinity);
    }
    if (present_in_domain(s, st.anti_affinity, arena, node)) return filter_fail(Code::Unschedulable, kAntiAffinity);
    if (present_in_domain(s, st.existing_anti_affinity, arena, node))
      return filter_fail(Code::Unschedulable, kExistingAntiAffinity);
    return filter_pass();
  }

  static BULKSCORE_HD int64_t score(const SnapshotView& s, const State& st, const uint8_t* arena, uint32_t node) {
    int64_t sum = 0;
    const KeyedCounts* t = st.score.data(arena);
    for (uint32_t i = 0; i < st.score.count; ++i) {
      bool has_key;
      sum += t[i].at_node(s, arena, node, has_key);  // 0 where the node lacks the key
    }
    return sum;
  }

  static void reasons(uint64_t bits, const Snapshot& snap, const State& st, const uint8_t* arena, uint32_t node,
                      std::vector<std::string>& out);

 private:
  // Some table has a positive count in the node's domain of its key.
  static BULKSCORE_HD bool present_in_domain(const SnapshotView& s, Span<KeyedCounts> tables, const uint8_t* arena,
                                             uint32_t node) {
    const KeyedCounts* t = tables.data(arena);
    for (uint32_t i = 0; i < tables.count; ++i) {
      bool has_key;
      if (t[i].at_node(s, arena, node, has_key) > 0) return true;
    }
    return false;
  }
};

}  // namespace plugins
}  // namespace bulkscore
