// KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) parsing.
//
// The pipeline mirrors kube-scheduler v1.35.4 step by step, because the
// resulting plugin order is observable (Filter stops at the first rejecting
// plugin, and score output lists plugins in order):
//   1. strict decoding of the YAML (host/input/yaml_reader.hpp: YAML 1.1
//      scalars, JSON decoding rules, unknown or repeated fields are errors,
//      as with the strict decoder kube-scheduler uses for v1),
//   2. v1 defaulting: the user's plugin sets are merged into the default
//      profile set by set (v1/default_plugins.go mergePluginSet),
//   3. validation of the configuration (validation/validation.go) and of
//      each plugin's args (validation_pluginargs.go), the latter beside each
//      plugin (plugins/plugin_args.hpp),
//   4. what the framework does when it builds a profile
//      (framework/runtime/framework.go): per-point lists, MultiPoint
//      expansion, duplicate detection and Score weights.
#include "host/input/config.hpp"

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
#include "host/input/yaml_reader.hpp"
#include "host/io/io.hpp"
#include "plugins/plugin_args.hpp"

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

// bulkscore's own plugins (docs/plugins.md, "Beyond upstream"): known to
// the configuration like in-tree ones, in no default set; a profile enables
// them by name (at their points or through multiPoint).
constexpr std::array<KnownPlugin, 10> kOutOfTreePlugins = {{
    {"GpuShare", kPreFilterFilter, 0},
    {"SharedDeviceGroup", kFullScoring, 0},
    {"WorkloadType", kPreFilterFilter, 0},
    {"GpuFragmentation", bit(kPreScore) | bit(kScore), 0},
    {"GpuBestFit", bit(kPreScore) | bit(kScore), 0},
    {"GpuDotProduct", bit(kPreScore) | bit(kScore), 0},
    {"GpuPacking", bit(kPreScore) | bit(kScore), 0},
    {"GpuClustering", bit(kPreScore) | bit(kScore), 0},
    {"GpuRandomFit", bit(kPreScore) | bit(kScore), 0},
    {"NodeData", bit(kFilter) | bit(kScore), 0},
}};

const KnownPlugin* find_plugin(std::string_view name) {
  for (const KnownPlugin& p : kKnownPlugins) {
    if (p.name == name) return &p;
  }
  for (const KnownPlugin& p : kOutOfTreePlugins) {
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

PluginSetSpec parse_plugin_set(const YamlReader& r, const YAML::Node& n, const std::string& path) {
  PluginSetSpec set;
  if (yaml_absent(n)) return set;
  r.check_map(n, path, {"enabled", "disabled"});
  for (const char* which : {"enabled", "disabled"}) {
    const YAML::Node list = r.field(n, which);
    const std::string list_path = yaml_child(path, which);
    if (yaml_absent(list)) continue;
    r.check_sequence(list, list_path);
    for (size_t i = 0; i < list.size(); ++i) {
      const YAML::Node entry = list[i];
      const std::string entry_path = yaml_at(list_path, i);
      r.check_map(entry, entry_path, {"name", "weight"});
      const YAML::Node name_node = r.field(entry, "name");
      const std::string name =
          yaml_absent(name_node) ? std::string() : r.read_string(name_node, yaml_child(entry_path, "name"));
      std::optional<int32_t> weight;
      const YAML::Node weight_node = r.field(entry, "weight");
      if (!yaml_absent(weight_node)) weight = r.read_int32(weight_node, yaml_child(entry_path, "weight"));
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

PluginsSpec parse_plugins(const YamlReader& r, const YAML::Node& n, const std::string& path) {
  PluginsSpec spec;
  if (yaml_absent(n)) return spec;
  r.check_map(n, path,
              {"multiPoint", "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
               "reserve", "permit", "preBind", "bind", "postBind"});
  spec.multi_point = parse_plugin_set(r, r.field(n, "multiPoint"), yaml_child(path, "multiPoint"));
  for (int p = 0; p < kPointCount; ++p) {
    const std::string key(kPointField[p]);
    spec.points[p] = parse_plugin_set(r, r.field(n, key.c_str()), yaml_child(path, key));
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
ResolvedPlugins resolve_plugins(const YamlReader& r, const PluginsSpec& plugins, const std::string& path) {
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

  const std::string plugins_path = yaml_child(path, "plugins");
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
      r.fail(yaml_child(where, "weight"),
             "plugin " + quoted(name) + " has a negative Score weight " + std::to_string(w) +
                 "; bulkscore packs total scores as non-negative 32-bit values and does not "
                 "support negative weights");
    }
    total += w;
    out.score.push_back(PluginEntry{name, w});
  }
  if (total * kMaxNodeScore > kMaxPackedTotalScore) {
    r.fail(yaml_child(plugins_path, "score"),
           "the Score weights sum to " + std::to_string(total) +
               "; bulkscore packs the total score (sum of weight x 100) into 32 bits, so the sum "
               "must be at most " +
               std::to_string(kMaxPackedTotalScore / kMaxNodeScore));
  }
  return out;
}

// ---------------------------------------------------------------------------
// ---------------------------------------------------------------------------
// Profiles
// ---------------------------------------------------------------------------

struct ProfileSpec {
  std::optional<std::string> scheduler_name;
  std::optional<int32_t> percentage;
  PluginsSpec merged;
  ProfileConfig config;
};

int32_t read_percentage(const YamlReader& r, const YAML::Node& n, const std::string& path) {
  const int32_t v = r.read_int32(n, path);
  if (v < 0 || v > 100) r.fail(path, range_message(0, 100, v));
  return v;
}

ProfileSpec parse_profile(const YamlReader& r, const YAML::Node& n, const std::string& path) {
  ProfileSpec spec;
  if (!yaml_absent(n)) {
    r.check_map(n, path, {"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig", "tieBreak"});
    const YAML::Node name = r.field(n, "schedulerName");
    if (!yaml_absent(name)) spec.scheduler_name = r.read_string(name, yaml_child(path, "schedulerName"));
    // bulkscore's extension (upstream has no such field and its strict
    // decoding refuses it): the profile's tie-break among the nodes that
    // share the best total.
    const YAML::Node tie = r.field(n, "tieBreak");
    if (!yaml_absent(tie)) {
      const std::string tie_path = yaml_child(path, "tieBreak");
      const std::string value = r.read_string(tie, tie_path);
      if (value == "random")
        spec.config.tie_break = ProfileTieBreak::kRandom;
      else if (value == "first")
        spec.config.tie_break = ProfileTieBreak::kFirst;
      else
        r.fail(tie_path, "expected random or first, got " + quoted(value));
    }
    const YAML::Node pct = r.field(n, "percentageOfNodesToScore");
    if (!yaml_absent(pct)) {
      spec.percentage = read_percentage(r, pct, yaml_child(path, "percentageOfNodesToScore"));
    }
  }
  const YAML::Node plugins_node = yaml_absent(n) ? YAML::Node() : r.field(n, "plugins");
  spec.merged = merge_plugins(default_plugins(), parse_plugins(r, plugins_node, yaml_child(path, "plugins")));
  const std::set<std::string> needed = plugins_needed(spec.merged);

  ProfileConfig& cfg = spec.config;
  const YAML::Node configs = yaml_absent(n) ? YAML::Node() : r.field(n, "pluginConfig");
  std::map<std::string, size_t> seen;
  if (!yaml_absent(configs)) {
    const std::string list_path = yaml_child(path, "pluginConfig");
    r.check_sequence(configs, list_path);
    for (size_t i = 0; i < configs.size(); ++i) {
      const std::string entry_path = yaml_at(list_path, i);
      const YAML::Node entry = configs[i];
      r.check_map(entry, entry_path, {"name", "args"});
      const YAML::Node name_node = r.field(entry, "name");
      const std::string name =
          yaml_absent(name_node) ? std::string() : r.read_string(name_node, yaml_child(entry_path, "name"));
      const auto [prev, inserted] = seen.emplace(name, i);
      if (!inserted) {
        r.fail(entry_path, "duplicate pluginConfig for plugin " + quoted(name) + " (also at " +
                               yaml_at(list_path, prev->second) + ")");
      }
      if (!find_plugin(name)) r.fail(yaml_child(entry_path, "name"), unknown_plugin_message(name));

      // Plugins without an args kind ignore whatever is given, as upstream.
      const PluginArgsEntry* parser = find_plugin_args(name);
      if (parser == nullptr) continue;

      const YamlReader ar = r.for_object(entry_path + " (" + name + ")");
      const YAML::Node args = r.field(entry, "args");
      if (!yaml_absent(args)) {
        if (!args.IsMap()) ar.fail_at(args, "", "args must be a mapping");
        const YAML::Node api = r.field(args, "apiVersion");
        if (!yaml_absent(api) && ar.read_string(api, "apiVersion") != kApiVersion) {
          ar.fail("apiVersion", "must be " + std::string(kApiVersion) + ", got " + quoted(api.Scalar()));
        }
        const YAML::Node kind = r.field(args, "kind");
        const std::string want_kind = name + "Args";
        if (!yaml_absent(kind) && ar.read_string(kind, "kind") != want_kind) {
          ar.fail("kind", "must be " + want_kind + ", got " + quoted(kind.Scalar()));
        }
      }
      parser->parse(ar, args, PluginArgsContext{needed.count(name) != 0}, cfg);
    }
  }
  // NodeData enabled without a pluginConfig entry has its default args,
  // which read no column: refused as an entry without columns is.
  if (needed.count("NodeData") != 0 && seen.count("NodeData") == 0)
    cfg.node_data_args =
        parse_node_data_args(r.for_object(path + " (NodeData)"), YAML::Node(), PluginArgsContext{true});

  const ResolvedPlugins resolved = resolve_plugins(r, spec.merged, path);
  cfg.pre_filter = resolved.lists[kPreFilter];
  cfg.filter = resolved.lists[kFilter];
  cfg.pre_score = resolved.lists[kPreScore];
  cfg.score = resolved.score;
  cfg.post_filter = resolved.lists[kPostFilter];
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

}  // namespace

SchedulerConfig default_scheduler_config() {
  const YamlReader r("<built-in default configuration>");
  ProfileSpec spec = parse_profile(r, YAML::Node(), "profiles[0]");
  spec.config.scheduler_name = std::string(kDefaultSchedulerName);
  spec.config.percentage_of_nodes_to_score = 100;
  SchedulerConfig config;
  config.profiles.push_back(std::move(spec.config));
  return config;
}

SchedulerConfig load_scheduler_config(const std::string& path) { return parse_scheduler_config(read_file(path), path); }

SchedulerConfig parse_scheduler_config(const std::string& yaml_text, const std::string& origin) {
  const YamlReader r(origin);
  const YAML::Node root = r.load_single_mapping(yaml_text, "a KubeSchedulerConfiguration");

  const YAML::Node api = r.field(root, "apiVersion");
  if (yaml_absent(api)) r.fail("apiVersion", "required (" + std::string(kApiVersion) + ")");
  const std::string api_version = r.read_string(api, "apiVersion");
  if (api_version != kApiVersion) {
    r.fail("apiVersion",
           "unsupported " + quoted(api_version) + "; bulkscore reads " + std::string(kApiVersion) + " only");
  }
  const YAML::Node kind_node = r.field(root, "kind");
  if (yaml_absent(kind_node)) r.fail("kind", "required (" + std::string(kKind) + ")");
  const std::string kind = r.read_string(kind_node, "kind");
  if (kind != kKind) {
    r.fail("kind", "unsupported " + quoted(kind) + "; expected " + std::string(kKind));
  }

  r.check_map(root, "",
              {"apiVersion", "kind", "parallelism", "leaderElection", "clientConnection", "enableProfiling",
               "enableContentionProfiling", "percentageOfNodesToScore", "podInitialBackoffSeconds",
               "podMaxBackoffSeconds", "profiles", "extenders", "delayCacheUntilActive"});

  SchedulerConfig config;
  const YAML::Node parallelism = r.field(root, "parallelism");
  if (!yaml_absent(parallelism)) {
    config.parallelism = r.read_int32(parallelism, "parallelism");
    if (config.parallelism <= 0) {
      r.fail("parallelism", "must be greater than zero, got " + std::to_string(config.parallelism));
    }
  }
  std::optional<int32_t> global_percentage;
  const YAML::Node pct = r.field(root, "percentageOfNodesToScore");
  if (!yaml_absent(pct)) global_percentage = read_percentage(r, pct, "percentageOfNodesToScore");

  int64_t initial_backoff = 1;
  int64_t max_backoff = 10;
  const YAML::Node initial_node = r.field(root, "podInitialBackoffSeconds");
  if (!yaml_absent(initial_node)) {
    initial_backoff = r.read_int64(initial_node, "podInitialBackoffSeconds");
  }
  const YAML::Node max_node = r.field(root, "podMaxBackoffSeconds");
  if (!yaml_absent(max_node)) max_backoff = r.read_int64(max_node, "podMaxBackoffSeconds");
  if (initial_backoff <= 0) {
    r.fail("podInitialBackoffSeconds", "must be greater than 0, got " + std::to_string(initial_backoff));
  }
  if (max_backoff < initial_backoff) {
    r.fail("podMaxBackoffSeconds", "must be greater than or equal to podInitialBackoffSeconds");
  }
  for (const char* flag : {"enableProfiling", "enableContentionProfiling", "delayCacheUntilActive"}) {
    const YAML::Node n = r.field(root, flag);
    if (!yaml_absent(n)) r.read_bool(n, flag);
  }
  for (const char* object : {"leaderElection", "clientConnection"}) {
    const YAML::Node n = r.field(root, object);
    if (!yaml_absent(n) && !n.IsMap()) r.fail_at(n, object, "must be a mapping");
  }
  const YAML::Node extenders = r.field(root, "extenders");
  if (!yaml_absent(extenders)) {
    r.check_sequence(extenders, "extenders");
    if (extenders.size() != 0) {
      r.fail("extenders", "scheduler extenders are not supported by bulkscore");
    }
  }

  // No profiles means one default profile, as v1 defaulting does.
  const YAML::Node profiles = r.field(root, "profiles");
  std::vector<YAML::Node> profile_nodes;
  if (!yaml_absent(profiles)) {
    r.check_sequence(profiles, "profiles");
    for (size_t i = 0; i < profiles.size(); ++i) profile_nodes.push_back(profiles[i]);
  }
  if (profile_nodes.empty()) profile_nodes.emplace_back();

  std::vector<ProfileSpec> specs;
  std::map<std::string, size_t> names;
  for (size_t i = 0; i < profile_nodes.size(); ++i) {
    const std::string path = yaml_at("profiles", i);
    ProfileSpec spec = parse_profile(r, profile_nodes[i], path);
    // Only an absent name is defaulted, and only for a lone profile; an
    // explicit "" stays and is rejected, as upstream.
    std::string name;
    if (spec.scheduler_name) {
      name = *spec.scheduler_name;
    } else if (profile_nodes.size() == 1) {
      name = std::string(kDefaultSchedulerName);
    }
    if (name.empty()) r.fail(yaml_child(path, "schedulerName"), "required");
    const auto [prev, inserted] = names.emplace(name, i);
    if (!inserted) {
      r.fail(yaml_child(path, "schedulerName"),
             "duplicate " + quoted(name) + " (also used by " + yaml_at("profiles", prev->second) + ")");
    }
    spec.config.scheduler_name = name;
    spec.config.percentage_of_nodes_to_score = spec.percentage ? *spec.percentage : global_percentage.value_or(100);
    specs.push_back(std::move(spec));
  }
  for (size_t i = 1; i < specs.size(); ++i) {
    if (!same_plugin_set(specs[0].merged.points[kQueueSort], specs[i].merged.points[kQueueSort])) {
      r.fail(yaml_child(yaml_at("profiles", i), "plugins.queueSort"),
             "must be the same for all profiles (differs from profiles[0])");
    }
  }

  for (ProfileSpec& spec : specs) config.profiles.push_back(std::move(spec.config));
  return config;
}

}  // namespace bulkscore
