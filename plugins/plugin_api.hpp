// What a plugin is made of. Every plugin is one struct in plugins/<name>.hpp:
//
//   struct Foo {
//     static constexpr bool kHasFilter = ..., kHasScore = ...;
//     static constexpr NormalizeKind kNormalize = NormalizeKind::...;
//     static constexpr bool kPreScoreFeasible = ...;  // PreScore over the feasible nodes
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
//     // Host, only when kPreScoreFeasible: PreScore's work that needs the
//     // feasible nodes (tables over their topology domains, say), after
//     // Filter and before Score, appending its tables to the arena.
//     static void prescore_feasible(const Snapshot&, State&, Arena&, const uint32_t* feasible, uint32_t count);
//     // Host, optional with kPreScoreFeasible: prescore_feasible's tables
//     // derived from `prev`'s (a query whose prepare wrote the same bytes,
//     // over a feasible set that has since lost the nodes `left` and gained
//     // none, `count` remaining, with only pods and resources changed on the
//     // nodes since). False where it cannot: the caller runs prescore_feasible.
//     static bool prescore_feasible_since(const Snapshot&, State&, Arena&, const State& prev,
//                                         const uint8_t* prev_arena, const uint32_t* left, uint32_t n_left,
//                                         uint32_t count);
//     // Host, optional: the node's score class, for the batch cache
//     // (docs/batching.md): nodes of one class get equal scores under any
//     // tables prescore_feasible builds, and the class reads only what
//     // prepare wrote and the node's columns. False: no classes for this pod.
//     static bool score_class(const SnapshotView&, const State&, const uint8_t* arena, uint32_t node, uint64_t& cls);
//     // Host, optional: score() of `count` nodes at once, out[i] for
//     // nodes[i], equal to score() node by node; for a rule that can share
//     // its work between nodes in the same state. The CPU backend and the
//     // batch cache call it; device kernels keep score().
//     static void score_nodes(const SnapshotView&, const State&, const uint8_t* arena, const uint32_t* nodes,
//                             uint32_t count, int64_t* out);
//     // Host, optional, with score_nodes: this pod's part in a column kernel
//     // that several plugins' scores have in common (upstream's resource
//     // allocation scorer, behind NodeResourcesFit's strategies and
//     // NodeResourcesBalancedAllocation: the same allocatable columns, read
//     // once for both). False: score_nodes alone, for this pod. The CPU
//     // backend runs a kernel once for all the slots whose parts name it,
//     // in one pass over the nodes; each slot's scores equal its score_nodes.
//     static bool shared_score(const State&, const uint8_t* arena, SharedScorePart& part);
//     // Host, optional, with filter_nodes: this pod's Filter as a part of a
//     // shared score kernel (one some score plugin's shared_score names),
//     // whose out[i] is 1 where filter(nodes[i]) is not ok() and 0 where it
//     // is. Where no rejection reasons are read and a score part of this
//     // pod names the same kernel, the CPU backend filters the plugin there,
//     // in the loop that reads the same columns for the scores, instead of
//     // before Score: it drops the failing nodes before any other plugin
//     // scores them. False: filter_nodes, for this pod.
//     static bool shared_filter(const State&, const uint8_t* arena, SharedScorePart& part);
//     // Host, optional: true when score() is `value` on every node of the
//     // snapshot, known without visiting them (from what prepare wrote and
//     // O(1) facts of the snapshot); false when it may vary. The CPU
//     // backend then scores no node of that plugin.
//     static bool uniform_score(const SnapshotView&, const State&, const uint8_t* arena, int64_t& value);
//     // Host, optional: Filter of `count` nodes at once, fails[i] = 1 where
//     // filter(nodes[i]) is not ok() and 0 where it is, for a rule whose
//     // checks are branch-free column loops. The CPU backend calls it and
//     // then filter() on the failing nodes only, for their code and reasons.
//     static void filter_nodes(const SnapshotView&, const State&, const uint8_t* arena, const uint32_t* nodes,
//                              uint32_t count, uint8_t* fails);
//     // How Filter depends on other nodes' pods (FilterReach below); a
//     // plugin with a Filter declares it. With kPreFilterTables, filter()
//     // takes a fifth argument, `const int64_t* removed` (nullptr: nothing
//     // removed), and the plugin has, on the host:
//     // The number of counts `removed` holds for this pod's state.
//     static uint32_t removal_slots(const State&);
//     // What each of node `node`'s pods `pods[0..count)` (snapshot pod
//     // ids), once removed, takes from the tables filter() reads in the
//     // node's domains: out[k * removal_slots + j] for pods[k]. filter() on
//     // `node` with `removed` the sum over a set of them is Filter with
//     // those pods gone (upstream's RemovePod on the cycle state).
//     static void removal_counts(const RemovalContext&, const State&, const uint8_t* arena, uint32_t node,
//                                const uint32_t* pods, uint32_t count, int64_t* out);
//     // Host, optional, with kPreFilterTables (the batch cache, docs/batching.md):
//     // whether two prepared states of the plugin (`prev` with the bytes
//     // prepare wrote at prev_arena[prev_begin, prev_end), `st` likewise)
//     // differ in nothing but the counts of the tables filter() reads, and
//     // then, when `nodes` is given, which nodes' Filter may answer
//     // differently (at least those whose verdict flipped), appended.
//     // False: something else differs; the cached verdicts cannot serve.
//     // Contract: score() and score_class() read none of those counts (a
//     // hit keeps the plugin's raw scores and classes when they alone
//     // differ).
//     static bool filter_count_changes(const Snapshot&, const State& prev, const uint8_t* prev_arena,
//                                      uint32_t prev_begin, uint32_t prev_end, const State& st,
//                                      const uint8_t* arena, uint32_t begin, uint32_t end,
//                                      std::vector<uint32_t>* nodes);
//     // Host, optional, with filter_count_changes: a "gate", one of the
//     // rules filter() checks whose verdict is one per domain (every node
//     // of a domain passes it or every one fails it, whatever else the
//     // node holds), so that the batch cache can shut or open a domain's
//     // nodes as one flag. filter_gate: false where this state has no gate;
//     // else `domain`, the node's domain on it.
//     static bool filter_gate(const SnapshotView&, const State&, const uint8_t* arena, uint32_t node,
//                             int32_t& domain);
//     // filter_count_changes, with the gate's flipped domains in `gates`
//     // (each with its verdict now) instead of their nodes in `nodes`.
//     static bool filter_count_changes_gated(<filter_count_changes' arguments>, std::vector<GateFlip>* gates);
//   };
//
// and its type in plugins/registry.hpp. Backends never name a plugin.
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
struct RemovalContext;
struct SnapshotView;
class Snapshot;

// One plugin's part in a score kernel several plugins share (shared_score
// at the top of this file). `kernel` writes out[k][i], parts[k]'s score of
// nodes[i], for every part it is handed (each part naming it): it may
// compute some parts together and others alone, but each equals its
// plugin's score_nodes. What a part holds beside its kernel is the
// kernel's own: `kind`, `entries` (`count` of them) and `arena` as the
// plugin's shared_score (or shared_filter) wrote them.
// A gate's domain whose verdict flipped (filter_count_changes_gated).
struct GateFlip {
  int32_t domain;
  bool open;  // its nodes pass the gate now
};

struct SharedScorePart {
  using Kernel = void (*)(const SnapshotView& s, const SharedScorePart* parts, uint32_t nparts, const uint32_t* nodes,
                          uint32_t count, int64_t* const* out);
  Kernel kernel = nullptr;
  uint32_t kind = 0;
  uint32_t count = 0;
  const void* entries = nullptr;
  const uint8_t* arena = nullptr;
};

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

// Go's int64(f) for a float64 as amd64 computes it (CVTTSD2SQ): truncation
// toward zero inside int64's range, and the "integer indefinite" value, the
// minimum int64, for NaN and anything outside it, where C++'s conversion is
// undefined. A score formula reaches that only on inputs whose requests
// wrap or whose allocatable is negative (nodes built through the C++ API).
BULKSCORE_HD int64_t go_float_to_int64(double f) {
  constexpr double kTwo63 = 9223372036854775808.0;  // 2^63, exact in float64
  return f >= -kTwo63 && f < kTwo63 ? static_cast<int64_t>(f) : INT64_MIN;
}

// a / b with Go's int64 semantics (truncation, b != 0), computed through a float64
// division plus one exact correction when both operands are non-negative and
// below 2^53: the correctly rounded quotient is then the true quotient or one
// above it. Integer division is many times slower on both CPUs and GPUs, and
// the scoring formulas divide per node.
BULKSCORE_HD int64_t div_trunc(int64_t a, int64_t b) {
  constexpr int64_t kExact = int64_t(1) << 53;
  if (a < 0 || b <= 0 || a >= kExact || b >= kExact) {
    // Go's min int64 / -1 is min int64 (the quotient wraps); C++'s traps.
    if (b == -1) return go_sub(0, a);
    return a / b;
  }
  int64_t q = static_cast<int64_t>(static_cast<double>(a) / static_cast<double>(b));
  if (q * b > a) --q;
  return q;
}

// How a plugin's raw scores become 0..100 (semantics doc §2.3).
enum class NormalizeKind : uint8_t {
  None,            // raw is final (already 0..100)
  Default,         // 100*raw/max over the scored nodes; all zero stays zero
  DefaultReverse,  // 100 - 100*raw/max; max == 0 gives 100 everywhere
  // PodTopologySpread: 100*(max+min-raw)/max over the nodes not ignored
  // (min starts at +inf, max at 0); ignored nodes get 0; max == 0 gives 100.
  Spread,
  // InterPodAffinity: int64(100 * (float64(raw-min) / float64(max-min)))
  // over every scored node (raw may be negative); max == min gives 0.
  MinMax,
  // The ATC '23 simulator's NormalizeScore (GpuBestFit): (raw-min)*100 /
  // (max-min) in integers over every scored node; max == min gives 0.
  MinMaxInteger,
};

// A raw score a plugin returns for a node it ignores (PodTopologySpread's
// nodes without the constraints' topology keys): left out of the min/max and
// normalized to 0, as upstream's IgnoredNodes set does. It is the per-node
// ignore mask, carried in the score itself so that no backend keeps a second
// array for it.
constexpr int64_t kIgnoredScore = INT64_MIN;

// Min and max of one plugin's raw scores over the nodes being scored
// (ignored nodes left out). Starts empty: {INT64_MAX, INT64_MIN}.
struct NormStats {
  int64_t min;
  int64_t max;
};

BULKSCORE_HD NormStats empty_norm_stats() { return NormStats{INT64_MAX, INT64_MIN}; }

// Branch-free (conditional moves in the CPU backend's column loops): an
// ignored score, INT64_MIN, never raises the max and is kept out of the min.
BULKSCORE_HD void add_to_stats(NormStats& st, int64_t raw) {
  const int64_t for_min = raw == kIgnoredScore ? INT64_MAX : raw;
  st.min = for_min < st.min ? for_min : st.min;
  st.max = raw > st.max ? raw : st.max;
}

BULKSCORE_HD NormStats merge_stats(NormStats a, NormStats b) {
  return NormStats{a.min < b.min ? a.min : b.min, a.max > b.max ? a.max : b.max};
}

BULKSCORE_HD int64_t normalize_score(NormalizeKind kind, int64_t raw, NormStats st) {
  if (raw == kIgnoredScore) return 0;
  // Upstream's loops start max at 0 for these kinds (a negative max reads 0).
  const int64_t max0 = st.max > 0 ? st.max : 0;
  switch (kind) {
    case NormalizeKind::None:
      return raw;
    case NormalizeKind::Default:
      return max0 == 0 ? raw : div_trunc(go_mul(100, raw), max0);
    case NormalizeKind::DefaultReverse:
      return max0 == 0 ? 100 : go_sub(100, div_trunc(go_mul(100, raw), max0));
    case NormalizeKind::Spread:
      return max0 == 0 ? 100 : div_trunc(go_mul(100, go_sub(go_add(max0, st.min), raw)), max0);
    case NormalizeKind::MinMax: {
      const int64_t diff = go_sub(st.max, st.min);
      if (diff <= 0) return 0;
      // Division first, then the product, as upstream computes it.
      return go_float_to_int64(100.0 * (static_cast<double>(go_sub(raw, st.min)) / static_cast<double>(diff)));
    }
    case NormalizeKind::MinMaxInteger: {
      const int64_t diff = go_sub(st.max, st.min);
      return diff <= 0 ? 0 : div_trunc(go_mul(go_sub(raw, st.min), 100), diff);
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

// Whether plugin P has the optional score_class (see the top of this file).
template <class P, class = void>
struct HasScoreClass : std::false_type {};
template <class P>
struct HasScoreClass<P, std::void_t<decltype(&P::score_class)>> : std::true_type {};
template <class P>
constexpr bool kHasScoreClass = HasScoreClass<P>::value;

// Whether plugin P has the optional filter_count_changes.
template <class P, class = void>
struct HasFilterCountChanges : std::false_type {};
template <class P>
struct HasFilterCountChanges<P, std::void_t<decltype(&P::filter_count_changes)>> : std::true_type {};
template <class P>
constexpr bool kHasFilterCountChanges = HasFilterCountChanges<P>::value;

// Whether plugin P has the optional filter_gate (and
// filter_count_changes_gated).
template <class P, class = void>
struct HasFilterGate : std::false_type {};
template <class P>
struct HasFilterGate<P, std::void_t<decltype(&P::filter_gate)>> : std::true_type {};
template <class P>
constexpr bool kHasFilterGate = HasFilterGate<P>::value;

// Whether plugin P has the optional score_nodes.
template <class P, class = void>
struct HasScoreNodes : std::false_type {};
template <class P>
struct HasScoreNodes<P, std::void_t<decltype(&P::score_nodes)>> : std::true_type {};
template <class P>
constexpr bool kHasScoreNodes = HasScoreNodes<P>::value;

// Whether plugin P has the optional shared_score.
template <class P, class = void>
struct HasSharedScore : std::false_type {};
template <class P>
struct HasSharedScore<P, std::void_t<decltype(&P::shared_score)>> : std::true_type {};
template <class P>
constexpr bool kHasSharedScore = HasSharedScore<P>::value;

// Whether plugin P has the optional shared_filter.
template <class P, class = void>
struct HasSharedFilter : std::false_type {};
template <class P>
struct HasSharedFilter<P, std::void_t<decltype(&P::shared_filter)>> : std::true_type {};
template <class P>
constexpr bool kHasSharedFilter = HasSharedFilter<P>::value;

// Whether plugin P has the optional uniform_score.
template <class P, class = void>
struct HasUniformScore : std::false_type {};
template <class P>
struct HasUniformScore<P, std::void_t<decltype(&P::uniform_score)>> : std::true_type {};
template <class P>
constexpr bool kHasUniformScore = HasUniformScore<P>::value;

// Host: whether nodes[0..n) is the run nodes[0], nodes[0] + 1, ... (column
// loops then read the columns directly instead of gathering).
inline bool is_contiguous_run(const uint32_t* nodes, uint32_t n) {
  uint32_t bad = 0;
  for (uint32_t i = 0; i < n; ++i) bad |= nodes[i] ^ (nodes[0] + i);
  return bad == 0;
}

// Whether plugin P has the optional filter_nodes.
template <class P, class = void>
struct HasFilterNodes : std::false_type {};
template <class P>
struct HasFilterNodes<P, std::void_t<decltype(&P::filter_nodes)>> : std::true_type {};
template <class P>
constexpr bool kHasFilterNodes = HasFilterNodes<P>::value;

// Whether plugin P has the optional prescore_feasible_since.
template <class P, class = void>
struct HasPreScoreFeasibleSince : std::false_type {};
template <class P>
struct HasPreScoreFeasibleSince<P, std::void_t<decltype(&P::prescore_feasible_since)>> : std::true_type {};
template <class P>
constexpr bool kHasPreScoreFeasibleSince = HasPreScoreFeasibleSince<P>::value;

// How a plugin's Filter on node n depends on the pods of other nodes; the
// preemption dry run (host/engine/preemption.cpp), which removes some of
// node n's pods and filters n again, reads it to choose its path.
enum class FilterReach : uint8_t {
  // Filter reads node n's own fields and columns only (requests, pod
  // count, host ports), or has no Filter: removing n's pods is patching n's
  // columns.
  kNodeLocal,
  // Filter reads tables PreFilter built over topology domains, which
  // removing n's pods changes only in n's domains: filter() takes the
  // counts removed there (removal_slots, removal_counts above).
  kPreFilterTables,
  // Neither: only PreFilter afresh on a changed snapshot answers (the
  // exact dry run), unless PreFilter skipped the plugin for the pod.
  kUnsupported,
};

// A plugin's FilterReach: what it declares as kFilterReach; one without a
// Filter reads nothing; one with a Filter that declares nothing is left to
// the exact path.
template <class P, class = void>
struct FilterReachOf {
  static constexpr FilterReach value = P::kHasFilter ? FilterReach::kUnsupported : FilterReach::kNodeLocal;
};
template <class P>
struct FilterReachOf<P, std::void_t<decltype(P::kFilterReach)>> {
  static constexpr FilterReach value = P::kFilterReach;
};
template <class P>
constexpr FilterReach kFilterReachOf = FilterReachOf<P>::value;

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
  void reserve(size_t bytes) { bytes_.reserve(bytes); }
  // Drops everything pushed after the arena was `size` bytes long.
  void truncate(size_t size) {
    if (size < bytes_.size()) bytes_.resize(size);
  }
  const uint8_t* data() const { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }

 private:
  std::vector<uint8_t> bytes_;
};

}  // namespace bulkscore
