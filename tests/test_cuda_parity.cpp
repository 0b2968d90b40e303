// CUDA backend parity: the CUDA backend must return exactly what the CPU
// backend returns (every EvalResult field, and the engine's schedule
// sequence), on random clusters from a printed seed (override with
// BULKSCORE_PARITY_SEED=<n>).
//
// Without a CUDA device (or in a build without CUDA) the parity tests skip;
// the harness itself still runs CPU against CPU in CudaParityHarness so that
// the random clusters stay valid inputs. BULKSCORE_PARITY_AGAINST=cpu runs the
// full parity suite with a fresh CPU backend in place of the CUDA one (a dry
// run of the harness on machines without a GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "bench/generator/generator.hpp"
#include "host/common.hpp"
#include "host/engine/backend.hpp"
#include "host/engine/batch_cache.hpp"
#include "host/engine/engine.hpp"
#include "host/engine/pod_query.hpp"
#include "host/input/config.hpp"
#include "host/input/model.hpp"
#include "host/snapshot/snapshot.hpp"
#include "plugins/gpu_share.hpp"
#include "plugins/simd_dispatch.hpp"
#include "tests/preemption_reference.hpp"
#include "tests/random_cluster.hpp"
#include "tests/random_pod_affinity.hpp"
#include "tests/random_preemption.hpp"
#include "tests/reference_backend.hpp"

namespace bulkscore {
// Found by argument-dependent lookup, in ScoreBounds' own namespace.
std::ostream& operator<<(std::ostream& os, const ScoreBounds& b) {
  return os << "{min " << b.min << " (" << b.at_min << "), max " << b.max << " (" << b.at_max << ")}";
}
namespace {

using namespace testutil;  // NOLINT(google-build-using-namespace): the random clusters

// ---- seed and backend under test ---------------------------------------------

bool dry_run_on_cpu() {
  const char* env = std::getenv("BULKSCORE_PARITY_AGAINST");
  return env && std::string(env) == "cpu";
}

// "" when the backend under test can be made; else why not.
std::string why_no_backend_under_test() {
  if (dry_run_on_cpu()) return "";
#ifdef BULKSCORE_WITH_CUDA
  return cuda_unavailable_reason();
#else
  return "no CUDA device: this build has no CUDA backend (configured without a CUDA compiler)";
#endif
}

std::unique_ptr<Backend> backend_under_test() { return dry_run_on_cpu() ? make_cpu_backend() : make_cuda_backend(); }
const char* engine_backend_under_test() { return dry_run_on_cpu() ? "cpu" : "cuda"; }

#define REQUIRE_BACKEND_UNDER_TEST()                      \
  do {                                                    \
    const std::string why_ = why_no_backend_under_test(); \
    if (!why_.empty()) GTEST_SKIP() << why_;              \
  } while (0)

// ---- comparison ------------------------------------------------------------------

template <class T>
void expect_same_list(const std::vector<T>& want, const std::vector<T>& got, const char* what,
                      const std::string& where) {
  ASSERT_EQ(want.size(), got.size()) << what << " size, " << where;
  for (size_t i = 0; i < want.size(); ++i)
    if (!(want[i] == got[i])) {
      ADD_FAILURE() << what << "[" << i << "]: cpu " << want[i] << ", under test " << got[i] << ", " << where;
      return;
    }
}

void expect_same(const EvalResult& want, const EvalResult& got, const std::string& where) {
  EXPECT_EQ(want.num_feasible, got.num_feasible) << where;
  EXPECT_EQ(want.processed, got.processed) << where;
  EXPECT_EQ(want.chosen, got.chosen) << where;
  EXPECT_EQ(want.chosen_total, got.chosen_total) << where;
  EXPECT_EQ(want.scored, got.scored) << where;
  for (size_t i = 0; i < want.rejections.counts.size(); ++i)
    if (want.rejections.counts[i] != got.rejections.counts[i]) {
      ADD_FAILURE() << "rejections[plugin " << i / 64 << ", bit " << i % 64 << "]: cpu " << want.rejections.counts[i]
                    << ", under test " << got.rejections.counts[i] << ", " << where;
      break;
    }
  ASSERT_EQ(want.verdicts.size(), got.verdicts.size()) << "verdicts size, " << where;
  for (size_t i = 0; i < want.verdicts.size(); ++i) {
    const NodeVerdict& a = want.verdicts[i];
    const NodeVerdict& b = got.verdicts[i];
    if (a.plugin != b.plugin || a.code != b.code || a.reasons != b.reasons) {
      ADD_FAILURE() << "verdicts[" << i << "]: cpu (plugin " << int(a.plugin) << ", code " << int(a.code)
                    << ", reasons " << a.reasons << "), under test (plugin " << int(b.plugin) << ", code "
                    << int(b.code) << ", reasons " << b.reasons << "), " << where;
      break;
    }
  }
  expect_same_list(want.scored_nodes, got.scored_nodes, "scored_nodes", where);
  expect_same_list(want.raw_scores, got.raw_scores, "raw_scores", where);
  expect_same_list(want.normalized_scores, got.normalized_scores, "normalized_scores", where);
  expect_same_list(want.totals, got.totals, "totals", where);
  expect_same_list(want.sorted_nodes, got.sorted_nodes, "sorted_nodes", where);
  expect_same_list(want.sorted_keys, got.sorted_keys, "sorted_keys", where);
}

// want_totals' lists in one form whatever the backend gave: every
// normalizing slot's bounds, the rows of the slots that need them
// (stat_row_needed), the highest total and its count. A backend's summary
// (EvalResult::stat_bounds, top_known, ascending) is checked against its
// own lists where they hold what it describes.
struct LightForm {
  std::vector<ScoreBounds> bounds;
  std::vector<int64_t> rows;
  ScoreBounds top{};
  uint32_t without_row = 0;  // slots the backend's summary gave without a row
};

LightForm light_form(const PodQueryView& q, const EvalResult& r, const char* who, const std::string& where) {
  LightForm f;
  const auto F = static_cast<uint32_t>(r.scored_nodes.size());
  uint32_t slots = 0;
  for (uint32_t slot = 0; slot < q.num_scores; ++slot) slots += needs_stats(q.normalize[slot]) ? 1 : 0;
  const bool given = !r.stat_bounds.empty();
  if (given) {
    EXPECT_EQ(r.stat_bounds.size(), slots) << who << ": stat_bounds, " << where;
  }
  size_t row = 0;
  for (uint32_t k = 0; k < slots; ++k) {
    const int64_t* values = nullptr;
    ScoreBounds b{};
    if (given && k < r.stat_bounds.size()) {
      b = r.stat_bounds[k];
      if (stat_row_needed(b, F))
        values = r.stat_scores.data() + row++ * F;
      else
        ++f.without_row;
    } else {
      values = r.stat_scores.data() + row++ * F;
      b = score_bounds(values, F);
    }
    if (row * F > r.stat_scores.size()) {
      ADD_FAILURE() << who << ": stat_scores holds " << r.stat_scores.size() << " values, fewer than its " << row
                    << " rows of " << F << ", " << where;
      return f;
    }
    if (values && given && !(score_bounds(values, F) == b))
      ADD_FAILURE() << who << ": stat_bounds[" << k << "] " << b << " but its row's are " << score_bounds(values, F)
                    << ", " << where;
    f.bounds.push_back(b);
    if (values && stat_row_needed(b, F)) f.rows.insert(f.rows.end(), values, values + F);
  }
  EXPECT_EQ(row * F, r.stat_scores.size()) << who << ": stat_scores rows, " << where;
  f.top = score_bounds(r.totals.data(), static_cast<uint32_t>(r.totals.size()));
  f.top.min = 0;
  f.top.at_min = 0;
  if (r.top_known) {
    EXPECT_EQ(r.top_total, f.top.max) << who << ": top_total, " << where;
    EXPECT_EQ(r.top_count, f.top.at_max) << who << ": top_count, " << where;
  }
  if (r.ascending) {
    EXPECT_TRUE(std::adjacent_find(r.scored_nodes.begin(), r.scored_nodes.end(), std::greater_equal<uint32_t>()) ==
                r.scored_nodes.end())
        << who << ": ascending set on nodes that do not ascend, " << where;
  }
  return f;
}

// Returns the form under test (its rows: some slot's values differ).
LightForm expect_same_light_form(const PodQueryView& q, const EvalResult& want, const EvalResult& got,
                            const std::string& where) {
  const LightForm a = light_form(q, want, "reference", where);
  const LightForm b = light_form(q, got, "under test", where);
  expect_same_list(a.bounds, b.bounds, "stat bounds", where);
  expect_same_list(a.rows, b.rows, "stat rows", where);
  EXPECT_EQ(a.top, b.top) << "the highest total and its count, " << where;
  return b;
}

// The batch cache keeps a state only from a scored list in ascending node
// order (its random tie-break walks its positions as nodes,
// BatchCache::best_position), and every request the engine makes visits the
// nodes in that order: a backend must keep the visiting order in its scored
// list (the GPU's compaction does). When the visit ascends, the reference's
// and the backend's scored lists must ascend too. Returns 1 when a list of
// two or more nodes was checked.
uint32_t expect_node_order_kept(const Snapshot& snap, const EvalRequest& req, const EvalResult& want,
                                const EvalResult& got, const std::string& where) {
  const VisitOrder visit = visit_order(snap, req);
  for (uint32_t k = 1; k < visit.count; ++k)
    if (visit.node_at(k - 1) >= visit.node_at(k)) return 0;
  for (const EvalResult* r : {&want, &got}) {
    const auto& nodes = r->scored_nodes;
    const auto at = std::adjacent_find(nodes.begin(), nodes.end(), std::greater_equal<uint32_t>());
    if (at != nodes.end()) {
      ADD_FAILURE() << (r == &want ? "reference" : "under test") << ": scored_nodes[" << (at - nodes.begin())
                    << "] = " << *at << " then " << *(at + 1) << " although the visit ascends by node index, " << where;
      return 0;
    }
  }
  return want.scored_nodes.size() >= 2 ? 1 : 0;
}

const ProfilePlan& plan_named(const std::vector<ProfilePlan>& plans, const std::string& name) {
  for (const auto& p : plans)
    if (p.config.scheduler_name == name) return p;
  throw std::runtime_error("no plan " + name);
}

// What a parity run exercised, so that a generator drifting into trivial
// clusters shows up.
struct Coverage {
  uint32_t evaluations = 0;
  uint32_t scored = 0;         // two or more feasible nodes, scored
  uint32_t lone_feasible = 0;  // exactly one feasible node
  uint32_t none_feasible = 0;
  uint32_t cut = 0;      // sampling stopped before the last candidate
  uint32_t assumed = 0;  // pods assumed (mutation log entries)
  uint32_t structure_changes = 0;
  uint32_t removed = 0;             // assumed pods removed again
  uint32_t node_updates = 0;        // nodes updated (in place or structurally)
  uint32_t prescored = 0;           // scored with a feasible-set PreScore (SeamProbe)
  uint32_t negative_totals = 0;     // evaluations with some node total below zero
  uint32_t ignored_nodes = 0;       // scored nodes some plugin ignored (kIgnoredScore)
  uint32_t device_filtered = 0;     // evaluations where GpuShare's filter ran
  uint32_t device_feasible = 0;     // ... and some node fitted
  uint32_t group_feasible = 0;      // evaluations of a SharedDeviceGroup member with a feasible node
  uint32_t group_assumed = 0;       // SharedDeviceGroup members assumed
  uint32_t ordered_lists = 0;       // scored lists of 2+ nodes checked to ascend (visit in node order)
  uint32_t light_forms = 0;         // want_totals' lists (a window's light form) compared, scored
  uint32_t light_rows = 0;          // ... keeping some slot's row
  uint32_t light_without_row = 0;   // ... a slot's bounds given without its row (the CPU backend: one value)
  uint32_t node_data_updates = 0;   // node data entries set or cleared between pods
  uint32_t node_data_rejected = 0;  // evaluations where NodeData rejected some node
};

Coverage& operator+=(Coverage& a, const Coverage& b) {
  a.evaluations += b.evaluations;
  a.scored += b.scored;
  a.lone_feasible += b.lone_feasible;
  a.none_feasible += b.none_feasible;
  a.cut += b.cut;
  a.assumed += b.assumed;
  a.structure_changes += b.structure_changes;
  a.removed += b.removed;
  a.node_updates += b.node_updates;
  a.prescored += b.prescored;
  a.negative_totals += b.negative_totals;
  a.ignored_nodes += b.ignored_nodes;
  a.device_filtered += b.device_filtered;
  a.device_feasible += b.device_feasible;
  a.group_feasible += b.group_feasible;
  a.group_assumed += b.group_assumed;
  a.ordered_lists += b.ordered_lists;
  a.light_forms += b.light_forms;
  a.light_rows += b.light_rows;
  a.light_without_row += b.light_without_row;
  a.node_data_updates += b.node_data_updates;
  a.node_data_rejected += b.node_data_rejected;
  return a;
}

std::ostream& operator<<(std::ostream& os, const Coverage& c) {
  return os << c.evaluations << " evaluations: " << c.scored << " scored, " << c.lone_feasible << " lone feasible, "
            << c.none_feasible << " none feasible, " << c.cut << " sampling cuts; " << c.assumed << " pods assumed, "
            << c.structure_changes << " structure changes, " << c.removed << " removals, " << c.node_updates
            << " node updates; " << c.prescored << " prescored, " << c.negative_totals << " negative totals, "
            << c.ignored_nodes << " ignored scores; GpuShare filtered " << c.device_filtered << " ("
            << c.device_feasible << " with a feasible node); " << c.group_feasible
            << " group evaluations with a feasible node, " << c.group_assumed << " group members assumed; "
            << c.ordered_lists << " scored lists in node order; " << c.light_forms << " light forms (" << c.light_rows << " with rows, "
            << c.light_without_row << " with a slot's row left out); " << c.node_data_updates << " node data updates, "
            << c.node_data_rejected << " evaluations with nodes NodeData rejected";
}

// Evaluates every pending pod of a random cluster with both backends under a
// spread of requests (all nodes, explain-style lists, sorted lists, sampling
// from random starts, shuffled candidate lists), assuming some pods between
// evaluations so the device mirror follows the mutation log.
// A GPU cluster: every node has 1-8 devices, most pending pods ask for
// devices under one of the GPU profiles (GpuShare, FGD, the baselines).
void make_gpu_heavy(Cluster& cluster, uint64_t stream) {
  SplitMix64 g = SplitMix64::derive(parity_seed() ^ 0x69b8ull, stream);
  static const char* const kCards[] = {"G2", "T4", "V100M32"};
  for (Node& n : cluster.nodes) {
    if (n.allocatable.count("cpu") == 0) continue;  // zero-capacity nodes stay so
    const int64_t gpus = g.between(1, 8);
    n.allocatable["alibabacloud.com/gpu-count"] = gpus;
    n.allocatable["alibabacloud.com/gpu-milli"] = 1000 * gpus;
    n.labels["alibabacloud.com/gpu-card-model"] = pick(g, kCards);
  }
  // Running pods' anti-affinity would keep whole zones out of reach.
  for (Pod& p : cluster.running_pods) p.affinity.reset();
  static const char* const kGpuProfiles[] = {"gpu-share", "gpu-fgd", "gpu-baselines"};
  for (Pod& p : cluster.pending_pods) {
    if (!g.chance(0.85)) continue;
    if (p.annotations.count("alibabacloud.com/gpu-count") == 0) add_random_device_demand(g, p);
    p.scheduler_name = pick(g, kGpuProfiles);
    p.affinity.reset();  // keep most of them feasible somewhere
    p.topology_spread_constraints.clear();
  }
}

Coverage run_backend_parity(Backend& reference, Backend& under_test, const ClusterShape& shape, uint64_t stream,
                            bool gpu_heavy = false, const SchedulerConfig& config = parity_config()) {
  Coverage cov;
  SplitMix64 rng = SplitMix64::derive(parity_seed(), stream);
  const std::vector<std::string> schedulers = scheduler_names();
  Cluster cluster = random_cluster(rng, shape, schedulers);
  if (gpu_heavy) {
    make_gpu_heavy(cluster, stream);
    add_device_groups(cluster, stream);
  }
  Snapshot snap = Snapshot::build(cluster.nodes, cluster.running_pods);
  snap.configure_devices(DeviceModel{});
  snap.configure_device_groups(cluster.objects.device_groups, DeviceGroupModel{});
  (void)snap.take_device_warnings();
  std::vector<uint32_t> assumed_ids;
  std::vector<ProfilePlan> plans;
  for (const auto& p : config.profiles) plans.push_back(make_profile_plan(p));
  const uint32_t n = snap.num_nodes();
  // The embedder's node data (NodeData): most nodes given some in every
  // column, changed between pods; a stream of its own.
  SplitMix64 drng = SplitMix64::derive(parity_seed() ^ 0xda7a5ull, stream);
  for (int k = 0; k < 6; ++k) apply_node_data(snap, random_node_data(drng, n, n));

  EvalResult want, got;
  std::vector<uint32_t> shuffled;
  for (size_t i = 0; i < cluster.pending_pods.size(); ++i) {
    const Pod& pod = cluster.pending_pods[i];
    const uint64_t version = snap.structure_version();
    intern_pod_for_plan(snap, pod, plan_named(plans, pod.scheduler_name), &cluster.objects);
    const TieBreak tie = (i % 2) ? TieBreak::First : TieBreak::Random;
    PodQuery q = prepare_pod_query(pod, snap, plan_named(plans, pod.scheduler_name), tie, parity_seed() ^ stream,
                                   &cluster.objects);
    const std::vector<uint32_t>* candidates = q.candidates ? &*q.candidates : nullptr;
    const uint32_t m = candidates ? static_cast<uint32_t>(candidates->size()) : n;

    std::vector<EvalRequest> requests;
    EvalRequest plain;
    plain.candidates = candidates;
    requests.push_back(plain);
    EvalRequest explain = plain;
    explain.want_verdicts = explain.want_scores = explain.want_sorted = explain.score_single = true;
    requests.push_back(explain);
    EvalRequest sorted = plain;
    sorted.want_sorted = true;
    requests.push_back(sorted);
    // As the scheduling cycle asks: the histogram only where no node is
    // feasible.
    EvalRequest lean = plain;
    lean.want_rejections = false;
    requests.push_back(lean);
    // As a window asks (Engine::look_ahead): the light form's lists.
    EvalRequest light = lean;
    light.want_totals = true;
    requests.push_back(light);
    for (int s = 0; s < 2; ++s) {
      EvalRequest sampled = plain;
      sampled.num_to_find = static_cast<uint32_t>(rng.below(uint64_t(m) + 1));  // 0..m
      if (s == 1 && m > 2) sampled.num_to_find = 1 + static_cast<uint32_t>(rng.below(m / 2));
      sampled.start = static_cast<uint32_t>(rng.below(2 * uint64_t(m) + 1));
      sampled.want_verdicts = rng.chance(0.5);
      sampled.want_scores = rng.chance(0.5);
      sampled.want_sorted = rng.chance(0.5);
      sampled.score_single = rng.chance(0.3);
      requests.push_back(sampled);
    }
    // A shuffled subset of the nodes as candidates (visiting order != index order).
    shuffled.clear();
    for (uint32_t k = 0; k < n; ++k)
      if (rng.chance(0.6)) shuffled.push_back(k);
    rng.shuffle(shuffled);
    EvalRequest subset;
    subset.candidates = &shuffled;
    subset.want_verdicts = subset.want_scores = subset.want_sorted = true;
    if (rng.chance(0.5) && !shuffled.empty()) {
      subset.num_to_find = 1 + static_cast<uint32_t>(rng.below(shuffled.size()));
      subset.start = static_cast<uint32_t>(rng.below(shuffled.size()));
    }
    requests.push_back(subset);

    for (size_t r = 0; r < requests.size(); ++r) {
      const std::string where =
          "nodes " + std::to_string(n) + ", pod " + std::to_string(i) + " (" + pod.scheduler_name + ", tie " +
          (tie == TieBreak::First ? "First" : "Random") + "), request " + std::to_string(r) + ", num_to_find " +
          std::to_string(requests[r].num_to_find) + ", start " + std::to_string(requests[r].start);
      reference.evaluate(snap, q, requests[r], want);
      under_test.evaluate(snap, q, requests[r], got);
      // Without want_rejections the histogram may be left out where some
      // node is feasible; where none is, it must be whole.
      if (!requests[r].want_rejections && got.num_feasible > 0) got.rejections = want.rejections;
      expect_same(want, got, where);
      if (requests[r].want_totals && !requests[r].want_scores) {
        const LightForm f = expect_same_light_form(q.view(), want, got, where);
        cov.light_forms += want.scored ? 1 : 0;
        cov.light_rows += want.scored && !f.rows.empty() ? 1 : 0;
        cov.light_without_row += want.scored && f.without_row > 0 ? 1 : 0;
      }
      cov.ordered_lists += expect_node_order_kept(snap, requests[r], want, got, where);
      if (::testing::Test::HasFailure()) return cov;
      ++cov.evaluations;
      cov.scored += want.scored ? 1 : 0;
      cov.lone_feasible += want.num_feasible == 1 ? 1 : 0;
      cov.none_feasible += want.num_feasible == 0 ? 1 : 0;
      const uint32_t visited = requests[r].candidates ? static_cast<uint32_t>(requests[r].candidates->size()) : n;
      cov.cut += want.processed < visited ? 1 : 0;
      cov.prescored += want.scored && q.header.prescore_feasible ? 1 : 0;
      cov.negative_totals +=
          want.scored && std::any_of(want.totals.begin(), want.totals.end(), [](int64_t t) { return t < 0; }) ? 1 : 0;
      cov.ignored_nodes +=
          static_cast<uint32_t>(std::count(want.raw_scores.begin(), want.raw_scores.end(), kIgnoredScore));
      const bool device_filter =
          !q.rejected && pod.scheduler_name.rfind("gpu-", 0) == 0 && pod_device_demand(pod, DeviceModel{}).any();
      cov.device_filtered += device_filter ? 1 : 0;
      cov.group_feasible +=
          !q.rejected && pod.annotations.count("deviceshare.io/group") != 0 && want.num_feasible > 0 ? 1 : 0;
      cov.device_feasible += device_filter && want.num_feasible > 0 ? 1 : 0;
      bool node_data_rejected = false;
      for (uint32_t bit = 0; bit < 64; ++bit)
        node_data_rejected |= want.rejections.at(plugin_id<plugins::NodeData>(), bit) > 0;
      cov.node_data_rejected += node_data_rejected ? 1 : 0;
    }

    // Assume the pod where the plain request put it, most of the time.
    reference.evaluate(snap, q, plain, want);
    if (want.chosen >= 0 && rng.chance(0.7)) {
      Pod assumed = pod;
      assumed.node_name = snap.node_name(static_cast<uint32_t>(want.chosen));
      // Devices as the engine takes them (the device columns change too).
      const std::vector<int32_t> devices = plugins::GpuShare::choose_devices(
          snap, static_cast<uint32_t>(want.chosen), pod, pod_device_demand(pod, DeviceModel{}),
          plan_named(plans, pod.scheduler_name).config);
      if (!devices.empty()) assumed.annotations["alibabacloud.com/gpu-index"] = format_device_indices(devices);
      // A group's devices as the engine takes them: its binding's, or the
      // strategy's choice for the pod that binds it.
      const std::string group = pod_device_group(pod, DeviceGroupModel{});
      const int32_t gi = group.empty() ? -1 : snap.device_group_index(group);
      if (gi >= 0) {
        const Snapshot::GroupBinding& b = snap.device_group_binding(static_cast<uint32_t>(gi));
        const GroupDevices shared = b.node >= 0
                                        ? b.devices
                                        : plugins::SharedDeviceGroup::choose_devices(
                                              snap, static_cast<uint32_t>(want.chosen), static_cast<uint32_t>(gi));
        if (!shared.empty()) annotate_group_devices(assumed, DeviceGroupModel{}, shared);
        ++cov.group_assumed;
      }
      assumed_ids.push_back(snap.add_pod(assumed, static_cast<uint32_t>(want.chosen)));
      ++cov.assumed;
    }
    // The snapshot changing both ways, as an embedding scheduler's events
    // (and the batch cache's undo) change it: an assumed pod removed again,
    // a node's capacity or cordon updated in place, a node's labels or
    // taints updated (structural).
    if (!assumed_ids.empty() && rng.chance(0.25)) {
      const size_t k = rng.below(assumed_ids.size());
      snap.remove_pod(assumed_ids[k]);
      assumed_ids.erase(assumed_ids.begin() + static_cast<std::ptrdiff_t>(k));
      ++cov.removed;
    }
    if (n > 0 && rng.chance(0.15)) {
      const uint32_t node = static_cast<uint32_t>(rng.below(n));
      Node updated = cluster.nodes[node];
      updated.unschedulable = rng.chance(0.2);
      for (auto& [name, amount] : updated.allocatable)
        if (rng.chance(0.5)) amount = amount / 2 + static_cast<int64_t>(rng.below(3));
      if (rng.chance(0.3)) {
        updated.labels["pool"] = pick(rng, kPools);
        if (rng.chance(0.5)) updated.taints.push_back({"noisy", "x", "PreferNoSchedule"});
      }
      snap.update_node(updated);
      cluster.nodes[node] = updated;
      ++cov.node_updates;
    }
    if (drng.chance(0.3)) {
      const RandomNodeData d = random_node_data(drng, n, drng.chance(0.2) ? n : 4);
      apply_node_data(snap, d);
      cov.node_data_updates += d.clear_column ? n : static_cast<uint32_t>(d.updates.size());
    }
    cov.structure_changes += snap.structure_version() != version ? 1 : 0;
  }
  std::printf("[ parity ] %u nodes: ", n);
  std::cout << cov << "\n";
  return cov;
}

// ---- tests ------------------------------------------------------------------------

struct ParityCase {
  uint32_t nodes;
  uint32_t pods;
  double degenerate;
};

void PrintTo(const ParityCase& c, std::ostream* os) {
  *os << c.nodes << " nodes, " << c.pods << " pods, zero-capacity fraction " << c.degenerate;
}

std::string case_name(const ::testing::TestParamInfo<ParityCase>& info) {
  std::string s = std::to_string(info.param.nodes) + "Nodes";
  if (info.param.degenerate >= 1.0) s += "AllZeroCapacity";
  return s;
}

class CudaParity : public ::testing::TestWithParam<ParityCase> {};

TEST_P(CudaParity, EveryEvalResultFieldMatchesTheCpuBackend) {
  REQUIRE_BACKEND_UNDER_TEST();
  const ParityCase c = GetParam();
  auto cpu = make_cpu_backend();
  auto dev = backend_under_test();
  run_backend_parity(*cpu, *dev, ClusterShape{c.nodes, c.pods, c.degenerate}, c.nodes * 7919ull + c.pods);
}

// The sanitizer build leaves out 100,000 nodes: the code paths of 10,000
// nodes at ten times the time (under AddressSanitizer about a third of its
// suite); the Release build, which CI also runs, keeps them.
#ifdef BULKSCORE_SANITIZER_BUILD
#define BULKSCORE_PARITY_LARGEST
#else
#define BULKSCORE_PARITY_LARGEST , ParityCase{100000, 3, 0.05}
#endif
INSTANTIATE_TEST_SUITE_P(Sizes, CudaParity,
                         ::testing::Values(ParityCase{0, 4, 0.05}, ParityCase{1, 40, 0.05}, ParityCase{31, 30, 0.05},
                                           ParityCase{32, 30, 0.05}, ParityCase{33, 30, 0.05}, ParityCase{64, 30, 0.05},
                                           ParityCase{300, 20, 1.0}, ParityCase{1000, 24, 0.05},
                                           ParityCase{10000, 8, 0.05} BULKSCORE_PARITY_LARGEST),
                         case_name);

// GPU clusters: the device filter, FGD and the baselines on every node,
// devices chosen and charged between evaluations.
TEST_P(CudaParity, GpuClustersMatchTheCpuBackend) {
  REQUIRE_BACKEND_UNDER_TEST();
  const ParityCase c = GetParam();
  auto cpu = make_cpu_backend();
  auto dev = backend_under_test();
  run_backend_parity(*cpu, *dev, ClusterShape{c.nodes, c.pods, c.degenerate}, c.nodes * 7919ull + c.pods + 1, true);
}

TEST_P(CudaParity, GpuClustersCpuBackendMatchesTheNodeMajorReference) {
  const ParityCase c = GetParam();
  ReferenceBackend reference;
  auto cpu = make_cpu_backend();
  const Coverage cov = run_backend_parity(reference, *cpu, ClusterShape{c.nodes, c.pods, c.degenerate},
                                          c.nodes * 7919ull + c.pods + 1, true);
  // Too few pods (the largest clusters' 3 to 8) may all land elsewhere.
  if (c.nodes >= 31 && c.pods >= 20 && c.degenerate < 1.0) {
    EXPECT_GT(cov.device_feasible, 0u) << "no GPU pod fitted anywhere";
    EXPECT_GT(cov.group_feasible, 0u) << "no SharedDeviceGroup member fitted anywhere";
  }
}

// NodeData in every profile (nodes without data failing in some, every
// normalization), the node data columns filled and changed between pods.
TEST_P(CudaParity, NodeDataMatchesTheCpuBackend) {
  REQUIRE_BACKEND_UNDER_TEST();
  const ParityCase c = GetParam();
  auto cpu = make_cpu_backend();
  auto dev = backend_under_test();
  run_backend_parity(*cpu, *dev, ClusterShape{c.nodes, c.pods, c.degenerate}, c.nodes * 7919ull + c.pods + 2, false,
                     node_data_parity_config());
}

TEST_P(CudaParity, NodeDataCpuBackendMatchesTheNodeMajorReference) {
  const ParityCase c = GetParam();
  ReferenceBackend reference;
  auto cpu = make_cpu_backend();
  const Coverage cov = run_backend_parity(reference, *cpu, ClusterShape{c.nodes, c.pods, c.degenerate},
                                          c.nodes * 7919ull + c.pods + 2, false, node_data_parity_config());
  if (c.nodes >= 31 && c.pods >= 20 && c.degenerate < 1.0) {
    EXPECT_GT(cov.node_data_updates, 0u) << cov;
    EXPECT_GT(cov.node_data_rejected, 0u) << cov;
  }
}

// Always runs, GPU or not: the CPU backend (plugin-major, threaded) against
// the node-major reference, which takes the kernels' path through
// filter_node/run_score. Same clusters and pod sequences as the CUDA cases.
TEST_P(CudaParity, CpuBackendMatchesTheNodeMajorReference) {
  const ParityCase c = GetParam();
  auto cpu = make_cpu_backend();
  testutil::ReferenceBackend reference;
  run_backend_parity(reference, *cpu, ClusterShape{c.nodes, c.pods, c.degenerate}, c.nodes * 7919ull + c.pods);
}

// The same on every SIMD target this machine supports (the CPU backend's
// vectorized column loops, plugins/simd_dispatch.hpp): the reference scores
// node by node with the plain rules, so it checks each target's loops.
// fn(target) with each SIMD target this machine supports set in turn (all
// of them, or only the one in use where `all` is false); the target in
// use is set again afterwards.
template <class Fn>
void on_simd_targets(bool all, Fn&& fn) {
  const SimdTarget before = simd_target();
  for (uint32_t t = 0; t < kNumSimdTargets; ++t) {
    const auto target = static_cast<SimdTarget>(t);
    if (!simd_supported(target) || (!all && target != before)) continue;
    set_simd_target(target);
    SCOPED_TRACE(std::string("SIMD target ") + simd_target_name(target));
    fn();
  }
  set_simd_target(before);
}

TEST_P(CudaParity, CpuBackendMatchesTheNodeMajorReferenceOnEverySimdTarget) {
  const ParityCase c = GetParam();
  on_simd_targets(true, [&] {
    auto cpu = make_cpu_backend();
    testutil::ReferenceBackend reference;
    run_backend_parity(reference, *cpu, ClusterShape{c.nodes, c.pods, c.degenerate}, c.nodes * 7919ull + c.pods + 3);
  });
}

// Node i of the sub-block tests below: its name and hostname label.
Node sub_block_node(uint32_t i) {
  Node n;
  n.name = "node-" + std::to_string(i);
  n.labels["kubernetes.io/hostname"] = n.name;
  return n;
}

// A default-scheduler pod of one container with these requests.
Pod default_pod(const std::string& name, ResourceList requests) {
  Pod p = testutil::make_pod(name, {testutil::container(std::move(requests))});
  p.scheduler_name = "default-scheduler";
  return p;
}

// NodeResourcesFit's Filter inside the shared score kernel (shared_filter):
// where no rejection reasons are read, the CPU backend scores a sub-block
// of 512 nodes and drops the nodes Fit rejects in the same loop, or, after
// a sub-block that lost a quarter of its nodes, filters first. Nodes that
// fail Fit by cpu, memory, ephemeral storage, an extended resource or the
// pod count sit inside sub-blocks, sparse in some regions and dense in
// others (the two modes alternate), under pods that check each of those,
// nothing, or more than fit in the loop; every result must equal the
// node-major reference's, on one and two threads and every SIMD target.
TEST(FusedFitFilter, NodesFitRejectsInsideSubBlocksMatchTheReferenceOnEverySimdTarget) {
  constexpr uint32_t kNodes = 5000;
  std::vector<Node> nodes;
  std::vector<Pod> running;
  for (uint32_t i = 0; i < kNodes; ++i) {
    Node n = sub_block_node(i);
    n.allocatable = {{"cpu", 4000 + (i % 5) * 1000}, {"memory", (16 + i % 3) * kGi}, {"pods", 110},
                     {"ephemeral-storage", 100 * kGi}};
    if (i % 2 == 0) n.allocatable["example.com/foo"] = 4;
    for (int k = 0; k < 20; ++k) n.allocatable["example.com/r" + std::to_string(k)] = 8;
    const uint32_t region = i / 1250;  // sparse, dense, sparse, none
    ResourceList take;
    if (region == 1 ? i % 10 != 0 : region != 3 && i % 7 == 3) take["cpu"] = n.allocatable["cpu"] - 100;
    if (region != 3 && i % 13 == 5) take["memory"] = n.allocatable["memory"] - kGi / 2;
    if (region != 3 && i % 17 == 6) take["ephemeral-storage"] = 100 * kGi;
    if (region != 3 && i % 19 == 8 && i % 2 == 0) take["example.com/foo"] = 4;
    if (region != 3 && i % 23 == 2) n.allocatable["pods"] = 1;
    if (region == 2 && i % 29 == 4) n.allocatable["pods"] = 0;  // already over: every pod fails
    if (!take.empty() || n.allocatable["pods"] == 1)
      running.push_back(testutil::running("run-" + std::to_string(i), n.name, take));
    nodes.push_back(n);
  }
  Snapshot snap = Snapshot::build(nodes, running);
  const auto pod = default_pod;
  ResourceList many = {{"cpu", 100}};
  for (int k = 0; k < 20; ++k) many["example.com/r" + std::to_string(k)] = 1;  // past the loop's inline checks
  const std::vector<Pod> pods = {pod("cpu-memory", {{"cpu", 500}, {"memory", kGi}}),
                                 pod("cpu", {{"cpu", 800}}),
                                 pod("memory", {{"memory", 2 * kGi}}),
                                 pod("ephemeral", {{"cpu", 200}, {"memory", kGi}, {"ephemeral-storage", kGi}}),
                                 pod("extended", {{"cpu", 200}, {"example.com/foo", 1}}),
                                 pod("nothing", {}),
                                 pod("many", many),
                                 pod("too-large", {{"cpu", 100000}})};
  const ProfilePlan plan = make_profile_plan(default_scheduler_config().profiles[0]);
  testutil::ReferenceBackend reference;
  uint32_t dropped_some = 0;
  on_simd_targets(true, [&] {
    for (const int threads : {1, 2}) {
      auto cpu = make_cpu_backend(threads);
      for (const Pod& p : pods) {
        intern_pod_for_plan(snap, p, plan);
        for (const TieBreak tie : {TieBreak::First, TieBreak::Random}) {
          PodQuery q = prepare_pod_query(p, snap, plan, tie, 7);
          // Without reasons, also as a window asks (its light form's lists
          // gathered from the ranges the kernel's Filter shortened).
          for (const int form : {0, 1, 2}) {
            const bool rejections = form == 1;
            EvalRequest req;
            req.want_rejections = rejections;
            req.want_totals = form == 2;
            EvalResult want, got;
            reference.evaluate(snap, q, req, want);
            cpu->evaluate(snap, q, req, got);
            if (!rejections && got.num_feasible > 0) got.rejections = want.rejections;
            const std::string where = "pod " + p.name + ", " + std::to_string(threads) + " threads, tie " +
                                      (tie == TieBreak::First ? "First" : "Random") + ", form " +
                                      std::to_string(form);
            expect_same(want, got, where);
            if (req.want_totals) expect_same_light_form(q.view(), want, got, where);
            if (::testing::Test::HasFailure()) return;
            dropped_some += want.num_feasible > 0 && want.num_feasible < kNodes * 9 / 10;
          }
        }
      }
    }
  });
  EXPECT_GT(dropped_some, 20u);
}

// The random tie-break's draw among nodes tied at the best total, where
// the tie spans many of a range's 512-node sub-blocks: the CPU backend
// skips the sub-blocks before the drawn one by their tie counts and scans
// only that one. Runs of alike nodes (the best ones in runs that cross
// sub-block boundaries), full nodes inside the runs and a stretch of them
// (Fit drops them in the score loop where no reasons are read, so
// sub-blocks shift or keep no node), every seed's draw on one to three
// threads and every SIMD target, with a normalizing plugin that varies (a
// second pass over the totals) and without (only pass 1's totals), with
// and without rejection reasons and verdicts, must each choose the
// node-major reference's node.
TEST(RandomTieBreak, TiesAcrossSubBlocksDrawTheReferencesNodeOnEverySimdTarget) {
  constexpr uint32_t kNodes = 5000;
  std::vector<Node> nodes;
  std::vector<Pod> running;
  for (uint32_t i = 0; i < kNodes; ++i) {
    Node n = sub_block_node(i);
    const bool large = (i / 700) % 2 == 0;  // runs of 700 nodes
    n.allocatable = {{"cpu", large ? 8000 : 4000}, {"memory", (large ? 32 : 16) * kGi}, {"pods", 110}};
    // Full nodes inside the runs, and a stretch of 1,100 full ones (whole
    // sub-blocks without a survivor, and the kernel's Filter run first).
    const bool full = i % 11 == 3 || (i >= 2900 && i < 4000);
    if (full) running.push_back(testutil::running("run-" + std::to_string(i), n.name, {{"cpu", 7900}}));
    if (i % 5 == 1) n.labels["tier"] = "gold";  // preferred by the "prefers" pod: a varying normalized slot
    nodes.push_back(n);
  }
  Snapshot snap = Snapshot::build(nodes, running);
  const auto pod = [](const std::string& name, ResourceList requests, bool prefers) {
    Pod p = default_pod(name, std::move(requests));
    if (prefers) {
      NodeSelectorTerm term;
      term.match_expressions.push_back(NodeSelectorRequirement{"tier", "In", {"gold"}});
      NodeAffinity affinity;
      affinity.preferred.push_back(PreferredSchedulingTerm{10, term});
      affinity.has_preferred = true;
      p.affinity.emplace().node_affinity = affinity;
    }
    return p;
  };
  const std::vector<Pod> pods = {pod("plain", {{"cpu", 500}, {"memory", kGi}}, false),
                                 pod("prefers", {{"cpu", 500}, {"memory", kGi}}, true)};
  const ProfilePlan plan = make_profile_plan(default_scheduler_config().profiles[0]);
  testutil::ReferenceBackend reference;
  std::set<int32_t> drawn;
  on_simd_targets(true, [&] {
    for (const int threads : {1, 2, 3}) {
      auto cpu = make_cpu_backend(threads);
      for (const Pod& p : pods) {
        intern_pod_for_plan(snap, p, plan);
        for (uint64_t seed = 0; seed < 24; ++seed) {
          PodQuery q = prepare_pod_query(p, snap, plan, TieBreak::Random, seed);
          // No reasons read: Fit runs inside the score kernel (nodes it drops
          // shift the sub-blocks); with them, or with verdicts, the ranges
          // are the feasible list's.
          // Form 3: as a window asks, the light form's lists too.
          for (const int form : {0, 1, 2, 3}) {
            EvalRequest req;
            req.want_rejections = form == 1;
            req.want_verdicts = form == 2;
            req.want_totals = form == 3;
            EvalResult want, got;
            reference.evaluate(snap, q, req, want);
            cpu->evaluate(snap, q, req, got);
            ASSERT_EQ(want.chosen, got.chosen)
                << "pod " << p.name << ", " << threads << " threads, seed " << seed << ", form " << form;
            if (req.want_totals) {
              const std::string where =
                  "pod " + p.name + ", " + std::to_string(threads) + " threads, seed " + std::to_string(seed);
              if (got.num_feasible > 0) got.rejections = want.rejections;  // not asked for
              expect_same(want, got, where);
              expect_same_light_form(q.view(), want, got, where);
              if (::testing::Test::HasFailure()) return;
            }
            drawn.insert(got.chosen);
          }
        }
      }
    }
  });
  // The draws land all over the ties, not in the first sub-block only.
  EXPECT_GT(drawn.size(), 30u);
  EXPECT_GT(*drawn.rbegin(), 2048);
}

// A cluster without taints, where TaintToleration scores every node alike
// (uniform_score) and the CPU backend scores none of them, on every target
// (the largest case on the target in use only: seconds per target).
TEST_P(CudaParity, UntaintedCpuBackendMatchesTheNodeMajorReference) {
  const ParityCase c = GetParam();
  ClusterShape shape{c.nodes, c.pods, c.degenerate};
  shape.taints = false;
  on_simd_targets(c.nodes <= 10000, [&] {
    auto cpu = make_cpu_backend();
    testutil::ReferenceBackend reference;
    run_backend_parity(reference, *cpu, shape, c.nodes * 7919ull + c.pods + 5);
  });
}

// Sampling cut exactly at a chunk edge: every node fits, so the k-th visited
// node is the k-th feasible one, and num_to_find at each multiple of the CPU
// backend's 2,048-node chunk (and one either side) puts the cut on the last
// or first position of a chunk. A regression test for the CPU backend
// visiting one node past a sample completed at a chunk's last position.
TEST(SamplingParity, CutAtEveryChunkEdge) {
  constexpr uint32_t kChunk = 2048;
  const uint32_t n = 3 * kChunk + 5;
  std::vector<Node> nodes;
  for (uint32_t i = 0; i < n; ++i) {
    Node node;
    node.name = "node-" + std::to_string(i);
    node.labels["topology.kubernetes.io/zone"] = std::string("zone-") + static_cast<char>('a' + i % 3);
    node.allocatable = {{"cpu", 4000}, {"memory", 16 * kGi}, {"pods", 110}};
    nodes.push_back(node);
  }
  Snapshot snap = Snapshot::build(nodes, {});
  Pod pod;
  pod.name = "p";
  pod.scheduler_name = "default-scheduler";
  pod.containers.push_back(Container{});
  pod.containers[0].requests = {{"cpu", 100}};
  const ProfilePlan plan = make_profile_plan(parity_config().profiles[0]);
  intern_pod_for_plan(snap, pod, plan);
  PodQuery q = prepare_pod_query(pod, snap, plan, TieBreak::First, 1);
  auto cpu = make_cpu_backend(2);
  testutil::ReferenceBackend reference;
  std::unique_ptr<Backend> dev;
  if (why_no_backend_under_test().empty()) dev = backend_under_test();
  EvalResult want, got;
  for (uint32_t edge = 1; edge <= 3; ++edge) {
    for (int delta = -1; delta <= 1; ++delta) {
      for (uint32_t start : {0u, 1u, kChunk - 1, n - 1}) {
        EvalRequest req;
        req.num_to_find = edge * kChunk + static_cast<uint32_t>(delta);
        req.start = start;
        req.want_verdicts = true;
        const std::string where = "num_to_find " + std::to_string(req.num_to_find) + ", start " + std::to_string(start);
        reference.evaluate(snap, q, req, want);
        ASSERT_EQ(want.processed, req.num_to_find) << where;
        ASSERT_EQ(want.num_feasible, req.num_to_find) << where;
        cpu->evaluate(snap, q, req, got);
        expect_same(want, got, "cpu, " + where);
        if (dev) {
          dev->evaluate(snap, q, req, got);
          expect_same(want, got, "device, " + where);
        }
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

// One backend instance carried across clusters of the same shape: the device
// mirror must notice that the snapshot was replaced.
TEST(CudaParityReuse, OneBackendFollowsSnapshotsReplacedInPlace) {
  REQUIRE_BACKEND_UNDER_TEST();
  auto cpu = make_cpu_backend();
  auto dev = backend_under_test();
  for (uint64_t round = 0; round < 3; ++round)
    run_backend_parity(*cpu, *dev, ClusterShape{257, 12, 0.05}, 4242 + round);
}

void expect_same_schedule(const std::vector<ScheduleResult>& want, const std::vector<ScheduleResult>& got,
                          const std::string& where) {
  ASSERT_EQ(want.size(), got.size()) << where;
  for (size_t i = 0; i < want.size(); ++i) {
    const std::string at = where + ", pod " + want[i].pod;
    EXPECT_EQ(want[i].node, got[i].node) << at;
    EXPECT_EQ(want[i].node_name, got[i].node_name) << at;
    EXPECT_EQ(want[i].score, got[i].score) << at;
    EXPECT_EQ(want[i].feasible_nodes, got[i].feasible_nodes) << at;
    EXPECT_EQ(want[i].code, got[i].code) << at;
    EXPECT_EQ(want[i].message, got[i].message) << at;
    if (::testing::Test::HasFailure()) return;
  }
}

class CudaEngineParity : public ::testing::TestWithParam<uint32_t> {};

// The engine's whole loop (sampling start index carried between pods, each
// pod assumed before the next) gives the same placements on both backends,
// and so does explain.
TEST_P(CudaEngineParity, ScheduleSequenceAndExplainMatchTheCpuBackend) {
  REQUIRE_BACKEND_UNDER_TEST();
  const uint32_t nodes = GetParam();
  SplitMix64 rng = SplitMix64::derive(parity_seed(), 1000003ull * nodes);
  const uint32_t pending = nodes >= 10000 ? 40 : 120;
  const Cluster cluster = random_cluster(rng, ClusterShape{nodes, pending, 0.05}, scheduler_names());
  for (const TieBreak tie : {TieBreak::Random, TieBreak::First}) {
    // The CPU engine evaluates every pod in full; the engine under test
    // runs with the batch cache (its default): misses on its backend, hits
    // on the host, the same decisions.
    EngineOptions unbatched{"cpu", tie, parity_seed()};
    unbatched.batching = Batching::Off;
    Engine cpu(parity_config(), unbatched);
    Engine dev(parity_config(), EngineOptions{engine_backend_under_test(), tie, parity_seed()});
    cpu.load(cluster);
    dev.load(cluster);
    const std::string where = std::to_string(nodes) + " nodes, tie " + (tie == TieBreak::First ? "First" : "Random");
    const std::vector<ScheduleResult> want = cpu.schedule_all(cluster.pending_pods);
    expect_same_schedule(want, dev.schedule_all(cluster.pending_pods), where);
    EXPECT_STREQ(dev.backend_name(), engine_backend_under_test()) << dev.backend_note();
    if (HasFailure()) return;
    // Windows of pods (Engine::look_ahead): the window's pods evaluated
    // together on the backend under test, then answered by their states.
    EngineOptions windowed{engine_backend_under_test(), tie, parity_seed()};
    windowed.window = 8;
    windowed.batch_states = 2;
    Engine win(parity_config(), windowed);
    win.load(cluster);
    expect_same_schedule(want, win.schedule_all(cluster.pending_pods), where + ", windows of 8");
    if (HasFailure()) return;
    for (size_t i = 0; i < cluster.pending_pods.size() && i < 3; ++i) {
      const Explanation a = cpu.explain(cluster.pending_pods[i]);
      const Explanation b = dev.explain(cluster.pending_pods[i]);
      EXPECT_EQ(a.chosen, b.chosen) << where;
      EXPECT_EQ(a.feasible_nodes, b.feasible_nodes) << where;
      EXPECT_EQ(a.message, b.message) << where;
      ASSERT_EQ(a.nodes.size(), b.nodes.size()) << where;
      for (size_t k = 0; k < a.nodes.size(); ++k) {
        EXPECT_EQ(a.nodes[k].feasible, b.nodes[k].feasible) << where << ", node " << k;
        EXPECT_EQ(a.nodes[k].filter_plugin, b.nodes[k].filter_plugin) << where << ", node " << k;
        EXPECT_EQ(a.nodes[k].filter_reasons, b.nodes[k].filter_reasons) << where << ", node " << k;
        EXPECT_EQ(a.nodes[k].total, b.nodes[k].total) << where << ", node " << k;
        ASSERT_EQ(a.nodes[k].scores.size(), b.nodes[k].scores.size()) << where << ", node " << k;
        for (size_t s = 0; s < a.nodes[k].scores.size(); ++s) {
          EXPECT_EQ(a.nodes[k].scores[s].raw, b.nodes[k].scores[s].raw) << where << ", node " << k;
          EXPECT_EQ(a.nodes[k].scores[s].normalized, b.nodes[k].scores[s].normalized) << where << ", node " << k;
        }
        if (HasFailure()) return;
      }
    }
    // Reloading replaces the snapshot in place; the mirror must follow.
    cpu.load(cluster);
    dev.load(cluster);
    expect_same_schedule(cpu.schedule_all(cluster.pending_pods), dev.schedule_all(cluster.pending_pods),
                         where + ", after reload");
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, CudaEngineParity, ::testing::Values(1u, 33u, 1000u, 10000u),
                         [](const ::testing::TestParamInfo<uint32_t>& info) {
                           return std::to_string(info.param) + "Nodes";
                         });

// ---- tests that run everywhere ------------------------------------------------------

// The harness on the CPU alone: the random clusters are valid inputs, and the
// CPU backend, reused across pods, agrees with a fresh instance per request
// (no state leaks between evaluations, which the parity tests rely on).
// ---- DefaultPreemption's dry run on the device ------------------------------------
//
// The device dry run (one launch over every potential node, dry_run_node
// per thread) against the CPU backend's (the same function, node blocks on
// the host, stopping early), the exact dry run (PreFilter afresh per
// check) and the node-by-node reference (tests/preemption_reference.hpp),
// on random clusters with priorities, PDBs, host ports, taints: the
// candidates of explain, then every decision, pod after pod.

std::map<std::string, std::string> preemption_candidates(const Explanation& ex) {
  std::map<std::string, std::string> out;
  if (!ex.preemption) return out;
  for (const PreemptionCandidate& c : ex.preemption->candidates) {
    std::vector<std::string> names;
    for (const PreemptionVictim& v : c.victims) names.push_back(v.pod.substr(v.pod.find('/') + 1));
    std::sort(names.begin(), names.end());
    std::string k = "pdb=" + std::to_string(c.pdb_violations);
    for (const std::string& n : names) k += " " + n;
    out[c.node] = k;
  }
  return out;
}

// BULKSCORE_PREEMPT_PARITY_ROUNDS=<n> runs the first n rounds only (the
// memcheck step of scripts/gpu-run.sh); the counts' floors then do not apply.
uint32_t preemption_parity_rounds() {
  const char* env = std::getenv("BULKSCORE_PREEMPT_PARITY_ROUNDS");
  return env && *env ? static_cast<uint32_t>(std::strtoul(env, nullptr, 10)) : 10u;
}

TEST(CudaPreemptionParity, DryRunMatchesTheCpuBulkTheExactAndTheReference) {
  REQUIRE_BACKEND_UNDER_TEST();
  const uint64_t seed = parity_seed();
  const uint32_t rounds = preemption_parity_rounds();
  uint64_t preempted = 0, compared = 0;
  for (uint32_t round = 0; round < rounds; ++round) {
    SplitMix64 rng = SplitMix64::derive(seed, 7000 + round);
    // Small clusters for the reference (it rebuilds the cluster per check),
    // then sizes where the CPU's dry run runs in parallel blocks and stops
    // early while the device's covers every node.
    const auto nodes = static_cast<uint32_t>(round < 4 ? 6 + rng.below(25) : 40 + rng.below(round < 8 ? 200 : 1500));
    Cluster cluster = random_preempting_cluster(rng, nodes, 3 + static_cast<uint32_t>(rng.below(4)), 40);
    // Past the reference's rounds, every other round under hard spreading:
    // the device dry run with PreFilter's tables (DryRunBatch::taken).
    if (round >= 4 && round % 2) testutil::add_hard_spreading(cluster);
    const DefaultPreemptionArgs args = round % 3 == 0 ? DefaultPreemptionArgs{100, 0}
                                                      : DefaultPreemptionArgs{static_cast<int32_t>(rng.below(60)),
                                                                              static_cast<int32_t>(rng.below(30))};
    SchedulerConfig config = default_scheduler_config();
    for (ProfileConfig& p : config.profiles) p.default_preemption_args = args;
    const auto make = [&](const char* backend, EngineOptions::PreemptionDryRun mode) {
      EngineOptions o{backend, TieBreak::First, seed + round};
      o.preemption_dry_run = mode;
      auto e = std::make_unique<Engine>(config, o);
      e->load(cluster);
      return e;
    };
    auto dev = make(engine_backend_under_test(), EngineOptions::PreemptionDryRun::Bulk);
    auto cpu = make("cpu", EngineOptions::PreemptionDryRun::Bulk);
    auto exact = make("cpu", EngineOptions::PreemptionDryRun::Exact);
    for (const Pod& p : cluster.pending_pods) {
      const std::string where = "seed " + std::to_string(seed) + " round " + std::to_string(round) + " (" +
                                std::to_string(nodes) + " nodes), pod " + p.name + " (BULKSCORE_PARITY_SEED reruns it)";
      const Explanation a = dev->explain(p), b = cpu->explain(p);
      ASSERT_EQ(preemption_candidates(a), preemption_candidates(b)) << where;
      if (a.preemption && b.preemption) {
        ASSERT_EQ(a.preemption->nominated_node, b.preemption->nominated_node) << where;
        ASSERT_EQ(a.preemption->dry_run_nodes, b.preemption->dry_run_nodes) << where;
      }
      if (round < 4 && a.preemption && a.preemption->not_eligible.empty() && a.preemption->potential_nodes > 0) {
        // The reference on the device engine's current cluster, each node's
        // pods in the snapshot's slot order (the order equal pods meet).
        refpreempt::Input in;
        in.nodes = cluster.nodes;
        for (uint32_t n = 0; n < dev->snapshot().num_nodes(); ++n)
          for (uint32_t id : dev->snapshot().pods_on_node(n)) in.running.push_back(dev->snapshot().pod(id));
        in.pdbs = dev->objects().pdbs;
        in.config = config.profiles[0];
        in.offset = a.preemption->offset;
        const refpreempt::Output want = refpreempt::preempt(in, p);
        std::map<std::string, std::string> expect;
        for (const refpreempt::Candidate& c : want.candidates) {
          std::vector<std::string> names;
          for (const Pod& v : c.victims) names.push_back(v.name);
          std::sort(names.begin(), names.end());
          std::string k = "pdb=" + std::to_string(c.pdb_violations);
          for (const std::string& n : names) k += " " + n;
          expect[c.node] = k;
        }
        ASSERT_EQ(preemption_candidates(a), expect) << where << ": against the reference";
        ASSERT_EQ(a.preemption->nominated_node, want.nominated_node) << where << ": against the reference";
        ++compared;
      }
      const ScheduleResult x = dev->schedule(p), y = cpu->schedule(p), z = exact->schedule(p);
      for (const ScheduleResult* other : {&y, &z}) {
        const std::string against =
            where + (other == &y ? ", against the CPU bulk dry run" : ", against the exact one");
        ASSERT_EQ(x.nominated_node, other->nominated_node) << against;
        ASSERT_EQ(x.victims, other->victims) << against;
        ASSERT_EQ(x.pdb_violations, other->pdb_violations) << against;
        ASSERT_EQ(x.node_name, other->node_name) << against;
        ASSERT_EQ(x.message, other->message) << against;
      }
      preempted += x.nominated_node.empty() ? 0 : 1;
    }
  }
  if (rounds < 10) return;
  EXPECT_GT(preempted, 100u);
  EXPECT_GT(compared, 60u);
}

// A device error with the dry-run kernel queued (BULKSCORE_CUDA_FAULT_AT=
// 2:preempt, read when the backend is made): the engine drops the device
// (its destructor waits for the queued work: run under memcheck by
// gpu-run.sh), warns once and dry-runs on the CPU; every decision as on the
// CPU alone.
TEST(CudaPreemptionParity, AFaultInTheDryRunFallsBackToTheCpuAndDecidesAlike) {
  REQUIRE_BACKEND_UNDER_TEST();
  if (dry_run_on_cpu()) GTEST_SKIP() << "the injection point is the CUDA backend's";
  SplitMix64 rng = SplitMix64::derive(parity_seed(), 7100);
  const Cluster cluster = random_preempting_cluster(rng, 300, 4, 30);
  SchedulerConfig config = default_scheduler_config();
  for (ProfileConfig& p : config.profiles) p.default_preemption_args = {100, 0};
  setenv("BULKSCORE_CUDA_FAULT_AT", "2:preempt", 1);
  Engine dev(config, EngineOptions{"cuda", TieBreak::First, 3});
  unsetenv("BULKSCORE_CUDA_FAULT_AT");
  Engine cpu(config, EngineOptions{"cpu", TieBreak::First, 3});
  dev.load(cluster);
  cpu.load(cluster);
  const std::vector<ScheduleResult> got = dev.schedule_all(cluster.pending_pods);
  const std::vector<ScheduleResult> want = cpu.schedule_all(cluster.pending_pods);
  expect_same_schedule(want, got, "fault at the second dry run");
  uint64_t preempted = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(want[i].nominated_node, got[i].nominated_node) << want[i].pod;
    ASSERT_EQ(want[i].victims, got[i].victims) << want[i].pod;
    ASSERT_EQ(want[i].pdb_violations, got[i].pdb_violations) << want[i].pod;
    preempted += want[i].nominated_node.empty() ? 0 : 1;
  }
  EXPECT_GT(preempted, 2u);
  const std::vector<std::string> warnings = dev.take_warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("injected fault"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("fell back to the CPU backend"), std::string::npos) << warnings[0];
  EXPECT_STREQ(dev.backend_name(), "cpu");
}

TEST(CudaParityHarness, ReusedCpuBackendAgreesWithFreshOnes) {
  class FreshCpu final : public Backend {
   public:
    const char* name() const override { return "fresh-cpu"; }
    void evaluate(const Snapshot& s, PodQuery& q, const EvalRequest& r, EvalResult& out) override {
      make_cpu_backend()->evaluate(s, q, r, out);
    }
  };
  auto reused = make_cpu_backend();
  FreshCpu fresh;
  for (const uint32_t nodes : {0u, 1u, 33u})
    run_backend_parity(*reused, fresh, ClusterShape{nodes, 16, 0.05}, 77 + nodes);
  // The clusters exercise every path the parity tests are meant to cover:
  // one cluster usually does; with another BULKSCORE_PARITY_SEED a rare
  // path (a negative total, say) can take several (up to 16; seeds 1-30
  // pass).
  const auto covered = [](const Coverage& c) {
    return c.scored > 20 && c.lone_feasible + c.none_feasible > 0 && c.cut > 10 && c.assumed > 10 && c.prescored > 10 &&
           c.removed > 0 && c.node_updates > 0 && c.negative_totals > 0 && c.ignored_nodes > 0 && c.ordered_lists > 10 &&
           c.light_forms > 10 && c.light_rows > 0 && c.light_without_row > 0;
  };
  Coverage cov;
  for (uint64_t stream = 477; stream < 477 + 16 && !covered(cov); ++stream)
    cov += run_backend_parity(*reused, fresh, ClusterShape{400, 40, 0.05}, stream);
  EXPECT_GT(cov.scored, 20u) << cov;
  EXPECT_GT(cov.lone_feasible + cov.none_feasible, 0u) << cov;
  EXPECT_GT(cov.cut, 10u) << cov;
  EXPECT_GT(cov.assumed, 10u) << cov;
  EXPECT_GT(cov.prescored, 10u) << cov;
  EXPECT_GT(cov.removed, 0u) << cov;
  EXPECT_GT(cov.node_updates, 0u) << cov;
  EXPECT_GT(cov.negative_totals, 0u) << cov;
  EXPECT_GT(cov.ignored_nodes, 0u) << cov;
  EXPECT_GT(cov.ordered_lists, 10u) << cov;
  EXPECT_GT(cov.light_forms, 10u) << cov;
  EXPECT_GT(cov.light_rows, 0u) << cov;
  EXPECT_GT(cov.light_without_row, 0u) << cov;
}

TEST(CudaBackendAvailability, MakeCudaBackendThrowsTheReasonWhenUnavailable) {
  const std::string why = cuda_unavailable_reason();
  if (why.empty()) {
    EXPECT_STREQ(make_cuda_backend()->name(), "cuda");
    return;
  }
  try {
    make_cuda_backend();
    ADD_FAILURE() << "make_cuda_backend() returned although: " << why;
  } catch (const BackendUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
  }
}

TEST(CudaBackendAvailability, AutoEngineUsesCudaExactlyWhenADeviceAnswers) {
  const std::string why = cuda_unavailable_reason();
  Engine engine(default_scheduler_config(), EngineOptions{"auto", TieBreak::First, 1});
  if (why.empty()) {
    EXPECT_STREQ(engine.backend_name(), "cuda");
  } else {
    EXPECT_STREQ(engine.backend_name(), "cpu");
    EXPECT_NE(engine.backend_note().find(why), std::string::npos) << engine.backend_note();
  }
}

}  // namespace
}  // namespace bulkscore
