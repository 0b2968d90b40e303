// What the engine's metrics (host/engine/scheduler_metrics.hpp) read of
// one pod's plugin work: upstream's UnschedulablePlugins after PreFilter,
// the feasible-set PreScore's time, and, on a sampled cycle (`per_plugin`),
// each plugin's prepare and feasible-set PreScore times and statuses.
// Filled by prepare_pod_query and run_feasible_prescore(_since) when the
// query points at it (PodQuery::plugin_trace). Kept out of PodQuery itself:
// the batch cache's unit sits at GCC's inlining budget, and one more
// member in the query tips it (docs/performance.md).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>

#include "plugins/registry.hpp"

namespace bulkscore {

static_assert(kNumPlugins <= 64, "PluginTrace::unschedulable_plugins has a bit per plugin");

struct PluginTrace {
  using Clock = std::chrono::steady_clock;
  // Upstream's Diagnosis.UnschedulablePlugins as PreFilter leaves it, a bit
  // per plugin id: the plugins whose PreFilterResult restricted the
  // candidates, and the one whose PreFilter rejected the pod (the
  // UnschedulableAndUnresolvable one, else the last Unschedulable one; none
  // when the PreFilterResults were disjoint). Always recorded.
  uint64_t unschedulable_plugins = 0;
  bool per_plugin = false;
  uint32_t prescore_runs = 0;  // feasible-set PreScore passes this cycle (0: none ran)
  Clock::duration prescore{};  // their time
  // per_plugin: by plugin id, its prepare's time and its feasible-set
  // PreScore's, and the outcomes of its prepare as upstream's statuses.
  std::array<Clock::duration, kNumPlugins> prepare{};
  std::array<Clock::duration, kNumPlugins> plugin_prescore{};
  std::array<Code, kNumPlugins> prefilter_status{};
  std::array<Code, kNumPlugins> prescore_status{};

  // Ready for the next cycle.
  void reset(bool sample) {
    unschedulable_plugins = 0;
    per_plugin = sample;
    prescore_runs = 0;
    prescore = {};
    if (sample) {
      prepare.fill({});
      plugin_prescore.fill({});
    }
  }
};

}  // namespace bulkscore
