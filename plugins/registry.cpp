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

const char* plugin_name(uint8_t id) { return id < kNumPlugins ? kPluginInfo[id].name : "?"; }

int plugin_id_by_name(const std::string& name) {
  for (uint32_t id = 0; id < kNumPlugins; ++id)
    if (name == kPluginInfo[id].name) return static_cast<int>(id);
  return -1;
}

bool plugin_has_filter(uint8_t id) { return id < kNumPlugins && kPluginInfo[id].has_filter; }

bool plugin_has_score(uint8_t id) { return id < kNumPlugins && kPluginInfo[id].has_score; }

}  // namespace bulkscore
