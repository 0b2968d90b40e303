// End to end: nodes + pods + config -> schedule every pending pod, checking
// the invariants: bad input is an InputError and nothing else; the CPU
// backend's result for every pod equals the node-major reference backend's
// (which takes the kernels' code path); the chosen node is feasible; and the
// engine decides every pod the same with the batch cache as without it.
//
// Input: parts separated by a line "@@": NodeList JSON, PodList JSON,
// KubeSchedulerConfiguration YAML (may be empty: the defaults), and
// optionally the --objects JSON (Services, SharedDeviceGroups...).
#include <cstdlib>

#include "host/engine/backend.hpp"
#include "host/engine/engine.hpp"
#include "host/engine/pod_query.hpp"
#include "host/input/config.hpp"
#include "host/input/k8s_json.hpp"
#include "tests/fuzz/fuzz_util.hpp"
#include "tests/reference_backend.hpp"

namespace {

using namespace bulkscore;

void check_same(const EvalResult& a, const EvalResult& b) {
  if (a.num_feasible != b.num_feasible || a.processed != b.processed || a.chosen != b.chosen ||
      a.chosen_total != b.chosen_total || a.scored != b.scored || a.rejections.counts != b.rejections.counts ||
      a.sorted_nodes != b.sorted_nodes || a.sorted_keys != b.sorted_keys)
    std::abort();
}

void run(const std::string& input) {
  std::string parts[4];
  size_t at = 0;
  for (int i = 0; i < 4; ++i) {
    const size_t sep = i < 3 ? input.find("\n@@\n", at) : std::string::npos;
    parts[i] = input.substr(at, sep == std::string::npos ? std::string::npos : sep - at);
    if (sep == std::string::npos) break;
    at = sep + 4;
  }
  const SchedulerConfig config =
      parts[2].empty() ? default_scheduler_config() : parse_scheduler_config(parts[2], "fuzz-config.yaml");
  std::vector<std::string> names;
  std::vector<ProfilePlan> plans;
  for (const auto& p : config.profiles) {
    names.push_back(p.scheduler_name);
    plans.push_back(make_profile_plan(p));
  }
  Cluster cluster =
      assemble_cluster(parse_nodes_json(parts[0], "fuzz-nodes.json"), parse_pods_json(parts[1], "fuzz-pods.json"),
                       names, "fuzz-nodes.json", "fuzz-pods.json");
  if (!parts[3].empty()) cluster.objects = parse_objects_json(parts[3], "fuzz-objects.json");
  // The batch cache changes nothing (docs/batching.md).
  {
    std::vector<ScheduleResult> results[2];
    for (const Batching batching : {Batching::Off, Batching::Exact}) {
      EngineOptions options{"cpu", TieBreak::Random, 7, 1};
      options.batching = batching;
      Engine engine(config, options);
      engine.load(cluster);
      results[batching == Batching::Exact] = engine.schedule_all(cluster.pending_pods);
    }
    for (size_t i = 0; i < results[0].size(); ++i) {
      const ScheduleResult& a = results[0][i];
      const ScheduleResult& b = results[1][i];
      if (a.node != b.node || a.score != b.score || a.feasible_nodes != b.feasible_nodes || a.code != b.code ||
          a.message != b.message || a.devices != b.devices || a.group_devices != b.group_devices)
        std::abort();
    }
  }
  Snapshot snap = Snapshot::build(cluster.nodes, cluster.running_pods);
  auto cpu = make_cpu_backend(1);
  testutil::ReferenceBackend reference;
  EvalResult want, got;
  for (const Pod& pod : cluster.pending_pods) {
    const ProfilePlan* plan = nullptr;
    for (const auto& p : plans)
      if (p.config.scheduler_name == pod.scheduler_name) plan = &p;
    if (!plan) continue;
    intern_pod_for_plan(snap, pod, *plan);
    PodQuery q = prepare_pod_query(pod, snap, *plan, TieBreak::Random, 1);
    if (q.rejected) continue;
    EvalRequest req;
    req.candidates = q.candidates ? &*q.candidates : nullptr;
    req.want_sorted = true;
    reference.evaluate(snap, q, req, want);
    cpu->evaluate(snap, q, req, got);
    check_same(want, got);
    if (want.chosen >= 0) {
      if (filter_node(snap.view(), q.view(), static_cast<uint32_t>(want.chosen)).plugin != kNoPlugin) std::abort();
      Pod assumed = pod;
      assumed.node_name = snap.node_name(static_cast<uint32_t>(want.chosen));
      snap.add_pod(assumed, static_cast<uint32_t>(want.chosen));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input = fuzz::text_of(data, size);
  fuzz::expect_only_input_errors([&] { run(input); });
  return 0;
}
