// Run-time SIMD dispatch for the CPU backend's column loops (issue 24,
// item 2). A loop is written once, branch-free, as an always-inline body,
// and compiled three times: for baseline x86-64 (what the release binary
// assumes), with AVX2, and with AVX-512 (F, DQ, VL, BW: the int64 <-> float64
// conversions and 64-bit multiplies the rules need). The variant runs that
// the CPU supports, chosen once (simd_target()); tests run every supported
// one (set_simd_target) and compare.
//
// Results are the same bits on every target: integer arithmetic, and float64
// with the same operations in the same order (-ffp-contract=off, so no FMA
// contraction even where the target has FMA; no fast-math).
//
// Host only: device code never includes this.
#pragma once

#include <cstdint>

namespace bulkscore {

enum class SimdTarget : uint8_t { Baseline = 0, Avx2 = 1, Avx512 = 2 };
constexpr uint32_t kNumSimdTargets = 3;

const char* simd_target_name(SimdTarget t);
// Whether this CPU can run the target's variant (Baseline always).
bool simd_supported(SimdTarget t);
// The target the column loops use: the best supported one, or what
// BULKSCORE_SIMD (baseline|avx2|avx512, read once) or set_simd_target chose
// (never one the CPU lacks: that falls back to the best supported).
SimdTarget simd_target();
// For tests and benchmarks: makes the loops use `t` (if supported; returns
// the target now in use).
SimdTarget set_simd_target(SimdTarget t);

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__CUDACC__)
#define BULKSCORE_SIMD_X86 1
#define BULKSCORE_TARGET_AVX2 __attribute__((target("avx2")))
#define BULKSCORE_TARGET_AVX512 __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw")))
#else
#define BULKSCORE_SIMD_X86 0
#endif

}  // namespace bulkscore
