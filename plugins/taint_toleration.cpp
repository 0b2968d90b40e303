#include "plugins/taint_toleration.hpp"

#include "plugins/prepare.hpp"

namespace bulkscore::plugins {

PrepareResult TaintToleration::prepare(const PrepareContext& ctx, State& st, Arena& arena) {
  const auto all = compile_tolerations(ctx.pod.tolerations, ctx.snapshot.strings());
  std::vector<TolerationRule> prefer;
  for (size_t i = 0; i < all.size(); ++i) {
    const std::string& e = ctx.pod.tolerations[i].effect;
    if (e.empty() || e == "PreferNoSchedule") prefer.push_back(all[i]);
  }
  st.all = arena.push(all);
  st.prefer = arena.push(prefer);
  // Filter has no PreFilter; PreScore never skips. On a snapshot without
  // taints every node passes Filter (as uniform_score scores them alike):
  // the per-node pass leaves it out (a batch cache state of such a query
  // answers no pod prepared after a taint came, whose filter list differs).
  PrepareResult r;
  r.filter_passes_all = untainted(ctx.view);
  return r;
}

void TaintToleration::score_nodes(const SnapshotView& s, const State& st, const uint8_t* arena, const uint32_t* nodes,
                                  uint32_t count, int64_t* out) {
  if (!mark_tainted(s, nodes, count, out)) return;
  for (uint32_t i = 0; i < count; ++i)
    if (out[i]) out[i] = score(s, st, arena, nodes[i]);
}

void TaintToleration::reasons(uint64_t, const Snapshot&, const State&, const uint8_t*, uint32_t,
                              std::vector<std::string>& out) {
  // v1.35 names no taint in the status (it logs it at -v 4 instead).
  out.emplace_back("node(s) had untolerated taint(s)");
}

}  // namespace bulkscore::plugins
