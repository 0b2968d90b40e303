#include "host/input/priority.hpp"

#include "host/common.hpp"
#include "host/input/quote.hpp"

namespace bulkscore {
namespace {

std::string where(const Pod& pod) {
  return (pod.origin.empty() ? std::string("pod") : pod.origin) + ": Pod " + quote_for_message(pod.key(), 200);
}

}  // namespace

const std::vector<PriorityClass>& system_priority_classes() {
  static const std::vector<PriorityClass> classes{
      {"system-node-critical", 2000001000, false, "PreemptLowerPriority", "the API server's system class"},
      {"system-cluster-critical", 2000000000, false, "PreemptLowerPriority", "the API server's system class"},
  };
  return classes;
}

const PriorityClass* find_priority_class(const ClusterObjects& objects, const std::string& name) {
  for (const PriorityClass& c : objects.priority_classes)
    if (c.name == name) return &c;
  for (const PriorityClass& c : system_priority_classes())
    if (c.name == name) return &c;
  return nullptr;
}

void resolve_pod_priority(Pod& pod, const ClusterObjects& objects) {
  const PriorityClass* cls = nullptr;
  if (!pod.priority_class_name.empty()) {
    cls = find_priority_class(objects, pod.priority_class_name);
    if (!cls) {
      // A pod read back from a cluster passed admission: it carries its
      // priority, and its class may since have been deleted.
      if (pod.has_priority) return;
      throw InputError(where(pod) + ": spec.priorityClassName: no PriorityClass with name " +
                       quote_for_message(pod.priority_class_name, 200) + " was found");
    }
  } else {
    // The global default: the lowest value among the classes marked so.
    for (const PriorityClass& c : objects.priority_classes)
      if (c.global_default && (!cls || c.value < cls->value)) cls = &c;
  }
  if (pod.has_priority) {
    // A bound pod passed admission long ago (a class can be deleted and made
    // again with another value): its spec.priority stands. A pending one is
    // checked as admission checks it.
    if (cls && !pod.priority_class_name.empty() && pod.priority != cls->value && pod.node_name.empty())
      throw InputError(where(pod) + ": spec.priority: " + std::to_string(pod.priority) +
                       " differs from PriorityClass " + quote_for_message(cls->name, 200) + "'s value " +
                       std::to_string(cls->value) + " (the Priority admission plugin refuses such a pod)");
  } else {
    pod.priority = cls ? cls->value : 0;
    pod.has_priority = true;
  }
  if (cls && pod.priority_class_name.empty()) pod.priority_class_name = cls->name;
  if (pod.preemption_policy.empty()) pod.preemption_policy = cls ? cls->preemption_policy : "PreemptLowerPriority";
}

}  // namespace bulkscore
