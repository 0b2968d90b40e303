// The CPU backend: plugin-major loops over chunks of the node columns,
// calling the shared rules and cycle logic (plugins/evaluate.hpp), on a pool
// of threads. Always built; the backend the CUDA backend is compared
// against. Results never depend on the number of threads: work is split into
// chunks of the visiting order and merged in that order.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <string_view>
#include <thread>

#include "host/common.hpp"
#include "host/engine/backend.hpp"
#include "host/engine/batch_cache.hpp"
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
// The pass folds in what would be passes of their own: kFirst, the totals
// start here at `base` (no pass that sets them first); kLast, the block's
// highest total is taken here (no pass that reads them again); it returns
// it (INT64_MIN otherwise).
// kUnit: the weight is 1 (NodeResourcesFit's and BalancedAllocation's by
// default), added without the multiply (a 64-bit vector multiply is three
// micro-ops on Intel's AVX-512); v * 1 is v, so the sum is the same.
template <NormalizeKind K, bool kStore, bool kFirst, bool kLast, bool kUnit = false>
[[gnu::always_inline]] inline int64_t add_weighted_kind(NormStats st, int64_t w, const int64_t* __restrict raw,
                                                        int64_t* __restrict norm, int64_t* __restrict tot, int64_t base,
                                                        uint32_t lo, uint32_t hi) {
  int64_t top = INT64_MIN;
  for (uint32_t i = lo; i < hi; ++i) {
    const int64_t v = normalize_score(K, raw[i], st);
    if constexpr (kStore) norm[i] = v;
    const int64_t t = go_add(kFirst ? base : tot[i], kUnit ? v : go_mul(v, w));  // weighted_total's wrapping sum
    tot[i] = t;
    if constexpr (kLast) top = t > top ? t : top;
  }
  return top;
}

template <bool kStore, bool kFirst, bool kLast>
[[gnu::always_inline]] inline int64_t add_weighted(NormalizeKind kind, NormStats st, int64_t w, const int64_t* raw,
                                                   int64_t* norm, int64_t* tot, int64_t base, uint32_t lo,
                                                   uint32_t hi) {
  switch (kind) {
    case NormalizeKind::None:
      // Unnormalized slots carry the unit weights (the other kinds' default
      // weights are 2 and 3).
      if (w == 1)
        return add_weighted_kind<NormalizeKind::None, kStore, kFirst, kLast, true>(st, w, raw, norm, tot, base, lo, hi);
      return add_weighted_kind<NormalizeKind::None, kStore, kFirst, kLast>(st, w, raw, norm, tot, base, lo, hi);
    case NormalizeKind::Default:
      return add_weighted_kind<NormalizeKind::Default, kStore, kFirst, kLast>(st, w, raw, norm, tot, base, lo, hi);
    case NormalizeKind::DefaultReverse:
      return add_weighted_kind<NormalizeKind::DefaultReverse, kStore, kFirst, kLast>(st, w, raw, norm, tot, base, lo,
                                                                                     hi);
    case NormalizeKind::Spread:
      return add_weighted_kind<NormalizeKind::Spread, kStore, kFirst, kLast>(st, w, raw, norm, tot, base, lo, hi);
    case NormalizeKind::MinMax:
      return add_weighted_kind<NormalizeKind::MinMax, kStore, kFirst, kLast>(st, w, raw, norm, tot, base, lo, hi);
    case NormalizeKind::MinMaxInteger:
      return add_weighted_kind<NormalizeKind::MinMaxInteger, kStore, kFirst, kLast>(st, w, raw, norm, tot, base, lo,
                                                                                    hi);
  }
  return INT64_MIN;
}

// Two unnormalized unit-weight slots in one pass (the default profile's
// NodeResourcesFit and BalancedAllocation): add_weighted_kind<None, false,
// kFirst, kLast, true> of `a` then of `b`, reading and writing the totals
// once. Wrapping integer sums do not depend on their order.
template <bool kFirst, bool kLast>
[[gnu::always_inline]] inline int64_t add_unit_pair(const int64_t* __restrict a, const int64_t* __restrict b,
                                                    int64_t* __restrict tot, int64_t base, uint32_t lo, uint32_t hi) {
  const NormStats none{};
  int64_t top = INT64_MIN;
  for (uint32_t i = lo; i < hi; ++i) {
    const int64_t va = normalize_score(NormalizeKind::None, a[i], none);
    const int64_t vb = normalize_score(NormalizeKind::None, b[i], none);
    const int64_t t = go_add(go_add(kFirst ? base : tot[i], va), vb);
    tot[i] = t;
    if constexpr (kLast) top = t > top ? t : top;
  }
  return top;
}

template <bool kStore>
[[gnu::always_inline]] inline int64_t add_weighted_at(bool first, bool last, NormalizeKind kind, NormStats st,
                                                      int64_t w, const int64_t* raw, int64_t* norm, int64_t* tot,
                                                      int64_t base, uint32_t lo, uint32_t hi) {
  if (first)
    return last ? add_weighted<kStore, true, true>(kind, st, w, raw, norm, tot, base, lo, hi)
                : add_weighted<kStore, true, false>(kind, st, w, raw, norm, tot, base, lo, hi);
  return last ? add_weighted<kStore, false, true>(kind, st, w, raw, norm, tot, base, lo, hi)
              : add_weighted<kStore, false, false>(kind, st, w, raw, norm, tot, base, lo, hi);
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
  // The slots added here, ascending (slot < num_scores <= 64).
  uint64_t slots = a.slots;
  if (a.q->num_scores < 64) slots &= (uint64_t(1) << a.q->num_scores) - 1;
  int64_t top = INT64_MIN;
  if (slots == 0 || (a.accumulate && a.base != 0)) {
    // No slot to start the totals or take the highest in its pass, or a
    // base to add to a partial sum: a pass of its own.
    if (!a.accumulate)
      for (uint32_t i = lo; i < hi; ++i) tot[i] = a.base;
    else if (a.base != 0)
      for (uint32_t i = lo; i < hi; ++i) tot[i] += a.base;
    if (slots == 0)
      for (uint32_t i = lo; i < hi; ++i) top = tot[i] > top ? tot[i] : top;
  }
  // The first slot's pass starts the totals (unless they hold a partial
  // sum), the last one's takes the highest: one pass a slot.
  bool first = !a.accumulate;
  const auto unit_plain = [&](uint32_t slot) {
    return a.q->normalize[slot] == NormalizeKind::None && a.q->weights[slot] == 1;
  };
  while (slots != 0) {
    const auto slot = static_cast<uint32_t>(__builtin_ctzll(slots));
    slots &= slots - 1;
    if (!a.norm && slots != 0 && unit_plain(slot)) {
      const auto next = static_cast<uint32_t>(__builtin_ctzll(slots));
      if (unit_plain(next)) {
        // Two in one pass: the totals read and written once for both.
        slots &= slots - 1;
        const bool last = slots == 0;
        const int64_t* ra = a.raw + slot * a.F;
        const int64_t* rb = a.raw + next * a.F;
        const int64_t t = first ? (last ? add_unit_pair<true, true>(ra, rb, tot, a.base, lo, hi)
                                        : add_unit_pair<true, false>(ra, rb, tot, a.base, lo, hi))
                                : (last ? add_unit_pair<false, true>(ra, rb, tot, a.base, lo, hi)
                                        : add_unit_pair<false, false>(ra, rb, tot, a.base, lo, hi));
        if (last) top = t;
        first = false;
        continue;
      }
    }
    const bool last = slots == 0;
    const int64_t* raw = a.raw + slot * a.F;
    const int64_t t =
        a.norm ? add_weighted_at<true>(first, last, a.q->normalize[slot], a.stats[slot], a.q->weights[slot], raw,
                                       a.norm + slot * a.F, tot, a.base, lo, hi)
               : add_weighted_at<false>(first, last, a.q->normalize[slot], a.stats[slot], a.q->weights[slot], raw,
                                        nullptr, tot, a.base, lo, hi);
    if (last) top = t;
    first = false;
  }
  // In 64-bit lanes throughout (the node widened), so that the loop
  // vectorizes: mixed widths kept it scalar, a third of pass 2's time.
  // Signed: AVX2 has the signed 64-bit compare, an unsigned one costs two
  // more instructions.
  int64_t best = INT64_MAX;
  uint64_t count = 0;
  for (uint32_t i = lo; i < hi; ++i) {
    const int64_t at_top = -static_cast<int64_t>(tot[i] == top);
    const int64_t candidate = (static_cast<int64_t>(a.feasible[i]) & at_top) | (INT64_MAX & ~at_top);
    best = candidate < best ? candidate : best;
    count -= static_cast<uint64_t>(at_top);
  }
  node = static_cast<uint32_t>(best);  // UINT32_MAX (INT64_MAX's low half) when the block is empty
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
    // Where nothing needs the whole feasible set between Filter and Score
    // (no feasible-set PreScore, no list, no random draw over an unsorted
    // list), each chunk is filtered and scored in one task: one dispatch to
    // the threads instead of two, the chunk's columns still in cache. Its
    // scores stay where the chunk sits in the visiting order (raw_[slot * M
    // + chunk start + i]); the ranges below say where.
    // want_totals' lists are gathered from the ranges afterwards, in node
    // order (light_lists), where the visit ascends.
    const bool fused = !visit.rotate && !q.prescore_feasible && !req.want_scores &&
                       !(req.want_totals && visit.order) && !req.want_sorted && !req.want_verdicts &&
                       !(q.tie_break == TieBreak::Random && visit.order);
    ranges_.clear();
    size_t stride = 0;  // raw_[slot * stride + i]
    int threads = 1;
    ScorePlan sp;
    if (!visit.rotate) {
      threads = M >= kParallelMinNodes ? threads_ : 1;
      const uint32_t chunk = balanced_chunk(M, threads);
      const uint32_t num_chunks = (M + chunk - 1) / chunk;
      if (chunks_.size() < num_chunks) chunks_.resize(num_chunks);
      if (fused) {
        sp = plan_scores(s, q, req, !reasons, false);
        stride = M;
        raw_.resize(static_cast<size_t>(q.num_scores) * M);
        totals_.resize(M);
        block_stats_.resize(static_cast<size_t>(num_chunks) * q.num_scores);
        block_best_.resize(num_chunks);
        if (sub_tops_.size() < num_chunks) sub_tops_.resize(num_chunks);
      }
      run_tasks(threads, num_chunks, [&](uint32_t c) {
        Chunk& ch = chunks_[c];
        const uint32_t base = c * chunk;
        filter_chunk(s, q, visit, req, reasons, base, std::min(chunk, M - base), ch, out, sp.filter_id);
        if (fused && !ch.feasible.empty()) {
          Range r{ch.feasible.data(), static_cast<uint32_t>(ch.feasible.size()), base, c};
          block_best_[c] = score_range(s, q, sp, r, stride, block_stats_.data() + static_cast<size_t>(c) * q.num_scores);
          ch.feasible.resize(r.count);  // less the nodes the kernel's Filter dropped
        }
      });
      for (uint32_t c = 0; c < num_chunks; ++c) {
        Chunk& ch = chunks_[c];
        if (fused) {
          if (!ch.feasible.empty()) {
            ranges_.push_back(Range{ch.feasible.data(), static_cast<uint32_t>(ch.feasible.size()), c * chunk, c});
          }
        } else {
          feasible_.insert(feasible_.end(), ch.feasible.begin(), ch.feasible.end());
        }
        if (ch.rejected && reasons)
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
        fill_chunk(ch, base, n, visit, true, true);
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

    uint32_t F = static_cast<uint32_t>(feasible_.size());
    if (fused) {
      F = 0;
      for (const Range& r : ranges_) F += r.count;
    }
    out.num_feasible = F;
    if (F == 0) {
      // The histogram is read (the FitError message): filter again with it.
      if (!reasons && M > 0) {
        EvalRequest with = req;
        with.want_rejections = true;
        evaluate(snap, query, with, out);
      }
      return;
    }
    if (F == 1 && !req.score_single) {  // upstream picks a lone feasible node without scoring
      const uint32_t lone = fused ? ranges_[0].nodes[0] : feasible_[0];
      out.chosen = static_cast<int32_t>(lone);
      if (req.want_scores) out.scored_nodes = {lone};
      if (req.want_sorted) {
        out.sorted_nodes = {lone};
        out.sorted_keys = {selection_key(0, lone, q)};
      }
      return;
    }

    if (!fused) {
      // PreScore over the feasible set, for the plugins that need it.
      if (q.prescore_feasible) {
        run_feasible_prescore(snap, query, feasible_.data(), F);
        q = query.view();
      }
      // Pass 1 over blocks of the feasible list on all threads (score_range).
      sp = plan_scores(s, q, req, false, true);
      stride = F;
      raw_.resize(static_cast<size_t>(q.num_scores) * F);
      totals_.resize(F);
      threads = F >= kParallelMinNodes ? threads_ : 1;
      const uint32_t block = balanced_chunk(F, threads);
      const uint32_t blocks = (F + block - 1) / block;
      for (uint32_t b = 0; b < blocks; ++b)
        ranges_.push_back(
            Range{feasible_.data() + static_cast<size_t>(b) * block, std::min(block, F - b * block), b * block, b});
      block_stats_.resize(static_cast<size_t>(blocks) * q.num_scores);
      block_best_.resize(blocks);
      if (sub_tops_.size() < blocks) sub_tops_.resize(blocks);
      run_tasks(threads, blocks, [&](uint32_t b) {
        block_best_[b] =
            score_range(s, q, sp, ranges_[b], stride, block_stats_.data() + static_cast<size_t>(b) * q.num_scores);
      });
    }
    if (req.want_scores) norm_.resize(static_cast<size_t>(q.num_scores) * F);
    const auto nranges = static_cast<uint32_t>(ranges_.size());
    const auto stats_of = [&](uint32_t k) {
      return block_stats_.data() + static_cast<size_t>(ranges_[k].block) * q.num_scores;
    };
    const auto best_of = [&](uint32_t k) -> Best& { return block_best_[ranges_[k].block]; };

    // Each plugin's min/max over all scored nodes. A plugin whose scores
    // are all equal (none ignored) normalizes every node to the same value:
    // its weighted share is a constant, added without a pass over the nodes.
    const uint32_t S = q.num_scores;
    NormStats stats[kMaxProfilePlugins];
    uint64_t varying = 0;  // the slots pass 2 adds
    int64_t constant = 0;  // the constant slots' share of every total
    for (uint32_t slot = 0; slot < S; ++slot) {
      BlockStats all{empty_norm_stats(), false};
      for (uint32_t k = 0; k < nranges; ++k) all = merge_block_stats(all, stats_of(k)[slot]);
      stats[slot] = all.st;
      if (!needs_stats(q.normalize[slot])) continue;
      if (all.st.min == all.st.max && !all.ignored)
        constant += normalize_score(q.normalize[slot], all.st.min, all.st) * q.weights[slot];
      else
        varying |= uint64_t(1) << slot;
    }
    // Pass 2, per range: normalize, weight and add the varying slots (slot
    // by slot, each a loop over the range's nodes with the slot's
    // normalization fixed, which compilers vectorize for the plain kinds),
    // then the range's best node: the highest total, the lowest node index
    // among equal ones (the order of selection keys, ranks_before; totals
    // lie in [-2^31, 2^31)). With every normalized slot constant, pass 1's
    // bests stand (a constant added to every total keeps their order) and
    // the totals only take the constant where they are read. want_scores
    // recomputes every slot, keeping the normalized scores.
    const SimdTarget target = simd_target();
    int64_t pending = 0;  // what totals_ lacks of the totals (the constant, where only the best took it)
    // Whether totals_ still hold pass 1's partial totals, which its
    // sub-blocks' tops (sub_tops_) describe.
    bool partial_totals = true;
    if (varying != 0 || req.want_scores) {
      partial_totals = false;
      run_tasks(threads, nranges, [&](uint32_t k) {
        const Range& r = ranges_[k];
        const TotalsArgs args = req.want_scores
                                    ? TotalsArgs{&q,     stats,   raw_.data() + r.offset,    norm_.data() + r.offset,
                                                 stride, r.nodes, totals_.data() + r.offset, (uint64_t(1) << S) - 1,
                                                 0,      false}
                                    : TotalsArgs{&q,       stats,   raw_.data() + r.offset,    nullptr,
                                                 stride,   r.nodes, totals_.data() + r.offset, varying,
                                                 constant, true};
        Best& best = best_of(k);
        best.ties = 0;
        best.node = UINT32_MAX;
        best.total = totals_block(target, args, 0, r.count, best.node, best.ties);
      });
    } else {
      for (uint32_t k = 0; k < nranges; ++k) best_of(k).total += constant;
      // The lists read the totals; the random tie's scan below compares
      // them with the best less what they lack (`pending`).
      if (constant != 0 && (req.want_totals || req.want_sorted)) {
        for (const Range& r : ranges_) add_constant(totals_.data() + r.offset, r.count, constant);
        partial_totals = false;
      } else {
        pending = constant;
      }
    }
    for (uint32_t k = 0; k < nranges; ++k) best_of(k).key = selection_key(best_of(k).total, best_of(k).node, q);
    Best best = best_of(0);
    for (uint32_t k = 1; k < nranges; ++k)
      if (ranks_before(best_of(k).key, best_of(k).node, best.key, best.node)) best = best_of(k);

    out.scored = true;
    out.chosen = static_cast<int32_t>(best.node);
    out.chosen_total = best.total;
    if (q.tie_break == TieBreak::Random) {
      if (!visit.order) {
        // The feasible nodes ascend, so the tied node of rank k (pick_tied's
        // choice) is the k-th tie in list order: found from the ranges'
        // tie counts and one range's scan.
        uint64_t tied = 0;
        for (uint32_t k = 0; k < nranges; ++k)
          if (best_of(k).total == best.total) tied += best_of(k).ties;
        uint64_t rank = tie_rank(tied, q);
        for (uint32_t k = 0; k < nranges; ++k) {
          const Best& b = best_of(k);
          if (b.total != best.total) continue;
          if (rank >= b.ties) {
            rank -= b.ties;
            continue;
          }
          const Range& r = ranges_[k];
          const int64_t value = best.total - pending;
          const uint32_t i = partial_totals ? nth_equal_in_sub_blocks(sub_tops_[r.block], totals_.data() + r.offset,
                                                                      r.count, value, rank)
                                            : nth_equal(totals_.data() + r.offset, r.count, value, rank);
          if (i < r.count) out.chosen = static_cast<int32_t>(r.nodes[i]);
          break;
        }
      } else {  // not fused: the feasible list, the totals parallel to it
        out.chosen = static_cast<int32_t>(pick_tied(
            F, best.total - pending, [&](size_t i) { return totals_[i]; }, [&](size_t i) { return feasible_[i]; }, q,
            tied_, best.node));
      }
    }

    // The lists (never fused: feasible_, raw_ and totals_ in list order).
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
    } else if (req.want_totals && fused) {
      light_lists(q, sp, stride, F, best.total, out);
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
    bool rejected = false;           // Filter rejected a position (parallel path)
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
  // A sub-block of a range's pass 1: its positions [lo, hi), its highest
  // partial total and how many of its nodes have it.
  struct SubTop {
    uint32_t lo, hi;
    int64_t top;
    uint32_t ties;
  };

  // Where a range of scored nodes keeps its scores: raw_[slot * stride +
  // offset + i] and totals_[offset + i] for nodes[i], i < count.
  struct Range {
    uint32_t* nodes;
    uint32_t count;
    uint32_t offset;
    uint32_t block;  // its block_stats_ and block_best_ index
  };

  // What scoring a pod needs to know before any node: the plugins that
  // score every node alike (uniform_score, not run: their raw scores are
  // written only where they are read, the lists and want_totals' scores of
  // the slots that normalize), and the slots totalled in pass 1.
  struct ScorePlan {
    uint64_t plain_slots = 0;  // NormalizeKind::None, not uniform
    uint64_t uniform = 0;      // uniform_score's slots
    uint64_t uniform_raw = 0;  // ... whose raw scores are read
    int64_t plain_base = 0;    // the uniform None slots' share of every total
    int64_t uniform_value[kMaxProfilePlugins] = {};
    NormStats no_stats[kMaxProfilePlugins];  // None reads none
    uint64_t shared = 0;  // slots scored by a shared kernel (shared_score)
    SharedScorePart shared_part[kMaxProfilePlugins];
    // A Filter plugin run in a shared kernel (shared_filter) instead of
    // before Score: its part, and the first slot of its kernel (kNoPlugin:
    // none).
    uint8_t filter_id = kNoPlugin;
    uint32_t filter_lead = 0;
    SharedScorePart filter_part;
  };

  // `defer_filter`: where no rejection reasons are read, a Filter plugin
  // with shared_filter may run in the kernel of a shared score slot.
  // `uniform_rows`: want_totals lists every normalizing slot's raw scores
  // (append_stat_scores), the uniform ones too; light_lists gives their
  // bounds instead.
  static ScorePlan plan_scores(const SnapshotView& s, const PodQueryView& q, const EvalRequest& req,
                               bool defer_filter, bool uniform_rows) {
    ScorePlan sp;
    for (NormStats& st : sp.no_stats) st = empty_norm_stats();
    for (uint32_t slot = 0; slot < q.num_scores; ++slot) {
      const uint64_t bit = uint64_t(1) << slot;
      visit_plugin(q.scores[slot], [&](auto plugin) {
        using P = decltype(plugin);
        if constexpr (P::kHasScore && kHasUniformScore<P>)
          if (P::uniform_score(s, plugin_state<P>(q), q.arena, sp.uniform_value[slot]) &&
              sp.uniform_value[slot] != kIgnoredScore)
            sp.uniform |= bit;
        if constexpr (P::kHasScore && kHasSharedScore<P>)
          if (!(sp.uniform & bit) && P::shared_score(plugin_state<P>(q), q.arena, sp.shared_part[slot]))
            sp.shared |= bit;
      });
      const bool stat = needs_stats(q.normalize[slot]);
      if (sp.uniform & bit) {
        if (req.want_scores || (req.want_totals && stat && uniform_rows)) sp.uniform_raw |= bit;
        if (!stat) sp.plain_base += normalize_score(NormalizeKind::None, sp.uniform_value[slot], {}) * q.weights[slot];
      } else if (!stat) {
        sp.plain_slots |= bit;
      }
    }
    for (uint32_t f = 0; defer_filter && sp.shared != 0 && f < q.num_filters && sp.filter_id == kNoPlugin; ++f) {
      visit_plugin(q.filters[f], [&](auto plugin) {
        using P = decltype(plugin);
        if constexpr (P::kHasFilter && kHasSharedFilter<P>) {
          SharedScorePart part;
          if (!P::shared_filter(plugin_state<P>(q), q.arena, part)) return;
          for (uint32_t slot = 0; slot < q.num_scores; ++slot)
            if (((sp.shared >> slot) & 1) && sp.shared_part[slot].kernel == part.kernel) {
              sp.filter_id = q.filters[f];
              sp.filter_lead = slot;
              sp.filter_part = part;
              return;
            }
        }
      });
    }
    return sp;
  }

  // want_totals from the fused ranges (in node order: the visit ascends):
  // the scored nodes, their totals (whole: the constant added) and the
  // rows of the normalizing slots whose values differ, with every such
  // slot's bounds, the highest total and its count (EvalResult's summary).
  // A uniform slot's bounds are its one value on every node: no row.
  void light_lists(const PodQueryView& q, const ScorePlan& sp, size_t stride, uint32_t F, int64_t best_total,
                   EvalResult& out) {
    out.scored_nodes.reserve(F);
    out.totals.reserve(F);
    uint64_t top_count = 0;
    for (uint32_t k = 0; k < ranges_.size(); ++k) {
      const Range& r = ranges_[k];
      out.scored_nodes.insert(out.scored_nodes.end(), r.nodes, r.nodes + r.count);
      out.totals.insert(out.totals.end(), totals_.data() + r.offset, totals_.data() + r.offset + r.count);
      const Best& b = block_best_[r.block];
      if (b.total == best_total) top_count += b.ties;
    }
    for (uint32_t slot = 0; slot < q.num_scores; ++slot) {
      if (!needs_stats(q.normalize[slot])) continue;
      if ((sp.uniform >> slot) & 1) {
        const int64_t v = sp.uniform_value[slot];  // never kIgnoredScore (plan_scores)
        out.stat_bounds.push_back(ScoreBounds{v, v, F, F});
        continue;
      }
      const size_t row = out.stat_scores.size();
      out.stat_scores.reserve(row + F);
      for (const Range& r : ranges_) {
        const int64_t* raw = raw_.data() + slot * stride + r.offset;
        out.stat_scores.insert(out.stat_scores.end(), raw, raw + r.count);
      }
      const ScoreBounds b = score_bounds(out.stat_scores.data() + row, F);
      out.stat_bounds.push_back(b);
      if (!stat_row_needed(b, F)) out.stat_scores.resize(row);
    }
    out.top_known = true;
    out.top_total = best_total;
    out.top_count = static_cast<uint32_t>(top_count);
    out.ascending = true;
  }

  // Pass 1 over a range, in sub-blocks that keep the node columns the
  // plugins share in L1: every plugin's raw scores (plugin-major), the
  // range's min/max per plugin that normalizes with them (bs[slot]), and
  // the total of the plugins that do not (NormalizeKind::None). Returns the
  // range's best by that partial total. With a Filter plugin in a shared
  // kernel (sp.filter_id), each sub-block's nodes that fail it are dropped
  // before any other plugin scores them: the range's nodes and scores move
  // down over them, and r.count becomes the nodes kept.
  Best score_range(const SnapshotView& s, const PodQueryView& q, const ScorePlan& sp, Range& r, size_t stride,
                   BlockStats* bs) {
    const uint32_t S = q.num_scores;
    const SimdTarget target = simd_target();
    for (uint32_t slot = 0; slot < S; ++slot) bs[slot] = BlockStats{empty_norm_stats(), false};
    const TotalsArgs partial{&q,
                             sp.no_stats,
                             raw_.data() + r.offset,
                             nullptr,
                             stride,
                             r.nodes,
                             totals_.data() + r.offset,
                             sp.plain_slots,
                             sp.plain_base,
                             false};
    Best best{0, INT64_MIN, UINT32_MAX, 0};
    std::vector<SubTop>& subs = sub_tops_[r.block];
    subs.clear();
    uint32_t kept = 0;       // positions [0, kept) hold the nodes that passed the kernel's Filter so far
    bool speculate = true;   // score a sub-block before the kernel's Filter drops nodes (see below)
    for (uint32_t next = 0; next < r.count; next += kSubBlock) {
      uint32_t sub = next, end = std::min(r.count, next + kSubBlock);
      uint64_t shared_done = 0;  // this sub-block's slots a shared kernel wrote
      if (sp.filter_id != kNoPlugin) {
        const uint32_t passed = filter_in_kernel(s, q, sp, r, stride, next, end, kept, speculate, shared_done);
        sub = kept;
        kept += passed;
        end = kept;
        if (passed == 0) continue;
      }
      for (uint32_t slot = 0; slot < S; ++slot) {
        int64_t* raw = raw_.data() + slot * stride + r.offset;
        if ((sp.uniform >> slot) & 1) {
          const int64_t v = sp.uniform_value[slot];
          if ((sp.uniform_raw >> slot) & 1) std::fill(raw + sub, raw + end, v);
          if (needs_stats(q.normalize[slot])) bs[slot] = BlockStats{NormStats{v, v}, false};
          continue;
        }
        if ((sp.shared >> slot) & 1) {
          if (!((shared_done >> slot) & 1))
            shared_done |= run_shared_kernel(s, q, sp, r, stride, slot, r.nodes + sub, end - sub, sub, nullptr);
        } else {
          visit_plugin(q.scores[slot], [&](auto plugin) {
          using P = decltype(plugin);
            if constexpr (P::kHasScore) {
              const auto& st = plugin_state<P>(q);
              if constexpr (kHasScoreNodes<P>)
                P::score_nodes(s, st, q.arena, r.nodes + sub, end - sub, raw + sub);
              else
                for (uint32_t i = sub; i < end; ++i) raw[i] = P::score(s, st, q.arena, r.nodes[i]);
            }
          });
        }
        if (needs_stats(q.normalize[slot])) bs[slot] = merge_block_stats(bs[slot], block_stats(target, raw, sub, end));
      }
      uint32_t node = UINT32_MAX, ties = 0;
      const int64_t top = totals_block(target, partial, sub, end, node, ties);
      merge_best(best, top, node, ties);
      if (q.tie_break == TieBreak::Random) subs.push_back(SubTop{sub, end, top, ties});  // only the draw reads them
    }
    if (sp.filter_id != kNoPlugin) r.count = kept;
    return best;
  }

  // The kernel's Filter (sp.filter_part) over the range's positions [next,
  // end): the nodes that pass it move down to [kept, kept + passed), the
  // raw scores of the kernel's slots (`written`) beside them. Returns
  // `passed`. Speculating, the kernel scores every node with its Filter in
  // the same loop, and the failing nodes' scores are dropped; else (the
  // previous sub-block lost a quarter of its nodes or more, as on a full
  // cluster, where scoring first would waste most of the loop) the Filter
  // runs alone first and the kernel scores the survivors. The same nodes
  // and scores either way.
  uint32_t filter_in_kernel(const SnapshotView& s, const PodQueryView& q, const ScorePlan& sp, const Range& r,
                            size_t stride, uint32_t next, uint32_t end, uint32_t kept, bool& speculate,
                            uint64_t& written) {
    const uint32_t n = end - next;
    int64_t fails[kSubBlock];
    written = 0;
    if (speculate) {
      written = run_shared_kernel(s, q, sp, r, stride, sp.filter_lead, r.nodes + next, n, kept, fails);
    } else {
      int64_t* out = fails;
      sp.filter_part.kernel(s, &sp.filter_part, 1, r.nodes + next, n, &out);
    }
    uint32_t passed = n;
    if (!any_set(fails, n)) {
      if (kept != next) std::memmove(r.nodes + kept, r.nodes + next, n * sizeof(uint32_t));
    } else {
      passed = compact(r.nodes + next, r.nodes + kept, fails, n);
      for (uint32_t slot = 0; slot < q.num_scores; ++slot)
        if ((written >> slot) & 1) {
          int64_t* raw = raw_.data() + slot * stride + r.offset + kept;
          compact(raw, raw, fails, n);
        }
    }
    if (!speculate && passed > 0)
      written = run_shared_kernel(s, q, sp, r, stride, sp.filter_lead, r.nodes + kept, passed, kept, nullptr);
    speculate = passed * 4 > n * 3;
    return passed;
  }

  // Whether any of f[0, n) is not 0: four independent ORs (one chain of
  // them waited on each OR's latency, half a cycle a node).
  static bool any_set(const int64_t* f, uint32_t n) {
    int64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    uint32_t i = 0;
    for (; i + 4 <= n; i += 4) {
      a0 |= f[i];
      a1 |= f[i + 1];
      a2 |= f[i + 2];
      a3 |= f[i + 3];
    }
    for (; i < n; ++i) a0 |= f[i];
    return (a0 | a1 | a2 | a3) != 0;
  }

  // Keeps the entries of in[0, n) whose fails[i] is 0, in order, at out[0,
  // kept) (out <= in: in place where equal); returns kept. Branch-free.
  template <class T>
  static uint32_t compact(const T* in, T* out, const int64_t* fails, uint32_t n) {
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; ++i) {
      out[k] = in[i];
      k += static_cast<uint32_t>(fails[i] == 0);
    }
    return k;
  }

  // The raw scores of `lead` and of every later shared slot whose part names
  // the same kernel, of the n nodes `nodes`, at the range's positions [at,
  // at + n): one kernel run for all of them, with the kernel's Filter
  // (sp.filter_part) into fails[0, n) where `fails` is given. Returns the
  // slots written.
  uint64_t run_shared_kernel(const SnapshotView& s, const PodQueryView& q, const ScorePlan& sp, const Range& r,
                             size_t stride, uint32_t lead, const uint32_t* nodes, uint32_t n, uint32_t at,
                             int64_t* fails) {
    SharedScorePart parts[kMaxProfilePlugins + 1];
    int64_t* outs[kMaxProfilePlugins + 1];
    uint32_t k = 0;
    uint64_t written = 0;
    const SharedScorePart::Kernel kernel = sp.shared_part[lead].kernel;
    for (uint32_t slot = lead; slot < q.num_scores; ++slot) {
      if (!((sp.shared >> slot) & 1) || sp.shared_part[slot].kernel != kernel) continue;
      parts[k] = sp.shared_part[slot];
      outs[k++] = raw_.data() + slot * stride + r.offset + at;
      written |= uint64_t(1) << slot;
    }
    if (fails) {
      parts[k] = sp.filter_part;
      outs[k++] = fails;
    }
    kernel(s, parts, k, nodes, n, outs);
    return written;
  }

  // Filter of the n visiting positions from `base` into `ch`: its feasible
  // nodes (ascending positions), the verdicts when wanted, and the
  // histogram of its rejected positions when `reasons`.
  // `skip`: a Filter plugin not run here (kNoPlugin: none).
  static void filter_chunk(const SnapshotView& s, const PodQueryView& q, const VisitOrder& visit,
                           const EvalRequest& req, bool reasons, uint32_t base, uint32_t n, Chunk& ch,
                           EvalResult& out, uint8_t skip) {
    // Verdicts start as "feasible" only where they are all read; else
    // only the rejected positions' are, which Filter writes.
    fill_chunk(ch, base, n, visit, req.want_verdicts, runs_a_filter(q, skip));
    filter_positions(s, q, ch, reasons, skip);
    if (req.want_verdicts)
      for (uint32_t pos = 0; pos < n; ++pos) out.verdicts[ch.nodes[pos]] = ch.verdicts[pos];
    // The positions still alive are the feasible ones, ascending. Most
    // often every position passed: then the nodes are the feasible list,
    // handed over (the next fill_chunk refills the other buffer); the
    // gather through the positions was a scalar load and store per node, a
    // tenth of the pass.
    const auto alive = static_cast<uint32_t>(ch.alive.size());
    ch.rejected = alive != n;
    if (!ch.rejected) {
      ch.feasible.swap(ch.nodes);
    } else {
      ch.feasible.resize(alive);
      for (uint32_t k = 0; k < alive; ++k) ch.feasible[k] = ch.nodes[ch.alive[k]];
    }
    if (ch.rejected && reasons) {
      RejectionHistogram& hist = ch.rejections;
      hist = RejectionHistogram{};
      // The rejected positions: those between consecutive alive ones.
      uint32_t pos = 0;
      for (uint32_t k = 0; k <= alive; ++k) {
        const uint32_t stop = k < alive ? ch.alive[k] : n;
        for (; pos < stop; ++pos) count_rejection(hist, ch.verdicts[pos]);
        pos = stop + 1;
      }
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

  // Whether filter_positions runs a Filter plugin of the pod's (`skip`
  // aside): where none runs, every position stays alive and their values
  // are never read.
  static bool runs_a_filter(const PodQueryView& q, uint8_t skip) {
    for (uint32_t f = 0; f < q.num_filters; ++f)
      if (q.filters[f] != skip) return true;
    return false;
  }

  // The chunk's nodes and alive positions (the positions only sized unless
  // `positions`: see runs_a_filter); its verdicts reset to feasible when
  // `reset_verdicts` (else only sized: Filter writes the rejected ones).
  static void fill_chunk(Chunk& ch, uint32_t base, uint32_t n, const VisitOrder& visit, bool reset_verdicts,
                         bool positions) {
    ch.nodes.resize(n);
    ch.alive.resize(n);
    if (reset_verdicts)
      ch.verdicts.assign(n, NodeVerdict{});
    else
      ch.verdicts.resize(n);
    if (!visit.order)
      fill_iota(ch.nodes.data(), n, base);
    else
      for (uint32_t i = 0; i < n; ++i) ch.nodes[i] = visit.node_at(base + i);
    if (positions) fill_iota(ch.alive.data(), n, 0);
  }

  // v[i] += c for i < n (a plain loop on locals, which compilers vectorize).
  static void add_constant(int64_t* __restrict v, uint32_t n, int64_t c) {
    for (uint32_t i = 0; i < n; ++i) v[i] += c;
  }

  // The index of the (rank+1)-th element of v[0, n) equal to `value`, or n
  // if there are not that many. Counts the matches of whole blocks first (a
  // loop compilers vectorize), then scans the one block that holds it: the
  // scan of every node up to the tie was a branch per node.
  static uint32_t nth_equal(const int64_t* __restrict v, uint32_t n, int64_t value, uint64_t rank) {
    constexpr uint32_t kScanBlock = 256;
    for (uint32_t lo = 0; lo < n; lo += kScanBlock) {
      const uint32_t hi = std::min(n, lo + kScanBlock);
      uint32_t matches = 0;
      for (uint32_t i = lo; i < hi; ++i) matches += static_cast<uint32_t>(v[i] == value);
      if (rank >= matches) {
        rank -= matches;
        continue;
      }
      for (uint32_t i = lo;; ++i)
        if (v[i] == value && rank-- == 0) return i;
    }
    return n;
  }

  // nth_equal over a range whose totals are pass 1's (their sub-blocks'
  // tops and tie counts in `subs`): the sub-blocks before the one that
  // holds the tie are skipped by their counts, and only that one is
  // scanned (the scan of a whole range was a fifth of a distinct pod's
  // serial part at 5,000 nodes).
  static uint32_t nth_equal_in_sub_blocks(const std::vector<SubTop>& subs, const int64_t* __restrict v, uint32_t n,
                                          int64_t value, uint64_t rank) {
    for (const SubTop& s : subs) {
      if (s.top != value) continue;
      if (rank >= s.ties) {
        rank -= s.ties;
        continue;
      }
      const uint32_t i = nth_equal(v + s.lo, s.hi - s.lo, value, rank);
      return i < s.hi - s.lo ? s.lo + i : n;
    }
    return n;
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
  std::vector<std::vector<SubTop>> sub_tops_;  // [block]: its pass-1 sub-blocks (score_range)
  std::vector<Range> ranges_;                       // the scored nodes, in visiting order
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
