// Keeping a mirror of a snapshot's columns current: what to copy, decided in
// plain C++ (so it is tested without a device); the mirror (the CUDA
// backend's SnapshotMirror, or a test's host copy) only carries it out.
//
// The mirror holds one copy per Snapshot::columns() entry. A plan says:
// everything anew (a different snapshot, or a new structure version), or
// per column: whole (its layout version changed: slots laid out again),
// its new tail (a kAppend column that grew: the dictionary), and element
// ranges of the nodes in the mutation log since the last sync (kNodeRows:
// the node's entry in every row; kNodeScalar: its entry; kNodeSlots: its
// whole slot range, used and free slots, so removals are carried over too).
// Ranges read the snapshot's current values, so a node logged several times
// is sent once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "host/snapshot/snapshot.hpp"

namespace bulkscore {

class MirrorSync {
 public:
  // `count` elements of column `column`, the first at element `first`, the
  // next ones `stride` elements apart.
  struct Range {
    uint32_t column;
    uint32_t count;
    uint64_t first;
    uint64_t stride;
  };
  // Bytes [from, end) of a kAppend column are new.
  struct Tail {
    uint32_t column;
    size_t from;
  };
  struct Plan {
    bool everything = false;      // every column anew, and the node-tree order
    std::vector<uint32_t> whole;  // columns to send whole
    std::vector<Tail> tails;
    std::vector<Range> ranges;
    size_t range_bytes = 0;  // elements' bytes over all ranges
  };

  // Ranges cost this much more than their elements (a scatter record); past
  // the mutable columns' own size, sending them whole is the plan.
  static constexpr size_t kRangeOverheadBytes = 32;

  // What brings the mirror from its last sync to `snap` (cols = snap.columns()).
  Plan plan(const Snapshot& snap, const std::vector<Snapshot::Column>& cols);
  // The plan was carried out: the mirror holds `snap`'s columns now.
  void synced(const Snapshot& snap, const std::vector<Snapshot::Column>& cols);
  // The mirror's contents are unknown (a copy failed): the next plan is everything.
  void forget() { version_ = 0; }

 private:
  uint64_t version_ = 0;  // 0: nothing mirrored
  size_t log_size_ = 0;
  std::vector<uint64_t> layouts_;
  std::vector<size_t> bytes_;
  // Deduplication of logged nodes: stamp_[node] == epoch_ when already taken.
  std::vector<uint32_t> stamp_;
  uint32_t epoch_ = 0;
};

}  // namespace bulkscore
