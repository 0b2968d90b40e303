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

  // One group of the pod's identical required anti-affinity terms: its
  // topology matcher, its key and how many times it appears (what one
  // matching pod adds in the node's domain of the key).
  struct AntiTerm {
    int32_t matcher;
    int32_t key;
    int64_t weight;
  };
  // Such a group whose key names one node per value (a hostname key: a
  // dense column with as many values as nodes that have the key): the
  // node's domain is the node itself, so Filter reads the node's own count,
  // and the query holds no table of one count per node (PodTopologySpread's
  // hostname constraints do the same). The pod's own groups read their
  // matcher's row of SnapshotView::topology_counts, the existing pods'
  // groups their row of term_counts.
  struct NodeAntiTerm {
    int32_t row;
    int32_t dense_slot;  // the key's dense column: the node has the key where its rank is >= 0
  };

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
    // The affinity tables' totals over every domain, and what one pod that
    // matches all terms adds to each (the number of terms naming its key):
    // the first pod of a group that attracts itself passes when no pod
    // matches anywhere (every total 0, also once the dry run removed the
    // ones there were) and it matches its own terms.
    Span<int64_t> affinity_totals;
    Span<int64_t> affinity_weights;
    // The anti-affinity groups behind anti_affinity (empty when it is).
    Span<AntiTerm> anti_terms;
    // The anti-affinity groups read from the nodes' counters instead: the
    // pod's own (anti_affinity's) and the existing pods' that match it
    // (existing_anti_affinity's).
    Span<NodeAntiTerm> anti_on_node;
    Span<NodeAntiTerm> existing_on_node;
    int32_t affinity_matcher = -1;  // pods matching all affinity terms; -1: none (no terms, or one matches no pod)
    bool affinity_self_match = false;
    uint8_t padding_[3] = {};  // explicit: a query is compared byte for byte (docs/batching.md)
  };

  // Before prepare, with the snapshot mutable: registers the topology
  // matchers the pod's own terms need.
  static void intern(Snapshot& snap, const Pod& pod, const ProfileConfig& profile, const ClusterObjects* objects);
  static PrepareResult prepare(const PrepareContext& ctx, State& st, Arena& arena);

  // `removed` (FilterReach::kPreFilterTables): the counts taken from the
  // node's domains, laid out as the tables are (affinity, anti-affinity,
  // existing anti-affinity, then one per anti_on_node group: the pods it
  // counts, and one per existing_on_node group: the term's occurrences on
  // them; removal_counts), or nullptr.
  static BULKSCORE_HD FilterOutcome filter(const SnapshotView& s, const State& st, const uint8_t* arena, uint32_t node,
                                           const int64_t* removed = nullptr) {
    const int64_t* removed_anti = removed ? removed + st.affinity.count : nullptr;
    const int64_t* removed_existing = removed_anti ? removed_anti + st.anti_affinity.count : nullptr;
    const int64_t* removed_on_node = removed_existing ? removed_existing + st.existing_anti_affinity.count : nullptr;
    const int64_t* removed_existing_on_node = removed_on_node ? removed_on_node + st.anti_on_node.count : nullptr;
    if (st.affinity.count) {
      bool pods_exist = true;
      const KeyedCounts* t = st.affinity.data(arena);
      for (uint32_t i = 0; i < st.affinity.count; ++i) {
        bool has_key;
        const int64_t c = t[i].at_node(s, arena, node, has_key) - (removed ? removed[i] : 0);
        if (!has_key) return filter_fail(Code::UnschedulableAndUnresolvable, kAffinity);
        if (c <= 0) pods_exist = false;
      }
      if (!pods_exist && !affinity_escape(st, arena, removed))
        return filter_fail(Code::UnschedulableAndUnresolvable, kAffinity);
    }
    if (present_in_domain(s, st.anti_affinity, arena, node, removed_anti) ||
        present_on_node(s, s.topology_counts, st.anti_on_node, arena, node, removed_on_node))
      return filter_fail(Code::Unschedulable, kAntiAffinity);
    if (present_in_domain(s, st.existing_anti_affinity, arena, node, removed_existing) ||
        present_on_node(s, s.term_counts, st.existing_on_node, arena, node, removed_existing_on_node))
      return filter_fail(Code::Unschedulable, kExistingAntiAffinity);
    return filter_pass();
  }

  // The preemption dry run's removals (plugin_api.hpp): one count per
  // table of the three Filter reads, in filter()'s layout.
  static uint32_t removal_slots(const State& st) {
    return st.affinity.count + st.anti_affinity.count + st.existing_anti_affinity.count + st.anti_on_node.count +
           st.existing_on_node.count;
  }
  static void removal_counts(const RemovalContext& ctx, const State& st, const uint8_t* arena, uint32_t node,
                             const uint32_t* pods, uint32_t count, int64_t* out);
  // The batch cache (plugin_api.hpp): the Filter tables' per-domain counts
  // alone differ (a placement adds one in the placed node's domain of each
  // key whose terms count the pod); the nodes of the domains whose count
  // changed. The affinity totals may change too, for a pod that matches its
  // own terms while they stay all zero or all not (the escape reads only
  // that); the Score tables must be equal (Score reads them).
  static bool filter_count_changes(const Snapshot& snap, const State& prev, const uint8_t* prev_arena,
                                   uint32_t prev_begin, uint32_t prev_end, const State& st, const uint8_t* arena,
                                   uint32_t begin, uint32_t end, std::vector<uint32_t>* nodes);

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
  // No pod matches all affinity terms anywhere (after the removals), and
  // the pod matches them itself: upstream's empty affinity map.
  static BULKSCORE_HD bool affinity_escape(const State& st, const uint8_t* arena, const int64_t* removed) {
    if (!st.affinity_self_match) return false;
    const int64_t* totals = st.affinity_totals.data(arena);
    for (uint32_t i = 0; i < st.affinity_totals.count; ++i)
      if (totals[i] - (removed ? removed[i] : 0) != 0) return false;
    return true;
  }
  // Some table has a positive count in the node's domain of its key (less
  // what `removed` takes there).
  static BULKSCORE_HD bool present_in_domain(const SnapshotView& s, Span<KeyedCounts> tables, const uint8_t* arena,
                                             uint32_t node, const int64_t* removed = nullptr) {
    const KeyedCounts* t = tables.data(arena);
    for (uint32_t i = 0; i < tables.count; ++i) {
      bool has_key;
      if (t[i].at_node(s, arena, node, has_key) - (removed ? removed[i] : 0) > 0) return true;
    }
    return false;
  }
  // Some group has a positive count on the node (less what `removed`
  // takes) in its row of `column` (topology_counts or term_counts), and the
  // node has the group's key. The table of a key sums its groups' weighted
  // counts, each at least what is removed from it: positive exactly when
  // one group's count is.
  static BULKSCORE_HD bool present_on_node(const SnapshotView& s, const int32_t* column, Span<NodeAntiTerm> terms,
                                           const uint8_t* arena, uint32_t node, const int64_t* removed = nullptr) {
    const NodeAntiTerm* t = terms.data(arena);
    for (uint32_t i = 0; i < terms.count; ++i)
      if (s.dense_rank(t[i].dense_slot, node) >= 0 &&
          column[static_cast<size_t>(t[i].row) * s.num_nodes + node] - (removed ? removed[i] : 0) > 0)
        return true;
    return false;
  }
};

}  // namespace plugins
}  // namespace bulkscore
