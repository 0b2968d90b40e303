// The JSON of a decision, as `bulkscore schedule` writes it (one line per
// pod) and the C ABI returns it: one writer, so the CLI, the bindings and
// an embedder's log agree byte for byte.
#pragma once

#include <string>

#include "host/engine/engine.hpp"
#include "host/io/json_writer.hpp"

namespace bulkscore {

// SharedDeviceGroup: the "sharedDevices" field (the group, its devices by
// resource, the environment a device plugin would set), when there are any.
void write_shared_devices(JsonWriter& w, const std::string& group, const GroupDevices& devices);

// Appends `r` as one JSON object, without a newline: {"pod", "node",
// "score", "feasibleNodes", "devices", "sharedDevices"} when placed,
// {"pod", "node": null, "feasibleNodes", "code", "message"} when not;
// then {"nominatedNode", "victims", "pdbViolations"} when the pod preempted
// (DefaultPreemption evicted victims for it), {"podGroup", "group":
// "admitted" | "rejected"} for a gang member, and "warnings" when it has any.
void append_schedule_result_json(const ScheduleResult& r, std::string& out);

// DefaultPreemption's dry run as the "preemption" field (explain's JSON,
// the ranking's): eligibility, the potential nodes and how many candidates
// were looked for, every candidate best first with its victims and the
// criteria's keys, the nominated node and the criterion that chose it.
void write_preemption(JsonWriter& w, const PreemptionExplanation& p);

// `r` as one JSON object: the ranking of Engine::rank.
void append_ranking_json(const Ranking& r, std::string& out);

// A gang member's group (Engine::pod_group_status) as `explain --format
// json`'s "podGroup" object: {"name", "api", "minField", "min", "placed",
// "pending", "rejection": null | text}, without "api" to "pending" when the
// group's object is missing; a topology-aware gang's "topology": {"key",
// "required"}, with `domains` (Engine::rank_gang_domains) also "problem"
// and the first kExplainedGangDomains "domains". The caller writes nothing
// for a pod in no gang.
inline constexpr size_t kExplainedGangDomains = 5;
void write_pod_group_status(JsonWriter& w, const PodGroupStatus& s, const GangDomainRanking* domains = nullptr);
// The same as a document of its own; "null" for a pod in no gang (the C ABI).
void append_pod_group_status_json(const PodGroupStatus& s, std::string& out);

}  // namespace bulkscore
