// Placement: running pods onto nodes (daemonsets everywhere they may run, then
// a per-node share of workload pods that fit) and the pending groups, sized by
// a first-fit dry run on the capacity left. Where a pod may run and whether it
// fits is the engine's decision (PlacementSnapshot: a Snapshot and the
// default profile's Filter plugins), never a rule restated here.
#include "bench/generator/generator_internal.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <utility>

#include "host/common.hpp"
#include "host/input/config.hpp"
#include "host/input/k8s_json.hpp"

namespace bulkscore::gen {

bool label_of(const std::vector<std::string>& zone_names, const std::string& region, const NodeRec& n, int key,
              std::string_view& out) {
  const InstanceType& t = type_of(n);
  switch (key) {
    case kLBetaArch:
    case kLArch:
      out = t.arm ? "arm64" : "amd64";
      return true;
    case kLBetaOs:
    case kLOs:
      out = "linux";
      return true;
    case kLCapacityType:
      out = n.role == Role::Spot ? "SPOT" : "ON_DEMAND";
      return true;
    case kLNodegroup:
      return false;  // written separately; no template selects on it
    case kLHostname:
      out = n.name;
      return true;
    case kLRoleInfra:
      out = "";
      return n.role == Role::Infra;
    case kLGeneration:
      out = t.generation;
      return true;
    case kLLocalSsd:
      out = "true";
      return n.local_ssd;
    case kLInstanceType:
      out = t.name;
      return true;
    case kLGpuCount:
      out = t.gpu_count ? t.gpu_count : "";
      return t.gpus > 0;
    case kLGpuMemory:
      out = t.gpu_memory_mib ? t.gpu_memory_mib : "";
      return t.gpus > 0;
    case kLGpuProduct:
      out = t.gpu_product ? t.gpu_product : "";
      return t.gpus > 0;
    case kLPool:
      out = kPoolNames[static_cast<int>(pool_of(n))];
      return true;
    case kLRegion:
      out = region;
      return true;
    case kLZone:
      out = zone_names[n.zone];
      return true;
    default:
      return false;
  }
}

// ---------------------------------------------------------------- the engine's view

namespace {

// The default profile's Filter plugins, split into where a pod may run and
// whether there is room for it (so that a daemonset pod that may run on a
// node but finds no room there is an error, not a skipped node).
bool is_room_plugin(const std::string& name) { return name == "NodePorts" || name == "NodeResourcesFit"; }

ProfilePlan filter_plan(bool room) {
  ProfileConfig profile = default_scheduler_config().profiles.front();
  std::vector<std::string> filters;
  for (const std::string& f : profile.filter)
    if (is_room_plugin(f) == room) filters.push_back(f);
  profile.filter = std::move(filters);
  profile.score.clear();  // placement only filters
  return make_profile_plan(profile);
}

}  // namespace

PlacementSnapshot::PlacementSnapshot(const std::vector<Node>& nodes, std::vector<Pod> running)
    : snap_(Snapshot::build(nodes, std::move(running))), where_(filter_plan(false)), room_(filter_plan(true)) {}

const PlacementSnapshot::Queries& PlacementSnapshot::queries(uint32_t wi, const Pod& pod) {
  if (wi >= cache_.size()) cache_.resize(wi + 1);
  std::optional<Queries>& q = cache_[wi];
  // A query names strings and resources by their ids in the snapshot: one
  // prepared before the dictionary grew (a pod's first UDP host port, say)
  // would compare stale ids, so it is prepared again.
  if (!q || q->strings != snap_.strings().size() || q->resources != snap_.num_resources()) {
    intern_pod_for_plan(snap_, pod, where_);
    intern_pod_for_plan(snap_, pod, room_);
    q.emplace();
    q->strings = snap_.strings().size();
    q->resources = snap_.num_resources();
    q->where = prepare_pod_query(pod, snap_, where_, TieBreak::First, 0);
    q->room = prepare_pod_query(pod, snap_, room_, TieBreak::First, 0);
  }
  return *q;
}

bool PlacementSnapshot::passes(const PodQuery& q, uint32_t node) const {
  if (q.rejected) return false;  // PreFilter turned the pod away from every node
  if (q.candidates && std::find(q.candidates->begin(), q.candidates->end(), node) == q.candidates->end()) return false;
  return filter_node(snap_.view(), q.view(), node).feasible();
}

bool PlacementSnapshot::allowed(uint32_t wi, const Pod& pod, uint32_t node) {
  return passes(queries(wi, pod).where, node);
}

bool PlacementSnapshot::has_room(uint32_t wi, const Pod& pod, uint32_t node) {
  return passes(queries(wi, pod).room, node);
}

int64_t PlacementSnapshot::requested(std::string_view resource, uint32_t node) const {
  const int32_t r = snap_.resource_index(resource);
  return r < 0 ? 0 : snap_.view().req(static_cast<uint32_t>(r), node);
}

const std::vector<Node>& Generator::model_nodes() {
  if (model_nodes_.size() != nodes_.size()) {
    std::string json;
    JsonWriter j(json);
    j.begin_object().field("apiVersion", "v1").field("kind", "NodeList").key("items").begin_array();
    for (const NodeRec& nd : nodes_) write_node(j, nd);
    j.end_array().end_object();
    model_nodes_ = parse_nodes_json(json, "generated nodes");
  }
  return model_nodes_;
}

std::vector<Node> Generator::model_nodes_before_cordon() {
  std::vector<Node> nodes = model_nodes();
  for (Node& n : nodes) {
    // What `kubectl cordon` changed: the flag, and the taint the node
    // lifecycle controller adds for it.
    if (!n.unschedulable) continue;
    n.unschedulable = false;
    n.taints.erase(
        std::remove_if(n.taints.begin(), n.taints.end(),
                       [](const Taint& t) { return t.key == kTaintCordon.key && t.effect == kTaintCordon.effect; }),
        n.taints.end());
  }
  return nodes;
}

// ---------------------------------------------------------------- placing pods

std::string Generator::pod_name(Workload& w, uint32_t ordinal) const {
  switch (w.kind) {
    case OwnerKind::ReplicaSet:
      return w.name + '-' + w.hash + '-' + name_suffix(ordinal, w.salt);
    case OwnerKind::StatefulSet:
      return w.name + '-' + std::to_string(ordinal);
    default:
      return w.name + '-' + name_suffix(ordinal, w.salt);
  }
}

void Generator::add_pod(uint32_t wi, int32_t node) {
  Workload& w = workloads_[wi];
  PodRec p;
  p.workload = wi;
  p.node = node;
  p.ordinal = w.next_ordinal++;
  p.name = pod_name(w, p.ordinal);
  if (node >= 0) {
    running_->place(w.model, static_cast<uint32_t>(node));
    nodes_[static_cast<size_t>(node)].image_set.merge(w.tmpl.image_set);
    ++w.running;
  }
  pods_.push_back(std::move(p));
}

bool Generator::try_place(uint32_t wi, uint32_t node) {
  const Workload& w = workloads_[wi];
  if (!running_->allowed(wi, w.model, node) || !running_->has_room(wi, w.model, node)) return false;
  // The generator's own policy on top of the scheduler's rules: running pods
  // leave the last 15% of a node's memory free.
  const NodeRec& nd = nodes_[node];
  if (w.tmpl.eff.mem > nd.alloc_mem / 100 * 85 - running_->requested("memory", node)) return false;
  add_pod(wi, static_cast<int32_t>(node));
  return true;
}

// Tries classes from `cls` down, a few draws each.
bool Generator::place_from(SplitMix64& rng, const std::vector<std::vector<uint32_t>>& lists, int cls, uint32_t node) {
  for (int c = std::min<int>(cls, static_cast<int>(lists.size()) - 1); c >= 0; --c) {
    const auto& list = lists[static_cast<size_t>(c)];
    if (list.empty()) continue;
    for (int attempt = 0; attempt < 4; ++attempt)
      if (try_place(list[rng.below(list.size())], node)) return true;
  }
  return false;
}

void Generator::place_running() {
  SplitMix64 rng = SplitMix64::derive(opt_.seed, kStreamRunning);
  const uint64_t total = opt_.running_pods;
  const size_t n = nodes_.size();
  // Running pods were placed before any node was cordoned.
  if (total > 0) running_ = std::make_unique<PlacementSnapshot>(model_nodes_before_cordon(), std::vector<Pod>{});

  make_daemonsets(rng, total * 55 / 100);
  const size_t first_non_ds = workloads_.size();
  uint64_t ds_pods = 0;
  for (size_t wi = 0; wi < first_non_ds; ++wi) {
    const uint32_t w = static_cast<uint32_t>(wi);
    const Pod& pod = workloads_[wi].model;
    for (size_t i = 0; i < n; ++i) {
      const uint32_t node = static_cast<uint32_t>(i);
      if (!running_->allowed(w, pod, node)) continue;
      if (!running_->has_room(w, pod, node)) throw Error("generator: a daemonset pod does not fit " + nodes_[i].name);
      add_pod(w, static_cast<int32_t>(i));
      ++ds_pods;
    }
  }
  const uint64_t rest = total - ds_pods;

  // The workload catalogue, sized to the pods to place.
  const uint32_t n_general = static_cast<uint32_t>(std::clamp<uint64_t>(rest / 20, 24, 20000));
  for (uint32_t i = 0; i < n_general; ++i) {
    const int cls =
        i < static_cast<uint32_t>(kClassCount)
            ? static_cast<int>(i)
            : static_cast<int>(pick_weighted(rng, std::array<int, kClassCount>{5, 15, 20, 20, 18, 12, 7, 3, 1}));
    make_general_workload(rng, kClassCpu[cls]);
  }
  make_infra_workloads(rng);
  make_gpu_workloads(rng, std::clamp<uint32_t>(gpu_nodes_ / 4, 6, 2000));
  make_debug_workload(rng);
  if (total == 0) return;  // the catalogue is still made: pending groups scale some of it up

  std::vector<std::vector<uint32_t>> general(kClassCount), infra(kClassCount), gpu_cpu(kClassCount), gpu(4);
  for (size_t wi = first_non_ds; wi < workloads_.size(); ++wi) {
    const Workload& w = workloads_[wi];
    const int cls = class_of(w.tmpl.eff.cpu);
    const uint32_t id = static_cast<uint32_t>(wi);
    switch (w.target) {
      case Target::General:
        general[cls].push_back(id);
        break;
      case Target::Infra:
        infra[cls].push_back(id);
        break;
      case Target::GpuCpuOnly:
        gpu_cpu[cls].push_back(id);
        break;
      case Target::Gpu: {
        int g = 0;
        while (g < 3 && kGpuClasses[g + 1] <= w.tmpl.eff.gpu) ++g;
        gpu[g].push_back(id);
        break;
      }
      default:
        break;
    }
  }

  // Each node's share of the rest, within its free pod slots: one pod per
  // node first when there are enough (so that few nodes stay empty), the
  // remainder in proportion to node size. With fewer pods than nodes they
  // are spread evenly.
  std::vector<uint64_t> weight(n), quota(n, 0);
  const uint64_t base = n > 0 && rest >= n ? 1 : 0;
  const uint64_t spread = rest - base * n;
  uint64_t weight_sum = 0;
  for (size_t i = 0; i < n; ++i) {
    const NodeRec& nd = nodes_[i];
    if (base == 0)
      weight[i] = 1;
    else if (nd.role == Role::Gpu)
      weight[i] = 2 * static_cast<uint64_t>(nd.gpus);
    else
      weight[i] = static_cast<uint64_t>(std::max<int64_t>(1, nd.alloc_cpu / 1000));
    weight_sum += weight[i];
  }
  uint64_t cum = 0, prev = 0, overflow = n == 0 ? rest : 0;
  for (size_t i = 0; i < n; ++i) {
    cum += weight[i];
    // spread < 2^32 and cum <= 192 per node: no overflow below 22 million nodes.
    const uint64_t upto = spread * cum / weight_sum;
    const uint64_t share = base + upto - prev;
    const uint64_t slots =
        static_cast<uint64_t>(std::max(0, nodes_[i].max_pods - running_->pods_on(static_cast<uint32_t>(i)) - 5));
    quota[i] = std::min(share, slots);
    overflow += share - quota[i];
    prev = upto;
  }
  for (size_t pass = 0; pass < 2 && overflow > 0; ++pass)
    for (size_t i = 0; i < n && overflow > 0; ++i) {
      const int32_t keep = pass == 0 ? 5 : 0;
      const uint64_t slots =
          static_cast<uint64_t>(std::max(0, nodes_[i].max_pods - running_->pods_on(static_cast<uint32_t>(i)) - keep));
      const uint64_t add = std::min(overflow, slots - std::min(slots, quota[i]));
      quota[i] += add;
      overflow -= add;
    }
  if (overflow > 0)
    throw InputError("generator: " + std::to_string(total) + " running pods do not fit the pod slots of " +
                     std::to_string(n) + " nodes");

  for (size_t i = 0; i < n; ++i) {
    const NodeRec& nd = nodes_[i];
    const uint32_t node = static_cast<uint32_t>(i);
    const int64_t target_cpu = nd.alloc_cpu * rng.between(20, 70) / 100;
    const int64_t target_gpu = nd.gpus * rng.between(0, 4) / 4;
    for (uint64_t k = 0; k < quota[i]; ++k) {
      const int64_t left = static_cast<int64_t>(quota[i] - k);
      const int64_t want = std::max<int64_t>(0, target_cpu - running_->requested("cpu", node)) / left;
      // The nearest class (classes double), then a little jitter.
      int cls = class_of(want * 3 / 2);
      const uint64_t jitter = rng.below(100);
      if (jitter < 15 && cls > 0)
        --cls;
      else if (jitter < 30 && cls + 1 < kClassCount)
        ++cls;
      else if (jitter >= 95)
        cls = 0;
      bool placed = false;
      if (nd.role == Role::Gpu) {
        const int64_t gpus_left = target_gpu - running_->requested("nvidia.com/gpu", node);
        if (gpus_left > 0) {
          int g = 0;
          while (g < 3 && kGpuClasses[g + 1] <= gpus_left) ++g;
          if (g > 0 && rng.chance(0.3)) --g;
          placed = place_from(rng, gpu, g, node);
        }
        if (!placed) placed = place_from(rng, gpu_cpu, cls, node);
      } else if (nd.role == Role::Infra) {
        placed = place_from(rng, infra, cls, node);
      } else {
        placed = place_from(rng, general, cls, node);
      }
      if (!placed && !try_place(debug_workload_, node)) throw Error("generator: no pod fits a free slot on " + nd.name);
    }
  }
}

uint32_t Generator::dry_run(SplitMix64& rng, uint32_t wi, uint32_t want) {
  const Pod& pod = workloads_[wi].model;
  const size_t n = nodes_.size();
  if (n == 0) return 0;
  size_t at = static_cast<size_t>(rng.below(n));
  uint32_t placed = 0;
  size_t misses = 0;
  while (placed < want && misses < n) {
    const uint32_t node = static_cast<uint32_t>(at);
    if (pending_->allowed(wi, pod, node) && pending_->has_room(wi, pod, node)) {
      pending_->place(pod, node);
      ++placed;
      misses = 0;
    } else {
      ++misses;
    }
    at = at + 1 == n ? 0 : at + 1;
  }
  return placed;
}

void Generator::make_pending() {
  SplitMix64 rng = SplitMix64::derive(opt_.seed, kStreamPending);
  if (opt_.pending_pods > 0) {
    // The dry run books on its own snapshot: the real nodes (cordoned ones
    // included) and the running pods.
    std::vector<Pod> running;
    for (const PodRec& p : pods_) {
      if (p.node < 0) continue;
      running.push_back(workloads_[p.workload].model);
      running.back().name = p.name;
      running.back().node_name = nodes_[static_cast<size_t>(p.node)].name;
    }
    pending_ = std::make_unique<PlacementSnapshot>(model_nodes(), std::move(running));
  }
  running_.reset();  // placed: the pending snapshot holds what is needed
  std::vector<int> order;
  for (int s = 0; s < kScenarioCount; ++s)
    if (opt_.with_inter_pod_constraints || !inter_pod_scenario(s)) order.push_back(s);
  rng.shuffle(order);
  // Weights for the groups after the first round (the impossible ones come once).
  std::array<int, kScenarioCount> weights{};
  const int base_weights[kScenarioCount] = {30, 12, 8, 8, 6, 5, 5, 6, 6, 4, 5, 3, 4, 3, 3, 2, 3, 4, 4, 3, 0, 0};
  for (int s = 0; s < kScenarioCount; ++s)
    weights[s] = opt_.with_inter_pod_constraints || !inter_pod_scenario(s) ? base_weights[s] : 0;
  std::array<int, kScenarioCount> failures{};

  uint32_t remaining = opt_.pending_pods;
  const uint32_t first_round_cap = std::max<uint32_t>(5, opt_.pending_pods / (2 * static_cast<uint32_t>(order.size())));
  size_t group = 0;
  while (remaining > 0) {
    int s;
    if (group < order.size()) {
      s = order[group];
    } else {
      int64_t total = 0;
      for (int w : weights) total += w;
      if (total == 0) {
        s = kPlain;
      } else {
        int64_t r = static_cast<int64_t>(rng.below(static_cast<uint64_t>(total)));
        s = 0;
        while (r >= weights[s]) r -= weights[s++];
      }
    }
    ++group;
    // 5..200, many small groups and a few large ones (integer draws only:
    // std::pow may round differently between math libraries).
    uint32_t size = 5 + static_cast<uint32_t>(rng.below(rng.below(196) + 1));
    if (group <= order.size()) size = std::min(size, first_round_cap);
    if (impossible_scenario(s)) size = static_cast<uint32_t>(rng.between(5, 8));
    if (s == kGpu) size = std::min<uint32_t>(size, 40);
    size = std::min(size, remaining);
    if (remaining - size < 5) size = remaining;

    const int64_t built = build_pending(rng, s);
    if (built < 0) {
      weights[s] = 0;
      continue;
    }
    const uint32_t wi = static_cast<uint32_t>(built);
    if (!impossible_scenario(s)) {
      const uint32_t fit = dry_run(rng, wi, size);
      if (fit < size) {
        // Keep the group to what fits (at least 5 pods: a few may stay pending).
        size = std::max(fit, std::min<uint32_t>(5, remaining));
        if (fit == 0 && ++failures[s] >= 2) weights[s] = 0;
      }
    }
    for (uint32_t k = 0; k < size; ++k) add_pod(wi, -1);
    remaining -= size;
  }
}

}  // namespace bulkscore::gen
