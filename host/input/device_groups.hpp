// Shared device groups as data (docs/gpu-placement.md, "Shared device
// groups"): how nodes offer their devices to groups, how pods name their
// group, and how the devices a group holds are written on its pods.
//
//  * A node takes part when it carries the mode label with the mode value
//    (deviceshare.io/mode=shared). Its devices of a resource are numbered
//    0..allocatable-1 (at most kMaxDevicesPerNode).
//  * A pod names its group in the group annotation (deviceshare.io/group).
//  * Once placed, the pod carries the group's devices in the devices
//    annotation as JSON, {"nvidia.com/gpu":"0,1"}, and one annotation per
//    resource with the value of the environment variable the vendor's
//    device plugin reads (deviceshare.io/env.NVIDIA_VISIBLE_DEVICES: "0,1").
//    The devices annotation is what the snapshot restores a group from.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "host/input/model.hpp"

namespace bulkscore {

struct DeviceGroupModel {
  std::string mode_label = "deviceshare.io/mode";
  std::string mode_value = "shared";
  std::string group_annotation = "deviceshare.io/group";
  std::string devices_annotation = "deviceshare.io/selected-devices";
  std::string env_annotation_prefix = "deviceshare.io/env.";
  bool operator==(const DeviceGroupModel& o) const {
    return mode_label == o.mode_label && mode_value == o.mode_value && group_annotation == o.group_annotation &&
           devices_annotation == o.devices_annotation && env_annotation_prefix == o.env_annotation_prefix;
  }
  bool operator!=(const DeviceGroupModel& o) const { return !(*this == o); }
};

// Device indices by resource name.
using GroupDevices = std::map<std::string, std::vector<int32_t>>;

// The environment variable a device plugin reads the visible devices from:
// NVIDIA_VISIBLE_DEVICES for nvidia.com/*, AMD_VISIBLE_DEVICES for amd.com/*,
// ASCEND_VISIBLE_DEVICES for huawei.com/*; otherwise the vendor (the first
// label of the domain) and the resource upper-cased, non-alphanumerics as
// '_': "intel.com/gpu" -> INTEL_GPU_VISIBLE_DEVICES.
std::string visible_devices_env(const std::string& resource);

// "0,1,3": a device list as the annotations write it (ascending).
std::string format_device_list(const std::vector<int32_t>& devices);
// The inverse ("" is no devices); InputError naming `where` on an entry that
// is not a decimal integer in 0..kMaxDevicesPerNode-1, or a repeated one.
// Sorted.
std::vector<int32_t> parse_device_list(const std::string& text, const std::string& where);

// {"nvidia.com/gpu":"0,1"}: the devices annotation's value (keys sorted).
std::string format_group_devices(const GroupDevices& devices);
// The inverse: a JSON object of resource name -> device list (a string as
// above, or an array of integers). InputError naming `where` when malformed.
GroupDevices parse_group_devices(const std::string& json, const std::string& where);

// The group the pod names ("" when it names none). InputError naming the pod
// when the annotation is present but empty.
std::string pod_device_group(const Pod& pod, const DeviceGroupModel& model);
// The devices the pod's devices annotation lists (empty when it has none).
// InputError naming the pod, the annotation and the value when malformed.
GroupDevices pod_group_devices(const Pod& pod, const DeviceGroupModel& model);

// Writes the devices and the per-resource environment annotations on `pod`.
void annotate_group_devices(Pod& pod, const DeviceGroupModel& model, const GroupDevices& devices);

}  // namespace bulkscore
