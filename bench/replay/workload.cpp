// One seed's workload (shuffle, tuning, node order) and the policies'
// configurations.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "bench/generator/generator.hpp"
#include "bench/replay/replay.hpp"
#include "host/input/quote.hpp"
#include "plugins/gpu_share.hpp"

namespace bulkscore {
namespace {

SplitMix64 stream(uint64_t seed, ReplayStream s) { return SplitMix64::derive(seed, static_cast<uint64_t>(s)); }

template <class T>
void shuffle(std::vector<T>& v, SplitMix64& rng) {
  // Fisher-Yates, from the back.
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.below(i)]);
}

}  // namespace

TunedWorkload tune_workload(const ReplayTrace& trace, uint64_t seed, const TuneOptions& options) {
  TunedWorkload w;
  const auto n = static_cast<uint32_t>(trace.pods.size());
  w.order.resize(n);
  std::iota(w.order.begin(), w.order.end(), 0U);
  SplitMix64 shuffle_rng = stream(seed, ReplayStream::Shuffle);
  shuffle(w.order, shuffle_rng);

  for (const TracePod& p : trace.pods) w.demand_before += trace_pod_gpu_units(p);
  w.demand_after = w.demand_before;
  w.target = static_cast<int64_t>(std::floor(options.inflation * static_cast<double>(trace.gpu_capacity_units)));
  if (n == 0) return w;

  SplitMix64 rng = stream(seed, ReplayStream::Tune);
  if (w.demand_after < w.target) {
    // Every GPU pod drawn raises the demand by at least one unit, so the
    // loop ends; a trace without GPU pods could never reach the target.
    const bool any_gpu_pod =
        std::any_of(trace.pods.begin(), trace.pods.end(), [](const TracePod& p) { return trace_pod_gpu_units(p) > 0; });
    while (any_gpu_pod) {
      const uint32_t pick = static_cast<uint32_t>(rng.below(n));
      const TracePod& p = trace.pods[pick];
      const int64_t tested = options.per_gpu_milli_quirk ? trace_pod_milli(p) : trace_pod_gpu_units(p);
      if (w.demand_after + tested > w.target) break;
      w.order.push_back(pick);
      w.demand_after += trace_pod_gpu_units(p);
      ++w.added;
    }
  } else if (w.demand_after > w.target) {
    // Removing one pod at a time, uniformly among those left, keeps the
    // others in their shuffled order.
    std::vector<uint32_t> kept = w.order;
    while (w.demand_after > w.target && !kept.empty()) {
      const size_t at = rng.below(kept.size());
      w.demand_after -= trace_pod_gpu_units(trace.pods[kept[at]]);
      kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(at));
      ++w.removed;
    }
    w.order = std::move(kept);
  }
  return w;
}

std::vector<uint32_t> node_ranks(size_t num_nodes, uint64_t seed) {
  std::vector<uint32_t> rank(num_nodes);
  std::iota(rank.begin(), rank.end(), 0U);
  SplitMix64 rng = stream(seed, ReplayStream::NodeOrder);
  shuffle(rank, rng);
  return rank;
}

const std::vector<ReplayPolicy>& replay_policies() {
  static const std::vector<ReplayPolicy> policies{
      {"random", "GpuRandomFit", DeviceSelection::Random},
      {"dotprod", "GpuDotProduct", DeviceSelection::Best},
      {"clustering", "GpuClustering", DeviceSelection::Best},
      {"packing", "GpuPacking", DeviceSelection::Best},
      {"bestfit", "GpuBestFit", DeviceSelection::Best},
      {"fgd", "GpuFragmentation", DeviceSelection::Fragmentation},
      {"firstfit", "", DeviceSelection::Best},
  };
  return policies;
}

const ReplayPolicy& replay_policy(const std::string& name) {
  std::string known;
  for (const ReplayPolicy& p : replay_policies()) {
    if (p.name == name) return p;
    known += (known.empty() ? "" : ", ") + p.name;
  }
  throw InputError("unknown policy " + quote_for_message(name) + " (known: " + known + ")");
}

SchedulerConfig replay_scheduler_config(const ReplayPolicy& policy, uint64_t seed,
                                        const std::vector<TypicalTask>& typical) {
  SchedulerConfig config;
  ProfileConfig profile = default_scheduler_config().profiles.at(0);
  profile.percentage_of_nodes_to_score = 100;
  const std::string gpu_share = plugins::GpuShare::kName;
  if (std::find(profile.pre_filter.begin(), profile.pre_filter.end(), gpu_share) == profile.pre_filter.end())
    profile.pre_filter.push_back(gpu_share);
  if (std::find(profile.filter.begin(), profile.filter.end(), gpu_share) == profile.filter.end())
    profile.filter.push_back(gpu_share);
  // One score plugin, as the simulator's configurations disable all others;
  // its weight is theirs (1000).
  constexpr int32_t kPolicyWeight = 1000;
  profile.score.clear();
  profile.pre_score.clear();
  if (!policy.score_plugin.empty()) {
    profile.score.push_back(PluginEntry{policy.score_plugin, kPolicyWeight});
    profile.pre_score.push_back(policy.score_plugin);
  }
  profile.gpu_share_args.selection = policy.selection;
  profile.gpu_score_args.seed = seed;
  profile.gpu_fragmentation_args.typical_tasks = typical;
  config.profiles.push_back(std::move(profile));
  return config;
}

}  // namespace bulkscore
