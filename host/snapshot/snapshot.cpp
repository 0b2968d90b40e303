#include "host/snapshot/snapshot.hpp"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "host/input/pod_resources.hpp"
#include "host/input/quote.hpp"

namespace bulkscore {

// ---- StringDict -----------------------------------------------------------

int32_t StringDict::intern(std::string_view s) {
  // The lookup key in a reused buffer: no allocation per call for strings
  // already interned (the common case: every pod's labels on load).
  lookup_.assign(s.data(), s.size());
  auto it = ids_.find(lookup_);
  if (it != ids_.end()) return it->second;
  const auto id = static_cast<int32_t>(strings_.size());
  strings_.emplace_back(s);
  ids_.emplace(strings_.back(), id);
  int64_t v = 0;
  const bool ok = parse_go_int64(s, v);
  int_values_.push_back(ok ? v : 0);
  int_ok_.push_back(ok ? 1 : 0);
  return id;
}

int32_t StringDict::find(std::string_view s) const {
  // The map takes std::string keys (no heterogeneous lookup before C++20):
  // a key buffer per thread, as find is const and runs on several at once,
  // so that a lookup past the short-string buffer allocates nothing.
  thread_local std::string key;
  key.assign(s.data(), s.size());
  auto it = ids_.find(key);
  return it == ids_.end() ? kNoId : it->second;
}

StringDict StringDict::kept(const std::vector<uint8_t>& keep, std::vector<int32_t>& new_ids) const {
  StringDict out;
  new_ids.assign(strings_.size(), kNoId);
  size_t live = 0;
  for (const uint8_t k : keep) live += k ? 1 : 0;
  out.strings_.reserve(live);
  out.ids_.reserve(live);
  out.int_values_.reserve(live);
  out.int_ok_.reserve(live);
  for (size_t id = 0; id < strings_.size(); ++id) {
    if (!keep[id]) continue;
    new_ids[id] = static_cast<int32_t>(out.strings_.size());
    out.strings_.push_back(strings_[id]);
    out.ids_.emplace(out.strings_.back(), new_ids[id]);
    out.int_values_.push_back(int_values_[id]);
    out.int_ok_.push_back(int_ok_[id]);
  }
  return out;
}

std::string normalize_image_name(std::string_view name) {
  const auto colon = name.rfind(':');
  const auto slash = name.rfind('/');
  if (colon == std::string_view::npos || (slash != std::string_view::npos && colon < slash)) {
    return std::string(name) + ":latest";
  }
  return std::string(name);
}

// ---- host ports -----------------------------------------------------------

namespace {

template <class IdOf>
std::vector<HostPortEntry> collect_host_ports(const Pod& pod, IdOf id_of) {
  std::vector<HostPortEntry> out;
  auto take = [&](const Container& c) {
    for (const auto& p : c.ports) {
      if (p.host_port <= 0) continue;
      const std::string& proto = p.protocol.empty() ? std::string("TCP") : p.protocol;
      const std::string& ip = p.host_ip.empty() ? std::string("0.0.0.0") : p.host_ip;
      out.push_back(HostPortEntry{id_of(ip), id_of(proto), p.host_port});
    }
  };
  // Regular containers and sidecars: only they hold ports while running.
  for (const auto& c : pod.init_containers)
    if (c.restart_policy_always) take(c);
  for (const auto& c : pod.containers) take(c);
  return out;
}

}  // namespace

std::vector<HostPortEntry> pod_host_ports(const Pod& pod, StringDict& dict) {
  return collect_host_ports(pod, [&](const std::string& s) { return dict.intern(s); });
}

std::vector<HostPortEntry> pod_host_ports_lookup(const Pod& pod, const StringDict& dict) {
  return collect_host_ports(pod, [&](const std::string& s) { return dict.find(s); });
}

// ---- Snapshot: helpers ----------------------------------------------------

uint64_t Snapshot::fresh_structure_version() {
  // Process-wide, so two snapshots (or one rebuilt in place) never share a
  // version: a device mirror keyed on it cannot mistake one for the other.
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

void Snapshot::structural_change() {
  identity_.version = fresh_structure_version();
  identity_.log.clear();
  // Nodes and dense columns may have moved: the per-domain sums follow.
  for (DomainSums& d : domain_sums_) recount_domain_sums(d);
  rebuild_devices();
  rebuild_device_groups();
}

// ---- Snapshot: devices ------------------------------------------------------

namespace {
// A device's units: the node's published total split evenly, or the default
// when the node publishes none.
int32_t units_per_device(int64_t count, int64_t total) {
  if (count <= 0 || total <= 0) return kDefaultDeviceUnits;
  // At least one unit: a device of 0 units would take any number of
  // whole-device pods (and divide by zero in the policies).
  return static_cast<int32_t>(std::clamp<int64_t>(total / count, 1, kMaxDeviceUnits));
}
}  // namespace

void Snapshot::configure_devices(const DeviceModel& model) {
  // Malformed annotations of the pods already here fail now, before
  // anything changes.
  for (uint32_t id = 0; id < pods_.size(); ++id) {
    if (pod_slot_[id] == kNoPod) continue;
    pod_device_demand(pods_[id], model);
    pod_device_indices(pods_[id], model);
  }
  device_model_ = model;
  structural_change();
}

std::vector<std::string> Snapshot::take_device_warnings() {
  std::vector<std::string> out;
  out.swap(device_warnings_);
  return out;
}

Snapshot::DeviceCharges Snapshot::device_charges(const Pod& pod, uint32_t node, bool warn) {
  DeviceCharges out;
  if (!device_model_) return out;
  const std::vector<int32_t> indices = pod_device_indices(pod, *device_model_);
  const DeviceDemand demand = pod_device_demand(pod, *device_model_);
  out.class_bit = device_class_bit(demand.count, demand.milli,
                                   device_count(node) > 0 ? device_units(node, 0) : kDefaultDeviceUnits);
  if (indices.empty()) return out;
  const std::string& annotation = device_model_->index_annotation;
  if (!demand.any()) {
    if (warn)
      device_warnings_.push_back("pod " + quote_for_message(pod.key()) + " on node " +
                                 quote_for_message(node_names_[node]) + " lists devices in " + annotation +
                                 " but asks for none; it holds none");
    return out;
  }
  if (warn && indices.size() != static_cast<size_t>(demand.count))
    device_warnings_.push_back("pod " + quote_for_message(pod.key()) + " on node " +
                               quote_for_message(node_names_[node]) + " asks for " + std::to_string(demand.count) +
                               " device(s) but " + annotation + " lists " + std::to_string(indices.size()) +
                               "; it holds the listed ones");
  const uint32_t have = device_count(node);
  for (int32_t i : indices) {
    const auto idx = static_cast<uint32_t>(i);
    if (idx >= have) {
      if (warn)
        device_warnings_.push_back("pod " + quote_for_message(pod.key()) + " on node " +
                                   quote_for_message(node_names_[node]) + " holds device " + std::to_string(i) + " (" +
                                   annotation + ") but the node has " + std::to_string(have) + "; left out");
      continue;
    }
    const int32_t units = demand.milli == kWholeDevice ? device_units(node, idx) : demand.milli;
    out.held.push_back(DeviceCharge{idx, units});
  }
  return out;
}

void Snapshot::apply_device_charges(uint32_t node, const DeviceCharges& charges, int32_t sign) {
  // Nothing to charge (no device model: the build places pods before the
  // device columns exist, so they must not be read).
  if (charges.held.empty() && charges.class_bit == 0) return;
  const uint32_t first = device_offsets_[node];
  for (const DeviceCharge& c : charges.held) {
    int64_t& free = device_free_[first + c.index];
    free -= int64_t(sign) * c.units;
    amount_bounds_.overdrawn = amount_bounds_.overdrawn || free < 0;
  }
  if (charges.class_bit == 0) return;
  auto& counts = class_counts_[node];
  auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == charges.class_bit; });
  if (it == counts.end()) it = counts.insert(counts.end(), {charges.class_bit, 0});
  it->second += sign;
  if (it->second == 0) counts.erase(it);
  uint64_t mask = 0;
  for (const auto& c : counts) mask |= c.first;
  device_pod_classes_[node] = mask;
}

bool Snapshot::device_shape_changed(uint32_t n) const {
  const int32_t count_r = resource_index(device_model_->count_resource);
  const int32_t milli_r = resource_index(device_model_->milli_resource);
  const int64_t count = count_r < 0 ? 0 : allocatable_[static_cast<size_t>(count_r) * num_nodes_ + n];
  const int64_t total = milli_r < 0 ? 0 : allocatable_[static_cast<size_t>(milli_r) * num_nodes_ + n];
  const uint32_t have = device_count(n);
  if (std::clamp<int64_t>(count, 0, kMaxDevicesPerNode) != static_cast<int64_t>(have)) return true;
  return have > 0 && device_units(n, 0) != units_per_device(count, total);
}

void Snapshot::rebuild_devices() {
  const uint32_t n = num_nodes_;
  device_warnings_.clear();  // what this layout finds; the previous ones were about an older state
  device_offsets_.assign(static_cast<size_t>(n) + 1, 0);
  device_units_.clear();
  device_free_.clear();
  device_pod_classes_.assign(n, 0);
  class_counts_.assign(n, {});
  pod_device_charges_.assign(pods_.size(), DeviceCharges{});
  // The device bounds counted afresh (the cpu bound is the node writes').
  amount_bounds_.node_units = amount_bounds_.device_units = 0;
  amount_bounds_.overdrawn = false;
  if (!device_model_) return;
  const int32_t count_r = resource_index(device_model_->count_resource);
  const int32_t milli_r = resource_index(device_model_->milli_resource);
  for (uint32_t i = 0; i < n; ++i) {
    const int64_t published = count_r < 0 ? 0 : allocatable_[static_cast<size_t>(count_r) * n + i];
    const int64_t total = milli_r < 0 ? 0 : allocatable_[static_cast<size_t>(milli_r) * n + i];
    const int32_t units = units_per_device(published, total);
    const int64_t count = std::clamp<int64_t>(published, 0, kMaxDevicesPerNode);
    if (published > count)
      device_warnings_.push_back("node " + quote_for_message(node_names_[i]) + " has " + std::to_string(published) +
                                 " " + device_model_->count_resource + "; only the first " +
                                 std::to_string(kMaxDevicesPerNode) + " are used");
    device_offsets_[i + 1] = device_offsets_[i] + static_cast<uint32_t>(count);
    device_units_.insert(device_units_.end(), static_cast<size_t>(count), units);
    if (count > 0) {
      amount_bounds_.device_units = std::max<int64_t>(amount_bounds_.device_units, units);
      amount_bounds_.node_units = std::max(amount_bounds_.node_units, count * units);
    }
  }
  device_free_.assign(device_units_.begin(), device_units_.end());
  for (uint32_t id = 0; id < pods_.size(); ++id) {
    if (pod_slot_[id] == kNoPod) continue;
    const uint32_t node = pod_node(id);
    pod_device_charges_[id] = device_charges(pods_[id], node, true);
    apply_device_charges(node, pod_device_charges_[id], +1);
  }
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t d = 0; d < device_count(i); ++d)
      if (device_free(i, d) < 0)
        device_warnings_.push_back("node " + quote_for_message(node_names_[i]) + ": the pods on device " +
                                   std::to_string(d) + " hold " +
                                   std::to_string(device_units(i, d) - device_free(i, d)) + " of its " +
                                   std::to_string(device_units(i, d)) + " units; it takes no more pods");
}

// ---- Snapshot: shared device groups --------------------------------------------

namespace {
std::string quote(std::string_view s) { return quote_for_message(s); }

int popcount64(uint64_t x) {
  int n = 0;
  for (; x; x &= x - 1) ++n;
  return n;
}
}  // namespace

void Snapshot::check_group_annotations(const Pod& pod) const {
  if (!group_model_) return;
  pod_device_group(pod, *group_model_);
  pod_group_devices(pod, *group_model_);
}

void Snapshot::configure_device_groups(std::vector<SharedDeviceGroup> groups, const DeviceGroupModel& model) {
  for (size_t i = 0; i < groups.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (groups[i].name == groups[j].name)
        throw InputError(groups[i].origin + ": SharedDeviceGroup " + quote(groups[i].name) + " is also " +
                         groups[j].origin);
  // Malformed annotations of the pods already here fail now, before
  // anything changes.
  for (uint32_t id = 0; id < pods_.size(); ++id) {
    if (pod_slot_[id] == kNoPod) continue;
    pod_device_group(pods_[id], model);
    pod_group_devices(pods_[id], model);
  }
  group_model_ = model;
  groups_ = std::move(groups);
  status_superseded_.assign(groups_.size(), 0);
  index_device_groups();
  structural_change();
}

void Snapshot::add_device_group(SharedDeviceGroup group) {
  if (!group_model_) throw Error("add_device_group: configure_device_groups first");
  if (device_group_index(group.name) >= 0)
    throw InputError(group.origin + ": SharedDeviceGroup " + quote(group.name) + " exists already");
  groups_.push_back(std::move(group));
  status_superseded_.push_back(0);
  index_device_groups();
  structural_change();
}

bool Snapshot::remove_device_group(std::string_view name) {
  const int32_t g = device_group_index(name);
  if (g < 0) return false;
  groups_.erase(groups_.begin() + g);
  status_superseded_.erase(status_superseded_.begin() + g);
  index_device_groups();
  structural_change();
  return true;
}

// Sorted by name, then index: a lookup finds the first group of a name, as
// a scan of groups_ would (names are unique once loaded).
void Snapshot::index_device_groups() {
  group_by_name_.clear();
  group_by_name_.reserve(groups_.size());
  for (uint32_t g = 0; g < groups_.size(); ++g) group_by_name_.emplace_back(groups_[g].name, g);
  std::sort(group_by_name_.begin(), group_by_name_.end());
}

int32_t Snapshot::device_group_index(std::string_view name) const {
  const auto it = std::lower_bound(group_by_name_.begin(), group_by_name_.end(), name,
                                   [](const std::pair<std::string, uint32_t>& e, std::string_view n) {
                                     return std::string_view(e.first) < n;
                                   });
  return it != group_by_name_.end() && it->first == name ? static_cast<int32_t>(it->second) : -1;
}

int32_t Snapshot::group_device_row(std::string_view resource) const {
  const auto it = std::lower_bound(group_types_.begin(), group_types_.end(), resource);
  return it != group_types_.end() && *it == resource ? static_cast<int32_t>(it - group_types_.begin()) : -1;
}

int32_t Snapshot::group_node_devices(uint32_t row, uint32_t node) const {
  const int32_t r = resource_index(group_types_[row]);
  if (r < 0) return 0;
  return static_cast<int32_t>(
      std::clamp<int64_t>(allocatable_[static_cast<size_t>(r) * num_nodes_ + node], 0, kMaxDevicesPerNode));
}

std::vector<int32_t> Snapshot::group_free_device_ids(uint32_t node, uint32_t row) const {
  std::vector<int32_t> out;
  const uint64_t held = group_held_[static_cast<size_t>(row) * num_nodes_ + node];
  const int32_t have = group_node_devices(row, node);
  for (int32_t d = 0; d < have; ++d)
    if (!(held >> d & 1)) out.push_back(d);
  return out;
}

void Snapshot::bind_device_group(uint32_t g, uint32_t node, const GroupDevices& devices, const std::string& who) {
  GroupBinding& b = bindings_[g];
  const SharedDeviceGroup& group = groups_[g];
  const std::string where = "SharedDeviceGroup " + quote(group.name) + " on node " + quote(node_names_[node]);
  b.node = static_cast<int32_t>(node);
  b.devices.clear();
  for (const auto& [resource, count] : group.resources) {
    const auto row = static_cast<uint32_t>(group_device_row(resource));
    const size_t at = static_cast<size_t>(row) * num_nodes_ + node;
    const int32_t have = group_node_devices(row, node);
    std::vector<int32_t> kept;
    const auto listed = devices.find(resource);
    if (listed == devices.end()) {
      device_warnings_.push_back(where + " (" + who + "): no " + resource + " devices are listed; it holds none");
    } else {
      for (int32_t d : listed->second) {
        if (d >= have) {
          device_warnings_.push_back(where + " (" + who + "): " + resource + " device " + std::to_string(d) +
                                     " is not on the node (it has " + std::to_string(have) + "); left out");
        } else if (group_held_[at] >> d & 1) {
          device_warnings_.push_back(where + " (" + who + "): " + resource + " device " + std::to_string(d) +
                                     " is held by another group; left out");
        } else {
          group_held_[at] |= uint64_t(1) << d;
          kept.push_back(d);
        }
      }
      if (listed->second.size() != static_cast<size_t>(count))
        device_warnings_.push_back(where + " (" + who + "): lists " + std::to_string(listed->second.size()) + " " +
                                   resource + " device(s) for a group of " + std::to_string(count));
    }
    group_free_[at] = have - popcount64(group_held_[at]);
    b.devices[resource] = std::move(kept);
  }
}

void Snapshot::release_device_group(uint32_t g) {
  GroupBinding& b = bindings_[g];
  if (b.node < 0) return;
  // From now on the group's status is history: a later layout must not
  // bind it there again.
  status_superseded_[g] = 1;
  const auto node = static_cast<uint32_t>(b.node);
  for (const auto& [resource, list] : b.devices) {
    const auto row = static_cast<uint32_t>(group_device_row(resource));
    const size_t at = static_cast<size_t>(row) * num_nodes_ + node;
    for (int32_t d : list) group_held_[at] &= ~(uint64_t(1) << d);
    group_free_[at] = group_node_devices(row, node) - popcount64(group_held_[at]);
  }
  b = GroupBinding{};
  identity_.log.push_back(node);
}

void Snapshot::restore_device_group(uint32_t g, const GroupState& before) {
  GroupBinding& b = bindings_[g];
  if (b.node < 0 && before.binding.node >= 0 && before.binding.members == 0) {
    const auto node = static_cast<uint32_t>(before.binding.node);
    bind_device_group(g, node, before.binding.devices, "restored");
    identity_.log.push_back(node);
  }
  status_superseded_[g] = before.status_superseded ? 1 : 0;
}

void Snapshot::join_device_group(uint32_t id, uint32_t node) {
  if (pod_group_.size() <= id) pod_group_.resize(static_cast<size_t>(id) + 1, -1);
  pod_group_[id] = -1;
  if (!group_model_) return;
  const Pod& pod = pods_[id];
  const std::string name = pod_device_group(pod, *group_model_);
  if (name.empty()) return;
  const std::string who = "pod " + quote(pod.key());
  const int32_t g = device_group_index(name);
  if (g < 0) {
    device_warnings_.push_back(who + " on node " + quote(node_names_[node]) + " names SharedDeviceGroup " +
                               quote(name) + ", which does not exist; it holds no group devices");
    return;
  }
  GroupBinding& b = bindings_[static_cast<size_t>(g)];
  const GroupDevices listed = pod_group_devices(pod, *group_model_);
  if (b.node < 0) {
    if (listed.empty()) {
      device_warnings_.push_back(who + " on node " + quote(node_names_[node]) + " names SharedDeviceGroup " +
                                 quote(name) + " but lists no devices (" + group_model_->devices_annotation +
                                 "); the group stays unbound");
      return;
    }
    bind_device_group(static_cast<uint32_t>(g), node, listed, who);
  } else if (b.node != static_cast<int32_t>(node)) {
    device_warnings_.push_back(who + " runs on node " + quote(node_names_[node]) + " but SharedDeviceGroup " +
                               quote(name) + " is bound to node " + quote(node_names_[static_cast<size_t>(b.node)]) +
                               "; it is not counted as the group's");
    return;
  } else if (!listed.empty() && listed != b.devices) {
    device_warnings_.push_back(who + " lists " + format_group_devices(listed) + " but SharedDeviceGroup " +
                               quote(name) + " holds " + format_group_devices(b.devices) + "; the group's count");
  }
  ++b.members;
  pod_group_[id] = g;
}

void Snapshot::leave_device_group(uint32_t id) {
  if (id >= pod_group_.size() || pod_group_[id] < 0) return;
  const auto g = static_cast<uint32_t>(pod_group_[id]);
  pod_group_[id] = -1;
  if (--bindings_[g].members == 0) release_device_group(g);
}

void Snapshot::rebuild_device_groups() {
  group_types_.clear();
  for (const SharedDeviceGroup& g : groups_)
    for (const auto& r : g.resources) group_types_.push_back(r.first);
  std::sort(group_types_.begin(), group_types_.end());
  group_types_.erase(std::unique(group_types_.begin(), group_types_.end()), group_types_.end());
  const size_t cells = group_types_.size() * num_nodes_;
  group_held_.assign(cells, 0);
  group_free_.assign(cells, 0);
  group_type_max_.assign(group_types_.size(), 0);
  for (uint32_t row = 0; row < group_types_.size(); ++row)
    for (uint32_t n = 0; n < num_nodes_; ++n) {
      group_free_[static_cast<size_t>(row) * num_nodes_ + n] = group_node_devices(row, n);
      group_type_max_[row] = std::max(group_type_max_[row], group_node_devices(row, n));
    }
  bindings_.assign(groups_.size(), GroupBinding{});
  pod_group_.assign(pods_.size(), -1);
  if (!group_model_) return;
  // The controller's record first, then the pods, in id order: a pod whose
  // group its status binds elsewhere is the one out of place.
  for (uint32_t g = 0; g < groups_.size(); ++g) {
    const SharedDeviceGroup& group = groups_[g];
    if (group.bound_node.empty() || status_superseded_[g]) continue;
    const int32_t node = node_index(group.bound_node);
    if (node < 0) {
      device_warnings_.push_back("SharedDeviceGroup " + quote(group.name) + " (" + group.origin +
                                 "): status.nodeName " + quote(group.bound_node) +
                                 " is not in the cluster; the group is taken as unbound");
      continue;
    }
    bind_device_group(g, static_cast<uint32_t>(node), group.bound_devices, "its status");
  }
  for (uint32_t id = 0; id < pods_.size(); ++id)
    if (pod_slot_[id] != kNoPod) join_device_group(id, pod_node(id));
}

namespace {
constexpr uint32_t kPortSlack = 4;          // free host-port slots kept per node
constexpr uint32_t kMinPodSlack = 4;        // free pod slots kept per node, at least
constexpr uint32_t kMinPodLabelSlack = 16;  // free pod-label entries kept per node, at least
// How many times relayout_pods may double both of the above (see there).
constexpr uint32_t kMaxPodSlackDoublings = 2;
constexpr HostPortEntry kNoPort{kNoId, kNoId, 0};

// Room for `need` entries and some more: a quarter more, at least
// `min_slack`, so a node that keeps growing is laid out again rarely.
uint32_t with_slack(uint32_t need, uint32_t min_slack) { return need + std::max(min_slack, need / 4); }

uint8_t effect_code(const std::string& e) {
  if (e == "NoSchedule") return static_cast<uint8_t>(TaintEffect::NoSchedule);
  if (e == "PreferNoSchedule") return static_cast<uint8_t>(TaintEffect::PreferNoSchedule);
  return static_cast<uint8_t>(TaintEffect::NoExecute);
}

// Upstream's zone key of a node: region and zone joined by ":\x00:", empty
// when both are; the deprecated beta labels win over the GA ones.
std::string zone_key(const StringMap& labels) {
  auto get = [&](const char* beta, const char* ga) {
    auto it = labels.find(beta);
    if (it == labels.end()) it = labels.find(ga);
    return it == labels.end() ? std::string() : it->second;
  };
  const std::string region = get("failure-domain.beta.kubernetes.io/region", "topology.kubernetes.io/region");
  const std::string zone = get("failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone");
  if (region.empty() && zone.empty()) return std::string();
  return region + std::string(":\x00:", 3) + zone;
}

uint64_t pod_key_hash(std::string_view namespace_name, std::string_view name) {
  const std::hash<std::string_view> h;
  return mix64(h(namespace_name)) ^ h(name);
}

// Gives the range [first, first + old_count) of `v` the size `new_count`,
// adding `fill` entries or dropping entries at its end.
template <class T>
void resize_range(std::vector<T>& v, size_t first, size_t old_count, size_t new_count, const T& fill) {
  const auto end = v.begin() + static_cast<std::ptrdiff_t>(first + old_count);
  if (new_count > old_count)
    v.insert(end, new_count - old_count, fill);
  else
    v.erase(v.begin() + static_cast<std::ptrdiff_t>(first + new_count), end);
}

// Moves the ranges of the nodes after `node` by `delta` entries.
void shift_offsets_after(std::vector<uint32_t>& offsets, uint32_t node, int64_t delta) {
  for (size_t i = node + 1; i < offsets.size(); ++i) offsets[i] = static_cast<uint32_t>(offsets[i] + delta);
}

// Removes node `node`'s range from the compressed-row arrays and its entry
// from `offsets`.
template <class... Arrays>
void erase_node_range(std::vector<uint32_t>& offsets, uint32_t node, Arrays&... arrays) {
  const uint32_t first = offsets[node], count = offsets[node + 1] - first;
  (resize_range(arrays, first, count, 0, typename Arrays::value_type{}), ...);
  shift_offsets_after(offsets, node, -static_cast<int64_t>(count));
  offsets.erase(offsets.begin() + node + 1);
}

// Column-major [row * n + node] arrays with `rows` rows: a node appended at
// the end of every row, or one removed from every row.
template <class T>
void append_node_to_rows(std::vector<T>& v, size_t rows, size_t old_n, const T& fill) {
  std::vector<T> out;
  out.reserve(rows * (old_n + 1));
  for (size_t r = 0; r < rows; ++r) {
    out.insert(out.end(), v.begin() + static_cast<std::ptrdiff_t>(r * old_n),
               v.begin() + static_cast<std::ptrdiff_t>((r + 1) * old_n));
    out.push_back(fill);
  }
  v = std::move(out);
}

template <class T>
void erase_node_from_rows(std::vector<T>& v, size_t rows, size_t old_n, size_t node) {
  size_t kept = 0;
  for (size_t i = 0; i < rows * old_n; ++i)
    if (i % old_n != node) v[kept++] = v[i];
  v.resize(kept);
}
}  // namespace

// ---- Snapshot: dictionaries and derived columns ---------------------------

int32_t Snapshot::resource_index(std::string_view name) const {
  // At most 63 names (NodeResourcesFit::kMaxResources), cpu and memory
  // first: a scan, without building a key string as the map's find would.
  for (size_t r = 0; r < resource_names_.size(); ++r)
    if (resource_names_[r] == name) return static_cast<int32_t>(r);
  return -1;
}

int32_t Snapshot::intern_resource(std::string_view name) {
  const int32_t existing = resource_index(name);
  if (existing >= 0) return existing;
  const auto id = static_cast<int32_t>(resource_names_.size());
  resource_names_.emplace_back(name);
  resource_ids_.emplace(resource_names_.back(), id);
  allocatable_.resize(allocatable_.size() + num_nodes_, 0);
  allocatable_inverse_.resize(allocatable_inverse_.size() + num_nodes_, 0.0);
  requested_.resize(requested_.size() + num_nodes_, 0);
  structural_change();
  return id;
}

int32_t Snapshot::dense_label_slot(int32_t key) const {
  if (key == kNoId) return -1;
  for (size_t i = 0; i < dense_label_keys_.size(); ++i)
    if (dense_label_keys_[i] == key) return static_cast<int32_t>(i);
  return -1;
}

void Snapshot::build_dense_labels() {
  // The keys most nodes carry, most common first (ties: lower id), those on
  // at least half of the nodes, at most kMaxDenseLabels.
  std::unordered_map<int32_t, uint32_t> count;
  for (int32_t k : label_keys_) ++count[k];
  std::vector<std::pair<uint32_t, int32_t>> keys;
  for (const auto& [k, c] : count)
    if (2 * static_cast<uint64_t>(c) >= num_nodes_) keys.emplace_back(c, k);
  std::sort(keys.begin(), keys.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  if (keys.size() > kMaxDenseLabels) keys.resize(kMaxDenseLabels);
  dense_label_keys_.clear();
  for (const auto& kc : keys) dense_label_keys_.push_back(kc.second);
  dense_labels_.assign(dense_label_keys_.size() * num_nodes_, kNoId);
  for (uint32_t n = 0; n < num_nodes_; ++n)
    for (uint32_t i = label_offsets_[n]; i < label_offsets_[n + 1]; ++i) {
      const int32_t slot = dense_label_slot(label_keys_[i]);
      if (slot >= 0) dense_labels_[static_cast<size_t>(slot) * num_nodes_ + n] = label_values_[i];
    }
  dense_label_values_.assign(dense_label_keys_.size(), {});
  dense_label_missing_.assign(dense_label_keys_.size(), 0);
  dense_label_ranks_.assign(dense_labels_.size(), -1);
  for (size_t slot = 0; slot < dense_label_keys_.size(); ++slot) {
    const auto first = dense_labels_.begin() + static_cast<std::ptrdiff_t>(slot * num_nodes_);
    std::vector<int32_t>& values = dense_label_values_[slot];
    for (auto it = first; it != first + num_nodes_; ++it)
      if (*it != kNoId)
        values.push_back(*it);
      else
        ++dense_label_missing_[slot];
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    for (uint32_t n = 0; n < num_nodes_; ++n) {
      const size_t at = slot * num_nodes_ + n;
      if (dense_labels_[at] != kNoId)
        dense_label_ranks_[at] = static_cast<int32_t>(
            std::lower_bound(values.begin(), values.end(), dense_labels_[at]) - values.begin());
    }
  }
  // The nodes by rank: a counting sort, stable, so ascending within a rank.
  dense_rank_nodes_.assign(dense_labels_.size(), 0);
  dense_rank_offsets_.assign(dense_label_keys_.size(), {});
  for (size_t slot = 0; slot < dense_label_keys_.size(); ++slot) {
    std::vector<uint32_t>& at = dense_rank_offsets_[slot];
    at.assign(dense_label_values_[slot].size() + 1, 0);
    const int32_t* ranks = dense_label_ranks_.data() + slot * num_nodes_;
    for (uint32_t n = 0; n < num_nodes_; ++n)
      if (ranks[n] >= 0) ++at[static_cast<size_t>(ranks[n]) + 1];
    for (size_t r = 1; r < at.size(); ++r) at[r] += at[r - 1];
    std::vector<uint32_t> next(at.begin(), at.end() - 1);
    uint32_t* nodes = dense_rank_nodes_.data() + slot * num_nodes_;
    for (uint32_t n = 0; n < num_nodes_; ++n)
      if (ranks[n] >= 0) nodes[next[static_cast<size_t>(ranks[n])]++] = n;
  }
  // Ranks moved: the existing pods' term tables follow. (update_node moves
  // a relabelled node's pods' terms around this call.)
  rerank_affinity_terms();
}

int32_t Snapshot::dense_label_rank_of(int32_t slot, int32_t value) const {
  const std::vector<int32_t>& values = dense_label_values_[static_cast<size_t>(slot)];
  const auto it = std::lower_bound(values.begin(), values.end(), value);
  return it != values.end() && *it == value ? static_cast<int32_t>(it - values.begin()) : -1;
}

void Snapshot::rank_images_by_popularity() {
  // Renumber images by the number of nodes listing them (most first, ties in
  // the current order: first seen at build), so the popular ones, the only
  // ones that can reach ImageLocality's threshold, get ids below 64 and a bit
  // in each node's mask. Images no node lists any more are dropped (as
  // upstream forgets an image state with its last node; its size is taken
  // afresh when a node lists it again either way), so node churn that pulls
  // new tags keeps the dictionary as large as what the nodes list.
  std::vector<int32_t> by_rank;
  by_rank.reserve(image_size_.size());
  for (size_t i = 0; i < image_size_.size(); ++i)
    if (image_num_nodes_[i] > 0) by_rank.push_back(static_cast<int32_t>(i));
  std::stable_sort(by_rank.begin(), by_rank.end(), [&](int32_t a, int32_t b) {
    return image_num_nodes_[static_cast<size_t>(a)] > image_num_nodes_[static_cast<size_t>(b)];
  });
  const size_t count = by_rank.size();
  std::vector<int32_t> rank_of(image_size_.size(), kNoId);
  StringDict ranked;
  std::vector<int64_t> size(count);
  std::vector<int32_t> nodes(count);
  for (size_t r = 0; r < count; ++r) {
    const auto old = static_cast<size_t>(by_rank[r]);
    rank_of[old] = static_cast<int32_t>(r);
    ranked.intern(images_.str(static_cast<int32_t>(old)));
    size[r] = image_size_[old];
    nodes[r] = image_num_nodes_[old];
  }
  images_ = std::move(ranked);
  image_size_ = std::move(size);
  image_num_nodes_ = std::move(nodes);
  image_masks_.assign(num_nodes_, 0);
  for (uint32_t n = 0; n < num_nodes_; ++n) {
    auto first = image_ids_.begin() + image_offsets_[n], last = image_ids_.begin() + image_offsets_[n + 1];
    for (auto it = first; it != last; ++it) {
      *it = rank_of[static_cast<size_t>(*it)];
      if (*it < 64) image_masks_[n] |= uint64_t(1) << *it;
    }
    std::sort(first, last);
  }
}

int32_t Snapshot::image_id(std::string_view normalized) const { return images_.find(normalized); }

int32_t Snapshot::node_index(std::string_view name) const {
  auto it = node_ids_.find(std::string(name));
  return it == node_ids_.end() ? -1 : static_cast<int32_t>(it->second);
}

uint32_t Snapshot::find_pod(std::string_view namespace_name, std::string_view name) const {
  const auto head = pod_key_heads_.find(pod_key_hash(namespace_name, name));
  if (head == pod_key_heads_.end()) return kNoPod;
  for (uint32_t id = head->second; id != kNoPod; id = pod_key_next_[id])
    if (pods_[id].namespace_name == namespace_name && pods_[id].name == name) return id;
  return kNoPod;
}

// ---- Snapshot: nodes --------------------------------------------------------

// Writes node `n`'s own attributes (name id, unschedulable, allocatable,
// labels, taints, images) over what the node had; its pods' accounting is
// left alone. The compressed-row ranges of the nodes after `n` move when
// the lengths change (at the end, as during the build, nothing moves).
// Image node counts follow; ranking and dense columns are the caller's.
void Snapshot::set_allocatable(uint32_t r, uint32_t n, int64_t amount) {
  const size_t at = static_cast<size_t>(r) * num_nodes_ + n;
  allocatable_[at] = amount;
  allocatable_inverse_[at] = amount > 0 ? 1.0 / static_cast<double>(amount) : 0.0;
}

void Snapshot::set_unschedulable(uint32_t n, bool cordoned) {
  cordoned_nodes_ = cordoned_nodes_ - unschedulable_[n] + (cordoned ? 1 : 0);
  unschedulable_[n] = cordoned ? 1 : 0;
}

void Snapshot::write_node(uint32_t n, const Node& node) {
  node_name_id_[n] = strings_.intern(node.name);
  set_unschedulable(n, node.unschedulable);
  allowed_pods_[n] = 0;
  for (uint32_t r = 0; r < num_resources(); ++r) set_allocatable(r, n, 0);
  for (const auto& [name, amount] : node.allocatable) {
    if (name == "pods") {
      allowed_pods_[n] = amount;
    } else {
      const int32_t r = intern_resource(name);
      set_allocatable(static_cast<uint32_t>(r), n, amount);
      wild_quantities_ = wild_quantities_ || !tame_quantity(amount);
      if (r == kCpu) amount_bounds_.cpu_allocatable = std::max(amount_bounds_.cpu_allocatable, amount);
    }
  }

  std::vector<std::pair<int32_t, int32_t>> labels;
  labels.reserve(node.labels.size());
  for (const auto& [k, v] : node.labels) labels.emplace_back(strings_.intern(k), strings_.intern(v));
  std::sort(labels.begin(), labels.end());
  {
    const uint32_t first = label_offsets_[n], old = label_offsets_[n + 1] - first;
    resize_range(label_keys_, first, old, labels.size(), kNoId);
    resize_range(label_values_, first, old, labels.size(), kNoId);
    for (size_t i = 0; i < labels.size(); ++i) {
      label_keys_[first + i] = labels[i].first;
      label_values_[first + i] = labels[i].second;
    }
    shift_offsets_after(label_offsets_, n, static_cast<int64_t>(labels.size()) - old);
  }
  {
    const uint32_t first = taint_offsets_[n], old = taint_offsets_[n + 1] - first;
    const size_t count = node.taints.size();
    resize_range(taint_keys_, first, old, count, kNoId);
    resize_range(taint_values_, first, old, count, kNoId);
    resize_range(taint_effects_, first, old, count, uint8_t(0));
    for (size_t i = 0; i < count; ++i) {
      const Taint& t = node.taints[i];
      taint_keys_[first + i] = strings_.intern(t.key);
      taint_values_[first + i] = strings_.intern(t.value);
      taint_effects_[first + i] = effect_code(t.effect);
    }
    shift_offsets_after(taint_offsets_, n, static_cast<int64_t>(count) - old);
  }
  {
    // Every name of every image. An image's size is the one given by the
    // first node to list it while no other node does (as upstream's image
    // states: created with the first node, deleted with the last).
    const uint32_t first = image_offsets_[n], old = image_offsets_[n + 1] - first;
    for (uint32_t i = first; i < first + old; ++i) --image_num_nodes_[static_cast<size_t>(image_ids_[i])];
    std::vector<std::pair<int32_t, int64_t>> named;  // (id, size) in listing order
    for (const auto& img : node.images)
      for (const auto& name : img.names) {
        const int32_t id = images_.intern(name);
        if (static_cast<size_t>(id) == image_size_.size()) {
          image_size_.push_back(0);
          image_num_nodes_.push_back(0);
        }
        named.emplace_back(id, img.size_bytes);
      }
    std::stable_sort(named.begin(), named.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    named.erase(
        std::unique(named.begin(), named.end(), [](const auto& a, const auto& b) { return a.first == b.first; }),
        named.end());
    resize_range(image_ids_, first, old, named.size(), kNoId);
    for (size_t i = 0; i < named.size(); ++i) {
      const auto id = static_cast<size_t>(named[i].first);
      if (image_num_nodes_[id] == 0) image_size_[id] = named[i].second;
      ++image_num_nodes_[id];
      image_ids_[first + i] = named[i].first;
    }
    shift_offsets_after(image_offsets_, n, static_cast<int64_t>(named.size()) - old);
  }
}

void Snapshot::tree_add(uint32_t n, const std::string& zone) {
  for (auto& z : zones_)
    if (z.key == zone) {
      z.nodes.push_back(n);
      return;
    }
  zones_.push_back(Zone{zone, {n}});
}

void Snapshot::tree_remove(uint32_t n, const std::string& zone) {
  for (size_t i = 0; i < zones_.size(); ++i) {
    if (zones_[i].key != zone) continue;
    auto& nodes = zones_[i].nodes;
    nodes.erase(std::find(nodes.begin(), nodes.end(), n));
    if (nodes.empty()) zones_.erase(zones_.begin() + static_cast<std::ptrdiff_t>(i));
    return;
  }
}

void Snapshot::rebuild_tree_order() {
  tree_order_.clear();
  tree_order_.reserve(num_nodes_);
  for (size_t round = 0; tree_order_.size() < num_nodes_; ++round)
    for (const auto& z : zones_)
      if (round < z.nodes.size()) tree_order_.push_back(z.nodes[round]);
}

Snapshot Snapshot::build(const std::vector<Node>& nodes, const std::vector<Pod>& running_pods) {
  return build(nodes, std::vector<Pod>(running_pods));
}

Snapshot Snapshot::build(const std::vector<Node>& nodes, std::vector<Pod>&& running_pods) {
  Snapshot s;
  const auto n = static_cast<uint32_t>(nodes.size());
  s.num_nodes_ = n;
  for (const char* r : {"cpu", "memory", "ephemeral-storage"}) {
    s.resource_ids_.emplace(r, static_cast<int32_t>(s.resource_names_.size()));
    s.resource_names_.emplace_back(r);
  }
  s.strings_.intern("");
  // Resources: every name any node offers, in first-seen order.
  for (const auto& node : nodes)
    for (const auto& kv : node.allocatable)
      if (kv.first != "pods" && s.resource_index(kv.first) < 0) {
        s.resource_ids_.emplace(kv.first, static_cast<int32_t>(s.resource_names_.size()));
        s.resource_names_.push_back(kv.first);
      }
  const size_t R = s.resource_names_.size();
  s.allocatable_.assign(R * n, 0);
  s.allocatable_inverse_.assign(R * n, 0.0);
  s.requested_.assign(R * n, 0);
  s.nonzero_requested_.assign(2 * static_cast<size_t>(n), 0);
  s.allowed_pods_.assign(n, 0);
  s.pod_count_.assign(n, 0);
  s.unschedulable_.assign(n, 0);
  s.cordoned_nodes_ = 0;
  s.node_name_id_.assign(n, kNoId);
  s.label_offsets_.assign(1, 0);
  s.taint_offsets_.assign(1, 0);
  s.image_offsets_.assign(1, 0);

  std::unordered_map<std::string, size_t> zone_ids;
  for (uint32_t i = 0; i < n; ++i) {
    const Node& node = nodes[i];
    s.node_names_.push_back(node.name);
    s.node_ids_.emplace(node.name, i);
    // Node i's ranges start empty at the end: writing them moves nothing.
    s.label_offsets_.push_back(s.label_offsets_.back());
    s.taint_offsets_.push_back(s.taint_offsets_.back());
    s.image_offsets_.push_back(s.image_offsets_.back());
    s.write_node(i, node);
    s.node_zone_keys_.push_back(zone_key(node.labels));
    const auto [it, fresh] = zone_ids.emplace(s.node_zone_keys_.back(), s.zones_.size());
    if (fresh) s.zones_.push_back(Zone{s.node_zone_keys_.back(), {}});
    s.zones_[it->second].nodes.push_back(i);
  }
  s.rebuild_tree_order();
  s.build_dense_labels();
  s.rank_images_by_popularity();
  s.any_ip_id_ = s.strings_.intern("0.0.0.0");
  s.strings_.intern("TCP");

  // Pods: encode and count per node first, so each slotted layout is built once.
  std::vector<EncodedPod> encoded(running_pods.size());
  std::vector<uint32_t> pod_node(running_pods.size());
  std::vector<uint32_t> slots(n, 0), labels(n, 0), ports(n, 0);
  for (size_t p = 0; p < running_pods.size(); ++p) {
    const int32_t node = s.node_index(running_pods[p].node_name);
    if (node < 0)
      throw InputError(running_pods[p].origin + ": pod " + quote_for_message(running_pods[p].key()) +
                       " is bound to unknown node " + quote_for_message(running_pods[p].node_name));
    pod_node[p] = static_cast<uint32_t>(node);
    encoded[p] = s.encode_pod(running_pods[p]);
    slots[pod_node[p]] += 1;
    labels[pod_node[p]] += static_cast<uint32_t>(encoded[p].labels.size());
    ports[pod_node[p]] += static_cast<uint32_t>(encoded[p].ports.size());
  }
  s.port_offsets_.assign(n + 1, 0);
  for (uint32_t i = 0; i < n; ++i) s.port_offsets_[i + 1] = s.port_offsets_[i] + ports[i] + kPortSlack;
  s.port_counts_.assign(n, 0);
  s.ports_.assign(s.port_offsets_[n], kNoPort);
  s.pod_offsets_.assign(1, 0);
  s.pod_label_regions_.assign(1, 0);
  for (uint32_t i = 0; i < n; ++i) {
    s.pod_offsets_.push_back(s.pod_offsets_.back() + with_slack(slots[i], kMinPodSlack));
    s.pod_label_regions_.push_back(s.pod_label_regions_.back() + with_slack(labels[i], kMinPodLabelSlack));
  }
  const uint32_t num_slots = s.pod_offsets_.back();
  s.pod_namespace_.assign(num_slots, kNoId);
  s.pod_node_.assign(num_slots, kNoId);
  s.pod_flags_.assign(num_slots, 0);
  s.pod_label_offsets_.assign(num_slots, 0);
  s.pod_label_counts_.assign(num_slots, 0);
  s.slot_pod_id_.assign(num_slots, kNoPod);
  s.pod_label_keys_.assign(s.pod_label_regions_.back(), kNoId);
  s.pod_label_values_.assign(s.pod_label_regions_.back(), kNoId);
  s.pod_key_heads_.reserve(running_pods.size());
  for (size_t p = 0; p < running_pods.size(); ++p)
    s.place_pod(std::move(running_pods[p]), pod_node[p], encoded[p], s.take_pod_id(), DeviceCharges{});

  s.structural_change();
  s.port_layout_version_ = s.pod_layout_version_ = s.identity_.version;
  return s;
}

uint32_t Snapshot::add_node(const Node& node) {
  if (node_index(node.name) >= 0)
    throw InputError("add_node: node " + quote_for_message(node.name) + " is already in the snapshot");
  // A default-constructed snapshot has no columns yet: start from an empty build.
  if (label_offsets_.empty()) {
    const size_t limit = sparse_term_row_limit_;  // a setting, not content: it survives the reset
    *this = build({}, {});
    sparse_term_row_limit_ = limit;
  }
  // New resource names first, while every column still has num_nodes_
  // rows: interning is structural, and its recount of the per-domain sums
  // must not read the dense columns of a half-added node.
  for (const auto& kv : node.allocatable)
    if (kv.first != "pods") intern_resource(kv.first);
  const uint32_t n = num_nodes_;
  append_node_to_rows(allocatable_, num_resources(), n, int64_t(0));
  append_node_to_rows(allocatable_inverse_, num_resources(), n, 0.0);
  append_node_to_rows(requested_, num_resources(), n, int64_t(0));
  append_node_to_rows(nonzero_requested_, 2, n, int64_t(0));
  append_node_to_rows(topology_counts_, matchers_.size(), n, int32_t(0));
  forget_least_counts();
  node_data_add_node(n);
  allowed_pods_.push_back(0);
  pod_count_.push_back(0);
  unschedulable_.push_back(0);
  node_name_id_.push_back(kNoId);
  image_masks_.push_back(0);
  port_counts_.push_back(0);
  num_nodes_ = n + 1;
  label_offsets_.push_back(label_offsets_.back());
  taint_offsets_.push_back(taint_offsets_.back());
  image_offsets_.push_back(image_offsets_.back());
  port_offsets_.push_back(port_offsets_.back() + kPortSlack);
  ports_.resize(port_offsets_.back(), kNoPort);
  pod_offsets_.push_back(pod_offsets_.back() + with_slack(0, kMinPodSlack));
  const uint32_t num_slots = pod_offsets_.back();
  pod_namespace_.resize(num_slots, kNoId);
  pod_node_.resize(num_slots, kNoId);
  pod_flags_.resize(num_slots, 0);
  pod_label_offsets_.resize(num_slots, 0);
  pod_label_counts_.resize(num_slots, 0);
  slot_pod_id_.resize(num_slots, kNoPod);
  pod_label_regions_.push_back(pod_label_regions_.back() + with_slack(0, kMinPodLabelSlack));
  pod_label_keys_.resize(pod_label_regions_.back(), kNoId);
  pod_label_values_.resize(pod_label_regions_.back(), kNoId);
  node_names_.push_back(node.name);
  node_ids_.emplace(node.name, n);
  write_node(n, node);
  node_zone_keys_.push_back(zone_key(node.labels));
  tree_add(n, node_zone_keys_.back());
  rebuild_tree_order();
  build_dense_labels();
  rank_images_by_popularity();
  structural_change();
  return n;
}

void Snapshot::update_node(const Node& node) {
  const int32_t found = node_index(node.name);
  if (found < 0) throw InputError("update_node: node " + quote_for_message(node.name) + " is not in the snapshot");
  const auto n = static_cast<uint32_t>(found);

  // Same labels, taints and images (compared as ids; a string the
  // dictionary lacks differs): rewrite the per-node numbers in place.
  bool same_lists = label_offsets_[n + 1] - label_offsets_[n] == node.labels.size() &&
                    taint_offsets_[n + 1] - taint_offsets_[n] == node.taints.size();
  if (same_lists) {
    std::vector<std::pair<int32_t, int32_t>> labels;
    for (const auto& [k, v] : node.labels) labels.emplace_back(strings_.find(k), strings_.find(v));
    std::sort(labels.begin(), labels.end());
    for (size_t i = 0; same_lists && i < labels.size(); ++i)
      same_lists = labels[i].first != kNoId && labels[i].second != kNoId &&
                   labels[i].first == label_keys_[label_offsets_[n] + i] &&
                   labels[i].second == label_values_[label_offsets_[n] + i];
    for (size_t i = 0; same_lists && i < node.taints.size(); ++i) {
      const Taint& t = node.taints[i];
      const uint32_t at = taint_offsets_[n] + static_cast<uint32_t>(i);
      same_lists = strings_.find(t.key) == taint_keys_[at] && strings_.find(t.value) == taint_values_[at] &&
                   taint_keys_[at] != kNoId && taint_values_[at] != kNoId &&
                   effect_code(t.effect) == taint_effects_[at];
    }
    std::vector<int32_t> images;
    for (const auto& img : node.images)
      for (const auto& name : img.names) images.push_back(images_.find(name));
    std::sort(images.begin(), images.end());
    images.erase(std::unique(images.begin(), images.end()), images.end());
    same_lists = same_lists && (images.empty() || images.front() != kNoId) &&
                 std::equal(images.begin(), images.end(), image_ids_.begin() + image_offsets_[n],
                            image_ids_.begin() + image_offsets_[n + 1]);
  }
  if (same_lists) {
    // New resource names first: interning is structural, and must not
    // lay the device columns out from a half-written allocatable row.
    for (const auto& kv : node.allocatable)
      if (kv.first != "pods") intern_resource(kv.first);
    const uint64_t version = structure_version();
    set_unschedulable(n, node.unschedulable);
    allowed_pods_[n] = 0;
    for (uint32_t r = 0; r < num_resources(); ++r) set_allocatable(r, n, 0);
    for (const auto& [name, amount] : node.allocatable) {
      if (name == "pods") {
        allowed_pods_[n] = amount;
      } else {
        const int32_t r = resource_index(name);  // interned above
        set_allocatable(static_cast<uint32_t>(r), n, amount);
        wild_quantities_ = wild_quantities_ || !tame_quantity(amount);
        if (r == kCpu) amount_bounds_.cpu_allocatable = std::max(amount_bounds_.cpu_allocatable, amount);
      }
    }
    // A change of the node's devices lays the device columns out again,
    // and so does a change of the devices groups take from.
    bool group_devices_changed = false;
    for (uint32_t row = 0; row < group_types_.size() && !group_devices_changed; ++row)
      group_devices_changed = group_node_devices(row, n) - popcount64(group_held_[static_cast<size_t>(row) * num_nodes_ + n]) !=
                              group_free_[static_cast<size_t>(row) * num_nodes_ + n];
    if ((device_model_ && device_shape_changed(n)) || group_devices_changed) structural_change();
    if (structure_version() == version) identity_.log.push_back(n);
    return;
  }

  // The node's pods' affinity terms leave its old domains now and join
  // the new ones after the dense columns are rebuilt.
  for (uint32_t sl = pod_offsets_[n], e = sl + static_cast<uint32_t>(pod_count_[n]); sl < e; ++sl)
    index_affinity_terms(pods_[slot_pod_id_[sl]], n, -1);
  const std::string old_zone = node_zone_keys_[n];
  write_node(n, node);
  node_zone_keys_[n] = zone_key(node.labels);
  if (node_zone_keys_[n] != old_zone) {
    // As upstream's node tree: out of the old zone, to the end of the new one.
    tree_remove(n, old_zone);
    tree_add(n, node_zone_keys_[n]);
    rebuild_tree_order();
  }
  build_dense_labels();
  rank_images_by_popularity();
  for (uint32_t sl = pod_offsets_[n], e = sl + static_cast<uint32_t>(pod_count_[n]); sl < e; ++sl)
    index_affinity_terms(pods_[slot_pod_id_[sl]], n, +1);
  structural_change();
}

std::vector<Pod> Snapshot::remove_node(std::string_view name) {
  const int32_t found = node_index(name);
  if (found < 0) throw InputError("remove_node: node " + quote_for_message(name) + " is not in the snapshot");
  const auto n = static_cast<uint32_t>(found);
  const uint32_t old_n = num_nodes_;

  // The node's pods go with it: their effects are the node's rows, dropped below.
  std::vector<Pod> dropped;
  dropped.reserve(static_cast<size_t>(pod_count_[n]));
  for (uint32_t s = pod_offsets_[n], e = s + static_cast<uint32_t>(pod_count_[n]); s < e; ++s) {
    const uint32_t id = slot_pod_id_[s];
    unlink_pod_key(id);
    index_affinity_terms(pods_[id], n, -1);
    dropped.push_back(std::move(pods_[id]));
    release_pod_id(id);
    --num_live_pods_;
  }
  for (uint32_t i = image_offsets_[n]; i < image_offsets_[n + 1]; ++i)
    --image_num_nodes_[static_cast<size_t>(image_ids_[i])];
  tree_remove(n, node_zone_keys_[n]);

  erase_node_from_rows(allocatable_, num_resources(), old_n, n);
  erase_node_from_rows(allocatable_inverse_, num_resources(), old_n, n);
  erase_node_from_rows(requested_, num_resources(), old_n, n);
  erase_node_from_rows(nonzero_requested_, 2, old_n, n);
  erase_node_from_rows(topology_counts_, matchers_.size(), old_n, n);
  forget_least_counts();
  node_data_remove_node(n, old_n);
  allowed_pods_.erase(allowed_pods_.begin() + n);
  pod_count_.erase(pod_count_.begin() + n);
  node_name_id_.erase(node_name_id_.begin() + n);
  cordoned_nodes_ -= unschedulable_[n];
  unschedulable_.erase(unschedulable_.begin() + n);
  image_masks_.erase(image_masks_.begin() + n);
  port_counts_.erase(port_counts_.begin() + n);
  erase_node_range(label_offsets_, n, label_keys_, label_values_);
  erase_node_range(taint_offsets_, n, taint_keys_, taint_values_, taint_effects_);
  erase_node_range(image_offsets_, n, image_ids_);
  erase_node_range(port_offsets_, n, ports_);
  const uint32_t region = pod_label_regions_[n + 1] - pod_label_regions_[n];
  erase_node_range(pod_label_regions_, n, pod_label_keys_, pod_label_values_);
  const uint32_t first_slot = pod_offsets_[n];
  erase_node_range(pod_offsets_, n, pod_namespace_, pod_node_, pod_flags_, pod_label_offsets_, pod_label_counts_,
                   slot_pod_id_);
  // The later nodes' slots and label regions moved down; their pods' node
  // indices go down by one.
  for (uint32_t s = first_slot; s < pod_namespace_.size(); ++s) {
    if (pod_node_[s] == kNoId) continue;
    pod_node_[s] -= 1;
    pod_label_offsets_[s] -= region;
    pod_slot_[slot_pod_id_[s]] = s;
  }
  num_nodes_ = old_n - 1;

  node_ids_.erase(node_names_[n]);
  node_names_.erase(node_names_.begin() + n);
  for (uint32_t i = n; i < num_nodes_; ++i) node_ids_[node_names_[i]] = i;
  node_zone_keys_.erase(node_zone_keys_.begin() + n);
  for (auto& z : zones_)
    for (auto& i : z.nodes)
      if (i > n) --i;
  rebuild_tree_order();
  build_dense_labels();
  rank_images_by_popularity();
  structural_change();
  return dropped;
}

// ---- Snapshot: pods -----------------------------------------------------------

Snapshot::EncodedPod Snapshot::encode_pod(const Pod& pod) {
  EncodedPod e;
  encode_pod(pod, e);
  return e;
}

void Snapshot::encode_pod(const Pod& pod, EncodedPod& e) {
  e.namespace_id = strings_.intern(pod.namespace_name);
  e.flags = 0;
  if (pod.deleting) e.flags |= kPodTerminating;
  if (pod.affinity && pod.affinity->pod_anti_affinity && !pod.affinity->pod_anti_affinity->required.empty())
    e.flags |= kPodRequiredAntiAffinity;
  e.labels.clear();
  for (const auto& [k, v] : pod.labels) e.labels.emplace_back(strings_.intern(k), strings_.intern(v));
  std::sort(e.labels.begin(), e.labels.end());
  e.ports = pod_host_ports(pod, strings_);
}

bool Snapshot::has_resource_columns(const Pod& pod) const {
  bool known = true;
  for_each_request_name(
      pod, [&](const std::string& name) { known = known && (name == "pods" || resource_index(name) >= 0); });
  return known;
}

void Snapshot::recheck_quantities() {
  if (!wild_quantities_) return;
  const auto tame = [](const std::vector<int64_t>& column) {
    return std::all_of(column.begin(), column.end(), tame_quantity);
  };
  wild_quantities_ = !(tame(allocatable_) && tame(requested_) && tame(nonzero_requested_));
}

void Snapshot::account_requests(const Pod& pod, uint32_t node, int64_t sign) {
  // total += sign * amount as Go's int64 arithmetic does it: wrapping, so
  // that requests near 2^63 (valid quantities) sum as upstream's node
  // totals do. A total outside the tame range is noted.
  const auto add_signed = [this](int64_t& total, int64_t times, int64_t amount) {
    total = go_add(total, go_mul(times, amount));
    wild_quantities_ = wild_quantities_ || !tame_quantity(total);
  };
  if (requests_are_additive(pod)) {
    // Each container's requests and the overhead added on their own (the
    // node's totals are sums): no lists built, nothing allocated. A name
    // without a column yet takes the path below, which adds columns in
    // pod_requests' (sorted) order.
    if (has_resource_columns(pod)) {
      const auto add = [&](const ResourceList& list) {
        for (const auto& [name, amount] : list)
          if (name != "pods")
            add_signed(requested_[static_cast<size_t>(resource_index(name)) * num_nodes_ + node], sign, amount);
      };
      for (const Container& c : pod.containers) add(c.requests);
      add(pod.overhead);
      const CpuMemory nz = additive_nonzero_cpu_memory(pod);
      add_signed(nonzero_requested_[node], sign, nz.cpu);
      add_signed(nonzero_requested_[static_cast<size_t>(num_nodes_) + node], sign, nz.memory);
      return;
    }
  }
  for (const auto& [name, amount] : pod_requests(pod)) {
    if (name == "pods") continue;
    // Adding may need a new column (structural); removing finds the one
    // the add used.
    const int32_t r = sign > 0 ? intern_resource(name) : resource_index(name);
    add_signed(requested_[static_cast<size_t>(r) * num_nodes_ + node], sign, amount);
  }
  // A pod without containers has no non-zero request at all (counts 0).
  const ResourceList nz = pod_requests_nonzero_for_node(pod);
  const auto amount = [&](const char* name) {
    const auto it = nz.find(name);
    return it == nz.end() ? int64_t(0) : it->second;
  };
  add_signed(nonzero_requested_[node], sign, amount("cpu"));
  add_signed(nonzero_requested_[static_cast<size_t>(num_nodes_) + node], sign, amount("memory"));
}

uint32_t Snapshot::take_pod_id(uint32_t wanted) {
  if (wanted != kNoPod && wanted < pods_.size()) {
    // A just-freed id: the last one on the free list.
    const auto it = std::find(free_pod_ids_.rbegin(), free_pod_ids_.rend(), wanted);
    free_pod_ids_.erase(std::next(it).base());
    return wanted;
  }
  if (wanted == kNoPod && !free_pod_ids_.empty()) {
    const uint32_t id = free_pod_ids_.back();
    free_pod_ids_.pop_back();
    return id;
  }
  // A new id (or the freed last id again: it is the next one).
  pods_.emplace_back();
  pod_slot_.push_back(kNoPod);
  pod_num_ports_.push_back(0);
  pod_priority_.push_back(0);
  pod_key_next_.push_back(kNoPod);
  return static_cast<uint32_t>(pods_.size() - 1);
}

void Snapshot::release_pod_id(uint32_t id) {
  pod_slot_[id] = kNoPod;
  pod_num_ports_[id] = 0;
  pod_priority_[id] = 0;
  pod_key_next_[id] = kNoPod;
  if (id + 1 == pods_.size()) {
    pods_.pop_back();
    pod_slot_.pop_back();
    pod_num_ports_.pop_back();
    pod_priority_.pop_back();
    pod_key_next_.pop_back();
  } else {
    pods_[id] = Pod();
    free_pod_ids_.push_back(id);
  }
}

void Snapshot::link_pod_key(uint32_t id) {
  const auto [it, fresh] = pod_key_heads_.emplace(pod_key_hash(pods_[id].namespace_name, pods_[id].name), id);
  pod_key_next_[id] = fresh ? kNoPod : it->second;
  it->second = id;
}

void Snapshot::unlink_pod_key(uint32_t id) {
  const auto it = pod_key_heads_.find(pod_key_hash(pods_[id].namespace_name, pods_[id].name));
  if (it->second == id) {
    if (pod_key_next_[id] == kNoPod)
      pod_key_heads_.erase(it);
    else
      it->second = pod_key_next_[id];
    return;
  }
  uint32_t at = it->second;
  while (pod_key_next_[at] != id) at = pod_key_next_[at];
  pod_key_next_[at] = pod_key_next_[id];
}

uint32_t Snapshot::pod_labels_end(uint32_t node) const {
  const auto count = static_cast<uint32_t>(pod_count_[node]);
  if (count == 0) return pod_label_regions_[node];
  const uint32_t last = pod_offsets_[node] + count - 1;
  return pod_label_offsets_[last] + pod_label_counts_[last];
}

uint32_t Snapshot::place_pod(Pod&& pod, uint32_t node, const EncodedPod& enc, uint32_t id,
                             DeviceCharges&& charges) {
  account_requests(pod, node, +1);
  const auto count = static_cast<uint32_t>(pod_count_[node]);
  const auto num_labels = static_cast<uint32_t>(enc.labels.size());
  if (count + 1 > pod_offsets_[node + 1] - pod_offsets_[node] ||
      pod_labels_end(node) + num_labels > pod_label_regions_[node + 1])
    relayout_pods(node, 1, num_labels);
  const uint32_t slot = pod_offsets_[node] + count;
  const uint32_t label_at = pod_labels_end(node);
  for (uint32_t i = 0; i < num_labels; ++i) {
    pod_label_keys_[label_at + i] = enc.labels[i].first;
    pod_label_values_[label_at + i] = enc.labels[i].second;
  }
  pod_namespace_[slot] = enc.namespace_id;
  pod_node_[slot] = static_cast<int32_t>(node);
  pod_flags_[slot] = enc.flags;
  pod_label_offsets_[slot] = label_at;
  pod_label_counts_[slot] = num_labels;
  slot_pod_id_[slot] = id;
  pod_count_[node] += 1;
  if (!enc.ports.empty()) add_ports(node, enc.ports);

  pod_slot_[id] = slot;
  pod_num_ports_[id] = static_cast<uint32_t>(enc.ports.size());
  count_pod(slot, node, +1);
  apply_device_charges(node, charges, +1);
  if (pod_device_charges_.size() <= id) pod_device_charges_.resize(static_cast<size_t>(id) + 1);
  pod_device_charges_[id] = std::move(charges);
  pod.node_name = node_names_[node];
  index_affinity_terms(pod, node, +1);
  pod_priority_[id] = pod.priority;
  pods_[id] = std::move(pod);
  link_pod_key(id);
  ++num_live_pods_;
  join_device_group(id, node);
  ++placed_since_relayout_;
  identity_.log.push_back(node);
  return id;
}

uint32_t Snapshot::add_pod(Pod&& pod, uint32_t node) {
  if (node >= num_nodes_) throw Error("add_pod: node index " + std::to_string(node) + " is out of range");
  // Charges first: a malformed annotation throws before anything changes.
  DeviceCharges charges = device_charges(pod, node, false);
  check_group_annotations(pod);
  encode_pod(pod, encoded_scratch_);  // kept across pods: nothing allocated a pod
  return place_pod(std::move(pod), node, encoded_scratch_, take_pod_id(), std::move(charges));
}

Pod Snapshot::remove_pod(uint32_t id) {
  if (!has_pod(id)) throw Error("remove_pod: no pod with id " + std::to_string(id) + " in the snapshot");
  const uint32_t slot = pod_slot_[id];
  const auto node = static_cast<uint32_t>(pod_node_[slot]);
  const uint32_t first = pod_offsets_[node];
  const uint32_t last = first + static_cast<uint32_t>(pod_count_[node]) - 1;
  account_requests(pods_[id], node, -1);
  count_pod(slot, node, -1);
  apply_device_charges(node, pod_device_charges_[id], -1);
  pod_device_charges_[id] = DeviceCharges{};
  index_affinity_terms(pods_[id], node, -1);
  leave_device_group(id);

  // Host ports: the node's entries are its pods' entries in slot order, so
  // this pod's are one run; the later ones move down over it.
  if (const uint32_t k = pod_num_ports_[id]) {
    uint32_t at = port_offsets_[node];
    for (uint32_t s = first; s < slot; ++s) at += pod_num_ports_[slot_pod_id_[s]];
    const uint32_t end = port_offsets_[node] + port_counts_[node];
    std::copy(ports_.begin() + at + k, ports_.begin() + end, ports_.begin() + at);
    std::fill(ports_.begin() + end - k, ports_.begin() + end, kNoPort);
    port_counts_[node] -= k;
  }
  // Labels: the later pods' labels move down over this pod's.
  {
    const uint32_t at = pod_label_offsets_[slot], k = pod_label_counts_[slot], end = pod_labels_end(node);
    for (auto* v : {&pod_label_keys_, &pod_label_values_}) {
      std::copy(v->begin() + at + k, v->begin() + end, v->begin() + at);
      std::fill(v->begin() + end - k, v->begin() + end, kNoId);
    }
    for (uint32_t s = slot + 1; s <= last; ++s) pod_label_offsets_[s] -= k;
  }
  // Slots: the later pods move down one slot.
  for (uint32_t s = slot; s < last; ++s) {
    pod_namespace_[s] = pod_namespace_[s + 1];
    pod_node_[s] = pod_node_[s + 1];
    pod_flags_[s] = pod_flags_[s + 1];
    pod_label_offsets_[s] = pod_label_offsets_[s + 1];
    pod_label_counts_[s] = pod_label_counts_[s + 1];
    slot_pod_id_[s] = slot_pod_id_[s + 1];
    pod_slot_[slot_pod_id_[s]] = s;
  }
  pod_namespace_[last] = kNoId;
  pod_node_[last] = kNoId;
  pod_flags_[last] = 0;
  pod_label_offsets_[last] = 0;
  pod_label_counts_[last] = 0;
  slot_pod_id_[last] = kNoPod;
  pod_count_[node] -= 1;

  unlink_pod_key(id);
  Pod out = std::move(pods_[id]);
  release_pod_id(id);
  --num_live_pods_;
  identity_.log.push_back(node);
  return out;
}

std::optional<Pod> Snapshot::remove_pod(std::string_view namespace_name, std::string_view name) {
  const uint32_t id = find_pod(namespace_name, name);
  if (id == kNoPod) return std::nullopt;
  return remove_pod(id);
}

uint32_t Snapshot::update_pod(uint32_t id, const Pod& updated) {
  if (!has_pod(id)) throw Error("update_pod: no pod with id " + std::to_string(id) + " in the snapshot");
  Pod pod = updated;  // a copy first: `updated` may be this snapshot's own pod(id)
  uint32_t node = pod_node(id);
  if (!pod.node_name.empty()) {
    const int32_t named = node_index(pod.node_name);
    if (named < 0)
      throw InputError("update_pod: pod " + quote_for_message(pod.key()) + " names unknown node " +
                       quote_for_message(pod.node_name));
    node = static_cast<uint32_t>(named);
  }
  // Charges first (a malformed annotation throws before anything changes);
  // they depend on the node's devices, not on what is free.
  DeviceCharges charges = device_charges(pod, node, false);
  check_group_annotations(pod);
  // The pod's group is held across the update: were it the group's last
  // pod, leaving would release a binding the updated pod then rejoins.
  const int32_t group = id < pod_group_.size() ? pod_group_[id] : -1;
  if (group >= 0) ++bindings_[static_cast<size_t>(group)].members;
  remove_pod(id);
  const EncodedPod enc = encode_pod(pod);
  const uint32_t out = place_pod(std::move(pod), node, enc, take_pod_id(id), std::move(charges));
  if (group >= 0 && --bindings_[static_cast<size_t>(group)].members == 0)
    release_device_group(static_cast<uint32_t>(group));
  return out;
}

uint32_t Snapshot::update_pod(const Pod& updated) {
  const uint32_t id = find_pod(updated.namespace_name, updated.name);
  if (id == kNoPod) throw InputError("update_pod: pod " + quote_for_message(updated.key()) + " is not in the snapshot");
  return update_pod(id, updated);
}

// ---- Snapshot: slotted layouts ------------------------------------------------

void Snapshot::add_ports(uint32_t node, const std::vector<HostPortEntry>& wanted) {
  const uint32_t capacity = port_offsets_[node + 1] - port_offsets_[node];
  if (port_counts_[node] + wanted.size() > capacity) relayout_ports(static_cast<uint32_t>(wanted.size()), node);
  for (const auto& e : wanted) ports_[port_offsets_[node] + port_counts_[node]++] = e;
}

void Snapshot::relayout_ports(uint32_t extra_for_node, uint32_t node) {
  std::vector<uint32_t> offsets(num_nodes_ + 1, 0);
  for (uint32_t i = 0; i < num_nodes_; ++i) {
    const uint32_t need = port_counts_[i] + (i == node ? extra_for_node : 0);
    offsets[i + 1] = offsets[i] + need + kPortSlack;
  }
  std::vector<HostPortEntry> ports(offsets[num_nodes_], kNoPort);
  for (uint32_t i = 0; i < num_nodes_; ++i)
    std::copy_n(ports_.begin() + port_offsets_[i], port_counts_[i], ports.begin() + offsets[i]);
  port_offsets_ = std::move(offsets);
  ports_ = std::move(ports);
  port_layout_version_ = fresh_structure_version();
}

void Snapshot::relayout_pods(uint32_t node, uint32_t extra_slots, uint32_t extra_labels) {
  // A relayout costs O(nodes). When they come close together (pods filling
  // empty nodes one after another, each overflowing its few free slots in
  // turn: 100,000 nodes spent most of a pod's time here), every node gets
  // more room, up to kMaxPodSlackDoublings times, so that relayouts stay
  // rare against the placements between them.
  if (placed_since_relayout_ < num_nodes_ / 8 && pod_slack_doublings_ < kMaxPodSlackDoublings) ++pod_slack_doublings_;
  placed_since_relayout_ = 0;
  const uint32_t slack = kMinPodSlack << pod_slack_doublings_;
  const uint32_t label_slack = kMinPodLabelSlack << pod_slack_doublings_;
  std::vector<uint32_t> offsets, regions;
  offsets.reserve(static_cast<size_t>(num_nodes_) + 1);
  regions.reserve(static_cast<size_t>(num_nodes_) + 1);
  offsets.push_back(0);
  regions.push_back(0);
  for (uint32_t i = 0; i < num_nodes_; ++i) {
    const auto slots = static_cast<uint32_t>(pod_count_[i]) + (i == node ? extra_slots : 0);
    const uint32_t labels = pod_labels_end(i) - pod_label_regions_[i] + (i == node ? extra_labels : 0);
    offsets.push_back(offsets.back() + with_slack(slots, slack));
    regions.push_back(regions.back() + with_slack(labels, label_slack));
  }
  const uint32_t num_slots = offsets.back();
  std::vector<int32_t> ns(num_slots, kNoId), nodes(num_slots, kNoId);
  std::vector<uint8_t> flags(num_slots, 0);
  std::vector<uint32_t> label_offsets(num_slots, 0), label_counts(num_slots, 0), ids(num_slots, kNoPod);
  std::vector<int32_t> keys(regions.back(), kNoId), values(regions.back(), kNoId);
  for (uint32_t i = 0; i < num_nodes_; ++i) {
    const uint32_t from = pod_offsets_[i], to = offsets[i], count = static_cast<uint32_t>(pod_count_[i]);
    const uint32_t label_from = pod_label_regions_[i], label_to = regions[i], label_end = pod_labels_end(i);
    std::copy(pod_label_keys_.begin() + label_from, pod_label_keys_.begin() + label_end, keys.begin() + label_to);
    std::copy(pod_label_values_.begin() + label_from, pod_label_values_.begin() + label_end, values.begin() + label_to);
    for (uint32_t j = 0; j < count; ++j) {
      ns[to + j] = pod_namespace_[from + j];
      nodes[to + j] = pod_node_[from + j];
      flags[to + j] = pod_flags_[from + j];
      label_offsets[to + j] = pod_label_offsets_[from + j] - label_from + label_to;
      label_counts[to + j] = pod_label_counts_[from + j];
      ids[to + j] = slot_pod_id_[from + j];
      pod_slot_[ids[to + j]] = to + j;
    }
  }
  pod_offsets_ = std::move(offsets);
  pod_label_regions_ = std::move(regions);
  pod_namespace_ = std::move(ns);
  pod_node_ = std::move(nodes);
  pod_flags_ = std::move(flags);
  pod_label_offsets_ = std::move(label_offsets);
  pod_label_counts_ = std::move(label_counts);
  slot_pod_id_ = std::move(ids);
  pod_label_keys_ = std::move(keys);
  pod_label_values_ = std::move(values);
  pod_layout_version_ = fresh_structure_version();
}

// ---- Snapshot: topology counters ---------------------------------------------

namespace {

// A selector as canonical requirements; id_of(string) gives a dictionary id
// (interning, or kNoId when looking up).
template <class IdOf>
std::vector<CompiledRequirement> compile_selector(const LabelSelector& sel, IdOf&& id_of) {
  using R = CompiledRequirement;
  std::vector<R> out;
  for (const auto& [k, v] : sel.match_labels) out.push_back(R{id_of(k), R::In, {id_of(v)}});
  for (const auto& e : sel.match_expressions) {
    R r;
    r.key = id_of(e.key);
    if (e.op == "In")
      r.op = R::In;
    else if (e.op == "NotIn")
      r.op = R::NotIn;
    else if (e.op == "Exists")
      r.op = R::Exists;
    else if (e.op == "DoesNotExist")
      r.op = R::DoesNotExist;
    else
      throw InputError("label selector: key " + quote_for_message(e.key) + ": unknown operator " +
                       quote_for_message(e.op));
    if (r.op == R::In || r.op == R::NotIn)
      for (const auto& v : e.values) r.values.push_back(id_of(v));
    std::sort(r.values.begin(), r.values.end());
    r.values.erase(std::unique(r.values.begin(), r.values.end()), r.values.end());
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

namespace {

// A matcher's clauses with ids from `id_of` (interning, or looking up).
template <class Clause, class IdOf>
std::vector<Clause> compile_clauses(const std::vector<Snapshot::PodMatchClause>& all_of, IdOf&& id_of) {
  std::vector<Clause> out;
  for (const auto& c : all_of) {
    Clause m;
    m.all_namespaces = c.all_namespaces;
    if (!c.all_namespaces)
      for (const auto& ns : c.namespaces) m.namespace_ids.push_back(id_of(ns));
    std::sort(m.namespace_ids.begin(), m.namespace_ids.end());
    m.namespace_ids.erase(std::unique(m.namespace_ids.begin(), m.namespace_ids.end()), m.namespace_ids.end());
    m.requirements = compile_selector(c.selector, id_of);
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace

namespace {

// A conjunction counts a clause once: identical clauses (a pod repeating a
// required affinity term) make one.
template <class Clause>
void sort_unique(std::vector<Clause>& clauses) {
  std::sort(clauses.begin(), clauses.end());
  clauses.erase(std::unique(clauses.begin(), clauses.end()), clauses.end());
}

uint64_t label_pair(int32_t key, int32_t value) {
  return static_cast<uint64_t>(static_cast<uint32_t>(key)) << 32 | static_cast<uint32_t>(value);
}

uint64_t hash_step(uint64_t h, uint64_t v) { return mix64(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2))); }

}  // namespace

Snapshot::Matcher Snapshot::intern_matcher(const std::vector<PodMatchClause>& all_of, bool count_terminating) {
  Matcher m;
  m.clauses = compile_clauses<MatcherClause>(all_of, [&](const std::string& str) { return strings_.intern(str); });
  sort_unique(m.clauses);
  m.count_terminating = count_terminating;
  return m;
}

std::optional<Snapshot::Matcher> Snapshot::lookup_matcher(const std::vector<PodMatchClause>& all_of,
                                                          bool count_terminating) const {
  bool known = true;
  Matcher m;
  m.clauses = compile_clauses<MatcherClause>(all_of, [&](const std::string& str) {
    const int32_t id = strings_.find(str);
    if (id == kNoId) known = false;
    return id;
  });
  m.count_terminating = count_terminating;
  if (!known) return std::nullopt;  // registration interns every string
  sort_unique(m.clauses);
  return m;
}

uint64_t Snapshot::matcher_hash(const Matcher& m) {
  uint64_t h = m.count_terminating ? 1 : 0;
  for (const MatcherClause& c : m.clauses) {
    h = hash_step(h, c.all_namespaces ? 2 : 3);
    for (const int32_t ns : c.namespace_ids) h = hash_step(h, static_cast<uint32_t>(ns));
    for (const CompiledRequirement& r : c.requirements) {
      h = hash_step(h, label_pair(r.key, r.op));
      for (const int32_t v : r.values) h = hash_step(h, static_cast<uint32_t>(v));
    }
  }
  return h;
}

int32_t Snapshot::matcher_row(const Matcher& m, uint64_t* compares) const {
  int32_t found = -1;
  matcher_rows_.for_each(matcher_hash(m), [&](uint32_t row) {
    if (found >= 0) return;
    if (compares) ++*compares;
    if (matchers_[row] == m) found = static_cast<int32_t>(row);
  });
  return found;
}

void Snapshot::MatcherFiling::add(uint32_t row, const Matcher& m) {
  // The most selective requirement every counted pod meets: an In with the
  // fewest values, else an Exists; of those, the one with the fewest
  // matchers filed under it already, so that successive selectors sharing
  // one label (a Deployment's ReplicaSets: app, and a new pod-template-hash
  // each) do not pile up under it, each placement of such a pod checking
  // them all.
  const auto filed = [&](const CompiledRequirement& r) {
    uint64_t n = 0;
    for (const int32_t v : r.values) n += by_label.count(label_pair(r.key, v));
    return n;
  };
  const CompiledRequirement* in = nullptr;
  const CompiledRequirement* exists = nullptr;
  uint64_t in_filed = 0;
  for (const MatcherClause& c : m.clauses)
    for (const CompiledRequirement& r : c.requirements) {
      if (r.op == CompiledRequirement::In) {
        const uint64_t f = filed(r);
        if (!in || r.values.size() < in->values.size() || (r.values.size() == in->values.size() && f < in_filed)) {
          in = &r;
          in_filed = f;
        }
      }
      if (r.op == CompiledRequirement::Exists &&
          (!exists || by_key.count(static_cast<uint32_t>(r.key)) < by_key.count(static_cast<uint32_t>(exists->key))))
        exists = &r;
    }
  if (in) {
    // An In without values counts no pod: filed nowhere, never checked.
    for (const int32_t v : in->values) by_label.add(label_pair(in->key, v), row);
  } else if (exists) {
    by_key.add(static_cast<uint32_t>(exists->key), row);
  } else {
    always.push_back(row);
  }
}

template <class Fn>
void Snapshot::MatcherFiling::for_candidates(const Snapshot& s, uint32_t slot, Fn&& fn) const {
  for (const uint32_t row : always) fn(row);
  if (by_label.empty() && by_key.empty()) return;
  const uint32_t first = s.pod_label_offsets_[slot], last = first + s.pod_label_counts_[slot];
  for (uint32_t i = first; i < last; ++i) {
    // A pod has one value per key, and a matcher is filed under one key:
    // each candidate comes once.
    const int32_t key = s.pod_label_keys_[i];
    by_label.for_each(label_pair(key, s.pod_label_values_[i]), fn);
    by_key.for_each(static_cast<uint32_t>(key), fn);
  }
}

uint32_t Snapshot::topology_matcher(const std::vector<PodMatchClause>& all_of, bool count_terminating) {
  return topology_matchers({all_of}, count_terminating).front();
}

namespace {

bool same_selector(const LabelSelector& a, const LabelSelector& b) {
  if (a.match_labels != b.match_labels || a.match_expressions.size() != b.match_expressions.size()) return false;
  for (size_t i = 0; i < a.match_expressions.size(); ++i) {
    const LabelSelectorRequirement& x = a.match_expressions[i];
    const LabelSelectorRequirement& y = b.match_expressions[i];
    if (x.key != y.key || x.op != y.op || x.values != y.values) return false;
  }
  return true;
}

// The same clauses as written (a stricter test than the compiled matchers'
// equality: a list in another order is another entry, never a wrong row).
bool same_clauses(const std::vector<Snapshot::PodMatchClause>& a, const std::vector<Snapshot::PodMatchClause>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].all_namespaces != b[i].all_namespaces || a[i].namespaces != b[i].namespaces ||
        !same_selector(a[i].selector, b[i].selector))
      return false;
  return true;
}

uint64_t hash_text(uint64_t h, std::string_view s) { return hash_step(h, std::hash<std::string_view>{}(s)); }

}  // namespace

uint64_t Snapshot::raw_matcher_hash(const std::vector<PodMatchClause>& all_of, bool count_terminating) {
  uint64_t h = count_terminating ? 1 : 0;
  for (const PodMatchClause& c : all_of) {
    h = hash_step(h, c.all_namespaces ? 2 : 3);
    for (const std::string& ns : c.namespaces) h = hash_text(h, ns);
    h = hash_step(h, c.selector.match_labels.size());
    for (const auto& [k, v] : c.selector.match_labels) h = hash_text(hash_text(h, k), v);
    for (const LabelSelectorRequirement& r : c.selector.match_expressions) {
      h = hash_text(hash_text(h, r.key), r.op);
      for (const std::string& v : r.values) h = hash_text(h, v);
    }
  }
  return h;
}

int32_t Snapshot::raw_matcher_row(const std::vector<PodMatchClause>& all_of, bool count_terminating,
                                  uint64_t hash) const {
  int32_t found = -1;
  raw_matcher_index_.for_each(hash, [&](uint32_t i) {
    const RawMatcher& r = raw_matchers_[i];
    if (found < 0 && r.count_terminating == count_terminating && same_clauses(r.all_of, all_of))
      found = static_cast<int32_t>(r.row);
  });
  return found;
}

void Snapshot::remember_raw_matcher(const std::vector<PodMatchClause>& all_of, bool count_terminating, uint64_t hash,
                                    uint32_t row) {
  if (raw_matcher_row(all_of, count_terminating, hash) >= 0) return;
  // Spellings of the registered matchers only, a bounded number of them:
  // lists written in ever new orders would otherwise pile up here.
  if (raw_matchers_.size() >= 2 * matchers_.size() + 64) forget_raw_matchers();
  raw_matcher_index_.add(hash, static_cast<uint32_t>(raw_matchers_.size()));
  raw_matchers_.push_back(RawMatcher{all_of, count_terminating, row});
}

void Snapshot::forget_raw_matchers() {
  raw_matchers_.clear();
  raw_matcher_index_ = KeyedRows{};
}

std::vector<uint32_t> Snapshot::topology_matchers(const std::vector<std::vector<PodMatchClause>>& matchers,
                                                  bool count_terminating) {
  std::vector<uint32_t> rows(matchers.size());
  std::vector<uint64_t> hashes(matchers.size());
  std::vector<size_t> unknown;  // the matchers not found as written
  for (size_t i = 0; i < matchers.size(); ++i) {
    hashes[i] = raw_matcher_hash(matchers[i], count_terminating);
    const int32_t row = raw_matcher_row(matchers[i], count_terminating, hashes[i]);
    if (row >= 0)
      rows[i] = static_cast<uint32_t>(row);
    else
      unknown.push_back(i);
  }
  if (unknown.empty()) return rows;
  const auto first_new = static_cast<uint32_t>(matchers_.size());
  MatcherFiling fresh;  // the new matchers only, for their first count
  // Every matcher compiled first: an InputError leaves nothing half
  // registered. Interning adds no string for a matcher already registered
  // (its registration interned them all).
  std::vector<Matcher> compiled;
  compiled.reserve(unknown.size());
  for (const size_t i : unknown) compiled.push_back(intern_matcher(matchers[i], count_terminating));
  for (size_t k = 0; k < unknown.size(); ++k) {
    Matcher& m = compiled[k];
    const size_t i = unknown[k];
    int32_t row = matcher_row(m, &matcher_work_.compares);
    if (row < 0) {
      row = static_cast<int32_t>(matchers_.size());
      matcher_rows_.add(matcher_hash(m), static_cast<uint32_t>(row));
      matcher_filing_.add(static_cast<uint32_t>(row), m);
      fresh.add(static_cast<uint32_t>(row), m);
      matchers_.push_back(std::move(m));
    }
    rows[i] = static_cast<uint32_t>(row);
    remember_raw_matcher(matchers[i], count_terminating, hashes[i], rows[i]);
  }
  if (matchers_.size() == first_new) return rows;
  matcher_domain_sums_.resize(matchers_.size());
  topology_counts_.resize(static_cast<size_t>(matchers_.size()) * num_nodes_, 0);
  at_least_count_.resize(matchers_.size(), 0);  // the new rows' not known yet
  for (uint32_t n = 0; n < num_nodes_; ++n)
    for (uint32_t s = pod_offsets_[n], e = s + static_cast<uint32_t>(pod_count_[n]); s < e; ++s)
      fresh.for_candidates(*this, s, [&](uint32_t row) {
        ++matcher_work_.slot_checks;
        if (topology_matcher_counts_slot(row, s)) ++topology_counts_[static_cast<size_t>(row) * num_nodes_ + n];
      });
  topology_layout_version_ = fresh_structure_version();
  return rows;
}

int32_t Snapshot::find_topology_matcher(const std::vector<PodMatchClause>& all_of, bool count_terminating) const {
  const int32_t row = raw_matcher_row(all_of, count_terminating, raw_matcher_hash(all_of, count_terminating));
  if (row >= 0) return row;
  const std::optional<Matcher> m = lookup_matcher(all_of, count_terminating);
  return m ? matcher_row(*m, nullptr) : -1;
}

uint32_t Snapshot::topology_matcher(std::string_view namespace_name, const LabelSelector& selector) {
  return topology_matcher({PodMatchClause{false, {std::string(namespace_name)}, selector}}, false);
}

int32_t Snapshot::find_topology_matcher(std::string_view namespace_name, const LabelSelector& selector) const {
  return find_topology_matcher({PodMatchClause{false, {std::string(namespace_name)}, selector}}, false);
}

bool Snapshot::topology_matcher_counts_slot(uint32_t m, uint32_t slot) const {
  const Matcher& mt = matchers_[m];
  if (pod_node_[slot] == kNoId || (!mt.count_terminating && (pod_flags_[slot] & kPodTerminating))) return false;
  const uint32_t first = pod_label_offsets_[slot], last = first + pod_label_counts_[slot];
  for (const MatcherClause& c : mt.clauses) {
    if (!c.all_namespaces && !std::binary_search(c.namespace_ids.begin(), c.namespace_ids.end(), pod_namespace_[slot]))
      return false;
    for (const CompiledRequirement& r : c.requirements) {
      // The pod's labels are sorted by key id.
      const uint32_t at = SnapshotView::lower_bound_key(pod_label_keys_.data(), first, last, r.key);
      const int32_t value = at < last && pod_label_keys_[at] == r.key ? pod_label_values_[at] : kNoId;
      const bool has = value != kNoId;
      const bool in = has && std::binary_search(r.values.begin(), r.values.end(), value);
      bool ok = false;
      switch (r.op) {
        case CompiledRequirement::In:
          ok = in;
          break;
        case CompiledRequirement::NotIn:
          ok = !in;
          break;
        case CompiledRequirement::Exists:
          ok = has;
          break;
        case CompiledRequirement::DoesNotExist:
          ok = !has;
          break;
      }
      if (!ok) return false;
    }
  }
  return true;
}

// ---- Snapshot: existing pods' affinity terms -----------------------------------

namespace {

// A group keeps a rank vector (8 bytes per value of its key) only while at
// least an eighth of the values hold its pods, dropping it below a
// sixteenth: memory stays within a small factor of the domain map's.
bool dense_enough(size_t domains, size_t values) { return domains * 8 >= values; }
bool too_sparse(size_t domains, size_t values) { return domains * 16 < values; }

// Length-prefixed pieces: distinct terms never share a text.
void put(std::string& out, std::string_view s) {
  out += std::to_string(s.size());
  out += ':';
  out += s;
}

void put_selector(std::string& out, const std::optional<LabelSelector>& sel) {
  if (!sel) {
    out += 'N';
    return;
  }
  out += 'S';
  for (const auto& [k, v] : sel->match_labels) {
    put(out, k);
    put(out, v);
  }
  out += 'E';
  for (const auto& r : sel->match_expressions) {
    put(out, r.key);
    put(out, r.op);
    out += std::to_string(r.values.size());
    out += '#';
    for (const auto& v : r.values) put(out, v);
  }
  out += ';';
}

}  // namespace

int32_t Snapshot::node_label_value(uint32_t n, int32_t key) const {
  if (key == kNoId) return kNoId;
  const auto first = label_keys_.begin() + label_offsets_[n], last = label_keys_.begin() + label_offsets_[n + 1];
  const auto it = std::lower_bound(first, last, key);
  return it != last && *it == key ? label_values_[static_cast<size_t>(it - label_keys_.begin())] : kNoId;
}

namespace {

// A term of `owner` as its group: its namespace set (the term's list, or
// the owner's namespace), sorted, and the group's canonical text.
std::string affinity_term_text(const Pod& owner, const PodAffinityTerm& t, Snapshot::ExistingAffinityTerm::Kind kind,
                               int32_t weight, std::vector<std::string>& namespaces) {
  if (t.namespaces.empty() && !t.namespace_selector)
    namespaces.push_back(owner.namespace_name);
  else
    namespaces = t.namespaces;
  std::sort(namespaces.begin(), namespaces.end());
  namespaces.erase(std::unique(namespaces.begin(), namespaces.end()), namespaces.end());
  std::string text;
  text += static_cast<char>('0' + kind);
  put(text, std::to_string(weight));
  put(text, t.topology_key);
  for (const auto& ns : namespaces) put(text, ns);
  text += '|';
  put_selector(text, t.namespace_selector);
  put_selector(text, t.label_selector);
  return text;
}

}  // namespace

int32_t Snapshot::affinity_term_group(const Pod& owner, const PodAffinityTerm& t, ExistingAffinityTerm::Kind kind,
                                      int32_t weight) const {
  std::vector<std::string> namespaces;
  const auto it = affinity_term_ids_.find(affinity_term_text(owner, t, kind, weight, namespaces));
  return it == affinity_term_ids_.end() ? -1 : static_cast<int32_t>(it->second);
}

void Snapshot::index_affinity_terms(const Pod& pod, uint32_t node, int64_t sign) {
  if (!pod.affinity) return;
  using K = ExistingAffinityTerm::Kind;
  const auto add = [&](const PodAffinityTerm& t, K kind, int32_t weight) {
    ExistingAffinityTerm e;
    e.kind = kind;
    e.weight = weight;
    const std::string text = affinity_term_text(pod, t, kind, weight, e.namespaces);
    // try_emplace: no map node built (and freed) when the term has its group.
    auto [it, fresh] = affinity_term_ids_.try_emplace(text, static_cast<uint32_t>(affinity_terms_.size()));
    if (fresh) {
      e.namespace_selector = t.namespace_selector;
      e.selector = t.label_selector;
      e.topology_key = t.topology_key;
      e.key_id = strings_.intern(t.topology_key);
      e.dense_slot = dense_label_slot(e.key_id);
      affinity_terms_.push_back(std::move(e));
      file_affinity_term(it->second);
    }
    ExistingAffinityTerm& g = affinity_terms_[it->second];
    g.occurrences += sign;
    const int32_t value = node_label_value(node, g.key_id);
    if (value == kNoId) return;
    const int64_t c = (g.domains[value] += sign);
    if (c == 0) g.domains.erase(value);
    if (g.dense_slot < 0) return;
    if (g.node_row >= 0) term_counts_[static_cast<size_t>(g.node_row) * num_nodes_ + node] += static_cast<int32_t>(sign);
    const size_t values = dense_label_values(g.dense_slot).size();
    if (g.by_rank.empty()) {
      if (dense_enough(g.domains.size(), values)) {
        rank_affinity_term(g);
        if (g.node_row >= 0) --sparse_term_rows_;  // its row no longer counts against the budget
      }
    } else if (too_sparse(g.domains.size(), values)) {
      rank_affinity_term(g);  // drops the vector
      // Its row counts against the budget now; over it, the layout decides.
      if (g.node_row >= 0 && ++sparse_term_rows_ > sparse_term_row_budget()) lay_out_term_rows();
    } else {
      // The node's own rank in the column (no search among the values).
      const int32_t r = dense_label_ranks_[static_cast<size_t>(g.dense_slot) * num_nodes_ + node];
      assert(r >= 0 && "a node's value has a rank in its key's dense column");
      g.by_rank[static_cast<size_t>(r)] += sign;
    }
    if (g.node_row < 0 && wants_node_row(g)) {
      add_term_row(g);
    } else if (g.node_row >= 0 && g.domains.empty()) {
      drop_term_row(g);  // a pod added then removed leaves every column as it was
    }
  };
  if (const auto& a = pod.affinity->pod_affinity) {
    for (const auto& t : a->required) add(t, K::kRequiredAffinity, 0);
    for (const auto& w : a->preferred) add(w.term, K::kPreferredAffinity, w.weight);
  }
  if (const auto& a = pod.affinity->pod_anti_affinity) {
    for (const auto& t : a->required) add(t, K::kRequiredAntiAffinity, 0);
    for (const auto& w : a->preferred) add(w.term, K::kPreferredAntiAffinity, w.weight);
  }
}

namespace {

uint64_t key_hash(std::string_view key) { return mix64(std::hash<std::string_view>{}(key)); }
uint64_t string_pair_hash(std::string_view key, std::string_view value) {
  return hash_step(key_hash(key), std::hash<std::string_view>{}(value));
}

}  // namespace

void Snapshot::file_affinity_term(uint32_t group) {
  const std::optional<LabelSelector>& sel = affinity_terms_[group].selector;
  if (!sel) return;  // nil: selects no pod
  TermFiling& f = affinity_term_filing_;
  // As the matchers: of the entries every selected pod meets, the one with
  // the fewest groups filed under it (a term with a new pod-template-hash
  // per rollout goes under its hash, not its app).
  if (!sel->match_labels.empty()) {
    uint64_t best = 0;
    uint32_t fewest = UINT32_MAX;
    for (const auto& [k, v] : sel->match_labels) {
      const uint64_t h = string_pair_hash(k, v);
      const uint32_t c = f.by_label.count(h);
      if (c < fewest) {
        fewest = c;
        best = h;
      }
    }
    f.by_label.add(best, group);
    return;
  }
  const auto filed = [&](const LabelSelectorRequirement& r) {
    uint64_t n = 0;
    for (const auto& v : r.values) n += f.by_label.count(string_pair_hash(r.key, v));
    return n;
  };
  const LabelSelectorRequirement* in = nullptr;
  const LabelSelectorRequirement* exists = nullptr;
  for (const auto& r : sel->match_expressions) {
    if (r.op == "In" && !r.values.empty() &&
        (!in || r.values.size() < in->values.size() || (r.values.size() == in->values.size() && filed(r) < filed(*in))))
      in = &r;
    if (r.op == "Exists" && (!exists || f.by_key.count(key_hash(r.key)) < f.by_key.count(key_hash(exists->key))))
      exists = &r;
  }
  if (in) {
    for (const auto& v : in->values) f.by_label.add(string_pair_hash(in->key, v), group);
  } else if (exists) {
    f.by_key.add(key_hash(exists->key), group);
  } else {
    f.always.push_back(group);
  }
}

std::vector<uint32_t> Snapshot::affinity_term_candidates(const StringMap& labels) const {
  const TermFiling& f = affinity_term_filing_;
  std::vector<uint32_t> out = f.always;
  const auto add = [&](uint32_t g) { out.push_back(g); };
  for (const auto& [k, v] : labels) {
    f.by_label.for_each(string_pair_hash(k, v), add);
    f.by_key.for_each(key_hash(k), add);
  }
  // An In lists a value twice, or two labels collide in a hash: once each.
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool Snapshot::row_kind(const ExistingAffinityTerm& g) const {
  return g.kind == ExistingAffinityTerm::kRequiredAntiAffinity && g.dense_slot >= 0 &&
         dense_label_one_node_per_value(g.dense_slot) && !g.domains.empty();
}

bool Snapshot::wants_node_row(const ExistingAffinityTerm& g) const {
  return row_kind(g) && (!g.by_rank.empty() || sparse_term_rows_ < sparse_term_row_budget());
}

size_t Snapshot::sparse_term_row_budget() const {
  if (sparse_term_row_limit_ != SIZE_MAX) return sparse_term_row_limit_;
  constexpr size_t kSparseRowBytes = size_t(16) << 20;
  return std::clamp<size_t>(kSparseRowBytes / sizeof(int32_t) / std::max<size_t>(num_nodes_, 1), 8, 256);
}

void Snapshot::limit_sparse_term_rows(size_t rows) {
  sparse_term_row_limit_ = rows;
  lay_out_term_rows();
}

void Snapshot::fill_term_row(const ExistingAffinityTerm& g) {
  int32_t* row = term_counts_.data() + static_cast<size_t>(g.node_row) * num_nodes_;
  std::fill(row, row + num_nodes_, 0);
  const int32_t* ranks = dense_label_ranks_.data() + static_cast<size_t>(g.dense_slot) * num_nodes_;
  if (!g.by_rank.empty()) {
    for (uint32_t n = 0; n < num_nodes_; ++n)
      if (ranks[n] >= 0) row[n] = static_cast<int32_t>(g.by_rank[static_cast<size_t>(ranks[n])]);
    return;
  }
  // A sparse group: its few domains marked by rank, then one pass.
  std::vector<int64_t> by_rank(dense_label_values(g.dense_slot).size(), 0);
  for (const auto& [v, c] : g.domains) {
    const int32_t r = dense_label_rank_of(g.dense_slot, v);
    if (r >= 0) by_rank[static_cast<size_t>(r)] = c;
  }
  for (uint32_t n = 0; n < num_nodes_; ++n)
    if (ranks[n] >= 0) row[n] = static_cast<int32_t>(by_rank[static_cast<size_t>(ranks[n])]);
}

void Snapshot::add_term_row(ExistingAffinityTerm& g) {
  assert(g.node_row < 0 && "a group holds one row");
  if (num_nodes_ == 0) return;
  if (!free_term_rows_.empty()) {
    // The first row given up by another group (all zeros; the first, so
    // that which row a group gets depends on the free rows, not on the order
    // they were given up in): no other row moves.
    g.node_row = free_term_rows_.front();
    free_term_rows_.erase(free_term_rows_.begin());
  } else {
    g.node_row = static_cast<int32_t>(term_counts_.size() / num_nodes_);
    term_counts_.resize(term_counts_.size() + num_nodes_);
  }
  fill_term_row(g);
  if (g.by_rank.empty()) ++sparse_term_rows_;
  term_rows_version_ = fresh_structure_version();
}

void Snapshot::drop_term_row(ExistingAffinityTerm& g) {
  // g holds no pods on the key, so its row is all zeros: it stays where it
  // is, free for the next group, and no other row is renumbered (a state of
  // the batch cache holding those rows' numbers stays valid). Free rows at
  // the end are given back, so a pod added then removed leaves the column as
  // it was, whatever the order its terms are removed in.
  if (num_nodes_ == 0) {  // no row is given without nodes (add_term_row)
    g.node_row = -1;
    return;
  }
  if (g.by_rank.empty()) --sparse_term_rows_;
  free_term_rows_.insert(std::lower_bound(free_term_rows_.begin(), free_term_rows_.end(), g.node_row), g.node_row);
  g.node_row = -1;
  size_t rows = term_counts_.size() / num_nodes_;
  while (!free_term_rows_.empty() && static_cast<size_t>(free_term_rows_.back()) + 1 == rows) {
    free_term_rows_.pop_back();
    --rows;
  }
  term_counts_.resize(rows * num_nodes_);
  term_rows_version_ = fresh_structure_version();
}

void Snapshot::lay_out_term_rows() {
  int32_t rows = 0;
  sparse_term_rows_ = 0;
  free_term_rows_.clear();
  const size_t budget = sparse_term_row_budget();
  for (ExistingAffinityTerm& g : affinity_terms_) {
    g.node_row = -1;
    if (!row_kind(g)) continue;
    if (g.by_rank.empty()) {
      if (sparse_term_rows_ == budget) continue;
      ++sparse_term_rows_;
    }
    g.node_row = rows++;
  }
  term_counts_.assign(static_cast<size_t>(rows) * num_nodes_, 0);
  for (const ExistingAffinityTerm& g : affinity_terms_)
    if (g.node_row >= 0) fill_term_row(g);
  term_rows_version_ = fresh_structure_version();
}

void Snapshot::rank_affinity_term(ExistingAffinityTerm& g) {
  g.by_rank.clear();
  g.by_rank.shrink_to_fit();
  if (g.dense_slot < 0) return;
  const size_t values = dense_label_values(g.dense_slot).size();
  if (!dense_enough(g.domains.size(), values)) return;
  g.by_rank.assign(values, 0);
  for (const auto& [v, c] : g.domains) {
    const int32_t r = dense_label_rank_of(g.dense_slot, v);
    if (r >= 0) g.by_rank[static_cast<size_t>(r)] = c;
  }
}

void Snapshot::rerank_affinity_terms() {
  for (auto& g : affinity_terms_) {
    g.dense_slot = dense_label_slot(g.key_id);
    rank_affinity_term(g);
  }
  lay_out_term_rows();
}


void Snapshot::refresh_least_topology_count(uint32_t m) {
  if (m >= matchers_.size() || num_nodes_ == 0) return;
  if (at_least_count_.size() != matchers_.size()) at_least_count_.resize(matchers_.size(), 0);
  least_count_.resize(matchers_.size(), 0);
  if (at_least_count_[m] != 0) return;
  const int32_t* row = topology_counts_.data() + static_cast<size_t>(m) * num_nodes_;
  int32_t least = INT32_MAX;
  for (uint32_t n = 0; n < num_nodes_; ++n) least = std::min(least, row[n]);
  uint32_t at = 0;
  for (uint32_t n = 0; n < num_nodes_; ++n) at += row[n] == least ? 1 : 0;
  least_count_[m] = least;
  at_least_count_[m] = at;
}

void Snapshot::count_pod(uint32_t slot, uint32_t node, int32_t delta) {
  matcher_filing_.for_candidates(*this, slot, [&](uint32_t m) {
    ++matcher_work_.slot_checks;
    if (!topology_matcher_counts_slot(m, slot)) return;
    int32_t& count = topology_counts_[static_cast<size_t>(m) * num_nodes_ + node];
    const int32_t before = count;
    count += delta;
    if (m < at_least_count_.size() && at_least_count_[m] != 0) {
      // The least moves down with a count below it; a node leaving it is
      // one fewer there (none left: not known until refreshed).
      uint32_t& at = at_least_count_[m];
      int32_t& least = least_count_[m];
      if (before == least) --at;
      if (count < least) {
        least = count;
        at = 1;
      } else if (count == least && at != 0) {
        ++at;
      }
    }
    for (const uint32_t i : matcher_domain_sums_[m]) {
      DomainSums& d = domain_sums_[i];
      if (d.slot < 0) continue;
      const int32_t r = dense_label_ranks_[static_cast<size_t>(d.slot) * num_nodes_ + node];
      d.by_rank[r < 0 ? d.by_rank.size() - 1 : static_cast<size_t>(r)] += delta;
    }
  });
}

void Snapshot::recount_domain_sums(DomainSums& d) const {
  d.slot = dense_label_slot(d.key);
  d.by_rank.clear();
  if (d.slot < 0) return;
  d.by_rank.assign(dense_label_values(d.slot).size() + 1, 0);
  for (uint32_t n = 0; n < num_nodes_; ++n) {
    const int32_t r = dense_label_ranks_[static_cast<size_t>(d.slot) * num_nodes_ + n];
    d.by_rank[r < 0 ? d.by_rank.size() - 1 : static_cast<size_t>(r)] +=
        topology_counts_[static_cast<size_t>(d.matcher) * num_nodes_ + n];
  }
}

void Snapshot::register_topology_domain_sums(uint32_t matcher, int32_t key) {
  if (key == kNoId || matcher >= matchers_.size()) return;
  const auto index = static_cast<uint32_t>(domain_sums_.size());
  if (!domain_sums_index_.emplace(label_pair(static_cast<int32_t>(matcher), key), index).second) return;
  DomainSums d{matcher, key, -1, {}};
  recount_domain_sums(d);
  domain_sums_.push_back(std::move(d));
  matcher_domain_sums_[matcher].push_back(index);
}

const std::vector<int64_t>* Snapshot::topology_domain_sums(uint32_t matcher, int32_t key) const {
  const auto it = domain_sums_index_.find(label_pair(static_cast<int32_t>(matcher), key));
  if (it == domain_sums_index_.end()) return nullptr;
  const DomainSums& d = domain_sums_[it->second];
  return d.slot < 0 ? nullptr : &d.by_rank;
}

// ---- Snapshot: releasing what nothing references --------------------------------

Snapshot::Liveness Snapshot::mark() const {
  Liveness l;
  l.strings.assign(strings_.size(), 0);
  const auto use = [&](int32_t id) {
    if (id != kNoId) l.strings[static_cast<size_t>(id)] = 1;
  };
  // Pinned: every snapshot has them (build), and a host port defaults to them.
  for (const char* pinned : {"", "0.0.0.0", "TCP"}) use(strings_.find(pinned));
  use(any_ip_id_);
  // The node and pod columns (free slots and entries hold kNoId).
  for (const int32_t id : node_name_id_) use(id);
  for (const std::vector<int32_t>* col :
       {&label_keys_, &label_values_, &taint_keys_, &taint_values_, &dense_label_keys_, &dense_labels_, &pod_namespace_,
        &pod_label_keys_, &pod_label_values_})
    for (const int32_t id : *col) use(id);
  for (const std::vector<int32_t>& values : dense_label_values_)
    for (const int32_t id : values) use(id);
  for (const HostPortEntry& p : ports_) {
    use(p.ip);
    use(p.protocol);
  }
  // Matchers that count some pod, with their strings and per-domain sums.
  l.matchers.assign(matchers_.size(), 0);
  for (size_t m = 0; m < matchers_.size(); ++m) {
    const int32_t* row = topology_counts_.data() + m * num_nodes_;
    if (std::none_of(row, row + num_nodes_, [](int32_t c) { return c != 0; })) continue;
    l.matchers[m] = 1;
    for (const MatcherClause& c : matchers_[m].clauses) {
      for (const int32_t ns : c.namespace_ids) use(ns);
      for (const CompiledRequirement& r : c.requirements) {
        use(r.key);
        for (const int32_t v : r.values) use(v);
      }
    }
  }
  for (const DomainSums& d : domain_sums_)
    if (l.matchers[d.matcher]) use(d.key);
  // Term groups some pod holds.
  l.groups.assign(affinity_terms_.size(), 0);
  for (size_t g = 0; g < affinity_terms_.size(); ++g) {
    const ExistingAffinityTerm& t = affinity_terms_[g];
    if (t.occurrences == 0) continue;
    l.groups[g] = 1;
    use(t.key_id);
    for (const auto& [value, count] : t.domains) use(value);
  }
  return l;
}

Snapshot::Census Snapshot::census_of(const Liveness& l) const {
  const auto live = [](const std::vector<uint8_t>& v) {
    return static_cast<size_t>(std::count(v.begin(), v.end(), uint8_t(1)));
  };
  Census c;
  c.strings = strings_.size();
  c.live_strings = live(l.strings);
  c.matchers = matchers_.size();
  c.live_matchers = live(l.matchers);
  c.domain_sums = domain_sums_.size();
  for (const DomainSums& d : domain_sums_) c.live_domain_sums += l.matchers[d.matcher];
  c.term_groups = affinity_terms_.size();
  c.live_term_groups = live(l.groups);
  return c;
}

Snapshot::Census Snapshot::census() const { return census_of(mark()); }

bool Snapshot::compact() { return drop_dead(mark(), 0); }

bool Snapshot::drop_dead(const Liveness& l, size_t spare_rows) {
  const auto all = [](const std::vector<uint8_t>& v) {
    return std::all_of(v.begin(), v.end(), [](uint8_t x) { return x != 0; });
  };
  if (all(l.strings) && all(l.matchers) && all(l.groups)) return false;
  // Strings first: the matchers are hashed and filed again by their new ids.
  std::vector<int32_t> new_ids;
  strings_ = strings_.kept(l.strings, new_ids);
  renumber_strings(new_ids);
  keep_matchers(l.matchers, spare_rows);
  keep_term_groups(l.groups);
  new_structure_version();
  ++compactions_;
#ifdef __GLIBC__
  // What the dead held (rows, strings, indexes, the old columns) is free
  // now, much of it in the middle of the heap, where glibc keeps it
  // resident: give it back, so that the resident set follows what is live.
  malloc_trim(0);
#endif
  return true;
}

void Snapshot::renumber_strings(const std::vector<int32_t>& new_ids) {
  // The order of ids is kept, so every list sorted by id stays sorted (a
  // node's labels, a pod's, a requirement's values, the dense columns'
  // values and hence their ranks): only the numbers change.
  const auto re = [&](int32_t& id) {
    if (id != kNoId) id = new_ids[static_cast<size_t>(id)];
  };
  for (std::vector<int32_t>* col :
       {&node_name_id_, &label_keys_, &label_values_, &taint_keys_, &taint_values_, &dense_label_keys_, &dense_labels_,
        &pod_namespace_, &pod_label_keys_, &pod_label_values_})
    for (int32_t& id : *col) re(id);
  for (std::vector<int32_t>& values : dense_label_values_)
    for (int32_t& id : values) re(id);
  for (HostPortEntry& p : ports_) {
    re(p.ip);
    re(p.protocol);
  }
  re(any_ip_id_);
  for (Matcher& m : matchers_)
    for (MatcherClause& c : m.clauses) {
      for (int32_t& ns : c.namespace_ids) re(ns);
      for (CompiledRequirement& r : c.requirements) {
        re(r.key);
        for (int32_t& v : r.values) re(v);
      }
    }
  for (DomainSums& d : domain_sums_) re(d.key);
  for (ExistingAffinityTerm& t : affinity_terms_) {
    re(t.key_id);
    std::map<int32_t, int64_t> domains;
    for (const auto& [value, count] : t.domains) {
      int32_t v = value;
      re(v);
      domains.emplace_hint(domains.end(), v, count);
    }
    t.domains.swap(domains);
  }
}

void Snapshot::keep_matchers(const std::vector<uint8_t>& live, size_t spare_rows) {
  std::vector<int32_t> new_row(matchers_.size(), -1);
  std::vector<Matcher> kept;
  size_t count = 0;
  for (const uint8_t x : live) count += x ? 1 : 0;
  kept.reserve(count + spare_rows);
  std::vector<int32_t> counts;
  counts.reserve((count + spare_rows) * num_nodes_);
  for (size_t m = 0; m < matchers_.size(); ++m) {
    if (!live[m]) continue;
    new_row[m] = static_cast<int32_t>(kept.size());
    kept.push_back(std::move(matchers_[m]));
    const auto row = topology_counts_.begin() + static_cast<std::ptrdiff_t>(m * num_nodes_);
    counts.insert(counts.end(), row, row + num_nodes_);
  }
  matchers_ = std::move(kept);
  topology_counts_ = std::move(counts);
  forget_least_counts();
  matcher_rows_ = KeyedRows{};
  matcher_filing_ = MatcherFiling{};
  forget_raw_matchers();  // its rows are the old ones
  for (uint32_t row = 0; row < matchers_.size(); ++row) {
    matcher_rows_.add(matcher_hash(matchers_[row]), row);
    matcher_filing_.add(row, matchers_[row]);
  }
  std::vector<DomainSums> sums;
  for (DomainSums& d : domain_sums_) {
    if (!live[d.matcher]) continue;
    d.matcher = static_cast<uint32_t>(new_row[d.matcher]);
    sums.push_back(std::move(d));
  }
  domain_sums_ = std::move(sums);
  domain_sums_index_ = decltype(domain_sums_index_){};
  matcher_domain_sums_.assign(matchers_.size(), {});
  for (uint32_t i = 0; i < domain_sums_.size(); ++i) {
    const DomainSums& d = domain_sums_[i];
    domain_sums_index_.emplace(label_pair(static_cast<int32_t>(d.matcher), d.key), i);
    matcher_domain_sums_[d.matcher].push_back(i);
  }
  topology_layout_version_ = fresh_structure_version();
}

void Snapshot::keep_term_groups(const std::vector<uint8_t>& live) {
  std::vector<int32_t> new_index(affinity_terms_.size(), -1);
  std::vector<ExistingAffinityTerm> kept;
  for (size_t g = 0; g < affinity_terms_.size(); ++g) {
    if (!live[g]) continue;
    new_index[g] = static_cast<int32_t>(kept.size());
    kept.push_back(std::move(affinity_terms_[g]));
  }
  affinity_terms_ = std::move(kept);
  decltype(affinity_term_ids_) ids;
  ids.reserve(affinity_terms_.size());
  for (auto it = affinity_term_ids_.begin(); it != affinity_term_ids_.end();) {
    auto node = affinity_term_ids_.extract(it++);
    const int32_t g = new_index[node.mapped()];
    if (g < 0) continue;
    node.mapped() = static_cast<uint32_t>(g);
    ids.insert(std::move(node));
  }
  affinity_term_ids_ = std::move(ids);
  affinity_term_filing_ = TermFiling{};
  for (uint32_t g = 0; g < affinity_terms_.size(); ++g) file_affinity_term(g);
  lay_out_term_rows();  // rows in the groups' new order
}

void Snapshot::new_structure_version() {
  identity_.version = fresh_structure_version();
  std::vector<uint32_t>().swap(identity_.log);
}

bool Snapshot::maybe_compact(const CompactionPolicy& policy) {
  // Dead entries reaching the policy's bound: at least min_dead, and
  // dead_share of the live ones.
  const auto bound = [&](size_t live) {
    return std::max<size_t>(policy.min_dead,
                            static_cast<size_t>(std::ceil(policy.dead_share * static_cast<double>(live))));
  };
  // A check (a pass over the snapshot) only once some kind has grown, since
  // the last one, by what would make it due if all of the growth had died,
  // and by at least a quarter of the bound: a check costs O(snapshot) and
  // comes after O(bound) new entries, and the dead stay below 1.25 bounds
  // but for deaths without growth (a mass deletion is released once the
  // stream has added a quarter bound again).
  const Census& last = last_check_;
  const auto grown = [&](size_t stored, size_t last_stored, size_t last_live) {
    const size_t b = bound(last_live), last_dead = last_stored - last_live;
    return stored >= last_stored + std::max(b > last_dead ? b - last_dead : 0, b / 4);
  };
  bool changed = false;
  if (grown(strings_.size(), last.strings, last.live_strings) ||
      grown(matchers_.size(), last.matchers, last.live_matchers) ||
      grown(affinity_terms_.size(), last.term_groups, last.live_term_groups)) {
    const Liveness l = mark();
    Census c = census_of(l);
    const auto due = [&](size_t stored, size_t live) {
      const size_t dead = stored - live;
      return dead > 0 && dead >= bound(live);
    };
    if (due(c.strings, c.live_strings) || due(c.matchers, c.live_matchers) || due(c.term_groups, c.live_term_groups)) {
      const size_t spare = bound(c.live_matchers);
      changed = drop_dead(l, spare + spare / 4);
      // What is left is live.
      c = Census{strings_.size(),     strings_.size(),     matchers_.size(),       matchers_.size(),
                 domain_sums_.size(), domain_sums_.size(), affinity_terms_.size(), affinity_terms_.size()};
    }
    last_check_ = c;
  }
  // The log lists every node touched since the last structural change; a
  // stream without node changes would grow it without bound.
  if (!changed && identity_.log.size() > std::max<size_t>(size_t(1) << 20, size_t(8) * num_nodes_)) {
    new_structure_version();
    changed = true;
  }
  return changed;
}

// ---- Snapshot: the column table ---------------------------------------------

template <class Fn>
void Snapshot::bind_columns(SnapshotView& v, Fn&& fn) const {
  using K = ColumnKind;
  const uint64_t structure = identity_.version;
  const Sync fixed{K::kFixed, structure, nullptr};
  const Sync rows{K::kNodeRows, structure, nullptr};
  const Sync scalar{K::kNodeScalar, structure, nullptr};
  const Sync append{K::kAppend, structure, nullptr};
  const Sync port_layout{K::kFixed, port_layout_version_, nullptr};
  const Sync port_slots{K::kNodeSlots, port_layout_version_, &port_offsets_};
  const Sync pod_layout{K::kFixed, pod_layout_version_, nullptr};
  const Sync pod_slots{K::kNodeSlots, pod_layout_version_, &pod_offsets_};
  const Sync pod_label_slots{K::kNodeSlots, pod_layout_version_, &pod_label_regions_};
  // A new matcher adds a row: the column is laid out anew, nothing else.
  const Sync topology_rows{K::kNodeRows, topology_layout_version_, nullptr};
  fn("allocatable", allocatable_, v.allocatable, rows);
  fn("allocatable_inverse", allocatable_inverse_, v.allocatable_inverse, rows);
  fn("requested", requested_, v.requested, rows);
  fn("nonzero_requested", nonzero_requested_, v.nonzero_requested, rows);
  fn("allowed_pods", allowed_pods_, v.allowed_pods, scalar);
  fn("pod_count", pod_count_, v.pod_count, scalar);
  fn("unschedulable", unschedulable_, v.unschedulable, scalar);
  fn("node_name_id", node_name_id_, v.node_name_id, fixed);
  fn("label_offsets", label_offsets_, v.label_offsets, fixed);
  fn("label_keys", label_keys_, v.label_keys, fixed);
  fn("label_values", label_values_, v.label_values, fixed);
  fn("taint_offsets", taint_offsets_, v.taint_offsets, fixed);
  fn("taint_keys", taint_keys_, v.taint_keys, fixed);
  fn("taint_values", taint_values_, v.taint_values, fixed);
  fn("taint_effects", taint_effects_, v.taint_effects, fixed);
  fn("image_offsets", image_offsets_, v.image_offsets, fixed);
  fn("image_ids", image_ids_, v.image_ids, fixed);
  fn("image_masks", image_masks_, v.image_masks, fixed);
  fn("port_offsets", port_offsets_, v.port_offsets, port_layout);
  fn("port_counts", port_counts_, v.port_counts, scalar);
  fn("ports", ports_, v.ports, port_slots);
  fn("string_int", strings_.int_values(), v.string_int, append);
  fn("string_int_ok", strings_.int_ok(), v.string_int_ok, append);
  fn("dense_labels", dense_labels_, v.dense_labels, fixed);
  fn("dense_label_ranks", dense_label_ranks_, v.dense_label_ranks, fixed);
  fn("pod_offsets", pod_offsets_, v.pod_offsets, pod_layout);
  fn("pod_namespace", pod_namespace_, v.pod_namespace, pod_slots);
  fn("pod_node", pod_node_, v.pod_node, pod_slots);
  fn("pod_flags", pod_flags_, v.pod_flags, pod_slots);
  fn("pod_label_offsets", pod_label_offsets_, v.pod_label_offsets, pod_slots);
  fn("pod_label_counts", pod_label_counts_, v.pod_label_counts, pod_slots);
  fn("pod_label_keys", pod_label_keys_, v.pod_label_keys, pod_label_slots);
  fn("pod_label_values", pod_label_values_, v.pod_label_values, pod_label_slots);
  fn("topology_counts", topology_counts_, v.topology_counts, topology_rows);
  // A group gaining or losing a row lays the column out anew.
  const Sync term_rows{K::kNodeRows, term_rows_version_, nullptr};
  fn("term_counts", term_counts_, v.term_counts, term_rows);
  // Laid out by every structural change; assumes change a node's range.
  const Sync device_slots{K::kNodeSlots, structure, &device_offsets_};
  fn("device_offsets", device_offsets_, v.device_offsets, fixed);
  fn("device_units", device_units_, v.device_units, fixed);
  fn("device_free", device_free_, v.device_free, device_slots);
  fn("device_pod_classes", device_pod_classes_, v.device_pod_classes, scalar);
  fn("group_free", group_free_, v.group_free, rows);
  // A new column adds a row: the column is laid out anew, nothing else.
  const Sync node_data_rows{K::kNodeRows, node_data_layout_version_, nullptr};
  fn("node_filter_data", node_filter_data_, v.node_filter_data, node_data_rows);
  fn("node_score_data", node_score_data_, v.node_score_data, node_data_rows);
}

SnapshotView Snapshot::view() const {
  SnapshotView v = counts_only();
  bind_columns(v, [](const char*, const auto& col, auto& field, const Sync&) { field = col.data(); });
  return v;
}

std::vector<Snapshot::Column> Snapshot::columns() const {
  std::vector<Column> out;
  SnapshotView unused;
  bind_columns(unused, [&](const char* name, const auto& col, auto&, const Sync& sync) {
    out.push_back(Column{name, static_cast<const void*>(col.data()), col.size() * sizeof(col[0]),
                         static_cast<uint32_t>(sizeof(col[0])), sync.kind, sync.layout_version,
                         sync.slot_offsets ? sync.slot_offsets->data() : nullptr});
  });
  return out;
}

SnapshotView Snapshot::view_over(const std::vector<const void*>& copies) const {
  SnapshotView v = counts_only();
  size_t i = 0;
  bind_columns(v, [&](const char* name, const auto&, auto& field, const Sync&) {
    if (i >= copies.size()) throw Error(std::string("view_over: no copy of column ") + name);
    field = static_cast<std::remove_reference_t<decltype(field)>>(copies[i++]);
  });
  return v;
}

SnapshotView Snapshot::counts_only() const {
  SnapshotView v;
  v.num_nodes = num_nodes_;
  v.num_resources = num_resources();
  v.any_ip_id = any_ip_id_;
  v.num_dense_labels = static_cast<uint32_t>(dense_label_keys_.size());
  v.num_pod_slots = static_cast<uint32_t>(pod_namespace_.size());
  v.num_topology_matchers = static_cast<uint32_t>(matchers_.size());
  v.num_term_rows = num_nodes_ == 0 ? 0 : static_cast<uint32_t>(term_counts_.size() / num_nodes_);
  v.num_group_device_types = static_cast<uint32_t>(group_types_.size());
  v.num_node_filter_rows = static_cast<uint32_t>(node_filter_columns_.size());
  v.num_node_score_rows = static_cast<uint32_t>(node_score_columns_.size());
  return v;
}

}  // namespace bulkscore
