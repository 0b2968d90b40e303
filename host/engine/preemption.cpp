// PostFilter as kube-scheduler v1.35.4 runs it for the default profile:
// DynamicResources (for a pod without claims, a message and no more), then
// DefaultPreemption (pkg/scheduler/framework/preemption and
// plugins/defaultpreemption): eligibility, the potential nodes, the dry run
// on each (SelectVictimsOnNode: remove every lower-priority pod, check
// Filter, reprieve the most important first, PDB-violating ones before the
// others), the choice among candidates, and then what a cluster does:
// the victims leave, the budgets that covered them are recomputed, and the
// pod is placed on its nominated node. docs/plugins.md has the rules and
// where bulkscore is deterministic where upstream is not. Two dry runs with
// the same decisions: the bulk one (one PreFilter state, the nodes' columns
// and the removed pods' counts in the nodes' domains kept per worker, in
// parallel) where every Filter the pod runs reads only its node or
// PreFilter's domain tables, and the exact one (a snapshot copy, PreFilter
// afresh per check) otherwise; tests/test_preemption.cpp holds them to each other and
// to a node-by-node reference.
#include <algorithm>
#include <iterator>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <string_view>

#include "host/engine/engine.hpp"
#include "host/engine/executor.hpp"
#include "host/input/labels.hpp"
#include "host/input/pod_resources.hpp"
#include "host/input/priority.hpp"
#include "host/input/quote.hpp"
#include "plugins/prepare.hpp"

namespace bulkscore {
namespace {

constexpr const char* kNotHelpful = "Preemption is not helpful for scheduling";
constexpr const char* kNoVictims = "No preemption victims found for incoming pod";
// Fewer potential nodes than this are dry-run on the calling thread alone
// (a worker's copy of the patched columns and the hand-off cost more than
// they do).
constexpr int64_t kMinParallelDryRun = 64;

// util.MoreImportantPod: higher priority first; at equal priority the one
// that started earlier (a pod without a start time compares as the
// engine's "now", which bulkscore stamps at load and placement).
bool more_important(const Pod& a, const Pod& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  return a.start_time_ns.value_or(INT64_MAX) < b.start_time_ns.value_or(INT64_MAX);
}

// A stable sort for the few pods of one node, without the temporary
// buffer std::stable_sort allocates on every call.
template <class T, class Less>
void small_stable_sort(std::vector<T>& v, Less less) {
  for (size_t i = 1; i < v.size(); ++i) {
    T x = v[i];
    size_t j = i;
    for (; j > 0 && less(x, v[j - 1]); --j) v[j] = v[j - 1];
    v[j] = x;
  }
}

// A PDB covers a pod: same namespace, a selector that is not empty and
// matches the pod's labels (an empty or missing selector covers nothing).
bool pdb_covers(const PodDisruptionBudget& b, const Pod& pod) {
  if (b.namespace_name != pod.namespace_name || !b.selector) return false;
  if (b.selector->match_labels.empty() && b.selector->match_expressions.empty()) return false;
  return selector_matches(*b.selector, pod.labels);
}

bool disrupted(const PodDisruptionBudget& b, const Pod& pod) {
  return std::binary_search(b.disrupted_pods.begin(), b.disrupted_pods.end(), pod.name);
}

// filterPodsWithPDBViolation: in the given order, each covering budget's
// disruptionsAllowed is charged per pod not already in its disruptedPods;
// a pod that drives any of them below zero is violating.
void split_by_pdb(const std::vector<const Pod*>& pods, const std::vector<PodDisruptionBudget>& pdbs,
                  std::vector<size_t>& violating, std::vector<size_t>& other) {
  std::vector<int64_t> allowed(pdbs.size());
  for (size_t i = 0; i < pdbs.size(); ++i) allowed[i] = pdbs[i].disruptions_allowed;
  for (size_t p = 0; p < pods.size(); ++p) {
    bool violated = false;
    if (!pods[p]->labels.empty())
      for (size_t i = 0; i < pdbs.size(); ++i) {
        if (!pdb_covers(pdbs[i], *pods[p]) || disrupted(pdbs[i], *pods[p])) continue;
        if (--allowed[i] < 0) violated = true;
      }
    (violated ? violating : other).push_back(p);
  }
}

struct NodeStatus {
  Code code = Code::Success;
  std::vector<std::string> reasons;
  // The reason is kNoVictims, held as a flag: a pod that outranks no pod
  // gets it on every potential node, and a string apiece (and its count in
  // fit_error_text's map) cost more than the rest of the dry run.
  bool no_victims = false;

  static NodeStatus without_victims() {
    NodeStatus s;
    s.code = Code::UnschedulableAndUnresolvable;
    s.no_victims = true;
    return s;
  }
};

struct Candidate {
  uint32_t node = 0;
  // Most important first: the engine's snapshot's pods, valid until it
  // changes (the evictions copy them first).
  std::vector<const Pod*> victims;
  int64_t pdb_violations = 0;
};

// "0/N nodes are available: <count> <reason>, ... ." over `statuses` (the
// nodes the dry run looked at) and `absent` for every other node.
std::string fit_error_text(uint32_t all, const std::vector<NodeStatus>& statuses, const char* absent) {
  std::map<std::string, uint64_t> counts;
  uint64_t no_victims = 0;
  for (const NodeStatus& s : statuses) {
    no_victims += s.no_victims;
    for (const std::string& r : s.reasons) ++counts[r];
  }
  if (no_victims) counts[kNoVictims] += no_victims;
  if (statuses.size() < all) counts[absent] += all - statuses.size();
  std::vector<std::string> parts;
  parts.reserve(counts.size());
  for (const auto& [reason, n] : counts) parts.push_back(std::to_string(n) + " " + reason);
  std::sort(parts.begin(), parts.end());
  std::string msg = "0/" + std::to_string(all) + " nodes are available:";
  if (!parts.empty()) {
    msg += " ";
    for (size_t i = 0; i < parts.size(); ++i) msg += (i ? ", " : "") + parts[i];
    msg += ".";
  }
  return msg;
}

// The disruption controller's view after `pod` left: a budget that counted
// it healthy has one fewer; one that listed it as disrupted drops the entry.
void charge_pdbs(std::vector<PodDisruptionBudget>& pdbs, const Pod& pod) {
  for (PodDisruptionBudget& b : pdbs) {
    if (!pdb_covers(b, pod)) continue;
    auto it = std::lower_bound(b.disrupted_pods.begin(), b.disrupted_pods.end(), pod.name);
    if (it != b.disrupted_pods.end() && *it == pod.name)
      b.disrupted_pods.erase(it);
    else if (b.current_healthy > 0)
      --b.current_healthy;
    b.disruptions_allowed = std::max(0, b.current_healthy - b.desired_healthy);
  }
}

}  // namespace

Pod Engine::admitted(const Pod& pod) const {
  Pod p = pod;
  resolve_pod_priority(p, objects_);
  return p;
}

// Whether the node runs a pod of lower priority than `priority`: a pod
// that outranks none there has no victims on it (SelectVictimsOnNode).
static bool outranks_a_pod_on(const Snapshot& snap, uint32_t node, int32_t priority) {
  for (uint32_t id : snap.pods_on_node(node))
    if (snap.pod_priority(id) < priority) return true;
  return false;
}

// One node's dry run on `scratch` (a copy of the snapshot the caller keeps
// as it was between nodes): SelectVictimsOnNode. Returns the candidate, or
// the node's status when it is none.
// `live`: the engine's snapshot the scratch was copied from (the victims
// point into it).
static bool select_victims(Snapshot& scratch, const Snapshot& live, const Pod& pod, const ProfilePlan& plan,
                           const EngineOptions& options, const ClusterObjects& objects, uint32_t node, Candidate& out,
                           NodeStatus& status) {
  // The lower-priority pods (IsEligiblePod: any), in slot order.
  std::vector<uint32_t> ids;
  for (uint32_t id : scratch.pods_on_node(node))
    if (scratch.pod_priority(id) < pod.priority) ids.push_back(id);
  if (ids.empty()) {
    status = NodeStatus::without_victims();
    return false;
  }
  // The node's pods were not touched since the scratch was copied from
  // `live` (each node is dry-run once): their ids are live's.
  const std::vector<uint32_t> live_ids = ids;
  std::vector<Pod> removed;
  removed.reserve(ids.size());
  for (uint32_t id : ids) removed.push_back(scratch.remove_pod(id));
  // Filter on the node without them, with PreFilter's state made afresh
  // from the snapshot as it now is (what upstream's RemovePod extensions
  // keep up to date incrementally).
  const auto passes = [&](NodeStatus* why) {
    const PodQuery fresh = prepare_pod_query(pod, scratch, plan, options.tie_break, options.seed, &objects);
    if (fresh.rejected) {
      if (why) *why = {Code::UnschedulableAndUnresolvable, {fresh.prefilter_message}};
      return false;
    }
    const PodQueryView v = fresh.view();
    const NodeVerdict verdict = filter_node(scratch.view(), v, node);
    if (verdict.feasible()) return true;
    if (why) {
      *why = NodeStatus{verdict.code, {}};
      filter_reasons(verdict.plugin, verdict.reasons, scratch, v, node, why->reasons);
    }
    return false;
  };
  const auto restore = [&](const std::vector<size_t>& which) {
    for (size_t i : which) scratch.add_pod(removed[i], node);
  };
  std::vector<size_t> all(removed.size());
  std::iota(all.begin(), all.end(), size_t{0});
  if (!passes(&status)) {
    restore(all);
    return false;
  }
  // Most important first; equals keep their slot order (upstream's
  // sort.Slice leaves their order unspecified).
  std::stable_sort(all.begin(), all.end(), [&](size_t a, size_t b) { return more_important(removed[a], removed[b]); });
  std::vector<Pod> ordered;
  std::vector<const Pod*> in_live;
  ordered.reserve(all.size());
  for (size_t i : all) {
    ordered.push_back(removed[i]);
    in_live.push_back(&live.pod(live_ids[i]));
  }
  removed = std::move(ordered);
  std::vector<size_t> violating, other;
  split_by_pdb(in_live, objects.pdbs, violating, other);
  std::vector<size_t> victims;
  const auto reprieve = [&](size_t i) {
    scratch.add_pod(removed[i], node);
    if (passes(nullptr)) return true;
    const uint32_t id = scratch.find_pod(removed[i].namespace_name, removed[i].name);
    scratch.remove_pod(id);
    victims.push_back(i);
    return false;
  };
  int64_t violations = 0;
  for (size_t i : violating)
    if (!reprieve(i)) ++violations;
  for (size_t i : other) reprieve(i);
  restore(victims);  // the scratch snapshot as it was
  if (victims.empty()) {
    status = {Code::Error, {"expected at least one victim pod on node " + quote_for_message(scratch.node_name(node))}};
    return false;
  }
  if (!violating.empty() && !other.empty())
    std::stable_sort(victims.begin(), victims.end(),
                     [&](size_t a, size_t b) { return more_important(removed[a], removed[b]); });
  out.node = node;
  out.pdb_violations = violations;
  out.victims.clear();
  for (size_t i : victims) out.victims.push_back(in_live[i]);
  return true;
}

// What the bulk dry run reads of a node's pods, kept across cycles while the
// node is not in the snapshot's mutation log (the log lists every node a pod
// or node change touched since the last structural change; a structural
// change, a new snapshot or other budgets start afresh). Pod ids of an
// untouched node hold; the Pod objects are read through them.
struct PreemptionCache {
  struct PodEntry {
    uint32_t id = 0;
    int32_t priority = 0;
    int64_t start_ns = 0;  // status.startTime, INT64_MAX without one (more_important's order)
    uint32_t num_ports = 0;
    std::vector<DryRunRequest> requests;  // as the snapshot charged them ("pods" is the pod count's)
    std::vector<uint32_t> budgets;  // the budgets that cover the pod and do not list it as disrupted
  };
  uint64_t version = 0;
  size_t log_pos = 0;
  uint64_t budgets_print = 0;
  std::vector<std::vector<PodEntry>> nodes;
  std::vector<uint8_t> valid;

  static uint64_t print(const std::vector<PodDisruptionBudget>& pdbs) {
    uint64_t h = mix64(pdbs.size() + 1);
    const auto add = [&](const std::string& t) {
      for (const char c : t) h = mix64(h ^ static_cast<uint8_t>(c));
      h = mix64(h ^ 0xffU);
    };
    for (const PodDisruptionBudget& b : pdbs) {
      add(b.namespace_name);
      add(b.name);
      h = mix64(h ^ (b.selector ? 1U : 2U));
      if (b.selector) {
        for (const auto& [k, v] : b.selector->match_labels) {
          add(k);
          add(v);
        }
        for (const LabelSelectorRequirement& r : b.selector->match_expressions) {
          add(r.key);
          add(r.op);
          for (const std::string& v : r.values) add(v);
          add("|");
        }
      }
      for (const std::string& d : b.disrupted_pods) add(d);
      add("#");
    }
    return h;
  }

  // Forgets the nodes touched since the last call.
  void sync(const Snapshot& snap, const std::vector<PodDisruptionBudget>& pdbs) {
    const uint64_t pp = print(pdbs);
    const std::vector<uint32_t>& log = snap.mutation_log();
    if (snap.structure_version() != version || pp != budgets_print || nodes.size() != snap.num_nodes() ||
        log.size() < log_pos) {
      nodes.assign(snap.num_nodes(), {});
      valid.assign(snap.num_nodes(), 0);
    } else {
      for (size_t i = log_pos; i < log.size(); ++i) valid[log[i]] = 0;
    }
    version = snap.structure_version();
    budgets_print = pp;
    log_pos = log.size();
  }

  // The node's entries, in slot order (one worker per node at a time).
  const std::vector<PodEntry>& node(const Snapshot& snap, const std::vector<PodDisruptionBudget>& pdbs, uint32_t n) {
    if (valid[n]) return nodes[n];
    std::vector<PodEntry>& out = nodes[n];
    out.clear();
    for (uint32_t id : snap.pods_on_node(n)) {
      const Pod& p = snap.pod(id);
      PodEntry e;
      e.id = id;
      e.priority = p.priority;
      e.start_ns = p.start_time_ns.value_or(INT64_MAX);
      e.num_ports = snap.pod_num_ports(id);
      for (const auto& [name, amount] : pod_requests(p))
        if (name != "pods") e.requests.push_back({snap.resource_index(name), 0, amount});
      if (!p.labels.empty())
        for (uint32_t i = 0; i < pdbs.size(); ++i)
          if (pdb_covers(pdbs[i], p) && !disrupted(pdbs[i], p)) e.budgets.push_back(i);
      out.push_back(std::move(e));
    }
    valid[n] = 1;
    return out;
  }
};

// The bulk dry run's host side, one per worker: the worker's copies of the
// columns dry_run_node patches (one node's row at a time, put back after:
// the workers share nothing) and the lists of the node at hand, reused node
// after node.
namespace {
struct LocalColumns {
  HostDryRunColumns host;
  std::vector<size_t> lower;
  std::vector<const Pod*> sorted;  // the node's victims, most important first
  std::vector<DryRunVictim> victims;
  std::vector<DryRunRequest> requests;
  std::vector<uint8_t> removed;
  std::vector<int64_t> allowed;
  // The PreFilter tables' removals (RemovalLayout): what each victim
  // takes (per table plugin, [victim][count], the victims in their dry-run
  // order), the sum over the removed ones, and filter_node's per-slot
  // pointers into it.
  std::vector<int64_t> by_plugin, taken, table_sum;
  std::vector<uint32_t> victim_ids;
  const int64_t* removed_at[kMaxProfilePlugins] = {};
  std::vector<uint32_t> ports_at;
  std::vector<size_t> evicted;
};
}  // namespace

// Where the filter plugins whose Filter reads PreFilter's domain tables
// (FilterReach::kPreFilterTables) get the counts the dry run removes: per
// filter slot of the query, its first count in LocalColumns::table_sum and
// how many (0: a plugin that reads none). Made once per pod.
struct RemovalLayout {
  uint32_t total = 0;
  uint32_t at[kMaxProfilePlugins] = {};
  uint32_t count[kMaxProfilePlugins] = {};

  RemovalLayout(const PodQueryView& qv) {
    for (uint32_t i = 0; i < qv.num_filters; ++i) {
      visit_plugin(qv.filters[i], [&](auto p) {
        using P = decltype(p);
        if constexpr (kFilterReachOf<P> == FilterReach::kPreFilterTables)
          count[i] = P::removal_slots(state_of<P>(qv.states));
      });
      at[i] = total;
      total += count[i];
    }
  }
};

// The plugin of filter slot `i`: what each of `pods` takes from its tables
// on `node` (removal_counts), into `out` ([pod][count]).
static void removal_counts_of(const RemovalContext& ctx, const PodQueryView& qv, uint32_t i, uint32_t node,
                              const std::vector<uint32_t>& pods, int64_t* out) {
  visit_plugin(qv.filters[i], [&](auto p) {
    using P = decltype(p);
    if constexpr (kFilterReachOf<P> == FilterReach::kPreFilterTables)
      P::removal_counts(ctx, state_of<P>(qv.states), qv.arena, node, pods.data(), static_cast<uint32_t>(pods.size()),
                        out);
  });
}

// SelectVictimsOnNode's host part before the dry run: `node`'s pods of lower
// priority than `pod`, most important first (MoreImportantPod; equals in
// slot order), appended to `victims` (their requests to `requests`, host
// ports as the node's ranges in the snapshot's port list, the PDB split of
// filterPodsWithPDBViolation over the cached covering budgets) and their
// Pods to `sorted`. Returns how many; 0: no victims on the node.
static uint32_t prepare_victims(const Snapshot& snap, LocalColumns& lc, PreemptionCache& cache, const Pod& pod,
                                const std::vector<PodDisruptionBudget>& pdbs, uint32_t node,
                                std::vector<DryRunVictim>& victims, std::vector<DryRunRequest>& requests,
                                std::vector<const Pod*>& sorted) {

  const std::vector<PreemptionCache::PodEntry>& entries = cache.node(snap, pdbs, node);
  std::vector<size_t>& lower = lc.lower;  // positions in `entries`, slot order
  std::vector<uint32_t>& ports_at = lc.ports_at;
  lower.clear();
  ports_at.clear();
  uint32_t at = snap.port_offsets()[node];
  for (size_t i = 0; i < entries.size(); ++i) {
    ports_at.push_back(at);
    at += entries[i].num_ports;
    if (entries[i].priority < pod.priority) lower.push_back(i);
  }
  if (lower.empty()) return 0;
  // more_important on the cached keys.
  small_stable_sort(lower, [&](size_t a, size_t b) {
    const PreemptionCache::PodEntry& x = entries[a];
    const PreemptionCache::PodEntry& y = entries[b];
    return x.priority != y.priority ? x.priority > y.priority : x.start_ns < y.start_ns;
  });
  std::vector<int64_t>& allowed = lc.allowed;
  allowed.clear();
  for (size_t i : lower) {
    const PreemptionCache::PodEntry& e = entries[i];
    bool violated = false;
    for (uint32_t b : e.budgets) {
      if (allowed.empty())
        for (const PodDisruptionBudget& x : pdbs) allowed.push_back(x.disruptions_allowed);
      if (--allowed[b] < 0) violated = true;
    }
    victims.push_back({static_cast<uint32_t>(requests.size()), static_cast<uint32_t>(e.requests.size()), ports_at[i],
                       e.num_ports, violated ? 1u : 0u});
    requests.insert(requests.end(), e.requests.begin(), e.requests.end());
    sorted.push_back(&snap.pod(e.id));
  }
  return static_cast<uint32_t>(lower.size());
}

// SelectVictimsOnNode's host part after the dry run: the candidate (its
// victims as upstream lists them: the violating evicted, then the others,
// sorted by MoreImportantPod again when both kinds were there) or the
// node's status, from dry_run_node's answer `r` over the `n` victims.
static bool finish_victims(const Snapshot& snap, const PodQueryView& qv, uint32_t node, const DryRunNodeResult& r,
                           const DryRunVictim* victims, const uint8_t* removed, const Pod* const* sorted, uint32_t n,
                           std::vector<size_t>& evicted, Candidate& out, NodeStatus& status) {
  if (r.status == DryRunStatus::kUnschedulable) {
    status = NodeStatus{r.verdict.code, {}};
    filter_reasons(r.verdict.plugin, r.verdict.reasons, snap, qv, node, status.reasons);
    return false;
  }
  if (r.status == DryRunStatus::kNoVictim) {
    status = {Code::Error, {"expected at least one victim pod on node " + quote_for_message(snap.node_name(node))}};
    return false;
  }
  evicted.clear();
  bool any_violating = false, any_other = false;
  for (uint32_t pass = 0; pass < 2; ++pass)
    for (uint32_t k = 0; k < n; ++k) {
      const bool violating = victims[k].violating != 0;
      (violating ? any_violating : any_other) = true;
      if (violating == (pass == 0) && removed[k]) evicted.push_back(k);
    }
  if (any_violating && any_other)
    small_stable_sort(evicted, [&](size_t a, size_t b) { return more_important(*sorted[a], *sorted[b]); });
  out.node = node;
  out.pdb_violations = r.violations;
  out.victims.clear();
  for (size_t k : evicted) out.victims.push_back(sorted[k]);
  return true;
}

// What each of `node`'s n victims (lc.lower, in their dry-run order, as
// prepare_victims left it) takes from the PreFilter tables in the node's
// domains, appended to `taken` as [victim][layout.total] (the plugins
// answer per plugin, [pod][count]: transposed here).
static void table_removals(const Snapshot& snap, LocalColumns& lc, PreemptionCache& cache, const Pod& pod,
                           const PodQueryView& qv, const RemovalLayout& layout, const ClusterObjects& objects,
                           uint32_t node, uint32_t n, std::vector<int64_t>& taken) {
  const std::vector<PreemptionCache::PodEntry>& entries = cache.node(snap, objects.pdbs, node);
  lc.victim_ids.clear();
  for (size_t i : lc.lower) lc.victim_ids.push_back(entries[i].id);
  std::vector<int64_t>& by_plugin = lc.by_plugin;
  by_plugin.assign(static_cast<size_t>(n) * layout.total, 0);
  const RemovalContext ctx{pod, snap, &objects};
  for (uint32_t f = 0; f < qv.num_filters; ++f)
    if (layout.count[f])
      removal_counts_of(ctx, qv, f, node, lc.victim_ids, by_plugin.data() + static_cast<size_t>(n) * layout.at[f]);
  const size_t first = taken.size();
  taken.resize(first + static_cast<size_t>(n) * layout.total, 0);
  for (uint32_t f = 0; f < qv.num_filters; ++f)
    for (uint32_t k = 0; k < n; ++k)
      for (uint32_t j = 0; j < layout.count[f]; ++j)
        taken[first + static_cast<size_t>(k) * layout.total + layout.at[f] + j] =
            by_plugin[static_cast<size_t>(n) * layout.at[f] + static_cast<size_t>(k) * layout.count[f] + j];
}

// SelectVictimsOnNode without changing any snapshot, on the worker's copies
// of the columns, with the one PreFilter state `qv` (bulk_dry_run
// says when that is upstream's answer): the host's ordering, the shared
// dry_run_node (the CUDA backend runs the same per thread), the host's
// candidate. The same steps, order and outcome as select_victims.
static bool select_victims_local(const Snapshot& snap, LocalColumns& lc, PreemptionCache& cache, const Pod& pod,
                                 const PodQueryView& qv, const RemovalLayout& layout, const ClusterObjects& objects,
                                 uint32_t node, Candidate& out, NodeStatus& status) {
  const std::vector<PodDisruptionBudget>& pdbs = objects.pdbs;
  lc.victims.clear();
  lc.requests.clear();
  lc.sorted.clear();
  const uint32_t n = prepare_victims(snap, lc, cache, pod, pdbs, node, lc.victims, lc.requests, lc.sorted);
  if (n == 0) {
    status = NodeStatus::without_victims();
    return false;
  }
  const SnapshotView base = snap.view();
  if (!lc.host.loaded) lc.host.load(base);
  lc.removed.resize(n);
  // What each victim takes from the PreFilter tables in the node's domains;
  // dry_run_node sums them over the removed ones.
  DryRunTables tables{nullptr, 0, nullptr, nullptr};
  if (layout.total) {
    lc.taken.clear();
    table_removals(snap, lc, cache, pod, qv, layout, objects, node, n, lc.taken);
    lc.table_sum.assign(layout.total, 0);
    for (uint32_t f = 0; f < qv.num_filters; ++f)
      lc.removed_at[f] = layout.count[f] ? lc.table_sum.data() + layout.at[f] : nullptr;
    tables = DryRunTables{lc.taken.data(), layout.total, lc.table_sum.data(), lc.removed_at};
  }
  const DryRunNodeResult r = dry_run_node(base, lc.host.view, lc.host.cols, qv, node, lc.victims.data(), n,
                                          lc.requests.data(), lc.removed.data(), layout.total ? &tables : nullptr);
  return finish_victims(snap, qv, node, r, lc.victims.data(), lc.removed.data(), lc.sorted.data(), n, lc.evicted, out,
                        status);
}

// The bulk dry run on a backend that does it in one pass (a device): every
// potential node, in visiting order from `offset`, prepared on the host
// into one batch, dry-run by the backend (Backend::dry_run_preemption), and
// each node's outcome handed to `take` in visiting order until it answers
// true (the sequential rule's stop). A device error throws before any
// outcome is taken.
template <class Take>
static void dry_run_on_backend(Backend& backend, const Snapshot& snap, PreemptionCache& cache, LocalColumns& lc,
                               const Pod& pod, const PodQuery& q, const RemovalLayout& layout,
                               const ClusterObjects& objects, const std::vector<uint32_t>& potential,
                               uint64_t offset, Take&& take) {
  const std::vector<PodDisruptionBudget>& pdbs = objects.pdbs;
  const PodQueryView qv = q.view();
  const uint64_t m = potential.size();
  DryRunBatch batch;
  DryRunOutput result;
  std::vector<const Pod*> sorted;  // parallel to batch.victims
  std::vector<uint32_t> at;        // per visiting position: its index in batch.nodes, UINT32_MAX without victims
  batch.clear();
  batch.table_total = layout.total;
  for (uint32_t f = 0; f < qv.num_filters; ++f) batch.table_slot_at[f] = layout.count[f] ? layout.at[f] : kNoTableSlot;
  for (uint64_t j = 0; j < m; ++j) {
    const uint32_t node = potential[(offset + j) % m];
    const uint32_t n = prepare_victims(snap, lc, cache, pod, pdbs, node, batch.victims, batch.requests, sorted);
    at.push_back(n ? static_cast<uint32_t>(batch.nodes.size()) : UINT32_MAX);
    if (!n) continue;
    if (layout.total) table_removals(snap, lc, cache, pod, qv, layout, objects, node, n, batch.taken);
    batch.nodes.push_back(node);
    batch.offsets.push_back(static_cast<uint32_t>(batch.victims.size()));
  }
  if (!batch.nodes.empty()) backend.dry_run_preemption(snap, q, batch, result);
  for (uint64_t j = 0; j < m; ++j) {
    const uint32_t node = potential[(offset + j) % m];
    Candidate c;
    NodeStatus st;
    bool candidate = false;
    const uint32_t b = at[j];
    if (b == UINT32_MAX) {
      st = NodeStatus::without_victims();
    } else {
      const uint32_t v = batch.offsets[b];
      candidate = finish_victims(snap, qv, node, result.nodes[b], batch.victims.data() + v, result.removed.data() + v,
                                 sorted.data() + v, batch.offsets[b + 1] - v, lc.evicted, c, st);
    }
    if (take(candidate, c, st)) return;
  }
}

// Whether one PreFilter state `q` (made on the snapshot before the dry run)
// answers every check of the dry run, as each plugin declares it
// (FilterReach): its Filter reads only its node (removing the node's pods
// changes only that node's columns, which the worker patches), or reads
// PreFilter's domain tables, which removing the node's pods changes only in
// the node's domains (filter_node's `removed`, the counts those pods took
// there: upstream's RemovePod and AddPod on the cycle state, without a
// copy of it), or was Skipped at PreFilter, which removing pods cannot
// undo. Any other plugin that runs sends the pod to the exact path.
static bool bulk_dry_run(const ProfilePlan& plan, const PodQuery& q) {
  if (q.rejected) return false;
  for (uint8_t id : plan.filter) {
    if (kPluginInfo[id].filter_reach != FilterReach::kUnsupported) continue;
    const std::string_view name = kPluginInfo[id].name;
    const bool skipped = std::any_of(q.prefilter.begin(), q.prefilter.end(), [&](const PreFilterStatus& s) {
      return s.code == Code::Skip && s.plugin == name;
    });
    if (!skipped) return false;
  }
  return true;
}

// pickOneNodeForPreemption: the five criteria in order; the lowest node
// index among what remains (upstream: an arbitrary one, Go map order).
// `left_after` (explain) gets how many candidates each criterion left.
static const Candidate& pick_candidate(const std::vector<Candidate>& cands,
                                       std::vector<uint32_t>* left_after = nullptr) {
  std::vector<const Candidate*> left;
  left.reserve(cands.size());
  for (const Candidate& c : cands) left.push_back(&c);
  const auto keep_best = [&](auto&& score) {
    int64_t best = INT64_MIN;
    for (const Candidate* c : left) best = std::max<int64_t>(best, score(*c));
    left.erase(std::remove_if(left.begin(), left.end(), [&](const Candidate* c) { return score(*c) != best; }),
               left.end());
    if (left_after) left_after->push_back(static_cast<uint32_t>(left.size()));
  };
  keep_best([](const Candidate& c) { return -c.pdb_violations; });
  keep_best([](const Candidate& c) { return -static_cast<int64_t>(c.victims.front()->priority); });
  keep_best([](const Candidate& c) {
    int64_t sum = 0;
    for (const Pod* v : c.victims) sum += static_cast<int64_t>(v->priority) + (int64_t{1} << 31);
    return -sum;
  });
  keep_best([](const Candidate& c) { return -static_cast<int64_t>(c.victims.size()); });
  // GetEarliestPodStartTime: the earliest start among the victims of the
  // highest priority; the latest such start wins.
  keep_best([](const Candidate& c) {
    int32_t top = INT32_MIN;
    for (const Pod* v : c.victims) top = std::max(top, v->priority);
    int64_t earliest = INT64_MAX;
    for (const Pod* v : c.victims)
      if (v->priority == top) earliest = std::min(earliest, v->start_time_ns.value_or(INT64_MAX));
    return earliest;
  });
  return **std::min_element(left.begin(), left.end(),
                            [](const Candidate* a, const Candidate* b) { return a->node < b->node; });
}

// explain's record of the candidates and the choice (preemption_explain.cpp
// has the rest).
static void explain_choice(const std::vector<Candidate>& cands, const Snapshot& snap, PreemptionExplanation& ex) {
  ex.left_after.clear();
  const Candidate& best = pick_candidate(cands, &ex.left_after);
  ex.nominated_node = snap.node_name(best.node);
  ex.candidates.clear();
  for (const Candidate& c : cands) {
    PreemptionCandidate pc;
    pc.node = snap.node_name(c.node);
    pc.node_index = static_cast<int32_t>(c.node);
    pc.pdb_violations = c.pdb_violations;
    for (const Pod* v : c.victims) pc.victims.push_back({v->key(), v->priority, v->start_time_ns.value_or(INT64_MAX)});
    ex.candidates.push_back(std::move(pc));
  }
  finish_preemption_explanation(ex);
}

void Engine::run_post_filter(const Pod& pod, const ProfilePlan& plan, PodQuery& q, uint64_t seq, ScheduleResult& res,
                             PreemptionExplanation* dry_run) {
  std::vector<std::string> reasons;
  for (const std::string& name : plan.config.post_filter) {
    if (name == "DynamicResources") {
      // A pod without resource claims: nothing to deallocate.
      reasons.emplace_back("no new claims to deallocate");
      continue;
    }
    if (name != "DefaultPreemption") continue;
    const uint32_t n = snapshot_.num_nodes();
    const Pod p = admitted(pod);
    // The Filter statuses of this cycle, per node, on the host (only pods
    // that found no node pay for it; the backend's pass kept no verdicts).
    std::vector<Code> codes(n, Code::UnschedulableAndUnresolvable);  // absent: outside PreFilter's answer
    if (!q.rejected) {
      const SnapshotView view = snapshot_.view();
      const PodQueryView qv = q.view();
      const auto check = [&](uint32_t i) {
        const NodeVerdict v = filter_node(view, qv, i);
        codes[i] = v.feasible() ? Code::Success : v.code;
      };
      if (q.candidates)
        for (uint32_t c : *q.candidates) check(c);
      else
        for (uint32_t i = 0; i < n; ++i) check(i);
    } else {
      for (const PreFilterStatus& s : q.prefilter)
        if (s.code == Code::Unschedulable) std::fill(codes.begin(), codes.end(), Code::Unschedulable);
    }
    // PodEligibleToPreemptOthers.
    std::string not_eligible;
    if (!may_preempt(p)) {
      not_eligible = "not eligible due to preemptionPolicy=Never.";
    } else if (!p.nominated_node_name.empty()) {
      const int32_t nom = snapshot_.node_index(p.nominated_node_name);
      if (nom >= 0 && codes[static_cast<size_t>(nom)] != Code::UnschedulableAndUnresolvable)
        for (uint32_t id : snapshot_.pods_on_node(static_cast<uint32_t>(nom))) {
          const Pod& other = snapshot_.pod(id);
          if (other.priority < p.priority && other.deleting && other.preempted_by_scheduler)
            not_eligible = "not eligible due to a terminating pod on the nominated node.";
        }
    }
    if (dry_run) dry_run->not_eligible = not_eligible;
    if (!not_eligible.empty()) {
      reasons.push_back("preemption: " + not_eligible);
      continue;
    }
    // The potential nodes, in the node list's (tree) order, and how many
    // candidates to find (GetOffsetAndNumCandidates; a seeded offset).
    std::vector<uint32_t> potential;
    for (uint32_t node : snapshot_.tree_order())
      if (codes[node] == Code::Unschedulable) potential.push_back(node);
    std::vector<NodeStatus> statuses;
    std::vector<Candidate> nonviolating, violating;
    if (!potential.empty()) {
      const auto m = static_cast<int64_t>(potential.size());
      const DefaultPreemptionArgs& args = plan.config.default_preemption_args;
      int64_t wanted = m * args.min_candidate_nodes_percentage / 100;
      wanted = std::min(m, std::max<int64_t>(wanted, args.min_candidate_nodes_absolute));
      const uint64_t offset = mix64(options_.seed ^ mix64(seq + 0x5eedULL)) % static_cast<uint64_t>(m);
      if (dry_run) {
        dry_run->potential_nodes = static_cast<uint32_t>(m);
        dry_run->num_candidates = static_cast<uint32_t>(wanted);
        dry_run->offset = static_cast<uint32_t>(offset);
      }
      // The bulk dry run (bulk_dry_run: every Filter the pod runs reads
      // its node, or PreFilter's tables in its domains): the cycle's own
      // PreFilter state `q` (made on the snapshot as it is) answers every
      // check, and no snapshot is copied or changed: each node's columns
      // are patched in a worker's LocalColumns, and the counts its pods
      // took from the tables are taken off in its domains. The potential nodes go in parallel blocks on the
      // executor, in the visiting order, each block's outcomes taken in
      // that order: the dry run stops at the same node as one node after
      // another would, and the nodes past it are dropped. The exact path
      // (the others, or EngineOptions::preemption_dry_run Exact) dry-runs
      // one node after another on a copy of the snapshot with PreFilter
      // made afresh per check. A backend with a one-pass dry run (the CUDA
      // backend) gets every potential node of the bulk path at once
      // (Backend::dry_run_preemption), with what each victim takes from
      // PreFilter's tables where the pod's Filter reads them (at most
      // kMaxDryRunTableCounts counts per victim; more: the host's blocks).
      const bool bulk = options_.preemption_dry_run == EngineOptions::PreemptionDryRun::Bulk && bulk_dry_run(plan, q);
      // A pod that outranks no pod on any potential node (a full cluster
      // and a pod of its pods' priority, the common case) has no victims
      // anywhere: every potential node's status is "no victims", as the
      // dry run below would find node by node, without its set-up and
      // dispatch. The scan stops at the first node with a victim.
      const bool no_victims = std::none_of(potential.begin(), potential.end(),
                                           [&](uint32_t node) { return outranks_a_pod_on(snapshot_, node, p.priority); });
      if (no_victims) statuses.assign(potential.size(), NodeStatus::without_victims());
      std::optional<Snapshot> scratch;
      std::vector<LocalColumns> cols;
      unsigned workers = 1;
      std::shared_ptr<Executor> executor;
      if (bulk && !no_victims) {
        executor = cpu_backend_options().executor;
        if (executor && m >= kMinParallelDryRun) workers = std::max(1u, executor->concurrency());
        cols.resize(workers);
        if (!preemption_cache_) preemption_cache_ = std::make_shared<PreemptionCache>();
        preemption_cache_->sync(snapshot_, objects_.pdbs);
      }
      // The exact path's copy of the snapshot is made at the first node
      // that has a pod to evict: a pod that outranks no pod on any
      // potential node (every pod at one priority, as in a trace replay)
      // copies nothing, whatever the cluster's size.
      const auto exact_scratch = [&]() -> Snapshot& {
        if (!scratch) {
          scratch.emplace(snapshot_);
          intern_pod_for_plan(*scratch, p, plan, &objects_);
        }
        return *scratch;
      };
      const PodQueryView qv = q.view();
      const RemovalLayout layout(qv);
      struct Outcome {
        bool candidate = false;
        Candidate c;
        NodeStatus st;
      };
      std::vector<Outcome> outcomes;
      bool done = no_victims;
      // The outcomes in visiting order until the sequential rule stops: at
      // `wanted` candidates once one of them violates no budget.
      const auto take = [&](Outcome& o) {
        if (!o.candidate) {
          statuses.push_back(std::move(o.st));
          return false;
        }
        (o.c.pdb_violations == 0 ? nonviolating : violating).push_back(std::move(o.c));
        const auto now_found = static_cast<int64_t>(nonviolating.size() + violating.size());
        return !nonviolating.empty() && now_found >= wanted;
      };
      // A backend that dry-runs in one pass (a device): every potential
      // node at once, the host ordering the victims before and building
      // the candidates after, the nodes past the stop dropped. Should the
      // device fail, the run goes on on the CPU backend (Engine::fall_back)
      // and the blocks below do the dry run instead.
      if (!done && bulk && layout.total <= kMaxDryRunTableCounts && backend_->batched_dry_run()) {
        try {
          dry_run_on_backend(*backend_, snapshot_, *preemption_cache_, cols[0], p, q, layout, objects_, potential, offset,
                             [&](bool candidate, Candidate& c, NodeStatus& st) {
                               Outcome o{candidate, std::move(c), std::move(st)};
                               return take(o);
                             });
          done = true;  // every potential node was dry-run
        } catch (const CudaError& e) {  // DeviceOutOfMemory included
          fall_back(e.what());
        }
      }
      for (int64_t i = 0; i < m && !done;) {
        const auto found = static_cast<int64_t>(nonviolating.size() + violating.size());
        const int64_t block =
            workers == 1 ? 1 : std::min(m - i, std::max<int64_t>(wanted - found, int64_t{16} * workers));
        outcomes.assign(static_cast<size_t>(block), Outcome{});
        const auto run = [&](uint32_t w, int64_t j) {
          const uint32_t node = potential[(offset + static_cast<uint64_t>(i + j)) % static_cast<uint64_t>(m)];
          Outcome& o = outcomes[static_cast<size_t>(j)];
          if (bulk) {
            o.candidate =
                select_victims_local(snapshot_, cols[w], *preemption_cache_, p, qv, layout, objects_, node, o.c, o.st);
          } else if (!outranks_a_pod_on(snapshot_, node, p.priority)) {
            o.st = NodeStatus::without_victims();
          } else {
            o.candidate = select_victims(exact_scratch(), snapshot_, p, plan, options_, objects_, node, o.c, o.st);
          }
        };
        if (workers == 1) {
          for (int64_t j = 0; j < block; ++j) run(0, j);
        } else {
          executor->for_each(workers, [&](uint32_t w) {
            for (int64_t j = w; j < block; j += workers) run(w, j);
          });
        }
        for (Outcome& o : outcomes) {
          ++i;
          if (take(o)) {
            done = true;
            break;
          }
        }
      }
    }
    std::vector<Candidate> cands = std::move(nonviolating);
    for (Candidate& c : violating) cands.push_back(std::move(c));
    if (dry_run) {
      dry_run->dry_run_nodes = static_cast<uint32_t>(statuses.size() + cands.size());
      if (!cands.empty()) {
        explain_choice(cands, snapshot_, *dry_run);
        return;  // nothing evicted, nothing placed
      }
    }
    if (cands.empty()) {
      const auto error =
          std::find_if(statuses.begin(), statuses.end(), [](const NodeStatus& s) { return s.code == Code::Error; });
      if (error != statuses.end()) {
        res.code = Code::Error;
        res.message = "preemption: " + error->reasons.front();
        return;
      }
      reasons.push_back("preemption: " + fit_error_text(n, statuses, kNotHelpful));
      continue;
    }
    // The chosen candidate: its victims leave (with the budgets that
    // covered them), and the pod is placed on the node.
    const Candidate& best = pick_candidate(cands);
    const std::string node_name = snapshot_.node_name(best.node);
    res.nominated_node = node_name;
    res.pdb_violations = best.pdb_violations;
    std::vector<Pod> evicted;
    evicted.reserve(best.victims.size());
    for (const Pod* v : best.victims) evicted.push_back(*v);
    for (const Pod& v : evicted) {
      res.victims.push_back(v.key());
      charge_pdbs(objects_.pdbs, v);
      auto it = pod_records_.find(v.cache_key());
      if (it != pod_records_.end()) drop_record(it);
    }
    std::sort(res.victims.begin(), res.victims.end());
    if (group_model_ || device_model_) snapshot_.take_device_warnings();
    // The next cycle: the nominated node first (PreferNominatedNode); it
    // passes Filter now that the victims are gone, unless the snapshot
    // changed in between (it did not here).
    intern_pod_for_plan(snapshot_, p, plan, &objects_);
    PodQuery q2 = prepare_pod_query(p, snapshot_, plan, tie_break_for(plan), options_.seed, &objects_);
    q2.header.pod_seq = seq;
    const auto nominated = static_cast<uint32_t>(snapshot_.node_index(node_name));
    if (!q2.rejected && filter_node(snapshot_.view(), q2.view(), nominated).feasible()) {
      res.code = Code::Success;
      res.message.clear();
      res.node = static_cast<int32_t>(nominated);
      res.score = 0;
      res.feasible_nodes = 1;
      assume(p, nullptr, plan, res, p.cache_key());
      return;
    }
    res.message += " preemption: the nominated node " + quote_for_message(node_name) +
                   " did not pass Filter after the victims left";
    return;
  }
  if (!reasons.empty()) {
    res.message += " ";
    for (size_t i = 0; i < reasons.size(); ++i) res.message += (i ? ", " : "") + reasons[i];
  }
}

}  // namespace bulkscore
