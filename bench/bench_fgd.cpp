// FGD at scale (issue 11's target: 100,000 GPU nodes, >= 5,000 pods/s with
// the GpuFragmentation Score plugin scoring every node): a synthetic cluster
// of 8-GPU nodes (96 cores, model G2), the replay's profile for FGD (the
// default filters, GpuShare, FGD alone at weight 1000) with the default
// trace's typical tasks, and two workloads:
//   one_shape  the same 500-unit share over and over (the batch cache's case);
//   shuffled   the default trace's pods in a seeded random order (consecutive
//              pods rarely alike).
// The trace is read from $BULKSCORE_TRACE_DIR, else
// ../shared/data/alibaba-gpu-v2023 seen from the working directory.
//
//   build/bench/bench_fgd --benchmark_filter=one_shape/exact
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>

#include "bench/bench_util.hpp"
#include "bench/generator/generator.hpp"
#include "bench/replay/replay.hpp"
#include "host/engine/backend.hpp"
#include "host/engine/engine.hpp"

namespace bulkscore {
namespace {

std::string trace_dir() {
  if (const char* env = std::getenv("BULKSCORE_TRACE_DIR")) return env;
  return "../shared/data/alibaba-gpu-v2023";
}

struct FgdSetup {
  Cluster cluster;
  SchedulerConfig config;
  std::vector<TracePod> trace_pods;  // the default trace, sorted by name
};

// Built once per node count and kept: parsing and tuning are not measured.
const FgdSetup* fgd_setup(uint32_t nodes, std::string& error) {
  static std::map<uint32_t, std::unique_ptr<FgdSetup>> made;
  auto& slot = made[nodes];
  if (slot) return slot.get();
  const std::string dir = trace_dir();
  if (!std::ifstream(dir + "/openb_pod_list_default.csv")) {
    error = "no trace at " + dir + " (set BULKSCORE_TRACE_DIR)";
    return nullptr;
  }
  const ReplayTrace trace = read_trace(dir + "/openb_node_list_gpu_node.csv", dir + "/openb_pod_list_default.csv");
  auto s = std::make_unique<FgdSetup>();
  s->trace_pods = trace.pods;
  for (uint32_t i = 0; i < nodes; ++i) {
    TraceNode row;
    row.name = "node-" + std::to_string(i);
    row.cpu_milli = 96000;
    row.memory_mib = 786432;
    row.gpus = 8;
    row.model = "G2";
    s->cluster.nodes.push_back(trace_node_object(row));
  }
  s->config = replay_scheduler_config(replay_policy("fgd"), 42, replay_typical_tasks(trace));
  slot = std::move(s);
  return slot.get();
}

std::vector<Pod> fgd_pods(const FgdSetup& s, bool shuffled, uint32_t count) {
  std::vector<Pod> pods;
  SplitMix64 rng(42);
  for (uint32_t i = 0; i < count; ++i) {
    TracePod row;
    if (shuffled) {
      row = s.trace_pods[rng.below(s.trace_pods.size())];
    } else {
      row.cpu_milli = 4000;
      row.memory_mib = 8192;
      row.num_gpu = 1;
      row.gpu_milli = 500;
    }
    pods.push_back(trace_pod_object(row, DeviceModel{}, "bench-" + std::to_string(i)));
  }
  return pods;
}

void fgd_at_scale(benchmark::State& state, bool shuffled, Batching mode, uint32_t nodes, uint32_t count,
                  uint32_t batch_states, const std::string& backend) {
  if (backend == "cuda") {
    const std::string why = cuda_unavailable_reason();
    if (!why.empty()) {
      state.SkipWithError(why.c_str());
      return;
    }
  }
  std::string error;
  const FgdSetup* s = fgd_setup(nodes, error);
  if (!s) {
    state.SkipWithError(error.c_str());
    return;
  }
  const std::vector<Pod> pods = fgd_pods(*s, shuffled, count);
  EngineOptions options;
  options.backend = backend;
  options.batching = mode;
  options.tie_break = TieBreak::First;
  options.batch_states = batch_states;
  Engine engine(s->config, options);
  benchutil::time_schedule_runs(state, engine, s->cluster, pods, nodes);
}

void register_benchmarks() {
  for (const uint32_t nodes : {10000u, 100000u})
    for (const bool shuffled : {false, true})
      for (const Batching mode : {Batching::Exact, Batching::Off}) {
        // Pods per iteration: enough for a second or so at the old speeds.
        const uint32_t count = !shuffled && mode == Batching::Exact ? 4000 : nodes >= 100000 ? 60 : 400;
        const std::string name = std::string("BM_FgdAtScale/") + (shuffled ? "shuffled" : "one_shape") + "/" +
                                 batching_name(mode) + "/" + std::to_string(nodes) + "Nodes";
        benchmark::RegisterBenchmark(name.c_str(), fgd_at_scale, shuffled, mode, nodes, count, 1u,
                                     std::string("cpu"))
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime()
            ->Iterations(1);
      }
  // Shuffled shapes with a batch state kept per recent signature (the trace
  // has 151 pod shapes, the 32 commonest about 87% of its pods): a longer
  // run, since every shape's first pod is a full evaluation.
  for (const uint32_t nodes : {10000u, 100000u})
    for (const uint32_t states : {16u, 32u, 64u}) {
      const std::string name =
          "BM_FgdAtScale/shuffled/exact_" + std::to_string(states) + "_states/" + std::to_string(nodes) + "Nodes";
      benchmark::RegisterBenchmark(name.c_str(), fgd_at_scale, true, Batching::Exact, nodes, 3000u, states,
                                   std::string("cpu"))
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime()
          ->Iterations(1);
    }
  // Every shape kept (more states than the trace has shapes) over a run
  // long enough that the first pod of each shape, a full evaluation, is a
  // small part of it: the steady state of a scheduler that runs on.
  for (const uint32_t pods : {3000u, 12000u}) {
    const std::string name = "BM_FgdAtScale/shuffled/exact_160_states/" + std::to_string(pods) + "Pods/100000Nodes";
    benchmark::RegisterBenchmark(name.c_str(), fgd_at_scale, true, Batching::Exact, 100000u, pods, 160u,
                                   std::string("cpu"))
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->Iterations(1);
  }
  // The same runs on the CUDA backend (the GPU device rows and FGD's score in
  // the kernels); skipped where no GPU is present. Names carry "cuda" so a
  // filter picks one backend: --benchmark_filter=/cuda/ or -/cuda/.
  for (const bool shuffled : {false, true})
    for (const Batching mode : {Batching::Exact, Batching::Off}) {
      const uint32_t count = !shuffled && mode == Batching::Exact ? 4000 : 400;
      const std::string name = std::string("BM_FgdAtScale/cuda/") + (shuffled ? "shuffled" : "one_shape") + "/" +
                               batching_name(mode) + "/100000Nodes";
      benchmark::RegisterBenchmark(name.c_str(), fgd_at_scale, shuffled, mode, 100000u, count, 1u, std::string("cuda"))
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime()
          ->Iterations(1);
    }
  benchmark::RegisterBenchmark("BM_FgdAtScale/cuda/shuffled/exact_160_states/3000Pods/100000Nodes", fgd_at_scale,
                               true, Batching::Exact, 100000u, 3000u, 160u, std::string("cuda"))
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime()
      ->Iterations(1);
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
