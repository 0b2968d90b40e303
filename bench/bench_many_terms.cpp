// Issue 20, item 7: the per-pod cost of many pod (anti-)affinity terms and
// topology spread constraints. Nothing in the API server bounds how many a
// pod carries (docs/reliability.md), so the per-pod setup must grow about
// linearly with them.
//
//   BM_ManyTerms/<kind>/<N>   the engine's schedule() of 20 pods, each with N
//       terms of its own (required_anti: requiredDuringScheduling pod
//       anti-affinity on app In [..]; preferred: preferred pod affinity with
//       weights 1..100; spread: N topologySpreadConstraints on N node label
//       keys, half DoNotSchedule, half ScheduleAnyway), on 100 nodes in four
//       zones with 1,000 running pods. One iteration loads the cluster (not
//       timed) and schedules the 20 pods.
//
// Google Benchmark fits the time to N (the BigO line): about N before N^2
// was the defect. bench/many_terms.py writes the same shapes as JSON for
// the CLI (docs/performance.md, "Hardening").
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench_util.hpp"
#include "host/engine/engine.hpp"
#include "host/input/config.hpp"

namespace bulkscore {
namespace {

enum class Kind { RequiredAnti, Preferred, Spread };

constexpr uint32_t kNodes = 100;
constexpr uint32_t kRunning = 1000;
constexpr uint32_t kPending = 20;

std::string key(int64_t i) { return "example.com/k" + std::to_string(i); }

Cluster cluster(Kind kind, int64_t n) {
  Cluster c;
  for (uint32_t i = 0; i < kNodes; ++i) {
    Node node;
    node.name = "n" + std::to_string(i);
    node.allocatable = {{"cpu", 64000}, {"memory", int64_t(256) << 30}, {"pods", 110}};
    node.labels = {{"kubernetes.io/hostname", node.name}, {"topology.kubernetes.io/zone", "z" + std::to_string(i % 4)}};
    if (kind == Kind::Spread)
      for (int64_t k = 0; k < n; ++k) node.labels[key(k)] = "v" + std::to_string((i + static_cast<uint64_t>(k)) % 3);
    c.nodes.push_back(std::move(node));
  }
  for (uint32_t i = 0; i < kRunning; ++i) {
    Pod p;
    p.name = "r" + std::to_string(i);
    p.uid = "uid-" + p.name;
    p.node_name = "n" + std::to_string(i % kNodes);
    p.phase = "Running";
    p.labels = {{"app", "a" + std::to_string(i % 500)}};
    Container ct;
    ct.name = "c";
    ct.requests = {{"cpu", 100}, {"memory", int64_t(64) << 20}};
    p.containers.push_back(ct);
    c.running_pods.push_back(std::move(p));
  }
  return c;
}

// Pod p's N terms (or constraints), its own: they select app values from
// p * N on, so that the first pods' terms select the running pods.
std::vector<Pod> pending(Kind kind, int64_t n) {
  std::vector<Pod> out;
  out.reserve(kPending);
  for (uint32_t p = 0; p < kPending; ++p) {
    Pod& pod = out.emplace_back();
    pod.name = "p" + std::to_string(p);
    pod.uid = "uid-" + pod.name;
    pod.scheduler_name = "default-scheduler";
    pod.labels = {{"app", "pending-" + std::to_string(p)}};
    Container ct;
    ct.name = "c";
    ct.requests = {{"cpu", 100}, {"memory", int64_t(64) << 20}};
    pod.containers.push_back(ct);
    const auto term = [&](int64_t i) {
      PodAffinityTerm t;
      t.label_selector = LabelSelector{};
      t.label_selector->match_expressions.push_back({"app", "In", {"a" + std::to_string(p * n + i)}});
      t.topology_key = i % 2 ? "topology.kubernetes.io/zone" : "kubernetes.io/hostname";
      return t;
    };
    if (kind == Kind::RequiredAnti) {
      pod.affinity = Affinity{};
      pod.affinity->pod_anti_affinity = PodAffinity{};
      for (int64_t i = 0; i < n; ++i) pod.affinity->pod_anti_affinity->required.push_back(term(i));
    } else if (kind == Kind::Preferred) {
      pod.affinity = Affinity{};
      pod.affinity->pod_affinity = PodAffinity{};
      for (int64_t i = 0; i < n; ++i)
        pod.affinity->pod_affinity->preferred.push_back({static_cast<int32_t>(1 + i % 100), term(i)});
    } else {
      for (int64_t i = 0; i < n; ++i) {
        TopologySpreadConstraint c;
        c.max_skew = static_cast<int32_t>(1 + i % 5);
        c.topology_key = key(i);
        c.when_unsatisfiable = i % 2 ? "ScheduleAnyway" : "DoNotSchedule";
        c.label_selector = LabelSelector{};
        c.label_selector->match_labels = {{"app", "a" + std::to_string(p * n + i)}};
        pod.topology_spread_constraints.push_back(c);
      }
    }
  }
  return out;
}

void many_terms(benchmark::State& state, Kind kind) {
  const int64_t n = state.range(0);
  const Cluster c = cluster(kind, n);
  const std::vector<Pod> pods = pending(kind, n);
  Engine engine(default_scheduler_config(), EngineOptions{"cpu", TieBreak::First, 0, 1});
  benchutil::time_schedule_runs(state, engine, c, pods, kNodes);
  state.SetComplexityN(n);
  state.counters["terms_per_pod"] = static_cast<double>(n);
}

void register_benchmarks() {
  const struct {
    const char* name;
    Kind kind;
    int64_t max;
  } kinds[] = {{"required_anti", Kind::RequiredAnti, 4000}, {"preferred", Kind::Preferred, 4000}, {"spread", Kind::Spread, 2000}};
  for (const auto& k : kinds)
    benchmark::RegisterBenchmark((std::string("BM_ManyTerms/") + k.name).c_str(), many_terms, k.kind)
        ->Arg(k.max / 8)
        ->Arg(k.max / 4)
        ->Arg(k.max / 2)
        ->Arg(k.max)
        ->Complexity()
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
}

}  // namespace
}  // namespace bulkscore

// BENCHMARK_MAIN(), with the registration first.
int main(int argc, char** argv) {
  bulkscore::register_benchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
