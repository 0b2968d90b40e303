// A plain, node-by-node DefaultPreemption written from upstream's algorithm
// (preemption.go's DryRunPreemption and SelectCandidate,
// default_preemption.go's SelectVictimsOnNode, GetOffsetAndNumCandidates,
// filterPodsWithPDBViolation, pickOneNodeForPreemption; util's
// MoreImportantPod), for the tests. It shares only Filter with the engine
// (Snapshot::build, PreFilter and filter_node: the plugins' rules, which
// their own tests cover): every check builds the cluster afresh from a list
// of pods, nothing is removed or added in place, and the node tree, the
// candidates' count, the reprieve, the PDB counting and the choice are its
// own. Slow and obvious on purpose.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "host/engine/pod_query.hpp"
#include "host/input/config.hpp"
#include "host/input/labels.hpp"
#include "host/input/model.hpp"
#include "host/snapshot/snapshot.hpp"

namespace bulkscore::refpreempt {

struct Input {
  std::vector<Node> nodes;
  std::vector<Pod> running;  // each with its node_name, in each node's pod order
  std::vector<PodDisruptionBudget> pdbs;
  ProfileConfig config;
  uint32_t offset = 0;  // where the dry run starts among the potential nodes
};

struct Candidate {
  std::string node;
  uint32_t index = 0;
  std::vector<Pod> victims;
  int64_t pdb_violations = 0;
};

struct Output {
  uint32_t potential_nodes = 0;
  uint32_t num_candidates = 0;
  std::vector<Candidate> candidates;  // in the order the dry run found them
  std::string nominated_node;
};

// Filter's verdict for `pod` on node `n` when exactly `running` run.
inline Code filter_status(const Input& in, const std::vector<Pod>& running, const Pod& pod, uint32_t n) {
  const ProfilePlan plan = make_profile_plan(in.config);
  ClusterObjects objects;
  objects.pdbs = in.pdbs;
  Snapshot snap = Snapshot::build(in.nodes, running);
  intern_pod_for_plan(snap, pod, plan, &objects);
  const PodQuery q = prepare_pod_query(pod, snap, plan, TieBreak::First, 0, &objects);
  if (q.rejected) {
    for (const PreFilterStatus& s : q.prefilter)
      if (s.code == Code::Unschedulable) return Code::Unschedulable;
    return Code::UnschedulableAndUnresolvable;
  }
  if (q.candidates && std::find(q.candidates->begin(), q.candidates->end(), n) == q.candidates->end())
    return Code::UnschedulableAndUnresolvable;
  const NodeVerdict v = filter_node(snap.view(), q.view(), n);
  return v.feasible() ? Code::Success : v.code;
}

// upstream's node tree: zones in the order their first node came, then the
// first node of every zone, the second of every zone, ...
inline std::vector<uint32_t> tree_order(const std::vector<Node>& nodes) {
  std::vector<std::string> zones;
  std::map<std::string, std::vector<uint32_t>> by_zone;
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    const auto label = [&](const char* k) {
      const auto it = nodes[i].labels.find(k);
      return it == nodes[i].labels.end() ? std::string() : it->second;
    };
    std::string region = label("topology.kubernetes.io/region"), zone = label("topology.kubernetes.io/zone");
    if (region.empty()) region = label("failure-domain.beta.kubernetes.io/region");
    if (zone.empty()) zone = label("failure-domain.beta.kubernetes.io/zone");
    const std::string key = region.empty() && zone.empty() ? std::string() : region + ":\x00:" + zone;
    if (!by_zone.count(key)) zones.push_back(key);
    by_zone[key].push_back(i);
  }
  std::vector<uint32_t> out;
  for (size_t round = 0; out.size() < nodes.size(); ++round)
    for (const std::string& z : zones)
      if (round < by_zone[z].size()) out.push_back(by_zone[z][round]);
  return out;
}

inline bool more_important(const Pod& a, const Pod& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  const int64_t ta = a.start_time_ns ? *a.start_time_ns : INT64_MAX;
  const int64_t tb = b.start_time_ns ? *b.start_time_ns : INT64_MAX;
  return ta < tb;
}

// SelectVictimsOnNode. False when the node is no candidate.
inline bool select_victims(const Input& in, const Pod& pod, uint32_t n, Candidate& out) {
  const std::string& name = in.nodes[n].name;
  std::vector<Pod> kept, lower;
  for (const Pod& p : in.running) (p.node_name == name && p.priority < pod.priority ? lower : kept).push_back(p);
  if (lower.empty()) return false;
  if (filter_status(in, kept, pod, n) != Code::Success) return false;
  std::stable_sort(lower.begin(), lower.end(), more_important);
  // filterPodsWithPDBViolation.
  std::vector<int64_t> allowed;
  for (const PodDisruptionBudget& b : in.pdbs) allowed.push_back(b.disruptions_allowed);
  std::vector<Pod> violating, other;
  for (const Pod& p : lower) {
    bool violates = false;
    for (size_t i = 0; i < in.pdbs.size() && !p.labels.empty(); ++i) {
      const PodDisruptionBudget& b = in.pdbs[i];
      if (b.namespace_name != p.namespace_name || !b.selector) continue;
      if (b.selector->match_labels.empty() && b.selector->match_expressions.empty()) continue;
      if (!selector_matches(*b.selector, p.labels)) continue;
      if (std::find(b.disrupted_pods.begin(), b.disrupted_pods.end(), p.name) != b.disrupted_pods.end()) continue;
      if (--allowed[i] < 0) violates = true;
    }
    (violates ? violating : other).push_back(p);
  }
  out = Candidate{name, n, {}, 0};
  const auto reprieve = [&](const Pod& p) {
    kept.push_back(p);
    if (filter_status(in, kept, pod, n) == Code::Success) return true;
    kept.pop_back();
    out.victims.push_back(p);
    return false;
  };
  for (const Pod& p : violating)
    if (!reprieve(p)) ++out.pdb_violations;
  for (const Pod& p : other) reprieve(p);
  return !out.victims.empty();
}

inline Output preempt(const Input& in, const Pod& pod) {
  Output o;
  std::vector<uint32_t> potential;
  for (uint32_t n : tree_order(in.nodes))
    if (filter_status(in, in.running, pod, n) == Code::Unschedulable) potential.push_back(n);
  const auto m = static_cast<int64_t>(potential.size());
  o.potential_nodes = static_cast<uint32_t>(m);
  if (m == 0) return o;
  const DefaultPreemptionArgs& args = in.config.default_preemption_args;
  const int64_t wanted = std::min<int64_t>(
      m, std::max<int64_t>(m * args.min_candidate_nodes_percentage / 100, args.min_candidate_nodes_absolute));
  o.num_candidates = static_cast<uint32_t>(wanted);
  int64_t without_violations = 0;
  for (int64_t i = 0; i < m; ++i) {
    Candidate c;
    if (!select_victims(in, pod, potential[static_cast<size_t>((in.offset + i) % m)], c)) continue;
    if (c.pdb_violations == 0) ++without_violations;
    o.candidates.push_back(c);
    if (without_violations > 0 && static_cast<int64_t>(o.candidates.size()) >= wanted) break;
  }
  if (o.candidates.empty()) return o;
  // pickOneNodeForPreemption, then the lowest node index.
  const auto key = [](const Candidate& c) {
    int32_t top = INT32_MIN;
    int64_t sum = 0;
    for (const Pod& v : c.victims) {
      top = std::max(top, v.priority);
      sum += static_cast<int64_t>(v.priority) + (int64_t{1} << 31);
    }
    int64_t earliest = INT64_MAX;
    for (const Pod& v : c.victims)
      if (v.priority == top) earliest = std::min(earliest, v.start_time_ns ? *v.start_time_ns : INT64_MAX);
    return std::make_tuple(c.pdb_violations, top, sum, c.victims.size(), -earliest, c.index);
  };
  const Candidate* best = &o.candidates.front();
  for (const Candidate& c : o.candidates)
    if (key(c) < key(*best)) best = &c;
  o.nominated_node = best->node;
  return o;
}

}  // namespace bulkscore::refpreempt
