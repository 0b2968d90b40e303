// The engine's events (kube-scheduler's cache, event by event): the pod
// states and the statuses of every call, node removal and return, objects,
// forget as an exact undo, and random event streams interleaved with
// scheduling that must decide exactly as a fresh load() of the same cluster.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "host/engine/backend.hpp"
#include "host/engine/engine.hpp"
#include "host/input/config.hpp"
#include "tests/random_cluster.hpp"
#include "tests/test_util.hpp"

namespace bulkscore {
namespace {

using testutil::container;
using testutil::make_pod;
using testutil::parity_seed;

Node plain_node(const std::string& name, int64_t cpu, const std::string& zone = "a") {
  Node n;
  n.name = name;
  n.labels["kubernetes.io/hostname"] = name;
  n.labels["topology.kubernetes.io/zone"] = zone;
  n.allocatable = {{"cpu", cpu}, {"memory", 64LL << 30}, {"pods", 110}};
  return n;
}

Pod cpu_pod(const std::string& name, int64_t cpu, const std::string& node = "") {
  Pod p = make_pod(name, {container({{"cpu", cpu}, {"memory", 1LL << 30}})});
  p.namespace_name = "default";
  p.node_name = node;
  p.phase = node.empty() ? "Pending" : "Running";
  return p;
}

std::unique_ptr<Engine> engine_of(const std::vector<Node>& nodes, const std::vector<Pod>& running = {},
                                  Batching batching = Batching::Exact) {
  EngineOptions o{"cpu", TieBreak::First, 1};
  o.batching = batching;
  auto e = std::make_unique<Engine>(default_scheduler_config(), o);
  Cluster c;
  c.nodes = nodes;
  c.running_pods = running;
  e->load(std::move(c));
  return e;
}

int64_t requested_cpu(const Engine& e, const std::string& node) {
  const int32_t n = e.snapshot().node_index(node);
  return n < 0 ? -1 : e.snapshot().view().req(kCpu, static_cast<uint32_t>(n));
}

// Each pod state and each call's status, as upstream's cache has them.
TEST(EngineEvents, PodStatesAndStatusesFollowUpstreamsCache) {
  auto e = engine_of({plain_node("n1", 4000), plain_node("n2", 4000)}, {cpu_pod("run", 1000, "n1")});
  EXPECT_EQ(e->pod_entry("uid-run").state, PodCacheState::kBound);
  EXPECT_EQ(e->pod_entry("uid-nope").state, PodCacheState::kAbsent);

  // schedule assumes; the same pod again is refused, not counted twice.
  const Pod web = cpu_pod("web", 500);
  const ScheduleResult r = e->schedule(web);
  ASSERT_EQ(r.node_name, "n2");
  EXPECT_TRUE(e->is_assumed_pod("uid-web"));
  const ScheduleResult again = e->schedule(web);
  EXPECT_EQ(again.code, Code::Error);
  EXPECT_NE(again.message.find("in the cache already (assumed on node \"n2\")"), std::string::npos) << again.message;
  EXPECT_EQ(requested_cpu(*e, "n2"), 500);

  // An assumed pod is not updated before its confirmation.
  Pod bound = web;
  bound.node_name = "n2";
  EXPECT_EQ(e->update_pod(bound).code, EventCode::kWrongState);
  // Confirmation: bound, counted once.
  ASSERT_TRUE(e->add_pod(bound).ok());
  EXPECT_EQ(e->pod_entry("uid-web").state, PodCacheState::kBound);
  EXPECT_EQ(requested_cpu(*e, "n2"), 500);
  EXPECT_EQ(e->add_pod(bound).code, EventCode::kAlreadyExists);
  EXPECT_EQ(e->forget_pod("uid-web").code, EventCode::kWrongState);
  EXPECT_EQ(e->finish_binding("uid-web").code, EventCode::kWrongState);

  // Updates: requests change in place; a move is refused; terminal removes.
  bound.containers[0].requests["cpu"] = 700;
  ASSERT_TRUE(e->update_pod(bound).ok());
  EXPECT_EQ(requested_cpu(*e, "n2"), 700);
  Pod moved = bound;
  moved.node_name = "n1";
  EXPECT_EQ(e->update_pod(moved).code, EventCode::kWrongState);
  Pod done = bound;
  done.phase = "Succeeded";
  const EventStatus s = e->update_pod(done);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s.warnings.size(), 1U);
  EXPECT_EQ(e->pod_entry("uid-web").state, PodCacheState::kAbsent);
  EXPECT_EQ(requested_cpu(*e, "n2"), 0);

  // Absent objects and invalid ones.
  EXPECT_EQ(e->remove_pod("uid-web").code, EventCode::kNotFound);
  EXPECT_EQ(e->forget_pod("uid-web").code, EventCode::kNotFound);
  EXPECT_EQ(e->update_pod(bound).code, EventCode::kNotFound);
  EXPECT_EQ(e->add_pod(cpu_pod("pending", 100)).code, EventCode::kInvalid);
  EXPECT_EQ(e->assume_pod(cpu_pod("x", 100, "no-such-node")).code, EventCode::kNotFound);
  EXPECT_EQ(e->add_node(plain_node("n1", 1)).code, EventCode::kAlreadyExists);
  EXPECT_EQ(e->update_node(plain_node("n9", 1)).code, EventCode::kNotFound);
  EXPECT_EQ(e->remove_node("n9").code, EventCode::kNotFound);
  EXPECT_EQ(e->remove_object(ObjectKind::kService, "default", "web").code, EventCode::kNotFound);

  // Without a UID, namespace/name is the key.
  Pod anon = cpu_pod("anon", 100, "n1");
  anon.uid.clear();
  ASSERT_TRUE(e->add_pod(anon).ok());
  EXPECT_EQ(e->pod_entry("default/anon").state, PodCacheState::kBound);
  ASSERT_TRUE(e->remove_pod("default/anon").ok());
}

// assume_pod places without a decision; finish_binding starts the TTL, and
// expire_assumed_pods forgets the pods past it (never with TTL 0).
TEST(EngineEvents, AssumedPodsExpireOnlyAfterFinishBindingAndTheirTtl) {
  for (const double ttl : {0.0, 30.0}) {
    EngineOptions o{"cpu", TieBreak::First, 1};
    o.assumed_pod_ttl_seconds = ttl;
    Engine e(default_scheduler_config(), o);
    Cluster c;
    c.nodes = {plain_node("n1", 4000)};
    e.load(std::move(c));
    ASSERT_TRUE(e.assume_pod(cpu_pod("a", 1000, "n1")).ok());
    ASSERT_TRUE(e.assume_pod(cpu_pod("b", 1000, "n1")).ok());
    EXPECT_EQ(e.assume_pod(cpu_pod("a", 1000, "n1")).code, EventCode::kWrongState);
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_TRUE(e.finish_binding("uid-a", t0).ok());
    EXPECT_TRUE(e.pod_entry("uid-a").binding_finished);
    EXPECT_TRUE(e.expire_assumed_pods(t0 + std::chrono::seconds(29)).empty());
    const std::vector<std::string> gone = e.expire_assumed_pods(t0 + std::chrono::seconds(31));
    if (ttl == 0) {
      EXPECT_TRUE(gone.empty());
      EXPECT_EQ(requested_cpu(e, "n1"), 2000);
    } else {
      EXPECT_EQ(gone, std::vector<std::string>{"uid-a"});  // b's binding never finished
      EXPECT_EQ(requested_cpu(e, "n1"), 1000);
    }
  }
}

// A removed node's pods stay in the cache, unseen, and count again when the
// node returns; a pod added for a node not yet present waits for it.
TEST(EngineEvents, PodsOfARemovedNodeWaitForItsReturn) {
  auto e = engine_of({plain_node("n1", 4000), plain_node("n2", 4000)},
                     {cpu_pod("a", 1000, "n1"), cpu_pod("b", 1500, "n2"), cpu_pod("early", 300, "n3")});
  EXPECT_FALSE(e->pod_entry("uid-early").node_present);
  ASSERT_TRUE(e->remove_node("n1").ok());
  EXPECT_EQ(e->snapshot().num_nodes(), 1U);
  EXPECT_EQ(e->pod_entry("uid-a").state, PodCacheState::kBound);
  EXPECT_FALSE(e->pod_entry("uid-a").node_present);
  EXPECT_EQ(e->snapshot().num_pods(), 1U);
  // Updates reach a waiting pod; a removal takes it.
  Pod a = cpu_pod("a", 1200, "n1");
  ASSERT_TRUE(e->update_pod(a).ok());
  ASSERT_TRUE(e->add_node(plain_node("n1", 8000)).ok());
  EXPECT_TRUE(e->pod_entry("uid-a").node_present);
  EXPECT_EQ(requested_cpu(*e, "n1"), 1200);
  ASSERT_TRUE(e->add_node(plain_node("n3", 8000)).ok());
  EXPECT_EQ(requested_cpu(*e, "n3"), 300);
  // Indices shift, names stay: n2 is now index 0.
  ASSERT_TRUE(e->remove_node("n1").ok());
  ASSERT_TRUE(e->remove_pod("uid-a").ok());
  ASSERT_TRUE(e->add_node(plain_node("n1", 8000)).ok());
  EXPECT_EQ(requested_cpu(*e, "n1"), 0);
  EXPECT_EQ(e->snapshot().node_name(0), "n2");
  EXPECT_EQ(requested_cpu(*e, "n2"), 1500);
}

// On a cluster without taints TaintToleration's Filter is left out of the
// per-node pass (every node passes it): each pod's prepare decides that on
// the snapshot it is evaluated on, so the first taint brings it back, also
// for a pod alike to one the batch cache kept a state for (a taint change
// is structural and ends the states; the pod's filter list differs too):
// n1 (the larger node, LeastAllocated's choice) takes a NoSchedule taint
// and the next pod, alike to the first, goes to n2; once the taint is gone,
// to n1 again.
TEST(EngineEvents, TheFirstTaintBringsTaintTolerationsFilterBack) {
  Node big = plain_node("n1", 64000);
  big.allocatable["memory"] = 512LL << 30;  // the larger node in every resource
  for (const Batching batching : {Batching::Exact, Batching::Off}) {
    auto e = engine_of({big, plain_node("n2", 8000)}, {}, batching);
    ASSERT_EQ(e->schedule(cpu_pod("a", 100)).node_name, "n1");
    Node tainted = big;
    tainted.taints.push_back(Taint{"dedicated", "gpu", "NoSchedule"});
    ASSERT_TRUE(e->update_node(tainted).ok());
    EXPECT_EQ(e->schedule(cpu_pod("b", 100)).node_name, "n2") << batching_name(batching);
    ASSERT_TRUE(e->update_node(big).ok());
    EXPECT_EQ(e->schedule(cpu_pod("c", 100)).node_name, "n1") << batching_name(batching);
  }
}

// Forget is an exact undo: after schedule + forget, the next decisions (and
// every column a decision reads) equal an engine's that never saw the pod.
TEST(EngineEvents, ForgetUndoesAnAssumeExactly) {
  SplitMix64 rng(parity_seed() ^ 0xf0f0);
  const std::vector<std::string> names = {"default-scheduler", "spread-list", "gpu-share", "gpu-fgd"};
  for (int round = 0; round < 6; ++round) {
    Cluster c = testutil::random_cluster(rng, {40, 30}, names);
    EngineOptions o{"cpu", TieBreak::First, 3};
    Engine undone(testutil::parity_config(), o), plain(testutil::parity_config(), o);
    undone.load(c);
    plain.load(c);
    // Schedule, forget, repeat: every other pod is forgotten at once.
    for (size_t i = 0; i < c.pending_pods.size(); ++i) {
      const Pod& p = c.pending_pods[i];
      if (i % 2 == 0) {
        const ScheduleResult r = undone.schedule(p);
        if (r.node >= 0) {
          ASSERT_TRUE(undone.forget_pod(p.cache_key()).ok());
        }
        continue;
      }
      const ScheduleResult a = undone.schedule(p), b = plain.schedule(p);
      ASSERT_EQ(a.node_name, b.node_name) << "round " << round << " pod " << p.key();
      ASSERT_EQ(a.score, b.score) << p.key();
      ASSERT_EQ(a.devices, b.devices) << p.key();
      ASSERT_EQ(a.message, b.message) << p.key();
    }
    // Resource by resource: a forgotten pod may have named a resource no
    // other pod names (its column stays, all zero).
    const Snapshot& u = undone.snapshot();
    const Snapshot& q = plain.snapshot();
    for (uint32_t r = 0; r < u.num_resources(); ++r) {
      const int32_t qr = q.resource_index(u.resource_name(r));
      for (uint32_t n = 0; n < q.num_nodes(); ++n)
        ASSERT_EQ(u.view().req(r, n), qr < 0 ? 0 : q.view().req(static_cast<uint32_t>(qr), n))
            << u.resource_name(r) << " on " << q.node_name(n);
    }
    EXPECT_EQ(undone.snapshot().nonzero_requested(), plain.snapshot().nonzero_requested());
    EXPECT_EQ(undone.snapshot().pod_count(), plain.snapshot().pod_count());
    for (uint32_t n = 0; n < plain.snapshot().num_nodes(); ++n)
      for (uint32_t d = 0; d < plain.snapshot().device_count(n); ++d)
        ASSERT_EQ(undone.snapshot().device_free(n, d), plain.snapshot().device_free(n, d));
  }
}

// A node that brings a resource name no node had, while pods are counted per
// zone: naming the resource is structural and recounts the per-domain sums,
// which must not read the new node's dense columns before they exist (the
// sanitizer build found that read; a release build recounted again at the
// end and hid it). Later decisions equal a fresh load's.
TEST(EngineEvents, ANodeWithANewResourceNameKeepsTheDomainSumsExact) {
  const auto spread_pod = [](const std::string& name) {
    Pod p = cpu_pod(name, 100);
    p.labels["app"] = "web";
    TopologySpreadConstraint zone;
    zone.max_skew = 1;
    zone.topology_key = "topology.kubernetes.io/zone";
    zone.when_unsatisfiable = "ScheduleAnyway";  // Score reads the per-domain sums
    zone.label_selector = LabelSelector{};
    zone.label_selector->match_labels = {{"app", "web"}};
    p.topology_spread_constraints = {zone};
    return p;
  };
  // The zone the only label, so that its dense column is the last one: a
  // read past the old layout leaves the column.
  const auto zone_node = [](const std::string& name, const std::string& zone) {
    Node n = plain_node(name, 8000, zone);
    n.labels.erase("kubernetes.io/hostname");
    return n;
  };
  std::vector<Node> nodes = {zone_node("n1", "a"), zone_node("n2", "b"), zone_node("n3", "c")};
  Pod running = spread_pod("web-0");
  running.node_name = "n1";
  running.phase = "Running";
  auto e = engine_of(nodes, {running});
  ASSERT_GE(e->schedule(spread_pod("web-1")).node, 0);
  ASSERT_TRUE(e->finish_binding(spread_pod("web-1").cache_key()).ok());
  Node widget = zone_node("n4", "d");
  widget.allocatable["example.com/widget"] = 4;
  ASSERT_TRUE(e->add_node(widget).ok());
  // The same cluster, loaded whole.
  nodes.push_back(widget);
  std::vector<Pod> placed = {running};
  for (const Pod& p : {spread_pod("web-1")}) {
    const Snapshot& s = e->snapshot();
    const uint32_t id = s.find_pod(p.namespace_name, p.name);
    ASSERT_NE(id, Snapshot::kNoPod);
    Pod bound = s.pod(id);
    placed.push_back(bound);
  }
  auto fresh = engine_of(nodes, placed);
  for (int i = 2; i < 8; ++i) {
    const Pod p = spread_pod("web-" + std::to_string(i));
    const ScheduleResult a = e->schedule(p), b = fresh->schedule(p);
    ASSERT_EQ(a.node_name, b.node_name) << p.name;
    ASSERT_EQ(a.score, b.score) << p.name;
    ASSERT_EQ(a.message, b.message) << p.name;
  }
}

// Objects change only what they change, without a reload: a Service makes
// its pods spread by default, removing it stops that.
TEST(EngineEvents, ObjectsApplyIncrementallyAsAReloadWould) {
  std::vector<Node> nodes = {plain_node("a1", 8000, "a"), plain_node("a2", 8000, "a"), plain_node("b1", 8000, "b")};
  std::vector<Pod> running;
  for (int i = 0; i < 4; ++i) {
    Pod p = cpu_pod("old-" + std::to_string(i), 100, i < 3 ? "a1" : "a2");
    p.labels["app"] = "web";
    running.push_back(p);
  }
  SelectingObject svc;
  svc.kind = SelectingObject::Kind::Service;
  svc.namespace_name = "default";
  svc.name = "web";
  svc.has_selector = true;
  svc.selector_map = {{"app", "web"}};
  Pod next = cpu_pod("new", 100);
  next.labels["app"] = "web";

  auto reloaded = [&](bool with_service) {
    auto e = std::make_unique<Engine>(default_scheduler_config(), EngineOptions{"cpu", TieBreak::First, 1});
    Cluster c;
    c.nodes = nodes;
    c.running_pods = running;
    if (with_service) c.objects.selecting.push_back(svc);
    e->load(std::move(c));
    return e->peek(next);
  };
  auto e = engine_of(nodes, running);
  ASSERT_EQ(e->peek(next).node_name, reloaded(false).node_name);
  ASSERT_TRUE(e->add_object(svc).ok());
  EXPECT_EQ(e->add_object(svc).code, EventCode::kAlreadyExists);
  const ScheduleResult with = e->peek(next);
  EXPECT_EQ(with.node_name, reloaded(true).node_name);
  EXPECT_EQ(with.score, reloaded(true).score);
  SelectingObject other = svc;
  other.selector_map = {{"app", "db"}};
  ASSERT_TRUE(e->update_object(other).ok());
  EXPECT_EQ(e->peek(next).score, reloaded(false).score);
  ASSERT_TRUE(e->remove_object(ObjectKind::kService, "default", "web").ok());
  EXPECT_EQ(e->peek(next).score, reloaded(false).score);
  EXPECT_TRUE(e->objects().selecting.empty());
  ASSERT_TRUE(e->add_object(Namespace{"default", {{"team", "a"}}}).ok());
  ASSERT_TRUE(e->update_object(Namespace{"default", {{"team", "b"}}}).ok());
  EXPECT_EQ(e->objects().namespaces.at(0).labels.at("team"), "b");
  ASSERT_TRUE(e->remove_object(ObjectKind::kNamespace, "", "default").ok());
}

// PriorityClasses and PodDisruptionBudgets as events: the statuses of the
// other kinds, and each change effective at the next decision. A pending
// pod without spec.priority takes its priority from the classes held when
// it is scheduled (the named class, else the global default, else 0); a
// pod the cache holds keeps the one it was added with.
TEST(EngineEvents, PriorityClassesAndBudgetsApplyAtTheNextDecision) {
  Pod low1 = cpu_pod("low1", 2000, "n1");
  Pod low2 = cpu_pod("low2", 2000, "n2");
  for (Pod* p : {&low1, &low2}) {
    p->priority = 10;
    p->has_priority = true;
  }
  low1.labels["app"] = "one";
  low2.labels["app"] = "two";
  auto e = engine_of({plain_node("n1", 2000), plain_node("n2", 2000)}, {low1, low2});
  const Pod hi = cpu_pod("hi", 2000);  // no priority, no class
  const auto nominated = [&](const Pod& p) {
    const Ranking r = e->rank(p, 1);
    EXPECT_TRUE(r.preemption.has_value());
    return r.preemption ? r.preemption->nominated_node : std::string("(none)");
  };
  // Priority 0 evicts nobody.
  EXPECT_EQ(nominated(hi), "");

  // A global default class gives the pod 1000: both nodes tie on every
  // criterion (the same start time, stamped at load); the lowest index wins.
  PriorityClass urgent{"urgent", 1000, true, "PreemptLowerPriority", ""};
  ASSERT_TRUE(e->add_object(urgent).ok());
  EXPECT_EQ(e->add_object(urgent).code, EventCode::kAlreadyExists);
  EXPECT_EQ(nominated(hi), "n1");
  EXPECT_EQ(e->rank(hi, 1).preemption->decided_by, PreemptionCriterion::kNodeIndex);

  // A budget that allows no disruption of low1 moves the choice to n2.
  PodDisruptionBudget pdb;
  pdb.namespace_name = "default";
  pdb.name = "one";
  pdb.selector = LabelSelector{{{"app", "one"}}, {}};
  pdb.current_healthy = 1;
  pdb.desired_healthy = 1;
  ASSERT_TRUE(e->add_object(pdb).ok());
  EXPECT_EQ(e->add_object(pdb).code, EventCode::kAlreadyExists);
  EXPECT_EQ(nominated(hi), "n2");
  EXPECT_EQ(e->rank(hi, 1).preemption->decided_by, PreemptionCriterion::kPdbViolations);
  // Allowing one disruption brings it back.
  pdb.disruptions_allowed = 1;
  pdb.current_healthy = 2;
  ASSERT_TRUE(e->update_object(pdb).ok());
  EXPECT_EQ(nominated(hi), "n1");
  PodDisruptionBudget absent = pdb;
  absent.name = "none";
  EXPECT_EQ(e->update_object(absent).code, EventCode::kNotFound);
  EXPECT_EQ(e->remove_object(ObjectKind::kPodDisruptionBudget, "default", "none").code, EventCode::kNotFound);
  EXPECT_EQ(e->remove_object(ObjectKind::kPodDisruptionBudget, "other", "one").code, EventCode::kNotFound);

  // A class's value and policy are immutable; globalDefault is not.
  PriorityClass changed = urgent;
  changed.value = 5;
  EXPECT_EQ(e->update_object(changed).code, EventCode::kInvalid);
  changed = urgent;
  changed.preemption_policy = "Never";
  EXPECT_EQ(e->update_object(changed).code, EventCode::kInvalid);
  EXPECT_EQ(e->objects().priority_classes.at(0).value, 1000);
  changed = urgent;
  changed.global_default = false;
  ASSERT_TRUE(e->update_object(changed).ok());
  EXPECT_EQ(nominated(hi), "");  // no default class: priority 0 again
  PriorityClass other{"other", 1, false, "PreemptLowerPriority", ""};
  EXPECT_EQ(e->update_object(other).code, EventCode::kNotFound);

  // A pod naming the class: its priority at schedule time, and the budget
  // that covered its victim is charged (the disruption controller's view).
  Pod named = cpu_pod("named", 2000);
  named.priority_class_name = "urgent";
  const ScheduleResult r = e->schedule(named);
  EXPECT_EQ(r.node_name, "n1");
  EXPECT_EQ(r.nominated_node, "n1");
  EXPECT_EQ(r.victims, std::vector<std::string>{"default/low1"});
  EXPECT_EQ(r.pdb_violations, 0);
  EXPECT_EQ(e->objects().pdbs.at(0).current_healthy, 1);
  EXPECT_EQ(e->objects().pdbs.at(0).disruptions_allowed, 0);
  ASSERT_TRUE(e->remove_object(ObjectKind::kPodDisruptionBudget, "default", "one").ok());
  EXPECT_TRUE(e->objects().pdbs.empty());

  // Removed, the class is gone for pending pods (a pod naming it is bad
  // input, as admission would refuse it); the pod placed keeps its 1000.
  ASSERT_TRUE(e->remove_object(ObjectKind::kPriorityClass, "", "urgent").ok());
  EXPECT_EQ(e->remove_object(ObjectKind::kPriorityClass, "", "urgent").code, EventCode::kNotFound);
  Pod late = cpu_pod("late", 2000);
  late.priority_class_name = "urgent";
  EXPECT_THROW(e->schedule(late), InputError);
  const uint32_t id = e->snapshot().find_pod("default", "named");
  ASSERT_NE(id, Snapshot::kNoPod);
  EXPECT_EQ(e->snapshot().pod(id).priority, 1000);
  // The system classes are known without an object; listing one is an add.
  EXPECT_TRUE(e->add_object(PriorityClass{"system-node-critical", 2000001000, false, "PreemptLowerPriority", ""}).ok());
  EXPECT_STREQ(object_kind_name(ObjectKind::kPriorityClass), "PriorityClass");
  EXPECT_STREQ(object_kind_name(ObjectKind::kPodDisruptionBudget), "PodDisruptionBudget");
}

// Pod groups as events: a Workload's podGroups[] are one object (added,
// replaced and removed together), the two PodGroup kinds are apart, and
// each change counts from the next gang attempt; the pods placed keep
// their places.
TEST(EngineEvents, PodGroupsApplyAtTheNextGangAttempt) {
  auto e = engine_of({plain_node("n1", 8000)});
  const auto group = [](PodGroupObject::Api api, const std::string& name, const std::string& pod_group,
                        int32_t min_count) {
    PodGroupObject g;
    g.api = api;
    g.namespace_name = "default";
    g.name = name;
    g.pod_group = pod_group;
    g.gang = min_count > 0;  // 0: policy.basic
    g.min_count = min_count;
    return g;
  };
  using Api = PodGroupObject::Api;
  const auto member = [](const std::string& name, const std::string& pod_group) {
    Pod p = cpu_pod(name, 1000);
    p.workload_name = "train";
    p.workload_pod_group = pod_group;
    return p;
  };
  std::vector<PodGroupObject> train = {group(Api::kWorkload, "train", "workers", 2),
                                       group(Api::kWorkload, "train", "driver", 0)};

  // Refused: nothing, two objects, a group named twice, a PodGroup of two.
  EXPECT_EQ(e->add_object(std::vector<PodGroupObject>{}).code, EventCode::kInvalid);
  std::vector<PodGroupObject> mixed = train;
  mixed[1].name = "other";
  const EventStatus two = e->add_object(mixed);
  EXPECT_EQ(two.code, EventCode::kInvalid);
  EXPECT_NE(two.message.find("Workload \"default/train\": groups[1] is Workload \"default/other\""), std::string::npos)
      << two.message;
  std::vector<PodGroupObject> twice = train;
  twice[1].pod_group = "workers";
  EXPECT_EQ(e->add_object(twice).code, EventCode::kInvalid);
  std::vector<PodGroupObject> unnamed = train;
  unnamed[0].pod_group.clear();
  EXPECT_EQ(e->add_object(unnamed).message, "Workload \"default/train\": spec.podGroups[0].name: required");
  EXPECT_EQ(e->add_object({group(Api::kPodGroup, "pg", "", 1), group(Api::kPodGroup, "pg", "", 1)}).code,
            EventCode::kInvalid);
  EXPECT_TRUE(e->objects().pod_groups.empty());

  // Missing, then added: the same members rejected, then admitted.
  const std::vector<Pod> workers = {member("w1", "workers"), member("w2", "workers")};
  std::vector<ScheduleResult> r = e->schedule_all(workers);
  ASSERT_EQ(r.size(), 2U);
  EXPECT_EQ(r[0].group_outcome, GroupOutcome::kRejected);
  EXPECT_NE(r[0].message.find("waiting for pods's workload \"train\""), std::string::npos) << r[0].message;
  ASSERT_TRUE(e->add_object(train).ok());
  EXPECT_EQ(e->add_object(train).code, EventCode::kAlreadyExists);
  EXPECT_EQ(e->objects().pod_groups.size(), 2U);
  EXPECT_EQ(e->pod_group_status(workers[0], workers).rejection, "");
  r = e->schedule_all(workers);
  ASSERT_EQ(r.size(), 2U);
  for (const ScheduleResult& x : r) {
    EXPECT_EQ(x.node_name, "n1");
    EXPECT_EQ(x.pod_group, "default/train/workers");
    EXPECT_EQ(x.group_outcome, GroupOutcome::kAdmitted);
  }

  // Updated whole: minCount 4 (two placed and one pending are too few) and
  // no driver group any more.
  std::vector<PodGroupObject> bigger = {group(Api::kWorkload, "train", "workers", 4)};
  ASSERT_TRUE(e->update_object(bigger).ok());
  EXPECT_EQ(e->objects().pod_groups.size(), 1U);
  const Pod w3 = member("w3", "workers");
  const PodGroupStatus st = e->pod_group_status(w3, {w3});
  EXPECT_EQ(st.min_count, 4);
  EXPECT_EQ(st.placed, 2);
  EXPECT_EQ(st.pending, 1);
  EXPECT_NE(st.rejection.find("waiting for minCount pods from a gang"), std::string::npos) << st.rejection;
  r = e->schedule_all({w3, member("d1", "driver")});
  ASSERT_EQ(r.size(), 2U);
  EXPECT_EQ(r[0].group_outcome, GroupOutcome::kRejected);
  EXPECT_EQ(r[0].code, Code::UnschedulableAndUnresolvable);
  EXPECT_NE(r[1].message.find("pod group \"driver\" doesn't exist for a workload \"train\""), std::string::npos)
      << r[1].message;
  EXPECT_TRUE(e->is_assumed_pod("uid-w1"));
  EXPECT_TRUE(e->is_assumed_pod("uid-w2"));
  EXPECT_FALSE(e->is_assumed_pod("uid-w3"));

  // The two PodGroup kinds may share a name; each is removed by its own.
  ASSERT_TRUE(e->add_object({group(Api::kPodGroup, "pg", "", 1)}).ok());
  ASSERT_TRUE(e->add_object({group(Api::kCoscheduling, "pg", "", 1)}).ok());
  EXPECT_EQ(e->add_object({group(Api::kCoscheduling, "pg", "", 2)}).code, EventCode::kAlreadyExists);
  ASSERT_TRUE(e->update_object({group(Api::kCoscheduling, "pg", "", 2)}).ok());
  EXPECT_EQ(e->update_object({group(Api::kCoscheduling, "none", "", 2)}).code, EventCode::kNotFound);
  ASSERT_TRUE(e->remove_object(ObjectKind::kCoschedulingPodGroup, "default", "pg").ok());
  EXPECT_EQ(e->remove_object(ObjectKind::kCoschedulingPodGroup, "default", "pg").code, EventCode::kNotFound);
  ASSERT_EQ(e->objects().pod_groups.size(), 2U);
  EXPECT_EQ(e->objects().pod_groups[1].api, Api::kPodGroup);
  ASSERT_TRUE(e->remove_object(ObjectKind::kPodGroup, "default", "pg").ok());

  // Removed: its pending members are rejected as missing again; the pods
  // placed stay.
  EXPECT_EQ(e->remove_object(ObjectKind::kWorkload, "other", "train").code, EventCode::kNotFound);
  ASSERT_TRUE(e->remove_object(ObjectKind::kWorkload, "default", "train").ok());
  EXPECT_TRUE(e->objects().pod_groups.empty());
  EXPECT_EQ(e->update_object(train).code, EventCode::kNotFound);
  r = e->schedule_all({w3});
  ASSERT_EQ(r.size(), 1U);
  EXPECT_EQ(r[0].group_outcome, GroupOutcome::kRejected);
  EXPECT_NE(r[0].message.find("waiting for pods's workload"), std::string::npos) << r[0].message;
  EXPECT_TRUE(e->is_assumed_pod("uid-w1"));
  EXPECT_STREQ(object_kind_name(ObjectKind::kWorkload), "Workload");
  EXPECT_STREQ(object_kind_name(ObjectKind::kPodGroup), "PodGroup.scheduling.k8s.io");
  EXPECT_STREQ(object_kind_name(ObjectKind::kCoschedulingPodGroup), "PodGroup.scheduling.x-k8s.io");
}

// ---- random event streams against a fresh load ---------------------------------

// What the cluster is, kept apart from the engine: nodes in the engine's
// order (adds append, removals close up), every pod the cache holds with
// the node it is on (assumed pods with the devices the engine chose), and
// the objects in order.
struct Truth {
  std::vector<Node> nodes;
  std::vector<std::string> pod_order;  // keys, first added first
  std::map<std::string, Pod> pods;
  ClusterObjects objects;
  std::vector<Node> removed;  // nodes that may come back

  void put(const Pod& p) {
    const std::string key = p.cache_key();
    if (!pods.count(key)) pod_order.push_back(key);
    pods[key] = p;
  }
  void drop(const std::string& key) {
    pods.erase(key);
    pod_order.erase(std::remove(pod_order.begin(), pod_order.end(), key), pod_order.end());
  }
  Cluster cluster() const {
    Cluster c;
    c.nodes = nodes;
    for (const std::string& k : pod_order) c.running_pods.push_back(pods.at(k));
    c.objects = objects;
    return c;
  }
};

// Where two engines' clusters differ, node by node (by name): requests,
// pod counts, free device units. "" when they agree.
std::string first_difference(const Snapshot& a, const Snapshot& b) {
  if (a.num_nodes() != b.num_nodes())
    return "node count " + std::to_string(a.num_nodes()) + " vs " + std::to_string(b.num_nodes());
  for (uint32_t n = 0; n < a.num_nodes(); ++n) {
    const int32_t m = b.node_index(a.node_name(n));
    const std::string at = "node " + a.node_name(n) + ": ";
    if (m < 0) return at + "missing from the fresh load";
    const auto bm = static_cast<uint32_t>(m);
    if (a.pod_count()[n] != b.pod_count()[bm])
      return at + "pods " + std::to_string(a.pod_count()[n]) + " vs " + std::to_string(b.pod_count()[bm]);
    for (uint32_t r = 0; r < a.num_resources(); ++r) {
      const int32_t br = b.resource_index(a.resource_name(r));
      const int64_t x = a.view().req(r, n), y = br < 0 ? 0 : b.view().req(static_cast<uint32_t>(br), bm);
      if (x != y) return at + a.resource_name(r) + " requested " + std::to_string(x) + " vs " + std::to_string(y);
    }
    if (a.device_count(n) != b.device_count(bm)) return at + "device count differs";
    for (uint32_t d = 0; d < a.device_count(n); ++d)
      if (a.device_free(n, d) != b.device_free(bm, d))
        return at + "device " + std::to_string(d) + " free " + std::to_string(a.device_free(n, d)) + " vs " +
               std::to_string(b.device_free(bm, d));
  }
  return "";
}

std::string describe(const ScheduleResult& r) {
  std::string s = r.pod + " -> " + (r.node_name.empty() ? "(none)" : r.node_name) + " score " +
                  std::to_string(r.score) + " feasible " + std::to_string(r.feasible_nodes) + " devices [";
  for (int32_t d : r.devices) s += std::to_string(d) + " ";
  return s + "] " + r.message;
}

// The profiles whose decisions a fresh load reproduces: every node scored
// (sampling's start and upstream's node tree follow the event history, as
// upstream's do), so not the filter-only one (it takes the first fit).
const std::vector<std::string>& stream_schedulers() {
  static const std::vector<std::string> names = {"default-scheduler", "most-allocated", "ratio", "spread-list",
                                                 "seam-probe", "gpu-share", "gpu-fgd"};
  return names;
}

Pod bound_copy(const Pod& p, const ScheduleResult& r, const DeviceModel& model) {
  Pod held = p;
  held.node_name = r.node_name;
  if (!r.devices.empty()) held.annotations[model.index_annotation] = format_device_indices(r.devices);
  return held;
}

// One stream: `events` random events on a random cluster; after each, with
// some chance, the next pending pod is scheduled on the engine that saw the
// events (`backend`, batching exact: its device mirror and cache states
// follow every event) and on a fresh CPU engine loaded with Truth (batching
// off); the two must decide the same.
// `compaction`: the engine that saw the events releases the dead under it
// ({0, 0}: after every event that left anything dead, renumbering ids under
// its batch states and device mirror each time).
void run_stream(const char* backend, uint64_t seed, uint32_t nodes, uint32_t events, uint64_t& compared,
                CompactionPolicy compaction, uint64_t& compactions) {
  SplitMix64 rng(seed);
  Cluster start = testutil::random_cluster(rng, {nodes, events}, stream_schedulers());
  const SchedulerConfig& config = testutil::parity_config();
  const DeviceModel model = config.profiles.at(0).gpu_share_args.model;
  EngineOptions inc_options{backend, TieBreak::First, seed};
  inc_options.batch_states = 4;
  inc_options.compaction = compaction;
  Engine inc(config, inc_options);
  inc.load(start);
  Truth truth;
  truth.nodes = start.nodes;
  // The running pods as the engine holds them (devices assigned at load).
  for (const Pod& p : start.running_pods) {
    const uint32_t id = inc.snapshot().find_pod(p.namespace_name, p.name);
    truth.put(id == Snapshot::kNoPod ? p : inc.snapshot().pod(id));
  }
  truth.objects = start.objects;
  std::vector<Pod> pending = start.pending_pods;
  // A pod that asks for devices, placed by a profile without GpuShare, holds
  // none (a warning says so) and carries no index annotation: a fresh load
  // cannot tell it from a running pod whose devices are unknown, and gives
  // it free devices (docs/library.md). Such pods go to a GpuShare profile.
  for (Pod& p : pending)
    if (p.annotations.count(model.count_annotation) &&
        p.scheduler_name != "gpu-share" && p.scheduler_name != "gpu-fgd")
      p.scheduler_name = "gpu-share";
  size_t next_pending = 0;
  uint32_t next_node = 100000, next_pod = 0;

  const auto some_key = [&]() -> std::string {
    if (truth.pod_order.empty()) return "";
    return truth.pod_order[rng.below(truth.pod_order.size())];
  };
  const auto expect = [&](const EventStatus& s, const char* what) {
    ASSERT_TRUE(s.ok()) << "seed " << seed << ": " << what << ": " << event_code_name(s.code) << " " << s.message;
  };

  for (uint32_t ev = 0; ev < events; ++ev) {
    const uint64_t what = rng.below(100);
    if (what < 8 && truth.nodes.size() > 2) {  // a node leaves (its pods wait)
      const size_t i = rng.below(truth.nodes.size());
      expect(inc.remove_node(truth.nodes[i].name), "remove_node");
      truth.removed.push_back(truth.nodes[i]);
      truth.nodes.erase(truth.nodes.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (what < 14) {  // a node joins, new or back
      Node n;
      if (!truth.removed.empty() && rng.chance(0.5)) {
        const size_t i = rng.below(truth.removed.size());
        n = truth.removed[i];
        truth.removed.erase(truth.removed.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        n = testutil::random_node(rng, next_node++, rng.chance(0.05));
      }
      expect(inc.add_node(n), "add_node");
      truth.nodes.push_back(n);
    } else if (what < 22 && !truth.nodes.empty()) {  // a node changes: in place or structurally
      const size_t i = rng.below(truth.nodes.size());
      Node n = truth.nodes[i];
      n.allocatable["cpu"] = static_cast<int64_t>(rng.between(1, 64)) * 1000;
      n.unschedulable = rng.chance(0.15);
      if (rng.chance(0.3)) n.labels["pool"] = testutil::pick(rng, testutil::kPools);
      if (rng.chance(0.2)) n.taints.clear();
      expect(inc.update_node(n), "update_node");
      truth.nodes[i] = n;
    } else if (what < 32) {  // a running pod arrives (sometimes for a node not here)
      Pod p;
      p.namespace_name = rng.chance(0.6) ? "parity" : "running";
      p.name = "ext-" + std::to_string(next_pod++);
      p.uid = "ext-uid-" + p.name;
      p.phase = "Running";
      if (rng.chance(0.8)) p.labels["app"] = rng.chance(0.5) ? "web" : "db";
      p.containers.push_back(testutil::random_container(rng, "main", false));
      if (rng.chance(0.15)) p.containers[0].ports.push_back(testutil::random_host_port(rng));
      if (rng.chance(0.2)) {
        testutil::add_random_device_demand(rng, p);
        p.annotations[model.index_annotation] = std::to_string(rng.below(4));
      }
      if (rng.chance(0.3)) p.affinity = testutil::random_pod_affinity(rng, 0.6);
      p.node_name = !truth.removed.empty() && rng.chance(0.1) ? truth.removed[0].name
                    : truth.nodes.empty()                     ? "nowhere"
                                                              : truth.nodes[rng.below(truth.nodes.size())].name;
      expect(inc.add_pod(p), "add_pod");
      truth.put(p);
    } else if (what < 40) {  // a pod leaves
      const std::string k = some_key();
      if (k.empty()) continue;
      expect(inc.remove_pod(k), "remove_pod");
      truth.drop(k);
    } else if (what < 48) {  // a pod changes (confirmed first when assumed)
      const std::string k = some_key();
      if (k.empty()) continue;
      Pod p = truth.pods.at(k);
      if (inc.is_assumed_pod(k)) expect(inc.add_pod(p), "confirm");
      p.labels["app"] = rng.chance(0.5) ? "cache" : "web";
      p.deleting = rng.chance(0.2);
      expect(inc.update_pod(p), "update_pod");
      truth.put(p);
    } else if (what < 54) {  // an assumed pod is confirmed, forgotten or its binding finishes
      std::vector<std::string> assumed;
      for (const std::string& k : truth.pod_order)
        if (inc.is_assumed_pod(k)) assumed.push_back(k);
      if (assumed.empty()) continue;
      const std::string k = assumed[rng.below(assumed.size())];
      const uint64_t how = rng.below(3);
      if (how == 0) {
        expect(inc.add_pod(truth.pods.at(k)), "confirm");
      } else if (how == 1) {
        expect(inc.forget_pod(k), "forget");
        truth.drop(k);
      } else {
        expect(inc.finish_binding(k), "finish_binding");
      }
    } else if (what < 62) {  // objects: the Service, a ReplicaSet, Namespaces
      const uint64_t which = rng.below(4);
      if (which == 0) {
        SelectingObject rs;
        rs.kind = SelectingObject::Kind::ReplicaSet;
        rs.namespace_name = "parity";
        rs.name = "rs-" + std::to_string(rng.below(3));
        rs.has_selector = true;
        rs.label_selector = LabelSelector{};
        rs.label_selector->match_labels["app"] = rng.chance(0.5) ? "db" : "cache";
        auto it = std::find_if(truth.objects.selecting.begin(), truth.objects.selecting.end(),
                               [&](const SelectingObject& o) { return o.kind == rs.kind && o.name == rs.name; });
        if (it == truth.objects.selecting.end()) {
          expect(inc.add_object(rs), "add ReplicaSet");
          truth.objects.selecting.push_back(rs);
        } else if (rng.chance(0.5)) {
          expect(inc.update_object(rs), "update ReplicaSet");
          *it = rs;
        } else {
          expect(inc.remove_object(ObjectKind::kReplicaSet, "parity", rs.name), "remove ReplicaSet");
          truth.objects.selecting.erase(it);
        }
      } else if (which == 1) {
        auto it = std::find_if(truth.objects.selecting.begin(), truth.objects.selecting.end(),
                               [](const SelectingObject& o) { return o.name == "web"; });
        if (it != truth.objects.selecting.end()) {
          expect(inc.remove_object(ObjectKind::kService, "parity", "web"), "remove Service");
          truth.objects.selecting.erase(it);
        } else {
          SelectingObject svc;
          svc.kind = SelectingObject::Kind::Service;
          svc.namespace_name = "parity";
          svc.name = "web";
          svc.has_selector = true;
          svc.selector_map = {{"app", "web"}};
          expect(inc.add_object(svc), "add Service");
          truth.objects.selecting.push_back(svc);
        }
      } else {
        // Namespace labels (namespaceSelectors read them).
        const std::string name = which == 2 ? "parity" : "running";
        auto it = std::find_if(truth.objects.namespaces.begin(), truth.objects.namespaces.end(),
                               [&](const Namespace& n) { return n.name == name; });
        Namespace ns{name, {{"team", rng.chance(0.5) ? "a" : "b"}}};
        if (it == truth.objects.namespaces.end()) {
          expect(inc.add_object(ns), "add Namespace");
          truth.objects.namespaces.push_back(ns);
        } else if (rng.chance(0.7)) {
          expect(inc.update_object(ns), "update Namespace");
          *it = ns;
        } else {
          expect(inc.remove_object(ObjectKind::kNamespace, "", name), "remove Namespace");
          truth.objects.namespaces.erase(it);
        }
      }
    } else if (next_pending < pending.size()) {  // a pending pod is scheduled: compare
      const Pod& p = pending[next_pending++];
      EngineOptions fresh_options{"cpu", TieBreak::First, seed};
      fresh_options.batching = Batching::Off;
      Engine fresh(config, fresh_options);
      fresh.load(truth.cluster());
      const std::string before_difference = first_difference(inc.snapshot(), fresh.snapshot());
      const ScheduleResult a = inc.schedule(p);
      const ScheduleResult b = fresh.schedule(p);
      ++compared;
      ASSERT_EQ(describe(a), describe(b)) << "seed " << seed << " event " << ev
                                          << ": the engine that saw the events decides otherwise than a fresh load; "
                                          << "first difference in the clusters before the pod: "
                                          << before_difference;
      if (a.node >= 0) truth.put(bound_copy(p, a, model));
    }
  }
  compactions += inc.snapshot().compactions();
}

TEST(EngineEvents, RandomEventStreamsDecideAsAFreshLoad) {
  uint64_t compared = 0, compactions = 0;
  for (uint64_t s = 0; s < 24; ++s) {
    const uint32_t nodes = 3 + static_cast<uint32_t>((s * 7) % 40);
    // Every other stream releases the dead after every event.
    const CompactionPolicy compaction = s % 2 ? CompactionPolicy{} : CompactionPolicy{0, 0};
    run_stream("cpu", parity_seed() + 1000 * s, nodes, 240, compared, compaction, compactions);
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(compared, 600U);
  EXPECT_GT(compactions, 100U);
}

// The same on the CUDA backend (a GPU machine: scripts/gpu-run.sh).
TEST(EngineEvents, RandomEventStreamsDecideAsAFreshLoadOnCuda) {
  const std::string why = backend_unavailable_reason("cuda");
  if (!why.empty()) GTEST_SKIP() << why;
  uint64_t compared = 0, compactions = 0;
  for (uint64_t s = 0; s < 12; ++s) {
    const uint32_t nodes = 3 + static_cast<uint32_t>((s * 11) % 70);
    const CompactionPolicy compaction = s % 2 ? CompactionPolicy{} : CompactionPolicy{0, 0};
    run_stream("cuda", parity_seed() + 1000 * s, nodes, 240, compared, compaction, compactions);
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(compared, 300U);
  EXPECT_GT(compactions, 50U);
}

// ---- an engine kept for weeks: bounded memory --------------------------------------

// Issue 21: a workload created, scheduled and deleted through the event API,
// again and again with new label values (a Deployment's rollouts: a new app
// name and pod-template-hash each time, its Service and ReplicaSet added and
// removed, pods spread and anti-affine by the hash), leaves the live strings,
// topology matchers, per-domain sums and term groups at their baseline. An
// engine releasing the dead after every event stores only the live; one
// under a bounded policy stays within its bound while an engine that never
// releases grows; all three decide every pod alike.
TEST(EngineEvents, RolloutsLeaveLiveCountsAtTheirBaseline) {
  std::vector<Node> nodes;
  for (int i = 0; i < 12; ++i)
    nodes.push_back(plain_node("n" + std::to_string(i), 16000, std::string(1, char('a' + i % 3))));
  const CompactionPolicy eager_policy{0, 0}, bounded_policy{0.5, 8}, never{0, UINT32_MAX};
  std::vector<std::unique_ptr<Engine>> engines;
  for (const CompactionPolicy& policy : {eager_policy, bounded_policy, never}) {
    EngineOptions o{"cpu", TieBreak::Random, 7};
    o.batch_states = 3;
    o.compaction = policy;
    engines.push_back(std::make_unique<Engine>(default_scheduler_config(), o));
    Cluster c;
    c.nodes = nodes;
    engines.back()->load(std::move(c));
  }
  Engine& eager = *engines[0];
  Engine& bounded = *engines[1];
  Engine& keep = *engines[2];
  const auto each = [&](const auto& event, const char* what) {
    for (auto& e : engines) ASSERT_TRUE(event(*e).ok()) << what;
  };

  // A workload's objects and pods: a Service selecting `app`, a ReplicaSet
  // selecting `app` and `hash`; with `own`, spread constraints of its own
  // (matchLabelKeys: the hash) and a preferred anti-affinity term on the
  // hash, else the system-default spreading the objects give.
  int pod_seq = 0;
  const auto service = [](const std::string& app) {
    SelectingObject svc;
    svc.kind = SelectingObject::Kind::Service;
    svc.namespace_name = "default";
    svc.name = app;
    svc.has_selector = true;
    svc.selector_map = {{"app", app}};
    return svc;
  };
  const auto replica_set = [](const std::string& app, const std::string& hash) {
    SelectingObject rs;
    rs.kind = SelectingObject::Kind::ReplicaSet;
    rs.namespace_name = "default";
    rs.name = app + "-" + hash;
    rs.has_selector = true;
    rs.label_selector = LabelSelector{};
    rs.label_selector->match_labels = {{"app", app}, {"pod-template-hash", hash}};
    return rs;
  };
  const auto workload_pod = [&](const std::string& app, const std::string& hash, bool own) {
    Pod p = cpu_pod(app + "-" + hash + "-" + std::to_string(pod_seq++), 500);
    p.labels = {{"app", app}, {"pod-template-hash", hash}};
    p.owner_references.push_back({"apps/v1", "ReplicaSet", app + "-" + hash, "rs-uid", true});
    if (own) {
      TopologySpreadConstraint zone;
      zone.max_skew = 1;
      zone.topology_key = "topology.kubernetes.io/zone";
      zone.when_unsatisfiable = "ScheduleAnyway";
      zone.label_selector = LabelSelector{};
      zone.label_selector->match_labels = {{"app", app}};
      zone.match_label_keys = {"pod-template-hash"};
      TopologySpreadConstraint host = zone;
      host.topology_key = "kubernetes.io/hostname";
      host.when_unsatisfiable = "DoNotSchedule";
      host.max_skew = 2;
      p.topology_spread_constraints = {zone, host};
      p.affinity = Affinity{};
      p.affinity->pod_anti_affinity = PodAffinity{};
      WeightedPodAffinityTerm w;
      w.weight = 50;
      w.term.topology_key = "kubernetes.io/hostname";
      w.term.label_selector = LabelSelector{};
      w.term.label_selector->match_labels = {{"app", app}, {"pod-template-hash", hash}};
      p.affinity->pod_anti_affinity->preferred.push_back(w);
    }
    return p;
  };
  // Schedules `pod` on every engine (alike, or the test fails), then
  // confirms it where it went; returns its cache key.
  const auto place = [&](const Pod& pod) {
    std::vector<ScheduleResult> rs;
    for (auto& e : engines) rs.push_back(e->schedule(pod));
    EXPECT_GE(rs[0].node, 0) << rs[0].message;
    for (size_t i = 1; i < rs.size(); ++i) EXPECT_EQ(describe(rs[i]), describe(rs[0])) << "engine " << i;
    Pod bound = pod;
    bound.node_name = rs[0].node_name;
    bound.phase = "Running";
    for (auto& e : engines) EXPECT_TRUE(e->add_pod(bound).ok());
    return bound;
  };

  // The long-lived workload: the baseline.
  each([&](Engine& e) { return e.add_object(service("base")); }, "add base Service");
  each([&](Engine& e) { return e.add_object(replica_set("base", "b1")); }, "add base ReplicaSet");
  for (int i = 0; i < 4; ++i) place(workload_pod("base", "b1", i % 2 == 0));
  if (HasFailure()) return;
  std::vector<Snapshot::Census> baseline;
  for (auto& e : engines) baseline.push_back(e->snapshot().census());
  const auto live_of = [](const Snapshot::Census& c) {
    return std::vector<size_t>{c.live_strings, c.live_matchers, c.live_domain_sums, c.live_term_groups};
  };

  for (int round = 0; round < 24; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const std::string app = "web-" + std::to_string(round), hash = "h" + std::to_string(round * 7919 % 10007);
    const bool own = round % 2 == 0;
    each([&](Engine& e) { return e.add_object(service(app)); }, "add Service");
    each([&](Engine& e) { return e.add_object(replica_set(app, hash)); }, "add ReplicaSet");
    std::vector<Pod> pods;
    for (int i = 0; i < 6; ++i) pods.push_back(place(workload_pod(app, hash, own)));
    if (HasFailure()) return;
    // An update brings a label value of its own.
    pods[0].labels["version"] = "v" + std::to_string(round);
    each([&](Engine& e) { return e.update_pod(pods[0]); }, "update_pod");
    // A node is relabelled (structural) and back.
    Node relabelled = nodes[static_cast<size_t>(round) % nodes.size()];
    relabelled.labels["maintenance"] = "round-" + std::to_string(round);
    each([&](Engine& e) { return e.update_node(relabelled); }, "update_node");
    each([&](Engine& e) { return e.update_node(nodes[static_cast<size_t>(round) % nodes.size()]); }, "update_node");
    // The workload goes.
    for (const Pod& p : pods) each([&](Engine& e) { return e.remove_pod(p.cache_key()); }, "remove_pod");
    each([&](Engine& e) { return e.remove_object(ObjectKind::kReplicaSet, "default", app + "-" + hash); },
         "remove ReplicaSet");
    each([&](Engine& e) { return e.remove_object(ObjectKind::kService, "default", app); }, "remove Service");

    for (size_t i = 0; i < engines.size(); ++i) {
      const Snapshot::Census c = engines[i]->snapshot().census();
      EXPECT_EQ(live_of(c), live_of(baseline[i])) << "engine " << i << ": live strings, matchers, domain sums, groups";
    }
    const Snapshot::Census e = eager.snapshot().census();
    EXPECT_EQ(e.strings, e.live_strings);
    EXPECT_EQ(e.matchers, e.live_matchers);
    EXPECT_EQ(e.domain_sums, e.live_domain_sums);
    EXPECT_EQ(e.term_groups, e.live_term_groups);
    // Bounded: at most the policy's bound and a quarter more dead, and what
    // one event adds.
    const Snapshot::Census b = bounded.snapshot().census();
    const auto within = [&](size_t stored, size_t live) {
      const size_t bound = std::max<size_t>(8, (live + 1) / 2);
      return stored <= live + bound + bound / 4 + 8;
    };
    EXPECT_TRUE(within(b.strings, b.live_strings)) << b.strings << " strings, " << b.live_strings << " live";
    EXPECT_TRUE(within(b.matchers, b.live_matchers)) << b.matchers << " matchers, " << b.live_matchers << " live";
    EXPECT_TRUE(within(b.term_groups, b.live_term_groups))
        << b.term_groups << " groups, " << b.live_term_groups << " live";
    if (HasFailure()) return;
  }
  EXPECT_GT(bounded.snapshot().compactions(), 0U);
  EXPECT_EQ(keep.snapshot().compactions(), 0U);
  const Snapshot::Census k = keep.snapshot().census(), b = bounded.snapshot().census();
  std::printf(
      "[ release ] 24 rollouts: live at the baseline (%zu strings, %zu matchers, %zu domain sums, %zu term groups); "
      "stored never releasing %zu, %zu, %zu, %zu; bounded %zu, %zu, %zu, %zu (%llu compactions); eager %llu "
      "compactions\n",
      k.live_strings, k.live_matchers, k.live_domain_sums, k.live_term_groups, k.strings, k.matchers, k.domain_sums,
      k.term_groups, b.strings, b.matchers, b.domain_sums, b.term_groups,
      static_cast<unsigned long long>(bounded.snapshot().compactions()),
      static_cast<unsigned long long>(eager.snapshot().compactions()));
  EXPECT_GT(k.matchers, b.matchers + 24);  // never released: a matcher or more a round
  EXPECT_GT(k.strings, b.strings + 48);
  EXPECT_EQ(k.term_groups, k.live_term_groups + 12);  // one a round with terms of its own
  EXPECT_LT(b.term_groups, k.term_groups);
}

}  // namespace
}  // namespace bulkscore
