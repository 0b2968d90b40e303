#include "plugins/pod_group.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <unordered_map>

#include "host/input/pod_resources.hpp"
#include "host/input/quote.hpp"
#include "plugins/node_resources_fit.hpp"
#include "plugins/registry.hpp"

namespace bulkscore {

namespace {

// Go's %q of a name, as upstream's messages print it.
std::string go_quoted(const std::string& s) { return quote_for_message(s, s.size() + 1); }

}  // namespace

namespace {
// The Coscheduling label's value, or null when the pod has none (or an
// empty one: upstream reads that as no group).
const std::string* coscheduling_group(const Pod& pod) {
  // (A string made once: StringMap's find takes a std::string, and every
  // pod assumed asks.)
  static const std::string key = kCoschedulingPodGroupLabel;
  const auto label = pod.labels.find(key);
  return label == pod.labels.end() || label->second.empty() ? nullptr : &label->second;
}

// Which of its links names the pod's group. The reader refuses a pod with
// both workloadRef and schedulingGroup (no release has both); a pod built
// in code with both takes workloadRef. Either beats the Coscheduling label:
// the scheduler's own fields before an out-of-tree plugin's label.
enum class Link : uint8_t { kNone, kWorkloadRef, kSchedulingGroup, kCoscheduling };
Link link_of(const Pod& pod) {
  if (!pod.workload_name.empty()) return Link::kWorkloadRef;
  if (!pod.scheduling_group.empty()) return Link::kSchedulingGroup;
  return coscheduling_group(pod) ? Link::kCoscheduling : Link::kNone;
}
}  // namespace

std::string pod_group_key(const Pod& pod) {
  switch (link_of(pod)) {
    case Link::kWorkloadRef: {
      std::string key = pod.namespace_name + "/" + pod.workload_name + "/" + pod.workload_pod_group;
      if (!pod.workload_replica_key.empty()) key += "/" + pod.workload_replica_key;
      return key;
    }
    case Link::kSchedulingGroup:
      return pod.namespace_name + "/" + pod.scheduling_group;
    case Link::kCoscheduling:
      return pod.namespace_name + "/" + *coscheduling_group(pod);
    case Link::kNone:
      break;
  }
  return "";
}

bool same_pod_group(const Pod& a, const Pod& b) {
  if (a.namespace_name != b.namespace_name) return false;
  // b must be linked the same way: different links name different objects
  // even under one name (a v1alpha2 PodGroup and a Coscheduling PodGroup may
  // share a namespace and name). Checked in link_of's order, so that b's
  // labels are looked up only when both could be Coscheduling members (the
  // engine's snapshot scans call this once per pod).
  switch (link_of(a)) {
    case Link::kWorkloadRef:
      return a.workload_name == b.workload_name && a.workload_pod_group == b.workload_pod_group &&
             a.workload_replica_key == b.workload_replica_key;
    case Link::kSchedulingGroup:
      return b.workload_name.empty() && a.scheduling_group == b.scheduling_group;
    case Link::kCoscheduling: {
      if (!b.workload_name.empty() || !b.scheduling_group.empty()) return false;
      const std::string* label = coscheduling_group(b);
      return label && *label == *coscheduling_group(a);
    }
    case Link::kNone:
      break;
  }
  return false;
}

PodGroupMembership pod_group_membership(const Pod& pod, const ClusterObjects& objects) {
  PodGroupMembership m;
  using Api = PodGroupObject::Api;
  if (!pod.workload_name.empty()) {
    // v1.35's spec.workloadRef: the Workload's podGroups[] item, one
    // instance per replica key.
    m.member = true;
    m.key = pod_group_key(pod);
    bool workload_found = false;
    for (size_t i = 0; i < objects.pod_groups.size(); ++i) {
      const PodGroupObject& g = objects.pod_groups[i];
      if (g.api != Api::kWorkload || g.namespace_name != pod.namespace_name || g.name != pod.workload_name) continue;
      workload_found = true;
      if (g.pod_group == pod.workload_pod_group) {
        m.group = static_cast<int32_t>(i);
        return m;
      }
    }
    // PreEnqueue's reasons (v1.35, "pods's" as upstream spells it).
    m.missing = workload_found ? "pod group " + go_quoted(pod.workload_pod_group) + " doesn't exist for a workload " +
                                     go_quoted(pod.workload_name)
                               : "waiting for pods's workload " + go_quoted(pod.workload_name) +
                                     " to appear in scheduling queue";
    m.missing_code = Code::UnschedulableAndUnresolvable;
    return m;
  }
  if (!pod.scheduling_group.empty()) {
    // v1.36's spec.schedulingGroup: the standalone PodGroup of that name in
    // the pod's namespace.
    m.member = true;
    m.key = pod_group_key(pod);
    for (size_t i = 0; i < objects.pod_groups.size(); ++i) {
      const PodGroupObject& g = objects.pod_groups[i];
      if (g.api == Api::kPodGroup && g.namespace_name == pod.namespace_name && g.name == pod.scheduling_group) {
        m.group = static_cast<int32_t>(i);
        return m;
      }
    }
    // v1.36 GangScheduling's PreEnqueue ("pods's" as upstream spells it).
    m.missing = "waiting for pods's pod group " + go_quoted(pod.scheduling_group) + " to appear in scheduling queue";
    m.missing_code = Code::UnschedulableAndUnresolvable;
    return m;
  }
  const std::string* label = coscheduling_group(pod);
  if (!label) return m;
  m.member = true;
  m.key = pod_group_key(pod);
  for (size_t i = 0; i < objects.pod_groups.size(); ++i) {
    const PodGroupObject& g = objects.pod_groups[i];
    if (g.api == Api::kCoscheduling && g.namespace_name == pod.namespace_name && g.name == *label) {
      m.group = static_cast<int32_t>(i);
      return m;
    }
  }
  // Coscheduling's PreFilter lets such a pod through and its Permit
  // rejects it (Unschedulable); bulkscore rejects it before placing it,
  // with Permit's words.
  m.missing = "PodGroup not found";
  m.missing_code = Code::Unschedulable;
  return m;
}

bool takes_part_in_gang(const PodGroupMembership& m, const ClusterObjects& objects) {
  if (!m.member) return false;
  return m.group < 0 || objects.pod_groups[static_cast<size_t>(m.group)].gang;
}

std::vector<QueueEntry> gang_queue_order(const std::vector<Pod>& pending, const ClusterObjects& objects) {
  std::vector<QueueEntry> out;
  out.reserve(pending.size());
  // Group key -> its gang's entry in `out`, or kNotGang for a basic group:
  // each group's object is looked up once.
  constexpr size_t kNotGang = SIZE_MAX;
  std::unordered_map<std::string, size_t> entry_of;
  for (uint32_t i = 0; i < pending.size(); ++i) {
    std::string key = pod_group_key(pending[i]);
    if (key.empty()) {
      out.push_back(QueueEntry{{i}, ""});
      continue;
    }
    // The map's key starts with the link, as same_pod_group tells them
    // apart: a v1alpha2 PodGroup and a Coscheduling PodGroup of one name
    // share the printed key "ns/name" but are two groups.
    std::string map_key = static_cast<char>('0' + static_cast<int>(link_of(pending[i]))) + key;
    auto it = entry_of.find(map_key);
    if (it == entry_of.end()) {
      const bool gang = takes_part_in_gang(pod_group_membership(pending[i], objects), objects);
      it = entry_of.emplace(std::move(map_key), gang ? out.size() : kNotGang).first;
      if (gang) out.push_back(QueueEntry{{}, std::move(key)});
    }
    if (it->second == kNotGang)
      out.push_back(QueueEntry{{i}, ""});
    else
      out[it->second].pods.push_back(i);
  }
  return out;
}

int32_t gang_min_count(const PodGroupObject& g) { return g.gang ? g.min_count : 1; }

const char* gang_min_field(const PodGroupObject& g) {
  return g.api == PodGroupObject::Api::kCoscheduling ? "minMember" : "minCount";
}

std::string gang_count_rejection(const PodGroupObject& g, const Pod& pod, int64_t all_members) {
  if (!g.gang || all_members >= g.min_count) return "";
  if (g.api == PodGroupObject::Api::kCoscheduling)
    return "pre-filter pod " + pod.name + " cannot find enough sibling pods, current pods number: " +
           std::to_string(all_members) + ", minMember of group: " + std::to_string(g.min_count);
  return "waiting for minCount pods from a gang to appear in scheduling queue";
}

std::string gang_resource_rejection(const PodGroupObject& g, const Snapshot& snap,
                                    const std::vector<uint32_t>& member_ids) {
  if (g.api != PodGroupObject::Api::kCoscheduling || g.min_resources.empty()) return "";
  // What is left to cover, by resource (upstream adds pods: minMember).
  ResourceList gap = g.min_resources;
  gap["pods"] = g.min_count;
  const uint32_t n = snap.num_nodes();
  const SnapshotView view = snap.view();
  // The group's own pods are given back on their nodes (upstream removes
  // them from its copy of the node before measuring what is free).
  std::unordered_map<uint32_t, ResourceList> given_back;
  for (const uint32_t id : member_ids) {
    ResourceList& back = given_back[snap.pod_node(id)];
    for (const auto& [name, amount] : pod_requests(snap.pod(id))) back[name] = go_add(back[name], amount);
    back["pods"] += 1;
  }
  std::string out;
  for (auto& [name, left] : gap) {
    // Each resource on its own, node after node in snapshot order: upstream
    // subtracts a node's free amount (as Quantity.Sub: a node short of it,
    // free < 0, widens the gap) and drops the resource once covered, so it
    // is covered when some prefix of the nodes covers it.
    const bool pods = name == "pods";
    const int32_t r = pods ? -1 : snap.resource_index(name);
    const int64_t* alloc = r >= 0 ? view.allocatable + static_cast<size_t>(r) * n : nullptr;
    const int64_t* req = r >= 0 ? view.requested + static_cast<size_t>(r) * n : nullptr;
    // As upstream: every resource is subtracted at least once (a zero
    // request meeting an overcommitted first node stays uncovered).
    bool covered = false;
    for (uint32_t node = 0; node < n && !covered; ++node) {
      int64_t free = pods ? view.allowed_pods[node] - view.pod_count[node] : alloc ? go_sub(alloc[node], req[node]) : 0;
      if (!given_back.empty())
        if (const auto it = given_back.find(node); it != given_back.end())
          if (const auto b = it->second.find(name); b != it->second.end()) free = go_add(free, b->second);
      left = go_sub(left, free);
      covered = left <= 0;
    }
    if (!covered)
      out += (out.empty() ? "resource gap: " : ", ") + name + " " + std::to_string(left) + (name == "cpu" ? "m" : "");
  }
  return out;
}

ResourceList gang_enforced_requests(const ProfileConfig& profile, const std::vector<uint8_t>& filter_plugins,
                                    const Pod& pod) {
  constexpr uint8_t kFit = plugin_id<plugins::NodeResourcesFit>();
  if (std::find(filter_plugins.begin(), filter_plugins.end(), kFit) == filter_plugins.end()) return {};
  ResourceList out = plugins::NodeResourcesFit::enforced_requests(profile.fit_args, pod_requests(pod));
  out["pods"] = 1;
  return out;
}

std::vector<GangDomain> gang_domains(const Snapshot& snap, int32_t key, const std::vector<ResourceList>& member_requests,
                                     int64_t need, const std::vector<uint32_t>& feasible_nodes,
                                     const std::vector<int64_t>& totals, int32_t only_value) {
  const uint32_t n = snap.num_nodes();
  const SnapshotView view = snap.view();
  // The domain of each node (-1: no such label, or another value than
  // only_value), and the domains in first-seen order.
  std::vector<int32_t> domain_of(n, -1);
  std::vector<GangDomain> domains;
  std::unordered_map<int32_t, int32_t> index;
  for (uint32_t node = 0; node < n; ++node) {
    const int32_t value = view.label_value(node, key);
    if (value == kNoId || (only_value >= 0 && value != only_value)) continue;
    const auto [it, added] = index.emplace(value, static_cast<int32_t>(domains.size()));
    if (added) {
      GangDomain d;
      d.value = value;
      domains.push_back(d);
    }
    domain_of[node] = it->second;
    ++domains[static_cast<size_t>(it->second)].nodes;
  }
  if (domains.empty()) return domains;

  // Free resources by domain against the members' requests, resource by
  // resource: the `need` smallest must fit (holds at all), and all of them
  // (holds the whole gang).
  std::map<std::string, std::vector<int64_t>> wanted;  // resource -> each member's request
  for (const ResourceList& req : member_requests)
    for (const auto& [name, amount] : req)
      if (amount > 0) wanted[name].resize(member_requests.size(), 0);
  for (size_t m = 0; m < member_requests.size(); ++m)
    for (const auto& [name, amount] : member_requests[m])
      if (amount > 0) wanted[name][m] = amount;
  const auto clamp_need = static_cast<size_t>(std::clamp<int64_t>(need, 0, static_cast<int64_t>(member_requests.size())));
  std::vector<bool> holds(domains.size(), true);
  for (GangDomain& d : domains) d.holds_all = true;
  std::vector<int64_t> free(domains.size());
  for (auto& [name, amounts] : wanted) {
    const bool pods = name == "pods";
    const int32_t r = pods ? -1 : snap.resource_index(name);
    std::fill(free.begin(), free.end(), 0);
    if (pods || r >= 0)
      for (uint32_t node = 0; node < n; ++node) {
        if (domain_of[node] < 0) continue;
        const int64_t left =
            pods ? view.allowed_pods[node] - view.pod_count[node]
                 : go_sub(view.alloc(static_cast<uint32_t>(r), node), view.req(static_cast<uint32_t>(r), node));
        free[static_cast<size_t>(domain_of[node])] =
            go_add(free[static_cast<size_t>(domain_of[node])], std::max<int64_t>(left, 0));
      }
    int64_t all = 0;
    for (const int64_t a : amounts) all = go_add(all, a);
    std::sort(amounts.begin(), amounts.end());
    int64_t smallest = 0;
    for (size_t i = 0; i < clamp_need; ++i) smallest = go_add(smallest, amounts[i]);
    for (size_t d = 0; d < domains.size(); ++d) {
      if (free[d] < smallest) holds[d] = false;
      if (free[d] < all) domains[d].holds_all = false;
    }
  }

  // The first member's best totals by domain.
  std::vector<std::vector<int64_t>> best(domains.size());
  for (size_t i = 0; i < feasible_nodes.size(); ++i) {
    const int32_t d = domain_of[feasible_nodes[i]];
    if (d < 0) continue;
    ++domains[static_cast<size_t>(d)].feasible;
    best[static_cast<size_t>(d)].push_back(totals[i]);
  }
  for (size_t d = 0; d < domains.size(); ++d) {
    std::vector<int64_t>& t = best[d];
    const size_t k = std::min(t.size(), member_requests.size());
    std::partial_sort(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(k), t.end(), std::greater<>());
    for (size_t i = 0; i < k; ++i) domains[d].best_sum += t[i];
    domains[d].best_count = static_cast<uint32_t>(k);
  }

  std::vector<GangDomain> out;
  for (size_t d = 0; d < domains.size(); ++d)
    if (holds[d]) out.push_back(domains[d]);
  std::sort(out.begin(), out.end(), [&](const GangDomain& a, const GangDomain& b) {
    if (a.holds_all != b.holds_all) return a.holds_all;
    if ((a.best_count > 0) != (b.best_count > 0)) return a.best_count > 0;
    // Mean against mean, without a division (members times totals times
    // members stays far below 2^63 for any real gang and profile).
    const int64_t lhs = a.best_sum * static_cast<int64_t>(b.best_count);
    const int64_t rhs = b.best_sum * static_cast<int64_t>(a.best_count);
    if (lhs != rhs) return lhs > rhs;
    if (a.feasible != b.feasible) return a.feasible > b.feasible;
    return snap.strings().str(a.value) < snap.strings().str(b.value);
  });
  return out;
}

std::string gang_rejection_message(const PodGroupObject& g, const std::string& key, int64_t placed,
                                   int64_t all_members) {
  return "pod group " + go_quoted(key) + " rejected: " + std::to_string(placed) + "/" + std::to_string(all_members) +
         " members placed, " + gang_min_field(g) + " " + std::to_string(gang_min_count(g));
}

std::string gang_early_message(const std::string& key, const std::string& reason) {
  return "pod group " + go_quoted(key) + " rejected: " + reason;
}

}  // namespace bulkscore
