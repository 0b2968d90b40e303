#include "host/cpu/worker_pool.hpp"

#include <chrono>

namespace bulkscore {

namespace {
// How long an idle worker keeps checking for the next job before it sleeps.
constexpr auto kSpin = std::chrono::microseconds(200);
}  // namespace

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
    done_.fetch_add(1, std::memory_order_acq_rel);
  }
}

void WorkerPool::work_loop() {
  uint64_t seen = 0;
  for (;;) {
    // Spin briefly: the next pod usually follows within microseconds.
    const auto until = std::chrono::steady_clock::now() + kSpin;
    while (published_.load(std::memory_order_acquire) == seen && std::chrono::steady_clock::now() < until)
      std::this_thread::yield();
    std::unique_lock<std::mutex> lk(mutex_);
    if (!stop_ && generation_ == seen) {
      ++sleeping_;
      wake_.wait(lk, [&] { return stop_ || generation_ != seen; });
      --sleeping_;
    }
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

void WorkerPool::run_erased(uint32_t n, void* fn, Call call) {
  bool notify = false;
  {
    std::unique_lock<std::mutex> lk(mutex_);
    // A worker that joined the previous job late is still leaving drain().
    while (active_.load(std::memory_order_acquire) != 0) {
      lk.unlock();
      std::this_thread::yield();
      lk.lock();
    }
    fn_.store(fn, std::memory_order_relaxed);
    call_.store(call, std::memory_order_relaxed);
    n_.store(n, std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    next_.store(0, std::memory_order_release);
    ++generation_;
    published_.store(generation_, std::memory_order_release);
    notify = sleeping_ > 0;
  }
  if (notify) wake_.notify_all();
  drain();
  // Only tasks a worker already claimed can be outstanding here.
  while (done_.load(std::memory_order_acquire) < n) std::this_thread::yield();
}

}  // namespace bulkscore
