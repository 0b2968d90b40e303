#include "plugins/registry.hpp"

#include <cstring>

namespace bulkscore {

const char* code_name(Code c) {
  switch (c) {
    case Code::Success:
      return "Success";
    case Code::Error:
      return "Error";
    case Code::Unschedulable:
      return "Unschedulable";
    case Code::UnschedulableAndUnresolvable:
      return "UnschedulableAndUnresolvable";
    case Code::Wait:
      return "Wait";
    case Code::Skip:
      return "Skip";
    case Code::Pending:
      return "Pending";
  }
  return "Unknown";
}

const char* plugin_name(uint8_t id) {
  switch (id) {
#define BULKSCORE_X(P)                    \
  case static_cast<uint8_t>(PluginId::P): \
    return plugins::P::kName;
    BULKSCORE_PLUGINS(BULKSCORE_X)
#undef BULKSCORE_X
    default:
      return "?";
  }
}

int plugin_id_by_name(const std::string& name) {
#define BULKSCORE_X(P) \
  if (name == plugins::P::kName) return static_cast<int>(PluginId::P);
  BULKSCORE_PLUGINS(BULKSCORE_X)
#undef BULKSCORE_X
  return -1;
}

bool plugin_has_filter(uint8_t id) {
  switch (id) {
#define BULKSCORE_X(P)                    \
  case static_cast<uint8_t>(PluginId::P): \
    return plugins::P::kHasFilter;
    BULKSCORE_PLUGINS(BULKSCORE_X)
#undef BULKSCORE_X
    default:
      return false;
  }
}

bool plugin_has_score(uint8_t id) {
  switch (id) {
#define BULKSCORE_X(P)                    \
  case static_cast<uint8_t>(PluginId::P): \
    return plugins::P::kHasScore;
    BULKSCORE_PLUGINS(BULKSCORE_X)
#undef BULKSCORE_X
    default:
      return false;
  }
}

}  // namespace bulkscore
