#include "host/engine/batch_cache.hpp"

#include <algorithm>
#include <cstring>
#include <functional>

#include "host/engine/node_filter.hpp"
#include "host/input/quote.hpp"
#include "plugins/simd_dispatch.hpp"

namespace bulkscore {

const char* batching_name(Batching b) {
  switch (b) {
    case Batching::Exact:
      return "exact";
    case Batching::Upstream:
      return "upstream";
    case Batching::Off:
      break;
  }
  return "off";
}

Batching parse_batching(const std::string& text) {
  if (text == "exact") return Batching::Exact;
  if (text == "off") return Batching::Off;
  if (text == "upstream") return Batching::Upstream;
  throw InputError("--batching: expected exact, upstream or off, got " + quote_for_message(text));
}

const char* flush_reason_name(FlushReason r) {
  switch (r) {
    case FlushReason::kNoState:
      return "no_state";
    case FlushReason::kPodIncompatible:
      return "pod_incompatible";
    case FlushReason::kFilterChanged:
      return "filter_changed";
    case FlushReason::kSnapshotChanged:
      return "snapshot_changed";
    case FlushReason::kSampling:
      return "sampling";
    case FlushReason::kNodeBecameFeasible:
      return "node_became_feasible";
    case FlushReason::kTooManyChanges:
      return "too_many_changes";
    case FlushReason::kEmptyList:
      return "empty_list";
    case FlushReason::kScoresChecked:
      return "scores_checked";
    case FlushReason::kPodSkipped:
      return "pod_skipped";
    case FlushReason::kPodFailed:
      return "pod_failed";
    case FlushReason::kExpired:
      return "expired";
    case FlushReason::kNodeMissing:
      return "node_missing";
    case FlushReason::kPodNotBatchable:
      return "pod_not_batchable";
    case FlushReason::kCount:
      break;
  }
  return "?";
}

BatchCounters& BatchCounters::operator+=(const BatchCounters& o) {
  no_hint += o.no_hint;
  hint_used += o.hint_used;
  hint_not_used += o.hint_not_used;
  rescore_attempts += o.rescore_attempts;
  for (size_t i = 0; i < flushed.size(); ++i) flushed[i] += o.flushed[i];
  refiltered_nodes += o.refiltered_nodes;
  rescored_nodes += o.rescored_nodes;
  full_plugin_rescores += o.full_plugin_rescores;
  renormalizations += o.renormalizations;
  tied_nodes += o.tied_nodes;
  group_scores += o.group_scores;
  prescore_updates += o.prescore_updates;
  filter_count_hits += o.filter_count_hits;
  revived_nodes += o.revived_nodes;
  gate_flips += o.gate_flips;
  first_of_shape += o.first_of_shape;
  window_states += o.window_states;
  window_hits += o.window_hits;
  window_light_hits += o.window_light_hits;
  return *this;
}

BatchCounters BatchCounters::since(const BatchCounters& e) const {
  BatchCounters d;
  d.no_hint = no_hint - e.no_hint;
  d.hint_used = hint_used - e.hint_used;
  d.hint_not_used = hint_not_used - e.hint_not_used;
  d.rescore_attempts = rescore_attempts - e.rescore_attempts;
  for (size_t i = 0; i < flushed.size(); ++i) d.flushed[i] = flushed[i] - e.flushed[i];
  d.refiltered_nodes = refiltered_nodes - e.refiltered_nodes;
  d.rescored_nodes = rescored_nodes - e.rescored_nodes;
  d.full_plugin_rescores = full_plugin_rescores - e.full_plugin_rescores;
  d.renormalizations = renormalizations - e.renormalizations;
  d.tied_nodes = tied_nodes - e.tied_nodes;
  d.group_scores = group_scores - e.group_scores;
  d.prescore_updates = prescore_updates - e.prescore_updates;
  d.filter_count_hits = filter_count_hits - e.filter_count_hits;
  d.revived_nodes = revived_nodes - e.revived_nodes;
  d.gate_flips = gate_flips - e.gate_flips;
  d.first_of_shape = first_of_shape - e.first_of_shape;
  d.window_states = window_states - e.window_states;
  d.window_hits = window_hits - e.window_hits;
  d.window_light_hits = window_light_hits - e.window_light_hits;
  return d;
}

namespace {

// A Prometheus label value: backslash, double quote and newline escaped.
std::string label_value(const std::string& v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

std::string batch_metrics_text(const std::vector<std::pair<std::string, BatchCounters>>& by_profile) {
  std::string out;
  const auto family = [&](const char* name, const char* help) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " counter\n";
  };
  const auto sample = [&](const char* name, const std::string& labels, uint64_t v) {
    out += std::string(name) + "{" + labels + "} " + std::to_string(v) + "\n";
  };
  family("scheduler_batch_attempts_total",
         "Pods evaluated with batching: from the cache (hint_used) or in full (no_hint).");
  for (const auto& [profile, c] : by_profile) {
    const std::string p = "profile=\"" + label_value(profile) + "\"";
    sample("scheduler_batch_attempts_total", p + ",result=\"hint_used\"", c.hint_used);
    sample("scheduler_batch_attempts_total", p + ",result=\"hint_not_used\"", c.hint_not_used);
    sample("scheduler_batch_attempts_total", p + ",result=\"no_hint\"", c.no_hint);
  }
  family("scheduler_batch_cache_flushed_total", "Pods the batch cache could not answer, by reason.");
  for (const auto& [profile, c] : by_profile)
    for (size_t r = 0; r < c.flushed.size(); ++r) {
      if (static_cast<FlushReason>(r) == FlushReason::kNoState) continue;
      sample(
          "scheduler_batch_cache_flushed_total",
          "profile=\"" + label_value(profile) + "\",reason=\"" + flush_reason_name(static_cast<FlushReason>(r)) + "\"",
          c.flushed[r]);
    }
  const struct {
    const char* name;
    const char* help;
    uint64_t BatchCounters::*field;
  } own[] = {
      {"scheduler_batch_rescore_attempts_total", "Upstream mode: the last chosen node rescored into the cached list.",
       &BatchCounters::rescore_attempts},
      {"bulkscore_batch_refiltered_nodes_total", "Changed nodes filtered again for cache hits.",
       &BatchCounters::refiltered_nodes},
      {"bulkscore_batch_rescored_nodes_total", "Raw scores (node, plugin) recomputed for cache hits.",
       &BatchCounters::rescored_nodes},
      {"bulkscore_batch_plugins_rescored_whole_total",
       "Cache hits' plugins whose per-pod state changed, re-scored on every cached node.",
       &BatchCounters::full_plugin_rescores},
      {"bulkscore_batch_renormalizations_total", "Cache hits whose normalization changed: every total recomputed.",
       &BatchCounters::renormalizations},
      {"bulkscore_batch_tied_nodes_total", "Cache hits' random tie-break: nodes tied at the highest total drawn among.",
       &BatchCounters::tied_nodes},
      {"bulkscore_batch_group_scores_total",
       "Cache hits' raw scores of Score plugins with score classes, computed once per group of nodes.",
       &BatchCounters::group_scores},
      {"bulkscore_batch_prescore_updates_total",
       "Cache hits whose feasible-set PreScore tables were updated from the cached ones, not rebuilt.",
       &BatchCounters::prescore_updates},
      {"bulkscore_batch_filter_count_hits_total",
       "Cache hits whose Filter tables (PodTopologySpread's hard counts and minimums) changed in their counts only: "
       "the nodes of the domains whose verdict flipped filtered again.",
       &BatchCounters::filter_count_hits},
      {"bulkscore_batch_revived_nodes_total",
       "Nodes back in a cache state on hits after Filter had rejected them, with the raw scores they kept.",
       &BatchCounters::revived_nodes},
      {"bulkscore_batch_gate_flips_total",
       "Domains with cached entries shut or opened on cache hits as one flag (a Filter rule whose verdict is one "
       "per domain: PodTopologySpread's hard zone counts), their nodes left in their entries.",
       &BatchCounters::gate_flips},
      {"bulkscore_batch_first_of_shape_total",
       "Misses not kept as a state: every slot was taken and no state or recent miss had their shape.",
       &BatchCounters::first_of_shape},
      {"bulkscore_batch_window_states_total",
       "Pods evaluated ahead in windows (EngineOptions::window), the window's pods together, each kept as a state "
       "for its own cycle.",
       &BatchCounters::window_states},
      {"bulkscore_batch_window_hits_total", "Cache hits answered by the pod's own window state.",
       &BatchCounters::window_hits},
      {"bulkscore_batch_window_light_hits_total",
       "Window hits answered in the light form: the kept best entries and bounds, the changed nodes scored again.",
       &BatchCounters::window_light_hits},
  };
  for (const auto& f : own) {
    family(f.name, f.help);
    for (const auto& [profile, c] : by_profile) sample(f.name, "profile=\"" + label_value(profile) + "\"", c.*f.field);
  }
  return out;
}

std::string batch_summary(Batching mode, const BatchCounters& c) {
  if (mode == Batching::Off) return "batching off";
  const uint64_t pods = c.hint_used + c.hint_not_used + c.no_hint;
  std::string s = std::string("batching ") + batching_name(mode) + ": " + std::to_string(c.hint_used) + " of " +
                  std::to_string(pods) + " evaluated pods answered from the cache";
  if (mode == Batching::Upstream)
    s += " (" + std::to_string(c.hint_not_used) + " hints not used, " + std::to_string(c.rescore_attempts) +
         " rescorings of the last chosen node)";
  else if (c.hint_used)
    s += " (" + std::to_string(c.rescored_nodes) + " node scores recomputed, " + std::to_string(c.group_scores) +
         " group scores, " + std::to_string(c.renormalizations) + " renormalizations)";
  std::string flushes;
  for (size_t r = 0; r < c.flushed.size(); ++r)
    if (c.flushed[r])
      flushes += (flushes.empty() ? "" : ", ") + std::string(flush_reason_name(static_cast<FlushReason>(r))) + " " +
                 std::to_string(c.flushed[r]);
  if (!flushes.empty()) s += "; misses by reason: " + flushes;
  if (c.first_of_shape) s += "; " + std::to_string(c.first_of_shape) + " misses not kept (first of their shape)";
  if (c.window_states)
    s += "; windows: " + std::to_string(c.window_states) + " pods evaluated ahead, " + std::to_string(c.window_hits) +
         " answered by their own state (" + std::to_string(c.window_light_hits) + " in the light form)";
  return s;
}

namespace {

// A plugin's state bytes inside a query header.
template <class P>
const void* state_bytes(const PodQueryView& h) {
  return &state_of<P>(h.states);
}

}  // namespace

bool bytes_equal(const Arena& a, ArenaRange ra, const Arena& b, ArenaRange rb) {
  const uint32_t len = ra.end - ra.begin;
  if (len != rb.end - rb.begin) return false;
  return len == 0 || std::memcmp(a.data() + ra.begin, b.data() + rb.begin, len) == 0;
}

bool plugin_equal(uint8_t id, const PodQueryView& ha, const PodQuery& a, const PodQueryView& hb, const PodQuery& b,
                  bool feasible) {
  bool same = false;
  visit_plugin(id, [&](auto p) {
    using P = decltype(p);
    same = std::memcmp(state_bytes<P>(ha), state_bytes<P>(hb), sizeof(typename P::State)) == 0;
  });
  if (!same) return false;
  if (!bytes_equal(a.arena, a.prepared_ranges[id], b.arena, b.prepared_ranges[id])) return false;
  return !feasible || bytes_equal(a.arena, a.feasible_ranges[id], b.arena, b.feasible_ranges[id]);
}

bool lists_equal(const PodQueryView& a, const PodQuery& qa, const PodQuery& qb) {
  const PodQueryView& b = qb.header;
  return a.num_filters == b.num_filters && a.num_scores == b.num_scores &&
         std::equal(a.filters, a.filters + a.num_filters, b.filters) &&
         std::equal(a.scores, a.scores + a.num_scores, b.scores) &&
         std::equal(a.normalize, a.normalize + a.num_scores, b.normalize) &&
         std::equal(a.weights, a.weights + a.num_scores, b.weights) && a.prescore_feasible == b.prescore_feasible &&
         a.tie_break == b.tie_break && a.tie_seed == b.tie_seed && qa.candidates == qb.candidates &&
         qb.score_error.empty();
}

namespace {}  // namespace

// ---- what can be reused -------------------------------------------------------

FlushReason BatchCache::check_header(const Snapshot& snap, const ProfilePlan& plan, const PodQuery& query,
                                     std::vector<uint32_t>* extra, std::vector<GateFlip>* gates) const {
  if (!valid_) return FlushReason::kNoState;
  if (snap.structure_version() != structure_version_ || snap.num_nodes() != num_nodes_ ||
      snap.mutation_log().size() < log_position_)
    return FlushReason::kSnapshotChanged;
  if (!lists_equal(plan, query)) return FlushReason::kPodIncompatible;
  if (!filters_compatible(snap, query, extra, gates)) return FlushReason::kFilterChanged;
  const PodQueryView& b = query.header;
  // A grouped Score plugin's classes come from what its prepare wrote: the
  // same bytes keep every untouched node in its group (and so do bytes
  // that differ in Filter tables' counts only, which no class reads).
  for (uint32_t slot = 0; slot < b.num_scores; ++slot)
    if (grouped_[slot] && !plugin_equal(b.scores[slot], prepared_, query_, b, query, false) &&
        !counts_only(snap, b.scores[slot], prepared_, query, nullptr))
      return FlushReason::kFilterChanged;
  return FlushReason::kCount;  // no reason: the header, every Filter input and the groups match
}

bool BatchCache::lists_equal(const ProfilePlan& plan, const PodQuery& query) const {
  return &plan == plan_ && bulkscore::lists_equal(prepared_, query_, query);
}

bool BatchCache::same_shape(const Snapshot& snap, const ProfilePlan& plan, const PodQuery& query) const {
  return (valid_ || shape_only_) && lists_equal(plan, query) && filters_compatible(snap, query, nullptr);
}

void BatchCache::remember_shape(const ProfilePlan& plan, PodQuery&& query, const PodQueryView& prepared) {
  valid_ = false;
  shape_only_ = true;
  plan_ = &plan;
  query_ = std::move(query);
  prepared_ = prepared;
}

bool BatchCache::filters_compatible(const Snapshot& snap, const PodQuery& query, std::vector<uint32_t>* extra,
                                    std::vector<GateFlip>* gates) const {
  for (uint32_t i = 0; i < query.header.num_filters; ++i) {
    const uint8_t id = query.header.filters[i];
    if (!plugin_equal(id, prepared_, query_, query.header, query, false) &&
        !counts_only(snap, id, prepared_, query, extra, id == gate_plugin_ ? gates : nullptr))
      return false;
  }
  return true;
}

bool BatchCache::filters_equal(const PodQuery& query) const {
  for (uint32_t i = 0; i < query.header.num_filters; ++i)
    if (!plugin_equal(query.header.filters[i], prepared_, query_, query.header, query, false)) return false;
  return true;
}

bool BatchCache::counts_only(const Snapshot& snap, uint8_t id, const PodQueryView& prev, const PodQuery& query,
                             std::vector<uint32_t>* extra, std::vector<GateFlip>* gates) const {
  bool ok = false;
  visit_plugin(id, [&](auto p) {
    using P = decltype(p);
    if constexpr (kHasFilterCountChanges<P>) {
      const ArenaRange a = query_.prepared_ranges[id];
      const ArenaRange b = query.prepared_ranges[id];
      if constexpr (kHasFilterGate<P>) {
        if (gates) {
          ok = P::filter_count_changes_gated(snap, plugin_state<P>(prev), query_.arena.data(), a.begin, a.end,
                                             plugin_state<P>(query.header), query.arena.data(), b.begin, b.end,
                                             extra, gates);
          return;
        }
      }
      ok = P::filter_count_changes(snap, plugin_state<P>(prev), query_.arena.data(), a.begin, a.end,
                                   plugin_state<P>(query.header), query.arena.data(), b.begin, b.end, extra);
    }
  });
  return ok;
}

bool BatchCache::scores_equal(const PodQuery& query) const {
  if (!valid_ || query.header.num_scores != prepared_.num_scores) return false;
  for (uint32_t slot = 0; slot < prepared_.num_scores; ++slot)
    if (query.header.scores[slot] != prepared_.scores[slot] ||
        !plugin_equal(prepared_.scores[slot], prepared_, query_, query.header, query, false))
      return false;
  return true;
}

bool BatchCache::is_candidate(uint32_t node) const {
  if (!query_.candidates) return true;
  return std::binary_search(query_.candidates->begin(), query_.candidates->end(), node);
}

// Everything a hit needs to know before it changes anything: the changed
// nodes, which cached entries they touch or remove, where the touched ones
// go among the groups; or why the pod is a miss.
FlushReason BatchCache::plan_hit(const Snapshot& snap, const SnapshotView& s, const ProfilePlan& plan,
                                 const PodQuery& query, HitPlan& out) const {
  out.changed.clear();
  out.gate_flips.clear();
  out.shut_named.clear();
  out.rechecked.clear();
  const bool gated = gate_plugin_ != kNoGate;
  const FlushReason header = check_header(snap, plan, query, &out.changed, gated ? &out.gate_flips : nullptr);
  if (header != FlushReason::kCount) return header;
  out.counts_only = !filters_equal(query);
  const PodQueryView v = query.view();
  if (gated) {
    // The groups' verdicts after the hit; the nodes filtered because their
    // domain opens: its outsiders, and the entries marked while it was
    // shut. (An entry's domain is its group's for the state's life: a
    // label change is structural, a new state.)
    out.open_after.resize(groups_.size());
    for (size_t g = 0; g < groups_.size(); ++g) out.open_after[g] = groups_[g].open ? 1 : 0;
    for (const GateFlip& f : out.gate_flips) {
      const uint32_t g = gate_group(f.domain);
      if (g != kNone) out.open_after[g] = f.open ? 1 : 0;
      if (!f.open) continue;
      for (const Outsiders& o : outsiders_)
        if (o.domain == f.domain) out.changed.insert(out.changed.end(), o.nodes.begin(), o.nodes.end());
    }
    for (const uint32_t pos : rechecks_) {
      if (!out.open_after[group_of_[pos]]) continue;
      out.changed.push_back(node_[pos]);
      out.rechecked.push_back(pos);
    }
  }
  // The nodes changed since, and those whose Filter tables' counts changed.
  // Those whose counts changed come ascending (filter_count_changes walks
  // the nodes in order) and may be a whole zone; the log is short: sorted
  // alone and merged in.
  const std::vector<uint32_t>& log = snap.mutation_log();
  thread_local std::vector<uint32_t> logged;  // the log's nodes, sorted, unique
  logged.assign(log.begin() + static_cast<std::ptrdiff_t>(log_position_), log.end());
  std::sort(logged.begin(), logged.end());
  logged.erase(std::unique(logged.begin(), logged.end()), logged.end());
  const auto from_counts = static_cast<std::ptrdiff_t>(out.changed.size());
  out.changed.insert(out.changed.end(), logged.begin(), logged.end());
  if (!std::is_sorted(out.changed.begin(), out.changed.begin() + from_counts))
    std::sort(out.changed.begin(), out.changed.begin() + from_counts);
  std::inplace_merge(out.changed.begin(), out.changed.begin() + from_counts, out.changed.end());
  out.changed.erase(std::unique(out.changed.begin(), out.changed.end()), out.changed.end());
  // Past this many changed nodes a full pass is as cheap. The nodes named
  // by a count change alone are not counted: they are filtered again, and
  // those that leave or come back move among the trees, but none is scored
  // (a node comes back with its kept scores).
  if (logged.size() > live_ / 2 + 1) return FlushReason::kTooManyChanges;
  // Filter again the changed nodes only: every other node's Filter inputs
  // (its columns and the Filter plugins' bytes) are as they were.
  out.touched.clear();
  out.leaving.clear();
  out.moved_to.clear();
  out.moved_new.clear();
  out.new_classes.clear();
  out.revived.clear();
  out.stale_dead.clear();
  uint32_t revivals = 0;
  // The candidates among them filtered at once (a count change may be a
  // whole zone's nodes): the column loops of filter_nodes, no verdicts.
  thread_local FilterScratch scratch;
  thread_local std::vector<uint32_t> candidates;
  thread_local std::vector<uint8_t> feasibility;
  if (!query_.candidates) {
    candidates.assign(out.changed.begin(), out.changed.end());
  } else {
    candidates.clear();
    for (uint32_t n : out.changed)
      if (is_candidate(n)) candidates.push_back(n);
  }
  filter_feasible(s, v, candidates.data(), static_cast<uint32_t>(candidates.size()), scratch, feasibility);
  // Both ascend: the log's nodes are met in one walk.
  const uint32_t* next_logged = logged.data();
  const uint32_t* const logged_end = next_logged + logged.size();
  // The per-touched-position lists hold at most a candidate each: sized
  // once, written by index (thousands of entries a hit where a zone leaves
  // or comes back), trimmed at the end.
  const size_t most = candidates.size();
  out.touched.resize(most);
  out.revived.resize(most);
  out.moved_to.resize(most);
  out.moved_new.resize(most);
  // With a gate: the live entries of the groups open after the hit, as
  // the loop below changes them.
  int64_t open_live = 0;
  if (gated)
    for (size_t g = 0; g < groups_.size(); ++g) open_live += out.open_after[g] ? groups_[g].members : 0;
  size_t t = 0;  // touched positions so far
  const auto touch = [&](uint32_t pos, uint8_t revive, uint32_t to, uint32_t fresh) {
    out.touched[t] = pos;
    out.revived[t] = revive;
    out.moved_to[t] = to;
    out.moved_new[t] = fresh;
    ++t;
  };
  for (size_t k = 0; k < candidates.size(); ++k) {
    const uint32_t n = candidates[k];
    const bool feasible = feasibility[k] != 0;
    const uint32_t pos = position_of_[n];
    const bool cached = pos != kNone && alive_[pos];
    while (next_logged != logged_end && *next_logged < n) ++next_logged;
    const bool in_log = next_logged != logged_end && *next_logged == n;
    if (gated && pos != kNone && !out.open_after[group_of_[pos]]) {
      // Its domain is shut: Filter fails it on the gate, and its verdict on
      // the other rules waits for the domain to open.
      out.shut_named.push_back(pos);
      if (in_log) out.stale_dead.push_back(pos);
      if (cached) {
        touch(pos, kStays, kLeaves, 0);
        out.leaving.push_back(pos);
      }
      continue;
    }
    uint8_t revive = kStays;
    if (feasible && !cached) {
      // A node Filter rejected since the state was taken comes back to its
      // entry: with the raw scores it had where nothing it is scored on
      // changed since (not logged, not stale), else scored again.
      if (pos == kNone) return FlushReason::kNodeBecameFeasible;
      revive = in_log || stale_[pos] ? kRevivesRescored : kRevivesKept;
      ++revivals;
    } else if (!cached) {
      if (pos != kNone && in_log) out.stale_dead.push_back(pos);  // its kept scores no longer hold
      continue;
    } else if (feasible && !in_log) {
      // A node named only by a count change, still feasible, keeps its
      // entry: its columns are as they were, and its scores and classes
      // read none of those counts (filter_count_changes' contract).
      continue;
    }
    if (!feasible) {
      touch(pos, revive, kLeaves, 0);
      out.leaving.push_back(pos);
      if (gated) --open_live;  // its group is open (a shut one's entries were taken above)
      // Its scores are not taken again as it leaves: changed, they are not
      // its scores any more.
      if (in_log) out.stale_dead.push_back(pos);
      continue;
    }
    if (gated) {  // its domain's group, open
      if (revive != kStays) ++open_live;
      touch(pos, revive, group_of_[pos], 0);
      continue;
    }
    if (!num_grouped_) {  // one group
      touch(pos, revive, 0, 0);
      continue;
    }
    // A node's classes change with its own columns only (a counter).
    Classes cls{};
    if (!classes_of(s, v, n, cls)) return FlushReason::kTooManyChanges;
    const uint32_t g = find_group(cls);
    uint32_t fresh = 0;
    if (g == kNone) {
      const auto it = std::find(out.new_classes.begin(), out.new_classes.end(), cls);
      fresh = static_cast<uint32_t>(it - out.new_classes.begin());
      if (it == out.new_classes.end()) out.new_classes.push_back(cls);
      // New classes take the empty groups first (add_groups).
      size_t empty = 0;
      for (const Group& gr : groups_) empty += gr.members == 0 ? 1 : 0;
      const size_t total = groups_.size() + (out.new_classes.size() > empty ? out.new_classes.size() - empty : 0);
      if (total > kMaxGroups || total * leaves_ > kMaxGroupLeaves) return FlushReason::kTooManyChanges;
    }
    touch(pos, revive, g, fresh);
  }
  out.touched.resize(t);
  out.revived.resize(t);
  out.moved_to.resize(t);
  out.moved_new.resize(t);
  if (gated ? open_live < 2 : live_ + revivals - out.leaving.size() < 2) return FlushReason::kEmptyList;
  out.revivals = revivals;
  out.open_live = static_cast<uint32_t>(open_live);
  return FlushReason::kCount;
}

FlushReason BatchCache::would_hit(const Snapshot& snap, const ProfilePlan& plan, const PodQuery& query) const {
  HitPlan scratch;
  return plan_hit(snap, snap.view(), plan, query, scratch);
}

// ---- groups -------------------------------------------------------------------

bool BatchCache::classes_of(const SnapshotView& s, const PodQueryView& v, uint32_t node, Classes& out) const {
  bool ok = true;
  for (uint32_t slot = 0; slot < v.num_scores && ok; ++slot) {
    if (!grouped_[slot]) continue;
    visit_plugin(v.scores[slot], [&](auto p) {
      using P = decltype(p);
      if constexpr (kHasScoreClass<P>) ok = P::score_class(s, plugin_state<P>(v), v.arena, node, out[slot]);
    });
  }
  return ok;
}

// A group with members only: an empty one may be given to another class
// (add_groups).
uint32_t BatchCache::find_group(const Classes& cls) const {
  for (uint32_t g = 0; g < groups_.size(); ++g)
    if (groups_[g].members && groups_[g].cls == cls) return g;
  return kNone;
}

// Groups for new classes: the groups empty now (their trees hold no
// position), then new ones.
void BatchCache::add_groups(const std::vector<Classes>& classes, std::vector<uint32_t>& ids) {
  ids.clear();
  uint32_t g = 0;
  for (const Classes& cls : classes) {
    while (g < groups_.size() && groups_[g].members) ++g;
    if (g < groups_.size()) {
      groups_[g].cls = cls;
      ids.push_back(g++);
    } else {
      ids.push_back(add_group(cls));
      g = static_cast<uint32_t>(groups_.size());
    }
  }
}

uint32_t BatchCache::add_group(const Classes& cls) {
  Group g;
  g.cls = cls;
  g.tree.assign(2 * static_cast<size_t>(leaves_), kNone);
  g.tied.assign(2 * static_cast<size_t>(leaves_), 0);
  groups_.push_back(std::move(g));
  return static_cast<uint32_t>(groups_.size() - 1);
}

namespace {

// group_of[pos] = the index in `keys` of position pos's key (key_of(pos,
// key); false: it has none), keys in order of first appearance; false
// where a position has no key or there are more than max_groups keys.
// O(positions x keys), keys few; a run of one key costs one compare a
// position.
template <class Key, class KeyOf>
bool group_by_first_appearance(uint32_t positions, KeyOf key_of, size_t max_groups, std::vector<Key>& keys,
                               std::vector<uint32_t>& group_of) {
  Key key{};
  uint32_t last = 0;
  for (uint32_t pos = 0; pos < positions; ++pos) {
    if (!key_of(pos, key)) return false;
    if (last < keys.size() && keys[last] == key) {
      group_of[pos] = last;
      continue;
    }
    const auto it = std::find(keys.begin(), keys.end(), key);
    last = static_cast<uint32_t>(it - keys.begin());
    if (it == keys.end()) {
      if (keys.size() == max_groups) return false;
      keys.push_back(key);
    }
    group_of[pos] = last;
  }
  return true;
}

}  // namespace

// After a full evaluation: the score slots whose plugin has classes are
// grouped when every live position has classes and the groups are few
// enough; otherwise every slot is per node and there is one group.
bool BatchCache::group_grouping(const SnapshotView& s, const PodQueryView& v) {
  num_grouped_ = 0;
  grouped_.fill(false);
  for (uint32_t slot = 0; slot < v.num_scores; ++slot)
    visit_plugin(v.scores[slot], [&](auto p) {
      using P = decltype(p);
      if constexpr (kHasScoreClass<P>) {
        grouped_[slot] = true;
        ++num_grouped_;
      }
    });
  groups_.clear();
  group_of_.assign(size_, 0);
  if (num_grouped_) {
    // Classes in order of first appearance; past the bound on groups, stop:
    // O(positions x groups), groups few.
    const size_t max_groups = std::min(kMaxGroups, kMaxGroupLeaves / leaves_);
    std::vector<Classes> distinct;
    const bool ok = group_by_first_appearance(
        size_, [&](uint32_t pos, Classes& cls) { return classes_of(s, v, node_[pos], cls); }, max_groups, distinct,
        group_of_);
    if (ok)
      for (const Classes& c : distinct) add_group(c);
    if (!ok) {
      num_grouped_ = 0;
      grouped_.fill(false);
      group_of_.assign(size_, 0);
    }
  }
  if (!num_grouped_) add_group(Classes{});
  for (uint32_t pos = 0; pos < size_; ++pos)
    if (alive_[pos]) ++groups_[group_of_[pos]].members;
  return num_grouped_ > 0;
}

bool BatchCache::gate_domain(const SnapshotView& s, const PodQueryView& v, uint32_t node, int32_t& domain) const {
  bool has = false;
  visit_plugin(gate_plugin_, [&](auto p) {
    using P = decltype(p);
    if constexpr (kHasFilterGate<P>) has = P::filter_gate(s, plugin_state<P>(v), v.arena, node, domain);
  });
  return has;
}

uint32_t BatchCache::gate_group(int32_t domain) const {
  for (uint32_t g = 0; g < groups_.size(); ++g)
    if (groups_[g].domain == domain) return g;
  return kNone;
}

void BatchCache::gate_grouping(const SnapshotView& s, const PodQueryView& v) {
  gate_plugin_ = kNoGate;
  rechecks_.clear();
  outsiders_.clear();
  if (gates == Gates::Off || num_grouped_ || v.prescore_feasible) return;
  for (uint32_t i = 0; i < v.num_filters && gate_plugin_ == kNoGate; ++i)
    visit_plugin(v.filters[i], [&](auto p) {
      using P = decltype(p);
      if constexpr (kHasFilterGate<P>) {
        int32_t d = 0;
        if (P::filter_gate(s, plugin_state<P>(v), v.arena, node_[0], d)) gate_plugin_ = v.filters[i];
      }
    });
  if (gate_plugin_ == kNoGate) return;
  // A group per domain, in order of first appearance (every entry passed
  // Filter: every domain with one is open).
  const size_t max_groups = std::min(kMaxGroups, kMaxGroupLeaves / leaves_);
  std::vector<int32_t> domains;
  if (!group_by_first_appearance(
          size_, [&](uint32_t pos, int32_t& d) { return gate_domain(s, v, node_[pos], d); }, max_groups, domains,
          group_of_)) {
    gate_plugin_ = kNoGate;
    group_of_.assign(size_, 0);
    return;
  }
  // A normalized slot whose bounds could move as domains shut and open
  // would rebuild every group's tree on such hits, each as wide as all
  // the positions (the node-by-node path moves one tree): Auto takes the
  // gate only where every domain holds each slot's min and max, so that
  // any open one keeps both and only their counts move (all equal:
  // TaintToleration on a cluster without PreferNoSchedule taints; or the
  // tainted nodes in every zone).
  for (uint32_t slot = 0; slot < v.num_scores && gates == Gates::Auto; ++slot) {
    if (!needs_stats(v.normalize[slot])) continue;
    const int64_t* raw = raw_.data() + static_cast<size_t>(slot) * size_;
    const ScoreBounds all = score_bounds(raw, size_);
    if (all.max == kIgnoredScore || all.min == all.max) continue;
    std::vector<uint8_t> holds(domains.size(), 0);  // bit 0: the min, bit 1: the max
    for (uint32_t pos = 0; pos < size_; ++pos)
      holds[group_of_[pos]] |= static_cast<uint8_t>((raw[pos] == all.min ? 1 : 0) | (raw[pos] == all.max ? 2 : 0));
    if (std::any_of(holds.begin(), holds.end(), [](uint8_t h) { return h != 3; })) {
      gate_plugin_ = kNoGate;
      group_of_.assign(size_, 0);
      return;
    }
  }
  groups_.clear();
  for (const int32_t d : domains) groups_[add_group(Classes{})].domain = d;
  for (uint32_t pos = 0; pos < size_; ++pos) ++groups_[group_of_[pos]].members;
  // The nodes without an entry, by domain: Filter rejected them, on the
  // gate or on another rule; each is filtered again when its domain opens.
  for (uint32_t node = 0; node < s.num_nodes; ++node) {
    if (position_of_[node] != kNone) continue;
    int32_t d = 0;
    if (!gate_domain(s, v, node, d)) continue;  // no domain: its plugin fails it whatever the counts
    auto it = std::find_if(outsiders_.begin(), outsiders_.end(), [&](const Outsiders& o) { return o.domain == d; });
    if (it == outsiders_.end()) it = outsiders_.insert(outsiders_.end(), Outsiders{d, {}});
    it->nodes.push_back(node);
  }
}

// The grouped slots: one raw score per group (any member stands for the
// group), their statistics over the groups with members (the same as over
// the nodes: equal classes, equal scores), and each group's bonus.
void BatchCache::score_groups(const SnapshotView& s, const PodQueryView& v, BatchCounters* counters) {
  for (Group& g : groups_) g.bonus = 0;
  for (uint32_t slot = 0; slot < v.num_scores; ++slot) {
    if (!grouped_[slot]) continue;
    NormStats norm = empty_norm_stats();
    for (Group& g : groups_) {
      if (!g.members) continue;
      g.raw[slot] = run_score(v.scores[slot], s, v, node_[g.tree[1]]);
      add_to_stats(norm, g.raw[slot]);
      if (counters) ++counters->group_scores;
    }
    for (Group& g : groups_)
      if (g.members) g.bonus += normalize_score(v.normalize[slot], g.raw[slot], norm) * v.weights[slot];
  }
}

// ---- a hit --------------------------------------------------------------------

// Inline (this file alone calls them): once per touched node and slot on a
// hit, thousands where a zone leaves or comes back.
[[gnu::always_inline]] inline void BatchCache::SlotStats::enter(int64_t v) {
  if (v == kIgnoredScore) return;
  if (v < min) {
    min = v;
    at_min = 1;
  } else if (v == min) {
    ++at_min;
  }
  if (v > max) {
    max = v;
    at_max = 1;
  } else if (v == max) {
    ++at_max;
  }
}

[[gnu::always_inline]] inline bool BatchCache::SlotStats::leave(int64_t v) {
  if (v == kIgnoredScore) return false;
  bool emptied = false;
  if (v == min && --at_min == 0) emptied = true;
  if (v == max && --at_max == 0) emptied = true;
  return emptied;
}

bool BatchCache::try_hit(const Snapshot& snap, const ProfilePlan& plan, PodQuery& query, BatchHit& hit,
                         FlushReason& why, BatchCounters& counters) {
  HitPlan& hp = plan_scratch_;
  const SnapshotView s = snap.view();  // one copy of every column's pointer a pod
  why = plan_hit(snap, s, plan, query, hp);
  if (why != FlushReason::kCount) return false;

  // Committed: from here on the cache follows the new query.
  counters.refiltered_nodes += hp.changed.size();
  counters.filter_count_hits += hp.counts_only ? 1 : 0;
  {
    uint64_t kept = 0;  // (a plain count, which compilers vectorize: thousands of entries a hit)
    for (size_t i = 0; i < hp.revived.size(); ++i) kept += hp.revived[i] == kRevivesKept ? 1 : 0;
    counters.revived_nodes += kept;
  }
  const PodQueryView prepared = query.header;
  std::vector<uint32_t>& fresh_ids = fresh_ids_;
  add_groups(hp.new_classes, fresh_ids);
  // Touched positions leave their group (and the cache, when Filter now
  // rejects them) or move to their new one; moved_to keeps the old group
  // for the tree updates below.
  for (const uint32_t pos : hp.stale_dead) stale_[pos] = 1;
  for (size_t i = 0; i < hp.touched.size(); ++i) {
    const uint32_t pos = hp.touched[i];
    const uint32_t from = group_of_[pos];
    const uint32_t to = hp.moved_to[i] == kNone ? fresh_ids[hp.moved_new[i]] : hp.moved_to[i];
    if (hp.revived[i] != kStays) {
      // Back in the cache: in no group's tree yet, so update_trees reads
      // its new group as the one it was in.
      alive_[pos] = 1;
      stale_[pos] = 0;  // every per-node slot is scored again below where it has to be
      ++live_;
      group_of_[pos] = to;
      ++groups_[to].members;
      hp.moved_to[i] = to;
      continue;
    }
    --groups_[from].members;
    hp.moved_to[i] = from;
    if (to == kLeaves) {
      alive_[pos] = 0;
      --live_;
      continue;
    }
    group_of_[pos] = to;
    ++groups_[to].members;
  }
  if (gate_plugin_ != kNoGate) {
    // The domains' verdicts, then the entries filtered as their domain
    // opened and those named while theirs is shut.
    for (size_t g = 0; g < groups_.size(); ++g) {
      counters.gate_flips += groups_[g].open != (hp.open_after[g] != 0) ? 1 : 0;
      groups_[g].open = hp.open_after[g] != 0;
    }
    for (const uint32_t pos : hp.rechecked) recheck_[pos] = 0;
    for (const uint32_t pos : hp.shut_named) recheck_[pos] = 2;  // 2: marked this hit (listed below once)
    size_t kept = 0;
    for (const uint32_t pos : rechecks_)
      if (recheck_[pos] == 1) rechecks_[kept++] = pos;
    rechecks_.resize(kept);
    for (const uint32_t pos : hp.shut_named)
      if (recheck_[pos] == 2) {
        recheck_[pos] = 1;
        rechecks_.push_back(pos);
      }
  }
  // The feasible-set PreScore over the surviving entries, in the order the
  // full pass visits them.
  // A plugin whose prepare wrote what it wrote for the cached query updates
  // the cached query's tables for the nodes that left (their domains) and
  // the pods placed since (prescore_feasible_since); otherwise the tables
  // are built again over the surviving entries.
  if (query.header.prescore_feasible) {
    left_nodes_.clear();
    for (uint32_t pos : hp.leaving) left_nodes_.push_back(node_[pos]);
    const auto same_prepare = [&](uint8_t id) { return plugin_equal(id, prepared_, query_, prepared, query, false); };
    // Nodes that came back are not among what an update follows: the
    // tables are built again then.
    if (hp.revivals == 0 &&
        run_feasible_prescore_since(snap, query, query_, left_nodes_.data(), static_cast<uint32_t>(left_nodes_.size()),
                                    live_, same_prepare)) {
      ++counters.prescore_updates;
    } else {
      feasible_list_.clear();
      for (uint32_t pos = 0; pos < size_; ++pos)
        if (alive_[pos]) feasible_list_.push_back(node_[pos]);
      run_feasible_prescore(snap, query, feasible_list_.data(), static_cast<uint32_t>(feasible_list_.size()));
    }
  }
  const PodQueryView v = query.view();

  // The touched positions in the cache after the hit that are scored again
  // (all but those back with their kept scores): where a zone leaves or
  // comes back, a handful of the thousands touched.
  std::vector<uint32_t>& rescore = rescore_positions_;
  rescore.clear();
  for (size_t i = 0; i < hp.touched.size(); ++i)
    if (alive_[hp.touched[i]] && hp.revived[i] != kRevivesKept) rescore.push_back(hp.touched[i]);

  // Per-node slots, one by one: raw scores (a plugin whose bytes are
  // unchanged is scored again on the touched nodes only, any other on every
  // entry), statistics, and the slot's weighted normalized contribution to
  // each total. A slot whose statistics moved, or that was scored whole,
  // refreshes every contribution; otherwise only the touched nodes'. Totals
  // follow by difference (integer sums: the order does not matter).
  bool rekey_all = false;
  for (uint32_t slot = 0; slot < v.num_scores; ++slot) {
    if (grouped_[slot]) continue;
    const uint8_t id = v.scores[slot];
    int64_t* raw = raw_.data() + static_cast<size_t>(slot) * size_;
    const bool stats_needed = needs_stats(v.normalize[slot]);
    SlotStats& st = stats_[slot];
    const SlotStats before = st;
    bool slot_all = false;
    // Scores unchanged: the same bytes, or bytes that differ in Filter
    // tables' counts only (which Score does not read) with the same
    // feasible-set PreScore tables.
    const bool same_scores =
        plugin_equal(id, query_.header, query_, query.header, query, true) ||
        (hp.counts_only && counts_only(snap, id, query_.header, query, nullptr) &&
         bytes_equal(query_.arena, query_.feasible_ranges[id], query.arena, query.feasible_ranges[id]));
    if (!same_scores) {
      ++counters.full_plugin_rescores;
      visit_plugin(id, [&](auto p) {
        using P = decltype(p);
        if constexpr (P::kHasScore) {
          const auto& state = plugin_state<P>(v);
          if constexpr (kHasScoreNodes<P>) {
            feasible_list_.clear();
            for (uint32_t pos = 0; pos < size_; ++pos)
              if (alive_[pos]) feasible_list_.push_back(node_[pos]);
            rescored_.resize(feasible_list_.size());
            P::score_nodes(s, state, v.arena, feasible_list_.data(), static_cast<uint32_t>(feasible_list_.size()),
                           rescored_.data());
            size_t i = 0;
            for (uint32_t pos = 0; pos < size_; ++pos)
              if (alive_[pos]) raw[pos] = rescored_[i++];
          } else {
            for (uint32_t pos = 0; pos < size_; ++pos)
              if (alive_[pos]) raw[pos] = P::score(s, state, v.arena, node_[pos]);
          }
        }
      });
      counters.rescored_nodes += live_;
      if (stats_needed && gate_plugin_ != kNoGate) {
        group_slot_stats(slot);
        st = open_stats(slot);
      } else if (stats_needed) {
        st = slot_stats(slot);
      }
      slot_all = true;
      // The entries out of the cache keep this slot's old scores: should
      // they come back, they are scored again.
      for (uint32_t pos = 0; pos < size_; ++pos) stale_[pos] |= static_cast<uint8_t>(!alive_[pos]);
    } else if (!stats_needed) {
      // No statistics to follow: the nodes leaving and those back with
      // their kept scores change nothing in this slot.
      for (const uint32_t pos : rescore) {
        raw[pos] = run_score(id, s, v, node_[pos]);
        ++counters.rescored_nodes;
      }
    } else if (gate_plugin_ != kNoGate) {
      // Each group's statistics follow its members (moved_to holds the
      // group a position was in, or the one it came back to); the slot's
      // are the open groups' merged: a domain shut or opened moves them
      // without a walk over its nodes.
      bool recount = false;
      for (size_t i = 0; i < hp.touched.size(); ++i) {
        const uint32_t pos = hp.touched[i];
        const int64_t old = raw[pos];
        int64_t now = old;
        if (alive_[pos] && hp.revived[i] != kRevivesKept) {
          now = run_score(id, s, v, node_[pos]);
          raw[pos] = now;
          ++counters.rescored_nodes;
        }
        if (hp.revived[i] == kStays && groups_[hp.moved_to[i]].stats[slot].leave(old)) recount = true;
        if (alive_[pos]) groups_[group_of_[pos]].stats[slot].enter(now);
      }
      if (recount) group_slot_stats(slot);
      st = open_stats(slot);
      slot_all = st.min != before.min || st.max != before.max;
    } else {
      bool recount = false;
      for (size_t i = 0; i < hp.touched.size(); ++i) {
        const uint32_t pos = hp.touched[i];
        const int64_t old = raw[pos];
        int64_t now = kIgnoredScore;  // a node leaving counts nowhere
        if (hp.revived[i] == kRevivesKept) {
          now = old;
        } else if (alive_[pos]) {
          now = run_score(id, s, v, node_[pos]);
          raw[pos] = now;
          ++counters.rescored_nodes;
        }
        if (!stats_needed) continue;
        // A node coming back was in no statistics.
        if (hp.revived[i] == kStays && st.leave(old)) recount = true;
        st.enter(now);
      }
      if (recount) st = slot_stats(slot);
      slot_all = stats_needed && (st.min != before.min || st.max != before.max);
    }
    int64_t* contrib = contrib_.data() + static_cast<size_t>(slot) * size_;
    const NormStats norm{st.min, st.max};
    const NormalizeKind kind = v.normalize[slot];
    const int64_t weight = v.weights[slot];
    const auto refresh = [&](uint32_t pos) {
      const int64_t c = normalize_score(kind, raw[pos], norm) * weight;
      total_[pos] += c - contrib[pos];
      contrib[pos] = c;
    };
    if (slot_all) {
      for (uint32_t pos = 0; pos < size_; ++pos)
        if (alive_[pos]) refresh(pos);
      rekey_all = true;
    } else if (!stats_needed) {
      // Unnormalized, the kept contribution of a node back with its kept
      // score is its score times the weight still (the weights are equal:
      // lists_equal); a normalized one may have been left behind by a
      // refresh of the live entries while the node was out.
      for (const uint32_t pos : rescore) refresh(pos);
    } else {
      for (uint32_t pos : hp.touched)
        if (alive_[pos]) refresh(pos);
    }
  }

  if (rekey_all) ++counters.renormalizations;
  // Past a quarter of the positions touched (zones coming back), one
  // pass over each tree's leaves in order costs less than following the
  // touched ones up.
  if (rekey_all || hp.touched.size() > size_ / 4) {
    for (uint32_t g = 0; g < groups_.size(); ++g) rebuild_tree(g);
  } else {
    update_trees(hp.touched, hp.moved_to);  // moved_to holds the group each was in
  }
  // Grouped slots: scored once per group, after the trees (a group's best
  // member stands for it).
  if (num_grouped_) score_groups(s, v, &counters);
  query_ = std::move(query);
  prepared_ = prepared;
  log_position_ = snap.mutation_log().size();
  int64_t total = 0;
  const uint32_t best = best_position(query_.view(), counters, total);
  hit.chosen = static_cast<int32_t>(node_[best]);
  hit.chosen_total = total;
  hit.num_feasible = gate_plugin_ != kNoGate ? hp.open_live : live_;
  ++counters.hint_used;
  return true;
}

// slot_stats over every one of n entries (all alive): a min/max pass and a
// counting pass, branch-free and vectorized for the CPU it runs on (store's;
// the same SlotStats as entering each value, whatever the target).
namespace {

[[gnu::always_inline]] inline ScoreBounds score_bounds_of_body(const int64_t* __restrict raw, uint32_t n) {
  int64_t mn = INT64_MAX, mx = INT64_MIN;
  for (uint32_t i = 0; i < n; ++i) {
    const int64_t v = raw[i];
    // kIgnoredScore (INT64_MIN) xor all ones is INT64_MAX: kept out of the min.
    mn = std::min(mn, v ^ -static_cast<int64_t>(v == kIgnoredScore));
    mx = std::max(mx, v);
  }
  uint32_t at_min = 0, at_max = 0;
  for (uint32_t i = 0; i < n; ++i) {
    at_min += raw[i] == mn;
    at_max += raw[i] == mx;
  }
  return {mn, mx, at_min, at_max};
}
ScoreBounds score_bounds_of_baseline(const int64_t* raw, uint32_t n) { return score_bounds_of_body(raw, n); }

[[gnu::always_inline]] inline int64_t max_of_body(const int64_t* __restrict v, uint32_t n) {
  int64_t mx = INT64_MIN;
  for (uint32_t i = 0; i < n; ++i) mx = std::max(mx, v[i]);
  return mx;
}
int64_t max_of_baseline(const int64_t* v, uint32_t n) { return max_of_body(v, n); }
#if BULKSCORE_SIMD_X86
BULKSCORE_TARGET_AVX2 int64_t max_of_avx2(const int64_t* v, uint32_t n) { return max_of_body(v, n); }
BULKSCORE_TARGET_AVX512 int64_t max_of_avx512(const int64_t* v, uint32_t n) { return max_of_body(v, n); }
#endif
[[gnu::always_inline]] inline uint32_t count_equal_body(const int64_t* __restrict v, uint32_t n, int64_t value) {
  uint32_t c = 0;
  for (uint32_t i = 0; i < n; ++i) c += static_cast<uint32_t>(v[i] == value);
  return c;
}
uint32_t count_equal_baseline(const int64_t* v, uint32_t n, int64_t value) { return count_equal_body(v, n, value); }
#if BULKSCORE_SIMD_X86
BULKSCORE_TARGET_AVX2 uint32_t count_equal_avx2(const int64_t* v, uint32_t n, int64_t value) {
  return count_equal_body(v, n, value);
}
BULKSCORE_TARGET_AVX512 uint32_t count_equal_avx512(const int64_t* v, uint32_t n, int64_t value) {
  return count_equal_body(v, n, value);
}
#endif
uint32_t count_equal(SimdTarget t, const int64_t* v, uint32_t n, int64_t value) {
#if BULKSCORE_SIMD_X86
  if (t == SimdTarget::Avx512) return count_equal_avx512(v, n, value);
  if (t == SimdTarget::Avx2) return count_equal_avx2(v, n, value);
#else
  (void)t;
#endif
  return count_equal_baseline(v, n, value);
}

int64_t max_of(SimdTarget t, const int64_t* v, uint32_t n) {
#if BULKSCORE_SIMD_X86
  if (t == SimdTarget::Avx512) return max_of_avx512(v, n);
  if (t == SimdTarget::Avx2) return max_of_avx2(v, n);
#else
  (void)t;
#endif
  return max_of_baseline(v, n);
}
#if BULKSCORE_SIMD_X86
BULKSCORE_TARGET_AVX2 ScoreBounds score_bounds_of_avx2(const int64_t* raw, uint32_t n) {
  return score_bounds_of_body(raw, n);
}
BULKSCORE_TARGET_AVX512 ScoreBounds score_bounds_of_avx512(const int64_t* raw, uint32_t n) {
  return score_bounds_of_body(raw, n);
}
#endif

}  // namespace

ScoreBounds score_bounds(const int64_t* raw, uint32_t n) {
#if BULKSCORE_SIMD_X86
  const SimdTarget t = simd_target();
  if (t == SimdTarget::Avx512) return score_bounds_of_avx512(raw, n);
  if (t == SimdTarget::Avx2) return score_bounds_of_avx2(raw, n);
#endif
  return score_bounds_of_baseline(raw, n);
}

int64_t kth_highest(const int64_t* v, uint32_t n, uint32_t k, std::vector<int64_t>& top) {
  // top: the k highest seen, descending, INT64_MIN where fewer were seen
  // (a stand-in equal to the lowest value: if it is never replaced, fewer
  // than k entries exceed INT64_MIN and the k-th highest is INT64_MIN).
  top.assign(k, INT64_MIN);
  constexpr uint32_t kBlock = 256;
  const SimdTarget t = simd_target();
  for (uint32_t lo = 0; lo < n; lo += kBlock) {
    const uint32_t m = std::min(kBlock, n - lo);
    // An entry no higher than the k-th kept changes nothing (an equal one
    // leaves the same k values).
    if (max_of(t, v + lo, m) <= top[k - 1]) continue;
    for (uint32_t i = lo; i < lo + m; ++i) {
      const int64_t x = v[i];
      if (x <= top[k - 1]) continue;
      uint32_t j = k - 1;
      for (; j > 0 && top[j - 1] < x; --j) top[j] = top[j - 1];
      top[j] = x;
    }
  }
  return top[k - 1];
}

bool strictly_ascending(const uint32_t* __restrict v, uint32_t n) {
  uint32_t bad = 0;
  for (uint32_t i = 1; i < n; ++i) bad |= static_cast<uint32_t>(v[i - 1] >= v[i]);
  return bad == 0;
}

uint32_t count_equal(const int64_t* v, uint32_t n, int64_t value) { return count_equal(simd_target(), v, n, value); }

void BatchCache::group_slot_stats(uint32_t slot) {
  for (Group& g : groups_) g.stats[slot] = SlotStats{};
  const int64_t* raw = raw_.data() + static_cast<size_t>(slot) * size_;
  for (uint32_t pos = 0; pos < size_; ++pos)
    if (alive_[pos]) groups_[group_of_[pos]].stats[slot].enter(raw[pos]);
}

BatchCache::SlotStats BatchCache::open_stats(uint32_t slot) const {
  SlotStats m;
  for (const Group& g : groups_) {
    if (!g.open) continue;
    const SlotStats& o = g.stats[slot];
    if (o.min < m.min) {
      m.min = o.min;
      m.at_min = o.at_min;
    } else if (o.min == m.min) {
      m.at_min += o.at_min;
    }
    if (o.max > m.max) {
      m.max = o.max;
      m.at_max = o.at_max;
    } else if (o.max == m.max) {
      m.at_max += o.at_max;
    }
  }
  return m;
}

BatchCache::SlotStats BatchCache::all_alive_stats(const int64_t* raw, uint32_t n) {
  const ScoreBounds m = score_bounds(raw, n);
  SlotStats st;
  if (m.max == kIgnoredScore) return st;  // every score ignored (or none): as enter leaves it
  st.min = m.min;
  st.max = m.max;
  st.at_min = m.at_min;
  st.at_max = m.at_max;
  return st;
}

BatchCache::SlotStats BatchCache::slot_stats(uint32_t slot) const {
  SlotStats st;
  const int64_t* raw = raw_.data() + static_cast<size_t>(slot) * size_;
  for (uint32_t pos = 0; pos < size_; ++pos)
    if (alive_[pos]) st.enter(raw[pos]);
  return st;
}

// ---- the selection order ------------------------------------------------------

// The best total over the groups, then the position of rank tie_rank among
// the positions at that total across every group that reaches it. Positions
// are in the full pass's visiting order, which without sampling (the cache
// never samples) is ascending node index (store keeps no other list), so
// the k-th tied position from the left is the k-th tied node by index;
// every group's tree has the same leaves, so one walk down all of them
// finds it.
uint32_t BatchCache::best_position(const PodQueryView& v, BatchCounters& counters, int64_t& total) {
  int64_t best = INT64_MIN;
  uint64_t tied = 0;
  for (const Group& g : groups_) {
    if (!g.members || !g.open) continue;
    const int64_t t = total_[g.tree[1]] + g.bonus;
    if (t > best) {
      best = t;
      tied = g.tied[1];
    } else if (t == best) {
      tied += g.tied[1];
    }
  }
  qualifying_.clear();
  for (uint32_t gi = 0; gi < groups_.size(); ++gi)
    if (groups_[gi].members && groups_[gi].open && total_[groups_[gi].tree[1]] + groups_[gi].bonus == best)
      qualifying_.push_back(gi);
  uint64_t k = tie_rank(tied, v);
  if (v.tie_break == TieBreak::Random && tied > 1) counters.tied_nodes += tied;
  size_t i = 1;
  while (i < leaves_) {
    const size_t l = 2 * i;
    uint64_t left = 0;
    for (uint32_t gi : qualifying_) {
      const Group& g = groups_[gi];
      const uint32_t lp = g.tree[l];
      if (lp != kNone && total_[lp] + g.bonus == best) left += g.tied[l];  // trees hold live positions (combine)
    }
    if (k < left) {
      i = l;
    } else {
      k -= left;
      i = l + 1;
    }
  }
  total = best;
  return static_cast<uint32_t>(i - leaves_);
}

// The children are combined already (bottom up), so they hold live
// positions or kNone; and every position under the left child is lower
// than every one under the right, so is its node (positions ascend by node
// index: store): of equal totals the left one is the lower node. Neither
// alive_ nor node_ is read: the loads a combine waits on are the totals.
// Inline (this file alone calls it): once per tree node a hit changes.
[[gnu::always_inline]] inline void BatchCache::combine(Group& g, size_t i) const {
  const uint32_t l = g.tree[2 * i], r = g.tree[2 * i + 1];
  const bool lv = l != kNone, rv = r != kNone;
  if (lv && rv && total_[l] == total_[r]) {
    g.tree[i] = l;
    g.tied[i] = g.tied[2 * i] + g.tied[2 * i + 1];
  } else if (rv && (!lv || total_[r] > total_[l])) {
    g.tree[i] = r;
    g.tied[i] = g.tied[2 * i + 1];
  } else {
    g.tree[i] = lv ? l : kNone;
    g.tied[i] = lv ? g.tied[2 * i] : 0;
  }
}

// Only the positions' leaves are written, each whole: every inner node is
// combined below, and the leaves past size_ hold no position from the
// tree's allocation on (add_group; nothing writes them). Filling both
// arrays first cost a third of a rebuild (a hit under hard spreading
// rebuilds a 16,384-entry tree where zones come back).
void BatchCache::rebuild_tree(uint32_t gi) {
  Group& g = groups_[gi];
  uint32_t* const leaf = g.tree.data() + leaves_;
  uint32_t* const tied = g.tied.data() + leaves_;
  for (uint32_t pos = 0; pos < size_; ++pos) {
    const bool member = alive_[pos] && group_of_[pos] == gi;
    leaf[pos] = member ? pos : kNone;
    tied[pos] = member ? 1 : 0;
  }
  for (size_t i = leaves_ - 1; i >= 1; --i) combine(g, i);
}

// The touched positions' leaves in the groups they were in (`from`) and
// are in now, then their ancestors level by level, each combined once: a
// changed zone's hundreds of nodes share most of theirs, which a walk up
// from each leaf combined again for each. The trees end as rebuild_tree
// leaves them: a tree node is a function of its children, and every leaf
// sits at the same depth.
void BatchCache::update_trees(const std::vector<uint32_t>& touched, const std::vector<uint32_t>& from) {
  tree_groups_.clear();
  const auto note_group = [&](uint32_t gi) {
    if (std::find(tree_groups_.begin(), tree_groups_.end(), gi) == tree_groups_.end()) tree_groups_.push_back(gi);
  };
  for (size_t i = 0; i < touched.size(); ++i) {
    note_group(from[i]);
    if (alive_[touched[i]]) note_group(group_of_[touched[i]]);
  }
  for (const uint32_t gi : tree_groups_) {
    Group& g = groups_[gi];
    tree_dirty_.clear();
    for (size_t i = 0; i < touched.size(); ++i) {
      const uint32_t pos = touched[i];
      const bool member = alive_[pos] && group_of_[pos] == gi;
      if (!member && from[i] != gi) continue;
      const size_t leaf = static_cast<size_t>(leaves_) + pos;
      g.tree[leaf] = member ? pos : kNone;
      g.tied[leaf] = member ? 1 : 0;
      if (leaf >= 2) tree_dirty_.push_back(leaf / 2);  // a one-leaf tree is its leaf
    }
    if (!std::is_sorted(tree_dirty_.begin(), tree_dirty_.end())) std::sort(tree_dirty_.begin(), tree_dirty_.end());
    tree_dirty_.erase(std::unique(tree_dirty_.begin(), tree_dirty_.end()), tree_dirty_.end());
    // Ascending indices of one depth: their parents ascend too, and are
    // written over them in place (through a local pointer and count: the
    // vector's own would be reloaded after every store).
    size_t* const dirty = tree_dirty_.data();
    size_t count = tree_dirty_.size();
    while (count != 0) {
      for (size_t k = 0; k < count; ++k) combine(g, dirty[k]);
      if (dirty[0] == 1) break;
      size_t kept = 1;
      dirty[0] /= 2;
      for (size_t k = 1; k < count; ++k) {
        const size_t parent = dirty[k] / 2;
        dirty[kept] = parent;
        kept += parent != dirty[kept - 1] ? 1 : 0;
      }
      count = kept;
    }
  }
}

// ---- a miss's evaluation becomes the state -----------------------------------------

void BatchCache::store(const Snapshot& snap, const ProfilePlan& plan, PodQuery&& query, const PodQueryView& prepared,
                       EvalResult& result) {
  if (!result.scored || result.scored_nodes.size() < 2 || !query.score_error.empty()) return;
  // best_position's random tie-break walks the positions as node order: a
  // list whose visit did not ascend by node index (no engine request does
  // today: no sampling here, candidate lists sorted; test_cuda_parity checks
  // that every backend keeps that order) is not kept. Exact either way.
  if (std::adjacent_find(result.scored_nodes.begin(), result.scored_nodes.end(), std::greater_equal<uint32_t>()) !=
      result.scored_nodes.end())
    return;
  const PodQueryView v = query.view();
  const auto F = static_cast<uint32_t>(result.scored_nodes.size());
  // position_of_ back to kNone where the last state had entries (not a
  // fill of every node per store), then the new entries.
  if (position_of_.size() == snap.num_nodes()) {
    for (uint32_t pos = 0; pos < size_ && pos < node_.size(); ++pos)
      if (node_[pos] < position_of_.size()) position_of_[node_[pos]] = kNone;
  } else {
    position_of_.assign(snap.num_nodes(), kNone);
  }
  size_ = live_ = F;
  // The evaluation's lists are taken, not copied (theirs become ours'
  // old buffers, which it overwrites).
  node_.swap(result.scored_nodes);
  raw_.swap(result.raw_scores);
  alive_.assign(F, 1);
  stale_.assign(F, 0);
  for (uint32_t pos = 0; pos < F; ++pos) position_of_[node_[pos]] = pos;
  leaves_ = 1;
  while (leaves_ < size_) leaves_ *= 2;
  const SnapshotView s = snap.view();
  group_grouping(s, v);
  gate_grouping(s, v);
  recheck_.assign(F, 0);
  // Per-node slots: each one's weighted normalized scores, summed as
  // weighted_total sums them (the grouped slots' part is the groups' bonus).
  // The evaluation's normalized scores are the same (the same statistics
  // over the same nodes) when it gives them.
  const bool normalized = result.normalized_scores.size() == static_cast<size_t>(v.num_scores) * F;
  contrib_.resize(static_cast<size_t>(v.num_scores) * F);
  total_.assign(F, 0);
  for (uint32_t slot = 0; slot < v.num_scores; ++slot) {
    // Statistics only where a hit reads them: a normalization that needs
    // them, or a grouped slot (score_groups).
    stats_[slot] = needs_stats(v.normalize[slot]) || grouped_[slot]
                       ? all_alive_stats(raw_.data() + static_cast<size_t>(slot) * F, F)
                       : SlotStats{};
    if (grouped_[slot]) continue;
    if (gate_plugin_ != kNoGate && needs_stats(v.normalize[slot])) group_slot_stats(slot);
    const NormStats norm{stats_[slot].min, stats_[slot].max};
    const int64_t w = v.weights[slot];
    int64_t* __restrict contrib = contrib_.data() + static_cast<size_t>(slot) * F;
    int64_t* __restrict total = total_.data();
    if (normalized) {
      const int64_t* __restrict n = result.normalized_scores.data() + static_cast<size_t>(slot) * F;
      for (uint32_t pos = 0; pos < F; ++pos) {
        contrib[pos] = n[pos] * w;
        total[pos] += contrib[pos];
      }
    } else {
      const int64_t* raw = raw_.data() + static_cast<size_t>(slot) * F;
      for (uint32_t pos = 0; pos < F; ++pos) {
        contrib[pos] = normalize_score(v.normalize[slot], raw[pos], norm) * w;
        total[pos] += contrib[pos];
      }
    }
  }
  for (uint32_t g = 0; g < groups_.size(); ++g) rebuild_tree(g);
  if (num_grouped_) score_groups(s, v, nullptr);

  valid_ = true;
  shape_only_ = false;
  plan_ = &plan;
  query_ = std::move(query);
  prepared_ = prepared;
  structure_version_ = snap.structure_version();
  log_position_ = snap.mutation_log().size();
  num_nodes_ = snap.num_nodes();
}

}  // namespace bulkscore
