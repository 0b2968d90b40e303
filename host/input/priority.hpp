// Pod priority as the Priority admission plugin sets it (host only): a pod
// without spec.priority gets its PriorityClass's value (the named class,
// else the global default class, else 0) and, without a
// spec.preemptionPolicy, the class's policy.
#pragma once

#include <vector>

#include "host/input/model.hpp"

namespace bulkscore {

// The class of that name: one of `objects`, or one of the two system
// classes every cluster has; nullptr when there is none.
const PriorityClass* find_priority_class(const ClusterObjects& objects, const std::string& name);

// The two classes every cluster has (the API server creates them):
// system-node-critical and system-cluster-critical, with their values. A pod
// may name them without --objects listing them; a listed one must keep the
// value.
const std::vector<PriorityClass>& system_priority_classes();

// Fills pod.priority (and has_priority), pod.priority_class_name and
// pod.preemption_policy as admission would. InputError naming the pod and
// the field: a class that does not exist (unless the pod carries its
// priority already); a pending pod's spec.priority that differs from its
// class's value (admission refuses such a pod).
void resolve_pod_priority(Pod& pod, const ClusterObjects& objects);

// Whether the pod may preempt: its policy is not Never.
inline bool may_preempt(const Pod& pod) { return pod.preemption_policy != "Never"; }

}  // namespace bulkscore
