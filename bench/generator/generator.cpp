// Synthetic cluster generator; the shape is described in generator.hpp.
//
// Order of work: nodes (roles, instance types, capacity), running pods
// (daemonsets, then a per-node share of workload pods placed only where they
// fit), pending groups (sized by a first-fit dry run on the capacity left),
// node image lists (which depend on the pods placed), then the two documents.
// Each phase draws from its own SplitMix64 stream of the seed, so e.g. the
// node list does not change when only the pod counts do.
#include "bench/generator/generator.hpp"

#include "bench/generator/generator_internal.hpp"
#include "host/common.hpp"
#include "host/io/io.hpp"

namespace bulkscore {
namespace gen {

GeneratedCluster Generator::run() {
  validate();
  for (uint32_t z = 0; z < opt_.zones; ++z) zone_names_.push_back("zone-" + zone_letters(z));
  make_nodes();
  place_running();
  make_pending();
  make_node_images();
  GeneratedCluster out;
  out.nodes_json = emit_nodes();
  out.pods_json = emit_pods();
  out.objects_json = emit_objects();
  return out;
}

void Generator::validate() const {
  const auto bound = [](const char* what, uint32_t count, uint32_t limit) {
    if (count > limit)
      throw InputError("generator: " + std::to_string(count) + " " + what + " is more than the limit of " +
                       std::to_string(limit));
  };
  bound("nodes", opt_.nodes, kGeneratorMaxNodes);
  bound("running pods", opt_.running_pods, kGeneratorMaxRunningPods);
  bound("pending pods", opt_.pending_pods, kGeneratorMaxPendingPods);
  auto bad_fraction = [](double f) { return !(f >= 0.0 && f <= 1.0); };
  if (opt_.zones == 0) throw InputError("generator: zones must be at least 1");
  if (opt_.region.empty()) throw InputError("generator: region must not be empty");
  if (bad_fraction(opt_.gpu_node_fraction)) throw InputError("generator: gpu_node_fraction must be in [0, 1]");
  if (bad_fraction(opt_.tainted_node_fraction)) throw InputError("generator: tainted_node_fraction must be in [0, 1]");
  if (opt_.gpu_node_fraction + opt_.tainted_node_fraction > 1.0 + 1e-12)
    throw InputError("generator: gpu_node_fraction + tainted_node_fraction must not exceed 1");
}

std::string Generator::zone_letters(uint32_t z) {
  std::string s;
  do {
    s.insert(s.begin(), static_cast<char>('a' + z % 26));
    z = z / 26;
  } while (z-- > 0);
  return s;
}

}  // namespace gen

GeneratedCluster generate_cluster(const GeneratorOptions& options) {
  gen::Generator g(options);
  return g.run();
}

void write_generated_cluster(const GeneratorOptions& options, const std::string& nodes_path,
                             const std::string& pods_path, const std::string& objects_path) {
  const GeneratedCluster c = generate_cluster(options);
  // All files or none: a NodeList without its PodList is no cluster.
  std::vector<std::pair<std::string, std::string_view>> files = {{nodes_path, c.nodes_json}, {pods_path, c.pods_json}};
  if (!objects_path.empty()) files.emplace_back(objects_path, c.objects_json);
  write_files_atomically(files);
}

}  // namespace bulkscore
