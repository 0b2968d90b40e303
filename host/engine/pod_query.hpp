// Per-pod setup: runs every plugin's prepare (PreFilter, PreScore) in profile
// order and produces the PodQuery both backends evaluate.
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/input/config.hpp"
#include "host/input/model.hpp"
#include "host/snapshot/snapshot.hpp"
#include "plugins/evaluate.hpp"

namespace bulkscore {

// A profile resolved against bulkscore's plugin registry: which plugins with
// rules run at each point, in order, with weights.
struct ProfilePlan {
  ProfileConfig config;
  std::vector<uint8_t> pre_filter;  // plugins with a rule, in PreFilter order
  std::vector<uint8_t> filter;
  std::vector<uint8_t> score;    // in Score order
  std::vector<int64_t> weights;  // parallel to score
  // Upstream plugins in the profile that bulkscore does not evaluate, and why
  // a pod may care (for warnings), e.g. PodTopologySpread.
  std::vector<std::string> not_evaluated;
  int64_t max_total = 0;  // sum of weights x 100
};

// Throws InputError for profiles bulkscore cannot run (too many plugins,
// weights whose total would not fit the selection key).
ProfilePlan make_profile_plan(const ProfileConfig& profile);

// One PreFilter outcome that is not plain Success (for explain).
struct PreFilterStatus {
  std::string_view plugin;  // plugin_name(id): a static string
  Code code;
  std::string message;
};

// A plugin's bytes in a query's arena, [begin, end).
struct ArenaRange {
  uint32_t begin = 0;
  uint32_t end = 0;
};

// What the engine's metrics read of a pod's plugin work
// (host/engine/plugin_trace.hpp); declared only, so that the code that
// handles queries compiles none of it.
struct PluginTrace;

struct PodQuery {
  // Arena pointer unset: use view(). Zeroed whole before prepare (padding
  // included), so that equal queries are equal byte for byte.
  PodQueryView header;
  Arena arena;
  size_t prepared_arena_bytes = 0;  // the arena after prepare, before any feasible-set PreScore
  // What each plugin's prepare and feasible-set PreScore wrote in the arena,
  // by plugin id: the batch cache compares two queries plugin by plugin.
  std::array<ArenaRange, kNumPlugins> prepared_ranges{};
  std::array<ArenaRange, kNumPlugins> feasible_ranges{};

  // PreFilter rejected the pod (Unschedulable / UnschedulableAndUnresolvable):
  // no node is evaluated; `prefilter_message` is the FitError text part.
  bool rejected = false;
  Code rejected_code = Code::Success;
  std::string prefilter_message;
  std::vector<PreFilterStatus> prefilter;  // rejections and Skips, in order
  // PreFilterResult: candidate nodes (indices), nullopt = all nodes;
  // `restricting_plugins` names the plugins that produced it.
  std::optional<std::vector<uint32_t>> candidates;
  std::vector<std::string> restricting_plugins;
  // A PreScore error (the pod's cycle fails with it), or Score's invalid
  // score (score_error_at_score; Engine::evaluate writes it).
  std::string score_error;
  bool score_error_at_score = false;
  // Some score plugin's scores may leave [0, 100] for this pod
  // (PrepareResult::check_score_range): Engine::evaluate checks them.
  bool check_score_range = false;
  // Constraints the pod carries that bulkscore does not enforce yet.
  std::vector<std::string> warnings;
  // Where prepare and the feasible-set PreScore record their time and
  // upstream's verdicts for the metrics (the engine's schedule()); nullptr:
  // nothing recorded.
  PluginTrace* plugin_trace = nullptr;

  PodQueryView view() const {
    PodQueryView v = header;
    v.arena = arena.data();
    return v;
  }
};

// Interns every resource the pod requests (a new column if needed), so the
// plugins can address it. Call before prepare_pod_query.
void intern_pod_resources(Snapshot& snap, const Pod& pod);

// intern_pod_resources, plus what the plan's plugins register in the
// snapshot before their prepare (PodTopologySpread's topology matchers).
// Call before prepare_pod_query with the same plan and objects.
void intern_pod_for_plan(Snapshot& snap, const Pod& pod, const ProfilePlan& plan,
                         const ClusterObjects* objects = nullptr);

// Upstream's reason strings for `plugin`'s filter outcome `bits` on `node`.
void filter_reasons(uint8_t plugin, uint64_t bits, const Snapshot& snap, const PodQueryView& q, uint32_t node,
                    std::vector<std::string>& out);

// PreScore's part that needs the feasible nodes (Filter's survivors, in
// visiting order): runs prescore_feasible of every score plugin of the query
// that has one, appending their tables to the arena. Backends call it
// between Filter and Score when query.header.prescore_feasible is set, and
// only when they score (two or more feasible nodes, or explain).
void run_feasible_prescore(const Snapshot& snap, PodQuery& query, const uint32_t* feasible, uint32_t count);

// run_feasible_prescore from an earlier query's tables (`prev`, through its
// feasible-set PreScore), for a feasible set that is prev's minus the nodes
// `left` (`count` remaining) with only pods and resources changed since
// (the batch cache): each plugin derives its tables from prev's
// (prescore_feasible_since) when `same_prepare(id)` says its prepare wrote
// the same bytes as prev's. False when some plugin cannot: then call
// run_feasible_prescore.
bool run_feasible_prescore_since(const Snapshot& snap, PodQuery& query, const PodQuery& prev, const uint32_t* left,
                                 uint32_t n_left, uint32_t count, const std::function<bool(uint8_t)>& same_prepare);

// `objects`: the Services, controllers and Namespaces (PodTopologySpread's
// default selector); nullptr when there are none. `trace`: where the
// plugins' host-side time and upstream's UnschedulablePlugins go (the query
// keeps the pointer for its feasible-set PreScore); nullptr: not recorded.
PodQuery prepare_pod_query(const Pod& pod, const Snapshot& snap, const ProfilePlan& plan, TieBreak tie_break,
                           uint64_t seed, const ClusterObjects* objects = nullptr, PluginTrace* trace = nullptr);

}  // namespace bulkscore
