// Engine::schedule end to end on the CPU backend: the FitError message
// (v1.35.4 framework/types.go FitError.Error and its TestFitError_Error),
// PreFilter rejections and PreFilterResult absent nodes (schedule_one.go,
// runtime/framework.go RunPreFilterPlugins; schedule_one_test.go
// TestSchedulerSchedulePod), the empty cluster, the lone-feasible-node rule,
// tie-breaking, numFeasibleNodesToFind (schedule_one_test.go
// TestNumFeasibleNodesToFind) and the nextStartNodeIndex rotation.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "host/engine/engine.hpp"
#include "tests/test_util.hpp"

namespace bulkscore {
namespace {

using namespace testutil;

constexpr int64_t kGiB = 1024 * kMiB;

SchedulerConfig config_with(ProfileConfig profile) {
  SchedulerConfig c;
  c.profiles.push_back(std::move(profile));
  return c;
}

ProfileConfig default_profile() { return default_scheduler_config().profiles.at(0); }

std::unique_ptr<Engine> engine_for(const std::vector<Node>& nodes, const std::vector<Pod>& running_pods = {},
                                   ProfileConfig profile = default_profile(), TieBreak tie = TieBreak::First,
                                   uint64_t seed = 0) {
  EngineOptions opts;
  opts.backend = "cpu";
  opts.tie_break = tie;
  opts.seed = seed;
  auto e = std::make_unique<Engine>(config_with(std::move(profile)), opts);
  Cluster c;
  c.nodes = nodes;
  c.running_pods = running_pods;
  e->load(c);
  return e;
}

Node plain(const std::string& name, int64_t cpu = 4000, int64_t memory = 8 * kGiB, int64_t pods = 110) {
  return make_node(name, cpu, memory, pods);
}

Node tainted(const std::string& name) {
  Node n = plain(name);
  n.taints = {taint("dedicated", "infra", "NoSchedule")};
  return n;
}

Pod wants(const std::string& name, int64_t cpu, int64_t memory) {
  return make_pod(name, {container({{"cpu", cpu}, {"memory", memory}})});
}

// ---- FitError message ------------------------------------------------------------------

TEST(FitErrorMessage, HistogramEntriesSortAsStrings) {
  // FitError.Error sorts "<count> <reason>" strings: "10 ..." before "2 ...".
  std::vector<Node> nodes;
  for (int i = 0; i < 10; ++i) nodes.push_back(tainted("t" + std::to_string(i)));
  nodes.push_back(plain("s0", 500));
  nodes.push_back(plain("s1", 500));
  auto e = engine_for(nodes);
  const ScheduleResult r = e->schedule(wants("p", 1000, kGiB));
  EXPECT_EQ(r.node, -1);
  EXPECT_EQ(r.code, Code::Unschedulable);
  EXPECT_EQ(r.feasible_nodes, 0u);
  EXPECT_EQ(r.message, "0/12 nodes are available: 10 node(s) had untolerated taint(s), 2 Insufficient cpu."
            " no new claims to deallocate, preemption: 0/12 nodes are available: 12 Preemption is not helpful for scheduling.");
}

TEST(FitErrorMessage, EachReasonOfAStatusCountsOnce) {
  // A Fit status with two reasons adds one to each.
  auto e = engine_for({plain("a", 500, kGiB), plain("b", 500, 8 * kGiB), plain("c", 500, 8 * kGiB)});
  const ScheduleResult r = e->schedule(wants("p", 1000, 2 * kGiB));
  EXPECT_EQ(r.message, "0/3 nodes are available: 1 Insufficient memory, 3 Insufficient cpu."
            " no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.");
}

TEST(FitErrorMessage, UppercaseSortsBeforeLowercaseAtEqualCounts) {
  std::vector<Node> nodes;
  for (int i = 0; i < 3; ++i) nodes.push_back(plain("cpu" + std::to_string(i), 500));
  for (int i = 0; i < 3; ++i) nodes.push_back(plain("full" + std::to_string(i), 4000, 8 * kGiB, 0));
  for (int i = 0; i < 3; ++i) nodes.push_back(tainted("taint" + std::to_string(i)));
  auto e = engine_for(nodes);
  const ScheduleResult r = e->schedule(wants("p", 1000, kGiB));
  EXPECT_EQ(r.message,
            "0/9 nodes are available: 3 Insufficient cpu, 3 Too many pods, 3 node(s) had untolerated taint(s)."
            " no new claims to deallocate, preemption: 0/9 nodes are available: 3 No preemption victims found for "
            "incoming pod, 6 Preemption is not helpful for scheduling.");
}

TEST(FitErrorMessage, FirstRejectingPluginWins) {
  // A tainted node that also lacks cpu is reported by TaintToleration only:
  // Filter stops at the first rejection, in profile order.
  Node n = tainted("n");
  n.allocatable["cpu"] = 100;
  auto e = engine_for({n});
  EXPECT_EQ(e->schedule(wants("p", 1000, kGiB)).message,
            "0/1 nodes are available: 1 node(s) had untolerated taint(s)."
            " no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.");
}

TEST(FitErrorMessage, PreFilterRejectionPrintsOnlyItsMessage) {
  // TestNodeAffinity "Pod with two conflicting mach field requirements",
  // through the framework: the PreFilter message, no histogram.
  Pod p = wants("p", 100, kMiB);
  require_node_affinity(
      p, {fields_term({requirement("metadata.name", "In", {"a"}), requirement("metadata.name", "In", {"b"})})});
  auto e = engine_for({plain("a"), plain("b"), plain("c")});
  const ScheduleResult r = e->schedule(p);
  EXPECT_EQ(r.node, -1);
  EXPECT_EQ(r.feasible_nodes, 0u);
  EXPECT_EQ(r.message, "0/3 nodes are available: pod affinity terms conflict."
            " no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.");
}

TEST(FitErrorMessage, NodesOutsideThePreFilterResultAreCountedAsAbsent) {
  // Derived from TestSchedulerSchedulePod "test some nodes are filtered out
  // by prefilter plugin and other are filtered out by filter plugin", with
  // NodeAffinity's matchFields as the PreFilterResult.
  Pod p = wants("p", 1000, kGiB);
  require_node_affinity(p, {fields_term({requirement("metadata.name", "In", {"node1"})})});
  auto e = engine_for({plain("node1", 500), plain("node2"), plain("node3")});
  const ScheduleResult r = e->schedule(p);
  EXPECT_EQ(r.message,
            "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]."
            " no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.");
}

TEST(FitErrorMessage, PreFilterResultNamingOnlyUnknownNodes) {
  // TestSchedulerSchedulePod "test prefilter plugin returned an invalid node":
  // the name is dropped, every snapshot node is absent.
  Pod p = wants("p", 100, kMiB);
  require_node_affinity(p, {fields_term({requirement("metadata.name", "In", {"invalid-node"})})});
  auto e = engine_for({plain("1"), plain("2")});
  const ScheduleResult r = e->schedule(p);
  EXPECT_EQ(r.node, -1);
  EXPECT_EQ(r.message, "0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [NodeAffinity]."
            " no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.");
}

TEST(FitErrorMessage, PreFilterResultRestrictsTheChoice) {
  Pod p = wants("p", 100, kMiB);
  require_node_affinity(p, {fields_term({requirement("metadata.name", "In", {"node3"})})});
  auto e = engine_for({plain("node1"), plain("node2"), plain("node3")});
  const ScheduleResult r = e->schedule(p);
  EXPECT_EQ(r.node_name, "node3");
  EXPECT_EQ(r.feasible_nodes, 1u);
}

TEST(FitErrorMessage, EmptyClusterHasNoFitError) {
  // schedulePod returns ErrNoNodesAvailable before any plugin runs.
  auto e = engine_for({});
  const ScheduleResult r = e->schedule(wants("p", 100, kMiB));
  EXPECT_EQ(r.node, -1);
  EXPECT_EQ(r.code, Code::UnschedulableAndUnresolvable);
  EXPECT_EQ(r.message, "no nodes available to schedule pods");
}

TEST(FitErrorMessage, NodeNameAndUnschedulableReasons) {
  Node cordoned = plain("b");
  cordoned.unschedulable = true;
  Pod p = wants("p", 100, kMiB);
  p.node_name = "c";
  auto e = engine_for({plain("a"), cordoned, plain("d")});
  EXPECT_EQ(e->schedule(p).message,
            "0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) didn't match the requested node name."
            " no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.");
}

// ---- a lone feasible node is taken without scoring ---------------------------------------

TEST(Selection, SingleFeasibleNodeIsChosenWithoutScoring) {
  auto e = engine_for({tainted("t0"), plain("ok"), tainted("t1")});
  const Pod p = wants("p", 1000, kGiB);
  // explain scores even a lone node: TaintToleration 3 x 100, Fit
  // LeastAllocated (75 + 87) / 2 = 81, BalancedAllocation int((1 - 0.0625) x 100)
  // = 93, ImageLocality 0; NodeAffinity skipped.
  const Explanation ex = e->explain(p);
  EXPECT_EQ(ex.chosen, "ok");
  EXPECT_EQ(ex.nodes.at(1).total, 474);
  const ScheduleResult r = e->schedule(p);
  EXPECT_EQ(r.node_name, "ok");
  EXPECT_EQ(r.feasible_nodes, 1u);
  EXPECT_EQ(r.score, 0);
}

TEST(Selection, HighestTotalWins) {
  // Same sizes, one node already half full: LeastAllocated and
  // BalancedAllocation both favour the empty one.
  auto e = engine_for({plain("busy"), plain("idle")}, {running("r", "busy", {{"cpu", 2000}, {"memory", 4 * kGiB}})});
  const ScheduleResult r = e->schedule(wants("p", 1000, kGiB));
  EXPECT_EQ(r.node_name, "idle");
  EXPECT_EQ(r.feasible_nodes, 2u);
  EXPECT_EQ(r.score, 474);
}

// ---- tie-breaking ----------------------------------------------------------------------------

TEST(TieBreak, FirstPicksTheLowestIndexAmongEqualTotals) {
  // node "small" scores lower; "x" and "y" tie; First takes "x" (index 1).
  auto e = engine_for({plain("small", 2000, 4 * kGiB), plain("x"), plain("y")});
  const ScheduleResult r = e->schedule(wants("p", 1000, kGiB));
  EXPECT_EQ(r.node, 1);
  EXPECT_EQ(r.node_name, "x");
}

TEST(TieBreak, FirstKeepsPickingTheSameNodeWhileTheTieLasts) {
  // Pods without containers change no score, so the tie never breaks.
  auto e = engine_for({plain("a"), plain("b"), plain("c")});
  for (int i = 0; i < 5; ++i) EXPECT_EQ(e->schedule(make_pod("p" + std::to_string(i))).node_name, "a");
}

std::vector<int32_t> random_picks(uint64_t seed, int pods) {
  std::vector<Node> nodes;
  for (int i = 0; i < 8; ++i) nodes.push_back(plain("n" + std::to_string(i)));
  auto e = engine_for(nodes, {}, default_profile(), TieBreak::Random, seed);
  std::vector<int32_t> picks;
  for (int i = 0; i < pods; ++i) picks.push_back(e->schedule(make_pod("p" + std::to_string(i))).node);
  return picks;
}

TEST(TieBreak, RandomIsReproducibleForTheSameSeed) {
  const auto a = random_picks(42, 64);
  const auto b = random_picks(42, 64);
  EXPECT_EQ(a, b);
  for (int32_t n : a) EXPECT_GE(n, 0);
}

TEST(TieBreak, RandomSpreadsOverTiedNodes) {
  const auto picks = random_picks(42, 64);
  const std::set<int32_t> distinct(picks.begin(), picks.end());
  EXPECT_GE(distinct.size(), 4u) << "64 tied choices over 8 nodes should hit most of them";
}

TEST(TieBreak, RandomDependsOnTheSeed) { EXPECT_NE(random_picks(1, 64), random_picks(2, 64)); }

// ---- numFeasibleNodesToFind ------------------------------------------------------------------

TEST(NumFeasibleNodesToFind, UpstreamTestNumFeasibleNodesToFind) {
  // TestNumFeasibleNodesToFind: percentage unset (0 = adaptive) or 40.
  EXPECT_EQ(num_feasible_nodes_to_find(0, 10, true), 10u)
      << "not set percentageOfNodesToScore and nodes number not more than 50";
  EXPECT_EQ(num_feasible_nodes_to_find(40, 10, true), 10u)
      << "set profile percentageOfNodesToScore and nodes number not more than 50";
  EXPECT_EQ(num_feasible_nodes_to_find(0, 1000, true), 420u)
      << "not set percentageOfNodesToScore and nodes number more than 50";
  EXPECT_EQ(num_feasible_nodes_to_find(40, 1000, true), 400u)
      << "set profile percentageOfNodesToScore and nodes number more than 50";
  EXPECT_EQ(num_feasible_nodes_to_find(0, 6000, true), 300u)
      << "not set percentageOfNodesToScore and nodes number more than 50*125";
  EXPECT_EQ(num_feasible_nodes_to_find(40, 6000, true), 2400u)
      << "set profile percentageOfNodesToScore and nodes number more than 50*125";
}

TEST(NumFeasibleNodesToFind, AdaptiveValuesOfTheSemanticsTable) {
  // k8s-semantics.md §2.2 worked values.
  const std::vector<std::pair<uint32_t, uint32_t>> table = {{100, 100},  {500, 230},   {1000, 420},  {5000, 500},
                                                            {6000, 300}, {15000, 750}, {20000, 1000}};
  for (const auto& [n, want] : table) EXPECT_EQ(num_feasible_nodes_to_find(0, n, true), want) << "n=" << n;
}

TEST(NumFeasibleNodesToFind, FloorsAndSmallClusters) {
  EXPECT_EQ(num_feasible_nodes_to_find(0, 99, true), 99u);
  EXPECT_EQ(num_feasible_nodes_to_find(5, 2000, true), 100u) << "at least 100 nodes once n >= 100";
  EXPECT_EQ(num_feasible_nodes_to_find(0, 2000, true), 680u);
  EXPECT_EQ(num_feasible_nodes_to_find(100, 5000, true), 5000u);
  EXPECT_EQ(num_feasible_nodes_to_find(0, 5000, false), 1u) << "no scoring: the first feasible node will do";
  EXPECT_EQ(num_feasible_nodes_to_find(0, 10, false), 1u);
}

// ---- nextStartNodeIndex rotation ----------------------------------------------------------------

ProfileConfig adaptive_profile() {
  ProfileConfig p = default_profile();
  p.percentage_of_nodes_to_score = 0;
  return p;
}

TEST(Rotation, SamplingWindowAdvancesByTheNodesProcessed) {
  // 200 identical nodes, adaptive percentage: 100 feasible nodes to find.
  // Pods without containers tie everywhere, so First reveals the window's
  // lowest node: [0, 100) -> 0, [100, 200) -> 100, then back to 0.
  std::vector<Node> nodes;
  for (int i = 0; i < 200; ++i) nodes.push_back(plain("n" + std::to_string(i)));
  auto e = engine_for(nodes, {}, adaptive_profile());
  std::vector<int32_t> picks;
  for (int i = 0; i < 3; ++i) {
    const ScheduleResult r = e->schedule(make_pod("p" + std::to_string(i)));
    EXPECT_EQ(r.feasible_nodes, 100u);
    picks.push_back(r.node);
  }
  EXPECT_EQ(picks, (std::vector<int32_t>{0, 100, 0}));
}

TEST(Rotation, RejectedNodesCountAsProcessed) {
  // Nodes 0..49 are tainted. Pod 1 starts at 0: 50 rejected + 100 feasible
  // (50..149) -> start 150. Pod 2 visits 150..199, 0..49 (rejected), 50..99
  // -> start (150 + 150) % 200 = 100. Pod 3 visits 100..199.
  std::vector<Node> nodes;
  for (int i = 0; i < 200; ++i)
    nodes.push_back(i < 50 ? tainted("n" + std::to_string(i)) : plain("n" + std::to_string(i)));
  auto e = engine_for(nodes, {}, adaptive_profile());
  std::vector<int32_t> picks;
  for (int i = 0; i < 3; ++i) {
    const ScheduleResult r = e->schedule(make_pod("p" + std::to_string(i)));
    EXPECT_EQ(r.feasible_nodes, 100u);
    picks.push_back(r.node);
  }
  EXPECT_EQ(picks, (std::vector<int32_t>{50, 50, 100}));
}

TEST(Rotation, FullPercentageEvaluatesEveryNode) {
  std::vector<Node> nodes;
  for (int i = 0; i < 200; ++i)
    nodes.push_back(i < 50 ? tainted("n" + std::to_string(i)) : plain("n" + std::to_string(i)));
  auto e = engine_for(nodes);  // the default profile: percentageOfNodesToScore 100
  for (int i = 0; i < 2; ++i) {
    const ScheduleResult r = e->schedule(make_pod("p" + std::to_string(i)));
    EXPECT_EQ(r.feasible_nodes, 150u);
    EXPECT_EQ(r.node, 50);
  }
}

// ---- warnings are returned, not logged ---------------------------------------------------

// A running pod's required anti-affinity binds the pods it matches
// (InterPodAffinity's symmetry rule): no warning, the rule is enforced.
TEST(EngineWarnings, RunningPodsRequiredAntiAffinityIsEnforcedNotWarnedAbout) {
  Pod guarded = on_node(make_pod("guarded"), "n1");
  PodAffinity anti;
  anti.required.push_back(PodAffinityTerm{LabelSelector{}, {}, "kubernetes.io/hostname", std::nullopt, {}, {}});
  guarded.affinity = Affinity{std::nullopt, std::nullopt, anti};
  Cluster c;
  const auto host = [](const std::string& name) {
    Node n = plain(name);
    n.labels["kubernetes.io/hostname"] = name;
    return n;
  };
  c.nodes = {host("n1"), host("n2")};
  c.running_pods = {guarded, on_node(make_pod("plain"), "n1")};

  EngineOptions opts;
  opts.backend = "cpu";
  Engine engine(config_with(default_profile()), opts);
  EXPECT_TRUE(engine.load(c).empty());
  const ScheduleResult r = engine.schedule(make_pod("incoming"));
  EXPECT_EQ(r.node_name, "n2");
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_TRUE(engine.take_warnings().empty());
  const ScheduleResult blocked = engine.schedule(make_pod("second"));  // n2 is free of the guard's domain too
  EXPECT_EQ(blocked.node_name, "n2");

  Cluster one;
  one.nodes = {host("n1")};
  one.running_pods = c.running_pods;
  Engine single(config_with(default_profile()), opts);
  single.load(one);
  const ScheduleResult none = single.schedule(make_pod("incoming"));
  EXPECT_EQ(none.node, -1);
  EXPECT_EQ(none.message, "0/1 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules."
            " no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for "
            "incoming pod.");
}

// ---- invalid scores (runtime/framework.go RunScorePlugins) ----------------------------

// Upstream's framework checks every normalized score before weighting it
// and fails the pod's cycle on one outside [0, 100]. A negative allocatable
// (the C++ API; a wrapped sum of requests does the same) gets there: on
// node "a" (cpu -1, with a running pod requesting 100m),
// BalancedAllocation's cpu fraction is 100 / -1 = -100, the pod's memory
// fraction 1 GiB / 8 GiB = 0.125, and its score
// int64((1 - |(-100 - 0.125) / 2|) * 100) = int64(-4906.25) = -4906.
const char* const kInvalidBalanced =
    "applying score defaultWeights on Score plugins: plugin \"NodeResourcesBalancedAllocation\" returns an "
    "invalid score -4906, it should in the range of [0, 100] after normalizing";

// The default profile without system-default spreading: signed pods.
ProfileConfig signed_profile() { return parse_scheduler_config(kNoTopologyConfig, "no-topology").profiles.at(0); }

std::unique_ptr<Engine> engine_with(const Cluster& c, Batching batching, uint32_t window,
                                    const std::string& backend = "cpu") {
  EngineOptions opts;
  opts.backend = backend;
  opts.tie_break = TieBreak::First;
  opts.batching = batching;
  opts.window = window;
  auto e = std::make_unique<Engine>(config_with(signed_profile()), opts);
  e->load(c);
  return e;
}

Pod memory_only(const std::string& name, int64_t memory) { return make_pod(name, {container({{"memory", memory}})}); }

void expect_invalid_score_fails_the_cycle(const std::string& backend) {
  Cluster c;
  c.nodes = {plain("a", -1), plain("b")};
  c.running_pods = {on_node(wants("on-a", 100, 0), "a")};
  for (const Batching batching : {Batching::Exact, Batching::Off, Batching::Upstream})
    for (const uint32_t window : {0u, 1u, 4u}) {
      SCOPED_TRACE("batching " + std::to_string(static_cast<int>(batching)) + ", window " + std::to_string(window));
      auto e = engine_with(c, batching, window, backend);
      const std::vector<Pod> pods = {memory_only("p", kGiB), memory_only("q", kGiB), memory_only("r", kGiB)};
      for (const ScheduleResult& r : e->schedule_all(pods)) {
        EXPECT_EQ(r.code, Code::Error);
        EXPECT_EQ(r.node, -1);
        EXPECT_EQ(r.message, kInvalidBalanced);
      }
      // Nothing was assumed: again, it fails the same way (not "in the
      // cache already").
      const ScheduleResult again = e->schedule(pods[0]);
      EXPECT_EQ(again.code, Code::Error);
      EXPECT_EQ(again.message, kInvalidBalanced);
      // explain says so too, beside the scores.
      const Explanation ex = e->explain(pods[0]);
      EXPECT_EQ(ex.chosen, "");
      EXPECT_EQ(ex.message, kInvalidBalanced);
      EXPECT_EQ(ex.feasible_nodes, 2u);
      EXPECT_EQ(ex.batch, batching == Batching::Off ? "off" : "scores_checked");
      const Ranking ranking = e->rank(pods[0], 2);
      EXPECT_EQ(ranking.chosen, "");
      EXPECT_EQ(ranking.message, kInvalidBalanced);
      EXPECT_EQ(ranking.nodes.size(), 2u);
      if (batching != Batching::Off) {
        EXPECT_EQ(e->batch_counters().flushed[static_cast<size_t>(FlushReason::kScoresChecked)], 4u);
      }
      // A pod that takes the one node it fits is not scored, and not checked.
      EXPECT_EQ(e->explain(wants("big", 3000, kGiB)).chosen, "b");
      const ScheduleResult lone = e->schedule(wants("big", 3000, kGiB));
      EXPECT_EQ(lone.code, Code::Success);
      EXPECT_EQ(lone.node_name, "b");
    }
}

TEST(InvalidScore, AScoreOutsideTheRangeFailsTheCycleAsUpstreamsFrameworkDoes) {
  expect_invalid_score_fails_the_cycle("cpu");
}

TEST(InvalidScore, AScoreOutsideTheRangeFailsTheCycleOnCuda) {
  const std::string why = backend_unavailable_reason("cuda");
  if (!why.empty()) GTEST_SKIP() << why;
  expect_invalid_score_fails_the_cycle("cuda");
}

TEST(InvalidScore, ACacheStateFromBeforeTheChangeDoesNotAnswer) {
  // Pods of one shape fill the batch cache on a tame cluster; then node
  // "a" changes to the negative allocatable above. A hit would rescore "a"
  // and rank the invalid score; the pod takes the checked plain path.
  for (const uint32_t window : {0u, 1u, 4u}) {
    Cluster c;
    c.nodes = {plain("a"), plain("b"), plain("c")};
    c.running_pods = {on_node(wants("on-a", 100, 0), "a")};
    auto e = engine_with(c, Batching::Exact, window);
    std::vector<Pod> first;
    for (int i = 0; i < 4; ++i) first.push_back(memory_only("p" + std::to_string(i), kGiB));
    for (const ScheduleResult& r : e->schedule_all(first)) EXPECT_EQ(r.code, Code::Success) << r.message;
    ASSERT_TRUE(e->update_node(plain("a", -1)).ok());
    std::vector<Pod> second;
    for (int i = 0; i < 4; ++i) second.push_back(memory_only("q" + std::to_string(i), kGiB));
    for (const ScheduleResult& r : e->schedule_all(second)) {
      EXPECT_EQ(r.code, Code::Error) << "window " << window;
      EXPECT_EQ(r.message.rfind("applying score defaultWeights on Score plugins: plugin "
                                "\"NodeResourcesBalancedAllocation\" returns an invalid score -",
                                0),
                0u)
          << r.message;
    }
  }
}

TEST(InvalidScore, UpstreamBatchingsHintDoesNotRescoreAnUncheckedNode) {
  // --batching upstream: the last chosen node passes Filter again and
  // would be rescored into the kept list, unchecked. Two pods bound there
  // in between (2^62 cpu each: the node's sum wraps, as Go's does) take
  // its scores out of [0, 100]: the pod takes no hint, and fails. (A node
  // event would drop the kept list.)
  Cluster c;
  c.nodes = {plain("a"), plain("b"), plain("c")};
  auto e = engine_with(c, Batching::Upstream, 1);
  const ScheduleResult first = e->schedule(memory_only("p0", kGiB));
  ASSERT_EQ(first.code, Code::Success) << first.message;
  for (const char* name : {"huge-0", "huge-1"})
    ASSERT_TRUE(e->add_pod(on_node(wants(name, int64_t(1) << 62, 0), first.node_name)).ok());
  const ScheduleResult second = e->schedule(memory_only("p1", kGiB));
  EXPECT_EQ(second.code, Code::Error);
  EXPECT_EQ(second.message.rfind("applying score defaultWeights on Score plugins: plugin ", 0), 0u) << second.message;
  EXPECT_EQ(e->batch_counters().hint_used, 0u);
}

TEST(InvalidScore, WildQuantitiesThatLeaveEveryScoreInRangeChangeNoDecision) {
  // A node with 2^60 bytes of memory, tainted: no pod below reaches it, but
  // its allocatable is beyond the tame range, so every pod takes the
  // checked plain path. Decisions equal those of the cluster without it,
  // whatever the batching and windows.
  Cluster tame;
  for (int i = 0; i < 6; ++i) tame.nodes.push_back(plain("n" + std::to_string(i), 2000 + 500 * i, (4 + i) * kGiB));
  tame.running_pods = {on_node(wants("r0", 700, kGiB), "n2"), on_node(wants("r1", 1500, 3 * kGiB), "n5")};
  Cluster wild = tame;
  Node huge = tainted("huge");
  huge.allocatable["memory"] = int64_t(1) << 60;
  wild.nodes.insert(wild.nodes.begin() + 3, huge);
  std::vector<Pod> pods;
  for (int i = 0; i < 24; ++i) pods.push_back(wants("p" + std::to_string(i), 100 + 75 * (i % 5), (1 + i % 3) * kGiB / 2));
  const auto names = [&](const Cluster& c, Batching batching, uint32_t window) {
    std::vector<std::string> out;
    auto e = engine_with(c, batching, window);
    for (const ScheduleResult& r : e->schedule_all(pods)) {
      EXPECT_EQ(r.code, Code::Success) << r.message;
      out.push_back(r.node_name);
    }
    // Every pod of the wild cluster took the checked path.
    const bool wild_quantities = c.nodes.size() != tame.nodes.size();
    if (batching == Batching::Exact) {
      EXPECT_EQ(e->batch_counters().flushed[static_cast<size_t>(FlushReason::kScoresChecked)],
                wild_quantities ? pods.size() : 0u);
    }
    return out;
  };
  const std::vector<std::string> expected = names(tame, Batching::Off, 1);
  for (const Batching batching : {Batching::Exact, Batching::Off})
    for (const uint32_t window : {0u, 1u, 4u}) {
      EXPECT_EQ(names(wild, batching, window), expected) << static_cast<int>(batching) << " " << window;
      EXPECT_EQ(names(tame, batching, window), expected) << static_cast<int>(batching) << " " << window;
    }
}

TEST(InvalidScore, OnlyPodsWhoseResourceScoresMayLeaveTheRangeAreChecked) {
  Snapshot snap = Snapshot::build({plain("a"), plain("b")}, {});
  const ProfilePlan plan = make_profile_plan(default_profile());
  const auto checked = [&](const Pod& pod) {
    intern_pod_for_plan(snap, pod, plan);
    return prepare_pod_query(pod, snap, plan, TieBreak::First, 0).check_score_range;
  };
  EXPECT_FALSE(checked(wants("plain", 500, kGiB)));
  // A request beyond 2^55 bytes: the scores' products by 100 could wrap.
  EXPECT_TRUE(checked(wants("huge", 500, int64_t(1) << 56)));
  // A node's sum that wrapped (two valid requests of 2^62 cpu) makes every
  // pod checked until it is gone.
  snap.add_pod(on_node(wants("w1", int64_t(1) << 62, 0), "a"), 0);
  snap.add_pod(on_node(wants("w2", int64_t(1) << 62, 0), "a"), 0);
  EXPECT_TRUE(checked(wants("plain", 500, kGiB)));
  ASSERT_TRUE(snap.remove_pod("default", "w1"));
  ASSERT_TRUE(snap.remove_pod("default", "w2"));
  EXPECT_FALSE(checked(wants("plain", 500, kGiB)));
}

}  // namespace
}  // namespace bulkscore
