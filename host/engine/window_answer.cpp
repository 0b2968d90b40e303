#include "host/engine/window_answer.hpp"

#include <algorithm>
#include <array>

#include "plugins/evaluate.hpp"

namespace bulkscore {
bool WindowAnswer::build(const Snapshot& snap, const ProfilePlan& plan, PodQuery& query, EvalResult& result,
                         uint32_t reach) {
  valid_ = false;
  const auto F = static_cast<uint32_t>(result.scored_nodes.size());
  const PodQueryView& h = query.header;
  uint32_t stat_slots = 0;
  for (uint32_t slot = 0; slot < h.num_scores; ++slot) stat_slots += needs_stats(h.normalize[slot]) ? 1 : 0;
  // The backend's summary where it gave one (EvalResult::stat_bounds,
  // top_known, ascending), else a pass over the lists for each.
  const bool bounds_given = !result.stat_bounds.empty();
  if (bounds_given && result.stat_bounds.size() != stat_slots) return false;
  uint32_t rows = stat_slots;
  if (bounds_given) {
    rows = 0;
    for (const ScoreBounds& b : result.stat_bounds) rows += stat_row_needed(b, F) ? 1 : 0;
  }
  if (!result.scored || F < 2 || h.prescore_feasible || !query.score_error.empty() || result.totals.size() != F ||
      result.stat_scores.size() != static_cast<size_t>(rows) * F)
    return false;
  if (!result.ascending && !strictly_ascending(result.scored_nodes.data(), F)) return false;

  // The best entries: at least reach + 1 of them (so that some survive
  // `reach` changed nodes), extended to whole groups of equal totals, best
  // group first, each in node order (the scored nodes ascend). Mostly the
  // nodes at the highest total are enough (a cluster of alike nodes ties
  // there by the thousand): they are counted block by block where they lie
  // (top_in_place_); else a selection.
  const uint32_t want = std::min(F, reach + 1);
  const int64_t* totals = result.totals.data();
  const uint32_t* nodes = result.scored_nodes.data();
  // The highest total and how many reach it: the backend's summary, or one
  // vectorized pass (totals lie in [-2^31, 2^31): none is kIgnoredScore).
  const ScoreBounds top = result.top_known ? ScoreBounds{0, result.top_total, 0, result.top_count}
                                           : score_bounds(totals, F);
  const int64_t highest = top.max;
  const uint32_t at_highest = top.at_max;
  group_totals_.clear();
  group_start_.assign(1, 0);
  group_nodes_.clear();
  top_in_place_ = at_highest >= want;
  if (top_in_place_) {
    top_before_.clear();
    uint32_t below = 0;
    for (uint32_t lo = 0; lo < F; lo += kTopBlock) {
      top_before_.push_back(below);
      below += count_equal(totals + lo, std::min(kTopBlock, F - lo), highest);
    }
    // The backend's count (EvalResult::top_count) disagreeing with the
    // totals would send the answer's scans past them: no form then.
    if (below != at_highest) return false;
    group_totals_.push_back(highest);
    group_start_.push_back(at_highest);
  } else {
    const int64_t floor_total = kth_highest(totals, F, want, top_);
    order_.clear();
    for (uint32_t i = 0; i < F; ++i)
      if (totals[i] >= floor_total) order_.emplace_back(totals[i], nodes[i]);
    std::stable_sort(order_.begin(), order_.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [total, node] : order_) {
      if (group_totals_.empty() || group_totals_.back() != total) {
        if (!group_totals_.empty()) group_start_.push_back(static_cast<uint32_t>(group_nodes_.size()));
        group_totals_.push_back(total);
      }
      group_nodes_.push_back(node);
    }
    group_start_.push_back(static_cast<uint32_t>(group_nodes_.size()));
  }

  // Each normalizing slot's bounds; its values where they differ.
  slots_.assign(h.num_scores, Slot{});
  values_.clear();
  for (uint32_t slot = 0, k = 0, row = 0; slot < h.num_scores; ++slot) {
    if (!needs_stats(h.normalize[slot])) continue;
    Slot& sl = slots_[slot];
    const int64_t* raw = nullptr;
    if (bounds_given) {
      sl.bounds = result.stat_bounds[k++];
      if (stat_row_needed(sl.bounds, F)) raw = result.stat_scores.data() + static_cast<size_t>(row++) * F;
    } else {
      raw = result.stat_scores.data() + static_cast<size_t>(row++) * F;
      sl.bounds = score_bounds(raw, F);
    }
    sl.all_ignored = sl.bounds.max == kIgnoredScore;
    if (!stat_row_needed(sl.bounds, F)) continue;
    sl.values = static_cast<uint32_t>(values_.size());
    values_.insert(values_.end(), raw, raw + F);
  }

  feasible_.swap(result.scored_nodes);
  if (top_in_place_) totals_.swap(result.totals);
  plan_ = &plan;
  query_ = std::move(query);
  structure_version_ = snap.structure_version();
  log_position_ = snap.mutation_log().size();
  num_nodes_ = snap.num_nodes();
  reach_ = reach;
  valid_ = true;
  return true;
}

bool WindowAnswer::answer(const Snapshot& snap, const ProfilePlan& plan, const PodQuery& fresh, BatchHit& hit,
                          BatchCounters& counters) {
  if (!valid_) return false;
  valid_ = false;  // one use
  const std::vector<uint32_t>& log = snap.mutation_log();
  if (&plan != plan_ || snap.structure_version() != structure_version_ || snap.num_nodes() != num_nodes_ ||
      log.size() < log_position_)
    return false;
  // The same query, byte for byte: every node that did not change keeps
  // its verdict, its raw scores and (bounds kept) its total.
  const PodQueryView& a = query_.header;
  if (!lists_equal(a, query_, fresh)) return false;
  for (uint32_t i = 0; i < a.num_filters; ++i)
    if (!plugin_equal(a.filters[i], a, query_, fresh.header, fresh, false)) return false;
  for (uint32_t i = 0; i < a.num_scores; ++i)
    if (!plugin_equal(a.scores[i], a, query_, fresh.header, fresh, false)) return false;

  changed_.assign(log.begin() + static_cast<std::ptrdiff_t>(log_position_), log.end());
  std::sort(changed_.begin(), changed_.end());
  changed_.erase(std::unique(changed_.begin(), changed_.end()), changed_.end());
  if (changed_.size() > reach_ + 8) return false;  // past what the kept entries are meant for

  const SnapshotView s = snap.view();
  const PodQueryView v = fresh.view();
  const auto F = static_cast<uint32_t>(feasible_.size());
  // Per normalizing slot: how many nodes sit at each bound once the changed
  // nodes' old values leave and their new ones enter.
  std::array<std::pair<uint32_t, uint32_t>, kMaxProfilePlugins> at{};
  for (uint32_t slot = 0; slot < v.num_scores; ++slot) at[slot] = {slots_[slot].bounds.at_min, slots_[slot].bounds.at_max};
  changed_entries_.clear();
  int64_t feasible = F;
  for (const uint32_t n : changed_) {
    if (fresh.candidates && !std::binary_search(fresh.candidates->begin(), fresh.candidates->end(), n)) continue;
    const auto it = std::lower_bound(feasible_.begin(), feasible_.end(), n);
    const bool was = it != feasible_.end() && *it == n;
    const auto pos = static_cast<uint32_t>(it - feasible_.begin());
    const bool now = filter_node(s, v, n).feasible();
    feasible += static_cast<int64_t>(now) - static_cast<int64_t>(was);
    int64_t total = 0;
    for (uint32_t slot = 0; slot < v.num_scores; ++slot) {
      const Slot& sl = slots_[slot];
      const bool stats = needs_stats(v.normalize[slot]);
      if (stats && was && !sl.all_ignored) {
        const int64_t old = sl.values == kNone ? sl.bounds.min : values_[sl.values + pos];
        if (old != kIgnoredScore) {
          at[slot].first -= old == sl.bounds.min;
          at[slot].second -= old == sl.bounds.max;
        }
      }
      if (!now) continue;
      const int64_t raw = run_score(v.scores[slot], s, v, n);
      if (stats && raw != kIgnoredScore) {
        // A value past a bound (or any value where every one was
        // ignored) moves the bounds: renormalization, not kept here.
        if (sl.all_ignored || raw < sl.bounds.min || raw > sl.bounds.max) return false;
        at[slot].first += raw == sl.bounds.min;
        at[slot].second += raw == sl.bounds.max;
      }
      total += normalize_score(v.normalize[slot], raw, NormStats{sl.bounds.min, sl.bounds.max}) * v.weights[slot];
    }
    if (now) changed_entries_.emplace_back(total, n);
  }
  for (uint32_t slot = 0; slot < v.num_scores; ++slot)
    if (needs_stats(v.normalize[slot]) && !slots_[slot].all_ignored && (at[slot].first == 0 || at[slot].second == 0))
      return false;  // a bound lost its last node
  if (feasible < 2) return false;  // none or one: upstream does not score

  // The best unchanged entry: in the first kept group that keeps a node
  // that did not change (the group is whole, and every entry not kept
  // ranks below it); removed_: the positions of its changed nodes.
  size_t g = 0;
  for (; g < group_totals_.size(); ++g) {
    removed_.clear();
    for (const uint32_t n : changed_) {
      const uint32_t rank = group_rank(g, n);
      if (rank != kNone) removed_.push_back(rank);
    }
    if (removed_.size() < group_size(g)) break;
  }
  if (g == group_totals_.size()) return false;
  int64_t best = group_totals_[g];
  for (const auto& e : changed_entries_) best = std::max(best, e.first);
  // The tied nodes, in index order: the group's that did not change (none
  // when a changed node ranks above it) and the changed ones at that total
  // (ascending, as changed_). The one of rank k is found without listing
  // them: a tie can hold every node of the cluster.
  const uint32_t size = best == group_totals_[g] ? group_size(g) : 0;
  const uint64_t kept = size ? size - removed_.size() : 0;
  extra_.clear();
  for (const auto& e : changed_entries_)
    if (e.first == best) extra_.push_back(e.second);
  const uint64_t tied = kept + extra_.size();
  const uint64_t k = tie_rank(tied, v);
  // The m-th (from 0) of the group's nodes that did not change.
  const auto kept_at = [&](uint64_t m) {
    uint64_t at = m;
    for (const uint32_t p : removed_) {
      if (p > at) break;
      ++at;
    }
    return group_node(g, static_cast<uint32_t>(at));
  };
  uint32_t chosen = UINT32_MAX;
  for (size_t i = 0; i < extra_.size() && chosen == UINT32_MAX; ++i) {
    // The union's entries before extra_[i]: the kept group nodes below it, and i extras.
    const uint32_t pos = size ? group_below(g, extra_[i]) : 0;
    const auto removed_below =
        static_cast<uint64_t>(std::lower_bound(removed_.begin(), removed_.end(), pos) - removed_.begin());
    const uint64_t before = pos - removed_below + i;
    if (k < before)
      chosen = kept_at(k - i);
    else if (k == before)
      chosen = extra_[i];
  }
  if (chosen == UINT32_MAX) chosen = kept_at(k - extra_.size());
  hit.chosen = static_cast<int32_t>(chosen);
  hit.chosen_total = best;
  hit.num_feasible = static_cast<uint32_t>(feasible);
  ++counters.hint_used;
  ++counters.window_hits;
  ++counters.window_light_hits;
  counters.refiltered_nodes += changed_.size();
  counters.rescored_nodes += changed_entries_.size() * v.num_scores;
  if (v.tie_break == TieBreak::Random && tied > 1) counters.tied_nodes += tied;
  return true;
}

uint32_t WindowAnswer::top_below_position(uint32_t pos) const {
  const uint32_t block = pos / kTopBlock;
  if (block >= top_before_.size()) return group_start_[1];  // pos == F on a block edge
  const uint32_t lo = block * kTopBlock;
  return top_before_[block] + count_equal(totals_.data() + lo, pos - lo, group_totals_[0]);
}

uint32_t WindowAnswer::group_below(size_t g, uint32_t node) const {
  if (g == 0 && top_in_place_)
    return top_below_position(
        static_cast<uint32_t>(std::lower_bound(feasible_.begin(), feasible_.end(), node) - feasible_.begin()));
  const uint32_t* b = group_nodes_.data() + group_start_[g];
  const uint32_t* e = group_nodes_.data() + group_start_[g + 1];
  return static_cast<uint32_t>(std::lower_bound(b, e, node) - b);
}

uint32_t WindowAnswer::group_rank(size_t g, uint32_t node) const {
  if (g == 0 && top_in_place_) {
    const auto it = std::lower_bound(feasible_.begin(), feasible_.end(), node);
    const auto pos = static_cast<uint32_t>(it - feasible_.begin());
    if (it == feasible_.end() || *it != node || totals_[pos] != group_totals_[0]) return kNone;
    return top_below_position(pos);
  }
  const uint32_t* b = group_nodes_.data() + group_start_[g];
  const uint32_t* e = group_nodes_.data() + group_start_[g + 1];
  const uint32_t* it = std::lower_bound(b, e, node);
  return it != e && *it == node ? static_cast<uint32_t>(it - b) : kNone;
}

uint32_t WindowAnswer::group_node(size_t g, uint32_t m) const {
  if (!(g == 0 && top_in_place_)) return group_nodes_[group_start_[g] + m];
  // The block that holds it by the counts before each, then its entries.
  const auto block =
      static_cast<uint32_t>(std::upper_bound(top_before_.begin(), top_before_.end(), m) - top_before_.begin()) - 1;
  uint32_t rank = m - top_before_[block];
  const int64_t top = group_totals_[0];
  for (uint32_t i = block * kTopBlock;; ++i)
    if (totals_[i] == top && rank-- == 0) return feasible_[i];
}

}  // namespace bulkscore
