// Reading performance-config.yaml: test cases, workloads and ops, decoded
// strictly and case-insensitively as upstream's encoding/json does, and
// selecting workloads by name pattern and label filter.
#include <fnmatch.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>

#include "bench/perf/perf.hpp"
#include "bench/perf/text.hpp"
#include "bench/perf/yaml_json.hpp"
#include "host/common.hpp"
#include "host/input/quantity.hpp"
#include "host/input/quote.hpp"
#include "host/input/yaml_reader.hpp"
#include "host/io/io.hpp"

namespace bulkscore {
namespace {

using namespace perf_detail;

struct ParseCtx {
  std::string file;
  std::string base_dir;
};

[[noreturn]] void fail_at(const ParseCtx& ctx, const YAML::Node& n, const std::string& where, const std::string& msg) {
  throw InputError(at_line(ctx.file, n) + ": " + where + ": " + msg);
}

// A mapping whose fields are looked up case-insensitively (as Go's
// encoding/json matches struct fields) and which rejects unknown fields (as
// upstream's strict decoding does).
class YamlObject {
 public:
  YamlObject(const ParseCtx& ctx, const YAML::Node& node, std::string where)
      : ctx_(ctx), node_(node), where_(std::move(where)) {
    if (node.IsNull()) return;
    if (!node.IsMap()) fail_at(ctx, node, where_, "expected a mapping, got " + describe(node));
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!it->first.IsScalar()) fail_at(ctx, it->first, where_, "a field name must be a scalar");
      entries_.emplace_back(it->first.Scalar(), it->second);
    }
    used_.assign(entries_.size(), false);
  }

  // The field's value, or an undefined node when absent.
  YAML::Node take(std::string_view field) {
    const std::string want = lower(field);
    for (size_t i = 0; i < entries_.size(); ++i) {
      if (lower(entries_[i].first) == want) {
        used_[i] = true;
        return entries_[i].second;
      }
    }
    return YAML::Node(YAML::NodeType::Undefined);
  }

  bool has(std::string_view field) const {
    const std::string want = lower(field);
    for (const auto& e : entries_)
      if (lower(e.first) == want) return true;
    return false;
  }

  void reject_unknown() const {
    for (size_t i = 0; i < entries_.size(); ++i)
      if (!used_[i]) fail_at(ctx_, entries_[i].second, where_, "unknown field " + quote_for_message(entries_[i].first));
  }

  const std::string& where() const { return where_; }
  std::string field(std::string_view f) const { return where_ + "." + std::string(f); }
  const YAML::Node& node() const { return node_; }
  const std::vector<std::pair<std::string, YAML::Node>>& entries() const { return entries_; }

 private:
  const ParseCtx& ctx_;
  YAML::Node node_;
  std::string where_;
  std::vector<std::pair<std::string, YAML::Node>> entries_;
  std::vector<bool> used_;
};

bool present(const YAML::Node& n) { return n.IsDefined() && !n.IsNull(); }

// A map key from the input as a child of `where` in messages.
std::string child_path(std::string where, std::string_view key) {
  append_path_key(where, key);
  return where;
}

std::string read_string(const ParseCtx& ctx, const YAML::Node& n, const std::string& where) {
  if (!present(n)) return "";
  if (!n.IsScalar()) fail_at(ctx, n, where, "expected a string, got " + describe(n));
  return n.Scalar();
}

int64_t read_int(const ParseCtx& ctx, const YAML::Node& n, const std::string& where) {
  if (!present(n)) return 0;
  if (n.IsScalar() && is_plain(n) && classify_plain(n.Scalar()) == PlainKind::Int)
    if (const std::optional<int64_t> v = yaml_int_value(n.Scalar())) return *v;
  fail_at(ctx, n, where, "expected an integer, got " + describe(n));
}

double read_number(const ParseCtx& ctx, const YAML::Node& n, const std::string& where) {
  if (!present(n)) return 0;
  if (n.IsScalar() && is_plain(n)) {
    const PlainKind k = classify_plain(n.Scalar());
    if (k == PlainKind::Int) return std::strtod(int_json_text(n.Scalar()).c_str(), nullptr);
    if (k == PlainKind::Float) {
      const std::string t = float_json_text(n.Scalar());
      if (!t.empty()) return std::strtod(t.c_str(), nullptr);
    }
  }
  fail_at(ctx, n, where, "expected a number, got " + describe(n));
}

bool read_bool(const ParseCtx& ctx, const YAML::Node& n, const std::string& where) {
  if (!present(n)) return false;
  if (n.IsScalar() && is_plain(n) && classify_plain(n.Scalar()) == PlainKind::Bool)
    return resolve_yaml_plain(n.Scalar()).boolean;
  fail_at(ctx, n, where, "expected true or false, got " + describe(n));
}

std::vector<std::string> read_string_list(const ParseCtx& ctx, const YAML::Node& n, const std::string& where) {
  std::vector<std::string> out;
  if (!present(n)) return out;
  if (!n.IsSequence()) fail_at(ctx, n, where, "expected a list, got " + describe(n));
  size_t i = 0;
  for (const auto& item : n) out.push_back(read_string(ctx, item, where + "[" + std::to_string(i++) + "]"));
  return out;
}

StringMap read_string_map(const ParseCtx& ctx, const YAML::Node& n, const std::string& where) {
  StringMap out;
  if (!present(n)) return out;
  if (!n.IsMap()) fail_at(ctx, n, where, "expected a mapping, got " + describe(n));
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string k = it->first.Scalar();
    out[k] = read_string(ctx, it->second, child_path(where, k));
  }
  return out;
}

std::map<std::string, bool> read_bool_map(const ParseCtx& ctx, const YAML::Node& n, const std::string& where) {
  std::map<std::string, bool> out;
  if (!present(n)) return out;
  if (!n.IsMap()) fail_at(ctx, n, where, "expected a mapping of names to true/false, got " + describe(n));
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string k = it->first.Scalar();
    out[k] = read_bool(ctx, it->second, child_path(where, k));
  }
  return out;
}

PerfValue read_value(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return PerfValue{};
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    if (is_str_tagged(n) || !is_plain(n)) return PerfValue::of_string(s);
    switch (classify_plain(s)) {
      case PlainKind::Null:
        return PerfValue{};
      case PlainKind::Bool:
        return PerfValue::of_bool(s[0] == 't' || s[0] == 'T');
      case PlainKind::Int:
        return PerfValue::of_number(std::strtod(int_json_text(s).c_str(), nullptr));
      case PlainKind::Float: {
        const std::string t = float_json_text(s);
        if (!t.empty()) return PerfValue::of_number(std::strtod(t.c_str(), nullptr));
        return PerfValue::of_string(s);
      }
      case PlainKind::String:
        return PerfValue::of_string(s);
    }
  }
  PerfValue v;
  v.kind = PerfValue::Kind::Other;
  v.text = n.IsMap() ? "a mapping" : "a list";
  return v;
}

PerfValueMap read_value_map(const ParseCtx& ctx, const YAML::Node& n, const std::string& where) {
  PerfValueMap out;
  if (!present(n)) return out;
  if (!n.IsMap()) fail_at(ctx, n, where, "expected a mapping, got " + describe(n));
  for (auto it = n.begin(); it != n.end(); ++it) out[it->first.Scalar()] = read_value(it->second);
  return out;
}

void collect_param_refs(const YAML::Node& n, std::vector<std::string>& out) {
  if (n.IsScalar()) {
    if (starts_with(n.Scalar(), "$") && n.Scalar().size() > 1) out.push_back(n.Scalar().substr(1));
  } else if (n.IsSequence()) {
    for (const auto& item : n) collect_param_refs(item, out);
  } else if (n.IsMap()) {
    for (auto it = n.begin(); it != n.end(); ++it) collect_param_refs(it->second, out);
  }
}

// Upstream's isValidCount with parameterization allowed: a count parameter
// must name a parameter ("$x"); a literal count must not be negative.
void check_count(const ParseCtx& ctx, const YAML::Node& at, const std::string& where, int64_t count,
                 const std::string& param, const char* count_field, const char* param_field) {
  if (!param.empty()) {
    if (!starts_with(param, "$") || param.size() < 2)
      fail_at(ctx, at, where + "." + param_field,
              quote_for_message(param) + " must name a workload parameter, like " + quote_for_message("$" + param));
    return;
  }
  if (count < 0) fail_at(ctx, at, where + "." + count_field, "must not be negative");
}

// The ops bulkscore runs (docs/perf.md), in upstream's names.
const char* const kOpsRun[] = {
    "createNodes", "createNamespaces",       "createPods",           "createPodSets", "barrier",
    "sleep",       "startCollectingMetrics", "stopCollectingMetrics"};

// The other ops upstream's runner decodes (the opcode table of v1.35's
// test/integration/scheduler_perf/scheduler_perf.go), plus the pod-group ops
// of newer upstream workload files (gang scheduling): listed as not honoured
// when a file uses them. Any other opcode is an error, as upstream.
const std::set<std::string>& upstream_ops_not_run() {
  static const std::set<std::string> ops = {"allocResourceClaims",  "createAny",       "createResourceClaims",
                                            "createResourceDriver", "churn",           "updateAny",
                                            "deletePods",           "createPodGroups", "waitForPodGroups"};
  return ops;
}

PerfOp parse_create_pods(const ParseCtx& ctx, YamlObject& o, PerfOp op) {
  op.kind = PerfOpKind::CreatePods;
  op.count = read_int(ctx, o.take("count"), o.field("count"));
  op.count_param = read_string(ctx, o.take("countParam"), o.field("countParam"));
  op.count_multiplier_param = read_string(ctx, o.take("countMultiplierParam"), o.field("countMultiplierParam"));
  op.steady_state = read_bool(ctx, o.take("steadyState"), o.field("steadyState"));
  op.steady_state_param = read_string(ctx, o.take("steadyStateParam"), o.field("steadyStateParam"));
  op.duration = read_string(ctx, o.take("duration"), o.field("duration"));
  op.duration_param = read_string(ctx, o.take("durationParam"), o.field("durationParam"));
  op.collect_metrics = read_bool(ctx, o.take("collectMetrics"), o.field("collectMetrics"));
  const YAML::Node ns = o.take("namespace");
  if (present(ns)) op.namespace_name = read_string(ctx, ns, o.field("namespace"));
  const YAML::Node tpl = o.take("podTemplatePath");
  if (present(tpl))
    op.pod_template_path = resolve_path(ctx.base_dir, read_string(ctx, tpl, o.field("podTemplatePath")));
  op.skip_wait_to_completion = read_bool(ctx, o.take("skipWaitToCompletion"), o.field("skipWaitToCompletion"));
  const bool pv = present(o.take("persistentVolumeTemplatePath"));
  const bool pvc = present(o.take("persistentVolumeClaimTemplatePath"));
  op.has_volume_templates = pv || pvc;
  op.template_params = read_value_map(ctx, o.take("templateParams"), o.field("templateParams"));
  op.signature_batch_size = read_int(ctx, o.take("signatureBatchSize"), o.field("signatureBatchSize"));
  op.signature_batch_size_param =
      read_string(ctx, o.take("signatureBatchSizeParam"), o.field("signatureBatchSizeParam"));
  o.reject_unknown();

  check_count(ctx, o.node(), o.where(), op.count, op.count_param, "count", "countParam");
  check_count(ctx, o.node(), o.where(), op.signature_batch_size, op.signature_batch_size_param, "signatureBatchSize",
              "signatureBatchSizeParam");
  if (!op.count_multiplier_param.empty() && !starts_with(op.count_multiplier_param, "$"))
    fail_at(ctx, o.node(), o.field("countMultiplierParam"), "must name a workload parameter (\"$x\")");
  if (op.collect_metrics && op.skip_wait_to_completion)
    fail_at(ctx, o.node(), o.where(), "collectMetrics and skipWaitToCompletion cannot be true at the same time");
  if (op.skip_wait_to_completion && op.steady_state)
    fail_at(ctx, o.node(), o.where(), "skipWaitToCompletion and steadyState cannot be true at the same time");
  return op;
}

PerfOp parse_op(const ParseCtx& ctx, const YAML::Node& node, const std::string& where, bool nested_pods) {
  YamlObject o(ctx, node, where);
  PerfOp op;
  op.opcode = read_string(ctx, o.take("opcode"), o.field("opcode"));
  if (nested_pods) {
    if (!op.opcode.empty() && op.opcode != "createPods")
      fail_at(ctx, node, o.field("opcode"), "must be createPods, got " + quote_for_message(op.opcode));
    op.opcode = "createPods";
  }
  op.origin = ctx.file + ": " + where + " (" + name_for_message(op.opcode) + ")";
  const std::string w = where + " (" + (op.opcode.empty() ? "no opcode" : name_for_message(op.opcode)) + ")";
  YamlObject ob(ctx, node, w);  // the same fields, with the opcode in messages
  ob.take("opcode");
  if (op.opcode.empty()) fail_at(ctx, node, where + ".opcode", "missing");

  if (op.opcode == "createNodes") {
    op.kind = PerfOpKind::CreateNodes;
    op.count = read_int(ctx, ob.take("count"), ob.field("count"));
    op.count_param = read_string(ctx, ob.take("countParam"), ob.field("countParam"));
    const YAML::Node tpl = ob.take("nodeTemplatePath");
    if (present(tpl))
      op.node_template_path = resolve_path(ctx.base_dir, read_string(ctx, tpl, ob.field("nodeTemplatePath")));
    const YAML::Node alloc = ob.take("nodeAllocatableStrategy");
    if (present(alloc)) {
      YamlObject a(ctx, alloc, ob.field("nodeAllocatableStrategy"));
      op.has_node_allocatable_strategy = true;
      op.node_allocatable = read_string_map(ctx, a.take("nodeAllocatable"), a.field("nodeAllocatable"));
      const bool csi = present(a.take("csiNodeAllocatable"));
      const bool migrated = present(a.take("migratedPlugins"));
      op.csi_node_allocatable_ignored = csi || migrated;
      a.reject_unknown();
      for (const auto& [res, q] : op.node_allocatable) {
        try {
          (void)parse_resource_quantity(res, q);
        } catch (const InputError& e) {
          fail_at(ctx, alloc, a.field("nodeAllocatable." + res), e.what());
        }
      }
    }
    const YAML::Node label = ob.take("labelNodePrepareStrategy");
    if (present(label)) {
      YamlObject l(ctx, label, ob.field("labelNodePrepareStrategy"));
      op.has_label_strategy = true;
      op.label_key = read_string(ctx, l.take("labelKey"), l.field("labelKey"));
      op.label_values = read_string_list(ctx, l.take("labelValues"), l.field("labelValues"));
      l.reject_unknown();
      if (op.label_key.empty()) fail_at(ctx, label, l.field("labelKey"), "missing");
      if (op.label_values.empty()) fail_at(ctx, label, l.field("labelValues"), "needs at least one value");
    }
    const YAML::Node uniq = ob.take("uniqueNodeLabelStrategy");
    if (present(uniq)) {
      YamlObject u(ctx, uniq, ob.field("uniqueNodeLabelStrategy"));
      op.has_unique_label_strategy = true;
      op.unique_label_key = read_string(ctx, u.take("labelKey"), u.field("labelKey"));
      u.reject_unknown();
      if (op.unique_label_key.empty()) fail_at(ctx, uniq, u.field("labelKey"), "missing");
    }
    op.template_params = read_value_map(ctx, ob.take("templateParams"), ob.field("templateParams"));
    ob.reject_unknown();
    check_count(ctx, node, w, op.count, op.count_param, "count", "countParam");
  } else if (op.opcode == "createNamespaces") {
    op.kind = PerfOpKind::CreateNamespaces;
    op.prefix = read_string(ctx, ob.take("prefix"), ob.field("prefix"));
    op.count = read_int(ctx, ob.take("count"), ob.field("count"));
    op.count_param = read_string(ctx, ob.take("countParam"), ob.field("countParam"));
    op.has_namespace_template = present(ob.take("namespaceTemplatePath"));
    ob.reject_unknown();
    check_count(ctx, node, w, op.count, op.count_param, "count", "countParam");
  } else if (op.opcode == "createPods") {
    op = parse_create_pods(ctx, ob, op);
  } else if (op.opcode == "createPodSets") {
    op.kind = PerfOpKind::CreatePodSets;
    op.count = read_int(ctx, ob.take("count"), ob.field("count"));
    op.count_param = read_string(ctx, ob.take("countParam"), ob.field("countParam"));
    op.namespace_prefix = read_string(ctx, ob.take("namespacePrefix"), ob.field("namespacePrefix"));
    const YAML::Node inner = ob.take("createPodsOp");
    if (!present(inner)) fail_at(ctx, node, ob.field("createPodsOp"), "missing");
    op.pods_op.push_back(parse_op(ctx, inner, where + ".createPodsOp", true));
    ob.reject_unknown();
    check_count(ctx, node, w, op.count, op.count_param, "count", "countParam");
  } else if (op.opcode == "barrier") {
    op.kind = PerfOpKind::Barrier;
    op.namespaces = read_string_list(ctx, ob.take("namespaces"), ob.field("namespaces"));
    op.label_selector = read_string_map(ctx, ob.take("labelSelector"), ob.field("labelSelector"));
    op.stage_requirement = read_string(ctx, ob.take("stageRequirement"), ob.field("stageRequirement"));
    ob.reject_unknown();
    if (!op.stage_requirement.empty() && op.stage_requirement != "Scheduled" && op.stage_requirement != "Attempted")
      fail_at(ctx, node, ob.field("stageRequirement"),
              "must be Scheduled or Attempted, got " + quote_for_message(op.stage_requirement));
  } else if (op.opcode == "sleep") {
    op.kind = PerfOpKind::Sleep;
    op.duration = read_string(ctx, ob.take("duration"), ob.field("duration"));
    op.duration_param = read_string(ctx, ob.take("durationParam"), ob.field("durationParam"));
    ob.reject_unknown();
  } else if (op.opcode == "startCollectingMetrics") {
    op.kind = PerfOpKind::StartCollectingMetrics;
    op.name = read_string(ctx, ob.take("name"), ob.field("name"));
    op.namespaces = read_string_list(ctx, ob.take("namespaces"), ob.field("namespaces"));
    op.label_selector = read_string_map(ctx, ob.take("labelSelector"), ob.field("labelSelector"));
    ob.reject_unknown();
    if (op.namespaces.empty()) fail_at(ctx, node, ob.field("namespaces"), "cannot be empty");
  } else if (op.opcode == "stopCollectingMetrics") {
    op.kind = PerfOpKind::StopCollectingMetrics;
    ob.reject_unknown();
  } else if (upstream_ops_not_run().count(op.opcode)) {
    // Not run by bulkscore: keep its parameter references so that they do not
    // count as unused. Its fields are not checked (bulkscore does not know them).
    op.kind = PerfOpKind::Unsupported;
    collect_param_refs(node, op.param_refs);
  } else {
    // Upstream's op decoder fails on an opcode it does not know.
    std::string known;
    for (const char* k : kOpsRun) known += std::string(known.empty() ? "" : ", ") + k;
    for (const auto& k : upstream_ops_not_run()) known += ", " + k;
    fail_at(ctx, node, ob.field("opcode"),
            "unknown opcode " + quote_for_message(op.opcode) + " (known: " + known + ")");
  }
  return op;
}

bool op_collects_metrics(const PerfOp& op) {
  if (op.kind == PerfOpKind::CreatePods) return op.collect_metrics;
  if (op.kind == PerfOpKind::CreatePodSets) return !op.pods_op.empty() && op.pods_op[0].collect_metrics;
  return op.kind == PerfOpKind::StopCollectingMetrics;
}

PerfWorkload parse_workload(const ParseCtx& ctx, const YAML::Node& node, const std::string& where) {
  YamlObject o(ctx, node, where);
  PerfWorkload w;
  w.name = read_string(ctx, o.take("name"), o.field("name"));
  w.origin = at_line(ctx.file, node) + ": " + where + (w.name.empty() ? "" : " (" + name_for_message(w.name) + ")");
  const std::string wh = where + (w.name.empty() ? "" : " (" + name_for_message(w.name) + ")");
  if (w.name.empty()) fail_at(ctx, node, where + ".name", "missing");
  w.params = read_value_map(ctx, o.take("params"), wh + ".params");
  w.labels = read_string_list(ctx, o.take("labels"), wh + ".labels");
  const YAML::Node th = o.take("threshold");
  if (present(th)) {
    if (th.IsMap()) {
      w.threshold_by_topic = true;
      for (auto it = th.begin(); it != th.end(); ++it)
        (void)read_number(ctx, it->second, child_path(wh + ".threshold", it->first.Scalar()));
    } else {
      w.threshold = read_number(ctx, th, wh + ".threshold");
      if (w.threshold < 0) fail_at(ctx, th, wh + ".threshold", "should be non-negative");
    }
  }
  o.take("thresholdMetricSelector");  // only SchedulingThroughput/Average is compared
  w.feature_gates = read_bool_map(ctx, o.take("featureGates"), wh + ".featureGates");
  o.reject_unknown();
  return w;
}

PerfTestCase parse_test_case(const ParseCtx& ctx, const YAML::Node& node, size_t index) {
  const std::string where0 = "[" + std::to_string(index) + "]";
  YamlObject probe(ctx, node, where0);
  PerfTestCase tc;
  tc.name = read_string(ctx, probe.take("name"), where0 + ".name");
  if (tc.name.empty()) fail_at(ctx, node, where0 + ".name", "missing");
  const std::string where = where0 + " (" + name_for_message(tc.name) + ")";
  tc.origin = at_line(ctx.file, node) + ": " + where;
  YamlObject o(ctx, node, where);
  o.take("name");
  tc.feature_gates = read_bool_map(ctx, o.take("featureGates"), o.field("featureGates"));
  if (present(o.take("metricsCollectorConfig"))) tc.ignored_fields.push_back("metricsCollectorConfig");
  if (present(o.take("defaultThresholdMetricSelector"))) tc.ignored_fields.push_back("defaultThresholdMetricSelector");
  const std::string sched = read_string(ctx, o.take("schedulerConfigPath"), o.field("schedulerConfigPath"));
  tc.scheduler_config_path = resolve_path(ctx.base_dir, sched);
  const YAML::Node dpt = o.take("defaultPodTemplatePath");
  if (present(dpt))
    tc.default_pod_template_path = resolve_path(ctx.base_dir, read_string(ctx, dpt, o.field("defaultPodTemplatePath")));
  tc.labels = read_string_list(ctx, o.take("labels"), o.field("labels"));

  const YAML::Node tmpl = o.take("workloadTemplate");
  if (present(tmpl)) {
    if (!tmpl.IsSequence())
      fail_at(ctx, tmpl, o.field("workloadTemplate"), "expected a list of ops, got " + describe(tmpl));
    size_t i = 0;
    for (const auto& op : tmpl) {
      tc.ops.push_back(parse_op(ctx, op, where + ".workloadTemplate[" + std::to_string(i) + "]", false));
      ++i;
    }
  }
  const YAML::Node wls = o.take("workloads");
  if (present(wls)) {
    if (!wls.IsSequence()) fail_at(ctx, wls, o.field("workloads"), "expected a list, got " + describe(wls));
    size_t i = 0;
    std::set<std::string> names;
    for (const auto& wn : wls) {
      PerfWorkload w = parse_workload(ctx, wn, where + ".workloads[" + std::to_string(i) + "]");
      if (!names.insert(w.name).second)
        fail_at(ctx, wn, where + ".workloads[" + std::to_string(i) + "].name",
                "workload name " + name_for_message(w.name) + " is not unique");
      tc.workloads.push_back(std::move(w));
      ++i;
    }
  }
  o.reject_unknown();
  if (tc.workloads.empty()) fail_at(ctx, node, o.field("workloads"), "no workloads defined");
  if (tc.ops.empty()) fail_at(ctx, node, o.field("workloadTemplate"), "no ops defined");
  if (std::none_of(tc.ops.begin(), tc.ops.end(), op_collects_metrics))
    fail_at(ctx, node, o.field("workloadTemplate"), "no op in the workload template collects metrics");
  return tc;
}

}  // namespace

PerfConfig parse_perf_config(const std::string& yaml_text, const std::string& origin, const std::string& base_dir) {
  const ParseCtx ctx{origin, base_dir};
  const YAML::Node doc = load_one_document(yaml_text, origin);
  PerfConfig cfg;
  cfg.path = origin;
  cfg.base_dir = base_dir;
  if (!doc.IsSequence())
    throw InputError(at_line(origin, doc) + ": expected a list of test cases, got " + describe(doc));
  std::set<std::string> names;
  size_t i = 0;
  for (const auto& tcn : doc) {
    PerfTestCase tc = parse_test_case(ctx, tcn, i);
    if (!names.insert(tc.name).second)
      throw InputError(at_line(origin, tcn) + ": [" + std::to_string(i) + "].name: " + quote_for_message(tc.name) +
                       ": name is not unique");
    cfg.test_cases.push_back(std::move(tc));
    ++i;
  }
  if (cfg.test_cases.empty()) throw InputError(origin + ": no test cases defined");
  return cfg;
}

PerfConfig load_perf_config(const std::string& path) {
  const std::string text = read_file(path);
  std::string dir = std::filesystem::path(path).parent_path().string();
  return parse_perf_config(text, path, dir);
}

// ============================================================================
// Selecting workloads
// ============================================================================

namespace {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, ',')) {
    const size_t b = cur.find_first_not_of(" \t");
    const size_t e = cur.find_last_not_of(" \t");
    if (b == std::string::npos) continue;
    out.push_back(cur.substr(b, e - b + 1));
  }
  return out;
}

bool labels_enabled(const std::vector<std::string>& selectors, const std::vector<std::string>& labels) {
  for (const std::string& sel : selectors) {
    const bool negate = sel[0] == '-';
    const std::string name = (sel[0] == '-' || sel[0] == '+') ? sel.substr(1) : sel;
    const bool has = std::find(labels.begin(), labels.end(), name) != labels.end();
    if (negate == has) return false;
  }
  return true;
}

}  // namespace

std::vector<PerfSelected> select_perf_workloads(const PerfConfig& config, const std::string& name_filter,
                                                const std::string& label_filter) {
  const std::vector<std::string> patterns = split_commas(name_filter);
  const std::vector<std::string> selectors = split_commas(label_filter);
  std::vector<bool> pattern_used(patterns.size(), false);
  std::vector<PerfSelected> out;
  for (const auto& tc : config.test_cases) {
    for (const auto& w : tc.workloads) {
      const std::string full = tc.name + "/" + w.name;
      bool match = patterns.empty();
      for (size_t i = 0; i < patterns.size(); ++i) {
        const std::string& p = patterns[i];
        if (p == tc.name || fnmatch(p.c_str(), full.c_str(), 0) == 0 ||
            (p.find('/') == std::string::npos && fnmatch(p.c_str(), tc.name.c_str(), 0) == 0)) {
          match = true;
          pattern_used[i] = true;
        }
      }
      if (!match) continue;
      std::vector<std::string> labels = tc.labels;
      labels.insert(labels.end(), w.labels.begin(), w.labels.end());
      if (!labels_enabled(selectors, labels)) continue;
      out.push_back(PerfSelected{&tc, &w});
    }
  }
  for (size_t i = 0; i < patterns.size(); ++i)
    if (!pattern_used[i]) throw InputError(config.path + ": no workload matches " + quote_for_message(patterns[i]));
  return out;
}

}  // namespace bulkscore
