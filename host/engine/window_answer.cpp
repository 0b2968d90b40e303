#include "host/engine/window_answer.hpp"

#include <algorithm>
#include <array>

#include "plugins/evaluate.hpp"

namespace bulkscore {
namespace {

// Selection order: the higher total first, the lower node among equals
// (ranks_before's order of selection keys).
bool ranks_first(const std::pair<int64_t, uint32_t>& a, const std::pair<int64_t, uint32_t>& b) {
  return a.first != b.first ? a.first > b.first : a.second < b.second;
}

}  // namespace

bool WindowAnswer::build(const Snapshot& snap, const ProfilePlan& plan, PodQuery& query, EvalResult& result,
                         uint32_t reach) {
  valid_ = false;
  const auto F = static_cast<uint32_t>(result.scored_nodes.size());
  const PodQueryView& h = query.header;
  uint32_t stat_slots = 0;
  for (uint32_t slot = 0; slot < h.num_scores; ++slot) stat_slots += needs_stats(h.normalize[slot]) ? 1 : 0;
  if (!result.scored || F < 2 || h.prescore_feasible || !query.score_error.empty() || result.totals.size() != F ||
      result.stat_scores.size() != static_cast<size_t>(stat_slots) * F)
    return false;
  if (std::adjacent_find(result.scored_nodes.begin(), result.scored_nodes.end(), std::greater_equal<uint32_t>()) !=
      result.scored_nodes.end())
    return false;

  // The best entries: at least reach + 1 of them (so that some survive
  // `reach` changed nodes), extended to whole groups of equal totals, best
  // first and each group in node order (the scored nodes ascend). Mostly
  // the nodes at the highest total are enough (a cluster of alike nodes
  // ties there by the thousand): two passes; else a selection.
  const uint32_t want = std::min(F, reach + 1);
  const int64_t* totals = result.totals.data();
  int64_t highest = INT64_MIN;
  for (uint32_t i = 0; i < F; ++i) highest = std::max(highest, totals[i]);
  uint32_t at_highest = 0;
  for (uint32_t i = 0; i < F; ++i) at_highest += totals[i] == highest;
  int64_t floor_total = highest;
  if (at_highest < want) {
    order_.resize(F);
    for (uint32_t i = 0; i < F; ++i) order_[i] = {totals[i], result.scored_nodes[i]};
    std::nth_element(order_.begin(), order_.begin() + (want - 1), order_.end(), ranks_first);
    floor_total = order_[want - 1].first;
  }
  top_.clear();
  for (uint32_t i = 0; i < F; ++i)
    if (totals[i] >= floor_total) top_.emplace_back(totals[i], result.scored_nodes[i]);
  if (floor_total != highest)
    std::stable_sort(top_.begin(), top_.end(), [](const auto& a, const auto& b) { return a.first > b.first; });

  // Each normalizing slot's bounds; its values where they differ.
  slots_.assign(h.num_scores, Slot{});
  values_.clear();
  for (uint32_t slot = 0, k = 0; slot < h.num_scores; ++slot) {
    if (!needs_stats(h.normalize[slot])) continue;
    const int64_t* raw = result.stat_scores.data() + static_cast<size_t>(k++) * F;
    Slot& sl = slots_[slot];
    sl.bounds = score_bounds(raw, F);
    sl.all_ignored = sl.bounds.max == kIgnoredScore;
    if (sl.all_ignored || (sl.bounds.min == sl.bounds.max && sl.bounds.at_min == F)) continue;
    sl.values = static_cast<uint32_t>(values_.size());
    values_.insert(values_.end(), raw, raw + F);
  }

  feasible_.swap(result.scored_nodes);
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

  // The best unchanged entry: the first kept one whose node did not change
  // (its group of equal totals is whole in top_, and every entry not kept
  // ranks below it).
  int64_t best = INT64_MIN;
  bool found = false;
  for (const auto& e : top_)
    if (!std::binary_search(changed_.begin(), changed_.end(), e.second)) {
      best = e.first;
      found = true;
      break;
    }
  if (!found) return false;
  for (const auto& e : changed_entries_) best = std::max(best, e.first);
  // The tied nodes in index order: the kept group's (in node order) that
  // did not change, merged with the changed ones at that total.
  tied_nodes_.clear();
  for (const auto& e : top_)
    if (e.first == best && !std::binary_search(changed_.begin(), changed_.end(), e.second)) tied_nodes_.push_back(e.second);
  const auto kept = static_cast<std::ptrdiff_t>(tied_nodes_.size());
  for (const auto& e : changed_entries_)  // ascending: changed_ is
    if (e.first == best) tied_nodes_.push_back(e.second);
  std::inplace_merge(tied_nodes_.begin(), tied_nodes_.begin() + kept, tied_nodes_.end());
  hit.chosen = static_cast<int32_t>(tied_nodes_[static_cast<size_t>(tie_rank(tied_nodes_.size(), v))]);
  hit.chosen_total = best;
  hit.num_feasible = static_cast<uint32_t>(feasible);
  ++counters.hint_used;
  ++counters.window_hits;
  ++counters.window_light_hits;
  counters.refiltered_nodes += changed_.size();
  counters.rescored_nodes += changed_entries_.size() * v.num_scores;
  if (v.tie_break == TieBreak::Random && tied_nodes_.size() > 1) counters.tied_nodes += tied_nodes_.size();
  return true;
}

}  // namespace bulkscore
