// The placement policies "Beware of Fragmentation" (USENIX ATC '23)
// compares FGD with, as Score plugins (bulkscore's own), each as the
// paper's public simulator defines it (docs/gpu-placement.md):
//
//   GpuBestFit     the node left with the least cpu and GPU after the pod,
//                  min-max normalized in integers
//   GpuDotProduct  Tetris: the least alignment between the node's free
//                  resources and the pod's request
//   GpuPacking     shared GPUs first, then free GPUs of used nodes, then
//                  idle nodes
//   GpuClustering  nodes already running pods of the same GPU class
//   GpuRandomFit   one feasible node drawn at random scores 100
//
// Normalizers (the largest node's cpu and GPU units) and the random seed
// are GpuScoreArgs.
#pragma once

#include "plugins/gpu_fragmentation.hpp"
#include "plugins/plugin_api.hpp"

namespace bulkscore {
namespace plugins {

// What the baselines read: the pod and the normalizers.
struct GpuBaselineState {
  GpuPod pod;
  int64_t max_cpu_milli;
  int64_t max_gpu_units;
};
PrepareResult prepare_gpu_baseline(const PrepareContext& ctx, GpuBaselineState& st);

// The units the pod takes in all: count x units per device (whole devices:
// the node's device units).
BULKSCORE_HD int64_t pod_gpu_units(const SnapshotView& s, const GpuPod& p, uint32_t node) {
  if (p.count == 0) return 0;
  const uint32_t first = s.device_offsets[node];
  const int32_t units = first < s.device_offsets[node + 1] ? s.device_units[first] : kDefaultDeviceUnits;
  return static_cast<int64_t>(p.count) * units_needed(p.milli, units);
}

struct GpuBestFit {
  static constexpr const char* kName = "GpuBestFit";
  static constexpr bool kReadsDevices = true;  // a profile running it models devices (plugins/reserve.hpp)
  static constexpr bool kHasFilter = false;
  static constexpr bool kHasScore = true;
  static constexpr NormalizeKind kNormalize = NormalizeKind::MinMaxInteger;
  static constexpr bool kPreScoreFeasible = false;
  using State = GpuBaselineState;
  static PrepareResult prepare(const PrepareContext& ctx, State& st, Arena& arena);

  // (1 - (0.5 (cpu left - cpu) / max cpu + 0.5 (GPU left - GPU) / max GPU)) x 100, truncated.
  static BULKSCORE_HD int64_t score(const SnapshotView& s, const State& st, const uint8_t*, uint32_t node) {
    const double cpu_after = static_cast<double>(go_sub(node_cpu_left(s, node), st.pod.cpu_milli));
    const double gpu_after = static_cast<double>(node_free_units(s, node) - pod_gpu_units(s, st.pod, node));
    if (cpu_after < 0 || gpu_after < 0) return 0;
    double left = 0.0;
    left = left + cpu_after / static_cast<double>(st.max_cpu_milli) * 0.5;
    left = left + gpu_after / static_cast<double>(st.max_gpu_units) * 0.5;
    return go_float_to_int64((1.0 - left) * 100.0);
  }
};

struct GpuDotProduct {
  static constexpr const char* kName = "GpuDotProduct";
  static constexpr bool kReadsDevices = true;  // a profile running it models devices (plugins/reserve.hpp)
  static constexpr bool kHasFilter = false;
  static constexpr bool kHasScore = true;
  static constexpr NormalizeKind kNormalize = NormalizeKind::None;
  static constexpr bool kPreScoreFeasible = false;
  using State = GpuBaselineState;
  static PrepareResult prepare(const PrepareContext& ctx, State& st, Arena& arena);

  // The node's free (cpu, GPU) and the pod's request, each divided by the
  // normalizers; their dot product over the two dimensions; 100 x (1 - it).
  static BULKSCORE_HD int64_t score(const SnapshotView& s, const State& st, const uint8_t*, uint32_t node) {
    const double cpu = static_cast<double>(st.max_cpu_milli), gpu = static_cast<double>(st.max_gpu_units);
    double dot = 0.0;
    dot = dot + static_cast<double>(node_cpu_left(s, node)) / cpu * (static_cast<double>(st.pod.cpu_milli) / cpu);
    dot = dot + static_cast<double>(node_free_units(s, node)) / gpu *
                    (static_cast<double>(pod_gpu_units(s, st.pod, node)) / gpu);
    dot = dot / 2.0;
    return go_float_to_int64(100.0 * (1.0 - dot));
  }
};

struct GpuPacking {
  static constexpr const char* kName = "GpuPacking";
  static constexpr bool kReadsDevices = true;  // a profile running it models devices (plugins/reserve.hpp)
  static constexpr bool kHasFilter = false;
  static constexpr bool kHasScore = true;
  static constexpr NormalizeKind kNormalize = NormalizeKind::None;
  static constexpr bool kPreScoreFeasible = false;
  using State = GpuBaselineState;
  static PrepareResult prepare(const PrepareContext& ctx, State& st, Arena& arena);

  // Pods without devices: 0. An idle node (every device free): max(33 -
  // devices, devices). Otherwise the devices the pod would take, fewest
  // free units first: when some are entirely free, max(50 - their number,
  // 33); when all are shared, max(100 - sum of their free percent / 10, 50).
  static BULKSCORE_HD int64_t score(const SnapshotView& s, const State& st, const uint8_t*, uint32_t node) {
    if (st.pod.count == 0) return 0;
    const uint32_t first = s.device_offsets[node], n = s.device_offsets[node + 1] - first;
    const int64_t* free = s.device_free + first;
    const int32_t* units = s.device_units + first;
    int64_t fully_free = 0;
    for (uint32_t d = 0; d < n; ++d) fully_free += free[d] == units[d] ? 1 : 0;
    if (fully_free == static_cast<int64_t>(n))
      return 100 / 3 - fully_free > fully_free ? 100 / 3 - fully_free : fully_free;
    uint64_t taken = 0;
    int64_t fully_free_taken = 0, free_percent = 0;
    for (int32_t k = 0; k < st.pod.count; ++k) {
      const int32_t pick = fewest_free_fitting(free, units, n, st.pod.milli, taken);
      if (pick < 0) return 0;  // does not fit (the filter keeps such nodes out)
      taken |= uint64_t(1) << pick;
      fully_free_taken += free[pick] == units[pick] ? 1 : 0;
      free_percent += static_cast<int64_t>(free[pick]) * 100 / units[pick];
    }
    if (fully_free_taken > 0) return 50 - fully_free_taken > 33 ? 50 - fully_free_taken : 33;
    return 100 - free_percent / 10 > 50 ? 100 - free_percent / 10 : 50;
  }
};

struct GpuClustering {
  static constexpr const char* kName = "GpuClustering";
  static constexpr bool kReadsDevices = true;  // a profile running it models devices (plugins/reserve.hpp)
  static constexpr bool kHasFilter = false;
  static constexpr bool kHasScore = true;
  static constexpr NormalizeKind kNormalize = NormalizeKind::None;
  static constexpr bool kPreScoreFeasible = false;
  using State = GpuBaselineState;
  static PrepareResult prepare(const PrepareContext& ctx, State& st, Arena& arena);

  // The pod's class (a share, or k whole devices) against the classes of
  // the pods on the node (SnapshotView::device_pod_classes): only its own
  // 75, its own among others 50, none 25, only others 0; plus 25 x the
  // GPU units in use over the largest node's, in integers. No devices: 0.
  static BULKSCORE_HD int64_t score(const SnapshotView& s, const State& st, const uint8_t*, uint32_t node) {
    if (st.pod.count == 0) return 0;
    const uint32_t first = s.device_offsets[node];
    const int32_t units = first < s.device_offsets[node + 1] ? s.device_units[first] : kDefaultDeviceUnits;
    const uint64_t mine = device_class_bit(st.pod.count, st.pod.milli, units);
    const uint64_t there = s.device_pod_classes[node];
    // Go's wrapping int64 arithmetic (a normalizer near 2^63 wraps; the
    // prepare then asks for the range check).
    const int64_t base = go_mul(25, go_sub(st.max_gpu_units, node_free_units(s, node))) / st.max_gpu_units;
    if ((there & mine) != 0) return base + (there == mine ? 75 : 50);
    return base + (there == 0 ? 25 : 0);
  }
};

struct GpuRandomFit {
  static constexpr const char* kName = "GpuRandomFit";
  static constexpr bool kReadsDevices = true;  // a profile running it models devices (plugins/reserve.hpp)
  static constexpr bool kHasFilter = false;
  static constexpr bool kHasScore = true;
  static constexpr NormalizeKind kNormalize = NormalizeKind::None;
  static constexpr bool kPreScoreFeasible = true;

  struct State {
    uint64_t draw;    // from the seed and the pod's name
    uint32_t chosen;  // the node drawn among the feasible ones (PreScore)
    uint32_t reserved;
  };
  static PrepareResult prepare(const PrepareContext& ctx, State& st, Arena&);
  static void prescore_feasible(const Snapshot&, State& st, Arena&, const uint32_t* feasible, uint32_t count) {
    st.chosen = count == 0 ? UINT32_MAX : feasible[st.draw % count];
  }
  static BULKSCORE_HD int64_t score(const SnapshotView&, const State& st, const uint8_t*, uint32_t node) {
    return node == st.chosen ? 100 : 0;
  }
};

}  // namespace plugins
}  // namespace bulkscore
