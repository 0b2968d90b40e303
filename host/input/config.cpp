// KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) parsing.
//
// The pipeline mirrors kube-scheduler v1.35.4 step by step, because the
// resulting plugin order is observable (Filter stops at the first rejecting
// plugin, and score output lists plugins in order):
//   1. strict decoding of the YAML (unknown fields are errors, as with the
//      strict decoder kube-scheduler uses for v1),
//   2. v1 defaulting: the user's plugin sets are merged into the default
//      profile set by set (v1/default_plugins.go mergePluginSet),
//   3. validation of the configuration and of each plugin's args
//      (validation/validation.go, validation_pluginargs.go),
//   4. what the framework does when it builds a profile
//      (framework/runtime/framework.go): per-point lists, MultiPoint
//      expansion, duplicate detection and Score weights.
#include "host/input/config.hpp"

// yaml-cpp 0.7's node headers trip a known false positive of GCC >= 12.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdangling-pointer"
#endif
#include <yaml-cpp/yaml.h>
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic pop
#endif

#include <array>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/common.hpp"
#include "host/input/go_int.hpp"
#include "host/input/labels.hpp"
#include "host/io/io.hpp"

namespace bulkscore {
namespace {

constexpr std::string_view kApiVersion = "kubescheduler.config.k8s.io/v1";
constexpr std::string_view kKind = "KubeSchedulerConfiguration";
constexpr std::string_view kDefaultSchedulerName = "default-scheduler";
// Upstream's MaxNodeScore: each plugin's normalized score is at most 100.
constexpr int64_t kMaxNodeScore = 100;
// bulkscore packs a node's total score into 32 bits of its sort key.
constexpr int64_t kMaxPackedTotalScore = std::numeric_limits<int32_t>::max();

// ---------------------------------------------------------------------------
// Paths and errors
// ---------------------------------------------------------------------------

std::string child(const std::string& path, std::string_view field) {
  if (path.empty()) return std::string(field);
  return path + "." + std::string(field);
}

std::string at(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

// Builds "<file>: <prefix><path>: <message>". The prefix names the object
// being read when paths are relative to it (plugin args).
class Reporter {
 public:
  explicit Reporter(std::string origin, std::string prefix = {})
      : origin_(std::move(origin)), prefix_(std::move(prefix)) {}

  Reporter for_object(const std::string& object) const { return Reporter(origin_, object + ": "); }

  [[noreturn]] void fail(const std::string& path, const std::string& message) const {
    std::string text = origin_ + ": " + prefix_;
    if (!path.empty()) text += path + ": ";
    text += message;
    throw InputError(text);
  }

  // Decoding errors also say where in the file, since the path alone can be
  // hard to map back to a large YAML document.
  [[noreturn]] void fail_at(const YAML::Node& node, const std::string& path, const std::string& message) const {
    const YAML::Mark mark = node.Mark();
    if (mark.line < 0) fail(path, message);
    fail(path,
         message + " (line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1) + ")");
  }

 private:
  std::string origin_;
  std::string prefix_;
};

// ---------------------------------------------------------------------------
// Strict YAML reading. A null value is the same as an absent field, as with
// the JSON decoding kube-scheduler applies after converting YAML.
// ---------------------------------------------------------------------------

bool absent(const YAML::Node& n) { return !n.IsDefined() || n.IsNull(); }

YAML::Node field(const YAML::Node& map, const char* name) { return map[name]; }

// Requires a mapping whose keys are all in `allowed` and none repeated.
void check_map(const Reporter& r, const YAML::Node& n, const std::string& path,
               std::initializer_list<std::string_view> allowed) {
  if (!n.IsMap()) r.fail_at(n, path, "must be a mapping");
  std::set<std::string> seen;
  for (auto it = n.begin(); it != n.end(); ++it) {
    const YAML::Node& key = it->first;
    if (!key.IsScalar()) r.fail_at(key, path, "field names must be strings");
    const std::string& name = key.Scalar();
    bool known = false;
    for (std::string_view a : allowed) known = known || a == name;
    if (!known) r.fail_at(key, child(path, name), "unknown field");
    if (!seen.insert(name).second) r.fail_at(key, child(path, name), "field given more than once");
  }
}

// Plain (untagged, unquoted) scalars are the only ones YAML resolves to
// numbers or booleans; a quoted "5" is a string and a type error here.
bool plain_scalar(const YAML::Node& n) { return n.IsScalar() && n.Tag() == "?"; }

std::optional<int64_t> parse_decimal(std::string_view s) {
  int64_t v = 0;
  if (!parse_go_int64(s, v)) return std::nullopt;
  return v;
}

int64_t read_int(const Reporter& r, const YAML::Node& n, const std::string& path, int64_t lo, int64_t hi,
                 const char* type_name) {
  std::optional<int64_t> v;
  if (plain_scalar(n) || (n.IsScalar() && n.Tag() == "tag:yaml.org,2002:int")) {
    v = parse_decimal(n.Scalar());
  }
  if (!v) {
    const std::string got = n.IsScalar() ? ", got " + quoted(n.Scalar()) : "";
    r.fail_at(n, path, std::string("must be an integer (") + type_name + ")" + got);
  }
  if (*v < lo || *v > hi) {
    r.fail_at(n, path, std::string("does not fit in ") + type_name + ", got " + n.Scalar());
  }
  return *v;
}

int32_t read_int32(const Reporter& r, const YAML::Node& n, const std::string& path) {
  return static_cast<int32_t>(
      read_int(r, n, path, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), "int32"));
}

int64_t read_int64(const Reporter& r, const YAML::Node& n, const std::string& path) {
  return read_int(r, n, path, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), "int64");
}

bool read_bool(const Reporter& r, const YAML::Node& n, const std::string& path) {
  if (plain_scalar(n) || (n.IsScalar() && n.Tag() == "tag:yaml.org,2002:bool")) {
    // kube-scheduler converts YAML with YAML 1.1 rules, which also know
    // yes/no/on/off.
    static const std::set<std::string> kTrue = {"true", "True", "TRUE", "yes", "Yes", "YES",
                                                "on",   "On",   "ON",   "y",   "Y"};
    static const std::set<std::string> kFalse = {"false", "False", "FALSE", "no", "No", "NO",
                                                 "off",   "Off",   "OFF",   "n",  "N"};
    if (kTrue.count(n.Scalar())) return true;
    if (kFalse.count(n.Scalar())) return false;
  }
  const std::string got = n.IsScalar() ? ", got " + quoted(n.Scalar()) : "";
  r.fail_at(n, path, "must be a boolean" + got);
}

std::string read_string(const Reporter& r, const YAML::Node& n, const std::string& path) {
  if (!n.IsScalar()) r.fail_at(n, path, "must be a string");
  return n.Scalar();
}

void check_sequence(const Reporter& r, const YAML::Node& n, const std::string& path) {
  if (!n.IsSequence()) r.fail_at(n, path, "must be a list");
}

std::vector<std::string> read_string_list(const Reporter& r, const YAML::Node& n, const std::string& path) {
  std::vector<std::string> out;
  if (absent(n)) return out;
  check_sequence(r, n, path);
  for (size_t i = 0; i < n.size(); ++i) out.push_back(read_string(r, n[i], at(path, i)));
  return out;
}

// Go's strconv.ParseInt(s, 10, 64), which the Gt/Lt operators use.
bool is_go_int64(std::string_view s) {
  int64_t v = 0;
  return parse_go_int64(s, v);
}

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

// ---------------------------------------------------------------------------
// Extension points and the in-tree plugins bulkscore knows
// ---------------------------------------------------------------------------

enum Point : int {
  kPreEnqueue,
  kQueueSort,
  kPreFilter,
  kFilter,
  kPostFilter,
  kPreScore,
  kScore,
  kReserve,
  kPermit,
  kPreBind,
  kBind,
  kPostBind,
  kPointCount
};

// The YAML field of each point under `plugins`, indexed by Point.
constexpr std::array<std::string_view, kPointCount> kPointField = {"preEnqueue", "queueSort", "preFilter", "filter",
                                                                   "postFilter", "preScore",  "score",     "reserve",
                                                                   "permit",     "preBind",   "bind",      "postBind"};

// The framework builds the per-point lists in this order; it decides which
// error a broken profile reports first.
constexpr std::array<Point, kPointCount> kFrameworkOrder = {kPreFilter, kFilter, kPostFilter, kReserve,
                                                            kPreScore,  kScore,  kPreBind,    kBind,
                                                            kPostBind,  kPermit, kPreEnqueue, kQueueSort};

constexpr uint32_t bit(Point p) { return 1u << p; }

struct KnownPlugin {
  std::string_view name;
  uint32_t points;         // the extension points the plugin implements
  int32_t default_weight;  // its weight in the default MultiPoint set; 0 = none given
};

// Every in-tree plugin of v1.35.4 with its default feature gates, in the
// order of the default MultiPoint set (DynamicResources sits before
// DefaultPreemption because its gate is locked on). Which points each plugin
// implements decides where MultiPoint expands it.
constexpr uint32_t kPreFilterFilter = bit(kPreFilter) | bit(kFilter);
constexpr uint32_t kFullScoring = kPreFilterFilter | bit(kPreScore) | bit(kScore);
constexpr std::array<KnownPlugin, 19> kKnownPlugins = {{
    {"SchedulingGates", bit(kPreEnqueue), 0},
    {"PrioritySort", bit(kQueueSort), 0},
    {"NodeUnschedulable", bit(kFilter), 0},
    {"NodeName", bit(kFilter), 0},
    {"TaintToleration", bit(kFilter) | bit(kPreScore) | bit(kScore), 3},
    {"NodeAffinity", kFullScoring, 2},
    {"NodePorts", kPreFilterFilter, 0},
    {"NodeResourcesFit", kFullScoring, 1},
    {"VolumeRestrictions", kPreFilterFilter, 0},
    {"NodeVolumeLimits", kPreFilterFilter, 0},
    {"VolumeBinding", kFullScoring | bit(kReserve) | bit(kPreBind), 0},
    {"VolumeZone", kPreFilterFilter, 0},
    {"PodTopologySpread", kFullScoring, 2},
    {"InterPodAffinity", kFullScoring, 2},
    {"DynamicResources",
     bit(kPreEnqueue) | kPreFilterFilter | bit(kPostFilter) | bit(kScore) | bit(kReserve) | bit(kPreBind), 2},
    {"DefaultPreemption", bit(kPostFilter) | bit(kPreEnqueue), 0},
    {"NodeResourcesBalancedAllocation", bit(kPreScore) | bit(kScore), 1},
    {"ImageLocality", bit(kScore), 1},
    {"DefaultBinder", bit(kBind), 0},
}};

// Names v1 validation rejects as removed plugins.
constexpr std::array<std::string_view, 4> kRemovedPlugins = {"AzureDiskLimits", "CinderLimits", "EBSLimits",
                                                             "GCEPDLimits"};

const KnownPlugin* find_plugin(std::string_view name) {
  for (const KnownPlugin& p : kKnownPlugins) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

bool implements(std::string_view name, Point p) {
  const KnownPlugin* k = find_plugin(name);
  return k != nullptr && (k->points & bit(p)) != 0;
}

std::string unknown_plugin_message(std::string_view name) {
  for (std::string_view removed : kRemovedPlugins) {
    if (removed == name) {
      return "unknown plugin " + quoted(name) + " (removed; invalid in " + std::string(kApiVersion) + ")";
    }
  }
  return "unknown plugin " + quoted(name);
}

// ---------------------------------------------------------------------------
// Plugin sets: decoding, v1 defaulting (merge) and the framework's expansion
// ---------------------------------------------------------------------------

struct PluginRef {
  std::string name;
  std::optional<int32_t> weight;
  std::string path;  // where it was written, for messages
};

struct PluginSetSpec {
  std::vector<PluginRef> enabled;
  std::vector<std::string> disabled;
};

struct PluginsSpec {
  PluginSetSpec multi_point;
  std::array<PluginSetSpec, kPointCount> points;
};

PluginsSpec default_plugins() {
  PluginsSpec spec;
  for (const KnownPlugin& p : kKnownPlugins) {
    PluginRef ref{std::string(p.name), std::nullopt, "default multiPoint"};
    if (p.default_weight != 0) ref.weight = p.default_weight;
    spec.multi_point.enabled.push_back(std::move(ref));
  }
  return spec;
}

PluginSetSpec parse_plugin_set(const Reporter& r, const YAML::Node& n, const std::string& path) {
  PluginSetSpec set;
  if (absent(n)) return set;
  check_map(r, n, path, {"enabled", "disabled"});
  for (const char* which : {"enabled", "disabled"}) {
    const YAML::Node list = field(n, which);
    const std::string list_path = child(path, which);
    if (absent(list)) continue;
    check_sequence(r, list, list_path);
    for (size_t i = 0; i < list.size(); ++i) {
      const YAML::Node entry = list[i];
      const std::string entry_path = at(list_path, i);
      check_map(r, entry, entry_path, {"name", "weight"});
      const YAML::Node name_node = field(entry, "name");
      const std::string name = absent(name_node) ? std::string() : read_string(r, name_node, child(entry_path, "name"));
      std::optional<int32_t> weight;
      const YAML::Node weight_node = field(entry, "weight");
      if (!absent(weight_node)) weight = read_int32(r, weight_node, child(entry_path, "weight"));
      if (std::string_view(which) == "disabled") {
        set.disabled.push_back(name);
        continue;
      }
      // Upstream only looks up enabled names; a disabled name that matches
      // nothing is harmless.
      if (!find_plugin(name)) r.fail(entry_path, unknown_plugin_message(name));
      set.enabled.push_back(PluginRef{name, weight, entry_path});
    }
  }
  return set;
}

PluginsSpec parse_plugins(const Reporter& r, const YAML::Node& n, const std::string& path) {
  PluginsSpec spec;
  if (absent(n)) return spec;
  check_map(r, n, path,
            {"multiPoint", "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
             "reserve", "permit", "preBind", "bind", "postBind"});
  spec.multi_point = parse_plugin_set(r, field(n, "multiPoint"), child(path, "multiPoint"));
  for (int p = 0; p < kPointCount; ++p) {
    const std::string key(kPointField[p]);
    spec.points[p] = parse_plugin_set(r, field(n, key.c_str()), child(path, key));
  }
  return spec;
}

// v1 mergePluginSet: defaults not disabled keep their place (a custom entry
// of the same name replaces them in place), '*' drops every default, and the
// remaining custom entries follow in their own order. Duplicates survive
// here on purpose: the framework reports them.
PluginSetSpec merge_plugin_set(const PluginSetSpec& defaults, const PluginSetSpec& custom) {
  PluginSetSpec merged;
  std::set<std::string> disabled;
  for (const std::string& name : custom.disabled) {
    merged.disabled.push_back(name);
    disabled.insert(name);
  }
  for (const std::string& name : defaults.disabled) {
    merged.disabled.push_back(name);
    disabled.insert(name);
  }
  // The last custom entry of a name is the one that replaces a default.
  std::map<std::string, size_t> custom_index;
  for (size_t i = 0; i < custom.enabled.size(); ++i) custom_index[custom.enabled[i].name] = i;
  std::set<size_t> replaced;
  if (!disabled.count("*")) {
    for (const PluginRef& def : defaults.enabled) {
      if (disabled.count(def.name)) continue;
      const auto it = custom_index.find(def.name);
      if (it != custom_index.end()) {
        merged.enabled.push_back(custom.enabled[it->second]);
        replaced.insert(it->second);
      } else {
        merged.enabled.push_back(def);
      }
    }
  }
  for (size_t i = 0; i < custom.enabled.size(); ++i) {
    if (!replaced.count(i)) merged.enabled.push_back(custom.enabled[i]);
  }
  return merged;
}

PluginsSpec merge_plugins(const PluginsSpec& defaults, const PluginsSpec& custom) {
  PluginsSpec merged;
  merged.multi_point = merge_plugin_set(defaults.multi_point, custom.multi_point);
  for (int p = 0; p < kPointCount; ++p) {
    merged.points[p] = merge_plugin_set(defaults.points[p], custom.points[p]);
  }
  return merged;
}

// Names the framework instantiates: enabled anywhere, MultiPoint included.
std::set<std::string> plugins_needed(const PluginsSpec& plugins) {
  std::set<std::string> needed;
  for (const PluginRef& ref : plugins.multi_point.enabled) needed.insert(ref.name);
  for (const PluginSetSpec& set : plugins.points) {
    for (const PluginRef& ref : set.enabled) needed.insert(ref.name);
  }
  return needed;
}

// An ordered set with removal, as the framework's expansion needs.
class OrderedNames {
 public:
  bool has(const std::string& name) const { return index_.count(name) != 0; }
  void insert(const std::string& name) {
    if (index_.emplace(name, names_.size()).second) names_.push_back(name);
  }
  void erase(const std::string& name) { index_.erase(name); }
  // Names still present, in insertion order.
  std::vector<std::string> list() const {
    std::vector<std::string> out;
    for (const std::string& n : names_) {
      if (index_.count(n)) out.push_back(n);
    }
    return out;
  }

 private:
  std::vector<std::string> names_;
  std::map<std::string, size_t> index_;
};

struct ResolvedPlugins {
  std::array<std::vector<std::string>, kPointCount> lists;
  std::vector<PluginEntry> score;  // lists[kScore] with weights
};

// framework.go NewFramework: per-point lists first (updatePluginList), then
// MultiPoint expansion, then the queue-sort/bind counts and Score weights.
ResolvedPlugins resolve_plugins(const Reporter& r, const PluginsSpec& plugins, const std::string& path) {
  ResolvedPlugins out;

  for (Point p : kFrameworkOrder) {
    std::set<std::string> seen;
    for (const PluginRef& ref : plugins.points[p].enabled) {
      if (!find_plugin(ref.name)) r.fail(ref.path, unknown_plugin_message(ref.name));
      if (!implements(ref.name, p)) {
        r.fail(ref.path, "plugin " + quoted(ref.name) + " does not implement the " + std::string(kPointField[p]) +
                             " extension point");
      }
      if (!seen.insert(ref.name).second) {
        r.fail(ref.path, "plugin " + quoted(ref.name) + " is enabled more than once at " + std::string(kPointField[p]));
      }
      out.lists[p].push_back(ref.name);
    }
  }

  if (!plugins.multi_point.enabled.empty()) {
    for (Point p : kFrameworkOrder) {
      const PluginSetSpec& set = plugins.points[p];
      std::set<std::string> disabled(set.disabled.begin(), set.disabled.end());
      // '*' at a point keeps MultiPoint out of it entirely.
      if (disabled.count("*")) continue;
      OrderedNames explicit_names;
      for (const PluginRef& ref : set.enabled) explicit_names.insert(ref.name);
      OrderedNames from_multi_point;
      OrderedNames overridden;
      for (const PluginRef& ref : plugins.multi_point.enabled) {
        if (!find_plugin(ref.name)) r.fail(ref.path, unknown_plugin_message(ref.name));
        if (!implements(ref.name, p)) continue;
        if (disabled.count(ref.name)) continue;
        // Enabled at the point itself as well: the point's entry wins and
        // keeps its own position.
        if (explicit_names.has(ref.name)) {
          overridden.insert(ref.name);
          continue;
        }
        if (from_multi_point.has(ref.name)) {
          r.fail(ref.path, "plugin " + quoted(ref.name) +
                               " is enabled more than once in multiPoint (already registered at " +
                               std::string(kPointField[p]) + ")");
        }
        from_multi_point.insert(ref.name);
      }
      // Overridden plugins first in the point's own order, then the
      // MultiPoint ones, then the point's other plugins.
      std::vector<std::string> ordered;
      for (const std::string& name : explicit_names.list()) {
        if (overridden.has(name)) {
          ordered.push_back(name);
          explicit_names.erase(name);
        }
      }
      for (const std::string& name : from_multi_point.list()) ordered.push_back(name);
      for (const std::string& name : explicit_names.list()) ordered.push_back(name);
      out.lists[p] = std::move(ordered);
    }
  }

  const std::string plugins_path = child(path, "plugins");
  if (out.lists[kQueueSort].size() != 1) {
    r.fail(plugins_path, "exactly one queueSort plugin must be enabled, got " +
                             std::to_string(out.lists[kQueueSort].size()) + " (kube-scheduler rejects such a profile)");
  }
  if (out.lists[kBind].empty()) {
    r.fail(plugins_path, "at least one bind plugin must be enabled (kube-scheduler rejects such a profile)");
  }

  // Score weights: a weight given at the score point wins over the
  // MultiPoint one; absent or 0 means 1.
  std::map<std::string, std::pair<int32_t, std::string>> weights;
  auto take_weights = [&](const std::vector<PluginRef>& refs) {
    for (const PluginRef& ref : refs) {
      if (!implements(ref.name, kScore) || weights.count(ref.name)) continue;
      int32_t w = ref.weight.value_or(0);
      if (w == 0) w = 1;
      weights.emplace(ref.name, std::make_pair(w, ref.path));
    }
  };
  take_weights(plugins.points[kScore].enabled);
  take_weights(plugins.multi_point.enabled);

  int64_t total = 0;
  for (const std::string& name : out.lists[kScore]) {
    const auto& [w, where] = weights.at(name);
    if (w < 0) {
      r.fail(child(where, "weight"), "plugin " + quoted(name) + " has a negative Score weight " + std::to_string(w) +
                                         "; bulkscore packs total scores as non-negative 32-bit values and does not "
                                         "support negative weights");
    }
    total += w;
    out.score.push_back(PluginEntry{name, w});
  }
  if (total * kMaxNodeScore > kMaxPackedTotalScore) {
    r.fail(child(plugins_path, "score"),
           "the Score weights sum to " + std::to_string(total) +
               "; bulkscore packs the total score (sum of weight x 100) into 32 bits, so the sum "
               "must be at most " +
               std::to_string(kMaxPackedTotalScore / kMaxNodeScore));
  }
  return out;
}

// ---------------------------------------------------------------------------
// Plugin args: decoding with v1 defaults, then validation
// ---------------------------------------------------------------------------

std::vector<ResourceSpec> parse_resources(const Reporter& r, const YAML::Node& n, const std::string& path) {
  std::vector<ResourceSpec> out;
  if (absent(n)) return out;
  check_sequence(r, n, path);
  for (size_t i = 0; i < n.size(); ++i) {
    const std::string p = at(path, i);
    check_map(r, n[i], p, {"name", "weight"});
    ResourceSpec spec;
    spec.weight = 0;  // absent = 0, which v1 defaulting turns into 1
    const YAML::Node name = field(n[i], "name");
    if (!absent(name)) spec.name = read_string(r, name, child(p, "name"));
    const YAML::Node weight = field(n[i], "weight");
    if (!absent(weight)) spec.weight = read_int64(r, weight, child(p, "weight"));
    out.push_back(std::move(spec));
  }
  return out;
}

std::vector<UtilizationShapePoint> parse_shape(const Reporter& r, const YAML::Node& n, const std::string& path) {
  std::vector<UtilizationShapePoint> out;
  if (absent(n)) return out;
  check_sequence(r, n, path);
  for (size_t i = 0; i < n.size(); ++i) {
    const std::string p = at(path, i);
    check_map(r, n[i], p, {"utilization", "score"});
    UtilizationShapePoint point;
    const YAML::Node u = field(n[i], "utilization");
    if (!absent(u)) point.utilization = read_int32(r, u, child(p, "utilization"));
    const YAML::Node s = field(n[i], "score");
    if (!absent(s)) point.score = read_int32(r, s, child(p, "score"));
    out.push_back(point);
  }
  return out;
}

std::string range_message(int64_t lo, int64_t hi, int64_t got) {
  return "must be in the range [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + std::to_string(got);
}

void validate_shape(const Reporter& r, const std::vector<UtilizationShapePoint>& shape, const std::string& path) {
  if (shape.empty()) r.fail(path, "at least one point must be specified");
  for (size_t i = 1; i < shape.size(); ++i) {
    if (shape[i - 1].utilization >= shape[i].utilization) {
      r.fail(child(at(path, i), "utilization"), "values must be sorted in strictly increasing order, got " +
                                                    std::to_string(shape[i].utilization) + " after " +
                                                    std::to_string(shape[i - 1].utilization));
    }
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i].utilization < 0 || shape[i].utilization > 100) {
      r.fail(child(at(path, i), "utilization"), range_message(0, 100, shape[i].utilization));
    }
    if (shape[i].score < 0 || shape[i].score > 10) {
      r.fail(child(at(path, i), "score"), range_message(0, 10, shape[i].score));
    }
  }
}

// NodeResourcesFitArgs as decoded and defaulted; validated only when the
// plugin is enabled somewhere (see validate_fit_args).
struct FitArgsSpec {
  std::vector<std::string> ignored_resources;
  std::vector<std::string> ignored_resource_groups;
  std::string type = "LeastAllocated";
  std::vector<ResourceSpec> resources{{"cpu", 1}, {"memory", 1}};
  bool has_ratio = false;  // scoringStrategy.requestedToCapacityRatio present
  std::vector<UtilizationShapePoint> shape;
};

FitArgsSpec parse_fit_args(const Reporter& r, const YAML::Node& n) {
  FitArgsSpec spec;
  if (absent(n)) return spec;
  check_map(r, n, "", {"apiVersion", "kind", "ignoredResources", "ignoredResourceGroups", "scoringStrategy"});
  spec.ignored_resources = read_string_list(r, field(n, "ignoredResources"), "ignoredResources");
  spec.ignored_resource_groups = read_string_list(r, field(n, "ignoredResourceGroups"), "ignoredResourceGroups");
  const YAML::Node strategy = field(n, "scoringStrategy");
  if (absent(strategy)) return spec;  // defaulting: LeastAllocated, cpu and memory
  check_map(r, strategy, "scoringStrategy", {"type", "resources", "requestedToCapacityRatio"});
  // A strategy that is present keeps its type as written: an absent type is
  // not defaulted and fails validation, as upstream.
  const YAML::Node type = field(strategy, "type");
  spec.type = absent(type) ? std::string() : read_string(r, type, "scoringStrategy.type");
  spec.resources = parse_resources(r, field(strategy, "resources"), "scoringStrategy.resources");
  if (spec.resources.empty()) spec.resources = {{"cpu", 1}, {"memory", 1}};
  for (ResourceSpec& res : spec.resources) {
    if (res.weight == 0) res.weight = 1;
  }
  const YAML::Node ratio = field(strategy, "requestedToCapacityRatio");
  if (!absent(ratio)) {
    const std::string ratio_path = "scoringStrategy.requestedToCapacityRatio";
    check_map(r, ratio, ratio_path, {"shape"});
    spec.has_ratio = true;
    spec.shape = parse_shape(r, field(ratio, "shape"), child(ratio_path, "shape"));
  }
  return spec;
}

void validate_fit_args(const Reporter& r, const FitArgsSpec& spec) {
  for (size_t i = 0; i < spec.ignored_resources.size(); ++i) {
    const std::string problem = qualified_name_problem(spec.ignored_resources[i]);
    if (!problem.empty()) {
      r.fail(at("ignoredResources", i), quoted(spec.ignored_resources[i]) + ": " + problem);
    }
  }
  for (size_t i = 0; i < spec.ignored_resource_groups.size(); ++i) {
    const std::string& group = spec.ignored_resource_groups[i];
    if (group.find('/') != std::string::npos) {
      r.fail(at("ignoredResourceGroups", i), quoted(group) + ": a resource group name can't contain '/'");
    }
    const std::string problem = qualified_name_problem(group);
    if (!problem.empty()) r.fail(at("ignoredResourceGroups", i), quoted(group) + ": " + problem);
  }
  if (spec.type != "LeastAllocated" && spec.type != "MostAllocated" && spec.type != "RequestedToCapacityRatio") {
    r.fail("scoringStrategy.type",
           "unsupported value " + quoted(spec.type) +
               "; supported: \"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\"");
  }
  for (size_t i = 0; i < spec.resources.size(); ++i) {
    const int64_t w = spec.resources[i].weight;
    if (w < 1 || w > 100) {
      r.fail(child(at("scoringStrategy.resources", i), "weight"), range_message(1, 100, w));
    }
  }
  if (spec.has_ratio) {
    validate_shape(r, spec.shape, "scoringStrategy.requestedToCapacityRatio.shape");
  }
  // Upstream dereferences the missing parameters and crashes; refuse instead.
  if (spec.type == "RequestedToCapacityRatio" && !spec.has_ratio) {
    r.fail("scoringStrategy.requestedToCapacityRatio",
           "required when scoringStrategy.type is RequestedToCapacityRatio");
  }
}

NodeResourcesFitArgs to_fit_args(const FitArgsSpec& spec) {
  NodeResourcesFitArgs args;
  args.ignored_resources = spec.ignored_resources;
  args.ignored_resource_groups = spec.ignored_resource_groups;
  if (spec.type == "MostAllocated") {
    args.strategy = ScoringStrategyType::MostAllocated;
  } else if (spec.type == "RequestedToCapacityRatio") {
    args.strategy = ScoringStrategyType::RequestedToCapacityRatio;
    args.shape = spec.shape;
  } else {
    args.strategy = ScoringStrategyType::LeastAllocated;
  }
  args.resources = spec.resources;
  return args;
}

NodeResourcesBalancedAllocationArgs parse_balanced_args(const Reporter& r, const YAML::Node& n) {
  NodeResourcesBalancedAllocationArgs args;
  if (absent(n)) return args;
  check_map(r, n, "", {"apiVersion", "kind", "resources"});
  std::vector<ResourceSpec> resources = parse_resources(r, field(n, "resources"), "resources");
  if (resources.empty()) return args;  // defaulting: cpu and memory
  std::set<std::string> seen;
  for (size_t i = 0; i < resources.size(); ++i) {
    if (resources[i].weight == 0) resources[i].weight = 1;
    if (!seen.insert(resources[i].name).second) {
      r.fail(child(at("resources", i), "name"), "duplicate resource " + quoted(resources[i].name));
    }
    if (resources[i].weight != 1) {
      r.fail(child(at("resources", i), "weight"), "must be 1, got " + std::to_string(resources[i].weight));
    }
  }
  args.resources = std::move(resources);
  return args;
}

NodeSelectorRequirement parse_selector_requirement(const Reporter& r, const YAML::Node& n, const std::string& path) {
  check_map(r, n, path, {"key", "operator", "values"});
  NodeSelectorRequirement req;
  const YAML::Node key = field(n, "key");
  if (!absent(key)) req.key = read_string(r, key, child(path, "key"));
  const YAML::Node op = field(n, "operator");
  if (!absent(op)) req.op = read_string(r, op, child(path, "operator"));
  req.values = read_string_list(r, field(n, "values"), child(path, "values"));
  return req;
}

NodeSelectorTerm parse_selector_term(const Reporter& r, const YAML::Node& n, const std::string& path) {
  NodeSelectorTerm term;
  if (absent(n)) return term;
  check_map(r, n, path, {"matchExpressions", "matchFields"});
  for (const char* which : {"matchExpressions", "matchFields"}) {
    const YAML::Node list = field(n, which);
    const std::string list_path = child(path, which);
    if (absent(list)) continue;
    check_sequence(r, list, list_path);
    auto& dest = std::string_view(which) == "matchExpressions" ? term.match_expressions : term.match_fields;
    for (size_t i = 0; i < list.size(); ++i) {
      dest.push_back(parse_selector_requirement(r, list[i], at(list_path, i)));
    }
  }
  return term;
}

// nodeaffinity.NewNodeSelector / NewPreferredSchedulingTerms: the parse
// errors of one term.
void validate_selector_term(const Reporter& r, const NodeSelectorTerm& term, const std::string& path) {
  for (size_t i = 0; i < term.match_expressions.size(); ++i) {
    const NodeSelectorRequirement& req = term.match_expressions[i];
    const std::string p = at(child(path, "matchExpressions"), i);
    const std::string& op = req.op;
    if (op != "In" && op != "NotIn" && op != "Exists" && op != "DoesNotExist" && op != "Gt" && op != "Lt") {
      r.fail(child(p, "operator"), "unsupported value " + quoted(op) +
                                       "; supported: \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\", \"Gt\", \"Lt\"");
    }
    const std::string key_problem = qualified_name_problem(req.key);
    if (!key_problem.empty()) r.fail(child(p, "key"), quoted(req.key) + ": " + key_problem);
    const std::string values_path = child(p, "values");
    if ((op == "In" || op == "NotIn") && req.values.empty()) {
      r.fail(values_path, "must not be empty for the In and NotIn operators");
    }
    if ((op == "Exists" || op == "DoesNotExist") && !req.values.empty()) {
      r.fail(values_path, "must be empty for the Exists and DoesNotExist operators");
    }
    if (op == "Gt" || op == "Lt") {
      if (req.values.size() != 1) {
        r.fail(values_path, "must have exactly one value for the Gt and Lt operators");
      }
      if (!is_go_int64(req.values[0])) {
        r.fail(at(values_path, 0), quoted(req.values[0]) + ": must be an integer for the Gt and Lt operators");
      }
    }
    for (size_t v = 0; v < req.values.size(); ++v) {
      const std::string problem = label_value_problem(req.values[v]);
      if (!problem.empty()) r.fail(at(values_path, v), quoted(req.values[v]) + ": " + problem);
    }
  }
  for (size_t i = 0; i < term.match_fields.size(); ++i) {
    const NodeSelectorRequirement& req = term.match_fields[i];
    const std::string p = at(child(path, "matchFields"), i);
    if (req.op != "In" && req.op != "NotIn") {
      r.fail(child(p, "operator"), "unsupported value " + quoted(req.op) + "; supported: \"In\", \"NotIn\"");
    }
    if (req.values.size() != 1) r.fail(child(p, "values"), "must have exactly one element");
  }
}

bool empty_term(const NodeSelectorTerm& t) { return t.match_expressions.empty() && t.match_fields.empty(); }

NodeAffinityArgs parse_node_affinity_args(const Reporter& r, const YAML::Node& n) {
  NodeAffinityArgs args;
  if (absent(n)) return args;
  check_map(r, n, "", {"apiVersion", "kind", "addedAffinity"});
  const YAML::Node added = field(n, "addedAffinity");
  if (absent(added)) return args;
  const std::string base = "addedAffinity";
  check_map(r, added, base,
            {"requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution"});
  NodeAffinity affinity;

  const std::string req_path = child(base, "requiredDuringSchedulingIgnoredDuringExecution");
  const YAML::Node required = field(added, "requiredDuringSchedulingIgnoredDuringExecution");
  if (!absent(required)) {
    check_map(r, required, req_path, {"nodeSelectorTerms"});
    NodeSelector selector;
    const std::string terms_path = child(req_path, "nodeSelectorTerms");
    const YAML::Node terms = field(required, "nodeSelectorTerms");
    if (!absent(terms)) {
      check_sequence(r, terms, terms_path);
      for (size_t i = 0; i < terms.size(); ++i) {
        selector.terms.push_back(parse_selector_term(r, terms[i], at(terms_path, i)));
      }
    }
    // Empty terms are skipped, not rejected; they also match nothing.
    for (size_t i = 0; i < selector.terms.size(); ++i) {
      if (!empty_term(selector.terms[i])) {
        validate_selector_term(r, selector.terms[i], at(terms_path, i));
      }
    }
    affinity.required = std::move(selector);
  }

  const std::string pref_path = child(base, "preferredDuringSchedulingIgnoredDuringExecution");
  const YAML::Node preferred = field(added, "preferredDuringSchedulingIgnoredDuringExecution");
  if (!absent(preferred)) {
    check_sequence(r, preferred, pref_path);
    affinity.has_preferred = true;
    for (size_t i = 0; i < preferred.size(); ++i) {
      const std::string p = at(pref_path, i);
      check_map(r, preferred[i], p, {"weight", "preference"});
      PreferredSchedulingTerm term;
      const YAML::Node weight = field(preferred[i], "weight");
      if (!absent(weight)) term.weight = read_int32(r, weight, child(p, "weight"));
      term.preference = parse_selector_term(r, field(preferred[i], "preference"), child(p, "preference"));
      // Terms that can never count (weight 0 or no requirements) are not
      // parsed upstream, so they cannot be wrong either.
      if (term.weight != 0 && !empty_term(term.preference)) {
        validate_selector_term(r, term.preference, child(p, "preference"));
      }
      affinity.preferred.push_back(std::move(term));
    }
  }
  args.added_affinity = std::move(affinity);
  return args;
}

InterPodAffinityArgs parse_inter_pod_affinity_args(const Reporter& r, const YAML::Node& n) {
  InterPodAffinityArgs args;
  if (absent(n)) return args;
  check_map(r, n, "", {"apiVersion", "kind", "hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"});
  const YAML::Node weight = field(n, "hardPodAffinityWeight");
  if (!absent(weight)) {
    args.hard_pod_affinity_weight = read_int32(r, weight, "hardPodAffinityWeight");
  }
  if (args.hard_pod_affinity_weight < 0 || args.hard_pod_affinity_weight > 100) {
    r.fail("hardPodAffinityWeight", range_message(0, 100, args.hard_pod_affinity_weight));
  }
  const YAML::Node ignore = field(n, "ignorePreferredTermsOfExistingPods");
  if (!absent(ignore)) {
    args.ignore_preferred_terms_of_existing_pods = read_bool(r, ignore, "ignorePreferredTermsOfExistingPods");
  }
  return args;
}

TopologySpreadConstraint parse_default_constraint(const Reporter& r, const YAML::Node& n, const std::string& path) {
  check_map(r, n, path,
            {"maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector", "minDomains", "nodeAffinityPolicy",
             "nodeTaintsPolicy", "matchLabelKeys"});
  TopologySpreadConstraint c;
  const YAML::Node skew = field(n, "maxSkew");
  if (!absent(skew)) c.max_skew = read_int32(r, skew, child(path, "maxSkew"));
  const YAML::Node key = field(n, "topologyKey");
  if (!absent(key)) c.topology_key = read_string(r, key, child(path, "topologyKey"));
  const YAML::Node when = field(n, "whenUnsatisfiable");
  if (!absent(when)) c.when_unsatisfiable = read_string(r, when, child(path, "whenUnsatisfiable"));
  // Any selector is forbidden (validated below), so its content is not read.
  if (!absent(field(n, "labelSelector"))) c.label_selector = LabelSelector{};
  const YAML::Node min_domains = field(n, "minDomains");
  if (!absent(min_domains)) c.min_domains = read_int32(r, min_domains, child(path, "minDomains"));
  const YAML::Node affinity_policy = field(n, "nodeAffinityPolicy");
  if (!absent(affinity_policy)) {
    c.node_affinity_policy = read_string(r, affinity_policy, child(path, "nodeAffinityPolicy"));
  }
  const YAML::Node taints_policy = field(n, "nodeTaintsPolicy");
  if (!absent(taints_policy)) {
    c.node_taints_policy = read_string(r, taints_policy, child(path, "nodeTaintsPolicy"));
  }
  c.match_label_keys = read_string_list(r, field(n, "matchLabelKeys"), child(path, "matchLabelKeys"));
  return c;
}

PodTopologySpreadArgs parse_pod_topology_spread_args(const Reporter& r, const YAML::Node& n) {
  PodTopologySpreadArgs args;
  if (absent(n)) return args;
  check_map(r, n, "", {"apiVersion", "kind", "defaultConstraints", "defaultingType"});
  const YAML::Node type = field(n, "defaultingType");
  if (!absent(type)) args.defaulting_type = read_string(r, type, "defaultingType");
  if (args.defaulting_type.empty()) args.defaulting_type = "System";
  const YAML::Node list = field(n, "defaultConstraints");
  if (!absent(list)) {
    check_sequence(r, list, "defaultConstraints");
    for (size_t i = 0; i < list.size(); ++i) {
      args.default_constraints.push_back(parse_default_constraint(r, list[i], at("defaultConstraints", i)));
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
    const std::string p = at("defaultConstraints", i);
    if (c.max_skew <= 0) {
      r.fail(child(p, "maxSkew"), "must be greater than 0, got " + std::to_string(c.max_skew));
    }
    if (c.topology_key.empty()) r.fail(child(p, "topologyKey"), "required");
    const std::string key_problem = qualified_name_problem(c.topology_key);
    if (!key_problem.empty()) {
      r.fail(child(p, "topologyKey"), quoted(c.topology_key) + ": " + key_problem);
    }
    if (c.when_unsatisfiable.empty()) r.fail(child(p, "whenUnsatisfiable"), "required");
    if (c.when_unsatisfiable != "DoNotSchedule" && c.when_unsatisfiable != "ScheduleAnyway") {
      r.fail(child(p, "whenUnsatisfiable"), "unsupported value " + quoted(c.when_unsatisfiable) +
                                                "; supported: \"DoNotSchedule\", \"ScheduleAnyway\"");
    }
    if (c.label_selector) {
      r.fail(child(p, "labelSelector"), "must not be set: default constraints take their selector from each pod");
    }
    for (size_t j = 0; j < i; ++j) {
      const TopologySpreadConstraint& other = args.default_constraints[j];
      if (other.topology_key == c.topology_key && other.when_unsatisfiable == c.when_unsatisfiable) {
        r.fail(p, "duplicate constraint {" + c.topology_key + ", " + c.when_unsatisfiable +
                      "} (same as defaultConstraints[" + std::to_string(j) + "])");
      }
    }
  }
  return args;
}

void check_default_preemption_args(const Reporter& r, const YAML::Node& n) {
  int32_t percentage = 10;
  int32_t absolute = 100;
  if (!absent(n)) {
    check_map(r, n, "", {"apiVersion", "kind", "minCandidateNodesPercentage", "minCandidateNodesAbsolute"});
    const YAML::Node p = field(n, "minCandidateNodesPercentage");
    if (!absent(p)) percentage = read_int32(r, p, "minCandidateNodesPercentage");
    const YAML::Node a = field(n, "minCandidateNodesAbsolute");
    if (!absent(a)) absolute = read_int32(r, a, "minCandidateNodesAbsolute");
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
}

void check_volume_binding_args(const Reporter& r, const YAML::Node& n) {
  if (absent(n)) return;
  check_map(r, n, "", {"apiVersion", "kind", "bindTimeoutSeconds", "shape"});
  const YAML::Node timeout = field(n, "bindTimeoutSeconds");
  if (!absent(timeout)) {
    const int64_t seconds = read_int64(r, timeout, "bindTimeoutSeconds");
    if (seconds < 0) {
      r.fail("bindTimeoutSeconds", "must not be negative, got " + std::to_string(seconds));
    }
  }
  if (!absent(field(n, "shape"))) {
    r.fail("shape",
           "unexpected field: the StorageCapacityScoring feature gate is off in v1.35.4 (and "
           "in bulkscore), so shape must not be set");
  }
}

void check_dynamic_resources_args(const Reporter& r, const YAML::Node& n) {
  if (absent(n)) return;
  check_map(r, n, "", {"apiVersion", "kind", "filterTimeout", "bindingTimeout"});
  const YAML::Node filter_timeout = field(n, "filterTimeout");
  if (!absent(filter_timeout)) {
    const std::string text = read_string(r, filter_timeout, "filterTimeout");
    const std::optional<bool> negative = go_duration_is_negative(text);
    if (!negative) r.fail("filterTimeout", quoted(text) + " is not a duration");
    if (*negative) r.fail("filterTimeout", "must be zero or positive, got " + text);
  }
  if (!absent(field(n, "bindingTimeout"))) {
    r.fail("bindingTimeout", "forbidden: the DRADeviceBindingConditions feature gate is off in v1.35.4");
  }
}

// The in-tree plugins with a registered args kind (<Name>Args).
constexpr std::array<std::string_view, 8> kPluginsWithArgs = {
    "DefaultPreemption", "InterPodAffinity",  "NodeResourcesBalancedAllocation",
    "NodeResourcesFit",  "PodTopologySpread", "VolumeBinding",
    "NodeAffinity",      "DynamicResources"};

// ---------------------------------------------------------------------------
// Profiles
// ---------------------------------------------------------------------------

struct ProfileSpec {
  std::optional<std::string> scheduler_name;
  std::optional<int32_t> percentage;
  PluginsSpec merged;
  ProfileConfig config;
};

int32_t read_percentage(const Reporter& r, const YAML::Node& n, const std::string& path) {
  const int32_t v = read_int32(r, n, path);
  if (v < 0 || v > 100) r.fail(path, range_message(0, 100, v));
  return v;
}

ProfileSpec parse_profile(const Reporter& r, const YAML::Node& n, const std::string& path) {
  ProfileSpec spec;
  if (!absent(n)) {
    check_map(r, n, path, {"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"});
    const YAML::Node name = field(n, "schedulerName");
    if (!absent(name)) spec.scheduler_name = read_string(r, name, child(path, "schedulerName"));
    const YAML::Node pct = field(n, "percentageOfNodesToScore");
    if (!absent(pct)) {
      spec.percentage = read_percentage(r, pct, child(path, "percentageOfNodesToScore"));
    }
  }
  const YAML::Node plugins_node = absent(n) ? YAML::Node() : field(n, "plugins");
  spec.merged = merge_plugins(default_plugins(), parse_plugins(r, plugins_node, child(path, "plugins")));
  const std::set<std::string> needed = plugins_needed(spec.merged);

  ProfileConfig& cfg = spec.config;
  const YAML::Node configs = absent(n) ? YAML::Node() : field(n, "pluginConfig");
  std::map<std::string, size_t> seen;
  if (!absent(configs)) {
    const std::string list_path = child(path, "pluginConfig");
    check_sequence(r, configs, list_path);
    for (size_t i = 0; i < configs.size(); ++i) {
      const std::string entry_path = at(list_path, i);
      const YAML::Node entry = configs[i];
      check_map(r, entry, entry_path, {"name", "args"});
      const YAML::Node name_node = field(entry, "name");
      const std::string name = absent(name_node) ? std::string() : read_string(r, name_node, child(entry_path, "name"));
      const auto [prev, inserted] = seen.emplace(name, i);
      if (!inserted) {
        r.fail(entry_path,
               "duplicate pluginConfig for plugin " + quoted(name) + " (also at " + at(list_path, prev->second) + ")");
      }
      if (!find_plugin(name)) r.fail(child(entry_path, "name"), unknown_plugin_message(name));

      bool has_args_kind = false;
      for (std::string_view k : kPluginsWithArgs) has_args_kind = has_args_kind || k == name;
      // Plugins without an args kind ignore whatever is given, as upstream.
      if (!has_args_kind) continue;

      const Reporter ar = r.for_object(entry_path + " (" + name + ")");
      const YAML::Node args = field(entry, "args");
      if (!absent(args)) {
        if (!args.IsMap()) ar.fail_at(args, "", "args must be a mapping");
        const YAML::Node api = field(args, "apiVersion");
        if (!absent(api) && read_string(ar, api, "apiVersion") != kApiVersion) {
          ar.fail("apiVersion", "must be " + std::string(kApiVersion) + ", got " + quoted(api.Scalar()));
        }
        const YAML::Node kind = field(args, "kind");
        const std::string want_kind = name + "Args";
        if (!absent(kind) && read_string(ar, kind, "kind") != want_kind) {
          ar.fail("kind", "must be " + want_kind + ", got " + quoted(kind.Scalar()));
        }
      }
      if (name == "NodeResourcesFit") {
        const FitArgsSpec fit = parse_fit_args(ar, args);
        // Upstream's config validation misses these args (its table keys
        // them as "NodeResourcesFitArgs"); only building the plugin checks
        // them, which happens when it is enabled somewhere.
        if (needed.count(name)) validate_fit_args(ar, fit);
        cfg.fit_args = to_fit_args(fit);
      } else if (name == "NodeResourcesBalancedAllocation") {
        cfg.balanced_args = parse_balanced_args(ar, args);
      } else if (name == "NodeAffinity") {
        cfg.node_affinity_args = parse_node_affinity_args(ar, args);
      } else if (name == "InterPodAffinity") {
        cfg.inter_pod_affinity_args = parse_inter_pod_affinity_args(ar, args);
      } else if (name == "PodTopologySpread") {
        cfg.pod_topology_spread_args = parse_pod_topology_spread_args(ar, args);
      } else if (name == "DefaultPreemption") {
        check_default_preemption_args(ar, args);
      } else if (name == "VolumeBinding") {
        check_volume_binding_args(ar, args);
      } else if (name == "DynamicResources") {
        check_dynamic_resources_args(ar, args);
      }
    }
  }

  const ResolvedPlugins resolved = resolve_plugins(r, spec.merged, path);
  cfg.pre_filter = resolved.lists[kPreFilter];
  cfg.filter = resolved.lists[kFilter];
  cfg.pre_score = resolved.lists[kPreScore];
  cfg.score = resolved.score;
  return spec;
}

// validateCommonQueueSort: every profile must configure queueSort exactly as
// the first one does (after merging with the defaults).
bool same_plugin_set(const PluginSetSpec& a, const PluginSetSpec& b) {
  if (a.enabled.size() != b.enabled.size() || a.disabled != b.disabled) return false;
  for (size_t i = 0; i < a.enabled.size(); ++i) {
    if (a.enabled[i].name != b.enabled[i].name || a.enabled[i].weight != b.enabled[i].weight) {
      return false;
    }
  }
  return true;
}

std::vector<YAML::Node> load_documents(const Reporter& r, const std::string& text) {
  try {
    return YAML::LoadAll(text);
  } catch (const YAML::ParserException& e) {
    r.fail("", "malformed YAML at line " + std::to_string(e.mark.line + 1) + ", column " +
                   std::to_string(e.mark.column + 1) + ": " + e.msg);
  } catch (const YAML::Exception& e) {
    r.fail("", std::string("malformed YAML: ") + e.what());
  }
}

}  // namespace

SchedulerConfig default_scheduler_config() {
  const Reporter r("<built-in default configuration>");
  ProfileSpec spec = parse_profile(r, YAML::Node(), "profiles[0]");
  spec.config.scheduler_name = std::string(kDefaultSchedulerName);
  spec.config.percentage_of_nodes_to_score = 100;
  SchedulerConfig config;
  config.profiles.push_back(std::move(spec.config));
  return config;
}

SchedulerConfig load_scheduler_config(const std::string& path) { return parse_scheduler_config(read_file(path), path); }

SchedulerConfig parse_scheduler_config(const std::string& yaml_text, const std::string& origin) {
  const Reporter r(origin);
  std::vector<YAML::Node> docs = load_documents(r, yaml_text);
  // A trailing "---" yields an empty document; it carries nothing.
  while (!docs.empty() && docs.back().IsNull()) docs.pop_back();
  if (docs.empty()) r.fail("", "empty document: expected a KubeSchedulerConfiguration");
  if (docs.size() > 1) {
    r.fail("", "expected one YAML document, found " + std::to_string(docs.size()));
  }
  const YAML::Node& root = docs.front();
  if (!root.IsMap()) r.fail_at(root, "", "the document must be a mapping");

  const YAML::Node api = field(root, "apiVersion");
  if (absent(api)) r.fail("apiVersion", "required (" + std::string(kApiVersion) + ")");
  const std::string api_version = read_string(r, api, "apiVersion");
  if (api_version != kApiVersion) {
    r.fail("apiVersion",
           "unsupported " + quoted(api_version) + "; bulkscore reads " + std::string(kApiVersion) + " only");
  }
  const YAML::Node kind_node = field(root, "kind");
  if (absent(kind_node)) r.fail("kind", "required (" + std::string(kKind) + ")");
  const std::string kind = read_string(r, kind_node, "kind");
  if (kind != kKind) {
    r.fail("kind", "unsupported " + quoted(kind) + "; expected " + std::string(kKind));
  }

  check_map(r, root, "",
            {"apiVersion", "kind", "parallelism", "leaderElection", "clientConnection", "enableProfiling",
             "enableContentionProfiling", "percentageOfNodesToScore", "podInitialBackoffSeconds",
             "podMaxBackoffSeconds", "profiles", "extenders", "delayCacheUntilActive"});

  SchedulerConfig config;
  const YAML::Node parallelism = field(root, "parallelism");
  if (!absent(parallelism)) {
    config.parallelism = read_int32(r, parallelism, "parallelism");
    if (config.parallelism <= 0) {
      r.fail("parallelism", "must be greater than zero, got " + std::to_string(config.parallelism));
    }
  }
  std::optional<int32_t> global_percentage;
  const YAML::Node pct = field(root, "percentageOfNodesToScore");
  if (!absent(pct)) global_percentage = read_percentage(r, pct, "percentageOfNodesToScore");

  int64_t initial_backoff = 1;
  int64_t max_backoff = 10;
  const YAML::Node initial_node = field(root, "podInitialBackoffSeconds");
  if (!absent(initial_node)) {
    initial_backoff = read_int64(r, initial_node, "podInitialBackoffSeconds");
  }
  const YAML::Node max_node = field(root, "podMaxBackoffSeconds");
  if (!absent(max_node)) max_backoff = read_int64(r, max_node, "podMaxBackoffSeconds");
  if (initial_backoff <= 0) {
    r.fail("podInitialBackoffSeconds", "must be greater than 0, got " + std::to_string(initial_backoff));
  }
  if (max_backoff < initial_backoff) {
    r.fail("podMaxBackoffSeconds", "must be greater than or equal to podInitialBackoffSeconds");
  }
  for (const char* flag : {"enableProfiling", "enableContentionProfiling", "delayCacheUntilActive"}) {
    const YAML::Node n = field(root, flag);
    if (!absent(n)) read_bool(r, n, flag);
  }
  for (const char* object : {"leaderElection", "clientConnection"}) {
    const YAML::Node n = field(root, object);
    if (!absent(n) && !n.IsMap()) r.fail_at(n, object, "must be a mapping");
  }
  const YAML::Node extenders = field(root, "extenders");
  if (!absent(extenders)) {
    check_sequence(r, extenders, "extenders");
    if (extenders.size() != 0) {
      r.fail("extenders", "scheduler extenders are not supported by bulkscore");
    }
  }

  // No profiles means one default profile, as v1 defaulting does.
  const YAML::Node profiles = field(root, "profiles");
  std::vector<YAML::Node> profile_nodes;
  if (!absent(profiles)) {
    check_sequence(r, profiles, "profiles");
    for (size_t i = 0; i < profiles.size(); ++i) profile_nodes.push_back(profiles[i]);
  }
  if (profile_nodes.empty()) profile_nodes.emplace_back();

  std::vector<ProfileSpec> specs;
  std::map<std::string, size_t> names;
  for (size_t i = 0; i < profile_nodes.size(); ++i) {
    const std::string path = at("profiles", i);
    ProfileSpec spec = parse_profile(r, profile_nodes[i], path);
    // Only an absent name is defaulted, and only for a lone profile; an
    // explicit "" stays and is rejected, as upstream.
    std::string name;
    if (spec.scheduler_name) {
      name = *spec.scheduler_name;
    } else if (profile_nodes.size() == 1) {
      name = std::string(kDefaultSchedulerName);
    }
    if (name.empty()) r.fail(child(path, "schedulerName"), "required");
    const auto [prev, inserted] = names.emplace(name, i);
    if (!inserted) {
      r.fail(child(path, "schedulerName"),
             "duplicate " + quoted(name) + " (also used by " + at("profiles", prev->second) + ")");
    }
    spec.config.scheduler_name = name;
    spec.config.percentage_of_nodes_to_score = spec.percentage ? *spec.percentage : global_percentage.value_or(100);
    specs.push_back(std::move(spec));
  }
  for (size_t i = 1; i < specs.size(); ++i) {
    if (!same_plugin_set(specs[0].merged.points[kQueueSort], specs[i].merged.points[kQueueSort])) {
      r.fail(child(at("profiles", i), "plugins.queueSort"),
             "must be the same for all profiles (differs from profiles[0])");
    }
  }

  for (ProfileSpec& spec : specs) config.profiles.push_back(std::move(spec.config));
  return config;
}

}  // namespace bulkscore
