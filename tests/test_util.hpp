// Test harness for the plugin tests: small builders for Node and Pod objects,
// and two runners that push one plugin through the same path the engine uses
// (Snapshot::build -> intern_pod_resources -> prepare_pod_query with a
// profile holding only that plugin -> the CPU backend), returning per-node
// filter verdicts with their reason strings, or per-node raw and normalized
// scores.
//
// Node order: results are indexed like the `nodes` argument (the snapshot
// keeps input order as node indices).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "host/engine/backend.hpp"
#include "host/engine/pod_query.hpp"
#include "host/input/config.hpp"
#include "host/input/model.hpp"
#include "host/snapshot/snapshot.hpp"
#include "plugins/evaluate.hpp"

namespace bulkscore::testutil {

constexpr int64_t kMiB = 1024 * 1024;

// ---- builders ---------------------------------------------------------------

// A node whose allocatable is cpu (millicores), memory (bytes) and pods. Extra
// resources go into `allocatable` directly.
// The default profile without system-default spreading (PodTopologySpread's
// defaultConstraints empty): its pods get upstream batching's signatures,
// which the default profile's do not.
inline const char* const kNoTopologyConfig = R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints: []
)";

inline Node make_node(const std::string& name, int64_t cpu_milli, int64_t memory, int64_t pods = 32,
                      StringMap labels = {}, std::vector<Taint> taints = {}, std::vector<ContainerImage> images = {}) {
  Node n;
  n.name = name;
  n.allocatable = {{"cpu", cpu_milli}, {"memory", memory}, {"pods", pods}};
  n.labels = std::move(labels);
  n.taints = std::move(taints);
  n.images = std::move(images);
  return n;
}

// A node with exactly this allocatable list (no implicit pods entry).
inline Node make_node_with(const std::string& name, ResourceList allocatable, StringMap labels = {}) {
  Node n;
  n.name = name;
  n.allocatable = std::move(allocatable);
  n.labels = std::move(labels);
  return n;
}

inline Node labelled_node(const std::string& name, StringMap labels) {
  return make_node(name, 1000, 1000, 32, std::move(labels));
}

inline Container container(ResourceList requests = {}, const std::string& image = "") {
  Container c;
  c.name = "c";
  c.image = image;
  c.requests = std::move(requests);
  return c;
}

inline Container image_container(const std::string& image) { return container({}, image); }

// An init container with restartPolicy Always.
inline Container sidecar(ResourceList requests = {}) {
  Container c = container(std::move(requests));
  c.restart_policy_always = true;
  return c;
}

inline ContainerPort host_port(const std::string& protocol, const std::string& ip, int32_t port) {
  ContainerPort p;
  p.container_port = port;
  p.host_port = port;
  p.protocol = protocol;
  p.host_ip = ip;
  return p;
}

inline Container container_with_ports(std::vector<ContainerPort> ports) {
  Container c = container();
  c.ports = std::move(ports);
  return c;
}

// A pending pod of the default profile.
inline Pod make_pod(const std::string& name, std::vector<Container> containers = {},
                    std::vector<Container> init_containers = {}) {
  Pod p;
  p.name = name;
  p.uid = "uid-" + name;
  p.scheduler_name = "default-scheduler";
  p.containers = std::move(containers);
  p.init_containers = std::move(init_containers);
  p.origin = "test: " + name;
  return p;
}

// `pod` running on `node`.
inline Pod on_node(Pod pod, const std::string& node) {
  pod.node_name = node;
  pod.phase = "Running";
  return pod;
}

// A running pod with one container requesting `requests`.
inline Pod running(const std::string& name, const std::string& node, ResourceList requests) {
  return on_node(make_pod(name, {container(std::move(requests))}), node);
}

inline Taint taint(const std::string& key, const std::string& value, const std::string& effect) {
  return Taint{key, value, effect};
}

inline Toleration toleration(const std::string& key, const std::string& op, const std::string& value,
                             const std::string& effect) {
  return Toleration{key, op, value, effect};
}

inline NodeSelectorRequirement requirement(const std::string& key, const std::string& op,
                                           std::vector<std::string> values = {}) {
  return NodeSelectorRequirement{key, op, std::move(values)};
}

inline NodeSelectorTerm expressions_term(std::vector<NodeSelectorRequirement> exprs) {
  NodeSelectorTerm t;
  t.match_expressions = std::move(exprs);
  return t;
}

inline NodeSelectorTerm fields_term(std::vector<NodeSelectorRequirement> fields) {
  NodeSelectorTerm t;
  t.match_fields = std::move(fields);
  return t;
}

// Sets the pod's required node affinity to these ORed terms.
inline void require_node_affinity(Pod& pod, std::vector<NodeSelectorTerm> terms) {
  if (!pod.affinity) pod.affinity = Affinity{};
  if (!pod.affinity->node_affinity) pod.affinity->node_affinity = NodeAffinity{};
  pod.affinity->node_affinity->required = NodeSelector{std::move(terms)};
}

inline void prefer_node_affinity(Pod& pod, std::vector<PreferredSchedulingTerm> terms) {
  if (!pod.affinity) pod.affinity = Affinity{};
  if (!pod.affinity->node_affinity) pod.affinity->node_affinity = NodeAffinity{};
  pod.affinity->node_affinity->preferred = std::move(terms);
  pod.affinity->node_affinity->has_preferred = true;
}

inline void set_node_selector(Pod& pod, StringMap selector) {
  pod.node_selector = std::move(selector);
  pod.has_node_selector = true;
}

// ---- runners ----------------------------------------------------------------

struct NodeFilterResult {
  Code code = Code::Success;
  std::vector<std::string> reasons;
};

struct FilterRun {
  // The plugin's PreFilter: Success, Skip (its Filter is not run: every node
  // passes), Unschedulable or UnschedulableAndUnresolvable (pod rejected).
  Code prefilter = Code::Success;
  std::string prefilter_message;
  // PreFilterResult node names (sorted), nullopt when it does not restrict.
  std::optional<std::vector<std::string>> candidates;
  // The Filter verdict on every node, PreFilterResult or not (as upstream's
  // unit tests call Filter directly); indexed like the input nodes.
  std::vector<NodeFilterResult> nodes;

  Code code(size_t i) const { return nodes.at(i).code; }
  const std::vector<std::string>& reasons(size_t i) const { return nodes.at(i).reasons; }
};

struct ScoreRun {
  bool skipped = false;             // PreScore returned Skip: the plugin's Score did not run
  std::string error;                // PreScore error
  std::vector<int64_t> raw;         // per node
  std::vector<int64_t> normalized;  // per node
};

// The reason strings of a filter outcome, from the plugin's own reasons().
inline std::vector<std::string> reason_strings(uint8_t plugin, uint64_t bits, const Snapshot& snap, const PodQuery& q,
                                               uint32_t node) {
  std::vector<std::string> out;
  const PodQueryView v = q.view();
  filter_reasons(plugin, bits, snap, v, node, out);
  return out;
}

// A profile that runs `plugin` alone at PreFilter and Filter (on top of
// `base`, which carries the plugin args).
inline ProfileConfig filter_only_profile(const std::string& plugin, ProfileConfig base = {}) {
  base.pre_filter = {plugin};
  base.filter = {plugin};
  base.pre_score.clear();
  base.score.clear();
  return base;
}

// A profile that scores with `plugin` alone, weight 1, no Filter.
inline ProfileConfig score_only_profile(const std::string& plugin, ProfileConfig base = {}) {
  base.pre_filter.clear();
  base.filter.clear();
  base.pre_score = {plugin};
  base.score = {PluginEntry{plugin, 1}};
  return base;
}

// `prepare`, when given, is applied to the snapshot right after it is built
// (e.g. configure_devices for the device plugins, node data).
inline FilterRun run_filter(const std::string& plugin, const std::vector<Node>& nodes,
                            const std::vector<Pod>& running_pods, const Pod& pod, ProfileConfig base = {},
                            const ClusterObjects* objects = nullptr,
                            const std::function<void(Snapshot&)>& prepare = {}) {
  Snapshot snap = Snapshot::build(nodes, running_pods);
  if (prepare) prepare(snap);
  const ProfilePlan plan = make_profile_plan(filter_only_profile(plugin, std::move(base)));
  intern_pod_for_plan(snap, pod, plan, objects);
  PodQuery q = prepare_pod_query(pod, snap, plan, TieBreak::First, 0, objects);

  FilterRun run;
  for (const auto& s : q.prefilter) {
    if (s.plugin != plugin) continue;
    run.prefilter = s.code;
    run.prefilter_message = s.message;
  }
  if (q.candidates) {
    std::vector<std::string> names;
    for (uint32_t i : *q.candidates) names.push_back(snap.node_name(i));
    std::sort(names.begin(), names.end());
    run.candidates = std::move(names);
  }

  EvalRequest req;
  req.want_verdicts = true;
  EvalResult out;
  make_cpu_backend()->evaluate(snap, q, req, out);
  for (uint32_t i = 0; i < snap.num_nodes(); ++i) {
    const NodeVerdict& v = out.verdicts.at(i);
    NodeFilterResult r;
    if (!v.feasible()) {
      r.code = v.code;
      r.reasons = reason_strings(v.plugin, v.reasons, snap, q, i);
    } else {
      EXPECT_EQ(v.code, Code::Success) << "node " << i << " was not visited";
    }
    run.nodes.push_back(std::move(r));
  }
  return run;
}

inline ScoreRun run_score(const std::string& plugin, const std::vector<Node>& nodes,
                          const std::vector<Pod>& running_pods, const Pod& pod, ProfileConfig base = {},
                          const ClusterObjects* objects = nullptr, const std::function<void(Snapshot&)>& prepare = {}) {
  Snapshot snap = Snapshot::build(nodes, running_pods);
  if (prepare) prepare(snap);
  const ProfilePlan plan = make_profile_plan(score_only_profile(plugin, std::move(base)));
  intern_pod_for_plan(snap, pod, plan, objects);
  PodQuery q = prepare_pod_query(pod, snap, plan, TieBreak::First, 0, objects);

  ScoreRun run;
  run.error = q.score_error;
  const PodQueryView v = q.view();
  if (v.num_scores == 0) {
    run.skipped = true;
    return run;
  }
  EvalRequest req;
  req.want_scores = true;
  req.want_verdicts = true;
  req.score_single = true;
  EvalResult out;
  make_cpu_backend()->evaluate(snap, q, req, out);
  const size_t F = out.scored_nodes.size();
  EXPECT_EQ(F, snap.num_nodes()) << "every node should be scored (the profile has no Filter)";
  run.raw.assign(snap.num_nodes(), -1);
  run.normalized.assign(snap.num_nodes(), -1);
  for (size_t i = 0; i < F; ++i) {
    run.raw[out.scored_nodes[i]] = out.raw_scores.at(i);
    run.normalized[out.scored_nodes[i]] = out.normalized_scores.at(i);
  }
  return run;
}

// Shorthand for the common expectation "this node passes".
inline NodeFilterResult fits() { return NodeFilterResult{}; }

inline bool operator==(const NodeFilterResult& a, const NodeFilterResult& b) {
  return a.code == b.code && a.reasons == b.reasons;
}

inline std::ostream& operator<<(std::ostream& os, const NodeFilterResult& r) {
  os << code_name(r.code) << " [";
  for (size_t i = 0; i < r.reasons.size(); ++i) os << (i ? ", " : "") << '"' << r.reasons[i] << '"';
  return os << "]";
}

inline NodeFilterResult rejected(Code code, std::vector<std::string> reasons) {
  return NodeFilterResult{code, std::move(reasons)};
}

}  // namespace bulkscore::testutil

namespace bulkscore {
// So gtest prints codes by name.
inline std::ostream& operator<<(std::ostream& os, Code c) { return os << code_name(c); }
}  // namespace bulkscore
