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

    // Visiting order: the PreFilterResult, else every node (index order, or
    // node-tree order rotated from `start` when sampling).
    const uint32_t M = req.candidates ? static_cast<uint32_t>(req.candidates->size()) : s.num_nodes;
    const bool sampling = req.num_to_find < M;
    const std::vector<uint32_t>& order = req.candidates ? *req.candidates : snap.tree_order();
    auto node_at = [&](uint32_t k) -> uint32_t {
      if (!sampling) return req.candidates ? order[k] : k;
      return order[(req.start + k) % M];
    };
    if (req.want_verdicts) out.verdicts.assign(s.num_nodes, NodeVerdict{kNoPlugin, Code::Skip, 0});

    // Filter, plugin-major within chunks of the visiting order: one dispatch
    // per plugin, a tight loop over the nodes still feasible. The first
    // rejecting plugin wins, exactly as in node-major order.
    feasible_.clear();
    out.processed = M;
    for (uint32_t base = 0; base < M; base += kChunk) {
      const uint32_t n = std::min(kChunk, M - base);
      chunk_nodes_.resize(n);
      chunk_verdicts_.assign(n, NodeVerdict{});
      alive_.resize(n);
      for (uint32_t i = 0; i < n; ++i) {
        chunk_nodes_[i] = node_at(base + i);
        alive_[i] = i;
      }
      size_t alive = n;
      for (uint32_t f = 0; f < q.num_filters && alive > 0; ++f) {
        const uint8_t id = q.filters[f];
        visit_plugin(id, [&](auto plugin) {
          using P = decltype(plugin);
          if constexpr (P::kHasFilter) {
            const auto& st = plugin_state<P>(q);
            size_t kept = 0;
            for (size_t a = 0; a < alive; ++a) {
              const uint32_t pos = alive_[a];
              const FilterOutcome o = P::filter(s, st, q.arena, chunk_nodes_[pos]);
              if (o.ok()) alive_[kept++] = pos;
              else chunk_verdicts_[pos] = NodeVerdict{id, o.code, o.reasons};
            }
            alive = kept;
          }
        });
      }
      // Sampling stops at the node that completes the sample.
      uint32_t cut = n;
      const size_t wanted = sampling ? req.num_to_find - feasible_.size() : SIZE_MAX;
      if (sampling && alive >= wanted) cut = alive_[wanted - 1] + 1;
      for (uint32_t pos = 0; pos < cut; ++pos) {
        const NodeVerdict& v = chunk_verdicts_[pos];
        const uint32_t node = chunk_nodes_[pos];
        if (req.want_verdicts) out.verdicts[node] = v;
        if (v.feasible()) {
          feasible_.push_back(node);
        } else {
          for (uint64_t bits = v.reasons; bits; bits &= bits - 1)
            ++out.rejections.at(v.plugin, static_cast<uint32_t>(__builtin_ctzll(bits)));
        }
      }
      if (cut < n) {
        out.processed = base + cut;
        break;
      }
    }

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

    // Raw scores, plugin-major: raw_[slot * F + i].
    raw_.resize(static_cast<size_t>(S) * F);
    norm_.resize(static_cast<size_t>(S) * F);
    for (uint32_t slot = 0; slot < S; ++slot) {
      int64_t* raw = raw_.data() + static_cast<size_t>(slot) * F;
      visit_plugin(q.scores[slot], [&](auto plugin) {
        using P = decltype(plugin);
        if constexpr (P::kHasScore) {
          const auto& st = plugin_state<P>(q);
          for (uint32_t i = 0; i < F; ++i) raw[i] = P::score(s, st, q.arena, feasible_[i]);
        }
      });
      // Normalize over the scored nodes.
      NormStats st{INT64_MAX, INT64_MIN};
      for (uint32_t i = 0; i < F; ++i) {
        st.min = std::min(st.min, raw[i]);
        st.max = std::max(st.max, raw[i]);
      }
      const NormalizeKind kind = normalize_kind(q.scores[slot]);
      int64_t* norm = norm_.data() + static_cast<size_t>(slot) * F;
      for (uint32_t i = 0; i < F; ++i) norm[i] = normalize_score(kind, raw[i], st);
    }
    // Weighted totals: an F x S matrix (column-major) times the weights.
    const Eigen::Map<const ScoreMatrix> norm(norm_.data(), F, S);
    const Eigen::Map<const ScoreVector> weights(q.weights, S);
    totals_.resize(F);
    Eigen::Map<ScoreVector> totals(totals_.data(), F);
    if (S) totals.noalias() = norm * weights;
    else totals.setZero();

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
      out.raw_scores.assign(raw_.begin(), raw_.end());
      out.normalized_scores.assign(norm_.begin(), norm_.end());
      out.totals.assign(totals_.begin(), totals_.end());
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
  static constexpr uint32_t kChunk = 2048;  // nodes filtered together, plugin by plugin

  // Reused across pods: no allocation per pod once grown.
  std::vector<uint32_t> chunk_nodes_, alive_, feasible_;
  std::vector<NodeVerdict> chunk_verdicts_;
  std::vector<int64_t> raw_, norm_, totals_;  // [slot * F + i] for raw_ and norm_
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
