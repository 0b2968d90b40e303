// DefaultPreemption as explain and rank show it: each of upstream's five
// criteria (and bulkscore's node-index rule) deciding a crafted case, the
// candidates best first with their keys, and, on random clusters, the dry
// run nominating what schedule() then does, with the same victims.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "host/engine/engine.hpp"
#include "host/input/config.hpp"
#include "tests/random_cluster.hpp"
#include "tests/test_util.hpp"

namespace bulkscore {
namespace {

using testutil::container;
using testutil::make_pod;
using testutil::parity_seed;

Node node_of(const std::string& name, int64_t cpu) {
  Node n;
  n.name = name;
  n.labels["kubernetes.io/hostname"] = name;
  n.allocatable = {{"cpu", cpu}, {"memory", 64LL << 30}, {"pods", 110}};
  return n;
}

Pod with_priority(Pod p, int32_t priority) {
  p.priority = priority;
  p.has_priority = true;
  return p;
}

Pod cpu_pod(const std::string& name, int64_t cpu, const std::string& node = "", int32_t priority = 0,
            int64_t start_s = 0) {
  Pod p = make_pod(name, {container({{"cpu", cpu}})});
  p.namespace_name = "default";
  p.node_name = node;
  p.phase = node.empty() ? "Pending" : "Running";
  if (start_s) p.start_time_ns = start_s * 1000000000LL;
  return with_priority(std::move(p), priority);
}

std::unique_ptr<Engine> make_engine(const std::vector<Node>& nodes, const std::vector<Pod>& running,
                                    ClusterObjects objects = {}) {
  auto e = std::make_unique<Engine>(default_scheduler_config(), EngineOptions{"cpu", TieBreak::First, 7});
  Cluster c;
  c.nodes = nodes;
  c.running_pods = running;
  c.objects = std::move(objects);
  e->load(std::move(c));
  return e;
}

// The dry run of a 2-cpu pod of priority 1000 against `running` on nodes
// of 2 cpu each.
PreemptionExplanation dry_run(const std::vector<std::string>& nodes, const std::vector<Pod>& running,
                              ClusterObjects objects = {}) {
  std::vector<Node> ns;
  for (const std::string& n : nodes) ns.push_back(node_of(n, 2000));
  auto e = make_engine(ns, running, std::move(objects));
  const Explanation ex = e->explain(cpu_pod("hi", 2000, "", 1000));
  EXPECT_TRUE(ex.preemption.has_value());
  return ex.preemption.value_or(PreemptionExplanation{});
}

TEST(PreemptionExplain, EachCriterionDecidesItsCase) {
  // One candidate.
  {
    const auto p = dry_run({"a"}, {cpu_pod("v", 2000, "a", 10)});
    EXPECT_EQ(p.nominated_node, "a");
    EXPECT_EQ(p.decided_by, PreemptionCriterion::kOnlyCandidate);
    ASSERT_EQ(p.candidates.size(), 1u);
    EXPECT_EQ(p.candidates[0].victims.size(), 1u);
  }
  // 1: fewest PDB violations, though b's victim is the more important.
  {
    ClusterObjects o;
    PodDisruptionBudget b;
    b.namespace_name = "default";
    b.name = "protect-a";
    b.selector = LabelSelector{{{"app", "a"}}, {}};
    o.pdbs.push_back(b);
    Pod va = cpu_pod("va", 2000, "a", 10);
    va.labels["app"] = "a";
    const auto p = dry_run({"a", "b"}, {va, cpu_pod("vb", 2000, "b", 500)}, o);
    EXPECT_EQ(p.nominated_node, "b");
    EXPECT_EQ(p.decided_by, PreemptionCriterion::kPdbViolations);
    ASSERT_EQ(p.candidates.size(), 2u);
    EXPECT_EQ(p.candidates[1].pdb_violations, 1);
    EXPECT_EQ(p.left_after, (std::vector<uint32_t>{1, 1, 1, 1, 1}));
  }
  // 2: the lowest priority of the most important victim.
  {
    const auto p = dry_run(
        {"a", "b"}, {cpu_pod("va", 1000, "a", 10), cpu_pod("va2", 1000, "a", 400), cpu_pod("vb", 2000, "b", 300)});
    EXPECT_EQ(p.nominated_node, "b");
    EXPECT_EQ(p.decided_by, PreemptionCriterion::kHighestPriority);
    EXPECT_EQ(p.candidates[0].highest_priority, 300);
    EXPECT_EQ(p.candidates[1].highest_priority, 400);
  }
  // 3: the smallest sum with each priority offset by 2^31: b's single
  // victim (10) beats a's two (10 and -5) though a's plain sum is smaller.
  {
    const auto p = dry_run({"a", "b"},
                           {cpu_pod("va", 1000, "a", 10), cpu_pod("va2", 1000, "a", -5), cpu_pod("vb", 2000, "b", 10)});
    EXPECT_EQ(p.nominated_node, "b");
    EXPECT_EQ(p.decided_by, PreemptionCriterion::kPrioritySum);
    EXPECT_EQ(p.candidates[0].priority_sum, 10);
    EXPECT_EQ(p.candidates[0].offset_priority_sum, 10 + (int64_t{1} << 31));
    EXPECT_EQ(p.candidates[1].priority_sum, 5);
    EXPECT_EQ(p.candidates[1].offset_priority_sum, 5 + (int64_t{1} << 32));
  }
  // 4: fewest victims, reached only where the offset sums are equal: a
  // second victim of priority -2^31 adds nothing to a's.
  {
    const auto p = dry_run(
        {"a", "b"}, {cpu_pod("va", 1000, "a", 10), cpu_pod("va2", 1000, "a", INT32_MIN), cpu_pod("vb", 2000, "b", 10)});
    EXPECT_EQ(p.nominated_node, "b");
    EXPECT_EQ(p.decided_by, PreemptionCriterion::kVictims);
    EXPECT_EQ(p.candidates[0].offset_priority_sum, p.candidates[1].offset_priority_sum);
    EXPECT_EQ(p.left_after, (std::vector<uint32_t>{2, 2, 2, 1, 1}));
  }
  // 5: the latest start among the victims of the highest priority.
  {
    const auto p = dry_run({"a", "b"}, {cpu_pod("va", 2000, "a", 10, 1000), cpu_pod("vb", 2000, "b", 10, 2000)});
    EXPECT_EQ(p.nominated_node, "b");
    EXPECT_EQ(p.decided_by, PreemptionCriterion::kStartTime);
    EXPECT_EQ(p.candidates[0].earliest_start_ns, 2000 * 1000000000LL);
    EXPECT_EQ(p.candidates[1].earliest_start_ns, 1000 * 1000000000LL);
  }
  // Then bulkscore's rule: the lowest node index (upstream: any).
  {
    const auto p = dry_run({"a", "b", "c"}, {cpu_pod("va", 2000, "a", 10, 1000), cpu_pod("vb", 2000, "b", 10, 1000),
                                             cpu_pod("vc", 2000, "c", 10, 1000)});
    EXPECT_EQ(p.nominated_node, "a");
    EXPECT_EQ(p.decided_by, PreemptionCriterion::kNodeIndex);
    EXPECT_EQ(p.left_after, (std::vector<uint32_t>{3, 3, 3, 3, 3}));
    EXPECT_EQ(p.candidates[1].node, "b");
    EXPECT_EQ(p.candidates[2].node, "c");
  }
}

TEST(PreemptionExplain, NotEligibleAndNoCandidateAreSaid) {
  auto engine = make_engine({node_of("a", 2000)}, {cpu_pod("v", 2000, "a", 10)});
  Engine& e = *engine;
  Pod never = cpu_pod("never", 2000, "", 1000);
  never.preemption_policy = "Never";
  const Explanation ex = e.explain(never);
  ASSERT_TRUE(ex.preemption.has_value());
  EXPECT_EQ(ex.preemption->not_eligible, "not eligible due to preemptionPolicy=Never.");
  EXPECT_TRUE(ex.preemption->nominated_node.empty());
  EXPECT_NE(ex.message.find("preemption: not eligible due to preemptionPolicy=Never."), std::string::npos)
      << ex.message;
  const Explanation low = e.explain(cpu_pod("low", 2000, "", 5));
  ASSERT_TRUE(low.preemption.has_value());
  EXPECT_EQ(low.preemption->potential_nodes, 1u);
  EXPECT_EQ(low.preemption->dry_run_nodes, 1u);
  EXPECT_TRUE(low.preemption->candidates.empty());
  EXPECT_NE(low.message.find("No preemption victims found for incoming pod"), std::string::npos) << low.message;
  // A pod that fits has no preemption part; neither has a profile without
  // PostFilter plugins.
  EXPECT_FALSE(e.explain(cpu_pod("small", 0, "", 0)).preemption.has_value());
  SchedulerConfig config = default_scheduler_config();
  for (ProfileConfig& p : config.profiles) p.post_filter.clear();
  Engine plain(config, EngineOptions{"cpu", TieBreak::First, 7});
  Cluster c;
  c.nodes = {node_of("a", 2000)};
  c.running_pods = {cpu_pod("v", 2000, "a", 10)};
  plain.load(std::move(c));
  EXPECT_FALSE(plain.explain(cpu_pod("hi", 2000, "", 1000)).preemption.has_value());
  EXPECT_FALSE(plain.rank(cpu_pod("hi", 2000, "", 1000), 3).preemption.has_value());
}

// On random clusters, explain's and rank's dry run nominate what schedule
// then does, with the same victims and violations, and explain's message
// is schedule's for the pods left unschedulable. Nothing explain does
// changes a decision.
TEST(PreemptionExplain, DryRunNominatesWhatScheduleDoes) {
  const uint64_t seed = parity_seed();
  std::mt19937_64 rng(seed);
  const auto pick = [&](auto... values) {
    const std::vector<int64_t> v{values...};
    return v[rng() % v.size()];
  };
  size_t preempted = 0;
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE("seed " + std::to_string(seed) + " round " + std::to_string(round));
    std::vector<Node> nodes;
    const int num_nodes = 2 + static_cast<int>(rng() % 7);
    for (int i = 0; i < num_nodes; ++i) nodes.push_back(node_of("n" + std::to_string(i), 4000));
    std::vector<Pod> running;
    for (int i = 0; i < num_nodes * 3; ++i) {
      Pod p = cpu_pod("r" + std::to_string(i), pick(500, 1000, 1500), "n" + std::to_string(rng() % num_nodes),
                      static_cast<int32_t>(pick(0, 10, 10, 100, 1000)), 1000 + static_cast<int64_t>(rng() % 5));
      p.labels["app"] = std::string(1, static_cast<char>('a' + rng() % 3));
      running.push_back(p);
    }
    ClusterObjects objects;
    for (const char* app : {"a", "b"}) {
      PodDisruptionBudget b;
      b.namespace_name = "default";
      b.name = app;
      b.selector = LabelSelector{{{"app", app}}, {}};
      b.disruptions_allowed = static_cast<int32_t>(rng() % 2);
      b.current_healthy = 3;
      b.desired_healthy = 3 - b.disruptions_allowed;
      objects.pdbs.push_back(b);
    }
    auto engine = make_engine(nodes, running, objects);
    Engine& e = *engine;
    for (int i = 0; i < 12; ++i) {
      const Pod pod =
          cpu_pod("p" + std::to_string(i), pick(1000, 2000, 4000), "", static_cast<int32_t>(pick(0, 100, 1000, 5000)));
      const Explanation ex = e.explain(pod);
      const Ranking rk = e.rank(pod, 3);
      const ScheduleResult r = e.schedule(pod);
      ASSERT_EQ(ex.preemption.has_value(), rk.preemption.has_value());
      if (r.nominated_node.empty()) {
        EXPECT_TRUE(!ex.preemption || ex.preemption->nominated_node.empty());
        if (r.node < 0) {
          EXPECT_EQ(ex.message, r.message);
          EXPECT_EQ(rk.message, r.message);
        }
        continue;
      }
      ++preempted;
      ASSERT_TRUE(ex.preemption.has_value());
      const PreemptionExplanation& p = *ex.preemption;
      EXPECT_EQ(p.nominated_node, r.nominated_node);
      EXPECT_EQ(rk.preemption->nominated_node, r.nominated_node);
      EXPECT_EQ(rk.preemption->candidates.size(), p.candidates.size());
      ASSERT_FALSE(p.candidates.empty());
      const PreemptionCandidate& best = p.candidates.front();
      EXPECT_EQ(best.node, r.nominated_node);
      EXPECT_EQ(best.pdb_violations, r.pdb_violations);
      std::vector<std::string> victims;
      for (const PreemptionVictim& v : best.victims) victims.push_back(v.pod);
      std::sort(victims.begin(), victims.end());
      EXPECT_EQ(victims, r.victims);
      // The deciding criterion is the first to leave one candidate.
      ASSERT_EQ(p.left_after.size(), 5u);
      const auto decided = static_cast<size_t>(p.decided_by);
      if (p.candidates.size() == 1) {
        EXPECT_EQ(p.decided_by, PreemptionCriterion::kOnlyCandidate);
      } else if (p.decided_by == PreemptionCriterion::kNodeIndex) {
        EXPECT_GT(p.left_after.back(), 1u);
      } else {
        EXPECT_EQ(p.left_after[decided - 1], 1u);
        for (size_t k = 0; k + 1 < decided; ++k) EXPECT_GT(p.left_after[k], 1u);
      }
      // Best first: no candidate after the first is better on the keys.
      for (size_t k = 1; k < p.candidates.size(); ++k) {
        const PreemptionCandidate& c = p.candidates[k];
        const auto key = [](const PreemptionCandidate& x) {
          return std::make_tuple(x.pdb_violations, x.highest_priority, x.offset_priority_sum, x.victims.size(),
                                 -x.earliest_start_ns, x.node_index);
        };
        EXPECT_LT(key(p.candidates[k - 1]), key(c));
      }
    }
  }
  EXPECT_GT(preempted, 20u) << "the random clusters should make pods preempt";
}

}  // namespace
}  // namespace bulkscore
