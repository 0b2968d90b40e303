// A random cluster where most pending pods must preempt, with only what the
// bulk dry run covers on every backend (node_local_dry_run: resources, the
// pod count, host ports, taints, node selectors): nodes full of pods of a
// priority mix with start times and host ports, PodDisruptionBudgets over
// two apps (some already used up, some listing disrupted pods), pending pods
// of higher priorities. The device dry run's tests (test_cuda_parity: GPU
// against CPU; test_backend_fallback: the engine's one-pass path and its
// fault) share it.
#pragma once

#include <cstdint>
#include <string>

#include "bench/generator/generator.hpp"
#include "tests/test_util.hpp"

namespace bulkscore::testutil {

inline Cluster random_preempting_cluster(SplitMix64& rng, uint32_t num_nodes, uint32_t pods_per_node,
                                         uint32_t num_pending) {
  static const char* const kApps[] = {"web", "db", "batch"};
  Cluster c;
  for (uint32_t i = 0; i < num_nodes; ++i) {
    Node n = make_node("node-" + std::to_string(i), 2000 + 1000 * static_cast<int64_t>(rng.below(3)),
                       8192 * kMiB, 4 + static_cast<int64_t>(rng.below(6)));
    n.labels["tier"] = rng.below(5) == 0 ? "edge" : "core";
    if (rng.below(8) == 0) n.taints.push_back(taint("maintenance", "yes", "NoSchedule"));
    c.nodes.push_back(n);
  }
  const auto add_extras = [&](Pod& p) {
    p.namespace_name = "default";
    p.labels["app"] = kApps[rng.below(3)];
    if (rng.below(6) == 0) p.containers[0].ports.push_back(host_port("TCP", "", rng.below(2) ? 8080 : 9090));
    if (rng.below(4) == 0) p.tolerations.push_back(toleration("maintenance", "Exists", "", "NoSchedule"));
    p.has_priority = true;
  };
  uint32_t k = 0;
  for (uint32_t i = 0; i < num_nodes; ++i)
    for (uint32_t j = 0; j < pods_per_node; ++j) {
      Pod p = on_node(make_pod("run-" + std::to_string(k++),
                               {container({{"cpu", 200 * static_cast<int64_t>(1 + rng.below(5))},
                                           {"memory", 256 * kMiB * static_cast<int64_t>(1 + rng.below(4))}})}),
                      c.nodes[i].name);
      add_extras(p);
      p.priority = static_cast<int32_t>(rng.below(5)) * 100 - 100;
      p.start_time_ns = 1000000000LL * static_cast<int64_t>(rng.below(8));  // equal starts: ties in the order
      c.running_pods.push_back(p);
    }
  for (uint32_t i = 0; i < num_pending; ++i) {
    Pod p = make_pod("pending-" + std::to_string(i),
                     {container({{"cpu", 500 * static_cast<int64_t>(1 + rng.below(5))},
                                 {"memory", 512 * kMiB * static_cast<int64_t>(1 + rng.below(3))}})});
    add_extras(p);
    p.priority = 150 + static_cast<int32_t>(rng.below(4)) * 100;
    p.phase = "Pending";
    if (rng.below(5) == 0) set_node_selector(p, {{"tier", "core"}});
    c.pending_pods.push_back(p);
  }
  for (const char* app : {"web", "db"}) {
    PodDisruptionBudget b;
    b.namespace_name = "default";
    b.name = std::string("pdb-") + app;
    b.selector = LabelSelector{{{"app", app}}, {}};
    b.disruptions_allowed = static_cast<int32_t>(rng.below(4));
    b.current_healthy = static_cast<int32_t>(num_nodes * pods_per_node / 3);
    b.desired_healthy = b.current_healthy - b.disruptions_allowed;
    if (rng.below(2)) b.disrupted_pods.push_back("run-" + std::to_string(rng.below(k ? k : 1)));
    c.objects.pdbs.push_back(b);
  }
  return c;
}

// Puts the cluster under hard spreading: nodes in 3 zones with hostname
// labels, half the running pods and every pending one of app "web", the
// pending pods spread over zone (maxSkew 3) and hostname (maxSkew 1),
// DoNotSchedule, so their Filter reads PodTopologySpread's tables and the
// dry run carries what each victim takes from them.
inline void add_hard_spreading(Cluster& c) {
  for (size_t i = 0; i < c.nodes.size(); ++i) {
    c.nodes[i].labels["topology.kubernetes.io/zone"] = "zone-" + std::to_string(i % 3);
    c.nodes[i].labels["kubernetes.io/hostname"] = c.nodes[i].name;
  }
  for (size_t i = 0; i < c.running_pods.size(); ++i)
    if (i % 2) c.running_pods[i].labels["app"] = "web";
  for (Pod& p : c.pending_pods) {
    p.labels["app"] = "web";
    for (const auto& [key, skew] : {std::pair<const char*, int32_t>{"topology.kubernetes.io/zone", 3},
                                    std::pair<const char*, int32_t>{"kubernetes.io/hostname", 1}}) {
      TopologySpreadConstraint t;
      t.max_skew = skew;
      t.topology_key = key;
      t.when_unsatisfiable = "DoNotSchedule";
      t.label_selector = LabelSelector{};
      t.label_selector->match_labels["app"] = "web";
      p.topology_spread_constraints.push_back(std::move(t));
    }
  }
}

}  // namespace bulkscore::testutil
