// Gang scheduling in bulk (issue 23, item 3): a gang's pending members are
// taken together and placed all or nothing. The rules (membership, queue
// order, early rejections, quorum, messages) are plugins/pod_group.hpp's;
// here the engine runs them around its ordinary cycle: each member goes
// through schedule() (so the batch cache serves identical members), and a
// gang that falls short is undone through forget_pod (Unreserve), which
// leaves the snapshot, devices, groups, topology tables and batch cache as
// if the members had never been placed.
#include <algorithm>
#include <string>
#include <vector>

#include "host/common.hpp"
#include "host/engine/engine.hpp"
#include "host/input/pod_resources.hpp"
#include "host/input/quote.hpp"

namespace bulkscore {

const char* group_outcome_name(GroupOutcome o) {
  switch (o) {
    case GroupOutcome::kAdmitted:
      return "admitted";
    case GroupOutcome::kRejected:
      return "rejected";
    case GroupOutcome::kNone:
      break;
  }
  return "";
}

std::vector<QueueEntry> Engine::queue_order(const std::vector<Pod>& pods) const {
  return gang_queue_order(pods, objects_);
}

void Engine::index_group_member(uint32_t id) {
  std::string key = pod_group_key(snapshot_.pod(id));
  if (!key.empty()) group_members_[std::move(key)].push_back(id);
}

void Engine::unindex_group_member(const Pod& pod, uint32_t id) {
  const std::string key = pod_group_key(pod);
  if (key.empty()) return;
  const auto it = group_members_.find(key);
  if (it == group_members_.end()) return;
  std::vector<uint32_t>& ids = it->second;
  ids.erase(std::remove(ids.begin(), ids.end(), id), ids.end());
  if (ids.empty()) group_members_.erase(it);
}

std::vector<uint32_t> Engine::placed_members(const Pod& member) const {
  std::vector<uint32_t> out;
  const auto it = group_members_.find(pod_group_key(member));
  if (it == group_members_.end()) return out;
  // Prune what went stale: an id whose pod left, or that holds a pod of
  // another key now; an id noted twice (a pod updated in place) once.
  std::vector<uint32_t>& ids = it->second;
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  ids.erase(std::remove_if(ids.begin(), ids.end(),
                           [&](uint32_t id) {
                             return !snapshot_.has_pod(id) || pod_group_key(snapshot_.pod(id)) != it->first;
                           }),
            ids.end());
  // Two APIs may share a key ("ns/name"): the members are those of the
  // member's own group.
  for (const uint32_t id : ids)
    if (same_pod_group(snapshot_.pod(id), member)) out.push_back(id);
  if (ids.empty()) group_members_.erase(it);
  return out;
}

std::vector<ScheduleResult> Engine::schedule_group(const std::vector<Pod>& members) {
  std::vector<ScheduleResult> out;
  out.reserve(members.size());
  if (members.empty()) return out;
  const PodGroupMembership m = pod_group_membership(members.front(), objects_);
  if (!takes_part_in_gang(m, objects_)) {
    for (const Pod& p : members) out.push_back(schedule(p));
    return out;
  }
  for (const Pod& p : members)
    if (!same_pod_group(p, members.front()))
      throw InputError(p.origin + ": pod " + quote_for_message(p.key()) + " is not in pod group " +
                       quote_for_message(m.key) + " (schedule_group takes the members of one group)");
  // Every member rejected before any is placed: no cycle runs, no draw of
  // the random tie-break is taken.
  const auto reject_all = [&](Code code, const std::vector<std::string>& messages) {
    for (size_t i = 0; i < members.size(); ++i) {
      // A member the engine holds already keeps its place and gets
      // schedule()'s answer for it (Error, nothing changes): the group's
      // rejection is not its own.
      if (pod_records_.count(members[i].cache_key()) != 0) {
        out.push_back(schedule(members[i]));
        out.back().pod_group = m.key;
        continue;
      }
      ScheduleResult r;
      r.pod = members[i].key();
      r.code = code;
      r.message = messages.size() == 1 ? messages.front() : messages[i];
      r.pod_group = m.key;
      r.group_outcome = GroupOutcome::kRejected;
      const std::string key = members[i].cache_key();
      metrics_.leave(key);
      metrics_.failed(key, static_cast<size_t>(&plan_for(members[i]) - plans_.data()), {});
      out.push_back(std::move(r));
    }
    return out;
  };
  if (m.group < 0) return reject_all(m.missing_code, {gang_early_message(m.key, m.missing)});
  const PodGroupObject& g = objects_.pod_groups[static_cast<size_t>(m.group)];
  const std::vector<uint32_t> placed_ids = placed_members(members.front());
  const auto placed_before = static_cast<int64_t>(placed_ids.size());
  const auto n = static_cast<int64_t>(members.size());
  // A member the engine holds already (given twice) is counted once, among
  // those placed; schedule() refuses it (code Error).
  int64_t held = 0;
  for (const Pod& p : members) {
    const auto it = pod_records_.find(p.cache_key());
    held += it != pod_records_.end() && it->second.id != Snapshot::kNoPod ? 1 : 0;
  }
  const int64_t all = placed_before + n - held;
  // PreEnqueue (GangScheduling) / PreFilter (Coscheduling): too few pods.
  if (!gang_count_rejection(g, members.front(), all).empty()) {
    std::vector<std::string> messages;
    messages.reserve(members.size());
    for (const Pod& p : members) messages.push_back(gang_early_message(m.key, gang_count_rejection(g, p, all)));
    return reject_all(Code::UnschedulableAndUnresolvable, messages);
  }
  // Coscheduling's PreFilter: the cluster's free resources against minResources.
  if (const std::string gap = gang_resource_rejection(g, snapshot_, placed_ids); !gap.empty())
    return reject_all(Code::UnschedulableAndUnresolvable, {gang_early_message(m.key, gap)});

  const int64_t min = gang_min_count(g);
  gang_cycle_ = true;
  struct Reset {
    bool& flag;
    ~Reset() { flag = false; }
  } reset{gang_cycle_};

  if (!g.topology_key.empty()) {
    // Topology-aware: the domains of the key, best first; the members
    // placed in each in turn (restricted to it by a nodeSelector entry, as
    // Kueue's topology-aware scheduling restricts a pod set) until one
    // admits the group.
    const GangDomainRanking ranking = domain_ranking(members, g, placed_ids, min - placed_before);
    const std::string& problem = ranking.problem;
    const std::string quoted_key = quote_for_message(g.topology_key);
    // Each domain in turn; the best attempt's results kept for the
    // messages if none admits the group.
    std::vector<ScheduleResult> best;
    int64_t best_placed = -1;
    std::string best_domain;
    size_t tried = 0;
    for (const RankedGangDomain& d : ranking.domains) {
      const std::string& value = d.value;
      std::vector<Pod> in = members;
      for (Pod& p : in) {
        p.node_selector[g.topology_key] = value;
        p.has_node_selector = true;
      }
      std::vector<ScheduleResult> attempt;
      attempt.reserve(members.size());
      const std::vector<size_t> placed_now = place_gang_members(in, placed_before, min, attempt);
      ++tried;
      const int64_t placed = placed_before + static_cast<int64_t>(placed_now.size());
      if (placed >= min) {
        for (ScheduleResult& r : attempt) {
          r.pod_group = m.key;
          r.group_outcome = GroupOutcome::kAdmitted;
          r.group_domain = g.topology_key + "=" + value;
        }
        return attempt;  // every member tried: the stop comes only when the minimum is out of reach
      }
      undo_gang_members(in, placed_now);
      // What the members that were placed and then undone count: as the
      // rejected group's below, each attempt is a failed one.
      for (const size_t k : placed_now) {
        const std::string ck = members[k].cache_key();
        metrics_.leave(ck);
        metrics_.failed(ck, static_cast<size_t>(&plan_for(members[k]) - plans_.data()), {});
      }
      if (placed > best_placed) {
        best_placed = placed;
        best = std::move(attempt);
        best_domain = value;
      }
    }
    if (g.topology_required) {
      // Nothing tried: an early rejection, as the group's others.
      if (!problem.empty()) return reject_all(Code::UnschedulableAndUnresolvable, {gang_early_message(m.key, problem)});
      const std::string why = gang_early_message(
          m.key, "no " + quoted_key + " domain holds " + gang_min_field(g) + " " + std::to_string(min) + " (" +
                     std::to_string(tried) + " tried; the best, " + quote_for_message(best_domain) + ", placed " +
                     std::to_string(best_placed) + "/" + std::to_string(all) + ")");
      return reject_gang(members, std::move(best), m.key, why);
    }
    // Preferred: no domain holds the group; it is placed anywhere.
  }

  // Each member in turn, on the cluster as the earlier ones left it.
  const std::vector<size_t> placed_now = place_gang_members(members, placed_before, min, out);
  const int64_t placed = placed_before + static_cast<int64_t>(placed_now.size());
  if (placed >= min) {
    for (ScheduleResult& r : out) {
      r.pod_group = m.key;
      r.group_outcome = GroupOutcome::kAdmitted;
    }
    return out;
  }
  undo_gang_members(members, placed_now);
  return reject_gang(members, std::move(out), m.key, gang_rejection_message(g, m.key, placed, all));
}

GangDomainRanking Engine::domain_ranking(const std::vector<Pod>& members, const PodGroupObject& g,
                                         const std::vector<uint32_t>& placed_ids, int64_t need) {
  GangDomainRanking out;
  out.key = g.topology_key;
  out.required = g.topology_required;
  const int32_t key = snapshot_.string_id(g.topology_key);
  const std::string quoted_key = quote_for_message(g.topology_key);
  const SnapshotView view = snapshot_.view();
  // Whether some node has the key (with `value`, when >= 0).
  const auto some_node_has = [&](int32_t value) {
    for (uint32_t node = 0; node < snapshot_.num_nodes(); ++node) {
      const int32_t v = view.label_value(node, key);
      if (v != kNoId && (value < 0 || v == value)) return true;
    }
    return false;
  };
  if (key < 0 || !some_node_has(-1)) {
    out.problem = "no node has the label " + quoted_key;
    return out;
  }
  // The members placed before fix the domain (all in one), and so does a
  // member's own nodeSelector on the key.
  int32_t only = -1;
  for (const uint32_t id : placed_ids) {
    const uint32_t node = snapshot_.pod_node(id);
    const int32_t value = view.label_value(node, key);
    if (value == kNoId) {
      out.problem = "pod " + quote_for_message(snapshot_.pod(id).key()) + ", placed before, is on node " +
                    quote_for_message(snapshot_.node_name(node)) + ", which has no label " + quoted_key;
      return out;
    }
    if (only >= 0 && value != only) {
      out.problem = "the members placed before are not in one " + quoted_key + " domain";
      return out;
    }
    only = value;
  }
  for (const Pod& p : members) {
    const auto sel = p.node_selector.find(g.topology_key);
    if (sel == p.node_selector.end()) continue;
    const int32_t value = snapshot_.string_id(sel->second);
    // The node walk once per value: `only` was checked already (or holds
    // the members placed before, which sit on nodes with it).
    if (value < 0 || (only >= 0 && value != only) || (only < 0 && !some_node_has(value))) {
      out.problem = "pod " + quote_for_message(p.key()) + "'s nodeSelector " +
                    quote_for_message(g.topology_key + "=" + sel->second) + " leaves no " + quoted_key +
                    " domain for the group";
      return out;
    }
    only = value;
  }
  std::vector<uint32_t> feasible;
  std::vector<int64_t> totals;
  gang_first_member_totals(members.front(), feasible, totals);
  std::vector<ResourceList> requests;
  requests.reserve(members.size());
  for (const Pod& p : members) {
    const ProfilePlan& plan = plan_for(p);
    requests.push_back(gang_enforced_requests(plan.config, plan.filter, p));
  }
  // By name: undoing an attempt is an event, after which the snapshot may
  // renumber its strings (EngineOptions::compaction).
  for (const GangDomain& d : gang_domains(snapshot_, key, requests, need, feasible, totals, only)) {
    RankedGangDomain r;
    r.value = snapshot_.strings().str(d.value);
    r.nodes = d.nodes;
    r.feasible = d.feasible;
    r.holds_all = d.holds_all;
    r.best_sum = d.best_sum;
    r.best_count = d.best_count;
    out.domains.push_back(std::move(r));
  }
  if (out.domains.empty())
    out.problem = "no " + quoted_key + " domain has the free resources for " + std::to_string(need) +
                  (need == 1 ? " member" : " members");
  return out;
}

GangDomainRanking Engine::rank_gang_domains(const std::vector<Pod>& members) {
  GangDomainRanking out;
  if (members.empty()) return out;
  const PodGroupMembership m = pod_group_membership(members.front(), objects_);
  if (!takes_part_in_gang(m, objects_) || m.group < 0) return out;
  const PodGroupObject& g = objects_.pod_groups[static_cast<size_t>(m.group)];
  if (g.topology_key.empty()) return out;
  const std::vector<uint32_t> placed_ids = placed_members(members.front());
  return domain_ranking(members, g, placed_ids, gang_min_count(g) - static_cast<int64_t>(placed_ids.size()));
}

std::vector<size_t> Engine::place_gang_members(const std::vector<Pod>& members, int64_t placed, int64_t min,
                                               std::vector<ScheduleResult>& out) {
  const auto n = static_cast<int64_t>(members.size());
  std::vector<size_t> placed_now;
  try {
    for (int64_t i = 0; i < n; ++i) {
      out.push_back(schedule(members[static_cast<size_t>(i)]));
      if (out.back().node >= 0) placed_now.push_back(static_cast<size_t>(i));
      // Stop once the rest cannot make up the minimum (as the later
      // upstream's PlacementFeasible does): nothing they could do changes
      // the verdict.
      if (placed + static_cast<int64_t>(placed_now.size()) + (n - i - 1) < min) break;
    }
  } catch (...) {
    // A member the engine cannot take (bad input: an unknown priority
    // class) ends the group's cycle: the earlier members' placements are
    // undone, so the snapshot holds none of the group, then the error goes
    // to the caller.
    undo_gang_members(members, placed_now);
    throw;
  }
  return placed_now;
}

void Engine::undo_gang_members(const std::vector<Pod>& members, const std::vector<size_t>& placed_now) {
  // Unreserve every placement in the reverse of the order they were
  // reserved in; each was an attempt Permit then rejected.
  for (auto it = placed_now.rbegin(); it != placed_now.rend(); ++it) {
    static_cast<void>(forget_pod(members[*it].cache_key()));
    metrics_.unschedule_attempt(static_cast<size_t>(&plan_for(members[*it]) - plans_.data()));
  }
}

std::vector<ScheduleResult> Engine::reject_gang(const std::vector<Pod>& members, std::vector<ScheduleResult> out,
                                                const std::string& key, const std::string& why) {
  const size_t tried = out.size();
  out.resize(members.size());
  for (size_t i = 0; i < members.size(); ++i) {
    ScheduleResult& r = out[i];
    // A member the engine held before (given twice) keeps its place and
    // schedule()'s answer, as in an early rejection.
    if (r.node < 0 && pod_records_.count(members[i].cache_key()) != 0) {
      if (i >= tried) r = schedule(members[i]);
      r.pod_group = key;
      r.group_outcome = GroupOutcome::kNone;
      continue;
    }
    const bool placed_here = r.node >= 0;
    if (i >= tried) r.pod = members[i].key();
    r.message = why + (i >= tried ? " (not tried)" : placed_here || r.message.empty() ? "" : "; " + r.message);
    if (i >= tried || r.code != Code::Error) r.code = Code::Unschedulable;
    r.node = -1;
    r.node_name.clear();
    r.score = 0;
    r.devices.clear();
    r.device_group.clear();
    r.group_devices.clear();
    r.pod_group = key;
    r.group_outcome = GroupOutcome::kRejected;
    r.group_domain.clear();
    if (placed_here || i >= tried) {
      const std::string ck = members[i].cache_key();
      metrics_.leave(ck);
      metrics_.failed(ck, static_cast<size_t>(&plan_for(members[i]) - plans_.data()), {});
    }
  }
  return out;
}

bool Engine::gang_first_member_totals(const Pod& pod, std::vector<uint32_t>& nodes, std::vector<int64_t>& totals) {
  nodes.clear();
  totals.clear();
  const ProfilePlan& plan = plan_for(pod);
  check_device_annotations(pod);
  if (snapshot_.num_nodes() == 0) return false;
  intern_pod_for_plan(snapshot_, pod, plan, &objects_);
  PodQuery q = prepare_pod_query(pod, snapshot_, plan, tie_break_for(plan), options_.seed, &objects_);
  q.header.pod_seq = pod_seq_;
  if (q.rejected) return false;
  EvalRequest req;
  req.candidates = q.candidates ? &*q.candidates : nullptr;
  req.want_scores = true;
  req.score_single = true;
  EvalResult r;
  evaluate(q, req, r);
  nodes.assign(r.scored_nodes.begin(), r.scored_nodes.end());
  totals.assign(r.totals.begin(), r.totals.end());
  return true;
}

PodGroupStatus Engine::pod_group_status(const Pod& pod, const std::vector<Pod>& pending) const {
  PodGroupStatus s;
  const PodGroupMembership m = pod_group_membership(pod, objects_);
  if (!takes_part_in_gang(m, objects_)) return s;
  s.pod_group = m.key;
  if (m.group < 0) {
    s.rejection = gang_early_message(m.key, m.missing);
    return s;
  }
  const PodGroupObject& g = objects_.pod_groups[static_cast<size_t>(m.group)];
  s.api = g.api == PodGroupObject::Api::kCoscheduling ? "PodGroup (scheduling.x-k8s.io/v1alpha1)"
          : g.api == PodGroupObject::Api::kWorkload   ? "Workload (scheduling.k8s.io/v1alpha1)"
                                                      : "PodGroup (scheduling.k8s.io/v1alpha2)";
  s.topology_key = g.topology_key;
  s.topology_required = g.topology_required;
  s.min_field = gang_min_field(g);
  s.min_count = gang_min_count(g);
  const std::vector<uint32_t> placed_ids = placed_members(pod);
  s.placed = static_cast<int32_t>(placed_ids.size());
  for (const Pod& p : pending)
    if (same_pod_group(p, pod)) ++s.pending;
  const int64_t all = int64_t{s.placed} + s.pending;
  if (std::string why = gang_count_rejection(g, pod, all); !why.empty())
    s.rejection = gang_early_message(m.key, why);
  else if (std::string gap = gang_resource_rejection(g, snapshot_, placed_ids); !gap.empty())
    s.rejection = gang_early_message(m.key, gap);
  return s;
}

}  // namespace bulkscore
