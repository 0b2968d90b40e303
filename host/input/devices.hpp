// GPU devices as data (docs/gpu-placement.md): how nodes publish their
// devices and how pods ask for them, in the model of a GPU-sharing cluster
// (the Alibaba trace's, by default; every name is configurable, so other
// vendors' device plugins fit the same model).
//
//  * A node has `allocatable[countResource]` devices, numbered 0..count-1,
//    each of `allocatable[milliResource] / count` units (1000 when the node
//    does not publish milliResource), and its card model in a label.
//  * A pod asks, through annotations, for `count` devices with `milli` free
//    units on each: a share of one device (count 1, milli below a device's
//    capacity) or whole devices (milli equal to the capacity). A pod that
//    requests countResource in its containers instead (nvidia.com/gpu: 2)
//    asks for that many whole devices. It may restrict the card models.
//  * Once placed, the pod's index annotation lists the devices it holds
//    ("3", "0-1-2-3"): that is what the snapshot accounts, for pods assumed
//    by bulkscore and for running pods alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "host/common.hpp"
#include "host/input/model.hpp"

namespace bulkscore {

struct DeviceModel {
  std::string count_resource = "alibabacloud.com/gpu-count";  // node allocatable: devices
  std::string milli_resource = "alibabacloud.com/gpu-milli";  // node allocatable: units over all devices
  std::string model_label = "alibabacloud.com/gpu-card-model";
  std::string count_annotation = "alibabacloud.com/gpu-count";
  std::string milli_annotation = "alibabacloud.com/gpu-milli";
  std::string model_annotation = "alibabacloud.com/gpu-card-model";  // allowed models, '|'-separated
  std::string index_annotation = "alibabacloud.com/gpu-index";       // devices held, '-'-separated
  bool operator==(const DeviceModel& o) const {
    return count_resource == o.count_resource && milli_resource == o.milli_resource && model_label == o.model_label &&
           count_annotation == o.count_annotation && milli_annotation == o.milli_annotation &&
           model_annotation == o.model_annotation && index_annotation == o.index_annotation;
  }
  bool operator!=(const DeviceModel& o) const { return !(*this == o); }
};

// The most units a device may have, and a pod may ask for per device.
constexpr int64_t kMaxDeviceUnits = 10000000;
// A device's units when its node does not publish milliResource.
constexpr int32_t kDefaultDeviceUnits = 1000;
// Devices a node may have: more are left out, with a warning at load.
constexpr uint32_t kMaxDevicesPerNode = 64;
// DeviceDemand::milli of a pod that asks for whole devices without naming
// units (a container request of countResource): each device must be free.
constexpr int32_t kWholeDevice = -1;

// A GPU pod's class, as GpuClustering groups pods: bit 0 for a share of
// one device, bit k for k whole devices (k above 63: bit 63).
BULKSCORE_HD uint64_t device_class_bit(int32_t count, int32_t milli, int32_t device_units) {
  if (count <= 0) return 0;
  if (count == 1 && milli != kWholeDevice && milli < device_units) return 1;
  return uint64_t(1) << (count < 63 ? count : 63);
}

struct DeviceDemand {
  int32_t count = 0;                // devices; 0: the pod asks for none
  int32_t milli = 0;                // free units needed on each device, or kWholeDevice
  std::vector<std::string> models;  // allowed card models; empty: any
  bool any() const { return count > 0; }
};

// The devices `pod` asks for. InputError naming the pod (its origin), the
// annotation and the value when an annotation is malformed: not a decimal
// integer, out of range (count 0..kMaxDevicesPerNode, milli 1..kMaxDeviceUnits), milli
// without a positive count, an empty model list entry, or annotations that
// contradict a container request of countResource.
DeviceDemand pod_device_demand(const Pod& pod, const DeviceModel& model);

// The device indices the pod's index annotation lists, in its order; an
// empty vector when the pod has none. InputError (naming the pod and the
// annotation) when it is malformed: an entry that is not a decimal integer
// in 0..kMaxDevicesPerNode-1, or an index listed twice.
std::vector<int32_t> pod_device_indices(const Pod& pod, const DeviceModel& model);

// One task shape of a workload and its share of it: the target workload
// GPU fragmentation is measured against (plugins/gpu_fragmentation.hpp).
struct TypicalTask {
  int64_t cpu_milli = 0;
  int32_t milli = 0;                // units per device, kWholeDevice, or 0 without devices
  int32_t count = 0;                // devices
  std::vector<std::string> models;  // allowed card models, sorted; empty: any
  double weight = 0;                // share of the workload; a list's weights sum to 1
  bool operator==(const TypicalTask& o) const {
    return cpu_milli == o.cpu_milli && milli == o.milli && count == o.count && models == o.models && weight == o.weight;
  }
};

// The typical tasks of `pods`, as the ATC '23 simulator picks them: pods
// grouped by (cpu request, units per device, device count, models);
// groups sorted by size, largest first (ties: the larger key first); the
// largest groups kept until they hold `popularity` (0..1] of the pods;
// weights their shares of the kept pods. InputError for malformed device
// annotations.
std::vector<TypicalTask> typical_tasks(const std::vector<Pod>& pods, const DeviceModel& model,
                                       double popularity = 0.95);

// InputError naming the pod (its origin and key), the annotation and its
// value: "<origin>: pod "ns/name": metadata.annotations[key]: why, got value".
[[noreturn]] void throw_bad_annotation(const Pod& pod, const std::string& key, const std::string& value,
                                       const std::string& why);

// "0-1-2": the index annotation's value for `indices`.
std::string format_device_indices(const std::vector<int32_t>& indices);

}  // namespace bulkscore
