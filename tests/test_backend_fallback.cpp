// A device backend that fails mid-run must leave the engine usable: the
// engine falls back to the CPU backend for the rest of the run, with one
// warning and nothing lost. The failures are injected by backends registered
// under test names (and, in one test, under "cuda" itself, to drive `auto`);
// ctest runs every test in a process of its own, so no registration leaks.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/generator/generator.hpp"
#include "host/common.hpp"
#include "host/engine/backend.hpp"
#include "host/engine/device_memory.hpp"
#include "host/engine/engine.hpp"
#include "host/engine/fault_injection.hpp"
#include "host/input/config.hpp"
#include "host/input/k8s_json.hpp"
#include "tests/random_preemption.hpp"

namespace bulkscore {
namespace {

Cluster small_cluster() {
  GeneratorOptions g;
  g.nodes = 300;
  g.running_pods = 400;
  g.pending_pods = 60;
  g.seed = 11;
  const GeneratedCluster c = generate_cluster(g);
  return assemble_cluster(parse_nodes_json(c.nodes_json, "nodes"), parse_pods_json(c.pods_json, "pods"),
                          {"default-scheduler"}, "nodes", "pods");
}

// Delegates to the CPU backend and throws a device error at its `fail_at`-th
// evaluation (and, when `sticky`, at every one after it, as a sticky CUDA
// error would), after having written a partial result, as a failure in the
// middle of a pod would.
class FaultyBackend final : public Backend {
 public:
  FaultyBackend(int fail_at, bool sticky) : fail_at_(fail_at), sticky_(sticky) {}
  const char* name() const override { return "faulty"; }
  void evaluate(const Snapshot& snap, PodQuery& q, const EvalRequest& req, EvalResult& out) override {
    ++calls;
    cpu_->evaluate(snap, q, req, out);
    if (calls == fail_at_ || (sticky_ && calls > fail_at_)) {
      out.chosen = 0;  // a half-written result must not leak out
      throw CudaError("injected fault: an illegal memory access was encountered");
    }
  }
  static inline std::atomic<int> calls{0};

 private:
  int fail_at_;
  bool sticky_;
  std::unique_ptr<Backend> cpu_ = make_cpu_backend(1);
};

std::vector<ScheduleResult> schedule_with(const std::string& backend, std::vector<std::string>* warnings = nullptr,
                                          std::string* final_backend = nullptr) {
  Cluster cluster = small_cluster();
  const std::vector<Pod> pending = cluster.pending_pods;
  EngineOptions opts;
  opts.backend = backend;
  opts.tie_break = TieBreak::Random;
  opts.seed = 5;
  Engine engine(default_scheduler_config(), opts);
  engine.load(std::move(cluster));
  std::vector<ScheduleResult> out = engine.schedule_all(pending);
  if (warnings) *warnings = engine.take_warnings();
  if (final_backend) *final_backend = engine.backend_name();
  return out;
}

void expect_same_results(const std::vector<ScheduleResult>& want, const std::vector<ScheduleResult>& got) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(want[i].node_name, got[i].node_name) << want[i].pod;
    EXPECT_EQ(want[i].score, got[i].score) << want[i].pod;
    EXPECT_EQ(want[i].message, got[i].message) << want[i].pod;
  }
}

void register_faulty(int fail_at, bool sticky) {
  FaultyBackend::calls = 0;
  register_backend(BackendFactory{"faulty", [] { return std::string(); },
                                  [fail_at, sticky](const BackendOptions&) {
                                    return std::unique_ptr<Backend>(new FaultyBackend(fail_at, sticky));
                                  }});
}

TEST(BackendFallback, AFaultMidRunFallsBackToTheCpuWithOneWarningAndEqualResults) {
  const std::vector<ScheduleResult> want = schedule_with("cpu");
  for (const int fail_at : {1, 17}) {
    for (const bool sticky : {false, true}) {
      register_faulty(fail_at, sticky);
      std::vector<std::string> warnings;
      std::string final_backend;
      const std::vector<ScheduleResult> got = schedule_with("faulty", &warnings, &final_backend);
      expect_same_results(want, got);
      ASSERT_EQ(warnings.size(), 1u) << "fail_at " << fail_at;
      EXPECT_NE(warnings[0].find("injected fault"), std::string::npos) << warnings[0];
      EXPECT_NE(warnings[0].find("fell back to the CPU backend"), std::string::npos) << warnings[0];
      EXPECT_EQ(final_backend, "cpu");
      // The failed backend is never called again.
      EXPECT_EQ(FaultyBackend::calls.load(), fail_at);
    }
  }
}

// `auto` with a device that answers but a backend that cannot start (an
// out-of-memory in its constructor): the CPU, with the reason.
TEST(BackendFallback, AutoUsesTheCpuWhenTheDeviceBackendFailsToStart) {
  register_backend(BackendFactory{"cuda", [] { return std::string(); },
                                  [](const BackendOptions&) -> std::unique_ptr<Backend> {
                                    throw DeviceOutOfMemory("injected: cudaMalloc failed: out of memory");
                                  }});
  const std::vector<ScheduleResult> want = schedule_with("cpu");
  std::vector<std::string> warnings;
  std::string final_backend;
  const std::vector<ScheduleResult> got = schedule_with("auto", &warnings, &final_backend);
  expect_same_results(want, got);
  EXPECT_EQ(final_backend, "cpu");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("failed to start"), std::string::npos) << warnings[0];
}

// ---- the injection points of the CUDA backend, on a fake device -------------------
//
// The CUDA backend fails, under BULKSCORE_CUDA_FAULT_AT=N:POINT, at the
// N-th arrival at POINT (host/engine/fault_injection.hpp); scripts/gpu-run.sh
// runs each point on a GPU. This fake device arrives at the same points
// under the same conditions (a feasible-set PreScore that scores, a real tie
// under the random tie-break, lists asked for, a state's score lists) and
// fails there as the device would, after having written part of a result;
// every run must decide byte for byte as the CPU backend alone.

// Nodes, running pods and the objects that give ReplicaSet pods
// system-default spreading (so a feasible-set PreScore).
Cluster spread_cluster() {
  GeneratorOptions g;
  g.nodes = 240;
  g.running_pods = 300;
  g.pending_pods = 90;
  g.seed = 23;
  const GeneratedCluster c = generate_cluster(g);
  Cluster cluster = assemble_cluster(parse_nodes_json(c.nodes_json, "nodes"), parse_pods_json(c.pods_json, "pods"),
                                     {"default-scheduler"}, "nodes", "pods");
  cluster.objects = parse_objects_json(c.objects_json, "objects");
  return cluster;
}

struct FakeDeviceBehaviour {
  FaultInjection fault;          // one failure at the N-th arrival at a point
  bool lists_never_fit = false;  // every request with lists: out of memory (the pass alone fits)
  bool pass_never_fits = false;  // every request: out of memory
  bool reverse_lists = false;    // the scored lists in descending node order (BatchStateOrder)
};

class FakeDevice final : public Backend {
 public:
  explicit FakeDevice(FakeDeviceBehaviour b) : b_(b) {}
  const char* name() const override { return "fake-device"; }
  void evaluate(const Snapshot& snap, PodQuery& q, const EvalRequest& req, EvalResult& out) override {
    ++calls;
    const bool lists = req.want_scores || req.want_verdicts || req.want_sorted;
    if (b_.pass_never_fits) throw DeviceOutOfMemory("fake device: cudaMalloc failed: out of memory (the pass)");
    if (lists && b_.lists_never_fit) throw DeviceOutOfMemory("fake device: cudaMalloc failed: out of memory (lists)");
    if (req.want_scores && arrive(FaultPoint::kState)) throw DeviceOutOfMemory(b_.fault.message("fake device"));
    cpu_->evaluate(snap, q, req, out);
    if (arrive(FaultPoint::kFilter)) fail(out);
    if (q.header.prescore_feasible && out.scored && arrive(FaultPoint::kPreScore)) fail(out);
    if (q.header.tie_break == TieBreak::Random && out.scored && tied(snap, q, req) > 1 && arrive(FaultPoint::kTie))
      fail(out);
    if ((req.want_verdicts || ((req.want_scores || req.want_sorted) && out.num_feasible > 0)) &&
        arrive(FaultPoint::kLists))
      fail(out);
    if (b_.reverse_lists) reverse(out);
  }
  // The CUDA backend's one-pass dry run, done by the host's shared function
  // over the whole batch, failing after a partial result at `preempt`.
  bool batched_dry_run() const override { return true; }
  void dry_run_preemption(const Snapshot& snap, const PodQuery& q, const DryRunBatch& batch,
                          DryRunOutput& out) override {
    ++dry_runs;
    cpu_->dry_run_preemption(snap, q, batch, out);
    if (arrive(FaultPoint::kPreempt)) {
      if (!out.removed.empty()) out.removed[0] ^= 1;  // a half-written result must not leak out
      throw CudaError(b_.fault.message("fake device"));
    }
  }
  static inline std::atomic<int> calls{0};
  static inline std::atomic<int> dry_runs{0};
  static inline std::atomic<int> fired{0};
  static inline std::atomic<int> ties{0};  // evaluations with a real tie under the random tie-break

 private:
  bool arrive(FaultPoint p) {
    const bool now = b_.fault.arrive(p);
    fired += now ? 1 : 0;
    return now;
  }
  [[noreturn]] void fail(EvalResult& out) const {
    out.chosen = 0;  // a half-written result must not leak out
    out.scored_nodes.assign(3, 0);
    throw CudaError(b_.fault.message("fake device"));
  }
  // Nodes at the best total (the CUDA backend's num_tied).
  uint32_t tied(const Snapshot& snap, PodQuery& q, const EvalRequest& req) {
    EvalRequest all = req;
    all.want_scores = true;
    EvalResult r;
    cpu_->evaluate(snap, q, all, r);
    const auto n = static_cast<uint32_t>(std::count(r.totals.begin(), r.totals.end(), r.chosen_total));
    ties += n > 1 ? 1 : 0;
    return n;
  }
  // The scored lists in descending node order, rows permuted alike.
  static void reverse(EvalResult& out) {
    const size_t f = out.scored_nodes.size();
    if (f < 2 || out.totals.size() != f) return;
    std::reverse(out.scored_nodes.begin(), out.scored_nodes.end());
    std::reverse(out.totals.begin(), out.totals.end());
    for (std::vector<int64_t>* rows : {&out.raw_scores, &out.normalized_scores})
      for (size_t at = 0; at < rows->size(); at += f)
        std::reverse(rows->begin() + static_cast<std::ptrdiff_t>(at), rows->begin() + static_cast<std::ptrdiff_t>(at + f));
  }

  FakeDeviceBehaviour b_;
  std::unique_ptr<Backend> cpu_ = make_cpu_backend(1);
};

void register_fake_device(const FakeDeviceBehaviour& b) {
  FakeDevice::calls = 0;
  FakeDevice::dry_runs = 0;
  FakeDevice::fired = 0;
  FakeDevice::ties = 0;
  register_backend(BackendFactory{"fake-device", [] { return std::string(); },
                                  [b](const BackendOptions&) { return std::unique_ptr<Backend>(new FakeDevice(b)); }});
}

struct SpreadRun {
  std::vector<ScheduleResult> results;
  std::vector<std::string> warnings;
  std::string backend;
  BatchCounters counters;
};

SpreadRun run_spread(const std::string& backend, TieBreak tie, Batching batching) {
  Cluster cluster = spread_cluster();
  const std::vector<Pod> pending = cluster.pending_pods;
  EngineOptions opts;
  opts.backend = backend;
  opts.tie_break = tie;
  opts.seed = 3;
  opts.batching = batching;
  Engine engine(default_scheduler_config(), opts);
  engine.load(std::move(cluster));
  SpreadRun r;
  r.results = engine.schedule_all(pending);
  r.warnings = engine.take_warnings();
  r.backend = engine.backend_name();
  r.counters = engine.batch_counters();
  return r;
}

// Every field the output carries.
void expect_same_decisions(const std::vector<ScheduleResult>& want, const std::vector<ScheduleResult>& got,
                           const std::string& where) {
  ASSERT_EQ(want.size(), got.size()) << where;
  for (size_t i = 0; i < want.size(); ++i) {
    const ScheduleResult& a = want[i];
    const ScheduleResult& b = got[i];
    if (a.node_name != b.node_name || a.score != b.score || a.feasible_nodes != b.feasible_nodes ||
        a.code != b.code || a.message != b.message || a.devices != b.devices) {
      ADD_FAILURE() << where << ": pod " << i << " " << a.pod << ": cpu " << a.node_name << " (score " << a.score
                    << ", feasible " << a.feasible_nodes << "), under test " << b.node_name << " (score " << b.score
                    << ", feasible " << b.feasible_nodes << ") " << b.message;
      return;
    }
  }
}

TEST(FaultInjection, ParsesPointsAndFailsOnceAtTheNthArrival) {
  EXPECT_EQ(FaultInjection::parse(nullptr).at, 0u);
  EXPECT_EQ(FaultInjection::parse("").at, 0u);
  const FaultInjection plain = FaultInjection::parse("3");
  EXPECT_EQ(plain.at, 3u);
  EXPECT_EQ(plain.point, FaultPoint::kFilter);
  for (size_t i = 0; i < static_cast<size_t>(FaultPoint::kCount); ++i) {
    const auto p = static_cast<FaultPoint>(i);
    const FaultInjection f = FaultInjection::parse(("7:" + std::string(fault_point_name(p))).c_str());
    EXPECT_EQ(f.point, p);
    EXPECT_EQ(f.at, 7u);
    EXPECT_NE(f.message("x").find(std::string("=7:") + fault_point_name(p)), std::string::npos) << f.message("x");
  }
  for (const char* bad : {"x", "3x", "-1", ":tie", "3:", "3:nowhere", "3:tie:2"})
    EXPECT_THROW(FaultInjection::parse(bad), InputError) << bad;

  FaultInjection f = FaultInjection::parse("2:tie");
  EXPECT_FALSE(f.arrive(FaultPoint::kFilter));
  EXPECT_FALSE(f.arrive(FaultPoint::kTie));
  EXPECT_FALSE(f.arrive(FaultPoint::kLists));
  EXPECT_TRUE(f.arrive(FaultPoint::kTie));
  EXPECT_FALSE(f.arrive(FaultPoint::kTie));  // once
  FaultInjection never = FaultInjection::parse("0:filter");
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(never.arrive(FaultPoint::kFilter));
}

// Each point, with both tie-breaks, batched and not: the same bytes as the
// CPU backend alone; a device error sends the rest of the run to the CPU
// with one warning; an out-of-memory for a state's score lists keeps the
// device (the miss is not kept as a state).
TEST(BackendFallback, EveryInjectionPointDecidesAsTheCpuAlone) {
  for (const TieBreak tie : {TieBreak::First, TieBreak::Random})
    for (const Batching batching : {Batching::Exact, Batching::Off}) {
      const SpreadRun want = run_spread("cpu", tie, batching);
      for (size_t i = 0; i < static_cast<size_t>(FaultPoint::kCount); ++i) {
        const auto point = static_cast<FaultPoint>(i);
        if (point == FaultPoint::kPreempt) continue;  // no pod preempts here: the test below
        for (const uint64_t at : {1u, 4u}) {
          const std::string where = std::string("point ") + fault_point_name(point) + ", at " + std::to_string(at) +
                                    ", tie-break " + (tie == TieBreak::First ? "first" : "random") + ", batching " +
                                    batching_name(batching);
          FakeDeviceBehaviour b;
          b.fault = FaultInjection::parse((std::to_string(at) + ":" + fault_point_name(point)).c_str());
          register_fake_device(b);
          const SpreadRun got = run_spread("fake-device", tie, batching);
          expect_same_decisions(want.results, got.results, where);
          // Where the point is reached: every point but a tie under
          // --tie-break first (no draw), and a state's lists only when a
          // miss is kept (--batching exact) or lists are asked for.
          const bool reachable = !(point == FaultPoint::kTie && tie == TieBreak::First) &&
                                 !((point == FaultPoint::kState || point == FaultPoint::kLists) &&
                                   batching == Batching::Off);
          if (!reachable) {
            EXPECT_EQ(FakeDevice::fired.load(), 0) << where;
            EXPECT_TRUE(got.warnings.empty()) << where;
            EXPECT_EQ(got.backend, "fake-device") << where;
            continue;
          }
          ASSERT_EQ(FakeDevice::fired.load(), 1) << where << ": the workload never reached the point";
          ASSERT_EQ(got.warnings.size(), 1u) << where;
          EXPECT_NE(got.warnings[0].find("injected fault"), std::string::npos) << got.warnings[0];
          if (point == FaultPoint::kState) {
            EXPECT_EQ(got.backend, "fake-device") << where;
            EXPECT_NE(got.warnings[0].find("keeps scheduling"), std::string::npos) << got.warnings[0];
          } else {
            EXPECT_EQ(got.backend, "cpu") << where;
            EXPECT_NE(got.warnings[0].find("fell back to the CPU backend"), std::string::npos) << got.warnings[0];
          }
        }
      }
    }
}

// ---- DefaultPreemption's one-pass dry run, on the fake device ----------------------
//
// A backend with batched_dry_run (the CUDA backend) gets every potential
// node of a preempting pod at once; the engine keeps the outcomes up to
// where its sequential rule stops. On the fake device (the host's shared
// function over the whole batch) every decision must be the CPU backend's,
// whose engine dry-runs in blocks and stops early; a fault at `preempt`
// sends the run to the CPU with one warning and nothing lost.

struct PreemptRun {
  std::vector<ScheduleResult> results;
  std::vector<std::string> warnings;
  std::string backend;
};

// With `topology`, the pods run PodTopologySpread's Filter too (hard
// spreading over zone and hostname of an app half the running pods carry),
// so the dry run carries what each victim takes from its tables.
PreemptRun run_preempting(const std::string& backend, uint32_t round, bool topology = false) {
  SplitMix64 rng = SplitMix64::derive(29, round);
  const auto nodes = static_cast<uint32_t>(30 + rng.below(round < 4 ? 90 : 400));
  Cluster cluster = testutil::random_preempting_cluster(rng, nodes, 4, 30);
  if (topology) testutil::add_hard_spreading(cluster);
  const std::vector<Pod> pending = cluster.pending_pods;
  SchedulerConfig config = default_scheduler_config();
  for (ProfileConfig& p : config.profiles)
    p.default_preemption_args = round % 2 ? DefaultPreemptionArgs{100, 0} : DefaultPreemptionArgs{10, 5};
  EngineOptions opts;
  opts.backend = backend;
  opts.tie_break = TieBreak::First;
  opts.seed = 7 + round;
  Engine engine(config, opts);
  engine.load(std::move(cluster));
  PreemptRun r;
  r.results = engine.schedule_all(pending);
  r.warnings = engine.take_warnings();
  r.backend = engine.backend_name();
  return r;
}

void expect_same_preemptions(const PreemptRun& want, const PreemptRun& got, const std::string& where) {
  expect_same_decisions(want.results, got.results, where);
  for (size_t i = 0; i < want.results.size(); ++i) {
    const ScheduleResult& a = want.results[i];
    const ScheduleResult& b = got.results[i];
    ASSERT_EQ(a.nominated_node, b.nominated_node) << where << ": pod " << a.pod;
    ASSERT_EQ(a.victims, b.victims) << where << ": pod " << a.pod;
    ASSERT_EQ(a.pdb_violations, b.pdb_violations) << where << ": pod " << a.pod;
  }
}

TEST(BackendFallback, OnePassPreemptionDryRunDecidesAsTheCpuAndFallsBackOnAFault) {
  uint64_t preempted = 0;
  for (uint32_t round = 0; round < 8; ++round) {
    const PreemptRun want = run_preempting("cpu", round);
    for (const ScheduleResult& r : want.results) preempted += r.nominated_node.empty() ? 0 : 1;
    const std::string where = "round " + std::to_string(round);
    register_fake_device(FakeDeviceBehaviour{});
    const PreemptRun plain = run_preempting("fake-device", round);
    expect_same_preemptions(want, plain, where + ", no fault");
    EXPECT_GT(FakeDevice::dry_runs.load(), 0) << where << ": the one-pass dry run never ran";
    EXPECT_TRUE(plain.warnings.empty()) << where;
    EXPECT_EQ(plain.backend, "fake-device") << where;
    for (const uint64_t at : {1u, 3u}) {
      FakeDeviceBehaviour b;
      b.fault = FaultInjection::parse((std::to_string(at) + ":preempt").c_str());
      register_fake_device(b);
      const PreemptRun got = run_preempting("fake-device", round);
      const std::string here = where + ", fault at " + std::to_string(at);
      expect_same_preemptions(want, got, here);
      ASSERT_EQ(FakeDevice::fired.load(), 1) << here << ": the workload never reached the point";
      ASSERT_EQ(got.warnings.size(), 1u) << here;
      EXPECT_NE(got.warnings[0].find("injected fault"), std::string::npos) << got.warnings[0];
      EXPECT_NE(got.warnings[0].find("fell back to the CPU backend"), std::string::npos) << got.warnings[0];
      EXPECT_EQ(got.backend, "cpu") << here;
    }
  }
  EXPECT_GT(preempted, 80u);
}

// The one-pass dry run with PreFilter's tables (DryRunBatch::taken): pods
// under hard zone and hostname spreading decide as on the CPU backend's
// blocks.
TEST(BackendFallback, OnePassPreemptionDryRunCarriesTheTablesRemovals) {
  uint64_t preempted = 0;
  for (uint32_t round = 0; round < 8; ++round) {
    const PreemptRun want = run_preempting("cpu", round, true);
    for (const ScheduleResult& r : want.results) preempted += r.nominated_node.empty() ? 0 : 1;
    register_fake_device(FakeDeviceBehaviour{});
    const PreemptRun got = run_preempting("fake-device", round, true);
    expect_same_preemptions(want, got, "round " + std::to_string(round) + ", spreading");
    EXPECT_GT(FakeDevice::dry_runs.load(), 0) << "round " << round << ": the one-pass dry run never ran";
    EXPECT_TRUE(got.warnings.empty());
  }
  EXPECT_GT(preempted, 20u);
}

// The batch cache's score lists never fit on the device, but the pass does:
// the device keeps scheduling (no state is kept: every pod a full pass),
// decisions as the CPU's, one warning.
TEST(BackendFallback, OptionalListsThatDoNotFitKeepTheDevice) {
  for (const TieBreak tie : {TieBreak::First, TieBreak::Random}) {
    const SpreadRun want = run_spread("cpu", tie, Batching::Exact);
    EXPECT_GT(want.counters.hint_used, 0u);
    FakeDeviceBehaviour b;
    b.lists_never_fit = true;
    register_fake_device(b);
    const SpreadRun got = run_spread("fake-device", tie, Batching::Exact);
    expect_same_decisions(want.results, got.results, "lists never fit");
    EXPECT_EQ(got.backend, "fake-device");
    ASSERT_EQ(got.warnings.size(), 1u);
    EXPECT_NE(got.warnings[0].find("keeps scheduling"), std::string::npos) << got.warnings[0];
    EXPECT_EQ(got.counters.hint_used, 0u);  // no state could be kept
    EXPECT_GE(FakeDevice::calls.load(), static_cast<int>(got.results.size()));
  }
}

// explain needs its lists: without room for them on the device they come
// from the CPU backend for that call; the device stays for what follows.
TEST(BackendFallback, ExplainGetsItsListsFromTheCpuWhenTheDeviceHasNoRoom) {
  const auto explain = [](const std::string& backend, std::string* final_backend) {
    Cluster cluster = spread_cluster();
    const std::vector<Pod> pending = cluster.pending_pods;
    EngineOptions opts;
    opts.backend = backend;
    opts.tie_break = TieBreak::Random;
    opts.seed = 3;
    opts.batching = Batching::Off;  // explain's "batch" would tell the states the lists could not make
    Engine engine(default_scheduler_config(), opts);
    engine.load(std::move(cluster));
    for (size_t i = 0; i < 10; ++i) engine.schedule(pending[i]);
    std::vector<Explanation> out;
    for (size_t i = 10; i < 14; ++i) out.push_back(engine.explain(pending[i]));
    *final_backend = engine.backend_name();
    return out;
  };
  std::string cpu_backend, fake_backend;
  const std::vector<Explanation> want = explain("cpu", &cpu_backend);
  FakeDeviceBehaviour b;
  b.lists_never_fit = true;
  register_fake_device(b);
  const std::vector<Explanation> got = explain("fake-device", &fake_backend);
  EXPECT_EQ(fake_backend, "fake-device");
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(want[i].chosen, got[i].chosen) << i;
    EXPECT_EQ(want[i].feasible_nodes, got[i].feasible_nodes) << i;
    EXPECT_EQ(want[i].message, got[i].message) << i;
    EXPECT_EQ(want[i].batch, got[i].batch) << i;
    ASSERT_EQ(want[i].nodes.size(), got[i].nodes.size()) << i;
    for (size_t n = 0; n < want[i].nodes.size(); ++n) {
      const NodeExplanation& a = want[i].nodes[n];
      const NodeExplanation& c = got[i].nodes[n];
      ASSERT_EQ(a.feasible, c.feasible) << i << " " << a.name;
      ASSERT_EQ(a.filter_plugin, c.filter_plugin) << i << " " << a.name;
      ASSERT_EQ(a.filter_reasons, c.filter_reasons) << i << " " << a.name;
      ASSERT_EQ(a.total, c.total) << i << " " << a.name;
      ASSERT_EQ(a.scores.size(), c.scores.size()) << i << " " << a.name;
      for (size_t k = 0; k < a.scores.size(); ++k) {
        EXPECT_EQ(a.scores[k].raw, c.scores[k].raw) << i << " " << a.name << " " << a.scores[k].plugin;
        EXPECT_EQ(a.scores[k].normalized, c.scores[k].normalized) << i << " " << a.name << " " << a.scores[k].plugin;
      }
    }
  }
}

// Out of memory even for the pass alone: the CPU for the rest of the run.
TEST(BackendFallback, APassThatCannotFitFallsBackToTheCpu) {
  const SpreadRun want = run_spread("cpu", TieBreak::Random, Batching::Exact);
  FakeDeviceBehaviour b;
  b.pass_never_fits = true;
  register_fake_device(b);
  const SpreadRun got = run_spread("fake-device", TieBreak::Random, Batching::Exact);
  expect_same_decisions(want.results, got.results, "pass never fits");
  EXPECT_EQ(got.backend, "cpu");
  ASSERT_EQ(got.warnings.size(), 1u);
  EXPECT_NE(got.warnings[0].find("fell back to the CPU backend"), std::string::npos) << got.warnings[0];
  EXPECT_LE(FakeDevice::calls.load(), 2);  // the request, and the pass without its lists
}

// ---- a backend's scored lists and the batch cache's random tie-break --------------

// BatchCache::best_position draws the random tie-break's rank walking its
// positions as if they were in node order. A full evaluation whose scored
// list does not ascend by node index is therefore not kept as a state: the
// decisions stay those of the CPU backend alone (without the check, this
// fake's reversed lists put hits on other tied nodes), and no pod hits.
TEST(BatchStateOrder, ScoredListsOutOfNodeOrderAreNotKept) {
  const SpreadRun want = run_spread("cpu", TieBreak::Random, Batching::Off);
  for (const bool reversed : {false, true}) {
    FakeDeviceBehaviour b;
    b.reverse_lists = reversed;
    register_fake_device(b);
    const SpreadRun got = run_spread("fake-device", TieBreak::Random, Batching::Exact);
    expect_same_decisions(want.results, got.results, reversed ? "reversed lists" : "lists in node order");
    if (reversed) {
      EXPECT_EQ(got.counters.hint_used, 0u);
    } else {
      EXPECT_GT(got.counters.hint_used, 10u);  // the control: states are kept and hit
      EXPECT_GT(got.counters.tied_nodes, 0u);  // and ties were drawn among on hits
    }
  }
}

// ---- the device memory policy, on a fake allocator --------------------------------

// A device with a byte budget.
class BudgetAllocator final : public DeviceAllocator {
 public:
  explicit BudgetAllocator(size_t budget) : budget_(budget) {}
  void* allocate(size_t bytes) override {
    ++asked;
    if (bytes > budget_ - used_) return nullptr;
    used_ += bytes;
    void* p = ::operator new(bytes);
    sizes_[p] = bytes;
    return p;
  }
  void deallocate(void* p) noexcept override {
    used_ -= sizes_[p];
    sizes_.erase(p);
    ::operator delete(p);
  }
  const char* name() const override { return "fake device: cudaMalloc"; }
  size_t used() const { return used_; }
  int asked = 0;

 private:
  size_t budget_;
  size_t used_ = 0;
  std::map<void*, size_t> sizes_;
};

TEST(DeviceMemory, GrowthSlackIsDroppedWhenOnlyTheExactSizeFits) {
  BudgetAllocator dev(650);
  DeviceMemoryPool pool(dev, 1);
  GrowingBuffer a, other;
  pool.reserve(other, 100);
  pool.reserve(a, 400);
  EXPECT_EQ(a.capacity(), 400u);
  pool.reserve(a, 300);  // fits: nothing allocated
  EXPECT_EQ(dev.asked, 2);
  pool.reserve(a, 450);  // half again would be 600; 550 are free
  EXPECT_EQ(a.capacity(), 450u);
  EXPECT_EQ(pool.stats().slack_dropped, 1u);
  EXPECT_EQ(dev.used(), 550u);
  pool.reserve(a, 500, DeviceMemoryPool::Growth::kExact);
  EXPECT_EQ(a.capacity(), 500u);
}

TEST(DeviceMemory, IdleScratchIsReleasedBeforeGivingUpAndBuffersInUseNeverAre) {
  BudgetAllocator dev(1000);
  DeviceMemoryPool pool(dev, 1);
  GrowingBuffer lists, pass, column;  // column: not scratch (a mirror column)
  pool.add_scratch(lists);
  pool.add_scratch(pass);
  pool.begin_call();
  pool.reserve(lists, 500);
  pool.reserve(column, 200);
  // The next call does not use the lists: they make room for its pass.
  pool.begin_call();
  pool.reserve(pass, 600);
  EXPECT_EQ(pass.capacity(), 600u);
  EXPECT_EQ(lists.capacity(), 0u);
  EXPECT_EQ(column.capacity(), 200u);
  EXPECT_EQ(pool.stats().idle_released, 1u);
  // A call that uses both: nothing of this call's is released, so out of
  // memory, and the buffer that could not grow holds nothing.
  pool.begin_call();
  pool.reserve(pass, 600);
  try {
    pool.reserve(lists, 500);
    ADD_FAILURE() << "no out-of-memory";
  } catch (const DeviceOutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find("fake device: cudaMalloc of 500 bytes failed"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(lists.capacity(), 0u);
  EXPECT_EQ(lists.get(), nullptr);
  EXPECT_EQ(pass.capacity(), 600u);
  EXPECT_EQ(column.capacity(), 200u);
  EXPECT_EQ(pool.stats().out_of_memory, 1u);
  // Without the lists the pass goes on; the column is never released.
  pool.begin_call();
  pool.reserve(pass, 700, DeviceMemoryPool::Growth::kExact);
  EXPECT_THROW(pool.reserve(lists, 300), DeviceOutOfMemory);
  EXPECT_EQ(column.capacity(), 200u);
  EXPECT_EQ(dev.used(), 900u);
}

}  // namespace
}  // namespace bulkscore
