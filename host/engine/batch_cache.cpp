#include "host/engine/batch_cache.hpp"

#include <algorithm>
#include <cstring>

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
  throw InputError("--batching: expected exact, upstream or off, got \"" + text + "\"");
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
    s += " (" + std::to_string(c.rescored_nodes) + " node scores recomputed, " + std::to_string(c.renormalizations) +
         " renormalizations)";
  std::string flushes;
  for (size_t r = 0; r < c.flushed.size(); ++r)
    if (c.flushed[r])
      flushes += (flushes.empty() ? "" : ", ") + std::string(flush_reason_name(static_cast<FlushReason>(r))) + " " +
                 std::to_string(c.flushed[r]);
  if (!flushes.empty()) s += "; misses by reason: " + flushes;
  return s;
}

namespace {

// A plugin's state bytes inside a query header.
template <class P>
const void* state_bytes(const PodQueryView& h) {
  return &state_of<P>(h.states);
}

bool bytes_equal(const Arena& a, ArenaRange ra, const Arena& b, ArenaRange rb) {
  const uint32_t len = ra.end - ra.begin;
  if (len != rb.end - rb.begin) return false;
  return len == 0 || std::memcmp(a.data() + ra.begin, b.data() + rb.begin, len) == 0;
}

// Plugin `id`'s part of two queries: its state in `ha` / `hb`, and what its
// prepare (and, with `feasible`, its feasible-set PreScore) wrote.
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

}  // namespace

// ---- what can be reused -------------------------------------------------------

FlushReason BatchCache::check_header(const Snapshot& snap, const ProfilePlan& plan, const PodQuery& query) const {
  if (!valid_) return FlushReason::kNoState;
  if (snap.structure_version() != structure_version_ || snap.num_nodes() != num_nodes_ ||
      snap.mutation_log().size() < log_position_)
    return FlushReason::kSnapshotChanged;
  const PodQueryView& a = prepared_;
  const PodQueryView& b = query.header;
  const bool same_lists = &plan == plan_ && a.num_filters == b.num_filters && a.num_scores == b.num_scores &&
                          std::equal(a.filters, a.filters + a.num_filters, b.filters) &&
                          std::equal(a.scores, a.scores + a.num_scores, b.scores) &&
                          std::equal(a.normalize, a.normalize + a.num_scores, b.normalize) &&
                          std::equal(a.weights, a.weights + a.num_scores, b.weights) &&
                          a.prescore_feasible == b.prescore_feasible && a.tie_break == b.tie_break &&
                          a.tie_seed == b.tie_seed;
  if (!same_lists || query.candidates != query_.candidates || !query.score_error.empty())
    return FlushReason::kPodIncompatible;
  if (!filters_equal(query)) return FlushReason::kFilterChanged;
  return FlushReason::kCount;  // no reason: the header and every Filter input match
}

bool BatchCache::filters_equal(const PodQuery& query) const {
  for (uint32_t i = 0; i < query.header.num_filters; ++i)
    if (!plugin_equal(query.header.filters[i], prepared_, query_, query.header, query, false)) return false;
  return true;
}

bool BatchCache::is_candidate(uint32_t node) const {
  if (!query_.candidates) return true;
  return std::binary_search(query_.candidates->begin(), query_.candidates->end(), node);
}

void BatchCache::collect_changed(const Snapshot& snap) {
  const std::vector<uint32_t>& log = snap.mutation_log();
  changed_.assign(log.begin() + static_cast<std::ptrdiff_t>(log_position_), log.end());
  std::sort(changed_.begin(), changed_.end());
  changed_.erase(std::unique(changed_.begin(), changed_.end()), changed_.end());
}

FlushReason BatchCache::would_hit(const Snapshot& snap, const ProfilePlan& plan, const PodQuery& query) const {
  const FlushReason header = check_header(snap, plan, query);
  if (header != FlushReason::kCount) return header;
  const std::vector<uint32_t>& log = snap.mutation_log();
  std::vector<uint32_t> changed(log.begin() + static_cast<std::ptrdiff_t>(log_position_), log.end());
  std::sort(changed.begin(), changed.end());
  changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
  if (changed.size() > live_ / 2 + 1) return FlushReason::kTooManyChanges;
  const SnapshotView s = snap.view();
  const PodQueryView v = query.view();
  uint32_t live = live_;
  for (uint32_t n : changed) {
    if (!is_candidate(n)) continue;
    const bool feasible = filter_node(s, v, n).feasible();
    const uint32_t pos = position_of_[n];
    const bool cached = pos != kNone && alive_[pos];
    if (feasible && !cached) return FlushReason::kNodeBecameFeasible;
    if (!feasible && cached) --live;
  }
  if (live < 2) return FlushReason::kEmptyList;
  return FlushReason::kCount;
}

// ---- a hit --------------------------------------------------------------------

bool BatchCache::try_hit(const Snapshot& snap, const ProfilePlan& plan, PodQuery& query, BatchHit& hit,
                         FlushReason& why, BatchCounters& counters) {
  why = check_header(snap, plan, query);
  if (why != FlushReason::kCount) return false;
  collect_changed(snap);
  // Past this many changed nodes a full pass is as cheap.
  if (changed_.size() > live_ / 2 + 1) {
    why = FlushReason::kTooManyChanges;
    return false;
  }
  const SnapshotView s = snap.view();
  // Filter again the changed nodes only: every other node's Filter inputs
  // (its columns and the Filter plugins' bytes) are as they were.
  touched_.clear();
  leaving_.clear();
  {
    const PodQueryView v = query.view();
    for (uint32_t n : changed_) {
      if (!is_candidate(n)) continue;
      const bool feasible = filter_node(s, v, n).feasible();
      const uint32_t pos = position_of_[n];
      const bool cached = pos != kNone && alive_[pos];
      if (feasible && !cached) {
        why = FlushReason::kNodeBecameFeasible;
        return false;
      }
      if (!cached) continue;
      touched_.push_back(pos);
      if (!feasible) leaving_.push_back(pos);
    }
  }
  if (live_ - leaving_.size() < 2) {
    why = FlushReason::kEmptyList;
    return false;
  }

  // Committed: from here on the cache follows the new query.
  counters.refiltered_nodes += changed_.size();
  const PodQueryView prepared = query.header;
  for (uint32_t pos : leaving_) {
    alive_[pos] = 0;
    --live_;
  }
  // The feasible-set PreScore over the surviving entries, in the order the
  // full pass visits them.
  if (query.header.prescore_feasible) {
    feasible_list_.clear();
    for (uint32_t pos = 0; pos < size_; ++pos)
      if (alive_[pos]) feasible_list_.push_back(node_[pos]);
    run_feasible_prescore(snap, query, feasible_list_.data(), static_cast<uint32_t>(feasible_list_.size()));
  }
  const PodQueryView v = query.view();

  // Slot by slot: raw scores (a plugin whose bytes are unchanged is scored
  // again on the changed nodes only, any other on every entry), statistics,
  // and the slot's weighted normalized contribution to each total. A slot
  // whose statistics moved, or that was scored whole, refreshes every
  // contribution; otherwise only the changed nodes'. Totals follow by
  // difference (integer sums: the order does not matter).
  bool rekey_all = false;
  for (uint32_t slot = 0; slot < v.num_scores; ++slot) {
    const uint8_t id = v.scores[slot];
    int64_t* raw = raw_.data() + static_cast<size_t>(slot) * size_;
    const bool stats_needed = needs_stats(v.normalize[slot]);
    SlotStats& st = stats_[slot];
    const SlotStats before = st;
    bool slot_all = false;
    if (!plugin_equal(id, query_.header, query_, query.header, query, true)) {
      ++counters.full_plugin_rescores;
      visit_plugin(id, [&](auto p) {
        using P = decltype(p);
        if constexpr (P::kHasScore) {
          const auto& state = plugin_state<P>(v);
          for (uint32_t pos = 0; pos < size_; ++pos)
            if (alive_[pos]) raw[pos] = P::score(s, state, v.arena, node_[pos]);
        }
      });
      counters.rescored_nodes += live_;
      if (stats_needed) st = slot_stats(slot);
      slot_all = true;
    } else {
      bool recount = false;
      for (uint32_t pos : touched_) {
        const int64_t old = raw[pos];
        int64_t now = kIgnoredScore;  // a node leaving counts nowhere
        if (alive_[pos]) {
          now = run_score(id, s, v, node_[pos]);
          raw[pos] = now;
          ++counters.rescored_nodes;
        }
        if (!stats_needed) continue;
        // The old value leaves the statistics, the new one (if any) enters.
        if (old != kIgnoredScore) {
          if (old == st.min && --st.at_min == 0) recount = true;
          if (old == st.max && --st.at_max == 0) recount = true;
        }
        if (now == kIgnoredScore) continue;
        if (now < st.min) {
          st.min = now;
          st.at_min = 1;
        } else if (now == st.min) {
          ++st.at_min;
        }
        if (now > st.max) {
          st.max = now;
          st.at_max = 1;
        } else if (now == st.max) {
          ++st.at_max;
        }
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
    } else {
      for (uint32_t pos : touched_)
        if (alive_[pos]) refresh(pos);
    }
  }

  if (rekey_all) {
    ++counters.renormalizations;
    rebuild_tree();
  } else {
    for (uint32_t pos : touched_) update_tree(pos);
  }

  query_ = std::move(query);
  prepared_ = prepared;
  log_position_ = snap.mutation_log().size();
  const uint32_t best = best_position(query_.view(), counters);
  hit.chosen = static_cast<int32_t>(node_[best]);
  hit.chosen_total = total_[best];
  hit.num_feasible = live_;
  ++counters.hint_used;
  return true;
}

BatchCache::SlotStats BatchCache::slot_stats(uint32_t slot) const {
  SlotStats st;
  const int64_t* raw = raw_.data() + static_cast<size_t>(slot) * size_;
  for (uint32_t pos = 0; pos < size_; ++pos) {
    if (!alive_[pos] || raw[pos] == kIgnoredScore) continue;
    const int64_t r = raw[pos];
    if (r < st.min) {
      st.min = r;
      st.at_min = 1;
    } else if (r == st.min) {
      ++st.at_min;
    }
    if (r > st.max) {
      st.max = r;
      st.at_max = 1;
    } else if (r == st.max) {
      ++st.at_max;
    }
  }
  return st;
}

// ---- the selection order ------------------------------------------------------

bool BatchCache::better(uint32_t a, uint32_t b) const {
  if (a == kNone || !alive_[a]) return false;
  if (b == kNone || !alive_[b]) return true;
  return total_[a] != total_[b] ? total_[a] > total_[b] : node_[a] < node_[b];
}

// The tree's nodes each carry how many live positions below them share
// their best total. Positions are in the full pass's visiting order, which
// without sampling (the cache never samples) is ascending node index, so the
// k-th tied position from the left is the k-th tied node by index.
uint32_t BatchCache::best_position(const PodQueryView& v, BatchCounters& counters) {
  size_t i = 1;
  const uint32_t top = tree_[1];
  uint64_t k = tie_rank(tied_[1], v);
  if (v.tie_break == TieBreak::Random && tied_[1] > 1) counters.tied_nodes += tied_[1];
  const int64_t m = total_[top];
  while (i < leaves_) {
    const size_t l = 2 * i;
    const uint32_t lp = tree_[l];
    if (lp != kNone && alive_[lp] && total_[lp] == m) {
      if (k < tied_[l]) {
        i = l;
        continue;
      }
      k -= tied_[l];
    }
    i = l + 1;
  }
  return tree_[i];
}

void BatchCache::combine(size_t i) {
  const uint32_t l = tree_[2 * i], r = tree_[2 * i + 1];
  const bool lv = l != kNone && alive_[l], rv = r != kNone && alive_[r];
  if (lv && rv && total_[l] == total_[r]) {
    tree_[i] = node_[l] < node_[r] ? l : r;
    tied_[i] = tied_[2 * i] + tied_[2 * i + 1];
  } else if (better(r, l)) {
    tree_[i] = r;
    tied_[i] = tied_[2 * i + 1];
  } else {
    tree_[i] = l;
    tied_[i] = lv ? tied_[2 * i] : 0;
  }
}

void BatchCache::rebuild_tree() {
  leaves_ = 1;
  while (leaves_ < size_) leaves_ *= 2;
  tree_.assign(2 * static_cast<size_t>(leaves_), kNone);
  tied_.assign(2 * static_cast<size_t>(leaves_), 0);
  for (uint32_t pos = 0; pos < size_; ++pos)
    if (alive_[pos]) {
      tree_[leaves_ + pos] = pos;
      tied_[leaves_ + pos] = 1;
    }
  for (size_t i = leaves_ - 1; i >= 1; --i) combine(i);
}

void BatchCache::update_tree(uint32_t pos) {
  size_t i = static_cast<size_t>(leaves_) + pos;
  tree_[i] = alive_[pos] ? pos : kNone;
  tied_[i] = alive_[pos] ? 1 : 0;
  for (i /= 2; i >= 1; i /= 2) combine(i);
}

// ---- a miss's evaluation becomes the state -----------------------------------------

void BatchCache::store(const Snapshot& snap, const ProfilePlan& plan, PodQuery&& query, const PodQueryView& prepared,
                       const EvalResult& result) {
  if (!result.scored || result.scored_nodes.size() < 2 || !query.score_error.empty()) return;
  const PodQueryView v = query.view();
  const auto F = static_cast<uint32_t>(result.scored_nodes.size());
  size_ = live_ = F;
  node_ = result.scored_nodes;
  alive_.assign(F, 1);
  position_of_.assign(snap.num_nodes(), kNone);
  for (uint32_t pos = 0; pos < F; ++pos) position_of_[node_[pos]] = pos;
  raw_ = result.raw_scores;
  for (uint32_t slot = 0; slot < v.num_scores; ++slot) stats_[slot] = slot_stats(slot);
  // Each slot's weighted normalized scores, summed as weighted_total sums
  // them: the totals are the backend's.
  contrib_.resize(static_cast<size_t>(v.num_scores) * F);
  total_.assign(F, 0);
  for (uint32_t slot = 0; slot < v.num_scores; ++slot) {
    const NormStats norm{stats_[slot].min, stats_[slot].max};
    for (uint32_t pos = 0; pos < F; ++pos) {
      const size_t at = static_cast<size_t>(slot) * F + pos;
      contrib_[at] = normalize_score(v.normalize[slot], raw_[at], norm) * v.weights[slot];
      total_[pos] += contrib_[at];
    }
  }
  rebuild_tree();

  valid_ = true;
  plan_ = &plan;
  query_ = std::move(query);
  prepared_ = prepared;
  structure_version_ = snap.structure_version();
  log_position_ = snap.mutation_log().size();
  num_nodes_ = snap.num_nodes();
}

}  // namespace bulkscore
