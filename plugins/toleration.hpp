// Toleration matching (core/v1 Toleration.ToleratesTaint), compiled to ids so
// the same rule runs on host and device. Shared by TaintToleration and
// NodeUnschedulable.
#pragma once

#include <vector>

#include "host/snapshot/snapshot.hpp"
#include "plugins/plugin_api.hpp"

namespace bulkscore {

struct TolerationRule {
  // Never equal to any dictionary id: a key/value/effect the snapshot lacks.
  static constexpr int32_t kNoMatch = -2;
  enum Op : uint8_t { kEqual = 0, kExists = 1, kNever = 2 };

  int32_t key;     // kNoId: empty key, matches every key
  int32_t value;   // string id (Equal only)
  int32_t effect;  // -1: any effect; else TaintEffect; kNoMatch for unknown
  uint8_t op;
  uint8_t padding_[3] = {};  // explicit: a query is compared byte for byte (docs/batching.md)

  BULKSCORE_HD bool tolerates(int32_t taint_key, int32_t taint_value, uint8_t taint_effect) const {
    if (effect != -1 && effect != static_cast<int32_t>(taint_effect)) return false;
    if (key != kNoId && key != taint_key) return false;
    switch (op) {
      case kExists:
        return true;
      case kEqual:
        return value == taint_value;
      default:
        return false;  // Gt/Lt: the TaintTolerationComparisonOperators gate is off in v1.35
    }
  }
};

// Compiles tolerations against the snapshot's dictionary.
TolerationRule compile_toleration(const Toleration& t, const StringDict& dict);
std::vector<TolerationRule> compile_tolerations(const std::vector<Toleration>& ts, const StringDict& dict);

// Host-side check against a taint given as strings (for taints that are not
// on any node, like node.kubernetes.io/unschedulable).
bool toleration_tolerates(const Toleration& t, const Taint& taint);

}  // namespace bulkscore
