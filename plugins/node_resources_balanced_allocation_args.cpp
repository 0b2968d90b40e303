// NodeResourcesBalancedAllocationArgs: decoding, v1 defaulting and
// validation (ValidateNodeResourcesBalancedAllocationArgs), beside the
// plugin's rule.
#include <set>
#include <string>
#include <vector>

#include "plugins/plugin_args.hpp"

namespace bulkscore {

NodeResourcesBalancedAllocationArgs parse_node_resources_balanced_allocation_args(const YamlReader& r,
                                                                                  const YAML::Node& n) {
  NodeResourcesBalancedAllocationArgs args;
  if (yaml_absent(n)) return args;
  r.check_map(n, "", {"apiVersion", "kind", "resources"});
  std::vector<ResourceSpec> resources = parse_resource_specs(r, r.field(n, "resources"), "resources");
  if (resources.empty()) return args;  // defaulting: cpu and memory
  std::set<std::string> seen;
  for (size_t i = 0; i < resources.size(); ++i) {
    if (resources[i].weight == 0) resources[i].weight = 1;
    if (!seen.insert(resources[i].name).second) {
      r.fail(yaml_child(yaml_at("resources", i), "name"), "duplicate resource " + quoted(resources[i].name));
    }
    if (resources[i].weight != 1) {
      r.fail(yaml_child(yaml_at("resources", i), "weight"), "must be 1, got " + std::to_string(resources[i].weight));
    }
  }
  args.resources = std::move(resources);
  return args;
}

}  // namespace bulkscore
