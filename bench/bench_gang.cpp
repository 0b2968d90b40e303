// Gang scheduling in bulk (issue 23, item 7): gangs of 8, 64 and 1,024
// identical members on 5,000 and 20,000 nodes (32 cpu each), all or nothing through
// Engine::schedule_all with the exact batch cache.
//  * admitted: every gang fits (minCount = its size);
//  * rejected: each gang has one more member than fits anywhere (a last
//    member asking more than a node has, minCount = all): its identical
//    members are placed, then all undone;
//  * rejected_early: Coscheduling PodGroups whose minResources the cluster
//    cannot cover (PreFilter): no member placed;
//  * plain: the admitted run's pods without groups (what gangs cost on top).
// Counters: pods_per_s (member pods through the queue), groups_per_s.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "host/engine/engine.hpp"
#include "host/engine/executor.hpp"
#include "host/input/config.hpp"
#include "plugins/pod_group.hpp"

namespace bulkscore {
namespace {

// kPlain: the same pods as kAdmitted without any group (the baseline).
enum class Kind { kPlain, kAdmitted, kRejected, kRejectedEarly };

struct Workload {
  Cluster cluster;
  std::vector<Pod> pending;
  uint32_t groups = 0;
};

Workload workload(uint32_t nodes, uint32_t gang_size, uint32_t total_pods, Kind kind) {
  Workload w;
  for (uint32_t i = 0; i < nodes; ++i) {
    Node n;
    n.name = "node-" + std::to_string(i);
    n.labels = {{"kubernetes.io/hostname", n.name}, {"topology.kubernetes.io/zone", "zone-" + std::to_string(i % 8)}};
    n.allocatable = {{"cpu", 32000}, {"memory", 256LL << 30}, {"pods", 110}};
    w.cluster.nodes.push_back(n);
  }
  w.groups = std::max<uint32_t>(1, total_pods / gang_size);
  for (uint32_t g = 0; g < w.groups; ++g) {
    const std::string name = "gang-" + std::to_string(g);
    PodGroupObject obj;
    obj.namespace_name = "ml";
    obj.name = name;
    obj.gang = true;
    const uint32_t members = gang_size + (kind == Kind::kRejected ? 1 : 0);
    obj.min_count = static_cast<int32_t>(members);
    if (kind == Kind::kRejectedEarly) {
      obj.api = PodGroupObject::Api::kCoscheduling;
      obj.min_resources = {{"cpu", int64_t{nodes} * 32000 + 1}};
    } else {
      obj.api = PodGroupObject::Api::kWorkload;
      obj.name = "job-" + std::to_string(g);
      obj.pod_group = "workers";
    }
    if (kind != Kind::kPlain) w.cluster.objects.pod_groups.push_back(obj);
    for (uint32_t k = 0; k < members; ++k) {
      Pod p;
      p.name = name + "-" + std::to_string(k);
      p.namespace_name = "ml";
      p.uid = p.name;
      p.scheduler_name = "default-scheduler";
      Container c;
      c.name = "main";
      // The rejected gangs' last member fits no node.
      const bool misfit = kind == Kind::kRejected && k + 1 == members;
      c.requests = {{"cpu", misfit ? 64000 : 1000}, {"memory", 1LL << 30}};
      p.containers.push_back(c);
      if (kind == Kind::kRejectedEarly) {
        p.labels[kCoschedulingPodGroupLabel] = name;
      } else if (kind != Kind::kPlain) {
        p.workload_name = obj.name;
        p.workload_pod_group = "workers";
      }
      w.pending.push_back(p);
    }
  }
  return w;
}

void gangs(benchmark::State& state, uint32_t nodes, uint32_t gang_size, Kind kind) {
  // About 8,192 member pods per run (one gang of 1,024 members: eight).
  const Workload w = workload(nodes, gang_size, 8192, kind);
  EngineOptions options;
  options.backend = "cpu";
  options.tie_break = TieBreak::First;
  options.batching = Batching::Exact;
  Engine engine(default_scheduler_config(), options);
  uint64_t admitted = 0, rejected = 0;
  for (auto _ : state) {
    state.PauseTiming();
    engine.load(w.cluster);
    state.ResumeTiming();
    const std::vector<ScheduleResult> results = engine.schedule_all(w.pending);
    for (const ScheduleResult& r : results) {
      admitted += r.group_outcome == GroupOutcome::kAdmitted && r.node >= 0 ? 1 : 0;
      rejected += r.group_outcome == GroupOutcome::kRejected ? 1 : 0;
    }
  }
  const double iterations = static_cast<double>(state.iterations());
  state.counters["pods_per_s"] =
      benchmark::Counter(iterations * static_cast<double>(w.pending.size()), benchmark::Counter::kIsRate);
  state.counters["groups_per_s"] = benchmark::Counter(iterations * w.groups, benchmark::Counter::kIsRate);
  state.counters["admitted_share"] = static_cast<double>(admitted) / (iterations * static_cast<double>(w.pending.size()));
  state.counters["rejected_share"] = static_cast<double>(rejected) / (iterations * static_cast<double>(w.pending.size()));
  const BatchCounters b = engine.batch_counters();
  state.counters["batch_hits"] = static_cast<double>(b.hint_used) / iterations;
}

// Topology-aware gangs (item 4): `nodes` nodes in `racks` racks (label
// example.com/rack), a quarter of each rack's nodes busy (so racks score
// apart), gangs of `gang_size` members that require one rack.
//  * BM_GangDomains: the choice alone (Engine::rank_gang_domains: one
//    evaluation of the first member over every node, then every rack at
//    once), per gang: the target is the best rack in <= 5 ms at 20,000
//    nodes and 500 racks;
//  * BM_GangTopology: whole gangs through schedule_all (choice, members
//    placed in the chosen rack by the batch cache), groups/s and pods/s.
Workload rack_workload(uint32_t nodes, uint32_t racks, uint32_t gang_size, uint32_t gangs) {
  Workload w;
  const uint32_t per_rack = std::max<uint32_t>(1, nodes / racks);
  for (uint32_t i = 0; i < nodes; ++i) {
    Node n;
    n.name = "node-" + std::to_string(i);
    n.labels = {{"kubernetes.io/hostname", n.name}, {"example.com/rack", "rack-" + std::to_string(i / per_rack)}};
    n.allocatable = {{"cpu", 32000}, {"memory", 256LL << 30}, {"pods", 110}};
    w.cluster.nodes.push_back(n);
    if (i % 4 == 0) {
      // A busy node: racks differ in free room and in score.
      Pod busy;
      busy.name = "busy-" + std::to_string(i);
      busy.namespace_name = "default";
      busy.uid = busy.name;
      busy.node_name = n.name;
      busy.phase = "Running";
      Container c;
      c.name = "main";
      c.requests = {{"cpu", 8000 + int64_t{(i * 7919) % 16} * 1000}, {"memory", 8LL << 30}};
      busy.containers.push_back(c);
      w.cluster.running_pods.push_back(busy);
    }
  }
  w.groups = gangs;
  for (uint32_t g = 0; g < gangs; ++g) {
    PodGroupObject obj;
    obj.api = PodGroupObject::Api::kWorkload;
    obj.namespace_name = "ml";
    obj.name = "job-" + std::to_string(g);
    obj.pod_group = "workers";
    obj.gang = true;
    obj.min_count = static_cast<int32_t>(gang_size);
    obj.topology_key = "example.com/rack";
    obj.topology_required = true;
    w.cluster.objects.pod_groups.push_back(obj);
    for (uint32_t k = 0; k < gang_size; ++k) {
      Pod p;
      p.name = obj.name + "-" + std::to_string(k);
      p.namespace_name = "ml";
      p.uid = p.name;
      p.scheduler_name = "default-scheduler";
      Container c;
      c.name = "main";
      c.requests = {{"cpu", 4000}, {"memory", 16LL << 30}};
      p.containers.push_back(c);
      p.workload_name = obj.name;
      p.workload_pod_group = "workers";
      w.pending.push_back(p);
    }
  }
  return w;
}

EngineOptions gang_options() {
  EngineOptions options;
  options.backend = "cpu";
  options.tie_break = TieBreak::First;
  options.batching = Batching::Exact;
  return options;
}

void gang_domains(benchmark::State& state, uint32_t nodes, uint32_t racks, uint32_t gang_size) {
  const Workload w = rack_workload(nodes, racks, gang_size, 1);
  Engine engine(default_scheduler_config(), gang_options());
  engine.load(w.cluster);
  size_t domains = 0;
  for (auto _ : state) {
    const GangDomainRanking r = engine.rank_gang_domains(w.pending);
    domains = r.domains.size();
    benchmark::DoNotOptimize(r.domains.data());
  }
  state.counters["domains"] = static_cast<double>(domains);
  state.counters["ns_per_node"] = benchmark::Counter(static_cast<double>(nodes), benchmark::Counter::kIsIterationInvariantRate |
                                                                                    benchmark::Counter::kInvert);
}

void gang_topology(benchmark::State& state, uint32_t nodes, uint32_t racks, uint32_t gang_size) {
  // 64 gangs a run: they fill racks one after another.
  const Workload w = rack_workload(nodes, racks, gang_size, 64);
  Engine engine(default_scheduler_config(), gang_options());
  uint64_t admitted = 0;
  for (auto _ : state) {
    state.PauseTiming();
    engine.load(w.cluster);
    state.ResumeTiming();
    for (const ScheduleResult& r : engine.schedule_all(w.pending))
      admitted += r.group_outcome == GroupOutcome::kAdmitted && r.node >= 0 ? 1 : 0;
  }
  const double iterations = static_cast<double>(state.iterations());
  state.counters["pods_per_s"] =
      benchmark::Counter(iterations * static_cast<double>(w.pending.size()), benchmark::Counter::kIsRate);
  state.counters["groups_per_s"] = benchmark::Counter(iterations * w.groups, benchmark::Counter::kIsRate);
  state.counters["admitted_share"] = static_cast<double>(admitted) / (iterations * static_cast<double>(w.pending.size()));
}

void register_all() {
  for (const uint32_t nodes : {5000u, 20000u}) {
    const std::string suffix = "/" + std::to_string(nodes) + "Nodes/500Racks/64Members";
    benchmark::RegisterBenchmark(("BM_GangDomains" + suffix).c_str(), gang_domains, nodes, 500u, 64u)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->MinTime(0.5);
    benchmark::RegisterBenchmark(("BM_GangTopology" + suffix).c_str(), gang_topology, nodes, 500u, 64u)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->MinTime(0.5);
  }
  static const std::pair<Kind, const char*> kKinds[] = {
      {Kind::kPlain, "plain"}, {Kind::kAdmitted, "admitted"}, {Kind::kRejected, "rejected"}, {Kind::kRejectedEarly, "rejected_early"}};
  for (const auto& [kind, label] : kKinds)
    for (const uint32_t nodes : {5000u, 20000u})
      for (const uint32_t size : {8u, 64u, 1024u}) {
        const std::string name = std::string("BM_Gang/") + label + "/" + std::to_string(nodes) + "Nodes/" +
                                 std::to_string(size) + "Members";
        benchmark::RegisterBenchmark(name.c_str(), gangs, nodes, size, kind)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime()
            ->MinTime(0.5);
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
