// Per-pod Filter + Score + select latency, CPU and CUDA side by side, on
// generated clusters (bench/generator/generator.hpp) with the default profile
// (default_scheduler_config()). One iteration evaluates one pending pod
// against every node; the snapshot is not changed between iterations.
//
//   BM_FilterScore/<backend>/<N>Nodes        the scheduling path (answer only)
//   BM_FilterScoreSorted/<backend>/<N>Nodes  plus the sorted (key, node) list
//   BM_FilterScoreColdL2/cuda/<N>Nodes       the device's L2 flushed before each pod
//   BM_Batching/<exact|off>/<shape>/<N>Nodes  the engine's schedule() over a run of
//       identical pods, with the batch cache on or off (docs/batching.md):
//       one_per_node (3-cpu pods on 4-cpu nodes), many_per_node (100m pods),
//       replicaset_spread (pods a Service selects: system-default spreading
//       by zone and hostname, three zones). One iteration loads the cluster
//       (not timed) and schedules the run; pods_per_s is the figure.
//
// Time is wall clock per pod: evaluate() returns only after its results are
// on the host (the CUDA backend ends with a stream synchronization), so wall
// time is the latency a scheduler sees, transfers and launches included.
// Counters: items_processed = nodes evaluated; time_per_node (wall time per
// pod over nodes evaluated, shown in ns); pods_per_s.
// CUDA cases are skipped (SkipWithError) when no device answers.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_util.hpp"
#include "bench/generator/generator.hpp"
#include "host/engine/backend.hpp"
#include "host/engine/engine.hpp"
#include "host/engine/pod_query.hpp"
#include "host/input/config.hpp"
#include "host/input/k8s_json.hpp"
#include "host/snapshot/snapshot.hpp"

#ifdef BULKSCORE_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace bulkscore {
namespace {

constexpr uint32_t kPendingPods = 64;

// A generated cluster and the prepared queries of its pending pods.
struct Workload {
  Snapshot snap;
  std::vector<PodQuery> queries;
};

Workload& workload(uint32_t nodes) {
  static std::map<uint32_t, std::unique_ptr<Workload>> cache;
  auto& slot = cache[nodes];
  if (slot) return *slot;
  GeneratorOptions opt;
  opt.nodes = nodes;
  opt.running_pods = 2 * nodes;
  opt.pending_pods = kPendingPods;
  opt.seed = 1;
  const GeneratedCluster g = generate_cluster(opt);
  const SchedulerConfig config = default_scheduler_config();
  const Cluster cluster = assemble_cluster(parse_nodes_json(g.nodes_json, "generated nodes"),
                                           parse_pods_json(g.pods_json, "generated pods"),
                                           {config.profiles[0].scheduler_name}, "generated nodes", "generated pods");
  auto w = std::make_unique<Workload>();
  w->snap = Snapshot::build(cluster.nodes, cluster.running_pods);
  const ProfilePlan plan = make_profile_plan(config.profiles[0]);
  // Intern every pod's resources first: a new column after a query was
  // prepared would change the snapshot under it.
  for (const Pod& pod : cluster.pending_pods) intern_pod_for_plan(w->snap, pod, plan);
  for (size_t i = 0; i < cluster.pending_pods.size(); ++i) {
    PodQuery q = prepare_pod_query(cluster.pending_pods[i], w->snap, plan, TieBreak::Random, 1);
    if (!q.rejected) w->queries.push_back(std::move(q));
  }
  slot = std::move(w);
  return *slot;
}

#ifdef BULKSCORE_WITH_CUDA
// Overwrites the device's L2 with a buffer twice its size.
class L2Flusher {
 public:
  L2Flusher() {
    int dev = 0, l2 = 0;
    if (cudaGetDevice(&dev) == cudaSuccess && cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev) == cudaSuccess &&
        l2 > 0 && cudaMalloc(&buf_, 2 * static_cast<size_t>(l2)) == cudaSuccess)
      bytes_ = 2 * static_cast<size_t>(l2);
  }
  ~L2Flusher() {
    if (buf_) cudaFree(buf_);
  }
  void flush() {
    if (!buf_) return;
    cudaMemset(buf_, 0, bytes_);
    cudaDeviceSynchronize();
  }

 private:
  void* buf_ = nullptr;
  size_t bytes_ = 0;
};
#endif

void filter_score(benchmark::State& state, bool cuda, uint32_t nodes, bool sorted, bool cold_l2) {
  std::unique_ptr<Backend> backend;
  if (cuda) {
    const std::string why = cuda_unavailable_reason();
    if (!why.empty()) {
      state.SkipWithError(why.c_str());
      return;
    }
    backend = make_cuda_backend();
  } else {
    backend = make_cpu_backend();
  }
  Workload& w = workload(nodes);
  if (w.queries.empty()) {
    state.SkipWithError("the generated cluster has no schedulable pending pod");
    return;
  }
  EvalRequest req;
  req.want_sorted = sorted;
  EvalResult out;
  // Warm-up: the device mirror upload and scratch growth stay out of the timing.
  for (PodQuery& q : w.queries) {
    req.candidates = q.candidates ? &*q.candidates : nullptr;
    backend->evaluate(w.snap, q, req, out);
  }
#ifdef BULKSCORE_WITH_CUDA
  std::unique_ptr<L2Flusher> flusher;
  if (cold_l2) flusher = std::make_unique<L2Flusher>();
#else
  (void)cold_l2;
#endif
  size_t i = 0;
  uint64_t evaluated = 0;
  for (auto _ : state) {
#ifdef BULKSCORE_WITH_CUDA
    if (flusher) {
      state.PauseTiming();
      flusher->flush();
      state.ResumeTiming();
    }
#endif
    PodQuery& q = w.queries[i++ % w.queries.size()];
    req.candidates = q.candidates ? &*q.candidates : nullptr;
    backend->evaluate(w.snap, q, req, out);
    benchmark::DoNotOptimize(out.chosen);
    evaluated += out.processed;
  }
  state.SetItemsProcessed(static_cast<int64_t>(evaluated));
  // Seconds per node evaluated (printed with an SI prefix, e.g. "41.2ns").
  state.counters["time_per_node"] =
      benchmark::Counter(static_cast<double>(evaluated), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["pods_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["nodes"] = nodes;
}

// ---- the batch cache ----------------------------------------------------------------

enum class Shape { OnePerNode, ManyPerNode, ReplicaSetSpread };

Cluster batching_cluster(Shape shape, uint32_t nodes) {
  Cluster c;
  c.nodes.reserve(nodes);
  for (uint32_t i = 0; i < nodes; ++i) {
    Node n;
    n.name = "node-" + std::to_string(i);
    n.labels["kubernetes.io/hostname"] = n.name;
    n.labels["topology.kubernetes.io/zone"] = "zone-" + std::to_string(i % 3);
    n.allocatable = {{"cpu", 4000}, {"memory", 32LL << 30}, {"pods", 110}};
    c.nodes.push_back(std::move(n));
  }
  if (shape == Shape::ReplicaSetSpread) {
    SelectingObject svc;
    svc.kind = SelectingObject::Kind::Service;
    svc.namespace_name = "default";
    svc.name = "web";
    svc.has_selector = true;
    svc.selector_map = {{"app", "web"}};
    c.objects.selecting.push_back(svc);
  }
  return c;
}

std::vector<Pod> batching_pods(Shape shape, uint32_t count) {
  std::vector<Pod> pods;
  pods.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    Pod p;
    p.name = "pod-" + std::to_string(i);
    p.scheduler_name = "default-scheduler";
    p.phase = "Pending";
    Container c;
    c.name = "main";
    c.image = "registry.k8s.io/pause:3.10.1";
    c.requests = {{"cpu", shape == Shape::OnePerNode ? 3000 : 100}, {"memory", 64LL << 20}};
    p.containers.push_back(std::move(c));
    if (shape == Shape::ReplicaSetSpread) p.labels["app"] = "web";
    pods.push_back(std::move(p));
  }
  return pods;
}

void batching(benchmark::State& state, Batching mode, Shape shape, uint32_t nodes) {
  const Cluster cluster = batching_cluster(shape, nodes);
  const uint32_t count = shape == Shape::OnePerNode ? std::min(nodes, 5000u) : 5000u;
  const std::vector<Pod> pods = batching_pods(shape, count);
  EngineOptions options;
  options.backend = "cpu";
  options.batching = mode;
  Engine engine(default_scheduler_config(), options);
  benchutil::time_schedule_runs(state, engine, cluster, pods, nodes);
}

// Registered from main, not by a static initializer: a throw there would
// end the program before main without a message (cert-err58-cpp).
void register_benchmarks() {
  for (const uint32_t nodes : {1000u, 10000u, 100000u}) {
    const std::string size = "/" + std::to_string(nodes) + "Nodes";
    for (const bool cuda : {false, true}) {
      const std::string backend = cuda ? "cuda" : "cpu";
      benchmark::RegisterBenchmark(("BM_FilterScore/" + backend + size).c_str(), filter_score, cuda, nodes, false,
                                   false)
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime();
      benchmark::RegisterBenchmark(("BM_FilterScoreSorted/" + backend + size).c_str(), filter_score, cuda, nodes, true,
                                   false)
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime();
    }
    benchmark::RegisterBenchmark(("BM_FilterScoreColdL2/cuda" + size).c_str(), filter_score, true, nodes, false, true)
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
  }
  const std::pair<const char*, Shape> shapes[] = {{"one_per_node", Shape::OnePerNode},
                                                  {"many_per_node", Shape::ManyPerNode},
                                                  {"replicaset_spread", Shape::ReplicaSetSpread}};
  for (const uint32_t nodes : {5000u, 100000u})
    for (const auto& [shape_name, shape] : shapes)
      for (const Batching mode : {Batching::Exact, Batching::Off}) {
        // Off at 100,000 nodes takes minutes per iteration: the ratio is
        // measured at 5,000.
        if (mode == Batching::Off && nodes > 5000) continue;
        const std::string name = std::string("BM_Batching/") + batching_name(mode) + "/" + shape_name + "/" +
                                 std::to_string(nodes) + "Nodes";
        benchmark::RegisterBenchmark(name.c_str(), batching, mode, shape, nodes)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime()
            ->Iterations(mode == Batching::Off ? 1 : 3);
      }
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
