// A pod's resource request as the scheduler computes it (host/pod_resources):
// sidecar and init-container rules, overhead, pod-level requests, and the
// non-zero defaults of the scoring views. Sources: component-helpers
// resource/helpers_test.go (TestPodRequestsAndLimits, TestPodResourceRequests;
// cpu quantities there are cores, here millicores x1000), and v1.35.4's
// framework/types.go (PodInfo.CalculateResource, getNonMissingContainerRequests)
// for the node-side non-zero totals (k8s-semantics.md §2.5).
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "host/input/pod_resources.hpp"
#include "host/snapshot/snapshot.hpp"
#include "tests/test_util.hpp"

namespace bulkscore {
namespace {

using namespace testutil;

constexpr int64_t kDefCpu = kDefaultMilliCpuRequest;
constexpr int64_t kDefMem = kDefaultMemoryRequest;

Container init_container(ResourceList r) { return container(std::move(r)); }

// ---- pod_requests: the Filter view ---------------------------------------------

TEST(PodRequests, LargerInitContainerWins) {
  // TestPodResourceRequests "nil options, larger init container"
  const Pod p = make_pod("p", {container({{"cpu", 1000}})}, {init_container({{"cpu", 4000}})});
  EXPECT_EQ(pod_requests(p), (ResourceList{{"cpu", 4000}}));
}

TEST(PodRequests, LargerContainerSumWins) {
  // TestPodResourceRequests "nil options, larger containers"
  const Pod p =
      make_pod("p", {container({{"cpu", 2000}}), container({{"cpu", 3000}})}, {init_container({{"cpu", 2000}})});
  EXPECT_EQ(pod_requests(p), (ResourceList{{"cpu", 5000}}));
}

TEST(PodRequests, OverheadIsAdded) {
  // TestPodResourceRequests "pod overhead included"
  Pod p = make_pod("p", {container({{"cpu", 2000}}), container({{"cpu", 3000}})}, {init_container({{"cpu", 2000}})});
  p.overhead = {{"cpu", 1000}, {"memory", 1024 * kMiB}};
  EXPECT_EQ(pod_requests(p), (ResourceList{{"cpu", 6000}, {"memory", 1024 * kMiB}}));
}

TEST(PodRequests, OverheadAlone) {
  // TestPodRequestsAndLimits "just-overhead" and "req-and-overhead"
  Pod p = make_pod("p", {container()});
  p.overhead = {{"cpu", 5000}, {"memory", 5}};
  EXPECT_EQ(pod_requests(p), (ResourceList{{"cpu", 5000}, {"memory", 5}}));
  p.containers = {container({{"cpu", 1000}, {"memory", 10}})};
  EXPECT_EQ(pod_requests(p), (ResourceList{{"cpu", 6000}, {"memory", 15}}));
}

TEST(PodRequests, MassiveInitContainerPlusOverhead) {
  // TestPodRequestsAndLimitsWithoutOverhead "two container with overhead,
  // massive init - should just be the largest init" (40/120), plus the
  // overhead (3/8) the Filter view includes.
  Pod p = make_pod("p", {container({{"cpu", 1000}, {"memory", 5}}), container({{"cpu", 4000}, {"memory", 12}})},
                   {init_container({{"cpu", 1000}, {"memory", 5}}), init_container({{"cpu", 40000}, {"memory", 120}})});
  p.overhead = {{"cpu", 3000}, {"memory", 8}};
  EXPECT_EQ(pod_requests(p), (ResourceList{{"cpu", 43000}, {"memory", 128}}));
}

TEST(PodRequests, SidecarAddsToRegularContainers) {
  // TestPodResourceRequests "restartable init container"
  const Pod p = make_pod("p", {container({{"cpu", 1000}})}, {sidecar({{"cpu", 1000}})});
  EXPECT_EQ(pod_requests(p), (ResourceList{{"cpu", 2000}}));
}

TEST(PodRequests, MultipleSidecars) {
  // TestPodResourceRequests "multiple restartable init containers":
  // max(5, 1 + 2 + 3 + 1) = 7.
  const Pod p = make_pod(
      "p", {container({{"cpu", 1000}})},
      {init_container({{"cpu", 5000}}), sidecar({{"cpu", 1000}}), sidecar({{"cpu", 2000}}), sidecar({{"cpu", 3000}})});
  EXPECT_EQ(pod_requests(p), (ResourceList{{"cpu", 7000}}));
}

TEST(PodRequests, InitContainerCountsOnlySidecarsDeclaredBeforeIt) {
  // TestPodResourceRequests "multiple restartable and regular init
  // containers": init-2 needs 5 + (1 + 2) = 8; sidecar 3 starts after it.
  const Pod p = make_pod("p", {container({{"cpu", 1000}})},
                         {init_container({{"cpu", 5000}}), sidecar({{"cpu", 1000}}), sidecar({{"cpu", 2000}}),
                          init_container({{"cpu", 5000}}), sidecar({{"cpu", 3000}})});
  EXPECT_EQ(pod_requests(p), (ResourceList{{"cpu", 8000}}));
}

TEST(PodRequests, SidecarThenInitThenRegular) {
  // TestPodResourceRequests "restartable-init, init and regular": 10 + 200.
  const Pod p =
      make_pod("p", {container({{"cpu", 100000}})}, {sidecar({{"cpu", 10000}}), init_container({{"cpu", 200000}})});
  EXPECT_EQ(pod_requests(p), (ResourceList{{"cpu", 210000}}));
}

TEST(PodRequests, ResourcesAreIndependent) {
  // The max is taken per resource: cpu from the init container, memory from
  // the regular ones.
  const Pod p =
      make_pod("p", {container({{"cpu", 100}, {"memory", 300}})}, {init_container({{"cpu", 500}, {"memory", 10}})});
  EXPECT_EQ(pod_requests(p), (ResourceList{{"cpu", 500}, {"memory", 300}}));
}

TEST(PodRequests, NoContainersNoRequests) { EXPECT_TRUE(pod_requests(make_pod("p")).empty()); }

TEST(PodRequests, ExplicitZeroIsKept) {
  EXPECT_EQ(pod_requests(make_pod("p", {container({{"cpu", 0}})})), (ResourceList{{"cpu", 0}}));
}

TEST(PodRequests, PodLevelReplacesTheContainerAggregate) {
  // PodLevelResources (beta, on): supported names (cpu, memory, hugepages-*)
  // replace the aggregate; others in the pod-level list are ignored; the
  // overhead is added after.
  Pod p = make_pod("p", {container({{"cpu", 100}, {"memory", 50}, {"example.com/x", 2}, {"hugepages-2Mi", 4}})});
  p.pod_level_requests = {{"cpu", 700}, {"hugepages-2Mi", 6}, {"ephemeral-storage", 99}};
  p.overhead = {{"cpu", 10}};
  EXPECT_EQ(pod_requests(p), (ResourceList{{"cpu", 710}, {"memory", 50}, {"example.com/x", 2}, {"hugepages-2Mi", 6}}));
}

TEST(PodRequests, PodLevelWithOnlyUnsupportedNamesIsNotSet) {
  Pod p = make_pod("p", {container({{"cpu", 100}})});
  p.pod_level_requests = {{"ephemeral-storage", 99}};
  EXPECT_EQ(pod_requests(p), (ResourceList{{"cpu", 100}}));
  EXPECT_EQ(pod_requests_nonzero_for_node(p), (ResourceList{{"cpu", 100}, {"memory", kDefMem}}));
}

// ---- non-zero defaults: the scoring views --------------------------------------------

TEST(PodRequestsNonZero, ContainerWithoutRequestsCountsTheDefaults) {
  const Pod p = make_pod("p", {container()});
  EXPECT_EQ(pod_requests_nonzero_for_scoring(p), (ResourceList{{"cpu", kDefCpu}, {"memory", kDefMem}}));
  EXPECT_EQ(pod_requests_nonzero_for_node(p), (ResourceList{{"cpu", kDefCpu}, {"memory", kDefMem}}));
  EXPECT_EQ(kDefCpu, 100);
  EXPECT_EQ(kDefMem, 209715200);
}

TEST(PodRequestsNonZero, ExplicitZeroIsNotDefaulted) {
  const Pod p = make_pod("p", {container({{"cpu", 0}, {"memory", 0}})});
  EXPECT_EQ(pod_requests_nonzero_for_scoring(p), (ResourceList{{"cpu", 0}, {"memory", 0}}));
}

TEST(PodRequestsNonZero, DefaultsArePerContainer) {
  // Two containers, one naming only cpu: memory 2 x 200Mi, cpu 300 + 100.
  const Pod p = make_pod("p", {container({{"cpu", 300}}), container()});
  EXPECT_EQ(pod_requests_nonzero_for_scoring(p), (ResourceList{{"cpu", 400}, {"memory", 2 * kDefMem}}));
}

TEST(PodRequestsNonZero, DefaultsGoThroughTheInitAndSidecarRules) {
  // The init container (100m by default) beats the regular 50m; a sidecar's
  // defaults add to the regular containers.
  const Pod with_init = make_pod("p", {container({{"cpu", 50}})}, {init_container({})});
  EXPECT_EQ(pod_requests_nonzero_for_scoring(with_init), (ResourceList{{"cpu", 100}, {"memory", kDefMem}}));
  const Pod with_sidecar = make_pod("p", {container()}, {sidecar()});
  EXPECT_EQ(pod_requests_nonzero_for_scoring(with_sidecar), (ResourceList{{"cpu", 200}, {"memory", 2 * kDefMem}}));
}

TEST(PodRequestsNonZero, NoContainersHasNoDefaults) {
  EXPECT_TRUE(pod_requests_nonzero_for_scoring(make_pod("p")).empty());
  EXPECT_TRUE(pod_requests_nonzero_for_node(make_pod("p")).empty());
}

TEST(PodRequestsNonZero, NodeViewWithPodLevelDefaultsOnlyWhatIsMissingEverywhere) {
  // Pod-level memory; only the first container names cpu. The node total
  // (getNonMissingContainerRequests) keeps cpu = 100 because cpu is present
  // in the pod's requests; the incoming-pod scorer defaults the second
  // container's cpu before the pod-level override.
  Pod p = make_pod("p", {container({{"cpu", 100}}), container()});
  p.pod_level_requests = {{"memory", 1000}};
  EXPECT_EQ(pod_requests_nonzero_for_node(p), (ResourceList{{"cpu", 100}, {"memory", 1000}}));
  EXPECT_EQ(pod_requests_nonzero_for_scoring(p), (ResourceList{{"cpu", 200}, {"memory", 1000}}));
}

TEST(PodRequestsNonZero, NodeViewWithPodLevelDefaultsAMissingResource) {
  // Pod-level cpu only, no container names memory: memory is missing from
  // the whole request, so every container counts 200Mi.
  Pod p = make_pod("p", {container(), container()});
  p.pod_level_requests = {{"cpu", 500}};
  EXPECT_EQ(pod_requests_nonzero_for_node(p), (ResourceList{{"cpu", 500}, {"memory", 2 * kDefMem}}));
}

TEST(PodRequestsNonZero, NodeViewJudgesMissingWithTheOverheadIncluded) {
  // CalculateResource computes the request (overhead included) first; memory
  // from the overhead makes memory present, so no container default applies.
  Pod p = make_pod("p", {container()});
  p.pod_level_requests = {{"cpu", 500}};
  p.overhead = {{"memory", 10}};
  EXPECT_EQ(pod_requests_nonzero_for_node(p), (ResourceList{{"cpu", 500}, {"memory", 10}}));
}

TEST(PodRequestsNonZero, NodeViewWithPodLevelAndNoContainers) {
  Pod p = make_pod("p");
  p.pod_level_requests = {{"cpu", 500}};
  EXPECT_EQ(pod_requests_nonzero_for_node(p), (ResourceList{{"cpu", 500}}));
}

// ---- the snapshot's per-node totals ----------------------------------------------------

TEST(SnapshotTotals, RequestedAndNonZeroRequestedPerNode) {
  const std::vector<Node> nodes = {make_node("a", 4000, 8 * 1024 * kMiB), make_node("b", 4000, 8 * 1024 * kMiB)};
  const std::vector<Pod> pods = {on_node(make_pod("p1", {container({{"cpu", 300}})}), "a"),
                                 on_node(make_pod("p2", {container()}), "a"), on_node(make_pod("p3"), "b")};
  const Snapshot s = Snapshot::build(nodes, pods);
  const SnapshotView v = s.view();
  EXPECT_EQ(v.req(kCpu, 0), 300);
  EXPECT_EQ(v.req(kMemory, 0), 0);
  EXPECT_EQ(v.nonzero_requested[0], 300 + kDefCpu);    // cpu, node a
  EXPECT_EQ(v.nonzero_requested[2 + 0], kDefMem * 2);  // memory, node a
  EXPECT_EQ(v.nonzero_requested[1], 0);                // a pod without containers counts nothing
  EXPECT_EQ(v.nonzero_requested[2 + 1], 0);
  EXPECT_EQ(v.pod_count[0], 2);
  EXPECT_EQ(v.pod_count[1], 1);
}

// The node totals and the scorer's requests are summed container by
// container, without the lists, for pods whose requests are additive (no
// init containers, no pod-level requests): on random pods of every kind,
// the snapshot's columns after adding and removing them equal the sums of
// pod_requests and pod_requests_nonzero_for_node, NodeResourcesFit's
// shortcut equals pod_requests_nonzero_for_scoring, and the names
// for_each_request_name gives are pod_requests' names.
TEST(SnapshotTotals, ContainerByContainerSumsEqualTheRequestLists) {
  const char* const names[] = {"cpu", "memory", "ephemeral-storage", "example.com/gpu", "hugepages-2Mi", "pods"};
  std::mt19937_64 rng(7);
  const auto pick = [&](uint64_t n) { return static_cast<size_t>(rng() % n); };
  const auto requests = [&] {
    ResourceList r;
    for (const char* name : names)
      if (pick(3) == 0) r[name] = static_cast<int64_t>(pick(4) == 0 ? 0 : pick(5000));
    return r;
  };
  for (int round = 0; round < 300; ++round) {
    std::vector<Node> nodes;
    for (int i = 0; i < 3; ++i) {
      Node n = make_node("n" + std::to_string(i), 64000, 256 * 1024 * kMiB, 110);
      for (const char* name : names) n.allocatable.emplace(name, 1000000);  // every name has its column
      nodes.push_back(std::move(n));
    }
    Snapshot snap = Snapshot::build(nodes, {});
    std::vector<int64_t> want_req(snap.num_resources() * 3, 0), want_nonzero(6, 0);
    std::vector<std::pair<Pod, uint32_t>> placed;
    for (int k = 0; k < 8; ++k) {
      std::vector<Container> cs;
      for (size_t c = pick(4); c > 0; --c) cs.push_back(container(requests()));
      Pod pod = make_pod("p" + std::to_string(k), cs);
      if (pick(4) == 0) pod.overhead = requests();
      if (pick(5) == 0) {
        Container init = container(requests());
        init.restart_policy_always = pick(2) == 0;
        pod.init_containers.push_back(init);
      }
      if (pick(6) == 0) pod.pod_level_requests = requests();
      const ResourceList req = pod_requests(pod);
      std::set<std::string> seen;
      for_each_request_name(pod, [&](const std::string& name) { seen.insert(name); });
      std::set<std::string> keys;
      for (const auto& kv : req) keys.insert(kv.first);
      EXPECT_EQ(seen, keys) << "round " << round << " pod " << k;
      if (requests_are_additive(pod)) {
        const ResourceList nz = pod_requests_nonzero_for_scoring(pod);
        const CpuMemory fast = additive_nonzero_cpu_memory(pod);
        EXPECT_EQ(fast.cpu, nz.count("cpu") ? nz.at("cpu") : 0) << "round " << round << " pod " << k;
        EXPECT_EQ(fast.memory, nz.count("memory") ? nz.at("memory") : 0) << "round " << round << " pod " << k;
      }
      const auto node = static_cast<uint32_t>(pick(3));
      for (const auto& [name, amount] : req)
        if (name != "pods") want_req[static_cast<size_t>(snap.resource_index(name)) * 3 + node] += amount;
      const ResourceList nz = pod_requests_nonzero_for_node(pod);
      want_nonzero[node] += nz.count("cpu") ? nz.at("cpu") : 0;
      want_nonzero[3 + node] += nz.count("memory") ? nz.at("memory") : 0;
      placed.emplace_back(pod, snap.add_pod(Pod(pod), node));
    }
    const auto check = [&](const char* when) {
      const SnapshotView v = snap.view();
      for (uint32_t r = 0; r < snap.num_resources(); ++r)
        for (uint32_t n = 0; n < 3; ++n)
          ASSERT_EQ(v.req(r, n), want_req[r * 3 + n])
              << when << ", round " << round << ": " << snap.resource_name(r) << " on node " << n;
      for (uint32_t i = 0; i < 6; ++i)
        ASSERT_EQ(v.nonzero_requested[i], want_nonzero[i]) << when << ", round " << round << ": non-zero entry " << i;
    };
    check("added");
    for (const auto& [pod, id] : placed) snap.remove_pod(id);
    std::fill(want_req.begin(), want_req.end(), 0);
    std::fill(want_nonzero.begin(), want_nonzero.end(), 0);
    check("removed");
  }
}

}  // namespace
}  // namespace bulkscore
