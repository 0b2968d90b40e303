// A device backend that fails mid-run must leave the engine usable: the
// engine falls back to the CPU backend for the rest of the run, with one
// warning and nothing lost. The failures are injected by backends registered
// under test names (and, in one test, under "cuda" itself, to drive `auto`);
// ctest runs every test in a process of its own, so no registration leaks.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "bench/generator/generator.hpp"
#include "host/common.hpp"
#include "host/engine/backend.hpp"
#include "host/engine/engine.hpp"
#include "host/input/config.hpp"
#include "host/input/k8s_json.hpp"

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

}  // namespace
}  // namespace bulkscore
