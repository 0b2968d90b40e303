// The CPU backend's thread pool (host/cpu/worker_pool.hpp): what one job
// costs beyond its tasks. A distinct pod runs two jobs (Filter and Score
// per chunk, then the totals), so at 5,000 nodes on two threads, where a
// pod takes about 50 us, each microsecond a job loses is 2% of the pod.
//
//   BM_PoolJob/tasks:T/task_ns:W   one job of T tasks of about W ns each on
//                                  a pool of two threads (the caller and
//                                  one worker), back to back; serial_ns of
//                                  the caller's own work between jobs, as
//                                  a pod's setup and merges
//
// Counters: overhead_ns, the job's time less its tasks' share of two
// threads (T * W / 2) and the serial work; worker_share, the share of
// tasks the worker ran (0.5 when it joins every job at once).
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "host/cpu/worker_pool.hpp"

namespace bulkscore {
namespace {

using Clock = std::chrono::steady_clock;

void busy_for(int64_t ns) {
  const auto until = Clock::now() + std::chrono::nanoseconds(ns);
  while (Clock::now() < until) {
  }
}

void pool_job(benchmark::State& state) {
  const auto tasks = static_cast<uint32_t>(state.range(0));
  const int64_t task_ns = state.range(1), serial_ns = state.range(2);
  WorkerPool pool(2);
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<uint64_t> on_worker{0};
  uint64_t jobs = 0;
  const Clock::time_point start = Clock::now();
  for (auto _ : state) {
    busy_for(serial_ns);
    pool.run(tasks, [&](uint32_t) {
      if (std::this_thread::get_id() != caller) on_worker.fetch_add(1, std::memory_order_relaxed);
      busy_for(task_ns);
    });
    ++jobs;
  }
  const double job_ns =
      std::chrono::duration<double, std::nano>(Clock::now() - start).count() / static_cast<double>(jobs);
  const double ideal_ns =
      static_cast<double>(serial_ns) + static_cast<double>(tasks) * static_cast<double>(task_ns) / 2.0;
  state.counters["job_ns"] = job_ns;
  state.counters["overhead_ns"] = job_ns - ideal_ns;
  state.counters["worker_share"] = static_cast<double>(on_worker.load()) / (static_cast<double>(jobs) * tasks);
}

}  // namespace
}  // namespace bulkscore

void BM_PoolJob(benchmark::State& state) { bulkscore::pool_job(state); }
BENCHMARK(BM_PoolJob)
    ->ArgNames({"tasks", "task_ns", "serial_ns"})
    ->Args({4, 8000, 5000})
    ->Args({4, 2000, 1000})
    ->Args({2, 500, 0})
    ->UseRealTime()
    ->MinTime(0.2);

BENCHMARK_MAIN();
