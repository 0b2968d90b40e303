// The synthetic cluster generator: determinism, counts, and the shape promised
// in generator.hpp, checked by reading the output back with bulkscore's own
// loader (k8s_json) and pod request rule (pod_resources), so the generator's
// internal bookkeeping is not trusted.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "bench/generator/generator.hpp"
#include "host/common.hpp"
#include "host/engine/pod_query.hpp"
#include "host/input/config.hpp"
#include "host/input/k8s_json.hpp"
#include "host/input/labels.hpp"
#include "host/input/pod_resources.hpp"
#include "host/io/io.hpp"
#include "host/snapshot/snapshot.hpp"

namespace bulkscore {
namespace {

GeneratorOptions small_options(uint64_t seed = 7) {
  GeneratorOptions o;
  o.nodes = 400;
  o.running_pods = 1600;
  o.pending_pods = 300;
  o.seed = seed;
  return o;
}

Cluster load(const GeneratedCluster& g) {
  return assemble_cluster(parse_nodes_json(g.nodes_json, "nodes.json"), parse_pods_json(g.pods_json, "pods.json"),
                          {"default-scheduler"}, "nodes.json", "pods.json");
}

int64_t get(const ResourceList& r, const std::string& name) {
  const auto it = r.find(name);
  return it == r.end() ? 0 : it->second;
}

bool has_taint(const Node& n, const std::string& key, const std::string& effect) {
  for (const Taint& t : n.taints)
    if (t.key == key && t.effect == effect) return true;
  return false;
}

// Host ports as NodePorts sees them: regular containers and sidecars.
std::vector<std::string> host_ports(const Pod& p) {
  std::vector<std::string> out;
  auto take = [&](const Container& c) {
    for (const ContainerPort& port : c.ports)
      if (port.host_port > 0)
        out.push_back((port.protocol.empty() ? "TCP" : port.protocol) + "/" + std::to_string(port.host_port));
  };
  for (const Container& c : p.containers) take(c);
  for (const Container& c : p.init_containers)
    if (c.restart_policy_always) take(c);
  return out;
}

bool has_pod_affinity(const Pod& p) {
  return p.affinity && (p.affinity->pod_affinity || p.affinity->pod_anti_affinity);
}

// Runs of pending pods by owning ReplicaSet, in file order.
std::vector<std::pair<std::string, size_t>> pending_runs(const Cluster& c) {
  std::vector<std::pair<std::string, size_t>> runs;
  for (const Pod& p : c.pending_pods) {
    const std::string owner = p.namespace_name + "/" + (p.owner_references.empty() ? "" : p.owner_references[0].name);
    if (runs.empty() || runs.back().first != owner) runs.emplace_back(owner, 0);
    ++runs.back().second;
  }
  return runs;
}

TEST(SplitMix64, MatchesTheReferenceSequence) {
  // The first outputs of Vigna's splitmix64.c for seed 0.
  SplitMix64 rng(0);
  EXPECT_EQ(rng.next(), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(rng.next(), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(rng.next(), 0x06c45d188009454fULL);
}

TEST(SplitMix64, BoundedDrawsStayInRangeAndCoverIt) {
  SplitMix64 rng(42);
  std::vector<int> seen(7, 0);
  for (int i = 0; i < 7000; ++i) {
    const uint64_t v = rng.below(7);
    ASSERT_LT(v, 7u);
    ++seen[v];
  }
  for (int count : seen) EXPECT_GT(count, 800);  // ~1000 each
  EXPECT_EQ(rng.below(0), 0u);
  EXPECT_EQ(rng.below(1), 0u);
  for (int i = 0; i < 1000; ++i) {
    const int64_t v = rng.between(-3, 3);
    ASSERT_GE(v, -3);
    ASSERT_LE(v, 3);
    const double u = rng.unit();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(SplitMix64, ShuffleIsAPermutationAndDerivedStreamsDiffer) {
  SplitMix64 rng(3);
  std::vector<int> v(100);
  for (int i = 0; i < 100; ++i) v[i] = i;
  rng.shuffle(v);
  std::vector<int> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < 100; ++i) EXPECT_EQ(sorted[i], i);
  EXPECT_NE(v, sorted);
  EXPECT_NE(SplitMix64::derive(1, 1).next(), SplitMix64::derive(1, 2).next());
  EXPECT_NE(SplitMix64::derive(1, 1).next(), SplitMix64::derive(2, 1).next());
}

TEST(Generator, SameOptionsGiveByteIdenticalOutput) {
  const GeneratedCluster a = generate_cluster(small_options());
  const GeneratedCluster b = generate_cluster(small_options());
  EXPECT_EQ(a.nodes_json, b.nodes_json);
  EXPECT_EQ(a.pods_json, b.pods_json);
  EXPECT_EQ(a.objects_json, b.objects_json);
  GeneratorOptions inter = small_options();
  inter.with_inter_pod_constraints = true;
  EXPECT_EQ(generate_cluster(inter).pods_json, generate_cluster(inter).pods_json);
}

TEST(Generator, DifferentSeedsGiveDifferentClusters) {
  const GeneratedCluster a = generate_cluster(small_options(1));
  const GeneratedCluster b = generate_cluster(small_options(2));
  EXPECT_NE(a.nodes_json, b.nodes_json);
  EXPECT_NE(a.pods_json, b.pods_json);
}

TEST(Generator, NodeListDoesNotDependOnPodCounts) {
  GeneratorOptions more = small_options();
  more.pending_pods = 50;
  more.running_pods = 900;
  // Images follow the pods placed, so compare everything before status.images.
  const std::string a = generate_cluster(small_options()).nodes_json;
  const std::string b = generate_cluster(more).nodes_json;
  const Cluster ca = load({a, "{\"kind\":\"PodList\",\"items\":[]}", {}});
  const Cluster cb = load({b, "{\"kind\":\"PodList\",\"items\":[]}", {}});
  ASSERT_EQ(ca.nodes.size(), cb.nodes.size());
  for (size_t i = 0; i < ca.nodes.size(); ++i) {
    EXPECT_EQ(ca.nodes[i].name, cb.nodes[i].name);
    EXPECT_EQ(ca.nodes[i].labels, cb.nodes[i].labels);
    EXPECT_EQ(ca.nodes[i].allocatable, cb.nodes[i].allocatable);
  }
}

TEST(Generator, CountsMatchTheOptions) {
  for (const auto& [nodes, running, pending] :
       std::vector<std::tuple<uint32_t, uint32_t, uint32_t>>{{400, 1600, 300}, {50, 20, 7}, {1, 3, 2}, {120, 0, 0}}) {
    GeneratorOptions o;
    o.nodes = nodes;
    o.running_pods = running;
    o.pending_pods = pending;
    const Cluster c = load(generate_cluster(o));
    EXPECT_EQ(c.nodes.size(), nodes);
    EXPECT_EQ(c.running_pods.size(), running) << nodes << " nodes";
    EXPECT_EQ(c.pending_pods.size(), pending) << nodes << " nodes";
    for (const Pod& p : c.running_pods) EXPECT_EQ(p.phase, "Running") << p.key();
    for (const Pod& p : c.pending_pods) {
      EXPECT_EQ(p.phase, "Pending") << p.key();
      EXPECT_EQ(p.scheduler_name, "default-scheduler") << p.key();
    }
  }
}

TEST(Generator, EmptyClusterIsValidJson) {
  GeneratorOptions o;
  o.nodes = 0;
  o.running_pods = 0;
  o.pending_pods = 6;
  const Cluster c = load(generate_cluster(o));
  EXPECT_TRUE(c.nodes.empty());
  EXPECT_EQ(c.pending_pods.size(), 6u);
}

TEST(Generator, BadOptionsAreInputErrors) {
  auto bad = [](auto change) {
    GeneratorOptions o = small_options();
    change(o);
    EXPECT_THROW(generate_cluster(o), InputError);
  };
  bad([](GeneratorOptions& o) { o.zones = 0; });
  bad([](GeneratorOptions& o) { o.region.clear(); });
  bad([](GeneratorOptions& o) { o.gpu_node_fraction = -0.1; });
  bad([](GeneratorOptions& o) { o.tainted_node_fraction = 1.5; });
  bad([](GeneratorOptions& o) {
    o.gpu_node_fraction = 0.6;
    o.tainted_node_fraction = 0.6;
  });
  bad([](GeneratorOptions& o) { o.gpu_node_fraction = std::nan(""); });
  bad([](GeneratorOptions& o) {
    o.nodes = 2;
    o.running_pods = 1000;
  });  // 2 x 110 pod slots
  bad([](GeneratorOptions& o) {
    o.nodes = 0;
    o.running_pods = 1;
  });
}

// Counts past the documented limits are refused before anything is
// generated (`--nodes 1000000000` ran until it was killed).
TEST(Generator, CountsPastTheLimitsAreRefused) {
  EXPECT_EQ(kGeneratorMaxNodes, 200000U);
  EXPECT_EQ(kGeneratorMaxRunningPods, 1000000U);
  EXPECT_EQ(kGeneratorMaxPendingPods, 1000000U);
  const auto error = [](auto change) -> std::string {
    GeneratorOptions o = small_options();
    change(o);
    try {
      generate_cluster(o);
    } catch (const InputError& e) {
      return e.what();
    }
    return "(no InputError)";
  };
  EXPECT_EQ(error([](GeneratorOptions& o) { o.nodes = 1000000000; }),
            "generator: 1000000000 nodes is more than the limit of 200000");
  EXPECT_EQ(error([](GeneratorOptions& o) { o.nodes = kGeneratorMaxNodes + 1; }),
            "generator: 200001 nodes is more than the limit of 200000");
  EXPECT_EQ(error([](GeneratorOptions& o) { o.running_pods = kGeneratorMaxRunningPods + 1; }),
            "generator: 1000001 running pods is more than the limit of 1000000");
  EXPECT_EQ(error([](GeneratorOptions& o) { o.pending_pods = UINT32_MAX; }),
            "generator: 4294967295 pending pods is more than the limit of 1000000");
}

TEST(Generator, NodesLookLikeKubeletReports) {
  GeneratorOptions o;
  o.nodes = 1000;
  o.running_pods = 3000;
  o.pending_pods = 100;
  o.zones = 4;
  const Cluster c = load(generate_cluster(o));
  ASSERT_EQ(c.nodes.size(), 1000u);
  EXPECT_EQ(c.nodes[0].name, "node-00001");
  EXPECT_EQ(c.nodes[999].name, "node-01000");

  size_t gpu = 0, infra = 0, spot = 0, cordoned = 0, hugepages = 0, arm = 0;
  std::set<std::string> zones, pools, types;
  for (const Node& n : c.nodes) {
    const auto& l = n.labels;
    for (const char* key :
         {"kubernetes.io/hostname", "kubernetes.io/os", "kubernetes.io/arch", "topology.kubernetes.io/region",
          "topology.kubernetes.io/zone", "node.kubernetes.io/instance-type", "pool", "node.bulkscore.io/generation"})
      ASSERT_EQ(l.count(key), 1u) << n.name << " lacks " << key;
    EXPECT_EQ(l.at("kubernetes.io/hostname"), n.name);
    EXPECT_EQ(l.at("topology.kubernetes.io/region"), "region-1");
    for (const auto& [k, v] : l) {
      EXPECT_TRUE(is_qualified_name(k)) << n.name << ": " << k;
      EXPECT_TRUE(is_valid_label_value(v)) << n.name << ": " << k << "=" << v;
    }
    zones.insert(l.at("topology.kubernetes.io/zone"));
    pools.insert(l.at("pool"));
    types.insert(l.at("node.kubernetes.io/instance-type"));
    arm += l.at("kubernetes.io/arch") == "arm64";

    // Allocatable is below the nominal size: the kubelet reserve is taken out.
    const int64_t cpu = get(n.allocatable, "cpu");
    EXPECT_GT(cpu, 3000) << n.name;
    EXPECT_NE(cpu % 1000, 0) << n.name;
    EXPECT_GT(get(n.allocatable, "memory"), int64_t{10} << 30) << n.name;
    EXPECT_GT(get(n.allocatable, "ephemeral-storage"), int64_t{50} << 30) << n.name;
    EXPECT_TRUE(get(n.allocatable, "pods") == 110 || get(n.allocatable, "pods") == 250) << n.name;
    EXPECT_EQ(n.allocatable.count("hugepages-2Mi"), 1u);
    hugepages += get(n.allocatable, "hugepages-1Gi") > 0;

    const int64_t gpus = get(n.allocatable, "nvidia.com/gpu");
    if (gpus > 0) {
      ++gpu;
      EXPECT_TRUE(has_taint(n, "nvidia.com/gpu", "NoSchedule")) << n.name;
      EXPECT_EQ(l.count("nvidia.com/gpu.product"), 1u) << n.name;
      EXPECT_EQ(l.at("pool"), "gpu");
    }
    infra += has_taint(n, "dedicated", "NoSchedule");
    spot += has_taint(n, "spot", "PreferNoSchedule");
    if (n.unschedulable) {
      ++cordoned;
      EXPECT_TRUE(has_taint(n, "node.kubernetes.io/unschedulable", "NoSchedule")) << n.name;
    }

    ASSERT_GE(n.images.size(), 10u) << n.name;
    ASSERT_LE(n.images.size(), 50u) << n.name;
    for (size_t i = 0; i < n.images.size(); ++i) {
      const ContainerImage& im = n.images[i];
      ASSERT_EQ(im.names.size(), 2u);
      EXPECT_NE(im.names[0].find("@sha256:"), std::string::npos) << im.names[0];
      EXPECT_EQ(im.names[0].size() - im.names[0].find("@sha256:"), 8u + 64u) << im.names[0];
      EXPECT_EQ(im.names[1].find('@'), std::string::npos) << im.names[1];
      EXPECT_GT(im.size_bytes, 100000);
      if (i > 0) {
        EXPECT_LE(im.size_bytes, n.images[i - 1].size_bytes) << n.name << ": largest first";
      }
    }
  }
  // Exact role counts from the fractions.
  EXPECT_EQ(gpu, 50u);
  EXPECT_EQ(infra + spot, 100u);
  EXPECT_EQ(infra, 30u);
  EXPECT_EQ(cordoned, 5u);
  EXPECT_EQ(zones, (std::set<std::string>{"zone-a", "zone-b", "zone-c", "zone-d"}));
  EXPECT_EQ(pools, (std::set<std::string>{"general", "compute", "memory", "infra", "gpu"}));
  EXPECT_GE(types.size(), 12u);
  EXPECT_GT(hugepages, 0u);
  EXPECT_GT(arm, 0u);
}

TEST(Generator, NodeNamesWidenPastFiveDigits) {
  GeneratorOptions o;
  o.nodes = 100000;
  o.running_pods = 0;
  o.pending_pods = 0;
  const std::string json = generate_cluster(o).nodes_json;
  EXPECT_NE(json.find("\"name\":\"node-000001\""), std::string::npos);
  EXPECT_NE(json.find("\"name\":\"node-100000\""), std::string::npos);
}

// Sum of the scheduler's pod requests per node, against allocatable.
void expect_no_overcommit(const Cluster& c) {
  std::map<std::string, const Node*> by_name;
  for (const Node& n : c.nodes) by_name[n.name] = &n;
  std::map<std::string, ResourceList> used;
  std::map<std::string, int64_t> count;
  std::map<std::string, std::set<std::string>> ports;
  for (const Pod& p : c.running_pods) {
    ResourceList& u = used[p.node_name];
    for (const auto& [name, amount] : pod_requests(p)) u[name] += amount;
    ++count[p.node_name];
    for (const std::string& port : host_ports(p))
      EXPECT_TRUE(ports[p.node_name].insert(port).second) << p.key() << " reuses host port " << port;
  }
  for (const auto& [node, u] : used) {
    const Node& n = *by_name.at(node);
    for (const auto& [name, amount] : u)
      EXPECT_LE(amount, get(n.allocatable, name)) << node << " over-committed on " << name;
    EXPECT_LE(count[node], get(n.allocatable, "pods")) << node;
  }
}

TEST(Generator, RunningPodsNeverOvercommitTheirNode) {
  for (uint32_t per_node : {2u, 15u, 60u}) {
    GeneratorOptions o;
    o.nodes = 300;
    o.running_pods = 300 * per_node;
    o.pending_pods = 50;
    o.seed = per_node;
    const Cluster c = load(generate_cluster(o));
    ASSERT_EQ(c.running_pods.size(), o.running_pods);
    SCOPED_TRACE(std::to_string(per_node) + " pods per node");
    expect_no_overcommit(c);
  }
}

// The generator places pods with the engine's own Filter plugins (no private
// copy of the rules): every running pod passes, on its node as it was before
// the cordon, every filter of the default profile that says where a pod may
// run (room is checked above, with the pod counted).
TEST(Generator, RunningPodsSitWhereTheEnginesFiltersAllowThem) {
  GeneratorOptions o = small_options(11);
  o.gpu_node_fraction = 0.1;
  o.tainted_node_fraction = 0.3;
  const Cluster c = load(generate_cluster(o));
  std::vector<Node> nodes = c.nodes;
  for (Node& n : nodes) {
    n.unschedulable = false;
    n.taints.erase(std::remove_if(n.taints.begin(), n.taints.end(),
                                  [](const Taint& t) { return t.key == "node.kubernetes.io/unschedulable"; }),
                   n.taints.end());
  }
  Snapshot snap = Snapshot::build(nodes, std::vector<Pod>{});
  ProfileConfig profile = default_scheduler_config().profiles.front();
  profile.filter.erase(std::remove_if(profile.filter.begin(), profile.filter.end(),
                                      [](const std::string& f) { return f == "NodePorts" || f == "NodeResourcesFit"; }),
                       profile.filter.end());
  const ProfilePlan plan = make_profile_plan(profile);
  size_t tainted = 0, with_selector = 0;
  for (const Pod& p : c.running_pods) {
    intern_pod_for_plan(snap, p, plan);
    const PodQuery q = prepare_pod_query(p, snap, plan, TieBreak::First, 0);
    ASSERT_FALSE(q.rejected) << p.key();
    const int32_t node = snap.node_index(p.node_name);
    ASSERT_GE(node, 0) << p.key();
    const NodeVerdict v = filter_node(snap.view(), q.view(), static_cast<uint32_t>(node));
    EXPECT_TRUE(v.feasible()) << p.key() << " on " << p.node_name << " rejected by "
                              << (v.feasible() ? "" : plugin_name(v.plugin));
    tainted += !c.nodes[static_cast<size_t>(node)].taints.empty();
    with_selector += !p.node_selector.empty() || (p.affinity && p.affinity->node_affinity);
  }
  EXPECT_GT(tainted, 100u);        // the rules were exercised: pods on tainted nodes,
  EXPECT_GT(with_selector, 100u);  // and pods with node selectors or affinity
}

TEST(Generator, RunningPodsLoadNodesPartly) {
  GeneratorOptions o;
  o.nodes = 500;
  o.running_pods = 5000;
  o.pending_pods = 0;
  const Cluster c = load(generate_cluster(o));
  std::map<std::string, int64_t> cpu;
  for (const Pod& p : c.running_pods) cpu[p.node_name] += get(pod_requests(p), "cpu");
  std::vector<double> load;
  for (const Node& n : c.nodes)
    if (get(n.allocatable, "nvidia.com/gpu") == 0)
      load.push_back(static_cast<double>(cpu[n.name]) / static_cast<double>(get(n.allocatable, "cpu")));
  std::sort(load.begin(), load.end());
  const double median = load[load.size() / 2];
  EXPECT_GE(median, 0.2);
  EXPECT_LE(median, 0.7);
  EXPECT_GE(load[load.size() / 10], 0.05) << "few nodes left empty";
}

TEST(Generator, RunningPodsHaveControllersAndDaemonsets) {
  const Cluster c = load(generate_cluster(small_options()));
  std::map<std::string, size_t> kinds;
  size_t node_exporter = 0, best_effort = 0, sidecars = 0, with_init = 0;
  for (const Pod& p : c.running_pods) {
    ASSERT_EQ(p.owner_references.size(), 1u) << p.key();
    EXPECT_TRUE(p.owner_references[0].controller);
    ++kinds[p.owner_references[0].kind];
    EXPECT_EQ(p.labels.count("app"), 1u) << p.key();
    if (p.owner_references[0].kind == "ReplicaSet") {
      ASSERT_EQ(p.labels.count("pod-template-hash"), 1u) << p.key();
      EXPECT_EQ(p.owner_references[0].name.substr(p.owner_references[0].name.size() - 10),
                p.labels.at("pod-template-hash"));
    }
    for (const std::string& port : host_ports(p)) node_exporter += port == "TCP/9100";
    best_effort += pod_requests(p).empty();
    for (const Container& ic : p.init_containers) sidecars += ic.restart_policy_always;
    with_init += !p.init_containers.empty();
    for (const auto& [k, v] : p.labels) {
      EXPECT_TRUE(is_qualified_name(k)) << p.key() << ": " << k;
      EXPECT_TRUE(is_valid_label_value(v)) << p.key() << ": " << k << "=" << v;
    }
  }
  EXPECT_GT(kinds["ReplicaSet"], 0u);
  EXPECT_GT(kinds["StatefulSet"], 0u);
  EXPECT_GT(kinds["DaemonSet"], 0u);
  EXPECT_EQ(node_exporter, c.nodes.size()) << "node-exporter holds port 9100 on every node";
  EXPECT_GT(best_effort, 0u);
  EXPECT_GT(sidecars, 0u);
  EXPECT_GT(with_init, 0u);
}

TEST(Generator, PendingPodsComeInConsecutiveGroups) {
  const Cluster c = load(generate_cluster(GeneratorOptions{}));
  ASSERT_EQ(c.pending_pods.size(), 2000u);
  const auto runs = pending_runs(c);
  std::set<std::string> owners;
  size_t small = 0;
  for (const auto& [owner, size] : runs) {
    EXPECT_TRUE(owners.insert(owner).second) << owner << " is split in file order";
    EXPECT_LE(size, 200u) << owner;
    small += size < 5;
  }
  EXPECT_LE(small, 1u);
  EXPECT_GE(runs.size(), 20u);
  for (const Pod& p : c.pending_pods) {
    EXPECT_TRUE(p.node_name.empty());
    EXPECT_EQ(p.owner_references.at(0).kind, "ReplicaSet") << p.key();
  }
}

TEST(Generator, PendingPodsCoverTheConstraintKinds) {
  const Cluster c = load(generate_cluster(GeneratorOptions{}));
  int64_t max_cpu = 0;
  std::set<std::string> pools;
  for (const Node& n : c.nodes) {
    max_cpu = std::max(max_cpu, get(n.allocatable, "cpu"));
    pools.insert(n.labels.at("pool"));
  }
  std::map<std::string, size_t> seen;
  for (const Pod& p : c.pending_pods) {
    const ResourceList r = pod_requests(p);
    if (p.has_node_selector && p.node_selector.count("topology.kubernetes.io/zone")) ++seen["zone selector"];
    if (p.has_node_selector && p.node_selector.count("pool")) {
      ++seen["pool selector"];
      if (!pools.count(p.node_selector.at("pool"))) ++seen["missing pool"];
    }
    if (p.affinity && p.affinity->node_affinity) {
      const NodeAffinity& na = *p.affinity->node_affinity;
      if (!na.preferred.empty()) ++seen["preferred"];
      if (na.required)
        for (const NodeSelectorTerm& t : na.required->terms)
          for (const NodeSelectorRequirement& req : t.match_expressions) ++seen["required " + req.op];
    }
    if (get(r, "nvidia.com/gpu") > 0) {
      ++seen["gpu"];
      bool tolerates = false;
      for (const Toleration& t : p.tolerations) tolerates |= t.key == "nvidia.com/gpu";
      EXPECT_TRUE(tolerates) << p.key();
    }
    for (const Toleration& t : p.tolerations) {
      if (t.key == "dedicated") ++seen["infra toleration"];
      if (t.key == "spot") ++seen["spot toleration"];
    }
    if (!host_ports(p).empty()) ++seen["host port"];
    for (const Container& ic : p.init_containers) seen["sidecar"] += ic.restart_policy_always;
    if (!p.overhead.empty()) ++seen["overhead"];
    if (r.empty()) ++seen["best effort"];
    if (!p.pod_level_requests.empty()) ++seen["pod-level"];
    if (get(r, "ephemeral-storage") > 0) ++seen["ephemeral"];
    if (get(r, "hugepages-1Gi") > 0) ++seen["hugepages"];
    if (get(r, "cpu") > max_cpu) ++seen["too big"];
    EXPECT_FALSE(has_pod_affinity(p)) << p.key();
    EXPECT_TRUE(p.topology_spread_constraints.empty()) << p.key();
  }
  for (const char* kind :
       {"zone selector", "pool selector", "missing pool", "preferred", "required In", "required NotIn",
        "required Exists", "required Gt", "gpu", "infra toleration", "spot toleration", "host port", "sidecar",
        "overhead", "best effort", "pod-level", "ephemeral", "hugepages", "too big"})
    EXPECT_GT(seen[kind], 0u) << "no pending pod with " << kind;
  // "A few" pods no node can take.
  EXPECT_LE(seen["missing pool"] + seen["too big"], 20u);
}

TEST(Generator, InterPodConstraintsOnlyWhenAsked) {
  GeneratorOptions o = small_options();
  const Cluster plain = load(generate_cluster(o));
  for (const Pod& p : plain.running_pods) EXPECT_FALSE(has_pod_affinity(p)) << p.key();
  o.with_inter_pod_constraints = true;
  o.pending_pods = 1000;
  const Cluster c = load(generate_cluster(o));
  size_t affinity = 0, anti_required = 0, spread = 0;
  for (const Pod& p : c.pending_pods) {
    if (!p.topology_spread_constraints.empty()) ++spread;
    if (!p.affinity) continue;
    if (p.affinity->pod_affinity && !p.affinity->pod_affinity->required.empty()) ++affinity;
    if (p.affinity->pod_anti_affinity && !p.affinity->pod_anti_affinity->required.empty()) ++anti_required;
  }
  EXPECT_GT(affinity, 0u);
  EXPECT_GT(anti_required, 0u);
  EXPECT_GT(spread, 0u);
}

// The objects file: what --objects reads, a Service and a controller for
// each Deployment and StatefulSet, every namespace; with it every such pod
// gets a default spreading selector (a Service selects it and its owner is
// listed).
TEST(Generator, ObjectsSelectTheWorkloadsPods) {
  const GeneratedCluster g = generate_cluster(small_options());
  const ClusterObjects objects = parse_objects_json(g.objects_json, "objects.json");
  const std::vector<Pod> pods = parse_pods_json(g.pods_json, "pods.json");
  std::set<std::string> namespaces;
  for (const auto& ns : objects.namespaces) namespaces.insert(ns.name);
  size_t owned = 0, selected = 0;
  for (const Pod& p : pods) {
    EXPECT_TRUE(namespaces.count(p.namespace_name)) << p.namespace_name;
    for (const auto& ref : p.owner_references) {
      if (!ref.controller || (ref.kind != "ReplicaSet" && ref.kind != "StatefulSet")) continue;
      ++owned;
      bool has_owner = false, has_service = false;
      for (const auto& o : objects.selecting) {
        if (o.namespace_name != p.namespace_name) continue;
        if (o.name == ref.name && o.kind != SelectingObject::Kind::Service) has_owner = true;
        if (o.kind == SelectingObject::Kind::Service && selector_matches(LabelSelector{o.selector_map, {}}, p.labels))
          has_service = true;
      }
      EXPECT_TRUE(has_owner) << p.key();
      selected += has_service ? 1 : 0;
    }
  }
  EXPECT_GT(owned, 0u);
  EXPECT_EQ(selected, owned);
}

TEST(Generator, WritesBothFilesAsGenerated) {
  GeneratorOptions o = small_options();
  o.nodes = 20;
  o.running_pods = 40;
  o.pending_pods = 10;
  char dir_template[] = "/tmp/bulkscore-gen-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  write_generated_cluster(o, dir + "/nodes.json", dir + "/pods.json", dir + "/objects.json");
  const GeneratedCluster g = generate_cluster(o);
  EXPECT_EQ(read_file(dir + "/nodes.json"), g.nodes_json);
  EXPECT_EQ(read_file(dir + "/pods.json"), g.pods_json);
  EXPECT_EQ(read_file(dir + "/objects.json"), g.objects_json);
  std::remove((dir + "/objects.json").c_str());
  std::remove((dir + "/nodes.json").c_str());
  std::remove((dir + "/pods.json").c_str());
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace bulkscore
