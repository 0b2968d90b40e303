// The parsed Kubernetes objects bulkscore reads (host only).
//
// These mirror the parts of core/v1 Node and Pod that the scheduler reads,
// already validated: quantities are integers (cpu in millicores, everything
// else in base units, both rounded up as Kubernetes does), enum strings are
// kept verbatim. "Present but empty" and "absent" are distinguished wherever
// upstream distinguishes them (std::optional, or a has_* flag).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace bulkscore {

// Resource name -> amount. cpu in millicores; memory, ephemeral-storage,
// hugepages-* in bytes; pods and extended resources as counts. Found by a
// name of any string type without building a std::string (a name past 15
// characters, "ephemeral-storage", would allocate for every lookup).
using ResourceList = std::map<std::string, int64_t, std::less<>>;
using StringMap = std::map<std::string, std::string>;

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule | PreferNoSchedule | NoExecute
};

struct Toleration {
  std::string key;
  std::string op;  // "" (= Equal) | Equal | Exists | Gt | Lt
  std::string value;
  std::string effect;  // "" matches every effect
};

struct ContainerImage {
  std::vector<std::string> names;
  int64_t size_bytes = 0;
};

struct Node {
  std::string name;
  StringMap labels;
  std::vector<Taint> taints;
  bool unschedulable = false;
  ResourceList allocatable;  // status.allocatable (capacity if allocatable is absent)
  std::vector<ContainerImage> images;
};

struct ContainerPort {
  int32_t container_port = 0;
  int32_t host_port = 0;  // 0 = none
  std::string protocol;   // "" means TCP
  std::string host_ip;    // "" means 0.0.0.0
};

struct Container {
  std::string name;
  std::string image;
  ResourceList requests;
  bool restart_policy_always = false;  // init containers only: a sidecar
  std::vector<ContainerPort> ports;
};

struct NodeSelectorRequirement {
  std::string key;
  std::string op;  // In | NotIn | Exists | DoesNotExist | Gt | Lt
  std::vector<std::string> values;
};

struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  std::vector<NodeSelectorRequirement> match_fields;
};

struct NodeSelector {
  std::vector<NodeSelectorTerm> terms;
};

struct PreferredSchedulingTerm {
  int32_t weight = 0;
  NodeSelectorTerm preference;
};

struct NodeAffinity {
  std::optional<NodeSelector> required;  // requiredDuringSchedulingIgnoredDuringExecution
  std::vector<PreferredSchedulingTerm> preferred;
  bool has_preferred = false;  // the preferred list is present (even if empty)
};

struct LabelSelectorRequirement {
  std::string key;
  std::string op;  // In | NotIn | Exists | DoesNotExist
  std::vector<std::string> values;
};

struct LabelSelector {
  StringMap match_labels;
  std::vector<LabelSelectorRequirement> match_expressions;
};

struct PodAffinityTerm {
  std::optional<LabelSelector> label_selector;  // nil matches nothing
  std::vector<std::string> namespaces;
  std::string topology_key;
  std::optional<LabelSelector> namespace_selector;  // nil matches no namespace
  std::vector<std::string> match_label_keys;
  std::vector<std::string> mismatch_label_keys;
};

struct WeightedPodAffinityTerm {
  int32_t weight = 0;
  PodAffinityTerm term;
};

struct PodAffinity {
  std::vector<PodAffinityTerm> required;
  std::vector<WeightedPodAffinityTerm> preferred;
};

struct Affinity {
  std::optional<NodeAffinity> node_affinity;
  std::optional<PodAffinity> pod_affinity;
  std::optional<PodAffinity> pod_anti_affinity;
};

struct TopologySpreadConstraint {
  int32_t max_skew = 0;
  std::string topology_key;
  std::string when_unsatisfiable;  // DoNotSchedule | ScheduleAnyway
  std::optional<LabelSelector> label_selector;
  std::optional<int32_t> min_domains;
  std::string node_affinity_policy;  // "" (= Honor) | Honor | Ignore
  std::string node_taints_policy;    // "" (= Ignore) | Honor | Ignore
  std::vector<std::string> match_label_keys;
};

struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
};

struct Pod {
  std::string namespace_name = "default";
  std::string name;
  std::string uid;
  StringMap labels;
  StringMap annotations;
  std::vector<OwnerReference> owner_references;
  bool deleting = false;  // metadata.deletionTimestamp is set

  std::string node_name;       // spec.nodeName
  std::string scheduler_name;  // spec.schedulerName ("default-scheduler" if absent)
  std::string phase;           // status.phase
  std::string nominated_node_name;  // status.nominatedNodeName
  int32_t priority = 0;             // spec.priority, or as resolve_pod_priorities resolved it
  bool has_priority = false;        // spec.priority is present
  std::string priority_class_name;  // spec.priorityClassName
  // Gang scheduling (PodGroupObject): spec.workloadRef (v1.35), the
  // Workload, its pod group and the replica key; all empty when absent.
  // Coscheduling's label scheduling.x-k8s.io/pod-group stays in `labels`.
  std::string workload_name;
  std::string workload_pod_group;
  std::string workload_replica_key;
  // spec.schedulingGroup.podGroupName (v1.36, which removed workloadRef):
  // the standalone PodGroup (scheduling.k8s.io/v1alpha2) in the pod's
  // namespace; empty when absent. The reader refuses a pod that sets both.
  std::string scheduling_group;
  // spec.preemptionPolicy: "" (PreemptLowerPriority, or the class's), or
  // "PreemptLowerPriority", "Never".
  std::string preemption_policy;
  // status.startTime in nanoseconds since the epoch; absent for a pod that
  // has not started (preemption compares such a pod as started "now").
  std::optional<int64_t> start_time_ns;
  // status.conditions has DisruptionTarget True with reason
  // PreemptionByScheduler: the scheduler's preemption is ending it.
  bool preempted_by_scheduler = false;

  StringMap node_selector;
  bool has_node_selector = false;  // spec.nodeSelector present (even if empty)
  std::optional<Affinity> affinity;
  std::vector<Toleration> tolerations;
  std::vector<TopologySpreadConstraint> topology_spread_constraints;

  std::vector<Container> containers;
  std::vector<Container> init_containers;
  ResourceList overhead;
  ResourceList pod_level_requests;  // spec.resources.requests

  // Where it came from, for messages: "pods.json: items[12]".
  std::string origin;

  std::string key() const {
    std::string k;  // one allocation at most (the concatenation made two)
    k.reserve(namespace_name.size() + 1 + name.size());
    k.append(namespace_name).append(1, '/').append(name);
    return k;
  }
  // The key the engine's events know a pod by, as kube-scheduler's cache
  // does (GetPodKey): its UID, or namespace/name where it has none.
  std::string cache_key() const { return uid.empty() ? key() : uid; }
};

// The other objects the topology plugins read (`--objects`, what
// `kubectl get svc,rc,rs,sts,ns -A -o json` prints): the Services,
// ReplicationControllers, ReplicaSets and StatefulSets whose selectors give a
// pod its default spreading selector (upstream's DefaultSelector), and the
// Namespaces whose labels a namespaceSelector reads.
struct Namespace {
  std::string name;
  StringMap labels;
  std::string origin = {};  // "objects.json: items[3]"; "" when not read from a file
};

// A workload object reduced to what DefaultSelector reads: its namespace and
// its pod selector. Services and ReplicationControllers select with a plain
// label map (`spec.selector`); ReplicaSets and StatefulSets with a
// LabelSelector.
struct SelectingObject {
  enum class Kind { Service, ReplicationController, ReplicaSet, StatefulSet };
  Kind kind = Kind::Service;
  std::string namespace_name;
  std::string name;
  // spec.selector is present (not null). A Service without one selects no
  // pod, while an empty map selects every pod of its namespace.
  bool has_selector = false;
  StringMap selector_map;                       // Service, ReplicationController
  std::optional<LabelSelector> label_selector;  // ReplicaSet, StatefulSet
  std::string origin;                           // "objects.json: items[3]"
};

// A SharedDeviceGroup (deviceshare.io/v1alpha1, cluster-scoped; the
// SharedDeviceGroup plugin, docs/gpu-placement.md): the pods annotated with
// its name share one node's devices, which the group holds from the moment
// its first pod is placed until its last pod or the group itself is gone.
struct SharedDeviceGroup {
  enum class Strategy : uint8_t { BinPack, Spread };
  std::string name;
  // spec.resources: device resource name -> devices the group holds (1..64).
  std::map<std::string, int32_t> resources;
  StringMap node_selector;  // spec.nodeSelector: labels the node must carry
  Strategy strategy = Strategy::BinPack;
  // status: the node the group is bound to ("" when not bound) and the
  // devices it holds there, by resource name, as the controller records them.
  std::string bound_node;
  std::map<std::string, std::vector<int32_t>> bound_devices;
  std::string origin;  // "objects.json: items[3]"
};

// A PriorityClass (scheduling.k8s.io/v1): the priority a pod naming it
// gets at admission, and its preemption policy.
struct PriorityClass {
  std::string name;
  int32_t value = 0;
  bool global_default = false;
  std::string preemption_policy = "PreemptLowerPriority";  // or "Never"
  std::string origin;
};

// A PodDisruptionBudget (policy/v1) reduced to what preemption reads
// (filterPodsWithPDBViolation) and what the disruption controller would
// recompute after an eviction.
struct PodDisruptionBudget {
  std::string namespace_name;
  std::string name;
  std::optional<LabelSelector> selector;  // spec.selector; absent or empty: matches no pod here
  // spec.minAvailable / spec.maxUnavailable as written ("3", "30%"); at most one.
  std::string min_available;
  std::string max_unavailable;
  // status
  int32_t disruptions_allowed = 0;
  int32_t current_healthy = 0;
  int32_t desired_healthy = 0;
  int32_t expected_pods = 0;
  std::vector<std::string> disrupted_pods;  // status.disruptedPods' pod names, sorted
  std::string origin;
};

// Topology-aware gangs (bulkscore's own, beyond both APIs; docs/plugins.md
// "Topology-aware gangs"): an annotation on the Workload or PodGroup whose
// value is a node label key. Required: the members placed now all land in
// one domain of that key (nodes sharing its value) or the group is
// rejected; preferred: one domain if any can hold the group, else anywhere.
// The names follow Kueue's podset-required-topology / -preferred-topology.
inline constexpr const char* kGangRequiredTopology = "bulkscore.io/gang-required-topology";
inline constexpr const char* kGangPreferredTopology = "bulkscore.io/gang-preferred-topology";

// A pod group for gang scheduling (issue 23; docs/plugins.md "Pod groups"),
// from one of three APIs reduced to one shape:
//  * kWorkload: a Workload (scheduling.k8s.io/v1alpha1, Kubernetes v1.35)
//    names up to 8 groups in spec.podGroups[], each with policy.basic or
//    policy.gang.minCount; pods join with spec.workloadRef {name, podGroup,
//    podGroupReplicaKey}. One entry per podGroups[] item.
//  * kPodGroup: a standalone PodGroup (scheduling.k8s.io/v1alpha2, v1.36):
//    spec.schedulingPolicy (basic or gang.minCount, as a Workload's
//    podGroups[] item's policy); pods join with
//    spec.schedulingGroup.podGroupName.
//  * kCoscheduling: scheduler-plugins' PodGroup (scheduling.x-k8s.io/v1alpha1):
//    spec.minMember, spec.minResources, spec.scheduleTimeoutSeconds; pods join
//    with the label scheduling.x-k8s.io/pod-group. Always a gang.

struct PodGroupObject {
  enum class Api : uint8_t { kWorkload, kPodGroup, kCoscheduling };
  Api api = Api::kWorkload;
  std::string namespace_name;
  std::string name;       // the Workload's or the PodGroup's metadata.name
  std::string pod_group;  // kWorkload: the podGroups[] item's name; else empty
  bool gang = false;      // policy.gang (kCoscheduling: always); else basic
  int32_t min_count = 0;  // gang.minCount, minMember
  ResourceList min_resources;            // kCoscheduling: spec.minResources
  int32_t schedule_timeout_seconds = 0;  // kCoscheduling; 0: not set
  // Topology-aware gang (the annotations kGangRequiredTopology /
  // kGangPreferredTopology on the Workload or PodGroup): the node label key whose one domain should
  // hold the gang's members; "" when the gang has none.
  std::string topology_key;
  bool topology_required = false;  // required (else preferred)
  std::string origin;              // file and item, for messages
  // "ns/name" or, for a Workload's group, "ns/name/podGroup".
  std::string key() const {
    return namespace_name + "/" + name + (pod_group.empty() ? "" : "/" + pod_group);
  }
};

// A v1.36 Workload (scheduling.k8s.io/v1alpha2): its podGroupTemplates
// only template the PodGroups that pods name, so nothing of it bears on
// scheduling; kept so that the same Workload read twice is refused.
struct TemplateWorkload {
  std::string namespace_name;
  std::string name;
  std::string origin;
};

struct ClusterObjects {
  std::vector<Namespace> namespaces;
  std::vector<SelectingObject> selecting;  // file order
  std::vector<SharedDeviceGroup> device_groups;  // file order; names unique
  std::vector<PriorityClass> priority_classes;   // file order; names unique
  std::vector<PodDisruptionBudget> pdbs;         // file order; namespace/name unique
  std::vector<PodGroupObject> pod_groups;        // file order; one per group (a Workload's several)
  std::vector<TemplateWorkload> template_workloads;  // file order; v1alpha2 Workloads
};

// What the CLI and the engine load: nodes, and pods either running on a node
// (spec.nodeName set, not Succeeded/Failed) or pending (no nodeName).
struct Cluster {
  std::vector<Node> nodes;
  std::vector<Pod> running_pods;  // bound to a node present in `nodes`
  std::vector<Pod> pending_pods;  // file order
  ClusterObjects objects;         // --objects (may be empty)
  // Pods left out by assemble_cluster, one line each: `warnings` for what
  // the user should hear about (a running pod on a node missing from the
  // node list), `notes` for the expected (terminal pods, pods being deleted,
  // other schedulers' pods). The library does not log; the caller decides.
  std::vector<std::string> warnings;
  std::vector<std::string> notes;
};

}  // namespace bulkscore
