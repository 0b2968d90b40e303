// DefaultPreemption for explain and rank: the dry run's candidates with the
// keys of upstream's five criteria, best first, and which criterion chose
// the nominated node. The dry run itself is preemption.cpp's, the same one
// schedule() runs, stopped before anything is evicted.
#include <algorithm>
#include <climits>
#include <tuple>

#include "host/engine/engine.hpp"

namespace bulkscore {

const char* preemption_criterion_name(PreemptionCriterion c) {
  switch (c) {
    case PreemptionCriterion::kOnlyCandidate:
      return "onlyCandidate";
    case PreemptionCriterion::kPdbViolations:
      return "pdbViolations";
    case PreemptionCriterion::kHighestPriority:
      return "highestPriority";
    case PreemptionCriterion::kPrioritySum:
      return "prioritySum";
    case PreemptionCriterion::kVictims:
      return "victims";
    case PreemptionCriterion::kStartTime:
      return "startTime";
    case PreemptionCriterion::kNodeIndex:
      return "nodeIndex";
  }
  return "unknown";
}

void finish_preemption_explanation(PreemptionExplanation& ex) {
  for (PreemptionCandidate& c : ex.candidates) {
    c.highest_priority = INT32_MIN;
    c.priority_sum = 0;
    c.offset_priority_sum = 0;
    for (const PreemptionVictim& v : c.victims) {
      c.highest_priority = std::max(c.highest_priority, v.priority);
      c.priority_sum += v.priority;
      c.offset_priority_sum += static_cast<int64_t>(v.priority) + (int64_t{1} << 31);
    }
    c.earliest_start_ns = INT64_MAX;
    for (const PreemptionVictim& v : c.victims)
      if (v.priority == c.highest_priority) c.earliest_start_ns = std::min(c.earliest_start_ns, v.start_time_ns);
  }
  // Best first: each criterion's order in turn (the start time: the latest
  // first), then the node index; the nominated candidate is the first.
  const auto key = [](const PreemptionCandidate& c) {
    return std::make_tuple(c.pdb_violations, c.highest_priority, c.offset_priority_sum, c.victims.size(),
                           -c.earliest_start_ns, c.node_index);
  };
  std::sort(ex.candidates.begin(), ex.candidates.end(),
            [&](const PreemptionCandidate& a, const PreemptionCandidate& b) { return key(a) < key(b); });
  static constexpr PreemptionCriterion kOrder[] = {
      PreemptionCriterion::kPdbViolations, PreemptionCriterion::kHighestPriority, PreemptionCriterion::kPrioritySum,
      PreemptionCriterion::kVictims, PreemptionCriterion::kStartTime};
  ex.decided_by = PreemptionCriterion::kNodeIndex;
  if (ex.candidates.size() <= 1) {
    ex.decided_by = PreemptionCriterion::kOnlyCandidate;
    return;
  }
  for (size_t i = 0; i < ex.left_after.size() && i < std::size(kOrder); ++i)
    if (ex.left_after[i] == 1) {
      ex.decided_by = kOrder[i];
      return;
    }
}

void Engine::explain_post_filter(const Pod& pod, const ProfilePlan& plan, PodQuery& q, std::string& message,
                                 std::optional<PreemptionExplanation>& out) {
  if (plan.config.post_filter.empty()) return;
  ScheduleResult res;
  res.code = Code::Unschedulable;
  res.message = message;
  PreemptionExplanation ex;
  run_post_filter(pod, plan, q, pod_seq_, res, &ex);
  message = res.message;
  if (std::find(plan.config.post_filter.begin(), plan.config.post_filter.end(), "DefaultPreemption") !=
      plan.config.post_filter.end())
    out = std::move(ex);
}

}  // namespace bulkscore
