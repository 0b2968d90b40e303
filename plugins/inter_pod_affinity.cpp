#include "plugins/inter_pod_affinity.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

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
// with the labels of the incoming pod's namespace: the pod's namespace in
// the term's set (`in_set`) or selected by its namespaceSelector (nil: none),
// and its labels by the label selector (nil: none).
bool existing_term_matches(bool in_set, const std::optional<LabelSelector>& namespace_selector,
                           const std::optional<LabelSelector>& selector, const Pod& pod,
                           const StringMap& namespace_labels) {
  if (!in_set && !(namespace_selector && selector_matches(*namespace_selector, namespace_labels))) return false;
  return selector && selector_matches(*selector, pod.labels);
}

bool matches(const ExistingTerm& t, const Pod& pod, const StringMap& namespace_labels) {
  const bool in_set = std::binary_search(t.namespaces.begin(), t.namespaces.end(), pod.namespace_name);
  return existing_term_matches(in_set, t.namespace_selector, t.selector, pod, namespace_labels);
}

// The same for a term of `owner` as written: its namespace list, or the
// owner's namespace when the list is empty and namespaceSelector is nil.
bool matches(const PodAffinityTerm& t, const Pod& owner, const Pod& pod, const StringMap& namespace_labels) {
  const bool in_set =
      t.namespaces.empty() && !t.namespace_selector
          ? owner.namespace_name == pod.namespace_name
          : std::find(t.namespaces.begin(), t.namespaces.end(), pod.namespace_name) != t.namespaces.end();
  return existing_term_matches(in_set, t.namespace_selector, t.label_selector, pod, namespace_labels);
}

// Per table of `tables`, its counts summed over every domain.
std::vector<int64_t> table_totals(Span<KeyedCounts> tables, const uint8_t* arena) {
  std::vector<int64_t> out;
  for (uint32_t i = 0; i < tables.count; ++i) {
    const KeyedCounts& t = tables.at(arena, i);
    int64_t sum = 0;
    for (uint32_t j = 0; j < t.by_rank.count; ++j) sum += t.by_rank.at(arena, j);
    for (uint32_t j = 0; j < t.values.count; ++j) sum += t.values.at(arena, j).count;
    out.push_back(sum);
  }
  return out;
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

// A pod may carry thousands of terms (the API server bounds neither their
// number nor, beyond its request size, their repetition), so the work is
// per distinct term: identical terms of one list are counted once, with
// their multiplicity as the weight (upstream's per-term loops count a
// repeated term as often as it appears) or, for preferred terms, their
// weights summed.
struct TermGroup {
  const IncomingTerm* term;  // the first occurrence
  int64_t weight = 0;        // summed over the occurrences (a required term weighs 1)
};

void put(std::string& out, std::string_view s) {
  out += std::to_string(s.size());
  out += ':';
  out += s;
}

// A text equal for two terms exactly when they select the same pods in the
// same topology key (namespaces as a set, the selector as written).
std::string term_text(const IncomingTerm& t) {
  std::string out;
  put(out, t.key);
  out += t.clause.all_namespaces ? 'A' : 'L';
  std::vector<std::string_view> ns(t.clause.namespaces.begin(), t.clause.namespaces.end());
  std::sort(ns.begin(), ns.end());
  ns.erase(std::unique(ns.begin(), ns.end()), ns.end());
  out += std::to_string(ns.size());
  for (const std::string_view n : ns) put(out, n);
  const LabelSelector& sel = t.clause.selector;
  out += 'M';
  out += std::to_string(sel.match_labels.size());
  for (const auto& [k, v] : sel.match_labels) {
    put(out, k);
    put(out, v);
  }
  out += 'E';
  out += std::to_string(sel.match_expressions.size());
  for (const auto& r : sel.match_expressions) {
    put(out, r.key);
    put(out, r.op);
    out += std::to_string(r.values.size());
    for (const auto& v : r.values) put(out, v);
  }
  return out;
}

// The terms of `list` that can match a pod, identical ones once, in the
// order of their first occurrence.
std::vector<TermGroup> group_terms(const std::vector<IncomingTerm>& list, bool required) {
  std::vector<TermGroup> out;
  if (list.size() == 1) {  // the common pod: one term, nothing to compare it with
    if (!list[0].matches_nothing) out.push_back(TermGroup{&list[0], required ? 1 : list[0].weight});
    return out;
  }
  std::unordered_map<std::string, size_t> index;
  for (const IncomingTerm& t : list) {
    if (t.matches_nothing) continue;
    const auto [it, fresh] = index.emplace(term_text(t), out.size());
    if (fresh) out.push_back(TermGroup{&t, 0});
    out[it->second].weight += required ? 1 : t.weight;
  }
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

// (key, weight) pairs: a topology key's string id and what one matched pod
// adds in the node's domain of it.
using WeightedKeys = std::vector<std::pair<int32_t, int64_t>>;

// Adds weight x the matcher's count on each node, in the node's domain of
// each key (nodes lacking a key add nothing there). Returns whether any
// entry was touched (even by a weight of 0: upstream's map gets the entry).
bool add_matched(const SnapshotView& s, int32_t matcher, const WeightedKeys& keys, KeyedCountsBuilder& out) {
  bool any = false;
  for (const auto& kw : keys) out.touch(kw.first);
  const auto count = [&](uint32_t n) { return s.topology_count(static_cast<uint32_t>(matcher), n); };
  for (const auto& [key, weight] : keys) any |= out.add_at_nodes(key, s.num_nodes, count, weight);
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
  // One batch: the snapshot counts every new matcher in one walk over the pods.
  std::vector<std::vector<Snapshot::PodMatchClause>> matchers;
  if (!terms.required_affinity.empty())
    if (auto clauses = all_of(terms.required_affinity)) matchers.push_back(std::move(*clauses));
  for (const auto& [list, required] : {std::pair{&terms.required_anti_affinity, true}, std::pair{&terms.preferred, false}})
    for (const TermGroup& g : group_terms(*list, required)) matchers.push_back({g.term->clause});
  if (!matchers.empty()) snap.topology_matchers(matchers, true);
}

PrepareResult InterPodAffinity::prepare(const PrepareContext& ctx, State& st, Arena& arena) {
  st = State{};
  PrepareResult r;
  const Pod& pod = ctx.pod;
  const Snapshot& snap = ctx.snapshot;
  const SnapshotView& s = ctx.view;
  const IncomingTerms terms = incoming_terms(pod, ctx.objects);
  const StringMap& ns_labels = namespace_labels(pod, ctx.objects);
  const auto key_of = [&](const IncomingTerm& t) { return snap.string_id(t.key); };

  // The existing pods' term groups whose selector may match the pod (in
  // the index's order, as a walk over every group would visit them).
  const std::vector<ExistingTerm>& groups = snap.existing_affinity_terms();
  const std::vector<uint32_t> candidates = snap.affinity_term_candidates(pod.labels);

  // ---- PreFilter ----
  // Existing pods' required anti-affinity terms that match the pod.
  KeyedCountsBuilder existing(snap, s);
  std::vector<NodeAntiTerm> existing_on_node;  // groups with a row of per-node counts (hostname keys)
  for (const uint32_t i : candidates) {
    const ExistingTerm& g = groups[i];
    if (g.kind != ExistingTerm::kRequiredAntiAffinity || g.domains.empty() || !matches(g, pod, ns_labels)) continue;
    if (g.node_row >= 0)
      existing_on_node.push_back(NodeAntiTerm{g.node_row, g.dense_slot});
    else
      add_group(existing, g, 1);
  }
  if (existing.all_zero() && existing_on_node.empty() && terms.required_affinity.empty() &&
      terms.required_anti_affinity.empty()) {
    r.prefilter = Code::Skip;
  } else {
    if (!existing.all_zero()) st.existing_anti_affinity = existing.push(arena);
    if (!existing_on_node.empty()) st.existing_on_node = arena.push(existing_on_node);
    if (!terms.required_affinity.empty()) {
      // Every term's key, each once with the number of terms naming it.
      WeightedKeys keys;
      std::unordered_map<int32_t, size_t> key_index;
      for (const auto& t : terms.required_affinity) {
        const auto [it, fresh] = key_index.emplace(key_of(t), keys.size());
        if (fresh) keys.emplace_back(it->first, 0);
        ++keys[it->second].second;
      }
      KeyedCountsBuilder affinity(snap, s);
      for (const auto& kw : keys) affinity.touch(kw.first);  // every term's key is checked
      st.affinity_matcher = -1;
      if (const auto clauses = all_of(terms.required_affinity)) {
        st.affinity_matcher = matcher_row(snap, pod, *clauses);
        add_matched(s, st.affinity_matcher, keys, affinity);
      }
      st.affinity = affinity.push(arena);
      st.affinity_totals = arena.push(table_totals(st.affinity, arena.data()));
      std::vector<int64_t> weights;
      for (const auto& kw : keys) weights.push_back(kw.second);  // the tables' order: keys as first touched
      st.affinity_weights = arena.push(weights);
      st.affinity_self_match = std::all_of(terms.required_affinity.begin(), terms.required_affinity.end(),
                                           [&](const IncomingTerm& t) { return matches(t, pod); });
    }
    KeyedCountsBuilder anti(snap, s);
    std::vector<AntiTerm> anti_terms;
    std::vector<NodeAntiTerm> on_node;
    for (const TermGroup& g : group_terms(terms.required_anti_affinity, true)) {
      const int32_t matcher = matcher_row(snap, pod, {g.term->clause}), key = key_of(*g.term);
      const int32_t slot = snap.dense_label_slot(key);
      if (slot >= 0 && snap.dense_label_one_node_per_value(slot)) {
        on_node.push_back(NodeAntiTerm{matcher, slot});
        continue;
      }
      anti_terms.push_back(AntiTerm{matcher, key, g.weight});
      add_matched(s, matcher, {{key, g.weight}}, anti);
    }
    if (!anti.all_zero()) {
      st.anti_affinity = anti.push(arena);
      st.anti_terms = arena.push(anti_terms);
    }
    // Kept even while no node counts a pod: a ReplicaSet's first pod and
    // the next have the same state (the batch cache compares it).
    if (!on_node.empty()) st.anti_on_node = arena.push(on_node);
  }

  // ---- PreScore (reads no feasible list) ----
  const InterPodAffinityArgs& args = ctx.profile.inter_pod_affinity_args;
  if ((args.ignore_preferred_terms_of_existing_pods && !terms.has_preferred) || snap.num_nodes() == 0) {
    r.skip_score = true;
    return r;
  }
  KeyedCountsBuilder score(snap, s);
  bool any = false;
  for (const TermGroup& g : group_terms(terms.preferred, false))
    any |= add_matched(s, matcher_row(snap, pod, {g.term->clause}), {{key_of(*g.term), g.weight}}, score);
  for (const uint32_t i : candidates) {
    const ExistingTerm& g = groups[i];
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

void InterPodAffinity::removal_counts(const RemovalContext& ctx, const State& st, const uint8_t* arena, uint32_t node,
                                      const uint32_t* pods, uint32_t count, int64_t* out) {
  const uint32_t slots = removal_slots(st);
  std::fill(out, out + static_cast<size_t>(count) * slots, int64_t{0});
  const Snapshot& snap = ctx.snapshot;
  const SnapshotView s = snap.view();
  // The tables in filter()'s layout, and whether the node has each one's
  // key (a node without it added nothing there).
  std::vector<const KeyedCounts*> tables;
  for (const Span<KeyedCounts>& span : {st.affinity, st.anti_affinity, st.existing_anti_affinity})
    for (uint32_t i = 0; i < span.count; ++i) tables.push_back(&span.at(arena, i));
  std::vector<uint8_t> has(tables.size());
  for (size_t j = 0; j < tables.size(); ++j) {
    bool has_key;
    (void)tables[j]->at_node(s, arena, node, has_key);
    has[j] = has_key;
  }
  const auto table_of = [&](uint32_t first, uint32_t n, int32_t key) {
    for (uint32_t j = first; j < first + n; ++j)
      if (tables[j]->key == key) return static_cast<int64_t>(j);
    return int64_t{-1};
  };
  const uint32_t anti_at = st.affinity.count, existing_at = anti_at + st.anti_affinity.count;
  const uint32_t on_node_at = existing_at + st.existing_anti_affinity.count;
  const uint32_t existing_on_node_at = on_node_at + st.anti_on_node.count;
  const StringMap& ns_labels = namespace_labels(ctx.pod, ctx.objects);
  for (uint32_t k = 0; k < count; ++k) {
    int64_t* o = out + static_cast<size_t>(k) * slots;
    const uint32_t slot = snap.pod_slot(pods[k]);
    // The incoming pod's affinity: a pod matching all terms added each
    // key's number of terms.
    if (st.affinity_matcher >= 0 && snap.topology_matcher_counts_slot(static_cast<uint32_t>(st.affinity_matcher), slot))
      for (uint32_t j = 0; j < st.affinity.count; ++j)
        if (has[j]) o[j] += st.affinity_weights.at(arena, j);
    // Its anti-affinity: each group the pod matches, as often as it appears.
    for (uint32_t g = 0; g < st.anti_terms.count; ++g) {
      const AntiTerm& t = st.anti_terms.at(arena, g);
      if (!snap.topology_matcher_counts_slot(static_cast<uint32_t>(t.matcher), slot)) continue;
      const int64_t j = table_of(anti_at, st.anti_affinity.count, t.key);
      if (j >= 0 && has[static_cast<size_t>(j)]) o[j] += t.weight;
    }
    // Those read from the node's counters: the pods each one counts
    // (filter() reads none on a node without the key).
    for (uint32_t g = 0; g < st.anti_on_node.count; ++g)
      if (snap.topology_matcher_counts_slot(static_cast<uint32_t>(st.anti_on_node.at(arena, g).row), slot))
        ++o[on_node_at + g];
    // The removed pod's own required anti-affinity terms that match the
    // incoming pod, each occurrence once (the snapshot's term groups count
    // them so, terminating pods too).
    // A term whose group has a row of per-node counts (existing_on_node)
    // counts there, not in its key's table.
    if (!st.existing_anti_affinity.count && !st.existing_on_node.count) continue;
    const Pod& p = snap.pod(pods[k]);
    if (!p.affinity || !p.affinity->pod_anti_affinity) continue;
    for (const PodAffinityTerm& t : p.affinity->pod_anti_affinity->required) {
      if (!matches(t, p, ctx.pod, ns_labels)) continue;
      if (st.existing_on_node.count) {
        const int32_t g = snap.affinity_term_group(p, t, ExistingTerm::kRequiredAntiAffinity, 0);
        const int32_t row = g < 0 ? -1 : snap.existing_affinity_terms()[static_cast<size_t>(g)].node_row;
        if (row >= 0) {
          for (uint32_t e = 0; e < st.existing_on_node.count; ++e)
            if (st.existing_on_node.at(arena, e).row == row) ++o[existing_on_node_at + e];
          continue;
        }
      }
      const int64_t j = table_of(existing_at, st.existing_anti_affinity.count, snap.string_id(t.topology_key));
      if (j >= 0 && has[static_cast<size_t>(j)]) ++o[j];
    }
  }
}

bool InterPodAffinity::filter_count_changes(const Snapshot& snap, const State& prev, const uint8_t* prev_arena,
                                            uint32_t prev_begin, uint32_t prev_end, const State& st,
                                            const uint8_t* arena, uint32_t begin, uint32_t end,
                                            std::vector<uint32_t>* nodes) {
  // The same state (spans at the same offsets: the same layout, the same
  // matchers and self-match) and as many prepared bytes.
  if (std::memcmp(&prev, &st, sizeof(State)) != 0 || prev_end - prev_begin != end - begin || prev_begin != begin)
    return false;
  // The arrays of counts Filter reads, where the two may differ; every
  // other byte (each table's key, column and spans, the Score tables) must
  // be equal. Compared in place: a hostname table has a count per node.
  enum Kind : uint8_t { kByRank, kValues, kTotals };
  struct Region {
    uint32_t offset, bytes;
    Kind kind;
    const KeyedCounts* table;  // kByRank, kValues
  };
  thread_local std::vector<Region> regions;
  regions.clear();
  const auto add = [&](uint32_t offset, size_t bytes, Kind kind, const KeyedCounts* table) {
    if (bytes == 0) return true;
    if (offset < begin || static_cast<size_t>(offset) + bytes > end) return false;
    regions.push_back(Region{offset, static_cast<uint32_t>(bytes), kind, table});
    return true;
  };
  for (const Span<KeyedCounts> tables : {st.affinity, st.anti_affinity, st.existing_anti_affinity}) {
    if (tables.count == 0) continue;
    if (tables.offset < begin || static_cast<size_t>(tables.offset) + tables.count * sizeof(KeyedCounts) > end)
      return false;
    const KeyedCounts* ta = tables.data(prev_arena);
    const KeyedCounts* tb = tables.data(arena);
    for (uint32_t i = 0; i < tables.count; ++i) {
      if (std::memcmp(&ta[i], &tb[i], sizeof(KeyedCounts)) != 0) return false;  // key, column and spans
      if (!add(tb[i].by_rank.offset, tb[i].by_rank.count * sizeof(int64_t), kByRank, &tb[i]) ||
          !add(tb[i].values.offset, tb[i].values.count * sizeof(DomainCount), kValues, &tb[i]))
        return false;
    }
  }
  if (!add(st.affinity_totals.offset, st.affinity_totals.count * sizeof(int64_t), kTotals, nullptr)) return false;
  std::sort(regions.begin(), regions.end(), [](const Region& x, const Region& y) { return x.offset < y.offset; });
  // A changed domain: of a dense key, the rank of its value (slot >= 0);
  // else the value id.
  struct Changed {
    int32_t key, slot, domain;
  };
  thread_local std::vector<Changed> changed;
  changed.clear();
  // The bytes [from, from + n) of both arenas (an empty arena's data is null:
  // memcmp must not see it).
  const auto same = [&](uint32_t from, size_t n) {
    return n == 0 || std::memcmp(prev_arena + from, arena + from, n) == 0;
  };
  uint32_t at = begin;  // compared up to here
  for (const Region& r : regions) {
    if (r.offset < at) return false;  // overlapping arrays: not a layout prepare writes
    if (!same(at, r.offset - at)) return false;
    at = r.offset + r.bytes;
    if (same(r.offset, r.bytes)) continue;
    if (r.kind == kByRank) {
      if (!nodes) continue;  // any counts may differ; only the nodes are wanted from them
      const auto* ca = reinterpret_cast<const int64_t*>(prev_arena + r.offset);
      const auto* cb = reinterpret_cast<const int64_t*>(arena + r.offset);
      // A placement moves one count of a per-node table: equal runs are
      // skipped by memcmp, 64 counts at a time.
      constexpr uint32_t kRun = 64;
      const uint32_t n = r.table->by_rank.count;
      for (uint32_t k0 = 0; k0 < n; k0 += kRun) {
        const uint32_t k1 = std::min(n, k0 + kRun);
        if (std::memcmp(ca + k0, cb + k0, (k1 - k0) * sizeof(int64_t)) == 0) continue;
        for (uint32_t k = k0; k < k1; ++k)
          if (ca[k] != cb[k]) changed.push_back(Changed{r.table->key, r.table->dense_slot, static_cast<int32_t>(k)});
      }
    } else if (r.kind == kValues) {
      const auto* da = reinterpret_cast<const DomainCount*>(prev_arena + r.offset);
      const auto* db = reinterpret_cast<const DomainCount*>(arena + r.offset);
      for (uint32_t k = 0; k < r.table->values.count; ++k) {
        if (da[k].value != db[k].value || da[k].nodes != db[k].nodes) return false;  // another domain list
        if (da[k].count != db[k].count) changed.push_back(Changed{r.table->key, -1, db[k].value});
      }
    } else {
      // Filter reads the totals only for the escape of a pod that matches
      // its own terms, and only whether they are all zero.
      const auto* ta = reinterpret_cast<const int64_t*>(prev_arena + r.offset);
      const auto* tb = reinterpret_cast<const int64_t*>(arena + r.offset);
      const auto zero = [](int64_t c) { return c == 0; };
      const uint32_t n = st.affinity_totals.count;
      if (st.affinity_self_match && std::all_of(ta, ta + n, zero) != std::all_of(tb, tb + n, zero)) return false;
    }
  }
  if (!same(at, end - at)) return false;
  if (!nodes || changed.empty()) return true;
  // The nodes of the changed domains, ascending: per table, its changed
  // domains marked, then one pass over the nodes' column of its key.
  std::sort(changed.begin(), changed.end(), [](const Changed& x, const Changed& y) {
    return std::tie(x.key, x.slot, x.domain) < std::tie(y.key, y.slot, y.domain);
  });
  const SnapshotView s = snap.view();
  thread_local std::vector<uint8_t> named, marked;
  named.assign(s.num_nodes, 0);
  for (size_t k = 0; k < changed.size();) {
    size_t e = k;  // one table's run of changed domains
    while (e < changed.size() && changed[e].key == changed[k].key && changed[e].slot == changed[k].slot) ++e;
    const Changed& c = changed[k];
    if (c.slot >= 0 && e - k <= 4) {
      // A few ranks (one a placement): a compare per rank, which vectorizes.
      const int32_t* ranks = s.dense_label_ranks + static_cast<size_t>(c.slot) * s.num_nodes;
      for (size_t j = k; j < e; ++j) {
        const int32_t r = changed[j].domain;
        for (uint32_t node = 0; node < s.num_nodes; ++node) named[node] |= static_cast<uint8_t>(ranks[node] == r);
      }
    } else if (c.slot >= 0) {
      marked.assign(static_cast<size_t>(changed[e - 1].domain) + 1, 0);
      for (size_t j = k; j < e; ++j) marked[static_cast<size_t>(changed[j].domain)] = 1;
      const int32_t* ranks = s.dense_label_ranks + static_cast<size_t>(c.slot) * s.num_nodes;
      const auto bound = static_cast<int32_t>(marked.size());
      for (uint32_t node = 0; node < s.num_nodes; ++node)
        if (ranks[node] >= 0 && ranks[node] < bound) named[node] |= marked[static_cast<size_t>(ranks[node])];
    } else {
      for (uint32_t node = 0; node < s.num_nodes; ++node) {
        const int32_t v = s.label_value(node, c.key);
        if (v != kNoId && std::binary_search(changed.begin() + static_cast<std::ptrdiff_t>(k),
                                             changed.begin() + static_cast<std::ptrdiff_t>(e), Changed{c.key, -1, v},
                                             [](const Changed& x, const Changed& y) { return x.domain < y.domain; }))
          named[node] = 1;
      }
    }
    k = e;
  }
  // Collected eight flags at a time: few are set.
  uint32_t node = 0;
  for (; node + 8 <= s.num_nodes; node += 8) {
    uint64_t word;
    std::memcpy(&word, named.data() + node, sizeof word);
    if (word == 0) continue;
    for (uint32_t j = node; j < node + 8; ++j)
      if (named[j]) nodes->push_back(j);
  }
  for (; node < s.num_nodes; ++node)
    if (named[node]) nodes->push_back(node);
  return true;
}

void InterPodAffinity::reasons(uint64_t bits, const Snapshot&, const State&, const uint8_t*, uint32_t,
                               std::vector<std::string>& out) {
  if (bits & kAffinity) out.push_back("node(s) didn't match pod affinity rules");
  if (bits & kAntiAffinity) out.push_back("node(s) didn't match pod anti-affinity rules");
  if (bits & kExistingAntiAffinity) out.push_back("node(s) didn't satisfy existing pods anti-affinity rules");
}

}  // namespace bulkscore::plugins
