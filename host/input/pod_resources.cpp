#include "host/input/pod_resources.hpp"

#include <algorithm>

#include "host/common.hpp"

namespace bulkscore {

bool pod_level_supported(const std::string& name) {
  return name == "cpu" || name == "memory" || name.rfind("hugepages-", 0) == 0;
}

namespace {

void add_into(ResourceList& acc, const ResourceList& x) {
  for (const auto& [k, v] : x) {
    int64_t& total = acc[k];
    total = go_add(total, v);  // Go's int64 sum: wraps near 2^63, never undefined
  }
}

// acc += a container's requests, with the non-zero defaults when asked for
// (added in place, not copied first: a pod's requests are summed several
// times per scheduling cycle).
void add_container_into(ResourceList& acc, const Container& c, bool non_zero) {
  add_into(acc, c.requests);
  if (non_zero) {
    if (!c.requests.count("cpu")) acc["cpu"] = go_add(acc["cpu"], kDefaultMilliCpuRequest);
    if (!c.requests.count("memory")) acc["memory"] = go_add(acc["memory"], kDefaultMemoryRequest);
  }
}

void max_into(ResourceList& acc, const ResourceList& x) {
  for (const auto& [k, v] : x) {
    auto it = acc.find(k);
    if (it == acc.end())
      acc.emplace(k, v);
    else
      it->second = std::max(it->second, v);
  }
}

// max(regular + sidecars, max over init containers of (init + earlier sidecars)).
ResourceList aggregate_containers(const Pod& pod, bool non_zero) {
  ResourceList regular;
  for (const auto& c : pod.containers) add_container_into(regular, c, non_zero);
  if (pod.init_containers.empty()) return regular;
  ResourceList sidecars_so_far;
  ResourceList init_max;
  for (const auto& c : pod.init_containers) {
    ResourceList cr;
    add_container_into(cr, c, non_zero);
    if (c.restart_policy_always) {
      add_into(sidecars_so_far, cr);
      // A sidecar keeps running: it also counts against later init containers.
      max_into(init_max, sidecars_so_far);
    } else {
      ResourceList with_sidecars = sidecars_so_far;
      add_into(with_sidecars, cr);
      max_into(init_max, with_sidecars);
    }
  }
  add_into(regular, sidecars_so_far);
  max_into(regular, init_max);
  return regular;
}

void apply_pod_level(const Pod& pod, ResourceList& r) {
  for (const auto& [k, v] : pod.pod_level_requests) {
    if (pod_level_supported(k)) r[k] = v;
  }
}

bool has_pod_level(const Pod& pod) {
  for (const auto& kv : pod.pod_level_requests)
    if (pod_level_supported(kv.first)) return true;
  return false;
}

}  // namespace

bool requests_are_additive(const Pod& pod) { return pod.init_containers.empty() && !has_pod_level(pod); }

CpuMemory additive_nonzero_cpu_memory(const Pod& pod) {
  // string_view keys: the map's comparisons need no strlen.
  const auto field = [](const ResourceList& list, std::string_view name, int64_t absent) {
    const auto it = list.find(name);
    return it == list.end() ? absent : it->second;
  };
  CpuMemory out;
  for (const Container& c : pod.containers) {
    out.cpu = go_add(out.cpu, field(c.requests, "cpu", kDefaultMilliCpuRequest));
    out.memory = go_add(out.memory, field(c.requests, "memory", kDefaultMemoryRequest));
  }
  out.cpu = go_add(out.cpu, field(pod.overhead, "cpu", 0));
  out.memory = go_add(out.memory, field(pod.overhead, "memory", 0));
  return out;
}

ResourceList pod_requests(const Pod& pod) {
  ResourceList r = aggregate_containers(pod, false);
  apply_pod_level(pod, r);
  add_into(r, pod.overhead);
  return r;
}

ResourceList pod_requests_nonzero_for_scoring(const Pod& pod) {
  ResourceList r = aggregate_containers(pod, true);
  apply_pod_level(pod, r);
  add_into(r, pod.overhead);
  return r;
}

ResourceList pod_requests_nonzero_for_node(const Pod& pod) {
  if (!has_pod_level(pod)) return pod_requests_nonzero_for_scoring(pod);
  // "Missing" is judged on the full request, overhead included; a missing
  // resource then takes the per-container defaults (none without containers).
  ResourceList r = pod_requests(pod);
  const ResourceList defaulted = aggregate_containers(pod, true);
  for (const char* name : {"cpu", "memory"}) {
    const auto it = defaulted.find(name);
    if (!r.count(name) && it != defaulted.end()) r[name] = it->second;
  }
  return r;
}

}  // namespace bulkscore
