// The GPU placement policies (plugins/gpu_fgd.hpp, plugins/gpu_baselines.hpp)
// on small hand-computed cases: the fragmentation measure, FGD's score and
// device choice, the baselines' formulas, typical tasks, and the engine
// placing pods with each.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "host/engine/engine.hpp"
#include "plugins/gpu_baselines.hpp"
#include "plugins/gpu_fgd.hpp"
#include "tests/gpu_test_util.hpp"
#include "tests/test_util.hpp"

namespace bulkscore {
namespace {

using namespace testutil;

TypicalTask task(int64_t cpu, int32_t milli, int32_t count, double weight, std::vector<std::string> models = {}) {
  TypicalTask t;
  t.cpu_milli = cpu;
  t.milli = milli;
  t.count = count;
  t.weight = weight;
  t.models = std::move(models);
  return t;
}

// ---- the fragmentation measure ------------------------------------------------

TEST(GpuFragmentationMeasure, ShapesAndNodes) {
  const int32_t units[] = {1000, 1000, 1000, 1000};
  const int32_t models[] = {7};
  TaskShape share{0, 1.0, 500, 1, 0, 0};
  // Free 300, 1000, 600, 0: a 500 share fits; the 300 left on device 0 is a fragment.
  const int64_t free[] = {300, 1000, 600, 0};
  EXPECT_EQ(shape_fragments(free, units, 4, 1000, 7, share, models), 300);
  // Not enough cpu: every free unit is a fragment.
  share.cpu_milli = 2000;
  EXPECT_EQ(shape_fragments(free, units, 4, 1000, 7, share, models), 1900);
  // Two whole devices: only one device is free; everything is a fragment.
  const TaskShape two{0, 1.0, 1000, 2, 0, 0};
  EXPECT_EQ(shape_fragments(free, units, 4, 1000, 7, two, models), 1900);
  // A CPU-only task: every free unit.
  const TaskShape cpu_only{100, 1.0, 0, 0, 0, 0};
  EXPECT_EQ(shape_fragments(free, units, 4, 1000, 7, cpu_only, models), 1900);
  // Models: 7 allowed here; a node of model 8, or without one, cannot run it.
  const TaskShape typed{0, 1.0, 500, 1, 0, 1};
  EXPECT_EQ(shape_fragments(free, units, 4, 1000, 7, typed, models), 300);
  EXPECT_EQ(shape_fragments(free, units, 4, 1000, 8, typed, models), 1900);
  EXPECT_EQ(shape_fragments(free, units, 4, 1000, -1, typed, models), 1900);
  // The node: the weighted sum, 0.25 x 300 + 0.75 x 1900.
  const TaskShape shapes[] = {TaskShape{0, 0.25, 500, 1, 0, 0}, TaskShape{0, 0.75, 1000, 2, 0, 0}};
  EXPECT_DOUBLE_EQ(node_fragmentation(free, units, 4, 1000, 7, shapes, 2, models), 75.0 + 1425.0);
}

TEST(GpuFragmentationMeasure, PortableExpIsExp) {
  for (double x : {-50.0, -3.7, -1.0, -0.4, 0.0, 1e-9, 0.2, 1.0, 2.5, 30.0}) {
    EXPECT_NEAR(portable_exp(x), std::exp(x), std::exp(x) * 4e-16) << x;
  }
  EXPECT_EQ(static_cast<int64_t>(portable_sigmoid(-0.4) * 100.0), 40);
  EXPECT_EQ(static_cast<int64_t>(portable_sigmoid(0.0) * 100.0), 50);
}

// ---- FGD ------------------------------------------------------------------------

TEST(GpuFgd, ScoresAndDeviceChoiceByHand) {
  // One typical task: a 500 share, no cpu.
  const TaskShape shapes[] = {TaskShape{0, 1.0, 500, 1, 0, 0}};
  const int32_t units[] = {1000, 1000};
  int32_t device = -2;
  // Idle node: a 300 share leaves 700 (still fits a 500): no new fragment, 50, device 0.
  const int64_t idle[] = {1000, 1000};
  EXPECT_EQ(fgd_node_score(idle, units, 2, 64000, 0, 0, 1, 300, shapes, 1, nullptr, &device), 50);
  EXPECT_EQ(device, 0);
  // A 600 share leaves 400, a fragment: sigmoid(-0.4) -> 40.
  EXPECT_EQ(fgd_node_score(idle, units, 2, 64000, 0, 0, 1, 600, shapes, 1, nullptr, &device), 40);
  // Free 500 and 1000: a 300 share on device 0 would leave a 200 fragment
  // (45), on device 1 leaves 700 (50): FGD takes device 1.
  const int64_t half[] = {500, 1000};
  EXPECT_EQ(fgd_node_score(half, units, 2, 64000, 0, 0, 1, 300, shapes, 1, nullptr, &device), 50);
  EXPECT_EQ(device, 1);
  // Free 400 and 1000: the 400 is already a fragment; a 400 share there
  // removes it: sigmoid(0.4) -> 59.
  const int64_t frag[] = {400, 1000};
  EXPECT_EQ(fgd_node_score(frag, units, 2, 64000, 0, 0, 1, 400, shapes, 1, nullptr, &device), 59);
  EXPECT_EQ(device, 0);
  // A whole device: free 400 and 1000 -> 400 and 0; fragments stay 400: 50.
  EXPECT_EQ(fgd_node_score(frag, units, 2, 64000, 0, 0, 1, 1000, shapes, 1, nullptr, &device), 50);
  EXPECT_EQ(device, -1);
}

// An engine (tie-break first) of profile `p` on `nodes` and `running`.
std::unique_ptr<Engine> engine_for(const ProfileConfig& p, const std::vector<Node>& nodes,
                                   const std::vector<Pod>& running, const std::string& backend = "cpu") {
  SchedulerConfig c;
  c.profiles.push_back(p);
  EngineOptions opts;
  opts.backend = backend;
  opts.tie_break = TieBreak::First;
  auto e = std::make_unique<Engine>(c, opts);
  Cluster cl;
  cl.nodes = nodes;
  cl.running_pods = running;
  e->load(cl);
  return e;
}

std::unique_ptr<Engine> policy_engine(const std::vector<Node>& nodes, const std::vector<Pod>& running,
                                      const std::string& plugin, DeviceSelection selection,
                                      std::vector<TypicalTask> tasks = {}, const GpuScoreArgs& score_args = {},
                                      const std::string& backend = "cpu") {
  ProfileConfig p = default_scheduler_config().profiles.at(0);
  p.pre_filter.push_back("GpuShare");
  p.filter.push_back("GpuShare");
  p.score = {PluginEntry{plugin, 1000}};
  p.gpu_share_args.selection = selection;
  p.gpu_fragmentation_args.typical_tasks = std::move(tasks);
  p.gpu_score_args = score_args;
  return engine_for(p, nodes, running, backend);
}

TEST(GpuFgd, TheEngineAvoidsFragments) {
  // "a" has free 500 and 1000 (a 500 share runs on device 0); "b" is idle.
  // A 300 share: on "a" device 1 scores 50 (no new fragment), on "b" also
  // 50: the tie goes to "a" (first). A 600 share next: on "a" device 1
  // (700 free) leaves 100 -> fragment; on "b" leaves 400: 600 on "a" dev 1
  // makes 100 of fragments (sigmoid(-0.1) = 47), on "b" 400 (40): "a".
  const std::vector<TypicalTask> tasks = {task(0, 500, 1, 1.0)};
  auto e = policy_engine({gpu_node("a", 2, "G2"), gpu_node("b", 2, "G2")}, {holding(gpu_pod("r", 1, 500, 0), "a", "0")},
                         "GpuFragmentation", DeviceSelection::Fragmentation, tasks);
  ScheduleResult r = e->schedule(gpu_pod("p1", 1, 300, 0));
  EXPECT_EQ(r.node_name, "a");
  EXPECT_EQ(r.devices, std::vector<int32_t>{1});
  r = e->schedule(gpu_pod("p2", 1, 600, 0));
  EXPECT_EQ(r.node_name, "a");
  EXPECT_EQ(r.devices, std::vector<int32_t>{1});
  // Without typical tasks the pod's cycle fails with an Error naming why.
  auto bare =
      policy_engine({gpu_node("a", 2, "G2"), gpu_node("b", 2, "G2")}, {}, "GpuFragmentation", DeviceSelection::Best);
  r = bare->schedule(gpu_pod("p", 1, 300, 8000));
  EXPECT_EQ(r.code, Code::Error);
  EXPECT_NE(r.message.find("no typical tasks"), std::string::npos) << r.message;
}

// ---- baselines ----------------------------------------------------------------------

// Every node's raw score for `pod` under `plugin` (no filter), with the
// device model configured.
std::vector<int64_t> raw_scores(const std::string& plugin, const std::vector<Node>& nodes,
                                const std::vector<Pod>& running, const Pod& pod) {
  Snapshot snap = Snapshot::build(nodes, running);
  snap.configure_devices(DeviceModel{});
  const ProfilePlan plan = make_profile_plan(score_only_profile(plugin));
  intern_pod_for_plan(snap, pod, plan, nullptr);
  PodQuery q = prepare_pod_query(pod, snap, plan, TieBreak::First, 0, nullptr);
  EvalRequest req;
  req.want_scores = true;
  req.want_verdicts = true;
  req.score_single = true;
  EvalResult out;
  make_cpu_backend()->evaluate(snap, q, req, out);
  std::vector<int64_t> raw(snap.num_nodes(), -1);
  for (size_t i = 0; i < out.scored_nodes.size(); ++i) raw[out.scored_nodes[i]] = out.raw_scores.at(i);
  return raw;
}

TEST(GpuBaselines, FormulasByHand) {
  // "idle": 2 free devices, 64 cores; "used": device 0 holds a 540 share
  // (460 free); "three": 3 devices, a whole one taken.
  const std::vector<Node> nodes = {gpu_node("idle", 2, "G2"), gpu_node("used", 2, "G2"), gpu_node("three", 3, "G2")};
  const std::vector<Pod> running = {holding(gpu_pod("s", 1, 540, 0), "used", "0"),
                                    holding(gpu_pod("w", 1, 1000, 0), "three", "1")};
  const Pod share = gpu_pod("p", 1, 400, 8000);  // 8 cores
  // BestFit: idle: 1 - (0.5 x 56000/128000 + 0.5 x 1600/8000) = 0.68125 -> 68;
  // used: 1 - (0.21875 + 0.5 x 1060/8000 = 0.06625) = 0.715 -> 71;
  // three: 1 - (0.21875 + 0.5 x 1600/8000 = 0.1) = 0.68125 -> 68.
  EXPECT_EQ(raw_scores("GpuBestFit", nodes, running, share), (std::vector<int64_t>{68, 71, 68}));
  // DotProduct: (64000/128000 x 8000/128000 + free/8000 x 400/8000) / 2:
  // idle 0.5 x 0.0625 + 0.25 x 0.05 = 0.04375 -> /2 = 0.021875 -> 97;
  // used 0.03125 + 0.1825 x 0.05 = 0.040375 -> 97; three same as idle -> 97.
  EXPECT_EQ(raw_scores("GpuDotProduct", nodes, running, share), (std::vector<int64_t>{97, 97, 97}));
  // Packing: idle: max(33 - 2, 2) = 31; used: the 460 device (shared):
  // 100 - 46 / 10 = 96; three: takes a free device: max(50 - 1, 33) = 49.
  EXPECT_EQ(raw_scores("GpuPacking", nodes, running, share), (std::vector<int64_t>{31, 96, 49}));
  // Clustering: base = 25 x (8000 - free) / 8000: idle 18, used 20
  // (free 1460), three 18 (free 2000). A share: idle has no classes (+25),
  // used only shares (+75), three only whole ones (+0).
  EXPECT_EQ(raw_scores("GpuClustering", nodes, running, share), (std::vector<int64_t>{43, 95, 18}));
  const Pod whole = gpu_pod("w1", 1, 1000, 8000);
  EXPECT_EQ(raw_scores("GpuClustering", nodes, running, whole), (std::vector<int64_t>{43, 20, 93}));
  // CPU-only pods: Packing and Clustering give 0.
  EXPECT_EQ(raw_scores("GpuPacking", nodes, running, gpu_pod("c", 0, 0, 8000)), (std::vector<int64_t>{0, 0, 0}));
  // RandomFit: exactly one node scores 100, the same one for the same pod.
  const auto r1 = raw_scores("GpuRandomFit", nodes, running, share);
  EXPECT_EQ(std::count(r1.begin(), r1.end(), 100), 1);
  EXPECT_EQ(std::count(r1.begin(), r1.end(), 0), 2);
  EXPECT_EQ(raw_scores("GpuRandomFit", nodes, running, share), r1);
}

TEST(GpuBaselines, BestFitNormalizesInIntegersAcrossTheFeasibleNodes) {
  auto e = policy_engine({gpu_node("idle", 2, "G2"), gpu_node("used", 2, "G2")},
                         {holding(gpu_pod("s", 1, 540, 0), "used", "0")}, "GpuBestFit", DeviceSelection::Best);
  const Explanation ex = e->explain(gpu_pod("p", 1, 400, 8000));
  ASSERT_EQ(ex.nodes.size(), 2u);
  EXPECT_EQ(ex.nodes[0].scores.at(0).raw, 68);
  EXPECT_EQ(ex.nodes[0].scores.at(0).normalized, 0);
  EXPECT_EQ(ex.nodes[1].scores.at(0).normalized, 100);
  EXPECT_EQ(ex.chosen, "used");
  EXPECT_EQ(ex.devices, std::vector<int32_t>{0});  // Best: the 460 free device
}

// The pods an engine evaluated on the checked path (the invalid-score check).
uint64_t scores_checked(const Engine& e) {
  return e.batch_counters().flushed[static_cast<size_t>(FlushReason::kScoresChecked)];
}

// GpuDotProduct and GpuClustering divide by their normalizers: a node
// larger than them can take a score outside [0, 100], and the framework
// the simulator runs them in then fails the pod's cycle, as upstream's
// does for any plugin (docs/plugins.md, "invalid score"). On `backend`.
void expect_policy_scores_out_of_range_fail(const std::string& backend) {
  // DotProduct: two idle 512-core nodes, 128 cores the normalizer. A pod
  // of 128 cores: (512000/128000 x 128000/128000) / 2 = 2, the score
  // 100 x (1 - 2) = -100 on both.
  const std::vector<Node> big = {gpu_node("big-a", 0, "", 512000), gpu_node("big-b", 0, "", 512000)};
  auto e = policy_engine(big, {}, "GpuDotProduct", DeviceSelection::Best, {}, {}, backend);
  const Pod wide = gpu_pod("wide", 0, 0, 128000);
  ScheduleResult r = e->schedule(wide);
  EXPECT_EQ(r.code, Code::Error);
  EXPECT_EQ(r.node, -1);
  EXPECT_NE(r.message.find("plugin \"GpuDotProduct\" returns an invalid score -100, it should in the range of [0, "
                           "100] after normalizing"),
            std::string::npos)
      << r.message;
  // Nothing was assumed: the same pod fails the same way, not as a pod in the cache.
  EXPECT_EQ(e->schedule(wide).message, r.message);
  // A pod whose scores stay in range on the same nodes is checked and placed.
  r = e->schedule(gpu_pod("narrow", 0, 0, 1000));
  EXPECT_EQ(r.code, Code::Success) << r.message;
  EXPECT_EQ(r.node_name, "big-a");
  EXPECT_EQ(scores_checked(*e), 3u);

  // Clustering: 1,000 units the normalizer, nodes of four devices. A share
  // on "a" (a whole device held: only others' class there): 25 x (1000 -
  // 3000) / 1000 = -50; on "b" (none there): -75 + 25 = -50.
  GpuScoreArgs one_gpu;
  one_gpu.max_gpu_units = 1000;
  auto c =
      policy_engine({gpu_node("a", 4, "G4"), gpu_node("b", 4, "G4")}, {holding(gpu_pod("w", 1, 1000, 0), "a", "0")},
                    "GpuClustering", DeviceSelection::Best, {}, one_gpu, backend);
  r = c->schedule(gpu_pod("s", 1, 500, 1000));
  EXPECT_EQ(r.code, Code::Error);
  EXPECT_NE(r.message.find("plugin \"GpuClustering\" returns an invalid score -50"), std::string::npos) << r.message;
  // A cpu pod takes no class: Clustering scores it 0 everywhere, unchecked.
  r = c->schedule(gpu_pod("cpu", 0, 0, 1000));
  EXPECT_EQ(r.code, Code::Success) << r.message;
  EXPECT_EQ(scores_checked(*c), 1u);

  // A normalizer so large that 25 x it wraps (Go's int64): 25 x (4e17 -
  // 3000) wraps to -8.4e18, -21 once divided, on both nodes (a whole device
  // held on each), however small the nodes.
  GpuScoreArgs huge;
  huge.max_gpu_units = 400000000000000000;
  auto h = policy_engine({gpu_node("a", 4, "G4"), gpu_node("b", 4, "G4")},
                         {holding(gpu_pod("wa", 1, 1000, 0), "a", "0"), holding(gpu_pod("wb", 1, 1000, 0), "b", "0")},
                         "GpuClustering", DeviceSelection::Best, {}, huge, backend);
  r = h->schedule(gpu_pod("s", 1, 500, 1000));
  EXPECT_EQ(r.code, Code::Error);
  EXPECT_NE(r.message.find("plugin \"GpuClustering\" returns an invalid score -21"), std::string::npos) << r.message;
}

TEST(GpuBaselines, AScoreOutsideTheRangeFailsTheCycleAsTheFrameworkDoes) {
  expect_policy_scores_out_of_range_fail("cpu");
}

// The same on the CUDA backend (the device's per-plugin scores, checked by
// Engine::evaluate; scripts/gpu-run.sh runs it).
TEST(GpuBaselines, AScoreOutsideTheRangeFailsTheCycleOnCuda) {
  const std::string why = backend_unavailable_reason("cuda");
  if (!why.empty()) GTEST_SKIP() << why;
  expect_policy_scores_out_of_range_fail("cuda");
}

// Within the normalizers (the trace's nodes: at most 128 cores and 8
// devices, the defaults) no pod is checked, so the cache and windows answer
// as before; a node that grows past them turns the check on.
TEST(GpuBaselines, OnlyNodesPastTheNormalizersTurnTheCheckOn) {
  for (const char* plugin : {"GpuDotProduct", "GpuClustering"}) {
    SCOPED_TRACE(plugin);
    auto e = policy_engine({gpu_node("a", 8, "G8", 128000), gpu_node("b", 2, "G2", 64000)}, {}, plugin,
                           DeviceSelection::Best);
    for (int i = 0; i < 6; ++i) {
      const Pod pod =
          i % 2 == 0 ? gpu_pod("p" + std::to_string(i), 0, 0, 8000) : gpu_pod("g" + std::to_string(i), 1, 500, 8000);
      EXPECT_EQ(e->schedule(pod).code, Code::Success);
    }
    EXPECT_EQ(scores_checked(*e), 0u);
    // Nine devices on "b": more units than 8,000.
    ASSERT_EQ(e->update_node(gpu_node("b", 9, "G8", 64000)).code, EventCode::kOk);
    EXPECT_EQ(e->schedule(gpu_pod("q", 1, 1000, 8000)).code, Code::Success);
    EXPECT_EQ(scores_checked(*e), 1u);
    // Back to two: the device layout counts its bounds afresh.
    ASSERT_EQ(e->update_node(gpu_node("b", 2, "G2", 64000)).code, EventCode::kOk);
    EXPECT_EQ(e->schedule(gpu_pod("r", 1, 1000, 8000)).code, Code::Success);
    EXPECT_EQ(scores_checked(*e), 1u);
  }
}

// The gate's other conditions: a profile whose Filter does not check cpu
// (a node's free cpu can be negative, the score above 100), a pod asking
// more than the normalizer, a device overdrawn by a pod bound later.
TEST(GpuBaselines, TheCheckCoversNegativeFreeAmountsAndLargePods) {
  {
    // Without NodeResourcesFit: "a" runs 1,000 cores on 64, so its free
    // cpu is -936000: (-936000/128000 x 8000/128000) / 2 = -0.228515625,
    // the score 100 x 1.228515625 = 122.85 -> 122; "b" scores 98.
    ProfileConfig p = default_scheduler_config().profiles.at(0);
    p.filter.erase(std::remove(p.filter.begin(), p.filter.end(), "NodeResourcesFit"), p.filter.end());
    p.score = {PluginEntry{"GpuDotProduct", 1}};
    auto e = engine_for(p, {gpu_node("a", 0, ""), gpu_node("b", 0, "")}, {on_node(gpu_pod("hog", 0, 0, 1000000), "a")});
    const ScheduleResult r = e->schedule(gpu_pod("p", 0, 0, 8000));
    EXPECT_EQ(r.code, Code::Error);
    EXPECT_NE(r.message.find("plugin \"GpuDotProduct\" returns an invalid score 122,"), std::string::npos) << r.message;
    EXPECT_EQ(scores_checked(*e), 1u);
  }
  {
    // Nine whole devices: more units than 8,000, on nodes of two.
    auto e = policy_engine({gpu_node("a", 2, "G2"), gpu_node("b", 2, "G2")}, {}, "GpuDotProduct",
                           DeviceSelection::Best);
    EXPECT_EQ(e->schedule(gpu_pod("nine", 9, 1000, 1000)).code, Code::Unschedulable);
    EXPECT_EQ(e->schedule(gpu_pod("one", 1, 1000, 1000)).code, Code::Success);
    EXPECT_EQ(scores_checked(*e), 1u);  // the first only: one device is within the normalizer
  }
  {
    // A pod bound later holding device 0 of "a" while another holds it:
    // overdrawn (free -1000), so a Clustering pod is checked.
    auto e = policy_engine({gpu_node("a", 2, "G2"), gpu_node("b", 2, "G2")},
                           {holding(gpu_pod("x", 1, 1000, 0), "a", "0")}, "GpuClustering", DeviceSelection::Best);
    EXPECT_EQ(e->schedule(gpu_pod("s1", 1, 500, 1000)).code, Code::Success);
    EXPECT_EQ(scores_checked(*e), 0u);
    ASSERT_TRUE(e->add_pod(holding(gpu_pod("y", 1, 1000, 0), "a", "0")).ok());
    EXPECT_EQ(e->schedule(gpu_pod("s2", 1, 500, 1000)).code, Code::Success);
    EXPECT_EQ(scores_checked(*e), 1u);
  }
}

TEST(SnapshotAmountBounds, RaisedByNodeWritesAndCountedAgainByTheDeviceLayout) {
  Snapshot snap = Snapshot::build({gpu_node("a", 2, "G2", 32000), gpu_node("b", 4, "G4", 96000)}, {});
  EXPECT_EQ(snap.amount_bounds().cpu_allocatable, 96000);
  EXPECT_EQ(snap.amount_bounds().node_units, 0);  // no device model yet
  snap.configure_devices(DeviceModel{});
  EXPECT_EQ(snap.amount_bounds().node_units, 4000);
  EXPECT_EQ(snap.amount_bounds().device_units, 1000);
  EXPECT_FALSE(snap.amount_bounds().overdrawn);
  // A smaller node keeps the cpu bound (an upper bound, never lowered by a
  // write) and lowers the device bounds (counted afresh by the layout).
  snap.update_node(gpu_node("b", 1, "G4", 8000));
  EXPECT_EQ(snap.amount_bounds().cpu_allocatable, 96000);
  EXPECT_EQ(snap.amount_bounds().node_units, 2000);
  snap.update_node(gpu_node("a", 2, "G2", 200000));
  EXPECT_EQ(snap.amount_bounds().cpu_allocatable, 200000);
  // A pod holding more of a device than it has overdraws it.
  Snapshot over = Snapshot::build({gpu_node("a", 1, "G1")}, {holding(gpu_pod("x", 1, 1000, 0), "a", "0"),
                                                             holding(gpu_pod("y", 1, 1000, 0), "a", "0")});
  over.configure_devices(DeviceModel{});
  EXPECT_TRUE(over.amount_bounds().overdrawn);
}

// ---- typical tasks --------------------------------------------------------------------

TEST(GpuTypicalTasks, LargestGroupsUpToThePopularity) {
  std::vector<Pod> pods;
  for (int i = 0; i < 10; ++i) pods.push_back(gpu_pod("a" + std::to_string(i), 1, 500, 4000));
  for (int i = 0; i < 6; ++i) pods.push_back(gpu_pod("b" + std::to_string(i), 2, 1000, 8000));
  for (int i = 0; i < 3; ++i) pods.push_back(gpu_pod("c" + std::to_string(i), 0, 0, 1000));
  pods.push_back(gpu_pod("d", 1, 250, 2000));
  // 95% of 20 pods = 19: the groups of 10, 6 and 3 (19) are kept.
  const auto t = typical_tasks(pods, DeviceModel{}, 0.95);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0], task(4000, 500, 1, 10.0 / 19));
  EXPECT_EQ(t[1], task(8000, 1000, 2, 6.0 / 19));
  EXPECT_EQ(t[2], task(1000, 0, 0, 3.0 / 19));
  // Everything at 100%.
  EXPECT_EQ(typical_tasks(pods, DeviceModel{}, 1.0).size(), 4u);
}

}  // namespace
}  // namespace bulkscore
