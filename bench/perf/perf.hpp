// `bulkscore perf`: runs kube-scheduler scheduler_perf workload files
// (test/integration/scheduler_perf/**/performance-config.yaml) through the
// engine and reports SchedulingThroughput the way upstream does (host only).
//
// The format subset, the metric definitions and how the numbers compare with
// upstream's are documented in docs/perf.md. In short:
//  * Ops honoured: createNodes, createNamespaces, createPods, createPodSets,
//    barrier (a no-op: bulkscore schedules synchronously), sleep (skipped: no
//    time passes in bulkscore), startCollectingMetrics / stopCollectingMetrics.
//    The other ops upstream knows (churn, deletePods, createAny, ...) are listed
//    by name in the result as not honoured; none is skipped silently. An
//    opcode upstream does not know is an error, as upstream.
//  * Paths in the file (templates, schedulerConfigPath) are relative to the
//    directory of the file, as upstream runs each config from its own folder.
//  * Templates are Kubernetes YAML objects, optionally with the Go
//    text/template subset upstream's templates use ({{.Index}}, {{.Count}},
//    template params, AddInt/SubtractInt/MultiplyInt/DivideInt/Mod and the
//    Float variants). They become JSON and go through the one Kubernetes
//    object parser (host/input/k8s_json.hpp).
//  * Throughput: pods scheduled per 1-second wall-clock window of each measured
//    op, Average and Perc50/90/95/99 over the windows, as upstream computes them.
//
// Errors in the file are InputError naming the file, the place and the field.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "host/engine/batch_cache.hpp"
#include "host/input/model.hpp"

namespace bulkscore {

// Limits on what a workload may create. Counts come from a few bytes of the
// file (or a parameter) and are checked before anything is allocated; a count
// above these is an InputError naming the op and field. They are well above
// upstream's and bulkscore's own workloads (100,000 nodes, 30,000 pods).
constexpr int64_t kPerfMaxNodes = 1'000'000;     // per workload, all createNodes ops
constexpr int64_t kPerfMaxPods = 1'000'000;      // per workload, all createPods ops and pod sets
constexpr int64_t kPerfMaxNamespaces = 100'000;  // per createNamespaces op, and pod sets per op

// A workload parameter or template parameter value, typed as JSON types are
// (upstream unmarshals params into Go `any`: float64, string, bool).
struct PerfValue {
  enum class Kind { Number, String, Bool, Null, Other };
  Kind kind = Kind::Null;
  double number = 0;
  std::string text;  // String: the value; Other: a short description
  bool boolean = false;

  static PerfValue of_number(double v) {
    PerfValue p;
    p.kind = Kind::Number;
    p.number = v;
    return p;
  }
  static PerfValue of_string(std::string s) {
    PerfValue p;
    p.kind = Kind::String;
    p.text = std::move(s);
    return p;
  }
  static PerfValue of_bool(bool b) {
    PerfValue p;
    p.kind = Kind::Bool;
    p.boolean = b;
    return p;
  }
};
using PerfValueMap = std::map<std::string, PerfValue>;

enum class PerfOpKind {
  CreateNodes,
  CreateNamespaces,
  CreatePods,
  CreatePodSets,
  Barrier,
  Sleep,
  StartCollectingMetrics,
  StopCollectingMetrics,
  Unsupported,  // an upstream op bulkscore does not run (an unknown opcode is a parse error)
};

// One op of a workloadTemplate, as written (parameters not yet substituted).
// Fields not used by `kind` keep their defaults.
struct PerfOp {
  PerfOpKind kind = PerfOpKind::Unsupported;
  std::string opcode;  // verbatim
  std::string origin;  // "<file>: [1].workloadTemplate[2] (createPods)"

  // Counts: `count`, or the workload parameter named by `count_param` ("$x").
  int64_t count = 0;
  std::string count_param;
  std::string count_multiplier_param;  // createPods

  // createNodes. Template paths are resolved against the config's folder.
  std::optional<std::string> node_template_path;
  bool has_node_allocatable_strategy = false;
  StringMap node_allocatable;                 // resource -> quantity text
  bool csi_node_allocatable_ignored = false;  // csiNodeAllocatable / migratedPlugins present
  bool has_label_strategy = false;            // labelNodePrepareStrategy
  std::string label_key;
  std::vector<std::string> label_values;
  bool has_unique_label_strategy = false;  // uniqueNodeLabelStrategy
  std::string unique_label_key;
  PerfValueMap template_params;  // createNodes, createPods; "$x" strings resolved per workload

  // createNamespaces
  std::string prefix;
  bool has_namespace_template = false;

  // createPods (and the nested op of createPodSets)
  bool collect_metrics = false;
  bool skip_wait_to_completion = false;
  bool steady_state = false;
  std::string steady_state_param;
  std::string duration;  // sleep and steady state, Go duration text
  std::string duration_param;
  std::optional<std::string> namespace_name;
  std::optional<std::string> pod_template_path;
  bool has_volume_templates = false;  // persistentVolume(Claim)TemplatePath
  int64_t signature_batch_size = 0;   // 0: not given
  std::string signature_batch_size_param;

  // createPodSets
  std::string namespace_prefix;
  std::vector<PerfOp> pods_op;  // exactly one: the createPodsOp template

  // barrier, startCollectingMetrics
  std::vector<std::string> namespaces;
  StringMap label_selector;
  std::string stage_requirement;
  std::string name;  // startCollectingMetrics

  // Unsupported ops: the "$param" names they mention, so that those params do
  // not count as unused.
  std::vector<std::string> param_refs;
};

struct PerfWorkload {
  std::string name;
  PerfValueMap params;
  std::vector<std::string> labels;
  double threshold = 0;  // 0: none; a per-topic map is recorded but not applied
  bool threshold_by_topic = false;
  std::map<std::string, bool> feature_gates;
  std::string origin;
};

struct PerfTestCase {
  std::string name;
  std::map<std::string, bool> feature_gates;
  std::vector<PerfOp> ops;  // workloadTemplate
  std::vector<PerfWorkload> workloads;
  std::string scheduler_config_path;                     // resolved; "" = default configuration
  std::optional<std::string> default_pod_template_path;  // resolved
  std::vector<std::string> labels;
  std::vector<std::string> ignored_fields;  // e.g. metricsCollectorConfig: recorded, not used
  std::string origin;
};

struct PerfConfig {
  std::string path;
  std::string base_dir;  // relative paths in the file are resolved against it
  std::vector<PerfTestCase> test_cases;
};

// Parses and validates a performance-config.yaml (a list of test cases).
PerfConfig load_perf_config(const std::string& path);
PerfConfig parse_perf_config(const std::string& yaml_text, const std::string& origin, const std::string& base_dir);

struct PerfSelected {
  const PerfTestCase* test_case = nullptr;
  const PerfWorkload* workload = nullptr;
  std::string full_name() const { return test_case->name + "/" + workload->name; }
};

// Workloads whose "TestCase/Workload" name matches `name_filter` (comma-separated
// patterns; `*` and `?` wildcards; a bare test-case name selects all its
// workloads; "" selects all) and whose labels (test case's plus workload's)
// satisfy `label_filter` (upstream's syntax: comma-separated, "x" or "+x" must
// be present, "-x" must be absent; "" accepts all). Throws InputError when a
// name pattern matches nothing.
std::vector<PerfSelected> select_perf_workloads(const PerfConfig& config, const std::string& name_filter,
                                                const std::string& label_filter);

// ---- throughput ----

// Upstream's SchedulingThroughput summary over per-window samples.
struct PerfThroughput {
  std::vector<double> samples;  // pods/s per 1-second window, in time order
  double average = 0, perc50 = 0, perc90 = 0, perc95 = 0, perc99 = 0;
  // No full window elapsed: the single sample is the whole op's rate (upstream
  // would have reported no sample at all).
  bool whole_op_fallback = false;
};

// Summarizes samples as upstream does: ascending sort, PercN is the sample at
// index ceil(len*N/100)-1, Average the mean. Empty input gives zeros.
PerfThroughput summarize_throughput(std::vector<double> samples);

// Counts pods scheduled per fixed 1-second window starting at `start_ns`, with
// upstream's rules: a window with no newly scheduled pod is merged into the
// next one that has some, and the merged rate is recorded once per window; the
// trailing partial window is dropped. Times are steady-clock nanoseconds; the
// caller reports each pod when its scheduling attempt ends.
class ThroughputCollector {
 public:
  explicit ThroughputCollector(int64_t start_ns, int64_t window_ns = 1000000000);
  void pod_done(int64_t now_ns, bool scheduled);
  // Closes the collection at `end_ns` and summarizes.
  PerfThroughput finish(int64_t end_ns);
  uint64_t scheduled() const { return scheduled_; }

 private:
  void close_windows_before(int64_t now_ns);

  int64_t start_ns_;
  int64_t window_ns_;
  int64_t next_tick_ns_;
  uint64_t scheduled_ = 0;
  uint64_t at_last_sample_ = 0;
  uint32_t skipped_ = 0;
  std::vector<double> samples_;
};

// ---- running ----

struct PerfProgress {
  std::string workload;        // "TestCase/Workload"
  std::string phase;           // "nodes", "setup pods", "measured pods", "done"
  uint64_t done = 0;           // pods attempted in the current op
  uint64_t total = 0;          // pods of the current op
  double pods_per_second = 0;  // over the current op so far
  bool measured = false;
};

struct PerfRunOptions {
  std::string backend = "auto";  // auto | cpu | cuda
  // -1: as configured (bulkscore's default profile scores every node); 0:
  // upstream's adaptive default; 1..100: override every profile.
  int32_t percentage_of_nodes_to_score = -1;
  std::string batching = "exact";  // exact | off (host/engine/batch_cache.hpp)
  // Called after each pod and at phase changes; keep it cheap.
  std::function<void(const PerfProgress&)> on_progress;
  // Checked after each pod: when set, the run stops and returns what it has.
  const std::atomic<bool>* stop = nullptr;
};

// One measured op (a createPods with collectMetrics, or a start/stop pair).
struct PerfMeasurement {
  std::string name;  // upstream's "Name" label: "TestCase/Workload/<namespace or name>"
  uint32_t nodes = 0;
  uint64_t attempted = 0;
  uint64_t scheduled = 0;
  uint64_t unschedulable = 0;
  uint64_t errors = 0;
  double elapsed_seconds = 0;
  PerfThroughput throughput;
  double overall_pods_per_second = 0;  // scheduled / elapsed
  double ns_per_node_per_pod = 0;      // elapsed_ns / (attempted * nodes)
  double nodes_scored_percent = 0;     // from percentageOfNodesToScore, at most 100
  double threshold = 0;                // the workload's, 0 if none
  bool interrupted = false;
  BatchCounters batch;  // the batch cache's counts over the measured pods
};

struct PerfWorkloadResult {
  std::string test_case;
  std::string workload;
  std::string backend;
  std::string backend_note;
  std::string device;
  uint32_t nodes = 0;       // at the end of the workload
  uint64_t setup_pods = 0;  // attempted outside measurements
  uint64_t setup_unschedulable = 0;
  uint64_t gated_pods = 0;                    // pods with schedulingGates: created, never attempted
  int32_t percentage_of_nodes_to_score = 0;   // effective, first profile
  std::string batching;                       // exact | off
  std::map<std::string, bool> feature_gates;  // test case's merged with workload's
  std::vector<PerfMeasurement> measurements;
  std::vector<std::string> not_honoured;  // "churn (op 3)"
  std::vector<std::string> notes;         // everything else the reader should know
  double wall_seconds = 0;
  bool interrupted = false;
  std::string full_name() const { return test_case + "/" + workload; }
};

struct PerfRunResult {
  std::string config_path;
  std::vector<PerfWorkloadResult> workloads;
  bool interrupted = false;
};

PerfWorkloadResult run_perf_workload(const PerfConfig& config, const PerfTestCase& test_case,
                                     const PerfWorkload& workload, const PerfRunOptions& options);
PerfRunResult run_perf(const PerfConfig& config, const std::vector<PerfSelected>& selected,
                       const PerfRunOptions& options);

// The results file: upstream's {"version":"v1","dataItems":[...]} with our
// extra figures as further data items and labels, plus a "bulkscore" object
// with per-workload notes. Indented with two spaces, like upstream's.
std::string perf_results_json(const PerfRunResult& result);

// ---- comparing ----

struct PerfCompareRow {
  std::string file;      // file the row came from
  std::string workload;  // the Name label
  std::string backend;   // "" for files without our labels (upstream's)
  std::string nodes;     // "" when unknown
  double average = 0, perc50 = 0, perc90 = 0, perc99 = 0;
  std::optional<double> ns_per_node_per_pod;
};

// Reads the SchedulingThroughput items of a results file (ours or upstream's).
std::vector<PerfCompareRow> read_perf_results(const std::string& path);
std::vector<PerfCompareRow> parse_perf_results(const std::string& json_text, const std::string& origin);
// A fixed-width text table: workload, backend, nodes, pods/s avg/p50/p90/p99,
// ns/node/pod (and the file, when rows come from several files).
std::string format_perf_table(const std::vector<PerfCompareRow>& rows);
// Reads each file and formats one table over all of them.
std::string perf_compare(const std::vector<std::string>& paths);
std::vector<PerfCompareRow> perf_rows(const PerfRunResult& result);

// ---- helpers exposed for tests ----

// YAML (one document) to JSON text. Plain scalars follow the YAML 1.2 core
// schema (null, true/false, integers, floats become JSON null/bools/numbers);
// quoted and block scalars and !!str stay strings. Throws InputError naming
// `origin` and the line.
std::string yaml_to_json(const std::string& yaml_text, const std::string& origin);

// Expands the Go text/template subset upstream's templates use. Unsupported
// actions (if, range, pipes, ...) and unknown fields are InputError.
std::string render_perf_template(const std::string& text, const PerfValueMap& env, const std::string& origin);

// ---- the CLI (bench/perf/perf_cli.cpp) ----

struct PerfCliOptions {
  std::string config_path;      // performance-config.yaml (run mode)
  std::string workload_filter;  // see select_perf_workloads
  std::string label_filter;     // see select_perf_workloads
  std::string backend = "auto";
  int32_t percentage_of_nodes_to_score = -1;  // see PerfRunOptions
  std::string batching = "exact";             // see PerfRunOptions
  // Results file. "" = BenchmarkPerfScheduling_bulkscore_<backend>_<UTC time>.json
  // in the current folder.
  std::string output_path;
  // Compare mode (when not empty): results files to tabulate; nothing is run.
  std::vector<std::string> compare_files;
  bool list_only = false;  // print the selected workloads and exit
  int verbosity = 1;       // 0: errors and the summary; 1: progress; 2: per-op detail
};

// Runs `bulkscore perf`; progress to stderr, the summary table to stdout.
// Returns 0 ok, 2 bad input (InputError, or a backend that cannot be used),
// 1 other errors, 130 interrupted (Ctrl-C; the partial results are written).
int perf_main(const PerfCliOptions& options);

}  // namespace bulkscore
