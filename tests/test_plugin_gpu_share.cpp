// GpuShare (plugins/gpu_share.hpp) and the snapshot's device columns: the
// pods' device demand as annotations or requests, the filter on small
// hand-computed clusters, the device choice, the engine's assume and
// explain, running pods' allocations restored at load, and the columns
// following every mutation (checked against a snapshot built afresh).
#include <gtest/gtest.h>

#include <memory>

#include "host/engine/engine.hpp"
#include "plugins/gpu_share.hpp"
#include "tests/gpu_test_util.hpp"
#include "tests/random_cluster.hpp"
#include "tests/test_util.hpp"

namespace bulkscore {
namespace {

using namespace testutil;

ProfileConfig gpu_profile(DeviceSelection selection = DeviceSelection::Best) {
  ProfileConfig p = default_scheduler_config().profiles.at(0);
  p.pre_filter.push_back("GpuShare");
  p.filter.push_back("GpuShare");
  p.gpu_share_args.selection = selection;
  return p;
}

std::unique_ptr<Engine> gpu_engine(const std::vector<Node>& nodes, const std::vector<Pod>& running = {},
                                   ProfileConfig profile = gpu_profile(),
                                   std::vector<std::string>* warnings = nullptr) {
  EngineOptions opts;
  opts.backend = "cpu";
  opts.tie_break = TieBreak::First;
  SchedulerConfig c;
  c.profiles.push_back(std::move(profile));
  auto e = std::make_unique<Engine>(std::move(c), opts);
  Cluster cl;
  cl.nodes = nodes;
  cl.running_pods = running;
  auto w = e->load(cl);
  if (warnings) *warnings = w;
  return e;
}

// The filter alone, over a snapshot with the device model configured.
FilterRun device_filter(const std::vector<Node>& nodes, const std::vector<Pod>& running, const Pod& pod) {
  return run_filter("GpuShare", nodes, running, pod, gpu_profile(), nullptr,
                    [](Snapshot& snap) { snap.configure_devices(DeviceModel{}); });
}

const NodeFilterResult kNoGpu = rejected(Code::UnschedulableAndUnresolvable, {"node(s) had no GPU"});
const NodeFilterResult kOtherModel =
    rejected(Code::UnschedulableAndUnresolvable, {"node(s) didn't have an allowed GPU card model"});
const NodeFilterResult kNotEnough = rejected(Code::Unschedulable, {"node(s) didn't have enough free GPU"});

// ---- demand -------------------------------------------------------------------

TEST(GpuDemand, AnnotationsAndRequests) {
  const DeviceModel m;
  EXPECT_FALSE(pod_device_demand(make_pod("none"), m).any());
  DeviceDemand share = pod_device_demand(gpu_pod("share", 1, 460), m);
  EXPECT_EQ(share.count, 1);
  EXPECT_EQ(share.milli, 460);
  DeviceDemand whole = pod_device_demand(gpu_pod("whole", 4, 1000), m);
  EXPECT_EQ(whole.count, 4);
  EXPECT_EQ(whole.milli, 1000);
  // The count alone: whole devices, whatever their units.
  EXPECT_EQ(pod_device_demand(gpu_pod("count-only", 2, 0), m).milli, kWholeDevice);
  // A share alone: of one device (gpushare-style clusters).
  Pod milli_only = make_pod("milli-only");
  milli_only.annotations[kMilli] = "250";
  EXPECT_EQ(pod_device_demand(milli_only, m).count, 1);
  // Count 0 asks for nothing, whatever else is written.
  EXPECT_FALSE(pod_device_demand(gpu_pod("zero", 0, 500), m).any());
  // Models: '|'-separated, sorted, duplicates dropped.
  EXPECT_EQ(pod_device_demand(gpu_pod("models", 1, 500, 1000, "V100M32|T4|V100M32"), m).models,
            (std::vector<std::string>{"T4", "V100M32"}));
  // Another vendor's whole-device resource, requested by the containers.
  DeviceModel nv;
  nv.count_resource = "nvidia.com/gpu";
  const Pod req = make_pod("req", {container({{"nvidia.com/gpu", 2}}), container({{"nvidia.com/gpu", 1}})});
  const DeviceDemand d = pod_device_demand(req, nv);
  EXPECT_EQ(d.count, 3);
  EXPECT_EQ(d.milli, kWholeDevice);
}

void expect_input_error(const Pod& pod, const std::string& fragment) {
  try {
    pod_device_demand(pod, DeviceModel{});
    pod_device_indices(pod, DeviceModel{});
    ADD_FAILURE() << "no error for " << fragment;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("test: bad"), std::string::npos) << "names the pod's origin: " << e.what();
  }
}

TEST(GpuDemand, MalformedAnnotationsNameThePodAndTheField) {
  auto bad = [](const char* key, const char* value) {
    Pod p = make_pod("bad");
    p.annotations[key] = value;
    return p;
  };
  expect_input_error(bad(kCount, "two"), "metadata.annotations[\"alibabacloud.com/gpu-count\"]: must be a decimal");
  expect_input_error(bad(kCount, "-1"), "got \"-1\"");
  expect_input_error(bad(kCount, "65"), "0..64");
  expect_input_error(bad(kMilli, "0"), "gpu-milli\"]: must be a decimal integer of units per device in 1..");
  expect_input_error(bad(kMilli, " 5"), "gpu-milli");
  Pod models = gpu_pod("bad", 1, 500, 1000, "T4||A10");
  expect_input_error(models, "must list card models separated by '|'");
  expect_input_error(bad(kIndex, "1-1"), "lists device 1 twice");
  expect_input_error(bad(kIndex, "0-x"), "gpu-index\"]: must list device indices in 0..63");
  expect_input_error(bad(kIndex, ""), "gpu-index");
  Pod contradicts = make_pod("bad", {container({{"nvidia.com/gpu", 2}})});
  contradicts.annotations["vendor/count"] = "1";
  DeviceModel nv;
  nv.count_resource = "nvidia.com/gpu";
  nv.count_annotation = "vendor/count";
  EXPECT_THROW(pod_device_demand(contradicts, nv), InputError);
  EXPECT_EQ(pod_device_indices(holding(gpu_pod("ok", 3, 1000), "n", "7-0-3"), DeviceModel{}),
            (std::vector<int32_t>{7, 0, 3}));
}

// ---- filter -------------------------------------------------------------------

TEST(GpuShareFilter, SharesWholeDevicesModelsAndNodesWithout) {
  // p100: 2 devices; g2: 8 devices, device 0 holds a 460 share and devices
  // 1..7 one whole-GPU pod each but 7; cpu: no GPU.
  const std::vector<Node> nodes = {gpu_node("p100", 2, "P100"), gpu_node("g2", 8, "G2"), gpu_node("cpu", 0, "")};
  const std::vector<Pod> running = {holding(gpu_pod("s", 1, 460), "g2", "0"),
                                    holding(gpu_pod("w", 6, 1000), "g2", "1-2-3-4-5-6")};
  // A 540 share fits device 0 of g2 exactly; p100 has whole devices free.
  FilterRun r = device_filter(nodes, running, gpu_pod("share540", 1, 540));
  EXPECT_EQ(r.nodes[0], fits());
  EXPECT_EQ(r.nodes[1], fits());
  EXPECT_EQ(r.nodes[2], kNoGpu);
  // 541 does not fit device 0, but device 7 is free.
  r = device_filter(nodes, running, gpu_pod("share541", 1, 541));
  EXPECT_EQ(r.nodes[1], fits());
  // Two whole devices: p100 has two, g2 only device 7.
  r = device_filter(nodes, running, gpu_pod("two", 2, 1000));
  EXPECT_EQ(r.nodes[0], fits());
  EXPECT_EQ(r.nodes[1], kNotEnough);
  // Three: nobody.
  r = device_filter(nodes, running, gpu_pod("three", 3, 1000));
  EXPECT_EQ(r.nodes[0], kNotEnough);
  // Models: only the listed ones; a model no node has matches none.
  r = device_filter(nodes, running, gpu_pod("model", 1, 500, 1000, "G2|V100M32"));
  EXPECT_EQ(r.nodes[0], kOtherModel);
  EXPECT_EQ(r.nodes[1], fits());
  EXPECT_EQ(r.nodes[2], kNoGpu);
  r = device_filter(nodes, running, gpu_pod("unknown-model", 1, 500, 1000, "A100"));
  EXPECT_EQ(r.nodes[0], kOtherModel);
  EXPECT_EQ(r.nodes[1], kOtherModel);
  // A pod without devices: PreFilter Skip, every node passes.
  r = device_filter(nodes, running, make_pod("plain", {container({{"cpu", 100}})}));
  EXPECT_EQ(r.prefilter, Code::Skip);
  EXPECT_EQ(r.nodes[2], fits());
}

TEST(GpuShareFilter, DeviceUnitsComeFromTheNodesMilliResource) {
  // A vendor whose devices have 16 units (GiB) each: 4 devices, 64 in all.
  Node n = make_node("mem", 8000, 64 * 1024 * kMiB);
  n.allocatable[kCount] = 4;
  n.allocatable[kMilli] = 64;
  Snapshot snap = Snapshot::build({n}, {holding(gpu_pod("a", 1, 10), "mem", "2")});
  snap.configure_devices(DeviceModel{});
  ASSERT_EQ(snap.device_count(0), 4u);
  EXPECT_EQ(snap.device_units(0, 0), 16);
  EXPECT_EQ(snap.device_free(0, 2), 6);
  // Whole devices (count only) need all 16 free: three of them.
  FilterRun r = device_filter({n}, {holding(gpu_pod("a", 1, 10), "mem", "2")}, gpu_pod("w3", 3, 0));
  EXPECT_EQ(r.nodes[0], fits());
  r = device_filter({n}, {holding(gpu_pod("a", 1, 10), "mem", "2")}, gpu_pod("w4", 4, 0));
  EXPECT_EQ(r.nodes[0], kNotEnough);
  // A node without the milli resource: 1000 units per device.
  Node plain = make_node("plain", 8000, 64 * 1024 * kMiB);
  plain.allocatable[kCount] = 2;
  Snapshot s2 = Snapshot::build({plain}, {});
  s2.configure_devices(DeviceModel{});
  EXPECT_EQ(s2.device_units(0, 1), 1000);
}

// ---- choice -------------------------------------------------------------------

TEST(GpuShareChoice, SelectionsOnOneNode) {
  // Free units 540, 1000, 200, 1000, 700.
  Node n = gpu_node("n", 5, "G2");
  const std::vector<Pod> running = {holding(gpu_pod("a", 1, 460), "n", "0"), holding(gpu_pod("b", 1, 800), "n", "2"),
                                    holding(gpu_pod("c", 1, 300), "n", "4")};
  Snapshot snap = Snapshot::build({n}, running);
  snap.configure_devices(DeviceModel{});
  const DeviceModel m;
  auto choose = [&](const DeviceDemand& demand, DeviceSelection sel) {
    ProfileConfig profile;
    profile.gpu_share_args.selection = sel;
    return plugins::GpuShare::choose_devices(snap, 0, make_pod("p"), demand, profile);
  };
  const DeviceDemand share = pod_device_demand(gpu_pod("p", 1, 500), m);
  EXPECT_EQ(choose(share, DeviceSelection::Best), std::vector<int32_t>{0});   // 540: tightest
  EXPECT_EQ(choose(share, DeviceSelection::Worst), std::vector<int32_t>{1});  // 1000, lower index
  EXPECT_EQ(choose(share, DeviceSelection::First), std::vector<int32_t>{0});
  const DeviceDemand small = pod_device_demand(gpu_pod("p", 1, 150), m);
  EXPECT_EQ(choose(small, DeviceSelection::Best), std::vector<int32_t>{2});  // 200
  EXPECT_EQ(choose(small, DeviceSelection::First), std::vector<int32_t>{0});
  // Whole devices: the free ones, lowest indices, in every selection.
  const DeviceDemand two = pod_device_demand(gpu_pod("p", 2, 1000), m);
  for (DeviceSelection s : {DeviceSelection::Best, DeviceSelection::Worst, DeviceSelection::First})
    EXPECT_EQ(choose(two, s), (std::vector<int32_t>{1, 3}));
  EXPECT_TRUE(choose(pod_device_demand(gpu_pod("p", 3, 1000), m), DeviceSelection::Best).empty());
  // Several shares of 600 each: two devices with 700 and 1000 free; Best takes 700 and 1000 (index 1).
  const DeviceDemand multi = pod_device_demand(gpu_pod("p", 2, 600), m);
  EXPECT_EQ(choose(multi, DeviceSelection::Best), (std::vector<int32_t>{1, 4}));
}

// ---- engine ---------------------------------------------------------------------

TEST(GpuShareEngine, SharesPackOntoOneDeviceAndTheColumnsFollow) {
  auto e = gpu_engine({gpu_node("a", 2, "T4"), gpu_node("none", 0, "")});
  // 300 + 300 + 400 fill device 0 (Best packs), the next 300 opens device 1.
  std::vector<std::pair<std::string, std::vector<int32_t>>> got;
  for (int i = 0; i < 4; ++i) {
    const ScheduleResult r = e->schedule(gpu_pod("p" + std::to_string(i), 1, i == 2 ? 400 : 300));
    ASSERT_GE(r.node, 0) << r.message;
    got.emplace_back(r.node_name, r.devices);
  }
  const Snapshot& s = e->snapshot();
  int32_t held = 0;
  for (uint32_t n = 0; n < s.num_nodes(); ++n)
    for (uint32_t d = 0; d < s.device_count(n); ++d) held += s.device_units(n, d) - s.device_free(n, d);
  EXPECT_EQ(held, 1300);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(got[i].second, std::vector<int32_t>{0}) << i;
  EXPECT_EQ(got[3].second, std::vector<int32_t>{1});
  // The assumed pods carry the index annotation.
  const uint32_t id = s.find_pod("default", "p0");
  ASSERT_NE(id, Snapshot::kNoPod);
  EXPECT_EQ(s.pod(id).annotations.at(kIndex), format_device_indices(got[0].second));
  // Removing a pod releases its units.
  ASSERT_TRUE(e->remove_pod(s.pod(id).cache_key()).ok());
  held = 0;
  for (uint32_t n = 0; n < s.num_nodes(); ++n)
    for (uint32_t d = 0; d < s.device_count(n); ++d) held += s.device_units(n, d) - s.device_free(n, d);
  EXPECT_EQ(held, 1000);
}

TEST(GpuShareEngine, FitErrorAndExplain) {
  auto e = gpu_engine({gpu_node("a", 1, "T4"), gpu_node("b", 2, "P100"), gpu_node("c", 0, "")},
                      {holding(gpu_pod("r", 1, 1000), "a", "0")});
  ScheduleResult r = e->schedule(gpu_pod("big", 3, 1000));
  EXPECT_EQ(r.node, -1);
  EXPECT_EQ(r.message,
            "0/3 nodes are available: 1 node(s) had no GPU, 2 node(s) didn't have enough free GPU. no new claims to "
            "deallocate, preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No "
            "preemption victims found for incoming pod.");
  r = e->schedule(gpu_pod("t4", 1, 500, 1000, "T4"));
  EXPECT_EQ(r.message,
            "0/3 nodes are available: 1 node(s) didn't have an allowed GPU card model, 1 node(s) didn't have enough "
            "free GPU, 1 node(s) had no GPU. no new claims to deallocate, preemption: 0/3 nodes are available: 1 No "
            "preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.");
  const Explanation ex = e->explain(gpu_pod("x", 1, 500));
  EXPECT_EQ(ex.chosen, "b");
  EXPECT_EQ(ex.devices, std::vector<int32_t>{0});
  EXPECT_EQ(ex.nodes[0].filter_plugin, "GpuShare");
  EXPECT_EQ(ex.nodes[0].filter_reasons, std::vector<std::string>{"node(s) didn't have enough free GPU"});
}

TEST(GpuShareEngine, RunningPodsAllocationsAreRestoredAtLoad) {
  std::vector<std::string> warnings;
  // "b" holds devices 0 and 1 of "a"; "c" asks for a 500 share without an
  // index (it gets one, with a warning); "d" lists device 5 of a 2-device node.
  auto e = gpu_engine({gpu_node("a", 4, "G2"), gpu_node("z", 2, "G2")},
                      {holding(gpu_pod("b", 2, 1000), "a", "0-1"), on_node(gpu_pod("c", 1, 500), "a"),
                       holding(gpu_pod("d", 1, 200), "z", "5")},
                      gpu_profile(), &warnings);
  const Snapshot& s = e->snapshot();
  EXPECT_EQ(s.device_free(0, 0), 0);
  EXPECT_EQ(s.device_free(0, 1), 0);
  EXPECT_EQ(s.device_free(0, 2), 500);
  EXPECT_EQ(s.device_free(0, 3), 1000);
  EXPECT_EQ(s.device_free(1, 0), 1000);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("running pod \"default/c\" on node \"a\" asks for devices but has no "
                             "alibabacloud.com/gpu-index annotation; it is taken to hold devices 2"),
            std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[1].find("holds device 5"), std::string::npos) << warnings[1];
  // A malformed annotation on a running pod: the load fails, naming it.
  EXPECT_THROW(gpu_engine({gpu_node("a", 4, "G2")}, {holding(gpu_pod("b", 1, 300), "a", "zero")}), InputError);
  // Over-committed devices take no more pods, with a warning.
  auto over = gpu_engine({gpu_node("a", 1, "G2")},
                         {holding(gpu_pod("x", 1, 700), "a", "0"), holding(gpu_pod("y", 1, 700), "a", "0")},
                         gpu_profile(), &warnings);
  EXPECT_EQ(over->snapshot().device_free(0, 0), -400);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("the pods on device 0 hold 1400 of its 1000 units"), std::string::npos) << warnings[0];
  EXPECT_EQ(over->schedule(gpu_pod("p", 1, 1)).node, -1);
}

TEST(GpuShareEngine, ProfilesMustAgreeOnTheModelAndPodsOfOtherProfilesStillHoldDevices) {
  SchedulerConfig c;
  c.profiles.push_back(gpu_profile());
  ProfileConfig other = gpu_profile();
  other.scheduler_name = "other";
  other.gpu_share_args.model.index_annotation = "example.com/index";
  c.profiles.push_back(other);
  EngineOptions opts;
  opts.backend = "cpu";
  EXPECT_THROW(Engine(c, opts), InputError);
  // A profile without GpuShare places a GPU pod where devices are free and
  // it still takes them (the default selection).
  c.profiles[1] = default_scheduler_config().profiles.at(0);
  c.profiles[1].scheduler_name = "plain";
  Engine e(c, opts);
  Cluster cl;
  cl.nodes = {gpu_node("a", 1, "G2")};
  e.load(cl);
  Pod p = gpu_pod("p", 1, 400);
  p.scheduler_name = "plain";
  EXPECT_EQ(e.schedule(p).devices, std::vector<int32_t>{0});
  Pod q = gpu_pod("q", 1, 800);
  q.scheduler_name = "plain";
  const ScheduleResult r = e.schedule(q);  // no filter looked at devices
  EXPECT_EQ(r.node, 0);
  EXPECT_TRUE(r.devices.empty());
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("holds none"), std::string::npos);
}

TEST(GpuShareSnapshot, EdgeCasesOfTheLayout) {
  // A node update that publishes GPUs under names the cluster has never
  // seen (interning them is structural) lays the devices out from the new
  // allocatable, not a half-written one.
  Node plain = make_node("n", 8000, 64 * 1024 * kMiB);
  Snapshot s = Snapshot::build({plain}, {});
  s.configure_devices(DeviceModel{});
  EXPECT_EQ(s.device_count(0), 0u);
  plain.allocatable[kCount] = 4;
  plain.allocatable[kMilli] = 8000;
  plain.allocatable["hugepages-2Mi"] = 0;  // another new name, sorting before them
  s.update_node(plain);
  ASSERT_EQ(s.device_count(0), 4u);
  EXPECT_EQ(s.device_units(0, 3), 2000);
  // Fewer units than devices: each device still has one.
  plain.allocatable[kMilli] = 1;
  s.update_node(plain);
  EXPECT_EQ(s.device_units(0, 0), 1);
  // A malformed running pod: configure_devices fails and leaves no model.
  Snapshot bad = Snapshot::build({gpu_node("g", 2, "T4")}, {holding(gpu_pod("b", 1, 300), "g", "x")});
  EXPECT_THROW(bad.configure_devices(DeviceModel{}), InputError);
  EXPECT_FALSE(bad.device_model().has_value());
  // A share whose implied count contradicts the containers' request.
  DeviceModel nv;
  nv.count_resource = "nvidia.com/gpu";
  Pod p = make_pod("p", {container({{"nvidia.com/gpu", 2}})});
  p.annotations[kMilli] = "500";
  EXPECT_THROW(pod_device_demand(p, nv), InputError);
}

TEST(GpuShareEngine, PoliciesWithoutTheFilterStillSeeDevicesAndBadPodsChangeNothing) {
  // A profile that scores with a placement policy but filters without
  // GpuShare: the device columns exist all the same.
  ProfileConfig p = default_scheduler_config().profiles.at(0);
  p.score = {PluginEntry{"GpuPacking", 1}};
  SchedulerConfig c;
  c.profiles.push_back(p);
  EngineOptions opts;
  opts.backend = "cpu";
  Engine e(c, opts);
  Cluster cl;
  cl.nodes = {gpu_node("a", 2, "T4")};
  e.load(cl);
  EXPECT_EQ(e.snapshot().device_count(0), 2u);
  // A malformed annotation fails the pod before anything changes.
  Pod bad = gpu_pod("bad", 1, 300);
  bad.annotations[kCount] = "one";
  const size_t pods = e.snapshot().num_pods();
  EXPECT_THROW(e.schedule(bad), InputError);
  EXPECT_EQ(e.snapshot().num_pods(), pods);
  EXPECT_EQ(e.schedule(gpu_pod("ok", 1, 300)).devices, std::vector<int32_t>{0});
}

// ---- the columns follow every mutation -------------------------------------------

// Device columns of `s` against those of a snapshot built afresh from the
// same nodes and pods.
void expect_same_devices(const Snapshot& s, const std::vector<Node>& nodes, const std::string& where) {
  std::vector<Pod> pods;
  for (uint32_t id = 0; id < s.pod_id_bound(); ++id)
    if (s.has_pod(id)) pods.push_back(s.pod(id));
  Snapshot fresh = Snapshot::build(nodes, pods);
  fresh.configure_devices(*s.device_model());
  ASSERT_EQ(fresh.num_nodes(), s.num_nodes()) << where;
  for (uint32_t n = 0; n < s.num_nodes(); ++n) {
    const uint32_t m = static_cast<uint32_t>(fresh.node_index(s.node_name(n)));
    ASSERT_EQ(s.device_count(n), fresh.device_count(m)) << where << ": node " << s.node_name(n);
    ASSERT_EQ(s.view().device_pod_classes[n], fresh.view().device_pod_classes[m])
        << where << ": node " << s.node_name(n);
    for (uint32_t d = 0; d < s.device_count(n); ++d) {
      ASSERT_EQ(s.device_units(n, d), fresh.device_units(m, d)) << where << ": node " << s.node_name(n);
      ASSERT_EQ(s.device_free(n, d), fresh.device_free(m, d))
          << where << ": node " << s.node_name(n) << " device " << d;
    }
  }
}

TEST(GpuShareSnapshot, DeviceColumnsEqualAFreshBuildAfterRandomMutations) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    SplitMix64 rng = SplitMix64::derive(0x9b0ull, seed);
    std::vector<Node> nodes;
    const uint32_t n0 = 2 + static_cast<uint32_t>(rng.below(6));
    for (uint32_t i = 0; i < n0; ++i)
      nodes.push_back(
          gpu_node("n" + std::to_string(i), static_cast<int64_t>(rng.below(9)), rng.chance(0.5) ? "G2" : "T4"));
    Snapshot s = Snapshot::build(nodes, {});
    s.configure_devices(DeviceModel{});
    std::vector<uint32_t> ids;
    uint32_t next = 0;
    for (int step = 0; step < 60; ++step) {
      const std::string where = "seed " + std::to_string(seed) + " step " + std::to_string(step);
      const uint64_t op = rng.below(10);
      if (op < 5 && s.num_nodes() > 0) {  // assume a pod with some indices
        const uint32_t node = static_cast<uint32_t>(rng.below(s.num_nodes()));
        const uint32_t have = s.device_count(node);
        Pod p = gpu_pod("p" + std::to_string(next++), 1 + static_cast<int32_t>(rng.below(2)),
                        rng.chance(0.5) ? 1000 : static_cast<int32_t>(rng.between(1, 999)));
        if (have > 0) {
          std::vector<int32_t> idx;
          for (uint32_t d = 0; d < have && idx.size() < 2; ++d)
            if (rng.chance(0.5)) idx.push_back(static_cast<int32_t>(d));
          if (!idx.empty()) p.annotations[kIndex] = format_device_indices(idx);
        }
        ids.push_back(s.add_pod(p, node));
      } else if (op < 7 && !ids.empty()) {  // remove one
        const size_t k = rng.below(ids.size());
        s.remove_pod(ids[k]);
        ids.erase(ids.begin() + static_cast<std::ptrdiff_t>(k));
      } else if (op < 8 && !ids.empty()) {  // update one (other indices, maybe another node)
        const uint32_t id = ids[rng.below(ids.size())];
        Pod p = s.pod(id);
        p.annotations[kIndex] = "0";
        const uint32_t node = static_cast<uint32_t>(rng.below(s.num_nodes()));
        if (s.device_count(node) == 0) p.annotations.erase(kIndex);
        p.node_name = s.node_name(node);
        s.update_pod(id, p);
      } else if (op < 9 && s.num_nodes() > 0) {  // a node's GPUs change (in place or with labels)
        const uint32_t node = static_cast<uint32_t>(rng.below(s.num_nodes()));
        Node& nd =
            *std::find_if(nodes.begin(), nodes.end(), [&](const Node& x) { return x.name == s.node_name(node); });
        const int64_t gpus = static_cast<int64_t>(rng.below(9));
        nd.allocatable[kCount] = gpus;
        nd.allocatable[kMilli] = 1000 * gpus;
        if (rng.chance(0.3)) nd.labels["pool"] = rng.chance(0.5) ? "x" : "y";
        s.update_node(nd);
      } else {  // a node joins or leaves
        if (rng.chance(0.5) || s.num_nodes() < 2) {
          nodes.push_back(gpu_node("m" + std::to_string(next++), static_cast<int64_t>(rng.below(9)), "G2"));
          s.add_node(nodes.back());
        } else {
          const uint32_t node = static_cast<uint32_t>(rng.below(s.num_nodes()));
          const std::string name = s.node_name(node);
          s.remove_node(name);
          nodes.erase(std::find_if(nodes.begin(), nodes.end(), [&](const Node& x) { return x.name == name; }));
          ids.clear();
          for (uint32_t id = 0; id < s.pod_id_bound(); ++id)
            if (s.has_pod(id)) ids.push_back(id);
        }
      }
      expect_same_devices(s, nodes, where);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

}  // namespace
}  // namespace bulkscore
