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
#include <string>
#include <vector>

#include "host/common.hpp"
#include "host/input/devices.hpp"
#include "host/snapshot/snapshot.hpp"

namespace bulkscore {

// One task shape of the target workload (flattened for the device: the
// allowed models are `num_models` string ids at models[first_model]).
struct TaskShape {
  int64_t cpu_milli;
  double weight;  // its share of the workload, the weights summing to 1
  int32_t milli;  // units per device, kWholeDevice, or 0 with count 0
  int32_t count;  // devices
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

// Among the devices not in `taken` (a bit per device; kMaxDevicesPerNode is
// 64) that have the units a shape asking `milli` per device needs, the one
// with the fewest units free (ties: the lower index), or -1: how whole
// devices are taken by FGD, GpuPacking and GpuShare's Best selection.
BULKSCORE_HD int32_t fewest_free_fitting(const int64_t* free, const int32_t* units, uint32_t num_devices, int32_t milli,
                                         uint64_t taken) {
  int32_t pick = -1;
  for (uint32_t d = 0; d < num_devices; ++d) {
    if (((taken >> d) & 1) != 0 || free[d] < units_needed(milli, units[d])) continue;
    if (pick < 0 || free[d] < free[pick]) pick = static_cast<int32_t>(d);
  }
  return pick;
}

// Fragments of one node for one shape (see the top of the file).
BULKSCORE_HD int64_t shape_fragments(const int64_t* free, const int32_t* units, uint32_t num_devices, int64_t cpu_left,
                                     int32_t model, const TaskShape& k, const int32_t* models) {
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
// order (the order fixes the floating-point sum). (A version that summed
// the free units once and kept the device loop's result per units asked
// was slower on the trace: a node has at most 8 devices there.)
BULKSCORE_HD double node_fragmentation(const int64_t* free, const int32_t* units, uint32_t num_devices,
                                       int64_t cpu_left, int32_t model, const TaskShape* shapes, uint32_t num_shapes,
                                       const int32_t* models) {
  double f = 0.0;
  for (uint32_t i = 0; i < num_shapes; ++i)
    f = f + shapes[i].weight *
                static_cast<double>(shape_fragments(free, units, num_devices, cpu_left, model, shapes[i], models));
  return f;
}

}  // namespace bulkscore

namespace bulkscore {

struct PrepareContext;
class Snapshot;

// What the GPU placement policies read of the incoming pod (prepare).
struct GpuPod {
  int64_t cpu_milli;     // its cpu request
  int32_t count;         // devices (0: none)
  int32_t milli;         // units per device, kWholeDevice, or 0
  int32_t model_key;     // string id of the card-model label key, kNoId when unknown
  int32_t model_slot;    // its dense label column, or -1
  uint32_t no_requests;  // the pod requests nothing at all (FGD scores it 100)
  uint32_t reserved;     // zero: the state is compared byte for byte
};

// A 64-bit hash of a seed and a string (FNV-1a, then SplitMix64's
// finalizer): the policies' deterministic random draws.
uint64_t mix_hash(uint64_t seed, const std::string& text);

// The pod as the policies see it (host; InputError for malformed device
// annotations, naming the pod).
GpuPod gpu_pod_of(const PrepareContext& ctx);
// The typical tasks as rule inputs: shapes and their models' string ids
// (a model no node has gets -1, which matches no node).
void flatten_tasks(const std::vector<TypicalTask>& tasks, const Snapshot& snap, std::vector<TaskShape>& shapes,
                   std::vector<int32_t>& models);

// ---- per-node reads the policies share -------------------------------------------

BULKSCORE_HD int64_t node_cpu_left(const SnapshotView& s, uint32_t node) { return go_sub(s.alloc(0, node), s.req(0, node)); }
BULKSCORE_HD int32_t node_card_model(const SnapshotView& s, const GpuPod& p, uint32_t node) {
  return p.model_key == -1 ? -1 : s.label_value(node, p.model_key, p.model_slot);
}
BULKSCORE_HD int64_t node_free_units(const SnapshotView& s, uint32_t node) {
  int64_t sum = 0;
  for (uint32_t d = s.device_offsets[node]; d < s.device_offsets[node + 1]; ++d) sum += s.device_free[d];
  return sum;
}
// A share of one device (count 1, fewer units than the device has), which
// packs with others; anything else takes whole devices.
BULKSCORE_HD bool is_share(int32_t count, int32_t milli, int32_t device_units) {
  return count == 1 && milli != kWholeDevice && milli < device_units;
}

// FGD on one node (the paper's Algorithm: the fragmentation the placement
// removes, through a sigmoid into 0..100, truncated). For a share, every
// device that holds it is tried and the best kept (ties: the lower index),
// written to `*device`; whole devices take the fitting ones with the
// fewest units free first (ties: the lower index), `*device` -1.
BULKSCORE_HD int64_t fgd_node_score(const int64_t* free, const int32_t* units, uint32_t num_devices, int64_t cpu_left,
                                    int32_t model, int64_t cpu, int32_t count, int32_t milli, const TaskShape* shapes,
                                    uint32_t num_shapes, const int32_t* models, int32_t* device) {
  int64_t after[kMaxDevicesPerNode];
  for (uint32_t d = 0; d < num_devices; ++d) after[d] = free[d];
  const double before = node_fragmentation(free, units, num_devices, cpu_left, model, shapes, num_shapes, models);
  *device = -1;
  if (num_devices > 0 && is_share(count, milli, units[0])) {
    int64_t best = 0;
    for (uint32_t d = 0; d < num_devices; ++d) {
      if (free[d] < milli) continue;
      // Fragments depend on the free units as a multiset (a node's devices
      // are alike): a device with the same free units as a lower one gives
      // the same score, and the lower index wins the tie anyway.
      bool seen = false;
      for (uint32_t e = 0; e < d && !seen; ++e) seen = free[e] == free[d] && units[e] == units[d];
      if (seen) continue;
      after[d] = free[d] - milli;
      const double f = node_fragmentation(after, units, num_devices, go_sub(cpu_left, cpu), model, shapes, num_shapes, models);
      after[d] = free[d];
      const auto s = static_cast<int64_t>(portable_sigmoid((before - f) / 1000.0) * 100.0);
      if (*device < 0 || s > best) {
        best = s;
        *device = static_cast<int32_t>(d);
      }
    }
    return best;
  }
  uint64_t taken = 0;  // kMaxDevicesPerNode is 64
  for (int32_t n = 0; n < count; ++n) {
    const int32_t pick = fewest_free_fitting(free, units, num_devices, milli, taken);
    if (pick < 0) break;
    taken |= uint64_t(1) << pick;
    after[pick] = free[pick] - units_needed(milli, units[pick]);
  }
  const double f = node_fragmentation(after, units, num_devices, go_sub(cpu_left, cpu), model, shapes, num_shapes, models);
  return static_cast<int64_t>(portable_sigmoid((before - f) / 1000.0) * 100.0);
}

}  // namespace bulkscore
