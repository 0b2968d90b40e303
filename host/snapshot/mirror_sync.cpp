#include "host/snapshot/mirror_sync.hpp"

#include <algorithm>

namespace bulkscore {

namespace {
bool is_per_node(Snapshot::ColumnKind k) {
  return k == Snapshot::ColumnKind::kNodeRows || k == Snapshot::ColumnKind::kNodeScalar ||
         k == Snapshot::ColumnKind::kNodeSlots;
}
}  // namespace

MirrorSync::Plan MirrorSync::plan(const Snapshot& snap, const std::vector<Snapshot::Column>& cols) {
  using K = Snapshot::ColumnKind;
  Plan p;
  const std::vector<uint32_t>& log = snap.mutation_log();
  // Versions are unique in the process and a copy takes a new one, so equal
  // versions mean the same snapshot (or the one it was moved into).
  if (version_ == 0 || snap.structure_version() != version_ || cols.size() != layouts_.size() ||
      log.size() < log_size_) {
    p.everything = true;
    return p;
  }
  std::vector<uint8_t> whole(cols.size(), 0);
  for (uint32_t c = 0; c < cols.size(); ++c) {
    const Snapshot::Column& col = cols[c];
    // NOLINTNEXTLINE(bugprone-branch-clone): separate cases, same remedy
    if (col.layout_version != layouts_[c] || (col.kind != K::kAppend && col.bytes != bytes_[c])) {
      whole[c] = 1;
    } else if (col.kind == K::kAppend && col.bytes > bytes_[c]) {
      p.tails.push_back(Tail{c, bytes_[c]});
    } else if (col.kind == K::kAppend && col.bytes < bytes_[c]) {
      whole[c] = 1;
    }
  }

  const uint32_t n = snap.num_nodes();
  if (log.size() > log_size_ && n > 0) {
    if (stamp_.size() != n) {
      stamp_.assign(n, 0);
      epoch_ = 0;
    }
    if (++epoch_ == 0) {  // wrapped: forget old marks
      std::fill(stamp_.begin(), stamp_.end(), 0);
      epoch_ = 1;
    }
    size_t mutable_bytes = 0;
    for (uint32_t c = 0; c < cols.size(); ++c)
      if (!whole[c] && is_per_node(cols[c].kind)) mutable_bytes += cols[c].bytes;
    for (size_t i = log_size_; i < log.size(); ++i) {
      const uint32_t node = log[i];
      if (stamp_[node] == epoch_) continue;
      stamp_[node] = epoch_;
      for (uint32_t c = 0; c < cols.size(); ++c) {
        const Snapshot::Column& col = cols[c];
        if (whole[c] || !is_per_node(col.kind)) continue;
        Range r{c, 0, node, 1};
        if (col.kind == K::kNodeRows) {
          r.count = static_cast<uint32_t>(col.bytes / col.element_bytes / n);
          r.stride = n;
        } else if (col.kind == K::kNodeScalar) {
          r.count = 1;
        } else {
          r.first = col.slot_offsets[node];
          r.count = col.slot_offsets[node + 1] - col.slot_offsets[node];
        }
        if (r.count == 0) continue;
        p.ranges.push_back(r);
        p.range_bytes += static_cast<size_t>(r.count) * col.element_bytes;
      }
    }
    if (p.range_bytes + p.ranges.size() * kRangeOverheadBytes > mutable_bytes) {
      for (uint32_t c = 0; c < cols.size(); ++c)
        if (!whole[c] && is_per_node(cols[c].kind)) whole[c] = 1;
      p.ranges.clear();
      p.range_bytes = 0;
    }
  }
  for (uint32_t c = 0; c < cols.size(); ++c)
    if (whole[c]) p.whole.push_back(c);
  return p;
}

void MirrorSync::synced(const Snapshot& snap, const std::vector<Snapshot::Column>& cols) {
  version_ = snap.structure_version();
  log_size_ = snap.mutation_log().size();
  layouts_.resize(cols.size());
  bytes_.resize(cols.size());
  for (size_t c = 0; c < cols.size(); ++c) {
    layouts_[c] = cols[c].layout_version;
    bytes_[c] = cols[c].bytes;
  }
}

}  // namespace bulkscore
