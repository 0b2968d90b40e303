// SharedDeviceGroup (plugins/shared_device_group.hpp), the groups as data
// (host/input/device_groups.hpp) and the snapshot's group state: reading
// the objects, the annotations, the filter and the two scores on small
// hand-computed clusters, binding, reuse and release through the engine,
// allocations restored at load, per-pod errors, and the batch cache deciding
// group workloads exactly as scheduling without it.
#include <gtest/gtest.h>

#include <memory>

#include "host/engine/engine.hpp"
#include "host/input/k8s_json.hpp"
#include "plugins/shared_device_group.hpp"
#include "tests/random_cluster.hpp"
#include "tests/test_util.hpp"

namespace bulkscore {
namespace {

using namespace testutil;

constexpr const char* kGpu = "nvidia.com/gpu";
constexpr const char* kMode = "deviceshare.io/mode";
constexpr const char* kGroup = "deviceshare.io/group";
constexpr const char* kDevices = "deviceshare.io/selected-devices";

Node shared_node(const std::string& name, int64_t gpus, StringMap labels = {}, bool shared = true) {
  Node n = make_node(name, 32000, int64_t{128} * 1024 * kMiB, 110);
  if (gpus > 0) n.allocatable[kGpu] = gpus;
  n.labels = std::move(labels);
  if (shared) n.labels[kMode] = "shared";
  return n;
}

SharedDeviceGroup group(const std::string& name, std::map<std::string, int32_t> resources,
                        SharedDeviceGroup::Strategy strategy = SharedDeviceGroup::Strategy::BinPack,
                        StringMap selector = {}) {
  SharedDeviceGroup g;
  g.name = name;
  g.resources = std::move(resources);
  g.strategy = strategy;
  g.node_selector = std::move(selector);
  g.origin = "objects.json: items[0]";
  return g;
}

Pod member(const std::string& name, const std::string& group_name) {
  Pod p = make_pod(name, {container({{"cpu", 500}})});
  p.annotations[kGroup] = group_name;
  return p;
}

ProfileConfig group_profile() {
  ProfileConfig p = default_scheduler_config().profiles.at(0);
  p.pre_filter.push_back("SharedDeviceGroup");
  p.filter.push_back("SharedDeviceGroup");
  p.pre_score.push_back("SharedDeviceGroup");
  p.score.push_back(PluginEntry{"SharedDeviceGroup", 5});
  return p;
}

std::unique_ptr<Engine> group_engine(const std::vector<Node>& nodes, std::vector<SharedDeviceGroup> groups,
                                     const std::vector<Pod>& running = {}, std::vector<std::string>* warnings = nullptr,
                                     Batching batching = Batching::Exact, ProfileConfig profile = group_profile()) {
  EngineOptions opts;
  opts.backend = "cpu";
  opts.tie_break = TieBreak::First;
  opts.batching = batching;
  SchedulerConfig c;
  c.profiles.push_back(std::move(profile));
  auto e = std::make_unique<Engine>(std::move(c), opts);
  Cluster cl;
  cl.nodes = nodes;
  cl.running_pods = running;
  cl.objects.device_groups = std::move(groups);
  auto w = e->load(cl);
  if (warnings) *warnings = w;
  return e;
}

int32_t free_on(const Engine& e, const std::string& node, const std::string& resource = kGpu) {
  const Snapshot& s = e.snapshot();
  return s.view().group_free_devices(static_cast<uint32_t>(s.group_device_row(resource)),
                                     static_cast<uint32_t>(s.node_index(node)));
}

const Snapshot::GroupBinding& binding(const Engine& e, const std::string& name) {
  return e.snapshot().device_group_binding(static_cast<uint32_t>(e.snapshot().device_group_index(name)));
}

bool contains(const std::vector<std::string>& lines, const std::string& fragment) {
  for (const auto& l : lines)
    if (l.find(fragment) != std::string::npos) return true;
  return false;
}

// ---- the objects and the annotations ------------------------------------------

TEST(SharedDeviceGroupObjects, ReadsSpecAndStatus) {
  const ClusterObjects o = parse_objects_json(R"({"kind":"List","items":[
    {"apiVersion":"deviceshare.io/v1alpha1","kind":"SharedDeviceGroup","metadata":{"name":"a"},
     "spec":{"resources":{"nvidia.com/gpu":2,"amd.com/gpu":1},"nodeSelector":{"zone":"z1"},
             "schedulingStrategy":"Spread"},
     "status":{"phase":"Bound","nodeName":"n1","selectedDevices":{"nvidia.com/gpu":"3, 1","amd.com/gpu":"0"}}},
    {"kind":"SharedDeviceGroup","metadata":{"name":"b"},"spec":{"resources":{"nvidia.com/gpu":1}}},
    {"kind":"Service","metadata":{"name":"s"},"spec":{"selector":{"app":"x"}}}]})",
                                              "objects.json");
  ASSERT_EQ(o.device_groups.size(), 2u);
  const SharedDeviceGroup& a = o.device_groups[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.resources, (std::map<std::string, int32_t>{{"amd.com/gpu", 1}, {"nvidia.com/gpu", 2}}));
  EXPECT_EQ(a.node_selector, (StringMap{{"zone", "z1"}}));
  EXPECT_EQ(a.strategy, SharedDeviceGroup::Strategy::Spread);
  EXPECT_EQ(a.bound_node, "n1");
  EXPECT_EQ(a.bound_devices, (GroupDevices{{"amd.com/gpu", {0}}, {"nvidia.com/gpu", {1, 3}}}));
  EXPECT_EQ(a.origin, "objects.json: items[0]");
  EXPECT_EQ(o.device_groups[1].strategy, SharedDeviceGroup::Strategy::BinPack);  // the default
  EXPECT_TRUE(o.device_groups[1].bound_node.empty());
  EXPECT_EQ(o.selecting.size(), 1u);
}

void expect_objects_error(const std::string& json, const std::string& fragment) {
  try {
    parse_objects_json(json, "objects.json");
    ADD_FAILURE() << "no error for " << json;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("objects.json"), std::string::npos) << e.what();
  }
}

TEST(SharedDeviceGroupObjects, BadObjectsNameTheFileTheObjectAndTheField) {
  const std::string head = R"({"kind":"SharedDeviceGroup","metadata":{"name":"g"},)";
  expect_objects_error(R"({"apiVersion":"deviceshare.io/v2","kind":"SharedDeviceGroup","metadata":{"name":"g"},
                          "spec":{"resources":{"nvidia.com/gpu":1}}})",
                       "apiVersion: expected deviceshare.io/v1alpha1");
  expect_objects_error(head + R"("spec":{"resources":{"nvidia.com/gpu":0}}})", "spec.resources.nvidia.com/gpu");
  expect_objects_error(head + R"("spec":{"resources":{"nvidia.com/gpu":65}}})", "device count in 1..64");
  expect_objects_error(head + R"("spec":{"resources":{"nvidia.com/gpu":"2"}}})", "expected an integer");
  expect_objects_error(head + R"("spec":{}})", "at least one device resource");
  expect_objects_error(head + R"("spec":{"resources":{"cpu":1}}})", "must be an extended resource name");
  expect_objects_error(head + R"("spec":{"resources":{"nvidia.com/gpu":1,"nvidia.com/mig-1g.10gb":1}}})",
                       "sets NVIDIA_VISIBLE_DEVICES as \"nvidia.com/gpu\" does");
  expect_objects_error(head + R"("spec":{"resources":{"nvidia.com/gpu":1},"schedulingStrategy":"pack"}})",
                       "expected binpack or spread");
  expect_objects_error(head + R"("spec":{"resources":{"nvidia.com/gpu":2}},
                                 "status":{"nodeName":"n","selectedDevices":{"nvidia.com/gpu":"0"}}})",
                       "lists 1 device(s), spec.resources asks for 2");
  expect_objects_error(head + R"("spec":{"resources":{"nvidia.com/gpu":1}},
                                 "status":{"nodeName":"n","selectedDevices":{"nvidia.com/gpu":"x"}}})",
                       "status.selectedDevices.nvidia.com/gpu");
  expect_objects_error(head + R"("spec":{"resources":{"nvidia.com/gpu":1}},"status":{"phase":"Bound"}})",
                       "status.nodeName: missing");
  expect_objects_error(R"({"kind":"List","items":[
      {"kind":"SharedDeviceGroup","metadata":{"name":"g"},"spec":{"resources":{"nvidia.com/gpu":1}}},
      {"kind":"SharedDeviceGroup","metadata":{"name":"g"},"spec":{"resources":{"nvidia.com/gpu":1}}}]})",
                       "is also objects.json: items[0]");
}

TEST(SharedDeviceGroupAnnotations, EnvironmentVariablesByVendor) {
  EXPECT_EQ(visible_devices_env("nvidia.com/gpu"), "NVIDIA_VISIBLE_DEVICES");
  EXPECT_EQ(visible_devices_env("nvidia.com/mig-1g.5gb"), "NVIDIA_VISIBLE_DEVICES");
  EXPECT_EQ(visible_devices_env("amd.com/gpu"), "AMD_VISIBLE_DEVICES");
  EXPECT_EQ(visible_devices_env("huawei.com/Ascend910"), "ASCEND_VISIBLE_DEVICES");
  EXPECT_EQ(visible_devices_env("intel.com/gpu"), "INTEL_GPU_VISIBLE_DEVICES");
  EXPECT_EQ(visible_devices_env("habana.ai/gaudi"), "HABANA_GAUDI_VISIBLE_DEVICES");
  EXPECT_EQ(visible_devices_env("example.com/fpga-x"), "EXAMPLE_FPGA_X_VISIBLE_DEVICES");
}

TEST(SharedDeviceGroupAnnotations, DeviceListsRoundTripAndBadOnesAreNamed) {
  EXPECT_EQ(parse_device_list("3,0, 1", "w"), (std::vector<int32_t>{0, 1, 3}));
  EXPECT_EQ(format_device_list({0, 1, 3}), "0,1,3");
  const GroupDevices d{{"amd.com/gpu", {2}}, {"nvidia.com/gpu", {0, 1}}};
  EXPECT_EQ(format_group_devices(d), R"({"amd.com/gpu":"2","nvidia.com/gpu":"0,1"})");
  EXPECT_EQ(parse_group_devices(format_group_devices(d), "w"), d);
  EXPECT_EQ(parse_group_devices(R"({"nvidia.com/gpu":[1,0]})", "w"), (GroupDevices{{"nvidia.com/gpu", {0, 1}}}));
  EXPECT_TRUE(parse_device_list("", "w").empty());  // a group left with none
  for (const char* bad : {"1,,2", ",", "a", "-1", "64", "1,1", "1 2"})
    EXPECT_THROW(parse_device_list(bad, "w"), InputError) << bad;
  for (const char* bad : {"", "[]", "{", R"({"nvidia.com/gpu":1})", R"({"nvidia.com/gpu":"0","nvidia.com/gpu":"1"})",
                          R"({"nvidia.com/gpu":[0,0]})"})
    EXPECT_THROW(parse_group_devices(bad, "w"), InputError) << bad;
  Pod p = member("p", "g");
  p.annotations[kDevices] = "{nope";
  try {
    pod_group_devices(p, DeviceGroupModel{});
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("pod \"default/p\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(kDevices), std::string::npos) << e.what();
  }
  Pod empty = make_pod("e");
  empty.annotations[kGroup] = "";
  EXPECT_THROW(pod_device_group(empty, DeviceGroupModel{}), InputError);
}

// ---- filter and score ----------------------------------------------------------

TEST(SharedDeviceGroupPlugin, BinpackPrefersTheTightestNodeAndSpreadTheFreest) {
  // 8, 4 and 3 free devices; the group wants 2. binpack: 100*2/free =
  // 25, 50, 66; spread: 100*(free-2)/free = 75, 50, 33.
  const std::vector<Node> nodes = {shared_node("n8", 8), shared_node("n4", 4), shared_node("n3", 3)};
  for (const auto strategy : {SharedDeviceGroup::Strategy::BinPack, SharedDeviceGroup::Strategy::Spread}) {
    auto e = group_engine(nodes, {group("g", {{kGpu, 2}}, strategy)});
    const Explanation ex = e->explain(member("p", "g"));
    const bool spread = strategy == SharedDeviceGroup::Strategy::Spread;
    const std::vector<int64_t> want = spread ? std::vector<int64_t>{75, 50, 33} : std::vector<int64_t>{25, 50, 66};
    for (size_t i = 0; i < nodes.size(); ++i) {
      int64_t raw = -1;
      for (const auto& s : ex.nodes[i].scores)
        if (s.plugin == "SharedDeviceGroup") raw = s.raw;
      EXPECT_EQ(raw, want[i]) << nodes[i].name << (spread ? " spread" : " binpack");
    }
    EXPECT_EQ(ex.chosen, spread ? "n8" : "n3");
    EXPECT_EQ(ex.device_group, "g");
    // binpack takes the lowest free devices, spread spaces them out.
    EXPECT_EQ(ex.group_devices,
              (GroupDevices{{kGpu, spread ? std::vector<int32_t>{0, 4} : std::vector<int32_t>{0, 1}}}));
  }
}

TEST(SharedDeviceGroupPlugin, FilterReasonsOnEachKindOfNode) {
  const std::vector<Node> nodes = {
      shared_node("plain", 8, {{"zone", "a"}}, false),  // not in shared mode
      shared_node("other-zone", 8, {{"zone", "b"}}),    // fails the selector
      shared_node("small", 2, {{"zone", "a"}}),         // too few devices
      shared_node("fits", 4, {{"zone", "a"}}),
  };
  auto e = group_engine(nodes, {group("g", {{kGpu, 3}}, SharedDeviceGroup::Strategy::BinPack, {{"zone", "a"}})});
  const Explanation ex = e->explain(member("p", "g"));
  ASSERT_EQ(ex.nodes.size(), 4u);
  EXPECT_EQ(ex.nodes[0].filter_code, Code::UnschedulableAndUnresolvable);
  EXPECT_EQ(ex.nodes[0].filter_reasons, std::vector<std::string>{"node(s) were not in shared device mode"});
  EXPECT_EQ(ex.nodes[1].filter_code, Code::UnschedulableAndUnresolvable);
  EXPECT_EQ(ex.nodes[1].filter_reasons,
            std::vector<std::string>{"node(s) didn't match the SharedDeviceGroup's node selector"});
  EXPECT_EQ(ex.nodes[2].filter_code, Code::Unschedulable);
  EXPECT_EQ(ex.nodes[2].filter_reasons,
            std::vector<std::string>{"node(s) didn't have enough free devices for the SharedDeviceGroup"});
  EXPECT_TRUE(ex.nodes[3].feasible);
  EXPECT_EQ(ex.chosen, "fits");
  // A selector value no node carries matches nothing.
  auto none = group_engine(nodes, {group("g", {{kGpu, 1}}, SharedDeviceGroup::Strategy::BinPack, {{"zone", "q"}})});
  const ScheduleResult r = none->schedule(member("p", "g"));
  EXPECT_EQ(r.node, -1);
  EXPECT_NE(r.message.find("3 node(s) didn't match the SharedDeviceGroup's node selector"), std::string::npos)
      << r.message;
}

TEST(SharedDeviceGroupPlugin, PodsOutsideGroupsSkipUnlessTheyRequestGroupDevices) {
  // n1's 8 devices: a group holds 6. A pod outside groups asking for 3 fits
  // only where 3 are left outside groups (n2, and the non-shared n3, where
  // groups hold nothing and NodeResourcesFit alone decides).
  const std::vector<Node> nodes = {shared_node("n1", 8), shared_node("n2", 4), shared_node("n3", 4, {}, false)};
  auto e = group_engine(nodes, {group("big", {{kGpu, 6}})});
  ASSERT_EQ(e->schedule(member("b1", "big")).node_name, "n1");
  EXPECT_EQ(free_on(*e, "n1"), 2);
  const Explanation ex = e->explain(make_pod("gpu3", {container({{kGpu, 3}})}));
  EXPECT_EQ(ex.nodes[0].filter_reasons,
            std::vector<std::string>{"node(s) didn't have enough devices outside shared device groups"});
  EXPECT_TRUE(ex.nodes[1].feasible);
  EXPECT_TRUE(ex.nodes[2].feasible);
  // Its request then counts against the groups' devices on n2.
  ASSERT_EQ(e->schedule(make_pod("gpu3", {container({{kGpu, 3}})})).node_name, "n2");
  const Explanation g2 = e->explain(member("x", "g2"));  // no such group
  EXPECT_EQ(g2.chosen, "");
  auto e2 = group_engine(nodes, {group("big", {{kGpu, 6}}), group("two", {{kGpu, 2}})});
  e2->schedule(member("b1", "big"));
  e2->schedule(make_pod("gpu3", {container({{kGpu, 3}})}));
  // n1 has 2 left, n2 has 1 left after the request of 3: the group of 2 goes to n1.
  EXPECT_EQ(e2->schedule(member("t1", "two")).node_name, "n1");
  // A pod that names no group and requests nothing skips the plugin.
  const Explanation plain = e2->explain(make_pod("cpu-only", {container({{"cpu", 100}})}));
  ASSERT_FALSE(plain.prefilter.empty());
  bool skipped = false;
  for (const auto& s : plain.prefilter) skipped |= s.plugin == "SharedDeviceGroup" && s.code == Code::Skip;
  EXPECT_TRUE(skipped);
}

// ---- bind, reuse, release ---------------------------------------------------------

TEST(SharedDeviceGroupEngine, TheFirstPodBindsLaterPodsReuseTheLastReleases) {
  const std::vector<Node> nodes = {shared_node("n1", 8), shared_node("n2", 4)};
  auto e = group_engine(nodes, {group("g", {{kGpu, 3}})});
  const ScheduleResult first = e->schedule(member("p1", "g"));
  ASSERT_EQ(first.node_name, "n2");  // binpack: 3 of 4 beats 3 of 8
  EXPECT_EQ(first.device_group, "g");
  EXPECT_EQ(first.group_devices, (GroupDevices{{kGpu, {0, 1, 2}}}));
  EXPECT_EQ(binding(*e, "g").node, 1);
  EXPECT_EQ(binding(*e, "g").members, 1u);
  EXPECT_EQ(free_on(*e, "n2"), 1);
  EXPECT_EQ(free_on(*e, "n1"), 8);
  // The assumed pod carries the devices and the device plugin's variable.
  const Snapshot& s = e->snapshot();
  const uint32_t id = s.find_pod("default", "p1");
  ASSERT_NE(id, Snapshot::kNoPod);
  EXPECT_EQ(s.pod(id).annotations.at(kDevices), R"({"nvidia.com/gpu":"0,1,2"})");
  EXPECT_EQ(s.pod(id).annotations.at("deviceshare.io/env.NVIDIA_VISIBLE_DEVICES"), "0,1,2");

  // Later pods: the bound node only, the same devices, nothing more taken.
  const Explanation ex = e->explain(member("p2", "g"));
  EXPECT_EQ(ex.nodes[0].filter_reasons,
            std::vector<std::string>{"node(s) were not the node the pod's SharedDeviceGroup is bound to"});
  const ScheduleResult second = e->schedule(member("p2", "g"));
  EXPECT_EQ(second.node_name, "n2");
  EXPECT_EQ(second.group_devices, first.group_devices);
  EXPECT_EQ(binding(*e, "g").members, 2u);
  EXPECT_EQ(free_on(*e, "n2"), 1);

  // Removing one pod keeps the group; removing the last releases it.
  ASSERT_TRUE(e->remove_pod("uid-p1").ok());
  EXPECT_EQ(binding(*e, "g").node, 1);
  EXPECT_EQ(free_on(*e, "n2"), 1);
  ASSERT_TRUE(e->remove_pod("uid-p2").ok());
  EXPECT_EQ(binding(*e, "g").node, -1);
  EXPECT_EQ(free_on(*e, "n2"), 4);
  // And a new pod binds it afresh.
  EXPECT_EQ(e->schedule(member("p3", "g")).node_name, "n2");
}

TEST(SharedDeviceGroupEngine, TwoGroupsNeverShareADeviceAndRemovingAGroupReleases) {
  const std::vector<Node> nodes = {shared_node("n1", 8)};
  auto e = group_engine(nodes, {group("a", {{kGpu, 3}}), group("b", {{kGpu, 3}}), group("c", {{kGpu, 3}})});
  EXPECT_EQ(e->schedule(member("a1", "a")).group_devices, (GroupDevices{{kGpu, {0, 1, 2}}}));
  EXPECT_EQ(e->schedule(member("b1", "b")).group_devices, (GroupDevices{{kGpu, {3, 4, 5}}}));
  const ScheduleResult c = e->schedule(member("c1", "c"));  // 2 left
  EXPECT_EQ(c.node, -1);
  EXPECT_NE(c.message.find("1 node(s) didn't have enough free devices for the SharedDeviceGroup"), std::string::npos)
      << c.message;
  ASSERT_TRUE(e->remove_object(ObjectKind::kSharedDeviceGroup, "", "a").ok());
  EXPECT_EQ(free_on(*e, "n1"), 5);
  EXPECT_EQ(e->schedule(member("c1", "c")).group_devices, (GroupDevices{{kGpu, {0, 1, 2}}}));
}

TEST(SharedDeviceGroupEngine, SeveralResourceTypesAtOnce) {
  Node n = shared_node("n1", 4);
  n.allocatable["amd.com/gpu"] = 2;
  auto e = group_engine({n, shared_node("n2", 8)}, {group("mixed", {{kGpu, 2}, {"amd.com/gpu", 1}})});
  const ScheduleResult r = e->schedule(member("p", "mixed"));
  ASSERT_EQ(r.node_name, "n1");  // n2 has no AMD devices
  EXPECT_EQ(r.group_devices, (GroupDevices{{"amd.com/gpu", {0}}, {kGpu, {0, 1}}}));
  const Snapshot& s = e->snapshot();
  const Pod& p = s.pod(s.find_pod("default", "p"));
  EXPECT_EQ(p.annotations.at("deviceshare.io/env.AMD_VISIBLE_DEVICES"), "0");
  EXPECT_EQ(free_on(*e, "n1", "amd.com/gpu"), 1);
}

// ---- restored at load ------------------------------------------------------------

TEST(SharedDeviceGroupEngine, AllocationsAreRestoredFromRunningPodsAndStatus) {
  const std::vector<Node> nodes = {shared_node("n1", 8), shared_node("n2", 8)};
  Pod running = on_node(member("r1", "g"), "n1");
  running.annotations[kDevices] = R"({"nvidia.com/gpu":"4,5"})";
  SharedDeviceGroup held = group("h", {{kGpu, 2}});
  held.bound_node = "n2";
  held.bound_devices = {{kGpu, {6, 7}}};
  std::vector<std::string> warnings;
  auto e = group_engine(nodes, {group("g", {{kGpu, 2}}), held}, {running}, &warnings);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  EXPECT_EQ(binding(*e, "g").node, 0);
  EXPECT_EQ(binding(*e, "g").devices, (GroupDevices{{kGpu, {4, 5}}}));
  EXPECT_EQ(binding(*e, "h").node, 1);
  EXPECT_EQ(binding(*e, "h").members, 0u);
  EXPECT_EQ(free_on(*e, "n1"), 6);
  EXPECT_EQ(free_on(*e, "n2"), 6);
  // A new pod of g joins on n1 with the running pod's devices.
  const ScheduleResult r = e->schedule(member("p", "g"));
  EXPECT_EQ(r.node_name, "n1");
  EXPECT_EQ(r.group_devices, (GroupDevices{{kGpu, {4, 5}}}));
  // A group bound by its status with no pods yet takes its first pod there.
  EXPECT_EQ(e->schedule(member("q", "h")).node_name, "n2");
}

TEST(SharedDeviceGroupEngine, WhatDoesNotAddUpAtLoadIsAWarning) {
  const std::vector<Node> nodes = {shared_node("n1", 4), shared_node("n2", 4)};
  Pod a = on_node(member("a", "g"), "n1");
  a.annotations[kDevices] = R"({"nvidia.com/gpu":"0,1"})";
  Pod elsewhere = on_node(member("b", "g"), "n2");  // its group is bound to n1
  elsewhere.annotations[kDevices] = R"({"nvidia.com/gpu":"0,1"})";
  Pod clash = on_node(member("c", "other"), "n1");  // devices g holds
  clash.annotations[kDevices] = R"({"nvidia.com/gpu":"1,2"})";
  Pod unknown = on_node(member("d", "missing"), "n2");
  Pod unlisted = on_node(member("e", "third"), "n2");  // no devices annotation
  Pod beyond = on_node(member("f", "fourth"), "n2");
  beyond.annotations[kDevices] = R"({"nvidia.com/gpu":"9"})";
  std::vector<std::string> w;
  auto e = group_engine(
      nodes,
      {group("g", {{kGpu, 2}}), group("other", {{kGpu, 2}}), group("third", {{kGpu, 1}}), group("fourth", {{kGpu, 1}})},
      {a, elsewhere, clash, unknown, unlisted, beyond}, &w);
  EXPECT_TRUE(contains(w, "pod \"default/b\" runs on node \"n2\" but SharedDeviceGroup \"g\" is bound to node \"n1\""));
  EXPECT_TRUE(contains(w, "device 1 is held by another group; left out"));
  EXPECT_TRUE(contains(w, "names SharedDeviceGroup \"missing\", which does not exist"));
  EXPECT_TRUE(contains(w, "names SharedDeviceGroup \"third\" but lists no devices"));
  EXPECT_TRUE(contains(w, "device 9 is not on the node (it has 4); left out"));
  EXPECT_EQ(binding(*e, "other").devices, (GroupDevices{{kGpu, {2}}}));
  EXPECT_EQ(free_on(*e, "n1"), 1);  // g holds 0,1; other holds 2
  // Malformed annotations of running pods are input errors (exit 2).
  Pod bad = on_node(member("x", "g"), "n1");
  bad.annotations[kDevices] = "0,1";
  EXPECT_THROW(group_engine(nodes, {group("g", {{kGpu, 2}})}, {bad}), InputError);
}

TEST(SharedDeviceGroupEngine, AReleasedStatusBindingStaysReleasedThroughLayouts) {
  // g's status binds it to n1 (devices 0,1) and its one pod runs there
  // without listing devices.
  SharedDeviceGroup g = group("g", {{kGpu, 2}});
  g.bound_node = "n1";
  g.bound_devices = {{kGpu, {0, 1}}};
  auto e = group_engine({shared_node("n1", 8), shared_node("n2", 2)}, {g}, {on_node(member("p", "g"), "n1")});
  ASSERT_EQ(binding(*e, "g").members, 1u);
  // Updating the pod (a label) keeps the group bound: it was its last pod.
  Pod updated = e->snapshot().pod(e->snapshot().find_pod("default", "p"));
  updated.labels["v"] = "2";
  ASSERT_TRUE(e->update_pod(updated).ok());
  EXPECT_EQ(binding(*e, "g").node, 0);
  EXPECT_EQ(binding(*e, "g").members, 1u);
  // Removing it releases; the next pod binds the group afresh (binpack: n2).
  ASSERT_TRUE(e->remove_pod("uid-p").ok());
  EXPECT_EQ(binding(*e, "g").node, -1);
  ASSERT_EQ(e->schedule(member("q", "g")).node_name, "n2");
  // A structural change (a new node) does not bring the old status back.
  Node extra = shared_node("n3", 4);
  ASSERT_TRUE(e->add_node(extra).ok());
  EXPECT_EQ(e->snapshot().node_name(static_cast<uint32_t>(binding(*e, "g").node)), "n2");
  EXPECT_EQ(free_on(*e, "n1"), 8);
  EXPECT_EQ(free_on(*e, "n2"), 0);
  // Devices taken away in place: the column follows.
  Node smaller = shared_node("n1", 3);
  ASSERT_TRUE(e->update_node(smaller).ok());
  EXPECT_EQ(free_on(*e, "n1"), 3);
}

// ---- per-pod errors ------------------------------------------------------------------

TEST(SharedDeviceGroupEngine, BadRequestsGetAClearPerPodMessage) {
  const std::vector<Node> nodes = {shared_node("n1", 8), shared_node("n2", 4)};
  auto e = group_engine(nodes, {group("g", {{kGpu, 2}}), group("huge", {{kGpu, 9}})});
  ScheduleResult r = e->schedule(member("p", "nope"));
  EXPECT_EQ(r.node, -1);
  EXPECT_EQ(r.message,
            "0/2 nodes are available: SharedDeviceGroup \"nope\" (annotation deviceshare.io/group) does not exist."
            " no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.");
  r = e->schedule(member("h", "huge"));
  EXPECT_EQ(r.message,
            "0/2 nodes are available: SharedDeviceGroup \"huge\" needs 9 nvidia.com/gpu device(s); no node has "
            "more than 8. no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.");
  ASSERT_EQ(e->schedule(member("g1", "g")).node_name, "n2");
  Pod conflicting = member("g2", "g");
  conflicting.annotations[kDevices] = R"({"nvidia.com/gpu":"2,3"})";
  r = e->schedule(conflicting);
  EXPECT_EQ(r.node, -1);
  EXPECT_NE(r.message.find("lists {\"nvidia.com/gpu\":\"2,3\"} but its SharedDeviceGroup \"g\" holds "
                           "{\"nvidia.com/gpu\":\"0,1\"} on node \"n2\""),
            std::string::npos)
      << r.message;
  // A malformed annotation on a pending pod is an input error naming it.
  Pod malformed = member("m", "g");
  malformed.annotations[kDevices] = "[";
  EXPECT_THROW(e->schedule(malformed), InputError);
  // Nothing changed on the way.
  EXPECT_EQ(binding(*e, "g").members, 1u);
}

TEST(SharedDeviceGroupEngine, AProfileWithoutThePluginBindsNoGroup) {
  // Two profiles: one runs SharedDeviceGroup, the other does not.
  SchedulerConfig c;
  c.profiles.push_back(group_profile());
  ProfileConfig plain = default_scheduler_config().profiles.at(0);
  plain.scheduler_name = "plain";
  c.profiles.push_back(plain);
  EngineOptions opts;
  opts.backend = "cpu";
  opts.tie_break = TieBreak::First;
  Engine e(c, opts);
  Cluster cl;
  cl.nodes = {shared_node("n1", 4), shared_node("off", 4, {}, false)};
  cl.objects.device_groups = {group("g", {{kGpu, 2}})};
  e.load(cl);
  Pod stray = member("stray", "g");
  stray.scheduler_name = "plain";
  const ScheduleResult r = e.schedule(stray);
  ASSERT_GE(r.node, 0);
  EXPECT_TRUE(r.group_devices.empty());
  EXPECT_TRUE(contains(r.warnings, "placed by a profile without SharedDeviceGroup, outside SharedDeviceGroup \"g\""));
  EXPECT_EQ(binding(e, "g").node, -1);
  // The group's own profile then binds it on a shared-mode node.
  ASSERT_EQ(e.schedule(member("first", "g")).node_name, "n1");
  EXPECT_EQ(binding(e, "g").members, 1u);
}

TEST(SharedDeviceGroupEngine, ProfilesMustAgreeOnTheModel) {
  SchedulerConfig c;
  c.profiles.push_back(group_profile());
  ProfileConfig other = group_profile();
  other.scheduler_name = "other";
  other.shared_device_group_args.model.mode_label = "example.com/mode";
  c.profiles.push_back(other);
  EXPECT_THROW(Engine(c, EngineOptions{}), InputError);
}

// ---- the snapshot's group state under mutation ---------------------------------------

// What the group state is: per group its binding, and the group_free column.
std::string group_state(const Snapshot& s) {
  std::string out;
  for (uint32_t g = 0; g < s.num_device_groups(); ++g) {
    const Snapshot::GroupBinding& b = s.device_group_binding(g);
    out += s.device_group(g).name + "@" + (b.node < 0 ? "-" : s.node_name(static_cast<uint32_t>(b.node))) + " " +
           format_group_devices(b.devices) + " x" + std::to_string(b.members) + "\n";
  }
  const SnapshotView v = s.view();
  for (uint32_t row = 0; row < s.num_group_device_types(); ++row)
    for (uint32_t n = 0; n < s.num_nodes(); ++n)
      out += std::to_string(v.group_free_devices(row, n)) + (n + 1 == s.num_nodes() ? "\n" : " ");
  return out;
}

TEST(SharedDeviceGroupSnapshot, GroupStateEqualsAFreshLoadAfterRandomMutations) {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    SplitMix64 g = SplitMix64::derive(seed, 0xa11ull);
    std::vector<Node> nodes;
    const uint32_t n = static_cast<uint32_t>(g.between(1, 12));
    for (uint32_t i = 0; i < n; ++i) {
      Node node = shared_node("n" + std::to_string(i), g.between(0, 8), {}, g.chance(0.8));
      if (g.chance(0.3)) node.allocatable["amd.com/gpu"] = g.between(1, 4);
      nodes.push_back(node);
    }
    std::vector<SharedDeviceGroup> groups;
    const uint32_t k = static_cast<uint32_t>(g.between(1, 6));
    for (uint32_t i = 0; i < k; ++i) {
      std::map<std::string, int32_t> res{{kGpu, static_cast<int32_t>(g.between(1, 3))}};
      if (g.chance(0.3)) res["amd.com/gpu"] = 1;
      groups.push_back(
          group("g" + std::to_string(i), res,
                g.chance(0.5) ? SharedDeviceGroup::Strategy::Spread : SharedDeviceGroup::Strategy::BinPack));
    }
    Snapshot snap = Snapshot::build(nodes, {});
    snap.configure_device_groups(groups, DeviceGroupModel{});
    std::vector<std::string> live;
    bool shrunk = false;
    for (int step = 0; step < 60; ++step) {
      const double what = g.unit();
      if (what < 0.6) {
        // Assume a member where the group can be, as the engine would.
        const uint32_t gi = static_cast<uint32_t>(g.below(k));
        const Snapshot::GroupBinding& b = snap.device_group_binding(gi);
        const uint32_t node = b.node >= 0 ? static_cast<uint32_t>(b.node) : static_cast<uint32_t>(g.below(n));
        const GroupDevices devices =
            b.node >= 0 ? b.devices : plugins::SharedDeviceGroup::choose_devices(snap, node, gi);
        if (devices.empty()) continue;
        Pod p = on_node(member("p" + std::to_string(step), "g" + std::to_string(gi)), nodes[node].name);
        annotate_group_devices(p, DeviceGroupModel{}, devices);
        snap.add_pod(p, node);
        live.push_back(p.name);
      } else if (what < 0.9 && !live.empty()) {
        const size_t at = g.below(live.size());
        snap.remove_pod("default", live[at]);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(at));
      } else {
        Node changed = nodes[g.below(n)];
        if (g.chance(0.5)) {
          changed.labels["touched"] = std::to_string(step);  // structural
        } else {
          changed.allocatable[kGpu] = g.between(0, 8);  // in place: the devices groups take from
          shrunk = true;
        }
        snap.update_node(changed);
        nodes[static_cast<size_t>(snap.node_index(changed.name))] = changed;
      }
      // Fewer devices than a group holds there is a warning; otherwise none.
      const std::vector<std::string> warnings = snap.take_device_warnings();
      if (!shrunk) {
        EXPECT_TRUE(warnings.empty()) << "seed " << seed << " step " << step << ": " << warnings.front();
      }
      // A fresh load of the same pods, with the same groups.
      std::vector<Pod> pods;
      for (const std::string& name : live) pods.push_back(snap.pod(snap.find_pod("default", name)));
      Snapshot fresh = Snapshot::build(nodes, pods);
      fresh.configure_device_groups(groups, DeviceGroupModel{});
      ASSERT_EQ(group_state(snap), group_state(fresh)) << "seed " << seed << ": first difference at step " << step;
    }
  }
}

// ---- the batch cache ---------------------------------------------------------------

// A random group workload: shared and plain nodes of 0-8 devices, groups of
// both strategies (some with selectors, some bound by status), members
// interleaved with pods outside groups; scheduled with --batching exact and
// off, then removals. The decisions and devices must match pod for pod.
TEST(SharedDeviceGroupEngine, BatchCacheDecidesExactlyAsWithout) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SplitMix64 g = SplitMix64::derive(seed, 0x5d9ull);
    std::vector<Node> nodes;
    const uint32_t n = static_cast<uint32_t>(g.between(3, 60));
    for (uint32_t i = 0; i < n; ++i)
      nodes.push_back(
          shared_node("n" + std::to_string(i), g.between(0, 8), {{"zone", g.chance(0.5) ? "a" : "b"}}, g.chance(0.8)));
    std::vector<SharedDeviceGroup> groups;
    const uint32_t k = static_cast<uint32_t>(g.between(1, 10));
    for (uint32_t i = 0; i < k; ++i) {
      SharedDeviceGroup gr =
          group("g" + std::to_string(i), {{kGpu, static_cast<int32_t>(g.between(1, 4))}},
                g.chance(0.5) ? SharedDeviceGroup::Strategy::Spread : SharedDeviceGroup::Strategy::BinPack);
      if (g.chance(0.3)) gr.node_selector = {{"zone", "a"}};
      groups.push_back(gr);
    }
    std::vector<Pod> pods;
    for (uint32_t i = 0; i < 3 * n; ++i) {
      if (g.chance(0.7))
        pods.push_back(member("p" + std::to_string(i), "g" + std::to_string(g.below(k))));
      else
        pods.push_back(make_pod("q" + std::to_string(i), {container({{"cpu", 200}, {kGpu, g.between(0, 2)}})}));
    }
    auto run = [&](Batching b) {
      auto e = group_engine(nodes, groups, {}, nullptr, b);
      std::vector<std::string> out;
      for (size_t i = 0; i < pods.size(); ++i) {
        const ScheduleResult r = e->schedule(pods[i]);
        out.push_back(r.pod + " -> " + r.node_name + " " + std::to_string(r.score) + " " +
                      format_group_devices(r.group_devices));
        // Removals between pods: releases change the columns both ways.
        if (i % 7 == 6) static_cast<void>(e->remove_pod(pods[i - 3].cache_key()));
      }
      return out;
    };
    const std::vector<std::string> off = run(Batching::Off), exact = run(Batching::Exact);
    ASSERT_EQ(off.size(), exact.size());
    for (size_t i = 0; i < off.size(); ++i)
      ASSERT_EQ(off[i], exact[i]) << "seed " << seed << ": first difference at pod " << i;
  }
}

}  // namespace
}  // namespace bulkscore
