// A small pool of persistent worker threads for the CPU backend's per-pod
// loops (host only).
//
// run(n, fn) calls fn(i) once for every i in [0, n) and returns when all calls
// have finished. The caller works too, and tasks are claimed from an atomic
// counter, so the caller never waits for a worker that has not woken up: on a
// busy machine (other processes on the cores, an embedding scheduler's own
// threads) it simply does more of the tasks itself. A fork-join barrier, as
// OpenMP's, would instead wait a scheduler time slice for every sleeping
// thread, many times per pod.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace bulkscore {

class WorkerPool {
 public:
  // `threads` counts the caller: threads - 1 workers are started (0 or 1 = none).
  explicit WorkerPool(unsigned threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  unsigned threads() const { return static_cast<unsigned>(workers_.size()) + 1; }

  template <class Fn>
  void run(uint32_t n, Fn&& fn) {
    if (workers_.empty() || n <= 1) {
      for (uint32_t i = 0; i < n; ++i) fn(i);
      return;
    }
    using F = std::remove_reference_t<Fn>;
    run_erased(n, const_cast<void*>(static_cast<const void*>(&fn)),
               [](void* f, uint32_t i) { (*static_cast<F*>(f))(i); });
  }

 private:
  using Call = void (*)(void*, uint32_t);
  void run_erased(uint32_t n, void* fn, Call call);
  void work_loop();
  // Claims and runs tasks of the current job until none is left.
  void drain();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  uint64_t generation_ = 0;  // guarded by mutex_
  bool stop_ = false;        // guarded by mutex_
  unsigned sleeping_ = 0;    // workers blocked on wake_; guarded by mutex_
  // generation_, readable without the lock: workers spin on it for a while
  // before sleeping, so back-to-back pods find them awake.
  std::atomic<uint64_t> published_{0};

  // The current job: published under mutex_ before generation_ changes.
  std::atomic<void*> fn_{nullptr};
  std::atomic<Call> call_{nullptr};
  std::atomic<uint32_t> n_{0};
  std::atomic<uint32_t> next_{0};
  std::atomic<uint32_t> done_{0};
  std::atomic<uint32_t> active_{0};  // workers inside drain()
};

}  // namespace bulkscore
