// SharedDeviceGroupArgs: decoding and validation, beside the plugin's rule
// (plugins/shared_device_group.hpp). Every field is optional; the defaults
// are host/input/device_groups.hpp's.
#include <set>
#include <string>

#include "host/input/labels.hpp"
#include "plugins/plugin_args.hpp"

namespace bulkscore {

SharedDeviceGroupArgs parse_shared_device_group_args(const YamlReader& r, const YAML::Node& n) {
  SharedDeviceGroupArgs args;
  if (yaml_absent(n)) return args;
  DeviceGroupModel& m = args.model;
  r.check_map(
      n, "",
      {"apiVersion", "kind", "modeLabel", "modeValue", "groupAnnotation", "devicesAnnotation", "envAnnotationPrefix"});
  struct Field {
    const char* name;
    std::string* value;
  };
  // Keys: qualified names (prefix/name).
  for (const Field& f : {Field{"modeLabel", &m.mode_label}, Field{"groupAnnotation", &m.group_annotation},
                         Field{"devicesAnnotation", &m.devices_annotation}}) {
    const YAML::Node v = r.field(n, f.name);
    if (yaml_absent(v)) continue;
    *f.value = r.read_string(v, f.name);
    const std::string problem = qualified_name_problem(*f.value);
    if (!problem.empty()) r.fail(f.name, quoted(*f.value) + ": " + problem);
  }
  const YAML::Node value = r.field(n, "modeValue");
  if (!yaml_absent(value)) {
    m.mode_value = r.read_string(value, "modeValue");
    const std::string problem = label_value_problem(m.mode_value);
    if (m.mode_value.empty()) r.fail("modeValue", "must not be empty");
    if (!problem.empty()) r.fail("modeValue", quoted(m.mode_value) + ": " + problem);
  }
  const YAML::Node prefix = r.field(n, "envAnnotationPrefix");
  if (!yaml_absent(prefix)) {
    m.env_annotation_prefix = r.read_string(prefix, "envAnnotationPrefix");
    // The prefix and an environment variable's name make one annotation key.
    const std::string problem = qualified_name_problem(m.env_annotation_prefix + "NVIDIA_VISIBLE_DEVICES");
    if (!problem.empty())
      r.fail("envAnnotationPrefix", quoted(m.env_annotation_prefix) + " does not make annotation keys: " + problem);
  }
  if (m.group_annotation == m.devices_annotation) r.fail("devicesAnnotation", "must differ from groupAnnotation");
  return args;
}

}  // namespace bulkscore
