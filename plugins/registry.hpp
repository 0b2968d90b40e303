// The one list of plugins both backends run. Adding a plugin: its header
// below and one X(...) line in BULKSCORE_PLUGINS. Order here is only the id
// order; the profile decides evaluation order.
#pragma once

#include "plugins/image_locality.hpp"
#include "plugins/node_affinity.hpp"
#include "plugins/node_name.hpp"
#include "plugins/node_ports.hpp"
#include "plugins/node_resources_balanced_allocation.hpp"
#include "plugins/node_resources_fit.hpp"
#include "plugins/node_unschedulable.hpp"
#include "plugins/taint_toleration.hpp"

#define BULKSCORE_PLUGINS(X)         \
  X(NodeUnschedulable)               \
  X(NodeName)                        \
  X(TaintToleration)                 \
  X(NodeAffinity)                    \
  X(NodePorts)                       \
  X(NodeResourcesFit)                \
  X(NodeResourcesBalancedAllocation) \
  X(ImageLocality)

namespace bulkscore {

enum class PluginId : uint8_t {
#define BULKSCORE_X(P) P,
  BULKSCORE_PLUGINS(BULKSCORE_X)
#undef BULKSCORE_X
      kCount
};
constexpr uint32_t kNumPlugins = static_cast<uint32_t>(PluginId::kCount);
constexpr uint8_t kNoPlugin = 0xFF;

// Every plugin's per-pod state, side by side; trivially copyable.
struct PluginStates {
#define BULKSCORE_X(P) plugins::P::State P##_state;
  BULKSCORE_PLUGINS(BULKSCORE_X)
#undef BULKSCORE_X
};

// Upstream name of a plugin id, and the reverse (-1 if bulkscore has no rule).
const char* plugin_name(uint8_t id);
int plugin_id_by_name(const std::string& name);
bool plugin_has_filter(uint8_t id);
bool plugin_has_score(uint8_t id);

}  // namespace bulkscore
