// PodTopologySpread (PreFilter, Filter, PreScore, Score; semantics doc §3.10,
// kube-scheduler v1.35.4 podtopologyspread/{common,filtering,scoring}.go).
//
// Constraints: the pod's own topologySpreadConstraints, or (only when it has
// none) the profile's defaults (System: hostname maxSkew 3 and zone maxSkew 5,
// both ScheduleAnyway; List: the args' defaultConstraints) with the selector
// upstream's DefaultSelector builds from the Services, RCs, RSs and StatefulSets
// that select the pod. Filter checks the DoNotSchedule ones, Score the
// ScheduleAnyway ones.
//
// Counting never walks the pods per pod: each constraint's (namespace,
// selector) is a snapshot topology matcher (Snapshot::topology_matcher,
// registered by intern() before prepare), whose per-node counters are summed
// per domain over the nodes that count (all topology keys present, inclusion
// policies met) in prepare (Filter's tables) and prescore_feasible (Score's
// tables, domains registered from the feasible nodes). The rules read
// per-domain tables from the arena and, for hostname constraints, the node's
// own counter.
#pragma once

#include <atomic>
#include <cmath>

#include "host/snapshot/snapshot.hpp"
#include "plugins/node_affinity.hpp"
#include "plugins/plugin_api.hpp"
#include "plugins/taint_toleration.hpp"
#include "plugins/topology_tables.hpp"

namespace bulkscore {

struct ClusterObjects;
struct ProfileConfig;

namespace plugins {

struct PodTopologySpread {
  static constexpr const char* kName = "PodTopologySpread";
  static constexpr bool kHasFilter = true;
  // Filter reads per-domain counts of matching pods (filter's `removed`) (plugin_api.hpp).
  static constexpr FilterReach kFilterReach = FilterReach::kPreFilterTables;
  static constexpr bool kHasScore = true;
  static constexpr NormalizeKind kNormalize = NormalizeKind::Spread;
  static constexpr bool kPreScoreFeasible = true;

  enum Reason : uint64_t { kMissingLabel = 1, kSkew = 2 };

  struct Constraint {
    int32_t key;         // topology key string id (kNoId: no node has it)
    int32_t dense_slot;  // its dense label column, or -1
    int32_t max_skew;
    int32_t matcher;      // counters row; -1: the selector counts no pod (nil or empty)
    bool hostname;        // key is kubernetes.io/hostname (Score counts per node)
    bool self_match;      // the selector matches the incoming pod's labels
    bool honor_affinity;  // nodeAffinityPolicy Honor: only nodes matching the pod's required affinity count
    bool honor_taints;    // nodeTaintsPolicy Honor: only nodes without untolerated NoSchedule/NoExecute taints count
    // Score: the feasible nodes not ignored (hostname's domains, for the
    // weight). Filter: 1 where each node with every hard key is its own
    // domain (a hostname key, no inclusion policy, no shared value), so
    // Filter reads the node's counter and `domains` is empty; else 0. Also
    // keeps the struct free of implicit padding (a query is compared byte
    // for byte).
    uint32_t counted = 0;
    int64_t min_match;         // Filter: the global minimum (minDomains applied)
    double weight;             // Score: log(domains + 2)
    // Matching pods per domain (value id of the key; kNoId is the "" value,
    // which a node without the key reads as in Score's defaults), sorted.
    Span<DomainCount> domains;
  };

  struct State {
    Span<Constraint> hard;           // DoNotSchedule (Filter), with their tables
    Span<Constraint> soft_prepared;  // ScheduleAnyway, as prepare left them (no tables)
    Span<Constraint> soft;           // ScheduleAnyway with their tables (prescore_feasible)
    // The pod's required node affinity (not the profile's addedAffinity) and
    // tolerations, for the inclusion policies (host only).
    NodeAffinity::State affinity;
    TaintToleration::State taints;
    int32_t empty_value;    // id of "" (kNoId if absent): the same domain as a missing key
    bool affinity_applies;  // the pod has a nodeSelector or required node affinity
    // Score: nodes lacking a soft constraint's key are ignored (the pod's own
    // constraints, or List defaults); System defaults tolerate them.
    bool require_all;
    uint8_t padding_[2] = {};  // explicit: a query is compared byte for byte (docs/batching.md)
  };

  // Before prepare, with the snapshot mutable: registers the topology
  // matchers the pod's constraints need.
  static void intern(Snapshot& snap, const Pod& pod, const ProfileConfig& profile, const ClusterObjects* objects);
  static PrepareResult prepare(const PrepareContext& ctx, State& st, Arena& arena);
  static void prescore_feasible(const Snapshot& snap, State& st, Arena& arena, const uint32_t* feasible,
                                uint32_t count);
  // The same tables from an earlier query's (plugin_api.hpp): its feasible
  // nodes minus `left`, with only pods changed since. The domains' node
  // counts drop with the leaving nodes, the counts come from the snapshot's
  // per-domain sums; false where those cannot serve (an inclusion policy,
  // several constraints under require_all, a key without a dense column).
  static bool prescore_feasible_since(const Snapshot& snap, State& st, Arena& arena, const State& prev,
                                      const uint8_t* prev_arena, const uint32_t* left, uint32_t n_left,
                                      uint32_t count);

  // PreFilter's hard tables from the snapshot's per-domain sums where the
  // walk over every node would count every node (prepare): on by default;
  // tests turn it off to compare with the walk (host only, set between
  // runs), and read how often it served (counted from every thread that
  // prepares: Engine::look_ahead prepares pods side by side).
  static inline bool hard_counts_from_sums = true;
  static inline std::atomic<uint64_t> hard_counts_from_sums_taken{0};
  // intern and prepare take the last pod's work for a pod whose namespace,
  // labels and constraints equal it (pod_topology_spread.cpp, SamePodKey),
  // and PreFilter's hostname minimum from the snapshot where it keeps it
  // (Snapshot::least_topology_count): on by default; tests turn both off
  // to compare with the walk (host only, set between runs).
  static inline bool same_pod_memo = true;

  static BULKSCORE_HD int32_t node_value(const SnapshotView& s, const Constraint& c, uint32_t node) {
    return c.key == kNoId ? kNoId : s.label_value(node, c.key, c.dense_slot);
  }
  // The domain a label value id falls in: "" and a missing label are one.
  static BULKSCORE_HD int32_t domain_of(const State& st, int32_t value) {
    return value == st.empty_value ? kNoId : value;
  }

  static BULKSCORE_HD const DomainCount* find_domain(const Constraint& c, const uint8_t* arena, int32_t value) {
    return plugins::find_domain(c.domains.data(arena), c.domains.count, value);
  }

  // Whether the node has every hard constraint's key.
  static BULKSCORE_HD bool has_hard_keys(const SnapshotView& s, const State& st, const uint8_t* arena, uint32_t node) {
    const Constraint* cs = st.hard.data(arena);
    for (uint32_t i = 0; i < st.hard.count; ++i)
      if (node_value(s, cs[i], node) == kNoId) return false;
    return true;
  }

  // `removed` (FilterReach::kPreFilterTables): per hard constraint, the
  // matching pods taken from the node's domain (removal_counts), or nullptr.
  static BULKSCORE_HD FilterOutcome filter(const SnapshotView& s, const State& st, const uint8_t* arena, uint32_t node,
                                           const int64_t* removed = nullptr) {
    const Constraint* cs = st.hard.data(arena);
    for (uint32_t i = 0; i < st.hard.count; ++i) {
      const Constraint& c = cs[i];
      const int32_t v = node_value(s, c, node);
      if (v == kNoId) return filter_fail(Code::UnschedulableAndUnresolvable, kMissingLabel);
      int64_t count = 0;
      if (c.counted) {
        // The node's own domain: its counter, where the node counts (every
        // hard key); one lacking a key counts for no domain.
        if (c.matcher >= 0 && has_hard_keys(s, st, arena, node))
          count = s.topology_count(static_cast<uint32_t>(c.matcher), node);
      } else if (const DomainCount* d = find_domain(c, arena, domain_of(st, v))) {
        count = d->count;
      }
      const int64_t r = removed ? removed[i] : 0;
      count -= r;
      // Only this domain's count went down (and only while r > 0, when the
      // node counts and its domain is registered): the global minimum is
      // the lower of the two. Upstream's two critical paths give the same
      // minimum after its RemovePod and AddPod on one node: the smallest
      // other domain stays in them. min_match already holds minDomains'
      // 0, which no count goes below.
      const int64_t min = r > 0 && count < c.min_match ? count : c.min_match;
      const int64_t skew = count + (c.self_match ? 1 : 0) - min;
      if (skew > c.max_skew) return filter_fail(Code::Unschedulable, kSkew);
    }
    return filter_pass();
  }

  // Host: filter()'s pass/fail of many nodes (plugin_api.hpp). Where every
  // hard key has a dense column: a node lacking a key fails; a counted
  // (hostname) constraint compares the node's counter; a domain table's
  // verdict is taken once per domain, and the nodes of the few failing
  // domains are found by comparing values. Else the rule, node by node.
  static void filter_nodes(const SnapshotView& s, const State& st, const uint8_t* arena, const uint32_t* nodes,
                           uint32_t count, uint8_t* fails);

  // The preemption dry run's removals (plugin_api.hpp): one count per hard
  // constraint; a pod counts where the constraint's matcher counts it and
  // the node counts for the constraint (every hard key, inclusion policies),
  // as PreFilter counted it.
  static uint32_t removal_slots(const State& st) { return st.hard.count; }
  // The batch cache (plugin_api.hpp): the hard constraints' domain counts
  // and global minimums alone differ; the nodes of the domains whose
  // verdict flipped. A minimum that flips the domains missing from a table,
  // or a constraint read from the nodes' own counters, changed: false.
  static bool filter_count_changes(const Snapshot& snap, const State& prev, const uint8_t* prev_arena,
                                   uint32_t prev_begin, uint32_t prev_end, const State& st, const uint8_t* arena,
                                   uint32_t begin, uint32_t end, std::vector<uint32_t>* nodes) {
    return filter_count_changes_gated(snap, prev, prev_arena, prev_begin, prev_end, st, arena, begin, end, nodes,
                                      nullptr);
  }
  // The gate (plugin_api.hpp): the first hard constraint read from a
  // domain table (not a node's own counter) on a key with a dense column.
  // A node with the key passes it when its domain's count passes the skew
  // check, whatever its other constraints say; one without the key fails
  // every constraint (no domain: false).
  static int32_t gate_constraint(const State& st, const uint8_t* arena) {
    const Constraint* cs = st.hard.data(arena);
    for (uint32_t i = 0; i < st.hard.count; ++i)
      if (!cs[i].counted && cs[i].key != kNoId && cs[i].dense_slot >= 0) return static_cast<int32_t>(i);
    return -1;
  }
  static bool filter_gate(const SnapshotView& s, const State& st, const uint8_t* arena, uint32_t node,
                          int32_t& domain) {
    const int32_t g = gate_constraint(st, arena);
    if (g < 0) return false;
    const int32_t v = node_value(s, st.hard.data(arena)[g], node);
    if (v == kNoId) return false;
    domain = domain_of(st, v);
    return true;
  }
  // With `gates`, the gate constraint's flipped domains go there and their
  // nodes are not named.
  static bool filter_count_changes_gated(const Snapshot& snap, const State& prev, const uint8_t* prev_arena,
                                         uint32_t prev_begin, uint32_t prev_end, const State& st,
                                         const uint8_t* arena, uint32_t begin, uint32_t end,
                                         std::vector<uint32_t>* nodes, std::vector<GateFlip>* gates);
  static void removal_counts(const RemovalContext& ctx, const State& st, const uint8_t* arena, uint32_t node,
                             const uint32_t* pods, uint32_t count, int64_t* out);

  static BULKSCORE_HD int64_t score(const SnapshotView& s, const State& st, const uint8_t* arena, uint32_t node) {
    const Constraint* cs = st.soft.data(arena);
    if (st.require_all)
      for (uint32_t i = 0; i < st.soft.count; ++i)
        if (cs[i].key == kNoId || s.label_value(node, cs[i].key, cs[i].dense_slot) == kNoId) return kIgnoredScore;
    double sum = 0;
    for (uint32_t i = 0; i < st.soft.count; ++i) {
      const Constraint& c = cs[i];
      const int32_t v = node_value(s, c, node);
      if (v == kNoId) continue;  // no term for a key the node lacks
      int64_t cnt = 0;
      if (c.hostname) {
        cnt = c.matcher < 0 ? 0 : s.topology_count(static_cast<uint32_t>(c.matcher), node);
      } else if (const DomainCount* d = find_domain(c, arena, domain_of(st, v))) {
        cnt = d->count;
      }
      sum += static_cast<double>(cnt) * c.weight + static_cast<double>(c.max_skew - 1);
    }
    return static_cast<int64_t>(round(sum));  // Go's math.Round: half away from zero
  }

  // The node's score class (plugin_api.hpp): score() reads, per soft
  // constraint, whether the node has the key and either its own counter
  // (hostname) or its value's domain table entry; the class is those
  // (the value id standing for its domain), packed 32 bits per constraint,
  // from the constraints as prepare left them (prescore_feasible adds only
  // weights, `counted` and tables). Up to two constraints (System defaults have two).
  static bool score_class(const SnapshotView& s, const State& st, const uint8_t* arena, uint32_t node,
                          uint64_t& cls) {
    if (st.soft_prepared.count > 2) return false;
    const Constraint* cs = st.soft_prepared.data(arena);
    uint64_t packed = 0;
    bool missing = false;
    for (uint32_t i = 0; i < st.soft_prepared.count; ++i) {
      const Constraint& c = cs[i];
      const int32_t v = node_value(s, c, node);
      uint32_t part = UINT32_MAX;  // no term for this constraint
      if (v == kNoId)
        missing = true;
      else if (c.hostname)
        part = c.matcher < 0 ? 0 : static_cast<uint32_t>(s.topology_count(static_cast<uint32_t>(c.matcher), node));
      else
        part = static_cast<uint32_t>(v);
      packed = packed << 32 | part;
    }
    cls = st.require_all && missing ? UINT64_MAX : packed;  // an ignored node
    return true;
  }

  static void reasons(uint64_t bits, const Snapshot& snap, const State& st, const uint8_t* arena, uint32_t node,
                      std::vector<std::string>& out);
};

}  // namespace plugins
}  // namespace bulkscore
