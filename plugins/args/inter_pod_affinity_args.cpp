// InterPodAffinityArgs: decoding and validation (ValidateInterPodAffinityArgs).
// bulkscore has no InterPodAffinity rule yet; the args are read so that a
// configuration kube-scheduler refuses is refused here too.
#include "plugins/plugin_args.hpp"

namespace bulkscore {

InterPodAffinityArgs parse_inter_pod_affinity_args(const YamlReader& r, const YAML::Node& n) {
  InterPodAffinityArgs args;
  if (yaml_absent(n)) return args;
  r.check_map(n, "", {"apiVersion", "kind", "hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"});
  const YAML::Node weight = r.field(n, "hardPodAffinityWeight");
  if (!yaml_absent(weight)) {
    args.hard_pod_affinity_weight = r.read_int32(weight, "hardPodAffinityWeight");
  }
  if (args.hard_pod_affinity_weight < 0 || args.hard_pod_affinity_weight > 100) {
    r.fail("hardPodAffinityWeight", range_message(0, 100, args.hard_pod_affinity_weight));
  }
  const YAML::Node ignore = r.field(n, "ignorePreferredTermsOfExistingPods");
  if (!yaml_absent(ignore)) {
    args.ignore_preferred_terms_of_existing_pods = r.read_bool(ignore, "ignorePreferredTermsOfExistingPods");
  }
  return args;
}

}  // namespace bulkscore
