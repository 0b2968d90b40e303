// GpuShare (PreFilter, Filter; bulkscore's own, docs/gpu-placement.md): GPUs
// as devices. A node fits a pod that asks for `count` devices with `milli`
// free units each (a share of one GPU, or whole GPUs) when that many of its
// devices have that much free, and, when the pod names card models, when
// the node's model is one of them. NodeResourcesFit still checks cpu and
// memory. Which devices the pod then takes is chosen on the host when it is
// assumed (Reserve: choose_devices), and recorded in its index annotation, which is
// what the snapshot's device columns account.
#pragma once

#include <vector>

#include "host/snapshot/snapshot.hpp"
#include "plugins/plugin_api.hpp"

namespace bulkscore {

struct ProfileConfig;
struct ReserveContext;
struct Reservation;

namespace plugins {

struct GpuShare {
  static constexpr const char* kName = "GpuShare";
  static constexpr bool kReadsDevices = true;  // a profile running it models devices (plugins/reserve.hpp)
  static constexpr bool kHasFilter = true;
  // Filter reads the node's device columns, which the dry run does not patch (plugin_api.hpp).
  static constexpr FilterReach kFilterReach = FilterReach::kUnsupported;
  static constexpr bool kHasScore = false;
  static constexpr NormalizeKind kNormalize = NormalizeKind::None;
  static constexpr bool kPreScoreFeasible = false;

  // Reason bits. A node without devices or of another model stays so
  // whatever is preempted: UnschedulableAndUnresolvable. Devices held by
  // other pods can be freed: Unschedulable.
  static constexpr uint64_t kNoDevices = 1;
  static constexpr uint64_t kOtherModel = 2;
  static constexpr uint64_t kNotEnoughFree = 4;

  struct State {
    int32_t count;         // devices wanted (> 0: PreFilter skips other pods)
    int32_t milli;         // free units needed on each, or kWholeDevice
    int32_t model_key;     // string id of the card-model label key (kNoId: no node has it)
    int32_t model_slot;    // its dense label column, or -1
    uint32_t has_models;   // the pod restricts the card models
    Span<int32_t> models;  // the allowed models' string ids, sorted (unknown ones left out)
  };

  static PrepareResult prepare(const PrepareContext& ctx, State& st, Arena& arena);

  // Units a device must have free for the pod.
  static BULKSCORE_HD int32_t needed_units(const SnapshotView& s, const State& st, uint32_t device) {
    return st.milli == kWholeDevice ? s.device_units[device] : st.milli;
  }

  static BULKSCORE_HD FilterOutcome filter(const SnapshotView& s, const State& st, const uint8_t* arena,
                                           uint32_t node) {
    const uint32_t first = s.device_offsets[node], end = s.device_offsets[node + 1];
    if (first == end) return filter_fail(Code::UnschedulableAndUnresolvable, kNoDevices);
    if (st.has_models) {
      const int32_t model = st.model_key == kNoId ? kNoId : s.label_value(node, st.model_key, st.model_slot);
      bool allowed = false;
      const int32_t* models = st.models.data(arena);
      for (uint32_t i = 0; i < st.models.count && model != kNoId; ++i) allowed |= models[i] == model;
      if (!allowed) return filter_fail(Code::UnschedulableAndUnresolvable, kOtherModel);
    }
    int32_t fitting = 0;
    for (uint32_t d = first; d < end; ++d) fitting += s.device_free[d] >= needed_units(s, st, d) ? 1 : 0;
    return fitting >= st.count ? filter_pass() : filter_fail(Code::Unschedulable, kNotEnoughFree);
  }

  static void reasons(uint64_t bits, const Snapshot& snap, const State& st, const uint8_t* arena, uint32_t node,
                      std::vector<std::string>& out);

  // Host: the devices `pod` (asking for `demand`) takes on `node` under
  // `profile`'s deviceSelection, ascending; empty when the node cannot hold
  // it. Best, Worst, First: the fitting devices in that order (ties: the
  // lower index), the first demand.count. Fragmentation: FGD's device for
  // a share, Best's for whole devices. Random: a share's device drawn from
  // the seed and the pod's name, Best's for whole devices.
  static std::vector<int32_t> choose_devices(const Snapshot& snap, uint32_t node, const Pod& pod,
                                             const DeviceDemand& demand, const ProfileConfig& profile);

#ifndef __CUDACC__
  // Reserve (plugins/reserve.hpp): the devices a device pod takes on the
  // chosen node, written in its index annotation. A profile without
  // GpuShare places such a pod too (its filter did not look at devices): it
  // then takes them by the default selection, or, where none are free,
  // holds none (a warning). A bound pod that lists its devices keeps them.
  // Unreserve: nothing outside the snapshot; removing the assumed pod gives
  // its devices back.
  static void reserve(const ReserveContext& ctx, Reservation& out, Pod* assumed);
#endif
};

}  // namespace plugins
}  // namespace bulkscore
