// NodeAffinity PreFilter, Filter and Score, with the expected values of
// upstream's pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go
// (TestNodeAffinity, TestNodeAffinityPriority), restated as tables.
#include <gtest/gtest.h>

#include <optional>

#include "plugins/prepare.hpp"
#include "tests/test_util.hpp"

namespace bulkscore {
namespace {

using namespace testutil;

const char* const kPlugin = "NodeAffinity";
const std::string kPodMismatch = "node(s) didn't match Pod's node affinity/selector";
const std::string kAddedMismatch = "node(s) didn't match scheduler-enforced node affinity";

// ---- builders for the tables ------------------------------------------------

Pod with_selector(StringMap selector) {
  Pod p = make_pod("pod", {container()});
  set_node_selector(p, std::move(selector));
  return p;
}

Pod with_required(std::vector<NodeSelectorTerm> terms) {
  Pod p = make_pod("pod", {container()});
  require_node_affinity(p, std::move(terms));
  return p;
}

NodeSelectorTerm term(std::vector<NodeSelectorRequirement> exprs, std::vector<NodeSelectorRequirement> fields = {}) {
  NodeSelectorTerm t;
  t.match_expressions = std::move(exprs);
  t.match_fields = std::move(fields);
  return t;
}

NodeSelectorRequirement name_in(const std::string& node) { return requirement("metadata.name", "In", {node}); }

NodeAffinityArgs added_required(std::vector<NodeSelectorTerm> terms) {
  NodeAffinityArgs a;
  a.added_affinity = NodeAffinity{};
  a.added_affinity->required = NodeSelector{std::move(terms)};
  return a;
}

// The plugin's own PreFilter outcome, with the PreFilterResult names as the
// plugin returns them (before the framework drops names not in the snapshot).
PrepareResult prefilter(const Pod& pod, const std::vector<Node>& nodes, const ProfileConfig& profile) {
  Snapshot snap = Snapshot::build(nodes, {});
  const ResourceList requests;
  const SnapshotView view = snap.view();
  const PrepareContext ctx{pod, snap, view, profile, requests};
  plugins::NodeAffinity::State st{};
  Arena arena;
  return plugins::NodeAffinity::prepare(ctx, st, arena);
}

// ---- TestNodeAffinity ---------------------------------------------------------

struct FilterCase {
  const char* upstream;  // the upstream case name
  Pod pod;
  std::string node_name;
  StringMap labels;
  NodeAffinityArgs args;
  Code want_prefilter;                                  // Success, Skip or UnschedulableAndUnresolvable
  std::optional<std::vector<std::string>> want_result;  // PreFilterResult names
  NodeFilterResult want_filter;
};

const NodeFilterResult kPodUR{Code::UnschedulableAndUnresolvable, {kPodMismatch}};

std::vector<FilterCase> filter_cases() {
  std::vector<FilterCase> c;
  auto add = [&](const char* name, Pod pod, std::string node, StringMap labels, Code pf,
                 std::optional<std::vector<std::string>> result, NodeFilterResult want, NodeAffinityArgs args = {}) {
    c.push_back(FilterCase{name, std::move(pod), std::move(node), std::move(labels), std::move(args), pf,
                           std::move(result), std::move(want)});
  };
  const Code ok = Code::Success;
  const auto none = std::nullopt;

  add("missing labels", with_selector({{"foo", "bar"}}), "", {}, ok, none, kPodUR);
  add("same labels", with_selector({{"foo", "bar"}}), "", {{"foo", "bar"}}, ok, none, fits());
  add("node labels are superset", with_selector({{"foo", "bar"}}), "", {{"foo", "bar"}, {"baz", "blah"}}, ok, none,
      fits());
  add("node labels are subset", with_selector({{"foo", "bar"}, {"baz", "blah"}}), "", {{"foo", "bar"}}, ok, none,
      kPodUR);
  add("Pod with matchExpressions using In operator that matches the existing node",
      with_required({term({requirement("foo", "In", {"bar", "value2"})})}), "", {{"foo", "bar"}}, ok, none, fits());
  add("Pod with matchExpressions using Gt operator that matches the existing node",
      with_required({term({requirement("kernel-version", "Gt", {"0204"})})}), "", {{"kernel-version", "0206"}}, ok,
      none, fits());
  add("Pod with matchExpressions using NotIn operator that matches the existing node",
      with_required({term({requirement("mem-type", "NotIn", {"DDR", "DDR2"})})}), "", {{"mem-type", "DDR3"}}, ok, none,
      fits());
  add("Pod with matchExpressions using Exists operator that matches the existing node",
      with_required({term({requirement("GPU", "Exists")})}), "", {{"GPU", "NVIDIA-GRID-K1"}}, ok, none, fits());
  add("Pod with affinity that don't match node's labels won't schedule onto the node",
      with_required({term({requirement("foo", "In", {"value1", "value2"})})}), "", {{"foo", "bar"}}, ok, none, kPodUR);
  add("Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule onto the node",
      with_required({term({})}), "", {{"foo", "bar"}}, ok, none, kPodUR);
  add("Pod with no Affinity will schedule onto a node", make_pod("pod", {container()}), "", {{"foo", "bar"}},
      Code::Skip, none, fits());
  {
    Pod p = make_pod("pod", {container()});
    p.affinity = Affinity{};
    p.affinity->node_affinity = NodeAffinity{};
    add("Pod with Affinity but nil NodeSelector will schedule onto a node", p, "", {{"foo", "bar"}}, Code::Skip, none,
        fits());
  }
  add("Pod with multiple matchExpressions ANDed that matches the existing node",
      with_required({term({requirement("GPU", "Exists"), requirement("GPU", "NotIn", {"AMD", "INTER"})})}), "",
      {{"GPU", "NVIDIA-GRID-K1"}}, ok, none, fits());
  add("Pod with multiple matchExpressions ANDed that doesn't match the existing node",
      with_required({term({requirement("GPU", "Exists"), requirement("GPU", "In", {"AMD", "INTER"})})}), "",
      {{"GPU", "NVIDIA-GRID-K1"}}, ok, none, kPodUR);
  add("Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will schedule onto the node",
      with_required({term({requirement("foo", "In", {"bar", "value2"})}),
                     term({requirement("diffkey", "In", {"wrong", "value2"})})}),
      "", {{"foo", "bar"}}, ok, none, fits());
  {
    Pod p = with_required({term({requirement("foo", "Exists")})});
    set_node_selector(p, {{"foo", "bar"}});
    add("Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) both are satisfied, "
        "will schedule onto the node",
        p, "", {{"foo", "bar"}}, ok, none, fits());
    add("Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing that we are "
        "deprecating) is not satisfied, won't schedule onto the node",
        p, "", {{"foo", "barrrrrr"}}, ok, none, kPodUR);
  }
  add("Pod with an invalid value in Affinity term won't be scheduled onto the node",
      with_required({term({requirement("foo", "NotIn", {"invalid value: ___@#$%^"})})}), "", {{"foo", "bar"}}, ok, none,
      kPodUR);
  add("Pod with matchFields using In operator that matches the existing node",
      with_required({term({}, {name_in("node1")})}), "node1", {}, ok, std::vector<std::string>{"node1"}, fits());
  add("Pod with matchFields using In operator that does not match the existing node",
      with_required({term({}, {name_in("node1")})}), "node2", {}, ok, std::vector<std::string>{"node1"}, kPodUR);
  add("Pod with two terms: matchFields does not match, but matchExpressions matches",
      with_required({term({}, {name_in("node1"), name_in("node2")}), term({requirement("foo", "In", {"bar"})})}),
      "node2", {{"foo", "bar"}}, ok, none, fits());
  add("Pod with one term: matchFields does not match, but matchExpressions matches",
      with_required({term({requirement("foo", "In", {"bar"})}, {name_in("node1")})}), "node2", {{"foo", "bar"}}, ok,
      std::vector<std::string>{"node1"}, kPodUR);
  add("Pod with one term: both matchFields and matchExpressions match",
      with_required({term({requirement("foo", "In", {"bar"})}, {name_in("node1")})}), "node1", {{"foo", "bar"}}, ok,
      std::vector<std::string>{"node1"}, fits());
  add("Pod with two terms: both matchFields and matchExpressions do not match",
      with_required({term({}, {name_in("node1")}), term({requirement("foo", "In", {"not-match-to-bar"})})}), "node2",
      {{"foo", "bar"}}, ok, none, kPodUR);
  add("Pod with two terms of node.Name affinity",
      with_required({term({}, {name_in("node1")}), term({}, {name_in("node2")})}), "node2", {}, ok,
      std::vector<std::string>{"node1", "node2"}, fits());
  add("Pod with two conflicting mach field requirements",
      with_required({term({}, {name_in("node1"), name_in("node2")})}), "node2", {{"foo", "bar"}},
      Code::UnschedulableAndUnresolvable, none, kPodUR);
  add("Matches added affinity and Pod's node affinity", with_required({term({requirement("zone", "In", {"foo"})})}),
      "node2", {{"zone", "foo"}}, ok, none, fits(), added_required({term({}, {name_in("node2")})}));
  add("Matches added affinity but not Pod's node affinity", with_required({term({requirement("zone", "In", {"bar"})})}),
      "node2", {{"zone", "foo"}}, ok, none, kPodUR, added_required({term({}, {name_in("node2")})}));
  add("Doesn't match added affinity", make_pod("pod", {container()}), "node2", {{"zone", "foo"}}, ok, none,
      NodeFilterResult{Code::UnschedulableAndUnresolvable, {kAddedMismatch}},
      added_required({term({requirement("zone", "In", {"bar"})})}));
  add("Pod with a nodeSelector that matches the node, without PreFilter", with_selector({{"foo", "bar"}}), "",
      {{"foo", "bar"}, {"baz", "blah"}}, ok, none, fits());
  add("Pod with node affinity that matches the node, without PreFilter",
      with_required({term({requirement("GPU", "Exists"), requirement("GPU", "NotIn", {"AMD", "INTER"})})}), "",
      {{"GPU", "NVIDIA-GRID-K1"}}, ok, none, fits());
  return c;
}

TEST(NodeAffinityFilter, UpstreamTestNodeAffinityTable) {
  for (const FilterCase& tc : filter_cases()) {
    SCOPED_TRACE(tc.upstream);
    const std::vector<Node> nodes = {labelled_node(tc.node_name, tc.labels)};
    ProfileConfig profile;
    profile.node_affinity_args = tc.args;

    const PrepareResult pf = prefilter(tc.pod, nodes, profile);
    EXPECT_EQ(pf.prefilter, tc.want_prefilter);
    EXPECT_EQ(pf.node_names, tc.want_result);

    const FilterRun run = run_filter(kPlugin, nodes, {}, tc.pod, profile);
    EXPECT_EQ(run.prefilter, tc.want_prefilter);
    if (tc.want_prefilter != Code::Skip)
      EXPECT_EQ(run.nodes.at(0), tc.want_filter);
    else
      EXPECT_EQ(run.nodes.at(0), fits());  // Skip: the Filter does not run
  }
}

TEST(NodeAffinityFilter, ConflictingMatchFieldsRejectThePodAtPreFilter) {
  // TestNodeAffinity "Pod with two conflicting mach field requirements".
  const Pod pod = with_required({term({}, {name_in("node1"), name_in("node2")})});
  const FilterRun run = run_filter(kPlugin, {labelled_node("node2", {{"foo", "bar"}})}, {}, pod);
  EXPECT_EQ(run.prefilter, Code::UnschedulableAndUnresolvable);
  EXPECT_EQ(run.prefilter_message, "pod affinity terms conflict");
  EXPECT_FALSE(run.candidates.has_value());
}

TEST(NodeAffinityFilter, PreFilterResultKeepsOnlyNodesOfTheSnapshot) {
  // TestNodeAffinity "Pod with two terms of node.Name affinity", seen through
  // the framework: names outside the snapshot are dropped.
  const Pod pod = with_required({term({}, {name_in("node1")}), term({}, {name_in("node2")})});
  const FilterRun run = run_filter(kPlugin, {labelled_node("node2", {}), labelled_node("node3", {})}, {}, pod);
  EXPECT_EQ(run.prefilter, Code::Success);
  EXPECT_EQ(run.candidates, (std::vector<std::string>{"node2"}));
  EXPECT_EQ(run.nodes.at(0), fits());
  EXPECT_EQ(run.nodes.at(1), kPodUR);
}

TEST(NodeAffinityFilter, EmptyNodeSelectorMapStillRunsPreFilter) {
  // PreFilter skips only when nodeSelector is nil (k8s-semantics.md §3.4).
  Pod pod = make_pod("pod", {container()});
  set_node_selector(pod, {});
  const FilterRun run = run_filter(kPlugin, {labelled_node("n", {})}, {}, pod);
  EXPECT_EQ(run.prefilter, Code::Success);
  EXPECT_EQ(run.nodes.at(0), fits());
}

TEST(NodeAffinityFilter, GtLtRequirementsCompareAsIntegers) {
  // Label-selector Gt/Lt: ParseInt on both sides, strict comparison.
  const std::vector<Node> nodes = {labelled_node("a", {{"gen", "5"}}), labelled_node("b", {{"gen", "7"}}),
                                   labelled_node("c", {{"gen", "x"}}), labelled_node("d", {})};
  const FilterRun gt = run_filter(kPlugin, nodes, {}, with_required({term({requirement("gen", "Gt", {"5"})})}));
  EXPECT_EQ(gt.nodes.at(0), kPodUR);
  EXPECT_EQ(gt.nodes.at(1), fits());
  EXPECT_EQ(gt.nodes.at(2), kPodUR);
  EXPECT_EQ(gt.nodes.at(3), kPodUR);
  const FilterRun lt = run_filter(kPlugin, nodes, {}, with_required({term({requirement("gen", "Lt", {"6"})})}));
  EXPECT_EQ(lt.nodes.at(0), fits());
  EXPECT_EQ(lt.nodes.at(1), kPodUR);
  EXPECT_EQ(lt.nodes.at(2), kPodUR);
  EXPECT_EQ(lt.nodes.at(3), kPodUR);
}

TEST(NodeAffinityFilter, GtValueThatIsNotALabelValueMakesTheTermUnmatchable) {
  // labels.NewRequirement validates every value as a label value, Gt/Lt
  // included: "-1" parses as an integer but is not a label value (it must
  // start with an alphanumeric), so the term never matches.
  const std::vector<Node> nodes = {labelled_node("a", {{"gen", "5"}})};
  const FilterRun r = run_filter(kPlugin, nodes, {}, with_required({term({requirement("gen", "Gt", {"-1"})})}));
  EXPECT_EQ(r.nodes.at(0), kPodUR);
}

TEST(NodeAffinityFilter, NotInMatchesANodeWithoutTheLabel) {
  const FilterRun r =
      run_filter(kPlugin, {labelled_node("a", {})}, {}, with_required({term({requirement("foo", "NotIn", {"bar"})})}));
  EXPECT_EQ(r.nodes.at(0), fits());
}

// ---- TestNodeAffinityPriority -------------------------------------------------

const StringMap kL1 = {{"foo", "bar"}};
const StringMap kL2 = {{"key", "value"}};
const StringMap kL3 = {{"az", "az1"}};
const StringMap kL4 = {{"abc", "az11"}, {"def", "az22"}};
const StringMap kL5 = {{"foo", "bar"}, {"key", "value"}, {"az", "az1"}};

PreferredSchedulingTerm pref(int32_t weight, std::vector<NodeSelectorRequirement> exprs) {
  return PreferredSchedulingTerm{weight, term(std::move(exprs))};
}

Pod preferring(std::vector<PreferredSchedulingTerm> terms) {
  Pod p = make_pod("pod", {container()});
  prefer_node_affinity(p, std::move(terms));
  return p;
}

// A1 and A2 of the upstream test.
Pod affinity1() { return preferring({pref(2, {requirement("foo", "In", {"bar"})})}); }
Pod affinity2() {
  return preferring({pref(2, {requirement("foo", "In", {"bar"})}), pref(4, {requirement("key", "In", {"value"})}),
                     pref(5, {requirement("foo", "In", {"bar"}), requirement("key", "In", {"value"}),
                              requirement("az", "In", {"az1"})})});
}

std::vector<Node> nodes_with(std::vector<std::pair<std::string, StringMap>> spec) {
  std::vector<Node> out;
  for (auto& [name, labels] : spec) out.push_back(labelled_node(name, labels));
  return out;
}

ProfileConfig with_added_preferred(std::vector<PreferredSchedulingTerm> terms) {
  ProfileConfig p;
  p.node_affinity_args.added_affinity = NodeAffinity{};
  p.node_affinity_args.added_affinity->preferred = std::move(terms);
  p.node_affinity_args.added_affinity->has_preferred = true;
  return p;
}

TEST(NodeAffinityScore, NoAffinitySkipsPreScore) {
  // "all nodes are same priority as NodeAffinity is nil" (0, 0, 0) and
  // "Skip is returned in PreScore when NodeAffinity is nil".
  const ScoreRun r = run_score(kPlugin, nodes_with({{"node1", kL1}, {"node2", kL2}, {"node3", kL3}}), {},
                               make_pod("pod", {container()}));
  EXPECT_TRUE(r.skipped);
}

TEST(NodeAffinityScore, BrokenPreferredTermIsAPreScoreError) {
  // "PreScore returns error when an incoming Pod has a broken affinity"
  const Pod pod = preferring({pref(2, {requirement("invalid key", "In", {"bar"})})});
  const ScoreRun r = run_score(kPlugin, nodes_with({{"node1", kL1}}), {}, pod);
  // Wrapped as upstream's RunPreScorePlugins wraps it.
  EXPECT_EQ(r.error.rfind("running PreScore plugin \"NodeAffinity\": ", 0), 0u) << r.error;
}

TEST(NodeAffinityScore, NoNodeMatchesThePreferredTerm) {
  // "no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' priority is zero"
  const ScoreRun r = run_score(kPlugin, nodes_with({{"node1", kL4}, {"node2", kL2}, {"node3", kL3}}), {}, affinity1());
  EXPECT_EQ(r.normalized, (std::vector<int64_t>{0, 0, 0}));
}

TEST(NodeAffinityScore, OnlyTheMatchingNodeScores) {
  // "only node1 matches the preferred scheduling requirements of pod"
  const ScoreRun r = run_score(kPlugin, nodes_with({{"node1", kL1}, {"node2", kL2}, {"node3", kL3}}), {}, affinity1());
  EXPECT_EQ(r.normalized, (std::vector<int64_t>{100, 0, 0}));
}

TEST(NodeAffinityScore, WeightsOfMatchingTermsAddUpAndNormalize) {
  // "all nodes matches the preferred scheduling requirements of pod but with different priorities"
  const ScoreRun r = run_score(kPlugin, nodes_with({{"node1", kL1}, {"node5", kL5}, {"node2", kL2}}), {}, affinity2());
  EXPECT_EQ(r.raw, (std::vector<int64_t>{2, 11, 4}));
  EXPECT_EQ(r.normalized, (std::vector<int64_t>{18, 100, 36}));
}

TEST(NodeAffinityScore, AddedAffinityAlone) {
  // "added affinity"
  const ScoreRun r =
      run_score(kPlugin, nodes_with({{"node1", kL1}, {"node2", kL2}}), {}, make_pod("pod", {container()}),
                with_added_preferred({pref(2, {requirement("foo", "In", {"bar"})})}));
  EXPECT_FALSE(r.skipped);
  EXPECT_EQ(r.normalized, (std::vector<int64_t>{100, 0}));
}

TEST(NodeAffinityScore, AddedAffinityAndPodAffinityAddUp) {
  // "added affinity and pod has default affinity"
  const ScoreRun r = run_score(kPlugin, nodes_with({{"node1", kL1}, {"node2", kL2}, {"node3", kL5}}), {}, affinity1(),
                               with_added_preferred({pref(3, {requirement("key", "In", {"value"})})}));
  EXPECT_EQ(r.raw, (std::vector<int64_t>{2, 3, 5}));
  EXPECT_EQ(r.normalized, (std::vector<int64_t>{40, 60, 100}));
}

TEST(NodeAffinityScore, ZeroWeightAndEmptyTermsAreDropped) {
  Pod pod = preferring({pref(0, {requirement("foo", "In", {"bar"})}), PreferredSchedulingTerm{7, term({})},
                        pref(1, {requirement("key", "In", {"value"})})});
  const ScoreRun r = run_score(kPlugin, nodes_with({{"node1", kL1}, {"node2", kL2}}), {}, pod);
  EXPECT_EQ(r.raw, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(r.normalized, (std::vector<int64_t>{0, 100}));
}

}  // namespace
}  // namespace bulkscore
