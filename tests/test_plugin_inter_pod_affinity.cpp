// InterPodAffinity: the case tables of kube-scheduler's own interpodaffinity
// unit tests (pkg/scheduler/framework/plugins/interpodaffinity), v1.35
// semantics, with upstream's case names and expected results:
//
//   filtering_test.go  TestRequiredAffinitySingleNode, TestRequiredAffinityMultipleNodes
//                      (PreFilter status, then Filter code and reason per node)
//   scoring_test.go    TestPreferredAffinity, TestPreferredAffinityWithHardPodAffinitySymmetricWeight
//                      (PreScore Skip, else normalized scores per node)
//
// Sources: filtering_test.go of the fwk.* era (the v1.35 tables: PreFilter
// Skip expectations, namespaceSelector cases, one reason per status); the
// newest stored scoring_test.go (framework.* names, ignorePreferredTermsOfExistingPods
// cases), checked case by case against the vendored v1.35.4 scoring.go.
//
// Translation notes:
// * Upstream's test pods live in namespace "" (defaultNamespace); here they
//   live in "default", and a term's namespaces list naming "" names "default".
//   No Namespace object exists for either, so their label set is empty in both.
// * Upstream's Namespace objects (the team namespaces, NS1) are passed as
//   ClusterObjects::namespaces.
// * Upstream passes every node to PreScore/Score (none is filtered out), so the
//   score tables run the plugin alone over all the nodes.
// * Raw scores are not in upstream's tables; the ones below are worked out by
//   hand from the v1.35.4 rules (semantics doc §3.11) and marked as such.
// * Upstream checks a PreFilter Skip and stops; here a Skip also means every
//   node passes (the Filter is not run).
// * Left out: the cases whose pod carries a label selector value that is not a
//   valid label value ("{{.bad-value.}}"): bulkscore's reader rejects such a
//   selector at input time, so the model cannot hold it (see the comments at
//   their place in each table). Also left out: the tests of internal state
//   (TestPreFilterStateAddRemovePod, TestPreFilterStateClone,
//   TestGetTPMapMatchingIncomingAffinityAntiAffinity, TestPreFilterDisabled),
//   which have no observable counterpart in bulkscore's plugin interface.
#include <gtest/gtest.h>

#include <functional>

#include "tests/test_util.hpp"

namespace bulkscore {
namespace {

using namespace testutil;

constexpr const char* kIpa = "InterPodAffinity";

using C = Code;
constexpr C S = Code::Success, U = Code::Unschedulable, UR = Code::UnschedulableAndUnresolvable, SKIP = Code::Skip;

constexpr const char* kAffinityRulesNotMatch = "node(s) didn't match pod affinity rules";
constexpr const char* kAntiAffinityRulesNotMatch = "node(s) didn't match pod anti-affinity rules";
constexpr const char* kExistingAntiAffinityRulesNotMatch = "node(s) didn't satisfy existing pods anti-affinity rules";

// The three Filter failures, with upstream's codes.
NodeFilterResult affinity_fails() { return rejected(UR, {kAffinityRulesNotMatch}); }
NodeFilterResult anti_affinity_fails() { return rejected(U, {kAntiAffinityRulesNotMatch}); }
NodeFilterResult existing_anti_affinity_fails() { return rejected(U, {kExistingAntiAffinityRulesNotMatch}); }

// ---- selectors and terms ------------------------------------------------------

LabelSelectorRequirement req(const std::string& key, const std::string& op, std::vector<std::string> values = {}) {
  return LabelSelectorRequirement{key, op, std::move(values)};
}

LabelSelector exprs(std::vector<LabelSelectorRequirement> rs) {
  LabelSelector s;
  s.match_expressions = std::move(rs);
  return s;
}

LabelSelector in(const std::string& key, std::vector<std::string> values) {
  return exprs({req(key, "In", std::move(values))});
}
LabelSelector not_in(const std::string& key, std::vector<std::string> values) {
  return exprs({req(key, "NotIn", std::move(values))});
}
LabelSelector exists(const std::string& key) { return exprs({req(key, "Exists")}); }

PodAffinityTerm term(LabelSelector sel, const std::string& topology_key, std::vector<std::string> namespaces = {},
                     std::optional<LabelSelector> namespace_selector = std::nullopt) {
  PodAffinityTerm t;
  t.label_selector = std::move(sel);
  t.topology_key = topology_key;
  t.namespaces = std::move(namespaces);
  t.namespace_selector = std::move(namespace_selector);
  return t;
}

WeightedPodAffinityTerm weighted(int32_t weight, PodAffinityTerm t) { return WeightedPodAffinityTerm{weight, std::move(t)}; }

// The team namespaces' selector upstream uses everywhere: team In (team1).
LabelSelector team1() { return in("team", {"team1"}); }

// ---- pods -------------------------------------------------------------------------

// A pod builder: the incoming pod when no node is set, else a running pod.
struct P {
  Pod pod;

  explicit P(const std::string& name = "incoming") : pod(make_pod(name)) {}

  P& ns(const std::string& n) {
    pod.namespace_name = n;
    return *this;
  }
  P& labels(StringMap m) {
    pod.labels = std::move(m);
    return *this;
  }
  P& node(const std::string& n) {
    pod = on_node(std::move(pod), n);
    return *this;
  }
  Affinity& aff() {
    if (!pod.affinity) pod.affinity = Affinity{};
    return *pod.affinity;
  }
  PodAffinity& pod_affinity() {
    if (!aff().pod_affinity) aff().pod_affinity = PodAffinity{};
    return *aff().pod_affinity;
  }
  PodAffinity& pod_anti_affinity() {
    if (!aff().pod_anti_affinity) aff().pod_anti_affinity = PodAffinity{};
    return *aff().pod_anti_affinity;
  }
  // Both podAffinity and podAntiAffinity present with these required terms
  // (possibly none), as upstream's createPodWithAffinityTerms builds them.
  P& required_terms(std::vector<PodAffinityTerm> affinity, std::vector<PodAffinityTerm> anti_affinity) {
    pod_affinity().required = std::move(affinity);
    pod_anti_affinity().required = std::move(anti_affinity);
    return *this;
  }
  P& affinity(PodAffinityTerm t) {
    pod_affinity().required.push_back(std::move(t));
    return *this;
  }
  P& anti_affinity(PodAffinityTerm t) {
    pod_anti_affinity().required.push_back(std::move(t));
    return *this;
  }
  P& with(Affinity a) {
    pod.affinity = std::move(a);
    return *this;
  }
  operator Pod() const { return pod; }
};

Node ln(const std::string& name, StringMap labels) {
  return make_node_with(name, {{"cpu", 4000}, {"memory", int64_t(8) << 30}, {"pods", 110}}, std::move(labels));
}

Namespace ns_object(const std::string& name, StringMap labels = {}) { return Namespace{name, std::move(labels)}; }

// Upstream's `namespaces` fixture (scoring_test.go): two team1 and two team2
// namespaces.
ClusterObjects team_namespaces() {
  ClusterObjects o;
  o.namespaces = {ns_object("subteam1.team1", {{"team", "team1"}}), ns_object("subteam2.team1", {{"team", "team1"}}),
                  ns_object("subteam1.team2", {{"team", "team2"}}), ns_object("subteam2.team2", {{"team", "team2"}})};
  return o;
}

// ==== TestRequiredAffinitySingleNode ===============================================

TEST(InterPodAffinityFilter, UpstreamRequiredAffinitySingleNode) {
  const StringMap pod_label{{"service", "securityscan"}};
  const StringMap pod_label2{{"security", "S1"}};
  const Node node1 = ln("node1", {{"region", "r1"}, {"zone", "z11"}});
  // Upstream places some existing pods on "node2", a node missing from its
  // snapshot; bulkscore refuses a pod bound to an unknown node, so node2 exists
  // here, in another zone of the same region. The pods on it match no term
  // of the incoming pod on their own, so node1's verdict does not change.
  const Node node2 = ln("node2", {{"region", "r1"}, {"zone", "z12"}});
  // The existing pod most cases share: labels service=securityscan, on node1.
  const Pod existing = P("existing").labels(pod_label).node("node1");

  struct Case {
    std::string name;
    Pod pod;
    std::vector<Pod> pods;
    C prefilter;
    NodeFilterResult want;  // node1
    bool with_node2 = false;
  };
  const std::vector<Case> cases = {
      {"A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
       P(),
       {},
       SKIP,
       fits()},
      {"satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches "
       "the existing pod",
       P().labels(pod_label2).affinity(term(in("service", {"securityscan", "value2"}), "region")),
       {existing},
       S,
       fits()},
      {"satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in "
       "labelSelector that matches the existing pod",
       P().labels(pod_label2).affinity(term(not_in("service", {"securityscan3", "value3"}), "region")),
       {existing},
       S,
       fits()},
      {"Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
       P().labels(pod_label2).required_terms({term(in("service", {"securityscan", "value2"}), "", {"DiffNameSpace"})},
                                             {}),
       {P("existing").ns("ns").labels(pod_label).node("node1")},
       S,
       affinity_fails()},
      {"Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
       P().labels(pod_label).affinity(term(in("service", {"antivirusscan", "value2"}), "")),
       {existing},
       S,
       affinity_fails()},
      {"satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnoredDuringExecution ",
       P().labels(pod_label2)
           .required_terms({term(exprs({req("service", "Exists"), req("wrongkey", "DoesNotExist")}), "region"),
                            term(exprs({req("service", "In", {"securityscan"}), req("service", "NotIn", {"WrongValue"})}),
                                 "region")},
                           {}),
       {existing},
       S,
       fits()},
      {"The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node "
       "because one of the matchExpression item don't match.",
       P().labels(pod_label2)
           .required_terms({term(exprs({req("service", "Exists"), req("wrongkey", "DoesNotExist")}), "region"),
                            term(exprs({req("service", "In", {"securityscan2"}), req("service", "NotIn", {"WrongValue"})}),
                                 "region")},
                           {}),
       {existing},
       S,
       affinity_fails()},
      {"satisfies the PodAffinity and PodAntiAffinity with the existing pod",
       P().labels(pod_label2)
           .affinity(term(in("service", {"securityscan", "value2"}), "region"))
           .anti_affinity(term(in("service", {"antivirusscan", "value2"}), "node")),
       {existing},
       S,
       fits()},
      {"satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
       P().labels(pod_label2)
           .affinity(term(in("service", {"securityscan", "value2"}), "region"))
           .anti_affinity(term(in("service", {"antivirusscan", "value2"}), "node")),
       {P("existing").labels(pod_label).node("node1").anti_affinity(term(in("service", {"antivirusscan", "value2"}), "node"))},
       S,
       fits()},
      {"satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
       P().labels(pod_label2)
           .affinity(term(in("service", {"securityscan", "value2"}), "region"))
           .anti_affinity(term(in("service", {"securityscan", "value2"}), "zone")),
       {existing},
       S,
       anti_affinity_fails()},
      {"satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing pod",
       P().labels(pod_label)
           .affinity(term(in("service", {"securityscan", "value2"}), "region"))
           .anti_affinity(term(in("service", {"antivirusscan", "value2"}), "node")),
       {P("existing").labels(pod_label).node("node1").anti_affinity(term(in("service", {"securityscan", "value2"}), "zone"))},
       S,
       existing_anti_affinity_fails()},
      {"pod matches its own Label in PodAffinity and that matches the existing pod Labels",
       P().labels(pod_label).affinity(term(not_in("service", {"securityscan", "value2"}), "region")),
       {P("existing").labels(pod_label).node("node2")},
       S,
       affinity_fails(),
       true},
      {"verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't "
       "satisfy PodAntiAffinity symmetry with the existing pod",
       P().labels(pod_label),
       {P("existing").labels(pod_label).node("node1").anti_affinity(term(in("service", {"securityscan", "value2"}), "zone"))},
       S,
       existing_anti_affinity_fails()},
      {"verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy "
       "PodAntiAffinity symmetry with the existing pod",
       P().labels(pod_label),
       {P("existing")
            .labels(pod_label)
            .node("node1")
            .anti_affinity(term(not_in("service", {"securityscan", "value2"}), "zone"))},
       SKIP,
       fits()},
      {"satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with incoming pod",
       P().labels(pod_label)
           .anti_affinity(term(exists("service"), "region"))
           .anti_affinity(term(exists("security"), "region")),
       {P("existing").labels(pod_label2).node("node1").anti_affinity(term(exists("security"), "zone"))},
       S,
       anti_affinity_fails()},
      {"PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
       P().labels(pod_label).anti_affinity(term(exists("service"), "zone")).anti_affinity(term(exists("security"), "zone")),
       {P("existing").labels(pod_label2).node("node1").anti_affinity(term(exists("security"), "zone"))},
       S,
       anti_affinity_fails()},
      {"PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
       P().labels(pod_label2).anti_affinity(term(exists("security"), "zone")),
       {P("existing")
            .labels(pod_label)
            .node("node1")
            .anti_affinity(term(exists("service"), "zone"))
            .anti_affinity(term(exists("security"), "zone"))},
       S,
       existing_anti_affinity_fails()},
      {"PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on AffinityTerms",
       P().labels({{"abc", ""}, {"xyz", ""}})
           .anti_affinity(term(exists("abc"), "zone"))
           .anti_affinity(term(exists("def"), "zone")),
       {P("existing")
            .labels({{"def", ""}, {"xyz", ""}})
            .node("node1")
            .anti_affinity(term(exists("abc"), "zone"))
            .anti_affinity(term(exists("def"), "zone"))},
       S,
       anti_affinity_fails()},
      {"PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on AffinityTerms",
       P().labels({{"def", ""}, {"xyz", ""}})
           .anti_affinity(term(exists("abc"), "zone"))
           .anti_affinity(term(exists("def"), "zone")),
       {P("existing")
            .labels({{"abc", ""}, {"xyz", ""}})
            .node("node1")
            .anti_affinity(term(exists("abc"), "zone"))
            .anti_affinity(term(exists("def"), "zone"))},
       S,
       anti_affinity_fails()},
      // Left out: "PodAffinity fails PreFilter with an invalid affinity label syntax" and
      // "PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax" (an In
      // value "{{.bad-value.}}" that bulkscore's reader refuses at input time).
      {"affinity with NamespaceSelector",
       P().labels(pod_label2)
           .required_terms({term(in("service", {"securityscan", "value2"}), "region", {}, team1())}, {}),
       {P("existing").ns("subteam1.team1").labels(pod_label).node("node1")},
       S,
       fits()},
      {"affinity with non-matching NamespaceSelector",
       P().labels(pod_label2)
           .required_terms({term(in("service", {"securityscan", "value2"}), "region", {}, team1())}, {}),
       {P("existing").ns("subteam1.team2").labels(pod_label).node("node1")},
       S,
       affinity_fails()},
      {"anti-affinity with matching NamespaceSelector",
       P().ns("subteam1.team1")
           .labels(pod_label2)
           .required_terms({}, {term(in("service", {"securityscan", "value2"}), "zone", {}, team1())}),
       {P("existing").ns("subteam2.team1").labels(pod_label).node("node1")},
       S,
       anti_affinity_fails()},
      {"anti-affinity with matching all NamespaceSelector",
       P().ns("subteam1.team1")
           .labels(pod_label2)
           .required_terms({}, {term(in("service", {"securityscan", "value2"}), "zone", {}, LabelSelector{})}),
       {P("existing").ns("subteam2.team1").labels(pod_label).node("node1")},
       S,
       anti_affinity_fails()},
      {"anti-affinity with non-matching NamespaceSelector",
       P().ns("subteam1.team1")
           .labels(pod_label2)
           .required_terms({}, {term(in("service", {"securityscan", "value2"}), "zone", {}, team1())}),
       {P("existing").ns("subteam1.team2").labels(pod_label).node("node1")},
       S,
       fits()},
  };

  const ClusterObjects objects = team_namespaces();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<Node> nodes = {node1};
    if (c.with_node2) nodes.push_back(node2);
    const FilterRun r = run_filter(kIpa, nodes, c.pods, c.pod, ProfileConfig{}, &objects);
    EXPECT_EQ(r.prefilter, c.prefilter) << r.prefilter_message;
    EXPECT_FALSE(r.candidates.has_value());
    EXPECT_EQ(r.nodes.at(0), c.want);
  }
}

// ==== TestRequiredAffinityMultipleNodes =============================================

TEST(InterPodAffinityFilter, UpstreamRequiredAffinityMultipleNodes) {
  const StringMap rg_china{{"region", "China"}};
  const StringMap rg_china_az1{{"region", "China"}, {"az", "az1"}};
  const StringMap rg_india{{"region", "India"}};
  const auto rzh = [](const std::string& name, const std::string& zone) {
    return ln(name, {{"region", "r1"}, {"zone", zone}, {"hostname", name}});
  };

  struct Case {
    std::string name;
    Pod pod;
    std::vector<Pod> pods;
    std::vector<Node> nodes;
    C prefilter;
    std::vector<NodeFilterResult> want;
  };
  const std::vector<Case> cases = {
      {"A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them has an "
       "existing pod that matches the affinity rules",
       P().affinity(term(in("foo", {"bar"}), "region")),
       {P("p1").labels({{"foo", "bar"}}).node("node1")},
       {ln("node1", rg_china), ln("node2", rg_china_az1), ln("node3", rg_india)},
       S,
       {fits(), fits(), affinity_fails()}},
      {"The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the "
       "collection should not be blocked from being scheduled onto any node, even there's no existing pod that matches "
       "the rule anywhere.",
       P().labels({{"foo", "bar"}, {"service", "securityscan"}})
           .affinity(term(in("foo", {"bar"}), "zone"))
           .affinity(term(in("service", {"securityscan"}), "zone")),
       {P("p1").labels({{"foo", "bar"}}).node("nodeA")},
       {ln("nodeA", {{"zone", "az1"}, {"hostname", "h1"}}), ln("nodeB", {{"zone", "az2"}, {"hostname", "h2"}})},
       S,
       {fits(), fits()}},
      {"The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
       P().labels({{"foo", "bar"}, {"service", "securityscan"}})
           .affinity(term(in("foo", {"bar"}), "zone"))
           .affinity(term(in("service", {"securityscan"}), "zone")),
       {P("p1").labels({{"foo", "bar"}}).node("nodeA")},
       {ln("nodeA", {{"zoneLabel", "az1"}, {"hostname", "h1"}}), ln("nodeB", {{"zoneLabel", "az2"}, {"hostname", "h2"}})},
       S,
       {affinity_fails(), affinity_fails()}},
      {"NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod "
       "affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
       P().anti_affinity(term(in("foo", {"abc"}), "region")),
       {P("p1").labels({{"foo", "abc"}}).node("nodeA")},
       {ln("nodeA", {{"region", "r1"}, {"hostname", "nodeA"}}), ln("nodeB", {{"region", "r1"}, {"hostname", "nodeB"}})},
       S,
       {anti_affinity_fails(), anti_affinity_fails()}},
      {"This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
       P().anti_affinity(term(in("foo", {"abc"}), "region")).anti_affinity(term(in("service", {"securityscan"}), "zone")),
       {P("p1").labels({{"foo", "abc"}, {"service", "securityscan"}}).node("nodeA")},
       {rzh("nodeA", "z1"), rzh("nodeB", "z2")},
       S,
       {anti_affinity_fails(), anti_affinity_fails()}},
      {"NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod "
       "affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
       P().anti_affinity(term(in("foo", {"abc"}), "region")),
       {P("p1").labels({{"foo", "abc"}}).node("nodeA")},
       {ln("nodeA", rg_china), ln("nodeB", rg_china_az1), ln("nodeC", rg_india)},
       S,
       {anti_affinity_fails(), anti_affinity_fails(), fits()}},
      {"NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod "
       "affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC has an "
       "existing pod that match the inter pod affinity rule but in different namespace)",
       P().ns("NS1").labels({{"foo", "123"}}).anti_affinity(term(in("foo", {"bar"}), "region")),
       {P("p1").ns("NS1").labels({{"foo", "bar"}}).node("nodeA"),
        P("p2").ns("NS2").node("nodeC").anti_affinity(term(in("foo", {"123"}), "region"))},
       {ln("nodeA", rg_china), ln("nodeB", rg_china_az1), ln("nodeC", rg_india)},
       S,
       {anti_affinity_fails(), anti_affinity_fails(), fits()}},
      {"Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector of the "
       "term is firstly checked, and then topologyKey of the term is also checked",
       P().labels({{"foo", ""}}),
       {P("p1").node("nodeA").anti_affinity(term(exists("foo"), "invalid-node-label"))},
       {rzh("nodeA", "z1"), rzh("nodeB", "z1")},
       SKIP,
       {fits(), fits()}},
      // Upstream's incoming pod here also names nodeA as its nodeName; that field
      // plays no part in InterPodAffinity, and bulkscore's incoming pods are pending.
      {"Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
       P().anti_affinity(term(exists("foo"), "invalid-node-label")),
       {P("p1").labels({{"foo", ""}}).node("nodeA")},
       {rzh("nodeA", "z1"), rzh("nodeB", "z1")},
       S,
       {fits(), fits()}},
      {"Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each existingPod's "
       "terms on all nodes",
       P().labels({{"foo", ""}, {"bar", ""}}),
       {P("p1").node("nodeA").anti_affinity(term(exists("foo"), "zone")),
        P("p2").node("nodeA").anti_affinity(term(exists("bar"), "region"))},
       {rzh("nodeA", "z1"), rzh("nodeB", "z2")},
       S,
       {existing_anti_affinity_fails(), existing_anti_affinity_fails()}},
      {"Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates one "
       "anti-affinity rule of existingPod",
       P().anti_affinity(term(exists("foo"), "zone")).anti_affinity(term(exists("bar"), "region")),
       {P("p1").labels({{"foo", ""}}).node("nodeA"), P("p2").labels({{"bar", ""}}).node("nodeB")},
       {rzh("nodeA", "z1"), rzh("nodeB", "z2")},
       S,
       {anti_affinity_fails(), anti_affinity_fails()}},
      {"Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single "
       "term match - case when one term has invalid topologyKey",
       P().labels({{"foo", ""}, {"bar", ""}}),
       {P("p1")
            .node("nodeA")
            .anti_affinity(term(exists("foo"), "invalid-node-label"))
            .anti_affinity(term(exists("bar"), "zone"))},
       {rzh("nodeA", "z1"), rzh("nodeB", "z2")},
       S,
       {existing_anti_affinity_fails(), fits()}},
      {"Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single "
       "term match - case when one term has invalid topologyKey",
       P().anti_affinity(term(exists("foo"), "invalid-node-label")).anti_affinity(term(exists("bar"), "zone")),
       {P("podA").labels({{"foo", ""}, {"bar", ""}}).node("nodeA")},
       {rzh("nodeA", "z1"), rzh("nodeB", "z2")},
       S,
       {anti_affinity_fails(), fits()}},
      {"Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single "
       "term match - case when all terms have valid topologyKey",
       P().labels({{"foo", ""}, {"bar", ""}}),
       {P("p1").node("nodeA").anti_affinity(term(exists("foo"), "region")).anti_affinity(term(exists("bar"), "zone"))},
       {rzh("nodeA", "z1"), rzh("nodeB", "z2")},
       S,
       {existing_anti_affinity_fails(), existing_anti_affinity_fails()}},
      {"Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single "
       "term match - case when all terms have valid topologyKey",
       P().anti_affinity(term(exists("foo"), "region")).anti_affinity(term(exists("bar"), "zone")),
       {P("p1").labels({{"foo", ""}, {"bar", ""}}).node("nodeA")},
       {rzh("nodeA", "z1"), rzh("nodeB", "z2")},
       S,
       {anti_affinity_fails(), anti_affinity_fails()}},
      {"Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term matches "
       "incoming pod, so incoming pod can only be scheduled to nodeC",
       P().labels({{"foo", ""}, {"bar", ""}}),
       {P("p1").node("nodeA").anti_affinity(term(exists("foo"), "zone")).anti_affinity(term(exists("labelA"), "zone")),
        P("p2").node("nodeB").anti_affinity(term(exists("bar"), "zone")).anti_affinity(term(exists("labelB"), "zone"))},
       {rzh("nodeA", "z1"), rzh("nodeB", "z2"), rzh("nodeC", "z3")},
       S,
       {existing_anti_affinity_fails(), existing_anti_affinity_fails(), fits()}},
      {"Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match",
       P().affinity(term(exists("foo"), "region")).affinity(term(exists("bar"), "zone")),
       {P("pod1").labels({{"foo", ""}, {"bar", ""}}).node("nodeA")},
       {rzh("nodeA", "z1"), rzh("nodeB", "z1")},
       S,
       {fits(), fits()}},
      {"Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys "
       "match, and the match logic should be satisfied on the same pod",
       P().affinity(term(exists("foo"), "region")).affinity(term(exists("bar"), "zone")),
       {P("pod1").labels({{"foo", ""}}).node("nodeA"), P("pod2").labels({{"bar", ""}}).node("nodeB")},
       {rzh("nodeA", "z1"), rzh("nodeB", "z2")},
       S,
       {affinity_fails(), affinity_fails()}},
  };

  ClusterObjects objects;
  objects.namespaces = {ns_object("NS1")};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const FilterRun r = run_filter(kIpa, c.nodes, c.pods, c.pod, ProfileConfig{}, &objects);
    EXPECT_EQ(r.prefilter, c.prefilter) << r.prefilter_message;
    EXPECT_FALSE(r.candidates.has_value());
    ASSERT_EQ(r.nodes.size(), c.want.size());
    for (size_t i = 0; i < c.want.size(); ++i) EXPECT_EQ(r.nodes[i], c.want[i]) << "node " << c.nodes[i].name;
  }
}

// ==== TestPreferredAffinity =======================================================

struct ScoreCase {
  std::string name;
  Pod pod;
  std::vector<Pod> pods;
  std::vector<Node> nodes;
  bool skip = false;                // upstream wants PreScore Skip
  std::vector<int64_t> normalized;  // upstream's expectedList
  std::vector<int64_t> raw;         // by hand
};

void run_score_cases(const std::vector<ScoreCase>& cases, const std::function<ProfileConfig(size_t)>& profile_for,
                     const ClusterObjects& objects) {
  for (size_t i = 0; i < cases.size(); ++i) {
    const ScoreCase& c = cases[i];
    SCOPED_TRACE(c.name);
    const ScoreRun r = run_score(kIpa, c.nodes, c.pods, c.pod, profile_for(i), &objects);
    EXPECT_TRUE(r.error.empty()) << r.error;
    if (c.skip) {
      EXPECT_TRUE(r.skipped);
      continue;
    }
    ASSERT_FALSE(r.skipped);
    EXPECT_EQ(r.normalized, c.normalized);
    EXPECT_EQ(r.raw, c.raw);
  }
}

TEST(InterPodAffinityScore, UpstreamPreferredAffinity) {
  const StringMap rg_china{{"region", "China"}};
  const StringMap rg_india{{"region", "India"}};
  const StringMap az_az1{{"az", "az1"}};
  const StringMap az_az2{{"az", "az2"}};
  const StringMap rg_china_az1{{"region", "China"}, {"az", "az1"}};
  const StringMap s1{{"security", "S1"}};
  const StringMap s2{{"security", "S2"}};

  const auto preferred = [](std::vector<WeightedPodAffinityTerm> affinity, std::vector<WeightedPodAffinityTerm> anti) {
    Affinity a;
    if (!affinity.empty()) a.pod_affinity = PodAffinity{{}, std::move(affinity)};
    if (!anti.empty()) a.pod_anti_affinity = PodAffinity{{}, std::move(anti)};
    return a;
  };
  const Affinity stay_with_s1_in_region = preferred({weighted(5, term(in("security", {"S1"}), "region"))}, {});
  const Affinity stay_with_s2_in_region = preferred({weighted(6, term(in("security", {"S2"}), "region"))}, {});
  const Affinity affinity3 = preferred(
      {weighted(8, term(exprs({req("security", "NotIn", {"S1"}), req("security", "In", {"S2"})}), "region")),
       weighted(2, term(exprs({req("security", "Exists"), req("wrongkey", "DoesNotExist")}), "region"))},
      {});
  Affinity hard_affinity;
  hard_affinity.pod_affinity =
      PodAffinity{{term(in("security", {"S1", "value2"}), "region"),
                   term(exprs({req("security", "Exists"), req("wrongkey", "DoesNotExist")}), "region")},
                  {}};
  const Affinity away_from_s1_in_az = preferred({}, {weighted(5, term(in("security", {"S1"}), "az"))});
  const Affinity away_from_s2_in_az = preferred({}, {weighted(5, term(in("security", {"S2"}), "az"))});
  const Affinity stay_with_s1_in_region_away_from_s2_in_az =
      preferred({weighted(8, term(in("security", {"S1"}), "region"))}, {weighted(5, term(in("security", {"S2"}), "az"))});
  const Affinity affinity_namespace_selector =
      preferred({weighted(5, term(in("security", {"S1"}), "region", {"subteam2.team2"}, team1()))}, {});
  const Affinity anti_affinity_namespace_selector =
      preferred({}, {weighted(5, term(in("security", {"S1"}), "region", {"subteam2.team2"}, team1()))});

  // Existing pods: name, node, labels, namespace, affinity.
  int seq = 0;
  const auto ex = [&seq](const std::string& node, StringMap labels = {}, std::optional<Affinity> a = std::nullopt,
                         const std::string& ns = "default") {
    P p("p" + std::to_string(seq++));
    p.ns(ns).labels(std::move(labels)).node(node);
    if (a) p.with(*a);
    return Pod(p);
  };
  const auto incoming = [](StringMap labels, std::optional<Affinity> a = std::nullopt,
                           const std::string& ns = "default") {
    P p;
    p.ns(ns).labels(std::move(labels));
    if (a) p.with(*a);
    return Pod(p);
  };
  const auto three_nodes = [&]() {
    return std::vector<Node>{ln("node1", rg_china), ln("node2", rg_india), ln("node3", az_az1)};
  };

  std::vector<ScoreCase> cases = {
      {"all nodes are same priority as Affinity is nil", incoming(s1), {}, three_nodes(), true, {}, {}},
      // raw: node1 +5 (region China); node3's S1 pod has no region to count in.
      {"Affinity: pod that matches topology key & pods in nodes will get high score comparing to others"
       "which doesn't match either pods in nodes or in topology key",
       incoming(s1, stay_with_s1_in_region),
       {ex("node1", s1), ex("node2", s2), ex("node3", s1)},
       three_nodes(),
       false,
       {100, 0, 0},
       {5, 0, 0}},
      {"All the nodes that have the same topology key & label value with one of them has an existing pod that match the "
       "affinity rules, have the same score",
       incoming({}, stay_with_s1_in_region),
       {ex("node1", s1)},
       {ln("node1", rg_china), ln("node2", rg_china_az1), ln("node3", rg_india)},
       false,
       {100, 100, 0},
       {5, 5, 0}},
      // raw: China holds four S2 pods (4 * 6), India two (2 * 6).
      {"Affinity: nodes in one region has more matching pods comparing to other region, so the region which has more "
       "matches will get high score",
       incoming(s1, stay_with_s2_in_region),
       {ex("node1", s2), ex("node1", s2), ex("node2", s2), ex("node3", s2), ex("node4", s2), ex("node5", s2)},
       {ln("node1", rg_china), ln("node2", rg_india), ln("node3", rg_china), ln("node4", rg_china),
        ln("node5", rg_india)},
       false,
       {100, 0, 100, 100, 0},
       {24, 12, 24, 24, 12}},
      // raw: China's S1 pod matches the weight-2 term only; India's S2 pod both (8 + 2).
      {"Affinity: different Label operators and values for pod affinity scheduling preference, including some match "
       "failures ",
       incoming(s1, affinity3),
       {ex("node1", s1), ex("node2", s2), ex("node3", s1)},
       three_nodes(),
       false,
       {20, 100, 0},
       {2, 10, 0}},
      {"Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
       incoming(s2),
       {ex("node1", s1, stay_with_s1_in_region), ex("node2", s2, stay_with_s2_in_region)},
       three_nodes(),
       false,
       {0, 100, 0},
       {0, 6, 0}},
      {"Affinity symmetry with namespace selector",
       incoming(s1, std::nullopt, "subteam1.team1"),
       {ex("node1", s1, affinity_namespace_selector), ex("node2", s2, stay_with_s2_in_region)},
       three_nodes(),
       false,
       {100, 0, 0},
       {5, 0, 0}},
      {"AntiAffinity symmetry with namespace selector",
       incoming(s1, std::nullopt, "subteam1.team1"),
       {ex("node1", s1, anti_affinity_namespace_selector), ex("node2", s2, stay_with_s2_in_region)},
       three_nodes(),
       false,
       {0, 100, 100},
       {-5, 0, 0}},
      // raw: each existing pod's two required terms match the incoming pod: 2 * hardPodAffinityWeight.
      {"Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
       incoming(s1),
       {ex("node1", s1, hard_affinity), ex("node2", s2, hard_affinity)},
       three_nodes(),
       false,
       {100, 100, 0},
       {2, 2, 0}},
      {"Anti Affinity: pod that does not match existing pods in node will get high score ",
       incoming(s1, away_from_s1_in_az),
       {ex("node1", s1), ex("node2", s2)},
       {ln("node1", az_az1), ln("node2", rg_china)},
       false,
       {0, 100},
       {-5, 0}},
      {"Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score comparing to "
       "others ",
       incoming(s1, away_from_s1_in_az),
       {ex("node1", s1), ex("node2", s1)},
       {ln("node1", az_az1), ln("node2", rg_china)},
       false,
       {0, 100},
       {-5, 0}},
      {"Anti Affinity: one node has more matching pods comparing to other node, so the node which has more unmatches will "
       "get high score",
       incoming(s1, away_from_s1_in_az),
       {ex("node1", s1), ex("node1", s1), ex("node2", s2)},
       {ln("node1", az_az1), ln("node2", rg_india)},
       false,
       {0, 100},
       {-10, 0}},
      {"Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
       incoming(s2),
       {ex("node1", s1, away_from_s2_in_az), ex("node2", s2, away_from_s1_in_az)},
       {ln("node1", az_az1), ln("node2", az_az2)},
       false,
       {0, 100},
       {-5, 0}},
      {"Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity "
       "& anti affinity",
       incoming(s1, stay_with_s1_in_region_away_from_s2_in_az),
       {ex("node1", s1), ex("node2", s1)},
       {ln("node1", rg_china), ln("node2", az_az1)},
       false,
       {100, 0},
       {8, 0}},
      // raw: China holds five S1 pods (5 * 8), India two (2 * 8).
      {"Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing pods "
       "have the same labels",
       incoming(s1, stay_with_s1_in_region_away_from_s2_in_az),
       {ex("node1", s1), ex("node1", s1), ex("node2", s1), ex("node3", s1), ex("node3", s1), ex("node4", s1),
        ex("node5", s1)},
       {ln("node1", rg_china_az1), ln("node2", rg_india), ln("node3", rg_china), ln("node4", rg_china),
        ln("node5", rg_india)},
       false,
       {100, 0, 100, 100, 0},
       {40, 16, 40, 40, 16}},
      // Upstream's weights: affinity 8,0,0,0; anti-affinity 0,-5,0,0; affinity
      // symmetry 0,0,8,0; anti-affinity symmetry 0,0,0,-5.
      {"Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution in both "
       "pod affinity & anti affinity & symmetry",
       incoming(s1, stay_with_s1_in_region_away_from_s2_in_az),
       {ex("node1", s1), ex("node2", s2), ex("node3", {}, stay_with_s1_in_region_away_from_s2_in_az),
        ex("node4", {}, away_from_s1_in_az)},
       {ln("node1", rg_china), ln("node2", az_az1), ln("node3", rg_india), ln("node4", az_az2)},
       false,
       {100, 0, 100, 0},
       {8, -5, 8, -5}},
      // raw: node2's pod's affinity term (weight 8, region) matches the incoming
      // pod, and node1 shares region China: every node has 8, so all normalize to 0.
      {"Avoid panic when partial nodes in a topology don't have pods with affinity",
       incoming(s1),
       {ex("node1", s1), ex("node2", {}, stay_with_s1_in_region_away_from_s2_in_az)},
       {ln("node1", rg_china), ln("node2", rg_china)},
       false,
       {0, 0},
       {8, 8}},
      // Left out: "invalid Affinity fails PreScore" and "invalid AntiAffinity fails
      // PreScore" (an In value "{{.bad-value.}}" that bulkscore's reader refuses at input time).
      //
      // raw: the term's namespaces are subteam2.team2 plus the team1 namespaces;
      // node1 holds two matching pods (subteam1.team2 is outside), node2 one.
      {"Affinity with pods matching NamespaceSelector",
       incoming(s1, affinity_namespace_selector, "subteam1.team1"),
       {ex("node1", s1, std::nullopt, "subteam1.team1"), ex("node1", s1, std::nullopt, "subteam1.team1"),
        ex("node1", s1, std::nullopt, "subteam1.team2"), ex("node2", s1, std::nullopt, "subteam2.team1")},
       {ln("node1", rg_china), ln("node2", rg_india)},
       false,
       {100, 0},
       {10, 5}},
      {"Affinity with pods matching both NamespaceSelector and Namespaces fields",
       incoming(s1, affinity_namespace_selector, "subteam1.team1"),
       {ex("node1", s1, std::nullopt, "subteam1.team1"), ex("node1", s1, std::nullopt, "subteam1.team1"),
        ex("node1", s1, std::nullopt, "subteam2.team2"), ex("node2", s1, std::nullopt, "subteam2.team1")},
       {ln("node1", rg_china), ln("node2", rg_india)},
       false,
       {100, 0},
       {15, 5}},
      // Upstream names this anti-affinity case like the affinity one above.
      {"Affinity with pods matching NamespaceSelector",
       incoming(s1, anti_affinity_namespace_selector, "subteam1.team1"),
       {ex("node1", s1, std::nullopt, "subteam1.team1"), ex("node1", s1, std::nullopt, "subteam1.team1"),
        ex("node1", s1, std::nullopt, "subteam1.team2"), ex("node2", s1, std::nullopt, "subteam2.team1")},
       {ln("node1", rg_china), ln("node2", rg_india)},
       false,
       {0, 100},
       {-10, -5}},
      {"Affinity with pods matching both NamespaceSelector and Namespaces fields",
       incoming(s1, anti_affinity_namespace_selector, "subteam1.team1"),
       {ex("node1", s1, std::nullopt, "subteam1.team1"), ex("node1", s1, std::nullopt, "subteam1.team1"),
        ex("node1", s1, std::nullopt, "subteam2.team2"), ex("node2", s1, std::nullopt, "subteam2.team1")},
       {ln("node1", rg_china), ln("node2", rg_india)},
       false,
       {0, 100},
       {-15, -5}},
      {"Ignore preferred terms of existing pods",
       incoming(s2),
       {ex("node1", s1, stay_with_s1_in_region_away_from_s2_in_az), ex("node2", s2, stay_with_s2_in_region)},
       {ln("node1", rg_china), ln("node2", rg_india)},
       true,
       {},
       {}},
      // raw: node1's pod's anti-affinity term matches S2, but node1 has no az.
      {"Do not ignore preferred terms of existing pods",
       incoming(s2),
       {ex("node1", s1, stay_with_s1_in_region_away_from_s2_in_az), ex("node2", s2, stay_with_s2_in_region)},
       {ln("node1", rg_china), ln("node2", rg_india)},
       false,
       {0, 100},
       {0, 6}},
      {"No nodes to score", incoming(s2), {}, {}, true, {}, {}},
  };

  const std::string ignore_case = "Ignore preferred terms of existing pods";
  const ClusterObjects objects = team_namespaces();
  run_score_cases(
      cases,
      [&](size_t i) {
        ProfileConfig p;
        p.inter_pod_affinity_args.hard_pod_affinity_weight = 1;
        p.inter_pod_affinity_args.ignore_preferred_terms_of_existing_pods = cases[i].name == ignore_case;
        return p;
      },
      objects);
}

// ==== TestPreferredAffinityWithHardPodAffinitySymmetricWeight ======================

TEST(InterPodAffinityScore, UpstreamPreferredAffinityWithHardPodAffinitySymmetricWeight) {
  const StringMap service_s1{{"service", "S1"}};
  // Required affinity to service=S1 in namespaces "" (here "default") and
  // subteam2.team2, or any team1 namespace, by region.
  Affinity hard_pod_affinity;
  hard_pod_affinity.pod_affinity =
      PodAffinity{{term(in("service", {"S1"}), "region", {"default", "subteam2.team2"}, team1())}, {}};
  const std::vector<Pod> pods = {P("p1").node("node1").with(hard_pod_affinity),
                                 P("p2").node("node2").with(hard_pod_affinity)};
  const std::vector<Node> nodes = {ln("node1", {{"region", "China"}}), ln("node2", {{"region", "India"}}),
                                   ln("node3", {{"az", "az1"}})};
  const auto incoming = [&](const std::string& ns) { return Pod(P().ns(ns).labels(service_s1)); };

  // v1.DefaultHardPodAffinitySymmetricWeight is 1.
  const std::vector<int32_t> weights = {1, 0, 1, 1, 1};
  const std::vector<ScoreCase> cases = {
      {"with default weight", incoming("default"), pods, nodes, false, {100, 100, 0}, {1, 1, 0}},
      {"with zero weight", incoming("default"), pods, nodes, true, {}, {}},
      {"with no matching namespace", incoming("subteam1.team2"), pods, nodes, true, {}, {}},
      {"with matching NamespaceSelector", incoming("subteam1.team1"), pods, nodes, false, {100, 100, 0}, {1, 1, 0}},
      {"with matching Namespaces", incoming("subteam2.team2"), pods, nodes, false, {100, 100, 0}, {1, 1, 0}},
  };
  run_score_cases(
      cases,
      [&](size_t i) {
        ProfileConfig p;
        p.inter_pod_affinity_args.hard_pod_affinity_weight = weights.at(i);
        return p;
      },
      team_namespaces());
}

}  // namespace
}  // namespace bulkscore
