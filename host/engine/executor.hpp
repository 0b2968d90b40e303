// Where the CPU backend runs its parallel loops (docs/library.md,
// "Threads"): its own pool (the default), a pool the embedder makes once and
// shares among engines, or the calling thread alone.
#pragma once

#include <cstdint>
#include <memory>
#include <type_traits>

namespace bulkscore {

class Executor {
 public:
  virtual ~Executor() = default;
  // Threads that may work on one job at once, the caller included.
  virtual unsigned concurrency() const = 0;
  // Calls fn(ctx, i) once for every i in [0, n), on the calling thread and
  // the executor's, and returns when every call has returned. Safe to call
  // from several threads at once (engines sharing one executor): a job that
  // finds the executor's threads busy with another runs on its caller's
  // thread alone, so no caller ever waits for another's job, and the
  // machine is never asked for more threads than the executor has.
  virtual void run(uint32_t n, void* ctx, void (*fn)(void*, uint32_t)) = 0;

  template <class Fn>
  void for_each(uint32_t n, Fn&& fn) {
    using F = std::remove_reference_t<Fn>;
    run(n, const_cast<void*>(static_cast<const void*>(&fn)),
        [](void* f, uint32_t i) { (*static_cast<F*>(f))(i); });
  }
};

// A pool of `threads` - 1 worker threads (the caller is the last one); 0:
// one thread per core, or BULKSCORE_THREADS. Idle workers sleep; they never
// spin (docs/performance.md: a busy machine).
std::shared_ptr<Executor> make_thread_pool(unsigned threads = 0);
// The calling thread only: no thread is started, nothing runs elsewhere.
std::shared_ptr<Executor> caller_thread_executor();

}  // namespace bulkscore
