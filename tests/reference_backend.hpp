// A second, deliberately plain implementation of Backend for the parity
// tests: node-major and single-threaded, calling the fused per-node pass
// (filter_node, run_score) exactly as the CUDA kernels do, where the CPU
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

  void evaluate(const Snapshot& snap, const PodQuery& query, const EvalRequest& req, EvalResult& out) override {
    const SnapshotView s = snap.view();
    const PodQueryView q = query.view();
    out = EvalResult{};
    const uint32_t M = req.candidates ? static_cast<uint32_t>(req.candidates->size()) : s.num_nodes;
    const bool sampling = req.num_to_find < M;
    const std::vector<uint32_t>& order = req.candidates ? *req.candidates : snap.tree_order();
    if (req.want_verdicts) out.verdicts.assign(s.num_nodes, NodeVerdict{kNoPlugin, Code::Skip, 0});

    std::vector<uint32_t> feasible;
    out.processed = M;
    for (uint32_t k = 0; k < M; ++k) {
      const uint32_t node = sampling ? order[(req.start + k) % M] : (req.candidates ? order[k] : k);
      const NodeVerdict v = filter_node(s, q, node);
      if (req.want_verdicts) out.verdicts[node] = v;
      if (v.feasible()) {
        feasible.push_back(node);
        if (sampling && req.num_to_find > 0 && feasible.size() == req.num_to_find) {
          out.processed = k + 1;
          break;
        }
      } else {
        for (uint32_t bit = 0; bit < 64; ++bit)
          if (v.reasons >> bit & 1) ++out.rejections.at(v.plugin, bit);
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
    const uint32_t S = q.num_scores;
    std::vector<int64_t> raw(static_cast<size_t>(S) * F), norm(raw.size()), totals(F, 0);
    for (uint32_t slot = 0; slot < S; ++slot) {
      NormStats st{INT64_MAX, INT64_MIN};
      for (uint32_t i = 0; i < F; ++i) {
        const int64_t r = run_score(q.scores[slot], s, q, feasible[i]);
        raw[slot * F + i] = r;
        st.min = std::min(st.min, r);
        st.max = std::max(st.max, r);
      }
      for (uint32_t i = 0; i < F; ++i) {
        norm[slot * F + i] = normalize_score(normalize_kind(q.scores[slot]), raw[slot * F + i], st);
        totals[i] += q.weights[slot] * norm[slot * F + i];
      }
    }
    std::vector<uint32_t> idx(F);
    std::iota(idx.begin(), idx.end(), 0u);
    std::vector<uint64_t> keys(F);
    for (uint32_t i = 0; i < F; ++i) keys[i] = selection_key(totals[i], feasible[i], q);
    std::sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) {
      return keys[a] != keys[b] ? keys[a] > keys[b] : feasible[a] < feasible[b];
    });
    out.scored = true;
    out.chosen = static_cast<int32_t>(feasible[idx[0]]);
    out.chosen_total = totals[idx[0]];
    if (req.want_scores) {
      out.scored_nodes = feasible;
      out.raw_scores = raw;
      out.normalized_scores = norm;
      out.totals = totals;
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
