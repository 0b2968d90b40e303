// PodTopologySpreadArgs: decoding, v1 defaulting and validation
// (ValidatePodTopologySpreadArgs). bulkscore has no PodTopologySpread rule
// yet; the args are read so that a configuration kube-scheduler refuses is
// refused here too.
#include <string>

#include "host/input/labels.hpp"
#include "host/input/quote.hpp"
#include "plugins/plugin_args.hpp"

namespace bulkscore {
namespace {

TopologySpreadConstraint parse_default_constraint(const YamlReader& r, const YAML::Node& n, const std::string& path) {
  r.check_map(n, path,
              {"maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector", "minDomains", "nodeAffinityPolicy",
               "nodeTaintsPolicy", "matchLabelKeys"});
  TopologySpreadConstraint c;
  const YAML::Node skew = r.field(n, "maxSkew");
  if (!yaml_absent(skew)) c.max_skew = r.read_int32(skew, yaml_child(path, "maxSkew"));
  const YAML::Node key = r.field(n, "topologyKey");
  if (!yaml_absent(key)) c.topology_key = r.read_string(key, yaml_child(path, "topologyKey"));
  const YAML::Node when = r.field(n, "whenUnsatisfiable");
  if (!yaml_absent(when)) c.when_unsatisfiable = r.read_string(when, yaml_child(path, "whenUnsatisfiable"));
  // Any selector is forbidden (validated below), so its content is not read.
  if (!yaml_absent(r.field(n, "labelSelector"))) c.label_selector = LabelSelector{};
  const YAML::Node min_domains = r.field(n, "minDomains");
  if (!yaml_absent(min_domains)) c.min_domains = r.read_int32(min_domains, yaml_child(path, "minDomains"));
  const YAML::Node affinity_policy = r.field(n, "nodeAffinityPolicy");
  if (!yaml_absent(affinity_policy)) {
    c.node_affinity_policy = r.read_string(affinity_policy, yaml_child(path, "nodeAffinityPolicy"));
  }
  const YAML::Node taints_policy = r.field(n, "nodeTaintsPolicy");
  if (!yaml_absent(taints_policy)) {
    c.node_taints_policy = r.read_string(taints_policy, yaml_child(path, "nodeTaintsPolicy"));
  }
  c.match_label_keys = r.read_string_list(r.field(n, "matchLabelKeys"), yaml_child(path, "matchLabelKeys"));
  return c;
}

}  // namespace

PodTopologySpreadArgs parse_pod_topology_spread_args(const YamlReader& r, const YAML::Node& n) {
  PodTopologySpreadArgs args;
  if (yaml_absent(n)) return args;
  r.check_map(n, "", {"apiVersion", "kind", "defaultConstraints", "defaultingType"});
  const YAML::Node type = r.field(n, "defaultingType");
  if (!yaml_absent(type)) args.defaulting_type = r.read_string(type, "defaultingType");
  if (args.defaulting_type.empty()) args.defaulting_type = "System";
  const YAML::Node list = r.field(n, "defaultConstraints");
  if (!yaml_absent(list)) {
    r.check_sequence(list, "defaultConstraints");
    for (size_t i = 0; i < list.size(); ++i) {
      args.default_constraints.push_back(parse_default_constraint(r, list[i], yaml_at("defaultConstraints", i)));
    }
  }

  if (args.defaulting_type != "System" && args.defaulting_type != "List") {
    r.fail("defaultingType", "unsupported value " + quoted(args.defaulting_type) + "; supported: \"System\", \"List\"");
  }
  if (args.defaulting_type == "System" && !args.default_constraints.empty()) {
    r.fail("defaultingType", "must be \"List\" when defaultConstraints is not empty");
  }
  for (size_t i = 0; i < args.default_constraints.size(); ++i) {
    const TopologySpreadConstraint& c = args.default_constraints[i];
    const std::string p = yaml_at("defaultConstraints", i);
    if (c.max_skew <= 0) {
      r.fail(yaml_child(p, "maxSkew"), "must be greater than 0, got " + std::to_string(c.max_skew));
    }
    if (c.topology_key.empty()) r.fail(yaml_child(p, "topologyKey"), "required");
    const std::string key_problem = qualified_name_problem(c.topology_key);
    if (!key_problem.empty()) {
      r.fail(yaml_child(p, "topologyKey"), quoted(c.topology_key) + ": " + key_problem);
    }
    if (c.when_unsatisfiable.empty()) r.fail(yaml_child(p, "whenUnsatisfiable"), "required");
    if (c.when_unsatisfiable != "DoNotSchedule" && c.when_unsatisfiable != "ScheduleAnyway") {
      r.fail(yaml_child(p, "whenUnsatisfiable"), "unsupported value " + quoted(c.when_unsatisfiable) +
                                                     "; supported: \"DoNotSchedule\", \"ScheduleAnyway\"");
    }
    if (c.label_selector) {
      r.fail(yaml_child(p, "labelSelector"), "must not be set: default constraints take their selector from each pod");
    }
    for (size_t j = 0; j < i; ++j) {
      const TopologySpreadConstraint& other = args.default_constraints[j];
      if (other.topology_key == c.topology_key && other.when_unsatisfiable == c.when_unsatisfiable) {
        r.fail(p, "duplicate constraint {" + name_for_message(c.topology_key) + ", " + c.when_unsatisfiable +
                      "} (same as defaultConstraints[" + std::to_string(j) + "])");
      }
    }
  }
  return args;
}

}  // namespace bulkscore
