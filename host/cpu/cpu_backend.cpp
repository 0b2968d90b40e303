// The CPU backend: plugin-major loops over chunks of the node columns,
// calling the shared rules and cycle logic (plugins/evaluate.hpp), on a pool
// of threads. Always built; the backend the CUDA backend is compared
// against. Results never depend on the number of threads: work is split into
// chunks of the visiting order and merged in that order.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <string_view>
#include <thread>

#include "host/common.hpp"
#include "host/engine/backend.hpp"
#include "host/engine/executor.hpp"
#include "host/engine/node_filter.hpp"
#include "plugins/simd_dispatch.hpp"

namespace bulkscore {
namespace {

// ---- pass 2 (normalize, weight, total, the block's best), per SIMD target ----

// tot[i] += normalized(raw[i]) * weight for i in [lo, hi), the normalization
// chosen once per slot (norm[i] receives the normalized score when kStore).
// The same integers as weighted_total node by node: integer sums do not
// depend on their order.
template <NormalizeKind K, bool kStore>
[[gnu::always_inline]] inline void add_weighted_kind(NormStats st, int64_t w, const int64_t* __restrict raw,
                                                     int64_t* __restrict norm, int64_t* __restrict tot, uint32_t lo,
                                                     uint32_t hi) {
  for (uint32_t i = lo; i < hi; ++i) {
    const int64_t v = normalize_score(K, raw[i], st);
    if constexpr (kStore) norm[i] = v;
    tot[i] += v * w;
  }
}

template <bool kStore>
[[gnu::always_inline]] inline void add_weighted(NormalizeKind kind, NormStats st, int64_t w, const int64_t* raw,
                                                int64_t* norm, int64_t* tot, uint32_t lo, uint32_t hi) {
  switch (kind) {
    case NormalizeKind::None:
      return add_weighted_kind<NormalizeKind::None, kStore>(st, w, raw, norm, tot, lo, hi);
    case NormalizeKind::Default:
      return add_weighted_kind<NormalizeKind::Default, kStore>(st, w, raw, norm, tot, lo, hi);
    case NormalizeKind::DefaultReverse:
      return add_weighted_kind<NormalizeKind::DefaultReverse, kStore>(st, w, raw, norm, tot, lo, hi);
    case NormalizeKind::Spread:
      return add_weighted_kind<NormalizeKind::Spread, kStore>(st, w, raw, norm, tot, lo, hi);
    case NormalizeKind::MinMax:
      return add_weighted_kind<NormalizeKind::MinMax, kStore>(st, w, raw, norm, tot, lo, hi);
    case NormalizeKind::MinMaxInteger:
      return add_weighted_kind<NormalizeKind::MinMaxInteger, kStore>(st, w, raw, norm, tot, lo, hi);
  }
}

// The totals' inputs for one pod: raw and normalized scores are [slot * F + i].
struct TotalsArgs {
  const PodQueryView* q;
  const NormStats* stats;
  const int64_t* raw;
  int64_t* norm;  // null: normalized scores not kept
  size_t F;
  const uint32_t* feasible;
  int64_t* totals;
  uint64_t slots;   // bit s: slot s is normalized, weighted and added here
  int64_t base;     // added to every total (the constant slots' share)
  bool accumulate;  // the totals hold a partial sum already (else they start at 0)
};

// The block's totals (base, plus the slots of a.slots, plus what they held
// when a.accumulate), and its best: the highest total, the lowest node index
// among equal ones (the order of selection keys, ranks_before, since totals
// lie in [-2^31, 2^31)). Returns the best total; `node` the best node,
// `ties` how many of the block's nodes have that total.
[[gnu::always_inline]] inline int64_t totals_block_body(const TotalsArgs& a, uint32_t lo, uint32_t hi, uint32_t& node,
                                                        uint32_t& ties) {
  int64_t* tot = a.totals;
  if (!a.accumulate)
    for (uint32_t i = lo; i < hi; ++i) tot[i] = a.base;
  else if (a.base != 0)
    for (uint32_t i = lo; i < hi; ++i) tot[i] += a.base;
  for (uint32_t slot = 0; slot < a.q->num_scores; ++slot) {
    if (!((a.slots >> slot) & 1)) continue;
    const int64_t* raw = a.raw + slot * a.F;
    if (a.norm)
      add_weighted<true>(a.q->normalize[slot], a.stats[slot], a.q->weights[slot], raw, a.norm + slot * a.F, tot, lo,
                         hi);
    else
      add_weighted<false>(a.q->normalize[slot], a.stats[slot], a.q->weights[slot], raw, nullptr, tot, lo, hi);
  }
  int64_t top = INT64_MIN;
  for (uint32_t i = lo; i < hi; ++i) top = tot[i] > top ? tot[i] : top;
  // In 64-bit lanes throughout (the node widened), so that the loop
  // vectorizes: mixed widths kept it scalar, a third of pass 2's time.
  uint64_t best = UINT64_MAX, count = 0;
  for (uint32_t i = lo; i < hi; ++i) {
    const uint64_t at_top = -static_cast<uint64_t>(tot[i] == top);
    const uint64_t candidate = static_cast<uint64_t>(a.feasible[i]) | ~at_top;
    best = candidate < best ? candidate : best;
    count -= at_top;
  }
  node = static_cast<uint32_t>(best);  // UINT32_MAX when the block is empty
  ties = static_cast<uint32_t>(count);
  return top;
}

int64_t totals_block_baseline(const TotalsArgs& a, uint32_t lo, uint32_t hi, uint32_t& node, uint32_t& ties) {
  return totals_block_body(a, lo, hi, node, ties);
}
#if BULKSCORE_SIMD_X86
BULKSCORE_TARGET_AVX2 int64_t totals_block_avx2(const TotalsArgs& a, uint32_t lo, uint32_t hi, uint32_t& node,
                                                uint32_t& ties) {
  return totals_block_body(a, lo, hi, node, ties);
}
BULKSCORE_TARGET_AVX512 int64_t totals_block_avx512(const TotalsArgs& a, uint32_t lo, uint32_t hi, uint32_t& node,
                                                    uint32_t& ties) {
  return totals_block_body(a, lo, hi, node, ties);
}
#endif

// A block's min/max of raw scores (add_to_stats over raw[lo, hi)), and
// whether any of them is kIgnoredScore.
struct BlockStats {
  NormStats st;
  bool ignored;
};
[[gnu::always_inline]] inline BlockStats stats_body(const int64_t* __restrict raw, uint32_t lo, uint32_t hi) {
  // add_to_stats on two locals (a reduction compilers vectorize; the struct's
  // members they do not).
  const NormStats empty = empty_norm_stats();
  int64_t mn = empty.min, mx = empty.max, lowest = INT64_MAX;
  for (uint32_t i = lo; i < hi; ++i) {
    const int64_t v = raw[i];
    // kIgnoredScore (INT64_MIN) xor all ones is INT64_MAX: kept out of the min.
    const int64_t for_min = v ^ -static_cast<int64_t>(v == kIgnoredScore);
    mn = std::min(mn, for_min);
    mx = std::max(mx, v);
    lowest = std::min(lowest, v);
  }
  return BlockStats{NormStats{mn, mx}, lowest == kIgnoredScore};
}
BlockStats stats_baseline(const int64_t* raw, uint32_t lo, uint32_t hi) { return stats_body(raw, lo, hi); }
#if BULKSCORE_SIMD_X86
BULKSCORE_TARGET_AVX2 BlockStats stats_avx2(const int64_t* raw, uint32_t lo, uint32_t hi) {
  return stats_body(raw, lo, hi);
}
BULKSCORE_TARGET_AVX512 BlockStats stats_avx512(const int64_t* raw, uint32_t lo, uint32_t hi) {
  return stats_body(raw, lo, hi);
}
#endif

BlockStats block_stats(SimdTarget t, const int64_t* raw, uint32_t lo, uint32_t hi) {
#if BULKSCORE_SIMD_X86
  if (t == SimdTarget::Avx512) return stats_avx512(raw, lo, hi);
  if (t == SimdTarget::Avx2) return stats_avx2(raw, lo, hi);
#else
  (void)t;
#endif
  return stats_baseline(raw, lo, hi);
}

BlockStats merge_block_stats(BlockStats a, BlockStats b) {
  return BlockStats{merge_stats(a.st, b.st), a.ignored || b.ignored};
}

int64_t totals_block(SimdTarget t, const TotalsArgs& a, uint32_t lo, uint32_t hi, uint32_t& node, uint32_t& ties) {
#if BULKSCORE_SIMD_X86
  if (t == SimdTarget::Avx512) return totals_block_avx512(a, lo, hi, node, ties);
  if (t == SimdTarget::Avx2) return totals_block_avx2(a, lo, hi, node, ties);
#else
  (void)t;
#endif
  return totals_block_baseline(a, lo, hi, node, ties);
}

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(std::shared_ptr<Executor> executor)
      : executor_(std::move(executor)), threads_(static_cast<int>(executor_->concurrency())) {}

  const char* name() const override { return "cpu"; }

  // The shared dry_run_node per node, the nodes spread over the pool.
  void dry_run_preemption(const Snapshot& snap, const PodQuery& query, const DryRunBatch& batch,
                          DryRunOutput& out) override {
    dry_run_preemption_on_host(snap, query.view(), batch, out, executor_.get());
  }

  // A window's pods side by side, each on one thread (a lane of its own
  // scratch): one dispatch for the window instead of two per pod, and no
  // pass split finer than its pod. The same results as evaluate: a lane is
  // this backend on the caller's thread alone, and no result depends on
  // threads.
  void evaluate_window(const Snapshot& snap, PodQuery* const* queries, const EvalRequest* reqs, EvalResult* out,
                       size_t n) override {
    if (threads_ <= 1 || n <= 1) {
      for (size_t i = 0; i < n; ++i) evaluate(snap, *queries[i], reqs[i], out[i]);
      return;
    }
    // One lane per thread (its scratch grown once), each taking every
    // lanes-th pod.
    const auto lanes = static_cast<uint32_t>(std::min<size_t>(n, static_cast<size_t>(threads_)));
    while (lanes_.size() < lanes) lanes_.push_back(std::make_unique<CpuBackend>(caller_thread_executor()));
    executor_->for_each(lanes, [&](uint32_t l) {
      for (size_t i = l; i < n; i += lanes) lanes_[l]->evaluate(snap, *queries[i], reqs[i], out[i]);
    });
  }

  uint32_t window_lanes() const override { return static_cast<uint32_t>(threads_); }

  void evaluate(const Snapshot& snap, PodQuery& query, const EvalRequest& req, EvalResult& out) override {
    const SnapshotView s = snap.view();
    PodQueryView q = query.view();
    out.reset();
    const VisitOrder visit = visit_order(snap, req);
    const uint32_t M = visit.count;
    if (req.want_verdicts) out.verdicts.assign(s.num_nodes, NodeVerdict{kNoPlugin, Code::Skip, 0});

    // Filter, plugin-major within chunks of the visiting order: one dispatch
    // per plugin, a tight loop over the nodes still feasible. The first
    // rejecting plugin wins, exactly as in node-major order. Without sampling
    // the chunks are independent and run on all threads; their results are
    // merged in visiting order, so the outcome does not depend on threads.
    feasible_.clear();
    out.processed = M;
    // Each rejected node's verdict (its plugin, code and reasons) where it
    // is read: the verdicts, the histogram. Without, a node that fails a
    // run of filter_nodes is only dropped.
    const bool reasons = req.want_rejections || req.want_verdicts;
    if (!visit.rotate) {
      const int threads = M >= kParallelMinNodes ? threads_ : 1;
      const uint32_t chunk = balanced_chunk(M, threads);
      const uint32_t num_chunks = (M + chunk - 1) / chunk;
      if (chunks_.size() < num_chunks) chunks_.resize(num_chunks);
      run_tasks(threads, num_chunks, [&](uint32_t c) {
        Chunk& ch = chunks_[c];
        const uint32_t base = c * chunk;
        // Verdicts start as "feasible" only where they are all read; else
        // only the rejected positions' are, which Filter writes.
        fill_chunk(ch, base, std::min(chunk, M - base), visit, req.want_verdicts);
        filter_positions(s, q, ch, reasons);
        // The positions still alive are the feasible ones, ascending.
        const auto n = static_cast<uint32_t>(ch.nodes.size());
        const auto alive = static_cast<uint32_t>(ch.alive.size());
        ch.feasible.resize(alive);
        for (uint32_t k = 0; k < alive; ++k) ch.feasible[k] = ch.nodes[ch.alive[k]];
        if (req.want_verdicts)
          for (uint32_t pos = 0; pos < n; ++pos) out.verdicts[ch.nodes[pos]] = ch.verdicts[pos];
        if (alive != n && reasons) {
          RejectionHistogram& hist = ch.rejections;
          hist = RejectionHistogram{};
          // The rejected positions: those between consecutive alive ones.
          uint32_t pos = 0;
          for (uint32_t k = 0; k <= alive; ++k) {
            const uint32_t end = k < alive ? ch.alive[k] : n;
            for (; pos < end; ++pos) count_rejection(hist, ch.verdicts[pos]);
            pos = end + 1;
          }
        }
      });
      for (uint32_t c = 0; c < num_chunks; ++c) {
        const Chunk& ch = chunks_[c];
        feasible_.insert(feasible_.end(), ch.feasible.begin(), ch.feasible.end());
        if (ch.feasible.size() != ch.nodes.size() && reasons)
          for (size_t i = 0; i < out.rejections.counts.size(); ++i) out.rejections.counts[i] += ch.rejections.counts[i];
      }
      // No node feasible: the histogram is read (the FitError message).
      if (feasible_.empty() && !reasons && M > 0) {
        EvalRequest with = req;
        with.want_rejections = true;
        evaluate(snap, query, with, out);
        return;
      }
    } else {
      // Sampling visits in order and stops at the node that completes the sample.
      const uint32_t num_chunks = (M + kChunk - 1) / kChunk;
      if (chunks_.size() < num_chunks) chunks_.resize(num_chunks);
      for (uint32_t c = 0; c < num_chunks; ++c) {
        Chunk& ch = chunks_[c];
        const uint32_t base = c * kChunk;
        const uint32_t n = std::min(kChunk, M - base);
        fill_chunk(ch, base, n, visit, true);
        filter_positions(s, q, ch, true);
        uint32_t cut = n;
        // num_to_find 0 is no limit (every candidate, still in rotated order).
        // The sample is never complete here: the loop stops at the chunk
        // that completes it, so `wanted` >= 1.
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
        // Stop at the node that completes the sample, even when it is the
        // chunk's last position (then cut == n and the next chunk must not
        // be visited).
        if (cut < n || (req.num_to_find != 0 && feasible_.size() == req.num_to_find)) {
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

    // PreScore over the feasible set, for the plugins that need it.
    if (q.prescore_feasible) {
      run_feasible_prescore(snap, query, feasible_.data(), F);
      q = query.view();
    }

    // Pass 1, per block of nodes on all threads, in sub-blocks that keep the
    // node columns the plugins share in L1: every plugin's raw scores
    // (plugin-major, raw_[slot * F + i]), the block's min/max per plugin
    // that normalizes with them, and the total of the plugins that do not
    // (NormalizeKind::None), with the block's best by that partial total.
    const uint32_t S = q.num_scores;
    raw_.resize(static_cast<size_t>(S) * F);
    if (req.want_scores) norm_.resize(static_cast<size_t>(S) * F);
    totals_.resize(F);
    const int threads = F >= kParallelMinNodes ? threads_ : 1;
    const uint32_t block = balanced_chunk(F, threads);
    const uint32_t blocks = (F + block - 1) / block;
    block_stats_.resize(static_cast<size_t>(blocks) * S);
    block_best_.resize(blocks);
    const SimdTarget target = simd_target();
    // A plugin that scores every node the same (uniform_score) is not run:
    // its raw scores are written only where they are read (the lists, and
    // want_totals' scores of the slots that normalize).
    uint64_t plain_slots = 0;  // NormalizeKind::None, not uniform: totalled in pass 1
    uint64_t uniform = 0;      // uniform_score's slots
    uint64_t uniform_raw = 0;  // ... whose raw scores are read
    int64_t uniform_value[kMaxProfilePlugins] = {};
    int64_t plain_base = 0;  // the uniform None slots' share of every total
    for (uint32_t slot = 0; slot < S; ++slot) {
      const uint64_t bit = uint64_t(1) << slot;
      visit_plugin(q.scores[slot], [&](auto plugin) {
        using P = decltype(plugin);
        if constexpr (P::kHasScore && kHasUniformScore<P>)
          if (P::uniform_score(s, plugin_state<P>(q), q.arena, uniform_value[slot]) &&
              uniform_value[slot] != kIgnoredScore)
            uniform |= bit;
      });
      const bool stat = needs_stats(q.normalize[slot]);
      if (uniform & bit) {
        if (req.want_scores || (req.want_totals && stat)) uniform_raw |= bit;
        if (!stat) plain_base += normalize_score(NormalizeKind::None, uniform_value[slot], {}) * q.weights[slot];
      } else if (!stat) {
        plain_slots |= bit;
      }
    }
    NormStats no_stats[kMaxProfilePlugins];  // None reads none
    for (NormStats& st : no_stats) st = empty_norm_stats();
    const TotalsArgs partial{&q,          no_stats,   raw_.data(), nullptr, F, feasible_.data(), totals_.data(),
                             plain_slots, plain_base, false};
    run_tasks(threads, blocks, [&](uint32_t b) {
      const uint32_t lo = b * block, hi = std::min(F, lo + block);
      BlockStats* bs = block_stats_.data() + static_cast<size_t>(b) * S;
      for (uint32_t slot = 0; slot < S; ++slot) bs[slot] = BlockStats{empty_norm_stats(), false};
      Best best{0, INT64_MIN, UINT32_MAX, 0};
      for (uint32_t sub = lo; sub < hi; sub += kSubBlock) {
        const uint32_t end = std::min(hi, sub + kSubBlock);
        for (uint32_t slot = 0; slot < S; ++slot) {
          int64_t* raw = raw_.data() + static_cast<size_t>(slot) * F;
          if ((uniform >> slot) & 1) {
            const int64_t v = uniform_value[slot];
            if ((uniform_raw >> slot) & 1) std::fill(raw + sub, raw + end, v);
            if (needs_stats(q.normalize[slot])) bs[slot] = BlockStats{NormStats{v, v}, false};
            continue;
          }
          visit_plugin(q.scores[slot], [&](auto plugin) {
            using P = decltype(plugin);
            if constexpr (P::kHasScore) {
              const auto& st = plugin_state<P>(q);
              if constexpr (kHasScoreNodes<P>)
                P::score_nodes(s, st, q.arena, feasible_.data() + sub, end - sub, raw + sub);
              else
                for (uint32_t i = sub; i < end; ++i) raw[i] = P::score(s, st, q.arena, feasible_[i]);
            }
          });
          if (needs_stats(q.normalize[slot]))
            bs[slot] = merge_block_stats(bs[slot], block_stats(target, raw, sub, end));
        }
        uint32_t node = UINT32_MAX, ties = 0;
        const int64_t top = totals_block(target, partial, sub, end, node, ties);
        merge_best(best, top, node, ties);
      }
      block_best_[b] = best;
    });
    // Each plugin's min/max over all scored nodes. A plugin whose scores
    // are all equal (none ignored) normalizes every node to the same value:
    // its weighted share is a constant, added without a pass over the nodes.
    NormStats stats[kMaxProfilePlugins];
    uint64_t varying = 0;  // the slots pass 2 adds
    int64_t constant = 0;  // the constant slots' share of every total
    for (uint32_t slot = 0; slot < S; ++slot) {
      BlockStats all{empty_norm_stats(), false};
      for (uint32_t b = 0; b < blocks; ++b) all = merge_block_stats(all, block_stats_[size_t(b) * S + slot]);
      stats[slot] = all.st;
      if (!needs_stats(q.normalize[slot])) continue;
      if (all.st.min == all.st.max && !all.ignored)
        constant += normalize_score(q.normalize[slot], all.st.min, all.st) * q.weights[slot];
      else
        varying |= uint64_t(1) << slot;
    }
    // Pass 2, per block: normalize, weight and add the varying slots (slot
    // by slot, each a loop over the block's nodes with the slot's
    // normalization fixed, which compilers vectorize for the plain kinds),
    // then the block's best node: the highest total, the lowest node index
    // among equal ones (the order of selection keys, ranks_before; totals
    // lie in [-2^31, 2^31)). With every normalized slot constant, pass 1's
    // bests stand (a constant added to every total keeps their order) and
    // the totals only take the constant where they are read. want_scores
    // recomputes every slot, keeping the normalized scores.
    if (varying != 0 || req.want_scores) {
      const TotalsArgs args =
          req.want_scores ? TotalsArgs{&q,
                                       stats,
                                       raw_.data(),
                                       norm_.data(),
                                       F,
                                       feasible_.data(),
                                       totals_.data(),
                                       (uint64_t(1) << S) - 1,
                                       0,
                                       false}
                          : TotalsArgs{&q,      stats,    raw_.data(), nullptr, F, feasible_.data(), totals_.data(),
                                       varying, constant, true};
      run_tasks(threads, blocks, [&](uint32_t b) {
        const uint32_t lo = b * block, hi = std::min(F, lo + block);
        Best& best = block_best_[b];
        best.ties = 0;
        best.node = UINT32_MAX;
        best.total = totals_block(target, args, lo, hi, best.node, best.ties);
      });
    } else {
      for (Best& b : block_best_) b.total += constant;
      if (constant != 0 && (req.want_totals || req.want_sorted || q.tie_break == TieBreak::Random))
        for (uint32_t i = 0; i < F; ++i) totals_[i] += constant;
    }
    for (Best& b : block_best_) b.key = selection_key(b.total, b.node, q);
    Best best = block_best_[0];
    for (uint32_t b = 1; b < blocks; ++b)
      if (ranks_before(block_best_[b].key, block_best_[b].node, best.key, best.node)) best = block_best_[b];

    out.scored = true;
    out.chosen = static_cast<int32_t>(best.node);
    out.chosen_total = best.total;
    if (q.tie_break == TieBreak::Random) {
      if (!visit.order) {
        // The feasible nodes ascend, so the tied node of rank k (pick_tied's
        // choice) is the k-th tie in list order: found from the blocks'
        // tie counts and one block's scan.
        uint64_t tied = 0;
        for (uint32_t b = 0; b < blocks; ++b)
          if (block_best_[b].total == best.total) tied += block_best_[b].ties;
        uint64_t k = tie_rank(tied, q);
        for (uint32_t b = 0; b < blocks; ++b) {
          if (block_best_[b].total != best.total) continue;
          if (k >= block_best_[b].ties) {
            k -= block_best_[b].ties;
            continue;
          }
          const uint32_t lo = b * block, hi = std::min(F, lo + block);
          for (uint32_t i = lo; i < hi; ++i)
            if (totals_[i] == best.total && k-- == 0) {
              out.chosen = static_cast<int32_t>(feasible_[i]);
              break;
            }
          break;
        }
      } else {
        out.chosen = static_cast<int32_t>(pick_tied(
            F, best.total, [&](size_t i) { return totals_[i]; }, [&](size_t i) { return feasible_[i]; }, q, tied_,
            best.node));
      }
    }

    if (req.want_sorted) {
      sorted_.resize(F);
      for (uint32_t i = 0; i < F; ++i) sorted_[i] = {selection_key(totals_[i], feasible_[i], q), feasible_[i]};
      radix_sort_by_key_descending(sorted_, sort_tmp_);
      out.sorted_nodes.resize(F);
      out.sorted_keys.resize(F);
      for (uint32_t i = 0; i < F; ++i) {
        out.sorted_keys[i] = sorted_[i].first;
        out.sorted_nodes[i] = sorted_[i].second;
      }
      order_equal_keys_by_node(out.sorted_keys.data(), out.sorted_nodes.data(), F);
    }
    // The lists are handed over, not copied: the result's previous buffers
    // (reset keeps their memory) come back as this backend's scratch, which
    // the next evaluation sizes afresh.
    if (req.want_scores) {
      out.scored_nodes.swap(feasible_);
      out.raw_scores.swap(raw_);
      out.normalized_scores.swap(norm_);
      out.totals.swap(totals_);
    } else if (req.want_totals) {
      append_stat_scores(q, raw_.data(), F, out.stat_scores);
      out.scored_nodes.swap(feasible_);
      out.totals.swap(totals_);
    }
  }

  // Descending key, stable: an LSD radix sort on the complemented key over
  // the bytes where keys differ (as CUB's begin/end bits skip passes).
  static void radix_sort_by_key_descending(std::vector<std::pair<uint64_t, uint32_t>>& v,
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
  static constexpr uint32_t kParallelMinNodes = 2048;
  // Nodes scored together by every plugin in turn: the columns they share
  // (allocatable, requested) and their raw scores stay in L1 between them.
  static constexpr uint32_t kSubBlock = 512;  // below this, threads cost more than they save

  // A run of the visiting order, filtered plugin by plugin (filter_positions).
  struct Chunk : FilterScratch {
    std::vector<uint32_t> feasible;  // nodes found feasible (parallel path)
    RejectionHistogram rejections;   // of this chunk (parallel path)
  };

  // A block's best node so far (node UINT32_MAX: none yet).
  struct Best {
    uint64_t key;
    int64_t total;
    uint32_t node;
    uint32_t ties;  // the block's nodes with that total
  };

  // `best` joined with a sub-block's best (its total, lowest node of that
  // total, and how many nodes have it).
  static void merge_best(Best& best, int64_t total, uint32_t node, uint32_t ties) {
    if (total > best.total) {
      best.total = total;
      best.node = node;
      best.ties = ties;
    } else if (total == best.total) {
      best.node = std::min(best.node, node);
      best.ties += ties;
    }
  }

  // fn(0..n-1) on the pool when `threads` > 1, else inline.
  template <class Fn>
  void run_tasks(int threads, uint32_t n, Fn&& fn) {
    if (threads > 1)
      executor_->for_each(n, fn);
    else
      for (uint32_t i = 0; i < n; ++i) fn(i);
  }

  // The chunk's nodes and alive positions; its verdicts reset to feasible
  // when `reset_verdicts` (else only sized: Filter writes the rejected ones).
  static void fill_chunk(Chunk& ch, uint32_t base, uint32_t n, const VisitOrder& visit, bool reset_verdicts) {
    ch.nodes.resize(n);
    ch.alive.resize(n);
    if (reset_verdicts)
      ch.verdicts.assign(n, NodeVerdict{});
    else
      ch.verdicts.resize(n);
    if (!visit.order)
      for (uint32_t i = 0; i < n; ++i) ch.nodes[i] = base + i;
    else
      for (uint32_t i = 0; i < n; ++i) ch.nodes[i] = visit.node_at(base + i);
    for (uint32_t i = 0; i < n; ++i) ch.alive[i] = i;
  }

  static void count_rejection(RejectionHistogram& hist, const NodeVerdict& v) {
    for_each_rejection_bin(v, [&](uint32_t bin) { ++hist.counts[bin]; });
  }

  std::shared_ptr<Executor> executor_;
  int threads_ = 1;
  // Reused across pods: no allocation per pod once grown.
  std::vector<Chunk> chunks_;
  std::vector<uint32_t> feasible_, tied_;
  std::vector<int64_t> raw_, norm_, totals_;  // [slot * F + i] for raw_ and norm_
  std::vector<std::pair<uint64_t, uint32_t>> sorted_, sort_tmp_;
  std::vector<BlockStats> block_stats_;  // [block * S + slot]
  std::vector<Best> block_best_;
  std::vector<std::unique_ptr<CpuBackend>> lanes_;  // evaluate_window's, one per thread
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(int threads) {
  return std::make_unique<CpuBackend>(make_thread_pool(static_cast<unsigned>(std::max(threads, 0))));
}

std::unique_ptr<Backend> make_cpu_backend(std::shared_ptr<Executor> executor) {
  if (!executor) throw Error("make_cpu_backend: no executor");
  return std::make_unique<CpuBackend>(std::move(executor));
}

}  // namespace bulkscore
