// The structure-of-arrays snapshot: layout, dictionary lookups, dense label
// columns, the pods as data, and the mutations (pods and nodes) with what
// they log for device mirrors.
#include "host/snapshot/snapshot.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "bench/generator/generator.hpp"
#include "host/input/labels.hpp"
#include "host/engine/backend.hpp"
#include "host/engine/pod_query.hpp"
#include "host/input/config.hpp"
#include "host/input/k8s_json.hpp"
#include "host/input/pod_resources.hpp"
#include "host/snapshot/mirror_sync.hpp"
#include "tests/snapshot_check.hpp"
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

TEST(Snapshot, ANewResourceChangesTheStructureFullPortSlotsOnlyTheirLayout) {
  Snapshot snap = Snapshot::build({make_node("a", 1000, 1000), make_node("b", 1000, 1000)}, {});
  const uint64_t v0 = snap.structure_version();
  EXPECT_EQ(snap.resource_index("example.com/fpga"), -1);
  const int32_t r = snap.intern_resource("example.com/fpga");
  EXPECT_EQ(r, snap.resource_index("example.com/fpga"));
  EXPECT_GT(snap.structure_version(), v0);
  EXPECT_TRUE(snap.mutation_log().empty());

  // Host ports: slots have slack; filling them lays the port columns out
  // again (their layout version), the rest of the snapshot stays.
  const uint64_t v1 = snap.structure_version();
  auto port_layout = [&] {
    for (const auto& c : snap.columns())
      if (std::string(c.name) == "ports") return c.layout_version;
    return uint64_t(0);
  };
  const uint64_t ports_before = port_layout();
  Pod pod;
  pod.name = "ports";
  Container c = container();
  for (int p = 0; p < 12; ++p) c.ports.push_back(testutil::host_port("TCP", "", 8000 + p));
  pod.containers.push_back(c);
  snap.add_pod(pod, 1);
  EXPECT_EQ(snap.structure_version(), v1);
  EXPECT_NE(port_layout(), ports_before);
  EXPECT_EQ(snap.mutation_log(), std::vector<uint32_t>{1});
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

// ---- pods as data, mutations ---------------------------------------------------

namespace bulkscore {
namespace {

using testutil::container;
using testutil::make_node;
using testutil::make_pod;

using namespace snapshot_check;  // NOLINT(google-build-using-namespace)

// ---- random clusters ----

struct Rng {
  std::mt19937_64 gen;
  explicit Rng(uint64_t seed) : gen(seed) {}
  uint32_t below(uint32_t n) { return static_cast<uint32_t>(gen() % n); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(gen) < p; }
};

const char* const kImages[] = {"registry/app:1", "registry/db:2", "busybox", "nginx:1.27", "pause:3.9", "redis:7"};

Node random_node(Rng& rng, const std::string& name) {
  StringMap labels{{"kubernetes.io/hostname", name}};
  if (rng.chance(0.9)) labels["topology.kubernetes.io/zone"] = "zone-" + std::to_string(rng.below(4));
  if (rng.chance(0.5)) labels["topology.kubernetes.io/region"] = "region-" + std::to_string(rng.below(2));
  if (rng.chance(0.4)) labels["tier"] = rng.chance(0.5) ? "web" : "batch";
  if (rng.chance(0.1)) labels["rare-" + std::to_string(rng.below(100))] = "x";
  std::vector<Taint> taints;
  if (rng.chance(0.2)) taints.push_back(testutil::taint("dedicated", rng.chance(0.5) ? "gpu" : "infra", "NoSchedule"));
  if (rng.chance(0.1)) taints.push_back(testutil::taint("spot", "", "PreferNoSchedule"));
  std::vector<ContainerImage> images;
  for (size_t i = 0; i < std::size(kImages); ++i)
    if (rng.chance(0.4)) images.push_back(ContainerImage{{kImages[i]}, int64_t(100 + i) << 20});
  Node n = make_node(name, 1000 * (1 + rng.below(16)), int64_t(1 + rng.below(64)) << 30, 20 + rng.below(100),
                     std::move(labels), std::move(taints), std::move(images));
  if (rng.chance(0.2)) n.allocatable["example.com/gpu"] = rng.below(8);
  n.unschedulable = rng.chance(0.1);
  return n;
}

// `extended`: some pods request example.com/gpu (a new column, structural,
// on clusters without it).
Pod random_pod(Rng& rng, const std::string& name, bool extended = true) {
  const char* const namespaces[] = {"default", "kube-system", "team-a"};
  Pod p = make_pod(name);
  p.namespace_name = namespaces[rng.below(3)];
  if (rng.chance(0.8)) p.labels["app"] = "app-" + std::to_string(rng.below(5));
  if (rng.chance(0.5)) p.labels["pod-template-hash"] = std::to_string(1000 + rng.below(10));
  if (rng.chance(0.2)) p.labels["statefulset.kubernetes.io/pod-name"] = name;  // a string no one else has
  ResourceList req;
  if (rng.chance(0.8)) req["cpu"] = 50 * (1 + rng.below(20));
  if (rng.chance(0.7)) req["memory"] = int64_t(1 + rng.below(512)) << 20;
  if (extended && rng.chance(0.05)) req["example.com/gpu"] = 1;
  p.containers.push_back(container(req));
  if (rng.chance(0.3)) {
    Container c = container();
    const char* const ips[] = {"", "10.0.0.1", "10.0.0.2"};
    c.ports.push_back(testutil::host_port(rng.chance(0.7) ? "TCP" : "UDP", ips[rng.below(3)],
                                          8000 + static_cast<int32_t>(rng.below(4))));
    if (rng.chance(0.3)) c.ports.push_back(testutil::host_port("", "", 9000 + static_cast<int32_t>(rng.below(3))));
    p.containers.push_back(c);
  }
  if (rng.chance(0.1)) p.init_containers.push_back(testutil::sidecar({{"cpu", 10}}));
  p.deleting = rng.chance(0.1);
  // From the name, not the generator: the snapshot's priority column (read
  // by preemption) is checked by decode() without changing the draws.
  p.priority = static_cast<int32_t>(std::hash<std::string>{}(name) % 3) * 1000 - 1000;
  if (rng.chance(0.1)) {
    p.affinity = Affinity{};
    p.affinity->pod_anti_affinity = PodAffinity{};
    PodAffinityTerm t;
    t.topology_key = "kubernetes.io/hostname";
    t.label_selector = LabelSelector{};
    p.affinity->pod_anti_affinity->required.push_back(t);
  }
  return p;
}

// What the snapshot should hold, kept the plain way: nodes in index order,
// each node's pods in the order they came, and upstream's node tree.
struct Model {
  std::vector<Node> nodes;
  std::vector<std::vector<Pod>> pods;
  std::vector<std::pair<std::string, std::vector<std::string>>> zones;

  void tree_add(const Node& n) {
    const std::string key = upstream_zone_key(n.labels);
    for (auto& z : zones)
      if (z.first == key) {
        z.second.push_back(n.name);
        return;
      }
    zones.push_back({key, {n.name}});
  }
  void tree_remove(const Node& n) {
    const std::string key = upstream_zone_key(n.labels);
    for (size_t i = 0; i < zones.size(); ++i)
      if (zones[i].first == key) {
        auto& v = zones[i].second;
        v.erase(std::find(v.begin(), v.end(), n.name));
        if (v.empty()) zones.erase(zones.begin() + static_cast<std::ptrdiff_t>(i));
        return;
      }
  }
  std::vector<std::string> tree() const {
    std::vector<std::string> out;
    for (size_t round = 0; out.size() < nodes.size(); ++round)
      for (const auto& z : zones)
        if (round < z.second.size()) out.push_back(z.second[round]);
    return out;
  }
  std::vector<Pod> all_pods() const {
    std::vector<Pod> out;
    for (const auto& ps : pods) out.insert(out.end(), ps.begin(), ps.end());
    return out;
  }
  Snapshot fresh() const { return Snapshot::build(nodes, all_pods()); }
  int32_t index(const std::string& name) const {
    for (size_t i = 0; i < nodes.size(); ++i)
      if (nodes[i].name == name) return static_cast<int32_t>(i);
    return -1;
  }
};

Model random_model(Rng& rng, uint32_t num_nodes, uint32_t num_pods, uint32_t& pod_seq) {
  Model m;
  for (uint32_t i = 0; i < num_nodes; ++i) {
    m.nodes.push_back(random_node(rng, "node-" + std::to_string(i)));
    m.tree_add(m.nodes.back());
  }
  m.pods.resize(num_nodes);
  for (uint32_t i = 0; i < num_pods && num_nodes; ++i) {
    const uint32_t n = rng.below(num_nodes);
    Pod p = random_pod(rng, "pod-" + std::to_string(pod_seq++));
    p.node_name = m.nodes[n].name;
    m.pods[n].push_back(p);
  }
  return m;
}

// ---- tests ----

TEST(SnapshotPods, PodsAreDictionaryEncodedSlottedPerNode) {
  Pod a = testutil::running("a", "n1", {{"cpu", 100}});
  a.namespace_name = "team-a";
  a.labels = {{"app", "web"}, {"tier", "front"}};
  Pod b = testutil::running("b", "n1", {{"cpu", 200}});
  b.labels = {{"app", "db"}};
  b.deleting = true;
  Pod c = testutil::running("c", "n0", {});
  c.affinity = Affinity{};
  c.affinity->pod_anti_affinity = PodAffinity{};
  c.affinity->pod_anti_affinity->required.emplace_back();
  const Snapshot snap = Snapshot::build({make_node("n0", 1000, 1000), make_node("n1", 1000, 1000)}, {a, b, c});
  const SnapshotView v = snap.view();
  expect_every_column_decoded(snap);

  ASSERT_EQ(v.pod_count[1], 2);
  const uint32_t s0 = v.pod_offsets[1], s1 = s0 + 1;
  EXPECT_EQ(v.pod_namespace[s0], snap.string_id("team-a"));
  EXPECT_EQ(v.pod_namespace[s1], snap.string_id("default"));
  EXPECT_EQ(v.pod_node[s0], 1);
  EXPECT_EQ(v.pod_flags[s0], 0);
  EXPECT_EQ(v.pod_flags[s1], kPodTerminating);
  EXPECT_EQ(v.pod_flags[v.pod_offsets[0]], kPodRequiredAntiAffinity);
  EXPECT_EQ(v.pod_label_counts[s0], 2u);
  EXPECT_EQ(v.pod_label_value(s0, snap.string_id("app")), snap.string_id("web"));
  EXPECT_EQ(v.pod_label_value(s0, snap.string_id("tier")), snap.string_id("front"));
  EXPECT_EQ(v.pod_label_value(s1, snap.string_id("app")), snap.string_id("db"));
  EXPECT_EQ(v.pod_label_value(s1, snap.string_id("tier")), kNoId);
  EXPECT_LT(v.pod_label_keys[v.pod_label_offsets[s0]], v.pod_label_keys[v.pod_label_offsets[s0] + 1]);
  // Free slots (slack) after the node's pods.
  EXPECT_GT(v.pod_offsets[2] - v.pod_offsets[1], 2u);
  EXPECT_EQ(v.pod_node[s1 + 1], kNoId);

  // Host side: ids are positions in the input, pods_on_node in slot order.
  EXPECT_EQ(snap.num_pods(), 3u);
  const auto on1 = snap.pods_on_node(1);
  ASSERT_EQ(on1.size(), 2u);
  EXPECT_EQ(on1.begin()[0], 0u);
  EXPECT_EQ(on1.begin()[1], 1u);
  EXPECT_EQ(snap.pod(0).key(), "team-a/a");
  EXPECT_EQ(snap.find_pod("default", "b"), 1u);
  EXPECT_EQ(snap.find_pod("default", "a"), Snapshot::kNoPod);
  EXPECT_EQ(snap.pod_node(2), 0u);
  EXPECT_EQ(snap.pod_slot(1), s1);
}

TEST(SnapshotPods, AddThenRemoveRestoresEveryColumnBitForBit) {
  const Cluster c = generated(120, 300, 17);
  Snapshot snap = Snapshot::build(c.nodes, c.running_pods);
  const auto original = column_bytes(snap);
  Rng rng(5);
  for (int round = 0; round < 40; ++round) {
    const uint32_t node = rng.below(snap.num_nodes());
    Pod pod = random_pod(rng, "extra-" + std::to_string(round), false);
    pod.labels["brand-new-key-" + std::to_string(round)] = "brand-new-value";  // new dictionary strings
    const uint64_t version = snap.structure_version();
    const size_t logged = snap.mutation_log().size();
    const uint32_t id = snap.add_pod(pod, node);
    ASSERT_EQ(snap.structure_version(), version) << "round " << round;
    EXPECT_EQ(snap.pod(id).node_name, snap.node_name(node));
    EXPECT_NE(first_byte_difference(original, snap), "");
    if (round % 2)
      snap.remove_pod(id);
    else
      EXPECT_TRUE(snap.remove_pod(pod.namespace_name, pod.name).has_value());
    EXPECT_EQ(first_byte_difference(original, snap), "") << "round " << round;
    ASSERT_EQ(snap.mutation_log().size(), logged + 2);
    EXPECT_EQ(snap.mutation_log()[logged], node);
    EXPECT_EQ(snap.mutation_log()[logged + 1], node);
  }
  // Two pods on a node, the first removed first: the second moves down and
  // back; removing it too restores everything.
  for (int round = 0; round < 20; ++round) {
    const uint32_t node = rng.below(snap.num_nodes());
    const uint32_t first = snap.add_pod(random_pod(rng, "x-" + std::to_string(round), false), node);
    const uint32_t second = snap.add_pod(random_pod(rng, "y-" + std::to_string(round), false), node);
    snap.remove_pod(first);
    snap.remove_pod(second);
    EXPECT_EQ(first_byte_difference(original, snap), "") << "round " << round;
  }
  EXPECT_EQ(snap.num_pods(), c.running_pods.size());
}

// The per-domain sums (PodTopologySpread's Score counts) equal a recount
// from the per-node counters after pods come and go and nodes are added,
// relabelled and removed.
TEST(SnapshotPods, TopologyDomainSumsFollowEveryMutation) {
  const Cluster c = generated(80, 200, 23);
  Snapshot snap = Snapshot::build(c.nodes, c.running_pods);
  const char* const kKeys[] = {"topology.kubernetes.io/zone", "kubernetes.io/hostname"};
  LabelSelector every;
  every.match_expressions.push_back({"app", "Exists", {}});
  const std::string ns = c.running_pods.front().namespace_name;
  const uint32_t m = snap.topology_matcher(ns, every);
  for (const char* k : kKeys) snap.register_topology_domain_sums(m, snap.string_id(k));
  const auto check = [&](const std::string& when) {
    for (const char* k : kKeys) {
      const int32_t key = snap.string_id(k);
      const int32_t slot = snap.dense_label_slot(key);
      const std::vector<int64_t>* sums = snap.topology_domain_sums(m, key);
      ASSERT_EQ(sums != nullptr, slot >= 0) << when << ", " << k;
      if (!sums) continue;
      std::vector<int64_t> want(snap.dense_label_values(slot).size() + 1, 0);
      const SnapshotView v = snap.view();
      for (uint32_t n = 0; n < snap.num_nodes(); ++n) {
        const int32_t r = v.dense_rank(slot, n);
        want[r < 0 ? want.size() - 1 : static_cast<size_t>(r)] += v.topology_count(m, n);
      }
      ASSERT_EQ(*sums, want) << when << ", " << k;
    }
  };
  ASSERT_NE(snap.topology_domain_sums(m, snap.string_id(kKeys[0])), nullptr);
  check("after registration");
  Rng rng(9);
  for (int round = 0; round < 60; ++round) {
    const std::string when = "round " + std::to_string(round);
    const uint32_t what = rng.below(10);
    if (what < 5) {
      Pod pod = random_pod(rng, "extra-" + std::to_string(round), false);
      pod.namespace_name = ns;
      pod.labels["app"] = "x";
      snap.add_pod(pod, rng.below(snap.num_nodes()));
    } else if (what < 8) {
      for (int tries = 0; tries < 8; ++tries) {
        const uint32_t id = rng.below(snap.pod_id_bound());
        if (!snap.has_pod(id)) continue;
        snap.remove_pod(id);
        break;
      }
    } else if (what < 9) {
      Node n = c.nodes[rng.below(static_cast<uint32_t>(c.nodes.size()))];
      if (snap.node_index(n.name) < 0) continue;
      n.labels["topology.kubernetes.io/zone"] = "zone-moved-" + std::to_string(rng.below(2));  // structural
      snap.update_node(n);
    } else if (snap.num_nodes() > 2) {
      snap.remove_node(snap.node_name(rng.below(snap.num_nodes())));
    }
    check(when);
  }
  Node added = c.nodes.front();
  added.name = "added-node";
  added.labels["kubernetes.io/hostname"] = added.name;
  snap.add_node(added);
  check("after add_node");
}

// The priority column (preemption's scans read it instead of the Pods)
// holds each live pod's priority through builds, adds that reuse freed ids,
// updates, removals and a node's removal.
TEST(SnapshotPods, ThePriorityColumnIsEachPodsPriority) {
  uint32_t seq = 0;
  Rng rng(13);
  Model m = random_model(rng, 10, 50, seq);
  Snapshot snap = m.fresh();
  const auto check = [&](const std::string& when) {
    size_t live = 0;
    for (uint32_t n = 0; n < snap.num_nodes(); ++n)
      for (uint32_t id : snap.pods_on_node(n)) {
        ++live;
        ASSERT_EQ(snap.pod_priority(id), snap.pod(id).priority) << when << ": pod " << snap.pod(id).key();
      }
    ASSERT_EQ(live, snap.num_pods()) << when;
  };
  check("built");
  std::set<int32_t> seen;
  for (int round = 0; round < 200; ++round) {
    const uint32_t node = rng.below(snap.num_nodes());
    const uint32_t op = rng.below(3);
    if (op == 0 || snap.num_pods() == 0) {
      Pod pod = random_pod(rng, "extra-" + std::to_string(seq++));
      pod.priority = static_cast<int32_t>(rng.below(5)) * 100 - 200;
      seen.insert(pod.priority);
      snap.add_pod(std::move(pod), node);
    } else {
      std::vector<uint32_t> ids;
      for (uint32_t n = 0; n < snap.num_nodes(); ++n)
        for (uint32_t id : snap.pods_on_node(n)) ids.push_back(id);
      const uint32_t id = ids[rng.below(static_cast<uint32_t>(ids.size()))];
      if (op == 1) {
        snap.remove_pod(id);
      } else {
        Pod updated = snap.pod(id);
        updated.priority += 7;
        snap.update_pod(id, updated);
      }
    }
    check("round " + std::to_string(round));
  }
  EXPECT_GE(seen.size(), 3u);
  snap.remove_node(snap.node_name(0));
  check("after remove_node");
}

TEST(SnapshotPods, RemovingRunningPodsEqualsBuildingWithoutThem) {
  uint32_t seq = 0;
  Rng rng(11);
  Model m = random_model(rng, 12, 60, seq);
  Snapshot snap = m.fresh();
  for (int round = 0; round < 40; ++round) {
    std::vector<std::pair<uint32_t, uint32_t>> live;
    for (uint32_t n = 0; n < m.pods.size(); ++n)
      for (uint32_t j = 0; j < m.pods[n].size(); ++j) live.emplace_back(n, j);
    if (live.empty()) break;
    const auto [n, j] = live[rng.below(static_cast<uint32_t>(live.size()))];
    const Pod gone = m.pods[n][j];
    m.pods[n].erase(m.pods[n].begin() + j);
    const auto removed = snap.remove_pod(gone.namespace_name, gone.name);
    ASSERT_TRUE(removed.has_value());
    EXPECT_EQ(removed->key(), gone.key());
    ASSERT_EQ(first_difference(decode(m.fresh()), decode(snap)), "") << "round " << round << ", removed " << gone.key();
  }
  EXPECT_FALSE(snap.remove_pod("default", "no-such-pod").has_value());
  EXPECT_THROW(snap.remove_pod(uint32_t(999999)), Error);
}

TEST(SnapshotPods, UpdateEqualsRemoveThenAdd) {
  const Cluster c = generated(60, 150, 23);
  Rng rng(3);
  Snapshot updated = Snapshot::build(c.nodes, c.running_pods);
  Snapshot replayed = Snapshot::build(c.nodes, c.running_pods);
  for (int round = 0; round < 50; ++round) {
    const uint32_t id = rng.below(updated.pod_id_bound());
    if (!updated.has_pod(id)) continue;
    Pod changed = random_pod(rng, updated.pod(id).name);
    changed.namespace_name = updated.pod(id).namespace_name;
    // Half stay on their node (node_name empty), half move.
    const uint32_t node = rng.chance(0.5) ? updated.pod_node(id) : rng.below(updated.num_nodes());
    if (rng.chance(0.5)) changed.node_name = updated.node_name(node);
    const uint32_t target = changed.node_name.empty() ? updated.pod_node(id) : node;
    const uint32_t kept = round % 2 ? updated.update_pod(id, changed) : updated.update_pod(changed);
    EXPECT_EQ(kept, id) << "update_pod keeps the id";
    replayed.remove_pod(id);
    replayed.add_pod(changed, target);
    ASSERT_EQ(first_byte_difference(column_bytes(replayed), updated), "") << "round " << round;
    EXPECT_EQ(updated.pod(id).labels, changed.labels);
  }
  Pod unknown = random_pod(rng, "not-there");
  EXPECT_THROW(updated.update_pod(unknown), InputError);
  // update_pod with the snapshot's own pod object.
  const uint32_t any = updated.pods_on_node(updated.pod_node(0)).begin()[0];
  EXPECT_NO_THROW(updated.update_pod(any, updated.pod(any)));
}

TEST(SnapshotNodes, AddUpdateRemoveEqualAFreshBuild) {
  uint32_t seq = 0;
  Rng rng(7);
  Model m;
  const char* zones[] = {"a", "b", "a", "c", "b", "a"};
  for (int i = 0; i < 6; ++i) {
    Node n = random_node(rng, "n" + std::to_string(i));
    n.labels["topology.kubernetes.io/zone"] = zones[i];
    n.labels.erase("topology.kubernetes.io/region");
    m.nodes.push_back(n);
    m.tree_add(n);
  }
  m.pods.resize(m.nodes.size());
  for (int i = 0; i < 30; ++i) {
    const uint32_t n = rng.below(6);
    Pod p = random_pod(rng, "p" + std::to_string(seq++));
    p.node_name = m.nodes[n].name;
    m.pods[n].push_back(p);
  }
  Snapshot snap = m.fresh();
  auto check = [&](const std::string& what) {
    const Snapshot fresh = m.fresh();
    EXPECT_EQ(first_difference(decode(fresh), decode(snap)), "") << what;
    EXPECT_EQ(snap.tree_order(), fresh.tree_order()) << what;
  };

  // A node in an existing zone, then one in a new zone: appended, in the tree.
  uint64_t version = snap.structure_version();
  for (const char* zone : {"b", "d"}) {
    Node n = random_node(rng, std::string("new-") + zone);
    n.labels["topology.kubernetes.io/zone"] = zone;
    n.labels.erase("topology.kubernetes.io/region");
    EXPECT_EQ(snap.add_node(n), m.nodes.size());
    m.nodes.push_back(n);
    m.pods.emplace_back();
    m.tree_add(n);
    EXPECT_NE(snap.structure_version(), version);
    version = snap.structure_version();
    EXPECT_TRUE(snap.mutation_log().empty());
    check(std::string("add_node in zone ") + zone);
  }
  // Pods onto the new node.
  for (int i = 0; i < 3; ++i) {
    Pod p = random_pod(rng, "p" + std::to_string(seq++));
    snap.add_pod(p, 7);
    p.node_name = m.nodes[7].name;
    m.pods[7].push_back(p);
  }
  check("pods on the new node");
  EXPECT_THROW(snap.add_node(m.nodes[0]), InputError);

  // Update in place: allocatable, pods capacity and unschedulable only.
  {
    Node n = m.nodes[2];
    n.allocatable["cpu"] += 500;
    n.allocatable["pods"] = 7;
    n.unschedulable = !n.unschedulable;
    version = snap.structure_version();
    const size_t logged = snap.mutation_log().size();
    snap.update_node(n);
    m.nodes[2] = n;
    EXPECT_EQ(snap.structure_version(), version) << "an update of numbers only is in place";
    ASSERT_EQ(snap.mutation_log().size(), logged + 1);
    EXPECT_EQ(snap.mutation_log().back(), 2u);
    check("update_node in place");
  }
  // Structural updates: labels (zone kept), taints, images.
  {
    Node n = m.nodes[3];
    n.labels["tier"] = "changed";
    n.taints.push_back(testutil::taint("new-taint", "v", "NoExecute"));
    n.images.push_back(ContainerImage{{"fresh/image:1"}, 12345});
    snap.update_node(n);
    m.nodes[3] = n;
    EXPECT_NE(snap.structure_version(), version);
    version = snap.structure_version();
    EXPECT_TRUE(snap.mutation_log().empty());
    check("update_node labels, taints, images");
    n.images.clear();
    snap.update_node(n);
    m.nodes[3] = n;
    check("update_node without images");
  }
  EXPECT_THROW(snap.update_node(random_node(rng, "nope")), InputError);

  // Remove a node that is not the first of its zone, with its pods: they are
  // dropped and handed back.
  {
    const std::vector<Pod> expected = m.pods[4];
    const std::vector<Pod> dropped = snap.remove_node("n4");
    ASSERT_EQ(dropped.size(), expected.size());
    for (size_t i = 0; i < dropped.size(); ++i) EXPECT_EQ(dropped[i].key(), expected[i].key());
    for (const Pod& p : dropped) EXPECT_EQ(snap.find_pod(p.namespace_name, p.name), Snapshot::kNoPod);
    m.tree_remove(m.nodes[4]);
    m.nodes.erase(m.nodes.begin() + 4);
    m.pods.erase(m.pods.begin() + 4);
    EXPECT_EQ(snap.node_index("n4"), -1);
    EXPECT_EQ(snap.node_index("n5"), 4);
    check("remove_node n4");
  }
  // The last node, alone in its zone.
  snap.remove_node("new-d");
  m.tree_remove(m.nodes.back());
  m.nodes.pop_back();
  m.pods.pop_back();
  check("remove_node new-d");
  EXPECT_THROW(snap.remove_node("new-d"), InputError);
  // Pods still come and go on the shifted nodes.
  {
    Pod p = random_pod(rng, "p" + std::to_string(seq++));
    snap.add_pod(p, 4);
    p.node_name = m.nodes[4].name;
    m.pods[4].push_back(p);
    const Pod first = m.pods[0].front();
    m.pods[0].erase(m.pods[0].begin());
    ASSERT_TRUE(snap.remove_pod(first.namespace_name, first.name));
    check("pods after node changes");
  }
}

TEST(SnapshotNodes, NodesAddedToAnEmptySnapshotEqualABuild) {
  Rng rng(13);
  Model m;
  Snapshot snap;  // default-constructed: no columns yet
  for (int i = 0; i < 5; ++i) {
    const Node n = random_node(rng, "n" + std::to_string(i));
    snap.add_node(n);
    m.nodes.push_back(n);
    m.pods.emplace_back();
    m.tree_add(n);
  }
  Pod p = random_pod(rng, "p", false);
  snap.add_pod(p, 2);
  p.node_name = "n2";
  m.pods[2].push_back(p);
  EXPECT_EQ(first_difference(decode(m.fresh()), decode(snap)), "");
  for (int i = 0; i < 5; ++i) snap.remove_node("n" + std::to_string(i));
  EXPECT_EQ(first_difference(decode(Snapshot::build({}, {})), decode(snap)), "");
  EXPECT_EQ(snap.num_pods(), 0u);
}

TEST(SnapshotNodes, TreeOrderFollowsUpstreamsNodeTree) {
  auto zoned = [](const std::string& name, const std::string& zone) {
    return make_node(name, 1000, 1000, 10, {{"topology.kubernetes.io/zone", zone}});
  };
  Snapshot snap = Snapshot::build({zoned("a1", "a"), zoned("b1", "b"), zoned("a2", "a")}, {});
  auto names = [&] {
    std::vector<std::string> out;
    for (uint32_t n : snap.tree_order()) out.push_back(snap.node_name(n));
    return out;
  };
  EXPECT_EQ(names(), (std::vector<std::string>{"a1", "b1", "a2"}));
  // Zone a keeps its place when the node that created it goes (a fresh build
  // of b1, a2 would put zone b first).
  snap.remove_node("a1");
  EXPECT_EQ(names(), (std::vector<std::string>{"a2", "b1"}));
  // A zone change moves the node to the end of its new zone; an emptied zone goes.
  snap.add_node(zoned("b2", "b"));
  snap.update_node(zoned("a2", "b"));
  EXPECT_EQ(names(), (std::vector<std::string>{"b1", "b2", "a2"}));
  snap.add_node(zoned("c1", "c"));
  snap.add_node(zoned("a3", "a"));
  EXPECT_EQ(names(), (std::vector<std::string>{"b1", "c1", "a3", "b2", "a2"}));
  // The beta zone label wins over the GA one, as upstream's zone key.
  Node beta = zoned("c1", "a");
  beta.labels["failure-domain.beta.kubernetes.io/zone"] = "c";
  snap.update_node(beta);
  EXPECT_EQ(names(), (std::vector<std::string>{"b1", "c1", "a3", "b2", "a2"}));
}

TEST(SnapshotIdentity, CopiesGetANewStructureVersionMovesKeepIt) {
  const Cluster c = generated(20, 30, 2);
  Snapshot original = Snapshot::build(c.nodes, c.running_pods);
  original.add_pod(random_pod(*std::make_unique<Rng>(1), "logged"), 3);
  const uint64_t version = original.structure_version();

  Snapshot copy(original);
  EXPECT_NE(copy.structure_version(), version);
  EXPECT_NE(copy.structure_version(), 0u);
  EXPECT_TRUE(copy.mutation_log().empty());
  EXPECT_EQ(first_byte_difference(column_bytes(original), copy), "") << "same columns";
  EXPECT_EQ(first_difference(decode(original), decode(copy)), "");
  Snapshot assigned;
  assigned = original;
  EXPECT_NE(assigned.structure_version(), version);
  EXPECT_NE(assigned.structure_version(), copy.structure_version());
  EXPECT_EQ(original.structure_version(), version);

  Snapshot moved(std::move(original));
  EXPECT_EQ(moved.structure_version(), version);
  EXPECT_EQ(moved.mutation_log(), std::vector<uint32_t>{3});
  EXPECT_EQ(original.structure_version(), 0u);  // NOLINT(bugprone-use-after-move): a mirror never accepts it
  Snapshot move_assigned;
  move_assigned = std::move(moved);
  EXPECT_EQ(move_assigned.structure_version(), version);

  // A mirror of the original re-sends everything for the copy.
  MirrorSync sync;
  const auto cols = move_assigned.columns();
  sync.synced(move_assigned, cols);
  EXPECT_FALSE(sync.plan(move_assigned, cols).everything);
  EXPECT_TRUE(sync.plan(copy, copy.columns()).everything);
}

TEST(SnapshotMirrorSync, TheLogListsExactlyTheTouchedNodesAndTheMirrorSendsThose) {
  const Cluster c = generated(50, 80, 4);
  Snapshot snap = Snapshot::build(c.nodes, c.running_pods);
  HostMirror mirror;
  mirror.update(snap);
  ASSERT_EQ(mirror.everything, 1u);
  EXPECT_TRUE(snap.mutation_log().empty());

  Rng rng(9);
  snap.add_pod(random_pod(rng, "one", false), 3);
  const uint32_t victim = snap.pods_on_node(5).begin()[0];
  snap.remove_pod(victim);
  const uint32_t moved = snap.pods_on_node(7).begin()[0];
  Pod changed = snap.pod(moved);
  changed.labels["changed"] = "yes";
  snap.update_pod(moved, changed);
  EXPECT_EQ(snap.mutation_log(), (std::vector<uint32_t>{3, 5, 7, 7}));

  const auto cols = snap.columns();
  MirrorSync::Plan plan = mirror.sync.plan(snap, cols);
  EXPECT_FALSE(plan.everything);
  EXPECT_TRUE(plan.whole.empty());
  std::set<uint64_t> nodes;
  for (const auto& r : plan.ranges) {
    const auto& col = cols[r.column];
    if (col.kind == Snapshot::ColumnKind::kNodeSlots) {
      // The range is one node's whole slot range.
      uint32_t n = 0;
      while (col.slot_offsets[n + 1] <= r.first) ++n;
      EXPECT_EQ(col.slot_offsets[n], r.first);
      EXPECT_EQ(col.slot_offsets[n + 1] - col.slot_offsets[n], r.count);
      nodes.insert(n);
    } else {
      nodes.insert(r.first);
    }
  }
  EXPECT_EQ(nodes, (std::set<uint64_t>{3, 5, 7}));
  mirror.update(snap);
  EXPECT_EQ(mirror.first_difference(snap), "");
  EXPECT_EQ(mirror.everything, 1u);
  EXPECT_GT(mirror.tails, 0u) << "new label strings grew the dictionary columns";

  // A structural change re-sends everything.
  snap.intern_resource("example.com/new");
  EXPECT_TRUE(snap.mutation_log().empty());
  mirror.update(snap);
  EXPECT_EQ(mirror.everything, 2u);
  EXPECT_EQ(mirror.first_difference(snap), "");
}

TEST(SnapshotMirrorSync, FullSlotsAreLaidOutAgainAndOnlyThoseColumnsResent) {
  Snapshot snap = Snapshot::build({make_node("a", 100000, int64_t(1) << 40, 500), make_node("b", 1000, 1000)}, {});
  HostMirror mirror;
  mirror.update(snap);
  const uint64_t version = snap.structure_version();
  Rng rng(1);
  std::vector<Pod> added;
  for (int i = 0; i < 60; ++i) {
    Pod p = random_pod(rng, "p" + std::to_string(i), false);
    snap.add_pod(p, 0);
    p.node_name = "a";
    added.push_back(p);
    mirror.update(snap);
    ASSERT_EQ(mirror.first_difference(snap), "") << "pod " << i;
  }
  EXPECT_EQ(snap.structure_version(), version);
  EXPECT_EQ(mirror.everything, 1u);
  EXPECT_GT(mirror.whole, 0u) << "the pod columns were laid out again";
  const Snapshot fresh =
      Snapshot::build({make_node("a", 100000, int64_t(1) << 40, 500), make_node("b", 1000, 1000)}, added);
  EXPECT_EQ(first_difference(decode(fresh), decode(snap)), "");
}

// The CUDA backend's device mirror through pod and node changes: after every
// step it evaluates pods exactly as the CPU backend (every EvalResult list
// compared), so removals, in-place node updates, relayouts and dictionary
// tails all reach the device. Skipped without a CUDA device.
TEST(SnapshotMirrorSync, CudaBackendFollowsPodAndNodeChanges) {
  const std::string why = cuda_unavailable_reason();
  if (!why.empty()) GTEST_SKIP() << why;
  const std::unique_ptr<Backend> cuda = make_cuda_backend();
  const std::unique_ptr<Backend> cpu = make_cpu_backend(1);
  const ProfilePlan plan = make_profile_plan(default_scheduler_config().profiles.at(0));
  Rng rng(77);
  uint32_t pod_seq = 0, node_seq = 500;
  Model m = random_model(rng, 40, 150, pod_seq);
  Snapshot snap = m.fresh();
  EvalRequest req;
  req.want_scores = req.want_sorted = req.want_verdicts = true;
  EvalResult want, got;
  for (int step = 0; step < 300; ++step) {
    const uint32_t op = rng.below(100);
    if (op < 40) {
      snap.add_pod(random_pod(rng, "pod-" + std::to_string(pod_seq++)), rng.below(snap.num_nodes()));
    } else if (op < 70 && snap.num_pods() > 0) {
      uint32_t id = rng.below(snap.pod_id_bound());
      while (!snap.has_pod(id)) id = (id + 1) % snap.pod_id_bound();
      if (rng.chance(0.5))
        snap.remove_pod(id);
      else
        snap.update_pod(id, random_pod(rng, snap.pod(id).name));
    } else if (op < 85) {
      Node n = random_node(rng, snap.node_name(rng.below(snap.num_nodes())));
      if (rng.chance(0.5)) {  // new numbers, the node's own lists: in place
        const auto at = static_cast<uint32_t>(snap.node_index(n.name));
        n.labels.clear();
        for (uint32_t i = snap.view().label_offsets[at]; i < snap.view().label_offsets[at + 1]; ++i)
          n.labels[snap.strings().str(snap.view().label_keys[i])] = snap.strings().str(snap.view().label_values[i]);
        n.taints.clear();
        n.images.clear();
        for (uint32_t i = snap.view().taint_offsets[at]; i < snap.view().taint_offsets[at + 1]; ++i) {
          const char* effects[] = {"NoSchedule", "PreferNoSchedule", "NoExecute"};
          n.taints.push_back(testutil::taint(snap.strings().str(snap.view().taint_keys[i]),
                                             snap.strings().str(snap.view().taint_values[i]),
                                             effects[snap.view().taint_effects[i]]));
        }
        for (uint32_t i = snap.view().image_offsets[at]; i < snap.view().image_offsets[at + 1]; ++i)
          n.images.push_back(ContainerImage{{snap.image_name(snap.view().image_ids[i])}, 1});
      }
      snap.update_node(n);
    } else if (op < 93) {
      snap.add_node(random_node(rng, "node-" + std::to_string(node_seq++)));
    } else if (snap.num_nodes() > 2) {
      snap.remove_node(snap.node_name(rng.below(snap.num_nodes())));
    }
    for (int k = 0; k < 2; ++k) {
      const Pod pending = random_pod(rng, "pending-" + std::to_string(step * 2 + k));
      intern_pod_resources(snap, pending);
      PodQuery q = prepare_pod_query(pending, snap, plan, TieBreak::First, 0);
      req.candidates = q.candidates ? &*q.candidates : nullptr;
      cpu->evaluate(snap, q, req, want);
      cuda->evaluate(snap, q, req, got);
      ASSERT_EQ(want.chosen, got.chosen) << "step " << step;
      ASSERT_EQ(want.num_feasible, got.num_feasible) << "step " << step;
      ASSERT_EQ(want.sorted_nodes, got.sorted_nodes) << "step " << step;
      ASSERT_EQ(want.sorted_keys, got.sorted_keys) << "step " << step;
      ASSERT_EQ(want.raw_scores, got.raw_scores) << "step " << step;
      ASSERT_EQ(want.rejections.counts, got.rejections.counts) << "step " << step;
    }
  }
}

// Random sequences of pod and node changes on random clusters: after every
// step the snapshot decodes as a fresh build of the same nodes and pods, its
// node-tree order is upstream's, and a mirror synced by MirrorSync holds the
// snapshot's exact bytes.
TEST(SnapshotMutations, RandomSequencesEqualAFreshBuild) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Rng rng(seed * 7919);
    uint32_t pod_seq = 0, node_seq = 1000;
    Model m = random_model(rng, 3 + rng.below(30), rng.below(120), pod_seq);
    Snapshot snap = m.fresh();
    HostMirror mirror;
    mirror.update(snap);
    size_t counts[8] = {};
    for (int step = 0; step < 250; ++step) {
      const uint32_t op = rng.below(100);
      std::string what;
      if (op < 35 && !m.nodes.empty()) {  // add a pod
        const uint32_t n = rng.below(static_cast<uint32_t>(m.nodes.size()));
        Pod p = random_pod(rng, "pod-" + std::to_string(pod_seq++));
        const uint32_t id = snap.add_pod(p, n);
        EXPECT_EQ(snap.pod_node(id), n);
        p.node_name = m.nodes[n].name;
        m.pods[n].push_back(p);
        what = "add_pod " + p.key() + " on " + m.nodes[n].name;
        ++counts[0];
      } else if (op < 60 && !m.all_pods().empty()) {  // remove a pod
        std::vector<std::pair<uint32_t, uint32_t>> live;
        for (uint32_t n = 0; n < m.pods.size(); ++n)
          for (uint32_t j = 0; j < m.pods[n].size(); ++j) live.emplace_back(n, j);
        const auto [n, j] = live[rng.below(static_cast<uint32_t>(live.size()))];
        const Pod gone = m.pods[n][j];
        m.pods[n].erase(m.pods[n].begin() + j);
        if (rng.chance(0.5)) {
          ASSERT_TRUE(snap.remove_pod(gone.namespace_name, gone.name).has_value());
        } else {
          snap.remove_pod(snap.find_pod(gone.namespace_name, gone.name));
        }
        what = "remove_pod " + gone.key();
        ++counts[1];
      } else if (op < 75 && !m.all_pods().empty()) {  // update a pod, maybe onto another node
        std::vector<std::pair<uint32_t, uint32_t>> live;
        for (uint32_t n = 0; n < m.pods.size(); ++n)
          for (uint32_t j = 0; j < m.pods[n].size(); ++j) live.emplace_back(n, j);
        const auto [n, j] = live[rng.below(static_cast<uint32_t>(live.size()))];
        Pod changed = random_pod(rng, m.pods[n][j].name);
        changed.namespace_name = m.pods[n][j].namespace_name;
        uint32_t target = n;
        if (rng.chance(0.3)) {
          target = rng.below(static_cast<uint32_t>(m.nodes.size()));
          changed.node_name = m.nodes[target].name;
        }
        snap.update_pod(changed);
        m.pods[n].erase(m.pods[n].begin() + j);
        changed.node_name = m.nodes[target].name;
        m.pods[target].push_back(changed);
        what = "update_pod " + changed.key();
        ++counts[2];
      } else if (op < 82) {  // add a node
        const Node n = random_node(rng, "node-" + std::to_string(node_seq++));
        snap.add_node(n);
        m.nodes.push_back(n);
        m.pods.emplace_back();
        m.tree_add(n);
        what = "add_node " + n.name;
        ++counts[3];
      } else if (op < 92 && !m.nodes.empty()) {  // update a node: numbers only, or everything
        const uint32_t i = rng.below(static_cast<uint32_t>(m.nodes.size()));
        Node n = m.nodes[i];
        if (rng.chance(0.5)) {
          n.allocatable["cpu"] = 1000 * (1 + rng.below(16));
          n.unschedulable = rng.chance(0.5);
          if (rng.chance(0.2)) n.allocatable["example.com/fpga"] = 2;  // a new resource
        } else {
          n = random_node(rng, n.name);
        }
        snap.update_node(n);
        if (upstream_zone_key(n.labels) != upstream_zone_key(m.nodes[i].labels)) {
          m.tree_remove(m.nodes[i]);
          m.tree_add(n);
        }
        m.nodes[i] = n;
        what = "update_node " + n.name;
        ++counts[4];
      } else if (!m.nodes.empty()) {  // remove a node and its pods
        const uint32_t i = rng.below(static_cast<uint32_t>(m.nodes.size()));
        const std::vector<Pod> dropped = snap.remove_node(m.nodes[i].name);
        EXPECT_EQ(dropped.size(), m.pods[i].size());
        m.tree_remove(m.nodes[i]);
        what = "remove_node " + m.nodes[i].name;
        m.nodes.erase(m.nodes.begin() + i);
        m.pods.erase(m.pods.begin() + i);
        ++counts[5];
      } else {
        continue;
      }
      // Now and then the dead strings go (a removed pod's or node's own):
      // the snapshot still decodes as the fresh build, and the mirror follows.
      if (step % 7 == 3 && snap.compact()) {
        what += ", then compact";
        ++counts[6];
      }
      const std::string diff = first_difference(decode(m.fresh()), decode(snap));
      ASSERT_EQ(diff, "") << "step " << step << ": " << what;
      std::vector<std::string> tree;
      for (uint32_t n : snap.tree_order()) tree.push_back(snap.node_name(n));
      ASSERT_EQ(tree, m.tree()) << "step " << step << ": " << what;
      if (rng.chance(0.5)) {
        mirror.update(snap);
        ASSERT_EQ(mirror.first_difference(snap), "") << "step " << step << ": " << what;
      }
    }
    mirror.update(snap);
    EXPECT_EQ(mirror.first_difference(snap), "");
    std::printf(
        "[ mutations ] seed %llu: %zu add_pod, %zu remove_pod, %zu update_pod, %zu add_node, %zu update_node, "
        "%zu remove_node, %zu compactions; mirror: %zu full, %zu whole columns, %zu tails, %zu ranges\n",
        static_cast<unsigned long long>(seed), counts[0], counts[1], counts[2], counts[3], counts[4], counts[5],
        counts[6], mirror.everything, mirror.whole, mirror.tails, mirror.ranges);
  }
}


LabelSelector selector(StringMap match_labels, std::vector<LabelSelectorRequirement> exprs = {}) {
  LabelSelector s;
  s.match_labels = std::move(match_labels);
  s.match_expressions = std::move(exprs);
  return s;
}

TEST(SnapshotTopologyCounters, RegistrationIsCanonicalAndCountsRunningNonTerminatingPods) {
  Pod a = testutil::running("a", "n1", {{"cpu", 100}});
  a.labels = {{"app", "web"}};
  Pod b = testutil::running("b", "n1", {{"cpu", 100}});
  b.labels = {{"app", "web"}};
  b.deleting = true;  // terminating pods are not counted, as upstream's counting skips them
  Pod c = testutil::running("c", "n2", {{"cpu", 100}});
  c.labels = {{"app", "web"}};
  Pod d = testutil::running("d", "n2", {{"cpu", 100}});
  d.labels = {{"app", "web"}};
  d.namespace_name = "other";
  Snapshot s = Snapshot::build({make_node("n1", 4000, 1 << 30, 10), make_node("n2", 4000, 1 << 30, 10)}, {a, b, c, d});
  EXPECT_EQ(s.num_topology_matchers(), 0u);
  EXPECT_EQ(s.find_topology_matcher("default", selector({{"app", "web"}})), -1);
  const uint64_t version = s.structure_version();
  const uint32_t m = s.topology_matcher("default", selector({{"app", "web"}}));
  EXPECT_EQ(s.structure_version(), version);  // a new row, not a structural change
  EXPECT_EQ(s.view().topology_count(m, 0), 1);
  EXPECT_EQ(s.view().topology_count(m, 1), 1);
  // The same selector written as In: the same matcher.
  EXPECT_EQ(s.topology_matcher("default", selector({}, {{"app", "In", {"web", "web"}}})), m);
  EXPECT_EQ(s.find_topology_matcher("default", selector({}, {{"app", "In", {"web"}}})), static_cast<int32_t>(m));
  // Strings no pod has yet are interned: a pod added later with them counts.
  const uint32_t later = s.topology_matcher("fresh-ns", selector({{"team", "new"}}));
  Pod e = make_pod("e");
  e.namespace_name = "fresh-ns";
  e.labels = {{"team", "new"}};
  s.add_pod(e, 1);
  EXPECT_EQ(s.view().topology_count(later, 1), 1);
  EXPECT_EQ(s.view().topology_count(later, 0), 0);
  EXPECT_THROW(s.topology_matcher("default", selector({}, {{"app", "Gt", {"1"}}})), InputError);
}

// One random mutation of the model and the snapshot alike, for `op` drawn
// below 100: a pod added (most often), updated or removed, a node added,
// updated or removed.
void mutate(Rng& rng, uint32_t op, Model& m, Snapshot& snap, uint32_t& pod_seq, uint32_t& node_seq) {
  if (op < 45 && !m.nodes.empty()) {
    const uint32_t n = rng.below(static_cast<uint32_t>(m.nodes.size()));
    Pod p = random_pod(rng, "pod-" + std::to_string(pod_seq++), false);
    snap.add_pod(p, n);
    p.node_name = m.nodes[n].name;
    m.pods[n].push_back(p);
  } else if (op < 70 && !m.all_pods().empty()) {
    std::vector<std::pair<uint32_t, uint32_t>> live;
    for (uint32_t n = 0; n < m.pods.size(); ++n)
      for (uint32_t j = 0; j < m.pods[n].size(); ++j) live.emplace_back(n, j);
    const auto [n, j] = live[rng.below(static_cast<uint32_t>(live.size()))];
    if (rng.chance(0.5)) {  // update (labels, namespace kept, maybe another node)
      Pod changed = random_pod(rng, m.pods[n][j].name, false);
      changed.namespace_name = m.pods[n][j].namespace_name;
      const uint32_t target = rng.below(static_cast<uint32_t>(m.nodes.size()));
      changed.node_name = m.nodes[target].name;
      snap.update_pod(changed);
      m.pods[n].erase(m.pods[n].begin() + j);
      m.pods[target].push_back(changed);
    } else {
      snap.remove_pod(m.pods[n][j].namespace_name, m.pods[n][j].name);
      m.pods[n].erase(m.pods[n].begin() + j);
    }
  } else if (op < 80) {
    const Node n = random_node(rng, "node-" + std::to_string(node_seq++));
    snap.add_node(n);
    m.nodes.push_back(n);
    m.pods.emplace_back();
  } else if (op < 90 && !m.nodes.empty()) {
    const uint32_t i = rng.below(static_cast<uint32_t>(m.nodes.size()));
    const Node n = random_node(rng, m.nodes[i].name);
    snap.update_node(n);
    m.nodes[i] = n;
  } else if (!m.nodes.empty()) {
    const uint32_t i = rng.below(static_cast<uint32_t>(m.nodes.size()));
    snap.remove_node(m.nodes[i].name);
    m.nodes.erase(m.nodes.begin() + i);
    m.pods.erase(m.pods.begin() + i);
  }
}

TEST(SnapshotTopologyCounters, RandomMutationsEqualARecount) {
  const std::vector<std::pair<std::string, LabelSelector>> wanted = {
      {"default", selector({{"app", "app-1"}})},
      {"team-a", selector({}, {{"app", "In", {"app-0", "app-2"}}})},
      {"default", selector({}, {{"pod-template-hash", "Exists", {}}, {"app", "NotIn", {"app-3"}}})},
      {"kube-system", selector({}, {{"app", "DoesNotExist", {}}})},
      {"default", LabelSelector{}},
      {"nowhere", selector({{"app", "app-1"}})},
  };
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Rng rng(seed * 104729);
    uint32_t pod_seq = 0, node_seq = 1000;
    Model m = random_model(rng, 2 + rng.below(20), rng.below(100), pod_seq);
    Snapshot snap = m.fresh();
    HostMirror mirror;
    mirror.update(snap);
    std::vector<std::pair<uint32_t, size_t>> registered;  // row, index into wanted
    for (int step = 0; step < 200; ++step) {
      const uint32_t op = rng.below(100);
      if (op < 8 && registered.size() < wanted.size()) {
        const size_t w = registered.size();
        registered.emplace_back(snap.topology_matcher(wanted[w].first, wanted[w].second), w);
      } else {
        mutate(rng, op, m, snap, pod_seq, node_seq);
      }
      const SnapshotView v = snap.view();
      ASSERT_EQ(v.num_topology_matchers, registered.size());
      for (const auto& [row, w] : registered)
        for (uint32_t n = 0; n < m.nodes.size(); ++n) {
          int32_t want = 0;
          for (const Pod& p : m.pods[n])
            want += p.namespace_name == wanted[w].first && !p.deleting && selector_matches(wanted[w].second, p.labels);
          ASSERT_EQ(v.topology_count(row, n), want) << "step " << step << " matcher " << w << " node " << n;
        }
      if (rng.chance(0.3)) {
        mirror.update(snap);
        ASSERT_EQ(mirror.first_difference(snap), "") << "step " << step;
      }
    }
  }
}

// Conjunctions of clauses (InterPodAffinity's required affinity terms, with
// repeats), registered in batches with or without terminating pods, filed
// under every kind of requirement: the counters equal a recount through
// every kind of mutation.
TEST(SnapshotTopologyCounters, BatchesOfConjunctionsEqualARecount) {
  using Clause = Snapshot::PodMatchClause;
  const std::vector<Clause> pool = {
      {false, {"default"}, selector({{"app", "app-1"}})},
      {false, {"default", "team-a"}, selector({}, {{"app", "In", {"app-0", "app-2", "app-4"}}})},
      {true, {}, selector({}, {{"pod-template-hash", "Exists", {}}})},
      {false, {"team-a"}, selector({}, {{"app", "NotIn", {"app-3"}}})},
      {true, {}, selector({}, {{"app", "DoesNotExist", {}}})},
      {false, {"kube-system", "default"}, LabelSelector{}},
      {true, {}, selector({{"app", "app-2"}}, {{"pod-template-hash", "In", {"1001", "1002"}}})},
  };
  const auto counts = [](const std::vector<Clause>& all_of, bool terminating, const Pod& p) {
    if (p.deleting && !terminating) return false;
    for (const Clause& c : all_of) {
      const bool ns = c.all_namespaces ||
                      std::find(c.namespaces.begin(), c.namespaces.end(), p.namespace_name) != c.namespaces.end();
      if (!ns || !selector_matches(c.selector, p.labels)) return false;
    }
    return true;
  };
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Rng rng(seed * 7907);
    uint32_t pod_seq = 0, node_seq = 1000;
    Model m = random_model(rng, 2 + rng.below(20), rng.below(100), pod_seq);
    Snapshot snap = m.fresh();
    struct Registered {
      uint32_t row;
      std::vector<Clause> all_of;
      bool terminating;
    };
    std::vector<Registered> registered;
    for (int step = 0; step < 150; ++step) {
      const uint32_t op = rng.below(100);
      if (op < 10) {
        const bool terminating = rng.chance(0.5);
        std::vector<std::vector<Clause>> batch(1 + rng.below(6));
        for (auto& all_of : batch)
          for (uint32_t k = 1 + rng.below(3); k > 0; --k) all_of.push_back(pool[rng.below(static_cast<uint32_t>(pool.size()))]);
        const std::vector<uint32_t> rows = snap.topology_matchers(batch, terminating);
        ASSERT_EQ(rows.size(), batch.size());
        for (size_t i = 0; i < batch.size(); ++i) {
          ASSERT_EQ(snap.find_topology_matcher(batch[i], terminating), static_cast<int32_t>(rows[i]));
          registered.push_back({rows[i], batch[i], terminating});
        }
      } else {
        mutate(rng, op, m, snap, pod_seq, node_seq);
      }
      const SnapshotView v = snap.view();
      for (const Registered& r : registered)
        for (uint32_t n = 0; n < m.nodes.size(); ++n) {
          int32_t want = 0;
          for (const Pod& p : m.pods[n]) want += counts(r.all_of, r.terminating, p) ? 1 : 0;
          ASSERT_EQ(v.topology_count(r.row, n), want) << "step " << step << " row " << r.row << " node " << n;
        }
    }
  }
}

// Issue 20: a pod with 10,000 terms registered 10,000 matchers, each found by
// comparing it with every matcher before it, counted by its own walk over
// every pod, and then checked against every later placement. The work now
// grows with the matchers and pods, not with their product.
TEST(SnapshotTopologyCounters, ThousandsOfMatchersCostWorkInTheirNumberNotItsSquare) {
  std::vector<Node> nodes;
  for (int i = 0; i < 10; ++i) nodes.push_back(make_node("n" + std::to_string(i), 64000, int64_t(256) << 30, 200));
  std::vector<Pod> pods;
  for (int i = 0; i < 1000; ++i) {
    Pod p = testutil::running("r" + std::to_string(i), "n" + std::to_string(i % 10), {{"cpu", 10}});
    p.labels = {{"app", "a" + std::to_string(i % 500)}, {"tier", "web"}};
    pods.push_back(p);
  }
  Snapshot s = Snapshot::build(nodes, pods);
  using Clause = Snapshot::PodMatchClause;
  std::vector<std::vector<Clause>> batch;
  for (int j = 0; j < 10000; ++j)
    batch.push_back({Clause{false, {"default"}, selector({{"app", "a" + std::to_string(j)}})}});

  const Snapshot::MatcherWork before = s.matcher_work();
  const std::vector<uint32_t> rows = s.topology_matchers(batch, false);
  ASSERT_EQ(s.num_topology_matchers(), 10000u);
  // One walk over the pods, each checked against the one new matcher filed
  // under its app label (before: 10,000 walks, 10,000,000 checks), and no
  // comparison but a hash collision's (before: 50 million).
  EXPECT_LE(s.matcher_work().slot_checks - before.slot_checks, 1000u);
  EXPECT_LE(s.matcher_work().compares - before.compares, 10u);
  for (const int j : {0, 1, 499, 500, 9999}) {
    int32_t total = 0;
    for (uint32_t n = 0; n < s.num_nodes(); ++n) total += s.view().topology_count(rows[j], n);
    EXPECT_EQ(total, j < 500 ? 2 : 0) << "matcher " << j;
  }
  // Registered again: each found with about one comparison, nothing counted.
  const Snapshot::MatcherWork again = s.matcher_work();
  EXPECT_EQ(s.topology_matchers(batch, false), rows);
  EXPECT_LE(s.matcher_work().compares - again.compares, 10010u);
  EXPECT_EQ(s.matcher_work().slot_checks, again.slot_checks);
  EXPECT_EQ(s.find_topology_matcher("default", selector({{"app", "a7"}})), static_cast<int32_t>(rows[7]));
  // A conjunction counts a repeated clause once: the same matcher.
  EXPECT_EQ(s.topology_matcher({batch[5][0], batch[5][0]}, false), rows[5]);

  // A placed pod is checked against the matchers filed under its labels, not
  // against all 10,000.
  const uint64_t checks = s.matcher_work().slot_checks;
  Pod extra = make_pod("extra");
  extra.labels = {{"app", "a42"}, {"tier", "web"}};
  s.add_pod(extra, 3);
  EXPECT_EQ(s.matcher_work().slot_checks - checks, 1u);
  EXPECT_EQ(s.view().topology_count(rows[42], 3), 1);  // r42 and r542 run on n2
  EXPECT_EQ(s.view().topology_count(rows[42], 2), 2);
}

TEST(SnapshotMutations, AGeneratedClusterEmptiedAndRefilledEqualsTheBuild) {
  const Cluster c = generated(200, 500, 31);
  Snapshot snap = Snapshot::build(c.nodes, c.running_pods);
  const Decoded original = decode(snap);
  expect_every_column_decoded(snap);
  HostMirror mirror;
  mirror.update(snap);
  // Remove every pod, most recently built first... in a shuffled order.
  std::vector<uint32_t> ids(snap.pod_id_bound());
  for (uint32_t i = 0; i < ids.size(); ++i) ids[i] = i;
  std::shuffle(ids.begin(), ids.end(), std::mt19937_64(3));
  std::vector<Pod> removed;
  for (uint32_t id : ids) removed.push_back(snap.remove_pod(id));
  EXPECT_EQ(snap.num_pods(), 0u);
  EXPECT_EQ(first_difference(decode(Snapshot::build(c.nodes, {})), decode(snap)), "");
  mirror.update(snap);
  EXPECT_EQ(mirror.first_difference(snap), "");
  // Back in the original order: the build again.
  std::vector<Pod> in_order = c.running_pods;
  for (const Pod& p : in_order) snap.add_pod(p, static_cast<uint32_t>(snap.node_index(p.node_name)));
  EXPECT_EQ(first_difference(original, decode(snap)), "");
  mirror.update(snap);
  EXPECT_EQ(mirror.first_difference(snap), "");
}

// ---- releasing what nothing references -------------------------------------------

// The existing pods' term groups some pod holds, as text (order free): a
// compacted snapshot's groups must be a fresh build's.
std::vector<std::string> describe_term_groups(const Snapshot& s) {
  std::vector<std::string> out;
  for (const Snapshot::ExistingAffinityTerm& g : s.existing_affinity_terms()) {
    if (g.occurrences == 0) continue;
    std::string d = std::to_string(g.kind) + "|" + std::to_string(g.weight) + "|" + g.topology_key + "|" +
                    (g.key_id == kNoId ? "<no key>" : s.strings().str(g.key_id)) + "|";
    for (const auto& ns : g.namespaces) d += ns + ",";
    d += "|";
    if (g.selector) {
      for (const auto& [k, v] : g.selector->match_labels) d += k + "=" + v + ",";
      for (const auto& r : g.selector->match_expressions) d += r.key + " " + r.op + ",";
    }
    std::vector<std::string> domains;
    for (const auto& [v, c] : g.domains) domains.push_back(s.strings().str(v) + "=" + std::to_string(c));
    d += "|" + join(domains, true) + "|" + std::to_string(g.occurrences);
    if (!g.by_rank.empty()) {
      // The rank vector agrees with the domains.
      for (const auto& [v, c] : g.domains)
        if (g.by_rank[static_cast<size_t>(s.dense_label_rank_of(g.dense_slot, v))] != c) d += " <by_rank differs>";
    }
    out.push_back(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A matcher's per-domain sums recounted from its counters and the dense column.
std::string domain_sums_difference(const Snapshot& s, uint32_t row, int32_t key) {
  const std::vector<int64_t>* sums = s.topology_domain_sums(row, key);
  if (!sums) return "";
  const int32_t slot = s.dense_label_slot(key);
  std::vector<int64_t> want(s.dense_label_values(slot).size() + 1, 0);
  const SnapshotView v = s.view();
  for (uint32_t n = 0; n < s.num_nodes(); ++n) {
    const int32_t r = v.dense_rank(slot, n);
    want[r < 0 ? want.size() - 1 : static_cast<size_t>(r)] += v.topology_count(row, n);
  }
  return *sums == want ? "" : "domain sums of row " + std::to_string(row) + " differ from a recount";
}

// Random mutations with pods and matchers whose strings keep changing (a
// new pod-template-hash per "rollout", as Deployments bring), compacted now
// and then: a compaction changes no column but the ids and the dead
// matchers' rows (the snapshot decodes as before it, and as a fresh build),
// keeps every live matcher, per-domain sum and term group with the same
// counts, drops exactly the dead ones, is structural (the mirror follows),
// and the counters stay right through later mutations.
TEST(SnapshotRelease, CompactionDropsOnlyTheDeadAndChangesNothingElse) {
  using Clause = Snapshot::PodMatchClause;
  uint64_t compactions = 0, dropped_strings = 0, dropped_matchers = 0, dropped_sums = 0, dropped_groups = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Rng rng(seed * 6151);
    uint32_t pod_seq = 0, node_seq = 1000, rollout = 0;
    Model m = random_model(rng, 3 + rng.below(20), rng.below(80), pod_seq);
    Snapshot snap = m.fresh();
    HostMirror mirror;
    mirror.update(snap);
    // Matchers asked for so far: (clauses, count terminating pods).
    std::vector<std::pair<std::vector<Clause>, bool>> asked;
    const auto hash_of = [](uint32_t k) { return "r" + std::to_string(k); };
    // A pod of the current rollout: the rollout's hash as a label, and a
    // preferred anti-affinity term selecting it (as matchLabelKeys writes).
    const auto rollout_pod = [&]() {
      Pod p = random_pod(rng, "pod-" + std::to_string(pod_seq++), false);
      p.labels["pod-template-hash"] = hash_of(rollout);
      if (rng.chance(0.5)) {
        p.affinity = Affinity{};
        p.affinity->pod_anti_affinity = PodAffinity{};
        WeightedPodAffinityTerm w;
        w.weight = 1 + static_cast<int32_t>(rng.below(100));
        w.term.topology_key = rng.chance(0.5) ? "kubernetes.io/hostname" : "topology.kubernetes.io/zone";
        w.term.label_selector = selector({{"pod-template-hash", hash_of(rollout)}});
        p.affinity->pod_anti_affinity->preferred.push_back(w);
      }
      return p;
    };
    const int32_t zone_key_known = snap.string_id("topology.kubernetes.io/zone");
    (void)zone_key_known;
    for (int step = 0; step < 160; ++step) {
      const uint32_t op = rng.below(100);
      std::string what;
      if (op < 10) {
        ++rollout;
        what = "new rollout";
      } else if (op < 30 && !m.nodes.empty()) {
        const uint32_t n = rng.below(static_cast<uint32_t>(m.nodes.size()));
        Pod p = rollout_pod();
        snap.add_pod(p, n);
        p.node_name = m.nodes[n].name;
        m.pods[n].push_back(p);
        what = "add rollout pod";
      } else if (op < 42) {
        // Matchers for the current rollout's and older hashes, some with
        // per-domain sums over the zone key.
        std::vector<std::vector<Clause>> batch;
        const bool terminating = rng.chance(0.5);
        for (uint32_t k = 1 + rng.below(3); k > 0; --k) {
          const uint32_t r = rollout - std::min<uint32_t>(rollout, rng.below(3));
          std::vector<Clause> all_of = {
              Clause{false, {"default", "team-a"}, selector({{"pod-template-hash", hash_of(r)}})}};
          if (rng.chance(0.3)) all_of.push_back(Clause{true, {}, selector({}, {{"app", "Exists", {}}})});
          if (rng.chance(0.2))
            all_of = {Clause{true, {}, selector({}, {{"app", "NotIn", {"app-" + std::to_string(r % 7)}}})}};
          batch.push_back(all_of);
          asked.emplace_back(all_of, terminating);
        }
        const std::vector<uint32_t> rows = snap.topology_matchers(batch, terminating);
        for (const uint32_t row : rows)
          if (rng.chance(0.5)) snap.register_topology_domain_sums(row, snap.string_id("topology.kubernetes.io/zone"));
        what = "register matchers";
      } else if (op < 50 && !m.nodes.empty()) {
        // A pod of an old rollout leaves (its strings may die with it).
        std::vector<std::pair<uint32_t, uint32_t>> live;
        for (uint32_t n = 0; n < m.pods.size(); ++n)
          for (uint32_t j = 0; j < m.pods[n].size(); ++j) live.emplace_back(n, j);
        if (live.empty()) continue;
        const auto [n, j] = live[rng.below(static_cast<uint32_t>(live.size()))];
        snap.remove_pod(m.pods[n][j].namespace_name, m.pods[n][j].name);
        m.pods[n].erase(m.pods[n].begin() + j);
        what = "remove a pod";
      } else {
        mutate(rng, op, m, snap, pod_seq, node_seq);
        what = "mutation " + std::to_string(op);
      }

      if (rng.chance(0.25)) {
        Decoded before = decode(snap);
        before.erase("topology_counts");  // the dead rows go
        const std::vector<std::string> groups_before = describe_term_groups(snap);
        const Snapshot::Census c0 = snap.census();
        const uint64_t version = snap.structure_version();
        const bool any_dead =
            c0.live_strings < c0.strings || c0.live_matchers < c0.matchers || c0.live_term_groups < c0.term_groups;
        ASSERT_EQ(snap.compact(), any_dead) << "step " << step;
        ASSERT_EQ(snap.structure_version() != version, any_dead) << "step " << step;
        Decoded after = decode(snap);
        after.erase("topology_counts");
        ASSERT_EQ(first_difference(before, after), "") << "step " << step << ": " << what;
        ASSERT_EQ(describe_term_groups(snap), groups_before) << "step " << step;
        const Snapshot::Census c1 = snap.census();
        EXPECT_EQ(c1.strings, c0.live_strings);
        EXPECT_EQ(c1.live_strings, c1.strings);
        EXPECT_EQ(c1.matchers, c0.live_matchers);
        EXPECT_EQ(c1.live_matchers, c1.matchers);
        EXPECT_EQ(c1.domain_sums, c0.live_domain_sums);
        EXPECT_EQ(c1.live_domain_sums, c1.domain_sums);
        EXPECT_EQ(c1.term_groups, c0.live_term_groups);
        EXPECT_EQ(c1.live_term_groups, c1.term_groups);
        EXPECT_FALSE(snap.compact());  // nothing left to drop
        if (any_dead) ++compactions;
        dropped_strings += c0.strings - c0.live_strings;
        dropped_matchers += c0.matchers - c0.live_matchers;
        dropped_sums += c0.domain_sums - c0.live_domain_sums;
        dropped_groups += c0.term_groups - c0.live_term_groups;
        mirror.update(snap);
        ASSERT_EQ(mirror.first_difference(snap), "") << "step " << step;
      }

      // Every matcher asked for: registered with its pods' counts, or gone
      // when a compaction found it counting none; registered again (as a
      // pod's intern() does), it counts from the pods as they are now.
      for (const auto& [all_of, terminating] : asked) {
        int32_t total = 0;
        std::vector<int32_t> want(m.nodes.size(), 0);
        for (uint32_t n = 0; n < m.nodes.size(); ++n)
          for (const Pod& p : m.pods[n]) {
            if (p.deleting && !terminating) continue;
            bool all = true;
            for (const Clause& cl : all_of) {
              const bool ns = cl.all_namespaces || std::find(cl.namespaces.begin(), cl.namespaces.end(),
                                                             p.namespace_name) != cl.namespaces.end();
              all = all && ns && selector_matches(cl.selector, p.labels);
            }
            want[n] += all ? 1 : 0;
            total += all ? 1 : 0;
          }
        int32_t row = snap.find_topology_matcher(all_of, terminating);
        if (row < 0) row = static_cast<int32_t>(snap.topology_matcher(all_of, terminating));
        for (uint32_t n = 0; n < m.nodes.size(); ++n) {
          ASSERT_EQ(snap.view().topology_count(static_cast<uint32_t>(row), n), want[n]) << "step " << step;
        }
        ASSERT_EQ(
            domain_sums_difference(snap, static_cast<uint32_t>(row), snap.string_id("topology.kubernetes.io/zone")), "")
            << "step " << step;
        (void)total;
      }
      // The term groups some pod holds are a fresh build's.
      ASSERT_EQ(describe_term_groups(snap), describe_term_groups(m.fresh())) << "step " << step << ": " << what;
    }
  }
  std::printf("[ release ] %llu compactions dropped %llu strings, %llu matchers, %llu domain sums, %llu term groups\n",
              static_cast<unsigned long long>(compactions), static_cast<unsigned long long>(dropped_strings),
              static_cast<unsigned long long>(dropped_matchers), static_cast<unsigned long long>(dropped_sums),
              static_cast<unsigned long long>(dropped_groups));
  EXPECT_GT(compactions, 20u);
  EXPECT_GT(dropped_strings, 0u);
  EXPECT_GT(dropped_matchers, 0u);
  EXPECT_GT(dropped_sums, 0u);
  EXPECT_GT(dropped_groups, 0u);
}

// The amortized rule: maybe_compact checks only after enough growth, and
// compacts once the dead reach the policy's share; with {0, 0} after every
// call that leaves anything dead. A mutation log that grows without a
// structural change starts a new structure version past its bound.
TEST(SnapshotRelease, MaybeCompactIsAmortizedAndBoundsTheLog) {
  std::vector<Node> nodes;
  for (int i = 0; i < 4; ++i) nodes.push_back(make_node("n" + std::to_string(i), 64000, int64_t(64) << 30, 500));
  Snapshot s = Snapshot::build(nodes, {});
  const CompactionPolicy policy{0.5, 40};
  s.maybe_compact(policy);  // the first call takes a census
  const size_t base = s.census().live_strings;
  // Pods with a string of their own each, added and removed: the dead
  // strings pile up to the policy's bound, no further.
  size_t most = 0;
  for (int i = 0; i < 2000; ++i) {
    Pod p = make_pod("p" + std::to_string(i));
    p.labels["statefulset.kubernetes.io/pod-name"] = p.name;
    const uint32_t id = s.add_pod(p, static_cast<uint32_t>(i % 4));
    s.maybe_compact(policy);
    s.remove_pod(id);
    s.maybe_compact(policy);
    most = std::max(most, s.strings().size());
  }
  // The live strings, one pod's, and at most the bound and a quarter dead.
  EXPECT_LE(most, base + 2 + 40 + 40 / 4);
  EXPECT_GT(s.compactions(), 2000u / 100);
  EXPECT_LT(s.compactions(), 2000u / 20);  // amortized: not one per pod
  // {0, 0}: nothing dead after any call.
  const CompactionPolicy eager{0, 0};
  for (int i = 0; i < 20; ++i) {
    Pod p = make_pod("q" + std::to_string(i));
    p.labels["statefulset.kubernetes.io/pod-name"] = p.name;
    const uint32_t id = s.add_pod(p, 0);
    s.remove_pod(id);
    s.maybe_compact(eager);
    const Snapshot::Census c = s.census();
    EXPECT_EQ(c.strings, c.live_strings);
  }
  // The log: bounded by max(2^20, 8 x nodes) entries.
  Pod p = make_pod("churn");
  const uint64_t version = s.structure_version();
  size_t longest = 0;
  for (int i = 0; i < (1 << 19) + 10; ++i) {
    s.remove_pod(s.add_pod(p, 1));
    longest = std::max(longest, s.mutation_log().size());
    s.maybe_compact(policy);
  }
  EXPECT_NE(s.structure_version(), version);
  EXPECT_LE(longest, (size_t(1) << 20) + 2);
}


// `count` nodes of 8 cpu and 16 GiB, each its own hostname value.
std::vector<Node> hostname_nodes(int count) {
  std::vector<Node> nodes;
  for (int i = 0; i < count; ++i) {
    Node n = make_node("n" + std::to_string(i), 8000, int64_t(16) << 30, 110);
    n.labels["kubernetes.io/hostname"] = n.name;
    nodes.push_back(std::move(n));
  }
  return nodes;
}

// Issue 24, item 4: a ReplicaSet's pods kept apart per node read the nodes'
// counters (a row of term_counts) from the set's first pod, not only once
// it holds an eighth of the hostname values; a row per sparse group while
// under the budget, the others in their key's table. Through adds, removals
// and the by_rank thresholds the rows decode as a fresh build's and a
// pod added then removed leaves every column as it was.
TEST(SnapshotTermRows, SparseHostnameGroupsReadRowsFromTheirFirstPodWithinTheBudget) {
  const std::vector<Node> nodes = hostname_nodes(40);
  // A pod of group `ns`: required anti-affinity on the hostname, selecting
  // app=x in namespace ns (a namespace list per group).
  const auto member = [](const std::string& name, const std::string& ns) {
    Pod p = testutil::make_pod(name);
    p.labels["app"] = "x";
    PodAffinityTerm t;
    t.topology_key = "kubernetes.io/hostname";
    t.label_selector = LabelSelector{};
    t.label_selector->match_labels["app"] = "x";
    t.namespaces = {ns};
    p.affinity = Affinity{};
    p.affinity->pod_anti_affinity = PodAffinity{};
    p.affinity->pod_anti_affinity->required.push_back(t);
    return p;
  };
  Snapshot snap = Snapshot::build(nodes, {});
  EXPECT_EQ(snap.sparse_term_row_budget(), 256u) << "16 MiB of 40-node rows, at most 256";
  snap.limit_sparse_term_rows(2);
  std::vector<Pod> placed;
  const auto row_of = [&](const std::string& ns) {
    for (const Snapshot::ExistingAffinityTerm& g : snap.existing_affinity_terms())
      if (g.namespaces == std::vector<std::string>{ns} && g.occurrences > 0) return g.node_row;
    return -2;  // no such group
  };
  const auto add = [&](const std::string& ns, uint32_t node) {
    Pod p = member(ns + "-" + std::to_string(placed.size()), ns);
    snap.add_pod(p, node);
    p.node_name = nodes[node].name;
    placed.push_back(p);
  };
  const auto agrees_with_a_build = [&](const std::string& when) {
    Snapshot fresh = Snapshot::build(nodes, placed);
    EXPECT_EQ(first_difference(decode(fresh), decode(snap)), "") << when;
  };
  add("a", 0);
  EXPECT_GE(row_of("a"), 0) << "the first pod of a group gets its row";
  EXPECT_EQ(snap.view().term_count(static_cast<uint32_t>(row_of("a")), 0), 1);
  add("b", 1);
  add("c", 2);
  EXPECT_GE(row_of("b"), 0);
  EXPECT_EQ(row_of("c"), -1) << "past the budget of two sparse rows";
  agrees_with_a_build("three groups");
  // a reaches an eighth of the 40 values (5 nodes): by_rank, and its row no
  // longer counts against the budget, so the next new group gets one.
  for (uint32_t n = 3; n < 7; ++n) add("a", n);
  add("d", 7);
  EXPECT_GE(row_of("d"), 0);
  EXPECT_EQ(row_of("c"), -1);
  agrees_with_a_build("a dense");
  // A pod added then removed: every column as it was.
  const Decoded before = decode(snap);
  const size_t rows_before = snap.view().num_term_rows;
  const uint32_t id = snap.add_pod(member("e-0", "e"), 8);
  EXPECT_EQ(snap.view().num_term_rows, rows_before + 0) << "over the budget: e stays in the table";
  snap.remove_pod(id);
  EXPECT_EQ(first_difference(before, decode(snap)), "");
  const auto remove = [&](const std::string& name) {
    ASSERT_TRUE(snap.remove_pod("default", name).has_value()) << name;
    placed.erase(std::find_if(placed.begin(), placed.end(), [&](const Pod& p) { return p.name == name; }));
  };
  // b's only pod leaves: it gives its row up and no other row moves; c,
  // over the budget so far, takes that row with its next pod.
  const int32_t a_row = row_of("a"), b_row = row_of("b"), d_row = row_of("d");
  ASSERT_LT(b_row, d_row) << "b's row is not the last";
  remove("b-1");
  EXPECT_EQ(row_of("b"), -2);
  EXPECT_EQ(row_of("a"), a_row);
  EXPECT_EQ(row_of("d"), d_row);
  EXPECT_EQ(row_of("c"), -1);
  agrees_with_a_build("b gone");
  add("c", 9);
  EXPECT_EQ(row_of("c"), b_row) << "the row b gave up";
  agrees_with_a_build("c takes b's row");
  // a falls below a sixteenth of the values (2 nodes): its by_rank goes, its
  // row stays while the budget holds it, else the layout decides.
  for (const char* name : {"a-0", "a-3", "a-4", "a-5"}) {
    remove(name);
    agrees_with_a_build(std::string("a shrinking, ") + name + " gone");
  }
  size_t sparse_rows = 0;
  for (const Snapshot::ExistingAffinityTerm& g : snap.existing_affinity_terms())
    sparse_rows += g.node_row >= 0 && g.by_rank.empty();
  EXPECT_LE(sparse_rows, 2u);
  // Without a budget, every sparse group reads its key's table.
  snap.limit_sparse_term_rows(0);
  for (const Snapshot::ExistingAffinityTerm& g : snap.existing_affinity_terms())
    EXPECT_TRUE(g.node_row < 0 || !g.by_rank.empty());
  agrees_with_a_build("no budget");
  // The limit is a setting: a snapshot built up by events keeps it.
  Snapshot by_events;
  by_events.limit_sparse_term_rows(0);
  by_events.add_node(nodes[0]);
  EXPECT_EQ(by_events.sparse_term_row_budget(), 0u);
}

// A pod whose terms open two new groups, added then removed (its terms in
// their own order), leaves every column bit for bit, also where an earlier
// group gave a row up in the middle: rows given up are reused and the
// trailing ones taken away, and no other group's row is renumbered.
TEST(SnapshotTermRows, PodWithTwoNewGroupsAddedThenRemovedLeavesEveryColumn) {
  const std::vector<Node> nodes = hostname_nodes(30);
  const auto pod = [](const std::string& name, const std::vector<std::string>& groups) {
    Pod p = testutil::make_pod(name);
    p.labels["app"] = "x";
    p.affinity = Affinity{};
    p.affinity->pod_anti_affinity = PodAffinity{};
    for (const std::string& ns : groups) {
      PodAffinityTerm t;
      t.topology_key = "kubernetes.io/hostname";
      t.label_selector = LabelSelector{};
      t.label_selector->match_labels["app"] = "x";
      t.namespaces = {ns};
      p.affinity->pod_anti_affinity->required.push_back(t);
    }
    return p;
  };
  Snapshot snap = Snapshot::build(nodes, {});
  const auto row_of = [&](const std::string& ns) {
    for (const Snapshot::ExistingAffinityTerm& g : snap.existing_affinity_terms())
      if (g.namespaces == std::vector<std::string>{ns} && g.occurrences > 0) return g.node_row;
    return -2;
  };
  const uint32_t a = snap.add_pod(pod("a", {"a"}), 0);
  snap.add_pod(pod("b", {"b"}), 1);
  snap.add_pod(pod("c", {"c"}), 2);
  ASSERT_EQ(row_of("a"), 0);
  ASSERT_EQ(row_of("b"), 1);
  ASSERT_EQ(row_of("c"), 2);
  const auto added_then_removed = [&](const std::string& when) {
    const auto before = column_bytes(snap);
    const uint32_t rows = snap.view().num_term_rows;
    const uint32_t id = snap.add_pod(pod("xy", {"x", "y"}), 5);
    EXPECT_GE(row_of("x"), 0) << when;
    EXPECT_GE(row_of("y"), 0) << when;
    EXPECT_EQ(snap.view().term_count(static_cast<uint32_t>(row_of("y")), 5), 1) << when;
    snap.remove_pod(id);
    EXPECT_EQ(snap.view().num_term_rows, rows) << when;
    EXPECT_EQ(first_byte_difference(before, snap), "") << when;
    expect_every_column_decoded(snap);
  };
  added_then_removed("three rows");
  snap.remove_pod(a);  // row 0 given up; b and c keep theirs
  EXPECT_EQ(row_of("b"), 1);
  EXPECT_EQ(row_of("c"), 2);
  EXPECT_EQ(snap.view().num_term_rows, 3u);
  added_then_removed("row 0 free");
  EXPECT_EQ(row_of("b"), 1);
  EXPECT_EQ(row_of("c"), 2);
  // The last group leaving takes the trailing free rows with it.
  snap.remove_pod("default", "c");
  snap.remove_pod("default", "b");
  EXPECT_EQ(snap.view().num_term_rows, 0u);
  expect_every_column_decoded(snap);
}


TEST(SnapshotQuantities, WildAmountsAreNotedAndForgottenOnceGone) {
  // Snapshot::quantities_tame: every allocatable and requested amount in
  // [0, 2^55], where the resource scores cannot leave [0, 100]. A wrapped
  // sum, a huge allocatable or a negative one (the C++ API) is noted where
  // it is written; recheck_quantities forgets it once nothing wild is left.
  const int64_t huge = int64_t(1) << 62;
  Snapshot snap = Snapshot::build({make_node("a", 4000, 8 * testutil::kMiB), make_node("b", 4000, 8 * testutil::kMiB)}, {});
  snap.recheck_quantities();
  EXPECT_TRUE(snap.quantities_tame());

  // Two pods of 2^62 cpu each: the node's sum wraps to min int64, as Go's does.
  const auto pod = [](const std::string& name, int64_t cpu) { return make_pod(name, {container({{"cpu", cpu}})}); };
  snap.add_pod(pod("w1", huge), 0);
  EXPECT_FALSE(snap.quantities_tame());
  snap.add_pod(pod("w2", huge), 0);
  EXPECT_EQ(snap.requested()[0], INT64_MIN);
  snap.recheck_quantities();
  EXPECT_FALSE(snap.quantities_tame());
  ASSERT_TRUE(snap.remove_pod("default", "w1"));
  snap.recheck_quantities();
  EXPECT_FALSE(snap.quantities_tame()) << "2^62 is still beyond 2^55";
  ASSERT_TRUE(snap.remove_pod("default", "w2"));
  EXPECT_FALSE(snap.quantities_tame()) << "forgotten only by the scan";
  snap.recheck_quantities();
  EXPECT_TRUE(snap.quantities_tame());

  // The bounds themselves: 2^55 is tame, one more is not, nor is -1.
  EXPECT_TRUE(Snapshot::tame_quantity(Snapshot::kTameQuantity));
  EXPECT_FALSE(Snapshot::tame_quantity(Snapshot::kTameQuantity + 1));
  EXPECT_FALSE(Snapshot::tame_quantity(-1));

  // A node with a negative allocatable, added and then removed.
  snap.add_node(make_node("negative", -1, 8 * testutil::kMiB));
  EXPECT_FALSE(snap.quantities_tame());
  snap.recheck_quantities();
  EXPECT_FALSE(snap.quantities_tame());
  snap.remove_node("negative");
  snap.recheck_quantities();
  EXPECT_TRUE(snap.quantities_tame());
}

}  // namespace
}  // namespace bulkscore
