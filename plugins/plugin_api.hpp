// What a plugin is made of. Every plugin is one struct in plugins/<name>.hpp:
//
//   struct Foo {
//     static constexpr PluginId kId = PluginId::Foo;
//     static constexpr bool kHasFilter = ..., kHasScore = ...;
//     static constexpr NormalizeKind kNormalize = NormalizeKind::...;
//     struct State { ... };   // trivially copyable; variable data as Span<T>
//     // Host: PreFilter + PreScore for one pod. Fills State (and the arena).
//     static PrepareResult prepare(const PrepareContext&, State&, Arena&);
//     // Host and device: the per-node rules, the only copy of the logic
//     // (filter() only when kHasFilter, score() only when kHasScore).
//     static BULKSCORE_HD FilterOutcome filter(const SnapshotView&, const State&, const uint8_t* arena, uint32_t node);
//     static BULKSCORE_HD int64_t score(const SnapshotView&, const State&, const uint8_t* arena, uint32_t node);
//     // Host: the reason strings for a filter outcome's reason bits.
//     static void reasons(uint64_t bits, const Snapshot&, const State&, const uint8_t* arena, std::vector<std::string>&
//     out);
//   };
//
// and one line in plugins/registry.hpp. Backends never name a plugin.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "host/common.hpp"

namespace bulkscore {

// Host-side types a plugin's prepare() and reasons() take (plugins/prepare.hpp,
// host/snapshot/snapshot.hpp); declared here so rule headers stay light for nvcc.
struct PrepareContext;
struct PrepareResult;
class Snapshot;

// Upstream's status codes (framework.Code), the subset a cycle produces.
enum class Code : uint8_t {
  Success = 0,
  Error = 1,
  Unschedulable = 2,
  UnschedulableAndUnresolvable = 3,
  Wait = 4,
  Skip = 5,
  Pending = 6,
};
const char* code_name(Code c);

// One plugin's verdict on one node. `reasons` is a plugin-defined bit set
// (most plugins have one reason, bit 0; NodeResourcesFit has one bit per
// resource), turned into strings on the host only when a message is needed.
struct FilterOutcome {
  Code code = Code::Success;
  uint64_t reasons = 0;
  BULKSCORE_HD bool ok() const { return code == Code::Success; }
};

BULKSCORE_HD FilterOutcome filter_pass() { return FilterOutcome{Code::Success, 0}; }
BULKSCORE_HD FilterOutcome filter_fail(Code c, uint64_t reasons = 1) { return FilterOutcome{c, reasons}; }

// a / b with Go's int64 semantics (truncation), computed through a float64
// division plus one exact correction when both operands are non-negative and
// below 2^53: the correctly rounded quotient is then the true quotient or one
// above it. Integer division is many times slower on both CPUs and GPUs, and
// the scoring formulas divide per node.
BULKSCORE_HD int64_t div_trunc(int64_t a, int64_t b) {
  constexpr int64_t kExact = int64_t(1) << 53;
  if (a < 0 || b <= 0 || a >= kExact || b >= kExact) return a / b;
  int64_t q = static_cast<int64_t>(static_cast<double>(a) / static_cast<double>(b));
  if (q * b > a) --q;
  return q;
}

// How a plugin's raw scores become 0..100 (semantics doc §2.3).
enum class NormalizeKind : uint8_t {
  None,            // raw is final (already 0..100)
  Default,         // 100*raw/max over the scored nodes; all zero stays zero
  DefaultReverse,  // 100 - 100*raw/max; max == 0 gives 100 everywhere
};

// Min and max of one plugin's raw scores over the nodes being scored.
struct NormStats {
  int64_t min;
  int64_t max;
};

BULKSCORE_HD int64_t normalize_score(NormalizeKind kind, int64_t raw, NormStats st) {
  switch (kind) {
    case NormalizeKind::None:
      return raw;
    case NormalizeKind::Default: {
      const int64_t m = st.max > 0 ? st.max : 0;  // upstream's max starts at 0
      return m == 0 ? raw : div_trunc(100 * raw, m);
    }
    case NormalizeKind::DefaultReverse: {
      const int64_t m = st.max > 0 ? st.max : 0;
      return m == 0 ? 100 : 100 - div_trunc(100 * raw, m);
    }
  }
  return raw;
}

// A typed (offset, count) into a pod query's arena: valid on host and device
// because the arena is copied whole and only its base pointer differs.
template <class T>
struct Span {
  uint32_t offset = 0;
  uint32_t count = 0;
  BULKSCORE_HD const T* data(const uint8_t* base) const { return reinterpret_cast<const T*>(base + offset); }
  BULKSCORE_HD const T& at(const uint8_t* base, uint32_t i) const { return data(base)[i]; }
};

// Per-pod byte arena, built on the host during prepare.
class Arena {
 public:
  template <class T>
  Span<T> push(const T* items, size_t n) {
    static_assert(std::is_trivially_copyable<T>::value, "arena items are copied to the device");
    const size_t align = alignof(T) < 8 ? 8 : alignof(T);
    const size_t off = (bytes_.size() + align - 1) / align * align;
    bytes_.resize(off + n * sizeof(T));
    if (n) std::memcpy(bytes_.data() + off, items, n * sizeof(T));
    return Span<T>{static_cast<uint32_t>(off), static_cast<uint32_t>(n)};
  }
  template <class T>
  Span<T> push(const std::vector<T>& v) {
    return push(v.data(), v.size());
  }
  void clear() { bytes_.clear(); }
  const uint8_t* data() const { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }

 private:
  std::vector<uint8_t> bytes_;
};

}  // namespace bulkscore
