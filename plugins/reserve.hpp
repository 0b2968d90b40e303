// The Reserve, Unreserve and Permit extension points (host only; nvcc never
// sees this header). As upstream's framework, after a node is chosen for a
// pod: Reserve runs for every plugin that has it, in plugin-list order, and
// takes what the plugin hands out on that node (devices, a group's devices),
// written on the pod the engine assumes; Permit then says Allow, Reject or
// Wait (for the pod's group); a pod that is rejected or whose group falls
// short is undone by Unreserve in reverse order and forgotten.
//
// A plugin opts in with static members (each optional):
//
//   // Host: what `pod` takes on `ctx.node`. `assumed` is the copy the engine
//   // will assume (annotate it); null for a preview (explain, rank; a bound
//   // pod's check whether it lacks anything), which fills `out` alone, its
//   // warnings included. Must not change the snapshot.
//   static void reserve(const ReserveContext& ctx, Reservation& out, Pod* assumed);
//   // Host: undo what reserve() took that removing the pod does not give
//   // back. Runs after the engine removed the assumed pod (which returns
//   // what its annotations took in the snapshot's columns); `snap` is
//   // ctx.snap, writable.
//   static void unreserve(const ReserveContext& ctx, Snapshot& snap, const Reservation& r);
//   // Host: Allow, Reject (with a message) or Wait for the pod's group.
//   static PermitStatus permit(const ReserveContext& ctx, const Reservation& r);
//
// and, at engine start:
//
//   static constexpr bool kReadsDevices = true;       // the profile models GPU devices
//   static constexpr bool kReadsDeviceGroups = true;  // and shared device groups
//   static void adjust_profile(ProfileConfig& profile);  // defaults that depend on it
//
// The engine calls reserve_pod / unreserve_pod / permit_pod, profile_needs
// and adjust_profile, and names no plugin.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "host/input/device_groups.hpp"
#include "host/input/devices.hpp"
#include "host/input/model.hpp"
#include "host/snapshot/snapshot.hpp"

namespace bulkscore {

struct ProfileConfig;

// What one Reserve pass sees. `enabled` is set per plugin: whether the
// profile runs it (names it in its filter or score list). A plugin that is
// not enabled still reserves where the cluster demands it (a device pod
// placed by a profile without GpuShare takes devices by the defaults).
struct ReserveContext {
  const Snapshot& snap;
  const Pod& pod;  // as submitted
  const ProfileConfig& profile;
  uint32_t node = 0;
  const DeviceModel* devices = nullptr;      // null: no profile models devices
  const DeviceGroupModel* groups = nullptr;  // null: no profile models device groups
  // True for a running pod loaded or added without the record its
  // reservation would have written (only what a bound pod lacks is filled).
  bool bound = false;
  bool enabled = false;
};

// What Reserve took: carried to the result, to Permit and to Unreserve.
struct Reservation {
  std::vector<int32_t> devices;  // GpuShare: the device indices taken (ascending)
  std::string device_group;      // SharedDeviceGroup: the pod's group
  GroupDevices group_devices;    // and the devices it shares there
  int32_t group_index = -1;      // its index in the snapshot (-1: none)
  Snapshot::GroupState group_before;  // its state before the pod joined (Unreserve)
  std::vector<std::string> warnings;
};

// Permit's answer (upstream's Success / Unschedulable / Wait).
enum class PermitCode : uint8_t { kAllow, kReject, kWait };
struct PermitStatus {
  PermitCode code = PermitCode::kAllow;
  std::string plugin;   // the plugin that rejected or waits
  std::string message;  // why it rejects
};

// What the plugins a profile runs need the cluster to model.
struct ProfileNeeds {
  bool devices = false;        // GPU devices (the profile's gpuShare args' model)
  bool device_groups = false;  // shared device groups (its sharedDeviceGroup args' model)
};
ProfileNeeds profile_needs(const ProfileConfig& profile);
// Every enabled plugin's adjust_profile(), in plugin-list order.
void adjust_profile(ProfileConfig& profile);

// Every plugin's reserve() in plugin-list order.
void reserve_pod(const ReserveContext& ctx, Reservation& out, Pod* assumed);
// Every plugin's unreserve() in reverse order.
void unreserve_pod(const ReserveContext& ctx, Snapshot& snap, const Reservation& r);
// Every enabled plugin's permit(): the first Reject wins, else any Wait,
// else Allow.
PermitStatus permit_pod(const ReserveContext& ctx, const Reservation& r);

}  // namespace bulkscore
