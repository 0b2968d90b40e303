// kube-scheduler's own metrics, with upstream's names, labels and buckets
// (pkg/scheduler/metrics, v1.35.4), as the engine measures them: counts of
// scheduling attempts, their durations, the extension points' and (sampled)
// the plugins' durations, the pods left unschedulable and by which plugins.
// Engine::metrics() returns them as a SchedulerMetrics (host memory, a copy);
// Engine::metrics_text() in Prometheus text format, with the batch cache's
// counters. docs/library.md ("Metrics") says what each one covers here.
//
// Durations are seconds on std::chrono::steady_clock, the only part of the
// metrics that depends on the backend, the machine or the load; the counts
// of attempts, observations and pods are the same on every backend.
#pragma once

#include <array>
#include <bitset>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "host/engine/batch_cache.hpp"
#include "host/engine/plugin_trace.hpp"
#include "plugins/registry.hpp"

namespace bulkscore {

// A histogram as Prometheus keeps one: observations (seconds) counted in
// buckets by upper bound.
struct Histogram {
  std::vector<double> upper_bounds;  // the buckets' `le`, ascending; +Inf is implied after the last
  // Observations per bucket, not cumulative: buckets[i] counts those in
  // (upper_bounds[i-1], upper_bounds[i]]; one more entry than upper_bounds,
  // the last counting those above every bound.
  std::vector<uint64_t> buckets;
  uint64_t count = 0;
  double sum = 0;  // seconds
  // Observations at or below upper_bounds[i] (Prometheus's _bucket{le});
  // i == upper_bounds.size() is +Inf, equal to `count`.
  uint64_t cumulative(size_t i) const;
};

// Upstream's bucket layouts: component-base's ExponentialBuckets(start,
// factor, count), each bound the previous one times the factor.
std::vector<double> exponential_buckets(double start, double factor, int count);

// scheduler_schedule_attempts_total's `result`.
enum class AttemptResult : uint8_t {
  kScheduled,      // a node was chosen and the pod assumed there
  kUnschedulable,  // no node fits (a FitError), or the cluster has no nodes
  kError,          // the cycle failed (a PreScore error, an exception out of schedule())
};
inline constexpr size_t kNumAttemptResults = 3;
const char* attempt_result_name(AttemptResult r);  // "scheduled", "unschedulable", "error"

// The extension points the engine times (the `extension_point` label).
// Filter, Score and NormalizeScore run fused in the backends (the CUDA
// backend in one kernel): kFilter covers all three, and no separate Score
// or NormalizeScore duration exists (docs/library.md, "Metrics").
enum class ExtensionPoint : uint8_t {
  kPreFilter,   // the pod's host-side setup: every plugin's prepare (PreFilter and PreScore)
  kFilter,      // Filter + Score + NormalizeScore + selection: the backend's pass or the batch cache's answer
  kPreScore,    // the PreScore work that needs the feasible nodes (host), when a plugin has some
  kPostFilter,  // after a FitError, the profile's PostFilter plugins (DefaultPreemption)
};
inline constexpr size_t kNumExtensionPoints = 4;
const char* extension_point_name(ExtensionPoint p);  // "PreFilter", "Filter", "PreScore", "PostFilter"
inline constexpr size_t kNumCodes = 7;               // Code's values (plugins/plugin_api.hpp)

// Upstream's sample of plugin durations: a scheduling cycle times its
// plugins with this probability (pluginMetricsSamplePercent).
inline constexpr uint32_t kDefaultPluginMetricsSamplePercent = 10;

struct SchedulerMetrics {
  // Per profile, in the configuration's order.
  struct Profile {
    std::string name;  // schedulerName
    // scheduler_schedule_attempts_total{result, profile}, by AttemptResult.
    std::array<uint64_t, kNumAttemptResults> attempts{};
    // scheduler_scheduling_attempt_duration_seconds{result, profile}: each
    // schedule() call that was an attempt, from its start to its return.
    std::array<Histogram, kNumAttemptResults> attempt_duration;
  };
  // scheduler_framework_extension_point_duration_seconds{extension_point,
  // status, profile}: the series observed at least once.
  struct ExtensionPointSeries {
    std::string profile;
    ExtensionPoint extension_point = ExtensionPoint::kPreFilter;
    Code status = Code::Success;
    Histogram duration;
  };
  // scheduler_plugin_execution_duration_seconds{plugin, extension_point,
  // status}: the host-side work of each plugin, on the sampled attempts.
  struct PluginSeries {
    std::string plugin;
    ExtensionPoint extension_point = ExtensionPoint::kPreFilter;
    Code status = Code::Success;
    Histogram duration;
  };
  // scheduler_unschedulable_pods{plugin, profile}: pending pods whose last
  // attempt this plugin rejected (a pod counts under each of its plugins).
  struct UnschedulablePlugin {
    std::string plugin;
    std::string profile;
    uint64_t pods = 0;
  };

  std::vector<Profile> profiles;
  std::vector<ExtensionPointSeries> extension_points;  // by profile, extension point, status
  std::vector<PluginSeries> plugins;                   // by plugin id, extension point, status
  uint32_t plugin_sample_percent = kDefaultPluginMetricsSamplePercent;
  // Every (plugin, profile) that has counted a pod, zeros included.
  std::vector<UnschedulablePlugin> unschedulable_pods;
  // scheduler_pending_pods{queue}: the pods whose last attempt failed and
  // that were not given to schedule() again, assumed, added or removed since
  // (Engine::remove_pending_pod), where upstream's queue would keep them:
  // "unschedulable" when plugins rejected them, "backoff" otherwise (an
  // error, or no nodes).
  uint64_t pending_unschedulable = 0;
  uint64_t pending_backoff = 0;
  // The batch cache's counters by profile (Engine::batch_counters_by_profile).
  std::vector<std::pair<std::string, BatchCounters>> batch;
  // bulkscore_build_info{version, backends}.
  std::string version;
  std::vector<std::string> backends;  // compiled_backends()
};

// The Prometheus text exposition (format 0.0.4) of `m`: the families
// above in that order, bulkscore_build_info, then batch_metrics_text's.
// Floats (`le`, `_sum`) are written as Go's strconv 'g' writes them, so the
// bucket bounds read as upstream's (le="1.5000000000000002e-05").
std::string scheduler_metrics_text(const SchedulerMetrics& m);

// A float as Go's strconv.FormatFloat(v, 'g', -1, 64), with +Inf, -Inf
// and NaN as Prometheus writes them.
std::string format_go_float(double v);

// ---- the engine's recorder (host/engine/engine.cpp) ---------------------------------
//
// Fixed arrays by profile, extension point and status: recording an
// observation allocates nothing. Pending pods are kept by cache key.
class MetricsRecorder {
 public:
  using Clock = std::chrono::steady_clock;
  using PluginSet = std::bitset<kNumPlugins>;

  MetricsRecorder(std::vector<std::string> profiles, uint32_t plugin_sample_percent, uint64_t seed);

  // Whether scheduling cycle `cycle` times its plugins (a seeded draw,
  // plugin_sample_percent of the cycles; reproducible).
  bool sampled(uint64_t cycle) const;

  void attempt(size_t profile, AttemptResult r, Clock::duration d);
  // A scheduled attempt whose placement was then undone (a gang rejected
  // at Permit): counted as unschedulable, as upstream counts a pod that
  // Permit rejects. The attempt's duration stays where it was observed.
  void unschedule_attempt(size_t profile);
  void extension_point(size_t profile, ExtensionPoint p, Code status, Clock::duration d);
  void plugin(uint8_t plugin, ExtensionPoint p, Code status, Clock::duration d);

  // The pod is attempted again, assumed, added or removed: its last
  // failure leaves the pending and unschedulable counts (upstream's queue
  // pop and delete). Returns whether it was counted.
  bool leave(std::string_view key);
  // The pod's attempt failed: counted as pending, under each plugin of
  // `rejectors` when there are some (upstream's unschedulable pods), else as
  // backing off.
  void failed(const std::string& key, size_t profile, const PluginSet& rejectors);
  bool has_pending() const { return !pending_.empty(); }

  SchedulerMetrics snapshot() const;

 private:
  static constexpr size_t kAttemptBuckets = 15;    // ExponentialBuckets(0.001, 2, 15)
  static constexpr size_t kExtensionBuckets = 12;  // ExponentialBuckets(0.0001, 2, 12)
  static constexpr size_t kPluginBuckets = 20;     // ExponentialBuckets(0.00001, 1.5, 20)
  template <size_t N>
  struct Counts {
    std::array<uint64_t, N + 1> buckets{};
    uint64_t count = 0;
    double sum = 0;
    void observe(const std::array<double, N>& bounds, double v);
    Histogram histogram(const std::array<double, N>& bounds) const;
  };
  struct ProfileCounts {
    std::array<uint64_t, kNumAttemptResults> attempts{};
    std::array<Counts<kAttemptBuckets>, kNumAttemptResults> attempt_duration;
    std::array<Counts<kExtensionBuckets>, kNumExtensionPoints * kNumCodes> extension_points;
  };
  struct Pending {
    uint32_t profile = 0;
    PluginSet plugins;  // none: backing off
  };

  std::vector<std::string> names_;
  uint32_t sample_percent_;
  uint64_t seed_;
  std::array<double, kAttemptBuckets> attempt_bounds_{};
  std::array<double, kExtensionBuckets> extension_bounds_{};
  std::array<double, kPluginBuckets> plugin_bounds_{};
  std::vector<ProfileCounts> profiles_;
  std::vector<Counts<kPluginBuckets>> plugins_;  // [(plugin * points + point) * codes + code]
  std::unordered_map<std::string, Pending> pending_;
  std::vector<uint64_t> unschedulable_;  // [profile * kNumPlugins + plugin]: pending pods it rejected
  std::vector<uint8_t> touched_;         // same index: the series has counted a pod
  uint64_t pending_unschedulable_ = 0, pending_backoff_ = 0;
};

}  // namespace bulkscore
