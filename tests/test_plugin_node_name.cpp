// NodeName Filter, with the cases of upstream's
// pkg/scheduler/framework/plugins/nodename/node_name_test.go (TestNodeName),
// restated.
#include <gtest/gtest.h>

#include "tests/test_util.hpp"

namespace bulkscore {
namespace {

using namespace testutil;

const char* const kPlugin = "NodeName";
const NodeFilterResult kOtherNode{Code::UnschedulableAndUnresolvable, {"node(s) didn't match the requested node name"}};

Pod pod_for(const std::string& node_name) {
  Pod p = make_pod("pod", {container()});
  p.node_name = node_name;
  return p;
}

TEST(NodeNameFilter, NoHostSpecified) {
  // "no host specified"
  EXPECT_EQ(run_filter(kPlugin, {make_node("", 1000, 1000)}, {}, pod_for("")).nodes.at(0), fits());
}

TEST(NodeNameFilter, HostMatches) {
  // "host matches"
  EXPECT_EQ(run_filter(kPlugin, {make_node("foo", 1000, 1000)}, {}, pod_for("foo")).nodes.at(0), fits());
}

TEST(NodeNameFilter, HostDoesNotMatch) {
  // "host doesn't match"
  EXPECT_EQ(run_filter(kPlugin, {make_node("foo", 1000, 1000)}, {}, pod_for("bar")).nodes.at(0), kOtherNode);
}

TEST(NodeNameFilter, OnlyTheNamedNodePassesAmongMany) {
  const FilterRun r = run_filter(
      kPlugin, {make_node("a", 1000, 1000), make_node("b", 1000, 1000), make_node("c", 1000, 1000)}, {}, pod_for("b"));
  EXPECT_EQ(r.nodes.at(0), kOtherNode);
  EXPECT_EQ(r.nodes.at(1), fits());
  EXPECT_EQ(r.nodes.at(2), kOtherNode);
}

TEST(NodeNameFilter, NameOfANodeNotInTheSnapshotMatchesNothing) {
  // The requested name is not even in the string dictionary.
  const FilterRun r = run_filter(kPlugin, {make_node("a", 1000, 1000)}, {}, pod_for("zzz-never-seen"));
  EXPECT_EQ(r.nodes.at(0), kOtherNode);
}

}  // namespace
}  // namespace bulkscore
