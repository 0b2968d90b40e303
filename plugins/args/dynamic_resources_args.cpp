// DynamicResourcesArgs: validation (ValidateDynamicResourcesArgs with
// v1.35.4's default feature gates) of a plugin bulkscore does not run.
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "plugins/plugin_args.hpp"

namespace bulkscore {
namespace {

// Go's time.ParseDuration, reduced to what validation needs: is the text a
// duration, and is it negative.
std::optional<bool> go_duration_is_negative(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return false;
  if (s.empty()) return std::nullopt;
  bool nonzero = false;
  while (!s.empty()) {
    size_t i = 0;
    bool digits = false;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      digits = true;
      nonzero = nonzero || s[i] != '0';
      ++i;
    }
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        digits = true;
        nonzero = nonzero || s[i] != '0';
        ++i;
      }
    }
    if (!digits) return std::nullopt;
    size_t j = i;
    while (j < s.size() && s[j] != '.' && (s[j] < '0' || s[j] > '9')) ++j;
    const std::string_view unit = s.substr(i, j - i);
    static const std::set<std::string_view> kUnits = {"ns", "us", "\xC2\xB5s", "\xCE\xBCs", "ms", "s", "m", "h"};
    if (!kUnits.count(unit)) return std::nullopt;
    s.remove_prefix(j);
  }
  return negative && nonzero;
}

}  // namespace

void check_dynamic_resources_args(const YamlReader& r, const YAML::Node& n) {
  if (yaml_absent(n)) return;
  r.check_map(n, "", {"apiVersion", "kind", "filterTimeout", "bindingTimeout"});
  const YAML::Node filter_timeout = r.field(n, "filterTimeout");
  if (!yaml_absent(filter_timeout)) {
    const std::string text = r.read_string(filter_timeout, "filterTimeout");
    const std::optional<bool> negative = go_duration_is_negative(text);
    if (!negative) r.fail("filterTimeout", quoted(text) + " is not a duration");
    if (*negative) r.fail("filterTimeout", "must be zero or positive, got " + quoted(text));
  }
  if (!yaml_absent(r.field(n, "bindingTimeout"))) {
    r.fail("bindingTimeout", "forbidden: the DRADeviceBindingConditions feature gate is off in v1.35.4");
  }
}

}  // namespace bulkscore
