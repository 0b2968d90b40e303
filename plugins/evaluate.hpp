// The fused per-node pass both backends run: filter plugins in profile order
// (stopping at the first rejection, as upstream), each score plugin's raw
// score, normalization and the total order used to pick a node. The CPU
// backend loops over nodes calling these; the CUDA backend calls them from
// its kernels. No backend names a plugin: dispatch is generated from
// BULKSCORE_PLUGINS.
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
  int64_t weights[kMaxProfilePlugins] = {};
  // Selection: the tie-break rule, its seed and this pod's sequence number.
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

namespace detail {
template <class P>
BULKSCORE_HD FilterOutcome call_filter(const SnapshotView& s, const PluginStates& st, const uint8_t* arena,
                                       uint32_t node, const typename P::State& ps) {
  (void)st;
  if constexpr (P::kHasFilter)
    return P::filter(s, ps, arena, node);
  else
    return filter_pass();
}
template <class P>
BULKSCORE_HD int64_t call_score(const SnapshotView& s, const uint8_t* arena, uint32_t node,
                                const typename P::State& ps) {
  if constexpr (P::kHasScore)
    return P::score(s, ps, arena, node);
  else
    return 0;
}
}  // namespace detail

BULKSCORE_HD FilterOutcome run_filter(uint8_t plugin, const SnapshotView& s, const PodQueryView& q, uint32_t node) {
  switch (plugin) {
#define BULKSCORE_X(P)                    \
  case static_cast<uint8_t>(PluginId::P): \
    return detail::call_filter<plugins::P>(s, q.states, q.arena, node, q.states.P##_state);
    BULKSCORE_PLUGINS(BULKSCORE_X)
#undef BULKSCORE_X
    default:
      return filter_fail(Code::Error);
  }
}

BULKSCORE_HD int64_t run_score(uint8_t plugin, const SnapshotView& s, const PodQueryView& q, uint32_t node) {
  switch (plugin) {
#define BULKSCORE_X(P)                    \
  case static_cast<uint8_t>(PluginId::P): \
    return detail::call_score<plugins::P>(s, q.arena, node, q.states.P##_state);
    BULKSCORE_PLUGINS(BULKSCORE_X)
#undef BULKSCORE_X
    default:
      return 0;
  }
}

BULKSCORE_HD NormalizeKind normalize_kind(uint8_t plugin) {
  switch (plugin) {
#define BULKSCORE_X(P)                    \
  case static_cast<uint8_t>(PluginId::P): \
    return plugins::P::kNormalize;
    BULKSCORE_PLUGINS(BULKSCORE_X)
#undef BULKSCORE_X
    default:
      return NormalizeKind::None;
  }
}

// Calls fn(plugins::P{}) for the plugin with id `plugin`: lets a backend
// dispatch once per plugin and loop over nodes inside (plugin-major loops).
template <class Fn>
void visit_plugin(uint8_t plugin, Fn&& fn) {
  switch (plugin) {
#define BULKSCORE_X(P)                    \
  case static_cast<uint8_t>(PluginId::P): \
    fn(plugins::P{});                     \
    break;
    BULKSCORE_PLUGINS(BULKSCORE_X)
#undef BULKSCORE_X
    default:
      break;
  }
}

// The state of plugin P inside a query.
template <class P>
BULKSCORE_HD const typename P::State& plugin_state(const PodQueryView& q);
#define BULKSCORE_X(P)                                                                    \
  template <>                                                                             \
  BULKSCORE_HD const plugins::P::State& plugin_state<plugins::P>(const PodQueryView& q) { \
    return q.states.P##_state;                                                            \
  }
BULKSCORE_PLUGINS(BULKSCORE_X)
#undef BULKSCORE_X

// Filter plugins in profile order; the first rejection wins.
BULKSCORE_HD NodeVerdict filter_node(const SnapshotView& s, const PodQueryView& q, uint32_t node) {
  for (uint32_t i = 0; i < q.num_filters; ++i) {
    const FilterOutcome o = run_filter(q.filters[i], s, q, node);
    if (!o.ok()) return NodeVerdict{q.filters[i], o.code, o.reasons};
  }
  return NodeVerdict{};
}

// The total order both backends agree on: higher total first, then the
// tie-break key. Random: a seeded hash of (pod, node), uniform over tied
// nodes; First: the lowest node index. Totals are < 2^31 (config validation).
BULKSCORE_HD uint64_t selection_key(int64_t total, uint32_t node, const PodQueryView& q) {
  uint32_t tie;
  if (q.tie_break == TieBreak::First) {
    tie = 0xFFFFFFFFu - node;
  } else {
    tie = static_cast<uint32_t>(mix64(q.tie_seed ^ mix64(q.pod_seq * 0x9E3779B97F4A7C15ULL + node)) >> 32);
  }
  return (static_cast<uint64_t>(total) << 32) | tie;
}

}  // namespace bulkscore
