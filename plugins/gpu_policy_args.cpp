// Args of the GPU placement policies (plugins/gpu_fgd.hpp,
// plugins/gpu_baselines.hpp): decoding and validation.
//
//   GpuFragmentationArgs: typicalTasks: [{cpuMilli, gpuMilli, gpuCount,
//     cardModels, weight}]; gpuMilli 0 with gpuCount > 0 means whole
//     devices. Weights are positive and are scaled to sum to 1.
//   GpuBestFit / GpuDotProduct / GpuClustering / GpuPacking / GpuRandomFit
//   args: maxCpuMilli, maxGpuUnits (the normalizers), seed.
#include <algorithm>
#include <string>

#include "plugins/plugin_args.hpp"

namespace bulkscore {

GpuFragmentationArgs parse_gpu_fragmentation_args(const YamlReader& r, const YAML::Node& n) {
  GpuFragmentationArgs args;
  if (yaml_absent(n)) return args;
  r.check_map(n, "", {"apiVersion", "kind", "typicalTasks"});
  const YAML::Node list = r.field(n, "typicalTasks");
  if (yaml_absent(list)) return args;
  r.check_sequence(list, "typicalTasks");
  double total = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string p = yaml_at("typicalTasks", i);
    r.check_map(list[i], p, {"cpuMilli", "gpuMilli", "gpuCount", "cardModels", "weight"});
    TypicalTask t;
    auto int_field = [&](const char* name, int64_t lo, int64_t hi) -> int64_t {
      const YAML::Node v = r.field(list[i], name);
      if (yaml_absent(v)) return 0;
      const int64_t x = r.read_int64(v, yaml_child(p, name));
      if (x < lo || x > hi) r.fail(yaml_child(p, name), range_message(lo, hi, x));
      return x;
    };
    t.cpu_milli = int_field("cpuMilli", 0, int64_t(1) << 40);
    t.milli = static_cast<int32_t>(int_field("gpuMilli", 0, 1000000000));
    t.count = static_cast<int32_t>(int_field("gpuCount", 0, kMaxDevicesPerNode));
    if (t.count > 0 && t.milli == 0) t.milli = kWholeDevice;
    if (t.count == 0) t.milli = 0;
    t.models = r.read_string_list(r.field(list[i], "cardModels"), yaml_child(p, "cardModels"));
    std::sort(t.models.begin(), t.models.end());
    t.models.erase(std::unique(t.models.begin(), t.models.end()), t.models.end());
    const YAML::Node w = r.field(list[i], "weight");
    if (yaml_absent(w)) r.fail(yaml_child(p, "weight"), "is required");
    t.weight = r.read_number(w, yaml_child(p, "weight"));
    if (!(t.weight > 0) || t.weight > 1e12) r.fail(yaml_child(p, "weight"), "must be a positive number");
    total += t.weight;
    args.typical_tasks.push_back(std::move(t));
  }
  for (TypicalTask& t : args.typical_tasks) t.weight /= total;
  return args;
}

GpuScoreArgs parse_gpu_score_args(const YamlReader& r, const YAML::Node& n) {
  GpuScoreArgs args;
  if (yaml_absent(n)) return args;
  r.check_map(n, "", {"apiVersion", "kind", "maxCpuMilli", "maxGpuUnits", "seed"});
  const YAML::Node cpu = r.field(n, "maxCpuMilli");
  if (!yaml_absent(cpu)) args.max_cpu_milli = r.read_int64(cpu, "maxCpuMilli");
  if (args.max_cpu_milli <= 0) r.fail("maxCpuMilli", "must be positive, got " + std::to_string(args.max_cpu_milli));
  const YAML::Node gpu = r.field(n, "maxGpuUnits");
  if (!yaml_absent(gpu)) args.max_gpu_units = r.read_int64(gpu, "maxGpuUnits");
  if (args.max_gpu_units <= 0) r.fail("maxGpuUnits", "must be positive, got " + std::to_string(args.max_gpu_units));
  const YAML::Node seed = r.field(n, "seed");
  if (!yaml_absent(seed)) {
    const int64_t s = r.read_int64(seed, "seed");
    if (s < 0) r.fail("seed", "must not be negative, got " + std::to_string(s));
    args.seed = static_cast<uint64_t>(s);
  }
  return args;
}

}  // namespace bulkscore
