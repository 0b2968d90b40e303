#include "plugins/simd_dispatch.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace bulkscore {
namespace {

SimdTarget best_supported() {
  if (simd_supported(SimdTarget::Avx512)) return SimdTarget::Avx512;
  if (simd_supported(SimdTarget::Avx2)) return SimdTarget::Avx2;
  return SimdTarget::Baseline;
}

SimdTarget initial_target() {
  const char* env = std::getenv("BULKSCORE_SIMD");  // NOLINT(concurrency-mt-unsafe): read once
  if (env) {
    for (uint32_t t = 0; t < kNumSimdTargets; ++t)
      if (std::strcmp(env, simd_target_name(static_cast<SimdTarget>(t))) == 0 &&
          simd_supported(static_cast<SimdTarget>(t)))
        return static_cast<SimdTarget>(t);
  }
  return best_supported();
}

std::atomic<int>& current() {
  static std::atomic<int> t{static_cast<int>(initial_target())};
  return t;
}

}  // namespace

const char* simd_target_name(SimdTarget t) {
  switch (t) {
    case SimdTarget::Avx2:
      return "avx2";
    case SimdTarget::Avx512:
      return "avx512";
    default:
      return "baseline";
  }
}

bool simd_supported(SimdTarget t) {
#if BULKSCORE_SIMD_X86
  switch (t) {
    case SimdTarget::Avx2:
      return __builtin_cpu_supports("avx2");
    case SimdTarget::Avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
    default:
      return true;
  }
#else
  return t == SimdTarget::Baseline;
#endif
}

SimdTarget simd_target() { return static_cast<SimdTarget>(current().load(std::memory_order_relaxed)); }

SimdTarget set_simd_target(SimdTarget t) {
  const SimdTarget use = simd_supported(t) ? t : best_supported();
  current().store(static_cast<int>(use), std::memory_order_relaxed);
  return use;
}

}  // namespace bulkscore
