// Topology-aware gangs (issue 23, item 4; docs/plugins.md "Topology-aware
// gangs"): the choice of one domain of the key for the whole gang (the
// best that holds it; the annotations are read in test_pod_groups.cpp), the
// required and preferred policies, the members placed before and a
// member's own nodeSelector fixing the domain, the exact undo of attempts
// that fell short, and random clusters checked against a brute-force
// reference that tries the gang in every domain on a fresh copy of the
// cluster.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "host/common.hpp"
#include "host/engine/engine.hpp"
#include "host/engine/executor.hpp"
#include "host/engine/result_json.hpp"
#include "plugins/pod_group.hpp"
#include "tests/gang_engine.hpp"
#include "tests/random_cluster.hpp"
#include "tests/snapshot_check.hpp"
#include "tests/test_util.hpp"

namespace bulkscore {
namespace {

using namespace testutil;        // NOLINT(google-build-using-namespace)
using namespace snapshot_check;  // NOLINT(google-build-using-namespace)

// ---- placement ----------------------------------------------------------------

constexpr const char* kRack = "example.com/rack";

PodGroupObject rack_gang(const std::string& name, int32_t min, bool required) {
  PodGroupObject g;
  g.api = PodGroupObject::Api::kWorkload;
  g.namespace_name = "ml";
  g.name = name;
  g.pod_group = "workers";
  g.gang = true;
  g.min_count = min;
  g.topology_key = kRack;
  g.topology_required = required;
  return g;
}

Pod member(const std::string& workload, int k, int64_t cpu = 1000) {
  Pod p = make_pod(workload + "-" + std::to_string(k), {container({{"cpu", cpu}, {"memory", kGi}})});
  p.namespace_name = "ml";
  p.uid = "uid-" + p.name;
  p.workload_name = workload;
  p.workload_pod_group = "workers";
  return p;
}

std::vector<Pod> members(const std::string& workload, int n, int64_t cpu = 1000) {
  std::vector<Pod> out;
  for (int k = 0; k < n; ++k) out.push_back(member(workload, k, cpu));
  return out;
}

Node rack_node(const std::string& name, const std::string& rack, int64_t cpu) {
  return make_node(name, cpu, 64 * kGi, 110, rack.empty() ? StringMap{} : StringMap{{kRack, rack}});
}

std::unique_ptr<Engine> engine_for(std::vector<Node> nodes, ClusterObjects objects, std::vector<Pod> running = {},
                                   Batching batching = Batching::Exact) {
  return loaded_engine(default_scheduler_config(), serial_cpu_options(batching), std::move(nodes), std::move(objects),
                       std::move(running));
}

std::string rack_of(const Engine& e, const ScheduleResult& r) {
  const int32_t node = e.snapshot().node_index(r.node_name);
  if (node < 0) return "";
  const int32_t key = e.snapshot().string_id(kRack);
  const int32_t value = e.snapshot().view().label_value(static_cast<uint32_t>(node), key);
  return value == kNoId ? "" : e.snapshot().strings().str(value);
}

// Three racks: r1 nearly full (room for 4), r2 empty (room for 16), r3
// small (room for 2). A gang of 4 fits r1 and r2; r2 scores higher
// (LeastAllocated, BalancedAllocation): it is chosen.
std::vector<Node> three_racks() {
  return {rack_node("a1", "r1", 8000), rack_node("a2", "r1", 8000), rack_node("b1", "r2", 8000),
          rack_node("b2", "r2", 8000), rack_node("c1", "r3", 2000), rack_node("x", "", 64000)};
}
std::vector<Pod> three_racks_load() {
  return {running("load-a1", "a1", {{"cpu", 6000}}), running("load-a2", "a2", {{"cpu", 6000}})};
}

TEST(GangTopology, RequiredPicksTheBestDomainThatHoldsTheGang) {
  ClusterObjects o;
  o.pod_groups.push_back(rack_gang("train", 4, true));
  auto e = engine_for(three_racks(), o, three_racks_load());
  const auto r = e->schedule_group(members("train", 4));
  ASSERT_EQ(r.size(), 4u);
  for (const ScheduleResult& res : r) {
    EXPECT_EQ(res.code, Code::Success) << res.message;
    EXPECT_EQ(res.group_outcome, GroupOutcome::kAdmitted);
    EXPECT_EQ(rack_of(*e, res), "r2") << res.node_name;
    EXPECT_EQ(res.group_domain, "example.com/rack=r2");
  }
  std::string line;
  append_schedule_result_json(r[0], line);
  EXPECT_NE(line.find("\"group\":\"admitted\",\"groupDomain\":\"example.com/rack=r2\""), std::string::npos) << line;
}

TEST(GangTopology, AGangLargerThanTheBestScoringDomainGoesWhereItFits) {
  // Six members: r1 holds 4, r2 16, r3 2: only r2.
  ClusterObjects o;
  o.pod_groups.push_back(rack_gang("train", 6, true));
  std::vector<Node> nodes = three_racks();
  auto e = engine_for(nodes, o, three_racks_load());
  for (const ScheduleResult& res : e->schedule_group(members("train", 6))) EXPECT_EQ(rack_of(*e, res), "r2");
}

TEST(GangTopology, RequiredIsRejectedWhenNoDomainHoldsItAndLeavesNoTrace) {
  // Every rack holds 2 of the 3 members by resources... except r1, whose
  // resources would hold 3 but one node is tainted: tried, short, undone.
  std::vector<Node> nodes = {rack_node("a1", "r1", 2000), rack_node("a2", "r1", 2000), rack_node("b1", "r2", 2000),
                             rack_node("c1", "r3", 1000), rack_node("c2", "r3", 1000)};
  nodes[1].taints.push_back(taint("dedicated", "infra", "NoSchedule"));
  ClusterObjects o;
  o.pod_groups.push_back(rack_gang("train", 3, true));
  auto e = engine_for(nodes, o);
  const Decoded before = decode(e->snapshot());
  const auto r = e->schedule_group(members("train", 3));
  ASSERT_EQ(r.size(), 3u);
  for (const ScheduleResult& res : r) {
    EXPECT_EQ(res.node, -1);
    EXPECT_EQ(res.code, Code::Unschedulable);
    EXPECT_EQ(res.group_outcome, GroupOutcome::kRejected);
    EXPECT_EQ(res.group_domain, "");
  }
  // r1 passes the resource check (4000m free for 3000m); r2 (2000m) and r3
  // (2000m) do not and are left out. r1 is tried and places 2 (a1 holds 2;
  // a2 is tainted).
  EXPECT_EQ(r[0].message,
            "pod group \"ml/train/workers\" rejected: no \"example.com/rack\" domain holds minCount 3 (1 tried; "
            "the best, \"r1\", placed 2/3)");
  EXPECT_EQ(r[2].message,
            "pod group \"ml/train/workers\" rejected: no \"example.com/rack\" domain holds minCount 3 (1 tried; "
            "the best, \"r1\", placed 2/3); 0/5 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated "
            "taint(s), 3 node(s) didn't match Pod's node affinity/selector.");
  EXPECT_EQ(first_difference(before, decode(e->snapshot())), "") << "the attempt was not undone exactly";
}

TEST(GangTopology, NoDomainWithTheResourcesIsAnEarlyRejection) {
  std::vector<Node> nodes = {rack_node("a1", "r1", 2000), rack_node("b1", "r2", 2000), rack_node("x", "", 64000)};
  ClusterObjects o;
  o.pod_groups.push_back(rack_gang("train", 3, true));
  auto e = engine_for(nodes, o);
  const auto r = e->schedule_group(members("train", 3));
  EXPECT_EQ(r[0].message,
            "pod group \"ml/train/workers\" rejected: no \"example.com/rack\" domain has the free resources for 3 "
            "members");
  EXPECT_EQ(r[1].message, r[0].message);
  EXPECT_EQ(r[0].code, Code::UnschedulableAndUnresolvable);
  o.pod_groups[0].topology_key = "example.com/row";
  auto e2 = engine_for(nodes, o);
  EXPECT_EQ(e2->schedule_group(members("train", 3))[0].message,
            "pod group \"ml/train/workers\" rejected: no node has the label \"example.com/row\"");
}

TEST(GangTopology, PreferredFallsBackToAnywhere) {
  std::vector<Node> nodes = {rack_node("a1", "r1", 2000), rack_node("b1", "r2", 2000)};
  ClusterObjects o;
  o.pod_groups.push_back(rack_gang("train", 3, false));
  auto e = engine_for(nodes, o);
  std::set<std::string> racks;
  for (const ScheduleResult& res : e->schedule_group(members("train", 3))) {
    EXPECT_EQ(res.code, Code::Success) << res.message;
    EXPECT_EQ(res.group_outcome, GroupOutcome::kAdmitted);
    EXPECT_EQ(res.group_domain, "");
    racks.insert(rack_of(*e, res));
  }
  EXPECT_EQ(racks.size(), 2u);
  // Where a domain holds it, preferred keeps it there.
  ClusterObjects o2;
  o2.pod_groups.push_back(rack_gang("train", 4, false));
  auto e2 = engine_for(three_racks(), o2, three_racks_load());
  for (const ScheduleResult& res : e2->schedule_group(members("train", 4)))
    EXPECT_EQ(res.group_domain, "example.com/rack=r2");
}

TEST(GangTopology, MembersPlacedBeforeFixTheDomain) {
  // A member runs on r1 already: the rest join it there, though r2 scores
  // higher.
  ClusterObjects o;
  o.pod_groups.push_back(rack_gang("train", 3, true));
  Pod placed = member("train", 0);
  placed.node_name = "a1";
  placed.phase = "Running";
  std::vector<Pod> run = three_racks_load();
  run.push_back(placed);
  auto e = engine_for(three_racks(), o, run);
  std::vector<Pod> rest = {member("train", 1), member("train", 2)};
  for (const ScheduleResult& res : e->schedule_group(rest)) {
    EXPECT_EQ(res.code, Code::Success) << res.message;
    EXPECT_EQ(rack_of(*e, res), "r1");
  }
  // Members already in two racks: a required group cannot be in one.
  Pod other = member("train", 3);
  other.node_name = "b1";
  other.phase = "Running";
  run.push_back(other);
  auto e2 = engine_for(three_racks(), o, run);
  EXPECT_EQ(e2->schedule_group({member("train", 4)})[0].message,
            "pod group \"ml/train/workers\" rejected: the members placed before are not in one \"example.com/rack\" "
            "domain");
}

TEST(GangTopology, AMembersOwnNodeSelectorFixesTheDomain) {
  ClusterObjects o;
  o.pod_groups.push_back(rack_gang("train", 2, true));
  auto e = engine_for(three_racks(), o, three_racks_load());
  std::vector<Pod> m = members("train", 2);
  set_node_selector(m[1], {{kRack, "r1"}});
  for (const ScheduleResult& res : e->schedule_group(m)) EXPECT_EQ(rack_of(*e, res), "r1");
  set_node_selector(m[0], {{kRack, "r3"}});
  auto e2 = engine_for(three_racks(), o, three_racks_load());
  EXPECT_NE(e2->schedule_group(m)[0].message.find("leaves no \"example.com/rack\" domain for the group"),
            std::string::npos);
}

TEST(GangTopology, RankGangDomainsGivesTheOrderTried) {
  ClusterObjects o;
  o.pod_groups.push_back(rack_gang("train", 4, true));
  auto e = engine_for(three_racks(), o, three_racks_load());
  const GangDomainRanking r = e->rank_gang_domains(members("train", 4));
  EXPECT_EQ(r.key, kRack);
  EXPECT_TRUE(r.required);
  EXPECT_EQ(r.problem, "");
  // r2 (empty, scores higher) before r1 (busy); r3 (2000m for 4000m) left out.
  ASSERT_EQ(r.domains.size(), 2u);
  EXPECT_EQ(r.domains[0].value, "r2");
  EXPECT_EQ(r.domains[0].nodes, 2u);
  EXPECT_EQ(r.domains[0].feasible, 2u);
  EXPECT_TRUE(r.domains[0].holds_all);
  EXPECT_EQ(r.domains[1].value, "r1");
  // Nothing changed: the gang goes where the ranking said.
  EXPECT_EQ(e->schedule_group(members("train", 4))[0].group_domain, "example.com/rack=r2");
  // A pod in no topology gang: no key.
  EXPECT_EQ(e->rank_gang_domains({make_pod("alone")}).key, "");
}

TEST(GangTopology, ResourcesTheProfileIgnoresPruneNoDomain) {
  // NodeResourcesFit ignores example.com/foo, which no node has: the gang
  // fits, and its domain is not pruned for the resource.
  SchedulerConfig cfg = default_scheduler_config();
  for (ProfileConfig& p : cfg.profiles) p.fit_args.ignored_resources = {"example.com/foo"};
  ClusterObjects o;
  o.pod_groups.push_back(rack_gang("train", 2, true));
  const auto e =
      loaded_engine(cfg, serial_cpu_options(), {rack_node("a1", "r1", 8000), rack_node("a2", "r1", 8000)}, o);
  std::vector<Pod> m = members("train", 2);
  for (Pod& p : m) p.containers[0].requests["example.com/foo"] = 1;
  for (const ScheduleResult& r : e->schedule_group(m)) {
    EXPECT_EQ(r.code, Code::Success) << r.message;
    EXPECT_EQ(r.group_domain, "example.com/rack=r1");
  }
}

TEST(GangTopology, AHeldMemberKeepsItsPlaceWhenTheGroupIsRejected) {
  ClusterObjects o;
  o.pod_groups.push_back(rack_gang("train", 2, true));
  std::vector<Node> nodes = {rack_node("a1", "r1", 2000), rack_node("a2", "r1", 4000)};
  nodes[1].taints.push_back(taint("dedicated", "infra", "NoSchedule"));
  auto e = engine_for(nodes, o);
  std::vector<Pod> m = members("train", 2);
  m[1].containers[0].requests["cpu"] = 1500;
  ASSERT_GE(e->schedule(m[0]).node, 0);  // held already
  const auto r = e->schedule_group(m);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].code, Code::Error);
  EXPECT_EQ(r[0].group_outcome, GroupOutcome::kNone);
  EXPECT_NE(r[0].message.find("is in the cache already"), std::string::npos) << r[0].message;
  EXPECT_EQ(r[1].group_outcome, GroupOutcome::kRejected);
  EXPECT_EQ(e->snapshot().num_pods(), 1u);
}

TEST(GangTopology, AttemptsUndoneCountAsUnschedulable) {
  // Four racks that hold the gang by resources but not by Filter (one node
  // of each tainted): four attempts, each placing 2 of 3 then undone.
  std::vector<Node> nodes;
  for (int k = 0; k < 4; ++k) {
    const std::string rk = "r" + std::to_string(k);
    nodes.push_back(rack_node("a" + rk, rk, 2000));
    nodes.push_back(rack_node("b" + rk, rk, 2000));
    nodes.back().taints.push_back(taint("dedicated", "infra", "NoSchedule"));
  }
  ClusterObjects o;
  o.pod_groups.push_back(rack_gang("train", 3, true));
  auto e = engine_for(nodes, o);
  const auto r = e->schedule_group(members("train", 3));
  EXPECT_EQ(r[0].message,
            "pod group \"ml/train/workers\" rejected: no \"example.com/rack\" domain holds minCount 3 (4 tried; "
            "the best, \"r0\", placed 2/3)");
  const SchedulerMetrics mt = e->metrics();
  EXPECT_EQ(mt.profiles[0].attempts[static_cast<size_t>(AttemptResult::kScheduled)], 0u);
  EXPECT_EQ(mt.profiles[0].attempts[static_cast<size_t>(AttemptResult::kUnschedulable)], 12u);
}

TEST(GangTopology, MessagesNameWhatLeavesNoDomain) {
  ClusterObjects o;
  o.pod_groups.push_back(rack_gang("train", 2, true));
  // The key is a string in the snapshot (a pod's label), but no node has it.
  Pod labelled = running("other", "n1", {{"cpu", 100}});
  labelled.labels[kRack] = "x";
  auto e = engine_for({make_node("n1", 8000, 64 * kGi)}, o, {labelled});
  EXPECT_EQ(e->schedule_group(members("train", 2))[0].message,
            "pod group \"ml/train/workers\" rejected: no node has the label \"example.com/rack\"");
  // A member's nodeSelector value that is a string (a node's name) but no rack.
  auto e2 = engine_for(three_racks(), o, three_racks_load());
  std::vector<Pod> m = members("train", 2);
  set_node_selector(m[0], {{kRack, "a1"}});
  EXPECT_EQ(e2->schedule_group(m)[0].message,
            "pod group \"ml/train/workers\" rejected: pod \"ml/train-0\"'s nodeSelector \"example.com/rack=a1\" "
            "leaves no \"example.com/rack\" domain for the group");
  // A member placed before on a node without the label.
  Pod placed = member("train", 0);
  placed.node_name = "x";
  placed.phase = "Running";
  auto e3 = engine_for(three_racks(), o, {placed});
  EXPECT_EQ(e3->schedule_group({member("train", 1)})[0].message,
            "pod group \"ml/train/workers\" rejected: pod \"ml/train-0\", placed before, is on node \"x\", which "
            "has no label \"example.com/rack\"");
  // One member short of resources everywhere: "member", singular.
  ClusterObjects one;
  one.pod_groups.push_back(rack_gang("train", 1, true));
  auto e4 = engine_for({rack_node("a1", "r1", 500)}, one);
  EXPECT_EQ(e4->schedule_group({member("train", 0)})[0].message,
            "pod group \"ml/train/workers\" rejected: no \"example.com/rack\" domain has the free resources for 1 "
            "member");
}

TEST(GangTopology, ACompactionBetweenAttemptsKeepsTheDomainsByName) {
  // r0 scores best but fails (a tainted node); the snapshot compacts after
  // every event (the undo), renumbering strings; r1 is still found by name.
  std::vector<Node> nodes = {rack_node("a0", "r0", 16000), rack_node("b0", "r0", 16000), rack_node("a1", "r1", 8000),
                             rack_node("b1", "r1", 8000), rack_node("c1", "r1", 8000)};
  nodes[1].taints.push_back(taint("dedicated", "infra", "NoSchedule"));
  EngineOptions opts = serial_cpu_options();
  opts.compaction.dead_share = 0;
  opts.compaction.min_dead = 0;
  ClusterObjects o;
  o.pod_groups.push_back(rack_gang("train", 3, true));
  const auto engine = loaded_engine(default_scheduler_config(), opts, nodes, o);
  Engine& e = *engine;
  std::vector<Pod> m = members("train", 3, 6000);
  for (Pod& p : m) {
    // A label and a spreading selector only these pods use: strings and a
    // matcher that die with the undone members.
    p.labels["only-here"] = "yes";
    TopologySpreadConstraint t;
    t.max_skew = 5;
    t.topology_key = "kubernetes.io/hostname";
    t.when_unsatisfiable = "ScheduleAnyway";
    t.label_selector = LabelSelector{{{"only-here", "yes"}}, {}};
    p.topology_spread_constraints.push_back(t);
  }
  const GangDomainRanking rk = e.rank_gang_domains(m);
  ASSERT_EQ(rk.domains.size(), 2u);
  EXPECT_EQ(rk.domains[0].value, "r0");
  const uint64_t before = e.snapshot().compactions();
  for (const ScheduleResult& r : e.schedule_group(m)) {
    EXPECT_EQ(r.code, Code::Success) << r.message;
    EXPECT_EQ(r.group_domain, "example.com/rack=r1");
  }
  EXPECT_GT(e.snapshot().compactions(), before);
}

TEST(GangTopology, ExplainShowsThePolicy) {
  ClusterObjects o;
  o.pod_groups.push_back(rack_gang("train", 2, true));
  auto e = engine_for(three_racks(), o);
  const std::vector<Pod> m = members("train", 2);
  const PodGroupStatus s = e->pod_group_status(m[0], m);
  EXPECT_EQ(s.topology_key, kRack);
  EXPECT_TRUE(s.topology_required);
}

// ---- random clusters against a brute-force reference ----------------------------

// The engine's verdict on each gang must be what trying the gang in every
// domain on a fresh copy of the cluster says: admitted in domain D only if
// the members placed with the nodeSelector key=D reach the minimum there,
// with exactly those placements; rejected (required) only if no domain
// does; preferred and no domain: the plain all-or-nothing attempt.
struct TopologyCase {
  Cluster cluster;
  std::vector<std::string> racks;
};

TopologyCase topology_case(uint64_t stream) {
  SplitMix64 rng = SplitMix64::derive(parity_seed() ^ 0x70706full, stream);
  ClusterShape shape;
  shape.nodes = static_cast<uint32_t>(rng.between(3, 60));
  shape.pending = static_cast<uint32_t>(rng.between(5, 20));
  TopologyCase t;
  t.cluster = random_cluster(rng, shape, {"default-scheduler"});
  const auto racks = static_cast<uint32_t>(rng.between(2, 6));
  for (uint32_t r = 0; r < racks; ++r) t.racks.push_back("r" + std::to_string(r));
  for (Node& n : t.cluster.nodes)
    if (!rng.chance(0.1)) n.labels[kRack] = t.racks[rng.below(racks)];
  for (Pod& p : t.cluster.pending_pods) p.scheduler_name = "default-scheduler";
  const auto gangs = static_cast<uint32_t>(rng.between(1, 4));
  for (uint32_t g = 0; g < gangs; ++g) {
    const Pod like = t.cluster.pending_pods[rng.below(t.cluster.pending_pods.size())];
    const bool required = rng.chance(0.6);
    // Preferred gangs are sometimes larger than a rack holds (the fallback
    // to anywhere); minimums below the size half the time.
    const auto size = static_cast<uint32_t>(!required && rng.chance(0.3) ? rng.between(8, 24) : rng.between(1, 12));
    const auto min = static_cast<int32_t>(rng.chance(0.5) ? size : rng.between(1, size));
    const std::string name = "gang-" + std::to_string(g);
    PodGroupObject obj = rack_gang(name, min, required);
    obj.namespace_name = like.namespace_name;
    t.cluster.objects.pod_groups.push_back(obj);
    // Some gangs have a member or two running already (on any node: in a
    // rack, or on a node without the label).
    const uint32_t running = rng.chance(0.25) ? static_cast<uint32_t>(rng.between(1, 2)) : 0;
    const uint32_t rack_of_running = static_cast<uint32_t>(rng.below(t.cluster.nodes.size()));
    for (uint32_t k = 0; k < size; ++k) {
      Pod p = like;
      p.name = name + "-" + std::to_string(k);
      p.uid = "uid-" + p.name;
      p.workload_name = name;
      p.workload_pod_group = "workers";
      if (k < running && k < size - 1) {
        // Mostly on one node; sometimes on two (maybe two racks).
        const uint32_t node =
            k == 0 || rng.chance(0.7) ? rack_of_running : static_cast<uint32_t>(rng.below(t.cluster.nodes.size()));
        p.node_name = t.cluster.nodes[node].name;
        p.phase = "Running";
        p.nominated_node_name.clear();
        t.cluster.running_pods.push_back(std::move(p));
        continue;
      }
      t.cluster.pending_pods.push_back(std::move(p));
    }
  }
  return t;
}

SchedulerConfig no_preemption() {
  SchedulerConfig c = default_scheduler_config();
  for (ProfileConfig& p : c.profiles) p.post_filter.clear();
  return c;
}

// A gang tried on a fresh copy of `ref`'s cluster, members restricted to
// `rack` ("" none): their results, and whether the minimum was reached.
struct Trial {
  std::vector<ScheduleResult> results;
  bool admitted = false;
  std::unique_ptr<Engine> engine;
};
Trial trial(const Engine& ref, const Cluster& base, std::vector<Pod> gang, const PodGroupObject& g,
            int64_t running_members, const std::string& rack) {
  Cluster now;
  now.nodes = base.nodes;
  now.objects = base.objects;
  for (uint32_t id = 0; id < ref.snapshot().pod_id_bound(); ++id)
    if (ref.snapshot().has_pod(id)) now.running_pods.push_back(ref.snapshot().pod(id));
  Trial t;
  t.engine = std::make_unique<Engine>(no_preemption(), serial_cpu_options(Batching::Off));
  static_cast<void>(t.engine->load(now));
  int64_t placed = running_members;
  for (size_t k = 0; k < gang.size(); ++k) {
    if (!rack.empty()) {
      gang[k].node_selector[kRack] = rack;
      gang[k].has_node_selector = true;
    }
    t.results.push_back(t.engine->schedule(gang[k]));
    if (t.results.back().node >= 0) ++placed;
    if (placed + static_cast<int64_t>(gang.size() - k - 1) < g.min_count) break;
  }
  t.admitted = placed >= g.min_count;
  return t;
}

void run_topology_case(uint64_t stream, const std::string& backend, Batching batching, uint32_t& in_domain,
                       uint32_t& rejected, uint32_t& anywhere) {
  const TopologyCase tc = topology_case(stream);
  const Cluster& cluster = tc.cluster;
  Engine ref(no_preemption(), serial_cpu_options(Batching::Off));
  EngineOptions opts = serial_cpu_options(batching);
  opts.backend = backend;  // the engine under test; the reference on the CPU
  Engine e(no_preemption(), opts);
  {
    Cluster a = cluster, b = cluster;
    static_cast<void>(e.load(a));
    static_cast<void>(ref.load(b));
  }
  const std::string where = "stream " + std::to_string(stream) + " on " + backend + ", batching " +
                            batching_name(batching) + " (BULKSCORE_PARITY_SEED=" + std::to_string(parity_seed()) + ")";
  for (const QueueEntry& entry : e.queue_order(cluster.pending_pods)) {
    std::vector<Pod> gang;
    for (const uint32_t i : entry.pods) gang.push_back(cluster.pending_pods[i]);
    if (entry.pod_group.empty()) {
      const ScheduleResult got = e.schedule(gang[0]);
      const ScheduleResult want = ref.schedule(gang[0]);
      ASSERT_EQ(got.node_name, want.node_name) << where << ": pod " << got.pod;
      continue;
    }
    const PodGroupMembership m = pod_group_membership(gang[0], cluster.objects);
    ASSERT_GE(m.group, 0);
    const PodGroupObject& g = cluster.objects.pod_groups[static_cast<size_t>(m.group)];
    // The members placed before, and the racks they sit in ("" for a node
    // without the label): they fix the domain.
    int64_t running_members = 0;
    std::set<std::string> running_racks;
    for (uint32_t id = 0; id < ref.snapshot().pod_id_bound(); ++id) {
      if (!ref.snapshot().has_pod(id) || !same_pod_group(ref.snapshot().pod(id), gang[0])) continue;
      ++running_members;
      const Node* node = nullptr;
      for (const Node& n : cluster.nodes)
        if (n.name == ref.snapshot().node_name(ref.snapshot().pod_node(id))) node = &n;
      const auto label = node ? node->labels.find(kRack) : StringMap::const_iterator{};
      running_racks.insert(node && label != node->labels.end() ? label->second : "");
    }
    const GangDomainRanking ranking = e.rank_gang_domains(gang);
    const std::vector<ScheduleResult> got = e.schedule_group(gang);
    ASSERT_EQ(got.size(), gang.size()) << where;
    const std::string context = where + ": gang " + m.key + " (" + std::to_string(gang.size()) + " members, min " +
                                std::to_string(g.min_count) + (g.topology_required ? ", required" : ", preferred") +
                                ")";
    std::map<std::string, bool> admits;
    for (const std::string& rack : tc.racks)
      admits[rack] = gang.size() + static_cast<size_t>(running_members) >= static_cast<size_t>(g.min_count) &&
                     (running_racks.empty() || (running_racks.size() == 1 && *running_racks.begin() == rack)) &&
                     trial(ref, cluster, gang, g, running_members, rack).admitted;
    bool any = false;
    for (const auto& [rack, ok] : admits) any = any || ok;
    std::unique_ptr<Engine> adopted;
    std::vector<ScheduleResult> adopted_results;
    if (got[0].group_outcome == GroupOutcome::kAdmitted) {
      const std::string prefix = std::string(kRack) + "=";
      if (!got[0].group_domain.empty()) {
        const std::string rack = got[0].group_domain.substr(prefix.size());
        ASSERT_TRUE(admits[rack]) << context << ": admitted in " << rack << ", which the reference says cannot hold it";
        // The first domain of rank_gang_domains' order that holds it.
        for (const RankedGangDomain& d : ranking.domains) {
          if (d.value == rack) break;
          ASSERT_FALSE(admits[d.value]) << context << ": admitted in " << rack << ", though " << d.value
                                        << ", ranked before it, holds it";
        }
        Trial t = trial(ref, cluster, gang, g, running_members, rack);
        adopted = std::move(t.engine);
        adopted_results = std::move(t.results);
        ++in_domain;
      } else {
        ASSERT_FALSE(g.topology_required) << context;
        ASSERT_FALSE(any) << context << ": placed anywhere while a domain holds it";
        ++anywhere;
        Trial t = trial(ref, cluster, gang, g, running_members, "");
        ASSERT_TRUE(t.admitted) << context;
        adopted = std::move(t.engine);
        adopted_results = std::move(t.results);
      }
      ASSERT_EQ(adopted_results.size(), got.size()) << context;
      for (size_t k = 0; k < got.size(); ++k) {
        ASSERT_EQ(got[k].node_name, adopted_results[k].node_name) << context << ": member " << k;
        if (got[k].node < 0) continue;
        const uint32_t id = adopted->snapshot().find_pod(gang[k].namespace_name, gang[k].name);
        ASSERT_TRUE(ref.assume_pod(adopted->snapshot().pod(id)).ok()) << context;
      }
    } else {
      ++rejected;
      for (const ScheduleResult& r : got) ASSERT_EQ(r.node, -1) << context;
      if (gang.size() + static_cast<size_t>(running_members) >= static_cast<size_t>(g.min_count)) {
        ASSERT_FALSE(any) << context << ": rejected while a domain holds it";
        if (!g.topology_required) {
          ASSERT_FALSE(trial(ref, cluster, gang, g, running_members, "").admitted) << context;
        }
      }
    }
  }
  EXPECT_EQ(first_difference(decode(ref.snapshot()), decode(e.snapshot())), "") << where;
}

// The engine under test on every backend the build has (cuda where a
// device answers); the reference on the CPU.
TEST(GangTopologyRandom, OneDomainAsTheBruteForceReferenceFindsIt) {
  std::vector<std::string> backends{"cpu"};
  if (backend_unavailable_reason("cuda").empty()) backends.emplace_back("cuda");
  for (const std::string& backend : backends)
    for (const Batching batching : {Batching::Exact, Batching::Off}) {
      uint32_t in_domain = 0, rejected = 0, anywhere = 0;
      for (uint64_t stream = 0; stream < 40; ++stream) {
        run_topology_case(stream, backend, batching, in_domain, rejected, anywhere);
        if (HasFatalFailure()) return;
      }
      EXPECT_GT(in_domain, 5u) << batching_name(batching);
      EXPECT_GT(rejected, 3u) << batching_name(batching);
      EXPECT_GT(anywhere, 0u) << batching_name(batching) << ": no preferred gang fell back to anywhere";
    }
}

}  // namespace
}  // namespace bulkscore
