// GPU fragmentation (docs/gpu-placement.md), as "Beware of Fragmentation"
// (USENIX ATC '23) measures it: how many of a node's free GPU units a
// typical task could not use, averaged over the distribution of task
// shapes. The rules are host/device functions, one copy for the FGD score,
// its device choice and the replay's cluster metrics.
//
// For a node with free units free[0..G) on its devices, cpu_left
// millicores unallocated, card model m, and a task shape k (cpu, units per
// device, device count, allowed models):
//   * k asks for no device, or m is not allowed, or fewer than count
//     devices have k's units free, or cpu_left < k's cpu: every free unit
//     is a fragment for k;
//   * otherwise k fits, and the fragments are the free units on the devices
//     with fewer than k's units free.
// The node's fragmentation is the sum over shapes of weight x fragments.
#pragma once

#include <cmath>
#include <cstdint>

#include "host/common.hpp"
#include "host/input/devices.hpp"

namespace bulkscore {

// One task shape of the target workload (flattened for the device: the
// allowed models are `num_models` string ids at models[first_model]).
struct TaskShape {
  int64_t cpu_milli;
  double weight;        // its share of the workload, the weights summing to 1
  int32_t milli;        // units per device, kWholeDevice, or 0 with count 0
  int32_t count;        // devices
  uint32_t first_model;
  uint32_t num_models;  // 0: any model
};

// exp(x) from +, *, / and exact scaling only, so that host and device give
// the same bits (libm's and CUDA's exp may differ in the last place, and
// a score truncated to an integer can then differ). Relative error below
// 1e-15 for |x| < 700; saturates beyond.
BULKSCORE_HD double portable_exp(double x) {
  if (x > 700.0) x = 700.0;
  if (x < -700.0) x = -700.0;
  // x = k ln2 + r, |r| <= ln2 / 2, ln2 split in two for an exact k ln2.
  constexpr double kLn2Hi = 6.93147180369123816490e-01;
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  constexpr double kInvLn2 = 1.44269504088896338700e+00;
  const double kf = x * kInvLn2;
  const int k = static_cast<int>(kf < 0 ? kf - 0.5 : kf + 0.5);
  const double r = (x - k * kLn2Hi) - k * kLn2Lo;
  // Taylor series to r^14 / 14!: |r| < 0.35 makes the next term < 1e-19.
  double term = 1.0, sum = 1.0;
  for (int i = 1; i <= 14; ++i) {
    term = term * r / i;
    sum = sum + term;
  }
  // Scaling by 2^k is exact (ldexp is correctly rounded on both).
  return ldexp(sum, k);
}

BULKSCORE_HD double portable_sigmoid(double x) { return 1.0 / (1.0 + portable_exp(-x)); }

// The units device d needs free for a shape asking `milli` per device.
BULKSCORE_HD int32_t units_needed(int32_t milli, int32_t device_units) {
  return milli == kWholeDevice ? device_units : milli;
}

// Fragments of one node for one shape (see the top of the file).
BULKSCORE_HD int64_t shape_fragments(const int32_t* free, const int32_t* units, uint32_t num_devices,
                                     int64_t cpu_left, int32_t model, const TaskShape& k, const int32_t* models) {
  int64_t idle = 0;
  for (uint32_t d = 0; d < num_devices; ++d) idle += free[d];
  if (k.count == 0) return idle;
  if (k.num_models > 0) {
    bool allowed = false;
    for (uint32_t i = 0; i < k.num_models && model != -1; ++i) allowed |= models[k.first_model + i] == model;
    if (!allowed) return idle;
  }
  int32_t fitting = 0;
  int64_t too_small = 0;
  for (uint32_t d = 0; d < num_devices; ++d) {
    if (free[d] >= units_needed(k.milli, units[d]))
      ++fitting;
    else
      too_small += free[d];
  }
  if (fitting < k.count || cpu_left < k.cpu_milli) return idle;
  return too_small;
}

// The node's fragmentation: sum over shapes of weight x fragments, in shape
// order (the order fixes the floating-point sum).
BULKSCORE_HD double node_fragmentation(const int32_t* free, const int32_t* units, uint32_t num_devices,
                                       int64_t cpu_left, int32_t model, const TaskShape* shapes, uint32_t num_shapes,
                                       const int32_t* models) {
  double f = 0.0;
  for (uint32_t i = 0; i < num_shapes; ++i)
    f = f + shapes[i].weight *
                static_cast<double>(shape_fragments(free, units, num_devices, cpu_left, model, shapes[i], models));
  return f;
}

}  // namespace bulkscore
