// KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1), resolved.
//
// parse_scheduler_config() reads the YAML, applies v1 defaulting, merges the
// user's plugin sets into the default profile exactly as upstream's
// mergePlugins does, validates as upstream does, and produces one
// ProfileConfig per profile with the final ordered plugin list of each
// extension point bulkscore runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "host/input/device_groups.hpp"
#include "host/input/devices.hpp"
#include "host/input/model.hpp"

namespace bulkscore {

struct ResourceSpec {
  std::string name;
  int64_t weight = 1;
};

struct UtilizationShapePoint {
  int32_t utilization = 0;  // 0..100
  int32_t score = 0;        // 0..10
};

enum class ScoringStrategyType { LeastAllocated, MostAllocated, RequestedToCapacityRatio };

struct NodeResourcesFitArgs {
  std::vector<std::string> ignored_resources;
  std::vector<std::string> ignored_resource_groups;
  ScoringStrategyType strategy = ScoringStrategyType::LeastAllocated;
  std::vector<ResourceSpec> resources{{"cpu", 1}, {"memory", 1}};
  std::vector<UtilizationShapePoint> shape;  // RequestedToCapacityRatio only
};

struct NodeResourcesBalancedAllocationArgs {
  std::vector<ResourceSpec> resources{{"cpu", 1}, {"memory", 1}};
};

struct NodeAffinityArgs {
  // addedAffinity: applied to every pod of the profile.
  std::optional<NodeAffinity> added_affinity;
};

struct InterPodAffinityArgs {
  int32_t hard_pod_affinity_weight = 1;
  bool ignore_preferred_terms_of_existing_pods = false;
};

struct PodTopologySpreadArgs {
  std::string defaulting_type = "System";  // System | List
  std::vector<TopologySpreadConstraint> default_constraints;
};

// bulkscore's own WorkloadType plugin (docs/plugins.md): which pod label
// marks the workload type, and what each type needs from a node.
struct WorkloadTypeArgs {
  std::string label_key = "workload-type";
  std::string cpu_intensive_value = "CPU-intensive";
  std::string gpu_intensive_value = "GPU-intensive";
  // The allocatable cpu (millicores) a node needs for a CPU-intensive pod.
  int64_t cpu_threshold_milli = 2000;
  // A GPU-intensive pod needs a node with any one of them allocatable (> 0).
  std::vector<std::string> gpu_resource_names{"nvidia.com/gpu"};
};

// bulkscore's own NodeData plugin (docs/plugins.md): which of the
// embedder's node data columns a profile reads, and what a node without
// data gets. Empty column names: that half of the plugin does nothing.
enum class NodeDataNormalization : uint8_t { None, Default, Reverse };
struct NodeDataArgs {
  std::string filter_column;          // "": no Filter
  bool filter_default_fails = false;  // filterDefault: Pass (false) or Fail
  std::string score_column;           // "": no Score
  NodeDataNormalization score_normalization = NodeDataNormalization::None;
  int32_t score_default = 0;  // 0..100
};

// A plugin at one extension point, with its Score weight (Score only).
struct PluginEntry {
  std::string name;
  int32_t weight = 1;
};

// How GpuShare picks a node's devices for a pod (docs/gpu-placement.md).
enum class DeviceSelection {
  Best,   // the fitting devices with the least free units first (a share packs)
  Worst,  // the most free units first (a share spreads)
  First,  // the lowest indices
  // FGD: the device whose use grows the node's fragmentation least
  // (GpuFragmentationArgs' typical tasks); whole devices: the lowest indices.
  Fragmentation,
  // Uniformly among the fitting devices, from a hash of the pod and the seed.
  Random,
};

// GpuFragmentationArgs (FGD's Score and the Fragmentation device choice):
// the target workload fragmentation is measured against. Empty: the CLI
// fills it in from the pending pods (typical_tasks), a library caller must.
struct GpuFragmentationArgs {
  std::vector<TypicalTask> typical_tasks;
};

// The baselines' normalizers (GpuBestFit, GpuDotProduct): the largest node's
// cpu and GPU units, as the ATC '23 simulator fixes them for its trace.
struct GpuScoreArgs {
  int64_t max_cpu_milli = 128000;
  int64_t max_gpu_units = 8000;
  uint64_t seed = 0;  // GpuRandomFit and the Random device choice
};

// GpuShareArgs (bulkscore's own plugin): the device model and the selection.
// Every profile that enables GpuShare must name the same model: the
// snapshot keeps one device table.
struct GpuShareArgs {
  DeviceModel model;
  DeviceSelection selection = DeviceSelection::Best;
  // deviceSelection was written: otherwise a profile that scores with FGD
  // takes FGD's device (Fragmentation), the one its score assumed.
  bool selection_given = false;
};

// SharedDeviceGroupArgs (bulkscore's own plugin): the node label and the
// pod annotations shared device groups use. Every profile that enables the
// plugin must name the same ones: the snapshot keeps one set of groups.
struct SharedDeviceGroupArgs {
  DeviceGroupModel model;
};

// DefaultPreemptionArgs (v1.35.4 defaults): how many nodes the dry run
// must find as candidates (GetOffsetAndNumCandidates).
struct DefaultPreemptionArgs {
  int32_t min_candidate_nodes_percentage = 10;
  int32_t min_candidate_nodes_absolute = 100;
};

// A profile's tie-break among the nodes that share the best total
// (bulkscore's extension field `tieBreak`, docs/gpu-placement.md): unset
// takes the engine's (--tie-break; upstream's random by default).
enum class ProfileTieBreak : uint8_t { kEngineDefault = 0, kRandom = 1, kFirst = 2 };

struct ProfileConfig {
  std::string scheduler_name = "default-scheduler";
  ProfileTieBreak tie_break = ProfileTieBreak::kEngineDefault;
  // Effective value: the profile's, else the global one, else 100 (bulkscore
  // scores every node unless told otherwise). 0 = upstream's adaptive value.
  int32_t percentage_of_nodes_to_score = 100;

  // Final ordered lists per extension point (after defaults, multiPoint
  // expansion, enable/disable and '*'). Only points bulkscore runs are kept;
  // plugins are upstream names verbatim.
  std::vector<std::string> pre_filter;
  std::vector<std::string> filter;
  std::vector<std::string> pre_score;
  std::vector<PluginEntry> score;
  // PostFilter, in order: DynamicResources (its message for a pod without
  // claims) and DefaultPreemption are what bulkscore runs.
  std::vector<std::string> post_filter;

  NodeResourcesFitArgs fit_args;
  NodeResourcesBalancedAllocationArgs balanced_args;
  NodeAffinityArgs node_affinity_args;
  InterPodAffinityArgs inter_pod_affinity_args;
  PodTopologySpreadArgs pod_topology_spread_args;
  GpuShareArgs gpu_share_args;
  GpuFragmentationArgs gpu_fragmentation_args;
  GpuScoreArgs gpu_score_args;
  WorkloadTypeArgs workload_type_args;
  SharedDeviceGroupArgs shared_device_group_args;
  DefaultPreemptionArgs default_preemption_args;
  NodeDataArgs node_data_args;
};

struct SchedulerConfig {
  std::vector<ProfileConfig> profiles;  // at least one
  int32_t parallelism = 16;             // parsed and validated; not used
};

// The default configuration: one profile "default-scheduler", upstream's
// v1.35.4 default plugins and weights, percentageOfNodesToScore 100.
SchedulerConfig default_scheduler_config();

// Parses and validates a KubeSchedulerConfiguration YAML file.
// Throws InputError naming the file and the field on any problem.
SchedulerConfig load_scheduler_config(const std::string& path);
SchedulerConfig parse_scheduler_config(const std::string& yaml_text, const std::string& origin);

}  // namespace bulkscore
