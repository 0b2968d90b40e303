// WorkloadTypeArgs: decoding, defaulting and validation of bulkscore's own
// WorkloadType plugin's args (docs/plugins.md), beside the plugin's rule.
// Every field is optional; an absent or null one keeps its default.
#include <set>
#include <string>
#include <vector>

#include "host/common.hpp"
#include "host/input/labels.hpp"
#include "host/input/quantity.hpp"
#include "host/input/resource_names.hpp"
#include "plugins/plugin_args.hpp"

namespace bulkscore {
namespace {

// cpuThreshold is a Kubernetes quantity of cpu ("2", "1500m"); a plain YAML
// integer reads as that many cores, as a quantity written as a JSON number
// does. Floats are refused: their text would depend on how they were
// written, and a quoted quantity says the same exactly.
int64_t read_cpu_threshold(const YamlReader& r, const YAML::Node& n, const std::string& path) {
  const char* const kExpected = "must be a cpu quantity such as \"2\" or \"1500m\"";
  if (!n.IsScalar()) r.fail_at(n, path, kExpected);
  const YamlScalar s = r.read_scalar(n, path);
  const bool usable = s.type == YamlScalar::Type::String || (s.type == YamlScalar::Type::Int && !s.big);
  if (!usable) r.fail_at(n, path, std::string(kExpected) + ", got " + quoted(n.Scalar()));
  try {
    return parse_quantity_scaled(s.text, 3);
  } catch (const InputError& e) {
    r.fail_at(n, path, e.what());
  }
}

void check_label_value(const YamlReader& r, const std::string& value, const std::string& path) {
  if (value.empty()) r.fail(path, "must not be empty");
  const std::string problem = label_value_problem(value);
  if (!problem.empty()) r.fail(path, quoted(value) + ": " + problem);
}

void validate(const YamlReader& r, const WorkloadTypeArgs& args) {
  if (args.label_key.empty()) r.fail("labelKey", "must not be empty");
  const std::string key_problem = qualified_name_problem(args.label_key);
  if (!key_problem.empty()) r.fail("labelKey", quoted(args.label_key) + ": " + key_problem);

  check_label_value(r, args.cpu_intensive_value, "cpuIntensiveValue");
  check_label_value(r, args.gpu_intensive_value, "gpuIntensiveValue");
  if (args.cpu_intensive_value == args.gpu_intensive_value) {
    r.fail("gpuIntensiveValue", "must differ from cpuIntensiveValue, both are " + quoted(args.gpu_intensive_value));
  }

  if (args.cpu_threshold_milli < 0) {
    r.fail("cpuThreshold", "must not be negative, got " + std::to_string(args.cpu_threshold_milli) + "m");
  }

  if (args.gpu_resource_names.empty()) r.fail("gpuResourceNames", "at least one resource name is required");
  std::set<std::string> seen;
  for (size_t i = 0; i < args.gpu_resource_names.size(); ++i) {
    const std::string& name = args.gpu_resource_names[i];
    const std::string path = yaml_at("gpuResourceNames", i);
    const std::string problem = qualified_name_problem(name);
    if (!problem.empty()) r.fail(path, quoted(name) + ": " + problem);
    // GPUs are advertised by device plugins as extended resources; a native
    // name (cpu, memory, kubernetes.io/...) would make any node a "GPU node".
    if (!is_extended_resource_name(name)) {
      r.fail(path, quoted(name) +
                       ": must be an extended resource name (a domain outside kubernetes.io, like "
                       "nvidia.com/gpu)");
    }
    if (!seen.insert(name).second) r.fail(path, "duplicate resource " + quoted(name));
  }
}

}  // namespace

WorkloadTypeArgs parse_workload_type_args(const YamlReader& r, const YAML::Node& n) {
  WorkloadTypeArgs args;
  if (!yaml_absent(n)) {
    r.check_map(n, "",
                {"apiVersion", "kind", "labelKey", "cpuIntensiveValue", "gpuIntensiveValue", "cpuThreshold",
                 "gpuResourceNames"});
    const YAML::Node key = r.field(n, "labelKey");
    if (!yaml_absent(key)) args.label_key = r.read_string(key, "labelKey");
    const YAML::Node cpu_value = r.field(n, "cpuIntensiveValue");
    if (!yaml_absent(cpu_value)) args.cpu_intensive_value = r.read_string(cpu_value, "cpuIntensiveValue");
    const YAML::Node gpu_value = r.field(n, "gpuIntensiveValue");
    if (!yaml_absent(gpu_value)) args.gpu_intensive_value = r.read_string(gpu_value, "gpuIntensiveValue");
    const YAML::Node threshold = r.field(n, "cpuThreshold");
    if (!yaml_absent(threshold)) args.cpu_threshold_milli = read_cpu_threshold(r, threshold, "cpuThreshold");
    // An explicit empty list is kept (and refused): only an absent or null
    // field means the default.
    const YAML::Node gpus = r.field(n, "gpuResourceNames");
    if (!yaml_absent(gpus)) args.gpu_resource_names = r.read_string_list(gpus, "gpuResourceNames");
  }
  validate(r, args);
  return args;
}

}  // namespace bulkscore
