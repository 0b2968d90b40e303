// NodeAffinity (PreFilter, Filter, PreScore, Score; weight 2 by default).
// Required: nodeSelector AND required node affinity (terms ORed, requirements
// ANDed), plus the profile's addedAffinity. Score: the summed weights of the
// matching preferred terms, normalized by the maximum.
#pragma once

#include "host/snapshot/snapshot.hpp"
#include "plugins/plugin_api.hpp"

namespace bulkscore {

// One compiled NodeSelectorRequirement (label expression or metadata.name field).
struct AffinityRequirement {
  enum Op : uint8_t { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt, kFieldIn, kFieldNotIn, kAlways, kNever };
  int32_t key;           // label key id (kNoId: no node has it)
  int32_t dense = -1;    // the key's dense label column, -1 if none
  Span<int32_t> values;  // ids of the values the dictionary knows, sorted
  int64_t bound;         // Gt/Lt
  uint8_t op;
  uint8_t padding_[7] = {};  // explicit: a query is compared byte for byte (docs/batching.md)

  BULKSCORE_HD bool matches(const SnapshotView& s, const uint8_t* arena, uint32_t node) const {
    if (op == kAlways || op == kNever) return op == kAlways;  // decided at prepare time
    if (op == kFieldIn || op == kFieldNotIn) {
      const bool in = values.count == 1 && values.at(arena, 0) == s.node_name_id[node];
      return op == kFieldIn ? in : !in;
    }
    const int32_t v = s.label_value(node, key, dense);
    switch (op) {
      case kExists:
        return v != kNoId;
      case kDoesNotExist:
        return v == kNoId;
      case kGt:
        return v != kNoId && s.string_int_ok[v] && s.string_int[v] > bound;
      case kLt:
        return v != kNoId && s.string_int_ok[v] && s.string_int[v] < bound;
      default:
        break;
    }
    bool in = false;
    if (v != kNoId) {
      const int32_t* vals = values.data(arena);
      for (uint32_t i = 0; i < values.count; ++i) in = in || vals[i] == v;
    }
    return op == kIn ? in : !in;  // NotIn also holds when the label is absent
  }
};

// A NodeSelectorTerm: all requirements must hold. A term with a requirement
// that failed to parse never matches (upstream drops the whole term).
struct AffinityTerm {
  Span<AffinityRequirement> requirements;
  int32_t weight;  // preferred terms only
  bool unmatchable;
  uint8_t padding_[3] = {};  // explicit: a query is compared byte for byte (docs/batching.md)

  BULKSCORE_HD bool matches(const SnapshotView& s, const uint8_t* arena, uint32_t node) const {
    if (unmatchable) return false;
    const AffinityRequirement* r = requirements.data(arena);
    for (uint32_t i = 0; i < requirements.count; ++i)
      if (!r[i].matches(s, arena, node)) return false;
    return true;
  }
};

namespace plugins {

struct NodeAffinity {
  static constexpr const char* kName = "NodeAffinity";
  static constexpr bool kHasFilter = true;
  // Filter reads the node's labels and name (plugin_api.hpp).
  static constexpr FilterReach kFilterReach = FilterReach::kNodeLocal;
  static constexpr bool kHasScore = true;
  static constexpr NormalizeKind kNormalize = NormalizeKind::Default;
  static constexpr bool kPreScoreFeasible = false;

  enum Reason : uint64_t { kAddedAffinity = 1, kPodAffinity = 2 };

  struct State {
    Span<AffinityRequirement> node_selector;  // ANDed
    Span<AffinityTerm> required;              // ORed; empty + has_required = matches nothing
    Span<AffinityTerm> added_required;
    Span<AffinityTerm> preferred;  // the pod's and the profile's
    bool has_required;             // required node affinity is set
    bool has_added_required;
    uint8_t padding_[2] = {};  // explicit: a query is compared byte for byte (docs/batching.md)
  };

  static PrepareResult prepare(const PrepareContext& ctx, State& st, Arena& arena);

  static BULKSCORE_HD bool any_term(const SnapshotView& s, const uint8_t* arena, Span<AffinityTerm> terms,
                                    uint32_t node) {
    const AffinityTerm* t = terms.data(arena);
    for (uint32_t i = 0; i < terms.count; ++i)
      if (t[i].matches(s, arena, node)) return true;
    return false;
  }

  static BULKSCORE_HD FilterOutcome filter(const SnapshotView& s, const State& st, const uint8_t* arena,
                                           uint32_t node) {
    if (st.has_added_required && !any_term(s, arena, st.added_required, node))
      return filter_fail(Code::UnschedulableAndUnresolvable, kAddedAffinity);
    const AffinityRequirement* sel = st.node_selector.data(arena);
    for (uint32_t i = 0; i < st.node_selector.count; ++i)
      if (!sel[i].matches(s, arena, node)) return filter_fail(Code::UnschedulableAndUnresolvable, kPodAffinity);
    if (st.has_required && !any_term(s, arena, st.required, node))
      return filter_fail(Code::UnschedulableAndUnresolvable, kPodAffinity);
    return filter_pass();
  }

  static BULKSCORE_HD int64_t score(const SnapshotView& s, const State& st, const uint8_t* arena, uint32_t node) {
    int64_t sum = 0;
    const AffinityTerm* t = st.preferred.data(arena);
    for (uint32_t i = 0; i < st.preferred.count; ++i)
      if (t[i].matches(s, arena, node)) sum += t[i].weight;
    return sum;
  }

  static void reasons(uint64_t bits, const Snapshot& snap, const State& st, const uint8_t* arena, uint32_t node,
                      std::vector<std::string>& out);
};
}  // namespace plugins
}  // namespace bulkscore
