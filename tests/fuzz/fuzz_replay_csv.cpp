// `bulkscore replay`'s readers: the trace's node and pod lists (the strict
// CSV reader and the rows' checks) and the --seeds / --arrivals lists. The
// first byte picks the reader ('0' nodes, '1' pods, '2' the lists; any byte,
// modulo 3). Bad input may only be an InputError. What a reader accepts must
// be usable: the invariants it promises hold (names non-empty, unique, at
// most kMaxCsvFieldBytes, without control characters; card models valid
// label values; no seed twice), and an accepted pod list runs through the
// experiment on a small fixed cluster (typical tasks, tuning, FGD placing
// the first pods) with no exception at all and every pod placed or
// unschedulable: a row the reader lets through that the engine then refuses
// is a finding.
#include <cstdlib>
#include <set>
#include <string_view>

#include "bench/replay/replay.hpp"
#include "host/input/labels.hpp"
#include "tests/fuzz/fuzz_util.hpp"

namespace {

using namespace bulkscore;

void require(bool ok) {
  if (!ok) std::abort();
}

void check_name(const std::string& name, std::set<std::string_view>& seen) {
  require(!name.empty() && name.size() <= kMaxCsvFieldBytes);
  for (char c : name) require(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f);
  require(seen.insert(name).second);
}

void check_models(const std::string& list) {
  size_t start = 0;
  for (;;) {
    const size_t bar = list.find('|', start);
    require(is_valid_label_value(std::string_view(list).substr(start, bar == std::string::npos ? bar : bar - start)));
    if (bar == std::string::npos) return;
    start = bar + 1;
  }
}

void nodes(const std::string& text) {
  std::vector<TraceNode> rows;
  try {
    rows = parse_trace_nodes(text, "fuzz-nodes.csv");
  } catch (const InputError&) {
    return;
  }
  std::set<std::string_view> seen;
  for (const TraceNode& n : rows) {
    check_name(n.name, seen);
    require(is_valid_label_value(n.model));
    require(n.gpus >= 0 && n.gpus <= static_cast<int32_t>(kMaxDevicesPerNode));
    (void)trace_node_object(n);
  }
}

void pods(const std::string& text) {
  std::vector<TracePod> rows;
  try {
    rows = parse_trace_pods(text, "fuzz-pods.csv");
  } catch (const InputError&) {
    return;
  }
  std::set<std::string_view> seen;
  for (const TracePod& p : rows) {
    check_name(p.name, seen);
    if (!p.gpu_spec.empty()) check_models(p.gpu_spec);
    require(trace_pod_gpu_units(p) >= 0);
  }
  // Two GPU nodes of 2 GPUs: the tuning adds at most 5,200 units of
  // clones, and 40 pods are placed; no exception may escape.
  const std::vector<TraceNode> cluster{{"node-a", 64000, 262144, 2, "T4", "fuzz-nodes.csv:2"},
                                       {"node-b", 32000, 131072, 2, "V100M16", "fuzz-nodes.csv:3"}};
  const ReplayTrace trace = make_trace(cluster, rows);
  const std::vector<TypicalTask> typical = replay_typical_tasks(trace);
  ReplayOptions options;
  options.max_pods = 40;
  const SeedRun run = run_replay_seed(trace, typical, replay_policy("fgd"), 42, options);
  // A pod that found no node found none for a node's reason (upstream's
  // FitError), never an engine error (a clone named as a pod of the trace
  // is "in the cache already").
  for (const auto& [message, count] : run.failures) require(message.rfind("0/2 nodes are available", 0) == 0);
}

void lists(const std::string& text) {
  fuzz::expect_only_input_errors([&] {
    const std::vector<uint64_t> seeds = parse_seed_list(text);
    require(std::set<uint64_t>(seeds.begin(), seeds.end()).size() == seeds.size());
  });
  fuzz::expect_only_input_errors([&] {
    for (int p : parse_arrival_points(text)) require(p >= 0 && p <= 130);
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text = bulkscore::fuzz::text_of(data + 1, size - 1);
  switch (data[0] % 3) {
    case 0:
      nodes(text);
      break;
    case 1:
      pods(text);
      break;
    default:
      lists(text);
  }
  return 0;
}
