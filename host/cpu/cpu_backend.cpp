// The CPU backend: plugin-major loops over chunks of the node columns,
// calling the shared per-node rules (plugins/evaluate.hpp), on a pool of
// threads; Eigen for the column reductions and weighted totals. Always
// built; the backend the CUDA backend is compared against. Results never
// depend on the number of threads: work is split into chunks of the visiting
// order and merged in that order.
#include <Eigen/Core>
#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <thread>

#include "host/cpu/worker_pool.hpp"
#include "host/engine/backend.hpp"

namespace bulkscore {
namespace {

using ScoreVector = Eigen::Matrix<int64_t, Eigen::Dynamic, 1>;

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(int threads) : threads_(resolve_threads(threads)), pool_(static_cast<unsigned>(threads_)) {}

  // 0 = BULKSCORE_THREADS from the environment if set, else one per core.
  static int resolve_threads(int threads) {
    if (threads > 0) return threads;
    if (const char* env = std::getenv("BULKSCORE_THREADS")) {
      const int n = std::atoi(env);
      if (n > 0) return n;
    }
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }

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
    // rejecting plugin wins, exactly as in node-major order. Without sampling
    // the chunks are independent and run on all threads; their results are
    // merged in visiting order, so the outcome does not depend on threads.
    feasible_.clear();
    out.processed = M;
    if (!sampling) {
      const int threads = M >= kParallelMinNodes ? threads_ : 1;
      const uint32_t chunk = balanced_chunk(M, threads);
      const uint32_t num_chunks = (M + chunk - 1) / chunk;
      if (chunks_.size() < num_chunks) chunks_.resize(num_chunks);
      run_tasks(threads, num_chunks, [&](uint32_t c) {
        Chunk& ch = chunks_[c];
        const uint32_t base = c * chunk;
        fill_chunk(ch, base, std::min(chunk, M - base), node_at);
        filter_chunk(s, q, ch);
        RejectionHistogram& hist = ch.rejections;
        hist = RejectionHistogram{};
        ch.feasible.clear();
        for (uint32_t pos = 0; pos < ch.nodes.size(); ++pos) {
          const NodeVerdict& v = ch.verdicts[pos];
          if (req.want_verdicts) out.verdicts[ch.nodes[pos]] = v;
          if (v.feasible())
            ch.feasible.push_back(ch.nodes[pos]);
          else
            count_rejection(hist, v);
        }
      });
      for (uint32_t c = 0; c < num_chunks; ++c) {
        const Chunk& ch = chunks_[c];
        feasible_.insert(feasible_.end(), ch.feasible.begin(), ch.feasible.end());
        if (ch.feasible.size() != ch.nodes.size())
          for (size_t i = 0; i < out.rejections.counts.size(); ++i) out.rejections.counts[i] += ch.rejections.counts[i];
      }
    } else {
      // Sampling visits in order and stops at the node that completes the sample.
      const uint32_t num_chunks = (M + kChunk - 1) / kChunk;
      if (chunks_.size() < num_chunks) chunks_.resize(num_chunks);
      for (uint32_t c = 0; c < num_chunks; ++c) {
        Chunk& ch = chunks_[c];
        const uint32_t base = c * kChunk;
        const uint32_t n = std::min(kChunk, M - base);
        fill_chunk(ch, base, n, node_at);
        filter_chunk(s, q, ch);
        uint32_t cut = n;
        // num_to_find 0 is no limit (every candidate, still in rotated order).
        const size_t wanted = req.num_to_find == 0 ? SIZE_MAX : req.num_to_find - feasible_.size();
        if (ch.alive.size() >= wanted) cut = ch.alive[wanted - 1] + 1;
        for (uint32_t pos = 0; pos < cut; ++pos) {
          const NodeVerdict& v = ch.verdicts[pos];
          if (req.want_verdicts) out.verdicts[ch.nodes[pos]] = v;
          if (v.feasible())
            feasible_.push_back(ch.nodes[pos]);
          else
            count_rejection(out.rejections, v);
        }
        if (cut < n) {
          out.processed = base + cut;
          break;
        }
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

    // Pass 1, per block of nodes on all threads: every plugin's raw scores
    // (plugin-major, raw_[slot * F + i]) and the block's min/max per plugin.
    raw_.resize(static_cast<size_t>(S) * F);
    if (req.want_scores) norm_.resize(static_cast<size_t>(S) * F);
    totals_.resize(F);
    const int threads = F >= kParallelMinNodes ? threads_ : 1;
    const uint32_t block = balanced_chunk(F, threads);
    const uint32_t blocks = (F + block - 1) / block;
    block_stats_.resize(static_cast<size_t>(blocks) * S);
    run_tasks(threads, blocks, [&](uint32_t b) {
      const uint32_t lo = b * block, hi = std::min(F, lo + block);
      for (uint32_t slot = 0; slot < S; ++slot) {
        int64_t* raw = raw_.data() + static_cast<size_t>(slot) * F;
        visit_plugin(q.scores[slot], [&](auto plugin) {
          using P = decltype(plugin);
          if constexpr (P::kHasScore) {
            const auto& st = plugin_state<P>(q);
            for (uint32_t i = lo; i < hi; ++i) raw[i] = P::score(s, st, q.arena, feasible_[i]);
          }
        });
        const Eigen::Map<const ScoreVector> col(raw + lo, hi - lo);
        block_stats_[static_cast<size_t>(b) * S + slot] = NormStats{col.minCoeff(), col.maxCoeff()};
      }
    });
    // Each plugin's min/max over all scored nodes.
    NormStats stats[kMaxProfilePlugins];
    for (uint32_t slot = 0; slot < S; ++slot) {
      stats[slot] = NormStats{INT64_MAX, INT64_MIN};
      for (uint32_t b = 0; b < blocks; ++b) {
        const NormStats& bs = block_stats_[static_cast<size_t>(b) * S + slot];
        stats[slot].min = std::min(stats[slot].min, bs.min);
        stats[slot].max = std::max(stats[slot].max, bs.max);
      }
    }
    // Pass 2, per block: normalize, weight and total, and the block's best
    // node by (total, selection key, lower node). Keys are computed only for
    // nodes that tie the block's best total so far.
    block_best_.resize(blocks);
    run_tasks(threads, blocks, [&](uint32_t b) {
      const uint32_t lo = b * block, hi = std::min(F, lo + block);
      Eigen::Map<ScoreVector> totals(totals_.data() + lo, hi - lo);
      totals.setZero();
      for (uint32_t slot = 0; slot < S; ++slot) {
        const int64_t* raw = raw_.data() + static_cast<size_t>(slot) * F;
        int64_t* norm = req.want_scores ? norm_.data() + static_cast<size_t>(slot) * F : nullptr;
        const int64_t w = q.weights[slot];
        const NormalizeKind kind = normalize_kind(q.scores[slot]);
        if (kind == NormalizeKind::None) {  // already 0..100
          totals.array() += w * Eigen::Map<const ScoreVector>(raw + lo, hi - lo).array();
          if (norm) std::copy(raw + lo, raw + hi, norm + lo);
        } else {
          for (uint32_t i = lo; i < hi; ++i) {
            const int64_t v = normalize_score(kind, raw[i], stats[slot]);
            totals_[i] += w * v;
            if (norm) norm[i] = v;
          }
        }
      }
      Best best{INT64_MIN, 0, 0};
      bool any = false;
      for (uint32_t i = lo; i < hi; ++i) {
        if (any && totals_[i] < best.total) continue;
        const Best cand{totals_[i], selection_key(totals_[i], feasible_[i], q), i};
        if (!any || better(cand, best)) best = cand;
        any = true;
      }
      block_best_[b] = best;
    });
    Best best = block_best_[0];
    for (uint32_t b = 1; b < blocks; ++b)
      if (better(block_best_[b], best)) best = block_best_[b];
    const int64_t best_total = best.total;

    out.scored = true;
    out.chosen = static_cast<int32_t>(feasible_[best.index]);
    out.chosen_total = best_total;

    if (req.want_scores) {
      out.scored_nodes = feasible_;
      out.raw_scores.assign(raw_.begin(), raw_.end());
      out.normalized_scores.assign(norm_.begin(), norm_.end());
      out.totals.assign(totals_.begin(), totals_.end());
    }
    if (req.want_sorted) {
      sorted_.resize(F);
      for (uint32_t i = 0; i < F; ++i) sorted_[i] = {selection_key(totals_[i], feasible_[i], q), feasible_[i]};
      sort_by_key_descending(sorted_, sort_tmp_);
      out.sorted_nodes.resize(F);
      out.sorted_keys.resize(F);
      for (uint32_t i = 0; i < F; ++i) {
        out.sorted_keys[i] = sorted_[i].first;
        out.sorted_nodes[i] = sorted_[i].second;
      }
    }
  }

  // Descending key, ascending node on equal keys: a stable LSD radix sort on
  // the complemented key over the bytes where keys differ (as CUB's
  // begin/end bits skip passes), then equal-key runs put in node order.
  static void sort_by_key_descending(std::vector<std::pair<uint64_t, uint32_t>>& v,
                                     std::vector<std::pair<uint64_t, uint32_t>>& tmp) {
    uint64_t any = 0, all = ~uint64_t(0);
    for (const auto& e : v) {
      any |= ~e.first;
      all &= ~e.first;
    }
    const uint64_t varying = any ^ all;
    tmp.resize(v.size());
    for (int shift = 0; shift < 64; shift += 8) {
      if (((varying >> shift) & 0xFF) == 0) continue;
      uint32_t count[257] = {};
      for (const auto& e : v) ++count[((~e.first >> shift) & 0xFF) + 1];
      for (int d = 0; d < 256; ++d) count[d + 1] += count[d];
      for (const auto& e : v) tmp[count[(~e.first >> shift) & 0xFF]++] = e;
      v.swap(tmp);
    }
    for (size_t i = 0; i < v.size();) {
      size_t j = i + 1;
      while (j < v.size() && v[j].first == v[i].first) ++j;
      if (j - i > 1)
        std::sort(v.begin() + static_cast<std::ptrdiff_t>(i), v.begin() + static_cast<std::ptrdiff_t>(j),
                  [](const auto& a, const auto& b) { return a.second < b.second; });
      i = j;
    }
  }

 private:
  static constexpr uint32_t kChunk = 2048;  // nodes filtered (and scored) together, plugin by plugin

  // A chunk size near kChunk that splits n nodes into a multiple of `threads`
  // equal chunks, so static scheduling keeps every thread equally busy.
  static uint32_t balanced_chunk(uint32_t n, int threads) {
    const auto t = static_cast<uint32_t>(threads);
    const uint32_t rounds = std::max(1u, (n + t * kChunk - 1) / (t * kChunk));
    return std::max(1u, (n + t * rounds - 1) / (t * rounds));
  }
  static constexpr uint32_t kParallelMinNodes = 2048;  // below this, threads cost more than they save

  // A run of the visiting order, filtered plugin by plugin.
  struct Chunk {
    std::vector<uint32_t> nodes;  // node at each position
    std::vector<NodeVerdict> verdicts;
    std::vector<uint32_t> alive;     // positions still feasible, ascending
    std::vector<uint32_t> feasible;  // nodes found feasible (parallel path)
    RejectionHistogram rejections;   // of this chunk (parallel path)
  };

  // A candidate for selection: higher total, then higher key, then lower
  // node (feasible_ is in ascending node order except when sampling or
  // restricted, so compare nodes, not positions).
  struct Best {
    int64_t total;
    uint64_t key;
    uint32_t index;  // into feasible_
  };
  bool better(const Best& a, const Best& b) const {
    if (a.total != b.total) return a.total > b.total;
    if (a.key != b.key) return a.key > b.key;
    return feasible_[a.index] < feasible_[b.index];
  }

  // fn(0..n-1) on the pool when `threads` > 1, else inline.
  template <class Fn>
  void run_tasks(int threads, uint32_t n, Fn&& fn) {
    if (threads > 1)
      pool_.run(n, fn);
    else
      for (uint32_t i = 0; i < n; ++i) fn(i);
  }

  template <class NodeAt>
  static void fill_chunk(Chunk& ch, uint32_t base, uint32_t n, const NodeAt& node_at) {
    ch.nodes.resize(n);
    ch.alive.resize(n);
    ch.verdicts.assign(n, NodeVerdict{});
    for (uint32_t i = 0; i < n; ++i) {
      ch.nodes[i] = node_at(base + i);
      ch.alive[i] = i;
    }
  }

  static void filter_chunk(const SnapshotView& s, const PodQueryView& q, Chunk& ch) {
    size_t alive = ch.alive.size();
    for (uint32_t f = 0; f < q.num_filters && alive > 0; ++f) {
      const uint8_t id = q.filters[f];
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

  static void count_rejection(RejectionHistogram& hist, const NodeVerdict& v) {
    for (uint64_t bits = v.reasons; bits; bits &= bits - 1)
      ++hist.at(v.plugin, static_cast<uint32_t>(__builtin_ctzll(bits)));
  }

  int threads_ = 1;
  WorkerPool pool_;
  // Reused across pods: no allocation per pod once grown.
  std::vector<Chunk> chunks_;
  std::vector<uint32_t> feasible_;
  std::vector<int64_t> raw_, norm_, totals_;  // [slot * F + i] for raw_ and norm_
  std::vector<std::pair<uint64_t, uint32_t>> sorted_, sort_tmp_;
  std::vector<NormStats> block_stats_;  // [block * S + slot]
  std::vector<Best> block_best_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(int threads) { return std::make_unique<CpuBackend>(threads); }

}  // namespace bulkscore
