// DefaultPreemption in bulk (issue 25): a cluster whose nodes are full of
// lower-priority pods (a priority mix, PodDisruptionBudgets over two apps),
// and pending pods that must each preempt; every potential node dry-run
// (minCandidateNodesPercentage 100). The exact dry run (upstream's steps one
// node after another, PreFilter afresh per check) and the bulk one (one
// PreFilter state, the nodes in parallel; "bulk-cuda": the same on the
// CUDA backend, where a device answers) side by side, in one binary.
// A second family gives the pending pods a Filter that reads other nodes'
// pods: hard spreading over zone and hostname (Spread), or required
// hostname anti-affinity to their own app (AntiAffinity), which the bulk
// dry run answers from PreFilter's tables less the removed pods' counts in
// the node's domains.
// A third family (NoVictims) sends pods of priority 0, the lowest there
// is, that fit nowhere: they outrank no pod, so every potential node is
// "No preemption victims found" (what a full cluster answers a pod of its
// own priority, the common case), on both dry-run paths.
// Counters: pods_per_s (every pending pod, all preempting), us_per_preempt
// (the wall time of a preempting pod's cycle, its dry run included),
// preempted_share.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "host/common.hpp"
#include "host/engine/backend.hpp"
#include "host/engine/engine.hpp"
#include "host/input/config.hpp"

namespace bulkscore {
namespace {

struct Workload {
  Cluster cluster;
  std::vector<Pod> pending;
};

Pod make(const std::string& name, int32_t priority, int64_t cpu_milli, const std::string& node, int64_t start_s) {
  Pod p;
  p.name = name;
  p.namespace_name = "default";
  p.uid = name;
  p.scheduler_name = "default-scheduler";
  Container c;
  c.name = "main";
  c.requests = {{"cpu", cpu_milli}, {"memory", 512LL << 20}};
  p.containers.push_back(c);
  p.priority = priority;
  p.has_priority = true;
  p.node_name = node;
  p.phase = node.empty() ? "Pending" : "Running";
  if (!node.empty()) p.start_time_ns = start_s * 1000000000LL;
  return p;
}

// What the pending pods carry besides their requests.
enum class Topology { None, Spread, AntiAffinity, NoVictims };

// `nodes` nodes of 4 cpu in 3 zones, 4 pods of 900m each (priorities 0, 5
// and 10, apps a, b, c; budgets over a and b), and `pending` pods of
// priority 100 asking 3 cpu (app hi, with `topology`'s constraints over
// app hi: zone maxSkew 1 and hostname maxSkew 1, or hostname
// anti-affinity; a tenth of the running pods are app hi too, so the
// counts start uneven).
Workload workload(uint32_t nodes, uint32_t pending, Topology topology = Topology::None) {
  Workload w;
  uint64_t x = 0x9e3779b97f4a7c15ULL;
  const auto next = [&] {
    x = mix64(x + 0x632be59bd9b4e019ULL);
    return x;
  };
  for (uint32_t i = 0; i < nodes; ++i) {
    Node n;
    n.name = "node-" + std::to_string(i);
    n.labels = {{"kubernetes.io/hostname", n.name}, {"topology.kubernetes.io/zone", "zone-" + std::to_string(i % 3)}};
    n.allocatable = {{"cpu", 4000}, {"memory", 32LL << 30}, {"pods", 110}};
    w.cluster.nodes.push_back(n);
    for (uint32_t j = 0; j < 4; ++j) {
      static const int32_t kPriorities[] = {0, 0, 5, 10};
      static const char* const kApps[] = {"a", "b", "c"};
      Pod p = make("run-" + std::to_string(i) + "-" + std::to_string(j), kPriorities[next() % 4], 900, n.name,
                   static_cast<int64_t>(next() % 1000));
      p.labels["app"] = kApps[next() % 3];
      if (topology != Topology::None && next() % 10 == 0) p.labels["app"] = "hi";
      w.cluster.running_pods.push_back(p);
    }
  }
  for (const char* app : {"a", "b"}) {
    PodDisruptionBudget b;
    b.namespace_name = "default";
    b.name = std::string("pdb-") + app;
    b.selector = LabelSelector{{{"app", app}}, {}};
    b.disruptions_allowed = static_cast<int32_t>(nodes / 4);
    b.current_healthy = static_cast<int32_t>(nodes);
    b.desired_healthy = b.current_healthy - b.disruptions_allowed;
    w.cluster.objects.pdbs.push_back(b);
  }
  const LabelSelector own{{{"app", "hi"}}, {}};
  for (uint32_t i = 0; i < pending; ++i) {
    Pod p = make("hi-" + std::to_string(i), topology == Topology::NoVictims ? 0 : 100, 3000, "", 0);
    p.labels["app"] = "hi";
    if (topology == Topology::Spread)
      for (const char* key : {"topology.kubernetes.io/zone", "kubernetes.io/hostname"}) {
        TopologySpreadConstraint t;
        t.max_skew = 1;
        t.topology_key = key;
        t.when_unsatisfiable = "DoNotSchedule";
        t.label_selector = own;
        p.topology_spread_constraints.push_back(t);
      }
    if (topology == Topology::AntiAffinity) {
      PodAffinityTerm t;
      t.label_selector = own;
      t.topology_key = "kubernetes.io/hostname";
      // emplace, not assignment from a temporary: GCC 12 warned that the
      // moved temporary's vectors may be uninitialized (a false positive).
      p.affinity.emplace().pod_anti_affinity.emplace().required.push_back(t);
    }
    w.pending.push_back(p);
  }
  return w;
}

void preemption(benchmark::State& state, uint32_t nodes, uint32_t pending, EngineOptions::PreemptionDryRun mode,
                Topology topology, const std::string& backend) {
  const Workload w = workload(nodes, pending, topology);
  SchedulerConfig config = default_scheduler_config();
  for (ProfileConfig& p : config.profiles) p.default_preemption_args = {100, 100};
  EngineOptions options{backend, TieBreak::First, 42};
  options.preemption_dry_run = mode;
  Engine engine(config, options);
  uint64_t preempted = 0;
  double preempt_seconds = 0;
  for (auto _ : state) {
    state.PauseTiming();
    engine.load(w.cluster);
    state.ResumeTiming();
    for (const Pod& p : w.pending) {
      const auto t0 = std::chrono::steady_clock::now();
      const ScheduleResult r = engine.schedule(p);
      const auto t1 = std::chrono::steady_clock::now();
      if (!r.nominated_node.empty()) {
        ++preempted;
        preempt_seconds += std::chrono::duration<double>(t1 - t0).count();
      }
    }
  }
  const double pods_done = static_cast<double>(state.iterations()) * static_cast<double>(w.pending.size());
  state.counters["pods_per_s"] = benchmark::Counter(pods_done, benchmark::Counter::kIsRate);
  state.counters["us_per_preempt"] = preempted ? preempt_seconds * 1e6 / static_cast<double>(preempted) : 0.0;
  state.counters["preempted_share"] = static_cast<double>(preempted) / pods_done;
  state.counters["nodes"] = nodes;
}

// The bulk dry run on the CUDA backend too (one launch over every potential
// node, Backend::dry_run_preemption) where a device answers: "bulk-cuda".
void register_all() {
  const bool cuda = backend_unavailable_reason("cuda").empty();
  for (const auto& [topology, family] :
       {std::pair{Topology::None, "BM_PreemptionBasic"}, std::pair{Topology::Spread, "BM_PreemptionSpread"},
        std::pair{Topology::AntiAffinity, "BM_PreemptionAntiAffinity"},
        std::pair{Topology::NoVictims, "BM_PreemptionNoVictims"}})
    for (const uint32_t nodes : {1000u, 5000u})
      for (const auto mode : {EngineOptions::PreemptionDryRun::Exact, EngineOptions::PreemptionDryRun::Bulk})
        for (const std::string backend : {"cpu", "cuda"}) {
          const bool exact = mode == EngineOptions::PreemptionDryRun::Exact;
          if (backend == "cuda" && (exact || !cuda)) continue;
          // The exact path costs seconds per pod at these sizes: fewer pods.
          // (A pod that outranks no one costs both paths alike.)
          const bool slow = exact && topology != Topology::NoVictims;
          const uint32_t pending = slow ? (nodes > 1000 ? 2 : 10) : (nodes > 1000 ? 200 : 500);
          const std::string name = std::string(family) + "/" + (exact ? "exact" : "bulk") +
                                   (backend == "cuda" ? "-cuda" : "") + "/" + std::to_string(nodes) + "Nodes_" +
                                   std::to_string(pending) + "Pods";
          benchmark::RegisterBenchmark(name.c_str(), preemption, nodes, pending, mode, topology, backend)
              ->Unit(benchmark::kMillisecond)
              ->UseRealTime()
              ->Iterations(1);
        }
}

}  // namespace
}  // namespace bulkscore

int main(int argc, char** argv) {
  bulkscore::register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
