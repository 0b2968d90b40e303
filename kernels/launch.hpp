// What the CUDA backend's host code (cuda_backend.cpp, g++) and its kernels
// (evaluate_kernels.cu, nvcc) share: plain structs of device pointers passed
// by value, and the enqueue functions. Compiles with g++; every function
// declared here only enqueues work on `stream` and returns the first CUDA
// error, synchronizing nothing (except after each launch in debug builds).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "plugins/evaluate.hpp"
#include "plugins/preemption_dry_run.hpp"

namespace bulkscore {
namespace cuda_detail {

constexpr uint32_t kHistBins = kRejectionBins;  // RejectionHistogram layout: [plugin * 64 + bit]

// The per-pod answer, computed on the device and copied back in one piece
// together with the rejection histogram that follows it in Control.
struct Answer {
  uint32_t num_feasible;
  uint32_t processed;
  int32_t chosen;
  uint32_t scored;
  int64_t chosen_total;
  uint64_t best_key;  // the largest selection key (bounds the radix sort's bits)
};

// Per-pod device scratch with a fixed size. Re-initialized for every pod by
// the same host-to-device copy that uploads the pod query.
struct Control {
  uint32_t num_selected;  // feasible positions found by the compaction
  uint32_t blocks_done;   // last-block ticket of the selection kernel
  int64_t stat_min[kMaxProfilePlugins];
  int64_t stat_max[kMaxProfilePlugins];
  // Copied back as one block: the answer, the histogram, the tie count.
  Answer answer;
  uint32_t hist[kHistBins];
  uint32_t num_tied;  // random tie-break: nodes whose total equals the best (enqueue_collect_tied, select_every_node)
  // The same nodes, counted again by enqueue_rank_tied's compaction; the
  // flat pipeline's kTieNotFound when its draw found no node.
  uint32_t num_ranked;
};

// Control::num_ranked from select_every_node when the drawn rank matched no
// node (its per-block and per-node tie counts disagreed): a device error.
constexpr uint32_t kTieNotFound = 0xFFFFFFFFu;

// One block's best node by ranks_before.
struct BestItem {
  uint64_t key;
  int64_t total;
  uint32_t node;  // UINT32_MAX: none
  uint32_t pad;
};

// One block's part of select_every_node: its best node, how many of its
// positions are feasible and how many of those share its best total.
struct FlatPartial {
  uint64_t key;
  int64_t total;
  uint32_t node;  // UINT32_MAX: no feasible position in the block
  uint32_t feasible;
  uint32_t tied;  // --tie-break random only (0 otherwise)
  uint32_t pad;
};

// One pod's evaluation, as the kernels see it.
struct PodLaunch {
  SnapshotView snap;          // device pointers
  PodQueryView query;         // arena: device pointer
  VisitOrder visit;           // order: device pointer
  uint32_t cap = UINT32_MAX;  // feasible positions to find; UINT32_MAX: all
  bool sampling = false;      // cut the visit after `cap` feasible positions
  // Raw scores are computed in the filter pass (fused). False when a
  // feasible-set PreScore must run first: enqueue_filter stops after the
  // compaction, the host runs the PreScore, enqueue_scoring scores.
  bool fused = true;
  bool score_single = false;
  bool want_scores = false;
  // False: every node visited in index order, no list wanted, no PreScore
  // between (the flat pipeline): enqueue_filter leaves out the compaction
  // and enqueue_select_every_node selects straight from the flags.
  bool compact = true;
  uint32_t select_blocks = 1;  // grid of the selection kernel
};

// Device arrays of one evaluation, sized for `visit.count` positions (raw
// arrays: num_scores * count). Optional ones are nullptr when not wanted.
struct WorkBuffers {
  Control* ctrl = nullptr;
  uint8_t* flags = nullptr;             // [count] feasible per position
  NodeVerdict* pos_verdicts = nullptr;  // [count] verdict per position (sampling or want_verdicts)
  int64_t* raw_pos = nullptr;           // [slot * count + k] raw scores of feasible positions
  uint32_t* feasible_pos = nullptr;     // [count] feasible positions in visiting order
  uint64_t* keys = nullptr;             // [F] selection keys, compacted
  uint32_t* nodes = nullptr;            // [F] node indices, compacted
  int64_t* totals = nullptr;            // [F] (want_scores)
  int64_t* raw_c = nullptr;             // [slot * F + i] (want_scores)
  int64_t* norm_c = nullptr;            // [slot * F + i] (want_scores)
  uint32_t* tied = nullptr;             // [F] nodes tied at the best total, any order (random tie-break)
  // Not compact: the host's pinned buffer for [Answer | hist | num_tied ..]
  // (Control from `answer` on), as the device addresses it; the selection
  // writes it there, no copy back enqueued. nullptr: copied back.
  uint8_t* mapped_back = nullptr;
  BestItem* partials = nullptr;         // [select_blocks] (compact)
  FlatPartial* flat_partials = nullptr; // [select_blocks] (not compact; the same memory)
  void* temp = nullptr;                 // CUB temporary storage
  size_t temp_bytes = 0;
};

// One run of elements the device mirror re-sends (MirrorSync::Range, placed):
// `count` elements of `element_bytes` each, packed at byte `src` of the
// staging buffer, written to device address `dst`, `dst_stride` bytes apart.
// The staging buffer starts with the segments, the packed elements follow
// (each run 8-byte aligned). Element sizes are 1, 4, 8 or 12 bytes.
struct ScatterSegment {
  uint64_t dst;
  uint64_t dst_stride;
  uint64_t src;
  uint32_t count;
  uint32_t element_bytes;
};

// cudaSuccess when this build's kernels can run on the current device (the
// error otherwise, e.g. cudaErrorNoKernelImageForDevice on a pre-Hopper GPU
// when only sm_90 code and compute_90 PTX were built).
cudaError_t probe_kernel_image();

// CUB temporary storage needed for `num_items` items.
cudaError_t select_temp_bytes(uint32_t num_items, size_t& bytes);
cudaError_t sort_temp_bytes(uint32_t num_items, size_t& bytes);

// Filter (and, when p.fused, raw scores), compaction of the feasible
// positions into w.feasible_pos (count in w.ctrl->num_selected) and, when
// sampling, the histogram over the visited positions. `w.ctrl` must hold a
// fresh Control.
cudaError_t enqueue_filter(const PodLaunch& p, const WorkBuffers& w, cudaStream_t stream);

// After enqueue_filter: (unless p.fused) the raw scores of the first
// `to_score` feasible positions and their statistics, then normalization,
// totals and the selection into the Answer. `to_score` is only read when
// !p.fused: the host knows it then (it ran the PreScore over those nodes),
// and it is 0 when nothing is scored.
cudaError_t enqueue_scoring(const PodLaunch& p, const WorkBuffers& w, uint32_t to_score, cudaStream_t stream);

// The flat pipeline's selection (p.compact false), after enqueue_filter:
// normalization, weighted totals and the best node straight from the
// positions' flags and raw scores (positions are nodes), each block over a
// contiguous range of nodes; the last block to finish writes the Answer,
// with --tie-break random's draw made there: the tied nodes counted per
// block, the one of rank scale_draw(tie_draw(q), tied) found by a scan over
// the blocks in node order and then over its block's range. w.keys holds
// the positions' keys (random tie-break only); w.ctrl->num_tied the tie.
cudaError_t enqueue_select_every_node(const PodLaunch& p, const WorkBuffers& w, cudaStream_t stream);

// After enqueue_scoring, for the random tie-break: the nodes whose
// selection key has the best key's total (its high half) into w.tied, their
// number into w.ctrl->num_tied. In no particular order: the draw among them
// (pick_tied) depends on the set alone. Copying back only these, not every
// key and node, keeps a 100,000-node pass from moving megabytes to the host.
cudaError_t enqueue_collect_tied(const PodLaunch& p, const WorkBuffers& w, cudaStream_t stream);

// A large tie (w.tied holds `num_tied` nodes, any order): the same nodes in
// ascending index into `ranked` (node_flags: `num_nodes` bytes of scratch),
// so the host copies back only the one of the rank it drew rather than
// every tied node. `temp` must hold a compaction of `num_nodes` items.
cudaError_t enqueue_rank_tied(const WorkBuffers& w, uint32_t num_tied, uint8_t* node_flags, uint32_t num_nodes,
                              uint32_t* ranked, cudaStream_t stream);

// Sorts `num_items` (key, node) pairs by descending key, stably, looking at
// key bits [0, end_bit).
cudaError_t enqueue_sort_descending(const uint64_t* keys_in, const uint32_t* nodes_in, uint64_t* keys_out,
                                    uint32_t* nodes_out, uint32_t num_items, int end_bit, void* temp, size_t temp_bytes,
                                    cudaStream_t stream);

// DefaultPreemption's bulk dry run (plugins/preemption_dry_run.hpp), as the
// kernel sees it: node i of `count` is nodes[i], its victims
// victims[offsets[i] .. offsets[i + 1]) (MoreImportantPod order, the PDB
// split done on the host), their requests in `requests`. `cols` are device
// copies of the four columns dry_run_node patches and `patched` the
// mirror's view reading them; one copy serves every thread, as each writes
// and reads only its node's row. Per node a DryRunNodeResult, per victim a
// byte of `removed` (1: evicted).
struct DryRunLaunch {
  SnapshotView base;     // the mirror
  SnapshotView patched;  // the mirror, reading `cols`
  DryRunColumns cols;
  PodQueryView query;  // arena: device pointer
  const uint32_t* nodes;
  const uint32_t* offsets;  // [count + 1]
  const DryRunVictim* victims;
  const DryRunRequest* requests;
  uint8_t* removed;
  DryRunNodeResult* results;
  const int64_t* taken;  // [victim][table_total]: DryRunBatch::taken (null when table_total is 0)
  uint32_t table_slot_at[kMaxProfilePlugins];
  uint32_t table_total;
  uint32_t count;
};

// One thread per node: dry_run_node.
cudaError_t enqueue_preemption_dry_run(const DryRunLaunch& l, cudaStream_t stream);

// Applies `num_segments` segments (see ScatterSegment) from the device
// staging buffer `staging`, which starts with them.
cudaError_t enqueue_node_updates(const uint8_t* staging, uint32_t num_segments, cudaStream_t stream);

}  // namespace cuda_detail
}  // namespace bulkscore
