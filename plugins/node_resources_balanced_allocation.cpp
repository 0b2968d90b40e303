#include "plugins/node_resources_balanced_allocation.hpp"

#include "plugins/prepare.hpp"

namespace bulkscore::plugins {

PrepareResult NodeResourcesBalancedAllocation::prepare(const PrepareContext& ctx, State& st, Arena& arena) {
  thread_local std::vector<ScoredResource> scored;  // scratch (windows prepare pods side by side)
  resolve_scored_resources(ctx.snapshot, ctx.profile.balanced_args.resources, ctx.requests, false, scored);
  st.scored = arena.push(scored);
  PrepareResult r;
  // Best-effort pods (nothing requested of the configured resources) skip,
  // so they do not all pile onto one node (kubernetes#129138).
  bool any = false;
  for (const auto& e : scored) any = any || e.pod_request != 0;
  r.skip_score = !any;
  r.check_score_range = resource_scores_may_leave_range(ctx.snapshot, scored);
  return r;
}

}  // namespace bulkscore::plugins
