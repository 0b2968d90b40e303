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
//    IPs and protocols, pod namespaces and labels) are dictionary-encoded in
//    one dictionary; ids are int32, kNoId (-1) stands for "not in the
//    dictionary" and equals nothing. Ids hold while the structure version
//    does: compact() drops the strings nothing references any more and
//    renumbers the rest (order kept), a structural change.
//  * per-node lists (labels sorted by key id, taints, images) are in
//    compressed-row form: offsets[n]..offsets[n+1]. Host ports and the pods
//    on each node are slotted: node n owns the range offsets[n]..offsets[n+1]
//    and uses the first count[n] entries, the rest is slack, so assuming or
//    removing a pod rewrites one node's range in place.
//  * the pods on the nodes (running and assumed): per slot the namespace id,
//    the node, flags (terminating, required anti-affinity) and the labels as
//    a (key id, value id) range sorted by key, inside the node's label
//    region. The full Pod objects stay host-side, by pod id.
//
// Mutation: pods are added, removed and updated in place (the touched node's
// entries only) and the node is appended to the mutation log. Node changes
// and new resource columns are structural: structure_version() changes, the
// log is cleared and a device mirror re-uploads. A slotted range that runs
// full is laid out again with fresh slack: that changes only the layout
// version of its own columns (a mirror re-sends those columns). compact()
// (which an Engine runs itself, amortized, after events) releases the
// strings, topology matchers, per-domain sums and existing-term groups that
// nothing references any more; it is structural too.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "host/common.hpp"
#include "host/input/device_groups.hpp"
#include "host/input/devices.hpp"
#include "host/input/go_int.hpp"
#include "host/input/model.hpp"
#include "host/input/resource_names.hpp"
#include "host/snapshot/pod_store.hpp"

namespace bulkscore {

constexpr int32_t kNoId = -1;

// Node data (the NodeData plugin): an entry of a node that has no data in a
// column, and the most reason texts a filter column holds at once (entry
// 1..63 is reason id k, its verdict's reason bit k - 1; bit 63 is the
// plugin's own "no data" reason).
constexpr uint8_t kNodeDataNone = 0xFF;
constexpr uint32_t kMaxNodeDataReasons = 63;

enum ResourceIndex : int32_t { kCpu = 0, kMemory = 1, kEphemeralStorage = 2, kFirstScalar = 3 };

enum class TaintEffect : uint8_t { NoSchedule = 0, PreferNoSchedule = 1, NoExecute = 2 };

// Per-pod flags (SnapshotView::pod_flags).
enum PodFlags : uint8_t {
  kPodTerminating = 1,           // metadata.deletionTimestamp is set
  kPodRequiredAntiAffinity = 2,  // spec.affinity.podAntiAffinity has required terms
};

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
  // 1.0 / allocatable where it is > 0, else 0, beside it: LeastAllocated's
  // exact integer quotients start from a multiply by it (a division costs
  // several times as much per vector lane).
  const double* allocatable_inverse = nullptr;  // [num_resources * num_nodes]
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
  // The same columns as ranks: the node's value's position among the key's
  // distinct values in id order (Snapshot::dense_label_values), -1 where the
  // node lacks the key. Per-domain tables indexed by rank are read in O(1).
  const int32_t* dense_label_ranks = nullptr;

  // The pods on the nodes (running and assumed), slotted per node: node n's
  // pods are the slots pod_offsets[n] .. pod_offsets[n] + pod_count[n]; the
  // slots up to pod_offsets[n + 1] are free (pod_node kNoId). Slot order is
  // the order the pods were added to the node. Topology counting walks a
  // node's slots and compares integers only.
  uint32_t num_pod_slots = 0;
  uint32_t num_pod_slots_pad = 0;  // no padding bytes (see below)
  const uint32_t* pod_offsets = nullptr;        // [num_nodes + 1]
  const int32_t* pod_namespace = nullptr;       // [slot] namespace string id
  const int32_t* pod_node = nullptr;            // [slot] node index, kNoId when free
  const uint8_t* pod_flags = nullptr;           // [slot] PodFlags bits
  const uint32_t* pod_label_offsets = nullptr;  // [slot] first label of the pod
  const uint32_t* pod_label_counts = nullptr;   // [slot]
  const int32_t* pod_label_keys = nullptr;      // sorted by id within a pod
  const int32_t* pod_label_values = nullptr;

  // Topology counters: for each registered matcher m (a namespace and a
  // label selector, Snapshot::topology_matcher), the number of pods on each
  // node that it matches, not counting terminating pods:
  // topology_counts[m * num_nodes + n]. Kept current by every mutation.
  uint32_t num_topology_matchers = 0;
  uint32_t num_topology_matchers_pad = 0;  // no padding bytes (see below)
  const int32_t* topology_counts = nullptr;

  // Existing pods' required anti-affinity term groups on a key that names
  // one node per value (Snapshot::ExistingAffinityTerm::node_row): the
  // term's occurrences on each node's pods, term_counts[row * num_nodes + n].
  uint32_t num_term_rows = 0;
  uint32_t num_term_rows_pad = 0;  // no padding bytes (see below)
  const int32_t* term_counts = nullptr;

  // Devices (docs/gpu-placement.md), once Snapshot::configure_devices has
  // named the model: node n's devices are device_offsets[n] ..
  // device_offsets[n + 1] in index order, each with its units (capacity)
  // and the units no pod holds (negative when running pods over-commit it).
  // Without a model every node has none.
  const uint32_t* device_offsets = nullptr;  // [num_nodes + 1]
  const int32_t* device_units = nullptr;     // [devices]
  const int64_t* device_free = nullptr;      // [devices] (int64: running pods may over-commit without bound)
  // Per node, the classes of the GPU pods on it (device_class_bit, OR-ed).
  const uint64_t* device_pod_classes = nullptr;  // [num_nodes]

  // Shared device groups (docs/gpu-placement.md), once
  // Snapshot::configure_device_groups has run: one row per device resource
  // some group asks for (Snapshot::group_device_type), and per node the
  // devices of it that no group holds: group_free[row * num_nodes + n].
  uint32_t num_group_device_types = 0;
  uint32_t num_group_device_types_pad = 0;  // no padding bytes (see below)
  const int32_t* group_free = nullptr;

  // Node data (the NodeData plugin, docs/plugins.md): named per-node
  // columns the embedder fills (Snapshot::update_node_data). Filter rows:
  // node_filter_data[row * num_nodes + n] is 0 (the node passes), 1..63
  // (it fails with that reason id of the column) or kNodeDataNone (no
  // data). Score rows: node_score_data[row * num_nodes + n] is 0..100 or
  // kNodeDataNone.
  uint32_t num_node_filter_rows = 0;
  uint32_t num_node_score_rows = 0;
  const uint8_t* node_filter_data = nullptr;
  const uint8_t* node_score_data = nullptr;

  BULKSCORE_HD uint8_t node_filter_entry(uint32_t row, uint32_t node) const {
    return node_filter_data[static_cast<size_t>(row) * num_nodes + node];
  }
  BULKSCORE_HD uint8_t node_score_entry(uint32_t row, uint32_t node) const {
    return node_score_data[static_cast<size_t>(row) * num_nodes + node];
  }

  BULKSCORE_HD int32_t topology_count(uint32_t matcher, uint32_t node) const {
    return topology_counts[static_cast<size_t>(matcher) * num_nodes + node];
  }
  BULKSCORE_HD int32_t term_count(uint32_t row, uint32_t node) const {
    return term_counts[static_cast<size_t>(row) * num_nodes + node];
  }

  BULKSCORE_HD int32_t group_free_devices(uint32_t row, uint32_t node) const {
    return group_free[static_cast<size_t>(row) * num_nodes + node];
  }

  BULKSCORE_HD int64_t alloc(uint32_t r, uint32_t node) const {
    return allocatable[static_cast<size_t>(r) * num_nodes + node];
  }
  BULKSCORE_HD int64_t req(uint32_t r, uint32_t node) const {
    return requested[static_cast<size_t>(r) * num_nodes + node];
  }
  // Value id of label `key` on `node`, or kNoId when the node lacks the key.
  // Binary search: nothing bounds a node's labels, and a pod with C spread
  // constraints looks up C keys per node.
  BULKSCORE_HD int32_t label_value(uint32_t node, int32_t key) const {
    const uint32_t at = lower_bound_key(label_keys, label_offsets[node], label_offsets[node + 1], key);
    return at < label_offsets[node + 1] && label_keys[at] == key ? label_values[at] : kNoId;
  }
  // Binary search: nodes list tens of image names.
  BULKSCORE_HD int32_t dense_rank(int32_t slot, uint32_t node) const {
    return dense_label_ranks[static_cast<size_t>(slot) * num_nodes + node];
  }
  // label_value through a dense column when `slot` >= 0 (see dense_label_slot).
  BULKSCORE_HD int32_t label_value(uint32_t node, int32_t key, int32_t slot) const {
    return slot >= 0 ? dense_labels[static_cast<size_t>(slot) * num_nodes + node] : label_value(node, key);
  }
  // Value id of label `key` on the pod in `slot`, or kNoId.
  BULKSCORE_HD int32_t pod_label_value(uint32_t slot, int32_t key) const {
    const uint32_t first = pod_label_offsets[slot], last = first + pod_label_counts[slot];
    const uint32_t at = lower_bound_key(pod_label_keys, first, last, key);
    return at < last && pod_label_keys[at] == key ? pod_label_values[at] : kNoId;
  }
  // The first position in keys[lo, hi) (sorted) whose key is not below `key`.
  static BULKSCORE_HD uint32_t lower_bound_key(const int32_t* keys, uint32_t lo, uint32_t hi, int32_t key) {
    while (lo < hi) {
      const uint32_t mid = lo + (hi - lo) / 2;
      if (keys[mid] < key)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
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
// Every byte of a view is a member (the _pad fields fill what would be
// padding): two views of the same columns compare equal byte for byte, and
// what is copied to the device holds no indeterminate bytes.
static_assert(std::has_unique_object_representations_v<SnapshotView>, "SnapshotView has padding");

// String dictionary: id <-> string, plus the integer parse used by Gt/Lt.
class StringDict {
 public:
  int32_t intern(std::string_view s);
  int32_t find(std::string_view s) const;  // kNoId if absent
  const std::string& str(int32_t id) const { return strings_[static_cast<size_t>(id)]; }
  size_t size() const { return strings_.size(); }
  const std::vector<int64_t>& int_values() const { return int_values_; }
  const std::vector<uint8_t>& int_ok() const { return int_ok_; }
  // A dictionary of the strings whose `keep` entry is set, in id order (so
  // renumbered ids keep their order); new_ids[old id] is each one's new id,
  // kNoId for those left out.
  StringDict kept(const std::vector<uint8_t>& keep, std::vector<int32_t>& new_ids) const;

 private:
  std::vector<std::string> strings_;
  std::unordered_map<std::string, int32_t> ids_;
  std::string lookup_;  // intern's key buffer
  std::vector<int64_t> int_values_;
  std::vector<uint8_t> int_ok_;
};

// Normalizes an image name as ImageLocality does: appends ":latest" when the
// name has no tag (the last ':' does not come after the last '/').
std::string normalize_image_name(std::string_view name);



// A label selector compiled against a snapshot's dictionary (canonical: the
// same selector gives the same value). matchLabels entries become In with
// one value; values sorted, requirements sorted and deduplicated.
struct CompiledRequirement {
  enum Op : uint8_t { In = 0, NotIn = 1, Exists = 2, DoesNotExist = 3 };
  int32_t key = kNoId;
  Op op = In;
  std::vector<int32_t> values;  // sorted, unique
  bool operator==(const CompiledRequirement& o) const { return key == o.key && op == o.op && values == o.values; }
  bool operator<(const CompiledRequirement& o) const {
    if (key != o.key) return key < o.key;
    if (op != o.op) return op < o.op;
    return values < o.values;
  }
};

// When Snapshot::maybe_compact releases what nothing references any more
// (docs/snapshot.md, "Releasing what nothing references"): once the dead
// entries of one kind (strings, topology matchers, existing-term groups)
// reach `dead_share` of its live ones and at least `min_dead`. Checking
// costs a pass over the snapshot, so maybe_compact checks only after a
// kind's stored entries grew, since the last check, by what would make it
// due if all of the growth had died (and at least a quarter of that bound):
// amortized, a constant per entry ever added. {0, 0}: after every event
// that left anything dead (tests).
struct CompactionPolicy {
  double dead_share = 0.5;
  uint32_t min_dead = 256;
};

class Snapshot {
 public:
  Snapshot() = default;
  // A copy is a different snapshot for a device mirror: it takes a fresh
  // structure version and starts with an empty mutation log, so a mirror of
  // the original never takes the copy for it. A move carries the version
  // and the log (the moved-from snapshot is left at version 0, which no
  // mirror accepts, and must be assigned before it is used again).
  Snapshot(const Snapshot&) = default;
  Snapshot& operator=(const Snapshot&) = default;
  Snapshot(Snapshot&&) noexcept = default;
  Snapshot& operator=(Snapshot&&) noexcept = default;

  // Builds the columns from nodes and the pods running on them. Running pods
  // must name a node of `nodes` (assemble_cluster guarantees it). Node index
  // = position in `nodes`; pod id = position in `running_pods`.
  static Snapshot build(const std::vector<Node>& nodes, const std::vector<Pod>& running_pods);
  // The same, taking the running pods over (no copy of every pod).
  static Snapshot build(const std::vector<Node>& nodes, std::vector<Pod>&& running_pods);

  SnapshotView view() const;
  uint32_t num_nodes() const { return num_nodes_; }
  // Nodes whose spec.unschedulable is set (cordoned): where none is,
  // NodeUnschedulable's Filter passes every node and is left out.
  uint32_t cordoned_nodes() const { return cordoned_nodes_; }
  uint32_t num_resources() const { return static_cast<uint32_t>(resource_names_.size()); }

  // Dictionaries.
  const StringDict& strings() const { return strings_; }
  int32_t string_id(std::string_view s) const { return strings_.find(s); }
  int32_t image_id(std::string_view normalized) const;
  const std::string& image_name(int32_t id) const { return images_.str(id); }
  size_t num_images() const { return images_.size(); }
  int32_t resource_index(std::string_view name) const;  // -1 if unknown
  // Whether every resource the pod requests ("pods" aside) has its column:
  // nearly always, and then nothing about the pod is structural.
  bool has_resource_columns(const Pod& pod) const;
  // Quantities the resource scores stay within [0, 100] on: every
  // allocatable and requested amount in [0, kTameQuantity], 2^55, where the
  // rules' products by 100 of sums of two amounts stay below 2^63. Requests
  // whose sums wrap (valid quantities near 2^63) or a negative allocatable
  // (the C++ API) can take a score outside [0, 100], and upstream's
  // framework then fails the pod's cycle: the resource plugins ask the
  // engine to check every score (PrepareResult::check_score_range).
  static constexpr int64_t kTameQuantity = int64_t(1) << 55;
  static bool tame_quantity(int64_t v) {
    return static_cast<uint64_t>(v) <= static_cast<uint64_t>(kTameQuantity);  // negatives are huge unsigned
  }
  bool quantities_tame() const { return !wild_quantities_; }
  // Serial (interning): once a quantity outside the tame range was written,
  // scans whether one is still there (one was removed or its node left).
  // Nothing to do otherwise.
  void recheck_quantities();
  // The dense column of label key `key` (a string id), or -1 if it has none.
  int32_t dense_label_slot(int32_t key) const;
  uint32_t num_dense_labels() const { return static_cast<uint32_t>(dense_label_keys_.size()); }
  // The distinct value ids of dense slot `slot`, ascending: rank r is
  // dense_label_values(slot)[r].
  const std::vector<int32_t>& dense_label_values(int32_t slot) const {
    return dense_label_values_[static_cast<size_t>(slot)];
  }
  // The rank of `value` in dense slot `slot`, or -1 when no node has it.
  int32_t dense_label_rank_of(int32_t slot, int32_t value) const;
  // The nodes whose value of dense slot `slot` has rank `rank`, ascending
  // ([first, last)): a domain's nodes without a pass over the column (a
  // zone whose spreading verdict flipped, for the batch cache).
  std::pair<const uint32_t*, const uint32_t*> dense_label_nodes(int32_t slot, int32_t rank) const {
    const std::vector<uint32_t>& at = dense_rank_offsets_[static_cast<size_t>(slot)];
    const uint32_t* nodes = dense_rank_nodes_.data() + static_cast<size_t>(slot) * num_nodes_;
    return {nodes + at[static_cast<size_t>(rank)], nodes + at[static_cast<size_t>(rank) + 1]};
  }
  // How many nodes lack the key of dense column `slot`.
  uint32_t dense_label_missing(int32_t slot) const { return dense_label_missing_[static_cast<size_t>(slot)]; }
  // Whether no two nodes share a value of dense column `slot` (a hostname
  // key): a node's domain of the key is the node alone.
  bool dense_label_one_node_per_value(int32_t slot) const {
    return dense_label_values(slot).size() + dense_label_missing(slot) == num_nodes_;
  }
  int32_t dense_label_key(uint32_t slot) const { return dense_label_keys_[slot]; }
  static constexpr uint32_t kMaxDenseLabels = 16;
  const std::string& resource_name(uint32_t r) const { return resource_names_[r]; }
  // Adds a zero column for a resource no node or pod has named yet (structural).
  int32_t intern_resource(std::string_view name);

  // Host-side per-node information.
  const std::string& node_name(uint32_t n) const { return node_names_[n]; }
  int32_t node_index(std::string_view name) const;  // -1 if absent
  // Nodes in upstream's node-tree order: zones (region + zone label) in the
  // order they appeared, one node per zone at a time; within a zone, nodes in
  // the order they joined it. add/update/remove_node keep it as upstream's
  // node tree does (a zone left empty disappears; a node whose zone label
  // changes moves to the end of its new zone).
  const std::vector<uint32_t>& tree_order() const { return tree_order_; }

  // Images: size first seen and the number of nodes listing each image id.
  int64_t image_size(int32_t id) const { return image_size_[static_cast<size_t>(id)]; }
  int32_t image_num_nodes(int32_t id) const { return image_num_nodes_[static_cast<size_t>(id)]; }

  // ---- pods --------------------------------------------------------------
  // A pod id is stable while the pod is in the snapshot; the id of a removed
  // pod is given to the next pod added. The full Pod objects stay host-side
  // (explain output, and the plugins' host-side preparation, e.g. existing
  // pods' required anti-affinity terms); the device sees the slot columns.
  static constexpr uint32_t kNoPod = UINT32_MAX;
  struct IdRange {
    const uint32_t* first;
    const uint32_t* last;
    const uint32_t* begin() const { return first; }
    const uint32_t* end() const { return last; }
    size_t size() const { return static_cast<size_t>(last - first); }
  };
  // The ids of the pods on node `n`, in slot order.
  IdRange pods_on_node(uint32_t n) const {
    const uint32_t* at = slot_pod_id_.data() + pod_offsets_[n];
    return IdRange{at, at + pod_count_[n]};
  }
  size_t num_pods() const { return num_live_pods_; }
  uint32_t pod_id_bound() const { return static_cast<uint32_t>(pods_.size()); }  // every id is below
  bool has_pod(uint32_t id) const { return id < pod_slot_.size() && pod_slot_[id] != kNoPod; }
  const Pod& pod(uint32_t id) const { return pods_[id]; }
  uint32_t pod_slot(uint32_t id) const { return pod_slot_[id]; }
  // How many host-port entries the pod holds: a node's entries are its
  // pods', in slot order, this many each.
  uint32_t pod_num_ports(uint32_t id) const { return pod_num_ports_[id]; }
  // pod(id).priority, from a compact column: preemption's scans for pods of
  // lower priority read it for every pod of every node.
  int32_t pod_priority(uint32_t id) const { return pod_priority_[id]; }
  uint32_t pod_node(uint32_t id) const { return static_cast<uint32_t>(pod_node_[pod_slot_[id]]); }
  // The pod with this namespace and name (the one added last if several
  // share it), or kNoPod.
  uint32_t find_pod(std::string_view namespace_name, std::string_view name) const;

  // ---- mutations -----------------------------------------------------------
  // Assumes `pod` on `node`: adds its requests, non-zero requests, pod count,
  // host ports and a pod slot (namespace, labels, flags) to that node only.
  // Returns the pod id. pod.node_name is set to the node's name.
  uint32_t add_pod(const Pod& pod, uint32_t node) { return add_pod(Pod(pod), node); }
  uint32_t add_pod(Pod&& pod, uint32_t node);
  // Removes the exact effects of add_pod (or of the build) for that pod and
  // returns the Pod. remove_pod(id) throws Error for an id that is not in the
  // snapshot; the by-name form returns nullopt when there is no such pod.
  Pod remove_pod(uint32_t id);
  std::optional<Pod> remove_pod(std::string_view namespace_name, std::string_view name);
  // remove_pod then add_pod, on `updated.node_name` when it is set, else on
  // the pod's node. The pod keeps its id. The by-pod form finds the pod by
  // `updated`'s namespace and name and throws InputError when there is none.
  uint32_t update_pod(uint32_t id, const Pod& updated);
  uint32_t update_pod(const Pod& updated);

  // Node changes. add_node appends the node (index num_nodes()) and throws
  // InputError if its name is taken. update_node replaces the node of that
  // name (InputError if absent); its pods and their accounting stay. Both are
  // structural, except an update that leaves labels, taints and images as
  // they are: allocatable, pods capacity and unschedulable are rewritten in
  // place and the node is logged. remove_node drops the node and the pods on
  // it, returning those pods (their ids become free); later nodes' indices
  // shift down by one. InputError if there is no such node.
  uint32_t add_node(const Node& node);
  void update_node(const Node& node);
  std::vector<Pod> remove_node(std::string_view name);

  // ---- devices (docs/gpu-placement.md) ------------------------------------------
  // Names how nodes publish devices and pods hold them, and lays the device
  // columns out from the nodes' allocatable and every pod's index
  // annotation (structural). From then on add_pod, remove_pod and
  // update_pod charge and release exactly the devices a pod's annotation
  // lists, and node changes lay the columns out again. InputError for a pod
  // whose device annotations are malformed.
  void configure_devices(const DeviceModel& model);
  const std::optional<DeviceModel>& device_model() const { return device_model_; }
  uint32_t device_count(uint32_t n) const { return device_offsets_[n + 1] - device_offsets_[n]; }
  int32_t device_units(uint32_t n, uint32_t i) const { return device_units_[device_offsets_[n] + i]; }
  int64_t device_free(uint32_t n, uint32_t i) const { return device_free_[device_offsets_[n] + i]; }
  // What the last layout found wrong with the cluster (a node with more
  // devices than kMaxDevicesPerNode, a pod holding a device its node lacks
  // or more than is free, devices held by a pod that asks for none), one
  // line each; the call clears them.
  std::vector<std::string> take_device_warnings();
  // Upper bounds of what the GPU policies divide by their normalizers
  // (GpuDotProduct, GpuClustering: plugins/gpu_baselines.hpp), so that
  // they know when a score may leave [0, 100]. Each is at least the
  // largest its quantity is now, so a check it gates is sometimes run for
  // nothing and never skipped where it was needed: the cpu bound is raised
  // where a node is written and never lowered (a large node that left
  // keeps the checks on until the next load); the device bounds are
  // counted afresh whenever the device columns are laid out.
  struct AmountBounds {
    int64_t cpu_allocatable = 0;  // a node's allocatable cpu (millicores)
    int64_t node_units = 0;       // a node's device units together
    int64_t device_units = 0;     // one device's units
    bool overdrawn = false;       // a device's free units went below 0
  };
  const AmountBounds& amount_bounds() const { return amount_bounds_; }

  // ---- shared device groups (docs/gpu-placement.md) ---------------------------
  // Names the groups and how nodes and pods take part, and binds each group
  // from its status and from the devices annotation of the pods that name
  // it (structural). From then on a pod added with the annotation on its
  // group's node joins it (the first one binds an unbound group to the
  // devices it lists), and removing the group's last pod releases them.
  // Problems found on the way (a pod naming an unknown group, a group bound
  // elsewhere, devices the node lacks or another group holds) are warnings
  // (take_device_warnings). InputError for malformed annotations.
  void configure_device_groups(std::vector<SharedDeviceGroup> groups, const DeviceGroupModel& model);
  const std::optional<DeviceGroupModel>& device_group_model() const { return group_model_; }
  // A group more, or one fewer (releasing what it holds); both structural.
  // InputError when the name is taken; false when there is no such group.
  void add_device_group(SharedDeviceGroup group);
  bool remove_device_group(std::string_view name);
  uint32_t num_device_groups() const { return static_cast<uint32_t>(groups_.size()); }
  int32_t device_group_index(std::string_view name) const;  // -1 if absent
  const SharedDeviceGroup& device_group(uint32_t g) const { return groups_[g]; }
  struct GroupBinding {
    int32_t node = -1;     // -1: not bound
    GroupDevices devices;  // what it holds there, by resource
    uint32_t members = 0;  // its pods on the node
  };
  const GroupBinding& device_group_binding(uint32_t g) const { return bindings_[g]; }
  // A group's binding and whether its status is history (a released
  // binding is never taken from the status again): what Reserve records so
  // that Unreserve can give it back.
  struct GroupState {
    GroupBinding binding;
    bool status_superseded = false;
  };
  GroupState device_group_state(uint32_t g) const { return GroupState{bindings_[g], status_superseded_[g] != 0}; }
  // Unreserve (SharedDeviceGroup): group `g` as `before` had it, once the
  // pods that joined it since are removed: a binding no pod held (from the
  // group's status) is bound again on its node and devices, and the status
  // flag restored. Logged for device mirrors.
  void restore_device_group(uint32_t g, const GroupState& before);
  // The rows of SnapshotView::group_free: the resources groups ask for, sorted.
  uint32_t num_group_device_types() const { return static_cast<uint32_t>(group_types_.size()); }
  const std::string& group_device_type(uint32_t row) const { return group_types_[row]; }
  int32_t group_device_row(std::string_view resource) const;  // -1 if no group asks for it
  // The most devices of the row's resource any node has.
  int32_t group_device_max(uint32_t row) const { return group_type_max_[row]; }
  // The devices of the row's resource on `node` that no group holds, ascending.
  std::vector<int32_t> group_free_device_ids(uint32_t node, uint32_t row) const;

  // ---- topology counters ------------------------------------------------------
  // A matcher is a conjunction of clauses, each a namespace set (or every
  // namespace) and a label selector (labels.Selector semantics; an empty
  // selector matches every pod); its counters are one row of
  // SnapshotView::topology_counts: per node, the pods there that every
  // clause matches, terminating pods left out unless `count_terminating`
  // (PodTopologySpread leaves them out, InterPodAffinity counts them). The
  // first registration counts from the pod columns (O(pod slots)), and
  // add_pod, remove_pod, update_pod, add_node and remove_node keep every row
  // current. Registering a new matcher interns the clauses' strings and
  // re-lays the counters column (a mirror re-sends that column only); it is
  // not structural. A matcher stays registered while it counts some pod:
  // compact() drops those that count none (with their rows and per-domain
  // sums; a pod that needs one again registers it afresh) and renumbers the
  // rows of the others, order kept. So a row (and the string ids in a
  // matcher) holds while structure_version() does.
  // InputError for an operator other than In, NotIn, Exists, DoesNotExist.
  //
  // Costs (a pod may carry thousands of terms or constraints, and the API
  // server bounds neither): finding a matcher hashes its compiled form
  // (identical clauses of one conjunction count once); a pod mutation checks
  // only the matchers filed under one of the pod's labels (a matcher is
  // filed under one In or Exists requirement every pod it counts must meet)
  // and those with no such requirement; registering a batch walks the pod
  // slots once for all its new matchers, checking each slot against the new
  // matchers filed under its labels. Of the requirements a matcher could be
  // filed under, the one with the fewest values and then the fewest
  // matchers filed under them is taken: the successive ReplicaSets of a
  // Deployment ({app, pod-template-hash}) are filed under their hashes, not
  // all under their app.
  struct PodMatchClause {
    bool all_namespaces = false;
    std::vector<std::string> namespaces;  // ignored when all_namespaces
    LabelSelector selector;
  };
  uint32_t topology_matcher(const std::vector<PodMatchClause>& all_of, bool count_terminating);
  // Several at once (one walk over the pod slots for all the new ones): the
  // rows, in the order of `matchers`.
  std::vector<uint32_t> topology_matchers(const std::vector<std::vector<PodMatchClause>>& matchers,
                                          bool count_terminating);
  // The row of an already registered matcher, or -1.
  int32_t find_topology_matcher(const std::vector<PodMatchClause>& all_of, bool count_terminating) const;
  // The one-clause matcher of one namespace without terminating pods
  // (PodTopologySpread's counting).
  uint32_t topology_matcher(std::string_view namespace_name, const LabelSelector& selector);
  int32_t find_topology_matcher(std::string_view namespace_name, const LabelSelector& selector) const;
  uint32_t num_topology_matchers() const { return static_cast<uint32_t>(matchers_.size()); }
  const std::vector<int32_t>& topology_counts() const { return topology_counts_; }
  // The least of matcher m's node counters over every node, where the
  // snapshot knows it without a walk (false: the caller walks). It is
  // kept through every count change while some node holds it, and lost
  // when the last one moves up or the rows are laid out again, until
  // refresh_least_topology_count (PodTopologySpread's intern: a hard
  // hostname constraint's PreFilter minimum, which was a walk over every
  // node's counter per pod).
  bool least_topology_count(uint32_t m, int32_t& least) const {
    if (m >= at_least_count_.size() || at_least_count_[m] == 0) return false;
    least = least_count_[m];
    return true;
  }
  void refresh_least_topology_count(uint32_t m);
  // Whether matcher `m` counts the pod in `slot` (recounting, tests).
  bool topology_matcher_counts_slot(uint32_t m, uint32_t slot) const;
  // Work the matchers cost so far (tests and benchmarks hold the costs
  // above with these): `slot_checks`, matcher-against-pod checks by
  // registration and by pod mutations; `compares`, matcher equality
  // comparisons while registering.
  struct MatcherWork {
    uint64_t slot_checks = 0;
    uint64_t compares = 0;
  };
  const MatcherWork& matcher_work() const { return matcher_work_; }

  // A matcher's counters summed per value of a label key that has a dense
  // column: sums[r] over the nodes whose value has rank r
  // (dense_label_values), and a last entry for the nodes without the key.
  // PodTopologySpread's per-domain counts then cost a read per domain, not a
  // pass over the nodes. Registered (first count O(nodes)) before prepare,
  // kept current by every pod mutation and recounted on every structural
  // change. topology_domain_sums returns nullptr for a combination never
  // registered, or whose key has no dense column (now).
  void register_topology_domain_sums(uint32_t matcher, int32_t key);
  const std::vector<int64_t>* topology_domain_sums(uint32_t matcher, int32_t key) const;

  // ---- existing pods' pod (anti-)affinity terms -------------------------------
  // Every pod (anti-)affinity term of the pods on the nodes, grouped by the
  // term itself: the pods of one workload share their terms, so
  // InterPodAffinity matches each distinct term against the incoming pod
  // once and reads its per-domain counts instead of walking the pods.
  // add_pod, remove_pod, update_pod and remove_node keep the counts current;
  // a node whose labels change moves its pods' terms to its new domains.
  // Terminating pods count, as in upstream's NodeInfo. A group whose pods
  // are gone stays, with no domains and no occurrences, until compact()
  // drops it (indices hold while structure_version() does).
  struct ExistingAffinityTerm {
    enum Kind : uint8_t { kRequiredAffinity, kRequiredAntiAffinity, kPreferredAffinity, kPreferredAntiAffinity };
    Kind kind = kRequiredAffinity;
    int32_t weight = 0;  // preferred terms; 0 for required ones
    // Upstream's AffinityTerm: the namespace set (the term's list, or the
    // owning pod's namespace when the list is empty and namespaceSelector is
    // nil), the namespaceSelector (nil matches no namespace) and the label
    // selector (nil matches no pod).
    std::vector<std::string> namespaces;
    std::optional<LabelSelector> namespace_selector;
    std::optional<LabelSelector> selector;
    std::string topology_key;
    int32_t key_id = kNoId;
    // The term's occurrences on the pods of the snapshot, on nodes with the
    // key or not: 0 when no pod holds it any more (compact() drops it).
    int64_t occurrences = 0;
    // Occurrences of the term on nodes that carry topology_key, by the value
    // id the node has (a pod repeating a term counts it twice, as upstream's
    // per-term loops do). Only positive counts are kept.
    std::map<int32_t, int64_t> domains;
    // The same counts by rank of the key's dense label column
    // (dense_label_values), when the key has one (dense_slot >= 0) and the
    // group's pods hold at least an eighth of the key's values (dropped
    // below a sixteenth): a hostname term of a large workload is added per
    // pod without a lookup per entry, and a small one costs no N-long vector.
    // Empty otherwise: read `domains`.
    int32_t dense_slot = -1;
    std::vector<int64_t> by_rank;
    // A required anti-affinity group on a key that names one node per value
    // (a hostname key; Snapshot::dense_label_one_node_per_value) that holds
    // pods there: its row of SnapshotView::term_counts, the occurrences per
    // node, so that InterPodAffinity's Filter reads the node's own count and
    // a query holds no table of one count per node (a ReplicaSet's pod would
    // otherwise build, copy and compare a table of its predecessors, work
    // quadratic in the pods). Every such group with by_rank has one; a
    // sparser group gets one from its first pod while the sparser groups'
    // rows fit Snapshot::sparse_term_row_budget(), and stays in its key's
    // table otherwise. -1 when none. A group that holds no more pods on the
    // key gives its row up (zeros, kept for the next new row, or taken away
    // at the end), and a new row takes a row given up or is appended; no
    // other row moves. Every row is laid out anew (term_rows_version) when
    // the dense columns change or compact() renumbers the groups.
    int32_t node_row = -1;
  };
  const std::vector<ExistingAffinityTerm>& existing_affinity_terms() const { return affinity_terms_; }
  // The indices (ascending) of the groups whose label selector a pod with
  // `labels` may meet: every group it meets, and few others. Each group is
  // filed under one requirement every pod it selects meets (a matchLabels
  // entry or an In value, else an Exists key; a nil selector nowhere), so a
  // pod looks at the groups filed under its own labels, not at every group.
  std::vector<uint32_t> affinity_term_candidates(const StringMap& labels) const;
  // The group of term `t` of `owner` (a pod's term of that kind and
  // weight), or -1 when no pod of the snapshot holds it.
  int32_t affinity_term_group(const Pod& owner, const PodAffinityTerm& t, ExistingAffinityTerm::Kind kind,
                              int32_t weight) const;
  // How many groups without by_rank may hold a row of term_counts (see
  // ExistingAffinityTerm::node_row): 16 MiB of rows, at least 8 and at
  // most 256, unless limit_sparse_term_rows set another number. Rows are
  // node-long, so a budget in bytes bounds both the memory and what a device
  // mirror re-sends when one is added.
  size_t sparse_term_row_budget() const;
  // Sets that number (0: every sparse group stays in its key's table, as
  // the equivalence tests run one path against the other) and lays the rows
  // out anew. Decisions never depend on it.
  void limit_sparse_term_rows(size_t rows);

  // ---- node data (the NodeData plugin; docs/snapshot.md) -----------------------
  // Named per-node columns an embedder fills (Engine::set_node_filter and
  // the rest): a filter column holds per node a verdict (passes, or fails
  // with one of at most 63 reason texts in use at once), a score column a
  // score 0..100; a node may have no data in a column. An entry that
  // changes logs its node (the columns are kNodeRows: a mirror re-sends the
  // node's entries, a batch cache filters and scores it again). A new
  // column is a new row of "no data" entries: a new layout version of the
  // view columns, no node logged, not structural. Nodes
  // added later have no data; a removed node's entries go with it;
  // update_node keeps them. Columns are never removed (clearing empties
  // one). Column names are qualified names (label-key syntax), one name
  // space for both kinds.
  enum class NodeDataKind : uint8_t { kFilter = 0, kScore = 1 };
  struct NodeDataUpdate {
    enum class Op : uint8_t { kPass, kFail, kScore, kClear };
    uint32_t node = 0;
    Op op = Op::kClear;
    int64_t score = 0;   // kScore: 0..100
    std::string reason;  // kFail: the reason text FitError messages and explain show
  };
  // The column named `name`, or -1.
  int32_t find_node_data_column(std::string_view name) const;
  // The column named `name`, made (every node without data) when absent.
  // InputError when `name` is not a qualified name, or names a column of
  // the other kind.
  uint32_t node_data_column(std::string_view name, NodeDataKind kind);
  uint32_t num_node_data_columns() const { return static_cast<uint32_t>(node_data_columns_.size()); }
  const std::string& node_data_column_name(uint32_t c) const { return node_data_columns_[c].name; }
  NodeDataKind node_data_column_kind(uint32_t c) const { return node_data_columns_[c].kind; }
  // Applies `updates` to column c, all or nothing: InputError, nothing
  // changed, for an op of the other kind (kPass/kFail on a filter column,
  // kScore on a score column; kClear on either), a node out of range or
  // given twice, a score outside 0..100, a reason that is empty, over 256
  // bytes, or holds what a message would escape (control characters,
  // invalid UTF-8), or more than 63 distinct reasons in use in the column
  // afterwards. Logs each node whose entry changed (past the log's bound,
  // below, the change is structural instead).
  void update_node_data(uint32_t c, const std::vector<NodeDataUpdate>& updates);
  // The same by name and kind, the column made when absent (only if the
  // updates are taken: a refused update leaves no new column behind);
  // returns the column.
  uint32_t update_node_data(std::string_view name, NodeDataKind kind, const std::vector<NodeDataUpdate>& updates);
  // Every node of column c without data (the nodes that had some logged).
  void clear_node_data(uint32_t c);
  // Node n's entry in column c: kNodeDataNone; for a filter column 0
  // (passes) or a reason id 1..63; for a score column the score.
  uint8_t node_data_entry(uint32_t c, uint32_t node) const;
  // The reason text of reason id `id` (1..63) of filter column c.
  const std::string& node_data_reason(uint32_t c, uint8_t id) const { return node_data_columns_[c].reasons[id]; }
  // The view row of the filter (score) column named `name`; -1 when no
  // column of that kind has the name (the NodeData plugin's prepare).
  int32_t node_filter_row(std::string_view name) const;
  int32_t node_score_row(std::string_view name) const;
  // The reason text of reason id `id` of the filter column in view row `row`.
  const std::string& node_filter_reason(uint32_t row, uint8_t id) const {
    return node_data_columns_[node_filter_columns_[row]].reasons[id];
  }
  // The columns with their entries by node name (Engine::load keeps them
  // across a reload: take them, build, restore): restoring makes the
  // columns again, in the same order, and sets the entries of the nodes
  // that have the same names.
  struct NodeDataByName {
    struct Column {
      std::string name;
      NodeDataKind kind = NodeDataKind::kFilter;
      std::vector<std::string> nodes;
      std::vector<NodeDataUpdate> entries;  // parallel to nodes; `node` unused
    };
    std::vector<Column> columns;
  };
  NodeDataByName node_data_by_name() const;
  void restore_node_data(const NodeDataByName& data);
  // ---- releasing what nothing references (docs/snapshot.md) -----------------
  // Strings are referenced by the node and pod columns, the live matchers,
  // term groups and per-domain sums, and "", "0.0.0.0" and "TCP"; a matcher
  // lives while it counts some pod, its per-domain sums with it; a term
  // group while some pod holds its term. The rest is dead: it answers
  // nothing differently (a matcher counting no pod, registered again,
  // counts none; a dead string is on no node and no pod) and only takes
  // room and time until compact() drops it.
  struct Census {
    size_t strings = 0, live_strings = 0;
    size_t matchers = 0, live_matchers = 0;
    size_t domain_sums = 0, live_domain_sums = 0;
    size_t term_groups = 0, live_term_groups = 0;
  };
  // Counts what is stored and what is live (a pass over the snapshot).
  Census census() const;
  // Drops every dead string, matcher (its counter row and per-domain sums)
  // and term group, and renumbers the others in their order: string ids,
  // matcher rows and group indices change, so it is structural (a new
  // structure_version(), the log cleared: a device mirror re-sends
  // everything, and a batch cache's states, whose query bytes hold ids, can
  // never answer again). False, and nothing changes, when nothing is dead.
  // Never between intern_pod_for_plan and the evaluation it prepares for.
  bool compact();
  // The amortized rule an Engine runs after each event (CompactionPolicy):
  // O(1) unless a kind grew enough since the last check; then a census, and
  // compact() when some kind's dead entries reached the policy's share of
  // its live ones. Also starts a new structure version when the mutation
  // log has grown past max(2^20, 8 x nodes) entries, so that it stays
  // bounded when no node changes for a long time. True when the structure
  // version changed.
  bool maybe_compact(const CompactionPolicy& policy);
  uint64_t compactions() const { return compactions_; }

  // ---- change tracking for device mirrors ------------------------------------
  // Versions are unique in the process: every build, copy and structural
  // change takes a new one, so a mirror keyed on it cannot confuse two
  // snapshots. While it stays the same, the columns change only as the
  // mutation log and the columns' layout versions (columns()) say.
  uint64_t structure_version() const { return identity_.version; }
  // The nodes touched since the last structural change, in mutation order,
  // repeats included: their mutable entries (rows, scalars and slot ranges
  // of the columns that are not kFixed) may differ.
  const std::vector<uint32_t>& mutation_log() const { return identity_.log; }

  // Raw columns (for mirrors and tests).
  const std::vector<int64_t>& allocatable() const { return allocatable_; }
  const std::vector<int64_t>& requested() const { return requested_; }
  const std::vector<int64_t>& nonzero_requested() const { return nonzero_requested_; }
  const std::vector<int32_t>& pod_count() const { return pod_count_; }
  const std::vector<uint32_t>& port_offsets() const { return port_offsets_; }
  const std::vector<uint32_t>& port_counts() const { return port_counts_; }
  const std::vector<HostPortEntry>& ports() const { return ports_; }

  // How a column may change while structure_version() stays the same, which
  // is how a device mirror keeps its copy current.
  enum class ColumnKind : uint8_t {
    kFixed,       // only when its layout version changes
    kNodeRows,    // [row * N + n]: a logged node's entry in every row
    kNodeScalar,  // [n]: a logged node's entry
    kNodeSlots,   // a logged node's slot range [slot_offsets[n], slot_offsets[n + 1])
    kAppend,      // per dictionary string: grows at the end, entries never change
  };
  // Everything a device mirror copies, one entry per column.
  struct Column {
    const char* name;
    const void* data;
    size_t bytes;
    uint32_t element_bytes;
    ColumnKind kind;
    // The column is laid out anew (a mirror re-sends it whole) when this
    // changes; it changes with structure_version() and, for slotted columns,
    // when their slots are laid out again.
    uint64_t layout_version;
    const uint32_t* slot_offsets;  // kNodeSlots: host [N + 1]; else nullptr
  };
  std::vector<Column> columns() const;
  // The view over copies of the columns: `copies[i]` holds columns()[i]
  // (e.g. its device buffer). Counts and ids are the host view's.
  SnapshotView view_over(const std::vector<const void*>& copies) const;

 private:
  // How a column syncs (see ColumnKind): the argument bind_columns passes.
  struct Sync {
    ColumnKind kind;
    uint64_t layout_version;
    const std::vector<uint32_t>* slot_offsets;
  };
  // The one table binding each column to its SnapshotView field and to how
  // it changes: fn(name, column vector, view field, Sync), in a fixed order.
  template <class Fn>
  void bind_columns(SnapshotView& v, Fn&& fn) const;

  // The structure version and the mutation log, with the copy/move rules
  // above: copies take a fresh version and no log, moves carry both.
  struct Identity {
    uint64_t version = 0;
    std::vector<uint32_t> log;
    Identity() = default;
    Identity(const Identity&) : version(fresh_structure_version()) {}
    Identity& operator=(const Identity& other) {
      if (this != &other) {
        version = fresh_structure_version();
        log.clear();
      }
      return *this;
    }
    Identity(Identity&& other) noexcept : version(other.version), log(std::move(other.log)) {
      other.version = 0;
      other.log.clear();
    }
    Identity& operator=(Identity&& other) noexcept {
      if (this != &other) {
        version = other.version;
        log = std::move(other.log);
        other.version = 0;
        other.log.clear();
      }
      return *this;
    }
  };

  // A pod's strings as dictionary ids, interned.
  struct EncodedPod {
    int32_t namespace_id = kNoId;
    uint8_t flags = 0;
    std::vector<std::pair<int32_t, int32_t>> labels;  // sorted by key id
    std::vector<HostPortEntry> ports;
  };
  EncodedPod encoded_scratch_;  // add_pod's, reused (a snapshot is not shared between threads while it changes)

  static uint64_t fresh_structure_version();
  void structural_change();
  void build_dense_labels();
  void rank_images_by_popularity();
  EncodedPod encode_pod(const Pod& pod);
  void encode_pod(const Pod& pod, EncodedPod& out);  // into `out`, reusing its capacity
  void account_requests(const Pod& pod, uint32_t node, int64_t sign);
  // A free pod id: `wanted` when it was just freed (update_pod keeps ids).
  uint32_t take_pod_id(uint32_t wanted = kNoPod);
  void release_pod_id(uint32_t id);
  void link_pod_key(uint32_t id);
  void unlink_pod_key(uint32_t id);
  // One device a pod holds: its index on the node and the units taken.
  struct DeviceCharge {
    uint32_t index;
    int32_t units;
  };
  // What a pod holds: its devices, and its class (device_class_bit), or 0
  // when it asks for none.
  struct DeviceCharges {
    std::vector<DeviceCharge> held;
    uint64_t class_bit = 0;
  };
  // What `pod` holds on `node` under the device model (none without one).
  // InputError for malformed annotations; indices the node lacks are left
  // out, with a warning when `warn`.
  DeviceCharges device_charges(const Pod& pod, uint32_t node, bool warn);
  void apply_device_charges(uint32_t node, const DeviceCharges& charges, int32_t sign);
  // Lays the device columns out and charges every pod (structural_change).
  void rebuild_devices();
  // Whether node n's allocatable now gives it other devices than its columns.
  bool device_shape_changed(uint32_t n) const;
  uint32_t place_pod(Pod&& pod, uint32_t node, const EncodedPod& enc, uint32_t id, DeviceCharges&& charges);
  uint32_t pod_labels_end(uint32_t node) const;
  void add_ports(uint32_t node, const std::vector<HostPortEntry>& wanted);
  void relayout_ports(uint32_t extra_for_node, uint32_t node);
  void relayout_pods(uint32_t node, uint32_t extra_slots, uint32_t extra_labels);
  // allocatable_[r][n] = amount, and its inverse.
  void set_allocatable(uint32_t r, uint32_t n, int64_t amount);
  // unschedulable_[n], and cordoned_nodes_ with it.
  void set_unschedulable(uint32_t n, bool cordoned);
  void write_node(uint32_t n, const Node& node);
  void tree_add(uint32_t n, const std::string& zone);
  void tree_remove(uint32_t n, const std::string& zone);
  void rebuild_tree_order();
  SnapshotView counts_only() const;
  // Adds `delta` to every matcher's counter of `node` that counts `slot`.
  void count_pod(uint32_t slot, uint32_t node, int32_t delta);

  uint32_t num_nodes_ = 0;
  StringDict strings_;
  std::vector<std::string> resource_names_;
  std::unordered_map<std::string, int32_t> resource_ids_;
  std::vector<std::string> node_names_;
  std::unordered_map<std::string, uint32_t> node_ids_;

  std::vector<int64_t> allocatable_, requested_, nonzero_requested_, allowed_pods_;
  std::vector<double> allocatable_inverse_;  // written with allocatable_ (set_allocatable)
  // Some amount in those three columns may lie outside [0, kTameQuantity]:
  // set where one is written, cleared by recheck_quantities' scan.
  bool wild_quantities_ = false;
  std::vector<int32_t> pod_count_, node_name_id_;
  std::vector<uint8_t> unschedulable_;  // written with cordoned_nodes_ (set_unschedulable)
  uint32_t cordoned_nodes_ = 0;        // the 1s of unschedulable_
  std::vector<uint32_t> label_offsets_, taint_offsets_, image_offsets_;
  std::vector<int32_t> label_keys_, label_values_, taint_keys_, taint_values_, image_ids_;
  std::vector<uint8_t> taint_effects_;
  std::vector<int32_t> dense_label_keys_;  // key id per dense slot
  std::vector<int32_t> dense_labels_;      // [slot * N + node]
  std::vector<int32_t> dense_label_ranks_;  // [slot * N + node]
  std::vector<std::vector<int32_t>> dense_label_values_;  // [slot]: distinct values, ascending
  std::vector<uint32_t> dense_label_missing_;             // [slot]: nodes without the key
  // [slot * N + i]: the nodes with the key by rank, ascending within one
  // (dense_label_nodes); [slot][r]: where rank r's begin (values + 1).
  std::vector<uint32_t> dense_rank_nodes_;
  std::vector<std::vector<uint32_t>> dense_rank_offsets_;
  std::vector<uint32_t> port_offsets_, port_counts_;
  std::vector<HostPortEntry> ports_;

  StringDict images_;
  std::vector<int64_t> image_size_;
  std::vector<int32_t> image_num_nodes_;
  std::vector<uint64_t> image_masks_;

  // Pod slots (device columns), slotted per node by pod_offsets_; pod labels
  // in per-node regions (pod_label_regions_, host-only: the mirror's ranges).
  std::vector<uint32_t> pod_offsets_;
  std::vector<int32_t> pod_namespace_, pod_node_;
  std::vector<uint8_t> pod_flags_;
  std::vector<uint32_t> pod_label_offsets_, pod_label_counts_;
  std::vector<uint32_t> pod_label_regions_;
  std::vector<int32_t> pod_label_keys_, pod_label_values_;
  std::vector<uint32_t> slot_pod_id_;  // [slot] pod id, kNoPod when free (host-only)

  // Pods by id (host-only; pod_store.hpp: a new id moves no pod).
  PodStore pods_;
  std::vector<uint32_t> pod_slot_;       // kNoPod: the id is free
  std::vector<uint32_t> pod_num_ports_;  // host-port entries the pod holds
  std::vector<int32_t> pod_priority_;    // pods_[id].priority
  std::vector<uint32_t> pod_key_next_;   // next (older) pod in the same key-hash chain
  std::vector<uint32_t> free_pod_ids_;
  std::unordered_map<uint64_t, uint32_t> pod_key_heads_;  // key hash -> newest pod
  size_t num_live_pods_ = 0;

  // Upstream's node tree: zones in order, the nodes of each in join order.
  struct Zone {
    std::string key;
    std::vector<uint32_t> nodes;
  };
  std::vector<Zone> zones_;
  std::vector<std::string> node_zone_keys_;  // [node]
  std::vector<uint32_t> tree_order_;

  // Topology matchers (host-only) and their counters column.
  struct MatcherClause {
    bool all_namespaces = false;
    std::vector<int32_t> namespace_ids;  // sorted, unique
    std::vector<CompiledRequirement> requirements;
    bool operator==(const MatcherClause& o) const {
      return all_namespaces == o.all_namespaces && namespace_ids == o.namespace_ids && requirements == o.requirements;
    }
    bool operator<(const MatcherClause& o) const {
      if (all_namespaces != o.all_namespaces) return all_namespaces < o.all_namespaces;
      if (namespace_ids != o.namespace_ids) return namespace_ids < o.namespace_ids;
      return requirements < o.requirements;
    }
  };
  struct Matcher {
    std::vector<MatcherClause> clauses;  // sorted, unique (a conjunction)
    bool count_terminating = false;
    bool operator==(const Matcher& o) const { return clauses == o.clauses && count_terminating == o.count_terminating; }
  };
  // The matcher for `all_of` with its strings interned, or looked up
  // (nullopt when a string is unknown: no registered matcher has it).
  Matcher intern_matcher(const std::vector<PodMatchClause>& all_of, bool count_terminating);
  std::optional<Matcher> lookup_matcher(const std::vector<PodMatchClause>& all_of, bool count_terminating) const;
  // Lists of rows under 64-bit keys, all in one array of links (a key's rows
  // come back newest first): a few bytes per entry however many keys.
  class KeyedRows {
   public:
    void add(uint64_t key, uint32_t row) {
      const auto [it, fresh] = head_.emplace(key, Head{static_cast<uint32_t>(links_.size()), 0});
      links_.emplace_back(row, fresh ? kEnd : it->second.link);
      it->second.link = static_cast<uint32_t>(links_.size() - 1);
      ++it->second.count;
    }
    template <class Fn>
    void for_each(uint64_t key, Fn&& fn) const {
      const auto it = head_.find(key);
      if (it == head_.end()) return;
      for (uint32_t l = it->second.link; l != kEnd; l = links_[l].second) fn(links_[l].first);
    }
    // How many rows are filed under `key`.
    uint32_t count(uint64_t key) const {
      const auto it = head_.find(key);
      return it == head_.end() ? 0 : it->second.count;
    }
    bool empty() const { return head_.empty(); }

   private:
    static constexpr uint32_t kEnd = UINT32_MAX;
    struct Head {
      uint32_t link;   // the key's newest link
      uint32_t count;  // its rows
    };
    std::unordered_map<uint64_t, Head> head_;
    std::vector<std::pair<uint32_t, uint32_t>> links_;  // (row, the key's next link or kEnd)
  };
  static uint64_t matcher_hash(const Matcher& m);
  // The row of a registered matcher equal to `m`, or -1 (`compares` counts
  // the equality comparisons, when given).
  int32_t matcher_row(const Matcher& m, uint64_t* compares) const;
  // Matchers filed for the pods they may count: under (key, value) for each
  // value of one In requirement, or under the key of one Exists requirement,
  // that every pod the matcher counts meets; the others in `always`.
  struct MatcherFiling {
    KeyedRows by_label;  // label_pair(key, value) -> rows
    KeyedRows by_key;    // key -> rows
    std::vector<uint32_t> always;
    void add(uint32_t row, const Matcher& m);
    // Calls fn(row) once for each filed matcher the pod in `slot` may meet.
    template <class Fn>
    void for_candidates(const Snapshot& s, uint32_t slot, Fn&& fn) const;
  };
  std::vector<Matcher> matchers_;
  KeyedRows matcher_rows_;  // matcher_hash -> rows
  // Registered matchers by their clauses as written, before compiling: a
  // pod's terms are looked up when it is interned and again when it is
  // prepared, and a ReplicaSet's pods repeat them, so most lookups compile
  // nothing (raw_matcher_row). Written only by topology_matchers (the
  // serial interning; prepare's parallel lookups only read it); cleared
  // when a compaction renumbers the rows or when it outgrows the matchers.
  struct RawMatcher {
    std::vector<PodMatchClause> all_of;
    bool count_terminating;
    uint32_t row;
  };
  std::vector<RawMatcher> raw_matchers_;
  KeyedRows raw_matcher_index_;  // raw_matcher_hash -> indices into raw_matchers_
  static uint64_t raw_matcher_hash(const std::vector<PodMatchClause>& all_of, bool count_terminating);
  int32_t raw_matcher_row(const std::vector<PodMatchClause>& all_of, bool count_terminating, uint64_t hash) const;
  void remember_raw_matcher(const std::vector<PodMatchClause>& all_of, bool count_terminating, uint64_t hash,
                            uint32_t row);
  void forget_raw_matchers();
  MatcherFiling matcher_filing_;
  MatcherWork matcher_work_;
  // Existing pods' affinity terms (host-only), by canonical term text.
  std::vector<ExistingAffinityTerm> affinity_terms_;
  std::unordered_map<std::string, uint32_t> affinity_term_ids_;
  struct TermFiling {
    KeyedRows by_label;  // string_pair_hash(key, value) -> groups (a collision only adds a candidate)
    KeyedRows by_key;    // hash of the key -> groups
    std::vector<uint32_t> always;
  };
  TermFiling affinity_term_filing_;
  void file_affinity_term(uint32_t group);
  // Adds (sign +1) or takes away (-1) the terms of `pod` on `node`.
  void index_affinity_terms(const Pod& pod, uint32_t node, int64_t sign);
  // Lays every group's by_rank out anew (after the dense columns changed).
  void rerank_affinity_terms();
  struct DomainSums {
    uint32_t matcher;
    int32_t key;
    int32_t slot;                 // the key's dense column, -1 when it has none (sums empty)
    std::vector<int64_t> by_rank;  // + the nodes without the key, last
  };
  std::vector<DomainSums> domain_sums_;
  std::unordered_map<uint64_t, uint32_t> domain_sums_index_;  // label_pair(matcher, key) -> index in domain_sums_
  std::vector<std::vector<uint32_t>> matcher_domain_sums_;     // [matcher]: its indices in domain_sums_
  void recount_domain_sums(DomainSums& d) const;
  // Builds (when dense enough) or drops one group's by_rank from its domains.
  void rank_affinity_term(ExistingAffinityTerm& g);
  // Whether group g is of the kind that may hold a row of term_counts_
  // (required anti-affinity on a one-node-per-value key, holding pods there).
  bool row_kind(const ExistingAffinityTerm& g) const;
  // Whether g, without a row, gets one now (it has by_rank, or the sparse
  // groups' rows are under the budget).
  bool wants_node_row(const ExistingAffinityTerm& g) const;
  // Gives the qualifying groups a row (in group order, the sparse ones
  // while under the budget), the others none, and fills the rows.
  void lay_out_term_rows();
  // Gives g (which has none) a row given up earlier, or a new last one, and
  // fills it.
  void add_term_row(ExistingAffinityTerm& g);
  // Gives g's row up (g holds no pods on its key any more).
  void drop_term_row(ExistingAffinityTerm& g);
  // Writes g's occurrences per node into its row.
  void fill_term_row(const ExistingAffinityTerm& g);
  std::vector<int32_t> term_counts_;  // [row * N + n]
  uint64_t term_rows_version_ = 0;
  size_t sparse_term_rows_ = 0;                 // rows held by groups without by_rank
  std::vector<int32_t> free_term_rows_;         // rows no group holds (all zeros), ascending, the last excluded
  size_t sparse_term_row_limit_ = SIZE_MAX;     // SIZE_MAX: the default budget
  // The value id of label `key` on node n, kNoId when absent (host columns).
  int32_t node_label_value(uint32_t n, int32_t key) const;
  std::vector<int32_t> topology_counts_;  // [m * N + n]
  // least_topology_count: per matcher, the least counter and how many
  // nodes hold it (0: not known).
  std::vector<int32_t> least_count_;
  std::vector<uint32_t> at_least_count_;
  void forget_least_counts() { at_least_count_.assign(matchers_.size(), 0); }
  uint64_t topology_layout_version_ = 0;

  // Releasing (compact, maybe_compact): what is live, by kind.
  struct Liveness {
    std::vector<uint8_t> strings, matchers, groups;
  };
  Liveness mark() const;
  Census census_of(const Liveness& l) const;
  // compact() with the marks made: false when nothing is dead. The counters
  // column keeps room for `spare_rows` more matchers (those maybe_compact
  // lets die before the next compaction), so that it is not reallocated,
  // doubling, in between; the freed memory goes back to the system.
  bool drop_dead(const Liveness& l, size_t spare_rows);
  // Renumbers every stored string id through new_ids (kNoId stays kNoId).
  void renumber_strings(const std::vector<int32_t>& new_ids);
  // Keeps the live matchers (rows and per-domain sums) and term groups,
  // renumbered in order, and files them again.
  void keep_matchers(const std::vector<uint8_t>& live, size_t spare_rows);
  void keep_term_groups(const std::vector<uint8_t>& live);
  // A new structure version and an empty log, nothing else.
  void new_structure_version();
  // What the last check of maybe_compact found (stored, live): it checks
  // again once a kind has grown by what would make it due.
  Census last_check_;
  uint64_t compactions_ = 0;

  // Devices: the model, the columns, and each pod id's charges (host-only).
  std::optional<DeviceModel> device_model_;
  std::vector<uint32_t> device_offsets_{0};
  std::vector<int32_t> device_units_;
  std::vector<int64_t> device_free_;
  AmountBounds amount_bounds_;
  std::vector<DeviceCharges> pod_device_charges_;
  std::vector<uint64_t> device_pod_classes_;                          // [N]: the view's column
  std::vector<std::vector<std::pair<uint64_t, int32_t>>> class_counts_;  // [N]: pods per class (host)
  std::vector<std::string> device_warnings_;

  // Shared device groups (host-only but for group_free_).
  void rebuild_device_groups();
  void check_group_annotations(const Pod& pod) const;  // InputError when malformed
  int32_t group_node_devices(uint32_t row, uint32_t node) const;  // the node's devices of the row
  // Binds group g to `node` with `devices` (those the node lacks or another
  // group holds are left out, with a warning naming `who`).
  void bind_device_group(uint32_t g, uint32_t node, const GroupDevices& devices, const std::string& who);
  void release_device_group(uint32_t g);
  // Pod id joins (or does not join) the group its annotation names.
  void join_device_group(uint32_t id, uint32_t node);
  void leave_device_group(uint32_t id);
  std::optional<DeviceGroupModel> group_model_;
  std::vector<SharedDeviceGroup> groups_;
  std::vector<std::pair<std::string, uint32_t>> group_by_name_;  // (name, index in groups_), sorted
  void index_device_groups();  // after every change to groups_
  std::vector<GroupBinding> bindings_;
  std::vector<std::string> group_types_;
  std::vector<int32_t> group_type_max_;
  std::vector<uint64_t> group_held_;  // [row * N + n]: bit d = device d is held by a group
  std::vector<int32_t> group_free_;   // [row * N + n]: the view's column
  std::vector<int32_t> pod_group_;    // [pod id]: the group it is a member of, or -1
  // [group]: released since configured, so its status no longer binds it
  // (kept across layouts, unlike the bindings).
  std::vector<uint8_t> status_superseded_;

  int32_t any_ip_id_ = kNoId;
  uint64_t port_layout_version_ = 0;
  uint64_t pod_layout_version_ = 0;
  uint32_t pod_slack_doublings_ = 0;    // relayout_pods' extra room per node
  uint64_t placed_since_relayout_ = 0;  // pods placed since relayout_pods last ran
  Identity identity_;

  // Node data (snapshot_node_data.cpp): the columns, their view rows by
  // kind, and the rows themselves ([row * N + n], kNodeDataNone: no data).
  struct NodeDataColumn {
    std::string name;
    NodeDataKind kind = NodeDataKind::kFilter;
    uint32_t row = 0;
    // Filter columns: the reason text of each id (1..63; "" never used) and
    // how many entries hold it (an id held by none is free for a new text).
    std::vector<std::string> reasons;
    std::array<uint32_t, kMaxNodeDataReasons + 1> reason_uses{};
  };
  std::vector<NodeDataColumn> node_data_columns_;
  std::vector<uint32_t> node_filter_columns_, node_score_columns_;  // [row]: the column
  std::vector<uint8_t> node_filter_data_, node_score_data_;
  uint64_t node_data_layout_version_ = 0;
  // A node appended (no data), or node `n` of `old_n` removed (its entries
  // go, its reasons' uses with them).
  void node_data_add_node(uint32_t old_n);
  void node_data_remove_node(uint32_t n, uint32_t old_n);
  // The mutation log grows until the next structural change; node data
  // refreshed in bulk again and again would grow it without bound. Past
  // kNodeDataLogBound entries per node (at least 2^16), a node data change
  // ends with a structural change instead (mirrors and caches start over,
  // as after a node change).
  static constexpr size_t kNodeDataLogBound = 8;
  void bound_log_after_node_data();
};

// The host ports a pod wants (regular containers and sidecars, hostPort > 0),
// with "" protocol as TCP and "" IP as 0.0.0.0, interned in `dict` when
// `intern` is true, else looked up (kNoId when unknown).
std::vector<HostPortEntry> pod_host_ports(const Pod& pod, StringDict& dict);
std::vector<HostPortEntry> pod_host_ports_lookup(const Pod& pod, const StringDict& dict);

}  // namespace bulkscore
