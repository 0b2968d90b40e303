// SeamProbe (Score; diagnostic): exercises the engine's seams for cross-node
// plugins independently of any real plugin's semantics, so that the
// parity suite checks them on every backend: a PreScore over the feasible
// nodes that builds a per-pod table in the arena (feasible nodes per zone),
// a per-node rule that reads it, the per-node ignore mask (kIgnoredScore) and
// the Spread and MinMax normalizations, negative raw scores and totals.
//
// It is in no profile and in no configuration's plugin list; a test enables
// it by adding "SeamProbe" to a ProfileConfig's score list. A pod opts in
// with the annotation `bulkscore.io/seam-probe: spread | minmax | raw`:
//  * spread: raw = feasible nodes in the node's zone + pods on the node;
//    nodes without a zone label are ignored; Spread normalization;
//  * minmax: raw = feasible nodes in the node's zone + pods on the node -
//    feasible nodes (mostly negative); MinMax normalization;
//  * raw: the minmax raw score used as is (NormalizeKind None), so totals can
//    be negative.
// Other pods: PreScore Skip.
// Permit (plugins/reserve.hpp): the annotation `bulkscore.io/seam-probe-permit:
// reject` rejects the pod once it is reserved (a message naming the node),
// `wait` makes it wait; any other pod is allowed.
#pragma once

#include "host/snapshot/snapshot.hpp"
#include "plugins/plugin_api.hpp"
#include "plugins/topology_tables.hpp"

namespace bulkscore {

struct ReserveContext;
struct Reservation;
struct PermitStatus;

namespace plugins {

struct SeamProbe {
  static constexpr const char* kName = "SeamProbe";
  static constexpr bool kHasFilter = false;
  static constexpr bool kHasScore = true;
  // The pod's annotation picks the kind; see normalize_for().
  static constexpr NormalizeKind kNormalize = NormalizeKind::Spread;
  static constexpr bool kPreScoreFeasible = true;

  static constexpr const char* kAnnotation = "bulkscore.io/seam-probe";
  static constexpr const char* kPermitAnnotation = "bulkscore.io/seam-probe-permit";

  struct State {
    int32_t zone_key;         // string id of the zone label key (kNoId: no node has it)
    int32_t zone_slot;        // its dense label column, or -1
    int32_t feasible;         // feasible nodes (PreScore)
    Span<DomainCount> zones;  // feasible nodes per zone (value id of topology.kubernetes.io/zone), sorted (PreScore)
    NormalizeKind kind;
    uint8_t padding_[3] = {};  // explicit: a query is compared byte for byte (docs/batching.md)
  };

  static PrepareResult prepare(const PrepareContext& ctx, State& st, Arena& arena);
  static void prescore_feasible(const Snapshot& snap, State& st, Arena& arena, const uint32_t* feasible,
                                uint32_t count);
  static NormalizeKind normalize_for(const State& st) { return st.kind; }

  static BULKSCORE_HD int64_t score(const SnapshotView& s, const State& st, const uint8_t* arena, uint32_t node) {
    const int32_t zone = st.zone_key == kNoId ? kNoId : s.label_value(node, st.zone_key, st.zone_slot);
    int64_t in_zone = 0;
    if (zone != kNoId)
      if (const DomainCount* z = find_domain(st.zones.data(arena), st.zones.count, zone)) in_zone = z->count;
    const int64_t pods = s.pod_count[node];
    if (st.kind == NormalizeKind::Spread) return zone == kNoId ? kIgnoredScore : in_zone + pods;
    return in_zone + pods - st.feasible;
  }

  static void reasons(uint64_t, const Snapshot&, const State&, const uint8_t*, uint32_t, std::vector<std::string>&) {}

#ifndef __CUDACC__
  static PermitStatus permit(const ReserveContext& ctx, const Reservation& r);
#endif
};
}  // namespace plugins
}  // namespace bulkscore
