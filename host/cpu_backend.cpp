// The CPU backend: plain loops over the node columns calling the shared
// per-node rules, Eigen for the weighted totals. Always built; the reference
// the CUDA backend is compared against.
#include <Eigen/Core>
#include <algorithm>
#include <numeric>

#include "host/backend.hpp"

namespace bulkscore {
namespace {

using ScoreMatrix = Eigen::Matrix<int64_t, Eigen::Dynamic, Eigen::Dynamic>;  // column-major: [node, slot]
using ScoreVector = Eigen::Matrix<int64_t, Eigen::Dynamic, 1>;

class CpuBackend final : public Backend {
 public:
  const char* name() const override { return "cpu"; }

  void evaluate(const Snapshot& snap, const PodQuery& query, const EvalRequest& req, EvalResult& out) override {
    const SnapshotView s = snap.view();
    const PodQueryView q = query.view();
    out = EvalResult{};
    const uint32_t S = q.num_scores;

    // Visiting order: the PreFilterResult, else every node.
    const uint32_t M = req.candidates ? static_cast<uint32_t>(req.candidates->size()) : s.num_nodes;
    const bool sampling = req.num_to_find < M;
    const std::vector<uint32_t>& order = req.candidates ? *req.candidates : snap.tree_order();
    auto node_at = [&](uint32_t k) -> uint32_t {
      if (!sampling) return req.candidates ? order[k] : k;
      return order[(req.start + k) % M];
    };

    if (req.want_verdicts) out.verdicts.assign(s.num_nodes, NodeVerdict{kNoPlugin, Code::Skip, 0});
    feasible_.clear();
    raw_.resize(static_cast<size_t>(S) * 64);
    size_t raw_used = 0;

    // Filter, and the raw scores of each feasible node while its columns are hot.
    uint32_t k = 0;
    for (; k < M; ++k) {
      const uint32_t node = node_at(k);
      const NodeVerdict v = filter_node(s, q, node);
      if (req.want_verdicts) out.verdicts[node] = v;
      if (!v.feasible()) {
        for (uint64_t bits = v.reasons; bits; bits &= bits - 1)
          ++out.rejections.at(v.plugin, static_cast<uint32_t>(__builtin_ctzll(bits)));
        continue;
      }
      feasible_.push_back(node);
      if (raw_used + S > raw_.size()) raw_.resize(raw_.size() * 2);
      for (uint32_t slot = 0; slot < S; ++slot) raw_[raw_used++] = run_score(q.scores[slot], s, q, node);
      if (sampling && feasible_.size() == req.num_to_find) {
        ++k;
        break;
      }
    }
    out.processed = sampling ? k : M;
    const auto F = static_cast<uint32_t>(feasible_.size());
    out.num_feasible = F;
    if (F == 0) return;
    if (F == 1 && !req.score_single) {  // upstream picks a lone feasible node without scoring
      out.chosen = static_cast<int32_t>(feasible_[0]);
      if (req.want_scores) out.scored_nodes = feasible_;
      if (req.want_sorted) {
        out.sorted_nodes = feasible_;
        out.sorted_keys = {selection_key(0, feasible_[0], q)};
      }
      return;
    }

    // Normalize each plugin over the scored nodes, then weight and total.
    ScoreMatrix norm(F, S);
    for (uint32_t slot = 0; slot < S; ++slot) {
      NormStats st{INT64_MAX, INT64_MIN};
      for (uint32_t i = 0; i < F; ++i) {
        const int64_t r = raw_[static_cast<size_t>(i) * S + slot];
        st.min = std::min(st.min, r);
        st.max = std::max(st.max, r);
      }
      const NormalizeKind kind = normalize_kind(q.scores[slot]);
      for (uint32_t i = 0; i < F; ++i) norm(i, slot) = normalize_score(kind, raw_[static_cast<size_t>(i) * S + slot], st);
    }
    const Eigen::Map<const ScoreVector> weights(q.weights, S);
    const ScoreVector totals = S ? ScoreVector(norm * weights) : ScoreVector::Zero(F);

    uint64_t best_key = 0;
    int32_t best = -1;
    keys_.resize(F);
    for (uint32_t i = 0; i < F; ++i) {
      keys_[i] = selection_key(totals(i), feasible_[i], q);
      if (best < 0 || keys_[i] > best_key || (keys_[i] == best_key && feasible_[i] < feasible_[best])) {
        best_key = keys_[i];
        best = static_cast<int32_t>(i);
      }
    }
    out.scored = true;
    out.chosen = static_cast<int32_t>(feasible_[best]);
    out.chosen_total = totals(best);

    if (req.want_scores) {
      out.scored_nodes = feasible_;
      out.raw_scores.resize(static_cast<size_t>(S) * F);
      out.normalized_scores.resize(static_cast<size_t>(S) * F);
      for (uint32_t slot = 0; slot < S; ++slot)
        for (uint32_t i = 0; i < F; ++i) {
          out.raw_scores[static_cast<size_t>(slot) * F + i] = raw_[static_cast<size_t>(i) * S + slot];
          out.normalized_scores[static_cast<size_t>(slot) * F + i] = norm(i, slot);
        }
      out.totals.assign(totals.data(), totals.data() + F);
    }
    if (req.want_sorted) {
      std::vector<uint32_t> idx(F);
      std::iota(idx.begin(), idx.end(), 0u);
      std::sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) {
        if (keys_[a] != keys_[b]) return keys_[a] > keys_[b];
        return feasible_[a] < feasible_[b];
      });
      out.sorted_nodes.resize(F);
      out.sorted_keys.resize(F);
      for (uint32_t i = 0; i < F; ++i) {
        out.sorted_nodes[i] = feasible_[idx[i]];
        out.sorted_keys[i] = keys_[idx[i]];
      }
    }
  }

 private:
  // Reused across pods: no allocation per pod once grown.
  std::vector<uint32_t> feasible_;
  std::vector<int64_t> raw_;  // [feasible i][slot]
  std::vector<uint64_t> keys_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

std::vector<std::string> compiled_backends() {
#ifdef BULKSCORE_WITH_CUDA
  return {"cpu", "cuda"};
#else
  return {"cpu"};
#endif
}

#ifndef BULKSCORE_WITH_CUDA
std::unique_ptr<Backend> make_cuda_backend() {
  throw BackendUnavailable("this build has no CUDA backend (configured without a CUDA compiler)");
}
std::string cuda_unavailable_reason() { return "this build has no CUDA backend"; }
#endif

}  // namespace bulkscore
