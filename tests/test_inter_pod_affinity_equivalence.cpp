// InterPodAffinity's incremental counting (snapshot topology matchers and
// the grouped index of existing pods' terms, kept current through pod and
// node changes) against upstream's algorithm written out plainly: walk every
// pod on every node for every incoming pod, with string maps keyed by
// (topology key, value). Random clusters, random mutations, many seeds; a
// failure prints the seed, the step and the first differing node.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

#include "host/engine/pod_query.hpp"
#include "host/input/labels.hpp"
#include "plugins/evaluate.hpp"
#include "plugins/prepare.hpp"
#include "tests/random_pod_affinity.hpp"
#include "tests/test_util.hpp"

namespace bulkscore {
namespace {

// ---- upstream, plainly -----------------------------------------------------

struct Term {
  std::set<std::string> namespaces;
  std::optional<LabelSelector> namespace_selector;  // nil: Nothing
  std::optional<LabelSelector> selector;            // nil: Nothing
  std::string key;
  int64_t weight = 0;
};

Term new_term(const Pod& owner, const PodAffinityTerm& t, int64_t weight = 0) {
  Term out;
  if (t.namespaces.empty() && !t.namespace_selector)
    out.namespaces.insert(owner.namespace_name);
  else
    out.namespaces.insert(t.namespaces.begin(), t.namespaces.end());
  out.namespace_selector = t.namespace_selector;
  out.selector = t.label_selector;
  out.key = t.topology_key;
  out.weight = weight;
  return out;
}

// mergeAffinityTermNamespacesIfNotEmpty as v1.35.4 runs it on a copy of
// the term: the names it lists are added to the (shared) set, the selector
// is left as it was; incoming terms are then matched with nil namespace
// labels (term_matches(t, pod, {})).
Term merged(Term t, const ClusterObjects& objects) {
  if (!t.namespace_selector) return t;  // Nothing: lists no namespace
  const LabelSelector& sel = *t.namespace_selector;
  if (!sel.match_labels.empty() || !sel.match_expressions.empty())
    for (const auto& ns : objects.namespaces)
      if (selector_matches(sel, ns.labels)) t.namespaces.insert(ns.name);
  return t;
}

bool term_matches(const Term& t, const Pod& pod, const StringMap& ns_labels) {
  const bool ns_ok = t.namespaces.count(pod.namespace_name) ||
                     (t.namespace_selector && selector_matches(*t.namespace_selector, ns_labels));
  return ns_ok && t.selector && selector_matches(*t.selector, pod.labels);
}

struct PodTerms {
  std::vector<Term> req_aff, req_anti, pref_aff, pref_anti;
};

PodTerms terms_of(const Pod& p) {
  PodTerms out;
  if (!p.affinity) return out;
  if (const auto& a = p.affinity->pod_affinity) {
    for (const auto& t : a->required) out.req_aff.push_back(new_term(p, t));
    for (const auto& w : a->preferred) out.pref_aff.push_back(new_term(p, w.term, w.weight));
  }
  if (const auto& a = p.affinity->pod_anti_affinity) {
    for (const auto& t : a->required) out.req_anti.push_back(new_term(p, t));
    for (const auto& w : a->preferred) out.pref_anti.push_back(new_term(p, w.term, w.weight));
  }
  return out;
}

using Pair = std::pair<std::string, std::string>;

// A Go map read: a missing pair reads 0 and is not inserted.
int64_t count_at(const std::map<Pair, int64_t>& m, const std::string& key, const std::string& value) {
  const auto it = m.find({key, value});
  return it == m.end() ? 0 : it->second;
}

struct Upstream {
  bool prefilter_skip = false;
  std::vector<uint64_t> verdict;  // 0 passes, else the reason bit
  bool score_skip = false;
  std::vector<int64_t> raw;
};

Upstream upstream(const std::vector<Node>& nodes, const std::vector<std::vector<const Pod*>>& pods_on,
                  const Pod& in, const ClusterObjects& objects, const InterPodAffinityArgs& args) {
  using R = plugins::InterPodAffinity;
  Upstream out;
  StringMap ns_labels;
  for (const auto& ns : objects.namespaces)
    if (ns.name == in.namespace_name) ns_labels = ns.labels;
  PodTerms mine = terms_of(in);
  for (auto* list : {&mine.req_aff, &mine.req_anti, &mine.pref_aff, &mine.pref_anti})
    for (auto& t : *list) t = merged(t, objects);
  const StringMap none;

  std::map<Pair, int64_t> existing, affinity, anti;
  for (size_t n = 0; n < nodes.size(); ++n) {
    const StringMap& labels = nodes[n].labels;
    for (const Pod* e : pods_on[n]) {
      for (const Term& t : terms_of(*e).req_anti)
        if (term_matches(t, in, ns_labels) && labels.count(t.key)) ++existing[{t.key, labels.at(t.key)}];
      bool all = !mine.req_aff.empty();
      for (const Term& t : mine.req_aff) all = all && term_matches(t, *e, none);
      if (all)
        for (const Term& t : mine.req_aff)
          if (labels.count(t.key)) ++affinity[{t.key, labels.at(t.key)}];
      for (const Term& t : mine.req_anti)
        if (term_matches(t, *e, none) && labels.count(t.key)) ++anti[{t.key, labels.at(t.key)}];
    }
  }
  out.prefilter_skip = existing.empty() && mine.req_aff.empty() && mine.req_anti.empty();
  bool self_all = !mine.req_aff.empty();
  for (const Term& t : mine.req_aff) self_all = self_all && term_matches(t, in, none);
  for (const Node& node : nodes) {
    uint64_t v = 0;
    bool exist = true, missing = false;
    for (const Term& t : mine.req_aff) {
      if (!node.labels.count(t.key)) {
        missing = true;
        break;
      }
      if (count_at(affinity, t.key, node.labels.at(t.key)) <= 0) exist = false;
    }
    if (missing || (!exist && !(affinity.empty() && self_all))) v = R::kAffinity;
    if (!v)
      for (const Term& t : mine.req_anti)
        if (node.labels.count(t.key) && count_at(anti, t.key, node.labels.at(t.key)) > 0) v = R::kAntiAffinity;
    if (!v)
      for (const auto& [k, val] : node.labels)
        if (count_at(existing, k, val) > 0) v = R::kExistingAntiAffinity;
    out.verdict.push_back(v);
  }

  const bool has_constraints = !mine.pref_aff.empty() || !mine.pref_anti.empty();
  if (args.ignore_preferred_terms_of_existing_pods && !has_constraints) {
    out.score_skip = true;
    return out;
  }
  std::map<std::string, std::map<std::string, int64_t>> topo;
  const auto process = [&](const Term& t, int64_t weight, const Pod& p, const StringMap& nsl, const StringMap& labels) {
    if (term_matches(t, p, nsl) && labels.count(t.key)) topo[t.key][labels.at(t.key)] += weight;
  };
  for (size_t n = 0; n < nodes.size(); ++n) {
    const StringMap& labels = nodes[n].labels;
    if (labels.empty()) continue;
    for (const Pod* e : pods_on[n]) {
      const bool with_affinity = e->affinity && (e->affinity->pod_affinity || e->affinity->pod_anti_affinity);
      if (!has_constraints && !with_affinity) continue;
      for (const Term& t : mine.pref_aff) process(t, t.weight, *e, none, labels);
      for (const Term& t : mine.pref_anti) process(t, -t.weight, *e, none, labels);
      const PodTerms theirs = terms_of(*e);
      if (args.hard_pod_affinity_weight > 0)
        for (const Term& t : theirs.req_aff) process(t, args.hard_pod_affinity_weight, in, ns_labels, labels);
      for (const Term& t : theirs.pref_aff) process(t, t.weight, in, ns_labels, labels);
      for (const Term& t : theirs.pref_anti) process(t, -t.weight, in, ns_labels, labels);
    }
  }
  if (topo.empty()) {
    out.score_skip = true;
    return out;
  }
  for (const Node& node : nodes) {
    int64_t sum = 0;
    for (const auto& [k, values] : topo) {
      const auto it = node.labels.find(k);
      if (it == node.labels.end()) continue;
      const auto v = values.find(it->second);
      if (v != values.end()) sum += v->second;
    }
    out.raw.push_back(sum);
  }
  return out;
}

// ---- random clusters -----------------------------------------------------------

Node random_node(SplitMix64& rng, const std::string& name) {
  Node n = testutil::make_node(name, 4000, int64_t(8) << 30, 110);
  // Now and then two nodes share a hostname value (one domain of two
  // nodes: InterPodAffinity then counts a hostname term in a table, not
  // from the node's own counter), or a node lacks it (no domain).
  const uint64_t hostname = rng.below(40);
  if (hostname >= 3) n.labels["kubernetes.io/hostname"] = hostname < 5 ? "shared" : name;
  if (rng.chance(0.9)) n.labels["topology.kubernetes.io/zone"] = "z" + std::to_string(rng.below(3));
  if (rng.chance(0.6)) n.labels["pool"] = rng.chance(0.1) ? "" : "p" + std::to_string(rng.below(2));
  if (rng.chance(0.3)) n.labels["rack"] = "r" + std::to_string(rng.below(4));
  return n;
}

// A node with only its hostname label.
Node random_node_plain(const std::string& name) {
  Node n = testutil::make_node(name, 4000, int64_t(8) << 30, 110);
  n.labels["kubernetes.io/hostname"] = name;
  return n;
}

Pod random_pod(SplitMix64& rng, const std::string& name, double required_chance) {
  static const char* const kNamespaces[] = {"parity", "running", "other"};
  static const char* const kApps[] = {"web", "db", "cache"};
  Pod p = testutil::make_pod(name);
  p.namespace_name = kNamespaces[rng.below(3)];
  if (rng.chance(0.8)) p.labels["app"] = kApps[rng.below(3)];
  p.deleting = rng.chance(0.05);
  p.affinity = testutil::random_pod_affinity(rng, required_chance);
  return p;
}

std::string selector_text(const std::optional<LabelSelector>& s) {
  if (!s) return "nil";
  std::string out = "{";
  for (const auto& [k, v] : s->match_labels) out += k + "=" + v + " ";
  for (const auto& r : s->match_expressions) {
    out += r.key + " " + r.op + " [";
    for (const auto& v : r.values) out += v + ",";
    out += "] ";
  }
  return out + "}";
}

std::string pod_text(const Pod& p) {
  std::string out = p.namespace_name + "/" + p.name + " labels{";
  for (const auto& [k, v] : p.labels) out += k + "=" + v + " ";
  out += "}";
  if (p.deleting) out += " deleting";
  if (!p.affinity) return out;
  const auto side = [&](const char* name, const std::optional<PodAffinity>& a) {
    if (!a) return;
    out += std::string(" ") + name + ":";
    for (const auto& t : a->required) {
      out += " req(" + t.topology_key + " sel " + selector_text(t.label_selector) + " ns[";
      for (const auto& n : t.namespaces) out += n + ",";
      out += "] nssel " + selector_text(t.namespace_selector) + ")";
    }
    for (const auto& w : a->preferred) {
      out += " pref" + std::to_string(w.weight) + "(" + w.term.topology_key + " sel " + selector_text(w.term.label_selector) +
             " ns[";
      for (const auto& n : w.term.namespaces) out += n + ",";
      out += "] nssel " + selector_text(w.term.namespace_selector) + ")";
    }
  };
  side("aff", p.affinity->pod_affinity);
  side("anti", p.affinity->pod_anti_affinity);
  return out;
}

std::string dump(const Pod& in, const std::vector<Node>& nodes, const std::vector<std::vector<const Pod*>>& pods_on) {
  std::string out = "\nincoming " + pod_text(in) + "\n";
  for (size_t n = 0; n < nodes.size(); ++n) {
    out += "node " + nodes[n].name + " {";
    for (const auto& [k, v] : nodes[n].labels) out += k + "=" + v + " ";
    out += "}\n";
    for (const Pod* p : pods_on[n]) out += "   " + pod_text(*p) + "\n";
  }
  return out;
}

std::string describe(uint64_t seed, int step, const char* what, size_t node) {
  std::ostringstream os;
  os << "seed " << seed << ", step " << step << ": " << what << " differs first at node " << node;
  return os.str();
}

// Random clusters (seeds first..last), 40 random mutations each, and after
// each an incoming pod compared with upstream's walk. `draw(rng, name,
// required_chance)` draws the running and the incoming pods. Returns the
// pods compared.

// A profile of InterPodAffinity alone (PreFilter, Filter, PreScore, Score).
ProfileConfig inter_pod_affinity_only() {
  ProfileConfig p;
  p.pre_filter = {"InterPodAffinity"};
  p.filter = {"InterPodAffinity"};
  p.pre_score = {"InterPodAffinity"};
  p.score = {PluginEntry{"InterPodAffinity", 1}};
  return p;
}

template <class Draw>
int compare_with_upstream(uint64_t first, uint64_t last, Draw&& draw) {
  ClusterObjects objects;
  objects.namespaces = {Namespace{"parity", {{"team", "a"}}}, Namespace{"running", {{"team", "b"}}}};
  const ProfileConfig base = inter_pod_affinity_only();
  int compared = 0;
  for (uint64_t seed = first; seed <= last; ++seed) {
    SplitMix64 rng(seed * 7919);
    ProfileConfig profile = base;
    profile.inter_pod_affinity_args.hard_pod_affinity_weight = static_cast<int32_t>(rng.below(3));
    profile.inter_pod_affinity_args.ignore_preferred_terms_of_existing_pods = rng.chance(0.2);
    const ProfilePlan plan = make_profile_plan(profile);
    const uint32_t num_nodes = 1 + static_cast<uint32_t>(rng.below(12));
    std::vector<Node> nodes;
    for (uint32_t i = 0; i < num_nodes; ++i) nodes.push_back(random_node(rng, "n" + std::to_string(i)));
    std::vector<Pod> running;
    for (uint32_t i = 0; i < num_nodes * 2; ++i)
      running.push_back(testutil::on_node(draw(rng, "r" + std::to_string(i), 0.5), nodes[rng.below(num_nodes)].name));
    Snapshot snap = Snapshot::build(nodes, running);
    // Odd seeds: every sparse hostname group in its key's table (rows of
    // per-node counts only for those on an eighth of the nodes).
    if (seed % 2) snap.limit_sparse_term_rows(0);
    uint32_t next = 0;
    for (int step = 0; step < 40; ++step) {
      // A mutation: most often a placement, as the engine's assume.
      const uint64_t op = rng.below(20);
      if (op < 12 && snap.num_nodes() > 0) {
        snap.add_pod(draw(rng, "a" + std::to_string(next++), 0.5), static_cast<uint32_t>(rng.below(snap.num_nodes())));
      } else if (op < 15 && snap.num_pods() > 0) {
        std::vector<uint32_t> live;
        for (uint32_t id = 0; id < snap.pod_id_bound(); ++id)
          if (snap.has_pod(id)) live.push_back(id);
        snap.remove_pod(live[rng.below(live.size())]);
      } else if (op < 17 && !nodes.empty()) {
        const size_t i = rng.below(nodes.size());
        Node changed = random_node(rng, nodes[i].name);
        snap.update_node(changed);
        nodes[i] = changed;
      } else if (op < 18 && nodes.size() > 1) {
        const size_t i = rng.below(nodes.size());
        snap.remove_node(nodes[i].name);
        nodes.erase(nodes.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        nodes.push_back(random_node(rng, "m" + std::to_string(next++)));
        snap.add_node(nodes.back());
      }
      // Every third step the dead are released (term groups, matchers,
      // strings renumbered): the pod that follows must not tell.
      if (step % 3 == 2) snap.compact();
      std::vector<std::vector<const Pod*>> pods_on(snap.num_nodes());
      for (uint32_t id = 0; id < snap.pod_id_bound(); ++id)
        if (snap.has_pod(id)) pods_on[snap.pod_node(id)].push_back(&snap.pod(id));

      const Pod in = draw(rng, "in" + std::to_string(step), 0.4);
      intern_pod_for_plan(snap, in, plan, &objects);
      const Upstream want = upstream(nodes, pods_on, in, objects, profile.inter_pod_affinity_args);
      const PodQuery q = prepare_pod_query(in, snap, plan, TieBreak::First, 0, &objects);
      const PodQueryView v = q.view();
      const SnapshotView s = snap.view();
      EXPECT_EQ(v.num_filters == 0, want.prefilter_skip) << "seed " << seed << ", step " << step << ": PreFilter Skip";
      if (::testing::Test::HasFailure()) return compared;
      for (uint32_t n = 0; n < s.num_nodes; ++n) {
        const NodeVerdict got = filter_node(s, v, n);
        EXPECT_EQ(got.feasible() ? 0 : got.reasons, want.verdict[n]) << describe(seed, step, "Filter", n) << dump(in, nodes, pods_on);
        if (::testing::Test::HasFailure()) return compared;
      }
      EXPECT_EQ(v.num_scores == 0, want.score_skip) << "seed " << seed << ", step " << step << ": PreScore Skip";
      if (::testing::Test::HasFailure()) return compared;
      for (uint32_t n = 0; n < s.num_nodes && v.num_scores; ++n) {
        EXPECT_EQ(run_score(v.scores[0], s, v, n), want.raw[n]) << describe(seed, step, "raw score", n) << dump(in, nodes, pods_on);
        if (::testing::Test::HasFailure()) return compared;
      }
      ++compared;
    }
  }
  return compared;
}

TEST(InterPodAffinityEquivalence, IncrementalTablesMatchUpstreamsWalkOverEveryPod) {
  EXPECT_EQ(compare_with_upstream(1, 60, random_pod), 60 * 40);
}

// Pods with many terms drawn from a small pool, so that terms repeat
// (upstream's per-term loops count a repeated term as often as it appears;
// bulkscore counts it once with its multiplicity), several required
// affinity terms on one or more keys, an In with several values, and an
// affinity and an anti-affinity preference on one term whose weights may
// cancel. Running pods carry such terms too.
Pod many_terms_pod(SplitMix64& rng, const std::string& name, double required_chance) {
  static const std::vector<PodAffinityTerm> pool = [] {
    SplitMix64 r(20);
    std::vector<PodAffinityTerm> out;
    for (int i = 0; i < 6; ++i) out.push_back(testutil::random_pod_affinity_term(r));
    PodAffinityTerm in;
    in.topology_key = "topology.kubernetes.io/zone";
    in.label_selector = LabelSelector{};
    in.label_selector->match_expressions.push_back({"app", "In", {"web", "db"}});
    out.push_back(in);
    return out;
  }();
  Pod p = random_pod(rng, name, 0);
  if (!rng.chance(0.7)) return p;
  p.affinity = Affinity{};
  const auto draw_term = [&] { return pool[static_cast<size_t>(rng.below(pool.size()))]; };
  for (auto* side : {&p.affinity->pod_affinity, &p.affinity->pod_anti_affinity}) {
    if (!rng.chance(0.8)) continue;
    PodAffinity pa;
    if (rng.chance(required_chance))
      for (uint64_t k = 1 + rng.below(3); k > 0; --k) pa.required.push_back(draw_term());
    for (uint64_t k = rng.below(12); k > 0; --k)
      pa.preferred.push_back({static_cast<int32_t>(rng.chance(0.3) ? 50 : rng.between(1, 100)), draw_term()});
    *side = pa;
  }
  return p;
}

TEST(InterPodAffinityEquivalence, RepeatedTermsCountAsOftenAsTheyAppear) {
  EXPECT_EQ(compare_with_upstream(1, 40, many_terms_pod), 40 * 40);
}

// Issue 20: a pod with 10,000 required anti-affinity terms and 10,000
// preferred ones took minutes (each term found by comparing it with every
// matcher, counted by its own walk over the pods, and walked over the nodes
// on its own). Here 100 distinct terms of each kind repeat 100 times: the
// pod registers 200 matchers in one walk over the 1,000 running pods, and
// decides as a pod carrying each distinct term once, its preferred weights
// summed, which upstream's walk confirms.
TEST(InterPodAffinityEquivalence, TenThousandTermsCostWorkPerDistinctTerm) {
  std::vector<Node> nodes;
  for (int i = 0; i < 20; ++i) {
    const std::string name = "n" + std::to_string(i);
    Node n = testutil::make_node(name, 64000, int64_t(256) << 30, 200);
    n.labels = {{"kubernetes.io/hostname", name}, {"topology.kubernetes.io/zone", "z" + std::to_string(i % 3)}};
    nodes.push_back(n);
  }
  std::vector<Pod> running;
  for (int i = 0; i < 1000; ++i) {  // the pods of a<j> run on node j % 20
    Pod p = testutil::on_node(testutil::make_pod("r" + std::to_string(i)), "n" + std::to_string(i % 20));
    p.labels = {{"app", "a" + std::to_string(i % 300)}};
    running.push_back(p);
  }
  const auto anti = [](int k) {
    PodAffinityTerm t;
    t.label_selector = LabelSelector{};
    t.label_selector->match_expressions.push_back({"app", "In", {"a" + std::to_string(20 * k)}});
    t.topology_key = k % 2 ? "topology.kubernetes.io/zone" : "kubernetes.io/hostname";
    return t;
  };
  const auto preferred = [](int k) {
    PodAffinityTerm t;
    t.label_selector = LabelSelector{};
    t.label_selector->match_labels["app"] = "a" + std::to_string(101 + 2 * k);  // odd: none of anti()'s
    t.topology_key = "topology.kubernetes.io/zone";
    return t;
  };
  Pod many = testutil::make_pod("many");
  Pod few = testutil::make_pod("few");
  for (Pod* p : {&many, &few}) {
    p->labels = {{"app", "incoming"}};
    p->affinity = Affinity{};
    p->affinity->pod_anti_affinity = PodAffinity{};
    p->affinity->pod_affinity = PodAffinity{};
  }
  std::vector<int32_t> summed(100, 0);
  for (int i = 0; i < 10000; ++i) {
    many.affinity->pod_anti_affinity->required.push_back(anti(i % 100));
    const auto weight = static_cast<int32_t>(1 + i % 97);
    many.affinity->pod_affinity->preferred.push_back({weight, preferred(i % 100)});
    summed[static_cast<size_t>(i % 100)] += weight;
  }
  for (int k = 0; k < 100; ++k) {
    few.affinity->pod_anti_affinity->required.push_back(anti(k));
    few.affinity->pod_affinity->preferred.push_back({summed[static_cast<size_t>(k)], preferred(k)});
  }

  const ProfileConfig profile = inter_pod_affinity_only();
  const ProfilePlan plan = make_profile_plan(profile);
  Snapshot snap = Snapshot::build(nodes, running);
  const Snapshot::MatcherWork before = snap.matcher_work();
  intern_pod_for_plan(snap, many, plan, nullptr);
  EXPECT_EQ(snap.num_topology_matchers(), 200u);
  // One walk, each running pod checked against the one new matcher filed
  // under its app label (before: 20,000 walks, 20 million checks); no
  // comparison but a hash collision's (before: 200 million).
  EXPECT_LE(snap.matcher_work().slot_checks - before.slot_checks, 1000u);
  EXPECT_LE(snap.matcher_work().compares - before.compares, 10u);
  intern_pod_for_plan(snap, few, plan, nullptr);
  EXPECT_EQ(snap.num_topology_matchers(), 200u);

  const PodQuery qm = prepare_pod_query(many, snap, plan, TieBreak::First, 0, nullptr);
  const PodQuery qf = prepare_pod_query(few, snap, plan, TieBreak::First, 0, nullptr);
  const PodQueryView vm = qm.view(), vf = qf.view();
  const SnapshotView s = snap.view();
  std::vector<std::vector<const Pod*>> pods_on(snap.num_nodes());
  for (uint32_t id = 0; id < snap.pod_id_bound(); ++id)
    if (snap.has_pod(id)) pods_on[snap.pod_node(id)].push_back(&snap.pod(id));
  const Upstream want = upstream(nodes, pods_on, few, ClusterObjects{}, profile.inter_pod_affinity_args);
  ASSERT_EQ(vm.num_scores, 1u);
  ASSERT_EQ(vf.num_scores, 1u);
  int feasible = 0;
  for (uint32_t n = 0; n < s.num_nodes; ++n) {
    const NodeVerdict m = filter_node(s, vm, n), f = filter_node(s, vf, n);
    EXPECT_EQ(m.feasible() ? 0 : m.reasons, want.verdict[n]) << "node " << n;
    EXPECT_EQ(f.feasible() ? 0 : f.reasons, want.verdict[n]) << "node " << n;
    feasible += m.feasible() ? 1 : 0;
    EXPECT_EQ(run_score(vm.scores[0], s, vm, n), want.raw[n]) << "node " << n;
    EXPECT_EQ(run_score(vf.scores[0], s, vf, n), want.raw[n]) << "node " << n;
  }
  // The pods of a<j> run on node j % 20: the anti-affinity terms select
  // a0, a20, ..., a280 (node n0) and pods of no app, and rule out n0's zone.
  EXPECT_EQ(feasible, 13);
}


// The batch cache's contract with InterPodAffinity (filter_count_changes):
// where two queries of one pod differ in their Filter tables' counts only,
// every node it does not name keeps its verdict. Random clusters (hostname,
// zone, pool and rack keys; values missing and empty), pods with random
// required and preferred terms; between the two queries 1 to 3 pods are
// placed, often copies of the incoming pod (which its own terms count).
// Each node's verdict under the first query's tables is what a cache state
// kept; under the second's what a full evaluation finds. Raw scores must not
// move at all (a hit keeps them).
TEST(InterPodAffinityEquivalence, CountChangesNameEveryNodeWhoseVerdictCanMove) {
  using plugins::InterPodAffinity;
  ClusterObjects objects;
  objects.namespaces = {Namespace{"parity", {{"team", "a"}}}, Namespace{"running", {{"team", "b"}}}};
  const ProfilePlan plan = make_profile_plan(inter_pod_affinity_only());
  constexpr uint8_t kId = plugin_id<InterPodAffinity>();
  uint64_t compared = 0, counts_only = 0, named = 0, moved = 0;
  for (uint64_t seed = 1; seed <= 120; ++seed) {
    SplitMix64 rng(seed * 104729);
    const uint32_t num_nodes = 2 + static_cast<uint32_t>(rng.below(seed % 10 == 0 ? 300 : seed % 5 == 0 ? 60 : 14));
    std::vector<Node> nodes;
    for (uint32_t i = 0; i < num_nodes; ++i) nodes.push_back(random_node(rng, "n" + std::to_string(i)));
    std::vector<Pod> running;
    for (uint32_t i = 0; i < num_nodes; ++i)
      running.push_back(testutil::on_node(random_pod(rng, "r" + std::to_string(i), 0.5), nodes[rng.below(num_nodes)].name));
    Snapshot snap = Snapshot::build(nodes, running);
    if (seed % 2) snap.limit_sparse_term_rows(0);  // sparse hostname groups in their key's table
    uint32_t next = 0;
    for (int step = 0; step < 30; ++step) {
      // Mostly required terms alone: preferred terms (and the existing
      // pods' terms that match) give Score tables, whose counts move too.
      Pod in = random_pod(rng, "in" + std::to_string(step), 0.9);
      if (!in.affinity) {
        in.affinity = Affinity{};
        in.affinity->pod_anti_affinity = PodAffinity{};
        in.affinity->pod_anti_affinity->required.push_back(testutil::random_pod_affinity_term(rng));
      }
      if (rng.chance(0.7))
        for (auto* side : {&in.affinity->pod_affinity, &in.affinity->pod_anti_affinity})
          if (*side) (*side)->preferred.clear();
      if (rng.chance(0.3)) {
        // A group that attracts itself: its first pod passes anywhere the
        // key is (no pod matches yet), the next ones only beside it.
        in.labels["app"] = "self" + std::to_string(step);
        PodAffinityTerm t;
        t.topology_key = rng.chance(0.5) ? "topology.kubernetes.io/zone" : "rack";
        t.label_selector = LabelSelector{};
        t.label_selector->match_labels["app"] = in.labels["app"];
        in.affinity->pod_affinity = PodAffinity{};
        in.affinity->pod_affinity->required.push_back(std::move(t));
      }
      intern_pod_for_plan(snap, in, plan, &objects);
      const PodQuery a = prepare_pod_query(in, snap, plan, TieBreak::First, 0, &objects);
      const uint32_t placed = 1 + static_cast<uint32_t>(rng.below(3));
      for (uint32_t k = 0; k < placed; ++k) {
        Pod p = rng.chance(0.7) ? in : random_pod(rng, "x", 0.5);
        p.name = "a" + std::to_string(next++);
        snap.add_pod(std::move(p), static_cast<uint32_t>(rng.below(snap.num_nodes())));
      }
      intern_pod_for_plan(snap, in, plan, &objects);
      const PodQuery b = prepare_pod_query(in, snap, plan, TieBreak::First, 0, &objects);
      if (a.header.num_filters != b.header.num_filters || b.header.num_filters == 0) continue;
      ++compared;
      const PodQueryView va = a.view(), vb = b.view();
      const ArenaRange ra = a.prepared_ranges[kId], rb = b.prepared_ranges[kId];
      std::vector<uint32_t> names;
      if (!InterPodAffinity::filter_count_changes(snap, plugin_state<InterPodAffinity>(va), va.arena, ra.begin, ra.end,
                                                  plugin_state<InterPodAffinity>(vb), vb.arena, rb.begin, rb.end,
                                                  &names))
        continue;
      counts_only += names.empty() ? 0 : 1;  // else the same counts
      named += names.size();
      ASSERT_TRUE(std::is_sorted(names.begin(), names.end())) << "seed " << seed << ", step " << step;
      const SnapshotView s = snap.view();
      for (uint32_t n = 0; n < s.num_nodes; ++n) {
        const FilterOutcome x = InterPodAffinity::filter(s, plugin_state<InterPodAffinity>(va), va.arena, n);
        const FilterOutcome y = InterPodAffinity::filter(s, plugin_state<InterPodAffinity>(vb), vb.arena, n);
        const bool same = x.code == y.code && x.reasons == y.reasons;
        // The other half of the contract: Score reads none of what moved
        // (a hit keeps the plugin's raw scores).
        ASSERT_EQ(InterPodAffinity::score(s, plugin_state<InterPodAffinity>(va), va.arena, n),
                  InterPodAffinity::score(s, plugin_state<InterPodAffinity>(vb), vb.arena, n))
            << describe(seed, step, "a raw score moved between queries that differ in Filter counts only", n)
            << pod_text(in);
        if (same) continue;
        ++moved;
        ASSERT_TRUE(std::binary_search(names.begin(), names.end(), n))
            << describe(seed, step, "a verdict moved on a node not named", n) << pod_text(in);
      }
    }
  }
  std::printf("[ ipa ] %llu query pairs, %llu differ in Filter counts only (some count moved), %llu nodes named, %llu verdicts moved\n",
              static_cast<unsigned long long>(compared), static_cast<unsigned long long>(counts_only),
              static_cast<unsigned long long>(named), static_cast<unsigned long long>(moved));
  // The comparison has something to hold: pairs whose counts alone differ,
  // and verdicts that moved among the nodes they name.
  EXPECT_GT(counts_only, compared / 20);
  EXPECT_GT(moved, counts_only / 10);
}


// The existing pods' required anti-affinity terms on a hostname key: a
// group held on many nodes keeps a row of per-node counts (node_row, read
// by Filter), a group on few nodes stays in its key's table once the
// sparse groups' rows are spent (here none are allowed). The
// preemption dry run's removals must take each removed term from where it
// is counted: here node 0 holds a pod of each group, and removing the
// dense group's pod alone leaves the sparse group's term, which still
// rejects the node.
TEST(InterPodAffinityEquivalence, RemovalsTakeEachExistingTermFromItsRowOrItsTable) {
  using InterPodAffinity = plugins::InterPodAffinity;
  std::vector<Node> nodes;
  for (int i = 0; i < 16; ++i) nodes.push_back(random_node_plain("n" + std::to_string(i)));
  const auto holder = [](const std::string& name, const std::string& node, const std::string& ns) {
    Pod p = testutil::on_node(testutil::make_pod(name), node);
    PodAffinityTerm t;
    t.topology_key = "kubernetes.io/hostname";
    t.label_selector = LabelSelector{};
    t.label_selector->match_labels["tier"] = "x";
    t.namespaces = {ns};  // another namespace list: another group
    p.affinity = Affinity{};
    p.affinity->pod_anti_affinity = PodAffinity{};
    p.affinity->pod_anti_affinity->required.push_back(t);
    return p;
  };
  std::vector<Pod> running;
  for (int i = 0; i < 8; ++i) running.push_back(holder("dense" + std::to_string(i), "n" + std::to_string(i), "default"));
  running.push_back(holder("sparse", "n0", "default"));
  running.back().affinity->pod_anti_affinity->required[0].namespaces.push_back("other");
  Snapshot snap = Snapshot::build(nodes, running);
  snap.limit_sparse_term_rows(0);  // only the dense group gets a row
  Pod in = testutil::make_pod("in");
  in.labels["tier"] = "x";
  const ProfilePlan plan = make_profile_plan(inter_pod_affinity_only());
  intern_pod_for_plan(snap, in, plan, nullptr);
  const PodQuery q = prepare_pod_query(in, snap, plan, TieBreak::First, 0, nullptr);
  const PodQueryView v = q.view();
  const InterPodAffinity::State& st = plugin_state<InterPodAffinity>(v);
  ASSERT_EQ(st.existing_on_node.count, 1u) << "the dense group reads its row";
  ASSERT_EQ(st.existing_anti_affinity.count, 1u) << "the sparse group stays in the hostname table";
  const SnapshotView s = snap.view();
  const RemovalContext ctx{in, snap, nullptr};
  const uint32_t slots = InterPodAffinity::removal_slots(st);
  std::vector<uint32_t> on_n0;
  for (const uint32_t id : snap.pods_on_node(0)) on_n0.push_back(id);
  ASSERT_EQ(on_n0.size(), 2u);
  std::vector<int64_t> removed(on_n0.size() * slots);
  InterPodAffinity::removal_counts(ctx, st, v.arena, 0, on_n0.data(), static_cast<uint32_t>(on_n0.size()),
                                   removed.data());
  EXPECT_FALSE(InterPodAffinity::filter(s, st, v.arena, 0).ok());
  for (size_t k = 0; k < on_n0.size(); ++k) {
    // One pod removed: the other group's term still rejects node 0.
    EXPECT_FALSE(InterPodAffinity::filter(s, st, v.arena, 0, removed.data() + k * slots).ok())
        << "removing " << snap.pod(on_n0[k]).name << " alone";
  }
  std::vector<int64_t> both(slots);
  for (uint32_t j = 0; j < slots; ++j) both[j] = removed[j] + removed[slots + j];
  EXPECT_TRUE(InterPodAffinity::filter(s, st, v.arena, 0, both.data()).ok()) << "both removed";
  EXPECT_FALSE(InterPodAffinity::filter(s, st, v.arena, 1).ok());
  EXPECT_TRUE(InterPodAffinity::filter(s, st, v.arena, 8).ok());
}

}  // namespace
}  // namespace bulkscore
