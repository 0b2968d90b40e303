#include "host/cpu/worker_pool.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <string_view>
#include <system_error>

namespace bulkscore {

namespace {

// How long a waiting thread checks before it sleeps, when it may spin.
constexpr auto kSpin = std::chrono::microseconds(200);
// A spinning thread checks its wait between pause instructions and yields
// the core only every kChecksPerYield checks (7 us of pauses on a Zen 3,
// about 10 on recent Intel cores): a yield is a system call, and a job
// posted during one waited for it (a worker joined a job 1 us after it was
// posted when it yielded between checks, 0.2 us now; measured with two
// threads on an AMD EPYC VM).
constexpr uint32_t kChecksPerYield = 256;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// This thread's involuntary context switches: switched out while runnable
// (a yield that another thread took, a preemption).
long involuntary_switches() {
  rusage u{};
  return getrusage(RUSAGE_THREAD, &u) == 0 ? u.ru_nivcsw : 0;
}

}  // namespace

bool WorkerPool::may_spin() const { return now_ns() >= quiet_until_ns_.load(std::memory_order_relaxed); }

void WorkerPool::note_contended() {
  const int64_t stored = quiet_ns_.load(std::memory_order_relaxed);
  quiet_ns_.store(next_quiet(stored), std::memory_order_relaxed);
  // Only ever later: a thread that saw a shorter quiet time (its spin began
  // before another's reset) must not cut a longer one short.
  const int64_t until = now_ns() + quiet_for(stored);
  int64_t current = quiet_until_ns_.load(std::memory_order_relaxed);
  while (current < until && !quiet_until_ns_.compare_exchange_weak(current, until, std::memory_order_relaxed)) {
  }
  contended_.fetch_add(1, std::memory_order_relaxed);
}

void WorkerPool::note_uncontended() {
  if (quiet_ns_.load(std::memory_order_relaxed) != 0) quiet_ns_.store(0, std::memory_order_relaxed);
}

template <class Waiting>
void WorkerPool::spin_while(Waiting&& waiting) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  // The context switches are counted (a system call each time) only once
  // the spin reaches its first yield: a wait that ends within the first
  // pauses, as most do, says nothing about the machine, and two system
  // calls would double the time a worker takes to join a job.
  long switched = -1;
  for (uint32_t round = 1; waiting(); ++round) {
    cpu_relax();
    if (round % kChecksPerYield != 0) continue;
    if (std::chrono::steady_clock::now() >= until) break;
    if (switched < 0) switched = involuntary_switches();
    std::this_thread::yield();
  }
  if (switched < 0) return;
  if (involuntary_switches() != switched)
    note_contended();
  else
    note_uncontended();
}

WorkerPool::WorkerPool(unsigned threads) {
  for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this] { work_loop(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lk(mutex_);
    stop_ = true;
    published_.store(UINT64_MAX, std::memory_order_release);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void WorkerPool::drain() {
  const uint32_t n = n_.load(std::memory_order_acquire);
  for (;;) {
    const uint32_t i = next_.fetch_add(1, std::memory_order_acq_rel);
    if (i >= n) return;
    call_.load(std::memory_order_acquire)(fn_.load(std::memory_order_acquire), i);
    if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == n) {
      // The last task: wake the caller if it went to sleep waiting for it.
      std::lock_guard<std::mutex> lk(mutex_);
      if (caller_waiting_) finished_.notify_one();
    }
  }
}

void WorkerPool::work_loop() {
  uint64_t seen = 0;
  for (;;) {
    // <=, not ==: a worker may have joined job `seen` under the lock before
    // the caller published it; the store of `seen` is then no new job.
    if (may_spin()) spin_while([&] { return published_.load(std::memory_order_acquire) <= seen; });
    std::unique_lock<std::mutex> lk(mutex_);
    wake_.wait(lk, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    // Joining under the lock: the caller starts a new job only when no worker
    // is inside drain(), so a worker never mixes two jobs.
    seen = generation_;
    active_.fetch_add(1, std::memory_order_acq_rel);
    lk.unlock();
    drain();
    active_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void WorkerPool::run(uint32_t n, void* ctx, void (*fn)(void*, uint32_t)) {
  std::unique_lock<std::mutex> job(job_mutex_, std::try_to_lock);
  if (workers_.empty() || n <= 1 || !job.owns_lock()) {
    // No workers, nothing to share, or another engine's job holds them.
    for (uint32_t i = 0; i < n; ++i) fn(ctx, i);
    return;
  }
  uint64_t generation = 0;
  {
    std::unique_lock<std::mutex> lk(mutex_);
    // A worker that joined the previous job late may still be leaving
    // drain(): it holds no task, so this wait is a few instructions long.
    while (active_.load(std::memory_order_acquire) != 0) {
      lk.unlock();
      std::this_thread::yield();
      lk.lock();
    }
    fn_.store(ctx, std::memory_order_relaxed);
    call_.store(fn, std::memory_order_relaxed);
    n_.store(n, std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    next_.store(0, std::memory_order_release);
    generation = ++generation_;
  }
  // Published after the lock is released: a spinning worker that saw it
  // while the lock was still held blocked on the mutex, and its wake-up
  // (a system call each way) cost more than a small job.
  published_.store(generation, std::memory_order_release);
  wake_.notify_all();
  drain();
  // Only tasks a worker already claimed can be outstanding here: check for
  // a moment when the machine allows, then sleep until the last signals.
  if (done_.load(std::memory_order_acquire) < n && may_spin())
    spin_while([&] { return done_.load(std::memory_order_acquire) < n; });
  if (done_.load(std::memory_order_acquire) < n) {
    std::unique_lock<std::mutex> lk(mutex_);
    caller_waiting_ = true;
    finished_.wait(lk, [&] { return done_.load(std::memory_order_acquire) >= n; });
    caller_waiting_ = false;
  }
}

namespace {

// A job on the calling thread alone.
class CallerThread final : public Executor {
 public:
  unsigned concurrency() const override { return 1; }
  void run(uint32_t n, void* ctx, void (*fn)(void*, uint32_t)) override {
    for (uint32_t i = 0; i < n; ++i) fn(ctx, i);
  }
};

// 0 = BULKSCORE_THREADS from the environment if set (a positive whole
// number; anything else is ignored), else one per core.
unsigned resolve_threads(unsigned threads) {
  if (threads > 0) return threads;
  if (const char* env = std::getenv("BULKSCORE_THREADS")) {
    const std::string_view text(env);
    unsigned n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec == std::errc() && end == text.data() + text.size() && n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

std::shared_ptr<Executor> make_thread_pool(unsigned threads) {
  return std::make_shared<WorkerPool>(resolve_threads(threads));
}

std::shared_ptr<Executor> caller_thread_executor() { return std::make_shared<CallerThread>(); }

}  // namespace bulkscore
