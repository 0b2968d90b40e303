// The resource allocation scorer shared by NodeResourcesFit's scoring
// strategies and NodeResourcesBalancedAllocation (semantics doc §3.7, §3.8):
// one (requested, allocatable) pair per configured resource.
#pragma once

#include <cmath>

#include "host/snapshot/snapshot.hpp"
#include "plugins/plugin_api.hpp"

namespace bulkscore {

// One configured resource, resolved for one pod.
struct ScoredResource {
  enum Source : uint8_t {
    kSkip,        // contributes (0, 0): pod does not request this scalar, or no node offers it
    kNonZeroCpu,  // node NonZeroRequested cpu + pod (non-zero) request
    kNonZeroMemory,
    kRequested,  // node Requested[r] + pod request
  };
  uint8_t source;
  uint8_t padding_[3] = {};  // explicit: a query is compared byte for byte (docs/batching.md)
  uint32_t resource;         // column index
  int64_t weight;
  int64_t pod_request;
};

struct ShapePoint {
  int64_t utilization;  // 0..100
  int64_t score;        // already scaled by MaxNodeScore/MaxCustomPriorityScore (x10)
};

// (requested, allocatable) of entry `e` on `node`; (0, 0) for skipped entries.
BULKSCORE_HD void resource_pair(const SnapshotView& s, const ScoredResource& e, uint32_t node, int64_t& req,
                                int64_t& alloc) {
  req = 0;
  alloc = 0;
  if (e.source == ScoredResource::kSkip) return;
  alloc = s.alloc(e.resource, node);
  if (alloc == 0) return;
  switch (e.source) {
    case ScoredResource::kNonZeroCpu:
      req = go_add(s.nonzero_requested[node], e.pod_request);
      break;
    case ScoredResource::kNonZeroMemory:
      req = go_add(s.nonzero_requested[s.num_nodes + node], e.pod_request);
      break;
    default:
      req = go_add(s.req(e.resource, node), e.pod_request);
      break;
  }
}

BULKSCORE_HD int64_t least_allocated_score(const SnapshotView& s, const ScoredResource* res, uint32_t n,
                                           uint32_t node) {
  int64_t sum = 0, weights = 0;
  for (uint32_t i = 0; i < n; ++i) {
    int64_t req, alloc;
    resource_pair(s, res[i], node, req, alloc);
    if (alloc == 0) continue;
    const int64_t part = req > alloc ? 0 : div_trunc(go_mul(go_sub(alloc, req), 100), alloc);
    sum = go_add(sum, go_mul(part, res[i].weight));
    weights = go_add(weights, res[i].weight);
  }
  return weights == 0 ? 0 : div_trunc(sum, weights);
}

BULKSCORE_HD int64_t most_allocated_score(const SnapshotView& s, const ScoredResource* res, uint32_t n, uint32_t node) {
  int64_t sum = 0, weights = 0;
  for (uint32_t i = 0; i < n; ++i) {
    int64_t req, alloc;
    resource_pair(s, res[i], node, req, alloc);
    if (alloc == 0) continue;
    const int64_t used = req > alloc ? alloc : req;
    sum = go_add(sum, go_mul(div_trunc(go_mul(used, 100), alloc), res[i].weight));
    weights = go_add(weights, res[i].weight);
  }
  return weights == 0 ? 0 : div_trunc(sum, weights);
}

// The broken-linear function of RequestedToCapacityRatio.
BULKSCORE_HD int64_t shape_value(const ShapePoint* pts, uint32_t n, int64_t p) {
  for (uint32_t k = 0; k < n; ++k) {
    if (p <= pts[k].utilization) {
      if (k == 0) return pts[0].score;
      return pts[k - 1].score + (pts[k].score - pts[k - 1].score) * (p - pts[k - 1].utilization) /
                                    (pts[k].utilization - pts[k - 1].utilization);
    }
  }
  return pts[n - 1].score;
}

BULKSCORE_HD int64_t requested_to_capacity_ratio_score(const SnapshotView& s, const ScoredResource* res, uint32_t n,
                                                       const ShapePoint* shape, uint32_t n_shape, uint32_t node) {
  int64_t sum = 0, weights = 0;
  for (uint32_t i = 0; i < n; ++i) {
    int64_t req, alloc;
    resource_pair(s, res[i], node, req, alloc);
    if (alloc == 0) continue;
    const int64_t util = req > alloc ? 100 : div_trunc(go_mul(req, 100), alloc);
    const int64_t part = shape_value(shape, n_shape, util);
    if (part <= 0) continue;  // only positive scores count, weights included
    sum = go_add(sum, go_mul(part, res[i].weight));
    weights = go_add(weights, res[i].weight);
  }
  if (weights == 0) return 0;
  // math.Round(float64(sum)/float64(weights)): half away from zero.
  return go_float_to_int64(::round(static_cast<double>(sum) / static_cast<double>(weights)));
}

}  // namespace bulkscore

#include <vector>

#include "host/input/config.hpp"
#include "host/input/pod_resources.hpp"

namespace bulkscore {
// Into `out` (cleared first: a caller's scratch, nothing allocated a pod).
// `cpu_memory`, where given, replaces pod_requests' cpu and memory (the
// non-zero requests of an additive pod, without a list built for them).
void resolve_scored_resources(const Snapshot& snap, const std::vector<ResourceSpec>& specs,
                              const ResourceList& pod_requests, bool nonzero_node_totals, std::vector<ScoredResource>& out,
                              const CpuMemory* cpu_memory = nullptr);

// Whether the resource scores of `scored` may leave [0, 100] on `snap`
// (PrepareResult::check_score_range): some request of the pod, or some
// node's allocatable or requested amount, lies outside [0,
// Snapshot::kTameQuantity]. Within it the rules' arithmetic cannot wrap and
// every score is in range.
bool resource_scores_may_leave_range(const Snapshot& snap, const std::vector<ScoredResource>& scored);

// Host: least_allocated_score, and NodeResourcesBalancedAllocation's score
// for two entries `res`, neither kSkip, of `count` nodes at once (out[i] for
// nodes[i]), equal to the per-node rules bit for bit: branch-free column
// loops for the SIMD target in use (plugins/simd_dispatch.hpp;
// plugins/resource_scores_nodes.cpp).
void least_allocated_scores(const SnapshotView& s, const ScoredResource* res, uint32_t nres, const uint32_t* nodes,
                            uint32_t count, int64_t* out);
void balanced_allocation_scores2(const SnapshotView& s, const ScoredResource* res, const uint32_t* nodes,
                                 uint32_t count, int64_t* out);

// The resource allocation scorer as a kernel several plugins share
// (SharedScorePart, plugins/plugin_api.hpp): parts of kind
// kSharedLeastAllocated (NodeResourcesFit's LeastAllocated: its entries)
// and kSharedBalanced2 (NodeResourcesBalancedAllocation over two entries,
// neither kSkip), and at most one kSharedFitFilter (NodeResourcesFit's
// Filter, shared_filter: `entries` its State, `arena` the query's; out[i]
// 1 where the node fails it). LeastAllocated over two unit entries beside
// BalancedAllocation over the same two resources (the default profile)
// run as one loop over the allocatable columns both read, with the Filter's
// checks of those two resources and of the pod count in it; any other parts
// as least_allocated_scores, balanced_allocation_scores2 and filter_nodes
// alone.
enum SharedResourceScore : uint32_t { kSharedLeastAllocated = 1, kSharedBalanced2 = 2, kSharedFitFilter = 3 };
// Whether resource_allocation_scores runs these parts' scores as its one
// loop (a kSharedFitFilter part among them aside).
bool resource_allocation_one_loop(const SharedScorePart* parts, uint32_t nparts);
void resource_allocation_scores(const SnapshotView& s, const SharedScorePart* parts, uint32_t nparts,
                                const uint32_t* nodes, uint32_t count, int64_t* const* out);
}  // namespace bulkscore
