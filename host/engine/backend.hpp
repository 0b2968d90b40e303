// A backend evaluates one pod query against the snapshot: filter every
// candidate node, score the feasible ones, normalize, weight, total, select.
// CPU and CUDA backends implement it with the same rules (plugins/evaluate.hpp)
// and must return identical results.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "host/engine/executor.hpp"
#include "host/engine/pod_query.hpp"
#include "host/snapshot/snapshot.hpp"
#include "plugins/preemption_dry_run.hpp"

namespace bulkscore {

struct EvalRequest {
  // Candidate nodes in visiting order; nullptr = all nodes in node-tree order.
  const std::vector<uint32_t>* candidates = nullptr;
  // Sampling (percentageOfNodesToScore < 100): visit candidates starting at
  // `start` (rotating) and stop once `num_to_find` feasible nodes are found.
  // num_to_find >= number of candidates means every candidate is evaluated;
  // 0 visits every candidate too, in the rotated order.
  uint32_t start = 0;
  uint32_t num_to_find = UINT32_MAX;

  bool want_verdicts = false;  // per-node filter verdicts (explain)
  bool want_scores = false;    // per-plugin raw and normalized scores of the scored nodes
  // The scored nodes, their totals and the raw scores of the slots that
  // normalize with statistics (a window state's light form,
  // host/engine/window_answer.hpp): less than want_scores, and asked for
  // instead of it (a backend that can only give both trims its lists with
  // keep_totals_lists).
  bool want_totals = false;
  // The scored nodes sorted by selection key: total, then node index (with
  // --tie-break random the chosen node is the draw among the nodes tied at
  // the first total, not necessarily the first).
  bool want_sorted = false;
  // Score even a lone feasible node (explain); upstream does not.
  bool score_single = false;
  // The rejection histogram over every visited node. Without it a backend
  // may leave the histogram empty where some node is feasible (the
  // scheduling cycle reads it only for the FitError message, where none
  // is), and skip finding each rejected node's reasons.
  bool want_rejections = true;
};

// Rejections per (plugin, reason bit), for the FitError message.
struct RejectionHistogram {
  std::array<uint32_t, kRejectionBins> counts{};
  uint32_t& at(uint8_t plugin, uint32_t bit) { return counts[plugin * 64u + bit]; }
  uint32_t at(uint8_t plugin, uint32_t bit) const { return counts[plugin * 64u + bit]; }
};

// Min and max of n raw scores (kIgnoredScore left out) and how many sit at
// each (score_bounds, batch_cache.hpp); every score ignored (or none): max
// is kIgnoredScore.
struct ScoreBounds {
  int64_t min, max;
  uint32_t at_min, at_max;
};
inline bool operator==(const ScoreBounds& a, const ScoreBounds& b) {
  return a.min == b.min && a.max == b.max && a.at_min == b.at_min && a.at_max == b.at_max;
}
// Whether a normalizing slot with these bounds over `n` scored nodes needs
// its values kept: not where every node has the one value (none ignored)
// or every score is ignored.
inline bool stat_row_needed(const ScoreBounds& b, uint32_t n) {
  return !(b.max == kIgnoredScore || (b.min == b.max && b.at_min == n));
}

struct EvalResult {
  uint32_t num_feasible = 0;      // feasible nodes found (capped by num_to_find)
  uint32_t processed = 0;         // nodes visited: feasible kept + rejected
  int32_t chosen = -1;            // node index, -1 when none is feasible
  int64_t chosen_total = 0;       // its total score (0 when it was the only feasible node)
  bool scored = false;            // false when 0 or 1 feasible node: no scoring, as upstream
  RejectionHistogram rejections;  // over the visited nodes (see EvalRequest::want_rejections)

  // want_verdicts: one per node (unvisited nodes keep plugin = kNoPlugin and
  // code = Skip).
  std::vector<NodeVerdict> verdicts;
  // want_scores: the scored nodes in visiting order, and per score slot
  // (PodQueryView::scores order) their raw and normalized scores, row-major
  // [slot * scored_nodes.size() + i].
  std::vector<uint32_t> scored_nodes;
  std::vector<int64_t> raw_scores;
  std::vector<int64_t> normalized_scores;
  std::vector<int64_t> totals;  // parallel to scored_nodes (want_scores, want_totals)
  // want_totals: the scored nodes' raw scores of each slot that normalizes
  // with statistics (needs_stats), those slots in order, row-major
  // [k * scored_nodes.size() + i] for the k-th such slot.
  std::vector<int64_t> stat_scores;
  // want_totals, where a backend has them without another pass (the CPU
  // backend; empty or false elsewhere, and the reader computes them):
  //  * stat_bounds: each normalizing slot's bounds over the scored nodes,
  //    those slots in order, as score_bounds gives them. A slot whose row
  //    says nothing more (stat_row_needed false: one value on every node,
  //    or every score ignored) then has no row in stat_scores, whose k-th
  //    row is the k-th slot that has one.
  //  * top_known: top_total is the highest total and top_count how many
  //    scored nodes have it.
  //  * ascending: scored_nodes ascend by node index.
  // A window state's light form reads them (window_answer.hpp): each was a
  // pass over every scored node there, as long as the evaluation's own.
  std::vector<ScoreBounds> stat_bounds;
  bool top_known = false;
  int64_t top_total = 0;
  uint32_t top_count = 0;
  bool ascending = false;
  // want_sorted: scored nodes in ranks_before order (descending selection
  // key, equal keys by ascending node).
  std::vector<uint32_t> sorted_nodes;
  std::vector<uint64_t> sorted_keys;

  // As a fresh result, the lists' memory kept (a result reused pod after
  // pod allocates nothing once grown).
  void reset() {
    num_feasible = processed = 0;
    chosen = -1;
    chosen_total = 0;
    scored = false;
    rejections = RejectionHistogram{};
    for (auto* v : {&scored_nodes, &sorted_nodes}) v->clear();
    for (auto* v : {&raw_scores, &normalized_scores, &totals, &stat_scores}) v->clear();
    verdicts.clear();
    sorted_keys.clear();
    clear_light_summary();
  }
  // Drops stat_bounds, top_known and ascending (a reader computes them).
  void clear_light_summary() {
    stat_bounds.clear();
    top_known = ascending = false;
    top_total = 0;
    top_count = 0;
  }
};

// ---- the random tie-break ------------------------------------------------------
//
// --tie-break random: among the `tied` nodes that share the best total, the
// pod takes the one of rank tie_rank(tied) in ascending node index: a fresh
// uniform draw for every pod (a seeded hash of the pod's sequence number,
// scaled to `tied` by a 64x64-bit multiply: uniform up to tied / 2^64),
// independent of what earlier pods drew. --tie-break first: rank 0, the
// lowest index. A backend finds the best total and the tied nodes; the rank
// is the same whatever the backend, and a batch cache that keeps nodes in
// index order finds that rank without visiting the tied nodes.
inline uint64_t tie_rank(uint64_t tied, const PodQueryView& q) {
  if (q.tie_break == TieBreak::First || tied <= 1) return 0;
  return scale_draw(tie_draw(q), tied);
}

// The random tie-break over a scored list (any order): of the nodes whose
// total equals `best_total`, the one of rank tie_rank in ascending index.
// `total_at(i)` and `node_at(i)` read entry i of n. Returns the node, or
// `fallback` if no entry has that total (a caller's inconsistency; never
// read past the list).
template <class TotalAt, class NodeAt>
uint32_t pick_tied(size_t n, int64_t best_total, TotalAt&& total_at, NodeAt&& node_at, const PodQueryView& q,
                   std::vector<uint32_t>& scratch, uint32_t fallback) {
  scratch.clear();
  for (size_t i = 0; i < n; ++i)
    if (total_at(i) == best_total) scratch.push_back(node_at(i));
  if (scratch.empty()) return fallback;
  const auto k = static_cast<std::ptrdiff_t>(tie_rank(scratch.size(), q));
  std::nth_element(scratch.begin(), scratch.begin() + k, scratch.end());
  return scratch[static_cast<size_t>(k)];
}

// want_totals from a want_scores result: stat_scores taken from the raw
// scores of the slots that normalize with statistics, the raw and
// normalized lists dropped (a backend that gives want_scores for both).
void keep_totals_lists(const PodQueryView& q, EvalResult& out);
// Appends to `out` the rows of `raw` ([slot * scored + i]) of the slots
// that normalize with statistics: want_totals' stat_scores.
void append_stat_scores(const PodQueryView& q, const int64_t* raw, size_t scored, std::vector<int64_t>& out);

// The visiting order of a request over `snap` (host pointers): the
// candidate list or every node, rotated from `start` in node-tree order when
// sampling (num_to_find below the candidate count).
VisitOrder visit_order(const Snapshot& snap, const EvalRequest& req);

// Puts each run of equal keys in a list sorted by descending key into
// ascending node order, completing ranks_before's order after a radix sort
// that is stable over some other order (the visiting order).
void order_equal_keys_by_node(const uint64_t* keys, uint32_t* nodes, size_t count);

// ---- DefaultPreemption's bulk dry run ------------------------------------------
//
// The potential nodes' lower-priority pods as the host ordered them
// (MoreImportantPod, the PDB split done), in CSR: node i's victims are
// victims[offsets[i] .. offsets[i + 1]), their requests index `requests`.
// Only for a pod whose Filters read only their node or PreFilter's domain
// tables (bulk_dry_run, host/engine/preemption.cpp); for the latter, what
// each victim takes from the tables in its node's domains, `taken`
// [victim][table_total] parallel to `victims`, and per filter slot its
// first count (table_slot_at; kNoTableSlot: none).
// plugins/preemption_dry_run.hpp has the rule.
struct DryRunBatch {
  std::vector<uint32_t> nodes;    // in the dry run's visiting order
  std::vector<uint32_t> offsets;  // [nodes.size() + 1]
  std::vector<DryRunVictim> victims;
  std::vector<DryRunRequest> requests;
  std::vector<int64_t> taken;
  uint32_t table_total = 0;  // at most kMaxDryRunTableCounts
  uint32_t table_slot_at[kMaxProfilePlugins] = {};
  void clear() {
    nodes.clear();
    offsets.assign(1, 0);
    victims.clear();
    requests.clear();
    taken.clear();
    table_total = 0;
    for (uint32_t& a : table_slot_at) a = kNoTableSlot;
  }
};

struct DryRunOutput {
  std::vector<DryRunNodeResult> nodes;  // parallel to DryRunBatch::nodes
  std::vector<uint8_t> removed;         // parallel to DryRunBatch::victims: 1 = evicted
};

// A host worker's writable copies of the four columns dry_run_node patches
// (copied from the snapshot once per dry run, O(nodes x resources)), and
// the snapshot's view reading them.
struct HostDryRunColumns {
  std::vector<int64_t> requested;
  std::vector<int32_t> pod_count;
  std::vector<uint32_t> port_counts;
  std::vector<HostPortEntry> ports;
  SnapshotView view;
  DryRunColumns cols{};
  bool loaded = false;
  void load(const SnapshotView& base);
};

// Every node of `batch` with the one PreFilter state `q` on the host, on
// `executor` (null: the caller's thread), each worker patching its own copy
// of the four columns: the CPU backend's dry_run_preemption.
void dry_run_preemption_on_host(const Snapshot& snap, const PodQueryView& q, const DryRunBatch& batch,
                                DryRunOutput& out, Executor* executor);

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  // Evaluates `query` against `snap`: Filter, then (when the query asks for
  // it, and only when scoring) run_feasible_prescore over the feasible nodes,
  // which completes the query's tables, then Score and select. Mirrors of
  // `snap` (device copies) are brought up to date here, from its structure
  // version and mutation log.
  virtual void evaluate(const Snapshot& snap, PodQuery& query, const EvalRequest& req, EvalResult& out) = 0;
  // Several pods against the same snapshot (a window of pods,
  // Engine::look_ahead): out[i] is what evaluate(snap, *queries[i], reqs[i],
  // out[i]) gives, whatever the backend runs together. The default
  // evaluates them one after the other; the CPU backend spreads the pods
  // over its threads (each pod on one thread), where a pass over one pod
  // alone splits its nodes.
  virtual void evaluate_window(const Snapshot& snap, PodQuery* const* queries, const EvalRequest* reqs,
                               EvalResult* out, size_t n) {
    for (size_t i = 0; i < n; ++i) evaluate(snap, *queries[i], reqs[i], out[i]);
  }
  // How many of a window's pods evaluate_window runs at once (the engine's
  // auto window looks ahead only where that is 2 or more).
  virtual uint32_t window_lanes() const { return 1; }
  // DefaultPreemption's bulk dry run over every node of `batch`
  // (dry_run_node per node), one result per node and one flag per victim,
  // identical on every backend. Mirrors are brought up to date as in
  // evaluate. The default runs it on the caller's thread.
  virtual void dry_run_preemption(const Snapshot& snap, const PodQuery& query, const DryRunBatch& batch,
                                  DryRunOutput& out) {
    dry_run_preemption_on_host(snap, query.view(), batch, out, nullptr);
  }
  // True when one dry_run_preemption over every potential node beats the
  // engine's own block-by-block dry run on its workers (a device: one
  // launch, one copy back; the engine then drops what lies past the node
  // where the host's sequential rule stops). False: the engine runs the
  // same dry_run_node on its executor in blocks and stops early.
  virtual bool batched_dry_run() const { return false; }
};

// `threads`: threads for large snapshots, the caller included (0 = one per
// core), in a pool of the backend's own. Results do not depend on it.
std::unique_ptr<Backend> make_cpu_backend(int threads = 0);
// The same on `executor` (shared, or the caller's thread alone).
std::unique_ptr<Backend> make_cpu_backend(std::shared_ptr<Executor> executor);

// ---- the backend registry ---------------------------------------------------
//
// The engine picks its backend by name from a process-wide registry, so the
// core library never refers to the CUDA library: GPU code depends on CPU
// code, never the reverse. "cpu" is always there; bulkscore_cuda adds "cuda"
// (kernels/register_cuda_backend.hpp says how and when).

struct BackendOptions {
  int threads = 0;  // CPU backend worker threads (0 = one per core)
  // Where the CPU backend runs its loops; null: a pool of its own, of
  // `threads` threads.
  std::shared_ptr<Executor> executor;
};

struct BackendFactory {
  std::string name;
  // Why the backend cannot be used here and now ("" when it can), e.g. no
  // device answers. May probe the hardware; called once per Engine.
  std::function<std::string()> unavailable_reason;
  // Makes one; throws BackendUnavailable when it cannot.
  std::function<std::unique_ptr<Backend>(const BackendOptions&)> make;
};

// Adds a backend, or replaces the one of the same name. Thread-safe; a
// second registration of the same factory is harmless.
void register_backend(BackendFactory factory);

// Registered backend names: "cpu" first, then in registration order.
std::vector<std::string> compiled_backends();
bool backend_registered(const std::string& name);

// "" when `name` is registered and usable; otherwise why not ("this build
// has no cuda backend" when it was never registered).
std::string backend_unavailable_reason(const std::string& name);

// Makes the named backend; throws BackendUnavailable (with the reason) when
// it is not registered or not usable.
std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& options = {});

// The CUDA backend through the registry: make_backend("cuda") and
// backend_unavailable_reason("cuda").
std::unique_ptr<Backend> make_cuda_backend();
std::string cuda_unavailable_reason();

}  // namespace bulkscore
