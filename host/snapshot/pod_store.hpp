// Pods by id, in chunks of kChunk: a new id never moves the pods already
// held (a vector's growth moved every Pod, strings and maps included), and
// a new chunk is allocated once per kChunk ids (a std::deque of a Pod, over
// 512 bytes, allocates a block for every element: a malloc per assumed
// pod).
#pragma once

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "host/input/model.hpp"

namespace bulkscore {

class PodStore {
 public:
  PodStore() = default;
  PodStore(const PodStore& o) { *this = o; }
  PodStore(PodStore&&) noexcept = default;
  PodStore& operator=(PodStore&&) noexcept = default;
  PodStore& operator=(const PodStore& o) {
    if (this == &o) return *this;
    chunks_.clear();
    size_ = 0;
    for (size_t i = 0; i < o.size_; ++i) {
      emplace_back();
      (*this)[i] = o[i];
    }
    return *this;
  }

  size_t size() const { return size_; }
  Pod& operator[](size_t i) { return chunks_[i / kChunk][i % kChunk]; }
  const Pod& operator[](size_t i) const { return chunks_[i / kChunk][i % kChunk]; }

  // A default Pod at the end (an element past the end is always one).
  void emplace_back() {
    if (size_ == chunks_.size() * kChunk) chunks_.push_back(std::make_unique<Pod[]>(kChunk));
    ++size_;
  }
  // The last pod goes; a chunk is freed once a whole spare one follows it.
  void pop_back() {
    --size_;
    (*this)[size_] = Pod();
    while (chunks_.size() >= 2 && size_ + kChunk <= (chunks_.size() - 1) * kChunk) chunks_.pop_back();
  }

 private:
  static constexpr size_t kChunk = 64;
  std::vector<std::unique_ptr<Pod[]>> chunks_;
  size_t size_ = 0;
};

}  // namespace bulkscore
