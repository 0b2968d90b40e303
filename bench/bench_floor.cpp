// The engine beside the floor (issue 24, items 5 and 6): bench/floor.hpp's
// plain loop of the default profile's arithmetic, one thread, run on the same
// cluster and pods in the same iteration as the engine, so every figure is
// also a ratio to it.
//
// Workloads, SchedulingBasic's shape (bench/workloads/performance-config.yaml:
// default nodes of 4 cpu, 32Gi, 110 pods; 1,000 default pods scheduled first,
// not timed), then the measured pods:
//   basic     SchedulingBasic's default pods (100m, 500Mi), all alike
//   distinct  DistinctPods: pod i requests cpu 100m + (37 i mod 400)m and
//             memory 256Mi + (53 i mod 1024)Mi, so every pod differs from the
//             one before it (templates/pod-distinct.yaml)
//   spread    a ReplicaSet's pods (basic's requests, one label) under hard
//             zone and hostname spreading (maxSkew 1, DoNotSchedule; nodes
//             in 10 zones): issue 24 item 4's case. The floor beside it is
//             basic's plain loop (the same requests, no constraints), the
//             arithmetic the issue measures it against; its placements are
//             not compared (the floor has no spreading).
//   anti      a ReplicaSet's pods (basic's requests) under required pod
//             anti-affinity to each other per node (kubernetes.io/hostname:
//             one replica a node, SchedulingPodAntiAffinity's rule): issue
//             24 item 4's other case. Its floor is basic's, as spread's.
//
//   BM_Engine/<basic|distinct|spread|anti>/<exact|exact-auto|exact-window<W>|off>/threads:<T>/<N>Nodes
//       the engine's schedule() over the measured pods, handed over
//       (schedule(Pod&&), as the CLI and the C ABI hand them) (T CPU backend
//       threads, 1, 2 and every core where there are more; the batch cache
//       on or off; exact: no window; exact-auto: schedule_all's default,
//       auto windows; exact-window<W>: windows of W pods looked ahead at,
//       Engine::look_ahead, window_hit_share the pods answered by their own
//       window state); counters: pods_per_s,
//       ns_per_node_per_pod, and the floor run beside it in the same
//       iteration: floor_pods_per_s (one thread, the best dispatch target),
//       vs_floor (engine pods/s over the floor's) and vs_floor_2t (over twice
//       the floor's: the floor's arithmetic on both cores of a 2-core machine);
//       on two threads also the floor run on two threads beside it
//       (floor::schedule_two_threads, the nodes split in halves, one pod at a
//       time): floor_2t_run_pods_per_s and vs_floor_2t_run (engine pods/s
//       over it), which say what two of this machine's cores really give
//   BM_Engine/<basic|distinct|spread|anti>/<exact|off>/cuda/<N>Nodes
//       the same on the CUDA backend, registered only where a device answers
//       (scripts/gpu-run.sh's floor-cuda step): the GPU's figures as a ratio
//       to the same one-thread CPU floor
//   BM_Floor/<basic|distinct>/<baseline|avx2|avx512>/<N>Nodes
//       the floor alone, by dispatch target (targets the CPU lacks are skipped)
//
// Before anything is timed, each (workload, nodes) pair checks that the floor
// places every pod where the engine does with --tie-break first and
// --batching off; a difference ends the benchmark with the first one named.
//
// BULKSCORE_BENCH_ITERATIONS=N runs each engine benchmark N times instead of
// 2-3, so that a `perf record` of one is mostly the timed part, not the
// workload's setup and the floor's check.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench/floor.hpp"
#include "host/engine/backend.hpp"
#include "host/engine/engine.hpp"
#include "host/input/config.hpp"

namespace bulkscore {
namespace {

constexpr uint32_t kInitPods = 1000;

enum class Kind { Basic, Distinct, Spread, Anti };

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Basic:
      return "basic";
    case Kind::Distinct:
      return "distinct";
    case Kind::Anti:
      return "anti";
    default:
      return "spread";
  }
}

// Requests of measured pod i: {millicores, bytes}.
std::pair<int64_t, int64_t> measured_request(Kind k, uint32_t i) {
  if (k != Kind::Distinct) return {100, 500LL << 20};
  return {100 + (37LL * i) % 400, (256 + (53LL * i) % 1024) << 20};
}

uint32_t measured_count(uint32_t nodes) { return nodes <= 5000 ? 2000 : nodes <= 20000 ? 1000 : 300; }

Cluster basic_cluster(uint32_t nodes) {
  Cluster c;
  c.nodes.reserve(nodes);
  for (uint32_t i = 0; i < nodes; ++i) {
    Node n;
    n.name = "perf-node-" + std::to_string(i);
    n.labels["kubernetes.io/hostname"] = n.name;
    n.labels["topology.kubernetes.io/zone"] = "zone-" + std::to_string(i % 10);
    n.allocatable = {{"cpu", 4000}, {"memory", 32LL << 30}, {"pods", 110}};
    c.nodes.push_back(std::move(n));
  }
  return c;
}

Pod make_pod(const std::string& name, int64_t cpu, int64_t mem) {
  Pod p;
  p.name = name;
  p.scheduler_name = "default-scheduler";
  p.phase = "Pending";
  Container c;
  c.name = "pause";
  c.image = "registry.k8s.io/pause:3.10.1";
  c.requests = {{"cpu", cpu}, {"memory", mem}};
  p.containers.push_back(std::move(c));
  return p;
}

// A ReplicaSet's pod under hard zone and hostname spreading of its own pods.
void spread_hard(Pod& p) {
  p.labels["app"] = "spread-rs";
  for (const char* key : {"topology.kubernetes.io/zone", "kubernetes.io/hostname"}) {
    TopologySpreadConstraint c;
    c.max_skew = 1;
    c.topology_key = key;
    c.when_unsatisfiable = "DoNotSchedule";
    c.label_selector = LabelSelector{};
    c.label_selector->match_labels["app"] = "spread-rs";
    p.topology_spread_constraints.push_back(std::move(c));
  }
}

// A ReplicaSet's pod kept off every node that runs one of its pods.
void anti_per_node(Pod& p) {
  p.labels["app"] = "anti-rs";
  PodAffinityTerm t;
  t.topology_key = "kubernetes.io/hostname";
  t.label_selector = LabelSelector{};
  t.label_selector->match_labels["app"] = "anti-rs";
  p.affinity = Affinity{};
  p.affinity->pod_anti_affinity = PodAffinity{};
  p.affinity->pod_anti_affinity->required.push_back(std::move(t));
}

struct Workload {
  Cluster cluster;
  std::vector<Pod> init, measured;
  std::vector<floor::PodRequest> init_req, measured_req;
  std::string mismatch;  // empty: the floor decides as the engine does
};

floor::Target best_target() {
  if (floor::target_supported(floor::Target::Avx512)) return floor::Target::Avx512;
  if (floor::target_supported(floor::Target::Avx2)) return floor::Target::Avx2;
  return floor::Target::Baseline;
}

floor::Columns fresh_columns(uint32_t nodes) {
  floor::Columns c;
  c.resize(nodes);
  for (uint32_t i = 0; i < nodes; ++i) c.set_alloc(i, 4000, 32LL << 30, 110);
  return c;
}

// Engine (tie-break first, cache off) against the floor, every pod.
std::string check_floor(const Workload& w, uint32_t nodes) {
  EngineOptions options;
  options.backend = "cpu";
  options.batching = Batching::Off;
  options.tie_break = TieBreak::First;
  Engine engine(default_scheduler_config(), options);
  engine.load(w.cluster);
  std::vector<int32_t> want;
  for (const Pod& p : w.init) want.push_back(engine.schedule(p).node);
  for (const Pod& p : w.measured) want.push_back(engine.schedule(p).node);
  floor::Columns c = fresh_columns(nodes);
  std::vector<floor::PodRequest> all = w.init_req;
  all.insert(all.end(), w.measured_req.begin(), w.measured_req.end());
  std::vector<int32_t> got, got_2t;
  floor::Columns c_2t = c;
  floor::schedule(c, all, best_target(), got);
  floor::schedule_two_threads(c_2t, all, best_target(), got_2t);
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] != got[i])
      return "the floor differs from the engine at pod " + std::to_string(i) + ": engine " + std::to_string(want[i]) +
             ", floor " + std::to_string(got[i]);
    if (got_2t[i] != got[i])
      return "the floor on two threads differs from it on one at pod " + std::to_string(i) + ": one " +
             std::to_string(got[i]) + ", two " + std::to_string(got_2t[i]);
  }
  return {};
}

Workload& workload(Kind kind, uint32_t nodes) {
  static std::map<std::pair<int, uint32_t>, Workload> cache;
  const auto key = std::make_pair(static_cast<int>(kind), nodes);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  Workload w;
  w.cluster = basic_cluster(nodes);
  for (uint32_t i = 0; i < kInitPods; ++i) {
    w.init.push_back(make_pod("init-" + std::to_string(i), 100, 500LL << 20));
    w.init_req.push_back(floor::pod_request(100, 500LL << 20));
  }
  for (uint32_t i = 0; i < measured_count(nodes); ++i) {
    const auto [cpu, mem] = measured_request(kind, i);
    w.measured.push_back(make_pod("pod-" + std::to_string(i), cpu, mem));
    w.measured_req.push_back(floor::pod_request(cpu, mem));
    if (kind == Kind::Spread) spread_hard(w.measured.back());
    if (kind == Kind::Anti) anti_per_node(w.measured.back());
  }
  if (kind != Kind::Spread && kind != Kind::Anti) w.mismatch = check_floor(w, nodes);
  return cache.emplace(key, std::move(w)).first->second;
}

// Seconds the floor takes for the measured pods (after the init pods), on
// one thread or (`two_threads`) on two, the nodes split in halves.
double time_floor(const Workload& w, uint32_t nodes, floor::Target t, std::vector<int32_t>& placements,
                  bool two_threads = false) {
  floor::Columns c = fresh_columns(nodes);
  floor::schedule(c, w.init_req, t, placements);
  const auto start = std::chrono::steady_clock::now();
  if (two_threads)
    floor::schedule_two_threads(c, w.measured_req, t, placements);
  else
    floor::schedule(c, w.measured_req, t, placements);
  benchmark::DoNotOptimize(placements.data());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// `window` > 1: the measured pods looked ahead at in windows of that many
// (Engine::look_ahead); 0: as schedule_all does by default (auto windows,
// look_ahead_in_queue); 1: none.
// `backend`: "cpu" (with `threads`) or "cuda".
void bm_engine(benchmark::State& state, Kind kind, Batching mode, int threads, uint32_t window, uint32_t nodes,
               const std::string& backend) {
  const Workload& w = workload(kind, nodes);
  if (!w.mismatch.empty()) {
    state.SkipWithError(w.mismatch.c_str());
    return;
  }
  EngineOptions options;
  options.backend = backend;
  options.batching = mode;
  options.threads = threads;
  options.window = window;
  Engine engine(default_scheduler_config(), options);
  std::vector<int32_t> placements;
  double floor_seconds = 0, floor_2t_seconds = 0, engine_seconds = 0;
  uint64_t placed = 0, hits = 0, count_hits = 0, window_hits = 0;
  std::vector<const Pod*> ahead;
  std::vector<Pod> given;
  for (auto _ : state) {
    state.PauseTiming();
    engine.load(w.cluster);
    for (const Pod& p : w.init) engine.schedule(p);
    const BatchCounters before = engine.batch_counters();
    // Handed over as the CLI and the C ABI hand them (Engine::schedule(Pod&&)):
    // the copy is the caller's, made (and what is left of it freed) untimed.
    given = w.measured;
    state.ResumeTiming();
    const auto start = std::chrono::steady_clock::now();
    std::vector<QueueEntry> order;
    if (window == 0) order = engine.queue_order(w.measured);
    size_t next_window = 0;
    for (size_t i = 0; i < w.measured.size(); ++i) {
      if (window == 0 && i >= next_window) next_window = engine.look_ahead_in_queue(w.measured, order, i);
      if (window > 1 && i % window == 0) {
        ahead.clear();
        for (size_t j = i; j < std::min(w.measured.size(), i + window); ++j) ahead.push_back(&w.measured[j]);
        engine.look_ahead(ahead);
      }
      placed += engine.schedule(std::move(given[i])).node >= 0 ? 1 : 0;
    }
    engine_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    state.PauseTiming();
    given.clear();
    const BatchCounters c = engine.batch_counters().since(before);
    hits += c.hint_used;
    count_hits += c.filter_count_hits;
    window_hits += c.window_hits;
    floor_seconds += time_floor(w, nodes, best_target(), placements);
    // Below two blocks a node half the helper thread would have little or
    // nothing: the figure would be a hand-off a pod.
    if (threads == 2 && nodes >= 2 * floor::kBlock)
      floor_2t_seconds += time_floor(w, nodes, best_target(), placements, true);
    state.ResumeTiming();
  }
  const double pods = static_cast<double>(state.iterations()) * static_cast<double>(w.measured.size());
  state.counters["pods_per_s"] = benchmark::Counter(pods, benchmark::Counter::kIsRate);
  state.counters["ns_per_node_per_pod"] =
      benchmark::Counter(pods * nodes, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["floor_pods_per_s"] = pods / floor_seconds;
  state.counters["vs_floor"] = floor_seconds / engine_seconds;
  state.counters["vs_floor_2t"] = floor_seconds / (2 * engine_seconds);
  // Two threads: also against the floor run on two threads beside it
  // (floor::schedule_two_threads: what two of this machine's cores give the
  // same arithmetic, one pod at a time).
  if (threads == 2 && floor_2t_seconds > 0) {
    state.counters["floor_2t_run_pods_per_s"] = pods / floor_2t_seconds;
    state.counters["vs_floor_2t_run"] = floor_2t_seconds / engine_seconds;
  }
  state.counters["placed_share"] = static_cast<double>(placed) / pods;
  // The batch cache's answers, and those whose Filter tables changed in
  // their counts only (hard spreading).
  state.counters["hit_share"] = static_cast<double>(hits) / pods;
  state.counters["count_hit_share"] = static_cast<double>(count_hits) / pods;
  state.counters["window_hit_share"] = static_cast<double>(window_hits) / pods;
}

void bm_floor(benchmark::State& state, Kind kind, floor::Target t, uint32_t nodes) {
  if (!floor::target_supported(t)) {
    state.SkipWithError("this CPU lacks the target");
    return;
  }
  const Workload& w = workload(kind, nodes);
  if (!w.mismatch.empty()) {
    state.SkipWithError(w.mismatch.c_str());
    return;
  }
  std::vector<int32_t> placements;
  double seconds = 0;
  for (auto _ : state) {
    const double s = time_floor(w, nodes, t, placements);
    seconds += s;
    state.SetIterationTime(s);
  }
  const double pods = static_cast<double>(state.iterations()) * static_cast<double>(w.measured.size());
  state.counters["pods_per_s"] = pods / seconds;
  state.counters["ns_per_node_per_pod"] = seconds * 1e9 / (pods * nodes);
}

// One thread, two, and every core where there are more (windows spread
// their pods over the cores: scripts/gpu-run.sh measures them on the lent
// machine's 16).
std::vector<int> thread_counts() {
  std::vector<int> out{1, 2};
  const auto cores = static_cast<int>(std::thread::hardware_concurrency());
  if (cores > 2) out.push_back(cores);
  return out;
}

benchmark::IterationCount engine_iterations(Batching mode) {
  if (const char* env = std::getenv("BULKSCORE_BENCH_ITERATIONS")) {
    const long n = std::strtol(env, nullptr, 10);
    if (n > 0) return n;
  }
  return mode == Batching::Off ? 2 : 3;
}

void register_benchmarks() {
  const bool cuda = cuda_unavailable_reason().empty();
  for (const uint32_t nodes : {200u, 5000u, 20000u, 100000u}) {
    const std::string size = "/" + std::to_string(nodes) + "Nodes";
    for (const Kind kind : {Kind::Distinct, Kind::Basic, Kind::Spread, Kind::Anti}) {
      if ((kind == Kind::Spread || kind == Kind::Anti) && nodes > 20000) continue;
      for (const floor::Target t : {floor::Target::Baseline, floor::Target::Avx2, floor::Target::Avx512}) {
        if (kind == Kind::Spread || kind == Kind::Anti) break;  // their floor is basic's
        benchmark::RegisterBenchmark(
            (std::string("BM_Floor/") + kind_name(kind) + "/" + floor::target_name(t) + size).c_str(), bm_floor, kind,
            t, nodes)
            ->Unit(benchmark::kMillisecond)
            ->UseManualTime()
            ->Iterations(5);
      }
      for (const Batching mode : {Batching::Exact, Batching::Off})
        for (const uint32_t window : {1u, 0u, 8u, 32u}) {
          if (mode == Batching::Off && window != 1) continue;  // windows are the exact cache's
          const std::string name = std::string(batching_name(mode)) +
                                   (window == 0  ? "-auto"
                                    : window > 1 ? "-window" + std::to_string(window)
                                                 : "");
          for (const int threads : thread_counts())
            benchmark::RegisterBenchmark((std::string("BM_Engine/") + kind_name(kind) + "/" + name +
                                          "/threads:" + std::to_string(threads) + size)
                                             .c_str(),
                                         bm_engine, kind, mode, threads, window, nodes, std::string("cpu"))
                ->Unit(benchmark::kMillisecond)
                ->UseRealTime()
                ->Iterations(engine_iterations(mode));
        }
      // The CUDA backend (no windows: it evaluates a window's pods in turn).
      if (cuda)
        for (const Batching mode : {Batching::Exact, Batching::Off})
          benchmark::RegisterBenchmark(
              (std::string("BM_Engine/") + kind_name(kind) + "/" + batching_name(mode) + "/cuda" + size).c_str(),
              bm_engine, kind, mode, 1, 1u, nodes, std::string("cuda"))
              ->Unit(benchmark::kMillisecond)
              ->UseRealTime()
              ->Iterations(engine_iterations(mode));
    }
  }
}

}  // namespace
}  // namespace bulkscore

int main(int argc, char** argv) {
  bulkscore::register_benchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
