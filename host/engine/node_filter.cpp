#include "host/engine/node_filter.hpp"

#include "plugins/simd_dispatch.hpp"

namespace bulkscore {
namespace {

bool has_filter_nodes(uint8_t id) {
  bool out = false;
  visit_plugin(id, [&](auto p) { out = kHasFilterNodes<decltype(p)>; });
  return out;
}

[[gnu::always_inline]] inline void fill_iota_body(uint32_t* __restrict out, uint32_t n, uint32_t start) {
  for (uint32_t i = 0; i < n; ++i) out[i] = start + i;
}
void fill_iota_baseline(uint32_t* out, uint32_t n, uint32_t start) { fill_iota_body(out, n, start); }
#if BULKSCORE_SIMD_X86
BULKSCORE_TARGET_AVX2 void fill_iota_avx2(uint32_t* out, uint32_t n, uint32_t start) {
  fill_iota_body(out, n, start);
}
BULKSCORE_TARGET_AVX512 void fill_iota_avx512(uint32_t* out, uint32_t n, uint32_t start) {
  fill_iota_body(out, n, start);
}
#endif

}  // namespace

void fill_iota(uint32_t* out, uint32_t n, uint32_t start) {
#if BULKSCORE_SIMD_X86
  const SimdTarget t = simd_target();
  if (t == SimdTarget::Avx512) return fill_iota_avx512(out, n, start);
  if (t == SimdTarget::Avx2) return fill_iota_avx2(out, n, start);
#endif
  fill_iota_baseline(out, n, start);
}

void filter_positions(const SnapshotView& s, const PodQueryView& q, FilterScratch& ch, bool reasons, uint8_t skip) {
  constexpr uint8_t kPassed = 0xFF;
  size_t alive = ch.alive.size();
  uint32_t f = 0;
  while (f < q.num_filters && alive > 0) {
    if (q.filters[f] == skip) {
      ++f;
      continue;
    }
    if (has_filter_nodes(q.filters[f])) {
      // While nothing failed the alive positions are all of them, in order.
      const uint32_t* nodes = ch.nodes.data();
      if (alive != ch.nodes.size()) {
        ch.alive_nodes.resize(alive);
        for (size_t a = 0; a < alive; ++a) ch.alive_nodes[a] = ch.nodes[ch.alive[a]];
        nodes = ch.alive_nodes.data();
      }
      const auto n = static_cast<uint32_t>(alive);
      ch.fails.resize(alive);
      ch.first_fail.resize(alive);  // written at the run's first failure
      uint8_t* __restrict first = ch.first_fail.data();
      const uint8_t* fails = ch.fails.data();  // written by each filter_nodes below: not restrict
      const uint32_t run_start = f;
      bool any_failed = false;
      for (; f < q.num_filters && has_filter_nodes(q.filters[f]); ++f) {
        if (q.filters[f] == skip) continue;
        const auto k = static_cast<uint8_t>(f - run_start);
        visit_plugin(q.filters[f], [&](auto plugin) {
          using P = decltype(plugin);
          if constexpr (kHasFilterNodes<P>) P::filter_nodes(s, plugin_state<P>(q), q.arena, nodes, n, ch.fails.data());
        });
        // Byte loops compilers vectorize: whether any node failed (most
        // often none), then each position's first failing plugin.
        uint8_t failed = 0;
        for (uint32_t a = 0; a < n; ++a) failed |= fails[a];
        if (failed == 0) continue;
        if (!any_failed) {
          for (uint32_t a = 0; a < n; ++a) first[a] = fails[a] != 0 ? k : kPassed;
          any_failed = true;
          continue;
        }
        for (uint32_t a = 0; a < n; ++a) {
          const auto take = static_cast<uint8_t>(-static_cast<int>((first[a] == kPassed) & (fails[a] != 0)));
          first[a] = static_cast<uint8_t>((k & take) | (first[a] & ~take));
        }
      }
      if (!any_failed) continue;  // every alive position passed the run: nothing to compact
      size_t kept = 0;
      for (uint32_t a = 0; a < n; ++a) {
        const uint32_t pos = ch.alive[a];
        ch.alive[kept] = pos;
        kept += first[a] == kPassed;
        if (first[a] != kPassed && reasons) {
          const uint8_t id = q.filters[run_start + first[a]];
          const FilterOutcome o = run_filter(id, s, q, nodes[a]);
          ch.verdicts[pos] = NodeVerdict{id, o.code, o.reasons};
        }
      }
      alive = kept;
      continue;
    }
    const uint8_t id = q.filters[f++];
    visit_plugin(id, [&](auto plugin) {
      using P = decltype(plugin);
      if constexpr (P::kHasFilter) {
        const auto& st = plugin_state<P>(q);
        size_t kept = 0;
        for (size_t a = 0; a < alive; ++a) {
          const uint32_t pos = ch.alive[a];
          const FilterOutcome o = P::filter(s, st, q.arena, ch.nodes[pos]);
          if (o.ok())
            ch.alive[kept++] = pos;
          else
            ch.verdicts[pos] = NodeVerdict{id, o.code, o.reasons};
        }
        alive = kept;
      }
    });
  }
  ch.alive.resize(alive);
}

void filter_feasible(const SnapshotView& s, const PodQueryView& q, const uint32_t* nodes, uint32_t count,
                     FilterScratch& sc, std::vector<uint8_t>& feasible) {
  sc.nodes.assign(nodes, nodes + count);
  sc.alive.resize(count);
  fill_iota(sc.alive.data(), count, 0);
  sc.verdicts.resize(count);
  filter_positions(s, q, sc, false);
  feasible.assign(count, 0);
  for (const uint32_t pos : sc.alive) feasible[pos] = 1;
}

}  // namespace bulkscore
