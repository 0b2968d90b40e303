#include "plugins/resource_allocation.hpp"

#include "plugins/prepare.hpp"

namespace bulkscore {

// Resolves the configured resources for one pod (semantics doc §3.7).
// `pod_requests` is the request the scorer uses: with the non-zero defaults
// for NodeResourcesFit, actual requests for BalancedAllocation.
std::vector<ScoredResource> resolve_scored_resources(const Snapshot& snap, const std::vector<ResourceSpec>& specs,
                                                     const ResourceList& pod_requests, bool nonzero_node_totals,
                                                     const CpuMemory* cpu_memory) {
  std::vector<ScoredResource> out;
  out.reserve(specs.size());
  for (const auto& spec : specs) {
    ScoredResource e{ScoredResource::kSkip, {}, 0, spec.weight, 0};
    auto it = pod_requests.find(spec.name);
    e.pod_request = it == pod_requests.end() ? 0 : it->second;
    if (cpu_memory && spec.name == "cpu") e.pod_request = cpu_memory->cpu;
    if (cpu_memory && spec.name == "memory") e.pod_request = cpu_memory->memory;
    const int32_t r = snap.resource_index(spec.name);
    if (spec.name == "cpu") {
      e.source = nonzero_node_totals ? ScoredResource::kNonZeroCpu : ScoredResource::kRequested;
      e.resource = kCpu;
    } else if (spec.name == "memory") {
      e.source = nonzero_node_totals ? ScoredResource::kNonZeroMemory : ScoredResource::kRequested;
      e.resource = kMemory;
    } else if (spec.name == "ephemeral-storage") {
      e.source = ScoredResource::kRequested;
      e.resource = kEphemeralStorage;
    } else if (is_scalar_resource_name(spec.name) && e.pod_request != 0 && r >= 0) {
      e.source = ScoredResource::kRequested;
      e.resource = static_cast<uint32_t>(r);
    }
    out.push_back(e);
  }
  return out;
}

}  // namespace bulkscore
