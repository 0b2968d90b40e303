#include "host/engine/result_json.hpp"

#include <climits>
#include <iterator>

#include "host/input/device_groups.hpp"
#include "host/input/timestamp.hpp"
#include "host/io/json_writer.hpp"

namespace bulkscore {
void write_shared_devices(JsonWriter& w, const std::string& group, const GroupDevices& devices) {
  if (group.empty() || devices.empty()) return;
  w.key("sharedDevices").begin_object().field("group", group);
  w.key("devices").begin_object();
  for (const auto& [resource, list] : devices) {
    w.key(resource).begin_array();
    for (int32_t d : list) w.value(static_cast<int64_t>(d));
    w.end_array();
  }
  w.end_object().key("env").begin_object();
  for (const auto& [resource, list] : devices) w.field(visible_devices_env(resource), format_device_list(list));
  w.end_object().end_object();
}

namespace {

// A start time as RFC 3339 (UTC, nanoseconds when not whole), or null for
// a pod without one.
void time_field(JsonWriter& w, const char* key, int64_t ns) {
  if (ns == INT64_MAX)
    w.field_null(key);
  else
    w.field(key, format_rfc3339_ns(ns));
}

}  // namespace

void write_preemption(JsonWriter& w, const PreemptionExplanation& p) {
  w.key("preemption").begin_object();
  if (p.not_eligible.empty())
    w.field_null("notEligible");
  else
    w.field("notEligible", p.not_eligible);
  w.field("potentialNodes", p.potential_nodes).field("numCandidates", p.num_candidates).field("offset", p.offset);
  w.field("dryRunNodes", p.dry_run_nodes);
  if (p.nominated_node.empty()) {
    w.field_null("nominatedNode").field_null("decidedBy");
  } else {
    w.field("nominatedNode", p.nominated_node).field("decidedBy", preemption_criterion_name(p.decided_by));
  }
  static constexpr PreemptionCriterion kOrder[] = {
      PreemptionCriterion::kPdbViolations, PreemptionCriterion::kHighestPriority, PreemptionCriterion::kPrioritySum,
      PreemptionCriterion::kVictims, PreemptionCriterion::kStartTime};
  w.key("leftAfter").begin_object();
  for (size_t i = 0; i < p.left_after.size() && i < std::size(kOrder); ++i)
    w.field(preemption_criterion_name(kOrder[i]), p.left_after[i]);
  w.end_object();
  w.key("candidates").begin_array();
  for (const PreemptionCandidate& c : p.candidates) {
    w.begin_object().field("node", c.node).field("pdbViolations", c.pdb_violations);
    w.field("highestPriority", static_cast<int64_t>(c.highest_priority)).field("prioritySum", c.priority_sum);
    w.field("offsetPrioritySum", c.offset_priority_sum).field("numVictims", static_cast<uint64_t>(c.victims.size()));
    time_field(w, "earliestStartOfHighest", c.earliest_start_ns);
    w.key("victims").begin_array();
    for (const PreemptionVictim& v : c.victims) {
      w.begin_object().field("pod", v.pod).field("priority", static_cast<int64_t>(v.priority));
      time_field(w, "startTime", v.start_time_ns);
      w.end_object();
    }
    w.end_array().end_object();
  }
  w.end_array().end_object();
}

void append_schedule_result_json(const ScheduleResult& r, std::string& out) {
  JsonWriter w(out);
  w.begin_object().field("pod", r.pod);
  if (r.node >= 0) {
    w.field("node", r.node_name).field("score", r.score).field("feasibleNodes", r.feasible_nodes);
    if (!r.devices.empty()) {
      w.key("devices").begin_array();
      for (int32_t d : r.devices) w.value(static_cast<int64_t>(d));
      w.end_array();
    }
    write_shared_devices(w, r.device_group, r.group_devices);
  } else {
    w.field_null("node").field("feasibleNodes", r.feasible_nodes).field("code", code_name(r.code));
    w.field("message", r.message);
  }
  // DefaultPreemption: only on the lines of pods that preempted, so that
  // every other line stays as it was.
  if (!r.nominated_node.empty()) {
    w.field("nominatedNode", r.nominated_node);
    w.key("victims").begin_array();
    for (const auto& v : r.victims) w.value(v);
    w.end_array();
    w.field("pdbViolations", r.pdb_violations);
  }
  // Gang members only (Engine::schedule_group): their group and its verdict.
  if (!r.pod_group.empty()) w.field("podGroup", r.pod_group).field("group", group_outcome_name(r.group_outcome));
  if (!r.group_domain.empty()) w.field("groupDomain", r.group_domain);
  if (!r.warnings.empty()) {
    w.key("warnings").begin_array();
    for (const auto& s : r.warnings) w.value(s);
    w.end_array();
  }
  w.end_object();
}

void append_ranking_json(const Ranking& r, std::string& out) {
  JsonWriter w(out);
  w.begin_object().field("pod", r.pod);
  w.field("evaluatedNodes", r.evaluated_nodes).field("feasibleNodes", r.feasible_nodes);
  if (r.chosen.empty())
    w.field_null("chosen");
  else
    w.field("chosen", r.chosen);
  w.field("tiedAtBest", r.tied_at_best).field("tieBreak", r.tie_break == TieBreak::First ? "first" : "random");
  w.key("nodes").begin_array();
  for (const RankedNode& n : r.nodes) {
    w.begin_object().field("name", n.name).field("total", n.total);
    w.key("scores").begin_object();
    for (size_t i = 0; i < r.score_plugins.size() && i < n.raw.size(); ++i)
      w.key(r.score_plugins[i]).begin_object().field("raw", n.raw[i]).field("weighted", n.weighted[i]).end_object();
    w.end_object().end_object();
  }
  w.end_array();
  w.key("rejections").begin_array();
  for (const RejectionCount& c : r.rejections)
    w.begin_object().field("plugin", c.plugin).field("reason", c.reason).field("nodes", c.nodes).end_object();
  w.end_array();
  if (r.message.empty())
    w.field_null("message");
  else
    w.field("message", r.message);
  if (r.preemption) write_preemption(w, *r.preemption);
  if (!r.warnings.empty()) {
    w.key("warnings").begin_array();
    for (const auto& s : r.warnings) w.value(s);
    w.end_array();
  }
  w.end_object();
}

void write_pod_group_status(JsonWriter& w, const PodGroupStatus& s, const GangDomainRanking* domains) {
  w.begin_object().field("name", s.pod_group);
  if (!s.api.empty()) {
    w.field("api", s.api).field("minField", s.min_field).field("min", static_cast<int64_t>(s.min_count));
    w.field("placed", static_cast<int64_t>(s.placed)).field("pending", static_cast<int64_t>(s.pending));
  }
  if (!s.topology_key.empty()) {
    w.key("topology").begin_object().field("key", s.topology_key).field("required", s.topology_required);
    if (domains) {
      if (domains->problem.empty())
        w.field_null("problem");
      else
        w.field("problem", domains->problem);
      // The first few, in the order schedule_group would try them.
      w.key("domains").begin_array();
      for (size_t i = 0; i < domains->domains.size() && i < kExplainedGangDomains; ++i) {
        const RankedGangDomain& d = domains->domains[i];
        w.begin_object().field("value", d.value).field("nodes", d.nodes).field("feasible", d.feasible);
        w.field("holdsAll", d.holds_all).end_object();
      }
      w.end_array();
    }
    w.end_object();
  }
  if (s.rejection.empty())
    w.field_null("rejection");
  else
    w.field("rejection", s.rejection);
  w.end_object();
}

void append_pod_group_status_json(const PodGroupStatus& s, std::string& out) {
  if (s.pod_group.empty()) {
    out += "null";
    return;
  }
  JsonWriter w(out);
  write_pod_group_status(w, s);
}

}  // namespace bulkscore
