#include "host/engine/pod_query.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <utility>

#include "host/engine/plugin_trace.hpp"
#include "host/input/pod_resources.hpp"
#include "host/input/quote.hpp"
#include "plugins/prepare.hpp"

namespace bulkscore {
namespace {

// The arena reserved before prepare: the default plugins push about 100
// bytes for a pod without constraints, a few hundred with spreading.
constexpr size_t kPreparedArenaReserve = 512;

// Upstream plugins without a bulkscore rule. For pods that do not use the
// feature they contribute nothing upstream either (PreFilter/PreScore Skip,
// or Score 0 everywhere); for pods that do, the engine warns.
const char* const kNoRulePlugins[] = {"VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
                                      "DynamicResources"};

bool is_no_rule_plugin(const std::string& name) {
  return std::find(std::begin(kNoRulePlugins), std::end(kNoRulePlugins), name) != std::end(kNoRulePlugins);
}

}  // namespace

ProfilePlan make_profile_plan(const ProfileConfig& profile) {
  ProfilePlan plan;
  plan.config = profile;
  auto note = [&](const std::string& name) {
    if (std::find(plan.not_evaluated.begin(), plan.not_evaluated.end(), name) == plan.not_evaluated.end())
      plan.not_evaluated.push_back(name);
  };
  auto resolve = [&](const std::vector<std::string>& names, std::vector<uint8_t>& out) {
    for (const auto& n : names) {
      const int id = plugin_id_by_name(n);
      if (id >= 0)
        out.push_back(static_cast<uint8_t>(id));
      else if (is_no_rule_plugin(n))
        note(n);
      else
        throw InputError("profile " + quote_for_message(profile.scheduler_name) + ": plugin " + quote_for_message(n) +
                         " is not supported");
    }
  };
  resolve(profile.pre_filter, plan.pre_filter);
  resolve(profile.filter, plan.filter);
  for (const auto& e : profile.score) {
    const int id = plugin_id_by_name(e.name);
    if (id >= 0) {
      plan.score.push_back(static_cast<uint8_t>(id));
      plan.weights.push_back(e.weight);
    } else if (is_no_rule_plugin(e.name)) {
      note(e.name);
    } else {
      throw InputError("profile " + quote_for_message(profile.scheduler_name) + ": plugin " +
                       quote_for_message(e.name) + " is not supported");
    }
  }
  if (plan.filter.size() > kMaxProfilePlugins || plan.score.size() > kMaxProfilePlugins)
    throw InputError("profile " + quote_for_message(profile.scheduler_name) + ": too many plugins");
  for (auto w : plan.weights) plan.max_total += w * 100;
  if (plan.max_total > 0x7FFFFFFF)
    throw InputError("profile " + quote_for_message(profile.scheduler_name) +
                     ": score weights too large (their sum x 100 must be below 2^31)");
  return plan;
}

void filter_reasons(uint8_t plugin, uint64_t bits, const Snapshot& snap, const PodQueryView& q, uint32_t node,
                    std::vector<std::string>& out) {
  visit_plugin(plugin, [&](auto p) {
    using P = decltype(p);
    if constexpr (P::kHasFilter) P::reasons(bits, snap, plugin_state<P>(q), q.arena, node, out);
  });
}

namespace {

// A plugin may choose its normalization per pod (normalize_for(State));
// most have one kind (kNormalize).
template <class P, class = void>
struct HasNormalizeFor : std::false_type {};
template <class P>
struct HasNormalizeFor<P, std::void_t<decltype(P::normalize_for(std::declval<const typename P::State&>()))>>
    : std::true_type {};

NormalizeKind normalize_kind_for(uint8_t id, const PluginStates& states) {
  NormalizeKind kind = NormalizeKind::None;
  visit_plugin(id, [&](auto p) {
    using P = decltype(p);
    if constexpr (HasNormalizeFor<P>::value)
      kind = P::normalize_for(state_of<P>(states));
    else
      kind = P::kNormalize;
  });
  return kind;
}

// A sampled cycle's plugin timing: the time since `last` (the previous
// plugin's end, or the pass's start) is plugin `id`'s; one clock read per
// plugin.
void lap(PluginTrace& t, uint8_t id, PluginTrace::Clock::time_point& last) {
  const auto now = PluginTrace::Clock::now();
  t.plugin_prescore[id] += now - last;
  last = now;
}

}  // namespace

void run_feasible_prescore(const Snapshot& snap, PodQuery& query, const uint32_t* feasible, uint32_t count) {
  PodQueryView& h = query.header;
  if (!h.prescore_feasible) return;
  // A query may be evaluated more than once (explain, tests): each PreScore
  // starts from the arena as prepare left it.
  PluginTrace* const t = query.plugin_trace;
  const auto start = t ? PluginTrace::Clock::now() : PluginTrace::Clock::time_point{};
  auto last = start;
  query.arena.truncate(query.prepared_arena_bytes);
  query.feasible_ranges = {};
  for (uint32_t slot = 0; slot < h.num_scores; ++slot) {
    const uint8_t id = h.scores[slot];
    const auto begin = static_cast<uint32_t>(query.arena.size());
    visit_plugin(id, [&](auto p) {
      using P = decltype(p);
      if constexpr (P::kPreScoreFeasible) {
        P::prescore_feasible(snap, state_of<P>(h.states), query.arena, feasible, count);
        if (t && t->per_plugin) lap(*t, id, last);
      }
    });
    query.feasible_ranges[id] = ArenaRange{begin, static_cast<uint32_t>(query.arena.size())};
  }
  if (t) {
    ++t->prescore_runs;
    t->prescore += PluginTrace::Clock::now() - start;
  }
}

bool run_feasible_prescore_since(const Snapshot& snap, PodQuery& query, const PodQuery& prev, const uint32_t* left,
                                 uint32_t n_left, uint32_t count, const std::function<bool(uint8_t)>& same_prepare) {
  PodQueryView& h = query.header;
  if (!h.prescore_feasible) return true;
  PluginTrace* const t = query.plugin_trace;
  const auto start = t ? PluginTrace::Clock::now() : PluginTrace::Clock::time_point{};
  auto last = start;
  query.arena.truncate(query.prepared_arena_bytes);
  query.feasible_ranges = {};
  bool done = true;
  for (uint32_t slot = 0; slot < h.num_scores && done; ++slot) {
    const uint8_t id = h.scores[slot];
    const auto begin = static_cast<uint32_t>(query.arena.size());
    visit_plugin(id, [&](auto p) {
      using P = decltype(p);
      if constexpr (P::kPreScoreFeasible) {
        if constexpr (kHasPreScoreFeasibleSince<P>) {
          done = same_prepare(id) && P::prescore_feasible_since(snap, state_of<P>(h.states), query.arena,
                                                                 state_of<P>(prev.header.states), prev.arena.data(),
                                                                 left, n_left, count);
          if (t && t->per_plugin) lap(*t, id, last);
        } else {
          done = false;
        }
      }
    });
    if (done) query.feasible_ranges[id] = ArenaRange{begin, static_cast<uint32_t>(query.arena.size())};
  }
  // A pass that could not finish is followed by run_feasible_prescore, which
  // counts the run; its time so far counts too.
  if (t) {
    if (done) ++t->prescore_runs;
    t->prescore += PluginTrace::Clock::now() - start;
  }
  return done;
}

void intern_pod_resources(Snapshot& snap, const Pod& pod) {
  // Every cycle asks; nearly always every name has its column already.
  // New columns in pod_requests' (sorted) order.
  if (!snap.has_resource_columns(pod))
    for (const auto& kv : pod_requests(pod))
      if (kv.first != "pods") snap.intern_resource(kv.first);
  if (snap.num_resources() > plugins::NodeResourcesFit::kMaxResources)
    throw InputError("more than " + std::to_string(plugins::NodeResourcesFit::kMaxResources) +
                     " distinct resource names; bulkscore supports at most that many");
  // Serial, before prepare: whether the resource scores may leave [0, 100].
  snap.recheck_quantities();
}

namespace {
// A plugin may register things in the snapshot before prepare (intern()).
template <class P, class = void>
struct HasIntern : std::false_type {};
template <class P>
struct HasIntern<
    P, std::void_t<decltype(P::intern(std::declval<Snapshot&>(), std::declval<const Pod&>(),
                                      std::declval<const ProfileConfig&>(), std::declval<const ClusterObjects*>()))>>
    : std::true_type {};
}  // namespace

void intern_pod_for_plan(Snapshot& snap, const Pod& pod, const ProfilePlan& plan, const ClusterObjects* objects) {
  intern_pod_resources(snap, pod);
  bool done[kNumPlugins] = {};
  auto run = [&](uint8_t id) {
    if (done[id]) return;
    done[id] = true;
    visit_plugin(id, [&](auto p) {
      using P = decltype(p);
      if constexpr (HasIntern<P>::value) P::intern(snap, pod, plan.config, objects);
    });
  };
  for (uint8_t id : plan.pre_filter) run(id);
  for (uint8_t id : plan.filter) run(id);
  for (uint8_t id : plan.score) run(id);
}

PodQuery prepare_pod_query(const Pod& pod, const Snapshot& snap, const ProfilePlan& plan, TieBreak tie_break,
                           uint64_t seed, const ClusterObjects* objects, PluginTrace* trace) {
  PodQuery q;
  q.plugin_trace = trace;
  const bool per_plugin = trace && trace->per_plugin;
  std::memset(static_cast<void*>(&q.header), 0, sizeof q.header);  // the defaults are zeros
  // One allocation for what the default plugins push (a few hundred bytes),
  // not one per doubling.
  q.arena.reserve(kPreparedArenaReserve);
  const ResourceList requests = pod_requests(pod);
  const SnapshotView view = snap.view();
  const PrepareContext ctx{pod, snap, view, plan.config, requests, objects};

  // Every plugin prepares once; its PreFilter/PreScore verdicts decide where
  // it takes part.
  PrepareResult results[kNumPlugins];
  bool prepared[kNumPlugins] = {};
  auto last = per_plugin ? PluginTrace::Clock::now() : PluginTrace::Clock::time_point{};
  auto prepare = [&](uint8_t id) {
    if (prepared[id]) return;
    prepared[id] = true;
    const auto begin = static_cast<uint32_t>(q.arena.size());
    visit_plugin(id, [&](auto p) {
      using P = decltype(p);
      results[id] = P::prepare(ctx, state_of<P>(q.header.states), q.arena);
    });
    if (per_plugin) {
      // One clock read per plugin: its time runs from the previous one's end.
      const auto now = PluginTrace::Clock::now();
      trace->prepare[id] = now - last;
      last = now;
      const PrepareResult& r = results[id];
      trace->prefilter_status[id] = r.prefilter;
      trace->prescore_status[id] = !r.score_error.empty() ? Code::Error : r.skip_score ? Code::Skip : Code::Success;
    }
    q.prepared_ranges[id] = ArenaRange{begin, static_cast<uint32_t>(q.arena.size())};
  };
  for (uint8_t id : plan.filter) prepare(id);
  for (uint8_t id : plan.score) prepare(id);
  for (uint8_t id : plan.pre_filter) prepare(id);

  // PreFilter, in order: Skip removes the plugin's Filter; UR stops at once;
  // Unschedulable is remembered and the rest still run.
  bool skip_filter[kNumPlugins] = {};
  std::optional<std::vector<std::string>> names;
  // Upstream's UnschedulablePlugins: the plugins with a PreFilterResult, and
  // the rejecting one (an UnschedulableAndUnresolvable one alone; else the
  // last Unschedulable one); only the former when the results are disjoint.
  uint64_t restricting = 0;
  int last_unschedulable = -1;
  bool decided = false;
  q.prefilter.reserve(plan.pre_filter.size());
  for (uint8_t id : plan.pre_filter) {
    const PrepareResult& r = results[id];
    if (r.prefilter == Code::Skip) {
      skip_filter[id] = true;
      q.prefilter.push_back({plugin_name(id), Code::Skip, ""});
      continue;
    }
    if (r.prefilter == Code::UnschedulableAndUnresolvable || r.prefilter == Code::Unschedulable) {
      q.prefilter.push_back({plugin_name(id), r.prefilter, r.message});
      if (!q.rejected || r.prefilter == Code::UnschedulableAndUnresolvable) {
        q.rejected = true;
        q.rejected_code = r.prefilter;
        q.prefilter_message = r.message;
      }
      if (r.prefilter == Code::UnschedulableAndUnresolvable) {
        if (trace) trace->unschedulable_plugins = uint64_t(1) << id;
        decided = true;
        break;
      }
      last_unschedulable = id;
      continue;
    }
    if (r.node_names) {
      restricting |= uint64_t(1) << id;
      q.restricting_plugins.push_back(plugin_name(id));
      if (!names) {
        names = r.node_names;
      } else {
        std::vector<std::string> both;
        std::set_intersection(names->begin(), names->end(), r.node_names->begin(), r.node_names->end(),
                              std::back_inserter(both));
        names = std::move(both);
      }
      if (names->empty()) {
        std::vector<std::string> sorted = q.restricting_plugins;
        std::sort(sorted.begin(), sorted.end());
        std::string msg;
        if (sorted.size() == 1) {
          msg = "node(s) didn't satisfy plugin " + sorted[0];
        } else {
          msg = "node(s) didn't satisfy plugin(s) [";
          for (size_t i = 0; i < sorted.size(); ++i) msg += (i ? " " : "") + sorted[i];
          msg += "] simultaneously";
        }
        q.rejected = true;
        q.rejected_code = Code::UnschedulableAndUnresolvable;
        q.prefilter_message = msg;
        q.prefilter.push_back({plugin_name(id), Code::UnschedulableAndUnresolvable, msg});
        if (trace) trace->unschedulable_plugins = restricting;
        decided = true;
        break;
      }
    }
  }
  if (!decided && trace)
    trace->unschedulable_plugins =
        restricting | (last_unschedulable >= 0 ? uint64_t(1) << last_unschedulable : uint64_t(0));
  if (names && !q.rejected) {
    std::vector<uint32_t> idx;
    for (const auto& n : *names) {
      const int32_t i = snap.node_index(n);
      if (i >= 0) idx.push_back(static_cast<uint32_t>(i));  // unknown names are dropped, as upstream
    }
    std::sort(idx.begin(), idx.end());
    q.candidates = std::move(idx);
  }

  for (uint8_t id : plan.filter)
    if (!skip_filter[id] && !results[id].filter_passes_all && plugin_has_filter(id))
      q.header.filters[q.header.num_filters++] = id;
  for (size_t i = 0; i < plan.score.size(); ++i) {
    const uint8_t id = plan.score[i];
    // Wrapped as upstream's framework wraps a PreScore plugin's error.
    if (!results[id].score_error.empty() && q.score_error.empty())
      q.score_error = "running PreScore plugin " + quote_for_message(plugin_name(id)) + ": " + results[id].score_error;
    if (results[id].skip_score || !plugin_has_score(id)) continue;
    q.check_score_range = q.check_score_range || results[id].check_score_range;
    q.header.scores[q.header.num_scores] = id;
    q.header.normalize[q.header.num_scores] = normalize_kind_for(id, q.header.states);
    q.header.weights[q.header.num_scores] = plan.weights[i];
    q.header.prescore_feasible |= kPluginInfo[id].prescore_feasible;
    ++q.header.num_scores;
  }
  q.prepared_arena_bytes = q.arena.size();
  q.header.tie_break = tie_break;
  q.header.tie_seed = seed;

  return q;
}

}  // namespace bulkscore
