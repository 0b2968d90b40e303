// The engine's events: kube-scheduler's cache (pkg/scheduler/backend/cache)
// event by event, over the snapshot's own mutations. docs/library.md has the
// states; Engine's header the contract of each call.
#include <algorithm>

#include "host/engine/engine.hpp"
#include "host/input/priority.hpp"
#include "host/input/quote.hpp"

namespace bulkscore {
namespace {

bool terminal(const Pod& pod) { return pod.phase == "Succeeded" || pod.phase == "Failed"; }

EventStatus status(EventCode code, std::string message) {
  EventStatus s;
  s.code = code;
  s.message = std::move(message);
  return s;
}

std::string pod_name_for(const Pod& pod) {
  const std::string key = pod.cache_key();
  return "pod " + quote_for_message(pod.key(), 200) + (key == pod.key() ? "" : " (UID " + quote_for_message(key) + ")");
}

std::string key_name(std::string_view key) { return "pod " + quote_for_message(key, 200); }

std::string node_name_for(std::string_view name) { return "node " + quote_for_message(name, 200); }

const char* state_name(PodCacheState s) {
  switch (s) {
    case PodCacheState::kAssumed:
      return "assumed";
    case PodCacheState::kBound:
      return "bound";
    case PodCacheState::kAbsent:
      break;
  }
  return "absent";
}

// The SelectingObject kinds against ObjectKind.
bool same_kind(SelectingObject::Kind a, ObjectKind b) {
  switch (a) {
    case SelectingObject::Kind::Service:
      return b == ObjectKind::kService;
    case SelectingObject::Kind::ReplicationController:
      return b == ObjectKind::kReplicationController;
    case SelectingObject::Kind::ReplicaSet:
      return b == ObjectKind::kReplicaSet;
    case SelectingObject::Kind::StatefulSet:
      return b == ObjectKind::kStatefulSet;
  }
  return false;
}

ObjectKind kind_of(const SelectingObject& o) {
  switch (o.kind) {
    case SelectingObject::Kind::Service:
      return ObjectKind::kService;
    case SelectingObject::Kind::ReplicationController:
      return ObjectKind::kReplicationController;
    case SelectingObject::Kind::ReplicaSet:
      return ObjectKind::kReplicaSet;
    case SelectingObject::Kind::StatefulSet:
      break;
  }
  return ObjectKind::kStatefulSet;
}

std::string object_name(ObjectKind kind, std::string_view ns, std::string_view name) {
  const bool cluster_scoped = kind == ObjectKind::kNamespace || kind == ObjectKind::kSharedDeviceGroup ||
                              kind == ObjectKind::kPriorityClass;
  return std::string(object_kind_name(kind)) + " " +
         quote_for_message(cluster_scoped ? std::string(name) : std::string(ns) + "/" + std::string(name), 200);
}

}  // namespace

const char* event_code_name(EventCode c) {
  switch (c) {
    case EventCode::kOk:
      return "Ok";
    case EventCode::kAlreadyExists:
      return "AlreadyExists";
    case EventCode::kNotFound:
      return "NotFound";
    case EventCode::kWrongState:
      return "WrongState";
    case EventCode::kInvalid:
      return "Invalid";
  }
  return "Unknown";
}

const char* object_kind_name(ObjectKind k) {
  switch (k) {
    case ObjectKind::kNamespace:
      return "Namespace";
    case ObjectKind::kService:
      return "Service";
    case ObjectKind::kReplicationController:
      return "ReplicationController";
    case ObjectKind::kReplicaSet:
      return "ReplicaSet";
    case ObjectKind::kStatefulSet:
      return "StatefulSet";
    case ObjectKind::kSharedDeviceGroup:
      return "SharedDeviceGroup";
    case ObjectKind::kPriorityClass:
      return "PriorityClass";
    case ObjectKind::kPodDisruptionBudget:
      return "PodDisruptionBudget";
    case ObjectKind::kWorkload:
      return "Workload";
    case ObjectKind::kPodGroup:
      return "PodGroup.scheduling.k8s.io";
    case ObjectKind::kCoschedulingPodGroup:
      return "PodGroup.scheduling.x-k8s.io";
  }
  return "Unknown";
}

ObjectKind object_kind_of(PodGroupObject::Api api) {
  switch (api) {
    case PodGroupObject::Api::kWorkload:
      return ObjectKind::kWorkload;
    case PodGroupObject::Api::kPodGroup:
      return ObjectKind::kPodGroup;
    case PodGroupObject::Api::kCoscheduling:
      break;
  }
  return ObjectKind::kCoschedulingPodGroup;
}

// ---- the records ---------------------------------------------------------------

EventStatus Engine::place_record(Pod pod, const std::string& key, PodCacheState state) {
  EventStatus out;
  PodRecord rec;
  rec.state = state;
  rec.node = pod.node_name;
  const int32_t node = snapshot_.node_index(pod.node_name);
  if (node < 0) {
    rec.waiting = std::move(pod);
    waiting_by_node_[rec.node].push_back(key);
    pod_records_.emplace(key, std::move(rec));
    return out;
  }
  if (group_model_) snapshot_.take_device_warnings();
  rec.id = snapshot_.add_pod(std::move(pod), static_cast<uint32_t>(node));
  index_group_member(rec.id);
  pod_records_.emplace(key, std::move(rec));
  if (group_model_ || device_model_)
    for (std::string& w : snapshot_.take_device_warnings()) out.warnings.push_back(std::move(w));
  return out;
}

Pod Engine::drop_record(std::unordered_map<std::string, PodRecord>::iterator it) {
  PodRecord& rec = it->second;
  Pod pod;
  if (rec.waiting) {
    pod = std::move(*rec.waiting);
    auto w = waiting_by_node_.find(rec.node);
    if (w != waiting_by_node_.end()) {
      auto& keys = w->second;
      keys.erase(std::remove(keys.begin(), keys.end(), it->first), keys.end());
      if (keys.empty()) waiting_by_node_.erase(w);
    }
  } else {
    pod = snapshot_.remove_pod(rec.id);
    unindex_group_member(pod, rec.id);
  }
  pod_records_.erase(it);
  return pod;
}

void Engine::admit_waiting_pods(const std::string& node, std::vector<std::string>& warnings) {
  auto w = waiting_by_node_.find(node);
  if (w == waiting_by_node_.end()) return;
  const std::vector<std::string> keys = std::move(w->second);
  waiting_by_node_.erase(w);
  const auto n = static_cast<uint32_t>(snapshot_.node_index(node));
  for (const std::string& key : keys) {
    PodRecord& rec = pod_records_.at(key);
    if (group_model_) snapshot_.take_device_warnings();
    rec.id = snapshot_.add_pod(std::move(*rec.waiting), n);
    index_group_member(rec.id);
    rec.waiting.reset();
    if (device_model_) assign_pod_devices(rec.id, warnings);
    if (group_model_ || device_model_)
      for (std::string& s : snapshot_.take_device_warnings()) warnings.push_back(std::move(s));
  }
}

void Engine::node_set_changed() {
  // Upstream batching's list and hint name node indices, which a node event
  // may shift: it starts afresh (a missed hint, never a wrong node).
  for (auto& u : upstream_) u = UpstreamBatch{};
}

// ---- nodes -----------------------------------------------------------------------

EventStatus Engine::add_node(const Node& node) {
  if (snapshot_.node_index(node.name) >= 0)
    return status(EventCode::kAlreadyExists, node_name_for(node.name) + " is in the cluster already");
  EventStatus out;
  try {
    snapshot_.add_node(node);
  } catch (const InputError& e) {
    return status(EventCode::kInvalid, e.what());
  }
  node_set_changed();
  admit_waiting_pods(node.name, out.warnings);
  release_dead();
  return out;
}

EventStatus Engine::update_node(const Node& node) {
  if (snapshot_.node_index(node.name) < 0)
    return status(EventCode::kNotFound, node_name_for(node.name) + " is not in the cluster");
  EventStatus out;
  if (group_model_ || device_model_) snapshot_.take_device_warnings();
  try {
    snapshot_.update_node(node);
  } catch (const InputError& e) {
    return status(EventCode::kInvalid, e.what());
  }
  if (group_model_ || device_model_)
    for (std::string& w : snapshot_.take_device_warnings()) out.warnings.push_back(std::move(w));
  node_set_changed();
  release_dead();
  return out;
}

EventStatus Engine::remove_node(std::string_view name) {
  if (snapshot_.node_index(name) < 0)
    return status(EventCode::kNotFound, node_name_for(name) + " is not in the cluster");
  std::vector<Pod> pods = snapshot_.remove_node(name);
  // Its pods stay in the cache, unseen by scheduling, as upstream keeps a
  // ghost node until their own deletions arrive.
  for (Pod& pod : pods) {
    const std::string key = pod.cache_key();
    auto it = pod_records_.find(key);
    if (it == pod_records_.end()) continue;  // every snapshot pod has a record; defensive
    it->second.id = Snapshot::kNoPod;
    it->second.waiting = std::move(pod);
    waiting_by_node_[it->second.node].push_back(key);
  }
  node_set_changed();
  if (group_model_ || device_model_) snapshot_.take_device_warnings();
  release_dead();
  return {};
}

// ---- pods ------------------------------------------------------------------------

EventStatus Engine::add_pod(const Pod& pod) {
  if (pod.node_name.empty())
    return status(EventCode::kInvalid,
                  pod_name_for(pod) + " has no spec.nodeName: a pending pod is scheduled, not added");
  if (terminal(pod)) {
    EventStatus s;
    s.warnings.push_back(pod_name_for(pod) + " is " + pod.phase + ": a terminal pod holds nothing; not added");
    return s;
  }
  try {
    check_device_annotations(pod);
  } catch (const InputError& e) {
    return status(EventCode::kInvalid, e.what());
  }
  const std::string key = pod.cache_key();
  auto it = pod_records_.find(key);
  if (it != pod_records_.end() && it->second.state == PodCacheState::kBound)
    return status(EventCode::kAlreadyExists, pod_name_for(pod) + " was already in added state");
  EventStatus out;
  Pod added = pod;
  try {
    resolve_pod_priority(added, objects_);
  } catch (const InputError& e) {
    return status(EventCode::kInvalid, e.what());
  }
  if (!added.start_time_ns) added.start_time_ns = next_start_time();
  if (it != pod_records_.end()) {
    // The confirmation of an assumed pod: the informer's version replaces
    // the assumed one, counted once. Devices and groups the engine chose
    // at assume time stay when the informer's version does not list any
    // (an embedder that confirms with the pod it scheduled).
    PodRecord& rec = it->second;
    const Pod& assumed = rec.waiting ? *rec.waiting : snapshot_.pod(rec.id);
    const auto keep = [&](const std::string& annotation) {
      auto a = assumed.annotations.find(annotation);
      if (a != assumed.annotations.end() && !added.annotations.count(annotation))
        added.annotations.emplace(a->first, a->second);
    };
    if (rec.node == added.node_name) {
      if (device_model_) keep(device_model_->index_annotation);
      if (group_model_) {
        keep(group_model_->devices_annotation);
        for (const auto& [k, v] : assumed.annotations)
          if (k.rfind(group_model_->env_annotation_prefix, 0) == 0 && !added.annotations.count(k))
            added.annotations.emplace(k, v);
      }
    } else {
      out.warnings.push_back(pod_name_for(pod) + " was assumed on " + quote_for_message(rec.node, 200) +
                             " and is bound to " + quote_for_message(added.node_name, 200) + ": moved there");
    }
    drop_record(it);
  }
  EventStatus placed = place_record(std::move(added), key, PodCacheState::kBound);
  for (std::string& w : placed.warnings) out.warnings.push_back(std::move(w));
  const PodRecord& rec = pod_records_.at(key);
  if (!rec.waiting && device_model_) assign_pod_devices(rec.id, out.warnings);
  metrics_.leave(key);  // bound (by someone): no longer pending
  release_dead();
  return out;
}

EventStatus Engine::update_pod(const Pod& pod) {
  const std::string key = pod.cache_key();
  auto it = pod_records_.find(key);
  if (it == pod_records_.end())
    return status(EventCode::kNotFound, pod_name_for(pod) + " is not in the cache, so it cannot be updated");
  PodRecord& rec = it->second;
  if (rec.state == PodCacheState::kAssumed)
    return status(EventCode::kWrongState,
                  pod_name_for(pod) + " is assumed: it is confirmed by add_pod before it can be updated");
  if (terminal(pod)) {
    EventStatus s;
    s.warnings.push_back(pod_name_for(pod) + " is " + pod.phase + ": removed from the cache");
    drop_record(it);
    release_dead();
    return s;
  }
  if (pod.node_name != rec.node)
    return status(EventCode::kWrongState, pod_name_for(pod) + " is bound to " + quote_for_message(rec.node, 200) +
                                              " in the cache, and the update says " +
                                              quote_for_message(pod.node_name, 200) +
                                              ": a pod does not move; remove it and add it again");
  Pod updated = pod;
  try {
    check_device_annotations(pod);
    resolve_pod_priority(updated, objects_);
  } catch (const InputError& e) {
    return status(EventCode::kInvalid, e.what());
  }
  EventStatus out;
  const Pod& before = rec.waiting ? *rec.waiting : snapshot_.pod(rec.id);
  if (!updated.start_time_ns) updated.start_time_ns = before.start_time_ns;
  if (rec.waiting) {
    rec.waiting = std::move(updated);
    return out;
  }
  if (group_model_ || device_model_) snapshot_.take_device_warnings();
  const std::string group_before = pod_group_key(before);
  snapshot_.update_pod(rec.id, updated);
  if (pod_group_key(snapshot_.pod(rec.id)) != group_before) index_group_member(rec.id);  // its labels name another group
  if (group_model_ || device_model_)
    for (std::string& w : snapshot_.take_device_warnings()) out.warnings.push_back(std::move(w));
  if (device_model_) assign_pod_devices(rec.id, out.warnings);
  release_dead();
  return out;
}

EventStatus Engine::remove_pod(std::string_view cache_key) {
  auto it = pod_records_.find(std::string(cache_key));
  if (it == pod_records_.end())
    return status(EventCode::kNotFound,
                  key_name(cache_key) + " is not in the cache, so it cannot be removed (give its UID, or "
                                        "namespace/name for a pod without one)");
  drop_record(it);
  if (group_model_ || device_model_) snapshot_.take_device_warnings();
  release_dead();
  return {};
}

EventStatus Engine::assume_pod(const Pod& pod) {
  if (pod.node_name.empty())
    return status(EventCode::kInvalid, pod_name_for(pod) + " has no spec.nodeName: assume names the node");
  const std::string key = pod.cache_key();
  auto it = pod_records_.find(key);
  if (it != pod_records_.end())
    return status(EventCode::kWrongState, pod_name_for(pod) + " is in the cache (" + state_name(it->second.state) +
                                              " on " + quote_for_message(it->second.node, 200) +
                                              "), so it cannot be assumed");
  const int32_t node = snapshot_.node_index(pod.node_name);
  if (node < 0) return status(EventCode::kNotFound, node_name_for(pod.node_name) + " is not in the cluster");
  const ProfilePlan* plan = &plans_.front();
  for (const auto& p : plans_)
    if (p.config.scheduler_name == pod.scheduler_name) plan = &p;
  ScheduleResult res;
  try {
    check_device_annotations(pod);
    res.node = node;
    assume(pod, nullptr, *plan, res, key);
  } catch (const InputError& e) {
    return status(EventCode::kInvalid, e.what());
  }
  metrics_.leave(key);  // placed: no longer pending
  EventStatus out;
  out.warnings = std::move(res.warnings);
  release_dead();
  return out;
}

EventStatus Engine::remove_pending_pod(std::string_view cache_key) {
  if (!metrics_.leave(cache_key))
    return status(EventCode::kNotFound, key_name(cache_key) + " has no failed scheduling attempt counted as pending");
  return {};
}

EventStatus Engine::forget_pod(std::string_view cache_key) {
  auto it = pod_records_.find(std::string(cache_key));
  if (it == pod_records_.end()) return status(EventCode::kNotFound, key_name(cache_key) + " is not in the cache");
  if (it->second.state != PodCacheState::kAssumed)
    return status(EventCode::kWrongState, key_name(cache_key) + " is not assumed, so it cannot be forgotten");
  // Unreserve, once the pod is out of the snapshot (plugins/reserve.hpp).
  const std::shared_ptr<const Reservation> reserved = it->second.reservation;
  const uint32_t profile = it->second.profile;
  const int32_t node = snapshot_.node_index(it->second.node);
  const Pod pod = drop_record(it);
  if (reserved)
    unreserve_pod(reserve_context(pod, plans_[profile], node < 0 ? 0 : static_cast<uint32_t>(node)), snapshot_,
                  *reserved);
  if (group_model_ || device_model_) snapshot_.take_device_warnings();
  release_dead();
  return {};
}

EventStatus Engine::finish_binding(std::string_view cache_key, std::chrono::steady_clock::time_point now) {
  auto it = pod_records_.find(std::string(cache_key));
  if (it == pod_records_.end()) return status(EventCode::kNotFound, key_name(cache_key) + " is not in the cache");
  PodRecord& rec = it->second;
  if (rec.state != PodCacheState::kAssumed)
    return status(EventCode::kWrongState, key_name(cache_key) + " is not assumed");
  rec.binding_finished = true;
  if (options_.assumed_pod_ttl_seconds > 0)
    rec.deadline = now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                             std::chrono::duration<double>(options_.assumed_pod_ttl_seconds));
  return {};
}

std::vector<std::string> Engine::expire_assumed_pods(std::chrono::steady_clock::time_point now) {
  std::vector<std::string> expired;
  for (const auto& [key, rec] : pod_records_)
    if (rec.state == PodCacheState::kAssumed && rec.binding_finished && rec.deadline && now >= *rec.deadline)
      expired.push_back(key);
  std::sort(expired.begin(), expired.end());
  for (const std::string& key : expired) drop_record(pod_records_.find(key));
  if (!expired.empty() && (group_model_ || device_model_)) snapshot_.take_device_warnings();
  if (!expired.empty()) release_dead();
  return expired;
}

bool Engine::is_assumed_pod(std::string_view cache_key) const {
  auto it = pod_records_.find(std::string(cache_key));
  return it != pod_records_.end() && it->second.state == PodCacheState::kAssumed;
}

PodCacheEntry Engine::pod_entry(std::string_view cache_key) const {
  PodCacheEntry e;
  auto it = pod_records_.find(std::string(cache_key));
  if (it == pod_records_.end()) return e;
  e.state = it->second.state;
  e.node = it->second.node;
  e.node_present = !it->second.waiting.has_value();
  e.binding_finished = it->second.binding_finished;
  return e;
}

// ---- objects -----------------------------------------------------------------------

EventStatus Engine::add_object(const Namespace& ns) {
  for (const Namespace& n : objects_.namespaces)
    if (n.name == ns.name)
      return status(EventCode::kAlreadyExists, object_name(ObjectKind::kNamespace, "", ns.name) + " exists already");
  objects_.namespaces.push_back(ns);
  return {};
}

EventStatus Engine::update_object(const Namespace& ns) {
  for (Namespace& n : objects_.namespaces)
    if (n.name == ns.name) {
      n = ns;
      return {};
    }
  return status(EventCode::kNotFound, object_name(ObjectKind::kNamespace, "", ns.name) + " is not held");
}

EventStatus Engine::add_object(const SelectingObject& obj) {
  for (const SelectingObject& o : objects_.selecting)
    if (o.kind == obj.kind && o.namespace_name == obj.namespace_name && o.name == obj.name)
      return status(EventCode::kAlreadyExists,
                    object_name(kind_of(obj), obj.namespace_name, obj.name) + " exists already");
  objects_.selecting.push_back(obj);
  return {};
}

EventStatus Engine::update_object(const SelectingObject& obj) {
  for (SelectingObject& o : objects_.selecting)
    if (o.kind == obj.kind && o.namespace_name == obj.namespace_name && o.name == obj.name) {
      o = obj;
      return {};
    }
  return status(EventCode::kNotFound, object_name(kind_of(obj), obj.namespace_name, obj.name) + " is not held");
}

EventStatus Engine::add_object(const SharedDeviceGroup& group) {
  for (const SharedDeviceGroup& g : objects_.device_groups)
    if (g.name == group.name)
      return status(EventCode::kAlreadyExists,
                    object_name(ObjectKind::kSharedDeviceGroup, "", group.name) + " exists already");
  EventStatus out;
  if (group_model_) {
    snapshot_.take_device_warnings();
    try {
      snapshot_.add_device_group(group);
    } catch (const InputError& e) {
      return status(EventCode::kInvalid, e.what());
    }
    for (std::string& w : snapshot_.take_device_warnings()) out.warnings.push_back(std::move(w));
  }
  objects_.device_groups.push_back(group);
  return out;
}

EventStatus Engine::update_object(const SharedDeviceGroup& group) {
  auto it = std::find_if(objects_.device_groups.begin(), objects_.device_groups.end(),
                         [&](const SharedDeviceGroup& g) { return g.name == group.name; });
  if (it == objects_.device_groups.end())
    return status(EventCode::kNotFound, object_name(ObjectKind::kSharedDeviceGroup, "", group.name) + " is not held");
  EventStatus out;
  if (group_model_) {
    // Its binding is worked out again from its status and its pods, as a
    // fresh load would.
    snapshot_.take_device_warnings();
    snapshot_.remove_device_group(group.name);
    snapshot_.add_device_group(group);
    for (std::string& w : snapshot_.take_device_warnings()) out.warnings.push_back(std::move(w));
  }
  *it = group;
  return out;
}

// PriorityClasses: read when a pending pod is scheduled (its priority and
// policy, as admission resolves them then) and when a pod is added to the
// cache. The pods held keep theirs.
EventStatus Engine::add_object(const PriorityClass& cls) {
  // The two system classes are known without an object; the informer
  // lists them all the same, and their add is an add.
  if (std::any_of(objects_.priority_classes.begin(), objects_.priority_classes.end(),
                  [&](const PriorityClass& c) { return c.name == cls.name; }))
    return status(EventCode::kAlreadyExists, object_name(ObjectKind::kPriorityClass, "", cls.name) + " exists already");
  objects_.priority_classes.push_back(cls);
  return {};
}

EventStatus Engine::update_object(const PriorityClass& cls) {
  auto it = std::find_if(objects_.priority_classes.begin(), objects_.priority_classes.end(),
                         [&](const PriorityClass& c) { return c.name == cls.name; });
  if (it == objects_.priority_classes.end())
    return status(EventCode::kNotFound, object_name(ObjectKind::kPriorityClass, "", cls.name) + " is not held");
  // ValidatePriorityClassUpdate: value and preemptionPolicy are immutable.
  if (it->value != cls.value)
    return status(EventCode::kInvalid, object_name(ObjectKind::kPriorityClass, "", cls.name) +
                                           ": value may not be changed in an update (" + std::to_string(it->value) +
                                           " to " + std::to_string(cls.value) + ")");
  if (it->preemption_policy != cls.preemption_policy)
    return status(EventCode::kInvalid, object_name(ObjectKind::kPriorityClass, "", cls.name) +
                                           ": preemptionPolicy may not be changed in an update");
  *it = cls;
  return {};
}

// PodDisruptionBudgets: read when a pod preempts (which victims violate a
// budget), their status as the disruption controller last wrote it.
EventStatus Engine::add_object(const PodDisruptionBudget& pdb) {
  for (const PodDisruptionBudget& b : objects_.pdbs)
    if (b.namespace_name == pdb.namespace_name && b.name == pdb.name)
      return status(EventCode::kAlreadyExists,
                    object_name(ObjectKind::kPodDisruptionBudget, pdb.namespace_name, pdb.name) + " exists already");
  PodDisruptionBudget b = pdb;
  std::sort(b.disrupted_pods.begin(), b.disrupted_pods.end());
  objects_.pdbs.push_back(std::move(b));
  return {};
}

EventStatus Engine::update_object(const PodDisruptionBudget& pdb) {
  for (PodDisruptionBudget& b : objects_.pdbs)
    if (b.namespace_name == pdb.namespace_name && b.name == pdb.name) {
      b = pdb;
      std::sort(b.disrupted_pods.begin(), b.disrupted_pods.end());
      return {};
    }
  return status(EventCode::kNotFound,
                object_name(ObjectKind::kPodDisruptionBudget, pdb.namespace_name, pdb.name) + " is not held");
}

// Pod groups: read when a gang is taken (schedule_group) and by
// pod_group_status, by index into objects_.pod_groups, which neither keeps
// past its call: entries may move. One object is the run of entries of its
// API, namespace and name (a Workload's groups, in spec order).
namespace {

bool same_pod_group_object(const PodGroupObject& g, ObjectKind kind, std::string_view ns, std::string_view name) {
  return object_kind_of(g.api) == kind && g.namespace_name == ns && g.name == name;
}

// "" when `groups` is one object's groups; else why not.
std::string pod_group_object_problem(const std::vector<PodGroupObject>& groups) {
  if (groups.empty()) return "pod group object: no groups given (a Workload has at least one podGroups[] item)";
  const PodGroupObject& first = groups.front();
  const ObjectKind kind = object_kind_of(first.api);
  const std::string what = object_name(kind, first.namespace_name, first.name);
  if (kind != ObjectKind::kWorkload && groups.size() != 1)
    return what + ": a PodGroup is one group, got " + std::to_string(groups.size());
  for (size_t i = 0; i < groups.size(); ++i) {
    const PodGroupObject& g = groups[i];
    if (!same_pod_group_object(g, kind, first.namespace_name, first.name))
      return what + ": groups[" + std::to_string(i) + "] is " +
             object_name(object_kind_of(g.api), g.namespace_name, g.name) + " (one object's groups at a time)";
    if (kind == ObjectKind::kWorkload && g.pod_group.empty())
      return what + ": spec.podGroups[" + std::to_string(i) + "].name: required";
    for (size_t j = 0; j < i; ++j)
      if (groups[j].pod_group == g.pod_group)
        return what + ": spec.podGroups[" + std::to_string(i) + "].name: duplicate value " +
               quote_for_message(g.pod_group, 200);
  }
  return {};
}

}  // namespace

EventStatus Engine::add_object(const std::vector<PodGroupObject>& groups) {
  if (std::string problem = pod_group_object_problem(groups); !problem.empty())
    return status(EventCode::kInvalid, std::move(problem));
  const PodGroupObject& first = groups.front();
  const ObjectKind kind = object_kind_of(first.api);
  for (const PodGroupObject& g : objects_.pod_groups)
    if (same_pod_group_object(g, kind, first.namespace_name, first.name))
      return status(EventCode::kAlreadyExists, object_name(kind, first.namespace_name, first.name) + " exists already");
  objects_.pod_groups.insert(objects_.pod_groups.end(), groups.begin(), groups.end());
  return {};
}

EventStatus Engine::update_object(const std::vector<PodGroupObject>& groups) {
  if (std::string problem = pod_group_object_problem(groups); !problem.empty())
    return status(EventCode::kInvalid, std::move(problem));
  const PodGroupObject& first = groups.front();
  const ObjectKind kind = object_kind_of(first.api);
  auto& v = objects_.pod_groups;
  const auto at = std::find_if(v.begin(), v.end(), [&](const PodGroupObject& g) {
    return same_pod_group_object(g, kind, first.namespace_name, first.name);
  });
  if (at == v.end())
    return status(EventCode::kNotFound, object_name(kind, first.namespace_name, first.name) + " is not held");
  // The new version takes the old one's place, whole: a Workload's group
  // missing from it is gone, a new one is there.
  const auto pos = at - v.begin();
  v.erase(std::remove_if(at, v.end(),
                         [&](const PodGroupObject& g) {
                           return same_pod_group_object(g, kind, first.namespace_name, first.name);
                         }),
          v.end());
  v.insert(v.begin() + pos, groups.begin(), groups.end());
  return {};
}

EventStatus Engine::remove_object(ObjectKind kind, std::string_view namespace_name, std::string_view name) {
  const auto not_found = [&] {
    return status(EventCode::kNotFound, object_name(kind, namespace_name, name) + " is not held");
  };
  switch (kind) {
    case ObjectKind::kNamespace: {
      auto& v = objects_.namespaces;
      auto it = std::find_if(v.begin(), v.end(), [&](const Namespace& n) { return n.name == name; });
      if (it == v.end()) return not_found();
      v.erase(it);
      return {};
    }
    case ObjectKind::kSharedDeviceGroup: {
      auto& v = objects_.device_groups;
      auto it = std::find_if(v.begin(), v.end(), [&](const SharedDeviceGroup& g) { return g.name == name; });
      if (it == v.end()) return not_found();
      if (group_model_) {
        snapshot_.remove_device_group(name);
        snapshot_.take_device_warnings();
      }
      v.erase(it);
      return {};
    }
    case ObjectKind::kPriorityClass: {
      auto& v = objects_.priority_classes;
      auto it = std::find_if(v.begin(), v.end(), [&](const PriorityClass& c) { return c.name == name; });
      if (it == v.end()) return not_found();
      v.erase(it);
      return {};
    }
    case ObjectKind::kPodDisruptionBudget: {
      auto& v = objects_.pdbs;
      auto it = std::find_if(v.begin(), v.end(), [&](const PodDisruptionBudget& b) {
        return b.namespace_name == namespace_name && b.name == name;
      });
      if (it == v.end()) return not_found();
      v.erase(it);
      return {};
    }
    case ObjectKind::kWorkload:
    case ObjectKind::kPodGroup:
    case ObjectKind::kCoschedulingPodGroup: {
      // A Workload's groups go together.
      auto& v = objects_.pod_groups;
      const auto end = std::remove_if(v.begin(), v.end(), [&](const PodGroupObject& g) {
        return same_pod_group_object(g, kind, namespace_name, name);
      });
      if (end == v.end()) return not_found();
      v.erase(end, v.end());
      return {};
    }
    case ObjectKind::kService:
    case ObjectKind::kReplicationController:
    case ObjectKind::kReplicaSet:
    case ObjectKind::kStatefulSet: {
      auto& v = objects_.selecting;
      auto it = std::find_if(v.begin(), v.end(), [&](const SelectingObject& o) {
        return same_kind(o.kind, kind) && o.namespace_name == namespace_name && o.name == name;
      });
      if (it == v.end()) return not_found();
      v.erase(it);
      return {};
    }
  }
  return not_found();
}

}  // namespace bulkscore
