// Topology-aware gangs on the Alibaba GPU trace (issue 23, item 4: "measure
// fragmentation-aware choices against the GPU trace where it applies").
//
// The cluster is the trace's 1,213 GPU nodes (bench/replay's loader and
// node objects), in file order, labelled into racks of kRackSize
// consecutive nodes (label kRackKey). The gangs copy the trace's GPU pods
// (openb_pod_list_default.csv, name order): each gang draws a size in
// [kMinMembers, kMaxMembers] and one GPU pod, and all its members are that
// pod (a data-parallel job's workers are alike); minCount = size, and the
// gang requires one rack (PodGroupObject::topology_key, required). Gangs
// are drawn (SplitMix64, one of kSeeds) until the next would take their
// GPU demand above `load` x the cluster's GPU capacity (70% and 100%). The
// same gangs go through Engine::schedule_all once per profile:
//   default  the default profile with GpuShare in PreFilter and Filter (the
//            kube-scheduler's scores: LeastAllocated spreads), every node scored;
//   bestfit  replay's "bestfit" policy (GpuBestFit alone at weight 1000);
//   fgd      replay's "fgd" policy (GpuFragmentation alone, the default
//            trace's typical tasks, devices chosen by fragmentation).
// Reported per profile (counters, and one table after the runs): gangs
// admitted, member pods placed, GPU units allocated, and the cluster's GPU
// fragmentation at the end by replay's measure (replay_gpu_state: the sum
// over nodes of each node's fragmentation against the trace's typical
// tasks), as units and as % of capacity and of the idle units; the table
// ends with each profile's mean over the seeds.
//
// Deterministic (fixed seeds, tie-break first, the exact batch cache; the
// figures are the same run after run, the times are not); one iteration
// each, about 20 s in all on 2 shared cores. The trace is read at run time
// as replay finds it (find_trace_dir: $BULKSCORE_TRACE_DIR, else
// ../shared/data/alibaba-gpu-v2023 from the working directory); without it
// every run is skipped with the reason. A bench only: not in ctest.
//
//   build/bench/bench_gang_trace                              # every run
//   build/bench/bench_gang_trace --benchmark_filter=/seed42/  # one seed
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "bench/generator/generator.hpp"
#include "bench/replay/replay.hpp"
#include "host/common.hpp"
#include "host/engine/engine.hpp"
#include "host/input/config.hpp"
#include "plugins/gpu_share.hpp"

namespace bulkscore {
namespace {

// Racks of 8 nodes: the trace names no racks, and its file order is the
// only order of its machines it keeps, so consecutive nodes share a rack
// (its models come in runs, so racks are mostly of one or two models).
// Eight is a common count of 8-GPU servers per rack, and with 8 nodes even
// a rack of the trace's 2-GPU nodes (16 GPUs) can hold the largest gang of
// one-GPU members (16), so few gangs are impossible by construction (those
// of multi-GPU members, 1% of the trace's GPU pods, may be). 1,213 nodes
// make 152 racks (the last of 5).
constexpr uint32_t kRackSize = 8;
constexpr const char* kRackKey = "example.com/rack";
constexpr uint32_t kMinMembers = 4;
constexpr uint32_t kMaxMembers = 16;
constexpr uint64_t kSeeds[] = {42, 43, 44, 45, 46};
constexpr const char* kNodeList = "openb_node_list_gpu_node.csv";
constexpr const char* kPodList = "openb_pod_list_default.csv";

struct GangTrace {
  Cluster cluster;  // nodes and the gangs' PodGroupObjects
  std::vector<Pod> pending;
  std::vector<TypicalTask> typical;  // the default trace's (FGD's and the measure's)
  int64_t capacity_units = 0;
  int64_t demand_units = 0;  // the gangs' GPU units
  uint32_t gangs = 0;
  uint32_t racks = 0;
};

// Built once per load and seed (reading and drawing are not measured).
const GangTrace* gang_trace(double load, uint64_t seed, std::string& error) {
  static std::vector<std::tuple<double, uint64_t, std::unique_ptr<GangTrace>>> made;
  for (const auto& [l, s, t] : made)
    if (l == load && s == seed) return t.get();
  std::string dir;
  try {
    dir = find_trace_dir("");
  } catch (const Error& e) {
    error = std::string(e.what()) + "; this bench reads $BULKSCORE_TRACE_DIR only";
    return nullptr;
  }
  if (!std::ifstream(dir + "/" + kNodeList) || !std::ifstream(dir + "/" + kPodList)) {
    error = "no " + std::string(kNodeList) + " or " + kPodList + " in " + dir + " (set BULKSCORE_TRACE_DIR)";
    return nullptr;
  }
  const ReplayTrace trace = read_trace(dir + "/" + kNodeList, dir + "/" + kPodList);
  auto t = std::make_unique<GangTrace>();
  t->typical = replay_typical_tasks(trace);
  t->capacity_units = trace.gpu_capacity_units;
  char rack[32];
  for (size_t i = 0; i < trace.nodes.size(); ++i) {
    Node n = trace_node_object(trace.nodes[i]);
    static_cast<void>(std::snprintf(rack, sizeof rack, "rack-%03zu", i / kRackSize));  // zero-padded: name order is file order
    n.labels[kRackKey] = rack;
    t->cluster.nodes.push_back(std::move(n));
  }
  t->racks = static_cast<uint32_t>((trace.nodes.size() + kRackSize - 1) / kRackSize);

  std::vector<const TracePod*> shapes;  // the trace's GPU pods, name order
  for (const TracePod& p : trace.pods)
    if (trace_pod_gpu_units(p) > 0) shapes.push_back(&p);
  if (shapes.empty()) {
    error = "no GPU pod in " + dir + "/" + kPodList;
    return nullptr;
  }
  SplitMix64 rng(seed);
  const auto target = static_cast<int64_t>(load * static_cast<double>(t->capacity_units));
  for (uint32_t g = 0;; ++g) {
    const auto size = static_cast<uint32_t>(kMinMembers + rng.below(kMaxMembers - kMinMembers + 1));
    const TracePod& row = *shapes[rng.below(shapes.size())];
    const int64_t units = int64_t{size} * trace_pod_gpu_units(row);
    if (t->demand_units + units > target) break;
    t->demand_units += units;
    ++t->gangs;
    PodGroupObject obj;
    obj.api = PodGroupObject::Api::kWorkload;
    obj.namespace_name = "ml";
    char name[32];
    static_cast<void>(std::snprintf(name, sizeof name, "job-%04u", g));
    obj.name = name;
    obj.pod_group = "workers";
    obj.gang = true;
    obj.min_count = static_cast<int32_t>(size);
    obj.topology_key = kRackKey;
    obj.topology_required = true;
    for (uint32_t k = 0; k < size; ++k) {
      Pod p = trace_pod_object(row, DeviceModel{}, obj.name + "-" + std::to_string(k));
      p.namespace_name = "ml";
      p.uid = p.name;
      p.workload_name = obj.name;
      p.workload_pod_group = obj.pod_group;
      t->pending.push_back(std::move(p));
    }
    t->cluster.objects.pod_groups.push_back(std::move(obj));
  }
  made.emplace_back(load, seed, std::move(t));
  return std::get<2>(made.back()).get();
}

// The baseline: the default profile as the engine ships it, GpuShare added
// to PreFilter and Filter (as replay adds it), every node scored (as replay).
SchedulerConfig default_gpu_config() {
  SchedulerConfig config = default_scheduler_config();
  ProfileConfig& profile = config.profiles.at(0);
  profile.percentage_of_nodes_to_score = 100;
  profile.pre_filter.push_back(plugins::GpuShare::kName);
  profile.filter.push_back(plugins::GpuShare::kName);
  return config;
}

struct Outcome {
  std::string profile;
  double load = 0;
  uint64_t seed = 0;
  const GangTrace* trace = nullptr;
  uint32_t gangs_admitted = 0;
  uint64_t pods_placed = 0;
  ReplayGpuState gpu;
  double seconds = 0;
};
std::vector<Outcome>& outcomes() {
  static std::vector<Outcome> all;
  return all;
}

void gang_trace_run(benchmark::State& state, const std::string& profile, double load, uint64_t seed) {
  std::string error;
  const GangTrace* t = gang_trace(load, seed, error);
  if (!t) {
    state.SkipWithError(error.c_str());
    return;
  }
  const SchedulerConfig config =
      profile == "default" ? default_gpu_config() : replay_scheduler_config(replay_policy(profile), seed, t->typical);
  EngineOptions options;
  options.backend = "cpu";
  options.tie_break = TieBreak::First;
  options.batching = Batching::Exact;
  options.seed = seed;
  Outcome o;
  o.profile = profile;
  o.load = load;
  o.seed = seed;
  o.trace = t;
  for (auto _ : state) {
    state.PauseTiming();
    Engine engine(config, options);
    engine.load(t->cluster);
    state.ResumeTiming();
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<ScheduleResult> results = engine.schedule_all(t->pending);
    o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.PauseTiming();
    o.pods_placed = 0;
    o.gangs_admitted = 0;
    std::string last_group;
    for (const ScheduleResult& r : results) {
      if (r.group_outcome != GroupOutcome::kAdmitted || r.node < 0) continue;
      ++o.pods_placed;
      if (r.pod_group != last_group) ++o.gangs_admitted;  // a gang's members come together
      last_group = r.pod_group;
    }
    o.gpu = replay_gpu_state(engine.snapshot(), t->typical);
    state.ResumeTiming();
  }
  const auto cap = static_cast<double>(o.gpu.capacity_units);
  state.counters["gangs"] = t->gangs;
  state.counters["gangs_admitted"] = o.gangs_admitted;
  state.counters["pods_placed"] = static_cast<double>(o.pods_placed);
  state.counters["gpu_alloc_pct"] = 100.0 * static_cast<double>(o.gpu.allocated_units) / cap;
  state.counters["frag_pct_capacity"] = 100.0 * o.gpu.frag_units / cap;
  state.counters["frag_pct_idle"] =
      o.gpu.idle_units > 0 ? 100.0 * o.gpu.frag_units / static_cast<double>(o.gpu.idle_units) : 0.0;
  outcomes().push_back(o);
}

// The runs side by side, with the exact figures the counters round, then
// each load and profile's mean over the seeds it ran.
void print_table() {
  if (outcomes().empty()) return;
  const GangTrace* first = outcomes().front().trace;
  std::printf("\nTopology-aware gangs on the GPU trace (%s; %zu nodes in %u racks of %u; gangs of %u-%u members)\n",
              kPodList, first->cluster.nodes.size(), first->racks, kRackSize, kMinMembers, kMaxMembers);
  std::printf("%-5s %-5s %-8s %6s %8s %6s %7s %10s %10s %7s %9s %8s %9s %8s\n", "load", "seed", "profile", "gangs",
              "admitted", "pods", "placed", "demand_u", "alloc_u", "alloc%", "frag_u", "frag%cap", "frag%idle",
              "sched_s");
  struct Sum {
    double load = 0;
    std::string profile;
    int runs = 0;
    double gangs = 0, admitted = 0, pods = 0, placed = 0, demand = 0, alloc = 0, alloc_pct = 0, frag = 0, frag_cap = 0,
           frag_idle = 0, seconds = 0;
  };
  std::vector<Sum> sums;
  for (const Outcome& o : outcomes()) {
    const auto cap = static_cast<double>(o.gpu.capacity_units);
    const double alloc_pct = 100.0 * static_cast<double>(o.gpu.allocated_units) / cap;
    const double frag_cap = 100.0 * o.gpu.frag_units / cap;
    const double frag_idle =
        o.gpu.idle_units > 0 ? 100.0 * o.gpu.frag_units / static_cast<double>(o.gpu.idle_units) : 0.0;
    std::printf("%-5.2f %-5llu %-8s %6u %8u %6zu %7llu %10lld %10lld %7.2f %9.0f %8.2f %9.2f %8.2f\n", o.load,
                static_cast<unsigned long long>(o.seed), o.profile.c_str(), o.trace->gangs, o.gangs_admitted,
                o.trace->pending.size(), static_cast<unsigned long long>(o.pods_placed),
                static_cast<long long>(o.trace->demand_units), static_cast<long long>(o.gpu.allocated_units), alloc_pct,
                o.gpu.frag_units, frag_cap, frag_idle, o.seconds);
    Sum* s = nullptr;
    for (Sum& x : sums)
      if (x.load == o.load && x.profile == o.profile) s = &x;
    if (!s) {
      sums.emplace_back();
      s = &sums.back();
      s->load = o.load;
      s->profile = o.profile;
    }
    ++s->runs;
    s->gangs += o.trace->gangs;
    s->admitted += o.gangs_admitted;
    s->pods += static_cast<double>(o.trace->pending.size());
    s->placed += static_cast<double>(o.pods_placed);
    s->demand += static_cast<double>(o.trace->demand_units);
    s->alloc += static_cast<double>(o.gpu.allocated_units);
    s->alloc_pct += alloc_pct;
    s->frag += o.gpu.frag_units;
    s->frag_cap += frag_cap;
    s->frag_idle += frag_idle;
    s->seconds += o.seconds;
  }
  for (const Sum& s : sums) {
    const double n = s.runs;
    std::printf("%-5.2f %-5s %-8s %6.1f %8.1f %6.0f %7.1f %10.0f %10.0f %7.2f %9.0f %8.2f %9.2f %8.2f\n", s.load,
                "mean", s.profile.c_str(), s.gangs / n, s.admitted / n, s.pods / n, s.placed / n, s.demand / n,
                s.alloc / n, s.alloc_pct / n, s.frag / n, s.frag_cap / n, s.frag_idle / n, s.seconds / n);
  }
}

void register_all() {
  for (const double load : {0.7, 1.0})
    for (const uint64_t seed : kSeeds)
      for (const char* profile : {"default", "bestfit", "fgd"}) {
        const std::string name = "BM_GangTrace/" + std::to_string(static_cast<int>(load * 100)) + "pct/seed" +
                                 std::to_string(seed) + "/" + profile;
        benchmark::RegisterBenchmark(name.c_str(), gang_trace_run, std::string(profile), load, seed)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime()
            ->Iterations(1);
      }
}

}  // namespace
}  // namespace bulkscore
int main(int argc, char** argv) {
  bulkscore::register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  bulkscore::print_table();
  return 0;
}
