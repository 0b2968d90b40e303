// The structure-of-arrays snapshot: layout, dictionary lookups, dense label
// columns, and what assuming a pod changes.
#include "host/snapshot/snapshot.hpp"

#include <gtest/gtest.h>

#include "bench/generator/generator.hpp"
#include "host/input/k8s_json.hpp"
#include "host/input/pod_resources.hpp"
#include "tests/test_util.hpp"

namespace bulkscore {
namespace {

using testutil::container;
using testutil::make_node;

Cluster generated(uint32_t nodes, uint32_t running, uint64_t seed) {
  GeneratorOptions g;
  g.nodes = nodes;
  g.running_pods = running;
  g.pending_pods = 10;
  g.seed = seed;
  const GeneratedCluster c = generate_cluster(g);
  return assemble_cluster(parse_nodes_json(c.nodes_json, "n"), parse_pods_json(c.pods_json, "p"), {"default-scheduler"},
                          "n", "p");
}

TEST(Snapshot, DenseLabelColumnsAgreeWithTheLabelLists) {
  const Cluster c = generated(300, 200, 5);
  const Snapshot snap = Snapshot::build(c.nodes, c.running_pods);
  const SnapshotView v = snap.view();
  ASSERT_GT(v.num_dense_labels, 0u);
  const int32_t zone = snap.string_id("topology.kubernetes.io/zone");
  ASSERT_GE(snap.dense_label_slot(zone), 0) << "every generated node has a zone";
  size_t checked = 0;
  for (uint32_t n = 0; n < v.num_nodes; ++n) {
    for (uint32_t i = v.label_offsets[n]; i < v.label_offsets[n + 1]; ++i) {
      const int32_t key = v.label_keys[i];
      EXPECT_EQ(v.label_value(n, key, snap.dense_label_slot(key)), v.label_values[i]);
      ++checked;
    }
    // A key the node lacks reads as kNoId through either path.
    for (uint32_t slot = 0; slot < v.num_dense_labels; ++slot) {
      const int32_t dense = v.dense_labels[slot * v.num_nodes + n];
      bool found = false;
      for (uint32_t i = v.label_offsets[n]; i < v.label_offsets[n + 1]; ++i)
        found = found || v.label_values[i] == dense;
      EXPECT_TRUE(dense == kNoId || found);
    }
  }
  EXPECT_GT(checked, 300u);
}

TEST(Snapshot, LabelsOnFewNodesHaveNoDenseColumn) {
  std::vector<Node> nodes;
  for (int i = 0; i < 10; ++i) nodes.push_back(make_node("n" + std::to_string(i), 1000, 1000, 10, {{"common", "x"}}));
  nodes[3].labels["rare"] = "y";
  const Snapshot snap = Snapshot::build(nodes, {});
  EXPECT_GE(snap.dense_label_slot(snap.string_id("common")), 0);
  EXPECT_EQ(snap.dense_label_slot(snap.string_id("rare")), -1);
  EXPECT_EQ(snap.view().label_value(3, snap.string_id("rare"), -1), snap.string_id("y"));
}

TEST(Snapshot, AssumingAPodChangesOnlyThatNodeAndLogsIt) {
  const Cluster c = generated(50, 60, 9);
  Snapshot snap = Snapshot::build(c.nodes, c.running_pods);
  const auto before_req = snap.requested();
  const auto before_nz = snap.nonzero_requested();
  const auto before_count = snap.pod_count();
  const uint64_t version = snap.structure_version();
  Pod pod;
  pod.name = "p";
  pod.containers.push_back(container({{"cpu", 250}, {"memory", 1 << 20}}));
  snap.add_pod(pod, 7);
  EXPECT_EQ(snap.structure_version(), version);
  ASSERT_EQ(snap.mutation_log(), std::vector<uint32_t>{7});
  const uint32_t N = snap.num_nodes();
  for (uint32_t r = 0; r < snap.num_resources(); ++r)
    for (uint32_t n = 0; n < N; ++n) {
      const int64_t want =
          before_req[r * N + n] + (n == 7 && r == kCpu ? 250 : 0) + (n == 7 && r == kMemory ? (1 << 20) : 0);
      EXPECT_EQ(snap.requested()[r * N + n], want) << "resource " << r << " node " << n;
    }
  for (uint32_t n = 0; n < N; ++n) {
    EXPECT_EQ(snap.pod_count()[n], before_count[n] + (n == 7 ? 1 : 0));
    EXPECT_EQ(snap.nonzero_requested()[n], before_nz[n] + (n == 7 ? 250 : 0));
  }
}

TEST(Snapshot, NewResourceOrFullPortSlotsChangeTheStructure) {
  Snapshot snap = Snapshot::build({make_node("a", 1000, 1000), make_node("b", 1000, 1000)}, {});
  const uint64_t v0 = snap.structure_version();
  EXPECT_EQ(snap.resource_index("example.com/fpga"), -1);
  const int32_t r = snap.intern_resource("example.com/fpga");
  EXPECT_EQ(r, snap.resource_index("example.com/fpga"));
  EXPECT_GT(snap.structure_version(), v0);
  EXPECT_TRUE(snap.mutation_log().empty());

  // Host ports: slots have slack; filling them relays the columns out.
  const uint64_t v1 = snap.structure_version();
  Pod pod;
  pod.name = "ports";
  Container c = container();
  for (int p = 0; p < 12; ++p) c.ports.push_back(testutil::host_port("TCP", "", 8000 + p));
  pod.containers.push_back(c);
  snap.add_pod(pod, 1);
  EXPECT_GT(snap.structure_version(), v1);
  EXPECT_EQ(snap.port_counts()[1], 12u);
  EXPECT_EQ(snap.port_counts()[0], 0u);
  const SnapshotView v = snap.view();
  EXPECT_EQ(v.ports[v.port_offsets[1] + 11].port, 8011);
}

TEST(Snapshot, ColumnsAndViewOverCopiesMatchTheView) {
  const Cluster c = generated(40, 30, 3);
  const Snapshot snap = Snapshot::build(c.nodes, c.running_pods);
  std::vector<const void*> copies;
  for (const auto& col : snap.columns()) copies.push_back(col.data);
  const SnapshotView a = snap.view(), b = snap.view_over(copies);
  EXPECT_EQ(a.allocatable, b.allocatable);
  EXPECT_EQ(a.dense_labels, b.dense_labels);
  EXPECT_EQ(a.string_int_ok, b.string_int_ok);
  EXPECT_EQ(a.num_dense_labels, b.num_dense_labels);
  EXPECT_THROW(snap.view_over({}), Error);
}

TEST(Snapshot, NodeTreeOrderInterleavesZones) {
  std::vector<Node> nodes;
  const char* zones[] = {"a", "a", "a", "b", "c", "b"};
  for (int i = 0; i < 6; ++i)
    nodes.push_back(make_node("n" + std::to_string(i), 1, 1, 1, {{"topology.kubernetes.io/zone", zones[i]}}));
  const Snapshot snap = Snapshot::build(nodes, {});
  // Zones in first-seen order a, b, c; one node of each per round.
  EXPECT_EQ(snap.tree_order(), (std::vector<uint32_t>{0, 3, 4, 1, 5, 2}));
}

}  // namespace
}  // namespace bulkscore

namespace bulkscore {
namespace {

TEST(Snapshot, StructureVersionsAreUniqueAcrossSnapshots) {
  std::vector<Node> nodes = {testutil::make_node("a", 1000, 1000)};
  Snapshot first = Snapshot::build(nodes, {});
  const uint64_t v1 = first.structure_version();
  first = Snapshot::build(nodes, {});  // rebuilt in place: same address, new version
  EXPECT_NE(first.structure_version(), v1);
  const Snapshot other = Snapshot::build(nodes, {});
  EXPECT_NE(other.structure_version(), first.structure_version());
}

}  // namespace
}  // namespace bulkscore
