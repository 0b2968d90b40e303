// Builders for the GPU tests (GpuShare, the GPU placement policies, FGD's
// per-state scoring): the Alibaba trace's device resources and annotations,
// a GPU node, a pod asking for devices, and a running pod holding devices.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "tests/test_util.hpp"

namespace bulkscore::testutil {

constexpr const char* kCount = "alibabacloud.com/gpu-count";
constexpr const char* kMilli = "alibabacloud.com/gpu-milli";
constexpr const char* kModel = "alibabacloud.com/gpu-card-model";
constexpr const char* kIndex = "alibabacloud.com/gpu-index";

// A node of the trace's model: `gpus` devices of 1000 units, card `model`
// (gpus 0: a cpu node, no device resources and no model label).
inline Node gpu_node(const std::string& name, int64_t gpus, const std::string& model, int64_t cpu = 64000) {
  Node n = make_node(name, cpu, 256 * 1024 * kMiB, 110);
  if (gpus > 0) {
    n.allocatable[kCount] = gpus;
    n.allocatable[kMilli] = 1000 * gpus;
    n.labels[kModel] = model;
  }
  return n;
}

// A pod of `cpu` millicores asking for `count` devices with `milli` units
// each (the trace's annotations); milli 0 leaves the milli annotation out,
// count and milli both 0 leave every device annotation out (a cpu pod).
inline Pod gpu_pod(const std::string& name, int32_t count, int32_t milli, int64_t cpu = 1000,
                   const std::string& models = "") {
  Pod p = make_pod(name, {container({{"cpu", cpu}, {"memory", 1024 * kMiB}})});
  if (count > 0 || milli > 0) p.annotations[kCount] = std::to_string(count);
  if (milli > 0) p.annotations[kMilli] = std::to_string(milli);
  if (!models.empty()) p.annotations[kModel] = models;
  return p;
}

// `p` running on `node`, holding the devices `indices` ("0-3").
inline Pod holding(Pod p, const std::string& node, const std::string& indices) {
  p = on_node(std::move(p), node);
  p.annotations[kIndex] = indices;
  return p;
}

}  // namespace bulkscore::testutil
