// Results: the throughput collector and its summary, the results file in
// upstream's shape, and the comparison table over results files.
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "bench/perf/perf.hpp"
#include "bench/perf/text.hpp"
#include "bulkscore/version.h"
#include "host/common.hpp"
#include "host/io/io.hpp"
#include "host/io/json_writer.hpp"

namespace bulkscore {

// ============================================================================
// Throughput
// ============================================================================

PerfThroughput summarize_throughput(std::vector<double> samples) {
  PerfThroughput t;
  t.samples = samples;
  if (samples.empty()) return t;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  double sum = 0;
  for (double s : samples) sum += s;
  auto perc = [&](size_t p) { return samples[(n * p + 99) / 100 - 1]; };
  t.average = sum / static_cast<double>(n);
  t.perc50 = perc(50);
  t.perc90 = perc(90);
  t.perc95 = perc(95);
  t.perc99 = perc(99);
  return t;
}

ThroughputCollector::ThroughputCollector(int64_t start_ns, int64_t window_ns)
    : start_ns_(start_ns), window_ns_(window_ns), next_tick_ns_(start_ns + window_ns) {}

void ThroughputCollector::close_windows_before(int64_t now_ns) {
  while (now_ns >= next_tick_ns_) {
    const uint64_t fresh = scheduled_ - at_last_sample_;
    if (fresh == 0) {
      ++skipped_;
    } else {
      const double seconds = static_cast<double>(window_ns_) * (skipped_ + 1) / 1e9;
      const double rate = static_cast<double>(fresh) / seconds;
      for (uint32_t i = 0; i <= skipped_; ++i) samples_.push_back(rate);
      at_last_sample_ = scheduled_;
      skipped_ = 0;
    }
    next_tick_ns_ += window_ns_;
  }
}

void ThroughputCollector::pod_done(int64_t now_ns, bool scheduled) {
  close_windows_before(now_ns);
  if (scheduled) ++scheduled_;
}

PerfThroughput ThroughputCollector::finish(int64_t end_ns) {
  close_windows_before(end_ns);
  if (samples_.empty() && scheduled_ > 0 && end_ns > start_ns_) {
    PerfThroughput t =
        summarize_throughput({static_cast<double>(scheduled_) * 1e9 / static_cast<double>(end_ns - start_ns_)});
    t.whole_op_fallback = true;
    return t;
  }
  return summarize_throughput(samples_);
}

namespace {

void write_item(JsonWriter& j, const std::vector<std::pair<std::string, double>>& data, const std::string& unit,
                const std::string& metric, const PerfMeasurement& m, const PerfWorkloadResult& w) {
  j.begin_object();
  j.key("data").begin_object();
  for (const auto& [k, v] : data) j.key(k).value(v);
  j.end_object();
  j.key("unit").value(unit);
  // Every item carries the same label set: perfdash shows only items that have
  // the selected value of every label.
  j.key("labels").begin_object();
  j.key("Backend").value(w.backend);
  j.key("Device").value(w.device);
  j.key("Metric").value(metric);
  j.key("Name").value(m.name);
  j.key("Nodes").value(std::to_string(m.nodes));
  j.end_object();
  j.end_object();
}

}  // namespace

std::string perf_results_json(const PerfRunResult& result) {
  std::string out;
  JsonWriter j(out, 2);  // indented like upstream's results files
  j.begin_object();
  j.key("version").value("v1");
  j.key("dataItems").begin_array();
  for (const auto& w : result.workloads) {
    for (const auto& m : w.measurements) {
      const PerfThroughput& t = m.throughput;
      std::vector<std::pair<std::string, double>> tp = {{"Average", t.average},
                                                        {"Perc50", t.perc50},
                                                        {"Perc90", t.perc90},
                                                        {"Perc95", t.perc95},
                                                        {"Perc99", t.perc99}};
      if (m.threshold > 0) tp.insert(tp.begin() + 1, {"AverageThreshold", m.threshold});
      write_item(j, tp, "pods/s", "SchedulingThroughput", m, w);
      write_item(j, {{"Duration", m.elapsed_seconds}}, "s", "SchedulingDuration", m, w);
      write_item(j, {{"Value", m.overall_pods_per_second}}, "pods/s", "bulkscore_overall_throughput", m, w);
      write_item(j, {{"Value", m.ns_per_node_per_pod}}, "ns", "bulkscore_ns_per_node_per_pod", m, w);
      write_item(j, {{"Percent", m.nodes_scored_percent}}, "%", "bulkscore_nodes_scored", m, w);
      write_item(j,
                 {{"Attempted", double(m.attempted)},
                  {"Errors", double(m.errors)},
                  {"Scheduled", double(m.scheduled)},
                  {"Unschedulable", double(m.unschedulable)}},
                 "pods", "bulkscore_pods", m, w);
    }
  }
  j.end_array();
  j.key("bulkscore").begin_object();
  j.key("version").value(BULKSCORE_VERSION);
  j.key("config").value(result.config_path);
  j.key("interrupted").value(result.interrupted);
  j.key("workloads").begin_array();
  for (const auto& w : result.workloads) {
    j.begin_object();
    j.key("name").value(w.full_name());
    j.key("backend").value(w.backend);
    j.key("backendNote").value(w.backend_note);
    j.key("device").value(w.device);
    j.key("nodes").value(w.nodes);
    j.key("percentageOfNodesToScore").value(w.percentage_of_nodes_to_score);
    j.key("batching").value(w.batching);
    j.key("setupPods").value(w.setup_pods);
    j.key("setupUnschedulable").value(w.setup_unschedulable);
    j.key("gatedPods").value(w.gated_pods);
    j.key("wallSeconds").value(w.wall_seconds);
    j.key("interrupted").value(w.interrupted);
    j.key("featureGates").begin_object();
    for (const auto& [g, v] : w.feature_gates) j.key(g).value(v);
    j.end_object();
    j.key("notHonoured").begin_array();
    for (const auto& s : w.not_honoured) j.value(s);
    j.end_array();
    j.key("notes").begin_array();
    for (const auto& s : w.notes) j.value(s);
    j.end_array();
    j.key("measurements").begin_array();
    for (const auto& m : w.measurements) {
      j.begin_object();
      j.key("name").value(m.name);
      j.key("interrupted").value(m.interrupted);
      j.key("wholeOpFallback").value(m.throughput.whole_op_fallback);
      j.key("batch").begin_object();
      j.key("hintUsed").value(m.batch.hint_used);
      j.key("hintNotUsed").value(m.batch.hint_not_used);
      j.key("noHint").value(m.batch.no_hint);
      j.key("rescoreAttempts").value(m.batch.rescore_attempts);
      j.key("flushed").begin_object();
      for (size_t r = 0; r < m.batch.flushed.size(); ++r)
        if (static_cast<FlushReason>(r) != FlushReason::kNoState)
          j.key(flush_reason_name(static_cast<FlushReason>(r))).value(m.batch.flushed[r]);
      j.end_object();
      j.key("refilteredNodes").value(m.batch.refiltered_nodes);
      j.key("rescoredNodes").value(m.batch.rescored_nodes);
      j.key("pluginsRescoredWhole").value(m.batch.full_plugin_rescores);
      j.key("renormalizations").value(m.batch.renormalizations);
      j.key("groupScores").value(m.batch.group_scores);
      j.key("prescoreUpdates").value(m.batch.prescore_updates);
      j.key("firstOfShape").value(m.batch.first_of_shape);
      j.end_object();
      j.key("windows").begin_array();
      for (double s : m.throughput.samples) j.value(s);
      j.end_array();
      j.end_object();
    }
    j.end_array();
    j.end_object();
  }
  j.end_array();
  j.end_object();
  j.end_object();
  out += '\n';
  return out;
}

// ============================================================================
// Comparing results files
// ============================================================================

namespace {

const char* json_type_name(simdjson::dom::element_type t) {
  switch (t) {
    case simdjson::dom::element_type::ARRAY:
      return "an array";
    case simdjson::dom::element_type::OBJECT:
      return "an object";
    case simdjson::dom::element_type::STRING:
      return "a string";
    case simdjson::dom::element_type::BOOL:
      return "a boolean";
    case simdjson::dom::element_type::NULL_VALUE:
      return "null";
    default:
      return "a number";
  }
}

// One data item of upstream's DataItems, checked field by field.
struct ResultItem {
  std::map<std::string, double> data;
  std::map<std::string, std::string> labels;
};

ResultItem read_result_item(simdjson::dom::element item, const std::string& where) {
  ResultItem out;
  simdjson::dom::object obj;
  if (item.get_object().get(obj)) throw InputError(where + ": expected an object, got " + json_type_name(item.type()));
  simdjson::dom::element data;
  if (obj["data"].get(data)) throw InputError(where + ".data: missing");
  simdjson::dom::object data_obj;
  if (data.get_object().get(data_obj))
    throw InputError(where + ".data: expected an object of numbers, got " + json_type_name(data.type()));
  for (const auto field : data_obj) {
    double v = 0;
    if (!field.value.is_number() || field.value.get_double().get(v))
      throw InputError(where + ".data." + std::string(field.key) + ": expected a number, got " +
                       json_type_name(field.value.type()));
    out.data[std::string(field.key)] = v;
  }
  simdjson::dom::element unit;
  if (!obj["unit"].get(unit) && !unit.is_string())
    throw InputError(where + ".unit: expected a string, got " + json_type_name(unit.type()));
  simdjson::dom::element labels;
  if (!obj["labels"].get(labels) && !labels.is_null()) {
    simdjson::dom::object labels_obj;
    if (labels.get_object().get(labels_obj))
      throw InputError(where + ".labels: expected an object of strings, got " + json_type_name(labels.type()));
    for (const auto field : labels_obj) {
      std::string_view v;
      if (field.value.get_string().get(v))
        throw InputError(where + ".labels." + std::string(field.key) + ": expected a string, got " +
                         json_type_name(field.value.type()));
      out.labels[std::string(field.key)] = std::string(v);
    }
  }
  return out;
}

}  // namespace

// A results file is upstream's DataItems: {"version": "...", "dataItems":
// [{"data": {name: number}, "unit": "...", "labels": {name: "..."}}]}.
// Anything else is an InputError naming the file and the field: a table
// built from some other JSON would be empty or wrong without saying so.
std::vector<PerfCompareRow> parse_perf_results(const std::string& json_text, const std::string& origin) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto err = parser.parse(json_text).get(doc))
    throw InputError(origin + ": invalid JSON: " + simdjson::error_message(err));
  const std::string not_results = " (not a scheduler_perf results file)";
  simdjson::dom::object top;
  if (doc.get_object().get(top))
    throw InputError(origin + ": expected a results object {\"version\", \"dataItems\"}, got " +
                     json_type_name(doc.type()) + not_results);
  simdjson::dom::element version;
  if (top["version"].get(version)) throw InputError(origin + ": version: missing" + not_results);
  if (!version.is_string())
    throw InputError(origin + ": version: expected a string, got " + json_type_name(version.type()) + not_results);
  simdjson::dom::element items_el;
  if (top["dataItems"].get(items_el)) throw InputError(origin + ": dataItems: missing" + not_results);
  simdjson::dom::array items;
  if (items_el.get_array().get(items))
    throw InputError(origin + ": dataItems: expected an array, got " + json_type_name(items_el.type()) + not_results);

  auto label = [](const ResultItem& item, const char* k) -> std::string {
    const auto it = item.labels.find(k);
    if (it == item.labels.end() || it->second == "not applicable") return "";
    return it->second;
  };
  auto data = [](const ResultItem& item, const char* k) -> std::optional<double> {
    const auto it = item.data.find(k);
    if (it == item.data.end()) return std::nullopt;
    return it->second;
  };
  std::vector<PerfCompareRow> rows;
  std::map<std::pair<std::string, std::string>, double> ns_per;
  size_t index = 0;
  for (simdjson::dom::element element : items) {
    const std::string where = origin + ": dataItems[" + std::to_string(index) + "]";
    const ResultItem item = read_result_item(element, where);
    const std::string metric = label(item, "Metric");
    if (metric == "SchedulingThroughput") {
      PerfCompareRow r;
      r.file = origin;
      r.workload = label(item, "Name");
      r.backend = label(item, "Backend");
      r.nodes = label(item, "Nodes");
      const auto avg = data(item, "Average");
      if (!avg) throw InputError(where + ".data.Average: missing");
      r.average = *avg;
      r.perc50 = data(item, "Perc50").value_or(0);
      r.perc90 = data(item, "Perc90").value_or(0);
      r.perc99 = data(item, "Perc99").value_or(0);
      rows.push_back(std::move(r));
    } else if (metric == "bulkscore_ns_per_node_per_pod") {
      if (const auto v = data(item, "Value")) ns_per[{label(item, "Name"), label(item, "Backend")}] = *v;
    }
    ++index;
  }
  for (auto& r : rows) {
    const auto it = ns_per.find({r.workload, r.backend});
    if (it != ns_per.end()) r.ns_per_node_per_pod = it->second;
  }
  return rows;
}

std::vector<PerfCompareRow> read_perf_results(const std::string& path) {
  return parse_perf_results(read_file(path), path);
}

std::string format_perf_table(const std::vector<PerfCompareRow>& rows) {
  std::set<std::string> files;
  for (const auto& r : rows) files.insert(r.file);
  const bool with_file = files.size() > 1;
  std::vector<std::string> header = {"workload", "backend", "nodes", "avg pods/s", "p50", "p90", "p99", "ns/node/pod"};
  if (with_file) header.push_back("file");
  std::vector<std::vector<std::string>> cells;
  // Sized by a first snprintf: a results file may hold any double, and
  // 1e300 in %f is 300 digits.
  auto fmt = [](double v, int decimals) {
    const int n = std::snprintf(nullptr, 0, "%.*f", decimals, v);
    if (n <= 0) return std::string();
    std::string s(static_cast<size_t>(n) + 1, '\0');
    static_cast<void>(std::snprintf(s.data(), s.size(), "%.*f", decimals, v));  // fits: sized above
    s.pop_back();
    return s;
  };
  for (const auto& r : rows) {
    std::vector<std::string> c = {r.workload,
                                  r.backend.empty() ? "-" : r.backend,
                                  r.nodes.empty() ? "-" : r.nodes,
                                  fmt(r.average, 1),
                                  fmt(r.perc50, 1),
                                  fmt(r.perc90, 1),
                                  fmt(r.perc99, 1),
                                  r.ns_per_node_per_pod ? fmt(*r.ns_per_node_per_pod, 3) : "-"};
    if (with_file) c.push_back(std::filesystem::path(r.file).filename().string());
    cells.push_back(std::move(c));
  }
  std::vector<size_t> width(header.size());
  for (size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const auto& c : cells)
    for (size_t i = 0; i < c.size(); ++i) width[i] = std::max(width[i], c[i].size());
  auto line = [&](const std::vector<std::string>& c) {
    std::string s;
    for (size_t i = 0; i < c.size(); ++i) {
      const bool left = i < 3 || i == 8;  // text columns left, numbers right
      const std::string pad(width[i] - c[i].size(), ' ');
      s += left ? c[i] + pad : pad + c[i];
      if (i + 1 < c.size()) s += "  ";
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string out = line(header);
  for (const auto& c : cells) out += line(c);
  return out;
}

std::string perf_compare(const std::vector<std::string>& paths) {
  std::vector<PerfCompareRow> rows;
  for (const auto& p : paths) {
    std::vector<PerfCompareRow> r = read_perf_results(p);
    rows.insert(rows.end(), r.begin(), r.end());
  }
  return format_perf_table(rows);
}

std::vector<PerfCompareRow> perf_rows(const PerfRunResult& result) {
  std::vector<PerfCompareRow> rows;
  for (const auto& w : result.workloads) {
    for (const auto& m : w.measurements) {
      PerfCompareRow r;
      r.file = result.config_path;
      r.workload = m.name;
      r.backend = w.backend;
      r.nodes = std::to_string(m.nodes);
      r.average = m.throughput.average;
      r.perc50 = m.throughput.perc50;
      r.perc90 = m.throughput.perc90;
      r.perc99 = m.throughput.perc99;
      r.ns_per_node_per_pod = m.ns_per_node_per_pod;
      rows.push_back(std::move(r));
    }
  }
  return rows;
}

}  // namespace bulkscore
