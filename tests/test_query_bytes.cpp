// The batch cache compares pod queries byte for byte (docs/batching.md), so
// equal pods must give equal bytes whatever the compiler leaves in padding.
// Two guards:
//  * at compile time: no plugin state or arena struct has implicit padding
//    (every plugin header is first included here with -Wpadded an error; a
//    struct that needs alignment spells its padding out as zeroed members);
//  * at run time: the same pod prepared twice, with the stack and the heap
//    dirtied in between, gives identical plugin states and arena bytes.
#include "host/common.hpp"
#include "host/input/config.hpp"
#include "host/input/model.hpp"
#include "host/input/yaml_reader.hpp"
#include "host/snapshot/snapshot.hpp"
#include "plugins/plugin_api.hpp"

#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wpadded"
#include "plugins/image_locality.hpp"
#include "plugins/inter_pod_affinity.hpp"
#include "plugins/node_affinity.hpp"
#include "plugins/node_data.hpp"
#include "plugins/node_name.hpp"
#include "plugins/node_ports.hpp"
#include "plugins/node_resources_balanced_allocation.hpp"
#include "plugins/node_resources_fit.hpp"
#include "plugins/node_unschedulable.hpp"
#include "plugins/pod_topology_spread.hpp"
#include "plugins/seam_probe.hpp"
#include "plugins/taint_toleration.hpp"
#include "plugins/topology_tables.hpp"
#include "plugins/workload_type.hpp"
#pragma GCC diagnostic pop

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "host/engine/pod_query.hpp"
#include "tests/random_cluster.hpp"

namespace bulkscore {
namespace {

using namespace testutil;  // NOLINT(google-build-using-namespace): the random clusters

// Leaves 0xA5 bytes where the next stack frames and heap blocks will be.
__attribute__((noinline)) void dirty_stack_and_heap() {
  volatile unsigned char stack[64 * 1024];
  for (size_t i = 0; i < sizeof stack; ++i) stack[i] = 0xA5;
  std::vector<std::unique_ptr<unsigned char[]>> blocks;
  for (size_t size = 16; size <= 64 * 1024; size *= 2) {
    blocks.emplace_back(new unsigned char[size]);
    std::memset(blocks.back().get(), 0xA5, size);
  }
}

TEST(QueryBytes, EqualPodsGiveEqualBytes) {
  SplitMix64 rng = SplitMix64::derive(parity_seed() ^ 0xb17e5ull, 1);
  Cluster cluster = random_cluster(rng, ClusterShape{60, 80, 0.05}, scheduler_names());
  Snapshot snap = Snapshot::build(cluster.nodes, cluster.running_pods);
  std::vector<ProfilePlan> plans;
  for (const auto& p : parity_config().profiles) plans.push_back(make_profile_plan(p));
  size_t compared = 0;
  for (const Pod& pod : cluster.pending_pods) {
    const ProfilePlan* plan = nullptr;
    for (const auto& p : plans)
      if (p.config.scheduler_name == pod.scheduler_name) plan = &p;
    ASSERT_NE(plan, nullptr);
    intern_pod_for_plan(snap, pod, *plan, &cluster.objects);
    const PodQuery a = prepare_pod_query(pod, snap, *plan, TieBreak::First, 1, &cluster.objects);
    dirty_stack_and_heap();
    Pod twin = pod;
    twin.name += "-twin";
    const PodQuery b = prepare_pod_query(twin, snap, *plan, TieBreak::First, 1, &cluster.objects);
    ASSERT_EQ(a.arena.size(), b.arena.size()) << pod.key();
    EXPECT_EQ(std::memcmp(a.arena.data(), b.arena.data(), a.arena.size()), 0) << pod.key();
    for (uint8_t id = 0; id < kNumPlugins; ++id)
      visit_plugin(id, [&](auto p) {
        using P = decltype(p);
        // GpuRandomFit draws its node from the pod's name, by design: two
        // pods never share its draw, so the batch cache never reuses one.
        if constexpr (std::is_same_v<P, plugins::GpuRandomFit>) {
          const bool used = std::find(plan->score.begin(), plan->score.end(), id) != plan->score.end();
          if (used) {
            EXPECT_NE(state_of<P>(a.header.states).draw, state_of<P>(b.header.states).draw) << pod.key();
          }
          return;
        }
        EXPECT_EQ(std::memcmp(&state_of<P>(a.header.states), &state_of<P>(b.header.states), sizeof(typename P::State)),
                  0)
            << P::kName << ", " << pod.key();
      });
    ++compared;
  }
  EXPECT_EQ(compared, cluster.pending_pods.size());
}

}  // namespace
}  // namespace bulkscore
