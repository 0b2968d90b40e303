// Random clusters for the parity and equivalence tests: nodes with every
// label, taint, image and capacity shape the plugins distinguish, running
// pods (some labelled, some with pod affinity), pending pods that use every
// feature, and the parity configuration's profiles (every scoring strategy,
// sampling, a filter-only profile, WorkloadType and the SeamProbe). Reproducible from
// parity_seed() (BULKSCORE_PARITY_SEED=<n> overrides it).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "host/common.hpp"
#include "host/input/config.hpp"
#include "host/input/model.hpp"
#include "host/snapshot/snapshot.hpp"
#include "plugins/seam_probe.hpp"
#include "tests/random_pod_affinity.hpp"

namespace bulkscore {
namespace testutil {

inline uint64_t parity_seed() {
  static const uint64_t seed = [] {
    uint64_t s = 20251121;
    if (const char* env = std::getenv("BULKSCORE_PARITY_SEED")) s = std::strtoull(env, nullptr, 0);
    std::printf("[ parity ] seed %llu (rerun with BULKSCORE_PARITY_SEED=%llu)\n", static_cast<unsigned long long>(s),
                static_cast<unsigned long long>(s));
    return s;
  }();
  return seed;
}

// ---- random clusters ------------------------------------------------------------

template <class T, size_t N>
inline const T& pick(SplitMix64& rng, const T (&items)[N]) {
  return items[rng.below(N)];
}

inline constexpr int64_t kMi = 1024 * 1024;
inline constexpr int64_t kGi = 1024 * kMi;

inline const char* const kPools[] = {"general", "general", "compute", "memory", "gpu", "infra"};
inline const char* const kGenerations[] = {"3", "4", "5", "6", "7", "10", "007", "-1", "x7", ""};
inline const char* const kLabelKeys[] = {"pool", "gen", "ssd", "team", "topology.kubernetes.io/zone", "missing"};
inline const char* const kLabelValues[] = {"general", "compute", "gpu",    "infra", "true", "a",
                                           "b",       "zone-a",  "zone-b", "5",     ""};
inline const char* const kHostIps[] = {"", "", "0.0.0.0", "10.0.0.1", "10.0.0.2"};
inline const char* const kProtocols[] = {"", "TCP", "UDP"};
inline const int32_t kHostPorts[] = {80, 8080, 9100, 53};

inline std::string image_name(uint32_t k) {
  return "registry.local/app-" + std::to_string(k) + ":1." + std::to_string(k % 3);
}

inline Node random_node(SplitMix64& rng, uint32_t i, bool degenerate) {
  Node n;
  n.name = "node-" + std::to_string(i);
  n.labels["kubernetes.io/hostname"] = n.name;
  n.labels["topology.kubernetes.io/region"] = "r1";
  // A few nodes without a zone: the SeamProbe ignores them (as PodTopologySpread ignores nodes without its keys).
  if (rng.chance(0.93))
    n.labels["topology.kubernetes.io/zone"] = std::string("zone-") + static_cast<char>('a' + rng.below(3));
  const std::string pool = pick(rng, kPools);
  n.labels["pool"] = pool;
  if (rng.chance(0.8)) n.labels["gen"] = pick(rng, kGenerations);
  if (rng.chance(0.3)) n.labels["ssd"] = "true";
  if (rng.chance(0.15)) n.labels["team"] = rng.chance(0.5) ? "a" : "b";
  if (pool == "gpu") n.taints.push_back({"gpu", "present", "NoSchedule"});
  if (pool == "infra") n.taints.push_back({"dedicated", "infra", "NoSchedule"});
  if (rng.chance(0.2)) n.taints.push_back({"spot", "true", "PreferNoSchedule"});
  if (rng.chance(0.15)) n.taints.push_back({"noisy", rng.chance(0.5) ? "x" : "y", "PreferNoSchedule"});
  if (rng.chance(0.03)) n.taints.push_back({"maintenance", "", "NoExecute"});
  n.unschedulable = rng.chance(0.03);
  if (degenerate) {
    // Zero capacity: no resources at all, or all of them zero.
    if (rng.chance(0.5)) n.allocatable = {{"cpu", 0}, {"memory", 0}, {"pods", 0}};
  } else {
    const int64_t cores = static_cast<int64_t>(1) << rng.below(7);  // 1..64
    n.allocatable["cpu"] = cores * 1000 - static_cast<int64_t>(rng.below(300));
    n.allocatable["memory"] = cores * 4 * kGi - static_cast<int64_t>(rng.below(512)) * kMi;
    n.allocatable["ephemeral-storage"] = rng.between(20, 200) * kGi;
    n.allocatable["pods"] = rng.between(4, 110);
    if (pool == "gpu") n.allocatable["example.com/gpu"] = rng.between(1, 8);
    // GpuShare's devices (a stream of its own, so the rest of the cluster is
    // what it was before they came).
    SplitMix64 grng = SplitMix64::derive(parity_seed() ^ 0x69b5ull, i);
    if (pool == "gpu" || grng.chance(0.1)) {
      static const char* const kCards[] = {"G2", "T4", "V100M32"};
      const int64_t gpus = grng.between(1, 8);
      n.allocatable["alibabacloud.com/gpu-count"] = gpus;
      if (!grng.chance(0.1)) n.allocatable["alibabacloud.com/gpu-milli"] = 1000 * gpus;
      if (!grng.chance(0.1)) n.labels["alibabacloud.com/gpu-card-model"] = pick(grng, kCards);
    }
    if (rng.chance(0.15)) n.allocatable["hugepages-2Mi"] = rng.between(0, 64) * 2 * kMi;
  }
  const uint32_t images = static_cast<uint32_t>(rng.below(8));
  for (uint32_t j = 0; j < images; ++j) {
    const uint32_t k = static_cast<uint32_t>(rng.below(12));
    ContainerImage img;
    img.names = {image_name(k), "registry.local/app-" + std::to_string(k) + "@sha256:" + std::to_string(1000 + k)};
    img.size_bytes = (k < 4 ? 5 : k < 8 ? 300 : 2500) * kMi + static_cast<int64_t>(k) * kMi;
    n.images.push_back(img);
  }
  return n;
}

inline ContainerPort random_host_port(SplitMix64& rng) {
  ContainerPort p;
  p.host_port = pick(rng, kHostPorts);
  p.container_port = p.host_port;
  p.protocol = pick(rng, kProtocols);
  p.host_ip = pick(rng, kHostIps);
  if (rng.chance(0.02)) p.host_ip = "10.9.9." + std::to_string(rng.below(250));  // a new dictionary string
  return p;
}

inline Container random_container(SplitMix64& rng, const std::string& name, bool allow_rare_resources) {
  Container c;
  c.name = name;
  const uint32_t k = static_cast<uint32_t>(rng.below(14));
  c.image = k < 12 ? (rng.chance(0.8) ? image_name(k) : "registry.local/app-" + std::to_string(k)) : "busybox";
  if (!rng.chance(0.15)) {  // else BestEffort
    c.requests["cpu"] = rng.between(1, 40) * 100;
    c.requests["memory"] = rng.between(1, 64) * 128 * kMi;
    if (rng.chance(0.2)) c.requests["ephemeral-storage"] = rng.between(1, 30) * kGi;
    if (rng.chance(0.1)) c.requests["example.com/gpu"] = rng.between(1, 4);
    if (rng.chance(0.05)) c.requests["hugepages-2Mi"] = rng.between(1, 16) * 2 * kMi;
    if (rng.chance(0.02)) c.requests["cpu"] = 200000;                                  // fits nowhere
    if (allow_rare_resources && rng.chance(0.01)) c.requests["example.com/fpga"] = 1;  // a new column
  }
  return c;
}

inline NodeSelectorRequirement random_requirement(SplitMix64& rng) {
  static const char* const kOps[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
  NodeSelectorRequirement r;
  r.key = pick(rng, kLabelKeys);
  r.op = pick(rng, kOps);
  if (r.op == "In" || r.op == "NotIn") {
    const uint32_t values = 1 + static_cast<uint32_t>(rng.below(3));
    for (uint32_t i = 0; i < values; ++i) r.values.push_back(pick(rng, kLabelValues));
  } else if (r.op == "Gt" || r.op == "Lt") {
    r.key = "gen";
    r.values.push_back(std::to_string(rng.between(2, 8)));
  }
  return r;
}

inline NodeSelectorTerm random_term(SplitMix64& rng, uint32_t num_nodes) {
  NodeSelectorTerm t;
  const uint32_t reqs = 1 + static_cast<uint32_t>(rng.below(2));
  for (uint32_t i = 0; i < reqs; ++i) t.match_expressions.push_back(random_requirement(rng));
  if (num_nodes && rng.chance(0.05)) {
    NodeSelectorRequirement f;
    f.key = "metadata.name";
    f.op = rng.chance(0.7) ? "In" : "NotIn";
    f.values.push_back("node-" + std::to_string(rng.below(num_nodes)));
    t.match_fields.push_back(f);
  }
  return t;
}

// GpuShare's demand annotations: a share of one device, or whole devices,
// sometimes restricted to card models (one no node has, now and then).
inline void add_random_device_demand(SplitMix64& rng, Pod& p) {
  const bool share = rng.chance(0.6);
  p.annotations["alibabacloud.com/gpu-count"] = share ? "1" : std::to_string(rng.between(1, 4));
  if (share)
    p.annotations["alibabacloud.com/gpu-milli"] = std::to_string(rng.between(1, 999));
  else if (rng.chance(0.7))
    p.annotations["alibabacloud.com/gpu-milli"] = "1000";
  if (rng.chance(0.3)) p.annotations["alibabacloud.com/gpu-card-model"] = rng.chance(0.8) ? "T4|G2" : "A100";
}

inline Pod random_pending_pod(SplitMix64& rng, uint32_t i, uint32_t num_nodes,
                              const std::vector<std::string>& schedulers) {
  Pod p;
  p.namespace_name = "parity";
  p.name = "pending-" + std::to_string(i);
  p.uid = "uid-" + std::to_string(i);
  p.scheduler_name = schedulers[rng.below(schedulers.size())];
  p.phase = "Pending";
  p.origin = "parity: pending[" + std::to_string(i) + "]";
  const uint32_t containers = 1 + static_cast<uint32_t>(rng.below(3));
  for (uint32_t c = 0; c < containers; ++c)
    p.containers.push_back(random_container(rng, "c" + std::to_string(c), true));
  if (rng.chance(0.2)) {
    Container init = random_container(rng, "init", false);
    init.restart_policy_always = rng.chance(0.3);
    p.init_containers.push_back(init);
  }
  if (rng.chance(0.05)) p.overhead["cpu"] = 100;
  if (rng.chance(0.6)) {
    static const char* const kProbeModes[] = {"spread", "minmax", "raw"};
    p.annotations[plugins::SeamProbe::kAnnotation] = pick(rng, kProbeModes);
    if (rng.chance(0.5)) p.scheduler_name = rng.chance(0.5) ? "seam-probe" : "seam-probe-sampled";
  }
  if (rng.chance(0.12)) {
    const uint32_t ports = 1 + static_cast<uint32_t>(rng.below(2));
    for (uint32_t j = 0; j < ports; ++j) p.containers[0].ports.push_back(random_host_port(rng));
  }
  if (rng.chance(0.15)) {
    p.has_node_selector = true;
    p.node_selector["pool"] = rng.chance(0.9) ? pick(rng, kPools) : "no-such-pool";
  }
  if (rng.chance(0.35)) {
    NodeAffinity na;
    if (rng.chance(0.6)) {
      NodeSelector sel;
      const uint32_t terms = 1 + static_cast<uint32_t>(rng.below(2));
      for (uint32_t t = 0; t < terms; ++t) sel.terms.push_back(random_term(rng, num_nodes));
      na.required = sel;
    }
    if (rng.chance(0.6)) {
      na.has_preferred = true;
      const uint32_t terms = 1 + static_cast<uint32_t>(rng.below(3));
      for (uint32_t t = 0; t < terms; ++t)
        na.preferred.push_back({static_cast<int32_t>(rng.between(1, 100)), random_term(rng, 0)});
    }
    Affinity a;
    a.node_affinity = na;
    p.affinity = a;
  }
  if (rng.chance(0.35)) {
    static const Toleration kTolerations[] = {{"gpu", "Exists", "", "NoSchedule"},
                                              {"dedicated", "Equal", "infra", "NoSchedule"},
                                              {"spot", "Equal", "true", "PreferNoSchedule"},
                                              {"noisy", "Exists", "", "PreferNoSchedule"},
                                              {"noisy", "", "x", ""},
                                              {"", "Exists", "", ""},
                                              {"maintenance", "Exists", "", "NoExecute"},
                                              {"dedicated", "Equal", "other", ""}};
    const uint32_t n = 1 + static_cast<uint32_t>(rng.below(3));
    for (uint32_t t = 0; t < n; ++t) p.tolerations.push_back(pick(rng, kTolerations));
  }
  // PodTopologySpread: labels the spread selectors (and the Service) match,
  // and own constraints on keys every node, most nodes or no node carries.
  // A stream of its own, so the other features' coverage stays as it was;
  // SeamProbe pods keep exercising their seams without spread rejections.
  SplitMix64 srng = SplitMix64::derive(parity_seed() ^ 0x5eed5beadull, i);
  static const char* const kApps[] = {"web", "db", "cache"};
  const bool probe = p.annotations.count(plugins::SeamProbe::kAnnotation) > 0;
  if (srng.chance(0.7) && !probe) p.labels["app"] = pick(srng, kApps);
  if (!probe && srng.chance(0.4)) {
    static const char* const kKeys[] = {"topology.kubernetes.io/zone", "kubernetes.io/hostname", "pool", "rack"};
    const uint32_t n = 1 + static_cast<uint32_t>(srng.below(2));
    for (uint32_t k = 0; k < n; ++k) {
      TopologySpreadConstraint c;
      c.max_skew = static_cast<int32_t>(srng.between(1, 3));
      c.topology_key = kKeys[(k + srng.below(4)) % 4];
      if (k == 1 && c.topology_key == p.topology_spread_constraints[0].topology_key) continue;
      c.when_unsatisfiable = srng.chance(0.5) ? "DoNotSchedule" : "ScheduleAnyway";
      const uint64_t sel = srng.below(10);
      if (sel < 6) {
        c.label_selector = LabelSelector{};
        c.label_selector->match_labels["app"] = pick(srng, kApps);
      } else if (sel < 8) {
        c.label_selector = LabelSelector{};
        c.label_selector->match_expressions.push_back({"app", "Exists", {}});
      } else if (sel < 9) {
        c.label_selector = LabelSelector{};  // counts no pod, matches itself
      }                                      // else nil: matches nothing
      if (srng.chance(0.2)) c.min_domains = static_cast<int32_t>(srng.between(1, 5));
      if (srng.chance(0.2)) c.node_affinity_policy = "Ignore";
      if (srng.chance(0.3)) c.node_taints_policy = "Honor";
      if (srng.chance(0.2)) c.match_label_keys.push_back("app");
      p.topology_spread_constraints.push_back(c);
    }
  }
  // GpuShare's annotations, a stream of its own.
  SplitMix64 grng = SplitMix64::derive(parity_seed() ^ 0x69b6ull, i);
  if (grng.chance(0.25)) {
    add_random_device_demand(grng, p);
    static const char* const kGpuProfiles[] = {"gpu-share", "gpu-fgd", "gpu-baselines"};
    if (grng.chance(0.6)) p.scheduler_name = pick(grng, kGpuProfiles);
  }
  // WorkloadType (enabled in the most-allocated profile): the label, from a
  // stream of its own; the third value is one the plugin skips.
  SplitMix64 wrng = SplitMix64::derive(parity_seed() ^ 0x3017c1a55ull, i);
  if (wrng.chance(0.3)) {
    static const char* const kWorkloads[] = {"CPU-intensive", "GPU-intensive", "memory-intensive"};
    p.labels["workload-type"] = pick(wrng, kWorkloads);
  }
  // InterPodAffinity, a stream of its own again.
  SplitMix64 arng = SplitMix64::derive(parity_seed() ^ 0xaff1417ull, i);
  if (!probe)
    if (auto pa = testutil::random_pod_affinity(arng, 0.3)) {
      if (!p.affinity) p.affinity = Affinity{};
      p.affinity->pod_affinity = pa->pod_affinity;
      p.affinity->pod_anti_affinity = pa->pod_anti_affinity;
    }
  return p;
}

struct ClusterShape {
  uint32_t nodes = 0;
  uint32_t pending = 0;
  double degenerate_fraction = 0.05;  // zero-capacity nodes
  bool taints = true;                 // false: no node has a taint (the same draws otherwise)
};

inline Cluster random_cluster(SplitMix64& rng, const ClusterShape& shape, const std::vector<std::string>& schedulers) {
  Cluster c;
  for (uint32_t i = 0; i < shape.nodes; ++i)
    c.nodes.push_back(random_node(rng, i, rng.chance(shape.degenerate_fraction)));
  if (!shape.taints)
    for (Node& n : c.nodes) n.taints.clear();
  for (uint32_t i = 0; i < shape.nodes; ++i) {
    const uint32_t pods = static_cast<uint32_t>(rng.below(4));
    for (uint32_t j = 0; j < pods; ++j) {
      Pod p;
      // Some in the pending pods' namespace, labelled: PodTopologySpread counts them.
      SplitMix64 srng = SplitMix64::derive(parity_seed() ^ (0x5eed5beadull + i), j);
      p.namespace_name = srng.chance(0.6) ? "parity" : "running";
      if (srng.chance(0.8)) p.labels["app"] = srng.chance(0.5) ? "web" : (srng.chance(0.5) ? "db" : "cache");
      p.deleting = srng.chance(0.05);
      SplitMix64 arng = SplitMix64::derive(parity_seed() ^ (0xaff1417ull + i), j);
      p.affinity = testutil::random_pod_affinity(arng, 0.5);
      p.name = "run-" + std::to_string(i) + "-" + std::to_string(j);
      p.node_name = c.nodes[i].name;
      p.phase = "Running";
      p.origin = "parity: running";
      p.containers.push_back(random_container(rng, "main", false));
      if (rng.chance(0.15)) p.containers[0].ports.push_back(random_host_port(rng));
      // Devices held (indices the node may lack, or none listed: the
      // engine then assigns them at load).
      SplitMix64 grng = SplitMix64::derive(parity_seed() ^ (0x69b7ull + i), j);
      if (grng.chance(0.3)) {
        add_random_device_demand(grng, p);
        if (!grng.chance(0.2)) p.annotations["alibabacloud.com/gpu-index"] = std::to_string(grng.below(4));
      }
      c.running_pods.push_back(p);
    }
  }
  for (uint32_t i = 0; i < shape.pending; ++i)
    c.pending_pods.push_back(random_pending_pod(rng, i, shape.nodes, schedulers));
  // A Service selecting the "web" pods: their default spreading constraints.
  SelectingObject svc;
  svc.kind = SelectingObject::Kind::Service;
  svc.namespace_name = "parity";
  svc.name = "web";
  svc.has_selector = true;
  svc.selector_map = {{"app", "web"}};
  c.objects.selecting.push_back(svc);
  // Namespaces for the namespaceSelectors; "other" is not listed.
  c.objects.namespaces = {Namespace{"parity", {{"team", "a"}}}, Namespace{"running", {{"team", "b"}}}};
  return c;
}

// Profiles covering every scoring strategy, sampling, a filter-only one, and
// bulkscore's own WorkloadType (most-allocated) and NodeData (ratio and
// spread-list, reading the columns random_node_data fills; nodes without
// data pass).
inline const char* const kParityConfig = R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
- schedulerName: most-allocated
  percentageOfNodesToScore: 30
  plugins:
    multiPoint:
      enabled:
      - name: WorkloadType
  pluginConfig:
  - name: WorkloadType
    args:
      cpuThreshold: "8"
      gpuResourceNames: [example.com/gpu]
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - {name: cpu, weight: 1}
        - {name: memory, weight: 2}
        - {name: example.com/gpu, weight: 3}
  - name: NodeResourcesBalancedAllocation
    args:
      resources:
      - {name: cpu, weight: 1}
      - {name: memory, weight: 1}
      - {name: example.com/gpu, weight: 1}
- schedulerName: ratio
  percentageOfNodesToScore: 0
  plugins:
    filter:
      enabled:
      - name: NodeData
    score:
      enabled:
      - name: NodeAffinity
        weight: 7
      - name: NodeData
        weight: 3
  pluginConfig:
  - name: NodeData
    args:
      filterColumn: parity.io/maintenance
      scoreColumn: parity.io/preference
      scoreNormalization: Default
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: RequestedToCapacityRatio
        resources:
        - {name: cpu, weight: 2}
        - {name: memory, weight: 1}
        - {name: hugepages-2Mi, weight: 1}
        requestedToCapacityRatio:
          shape:
          - {utilization: 0, score: 10}
          - {utilization: 40, score: 3}
          - {utilization: 100, score: 7}
  - name: NodeAffinity
    args:
      addedAffinity:
        preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 5
          preference:
            matchExpressions:
            - {key: ssd, operator: Exists}
- schedulerName: spread-list
  plugins:
    multiPoint:
      enabled:
      - name: NodeData
        weight: 2
  pluginConfig:
  - name: NodeData
    args:
      filterColumn: parity.io/license
      scoreColumn: parity.io/cost
      scoreNormalization: Reverse
      scoreDefault: 40
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints:
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule}
      - {maxSkew: 2, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway}
- schedulerName: filter-only
  plugins:
    score:
      disabled:
      - name: '*'
)";

// The parity config, plus a profile no configuration file can name: the
// default profile with the SeamProbe plugin (plugins/seam_probe.hpp), which
// exercises the feasible-set PreScore, the arena tables it builds, the
// ignore mask, the Spread and MinMax normalizations and negative totals on
// every backend. Pods opt in with its annotation.
inline const SchedulerConfig& parity_config() {
  static const SchedulerConfig config = [] {
    SchedulerConfig c = parse_scheduler_config(kParityConfig, "parity config");
    ProfileConfig probe = c.profiles[0];
    probe.scheduler_name = "seam-probe";
    probe.pre_score.push_back("SeamProbe");
    probe.score.push_back(PluginEntry{"SeamProbe", 3});
    c.profiles.push_back(probe);
    // A sampling one too: the PreScore then sees only the sampled feasible nodes.
    probe.scheduler_name = "seam-probe-sampled";
    probe.percentage_of_nodes_to_score = 0;
    c.profiles.push_back(probe);
    // GpuShare (no configuration file's default set has it), spreading shares.
    ProfileConfig gpu = c.profiles[0];
    gpu.scheduler_name = "gpu-share";
    gpu.pre_filter.push_back("GpuShare");
    gpu.filter.push_back("GpuShare");
    gpu.gpu_share_args.selection = DeviceSelection::Worst;
    c.profiles.push_back(gpu);
    // FGD beside the default scores, against a few typical tasks (one with
    // models, one CPU-only), choosing share devices its way.
    ProfileConfig fgd = gpu;
    fgd.scheduler_name = "gpu-fgd";
    fgd.score.push_back(PluginEntry{"GpuFragmentation", 5});
    fgd.gpu_share_args.selection = DeviceSelection::Fragmentation;
    auto task = [](int64_t cpu, int32_t milli, int32_t count, double weight, std::vector<std::string> models) {
      TypicalTask t;
      t.cpu_milli = cpu;
      t.milli = milli;
      t.count = count;
      t.weight = weight;
      t.models = std::move(models);
      return t;
    };
    fgd.gpu_fragmentation_args.typical_tasks = {task(1000, 500, 1, 0.4, {}), task(4000, 1000, 2, 0.3, {}),
                                                task(2000, 250, 1, 0.2, {"T4", "V100M32"}), task(500, 0, 0, 0.1, {})};
    c.profiles.push_back(fgd);
    // Every baseline at once, with a random share device.
    ProfileConfig base = gpu;
    base.scheduler_name = "gpu-baselines";
    base.score = {PluginEntry{"GpuBestFit", 2}, PluginEntry{"GpuDotProduct", 1}, PluginEntry{"GpuPacking", 3},
                  PluginEntry{"GpuClustering", 1}, PluginEntry{"GpuRandomFit", 1}};
    base.gpu_share_args.selection = DeviceSelection::Random;
    base.gpu_score_args.seed = 7;
    c.profiles.push_back(base);
    // Shared device groups beside the default plugins.
    ProfileConfig groups = c.profiles[0];
    groups.scheduler_name = "device-groups";
    groups.pre_filter.push_back("SharedDeviceGroup");
    groups.filter.push_back("SharedDeviceGroup");
    groups.pre_score.push_back("SharedDeviceGroup");
    groups.score.push_back(PluginEntry{"SharedDeviceGroup", 4});
    c.profiles.push_back(groups);
    return c;
  }();
  return config;
}

// The node data columns of the parity configs (NodeData), and the reasons
// random_node_data fails nodes with.
inline const char* const kNodeFilterColumns[] = {"parity.io/license", "parity.io/maintenance"};
inline const char* const kNodeScoreColumns[] = {"parity.io/cost", "parity.io/preference"};
inline const char* const kNodeDataReasons[] = {"node(s) had an expired license", "node(s) were in a maintenance window",
                                               "node(s) were reserved", "node(s) failed the cost model"};

// The parity config with NodeData in every profile, nodes without data
// failing in some of them, every normalization: the node data parity cases.
inline const SchedulerConfig& node_data_parity_config() {
  static const SchedulerConfig config = [] {
    SchedulerConfig c = parity_config();
    const NodeDataNormalization kinds[] = {NodeDataNormalization::None, NodeDataNormalization::Default,
                                           NodeDataNormalization::Reverse};
    for (size_t i = 0; i < c.profiles.size(); ++i) {
      ProfileConfig& p = c.profiles[i];
      if (std::find(p.filter.begin(), p.filter.end(), "NodeData") == p.filter.end()) p.filter.push_back("NodeData");
      if (std::none_of(p.score.begin(), p.score.end(), [](const PluginEntry& e) { return e.name == "NodeData"; }))
        p.score.push_back(PluginEntry{"NodeData", static_cast<int32_t>(1 + i % 4)});
      p.node_data_args.filter_column = kNodeFilterColumns[i % 2];
      p.node_data_args.filter_default_fails = i % 3 == 0;
      p.node_data_args.score_column = kNodeScoreColumns[(i / 2) % 2];
      p.node_data_args.score_normalization = kinds[i % 3];
      p.node_data_args.score_default = static_cast<int32_t>(i * 37 % 101);
    }
    return c;
  }();
  return config;
}

// A random change to one node data column: some nodes set (passes, fails
// with one of a few reasons, scores 0..100) or cleared, up to `max_nodes` of
// them, or (rarely) the whole column cleared.
struct RandomNodeData {
  std::string column;
  Snapshot::NodeDataKind kind = Snapshot::NodeDataKind::kFilter;
  bool clear_column = false;
  std::vector<Snapshot::NodeDataUpdate> updates;  // distinct nodes
};

inline RandomNodeData random_node_data(SplitMix64& rng, uint32_t num_nodes, uint32_t max_nodes) {
  using Op = Snapshot::NodeDataUpdate::Op;
  RandomNodeData d;
  d.kind = rng.chance(0.5) ? Snapshot::NodeDataKind::kFilter : Snapshot::NodeDataKind::kScore;
  d.column = d.kind == Snapshot::NodeDataKind::kFilter ? pick(rng, kNodeFilterColumns) : pick(rng, kNodeScoreColumns);
  if (num_nodes == 0) return d;
  if (rng.chance(0.04)) {
    d.clear_column = true;
    return d;
  }
  const uint32_t count = 1 + static_cast<uint32_t>(rng.below(std::min(max_nodes, num_nodes)));
  std::vector<uint32_t> nodes(num_nodes);
  for (uint32_t n = 0; n < num_nodes; ++n) nodes[n] = n;
  rng.shuffle(nodes);
  for (uint32_t k = 0; k < count; ++k) {
    Snapshot::NodeDataUpdate u;
    u.node = nodes[k];
    if (rng.chance(0.15)) {
      u.op = Op::kClear;
    } else if (d.kind == Snapshot::NodeDataKind::kScore) {
      u.op = Op::kScore;
      u.score = rng.chance(0.1) ? 0 : static_cast<int64_t>(rng.below(101));
    } else if (rng.chance(0.6)) {
      u.op = Op::kPass;
    } else {
      u.op = Op::kFail;
      u.reason = pick(rng, kNodeDataReasons);
    }
    d.updates.push_back(std::move(u));
  }
  return d;
}

inline void apply_node_data(Snapshot& snap, const RandomNodeData& d) {
  if (d.clear_column) {
    const int32_t c = snap.find_node_data_column(d.column);
    if (c >= 0) snap.clear_node_data(static_cast<uint32_t>(c));
    return;
  }
  snap.update_node_data(d.column, d.kind, d.updates);
}

// Shared device groups on the same clusters: most nodes in shared mode
// with 0-8 nvidia.com/gpu, a few groups (both strategies, some with a
// selector, one of two or more bound by its status), and some of the pods that ask for no
// GPU devices made members, or pods asking for nvidia.com/gpu outside groups,
// under the device-groups profile.
inline void add_device_groups(Cluster& cluster, uint64_t stream) {
  SplitMix64 g = SplitMix64::derive(parity_seed() ^ 0x5d9ull, stream);
  for (Node& n : cluster.nodes) {
    if (n.allocatable.count("cpu") == 0) continue;
    n.allocatable["nvidia.com/gpu"] = g.between(0, 8);
    if (g.chance(0.75)) n.labels["deviceshare.io/mode"] = "shared";
  }
  const uint32_t k = 1 + static_cast<uint32_t>(g.below(6));
  for (uint32_t i = 0; i < k; ++i) {
    SharedDeviceGroup group;
    group.name = "group-" + std::to_string(i);
    group.resources["nvidia.com/gpu"] = static_cast<int32_t>(g.between(1, 4));
    group.strategy = g.chance(0.5) ? SharedDeviceGroup::Strategy::Spread : SharedDeviceGroup::Strategy::BinPack;
    if (g.chance(0.3)) group.node_selector["pool"] = pick(g, kPools);
    if (i == 0 && k > 1 && !cluster.nodes.empty() && g.chance(0.5)) {
      group.bound_node = cluster.nodes[g.below(cluster.nodes.size())].name;
      group.bound_devices["nvidia.com/gpu"] = {};
      for (int32_t d = 0; d < group.resources["nvidia.com/gpu"]; ++d)
        group.bound_devices["nvidia.com/gpu"].push_back(d);
    }
    group.origin = "parity";
    cluster.objects.device_groups.push_back(std::move(group));
  }
  for (Pod& p : cluster.pending_pods) {
    if (!g.chance(0.45)) continue;
    p.scheduler_name = "device-groups";
    p.annotations.erase("alibabacloud.com/gpu-count");
    p.annotations.erase("alibabacloud.com/gpu-milli");
    // Keep most of them feasible somewhere: small, tolerating every taint.
    p.affinity.reset();
    p.topology_spread_constraints.clear();
    for (Container& c : p.containers) c.requests = {{"cpu", 100}};
    p.init_containers.clear();
    p.tolerations.push_back(Toleration{"", "Exists", "", ""});
    if (g.chance(0.75))
      p.annotations["deviceshare.io/group"] = "group-" + std::to_string(g.below(k));
    else if (!p.containers.empty())
      p.containers[0].requests["nvidia.com/gpu"] = g.between(1, 3);
  }
}

inline std::vector<std::string> scheduler_names() {
  std::vector<std::string> names;
  for (const auto& p : parity_config().profiles) names.push_back(p.scheduler_name);
  return names;
}

}  // namespace testutil
}  // namespace bulkscore
