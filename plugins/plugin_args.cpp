#include "plugins/plugin_args.hpp"

#include "host/input/quote.hpp"

namespace bulkscore {

std::string quoted(std::string_view s) { return quote_for_message(s); }

std::string range_message(int64_t lo, int64_t hi, int64_t got) {
  return "must be in the range [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + std::to_string(got);
}

std::vector<ResourceSpec> parse_resource_specs(const YamlReader& r, const YAML::Node& n, const std::string& path) {
  std::vector<ResourceSpec> out;
  if (yaml_absent(n)) return out;
  r.check_sequence(n, path);
  for (size_t i = 0; i < n.size(); ++i) {
    const std::string p = yaml_at(path, i);
    r.check_map(n[i], p, {"name", "weight"});
    ResourceSpec spec;
    spec.weight = 0;  // absent = 0, which v1 defaulting turns into 1
    const YAML::Node name = r.field(n[i], "name");
    if (!yaml_absent(name)) spec.name = r.read_string(name, yaml_child(p, "name"));
    const YAML::Node weight = r.field(n[i], "weight");
    if (!yaml_absent(weight)) spec.weight = r.read_int64(weight, yaml_child(p, "weight"));
    out.push_back(std::move(spec));
  }
  return out;
}

const std::vector<PluginArgsEntry>& plugin_args_table() {
  static const std::vector<PluginArgsEntry> kTable = {
      {"DefaultPreemption", [](const YamlReader& r, const YAML::Node& n, const PluginArgsContext&,
                               ProfileConfig& p) { p.default_preemption_args = parse_default_preemption_args(r, n); }},
      {"InterPodAffinity", [](const YamlReader& r, const YAML::Node& n, const PluginArgsContext&,
                              ProfileConfig& p) { p.inter_pod_affinity_args = parse_inter_pod_affinity_args(r, n); }},
      {"NodeResourcesBalancedAllocation",
       [](const YamlReader& r, const YAML::Node& n, const PluginArgsContext&, ProfileConfig& p) {
         p.balanced_args = parse_node_resources_balanced_allocation_args(r, n);
       }},
      {"NodeResourcesFit", [](const YamlReader& r, const YAML::Node& n, const PluginArgsContext& ctx,
                              ProfileConfig& p) { p.fit_args = parse_node_resources_fit_args(r, n, ctx); }},
      {"PodTopologySpread",
       [](const YamlReader& r, const YAML::Node& n, const PluginArgsContext&, ProfileConfig& p) {
         p.pod_topology_spread_args = parse_pod_topology_spread_args(r, n);
       }},
      {"VolumeBinding", [](const YamlReader& r, const YAML::Node& n, const PluginArgsContext&,
                           ProfileConfig&) { check_volume_binding_args(r, n); }},
      {"NodeAffinity", [](const YamlReader& r, const YAML::Node& n, const PluginArgsContext&,
                          ProfileConfig& p) { p.node_affinity_args = parse_node_affinity_args(r, n); }},
      {"DynamicResources", [](const YamlReader& r, const YAML::Node& n, const PluginArgsContext&,
                              ProfileConfig&) { check_dynamic_resources_args(r, n); }},
      {"GpuShare", [](const YamlReader& r, const YAML::Node& n, const PluginArgsContext&,
                      ProfileConfig& p) { p.gpu_share_args = parse_gpu_share_args(r, n); }},
      {"GpuFragmentation",
       [](const YamlReader& r, const YAML::Node& n, const PluginArgsContext&, ProfileConfig& p) {
         p.gpu_fragmentation_args = parse_gpu_fragmentation_args(r, n);
       }},
      // The baselines share their args (one set per profile; the last given wins).
      {"GpuBestFit", [](const YamlReader& r, const YAML::Node& n, const PluginArgsContext&,
                        ProfileConfig& p) { p.gpu_score_args = parse_gpu_score_args(r, n); }},
      {"GpuDotProduct", [](const YamlReader& r, const YAML::Node& n, const PluginArgsContext&,
                           ProfileConfig& p) { p.gpu_score_args = parse_gpu_score_args(r, n); }},
      {"GpuPacking", [](const YamlReader& r, const YAML::Node& n, const PluginArgsContext&,
                        ProfileConfig& p) { p.gpu_score_args = parse_gpu_score_args(r, n); }},
      {"GpuClustering", [](const YamlReader& r, const YAML::Node& n, const PluginArgsContext&,
                           ProfileConfig& p) { p.gpu_score_args = parse_gpu_score_args(r, n); }},
      {"GpuRandomFit", [](const YamlReader& r, const YAML::Node& n, const PluginArgsContext&,
                          ProfileConfig& p) { p.gpu_score_args = parse_gpu_score_args(r, n); }},
      {"WorkloadType", [](const YamlReader& r, const YAML::Node& n, const PluginArgsContext&,
                          ProfileConfig& p) { p.workload_type_args = parse_workload_type_args(r, n); }},
      {"SharedDeviceGroup",
       [](const YamlReader& r, const YAML::Node& n, const PluginArgsContext&, ProfileConfig& p) {
         p.shared_device_group_args = parse_shared_device_group_args(r, n);
       }},
      {"NodeData", [](const YamlReader& r, const YAML::Node& n, const PluginArgsContext& ctx,
                      ProfileConfig& p) { p.node_data_args = parse_node_data_args(r, n, ctx); }},
  };
  return kTable;
}

const PluginArgsEntry* find_plugin_args(std::string_view plugin) {
  for (const PluginArgsEntry& e : plugin_args_table()) {
    if (e.plugin == plugin) return &e;
  }
  return nullptr;
}

}  // namespace bulkscore
