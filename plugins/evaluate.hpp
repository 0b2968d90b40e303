// The scheduling cycle's per-node logic, written once for every backend: the
// visiting order, Filter (plugins in profile order, stopping at the first
// rejection, as upstream), each score plugin's raw score, the rejection
// histogram's bins, normalization statistics, the weighted total and the one
// total order that picks a node. The CPU backend loops over nodes calling
// these, the CUDA kernels call them per thread, the reference backend in the
// tests calls them node by node. No backend names a plugin: dispatch goes
// through visit_plugin (plugins/registry.hpp).
//
// The cycle, as upstream runs it: PreFilter (host, per pod) -> Filter (every
// candidate node) -> PreScore over the feasible nodes (host, only for the
// plugins that need the feasible set; see PodQueryView::prescore_feasible)
// -> Score -> NormalizeScore -> weights -> select.
#pragma once

#include "plugins/registry.hpp"

namespace bulkscore {

constexpr uint32_t kMaxProfilePlugins = 16;

enum class TieBreak : uint8_t { Random = 0, First = 1 };

// The per-pod query: plugin states plus the profile's active plugin lists for
// this pod (PreFilter/PreScore Skips already removed). Trivially copyable;
// `arena` points at host or device memory.
struct PodQueryView {
  const uint8_t* arena = nullptr;
  PluginStates states;
  uint32_t num_filters = 0;
  uint8_t filters[kMaxProfilePlugins] = {};
  uint32_t num_scores = 0;
  uint8_t scores[kMaxProfilePlugins] = {};
  NormalizeKind normalize[kMaxProfilePlugins] = {};  // per score slot
  int64_t weights[kMaxProfilePlugins] = {};
  // Some score plugin builds tables over the feasible nodes: a backend runs
  // run_feasible_prescore (host/engine/pod_query.hpp) between Filter and
  // Score. False for the default node-local plugins, which then cost no
  // second pass.
  bool prescore_feasible = false;
  // Selection: the tie-break rule, its seed and this pod's sequence number
  // (the random draw's; set by the caller after prepare; not part of what a
  // batch cache compares).
  TieBreak tie_break = TieBreak::Random;
  uint64_t tie_seed = 0;
  uint64_t pod_seq = 0;
};

// The verdict on one node: the first rejecting plugin (kNoPlugin if the node
// is feasible), its code and its reason bits.
struct NodeVerdict {
  uint8_t plugin = kNoPlugin;
  Code code = Code::Success;
  uint64_t reasons = 0;
  BULKSCORE_HD bool feasible() const { return plugin == kNoPlugin; }
};

// ---- visiting order ----------------------------------------------------------

// The order in which candidate positions k = 0..count-1 are visited: identity
// (every node, no sampling), order[k] (a PreFilterResult's candidate list),
// or order[(start + k) % count] when sampling (the candidate list or the
// node-tree order, rotated from upstream's round-robin start). `order` is a
// host or a device pointer.
struct VisitOrder {
  const uint32_t* order = nullptr;  // nullptr: position k is node k
  uint32_t count = 0;
  uint32_t start = 0;
  bool rotate = false;

  BULKSCORE_HD uint32_t node_at(uint32_t k) const {
    if (!order) return k;
    return rotate ? order[(start + k) % count] : order[k];
  }
};

// ---- Filter and Score ------------------------------------------------------------

template <class P>
BULKSCORE_HD const typename P::State& plugin_state(const PodQueryView& q) {
  return state_of<P>(q.states);
}

// `removed`: for a plugin whose Filter reads PreFilter's domain tables
// (FilterReach::kPreFilterTables), the counts the preemption dry run took
// from the node's domains (nullptr: none); the other plugins ignore it.
BULKSCORE_HD FilterOutcome run_filter(uint8_t plugin, const SnapshotView& s, const PodQueryView& q, uint32_t node,
                                      const int64_t* removed = nullptr) {
  FilterOutcome out = filter_fail(Code::Error);
  visit_plugin(plugin, [&](auto p) {
    using P = decltype(p);
    if constexpr (!P::kHasFilter)
      out = filter_pass();
    else if constexpr (kFilterReachOf<P> == FilterReach::kPreFilterTables)
      out = P::filter(s, plugin_state<P>(q), q.arena, node, removed);
    else
      out = P::filter(s, plugin_state<P>(q), q.arena, node);
  });
  return out;
}

BULKSCORE_HD int64_t run_score(uint8_t plugin, const SnapshotView& s, const PodQueryView& q, uint32_t node) {
  int64_t out = 0;
  visit_plugin(plugin, [&](auto p) {
    using P = decltype(p);
    if constexpr (P::kHasScore) out = P::score(s, plugin_state<P>(q), q.arena, node);
  });
  return out;
}

// Filter plugins in profile order; the first rejection wins. `removed`
// (the preemption dry run): per filter slot, run_filter's `removed`.
BULKSCORE_HD NodeVerdict filter_node(const SnapshotView& s, const PodQueryView& q, uint32_t node,
                                     const int64_t* const* removed = nullptr) {
  for (uint32_t i = 0; i < q.num_filters; ++i) {
    const FilterOutcome o = run_filter(q.filters[i], s, q, node, removed ? removed[i] : nullptr);
    if (!o.ok()) return NodeVerdict{q.filters[i], o.code, o.reasons};
  }
  return NodeVerdict{};
}

// ---- rejections --------------------------------------------------------------

// The rejection histogram is [plugin * 64 + reason bit]; a rejected node
// counts once in every bin of its verdict's reasons (NodeResourcesFit can
// give several: "Insufficient cpu" and "Insufficient memory").
constexpr uint32_t kRejectionBins = kNumPlugins * 64;

// Calls add(bin) for every bin `v` counts in.
template <class Add>
BULKSCORE_HD void for_each_rejection_bin(const NodeVerdict& v, Add&& add) {
  if (v.plugin >= kNumPlugins) return;
  for (uint64_t bits = v.reasons; bits; bits &= bits - 1) {
    uint32_t bit = 0;
    while (!((bits >> bit) & 1)) ++bit;  // lowest set bit; compilers emit ctz
    add(v.plugin * 64u + bit);
  }
}

// ---- normalize, weight, total ----------------------------------------------------

// The weighted total of one node: every score slot's raw score normalized
// with that slot's statistics, times its weight. `raw(slot)` reads the node's
// raw score; `normalized(slot, value)` receives each normalized score (for
// explain; a no-op otherwise).
template <class Raw, class Sink>
BULKSCORE_HD int64_t weighted_total(const PodQueryView& q, const NormStats* stats, Raw&& raw, Sink&& normalized) {
  int64_t total = 0;
  for (uint32_t slot = 0; slot < q.num_scores; ++slot) {
    const int64_t v = normalize_score(q.normalize[slot], raw(slot), stats[slot]);
    normalized(slot, v);
    total = go_add(total, go_mul(v, q.weights[slot]));  // wraps as Go's sums would, never undefined
  }
  return total;
}

// Whether slot statistics are needed at all (kind None uses none).
BULKSCORE_HD bool needs_stats(NormalizeKind kind) { return kind != NormalizeKind::None; }

// ---- selection -----------------------------------------------------------------

// A node's selection key: higher ranks first. The high 32 bits are the total
// offset by 2^31, so negative totals order correctly below positive ones
// (totals lie in [-2^31, 2^31): config validation bounds the weights); the
// low 32 bits the node index, lower first. The best key is --tie-break
// first's choice; --tie-break random takes a fresh uniform draw among the
// nodes tied at the best total (tie_rank, host/engine/backend.hpp, from
// tie_draw and scale_draw below), once the best total and how many nodes
// share it are known.
BULKSCORE_HD uint64_t selection_key(int64_t total, uint32_t node, const PodQueryView&) {
  const uint64_t biased = static_cast<uint64_t>(total + (int64_t(1) << 31)) & 0xFFFFFFFFu;
  return (biased << 32) | (0xFFFFFFFFu - node);
}

// --tie-break random's draw for one pod: a seeded hash of its sequence
// number, independent of what earlier pods drew and of the cluster.
BULKSCORE_HD uint64_t tie_draw(const PodQueryView& q) {
  return mix64(q.tie_seed ^ mix64(q.pod_seq * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL));
}

// The draw scaled to a rank in [0, tied) by a 64x64-bit multiply's high
// half (uniform up to tied / 2^64); the host and the device compute the
// same product.
BULKSCORE_HD uint64_t scale_draw(uint64_t draw, uint64_t tied) {
#ifdef __CUDA_ARCH__
  return __umul64hi(draw, tied);
#else
  return static_cast<uint64_t>((static_cast<unsigned __int128>(draw) * tied) >> 64);
#endif
}

// The total a selection key carries.
BULKSCORE_HD int64_t selection_key_total(uint64_t key) { return static_cast<int64_t>(key >> 32) - (int64_t(1) << 31); }

// The one total order on scored nodes: the higher key first, then the lower
// node index (keys are unique per node; kept for callers that compare keys
// of different queries). Every backend's best-node search and sorted list
// use exactly this.
BULKSCORE_HD bool ranks_before(uint64_t key_a, uint32_t node_a, uint64_t key_b, uint32_t node_b) {
  return key_a != key_b ? key_a > key_b : node_a < node_b;
}

}  // namespace bulkscore
