// VolumeBindingArgs: validation (ValidateVolumeBindingArgs with v1.35.4's
// default feature gates) of a plugin bulkscore does not run.
#include <string>

#include "plugins/plugin_args.hpp"

namespace bulkscore {

void check_volume_binding_args(const YamlReader& r, const YAML::Node& n) {
  if (yaml_absent(n)) return;
  r.check_map(n, "", {"apiVersion", "kind", "bindTimeoutSeconds", "shape"});
  const YAML::Node timeout = r.field(n, "bindTimeoutSeconds");
  if (!yaml_absent(timeout)) {
    const int64_t seconds = r.read_int64(timeout, "bindTimeoutSeconds");
    if (seconds < 0) {
      r.fail("bindTimeoutSeconds", "must not be negative, got " + std::to_string(seconds));
    }
  }
  if (!yaml_absent(r.field(n, "shape"))) {
    r.fail("shape",
           "unexpected field: the StorageCapacityScoring feature gate is off in v1.35.4 (and "
           "in bulkscore), so shape must not be set");
  }
}

}  // namespace bulkscore
