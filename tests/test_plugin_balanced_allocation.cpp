// NodeResourcesBalancedAllocation, v1.35.4's formula int64((1 - std) * 100),
// with the expected values of upstream's
// pkg/scheduler/framework/plugins/noderesources/balanced_allocation_test.go
// (TestNodeResourcesBalancedAllocation) as of 1.33/1.34, which v1.35.4 still
// matches. The 2026 master formula (50 + (50 + S_with - S_without) / 2) and
// its numbers are not v1.35.4 and are not used here.
#include <gtest/gtest.h>

#include "tests/test_util.hpp"

namespace bulkscore {
namespace {

using namespace testutil;

const char* const kPlugin = "NodeResourcesBalancedAllocation";
const char* const kGpu = "nvidia.com/gpu";
using Scores = std::vector<int64_t>;

// Upstream's pod specs: cpuOnly, cpuAndMemory, cpuAndMemoryAndGPU.
std::vector<Container> cpu_only() {
  return {container({{"cpu", 1000}, {"memory", 0}}), container({{"cpu", 2000}, {"memory", 0}})};
}
std::vector<Container> cpu_and_memory() {
  return {container({{"cpu", 1000}, {"memory", 2000}}), container({{"cpu", 2000}, {"memory", 3000}})};
}
std::vector<Container> cpu_memory_gpu() {
  auto c = cpu_and_memory();
  c.push_back(container({{kGpu, 3}}));
  return c;
}

Pod incoming(std::vector<Container> containers) { return make_pod("incoming", std::move(containers)); }
Pod placed(const std::string& name, const std::string& node, std::vector<Container> containers) {
  return on_node(make_pod(name, std::move(containers)), node);
}

Node node_with_gpu(const std::string& name, int64_t cpu, int64_t memory, int64_t gpu) {
  Node n = make_node(name, cpu, memory);
  if (gpu) n.allocatable[kGpu] = gpu;
  return n;
}

ProfileConfig with_gpu_resource() {
  ProfileConfig p;
  p.balanced_args.resources = {{"cpu", 1}, {"memory", 1}, {kGpu, 1}};
  return p;
}

Scores score(const Pod& pod, const std::vector<Node>& nodes, const std::vector<Pod>& pods,
             const ProfileConfig& profile = {}) {
  const ScoreRun r = run_score(kPlugin, nodes, pods, pod, profile);
  EXPECT_FALSE(r.skipped);
  EXPECT_EQ(r.raw, r.normalized) << "BalancedAllocation has no NormalizeScore";
  return r.normalized;
}

TEST(BalancedAllocationScore, NothingRequestedSkipsPreScore) {
  // "nothing scheduled, nothing requested, skip in PreScore"
  const ScoreRun r =
      run_score(kPlugin, {make_node("node1", 4000, 10000), make_node("node2", 4000, 10000)}, {}, incoming({}));
  EXPECT_TRUE(r.skipped);
}

TEST(BalancedAllocationScore, ExplicitZeroRequestsAlsoSkip) {
  // Best-effort pods skip whatever their containers say: the actual request
  // (no non-zero defaults) is 0 for cpu and memory.
  const ScoreRun r = run_score(kPlugin, {make_node("node1", 4000, 10000)}, {},
                               incoming({container(), container({{"cpu", 0}, {"memory", 0}})}));
  EXPECT_TRUE(r.skipped);
}

TEST(BalancedAllocationScore, DifferentlySizedNodes) {
  // "nothing scheduled, resources requested, differently sized nodes"
  EXPECT_EQ(score(incoming(cpu_and_memory()), {make_node("node1", 4000, 10000), make_node("node2", 6000, 10000)}, {}),
            (Scores{87, 100}));
}

TEST(BalancedAllocationScore, PodsScheduledWithResources) {
  // "resources requested, pods scheduled with resources"
  const std::vector<Pod> pods = {placed("a", "node1", cpu_only()), placed("b", "node2", cpu_and_memory())};
  EXPECT_EQ(
      score(incoming(cpu_and_memory()), {make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)}, pods),
      (Scores{82, 95}));
}

TEST(BalancedAllocationScore, PodsScheduledOnDifferentlySizedNodes) {
  // "resources requested, pods scheduled with resources, differently sized nodes"
  const std::vector<Pod> pods = {placed("a", "node1", cpu_only()), placed("b", "node2", cpu_and_memory())};
  EXPECT_EQ(
      score(incoming(cpu_and_memory()), {make_node("node1", 10000, 20000), make_node("node2", 10000, 50000)}, pods),
      (Scores{82, 80}));
}

TEST(BalancedAllocationScore, RequestsAtNodeCapacity) {
  // "requested resources at node capacity"
  const std::vector<Pod> pods = {placed("a", "node1", cpu_only()), placed("b", "node2", cpu_and_memory())};
  EXPECT_EQ(score(incoming(cpu_only()), {make_node("node1", 6000, 10000), make_node("node2", 6000, 10000)}, pods),
            (Scores{50, 75}));
}

TEST(BalancedAllocationScore, ScalarResourceOnTheNodes) {
  // "include scalar resource on a node for balanced resource allocation":
  // three fractions, population standard deviation.
  const Pod pod = incoming({container({{"memory", 0}, {kGpu, 1}})});
  const std::vector<Node> nodes = {node_with_gpu("node1", 3500, 40000, 8), node_with_gpu("node2", 3500, 40000, 8)};
  const std::vector<Pod> pods = {placed("a", "node2", cpu_and_memory()), placed("b", "node1", cpu_memory_gpu())};
  EXPECT_EQ(score(pod, nodes, pods, with_gpu_resource()), (Scores{70, 65}));
}

TEST(BalancedAllocationScore, NodeWithoutTheScalarResourceSkipsIt) {
  // "node without the scalar resource should skip the scalar resource"
  const std::vector<Node> nodes = {node_with_gpu("node1", 3500, 40000, 8), node_with_gpu("node2", 3500, 40000, 0)};
  EXPECT_EQ(score(incoming(cpu_and_memory()), nodes, {}, with_gpu_resource()), (Scores{63, 63}));
}

TEST(BalancedAllocationScore, MinAndMaxScores) {
  // "nodes to reach min and max score" (a 2026 master case; its numbers,
  // 100 and 50, are the v1.35.4 formula's too).
  const Pod pod = incoming({container({{"memory", 2000}}), container({{"memory", 3000}})});
  const std::vector<Pod> pods = {placed("a", "node1", cpu_only())};
  EXPECT_EQ(score(pod, {make_node("node1", 3000, 5000), make_node("node2", 3000, 5000)}, pods), (Scores{100, 50}));
}

TEST(BalancedAllocationScore, UsesActualRequestsNotNonZeroDefaults) {
  // A container without requests counts 0 here (Fit's scorer would count
  // 100m / 200Mi): node1 stays at cpu 1000/4000 and memory 0.
  const std::vector<Pod> pods = {placed("a", "node1", {container()}), placed("b", "node1", {container()})};
  const Pod pod = incoming({container({{"cpu", 1000}, {"memory", 0}})});
  EXPECT_EQ(score(pod, {make_node("node1", 4000, 10000)}, pods), (Scores{87}));
}

}  // namespace
}  // namespace bulkscore
