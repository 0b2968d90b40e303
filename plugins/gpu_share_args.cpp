// GpuShareArgs: decoding and validation, beside the plugin's rule
// (plugins/gpu_share.hpp). Every field is optional; the defaults are the
// Alibaba GPU-sharing model (host/input/devices.hpp).
#include <set>
#include <string>

#include "host/input/labels.hpp"
#include "plugins/plugin_args.hpp"

namespace bulkscore {

GpuShareArgs parse_gpu_share_args(const YamlReader& r, const YAML::Node& n) {
  GpuShareArgs args;
  if (yaml_absent(n)) return args;
  DeviceModel& m = args.model;
  struct Field {
    const char* name;
    std::string* value;
    bool resource;  // a resource name, else an annotation or label key
  };
  const Field fields[] = {
      {"countResource", &m.count_resource, true},         {"milliResource", &m.milli_resource, true},
      {"cardModelLabel", &m.model_label, false},          {"podCountAnnotation", &m.count_annotation, false},
      {"podMilliAnnotation", &m.milli_annotation, false}, {"podCardModelAnnotation", &m.model_annotation, false},
      {"podIndexAnnotation", &m.index_annotation, false},
  };
  r.check_map(n, "",
              {"apiVersion", "kind", "countResource", "milliResource", "cardModelLabel", "podCountAnnotation",
               "podMilliAnnotation", "podCardModelAnnotation", "podIndexAnnotation", "deviceSelection"});
  for (const Field& f : fields) {
    const YAML::Node v = r.field(n, f.name);
    if (yaml_absent(v)) continue;
    *f.value = r.read_string(v, f.name);
    // Resource names and annotation keys are qualified names
    // (prefix/name); a device plugin's resource carries a domain.
    const std::string problem = qualified_name_problem(*f.value);
    if (!problem.empty()) r.fail(f.name, problem);
    if (f.resource && f.value->find('/') == std::string::npos)
      r.fail(f.name, "must be an extended resource name with a domain (vendor.example/gpu), got " + quoted(*f.value));
  }
  if (m.count_resource == m.milli_resource) r.fail("milliResource", "must differ from countResource");
  const std::set<std::string> annotations = {m.count_annotation, m.milli_annotation, m.model_annotation,
                                             m.index_annotation};
  if (annotations.size() != 4)
    r.fail("", "podCountAnnotation, podMilliAnnotation, podCardModelAnnotation and podIndexAnnotation must differ");
  const YAML::Node sel = r.field(n, "deviceSelection");
  if (!yaml_absent(sel)) {
    const std::string s = r.read_string(sel, "deviceSelection");
    args.selection_given = true;
    if (s == "Best")
      args.selection = DeviceSelection::Best;
    else if (s == "Worst")
      args.selection = DeviceSelection::Worst;
    else if (s == "First")
      args.selection = DeviceSelection::First;
    else if (s == "Fragmentation")
      args.selection = DeviceSelection::Fragmentation;
    else if (s == "Random")
      args.selection = DeviceSelection::Random;
    else
      r.fail("deviceSelection", "must be Best, Worst, First, Fragmentation or Random, got " + quoted(s));
  }
  return args;
}

}  // namespace bulkscore
