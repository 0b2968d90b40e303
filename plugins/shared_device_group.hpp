// SharedDeviceGroup (PreFilter, Filter, PreScore, Score; bulkscore's own,
// docs/gpu-placement.md "Shared device groups"): the pods that name one
// SharedDeviceGroup share the devices it holds on one node.
//
//  * Filter: a node takes a group's pod only in shared-device mode (the
//    mode label); once the group is bound, only its node; before that, only
//    a node that matches the group's node selector and has, of every device
//    resource the group asks for, that many devices no group holds and no
//    other pod requests. A pod outside groups that requests such a resource
//    needs as many on a shared-mode node.
//  * Score: binpack prefers the node whose free devices the group fills
//    most tightly (100 * wanted / free), spread the node with the most left
//    free (100 * (free - wanted) / free); the bound node scores 100.
//  * The devices the first pod binds its group to are chosen on the host
//    when it is assumed (Reserve: choose_devices) and written on the pod
//    (host/input/device_groups.hpp); the snapshot binds and releases.
#pragma once

#include "host/snapshot/snapshot.hpp"
#include "plugins/plugin_api.hpp"

namespace bulkscore {

struct ReserveContext;
struct Reservation;

namespace plugins {

struct SharedDeviceGroup {
  static constexpr const char* kName = "SharedDeviceGroup";
  static constexpr bool kReadsDeviceGroups = true;  // a profile running it models device groups (plugins/reserve.hpp)
  static constexpr bool kHasFilter = true;
  // Filter reads groups bound across nodes and their devices (plugin_api.hpp).
  static constexpr FilterReach kFilterReach = FilterReach::kUnsupported;
  static constexpr bool kHasScore = true;
  static constexpr NormalizeKind kNormalize = NormalizeKind::None;
  static constexpr bool kPreScoreFeasible = false;

  // Reason bits. Labels and a binding do not change by preemption:
  // UnschedulableAndUnresolvable. Devices can be freed: Unschedulable.
  static constexpr uint64_t kNotShared = 1;
  static constexpr uint64_t kOtherNode = 2;
  static constexpr uint64_t kSelector = 4;
  static constexpr uint64_t kNotEnough = 8;          // a group's pod
  static constexpr uint64_t kNotEnoughOutside = 16;  // a pod outside groups

  // One device resource wanted: its row of SnapshotView::group_free, its
  // resource column (-1: no node has it), and the devices wanted.
  struct Need {
    int32_t row;
    int32_t resource;
    int64_t count;
  };
  // One nodeSelector label: key and value string ids, the key's dense slot.
  struct Label {
    int32_t key;
    int32_t slot;
    int32_t value;
    int32_t padding;  // explicit: queries are compared byte for byte
  };

  struct State {
    int32_t bound_node;  // the group's node, or -1 (also for pods outside groups)
    int32_t mode_key;    // the mode label's key id (kNoId: no node has it)
    int32_t mode_slot;
    int32_t mode_value;
    uint32_t in_group;            // 1: the pod names a group; 0: it only requests group devices
    uint32_t spread;              // the group's strategy is spread (else binpack)
    uint32_t selector_unmatched;  // a selector label no node has: nothing matches
    uint32_t padding;
    Span<Need> needs;
    Span<Label> selector;
  };

  static PrepareResult prepare(const PrepareContext& ctx, State& st, Arena& arena);

  // Devices of the need's resource on `node` no group holds and no pod requests.
  static BULKSCORE_HD int64_t free_devices(const SnapshotView& s, const Need& need, uint32_t node) {
    const int64_t free = s.group_free_devices(static_cast<uint32_t>(need.row), node);
    return need.resource < 0 ? free : go_sub(free, s.req(static_cast<uint32_t>(need.resource), node));
  }

  static BULKSCORE_HD FilterOutcome filter(const SnapshotView& s, const State& st, const uint8_t* arena,
                                           uint32_t node) {
    const bool shared = st.mode_value != kNoId && s.label_value(node, st.mode_key, st.mode_slot) == st.mode_value;
    if (!st.in_group) {
      if (!shared) return filter_pass();
      const Need* needs = st.needs.data(arena);
      for (uint32_t i = 0; i < st.needs.count; ++i)
        if (free_devices(s, needs[i], node) < needs[i].count)
          return filter_fail(Code::Unschedulable, kNotEnoughOutside);
      return filter_pass();
    }
    if (!shared) return filter_fail(Code::UnschedulableAndUnresolvable, kNotShared);
    if (st.bound_node >= 0)
      return static_cast<int32_t>(node) == st.bound_node ? filter_pass()
                                                         : filter_fail(Code::UnschedulableAndUnresolvable, kOtherNode);
    if (st.selector_unmatched) return filter_fail(Code::UnschedulableAndUnresolvable, kSelector);
    const Label* labels = st.selector.data(arena);
    for (uint32_t i = 0; i < st.selector.count; ++i)
      if (s.label_value(node, labels[i].key, labels[i].slot) != labels[i].value)
        return filter_fail(Code::UnschedulableAndUnresolvable, kSelector);
    const Need* needs = st.needs.data(arena);
    for (uint32_t i = 0; i < st.needs.count; ++i)
      if (free_devices(s, needs[i], node) < needs[i].count) return filter_fail(Code::Unschedulable, kNotEnough);
    return filter_pass();
  }

  static BULKSCORE_HD int64_t score(const SnapshotView& s, const State& st, const uint8_t* arena, uint32_t node) {
    if (st.bound_node >= 0) return static_cast<int32_t>(node) == st.bound_node ? 100 : 0;
    int64_t free = 0, wanted = 0;
    const Need* needs = st.needs.data(arena);
    for (uint32_t i = 0; i < st.needs.count; ++i) {
      const int64_t f = free_devices(s, needs[i], node);
      free += f > 0 ? f : 0;
      wanted += needs[i].count;
    }
    if (free <= 0 || wanted > free) return 0;  // only on nodes Filter rejects
    return st.spread ? div_trunc(100 * (free - wanted), free) : div_trunc(100 * wanted, free);
  }

  static void reasons(uint64_t bits, const Snapshot& snap, const State& st, const uint8_t* arena, uint32_t node,
                      std::vector<std::string>& out);

  // Host: the devices group `group` takes on `node` by its strategy, by
  // resource (ascending); empty when the node lacks enough devices no group
  // holds. binpack: the lowest free indices (keeping the high ones
  // together for the next group); spread: free indices evenly spaced over
  // the free ones (the i-th of k wanted is free[i * free / k]).
  static GroupDevices choose_devices(const Snapshot& snap, uint32_t node, uint32_t group);

#ifndef __CUDACC__
  // Reserve (plugins/reserve.hpp): a group's pod shares its group's devices
  // on the node it is bound to; the first pod (under a profile that runs
  // the plugin) binds the group by choose_devices. Written on the pod
  // (annotate_group_devices); a pod placed outside its group shares nothing
  // (a warning). Unreserve: removing the group's last pod releases the
  // binding; a binding the group held before without pods (from its
  // status) is bound again, so undoing a member leaves the group as it was.
  static void reserve(const ReserveContext& ctx, Reservation& out, Pod* assumed);
  static void unreserve(const ReserveContext& ctx, Snapshot& snap, const Reservation& r);
#endif
};

}  // namespace plugins
}  // namespace bulkscore
