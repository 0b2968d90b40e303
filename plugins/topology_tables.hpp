// Per-domain tables the topology plugins (PodTopologySpread,
// InterPodAffinity) build on the host per pod and their rules read on host
// and device: counts per value id of one topology key, sorted by value, in
// the pod query's arena.
#pragma once

#include <map>
#include <unordered_map>
#include <vector>

#include "host/snapshot/snapshot.hpp"
#include "plugins/plugin_api.hpp"

namespace bulkscore::plugins {

// A count (or summed weight) for one value id of a topology key.
struct DomainCount {
  int32_t value;
  // PodTopologySpread's Score tables: the feasible nodes that registered the
  // domain (host bookkeeping for prescore_feasible_since); 0 elsewhere. A
  // field, not implicit padding: a query is compared byte for byte.
  int32_t nodes = 0;
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
// map[topologyPair]int64 restricted to one key. A key with a dense label
// column is indexed by the value's rank (O(1) per node: hostname tables have
// one entry per node); another key by a sorted (value, count) list.
struct KeyedCounts {
  int32_t key;               // string id; kNoId when no node has the key
  int32_t dense_slot;        // its dense label column, or -1
  Span<int64_t> by_rank;     // dense_slot >= 0: count per rank of the key's values
  Span<DomainCount> values;  // dense_slot < 0: counts by value id, sorted

  // The count in the node's domain; `has_key` says whether the node has the key.
  BULKSCORE_HD int64_t at_node(const SnapshotView& s, const uint8_t* arena, uint32_t node, bool& has_key) const {
    if (dense_slot >= 0) {
      const int32_t r = s.dense_rank(dense_slot, node);
      has_key = r >= 0;
      return has_key ? by_rank.at(arena, static_cast<uint32_t>(r)) : 0;
    }
    const int32_t v = key == kNoId ? kNoId : s.label_value(node, key);
    has_key = v != kNoId;
    if (!has_key) return 0;
    const DomainCount* d = find_domain(values.data(arena), values.count, v);
    return d ? d->count : 0;
  }
};

// Builds KeyedCounts on the host: per key, a rank-indexed vector (dense
// keys) or a value map, added to by node or by value id.
class KeyedCountsBuilder {
 public:
  // `view` is snap.view() (PrepareContext::view), which outlives the builder.
  KeyedCountsBuilder(const Snapshot& snap, const SnapshotView& view) : snap_(snap), view_(view) {}

  // Makes the key's table exist (a key read by a rule even when empty).
  void touch(int32_t key) { (void)table(key); }
  // Adds weight x count(n) in node n's domain of `key` for every node n
  // with count(n) > 0 (the table looked up once); whether any of those
  // nodes has the key.
  template <class Count>
  bool add_at_nodes(int32_t key, uint32_t num_nodes, const Count& count, int64_t weight) {
    Table& t = table(key);
    bool any = false;
    for (uint32_t n = 0; n < num_nodes; ++n) {
      const int32_t c = count(n);
      if (c <= 0) continue;
      if (t.slot >= 0) {
        const int32_t r = view_.dense_rank(t.slot, n);
        if (r < 0) continue;
        t.by_rank[static_cast<size_t>(r)] += weight * c;
      } else {
        const int32_t v = key == kNoId ? kNoId : view_.label_value(n, key);
        if (v == kNoId) continue;
        t.by_value[v] += weight * c;
      }
      any = true;
    }
    return any;
  }
  // Adds `delta` at value id `value` of `key`.
  void add_at_value(int32_t key, int32_t value, int64_t delta);
  // Adds weight x counts[r] at every rank r of `key`'s dense column
  // (`counts` indexed like Snapshot::dense_label_values of that column).
  void add_by_rank(int32_t key, const std::vector<int64_t>& counts, int64_t weight);
  // No table holds a non-zero count.
  bool all_zero() const;
  Span<KeyedCounts> push(Arena& arena) const;

 private:
  struct Table {
    int32_t key;
    int32_t slot;
    std::vector<int64_t> by_rank;
    std::map<int32_t, int64_t> by_value;
  };
  Table& table(int32_t key);
  const Snapshot& snap_;
  const SnapshotView& view_;
  std::vector<Table> tables_;                       // in the order their keys were first touched
  std::unordered_map<int32_t, size_t> table_index_;  // key -> position in tables_ (a pod may name many keys)
};

}  // namespace bulkscore::plugins
