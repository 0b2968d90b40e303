#include "host/cpu/worker_pool.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "host/engine/engine.hpp"
#include "host/engine/executor.hpp"
#include "tests/random_cluster.hpp"

namespace bulkscore {
namespace {

// Every task runs exactly once per job, with more threads than cores and
// back-to-back jobs of varying sizes (the late-joining worker case).
TEST(WorkerPool, EveryTaskRunsExactlyOncePerJob) {
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    WorkerPool pool(threads);
    EXPECT_EQ(pool.threads(), threads == 0 ? 1u : threads);
    std::vector<std::atomic<uint32_t>> hits(5000);
    for (uint32_t job = 0; job < 2000; ++job) {
      const uint32_t n = (job * 7919u) % 257u;
      for (uint32_t i = 0; i < n; ++i) hits[i].store(0);
      pool.run(n, [&](uint32_t i) { hits[i].fetch_add(1); });
      for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1u) << "job " << job << " task " << i;
    }
  }
}

TEST(WorkerPool, ResultsAreVisibleToTheCallerAfterRun) {
  WorkerPool pool(4);
  std::vector<uint64_t> out(100000);
  for (int round = 0; round < 20; ++round) {
    pool.run(100, [&](uint32_t b) {
      for (uint32_t i = b * 1000; i < (b + 1) * 1000; ++i) out[i] = uint64_t(i) * round;
    });
    for (uint32_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], uint64_t(i) * round);
  }
}

// One pool shared by several callers at once (engines on their own
// threads): every job's tasks run exactly once, whichever threads run them.
TEST(WorkerPool, ConcurrentCallersEachGetEveryTaskExactlyOnce) {
  WorkerPool pool(3);
  std::vector<std::thread> callers;
  std::atomic<int> bad{0};
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&, c] {
      std::vector<std::atomic<uint32_t>> hits(300);
      for (uint32_t job = 0; job < 500; ++job) {
        const uint32_t n = (job * 31u + static_cast<uint32_t>(c)) % 300u;
        for (uint32_t i = 0; i < n; ++i) hits[i].store(0);
        pool.run(n, [&](uint32_t i) { hits[i].fetch_add(1); });
        for (uint32_t i = 0; i < n; ++i)
          if (hits[i].load() != 1) bad.fetch_add(1);
      }
    });
  for (auto& t : callers) t.join();
  EXPECT_EQ(bad.load(), 0);
}

// Against a busy machine (more busy threads than cores), the pool notices
// that its spinning threads are switched out for others and stops spinning:
// every wait then sleeps (docs/library.md, "Threads"). The old pool spun
// 200 us after every job whatever the machine; under two CPU-bound
// processes on two cores its SchedulingBasic throughput fell from 6,000 to
// 2,300 pods/s, this pool's not at all (docs/performance.md).
TEST(WorkerPool, SpinningStopsWhenOtherThreadsWantTheCores) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> hogs;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned h = 0; h <= cores; ++h)
    hogs.emplace_back([&] {
      volatile uint64_t x = 0;
      while (!stop.load(std::memory_order_relaxed)) x = x + 1;
    });
  WorkerPool pool(4);
  std::atomic<uint64_t> sink{0};
  for (int job = 0; job < 300; ++job) {
    pool.run(16, [&](uint32_t i) { sink.fetch_add(i); });
    usleep(300);
  }
  stop = true;
  for (auto& t : hogs) t.join();
  EXPECT_GT(pool.times_contended(), 0U);
  EXPECT_GT(sink.load(), 0U);
}

// The quiet time backs off while contention lasts and is short again once
// a spin went uncontended: 1, 2, 4, ... ms up to 50 (a moment's contention
// that has passed costs a millisecond of sleeping waits, not 50).
TEST(WorkerPool, QuietTimeDoublesWhileContendedAndResets) {
  int64_t stored = 0;  // an uncontended spin stores 0
  std::vector<int64_t> quiet;
  for (int i = 0; i < 9; ++i) {
    quiet.push_back(WorkerPool::quiet_for(stored));
    stored = WorkerPool::next_quiet(stored);
  }
  const std::vector<int64_t> want = {1'000'000,  2'000'000,  4'000'000,  8'000'000, 16'000'000,
                                     32'000'000, 50'000'000, 50'000'000, 50'000'000};
  EXPECT_EQ(quiet, want);
  EXPECT_EQ(WorkerPool::quiet_for(0), WorkerPool::kQuietMinNs);
}

// Engines sharing one pool, each on its own thread, and an engine on its
// caller's thread alone decide exactly as engines with pools of their own.
TEST(Executors, SharedPoolAndCallerThreadDecideAsOwnPools) {
  SplitMix64 rng(testutil::parity_seed() ^ 0xe7ec);
  const std::vector<std::string> names = {"default-scheduler", "spread-list", "gpu-share"};
  Cluster c = testutil::random_cluster(rng, {3000, 60}, names);
  const auto run = [&](std::shared_ptr<Executor> executor) {
    EngineOptions o;
    o.backend = "cpu";
    o.seed = 11;
    o.threads = 4;
    o.executor = std::move(executor);
    Engine e(testutil::parity_config(), o);
    e.load(c);
    std::string out;
    for (const Pod& p : c.pending_pods) {
      const ScheduleResult r = e.schedule(p);
      out += r.pod + " " + r.node_name + " " + std::to_string(r.score) + "\n";
    }
    return out;
  };
  const std::string own = run(nullptr);
  EXPECT_EQ(run(caller_thread_executor()), own);
  const std::shared_ptr<Executor> shared = make_thread_pool(3);
  std::vector<std::string> outs(3);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < outs.size(); ++i) threads.emplace_back([&, i] { outs[i] = run(shared); });
  for (auto& t : threads) t.join();
  for (const std::string& o : outs) EXPECT_EQ(o, own);
  EXPECT_EQ(caller_thread_executor()->concurrency(), 1U);
}

}  // namespace
}  // namespace bulkscore
