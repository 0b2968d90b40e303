// Reading Kubernetes JSON as kubectl writes it: v1 NodeList, v1 PodList, a
// generic v1 List, or a single Node / Pod object; and the objects the
// topology plugins read (Services, controllers, Namespaces).
//
// Errors are InputError with "<file>: items[<i>] (<kind> \"<name>\"): <field>:
// <problem>". Unknown fields are ignored, as kubectl does.
#pragma once

#include <string>
#include <vector>

#include "host/input/model.hpp"

namespace bulkscore {

std::vector<Node> load_nodes_json(const std::string& path);
std::vector<Pod> load_pods_json(const std::string& path);

// The same from text in memory; `origin` names it in errors.
std::vector<Node> parse_nodes_json(const std::string& text, const std::string& origin);
std::vector<Pod> parse_pods_json(const std::string& text, const std::string& origin);
// One object, as an informer hands it over: a Node (or Pod), or a list of
// exactly one; `kind` may be absent (client-go's typed objects carry none).
Node parse_node_object_json(const std::string& text, const std::string& origin);
Pod parse_pod_object_json(const std::string& text, const std::string& origin);

// What `kubectl get svc,rc,rs,sts,ns -A -o json` prints (a List, a typed
// list or a single object), appended to `out` in file order: Namespaces,
// Services, ReplicationControllers, ReplicaSets, StatefulSets. Items of
// other kinds are skipped.
// Objects are validated as the API server validates them (names, labels,
// selectors), and a second object of one kind, namespace and name, in this
// file or one read before into `out`, is an InputError naming both.
void load_objects_json(const std::string& path, ClusterObjects& out);
ClusterObjects parse_objects_json(const std::string& text, const std::string& origin);
void parse_objects_json(const std::string& text, const std::string& origin, ClusterObjects& out);

// Splits pods into running (spec.nodeName set, phase not Succeeded/Failed, on a
// node in `nodes`) and pending (no nodeName, schedulerName in `scheduler_names`).
// A running pod whose node is missing is dropped with a line in
// Cluster::warnings (two kubectl calls are not one atomic snapshot).
// Terminal pods, pods being deleted and pods for other schedulers are left
// out with a line in Cluster::notes. Duplicate node or pod names are an
// InputError.
Cluster assemble_cluster(std::vector<Node> nodes, std::vector<Pod> pods,
                         const std::vector<std::string>& scheduler_names, const std::string& nodes_origin,
                         const std::string& pods_origin);

}  // namespace bulkscore
