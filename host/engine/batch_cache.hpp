// The batch cache (docs/batching.md): keeps the previous evaluation (the
// feasible nodes with every score plugin's raw score, the normalization
// statistics, the totals and the selection order) and, for the next pod,
// re-evaluates only what can have changed since, with the same rules the
// backends run. Exact: every answer it gives equals a full evaluation.
//
// How it knows what changed, without a hand-kept list of what each plugin
// reads:
//  * the pod: its query is prepared afresh (as without the cache) and compared
//    with the cached one byte for byte, plugin by plugin (its state, and the
//    arena bytes its prepare and its feasible-set PreScore wrote). A rule is a
//    pure function of those bytes and of the node's columns.
//  * the nodes: the snapshot's mutation log names every node whose columns
//    changed (the node the last pod was assumed on, and any other change).
// A node is re-filtered and re-scored when it changed; a score plugin whose
// bytes changed (PodTopologySpread's domain counts after a placement, say)
// is re-scored once per group of nodes of one score class, or else on every
// cached node; a filter plugin whose bytes changed re-filters the nodes it
// names where it says only its counts changed (filter_count_changes:
// PodTopologySpread, InterPodAffinity), else makes the pod a miss, as a
// node that became feasible, a structural snapshot change or sampling do (a
// full evaluation, which then becomes the cache).
// Normalization statistics are kept with the number of nodes at the min and
// the max, so they are recomputed only when the last node at a bound moves,
// and every total is renormalized only when a statistic actually changed.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "host/engine/backend.hpp"
#include "host/engine/pod_query.hpp"
#include "host/snapshot/snapshot.hpp"

namespace bulkscore {

enum class Batching : uint8_t {
  Off,       // every pod is evaluated in full
  Exact,     // the batch cache; decisions identical to Off
  Upstream,  // kube-scheduler v1.35.4's batching (host/engine/upstream_batch.hpp); expires on the
             // wall clock, so decisions depend on the run's speed
};
const char* batching_name(Batching b);
// "off" / "exact" / "upstream"; InputError otherwise.
Batching parse_batching(const std::string& text);

// Why a pod was not a hit (a "flush", in upstream's metric's words).
enum class FlushReason : uint8_t {
  kNoState,             // nothing cached yet (not counted as a flush, as upstream)
  kPodIncompatible,     // another profile, plugin set, weight or PreFilterResult
  kFilterChanged,       // a Filter plugin's per-pod state differs (another pod, or the counts it reads)
  kSnapshotChanged,     // the snapshot was rebuilt or changed structurally
  kSampling,            // percentageOfNodesToScore leaves candidates unevaluated
  kNodeBecameFeasible,  // a changed node passes Filter and was not cached
  kTooManyChanges,      // more changed nodes than a full pass costs
  kEmptyList,           // fewer than two feasible nodes: nothing to choose among
  kScoresChecked,       // scores that may leave [0, 100]: evaluated plainly and checked (PodQuery::check_score_range)
  // Upstream mode's own (semantics doc §4.2, §4.3):
  kPodSkipped,       // another pod's cycle, or a failed one, came in between
  kPodFailed,        // the last cycle did not succeed
  kExpired,          // the state is older than the maximum batch age
  kNodeMissing,      // the last chosen node is gone
  kPodNotBatchable,  // the pod has no signature
  kCount,
};
const char* flush_reason_name(FlushReason r);

// Counters, upstream's metric names where upstream has them
// (scheduler_batch_attempts_total, scheduler_batch_cache_flushed_total).
struct BatchCounters {
  uint64_t no_hint = 0;           // evaluated in full (attempts{result="no_hint"})
  uint64_t hint_used = 0;         // answered from the cache (attempts{result="hint_used"})
  uint64_t hint_not_used = 0;     // upstream mode: a hint given, the pod went elsewhere
  uint64_t rescore_attempts = 0;  // upstream mode: the last chosen node rescored into the list
  std::array<uint64_t, static_cast<size_t>(FlushReason::kCount)> flushed{};
  uint64_t refiltered_nodes = 0;      // changed nodes filtered again on hits
  uint64_t rescored_nodes = 0;        // (node, plugin) raw scores recomputed on hits
  uint64_t full_plugin_rescores = 0;  // a plugin re-scored on every cached node
  uint64_t renormalizations = 0;      // hits whose normalization changed: every total recomputed
  uint64_t tied_nodes = 0;            // random tie-break: tied nodes drawn among on hits (2 or more)
  uint64_t group_scores = 0;          // grouped Score plugins' raw scores, one per group of nodes, on hits
  uint64_t prescore_updates = 0;      // hits whose feasible-set PreScore tables were updated, not rebuilt
  uint64_t filter_count_hits = 0;     // hits whose Filter tables changed in their counts only (filter_count_changes)
  uint64_t revived_nodes = 0;         // nodes back in a state on hits, Filter having rejected them, scores kept
  uint64_t gate_flips = 0;            // domains shut or opened on hits as one flag (a gate: docs/batching.md)
  uint64_t first_of_shape = 0;        // misses not kept as a state: no state or recent pod had their shape
  uint64_t window_states = 0;         // pods evaluated ahead, in windows (Engine::look_ahead), and kept as states
  uint64_t window_hits = 0;           // of the hits, those answered by their window state
  uint64_t window_light_hits = 0;     // of those, in the light form (window_answer.hpp)

  BatchCounters& operator+=(const BatchCounters& o);
  // The counts since `earlier` (a copy taken before).
  BatchCounters since(const BatchCounters& earlier) const;
};

// Prometheus text exposition of per-profile counters: upstream's
// scheduler_batch_attempts_total{profile,result} and
// scheduler_batch_cache_flushed_total{profile,reason}, and bulkscore's
// bulkscore_batch_{refiltered_nodes,rescored_nodes,plugins_rescored_whole,
// renormalizations}_total{profile}.
std::string batch_metrics_text(const std::vector<std::pair<std::string, BatchCounters>>& by_profile);

// One line for people: "batching exact: 9999 of 10000 pods from the cache
// (...)".
std::string batch_summary(Batching mode, const BatchCounters& c);

// ---- comparing two prepared queries (the cache's rules; window_answer.hpp) ----

// Two arena ranges hold the same bytes.
bool bytes_equal(const Arena& a, ArenaRange ra, const Arena& b, ArenaRange rb);
// Plugin `id`'s part of two queries: its state in `ha` / `hb`, and what its
// prepare (and, with `feasible`, its feasible-set PreScore) wrote.
bool plugin_equal(uint8_t id, const PodQueryView& ha, const PodQuery& a, const PodQueryView& hb, const PodQuery& b,
                  bool feasible);
// The plugin lists, normalizations, weights, tie-break and PreFilterResult
// of `qb` equal those of `qa` (whose header as prepared is `a`), and `qb`
// has no Score error.
bool lists_equal(const PodQueryView& a, const PodQuery& qa, const PodQuery& qb);

// Min and max of n raw scores (kIgnoredScore left out) and how many sit at
// each (ScoreBounds, backend.hpp), vectorized for the CPU it runs on.
ScoreBounds score_bounds(const int64_t* raw, uint32_t n);

// The k-th highest of v[0, n), repeats counted (1 <= k <= n): the total of
// the k-th entry in selection order. One vectorized maximum per block of v
// and a scan of the blocks that can still change the k highest seen (`top`
// is scratch): a selection over every entry was as costly as scoring them.
int64_t kth_highest(const int64_t* v, uint32_t n, uint32_t k, std::vector<int64_t>& top);

// How many of v[0, n) equal `value`, vectorized for the CPU it runs on.
uint32_t count_equal(const int64_t* v, uint32_t n, int64_t value);

// Whether v[0, n) ascends strictly (one branch-free pass).
bool strictly_ascending(const uint32_t* v, uint32_t n);

// The cache's answer for one pod.
struct BatchHit {
  int32_t chosen = -1;
  int64_t chosen_total = 0;
  uint32_t num_feasible = 0;
};

class BatchCache {
 public:
  // Answers `query` (prepared afresh for the pod, as a full evaluation would
  // take it, PreFilterResult `candidates` or nullptr for every node) from
  // the cache when that is exact; on a hit the query has been through its
  // feasible-set PreScore and becomes the cache's. Otherwise returns the
  // reason and leaves the query as it was.
  // Hits and their work are counted in `counters` (the pod's profile's).
  bool try_hit(const Snapshot& snap, const ProfilePlan& plan, PodQuery& query, BatchHit& hit, FlushReason& why,
               BatchCounters& counters);

  // What try_hit would say, without changing anything (explain).
  FlushReason would_hit(const Snapshot& snap, const ProfilePlan& plan, const PodQuery& query) const;

  // Takes a full evaluation (requested with want_scores, every candidate
  // evaluated) as the new cached state; its lists are taken (swapped with
  // the state's old buffers). `prepared` is the query's header as
  // prepare left it, before the backend's feasible-set PreScore changed it.
  // An evaluation with fewer than two scored nodes is not kept (the previous
  // state stays: it is still exact, the mutation log says what changed),
  // nor one whose scored nodes do not ascend by node index (the random
  // tie-break's walk needs positions in node order; an engine request
  // always visits in that order).
  void store(const Snapshot& snap, const ProfilePlan& plan, PodQuery&& query, const PodQueryView& prepared,
             EvalResult& result);

  // Whether the cached query's Score plugins were prepared with the same
  // bytes as `query`'s: a hit then rescores only the changed nodes (an engine
  // keeping several states tries such a one first).
  bool scores_equal(const PodQuery& query) const;

  // Keeps only the shape of a pod whose evaluation was not worth keeping
  // (the first of its shape lately, Engine::schedule): its query, to tell
  // a later pod of the same shape. Drops any state held.
  void remember_shape(const ProfilePlan& plan, PodQuery&& query, const PodQueryView& prepared);
  // Whether `query` could hit a state taken from the pod this holds (a
  // state or a remembered shape): the same profile, plugin lists, weights,
  // PreFilterResult and Filter bytes (or Filter tables that differ in their
  // counts only), whatever the snapshot did since.
  bool same_shape(const Snapshot& snap, const ProfilePlan& plan, const PodQuery& query) const;

  // A state keeps only its shape from now on (same_shape still tells it).
  void keep_shape_only() {
    if (valid_) shape_only_ = true;
    valid_ = false;
  }

  void clear() { valid_ = shape_only_ = false; }

  // Whether a state takes a gate (docs/batching.md): Auto, by default,
  // where its normalized slots' scores are all equal (gate_grouping);
  // tests run Off (the node-by-node path) and Always (a gate wherever a
  // plugin offers one) on the same pods (host only, set between runs).
  enum class Gates : uint8_t { Off, Auto, Always };
  static inline Gates gates = Gates::Auto;
  bool valid() const { return valid_; }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr uint32_t kLeaves = UINT32_MAX - 1;  // HitPlan::moved_to: Filter now rejects it
  // Groups (below) are tournament trees over every position: their number
  // times the positions is bounded (memory), and so is their number (the
  // per-pod work is linear in it).
  static constexpr size_t kMaxGroups = 64;
  static constexpr size_t kMaxGroupLeaves = size_t(1) << 22;

  // Min and max of one score slot over the live entries (ignored scores left
  // out, as add_to_stats does), with how many entries sit at each.
  struct SlotStats {
    int64_t min = INT64_MAX, max = INT64_MIN;
    uint32_t at_min = 0, at_max = 0;
    // A value enters or leaves the set; leave() says whether a bound lost its
    // last entry (the caller then recounts).
    void enter(int64_t v);
    bool leave(int64_t v);
  };

  using Classes = std::array<uint64_t, kMaxProfilePlugins>;  // by score slot; grouped slots only

  // A group: the live positions whose grouped score slots (plugins with a
  // score_class) have the same classes, so the same raw scores for those
  // slots. A grouped slot is scored once per group, and a position's total
  // is its per-node slots' sum (total_) plus its group's `bonus`: a change
  // of a grouped slot's tables (PodTopologySpread's counts after every
  // placement) costs one score per group, not one per node. Without grouped
  // slots there is one group holding every live position.
  struct Group {
    Classes cls{};
    std::array<int64_t, kMaxProfilePlugins> raw{};  // grouped slots' raw scores
    uint32_t members = 0;                           // live positions
    int64_t bonus = 0;                              // grouped slots' weighted normalized scores
    // A tournament tree over positions, by total_ (higher first) then node
    // (lower first), of the group's members: tree[1] is its best position;
    // tied[i] counts the members under i that share tree[i]'s total, so the
    // random tie-break's rank is found in one walk down (best_position).
    std::vector<uint32_t> tree;
    std::vector<uint32_t> tied;
    // With a gate (gate_plugin_): the domain whose nodes the group holds,
    // whether the gate lets them in now (a shut group's members keep their
    // entries, out of the selection and the statistics), and each score
    // slot's statistics over the members (the slots' are the open groups'
    // merged).
    int32_t domain = 0;
    bool open = true;
    std::array<SlotStats, kMaxProfilePlugins> stats{};
  };

  // What a hit would do, worked out before anything changes.
  struct HitPlan {
    std::vector<uint32_t> changed;  // nodes in the mutation log since, sorted, unique
    std::vector<uint32_t> touched;  // cached positions whose node changed
    std::vector<uint32_t> leaving;  // of those, the ones Filter now rejects
    // Per touched position: the group it moves to (kNone: the new_classes
    // entry at index moved_new[i]; kLeaves: it leaves the cache).
    std::vector<uint32_t> moved_to, moved_new;
    std::vector<Classes> new_classes;
    // Per touched position: kStays (in the cache before: it stays, moves or
    // leaves) or how it comes back (kRevivesKept, kRevivesRescored).
    std::vector<uint8_t> revived;
    uint32_t revivals = 0;            // touched positions coming back
    std::vector<uint32_t> stale_dead;  // positions out of the cache after the hit whose node changed
    bool counts_only = false;          // a Filter plugin's tables changed in their counts only
    // With a gate: the domains it shut or opened, each group's verdict
    // after the hit, the positions named while their domain is shut (out
    // until it opens), those marked so before that it opens (filtered
    // now), and the live entries of open groups after.
    std::vector<GateFlip> gate_flips;
    std::vector<uint8_t> open_after;
    std::vector<uint32_t> shut_named, rechecked;
    uint32_t open_live = 0;
  };
  static constexpr uint8_t kStays = 0, kRevivesKept = 1, kRevivesRescored = 2;

  // `extra` (optional): the nodes a Filter plugin whose tables changed in
  // their counts only names (filter_count_changes), to be filtered again.
  // `gates` (optional, with a gate): its flipped domains, whose nodes are
  // then not in `extra`.
  FlushReason check_header(const Snapshot& snap, const ProfilePlan& plan, const PodQuery& query,
                           std::vector<uint32_t>* extra = nullptr, std::vector<GateFlip>* gates = nullptr) const;
  // Every Filter plugin's bytes equal the cached query's, or differ only in
  // the counts of its tables (the nodes those touch appended to `extra`
  // when given).
  bool filters_compatible(const Snapshot& snap, const PodQuery& query, std::vector<uint32_t>* extra,
                          std::vector<GateFlip>* gates = nullptr) const;
  // Every Filter plugin's bytes equal the cached query's.
  bool filters_equal(const PodQuery& query) const;
  // Plugin `id`'s bytes differ from the cached query's in its tables'
  // counts only (filter_count_changes; false for a plugin without it).
  // `prev`: the cached query's header to compare with (prepared_ as
  // prepare left it, or query_.header after its PreScore).
  bool counts_only(const Snapshot& snap, uint8_t id, const PodQueryView& prev, const PodQuery& query,
                   std::vector<uint32_t>* extra, std::vector<GateFlip>* gates = nullptr) const;
  // The profile, plugin lists, weights, tie-break and PreFilterResult match
  // (and the pod has no Score error).
  bool lists_equal(const ProfilePlan& plan, const PodQuery& query) const;
  bool is_candidate(uint32_t node) const;
  // `s`: snap.view(), taken once by the caller.
  FlushReason plan_hit(const Snapshot& snap, const SnapshotView& s, const ProfilePlan& plan, const PodQuery& query,
                       HitPlan& out) const;

  bool classes_of(const SnapshotView& s, const PodQueryView& v, uint32_t node, Classes& out) const;
  uint32_t find_group(const Classes& cls) const;
  uint32_t add_group(const Classes& cls);
  void add_groups(const std::vector<Classes>& classes, std::vector<uint32_t>& ids);
  bool group_grouping(const SnapshotView& s, const PodQueryView& v);
  // After group_grouping found no grouped slot: groups by the gate's
  // domain where a Filter plugin has a gate (kHasFilterGate) and the pod
  // no feasible-set PreScore; else none (gate_plugin_ kNoGate).
  void gate_grouping(const SnapshotView& s, const PodQueryView& v);
  // The node's domain on the gate (false: it has none: it fails the gate's
  // plugin whatever the counts).
  bool gate_domain(const SnapshotView& s, const PodQueryView& v, uint32_t node, int32_t& domain) const;
  uint32_t gate_group(int32_t domain) const;
  // Gate: each group's statistics of `slot` over its members, and the
  // open groups' merged.
  void group_slot_stats(uint32_t slot);
  SlotStats open_stats(uint32_t slot) const;
  void score_groups(const SnapshotView& s, const PodQueryView& v, BatchCounters* counters);

  SlotStats slot_stats(uint32_t slot) const;
  static SlotStats all_alive_stats(const int64_t* raw, uint32_t n);
  void rebuild_tree(uint32_t g);
  void update_trees(const std::vector<uint32_t>& touched, const std::vector<uint32_t>& from);
  void combine(Group& g, size_t i) const;
  uint32_t best_position(const PodQueryView& v, BatchCounters& counters, int64_t& total);

  bool valid_ = false;
  bool shape_only_ = false;  // remember_shape: query_, prepared_ and plan_ alone
  const ProfilePlan* plan_ = nullptr;
  PodQuery query_;           // the query the entries are scored under (after feasible-set PreScore)
  PodQueryView prepared_{};  // its header as prepare left it (Filter's view)
  uint64_t structure_version_ = 0;
  size_t log_position_ = 0;  // mutation log entries already accounted for
  uint32_t num_nodes_ = 0;

  // Entries by position (the full evaluation's visiting order); dead ones
  // left Filter since and keep their raw scores, contributions and total
  // (consistent with each other), so that a node coming back (a domain of
  // a hard spread constraint whose minimum rose) is not scored again;
  // stale ones lost that: their node changed, or a slot was scored whole,
  // while they were out.
  uint32_t size_ = 0, live_ = 0;
  std::vector<uint32_t> node_;
  std::vector<uint8_t> alive_;
  std::vector<uint8_t> stale_;
  std::vector<uint32_t> position_of_;  // node -> position, kNone when not cached
  std::vector<int64_t> raw_;           // [slot * size_ + pos]; per-node slots only after store
  std::vector<int64_t> contrib_;       // [slot * size_ + pos]: normalized x weight (per-node slots)
  std::vector<int64_t> total_;         // sum of the pos's per-node contributions
  std::array<SlotStats, kMaxProfilePlugins> stats_{};
  std::array<bool, kMaxProfilePlugins> grouped_{};  // by score slot
  uint32_t num_grouped_ = 0;
  std::vector<uint32_t> group_of_;  // by position
  std::vector<Group> groups_;
  uint32_t leaves_ = 0;  // every group's tree has this many leaves

  // The gate (docs/batching.md, "A domain as one flag"): a Filter plugin's
  // rule whose verdict is one per domain (PodTopologySpread's first table
  // constraint). With one, a group is a domain; a domain that the counts
  // shut is a flag on its group, not thousands of entries leaving, and
  // alive_ is an entry's verdict on every other rule, taken while its
  // domain was open. An entry that a change names while its domain is
  // shut cannot be filtered (the gate fails it): it leaves and is marked
  // to be filtered when the domain opens (recheck_). The nodes of a
  // domain without an entry (outsiders_) are filtered whenever it opens:
  // one of them passing is a node that became feasible. (Entries and
  // outsiders are fixed for the state's life: positions change with a
  // store only, a node's labels with a structural change.)
  static constexpr uint8_t kNoGate = 0xFF;
  uint8_t gate_plugin_ = kNoGate;
  std::vector<uint8_t> recheck_;    // by position
  std::vector<uint32_t> rechecks_;  // the positions marked
  struct Outsiders {
    int32_t domain;
    std::vector<uint32_t> nodes;
  };
  std::vector<Outsiders> outsiders_;

  // Scratch, reused across pods.
  HitPlan plan_scratch_;
  std::vector<uint32_t> feasible_list_, left_nodes_, qualifying_, fresh_ids_;
  std::vector<uint32_t> tree_groups_;  // update_trees' scratch: the groups touched
  std::vector<size_t> tree_dirty_;     // and one level's tree indices to combine
  std::vector<int64_t> rescored_;
  std::vector<uint32_t> rescore_positions_;  // try_hit's touched positions scored again
};

}  // namespace bulkscore
