// Shared by the engine benchmarks (bench_engine.cpp, bench_fgd.cpp): the
// timed loop of engine.schedule() over a run of pods and the counters both
// report.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "host/engine/engine.hpp"

namespace bulkscore::benchutil {

// Each iteration loads `cluster` (not timed), then schedules `pods` in order.
// Counters: pods_per_s, ns_per_node_per_pod (`nodes` = the cluster's node
// count), hit_share (pods decided by a batch-cache hint) and placed_share.
inline void time_schedule_runs(benchmark::State& state, Engine& engine, const Cluster& cluster,
                               const std::vector<Pod>& pods, uint32_t nodes) {
  uint64_t placed = 0, hits = 0;
  for (auto _ : state) {
    state.PauseTiming();
    engine.load(cluster);
    const uint64_t hits_before = engine.batch_counters().hint_used;
    state.ResumeTiming();
    for (const Pod& p : pods) placed += engine.schedule(p).node >= 0 ? 1 : 0;
    hits += engine.batch_counters().hint_used - hits_before;
  }
  const double pods_done = static_cast<double>(state.iterations()) * static_cast<double>(pods.size());
  state.counters["pods_per_s"] = benchmark::Counter(pods_done, benchmark::Counter::kIsRate);
  state.counters["ns_per_node_per_pod"] =
      benchmark::Counter(pods_done * nodes, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["hit_share"] = static_cast<double>(hits) / pods_done;
  state.counters["placed_share"] = static_cast<double>(placed) / pods_done;
}

}  // namespace bulkscore::benchutil
