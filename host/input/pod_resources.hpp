// A pod's resource request, as the scheduler computes it (semantics doc §2.5).
//
// Per resource: max(sum of regular containers + sum of sidecars,
// max over non-sidecar init containers of (its request + the sidecars declared
// before it)); pod-level requests (cpu, memory, hugepages-*) replace the
// container aggregate for the resources they name; overhead is added.
#pragma once

#include "host/input/model.hpp"

namespace bulkscore {

// What Filter uses (and the node's Requested total): the spec only.
ResourceList pod_requests(const Pod& pod);

// Scoring's view of cpu and memory for the incoming pod (NodeResourcesFit
// scorer): every container that does not mention cpu counts 100m, memory
// 200Mi, applied before the pod-level override.
ResourceList pod_requests_nonzero_for_scoring(const Pod& pod);

// The node's NonZeroRequested contribution: as above, except that with
// pod-level requests only a resource missing from the pod's aggregate gets the
// per-container default.
ResourceList pod_requests_nonzero_for_node(const Pod& pod);

// Whether pod_requests(pod) and pod_requests_nonzero_for_node(pod) are
// plain sums, one term per container (the per-container defaults included)
// plus the overhead: no init containers (their max) and no pod-level
// requests (which replace the sum). A caller that only adds the amounts up
// (a node's totals) can then take each container's requests in turn
// without building the lists.
bool requests_are_additive(const Pod& pod);

// pod_requests_nonzero_for_node's cpu and memory (and _for_scoring's: the
// same without pod-level requests) of a pod whose requests are additive,
// summed container by container without building the list.
struct CpuMemory {
  int64_t cpu = 0, memory = 0;
};
CpuMemory additive_nonzero_cpu_memory(const Pod& pod);

// The names pod-level requests may set (ephemeral-storage is not one).
bool pod_level_supported(const std::string& name);

// Calls fn(name) for every resource name pod_requests(pod) has (a name may
// come more than once), without building it.
template <class Fn>
void for_each_request_name(const Pod& pod, Fn&& fn) {
  for (const auto* list : {&pod.containers, &pod.init_containers})
    for (const Container& c : *list)
      for (const auto& kv : c.requests) fn(kv.first);
  for (const auto& kv : pod.pod_level_requests)
    if (pod_level_supported(kv.first)) fn(kv.first);
  for (const auto& kv : pod.overhead) fn(kv.first);
}

constexpr int64_t kDefaultMilliCpuRequest = 100;
constexpr int64_t kDefaultMemoryRequest = 200LL * 1024 * 1024;

}  // namespace bulkscore
