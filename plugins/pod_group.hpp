// Gang scheduling's rules (issue 23; docs/plugins.md "Pod groups"), host
// only: which group a pod joins, the queue order that takes a gang's
// pending members together, the early rejections (GangScheduling's
// PreEnqueue in Kubernetes v1.35 and v1.36; scheduler-plugins Coscheduling's
// PreFilter, its minResources included) and Permit's quorum over the
// members placed. The rules of both APIs live here; the engine calls these
// functions (Engine::schedule_group) and names neither plugin.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "host/input/config.hpp"
#include "host/input/model.hpp"
#include "host/snapshot/snapshot.hpp"
#include "plugins/plugin_api.hpp"

namespace bulkscore {

// Coscheduling's pod label (scheduling.x-k8s.io/v1alpha1 PodGroupLabel).
inline constexpr const char* kCoschedulingPodGroupLabel = "scheduling.x-k8s.io/pod-group";

// The group a pod joins. A Workload's group is one instance per replica
// key, as v1.35's GangScheduling counts them (its tests put a pod of
// replica "2" in a quorum of its own).
struct PodGroupMembership {
  // The pod names a group: spec.workloadRef (v1.35), spec.schedulingGroup
  // (v1.36) or the Coscheduling label, taken in that order.
  bool member = false;
  int32_t group = -1;    // its object in ClusterObjects::pod_groups; -1: missing
  // The instance's key, for output and messages: "ns/name" (Coscheduling,
  // PodGroup), "ns/workload/podGroup", plus "/replicaKey" when one is set.
  // The two PodGroup APIs print alike; same_pod_group tells them apart.
  std::string key;
  // When the object is missing: upstream's reason (GangScheduling
  // PreEnqueue's for a Workload or a v1alpha2 PodGroup, Permit's "PodGroup
  // not found" for Coscheduling), and its code.
  std::string missing;
  Code missing_code = Code::UnschedulableAndUnresolvable;
};
PodGroupMembership pod_group_membership(const Pod& pod, const ClusterObjects& objects);

// The key of the group instance the pod names ("" when none), without
// looking the object up.
std::string pod_group_key(const Pod& pod);
// Whether two pods name the same group instance (neither may name none)
// through the same link (a v1alpha2 PodGroup is not the Coscheduling
// PodGroup of the same name): field by field, no string built (the
// engine's scans of the snapshot).
bool same_pod_group(const Pod& a, const Pod& b);

// Whether the pod is taken with its group (a gang member, or a member whose
// group object is missing); a `basic` group's pods are ordinary pods.
bool takes_part_in_gang(const PodGroupMembership& m, const ClusterObjects& objects);

// One entry of the scheduling queue: a pod alone, or a gang's pending
// members (in the order given). `pods` are indices into the list given.
struct QueueEntry {
  std::vector<uint32_t> pods;
  std::string pod_group;  // the gang's key; "" for a pod alone
};
// QueueSort over pending pods in the engine's order (the list's: bulkscore
// takes pending pods as given, upstream's PrioritySort ties broken by
// arrival). Ordinary pods keep their places; a gang's pending members are
// taken together at the place of its first member (Coscheduling's QueueSort
// keeps a group's pods back to back, ordered as its first), in list order.
std::vector<QueueEntry> gang_queue_order(const std::vector<Pod>& pending, const ClusterObjects& objects);

// The minimum a gang needs placed (assumed or bound): gang.minCount, or
// Coscheduling's minMember.
int32_t gang_min_count(const PodGroupObject& g);
// "minCount" or "minMember", as the group's API names it.
const char* gang_min_field(const PodGroupObject& g);

// PreEnqueue / PreFilter on the member count: `all_members` is the group's
// pods the scheduler knows (pending and placed). "" when enough; else
// upstream's reason for `pod` (Coscheduling's names the pod), code
// UnschedulableAndUnresolvable.
std::string gang_count_rejection(const PodGroupObject& g, const Pod& pod, int64_t all_members);

// Coscheduling's PreFilter on spec.minResources (with `pods: minMember`
// added): the nodes' free resources (allocatable less requested, the
// group's own placed pods given back), taken node after node in snapshot
// order, must cover it; "" when they do, else the gap that is left.
// `member_ids`: the group's pods in the snapshot.
std::string gang_resource_rejection(const PodGroupObject& g, const Snapshot& snap,
                                    const std::vector<uint32_t>& member_ids);

// ---- topology-aware gangs (kGangRequiredTopology, kGangPreferredTopology) ----
// One domain of the gang's topology key: the nodes whose label has one
// value. The engine evaluates the gang's first member once over every
// node (unrestricted) and gives its feasible nodes and totals here; each
// domain then says whether it can hold the members by free resources and
// how well the first member scores there.
struct GangDomain {
  int32_t value = -1;        // the label value's string id in the snapshot
  uint32_t nodes = 0;        // nodes in the domain
  uint32_t feasible = 0;     // of them, where the first member passes Filter
  int64_t best_sum = 0;      // its best min(members, feasible) totals there, summed
  uint32_t best_count = 0;   // how many were summed
  bool holds_all = false;    // free resources cover every pending member
};
// The domains that can hold the members the group needs, best first.
// `need`: members that must be placed now (the minimum less those placed
// before). A domain is left out when its nodes' free resources
// (allocatable less requested, summed over the domain; `pods` by pod
// count) cannot cover the `need` smallest requests of `member_requests`
// (gang_enforced_requests: what Filter enforces; each resource on its
// own): as Coscheduling's minResources check, for one domain. Order: the domains that hold every pending
// member first, then the higher mean of the best totals, more feasible
// nodes, and the value's name (ascending) last. `only_value` >= 0 keeps
// that domain alone (the members placed before, or a member's own
// nodeSelector, sit there).
// What of `pod`'s requests a domain's free resources must cover for the
// pruning in gang_domains: the requests the profile's Filter enforces
// (NodeResourcesFit, with its ignoredResources and ignoredResourceGroups)
// and one `pods` slot; nothing when the profile's Filter (`filter_plugins`,
// plugin ids) has no NodeResourcesFit.
ResourceList gang_enforced_requests(const ProfileConfig& profile, const std::vector<uint8_t>& filter_plugins,
                                    const Pod& pod);

std::vector<GangDomain> gang_domains(const Snapshot& snap, int32_t key, const std::vector<ResourceList>& member_requests,
                                     int64_t need, const std::vector<uint32_t>& feasible_nodes,
                                     const std::vector<int64_t>& totals, int32_t only_value);

// Permit's verdict message for a gang that fell short, in upstream's
// style: `pod group "ns/train" rejected: 3/4 members placed, minCount 4`.
std::string gang_rejection_message(const PodGroupObject& g, const std::string& key, int64_t placed,
                                   int64_t all_members);
// An early rejection's message: `pod group "ns/train" rejected: <reason>`.
std::string gang_early_message(const std::string& key, const std::string& reason);

}  // namespace bulkscore
