#include "host/snapshot/snapshot.hpp"

#include <algorithm>
#include <atomic>
#include <limits>
#include <numeric>
#include <type_traits>

#include "host/input/pod_resources.hpp"

namespace bulkscore {

// ---- StringDict -----------------------------------------------------------

int32_t StringDict::intern(std::string_view s) {
  auto it = ids_.find(std::string(s));
  if (it != ids_.end()) return it->second;
  const auto id = static_cast<int32_t>(strings_.size());
  strings_.emplace_back(s);
  ids_.emplace(strings_.back(), id);
  int64_t v = 0;
  const bool ok = parse_go_int64(s, v);
  int_values_.push_back(ok ? v : 0);
  int_ok_.push_back(ok ? 1 : 0);
  return id;
}

int32_t StringDict::find(std::string_view s) const {
  auto it = ids_.find(std::string(s));
  return it == ids_.end() ? kNoId : it->second;
}

std::string normalize_image_name(std::string_view name) {
  const auto colon = name.rfind(':');
  const auto slash = name.rfind('/');
  if (colon == std::string_view::npos || (slash != std::string_view::npos && colon < slash)) {
    return std::string(name) + ":latest";
  }
  return std::string(name);
}

bool is_hugepages_resource_name(std::string_view name) { return name.rfind("hugepages-", 0) == 0; }

bool is_extended_resource_name(std::string_view name) {
  // Native names live in kubernetes.io/ (or have no domain); quota names
  // ("requests.*") are not resources a node offers.
  if (name.find("kubernetes.io/") != std::string_view::npos) return false;
  if (name.find('/') == std::string_view::npos) return false;
  if (name.rfind("requests.", 0) == 0) return false;
  return true;
}

bool is_scalar_resource_name(std::string_view name) {
  return is_extended_resource_name(name) || is_hugepages_resource_name(name) ||
         name.find("kubernetes.io/") != std::string_view::npos || name.rfind("attachable-volumes-", 0) == 0;
}

// ---- host ports -----------------------------------------------------------

namespace {

template <class IdOf>
std::vector<HostPortEntry> collect_host_ports(const Pod& pod, IdOf id_of) {
  std::vector<HostPortEntry> out;
  auto take = [&](const Container& c) {
    for (const auto& p : c.ports) {
      if (p.host_port <= 0) continue;
      const std::string& proto = p.protocol.empty() ? std::string("TCP") : p.protocol;
      const std::string& ip = p.host_ip.empty() ? std::string("0.0.0.0") : p.host_ip;
      out.push_back(HostPortEntry{id_of(ip), id_of(proto), p.host_port});
    }
  };
  // Regular containers and sidecars: only they hold ports while running.
  for (const auto& c : pod.init_containers)
    if (c.restart_policy_always) take(c);
  for (const auto& c : pod.containers) take(c);
  return out;
}

}  // namespace

std::vector<HostPortEntry> pod_host_ports(const Pod& pod, StringDict& dict) {
  return collect_host_ports(pod, [&](const std::string& s) { return dict.intern(s); });
}

std::vector<HostPortEntry> pod_host_ports_lookup(const Pod& pod, const StringDict& dict) {
  return collect_host_ports(pod, [&](const std::string& s) { return dict.find(s); });
}

// ---- Snapshot -------------------------------------------------------------

uint64_t Snapshot::fresh_structure_version() {
  // Process-wide, so two snapshots (or one rebuilt in place) never share a
  // version: a device mirror keyed on it cannot mistake one for the other.
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

namespace {
constexpr uint32_t kPortSlack = 4;  // free host-port slots kept per node

uint8_t effect_code(const std::string& e) {
  if (e == "NoSchedule") return static_cast<uint8_t>(TaintEffect::NoSchedule);
  if (e == "PreferNoSchedule") return static_cast<uint8_t>(TaintEffect::PreferNoSchedule);
  return static_cast<uint8_t>(TaintEffect::NoExecute);
}
}  // namespace

int32_t Snapshot::resource_index(std::string_view name) const {
  auto it = resource_ids_.find(std::string(name));
  return it == resource_ids_.end() ? -1 : it->second;
}

int32_t Snapshot::intern_resource(std::string_view name) {
  const int32_t existing = resource_index(name);
  if (existing >= 0) return existing;
  const auto id = static_cast<int32_t>(resource_names_.size());
  resource_names_.emplace_back(name);
  resource_ids_.emplace(resource_names_.back(), id);
  allocatable_.resize(allocatable_.size() + num_nodes_, 0);
  requested_.resize(requested_.size() + num_nodes_, 0);
  structure_version_ = fresh_structure_version();
  mutation_log_.clear();
  return id;
}

int32_t Snapshot::dense_label_slot(int32_t key) const {
  if (key == kNoId) return -1;
  for (size_t i = 0; i < dense_label_keys_.size(); ++i)
    if (dense_label_keys_[i] == key) return static_cast<int32_t>(i);
  return -1;
}

void Snapshot::build_dense_labels() {
  // The keys most nodes carry, most common first (ties: lower id), those on
  // at least half of the nodes, at most kMaxDenseLabels.
  std::unordered_map<int32_t, uint32_t> count;
  for (int32_t k : label_keys_) ++count[k];
  std::vector<std::pair<uint32_t, int32_t>> keys;
  for (const auto& [k, c] : count)
    if (2 * static_cast<uint64_t>(c) >= num_nodes_) keys.emplace_back(c, k);
  std::sort(keys.begin(), keys.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  if (keys.size() > kMaxDenseLabels) keys.resize(kMaxDenseLabels);
  dense_label_keys_.clear();
  for (const auto& kc : keys) dense_label_keys_.push_back(kc.second);
  dense_labels_.assign(dense_label_keys_.size() * num_nodes_, kNoId);
  for (uint32_t n = 0; n < num_nodes_; ++n)
    for (uint32_t i = label_offsets_[n]; i < label_offsets_[n + 1]; ++i) {
      const int32_t slot = dense_label_slot(label_keys_[i]);
      if (slot >= 0) dense_labels_[static_cast<size_t>(slot) * num_nodes_ + n] = label_values_[i];
    }
}

void Snapshot::rank_images_by_popularity() {
  // Renumber images by the number of nodes listing them (most first, ties in
  // first-seen order), so the popular ones, the only ones that can reach
  // ImageLocality's threshold, get ids below 64 and a bit in each node's mask.
  const size_t count = image_size_.size();
  std::vector<int32_t> by_rank(count);
  std::iota(by_rank.begin(), by_rank.end(), 0);
  std::stable_sort(by_rank.begin(), by_rank.end(), [&](int32_t a, int32_t b) {
    return image_num_nodes_[static_cast<size_t>(a)] > image_num_nodes_[static_cast<size_t>(b)];
  });
  std::vector<int32_t> rank_of(count);
  StringDict ranked;
  std::vector<int64_t> size(count);
  std::vector<int32_t> nodes(count);
  for (size_t r = 0; r < count; ++r) {
    const auto old = static_cast<size_t>(by_rank[r]);
    rank_of[old] = static_cast<int32_t>(r);
    ranked.intern(images_.str(static_cast<int32_t>(old)));
    size[r] = image_size_[old];
    nodes[r] = image_num_nodes_[old];
  }
  images_ = std::move(ranked);
  image_size_ = std::move(size);
  image_num_nodes_ = std::move(nodes);
  image_masks_.assign(num_nodes_, 0);
  for (uint32_t n = 0; n < num_nodes_; ++n) {
    auto first = image_ids_.begin() + image_offsets_[n], last = image_ids_.begin() + image_offsets_[n + 1];
    for (auto it = first; it != last; ++it) {
      *it = rank_of[static_cast<size_t>(*it)];
      if (*it < 64) image_masks_[n] |= uint64_t(1) << *it;
    }
    std::sort(first, last);
  }
}

int32_t Snapshot::image_id(std::string_view normalized) const { return images_.find(normalized); }

int32_t Snapshot::node_index(std::string_view name) const {
  auto it = node_ids_.find(std::string(name));
  return it == node_ids_.end() ? -1 : static_cast<int32_t>(it->second);
}

Snapshot Snapshot::build(const std::vector<Node>& nodes, const std::vector<Pod>& running_pods) {
  return build(nodes, std::vector<Pod>(running_pods));
}

Snapshot Snapshot::build(const std::vector<Node>& nodes, std::vector<Pod>&& running_pods) {
  Snapshot s;
  s.structure_version_ = fresh_structure_version();
  const auto n = static_cast<uint32_t>(nodes.size());
  s.num_nodes_ = n;
  for (const char* r : {"cpu", "memory", "ephemeral-storage"}) {
    s.resource_ids_.emplace(r, static_cast<int32_t>(s.resource_names_.size()));
    s.resource_names_.emplace_back(r);
  }
  s.strings_.intern("");
  // Resources: every name any node offers or any running pod requests.
  for (const auto& node : nodes)
    for (const auto& kv : node.allocatable)
      if (kv.first != "pods" && s.resource_index(kv.first) < 0) {
        s.resource_ids_.emplace(kv.first, static_cast<int32_t>(s.resource_names_.size()));
        s.resource_names_.push_back(kv.first);
      }
  const size_t R = s.resource_names_.size();
  s.allocatable_.assign(R * n, 0);
  s.requested_.assign(R * n, 0);
  s.nonzero_requested_.assign(2 * static_cast<size_t>(n), 0);
  s.allowed_pods_.assign(n, 0);
  s.pod_count_.assign(n, 0);
  s.unschedulable_.assign(n, 0);
  s.node_name_id_.assign(n, kNoId);
  s.label_offsets_.assign(1, 0);
  s.taint_offsets_.assign(1, 0);
  s.image_offsets_.assign(1, 0);
  s.pods_on_node_.assign(n, {});

  for (uint32_t i = 0; i < n; ++i) {
    const Node& node = nodes[i];
    s.node_names_.push_back(node.name);
    s.node_ids_.emplace(node.name, i);
    s.node_name_id_[i] = s.strings_.intern(node.name);
    s.unschedulable_[i] = node.unschedulable ? 1 : 0;
    for (const auto& [name, amount] : node.allocatable) {
      if (name == "pods") {
        s.allowed_pods_[i] = amount;
      } else {
        s.allocatable_[static_cast<size_t>(s.resource_index(name)) * n + i] = amount;
      }
    }
    std::vector<std::pair<int32_t, int32_t>> labels;
    labels.reserve(node.labels.size());
    for (const auto& [k, v] : node.labels) labels.emplace_back(s.strings_.intern(k), s.strings_.intern(v));
    std::sort(labels.begin(), labels.end());
    for (const auto& [k, v] : labels) {
      s.label_keys_.push_back(k);
      s.label_values_.push_back(v);
    }
    s.label_offsets_.push_back(static_cast<uint32_t>(s.label_keys_.size()));
    for (const auto& t : node.taints) {
      s.taint_keys_.push_back(s.strings_.intern(t.key));
      s.taint_values_.push_back(s.strings_.intern(t.value));
      s.taint_effects_.push_back(effect_code(t.effect));
    }
    s.taint_offsets_.push_back(static_cast<uint32_t>(s.taint_keys_.size()));
    // Images: every name of every image; size and node count per name.
    std::vector<int32_t> ids;
    for (const auto& img : node.images) {
      for (const auto& name : img.names) {
        const int32_t id = s.images_.intern(name);
        if (static_cast<size_t>(id) == s.image_size_.size()) {
          s.image_size_.push_back(img.size_bytes);
          s.image_num_nodes_.push_back(0);
        }
        ids.push_back(id);
      }
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (int32_t id : ids) ++s.image_num_nodes_[static_cast<size_t>(id)];
    s.image_ids_.insert(s.image_ids_.end(), ids.begin(), ids.end());
    s.image_offsets_.push_back(static_cast<uint32_t>(s.image_ids_.size()));
  }
  s.build_dense_labels();
  s.rank_images_by_popularity();
  s.any_ip_id_ = s.strings_.intern("0.0.0.0");
  s.strings_.intern("TCP");

  // Host ports: count per node first so the slotted layout is built once.
  std::vector<std::vector<HostPortEntry>> wanted(running_pods.size());
  std::vector<uint32_t> port_need(n, 0);
  std::vector<int32_t> pod_node(running_pods.size(), -1);
  for (size_t p = 0; p < running_pods.size(); ++p) {
    const int32_t node = s.node_index(running_pods[p].node_name);
    if (node < 0)
      throw InputError(running_pods[p].origin + ": pod \"" + running_pods[p].key() + "\" is bound to unknown node \"" +
                       running_pods[p].node_name + "\"");
    pod_node[p] = node;
    wanted[p] = pod_host_ports(running_pods[p], s.strings_);
    port_need[static_cast<uint32_t>(node)] += static_cast<uint32_t>(wanted[p].size());
  }
  s.port_offsets_.assign(n + 1, 0);
  for (uint32_t i = 0; i < n; ++i) s.port_offsets_[i + 1] = s.port_offsets_[i] + port_need[i] + kPortSlack;
  s.port_counts_.assign(n, 0);
  s.ports_.assign(s.port_offsets_[n], HostPortEntry{kNoId, kNoId, 0});

  // Resources named by running pods but offered by no node still get a column.
  for (const auto& pod : running_pods)
    for (const auto& kv : pod_requests(pod))
      if (kv.first != "pods") s.intern_resource(kv.first);

  s.pods_.reserve(running_pods.size());
  for (size_t p = 0; p < running_pods.size(); ++p) {
    const auto node = static_cast<uint32_t>(pod_node[p]);
    s.account_pod(std::move(running_pods[p]), node);
    for (const auto& e : wanted[p]) s.ports_[s.port_offsets_[node] + s.port_counts_[node]++] = e;
  }

  // Node tree order: zones by first appearance, then round-robin over zones.
  std::vector<std::vector<uint32_t>> zones;
  std::unordered_map<std::string, size_t> zone_ids;
  for (uint32_t i = 0; i < n; ++i) {
    const auto& labels = nodes[i].labels;
    // The deprecated beta labels win over the GA ones, as in upstream's GetZoneKey.
    auto get = [&](const char* beta, const char* ga) {
      auto it = labels.find(beta);
      if (it == labels.end()) it = labels.find(ga);
      return it == labels.end() ? std::string() : it->second;
    };
    const std::string region = get("failure-domain.beta.kubernetes.io/region", "topology.kubernetes.io/region");
    const std::string zone = get("failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone");
    // Upstream's zone key: region and zone joined by ":\x00:", empty if both are.
    const std::string key = (region.empty() && zone.empty()) ? std::string() : region + ":\x00:" + zone;
    auto [it, fresh] = zone_ids.emplace(key, zones.size());
    if (fresh) zones.emplace_back();
    zones[it->second].push_back(i);
  }
  s.tree_order_.reserve(n);
  for (size_t round = 0; s.tree_order_.size() < n; ++round)
    for (const auto& z : zones)
      if (round < z.size()) s.tree_order_.push_back(z[round]);

  s.mutation_log_.clear();
  return s;
}

void Snapshot::account_pod(Pod pod, uint32_t node) {
  for (const auto& [name, amount] : pod_requests(pod)) {
    if (name == "pods") continue;
    const int32_t r = intern_resource(name);
    requested_[static_cast<size_t>(r) * num_nodes_ + node] += amount;
  }
  // A pod without containers has no non-zero request at all (counts 0).
  const ResourceList nz = pod_requests_nonzero_for_node(pod);
  const auto amount = [&](const char* name) {
    const auto it = nz.find(name);
    return it == nz.end() ? int64_t(0) : it->second;
  };
  nonzero_requested_[node] += amount("cpu");
  nonzero_requested_[static_cast<size_t>(num_nodes_) + node] += amount("memory");
  pod_count_[node] += 1;
  pods_on_node_[node].push_back(static_cast<uint32_t>(pods_.size()));
  pod.node_name = node_names_[node];
  pods_.push_back(std::move(pod));
}

void Snapshot::add_pod(const Pod& pod, uint32_t node) {
  const uint64_t version_before = structure_version_;
  account_pod(pod, node);
  const size_t dict_size = strings_.size();
  const auto wanted = pod_host_ports(pod, strings_);
  if (!wanted.empty()) add_ports(node, wanted);
  // A host IP never seen before grows the dictionary columns: re-upload.
  if (strings_.size() != dict_size && structure_version_ == version_before) {
    structure_version_ = fresh_structure_version();
    mutation_log_.clear();
  }
  if (structure_version_ == version_before) mutation_log_.push_back(node);
}

void Snapshot::add_ports(uint32_t node, const std::vector<HostPortEntry>& wanted) {
  const uint32_t capacity = port_offsets_[node + 1] - port_offsets_[node];
  if (port_counts_[node] + wanted.size() > capacity) {
    relayout_ports(static_cast<uint32_t>(wanted.size()), node);
  }
  for (const auto& e : wanted) ports_[port_offsets_[node] + port_counts_[node]++] = e;
}

void Snapshot::relayout_ports(uint32_t extra_for_node, uint32_t node) {
  std::vector<uint32_t> offsets(num_nodes_ + 1, 0);
  for (uint32_t i = 0; i < num_nodes_; ++i) {
    const uint32_t need = port_counts_[i] + (i == node ? extra_for_node : 0);
    offsets[i + 1] = offsets[i] + need + kPortSlack;
  }
  std::vector<HostPortEntry> ports(offsets[num_nodes_], HostPortEntry{kNoId, kNoId, 0});
  for (uint32_t i = 0; i < num_nodes_; ++i)
    std::copy_n(ports_.begin() + port_offsets_[i], port_counts_[i], ports.begin() + offsets[i]);
  port_offsets_ = std::move(offsets);
  ports_ = std::move(ports);
  structure_version_ = fresh_structure_version();
  mutation_log_.clear();
}

template <class Fn>
void Snapshot::bind_columns(SnapshotView& v, Fn&& fn) const {
  fn("allocatable", allocatable_, v.allocatable);
  fn("requested", requested_, v.requested);
  fn("nonzero_requested", nonzero_requested_, v.nonzero_requested);
  fn("allowed_pods", allowed_pods_, v.allowed_pods);
  fn("pod_count", pod_count_, v.pod_count);
  fn("unschedulable", unschedulable_, v.unschedulable);
  fn("node_name_id", node_name_id_, v.node_name_id);
  fn("label_offsets", label_offsets_, v.label_offsets);
  fn("label_keys", label_keys_, v.label_keys);
  fn("label_values", label_values_, v.label_values);
  fn("taint_offsets", taint_offsets_, v.taint_offsets);
  fn("taint_keys", taint_keys_, v.taint_keys);
  fn("taint_values", taint_values_, v.taint_values);
  fn("taint_effects", taint_effects_, v.taint_effects);
  fn("image_offsets", image_offsets_, v.image_offsets);
  fn("image_ids", image_ids_, v.image_ids);
  fn("image_masks", image_masks_, v.image_masks);
  fn("port_offsets", port_offsets_, v.port_offsets);
  fn("port_counts", port_counts_, v.port_counts);
  fn("ports", ports_, v.ports);
  fn("string_int", strings_.int_values(), v.string_int);
  fn("string_int_ok", strings_.int_ok(), v.string_int_ok);
  fn("dense_labels", dense_labels_, v.dense_labels);
}

namespace {
SnapshotView counts_only(uint32_t nodes, uint32_t resources, int32_t any_ip, uint32_t dense) {
  SnapshotView v;
  v.num_nodes = nodes;
  v.num_resources = resources;
  v.any_ip_id = any_ip;
  v.num_dense_labels = dense;
  return v;
}
}  // namespace

SnapshotView Snapshot::view() const {
  SnapshotView v =
      counts_only(num_nodes_, num_resources(), any_ip_id_, static_cast<uint32_t>(dense_label_keys_.size()));
  bind_columns(v, [](const char*, const auto& col, auto& field) { field = col.data(); });
  return v;
}

std::vector<Snapshot::Column> Snapshot::columns() const {
  std::vector<Column> out;
  SnapshotView unused;
  bind_columns(unused, [&](const char* name, const auto& col, auto&) {
    out.push_back(Column{name, static_cast<const void*>(col.data()), col.size() * sizeof(col[0])});
  });
  return out;
}

SnapshotView Snapshot::view_over(const std::vector<const void*>& copies) const {
  SnapshotView v =
      counts_only(num_nodes_, num_resources(), any_ip_id_, static_cast<uint32_t>(dense_label_keys_.size()));
  size_t i = 0;
  bind_columns(v, [&](const char* name, const auto&, auto& field) {
    if (i >= copies.size()) throw Error(std::string("view_over: no copy of column ") + name);
    field = static_cast<std::remove_reference_t<decltype(field)>>(copies[i++]);
  });
  return v;
}

}  // namespace bulkscore
