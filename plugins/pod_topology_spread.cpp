#include "plugins/pod_topology_spread.hpp"

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstring>
#include <map>
#include <optional>
#include <string_view>

#include "host/input/labels.hpp"
#include "host/input/quote.hpp"
#include "plugins/node_affinity.hpp"
#include "plugins/prepare.hpp"
#include "plugins/simd_dispatch.hpp"
#include "plugins/taint_toleration.hpp"

namespace bulkscore::plugins {
namespace {

constexpr const char* kHostnameKey = "kubernetes.io/hostname";
constexpr const char* kZoneKey = "topology.kubernetes.io/zone";

// A constraint as upstream's topologySpreadConstraint: the selector parsed
// (nullopt is labels.Nothing(), which a nil labelSelector gives).
struct Built {
  int32_t max_skew = 0;
  std::string key;
  std::optional<LabelSelector> selector;
  int32_t min_domains = 1;
  bool honor_affinity = true;
  bool honor_taints = false;
  bool score = false;  // intern: a ScheduleAnyway constraint
};

bool selector_empty(const LabelSelector& s) { return s.match_labels.empty() && s.match_expressions.empty(); }

// What metav1.LabelSelectorAsSelector refuses, as an InputError naming the pod.
void check_selector(const Pod& pod, const LabelSelector& sel) {
  for (const auto& r : sel.match_expressions) {
    const bool set_op = r.op == "In" || r.op == "NotIn";
    const bool exist_op = r.op == "Exists" || r.op == "DoesNotExist";
    if (!set_op && !exist_op)
      throw InputError(pod.origin + ": pod " + quote_for_message(pod.key()) +
                       ": topologySpreadConstraints: labelSelector: " + quote_for_message(r.op) +
                       " is not a valid label selector operator");
    if (set_op && r.values.empty())
      throw InputError(pod.origin + ": pod " + quote_for_message(pod.key()) +
                       ": topologySpreadConstraints: labelSelector: key " + quote_for_message(r.key) +
                       ": for 'in', 'notin' operators, values set can't be empty");
    if (exist_op && !r.values.empty())
      throw InputError(pod.origin + ": pod " + quote_for_message(pod.key()) +
                       ": topologySpreadConstraints: labelSelector: key " + quote_for_message(r.key) +
                       ": values set must be empty for exists and does not exist");
  }
}

// filterTopologySpreadConstraints: the constraints with this action, their
// selectors parsed, matchLabelKeys merged (a nil selector stays nothing),
// minDomains and the inclusion policies defaulted.
std::vector<Built> filter_constraints(const Pod& pod, const std::vector<TopologySpreadConstraint>& list,
                                      const char* action) {
  std::vector<Built> out;
  for (const auto& c : list) {
    if (c.when_unsatisfiable != action) continue;
    Built b;
    b.max_skew = c.max_skew;
    b.key = c.topology_key;
    b.selector = c.label_selector;
    if (b.selector) check_selector(pod, *b.selector);
    if (b.selector && !c.match_label_keys.empty()) {
      for (const auto& k : c.match_label_keys) {
        const auto it = pod.labels.find(k);
        if (it != pod.labels.end()) b.selector->match_expressions.push_back({k, "In", {it->second}});
      }
    }
    b.min_domains = c.min_domains.value_or(1);
    b.honor_affinity = c.node_affinity_policy != "Ignore";
    b.honor_taints = c.node_taints_policy == "Honor";
    out.push_back(std::move(b));
  }
  return out;
}

// helper.DefaultSelector: the Services of the pod's namespace whose selector
// matches the pod (maps merged, later wins), then the controlling RC (its map
// merged) or RS / StatefulSet (its requirements added).
LabelSelector default_selector(const Pod& pod, const ClusterObjects* objects) {
  LabelSelector sel;
  if (!objects) return sel;
  using K = SelectingObject::Kind;
  for (const auto& o : objects->selecting) {
    if (o.kind != K::Service || o.namespace_name != pod.namespace_name || !o.has_selector) continue;
    bool match = true;
    for (const auto& [k, v] : o.selector_map) {
      const auto it = pod.labels.find(k);
      if (it == pod.labels.end() || it->second != v) {
        match = false;
        break;
      }
    }
    if (!match) continue;
    for (const auto& [k, v] : o.selector_map) sel.match_labels[k] = v;
  }
  const OwnerReference* owner = nullptr;
  for (const auto& r : pod.owner_references)
    if (r.controller) {
      owner = &r;
      break;
    }
  if (!owner) return sel;
  K kind;
  if (owner->api_version == "v1" && owner->kind == "ReplicationController")
    kind = K::ReplicationController;
  else if (owner->api_version == "apps/v1" && owner->kind == "ReplicaSet")
    kind = K::ReplicaSet;
  else if (owner->api_version == "apps/v1" && owner->kind == "StatefulSet")
    kind = K::StatefulSet;
  else
    return sel;
  for (const auto& o : objects->selecting) {
    if (o.kind != kind || o.namespace_name != pod.namespace_name || o.name != owner->name) continue;
    if (kind == K::ReplicationController) {
      for (const auto& [k, v] : o.selector_map) sel.match_labels[k] = v;
    } else if (o.label_selector) {
      // An invalid selector adds nothing (LabelSelectorAsSelector fails).
      bool valid = true;
      for (const auto& r : o.label_selector->match_expressions) {
        const bool set_op = r.op == "In" || r.op == "NotIn";
        const bool exist_op = r.op == "Exists" || r.op == "DoesNotExist";
        if ((!set_op && !exist_op) || (set_op && r.values.empty()) || (exist_op && !r.values.empty())) valid = false;
      }
      if (valid) {
        for (const auto& [k, v] : o.label_selector->match_labels) sel.match_expressions.push_back({k, "In", {v}});
        for (const auto& r : o.label_selector->match_expressions) sel.match_expressions.push_back(r);
      }
    }
    break;
  }
  return sel;
}

// The constraints for one action: the pod's own, or the defaults with the
// DefaultSelector (none when that is empty).
std::vector<Built> constraints_for(const Pod& pod, const PodTopologySpreadArgs& args, const ClusterObjects* objects,
                                   const char* action) {
  if (!pod.topology_spread_constraints.empty()) return filter_constraints(pod, pod.topology_spread_constraints, action);
  // Without selecting objects the DefaultSelector is empty: no defaults, at
  // no cost for the common pod.
  if (!objects || objects->selecting.empty()) return {};
  std::vector<TopologySpreadConstraint> defaults;
  if (args.defaulting_type == "System") {
    TopologySpreadConstraint host, zone;
    host.max_skew = 3;
    host.topology_key = kHostnameKey;
    host.when_unsatisfiable = "ScheduleAnyway";
    zone.max_skew = 5;
    zone.topology_key = kZoneKey;
    zone.when_unsatisfiable = "ScheduleAnyway";
    defaults = {host, zone};
  } else {
    defaults = args.default_constraints;
  }
  std::vector<Built> out = filter_constraints(pod, defaults, action);
  if (out.empty()) return out;
  const LabelSelector sel = default_selector(pod, objects);
  if (selector_empty(sel)) return {};
  for (auto& b : out) b.selector = sel;
  return out;
}

// Whether a constraint's selector counts pods at all: a nil one matches
// nothing, and upstream's counting returns 0 for an empty one.
bool counts_pods(const Built& b) { return b.selector && !selector_empty(*b.selector); }

// The compiled constraint, tables left empty.
PodTopologySpread::Constraint compile(const Snapshot& snap, const Pod& pod, const Built& b) {
  PodTopologySpread::Constraint c{};
  c.key = snap.string_id(b.key);
  c.dense_slot = c.key == kNoId ? -1 : snap.dense_label_slot(c.key);
  c.max_skew = b.max_skew;
  c.matcher = -1;
  if (counts_pods(b)) {
    c.matcher = snap.find_topology_matcher(pod.namespace_name, *b.selector);
    if (c.matcher < 0)
      throw Error("PodTopologySpread: no topology matcher registered for pod " + quote_for_message(pod.key()) +
                  " (intern_pod_for_plan must run before prepare_pod_query)");
  }
  c.hostname = b.key == kHostnameKey;
  c.self_match = b.selector && selector_matches(*b.selector, pod.labels);
  c.honor_affinity = b.honor_affinity;
  c.honor_taints = b.honor_taints;
  c.min_match = 0;
  c.weight = 0;
  return c;
}

using Constraint = PodTopologySpread::Constraint;

bool same_selector(const std::optional<LabelSelector>& a, const std::optional<LabelSelector>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  if (a->match_labels != b->match_labels || a->match_expressions.size() != b->match_expressions.size()) return false;
  for (size_t i = 0; i < a->match_expressions.size(); ++i) {
    const LabelSelectorRequirement& x = a->match_expressions[i];
    const LabelSelectorRequirement& y = b->match_expressions[i];
    if (x.key != y.key || x.op != y.op || x.values != y.values) return false;
  }
  return true;
}

bool same_constraints(const std::vector<TopologySpreadConstraint>& a, const std::vector<TopologySpreadConstraint>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const TopologySpreadConstraint& x = a[i];
    const TopologySpreadConstraint& y = b[i];
    if (x.max_skew != y.max_skew || x.topology_key != y.topology_key || x.when_unsatisfiable != y.when_unsatisfiable ||
        x.min_domains != y.min_domains || x.node_affinity_policy != y.node_affinity_policy ||
        x.node_taints_policy != y.node_taints_policy || x.match_label_keys != y.match_label_keys ||
        !same_selector(x.label_selector, y.label_selector))
      return false;
  }
  return true;
}

// What intern and prepare build from a pod with constraints of its own
// depends on its namespace, labels and constraints, the profile's
// arguments and the snapshot's strings, dense columns and matchers (rows
// are added, and renumbered only by a compaction; those and every other
// change of the rest come with a new structure version, a fresh number
// per change and per copy). A ReplicaSet's pods differ in
// their names alone: the last pod's work is taken where these are equal
// (building the constraints, copying their selectors and finding their
// matchers by their spelling was a third of a cache hit under hard
// spreading). A pod under the profile's default constraints (they read
// the cluster's objects) is built afresh.
struct SamePodKey {
  const Snapshot* snap = nullptr;
  uint64_t version = 0;
  const PodTopologySpreadArgs* args = nullptr;
  std::string namespace_name;
  StringMap labels;
  std::vector<TopologySpreadConstraint> constraints;
  bool valid = false;

  bool matches(const Snapshot& sn, const PodTopologySpreadArgs& a, const Pod& pod) const {
    return valid && snap == &sn && version == sn.structure_version() && version != 0 && args == &a &&
           !pod.topology_spread_constraints.empty() && namespace_name == pod.namespace_name &&
           labels == pod.labels && same_constraints(constraints, pod.topology_spread_constraints);
  }
  void take(const Snapshot& sn, const PodTopologySpreadArgs& a, const Pod& pod) {
    valid = !pod.topology_spread_constraints.empty() && sn.structure_version() != 0;
    if (!valid) return;
    snap = &sn;
    version = sn.structure_version();
    args = &a;
    namespace_name = pod.namespace_name;
    labels = pod.labels;
    constraints = pod.topology_spread_constraints;
  }
};


bool has_all_keys(const SnapshotView& s, const Constraint* cs, size_t count, uint32_t n) {
  for (size_t i = 0; i < count; ++i)
    if (cs[i].key == kNoId || s.label_value(n, cs[i].key, cs[i].dense_slot) == kNoId) return false;
  return true;
}
bool has_all_keys(const SnapshotView& s, const std::vector<Constraint>& cs, uint32_t n) {
  return has_all_keys(s, cs.data(), cs.size(), n);
}

// Whether node n counts for c under its inclusion policies.
bool included(const SnapshotView& s, const PodTopologySpread::State& st, const uint8_t* arena, const Constraint& c,
              uint32_t n) {
  if (c.honor_affinity && st.affinity_applies && !NodeAffinity::filter(s, st.affinity, arena, n).ok()) return false;
  if (c.honor_taints && !TaintToleration::filter(s, st.taints, arena, n).ok()) return false;
  return true;
}

int64_t node_count(const SnapshotView& s, const Constraint& c, uint32_t n) {
  return c.matcher < 0 ? 0 : s.topology_count(static_cast<uint32_t>(c.matcher), n);
}

// Per-domain sums of one constraint while a pod is prepared: indexed by the
// rank of the node's value in the key's dense column (O(1) per node), or by
// domain id in a map for a key without one. A domain exists once registered
// (a node of it counts, or is feasible), even with a zero sum.
// A domain's (a value id; kNoId for "" and the missing key, one domain) sum
// in Snapshot::topology_domain_sums of c's key (c.dense_slot >= 0); the
// nodes without the key count when `missing_counts`.
int64_t domain_sum(const Snapshot& snap, const PodTopologySpread::State& st, const Constraint& c,
                   const std::vector<int64_t>& sums, int32_t domain, bool missing_counts) {
  if (domain != kNoId) {
    const int32_t r = snap.dense_label_rank_of(c.dense_slot, domain);
    return r < 0 ? 0 : sums[static_cast<size_t>(r)];
  }
  const int32_t empty_rank = st.empty_value == kNoId ? -1 : snap.dense_label_rank_of(c.dense_slot, st.empty_value);
  return (missing_counts ? sums.back() : 0) + (empty_rank >= 0 ? sums[static_cast<size_t>(empty_rank)] : 0);
}

class DomainTally {
 public:
  struct Entry {
    int64_t sum = 0;
    int32_t nodes = 0;  // nodes that registered it
  };

  DomainTally(const Snapshot& snap, const PodTopologySpread::State& st, const Constraint& c)
      : snap_(snap), st_(st), c_(c) {
    if (c.dense_slot >= 0) {
      const size_t buckets = snap.dense_label_values(c.dense_slot).size() + 1;  // + the missing key
      sum_.assign(buckets, 0);
      nodes_.assign(buckets, 0);
      empty_rank_ = st.empty_value == kNoId ? -1 : snap.dense_label_rank_of(c.dense_slot, st.empty_value);
    }
  }
  // Registers node n's domain and adds `count` to it.
  void add(const SnapshotView& s, uint32_t n, int64_t count) {
    if (c_.dense_slot >= 0) {
      const size_t b = bucket(s, n);
      ++nodes_[b];
      sum_[b] += count;
    } else {
      Entry& e = by_domain_[PodTopologySpread::domain_of(st_, PodTopologySpread::node_value(s, c_, n))];
      ++e.nodes;
      e.sum += count;
    }
  }
  // Adds `count` to node n's domain if it is registered.
  void add_if_registered(const SnapshotView& s, uint32_t n, int64_t count) {
    if (c_.dense_slot >= 0) {
      const size_t b = bucket(s, n);
      if (nodes_[b]) sum_[b] += count;
    } else {
      const auto it = by_domain_.find(PodTopologySpread::domain_of(st_, PodTopologySpread::node_value(s, c_, n)));
      if (it != by_domain_.end()) it->second.sum += count;
    }
  }
  // The registered domains' sums from Snapshot::topology_domain_sums (by
  // rank, then the nodes without the key, which count when
  // `missing_counts`); false when the tally has no dense column.
  bool set_from_sums(const std::vector<int64_t>& sums, bool missing_counts) {
    if (c_.dense_slot < 0 || sums.size() != sum_.size()) return false;
    const size_t last = sum_.size() - 1;
    for (size_t b = 0; b < last; ++b)
      if (nodes_[b]) sum_[b] += sums[b];
    if (nodes_[last]) sum_[last] += domain_sum(snap_, st_, c_, sums, kNoId, missing_counts);
    return true;
  }
  // The registered domains and their sums ("" and a missing key are one domain).
  std::map<int32_t, Entry> domains() const {
    if (c_.dense_slot < 0) return by_domain_;
    std::map<int32_t, Entry> out;
    const std::vector<int32_t>& values = snap_.dense_label_values(c_.dense_slot);
    for (size_t b = 0; b < sum_.size(); ++b) {
      if (!nodes_[b]) continue;
      const int32_t d =
          b == values.size() ? kNoId : PodTopologySpread::domain_of(st_, values[b]);  // "" never has a bucket
      out[d].sum += sum_[b];
      out[d].nodes += nodes_[b];
    }
    return out;
  }

 private:
  // A node without the key and a node whose value is "" share one bucket:
  // one domain, as upstream reads node.Labels[key].
  size_t bucket(const SnapshotView& s, uint32_t n) const {
    const int32_t r = s.dense_rank(c_.dense_slot, n);
    return r < 0 || r == empty_rank_ ? sum_.size() - 1 : static_cast<size_t>(r);
  }
  const Snapshot& snap_;
  const PodTopologySpread::State& st_;
  const Constraint& c_;
  std::vector<int64_t> sum_;
  std::vector<int32_t> nodes_;
  int32_t empty_rank_ = -1;  // rank of "" in the key's column, -1 if no node has it
  std::map<int32_t, Entry> by_domain_;
};

// A table for the arena; with `nodes`, each domain's registering nodes too
// (Score's tables: prescore_feasible_since reads them).
std::vector<DomainCount> to_table(const std::map<int32_t, DomainTally::Entry>& m, bool nodes) {
  std::vector<DomainCount> out;
  out.reserve(m.size());
  for (const auto& [v, e] : m) out.push_back(DomainCount{v, nodes ? e.nodes : 0, e.sum});
  return out;
}

// Score's counts can come from the snapshot's per-domain sums: every node
// with the key counts (no inclusion policy applies, and no other key can
// make a node not count). The sums, or nullptr.
const std::vector<int64_t>* score_sums(const Snapshot& snap, const PodTopologySpread::State& st, const Constraint& c,
                                       size_t constraints) {
  if (c.hostname || c.matcher < 0 || (c.honor_affinity && st.affinity_applies) || c.honor_taints ||
      (st.require_all && constraints > 1))
    return nullptr;
  return snap.topology_domain_sums(static_cast<uint32_t>(c.matcher), c.key);
}

}  // namespace

void PodTopologySpread::intern(Snapshot& snap, const Pod& pod, const ProfileConfig& profile,
                               const ClusterObjects* objects) {
  // The last pod interned here with the same inputs registered the same
  // matchers and domain sums (SamePodKey).
  thread_local SamePodKey last;
  thread_local std::vector<uint32_t> hostname_rows;  // its hard hostname constraints' matchers
  if (PodTopologySpread::same_pod_memo && last.matches(snap, profile.pod_topology_spread_args, pod)) {
    for (const uint32_t row : hostname_rows) snap.refresh_least_topology_count(row);
    return;
  }
  last.valid = false;
  hostname_rows.clear();
  // One batch: the snapshot counts every new matcher in one walk over the pods.
  std::vector<std::vector<Snapshot::PodMatchClause>> matchers;
  std::vector<Built> built;
  for (const char* action : {"DoNotSchedule", "ScheduleAnyway"})
    for (Built& b : constraints_for(pod, profile.pod_topology_spread_args, objects, action))
      if (counts_pods(b)) {
        b.score = std::string_view(action) == "ScheduleAnyway";
        built.push_back(std::move(b));
      }
  matchers.reserve(built.size());
  for (const Built& b : built)
    matchers.push_back({Snapshot::PodMatchClause{false, {pod.namespace_name}, *b.selector}});
  if (matchers.empty()) return;
  const std::vector<uint32_t> rows = snap.topology_matchers(matchers, false);
  // Score's per-domain counts read the sums (prescore_feasible), and so do
  // PreFilter's hard ones where they can (hard_from_sums).
  for (size_t i = 0; i < built.size(); ++i) {
    if (built[i].key != kHostnameKey) {
      snap.register_topology_domain_sums(rows[i], snap.string_id(built[i].key));
    } else if (!built[i].score) {
      // PreFilter's minimum over every node's counter, kept by the snapshot.
      snap.refresh_least_topology_count(rows[i]);
      hostname_rows.push_back(rows[i]);
    }
  }
  // A key no string id names yet (no node or pod carries it) registered no
  // sums: a later pod interns it without a new structure version, so this
  // pod's work is not kept.
  if (std::none_of(built.begin(), built.end(), [&](const Built& b) { return snap.string_id(b.key) == kNoId; }))
    last.take(snap, profile.pod_topology_spread_args, pod);
}

namespace {

// The least of n int32 counters, upstream's critical paths' MaxInt32 when
// n is 0: one min per counter in a loop the compiler vectorizes, compiled
// for each SIMD target (plugins/simd_dispatch.hpp): baseline x86-64 has no
// packed int32 min (SSE4.1's), and its compare-and-blend ran at 2.2
// instructions a node, 11,000 a hard hostname-spreading pod at 5,000
// nodes, a fifth of a cache hit's.
[[gnu::always_inline]] inline int32_t least_of_body(const int32_t* __restrict v, uint32_t n) {
  int32_t least = INT32_MAX;
  for (uint32_t i = 0; i < n; ++i) least = std::min(least, v[i]);
  return least;
}
int32_t least_of_baseline(const int32_t* v, uint32_t n) { return least_of_body(v, n); }
#if BULKSCORE_SIMD_X86
BULKSCORE_TARGET_AVX2 int32_t least_of_avx2(const int32_t* v, uint32_t n) { return least_of_body(v, n); }
BULKSCORE_TARGET_AVX512 int32_t least_of_avx512(const int32_t* v, uint32_t n) { return least_of_body(v, n); }
#endif
int32_t least_of(const int32_t* v, uint32_t n) {
#if BULKSCORE_SIMD_X86
  const SimdTarget t = simd_target();
  if (t == SimdTarget::Avx512) return least_of_avx512(v, n);
  if (t == SimdTarget::Avx2) return least_of_avx2(v, n);
#endif
  return least_of_baseline(v, n);
}

// The least of c's node counters over every node (n > 0). (Written as the
// walk's int64 min over node_count, it compiled to a scalar
// compare-and-move chain: 6% of a hard hostname-spreading pod at 5,000
// nodes.)
// The snapshot keeps it between rises (least_topology_count, refreshed by
// intern); else the walk.
int64_t least_node_count(const Snapshot& snap, const SnapshotView& s, const Constraint& c) {
  if (c.matcher < 0) return 0;  // node_count: no pod counts
  int32_t least = 0;
  if (PodTopologySpread::same_pod_memo && snap.least_topology_count(static_cast<uint32_t>(c.matcher), least))
    return least;
  return least_of(s.topology_counts + static_cast<size_t>(c.matcher) * s.num_nodes, s.num_nodes);
}

// PreFilter's hard tables without the walk over every node, where the walk
// would count every node for every constraint: each hard key has a dense
// column that every node carries, none with the value "" (one domain with
// the missing key), and no inclusion policy applies. A key's domains are
// then every value of its column, each with the snapshot's per-domain sum
// of the constraint's counters (Snapshot::topology_domain_sums, kept
// current by every pod mutation); a hostname key whose values are all
// distinct keeps only the least node counter (counted = 1), as the walk
// does. The tables go into the arena in the walk's order and with its
// bytes; false, with nothing pushed, where the sums cannot serve.
// PodTopologySpreadFilter.HardCountsFromSumsEqualTheWalk holds it to the walk.
bool hard_from_sums(const Snapshot& snap, const SnapshotView& s, const PodTopologySpread::State& st,
                    const std::vector<Built>& hard, std::vector<Constraint>& cs, Arena& arena) {
  const uint32_t n = snap.num_nodes();
  if (!PodTopologySpread::hard_counts_from_sums || n == 0) return false;
  // Scratch kept per thread (windows prepare pods side by side): nothing
  // allocated a pod.
  thread_local std::vector<const std::vector<int64_t>*> sums;
  thread_local std::vector<DomainCount> table;
  sums.assign(cs.size(), nullptr);
  for (size_t i = 0; i < cs.size(); ++i) {
    const Constraint& c = cs[i];
    if (c.key == kNoId || c.dense_slot < 0 || (c.honor_affinity && st.affinity_applies) || c.honor_taints) return false;
    if (snap.dense_label_missing(c.dense_slot) != 0) return false;
    if (st.empty_value != kNoId && snap.dense_label_rank_of(c.dense_slot, st.empty_value) >= 0) return false;
    const std::vector<int32_t>& values = snap.dense_label_values(c.dense_slot);
    if (c.hostname) {
      if (values.size() != n) return false;  // two nodes share a value: the walk's tables
    } else if (c.matcher >= 0) {
      sums[i] = snap.topology_domain_sums(static_cast<uint32_t>(c.matcher), c.key);
      if (!sums[i] || sums[i]->size() != values.size() + 1) return false;
    }
  }
  for (size_t i = 0; i < cs.size(); ++i) {
    Constraint& c = cs[i];
    const std::vector<int32_t>& values = snap.dense_label_values(c.dense_slot);
    const auto min_domains = static_cast<size_t>(std::max(hard[i].min_domains, 0));
    if (c.hostname) {
      c.min_match = n < min_domains ? 0 : least_node_count(snap, s, c);
      c.counted = 1;
      continue;
    }
    table.clear();
    int64_t least = INT32_MAX;
    for (size_t r = 0; r < values.size(); ++r) {
      const int64_t count = sums[i] ? (*sums[i])[r] : 0;
      table.push_back(DomainCount{values[r], 0, count});
      least = std::min(least, count);
    }
    c.min_match = values.size() < min_domains ? 0 : least;
    c.domains = arena.push(table);
  }
  PodTopologySpread::hard_counts_from_sums_taken.fetch_add(1, std::memory_order_relaxed);
  return true;
}

}  // namespace

PrepareResult PodTopologySpread::prepare(const PrepareContext& ctx, State& st, Arena& arena) {
  st = State{};
  st.empty_value = ctx.snapshot.string_id("");
  PrepareResult r;
  const Pod& pod = ctx.pod;
  const PodTopologySpreadArgs& args = ctx.profile.pod_topology_spread_args;
  // The constraints built and compiled (tables empty), or the last pod's
  // prepared here where the inputs are equal (SamePodKey; per thread:
  // windows prepare pods side by side).
  struct Compiled {
    SamePodKey key;
    std::vector<Built> hard, soft;
    std::vector<Constraint> hard_cs, soft_cs;
  };
  thread_local Compiled last;
  if (!same_pod_memo || !last.key.matches(ctx.snapshot, args, pod)) {
    last.key.valid = false;
    last.hard = constraints_for(pod, args, ctx.objects, "DoNotSchedule");
    // PreScore skips at once on an empty snapshot, before building anything.
    last.soft = ctx.snapshot.num_nodes() == 0 ? std::vector<Built>{}
                                              : constraints_for(pod, args, ctx.objects, "ScheduleAnyway");
    last.hard_cs.clear();
    last.soft_cs.clear();
    for (const Built& b : last.soft) last.soft_cs.push_back(compile(ctx.snapshot, pod, b));
    for (const Built& b : last.hard) last.hard_cs.push_back(compile(ctx.snapshot, pod, b));
    // Likewise a compiled key without a string id yet (intern's note).
    const auto unnamed = [](const Constraint& c) { return c.key == kNoId; };
    if (std::none_of(last.hard_cs.begin(), last.hard_cs.end(), unnamed) &&
        std::none_of(last.soft_cs.begin(), last.soft_cs.end(), unnamed))
      last.key.take(ctx.snapshot, args, pod);
  }
  const std::vector<Built>& hard = last.hard;
  const std::vector<Built>& soft = last.soft;
  if (hard.empty()) r.prefilter = Code::Skip;
  if (soft.empty()) r.skip_score = true;
  if (hard.empty() && soft.empty()) return r;

  (void)NodeAffinity::prepare(ctx, st.affinity, arena);
  st.affinity.has_added_required = false;  // GetRequiredNodeAffinity(pod): the pod's own terms only
  st.affinity_applies = st.affinity.node_selector.count > 0 || st.affinity.has_required;
  (void)TaintToleration::prepare(ctx, st.taints, arena);
  st.require_all = !pod.topology_spread_constraints.empty() || args.defaulting_type != "System";

  st.soft_prepared = arena.push(last.soft_cs);
  st.soft = st.soft_prepared;

  if (!hard.empty()) {
    // PreFilter over every node: a node counts if it has every hard key; per
    // constraint, if it passes the inclusion policies; each such node makes
    // its domain exist, even with no matching pod.
    thread_local std::vector<Constraint> cs;  // scratch, as hard_from_sums'
    cs = last.hard_cs;
    if (hard_from_sums(ctx.snapshot, ctx.view, st, hard, cs, arena)) {
      st.hard = arena.push(cs);
      return r;
    }
    const SnapshotView& s = ctx.view;
    // A hostname constraint without inclusion policies counts every node
    // with all the hard keys, each its own domain while no two nodes share
    // a hostname value: Filter then reads the node's own counter
    // (counted = 1) and PreFilter keeps only the minimum, instead of a table
    // of one entry per node (the walk below checks that the values are
    // distinct; where they are not, the table as for any key).
    std::vector<uint8_t> direct(cs.size(), 0);
    int32_t direct_slot = -1;
    for (size_t i = 0; i < cs.size(); ++i) {
      const Constraint& c = cs[i];
      if (c.hostname && c.dense_slot >= 0 && !(c.honor_affinity && st.affinity_applies) && !c.honor_taints) {
        direct[i] = 1;
        direct_slot = c.dense_slot;
      }
    }
    std::vector<uint8_t> seen;
    if (direct_slot >= 0) seen.assign(ctx.snapshot.dense_label_values(direct_slot).size(), 0);
    bool shared_hostname = false;
    std::vector<int64_t> direct_min(cs.size(), INT32_MAX);  // upstream's critical paths start at MaxInt32
    int64_t with_keys = 0;
    std::vector<DomainTally> tallies;
    tallies.reserve(cs.size());
    for (const Constraint& c : cs) tallies.emplace_back(ctx.snapshot, st, c);
    for (uint32_t n = 0; n < s.num_nodes; ++n) {
      if (direct_slot >= 0) {
        const int32_t r = s.dense_rank(direct_slot, n);
        if (r >= 0) {
          shared_hostname = shared_hostname || seen[static_cast<size_t>(r)];
          seen[static_cast<size_t>(r)] = 1;
        }
      }
      if (!has_all_keys(s, cs, n)) continue;
      ++with_keys;
      for (size_t i = 0; i < cs.size(); ++i) {
        if (direct[i])
          direct_min[i] = std::min(direct_min[i], node_count(s, cs[i], n));
        else if (included(s, st, arena.data(), cs[i], n))
          tallies[i].add(s, n, node_count(s, cs[i], n));
      }
    }
    if (shared_hostname) {
      // Two nodes with one hostname value are one domain: tables after all.
      for (uint32_t n = 0; n < s.num_nodes; ++n) {
        if (!has_all_keys(s, cs, n)) continue;
        for (size_t i = 0; i < cs.size(); ++i)
          if (direct[i]) tallies[i].add(s, n, node_count(s, cs[i], n));
      }
      std::fill(direct.begin(), direct.end(), 0);
    }
    for (size_t i = 0; i < cs.size(); ++i) {
      if (direct[i]) {
        // Fewer domains than minDomains (none at all included): the global minimum is 0.
        cs[i].min_match = with_keys < hard[i].min_domains ? 0 : direct_min[i];
        cs[i].counted = 1;
        continue;
      }
      const std::map<int32_t, DomainTally::Entry> domains = tallies[i].domains();
      int64_t min = INT32_MAX;  // upstream's critical paths start at MaxInt32
      for (const auto& kv : domains) min = std::min(min, kv.second.sum);
      if (static_cast<int64_t>(domains.size()) < hard[i].min_domains) min = 0;
      cs[i].min_match = min;
      cs[i].domains = arena.push(to_table(domains, false));
    }
    st.hard = arena.push(cs);
  }
  return r;
}

void PodTopologySpread::prescore_feasible(const Snapshot& snap, State& st, Arena& arena, const uint32_t* feasible,
                                          uint32_t count) {
  if (st.soft_prepared.count == 0) return;
  const SnapshotView s = snap.view();
  std::vector<Constraint> cs(st.soft_prepared.data(arena.data()),
                             st.soft_prepared.data(arena.data()) + st.soft_prepared.count);
  // Domains registered from the feasible nodes (a missing key reads as "",
  // which only System defaults let through), and the ignored nodes.
  std::vector<DomainTally> tallies;
  tallies.reserve(cs.size());
  for (const Constraint& c : cs) tallies.emplace_back(snap, st, c);
  uint32_t ignored = 0;
  for (uint32_t k = 0; k < count; ++k) {
    const uint32_t n = feasible[k];
    if (st.require_all && !has_all_keys(s, cs, n)) {
      ++ignored;
      continue;
    }
    for (size_t i = 0; i < cs.size(); ++i)
      if (!cs[i].hostname) tallies[i].add(s, n, 0);
  }
  // Counting over every node of the snapshot, into the registered domains:
  // from the snapshot's per-domain sums where they serve, else node by node.
  std::vector<uint8_t> per_node(cs.size(), 0);
  bool any_per_node = false;
  for (size_t i = 0; i < cs.size(); ++i) {
    if (cs[i].hostname || cs[i].matcher < 0) continue;  // a selector that counts no pod: zeros
    const std::vector<int64_t>* sums = score_sums(snap, st, cs[i], cs.size());
    if (sums && tallies[i].set_from_sums(*sums, !st.require_all)) continue;
    per_node[i] = 1;
    any_per_node = true;
  }
  for (uint32_t n = 0; any_per_node && n < s.num_nodes; ++n) {
    if (st.require_all && !has_all_keys(s, cs, n)) continue;
    for (size_t i = 0; i < cs.size(); ++i) {
      if (!per_node[i] || !included(s, st, arena.data(), cs[i], n)) continue;
      tallies[i].add_if_registered(s, n, node_count(s, cs[i], n));
    }
  }
  for (size_t i = 0; i < cs.size(); ++i) {
    const std::map<int32_t, DomainTally::Entry> domains =
        cs[i].hostname ? std::map<int32_t, DomainTally::Entry>{} : tallies[i].domains();
    cs[i].counted = count - ignored;
    const size_t size = cs[i].hostname ? cs[i].counted : domains.size();
    cs[i].weight = std::log(static_cast<double>(size + 2));
    cs[i].domains = arena.push(to_table(domains, true));
  }
  st.soft = arena.push(cs);
}

bool PodTopologySpread::prescore_feasible_since(const Snapshot& snap, State& st, Arena& arena, const State& prev,
                                                const uint8_t* prev_arena, const uint32_t* left, uint32_t n_left,
                                                uint32_t count) {
  if (st.soft_prepared.count == 0) return true;  // nothing to build, as prescore_feasible
  if (prev.soft.count != st.soft_prepared.count) return false;
  const SnapshotView s = snap.view();
  // The pod's own constraints (equal to prev's as prepared), prev's tables.
  std::vector<Constraint> cs(st.soft_prepared.data(arena.data()),
                             st.soft_prepared.data(arena.data()) + st.soft_prepared.count);
  const Constraint* before = prev.soft.data(prev_arena);
  std::vector<std::vector<DomainCount>> tables(cs.size());
  for (size_t i = 0; i < cs.size(); ++i) {
    cs[i].counted = before[i].counted;
    tables[i].assign(before[i].domains.data(prev_arena), before[i].domains.data(prev_arena) + before[i].domains.count);
  }
  // The leaving nodes leave the domains they registered (an ignored node
  // registered none).
  for (uint32_t k = 0; k < n_left; ++k) {
    const uint32_t n = left[k];
    if (st.require_all && !has_all_keys(s, cs, n)) continue;
    for (size_t i = 0; i < cs.size(); ++i) {
      --cs[i].counted;
      if (cs[i].hostname) continue;
      std::vector<DomainCount>& t = tables[i];
      const int32_t d = domain_of(st, node_value(s, cs[i], n));
      const auto it = std::lower_bound(t.begin(), t.end(), d,
                                       [](const DomainCount& e, int32_t v) { return e.value < v; });
      if (it == t.end() || it->value != d || it->nodes <= 0) return false;  // not prev's feasible set
      if (--it->nodes == 0) t.erase(it);
    }
  }
  for (size_t i = 0; i < cs.size(); ++i) {
    if (!cs[i].hostname && cs[i].matcher < 0) {
      for (DomainCount& e : tables[i]) e.count = 0;  // a selector that counts no pod
    } else if (!cs[i].hostname) {
      const std::vector<int64_t>* sums = score_sums(snap, st, cs[i], cs.size());
      if (!sums || cs[i].dense_slot < 0) return false;
      for (DomainCount& e : tables[i]) e.count = domain_sum(snap, st, cs[i], *sums, e.value, !st.require_all);
    }
    const size_t size = cs[i].hostname ? cs[i].counted : tables[i].size();
    cs[i].weight = std::log(static_cast<double>(size + 2));
    cs[i].domains = arena.push(tables[i]);
  }
  (void)count;  // the feasible nodes not ignored are prev's minus the leaving ones
  st.soft = arena.push(cs);
  return true;
}

void PodTopologySpread::removal_counts(const RemovalContext& ctx, const State& st, const uint8_t* arena, uint32_t node,
                                       const uint32_t* pods, uint32_t count, int64_t* out) {
  const uint32_t slots = removal_slots(st);
  std::fill(out, out + static_cast<size_t>(count) * slots, int64_t{0});
  const SnapshotView s = ctx.snapshot.view();
  const Constraint* cs = st.hard.data(arena);  // read in place: one call per node of the dry run
  // A node PreFilter did not count (a hard key missing) added none of its
  // pods to any table.
  if (!has_all_keys(s, cs, slots, node)) return;
  for (uint32_t i = 0; i < slots; ++i) {
    if (cs[i].matcher < 0 || !included(s, st, arena, cs[i], node)) continue;
    const auto m = static_cast<uint32_t>(cs[i].matcher);
    for (uint32_t k = 0; k < count; ++k)
      if (ctx.snapshot.topology_matcher_counts_slot(m, ctx.snapshot.pod_slot(pods[k])))
        out[static_cast<size_t>(k) * slots + i] = 1;
  }
}

void PodTopologySpread::reasons(uint64_t bits, const Snapshot&, const State&, const uint8_t*, uint32_t,
                                std::vector<std::string>& out) {
  if (bits & kMissingLabel)
    out.push_back("node(s) didn't match pod topology spread constraints (missing required label)");
  if (bits & kSkew) out.push_back("node(s) didn't match pod topology spread constraints");
}

void PodTopologySpread::filter_nodes(const SnapshotView& s, const State& st, const uint8_t* arena,
                                     const uint32_t* nodes, uint32_t count, uint8_t* fails) {
  const Constraint* cs = st.hard.data(arena);
  const auto by_rule = [&] {
    for (uint32_t i = 0; i < count; ++i) fails[i] = static_cast<uint8_t>(!filter(s, st, arena, nodes[i]).ok());
  };
  // At most this many failing domains per constraint are compared per node.
  constexpr size_t kMaxFailing = 16;
  int32_t failing[kMaxFailing];
  for (uint32_t k = 0; k < st.hard.count; ++k)
    if (cs[k].key == kNoId || cs[k].dense_slot < 0) return by_rule();
  for (uint32_t i = 0; i < count; ++i) fails[i] = 0;
  for (uint32_t k = 0; k < st.hard.count; ++k) {
    const Constraint& c = cs[k];
    const int32_t* values = s.dense_labels + static_cast<size_t>(c.dense_slot) * s.num_nodes;
    const int64_t self = c.self_match ? 1 : 0;
    // A node lacking the key fails (kMissingLabel); one with every key
    // reads its counts below.
    for (uint32_t i = 0; i < count; ++i) fails[i] |= static_cast<uint8_t>(values[nodes[i]] == kNoId);
    if (c.counted) {
      // The node's own counter (0 without a matcher); a node lacking a
      // hard key has already failed, whatever it reads.
      if (c.matcher < 0) {
        if (self - c.min_match > c.max_skew) return by_rule();
        continue;
      }
      const int32_t* counter = s.topology_counts + static_cast<size_t>(c.matcher) * s.num_nodes;
      for (uint32_t i = 0; i < count; ++i)
        fails[i] |= static_cast<uint8_t>(int64_t(counter[nodes[i]]) + self - c.min_match > c.max_skew);
      continue;
    }
    // A value missing from the table counts 0.
    if (self - c.min_match > c.max_skew) return by_rule();
    size_t n_failing = 0;
    const DomainCount* d = c.domains.data(arena);
    for (uint32_t j = 0; j < c.domains.count; ++j) {
      if (d[j].count + self - c.min_match <= c.max_skew) continue;
      // The "" domain (kNoId in the table) is the nodes whose value is "".
      const int32_t v = d[j].value == kNoId ? st.empty_value : d[j].value;
      if (v == kNoId) continue;  // no node has "" (and one lacking the key failed above)
      if (n_failing == kMaxFailing) return by_rule();
      failing[n_failing++] = v;
    }
    for (size_t j = 0; j < n_failing; ++j) {
      const int32_t v = failing[j];
      for (uint32_t i = 0; i < count; ++i) fails[i] |= static_cast<uint8_t>(values[nodes[i]] == v);
    }
  }
}

bool PodTopologySpread::filter_count_changes_gated(const Snapshot& snap, const State& prev, const uint8_t* prev_arena,
                                                   uint32_t prev_begin, uint32_t prev_end, const State& st,
                                                   const uint8_t* arena, uint32_t begin, uint32_t end,
                                                   std::vector<uint32_t>* nodes, std::vector<GateFlip>* gates) {
  // The same state (spans at the same offsets: the same layout) and as
  // many prepared bytes.
  if (std::memcmp(&prev, &st, sizeof(State)) != 0 || prev_end - prev_begin != end - begin || prev_begin != begin)
    return false;
  // The previous bytes with the new counts written in (each table's, and
  // each constraint's global minimum) must be the new bytes: nothing else
  // differs (every other field of each constraint, and the same domains,
  // in order).
  // Scratch kept per thread: this runs several times a pod on the cache's
  // hit path.
  thread_local std::vector<uint8_t> patched;
  patched.assign(prev_arena + prev_begin, prev_arena + prev_end);
  const auto patch = [&](size_t offset, const void* from, size_t bytes) {
    if (offset < begin || offset + bytes > end) return false;
    std::memcpy(patched.data() + (offset - begin), from, bytes);
    return true;
  };
  // Per constraint, the domain values whose Filter verdict flipped: a
  // node's verdict on a constraint is count + self - minimum <= maxSkew
  // with its domain's count, so a count or a minimum that moved without
  // flipping it changes no verdict.
  // Per flipped constraint: its index and its flipped values' range in
  // `flipped_values`.
  struct Flipped {
    uint32_t constraint, first, last;
  };
  thread_local std::vector<Flipped> changed;
  thread_local std::vector<int32_t> flipped_values;
  changed.clear();
  flipped_values.clear();
  if (gates) gates->clear();
  const int64_t gate = gates ? gate_constraint(st, arena) : -1;
  for (uint32_t i = 0; i < st.hard.count; ++i) {
    const Constraint& a = st.hard.data(prev_arena)[i];
    const Constraint& b = st.hard.data(arena)[i];
    if (a.domains.offset != b.domains.offset || a.domains.count != b.domains.count) return false;
    const int64_t self = b.self_match ? 1 : 0;
    const auto passes = [&](int64_t count, int64_t min) { return count + self - min <= b.max_skew; };
    if (a.min_match != b.min_match) {
      // A node's own counter (counted) is in no table here: which nodes
      // flip would take a walk over every counter.
      if (b.counted) return false;
      // A value missing from the table counts 0: such nodes would flip too.
      if (passes(0, a.min_match) != passes(0, b.min_match)) return false;
      const size_t at = st.hard.offset + i * sizeof(Constraint) + offsetof(Constraint, min_match);
      if (!patch(at, &b.min_match, sizeof b.min_match)) return false;
    }
    const DomainCount* da = a.domains.data(prev_arena);
    const DomainCount* db = b.domains.data(arena);
    const auto first = static_cast<uint32_t>(flipped_values.size());
    for (uint32_t j = 0; j < b.domains.count; ++j) {
      if (da[j].value != db[j].value || da[j].nodes != db[j].nodes) return false;
      const bool now = passes(db[j].count, b.min_match);
      if (passes(da[j].count, a.min_match) == now) continue;
      if (i == gate)
        gates->push_back(GateFlip{db[j].value, now});
      else
        flipped_values.push_back(db[j].value);
    }
    if (b.domains.count && !patch(b.domains.offset, db, b.domains.count * sizeof(DomainCount))) return false;
    const auto last = static_cast<uint32_t>(flipped_values.size());
    if (last != first) changed.push_back(Flipped{i, first, last});
  }
  if (std::memcmp(patched.data(), arena + begin, patched.size()) != 0) return false;
  if (!nodes || changed.empty()) return true;
  // The nodes of the flipped domains (a node's domain is its value of the
  // constraint's key, "" and a missing label one: domain_of), ascending.
  const SnapshotView s = snap.view();
  if (changed.size() == 1) {
    // The common case, one constraint: its flipped domains are real values
    // (not "" nor a missing label) of its dense column.
    const Constraint& c = st.hard.data(arena)[changed[0].constraint];
    const int32_t* const values = flipped_values.data() + changed[0].first;
    const int32_t* const values_end = flipped_values.data() + changed[0].last;
    const bool real =
        std::none_of(values, values_end, [&](int32_t v) { return v == kNoId || v == st.empty_value; });
    if (c.key != kNoId && c.dense_slot >= 0 && real) {
      if (values_end - values == 1) {
        // One domain (a placement's): its nodes, listed by the snapshot.
        if (const int32_t r = snap.dense_label_rank_of(c.dense_slot, values[0]); r >= 0) {
          const auto [first, last] = snap.dense_label_nodes(c.dense_slot, r);
          nodes->insert(nodes->end(), first, last);
        }
      } else {
        // Several (the domains a risen minimum lets back in): flagged by
        // their rank in the column, one lookup per node.
        thread_local std::vector<uint8_t> flipped;
        flipped.assign(snap.dense_label_values(c.dense_slot).size(), 0);
        for (const int32_t* v = values; v != values_end; ++v)
          if (const int32_t r = snap.dense_label_rank_of(c.dense_slot, *v); r >= 0) flipped[static_cast<size_t>(r)] = 1;
        const int32_t* ranks = s.dense_label_ranks + static_cast<size_t>(c.dense_slot) * s.num_nodes;
        for (uint32_t node = 0; node < s.num_nodes; ++node)
          if (ranks[node] >= 0 && flipped[static_cast<size_t>(ranks[node])]) nodes->push_back(node);
      }
      return true;
    }
  }
  for (uint32_t node = 0; node < snap.num_nodes(); ++node)
    for (const Flipped& f : changed) {
      const Constraint& c = st.hard.data(arena)[f.constraint];
      const int32_t v = node_value(s, c, node);
      if (v != kNoId && std::binary_search(flipped_values.data() + f.first, flipped_values.data() + f.last,
                                           domain_of(st, v))) {
        nodes->push_back(node);
        break;
      }
    }
  return true;
}

}  // namespace bulkscore::plugins
