// The CPU backend's thread pool (host only), an Executor
// (host/engine/executor.hpp).
//
// run(n, fn) calls fn(i) once for every i in [0, n) and returns when all calls
// have finished. The caller works too, and tasks are claimed from an atomic
// counter, so the caller never waits for a worker that has not woken up: on a
// busy machine (other processes on the cores, an embedding scheduler's own
// threads) it simply does more of the tasks itself. A fork-join barrier, as
// OpenMP's, would instead wait a scheduler time slice for every sleeping
// thread, many times per pod.
//
// Waiting adapts to the machine. While the pool's threads have the cores to
// themselves, an idle worker checks for the next job for a moment (200 us)
// before it sleeps, and a caller whose last tasks are on workers does the
// same before it sleeps: the next job of a pod usually follows within
// microseconds, and a condition variable's wake-up would cost more than the
// job. Those checks run between pause instructions, with a yield of the
// core every few microseconds, and a job is published after the lock that
// orders it is released, so a spinning worker never blocks on that lock.
// As soon as a waiting thread is switched out for another runnable thread
// during a spin that reached its first yield (its involuntary context
// switches rise: other processes want the cores; shorter spins, most of
// them, skip the two system calls that count the switches), the pool
// stops spinning for a while and every wait sleeps at
// once, so it never spins against a busy machine. That while starts at 1 ms
// and doubles with each spin that is switched out again, up to 50 ms; a
// spin that waited and was not brings it back to 1 ms. So contention that
// persists on the pool's cores keeps the pool asleep nearly all the time,
// and a moment's contention that has passed (a build's burst, a neighbour
// on a shared VM) costs it a millisecond, not 50. (The pool's threads note
// this together, not each its own: two switched out at once double the
// while once.) A pool shared by engines runs one job at a time; a job that
// finds it busy runs on its caller's thread (Executor::run).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "host/engine/executor.hpp"

namespace bulkscore {

class WorkerPool final : public Executor {
 public:
  // `threads` counts the caller: threads - 1 workers are started (0 or 1 = none).
  explicit WorkerPool(unsigned threads);
  ~WorkerPool() override;
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  unsigned threads() const { return static_cast<unsigned>(workers_.size()) + 1; }
  unsigned concurrency() const override { return threads(); }
  // Whether waits spin now (false for a while after contention was seen),
  // and how many times contention turned spinning off.
  bool spinning() const { return may_spin(); }
  uint64_t times_contended() const { return contended_.load(std::memory_order_relaxed); }
  // The quiet time after a contended spin, from the one stored (0: none
  // in a row yet), and what it stores for the next: 1 ms, doubled for each
  // contended spin in a row, at most 50 ms; an uncontended spin stores 0.
  static constexpr int64_t kQuietMinNs = 1'000'000;
  static constexpr int64_t kQuietMaxNs = 50'000'000;
  static constexpr int64_t quiet_for(int64_t stored) { return stored > kQuietMinNs ? stored : kQuietMinNs; }
  static constexpr int64_t next_quiet(int64_t stored) {
    return 2 * quiet_for(stored) < kQuietMaxNs ? 2 * quiet_for(stored) : kQuietMaxNs;
  }
  void run(uint32_t n, void* ctx, void (*fn)(void*, uint32_t)) override;

  template <class Fn>
  void run(uint32_t n, Fn&& fn) {
    for_each(n, fn);
  }

 private:
  using Call = void (*)(void*, uint32_t);
  void work_loop();
  // Whether waits may spin now; a thread that was switched out while
  // spinning turns spinning off for a while (note_contended), a spin that
  // was not resets that while to its shortest (note_uncontended).
  bool may_spin() const;
  void note_contended();
  void note_uncontended();
  // Checks waiting() for a moment (kSpin), yielding, then notes whether
  // the thread was switched out meanwhile.
  template <class Waiting>
  void spin_while(Waiting&& waiting);
  // Claims and runs tasks of the current job until none is left.
  void drain();

  std::vector<std::thread> workers_;
  std::mutex job_mutex_;  // one job at a time (engines sharing the pool)
  std::mutex mutex_;
  std::condition_variable wake_;      // workers: a new job or stop
  std::condition_variable finished_;  // the caller: the last task is done
  uint64_t generation_ = 0;           // guarded by mutex_
  bool stop_ = false;                 // guarded by mutex_
  bool caller_waiting_ = false;       // guarded by mutex_

  // The current job: published under mutex_ before generation_ changes.
  std::atomic<void*> fn_{nullptr};
  std::atomic<Call> call_{nullptr};
  std::atomic<uint32_t> n_{0};
  std::atomic<uint32_t> next_{0};
  std::atomic<uint32_t> done_{0};
  std::atomic<uint32_t> active_{0};         // workers inside drain()
  // generation_ for spinning workers, stored after the lock is released: it
  // may trail generation_ for a moment, never lead it (UINT64_MAX: stop).
  std::atomic<uint64_t> published_{0};
  std::atomic<int64_t> quiet_until_ns_{0};  // no spinning before this steady-clock time
  std::atomic<int64_t> quiet_ns_{0};        // the next contended spin's quiet time (0: the shortest)
  std::atomic<uint64_t> contended_{0};
};

}  // namespace bulkscore
