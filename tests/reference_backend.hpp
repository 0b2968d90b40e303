// A second, deliberately plain implementation of Backend for the parity
// tests: node-major and single-threaded, calling the fused per-node pass
// (filter_node, run_score, weighted_total) exactly as the CUDA kernels do, where the CPU
// backend runs plugin-major loops on several threads. In builds without a GPU
// this is what checks the kernels' code path against the CPU backend.
#pragma once

#include <algorithm>
#include <numeric>
#include <vector>

#include "host/engine/backend.hpp"

namespace bulkscore::testutil {

class ReferenceBackend final : public Backend {
 public:
  const char* name() const override { return "reference"; }

  void evaluate(const Snapshot& snap, PodQuery& query, const EvalRequest& req, EvalResult& out) override {
    const SnapshotView s = snap.view();
    PodQueryView q = query.view();
    out = EvalResult{};
    const VisitOrder visit = visit_order(snap, req);
    const uint32_t M = visit.count;
    if (req.want_verdicts) out.verdicts.assign(s.num_nodes, NodeVerdict{kNoPlugin, Code::Skip, 0});

    std::vector<uint32_t> feasible;
    out.processed = M;
    for (uint32_t k = 0; k < M; ++k) {
      const uint32_t node = visit.node_at(k);
      const NodeVerdict v = filter_node(s, q, node);
      if (req.want_verdicts) out.verdicts[node] = v;
      if (v.feasible()) {
        feasible.push_back(node);
        if (visit.rotate && req.num_to_find > 0 && feasible.size() == req.num_to_find) {
          out.processed = k + 1;
          break;
        }
      } else {
        for_each_rejection_bin(v, [&](uint32_t bin) { ++out.rejections.counts[bin]; });
      }
    }
    const auto F = static_cast<uint32_t>(feasible.size());
    out.num_feasible = F;
    if (F == 0) return;
    if (F == 1 && !req.score_single) {
      out.chosen = static_cast<int32_t>(feasible[0]);
      if (req.want_scores) out.scored_nodes = feasible;
      if (req.want_sorted) {
        out.sorted_nodes = feasible;
        out.sorted_keys = {selection_key(0, feasible[0], q)};
      }
      return;
    }
    if (q.prescore_feasible) {
      run_feasible_prescore(snap, query, feasible.data(), F);
      q = query.view();
    }
    // Node-major, as the kernels: every raw score of a node, then the
    // statistics, then each node's total.
    const uint32_t S = q.num_scores;
    std::vector<int64_t> raw(static_cast<size_t>(S) * F), norm(raw.size()), totals(F, 0);
    NormStats stats[kMaxProfilePlugins];
    for (uint32_t slot = 0; slot < S; ++slot) stats[slot] = empty_norm_stats();
    for (uint32_t i = 0; i < F; ++i)
      for (uint32_t slot = 0; slot < S; ++slot) {
        raw[slot * F + i] = run_score(q.scores[slot], s, q, feasible[i]);
        if (needs_stats(q.normalize[slot])) add_to_stats(stats[slot], raw[slot * F + i]);
      }
    for (uint32_t i = 0; i < F; ++i)
      totals[i] = weighted_total(
          q, stats, [&](uint32_t slot) { return raw[slot * F + i]; },
          [&](uint32_t slot, int64_t v) { norm[slot * F + i] = v; });
    std::vector<uint32_t> idx(F);
    std::iota(idx.begin(), idx.end(), 0u);
    std::vector<uint64_t> keys(F);
    for (uint32_t i = 0; i < F; ++i) keys[i] = selection_key(totals[i], feasible[i], q);
    std::sort(idx.begin(), idx.end(),
              [&](uint32_t a, uint32_t b) { return ranks_before(keys[a], feasible[a], keys[b], feasible[b]); });
    out.scored = true;
    out.chosen = static_cast<int32_t>(feasible[idx[0]]);
    out.chosen_total = totals[idx[0]];
    if (q.tie_break == TieBreak::Random) {
      std::vector<uint32_t> tied;
      out.chosen = static_cast<int32_t>(pick_tied(
          F, out.chosen_total, [&](size_t i) { return totals[i]; }, [&](size_t i) { return feasible[i]; }, q, tied,
          static_cast<uint32_t>(out.chosen)));
    }
    if (req.want_scores) {
      out.scored_nodes = feasible;
      out.raw_scores = raw;
      out.normalized_scores = norm;
      out.totals = totals;
    } else if (req.want_totals) {  // every normalizing slot's row, no summary
      out.scored_nodes = feasible;
      out.totals = totals;
      append_stat_scores(q, raw.data(), F, out.stat_scores);
    }
    if (req.want_sorted) {
      for (uint32_t i : idx) {
        out.sorted_nodes.push_back(feasible[i]);
        out.sorted_keys.push_back(keys[i]);
      }
    }
  }
};

}  // namespace bulkscore::testutil
