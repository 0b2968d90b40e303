// TaintToleration Filter and Score, with the expected values of upstream's
// pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go,
// restated. v1.35.4 has the TaintTolerationComparisonOperators gate off by
// default, so cases written for Gt/Lt with the gate on are checked here with
// the gate off (Gt/Lt tolerations never match), as the release behaves.
#include <gtest/gtest.h>

#include "tests/test_util.hpp"

namespace bulkscore {
namespace {

using namespace testutil;

const char* const kPlugin = "TaintToleration";
const std::string kUntolerated = "node(s) had untolerated taint(s)";

Node tainted(const std::string& name, std::vector<Taint> taints) {
  return make_node(name, 1000, 1000, 32, {}, std::move(taints));
}

Pod tolerating(std::vector<Toleration> tolerations) {
  Pod p = make_pod("pod1", {container()});
  p.tolerations = std::move(tolerations);
  return p;
}

// ---- Score (TestTaintTolerationScore) --------------------------------------

ScoreRun score(const Pod& pod, const std::vector<Node>& nodes) { return run_score(kPlugin, nodes, {}, pod); }

TEST(TaintTolerationScore, TolerationMatchingNodeTaintScoresHigher) {
  // "node with taints tolerated by the pod, gets a higher score than those node with intolerable taints"
  const Pod pod = tolerating({toleration("foo", "Equal", "bar", "PreferNoSchedule")});
  const ScoreRun r = score(pod, {tainted("nodeA", {taint("foo", "bar", "PreferNoSchedule")}),
                                 tainted("nodeB", {taint("foo", "blah", "PreferNoSchedule")})});
  EXPECT_EQ(r.raw, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(r.normalized, (std::vector<int64_t>{100, 0}));
}

TEST(TaintTolerationScore, AllTaintsToleratedScoreTheSameWhateverTheirNumber) {
  // "the nodes that all of their taints are tolerated by the pod, get the same score, no matter how many tolerable
  // taints a node has"
  const Pod pod = tolerating({toleration("cpu-type", "Equal", "arm64", "PreferNoSchedule"),
                              toleration("disk-type", "Equal", "ssd", "PreferNoSchedule")});
  const ScoreRun r = score(
      pod, {tainted("nodeA", {}), tainted("nodeB", {taint("cpu-type", "arm64", "PreferNoSchedule")}),
            tainted("nodeC",
                    {taint("cpu-type", "arm64", "PreferNoSchedule"), taint("disk-type", "ssd", "PreferNoSchedule")})});
  EXPECT_EQ(r.normalized, (std::vector<int64_t>{100, 100, 100}));
}

TEST(TaintTolerationScore, MoreIntolerableTaintsScoreLower) {
  // "the more intolerable taints a node has, the lower score it gets."
  const Pod pod = tolerating({toleration("foo", "Equal", "bar", "PreferNoSchedule")});
  const ScoreRun r = score(
      pod, {tainted("nodeA", {}), tainted("nodeB", {taint("cpu-type", "arm64", "PreferNoSchedule")}),
            tainted("nodeC",
                    {taint("cpu-type", "arm64", "PreferNoSchedule"), taint("disk-type", "ssd", "PreferNoSchedule")})});
  EXPECT_EQ(r.raw, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(r.normalized, (std::vector<int64_t>{100, 50, 0}));
}

TEST(TaintTolerationScore, OnlyPreferNoScheduleTaintsAndTolerationsCount) {
  // "only taints and tolerations that have effect PreferNoSchedule are checked by prioritizer function"
  const Pod pod = tolerating(
      {toleration("cpu-type", "Equal", "arm64", "NoSchedule"), toleration("disk-type", "Equal", "ssd", "NoSchedule")});
  const ScoreRun r = score(pod, {tainted("nodeA", {}), tainted("nodeB", {taint("cpu-type", "arm64", "NoSchedule")}),
                                 tainted("nodeC", {taint("cpu-type", "arm64", "PreferNoSchedule"),
                                                   taint("disk-type", "ssd", "PreferNoSchedule")})});
  EXPECT_EQ(r.normalized, (std::vector<int64_t>{100, 100, 0}));
}

TEST(TaintTolerationScore, NoTaintsNoTolerations) {
  // "Default behaviour No taints and tolerations"
  const Pod pod = tolerating({});
  const ScoreRun r =
      score(pod, {tainted("nodeA", {}), tainted("nodeB", {taint("cpu-type", "arm64", "PreferNoSchedule")})});
  EXPECT_EQ(r.normalized, (std::vector<int64_t>{100, 0}));
}

TEST(TaintTolerationScore, EveryNodeGets100WhenNoTaintIsIntolerable) {
  // Reverse normalization with max raw 0 (k8s-semantics.md §2.3).
  const Pod pod = tolerating({});
  const ScoreRun r = score(pod, {tainted("nodeA", {}), tainted("nodeB", {taint("k", "v", "NoSchedule")})});
  EXPECT_FALSE(r.skipped);
  EXPECT_EQ(r.raw, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(r.normalized, (std::vector<int64_t>{100, 100}));
}

TEST(TaintTolerationScore, NumericGtToleratesNothingWithTheGateOff) {
  // "Numeric Gt operator": upstream expects {0, 100} with the gate on; with
  // v1.35.4's default (gate off) the Gt toleration matches neither taint.
  const Pod pod = tolerating({toleration("node.kubernetes.io/sla", "Gt", "950", "PreferNoSchedule")});
  const ScoreRun r = score(pod, {tainted("nodeA", {taint("node.kubernetes.io/sla", "800", "PreferNoSchedule")}),
                                 tainted("nodeB", {taint("node.kubernetes.io/sla", "999", "PreferNoSchedule")})});
  EXPECT_EQ(r.raw, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(r.normalized, (std::vector<int64_t>{0, 0}));
}

TEST(TaintTolerationScore, UnparsableTaintValueIsIntolerable) {
  // "Score ignores parse errors": {100, 0}, the same with the gate off.
  const Pod pod = tolerating({toleration("node.kubernetes.io/sla", "Gt", "950", "PreferNoSchedule")});
  const ScoreRun r = score(
      pod, {tainted("nodeA", {}), tainted("nodeB", {taint("node.kubernetes.io/sla", "high", "PreferNoSchedule")})});
  EXPECT_EQ(r.normalized, (std::vector<int64_t>{100, 0}));
}

// ---- Filter (TestTaintTolerationFilter) ------------------------------------

NodeFilterResult filter_one(const Pod& pod, std::vector<Taint> taints) {
  const FilterRun r = run_filter(kPlugin, {tainted("nodeA", std::move(taints))}, {}, pod);
  EXPECT_EQ(r.prefilter, Code::Success);
  return r.nodes.at(0);
}

const NodeFilterResult kUntoleratedUR{Code::UnschedulableAndUnresolvable, {kUntolerated}};

TEST(TaintTolerationFilter, PodWithoutTolerationsOnTaintedNode) {
  // "A pod having no tolerations can't be scheduled onto a node with nonempty taints"
  EXPECT_EQ(filter_one(tolerating({}), {taint("dedicated", "user1", "NoSchedule")}), kUntoleratedUR);
}

TEST(TaintTolerationFilter, EmptyOperatorMeansEqual) {
  // "A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule"
  EXPECT_EQ(filter_one(tolerating({toleration("dedicated", "", "user1", "NoSchedule")}),
                       {taint("dedicated", "user1", "NoSchedule")}),
            fits());
}

TEST(TaintTolerationFilter, DifferentValueIsNotTolerated) {
  // "A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule"
  EXPECT_EQ(filter_one(tolerating({toleration("dedicated", "Equal", "user2", "NoSchedule")}),
                       {taint("dedicated", "user1", "NoSchedule")}),
            kUntoleratedUR);
}

TEST(TaintTolerationFilter, ExistsToleratesAnyValue) {
  // "A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates the taints on the
  // node"
  EXPECT_EQ(
      filter_one(tolerating({toleration("foo", "Exists", "", "NoSchedule")}), {taint("foo", "bar", "NoSchedule")}),
      fits());
}

TEST(TaintTolerationFilter, EveryTaintTolerated) {
  // "A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, pod can be scheduled onto
  // the node"
  EXPECT_EQ(filter_one(tolerating({toleration("dedicated", "Equal", "user2", "NoSchedule"),
                                   toleration("foo", "Exists", "", "NoSchedule")}),
                       {taint("dedicated", "user2", "NoSchedule"), taint("foo", "bar", "NoSchedule")}),
            fits());
}

TEST(TaintTolerationFilter, EffectMismatchIsNotTolerated) {
  // "A pod has a toleration that keys and values match the taint on the node, but (non-empty) effect doesn't match,
  // can't be scheduled onto the node"
  EXPECT_EQ(filter_one(tolerating({toleration("foo", "Equal", "bar", "PreferNoSchedule")}),
                       {taint("foo", "bar", "NoSchedule")}),
            kUntoleratedUR);
}

TEST(TaintTolerationFilter, EmptyEffectMatchesEveryEffect) {
  // "The pod has a toleration that keys and values match the taint on the node, the effect of toleration is empty, and
  // the effect of taint is NoSchedule. Pod can be scheduled onto the node"
  EXPECT_EQ(filter_one(tolerating({toleration("foo", "Equal", "bar", "")}), {taint("foo", "bar", "NoSchedule")}),
            fits());
}

TEST(TaintTolerationFilter, PreferNoScheduleTaintIsIgnored) {
  // "The pod has a toleration that key and value don't match the taint on the node, but the effect of taint on node is
  // PreferNoSchedule. Pod can be scheduled onto the node"
  EXPECT_EQ(filter_one(tolerating({toleration("dedicated", "Equal", "user2", "NoSchedule")}),
                       {taint("dedicated", "user1", "PreferNoSchedule")}),
            fits());
}

TEST(TaintTolerationFilter, NoTolerationsAndOnlyPreferNoScheduleTaint) {
  // "The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the
  // node"
  EXPECT_EQ(filter_one(tolerating({}), {taint("dedicated", "user1", "PreferNoSchedule")}), fits());
}

TEST(TaintTolerationFilter, NoExecuteTaintMustBeTolerated) {
  // Filter considers NoSchedule and NoExecute (k8s-semantics.md §3.3).
  EXPECT_EQ(filter_one(tolerating({}), {taint("k", "v", "NoExecute")}), kUntoleratedUR);
  EXPECT_EQ(filter_one(tolerating({toleration("k", "Exists", "", "NoExecute")}), {taint("k", "v", "NoExecute")}),
            fits());
}

TEST(TaintTolerationFilter, EmptyKeyWithExistsToleratesEveryTaint) {
  EXPECT_EQ(filter_one(tolerating({toleration("", "Exists", "", "")}),
                       {taint("a", "1", "NoSchedule"), taint("b", "2", "NoExecute")}),
            fits());
}

TEST(TaintTolerationFilter, ComparisonOperatorsNeverMatchWithTheGateOff) {
  // Upstream cases with the gate on: "priority-level Gt" (UR), "sla Gt 750 vs
  // 950" (ok), "Lt" pair, and "parse error" (v1.35.4: UR, message unchanged).
  // v1.35.4's default, gate off, makes every one of them UR, as upstream's
  // TestTaintTolerationFilterWithFeatureGate cases "Gt ... gate disabled" and
  // "Lt ... gate disabled" expect.
  EXPECT_EQ(filter_one(tolerating({toleration("node.example.com/priority-level", "Gt", "950", "NoSchedule")}),
                       {taint("node.example.com/priority-level", "800", "NoSchedule")}),
            kUntoleratedUR);
  EXPECT_EQ(filter_one(tolerating({toleration("node.kubernetes.io/sla", "Gt", "750", "NoSchedule")}),
                       {taint("node.kubernetes.io/sla", "950", "NoSchedule")}),
            kUntoleratedUR);
  EXPECT_EQ(filter_one(tolerating({toleration("node.kubernetes.io/sla", "Lt", "950", "NoSchedule")}),
                       {taint("node.kubernetes.io/sla", "800", "NoSchedule")}),
            kUntoleratedUR);
  EXPECT_EQ(filter_one(tolerating({toleration("node.kubernetes.io/sla", "Gt", "950", "NoSchedule")}),
                       {taint("node.kubernetes.io/sla", "high", "NoSchedule")}),
            kUntoleratedUR);
}

TEST(TaintTolerationFilter, EqualTolerationStillWorksBesideAGtToleration) {
  // TestTaintTolerationFilterWithFeatureGate: "Mixed operators with feature
  // gate disabled - Equal works" (ok) and "... Gt fails" (UR).
  const Pod pod = tolerating({toleration("dedicated", "Equal", "user1", "NoSchedule"),
                              toleration("node.kubernetes.io/sla", "Gt", "750", "NoSchedule")});
  EXPECT_EQ(filter_one(pod, {taint("dedicated", "user1", "NoSchedule")}), fits());
  EXPECT_EQ(filter_one(
                pod, {taint("dedicated", "user1", "NoSchedule"), taint("node.kubernetes.io/sla", "950", "NoSchedule")}),
            kUntoleratedUR);
}

TEST(TaintTolerationFilter, VerdictsAcrossSeveralNodes) {
  const Pod pod = tolerating({toleration("dedicated", "Equal", "user1", "NoSchedule")});
  const FilterRun r = run_filter(kPlugin,
                                 {tainted("n0", {}), tainted("n1", {taint("dedicated", "user1", "NoSchedule")}),
                                  tainted("n2", {taint("dedicated", "user2", "NoSchedule")})},
                                 {}, pod);
  EXPECT_EQ(r.nodes.at(0), fits());
  EXPECT_EQ(r.nodes.at(1), fits());
  EXPECT_EQ(r.nodes.at(2), kUntoleratedUR);
}

}  // namespace
}  // namespace bulkscore
