// A deterministic generator of realistic synthetic Kubernetes clusters (host
// only), written as kubectl-style JSON: one v1 NodeList, one v1 PodList and
// one v1 List of the Services, ReplicaSets, StatefulSets and Namespaces.
// It makes bulkscore's bundled default cluster and the large benchmark
// fixtures. Same options -> byte-identical output on every platform: all
// randomness comes from SplitMix64 below with integer-only choices (no
// std::*_distribution, whose algorithms differ between standard libraries).
//
// The shape of a generated cluster (an EKS-like cluster, AWS instance names):
//
// Nodes ("node-00001", ...; at least five digits, more when needed)
//  * Roles, exact counts from the options: round(nodes * gpu_node_fraction)
//    GPU nodes; round(nodes * tainted_node_fraction) tainted non-GPU nodes, of
//    which ~30% "infra" (pool=infra, taint dedicated=infra:NoSchedule) and the
//    rest spot (capacityType SPOT, taint spot=true:PreferNoSchedule); the rest
//    untainted. round(nodes * 0.005) nodes are cordoned: spec.unschedulable
//    and the node.kubernetes.io/unschedulable:NoSchedule taint.
//  * Label "pool": general (60% of untainted/spot nodes: m5, m6g (arm64),
//    m7i), compute (25%: c5, c6i), memory (15%: r5, r6i; ~30% of them with
//    hugepages-1Gi), infra (m5), gpu (g5.2xlarge 1 x A10G, g5.12xlarge 4 x
//    A10G, p4d.24xlarge 8 x A100, p5.48xlarge 8 x H100).
//  * Labels: kubernetes.io/{hostname,os,arch}, beta.kubernetes.io/{arch,os},
//    topology.kubernetes.io/{region,zone} (zone-a, zone-b, ...; uniform),
//    node.kubernetes.io/instance-type, eks.amazonaws.com/{nodegroup,
//    capacityType}, node.bulkscore.io/generation (instance generation, "4".."7",
//    for Gt/Lt affinity), node.bulkscore.io/local-ssd=true on ~20% of nodes,
//    node-role.kubernetes.io/infra on infra nodes, nvidia.com/gpu.{product,
//    count,memory} on GPU nodes, which are tainted nvidia.com/gpu=present:
//    NoSchedule.
//  * status.capacity and status.allocatable as a kubelet reports them: cpu
//    "8" / "7910m" (GKE/EKS cpu reserve), memory in Ki (EKS memory reserve
//    255Mi + 11Mi per pod, 100Mi eviction, hugepages taken out),
//    ephemeral-storage in Ki / bytes (10% eviction), pods "110" ("250" on
//    p4d/p5), hugepages-1Gi, hugepages-2Mi, nvidia.com/gpu.
//  * status.images: 10-30 images (the node's daemonset and pod images, then
//    popularity-weighted history) from a fixed catalogue of 64 images, each
//    with "repo@sha256:..." and "repo:tag" names, largest first as the kubelet
//    lists them. Sizes: pause ~320 KB, base images 2-600 MB, ML images 2-8 GB.
//  * Conditions (MemoryPressure, DiskPressure, PIDPressure false, Ready true),
//    addresses, nodeInfo. No managedFields.
//
// Running pods (spec.nodeName set, status.phase Running), `running_pods` in all
//  * Daemonsets first, while they take at most 55% of running_pods, in the
//    order node-exporter (monitoring, hostPort 9100, every node),
//    nvidia-device-plugin (GPU nodes), kube-proxy, fluent-bit, ebs-csi-node,
//    dcgm-exporter (GPU nodes). With the defaults (2 pods per node) that is
//    node-exporter and the two GPU daemonsets; with ~10 pods per node, all.
//  * The rest are Deployment (owner ReplicaSet), StatefulSet and Job pods in
//    default, team-a..team-e and batch (general nodes), kube-system,
//    monitoring, logging, ingress-nginx, cert-manager, argocd (infra nodes,
//    with nodeSelector pool=infra and the infra toleration) and ml-serving /
//    ml-training (GPU nodes, 1/2/4/8 GPUs). Requests from "100m"/"128Mi" to 16
//    cpu / 64Gi, some BestEffort, some Guaranteed; istio sidecars in team-b
//    (classic container) and team-c (native sidecar: an init container with
//    restartPolicy Always); init containers; ephemeral-storage requests.
//  * Each node gets a share of the pods (one each when there are enough, the
//    rest in proportion to node size) and aims at a cpu load drawn in 20-70%
//    (GPU nodes: a GPU load of 0-100%), choosing pod sizes to match. A pod is
//    placed only where the engine's own Filter plugins allow it (a Snapshot of
//    the generated nodes as they were before the cordon, evaluated by
//    plugins/: taints, node selector and affinity, resources, pod count, host
//    ports; the generator keeps no copy of these rules) and, by the
//    generator's own policy, within 85% of the node's memory, so no node is
//    over-committed. With the defaults, non-GPU nodes come out at a median
//    ~45% cpu, ~10% of them empty (fewer workload pods than nodes).
//
// Pending pods (no nodeName, status.phase Pending, default-scheduler),
// `pending_pods` in all, in groups of 5-200 identical pods of one ReplicaSet
// (consecutive in file order). Group kinds: plain requests with popular images,
// scale-ups of running deployments, nodeSelector on zone or pool, required node
// affinity (In on instance types, NotIn on zones with Exists on local-ssd, Gt
// on the generation, several OR-ed terms), preferred node affinity with
// weights, GPU pods (toleration, nvidia.com/gpu requests and limits), pods
// tolerating the infra or spot taints, host ports, init containers + native
// sidecar + runtimeClass overhead, BestEffort, ephemeral-storage, hugepages,
// pod-level resources, and a few pods no node can take (a 200-cpu request, a
// nodeSelector on a pool that does not exist). Groups are sized by a first-fit
// dry run with the engine's filters on the capacity left by the running pods,
// so that most pending pods fit.
// With `with_inter_pod_constraints`, some groups also carry podAffinity,
// podAntiAffinity or topologySpreadConstraints (and some running deployments
// a preferred podAntiAffinity); without it none do.
//
// Pods are listed as kubectl lists them: sorted by namespace, then name.
// Every JSON object has its keys in alphabetical order, as kubectl prints.
#pragma once

#include <cstdint>
#include <string>

#include <utility>
#include <vector>
#include "host/common.hpp"

namespace bulkscore {

// SplitMix64 (Steele, Lea, Flood 2014): a small 64-bit PRNG whose output is
// defined by integer arithmetic alone, so a seed gives the same sequence with
// every compiler and standard library. Not for cryptography.
struct SplitMix64 {
  uint64_t state = 0;

  explicit SplitMix64(uint64_t seed = 0) : state(seed) {}

  // A stream derived from a seed and a stream number, independent enough of
  // other streams of the same seed for test data.
  static SplitMix64 derive(uint64_t seed, uint64_t stream) {
    return SplitMix64(mix(seed ^ mix(stream + 0x632be59bd9b4e019ULL)));
  }

  // The SplitMix64 output function: a good stateless 64-bit hash.
  static uint64_t mix(uint64_t z) { return mix64(z); }

  uint64_t next() { return mix(state += 0x9e3779b97f4a7c15ULL); }

  // Uniform in [0, n); n == 0 gives 0. Exact: biased draws are rejected.
  uint64_t below(uint64_t n) {
    if (n == 0) return 0;
    const uint64_t threshold = (0 - n) % n;  // 2^64 mod n
    for (;;) {
      const uint64_t r = next();
      if (r >= threshold) return r % n;
    }
  }

  // Uniform in [lo, hi] (inclusive); requires lo <= hi.
  int64_t between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo) + 1));
  }

  // Uniform in [0, 1) with 53 random bits; exact in IEEE double.
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  bool chance(double p) { return unit() < p; }

  // Fisher-Yates, with our own draws (std::shuffle differs between libraries).
  template <class T>
  void shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) {
      const size_t j = static_cast<size_t>(below(i));
      std::swap(v[i - 1], v[j]);
    }
  }
};

// The largest cluster the generator writes (README, `generate --help`):
// twice the largest cluster of the docs (100,000 nodes) and scheduler_perf's
// pod limit (kPerfMaxPods). At these limits the files are about 1.3 GB of
// nodes, 1.8 GB of running and 1.5 GB of pending pods, and the generator
// holds about twice that in memory (measured at a tenth of each limit);
// past them, a count would run until the machine ran out of memory or time.
constexpr uint32_t kGeneratorMaxNodes = 200'000;
constexpr uint32_t kGeneratorMaxRunningPods = 1'000'000;
constexpr uint32_t kGeneratorMaxPendingPods = 1'000'000;

struct GeneratorOptions {
  uint32_t nodes = 5000;
  uint32_t running_pods = 10000;  // daemonset pods included
  uint32_t pending_pods = 2000;
  uint64_t seed = 1;
  double gpu_node_fraction = 0.05;
  double tainted_node_fraction = 0.1;  // of all nodes; taken from non-GPU nodes
  uint32_t zones = 3;
  std::string region = "region-1";
  // Adds podAffinity, podAntiAffinity and topologySpreadConstraints to some
  // pending groups and a preferred podAntiAffinity to some deployments.
  bool with_inter_pod_constraints = false;
};

struct GeneratedCluster {
  std::string nodes_json;  // v1 NodeList
  std::string pods_json;   // v1 PodList: running and pending pods
  // v1 List: Namespaces, ReplicaSets, StatefulSets and a Service per
  // Deployment and StatefulSet (what `--objects` reads).
  std::string objects_json;
};

// Throws InputError on options that cannot describe a cluster (zones == 0,
// fractions outside [0, 1] or summing above 1, an empty region, more running
// pods than the nodes' pod slots) or that are past the limits above.
GeneratedCluster generate_cluster(const GeneratorOptions& options);

// generate_cluster, then the files written as a unit (write_files_atomically):
// all appear, or none changes. No objects file when `objects_path` is empty.
void write_generated_cluster(const GeneratorOptions& options, const std::string& nodes_path,
                             const std::string& pods_path, const std::string& objects_path = "");

}  // namespace bulkscore
