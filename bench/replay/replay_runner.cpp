// Running one policy over one seed's workload, the per-pod metrics, and the
// paper's bucketing by arrival %.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <string_view>
#include <unordered_set>

#include "bench/replay/replay.hpp"
#include "host/engine/engine.hpp"
#include "host/engine/pod_query.hpp"
#include "plugins/gpu_fragmentation.hpp"

namespace bulkscore {
namespace {

// The typical tasks flattened for node_fragmentation, their allowed models
// as the snapshot's string ids (a model no node has gets kNoId, which never
// equals a node's model).
struct FlatShapes {
  std::vector<TaskShape> shapes;
  std::vector<int32_t> models;
};

FlatShapes flatten(const std::vector<TypicalTask>& typical, const Snapshot& snap) {
  FlatShapes f;
  for (const TypicalTask& t : typical) {
    TaskShape s{};
    s.cpu_milli = t.cpu_milli;
    s.weight = t.weight;
    s.milli = t.milli;
    s.count = t.count;
    s.first_model = static_cast<uint32_t>(f.models.size());
    s.num_models = static_cast<uint32_t>(t.models.size());
    for (const std::string& m : t.models) f.models.push_back(snap.string_id(m));
    f.shapes.push_back(s);
  }
  return f;
}

// The cluster's GPU state, kept per node so that a placement only
// recomputes the node it changed.
class ClusterGpuMetrics {
 public:
  ClusterGpuMetrics(const Snapshot& snap, const DeviceModel& model, FlatShapes shapes)
      : shapes_(std::move(shapes)), model_key_(snap.string_id(model.model_label)) {
    const uint32_t n = snap.num_nodes();
    frag_.assign(n, 0.0);
    idle_.assign(n, 0);
    const SnapshotView v = snap.view();
    for (uint32_t node = 0; node < n; ++node) {
      for (uint32_t d = v.device_offsets[node]; d < v.device_offsets[node + 1]; ++d) units_ += v.device_units[d];
      update(snap, node);
    }
  }

  // Node `node` changed (a pod was placed on it).
  void update(const Snapshot& snap, uint32_t node) {
    const SnapshotView v = snap.view();
    const uint32_t first = v.device_offsets[node];
    const uint32_t count = v.device_offsets[node + 1] - first;
    int64_t idle = 0;
    for (uint32_t d = first; d < first + count; ++d) idle += v.device_free[d];
    idle_total_ += idle - idle_[node];
    idle_[node] = idle;
    const int32_t model = model_key_ == kNoId ? -1 : v.label_value(node, model_key_);
    const int64_t cpu_left = v.alloc(kCpu, node) - v.req(kCpu, node);
    frag_[node] =
        node_fragmentation(v.device_free + first, v.device_units + first, count, cpu_left, model, shapes_.shapes.data(),
                           static_cast<uint32_t>(shapes_.shapes.size()), shapes_.models.data());
  }

  // How much node `node`'s fragmentation would grow (in units; negative:
  // shrink) if a pod took `milli` units (kWholeDevice: all of them) on each
  // of `devices` and `cpu` millicores there. The same rule as update().
  double growth_if(const Snapshot& snap, uint32_t node, const std::vector<int32_t>& devices, int32_t milli,
                   int64_t cpu) const {
    const SnapshotView v = snap.view();
    const uint32_t first = v.device_offsets[node];
    const uint32_t count = v.device_offsets[node + 1] - first;
    std::vector<int64_t> free(v.device_free + first, v.device_free + first + count);
    for (int32_t d : devices)
      free[static_cast<size_t>(d)] -= units_needed(milli, v.device_units[first + static_cast<uint32_t>(d)]);
    const int32_t model = model_key_ == kNoId ? -1 : v.label_value(node, model_key_);
    const int64_t cpu_left = v.alloc(kCpu, node) - v.req(kCpu, node) - cpu;
    const double after =
        node_fragmentation(free.data(), v.device_units + first, count, cpu_left, model, shapes_.shapes.data(),
                           static_cast<uint32_t>(shapes_.shapes.size()), shapes_.models.data());
    return after - frag_[node];
  }

  int64_t idle() const { return idle_total_; }
  int64_t allocated() const { return units_ - idle_total_; }
  // Summed afresh in node order each time: the same bits whatever the
  // order of placements (an incremental total would drift).
  double frag() const {
    double f = 0;
    for (double x : frag_) f += x;
    return f;
  }

 private:
  FlatShapes shapes_;
  int32_t model_key_;
  std::vector<double> frag_;
  std::vector<int64_t> idle_;
  int64_t idle_total_ = 0;
  int64_t units_ = 0;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The window's pod to place next (an index into `window`, which is in
// arrival order), as ReplayOptions::lookahead describes. Growth is measured
// on the node and devices Engine::peek reports, in units, so that it
// compares across pods, unlike FGD's score, which is relative to the pod's
// own nodes.
size_t pick_from_window(Engine& engine, const ClusterGpuMetrics& metrics, const ReplayTrace& trace,
                        const TunedWorkload& workload, const std::deque<std::pair<size_t, Pod>>& window,
                        LookaheadOrder order) {
  size_t pick = 0;
  bool found = false;
  double best = 0;
  for (size_t k = 0; k < window.size(); ++k) {
    const ScheduleResult peek = engine.peek(window[k].second);
    if (peek.node < 0) return k;
    double key = 0;  // smaller is better
    if (order == LookaheadOrder::Score) {
      key = -static_cast<double>(peek.score);
    } else if (order == LookaheadOrder::Constrained) {
      key = static_cast<double>(peek.feasible_nodes);
    } else {
      const TracePod& row = trace.pods[workload.order[window[k].first]];
      const double growth = metrics.growth_if(engine.snapshot(), static_cast<uint32_t>(peek.node), peek.devices,
                                              trace_pod_milli(row), row.cpu_milli);
      key = growth;
      if (order == LookaheadOrder::GrowthPerGpu)
        key = growth / static_cast<double>(std::max<int64_t>(trace_pod_gpu_units(row), 1000));
      if (order == LookaheadOrder::Fill && !(growth < 0)) continue;
    }
    if (!found || key < best) {
      best = key;
      pick = k;
      found = true;
    }
  }
  return pick;
}

// BigSharesFirst's groups: shares above 500 units, whole GPUs, other
// shares, no GPU.
int big_shares_group(const TracePod& p) {
  const int32_t milli = trace_pod_milli(p);
  if (p.num_gpu == 0 || milli == 0) return 3;
  if (milli >= 1000) return 1;
  return milli > 500 ? 0 : 2;
}

// Whether `a` goes strictly before `b` in a sorting order (a strict weak
// order: equal keys compare false both ways, so a stable sort keeps
// arrival order among them).
bool demand_before(const TracePod& a, const TracePod& b, LookaheadOrder order) {
  if (order == LookaheadOrder::BigSharesFirst) {
    const int ga = big_shares_group(a);
    const int gb = big_shares_group(b);
    if (ga != gb) return ga < gb;
  }
  const int64_t ua = trace_pod_gpu_units(a);
  const int64_t ub = trace_pod_gpu_units(b);
  if (ua != ub) return ua > ub;
  return order == LookaheadOrder::DecreasingCpu && a.cpu_milli > b.cpu_milli;
}

}  // namespace

bool lookahead_order_sorts(LookaheadOrder order) {
  return order == LookaheadOrder::Decreasing || order == LookaheadOrder::DecreasingCpu ||
         order == LookaheadOrder::DecreasingGpuPods || order == LookaheadOrder::BigSharesFirst;
}

std::vector<size_t> sort_window(const std::vector<const TracePod*>& rows, LookaheadOrder order) {
  std::vector<size_t> placed(rows.size());
  std::iota(placed.begin(), placed.end(), size_t{0});
  if (!lookahead_order_sorts(order)) return placed;
  // The positions that take part; DecreasingGpuPods leaves the others be.
  std::vector<size_t> slots;
  for (size_t k = 0; k < rows.size(); ++k)
    if (order != LookaheadOrder::DecreasingGpuPods || trace_pod_gpu_units(*rows[k]) > 0) slots.push_back(k);
  std::vector<size_t> sorted = slots;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [&](size_t a, size_t b) { return demand_before(*rows[a], *rows[b], order); });
  for (size_t i = 0; i < slots.size(); ++i) placed[slots[i]] = sorted[i];
  return placed;
}

std::vector<TypicalTask> replay_typical_tasks(const ReplayTrace& trace) {
  std::vector<Pod> pods;
  pods.reserve(trace.pods.size());
  for (const TracePod& p : trace.pods) pods.push_back(trace_pod_shape(p));
  constexpr double kPopularity = 0.95;  // the paper's podPopularityThreshold
  return typical_tasks(pods, DeviceModel{}, kPopularity);
}

void check_replay_policy(const ReplayPolicy& policy, const std::vector<TypicalTask>& typical) {
  const SchedulerConfig config = replay_scheduler_config(policy, 0, typical);
  (void)make_profile_plan(config.profiles.at(0));
}

ReplayGpuState replay_gpu_state(const Snapshot& snap, const std::vector<TypicalTask>& typical,
                                const DeviceModel& model) {
  const ClusterGpuMetrics metrics(snap, model, flatten(typical, snap));
  ReplayGpuState s;
  s.allocated_units = metrics.allocated();
  s.idle_units = metrics.idle();
  s.capacity_units = s.allocated_units + s.idle_units;
  s.frag_units = metrics.frag();
  return s;
}

SeedRun run_replay_seed(const ReplayTrace& trace, const std::vector<TypicalTask>& typical, const ReplayPolicy& policy,
                        uint64_t seed, const ReplayOptions& options) {
  const auto wall0 = std::chrono::steady_clock::now();
  SeedRun run;
  run.seed = seed;
  run.workload = tune_workload(trace, seed, options.tune);
  if (options.max_pods > 0 && run.workload.order.size() > options.max_pods) run.workload.order.resize(options.max_pods);

  EngineOptions eo;
  eo.backend = options.backend;
  eo.tie_break = options.tie_break;  // First: the lowest node index, the lowest rank of the permutation
  eo.seed = seed;
  eo.threads = options.threads;
  eo.batching = options.batching;
  eo.batch_states = options.batch_states;
  auto engine_ptr = std::make_unique<Engine>(replay_scheduler_config(policy, seed, typical), eo);

  Cluster cluster;
  cluster.nodes.resize(trace.nodes.size());
  const std::vector<uint32_t> rank = node_ranks(trace.nodes.size(), seed);
  for (size_t i = 0; i < trace.nodes.size(); ++i) cluster.nodes[rank[i]] = trace_node_object(trace.nodes[i]);
  // Retargeting reloads the nodes with the pods placed so far.
  const std::vector<Node> nodes_in_order = options.retarget_every > 0 ? cluster.nodes : std::vector<Node>{};
  std::vector<Pod> placed_pods;
  for (const std::string& w : engine_ptr->load(std::move(cluster))) run.warnings.push_back(w);

  const DeviceModel model;
  auto metrics_ptr =
      std::make_unique<ClusterGpuMetrics>(engine_ptr->snapshot(), model, flatten(typical, engine_ptr->snapshot()));

  // Clones get a name of their own so that every pod key is unique (the
  // engine refuses a pod it holds already): "<name>-clone-<k>", k counting
  // the row's clones, skipping a name a pod of the trace has ("a-clone-1"
  // beside "a"). Trace names are unique (parse_trace_pods), and two clone
  // names differ in their base or their k.
  std::vector<uint32_t> times_used(trace.pods.size(), 0);
  std::unordered_set<std::string_view> trace_names;
  trace_names.reserve(trace.pods.size());
  for (const TracePod& p : trace.pods) trace_names.insert(p.name);
  const auto pod_name = [&](size_t row) -> std::string {
    const std::string& name = trace.pods[row].name;
    uint32_t& used = times_used[row];  // pods made of the row so far
    if (used++ == 0) return name;
    std::string clone = name + "-clone-" + std::to_string(used - 1);
    while (trace_names.count(clone) != 0) clone = name + "-clone-" + std::to_string(used++);
    return clone;
  };
  std::map<std::string, size_t> warnings;
  ReplayProgress progress;
  progress.policy = policy.name;
  progress.seed = seed;
  progress.total = run.workload.order.size();
  run.events.reserve(run.workload.order.size());
  ReplayEvent state;
  // Look-ahead: the window of arrived pods not placed yet, in arrival order
  // (a sorting order: in the order they will be placed).
  std::deque<std::pair<size_t, Pod>> window;
  size_t next = 0;
  const size_t width = std::max<size_t>(options.lookahead, 1);
  const bool sorts = lookahead_order_sorts(options.lookahead_order);
  for (size_t i = 0; i < run.workload.order.size(); ++i) {
    if (options.stop && options.stop->load()) throw ReplayInterrupted("interrupted");
    if (window.empty()) {
      for (; next < run.workload.order.size() && window.size() < width; ++next) {
        const uint32_t row = run.workload.order[next];
        window.emplace_back(next, trace_pod_object(trace.pods[row], model, pod_name(row)));
      }
      if (sorts && window.size() > 1) {
        std::vector<const TracePod*> rows;
        rows.reserve(window.size());
        for (const auto& w : window) rows.push_back(&trace.pods[run.workload.order[w.first]]);
        std::deque<std::pair<size_t, Pod>> sorted;
        for (size_t k : sort_window(rows, options.lookahead_order)) sorted.push_back(std::move(window[k]));
        window = std::move(sorted);
      }
    }
    const auto t0 = std::chrono::steady_clock::now();
    if (options.retarget_every > 0 && i % options.retarget_every == 0) {
      // FGD's target workload from the pending pods (ReplayOptions): the
      // window's pods not placed yet, then the later arrivals, up to the
      // horizon. The engine is made afresh with their typical tasks and the
      // pods placed so far; the metrics keep the trace's typical tasks.
      std::vector<Pod> pending;
      const size_t horizon = options.retarget_horizon > 0 ? options.retarget_horizon : run.workload.order.size();
      for (size_t k = 0; k < window.size() && pending.size() < horizon; ++k)
        pending.push_back(trace_pod_shape(trace.pods[run.workload.order[window[k].first]], model));
      for (size_t j = next; j < run.workload.order.size() && pending.size() < horizon; ++j)
        pending.push_back(trace_pod_shape(trace.pods[run.workload.order[j]], model));
      const std::vector<TypicalTask> target = typical_tasks(pending, model, 0.95);
      for (const std::string& w : engine_ptr->take_warnings()) ++warnings[w];
      engine_ptr = std::make_unique<Engine>(replay_scheduler_config(policy, seed, target), eo);
      Cluster again;
      again.nodes = nodes_in_order;
      again.running_pods = placed_pods;
      for (const std::string& w : engine_ptr->load(std::move(again))) ++warnings[w];
      metrics_ptr =
          std::make_unique<ClusterGpuMetrics>(engine_ptr->snapshot(), model, flatten(typical, engine_ptr->snapshot()));
    }
    Engine& engine = *engine_ptr;
    ClusterGpuMetrics& metrics = *metrics_ptr;
    const size_t pick = !sorts && window.size() > 1
                            ? pick_from_window(engine, metrics, trace, run.workload, window, options.lookahead_order)
                            : 0;
    run.event_pods.push_back(window[pick].first);
    const Pod pod = std::move(window[pick].second);
    const TracePod& row = trace.pods[run.workload.order[window[pick].first]];
    window.erase(window.begin() + static_cast<std::ptrdiff_t>(pick));
    const ScheduleResult r = engine.schedule(pod);
    run.schedule_seconds += seconds_since(t0);
    for (const std::string& w : r.warnings) ++warnings[w];
    state.arrived_units += trace_pod_gpu_units(row);
    if (r.node >= 0) {
      ++state.placed;
      if (options.retarget_every > 0) {
        Pod held = pod;
        held.node_name = r.node_name;
        if (!r.devices.empty()) held.annotations[model.index_annotation] = format_device_indices(r.devices);
        placed_pods.push_back(std::move(held));
      }
      metrics.update(engine.snapshot(), static_cast<uint32_t>(r.node));
    } else {
      ++state.failed;
      ++run.failures[r.message];
    }
    state.idle_units = metrics.idle();
    state.allocated_units = metrics.allocated();
    state.frag_units = metrics.frag();
    run.events.push_back(state);
    progress.done = i + 1;
    if (options.on_progress && options.progress_every > 0 && progress.done % options.progress_every == 0)
      options.on_progress(progress);
  }
  for (const std::string& w : engine_ptr->take_warnings()) ++warnings[w];
  for (const auto& [w, n] : warnings) run.warnings.push_back(w + " (" + std::to_string(n) + " pod(s))");
  run.wall_seconds = seconds_since(wall0);
  if (options.on_progress) options.on_progress(progress);
  return run;
}

BucketCurve bucket_seed_run(const SeedRun& run, int64_t capacity_units, int max_pct) {
  const auto buckets = static_cast<size_t>(max_pct) + 1;
  std::vector<double> alloc(buckets, 0), ratio(buckets, 0), amount(buckets, 0), placed(buckets, 0);
  std::vector<size_t> count(buckets, 0);
  const auto cap = static_cast<double>(capacity_units);
  for (const ReplayEvent& e : run.events) {
    const long pct = std::lround(100.0 * static_cast<double>(e.arrived_units) / cap);
    if (pct < 0 || pct > max_pct) continue;
    const auto b = static_cast<size_t>(pct);
    ++count[b];
    alloc[b] += 100.0 * static_cast<double>(e.allocated_units) / cap;
    ratio[b] += e.idle_units > 0 ? 100.0 * e.frag_units / static_cast<double>(e.idle_units) : 0.0;
    amount[b] += 100.0 * e.frag_units / cap;
    placed[b] = e.placed;  // the bucket's last event
  }
  BucketCurve c;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  c.alloc_pct.assign(buckets, nan);
  c.frag_ratio_pct.assign(buckets, nan);
  c.frag_amount_pct.assign(buckets, nan);
  c.placed.assign(buckets, nan);
  const auto fill = [&](size_t to, size_t from) {
    const auto n = static_cast<double>(count[from]);
    c.alloc_pct[to] = alloc[from] / n;
    c.frag_ratio_pct[to] = ratio[from] / n;
    c.frag_amount_pct[to] = amount[from] / n;
    c.placed[to] = placed[from];
  };
  for (size_t b = 0; b < buckets; ++b) {
    if (count[b] > 0)
      fill(b, b);
    else if (b > 0 && count[b - 1] > 0)
      fill(b, b - 1);
    else if (b + 1 < buckets && count[b + 1] > 0)
      fill(b, b + 1);
  }
  return c;
}

PolicySummary summarize_policy(const std::string& policy, const std::vector<SeedRun>& runs, int64_t capacity_units,
                               int max_pct) {
  PolicySummary s;
  s.policy = policy;
  std::vector<BucketCurve> curves;
  curves.reserve(runs.size());
  for (const SeedRun& r : runs) {
    s.seeds.push_back(r.seed);
    s.schedule_seconds += r.schedule_seconds;
    s.wall_seconds += r.wall_seconds;
    s.pods += r.events.size();
    for (const std::string& w : r.warnings) s.warnings.push_back("seed " + std::to_string(r.seed) + ": " + w);
    curves.push_back(bucket_seed_run(r, capacity_units, max_pct));
  }
  const auto buckets = static_cast<size_t>(max_pct) + 1;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Mean (and sample SD) over the seeds that have the bucket.
  const auto stats = [&](std::vector<double> BucketCurve::*field, size_t b, double* sd) {
    double sum = 0;
    size_t n = 0;
    for (const BucketCurve& c : curves) {
      const double x = (c.*field)[b];
      if (std::isnan(x)) continue;
      sum += x;
      ++n;
    }
    if (n == 0) {
      if (sd) *sd = nan;
      return nan;
    }
    const double mean = sum / static_cast<double>(n);
    if (sd) {
      double sq = 0;
      for (const BucketCurve& c : curves) {
        const double x = (c.*field)[b];
        if (!std::isnan(x)) sq += (x - mean) * (x - mean);
      }
      *sd = n > 1 ? std::sqrt(sq / static_cast<double>(n - 1)) : 0.0;
    }
    return mean;
  };
  s.alloc_mean.resize(buckets);
  s.alloc_sd.resize(buckets);
  s.frag_ratio_mean.resize(buckets);
  s.frag_amount_mean.resize(buckets);
  s.placed_mean.resize(buckets);
  for (size_t b = 0; b < buckets; ++b) {
    s.alloc_mean[b] = stats(&BucketCurve::alloc_pct, b, &s.alloc_sd[b]);
    s.frag_ratio_mean[b] = stats(&BucketCurve::frag_ratio_pct, b, nullptr);
    s.frag_amount_mean[b] = stats(&BucketCurve::frag_amount_pct, b, nullptr);
    s.placed_mean[b] = stats(&BucketCurve::placed, b, nullptr);
  }
  return s;
}

}  // namespace bulkscore
