// The embedding example of docs/library.md, on a generated cluster: it must
// keep compiling and doing what the document says.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "bench/generator/generator.hpp"
#include "host/engine/engine.hpp"
#include "host/input/config.hpp"
#include "host/input/k8s_json.hpp"

using namespace bulkscore;

TEST(LibraryExample, LoadScheduleExplain) {
  GeneratorOptions g;
  g.nodes = 200;
  g.running_pods = 300;
  g.pending_pods = 60;
  g.seed = 7;
  const std::string dir = ::testing::TempDir();
  const std::string nodes_path = dir + "/lib-nodes.json", pods_path = dir + "/lib-pods.json";
  write_generated_cluster(g, nodes_path, pods_path);

  SchedulerConfig config = default_scheduler_config();
  Cluster cluster = assemble_cluster(load_nodes_json(nodes_path), load_pods_json(pods_path), {"default-scheduler"},
                                     nodes_path, pods_path);
  ASSERT_EQ(cluster.nodes.size(), 200u);
  ASSERT_EQ(cluster.pending_pods.size(), 60u);

  EngineOptions options;
  options.backend = "cpu";
  options.tie_break = TieBreak::First;
  Engine engine(config, options);
  engine.load(cluster);

  // Explain first (nothing assumed), then schedule: the explained choice is
  // the scheduled one for the first pod.
  const Explanation ex = engine.explain(cluster.pending_pods.front());
  ASSERT_EQ(ex.nodes.size(), 200u);
  size_t placed = 0;
  std::string first_node;
  for (const Pod& pod : cluster.pending_pods) {
    const ScheduleResult r = engine.schedule(pod);
    if (r.node >= 0) {
      ++placed;
      EXPECT_EQ(r.node_name, engine.snapshot().node_name(static_cast<uint32_t>(r.node)));
      EXPECT_GT(r.feasible_nodes, 0u);
    } else {
      EXPECT_EQ(r.message.rfind("0/200 nodes are available:", 0), 0u) << r.message;
    }
    if (first_node.empty()) first_node = r.node >= 0 ? r.node_name : "-";
  }
  EXPECT_GT(placed, 0u);
  EXPECT_EQ(ex.chosen, first_node);
  EXPECT_EQ(ex.batch, "no_state");  // explained before anything was scheduled

  // The batch cache's counters: every pod that reached Filter is counted
  // once, hit or not (a pod PreFilter rejects is not).
  const BatchCounters all = engine.batch_counters();
  EXPECT_GT(all.hint_used + all.no_hint, 0u);
  EXPECT_LE(all.hint_used + all.no_hint, cluster.pending_pods.size());
  EXPECT_NE(batch_metrics_text(engine.batch_counters_by_profile()).find("scheduler_batch_attempts_total"),
            std::string::npos);
}
