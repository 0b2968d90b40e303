// The vectorized column loops (issue 24, item 2) against the per-node rules,
// on every SIMD target this machine supports (plugins/simd_dispatch.hpp):
// every score_nodes of the profile (NodeResourcesFit's, BalancedAllocation's,
// TaintToleration's, ImageLocality's) equals score() node by node, as does
// every part of a shared score kernel run for several plugins at once
// (LeastAllocated and BalancedAllocation in one loop), and every
// filter_nodes (NodeResourcesFit, NodeUnschedulable, TaintToleration,
// PodTopologySpread) passes and fails where filter() does, bit for bit, on random clusters of the parity
// configuration's profiles (every scoring strategy and resource list) and on
// nodes with extreme values (allocatable 0, 1, near and past 2^53, overflowing
// products), for contiguous node runs, runs across the loops' block edges,
// and shuffled or gapped lists. The first difference is printed with the
// seed, target, profile, pod and node.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "host/engine/batch_cache.hpp"
#include "host/engine/pod_query.hpp"
#include "host/input/config.hpp"
#include "host/snapshot/snapshot.hpp"
#include "plugins/evaluate.hpp"
#include "plugins/resource_allocation.hpp"
#include "plugins/simd_dispatch.hpp"
#include "tests/random_cluster.hpp"
#include "tests/test_util.hpp"

namespace bulkscore {
namespace {

using testutil::parity_seed;

std::vector<SimdTarget> supported_targets() {
  std::vector<SimdTarget> out;
  for (uint32_t t = 0; t < kNumSimdTargets; ++t)
    if (simd_supported(static_cast<SimdTarget>(t))) out.push_back(static_cast<SimdTarget>(t));
  return out;
}

// Restores the dispatch target a test changed.
struct TargetGuard {
  SimdTarget before = simd_target();
  TargetGuard() = default;
  TargetGuard(const TargetGuard&) = delete;
  TargetGuard& operator=(const TargetGuard&) = delete;
  ~TargetGuard() { set_simd_target(before); }
};

// Node lists: every node (one contiguous run), a run starting mid-block and
// crossing the 256-node block edges, every other node, a shuffled subset.
std::vector<std::vector<uint32_t>> node_lists(uint32_t n, SplitMix64& rng) {
  std::vector<std::vector<uint32_t>> out;
  std::vector<uint32_t> all(n);
  std::iota(all.begin(), all.end(), 0u);
  out.push_back(all);
  if (n > 3) out.emplace_back(all.begin() + 3, all.end());
  std::vector<uint32_t> every_other;
  for (uint32_t i = 0; i < n; i += 2) every_other.push_back(i);
  out.push_back(every_other);
  std::vector<uint32_t> shuffled = all;
  for (size_t i = shuffled.size(); i > 1; --i) std::swap(shuffled[i - 1], shuffled[rng.below(i)]);
  shuffled.resize(shuffled.size() / 2 + (n > 0 ? 1 : 0));
  shuffled.resize(std::min<size_t>(shuffled.size(), n));
  out.push_back(shuffled);
  return out;
}

// The first node where P::score_nodes and P::score differ ("" if none).
template <class P>
std::string first_difference(const Snapshot& snap, const PodQuery& q, const std::vector<uint32_t>& nodes) {
  const SnapshotView s = snap.view();
  const auto& st = state_of<P>(q.header.states);
  std::vector<int64_t> got(nodes.size(), -12345);
  P::score_nodes(s, st, q.arena.data(), nodes.data(), static_cast<uint32_t>(nodes.size()), got.data());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const int64_t want = P::score(s, st, q.arena.data(), nodes[i]);
    if (got[i] != want)
      return std::string(P::kName) + " at list position " + std::to_string(i) + " (node " + std::to_string(nodes[i]) +
             "): score_nodes " + std::to_string(got[i]) + ", score " + std::to_string(want);
  }
  return {};
}

// The first node where P::filter_nodes and P::filter disagree on pass/fail
// ("" if none).
template <class P>
std::string first_filter_difference(const Snapshot& snap, const PodQuery& q, const std::vector<uint32_t>& nodes) {
  const SnapshotView s = snap.view();
  const auto& st = state_of<P>(q.header.states);
  std::vector<uint8_t> got(nodes.size(), 77);
  P::filter_nodes(s, st, q.arena.data(), nodes.data(), static_cast<uint32_t>(nodes.size()), got.data());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const bool fails = !P::filter(s, st, q.arena.data(), nodes[i]).ok();
    if (got[i] != static_cast<uint8_t>(fails))
      return std::string(P::kName) + " at list position " + std::to_string(i) + " (node " + std::to_string(nodes[i]) +
             "): filter_nodes " + std::to_string(got[i]) + ", filter " + (fails ? "fails" : "passes");
  }
  return {};
}

// Every Filter plugin the pod runs that has filter_nodes, against filter().
std::string first_filter_difference(const Snapshot& snap, const PodQuery& q, const std::vector<uint32_t>& nodes,
                                    size_t& compared) {
  std::string out;
  const PodQueryView v = q.view();
  for (uint32_t f = 0; f < v.num_filters; ++f) {
    visit_plugin(v.filters[f], [&](auto p) {
      using P = decltype(p);
      if constexpr (kHasFilterNodes<P>) {
        if (out.empty()) out = first_filter_difference<P>(snap, q, nodes);
        ++compared;
      }
    });
  }
  return out;
}

// How often the resource allocation kernel ran its parts as one loop (the
// default profile's LeastAllocated and BalancedAllocation).
size_t& shared_runs_together() {
  static size_t runs = 0;
  return runs;
}

// How often a shared kernel ran a Filter's part (shared_filter) with its
// scores.
size_t& shared_filter_runs() {
  static size_t runs = 0;
  return runs;
}

// The shared kernels (shared_score) of the profile's score plugins, each
// run once for all the parts that name it, with the parts of the pod's
// Filter plugins that name it too (shared_filter): every score part equals
// its plugin's score() node by node, every Filter part is 1 exactly where
// filter() fails ("" if so).
std::string first_shared_difference(const Snapshot& snap, const PodQuery& q, const ProfilePlan& plan,
                                    const std::vector<uint32_t>& nodes, size_t& compared) {
  const SnapshotView s = snap.view();
  const PodQueryView v = q.view();
  std::vector<SharedScorePart> parts;
  std::vector<uint8_t> ids;
  std::vector<bool> is_filter;
  for (const uint8_t id : plan.score)
    visit_plugin(id, [&](auto p) {
      using P = decltype(p);
      if constexpr (P::kHasScore && kHasSharedScore<P>) {
        SharedScorePart part;
        if (P::shared_score(plugin_state<P>(v), v.arena, part)) {
          parts.push_back(part);
          ids.push_back(id);
          is_filter.push_back(false);
        }
      }
    });
  const size_t score_parts = parts.size();
  for (uint32_t f = 0; f < v.num_filters && !q.rejected; ++f)
    visit_plugin(v.filters[f], [&](auto p) {
      using P = decltype(p);
      if constexpr (P::kHasFilter && kHasSharedFilter<P>) {
        SharedScorePart part;
        if (!P::shared_filter(plugin_state<P>(v), v.arena, part)) return;
        for (size_t k = 0; k < score_parts; ++k)
          if (parts[k].kernel == part.kernel) {
            parts.push_back(part);
            ids.push_back(v.filters[f]);
            is_filter.push_back(true);
            return;
          }
      }
    });
  std::vector<bool> done(parts.size(), false);
  for (size_t lead = 0; lead < parts.size(); ++lead) {
    if (done[lead]) continue;
    std::vector<SharedScorePart> group;
    std::vector<uint8_t> group_ids;
    std::vector<bool> group_filter;
    for (size_t k = lead; k < parts.size(); ++k)
      if (!done[k] && parts[k].kernel == parts[lead].kernel) {
        group.push_back(parts[k]);
        group_ids.push_back(ids[k]);
        group_filter.push_back(is_filter[k]);
        done[k] = true;
      }
    // A Filter's part first in the group where the group has one: the
    // kernel must not depend on where it sits.
    if (std::count(group_filter.begin(), group_filter.end(), true) > 0) {
      ++shared_filter_runs();
      if (shared_filter_runs() % 2 == 0) {
        std::rotate(group.begin(), group.end() - 1, group.end());
        std::rotate(group_ids.begin(), group_ids.end() - 1, group_ids.end());
        std::rotate(group_filter.begin(), group_filter.end() - 1, group_filter.end());
      }
    }
    std::vector<std::vector<int64_t>> got(group.size(), std::vector<int64_t>(nodes.size(), -12345));
    std::vector<int64_t*> outs;
    outs.reserve(got.size());
    for (auto& g : got) outs.push_back(g.data());
    group[0].kernel(s, group.data(), static_cast<uint32_t>(group.size()), nodes.data(),
                    static_cast<uint32_t>(nodes.size()), outs.data());
    if (group[0].kernel == &resource_allocation_scores &&
        resource_allocation_one_loop(group.data(), static_cast<uint32_t>(group.size())))
      ++shared_runs_together();
    for (size_t k = 0; k < group.size(); ++k) {
      std::string d;
      visit_plugin(group_ids[k], [&](auto p) {
        using P = decltype(p);
        if constexpr (P::kHasFilter) {
          if (group_filter[k]) {
            for (size_t i = 0; i < nodes.size() && d.empty(); ++i) {
              const int64_t want = P::filter(s, plugin_state<P>(v), v.arena, nodes[i]).ok() ? 0 : 1;
              if (got[k][i] != want)
                d = std::string(P::kName) + "'s Filter in a shared kernel of " + std::to_string(group.size()) +
                    " parts, at list position " + std::to_string(i) + " (node " + std::to_string(nodes[i]) +
                    "): " + std::to_string(got[k][i]) + ", filter " + (want ? "fails" : "passes");
            }
            return;
          }
        }
        if constexpr (P::kHasScore) {
          for (size_t i = 0; i < nodes.size() && d.empty(); ++i) {
            const int64_t want = P::score(s, plugin_state<P>(v), v.arena, nodes[i]);
            if (got[k][i] != want)
              d = std::string(P::kName) + " in a shared kernel of " + std::to_string(group.size()) +
                  " parts, at list position " + std::to_string(i) + " (node " + std::to_string(nodes[i]) +
                  "): " + std::to_string(got[k][i]) + ", score " + std::to_string(want);
          }
        }
      });
      ++compared;
      if (!d.empty()) return d;
    }
  }
  return {};
}

// How often each plugin's uniform_score said every node scores alike.
std::map<std::string, size_t>& uniform_claims() {
  static std::map<std::string, size_t> claims;
  return claims;
}

// Every pending pod under every profile, every list, both plugins; returns
// the number of comparisons made.
size_t compare_cluster(const Cluster& cluster, const SchedulerConfig& config, SplitMix64& rng,
                       const std::string& where) {
  Snapshot snap = Snapshot::build(cluster.nodes, cluster.running_pods);
  std::vector<ProfilePlan> plans;
  for (const auto& p : config.profiles) plans.push_back(make_profile_plan(p));
  for (const Pod& pod : cluster.pending_pods)
    for (const ProfilePlan& plan : plans) intern_pod_for_plan(snap, pod, plan);
  const auto lists = node_lists(snap.num_nodes(), rng);
  size_t compared = 0;
  for (size_t k = 0; k < cluster.pending_pods.size(); ++k)
    for (const ProfilePlan& plan : plans) {
      const PodQuery q = prepare_pod_query(cluster.pending_pods[k], snap, plan, TieBreak::First, 1);
      for (const auto& list : lists) {
        const std::string at = where + " profile " + plan.config.scheduler_name + " pod " + std::to_string(k) +
                               " list of " + std::to_string(list.size()) + ": ";
        if (!q.rejected) {
          const std::string d = first_filter_difference(snap, q, list, compared);
          if (!d.empty()) {
            ADD_FAILURE() << at << d;
            return compared;
          }
        }
        {
          const std::string d = first_shared_difference(snap, q, plan, list, compared);
          if (!d.empty()) {
            ADD_FAILURE() << at << d;
            return compared;
          }
        }
        // Every score plugin of the profile that has score_nodes, and
        // every uniform_score claim against score() on the list's nodes.
        for (const uint8_t id : plan.score) {
          std::string d;
          visit_plugin(id, [&](auto p) {
            using P = decltype(p);
            if constexpr (kHasScoreNodes<P>) {
              d = first_difference<P>(snap, q, list);
              ++compared;
            }
            if constexpr (kHasUniformScore<P>) {
              const PodQueryView v = q.view();
              const auto& st = plugin_state<P>(v);
              int64_t value = 0;
              if (d.empty() && P::uniform_score(snap.view(), st, v.arena, value)) {
                for (const uint32_t node : list)
                  if (P::score(snap.view(), st, v.arena, node) != value) {
                    d = std::string(P::kName) + " uniform_score says " + std::to_string(value) + ", node " +
                        std::to_string(node) + " scores " + std::to_string(P::score(snap.view(), st, v.arena, node));
                    break;
                  }
                ++uniform_claims()[P::kName];
              }
            }
          });
          if (!d.empty()) {
            ADD_FAILURE() << at << d;
            return compared;
          }
        }
      }
    }
  return compared;
}

// compare_cluster on every SIMD target the machine has, default profile,
// node lists drawn from `stream`; at least `at_least` comparisons each.
// Node "node-<index>" with its hostname label, `cpu` and `memory`
// allocatable and room for 110 pods: the extreme-value tests' nodes.
Node resource_node(uint32_t index, int64_t cpu, int64_t memory) {
  Node n;
  n.name = "node-" + std::to_string(index);
  n.labels["kubernetes.io/hostname"] = n.name;
  n.allocatable = {{"cpu", cpu}, {"memory", memory}, {"pods", 110}};
  return n;
}

void compare_on_every_target(const Cluster& c, const char* what, uint64_t stream, size_t at_least,
                             const SchedulerConfig& config = default_scheduler_config()) {
  for (const SimdTarget t : supported_targets()) {
    set_simd_target(t);
    SplitMix64 lrng = SplitMix64::derive(parity_seed() ^ stream, 1);
    const size_t compared = compare_cluster(
        c, config, lrng,
        std::string("target ") + simd_target_name(t) + ", " + what + ", seed " + std::to_string(parity_seed()) + ",");
    if (::testing::Test::HasFailure()) return;
    EXPECT_GT(compared, at_least) << simd_target_name(t);
  }
}

TEST(SimdDispatch, BaselineIsAlwaysSupportedAndTargetsCanBeChosen) {
  TargetGuard guard;
  EXPECT_TRUE(simd_supported(SimdTarget::Baseline));
  for (const SimdTarget t : supported_targets()) EXPECT_EQ(set_simd_target(t), t) << simd_target_name(t);
  std::printf("[ simd ] targets on this machine:");
  for (const SimdTarget t : supported_targets()) std::printf(" %s", simd_target_name(t));
  std::printf("\n");
}

TEST(SimdDispatch, ScoreNodesEqualsScoreOnRandomClustersOnEveryTarget) {
  TargetGuard guard;
  for (const SimdTarget t : supported_targets()) {
    set_simd_target(t);
    shared_runs_together() = 0;
    shared_filter_runs() = 0;
    size_t compared = 0;
    uint32_t stream = 0;
    for (const uint32_t nodes : {1u, 31u, 257u, 600u, 3000u}) {
      SplitMix64 rng = SplitMix64::derive(parity_seed() ^ 0x51d0ull, ++stream);
      const Cluster cluster =
          testutil::random_cluster(rng, testutil::ClusterShape{nodes, 12, 0.05}, testutil::scheduler_names());
      compared += compare_cluster(cluster, testutil::parity_config(), rng,
                                  std::string("target ") + simd_target_name(t) + ", " + std::to_string(nodes) +
                                      " nodes, seed " + std::to_string(parity_seed()) + ",");
      if (HasFailure()) return;
    }
    EXPECT_GT(compared, 100u) << simd_target_name(t);
    EXPECT_GT(shared_runs_together(), 10u) << simd_target_name(t);
    EXPECT_GT(shared_filter_runs(), 10u) << simd_target_name(t);
  }
}

// uniform_score's claims (every node scores `value`) against score() on every
// node list, on clusters with and without taints: both plugins that make
// them (TaintToleration without taints anywhere, ImageLocality for pods
// whose images no node has) must make some, and each must hold.
TEST(SimdDispatch, UniformScoreHoldsOnEveryNode) {
  uniform_claims().clear();
  uint32_t stream = 0;
  for (const bool taints : {true, false})
    for (const uint32_t nodes : {1u, 31u, 600u}) {
      SplitMix64 rng = SplitMix64::derive(parity_seed() ^ 0x0a1f0ull, ++stream);
      testutil::ClusterShape shape{nodes, 12, 0.05};
      shape.taints = taints;
      const Cluster cluster = testutil::random_cluster(rng, shape, testutil::scheduler_names());
      compare_cluster(cluster, testutil::parity_config(), rng,
                      std::to_string(nodes) + " nodes" + (taints ? "" : " without taints") + ", seed " +
                          std::to_string(parity_seed()) + ",");
      if (HasFailure()) return;
    }
  EXPECT_GT(uniform_claims()["TaintToleration"], 0u);
  EXPECT_GT(uniform_claims()["ImageLocality"], 0u);
}

// One extreme value per block of 256 nodes (the column loops' block), the
// rest ordinary, so that no other lane sends the block to the rule: each
// field the resource loops read (cpu and memory allocatable, their requests
// through a running pod) at each extreme value, in a block of its own. A
// range check that misses one lets that block's vector result through.
TEST(SimdDispatch, ScoreNodesEqualsScoreWithOneExtremeNodePerBlockOnEveryTarget) {
  TargetGuard guard;
  const int64_t values[] = {0,
                            -1,
                            -(int64_t(1) << 40),
                            -(int64_t(1) << 61),
                            1,
                            int64_t(1) << 45,  // the AVX2 loops' bounds: 2^45 for LeastAllocated, 2^52 for BalancedAllocation
                            (int64_t(1) << 45) + 1,
                            (int64_t(1) << 52) / 100 + 1,  // past it, 100 x allocatable no longer converts
                            int64_t(1) << 46,
                            (int64_t(1) << 52) - 1,
                            int64_t(1) << 52,
                            (int64_t(1) << 53) - 1,
                            int64_t(1) << 53,
                            (int64_t(1) << 53) + 1,
                            int64_t(1) << 60,
                            INT64_MAX / 100 + 1,
                            INT64_MAX / 4};  // the rule adds the pod's request: no overflow there
  constexpr uint32_t kValues = sizeof values / sizeof values[0];
  constexpr uint32_t kFields = 4;  // cpu, memory allocatable; cpu, memory requested
  Cluster c;
  for (uint32_t b = 0; b < kFields * kValues; ++b)
    for (uint32_t i = 0; i < 256; ++i) {
      const uint32_t index = b * 256 + i;
      const bool extreme = i == (b * 37) % 256;
      const uint32_t field = b % kFields;
      const int64_t value = values[b / kFields];
      const Node n = resource_node(index, extreme && field == 0 ? value : 4000,
                                   extreme && field == 1 ? value : 32LL << 30);
      c.nodes.push_back(n);
      c.running_pods.push_back(testutil::running(
          "run-" + std::to_string(index), n.name,
          {{"cpu", extreme && field == 2 ? value : 500}, {"memory", extreme && field == 3 ? value : 1LL << 30}}));
    }
  c.pending_pods.push_back(testutil::make_pod("plain", {testutil::container({{"cpu", 100}, {"memory", 1LL << 20}})}));
  c.pending_pods.push_back(testutil::make_pod("none", {testutil::container({})}));  // the non-zero defaults
  compare_on_every_target(c, "one extreme node per block", 0xb10cull, 10);
  // LeastAllocated's general loop (weights other than two ones), whose
  // exact range is its own (2^52 through the bits on AVX2).
  const SchedulerConfig weighted = parse_scheduler_config(R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: LeastAllocated
        resources:
        - {name: cpu, weight: 1}
        - {name: memory, weight: 2}
)",
                                                          "weighted LeastAllocated");
  compare_on_every_target(c, "one extreme node per block, weighted LeastAllocated", 0xb10dull, 10, weighted);
}

// Sums past int64: a node's requests (two running pods of 2^63 - 1) and a
// pod's (two such containers) wrap, as Go's int64 sums do; allocatables
// negative (the C++ API's nodes) or 1, so that fractions reach 10^18 and
// BalancedAllocation's (1 - std) * 100 leaves int64 (Go's amd64 conversion:
// the minimum int64); LeastAllocated divides by negative allocatables. The
// loops send such blocks to the rules, which must give the same values and
// nothing undefined (the sanitizer build runs this; GoArithmetic.* checks
// the helpers' Go values, min int64 / -1 among them).
TEST(SimdDispatch, ScoreNodesEqualsScoreWhenSumsWrapOnEveryTarget) {
  TargetGuard guard;
  const int64_t allocatables[] = {1, -1, INT64_MIN, INT64_MAX, 4000};
  const int64_t requests[] = {0, 1, INT64_MAX / 2 + 1, INT64_MAX};
  SplitMix64 rng = SplitMix64::derive(parity_seed() ^ 0x3a9ull, 1);
  Cluster c;
  for (uint32_t i = 0; i < 600; ++i) {
    const bool extreme = rng.chance(0.3);
    const auto pick_alloc = [&](int64_t usual) { return extreme ? allocatables[rng.below(5)] : usual; };
    const int64_t cpu = pick_alloc(4000);
    const Node n = resource_node(i, cpu, pick_alloc(32LL << 30));
    c.nodes.push_back(n);
    for (uint32_t k = 0; k < (extreme ? 2u : 1u); ++k)
      c.running_pods.push_back(testutil::running(
          "run-" + std::to_string(i) + "-" + std::to_string(k), n.name,
          {{"cpu", extreme ? requests[rng.below(4)] : 500}, {"memory", extreme ? requests[rng.below(4)] : 1LL << 30}}));
  }
  for (uint32_t k = 0; k < 12; ++k) {
    const ResourceList r = {{"cpu", requests[rng.below(4)]}, {"memory", requests[rng.below(4)]}};
    c.pending_pods.push_back(
        testutil::make_pod("pending-" + std::to_string(k), {testutil::container(r), testutil::container(r)}));
  }
  compare_on_every_target(c, "wrapping sums", 0x3a9ull, 20);
}

// Allocatable and requested values around the float64 path's limits: 0, 1,
// 2^53 - 1, 2^53, 2^60, values whose products by 100 overflow, requests past
// allocatable. The loops must fall back to the rule wherever it divides in
// integers.
TEST(SimdDispatch, ScoreNodesEqualsScoreOnExtremeValuesOnEveryTarget) {
  TargetGuard guard;
  const int64_t values[] = {0,
                            1,
                            7,
                            4000,
                            32LL << 30,
                            (int64_t(1) << 53) / 100,
                            (int64_t(1) << 53) / 100 + 1,
                            (int64_t(1) << 53) - 1,
                            int64_t(1) << 53,
                            int64_t(1) << 60,
                            INT64_MAX / 100 + 1,
                            INT64_MAX / 4};
  constexpr size_t kValues = sizeof values / sizeof values[0];
  SplitMix64 rng = SplitMix64::derive(parity_seed() ^ 0xe87e3eull, 1);
  Cluster c;
  for (uint32_t i = 0; i < 700; ++i) {
    // Most nodes ordinary (blocks of them take the vector path), a few extreme.
    const bool extreme = rng.chance(0.1);
    const int64_t cpu = extreme ? values[rng.below(kValues)] : 4000;
    const int64_t mem = extreme ? values[rng.below(kValues)] : 32LL << 30;
    Node n = resource_node(i, cpu, mem);
    if (rng.chance(0.3)) n.allocatable["example.com/foo"] = values[rng.below(kValues)];
    c.nodes.push_back(n);
    if (rng.chance(0.5))
      c.running_pods.push_back(
          testutil::running("run-" + std::to_string(i), n.name,
                            {{"cpu", rng.chance(0.2) ? values[rng.below(kValues)] : 500},
                             {"memory", rng.chance(0.2) ? values[rng.below(kValues)] : 1LL << 30}}));
  }
  for (uint32_t k = 0; k < 16; ++k) {
    ResourceList requests = {{"cpu", values[rng.below(kValues)]}, {"memory", values[rng.below(kValues)]}};
    if (k % 3 == 0) requests["example.com/foo"] = values[rng.below(kValues)];
    if (k % 5 == 0) requests.clear();  // the non-zero defaults
    c.pending_pods.push_back(testutil::make_pod("pending-" + std::to_string(k), {testutil::container(requests)}));
  }
  compare_on_every_target(c, "extreme values", 0x1157ull, 50);
}

// Quotients at, just below and just above whole numbers: LeastAllocated's
// (allocatable - requested) * 100 / allocatable where the node's free
// amount is k% of its allocatable, give or take one unit, for allocatables
// from 1 to 2^53 / 100. The loops' float32 quotient lands on either side of
// the whole number and must be corrected to the rule's.
TEST(SimdDispatch, ScoreNodesEqualsScoreWhereQuotientsAreWholeOnEveryTarget) {
  TargetGuard guard;
  const int64_t sizes[] = {1,
                           3,
                           7,
                           100,
                           1000,
                           4000,
                           65536,
                           1000000007,
                           32LL << 30,
                           1LL << 40,
                           (1LL << 40) + 1,
                           999999999999LL,
                           (int64_t(1) << 53) / 100 - 1,
                           (int64_t(1) << 53) / 100};
  SplitMix64 rng = SplitMix64::derive(parity_seed() ^ 0x9407ull, 1);
  Cluster c;
  for (uint32_t i = 0; i < 2000; ++i) {
    Node n;
    n.name = "node-" + std::to_string(i);
    n.labels["kubernetes.io/hostname"] = n.name;
    int64_t alloc[2], running[2];
    for (int r = 0; r < 2; ++r) {
      // Half from the list, half anywhere below 2^53 / 100 (where float32
      // operands round, and quotients land below whole numbers too).
      const int64_t a = rng.chance(0.5) ? sizes[rng.below(std::size(sizes))]
                                        : 1 + static_cast<int64_t>(rng.below((uint64_t(1) << 53) / 100 - 1));
      const auto k = static_cast<int64_t>(rng.below(101));
      // free = k% of a (rounded down), then one unit either way.
      const int64_t free = std::clamp<int64_t>(
          static_cast<int64_t>((static_cast<__int128>(a) * k) / 100) + static_cast<int64_t>(rng.below(3)) - 1, 0,
          a - 1);
      alloc[r] = a;
      running[r] = a - free - 1;  // the pending pod requests one unit of each
    }
    n.allocatable = {{"cpu", alloc[0]}, {"memory", alloc[1]}, {"pods", 110}};
    c.nodes.push_back(n);
    if (running[0] > 0 || running[1] > 0)
      c.running_pods.push_back(
          testutil::running("run-" + std::to_string(i), n.name, {{"cpu", running[0]}, {"memory", running[1]}}));
  }
  c.pending_pods.push_back(testutil::make_pod("pending", {testutil::container({{"cpu", 1}, {"memory", 1}})}));
  compare_on_every_target(c, "whole quotients", 0x9408ull, 5);
}

// PodTopologySpread's filter_nodes: hard zone and hostname constraints over
// nine zones of uneven counts, nodes whose zone is "" and nodes without
// one, minDomains, both constraints at once.
TEST(SimdDispatch, SpreadFilterNodesEqualsFilterOnEveryTarget) {
  TargetGuard guard;
  SplitMix64 rng = SplitMix64::derive(parity_seed() ^ 0x5b7eadull, 1);
  Cluster c;
  for (uint32_t i = 0; i < 800; ++i) {
    Node n;
    n.name = "node-" + std::to_string(i);
    n.labels["kubernetes.io/hostname"] = n.name;
    const uint64_t z = rng.below(20);
    if (z == 0) n.labels["topology.kubernetes.io/zone"] = "";
    if (z > 1) n.labels["topology.kubernetes.io/zone"] = "zone-" + std::to_string(i % 9);
    n.allocatable = {{"cpu", 64000}, {"memory", 256LL << 30}, {"pods", 110}};
    c.nodes.push_back(n);
    // Uneven counts: zone k's nodes run about k matching pods between them.
    const uint32_t pods = static_cast<uint32_t>(rng.below(1 + i % 9)) / 3;
    for (uint32_t j = 0; j < pods; ++j) {
      Pod p = testutil::running("run-" + std::to_string(i) + "-" + std::to_string(j), n.name, {});
      p.labels["app"] = rng.chance(0.8) ? "web" : "db";
      c.running_pods.push_back(p);
    }
  }
  for (uint32_t k = 0; k < 30; ++k) {
    Pod p = testutil::make_pod("pending-" + std::to_string(k));
    p.labels["app"] = "web";
    const auto constraint = [&](const char* key) {
      TopologySpreadConstraint t;
      t.max_skew = static_cast<int32_t>(1 + rng.below(3));
      t.topology_key = key;
      t.when_unsatisfiable = "DoNotSchedule";
      t.label_selector = LabelSelector{};
      t.label_selector->match_labels["app"] = "web";
      if (rng.chance(0.25)) t.min_domains = static_cast<int32_t>(1 + rng.below(12));
      return t;
    };
    const uint64_t which = k % 3;
    if (which != 1) p.topology_spread_constraints.push_back(constraint("topology.kubernetes.io/zone"));
    if (which != 0) p.topology_spread_constraints.push_back(constraint("kubernetes.io/hostname"));
    c.pending_pods.push_back(p);
  }
  compare_on_every_target(c, "hard spreading", 0x5b7eaeull, 100);
}

// kth_highest (the window states' selection) against a full sort, on every
// target: lengths around the 256-entry blocks, few distinct values (long
// runs of ties) and many, INT64_MIN among them, the highest entry late in a
// block (a block maximum read short would miss it), every k.
TEST(SimdDispatch, KthHighestEqualsTheSortedEntryOnEveryTarget) {
  TargetGuard guard;
  std::vector<int64_t> top;
  for (const SimdTarget t : supported_targets()) {
    set_simd_target(t);
    SplitMix64 rng = SplitMix64::derive(parity_seed() ^ 0x7e5e1ull, static_cast<uint64_t>(t));
    for (const uint32_t n : {1u, 2u, 7u, 255u, 256u, 257u, 600u, 1500u}) {
      for (const uint32_t spread : {3u, 1000u}) {
        std::vector<int64_t> v(n);
        for (int64_t& x : v) x = static_cast<int64_t>(rng.below(spread)) - 500;
        if (n > 5) v[rng.below(n)] = INT64_MIN;
        // Ascending runs: each block's highest entries sit at its end.
        if (spread == 1000u) std::sort(v.begin(), v.begin() + n / 2);
        std::vector<int64_t> sorted = v;
        std::sort(sorted.begin(), sorted.end(), std::greater<int64_t>());
        for (uint32_t k = 1; k <= n; k += 1 + n / 40) {
          ASSERT_EQ(kth_highest(v.data(), n, k, top), sorted[k - 1])
              << "target " << simd_target_name(t) << ", n " << n << ", k " << k << ", seed " << parity_seed();
        }
      }
    }
  }
}

// count_equal and strictly_ascending (a window state's group of the highest
// total, counted block by block in place) against plain loops: lengths
// around the 256-entry blocks, blocks of nothing but the value, blocks
// without it and mixed ones, every prefix.
void count_equal_on_random_blocks(SplitMix64 rng);

TEST(SimdDispatch, CountEqualAndAscendingCheckMatchPlainLoopsOnEveryTarget) {
  TargetGuard guard;
  for (const SimdTarget t : supported_targets()) {
    set_simd_target(t);
    SCOPED_TRACE(simd_target_name(t));
    count_equal_on_random_blocks(SplitMix64::derive(parity_seed() ^ 0x9a7eull, static_cast<uint64_t>(t)));
    if (HasFatalFailure()) return;
  }
}

void count_equal_on_random_blocks(SplitMix64 rng) {
  for (const uint32_t n : {1u, 255u, 256u, 300u, 700u, 777u, 1500u}) {
    std::vector<int64_t> totals(n);
    std::vector<uint32_t> nodes(n);
    for (uint32_t i = 0; i < n; ++i) {
      nodes[i] = 3 * i + static_cast<uint32_t>(rng.below(3));
      const uint32_t block = i / 256;
      // Block 0 all at the value, block 1 none, block 2 all but one, then
      // mixed ones.
      totals[i] = block == 0   ? 7
                  : block == 1 ? 6
                  : block == 2 ? (i == 2 * 256 + 17 ? 6 : 7)
                               : static_cast<int64_t>(5 + rng.below(4));
    }
    uint32_t want = 0;
    for (uint32_t len = 0; len <= n; ++len) {
      ASSERT_EQ(count_equal(totals.data(), len, 7), want) << "n " << n << ", length " << len << ", seed " << parity_seed();
      if (len < n) want += totals[len] == 7 ? 1 : 0;
    }
    EXPECT_TRUE(strictly_ascending(nodes.data(), n)) << n;
    if (n > 1) {
      std::vector<uint32_t> bent = nodes;
      const uint32_t at = 1 + static_cast<uint32_t>(rng.below(n - 1));
      bent[at] = bent[at - 1];  // one repeat anywhere
      EXPECT_FALSE(strictly_ascending(bent.data(), n)) << "n " << n << ", repeat at " << at;
    }
  }
}

}  // namespace
}  // namespace bulkscore
