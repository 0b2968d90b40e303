// DefaultPreemptionArgs: defaults and validation (ValidateDefaultPreemptionArgs).
#include <string>

#include "plugins/plugin_args.hpp"

namespace bulkscore {

DefaultPreemptionArgs parse_default_preemption_args(const YamlReader& r, const YAML::Node& n) {
  int32_t percentage = 10;
  int32_t absolute = 100;
  if (!yaml_absent(n)) {
    r.check_map(n, "", {"apiVersion", "kind", "minCandidateNodesPercentage", "minCandidateNodesAbsolute"});
    const YAML::Node p = r.field(n, "minCandidateNodesPercentage");
    if (!yaml_absent(p)) percentage = r.read_int32(p, "minCandidateNodesPercentage");
    const YAML::Node a = r.field(n, "minCandidateNodesAbsolute");
    if (!yaml_absent(a)) absolute = r.read_int32(a, "minCandidateNodesAbsolute");
  }
  if (percentage < 0 || percentage > 100) {
    r.fail("minCandidateNodesPercentage", range_message(0, 100, percentage));
  }
  if (absolute < 0) {
    r.fail("minCandidateNodesAbsolute", "must be >= 0, got " + std::to_string(absolute));
  }
  if (percentage == 0 && absolute == 0) {
    r.fail("minCandidateNodesPercentage", "cannot be zero at the same time as minCandidateNodesAbsolute");
  }
  DefaultPreemptionArgs out;
  out.min_candidate_nodes_percentage = percentage;
  out.min_candidate_nodes_absolute = absolute;
  return out;
}

}  // namespace bulkscore
