// WorkloadType (bulkscore's own plugin, docs/plugins.md) PreFilter and
// Filter on hand-made clusters: CPU-intensive pods need the configured
// allocatable cpu, GPU-intensive pods a positive allocatable of one of the
// configured GPU resources, every other pod skips the plugin. Then the
// FitError message through the Engine, and the plugin being off by default.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "host/engine/engine.hpp"
#include "tests/test_util.hpp"

namespace bulkscore {
namespace {

using namespace testutil;

const char* const kPlugin = "WorkloadType";
constexpr int64_t kGiB = 1024 * kMiB;
const NodeFilterResult kNotEnoughCpu{Code::UnschedulableAndUnresolvable,
                                     {"node(s) didn't have enough CPU for a CPU-intensive pod"}};
const NodeFilterResult kNoGpu{Code::UnschedulableAndUnresolvable,
                              {"node(s) didn't have a GPU for a GPU-intensive pod"}};

Pod labelled_pod(StringMap labels, const std::string& name = "incoming") {
  Pod p = make_pod(name, {container({{"cpu", 100}})});
  p.labels = std::move(labels);
  return p;
}

Pod workload(const std::string& value, const std::string& name = "incoming") {
  return labelled_pod({{"workload-type", value}}, name);
}

Node gpu_node(const std::string& name, int64_t cpu_milli, int64_t gpus,
              const std::string& resource = "nvidia.com/gpu") {
  Node n = make_node(name, cpu_milli, 8 * kGiB);
  n.allocatable[resource] = gpus;
  return n;
}

ProfileConfig with_args(WorkloadTypeArgs args) {
  ProfileConfig p;
  p.workload_type_args = std::move(args);
  return p;
}

// ---- CPU-intensive ------------------------------------------------------------

TEST(WorkloadTypeFilter, CpuIntensivePodNeedsTheThresholdOfAllocatableCpu) {
  // Allocatable, not free: the running pod on "big" does not matter.
  const std::vector<Node> nodes = {make_node("small", 1000, kGiB), make_node("edge", 1999, kGiB),
                                   make_node("exact", 2000, kGiB), make_node("big", 8000, kGiB)};
  const std::vector<Pod> running_pods = {running("busy", "big", {{"cpu", 7500}})};
  const FilterRun r = run_filter(kPlugin, nodes, running_pods, workload("CPU-intensive"));
  EXPECT_EQ(r.prefilter, Code::Success);
  EXPECT_EQ(r.nodes.at(0), kNotEnoughCpu);
  EXPECT_EQ(r.nodes.at(1), kNotEnoughCpu);
  EXPECT_EQ(r.nodes.at(2), fits()) << "a node at exactly the threshold passes";
  EXPECT_EQ(r.nodes.at(3), fits());
}

TEST(WorkloadTypeFilter, CpuIntensivePodIgnoresGpus) {
  const std::vector<Node> nodes = {gpu_node("gpu-small", 1000, 4), make_node("cpu-big", 4000, kGiB)};
  const FilterRun r = run_filter(kPlugin, nodes, {}, workload("CPU-intensive"));
  EXPECT_EQ(r.nodes.at(0), kNotEnoughCpu);
  EXPECT_EQ(r.nodes.at(1), fits());
}

TEST(WorkloadTypeFilter, CustomThresholdIncludingZero) {
  const std::vector<Node> nodes = {make_node("a", 500, kGiB), make_node("b", 1500, kGiB),
                                   make_node_with("no-cpu", {{"memory", kGiB}, {"pods", 10}})};
  WorkloadTypeArgs args;
  args.cpu_threshold_milli = 1500;
  FilterRun r = run_filter(kPlugin, nodes, {}, workload("CPU-intensive"), with_args(args));
  EXPECT_EQ(r.nodes.at(0), kNotEnoughCpu);
  EXPECT_EQ(r.nodes.at(1), fits());
  EXPECT_EQ(r.nodes.at(2), kNotEnoughCpu) << "a node without cpu has 0 allocatable";

  args.cpu_threshold_milli = 0;
  r = run_filter(kPlugin, nodes, {}, workload("CPU-intensive"), with_args(args));
  for (size_t i = 0; i < nodes.size(); ++i) EXPECT_EQ(r.nodes.at(i), fits()) << nodes[i].name;
}

// ---- GPU-intensive ------------------------------------------------------------

TEST(WorkloadTypeFilter, GpuIntensivePodNeedsAGpuNode) {
  // Allocatable > 0, whatever is in use: a node whose GPUs are all taken is
  // still a GPU node (NodeResourcesFit decides whether the pod fits there).
  const std::vector<Node> nodes = {make_node("cpu-only", 16000, kGiB), gpu_node("gpu", 1000, 2),
                                   gpu_node("gpu-zero", 16000, 0), gpu_node("gpu-busy", 1000, 1)};
  const std::vector<Pod> running_pods = {running("busy", "gpu-busy", {{"nvidia.com/gpu", 1}})};
  const FilterRun r = run_filter(kPlugin, nodes, running_pods, workload("GPU-intensive"));
  EXPECT_EQ(r.prefilter, Code::Success);
  EXPECT_EQ(r.nodes.at(0), kNoGpu);
  EXPECT_EQ(r.nodes.at(1), fits());
  EXPECT_EQ(r.nodes.at(2), kNoGpu) << "an advertised resource of 0 is no GPU";
  EXPECT_EQ(r.nodes.at(3), fits());
}

TEST(WorkloadTypeFilter, GpuResourceNoNodeHasFailsEveryNode) {
  const std::vector<Node> nodes = {make_node("a", 4000, kGiB), gpu_node("b", 4000, 1, "amd.com/gpu")};
  const FilterRun r = run_filter(kPlugin, nodes, {}, workload("GPU-intensive"));
  EXPECT_EQ(r.prefilter, Code::Success);
  EXPECT_EQ(r.nodes.at(0), kNoGpu);
  EXPECT_EQ(r.nodes.at(1), kNoGpu) << "amd.com/gpu is not among the default resource names";
}

TEST(WorkloadTypeFilter, AnyOfSeveralGpuResourcesCounts) {
  const std::vector<Node> nodes = {gpu_node("nvidia", 1000, 1), gpu_node("amd", 1000, 1, "amd.com/gpu"),
                                   gpu_node("other", 1000, 1, "example.com/fpga"), make_node("none", 1000, kGiB)};
  WorkloadTypeArgs args;
  args.gpu_resource_names = {"unknown.example/gpu", "amd.com/gpu", "nvidia.com/gpu"};
  const FilterRun r = run_filter(kPlugin, nodes, {}, workload("GPU-intensive"), with_args(args));
  EXPECT_EQ(r.nodes.at(0), fits());
  EXPECT_EQ(r.nodes.at(1), fits());
  EXPECT_EQ(r.nodes.at(2), kNoGpu);
  EXPECT_EQ(r.nodes.at(3), kNoGpu);
}

// ---- other pods -----------------------------------------------------------------

TEST(WorkloadTypeFilter, OtherPodsSkipThePlugin) {
  const std::vector<Node> nodes = {make_node("small", 500, kGiB), make_node("no-gpu", 500, kGiB)};
  const std::vector<Pod> pods = {
      labelled_pod({}),                                                // no label at all
      labelled_pod({{"app", "web"}}),                                  // other labels only
      workload("memory-intensive"),                                    // another value
      workload("cpu-intensive"),                                       // values match exactly, case included
      workload(""),                                                    // an empty value
      labelled_pod({{"example.com/workload-type", "GPU-intensive"}}),  // another key
  };
  for (const Pod& pod : pods) {
    SCOPED_TRACE(pod.labels.empty() ? "no labels" : pod.labels.begin()->first + "=" + pod.labels.begin()->second);
    const FilterRun r = run_filter(kPlugin, nodes, {}, pod);
    EXPECT_EQ(r.prefilter, Code::Skip);
    for (size_t i = 0; i < nodes.size(); ++i) EXPECT_EQ(r.nodes.at(i), fits());
  }
}

TEST(WorkloadTypeFilter, CustomLabelKeyAndValues) {
  const std::vector<Node> nodes = {make_node("small", 1000, kGiB), gpu_node("gpu", 1000, 1),
                                   make_node("big", 4000, kGiB)};
  WorkloadTypeArgs args;
  args.label_key = "example.com/profile";
  args.cpu_intensive_value = "compute";
  args.gpu_intensive_value = "training";

  FilterRun r = run_filter(kPlugin, nodes, {}, labelled_pod({{"example.com/profile", "compute"}}), with_args(args));
  EXPECT_EQ(r.prefilter, Code::Success);
  EXPECT_EQ(r.nodes.at(0), kNotEnoughCpu);
  EXPECT_EQ(r.nodes.at(1), kNotEnoughCpu);
  EXPECT_EQ(r.nodes.at(2), fits());

  r = run_filter(kPlugin, nodes, {}, labelled_pod({{"example.com/profile", "training"}}), with_args(args));
  EXPECT_EQ(r.nodes.at(0), kNoGpu);
  EXPECT_EQ(r.nodes.at(1), fits());
  EXPECT_EQ(r.nodes.at(2), kNoGpu);

  // The default key and values mean nothing under these args.
  r = run_filter(kPlugin, nodes, {}, workload("GPU-intensive"), with_args(args));
  EXPECT_EQ(r.prefilter, Code::Skip);
  r = run_filter(kPlugin, nodes, {}, labelled_pod({{"example.com/profile", "GPU-intensive"}}), with_args(args));
  EXPECT_EQ(r.prefilter, Code::Skip);
}

// ---- through the Engine -----------------------------------------------------------

ProfileConfig default_profile_with_workload_type() {
  ProfileConfig p = default_scheduler_config().profiles.at(0);
  p.pre_filter.push_back(kPlugin);
  p.filter.push_back(kPlugin);
  return p;
}

std::unique_ptr<Engine> engine_for(const std::vector<Node>& nodes, ProfileConfig profile) {
  SchedulerConfig config;
  config.profiles.push_back(std::move(profile));
  EngineOptions opts;
  opts.backend = "cpu";
  auto e = std::make_unique<Engine>(config, opts);
  Cluster c;
  c.nodes = nodes;
  e->load(c);
  return e;
}

TEST(WorkloadTypeEngine, FitErrorNamesTheMissingGpu) {
  const std::vector<Node> nodes = {make_node("a", 4000, 8 * kGiB), make_node("b", 4000, 8 * kGiB),
                                   make_node("c", 4000, 8 * kGiB)};
  auto e = engine_for(nodes, default_profile_with_workload_type());
  const ScheduleResult r = e->schedule(workload("GPU-intensive"));
  EXPECT_EQ(r.node, -1);
  // A FitError is Unschedulable whatever its nodes' codes (theirs are
  // UnschedulableAndUnresolvable, see WorkloadTypeFilter above).
  EXPECT_EQ(r.code, Code::Unschedulable);
  EXPECT_EQ(r.message, "0/3 nodes are available: 3 node(s) didn't have a GPU for a GPU-intensive pod."
                       " no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.");
}

TEST(WorkloadTypeEngine, FitErrorCountsEachPluginsNodes) {
  // The small node fails NodeResourcesFit first (the default plugins run
  // before WorkloadType); the other two fail WorkloadType.
  const std::vector<Node> nodes = {make_node("tiny", 50, 8 * kGiB), make_node("a", 1000, 8 * kGiB),
                                   make_node("b", 1000, 8 * kGiB)};
  auto e = engine_for(nodes, default_profile_with_workload_type());
  const ScheduleResult r = e->schedule(workload("CPU-intensive"));
  EXPECT_EQ(r.node, -1);
  EXPECT_EQ(r.message,
            "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't have enough CPU for a CPU-intensive pod."
            " no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.");
}

TEST(WorkloadTypeEngine, PlacesOnTheOnlyCapableNode) {
  const std::vector<Node> nodes = {make_node("a", 4000, 8 * kGiB), gpu_node("g", 4000, 1),
                                   make_node("b", 4000, 8 * kGiB)};
  auto e = engine_for(nodes, default_profile_with_workload_type());
  const ScheduleResult r = e->schedule(workload("GPU-intensive"));
  EXPECT_EQ(r.node_name, "g");
  EXPECT_EQ(r.feasible_nodes, 1u);
}

TEST(WorkloadTypeEngine, OffInTheDefaultConfiguration) {
  const ProfileConfig p = default_scheduler_config().profiles.at(0);
  for (const auto* list : {&p.pre_filter, &p.filter, &p.pre_score}) {
    for (const std::string& name : *list) EXPECT_NE(name, kPlugin);
  }
  auto e = engine_for({make_node("a", 500, 8 * kGiB)}, p);
  EXPECT_EQ(e->schedule(workload("GPU-intensive", "gpu-pod")).node_name, "a");
  EXPECT_EQ(e->schedule(workload("CPU-intensive", "cpu-pod")).node_name, "a");
}

}  // namespace
}  // namespace bulkscore
