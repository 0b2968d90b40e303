// The node snapshot as a structure of arrays.
//
// Residency: host memory (std::vector columns). The CUDA backend mirrors the
// same columns in device memory; SnapshotView is the trivially copyable set of
// raw pointers both backends' rules read, passed by value into kernels.
//
// Layout (docs/snapshot.md has the full picture):
//  * resources: one column per resource, column-major: allocatable[r*N + n].
//    Resource 0 is cpu (millicores), 1 memory (bytes), 2 ephemeral-storage
//    (bytes); 3.. are scalar resources (hugepages-*, extended) in first-seen
//    order. requested[] is the Filter total over the node's pods;
//    nonzero_requested[] (cpu, memory only) the scoring total with the
//    per-container defaults (100m, 200Mi).
//  * strings (label keys and values, taint keys and values, node names, host
//    IPs and protocols) are dictionary-encoded in one dictionary; ids are
//    int32, kNoId (-1) stands for "not in the dictionary" and equals nothing.
//  * per-node lists (labels sorted by key id, taints, images, host ports) are
//    in compressed-row form: offsets[n]..offsets[n+1]. Host ports keep slack
//    per node (port_count[n] <= capacity) so assuming a pod writes in place.
//  * existing pods per node are kept host-side (pods_on_node) for the plugins
//    that need them (PodTopologySpread, InterPodAffinity).
//
// Mutation: add_pod() (assume) changes only the touched node's entries and
// appends the node to the mutation log; structural changes (a new resource
// column, port slack exhausted) bump structure_version() and the device
// mirror re-uploads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "host/common.hpp"
#include "host/input/go_int.hpp"
#include "host/input/model.hpp"

namespace bulkscore {

constexpr int32_t kNoId = -1;

enum ResourceIndex : int32_t { kCpu = 0, kMemory = 1, kEphemeralStorage = 2, kFirstScalar = 3 };

enum class TaintEffect : uint8_t { NoSchedule = 0, PreferNoSchedule = 1, NoExecute = 2 };

// One used host port on a node: (ip, protocol, port), strings as dictionary ids.
struct HostPortEntry {
  int32_t ip;
  int32_t protocol;
  int32_t port;
};

// Trivially copyable view of a snapshot's columns (host or device pointers).
struct SnapshotView {
  uint32_t num_nodes = 0;
  uint32_t num_resources = 0;

  const int64_t* allocatable = nullptr;        // [num_resources * num_nodes]
  const int64_t* requested = nullptr;          // [num_resources * num_nodes]
  const int64_t* nonzero_requested = nullptr;  // [2 * num_nodes]: cpu, memory
  const int64_t* allowed_pods = nullptr;       // [num_nodes]
  const int32_t* pod_count = nullptr;          // [num_nodes]
  const uint8_t* unschedulable = nullptr;      // [num_nodes], 0/1
  const int32_t* node_name_id = nullptr;       // [num_nodes]

  const uint32_t* label_offsets = nullptr;  // [num_nodes + 1]
  const int32_t* label_keys = nullptr;      // sorted by id within a node
  const int32_t* label_values = nullptr;

  const uint32_t* taint_offsets = nullptr;  // [num_nodes + 1]
  const int32_t* taint_keys = nullptr;
  const int32_t* taint_values = nullptr;
  const uint8_t* taint_effects = nullptr;  // TaintEffect

  const uint32_t* image_offsets = nullptr;  // [num_nodes + 1]
  const int32_t* image_ids = nullptr;       // sorted within a node
  const uint64_t* image_masks = nullptr;    // [num_nodes]: bit i = has image id i (< 64)

  const uint32_t* port_offsets = nullptr;  // [num_nodes + 1]; capacity = next - this
  const uint32_t* port_counts = nullptr;   // [num_nodes]
  const HostPortEntry* ports = nullptr;

  // Per string id: the value parsed as a base-10 int64 (Go's ParseInt rules),
  // for NodeAffinity Gt/Lt. string_int_ok[id] == 0 when it does not parse.
  const int64_t* string_int = nullptr;
  const uint8_t* string_int_ok = nullptr;

  int32_t any_ip_id = kNoId;  // id of "0.0.0.0"

  // Dense label columns ("topology domains"): for the label keys most nodes
  // carry (zone, region, hostname, instance type, pools...), the value id of
  // every node in one column, dense_labels[slot * num_nodes + node], kNoId
  // where the node lacks the key. Rules look a key up in O(1) and, on the
  // GPU, with coalesced reads; other keys go through the CSR lists.
  uint32_t num_dense_labels = 0;
  const int32_t* dense_labels = nullptr;

  BULKSCORE_HD int64_t alloc(uint32_t r, uint32_t node) const {
    return allocatable[static_cast<size_t>(r) * num_nodes + node];
  }
  BULKSCORE_HD int64_t req(uint32_t r, uint32_t node) const {
    return requested[static_cast<size_t>(r) * num_nodes + node];
  }
  // Value id of label `key` on `node`, or kNoId when the node lacks the key.
  BULKSCORE_HD int32_t label_value(uint32_t node, int32_t key) const {
    for (uint32_t i = label_offsets[node], e = label_offsets[node + 1]; i < e; ++i) {
      if (label_keys[i] == key) return label_values[i];
      if (label_keys[i] > key) break;
    }
    return kNoId;
  }
  // Binary search: nodes list tens of image names.
  // label_value through a dense column when `slot` >= 0 (see dense_label_slot).
  BULKSCORE_HD int32_t label_value(uint32_t node, int32_t key, int32_t slot) const {
    return slot >= 0 ? dense_labels[static_cast<size_t>(slot) * num_nodes + node] : label_value(node, key);
  }
  BULKSCORE_HD bool has_image(uint32_t node, int32_t image) const {
    uint32_t lo = image_offsets[node], hi = image_offsets[node + 1];
    while (lo < hi) {
      const uint32_t mid = lo + (hi - lo) / 2;
      if (image_ids[mid] < image)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo < image_offsets[node + 1] && image_ids[lo] == image;
  }
};

// String dictionary: id <-> string, plus the integer parse used by Gt/Lt.
class StringDict {
 public:
  int32_t intern(std::string_view s);
  int32_t find(std::string_view s) const;  // kNoId if absent
  const std::string& str(int32_t id) const { return strings_[static_cast<size_t>(id)]; }
  size_t size() const { return strings_.size(); }
  const std::vector<int64_t>& int_values() const { return int_values_; }
  const std::vector<uint8_t>& int_ok() const { return int_ok_; }

 private:
  std::vector<std::string> strings_;
  std::unordered_map<std::string, int32_t> ids_;
  std::vector<int64_t> int_values_;
  std::vector<uint8_t> int_ok_;
};

// Normalizes an image name as ImageLocality does: appends ":latest" when the
// name has no tag (the last ':' does not come after the last '/').
std::string normalize_image_name(std::string_view name);

// Resource-name classes as the scheduler buckets them.
bool is_scalar_resource_name(std::string_view name);    // hugepages-*, extended, kubernetes.io/*, attachable-volumes-*
bool is_extended_resource_name(std::string_view name);  // outside kubernetes.io/, contains '/', not requests.*
bool is_hugepages_resource_name(std::string_view name);

class Snapshot {
 public:
  Snapshot() = default;

  // Builds the columns from nodes and the pods running on them. Running pods
  // must name a node of `nodes` (assemble_cluster guarantees it).
  static Snapshot build(const std::vector<Node>& nodes, const std::vector<Pod>& running_pods);
  // The same, taking the running pods over (no copy of every pod).
  static Snapshot build(const std::vector<Node>& nodes, std::vector<Pod>&& running_pods);

  SnapshotView view() const;
  uint32_t num_nodes() const { return num_nodes_; }
  uint32_t num_resources() const { return static_cast<uint32_t>(resource_names_.size()); }

  // Dictionaries.
  const StringDict& strings() const { return strings_; }
  int32_t string_id(std::string_view s) const { return strings_.find(s); }
  int32_t image_id(std::string_view normalized) const;
  int32_t resource_index(std::string_view name) const;  // -1 if unknown
  // The dense column of label key `key` (a string id), or -1 if it has none.
  int32_t dense_label_slot(int32_t key) const;
  static constexpr uint32_t kMaxDenseLabels = 16;
  const std::string& resource_name(uint32_t r) const { return resource_names_[r]; }
  // Adds a zero column for a resource no node or pod has named yet.
  int32_t intern_resource(std::string_view name);

  // Host-side per-node information.
  const std::string& node_name(uint32_t n) const { return node_names_[n]; }
  int32_t node_index(std::string_view name) const;  // -1 if absent
  const std::vector<uint32_t>& pods_on_node(uint32_t n) const { return pods_on_node_[n]; }
  const Pod& pod(uint32_t i) const { return pods_[i]; }
  size_t num_pods() const { return pods_.size(); }
  // Nodes in upstream's node-tree order: zones (region + zone label) in
  // first-seen order, interleaved one node per zone at a time.
  const std::vector<uint32_t>& tree_order() const { return tree_order_; }

  // Images: size first seen and the number of nodes listing each image id.
  int64_t image_size(int32_t id) const { return image_size_[static_cast<size_t>(id)]; }
  int32_t image_num_nodes(int32_t id) const { return image_num_nodes_[static_cast<size_t>(id)]; }

  // Assumes `pod` on `node`: adds its requests, non-zero requests, pod count
  // and host ports to that node only.
  void add_pod(const Pod& pod, uint32_t node);

  // Change tracking for device mirrors. Versions are unique in the process:
  // every build and every structural change takes a new one.
  uint64_t structure_version() const { return structure_version_; }
  const std::vector<uint32_t>& mutation_log() const { return mutation_log_; }

  // Raw columns (for mirrors and tests).
  const std::vector<int64_t>& allocatable() const { return allocatable_; }
  const std::vector<int64_t>& requested() const { return requested_; }
  const std::vector<int64_t>& nonzero_requested() const { return nonzero_requested_; }
  const std::vector<int32_t>& pod_count() const { return pod_count_; }
  const std::vector<uint32_t>& port_offsets() const { return port_offsets_; }
  const std::vector<uint32_t>& port_counts() const { return port_counts_; }
  const std::vector<HostPortEntry>& ports() const { return ports_; }

  // Everything a device mirror copies, as (pointer, bytes) per column.
  struct Column {
    const char* name;
    const void* data;
    size_t bytes;
  };
  std::vector<Column> columns() const;
  // The view over copies of the columns: `copies[i]` holds columns()[i]
  // (e.g. its device buffer). Counts and ids are the host view's.
  SnapshotView view_over(const std::vector<const void*>& copies) const;

 private:
  // The one table binding each column to its SnapshotView field:
  // fn(name, column vector, view field) for every column, in a fixed order.
  template <class Fn>
  void bind_columns(SnapshotView& v, Fn&& fn) const;

  static uint64_t fresh_structure_version();
  void build_dense_labels();
  void rank_images_by_popularity();
  void account_pod(Pod pod, uint32_t node);
  void add_ports(uint32_t node, const std::vector<HostPortEntry>& wanted);
  void relayout_ports(uint32_t extra_for_node, uint32_t node);

  uint32_t num_nodes_ = 0;
  StringDict strings_;
  std::vector<std::string> resource_names_;
  std::unordered_map<std::string, int32_t> resource_ids_;
  std::vector<std::string> node_names_;
  std::unordered_map<std::string, uint32_t> node_ids_;

  std::vector<int64_t> allocatable_, requested_, nonzero_requested_, allowed_pods_;
  std::vector<int32_t> pod_count_, node_name_id_;
  std::vector<uint8_t> unschedulable_;
  std::vector<uint32_t> label_offsets_, taint_offsets_, image_offsets_;
  std::vector<int32_t> label_keys_, label_values_, taint_keys_, taint_values_, image_ids_;
  std::vector<uint8_t> taint_effects_;
  std::vector<int32_t> dense_label_keys_;  // key id per dense slot
  std::vector<int32_t> dense_labels_;      // [slot * N + node]
  std::vector<uint32_t> port_offsets_, port_counts_;
  std::vector<HostPortEntry> ports_;

  StringDict images_;
  std::vector<int64_t> image_size_;
  std::vector<int32_t> image_num_nodes_;
  std::vector<uint64_t> image_masks_;

  std::vector<Pod> pods_;
  std::vector<std::vector<uint32_t>> pods_on_node_;
  std::vector<uint32_t> tree_order_;

  int32_t any_ip_id_ = kNoId;
  uint64_t structure_version_ = 0;
  std::vector<uint32_t> mutation_log_;
};

// The host ports a pod wants (regular containers and sidecars, hostPort > 0),
// with "" protocol as TCP and "" IP as 0.0.0.0, interned in `dict` when
// `intern` is true, else looked up (kNoId when unknown).
std::vector<HostPortEntry> pod_host_ports(const Pod& pod, StringDict& dict);
std::vector<HostPortEntry> pod_host_ports_lookup(const Pod& pod, const StringDict& dict);

}  // namespace bulkscore
