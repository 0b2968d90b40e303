#include "plugins/gpu_fgd.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "host/input/config.hpp"
#include "plugins/prepare.hpp"

namespace bulkscore::plugins {

PrepareResult GpuFragmentation::prepare(const PrepareContext& ctx, State& st, Arena& arena) {
  PrepareResult r;
  st = State{};
  st.pod = gpu_pod_of(ctx);
  const auto& tasks = ctx.profile.gpu_fragmentation_args.typical_tasks;
  if (tasks.empty()) {
    r.score_error =
        "GpuFragmentation: no typical tasks to measure fragmentation against (set typicalTasks in its "
        "args; the CLI derives them from the pending pods)";
    return r;
  }
  // Kept per thread: every pod flattens the same tasks (flatten_tasks
  // clears them), and growing two vectors a pod was most of the prepare.
  thread_local std::vector<TaskShape> shapes;
  thread_local std::vector<int32_t> models;
  flatten_tasks(tasks, ctx.snapshot, shapes, models);
  st.shapes = arena.push(shapes);
  st.models = arena.push(models);
  return r;
}

namespace {

// Everything of a node that its FGD score for one pod reads (the pod and
// the typical tasks being fixed), so that nodes with equal states score
// alike and the score is computed once per state:
//  * the free units of its devices as a multiset, when every device has the
//    same units: fgd_node_score and node_fragmentation only sum free units,
//    count fitting devices, try each distinct free amount once for a share,
//    and take whole devices by fewest free, none of which depends on which
//    device holds which amount (with equal units);
//  * the units per device, the device count and the card model;
//  * the cpu left, before and after the pod: the rule only compares it with
//    the tasks' cpu requests, so the number of those requests it reaches
//    says all (two nodes with 20 and 30 cores left and tasks asking 8 or 64
//    cores fail and fit the same tasks).
// Nodes with more devices, or with devices of different units, are scored
// one by one.
constexpr uint32_t kStateDevices = 8;
struct NodeState {
  int64_t free[kStateDevices];  // ascending; unused slots zero
  int32_t num_devices;
  int32_t units;
  int32_t model;
  int32_t cpu_rank_before;
  int32_t cpu_rank_after;
  int32_t unused;  // zero: states are compared byte for byte
};
static_assert(sizeof(NodeState) == 8 * kStateDevices + 24, "no padding: states are compared byte for byte");

constexpr size_t kStateWords = sizeof(NodeState) / 8;

// Independent products summed, then mixed once: the multiplications do not
// wait for each other.
uint64_t state_hash(const uint64_t* w) {
  uint64_t h = 0;
  for (size_t i = 0; i < kStateWords; ++i) h += w[i] * (0x9e3779b97f4a7c15ull * (2 * i + 1));
  h ^= h >> 31;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 29);
}

bool same_words(const uint64_t* a, const uint64_t* b, size_t n) {
  uint64_t diff = 0;
  for (size_t i = 0; i < n; ++i) diff |= a[i] ^ b[i];
  return diff == 0;
}

// One call's tables, kept per thread from call to call: a trace replay
// scores a few hundred nodes a pod, and allocating these and growing the
// state list on every call cost more than the lookups (about 7% of a
// replay). Bounded: the table by 2^16 slots, the states by half of it.
struct StateTables {
  std::vector<int64_t> cpu_steps;
  std::vector<int32_t> slots;
  std::vector<std::array<uint64_t, kStateWords>> states;
  std::vector<int64_t> scores;
};

StateTables& state_tables() {
  thread_local StateTables tables;
  return tables;
}

}  // namespace

void GpuFragmentation::score_nodes(const SnapshotView& s, const State& st, const uint8_t* arena, const uint32_t* nodes,
                                   uint32_t count, int64_t* out) {
  if (st.pod.no_requests) {
    std::fill(out, out + count, int64_t(100));
    return;
  }
  // The tasks' distinct cpu requests, ascending: a cpu amount's rank (how
  // many it reaches) decides every comparison the rule makes with it.
  const TaskShape* shapes = st.shapes.data(arena);
  StateTables& tables = state_tables();
  std::vector<int64_t>& cpu_steps = tables.cpu_steps;
  cpu_steps.resize(st.shapes.count);
  for (uint32_t i = 0; i < st.shapes.count; ++i) cpu_steps[i] = shapes[i].cpu_milli;
  std::sort(cpu_steps.begin(), cpu_steps.end());
  cpu_steps.erase(std::unique(cpu_steps.begin(), cpu_steps.end()), cpu_steps.end());
  const auto cpu_rank = [&](int64_t cpu) {
    return static_cast<int32_t>(std::upper_bound(cpu_steps.begin(), cpu_steps.end(), cpu) - cpu_steps.begin());
  };

  // Open addressing over the distinct states met; past half full, the
  // remaining new states are scored without being kept.
  uint32_t capacity = 64;
  while (capacity < 2 * count && capacity < (1u << 16)) capacity *= 2;
  std::vector<int32_t>& slots = tables.slots;
  slots.assign(capacity, -1);
  auto& states = tables.states;
  auto& scores = tables.scores;
  states.clear();
  scores.clear();
  const uint32_t mask = capacity - 1;

  // The previous node's inputs as read (devices in index order, cpu left):
  // nodes laid out alike often come in runs, which skip the state's sort,
  // ranks and hash.
  constexpr size_t kRawWords = kStateDevices + 3;
  uint64_t previous[kRawWords] = {};
  int64_t previous_score = 0;
  bool have_previous = false;

  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t node = nodes[i];
    const uint32_t first = s.device_offsets[node];
    const uint32_t n = s.device_offsets[node + 1] - first;
    bool alike = n <= kStateDevices;
    for (uint32_t d = 1; d < n && alike; ++d) alike = s.device_units[first + d] == s.device_units[first];
    if (!alike) {
      out[i] = score(s, st, arena, node);
      continue;
    }
    const int32_t model = node_card_model(s, st.pod, node);
    const int64_t cpu_left = node_cpu_left(s, node);
    uint64_t raw[kRawWords] = {};
    for (uint32_t d = 0; d < n; ++d) raw[d] = static_cast<uint64_t>(s.device_free[first + d]);
    raw[kStateDevices] = n | (uint64_t(n > 0 ? static_cast<uint32_t>(s.device_units[first]) : 0) << 32);
    raw[kStateDevices + 1] = static_cast<uint32_t>(model);
    raw[kStateDevices + 2] = static_cast<uint64_t>(cpu_left);
    if (have_previous && same_words(raw, previous, kRawWords)) {
      out[i] = previous_score;
      continue;
    }
    NodeState k{};
    for (uint32_t d = 0; d < n; ++d) {  // insertion sort: at most 8
      const int64_t v = s.device_free[first + d];
      uint32_t j = d;
      for (; j > 0 && k.free[j - 1] > v; --j) k.free[j] = k.free[j - 1];
      k.free[j] = v;
    }
    k.num_devices = static_cast<int32_t>(n);
    k.units = n > 0 ? s.device_units[first] : 0;
    k.model = model;
    k.cpu_rank_before = cpu_rank(cpu_left);
    k.cpu_rank_after = cpu_rank(cpu_left - st.pod.cpu_milli);
    std::array<uint64_t, kStateWords> words;
    std::memcpy(words.data(), &k, sizeof(NodeState));
    uint32_t at = static_cast<uint32_t>(state_hash(words.data())) & mask;
    while (slots[at] >= 0 && !same_words(states[static_cast<size_t>(slots[at])].data(), words.data(), kStateWords))
      at = (at + 1) & mask;
    if (slots[at] >= 0) {
      out[i] = scores[static_cast<size_t>(slots[at])];
    } else {
      out[i] = score(s, st, arena, node);
      if (2 * (states.size() + 1) <= capacity) {
        slots[at] = static_cast<int32_t>(states.size());
        states.push_back(words);
        scores.push_back(out[i]);
      }
    }
    std::memcpy(previous, raw, sizeof(raw));
    previous_score = out[i];
    have_previous = true;
  }
}

void GpuFragmentation::adjust_profile(ProfileConfig& profile) {
  if (!profile.gpu_share_args.selection_given) profile.gpu_share_args.selection = DeviceSelection::Fragmentation;
}

}  // namespace bulkscore::plugins
