#include "plugins/resource_allocation.hpp"

#include <algorithm>

#include "plugins/prepare.hpp"

namespace bulkscore {

bool resource_scores_may_leave_range(const Snapshot& snap, const std::vector<ScoredResource>& scored) {
  if (!snap.quantities_tame()) return true;
  return std::any_of(scored.begin(), scored.end(),
                     [](const ScoredResource& e) { return !Snapshot::tame_quantity(e.pod_request); });
}

// Resolves the configured resources for one pod (semantics doc §3.7).
// `pod_requests` is the request the scorer uses: with the non-zero defaults
// for NodeResourcesFit, actual requests for BalancedAllocation.
void resolve_scored_resources(const Snapshot& snap, const std::vector<ResourceSpec>& specs,
                              const ResourceList& pod_requests, bool nonzero_node_totals, std::vector<ScoredResource>& out,
                              const CpuMemory* cpu_memory) {
  out.clear();
  const auto requested = [&](std::string_view name) {
    auto it = pod_requests.find(name);
    return it == pod_requests.end() ? int64_t(0) : it->second;
  };
  for (const auto& spec : specs) {
    ScoredResource e{ScoredResource::kSkip, {}, 0, spec.weight, 0};
    if (spec.name == "cpu") {
      e.pod_request = cpu_memory ? cpu_memory->cpu : requested(spec.name);
      e.source = nonzero_node_totals ? ScoredResource::kNonZeroCpu : ScoredResource::kRequested;
      e.resource = kCpu;
    } else if (spec.name == "memory") {
      e.pod_request = cpu_memory ? cpu_memory->memory : requested(spec.name);
      e.source = nonzero_node_totals ? ScoredResource::kNonZeroMemory : ScoredResource::kRequested;
      e.resource = kMemory;
    } else if (spec.name == "ephemeral-storage") {
      e.pod_request = requested(spec.name);
      e.source = ScoredResource::kRequested;
      e.resource = kEphemeralStorage;
    } else {
      e.pod_request = requested(spec.name);
      // Only a scalar resource the pod requests has a column to read.
      if (is_scalar_resource_name(spec.name) && e.pod_request != 0) {
        const int32_t r = snap.resource_index(spec.name);
        if (r >= 0) {
          e.source = ScoredResource::kRequested;
          e.resource = static_cast<uint32_t>(r);
        }
      }
    }
    out.push_back(e);
  }
}

}  // namespace bulkscore
