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

constexpr int64_t kDefaultMilliCpuRequest = 100;
constexpr int64_t kDefaultMemoryRequest = 200LL * 1024 * 1024;

}  // namespace bulkscore
