// A window state in its light form (Engine::look_ahead; docs/batching.md,
// "Windows of pods"). A pod evaluated ahead is answered a few placements
// later; what that needs is far less than a batch-cache state (every score
// list, the statistics with their counts, a tournament tree per group),
// whose building costs more than the evaluation a window saves. Kept here:
// the feasible nodes, the best entries by selection key (whole groups of
// equal totals, a few more than the changes it is meant to absorb), and
// the statistics of each slot that normalizes (its values too where they
// are not all equal). It answers the pod exactly or not at all:
//  * the pod's query, prepared afresh, has the same bytes plugin by plugin
//    (no feasible-set PreScore: that form is not built for such a pod);
//  * the nodes changed since (the snapshot's mutation log, no structural
//    change) are filtered and scored again;
//  * every normalizing slot keeps its min and max (counted: a bound that
//    loses its last node, or a value past it, is a miss);
//  * the best total and its tied nodes are found among the kept entries
//    that did not change (their group is whole) and the changed nodes.
// Otherwise the pod is evaluated afresh. The random tie-break draws with
// the fresh query's sequence number among the tied nodes in index order,
// as every backend does.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "host/engine/backend.hpp"
#include "host/engine/batch_cache.hpp"
#include "host/engine/pod_query.hpp"
#include "host/snapshot/snapshot.hpp"

namespace bulkscore {

class WindowAnswer {
 public:
  // Takes a whole evaluation of `query` (want_totals: the scored nodes,
  // ascending, their totals and the normalizing slots' raw scores) when
  // this form can hold it; the
  // query and the result's lists are then taken (left as they were
  // otherwise). `reach`: how many changed nodes the answer should
  // absorb (the window). False, nothing kept, where it cannot: a
  // feasible-set PreScore, a Score error, fewer than two scored nodes or an
  // order other than ascending (a batch-cache state serves those).
  bool build(const Snapshot& snap, const ProfilePlan& plan, PodQuery& query, EvalResult& result, uint32_t reach);

  // The pod's decision now, for `fresh`, the same pod's query prepared
  // afresh, exactly as a full evaluation would give it; false when that
  // cannot be told from what is kept. One use: the answer is dropped either
  // way. Hits and their work are counted in `counters`.
  bool answer(const Snapshot& snap, const ProfilePlan& plan, const PodQuery& fresh, BatchHit& hit,
              BatchCounters& counters);

  bool valid() const { return valid_; }
  void clear() { valid_ = false; }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  // A normalizing slot's statistics over the scored nodes, and where its
  // values are kept (kNone: every value is `min`, or every one ignored).
  struct Slot {
    ScoreBounds bounds{};
    bool all_ignored = false;
    uint32_t values = kNone;  // offset into values_
  };

  bool valid_ = false;
  const ProfilePlan* plan_ = nullptr;
  PodQuery query_;
  uint64_t structure_version_ = 0;
  size_t log_position_ = 0;
  uint32_t num_nodes_ = 0;
  uint32_t reach_ = 0;
  std::vector<uint32_t> feasible_;  // the scored nodes, ascending
  // The best entries, in whole groups of equal totals, best group first:
  // group g's total and its nodes, ascending,
  // group_nodes_[group_start_[g] .. group_start_[g + 1]).
  std::vector<int64_t> group_totals_;
  std::vector<uint32_t> group_start_, group_nodes_;
  // The best group alone, where it holds enough entries (most often:
  // thousands of alike nodes tie at the top, interleaved with the
  // others), is not gathered: its nodes are the scored nodes whose total
  // (totals_) is group_totals_[0], found through top_before_, how many of
  // them lie before each block of kTopBlock positions. (Gathering them
  // was a sixth of a distinct pod's window evaluation at 5,000 nodes.)
  static constexpr uint32_t kTopBlock = 256;
  bool top_in_place_ = false;
  std::vector<int64_t> totals_;  // by position in feasible_ (top_in_place_)
  std::vector<uint32_t> top_before_;
  // Group g: its size, how many of its nodes are below `node`, its m-th
  // node, and the rank of `node` in it (kNone: not in it).
  uint32_t group_size(size_t g) const { return group_start_[g + 1] - group_start_[g]; }
  uint32_t group_below(size_t g, uint32_t node) const;
  uint32_t group_node(size_t g, uint32_t m) const;
  uint32_t group_rank(size_t g, uint32_t node) const;
  // top_in_place_: the best group's entries at positions below `pos`.
  uint32_t top_below_position(uint32_t pos) const;
  std::vector<Slot> slots_;                        // by score slot; used where the slot normalizes
  std::vector<int64_t> values_;                    // kept values, by position in feasible_

  // Scratch, reused.
  std::vector<std::pair<int64_t, uint32_t>> order_, changed_entries_;
  std::vector<int64_t> top_;  // kth_highest's scratch
  std::vector<uint32_t> changed_, removed_, extra_;
};

}  // namespace bulkscore
