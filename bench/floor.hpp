// The floor (issue 24, item 5): the default profile's arithmetic for pods
// without constraints, written as the plainest fast loop, one thread, so that
// the engine's figures can be read as a ratio to it. Per pod and node:
//
//   NodeResourcesFit Filter   pod count + 1 <= allowed pods, cpu and memory
//                             requests fit allocatable minus requested
//   NodeResourcesFit Score    LeastAllocated over cpu and memory (weights 1,
//                             the non-zero request totals), exact integer
//                             quotients from per-node reciprocals (one
//                             float64 multiply and a branch-free correction)
//   BalancedAllocation Score  float64 in upstream's operation order (|f1-f2|/2)
//   the others                constants on a cluster without taints, node
//                             affinity, images or topology (TaintToleration
//                             100 x 3; NodeAffinity, ImageLocality 0; the
//                             topology plugins skip): left out of the sum,
//                             they do not change the order
//   select                    the highest total, the lowest node index among
//                             equal ones (--tie-break first)
//   assume                    the chosen node's requested columns grow
//
// Exact: it places every pod where the engine does with --tie-break first on
// such a cluster (bench_floor checks this before it times anything), on one
// thread and on two (schedule_two_threads).
// Amounts below 2^45 (every cluster it runs on): the AVX2 clone converts
// 100 x a free amount through the bits, exact below 2^52 only (quotient).
// Vectorized where the compiler can: the node loop is branch-free and runs in
// blocks that stay in L1 (totals, then the block's maximum, then its first
// index). Run-time dispatch between the baseline x86-64 build and AVX2 and
// AVX-512 clones of the same loop; results are the same bits on every target
// (no FMA contraction: -ffp-contract=off; the same operations in the same
// order).
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace bulkscore::floor {

// The node columns the loop reads, one array each (structure of arrays).
struct Columns {
  std::vector<int64_t> alloc_cpu, alloc_mem;  // millicores, bytes
  std::vector<int64_t> req_cpu, req_mem;      // requested (actual requests)
  std::vector<int64_t> nz_cpu, nz_mem;        // requested with the non-zero defaults
  std::vector<int64_t> pods, allowed;         // pod count, allowed pods
  std::vector<double> inv_cpu, inv_mem;       // 1.0 / allocatable (0 when none)

  void resize(size_t n) {
    for (auto* v : {&alloc_cpu, &alloc_mem, &req_cpu, &req_mem, &nz_cpu, &nz_mem, &pods, &allowed}) v->assign(n, 0);
    inv_cpu.assign(n, 0.0);
    inv_mem.assign(n, 0.0);
  }
  size_t size() const { return alloc_cpu.size(); }
  void set_alloc(size_t i, int64_t cpu, int64_t mem, int64_t allowed_pods) {
    alloc_cpu[i] = cpu;
    alloc_mem[i] = mem;
    allowed[i] = allowed_pods;
    inv_cpu[i] = cpu > 0 ? 1.0 / static_cast<double>(cpu) : 0.0;
    inv_mem[i] = mem > 0 ? 1.0 / static_cast<double>(mem) : 0.0;
  }
};

// One pod's requests: actual and non-zero (100m cpu, 200Mi memory when the
// pod requests none of it, as upstream's non-zero defaults).
struct PodRequest {
  int64_t cpu = 0, mem = 0, nz_cpu = 0, nz_mem = 0;
};

inline PodRequest pod_request(int64_t cpu_milli, int64_t mem_bytes) {
  return PodRequest{cpu_milli, mem_bytes, cpu_milli > 0 ? cpu_milli : 100, mem_bytes > 0 ? mem_bytes : 200LL << 20};
}

// v as a float64, 0 <= v < 2^52. kViaBits (the AVX2 clone, whose ISA has
// no int64 conversion: a plain cast left its loop scalar, 2.7x slower):
// v in the mantissa of 2^52, less 2^52, exactly; two vector instructions.
// Elsewhere the plain cast (AVX-512DQ converts directly; on baseline x86-64
// the plain loop measured faster).
template <bool kViaBits>
[[gnu::always_inline]] inline double to_double(int64_t v) {
  if constexpr (!kViaBits) return static_cast<double>(v);
  const uint64_t bits = static_cast<uint64_t>(v) | 0x4330000000000000ULL;
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d - 4503599627370496.0;
}
// A value in [0, 2^31) to int64 (truncated): through int32 with kViaBits
// (cvttpd2dq, which AVX2 has), else plainly.
template <bool kViaBits>
[[gnu::always_inline]] inline int64_t small_to_int(double d) {
  if constexpr (kViaBits) return static_cast<int32_t>(d);
  return static_cast<int64_t>(d);
}

// x / a for 0 <= x <= 100 a < 2^52, 0 < a, from inv = 1.0 / a: the float64
// estimate is within one of the quotient; two branch-free corrections make
// it exact.
template <bool kViaBits>
[[gnu::always_inline]] inline int64_t quotient(int64_t x, int64_t a, double inv) {
  int64_t q = small_to_int<kViaBits>(to_double<kViaBits>(x) * inv);
  q -= static_cast<int64_t>(q * a > x);
  q += static_cast<int64_t>((q + 1) * a <= x);
  return q;
}

constexpr uint32_t kBlock = 512;  // nodes per block: 9 columns of it stay in L1
constexpr int64_t kInfeasible = INT64_MIN;

// The block's totals (kInfeasible where the pod does not fit).
template <bool kViaBits>
[[gnu::always_inline]] inline void block_totals(const Columns& c, const PodRequest& p, uint32_t lo, uint32_t n,
                                                int64_t* __restrict total) {
  const int64_t p_cpu = p.cpu, p_mem = p.mem, p_nz_cpu = p.nz_cpu, p_nz_mem = p.nz_mem;
  const int64_t* __restrict ac = c.alloc_cpu.data() + lo;
  const int64_t* __restrict am = c.alloc_mem.data() + lo;
  const int64_t* __restrict rc = c.req_cpu.data() + lo;
  const int64_t* __restrict rm = c.req_mem.data() + lo;
  const int64_t* __restrict zc = c.nz_cpu.data() + lo;
  const int64_t* __restrict zm = c.nz_mem.data() + lo;
  const int64_t* __restrict np = c.pods.data() + lo;
  const int64_t* __restrict al = c.allowed.data() + lo;
  const double* __restrict ic = c.inv_cpu.data() + lo;
  const double* __restrict im = c.inv_mem.data() + lo;
  for (uint32_t i = 0; i < n; ++i) {
    const int64_t want_cpu = rc[i] + p_cpu, want_mem = rm[i] + p_mem;
    // Non-short-circuit: no branch in the loop, so that it vectorizes.
    const bool fits = (np[i] + 1 <= al[i]) & (want_cpu <= ac[i]) & (want_mem <= am[i]);
    // LeastAllocated: (alloc - req) * 100 / alloc per resource, 0 when over;
    // the mean of the two (weights 1) in integers. The free amount is
    // clamped at 0 (then the quotient is 0 too), so no branch is needed.
    const int64_t uc = zc[i] + p_nz_cpu, um = zm[i] + p_nz_mem;
    const int64_t fc0 = ac[i] - uc, fm0 = am[i] - um;
    const int64_t lc = quotient<kViaBits>((fc0 > 0 ? fc0 : 0) * 100, ac[i], ic[i]);
    const int64_t lm = quotient<kViaBits>((fm0 > 0 ? fm0 : 0) * 100, am[i], im[i]);
    const int64_t least = (lc + lm) >> 1;  // (lc + lm) / 2, both >= 0
    // BalancedAllocation: |f_cpu - f_mem| / 2, fractions capped at 1.
    double fc = to_double<kViaBits>(want_cpu) / to_double<kViaBits>(ac[i]);
    double fm = to_double<kViaBits>(want_mem) / to_double<kViaBits>(am[i]);
    fc = fc > 1 ? 1 : fc;
    fm = fm > 1 ? 1 : fm;
    const double sd = std::fabs((fc - fm) / 2);
    const int64_t balanced = small_to_int<kViaBits>((1 - sd) * 100.0);  // in [50, 100]
    // A mask, not `fits ? ... : ...`: GCC would sink the (trapping, under
    // -ftrapping-math) float64 work under the condition and then not
    // vectorize the loop ("control flow in loop").
    const int64_t keep = -static_cast<int64_t>(fits);
    total[i] = ((least + balanced) & keep) | (kInfeasible & ~keep);
  }
}

// The best node for `p` among nodes [lo, hi) (-1: none fits), its total in
// `best_total` (kInfeasible when none fits). `scratch` holds kBlock totals.
template <bool kViaBits>
[[gnu::always_inline]] inline int32_t best_in_impl(const Columns& c, const PodRequest& p, uint32_t lo, uint32_t hi,
                                                   int64_t* scratch, int64_t& best_total) {
  best_total = kInfeasible;
  int32_t best = -1;
  for (uint32_t b = lo; b < hi; b += kBlock) {
    const uint32_t m = std::min(kBlock, hi - b);
    block_totals<kViaBits>(c, p, b, m, scratch);
    int64_t mx = kInfeasible;
    for (uint32_t i = 0; i < m; ++i) mx = scratch[i] > mx ? scratch[i] : mx;
    if (mx <= best_total) continue;  // an equal total later loses to the earlier node
    uint32_t at = 0;
    while (scratch[at] != mx) ++at;
    best_total = mx;
    best = static_cast<int32_t>(b + at);
  }
  return best;
}

int32_t best_in_baseline(const Columns& c, const PodRequest& p, uint32_t lo, uint32_t hi, int64_t* scratch,
                         int64_t& best_total);
[[gnu::target("avx2")]] int32_t best_in_avx2(const Columns& c, const PodRequest& p, uint32_t lo, uint32_t hi,
                                             int64_t* scratch, int64_t& best_total);
[[gnu::target("avx512f,avx512dq,avx512vl,avx512bw")]] int32_t best_in_avx512(const Columns& c, const PodRequest& p,
                                                                             uint32_t lo, uint32_t hi,
                                                                             int64_t* scratch, int64_t& best_total);

inline int32_t best_in_baseline(const Columns& c, const PodRequest& p, uint32_t lo, uint32_t hi, int64_t* scratch,
                                int64_t& best_total) {
  return best_in_impl<false>(c, p, lo, hi, scratch, best_total);
}
[[gnu::target("avx2")]] inline int32_t best_in_avx2(const Columns& c, const PodRequest& p, uint32_t lo, uint32_t hi,
                                                    int64_t* scratch, int64_t& best_total) {
  return best_in_impl<true>(c, p, lo, hi, scratch, best_total);
}
[[gnu::target("avx512f,avx512dq,avx512vl,avx512bw")]] inline int32_t best_in_avx512(const Columns& c,
                                                                                    const PodRequest& p, uint32_t lo,
                                                                                    uint32_t hi, int64_t* scratch,
                                                                                    int64_t& best_total) {
  return best_in_impl<false>(c, p, lo, hi, scratch, best_total);
}

enum class Target { Baseline, Avx2, Avx512 };

inline const char* target_name(Target t) {
  switch (t) {
    case Target::Avx2:
      return "avx2";
    case Target::Avx512:
      return "avx512";
    default:
      return "baseline";
  }
}

inline bool target_supported(Target t) {
  switch (t) {
    case Target::Avx2:
      return __builtin_cpu_supports("avx2");
    case Target::Avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
    default:
      return true;
  }
}

inline int32_t best_in(Target t, const Columns& c, const PodRequest& p, uint32_t lo, uint32_t hi, int64_t* scratch,
                       int64_t& best_total) {
  return t == Target::Avx512 ? best_in_avx512(c, p, lo, hi, scratch, best_total)
         : t == Target::Avx2 ? best_in_avx2(c, p, lo, hi, scratch, best_total)
                             : best_in_baseline(c, p, lo, hi, scratch, best_total);
}

// The chosen node's requested columns grow.
inline void assume(Columns& c, const PodRequest& p, int32_t b) {
  c.req_cpu[b] += p.cpu;
  c.req_mem[b] += p.mem;
  c.nz_cpu[b] += p.nz_cpu;
  c.nz_mem[b] += p.nz_mem;
  c.pods[b] += 1;
}

// Schedules `pods` in order on `c` (the columns grow as pods are assumed);
// placements[i] = node or -1.
inline void schedule(Columns& c, const std::vector<PodRequest>& pods, Target t, std::vector<int32_t>& placements) {
  std::vector<int64_t> scratch(kBlock);
  placements.resize(pods.size());
  const auto n = static_cast<uint32_t>(c.size());
  for (size_t k = 0; k < pods.size(); ++k) {
    int64_t total = 0;
    const int32_t b = best_in(t, c, pods[k], 0, n, scratch.data(), total);
    placements[k] = b;
    if (b >= 0) assume(c, pods[k], b);
  }
}

// The same on two threads, one pod at a time, as any exact scheduler must
// go: the caller takes the first half of the nodes (whole blocks), a helper
// thread the second, each pod's two bests joined (the higher total, the
// lower node on a tie: the caller's half), then the assume. Each side waits
// for the other spinning, a pause between checks and a yield every 256 of
// them, as the engine's pool does (host/cpu/worker_pool.cpp): this is what
// two cores give the same arithmetic with the same per-pod join, the
// engine's two-thread figures' own floor. It never sleeps: on a machine
// whose other programs keep a core busy it falls far behind (read its
// figures from a quiet machine only).
inline void schedule_two_threads(Columns& c, const std::vector<PodRequest>& pods, Target t,
                                 std::vector<int32_t>& placements) {
  placements.resize(pods.size());
  const auto n = static_cast<uint32_t>(c.size());
  const uint32_t half = std::min(n, (n / 2 + kBlock - 1) / kBlock * kBlock);
  // Pod k + 1 posted / its half done: each written by one side, on lines of
  // their own.
  alignas(64) std::atomic<uint64_t> posted{0};
  alignas(64) std::atomic<uint64_t> done{0};
  std::atomic<const PodRequest*> pod{nullptr};
  int64_t helper_total = kInfeasible;
  int32_t helper_best = -1;
  const auto wait_for = [](const std::atomic<uint64_t>& v, uint64_t want) {
    for (uint32_t spins = 0; v.load(std::memory_order_acquire) != want; ++spins) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
      if (spins % 256 == 255) std::this_thread::yield();
    }
  };
  std::thread helper([&] {
    std::vector<int64_t> scratch(kBlock);
    for (uint64_t k = 1;; ++k) {
      wait_for(posted, k);
      const PodRequest* p = pod.load(std::memory_order_relaxed);
      if (!p) return;  // the end
      helper_best = best_in(t, c, *p, half, n, scratch.data(), helper_total);
      done.store(k, std::memory_order_release);
    }
  });
  std::vector<int64_t> scratch(kBlock);
  for (size_t k = 0; k < pods.size(); ++k) {
    pod.store(&pods[k], std::memory_order_relaxed);
    posted.store(k + 1, std::memory_order_release);
    int64_t total = 0;
    int32_t b = best_in(t, c, pods[k], 0, half, scratch.data(), total);
    wait_for(done, k + 1);
    if (helper_best >= 0 && helper_total > total) b = helper_best;
    placements[k] = b;
    if (b >= 0) assume(c, pods[k], b);
  }
  pod.store(nullptr, std::memory_order_relaxed);
  posted.store(pods.size() + 1, std::memory_order_release);
  helper.join();
}

}  // namespace bulkscore::floor
