// The CUDA backend's host side: device mirror of the snapshot, per-pod
// upload, the kernels' launch (kernels/evaluate_kernels.cu) and the copy of
// the answer back. Plain C++ (g++); docs/cuda-backend.md has the data flow.
//
// Residency: the snapshot mirror and all scratch live in device memory owned
// by the backend, grown to a high-water mark and reused; pinned host buffers
// carry every transfer. All work goes to one stream; evaluate() returns
// after one stream synchronization (two when lists are requested back).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "host/common.hpp"
#include "host/engine/backend.hpp"
#include "kernels/launch.hpp"
#include "kernels/register_cuda_backend.hpp"

namespace bulkscore {
namespace {

using namespace cuda_detail;

[[noreturn]] void throw_cuda(cudaError_t e, const char* what) {
  (void)cudaGetLastError();  // clear a non-sticky error so the next call starts clean
  std::string msg =
      std::string("CUDA backend: ") + what + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  if (e == cudaErrorMemoryAllocation) throw DeviceOutOfMemory(msg);
  throw CudaError(msg);
}

#define BULKSCORE_CUDA_TRY(call)                  \
  do {                                            \
    const cudaError_t e_ = (call);                \
    if (e_ != cudaSuccess) throw_cuda(e_, #call); \
  } while (0)

constexpr size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

// Device memory that only grows. Contents are not kept across a regrow.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), cap_(std::exchange(o.cap_, 0)) {}
  ~DeviceBuffer() { release(); }

  // At least `bytes`; with `slack`, half again as much on a regrow so that a
  // slowly growing workload reallocates rarely.
  void reserve(size_t bytes, bool slack = true) {
    if (bytes <= cap_) return;
    // The slack is measured on the old capacity, so before release() zeroes it.
    const size_t want = align_up(slack ? std::max(bytes, cap_ + cap_ / 2) : bytes, 256);
    release();
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, want);
    if (e != cudaSuccess) throw_cuda(e, "cudaMalloc");
    ptr_ = p;
    cap_ = want;
  }
  void* get() const { return ptr_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  void release() {
    if (ptr_) cudaFree(ptr_);
    ptr_ = nullptr;
    cap_ = 0;
  }
  void* ptr_ = nullptr;
  size_t cap_ = 0;
};

// Page-locked host memory that only grows (async copies need it).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() { release(); }

  void reserve(size_t bytes) {
    if (bytes <= cap_) return;
    const size_t want = align_up(std::max(bytes, cap_ + cap_ / 2), 4096);
    release();
    void* p = nullptr;
    const cudaError_t e = cudaMallocHost(&p, want);
    if (e != cudaSuccess) throw_cuda(e, "cudaMallocHost");
    ptr_ = static_cast<uint8_t*>(p);
    cap_ = want;
  }
  uint8_t* get() const { return ptr_; }

 private:
  void release() {
    if (ptr_) cudaFreeHost(ptr_);
    ptr_ = nullptr;
    cap_ = 0;
  }
  uint8_t* ptr_ = nullptr;
  size_t cap_ = 0;
};

// The snapshot's columns in device memory, one cudaMalloc per column, and
// the node-tree order (used when sampling visits every node rotated).
//
// Up to date means: same snapshot object, same structure version, same host
// column addresses and sizes, and every mutation-log entry applied. Any
// difference but new log entries re-uploads everything; new log entries
// re-send only the touched nodes' mutable entries (one pinned staging copy
// and one scatter kernel).
class SnapshotMirror {
 public:
  const SnapshotView& view() const { return view_; }
  const uint32_t* tree_order() const { return tree_order_.as<const uint32_t>(); }

  void sync(const Snapshot& snap, cudaStream_t stream) {
    const std::vector<Snapshot::Column> cols = snap.columns();
    const std::vector<uint32_t>& log = snap.mutation_log();
    // Structure versions are unique in the process (every build and every
    // structural change takes a new one), so a snapshot rebuilt at the same
    // address is never mistaken for the one mirrored.
    if (!same_structure(snap, cols) || log.size() < log_size_) {
      upload_all(snap, cols, stream);
      return;
    }
    if (log.size() > log_size_) apply_log(snap, log, stream);
  }

 private:
  bool same_structure(const Snapshot& snap, const std::vector<Snapshot::Column>& cols) const {
    if (snap_ != &snap || version_ != snap.structure_version() || cols.size() != host_cols_.size()) return false;
    for (size_t i = 0; i < cols.size(); ++i)
      if (cols[i].data != host_cols_[i].first || cols[i].bytes != host_cols_[i].second) return false;
    return host_tree_order_ == snap.tree_order().data() && tree_order_size_ == snap.tree_order().size();
  }

  void upload_all(const Snapshot& snap, const std::vector<Snapshot::Column>& cols, cudaStream_t stream) {
    snap_ = nullptr;  // not valid until the upload is complete
    columns_.resize(cols.size());
    host_cols_.clear();
    for (size_t i = 0; i < cols.size(); ++i) {
      columns_[i].reserve(cols[i].bytes, false);
      if (cols[i].bytes)
        BULKSCORE_CUDA_TRY(
            cudaMemcpyAsync(columns_[i].get(), cols[i].data, cols[i].bytes, cudaMemcpyHostToDevice, stream));
      host_cols_.emplace_back(cols[i].data, cols[i].bytes);
    }
    const std::vector<uint32_t>& order = snap.tree_order();
    tree_order_.reserve(order.size() * sizeof(uint32_t), false);
    if (!order.empty())
      BULKSCORE_CUDA_TRY(cudaMemcpyAsync(tree_order_.get(), order.data(), order.size() * sizeof(uint32_t),
                                         cudaMemcpyHostToDevice, stream));
    view_ = device_view(snap);
    snap_ = &snap;
    version_ = snap.structure_version();
    log_size_ = snap.mutation_log().size();
    host_tree_order_ = order.data();
    tree_order_size_ = order.size();
  }

  // The snapshot's view with every column pointer replaced by its device copy.
  SnapshotView device_view(const Snapshot& snap) const {
    std::vector<const void*> copies;
    copies.reserve(columns_.size());
    for (const auto& c : columns_) copies.push_back(c.get());
    return snap.view_over(copies);
  }

  void apply_log(const Snapshot& snap, const std::vector<uint32_t>& log, cudaStream_t stream) {
    const uint32_t n = snap.num_nodes();
    const uint32_t r_count = snap.num_resources();
    if (stamp_.size() != n) {
      stamp_.assign(n, 0);
      epoch_ = 0;
    }
    if (++epoch_ == 0) {  // wrapped: forget old marks
      std::fill(stamp_.begin(), stamp_.end(), 0);
      epoch_ = 1;
    }
    const std::vector<uint32_t>& port_offsets = snap.port_offsets();
    const std::vector<uint32_t>& port_counts = snap.port_counts();
    touched_.clear();
    size_t bytes = 0;
    for (size_t i = log_size_; i < log.size(); ++i) {
      const uint32_t node = log[i];
      if (stamp_[node] == epoch_) continue;
      stamp_[node] = epoch_;
      touched_.push_back(node);
      bytes += record_bytes(r_count, port_counts[node]);
    }
    const size_t table = align_up(touched_.size() * sizeof(uint64_t), 8);
    // Past the size of the mutable columns themselves, a plain re-upload is cheaper.
    const size_t mutable_bytes = snap.requested().size() * 8 + snap.nonzero_requested().size() * 8 +
                                 snap.pod_count().size() * 4 + port_counts.size() * 4 +
                                 snap.ports().size() * sizeof(HostPortEntry);
    if (table + bytes > mutable_bytes) {
      upload_all(snap, snap.columns(), stream);
      return;
    }
    staging_.reserve(table + bytes);
    d_staging_.reserve(table + bytes);
    uint8_t* base = staging_.get();
    const auto* requested = snap.requested().data();
    const auto* nonzero = snap.nonzero_requested().data();
    size_t at = table;
    for (size_t j = 0; j < touched_.size(); ++j) {
      const uint32_t node = touched_[j];
      reinterpret_cast<uint64_t*>(base)[j] = at;
      NodeUpdateHeader h{node, port_offsets[node], port_counts[node], snap.pod_count()[node]};
      std::memcpy(base + at, &h, sizeof h);
      auto* values = reinterpret_cast<int64_t*>(base + at + sizeof h);
      for (uint32_t r = 0; r < r_count; ++r) values[r] = requested[static_cast<size_t>(r) * n + node];
      values[r_count] = nonzero[node];
      values[r_count + 1] = nonzero[static_cast<size_t>(n) + node];
      std::memcpy(values + r_count + 2, snap.ports().data() + port_offsets[node],
                  port_counts[node] * sizeof(HostPortEntry));
      at += record_bytes(r_count, port_counts[node]);
    }
    BULKSCORE_CUDA_TRY(cudaMemcpyAsync(d_staging_.get(), base, at, cudaMemcpyHostToDevice, stream));
    MutableColumns m;
    m.requested = const_cast<int64_t*>(view_.requested);
    m.nonzero_requested = const_cast<int64_t*>(view_.nonzero_requested);
    m.pod_count = const_cast<int32_t*>(view_.pod_count);
    m.port_counts = const_cast<uint32_t*>(view_.port_counts);
    m.ports = const_cast<HostPortEntry*>(view_.ports);
    m.num_nodes = n;
    m.num_resources = r_count;
    BULKSCORE_CUDA_TRY(
        enqueue_node_updates(m, d_staging_.as<const uint8_t>(), static_cast<uint32_t>(touched_.size()), stream));
    log_size_ = log.size();
  }

  static size_t record_bytes(uint32_t r_count, uint32_t ports) {
    return align_up(sizeof(NodeUpdateHeader) + (static_cast<size_t>(r_count) + 2) * 8 + ports * sizeof(HostPortEntry),
                    8);
  }

  std::vector<DeviceBuffer> columns_;  // in Snapshot::columns() order
  std::vector<std::pair<const void*, size_t>> host_cols_;
  DeviceBuffer tree_order_;
  const uint32_t* host_tree_order_ = nullptr;
  size_t tree_order_size_ = 0;
  const Snapshot* snap_ = nullptr;
  uint64_t version_ = 0;
  size_t log_size_ = 0;
  SnapshotView view_;

  // Incremental updates: dedup marks per node, and the staging buffers.
  std::vector<uint32_t> stamp_;
  uint32_t epoch_ = 0;
  std::vector<uint32_t> touched_;
  PinnedBuffer staging_;
  DeviceBuffer d_staging_;
};

static_assert(offsetof(Control, hist) == offsetof(Control, answer) + sizeof(Answer),
              "the answer and the histogram are copied back as one block");

class CudaBackend final : public Backend {
 public:
  CudaBackend() {
    BULKSCORE_CUDA_TRY(cudaGetDevice(&device_));
    BULKSCORE_CUDA_TRY(cudaDeviceGetAttribute(&num_sms_, cudaDevAttrMultiProcessorCount, device_));
    BULKSCORE_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    std::memset(&control_init_, 0, sizeof control_init_);
    for (uint32_t i = 0; i < kMaxProfilePlugins; ++i) {
      control_init_.stat_min[i] = INT64_MAX;
      control_init_.stat_max[i] = INT64_MIN;
    }
    back_.reserve(sizeof(Control));
  }
  ~CudaBackend() override {
    // The engine drops a backend that threw (DeviceOutOfMemory) with work
    // possibly still queued on the buffers about to be freed.
    if (stream_) {
      cudaStreamSynchronize(stream_);
      cudaStreamDestroy(stream_);
    }
  }

  const char* name() const override { return "cuda"; }

  void evaluate(const Snapshot& snap, const PodQuery& query, const EvalRequest& req, EvalResult& out) override {
    BULKSCORE_CUDA_TRY(cudaSetDevice(device_));
    // A previous call that threw may have left copies from the pinned buffers
    // in flight; the host is about to overwrite them.
    if (in_flight_) {
      BULKSCORE_CUDA_TRY(cudaStreamSynchronize(stream_));
      in_flight_ = false;
    }
    reset(out);
    const SnapshotView hs = snap.view();
    const PodQueryView hq = query.view();
    const uint32_t count = req.candidates ? static_cast<uint32_t>(req.candidates->size()) : hs.num_nodes;
    const bool sampling = req.num_to_find < count;
    if (req.want_verdicts) out.verdicts.assign(hs.num_nodes, NodeVerdict{kNoPlugin, Code::Skip, 0});
    if (count == 0) return;

    in_flight_ = true;
    mirror_.sync(snap, stream_);

    // Upload: [Control init | arena | candidates], one copy.
    const size_t arena_at = align_up(sizeof(Control), 256);
    const size_t cand_at = align_up(arena_at + query.arena.size(), 256);
    const size_t upload = cand_at + (req.candidates ? static_cast<size_t>(count) * sizeof(uint32_t) : 0);
    upload_.reserve(upload);
    d_pod_.reserve(upload);
    std::memcpy(upload_.get(), &control_init_, sizeof(Control));
    if (query.arena.size()) std::memcpy(upload_.get() + arena_at, query.arena.data(), query.arena.size());
    if (req.candidates) std::memcpy(upload_.get() + cand_at, req.candidates->data(), count * sizeof(uint32_t));

    const uint32_t slots = hq.num_scores;
    const bool keep_verdicts = sampling || req.want_verdicts;
    const uint32_t select_blocks =
        std::max<uint32_t>(1, std::min<uint32_t>((count + 255) / 256, 8u * static_cast<uint32_t>(num_sms_)));
    // CUB temporary storage, sized for the largest candidate count seen (the
    // need grows with the item count), for the sort too once it was wanted.
    if (count > temp_count_ || (req.want_sorted && !temp_has_sort_)) {
      const uint32_t items = std::max(temp_count_, count);
      const bool with_sort = temp_has_sort_ || req.want_sorted;
      size_t select_bytes = 0, sort_bytes = 0;
      BULKSCORE_CUDA_TRY(select_temp_bytes(items, select_bytes));
      if (with_sort) BULKSCORE_CUDA_TRY(sort_temp_bytes(items, sort_bytes));
      temp_count_ = items;
      temp_has_sort_ = with_sort;
      temp_bytes_ = std::max(select_bytes, sort_bytes);
    }
    const size_t temp_bytes = temp_bytes_;
    const size_t n = count;
    flags_.reserve(n);
    if (keep_verdicts) pos_verdicts_.reserve(n * sizeof(NodeVerdict));
    raw_pos_.reserve(slots * n * sizeof(int64_t));
    feasible_pos_.reserve(n * sizeof(uint32_t));
    keys_.reserve(n * sizeof(uint64_t));
    nodes_.reserve(n * sizeof(uint32_t));
    if (req.want_scores) {
      totals_.reserve(n * sizeof(int64_t));
      raw_c_.reserve(slots * n * sizeof(int64_t));
      norm_c_.reserve(slots * n * sizeof(int64_t));
    }
    partials_.reserve(select_blocks * sizeof(BestItem));
    temp_.reserve(temp_bytes);

    BULKSCORE_CUDA_TRY(cudaMemcpyAsync(d_pod_.get(), upload_.get(), upload, cudaMemcpyHostToDevice, stream_));

    PodLaunch p;
    p.snap = mirror_.view();
    p.query = hq;
    p.query.arena = d_pod_.as<const uint8_t>() + arena_at;
    p.visit.count = count;
    p.visit.start = req.start;
    p.visit.rotate = sampling;
    if (req.candidates)
      p.visit.order = d_pod_.as<const uint32_t>() + cand_at / sizeof(uint32_t);
    else if (sampling)
      p.visit.order = mirror_.tree_order();
    p.cap = (sampling && req.num_to_find > 0) ? req.num_to_find : UINT32_MAX;
    p.sampling = sampling;
    p.score_single = req.score_single;
    p.want_scores = req.want_scores;
    p.select_blocks = select_blocks;

    WorkBuffers w;
    w.ctrl = d_pod_.as<Control>();
    w.flags = flags_.as<uint8_t>();
    w.pos_verdicts = keep_verdicts ? pos_verdicts_.as<NodeVerdict>() : nullptr;
    w.raw_pos = raw_pos_.as<int64_t>();
    w.feasible_pos = feasible_pos_.as<uint32_t>();
    w.keys = keys_.as<uint64_t>();
    w.nodes = nodes_.as<uint32_t>();
    if (req.want_scores) {
      w.totals = totals_.as<int64_t>();
      w.raw_c = raw_c_.as<int64_t>();
      w.norm_c = norm_c_.as<int64_t>();
    }
    w.partials = partials_.as<BestItem>();
    w.temp = temp_.get();
    w.temp_bytes = temp_bytes;
    BULKSCORE_CUDA_TRY(enqueue_evaluation(p, w, stream_));

    // The answer and the histogram: one small copy back, one sync.
    constexpr size_t kBackBytes = sizeof(Control) - offsetof(Control, answer);
    BULKSCORE_CUDA_TRY(cudaMemcpyAsync(back_.get(),
                                       reinterpret_cast<const uint8_t*>(w.ctrl) + offsetof(Control, answer), kBackBytes,
                                       cudaMemcpyDeviceToHost, stream_));
    BULKSCORE_CUDA_TRY(cudaStreamSynchronize(stream_));
    in_flight_ = false;
    Answer a;
    std::memcpy(&a, back_.get(), sizeof a);
    std::memcpy(out.rejections.counts.data(), back_.get() + sizeof(Answer), sizeof(uint32_t) * kHistBins);
    out.num_feasible = a.num_feasible;
    out.processed = a.processed;
    out.chosen = a.chosen;
    out.chosen_total = a.chosen_total;
    out.scored = a.scored != 0;

    if (req.want_verdicts || ((req.want_scores || req.want_sorted) && a.num_feasible > 0))
      copy_lists(req, hq, p, w, a, sampling && !req.candidates ? snap.tree_order().data() : nullptr, out);
  }

 private:
  static void reset(EvalResult& out) {
    out.num_feasible = 0;
    out.processed = 0;
    out.chosen = -1;
    out.chosen_total = 0;
    out.scored = false;
    out.rejections = RejectionHistogram{};
    out.verdicts.clear();
    out.scored_nodes.clear();
    out.raw_scores.clear();
    out.normalized_scores.clear();
    out.totals.clear();
    out.sorted_nodes.clear();
    out.sorted_keys.clear();
  }

  // The per-node lists that were asked for, after the answer told their sizes.
  // `tree_order`: the host node-tree order when the visit walks it.
  void copy_lists(const EvalRequest& req, const PodQueryView& hq, const PodLaunch& p, const WorkBuffers& w,
                  const Answer& a, const uint32_t* tree_order, EvalResult& out) {
    const size_t f = a.num_feasible;
    const size_t slots = hq.num_scores;
    const bool scores = req.want_scores && f > 0;
    const bool scored_lists = scores && a.scored;
    const bool sorted = req.want_sorted && f > 0;

    // Layout of the pinned result buffer.
    size_t at = 0;
    auto place = [&](size_t bytes) {
      const size_t here = at;
      at = align_up(at + bytes, 16);
      return here;
    };
    const size_t verdicts_at = req.want_verdicts ? place(a.processed * sizeof(NodeVerdict)) : 0;
    const size_t nodes_at = scores ? place(f * sizeof(uint32_t)) : 0;
    const size_t raw_at = scored_lists ? place(slots * f * sizeof(int64_t)) : 0;
    const size_t norm_at = scored_lists ? place(slots * f * sizeof(int64_t)) : 0;
    const size_t totals_at = scored_lists ? place(f * sizeof(int64_t)) : 0;
    const size_t skeys_at = sorted ? place(f * sizeof(uint64_t)) : 0;
    const size_t snodes_at = sorted ? place(f * sizeof(uint32_t)) : 0;
    result_.reserve(at);
    in_flight_ = true;
    uint8_t* host = result_.get();
    auto back = [&](size_t dst, const void* src, size_t bytes) {
      if (bytes) BULKSCORE_CUDA_TRY(cudaMemcpyAsync(host + dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
    };

    if (req.want_verdicts) back(verdicts_at, w.pos_verdicts, a.processed * sizeof(NodeVerdict));
    if (scores) back(nodes_at, w.nodes, f * sizeof(uint32_t));
    if (scored_lists) {
      back(raw_at, w.raw_c, slots * f * sizeof(int64_t));
      back(norm_at, w.norm_c, slots * f * sizeof(int64_t));
      back(totals_at, w.totals, f * sizeof(int64_t));
    }
    if (sorted) {
      const uint64_t* keys = w.keys;
      const uint32_t* nodes = w.nodes;
      if (f > 1) {
        // Keys never exceed the best key: its bit width bounds the passes.
        int end_bit = 64;
        while (end_bit > 1 && !(a.best_key >> (end_bit - 1))) --end_bit;
        sorted_keys_.reserve(f * sizeof(uint64_t));
        sorted_nodes_.reserve(f * sizeof(uint32_t));
        // Sized for all candidates up front; checked for f anyway (the stream
        // is idle here, so a regrow is safe).
        size_t sort_bytes = 0;
        BULKSCORE_CUDA_TRY(sort_temp_bytes(static_cast<uint32_t>(f), sort_bytes));
        temp_.reserve(std::max(sort_bytes, w.temp_bytes));
        BULKSCORE_CUDA_TRY(enqueue_sort_descending(w.keys, w.nodes, sorted_keys_.as<uint64_t>(),
                                                   sorted_nodes_.as<uint32_t>(), static_cast<uint32_t>(f), end_bit,
                                                   temp_.get(), std::max(sort_bytes, w.temp_bytes), stream_));
        keys = sorted_keys_.as<const uint64_t>();
        nodes = sorted_nodes_.as<const uint32_t>();
      }
      back(skeys_at, keys, f * sizeof(uint64_t));
      back(snodes_at, nodes, f * sizeof(uint32_t));
    }
    BULKSCORE_CUDA_TRY(cudaStreamSynchronize(stream_));
    in_flight_ = false;

    if (req.want_verdicts) {
      Visit host_visit = p.visit;  // same order, host arrays
      if (req.candidates)
        host_visit.order = req.candidates->data();
      else
        host_visit.order = tree_order;
      const auto* v = reinterpret_cast<const NodeVerdict*>(host + verdicts_at);
      for (uint32_t k = 0; k < a.processed; ++k) out.verdicts[host_visit.node_at(k)] = v[k];
    }
    if (scores) {
      const auto* nodes = reinterpret_cast<const uint32_t*>(host + nodes_at);
      out.scored_nodes.assign(nodes, nodes + f);
    }
    if (scored_lists) {
      const auto* raw = reinterpret_cast<const int64_t*>(host + raw_at);
      const auto* norm = reinterpret_cast<const int64_t*>(host + norm_at);
      const auto* totals = reinterpret_cast<const int64_t*>(host + totals_at);
      out.raw_scores.assign(raw, raw + slots * f);
      out.normalized_scores.assign(norm, norm + slots * f);
      out.totals.assign(totals, totals + f);
    }
    if (sorted) {
      const auto* keys = reinterpret_cast<const uint64_t*>(host + skeys_at);
      const auto* nodes = reinterpret_cast<const uint32_t*>(host + snodes_at);
      out.sorted_keys.assign(keys, keys + f);
      out.sorted_nodes.assign(nodes, nodes + f);
      // The radix sort is stable over the visiting order; equal keys (a
      // tie-break hash collision) must list the lower node first.
      for (size_t i = 0; i < f;) {
        size_t j = i + 1;
        while (j < f && out.sorted_keys[j] == out.sorted_keys[i]) ++j;
        if (j - i > 1)
          std::sort(out.sorted_nodes.begin() + static_cast<std::ptrdiff_t>(i),
                    out.sorted_nodes.begin() + static_cast<std::ptrdiff_t>(j));
        i = j;
      }
    }
  }

  int device_ = 0;
  int num_sms_ = 1;
  cudaStream_t stream_ = nullptr;
  bool in_flight_ = false;  // work enqueued and not yet waited for (a call threw)
  Control control_init_;
  SnapshotMirror mirror_;
  uint32_t temp_count_ = 0;
  bool temp_has_sort_ = false;
  size_t temp_bytes_ = 0;

  // Per-pod scratch, grown to the high-water mark.
  PinnedBuffer upload_, back_, result_;
  DeviceBuffer d_pod_, flags_, pos_verdicts_, raw_pos_, feasible_pos_, keys_, nodes_, totals_, raw_c_, norm_c_,
      partials_, temp_, sorted_keys_, sorted_nodes_;
};

}  // namespace

namespace cuda {

std::string unavailable_reason() {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return std::string("no CUDA device: ") + cudaGetErrorString(e);
  }
  if (count == 0) return "no CUDA device: the CUDA runtime found none";
  e = probe_kernel_image();
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    int dev = 0, major = 0, minor = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
    return "CUDA device " + std::to_string(dev) + " (compute capability " + std::to_string(major) + "." +
           std::to_string(minor) + ") cannot run this build's kernels: " + cudaGetErrorString(e) +
           " (rebuild with CMAKE_CUDA_ARCHITECTURES including it)";
  }
  return "";
}

std::unique_ptr<Backend> make_backend() {
  const std::string why = unavailable_reason();
  if (!why.empty()) throw BackendUnavailable("cuda backend unavailable: " + why);
  return std::make_unique<CudaBackend>();
}

void register_backend() {
  bulkscore::register_backend(BackendFactory{"cuda", [] { return unavailable_reason(); },
                                             [](const BackendOptions&) { return make_backend(); }});
}

}  // namespace cuda
}  // namespace bulkscore
