// Gang scheduling all or nothing (issue 23, items 3 and 6): the queue order,
// the early rejections and Permit's quorum as Kubernetes v1.35's
// GangScheduling (and v1.36's, for pods linked by spec.schedulingGroup) and
// scheduler-plugins' Coscheduling decide them (their
// unit-test tables, carried over where they translate to a bulk run), the
// undo of a gang that falls short, and random gang workloads checked pod
// by pod against a plain reference that tries each group on a copy of the
// cluster, without batching, and keeps the copy's placements only when the
// group reached its minimum.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

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

PodGroupObject workload_group(const std::string& ns, const std::string& workload, const std::string& group,
                              int32_t min_count) {
  PodGroupObject g;
  g.api = PodGroupObject::Api::kWorkload;
  g.namespace_name = ns;
  g.name = workload;
  g.pod_group = group;
  g.gang = min_count > 0;  // 0: policy.basic
  g.min_count = min_count;
  return g;
}

PodGroupObject coscheduling_group(const std::string& ns, const std::string& name, int32_t min_member,
                                  ResourceList min_resources = {}) {
  PodGroupObject g;
  g.api = PodGroupObject::Api::kCoscheduling;
  g.namespace_name = ns;
  g.name = name;
  g.gang = true;
  g.min_count = min_member;
  g.min_resources = std::move(min_resources);
  return g;
}

// A standalone PodGroup (scheduling.k8s.io/v1alpha2, v1.36); min_count 0:
// schedulingPolicy.basic.
PodGroupObject standalone_group(const std::string& ns, const std::string& name, int32_t min_count) {
  PodGroupObject g;
  g.api = PodGroupObject::Api::kPodGroup;
  g.namespace_name = ns;
  g.name = name;
  g.gang = min_count > 0;
  g.min_count = min_count;
  return g;
}

// A pod with v1.36's spec.schedulingGroup.podGroupName.
Pod scheduling_group_pod(const std::string& ns, const std::string& name, const std::string& group, int64_t cpu = 1000) {
  Pod p = make_pod(name, {container({{"cpu", cpu}})});
  p.namespace_name = ns;
  p.scheduling_group = group;
  return p;
}

Pod workload_pod(const std::string& ns, const std::string& name, const std::string& workload,
                 const std::string& group, const std::string& replica = "", int64_t cpu = 1000) {
  Pod p = make_pod(name, {container({{"cpu", cpu}})});
  p.namespace_name = ns;
  p.workload_name = workload;
  p.workload_pod_group = group;
  p.workload_replica_key = replica;
  return p;
}

Pod coscheduling_pod(const std::string& ns, const std::string& name, const std::string& group, int64_t cpu = 1000) {
  Pod p = make_pod(name, {container({{"cpu", cpu}})});
  p.namespace_name = ns;
  p.labels[kCoschedulingPodGroupLabel] = group;
  return p;
}

std::unique_ptr<Engine> small_engine(std::vector<Node> nodes, ClusterObjects objects, std::vector<Pod> running = {}) {
  return loaded_engine(default_scheduler_config(), serial_cpu_options(), std::move(nodes), std::move(objects),
                       std::move(running));
}

std::map<std::string, ScheduleResult> by_pod(const std::vector<ScheduleResult>& results) {
  std::map<std::string, ScheduleResult> out;
  for (const ScheduleResult& r : results) out[r.pod] = r;
  return out;
}

// ---- v1.35 GangScheduling (TestGangSchedulingFlow's cases) -----------------

// The table's objects: Workload "gang-wl" with pg1 (minCount 3) and pg2
// (minCount 4), Workload "basic-wl" with a basic pg1; p1..p3 in pg1, p4 in
// pg2, p5 in pg1 under replica key "2" (a quorum of its own).
ClusterObjects flow_objects(bool with_gang_workload) {
  ClusterObjects o;
  if (with_gang_workload) {
    o.pod_groups.push_back(workload_group("ns1", "gang-wl", "pg1", 3));
    o.pod_groups.push_back(workload_group("ns1", "gang-wl", "pg2", 4));
  }
  o.pod_groups.push_back(workload_group("ns1", "basic-wl", "pg1", 0));
  return o;
}
std::vector<Node> roomy_nodes() {
  return {make_node("n1", 8000, 16 * kGi), make_node("n2", 8000, 16 * kGi)};
}
Pod flow_pod(const std::string& name) {
  if (name == "p4") return workload_pod("ns1", name, "gang-wl", "pg2");
  if (name == "p5") return workload_pod("ns1", name, "gang-wl", "pg1", "2");
  return workload_pod("ns1", name, "gang-wl", "pg1");
}

TEST(GangSchedulingFlow, NonGangPodSucceedsImmediately) {
  auto e = small_engine(roomy_nodes(), flow_objects(true));
  Pod p = make_pod("non-gang", {container({{"cpu", 1000}})});
  p.namespace_name = "ns1";
  const auto r = e->schedule_all({p});
  EXPECT_GE(r[0].node, 0);
  EXPECT_EQ(r[0].pod_group, "");
  EXPECT_EQ(r[0].group_outcome, GroupOutcome::kNone);
}

TEST(GangSchedulingFlow, BasicPolicyPodSucceedsImmediately) {
  auto e = small_engine(roomy_nodes(), flow_objects(true));
  const auto r = e->schedule_all({workload_pod("ns1", "basic-pod", "basic-wl", "pg1")});
  EXPECT_GE(r[0].node, 0);
  EXPECT_EQ(r[0].pod_group, "") << "a basic group's pods are ordinary pods";
}

TEST(GangSchedulingFlow, GangPodFailsPreEnqueueWhenWorkloadIsNotYetCreated) {
  auto e = small_engine(roomy_nodes(), flow_objects(false));
  const Decoded before = decode(e->snapshot());
  const auto r = by_pod(e->schedule_all({flow_pod("p1"), flow_pod("p2"), flow_pod("p3"), flow_pod("p4"),
                                         flow_pod("p5")}));
  for (const auto& [pod, res] : r) {
    EXPECT_EQ(res.node, -1) << pod;
    EXPECT_EQ(res.code, Code::UnschedulableAndUnresolvable) << pod;
    EXPECT_EQ(res.group_outcome, GroupOutcome::kRejected) << pod;
    EXPECT_NE(res.message.find("waiting for pods's workload \"gang-wl\" to appear in scheduling queue"),
              std::string::npos)
        << res.message;
  }
  EXPECT_EQ(r.at("ns1/p1").message,
            "pod group \"ns1/gang-wl/pg1\" rejected: waiting for pods's workload \"gang-wl\" to appear in "
            "scheduling queue");
  EXPECT_EQ(first_difference(before, decode(e->snapshot())), "");
}

TEST(GangSchedulingFlow, GangPodFailsPreEnqueueWhenQuorumIsNotMet) {
  // Only p1 and p2 of pg1 exist (p5 is another replica), minCount 3.
  auto e = small_engine(roomy_nodes(), flow_objects(true));
  const auto r = by_pod(e->schedule_all({flow_pod("p1"), flow_pod("p2"), flow_pod("p4"), flow_pod("p5")}));
  for (const char* pod : {"ns1/p1", "ns1/p2", "ns1/p4", "ns1/p5"}) {
    EXPECT_EQ(r.at(pod).node, -1) << pod;
    EXPECT_EQ(r.at(pod).code, Code::UnschedulableAndUnresolvable) << pod;
    EXPECT_NE(r.at(pod).message.find("waiting for minCount pods from a gang to appear in scheduling queue"),
              std::string::npos)
        << r.at(pod).message;
  }
  EXPECT_EQ(r.at("ns1/p1").pod_group, "ns1/gang-wl/pg1");
  EXPECT_EQ(r.at("ns1/p5").pod_group, "ns1/gang-wl/pg1/2");
  EXPECT_EQ(e->snapshot().num_pods(), 0u);
}

TEST(GangSchedulingFlow, QuorumPlacedAllowsTheWholeGang) {
  // All of pg1 present (p1..p3): the quorum is placed, the gang admitted.
  auto e = small_engine(roomy_nodes(), flow_objects(true));
  const auto r = e->schedule_all({flow_pod("p1"), flow_pod("p2"), flow_pod("p3")});
  for (const ScheduleResult& res : r) {
    EXPECT_GE(res.node, 0) << res.pod << ": " << res.message;
    EXPECT_EQ(res.group_outcome, GroupOutcome::kAdmitted);
  }
  EXPECT_EQ(e->snapshot().num_pods(), 3u);
}

TEST(GangSchedulingFlow, WaitsAtPermitThenFallsShortAndIsUndone) {
  // Room for two of the three: the two placed wait for a quorum that never
  // comes and are undone.
  ClusterObjects objects = flow_objects(true);
  auto e = small_engine({make_node("n1", 2000, 16 * kGi)}, objects);
  const Decoded before = decode(e->snapshot());
  const auto r = e->schedule_all({flow_pod("p1"), flow_pod("p2"), flow_pod("p3")});
  ASSERT_EQ(r.size(), 3u);
  for (const ScheduleResult& res : r) {
    EXPECT_EQ(res.node, -1);
    EXPECT_EQ(res.code, Code::Unschedulable);
    EXPECT_EQ(res.group_outcome, GroupOutcome::kRejected);
  }
  EXPECT_EQ(r[0].message, "pod group \"ns1/gang-wl/pg1\" rejected: 2/3 members placed, minCount 3");
  EXPECT_EQ(r[2].message,
            "pod group \"ns1/gang-wl/pg1\" rejected: 2/3 members placed, minCount 3; 0/1 nodes are available: 1 "
            "Insufficient cpu.");
  EXPECT_EQ(first_difference(before, decode(e->snapshot())), "") << "the placements were not undone exactly";
  std::string line;
  append_schedule_result_json(r[0], line);
  EXPECT_NE(line.find("\"podGroup\":\"ns1/gang-wl/pg1\",\"group\":\"rejected\""), std::string::npos) << line;
}

TEST(GangSchedulingFlow, AMemberTheEngineRefusesUndoesTheEarlierOnes) {
  // p3 names a PriorityClass that does not exist: schedule() throws for it
  // after p1 and p2 were placed; the group leaves nothing behind.
  auto e = small_engine(roomy_nodes(), flow_objects(true));
  const Decoded before = decode(e->snapshot());
  Pod bad = flow_pod("p3");
  bad.priority_class_name = "no-such-class";
  EXPECT_THROW(e->schedule_all({flow_pod("p1"), flow_pod("p2"), bad}), InputError);
  EXPECT_EQ(first_difference(before, decode(e->snapshot())), "") << "the placements were not undone";
}

TEST(GangSchedulingFlow, RunningMembersCountTowardTheMinimum) {
  // Two of pg1 run already: one pending member completes the quorum (both
  // for PreEnqueue's count and for Permit's).
  Pod r1 = on_node(flow_pod("r1"), "n1");
  Pod r2 = on_node(flow_pod("r2"), "n1");
  auto e = small_engine(roomy_nodes(), flow_objects(true), {r1, r2});
  const PodGroupStatus s = e->pod_group_status(flow_pod("p1"), {flow_pod("p1")});
  EXPECT_EQ(s.pod_group, "ns1/gang-wl/pg1");
  EXPECT_EQ(s.placed, 2);
  EXPECT_EQ(s.pending, 1);
  EXPECT_EQ(s.min_count, 3);
  EXPECT_EQ(s.rejection, "");
  const auto r = e->schedule_all({flow_pod("p1")});
  EXPECT_GE(r[0].node, 0) << r[0].message;
  EXPECT_EQ(r[0].group_outcome, GroupOutcome::kAdmitted);
}

TEST(GangSchedulingFlow, MembersCountedThroughEvents) {
  // The engine's index of members by group follows every event: a member
  // added, a pod whose labels move it into a Coscheduling group, a member
  // removed, a node removed (its pods unseen) and added back.
  ClusterObjects objects = flow_objects(true);
  objects.pod_groups.push_back(coscheduling_group("ns1", "cg", 2));
  auto e = small_engine(roomy_nodes(), objects);
  const auto placed = [&](const Pod& member) { return e->pod_group_status(member, {}).placed; };
  ASSERT_TRUE(e->add_pod(on_node(flow_pod("r1"), "n1")).ok());
  ASSERT_TRUE(e->add_pod(on_node(flow_pod("r2"), "n2")).ok());
  EXPECT_EQ(placed(flow_pod("p1")), 2);
  Pod loner = on_node(make_pod("loner", {container({{"cpu", 100}})}), "n1");
  loner.namespace_name = "ns1";
  ASSERT_TRUE(e->add_pod(loner).ok());
  EXPECT_EQ(placed(coscheduling_pod("ns1", "c1", "cg")), 0);
  loner.labels[kCoschedulingPodGroupLabel] = "cg";
  ASSERT_TRUE(e->update_pod(loner).ok());
  EXPECT_EQ(placed(coscheduling_pod("ns1", "c1", "cg")), 1);
  EXPECT_EQ(placed(flow_pod("p1")), 2);
  ASSERT_TRUE(e->remove_pod(flow_pod("r1").cache_key()).ok());
  EXPECT_EQ(placed(flow_pod("p1")), 1);
  ASSERT_TRUE(e->remove_node("n2").ok());
  EXPECT_EQ(placed(flow_pod("p1")), 0);
  ASSERT_TRUE(e->add_node(roomy_nodes()[1]).ok());
  EXPECT_EQ(placed(flow_pod("p1")), 1);
  // A member placed and forgotten (a gang undone) leaves the count as it was.
  const auto r = e->schedule_all({flow_pod("p2")});
  EXPECT_EQ(r[0].group_outcome, GroupOutcome::kRejected);
  EXPECT_EQ(placed(flow_pod("p1")), 1);
}

// ---- v1.36 GangScheduling: pods linked by spec.schedulingGroup --------------

TEST(GangSchedulingGroup, QuorumPlacedAdmitsTheWholeGang) {
  ClusterObjects o;
  o.pod_groups.push_back(standalone_group("ns1", "train", 3));
  auto e = small_engine(roomy_nodes(), o);
  const auto r =
      e->schedule_all({scheduling_group_pod("ns1", "t0", "train"), scheduling_group_pod("ns1", "t1", "train"),
                       scheduling_group_pod("ns1", "t2", "train")});
  for (const ScheduleResult& res : r) {
    EXPECT_GE(res.node, 0) << res.pod << ": " << res.message;
    EXPECT_EQ(res.pod_group, "ns1/train");
    EXPECT_EQ(res.group_outcome, GroupOutcome::kAdmitted);
  }
  EXPECT_EQ(e->snapshot().num_pods(), 3u);
}

TEST(GangSchedulingGroup, FallsShortAndIsUndoneWhole) {
  // Room for two of the three: the two placed are undone, all three rejected.
  ClusterObjects o;
  o.pod_groups.push_back(standalone_group("ns1", "train", 3));
  auto e = small_engine({make_node("n1", 2000, 16 * kGi)}, o);
  const Decoded before = decode(e->snapshot());
  const auto r =
      e->schedule_all({scheduling_group_pod("ns1", "t0", "train"), scheduling_group_pod("ns1", "t1", "train"),
                       scheduling_group_pod("ns1", "t2", "train")});
  ASSERT_EQ(r.size(), 3u);
  for (const ScheduleResult& res : r) {
    EXPECT_EQ(res.node, -1);
    EXPECT_EQ(res.code, Code::Unschedulable);
    EXPECT_EQ(res.group_outcome, GroupOutcome::kRejected);
  }
  EXPECT_EQ(r[0].message, "pod group \"ns1/train\" rejected: 2/3 members placed, minCount 3");
  EXPECT_EQ(r[2].message,
            "pod group \"ns1/train\" rejected: 2/3 members placed, minCount 3; 0/1 nodes are available: 1 "
            "Insufficient cpu.");
  EXPECT_EQ(first_difference(before, decode(e->snapshot())), "") << "the placements were not undone exactly";
}

TEST(GangSchedulingGroup, MissingPodGroupFailsPreEnqueue) {
  // No v1alpha2 PodGroup "train"; a Coscheduling PodGroup of that name is
  // another resource and does not stand in for it.
  ClusterObjects o;
  o.pod_groups.push_back(coscheduling_group("ns1", "train", 1));
  o.pod_groups.push_back(standalone_group("ns2", "train", 1));
  auto e = small_engine(roomy_nodes(), o);
  const Decoded before = decode(e->snapshot());
  const auto r =
      e->schedule_all({scheduling_group_pod("ns1", "t0", "train"), scheduling_group_pod("ns1", "t1", "train")});
  for (const ScheduleResult& res : r) {
    EXPECT_EQ(res.node, -1) << res.pod;
    EXPECT_EQ(res.code, Code::UnschedulableAndUnresolvable) << res.pod;
    EXPECT_EQ(res.group_outcome, GroupOutcome::kRejected) << res.pod;
    EXPECT_EQ(res.message,
              "pod group \"ns1/train\" rejected: waiting for pods's pod group \"train\" to appear in scheduling "
              "queue");
  }
  EXPECT_EQ(first_difference(before, decode(e->snapshot())), "");
  const PodGroupStatus s = e->pod_group_status(scheduling_group_pod("ns1", "t0", "train"), {});
  EXPECT_EQ(s.pod_group, "ns1/train");
  EXPECT_EQ(s.rejection, r[0].message);
}

TEST(GangSchedulingGroup, QuorumNotMetFailsPreEnqueue) {
  ClusterObjects o;
  o.pod_groups.push_back(standalone_group("ns1", "train", 3));
  auto e = small_engine(roomy_nodes(), o);
  const auto r =
      e->schedule_all({scheduling_group_pod("ns1", "t0", "train"), scheduling_group_pod("ns1", "t1", "train")});
  for (const ScheduleResult& res : r) {
    EXPECT_EQ(res.code, Code::UnschedulableAndUnresolvable);
    EXPECT_EQ(res.message,
              "pod group \"ns1/train\" rejected: waiting for minCount pods from a gang to appear in scheduling queue");
  }
  EXPECT_EQ(e->snapshot().num_pods(), 0u);
}

TEST(GangSchedulingGroup, BasicPolicyPodsAreOrdinaryPods) {
  ClusterObjects o;
  o.pod_groups.push_back(standalone_group("ns1", "serve", 0));
  auto e = small_engine(roomy_nodes(), o);
  const auto r = e->schedule_all({scheduling_group_pod("ns1", "s0", "serve")});
  EXPECT_GE(r[0].node, 0);
  EXPECT_EQ(r[0].pod_group, "");
  EXPECT_EQ(r[0].group_outcome, GroupOutcome::kNone);
}

TEST(GangSchedulingGroup, RunningMembersCountTowardTheMinimum) {
  ClusterObjects o;
  o.pod_groups.push_back(standalone_group("ns1", "train", 3));
  auto e = small_engine(roomy_nodes(), o,
                        {on_node(scheduling_group_pod("ns1", "r0", "train"), "n1"),
                         on_node(scheduling_group_pod("ns1", "r1", "train"), "n2"),
                         on_node(coscheduling_pod("ns1", "other", "train"), "n2")});
  const PodGroupStatus s =
      e->pod_group_status(scheduling_group_pod("ns1", "t0", "train"), {scheduling_group_pod("ns1", "t0", "train")});
  EXPECT_EQ(s.api, "PodGroup (scheduling.k8s.io/v1alpha2)");
  EXPECT_EQ(s.placed, 2) << "the Coscheduling pod of the same group name is not a member";
  EXPECT_EQ(s.pending, 1);
  EXPECT_EQ(s.min_count, 3);
  EXPECT_EQ(s.rejection, "");
  const auto r = e->schedule_all({scheduling_group_pod("ns1", "t0", "train")});
  EXPECT_GE(r[0].node, 0) << r[0].message;
  EXPECT_EQ(r[0].group_outcome, GroupOutcome::kAdmitted);
}

TEST(GangSchedulingGroup, MixedWithAWorkloadGangAndACoschedulingGangOfTheSameName) {
  // One node of 4 cpus; three gangs of two, interleaved: a Workload gang
  // (2 x 1 cpu) is admitted, the schedulingGroup gang "train" (2 x 1.5 cpu)
  // finds room for one and is undone, the Coscheduling gang also named
  // "train" (2 x 1 cpu) is admitted on what is left. Each is its own group.
  ClusterObjects o;
  o.pod_groups.push_back(workload_group("ns1", "job", "workers", 2));
  o.pod_groups.push_back(standalone_group("ns1", "train", 2));
  o.pod_groups.push_back(coscheduling_group("ns1", "train", 2));
  const std::vector<Pod> pods = {
      workload_pod("ns1", "w0", "job", "workers"),      scheduling_group_pod("ns1", "t0", "train", 1500),
      coscheduling_pod("ns1", "c0", "train"),           workload_pod("ns1", "w1", "job", "workers"),
      scheduling_group_pod("ns1", "t1", "train", 1500), coscheduling_pod("ns1", "c1", "train")};
  const std::vector<QueueEntry> q = gang_queue_order(pods, o);
  std::vector<std::vector<uint32_t>> got;
  for (const QueueEntry& entry : q) got.push_back(entry.pods);
  EXPECT_EQ(got, (std::vector<std::vector<uint32_t>>{{0, 3}, {1, 4}, {2, 5}}));
  EXPECT_EQ(q[1].pod_group, "ns1/train");
  EXPECT_EQ(q[2].pod_group, "ns1/train");
  auto e = small_engine({make_node("n1", 4000, 16 * kGi)}, o);
  const auto r = by_pod(e->schedule_all(pods));
  for (const char* pod : {"ns1/w0", "ns1/w1", "ns1/c0", "ns1/c1"}) {
    EXPECT_GE(r.at(pod).node, 0) << pod << ": " << r.at(pod).message;
    EXPECT_EQ(r.at(pod).group_outcome, GroupOutcome::kAdmitted) << pod;
  }
  EXPECT_EQ(r.at("ns1/w0").pod_group, "ns1/job/workers");
  EXPECT_EQ(r.at("ns1/c0").pod_group, "ns1/train");
  for (const char* pod : {"ns1/t0", "ns1/t1"}) {
    EXPECT_EQ(r.at(pod).node, -1) << pod;
    EXPECT_EQ(r.at(pod).group_outcome, GroupOutcome::kRejected) << pod;
    EXPECT_EQ(r.at(pod).message.rfind("pod group \"ns1/train\" rejected: 1/2 members placed, minCount 2", 0), 0u)
        << r.at(pod).message;
  }
  EXPECT_EQ(e->snapshot().num_pods(), 4u);
}

TEST(GangSchedulingGroup, MembershipIsByLinkNamespaceAndName) {
  const Pod a = scheduling_group_pod("ns1", "a", "train");
  const Pod b = scheduling_group_pod("ns1", "b", "train");
  EXPECT_EQ(pod_group_key(a), "ns1/train");
  EXPECT_TRUE(same_pod_group(a, b));
  EXPECT_FALSE(same_pod_group(a, scheduling_group_pod("ns1", "c", "eval")));
  EXPECT_FALSE(same_pod_group(a, scheduling_group_pod("ns2", "d", "train")));
  EXPECT_FALSE(same_pod_group(a, coscheduling_pod("ns1", "e", "train"))) << "another API's PodGroup";
  EXPECT_FALSE(same_pod_group(coscheduling_pod("ns1", "e", "train"), a));
  EXPECT_FALSE(same_pod_group(a, make_pod("plain")));
  // A pod built in code with both links takes spec.workloadRef (the reader
  // refuses such a pod), and both take precedence over the Coscheduling label.
  Pod both = workload_pod("ns1", "f", "job", "workers");
  both.scheduling_group = "train";
  EXPECT_EQ(pod_group_key(both), "ns1/job/workers");
  Pod labelled = scheduling_group_pod("ns1", "g", "train");
  labelled.labels[kCoschedulingPodGroupLabel] = "other";
  EXPECT_EQ(pod_group_key(labelled), "ns1/train");
  EXPECT_TRUE(same_pod_group(labelled, a));
  ClusterObjects o;
  o.pod_groups.push_back(standalone_group("ns1", "train", 2));
  const PodGroupMembership m = pod_group_membership(a, o);
  EXPECT_TRUE(m.member);
  EXPECT_EQ(m.group, 0);
  EXPECT_TRUE(takes_part_in_gang(m, o));
}

// ---- scheduler-plugins Coscheduling (TestPreFilter, TestPermit) --------------

TEST(CoschedulingPreFilter, PodDoesNotBelongToAnyPodGroup) {
  ClusterObjects o;
  o.pod_groups.push_back(coscheduling_group("ns", "pg1", 1));
  auto e = small_engine(roomy_nodes(), o);
  Pod p = make_pod("p", {container({{"cpu", 1000}})});
  p.namespace_name = "ns";
  EXPECT_GE(e->schedule_all({p})[0].node, 0);
}

TEST(CoschedulingPreFilter, PodBelongsToANonExistentPodGroup) {
  // Upstream's PreFilter lets it through and Permit rejects it: "PodGroup
  // not found" (Unschedulable); bulkscore rejects it before placing it.
  ClusterObjects o;
  o.pod_groups.push_back(coscheduling_group("ns", "pg1", 1));
  auto e = small_engine(roomy_nodes(), o);
  const auto r = e->schedule_all({coscheduling_pod("ns", "p", "pg-non-existent")});
  EXPECT_EQ(r[0].node, -1);
  EXPECT_EQ(r[0].code, Code::Unschedulable);
  EXPECT_EQ(r[0].message, "pod group \"ns/pg-non-existent\" rejected: PodGroup not found");
}

TEST(CoschedulingPreFilter, PodCountLessThanMinMember) {
  ClusterObjects o;
  o.pod_groups.push_back(coscheduling_group("ns", "pg1", 2));
  o.pod_groups.push_back(coscheduling_group("ns", "pg2", 1));
  auto e = small_engine(roomy_nodes(), o);
  const auto r = by_pod(e->schedule_all({coscheduling_pod("ns", "p", "pg1"), coscheduling_pod("ns", "pg2-1", "pg2")}));
  EXPECT_EQ(r.at("ns/p").code, Code::UnschedulableAndUnresolvable);
  EXPECT_EQ(r.at("ns/p").message,
            "pod group \"ns/pg1\" rejected: pre-filter pod p cannot find enough sibling pods, current pods number: "
            "1, minMember of group: 2");
  EXPECT_GE(r.at("ns/pg2-1").node, 0) << "pg2 (minMember 1) is complete";
}

TEST(CoschedulingPreFilter, PodCountEqualsMinMember) {
  ClusterObjects o;
  o.pod_groups.push_back(coscheduling_group("ns", "pg1", 2));
  auto e = small_engine(roomy_nodes(), o);
  const auto r = e->schedule_all({coscheduling_pod("ns", "p", "pg1"), coscheduling_pod("ns", "p-1", "pg1")});
  EXPECT_GE(r[0].node, 0);
  EXPECT_GE(r[1].node, 0);
  EXPECT_EQ(r[0].group_outcome, GroupOutcome::kAdmitted);
}

TEST(CoschedulingPreFilter, ClusterResourceEnoughForMinResources) {
  ClusterObjects o;
  o.pod_groups.push_back(coscheduling_group("ns", "pg1", 2, {{"cpu", 12000}, {"memory", 8 * kGi}}));
  auto e = small_engine(roomy_nodes(), o);  // 16 cpus, 32Gi free
  const auto r = e->schedule_all({coscheduling_pod("ns", "p", "pg1"), coscheduling_pod("ns", "p-1", "pg1")});
  EXPECT_GE(r[0].node, 0) << r[0].message;
}

TEST(CoschedulingPreFilter, ClusterResourceNotEnoughForMinResources) {
  ClusterObjects o;
  o.pod_groups.push_back(coscheduling_group("ns", "pg1", 2, {{"cpu", 20000}, {"memory", 8 * kGi}}));
  // A running pod of another group takes 2 cpus: 14 are free.
  auto e = small_engine(roomy_nodes(), o, {running("other", "n1", {{"cpu", 2000}})});
  const auto r = e->schedule_all({coscheduling_pod("ns", "p", "pg1"), coscheduling_pod("ns", "p-1", "pg1")});
  EXPECT_EQ(r[0].code, Code::UnschedulableAndUnresolvable);
  EXPECT_EQ(r[0].message, "pod group \"ns/pg1\" rejected: resource gap: cpu 6000m");
  EXPECT_EQ(e->snapshot().num_pods(), 1u);
}

TEST(CoschedulingPreFilter, MinResourcesGivesBackTheGroupsOwnPods) {
  // A running member holds 6 cpus: upstream measures the free resources
  // with the group's own pods removed, so 16 cpus count as free.
  ClusterObjects o;
  o.pod_groups.push_back(coscheduling_group("ns", "pg1", 2, {{"cpu", 16000}}));
  Pod member = on_node(coscheduling_pod("ns", "r", "pg1", 6000), "n1");
  auto e = small_engine(roomy_nodes(), o, {member});
  const auto r = e->schedule_all({coscheduling_pod("ns", "p", "pg1")});
  EXPECT_GE(r[0].node, 0) << r[0].message;
}

TEST(CoschedulingPermit, PodsBelongToAPodGroupAllow) {
  // minMember 3, two assigned already: the third's Permit allows.
  ClusterObjects o;
  o.pod_groups.push_back(coscheduling_group("ns", "pg1", 3));
  auto e = small_engine(roomy_nodes(), o,
                        {on_node(coscheduling_pod("ns", "a", "pg1"), "n1"), on_node(coscheduling_pod("ns", "b", "pg1"), "n2")});
  const auto r = e->schedule_all({coscheduling_pod("ns", "c", "pg1")});
  EXPECT_GE(r[0].node, 0);
  EXPECT_EQ(r[0].group_outcome, GroupOutcome::kAdmitted);
}

TEST(CoschedulingPermit, PodsBelongToAPodGroupWaitThenRejected) {
  // minMember 3, one assigned, two pending of which one fits: the placed
  // one waits at Permit, the group falls short, it is undone.
  ClusterObjects o;
  o.pod_groups.push_back(coscheduling_group("ns", "pg1", 3));
  auto e = small_engine({make_node("n1", 3000, 16 * kGi)}, o, {on_node(coscheduling_pod("ns", "a", "pg1"), "n1")});
  const Decoded before = decode(e->snapshot());
  const auto r = e->schedule_all({coscheduling_pod("ns", "b", "pg1"), coscheduling_pod("ns", "c", "pg1", 3000)});
  EXPECT_EQ(r[0].node, -1);
  EXPECT_EQ(r[0].message, "pod group \"ns/pg1\" rejected: 2/3 members placed, minMember 3");
  EXPECT_EQ(first_difference(before, decode(e->snapshot())), "");
}

// ---- preemption ------------------------------------------------------------

TEST(GangPreemption, MembersDoNotPreempt) {
  // A full node of a low-priority pod: an ordinary high-priority pod
  // preempts it; a gang member of the same shape does not (an eviction
  // could not be undone if its group were then rejected).
  ClusterObjects o;
  o.pod_groups.push_back(coscheduling_group("default", "g", 1));
  Pod low = running("low", "n1", {{"cpu", 4000}});
  low.priority = 0;
  low.has_priority = true;
  Pod member = coscheduling_pod("default", "member", "g", 4000);
  member.priority = 1000;
  member.has_priority = true;
  auto gang = small_engine({make_node("n1", 4000, 16 * kGi)}, o, {low});
  const ScheduleResult m = gang->schedule_all({member})[0];
  EXPECT_EQ(m.node, -1);
  EXPECT_TRUE(m.victims.empty());
  EXPECT_EQ(m.nominated_node, "");
  EXPECT_EQ(gang->snapshot().num_pods(), 1u) << "the low-priority pod stays";
  Pod plain = member;
  plain.labels.clear();
  auto solo = small_engine({make_node("n1", 4000, 16 * kGi)}, o, {low});
  const ScheduleResult p = solo->schedule_all({plain})[0];
  EXPECT_EQ(p.nominated_node, "n1") << p.message;
}

TEST(GangSchedulingFlow, AMemberGivenTwiceIsCountedOnce) {
  // p1 was placed (as an ordinary pod) already; a group of p1, p2 with
  // minCount 3 has two pods, not three: rejected early, p1 left as it was.
  auto e = small_engine(roomy_nodes(), flow_objects(true));
  ASSERT_GE(e->schedule(flow_pod("p1")).node, 0);
  const auto r = e->schedule_group({flow_pod("p1"), flow_pod("p2")});
  EXPECT_EQ(r[1].code, Code::UnschedulableAndUnresolvable) << r[1].message;
  EXPECT_EQ(r[1].group_outcome, GroupOutcome::kRejected);
  // p1 is not reported rejected: it keeps its place, and schedule()'s
  // answer for a pod held already.
  EXPECT_EQ(r[0].code, Code::Error);
  EXPECT_NE(r[0].message.find("is in the cache already"), std::string::npos) << r[0].message;
  EXPECT_EQ(r[0].group_outcome, GroupOutcome::kNone);
  EXPECT_EQ(r[0].pod_group, "ns1/gang-wl/pg1");
  EXPECT_EQ(e->snapshot().num_pods(), 1u);
}

// ---- QueueSort ------------------------------------------------------------

TEST(GangQueue, MembersTakenTogetherAtTheFirstMembersPlace) {
  ClusterObjects o;
  o.pod_groups.push_back(coscheduling_group("ns", "g", 2));
  o.pod_groups.push_back(workload_group("ns", "w", "basic", 0));
  const std::vector<Pod> pods = {make_pod("a"), coscheduling_pod("ns", "m1", "g"), make_pod("b"),
                                 workload_pod("ns", "basic-1", "w", "basic"), coscheduling_pod("ns", "m2", "g"),
                                 make_pod("c")};
  const std::vector<QueueEntry> q = gang_queue_order(pods, o);
  std::vector<std::vector<uint32_t>> got;
  for (const QueueEntry& e : q) got.push_back(e.pods);
  EXPECT_EQ(got, (std::vector<std::vector<uint32_t>>{{0}, {1, 4}, {2}, {3}, {5}}));
  EXPECT_EQ(q[1].pod_group, "ns/g");
}

TEST(GangQueue, EarlyStopWhenTheMinimumCannotBeReached) {
  // minMember 3 of 3, the first member fits nowhere: the others are not
  // tried (no cycle, no change).
  ClusterObjects o;
  o.pod_groups.push_back(coscheduling_group("ns", "g", 3));
  auto e = small_engine(roomy_nodes(), o);
  const auto r = e->schedule_all({coscheduling_pod("ns", "big", "g", 64000), coscheduling_pod("ns", "m2", "g"),
                                  coscheduling_pod("ns", "m3", "g")});
  EXPECT_EQ(r[0].message.rfind("pod group \"ns/g\" rejected: 0/3 members placed, minMember 3; 0/2 nodes are available", 0),
            0u)
      << r[0].message;
  EXPECT_EQ(r[1].message, "pod group \"ns/g\" rejected: 0/3 members placed, minMember 3 (not tried)");
  EXPECT_EQ(e->snapshot().num_pods(), 0u);
}

// ---- random gang workloads against a brute-force reference ----------------

struct GangSpec {
  std::string key;
  bool coscheduling = false;
};

// The random workload: the cluster's pending pods with gangs mixed in
// (copies of a pending pod, 1 to 512 members, some GPU and device-group
// pods among the templates, some members running already), their group
// objects (some missing, some basic, some with minResources), in a
// shuffled order.
Cluster gang_cluster(uint64_t stream) {
  SplitMix64 rng = SplitMix64::derive(parity_seed() ^ 0x6a6eull, stream);
  ClusterShape shape;
  shape.nodes = static_cast<uint32_t>(rng.between(2, 90));  // below 100: every node evaluated
  shape.pending = static_cast<uint32_t>(rng.between(10, 60));
  Cluster c = random_cluster(rng, shape, scheduler_names());
  add_device_groups(c, stream);
  // Filter-only stops at the first feasible node from the round-robin
  // start, which the reference's copies do not share.
  for (Pod& p : c.pending_pods)
    if (p.scheduler_name == "filter-only") p.scheduler_name = "default-scheduler";
  const uint32_t gangs = static_cast<uint32_t>(rng.between(1, 8));
  std::vector<Pod> members;
  for (uint32_t g = 0; g < gangs; ++g) {
    const Pod& like = c.pending_pods[rng.below(c.pending_pods.size())];
    // Sizes 1 to 512 (the range), mostly small: a large gang on
    // fewer than 90 nodes is mostly rejected, and costs the reference a
    // fresh engine's worth of placements.
    const uint32_t size = static_cast<uint32_t>(rng.chance(0.05)  ? rng.between(65, 512)
                                                : rng.chance(0.3) ? rng.between(1, 64)
                                                                  : rng.between(1, 8));
    const bool cosched = rng.chance(0.5);
    // The other half: v1.35 Workload gangs and v1.36 schedulingGroup gangs.
    const bool standalone = !cosched && rng.chance(0.5);
    const std::string name = "gang-" + std::to_string(g);
    // minimum: mostly the size, sometimes less, sometimes more than there are pods
    int32_t min = static_cast<int32_t>(size);
    if (rng.chance(0.3)) min = static_cast<int32_t>(rng.between(1, size));
    if (rng.chance(0.1)) min = static_cast<int32_t>(size + 1);
    const bool missing = rng.chance(0.08);
    const bool basic = !cosched && rng.chance(0.1);
    if (!missing) {
      if (cosched) {
        ResourceList min_resources;
        if (rng.chance(0.3)) min_resources["cpu"] = rng.between(1, 64) * 1000;
        c.objects.pod_groups.push_back(coscheduling_group(like.namespace_name, name, min, min_resources));
      } else if (standalone) {
        c.objects.pod_groups.push_back(standalone_group(like.namespace_name, name, basic ? 0 : min));
      } else {
        c.objects.pod_groups.push_back(workload_group(like.namespace_name, name, "workers", basic ? 0 : min));
      }
    }
    // Some gangs have members running already: they count toward the minimum.
    const uint32_t already = rng.chance(0.2) ? static_cast<uint32_t>(rng.below(size)) : 0;
    for (uint32_t k = 0; k < size; ++k) {
      Pod p = like;
      p.name = name + "-" + std::to_string(k);
      p.uid = "uid-" + p.name;
      if (cosched)
        p.labels[kCoschedulingPodGroupLabel] = name;
      else if (standalone)
        p.scheduling_group = name;
      else {
        p.workload_name = name;
        p.workload_pod_group = "workers";
      }
      if (k < already) {
        p.node_name = c.nodes[rng.below(c.nodes.size())].name;
        p.phase = "Running";
        p.nominated_node_name.clear();
        c.running_pods.push_back(std::move(p));
        continue;
      }
      members.push_back(std::move(p));
    }
  }
  for (Pod& p : members) c.pending_pods.push_back(std::move(p));
  // Shuffled: QueueSort brings each gang's members together.
  for (size_t i = c.pending_pods.size(); i > 1; --i) std::swap(c.pending_pods[i - 1], c.pending_pods[rng.below(i)]);
  return c;
}

SchedulerConfig no_preemption_config() {
  SchedulerConfig config = parity_config();
  for (ProfileConfig& p : config.profiles) p.post_filter.clear();
  return config;
}

EngineOptions test_options(Batching batching) { return serial_cpu_options(batching); }

// The reference: one engine without batching for ordinary pods; a gang is
// tried on a fresh engine loaded with a copy of the reference's cluster
// (member by member, stopping where the minimum is out of reach), and its
// placements are copied back (assume_pod) only when it reached its minimum.
std::vector<ScheduleResult> reference_run(const Cluster& cluster, const SchedulerConfig& config) {
  Engine ref(config, test_options(Batching::Off));
  {
    Cluster copy = cluster;
    static_cast<void>(ref.load(copy));
  }
  std::vector<ScheduleResult> out;
  const std::vector<Pod>& pending = cluster.pending_pods;
  std::vector<bool> done(pending.size(), false);
  for (size_t i = 0; i < pending.size(); ++i) {
    if (done[i]) continue;
    const PodGroupMembership m = pod_group_membership(pending[i], cluster.objects);
    if (!takes_part_in_gang(m, cluster.objects)) {
      out.push_back(ref.schedule(pending[i]));
      continue;
    }
    std::vector<Pod> members;
    for (size_t j = i; j < pending.size(); ++j)
      if (!done[j] && pod_group_membership(pending[j], cluster.objects).key == m.key) {
        members.push_back(pending[j]);
        done[j] = true;
      }
    const auto reject = [&](Code code, const std::string& message) {
      for (const Pod& p : members) {
        ScheduleResult r;
        r.pod = p.key();
        r.code = code;
        r.message = message;
        r.pod_group = m.key;
        r.group_outcome = GroupOutcome::kRejected;
        out.push_back(r);
      }
    };
    if (m.group < 0) {
      reject(m.missing_code, gang_early_message(m.key, m.missing));
      continue;
    }
    const PodGroupObject& g = cluster.objects.pod_groups[static_cast<size_t>(m.group)];
    // The reference's cluster as it stands, for the copy.
    Cluster now;
    now.nodes = cluster.nodes;
    now.objects = cluster.objects;
    std::vector<uint32_t> member_ids;
    for (uint32_t id = 0; id < ref.snapshot().pod_id_bound(); ++id) {
      if (!ref.snapshot().has_pod(id)) continue;
      now.running_pods.push_back(ref.snapshot().pod(id));
      if (pod_group_membership(ref.snapshot().pod(id), cluster.objects).key == m.key) member_ids.push_back(id);
    }
    const auto running = static_cast<int64_t>(member_ids.size());
    const int64_t all = running + static_cast<int64_t>(members.size());
    if (g.gang && all < g.min_count) {
      // Coscheduling's message names the pod: one per member.
      for (const Pod& p : members) {
        ScheduleResult r;
        r.pod = p.key();
        r.code = Code::UnschedulableAndUnresolvable;
        r.message = gang_early_message(m.key, gang_count_rejection(g, p, all));
        r.pod_group = m.key;
        r.group_outcome = GroupOutcome::kRejected;
        out.push_back(r);
      }
      continue;
    }
    if (const std::string gap = gang_resource_rejection(g, ref.snapshot(), member_ids); !gap.empty()) {
      reject(Code::UnschedulableAndUnresolvable, gang_early_message(m.key, gap));
      continue;
    }
    Engine trial(config, test_options(Batching::Off));
    static_cast<void>(trial.load(now));
    std::vector<ScheduleResult> tried;
    int64_t placed = running;
    for (size_t k = 0; k < members.size(); ++k) {
      tried.push_back(trial.schedule(members[k]));
      if (tried.back().node >= 0) ++placed;
      if (placed + static_cast<int64_t>(members.size() - k - 1) < g.min_count) break;
    }
    if (placed >= g.min_count) {
      for (size_t k = 0; k < tried.size(); ++k) {
        tried[k].pod_group = m.key;
        tried[k].group_outcome = GroupOutcome::kAdmitted;
        if (tried[k].node < 0) continue;
        const uint32_t id = trial.snapshot().find_pod(members[k].namespace_name, members[k].name);
        EXPECT_TRUE(ref.assume_pod(trial.snapshot().pod(id)).ok());
      }
      for (ScheduleResult& r : tried) out.push_back(std::move(r));
      continue;
    }
    const std::string why = gang_rejection_message(g, m.key, placed, all);
    for (size_t k = 0; k < members.size(); ++k) {
      ScheduleResult r;
      r.pod = members[k].key();
      r.code = Code::Unschedulable;
      r.pod_group = m.key;
      r.group_outcome = GroupOutcome::kRejected;
      r.message = why;
      if (k >= tried.size())
        r.message += " (not tried)";
      else if (tried[k].node < 0)
        r.message += "; " + tried[k].message;
      if (k < tried.size()) r.feasible_nodes = tried[k].feasible_nodes;
      out.push_back(r);
    }
  }
  return out;
}

std::string decision(const ScheduleResult& r) {
  std::string devices;
  for (int32_t d : r.devices) devices += std::to_string(d) + ",";
  return r.pod + " " + code_name(r.code) + " -> " + r.node_name + " devices [" + devices + "] group " +
         r.device_group + " " + format_group_devices(r.group_devices) + " podGroup " + r.pod_group + " " +
         group_outcome_name(r.group_outcome) + " | " + r.message;
}

void run_random_gangs(uint64_t stream, const std::string& backend, Batching batching, uint32_t& admitted,
                      uint32_t& rejected, size_t& largest) {
  const Cluster cluster = gang_cluster(stream);
  const SchedulerConfig config = no_preemption_config();
  EngineOptions options = test_options(batching);
  options.backend = backend;
  Engine e(config, options);
  {
    Cluster copy = cluster;
    static_cast<void>(e.load(copy));
  }
  // Decisions in queue order, as the CLI writes them.
  std::vector<ScheduleResult> got;
  for (const QueueEntry& entry : e.queue_order(cluster.pending_pods)) {
    std::vector<Pod> members;
    for (const uint32_t i : entry.pods) members.push_back(cluster.pending_pods[i]);
    largest = std::max(largest, members.size());
    for (ScheduleResult& r : entry.pod_group.empty() ? std::vector<ScheduleResult>{e.schedule(members[0])}
                                                     : e.schedule_group(members))
      got.push_back(std::move(r));
    if (!entry.pod_group.empty() && !got.empty())
      ++(got.back().group_outcome == GroupOutcome::kAdmitted ? admitted : rejected);
  }
  const std::vector<ScheduleResult> want = reference_run(cluster, config);
  const std::string where = "stream " + std::to_string(stream) + " on " + backend + ", batching " +
                            batching_name(batching) + " (" +
                            std::to_string(cluster.nodes.size()) + " nodes, " +
                            std::to_string(cluster.pending_pods.size()) + " pending; BULKSCORE_PARITY_SEED=" +
                            std::to_string(parity_seed()) + ")";
  ASSERT_EQ(got.size(), want.size()) << where;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(decision(got[i]), decision(want[i])) << where << ": first difference at decision " << i;
}

// The engine under test on every backend the build has (cuda where a
// device answers); the reference on the CPU.
TEST(GangRandom, AllOrNothingMatchesABruteForceReference) {
  std::vector<std::string> backends{"cpu"};
  if (backend_unavailable_reason("cuda").empty()) backends.emplace_back("cuda");
  for (const std::string& backend : backends)
    for (const Batching batching : {Batching::Exact, Batching::Off}) {
      uint32_t admitted = 0, rejected = 0;
      size_t largest = 0;
      for (uint64_t stream = 0; stream < 10 || (stream < 40 && largest <= 64); ++stream) {
        run_random_gangs(stream, backend, batching, admitted, rejected, largest);
        if (HasFatalFailure()) return;
      }
      EXPECT_GT(largest, 64u) << "no gang of more than 64 members came up";
      EXPECT_GT(admitted, 3u) << backend << " " << batching_name(batching);
      EXPECT_GT(rejected, 3u) << backend << " " << batching_name(batching);
    }
}

}  // namespace
}  // namespace bulkscore
