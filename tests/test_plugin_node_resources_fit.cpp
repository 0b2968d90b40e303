// NodeResourcesFit Filter and its three scoring strategies, with the expected
// values of upstream's pkg/scheduler/framework/plugins/noderesources tests:
// fit_test.go (TestEnoughRequests, TestNotEnoughRequests, TestStorageRequests,
// TestRestartableInitContainers, TestFitScore), least_allocated_test.go,
// most_allocated_test.go and requested_to_capacity_ratio_test.go, restated.
// Cases that need gates that are off in v1.35.4 (DRAExtendedResource) and
// argument-validation cases (the config tests own those) are left out.
#include <gtest/gtest.h>

#include "plugins/resource_allocation.hpp"
#include "tests/test_util.hpp"

namespace bulkscore {
namespace {

using namespace testutil;

const char* const kPlugin = "NodeResourcesFit";
const char* const kAaa = "example.com/aaa";
const char* const kBbb = "example.com/bbb";
const char* const kHugePages = "hugepages-2Mi";
const char* const kK8sA = "kubernetes.io/something";
const char* const kK8sB = "subdomain.kubernetes.io/something";

const Code U = Code::Unschedulable;
const Code UR = Code::UnschedulableAndUnresolvable;

// Requests as upstream's fit tests build them: cpu (milli), memory and
// ephemeral-storage always stated, 0 when not given, plus any scalars.
ResourceList req(int64_t cpu, int64_t memory, ResourceList extra = {}) {
  ResourceList r{{"cpu", cpu}, {"memory", memory}, {"ephemeral-storage", 0}};
  for (const auto& [k, v] : extra) r[k] = v;
  return r;
}

// ---- Filter -------------------------------------------------------------------

// TestEnoughRequests' node: cpu 10m, memory 20, pods 32, example.com/aaa 5,
// ephemeral-storage 20, hugepages-2Mi 5.
Node enough_node() {
  return make_node_with(
      "machine1", {{"cpu", 10}, {"memory", 20}, {"pods", 32}, {kAaa, 5}, {"ephemeral-storage", 20}, {kHugePages, 5}});
}

Pod regular(std::vector<ResourceList> containers) {
  std::vector<Container> cs;
  for (auto& r : containers) cs.push_back(container(std::move(r)));
  return make_pod("incoming", std::move(cs));
}

Pod with_init(std::vector<ResourceList> containers, std::vector<ResourceList> inits) {
  Pod p = regular(std::move(containers));
  for (auto& r : inits) p.init_containers.push_back(container(std::move(r)));
  return p;
}

NodeFilterResult fit_on(const Node& node, const Pod& incoming, std::optional<ResourceList> existing,
                        ProfileConfig profile = {}) {
  std::vector<Pod> pods;
  if (existing) pods.push_back(running("existing", node.name, *existing));
  const FilterRun r = run_filter(kPlugin, {node}, pods, incoming, std::move(profile));
  EXPECT_EQ(r.prefilter, Code::Success);  // Fit's PreFilter never skips
  return r.nodes.at(0);
}

NodeFilterResult fit(const Pod& incoming, std::optional<ResourceList> existing, ProfileConfig profile = {}) {
  return fit_on(enough_node(), incoming, std::move(existing), std::move(profile));
}

NodeFilterResult insufficient(Code code, std::vector<std::string> names) {
  std::vector<std::string> reasons;
  for (const auto& n : names) reasons.push_back("Insufficient " + n);
  return NodeFilterResult{code, reasons};
}

Pod with_pod_level(Pod p, ResourceList pod_level) {
  p.pod_level_requests = std::move(pod_level);
  return p;
}

TEST(NodeResourcesFitFilter, UpstreamTestEnoughRequests) {
  // TestEnoughRequests, case by case (upstream names abridged).
  EXPECT_EQ(fit(make_pod("incoming"), req(10, 20)), fits()) << "no resources requested always fits";
  EXPECT_EQ(fit(regular({req(1, 1)}), req(10, 20)), insufficient(U, {"cpu", "memory"})) << "too many resources fails";
  EXPECT_EQ(fit(with_init({req(1, 1)}, {req(3, 1)}), req(8, 19)), insufficient(U, {"cpu"}))
      << "too many resources fails due to init container cpu";
  EXPECT_EQ(fit(with_init({req(1, 1)}, {req(3, 1), req(2, 1)}), req(8, 19)), insufficient(U, {"cpu"}))
      << "too many resources fails due to highest init container cpu";
  EXPECT_EQ(fit(with_init({req(1, 1)}, {req(1, 3)}), req(9, 19)), insufficient(U, {"memory"}))
      << "too many resources fails due to init container memory";
  EXPECT_EQ(fit(with_init({req(1, 1)}, {req(1, 3), req(1, 2)}), req(9, 19)), insufficient(U, {"memory"}))
      << "too many resources fails due to highest init container memory";
  EXPECT_EQ(fit(with_init({req(1, 1)}, {req(1, 1)}), req(9, 19)), fits())
      << "init container fits because it's the max, not sum, of containers and init containers";
  EXPECT_EQ(fit(with_init({req(1, 1)}, {req(1, 1), req(1, 1)}), req(9, 19)), fits())
      << "multiple init containers fit because it's the max, not sum, of containers and init containers";
  EXPECT_EQ(fit(regular({req(1, 1)}), req(5, 5)), fits()) << "both resources fit";
  EXPECT_EQ(fit(regular({req(2, 1)}), req(9, 5)), insufficient(U, {"cpu"})) << "one resource memory fits";
  EXPECT_EQ(fit(regular({req(1, 2)}), req(5, 19)), insufficient(U, {"memory"})) << "one resource cpu fits";
  EXPECT_EQ(fit(regular({req(5, 1)}), req(5, 19)), fits()) << "equal edge case";
  EXPECT_EQ(fit(with_init({req(4, 1)}, {req(5, 1)}), req(5, 19)), fits()) << "equal edge case for init container";
  EXPECT_EQ(fit(regular({req(0, 0, {{kAaa, 1}})}), req(0, 0)), fits()) << "extended resource fits";
  EXPECT_EQ(fit(with_init({}, {req(0, 0, {{kAaa, 1}})}), req(0, 0)), fits())
      << "extended resource fits for init container";
  EXPECT_EQ(fit(regular({req(1, 1, {{kAaa, 10}})}), req(0, 0, {{kAaa, 0}})), insufficient(UR, {kAaa}))
      << "extended resource capacity enforced";
  EXPECT_EQ(fit(with_init({}, {req(1, 1, {{kAaa, 10}})}), req(0, 0, {{kAaa, 0}})), insufficient(UR, {kAaa}))
      << "extended resource capacity enforced for init container";
  EXPECT_EQ(fit(regular({req(1, 1, {{kAaa, 1}})}), req(0, 0, {{kAaa, 5}})), insufficient(U, {kAaa}))
      << "extended resource allocatable enforced";
  EXPECT_EQ(fit(with_init({}, {req(1, 1, {{kAaa, 1}})}), req(0, 0, {{kAaa, 5}})), insufficient(U, {kAaa}))
      << "extended resource allocatable enforced for init container";
  EXPECT_EQ(fit(regular({req(1, 1, {{kAaa, 3}}), req(1, 1, {{kAaa, 3}})}), req(0, 0, {{kAaa, 2}})),
            insufficient(UR, {kAaa}))
      << "extended resource allocatable enforced for multiple containers";
  EXPECT_EQ(fit(with_init({}, {req(1, 1, {{kAaa, 3}}), req(1, 1, {{kAaa, 3}})}), req(0, 0, {{kAaa, 2}})), fits())
      << "extended resource allocatable admits multiple init containers";
  EXPECT_EQ(fit(with_init({}, {req(1, 1, {{kAaa, 6}}), req(1, 1, {{kAaa, 3}})}), req(0, 0, {{kAaa, 2}})),
            insufficient(UR, {kAaa}))
      << "extended resource allocatable enforced for multiple init containers";
  EXPECT_EQ(fit(regular({req(1, 1, {{kBbb, 1}})}), req(0, 0)), insufficient(UR, {kBbb}))
      << "extended resource allocatable enforced for unknown resource";
  EXPECT_EQ(fit(with_init({}, {req(1, 1, {{kBbb, 1}})}), req(0, 0)), insufficient(UR, {kBbb}))
      << "extended resource allocatable enforced for unknown resource for init container";
  EXPECT_EQ(fit(regular({req(1, 1, {{kK8sA, 10}})}), req(0, 0)), insufficient(UR, {kK8sA}))
      << "kubernetes.io resource capacity enforced";
  EXPECT_EQ(fit(with_init({}, {req(1, 1, {{kK8sB, 10}})}), req(0, 0)), insufficient(UR, {kK8sB}))
      << "kubernetes.io resource capacity enforced for init container";
  EXPECT_EQ(fit(regular({req(1, 1, {{kHugePages, 10}})}), req(0, 0, {{kHugePages, 0}})), insufficient(UR, {kHugePages}))
      << "hugepages resource capacity enforced";
  EXPECT_EQ(fit(with_init({}, {req(1, 1, {{kHugePages, 10}})}), req(0, 0, {{kHugePages, 0}})),
            insufficient(UR, {kHugePages}))
      << "hugepages resource capacity enforced for init container";
  EXPECT_EQ(fit(regular({req(1, 1, {{kHugePages, 3}}), req(1, 1, {{kHugePages, 3}})}), req(0, 0, {{kHugePages, 2}})),
            insufficient(UR, {kHugePages}))
      << "hugepages resource allocatable enforced for multiple containers";
  {
    ProfileConfig ignore;
    ignore.fit_args.ignored_resources = {kBbb};
    EXPECT_EQ(fit(regular({req(1, 1, {{kBbb, 1}})}), req(0, 0), ignore), fits())
        << "skip checking ignored extended resource";
  }
  {
    Pod p = regular({req(1, 1)});
    p.overhead = {{"cpu", 3}, {"memory", 13}};
    EXPECT_EQ(fit(p, req(5, 5)), fits()) << "resources + pod overhead fits";
    p.overhead = {{"cpu", 1}, {"memory", 15}};
    EXPECT_EQ(fit(p, req(5, 5)), insufficient(U, {"memory"})) << "requests + overhead does not fit for memory";
  }
  {
    ProfileConfig groups;
    groups.fit_args.ignored_resource_groups = {"example.com"};
    EXPECT_EQ(fit(regular({req(1, 1, {{kBbb, 1}, {kK8sA, 1}})}), req(0, 0), groups), insufficient(UR, {kK8sA}))
        << "skip checking ignored extended resource via resource groups";
  }
  EXPECT_EQ(fit(regular({req(1, 1, {{kAaa, 0}})}), req(0, 0, {{kAaa, 6}})), fits())
      << "skip checking extended resource request with quantity zero";
  EXPECT_EQ(fit(regular({req(0, 0, {{kAaa, 1}})}), req(20, 30, {{kAaa, 1}})), fits())
      << "skip checking resource request with quantity zero (cpu and memory over-committed)";
}

TEST(NodeResourcesFitFilter, UpstreamTestEnoughRequestsPodLevelResources) {
  // TestEnoughRequests, PodLevelResources cases (the gate is beta and on).
  EXPECT_EQ(fit(with_pod_level(regular({req(1, 1)}), {{"cpu", 1}, {"memory", 2}}), req(5, 5)), fits())
      << "both pod-level and container-level resources fit";
  EXPECT_EQ(fit(with_pod_level(regular({req(1, 1)}), {{"cpu", 7}, {"memory", 2}}), req(5, 5)), insufficient(U, {"cpu"}))
      << "pod-level cpu resource not fit";
  EXPECT_EQ(fit(with_pod_level(regular({req(1, 1)}), {{"cpu", 3}, {"memory", 2}}), req(5, 19)),
            insufficient(U, {"memory"}))
      << "pod-level memory resource not fit";
  EXPECT_EQ(fit(with_pod_level(make_pod("incoming"), {{"cpu", 3}, {"memory", 2}, {kHugePages, 5}}), std::nullopt),
            fits())
      << "pod-level hugepages resource fit";
  EXPECT_EQ(fit(with_pod_level(regular({req(1, 1, {{kHugePages, 3}})}), {{"cpu", 3}, {"memory", 2}, {kHugePages, 5}}),
                std::nullopt),
            fits())
      << "both pod-level and container-level hugepages resources fit";
  EXPECT_EQ(fit(with_pod_level(make_pod("incoming"), {{"cpu", 3}, {"memory", 2}, {kHugePages, 10}}), std::nullopt),
            insufficient(UR, {kHugePages}))
      << "pod-level hugepages resource not fit";
  EXPECT_EQ(fit(with_pod_level(with_init({req(1, 1)}, {req(1, 1)}), {{"cpu", 3}, {"memory", 2}}), req(5, 19)),
            insufficient(U, {"memory"}))
      << "one pod-level cpu resource fits and all init and non-init containers resources fit";
  EXPECT_EQ(fit(regular({req(1, 1, {{"extended.resource.dra.io/something", 1}})}), req(0, 0)),
            insufficient(UR, {"extended.resource.dra.io/something"}))
      << "extended resource backed by DRA when the DRAExtendedResource gate is off";
}

TEST(NodeResourcesFitFilter, UpstreamTestNotEnoughRequests) {
  // TestNotEnoughRequests: allocatable pods 1 and one pod already there.
  const Node node = make_node_with("machine1", {{"cpu", 10}, {"memory", 20}, {"pods", 1}});
  const NodeFilterResult too_many{U, {"Too many pods"}};
  EXPECT_EQ(fit_on(node, make_pod("incoming"), req(10, 20)), too_many)
      << "even without specified resources, predicate fails when there's no space for additional pod";
  EXPECT_EQ(fit_on(node, regular({req(1, 1)}), req(5, 5)), too_many)
      << "even if both resources fit, predicate fails when there's no space for additional pod";
  EXPECT_EQ(fit_on(node, regular({req(5, 1)}), req(5, 19)), too_many)
      << "even for equal edge case, predicate fails when there's no space for additional pod";
  EXPECT_EQ(fit_on(node, with_init({req(5, 1)}, {req(5, 1)}), req(5, 19)), too_many)
      << "even for equal edge case, predicate fails when there's no space for additional pod due to init container";
}

TEST(NodeResourcesFitFilter, TooManyPodsComesFirstAndStaysResolvable) {
  // Every failing check is reported, pods first; the code is UR because cpu
  // exceeds allocatable, not because of the pod count.
  const Node node = make_node_with("machine1", {{"cpu", 10}, {"memory", 20}, {"pods", 1}});
  EXPECT_EQ(fit_on(node, regular({req(11, 1)}), req(0, 0)),
            (NodeFilterResult{UR, {"Too many pods", "Insufficient cpu"}}));
  EXPECT_EQ(fit_on(node, regular({req(1, 1)}), req(10, 0)),
            (NodeFilterResult{U, {"Too many pods", "Insufficient cpu"}}));
}

TEST(NodeResourcesFitFilter, UpstreamTestStorageRequests) {
  auto eph = [](int64_t cpu, int64_t mem, int64_t storage) {
    ResourceList r = req(cpu, mem);
    r["ephemeral-storage"] = storage;
    return r;
  };
  EXPECT_EQ(fit(regular({req(1, 1)}), req(2, 10)), fits()) << "empty storage requested, and pod fits";
  EXPECT_EQ(fit(regular({eph(0, 0, 25)}), req(2, 2)), insufficient(UR, {"ephemeral-storage"}))
      << "storage ephemeral local storage request exceeds allocatable";
  EXPECT_EQ(fit(regular({eph(0, 0, 5)}), eph(2, 2, 10)), fits()) << "ephemeral local storage is sufficient";
  EXPECT_EQ(fit(regular({eph(0, 0, 10)}), req(2, 2)), fits()) << "pod fits";
}

TEST(NodeResourcesFitFilter, UpstreamTestRestartableInitContainers) {
  // TestRestartableInitContainers, sidecars enabled (locked on in 1.35).
  const Node node = make_node_with("machine1", {{"cpu", 2}, {"memory", 0}, {"pods", 1}});
  auto pod = [](ResourceList regular_req, std::optional<ResourceList> sidecar_req) {
    Pod p = make_pod("incoming", {container(std::move(regular_req))});
    if (sidecar_req) p.init_containers.push_back(sidecar(*sidecar_req));
    return p;
  };
  EXPECT_EQ(fit_on(node, pod({}, std::nullopt), std::nullopt), fits())
      << "allow a pod without restartable init containers";
  EXPECT_EQ(fit_on(node, pod({}, ResourceList{}), std::nullopt), fits())
      << "allow a pod with restartable init containers";
  EXPECT_EQ(fit_on(node, pod({{"cpu", 1}}, ResourceList{{"cpu", 1}}), std::nullopt), fits())
      << "allow a pod if the total requests of restartable init containers and regular containers fit";
  EXPECT_EQ(fit_on(node, pod({{"cpu", 1}}, ResourceList{{"cpu", 2}}), std::nullopt), insufficient(UR, {"cpu"}))
      << "deny a pod if the total requests of restartable init containers and regular containers exceed allocatable";
}

TEST(NodeResourcesFitFilter, AssumedPodsCountAgainstAllocatable) {
  // Snapshot::add_pod is what the engine does after placing a pod.
  Snapshot snap = Snapshot::build({enough_node()}, {});
  snap.add_pod(running("first", "machine1", req(6, 10)), 0);
  const Pod incoming = regular({req(5, 1)});
  intern_pod_resources(snap, incoming);
  const ProfilePlan plan = make_profile_plan(filter_only_profile(kPlugin));
  PodQuery q = prepare_pod_query(incoming, snap, plan, TieBreak::First, 0);
  EvalRequest r;
  r.want_verdicts = true;
  EvalResult out;
  make_cpu_backend()->evaluate(snap, q, r, out);
  EXPECT_EQ(out.verdicts.at(0).code, U);
  EXPECT_EQ(reason_strings(out.verdicts[0].plugin, out.verdicts[0].reasons, snap, q, 0),
            (std::vector<std::string>{"Insufficient cpu"}));
}

// ---- Score --------------------------------------------------------------------

ProfileConfig strategy(ScoringStrategyType type, std::vector<ResourceSpec> resources = {{"cpu", 1}, {"memory", 1}},
                       std::vector<UtilizationShapePoint> shape = {}) {
  ProfileConfig p;
  p.fit_args.strategy = type;
  p.fit_args.resources = std::move(resources);
  p.fit_args.shape = std::move(shape);
  return p;
}

const ProfileConfig kLeast = strategy(ScoringStrategyType::LeastAllocated);
const ProfileConfig kMost = strategy(ScoringStrategyType::MostAllocated);
const std::vector<ResourceSpec> kWithXyz = {{"cpu", 1}, {"memory", 1}, {"abc.com/xyz", 1}};

// Upstream's two-container pod: 1000m/2000 + 2000m/3000.
Pod two_containers() { return regular({{{"cpu", 1000}, {"memory", 2000}}, {{"cpu", 2000}, {"memory", 3000}}}); }

Pod cpu_mem(int64_t cpu, int64_t memory, ResourceList extra = {}) {
  ResourceList r{{"cpu", cpu}, {"memory", memory}};
  for (const auto& [k, v] : extra) r[k] = v;
  return regular({r});
}

Pod bare_running(const std::string& name, const std::string& node) { return on_node(make_pod(name), node); }

Pod cpu_mem_running(const std::string& name, const std::string& node, int64_t cpu, int64_t memory) {
  return running(name, node, {{"cpu", cpu}, {"memory", memory}});
}

std::vector<int64_t> scores(const Pod& pod, const std::vector<Node>& nodes, const std::vector<Pod>& pods,
                            const ProfileConfig& profile) {
  const ScoreRun r = run_score(kPlugin, nodes, pods, pod, profile);
  EXPECT_FALSE(r.skipped) << "NodeResourcesFit's PreScore never skips";
  EXPECT_EQ(r.raw, r.normalized) << "NodeResourcesFit has no NormalizeScore";
  return r.normalized;
}

Node node_xyz(const std::string& name, int64_t cpu, int64_t memory, int64_t xyz) {
  Node n = make_node(name, cpu, memory);
  if (xyz) n.allocatable["abc.com/xyz"] = xyz;
  return n;
}

using Scores = std::vector<int64_t>;

TEST(NodeResourcesFitScore, UpstreamTestFitScore) {
  const std::vector<Node> nodes = {make_node("node1", 4000, 10000), make_node("node2", 6000, 10000)};
  const std::vector<Pod> pods = {cpu_mem_running("p1", "node1", 2000, 4000),
                                 cpu_mem_running("p2", "node2", 1000, 2000)};
  EXPECT_EQ(
      scores(cpu_mem(3000, 5000), nodes, pods,
             strategy(ScoringStrategyType::RequestedToCapacityRatio, {{"cpu", 1}, {"memory", 1}}, {{0, 10}, {100, 0}})),
      (Scores{10, 32}))
      << "test case for ScoringStrategy RequestedToCapacityRatio case1";
  EXPECT_EQ(
      scores(cpu_mem(3000, 5000), nodes, pods,
             strategy(ScoringStrategyType::RequestedToCapacityRatio, {{"cpu", 1}, {"memory", 1}}, {{0, 0}, {100, 10}})),
      (Scores{95, 68}))
      << "test case for ScoringStrategy RequestedToCapacityRatio case2";
  EXPECT_EQ(scores(cpu_mem(1000, 2000), nodes, pods, kMost), (Scores{67, 36}))
      << "test case for ScoringStrategy MostAllocated";
  EXPECT_EQ(scores(cpu_mem(1000, 2000), nodes, pods, kLeast), (Scores{32, 63}))
      << "test case for ScoringStrategy LeastAllocated";
}

TEST(NodeResourcesFitScore, UpstreamTestFitScoreWithSidecarOnTheNode) {
  const std::vector<Node> nodes = {make_node("node1", 4000, 10000), make_node("node2", 4000, 10000)};
  Pod with_sidecar = cpu_mem_running("p1", "node1", 1000, 2000);
  with_sidecar.init_containers.push_back(sidecar({{"cpu", 1000}, {"memory", 2000}}));
  const std::vector<Pod> pods = {with_sidecar, cpu_mem_running("p2", "node2", 1000, 2000)};
  EXPECT_EQ(scores(cpu_mem(1000, 2000), nodes, pods, kMost), (Scores{67, 45}))
      << "test case for ScoringStrategy MostAllocated with sidecar container";
  EXPECT_EQ(scores(cpu_mem(1000, 2000), nodes, pods, kLeast), (Scores{32, 55}))
      << "test case for ScoringStrategy LeastAllocated with sidecar container";
}

TEST(NodeResourcesFitScore, UpstreamTestLeastAllocatedScoringStrategy) {
  const std::vector<Node> small = {make_node("node1", 4000, 10000), make_node("node2", 4000, 10000)};
  const std::vector<Node> sized = {make_node("node1", 4000, 10000), make_node("node2", 6000, 10000)};
  const std::vector<Node> big = {make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)};
  EXPECT_EQ(scores(make_pod("p"), small, {}, kLeast), (Scores{100, 100})) << "nothing scheduled, nothing requested";
  EXPECT_EQ(scores(two_containers(), sized, {}, kLeast), (Scores{37, 50}))
      << "nothing scheduled, resources requested, differently sized nodes";
  EXPECT_EQ(scores(make_pod("p"), small,
                   {bare_running("a", "node1"), bare_running("b", "node1"), bare_running("c", "node2"),
                    bare_running("d", "node2")},
                   kLeast),
            (Scores{100, 100}))
      << "no resources requested, pods scheduled";
  const std::vector<Pod> four = {cpu_mem_running("a", "node1", 3000, 0), cpu_mem_running("b", "node1", 3000, 0),
                                 cpu_mem_running("c", "node2", 3000, 0), cpu_mem_running("d", "node2", 3000, 5000)};
  EXPECT_EQ(scores(make_pod("p"), big, four, kLeast), (Scores{70, 57}))
      << "no resources requested, pods scheduled with resources";
  const std::vector<Pod> two = {cpu_mem_running("a", "node1", 3000, 0), cpu_mem_running("b", "node2", 3000, 5000)};
  EXPECT_EQ(scores(two_containers(), big, two, kLeast), (Scores{57, 45}))
      << "resources requested, pods scheduled with resources";
  EXPECT_EQ(scores(two_containers(), {make_node("node1", 10000, 20000), make_node("node2", 10000, 50000)}, two, kLeast),
            (Scores{57, 60}))
      << "resources requested, pods scheduled with resources, differently sized nodes";
  EXPECT_EQ(scores(cpu_mem(3000, 0), small, two, kLeast), (Scores{50, 25}))
      << "requested resources exceed node capacity";
  EXPECT_EQ(scores(make_pod("p"), {make_node_with("node1", {}), make_node_with("node2", {})}, two, kLeast),
            (Scores{0, 0}))
      << "zero node resources, pods scheduled with resources";
  EXPECT_EQ(
      scores(two_containers(), sized, {}, strategy(ScoringStrategyType::LeastAllocated, {{"memory", 2}, {"cpu", 1}})),
      (Scores{41, 50}))
      << "nothing scheduled, resources requested, differently sized nodes (different weight on CPU and memory)";
  const ProfileConfig xyz = strategy(ScoringStrategyType::LeastAllocated, kWithXyz);
  EXPECT_EQ(scores(two_containers(), {node_xyz("node1", 6000, 10000, 0), node_xyz("node2", 6000, 10000, 4)}, {}, xyz),
            (Scores{50, 50}))
      << "bypass extended resource if the pod does not request";
  EXPECT_EQ(scores(cpu_mem(3000, 5000, {{"abc.com/xyz", 2}}),
                   {node_xyz("node1", 6000, 10000, 4), node_xyz("node2", 6000, 10000, 10)}, {}, xyz),
            (Scores{50, 60}))
      << "honor extended resource if the pod requests";
  EXPECT_EQ(scores(cpu_mem(3000, 4000), {node_xyz("node1", 6000, 10000, 0), node_xyz("node2", 6000, 10000, 4)}, {},
                   strategy(ScoringStrategyType::LeastAllocated, {{"abc.com/xyz", 2}, {"cpu", 1}, {"memory", 1}})),
            (Scores{55, 55}))
      << "if the node doesn't have a resource";
}

TEST(NodeResourcesFitScore, UpstreamTestMostAllocatedScoringStrategy) {
  const std::vector<Node> sized = {make_node("node1", 4000, 10000), make_node("node2", 6000, 10000)};
  const std::vector<Node> big = {make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)};
  EXPECT_EQ(scores(make_pod("p"), {make_node("node1", 4000, 10000), make_node("node2", 4000, 10000)}, {}, kMost),
            (Scores{0, 0}))
      << "nothing scheduled, nothing requested";
  EXPECT_EQ(scores(two_containers(), sized, {}, kMost), (Scores{62, 50}))
      << "nothing scheduled, resources requested, differently sized nodes";
  const std::vector<Pod> four = {cpu_mem_running("a", "node1", 3000, 0), cpu_mem_running("b", "node1", 3000, 0),
                                 cpu_mem_running("c", "node2", 3000, 0), cpu_mem_running("d", "node2", 3000, 5000)};
  EXPECT_EQ(scores(make_pod("p"), big, four, kMost), (Scores{30, 42}))
      << "no resources requested, pods scheduled with resources";
  const std::vector<Pod> two = {cpu_mem_running("a", "node1", 3000, 0), cpu_mem_running("b", "node2", 3000, 5000)};
  EXPECT_EQ(scores(two_containers(), big, two, kMost), (Scores{42, 55}))
      << "resources requested, pods scheduled with resources";
  EXPECT_EQ(scores(regular({{{"cpu", 2000}, {"memory", 4000}}, {{"cpu", 3000}, {"memory", 5000}}}),
                   {make_node("node1", 5000, 10000), make_node("node2", 10000, 9000)}, {}, kMost),
            (Scores{95, 75}))
      << "resources requested with more than the node, pods scheduled with resources";
  EXPECT_EQ(
      scores(two_containers(), sized, {}, strategy(ScoringStrategyType::MostAllocated, {{"memory", 2}, {"cpu", 1}})),
      (Scores{58, 50}))
      << "nothing scheduled, resources requested, differently sized nodes (different weight on CPU and memory)";
  {
    // Containers without requests count 100m and 200Mi: the one case where
    // units matter.
    const std::vector<Node> nodes = {make_node("node1", 250, 1000 * kMiB), make_node("node2", 250, 1000 * kMiB)};
    const std::vector<Pod> pods = {on_node(make_pod("a", {container()}), "node1"),
                                   on_node(make_pod("b", {container()}), "node1")};
    EXPECT_EQ(scores(make_pod("p", {container()}), nodes, pods, kMost), (Scores{80, 30}))
        << "no resources requested, pods scheduled, nonzero request for resource";
  }
  const ProfileConfig xyz = strategy(ScoringStrategyType::MostAllocated, kWithXyz);
  EXPECT_EQ(scores(two_containers(), {node_xyz("node1", 6000, 10000, 0), node_xyz("node2", 6000, 10000, 4)}, {}, xyz),
            (Scores{50, 50}))
      << "bypass extended resource if the pod does not request";
  EXPECT_EQ(scores(cpu_mem(3000, 5000, {{"abc.com/xyz", 2}}),
                   {node_xyz("node1", 6000, 10000, 4), node_xyz("node2", 6000, 10000, 10)}, {}, xyz),
            (Scores{50, 40}))
      << "honor extended resource if the pod requests";
  EXPECT_EQ(scores(cpu_mem(3000, 4000), {node_xyz("node1", 6000, 10000, 0), node_xyz("node2", 6000, 10000, 4)}, {},
                   strategy(ScoringStrategyType::MostAllocated, {{"abc.com/xyz", 2}, {"cpu", 1}, {"memory", 1}})),
            (Scores{45, 45}))
      << "if the node doesn't have a resource";
}

TEST(NodeResourcesFitScore, UpstreamTestRequestedToCapacityRatioScoringStrategy) {
  const ProfileConfig rtcr =
      strategy(ScoringStrategyType::RequestedToCapacityRatio, {{"cpu", 1}, {"memory", 1}}, {{0, 10}, {100, 0}});
  const std::vector<Node> same = {make_node("node1", 4000, 10000), make_node("node2", 4000, 10000)};
  const std::vector<Node> sized = {make_node("node1", 4000, 10000), make_node("node2", 6000, 10000)};
  const std::vector<Pod> bare = {bare_running("a", "node1"), bare_running("b", "node1")};
  EXPECT_EQ(scores(make_pod("p"), same, bare, rtcr), (Scores{100, 100})) << "nothing scheduled, nothing requested";
  // node1: (25 + 50) / 2 = 37.5, rounded half away from zero.
  EXPECT_EQ(scores(two_containers(), sized, bare, rtcr), (Scores{38, 50}))
      << "nothing scheduled, resources requested, differently sized nodes";
  EXPECT_EQ(scores(make_pod("p"), sized,
                   {cpu_mem_running("a", "node1", 3000, 5000), cpu_mem_running("b", "node2", 3000, 5000)}, rtcr),
            (Scores{38, 50}))
      << "no resources requested, pods scheduled with resources";
}

TEST(NodeResourcesFitScore, UpstreamTestBrokenLinearFunction) {
  // Raw shape points, as the function sees them after scaling.
  struct Case {
    std::vector<ShapePoint> points;
    std::vector<std::pair<int64_t, int64_t>> checks;  // (utilization, expected)
  };
  const std::vector<Case> cases = {
      {{{10, 1}, {90, 9}},
       {{-10, 1}, {0, 1}, {9, 1}, {10, 1}, {15, 1}, {19, 1}, {20, 2}, {89, 8}, {90, 9}, {99, 9}, {100, 9}, {110, 9}}},
      {{{0, 2}, {40, 10}, {100, 0}}, {{-10, 2}, {0, 2}, {20, 6}, {30, 8}, {40, 10}, {70, 5}, {100, 0}, {110, 0}}},
      {{{0, 2}, {40, 2}, {100, 2}}, {{-10, 2}, {0, 2}, {20, 2}, {30, 2}, {40, 2}, {70, 2}, {100, 2}, {110, 2}}},
  };
  for (const Case& c : cases) {
    for (const auto& [p, want] : c.checks) {
      EXPECT_EQ(shape_value(c.points.data(), static_cast<uint32_t>(c.points.size()), p), want)
          << "points starting (" << c.points[0].utilization << "," << c.points[0].score << "), p=" << p;
    }
  }
}

TEST(NodeResourcesFitScore, UpstreamTestResourceBinPackingSingleExtended) {
  const ProfileConfig rtcr =
      strategy(ScoringStrategyType::RequestedToCapacityRatio, {{"intel.com/foo", 1}}, {{0, 0}, {100, 1}});
  auto node = [](const std::string& name, int64_t foo) {
    Node n = make_node(name, 4000, 10000 * kMiB);
    n.allocatable["intel.com/foo"] = foo;
    return n;
  };
  const std::vector<Node> nodes = {node("node1", 8), node("node2", 4)};
  auto foo_pod = [](int64_t foo) { return regular({{{"intel.com/foo", foo}}}); };
  EXPECT_EQ(scores(make_pod("p"), nodes, {}, rtcr), (Scores{0, 0})) << "nothing scheduled, nothing requested";
  EXPECT_EQ(scores(foo_pod(2), nodes, {}, rtcr), (Scores{2, 5}))
      << "resources requested, pods scheduled with less resources";
  EXPECT_EQ(scores(foo_pod(2), nodes, {running("e", "node2", {{"intel.com/foo", 2}})}, rtcr), (Scores{2, 10}))
      << "resources requested, pods scheduled with resources, on node with existing pod running";
  EXPECT_EQ(scores(foo_pod(4), nodes, {}, rtcr), (Scores{5, 10}))
      << "resources requested, pods scheduled with more resources";
}

TEST(NodeResourcesFitScore, UpstreamTestResourceBinPackingMultipleExtended) {
  const ProfileConfig rtcr = strategy(ScoringStrategyType::RequestedToCapacityRatio,
                                      {{"intel.com/foo", 3}, {"intel.com/bar", 5}}, {{0, 0}, {100, 1}});
  auto node = [](const std::string& name, int64_t foo, int64_t bar) {
    Node n = make_node(name, 4000, 10000 * kMiB);
    n.allocatable["intel.com/foo"] = foo;
    n.allocatable["intel.com/bar"] = bar;
    return n;
  };
  const std::vector<Node> nodes = {node("node1", 8, 4), node("node2", 4, 8)};
  auto pod = [](int64_t foo, int64_t bar) { return regular({{{"intel.com/foo", foo}, {"intel.com/bar", bar}}}); };
  EXPECT_EQ(scores(make_pod("p"), nodes, {}, rtcr), (Scores{0, 0})) << "nothing scheduled, nothing requested";
  EXPECT_EQ(scores(pod(2, 2), nodes, {}, rtcr), (Scores{4, 3}))
      << "resources requested, pods scheduled with less resources";
  EXPECT_EQ(scores(pod(2, 2), nodes, {running("e", "node2", {{"intel.com/foo", 4}, {"intel.com/bar", 2}})}, rtcr),
            (Scores{4, 7}))
      << "resources requested, pods scheduled with resources, on node with existing pod running";
  EXPECT_EQ(scores(pod(4, 2), nodes, {}, rtcr), (Scores{5, 5}))
      << "resources requested, pods scheduled with more resources";
}

}  // namespace
}  // namespace bulkscore
