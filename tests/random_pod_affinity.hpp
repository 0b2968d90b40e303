// Random pod (anti-)affinity for the parity and equivalence tests: required
// and preferred terms on keys every node, most nodes or no node carries,
// selecting by app label, in the pod's own namespace, a listed one, or
// through a namespaceSelector ({} or by label).
#pragma once

#include <optional>

#include "bench/generator/generator.hpp"
#include "host/input/model.hpp"

namespace bulkscore::testutil {

inline PodAffinityTerm random_pod_affinity_term(SplitMix64& rng) {
  static const char* const kKeys[] = {"topology.kubernetes.io/zone", "kubernetes.io/hostname", "pool", "rack"};
  static const char* const kApps[] = {"web", "db", "cache"};
  PodAffinityTerm t;
  t.topology_key = kKeys[rng.below(4)];
  const uint64_t sel = rng.below(10);
  if (sel < 6) {
    t.label_selector = LabelSelector{};
    t.label_selector->match_labels["app"] = kApps[rng.below(3)];
  } else if (sel < 8) {
    t.label_selector = LabelSelector{};
    t.label_selector->match_expressions.push_back({"app", rng.chance(0.5) ? "Exists" : "NotIn", {}});
    if (t.label_selector->match_expressions[0].op == "NotIn")
      t.label_selector->match_expressions[0].values.push_back(kApps[rng.below(3)]);
  } else if (sel < 9) {
    t.label_selector = LabelSelector{};  // every pod of the namespaces
  }                                      // else nil: matches nothing
  const uint64_t ns = rng.below(10);
  if (ns < 2) {
    t.namespaces = {"running"};
  } else if (ns < 3) {
    t.namespace_selector = LabelSelector{};  // every namespace
  } else if (ns < 4) {
    t.namespace_selector = LabelSelector{};
    t.namespace_selector->match_labels["team"] = "a";
  } else if (ns < 5) {
    // Matches an empty label set: upstream's incoming terms then match every namespace.
    t.namespace_selector = LabelSelector{};
    t.namespace_selector->match_expressions.push_back({"team", "NotIn", {"b"}});
  }
  return t;
}

inline std::optional<Affinity> random_pod_affinity(SplitMix64& rng, double required_chance) {
  if (!rng.chance(0.3)) return std::nullopt;
  Affinity a;
  for (auto* side : {&a.pod_affinity, &a.pod_anti_affinity}) {
    if (!rng.chance(0.6)) continue;
    PodAffinity pa;
    if (rng.chance(required_chance)) pa.required.push_back(random_pod_affinity_term(rng));
    const uint32_t preferred = static_cast<uint32_t>(rng.below(3));
    for (uint32_t k = 0; k < preferred; ++k)
      pa.preferred.push_back({static_cast<int32_t>(rng.between(1, 100)), random_pod_affinity_term(rng)});
    *side = pa;
  }
  return a;
}

}  // namespace bulkscore::testutil
