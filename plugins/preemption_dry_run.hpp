// DefaultPreemption's per-node dry run (SelectVictimsOnNode after the host
// has ordered the victims), written once for host and device: the CPU's
// bulk dry run (host/engine/preemption.cpp, one node per worker) and the
// CUDA kernel (kernels/evaluate_kernels.cu, one node per thread) call this
// very code. It only applies where one PreFilter state answers every check
// (bulk_dry_run in preemption.cpp): every Filter the pod runs reads, of
// what removing pods changes, only its node's requested resources, pod
// count and host ports, or PreFilter's domain tables less what the removed
// pods took in the node's domains (DryRunTables). Removing a node's pods
// then changes only that node's row of those four columns, so a worker (a thread) owns the row of
// `node` in writable copies of them and no two nodes ever touch the same
// entries: CPU workers keep a copy each, the GPU's threads share one.
//
// What the host computes (strings, label selectors, the budgets, the sort)
// comes in as plain records: the node's lower-priority pods in
// MoreImportantPod order, each with the snapshot's charge of its requests,
// its host-port range and its PDB-violation flag (filterPodsWithPDBViolation,
// host). What comes out is per node a status, Filter's verdict when the
// node fails with every victim removed, the violation count, and per victim
// whether it is evicted; the host builds the Candidate from those.
#pragma once

#include "plugins/evaluate.hpp"

namespace bulkscore {

// One resource a victim's requests charged on its node: a column index of
// SnapshotView::requested and the amount the snapshot added there.
struct DryRunRequest {
  int32_t resource;
  int32_t pad;  // explicit: the struct is copied to the device byte for byte
  int64_t amount;
};

// One lower-priority pod of a node, in MoreImportantPod order.
struct DryRunVictim {
  uint32_t request_at;    // its DryRunRequests: [request_at, request_at + num_requests)
  uint32_t num_requests;
  uint32_t port_at;       // its host ports in SnapshotView::ports: [port_at, port_at + num_ports)
  uint32_t num_ports;
  uint32_t violating;     // 1: evicting it violates a PDB (the host's split)
};

enum class DryRunStatus : uint32_t {
  kCandidate = 0,      // the pod fits with the victims evicted
  kUnschedulable = 1,  // Filter rejects the node even with every lower-priority pod removed (verdict)
  kNoVictim = 2,       // every pod was reprieved: upstream's "expected at least one victim" error
};

struct DryRunNodeResult {
  NodeVerdict verdict;  // kUnschedulable: Filter's verdict with every victim removed
  DryRunStatus status = DryRunStatus::kCandidate;
  uint32_t num_victims = 0;
  int64_t violations = 0;  // evicted pods that violate a PDB
};

// The writable copies of the columns removing pods changes; a SnapshotView
// whose requested/pod_count/port_counts/ports point at them is the patched
// view Filter reads. Only `node`'s row is ever written.
struct DryRunColumns {
  int64_t* requested;
  int32_t* pod_count;
  uint32_t* port_counts;
  HostPortEntry* ports;
};

// Makes `node`'s row of `cols` the base's without the victims marked in
// `removed` (none when `restore`): the requested resources less their
// requests, the pod count less their number, the host ports less their
// ranges (the others kept in the base's order, as the snapshot lists a
// node's ports in its pods' slot order). Rebuilt from the base each time
// rather than patched in place, so no sequence of checks can drift.
BULKSCORE_HD void dry_run_apply(const SnapshotView& base, const DryRunColumns& cols, uint32_t node,
                                const DryRunVictim* victims, uint32_t num_victims, const DryRunRequest* requests,
                                const uint8_t* removed, bool restore) {
  const size_t nodes = base.num_nodes;
  for (uint32_t r = 0; r < base.num_resources; ++r)
    cols.requested[r * nodes + node] = base.requested[r * nodes + node];
  int32_t count = base.pod_count[node];
  bool ports_removed = false;
  if (!restore)
    for (uint32_t k = 0; k < num_victims; ++k) {
      if (!removed[k]) continue;
      --count;
      const DryRunVictim& v = victims[k];
      for (uint32_t j = 0; j < v.num_requests; ++j) {
        const DryRunRequest& q = requests[v.request_at + j];
        int64_t& requested = cols.requested[static_cast<size_t>(q.resource) * nodes + node];
        requested = go_sub(requested, q.amount);  // the node's sum may have wrapped (Go's int64)
      }
      ports_removed = ports_removed || v.num_ports > 0;
    }
  cols.pod_count[node] = count;
  const uint32_t first = base.port_offsets[node];
  const uint32_t end = first + base.port_counts[node];
  uint32_t w = first;
  for (uint32_t p = first; p < end; ++p) {
    bool gone = false;
    // Few pods declare host ports: the scan only runs when a removed one did.
    if (ports_removed)
      for (uint32_t k = 0; k < num_victims && !gone; ++k)
        gone = removed[k] && p >= victims[k].port_at && p < victims[k].port_at + victims[k].num_ports;
    if (!gone) cols.ports[w++] = base.ports[p];
  }
  cols.port_counts[node] = w - first;
}

// The PreFilter tables' part of a node's dry run (FilterReach::
// kPreFilterTables): what each victim, once removed, takes from the
// tables in the node's domains, `taken[k * total + j]` for victim k, and
// per filter slot the pointer filter_node passes to its plugin (`at`, into
// `sum`, which dry_run_node fills with the sum over the removed victims
// before each check).
struct DryRunTables {
  const int64_t* taken;
  uint32_t total;
  int64_t* sum;
  const int64_t* const* at;
};

// Filter on `patched` with the victims marked in `removed` gone: the
// tables' counts summed over them first, where there are tables.
BULKSCORE_HD NodeVerdict dry_run_filter(const SnapshotView& patched, const PodQueryView& q, uint32_t node,
                                        uint32_t num_victims, const uint8_t* removed, const DryRunTables* tables) {
  if (!tables || tables->total == 0) return filter_node(patched, q, node);
  for (uint32_t j = 0; j < tables->total; ++j) tables->sum[j] = 0;
  for (uint32_t k = 0; k < num_victims; ++k)
    if (removed[k])
      for (uint32_t j = 0; j < tables->total; ++j)
        tables->sum[j] += tables->taken[static_cast<size_t>(k) * tables->total + j];
  return filter_node(patched, q, node, tables->at);
}

// SelectVictimsOnNode on `node`: every victim removed, Filter with the one
// PreFilter state `q` on `patched` (the base's view reading `cols`); if the
// pod fits, reprieve the PDB-violating victims, then the others, each in
// MoreImportantPod order, keeping every pod whose return still fits.
// `removed[k]` ends 1 for the evicted (scratch of `num_victims` bytes owned
// by the caller); `node`'s row of `cols` ends as the base's.
BULKSCORE_HD DryRunNodeResult dry_run_node(const SnapshotView& base, const SnapshotView& patched,
                                           const DryRunColumns& cols, const PodQueryView& q, uint32_t node,
                                           const DryRunVictim* victims, uint32_t num_victims,
                                           const DryRunRequest* requests, uint8_t* removed,
                                           const DryRunTables* tables = nullptr) {
  DryRunNodeResult r;
  for (uint32_t k = 0; k < num_victims; ++k) removed[k] = 1;
  dry_run_apply(base, cols, node, victims, num_victims, requests, removed, false);
  r.verdict = dry_run_filter(patched, q, node, num_victims, removed, tables);
  if (!r.verdict.feasible()) {
    r.status = DryRunStatus::kUnschedulable;
    for (uint32_t k = 0; k < num_victims; ++k) removed[k] = 0;
    dry_run_apply(base, cols, node, victims, num_victims, requests, removed, true);
    return r;
  }
  for (uint32_t pass = 0; pass < 2; ++pass) {
    const uint32_t violating = pass == 0 ? 1u : 0u;
    for (uint32_t k = 0; k < num_victims; ++k) {
      if (victims[k].violating != violating) continue;
      removed[k] = 0;
      dry_run_apply(base, cols, node, victims, num_victims, requests, removed, false);
      if (dry_run_filter(patched, q, node, num_victims, removed, tables).feasible()) continue;
      removed[k] = 1;
      ++r.num_victims;
      if (violating) ++r.violations;
    }
  }
  dry_run_apply(base, cols, node, victims, num_victims, requests, removed, true);
  r.status = r.num_victims == 0 ? DryRunStatus::kNoVictim : DryRunStatus::kCandidate;
  return r;
}

// The most table counts per victim a batched dry run carries (the device
// keeps their sum in registers); a pod with more dry-runs on the host.
constexpr uint32_t kMaxDryRunTableCounts = 32;
// A filter slot whose plugin reads no table.
constexpr uint32_t kNoTableSlot = UINT32_MAX;

// dry_run_node with the tables' removals as a batch carries them: `taken`
// [victim][total] for these victims, `slot_at[f]` filter slot f's first
// count (kNoTableSlot: none); `total` at most kMaxDryRunTableCounts. The
// sum and the per-slot pointers live in the caller's frame (a device
// thread's registers).
BULKSCORE_HD DryRunNodeResult dry_run_node_batched(const SnapshotView& base, const SnapshotView& patched,
                                                   const DryRunColumns& cols, const PodQueryView& q, uint32_t node,
                                                   const DryRunVictim* victims, uint32_t num_victims,
                                                   const DryRunRequest* requests, uint8_t* removed,
                                                   const int64_t* taken, uint32_t total, const uint32_t* slot_at) {
  if (total == 0) return dry_run_node(base, patched, cols, q, node, victims, num_victims, requests, removed);
  int64_t sum[kMaxDryRunTableCounts];
  const int64_t* at[kMaxProfilePlugins];
  for (uint32_t f = 0; f < kMaxProfilePlugins; ++f) at[f] = slot_at[f] == kNoTableSlot ? nullptr : sum + slot_at[f];
  const DryRunTables tables{taken, total, sum, at};
  return dry_run_node(base, patched, cols, q, node, victims, num_victims, requests, removed, &tables);
}

}  // namespace bulkscore
