// PodTopologySpread: upstream's filtering_test.go (TestSingleConstraint,
// TestMultipleConstraints) and scoring_test.go (TestPodTopologySpreadScore,
// the revision with math.Round and the constraint-indexed state) cases with
// their expected numbers, the semantics doc's scoring example, the default constraints through DefaultSelector, and
// an engine run in which a ReplicaSet's pods selected by a Service spread
// across zones.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

#include "host/engine/engine.hpp"
#include "plugins/evaluate.hpp"
#include "tests/test_util.hpp"

namespace bulkscore {
namespace {

using namespace testutil;

constexpr const char* kPts = "PodTopologySpread";

Node zn(const std::string& name, const std::string& zone, const std::string& zone_key = "zone") {
  StringMap labels{{"node", name}};
  if (!zone.empty()) labels[zone_key] = zone;
  return make_node_with(name, {{"cpu", 8000}, {"memory", int64_t(16) << 30}, {"pods", 110}}, labels);
}

std::vector<Node> four_nodes() {
  return {zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2"), zn("node-y", "zone2")};
}

LabelSelector exists(const std::string& key) {
  LabelSelector s;
  s.match_expressions.push_back({key, "Exists", {}});
  return s;
}

TopologySpreadConstraint constraint(int32_t skew, const std::string& key, const std::string& when,
                                    std::optional<LabelSelector> sel) {
  TopologySpreadConstraint c;
  c.max_skew = skew;
  c.topology_key = key;
  c.when_unsatisfiable = when;
  c.label_selector = std::move(sel);
  return c;
}

Pod incoming(StringMap labels, std::vector<TopologySpreadConstraint> cs) {
  Pod p = make_pod("p");
  p.labels = std::move(labels);
  p.topology_spread_constraints = std::move(cs);
  return p;
}

Pod existing(const std::string& name, const std::string& node, StringMap labels = {{"foo", ""}},
             const std::string& ns = "default") {
  Pod p = on_node(make_pod(name), node);
  p.labels = std::move(labels);
  p.namespace_name = ns;
  return p;
}

// 2/1/0/3 over node-a, node-b, node-x, node-y.
std::vector<Pod> spread_2103() {
  return {existing("p-a1", "node-a"), existing("p-a2", "node-a"), existing("p-b1", "node-b"),
          existing("p-y1", "node-y"), existing("p-y2", "node-y"), existing("p-y3", "node-y")};
}

using C = Code;
constexpr C S = Code::Success, U = Code::Unschedulable, UR = Code::UnschedulableAndUnresolvable;

void expect_codes(const FilterRun& r, const std::vector<C>& want) {
  ASSERT_EQ(r.nodes.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(r.code(i), want[i]) << "node " << i;
}

TEST(PodTopologySpreadFilter, UpstreamSingleConstraint) {
  const auto hard = [](int32_t skew, const std::string& key, const std::string& sel_key) {
    return constraint(skew, key, "DoNotSchedule", exists(sel_key));
  };
  struct Case {
    const char* name;
    Pod pod;
    std::vector<Node> nodes;
    std::vector<Pod> pods;
    std::vector<C> want;
  };
  std::vector<Node> typo = four_nodes();
  typo[1] = zn("node-b", "zone1", "zon");
  Pod affinity = incoming({{"foo", ""}}, {hard(1, "node", "foo")});
  require_node_affinity(affinity, {expressions_term({requirement("node", "In", {"node-a", "node-y"})})});
  Pod terminating = existing("p-a", "node-a");
  terminating.deleting = true;
  const std::vector<Case> cases = {
      {"no existing pods", incoming({{"foo", ""}}, {hard(1, "zone", "foo")}), four_nodes(), {}, {S, S, S, S}},
      {"no existing pods, incoming pod doesn't match itself",
       incoming({{"foo", ""}}, {hard(1, "zone", "bar")}),
       four_nodes(),
       {},
       {S, S, S, S}},
      {"existing pods in a different namespace do not count",
       incoming({{"foo", ""}}, {hard(1, "zone", "foo")}),
       four_nodes(),
       {existing("p-a1", "node-a", {{"foo", ""}}, "ns1"), existing("p-b1", "node-a", {{"foo", ""}}, "ns2"),
        existing("p-x1", "node-x"), existing("p-y1", "node-y")},
       {S, S, U, U}},
      {"pods spread across zones as 3/3, all nodes fit",
       incoming({{"foo", ""}}, {hard(1, "zone", "foo")}),
       four_nodes(),
       spread_2103(),
       {S, S, S, S}},
      {"pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
       incoming({{"foo", ""}}, {hard(1, "zone", "foo")}),
       typo,
       {existing("p-a1", "node-a"), existing("p-b1", "node-b"), existing("p-x1", "node-x"), existing("p-y1", "node-y")},
       {S, UR, U, U}},
      {"pod cannot be scheduled as all nodes don't have label 'rack'",
       incoming({{"foo", ""}}, {hard(1, "rack", "foo")}),
       {zn("node-a", "zone1"), zn("node-x", "zone2")},
       {},
       {UR, UR}},
      {"pods spread across nodes as 2/1/0/3, only node-x fits",
       incoming({{"foo", ""}}, {hard(1, "node", "foo")}),
       four_nodes(),
       spread_2103(),
       {U, U, S, U}},
      {"pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
       incoming({{"foo", ""}}, {hard(2, "node", "foo")}),
       four_nodes(),
       spread_2103(),
       {U, S, S, U}},
      {"pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
       incoming({{"bar", ""}}, {hard(1, "node", "foo")}),
       four_nodes(),
       spread_2103(),
       {U, S, S, U}},
      {"incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
       affinity,
       four_nodes(),
       spread_2103(),
       {S, S, S, U}},
      {"terminating Pods should be excluded",
       incoming({{"foo", ""}}, {hard(1, "node", "foo")}),
       {zn("node-a", ""), zn("node-b", "")},
       {terminating, existing("p-b", "node-b")},
       {S, U}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const FilterRun r = run_filter(kPts, c.nodes, c.pods, c.pod);
    EXPECT_EQ(r.prefilter, Code::Success);
    expect_codes(r, c.want);
  }
}

TEST(PodTopologySpreadFilter, UpstreamMultipleConstraints) {
  const Pod pod = incoming({{"foo", ""}}, {constraint(1, "zone", "DoNotSchedule", exists("foo")),
                                           constraint(1, "node", "DoNotSchedule", exists("foo"))});
  expect_codes(run_filter(kPts, four_nodes(), spread_2103(), pod), {U, U, S, U});
  std::vector<Pod> more = spread_2103();
  more.push_back(existing("p-y4", "node-y"));
  expect_codes(run_filter(kPts, four_nodes(), more, pod), {U, U, U, U});
}

TEST(PodTopologySpreadFilter, ReasonsSkipAndMinDomains) {
  const FilterRun r = run_filter(kPts, {zn("node-a", "zone1"), zn("node-b", "")}, {existing("p", "node-a")},
                                 incoming({{"foo", ""}}, {constraint(1, "zone", "DoNotSchedule", exists("foo"))}));
  EXPECT_EQ(r.nodes[0], fits());
  EXPECT_EQ(r.nodes[1],
            rejected(UR, {"node(s) didn't match pod topology spread constraints (missing required label)"}));
  // minDomains 3 with two zones: the global minimum is 0, so zone1 (1 pod + self) has skew 2 > 1.
  TopologySpreadConstraint c = constraint(1, "zone", "DoNotSchedule", exists("foo"));
  c.min_domains = 3;
  const FilterRun m = run_filter(kPts, {zn("node-a", "zone1"), zn("node-x", "zone2")}, {existing("p", "node-a")},
                                 incoming({{"foo", ""}}, {c}));
  EXPECT_EQ(m.nodes[0], rejected(U, {"node(s) didn't match pod topology spread constraints"}));
  EXPECT_EQ(m.nodes[1], fits());
  // Only ScheduleAnyway constraints, or none: PreFilter Skip.
  EXPECT_EQ(run_filter(kPts, four_nodes(), {}, incoming({}, {constraint(1, "zone", "ScheduleAnyway", exists("a"))}))
                .prefilter,
            Code::Skip);
  EXPECT_EQ(run_filter(kPts, four_nodes(), {}, make_pod("plain")).prefilter, Code::Skip);
}

TEST(PodTopologySpreadScore, SemanticsDocExampleHostname) {
  // One hostname constraint, maxSkew 1, candidates holding 2, 1, 0 and 3
  // matching pods: weight ln 6, raw {4, 2, 0, 5}, normalized {20, 60, 100, 0}.
  std::vector<Node> nodes;
  for (const char* n : {"node-a", "node-b", "node-x", "node-y"})
    nodes.push_back(make_node_with(n, {{"cpu", 8000}, {"pods", 110}}, {{"kubernetes.io/hostname", n}}));
  const ScoreRun r =
      run_score(kPts, nodes, spread_2103(),
                incoming({{"foo", ""}}, {constraint(1, "kubernetes.io/hostname", "ScheduleAnyway", exists("foo"))}));
  ASSERT_FALSE(r.skipped);
  EXPECT_EQ(r.raw, (std::vector<int64_t>{4, 2, 0, 5}));
  EXPECT_EQ(r.normalized, (std::vector<int64_t>{20, 60, 100, 0}));
}

// Scores with `failed` nodes infeasible (cordoned, NodeUnschedulable in the
// profile), as upstream's tests pass them in failedNodes; normalized scores
// of the feasible nodes in node order.
std::vector<int64_t> scores_with_failed(std::vector<Node> nodes, const std::vector<std::string>& failed,
                                        const std::vector<Pod>& pods, const Pod& pod) {
  for (Node& n : nodes)
    if (std::find(failed.begin(), failed.end(), n.name) != failed.end()) n.unschedulable = true;
  Snapshot snap = Snapshot::build(nodes, pods);
  ProfileConfig profile = score_only_profile(kPts);
  profile.filter = {"NodeUnschedulable"};
  const ProfilePlan plan = make_profile_plan(profile);
  intern_pod_for_plan(snap, pod, plan);
  PodQuery q = prepare_pod_query(pod, snap, plan, TieBreak::First, 0);
  EvalRequest req;
  req.want_scores = true;
  req.score_single = true;
  EvalResult out;
  make_cpu_backend()->evaluate(snap, q, req, out);
  std::vector<std::pair<uint32_t, int64_t>> byNode;
  for (size_t i = 0; i < out.scored_nodes.size(); ++i)
    byNode.emplace_back(out.scored_nodes[i], out.normalized_scores.at(i));
  std::sort(byNode.begin(), byNode.end());
  std::vector<int64_t> v;
  for (const auto& kv : byNode) v.push_back(kv.second);
  return v;
}

Node hz(const std::string& name, const std::string& zone = "", const std::string& host_key = "kubernetes.io/hostname") {
  StringMap labels{{host_key, name}};
  if (!zone.empty()) labels["zone"] = zone;
  return make_node_with(name, {{"cpu", 8000}, {"pods", 110}}, labels);
}

std::vector<Pod> foo_pods(const std::vector<std::pair<std::string, int>>& per_node) {
  std::vector<Pod> out;
  for (const auto& [node, n] : per_node)
    for (int i = 0; i < n; ++i) out.push_back(existing("p-" + node + std::to_string(i), node));
  return out;
}

TEST(PodTopologySpreadScore, UpstreamScoreCases) {
  const auto soft = [](int32_t skew, const std::string& key, const std::string& sel) {
    return constraint(skew, key, "ScheduleAnyway", exists(sel));
  };
  const std::string host = "kubernetes.io/hostname";
  const Pod foo1 = incoming({{"foo", ""}}, {soft(1, host, "foo")});
  const std::vector<Node> abcd = {hz("node-a"), hz("node-b"), hz("node-c"), hz("node-d")};
  const auto spread2103 = foo_pods({{"node-a", 2}, {"node-b", 1}, {"node-d", 3}});
  EXPECT_EQ(scores_with_failed({hz("node-a"), hz("node-b")}, {}, foo_pods({{"node-a", 1}, {"node-b", 1}}), foo1),
            (std::vector<int64_t>{100, 100}));
  EXPECT_EQ(scores_with_failed(abcd, {}, spread2103, foo1), (std::vector<int64_t>{20, 60, 100, 0}));
  EXPECT_EQ(scores_with_failed(abcd, {}, spread2103, incoming({{"foo", ""}}, {soft(2, host, "foo")})),
            (std::vector<int64_t>{33, 66, 100, 16}));
  EXPECT_EQ(scores_with_failed(abcd, {}, foo_pods({{"node-a", 4}, {"node-b", 3}, {"node-c", 2}, {"node-d", 1}}),
                               incoming({{"foo", ""}}, {soft(3, host, "foo")})),
            (std::vector<int64_t>{44, 66, 77, 100}));
  const auto spread4213 = foo_pods({{"node-a", 4}, {"node-b", 2}, {"node-x", 1}, {"node-y", 3}});
  EXPECT_EQ(scores_with_failed({hz("node-a"), hz("node-b"), hz("node-x"), hz("node-y")}, {"node-y"}, spread4213, foo1),
            (std::vector<int64_t>{33, 83, 100}));
  EXPECT_EQ(scores_with_failed({hz("node-a"), hz("node-b", "", "n"), hz("node-x"), hz("node-y")}, {"node-y"},
                               spread4213, foo1),
            (std::vector<int64_t>{16, 0, 100}));
  EXPECT_EQ(
      scores_with_failed({hz("node-a", "zone1"), hz("node-b", "zone1"), hz("node-x", "zone2"), hz("node-y", "zone2")},
                         {"node-y"}, spread4213, incoming({{"foo", ""}}, {soft(1, "zone", "foo")})),
      (std::vector<int64_t>{75, 75, 100}));
  const std::vector<Node> zoned = {hz("node-a", "zone1"), hz("node-b", "zone1"), hz("node-x", "zone2"),
                                   hz("node-y", "zone2")};
  EXPECT_EQ(scores_with_failed(zoned, {"node-b", "node-y"},
                               foo_pods({{"node-a", 2}, {"node-b", 1}, {"node-x", 2}, {"node-y", 4}}),
                               incoming({{"foo", ""}}, {soft(1, "zone", "foo"), soft(1, host, "foo")})),
            (std::vector<int64_t>{100, 63}));
  const Pod foobar = incoming({{"foo", ""}, {"bar", ""}}, {soft(1, "zone", "foo"), soft(1, host, "bar")});
  const std::vector<Pod> mixed = {existing("p-a1", "node-a", {{"foo", ""}}),
                                  existing("p-b1", "node-b", {{"foo", ""}, {"bar", ""}}),
                                  existing("p-y1", "node-y", {{"foo", ""}}), existing("p-y2", "node-y", {{"bar", ""}})};
  EXPECT_EQ(scores_with_failed(zoned, {}, mixed, foobar), (std::vector<int64_t>{60, 20, 100, 60}));
  // Not in upstream's table at v1.35 with these numbers; by hand: zone weight ln 4,
  // hostname weight ln 5, raw {3, 4, 1}.
  EXPECT_EQ(scores_with_failed(zoned, {"node-y"}, mixed, foobar), (std::vector<int64_t>{50, 25, 100}));
  EXPECT_EQ(scores_with_failed(zoned, {},
                               {existing("p-b1", "node-b", {{"bar", ""}}), existing("p-x1", "node-x", {{"foo", ""}}),
                                existing("p-y1", "node-y", {{"foo", ""}, {"bar", ""}})},
                               foobar),
            (std::vector<int64_t>{100, 60, 40, 0}));
  EXPECT_EQ(scores_with_failed({hz("node-a"), hz("node-b")}, {},
                               {existing("p-a1", "node-a", {{"foo", ""}}, "ns1"), existing("p-a2", "node-a"),
                                existing("p-b1", "node-b"), existing("p-b2", "node-b")},
                               foo1),
            (std::vector<int64_t>{100, 33}));  // by hand (ln 4 weight, math.Round): raw {1, 3}
  // System defaulting, nodes without a zone, pods selected by a Service: the
  // same scores as one hostname constraint with maxSkew 3.
  {
    ClusterObjects objects;
    SelectingObject svc;
    svc.namespace_name = "default";
    svc.name = "svc";
    svc.has_selector = true;
    svc.selector_map = {{"foo", ""}};
    objects.selecting.push_back(svc);
    Pod plain = make_pod("p");
    plain.labels = {{"foo", ""}};
    const ScoreRun r = run_score(kPts, abcd, foo_pods({{"node-a", 4}, {"node-b", 3}, {"node-c", 2}, {"node-d", 1}}),
                                 plain, ProfileConfig{}, &objects);
    EXPECT_EQ(r.normalized, (std::vector<int64_t>{44, 66, 77, 100}));
  }
  Pod terminating = existing("p-a", "node-a");
  terminating.deleting = true;
  EXPECT_EQ(scores_with_failed({hz("node-a"), hz("node-b")}, {}, {terminating, existing("p-b", "node-b")}, foo1),
            (std::vector<int64_t>{100, 0}));
}

TEST(PodTopologySpreadScore, ZoneDomainsAndIgnoredNodes) {
  // zone constraint maxSkew 1: zones zone1 (3 pods) and zone2 (3 pods), node-c
  // without a zone is ignored (the pod's own constraints require every key).
  std::vector<Node> nodes = four_nodes();
  nodes.push_back(zn("node-c", ""));
  const ScoreRun r = run_score(kPts, nodes, spread_2103(),
                               incoming({{"foo", ""}}, {constraint(1, "zone", "ScheduleAnyway", exists("foo"))}));
  // weight ln(2 + 2); raw round(3 * ln 4) = 4 for every zoned node.
  EXPECT_EQ(r.raw[0], 4);
  EXPECT_EQ(r.raw[3], 4);
  EXPECT_EQ(r.raw[4], kIgnoredScore);
  EXPECT_EQ(r.normalized, (std::vector<int64_t>{100, 100, 100, 100, 0}));
}

// A Service in "default" selecting app=web: the pods' default spreading selector.
SelectingObject web_service() {
  SelectingObject svc;
  svc.kind = SelectingObject::Kind::Service;
  svc.namespace_name = "default";
  svc.name = "web";
  svc.has_selector = true;
  svc.selector_map = {{"app", "web"}};
  return svc;
}

TEST(PodTopologySpreadScore, SystemDefaultsNeedASelectingObject) {
  Pod pod = make_pod("web-1");
  pod.labels = {{"app", "web"}};
  const std::vector<Node> nodes = four_nodes();
  EXPECT_TRUE(run_score(kPts, nodes, {}, pod).skipped);  // no Service, no controller: Skip
  ClusterObjects objects;
  objects.selecting.push_back(web_service());
  std::vector<Node> hosts;
  for (const char* n : {"n1", "n2"})
    hosts.push_back(make_node_with(n, {{"cpu", 8000}, {"pods", 110}},
                                   {{"kubernetes.io/hostname", n}, {"topology.kubernetes.io/zone", "z"}}));
  Pod other = existing("w0", "n1", {{"app", "web"}});
  const ScoreRun r = run_score(kPts, hosts, {other}, pod, ProfileConfig{}, &objects);
  ASSERT_FALSE(r.skipped);
  // hostname (maxSkew 3, weight ln 4): n1 1 pod; zone (maxSkew 5, weight ln 3): 1 pod in z.
  // n1: round(ln4 + 2 + ln3 + 4) = round(8.48) = 8, n2: round(2 + ln3 + 4) = 7.
  EXPECT_EQ(r.raw, (std::vector<int64_t>{8, 7}));
  EXPECT_EQ(r.normalized, (std::vector<int64_t>{87, 100}));
}

// System defaults count a node without the zone key in the "" zone
// (upstream reads node.Labels[key]): a node with zone "" and a node without
// the key are one domain. Here only the "" node is feasible (the other is
// cordoned), so the domain is registered through "" alone, and the pods on
// the keyless node must still count in it. The zone key is on most nodes, so
// it has a dense column (the rank path).
TEST(PodTopologySpreadScore, SystemDefaultsMergeTheEmptyZoneWithAMissingOne) {
  Pod pod = make_pod("web-1");
  pod.labels = {{"app", "web"}};
  ClusterObjects objects;
  objects.selecting.push_back(web_service());
  std::vector<Node> nodes;
  const auto node = [&](const char* name, const char* zone) {
    StringMap labels{{"kubernetes.io/hostname", name}};
    if (zone) labels["topology.kubernetes.io/zone"] = zone;
    nodes.push_back(make_node_with(name, {{"cpu", 8000}, {"pods", 110}}, labels));
  };
  node("a1", "a");
  node("a2", "a");
  node("e1", "");       // the "" zone
  node("m1", nullptr);  // no zone: the same domain
  nodes.back().unschedulable = true;
  const std::vector<Pod> running = {existing("w0", "m1", {{"app", "web"}}), existing("w1", "m1", {{"app", "web"}})};
  Snapshot snap = Snapshot::build(nodes, running);
  ProfileConfig profile = score_only_profile(kPts);
  profile.filter = {"NodeUnschedulable"};
  const ProfilePlan plan = make_profile_plan(profile);
  intern_pod_for_plan(snap, pod, plan, &objects);
  PodQuery q = prepare_pod_query(pod, snap, plan, TieBreak::First, 0, &objects);
  EvalRequest req;
  req.want_scores = true;
  req.score_single = true;
  EvalResult out;
  make_cpu_backend()->evaluate(snap, q, req, out);
  ASSERT_EQ(out.scored_nodes, (std::vector<uint32_t>{0, 1, 2}));
  // Domains a and ""+missing: zone weight ln 4; hostname weight ln 5 (three
  // feasible nodes). a1, a2: round(2 + 0 + 4) = 6; e1: round(2 + 2 ln 4 + 4) = round(8.77) = 9.
  EXPECT_EQ(out.raw_scores, (std::vector<int64_t>{6, 6, 9}));
}

TEST(PodTopologySpreadEngine, ReplicaSetPodsSelectedByAServiceSpreadAcrossZones) {
  Cluster c;
  for (int i = 0; i < 6; ++i) {
    const std::string name = "n" + std::to_string(i);
    c.nodes.push_back(make_node_with(
        name, {{"cpu", 64000}, {"memory", int64_t(64) << 30}, {"pods", 110}},
        {{"kubernetes.io/hostname", name}, {"topology.kubernetes.io/zone", "zone-" + std::to_string(i % 3)}}));
  }
  const SelectingObject svc = web_service();
  SelectingObject rs;
  rs.kind = SelectingObject::Kind::ReplicaSet;
  rs.namespace_name = "default";
  rs.name = "web-7d";
  rs.has_selector = true;
  rs.label_selector = LabelSelector{};
  rs.label_selector->match_labels = {{"app", "web"}};
  c.objects.selecting = {svc, rs};
  Engine engine(default_scheduler_config(), EngineOptions{"cpu", TieBreak::First, 0, 1});
  engine.load(c);
  std::map<std::string, int> per_zone;
  for (int i = 0; i < 9; ++i) {
    Pod p = make_pod("web-7d-" + std::to_string(i), {container({{"cpu", 100}, {"memory", 1 << 20}})});
    p.labels = {{"app", "web"}};
    p.owner_references.push_back(OwnerReference{"apps/v1", "ReplicaSet", "web-7d", "uid-rs", true});
    const ScheduleResult r = engine.schedule(p);
    ASSERT_GE(r.node, 0) << r.message;
    EXPECT_TRUE(r.warnings.empty());
    ++per_zone["zone-" + std::to_string(r.node % 3)];
  }
  EXPECT_EQ(per_zone["zone-0"], 3);
  EXPECT_EQ(per_zone["zone-1"], 3);
  EXPECT_EQ(per_zone["zone-2"], 3);
}

// Issue 20: 1,000 constraints per pod took seconds (label lookups, matchers
// and per-domain sums each found by a linear search). A pod with 1,000
// DoNotSchedule and 1,000 ScheduleAnyway constraints, each on a key of its
// own that every node carries: its matchers register in one walk over the
// pods, and the Filter rejects a node exactly when one constraint alone
// does, with the first such constraint's code, as upstream's loop over the
// constraints.
TEST(PodTopologySpreadFilter, AThousandConstraintsDecideAsEachAloneDoes) {
  constexpr int kNodes = 12, kKeys = 1000, kPods = 60;
  const auto key = [](int i) { return "example.com/k" + std::to_string(i); };
  std::vector<Node> nodes;
  for (int n = 0; n < kNodes; ++n) {
    StringMap labels{{"kubernetes.io/hostname", "n" + std::to_string(n)}};
    for (int i = 0; i < kKeys; ++i) labels[key(i)] = "v" + std::to_string((n + i) % 3);
    nodes.push_back(make_node_with("n" + std::to_string(n), {{"cpu", 8000}, {"memory", int64_t(16) << 30}, {"pods", 110}},
                                   labels));
  }
  std::vector<Pod> running;
  for (int j = 0; j < kPods; ++j)
    running.push_back(existing("r" + std::to_string(j), "n" + std::to_string(j % kNodes),
                               {{"app", "a" + std::to_string(j % 7)}}));
  // Three pods on n0 only: a constraint selecting them with maxSkew 1 rejects
  // the nodes in n0's domain of its key (n0, n3, n6, n9: every key's values
  // run in threes).
  for (int j = 0; j < 3; ++j) running.push_back(existing("hot" + std::to_string(j), "n0", {{"hot", "yes"}}));
  const auto hard = [&](int i) {
    if (i % 100 == 7) return constraint(1, key(i), "DoNotSchedule", LabelSelector{{{"hot", "yes"}}, {}});
    return constraint(1 + i % 9, key(i), "DoNotSchedule", LabelSelector{{{"app", "a" + std::to_string(i % 5)}}, {}});
  };
  std::vector<TopologySpreadConstraint> all;
  for (int i = 0; i < kKeys; ++i) all.push_back(hard(i));
  for (int i = 0; i < kKeys; ++i)
    all.push_back(constraint(1, key(i), "ScheduleAnyway", LabelSelector{{{"app", "a" + std::to_string(i % 5)}}, {}}));
  const Pod pod = incoming({{"app", "a0"}}, all);

  ProfileConfig profile = filter_only_profile(kPts);
  profile.pre_score = {kPts};
  const ProfilePlan plan = make_profile_plan(profile);
  Snapshot snap = Snapshot::build(nodes, running);
  const Snapshot::MatcherWork before = snap.matcher_work();
  intern_pod_for_plan(snap, pod, plan, nullptr);
  // Six selectors: six matchers, counted in one walk over the 63 pods.
  EXPECT_EQ(snap.num_topology_matchers(), 6u);
  EXPECT_LE(snap.matcher_work().slot_checks - before.slot_checks, static_cast<uint64_t>(running.size()));

  const PodQuery q = prepare_pod_query(pod, snap, plan, TieBreak::First, 0, nullptr);
  const SnapshotView s = snap.view();
  std::vector<NodeVerdict> want(kNodes);
  for (int i = 0; i < kKeys; ++i) {
    const Pod alone = incoming({{"app", "a0"}}, {hard(i)});
    intern_pod_for_plan(snap, alone, plan, nullptr);
    const PodQuery qa = prepare_pod_query(alone, snap, plan, TieBreak::First, 0, nullptr);
    for (uint32_t n = 0; n < kNodes; ++n)
      if (want[n].feasible()) want[n] = filter_node(s, qa.view(), n);
  }
  int rejected = 0;
  for (uint32_t n = 0; n < kNodes; ++n) {
    const NodeVerdict got = filter_node(s, q.view(), n);
    EXPECT_EQ(got.feasible(), want[n].feasible()) << "node " << n;
    EXPECT_EQ(got.code, want[n].code) << "node " << n;
    rejected += got.feasible() ? 0 : 1;
  }
  EXPECT_EQ(rejected, 4);
}

// A hard hostname constraint without inclusion policies reads each node's
// own counter in Filter and keeps no per-node table, where no two nodes share
// a hostname value. The same constraint with nodeTaintsPolicy Honor on nodes
// without taints counts the same nodes through the domain table. Both must
// decide alike on every node, on random clusters with shared hostname
// values (the table after all), nodes lacking the hostname or the zone key,
// zone constraints before or after, minDomains and skews of 1 and 2.
TEST(PodTopologySpreadFilter, HostnameCountersDecideAsTheDomainTable) {
  std::mt19937_64 rng(20261127);
  const auto below = [&](uint64_t n) { return static_cast<uint32_t>(rng() % n); };
  int compared = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const uint32_t n = 1 + below(24);
    const bool shared = trial % 3 == 0;
    std::vector<Node> nodes;
    for (uint32_t i = 0; i < n; ++i) {
      StringMap labels{{"node", "n" + std::to_string(i)}};
      if (below(10) != 0) labels["kubernetes.io/hostname"] = "h" + std::to_string(shared && i > 0 && below(4) == 0 ? below(i) : i);
      if (below(10) != 0) labels["zone"] = "z" + std::to_string(below(3));
      nodes.push_back(make_node_with("n" + std::to_string(i), {{"cpu", 8000}, {"memory", int64_t(16) << 30}, {"pods", 110}},
                                     labels));
    }
    std::vector<Pod> running;
    const uint32_t pods = below(3 * n + 1);
    for (uint32_t k = 0; k < pods; ++k)
      running.push_back(existing("r" + std::to_string(k), "n" + std::to_string(below(n)),
                                 below(3) == 0 ? StringMap{{"bar", ""}} : StringMap{{"foo", ""}}));
    const int32_t skew = 1 + static_cast<int32_t>(below(2));
    const std::optional<int32_t> min_domains =
        below(3) == 0 ? std::optional<int32_t>(1 + static_cast<int32_t>(below(n + 2))) : std::nullopt;
    const int zone_at = static_cast<int>(below(3));  // 0: none, 1: before, 2: after the hostname constraint
    const auto pod_with = [&](const std::string& taints_policy) {
      TopologySpreadConstraint host = constraint(skew, "kubernetes.io/hostname", "DoNotSchedule", exists("foo"));
      host.min_domains = min_domains;
      host.node_taints_policy = taints_policy;
      std::vector<TopologySpreadConstraint> cs{host};
      const TopologySpreadConstraint zone = constraint(1, "zone", "DoNotSchedule", exists("foo"));
      if (zone_at == 1) cs.insert(cs.begin(), zone);
      if (zone_at == 2) cs.push_back(zone);
      return incoming({{"foo", ""}}, cs);
    };
    const FilterRun direct = run_filter(kPts, nodes, running, pod_with(""));
    const FilterRun table = run_filter(kPts, nodes, running, pod_with("Honor"));
    ASSERT_EQ(direct.prefilter, table.prefilter) << "trial " << trial;
    ASSERT_EQ(direct.nodes.size(), table.nodes.size());
    for (size_t i = 0; i < direct.nodes.size(); ++i) {
      ASSERT_EQ(direct.code(i), table.code(i)) << "trial " << trial << " node " << i;
      ASSERT_EQ(direct.reasons(i), table.reasons(i)) << "trial " << trial << " node " << i;
      ++compared;
    }
  }
  EXPECT_GT(compared, 2000);
}

// PreFilter's hard tables from the snapshot's per-domain sums (where every
// node has every hard key and no inclusion policy applies) against the walk
// over every node: the plugin's state and prepared bytes equal, on random
// clusters (nodes sometimes missing a key or carrying "", shared hostname
// values, zone and hostname constraints in either order, minDomains, the
// inclusion policies, selectors that count nothing), before and after pods
// come and go (the sums follow every mutation). The sums path must serve
// a good share of the cases (about a fifth: the others fall back).
// The pod interned and prepared with one of PodTopologySpread's switches
// (`flag`) set to `on` for the call, and set back on after.
PodQuery prepared_with(bool& flag, bool on, Snapshot& snap, const Pod& pod, const ProfilePlan& plan) {
  flag = on;
  intern_pod_for_plan(snap, pod, plan, nullptr);
  PodQuery q = prepare_pod_query(pod, snap, plan, TieBreak::First, 0, nullptr);
  flag = true;
  return q;
}

// "" where PodTopologySpread's state and prepared bytes in a and b are
// equal, else which differ.
std::string spread_difference(const PodQuery& a, const PodQuery& b) {
  const uint8_t id = plugin_id<plugins::PodTopologySpread>();
  const auto& sa = plugin_state<plugins::PodTopologySpread>(a.header);
  const auto& sb = plugin_state<plugins::PodTopologySpread>(b.header);
  if (std::memcmp(&sa, &sb, sizeof sa) != 0) return "state";
  const ArenaRange ra = a.prepared_ranges[id], rb = b.prepared_ranges[id];
  if (ra.end - ra.begin != rb.end - rb.begin) return "prepared byte count";
  if (std::memcmp(a.arena.data() + ra.begin, b.arena.data() + rb.begin, ra.end - ra.begin) != 0)
    return "prepared bytes";
  return "";
}

TEST(PodTopologySpreadFilter, HardCountsFromSumsEqualTheWalk) {
  std::mt19937_64 rng(20261128);
  const auto below = [&](uint64_t n) { return static_cast<uint32_t>(rng() % n); };
  const uint64_t taken_before = plugins::PodTopologySpread::hard_counts_from_sums_taken;
  int compared = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const uint32_t n = 1 + below(40);
    const bool every_key = trial % 4 != 0;
    std::vector<Node> nodes;
    for (uint32_t i = 0; i < n; ++i) {
      StringMap labels;
      const bool shared = trial % 7 == 0 && i > 0 && below(3) == 0;
      if (every_key || below(10) != 0) labels["kubernetes.io/hostname"] = "h" + std::to_string(shared ? below(i) : i);
      if (every_key || below(10) != 0) labels["zone"] = trial % 9 == 0 && below(5) == 0 ? "" : "z" + std::to_string(below(4));
      if (below(2) == 0) labels["rack"] = "r" + std::to_string(below(6));
      nodes.push_back(make_node_with("n" + std::to_string(i), {{"cpu", 8000}, {"memory", int64_t(16) << 30}, {"pods", 110}},
                                     labels));
    }
    Snapshot snap = Snapshot::build(nodes, {});
    std::vector<uint32_t> ids;
    const uint32_t pods = below(3 * n + 1);
    for (uint32_t k = 0; k < pods; ++k) {
      const uint32_t at = below(n);
      ids.push_back(snap.add_pod(existing("r" + std::to_string(k), "n" + std::to_string(at),
                                          below(3) == 0 ? StringMap{{"bar", ""}} : StringMap{{"foo", ""}}),
                                 at));
    }
    std::vector<TopologySpreadConstraint> cs;
    const char* keys[] = {"zone", "kubernetes.io/hostname", "rack"};
    const uint32_t count = 1 + below(3);
    for (uint32_t c = 0; c < count; ++c) {
      TopologySpreadConstraint t = constraint(1 + static_cast<int32_t>(below(2)), keys[below(3)], "DoNotSchedule",
                                              below(8) == 0 ? exists("nothing") : exists("foo"));
      if (below(3) == 0) t.min_domains = 1 + static_cast<int32_t>(below(n + 3));
      if (below(8) == 0) t.node_taints_policy = "Honor";
      if (below(8) == 0) t.node_affinity_policy = "Ignore";
      cs.push_back(t);
    }
    Pod pod = incoming({{"foo", ""}}, cs);
    if (below(6) == 0) set_node_selector(pod, {{"zone", "z1"}});
    const ProfilePlan plan = make_profile_plan(filter_only_profile(kPts));
    bool& sums = plugins::PodTopologySpread::hard_counts_from_sums;
    for (int round = 0; round < 2; ++round) {
      const PodQuery with = prepared_with(sums, true, snap, pod, plan);
      const PodQuery walk = prepared_with(sums, false, snap, pod, plan);
      ASSERT_EQ(spread_difference(with, walk), "") << "trial " << trial << " round " << round;
      ++compared;
      // Pods come and go: the sums follow.
      for (uint32_t k = 0; k < 3 && !ids.empty(); ++k) {
        const size_t at = below(ids.size());
        static_cast<void>(snap.remove_pod(ids[at]));
        ids.erase(ids.begin() + static_cast<std::ptrdiff_t>(at));
      }
      ids.push_back(snap.add_pod(existing("late" + std::to_string(round), "n0"), 0));
    }
  }
  EXPECT_EQ(compared, 400);
  EXPECT_GT(plugins::PodTopologySpread::hard_counts_from_sums_taken - taken_before, 40u)
      << "the sums path served too few cases to be tested";
}

// intern and prepare take the last pod's work for a pod whose namespace,
// labels and constraints equal it (PodTopologySpread::same_pod_memo): a
// run of pods, each its predecessor with one thing changed or nothing but
// its name, pods coming and going between them, now and then a node
// added (a structural change, new strings and dense columns) or a
// compaction (strings and matcher rows renumbered): the state
// and prepared bytes equal those prepared without the memo, pod by pod.
TEST(PodTopologySpreadFilter, TheLastPodsWorkServesOnlyAnEqualPod) {
  std::mt19937_64 rng(20261207);
  const auto below = [&](uint64_t n) { return static_cast<uint32_t>(rng() % n); };
  std::vector<Node> nodes;
  for (uint32_t i = 0; i < 24; ++i)
    nodes.push_back(make_node_with("n" + std::to_string(i), {{"cpu", 8000}, {"memory", int64_t(16) << 30}, {"pods", 110}},
                                   {{"kubernetes.io/hostname", "h" + std::to_string(i)},
                                    {"zone", "z" + std::to_string(i % 4)},
                                    {"rack", "r" + std::to_string(i % 6)}}));
  Snapshot snap = Snapshot::build(nodes, {});
  const ProfilePlan plan = make_profile_plan(filter_only_profile(kPts));
  // "absent": no node has it until one joins; "pod-only": a key no node
  // has, interned when a pod carrying it as a label is placed (no new
  // structure version).
  const char* keys[] = {"zone", "kubernetes.io/hostname", "rack", "absent", "pod-only"};
  Pod pod = incoming({{"foo", ""}, {"app", "a"}},
                     {constraint(1, "zone", "DoNotSchedule", exists("foo")),
                      constraint(2, "kubernetes.io/hostname", "ScheduleAnyway", exists("foo"))});
  std::vector<uint32_t> ids;
  int same = 0, changed = 0;
  for (int step = 0; step < 400; ++step) {
    Pod next = pod;
    next.name = "p" + std::to_string(step);
    TopologySpreadConstraint& c = next.topology_spread_constraints[below(next.topology_spread_constraints.size())];
    const uint32_t what = below(12);
    ++(what >= 10 ? same : changed);
    switch (what) {
      case 0: next.labels["app"] = below(2) == 0 ? "a" : "b"; break;
      case 1: next.namespace_name = below(2) == 0 ? "default" : "other"; break;
      case 2: c.max_skew = 1 + static_cast<int32_t>(below(3)); break;
      case 3: c.topology_key = keys[below(5)]; break;
      case 4: c.min_domains = below(2) == 0 ? std::optional<int32_t>() : std::optional<int32_t>(1 + below(8)); break;
      case 5: c.node_affinity_policy = below(2) == 0 ? "" : "Ignore"; break;
      case 6: c.node_taints_policy = below(2) == 0 ? "" : "Honor"; break;
      case 7: c.label_selector = below(2) == 0 ? exists("foo") : exists("app"); break;
      case 8: c.match_label_keys = below(2) == 0 ? std::vector<std::string>{} : std::vector<std::string>{"app"}; break;
      case 9: c.when_unsatisfiable = below(2) == 0 ? "DoNotSchedule" : "ScheduleAnyway"; break;
      default: break;  // the name alone
    }
    pod = next;
    // Pods come and go (more come: every domain's count rises above 0, so
    // that minDomains shows in the minimum); now and then a node joins.
    if (!ids.empty() && below(2) == 0) {
      const size_t at = below(ids.size());
      static_cast<void>(snap.remove_pod(ids[at]));
      ids.erase(ids.begin() + static_cast<std::ptrdiff_t>(at));
    }
    for (uint32_t k = 0; k < 3; ++k) {
      const uint32_t at = below(snap.num_nodes());
      ids.push_back(snap.add_pod(existing("e" + std::to_string(step) + "-" + std::to_string(k), snap.node_name(at),
                                          below(3) != 0 ? StringMap{{"foo", ""}, {"app", "a"}} : StringMap{{"app", "b"}},
                                          below(3) == 0 ? "other" : "default"),
                                 at));
    }
    if (step % 60 == 59) {
      const uint32_t on = below(snap.num_nodes());
      ids.push_back(snap.add_pod(existing("k" + std::to_string(step), snap.node_name(on),
                                          StringMap{{"pod-only-" + std::to_string(step), "x"}, {"pod-only", "y"}}),
                                 on));
    }
    // A compaction renumbers strings and matcher rows (a new structure
    // version, as a node joining is).
    if (step % 37 == 36) static_cast<void>(snap.compact());
    if (step % 50 == 49)
      snap.add_node(make_node_with("late" + std::to_string(step), {{"cpu", 8000}, {"memory", int64_t(16) << 30}, {"pods", 110}},
                                   {{"kubernetes.io/hostname", "late" + std::to_string(step)},
                                    {"zone", "z" + std::to_string(below(5))},
                                    {"absent", "x"}}));
    // With the memo first (it holds the previous pod's work), then without.
    bool& memo = plugins::PodTopologySpread::same_pod_memo;
    const PodQuery with = prepared_with(memo, true, snap, pod, plan);
    const PodQuery without = prepared_with(memo, false, snap, pod, plan);
    ASSERT_EQ(spread_difference(with, without), "") << "step " << step;
  }
  EXPECT_GT(same, 40);  // the name alone
  EXPECT_GT(changed, 250);  // a draw may give back the value it had
}

// A topology key no string id names yet compiles to kNoId; a pod placed
// with it as a label interns it without a new structure version, so the
// next equal pod must not take the last one's work (its key now has an
// id): the bytes equal those built afresh.
TEST(PodTopologySpreadFilter, AKeyNamedLaterIsCompiledAfresh) {
  std::vector<Node> nodes;
  for (uint32_t i = 0; i < 6; ++i)
    nodes.push_back(make_node_with("n" + std::to_string(i), {{"cpu", 8000}, {"memory", int64_t(16) << 30}, {"pods", 110}},
                                   {{"kubernetes.io/hostname", "h" + std::to_string(i)}, {"zone", "z" + std::to_string(i % 2)}}));
  Snapshot snap = Snapshot::build(nodes, {});
  const ProfilePlan plan = make_profile_plan(filter_only_profile(kPts));
  Pod pod = incoming({{"foo", ""}}, {constraint(1, "zone", "DoNotSchedule", exists("foo")),
                                     constraint(1, "late-key", "ScheduleAnyway", exists("foo"))});
  bool& memo = plugins::PodTopologySpread::same_pod_memo;
  const uint64_t version = snap.structure_version();
  static_cast<void>(prepared_with(memo, true, snap, pod, plan));
  static_cast<void>(snap.add_pod(existing("labelled", "n0", {{"late-key", "x"}}), 0));
  ASSERT_EQ(snap.structure_version(), version);  // the case: no new version
  pod.name = "p2";
  const PodQuery with = prepared_with(memo, true, snap, pod, plan);
  const PodQuery without = prepared_with(memo, false, snap, pod, plan);
  EXPECT_EQ(spread_difference(with, without), "");
}

}  // namespace
}  // namespace bulkscore
