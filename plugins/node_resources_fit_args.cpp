// NodeResourcesFitArgs: decoding, v1 defaulting (defaults.go
// SetDefaults_NodeResourcesFitArgs) and validation
// (ValidateNodeResourcesFitArgs), beside the plugin's rule.
#include <string>
#include <vector>

#include "host/input/labels.hpp"
#include "plugins/plugin_args.hpp"

namespace bulkscore {
namespace {

std::vector<UtilizationShapePoint> parse_shape(const YamlReader& r, const YAML::Node& n, const std::string& path) {
  std::vector<UtilizationShapePoint> out;
  if (yaml_absent(n)) return out;
  r.check_sequence(n, path);
  for (size_t i = 0; i < n.size(); ++i) {
    const std::string p = yaml_at(path, i);
    r.check_map(n[i], p, {"utilization", "score"});
    UtilizationShapePoint point;
    const YAML::Node u = r.field(n[i], "utilization");
    if (!yaml_absent(u)) point.utilization = r.read_int32(u, yaml_child(p, "utilization"));
    const YAML::Node s = r.field(n[i], "score");
    if (!yaml_absent(s)) point.score = r.read_int32(s, yaml_child(p, "score"));
    out.push_back(point);
  }
  return out;
}

void validate_shape(const YamlReader& r, const std::vector<UtilizationShapePoint>& shape, const std::string& path) {
  if (shape.empty()) r.fail(path, "at least one point must be specified");
  for (size_t i = 1; i < shape.size(); ++i) {
    if (shape[i - 1].utilization >= shape[i].utilization) {
      r.fail(yaml_child(yaml_at(path, i), "utilization"), "values must be sorted in strictly increasing order, got " +
                                                              std::to_string(shape[i].utilization) + " after " +
                                                              std::to_string(shape[i - 1].utilization));
    }
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i].utilization < 0 || shape[i].utilization > 100) {
      r.fail(yaml_child(yaml_at(path, i), "utilization"), range_message(0, 100, shape[i].utilization));
    }
    if (shape[i].score < 0 || shape[i].score > 10) {
      r.fail(yaml_child(yaml_at(path, i), "score"), range_message(0, 10, shape[i].score));
    }
  }
}

// NodeResourcesFitArgs as decoded and defaulted; validated only when the
// plugin is enabled somewhere (see validate_fit_args).
struct FitArgsSpec {
  std::vector<std::string> ignored_resources;
  std::vector<std::string> ignored_resource_groups;
  std::string type = "LeastAllocated";
  std::vector<ResourceSpec> resources{{"cpu", 1}, {"memory", 1}};
  bool has_ratio = false;  // scoringStrategy.requestedToCapacityRatio present
  std::vector<UtilizationShapePoint> shape;
};

FitArgsSpec parse_fit_args(const YamlReader& r, const YAML::Node& n) {
  FitArgsSpec spec;
  if (yaml_absent(n)) return spec;
  r.check_map(n, "", {"apiVersion", "kind", "ignoredResources", "ignoredResourceGroups", "scoringStrategy"});
  spec.ignored_resources = r.read_string_list(r.field(n, "ignoredResources"), "ignoredResources");
  spec.ignored_resource_groups = r.read_string_list(r.field(n, "ignoredResourceGroups"), "ignoredResourceGroups");
  const YAML::Node strategy = r.field(n, "scoringStrategy");
  if (yaml_absent(strategy)) return spec;  // defaulting: LeastAllocated, cpu and memory
  r.check_map(strategy, "scoringStrategy", {"type", "resources", "requestedToCapacityRatio"});
  // A strategy that is present keeps its type as written: an absent type is
  // not defaulted and fails validation, as upstream.
  const YAML::Node type = r.field(strategy, "type");
  spec.type = yaml_absent(type) ? std::string() : r.read_string(type, "scoringStrategy.type");
  spec.resources = parse_resource_specs(r, r.field(strategy, "resources"), "scoringStrategy.resources");
  if (spec.resources.empty()) spec.resources = {{"cpu", 1}, {"memory", 1}};
  for (ResourceSpec& res : spec.resources) {
    if (res.weight == 0) res.weight = 1;
  }
  const YAML::Node ratio = r.field(strategy, "requestedToCapacityRatio");
  if (!yaml_absent(ratio)) {
    const std::string ratio_path = "scoringStrategy.requestedToCapacityRatio";
    r.check_map(ratio, ratio_path, {"shape"});
    spec.has_ratio = true;
    spec.shape = parse_shape(r, r.field(ratio, "shape"), yaml_child(ratio_path, "shape"));
  }
  return spec;
}

void validate_fit_args(const YamlReader& r, const FitArgsSpec& spec) {
  for (size_t i = 0; i < spec.ignored_resources.size(); ++i) {
    const std::string problem = qualified_name_problem(spec.ignored_resources[i]);
    if (!problem.empty()) {
      r.fail(yaml_at("ignoredResources", i), quoted(spec.ignored_resources[i]) + ": " + problem);
    }
  }
  for (size_t i = 0; i < spec.ignored_resource_groups.size(); ++i) {
    const std::string& group = spec.ignored_resource_groups[i];
    if (group.find('/') != std::string::npos) {
      r.fail(yaml_at("ignoredResourceGroups", i), quoted(group) + ": a resource group name can't contain '/'");
    }
    const std::string problem = qualified_name_problem(group);
    if (!problem.empty()) r.fail(yaml_at("ignoredResourceGroups", i), quoted(group) + ": " + problem);
  }
  if (spec.type != "LeastAllocated" && spec.type != "MostAllocated" && spec.type != "RequestedToCapacityRatio") {
    r.fail("scoringStrategy.type",
           "unsupported value " + quoted(spec.type) +
               "; supported: \"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\"");
  }
  for (size_t i = 0; i < spec.resources.size(); ++i) {
    const int64_t w = spec.resources[i].weight;
    if (w < 1 || w > 100) {
      r.fail(yaml_child(yaml_at("scoringStrategy.resources", i), "weight"), range_message(1, 100, w));
    }
  }
  const std::string ratio_path = "scoringStrategy.requestedToCapacityRatio";
  if (spec.type == "RequestedToCapacityRatio") {
    if (!spec.has_ratio) r.fail(ratio_path, "required when scoringStrategy.type is RequestedToCapacityRatio");
    validate_shape(r, spec.shape, ratio_path + ".shape");
  } else if (spec.has_ratio) {
    // Parameters the chosen strategy would silently ignore.
    r.fail(ratio_path, "must not be set when scoringStrategy.type is " + quoted(spec.type));
  }
}

NodeResourcesFitArgs to_fit_args(const FitArgsSpec& spec) {
  NodeResourcesFitArgs args;
  args.ignored_resources = spec.ignored_resources;
  args.ignored_resource_groups = spec.ignored_resource_groups;
  if (spec.type == "MostAllocated") {
    args.strategy = ScoringStrategyType::MostAllocated;
  } else if (spec.type == "RequestedToCapacityRatio") {
    args.strategy = ScoringStrategyType::RequestedToCapacityRatio;
    args.shape = spec.shape;
  } else {
    args.strategy = ScoringStrategyType::LeastAllocated;
  }
  args.resources = spec.resources;
  return args;
}

}  // namespace

NodeResourcesFitArgs parse_node_resources_fit_args(const YamlReader& r, const YAML::Node& args,
                                                   const PluginArgsContext& ctx) {
  const FitArgsSpec spec = parse_fit_args(r, args);
  // Upstream's config validation misses these args (its table keys them as
  // "NodeResourcesFitArgs"); only building the plugin checks them, which
  // happens when it is enabled somewhere.
  if (ctx.enabled) validate_fit_args(r, spec);
  return to_fit_args(spec);
}

}  // namespace bulkscore
