// Host-side inputs and outputs of a plugin's per-pod setup (PreFilter and
// PreScore). Included by plugins/*.cpp only; rule headers stay device-clean.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "host/input/config.hpp"
#include "host/input/model.hpp"
#include "host/snapshot/snapshot.hpp"
#include "plugins/plugin_api.hpp"

namespace bulkscore {

struct PrepareContext {
  const Pod& pod;
  const Snapshot& snapshot;
  const SnapshotView& view;  // snapshot.view(), taken once per pod (it copies every column's pointer)
  const ProfileConfig& profile;
  const ResourceList& requests;  // pod_requests(pod): what Filter uses
  // Services, controllers and Namespaces (--objects); nullptr when none.
  const ClusterObjects* objects = nullptr;
};

// What a plugin's removal_counts (plugin_api.hpp) reads besides its state:
// the incoming pod, the snapshot its state was prepared on (the removed
// pods are on it), and the cluster objects (Namespaces' labels).
struct RemovalContext {
  const Pod& pod;
  const Snapshot& snapshot;
  const ClusterObjects* objects = nullptr;
};

struct PrepareResult {
  // PreFilter: Success, Skip (the plugin's Filter does not run for this pod),
  // Unschedulable or UnschedulableAndUnresolvable (the pod is rejected with
  // `message` before any node is looked at).
  Code prefilter = Code::Success;
  std::string message;
  // PreFilterResult: only these nodes are candidates (nullopt = all nodes).
  std::optional<std::vector<std::string>> node_names;
  // The plugin's Filter passes every node for this pod (e.g. NodeName for a
  // pod without spec.nodeName): it is left out of the per-node pass, which
  // changes no outcome.
  bool filter_passes_all = false;
  // PreScore returned Skip: the plugin's Score does not run for this pod.
  bool skip_score = false;
  // PreScore failed (an Error status): the pod fails its cycle with it.
  std::string score_error;
  // The plugin's scores may leave [0, 100] for this pod (quantities outside
  // the range its arithmetic keeps them in): the engine evaluates the pod
  // on the plain path and checks every score, as upstream's framework does
  // after NormalizeScore, failing the cycle with "invalid score".
  bool check_score_range = false;
};

}  // namespace bulkscore
