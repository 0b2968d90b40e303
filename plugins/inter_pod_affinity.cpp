#include "plugins/inter_pod_affinity.hpp"

#include <algorithm>
#include <map>

#include "host/input/labels.hpp"
#include "plugins/prepare.hpp"

namespace bulkscore::plugins {
namespace {

using ExistingTerm = Snapshot::ExistingAffinityTerm;

// One of the incoming pod's terms as upstream's AffinityTerm after
// mergeAffinityTermNamespacesIfNotEmpty: a non-empty namespaceSelector adds
// the Namespace objects it selects to the set, an empty one ({}) selects
// every namespace, and with neither a list nor a selector the pod's own
// namespace is the set. v1.35.4 takes the term by value there: the added
// names stick (a shared set) but its "selector = Nothing" does not, and the
// term is later matched with nil namespace labels. So a selector that
// matches an empty label set (only NotIn / DoesNotExist requirements)
// matches every namespace, listed or not; bulkscore does the same.
struct IncomingTerm {
  Snapshot::PodMatchClause clause;
  bool matches_nothing = false;  // nil labelSelector, or no namespace at all
  std::string key;
  int64_t weight = 0;  // preferred terms: +weight (affinity) or -weight (anti-affinity)
};

IncomingTerm incoming_term(const Pod& pod, const PodAffinityTerm& t, const ClusterObjects* objects, int64_t weight) {
  IncomingTerm out;
  out.key = t.topology_key;
  out.weight = weight;
  Snapshot::PodMatchClause& c = out.clause;
  if (t.namespaces.empty() && !t.namespace_selector)
    c.namespaces.push_back(pod.namespace_name);
  else
    c.namespaces = t.namespaces;
  if (const auto& sel = t.namespace_selector) {
    if ((sel->match_labels.empty() && sel->match_expressions.empty()) || selector_matches(*sel, StringMap{})) {
      c.all_namespaces = true;
    } else if (objects) {
      for (const auto& ns : objects->namespaces)
        if (selector_matches(*sel, ns.labels)) c.namespaces.push_back(ns.name);
    }
  }
  if (t.label_selector)
    c.selector = *t.label_selector;
  else
    out.matches_nothing = true;
  if (!c.all_namespaces && c.namespaces.empty()) out.matches_nothing = true;
  return out;
}

// AffinityTerm.Matches for an incoming term (namespace labels not needed:
// the selector was merged into the set).
bool matches(const IncomingTerm& t, const Pod& pod) {
  if (t.matches_nothing) return false;
  const auto& ns = t.clause.namespaces;
  if (!t.clause.all_namespaces && std::find(ns.begin(), ns.end(), pod.namespace_name) == ns.end()) return false;
  return selector_matches(t.clause.selector, pod.labels);
}

// AffinityTerm.Matches for an existing pod's term against the incoming pod,
// with the labels of the incoming pod's namespace.
bool matches(const ExistingTerm& t, const Pod& pod, const StringMap& namespace_labels) {
  const bool in_set = std::binary_search(t.namespaces.begin(), t.namespaces.end(), pod.namespace_name);
  if (!in_set && !(t.namespace_selector && selector_matches(*t.namespace_selector, namespace_labels))) return false;
  return t.selector && selector_matches(*t.selector, pod.labels);
}

struct IncomingTerms {
  std::vector<IncomingTerm> required_affinity, required_anti_affinity, preferred;
  bool has_preferred = false;  // upstream's hasConstraints
};

IncomingTerms incoming_terms(const Pod& pod, const ClusterObjects* objects) {
  IncomingTerms out;
  if (!pod.affinity) return out;
  if (const auto& a = pod.affinity->pod_affinity) {
    for (const auto& t : a->required) out.required_affinity.push_back(incoming_term(pod, t, objects, 0));
    for (const auto& w : a->preferred) out.preferred.push_back(incoming_term(pod, w.term, objects, w.weight));
  }
  if (const auto& a = pod.affinity->pod_anti_affinity) {
    for (const auto& t : a->required) out.required_anti_affinity.push_back(incoming_term(pod, t, objects, 0));
    for (const auto& w : a->preferred) out.preferred.push_back(incoming_term(pod, w.term, objects, -int64_t(w.weight)));
  }
  out.has_preferred = !out.preferred.empty();
  return out;
}

// The required affinity terms as one matcher (pods matching all of them),
// or nothing when some term matches no pod.
std::optional<std::vector<Snapshot::PodMatchClause>> all_of(const std::vector<IncomingTerm>& terms) {
  std::vector<Snapshot::PodMatchClause> out;
  for (const auto& t : terms) {
    if (t.matches_nothing) return std::nullopt;
    out.push_back(t.clause);
  }
  return out;
}

const StringMap& namespace_labels(const Pod& pod, const ClusterObjects* objects) {
  static const StringMap kNone;
  if (objects)
    for (const auto& ns : objects->namespaces)
      if (ns.name == pod.namespace_name) return ns.labels;
  return kNone;  // GetNamespaceLabelsSnapshot: an unknown namespace has no labels
}

int32_t matcher_row(const Snapshot& snap, const Pod& pod, const std::vector<Snapshot::PodMatchClause>& clauses) {
  const int32_t m = snap.find_topology_matcher(clauses, true);
  if (m < 0)
    throw Error("InterPodAffinity: no topology matcher registered for pod \"" + pod.key() +
                "\" (intern_pod_for_plan must run before prepare_pod_query)");
  return m;
}

// Adds `weight` x the matcher's count on each node, in the node's domain of
// each key in `keys` (nodes lacking a key add nothing there). Returns
// whether any entry was touched.
bool add_matched(const SnapshotView& s, int32_t matcher, const std::vector<int32_t>& keys, int64_t weight,
                 KeyedCountsBuilder& out) {
  bool any = false;
  for (const int32_t key : keys) out.touch(key);
  for (uint32_t n = 0; n < s.num_nodes; ++n) {
    const int32_t c = s.topology_count(static_cast<uint32_t>(matcher), n);
    if (c <= 0) continue;
    for (const int32_t key : keys) any |= out.add_at_node(key, n, weight * c);
  }
  return any;
}

// Adds weight x an existing term group's per-domain counts.
void add_group(KeyedCountsBuilder& out, const ExistingTerm& g, int64_t weight) {
  if (!g.by_rank.empty()) {
    out.add_by_rank(g.key_id, g.by_rank, weight);
  } else {
    for (const auto& [v, c] : g.domains) out.add_at_value(g.key_id, v, weight * c);
  }
}

}  // namespace

void InterPodAffinity::intern(Snapshot& snap, const Pod& pod, const ProfileConfig&, const ClusterObjects* objects) {
  const IncomingTerms terms = incoming_terms(pod, objects);
  if (!terms.required_affinity.empty())
    if (const auto clauses = all_of(terms.required_affinity)) snap.topology_matcher(*clauses, true);
  for (const auto* list : {&terms.required_anti_affinity, &terms.preferred})
    for (const IncomingTerm& t : *list)
      if (!t.matches_nothing) snap.topology_matcher({t.clause}, true);
}

PrepareResult InterPodAffinity::prepare(const PrepareContext& ctx, State& st, Arena& arena) {
  st = State{};
  PrepareResult r;
  const Pod& pod = ctx.pod;
  const Snapshot& snap = ctx.snapshot;
  const SnapshotView s = snap.view();
  const IncomingTerms terms = incoming_terms(pod, ctx.objects);
  const StringMap& ns_labels = namespace_labels(pod, ctx.objects);
  const auto key_of = [&](const IncomingTerm& t) { return snap.string_id(t.key); };

  // ---- PreFilter ----
  // Existing pods' required anti-affinity terms that match the pod.
  KeyedCountsBuilder existing(snap);
  for (const ExistingTerm& g : snap.existing_affinity_terms()) {
    if (g.kind != ExistingTerm::kRequiredAntiAffinity || g.domains.empty() || !matches(g, pod, ns_labels)) continue;
    add_group(existing, g, 1);
  }
  if (existing.all_zero() && terms.required_affinity.empty() && terms.required_anti_affinity.empty()) {
    r.prefilter = Code::Skip;
  } else {
    if (!existing.all_zero()) st.existing_anti_affinity = existing.push(arena);
    if (!terms.required_affinity.empty()) {
      std::vector<int32_t> keys;
      for (const auto& t : terms.required_affinity) keys.push_back(key_of(t));
      KeyedCountsBuilder affinity(snap);
      for (const int32_t k : keys) affinity.touch(k);  // every term's key is checked
      if (const auto clauses = all_of(terms.required_affinity))
        add_matched(s, matcher_row(snap, pod, *clauses), keys, 1, affinity);
      st.affinity = affinity.push(arena);
      st.affinity_escape =
          affinity.all_zero() && std::all_of(terms.required_affinity.begin(), terms.required_affinity.end(),
                                             [&](const IncomingTerm& t) { return matches(t, pod); });
    }
    KeyedCountsBuilder anti(snap);
    for (const auto& t : terms.required_anti_affinity)
      if (!t.matches_nothing) add_matched(s, matcher_row(snap, pod, {t.clause}), {key_of(t)}, 1, anti);
    if (!anti.all_zero()) st.anti_affinity = anti.push(arena);
  }

  // ---- PreScore (reads no feasible list) ----
  const InterPodAffinityArgs& args = ctx.profile.inter_pod_affinity_args;
  if ((args.ignore_preferred_terms_of_existing_pods && !terms.has_preferred) || snap.num_nodes() == 0) {
    r.skip_score = true;
    return r;
  }
  KeyedCountsBuilder score(snap);
  bool any = false;
  for (const auto& t : terms.preferred)
    if (!t.matches_nothing) any |= add_matched(s, matcher_row(snap, pod, {t.clause}), {key_of(t)}, t.weight, score);
  for (const ExistingTerm& g : snap.existing_affinity_terms()) {
    int64_t weight = 0;
    switch (g.kind) {
      case ExistingTerm::kRequiredAffinity:
        weight = args.hard_pod_affinity_weight;
        break;
      case ExistingTerm::kPreferredAffinity:
        weight = g.weight;
        break;
      case ExistingTerm::kPreferredAntiAffinity:
        weight = -int64_t(g.weight);
        break;
      case ExistingTerm::kRequiredAntiAffinity:
        continue;  // plays no part in scoring
    }
    if (weight == 0 || g.domains.empty() || !matches(g, pod, ns_labels)) continue;
    add_group(score, g, weight);
    any = true;
  }
  // No term matched anything on a node with its key: PreScore Skip.
  if (!any) {
    r.skip_score = true;
    return r;
  }
  st.score = score.push(arena);
  return r;
}

void InterPodAffinity::reasons(uint64_t bits, const Snapshot&, const State&, const uint8_t*, uint32_t,
                               std::vector<std::string>& out) {
  if (bits & kAffinity) out.push_back("node(s) didn't match pod affinity rules");
  if (bits & kAntiAffinity) out.push_back("node(s) didn't match pod anti-affinity rules");
  if (bits & kExistingAntiAffinity) out.push_back("node(s) didn't satisfy existing pods anti-affinity rules");
}

}  // namespace bulkscore::plugins
