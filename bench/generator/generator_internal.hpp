// The generator's records and its one class (host only, internal to
// bench/generator). The work is split by job: fleet.cpp (nodes and their
// image lists), workloads.cpp (pod templates, running and pending workloads),
// placement.cpp (running pods onto nodes, pending groups sized by a dry run),
// emit.cpp (the two JSON documents), generator.cpp (options, order of work).
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/generator/catalogue.hpp"
#include "bench/generator/generator.hpp"
#include "host/engine/pod_query.hpp"
#include "host/input/model.hpp"
#include "host/io/json_writer.hpp"
#include "host/snapshot/snapshot.hpp"

namespace bulkscore::gen {

// ---------------------------------------------------------------- nodes

enum class Role : uint8_t { General, Spot, Infra, Gpu };

struct NodeRec {
  std::string name;
  uint32_t index = 0;
  uint16_t type = 0;
  uint16_t zone = 0;
  Role role = Role::General;
  bool cordoned = false;
  bool local_ssd = false;
  uint8_t os = 0;  // index into kOsVariants
  bool old_kubelet = false;
  int64_t created = 0;
  uint64_t emit_seed = 0;

  int64_t cap_cpu = 0, cap_mem_ki = 0, cap_eph_ki = 0;
  int64_t alloc_cpu = 0, alloc_mem = 0, alloc_eph = 0, hugepages = 0;  // milli, bytes
  int32_t max_pods = 0;
  int32_t gpus = 0;

  ImageSet image_set;            // images of the pods placed here
  std::vector<uint16_t> images;  // final list, largest first
};

inline const InstanceType& type_of(const NodeRec& n) { return kTypes[n.type]; }
inline Pool pool_of(const NodeRec& n) { return n.role == Role::Infra ? Pool::Infra : type_of(n).pool; }

// ---------------------------------------------------------------- pod templates

struct Res {
  int64_t cpu = 0, mem = 0, eph = 0, gpu = 0, hp = 0;
};

struct PortSpec {
  int32_t container_port = 0;
  int32_t host_port = 0;
  bool udp = false;
  const char* name = nullptr;
};

struct ContainerSpec {
  std::string name;
  int image = 0;
  int64_t cpu = kAbsent, mem = kAbsent, eph = kAbsent;  // requests
  int64_t gpu = 0, hp = 0;                              // requests == limits when > 0
  int64_t cpu_limit = kAbsent, mem_limit = kAbsent;
  bool sidecar = false;  // init container with restartPolicy Always
  std::vector<PortSpec> ports;
};

struct Requirement {
  std::string key;
  const char* op = "In";
  std::vector<std::string> values;
};

struct PreferredTerm {
  int32_t weight = 1;
  std::vector<Requirement> reqs;
};

struct TolerationSpec {
  std::string key;
  const char* op = "Equal";
  std::string value;
  const char* effect = "";
  int64_t seconds = kAbsent;
};

struct PodAffinitySpec {
  bool anti = false;
  bool required = false;
  int32_t weight = 0;  // preferred only
  std::string app;     // labelSelector matchLabels app=<app>
  std::string ns;      // namespaces: [ns]; empty: the pod's own namespace
  const char* topology_key = "";
};

struct SpreadSpec {
  int32_t max_skew = 1;
  const char* topology_key = "";
  bool do_not_schedule = true;
  std::string app;
};

struct PodTemplate {
  std::vector<ContainerSpec> init;
  std::vector<ContainerSpec> containers;
  int64_t overhead_cpu = kAbsent, overhead_mem = kAbsent;
  std::string runtime_class;
  int64_t pod_cpu = kAbsent, pod_mem = kAbsent;                    // spec.resources.requests
  std::vector<std::pair<std::string, std::string>> node_selector;  // sorted by key
  std::vector<std::vector<Requirement>> required_terms;            // OR of ANDs
  std::vector<PreferredTerm> preferred;
  std::vector<PodAffinitySpec> pod_affinity;
  std::vector<SpreadSpec> spread;
  std::vector<TolerationSpec> tolerations;
  bool daemonset_tolerations = false;  // the set the daemonset controller adds
  const char* priority_class = "";
  int32_t priority = 0;
  std::string service_account = "default";
  bool host_network = false;
  const char* restart_policy = "Always";
  int32_t grace_seconds = 30;
  std::vector<std::pair<std::string, std::string>> extra_labels;
  std::vector<std::pair<std::string, std::string>> annotations;

  // Derived by Generator::finish_workload().
  Res eff;  // the pod's request as the scheduler computes it (host/input/pod_resources)
  const char* qos = "BestEffort";
  ImageSet image_set;
};

enum class OwnerKind : uint8_t { ReplicaSet, StatefulSet, DaemonSet, Job };

// Where a workload's pods are placed.
enum class Target : uint8_t { General, Infra, Gpu, GpuCpuOnly, DaemonSet, Pending };

struct Workload {
  std::string ns;
  std::string name;  // Deployment / StatefulSet / DaemonSet / Job name
  std::string app;
  OwnerKind kind = OwnerKind::ReplicaSet;
  Target target = Target::General;
  std::string hash;       // pod-template-hash / controller-revision-hash
  std::string owner_uid;  // uid of the owning ReplicaSet / StatefulSet / ...
  uint64_t salt = 0;
  int64_t created = 0;
  uint32_t next_ordinal = 0;
  uint32_t running = 0;  // pods of it placed on nodes
  PodTemplate tmpl;
  // A pod of the workload as bulkscore reads it: the generator's own JSON
  // through the one Kubernetes parser (set by Generator::finish_workload).
  Pod model;
};

struct PodRec {
  uint32_t workload = 0;
  int32_t node = -1;  // -1: pending
  uint32_t ordinal = 0;
  std::string name;
};

// ---------------------------------------------------------------- placement

// The value of label `key` (a LabelKey) on node `n`; false when the node does
// not have the label.
bool label_of(const std::vector<std::string>& zone_names, const std::string& region, const NodeRec& n, int key,
              std::string_view& out);

// The engine's view of the cluster being generated: a Snapshot of the nodes
// and of the pods placed so far, judged by the engine's own Filter plugins, so
// that the generator places pods exactly where bulkscore (and kube-scheduler)
// would allow them; the generator keeps no copy of the rules. Per workload it
// prepares two queries of the default profile's filters: where its pods may
// run at all (node name, cordon, taints, node selector and affinity: every
// filter but the two about room) and whether one more fits there (NodePorts,
// NodeResourcesFit).
class PlacementSnapshot {
 public:
  PlacementSnapshot(const std::vector<Node>& nodes, std::vector<Pod> running);

  // May a pod of workload `wi` (`pod` is its model) run on `node` at all?
  bool allowed(uint32_t wi, const Pod& pod, uint32_t node);
  // Is there room on `node` for one more: resources, pod count, host ports?
  bool has_room(uint32_t wi, const Pod& pod, uint32_t node);
  // Assumes `pod` on `node`, as the engine does after a scheduling decision.
  void place(const Pod& pod, uint32_t node) { snap_.add_pod(pod, node); }

  // What the pods placed on `node` request of `resource` (0 when no node has
  // that resource), and how many there are.
  int64_t requested(std::string_view resource, uint32_t node) const;
  int32_t pods_on(uint32_t node) const { return snap_.pod_count()[node]; }

 private:
  struct Queries {
    size_t strings = 0;      // the snapshot's dictionary and resources when they
    uint32_t resources = 0;  // were prepared: a change invalidates them
    PodQuery where, room;
  };
  const Queries& queries(uint32_t wi, const Pod& pod);
  bool passes(const PodQuery& q, uint32_t node) const;

  Snapshot snap_;
  ProfilePlan where_, room_;
  std::vector<std::optional<Queries>> cache_;  // per workload index
};

// The whole generation: one object per call, phases in order (see run()).
class Generator {
 public:
  explicit Generator(const GeneratorOptions& o) : opt_(o), images_(build_images()) {}

  GeneratedCluster run();

 private:
  // ---- generator.cpp: options
  void validate() const;
  static std::string zone_letters(uint32_t z);

  // ---- fleet.cpp: nodes, and their image lists once pods are placed
  void make_nodes();
  void make_node_images();

  // ---- workloads.cpp: running workloads
  // Derives what the generator needs from a finished template: the model pod
  // (emitted and parsed back), its request by the library's rules, QoS class
  // and images.
  void finish_workload(Workload& w);
  Workload& new_workload(SplitMix64& rng, const std::string& ns, const std::string& base, OwnerKind kind,
                         Target target);
  std::string unique_name(const std::string& ns, const std::string& base);
  static ContainerSpec container(std::string name, int image, int64_t cpu, int64_t mem);
  static void tolerate(PodTemplate& t, const TaintDef& taint, const char* op);
  void make_daemonsets(SplitMix64& rng, uint64_t budget);
  // A general-purpose workload whose pods ask about `cpu` millicores in all
  // (0: BestEffort).
  void make_general_workload(SplitMix64& rng, int64_t cpu);
  void make_infra_workloads(SplitMix64& rng);
  void make_gpu_workloads(SplitMix64& rng, uint32_t count);
  // The last resort that always fits a free pod slot.
  void make_debug_workload(SplitMix64& rng);

  // ---- workloads.cpp: pending workloads, one scenario each
  enum Scenario : int {
    kPlain,
    kScaleUp,
    kSelectorZone,
    kSelectorPool,
    kAffinityIn,
    kAffinityNotInExists,
    kAffinityGt,
    kPreferred,
    kGpu,
    kInfraToleration,
    kSpotToleration,
    kHostPort,
    kSidecarOverhead,
    kBestEffort,
    kEphemeral,
    kHugepages,
    kPodLevel,
    kAntiAffinity,
    kSpread,
    kPodAffinity,
    kHugeCpu,
    kMissingPool,
    kScenarioCount
  };
  static bool inter_pod_scenario(int s) { return s == kAntiAffinity || s == kSpread || s == kPodAffinity; }
  static bool impossible_scenario(int s) { return s == kHugeCpu || s == kMissingPool; }
  static Requirement req(int key, const char* op, std::vector<std::string> values);
  // A plain web-ish container with a popular image, `cpu` millicores.
  ContainerSpec pending_container(SplitMix64& rng, const std::string& name, int64_t cpu);
  int64_t pending_cpu(SplitMix64& rng);
  // Builds one pending workload for scenario `s`; returns its index, or -1
  // when the scenario cannot be built here (e.g. no running deployment).
  int64_t build_pending(SplitMix64& rng, int s);

  // ---- placement.cpp: running pods onto nodes, pending groups
  std::string pod_name(Workload& w, uint32_t ordinal) const;
  void add_pod(uint32_t wi, int32_t node);
  bool try_place(uint32_t wi, uint32_t node);
  // Tries classes from `cls` down, a few draws each.
  bool place_from(SplitMix64& rng, const std::vector<std::vector<uint32_t>>& lists, int cls, uint32_t node);
  void place_running();
  // First fit from a random start on the pending snapshot (a copy of the
  // running pods' usage): how many of `want` pods of workload `wi` still fit,
  // booking them.
  uint32_t dry_run(SplitMix64& rng, uint32_t wi, uint32_t want);
  void make_pending();
  // The nodes as the engine reads them: the generator's own JSON (without
  // images, drawn after placement and not a filter's business) through the
  // one Kubernetes parser. Before the cordon: as they were when the running
  // pods were placed.
  const std::vector<Node>& model_nodes();
  std::vector<Node> model_nodes_before_cordon();

  // ---- emit.cpp: the two documents
  static void write_taint(JsonWriter& j, const TaintDef& t, int64_t added);
  void write_node(JsonWriter& j, const NodeRec& nd) const;
  std::string emit_nodes() const;
  static void write_resources(JsonWriter& j, const ContainerSpec& c);
  void write_container(JsonWriter& j, const ContainerSpec& c) const;
  static void write_requirements(JsonWriter& j, const std::vector<Requirement>& reqs);
  static void write_app_selector(JsonWriter& j, const std::string& app);
  static void write_pod_affinity_term(JsonWriter& j, const PodAffinitySpec& a);
  void write_pod_affinity(JsonWriter& j, const PodTemplate& t, bool anti) const;
  static void write_toleration(JsonWriter& j, const char* effect, const std::string& key, const char* op,
                               int64_t seconds, const std::string& value);
  void write_pod(JsonWriter& j, SplitMix64& rng, const PodRec& p, uint32_t& pod_ip) const;
  std::string emit_pods() const;
  std::string emit_objects() const;

  const GeneratorOptions& opt_;
  std::vector<Image> images_;
  std::vector<std::string> zone_names_;
  std::vector<NodeRec> nodes_;
  std::vector<Node> model_nodes_;               // see model_nodes()
  std::unique_ptr<PlacementSnapshot> running_;  // nodes before the cordon + running pods
  std::unique_ptr<PlacementSnapshot> pending_;  // nodes + running pods + the pending dry run
  std::vector<Workload> workloads_;
  std::vector<PodRec> pods_;
  std::set<std::string> used_names_;
  uint32_t infra_nodes_ = 0;
  uint32_t gpu_nodes_ = 0;
  uint32_t debug_workload_ = 0;
  uint32_t host_port_groups_ = 0;
};

}  // namespace bulkscore::gen
