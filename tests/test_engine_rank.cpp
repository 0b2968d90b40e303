// Engine::rank: the first k entries of the sorted list (total descending,
// node index ascending) with per-plugin scores, the tie at the best total
// and the rejection histogram, checked against explain's full evaluation on
// random clusters, and CUDA against the CPU where a GPU answers.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "host/engine/backend.hpp"
#include "host/engine/engine.hpp"
#include "tests/random_cluster.hpp"

namespace bulkscore {
namespace {

using testutil::parity_seed;

const std::vector<std::string>& rank_schedulers() {
  static const std::vector<std::string> names = {"default-scheduler", "most-allocated", "ratio", "spread-list",
                                                 "seam-probe", "gpu-share", "gpu-fgd", "filter-only"};
  return names;
}

std::string describe(const Ranking& r) {
  std::string s = r.pod + " feasible " + std::to_string(r.feasible_nodes) + " of " +
                  std::to_string(r.evaluated_nodes) + " tied " + std::to_string(r.tied_at_best) + " chosen " +
                  r.chosen + "\n";
  for (const RankedNode& n : r.nodes) {
    s += "  " + n.name + " " + std::to_string(n.total) + ":";
    for (size_t i = 0; i < n.raw.size(); ++i) s += " " + std::to_string(n.raw[i]) + "/" + std::to_string(n.weighted[i]);
    s += "\n";
  }
  for (const RejectionCount& c : r.rejections) s += "  x " + c.plugin + " " + c.reason + " " + std::to_string(c.nodes) + "\n";
  return s + r.message;
}

TEST(EngineRank, FirstKOfTheSortedListWithScoresTiesAndRejections) {
  SplitMix64 rng(parity_seed() ^ 0x7a7a);
  uint64_t ranked = 0, with_ties = 0, unschedulable = 0;
  for (int round = 0; round < 12; ++round) {
    const uint32_t nodes = 1 + static_cast<uint32_t>(rng.below(60));
    Cluster c = testutil::random_cluster(rng, {nodes, 25}, rank_schedulers());
    for (const TieBreak tie : {TieBreak::First, TieBreak::Random}) {
      Engine e(testutil::parity_config(), EngineOptions{"cpu", tie, 5});
      e.load(c);
      for (const Pod& p : c.pending_pods) {
        const uint32_t k = 1 + static_cast<uint32_t>(rng.below(8));
        const Ranking r = e.rank(p, k);
        const Explanation ex = e.explain(p);
        const ScheduleResult peek = e.peek(p);
        const std::string where = "round " + std::to_string(round) + " " + describe(r);
        // The sorted list from explain: feasible nodes by total, then index.
        std::vector<std::pair<int64_t, uint32_t>> sorted;
        for (uint32_t i = 0; i < ex.nodes.size(); ++i)
          if (ex.nodes[i].feasible) sorted.emplace_back(-ex.nodes[i].total, i);
        std::sort(sorted.begin(), sorted.end());
        ASSERT_EQ(r.feasible_nodes, sorted.size()) << where;
        ASSERT_EQ(r.nodes.size(), std::min<size_t>(k, sorted.size())) << where;
        for (size_t i = 0; i < r.nodes.size(); ++i) {
          const NodeExplanation& want = ex.nodes[sorted[i].second];
          ASSERT_EQ(r.nodes[i].name, want.name) << where;
          ASSERT_EQ(r.nodes[i].total, want.total) << where;
          ASSERT_EQ(r.nodes[i].raw.size(), want.scores.size()) << where;
          int64_t sum = 0;
          for (size_t j = 0; j < want.scores.size(); ++j) {
            ASSERT_EQ(r.score_plugins[j], want.scores[j].plugin) << where;
            ASSERT_EQ(r.nodes[i].raw[j], want.scores[j].raw) << where;
            ASSERT_EQ(r.nodes[i].weighted[j], want.scores[j].weighted) << where;
            sum += r.nodes[i].weighted[j];
          }
          ASSERT_EQ(sum, r.nodes[i].total) << where;
        }
        uint32_t tied = 0;
        for (const auto& [neg, i] : sorted) tied += -neg == -sorted.front().first ? 1 : 0;
        ASSERT_EQ(r.tied_at_best, tied) << where;
        ASSERT_EQ(r.chosen, ex.chosen) << where;
        ASSERT_EQ(r.chosen, peek.node_name) << where;
        ASSERT_EQ(r.message, ex.message) << where;
        // explain's tie fields, and rank's chosen entry and place.
        ASSERT_EQ(ex.tied_at_best, r.tied_at_best) << where;
        ASSERT_EQ(ex.tie_break, tie) << where;
        ASSERT_EQ(r.tie_break, tie) << where;
        ASSERT_EQ(ex.seed, 5U) << where;
        ASSERT_EQ(r.profile, p.scheduler_name) << where;
        if (!r.chosen.empty() && !r.score_plugins.empty()) {
          ASSERT_EQ(r.best_total, -sorted.front().first) << where;
          const auto at = std::find_if(sorted.begin(), sorted.end(),
                                       [&](const auto& e) { return ex.nodes[e.second].name == r.chosen; });
          ASSERT_NE(at, sorted.end()) << where;
          ASSERT_EQ(r.chosen_position, static_cast<uint32_t>(at - sorted.begin() + 1)) << where;
          ASSERT_EQ(r.chosen_node.name, r.chosen) << where;
          ASSERT_EQ(r.chosen_node.total, ex.nodes[at->second].total) << where;
        }
        // Named nodes: the verdict explain gives them, and their place.
        std::vector<std::string> names;
        for (int j = 0; j < 3 && !ex.nodes.empty(); ++j) names.push_back(ex.nodes[rng.below(ex.nodes.size())].name);
        const Ranking named = e.rank(p, k, names);
        ASSERT_EQ(named.named.size(), names.size()) << where;
        for (const NodeVerdictExplanation& v : named.named) {
          const auto i = static_cast<size_t>(
              std::find_if(ex.nodes.begin(), ex.nodes.end(), [&](const NodeExplanation& n) { return n.name == v.node.name; }) -
              ex.nodes.begin());
          const NodeExplanation& want = ex.nodes.at(i);
          ASSERT_EQ(v.node.evaluated, want.evaluated) << where << v.node.name;
          ASSERT_EQ(v.node.feasible, want.feasible) << where << v.node.name;
          ASSERT_EQ(v.node.filter_plugin, want.filter_plugin) << where << v.node.name;
          ASSERT_EQ(v.node.filter_code, want.filter_code) << where << v.node.name;
          ASSERT_EQ(v.node.filter_reasons, want.filter_reasons) << where << v.node.name;
          ASSERT_EQ(v.node.total, want.total) << where << v.node.name;
          ASSERT_EQ(v.node.scores.size(), want.scores.size()) << where << v.node.name;
          for (size_t j = 0; j < want.scores.size(); ++j) {
            ASSERT_EQ(v.node.scores[j].plugin, want.scores[j].plugin) << where;
            ASSERT_EQ(v.node.scores[j].raw, want.scores[j].raw) << where;
            ASSERT_EQ(v.node.scores[j].normalized, want.scores[j].normalized) << where;
            ASSERT_EQ(v.node.scores[j].weighted, want.scores[j].weighted) << where;
          }
          uint32_t position = 0;
          for (size_t j = 0; j < sorted.size(); ++j)
            if (sorted[j].second == i) position = static_cast<uint32_t>(j + 1);
          ASSERT_EQ(v.position, want.feasible ? position : 0U) << where << v.node.name;
        }
        // The named verdicts change nothing else.
        ASSERT_EQ(describe(named), describe(r)) << where;
        // Every evaluated node is feasible or counted once per rejecting
        // (plugin, reason bin); at least one reason per infeasible node.
        uint64_t rejected = 0;
        std::map<std::string, uint64_t> by_plugin;
        for (const RejectionCount& x : r.rejections) by_plugin[x.plugin] += x.nodes;
        for (const NodeExplanation& n : ex.nodes)
          if (n.evaluated && !n.feasible) ++rejected;
        uint64_t counted = 0;
        for (const auto& [plugin, nodes_rejected] : by_plugin) counted += nodes_rejected;
        if (!ex.prefilter.empty() && r.nodes.empty() && r.evaluated_nodes == 0 && !r.message.empty()) continue;
        ASSERT_GE(counted, rejected) << where;
        ranked += 1;
        with_ties += r.tied_at_best > 1 ? 1 : 0;
        unschedulable += r.chosen.empty() ? 1 : 0;
      }
    }
  }
  // The test saw what it is about.
  EXPECT_GT(ranked, 300U);
  EXPECT_GT(with_ties, 10U);
  EXPECT_GT(unschedulable, 5U);
}

// A name that is not a node is bad input.
TEST(EngineRank, UnknownNodeNameIsAnInputError) {
  SplitMix64 rng(parity_seed() ^ 0x7a7c);
  Cluster c = testutil::random_cluster(rng, {5, 3}, rank_schedulers());
  Engine e(testutil::parity_config(), EngineOptions{"cpu", TieBreak::Random, 1});
  e.load(c);
  EXPECT_THROW(e.rank(c.pending_pods.front(), 3, {"no-such-node"}), InputError);
}

// A profile's tieBreak (the configuration's bulkscore extension) decides
// its pods as EngineOptions::tie_break would, whatever the engine's; the
// batch cache keeps it exact with profiles of both kinds; CUDA agrees.
TEST(EngineRank, ProfileTieBreakDecidesAsTheEngineOption) {
  const auto run = [](const SchedulerConfig& config, TieBreak tie, Batching batching, const std::string& backend,
                      const Cluster& c) {
    EngineOptions o{backend, tie, 11};
    o.batching = batching;
    Engine e(config, o);
    e.load(c);
    std::string out;
    for (const Pod& p : c.pending_pods) {
      const ScheduleResult r = e.schedule(p);
      out += r.pod + " " + r.node_name + " " + std::to_string(r.score) + " " + std::to_string(r.feasible_nodes) + "\n";
    }
    return out;
  };
  SplitMix64 rng(parity_seed() ^ 0x7a7d);
  uint64_t placed = 0;
  for (int round = 0; round < 6; ++round) {
    const uint32_t nodes = 1 + static_cast<uint32_t>(rng.below(80));
    Cluster c = testutil::random_cluster(rng, {nodes, 40}, rank_schedulers());
    SchedulerConfig all_first = testutil::parity_config();
    for (ProfileConfig& p : all_first.profiles) p.tie_break = ProfileTieBreak::kFirst;
    const std::string want = run(testutil::parity_config(), TieBreak::First, Batching::Off, "cpu", c);
    EXPECT_EQ(run(all_first, TieBreak::Random, Batching::Off, "cpu", c), want) << round;
    EXPECT_EQ(run(all_first, TieBreak::Random, Batching::Exact, "cpu", c), want) << round;
    // Half the profiles first, half random: the cache decides as no cache.
    SchedulerConfig mixed = testutil::parity_config();
    for (size_t i = 0; i < mixed.profiles.size(); ++i)
      mixed.profiles[i].tie_break = i % 2 ? ProfileTieBreak::kRandom : ProfileTieBreak::kFirst;
    const std::string off = run(mixed, TieBreak::First, Batching::Off, "cpu", c);
    EXPECT_EQ(run(mixed, TieBreak::First, Batching::Exact, "cpu", c), off) << round;
    if (backend_unavailable_reason("cuda").empty()) {
      EXPECT_EQ(run(mixed, TieBreak::First, Batching::Exact, "cuda", c), off) << round;
    }
    placed += static_cast<uint64_t>(std::count(want.begin(), want.end(), '\n'));
  }
  EXPECT_GT(placed, 100U);
}

// rank on the CUDA backend equals rank on the CPU (a GPU machine).
TEST(EngineRank, CudaRankEqualsTheCpuRank) {
  const std::string why = backend_unavailable_reason("cuda");
  if (!why.empty()) GTEST_SKIP() << why;
  SplitMix64 rng(parity_seed() ^ 0x7a7b);
  for (const uint32_t nodes : {1U, 33U, 1000U, 5000U}) {
    Cluster c = testutil::random_cluster(rng, {nodes, 20}, rank_schedulers());
    Engine cpu(testutil::parity_config(), EngineOptions{"cpu", TieBreak::Random, 9});
    Engine cuda(testutil::parity_config(), EngineOptions{"cuda", TieBreak::Random, 9});
    cpu.load(c);
    cuda.load(c);
    for (const Pod& p : c.pending_pods) ASSERT_EQ(describe(cpu.rank(p, 10)), describe(cuda.rank(p, 10))) << nodes;
  }
}

}  // namespace
}  // namespace bulkscore
