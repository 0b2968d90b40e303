// Filter over a list of nodes, plugin by plugin: the CPU backend's loop over
// a chunk of its visiting order, and the batch cache's re-filter of the
// nodes that changed since a state (host only; device kernels run
// filter_node per node).
#pragma once

#include <cstdint>
#include <vector>

#include "plugins/evaluate.hpp"

namespace bulkscore {

// out[i] = start + i for i < n, vectorized for the SIMD target it runs on:
// the positions of a list about to be filtered, a chunk's nodes (as
// baseline SSE2 these fills took 2% of a distinct pod's time at 5,000 nodes).
void fill_iota(uint32_t* out, uint32_t n, uint32_t start);

// The positions filtered and what the loop keeps between calls (reused, so
// that a warm scratch allocates nothing).
struct FilterScratch {
  std::vector<uint32_t> nodes;        // node at each position
  std::vector<NodeVerdict> verdicts;  // [position]: the rejected positions' (see filter_positions)
  std::vector<uint32_t> alive;        // positions still feasible, ascending
  std::vector<uint32_t> alive_nodes;  // node of each alive position (filter_nodes)
  std::vector<uint8_t> fails;         // filter_nodes' answer per alive position
  std::vector<uint8_t> first_fail;    // per alive position: first failing plugin of a filter_nodes run
};

// Filter of every node of `sc.nodes` from the positions `sc.alive` (sized to
// verdicts too): on return `sc.alive` holds the feasible positions,
// ascending. Plugin by plugin: a run of plugins with filter_nodes
// (branch-free column loops) runs over the same alive nodes without
// compacting between them, keeping each position's first failing plugin of
// the run; one compaction after the run gives every failing position the
// verdict of that plugin's filter(), as node-major order would (the first
// rejecting plugin wins), where `reasons` asks for verdicts (else such a
// position is only dropped; a plugin without filter_nodes writes its
// verdicts either way). The Filter plugin `skip` is not run (a caller that
// filters it elsewhere; kNoPlugin: every plugin runs).
void filter_positions(const SnapshotView& s, const PodQueryView& q, FilterScratch& sc, bool reasons,
                      uint8_t skip = kNoPlugin);

// filter_node(...).feasible() of nodes[0..count), into feasible[i] (1 or 0),
// through filter_positions.
void filter_feasible(const SnapshotView& s, const PodQueryView& q, const uint32_t* nodes, uint32_t count,
                     FilterScratch& sc, std::vector<uint8_t>& feasible);

}  // namespace bulkscore
