#include "plugins/topology_tables.hpp"

#include <algorithm>
#include <cassert>

namespace bulkscore::plugins {

KeyedCountsBuilder::Table& KeyedCountsBuilder::table(int32_t key) {
  const auto [it, fresh] = table_index_.emplace(key, tables_.size());
  if (!fresh) return tables_[it->second];
  Table t;
  t.key = key;
  t.slot = key == kNoId ? -1 : snap_.dense_label_slot(key);
  if (t.slot >= 0) t.by_rank.assign(snap_.dense_label_values(t.slot).size(), 0);
  tables_.push_back(std::move(t));
  return tables_.back();
}

void KeyedCountsBuilder::add_at_value(int32_t key, int32_t value, int64_t delta) {
  Table& t = table(key);
  if (t.slot >= 0) {
    const int32_t r = snap_.dense_label_rank_of(t.slot, value);
    if (r >= 0) t.by_rank[static_cast<size_t>(r)] += delta;  // else no node has the value
    return;
  }
  t.by_value[value] += delta;
}

void KeyedCountsBuilder::add_by_rank(int32_t key, const std::vector<int64_t>& counts, int64_t weight) {
  Table& t = table(key);
  assert(t.by_rank.size() == counts.size() && "both follow the key's dense column");
  const size_t n = std::min(t.by_rank.size(), counts.size());
  for (size_t r = 0; r < n; ++r) t.by_rank[r] += weight * counts[r];
}

bool KeyedCountsBuilder::all_zero() const {
  for (const Table& t : tables_) {
    if (std::any_of(t.by_rank.begin(), t.by_rank.end(), [](int64_t c) { return c != 0; })) return false;
    for (const auto& kv : t.by_value)
      if (kv.second != 0) return false;
  }
  return true;
}

Span<KeyedCounts> KeyedCountsBuilder::push(Arena& arena) const {
  std::vector<KeyedCounts> out;
  for (const Table& t : tables_) {
    KeyedCounts k{};
    k.key = t.key;
    k.dense_slot = t.slot;
    k.by_rank = arena.push(t.by_rank);
    std::vector<DomainCount> rows;
    for (const auto& [v, c] : t.by_value) rows.push_back(DomainCount{v, 0, c});
    k.values = arena.push(rows);
    out.push_back(k);
  }
  return arena.push(out);
}

}  // namespace bulkscore::plugins
