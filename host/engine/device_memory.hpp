// Memory a device backend grows to its high-water mark and reuses (the CUDA
// backend's per-pod scratch, its pinned host buffers and its snapshot
// mirror), and what happens when the device has no more. Plain C++ with no
// CUDA in it: the CUDA backend (kernels/cuda_backend.cpp) plugs cudaMalloc
// and cudaMallocHost in, and tests/test_backend_fallback.cpp drives the same
// policy with a fake allocator that has a byte budget.
//
// When an allocation finds the device full (docs/cuda-backend.md#memory):
//  1. a regrow that asked for half again as much (the growth slack) asks
//     for exactly what is needed;
//  2. then every scratch buffer the current call has not used is released
//     (an earlier explain's lists, a cache state's score lists, a large
//     tie's ranking, ...) and it asks again;
//  3. then it throws DeviceOutOfMemory. The engine then retries the pass
//     without its optional lists and falls back to the CPU only when the
//     pass itself cannot fit (Engine::evaluate).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace bulkscore {

// Where a device backend's memory comes from. Implementations are expected
// to outlive every buffer they allocated (the CUDA ones are static).
class DeviceAllocator {
 public:
  // `bytes` (> 0) of memory, or nullptr when there is not enough; other
  // failures throw (CudaError).
  virtual void* allocate(size_t bytes) = 0;
  virtual void deallocate(void* p) noexcept = 0;
  // For messages: "CUDA backend: cudaMalloc".
  virtual const char* name() const = 0;

 protected:
  DeviceAllocator() = default;
  DeviceAllocator(const DeviceAllocator&) = default;
  DeviceAllocator& operator=(const DeviceAllocator&) = default;
  ~DeviceAllocator() = default;  // never deleted through this type
};

// Memory that only grows (through DeviceMemoryPool::reserve); its contents
// are not kept across a regrow.
class GrowingBuffer {
 public:
  GrowingBuffer() = default;
  GrowingBuffer(const GrowingBuffer&) = delete;
  GrowingBuffer& operator=(const GrowingBuffer&) = delete;
  GrowingBuffer(GrowingBuffer&& o) noexcept
      : alloc_(o.alloc_), ptr_(std::exchange(o.ptr_, nullptr)), cap_(std::exchange(o.cap_, 0)), used_in_(o.used_in_) {}
  GrowingBuffer& operator=(GrowingBuffer&&) = delete;
  ~GrowingBuffer() { release(); }

  void* get() const { return ptr_; }
  size_t capacity() const { return cap_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  void release() noexcept {
    if (ptr_) alloc_->deallocate(ptr_);
    ptr_ = nullptr;
    cap_ = 0;
  }

 private:
  friend class DeviceMemoryPool;
  DeviceAllocator* alloc_ = nullptr;
  void* ptr_ = nullptr;
  size_t cap_ = 0;
  uint64_t used_in_ = 0;  // the pool's call that last reserved it
};

class DeviceMemoryPool {
 public:
  enum class Growth : uint8_t {
    kExact,  // exactly what is asked (rounded to the alignment)
    kSlack,  // on a regrow, half again the old capacity when that is more
  };
  // How often each out-of-memory step was taken (tests, -v logs).
  struct Stats {
    uint64_t slack_dropped = 0;  // a regrow fitted only without its slack
    uint64_t idle_released = 0;  // scratch buffers released to make room
    uint64_t out_of_memory = 0;  // DeviceOutOfMemory thrown
  };

  DeviceMemoryPool(DeviceAllocator& alloc, size_t alignment) : alloc_(&alloc), alignment_(alignment) {}

  // A scratch buffer: released to make room whenever the current call has
  // not reserved it. Its owner reserves it again in every call that uses it
  // (reserving what it already holds costs nothing). A buffer whose contents
  // must survive between calls (the snapshot mirror's columns) is not
  // scratch. Pointers are kept: the buffer must not move.
  void add_scratch(GrowingBuffer& b) { scratch_.push_back(&b); }

  // A new call (one evaluation): no scratch buffer counts as in use until
  // the call reserves it.
  void begin_call() { ++call_; }

  // Makes `b` hold at least `bytes` (no allocation when it does; nothing
  // when `bytes` is 0 and it holds nothing) and counts it as used by this
  // call. On a regrow the old memory is released first. Out of memory: see
  // the steps at the top of this file; after DeviceOutOfMemory `b` holds
  // nothing.
  void reserve(GrowingBuffer& b, size_t bytes, Growth growth = Growth::kSlack);

  // Releases the scratch buffers this call has not used; the bytes freed.
  size_t release_idle();

  const Stats& stats() const { return stats_; }
  DeviceAllocator& allocator() const { return *alloc_; }

 private:
  DeviceAllocator* alloc_;
  size_t alignment_;
  uint64_t call_ = 1;
  std::vector<GrowingBuffer*> scratch_;
  Stats stats_;
};

}  // namespace bulkscore
