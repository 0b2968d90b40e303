// FGD's per-state scoring (GpuFragmentation::score_nodes, plugins/gpu_fgd.cpp)
// against the rule node by node, and the shared "fewest free first" device
// choice against the sort it replaced, on random GPU clusters built so that
// many nodes share a state (the same free units in another device order, cpu
// left differing by less than the tasks' steps) and some do not.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "host/engine/engine.hpp"
#include "plugins/gpu_fgd.hpp"
#include "plugins/gpu_share.hpp"
#include "plugins/prepare.hpp"
#include "tests/gpu_test_util.hpp"
#include "tests/random_cluster.hpp"
#include "tests/test_util.hpp"

namespace bulkscore {
namespace {

using namespace testutil;

// A cluster of a few node kinds, each node holding pods drawn from a few
// shapes on devices in random order: many nodes end up in one state.
struct RandomGpuCluster {
  std::vector<Node> nodes;
  std::vector<Pod> running;
  std::vector<TypicalTask> tasks;
};

RandomGpuCluster random_gpu_cluster(SplitMix64& rng, uint32_t num_nodes) {
  static const char* const kCards[] = {"G2", "T4", "V100M32"};
  static const int64_t kGpus[] = {0, 1, 2, 4, 8, 8, 8, 10};  // 10: past what a state holds
  static const int64_t kCpus[] = {32000, 64000, 96000};
  static const int64_t kUnits[] = {1000, 1000, 500};
  static const int32_t kShares[] = {100, 250, 500, 500, 700};
  RandomGpuCluster c;
  for (uint32_t i = 0; i < num_nodes; ++i) {
    const int64_t gpus = kGpus[rng.below(8)];
    const int64_t units = kUnits[rng.below(3)];
    Node n = make_node("n" + std::to_string(i), kCpus[rng.below(3)], 512 * kMiB * 1024, 110);
    n.allocatable[kCount] = gpus;
    n.allocatable[kMilli] = units * gpus;
    if (rng.chance(0.9)) n.labels[kModel] = kCards[rng.below(3)];
    // Pods on it: shares and whole devices on random devices.
    std::vector<int64_t> free(static_cast<size_t>(gpus), units);
    const uint32_t pods = static_cast<uint32_t>(rng.below(gpus > 0 ? 6 : 2));
    for (uint32_t k = 0; k < pods; ++k) {
      const int64_t cpu = 1000 * rng.between(0, 12);
      Pod p = make_pod("r" + std::to_string(i) + "-" + std::to_string(k),
                       {container({{"cpu", cpu}, {"memory", 1024 * kMiB}})});
      p = on_node(std::move(p), n.name);
      if (gpus > 0 && rng.chance(0.85)) {
        const auto d = static_cast<size_t>(rng.below(static_cast<uint64_t>(gpus)));
        const bool whole = rng.chance(0.25);
        const int64_t take = whole ? units : std::min<int64_t>(kShares[rng.below(5)], units - 1);
        if (free[d] < take) continue;
        free[d] -= take;
        p.annotations[kCount] = "1";
        p.annotations[kMilli] = whole ? "1000" : std::to_string(take);
        p.annotations[kIndex] = std::to_string(d);
      }
      c.running.push_back(std::move(p));
    }
    c.nodes.push_back(std::move(n));
  }
  const uint32_t num_tasks = 1 + static_cast<uint32_t>(rng.below(12));
  for (uint32_t t = 0; t < num_tasks; ++t) {
    TypicalTask k;
    k.cpu_milli = 4000 * rng.between(0, 8);
    k.count = static_cast<int32_t>(rng.chance(0.15) ? 0 : rng.chance(0.7) ? 1 : rng.between(2, 8));
    k.milli = k.count == 1 && rng.chance(0.7) ? static_cast<int32_t>(50 * rng.between(1, 20)) : 1000;
    if (k.milli == 1000 && rng.chance(0.5)) k.milli = kWholeDevice;
    k.weight = 1.0 / num_tasks;
    if (rng.chance(0.25)) k.models = {kCards[rng.below(3)]};
    if (rng.chance(0.1)) k.models.push_back("A100");  // no node has it
    c.tasks.push_back(k);
  }
  return c;
}

Pod random_fgd_pod(SplitMix64& rng, uint32_t i) {
  if (rng.chance(0.05)) return make_pod("empty-" + std::to_string(i), {container()});  // requests nothing
  const int64_t cpu = 1000 * rng.between(0, 40);
  Pod p = make_pod("p" + std::to_string(i), {container({{"cpu", cpu}, {"memory", 1024 * kMiB}})});
  if (rng.chance(0.1)) return p;  // no devices
  const bool share = rng.chance(0.6);
  p.annotations[kCount] = share ? "1" : std::to_string(rng.between(1, 8));
  p.annotations[kMilli] = share ? std::to_string(50 * rng.between(1, 19)) : "1000";
  if (rng.chance(0.2)) p.annotations[kModel] = rng.chance(0.7) ? "T4|G2" : "V100M32";
  return p;
}

std::string describe_node(const SnapshotView& s, uint32_t node) {
  std::ostringstream os;
  os << "node " << node << " free [";
  for (uint32_t d = s.device_offsets[node]; d < s.device_offsets[node + 1]; ++d)
    os << (d > s.device_offsets[node] ? " " : "") << s.device_free[d] << "/" << s.device_units[d];
  os << "] cpu left " << node_cpu_left(s, node);
  return os.str();
}

TEST(GpuFgdStates, ScoringByStateEqualsTheRuleOnEveryNode) {
  using plugins::GpuFragmentation;
  uint64_t nodes_scored = 0, pods_scored = 0;
  size_t distinct_states_max = 0;
  for (uint32_t seed = 0; seed < 120; ++seed) {
    SplitMix64 rng = SplitMix64::derive(parity_seed() ^ 0xf6d5ull, seed);
    const uint32_t num_nodes = 1 + static_cast<uint32_t>(rng.below(seed % 5 == 4 ? 3000 : 300));
    const RandomGpuCluster c = random_gpu_cluster(rng, num_nodes);
    Snapshot snap = Snapshot::build(c.nodes, c.running);
    snap.configure_devices(DeviceModel{});
    ProfileConfig profile = score_only_profile(GpuFragmentation::kName);
    profile.gpu_fragmentation_args.typical_tasks = c.tasks;
    const ProfilePlan plan = make_profile_plan(profile);
    const SnapshotView s = snap.view();
    std::vector<uint32_t> all(num_nodes);
    for (uint32_t n = 0; n < num_nodes; ++n) all[n] = n;
    std::vector<int64_t> got(num_nodes);
    for (uint32_t i = 0; i < 12; ++i) {
      const Pod pod = random_fgd_pod(rng, i);
      intern_pod_for_plan(snap, pod, plan, nullptr);
      PodQuery q = prepare_pod_query(pod, snap, plan, TieBreak::First, 0, nullptr);
      ASSERT_FALSE(q.rejected);
      const PodQueryView v = q.view();
      ASSERT_EQ(v.num_scores, 1u);
      const auto& st = plugin_state<GpuFragmentation>(v);
      // Every node, and a shuffled subset (another order of states met).
      std::vector<uint32_t> nodes = all;
      if (i % 2) {
        rng.shuffle(nodes);
        nodes.resize(static_cast<size_t>(rng.below(num_nodes + 1)));
      }
      GpuFragmentation::score_nodes(s, st, v.arena, nodes.data(), static_cast<uint32_t>(nodes.size()), got.data());
      for (size_t k = 0; k < nodes.size(); ++k) {
        const int64_t want = GpuFragmentation::score(s, st, v.arena, nodes[k]);
        ASSERT_EQ(got[k], want) << "seed " << seed << " (parity seed " << parity_seed() << "), pod " << i << " ("
                                << pod.annotations.count(kMilli) << " device demand), " << describe_node(s, nodes[k])
                                << ", position " << k << " of " << nodes.size();
      }
      nodes_scored += nodes.size();
      ++pods_scored;
    }
    // The clusters must repeat states, or the memo is not exercised.
    std::vector<std::vector<int64_t>> states;
    for (uint32_t n = 0; n < num_nodes; ++n) {
      std::vector<int64_t> key(s.device_free + s.device_offsets[n], s.device_free + s.device_offsets[n + 1]);
      std::sort(key.begin(), key.end());
      states.push_back(key);
    }
    std::sort(states.begin(), states.end());
    const auto distinct = static_cast<size_t>(std::unique(states.begin(), states.end()) - states.begin());
    distinct_states_max = std::max(distinct_states_max, distinct);
    if (num_nodes >= 1000) {
      EXPECT_LT(distinct, num_nodes * 3 / 4) << "seed " << seed;
    }
  }
  std::printf("[ fgd states ] %llu node scores over %llu pods; at most %zu distinct device states in a cluster\n",
              static_cast<unsigned long long>(nodes_scored), static_cast<unsigned long long>(pods_scored),
              distinct_states_max);
}

// The Best selection through fewest_free_fitting against the stable sort it
// replaced (fitting devices by free units, ties by index, the first count).
TEST(GpuFgdStates, FewestFreeFirstEqualsAStableSortOfTheFittingDevices) {
  for (uint32_t seed = 0; seed < 2000; ++seed) {
    SplitMix64 rng = SplitMix64::derive(parity_seed() ^ 0xbe57ull, seed);
    const auto n = static_cast<uint32_t>(rng.between(0, 12));
    std::vector<int64_t> free(n);
    std::vector<int32_t> units(n, rng.chance(0.8) ? 1000 : 500);
    for (uint32_t d = 0; d < n; ++d) free[d] = 100 * rng.between(0, units[d] / 100);
    const int32_t count = static_cast<int32_t>(rng.between(1, 4));
    const int32_t milli = count == 1 && rng.chance(0.5) ? static_cast<int32_t>(100 * rng.between(1, 9))
                          : rng.chance(0.5)             ? kWholeDevice
                                                        : 1000;
    std::vector<std::pair<int64_t, int32_t>> fitting;
    for (uint32_t d = 0; d < n; ++d)
      if (free[d] >= units_needed(milli, units[d])) fitting.emplace_back(free[d], static_cast<int32_t>(d));
    std::stable_sort(fitting.begin(), fitting.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<int32_t> want, got;
    if (fitting.size() >= static_cast<size_t>(count))
      for (int32_t i = 0; i < count; ++i) want.push_back(fitting[static_cast<size_t>(i)].second);
    uint64_t taken = 0;
    for (int32_t i = 0; i < count; ++i) {
      const int32_t pick = fewest_free_fitting(free.data(), units.data(), n, milli, taken);
      if (pick < 0) {
        got.clear();
        break;
      }
      taken |= uint64_t(1) << pick;
      got.push_back(pick);
    }
    ASSERT_EQ(got, want) << "seed " << seed << ", " << n << " devices, count " << count << ", milli " << milli;
  }
}

// The engine with FGD on a cluster of identical nodes: the CPU backend
// (scores by state) and the node-major reference rule (node by node) place
// every pod on the same node and devices, batching off and exact.
TEST(GpuFgdStates, EngineDecisionsEqualTheNodeByNodeRule) {
  uint64_t hits[3] = {};
  for (uint32_t seed = 0; seed < 8; ++seed) {
    SplitMix64 rng = SplitMix64::derive(parity_seed() ^ 0xe9e1ull, seed);
    const RandomGpuCluster c = random_gpu_cluster(rng, 200 + static_cast<uint32_t>(rng.below(400)));
    ProfileConfig p = default_scheduler_config().profiles.at(0);
    p.percentage_of_nodes_to_score = 100;
    p.pre_filter.push_back("GpuShare");
    p.filter.push_back("GpuShare");
    p.score = {PluginEntry{plugins::GpuFragmentation::kName, 1000}};
    p.pre_score = {plugins::GpuFragmentation::kName};
    p.gpu_share_args.selection = DeviceSelection::Fragmentation;
    p.gpu_fragmentation_args.typical_tasks = c.tasks;
    SchedulerConfig config;
    config.profiles.push_back(p);
    std::vector<Pod> pods;
    for (uint32_t i = 0; i < 150; ++i) {
      // Runs of one shape (cache hits) between shuffled ones, and shapes
      // coming back (hits on a state kept for them).
      if (i % 3 == 0 || pods.empty())
        pods.push_back(i >= 12 && rng.chance(0.5) ? pods[rng.below(pods.size())] : random_fgd_pod(rng, i));
      else
        pods.push_back(pods.back());
      pods.back().name = "p" + std::to_string(i);
      pods.back().uid = "uid-p" + std::to_string(i);
    }
    std::vector<std::vector<ScheduleResult>> runs;
    const std::pair<Batching, uint32_t> modes[] = {{Batching::Off, 1}, {Batching::Exact, 1}, {Batching::Exact, 4}};
    for (const auto& [batching, states] : modes) {
      EngineOptions o;
      o.backend = "cpu";
      o.tie_break = TieBreak::First;
      o.batching = batching;
      o.batch_states = states;
      Engine e(config, o);
      Cluster cl;
      cl.nodes = c.nodes;
      cl.running_pods = c.running;
      e.load(cl);
      runs.push_back(e.schedule_all(pods));
      hits[runs.size() - 1] += e.batch_counters().hint_used;
    }
    // The node-by-node rule: the same snapshot walked with FGD's score() on
    // every feasible node, the best total then the lower index.
    Snapshot snap = Snapshot::build(c.nodes, c.running);
    snap.configure_devices(DeviceModel{});
    const ProfilePlan plan = make_profile_plan(p);
    for (size_t i = 0; i < pods.size(); ++i) {
      intern_pod_for_plan(snap, pods[i], plan, nullptr);
      PodQuery q = prepare_pod_query(pods[i], snap, plan, TieBreak::First, 0, nullptr);
      int32_t best = -1;
      int64_t best_total = 0;
      uint32_t feasible = 0;
      if (!q.rejected) {
        const PodQueryView v = q.view();
        for (uint32_t n = 0; n < snap.num_nodes(); ++n) {
          if (!filter_node(snap.view(), v, n).feasible()) continue;
          ++feasible;
          const int64_t total = run_score(v.scores[0], snap.view(), v, n) * v.weights[0];
          if (best < 0 || total > best_total) {
            best = static_cast<int32_t>(n);
            best_total = total;
          }
        }
      }
      for (size_t r = 0; r < runs.size(); ++r) {
        const ScheduleResult& got = runs[r][i];
        const std::string mode = r == 0 ? "off" : r == 1 ? "exact" : "exact, four states";
        ASSERT_EQ(got.node, best) << "seed " << seed << ", pod " << i << ", " << mode << ": " << feasible
                                  << " feasible, " << got.message;
        if (best >= 0 && feasible > 1) {
          ASSERT_EQ(got.score, best_total) << "seed " << seed << ", pod " << i << ", " << mode;
        }
        if (best >= 0) {
          ASSERT_EQ(got.devices, runs[0][i].devices) << "seed " << seed << ", pod " << i << ", " << mode;
        }
      }
      if (best >= 0) {
        Pod assumed = pods[i];
        assumed.node_name = snap.node_name(static_cast<uint32_t>(best));
        if (!runs[0][i].devices.empty()) assumed.annotations[kIndex] = format_device_indices(runs[0][i].devices);
        snap.add_pod(assumed, static_cast<uint32_t>(best));
      }
    }
  }
  std::printf("[ fgd states ] pods from the batch cache: %llu with one state, %llu with four\n",
              static_cast<unsigned long long>(hits[1]), static_cast<unsigned long long>(hits[2]));
  // Shapes come back: states kept for them answer where one state misses.
  EXPECT_GT(hits[2], hits[1]);
}

}  // namespace
}  // namespace bulkscore
