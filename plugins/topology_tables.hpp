// Per-domain tables the topology plugins (PodTopologySpread,
// InterPodAffinity) build on the host per pod and their rules read on host
// and device: counts per value id of one topology key, sorted by value, in
// the pod query's arena.
#pragma once

#include "host/snapshot/snapshot.hpp"
#include "plugins/plugin_api.hpp"

namespace bulkscore::plugins {

// A count (or summed weight) for one value id of a topology key.
struct DomainCount {
  int32_t value;
  int64_t count;
};

// The entry for `value` in a table sorted by value, or nullptr.
BULKSCORE_HD const DomainCount* find_domain(const DomainCount* d, uint32_t n, int32_t value) {
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (d[mid].value < value)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && d[lo].value == value ? &d[lo] : nullptr;
}

// One topology key and its per-value table: upstream's
// map[topologyPair]int64 restricted to one key.
struct KeyedCounts {
  int32_t key;         // string id; kNoId when no node has the key
  int32_t dense_slot;  // its dense label column, or -1
  Span<DomainCount> values;

  // The node's value of the key (kNoId: the node lacks it).
  BULKSCORE_HD int32_t node_value(const SnapshotView& s, uint32_t node) const {
    return key == kNoId ? kNoId : s.label_value(node, key, dense_slot);
  }
  // The count at `value` (0 when the table has no entry).
  BULKSCORE_HD int64_t at(const uint8_t* arena, int32_t value) const {
    const DomainCount* d = find_domain(values.data(arena), values.count, value);
    return d ? d->count : 0;
  }
};

}  // namespace bulkscore::plugins
