// The CUDA backend's host side: device mirror of the snapshot, per-pod
// upload, the kernels' launch (kernels/evaluate_kernels.cu) and the copy of
// the answer back. Plain C++ (g++); docs/cuda-backend.md has the data flow.
//
// Residency: the snapshot mirror and all scratch live in device memory owned
// by the backend, grown to a high-water mark and reused; pinned host buffers
// carry every transfer. All work goes to one stream; evaluate() returns
// after one stream synchronization (two when lists are requested back, or
// when the random tie-break finds a tie outside the flat pipeline: then the
// tied nodes alone, or for a tie of over 1,024 nodes only the drawn one;
// more around a feasible-set PreScore). The flat pipeline (every node, no
// list, no PreScore: what the scheduling cycle asks most) is one upload
// (riding in the mirror's scatter copy when nodes changed), two launches
// after the scatter (Filter with raw scores, then select_every_node) and no
// copy back (the answer is written into mapped pinned memory): no
// compaction, the random tie drawn on the device.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "host/common.hpp"
#include "host/engine/backend.hpp"
#include "host/engine/device_memory.hpp"
#include "host/engine/fault_injection.hpp"
#include "host/snapshot/mirror_sync.hpp"
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

// Device memory (cudaMalloc) and page-locked host memory (cudaMallocHost;
// async copies need it) for DeviceMemoryPool (host/engine/device_memory.hpp):
// nullptr when out of memory, so that the pool can drop its growth slack and
// release idle buffers before it gives up; other errors throw. Stateless,
// static: they outlive every buffer.
class CudaDeviceMemory final : public DeviceAllocator {
 public:
  void* allocate(size_t bytes) override {
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, bytes);
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      return nullptr;
    }
    if (e != cudaSuccess) throw_cuda(e, "cudaMalloc");
    return p;
  }
  void deallocate(void* p) noexcept override { cudaFree(p); }
  const char* name() const override { return "CUDA backend: cudaMalloc"; }
};

class CudaPinnedMemory final : public DeviceAllocator {
 public:
  void* allocate(size_t bytes) override {
    void* p = nullptr;
    const cudaError_t e = cudaMallocHost(&p, bytes);
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      return nullptr;
    }
    if (e != cudaSuccess) throw_cuda(e, "cudaMallocHost");
    return p;
  }
  void deallocate(void* p) noexcept override { cudaFreeHost(p); }
  const char* name() const override { return "CUDA backend: cudaMallocHost"; }
};

CudaDeviceMemory g_device_memory;
CudaPinnedMemory g_pinned_memory;

using Growth = DeviceMemoryPool::Growth;

// The snapshot's columns in device memory, one cudaMalloc per column, and
// the node-tree order (used when sampling visits every node rotated).
//
// What to copy is MirrorSync's plan (host/snapshot/mirror_sync.hpp): the
// whole snapshot when its structure version differs from the one mirrored
// (versions are unique in the process, a copy takes a new one); else the
// columns laid out anew, the dictionary columns' new tails, and the element
// ranges of the nodes logged since the last sync, packed by the column table
// (element size, row stride, slot range) into one pinned staging buffer,
// one copy, one generic scatter kernel. No column is named here.
//
// The columns are not scratch: their contents must survive between calls.
// A column that cannot grow leaves the mirror unknown (the next sync sends
// everything).
class SnapshotMirror {
 public:
  SnapshotMirror(DeviceMemoryPool& device, DeviceMemoryPool& pinned) : device_(device), pinned_(pinned) {
    device_.add_scratch(d_staging_);
    pinned_.add_scratch(staging_);
  }
  SnapshotMirror(const SnapshotMirror&) = delete;
  SnapshotMirror& operator=(const SnapshotMirror&) = delete;

  const SnapshotView& view() const { return view_; }
  const uint32_t* tree_order() const { return tree_order_.as<const uint32_t>(); }

  // `rider`: `rider_bytes` of host memory (a pod's upload) that may travel
  // in the same copy as the nodes' changes. Returns where it landed on the
  // device (256-byte aligned), or nullptr when it did not ride (no changed
  // ranges to scatter): then the caller uploads it. Valid until the next
  // sync.
  void* sync(const Snapshot& snap, cudaStream_t stream, const void* rider = nullptr, size_t rider_bytes = 0) {
    const std::vector<Snapshot::Column> cols = snap.columns();
    const MirrorSync::Plan plan = tracker_.plan(snap, cols);
    // Unknown contents until every copy below is enqueued: if one throws,
    // the next sync sends everything.
    tracker_.forget();
    void* landed = nullptr;
    if (plan.everything) {
      upload_all(snap, cols, stream);
    } else {
      for (uint32_t c : plan.whole) upload_column(c, cols[c], stream);
      for (const auto& t : plan.tails) append_tail(t.column, t.from, cols[t.column], stream);
      if (!plan.ranges.empty()) landed = scatter(cols, plan, stream, rider, rider_bytes);
    }
    tracker_.synced(snap, cols);
    view_ = device_view(snap);
    return landed;
  }

 private:
  void upload_all(const Snapshot& snap, const std::vector<Snapshot::Column>& cols, cudaStream_t stream) {
    columns_.resize(cols.size());
    for (uint32_t c = 0; c < cols.size(); ++c) upload_column(c, cols[c], stream);
    const std::vector<uint32_t>& order = snap.tree_order();
    device_.reserve(tree_order_, order.size() * sizeof(uint32_t), Growth::kExact);
    if (!order.empty())
      BULKSCORE_CUDA_TRY(cudaMemcpyAsync(tree_order_.get(), order.data(), order.size() * sizeof(uint32_t),
                                         cudaMemcpyHostToDevice, stream));
  }

  // Columns that only grow (the dictionary's) get slack so their tails land
  // in place; the others are allocated to size.
  void upload_column(uint32_t c, const Snapshot::Column& col, cudaStream_t stream) {
    device_.reserve(columns_[c], col.bytes,
                    col.kind == Snapshot::ColumnKind::kAppend ? Growth::kSlack : Growth::kExact);
    if (col.bytes)
      BULKSCORE_CUDA_TRY(cudaMemcpyAsync(columns_[c].get(), col.data, col.bytes, cudaMemcpyHostToDevice, stream));
  }

  void append_tail(uint32_t c, size_t from, const Snapshot::Column& col, cudaStream_t stream) {
    if (col.bytes > columns_[c].capacity()) {  // a regrow loses the contents: send it whole
      upload_column(c, col, stream);
      return;
    }
    BULKSCORE_CUDA_TRY(cudaMemcpyAsync(columns_[c].as<uint8_t>() + from, static_cast<const uint8_t*>(col.data) + from,
                                       col.bytes - from, cudaMemcpyHostToDevice, stream));
  }

  // The plan's ranges: segments first, then each range's elements gathered
  // from the host column, 8-byte aligned; then the rider (see sync), if any.
  void* scatter(const std::vector<Snapshot::Column>& cols, const MirrorSync::Plan& plan, cudaStream_t stream,
                const void* rider, size_t rider_bytes) {
    const size_t table = align_up(plan.ranges.size() * sizeof(ScatterSegment), 8);
    size_t bytes = table;
    for (const auto& r : plan.ranges) bytes += align_up(static_cast<size_t>(r.count) * cols[r.column].element_bytes, 8);
    const size_t rider_at = align_up(bytes, 256);
    if (rider) bytes = rider_at + rider_bytes;
    pinned_.reserve(staging_, bytes);
    device_.reserve(d_staging_, bytes);
    auto* base = staging_.as<uint8_t>();
    auto* segments = reinterpret_cast<ScatterSegment*>(base);
    size_t at = table;
    for (size_t i = 0; i < plan.ranges.size(); ++i) {
      const MirrorSync::Range& r = plan.ranges[i];
      const Snapshot::Column& col = cols[r.column];
      const size_t eb = col.element_bytes;
      const auto* host = static_cast<const uint8_t*>(col.data);
      if (r.stride == 1) {
        std::memcpy(base + at, host + r.first * eb, r.count * eb);
      } else {
        for (uint32_t k = 0; k < r.count; ++k)
          std::memcpy(base + at + k * eb, host + (r.first + k * r.stride) * eb, eb);
      }
      segments[i] = ScatterSegment{reinterpret_cast<uint64_t>(columns_[r.column].as<uint8_t>() + r.first * eb),
                                   r.stride * eb, at, r.count, col.element_bytes};
      at += align_up(r.count * eb, 8);
    }
    if (rider) {
      std::memcpy(base + rider_at, rider, rider_bytes);
      at = rider_at + rider_bytes;
    }
    BULKSCORE_CUDA_TRY(cudaMemcpyAsync(d_staging_.get(), base, at, cudaMemcpyHostToDevice, stream));
    BULKSCORE_CUDA_TRY(
        enqueue_node_updates(d_staging_.as<const uint8_t>(), static_cast<uint32_t>(plan.ranges.size()), stream));
    return rider ? d_staging_.as<uint8_t>() + rider_at : nullptr;
  }

  // The snapshot's view with every column pointer replaced by its device copy.
  SnapshotView device_view(const Snapshot& snap) const {
    std::vector<const void*> copies;
    copies.reserve(columns_.size());
    for (const auto& c : columns_) copies.push_back(c.get());
    return snap.view_over(copies);
  }

  DeviceMemoryPool& device_;
  DeviceMemoryPool& pinned_;
  std::vector<GrowingBuffer> columns_;  // in Snapshot::columns() order
  GrowingBuffer tree_order_;
  MirrorSync tracker_;
  SnapshotView view_;
  GrowingBuffer staging_;    // pinned
  GrowingBuffer d_staging_;  // device
};

static_assert(offsetof(Control, hist) == offsetof(Control, answer) + sizeof(Answer) &&
                  offsetof(Control, num_tied) == offsetof(Control, hist) + sizeof(uint32_t) * kHistBins,
              "the answer, the histogram and the tie count are copied back as one block");

// The backend's stream. CudaBackend's destructor waits for it before any
// member goes, and it is CudaBackend's last member, so it is also destroyed
// first: queued work (a call that threw) finishes before the buffers it
// uses are freed, whatever cudaFree does. A constructor that throws after
// creating it does not leak it.
class Stream {
 public:
  Stream() = default;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() {
    if (s_) {
      synchronize();
      cudaStreamDestroy(s_);
    }
  }
  void create() { BULKSCORE_CUDA_TRY(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  cudaStream_t get() const { return s_; }
  // Waits for the queued work; errors are left for the next call to report.
  void synchronize() const noexcept {
    if (s_) (void)cudaStreamSynchronize(s_);
  }

 private:
  cudaStream_t s_ = nullptr;
};

// Makes `device` current for a scope and gives the caller's current device
// back afterwards: an embedding program's own CUDA work keeps its device.
class ScopedDevice {
 public:
  explicit ScopedDevice(int device) {
    BULKSCORE_CUDA_TRY(cudaGetDevice(&previous_));
    if (previous_ != device) {
      BULKSCORE_CUDA_TRY(cudaSetDevice(device));
      changed_ = true;
    }
  }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;
  ~ScopedDevice() {
    if (changed_) cudaSetDevice(previous_);
  }

 private:
  int previous_ = 0;
  bool changed_ = false;
};

class CudaBackend final : public Backend {
 public:
  // Uses the caller's current device, and leaves it current.
  CudaBackend() {
    // Every per-call buffer is scratch: released when a call that does not
    // use it needs the room (host/engine/device_memory.hpp).
    for (GrowingBuffer* b : {&upload_, &back_, &result_, &prescore_pos_, &prescore_arena_, &tied_back_})
      pinned_.add_scratch(*b);
    for (GrowingBuffer* b : {&d_prescore_arena_, &d_pod_, &flags_, &pos_verdicts_, &raw_pos_, &feasible_pos_, &keys_,
                             &nodes_, &totals_, &raw_c_, &norm_c_, &tied_, &tie_flags_, &ranked_, &partials_, &temp_,
                             &sorted_keys_, &sorted_nodes_, &dry_columns_, &dry_out_})
      device_.add_scratch(*b);
    BULKSCORE_CUDA_TRY(cudaGetDevice(&device_id_));
    BULKSCORE_CUDA_TRY(cudaDeviceGetAttribute(&num_sms_, cudaDevAttrMultiProcessorCount, device_id_));
    stream_holder_.create();
    stream_ = stream_holder_.get();
    std::memset(&control_init_, 0, sizeof control_init_);
    for (uint32_t i = 0; i < kMaxProfilePlugins; ++i) {
      control_init_.stat_min[i] = INT64_MAX;
      control_init_.stat_max[i] = INT64_MIN;
    }
    // Test hook for GPU runs: BULKSCORE_CUDA_FAULT_AT=N[:POINT] makes the
    // N-th arrival at POINT fail as the device would there
    // (host/engine/fault_injection.hpp); the engine must lose nothing
    // (tests/test_backend_fallback.cpp does the same with fake devices,
    // scripts/gpu-run.sh's fault step with this one).
    fault_ = FaultInjection::parse(std::getenv("BULKSCORE_CUDA_FAULT_AT"));
  }

  // Queued work (a call that threw) finishes before anything is freed: the
  // body runs before any member's destructor.
  ~CudaBackend() override { stream_holder_.synchronize(); }
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  const char* name() const override { return "cuda"; }

  // want_totals rides on want_scores (the lists come back together) and
  // is trimmed on the host.
  void evaluate(const Snapshot& snap, PodQuery& query, const EvalRequest& req, EvalResult& out) override {
    if (!req.want_totals || req.want_scores) return evaluate_pass(snap, query, req, out);
    EvalRequest with_scores = req;
    with_scores.want_scores = true;
    evaluate_pass(snap, query, with_scores, out);
    keep_totals_lists(query.view(), out);
  }

  void evaluate_pass(const Snapshot& snap, PodQuery& query, const EvalRequest& req, EvalResult& out) {
    const ScopedDevice on_our_device(device_id_);
    begin_call();
    out.reset();
    const SnapshotView hs = snap.view();
    const PodQueryView hq = query.view();
    const VisitOrder host_visit = visit_order(snap, req);
    const uint32_t count = host_visit.count;
    const bool sampling = host_visit.rotate;
    if (req.want_verdicts) out.verdicts.assign(hs.num_nodes, NodeVerdict{kNoPlugin, Code::Skip, 0});
    if (count == 0) return;

    in_flight_ = true;
    pinned_.reserve(back_, sizeof(Control));

    // Upload: [Control init | arena | candidates], with the nodes' changes
    // when there are some (SnapshotMirror::sync), else a copy of its own.
    const size_t arena_at = align_up(sizeof(Control), 256);
    const size_t cand_at = align_up(arena_at + query.arena.size(), 256);
    const size_t upload = cand_at + (req.candidates ? static_cast<size_t>(count) * sizeof(uint32_t) : 0);
    pinned_.reserve(upload_, upload);
    auto* up = upload_.as<uint8_t>();
    std::memcpy(up, &control_init_, sizeof(Control));
    if (query.arena.size()) std::memcpy(up + arena_at, query.arena.data(), query.arena.size());
    if (req.candidates) std::memcpy(up + cand_at, req.candidates->data(), count * sizeof(uint32_t));

    const uint32_t slots = hq.num_scores;
    const bool keep_verdicts = sampling || req.want_verdicts;
    // The flat pipeline: every node in index order, nothing between Filter
    // and Score, no list that needs the compacted order.
    const bool flat = !hq.prescore_feasible && host_visit.order == nullptr && !req.want_scores && !req.want_sorted;
    // Grid-stride selection: 8 blocks per SM at most; the flat one gives
    // each block a contiguous range, two blocks per SM.
    const uint32_t select_blocks = std::max<uint32_t>(
        1, std::min<uint32_t>((count + 255) / 256, (flat ? 2u : 8u) * static_cast<uint32_t>(num_sms_)));
    // CUB temporary storage, sized for the largest candidate count seen (the
    // need grows with the item count), for the sort too once it was wanted.
    // The random tie-break may compact over every node (enqueue_rank_tied).
    const bool random_ties = hq.tie_break == TieBreak::Random;
    const uint32_t select_items = random_ties ? std::max(count, hs.num_nodes) : count;
    // (The flat pipeline compacts nothing: no CUB storage, no compacted lists.)
    if (!flat && (select_items > temp_count_ || (req.want_sorted && !temp_has_sort_))) {
      const uint32_t items = std::max(temp_count_, select_items);
      const bool with_sort = temp_has_sort_ || req.want_sorted;
      size_t select_bytes = 0, sort_bytes = 0;
      BULKSCORE_CUDA_TRY(select_temp_bytes(items, select_bytes));
      if (with_sort) BULKSCORE_CUDA_TRY(sort_temp_bytes(items, sort_bytes));
      // Allocated before the sizes are recorded: an allocation that throws
      // leaves them describing what temp_ holds. (A temp_ released as idle
      // is reserved again below, at temp_bytes_.)
      device_.reserve(temp_, std::max(select_bytes, sort_bytes));
      temp_count_ = items;
      temp_has_sort_ = with_sort;
      temp_bytes_ = std::max(select_bytes, sort_bytes);
    }
    const size_t temp_bytes = temp_bytes_;
    const size_t n = count;
    // The pass's own buffers first, then the optional lists': should the
    // lists not fit, the engine retries without them (Engine::evaluate).
    device_.reserve(flags_, n);
    if (keep_verdicts) device_.reserve(pos_verdicts_, n * sizeof(NodeVerdict));
    device_.reserve(raw_pos_, slots * n * sizeof(int64_t));
    device_.reserve(keys_, n * sizeof(uint64_t));
    if (!flat) {
      device_.reserve(feasible_pos_, n * sizeof(uint32_t));
      device_.reserve(nodes_, n * sizeof(uint32_t));
      if (random_ties) device_.reserve(tied_, n * sizeof(uint32_t));
      device_.reserve(temp_, temp_bytes);
    }
    device_.reserve(partials_, select_blocks * std::max(sizeof(BestItem), sizeof(FlatPartial)));
    if (req.want_scores) {
      if (fault_.arrive(FaultPoint::kState)) throw DeviceOutOfMemory(fault_.message("CUDA backend"));
      device_.reserve(totals_, n * sizeof(int64_t));
      device_.reserve(raw_c_, slots * n * sizeof(int64_t));
      device_.reserve(norm_c_, slots * n * sizeof(int64_t));
    }

    auto* d_pod = static_cast<uint8_t*>(mirror_.sync(snap, stream_, up, upload));
    if (!d_pod) {
      device_.reserve(d_pod_, upload);
      BULKSCORE_CUDA_TRY(cudaMemcpyAsync(d_pod_.get(), up, upload, cudaMemcpyHostToDevice, stream_));
      d_pod = d_pod_.as<uint8_t>();
    }

    PodLaunch p;
    p.snap = mirror_.view();
    p.query = hq;
    p.query.arena = d_pod + arena_at;
    p.visit = host_visit;  // same order, device arrays
    if (req.candidates)
      p.visit.order = reinterpret_cast<const uint32_t*>(d_pod + cand_at);
    else if (sampling)
      p.visit.order = mirror_.tree_order();
    p.cap = (sampling && req.num_to_find > 0) ? req.num_to_find : UINT32_MAX;
    p.sampling = sampling;
    p.fused = !hq.prescore_feasible;
    p.score_single = req.score_single;
    p.want_scores = req.want_scores;
    p.compact = !flat;
    p.select_blocks = select_blocks;

    WorkBuffers w;
    w.ctrl = reinterpret_cast<Control*>(d_pod);
    w.flags = flags_.as<uint8_t>();
    w.pos_verdicts = keep_verdicts ? pos_verdicts_.as<NodeVerdict>() : nullptr;
    w.raw_pos = raw_pos_.as<int64_t>();
    w.feasible_pos = flat ? nullptr : feasible_pos_.as<uint32_t>();
    w.keys = keys_.as<uint64_t>();
    w.nodes = flat ? nullptr : nodes_.as<uint32_t>();
    if (req.want_scores) {
      w.totals = totals_.as<int64_t>();
      w.raw_c = raw_c_.as<int64_t>();
      w.norm_c = norm_c_.as<int64_t>();
    }
    w.tied = random_ties && !flat ? tied_.as<uint32_t>() : nullptr;
    w.partials = partials_.as<BestItem>();
    w.flat_partials = partials_.as<FlatPartial>();
    w.temp = flat ? nullptr : temp_.get();
    w.temp_bytes = flat ? 0 : temp_bytes;
    BULKSCORE_CUDA_TRY(enqueue_filter(p, w, stream_));
    if (fault_.arrive(FaultPoint::kFilter)) throw CudaError(fault_.message("CUDA backend"));
    if (flat) {
      // The answer straight into back_ (pinned, so mapped where addressing
      // is unified); where the device cannot address it, copied back.
      // The device's address of back_, asked once per allocation.
      if (back_.get() != mapped_host_) {
        void* mapped = nullptr;
        mapped_host_ = back_.get();
        if (cudaHostGetDevicePointer(&mapped, back_.get(), 0) != cudaSuccess) {
          (void)cudaGetLastError();
          mapped = nullptr;
        }
        mapped_device_ = static_cast<uint8_t*>(mapped);
      }
      w.mapped_back = mapped_device_;
      BULKSCORE_CUDA_TRY(enqueue_select_every_node(p, w, stream_));
    } else {
      const uint32_t to_score = p.fused ? 0 : run_prescore(snap, query, req, host_visit, p, w);
      BULKSCORE_CUDA_TRY(enqueue_scoring(p, w, to_score, stream_));
      if (random_ties) BULKSCORE_CUDA_TRY(enqueue_collect_tied(p, w, stream_));
    }

    // The answer, the histogram and the tie count: one small copy back (the
    // flat pipeline's kernel wrote them), one sync.
    constexpr size_t kBackBytes = sizeof(Control) - offsetof(Control, answer);
    if (!w.mapped_back)
      BULKSCORE_CUDA_TRY(cudaMemcpyAsync(back_.get(),
                                         reinterpret_cast<const uint8_t*>(w.ctrl) + offsetof(Control, answer),
                                         kBackBytes, cudaMemcpyDeviceToHost, stream_));
    BULKSCORE_CUDA_TRY(cudaStreamSynchronize(stream_));
    in_flight_ = false;
    const auto* back = back_.as<const uint8_t>();
    Answer a;
    std::memcpy(&a, back, sizeof a);
    std::memcpy(out.rejections.counts.data(), back + sizeof(Answer), sizeof(uint32_t) * kHistBins);
    uint32_t num_tied = 0, num_ranked = 0;
    std::memcpy(&num_tied, back + (offsetof(Control, num_tied) - offsetof(Control, answer)), sizeof num_tied);
    std::memcpy(&num_ranked, back + (offsetof(Control, num_ranked) - offsetof(Control, answer)), sizeof num_ranked);
    out.num_feasible = a.num_feasible;
    out.processed = a.processed;
    out.chosen = a.chosen;
    out.chosen_total = a.chosen_total;
    out.scored = a.scored != 0;
    // --tie-break random: the kernels found the best total (and the lowest
    // node with it) and gathered the nodes tied at that total. The pod's draw
    // is a rank among them in ascending node index (tie_rank, the CPU
    // backend's rule). One tied node is the chosen one; a small tie copies
    // the tied nodes back for pick_tied; a large one (identical nodes of a
    // big cluster) is put in index order on the device and only the node of
    // the drawn rank comes back. The flat pipeline drew on the device; a
    // draw it could not place (its counts disagreeing) is a device error,
    // as a disagreeing count is here.
    if (random_ties && out.scored && a.num_feasible > 1 && num_tied > 1) {
      if (num_tied > a.num_feasible)
        throw CudaError("CUDA backend: " + std::to_string(num_tied) + " tied nodes out of " +
                        std::to_string(a.num_feasible) + " feasible");
      if (flat && num_ranked == kTieNotFound)
        throw CudaError("CUDA backend: the drawn node of " + std::to_string(num_tied) + " tied nodes was not found");
    }
    if (random_ties && !flat && out.scored && a.num_feasible > 1 && num_tied > 1) {
      out.chosen = static_cast<int32_t>(draw_tied(w, num_tied, hs.num_nodes, p.query, static_cast<uint32_t>(a.chosen)));
    }

    if (req.want_verdicts || ((req.want_scores || req.want_sorted) && a.num_feasible > 0))
      copy_lists(req, p.query, w, a, host_visit, out);
  }

  bool batched_dry_run() const override { return true; }

  // DefaultPreemption's dry run over every node of `batch` in one launch:
  // the mirror brought up to date, [arena | nodes | offsets | victims |
  // requests] up in one copy, device copies of the four patched columns
  // made from the mirror (device to device), one thread per node
  // (dry_run_node), [results | removed] back in one copy, one sync. The
  // host ordered the victims and builds the candidates.
  void dry_run_preemption(const Snapshot& snap, const PodQuery& query, const DryRunBatch& batch,
                          DryRunOutput& out) override {
    const ScopedDevice on_our_device(device_id_);
    begin_call();
    const auto count = static_cast<uint32_t>(batch.nodes.size());
    out.nodes.assign(count, DryRunNodeResult{});
    out.removed.assign(batch.victims.size(), 0);
    if (count == 0) return;
    in_flight_ = true;
    mirror_.sync(snap, stream_);
    const SnapshotView hs = snap.view();
    const SnapshotView base = mirror_.view();

    size_t at = 0;
    const auto place = [&](size_t bytes) {
      const size_t here = at;
      at = align_up(at + bytes, 256);
      return here;
    };
    const size_t arena_at = place(query.arena.size());
    const size_t nodes_at = place(count * sizeof(uint32_t));
    const size_t offsets_at = place((count + 1) * sizeof(uint32_t));
    const size_t victims_at = place(batch.victims.size() * sizeof(DryRunVictim));
    const size_t requests_at = place(batch.requests.size() * sizeof(DryRunRequest));
    const size_t taken_at = place(batch.taken.size() * sizeof(int64_t));
    const size_t upload = at;
    pinned_.reserve(upload_, upload);
    device_.reserve(d_pod_, upload);
    auto* up = upload_.as<uint8_t>();
    const auto put = [&](size_t where, const void* src, size_t bytes) {
      if (bytes) std::memcpy(up + where, src, bytes);
    };
    put(arena_at, query.arena.data(), query.arena.size());
    put(nodes_at, batch.nodes.data(), count * sizeof(uint32_t));
    put(offsets_at, batch.offsets.data(), (count + 1) * sizeof(uint32_t));
    put(victims_at, batch.victims.data(), batch.victims.size() * sizeof(DryRunVictim));
    put(requests_at, batch.requests.data(), batch.requests.size() * sizeof(DryRunRequest));
    put(taken_at, batch.taken.data(), batch.taken.size() * sizeof(int64_t));

    // The patched columns: the mirror's, copied on the device. dry_run_node
    // writes a node's whole row before Filter reads it, so stale rows would
    // do; the copy keeps every row a Filter could read the snapshot's.
    const size_t n = hs.num_nodes;
    at = 0;
    const size_t req_at = place(static_cast<size_t>(hs.num_resources) * n * sizeof(int64_t));
    const size_t count_at = place(n * sizeof(int32_t));
    const size_t port_counts_at = place(n * sizeof(uint32_t));
    const size_t ports_at = place(static_cast<size_t>(hs.port_offsets[n]) * sizeof(HostPortEntry));
    device_.reserve(dry_columns_, std::max<size_t>(at, 1));
    at = 0;
    const size_t results_at = place(count * sizeof(DryRunNodeResult));
    const size_t removed_at = place(batch.victims.size());
    const size_t back = at;
    device_.reserve(dry_out_, back);
    pinned_.reserve(result_, back);

    BULKSCORE_CUDA_TRY(cudaMemcpyAsync(d_pod_.get(), up, upload, cudaMemcpyHostToDevice, stream_));
    auto* cols = dry_columns_.as<uint8_t>();
    const auto copy_column = [&](size_t where, const void* src, size_t bytes) {
      if (bytes) BULKSCORE_CUDA_TRY(cudaMemcpyAsync(cols + where, src, bytes, cudaMemcpyDeviceToDevice, stream_));
    };
    copy_column(req_at, base.requested, static_cast<size_t>(hs.num_resources) * n * sizeof(int64_t));
    copy_column(count_at, base.pod_count, n * sizeof(int32_t));
    copy_column(port_counts_at, base.port_counts, n * sizeof(uint32_t));
    copy_column(ports_at, base.ports, static_cast<size_t>(hs.port_offsets[n]) * sizeof(HostPortEntry));

    DryRunLaunch l{};
    l.base = base;
    l.cols = DryRunColumns{reinterpret_cast<int64_t*>(cols + req_at), reinterpret_cast<int32_t*>(cols + count_at),
                           reinterpret_cast<uint32_t*>(cols + port_counts_at),
                           reinterpret_cast<HostPortEntry*>(cols + ports_at)};
    l.patched = base;
    l.patched.requested = l.cols.requested;
    l.patched.pod_count = l.cols.pod_count;
    l.patched.port_counts = l.cols.port_counts;
    l.patched.ports = l.cols.ports;
    l.query = query.view();
    const auto* d = d_pod_.as<const uint8_t>();
    l.query.arena = d + arena_at;
    l.nodes = reinterpret_cast<const uint32_t*>(d + nodes_at);
    l.offsets = reinterpret_cast<const uint32_t*>(d + offsets_at);
    l.victims = reinterpret_cast<const DryRunVictim*>(d + victims_at);
    l.requests = reinterpret_cast<const DryRunRequest*>(d + requests_at);
    l.taken = batch.table_total ? reinterpret_cast<const int64_t*>(d + taken_at) : nullptr;
    l.table_total = batch.table_total;
    for (uint32_t f = 0; f < kMaxProfilePlugins; ++f) l.table_slot_at[f] = batch.table_slot_at[f];
    auto* o = dry_out_.as<uint8_t>();
    l.results = reinterpret_cast<DryRunNodeResult*>(o + results_at);
    l.removed = o + removed_at;
    l.count = count;
    BULKSCORE_CUDA_TRY(enqueue_preemption_dry_run(l, stream_));
    if (fault_.arrive(FaultPoint::kPreempt)) throw CudaError(fault_.message("CUDA backend"));
    BULKSCORE_CUDA_TRY(cudaMemcpyAsync(result_.get(), o, back, cudaMemcpyDeviceToHost, stream_));
    BULKSCORE_CUDA_TRY(cudaStreamSynchronize(stream_));
    in_flight_ = false;
    const auto* host = result_.as<const uint8_t>();
    std::memcpy(out.nodes.data(), host + results_at, count * sizeof(DryRunNodeResult));
    if (!out.removed.empty()) std::memcpy(out.removed.data(), host + removed_at, out.removed.size());
  }

 private:
  // Every call's start (on our device). A previous call that threw may have
  // left copies from the pinned buffers in flight; the host is about to
  // overwrite them. Then the pools learn which buffers this call uses.
  void begin_call() {
    if (in_flight_) {
      BULKSCORE_CUDA_TRY(cudaStreamSynchronize(stream_));
      in_flight_ = false;
    }
    device_.begin_call();
    pinned_.begin_call();
  }

  // Ties up to this many are drawn on the host from the copied list;
  // larger ones are ranked on the device (enqueue_rank_tied).
  static constexpr uint32_t kHostTieLimit = 1024;

  // The node of rank tie_rank(num_tied) in ascending index among the
  // `num_tied` nodes in w.tied (after the answer's sync; the stream is idle).
  uint32_t draw_tied(const WorkBuffers& w, uint32_t num_tied, uint32_t num_nodes, const PodQueryView& q,
                     uint32_t fallback) {
    in_flight_ = true;
    if (num_tied <= kHostTieLimit) {
      pinned_.reserve(tied_back_, num_tied * sizeof(uint32_t));
      BULKSCORE_CUDA_TRY(cudaMemcpyAsync(tied_back_.get(), w.tied, num_tied * sizeof(uint32_t),
                                         cudaMemcpyDeviceToHost, stream_));
      if (fault_.arrive(FaultPoint::kTie)) throw CudaError(fault_.message("CUDA backend"));
      BULKSCORE_CUDA_TRY(cudaStreamSynchronize(stream_));
      in_flight_ = false;
      const auto* tied = tied_back_.as<const uint32_t>();
      return pick_tied(
          num_tied, 0, [](size_t) { return int64_t{0}; }, [&](size_t i) { return tied[i]; }, q, tie_scratch_,
          fallback);
    }
    const uint64_t rank = tie_rank(num_tied, q);
    device_.reserve(tie_flags_, num_nodes);
    device_.reserve(ranked_, static_cast<size_t>(num_nodes) * sizeof(uint32_t));
    pinned_.reserve(tied_back_, 2 * sizeof(uint32_t));
    auto* back = tied_back_.as<uint8_t>();
    BULKSCORE_CUDA_TRY(
        enqueue_rank_tied(w, num_tied, tie_flags_.as<uint8_t>(), num_nodes, ranked_.as<uint32_t>(), stream_));
    BULKSCORE_CUDA_TRY(cudaMemcpyAsync(back, ranked_.as<uint32_t>() + rank, sizeof(uint32_t),
                                       cudaMemcpyDeviceToHost, stream_));
    BULKSCORE_CUDA_TRY(cudaMemcpyAsync(back + sizeof(uint32_t), &w.ctrl->num_ranked, sizeof(uint32_t),
                                       cudaMemcpyDeviceToHost, stream_));
    if (fault_.arrive(FaultPoint::kTie)) throw CudaError(fault_.message("CUDA backend"));
    BULKSCORE_CUDA_TRY(cudaStreamSynchronize(stream_));
    in_flight_ = false;
    uint32_t node = 0, ranked = 0;
    std::memcpy(&node, back, sizeof node);
    std::memcpy(&ranked, back + sizeof(uint32_t), sizeof ranked);
    if (ranked != num_tied)
      throw CudaError("CUDA backend: " + std::to_string(ranked) + " tied nodes ranked of " + std::to_string(num_tied));
    return node;
  }

  // The feasible-set PreScore, between Filter and Score: waits for the
  // compaction, reads the kept feasible positions back, runs the host
  // PreScore over their nodes (exactly as the CPU backend does) and uploads
  // the completed arena, pointing p.query at it. Returns the number of kept
  // nodes to score: 0 when nothing will be scored (no feasible node, or a
  // lone one, which upstream picks without PreScore and Score).
  uint32_t run_prescore(const Snapshot& snap, PodQuery& query, const EvalRequest& req, const VisitOrder& host_visit,
                        PodLaunch& p, const WorkBuffers& w) {
    pinned_.reserve(back_, sizeof(Control));
    BULKSCORE_CUDA_TRY(
        cudaMemcpyAsync(back_.get(), &w.ctrl->num_selected, sizeof(uint32_t), cudaMemcpyDeviceToHost, stream_));
    BULKSCORE_CUDA_TRY(cudaStreamSynchronize(stream_));
    uint32_t found = 0;
    std::memcpy(&found, back_.get(), sizeof found);
    const uint32_t kept = std::min(found, p.cap);
    if (kept == 0 || (kept == 1 && !req.score_single)) return 0;

    pinned_.reserve(prescore_pos_, kept * sizeof(uint32_t));
    BULKSCORE_CUDA_TRY(
        cudaMemcpyAsync(prescore_pos_.get(), w.feasible_pos, kept * sizeof(uint32_t), cudaMemcpyDeviceToHost, stream_));
    BULKSCORE_CUDA_TRY(cudaStreamSynchronize(stream_));
    const auto* pos = prescore_pos_.as<const uint32_t>();
    prescore_nodes_.resize(kept);
    for (uint32_t i = 0; i < kept; ++i) prescore_nodes_[i] = host_visit.node_at(pos[i]);
    run_feasible_prescore(snap, query, prescore_nodes_.data(), kept);

    const PodQueryView hq = query.view();
    const size_t bytes = query.arena.size();
    pinned_.reserve(prescore_arena_, std::max<size_t>(bytes, 1));
    device_.reserve(d_prescore_arena_, std::max<size_t>(bytes, 1));
    if (bytes) {
      std::memcpy(prescore_arena_.get(), query.arena.data(), bytes);
      in_flight_ = true;
      BULKSCORE_CUDA_TRY(
          cudaMemcpyAsync(d_prescore_arena_.get(), prescore_arena_.get(), bytes, cudaMemcpyHostToDevice, stream_));
    }
    if (fault_.arrive(FaultPoint::kPreScore)) throw CudaError(fault_.message("CUDA backend"));
    p.query = hq;
    p.query.arena = d_prescore_arena_.as<const uint8_t>();
    return kept;
  }

  // The per-node lists that were asked for, after the answer told their sizes.
  // `tree_order`: the host node-tree order when the visit walks it.
  void copy_lists(const EvalRequest& req, const PodQueryView& hq, const WorkBuffers& w, const Answer& a,
                  const VisitOrder& host_visit, EvalResult& out) {
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
    pinned_.reserve(result_, at);
    in_flight_ = true;
    auto* host = result_.as<uint8_t>();
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
        device_.reserve(sorted_keys_, f * sizeof(uint64_t));
        device_.reserve(sorted_nodes_, f * sizeof(uint32_t));
        // Sized for all candidates up front; checked for f anyway (a regrow
        // frees only what no queued copy reads: the kernels that used temp_
        // finished before the answer's sync).
        size_t sort_bytes = 0;
        BULKSCORE_CUDA_TRY(sort_temp_bytes(static_cast<uint32_t>(f), sort_bytes));
        device_.reserve(temp_, std::max(sort_bytes, w.temp_bytes));
        BULKSCORE_CUDA_TRY(enqueue_sort_descending(w.keys, w.nodes, sorted_keys_.as<uint64_t>(),
                                                   sorted_nodes_.as<uint32_t>(), static_cast<uint32_t>(f), end_bit,
                                                   temp_.get(), std::max(sort_bytes, w.temp_bytes), stream_));
        keys = sorted_keys_.as<const uint64_t>();
        nodes = sorted_nodes_.as<const uint32_t>();
      }
      back(skeys_at, keys, f * sizeof(uint64_t));
      back(snodes_at, nodes, f * sizeof(uint32_t));
    }
    if (fault_.arrive(FaultPoint::kLists)) throw CudaError(fault_.message("CUDA backend"));
    BULKSCORE_CUDA_TRY(cudaStreamSynchronize(stream_));
    in_flight_ = false;

    if (req.want_verdicts) {
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
      // The radix sort is stable over the visiting order; keys are unique
      // per node (total, then node index), so this only checks the order.
      order_equal_keys_by_node(out.sorted_keys.data(), out.sorted_nodes.data(), f);
    }
  }

  FaultInjection fault_;  // BULKSCORE_CUDA_FAULT_AT (never, unless set)
  int device_id_ = 0;
  int num_sms_ = 1;
  cudaStream_t stream_ = nullptr;
  bool in_flight_ = false;  // work enqueued and not yet waited for (a call threw)
  std::vector<uint32_t> tie_scratch_;  // the random tie-break's draw (small ties)
  std::vector<uint32_t> prescore_nodes_;
  const void* mapped_host_ = nullptr;  // back_'s address when mapped_device_ was asked
  uint8_t* mapped_device_ = nullptr;   // the device's address of it; nullptr: copy back instead
  Control control_init_;
  uint32_t temp_count_ = 0;
  bool temp_has_sort_ = false;
  size_t temp_bytes_ = 0;

  // Members are destroyed in reverse order. The pools come before every
  // buffer (they only hand memory out: a buffer frees itself through its
  // static allocator), the buffers before the stream: the stream, last, is
  // synchronized and destroyed first, then the buffers are freed.
  DeviceMemoryPool device_{g_device_memory, 256};
  DeviceMemoryPool pinned_{g_pinned_memory, 4096};
  SnapshotMirror mirror_{device_, pinned_};
  // Per-pod scratch, grown to the high-water mark (all of it scratch to the
  // pools: released when a call that needs room does not use it).
  GrowingBuffer upload_, back_, result_, prescore_pos_, prescore_arena_, tied_back_;  // pinned
  GrowingBuffer d_prescore_arena_, d_pod_, flags_, pos_verdicts_, raw_pos_, feasible_pos_, keys_, nodes_, totals_,
      raw_c_, norm_c_, tied_, tie_flags_, ranked_, partials_, temp_, sorted_keys_, sorted_nodes_,
      dry_columns_, dry_out_;  // device
  Stream stream_holder_;  // last: destroyed first (see Stream)
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
