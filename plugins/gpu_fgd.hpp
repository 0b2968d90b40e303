// GpuFragmentation (PreScore, Score; bulkscore's own): FGD, "Beware of
// Fragmentation" (USENIX ATC '23). A node scores by how much placing the
// pod there changes the node's GPU fragmentation measured against the
// typical tasks (plugins/gpu_fragmentation.hpp): 50 for no change, above
// for a placement that removes fragments. Raw scores are final (0..100).
// The device a share takes is chosen the same way (GpuShare's
// `deviceSelection: Fragmentation`).
#pragma once

#include "plugins/gpu_fragmentation.hpp"
#include "plugins/plugin_api.hpp"

namespace bulkscore {

struct ProfileConfig;

namespace plugins {

struct GpuFragmentation {
  static constexpr const char* kName = "GpuFragmentation";
  static constexpr bool kReadsDevices = true;  // a profile running it models devices (plugins/reserve.hpp)
  static constexpr bool kHasFilter = false;
  static constexpr bool kHasScore = true;
  static constexpr NormalizeKind kNormalize = NormalizeKind::None;
  static constexpr bool kPreScoreFeasible = false;

  struct State {
    GpuPod pod;
    Span<TaskShape> shapes;
    Span<int32_t> models;
  };

  static PrepareResult prepare(const PrepareContext& ctx, State& st, Arena& arena);

#ifndef __CUDACC__
  // Host, at engine start (plugins/reserve.hpp): a profile that scores
  // with FGD takes a share's device the FGD way too, unless its GpuShare
  // args name a deviceSelection.
  static void adjust_profile(ProfileConfig& profile);
#endif

  // Host: score() of many nodes, computed once per distinct node state and
  // looked up for the others (gpu_fgd.cpp says what a state is).
  static void score_nodes(const SnapshotView& s, const State& st, const uint8_t* arena, const uint32_t* nodes,
                          uint32_t count, int64_t* out);

  static BULKSCORE_HD int64_t score(const SnapshotView& s, const State& st, const uint8_t* arena, uint32_t node) {
    if (st.pod.no_requests) return 100;
    const uint32_t first = s.device_offsets[node];
    int32_t device = -1;
    return fgd_node_score(s.device_free + first, s.device_units + first, s.device_offsets[node + 1] - first,
                          node_cpu_left(s, node), node_card_model(s, st.pod, node), st.pod.cpu_milli, st.pod.count,
                          st.pod.milli, st.shapes.data(arena), st.shapes.count, st.models.data(arena), &device);
  }
};

}  // namespace plugins
}  // namespace bulkscore
