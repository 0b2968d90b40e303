#include "host/engine/engine.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>
#include <unordered_map>

#include "host/common.hpp"
#include "host/input/priority.hpp"
#include "host/input/quote.hpp"
#include "plugins/reserve.hpp"

namespace bulkscore {

uint32_t num_feasible_nodes_to_find(int32_t percentage, uint32_t n, bool has_scoring) {
  if (!has_scoring) return 1;  // no Score plugins and no extenders: the first fit will do
  constexpr uint32_t kMinFeasibleNodesToFind = 100;
  constexpr int64_t kMinFeasibleNodesPercentageToFind = 5;
  if (n < kMinFeasibleNodesToFind) return n;
  int64_t pct = percentage;
  if (pct == 0) {
    pct = 50 - static_cast<int64_t>(n) / 125;
    if (pct < kMinFeasibleNodesPercentageToFind) pct = kMinFeasibleNodesPercentageToFind;
  }
  const int64_t found = static_cast<int64_t>(n) * pct / 100;
  return found < kMinFeasibleNodesToFind ? kMinFeasibleNodesToFind : static_cast<uint32_t>(found);
}

namespace {
std::vector<std::string> scheduler_names_of(const SchedulerConfig& config) {
  std::vector<std::string> out;
  out.reserve(config.profiles.size());
  for (const auto& p : config.profiles) out.push_back(p.scheduler_name);
  return out;
}
}  // namespace

Engine::Engine(SchedulerConfig config, EngineOptions options)
    : config_(std::move(config)),
      options_(std::move(options)),
      metrics_(scheduler_names_of(config_), options_.plugin_metrics_sample_percent, options_.seed) {
  if (config_.profiles.empty()) throw InputError("scheduler configuration has no profile");
  // An engine fed by events alone never loads: its snapshot keeps the limit.
  if (options_.sparse_term_rows != SIZE_MAX) snapshot_.limit_sparse_term_rows(options_.sparse_term_rows);
  for (auto& p : config_.profiles) adjust_profile(p);
  for (const auto& p : config_.profiles) plans_.push_back(make_profile_plan(p));
  batch_counters_.resize(plans_.size());
  batch_.resize(std::max<uint32_t>(1, options_.batch_states));
  batch_order_.resize(batch_.size());
  std::iota(batch_order_.begin(), batch_order_.end(), 0u);
  shapes_.resize(batch_.size());
  for (const ProfileConfig& p : config_.profiles) {
    const ProfileNeeds needs = profile_needs(p);
    if (needs.devices) {
      if (device_model_ && *device_model_ != p.gpu_share_args.model)
        throw InputError("profile " + quote_for_message(p.scheduler_name) +
                         ": GpuShare's device model (resources, label and annotations) differs from another "
                         "profile's; the profiles share one cluster and so one model");
      device_model_ = p.gpu_share_args.model;
    }
    if (needs.device_groups) {
      if (group_model_ && *group_model_ != p.shared_device_group_args.model)
        throw InputError("profile " + quote_for_message(p.scheduler_name) +
                         ": SharedDeviceGroup's label and annotations differ from another profile's; the profiles "
                         "share one cluster and so one set of groups");
      group_model_ = p.shared_device_group_args.model;
    }
  }
  upstream_.resize(plans_.size());
  // By name through the backend registry: the core never calls into the
  // CUDA library. "cuda" is a known name even in a build without it, so that
  // asking for it says why it is missing rather than "unknown".
  const BackendOptions backend_options = cpu_backend_options();
  if (options_.backend == "auto") {
    const std::string why = backend_unavailable_reason("cuda");
    if (why.empty()) {
      try {
        backend_ = make_backend("cuda", backend_options);
        backend_note_ = "auto: CUDA device found";
      } catch (const CudaError& e) {
        // The device answered but the backend could not start (out of
        // memory, a driver error): auto means the CPU then.
        backend_ = make_backend("cpu", backend_options);
        backend_note_ = std::string("auto: using the CPU backend (the CUDA backend failed to start: ") + e.what() + ")";
        warnings_.push_back(backend_note_);
      }
    } else {
      backend_ = make_backend("cpu", backend_options);
      backend_note_ = "auto: using the CPU backend (" + why + ")";
    }
  } else if (options_.backend == "cuda" || backend_registered(options_.backend)) {
    backend_ = make_backend(options_.backend, backend_options);  // throws BackendUnavailable
    backend_note_ = options_.backend + ": requested";
  } else {
    std::string known = "auto";
    for (const std::string& name : compiled_backends()) known += ", " + name;
    if (!backend_registered("cuda")) known += ", cuda (not in this build)";
    throw InputError("unknown backend " + quote_for_message(options_.backend) + " (expected " + known + ")");
  }
}

Engine::~Engine() = default;

BackendOptions Engine::cpu_backend_options() {
  // One executor for every CPU backend this engine makes (the first, a
  // fallback, a list's): the embedder's, else a pool made once.
  if (!executor_) executor_ = options_.executor ? options_.executor : make_thread_pool(std::max(options_.threads, 0));
  BackendOptions o;
  o.threads = options_.threads;
  o.executor = executor_;
  return o;
}

std::vector<std::string> Engine::load(const Cluster& cluster) {
  Cluster copy;
  copy.nodes = cluster.nodes;
  copy.running_pods = cluster.running_pods;
  copy.objects = cluster.objects;
  return load(std::move(copy));
}

std::vector<std::string> Engine::load(Cluster&& cluster) {
  std::vector<std::string> warnings;
  // The running pods as the cache's adds: one per key (a second add of a
  // key is refused, as upstream's cache refuses it), those on a node not in
  // the list kept until it comes.
  pod_records_.clear();
  waiting_by_node_.clear();
  std::unordered_map<std::string, uint32_t> node_names;
  node_names.reserve(cluster.nodes.size());
  for (uint32_t n = 0; n < cluster.nodes.size(); ++n) node_names.emplace(cluster.nodes[n].name, n);
  std::vector<Pod> placed;
  placed.reserve(cluster.running_pods.size());
  std::vector<std::string> placed_keys;
  placed_keys.reserve(cluster.running_pods.size());
  // Priorities as admission set them, and the preemption clock: past every
  // running pod's start time; a running pod without one started "now".
  now_ns_ = 0;
  for (Pod& pod : cluster.running_pods) {
    resolve_pod_priority(pod, cluster.objects);
    if (pod.start_time_ns) now_ns_ = std::max(now_ns_, *pod.start_time_ns + 1000000000);
  }
  for (Pod& pod : cluster.running_pods)
    if (!pod.start_time_ns) pod.start_time_ns = now_ns_;
  for (Pod& pod : cluster.running_pods) {
    std::string key = pod.cache_key();
    metrics_.leave(key);  // bound now: no longer pending
    if (pod_records_.count(key) != 0) {
      warnings.push_back("running pod \"" + pod.key() + "\" (" + pod.origin + ") has the key \"" + key +
                         "\" of an earlier running pod; it is left out");
      continue;
    }
    PodRecord rec;
    rec.node = pod.node_name;
    if (node_names.count(pod.node_name) == 0) {
      waiting_by_node_[rec.node].push_back(key);
      rec.waiting = std::move(pod);
    } else {
      placed_keys.push_back(key);
      placed.push_back(std::move(pod));
    }
    pod_records_.emplace(std::move(key), std::move(rec));
  }
  // The embedder's node data stays with the nodes that are loaded again.
  const Snapshot::NodeDataByName node_data = snapshot_.node_data_by_name();
  snapshot_ = Snapshot::build(cluster.nodes, std::move(placed));
  snapshot_.restore_node_data(node_data);
  if (options_.sparse_term_rows != SIZE_MAX) snapshot_.limit_sparse_term_rows(options_.sparse_term_rows);
  // Pod ids are positions in `placed`.
  for (uint32_t id = 0; id < placed_keys.size(); ++id) pod_records_.at(placed_keys[id]).id = id;
  group_members_.clear();
  for (uint32_t id = 0; id < placed_keys.size(); ++id) index_group_member(id);
  // The snapshot holds what it needs; free the parsed objects now.
  std::vector<Node>().swap(cluster.nodes);
  std::vector<Pod>().swap(cluster.running_pods);
  objects_ = std::move(cluster.objects);
  next_start_node_index_ = 0;
  for (BatchCache& b : batch_) b.clear();
  for (BatchCache& b : shapes_) b.clear();
  for (WindowState& w : window_) {
    w.key.clear();
    w.light.clear();
  }
  for (auto& u : upstream_) u = UpstreamBatch{};
  // Groups first: configuring the devices lays every device column out
  // again (the groups' included), so its warnings are the whole story once.
  // InputError for malformed annotations; warnings for what does not add up.
  if (group_model_) snapshot_.configure_device_groups(objects_.device_groups, *group_model_);
  if (device_model_) {
    snapshot_.configure_devices(*device_model_);
    for (uint32_t id = 0; id < snapshot_.pod_id_bound(); ++id)
      if (snapshot_.has_pod(id)) assign_pod_devices(id, warnings);
  }
  if (group_model_ || device_model_)
    for (std::string& w : snapshot_.take_device_warnings()) warnings.push_back(std::move(w));
  return warnings;
}

void Engine::check_device_annotations(const Pod& pod) const {
  if (device_model_) {
    pod_device_demand(pod, *device_model_);
    // A pending pod's index annotation is replaced when it is placed, but a
    // malformed one is bad input all the same (docs/gpu-placement.md).
    pod_device_indices(pod, *device_model_);
  }
  if (group_model_) {
    pod_device_group(pod, *group_model_);
    pod_group_devices(pod, *group_model_);
  }
}

Reservation Engine::preview_reservation(const Pod& pod, const ProfilePlan& plan, uint32_t node) const {
  Reservation out;
  reserve_pod(reserve_context(pod, plan, node), out, nullptr);
  return out;
}

ReserveContext Engine::reserve_context(const Pod& pod, const ProfilePlan& plan, uint32_t node) const {
  ReserveContext ctx{snapshot_, pod, plan.config};
  ctx.node = node;
  ctx.devices = device_model_ ? &*device_model_ : nullptr;
  ctx.groups = group_model_ ? &*group_model_ : nullptr;
  return ctx;
}

void Engine::assign_pod_devices(uint32_t id, std::vector<std::string>& warnings) {
  const Pod& pod = snapshot_.pod(id);
  const ProfilePlan* plan = &plans_.front();
  for (const auto& p : plans_)
    if (p.config.scheduler_name == pod.scheduler_name) plan = &p;
  // Reserve for a pod that is running already: only what its record lacks.
  ReserveContext ctx = reserve_context(pod, *plan, snapshot_.pod_node(id));
  ctx.bound = true;
  // A preview first: most pods lack nothing, and then nothing is copied.
  Reservation seen;
  reserve_pod(ctx, seen, nullptr);
  if (seen.devices.empty() && seen.group_devices.empty() && seen.warnings.empty()) return;
  Pod updated = pod;
  Reservation r;
  reserve_pod(ctx, r, &updated);
  for (std::string& w : r.warnings) warnings.push_back(std::move(w));
  if (updated.annotations != pod.annotations) snapshot_.update_pod(id, updated);
}

std::vector<std::string> Engine::take_warnings() {
  std::vector<std::string> out;
  out.swap(warnings_);
  return out;
}

BatchCounters Engine::batch_counters() const {
  BatchCounters all;
  for (const auto& c : batch_counters_) all += c;
  return all;
}

SchedulerMetrics Engine::metrics() const {
  SchedulerMetrics m = metrics_.snapshot();
  m.batch = batch_counters_by_profile();
  m.backends = compiled_backends();
  return m;
}

std::string Engine::metrics_text() const { return scheduler_metrics_text(metrics()); }

std::vector<std::pair<std::string, BatchCounters>> Engine::batch_counters_by_profile() const {
  std::vector<std::pair<std::string, BatchCounters>> out;
  out.reserve(plans_.size());
  for (size_t i = 0; i < plans_.size(); ++i) out.emplace_back(plans_[i].config.scheduler_name, batch_counters_[i]);
  return out;
}

std::vector<std::string> Engine::scheduler_names() const {
  std::vector<std::string> out;
  for (const auto& p : plans_) out.push_back(p.config.scheduler_name);
  return out;
}

const ProfilePlan& Engine::plan_for(const Pod& pod) const {
  for (const auto& p : plans_)
    if (p.config.scheduler_name == pod.scheduler_name) return p;
  throw InputError(pod.origin + ": pod " + quote_for_message(pod.key()) + ": no profile for schedulerName " +
                   quote_for_message(pod.scheduler_name));
}

TieBreak Engine::tie_break_for(const ProfilePlan& plan) const {
  switch (plan.config.tie_break) {
    case ProfileTieBreak::kRandom:
      return TieBreak::Random;
    case ProfileTieBreak::kFirst:
      return TieBreak::First;
    case ProfileTieBreak::kEngineDefault:
      break;
  }
  return options_.tie_break;
}

uint32_t Engine::num_nodes_to_find(const ProfilePlan& plan, uint32_t candidates) const {
  return num_feasible_nodes_to_find(plan.config.percentage_of_nodes_to_score, candidates, !plan.config.score.empty());
}

void Engine::fall_back(const std::string& why) {
  // Carry on, slower, on the CPU for the rest of the run, with one warning.
  // Nothing is lost: the snapshot lives on the host, a failed evaluation
  // assumed nothing, and the query starts its feasible-set PreScore from
  // the arena as prepare left it. The failed backend is dropped (its
  // destructor waits for its queued work).
  backend_note_ = std::string(backend_->name()) + ": " + why + "; fell back to the CPU backend for the rest of the run";
  warnings_.push_back(backend_note_);
  backend_.reset();
  backend_ = make_backend("cpu", cpu_backend_options());
}

bool Engine::evaluate(PodQuery& q, const EvalRequest& req, EvalResult& out, bool lists_optional) {
  if (!q.check_score_range) return evaluate_on_backend(q, req, out, lists_optional);
  // Upstream's framework checks every normalized score before weighting
  // it; bulkscore's backends and cache assume them in range (the selection
  // key), so a pod whose scores may leave it takes this plain path.
  EvalRequest checked = req;
  checked.want_scores = true;
  evaluate_on_backend(q, checked, out, false);
  if (out.scored && q.score_error.empty()) {
    const size_t n = out.scored_nodes.size();
    // Node by node, each node's plugins in profile order: upstream's loop
    // (its nodes run in parallel: which invalid score it reports first is
    // not fixed; this is the first in visiting order).
    for (size_t i = 0; i < n && q.score_error.empty(); ++i)
      for (uint32_t slot = 0; slot < q.header.num_scores; ++slot) {
        const int64_t v = out.normalized_scores[slot * n + i];
        if (v >= 0 && v <= 100) continue;
        q.score_error = "applying score defaultWeights on Score plugins: plugin " +
                        quote_for_message(plugin_name(q.header.scores[slot])) + " returns an invalid score " +
                        std::to_string(v) + ", it should in the range of [0, 100] after normalizing";
        q.score_error_at_score = true;
        break;
      }
  }
  if (req.want_scores) return true;
  if (req.want_totals) {
    keep_totals_lists(q.view(), out);
  } else {
    for (auto* v : {&out.raw_scores, &out.normalized_scores, &out.totals, &out.stat_scores}) v->clear();
    out.scored_nodes.clear();
  }
  return true;
}

bool Engine::evaluate_on_backend(PodQuery& q, const EvalRequest& req, EvalResult& out, bool lists_optional) {
  try {
    backend_->evaluate(snapshot_, q, req, out);
    return true;
  } catch (const DeviceOutOfMemory& e) {
    // Out of memory, after the backend dropped its growth slack and
    // released its idle buffers (host/engine/device_memory.hpp). If the
    // request had optional lists, they may be what did not fit: the pass
    // again without them tells. Only a pass that cannot fit by itself sends
    // the run to the CPU.
    const std::string why = e.what();
    if (!req.want_scores && !req.want_verdicts && !req.want_sorted) {
      fall_back(why);
      backend_->evaluate(snapshot_, q, req, out);
      return true;
    }
    EvalRequest pass = req;
    pass.want_scores = pass.want_verdicts = pass.want_sorted = false;
    try {
      backend_->evaluate(snapshot_, q, pass, out);
    } catch (const CudaError& again) {
      fall_back(std::string(again.what()) + " (and without the optional lists: " + why + ")");
      backend_->evaluate(snapshot_, q, req, out);
      return true;
    }
    if (!lists_oom_warned_) {
      lists_oom_warned_ = true;
      warnings_.push_back(std::string(backend_->name()) + ": " + why +
                          "; the pass fits without its optional per-node lists, so the device keeps scheduling: "
                          "a batch state is not kept then, and lists that are needed (explain, --batching "
                          "upstream) come from the CPU backend (reported once)");
    }
    if (lists_optional) return false;
    if (!list_backend_) list_backend_ = make_backend("cpu", cpu_backend_options());
    list_backend_->evaluate(snapshot_, q, req, out);
    return true;
  } catch (const CudaError& e) {
    // Any other device failure (a kernel fault, a sticky error, a lost
    // device).
    fall_back(e.what());
    backend_->evaluate(snapshot_, q, req, out);
    return true;
  }
}

std::string Engine::fit_error(const PodQuery& q, const EvalResult& r) const {
  const uint32_t all = snapshot_.num_nodes();
  std::string msg = "0/" + std::to_string(all) + " nodes are available:";
  if (q.rejected) return msg + " " + q.prefilter_message + ".";
  // Histogram of reasons over the evaluated nodes, as "<count> <reason>"
  // strings sorted as strings (upstream sorts them that way, not by count).
  std::map<std::string, uint64_t> counts;
  const PodQueryView v = q.view();
  std::vector<std::string> reasons;
  for (uint8_t plugin = 0; plugin < kNumPlugins; ++plugin) {
    for (uint32_t bit = 0; bit < 64; ++bit) {
      const uint32_t c = r.rejections.at(plugin, bit);
      if (!c) continue;
      reasons.clear();
      filter_reasons(plugin, uint64_t(1) << bit, snapshot_, v, 0, reasons);
      for (const auto& s : reasons) counts[s] += c;
    }
  }
  if (q.candidates) {
    // Nodes outside the PreFilterResult.
    const uint64_t absent = all - static_cast<uint64_t>(q.candidates->size());
    if (absent) {
      std::vector<std::string> names = q.restricting_plugins;
      std::sort(names.begin(), names.end());
      std::string list = "[";
      for (size_t i = 0; i < names.size(); ++i) list += (i ? " " : "") + names[i];
      counts["node(s) didn't satisfy plugin(s) " + list + "]"] += absent;
    }
  }
  std::vector<std::string> parts;
  parts.reserve(counts.size());
  for (const auto& [reason, c] : counts) parts.push_back(std::to_string(c) + " " + reason);
  std::sort(parts.begin(), parts.end());
  if (!parts.empty()) {
    msg += " ";
    for (size_t i = 0; i < parts.size(); ++i) msg += (i ? ", " : "") + parts[i];
    msg += ".";
  }
  return msg;
}

void Engine::assume(const Pod& pod, Pod* given, const ProfilePlan& plan, ScheduleResult& res,
                    const std::string& key) {
  res.node_name = snapshot_.node_name(static_cast<uint32_t>(res.node));
  // A pod handed over (schedule(Pod&&)) becomes the snapshot's own without
  // a copy (a Pod's strings and maps are a tenth of a cached pod's cycle).
  // Only where Reserve can write nothing into it: it reads the pod as given
  // and writes into the assumed one, which are then the same object.
  const bool take = given && !device_model_ && !group_model_;
  std::optional<Pod> copy;
  if (!take) copy.emplace(pod);
  Pod& assumed = take ? *given : *copy;
  assumed.node_name = res.node_name;
  // What preemption reads of it later: its priority, and a start time
  // after every pod placed before it.
  resolve_pod_priority(assumed, objects_);
  assumed.start_time_ns = next_start_time();
  Reservation reserved;
  reserve_pod(reserve_context(pod, plan, static_cast<uint32_t>(res.node)), reserved, &assumed);
  res.devices = reserved.devices;
  res.device_group = reserved.device_group;
  res.group_devices = reserved.group_devices;
  for (std::string& w : reserved.warnings) res.warnings.push_back(std::move(w));
  reserved.warnings.clear();
  // The snapshot's warnings about this pod joining its group. A layout
  // (a new resource name is structural) raises the cluster's load-time
  // findings again: those are not this pod's.
  if (group_model_) snapshot_.take_device_warnings();
  PodRecord rec;
  rec.state = PodCacheState::kAssumed;
  rec.node = res.node_name;
  rec.profile = static_cast<uint32_t>(&plan - plans_.data());
  // Kept only when it took anything: most pods take nothing, and then
  // nothing is allocated.
  if (!reserved.devices.empty() || reserved.group_index >= 0)
    rec.reservation = std::make_shared<const Reservation>(reserved);
  rec.id = snapshot_.add_pod(std::move(assumed), static_cast<uint32_t>(res.node));
  const uint32_t rec_id = rec.id;
  index_group_member(rec.id);
  pod_records_.emplace(key, std::move(rec));
  if (group_model_) {
    const std::string name = "pod " + quote_for_message(pod.key());
    for (std::string& w : snapshot_.take_device_warnings())
      if (w.find(name) != std::string::npos) res.warnings.push_back(std::move(w));
  }
  // Permit, the pod assumed (plugins/reserve.hpp). A rejection undoes it
  // (Unreserve, forget) with upstream's message; Wait leaves it assumed
  // for its group's decision.
  // The snapshot's pod: `pod` is moved from when it was taken.
  const Pod& placed = snapshot_.pod(rec_id);
  const PermitStatus permit =
      permit_pod(reserve_context(take ? placed : pod, plan, static_cast<uint32_t>(res.node)), reserved);
  if (permit.code == PermitCode::kReject) {
    const std::string who = placed.key();
    static_cast<void>(forget_pod(key));
    res.code = Code::Unschedulable;
    res.message = "rejected pod " + quote_for_message(who) + " by permit plugin " +
                  quote_for_message(permit.plugin) + ": " + permit.message;
    res.node = -1;
    res.node_name.clear();
    res.devices.clear();
    res.device_group.clear();
    res.group_devices.clear();
  }
}

ScheduleResult Engine::schedule(const Pod& pod) { return schedule_pod(pod, nullptr); }

ScheduleResult Engine::schedule(Pod&& pod) { return schedule_pod(pod, &pod); }

ScheduleResult Engine::schedule_pod(const Pod& pod, Pod* given) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  ScheduleResult res;
  res.pod = pod.key();
  const std::string key = pod.uid.empty() ? res.pod : pod.uid;  // pod.cache_key(), the key built once
  if (auto held = pod_records_.find(key); held != pod_records_.end()) {
    // Scheduled twice, it would be counted twice. Not an attempt: upstream
    // skips an assumed pod.
    res.code = Code::Error;
    res.message = "pod \"" + pod.key() + "\" is in the cache already (" +
                  (held->second.state == PodCacheState::kAssumed ? "assumed" : "bound") + " on node \"" +
                  held->second.node + "\"): remove or forget it before scheduling it again";
    return res;
  }
  const ProfilePlan& plan = plan_for(pod);
  const size_t profile = static_cast<size_t>(&plan - plans_.data());
  // A class admission would not find fails the pod before anything changes.
  if (!pod.has_priority && !pod.priority_class_name.empty() && !find_priority_class(objects_, pod.priority_class_name)) {
    Pod copy = pod;
    resolve_pod_priority(copy, objects_);  // throws InputError naming it
  }
  const uint64_t cycle = ++cycle_;
  // Attempted again: its last failure leaves the counts, as upstream's pop.
  metrics_.leave(key);
  plugin_trace_.reset(metrics_.sampled(cycle));
  AttemptTrace trace;
  try {
    schedule_cycle(pod, given, key, plan, profile, cycle, res, trace);
  } catch (...) {
    record_attempt(key, plan, profile, nullptr, trace, start);
    throw;
  }
  record_attempt(key, plan, profile, &res, trace, start);
  return res;
}

void Engine::record_attempt(const std::string& key, const ProfilePlan& plan, size_t profile, const ScheduleResult* res,
                            const AttemptTrace& trace, std::chrono::steady_clock::time_point start) {
  const auto end = std::chrono::steady_clock::now();
  const AttemptResult result = !res || res->code == Code::Error ? AttemptResult::kError
                               : res->node >= 0                 ? AttemptResult::kScheduled
                                                                : AttemptResult::kUnschedulable;
  metrics_.attempt(profile, result, end - start);
  if (trace.prefilter_ran)
    metrics_.extension_point(profile, ExtensionPoint::kPreFilter, trace.prefilter_status, trace.prefilter_end - start);
  // The feasible-set PreScore runs inside the evaluation: its time is
  // PreScore's, not Filter's.
  if (trace.filter_ran)
    metrics_.extension_point(profile, ExtensionPoint::kFilter, Code::Success,
                             trace.filter_end - trace.prefilter_end - plugin_trace_.prescore);
  if (plugin_trace_.prescore_runs)
    metrics_.extension_point(profile, ExtensionPoint::kPreScore, trace.prescore_error ? Code::Error : Code::Success,
                             plugin_trace_.prescore);
  if (trace.postfilter_ran)
    metrics_.extension_point(profile, ExtensionPoint::kPostFilter, trace.postfilter_status,
                             trace.postfilter_end - trace.postfilter_start);
  if (plugin_trace_.per_plugin && trace.prefilter_ran) {
    // A plugin prepares once: under PreFilter when it has one, else under
    // PreScore (a Score plugin) with its feasible-set PreScore.
    std::bitset<kNumPlugins> prefilter;
    for (const uint8_t id : plan.pre_filter) {
      prefilter.set(id);
      metrics_.plugin(id, ExtensionPoint::kPreFilter, plugin_trace_.prefilter_status[id], plugin_trace_.prepare[id]);
    }
    for (const uint8_t id : plan.score) {
      const bool feasible = kPluginInfo[id].prescore_feasible && plugin_trace_.prescore_runs &&
                            plugin_trace_.prescore_status[id] != Code::Skip;
      if (prefilter.test(id) && !feasible) continue;
      const auto d = (prefilter.test(id) ? std::chrono::steady_clock::duration{} : plugin_trace_.prepare[id]) +
                     (feasible ? plugin_trace_.plugin_prescore[id] : std::chrono::steady_clock::duration{});
      metrics_.plugin(id, ExtensionPoint::kPreScore, plugin_trace_.prescore_status[id], d);
    }
  }
  if (result != AttemptResult::kScheduled) metrics_.failed(key, profile, trace.rejectors);
}

void Engine::post_filter(const Pod& pod, const ProfilePlan& plan, PodQuery& q, uint64_t seq, ScheduleResult& res,
                         AttemptTrace& trace) {
  if (plan.config.post_filter.empty()) return;  // upstream runs no PostFilter then, and times none
  // A gang member does not preempt (schedule_group): its victims would be
  // gone for good if its group were then rejected.
  if (gang_cycle_) return;
  trace.postfilter_start = std::chrono::steady_clock::now();
  run_post_filter(pod, plan, q, seq, res);
  trace.postfilter_end = std::chrono::steady_clock::now();
  trace.postfilter_ran = true;
  // Upstream's status: Success when a plugin found a node to nominate
  // (preemption), else the rejection.
  trace.postfilter_status = res.nominated_node.empty() ? Code::Unschedulable : Code::Success;
}

void Engine::schedule_cycle(const Pod& pod, Pod* given, const std::string& key, const ProfilePlan& plan,
                            size_t profile, uint64_t cycle, ScheduleResult& res, AttemptTrace& trace) {
  const uint64_t seq = pod_seq_++;
  if (snapshot_.num_nodes() == 0) {
    res.code = Code::UnschedulableAndUnresolvable;
    res.message = "no nodes available to schedule pods";
    return;
  }
  // Malformed device annotations fail the pod before anything changes.
  check_device_annotations(pod);
  intern_pod_for_plan(snapshot_, pod, plan, &objects_);
  PodQuery q = prepare_pod_query(pod, snapshot_, plan, tie_break_for(plan), options_.seed, &objects_, &plugin_trace_);
  trace.prefilter_end = std::chrono::steady_clock::now();
  trace.prefilter_ran = true;
  trace.prefilter_status = q.rejected ? q.rejected_code : Code::Success;
  q.header.pod_seq = seq;
  res.warnings = q.warnings;
  if (q.rejected) {
    res.code = Code::Unschedulable;  // a FitError, whatever the PreFilter code
    res.message = fit_error(q, scratch_);
    trace.rejectors = MetricsRecorder::PluginSet(plugin_trace_.unschedulable_plugins);
    post_filter(pod, plan, q, seq, res, trace);
    return;
  }
  // Nominated pods. A pending pod may carry status.nominatedNodeName (read
  // from a cluster where its preemption's victims are still leaving):
  // upstream's schedulePod tries that node first (evaluateNominatedNode,
  // PreferNominatedNode GA) and, if it passes Filter, takes it without
  // scoring and without looking at the PreFilterResult. Its
  // findNodesThatPassFilters over that one node sets the round-robin start
  // to (start + 1) % 1 = 0, which we copy. What does not apply to a bulk
  // run: upstream's RunFilterPluginsWithNominatedPods also adds, for each
  // node, the pods nominated there of priority >= the pod's (not yet bound)
  // before its Filter; bulkscore places a pod that preempts on its
  // nominated node in the same cycle, so its own nominations never wait,
  // and the nominations read from input are not counted in other pods'
  // Filter (docs/plugins.md).
  if (!pod.nominated_node_name.empty()) {
    const int32_t nominated = snapshot_.node_index(pod.nominated_node_name);
    if (nominated >= 0) {
      next_start_node_index_ = 0;
      if (filter_node(snapshot_.view(), q.view(), static_cast<uint32_t>(nominated)).feasible()) {
        trace.filter_end = std::chrono::steady_clock::now();
        trace.filter_ran = true;
        res.feasible_nodes = 1;
        res.node = nominated;
        res.score = 0;
        assume(pod, given, plan, res, key);
        return;
      }
    }
  }
  EvalRequest req;
  req.candidates = q.candidates ? &*q.candidates : nullptr;
  req.want_rejections = false;  // fit_error reads them where no node is feasible only
  const uint32_t m = q.candidates ? static_cast<uint32_t>(q.candidates->size()) : snapshot_.num_nodes();
  req.num_to_find = num_nodes_to_find(plan, m);
  req.start = m ? next_start_node_index_ % m : 0;

  // The batch cache answers only where every candidate is evaluated: a
  // sample depends on where the round-robin start stands.
  // A pod whose scores may leave [0, 100] is evaluated plainly (the cache's
  // selection keys assume them in range; upstream's hint rescores its node
  // unchecked): Engine::evaluate checks them. Counted as a miss.
  const bool checked = q.check_score_range;
  const bool batching = options_.batching == Batching::Exact && !checked;
  const bool upstream = options_.batching == Batching::Upstream;
  const bool whole = req.num_to_find >= m;
  BatchCounters& counters = batch_counters_[profile];
  if (checked && options_.batching != Batching::Off) {
    ++counters.no_hint;
    ++counters.flushed[static_cast<size_t>(FlushReason::kScoresChecked)];
  }
  // The state a miss's evaluation replaces: one kept for the same signature
  // that could not answer, else an empty one, else the least recently used.
  size_t replaced = batch_order_.size() - 1;  // a position in batch_order_
  // Whether a miss's evaluation becomes a state: when a state slot is still
  // empty, or a state or a recent miss had the pod's shape. Otherwise the
  // pod is evaluated as with the cache off and only its shape remembered:
  // a state is not given up for a shape that may not come again.
  // Decisions do not depend on it.
  bool keep = false;
  if (batching) {
    BatchHit hit;
    // The pod takes the cache's answer: placed as a full pass's would be.
    const auto take_hit = [&] {
      trace.filter_end = std::chrono::steady_clock::now();
      trace.filter_ran = true;
      next_start_node_index_ = (next_start_node_index_ + m) % snapshot_.num_nodes();
      res.feasible_nodes = hit.num_feasible;
      res.node = hit.chosen;
      res.score = hit.chosen_total;
      assume(pod, given, plan, res, key);
    };
    FlushReason why = FlushReason::kSampling;
    if (whole) {
      // States whose Score plugins match first (a hit then rescores only the
      // changed nodes), each in order of use. The reason a miss counts is
      // the most recently used state's, as with one state.
      bool replaced_found = false, replaced_free = false;
      for (const bool scores_match : {true, false})
        for (size_t k = 0; k < batch_order_.size(); ++k) {
          BatchCache& state = batch_[batch_order_[k]];
          if (state.scores_equal(q) != scores_match) continue;
          FlushReason r = FlushReason::kNoState;
          if (state.try_hit(snapshot_, plan, q, hit, r, counters)) {
            most_recent(k);
            take_hit();
            return;
          }
          if (k == 0) why = r;
          const bool same_signature = r != FlushReason::kNoState && r != FlushReason::kPodIncompatible &&
                                      r != FlushReason::kFilterChanged && r != FlushReason::kSnapshotChanged;
          // A state from before a structural change can never answer again
          // (versions do not repeat): its slot is as free as an empty one.
          const bool free_slot = r == FlushReason::kNoState || r == FlushReason::kSnapshotChanged;
          if (!replaced_found && (same_signature || free_slot)) {
            replaced = k;
            replaced_found = same_signature;
            replaced_free = free_slot;
          }
        }
      keep = replaced_found || replaced_free;
      for (size_t k = 0; k < batch_.size() && !keep; ++k) keep = batch_[k].same_shape(snapshot_, plan, q);
      for (size_t k = 0; k < shapes_.size() && !keep; ++k) keep = shapes_[k].same_shape(snapshot_, plan, q);
      // The pod's own state from a look-ahead, after the kept ones (a kept
      // state that answers is as good, and stays where it is).
      if (window_hit(key, plan, q, keep, replaced, hit, counters)) {
        take_hit();
        return;
      }
    }
    ++counters.no_hint;
    if (why != FlushReason::kNoState) ++counters.flushed[static_cast<size_t>(why)];
    req.want_scores = keep;
  }
  // Upstream's batching: a hint that passes Filter takes the pod, unscored,
  // as upstream's nominated-node path does.
  const auto now = UpstreamBatch::Clock::now();
  std::optional<std::string> signature;
  int32_t hinted = -1;
  if (upstream) {
    signature = upstream_pod_signature(pod, plan);
    FlushReason why = FlushReason::kNoState;
    hinted = checked ? -1 : upstream_[profile].hint(snapshot_, cycle, signature, q, now, why, counters);
    if (hinted < 0) {
      if (!checked) ++counters.no_hint;
    } else if (filter_node(snapshot_.view(), q.view(), static_cast<uint32_t>(hinted)).feasible()) {
      trace.filter_end = std::chrono::steady_clock::now();
      trace.filter_ran = true;
      res.feasible_nodes = 1;
      res.node = hinted;
      res.score = upstream_[profile].cached_total(hinted);
      upstream_[profile].store(snapshot_, cycle, signature, hinted, hinted, nullptr, nullptr, now, counters);
      assume(pod, given, plan, res, key);
      return;
    }
    // The scored list becomes the state; a pod without a signature stores
    // none (store flushes pod_not_batchable), so it needs no lists.
    req.want_scores = signature.has_value();
  }
  const PodQueryView prepared = q.header;
  // A state's score lists are optional: without room for them on the
  // device the miss is evaluated without and not kept (decisions alike).
  const bool lists_given = evaluate(q, req, scratch_, batching);
  trace.filter_end = std::chrono::steady_clock::now();
  trace.filter_ran = true;
  next_start_node_index_ = (next_start_node_index_ + scratch_.processed) % snapshot_.num_nodes();

  res.feasible_nodes = scratch_.num_feasible;
  if (scratch_.chosen < 0) {
    res.code = Code::Unschedulable;
    res.message = fit_error(q, scratch_);
    // Upstream's UnschedulablePlugins: PreFilter's, and every plugin that
    // rejected a node at Filter.
    trace.rejectors = MetricsRecorder::PluginSet(plugin_trace_.unschedulable_plugins);
    for (uint8_t plugin = 0; plugin < kNumPlugins; ++plugin)
      for (uint32_t bit = 0; bit < 64 && !trace.rejectors.test(plugin); ++bit)
        if (scratch_.rejections.at(plugin, bit)) trace.rejectors.set(plugin);
    post_filter(pod, plan, q, seq, res, trace);
    return;
  }
  if (scratch_.scored && !q.score_error.empty()) {
    res.code = Code::Error;
    res.message = q.score_error;
    trace.prescore_error = !q.score_error_at_score;
    return;
  }
  res.node = scratch_.chosen;
  res.score = scratch_.chosen_total;
  if (batching && whole && keep) {
    if (lists_given) {
      batch_[batch_order_[replaced]].store(snapshot_, plan, std::move(q), prepared, scratch_);
      most_recent(replaced);
    }
  } else if (batching && whole) {
    ++counters.first_of_shape;
    shapes_[next_shape_].remember_shape(plan, std::move(q), prepared);
    next_shape_ = (next_shape_ + 1) % shapes_.size();
  }
  if (upstream) upstream_[profile].store(snapshot_, cycle, signature, hinted, res.node, &q, &scratch_, now, counters);
  assume(pod, given, plan, res, key);
}

bool Engine::window_hit(const std::string& key, const ProfilePlan& plan, PodQuery& q, bool keep, size_t replaced,
                        BatchHit& hit, BatchCounters& counters) {
  for (WindowState& w : window_) {
    if (w.key != key) continue;
    w.key.clear();  // one try, hit or miss: a miss's evaluation replaces it
    if (w.light.valid()) {
      if (!w.light.answer(snapshot_, plan, q, hit, counters)) return false;
      // Its shape remembered, as a miss's would be: a later pod of that
      // shape (look_ahead left those to this one) is then kept.
      std::swap(shapes_[next_shape_], w.state);
      next_shape_ = (next_shape_ + 1) % shapes_.size();
      return true;
    }
    FlushReason why = FlushReason::kNoState;
    if (!w.state.try_hit(snapshot_, plan, q, hit, why, counters)) return false;
    ++counters.window_hits;
    // Up to date now, as a miss's evaluation would be: kept where that
    // would be kept (the slot schedule_cycle chose), else its shape only.
    if (keep) {
      std::swap(batch_[batch_order_[replaced]], w.state);
      most_recent(replaced);
    } else {
      std::swap(shapes_[next_shape_], w.state);
      shapes_[next_shape_].keep_shape_only();
      next_shape_ = (next_shape_ + 1) % shapes_.size();
    }
    return true;
  }
  return false;
}

void Engine::look_ahead(const std::vector<const Pod*>& pods) {
  for (WindowState& w : window_) {
    w.key.clear();
    w.light.clear();
  }
  last_light_ = 0;
  const uint32_t window = effective_window();
  if (window <= 1 || snapshot_.num_nodes() == 0) return;
  const size_t n = std::min<size_t>(pods.size(), window);
  if (window_.size() < n) window_.resize(n);
  // The pods to look at, their strings interned (which changes the
  // snapshot: here, one by one).
  struct Ahead {
    const Pod* pod;
    const ProfilePlan* plan;
    std::string key;
    PodQuery query;
    bool prepared = false;
  };
  std::vector<Ahead> ahead;
  ahead.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const Pod& pod = *pods[i];
    // A nominated pod tries its node first, unscored; a held one is refused.
    if (!pod.nominated_node_name.empty()) continue;
    std::string key = pod.cache_key();
    if (pod_records_.count(key) ||
        std::any_of(ahead.begin(), ahead.end(), [&](const Ahead& a) { return a.key == key; }))
      continue;
    try {
      const ProfilePlan& plan = plan_for(pod);
      if (!pod.has_priority && !pod.priority_class_name.empty() && !find_priority_class(objects_, pod.priority_class_name))
        continue;
      check_device_annotations(pod);
      intern_pod_for_plan(snapshot_, pod, plan, &objects_);
      ahead.push_back(Ahead{&pod, &plan, std::move(key), PodQuery{}, false});
    } catch (const Error&) {
      continue;  // its schedule() says what is wrong with it
    }
  }
  // Prepared side by side (prepare reads the snapshot only).
  executor_->for_each(static_cast<uint32_t>(ahead.size()), [&](uint32_t i) {
    Ahead& a = ahead[i];
    // Nothing may leave a task (a worker thread has no handler): whatever
    // fails here fails again, and is reported, in the pod's schedule().
    try {
      a.query = prepare_pod_query(*a.pod, snapshot_, *a.plan, tie_break_for(*a.plan), options_.seed, &objects_);
      a.prepared = true;
    } catch (...) {
      a.prepared = false;
    }
  });
  window_queries_.clear();
  std::vector<const ProfilePlan*> plans;
  std::vector<std::string> keys;
  std::vector<PodQueryView> prepared;  // each query's header as prepare left it (BatchCache::store)
  for (Ahead& a : ahead) {
    const PodQuery& q = a.query;
    // A pod whose scores may leave [0, 100] is evaluated plainly, alone.
    if (!a.prepared || q.rejected || q.check_score_range) continue;
    const uint32_t m = q.candidates ? static_cast<uint32_t>(q.candidates->size()) : snapshot_.num_nodes();
    if (num_nodes_to_find(*a.plan, m) < m) continue;  // a sample: no state answers it
    // Answered without it: a kept state would hit now, or an earlier pod
    // of the window has its shape (that one's state, kept, answers it).
    bool answered = false;
    for (const BatchCache& b : batch_)
      if (!answered) answered = b.would_hit(snapshot_, *a.plan, q) == FlushReason::kCount;
    for (size_t j = 0; j < keys.size() && !answered; ++j) answered = window_[j].state.same_shape(snapshot_, *a.plan, q);
    if (answered) continue;
    window_[keys.size()].state.remember_shape(*a.plan, PodQuery(q), q.header);
    prepared.push_back(q.header);
    window_queries_.push_back(std::move(a.query));
    plans.push_back(a.plan);
    keys.push_back(std::move(a.key));
  }
  const size_t count = keys.size();
  if (count == 0) return;
  std::vector<PodQuery*> queries(count);
  std::vector<EvalRequest> reqs(count);
  for (size_t j = 0; j < count; ++j) {
    const PodQuery& q = window_queries_[j];
    queries[j] = &window_queries_[j];
    reqs[j].candidates = q.candidates ? &*q.candidates : nullptr;
    // The light form needs the totals; a pod with a feasible-set PreScore
    // becomes a batch-cache state, which needs every list.
    reqs[j].want_totals = !q.header.prescore_feasible;
    reqs[j].want_scores = q.header.prescore_feasible;
    reqs[j].want_rejections = false;  // read where no node is feasible only
  }
  window_results_.resize(count);
  try {
    backend_->evaluate_window(snapshot_, queries.data(), reqs.data(), window_results_.data(), count);
  } catch (const CudaError&) {
    // No states then: each pod's own evaluation meets the failure where
    // the engine handles it (evaluate()).
    for (size_t j = 0; j < count; ++j) window_[j].state.clear();
    return;
  }
  // Each evaluation kept in the light form where it holds it, else as a
  // batch-cache state (over the remembered shape).
  executor_->for_each(static_cast<uint32_t>(count), [&](uint32_t j) {
    WindowState& w = window_[j];
    try {
      if (!w.light.build(snapshot_, *plans[j], window_queries_[j], window_results_[j], window) &&
          reqs[j].want_scores)
        w.state.store(snapshot_, *plans[j], std::move(window_queries_[j]), prepared[j], window_results_[j]);
    } catch (...) {  // out of memory: no state, the pod is evaluated in its turn
      w.light.clear();
      w.state.clear();
    }
  });
  for (size_t j = 0; j < count; ++j) {
    // A pod with fewer than two feasible nodes leaves no state.
    if (!window_[j].light.valid() && !window_[j].state.valid()) continue;
    last_light_ += window_[j].light.valid() ? 1 : 0;
    window_[j].key = std::move(keys[j]);
    ++batch_counters_[static_cast<size_t>(plans[j] - plans_.data())].window_states;
  }
}

void Engine::set_window(uint32_t window) {
  options_.window = window;
  window_backoff_ = 0;
  window_skip_ = 0;
  for (WindowState& w : window_) {
    w.key.clear();
    w.light.clear();
  }
}

uint32_t Engine::effective_window() const {
  if (options_.batching != Batching::Exact) return 1;  // windows keep batch-cache states
  if (options_.window != 0) return options_.window;
  // Two pods per lane: on 16 threads windows of 32 gave 1.8x against 1.44x
  // for windows of 8 (docs/performance.md).
  const uint32_t lanes = backend_->window_lanes();
  if (lanes < kAutoWindowMinLanes || snapshot_.num_nodes() > uint64_t(kAutoWindowNodesPerLane) * lanes) return 1;
  return std::clamp<uint32_t>(lanes <= kAutoWindowMax / 2 ? 2 * lanes : kAutoWindowMax, kAutoWindow, kAutoWindowMax);
}

size_t Engine::look_ahead_in_queue(const std::vector<Pod>& pods, const std::vector<QueueEntry>& order, size_t at) {
  const uint32_t window = effective_window();
  if (window <= 1) return at + 1;
  if (window_skip_ > 0) {  // auto, backing off
    --window_skip_;
    return at + 1;
  }
  std::vector<const Pod*> ahead;
  size_t end = at;
  for (; end < order.size() && ahead.size() < window && order[end].pod_group.empty(); ++end)
    ahead.push_back(&pods[order[end].pods.front()]);
  if (ahead.size() < 2) return at + 1;  // one pod alone gains nothing from being evaluated ahead
  look_ahead(ahead);
  // Auto: a window pays when most of its pods were evaluated ahead into the
  // light form (measured, docs/performance.md); else the next ones are
  // skipped, twice as many each time it does not, at most 64 windows.
  if (options_.window == 0) {
    if (2 * last_light_ < ahead.size()) {
      window_backoff_ = std::min<uint32_t>(64, std::max<uint32_t>(1, 2 * window_backoff_));
      window_skip_ = static_cast<size_t>(window_backoff_) * window;
    } else {
      window_backoff_ = 0;
    }
  }
  return end;
}

std::vector<ScheduleResult> Engine::schedule_all(const std::vector<Pod>& pods) { return schedule_all_of(pods, nullptr); }

std::vector<ScheduleResult> Engine::schedule_all(std::vector<Pod>&& pods) { return schedule_all_of(pods, &pods); }

std::vector<ScheduleResult> Engine::schedule_all_of(const std::vector<Pod>& pods, std::vector<Pod>* given) {
  std::vector<ScheduleResult> out(pods.size());
  const std::vector<QueueEntry> order = queue_order(pods);
  size_t next_window = 0;
  for (size_t e = 0; e < order.size(); ++e) {
    const QueueEntry& entry = order[e];
    if (entry.pod_group.empty()) {
      if (e >= next_window) next_window = look_ahead_in_queue(pods, order, e);
      // A look-ahead reads only the pods from here on: this one may go.
      const uint32_t i = entry.pods.front();
      out[i] = schedule_pod(pods[i], given ? &(*given)[i] : nullptr);
      continue;
    }
    std::vector<Pod> members;
    members.reserve(entry.pods.size());
    for (const uint32_t i : entry.pods) {
      if (given)
        members.push_back(std::move((*given)[i]));
      else
        members.push_back(pods[i]);
    }
    std::vector<ScheduleResult> results = schedule_group(members);
    for (size_t k = 0; k < entry.pods.size(); ++k) out[entry.pods[k]] = std::move(results[k]);
  }
  return out;
}

ScheduleResult Engine::peek(const Pod& pod) {
  ScheduleResult res;
  res.pod = pod.key();
  const ProfilePlan& plan = plan_for(pod);
  check_device_annotations(pod);
  if (snapshot_.num_nodes() == 0) {
    res.code = Code::UnschedulableAndUnresolvable;
    res.message = "no nodes available to schedule pods";
    return res;
  }
  intern_pod_for_plan(snapshot_, pod, plan, &objects_);
  PodQuery q = prepare_pod_query(pod, snapshot_, plan, tie_break_for(plan), options_.seed, &objects_);
  q.header.pod_seq = pod_seq_;  // the draw schedule would give it next
  res.warnings = q.warnings;
  if (q.rejected) {
    res.code = Code::Unschedulable;
    res.message = fit_error(q, scratch_);
    return res;
  }
  EvalRequest req;
  req.candidates = q.candidates ? &*q.candidates : nullptr;
  req.want_rejections = false;  // fit_error reads them where no node is feasible only
  EvalResult r;
  evaluate(q, req, r);
  res.feasible_nodes = r.num_feasible;
  if (r.chosen < 0) {
    res.code = Code::Unschedulable;
    res.message = fit_error(q, r);
    return res;
  }
  if (r.scored && !q.score_error.empty()) {
    res.code = Code::Error;
    res.message = q.score_error;
    return res;
  }
  res.node = r.chosen;
  res.node_name = snapshot_.node_name(static_cast<uint32_t>(r.chosen));
  res.score = r.chosen_total;
  Reservation reserved = preview_reservation(pod, plan, static_cast<uint32_t>(r.chosen));
  res.devices = std::move(reserved.devices);
  res.device_group = std::move(reserved.device_group);
  res.group_devices = std::move(reserved.group_devices);
  return res;
}

Ranking Engine::rank(const Pod& pod, uint32_t k) { return rank(pod, k, {}); }

Ranking Engine::rank(const Pod& pod, uint32_t k, const std::vector<std::string>& nodes) {
  Ranking out;
  out.pod = pod.key();
  const ProfilePlan& plan = plan_for(pod);
  out.profile = plan.config.scheduler_name;
  out.tie_break = tie_break_for(plan);
  out.seed = options_.seed;
  out.draw = pod_seq_;
  check_device_annotations(pod);
  std::vector<uint32_t> named;
  named.reserve(nodes.size());
  for (const std::string& name : nodes) {
    const int32_t i = snapshot_.node_index(name);
    if (i < 0) throw InputError("no node " + quote_for_message(name) + " in the cluster");
    named.push_back(static_cast<uint32_t>(i));
  }
  const uint32_t n = snapshot_.num_nodes();
  if (n == 0) {
    out.message = "no nodes available to schedule pods";
    return out;
  }
  intern_pod_for_plan(snapshot_, pod, plan, &objects_);
  PodQuery q = prepare_pod_query(pod, snapshot_, plan, out.tie_break, options_.seed, &objects_);
  q.header.pod_seq = pod_seq_;  // the draw schedule would give it next
  out.warnings = q.warnings;
  out.batch = batch_status(pod, plan, q);
  const PodQueryView v = q.view();
  for (uint32_t slot = 0; slot < v.num_scores; ++slot) {
    out.score_plugins.emplace_back(plugin_name(v.scores[slot]));
    out.score_weights.push_back(v.weights[slot]);
  }
  if (q.rejected) {
    std::string plugin;
    for (const PreFilterStatus& s : q.prefilter)
      if (s.code != Code::Success && s.code != Code::Skip) plugin = s.plugin;
    out.rejections.push_back({plugin, q.prefilter_message, n});
    out.message = fit_error(q, scratch_);
    explain_post_filter(pod, plan, q, out.message, out.preemption);
    for (uint32_t i : named) {
      NodeVerdictExplanation ne;
      ne.node.name = snapshot_.node_name(i);
      ne.node.evaluated = false;
      out.named.push_back(std::move(ne));
    }
    return out;
  }
  EvalRequest req;
  req.candidates = q.candidates ? &*q.candidates : nullptr;
  req.want_scores = true;
  req.want_sorted = true;
  req.score_single = true;
  req.want_verdicts = !named.empty();  // one verdict per node; strings for the named only
  EvalResult r;
  evaluate(q, req, r);
  out.evaluated_nodes = r.processed;
  out.feasible_nodes = r.num_feasible;
  // The rejection histogram, by plugin and reason text.
  std::map<std::pair<std::string, std::string>, uint64_t> counts;
  std::vector<std::string> reasons;
  for (uint8_t plugin = 0; plugin < kNumPlugins; ++plugin)
    for (uint32_t bit = 0; bit < 64; ++bit) {
      const uint32_t c = r.rejections.at(plugin, bit);
      if (!c) continue;
      reasons.clear();
      filter_reasons(plugin, uint64_t(1) << bit, snapshot_, v, 0, reasons);
      for (const auto& s : reasons) counts[{plugin_name(plugin), s}] += c;
    }
  if (q.candidates && q.candidates->size() < n) {
    std::vector<std::string> names = q.restricting_plugins;
    std::sort(names.begin(), names.end());
    std::string list = "[";
    for (size_t i = 0; i < names.size(); ++i) list += (i ? " " : "") + names[i];
    counts[{"", "node(s) didn't satisfy plugin(s) " + list + "]"}] += n - q.candidates->size();
  }
  for (const auto& [what, c] : counts) out.rejections.push_back({what.first, what.second, c});
  std::stable_sort(out.rejections.begin(), out.rejections.end(),
                   [](const RejectionCount& a, const RejectionCount& b) { return a.nodes > b.nodes; });

  // Positions of the scored nodes in the score lists, and of the sorted
  // ones in the sorted list.
  const size_t F = r.scored_nodes.size();
  std::vector<int32_t> scored_pos(n, -1);
  for (size_t i = 0; i < F; ++i) scored_pos[r.scored_nodes[i]] = static_cast<int32_t>(i);
  std::vector<uint32_t> sorted_pos(n, 0);
  for (size_t i = 0; i < r.sorted_nodes.size(); ++i) sorted_pos[r.sorted_nodes[i]] = static_cast<uint32_t>(i + 1);
  const auto ranked = [&](uint32_t node) {
    RankedNode rn;
    rn.node = static_cast<int32_t>(node);
    rn.name = snapshot_.node_name(node);
    const auto p = static_cast<size_t>(scored_pos[node]);
    rn.total = r.totals[p];
    for (uint32_t slot = 0; slot < v.num_scores; ++slot) {
      int64_t raw = r.raw_scores[slot * F + p];
      if (raw == kIgnoredScore) raw = 0;  // upstream's Score gives 0 to the nodes it ignores
      rn.raw.push_back(raw);
      rn.weighted.push_back(r.normalized_scores[slot * F + p] * v.weights[slot]);
    }
    return rn;
  };
  if (!named.empty()) {
    std::vector<bool> candidate(q.candidates ? n : 0, false);
    if (q.candidates)
      for (uint32_t c : *q.candidates) candidate[c] = true;
    for (uint32_t i : named) {
      NodeVerdictExplanation ne;
      ne.node.name = snapshot_.node_name(i);
      ne.node.evaluated = !q.candidates || candidate[i];
      const NodeVerdict& verdict = r.verdicts[i];
      ne.node.feasible = ne.node.evaluated && verdict.feasible();
      if (ne.node.evaluated && !verdict.feasible()) {
        ne.node.filter_plugin = plugin_name(verdict.plugin);
        ne.node.filter_code = verdict.code;
        filter_reasons(verdict.plugin, verdict.reasons, snapshot_, v, i, ne.node.filter_reasons);
      }
      if (ne.node.feasible && scored_pos[i] >= 0) {
        const RankedNode rn = ranked(i);
        for (uint32_t slot = 0; slot < v.num_scores; ++slot) {
          const auto p = static_cast<size_t>(scored_pos[i]);
          ne.node.scores.push_back({out.score_plugins[slot], rn.raw[slot], r.normalized_scores[slot * F + p],
                                    rn.weighted[slot]});
        }
        ne.node.total = rn.total;
        ne.position = sorted_pos[i];
      }
      out.named.push_back(std::move(ne));
    }
  }
  if (r.chosen < 0) {
    out.message = fit_error(q, r);
    explain_post_filter(pod, plan, q, out.message, out.preemption);
    return out;
  }
  const auto chosen = static_cast<uint32_t>(r.chosen);
  if (r.num_feasible >= 2 && !q.score_error.empty()) {
    out.message = q.score_error;  // schedule() scores two or more feasible nodes, and fails there
  } else {
    out.chosen = snapshot_.node_name(chosen);
    out.devices = preview_reservation(pod, plan, chosen).devices;
    if (scored_pos[chosen] >= 0) {
      out.chosen_node = ranked(chosen);
      out.chosen_position = sorted_pos[chosen];
    }
  }
  out.best_total = F ? *std::max_element(r.totals.begin(), r.totals.end()) : 0;
  for (size_t i = 0; i < F; ++i) out.tied_at_best += r.totals[i] == out.best_total ? 1 : 0;
  const size_t take = std::min<size_t>(k, r.sorted_nodes.size());
  for (size_t i = 0; i < take; ++i) out.nodes.push_back(ranked(r.sorted_nodes[i]));
  return out;
}

std::string Engine::batch_status(const Pod& pod, const ProfilePlan& plan, const PodQuery& q) const {
  if (options_.batching == Batching::Off) return "off";
  // Evaluated plainly, whatever the batching: Engine::evaluate checks its scores.
  if (q.check_score_range && !q.rejected) return flush_reason_name(FlushReason::kScoresChecked);
  if (options_.batching == Batching::Upstream)
    return upstream_pod_signature(pod, plan) ? "upstream: signed (a hint depends on the previous cycle)"
                                             : "upstream: pod_not_batchable";
  if (q.rejected) return "rejected at PreFilter";
  const uint32_t n = snapshot_.num_nodes();
  const uint32_t m = q.candidates ? static_cast<uint32_t>(q.candidates->size()) : n;
  FlushReason why = FlushReason::kSampling;
  if (num_nodes_to_find(plan, m) >= m) {
    why = batch_.at(batch_order_.front()).would_hit(snapshot_, plan, q);
    for (const BatchCache& b : batch_)
      if (b.would_hit(snapshot_, plan, q) == FlushReason::kCount) why = FlushReason::kCount;
  }
  return why == FlushReason::kCount ? "hit" : flush_reason_name(why);
}

Explanation Engine::explain(const Pod& pod) {
  Explanation ex;
  ex.pod = pod.key();
  const ProfilePlan& plan = plan_for(pod);
  ex.tie_break = tie_break_for(plan);
  ex.seed = options_.seed;
  check_device_annotations(pod);
  intern_pod_for_plan(snapshot_, pod, plan, &objects_);
  PodQuery q = prepare_pod_query(pod, snapshot_, plan, ex.tie_break, options_.seed, &objects_);
  q.header.pod_seq = pod_seq_;  // the draw schedule would give it next
  ex.prefilter = q.prefilter;
  ex.warnings = q.warnings;
  const uint32_t n = snapshot_.num_nodes();
  if (n == 0) {
    ex.message = "no nodes available to schedule pods";
    return ex;
  }
  ex.batch = batch_status(pod, plan, q);
  if (q.rejected) {
    ex.message = fit_error(q, scratch_);
    explain_post_filter(pod, plan, q, ex.message, ex.preemption);
    for (uint32_t i = 0; i < n; ++i) {
      NodeExplanation ne;
      ne.name = snapshot_.node_name(i);
      ne.evaluated = false;
      ex.nodes.push_back(std::move(ne));
    }
    return ex;
  }
  EvalRequest req;
  req.candidates = q.candidates ? &*q.candidates : nullptr;
  req.want_verdicts = true;
  req.want_scores = true;
  req.score_single = true;
  EvalResult r;
  evaluate(q, req, r);
  ex.feasible_nodes = r.num_feasible;
  if (r.num_feasible >= 2 && !q.score_error.empty()) {
    // schedule() scores two or more feasible nodes, and fails there.
    ex.message = q.score_error;
  } else if (r.chosen >= 0) {
    ex.chosen = snapshot_.node_name(static_cast<uint32_t>(r.chosen));
    Reservation reserved = preview_reservation(pod, plan, static_cast<uint32_t>(r.chosen));
    ex.devices = std::move(reserved.devices);
    ex.device_group = std::move(reserved.device_group);
    ex.group_devices = std::move(reserved.group_devices);
  } else {
    ex.message = fit_error(q, r);
    explain_post_filter(pod, plan, q, ex.message, ex.preemption);
  }

  std::vector<int32_t> scored_pos(n, -1);
  for (size_t i = 0; i < r.scored_nodes.size(); ++i) scored_pos[r.scored_nodes[i]] = static_cast<int32_t>(i);
  std::vector<bool> candidate(n, !q.candidates.has_value());
  if (q.candidates)
    for (uint32_t c : *q.candidates) candidate[c] = true;
  const PodQueryView v = q.view();
  const size_t F = r.scored_nodes.size();
  for (uint32_t i = 0; i < n; ++i) {
    NodeExplanation ne;
    ne.name = snapshot_.node_name(i);
    ne.evaluated = candidate[i];
    const NodeVerdict& verdict = r.verdicts[i];
    ne.feasible = candidate[i] && verdict.feasible();
    if (candidate[i] && !verdict.feasible()) {
      ne.filter_plugin = plugin_name(verdict.plugin);
      ne.filter_code = verdict.code;
      filter_reasons(verdict.plugin, verdict.reasons, snapshot_, v, i, ne.filter_reasons);
    }
    if (ne.feasible && scored_pos[i] >= 0 && !r.raw_scores.empty()) {
      const auto pos = static_cast<size_t>(scored_pos[i]);
      for (uint32_t slot = 0; slot < v.num_scores; ++slot) {
        PluginScoreExplanation ps;
        ps.plugin = plugin_name(v.scores[slot]);
        ps.raw = r.raw_scores[slot * F + pos];
        if (ps.raw == kIgnoredScore) ps.raw = 0;  // upstream's Score gives 0 to the nodes it ignores
        ps.normalized = r.normalized_scores[slot * F + pos];
        ps.weighted = ps.normalized * v.weights[slot];
        ne.scores.push_back(ps);
      }
      ne.total = r.totals[pos];
    }
    ex.nodes.push_back(std::move(ne));
  }
  if (r.chosen >= 0 && F > 0) {
    const int64_t best = *std::max_element(r.totals.begin(), r.totals.end());
    for (size_t i = 0; i < F; ++i) ex.tied_at_best += r.totals[i] == best ? 1 : 0;
  }
  return ex;
}

}  // namespace bulkscore
