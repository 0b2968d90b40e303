// The workload runner: builds each workload's cluster from its ops (nodes and
// pods from templates, prepare strategies, parameters), schedules its pods
// through the engine one by one and measures the measured ops.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <thread>
#include <type_traits>
#include <unordered_map>

#include "bench/perf/go_template.hpp"
#include "bench/perf/perf.hpp"
#include "bench/perf/text.hpp"
#include "bench/perf/yaml_json.hpp"
#include "host/common.hpp"
#include "host/engine/engine.hpp"
#include "host/input/config.hpp"
#include "host/input/k8s_json.hpp"
#include "host/input/quantity.hpp"
#include "host/input/quote.hpp"
#include "host/io/io.hpp"

namespace bulkscore {
namespace {

using namespace perf_detail;

const char* const kBuiltinNodeYaml =
    "apiVersion: v1\n"
    "kind: Node\n"
    "metadata:\n"
    "  generateName: {{.Prefix}}\n"
    "status:\n"
    "  capacity: {pods: \"110\", cpu: \"4\", memory: 32Gi}\n"
    "  allocatable: {pods: \"110\", cpu: \"4\", memory: 32Gi}\n"
    "  phase: Running\n"
    "  conditions: [{type: Ready, status: \"True\"}]\n";

const char* const kBuiltinPodYaml =
    "apiVersion: v1\n"
    "kind: Pod\n"
    "metadata:\n"
    "  generateName: pod-\n"
    "spec:\n"
    "  containers:\n"
    "  - name: pause\n"
    "    image: registry.k8s.io/pause:3.10.1\n"
    "    ports: [{containerPort: 80}]\n"
    "    resources:\n"
    "      limits: {cpu: 100m, memory: 500Mi}\n"
    "      requests: {cpu: 100m, memory: 500Mi}\n";

const char* const kPlaceholderName = "bulkscore-perf-placeholder";

// apiserver's generateName alphabet; suffixes here are sequential, not random,
// so that runs are reproducible.
std::string name_suffix(uint64_t n) {
  static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string s;
  for (int i = 0; i < 5 || n > 0; ++i) {
    s += alphabet[n % 27];
    n /= 27;
  }
  std::reverse(s.begin(), s.end());
  return s;
}

template <class T>
struct ParsedObject {
  T object;
  bool has_name = false;      // metadata.name was given
  std::string generate_name;  // metadata.generateName
  bool gated = false;         // pods: spec.schedulingGates is not empty
};

// Prepares a template's YAML tree for the object parser: the name (a
// placeholder when only generateName is given) and the kind.
template <class T>
ParsedObject<T> parse_object(const std::string& yaml_text, const char* kind, const std::string& origin) {
  YAML::Node doc = load_one_document(yaml_text, origin);
  if (!doc.IsMap()) throw InputError(origin + ": expected a " + std::string(kind) + " object, got " + describe(doc));
  ParsedObject<T> out;
  YAML::Node kind_node = doc["kind"];
  if (!kind_node.IsDefined() || kind_node.IsNull()) {
    doc["kind"] = kind;
  } else if (!kind_node.IsScalar() || kind_node.Scalar() != kind) {
    throw InputError(at_line(origin, kind_node) + ": kind: expected " + kind + ", got " + describe(kind_node));
  }
  if (!doc["apiVersion"].IsDefined()) doc["apiVersion"] = "v1";
  YAML::Node meta = doc["metadata"];
  if (!meta.IsDefined() || meta.IsNull()) {
    doc["metadata"] = YAML::Node(YAML::NodeType::Map);
    meta = doc["metadata"];
  }
  if (!meta.IsMap()) throw InputError(at_line(origin, meta) + ": metadata: expected a mapping");
  const YAML::Node name = meta["name"];
  if (name.IsDefined() && name.IsScalar() && !name.Scalar().empty()) {
    out.has_name = true;
  } else {
    meta["name"] = kPlaceholderName;
  }
  const YAML::Node gen = meta["generateName"];
  if (gen.IsDefined() && gen.IsScalar()) out.generate_name = gen.Scalar();
  const YAML::Node& cdoc = doc;  // const lookups never add keys
  const YAML::Node spec = cdoc["spec"];
  if (spec.IsDefined() && spec.IsMap()) {
    const YAML::Node gates = spec["schedulingGates"];
    out.gated = gates.IsDefined() && gates.IsSequence() && gates.size() > 0;
  }
  std::string json;
  emit_json(doc, json, origin, 0);
  if constexpr (std::is_same_v<T, Node>) {
    std::vector<Node> nodes = parse_nodes_json(json, origin);
    if (nodes.size() != 1) throw InputError(origin + ": expected one Node");
    out.object = std::move(nodes[0]);
  } else {
    std::vector<Pod> pods = parse_pods_json(json, origin);
    if (pods.size() != 1) throw InputError(origin + ": expected one Pod");
    out.object = std::move(pods[0]);
  }
  return out;
}

// A template file, rendered per object when it holds {{ }} actions; parsed
// objects are cached by rendered text.
template <class T>
class ObjectTemplate {
 public:
  ObjectTemplate(std::string text, std::string origin, const char* kind)
      : text_(std::move(text)),
        origin_(std::move(origin)),
        kind_(kind),
        templated_(text_.find("{{") != std::string::npos) {}

  const ParsedObject<T>& get(const PerfValueMap& env) {
    if (!templated_) {
      if (!static_) static_ = std::make_unique<ParsedObject<T>>(parse_object<T>(text_, kind_, origin_));
      return *static_;
    }
    std::string rendered = render_perf_template(text_, env, origin_);
    auto it = cache_.find(rendered);
    if (it != cache_.end()) return it->second;
    if (cache_.size() >= 4096) cache_.clear();
    ParsedObject<T> parsed = parse_object<T>(rendered, kind_, origin_);
    return cache_.emplace(std::move(rendered), std::move(parsed)).first->second;
  }

  bool templated() const { return templated_; }

 private:
  std::string text_;
  std::string origin_;
  const char* kind_;
  bool templated_;
  std::unique_ptr<ParsedObject<T>> static_;
  std::unordered_map<std::string, ParsedObject<T>> cache_;
};

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string read_first_line_value(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (starts_with(line, key)) {
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string v = line.substr(colon + 1);
      const size_t b = v.find_first_not_of(" \t");
      return b == std::string::npos ? "" : v.substr(b);
    }
  }
  return "";
}

std::string describe_device(const std::string& backend) {
  if (backend == "cuda") {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
      std::string model = read_first_line_value((e.path() / "information").string(), "Model");
      if (!model.empty()) return model;
    }
    return "CUDA device";
  }
  std::string model = read_first_line_value("/proc/cpuinfo", "model name");
  if (model.empty()) model = "CPU";
  const unsigned threads = std::thread::hardware_concurrency();
  if (threads) model += " (" + std::to_string(threads) + " hardware threads)";
  return model;
}

// Gates whose requested value is what bulkscore does anyway.
bool gate_matches_bulkscore(const std::string& gate, bool value) {
  // bulkscore runs a full Filter/Score cycle per pod: no batch cache.
  if (gate == "OpportunisticBatching") return !value;
  return false;
}

bool labels_match(const StringMap& labels, const StringMap& selector) {
  for (const auto& [k, v] : selector) {
    const auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  return true;
}

// ============================================================================
// The workload runner
// ============================================================================

class WorkloadRunner {
 public:
  WorkloadRunner(const PerfTestCase& tc, const PerfWorkload& w, const PerfRunOptions& opt)
      : tc_(tc), w_(w), opt_(opt) {}

  PerfWorkloadResult run() {
    const int64_t wall_start = steady_ns();
    res_.test_case = tc_.name;
    res_.workload = w_.name;
    res_.feature_gates = tc_.feature_gates;
    for (const auto& [g, v] : w_.feature_gates) res_.feature_gates[g] = v;
    for (const auto& f : tc_.ignored_fields)
      res_.notes.push_back(f + " is ignored: bulkscore reports SchedulingThroughput only");
    if (w_.threshold_by_topic) res_.notes.push_back("threshold given per topic: not applied");
    for (const auto& [g, v] : res_.feature_gates)
      if (!gate_matches_bulkscore(g, v))
        res_.notes.push_back("feature gate " + name_for_message(g) + "=" + (v ? "true" : "false") +
                             " is recorded but not modelled by bulkscore");

    std::vector<PerfOp> ops = unroll_and_patch();

    SchedulerConfig cfg = tc_.scheduler_config_path.empty() ? default_scheduler_config()
                                                            : load_scheduler_config(tc_.scheduler_config_path);
    if (opt_.percentage_of_nodes_to_score >= 0) {
      if (opt_.percentage_of_nodes_to_score > 100)
        throw InputError("percentageOfNodesToScore override must be in 0..100, got " +
                         std::to_string(opt_.percentage_of_nodes_to_score));
      for (auto& p : cfg.profiles) p.percentage_of_nodes_to_score = opt_.percentage_of_nodes_to_score;
    }
    profile_ = cfg.profiles.front();
    res_.percentage_of_nodes_to_score = profile_.percentage_of_nodes_to_score;
    EngineOptions eo;
    eo.backend = opt_.backend;
    eo.batching = parse_batching(opt_.batching);
    res_.batching = opt_.batching;
    engine_ = std::make_unique<Engine>(std::move(cfg), eo);
    res_.backend = engine_->backend_name();
    res_.backend_note = engine_->backend_note();
    res_.device = describe_device(res_.backend);
    progress_.workload = name_for_message(res_.full_name());  // shown on the terminal

    // Bound pods are kept only when a later createNodes will rebuild the snapshot.
    last_create_nodes_ = -1;
    for (size_t i = 0; i < ops.size(); ++i)
      if (ops[i].kind == PerfOpKind::CreateNodes) last_create_nodes_ = static_cast<int64_t>(i);

    for (size_t i = 0; i < ops.size() && !res_.interrupted; ++i) run_op(ops[i], i);

    if (active_ && !res_.interrupted)
      res_.notes.push_back("startCollectingMetrics " + quote_for_message(active_->name) +
                           " was never stopped: no result for it (as upstream)");
    if (active_ && res_.interrupted) finish_measurement(*active_, true);
    res_.nodes = static_cast<uint32_t>(cluster_.nodes.size());
    res_.wall_seconds = static_cast<double>(steady_ns() - wall_start) / 1e9;
    progress_.phase = "done";
    if (opt_.on_progress) opt_.on_progress(progress_);
    return std::move(res_);
  }

 private:
  struct Active {
    std::string name;
    std::set<std::string> namespaces;
    StringMap selector;
    ThroughputCollector collector{0};
    int64_t active_ns = 0;  // scheduling time accumulated while collecting
    uint64_t attempted = 0, scheduled = 0, unschedulable = 0, errors = 0;
    BatchCounters batch_start;  // the engine's counters when collecting began
  };

  // ---- parameters (upstream's patchParams) ----

  const PerfValue& param(const std::string& ref, const PerfOp& op, const char* field) {
    const std::string key = ref.substr(1);
    used_params_.insert(key);
    const auto it = w_.params.find(key);
    if (it == w_.params.end())
      throw InputError(w_.origin + ": parameter " + name_for_message(key) + " is undefined (used by " + op.origin +
                       "." + field + ")");
    return it->second;
  }

  // A parameter used as an int: upstream's params.get, int(float64) of the
  // JSON number (truncation), which must fit Go's int.
  int64_t int_param(const std::string& ref, const PerfOp& op, const char* field) {
    const PerfValue& v = param(ref, op, field);
    const std::string used_by = " (used by " + op.origin + "." + field + ")";
    if (v.kind != PerfValue::Kind::Number)
      throw InputError(w_.origin + ": parameter " + name_for_message(ref.substr(1)) + " must be a number" + used_by);
    const std::optional<int64_t> i = go_int_of_float(v.number);
    if (!i)
      throw InputError(w_.origin + ": parameter " + name_for_message(ref.substr(1)) + " = " +
                       go_float_string(v.number) + " does not fit an integer" + used_by);
    return *i;
  }

  // Counts are checked here, after parameters and before any op runs, so
  // that nothing is allocated for a count that is refused.
  void check_count_limit(const PerfOp& op, int64_t limit, const char* what) const {
    if (op.count > limit)
      throw InputError(op.origin + ": count resolves to " + std::to_string(op.count) + " " + what +
                       "; bulkscore's limit is " + std::to_string(limit));
  }

  void patch(PerfOp& op) {
    if (!op.count_param.empty()) op.count = int_param(op.count_param, op, "countParam");
    if (!op.count_multiplier_param.empty()) {
      const int64_t multiplier = int_param(op.count_multiplier_param, op, "countMultiplierParam");
      int64_t product = 0;
      if (__builtin_mul_overflow(op.count, multiplier, &product))
        throw InputError(op.origin + ": count " + std::to_string(op.count) + " x countMultiplierParam " +
                         std::to_string(multiplier) + " overflows a 64-bit integer");
      op.count = product;
    }
    if (!op.signature_batch_size_param.empty()) {
      op.signature_batch_size = int_param(op.signature_batch_size_param, op, "signatureBatchSizeParam");
      if (op.signature_batch_size < 0)
        throw InputError(op.origin + ": signatureBatchSize resolves to " + std::to_string(op.signature_batch_size) +
                         "; must not be negative");
    }
    if (!op.duration_param.empty()) {
      const PerfValue& v = param(op.duration_param, op, "durationParam");
      if (v.kind != PerfValue::Kind::String)
        throw InputError(w_.origin + ": parameter " + name_for_message(op.duration_param.substr(1)) +
                         " must be a duration string");
      op.duration = v.text;
    }
    if (!op.steady_state_param.empty()) {
      const PerfValue& v = param(op.steady_state_param, op, "steadyStateParam");
      if (v.kind != PerfValue::Kind::Bool)
        throw InputError(w_.origin + ": parameter " + name_for_message(op.steady_state_param.substr(1)) +
                         " must be true or false");
      op.steady_state = v.boolean;
    }
    for (auto& [k, v] : op.template_params) {
      if (v.kind == PerfValue::Kind::String && starts_with(v.text, "$")) v = param(v.text, op, "templateParams");
    }
    for (const auto& r : op.param_refs) used_params_.insert(r);
    if (op.count < 0)
      throw InputError(op.origin + ": count resolves to " + std::to_string(op.count) + "; must not be negative");
    switch (op.kind) {
      case PerfOpKind::CreateNodes:
        check_count_limit(op, kPerfMaxNodes, "nodes");
        break;
      case PerfOpKind::CreatePods:
        check_count_limit(op, kPerfMaxPods, "pods");
        break;
      case PerfOpKind::CreateNamespaces:
        check_count_limit(op, kPerfMaxNamespaces, "namespaces");
        break;
      case PerfOpKind::CreatePodSets:
        check_count_limit(op, kPerfMaxNamespaces, "pod sets");
        break;
      default:
        break;
    }
  }

  std::vector<PerfOp> unroll_and_patch() {
    std::vector<PerfOp> out;
    int64_t nodes = 0, pods = 0;  // both bounded per op: their sums cannot overflow
    for (const PerfOp& o : tc_.ops) {
      PerfOp op = o;
      patch(op);
      if (op.kind == PerfOpKind::CreatePodSets) {
        PerfOp inner = op.pods_op[0];
        patch(inner);  // the same for every set (its parameters count as used even without sets)
        if (op.count > 0 && inner.count > kPerfMaxPods / op.count)
          throw InputError(op.origin + ": " + std::to_string(op.count) + " pod sets of " + std::to_string(inner.count) +
                           " pods exceed bulkscore's limit of " + std::to_string(kPerfMaxPods) + " pods");
        pods += op.count * inner.count;
        for (int64_t i = 0; i < op.count; ++i) {
          out.push_back(inner);
          out.back().namespace_name = op.namespace_prefix + "-" + std::to_string(i);
        }
      } else {
        if (op.kind == PerfOpKind::CreateNodes) nodes += op.count;
        if (op.kind == PerfOpKind::CreatePods) pods += op.count;
        out.push_back(std::move(op));
      }
      if (nodes > kPerfMaxNodes || pods > kPerfMaxPods)
        throw InputError(w_.origin + ": the workload creates " + std::to_string(nodes) + " nodes and " +
                         std::to_string(pods) + " pods (up to " + o.origin + "); bulkscore's limits are " +
                         std::to_string(kPerfMaxNodes) + " nodes and " + std::to_string(kPerfMaxPods) +
                         " pods per workload");
    }
    std::vector<std::string> unused;
    for (const auto& [k, v] : w_.params)
      if (!used_params_.count(k)) unused.push_back(k);
    if (!unused.empty()) {
      std::string list;
      for (const auto& u : unused) list += (list.empty() ? "" : " ") + name_for_message(u);
      throw InputError(w_.origin + ": the parameters [" + list + "] are defined but unused; check for typos");
    }
    return out;
  }

  // ---- ops ----

  void run_op(const PerfOp& op, size_t index) {
    const std::string tag = op.opcode + " (op " + std::to_string(index) + ")";
    switch (op.kind) {
      case PerfOpKind::CreateNodes:
        create_nodes(op, index);
        break;
      case PerfOpKind::CreateNamespaces:
        for (int64_t i = 0; i < op.count; ++i) namespaces_.insert(op.prefix + "-" + std::to_string(i));
        if (op.has_namespace_template)
          add_note_once(tag + ": namespaceTemplatePath ignored: bulkscore does not model namespace labels");
        break;
      case PerfOpKind::CreatePods:
        if (op.steady_state) {
          res_.not_honoured.push_back("createPods with steadyState (op " + std::to_string(index) + ")");
          add_note_once("createPods steadyState needs pod deletion, which bulkscore does not model: op skipped");
          break;
        }
        create_pods(op, index);
        break;
      case PerfOpKind::Barrier:
        break;  // every pod was attempted synchronously by its createPods op
      case PerfOpKind::Sleep:
        res_.notes.push_back(tag + ": sleep " + (op.duration.empty() ? "0s" : name_for_message(op.duration)) +
                             " skipped: no time passes in bulkscore");
        break;
      case PerfOpKind::StartCollectingMetrics: {
        if (active_)
          throw InputError(op.origin + ": metrics collection is overlapping (a collection is already running)");
        active_ = std::make_unique<Active>();
        active_->batch_start = engine_->batch_counters();
        active_->name = op.name;
        active_->namespaces.insert(op.namespaces.begin(), op.namespaces.end());
        active_->selector = op.label_selector;
        break;
      }
      case PerfOpKind::StopCollectingMetrics:
        if (!active_) throw InputError(op.origin + ": missing startCollectingMetrics operation before stopping");
        finish_measurement(*active_, false);
        active_.reset();
        break;
      case PerfOpKind::CreatePodSets:  // unrolled before running
      case PerfOpKind::Unsupported:    // an upstream op bulkscore does not run (unknown ones are parse errors)
        res_.not_honoured.push_back(tag);
        res_.notes.push_back(tag + ": not supported by bulkscore; not run");
        break;
    }
  }

  void add_note_once(const std::string& note) {
    if (std::find(res_.notes.begin(), res_.notes.end(), note) == res_.notes.end()) res_.notes.push_back(note);
  }

  void create_nodes(const PerfOp& op, size_t index) {
    progress_.phase = "nodes";
    progress_.done = 0;
    progress_.total = static_cast<uint64_t>(op.count);
    progress_.measured = false;
    if (opt_.on_progress) opt_.on_progress(progress_);
    std::string text, origin;
    PerfValueMap env = op.template_params;
    if (op.node_template_path) {
      text = read_file(*op.node_template_path);
      origin = *op.node_template_path;
    } else {
      text = kBuiltinNodeYaml;
      origin = "built-in node (op " + std::to_string(index) + ")";
      env["Prefix"] = PerfValue::of_string("node-" + std::to_string(index) + "-");
    }
    ObjectTemplate<Node> tmpl(text, origin, "Node");
    const int64_t n = op.count;  // bounded by patch()
    if (op.has_node_allocatable_strategy && op.csi_node_allocatable_ignored)
      add_note_once(
          "nodeAllocatableStrategy: csiNodeAllocatable/migratedPlugins ignored (bulkscore has no volume plugins)");
    const int strategies =
        int(op.has_node_allocatable_strategy) + int(op.has_label_strategy) + int(op.has_unique_label_strategy);
    if (strategies > 1)
      res_.notes.push_back("createNodes (op " + std::to_string(index) +
                           "): several prepare strategies; only the first of nodeAllocatable, labelNodePrepare, "
                           "uniqueNodeLabel is applied, as upstream does");
    std::map<std::string, int64_t> allocatable;
    for (const auto& [r, q] : op.node_allocatable) allocatable[r] = parse_resource_quantity(r, q);

    cluster_.nodes.reserve(cluster_.nodes.size() + static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      env["Index"] = PerfValue::of_number(static_cast<double>(i));
      env["Count"] = PerfValue::of_number(static_cast<double>(n));
      const ParsedObject<Node>& parsed = tmpl.get(env);
      Node node = parsed.object;
      if (!parsed.has_name) node.name = parsed.generate_name + name_suffix(node_seq_++);
      if (!node_names_.insert(node.name).second)
        throw InputError(origin + ": node name " + quote_for_message(node.name) + " is used twice (createNodes op " +
                         std::to_string(index) + ", node " + std::to_string(i) +
                         "); use generateName or {{.Index}} in the name");
      // Nodes are created with the usual hostname label, as upstream's preparer does.
      node.labels["kubernetes.io/hostname"] = node.name;
      if (op.has_node_allocatable_strategy) {
        for (const auto& [r, v] : allocatable) node.allocatable[r] = v;
      } else if (op.has_label_strategy) {
        node.labels[op.label_key] = op.label_values[static_cast<size_t>(i) % op.label_values.size()];
      } else if (op.has_unique_label_strategy) {
        char buf[48];
        // 24 characters and at most 16 hex digits: never truncated.
        static_cast<void>(std::snprintf(buf, sizeof buf, "00000000-0000-4000-8000-%012" PRIx64, unique_label_seq_++));
        node.labels[op.unique_label_key] = buf;
      }
      cluster_.nodes.push_back(std::move(node));
    }
    snapshot_stale_ = true;
  }

  Pod make_pod(ObjectTemplate<Pod>& tmpl, const std::string& origin, PerfValueMap& env, int64_t i, int64_t n,
               const std::string& ns, const PerfOp& op, bool& gated) {
    env["Index"] = PerfValue::of_number(static_cast<double>(i));
    env["Count"] = PerfValue::of_number(static_cast<double>(n));
    const ParsedObject<Pod>& parsed = tmpl.get(env);
    gated = parsed.gated;
    Pod pod = parsed.object;
    pod.namespace_name = ns;
    if (!parsed.has_name) {
      pod.name = parsed.generate_name + name_suffix(pod_seq_++);
    } else if (!named_pods_.insert(pod.key()).second) {
      throw InputError(origin + ": pod name " + quote_for_message(pod.key()) + " is used twice (pod " +
                       std::to_string(i) + "); use generateName or {{.Index}} in the name");
    }
    pod.node_name.clear();
    if (op.signature_batch_size > 0)
      pod.labels["signature"] = "signature-label-" + std::to_string(i / op.signature_batch_size);
    return pod;
  }

  void create_pods(const PerfOp& op, size_t index) {
    const std::string ns = op.namespace_name ? *op.namespace_name : "namespace-" + std::to_string(index);
    namespaces_.insert(ns);
    std::optional<std::string> path = op.pod_template_path ? op.pod_template_path : tc_.default_pod_template_path;
    std::string text, origin;
    if (path) {
      text = read_file(*path);
      origin = *path;
    } else {
      text = kBuiltinPodYaml;
      origin = "built-in pod";
    }
    if (op.has_volume_templates)
      add_note_once(
          "createPods: persistentVolume(Claim)TemplatePath ignored: bulkscore has no volume plugins; pods are "
          "scheduled without volumes");

    const int64_t n = op.count;  // bounded by patch()
    progress_.phase = "preparing pods";
    progress_.done = 0;
    progress_.total = static_cast<uint64_t>(n);
    progress_.measured = op.collect_metrics;
    progress_.pods_per_second = 0;
    if (opt_.on_progress) opt_.on_progress(progress_);

    ObjectTemplate<Pod> tmpl(text, origin, "Pod");
    PerfValueMap env = op.template_params;
    std::vector<Pod> pods;
    pods.reserve(static_cast<size_t>(n));
    uint64_t gated = 0;
    for (int64_t i = 0; i < n; ++i) {
      bool is_gated = false;
      Pod pod = make_pod(tmpl, origin, env, i, n, ns, op, is_gated);
      // A pod with scheduling gates never leaves the queue's PreEnqueue
      // check, upstream as here: it stays pending and is not attempted.
      if (is_gated)
        ++gated;
      else
        pods.push_back(std::move(pod));
    }
    if (gated) {
      res_.gated_pods += gated;
      res_.notes.push_back("createPods (op " + std::to_string(index) + "): " + std::to_string(gated) +
                           " pods have schedulingGates: left pending, not attempted (as upstream)");
    }
    const size_t to_schedule = pods.size();

    if (snapshot_stale_) {
      engine_->load(cluster_);
      snapshot_stale_ = false;
    }
    const bool keep_bound = last_create_nodes_ > static_cast<int64_t>(index);

    std::unique_ptr<Active> own;
    if (op.collect_metrics) {
      if (active_)
        throw InputError(op.origin + ": metrics collection is overlapping (a startCollectingMetrics is running)");
      own = std::make_unique<Active>();
      own->batch_start = engine_->batch_counters();
      own->name = ns;
      own->namespaces.insert(ns);
    }
    Active* m = own ? own.get() : active_.get();

    progress_.phase = op.collect_metrics ? "measured pods" : (m ? "pods (collecting)" : "setup pods");
    const int64_t loop_start = steady_ns();
    const int64_t base = m ? m->active_ns : 0;
    const std::atomic<bool>* stop = opt_.stop;
    progress_.total = static_cast<uint64_t>(to_schedule);
    for (size_t i = 0; i < to_schedule; ++i) {
      if (stop && stop->load(std::memory_order_relaxed)) {
        res_.interrupted = true;
        break;
      }
      const ScheduleResult r = engine_->schedule(pods[i]);
      const int64_t now = steady_ns();
      const bool placed = r.node >= 0;
      const bool counted = m && m->namespaces.count(ns) && labels_match(pods[i].labels, m->selector);
      if (counted) {
        ++m->attempted;
        if (placed)
          ++m->scheduled;
        else if (r.code == Code::Error)
          ++m->errors;
        else
          ++m->unschedulable;
        m->collector.pod_done(base + (now - loop_start), placed);
      } else {
        ++res_.setup_pods;
        if (!placed) ++res_.setup_unschedulable;
      }
      if (placed && keep_bound) {
        Pod& p = pods[i];
        p.node_name = r.node_name;
        cluster_.running_pods.push_back(std::move(p));
      }
      progress_.done = static_cast<uint64_t>(i) + 1;
      progress_.pods_per_second =
          static_cast<double>(i + 1) * 1e9 / static_cast<double>(std::max<int64_t>(1, now - loop_start));
      if (opt_.on_progress) opt_.on_progress(progress_);
    }
    if (m) m->active_ns = base + (steady_ns() - loop_start);
    if (own) finish_measurement(*own, res_.interrupted);
  }

  void finish_measurement(Active& a, bool interrupted) {
    PerfMeasurement pm;
    pm.name = res_.full_name() + "/" + a.name;
    pm.nodes = engine_->snapshot().num_nodes();
    pm.attempted = a.attempted;
    pm.scheduled = a.scheduled;
    pm.unschedulable = a.unschedulable;
    pm.errors = a.errors;
    pm.elapsed_seconds = static_cast<double>(a.active_ns) / 1e9;
    pm.throughput = a.collector.finish(a.active_ns);
    pm.overall_pods_per_second =
        a.active_ns > 0 ? static_cast<double>(a.scheduled) * 1e9 / static_cast<double>(a.active_ns) : 0;
    const double work = static_cast<double>(a.attempted) * static_cast<double>(pm.nodes);
    pm.ns_per_node_per_pod = work > 0 ? static_cast<double>(a.active_ns) / work : 0;
    if (pm.nodes > 0) {
      const uint32_t k =
          num_feasible_nodes_to_find(profile_.percentage_of_nodes_to_score, pm.nodes, !profile_.score.empty());
      pm.nodes_scored_percent = std::min(100.0, 100.0 * k / pm.nodes);
    }
    pm.threshold = w_.threshold_by_topic ? 0 : w_.threshold;
    pm.interrupted = interrupted;
    pm.batch = engine_->batch_counters().since(a.batch_start);
    if (pm.throughput.whole_op_fallback)
      add_note_once(name_for_message(pm.name) +
                    ": the measured op took less than one 1-second window; SchedulingThroughput is its overall rate");
    if (pm.unschedulable + pm.errors > 0)
      res_.notes.push_back(name_for_message(pm.name) + ": " + std::to_string(pm.unschedulable + pm.errors) +
                           " measured pods could not be placed (one attempt each; upstream would retry them)");
    res_.measurements.push_back(std::move(pm));
  }

  const PerfTestCase& tc_;
  const PerfWorkload& w_;
  const PerfRunOptions& opt_;
  PerfWorkloadResult res_;
  PerfProgress progress_;
  std::set<std::string> used_params_;
  ProfileConfig profile_;
  std::unique_ptr<Engine> engine_;
  Cluster cluster_;
  bool snapshot_stale_ = true;
  int64_t last_create_nodes_ = -1;
  std::set<std::string> namespaces_;
  std::set<std::string> node_names_;
  std::set<std::string> named_pods_;  // pods whose template fixes metadata.name
  uint64_t node_seq_ = 0;
  uint64_t pod_seq_ = 0;
  uint64_t unique_label_seq_ = 0;
  std::unique_ptr<Active> active_;
};

}  // namespace

// The config is not read: its test cases hold everything a run needs.
PerfWorkloadResult run_perf_workload(const PerfConfig& /*config*/, const PerfTestCase& test_case,
                                     const PerfWorkload& workload, const PerfRunOptions& options) {
  WorkloadRunner runner(test_case, workload, options);
  return runner.run();
}

PerfRunResult run_perf(const PerfConfig& config, const std::vector<PerfSelected>& selected,
                       const PerfRunOptions& options) {
  PerfRunResult out;
  out.config_path = config.path;
  for (const auto& s : selected) {
    out.workloads.push_back(run_perf_workload(config, *s.test_case, *s.workload, options));
    if (out.workloads.back().interrupted) {
      out.interrupted = true;
      break;
    }
  }
  return out;
}

}  // namespace bulkscore
