#include "plugins/node_resources_fit.hpp"

#include <algorithm>

#include "host/input/pod_resources.hpp"
#include "plugins/prepare.hpp"

namespace bulkscore::plugins {

namespace {
// Whether Filter checks resource `name` under `args` (prepare's rule).
bool enforced(const NodeResourcesFitArgs& args, const std::string& name) {
  if (name == "cpu" || name == "memory" || name == "ephemeral-storage") return true;
  if (!is_scalar_resource_name(name)) return false;
  if (!is_extended_resource_name(name)) return true;
  const std::string group = name.substr(0, name.find('/'));
  return !std::count(args.ignored_resources.begin(), args.ignored_resources.end(), name) &&
         !std::count(args.ignored_resource_groups.begin(), args.ignored_resource_groups.end(), group);
}
}  // namespace

ResourceList NodeResourcesFit::enforced_requests(const NodeResourcesFitArgs& args, const ResourceList& requests) {
  ResourceList out;
  for (const auto& [name, amount] : requests)
    if (amount > 0 && enforced(args, name)) out[name] = amount;
  return out;
}

PrepareResult NodeResourcesFit::prepare(const PrepareContext& ctx, State& st, Arena& arena) {
  const auto& args = ctx.profile.fit_args;
  const ResourceList& req = ctx.requests;
  auto get = [&](std::string_view name) {  // string_view: the map's comparisons need no strlen
    auto it = req.find(name);
    return it == req.end() ? int64_t(0) : it->second;
  };
  st = State{};
  st.cpu = get("cpu");
  st.memory = get("memory");
  st.ephemeral = get("ephemeral-storage");
  std::vector<uint32_t> scalar_ids;
  std::vector<int64_t> scalar_amounts;
  bool any_scalar = false;
  for (const auto& [name, amount] : req) {
    if (!is_scalar_resource_name(name)) continue;
    any_scalar = true;
    if (amount == 0) continue;
    if (!enforced(args, name)) continue;  // ignoredResources, ignoredResourceGroups
    const int32_t r = ctx.snapshot.resource_index(name);
    if (r < 0) throw Error("NodeResourcesFit: resource \"" + name + "\" was not interned before prepare");
    scalar_ids.push_back(static_cast<uint32_t>(r));
    scalar_amounts.push_back(amount);
  }
  st.only_pod_count = st.cpu == 0 && st.memory == 0 && st.ephemeral == 0 && !any_scalar;
  st.scalar_resources = arena.push(scalar_ids);
  st.scalar_requests = arena.push(scalar_amounts);

  switch (args.strategy) {
    case ScoringStrategyType::MostAllocated:
      st.strategy = kMostAllocated;
      break;
    case ScoringStrategyType::RequestedToCapacityRatio:
      st.strategy = kRequestedToCapacityRatio;
      break;
    default:
      st.strategy = kLeastAllocated;
      break;
  }
  // The scorer's requests: with the per-container defaults for cpu and
  // memory (pod_requests_nonzero_for_scoring), summed directly where the
  // pod's requests are additive.
  thread_local std::vector<ScoredResource> scored;  // scratch (windows prepare pods side by side)
  if (requests_are_additive(ctx.pod)) {
    const CpuMemory nonzero = additive_nonzero_cpu_memory(ctx.pod);
    resolve_scored_resources(ctx.snapshot, args.resources, req, true, scored, &nonzero);
  } else {
    resolve_scored_resources(ctx.snapshot, args.resources, pod_requests_nonzero_for_scoring(ctx.pod), true, scored);
  }
  st.scored = arena.push(scored);
  PrepareResult r;
  r.check_score_range = resource_scores_may_leave_range(ctx.snapshot, scored);
  std::vector<ShapePoint> shape;
  // Shape scores are 0..10; the scorer works on 0..100.
  for (const auto& p : args.shape) shape.push_back(ShapePoint{p.utilization, int64_t(p.score) * 10});
  st.shape = arena.push(shape);
  return r;
}

void NodeResourcesFit::reasons(uint64_t bits, const Snapshot& snap, const State&, const uint8_t*, uint32_t,
                               std::vector<std::string>& out) {
  if (bits & kTooManyPods) out.emplace_back("Too many pods");
  for (uint32_t r = 0; r < kMaxResources && r < snap.num_resources(); ++r)
    if (bits & (uint64_t(1) << r)) out.push_back("Insufficient " + snap.resource_name(r));
}

}  // namespace bulkscore::plugins
