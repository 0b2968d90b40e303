// The one list of plugins both backends run, and everything derived from it:
// plugin ids (a plugin's position in the list), the per-pod state block, the
// metadata table and the one visitor every dispatch goes through. Adding a
// plugin: its header below and its type in `Plugins`. Order here is only the
// id order; the profile decides evaluation order.
#pragma once

#include <array>
#include <cstdint>

#include "plugins/gpu_baselines.hpp"
#include "plugins/gpu_fgd.hpp"
#include "plugins/gpu_share.hpp"
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
#include "plugins/shared_device_group.hpp"
#include "plugins/taint_toleration.hpp"
#include "plugins/workload_type.hpp"

namespace bulkscore {

template <class... Ps>
struct PluginList {};

using Plugins =
    PluginList<plugins::NodeUnschedulable, plugins::NodeName, plugins::TaintToleration, plugins::NodeAffinity,
               plugins::NodePorts, plugins::NodeResourcesFit, plugins::NodeResourcesBalancedAllocation,
               plugins::ImageLocality, plugins::PodTopologySpread, plugins::InterPodAffinity, plugins::SeamProbe,
               plugins::GpuShare, plugins::WorkloadType, plugins::GpuFragmentation, plugins::GpuBestFit,
               plugins::GpuDotProduct, plugins::GpuPacking, plugins::GpuClustering, plugins::GpuRandomFit,
               plugins::SharedDeviceGroup, plugins::NodeData>;

namespace detail {
template <class P, class List>
struct IndexOf;
template <class P, class... Ps>
struct IndexOf<P, PluginList<P, Ps...>> {
  static constexpr uint8_t value = 0;
};
template <class P, class Q, class... Ps>
struct IndexOf<P, PluginList<Q, Ps...>> {
  static constexpr uint8_t value = 1 + IndexOf<P, PluginList<Ps...>>::value;
};

template <class List>
struct CountOf;
template <class... Ps>
struct CountOf<PluginList<Ps...>> {
  static constexpr uint32_t value = sizeof...(Ps);
};

template <class P>
struct StateSlot {
  typename P::State state;
};
template <class List>
struct StatesOf;
template <class... Ps>
struct StatesOf<PluginList<Ps...>> : StateSlot<Ps>... {};

// An if-chain over the list; compilers turn it into a jump table.
template <uint8_t I, class Fn>
BULKSCORE_HD void visit_from(PluginList<>, uint8_t, Fn&) {}
template <uint8_t I, class Fn, class P, class... Ps>
BULKSCORE_HD void visit_from(PluginList<P, Ps...>, uint8_t id, Fn& fn) {
  if (id == I)
    fn(P{});
  else
    visit_from<I + 1>(PluginList<Ps...>{}, id, fn);
}
}  // namespace detail

constexpr uint32_t kNumPlugins = detail::CountOf<Plugins>::value;
constexpr uint8_t kNoPlugin = 0xFF;
static_assert(kNumPlugins < kNoPlugin, "plugin ids are uint8_t");

// The id of plugin P: its position in `Plugins`.
template <class P>
constexpr uint8_t plugin_id() {
  return detail::IndexOf<P, Plugins>::value;
}

// Every plugin's per-pod state, side by side; trivially copyable (it is
// copied to the device inside the pod query).
using PluginStates = detail::StatesOf<Plugins>;

template <class P>
BULKSCORE_HD const typename P::State& state_of(const PluginStates& s) {
  return static_cast<const detail::StateSlot<P>&>(s).state;
}
template <class P>
BULKSCORE_HD typename P::State& state_of(PluginStates& s) {
  return static_cast<detail::StateSlot<P>&>(s).state;
}

// The one visitor: calls fn(P{}) for the plugin whose id is `id` (nothing
// for an unknown id). Every per-plugin dispatch, host or device, is built on
// it, so a backend loops over nodes inside one plugin's rule.
template <class Fn>
BULKSCORE_HD void visit_plugin(uint8_t id, Fn&& fn) {
  detail::visit_from<0>(Plugins{}, id, fn);
}

// What the host needs to know about each plugin, by id.
struct PluginInfo {
  const char* name;  // upstream's name
  bool has_filter;
  bool has_score;
  NormalizeKind normalize;
  bool prescore_feasible;  // builds per-pod tables over the feasible nodes (PreScore)
  FilterReach filter_reach;  // how its Filter reads other nodes' pods (plugin_api.hpp)
};

namespace detail {
template <class... Ps>
constexpr std::array<PluginInfo, sizeof...(Ps)> info_of(PluginList<Ps...>) {
  return {{PluginInfo{Ps::kName, Ps::kHasFilter, Ps::kHasScore, Ps::kNormalize, Ps::kPreScoreFeasible,
                      kFilterReachOf<Ps>}...}};
}
}  // namespace detail

inline constexpr std::array<PluginInfo, kNumPlugins> kPluginInfo = detail::info_of(Plugins{});

// Upstream name of a plugin id ("?" if out of range), and the reverse (-1 if
// bulkscore has no rule by that name).
const char* plugin_name(uint8_t id);
int plugin_id_by_name(const std::string& name);
bool plugin_has_filter(uint8_t id);
bool plugin_has_score(uint8_t id);

}  // namespace bulkscore
