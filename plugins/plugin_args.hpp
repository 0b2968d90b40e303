// Plugin args (<Name>Args of kubescheduler.config.k8s.io/v1): each plugin's
// decoding, v1 defaulting and validation lives beside the plugin:
//
//   plugins/node_resources_fit_args.cpp
//   plugins/node_resources_balanced_allocation_args.cpp
//   plugins/node_affinity_args.cpp
//   plugins/workload_type_args.cpp   (bulkscore's own plugins: also gpu_*_args.cpp,
//                                      shared_device_group_args.cpp, node_data_args.cpp)
//   plugins/args/*.cpp   plugins bulkscore has no rule for yet (their args
//                        are still read and validated, as upstream does)
//
// host/input/config.cpp finds them through plugin_args_table(). All of them
// read with the one strict reader (host/input/yaml_reader.hpp) and report
// paths relative to the pluginConfig entry ("<file>: profiles[0].
// pluginConfig[1] (NodeResourcesFit): scoringStrategy.type: ...").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "host/input/config.hpp"
#include "host/input/yaml_reader.hpp"

namespace bulkscore {

struct PluginArgsContext {
  // The profile enables the plugin at some extension point, so the
  // framework builds it (and a plugin's constructor may validate more).
  bool enabled = false;
};

// `args` is the entry's args node: undefined or null when none were given,
// which means the v1 defaults. `r` reports relative to the entry.
NodeResourcesFitArgs parse_node_resources_fit_args(const YamlReader& r, const YAML::Node& args,
                                                   const PluginArgsContext& ctx);
NodeResourcesBalancedAllocationArgs parse_node_resources_balanced_allocation_args(const YamlReader& r,
                                                                                  const YAML::Node& args);
NodeAffinityArgs parse_node_affinity_args(const YamlReader& r, const YAML::Node& args);
InterPodAffinityArgs parse_inter_pod_affinity_args(const YamlReader& r, const YAML::Node& args);
PodTopologySpreadArgs parse_pod_topology_spread_args(const YamlReader& r, const YAML::Node& args);
GpuShareArgs parse_gpu_share_args(const YamlReader& r, const YAML::Node& args);
GpuFragmentationArgs parse_gpu_fragmentation_args(const YamlReader& r, const YAML::Node& args);
GpuScoreArgs parse_gpu_score_args(const YamlReader& r, const YAML::Node& args);
WorkloadTypeArgs parse_workload_type_args(const YamlReader& r, const YAML::Node& args);
SharedDeviceGroupArgs parse_shared_device_group_args(const YamlReader& r, const YAML::Node& args);
NodeDataArgs parse_node_data_args(const YamlReader& r, const YAML::Node& args, const PluginArgsContext& ctx);
// Plugins bulkscore does not run: validated, nothing kept.
DefaultPreemptionArgs parse_default_preemption_args(const YamlReader& r, const YAML::Node& args);
void check_volume_binding_args(const YamlReader& r, const YAML::Node& args);
void check_dynamic_resources_args(const YamlReader& r, const YAML::Node& args);

// The in-tree plugins with a registered args kind, and where their args go.
struct PluginArgsEntry {
  std::string_view plugin;
  void (*parse)(const YamlReader& r, const YAML::Node& args, const PluginArgsContext& ctx, ProfileConfig& profile);
};
const std::vector<PluginArgsEntry>& plugin_args_table();
// nullptr for plugins without an args kind (upstream ignores their args).
const PluginArgsEntry* find_plugin_args(std::string_view plugin);

// ---- shared by the parsers ----

std::string quoted(std::string_view s);
// "must be in the range [lo, hi], got v"
std::string range_message(int64_t lo, int64_t hi, int64_t got);
// A list of {name, weight}; an absent weight reads as 0 (v1 defaulting turns
// it into 1 afterwards).
std::vector<ResourceSpec> parse_resource_specs(const YamlReader& r, const YAML::Node& n, const std::string& path);

}  // namespace bulkscore
