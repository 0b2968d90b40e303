// The resource rules over many nodes at once (NodeResourcesFit's Filter,
// score_nodes of its LeastAllocated and of NodeResourcesBalancedAllocation):
// branch-free column loops that compilers vectorize, compiled per SIMD target
// (plugins/simd_dispatch.hpp), equal bit for bit to the per-node rules in
// plugins/resource_allocation.hpp and node_resources_balanced_allocation.hpp.
//
// The per-node rules divide with div_trunc (the exact truncated quotient).
// The loops compute an exact quotient on every lane with safe operands
// (float32 or float64, then integer corrections) and flag lanes outside
// that range; a block with a flagged lane is computed again by the per-node
// rule, so values no real node has (allocatable past 2^53, overflowing sums,
// negative requests) still get the rule's result. BalancedAllocation's
// fractions are float64 divisions in upstream's order, as the rule's.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "plugins/node_resources_balanced_allocation.hpp"
#include "plugins/node_resources_fit.hpp"
#include "plugins/simd_dispatch.hpp"

namespace bulkscore {
namespace {

constexpr uint32_t kBlock = 256;
constexpr int64_t kExact = int64_t(1) << 53;

// m ? a : b for a mask m of all ones or all zeros, without a branch.
[[gnu::always_inline]] inline int64_t sel(int64_t m, int64_t a, int64_t b) { return (a & m) | (b & ~m); }
[[gnu::always_inline]] inline int64_t mask(bool c) { return -static_cast<int64_t>(c); }

// Exact int64 -> float64 for 0 <= v < 2^52, through the bit pattern: v
// in the mantissa of 2^52 is the double 2^52 + v exactly, less 2^52 it is
// v. An OR and a subtraction, which AVX2 vectorizes, where int64
// conversions need AVX-512DQ (converting the two 32-bit halves instead
// took five times the instructions, in shuffles).
constexpr int64_t kBitsExact = int64_t(1) << 52;
[[gnu::always_inline]] inline double bits_to_double(int64_t v) {
  const uint64_t bits = static_cast<uint64_t>(v) | 0x4330000000000000ULL;  // 2^52's exponent
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d - 4503599627370496.0;  // 2^52
}

// x / a (truncated) for 0 <= x <= 100 * a, 0 < a, x below kQuotientLimit
// and a at most kDivisorLimit, from inv = 1.0 / a (the snapshot's
// allocatable_inverse): x and inv are each within a relative 2^-53 of exact,
// so the product, at most 100, is within 2^-45 of the quotient, and one
// correction each way on the remainder makes it exact. (least_quotient's
// direct path hands x up to 100 * 2^53: its conversion rounds once more,
// 2^-53 relative, still far from one.) A float64 multiply costs a fraction
// of a division per lane (a float32 division here before measured 4.1 ns per
// node against 3.2 for this on a Zen 3): LeastAllocated's per-resource
// quotients, its hottest loop, divide this way. Lanes outside the domain
// (which the callers drop) have x >= 0 and inv >= 0 too; their estimate is
// capped at 128 so that it converts.
//
// kViaBits, for AVX2: without AVX-512DQ the int64 <-> float64 conversions
// and int64 multiplies leave the loop scalar (or, as GCC 12 writes every
// int64 multiply, three 32-bit multiplies and their shifts), so:
//   - x (below 2^52 there) converts through its bits (bits_to_double);
//   - the estimate is capped on its bits (e >= 0, so they order as the
//     values do: a float64 select here put the float64 work after it under
//     control flow, and GCC left the loop scalar) and converts as an int32;
//   - q * a is a float64 product, exact: q <= 128 and a <= 2^45 keep it at
//     most 2^52, so 2^52 + q * a is a float64 whose bits less 2^52's are
//     the integer (also at 2^53 itself, where the exponent steps). This
//     took the AVX2 loop from 369 to 294 instructions per 8 nodes.
// (A remainder taken in float64 instead compares doubles: GCC then leaves
// the loop scalar.) Not for the baseline target: SSE2 lacks 64-bit compares
// (measured 1.5x the instructions of scalar conversions there). The same
// exact quotient either way.
template <bool kViaBits>
constexpr int64_t kQuotientLimit = kViaBits ? kBitsExact : kExact;
template <bool kViaBits>
constexpr int64_t kDivisorLimit = kViaBits ? int64_t(1) << 45 : kExact - 1;
[[gnu::always_inline]] inline int64_t double_bits(double d) {
  int64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}
[[gnu::always_inline]] inline double bits_double(int64_t b) {
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
}
template <bool kViaBits>
[[gnu::always_inline]] inline int64_t small_quotient(int64_t x, int64_t a, double inv) {
  const double e = (kViaBits ? bits_to_double(x) : static_cast<double>(x)) * inv;
  int64_t q;
  int64_t qa;
  if constexpr (!kViaBits) {
    q = static_cast<int64_t>(e < 128.0 ? e : 128.0);
    qa = static_cast<int64_t>(static_cast<uint64_t>(q) * static_cast<uint64_t>(a));
  } else {
    constexpr int64_t k128 = 0x4060000000000000LL;  // 128.0's bits
    const int64_t eb = double_bits(e);
    const auto q32 = static_cast<int32_t>(bits_double(eb < k128 ? eb : k128));
    constexpr double k2p52 = 4503599627370496.0;
    qa = double_bits(static_cast<double>(q32) * bits_to_double(a) + k2p52) - double_bits(k2p52);
    q = q32;
  }
  const int64_t rem = x - qa;
  q -= static_cast<int64_t>(rem < 0);
  q += static_cast<int64_t>(rem >= a);
  return q;
}

// x / a (truncated) for 0 <= x < 2^53, 0 < a < 2^53, from r = 1.0 / a: the
// float64 product is within one of the quotient, and one correction each
// way makes it exact (q * a stays below 2^54: no overflow).
[[gnu::always_inline]] inline int64_t div_by_reciprocal(int64_t x, int64_t a, double r) {
  int64_t q = static_cast<int64_t>(static_cast<double>(x) * r);
  const int64_t rem = x - q * a;
  q -= static_cast<int64_t>(rem < 0);
  q += static_cast<int64_t>(rem >= a);
  return q;
}

// The requested column an entry reads (the entry is not kSkip).
[[gnu::always_inline]] inline const int64_t* requested_column(const SnapshotView& s, const ScoredResource& e) {
  switch (e.source) {
    case ScoredResource::kNonZeroCpu:
      return s.nonzero_requested;
    case ScoredResource::kNonZeroMemory:
      return s.nonzero_requested + s.num_nodes;
    default:
      return s.requested + static_cast<size_t>(e.resource) * s.num_nodes;
  }
}

// Node of position i: first + i for a contiguous run, else nodes[i].
// (size_t: an index that cannot wrap, so that the loop's addresses are affine
// and it vectorizes.)
template <bool kContig>
[[gnu::always_inline]] inline size_t node_at(const uint32_t* nodes, uint32_t first, uint32_t i) {
  if constexpr (kContig)
    return static_cast<size_t>(first) + i;
  else
    return nodes[i];
}

// One resource's share of LeastAllocated over n <= kBlock nodes: sum[i] +=
// its score times its weight, weights[i] += the weight where the node has
// the resource; lanes outside the exact path's range are flagged in `slow`.
// kUnit: the weight is 1 (the default resources'), no multiply.
template <bool kContig, bool kUnit, bool kViaBits>
[[gnu::always_inline]] inline void least_resource(const SnapshotView& s, const ScoredResource& e, const uint32_t* nodes,
                                                  uint32_t first, uint32_t n, int64_t* __restrict sum,
                                                  int64_t* __restrict weights, int64_t& slow) {
  const int64_t* __restrict alloc = s.allocatable + static_cast<size_t>(e.resource) * s.num_nodes;
  const double* __restrict inv = s.allocatable_inverse + static_cast<size_t>(e.resource) * s.num_nodes;
  const int64_t* __restrict req = requested_column(s, e);
  const int64_t pod = e.pod_request, w = e.weight;
  int64_t flagged = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const size_t node = node_at<kContig>(nodes, first, i);
    const int64_t a = alloc[node];
    const int64_t rq = go_add(req[node], pod);
    const int64_t x = go_mul(go_sub(a, rq), 100);
    const bool need = (a != 0) & !(rq > a);
    // rq >= 0 with rq <= a: 0 <= x <= 100 * a, small_quotient's range.
    const bool in_range = (x >= 0) & (x < kQuotientLimit<kViaBits>) & (a > 0) & (a <= kDivisorLimit<kViaBits>) &
                          (rq >= 0);
    flagged |= mask(need & !in_range);
    const int64_t ok = mask(need & in_range);
    const double r = inv[node];  // read unconditionally, so that the loop vectorizes
    const int64_t part = sel(ok, small_quotient<kViaBits>(sel(ok, x, 0), sel(ok, a, 1), ok ? r : 1.0), 0);
    sum[i] = go_add(sum[i], kUnit ? part : go_mul(part, w));
    weights[i] = go_add(weights[i], sel(mask(a != 0), w, 0));
  }
  slow |= flagged;
}

// The bound least2_unit_lane's range check keeps allocatable - 1 and the
// requests below: 2^53 with direct conversions; 2^45 through the bits,
// where 100 * a must stay below 2^52 (bits_to_double).
template <bool kViaBits>
constexpr int kLeast2Bits = kViaBits ? 45 : 53;

// (a - rq) * 100 / a, or 0 where rq > a, from inv = 1.0 / a: exact where
// 0 < a <= 2^B and 0 <= rq < 2^B (B = kLeast2Bits). Elsewhere (the caller's
// range check drops the result) nothing may overflow: with direct
// conversions the operands are clamped into small_quotient's range, a into
// [1, 2^B], the dividend (wrapped, maybe negative) into [0, 100 * 2^B] as
// an unsigned value; inv, the inverse of the unclamped a (0 where a <= 0),
// keeps the estimate finite and >= 0.
template <bool kViaBits>
[[gnu::always_inline]] inline int64_t least_quotient(int64_t a, int64_t rq, double inv) {
  if constexpr (kViaBits) {
    // Masks instead of clamps (an AND each where a clamp took four vector
    // instructions): unchanged in range, and elsewhere below 2^52, where
    // small_quotient's conversions are defined.
    const int64_t x = go_mul(go_sub(a, rq), 100) & (kBitsExact - 1);
    return sel(mask(rq > a), 0, small_quotient<kViaBits>(x, a & (kBitsExact - 1), inv));
  }
  constexpr int kBits = kLeast2Bits<kViaBits>;
  const int64_t safe_a = std::min(sel(mask(a > 0), a, 1), int64_t(1) << kBits);
  const auto x =
      static_cast<int64_t>(std::min(static_cast<uint64_t>(go_mul(go_sub(a, rq), 100)), uint64_t(100) << kBits));
  return sel(mask(rq > a), 0, small_quotient<kViaBits>(x, safe_a, inv));
}

// LeastAllocated of one node over exactly two resources of weight 1 (the
// default, cpu and memory): the mean of the two quotients, (q0 + q1) / 2 as
// a shift (both >= 0). The exact path's range is checked once per block, by
// OR-ing into `range` what must stay below 2^B (kLeast2Bits) and not be
// negative: allocatable - 1 (so that 0, a node without the resource, where
// the mean is the other's alone, leaves it too) and the requests. Then
// rq <= a gives 0 <= (a - rq) * 100 <= 100 * a, small_quotient's range.
template <bool kViaBits>
[[gnu::always_inline]] inline int64_t least2_unit_lane(int64_t a0, int64_t a1, double inv0, double inv1, int64_t rq0,
                                                       int64_t rq1, uint64_t& range) {
  range |= static_cast<uint64_t>(go_sub(a0, 1)) | static_cast<uint64_t>(go_sub(a1, 1)) | static_cast<uint64_t>(rq0) |
           static_cast<uint64_t>(rq1);
  return (least_quotient<kViaBits>(a0, rq0, inv0) + least_quotient<kViaBits>(a1, rq1, inv1)) >> 1;
}

// least2_unit_lane over n <= kBlock nodes; false when the block left the
// exact path's range (the caller recomputes the block).
template <bool kContig, bool kViaBits>
[[gnu::always_inline]] inline bool least2_unit_block(const SnapshotView& s, const ScoredResource* res,
                                                     const uint32_t* nodes, uint32_t first, uint32_t n,
                                                     int64_t* __restrict out) {
  const int64_t* __restrict a0c = s.allocatable + static_cast<size_t>(res[0].resource) * s.num_nodes;
  const int64_t* __restrict a1c = s.allocatable + static_cast<size_t>(res[1].resource) * s.num_nodes;
  const int64_t* __restrict r0c = requested_column(s, res[0]);
  const int64_t* __restrict r1c = requested_column(s, res[1]);
  const double* __restrict i0c = s.allocatable_inverse + static_cast<size_t>(res[0].resource) * s.num_nodes;
  const double* __restrict i1c = s.allocatable_inverse + static_cast<size_t>(res[1].resource) * s.num_nodes;
  const int64_t p0 = res[0].pod_request, p1 = res[1].pod_request;
  uint64_t range = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const size_t node = node_at<kContig>(nodes, first, i);
    out[i] = least2_unit_lane<kViaBits>(a0c[node], a1c[node], i0c[node], i1c[node], go_add(r0c[node], p0),
                                        go_add(r1c[node], p1), range);
  }
  return (range >> kLeast2Bits<kViaBits>) == 0;
}

// LeastAllocated of n <= kBlock nodes; false when a lane left the exact
// path's range (the caller recomputes the block).
template <bool kContig, bool kViaBits>
[[gnu::always_inline]] inline bool least_block(const SnapshotView& s, const ScoredResource* res, uint32_t nres,
                                               const uint32_t* nodes, uint32_t first, uint32_t n, int64_t* out) {
  int64_t sum[kBlock], weights[kBlock];
  for (uint32_t i = 0; i < n; ++i) sum[i] = weights[i] = 0;
  int64_t slow = 0;
  for (uint32_t r = 0; r < nres; ++r) {
    const ScoredResource& e = res[r];
    if (e.source == ScoredResource::kSkip) continue;
    if (e.weight == 1)
      least_resource<kContig, true, kViaBits>(s, e, nodes, first, n, sum, weights, slow);
    else
      least_resource<kContig, false, kViaBits>(s, e, nodes, first, n, sum, weights, slow);
  }
  // The weighted mean S / W. W is the weight of the resources the node has
  // (allocatable not 0): on nearly every node all of them, `all`, whose
  // reciprocal is taken once (a power of two, as two resources of weight 1
  // give: a shift); a node with fewer sends its block to the rule.
  int64_t all = 0;
  for (uint32_t r = 0; r < nres; ++r)
    if (res[r].source != ScoredResource::kSkip) all = go_add(all, res[r].weight);
  if (!(all > 0 && all < kExact)) return false;
  const bool power_of_two = (all & (all - 1)) == 0;
  const int shift = __builtin_ctzll(static_cast<uint64_t>(all));
  const double inv_all = 1.0 / static_cast<double>(all);
  for (uint32_t i = 0; i < n; ++i) {
    const int64_t S = sum[i], W = weights[i];
    const bool in_range = (S >= 0) & (S < kExact);
    slow |= mask((W != 0) & (!in_range | (W != all)));
    const int64_t ok = mask((W != 0) & in_range);
    const int64_t safe = sel(ok, S, 0);
    // S >= 0: the shift truncates as the division does (the branch is the
    // same on every lane; compilers take it out of the loop).
    out[i] = sel(ok, power_of_two ? safe >> shift : div_by_reciprocal(safe, all, inv_all), 0);
  }
  return slow == 0;
}

// Whether `res` (nres entries) is LeastAllocated's common case: two unit
// entries, neither kSkip (least2_unit_block).
inline bool least_two_unit(const ScoredResource* res, uint32_t nres) {
  return nres == 2 && res[0].source != ScoredResource::kSkip && res[1].source != ScoredResource::kSkip &&
         res[0].weight == 1 && res[1].weight == 1;
}

// BalancedAllocation of one node for exactly two entries, neither kSkip
// (the default resources, cpu and memory): std = |f0 - f1| / 2 when both
// allocatables are non-zero, else 0.
// kViaBits: the operands convert to float64 through their bits
// (bits_to_double, which vectorizes without AVX-512DQ), exact below 2^52
// and so the same doubles; `range` collects what must stay in [0, 2^52)
// (a block whose lane left it is computed again with direct conversions,
// by the caller).
template <bool kViaBits>
[[gnu::always_inline]] inline int64_t balanced2_lane(int64_t a0, int64_t a1, int64_t rq0, int64_t rq1,
                                                     uint64_t& range) {
  const auto to_double = [](int64_t v) { return kViaBits ? bits_to_double(v) : static_cast<double>(v); };
  if constexpr (kViaBits) {
    range |= static_cast<uint64_t>(a0) | static_cast<uint64_t>(a1) | static_cast<uint64_t>(rq0) |
             static_cast<uint64_t>(rq1);
    // Unchanged in range; a lane outside it (recomputed by the caller)
    // is kept in [0, 2^52), so that it converts, its fractions stay in
    // [0, 1] and its score converts without overflow.
    rq0 &= kBitsExact - 1;
    rq1 &= kBitsExact - 1;
    a0 &= kBitsExact - 1;
    a1 &= kBitsExact - 1;
  }
  const int64_t both = mask((a0 != 0) & (a1 != 0));
  double f0 = to_double(rq0) / to_double(sel(both, a0, 1));
  double f1 = to_double(rq1) / to_double(sel(both, a1, 1));
  f0 = f0 > 1 ? 1 : f0;
  f1 = f1 > 1 ? 1 : f1;
  const double sd = std::fabs((f0 - f1) / 2);
  // With operands in [0, 2^52) the fractions lie in [0, 1] and the score
  // in [50, 100]: truncating through int32 is the same, and vectorizes
  // (cvttpd2dq) where the int64 conversion needs AVX-512DQ.
  const double score = (1 - sd) * 100.0;
  const auto two = kViaBits ? static_cast<int64_t>(static_cast<int32_t>(score)) : go_float_to_int64(score);
  return sel(both, two, 100);  // fewer than two fractions: std 0, score 100
}

// balanced2_lane over n <= kBlock nodes; false when a lane's operands left
// kViaBits' range (the caller recomputes the block with direct conversions).
template <bool kContig, bool kViaBits>
[[gnu::always_inline]] inline bool balanced2_block(const SnapshotView& s, const ScoredResource* res,
                                                   const uint32_t* nodes, uint32_t first, uint32_t n, int64_t* out) {
  const int64_t* __restrict a0c = s.allocatable + static_cast<size_t>(res[0].resource) * s.num_nodes;
  const int64_t* __restrict a1c = s.allocatable + static_cast<size_t>(res[1].resource) * s.num_nodes;
  const int64_t* __restrict r0c = requested_column(s, res[0]);
  const int64_t* __restrict r1c = requested_column(s, res[1]);
  const int64_t p0 = res[0].pod_request, p1 = res[1].pod_request;
  uint64_t range = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const size_t node = node_at<kContig>(nodes, first, i);
    out[i] = balanced2_lane<kViaBits>(a0c[node], a1c[node], go_add(r0c[node], p0), go_add(r1c[node], p1), range);
  }
  return (range >> 52) == 0;  // bits_to_double's range (only kViaBits collects it)
}

// The requests NodeResourcesFit's Filter checks beside the pod count, in
// the rule's order (cpu, memory, ephemeral-storage, the scalar resources);
// false where there are more than kFitInline of them (node by node then).
// The order does not change whether a node fails, only filter()'s reason
// bits, which callers take from filter() itself.
constexpr uint32_t kFitInline = 16;
struct FitChecks {
  int64_t want[kFitInline];
  uint32_t resource[kFitInline];
  uint32_t n = 0;
};
bool fit_checks(const plugins::NodeResourcesFit::State& st, const uint8_t* arena, FitChecks& c) {
  c.n = 0;
  if (st.only_pod_count) return true;
  const auto add = [&](int64_t want, uint32_t resource) {
    c.want[c.n] = want;
    c.resource[c.n++] = resource;
  };
  if (st.cpu > 0) add(st.cpu, kCpu);
  if (st.memory > 0) add(st.memory, kMemory);
  if (st.ephemeral > 0) add(st.ephemeral, kEphemeralStorage);
  if (st.scalar_resources.count > kFitInline - c.n) return false;
  const uint32_t* rs = st.scalar_resources.data(arena);
  const int64_t* w = st.scalar_requests.data(arena);
  for (uint32_t i = 0; i < st.scalar_resources.count; ++i) add(w[i], rs[i]);
  return true;
}

// NodeResourcesFit's Filter inside the one loop below: the pod count and
// the requests of the loop's two resources there (w0 against allocatable
// column 0, w1 against column 1; INT64_MIN where the pod checks none: no
// node fails that), its other requests (`extra`) one pass each after it.
struct FitInLoop {
  int64_t w0 = INT64_MIN, w1 = INT64_MIN;
  FitChecks extra;
};

// One request's Filter check over n <= kBlock nodes, or-ed into fails[i]
// (0 or 1): want > allocatable - requested, as the rule compares.
template <bool kContig>
[[gnu::always_inline]] inline void fit_check_block(const SnapshotView& s, int64_t want, uint32_t resource,
                                                   const uint32_t* nodes, uint32_t first, uint32_t n,
                                                   int64_t* __restrict fails) {
  const int64_t* __restrict alloc = s.allocatable + static_cast<size_t>(resource) * s.num_nodes;
  const int64_t* __restrict req = s.requested + static_cast<size_t>(resource) * s.num_nodes;
  for (uint32_t i = 0; i < n; ++i) {
    const size_t node = node_at<kContig>(nodes, first, i);
    fails[i] |= mask(want > go_sub(alloc[node], req[node])) & 1;
  }
}

// LeastAllocated over two unit entries `least` and BalancedAllocation over
// two entries `bal` of the same two resources (the default profile's pair:
// the non-zero requests for the one, the actual ones for the other), in one
// loop over the allocatable columns both read; with kFit, NodeResourcesFit's
// Filter too (`fit`, into out_fit), whose requested columns are the ones
// BalancedAllocation reads for the default resources. least_ok and bal_ok
// as the two blocks above return them.
template <bool kContig, bool kViaBits, bool kFit>
[[gnu::always_inline]] inline void least_balanced2_block(const SnapshotView& s, const ScoredResource* least,
                                                         const ScoredResource* bal, const FitInLoop* fit,
                                                         const uint32_t* nodes, uint32_t first, uint32_t n,
                                                         int64_t* __restrict out_least, int64_t* __restrict out_bal,
                                                         int64_t* __restrict out_fit, bool& least_ok, bool& bal_ok) {
  const int64_t* __restrict a0c = s.allocatable + static_cast<size_t>(least[0].resource) * s.num_nodes;
  const int64_t* __restrict a1c = s.allocatable + static_cast<size_t>(least[1].resource) * s.num_nodes;
  const double* __restrict i0c = s.allocatable_inverse + static_cast<size_t>(least[0].resource) * s.num_nodes;
  const double* __restrict i1c = s.allocatable_inverse + static_cast<size_t>(least[1].resource) * s.num_nodes;
  const int64_t* __restrict l0c = requested_column(s, least[0]);
  const int64_t* __restrict l1c = requested_column(s, least[1]);
  const int64_t* __restrict b0c = requested_column(s, bal[0]);
  const int64_t* __restrict b1c = requested_column(s, bal[1]);
  const int64_t lp0 = least[0].pod_request, lp1 = least[1].pod_request;
  const int64_t bp0 = bal[0].pod_request, bp1 = bal[1].pod_request;
  const int64_t* __restrict f0c = s.requested + static_cast<size_t>(least[0].resource) * s.num_nodes;
  const int64_t* __restrict f1c = s.requested + static_cast<size_t>(least[1].resource) * s.num_nodes;
  const int32_t* __restrict pods = s.pod_count;
  const int64_t* __restrict allowed = s.allowed_pods;
  const int64_t w0 = kFit ? fit->w0 : 0, w1 = kFit ? fit->w1 : 0;
  uint64_t least_range = 0, bal_range = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const size_t node = node_at<kContig>(nodes, first, i);
    const int64_t a0 = a0c[node], a1 = a1c[node];
    out_least[i] = least2_unit_lane<kViaBits>(a0, a1, i0c[node], i1c[node], go_add(l0c[node], lp0),
                                              go_add(l1c[node], lp1), least_range);
    out_bal[i] = balanced2_lane<kViaBits>(a0, a1, go_add(b0c[node], bp0), go_add(b1c[node], bp1), bal_range);
    if constexpr (kFit)
      out_fit[i] = (mask(static_cast<int64_t>(pods[node]) + 1 > allowed[node]) | mask(w0 > go_sub(a0, f0c[node])) |
                    mask(w1 > go_sub(a1, f1c[node]))) &
                   1;
  }
  if constexpr (kFit)
    for (uint32_t k = 0; k < fit->extra.n; ++k)
      fit_check_block<kContig>(s, fit->extra.want[k], fit->extra.resource[k], nodes, first, n, out_fit);
  least_ok = (least_range >> kLeast2Bits<kViaBits>) == 0;
  bal_ok = (bal_range >> 52) == 0;
}

// NodeResourcesFit's Filter over n <= kBlock nodes: fails[i] = the pod
// count or one requested resource does not fit, the rule's comparisons on
// the same integers (want > allocatable - requested, wrapping as the rule's
// int64 subtraction would for values no node has). The pod count and the
// first kHead requests (the default pod's cpu and memory) in one pass, the
// others one pass each; the failures kept as 64-bit lane masks until the
// end (byte flags cost a pack and an unpack per pass).
template <bool kContig, uint32_t kHead>
[[gnu::always_inline]] inline void fit_block(const SnapshotView& s, const int64_t* want, const uint32_t* resource,
                                             uint32_t nwant, const uint32_t* nodes, uint32_t first, uint32_t n,
                                             uint8_t* fails) {
  static_assert(kHead <= 2, "the head pass reads at most two requests");
  int64_t bad[kBlock];
  const int32_t* __restrict pods = s.pod_count;
  const int64_t* __restrict allowed = s.allowed_pods;
  const auto alloc_of = [&](uint32_t k) { return s.allocatable + static_cast<size_t>(resource[k]) * s.num_nodes; };
  const auto req_of = [&](uint32_t k) { return s.requested + static_cast<size_t>(resource[k]) * s.num_nodes; };
  const int64_t* __restrict a0 = kHead > 0 ? alloc_of(0) : nullptr;
  const int64_t* __restrict r0 = kHead > 0 ? req_of(0) : nullptr;
  const int64_t* __restrict a1 = kHead > 1 ? alloc_of(1) : nullptr;
  const int64_t* __restrict r1 = kHead > 1 ? req_of(1) : nullptr;
  const int64_t w0 = kHead > 0 ? want[0] : 0, w1 = kHead > 1 ? want[1] : 0;
  for (uint32_t i = 0; i < n; ++i) {
    const size_t node = node_at<kContig>(nodes, first, i);
    int64_t b = mask(static_cast<int64_t>(pods[node]) + 1 > allowed[node]);
    if constexpr (kHead > 0) b |= mask(w0 > go_sub(a0[node], r0[node]));
    if constexpr (kHead > 1) b |= mask(w1 > go_sub(a1[node], r1[node]));
    bad[i] = b;
  }
  for (uint32_t k = kHead; k < nwant; ++k) {
    const int64_t* __restrict alloc = alloc_of(k);
    const int64_t* __restrict req = req_of(k);
    const int64_t w = want[k];
    for (uint32_t i = 0; i < n; ++i) {
      const size_t node = node_at<kContig>(nodes, first, i);
      bad[i] |= mask(w > go_sub(alloc[node], req[node]));
    }
  }
  for (uint32_t i = 0; i < n; ++i) fails[i] = static_cast<uint8_t>(bad[i] & 1);
}

template <bool kContig>
[[gnu::always_inline]] inline void fit_block_any(const SnapshotView& s, const int64_t* want, const uint32_t* resource,
                                                 uint32_t nwant, const uint32_t* nodes, uint32_t first, uint32_t n,
                                                 uint8_t* fails) {
  if (nwant >= 2)
    fit_block<kContig, 2>(s, want, resource, nwant, nodes, first, n, fails);
  else if (nwant == 1)
    fit_block<kContig, 1>(s, want, resource, nwant, nodes, first, n, fails);
  else
    fit_block<kContig, 0>(s, want, resource, nwant, nodes, first, n, fails);
}

// The fallbacks of a block of n <= kBlock nodes `nb` whose lanes left the
// vector path's range, shared by the separate loops and the one loop:
// LeastAllocated by its rule node by node; BalancedAllocation by the same
// lanes with direct int64-to-float64 conversions.
[[gnu::always_inline]] inline void least_block_by_rule(const SnapshotView& s, const ScoredResource* res,
                                                       uint32_t nres, const uint32_t* nb, uint32_t n, int64_t* out) {
  for (uint32_t i = 0; i < n; ++i) out[i] = least_allocated_score(s, res, nres, nb[i]);
}
[[gnu::always_inline]] inline void balanced2_block_direct(const SnapshotView& s, const ScoredResource* res,
                                                          const uint32_t* nb, uint32_t n, bool contig, int64_t* out) {
  if (contig)
    balanced2_block<true, false>(s, res, nb, nb[0], n, out);
  else
    balanced2_block<false, false>(s, res, nb, 0, n, out);
}

template <bool kViaBits>
[[gnu::always_inline]] inline void least_body(const SnapshotView& s, const ScoredResource* res, uint32_t nres,
                                              const uint32_t* nodes, uint32_t count, int64_t* out) {
  const bool two_unit = least_two_unit(res, nres);
  for (uint32_t lo = 0; lo < count; lo += kBlock) {
    const uint32_t n = count - lo < kBlock ? count - lo : kBlock;
    const uint32_t* nb = nodes + lo;
    const bool contig = is_contiguous_run(nb, n);
    const bool ok = two_unit ? (contig ? least2_unit_block<true, kViaBits>(s, res, nb, nb[0], n, out + lo)
                                       : least2_unit_block<false, kViaBits>(s, res, nb, 0, n, out + lo))
                             : (contig ? least_block<true, kViaBits>(s, res, nres, nb, nb[0], n, out + lo)
                                       : least_block<false, kViaBits>(s, res, nres, nb, 0, n, out + lo));
    if (!ok) least_block_by_rule(s, res, nres, nb, n, out + lo);
  }
}

template <bool kViaBits>
[[gnu::always_inline]] inline void balanced2_body(const SnapshotView& s, const ScoredResource* res,
                                                  const uint32_t* nodes, uint32_t count, int64_t* out) {
  for (uint32_t lo = 0; lo < count; lo += kBlock) {
    const uint32_t n = count - lo < kBlock ? count - lo : kBlock;
    const uint32_t* nb = nodes + lo;
    const bool contig = is_contiguous_run(nb, n);
    const bool split = kViaBits && (contig ? balanced2_block<true, kViaBits>(s, res, nb, nb[0], n, out + lo)
                                           : balanced2_block<false, kViaBits>(s, res, nb, 0, n, out + lo));
    if (!split) balanced2_block_direct(s, res, nb, n, contig, out + lo);
  }
}

// fit: nullptr where the Filter is not in the loop (out_fit unused).
template <bool kViaBits>
[[gnu::always_inline]] inline void least_balanced2_body(const SnapshotView& s, const ScoredResource* least,
                                                        const ScoredResource* bal, const FitInLoop* fit,
                                                        const uint32_t* nodes, uint32_t count, int64_t* out_least,
                                                        int64_t* out_bal, int64_t* out_fit) {
  for (uint32_t lo = 0; lo < count; lo += kBlock) {
    const uint32_t n = count - lo < kBlock ? count - lo : kBlock;
    const uint32_t* nb = nodes + lo;
    const bool contig = is_contiguous_run(nb, n);
    bool least_ok = false, bal_ok = false;
    int64_t* fb = fit ? out_fit + lo : nullptr;
    if (contig) {
      if (fit)
        least_balanced2_block<true, kViaBits, true>(s, least, bal, fit, nb, nb[0], n, out_least + lo, out_bal + lo,
                                                     fb, least_ok, bal_ok);
      else
        least_balanced2_block<true, kViaBits, false>(s, least, bal, fit, nb, nb[0], n, out_least + lo, out_bal + lo,
                                                      fb, least_ok, bal_ok);
    } else if (fit) {
      least_balanced2_block<false, kViaBits, true>(s, least, bal, fit, nb, 0, n, out_least + lo, out_bal + lo, fb,
                                                    least_ok, bal_ok);
    } else {
      least_balanced2_block<false, kViaBits, false>(s, least, bal, fit, nb, 0, n, out_least + lo, out_bal + lo, fb,
                                                     least_ok, bal_ok);
    }
    if (!least_ok) least_block_by_rule(s, least, 2, nb, n, out_least + lo);
    if (!bal_ok) balanced2_block_direct(s, bal, nb, n, contig, out_bal + lo);
  }
}

[[gnu::always_inline]] inline void fit_body(const SnapshotView& s, const int64_t* want, const uint32_t* resource,
                                            uint32_t nwant, const uint32_t* nodes, uint32_t count, uint8_t* fails) {
  for (uint32_t lo = 0; lo < count; lo += kBlock) {
    const uint32_t n = count - lo < kBlock ? count - lo : kBlock;
    const uint32_t* nb = nodes + lo;
    if (is_contiguous_run(nb, n))
      fit_block_any<true>(s, want, resource, nwant, nb, nb[0], n, fails + lo);
    else
      fit_block_any<false>(s, want, resource, nwant, nb, 0, n, fails + lo);
  }
}

void fit_baseline(const SnapshotView& s, const int64_t* want, const uint32_t* resource, uint32_t nwant,
                  const uint32_t* nodes, uint32_t count, uint8_t* fails) {
  fit_body(s, want, resource, nwant, nodes, count, fails);
}
#if BULKSCORE_SIMD_X86
BULKSCORE_TARGET_AVX2 void fit_avx2(const SnapshotView& s, const int64_t* want, const uint32_t* resource,
                                    uint32_t nwant, const uint32_t* nodes, uint32_t count, uint8_t* fails) {
  fit_body(s, want, resource, nwant, nodes, count, fails);
}
BULKSCORE_TARGET_AVX512 void fit_avx512(const SnapshotView& s, const int64_t* want, const uint32_t* resource,
                                        uint32_t nwant, const uint32_t* nodes, uint32_t count, uint8_t* fails) {
  fit_body(s, want, resource, nwant, nodes, count, fails);
}
#endif

void least_baseline(const SnapshotView& s, const ScoredResource* res, uint32_t nres, const uint32_t* nodes,
                    uint32_t count, int64_t* out) {
  least_body<false>(s, res, nres, nodes, count, out);
}
void balanced2_baseline(const SnapshotView& s, const ScoredResource* res, const uint32_t* nodes, uint32_t count,
                        int64_t* out) {
  balanced2_body<false>(s, res, nodes, count, out);
}
#if BULKSCORE_SIMD_X86
BULKSCORE_TARGET_AVX2 void least_avx2(const SnapshotView& s, const ScoredResource* res, uint32_t nres,
                                      const uint32_t* nodes, uint32_t count, int64_t* out) {
  least_body<true>(s, res, nres, nodes, count, out);
}
BULKSCORE_TARGET_AVX2 void balanced2_avx2(const SnapshotView& s, const ScoredResource* res, const uint32_t* nodes,
                                          uint32_t count, int64_t* out) {
  balanced2_body<true>(s, res, nodes, count, out);
}
BULKSCORE_TARGET_AVX512 void least_avx512(const SnapshotView& s, const ScoredResource* res, uint32_t nres,
                                          const uint32_t* nodes, uint32_t count, int64_t* out) {
  least_body<false>(s, res, nres, nodes, count, out);
}
BULKSCORE_TARGET_AVX512 void balanced2_avx512(const SnapshotView& s, const ScoredResource* res, const uint32_t* nodes,
                                              uint32_t count, int64_t* out) {
  balanced2_body<false>(s, res, nodes, count, out);
}
#endif

void least_balanced2_baseline(const SnapshotView& s, const ScoredResource* least, const ScoredResource* bal,
                              const FitInLoop* fit, const uint32_t* nodes, uint32_t count, int64_t* out_least,
                              int64_t* out_bal, int64_t* out_fit) {
  least_balanced2_body<false>(s, least, bal, fit, nodes, count, out_least, out_bal, out_fit);
}
#if BULKSCORE_SIMD_X86
BULKSCORE_TARGET_AVX2 void least_balanced2_avx2(const SnapshotView& s, const ScoredResource* least,
                                                const ScoredResource* bal, const FitInLoop* fit,
                                                const uint32_t* nodes, uint32_t count, int64_t* out_least,
                                                int64_t* out_bal, int64_t* out_fit) {
  least_balanced2_body<true>(s, least, bal, fit, nodes, count, out_least, out_bal, out_fit);
}
BULKSCORE_TARGET_AVX512 void least_balanced2_avx512(const SnapshotView& s, const ScoredResource* least,
                                                    const ScoredResource* bal, const FitInLoop* fit,
                                                    const uint32_t* nodes, uint32_t count, int64_t* out_least,
                                                    int64_t* out_bal, int64_t* out_fit) {
  least_balanced2_body<false>(s, least, bal, fit, nodes, count, out_least, out_bal, out_fit);
}
#endif

// least_balanced2_body on the target in use.
void least_balanced2_scores(const SnapshotView& s, const ScoredResource* least, const ScoredResource* bal,
                            const FitInLoop* fit, const uint32_t* nodes, uint32_t count, int64_t* out_least,
                            int64_t* out_bal, int64_t* out_fit) {
#if BULKSCORE_SIMD_X86
  switch (simd_target()) {
    case SimdTarget::Avx512:
      return least_balanced2_avx512(s, least, bal, fit, nodes, count, out_least, out_bal, out_fit);
    case SimdTarget::Avx2:
      return least_balanced2_avx2(s, least, bal, fit, nodes, count, out_least, out_bal, out_fit);
    default:
      break;
  }
#endif
  least_balanced2_baseline(s, least, bal, fit, nodes, count, out_least, out_bal, out_fit);
}

}  // namespace

void least_allocated_scores(const SnapshotView& s, const ScoredResource* res, uint32_t nres, const uint32_t* nodes,
                            uint32_t count, int64_t* out) {
#if BULKSCORE_SIMD_X86
  switch (simd_target()) {
    case SimdTarget::Avx512:
      return least_avx512(s, res, nres, nodes, count, out);
    case SimdTarget::Avx2:
      return least_avx2(s, res, nres, nodes, count, out);
    default:
      break;
  }
#endif
  least_baseline(s, res, nres, nodes, count, out);
}

void balanced_allocation_scores2(const SnapshotView& s, const ScoredResource* res, const uint32_t* nodes,
                                 uint32_t count, int64_t* out) {
#if BULKSCORE_SIMD_X86
  switch (simd_target()) {
    case SimdTarget::Avx512:
      return balanced2_avx512(s, res, nodes, count, out);
    case SimdTarget::Avx2:
      return balanced2_avx2(s, res, nodes, count, out);
    default:
      break;
  }
#endif
  balanced2_baseline(s, res, nodes, count, out);
}

namespace {

// fit_body on the target in use.
void fit_fails(const SnapshotView& s, const int64_t* want, const uint32_t* resource, uint32_t nwant,
               const uint32_t* nodes, uint32_t count, uint8_t* fails) {
#if BULKSCORE_SIMD_X86
  switch (simd_target()) {
    case SimdTarget::Avx512:
      return fit_avx512(s, want, resource, nwant, nodes, count, fails);
    case SimdTarget::Avx2:
      return fit_avx2(s, want, resource, nwant, nodes, count, fails);
    default:
      break;
  }
#endif
  fit_baseline(s, want, resource, nwant, nodes, count, fails);
}

// NodeResourcesFit's Filter (a kSharedFitFilter part) of `count` nodes
// alone: out[i] = 1 where the node fails it.
void fit_part_alone(const SnapshotView& s, const SharedScorePart& part, const uint32_t* nodes, uint32_t count,
                    int64_t* out) {
  const auto& st = *static_cast<const plugins::NodeResourcesFit::State*>(part.entries);
  FitChecks c;
  if (!fit_checks(st, part.arena, c)) {
    for (uint32_t i = 0; i < count; ++i)
      out[i] = static_cast<int64_t>(!plugins::NodeResourcesFit::filter(s, st, part.arena, nodes[i]).ok());
    return;
  }
  uint8_t fails[kBlock];
  for (uint32_t lo = 0; lo < count; lo += kBlock) {
    const uint32_t n = std::min(kBlock, count - lo);
    fit_fails(s, c.want, c.resource, c.n, nodes + lo, n, fails);
    for (uint32_t i = 0; i < n; ++i) out[lo + i] = fails[i];
  }
}

// What each part of a resource_allocation_scores call is: the indices of
// the one loop's LeastAllocated and BalancedAllocation parts (where the
// score parts are exactly that pair) and of the Filter's part (nparts where
// absent).
struct PartRoles {
  uint32_t least, bal, fit;
  bool one_loop;
};
PartRoles part_roles(const SharedScorePart* parts, uint32_t nparts) {
  PartRoles r{nparts, nparts, nparts, false};
  uint32_t scores = 0;
  for (uint32_t k = 0; k < nparts; ++k) {
    if (parts[k].kind == kSharedFitFilter) {
      r.fit = k;
      continue;
    }
    ++scores;
    if (parts[k].kind == kSharedLeastAllocated) r.least = k;
    if (parts[k].kind == kSharedBalanced2) r.bal = k;
  }
  if (scores != 2 || r.least == nparts || r.bal == nparts) return r;
  const auto* lr = static_cast<const ScoredResource*>(parts[r.least].entries);
  const auto* br = static_cast<const ScoredResource*>(parts[r.bal].entries);
  // The pair the default profile scores with.
  r.one_loop = least_two_unit(lr, parts[r.least].count) && parts[r.bal].count == 2 &&
               lr[0].resource == br[0].resource && lr[1].resource == br[1].resource;
  return r;
}

// The Filter's checks as the one loop over `least`'s two resources makes
// them; false where the pod checks too many requests (fit_part_alone then).
bool fit_in_loop(const SharedScorePart& part, const ScoredResource* least, FitInLoop& in) {
  const auto& st = *static_cast<const plugins::NodeResourcesFit::State*>(part.entries);
  FitChecks c;
  if (!fit_checks(st, part.arena, c)) return false;
  in = FitInLoop{};
  for (uint32_t k = 0; k < c.n; ++k) {
    if (c.resource[k] == least[0].resource && in.w0 == INT64_MIN) {
      in.w0 = c.want[k];
    } else if (c.resource[k] == least[1].resource && in.w1 == INT64_MIN) {
      in.w1 = c.want[k];
    } else {
      in.extra.want[in.extra.n] = c.want[k];
      in.extra.resource[in.extra.n++] = c.resource[k];
    }
  }
  return true;
}

}  // namespace

bool resource_allocation_one_loop(const SharedScorePart* parts, uint32_t nparts) {
  return part_roles(parts, nparts).one_loop;
}

void resource_allocation_scores(const SnapshotView& s, const SharedScorePart* parts, uint32_t nparts,
                                const uint32_t* nodes, uint32_t count, int64_t* const* out) {
  const PartRoles roles = part_roles(parts, nparts);
  const SharedScorePart* fit = roles.fit < nparts ? &parts[roles.fit] : nullptr;
  if (roles.one_loop) {
    const auto* least = static_cast<const ScoredResource*>(parts[roles.least].entries);
    FitInLoop in_loop;
    const bool fit_inside = fit && fit_in_loop(*fit, least, in_loop);
    least_balanced2_scores(s, least, static_cast<const ScoredResource*>(parts[roles.bal].entries),
                           fit_inside ? &in_loop : nullptr, nodes, count, out[roles.least], out[roles.bal],
                           fit ? out[roles.fit] : nullptr);
    if (fit && !fit_inside) fit_part_alone(s, *fit, nodes, count, out[roles.fit]);
    return;
  }
  for (uint32_t k = 0; k < nparts; ++k) {
    const auto* res = static_cast<const ScoredResource*>(parts[k].entries);
    if (parts[k].kind == kSharedLeastAllocated)
      least_allocated_scores(s, res, parts[k].count, nodes, count, out[k]);
    else if (parts[k].kind == kSharedBalanced2)
      balanced_allocation_scores2(s, res, nodes, count, out[k]);
    else
      fit_part_alone(s, parts[k], nodes, count, out[k]);
  }
}

namespace plugins {

void NodeResourcesFit::filter_nodes(const SnapshotView& s, const State& st, const uint8_t* arena, const uint32_t* nodes,
                                    uint32_t count, uint8_t* fails) {
  FitChecks c;
  if (!fit_checks(st, arena, c)) {
    // Many extended resources: node by node (rare).
    for (uint32_t i = 0; i < count; ++i) fails[i] = static_cast<uint8_t>(!filter(s, st, arena, nodes[i]).ok());
    return;
  }
  fit_fails(s, c.want, c.resource, c.n, nodes, count, fails);
}

void NodeResourcesFit::score_nodes(const SnapshotView& s, const State& st, const uint8_t* arena, const uint32_t* nodes,
                                   uint32_t count, int64_t* out) {
  if (st.strategy == kLeastAllocated) {
    least_allocated_scores(s, st.scored.data(arena), st.scored.count, nodes, count, out);
    return;
  }
  for (uint32_t i = 0; i < count; ++i) out[i] = score(s, st, arena, nodes[i]);
}

bool NodeResourcesFit::shared_score(const State& st, const uint8_t* arena, SharedScorePart& part) {
  if (st.strategy != kLeastAllocated) return false;
  part = SharedScorePart{resource_allocation_scores, kSharedLeastAllocated, st.scored.count, st.scored.data(arena),
                         arena};
  return true;
}

bool NodeResourcesFit::shared_filter(const State& st, const uint8_t* arena, SharedScorePart& part) {
  part = SharedScorePart{resource_allocation_scores, kSharedFitFilter, 0, &st, arena};
  return true;
}

bool NodeResourcesBalancedAllocation::shared_score(const State& st, const uint8_t* arena, SharedScorePart& part) {
  const ScoredResource* res = st.scored.data(arena);
  if (st.scored.count != 2 || res[0].source == ScoredResource::kSkip || res[1].source == ScoredResource::kSkip)
    return false;
  part = SharedScorePart{resource_allocation_scores, kSharedBalanced2, 2, res, arena};
  return true;
}

void NodeResourcesBalancedAllocation::score_nodes(const SnapshotView& s, const State& st, const uint8_t* arena,
                                                  const uint32_t* nodes, uint32_t count, int64_t* out) {
  const ScoredResource* res = st.scored.data(arena);
  if (st.scored.count == 2 && res[0].source != ScoredResource::kSkip && res[1].source != ScoredResource::kSkip) {
    balanced_allocation_scores2(s, res, nodes, count, out);
    return;
  }
  for (uint32_t i = 0; i < count; ++i) out[i] = score(s, st, arena, nodes[i]);
}

}  // namespace plugins
}  // namespace bulkscore
