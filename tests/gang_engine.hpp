// The engines the gang tests run (test_gang.cpp, test_gang_topology.cpp):
// the CPU backend on the caller's thread with the first tie-break, so that
// a reference that places the same pods on another engine decides alike.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "host/engine/engine.hpp"
#include "host/engine/executor.hpp"

namespace bulkscore::testutil {

inline EngineOptions serial_cpu_options(Batching batching = Batching::Exact) {
  EngineOptions opts;
  opts.backend = "cpu";
  opts.tie_break = TieBreak::First;
  opts.batching = batching;
  opts.executor = caller_thread_executor();
  return opts;
}

// An engine loaded with these nodes, running pods and objects.
inline std::unique_ptr<Engine> loaded_engine(const SchedulerConfig& config, const EngineOptions& options,
                                             std::vector<Node> nodes, ClusterObjects objects,
                                             std::vector<Pod> running = {}) {
  auto e = std::make_unique<Engine>(config, options);
  Cluster c;
  c.nodes = std::move(nodes);
  c.running_pods = std::move(running);
  c.objects = std::move(objects);
  static_cast<void>(e->load(c));
  return e;
}

}  // namespace bulkscore::testutil
