// NodeUnschedulable Filter, with the cases of upstream's
// pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable_test.go
// (TestNodeUnschedulable), restated.
#include <gtest/gtest.h>

#include "tests/test_util.hpp"

namespace bulkscore {
namespace {

using namespace testutil;

const char* const kPlugin = "NodeUnschedulable";
const NodeFilterResult kCordoned{Code::UnschedulableAndUnresolvable, {"node(s) were unschedulable"}};

Node node(bool unschedulable) {
  Node n = make_node("node", 1000, 1000);
  n.unschedulable = unschedulable;
  return n;
}

NodeFilterResult filter(const Pod& pod, bool unschedulable) {
  const FilterRun r = run_filter(kPlugin, {node(unschedulable)}, {}, pod);
  EXPECT_EQ(r.prefilter, Code::Success);
  return r.nodes.at(0);
}

TEST(NodeUnschedulableFilter, DoesNotSchedulePodToUnschedulableNode) {
  // "Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)"
  EXPECT_EQ(filter(make_pod("pod", {container()}), true), kCordoned);
}

TEST(NodeUnschedulableFilter, SchedulesPodToNormalNode) {
  // "Schedule pod to normal node"
  EXPECT_EQ(filter(make_pod("pod", {container()}), false), fits());
}

TEST(NodeUnschedulableFilter, SchedulesPodWithTolerationToUnschedulableNode) {
  // "Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)"
  Pod pod = make_pod("pod", {container()});
  pod.tolerations = {toleration("node.kubernetes.io/unschedulable", "", "", "NoSchedule")};
  EXPECT_EQ(filter(pod, true), fits());
}

TEST(NodeUnschedulableFilter, TolerationMustMatchTheCordonTaint) {
  // The toleration is matched against {node.kubernetes.io/unschedulable, "",
  // NoSchedule} by the usual rules (k8s-semantics.md §3.1, §3.3).
  Pod pod = make_pod("pod", {container()});
  pod.tolerations = {toleration("node.kubernetes.io/unschedulable", "", "", "NoExecute")};
  EXPECT_EQ(filter(pod, true), kCordoned) << "effect mismatch";
  pod.tolerations = {toleration("node.kubernetes.io/unschedulable", "Equal", "yes", "NoSchedule")};
  EXPECT_EQ(filter(pod, true), kCordoned) << "value mismatch";
  pod.tolerations = {toleration("node.kubernetes.io/unschedulable", "Exists", "", "")};
  EXPECT_EQ(filter(pod, true), fits()) << "Exists with any effect";
  pod.tolerations = {toleration("", "Exists", "", "")};
  EXPECT_EQ(filter(pod, true), fits()) << "tolerate everything";
}

}  // namespace
}  // namespace bulkscore
