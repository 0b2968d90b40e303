#include "host/engine/backend.hpp"

#include <algorithm>

namespace bulkscore {

VisitOrder visit_order(const Snapshot& snap, const EvalRequest& req) {
  VisitOrder v;
  v.count = req.candidates ? static_cast<uint32_t>(req.candidates->size()) : snap.num_nodes();
  v.rotate = req.num_to_find < v.count;
  v.start = req.start;
  if (req.candidates)
    v.order = req.candidates->data();
  else if (v.rotate)
    v.order = snap.tree_order().data();
  return v;
}

void append_stat_scores(const PodQueryView& q, const int64_t* raw, size_t scored, std::vector<int64_t>& out) {
  for (uint32_t slot = 0; slot < q.num_scores; ++slot)
    if (needs_stats(q.normalize[slot])) out.insert(out.end(), raw + slot * scored, raw + (slot + 1) * scored);
}

void keep_totals_lists(const PodQueryView& q, EvalResult& out) {
  const size_t F = out.scored_nodes.size();
  out.stat_scores.clear();
  if (out.raw_scores.size() == static_cast<size_t>(q.num_scores) * F)
    append_stat_scores(q, out.raw_scores.data(), F, out.stat_scores);
  out.raw_scores.clear();
  out.normalized_scores.clear();
}

void order_equal_keys_by_node(const uint64_t* keys, uint32_t* nodes, size_t count) {
  for (size_t i = 0; i < count;) {
    size_t j = i + 1;
    while (j < count && keys[j] == keys[i]) ++j;
    if (j - i > 1) std::sort(nodes + i, nodes + j);
    i = j;
  }
}

void HostDryRunColumns::load(const SnapshotView& base) {
  view = base;
  const size_t n = base.num_nodes;
  requested.assign(base.requested, base.requested + static_cast<size_t>(base.num_resources) * n);
  pod_count.assign(base.pod_count, base.pod_count + n);
  port_counts.assign(base.port_counts, base.port_counts + n);
  ports.assign(base.ports, base.ports + base.port_offsets[n]);
  view.requested = requested.data();
  view.pod_count = pod_count.data();
  view.port_counts = port_counts.data();
  view.ports = ports.data();
  cols = DryRunColumns{requested.data(), pod_count.data(), port_counts.data(), ports.data()};
  loaded = true;
}

void dry_run_preemption_on_host(const Snapshot& snap, const PodQueryView& q, const DryRunBatch& batch,
                                DryRunOutput& out, Executor* executor) {
  const SnapshotView base = snap.view();
  const auto count = static_cast<uint32_t>(batch.nodes.size());
  out.nodes.assign(count, DryRunNodeResult{});
  out.removed.assign(batch.victims.size(), 0);
  const unsigned workers = executor && count > 1 ? std::max(1u, std::min(executor->concurrency(), count)) : 1u;
  std::vector<HostDryRunColumns> cols(workers);
  const auto run = [&](uint32_t w) {
    for (uint32_t i = w; i < count; i += workers) {
      if (!cols[w].loaded) cols[w].load(base);
      const uint32_t at = batch.offsets[i];
      out.nodes[i] = dry_run_node_batched(
          base, cols[w].view, cols[w].cols, q, batch.nodes[i], batch.victims.data() + at, batch.offsets[i + 1] - at,
          batch.requests.data(), out.removed.data() + at,
          batch.table_total ? batch.taken.data() + static_cast<size_t>(at) * batch.table_total : nullptr,
          batch.table_total, batch.table_slot_at);
    }
  };
  if (workers == 1)
    run(0);
  else
    executor->for_each(workers, run);
}

}  // namespace bulkscore
