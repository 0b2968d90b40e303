// The embedding API: load a cluster, schedule pods one by one (each chosen
// node is assumed before the next pod), or explain one pod's evaluation.
// An Engine owns its snapshot and backend; there is no global state, and
// engines are independent (one per thread).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "host/engine/backend.hpp"
#include "host/engine/batch_cache.hpp"
#include "host/engine/window_answer.hpp"
#include "host/engine/pod_query.hpp"
#include "host/engine/scheduler_metrics.hpp"
#include "host/engine/upstream_batch.hpp"
#include "host/input/config.hpp"
#include "host/input/model.hpp"
#include "host/snapshot/snapshot.hpp"
#include "plugins/pod_group.hpp"
#include "plugins/reserve.hpp"

namespace bulkscore {

struct EngineOptions {
  // "auto" (cuda when registered and a device answers, else cpu), or a name
  // from the backend registry: "cpu", "cuda" (host/engine/backend.hpp).
  std::string backend = "auto";
  TieBreak tie_break = TieBreak::Random;
  uint64_t seed = 0;
  // CPU backend worker threads (0 = one per core); results do not depend on
  // it (under Batching::Upstream only through the speed, below).
  int threads = 0;
  // Where the CPU backend runs its parallel loops (docs/library.md,
  // "Threads"): null, a pool of `threads` of the engine's own; else this
  // executor, which several engines may share (make_thread_pool), or
  // caller_thread_executor() to run on the calling thread alone.
  std::shared_ptr<Executor> executor{};
  // Exact: consecutive pods reuse the previous evaluation where that is
  // exact (host/engine/batch_cache.hpp); decisions do not depend on it.
  // Upstream: kube-scheduler v1.35.4's batching (upstream_batch.hpp);
  // decisions may differ where upstream's would, and, since its state
  // expires on the wall clock as upstream's does, with the speed of the
  // run (machine, backend, threads, load). Exact and Off decide alike on
  // every backend and machine.
  Batching batching = Batching::Exact;
  // Exact: how many cached evaluations to keep, one per recent pod signature
  // (the most recently used kept). More let pods of a few shapes in any
  // order hit (each state brought up to date with the nodes changed since
  // it was last used), at the memory of one evaluation each (about 50 bytes
  // per feasible node). Decisions do not depend on it.
  uint32_t batch_states = 1;
  // Exact: windows of pods (Engine::look_ahead). schedule_all, and callers
  // that announce what they schedule next, hand the engine the next
  // `window` pending pods; those no state answers are evaluated together
  // against the snapshot as it is (on the CPU, each pod on one thread) and
  // kept as states for their own schedule(), which brings them up to date
  // with what the earlier pods changed, as any state, or evaluates afresh
  // where that is not exact. 0 (the default): auto, windows of two pods
  // per lane (at least kAutoWindow, at most kAutoWindowMax) where the
  // backend evaluates a window's pods side by side on at least
  // kAutoWindowMinLanes lanes (Backend::window_lanes: the CPU backend's
  // threads) and a pod's pass splits poorly (at most
  // kAutoWindowNodesPerLane nodes per lane),
  // backing off while they do not pay (the pods answered without them, or
  // kept as batch-cache states); 1: none; N: windows of N. Decisions do not
  // depend on it; memory: one state per pod of the window.
  uint32_t window = 0;
  // How long an assumed pod whose binding finished (finish_binding) is kept
  // without its confirmation before expire_assumed_pods forgets it; 0 (the
  // default, as kube-scheduler v1.35.4's durationToExpireAssumedPod): never.
  double assumed_pod_ttl_seconds = 0;
  // Metrics (Engine::metrics): the share of scheduling cycles, in percent
  // (0 to 100), whose plugins are timed one by one, as upstream samples
  // scheduler_plugin_execution_duration_seconds (10). A seeded draw per
  // cycle: the same cycles are sampled on every backend.
  uint32_t plugin_metrics_sample_percent = kDefaultPluginMetricsSamplePercent;
  // Releasing what the snapshot no longer references (strings, topology
  // matchers and their per-domain sums, existing pods' term groups): after
  // each event, Snapshot::maybe_compact under this policy (amortized; a
  // compaction is structural: ids read from snapshot() hold until the next
  // event call, never across one; docs/snapshot.md). Decisions do not
  // depend on it.
  CompactionPolicy compaction{};
  // How many sparse required anti-affinity groups on hostname keys read
  // per-node counters instead of their key's table
  // (Snapshot::limit_sparse_term_rows); SIZE_MAX: the snapshot's budget.
  // The tests set 0 to run the table path. Decisions do not depend on it.
  size_t sparse_term_rows = SIZE_MAX;
  // DefaultPreemption's dry run (host/engine/preemption.cpp). Bulk: when
  // every Filter the pod runs reads only its node (its pods' requests and
  // host ports, the node's own fields), one PreFilter state serves every
  // check and the potential nodes are dry-run in parallel on the executor;
  // otherwise as Exact. Exact: upstream's steps one node after another, with
  // PreFilter made afresh for every check. Decisions are the same
  // (tests/test_preemption.cpp compares them).
  enum class PreemptionDryRun { Bulk, Exact };
  PreemptionDryRun preemption_dry_run = PreemptionDryRun::Bulk;
};

// A gang's verdict (Engine::schedule_group): admitted (at least its minimum
// placed; the placements stand) or rejected (every member undone, or none
// tried).
enum class GroupOutcome : uint8_t { kNone = 0, kAdmitted = 1, kRejected = 2 };
// "", "admitted", "rejected".
const char* group_outcome_name(GroupOutcome o);

// A gang member's group as the scheduler sees it now (Engine::pod_group_status,
// explain): what the group needs and has, and why it would be rejected
// before any member is placed, if it would.
struct PodGroupStatus {
  std::string pod_group;   // the group's key; "" when the pod is in no gang
  std::string api;         // "Workload" (v1.35), "PodGroup" (scheduler-plugins Coscheduling)
  std::string min_field;   // "minCount" or "minMember"
  int32_t min_count = 0;
  int32_t placed = 0;      // members assumed or bound
  int32_t pending = 0;     // members in the pending list given
  // A topology-aware gang's annotation: the node label key ("" none) and
  // whether one domain is required (else preferred).
  std::string topology_key;
  bool topology_required = false;
  std::string rejection;   // the early rejection's message; "" when the group would be tried
};

// A topology-aware gang's domains (Engine::rank_gang_domains): the order
// schedule_group tries them in, and what put each where.
struct RankedGangDomain {
  std::string value;        // the label's value
  uint32_t nodes = 0;       // nodes in the domain
  uint32_t feasible = 0;    // where the first member passes Filter (the whole cluster as it is)
  bool holds_all = false;   // free resources cover every pending member
  int64_t best_sum = 0;     // the first member's best totals there (as many as members), summed
  uint32_t best_count = 0;  // how many
};
struct GangDomainRanking {
  std::string key;  // the node label key; "" when the group has none
  bool required = false;
  // Why no domain can be tried ("" when some can): no node has the key,
  // the members placed before or a member's nodeSelector leave none, no
  // domain has the free resources.
  std::string problem;
  std::vector<RankedGangDomain> domains;  // best first (docs/plugins.md)
};

struct ScheduleResult {
  std::string pod;    // namespace/name
  int32_t node = -1;  // node index, -1 when unschedulable
  std::string node_name;
  int64_t score = 0;  // the chosen node's total (0 if it was the only feasible node)
  uint32_t feasible_nodes = 0;
  Code code = Code::Success;  // Unschedulable / UnschedulableAndUnresolvable / Error when not placed
  std::string message;        // FitError text when not placed
  std::vector<std::string> warnings;
  // GpuShare: the device indices the pod took on its node (ascending), also
  // written to its index annotation in the snapshot; empty otherwise.
  std::vector<int32_t> devices;
  // SharedDeviceGroup: the pod's group and the devices it shares there, by
  // resource (also written to its annotations); empty otherwise.
  std::string device_group;
  GroupDevices group_devices;
  // DefaultPreemption: the node the pod preempted on ("" when it did not),
  // the pods evicted for it (namespace/name, sorted) and how many of them
  // a PodDisruptionBudget protected. The victims left the cluster and the
  // pod was then placed (node) or, rarely, still found no node.
  std::string nominated_node;
  std::vector<std::string> victims;
  int64_t pdb_violations = 0;
  // Gang scheduling (Engine::schedule_group): the member's group
  // ("ns/name", a Workload's "ns/workload/podGroup[/replicaKey]") and what
  // became of it; "" and kNone for a pod outside any gang.
  std::string pod_group;
  GroupOutcome group_outcome = GroupOutcome::kNone;
  // A topology-aware gang admitted in one domain: "key=value" ("" else).
  std::string group_domain;
};

// What an event did (Engine::add_node and the rest): the embedder's
// informer handler checks `code`; nothing changes unless it is kOk.
enum class EventCode : uint8_t {
  kOk = 0,
  kAlreadyExists = 1,  // an add of an object the engine holds
  kNotFound = 2,       // an update, removal, forget or finish of one it does not hold
  kWrongState = 3,     // the pod is not in the state the event needs (update of an
                       // assumed pod, forget of a bound one, assume of a known one)
  kInvalid = 4,        // the object itself is refused (no nodeName, malformed annotations)
};
const char* event_code_name(EventCode c);

struct EventStatus {
  EventCode code = EventCode::kOk;
  std::string message;                // why, when not kOk: names the object
  std::vector<std::string> warnings;  // things the caller should hear about (kOk too)
  bool ok() const { return code == EventCode::kOk; }
};

// One node's entry in a NodeData filter column (Engine::set_node_filters).
struct NodeFilterValue {
  std::string node;
  bool pass = true;
  // When the node fails: the reason FitError messages and explain show
  // ("" gives "node(s) didn't pass <column>"); ignored when it passes.
  std::string reason;
};

// One node's entry in a NodeData score column (Engine::set_node_scores).
struct NodeScoreValue {
  std::string node;
  int64_t score = 0;  // 0..100
};

// A pod as the engine's cache holds it (Engine::pod_entry).
enum class PodCacheState : uint8_t {
  kAbsent = 0,   // not held
  kAssumed = 1,  // placed by schedule() or assume_pod(), not yet confirmed by add_pod()
  kBound = 2,    // added (a running pod of load(), or add_pod()), or confirmed
};
struct PodCacheEntry {
  PodCacheState state = PodCacheState::kAbsent;
  std::string node;              // the node it is on (or waits for)
  bool node_present = false;     // false: its node is not in the cluster (removed, or not
                                 // added yet); the pod is kept, unseen by scheduling, until
                                 // the node comes (back) or the pod is removed
  bool binding_finished = false;  // finish_binding() was called (assumed pods)
};

// The kinds of cluster objects the engine holds besides nodes and pods.
enum class ObjectKind : uint8_t {
  kNamespace,
  kService,
  kReplicationController,
  kReplicaSet,
  kStatefulSet,
  kSharedDeviceGroup,
  kPriorityClass,
  kPodDisruptionBudget,
  // Pod groups (PodGroupObject): a Workload (scheduling.k8s.io/v1alpha1)
  // and the two PodGroup kinds, which are different resources (API groups)
  // and may share a namespace and name.
  kWorkload,
  kPodGroup,              // scheduling.k8s.io/v1alpha2
  kCoschedulingPodGroup,  // scheduling.x-k8s.io/v1alpha1
};
// "Namespace", "Service", ... as in a manifest's kind; the PodGroup kinds
// with their API group, as kubectl names a resource of an ambiguous kind:
// "PodGroup.scheduling.k8s.io", "PodGroup.scheduling.x-k8s.io".
const char* object_kind_name(ObjectKind k);
// The kind a pod group of this API belongs to.
ObjectKind object_kind_of(PodGroupObject::Api api);

struct PluginScoreExplanation {
  std::string plugin;
  int64_t raw = 0;
  int64_t normalized = 0;
  int64_t weighted = 0;
};

struct NodeExplanation {
  std::string name;
  bool evaluated = true;  // false: outside the PreFilterResult
  bool feasible = false;
  std::string filter_plugin;  // first rejecting plugin (infeasible nodes)
  Code filter_code = Code::Success;
  std::vector<std::string> filter_reasons;
  std::vector<PluginScoreExplanation> scores;  // feasible nodes
  int64_t total = 0;
};

// DefaultPreemption's choice among candidate nodes: upstream's five
// criteria (pickOneNodeForPreemption), in order, then bulkscore's rule
// where upstream picks an arbitrary one.
enum class PreemptionCriterion : uint8_t {
  kOnlyCandidate,    // a single candidate: nothing was compared
  kPdbViolations,    // fewest PDB violations
  kHighestPriority,  // lowest priority of the most important victim
  kPrioritySum,      // smallest sum of the victims' priorities, each offset by 2^31
  kVictims,          // fewest victims
  kStartTime,        // latest start time among the victims of the highest priority
  kNodeIndex,        // bulkscore: the lowest node index (upstream: any, Go map order)
};
// "onlyCandidate", "pdbViolations", "highestPriority", "prioritySum",
// "victims", "startTime", "nodeIndex" (explain's JSON).
const char* preemption_criterion_name(PreemptionCriterion c);

// One pod DefaultPreemption would evict on a candidate node.
struct PreemptionVictim {
  std::string pod;  // namespace/name
  int32_t priority = 0;
  int64_t start_time_ns = 0;  // status.startTime, or the one bulkscore stamped (docs/plugins.md)
  bool pdb_violation = false;  // its eviction would take a PodDisruptionBudget below 0
};

// A node where evicting some lower-priority pods lets the pod fit.
struct PreemptionCandidate {
  std::string node;
  int32_t node_index = -1;  // valid until the next node event
  std::vector<PreemptionVictim> victims;  // most important first (priority, then earlier start)
  // The criteria's keys, in their order.
  int64_t pdb_violations = 0;
  int32_t highest_priority = 0;      // the most important victim's
  int64_t priority_sum = 0;          // the victims' priorities summed
  int64_t offset_priority_sum = 0;   // what upstream compares: each priority + 2^31, summed
  int64_t earliest_start_ns = 0;     // the earliest start among the victims of the highest priority
};

// What DefaultPreemption would do now for a pod that fits nowhere
// (Engine::explain, Engine::rank): the dry run of schedule(), nothing
// evicted.
struct PreemptionExplanation {
  // Upstream's reason when the pod may not preempt (its policy is Never, a
  // victim of its earlier preemption still terminating); "" when it may.
  std::string not_eligible;
  uint32_t potential_nodes = 0;  // nodes Filter rejected as resolvable (Unschedulable)
  uint32_t num_candidates = 0;   // how many candidates the dry run looks for (numCandidates)
  uint32_t offset = 0;           // the potential node it starts at (bulkscore: seeded, per pod)
  uint32_t dry_run_nodes = 0;    // potential nodes tried before it had enough
  // Best first by the criteria (the nominated one first).
  std::vector<PreemptionCandidate> candidates;
  std::string nominated_node;  // "" when there is no candidate
  // How many candidates each criterion left, in order (the first that
  // leaves one decides; kNodeIndex when two or more are left after all).
  std::vector<uint32_t> left_after;
  PreemptionCriterion decided_by = PreemptionCriterion::kOnlyCandidate;
};
// Fills each candidate's criterion keys from its victims, sorts the
// candidates best first (the criteria's order, then the node index) and
// sets decided_by from left_after.
void finish_preemption_explanation(PreemptionExplanation& ex);

struct Explanation {
  std::string pod;
  std::vector<PreFilterStatus> prefilter;
  std::vector<NodeExplanation> nodes;  // snapshot order
  uint32_t feasible_nodes = 0;
  std::string chosen;   // the node schedule would pick, "" if none
  std::vector<int32_t> devices;  // GpuShare: the devices it would take there
  std::string device_group;      // SharedDeviceGroup: its group and the devices
  GroupDevices group_devices;    // it would share there
  // FitError text when no node is feasible; the error when the pod's cycle
  // fails after Filter (a PreScore error, an invalid score: chosen is "").
  std::string message;
  // Whether schedule would answer this pod from the batch cache now (after
  // the pods scheduled so far): "hit", "off", or the reason it would not
  // (flush_reason_name).
  std::string batch;
  // The selection: how many feasible nodes share the best total, and the
  // tie-break that chose among them (the profile's, else the engine's) with
  // its seed.
  uint32_t tied_at_best = 0;
  TieBreak tie_break = TieBreak::Random;
  uint64_t seed = 0;
  // When no node is feasible and the profile's PostFilter has
  // DefaultPreemption: what it would do (message then carries the
  // PostFilter part, as schedule's does, unless a node is nominated).
  std::optional<PreemptionExplanation> preemption;
  std::vector<std::string> warnings;
};

// Engine::rank: the best nodes for a pod, with their scores, and why the
// others were left out; no per-node strings.
struct RankedNode {
  std::string name;
  int32_t node = -1;  // index, valid until the next node event
  int64_t total = 0;  // weighted total
  // Per Ranking::score_plugins: the plugin's raw score, and its normalized
  // score times its weight (the total is their sum).
  std::vector<int64_t> raw;
  std::vector<int64_t> weighted;
};
// Engine::rank's verdict on a node asked for by name: why it was rejected
// (the first rejecting plugin and its reasons), or its scores, total and
// place in the sorted list.
struct NodeVerdictExplanation {
  NodeExplanation node;   // evaluated, feasible, filter plugin and reasons, or scores and total
  uint32_t position = 0;  // 1-based place in the sorted list of feasible nodes; 0 when infeasible
};
struct RejectionCount {
  std::string plugin;  // "" for the nodes outside a PreFilterResult
  std::string reason;  // upstream's FitError reason text
  uint64_t nodes = 0;
};
struct Ranking {
  std::string pod;
  std::vector<std::string> score_plugins;  // the profile's Score plugins, in order
  std::vector<int64_t> score_weights;      // their weights, parallel
  // The first k of the sorted list: total descending, then node index
  // ascending (--tie-break first picks the first; random draws among the
  // tied_at_best first entries).
  std::vector<RankedNode> nodes;
  uint32_t evaluated_nodes = 0;  // candidates visited (all of them: rank never samples)
  uint32_t feasible_nodes = 0;
  uint32_t tied_at_best = 0;  // feasible nodes sharing the best total
  int64_t best_total = 0;     // their total (when a node is feasible)
  // The tie-break that picks among them (the profile's tieBreak, else
  // EngineOptions::tie_break), its seed, and the draw this pod takes: the
  // number of pods schedule() was given before it (each takes the next).
  TieBreak tie_break = TieBreak::Random;
  uint64_t seed = 0;
  uint64_t draw = 0;
  std::string profile;  // the scheduler name of the profile that evaluates the pod
  std::string chosen;  // the node schedule would pick now, "" if none
  // The chosen node's entry and its 1-based place in the sorted list (the
  // random tie-break may pick a tied node past the first k).
  RankedNode chosen_node;
  uint32_t chosen_position = 0;
  std::vector<int32_t> devices;  // GpuShare: the devices the pod would take on the chosen node
  // As Explanation::batch: whether schedule would answer the pod from the
  // batch cache now, or why not.
  std::string batch;
  // The nodes asked for by name (rank's `nodes` argument), in that order.
  std::vector<NodeVerdictExplanation> named;
  // Every (plugin, reason) that rejected nodes, as upstream's FitError
  // counts them, most nodes first (then by reason); whether or not a node fits.
  std::vector<RejectionCount> rejections;
  // The FitError text when no node is feasible; the error when schedule()
  // would fail the pod after Filter (a PreScore error, an invalid score:
  // chosen is "").
  std::string message;
  std::optional<PreemptionExplanation> preemption;  // as Explanation::preemption
  std::vector<std::string> warnings;
};

struct PreemptionCache;  // preemption.cpp

class Engine {
 public:
  Engine(SchedulerConfig config, EngineOptions options);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Replaces the snapshot with these nodes and running pods, and the
  // cluster objects (Services, controllers, Namespaces, SharedDeviceGroups)
  // with its. Returns
  // warnings about the cluster for the caller to log (none today: every
  // constraint a running pod carries into scheduling is enforced); the
  // library does not log them.
  std::vector<std::string> load(const Cluster& cluster);
  // The same, taking the cluster's nodes and running pods over; its pending
  // pods are left alone (move them out first to keep them).
  std::vector<std::string> load(Cluster&& cluster);

  // Filter, score, select; assumes the pod on the chosen node (its cache
  // state becomes kAssumed, under Pod::cache_key). A pod the engine already
  // holds (assumed or bound) is not scheduled again: code Error, a message
  // that says so, nothing changes.
  // A pod alone: a gang member given here is placed as an ordinary pod
  // (schedule_group and schedule_all take gangs).
  ScheduleResult schedule(const Pod& pod);
  // The same, taking the pod over: where it is assumed the snapshot keeps
  // it without a copy (the C ABI's and the CLI's path). `pod` is left
  // unspecified.
  ScheduleResult schedule(Pod&& pod);
  // Every pod in queue order (queue_order); results in the order of `pods`.
  // Windows of EngineOptions::window pods are looked ahead at.
  std::vector<ScheduleResult> schedule_all(const std::vector<Pod>& pods);
  // The same, taking the pods over as schedule(Pod&&) does.
  std::vector<ScheduleResult> schedule_all(std::vector<Pod>&& pods);

  // ---- windows of pods (EngineOptions::window; docs/batching.md) ---------
  // The pods the caller schedules next, in the order it will schedule them
  // (the first EngineOptions::window are used): each that no kept state
  // would answer now, nor an earlier pod of the window's shape, is
  // evaluated now, the window's pods together, and kept as a state for its
  // own schedule() (by Pod::cache_key) until the next look_ahead. Events
  // may come in between: schedule() brings the state up to date with every
  // change since, as any batch-cache state, or evaluates the pod afresh
  // where that is not exact, so decisions never depend on it. Does nothing
  // unless batching is exact and the window is above 1; never throws for a
  // pod (a pod that cannot be prepared is left to its schedule()).
  void look_ahead(const std::vector<const Pod*>& pods);
  // look_ahead for a queue (queue_order's entries over `pods`) reaching
  // entry `at`: once the last window is used up, the pods of the ordinary
  // entries from `at` on (up to a gang's entry, and the window) are looked
  // ahead at. Returns the first entry past that window (at + 1 when there
  // is none), for the caller to call again there.
  size_t look_ahead_in_queue(const std::vector<Pod>& pods, const std::vector<QueueEntry>& order, size_t at);
  // EngineOptions::window from now on (0: auto); the states of the last
  // look-ahead are dropped.
  void set_window(uint32_t window);
  // The window a look-ahead takes now (1: none, and always without exact
  // batching): EngineOptions::window, or auto's.
  uint32_t effective_window() const;
  static constexpr uint32_t kAutoWindow = 8;
  static constexpr uint32_t kAutoWindowMax = 64;
  // Auto windows only where a pod's pass gives each thread at most this
  // many nodes: past it the pass itself keeps every thread busy, and
  // windows lost (two threads, distinct pods: 20,000 nodes 8,500 against
  // 10,800 pods/s, 100,000 nodes 1,184 against 1,502; sixteen threads on
  // an H100 machine's host, 2026-11-28: 20,000 nodes, 1,250 a thread,
  // 15,200 against 21,000, while 5,000 nodes, 312 a thread, took 33,400
  // against 26,900).
  static constexpr uint32_t kAutoWindowNodesPerLane = 1024;
  // And only on this many lanes or more: on two threads, once the pool's
  // idle workers kept checking for work through a moment's contention,
  // no window won at any size (distinct pods, 200 nodes 71,000 against
  // 150,000 pods/s, 5,000 nodes 26,700 against 35,000); on sixteen,
  // windows of 32 took 1.8x (docs/performance.md).
  static constexpr uint32_t kAutoWindowMinLanes = 4;

  // ---- gang scheduling (docs/plugins.md, "Pod groups") -------------------
  // The order schedule_all takes `pods` in: ordinary pods where they are,
  // each gang's pending members together at its first member's place.
  std::vector<QueueEntry> queue_order(const std::vector<Pod>& pods) const;
  // All or nothing: the pending members of one gang (one group key, as
  // queue_order gives them). Rejected before any placement when the
  // group's object is missing, when its pods (these and those placed) are
  // fewer than its minimum, or (Coscheduling) when the cluster's free
  // resources cannot cover minResources. Otherwise each member is placed in
  // turn through schedule() on the cluster as the earlier ones left it; as
  // soon as the minimum cannot be reached any more the rest are not tried.
  // At least the minimum placed (members placed before count): the
  // placements stand (kAdmitted; a member that found no node has its own
  // FitError). Else every placement is undone (Unreserve, forget: the
  // engine as if they had never been placed) and every member is
  // Unschedulable with the group's message, then its own FitError where it
  // had one (kRejected). Gang members do not preempt: an eviction cannot
  // be undone if the group is then rejected. Results in the order given.
  // Pods outside any gang (or of a `basic` group) are scheduled one by one.
  std::vector<ScheduleResult> schedule_group(const std::vector<Pod>& members);
  // A topology-aware gang's domains as schedule_group would try them now
  // (best first; `members`: its pending members); empty `key` when the
  // members' group has no topology annotation. Nothing changes.
  GangDomainRanking rank_gang_domains(const std::vector<Pod>& members);
  // The group `pod` belongs to, as schedule_group would find it now with
  // `pending` as the pending pods (its members among them are counted).
  PodGroupStatus pod_group_status(const Pod& pod, const std::vector<Pod>& pending) const;

  // The evaluation of `pod` against the snapshot as it is; nothing assumed.
  Explanation explain(const Pod& pod);
  // The k best feasible nodes for `pod` now, in the sorted list's order,
  // with per-plugin scores, the tie at the best total and the rejection
  // histogram; every candidate evaluated, nothing assumed or cached. One
  // evaluation, no per-node strings.
  Ranking rank(const Pod& pod, uint32_t k);
  // The same, with the verdict on each node named in `nodes` (Ranking::named):
  // its first rejecting plugin and reasons, or its scores and place; strings
  // for those nodes only. InputError for a name that is not a node.
  Ranking rank(const Pod& pod, uint32_t k, const std::vector<std::string>& nodes);
  // The decision of an evaluation of `pod` now (node, total, feasible
  // nodes, the devices it would take) with every candidate node scored:
  // schedule's when the profile scores every node. Nothing is assumed,
  // cached or advanced. For look-ahead over pending pods.
  ScheduleResult peek(const Pod& pod);

  // ---- events: kube-scheduler's cache, one informer event at a time ------
  // (docs/library.md). Nodes are known by name, pods by Pod::cache_key (UID,
  // else namespace/name), objects by kind, namespace and name. An add of a
  // present object, or an update, removal, forget or finish of an absent
  // one, returns a status saying so and changes nothing; so does an object
  // the engine refuses (kInvalid, with the reason). Every event keeps the
  // snapshot, the device mirror, the topology tables and the batch cache
  // exact: the next decision is what a fresh load() of the same cluster
  // would decide (with every node scored; sampling's round-robin start and
  // upstream's node tree follow the events as upstream's do).
  //
  // Node indices (ScheduleResult::node, Snapshot) hold until the next node
  // event: remove_node shifts the later nodes down. Names never go stale.
  // String ids, topology matcher rows and term-group indices read from
  // snapshot() hold until the next pod or node event: after one, the
  // snapshot may release what nothing references any more and renumber the
  // rest (EngineOptions::compaction); schedule, explain, rank and peek never
  // do.
  EventStatus add_node(const Node& node);
  // The node of that name, replaced; its pods stay.
  EventStatus update_node(const Node& node);
  // The node leaves scheduling; its pods are kept, unseen, until their own
  // removal or the node's return (upstream's ghost node).
  EventStatus remove_node(std::string_view name);
  // The informer's add of a bound pod (spec.nodeName set). For a pod this
  // engine assumed, the confirmation: it becomes kBound, counted once, moved
  // if it was bound elsewhere. A pod on a node not (yet) in the cluster is
  // kept until the node comes. A terminal pod (Succeeded, Failed) holds
  // nothing and is not added (a warning says so).
  EventStatus add_pod(const Pod& pod);
  // A bound pod's new version (labels, requests, annotations...). An
  // assumed pod is refused (kWrongState, as upstream: confirm it first); a
  // pod that turned terminal is removed; a pod now bound to another node
  // than the cache's is refused (upstream treats it as a corrupted cache).
  EventStatus update_pod(const Pod& pod);
  // The informer's delete: the pod leaves, assumed or bound.
  EventStatus remove_pod(std::string_view cache_key);
  // AssumePod: `pod` placed on pod.node_name without a decision (the
  // embedder decided, or replays one); kWrongState if the engine holds it.
  EventStatus assume_pod(const Pod& pod);
  // ForgetPod: the assumption undone exactly (snapshot, devices, groups,
  // topology tables, batch cache); kWrongState for a bound pod, kNotFound
  // for one the engine does not hold. With --tie-break random each
  // schedule() takes the next draw: forget does not give a draw back.
  EventStatus forget_pod(std::string_view cache_key);
  // FinishBinding: the binding call returned; an assumed pod then expires
  // after EngineOptions::assumed_pod_ttl_seconds (0, upstream's default:
  // never) unless confirmed. See expire_assumed_pods.
  EventStatus finish_binding(std::string_view cache_key,
                             std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());
  // The informer's delete of a pod that is not bound (upstream's queue
  // Delete): a pod whose last schedule() failed stops counting as pending and
  // unschedulable in the metrics. kNotFound when no failed attempt of that
  // key is counted. (Giving the pod to schedule() again, assume_pod or
  // add_pod also take it out; remove_pod is for the cache's pods.)
  EventStatus remove_pending_pod(std::string_view cache_key);
  // Forgets the assumed pods whose binding finished more than the TTL ago
  // (upstream's cleanupAssumedPods); returns their cache keys.
  std::vector<std::string> expire_assumed_pods(
      std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());
  bool is_assumed_pod(std::string_view cache_key) const;
  PodCacheEntry pod_entry(std::string_view cache_key) const;
  size_t num_cached_pods() const { return pod_records_.size(); }

  // Objects: Namespaces, Services, ReplicationControllers, ReplicaSets,
  // StatefulSets, SharedDeviceGroups, PriorityClasses,
  // PodDisruptionBudgets, pod groups (Workloads, PodGroups). Applied where
  // they are read (the next pod's PreFilter; a group's binding; a pending
  // pod's priority, resolved when schedule() is given it; the budgets when
  // a pod preempts; a gang's group when its members are taken), never by a
  // reload. A pod the cache holds keeps the priority it was added with, as
  // a pod keeps the one admission gave it. A PriorityClass update that
  // changes its value or preemptionPolicy is kInvalid (the API server
  // refuses it: both are immutable).
  EventStatus add_object(const Namespace& ns);
  EventStatus add_object(const SelectingObject& obj);
  EventStatus add_object(const SharedDeviceGroup& group);
  EventStatus add_object(const PriorityClass& cls);
  EventStatus add_object(const PodDisruptionBudget& pdb);
  EventStatus update_object(const Namespace& ns);
  EventStatus update_object(const SelectingObject& obj);
  EventStatus update_object(const SharedDeviceGroup& group);
  EventStatus update_object(const PriorityClass& cls);
  EventStatus update_object(const PodDisruptionBudget& pdb);
  // Pod groups (docs/plugins.md, "Pod groups"): one object's groups as
  // parse_objects_json reads them, a Workload's spec.podGroups[] (one
  // entry each, in order) or one PodGroup of either API; every entry of
  // the same API, namespace and name (kInvalid otherwise, and for a
  // Workload's group named twice). A Workload's groups are added, replaced
  // and removed together (remove_object(kWorkload, ...)). Read when a gang
  // is taken (schedule_group, schedule_all) and by pod_group_status: the
  // pods the cache holds keep their data, and their group's change counts
  // from the next gang attempt (a removed group's pending members are
  // rejected as missing).
  EventStatus add_object(const std::vector<PodGroupObject>& groups);
  EventStatus update_object(const std::vector<PodGroupObject>& groups);
  // `namespace_name` is ignored for the cluster-scoped kinds (Namespace,
  // SharedDeviceGroup, PriorityClass).
  EventStatus remove_object(ObjectKind kind, std::string_view namespace_name, std::string_view name);

  // ---- node data: the NodeData plugin's columns (docs/plugins.md) ---------
  // Named per-node columns the embedder keeps for its own rules (a license,
  // a maintenance window, a cost model), which profiles read through the
  // NodeData plugin's args: a filter column holds per node a pass or a
  // fail with a reason (at most 63 distinct reasons in use per column), a
  // score column a score 0..100. A column is made by its first set, of
  // that kind (a filter and a score column cannot share a name; names are
  // qualified names, as label keys). Nodes by name: an unknown node is
  // kNotFound; a bad column name, a column of the other kind, a score out
  // of range, a node given twice or a reason with control characters (or
  // over 256 bytes) is kInvalid. The bulk forms change all or nothing.
  // Nodes added later have no data in any column (the plugin's
  // filterDefault and scoreDefault apply); update_node keeps a node's data,
  // remove_node drops it, load keeps the data of the nodes it loads again
  // (by name). Each change is exact for the device mirror and the batch
  // cache: only the nodes whose entries changed are filtered and scored
  // again.
  EventStatus set_node_filter(std::string_view column, std::string_view node, bool pass, std::string_view reason = {});
  EventStatus set_node_filters(std::string_view column, const std::vector<NodeFilterValue>& values);
  EventStatus set_node_score(std::string_view column, std::string_view node, int64_t score);
  EventStatus set_node_scores(std::string_view column, const std::vector<NodeScoreValue>& values);
  // The node's entry removed (it has no data in the column then); kNotFound
  // for an unknown column or node.
  EventStatus clear_node_data(std::string_view column, std::string_view node);
  // Every node's entry in the column removed (the column stays, empty).
  EventStatus clear_node_data(std::string_view column);

  const Snapshot& snapshot() const { return snapshot_; }
  // The Services, controllers, Namespaces, groups, PriorityClasses and
  // PodDisruptionBudgets: the last load's, as the object events (and
  // preemption's evictions, for the budgets' status) changed them.
  const ClusterObjects& objects() const { return objects_; }
  const char* backend_name() const { return backend_->name(); }
  // Why the backend is what it is (e.g. "auto: no CUDA device found").
  const std::string& backend_note() const { return backend_note_; }
  // Warnings raised while scheduling or explaining since the last call (a
  // fall back to the CPU backend when the device ran out of memory), oldest
  // first; the call clears them.
  std::vector<std::string> take_warnings();
  // The batch cache's counters since the engine was made: all profiles, and
  // by profile (scheduler name, config order).
  BatchCounters batch_counters() const;
  std::vector<std::pair<std::string, BatchCounters>> batch_counters_by_profile() const;
  Batching batching() const { return options_.batching; }
  // kube-scheduler's metrics since the engine was made, upstream's names
  // and labels (host/engine/scheduler_metrics.hpp; docs/library.md,
  // "Metrics"): attempts by result and profile, their durations, the
  // extension points' and (sampled) the plugins' durations, the pending
  // pods and the plugins that rejected them, the batch counters. A copy.
  SchedulerMetrics metrics() const;
  // The same in Prometheus text format (what `schedule --metrics F` writes
  // and bs_engine_metrics_text returns).
  std::string metrics_text() const;
  // Scheduler names of the profiles, in config order.
  std::vector<std::string> scheduler_names() const;

 private:
  const ProfilePlan& plan_for(const Pod& pod) const;
  // The profile's tieBreak, else EngineOptions::tie_break.
  TieBreak tie_break_for(const ProfilePlan& plan) const;
  // Explanation::batch for `pod` now: "hit", "off", or why schedule would
  // evaluate it in full.
  std::string batch_status(const Pod& pod, const ProfilePlan& plan, const PodQuery& q) const;
  // What one schedule() call did, for the metrics: when PreFilter and the
  // evaluation ended (unset: not reached), and why it failed.
  struct AttemptTrace {
    std::chrono::steady_clock::time_point prefilter_end{}, filter_end{}, postfilter_start{}, postfilter_end{};
    bool prefilter_ran = false, filter_ran = false, postfilter_ran = false;
    Code prefilter_status = Code::Success;
    Code postfilter_status = Code::Success;  // Success: a node was nominated; else Unschedulable
    bool prescore_error = false;             // the pod failed with a PreScore error
    MetricsRecorder::PluginSet rejectors;    // unschedulable: upstream's UnschedulablePlugins
  };
  // schedule() and schedule(Pod&&) (schedule_all and its rvalue form):
  // `given` is `pod` (`pods`) where it was handed over, else null.
  ScheduleResult schedule_pod(const Pod& pod, Pod* given);
  std::vector<ScheduleResult> schedule_all_of(const std::vector<Pod>& pods, std::vector<Pod>* given);
  // schedule()'s cycle, after the pod is known to be new and its profile
  // found: fills `res` and `trace`.
  void schedule_cycle(const Pod& pod, Pod* given, const std::string& key, const ProfilePlan& plan, size_t profile,
                      uint64_t cycle, ScheduleResult& res, AttemptTrace& trace);
  // run_post_filter after a FitError, timed for the metrics.
  void post_filter(const Pod& pod, const ProfilePlan& plan, PodQuery& q, uint64_t seq, ScheduleResult& res,
                   AttemptTrace& trace);
  // Records the attempt in the metrics.
  void record_attempt(const std::string& key, const ProfilePlan& plan, size_t profile, const ScheduleResult* res,
                      const AttemptTrace& trace, std::chrono::steady_clock::time_point start);
  uint32_t num_nodes_to_find(const ProfilePlan& plan, uint32_t candidates) const;
  // Assumes `pod` on res.node; `given`: `pod` itself where it was handed
  // over (moved into the snapshot where nothing in Reserve writes to it),
  // else null (copied).
  void assume(const Pod& pod, Pod* given, const ProfilePlan& plan, ScheduleResult& res, const std::string& key);
  // Reserve's context for `pod` on `node` under `plan` (plugins/reserve.hpp).
  ReserveContext reserve_context(const Pod& pod, const ProfilePlan& plan, uint32_t node) const;
  // What Reserve would take for `pod` on `node` (explain, rank): nothing changes.
  Reservation preview_reservation(const Pod& pod, const ProfilePlan& plan, uint32_t node) const;
  // InputError when the pod's device annotations are malformed.
  void check_device_annotations(const Pod& pod) const;
  std::string fit_error(const PodQuery& q, const EvalResult& r) const;
  // Reserve for a bound pod (load, add_pod): what its record lacks (a pod
  // that asks for devices without listing them is taken to hold those the
  // selection picks, with a warning).
  void assign_pod_devices(uint32_t id, std::vector<std::string>& warnings);

  // ---- PostFilter (preemption.cpp) ----
  // After a FitError: the profile's PostFilter plugins in order
  // (DynamicResources' message for a pod without claims; DefaultPreemption's
  // dry run, eviction and placement). Appends their messages to res.message,
  // or places the pod after preempting. With `dry_run` (explain, rank)
  // nothing is evicted or placed: DefaultPreemption's candidates and choice
  // go there instead.
  void run_post_filter(const Pod& pod, const ProfilePlan& plan, PodQuery& q, uint64_t seq, ScheduleResult& res,
                       PreemptionExplanation* dry_run = nullptr);
  // explain's and rank's PostFilter after a FitError: `message` gets its
  // part, `out` the dry run (when DefaultPreemption ran).
  void explain_post_filter(const Pod& pod, const ProfilePlan& plan, PodQuery& q, std::string& message,
                           std::optional<PreemptionExplanation>& out);
  // Set while schedule_group places a gang's members: PostFilter
  // (preemption) does not run for them.
  bool gang_cycle_ = false;
  // The snapshot's pods (assumed or bound) in `member`'s group, ascending.
  std::vector<uint32_t> placed_members(const Pod& member) const;
  // Pod ids by group key (pod_group_key), so that a group attempt does not
  // scan every pod: each pod that enters the snapshot, or whose key changes
  // there, is noted under its key and taken out when it leaves; reading a
  // bucket (placed_members) still checks each id and prunes what went
  // stale by any other way.
  mutable std::unordered_map<std::string, std::vector<uint32_t>> group_members_;
  void index_group_member(uint32_t id);
  // `pod` (its group key) left the snapshot's slot `id`.
  void unindex_group_member(const Pod& pod, uint32_t id);
  // schedule_group's steps (engine_gang.cpp). Each member in turn through
  // schedule(), results appended to `out`, until the members left cannot
  // make up `min` with the `placed` ones; the indices placed now. A member
  // the engine refuses (an exception) undoes the others first.
  std::vector<size_t> place_gang_members(const std::vector<Pod>& members, int64_t placed, int64_t min,
                                         std::vector<ScheduleResult>& out);
  // Unreserve and forget, the last placed first.
  void undo_gang_members(const std::vector<Pod>& members, const std::vector<size_t>& placed_now);
  // A rejected group's results: every member Unschedulable with `why`,
  // then its own FitError from `tried` (the attempt's results, maybe fewer
  // than the members: the rest were not tried).
  std::vector<ScheduleResult> reject_gang(const std::vector<Pod>& members, std::vector<ScheduleResult> tried,
                                          const std::string& key, const std::string& why);
  // Topology-aware gangs: the first member's feasible nodes and totals
  // over the whole cluster (an evaluation as rank's, nothing assumed);
  // false when PreFilter rejects it.
  bool gang_first_member_totals(const Pod& pod, std::vector<uint32_t>& nodes, std::vector<int64_t>& totals);
  // rank_gang_domains for group `g`, its members placed before and the
  // members it needs now.
  GangDomainRanking domain_ranking(const std::vector<Pod>& members, const PodGroupObject& g,
                                   const std::vector<uint32_t>& placed_ids, int64_t need);
  // The preemption clock: the start time a pod placed now gets, later than
  // every running pod's and increasing (docs/plugins.md, DefaultPreemption).
  int64_t next_start_time() { return ++now_ns_; }
  int64_t now_ns_ = 0;
  // A pod's priority and policy as admission sets them, and a start time.
  Pod admitted(const Pod& pod) const;

  // ---- the cache's records (engine_events.cpp) ----
  struct PodRecord {
    PodCacheState state = PodCacheState::kBound;
    bool binding_finished = false;
    std::optional<std::chrono::steady_clock::time_point> deadline;
    std::string node;                  // the node it is on or waits for
    uint32_t id = Snapshot::kNoPod;    // its snapshot pod id; kNoPod while its node is absent
    std::optional<Pod> waiting;        // the pod, while its node is absent
    // An assumed pod's: what Reserve took (only when it took anything) and
    // its profile, for Unreserve when it is forgotten.
    std::shared_ptr<const Reservation> reservation;
    uint32_t profile = 0;
  };
  // Adds `pod` (node_name set) under `key` in `state`: into the snapshot
  // when its node is present, else kept waiting for it.
  EventStatus place_record(Pod pod, const std::string& key, PodCacheState state);
  // Takes the pod out of the snapshot (or the waiting list) and the records.
  Pod drop_record(std::unordered_map<std::string, PodRecord>::iterator it);
  // The node's waiting pods go into the snapshot (after add_node).
  void admit_waiting_pods(const std::string& node, std::vector<std::string>& warnings);
  // After a node event: upstream batching's state names node indices.
  void node_set_changed();
  // After a node data change (engine_node_data.cpp).
  void node_data_changed();
  // After every event: the snapshot releases what nothing references any
  // more, when that is due (EngineOptions::compaction).
  void release_dead() { snapshot_.maybe_compact(options_.compaction); }
  std::unordered_map<std::string, PodRecord> pod_records_;
  // Node name -> the keys of the pods waiting for it.
  std::unordered_map<std::string, std::vector<std::string>> waiting_by_node_;
  // The backend's evaluation, with the device failures handled: any device
  // error falls back to the CPU backend for the rest of the run, except an
  // out-of-memory the pass survives without its optional lists (want_scores,
  // want_verdicts, want_sorted). Then, when `lists_optional` (a batch-cache
  // state's score lists), the result comes without them and the call
  // returns false; otherwise (explain, upstream's state) this one evaluation
  // runs again on a CPU backend with them. The device keeps the passes.
  // A query whose scores may leave [0, 100] (PodQuery::check_score_range)
  // is evaluated with its per-plugin scores, and the first one outside the
  // range becomes its score_error, as upstream's framework fails the cycle.
  bool evaluate(PodQuery& q, const EvalRequest& req, EvalResult& out, bool lists_optional = false);
  bool evaluate_on_backend(PodQuery& q, const EvalRequest& req, EvalResult& out, bool lists_optional);
  // Drops the backend for the CPU one for the rest of the run, with one
  // warning that says why.
  void fall_back(const std::string& why);

  SchedulerConfig config_;
  EngineOptions options_;
  std::vector<ProfilePlan> plans_;
  Snapshot snapshot_;
  ClusterObjects objects_;
  // The CPU backends' options: the one executor they share.
  BackendOptions cpu_backend_options();
  std::shared_ptr<Executor> executor_;  // made at the first CPU backend
  std::unique_ptr<Backend> backend_;
  std::string backend_note_;
  // The CPU backend that gives the lists the device had no room for (made
  // on first need; evaluate()).
  std::unique_ptr<Backend> list_backend_;
  bool lists_oom_warned_ = false;  // that happened: warned once
  std::vector<std::string> warnings_;
  uint64_t pod_seq_ = 0;  // the random tie-break's per-pod draw
  uint32_t next_start_node_index_ = 0;
  EvalResult scratch_;
  std::vector<BatchCache> batch_;              // --batching exact: the states, in no order
  // batch_'s indices, the most recently used first. The states stay where
  // they are: rotating the states themselves (dozens of vectors each) on
  // every pod was 3% of a run's profile with 160 states.
  std::vector<uint32_t> batch_order_;
  // Makes the state at position `k` of batch_order_ the most recently used.
  void most_recent(size_t k) {
    std::rotate(batch_order_.begin(), batch_order_.begin() + static_cast<std::ptrdiff_t>(k),
                batch_order_.begin() + static_cast<std::ptrdiff_t>(k) + 1);
  }
  // --batching exact: the shapes of recent misses that were not kept (a
  // ring as long as batch_): a miss is kept as a state only when its shape
  // was seen lately, so pods of shapes that do not recur cost what they cost
  // with the cache off (no score lists, no state built).
  std::vector<BatchCache> shapes_;
  size_t next_shape_ = 0;
  // look_ahead's states, each for the pod of its key ("": none; kept for
  // its buffers).
  struct WindowState {
    std::string key;
    WindowAnswer light;  // the light form, where it holds the evaluation
    BatchCache state;    // else a batch-cache state; the pod's shape either way
  };
  std::vector<WindowState> window_;
  size_t last_light_ = 0;         // light states the last look-ahead built
  uint32_t window_backoff_ = 0;   // auto: windows skipped after one that did not pay (doubling, at most 64)
  size_t window_skip_ = 0;        // auto: queue entries still to pass without a look-ahead
  // look_ahead's scratch: the queries, requests and evaluations of a window.
  std::vector<PodQuery> window_queries_;
  std::vector<EvalResult> window_results_;
  // The window state of `key`'s pod answers `q` (schedule_cycle's path after
  // the kept states): the hit, and the state moved where a miss's state would go.
  bool window_hit(const std::string& key, const ProfilePlan& plan, PodQuery& q, bool keep, size_t replaced,
                  BatchHit& hit, BatchCounters& counters);
  std::vector<BatchCounters> batch_counters_;  // by profile, parallel to plans_
  std::vector<UpstreamBatch> upstream_;        // --batching upstream: per profile, as upstream's
  uint64_t cycle_ = 0;                         // scheduling cycles: every pod schedule() is given
  MetricsRecorder metrics_;
  PluginTrace plugin_trace_;  // the current cycle's (schedule())
  // The device model of the profiles that enable GpuShare (one for all).
  std::optional<DeviceModel> device_model_;
  // The shared device groups' model of the profiles that enable
  // SharedDeviceGroup (one for all).
  std::optional<DeviceGroupModel> group_model_;
  // The bulk dry run's per-node cache (preemption.cpp): each node's pods'
  // requests, host ports and covering budgets, kept while the node is not
  // in the snapshot's mutation log.
  std::shared_ptr<PreemptionCache> preemption_cache_;
};

// Upstream's numFeasibleNodesToFind (semantics doc §2.2).
uint32_t num_feasible_nodes_to_find(int32_t percentage, uint32_t num_candidates, bool has_scoring);

}  // namespace bulkscore
