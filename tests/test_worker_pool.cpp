#include "host/cpu/worker_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

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

}  // namespace
}  // namespace bulkscore
