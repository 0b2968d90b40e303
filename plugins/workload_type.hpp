// WorkloadType (PreFilter, Filter): bulkscore's own plugin, not upstream's
// (docs/plugins.md). A pod labelled as CPU-intensive fits only nodes with
// at least a configured amount of allocatable cpu; one labelled as
// GPU-intensive only nodes with a positive allocatable of one of the
// configured GPU resources. Every other pod skips the plugin at PreFilter.
#pragma once

#include "host/snapshot/snapshot.hpp"
#include "plugins/plugin_api.hpp"

namespace bulkscore {

namespace plugins {

struct WorkloadType {
  static constexpr const char* kName = "WorkloadType";
  static constexpr bool kHasFilter = true;
  // Filter reads the node's allocatable (plugin_api.hpp).
  static constexpr FilterReach kFilterReach = FilterReach::kNodeLocal;
  static constexpr bool kHasScore = false;
  static constexpr NormalizeKind kNormalize = NormalizeKind::None;
  static constexpr bool kPreScoreFeasible = false;

  // Reason bits, one per workload type.
  static constexpr uint64_t kNotEnoughCpu = 1;
  static constexpr uint64_t kNoGpu = 2;

  enum class Kind : uint8_t { Other = 0, CpuIntensive = 1, GpuIntensive = 2 };

  struct State {
    int64_t cpu_threshold_milli = 0;  // CpuIntensive: allocatable cpu a node needs
    // GpuIntensive: the snapshot's indices of the configured GPU resources it
    // knows (a name it does not know is on no node, so it is left out).
    Span<uint32_t> gpu_resources;
    Kind kind = Kind::Other;
    uint8_t padding_[7] = {};  // explicit: a query is compared byte for byte (docs/batching.md)
  };

  static PrepareResult prepare(const PrepareContext& ctx, State& st, Arena& arena);

  // A node's allocatable never changes by evicting pods, so preemption cannot
  // help: the rejection is UnschedulableAndUnresolvable.
  static BULKSCORE_HD FilterOutcome filter(const SnapshotView& s, const State& st, const uint8_t* arena,
                                           uint32_t node) {
    if (st.kind == Kind::CpuIntensive) {
      if (s.alloc(kCpu, node) >= st.cpu_threshold_milli) return filter_pass();
      return filter_fail(Code::UnschedulableAndUnresolvable, kNotEnoughCpu);
    }
    if (st.kind == Kind::GpuIntensive) {
      const uint32_t* gpus = st.gpu_resources.data(arena);
      for (uint32_t i = 0; i < st.gpu_resources.count; ++i)
        if (s.alloc(gpus[i], node) > 0) return filter_pass();
      return filter_fail(Code::UnschedulableAndUnresolvable, kNoGpu);
    }
    return filter_pass();
  }

  static void reasons(uint64_t bits, const Snapshot& snap, const State& st, const uint8_t* arena, uint32_t node,
                      std::vector<std::string>& out);
};
}  // namespace plugins
}  // namespace bulkscore
