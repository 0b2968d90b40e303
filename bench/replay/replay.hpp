// `bulkscore replay`: the workload-inflation experiment of "Beware of
// Fragmentation" (USENIX ATC '23) on the Alibaba GPU trace, through the
// engine (docs/gpu-placement.md, "Replay: the paper's experiment").
//
// The pipeline, per placement policy and seed:
//  1. the trace's CSVs are read strictly (read_trace) and turned into Nodes
//     and Pods in the simulator's model (trace_node_object, trace_pod_object);
//  2. the typical tasks are taken from the untuned pod list;
//  3. the pods are sorted by name and shuffled, the workload is tuned to a
//     multiple of the cluster's GPU capacity (tune_workload), and the nodes
//     are put in a seeded random order, which is the tie-break;
//  4. the pods are scheduled one at a time, with no departures, and after
//     every pod the arrived and allocated GPU units and the cluster's
//     fragmentation are recorded (run_replay_seed);
//  5. the records are bucketed by arrival % as the paper's scripts do, and
//     averaged over seeds (bucket_seed_run, summarize_policy).
//
// The library does not print; the CLI front end (replay_cli.cpp) logs,
// writes the outputs and draws the plot. Errors in the input are
// InputError naming file:line and the column.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "host/engine/batch_cache.hpp"
#include "host/input/config.hpp"
#include "host/input/devices.hpp"
#include "host/input/model.hpp"

namespace bulkscore {

// ---- CSV --------------------------------------------------------------------

// One data row: its 1-based line number in the file and its fields.
struct CsvRow {
  size_t line = 0;
  std::vector<std::string> fields;
};

// The longest field a trace CSV may hold: 253 bytes, the longest name
// Kubernetes allows (a DNS-1123 subdomain: a pod's, a node's). The trace's
// longest is 38 (a gpu_spec). Every pod the replay makes of a row (clones
// included) copies its name, so an unbounded field would cost its size per
// pod.
constexpr size_t kMaxCsvFieldBytes = 253;

// A strict CSV table: the first line must be exactly `expected_header`;
// every row has as many fields as the header (counted before any field is
// copied); fields are separated by commas with no quoting (a '"' is an
// error, since the trace never quotes), at most kMaxCsvFieldBytes bytes
// each, with no control character (NUL, tab, CR... inside a line); CRLF
// line ends and a missing final newline are accepted; empty lines are
// errors except at the very end. InputError("<origin>:<line>: ...", naming
// the column).
struct CsvTable {
  std::string origin;  // the file's name, for messages
  std::vector<std::string> header;
  std::vector<CsvRow> rows;
};
CsvTable parse_csv(const std::string& text, const std::string& origin, const std::vector<std::string>& expected_header);
// The same, the header being any one of `accepted_headers`.
CsvTable parse_csv(const std::string& text, const std::string& origin,
                   const std::vector<std::vector<std::string>>& accepted_headers);
CsvTable read_csv(const std::string& path, const std::vector<std::string>& expected_header);

// The field of `row` in `column` (a header name) as a decimal integer in
// [min, max]. InputError("<origin>:<line>: column <name>: ...") otherwise.
int64_t csv_int(const CsvTable& table, const CsvRow& row, size_t column, int64_t min, int64_t max);

// ---- the trace ----------------------------------------------------------------

// A row of openb_node_list_*.csv: sn,cpu_milli,memory_mib,gpu,model.
struct TraceNode {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t gpus = 0;
  std::string model;   // empty for a CPU-only node
  std::string origin;  // "file:line"
};

// A row of openb_pod_list_*.csv: the columns the experiment reads. The
// multigpu variants have only the first five columns (no gpu_spec); qos,
// phase and the times are not read (no departures; they may be empty).
struct TracePod {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t num_gpu = 0;
  int32_t gpu_milli = 0;  // as written; the simulator clamps it to 1000 per GPU
  std::string gpu_spec;   // allowed models, '|'-separated; empty: any
  std::string origin;     // "file:line"
};

const std::vector<std::string>& trace_node_header();
const std::vector<std::string>& trace_pod_header();        // all eleven columns
const std::vector<std::string>& trace_pod_short_header();  // name .. gpu_milli (the multigpuNN lists)

// The rows, checked: names non-empty and unique within the file (as the API
// server keeps them), numbers in range, card models (`model`, each entry of
// `gpu_spec`) valid label values, since they become the node's label and
// the pod's model annotation. InputError naming file:line and the column.
std::vector<TraceNode> parse_trace_nodes(const std::string& text, const std::string& origin);
std::vector<TracePod> parse_trace_pods(const std::string& text, const std::string& origin);

// The units a pod asks for on each of its GPUs: gpu_milli clamped to 1000,
// 0 without GPUs.
int32_t trace_pod_milli(const TracePod& p);
// Its whole GPU demand in units: milli x count.
int64_t trace_pod_gpu_units(const TracePod& p);

// The objects the simulator makes of the rows (docs/gpu-placement.md):
// allocatable cpu, memory (MiB -> bytes), pods 1001, the GPU count and
// 1000 units per GPU, and the card-model label on a GPU node; a pod with one
// container requesting cpu and memory, and the GPU annotations when it asks
// for GPUs. `name` overrides the pod's name (clones of tuning).
Node trace_node_object(const TraceNode& row, const DeviceModel& model = DeviceModel{});
Pod trace_pod_object(const TracePod& row, const DeviceModel& model = DeviceModel{}, const std::string& name = "");
// The same pod without its name and origin: what typical_tasks reads (the
// requests and the GPU annotations). The pods the replay makes only for
// their shapes (the trace's typical tasks, each retarget's pending pods)
// copy no name: a row's name is copied only into the pods the engine
// schedules.
Pod trace_pod_shape(const TracePod& row, const DeviceModel& model = DeviceModel{});

// A trace as the experiment uses it: the nodes in file order and the pods
// sorted by name (the simulator's first step; names are unique in the trace
// but the sort is stable anyway).
struct ReplayTrace {
  std::string nodes_path;
  std::string pods_path;
  std::vector<TraceNode> nodes;
  std::vector<TracePod> pods;
  int64_t gpu_capacity_units = 0;  // sum over nodes of 1000 x GPUs
  int64_t gpus = 0;
};
ReplayTrace read_trace(const std::string& nodes_path, const std::string& pods_path);
ReplayTrace make_trace(std::vector<TraceNode> nodes, std::vector<TracePod> pods);

// ---- the workload of one seed -------------------------------------------------

// A deterministic stream for one seed and one purpose (shuffle, tuning,
// node order): SplitMix64 streams, so each step's draws do not depend on
// how many the others took. Not Go's math/rand: results are distributions
// like the paper's, not the same runs.
enum class ReplayStream : uint64_t { Shuffle = 1, Tune = 2, NodeOrder = 3 };

struct TuneOptions {
  // Target GPU demand as a multiple of the cluster's capacity (1.3: 130%).
  double inflation = 1.3;
  // The simulator's test for "would the next clone exceed the target" adds
  // the clone's per-GPU units rather than units x count, so multi-GPU
  // clones overshoot a little; kept by default to match the paper.
  bool per_gpu_milli_quirk = true;
};

struct TunedWorkload {
  // Indices into ReplayTrace::pods (name order), in scheduling order:
  // the shuffled pods, then the clones. An index may repeat (clones).
  std::vector<uint32_t> order;
  int64_t demand_before = 0;  // GPU units of the original pods
  int64_t demand_after = 0;   // of `order`
  int64_t target = 0;         // inflation x capacity
  size_t added = 0;           // clones appended
  size_t removed = 0;         // pods removed when the trace asked for more than the target
};

// Step 3 and 4 of the simulator's procedure for `seed`: the name-sorted
// pods shuffled; then, below the target, clones drawn uniformly with
// replacement from the name-sorted pods appended until the next would
// exceed it; above it, uniformly random pods removed until the demand is
// at most the target.
TunedWorkload tune_workload(const ReplayTrace& trace, uint64_t seed, const TuneOptions& options);

// Step 5: a seeded random permutation of the nodes. rank[i] is node i's
// position in the scheduling order (the simulator's "%04d-" name prefix).
std::vector<uint32_t> node_ranks(size_t num_nodes, uint64_t seed);

// ---- policies -------------------------------------------------------------------

struct ReplayPolicy {
  std::string name;          // random, dotprod, clustering, packing, bestfit, fgd, firstfit
  std::string score_plugin;  // "" for firstfit: no Score plugin
  DeviceSelection selection = DeviceSelection::Best;
};

// The paper's six policies and firstfit, in the paper's order.
const std::vector<ReplayPolicy>& replay_policies();
// The policy of that name; InputError listing the known names otherwise.
const ReplayPolicy& replay_policy(const std::string& name);

// The one-profile configuration of a policy: the default profile scoring
// every node, GpuShare appended to PreFilter and Filter, the Score list
// replaced by the policy's plugin at weight 1000 (and PreScore by it), the
// device selection, the seed and the typical tasks.
SchedulerConfig replay_scheduler_config(const ReplayPolicy& policy, uint64_t seed,
                                        const std::vector<TypicalTask>& typical);

// ---- running ----------------------------------------------------------------------

// The state after one pod.
struct ReplayEvent {
  int64_t arrived_units = 0;    // GPU units of every pod so far, placed or not
  int64_t allocated_units = 0;  // units held on the devices
  int64_t idle_units = 0;       // free units on the devices
  double frag_units = 0;        // sum over nodes of the node's fragmentation
  uint32_t placed = 0;          // pods placed so far
  uint32_t failed = 0;          // pods that found no node so far
};

struct ReplayProgress {
  std::string policy;
  uint64_t seed = 0;
  size_t done = 0;   // pods scheduled in this seed's run
  size_t total = 0;  // pods of this seed's run
};

// How a look-ahead window picks its next pod (ReplayOptions::lookahead_order;
// pick_from_window and sort_window in replay_runner.cpp). The first five
// peek at every pod of the window before each placement; the last four
// sort the window once by the pods' demands and peek at nothing.
enum class LookaheadOrder {
  Score,
  Growth,
  GrowthPerGpu,
  Fill,
  Constrained,
  Decreasing,
  DecreasingCpu,
  DecreasingGpuPods,
  BigSharesFirst
};
// "score", "growth", "growth-per-gpu", "fill", "constrained", "decreasing",
// "decreasing-cpu", "decreasing-gpu-pods", "big-shares-first"; InputError
// otherwise.
LookaheadOrder parse_lookahead_order(const std::string& text);
// Whether `order` sorts each window once (Decreasing, DecreasingCpu,
// DecreasingGpuPods, BigSharesFirst) rather than peeking.
bool lookahead_order_sorts(LookaheadOrder order);
// The order in which a sorting order places a window's pods: positions in
// `rows`, the window's pods in arrival order. Ties keep arrival order. An
// order that does not sort keeps arrival order. ReplayOptions::lookahead
// describes the keys.
std::vector<size_t> sort_window(const std::vector<const TracePod*>& rows, LookaheadOrder order);

struct ReplayOptions {
  std::string backend = "cpu";
  // Among nodes tied at the best total: First, the lowest node index, is
  // the simulator's (its ties go to the smallest name, a seeded random
  // permutation); Random is upstream's (docs/gpu-placement.md, "Ties").
  TieBreak tie_break = TieBreak::First;
  Batching batching = Batching::Exact;
  uint32_t batch_states = 1;  // Exact: cached evaluations kept (EngineOptions::batch_states)
  int threads = 0;  // CPU backend threads; results do not depend on it
  TuneOptions tune;
  size_t max_pods = 0;  // 0: all; else the first max_pods of the tuned workload
  // Look-ahead over the pending set (not the paper's; off by default). The
  // arriving pods are taken in consecutive windows of `lookahead`: the
  // method sees the pods of the current window and no others. Within a
  // window, every pod not yet placed is evaluated as things stand
  // (Engine::peek, nothing assumed); a pod that fits nowhere goes first
  // (it fails whenever it is tried, and changes nothing); otherwise the
  // pod that `lookahead_order` ranks first is placed, and the rest are
  // evaluated again:
  //  * Score: the best total score (FGD's score, relative to the pod's own
  //    nodes; a pod with one feasible node has total 0, as schedule
  //    reports it, so it goes last);
  //  * Growth: the least growth of the cluster's fragmentation, in units,
  //    measured with the trace's typical tasks on the node and devices the
  //    pod would take;
  //  * GrowthPerGpu: that growth per GPU unit the pod takes (a pod without
  //    GPUs counts as one GPU);
  //  * Fill: the pod whose placement shrinks fragmentation most, if any
  //    does; else the earliest;
  //  * Constrained: the fewest feasible nodes (most at risk of failing
  //    once the others are placed).
  // Ties go to the earliest arrival. The sorting orders evaluate nothing:
  // each window is sorted once, when it is full, and its pods are then
  // placed in that order (first-fit decreasing in spirit), FGD choosing
  // each one's node as usual:
  //  * Decreasing: the most GPU units first (a whole GPU counts 1000, a
  //    share its units); equal units keep arrival order;
  //  * DecreasingCpu: as Decreasing, then the most cpu among equal units;
  //  * DecreasingGpuPods: the pods with GPUs sorted as Decreasing among
  //    themselves; pods without GPUs keep their places in the window;
  //  * BigSharesFirst: shares above 500 units first, then whole GPUs, then
  //    the other shares, then pods without GPUs; each group as Decreasing.
  // A window as wide as the workload sorts the whole arrival set: that
  // knows every future arrival. A pod counts as arrived when it is placed
  // or fails. 0 or 1: arrival order, one pod at a time.
  size_t lookahead = 0;
  LookaheadOrder lookahead_order = LookaheadOrder::Score;
  // Retargeting (not the paper's; off by default): before every
  // `retarget_every`-th pod (the first included), FGD's typical tasks are
  // taken afresh from the pending pods, as the trace's are (popularity
  // 0.95): the next `retarget_horizon` pods in arrival order, the current
  // one first (0: all that remain). The engine is made anew with them and
  // the pods placed so far. The metrics still measure against the
  // trace's typical tasks. 0: the trace's typical tasks throughout. Only
  // FGD reads typical tasks; for the other policies a retarget only makes
  // the engine anew (which restarts firstfit's rotation).
  size_t retarget_every = 0;
  size_t retarget_horizon = 0;
  // Called every `progress_every` pods and at the end of a seed.
  std::function<void(const ReplayProgress&)> on_progress;
  size_t progress_every = 1000;
  // Checked after each pod: when set, the run stops (InterruptedError).
  const std::atomic<bool>* stop = nullptr;
};

// Thrown when ReplayOptions::stop is set during a run.
class ReplayInterrupted : public Error {
 public:
  using Error::Error;
};

struct SeedRun {
  uint64_t seed = 0;
  TunedWorkload workload;
  std::vector<ReplayEvent> events;    // one per pod, in order
  std::vector<size_t> event_pods;     // per event, its pod: an index into workload.order
  double schedule_seconds = 0;        // Engine::schedule calls only
  double wall_seconds = 0;            // the whole seed: setup, scheduling and metrics
  std::vector<std::string> warnings;  // distinct engine warnings, "(n pods)"
  // Why pods found no node: the FitError text and how many pods got it.
  std::map<std::string, size_t> failures;
};

// The typical tasks of the untuned trace (popularity 0.95).
std::vector<TypicalTask> replay_typical_tasks(const ReplayTrace& trace);

// The cluster's GPU state as the replay records it after each pod
// (ReplayEvent's units), measured once on `snap`: the devices' allocated and
// free units and the sum over nodes of each node's fragmentation against
// `typical` (GpuFragmentation's node_fragmentation). For other runs that
// want the replay's measure (bench/bench_gang_trace.cpp).
struct ReplayGpuState {
  int64_t capacity_units = 0;
  int64_t allocated_units = 0;
  int64_t idle_units = 0;
  double frag_units = 0;
};
ReplayGpuState replay_gpu_state(const Snapshot& snap, const std::vector<TypicalTask>& typical,
                                const DeviceModel& model = DeviceModel{});

// One policy, one seed. InputError when the policy's plugins are not
// available in this build (make_profile_plan's message).
SeedRun run_replay_seed(const ReplayTrace& trace, const std::vector<TypicalTask>& typical, const ReplayPolicy& policy,
                        uint64_t seed, const ReplayOptions& options);

// Throws the InputError run_replay_seed would for an unavailable plugin,
// without running anything.
void check_replay_policy(const ReplayPolicy& policy, const std::vector<TypicalTask>& typical);

// ---- bucketing and summaries --------------------------------------------------

// Per arrival % bucket 0..max_pct (index = %): the mean over the bucket's
// events, as merge_*_discrete.py computes it. An empty bucket takes the
// previous bucket's value, else the next one's (computed from non-empty
// buckets), else NaN.
struct BucketCurve {
  std::vector<double> alloc_pct;        // allocated / capacity x 100
  std::vector<double> frag_ratio_pct;   // frag / idle x 100 (0 when nothing is idle)
  std::vector<double> frag_amount_pct;  // frag / capacity x 100
  std::vector<double> placed;           // pods placed at the bucket's last event
};
BucketCurve bucket_seed_run(const SeedRun& run, int64_t capacity_units, int max_pct = 130);

struct PolicySummary {
  std::string policy;
  std::string error;  // not run: why (e.g. a plugin not in this build)
  std::vector<uint64_t> seeds;
  // Per bucket, over seeds: mean and sample SD of alloc %, means of the
  // others.
  std::vector<double> alloc_mean, alloc_sd, frag_ratio_mean, frag_amount_mean, placed_mean;
  double schedule_seconds = 0;  // all seeds
  double wall_seconds = 0;      // all seeds
  size_t pods = 0;              // scheduled, all seeds
  std::vector<std::string> warnings;
};
PolicySummary summarize_policy(const std::string& policy, const std::vector<SeedRun>& runs, int64_t capacity_units,
                               int max_pct = 130);

// ---- reports --------------------------------------------------------------------

struct ReplayReportHeader {
  std::string nodes_path, pods_path;
  size_t nodes = 0, pods = 0;
  int64_t gpus = 0;
  double inflation = 1.3;
  std::vector<uint64_t> seeds;
  size_t typical_tasks = 0;
  std::string backend;
  std::string tie_break = "first";  // said in the table when not the simulator's
};

// The table: per policy, one row per arrival point (alloc %, its seed SD,
// unallocated %, frag ratio %, frag amount %, pods placed), then the times.
std::string format_replay_table(const ReplayReportHeader& header, const std::vector<PolicySummary>& policies,
                                const std::vector<int>& arrival_points);
// Every bucket of every policy that ran, as CSV.
std::string format_replay_csv(const std::vector<PolicySummary>& policies);
// A gnuplot script drawing unallocated GPU % against arrival % (one line per
// policy, like the paper's Fig. 9a) from format_replay_csv's text, which it
// carries as a datablock, into a PNG on gnuplot's standard output. It names
// no file: nothing a user typed reaches gnuplot.
std::string replay_gnuplot_script(const std::vector<PolicySummary>& policies, const std::string& csv_text);

// "42-51" or "42,43,50" (or both, "1,5-7"): the seeds, in the order given.
std::vector<uint64_t> parse_seed_list(const std::string& text);
// "50,80,90,100,130": arrival points in 0..max_pct.
std::vector<int> parse_arrival_points(const std::string& text, int max_pct = 130);

// ---- the CLI (replay_cli.cpp) ---------------------------------------------------

struct ReplayCliOptions {
  std::string
      trace_dir;  // "": $BULKSCORE_TRACE_DIR, else ../shared/data/alibaba-gpu-v2023 (cwd, then the binary's repo)
  std::string trace = "default";
  std::string pods_csv;   // overrides --trace
  std::string nodes_csv;  // "": <trace_dir>/openb_node_list_gpu_node.csv
  std::string policies = "all";
  std::string seeds = "42-51";
  double inflation = 1.3;
  bool no_quirk = false;
  std::string backend = "cpu";
  std::string tie_break = "first";
  std::string batching = "exact";
  uint32_t batch_states = 1;
  int threads = 0;
  size_t max_pods = 0;
  size_t lookahead = 0;
  std::string lookahead_order = "score";
  size_t retarget_every = 0;
  size_t retarget_horizon = 0;
  std::string arrivals = "50,80,90,100,130";
  std::string output;  // table; "" stdout
  std::string csv;
  std::string plot;
  int verbosity = 0;
};
int replay_main(const ReplayCliOptions& options);

// The trace folder: `flag` when given, else $BULKSCORE_TRACE_DIR, else
// ../shared/data/alibaba-gpu-v2023 seen from the working directory, then
// from the folder above the binary's. InputError naming what was tried.
std::string find_trace_dir(const std::string& flag);

}  // namespace bulkscore
