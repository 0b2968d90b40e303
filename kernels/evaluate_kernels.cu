// The CUDA backend's kernels. Every per-node rule and every piece of cycle
// logic comes from plugins/evaluate.hpp (filter_node, run_score,
// for_each_rejection_bin, add_to_stats, weighted_total, selection_key,
// ranks_before): nothing here knows a plugin. Built with -fmad=false so the
// float64 rules round exactly as on the CPU.
//
// One pod, in stream order (enqueue_filter, then enqueue_scoring):
//   1. evaluate_positions: per visiting position, the filter verdict and,
//      when fused, for feasible nodes the raw score of every slot. Without
//      sampling every visited node counts, so the rejection histogram (and,
//      fused, the per-slot min/max) are reduced here too (warp shuffles,
//      shared atomics, then one global atomic per block and bin).
//   2. cub::DeviceSelect::Flagged: feasible positions, in visiting order.
//   3. (sampling only) tally_sampled: the cut after `cap` feasible positions,
//      then the histogram over the visited positions and (fused) min/max
//      over the kept ones.
//   -- not fused (a feasible-set PreScore): the host reads the kept
//      positions back, runs the PreScore and uploads the completed arena;
//   4. (not fused) score_kept: raw scores and min/max of the kept positions.
//   5. score_and_select: normalization, weighted totals and selection keys of
//      the kept nodes, compacted; the best node by block reduction; the last
//      block to finish reduces the block results and writes the Answer.
//   6. (--tie-break random) collect_tied: the kept nodes at the best total
//      and their count; after the answer's sync, a tie of over 1,024 nodes
//      is put in node order (mark_tied, then a compaction over every node:
//      enqueue_rank_tied) for the host to copy back the drawn one.
// The flat pipeline (every node in index order, no list wanted, no
// feasible-set PreScore): 1, then select_every_node in place of 2, 5 and 6:
// two launches per pod, the random tie's draw inside the second.
// DefaultPreemption's dry run is a launch of its own (preemption_dry_run,
// one thread per potential node: plugins/preemption_dry_run.hpp).
// Counts that only the device knows (feasible nodes, the cut) are read from
// device memory by the kernels, so nothing waits on the host in between
// (except around the PreScore, which is host code).
#include <thrust/iterator/counting_iterator.h>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>

#include <climits>

#include "kernels/launch.hpp"

namespace bulkscore {
namespace cuda_detail {
namespace {

constexpr int kBlock = 256;
constexpr unsigned kFullMask = 0xFFFFFFFFu;

using PositionIterator = thrust::counting_iterator<uint32_t>;

#ifndef NDEBUG
// Debug builds: surface a faulting kernel at its launch, not at the next sync.
#define BULKSCORE_DEBUG_SYNC(stream)                      \
  do {                                                    \
    const cudaError_t e_ = cudaStreamSynchronize(stream); \
    if (e_ != cudaSuccess) return e_;                     \
  } while (0)
#else
#define BULKSCORE_DEBUG_SYNC(stream) \
  do {                               \
  } while (0)
#endif

#define BULKSCORE_RETURN_IF_ERROR(call) \
  do {                                  \
    const cudaError_t e_ = (call);      \
    if (e_ != cudaSuccess) return e_;   \
  } while (0)

// How many positions are kept and how many were visited: all of them, or
// the visit cut just after the cap-th feasible position (as the CPU's loop
// breaks there).
struct Counts {
  uint32_t kept;
  uint32_t processed;
};

__device__ __forceinline__ Counts read_counts(const Control* ctrl, const uint32_t* feasible_pos, uint32_t cap,
                                              uint32_t count) {
  const uint32_t found = ctrl->num_selected;
  if (found >= cap) return Counts{cap, feasible_pos[cap - 1] + 1};
  return Counts{found, count};
}

// Per-block accumulators for the rejection histogram and per-slot min/max.
struct BlockTally {
  uint32_t hist[kHistBins];
  long long min[kMaxProfilePlugins];
  long long max[kMaxProfilePlugins];
};

__device__ __forceinline__ void tally_init(BlockTally& t) {
  for (uint32_t i = threadIdx.x; i < kHistBins; i += blockDim.x) t.hist[i] = 0;
  if (threadIdx.x < kMaxProfilePlugins) {
    t.min[threadIdx.x] = LLONG_MAX;
    t.max[threadIdx.x] = LLONG_MIN;
  }
}

__device__ __forceinline__ void tally_rejection(BlockTally& t, const NodeVerdict& v) {
  for_each_rejection_bin(v, [&](uint32_t bin) { atomicAdd(&t.hist[bin], 1u); });
}

// Every lane of the warp must call this (no early returns before it).
// Ignored nodes (kIgnoredScore) stay out, as add_to_stats leaves them.
__device__ __forceinline__ void tally_score(BlockTally& t, uint32_t slot, bool has, int64_t raw) {
  has = has && raw != kIgnoredScore;
  long long mn = has ? static_cast<long long>(raw) : LLONG_MAX;
  long long mx = has ? static_cast<long long>(raw) : LLONG_MIN;
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    mn = min(mn, __shfl_xor_sync(kFullMask, mn, offset));
    mx = max(mx, __shfl_xor_sync(kFullMask, mx, offset));
  }
  if ((threadIdx.x & 31) == 0 && mn <= mx) {
    atomicMin(&t.min[slot], mn);
    atomicMax(&t.max[slot], mx);
  }
}

// After a __syncthreads: adds the block's tallies into the pod's Control.
__device__ __forceinline__ void tally_flush(const BlockTally& t, Control* ctrl, uint32_t num_scores) {
  for (uint32_t i = threadIdx.x; i < kHistBins; i += blockDim.x)
    if (t.hist[i]) atomicAdd(&ctrl->hist[i], t.hist[i]);
  if (threadIdx.x < num_scores && t.min[threadIdx.x] <= t.max[threadIdx.x]) {
    atomicMin(reinterpret_cast<long long*>(&ctrl->stat_min[threadIdx.x]), t.min[threadIdx.x]);
    atomicMax(reinterpret_cast<long long*>(&ctrl->stat_max[threadIdx.x]), t.max[threadIdx.x]);
  }
}

// ptxas (CUDA 13.0, sm_90): with (kBlock) alone it caps this kernel at 64
// registers and spills 24 bytes; asking for 3 resident blocks per SM (at most
// 85 registers) removes the spill (71 registers in the Release build).
// The 128-byte stack frame is BalancedAllocation's per-node fraction array.
constexpr int kEvaluateMinBlocks = 3;

__global__ void __launch_bounds__(kBlock, kEvaluateMinBlocks)
    evaluate_positions(const __grid_constant__ SnapshotView s, const __grid_constant__ PodQueryView q, VisitOrder visit,
                       uint8_t* flags, NodeVerdict* pos_verdicts, int64_t* raw_pos, Control* ctrl, bool tally,
                       bool with_scores) {
  __shared__ BlockTally t;
  if (tally) tally_init(t);
  const uint32_t k = blockIdx.x * kBlock + threadIdx.x;
  const bool valid = k < visit.count;
  bool feasible = false;
  uint32_t node = 0;
  if (tally) __syncthreads();
  if (valid) {
    node = visit.node_at(k);
    const NodeVerdict v = filter_node(s, q, node);
    feasible = v.feasible();
    flags[k] = feasible ? 1 : 0;
    if (pos_verdicts) pos_verdicts[k] = v;
    if (tally && !feasible) tally_rejection(t, v);
  }
  if (with_scores) {
    for (uint32_t slot = 0; slot < q.num_scores; ++slot) {
      int64_t raw = 0;
      if (feasible) {
        raw = run_score(q.scores[slot], s, q, node);
        raw_pos[static_cast<size_t>(slot) * visit.count + k] = raw;
      }
      if (tally && needs_stats(q.normalize[slot])) tally_score(t, slot, feasible, raw);
    }
  }
  if (tally) {
    __syncthreads();
    tally_flush(t, ctrl, with_scores ? q.num_scores : 0);
  }
}

// Sampling: the histogram over the visited positions and (with_stats)
// min/max over the kept ones, once the compaction has located the cut.
__global__ void __launch_bounds__(kBlock)
    tally_sampled(const __grid_constant__ PodQueryView q, uint32_t count, uint32_t cap, const uint8_t* flags,
                  const NodeVerdict* pos_verdicts, const int64_t* raw_pos, const uint32_t* feasible_pos, Control* ctrl,
                  bool with_stats) {
  __shared__ BlockTally t;
  tally_init(t);
  __syncthreads();
  const Counts c = read_counts(ctrl, feasible_pos, cap, count);
  const uint32_t k = blockIdx.x * kBlock + threadIdx.x;
  if (k < c.processed && !flags[k]) tally_rejection(t, pos_verdicts[k]);
  const bool kept = k < c.kept;  // k doubles as an index into the kept list
  const uint32_t pos = kept ? feasible_pos[k] : 0;
  if (with_stats) {
    for (uint32_t slot = 0; slot < q.num_scores; ++slot) {
      if (!needs_stats(q.normalize[slot])) continue;
      const int64_t raw = kept ? raw_pos[static_cast<size_t>(slot) * count + pos] : 0;
      tally_score(t, slot, kept, raw);
    }
  }
  __syncthreads();
  tally_flush(t, ctrl, with_stats ? q.num_scores : 0);
}

// After a feasible-set PreScore: the raw scores of the `kept` first feasible
// positions (known to the host), and their per-slot min/max.
__global__ void __launch_bounds__(kBlock, kEvaluateMinBlocks)
    score_kept(const __grid_constant__ SnapshotView s, const __grid_constant__ PodQueryView q, VisitOrder visit,
               uint32_t kept, const uint32_t* feasible_pos, int64_t* raw_pos, Control* ctrl) {
  __shared__ BlockTally t;
  tally_init(t);
  __syncthreads();
  const uint32_t i = blockIdx.x * kBlock + threadIdx.x;
  const bool valid = i < kept;
  const uint32_t pos = valid ? feasible_pos[i] : 0;
  const uint32_t node = valid ? visit.node_at(pos) : 0;
  for (uint32_t slot = 0; slot < q.num_scores; ++slot) {
    int64_t raw = 0;
    if (valid) {
      raw = run_score(q.scores[slot], s, q, node);
      raw_pos[static_cast<size_t>(slot) * visit.count + pos] = raw;
    }
    if (needs_stats(q.normalize[slot])) tally_score(t, slot, valid, raw);
  }
  __syncthreads();
  tally_flush(t, ctrl, q.num_scores);
}

// ranks_before as a reduction operator (no item: node UINT32_MAX, key 0,
// ranks after every real item since real nodes are lower).
struct Better {
  __device__ __forceinline__ BestItem operator()(const BestItem& a, const BestItem& b) const {
    return ranks_before(b.key, b.node, a.key, a.node) ? b : a;
  }
};

using BestReduce = cub::BlockReduce<BestItem, kBlock>;

__device__ __forceinline__ BestItem no_item() { return BestItem{0, 0, UINT32_MAX, 0}; }

__global__ void __launch_bounds__(kBlock)
    score_and_select(const __grid_constant__ PodQueryView q, VisitOrder visit, uint32_t cap, bool score_single,
                     const int64_t* raw_pos, const uint32_t* feasible_pos, uint64_t* keys, uint32_t* nodes,
                     int64_t* totals, int64_t* raw_c, int64_t* norm_c, BestItem* partials, Control* ctrl) {
  __shared__ typename BestReduce::TempStorage reduce_storage;
  __shared__ bool is_last;
  __shared__ NormStats stats[kMaxProfilePlugins];
  if (threadIdx.x < q.num_scores)
    stats[threadIdx.x] = NormStats{ctrl->stat_min[threadIdx.x], ctrl->stat_max[threadIdx.x]};
  __syncthreads();
  const Counts c = read_counts(ctrl, feasible_pos, cap, visit.count);
  const uint32_t kept = c.kept;
  // Upstream picks a lone feasible node without scoring it.
  const bool scored = kept > 1 || (kept == 1 && score_single);
  BestItem best = no_item();
  for (uint32_t i = blockIdx.x * kBlock + threadIdx.x; i < kept; i += gridDim.x * kBlock) {
    const uint32_t pos = feasible_pos[i];
    const uint32_t node = visit.node_at(pos);
    int64_t total = 0;
    if (scored) {
      const auto raw = [&](uint32_t slot) { return raw_pos[static_cast<size_t>(slot) * visit.count + pos]; };
      total = weighted_total(q, stats, raw, [&](uint32_t slot, int64_t norm) {
        if (raw_c) {
          raw_c[static_cast<size_t>(slot) * kept + i] = raw(slot);
          norm_c[static_cast<size_t>(slot) * kept + i] = norm;
        }
      });
      if (totals) totals[i] = total;
    }
    const uint64_t key = selection_key(total, node, q);
    keys[i] = key;
    nodes[i] = node;
    best = Better()(best, BestItem{key, total, node, 0});
  }
  const BestItem block_best = BestReduce(reduce_storage).Reduce(best, Better());
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = block_best;
    __threadfence();  // the partial is visible before the ticket is taken
    is_last = atomicAdd(&ctrl->blocks_done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last) return;

  // The last block: every partial is written and fenced.
  __threadfence();
  BestItem b = no_item();
  for (uint32_t j = threadIdx.x; j < gridDim.x; j += kBlock) {
    const volatile BestItem* p = partials + j;
    b = Better()(b, BestItem{p->key, p->total, p->node, 0});
  }
  __syncthreads();  // reduce_storage is reused
  const BestItem all = BestReduce(reduce_storage).Reduce(b, Better());
  if (threadIdx.x == 0) {
    Answer a;
    a.num_feasible = kept;
    a.processed = c.processed;
    a.chosen = kept ? static_cast<int32_t>(all.node) : -1;
    a.scored = scored ? 1u : 0u;
    a.chosen_total = kept ? all.total : 0;
    a.best_key = kept ? all.key : 0;
    ctrl->answer = a;
  }
}

// The nodes tied with the chosen one at the best total (the keys' high
// halves, as the selection compared them). Grid-stride over the kept list,
// whose length only the device knows (the Answer, written by
// score_and_select before this kernel in stream order).
__global__ void __launch_bounds__(kBlock)
    collect_tied(const uint64_t* keys, const uint32_t* nodes, uint32_t* tied, Control* ctrl) {
  const uint32_t kept = ctrl->answer.num_feasible;
  const uint64_t best = ctrl->answer.best_key >> 32;
  for (uint32_t i = blockIdx.x * kBlock + threadIdx.x; i < kept; i += gridDim.x * kBlock)
    if ((keys[i] >> 32) == best) tied[atomicAdd(&ctrl->num_tied, 1u)] = nodes[i];
}

using CountReduce = cub::BlockReduce<uint32_t, kBlock>;
using CountScan = cub::BlockScan<uint32_t, kBlock>;

// Block `block`'s positions in select_every_node: [begin, end), contiguous,
// so that blocks in order hold the nodes in ascending index.
struct Range {
  uint32_t begin, end;
};
__device__ __forceinline__ Range block_range(uint32_t count, uint32_t block) {
  const uint64_t per = (static_cast<uint64_t>(count) + gridDim.x - 1) / gridDim.x;
  const uint64_t begin = min(static_cast<uint64_t>(count), block * per);
  return Range{static_cast<uint32_t>(begin), static_cast<uint32_t>(min(static_cast<uint64_t>(count), begin + per))};
}

// The flat pipeline's selection (enqueue_select_every_node). Positions are
// nodes. Every thread of a block takes part in every collective below.
__global__ void __launch_bounds__(kBlock)
    select_every_node(const __grid_constant__ PodQueryView q, uint32_t count, bool score_single, const uint8_t* flags,
                      const int64_t* raw_pos, uint64_t* keys, FlatPartial* partials, Control* ctrl,
                      uint8_t* mapped_back) {
  __shared__ typename BestReduce::TempStorage best_storage;
  __shared__ typename CountReduce::TempStorage count_storage;
  __shared__ typename CountScan::TempStorage scan_storage;
  __shared__ NormStats stats[kMaxProfilePlugins];
  __shared__ BestItem best_of;  // the block's, then (last block) the pod's
  __shared__ uint32_t feasible_of, tied_of, tie_block, tie_rank_in_block, chosen;
  __shared__ bool tie_found;
  __shared__ bool is_last;
  const bool random = q.tie_break == TieBreak::Random;
  if (threadIdx.x < q.num_scores)
    stats[threadIdx.x] = NormStats{ctrl->stat_min[threadIdx.x], ctrl->stat_max[threadIdx.x]};
  __syncthreads();

  const Range r = block_range(count, blockIdx.x);
  BestItem best = no_item();
  uint32_t feasible = 0;
  for (uint32_t k = r.begin + threadIdx.x; k < r.end; k += kBlock) {
    if (!flags[k]) continue;
    ++feasible;
    const auto raw = [&](uint32_t slot) { return raw_pos[static_cast<size_t>(slot) * count + k]; };
    const int64_t total = weighted_total(q, stats, raw, [](uint32_t, int64_t) {});
    const uint64_t key = selection_key(total, k, q);
    if (random) keys[k] = key;
    best = Better()(best, BestItem{key, total, k, 0});
  }
  const BestItem block_best = BestReduce(best_storage).Reduce(best, Better());
  const uint32_t block_feasible = CountReduce(count_storage).Sum(feasible);
  if (threadIdx.x == 0) best_of = block_best;
  __syncthreads();
  // The block's nodes at its best total (written by this block's threads).
  uint32_t tied = 0;
  if (random && best_of.node != UINT32_MAX) {
    const uint64_t at = best_of.key >> 32;
    for (uint32_t k = r.begin + threadIdx.x; k < r.end; k += kBlock)
      if (flags[k] && (keys[k] >> 32) == at) ++tied;
  }
  const uint32_t block_tied = CountReduce(count_storage).Sum(tied);
  __threadfence();  // every thread's keys, then the partial, visible before the ticket
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = FlatPartial{best_of.key, best_of.total, best_of.node, block_feasible, block_tied, 0};
    __threadfence();
    is_last = atomicAdd(&ctrl->blocks_done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last) return;

  // The last block: every partial and key is written and fenced.
  __threadfence();
  BestItem b = no_item();
  uint32_t kept = 0;
  for (uint32_t j = threadIdx.x; j < gridDim.x; j += kBlock) {
    const volatile FlatPartial* p = partials + j;
    b = Better()(b, BestItem{p->key, p->total, p->node, 0});
    kept += p->feasible;
  }
  const BestItem all = BestReduce(best_storage).Reduce(b, Better());
  const uint32_t all_kept = CountReduce(count_storage).Sum(kept);
  if (threadIdx.x == 0) {
    best_of = all;
    feasible_of = all_kept;
    chosen = all.node;
    tie_found = true;  // no draw, or (below) the drawn node found
  }
  __syncthreads();
  const uint64_t best_hi = best_of.key >> 32;
  // Upstream picks a lone feasible node without scoring it.
  const bool scored = feasible_of > 1 || (feasible_of == 1 && score_single);
  // Block j's nodes at the pod's best total: its tie, where its best is the pod's.
  const auto tied_in = [&](uint32_t j) -> uint32_t {
    const volatile FlatPartial* p = partials + j;
    return p->node != UINT32_MAX && (p->key >> 32) == best_hi ? p->tied : 0;
  };
  if (random && scored) {
    uint32_t t = 0;
    for (uint32_t j = threadIdx.x; j < gridDim.x; j += kBlock) t += tied_in(j);
    const uint32_t all_tied = CountReduce(count_storage).Sum(t);
    if (threadIdx.x == 0) {
      tied_of = all_tied;
      tie_block = 0;
      tie_rank_in_block = UINT32_MAX;  // found below, unless the counts disagree
      tie_found = all_tied <= 1;
    }
    __syncthreads();
    if (tied_of > 1) {
      const uint64_t rank = scale_draw(tie_draw(q), tied_of);
      // The block holding the tied node of that rank (blocks in node order)...
      uint32_t base = 0;
      for (uint32_t j0 = 0; j0 < gridDim.x; j0 += kBlock) {
        const uint32_t j = j0 + threadIdx.x;
        const uint32_t c = j < gridDim.x ? tied_in(j) : 0;
        uint32_t before = 0, tile = 0;
        CountScan(scan_storage).ExclusiveSum(c, before, tile);
        if (c && rank >= base + before && rank < base + before + c) {
          tie_block = j;
          tie_rank_in_block = static_cast<uint32_t>(rank - base - before);
        }
        base += tile;
        __syncthreads();  // scan_storage is reused
      }
      // ... and the node within its range.
      const Range in = block_range(count, tie_block);
      base = 0;
      for (uint32_t k0 = in.begin; k0 < in.end; k0 += kBlock) {
        const uint32_t k = k0 + threadIdx.x;
        // Another block's keys: read through L2 (as its partial was).
        const uint32_t c =
            (k < in.end && flags[k] && (__ldcg(reinterpret_cast<const unsigned long long*>(keys + k)) >> 32) == best_hi)
                ? 1u
                : 0u;
        uint32_t before = 0, tile = 0;
        CountScan(scan_storage).ExclusiveSum(c, before, tile);
        if (c && base + before == tie_rank_in_block) {
          chosen = k;
          tie_found = true;
        }
        base += tile;
        __syncthreads();
      }
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const uint32_t n = feasible_of;
    Answer a;
    a.num_feasible = n;
    a.processed = count;
    a.chosen = n ? static_cast<int32_t>(chosen) : -1;
    a.scored = scored ? 1u : 0u;
    a.chosen_total = scored ? best_of.total : 0;
    a.best_key = !n ? 0 : scored ? best_of.key : selection_key(0, chosen, q);
    ctrl->answer = a;
    ctrl->num_tied = random && scored ? tied_of : 0;
    ctrl->num_ranked = tie_found ? 0 : kTieNotFound;  // the host reports a draw that found no node
  }
  if (!mapped_back) return;
  // The answer, the histogram (evaluate_positions') and the tie count
  // straight into the host's pinned buffer: no copy back to enqueue.
  __syncthreads();
  constexpr uint32_t kWords = (sizeof(Control) - offsetof(Control, answer)) / sizeof(uint32_t);
  const auto* from = reinterpret_cast<const uint32_t*>(&ctrl->answer);
  auto* to = reinterpret_cast<uint32_t*>(mapped_back);
  for (uint32_t i = threadIdx.x; i < kWords; i += kBlock) to[i] = from[i];
}

__global__ void __launch_bounds__(kBlock) mark_tied(const uint32_t* tied, uint32_t num_tied, uint8_t* node_flags) {
  const uint32_t i = blockIdx.x * kBlock + threadIdx.x;
  if (i < num_tied) node_flags[tied[i]] = 1;
}

// The mirror's scatter: one block per segment, whatever the column. Elements
// whose size is a multiple of 4 move as 32-bit words (the destination and
// the staging runs are 4-byte aligned then), others byte by byte.
__global__ void apply_node_updates(const uint8_t* staging) {
  const ScatterSegment seg = reinterpret_cast<const ScatterSegment*>(staging)[blockIdx.x];
  const uint8_t* src = staging + seg.src;
  uint8_t* dst = reinterpret_cast<uint8_t*>(seg.dst);
  if (seg.element_bytes % 4 == 0) {
    const uint32_t words = seg.element_bytes / 4;
    const uint64_t total = static_cast<uint64_t>(seg.count) * words;
    for (uint64_t i = threadIdx.x; i < total; i += blockDim.x) {
      const uint64_t e = i / words, w = i % words;
      reinterpret_cast<uint32_t*>(dst + e * seg.dst_stride)[w] = reinterpret_cast<const uint32_t*>(src)[i];
    }
  } else {
    const uint64_t total = static_cast<uint64_t>(seg.count) * seg.element_bytes;
    for (uint64_t i = threadIdx.x; i < total; i += blockDim.x) {
      const uint64_t e = i / seg.element_bytes, b = i % seg.element_bytes;
      dst[e * seg.dst_stride + b] = src[i];
    }
  }
}

// DefaultPreemption's dry run: one thread per potential node, the whole of
// SelectVictimsOnNode's Filter-and-reprieve loop in dry_run_node (shared
// with the CPU). Threads diverge with their nodes' victim counts; the loop
// is a handful of Filter calls per victim, far below a launch's cost. The
// launch's views are read in place (__grid_constant__): dry_run_node takes
// them by reference, which would otherwise copy them to local memory.
// ptxas (CUDA 13, sm_90, Release): (kBlock) alone caps it at 32 registers
// and spills 162 bytes; kEvaluateMinBlocks' bound gives 80, no spill.
__global__ void __launch_bounds__(kBlock, kEvaluateMinBlocks) preemption_dry_run(const __grid_constant__ DryRunLaunch l) {
  const uint32_t i = blockIdx.x * kBlock + threadIdx.x;
  if (i >= l.count) return;
  const uint32_t at = l.offsets[i];
  l.results[i] = dry_run_node_batched(l.base, l.patched, l.cols, l.query, l.nodes[i], l.victims + at,
                                      l.offsets[i + 1] - at, l.requests, l.removed + at,
                                      l.table_total ? l.taken + static_cast<size_t>(at) * l.table_total : nullptr,
                                      l.table_total, l.table_slot_at);
}

uint32_t blocks_for(uint32_t items) { return (items + kBlock - 1) / kBlock; }

}  // namespace

cudaError_t probe_kernel_image() {
  cudaFuncAttributes attr;
  return cudaFuncGetAttributes(&attr, evaluate_positions);
}

cudaError_t select_temp_bytes(uint32_t num_items, size_t& bytes) {
  bytes = 0;
  return cub::DeviceSelect::Flagged(nullptr, bytes, PositionIterator(0), static_cast<const uint8_t*>(nullptr),
                                    static_cast<uint32_t*>(nullptr), static_cast<uint32_t*>(nullptr),
                                    static_cast<int64_t>(num_items));
}

cudaError_t sort_temp_bytes(uint32_t num_items, size_t& bytes) {
  bytes = 0;
  return cub::DeviceRadixSort::SortPairsDescending(
      nullptr, bytes, static_cast<const uint64_t*>(nullptr), static_cast<uint64_t*>(nullptr),
      static_cast<const uint32_t*>(nullptr), static_cast<uint32_t*>(nullptr), static_cast<int64_t>(num_items));
}

cudaError_t enqueue_filter(const PodLaunch& p, const WorkBuffers& w, cudaStream_t stream) {
  const uint32_t count = p.visit.count;
  if (count == 0) return cudaSuccess;
  const uint32_t grid = blocks_for(count);

  evaluate_positions<<<grid, kBlock, 0, stream>>>(p.snap, p.query, p.visit, w.flags, w.pos_verdicts, w.raw_pos, w.ctrl,
                                                  !p.sampling, p.fused);
  BULKSCORE_RETURN_IF_ERROR(cudaGetLastError());
  BULKSCORE_DEBUG_SYNC(stream);

  if (!p.compact) return cudaSuccess;
  size_t temp_bytes = w.temp_bytes;
  BULKSCORE_RETURN_IF_ERROR(cub::DeviceSelect::Flagged(w.temp, temp_bytes, PositionIterator(0),
                                                       static_cast<const uint8_t*>(w.flags), w.feasible_pos,
                                                       &w.ctrl->num_selected, static_cast<int64_t>(count), stream));
  BULKSCORE_DEBUG_SYNC(stream);

  if (p.sampling) {
    tally_sampled<<<grid, kBlock, 0, stream>>>(p.query, count, p.cap, w.flags, w.pos_verdicts, w.raw_pos,
                                               w.feasible_pos, w.ctrl, p.fused);
    BULKSCORE_RETURN_IF_ERROR(cudaGetLastError());
    BULKSCORE_DEBUG_SYNC(stream);
  }
  return cudaSuccess;
}

cudaError_t enqueue_scoring(const PodLaunch& p, const WorkBuffers& w, uint32_t to_score, cudaStream_t stream) {
  if (p.visit.count == 0) return cudaSuccess;
  if (!p.fused && to_score > 0 && p.query.num_scores > 0) {
    score_kept<<<blocks_for(to_score), kBlock, 0, stream>>>(p.snap, p.query, p.visit, to_score, w.feasible_pos,
                                                            w.raw_pos, w.ctrl);
    BULKSCORE_RETURN_IF_ERROR(cudaGetLastError());
    BULKSCORE_DEBUG_SYNC(stream);
  }
  score_and_select<<<p.select_blocks, kBlock, 0, stream>>>(p.query, p.visit, p.cap, p.score_single, w.raw_pos,
                                                           w.feasible_pos, w.keys, w.nodes, w.totals, w.raw_c, w.norm_c,
                                                           w.partials, w.ctrl);
  BULKSCORE_RETURN_IF_ERROR(cudaGetLastError());
  BULKSCORE_DEBUG_SYNC(stream);
  return cudaSuccess;
}

cudaError_t enqueue_select_every_node(const PodLaunch& p, const WorkBuffers& w, cudaStream_t stream) {
  if (p.visit.count == 0) return cudaSuccess;
  select_every_node<<<p.select_blocks, kBlock, 0, stream>>>(p.query, p.visit.count, p.score_single, w.flags, w.raw_pos,
                                                            w.keys, w.flat_partials, w.ctrl, w.mapped_back);
  BULKSCORE_RETURN_IF_ERROR(cudaGetLastError());
  BULKSCORE_DEBUG_SYNC(stream);
  return cudaSuccess;
}

cudaError_t enqueue_collect_tied(const PodLaunch& p, const WorkBuffers& w, cudaStream_t stream) {
  if (p.visit.count == 0) return cudaSuccess;
  collect_tied<<<p.select_blocks, kBlock, 0, stream>>>(w.keys, w.nodes, w.tied, w.ctrl);
  BULKSCORE_RETURN_IF_ERROR(cudaGetLastError());
  BULKSCORE_DEBUG_SYNC(stream);
  return cudaSuccess;
}

cudaError_t enqueue_rank_tied(const WorkBuffers& w, uint32_t num_tied, uint8_t* node_flags, uint32_t num_nodes,
                              uint32_t* ranked, cudaStream_t stream) {
  if (num_tied == 0) return cudaSuccess;
  BULKSCORE_RETURN_IF_ERROR(cudaMemsetAsync(node_flags, 0, num_nodes, stream));
  mark_tied<<<blocks_for(num_tied), kBlock, 0, stream>>>(w.tied, num_tied, node_flags);
  BULKSCORE_RETURN_IF_ERROR(cudaGetLastError());
  BULKSCORE_DEBUG_SYNC(stream);
  size_t temp_bytes = w.temp_bytes;
  BULKSCORE_RETURN_IF_ERROR(cub::DeviceSelect::Flagged(w.temp, temp_bytes, PositionIterator(0),
                                                       static_cast<const uint8_t*>(node_flags), ranked,
                                                       &w.ctrl->num_ranked, static_cast<int64_t>(num_nodes), stream));
  BULKSCORE_DEBUG_SYNC(stream);
  return cudaSuccess;
}

cudaError_t enqueue_sort_descending(const uint64_t* keys_in, const uint32_t* nodes_in, uint64_t* keys_out,
                                    uint32_t* nodes_out, uint32_t num_items, int end_bit, void* temp, size_t temp_bytes,
                                    cudaStream_t stream) {
  BULKSCORE_RETURN_IF_ERROR(cub::DeviceRadixSort::SortPairsDescending(
      temp, temp_bytes, keys_in, keys_out, nodes_in, nodes_out, static_cast<int64_t>(num_items), 0, end_bit, stream));
  BULKSCORE_DEBUG_SYNC(stream);
  return cudaSuccess;
}

cudaError_t enqueue_preemption_dry_run(const DryRunLaunch& l, cudaStream_t stream) {
  if (l.count == 0) return cudaSuccess;
  preemption_dry_run<<<blocks_for(l.count), kBlock, 0, stream>>>(l);
  BULKSCORE_RETURN_IF_ERROR(cudaGetLastError());
  BULKSCORE_DEBUG_SYNC(stream);
  return cudaSuccess;
}

cudaError_t enqueue_node_updates(const uint8_t* staging, uint32_t num_segments, cudaStream_t stream) {
  if (num_segments == 0) return cudaSuccess;
  apply_node_updates<<<num_segments, 64, 0, stream>>>(staging);
  BULKSCORE_RETURN_IF_ERROR(cudaGetLastError());
  BULKSCORE_DEBUG_SYNC(stream);
  return cudaSuccess;
}

}  // namespace cuda_detail
}  // namespace bulkscore
