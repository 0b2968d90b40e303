#include "host/engine/device_memory.hpp"

#include <algorithm>
#include <string>

#include "host/common.hpp"

namespace bulkscore {
namespace {

size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

}  // namespace

void DeviceMemoryPool::reserve(GrowingBuffer& b, size_t bytes, Growth growth) {
  b.used_in_ = call_;
  if (bytes <= b.cap_) return;
  const size_t exact = align_up(bytes, alignment_);
  // The slack is measured on the old capacity, so before release() zeroes it.
  const size_t want = growth == Growth::kSlack ? align_up(std::max(bytes, b.cap_ + b.cap_ / 2), alignment_) : exact;
  b.release();
  b.alloc_ = alloc_;
  void* p = alloc_->allocate(want);
  size_t got = want;
  if (!p && want > exact) {
    p = alloc_->allocate(exact);
    got = exact;
    stats_.slack_dropped += p ? 1 : 0;
  }
  if (!p && release_idle() > 0) {
    p = alloc_->allocate(exact);
    got = exact;
  }
  if (!p) {
    ++stats_.out_of_memory;
    throw DeviceOutOfMemory(std::string(alloc_->name()) + " of " + std::to_string(exact) +
                            " bytes failed: out of memory (without growth slack, with every idle buffer released)");
  }
  b.ptr_ = p;
  b.cap_ = got;
}

size_t DeviceMemoryPool::release_idle() {
  size_t freed = 0;
  for (GrowingBuffer* s : scratch_)
    if (s->used_in_ != call_ && s->cap_ > 0) {
      freed += s->cap_;
      s->release();
      ++stats_.idle_released;
    }
  return freed;
}

}  // namespace bulkscore
