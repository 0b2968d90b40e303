// The trace's CSV files and the objects made of their rows.
#include <algorithm>
#include <charconv>
#include <limits>
#include <string_view>
#include <unordered_map>

#include "bench/replay/replay.hpp"
#include "host/input/labels.hpp"
#include "host/input/quote.hpp"
#include "host/io/io.hpp"

namespace bulkscore {
namespace {

std::string where(const std::string& origin, size_t line) { return origin + ":" + std::to_string(line); }

// A field shown in a message: quoted, escaped and cut short so a runaway
// line does not flood the terminal.
std::string shown(std::string_view field) {
  constexpr size_t kMaxShown = 40;
  return quote_for_message(field, kMaxShown);
}

// The fields of a line whose field count the caller has checked, each
// checked before it is copied: at most kMaxCsvFieldBytes bytes, no control
// character (a NUL, a tab, a CR inside the line; the trace has none).
// `names`: the columns, for messages.
std::vector<std::string> split_line(std::string_view line, const std::string& origin, size_t line_no,
                                    const std::vector<std::string>& names) {
  std::vector<std::string> fields;
  fields.reserve(names.size());
  size_t start = 0;
  for (size_t column = 0;; ++column) {
    const size_t comma = line.find(',', start);
    const std::string_view field = line.substr(start, comma == std::string_view::npos ? comma : comma - start);
    const auto fail = [&](const std::string& problem) {
      throw InputError(where(origin, line_no) + ": column " + names.at(column) + ": " + problem);
    };
    if (field.size() > kMaxCsvFieldBytes)
      fail("a field of " + std::to_string(field.size()) + " bytes, " + shown(field) + "; at most " +
           std::to_string(kMaxCsvFieldBytes) + " (the longest name Kubernetes allows for a pod or a node)");
    const auto control = std::find_if(field.begin(), field.end(), [](char c) {
      const auto u = static_cast<unsigned char>(c);
      return u < 0x20 || u == 0x7f;
    });
    if (control != field.end())
      fail("a control character at byte " + std::to_string(control - field.begin() + 1) + " of " + shown(field));
    fields.emplace_back(field);
    if (comma == std::string_view::npos) return fields;
    start = comma + 1;
  }
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + v[i];
  return s;
}

// Units per GPU in the trace's model (the node's milli resource is 1000 x GPUs).
constexpr int64_t kUnitsPerGpu = 1000;
constexpr int64_t kBytesPerMib = int64_t{1024} * 1024;
// The simulator's nodes allow 1001 pods, so the pod count never binds.
constexpr int64_t kTracePodsPerNode = 1001;
// Bounds that keep every product below 2^63: cpu and memory of one node or
// pod well above any machine's.
constexpr int64_t kMaxCpuMilli = 1'000'000'000;
constexpr int64_t kMaxMemoryMib = int64_t{1} << 40;

}  // namespace

const std::vector<std::string>& trace_node_header() {
  static const std::vector<std::string> header{"sn", "cpu_milli", "memory_mib", "gpu", "model"};
  return header;
}

const std::vector<std::string>& trace_pod_header() {
  static const std::vector<std::string> header{"name",          "cpu_milli",     "memory_mib",    "num_gpu",
                                               "gpu_milli",     "gpu_spec",      "qos",           "pod_phase",
                                               "creation_time", "deletion_time", "scheduled_time"};
  return header;
}

const std::vector<std::string>& trace_pod_short_header() {
  static const std::vector<std::string> header{"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"};
  return header;
}

CsvTable parse_csv(const std::string& text, const std::string& origin,
                   const std::vector<std::string>& expected_header) {
  return parse_csv(text, origin, std::vector<std::vector<std::string>>{expected_header});
}

CsvTable parse_csv(const std::string& text, const std::string& origin,
                   const std::vector<std::vector<std::string>>& accepted_headers) {
  std::string expected;
  for (const auto& h : accepted_headers) expected += (expected.empty() ? "\"" : "\" or \"") + join(h);
  expected += "\"";
  CsvTable table;
  table.origin = origin;
  size_t pos = 0;
  size_t line_no = 0;
  bool blank_seen = false;
  size_t blank_line = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) {
      // Trailing blank lines are tolerated; one in the middle is an error.
      if (!blank_seen) blank_line = line_no;
      blank_seen = true;
      continue;
    }
    if (blank_seen) throw InputError(where(origin, blank_line) + ": empty line");
    if (line.find('"') != std::string_view::npos)
      throw InputError(where(origin, line_no) + ": quoted fields are not supported (the trace never quotes)");
    // Counted before anything is split: a line of a million commas costs
    // nothing but this count.
    const size_t count = static_cast<size_t>(std::count(line.begin(), line.end(), ',')) + 1;
    if (line_no == 1) {
      const auto header = std::find_if(accepted_headers.begin(), accepted_headers.end(),
                                       [&](const std::vector<std::string>& h) { return join(h) == line; });
      if (header == accepted_headers.end())
        throw InputError(where(origin, 1) + ": unexpected header " + shown(line) + "; expected " + expected);
      table.header = *header;
      continue;
    }
    if (count != table.header.size())
      throw InputError(where(origin, line_no) + ": " + std::to_string(count) + " fields, expected " +
                       std::to_string(table.header.size()) + " (" + join(table.header) + ")");
    table.rows.push_back(CsvRow{line_no, split_line(line, origin, line_no, table.header)});
  }
  if (table.header.empty()) throw InputError(origin + ": empty file; expected the header " + expected);
  return table;
}

CsvTable read_csv(const std::string& path, const std::vector<std::string>& expected_header) {
  return parse_csv(read_file(path), path, expected_header);
}

int64_t csv_int(const CsvTable& table, const CsvRow& row, size_t column, int64_t min, int64_t max) {
  const std::string& field = row.fields.at(column);
  const std::string prefix = where(table.origin, row.line) + ": column " + table.header.at(column) + ": ";
  int64_t value = 0;
  const char* first = field.data();
  const char* last = field.data() + field.size();
  // from_chars takes a leading '-' but no '+' or spaces: exactly a decimal integer.
  const auto [ptr, ec] = std::from_chars(first, last, value);
  if (field.empty() || ec == std::errc::invalid_argument || ptr != last)
    throw InputError(prefix + "expected an integer, got " + shown(field));
  if (ec == std::errc::result_out_of_range || value < min || value > max)
    throw InputError(prefix + shown(field) + " is out of range " + std::to_string(min) + ".." + std::to_string(max));
  return value;
}

namespace {

// Names given twice are refused, as the API server refuses a second object
// of the same name: `seen` maps each name (a view into the table's rows) to
// the line that gave it first.
void check_unique_name(std::unordered_map<std::string_view, size_t>& seen, const CsvTable& table, const CsvRow& row,
                       const char* what) {
  const auto [it, fresh] = seen.emplace(row.fields[0], row.line);
  if (!fresh)
    throw InputError(where(table.origin, row.line) + ": column " + table.header[0] + ": " + what + " name " +
                     shown(row.fields[0]) + " is given twice (first on line " + std::to_string(it->second) + ")");
}

// A card model becomes a node's label value and an entry of a pod's model
// annotation ('|'-separated): it must be a valid label value (at most 63
// characters, alphanumerics, '-', '_', '.'), so that it can match.
void check_model(const std::string& origin, const char* column, std::string_view model) {
  const std::string problem = label_value_problem(model);
  if (!problem.empty())
    throw InputError(origin + ": column " + column + ": card model " + shown(model) + ": " + problem);
}

}  // namespace

std::vector<TraceNode> parse_trace_nodes(const std::string& text, const std::string& origin) {
  const CsvTable t = parse_csv(text, origin, trace_node_header());
  std::vector<TraceNode> nodes;
  nodes.reserve(t.rows.size());
  std::unordered_map<std::string_view, size_t> names;
  names.reserve(t.rows.size());
  for (const CsvRow& r : t.rows) {
    TraceNode n;
    n.origin = where(origin, r.line);
    n.name = r.fields[0];
    if (n.name.empty()) throw InputError(n.origin + ": column sn: empty node name");
    check_unique_name(names, t, r, "node");
    n.cpu_milli = csv_int(t, r, 1, 0, kMaxCpuMilli);
    n.memory_mib = csv_int(t, r, 2, 0, kMaxMemoryMib);
    n.gpus = static_cast<int32_t>(csv_int(t, r, 3, 0, kMaxDevicesPerNode));
    n.model = r.fields[4];
    check_model(n.origin, "model", n.model);
    nodes.push_back(std::move(n));
  }
  return nodes;
}

std::vector<TracePod> parse_trace_pods(const std::string& text, const std::string& origin) {
  const CsvTable t =
      parse_csv(text, origin, std::vector<std::vector<std::string>>{trace_pod_header(), trace_pod_short_header()});
  const bool has_spec = t.header.size() > 5;
  std::vector<TracePod> pods;
  pods.reserve(t.rows.size());
  std::unordered_map<std::string_view, size_t> names;
  names.reserve(t.rows.size());
  for (const CsvRow& r : t.rows) {
    TracePod p;
    p.origin = where(origin, r.line);
    p.name = r.fields[0];
    if (p.name.empty()) throw InputError(p.origin + ": column name: empty pod name");
    check_unique_name(names, t, r, "pod");
    p.cpu_milli = csv_int(t, r, 1, 0, kMaxCpuMilli);
    p.memory_mib = csv_int(t, r, 2, 0, kMaxMemoryMib);
    p.num_gpu = static_cast<int32_t>(csv_int(t, r, 3, 0, kMaxDevicesPerNode));
    // The trace writes 0 units for CPU-only pods; a GPU pod needs some.
    p.gpu_milli = static_cast<int32_t>(csv_int(t, r, 4, p.num_gpu > 0 ? 1 : 0, 1'000'000));
    if (has_spec) p.gpu_spec = r.fields[5];
    if (!p.gpu_spec.empty()) {
      // An empty entry ("A||B") would be a malformed annotation later on.
      const std::string& s = p.gpu_spec;
      if (s.front() == '|' || s.back() == '|' || s.find("||") != std::string::npos)
        throw InputError(p.origin + ": column gpu_spec: empty model in " + shown(s));
      for (size_t start = 0;;) {
        const size_t bar = s.find('|', start);
        check_model(p.origin, "gpu_spec",
                    std::string_view(s).substr(start, bar == std::string::npos ? bar : bar - start));
        if (bar == std::string::npos) break;
        start = bar + 1;
      }
    }
    pods.push_back(std::move(p));
  }
  return pods;
}

int32_t trace_pod_milli(const TracePod& p) {
  if (p.num_gpu == 0) return 0;
  return static_cast<int32_t>(std::min<int64_t>(p.gpu_milli, kUnitsPerGpu));
}

int64_t trace_pod_gpu_units(const TracePod& p) { return int64_t{trace_pod_milli(p)} * p.num_gpu; }

Node trace_node_object(const TraceNode& row, const DeviceModel& model) {
  Node n;
  n.name = row.name;
  n.allocatable["cpu"] = row.cpu_milli;
  n.allocatable["memory"] = row.memory_mib * kBytesPerMib;
  n.allocatable["pods"] = kTracePodsPerNode;
  n.allocatable[model.count_resource] = row.gpus;
  n.allocatable[model.milli_resource] = kUnitsPerGpu * row.gpus;
  if (row.gpus > 0 && !row.model.empty()) n.labels[model.model_label] = row.model;
  return n;
}

Pod trace_pod_object(const TracePod& row, const DeviceModel& model, const std::string& name) {
  Pod p = trace_pod_shape(row, model);
  p.name = name.empty() ? row.name : name;
  p.origin = row.origin;
  return p;
}

Pod trace_pod_shape(const TracePod& row, const DeviceModel& model) {
  Pod p;
  p.scheduler_name = "default-scheduler";
  p.phase = "Pending";
  Container c;
  c.name = "main";
  c.requests["cpu"] = row.cpu_milli;
  c.requests["memory"] = row.memory_mib * kBytesPerMib;
  p.containers.push_back(std::move(c));
  if (row.num_gpu > 0) {
    p.annotations[model.count_annotation] = std::to_string(row.num_gpu);
    p.annotations[model.milli_annotation] = std::to_string(trace_pod_milli(row));
    if (!row.gpu_spec.empty()) p.annotations[model.model_annotation] = row.gpu_spec;
  }
  return p;
}

ReplayTrace make_trace(std::vector<TraceNode> nodes, std::vector<TracePod> pods) {
  ReplayTrace t;
  t.nodes = std::move(nodes);
  t.pods = std::move(pods);
  std::stable_sort(t.pods.begin(), t.pods.end(), [](const TracePod& a, const TracePod& b) { return a.name < b.name; });
  for (const TraceNode& n : t.nodes) {
    t.gpus += n.gpus;
    t.gpu_capacity_units += kUnitsPerGpu * n.gpus;
  }
  if (t.pods.size() > std::numeric_limits<uint32_t>::max()) throw InputError("too many pods in the trace");
  return t;
}

ReplayTrace read_trace(const std::string& nodes_path, const std::string& pods_path) {
  ReplayTrace t = make_trace(parse_trace_nodes(read_file(nodes_path), nodes_path),
                             parse_trace_pods(read_file(pods_path), pods_path));
  t.nodes_path = nodes_path;
  t.pods_path = pods_path;
  if (t.nodes.empty()) throw InputError(nodes_path + ": no nodes");
  if (t.gpu_capacity_units == 0) throw InputError(nodes_path + ": no GPUs on any node");
  return t;
}

}  // namespace bulkscore
