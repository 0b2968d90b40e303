// The backend registry: the engine picks backends by name, the core never
// calls into the CUDA library, and "auto" falls back to the CPU with a note.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "host/common.hpp"
#include "host/engine/backend.hpp"
#include "host/engine/engine.hpp"

namespace bulkscore {
namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(BackendRegistry, CpuIsAlwaysThereAndFirst) {
  const std::vector<std::string> names = compiled_backends();
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.front(), "cpu");
  EXPECT_TRUE(backend_registered("cpu"));
  EXPECT_EQ(backend_unavailable_reason("cpu"), "");
  EXPECT_STREQ(make_backend("cpu")->name(), "cpu");
}

// compiled_backends() reports what the build linked: "cuda" exactly when the
// test links bulkscore_cuda, whose registrar ran before main.
TEST(BackendRegistry, CudaIsRegisteredExactlyInCudaBuilds) {
#ifdef BULKSCORE_WITH_CUDA
  EXPECT_TRUE(contains(compiled_backends(), "cuda"));
  EXPECT_TRUE(backend_registered("cuda"));
#else
  EXPECT_FALSE(contains(compiled_backends(), "cuda"));
  EXPECT_FALSE(backend_registered("cuda"));
  EXPECT_NE(cuda_unavailable_reason().find("no CUDA backend"), std::string::npos) << cuda_unavailable_reason();
  EXPECT_THROW(make_cuda_backend(), BackendUnavailable);
#endif
}

TEST(BackendRegistry, UnknownNameIsUnavailable) {
  EXPECT_FALSE(backend_registered("tpu"));
  EXPECT_NE(backend_unavailable_reason("tpu"), "");
  try {
    make_backend("tpu");
    ADD_FAILURE() << "make_backend(\"tpu\") returned";
  } catch (const BackendUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("tpu"), std::string::npos) << e.what();
  }
}

// A backend that delegates to the CPU one and counts how often it was made.
std::atomic<int> g_made{0};

class CountingBackend : public Backend {
 public:
  const char* name() const override { return "counting"; }
  void evaluate(const Snapshot& snap, PodQuery& q, const EvalRequest& req, EvalResult& out) override {
    cpu_->evaluate(snap, q, req, out);
  }

 private:
  std::unique_ptr<Backend> cpu_ = make_cpu_backend(1);
};

TEST(BackendRegistry, EngineChoosesARegisteredBackendByName) {
  register_backend(BackendFactory{"counting", [] { return std::string(); },
                                  [](const BackendOptions&) {
                                    ++g_made;
                                    return std::unique_ptr<Backend>(new CountingBackend);
                                  }});
  EXPECT_TRUE(contains(compiled_backends(), "counting"));
  EngineOptions opts;
  opts.backend = "counting";
  const int before = g_made;
  Engine engine(default_scheduler_config(), opts);
  EXPECT_STREQ(engine.backend_name(), "counting");
  EXPECT_EQ(g_made, before + 1);
}

TEST(BackendRegistry, ReRegisteringReplacesInPlace) {
  register_backend(BackendFactory{"twice", [] { return std::string("first"); },
                                  [](const BackendOptions&) { return make_cpu_backend(); }});
  register_backend(BackendFactory{"twice", [] { return std::string("second"); },
                                  [](const BackendOptions&) { return make_cpu_backend(); }});
  const std::vector<std::string> names = compiled_backends();
  EXPECT_EQ(std::count(names.begin(), names.end(), "twice"), 1);
  EXPECT_EQ(backend_unavailable_reason("twice"), "second");
}

TEST(BackendRegistry, AutoUsesCudaOnlyWhenAvailableElseCpuWithTheReason) {
  EngineOptions opts;  // backend "auto"
  Engine engine(default_scheduler_config(), opts);
  const std::string why = cuda_unavailable_reason();
  if (why.empty()) {
    EXPECT_STREQ(engine.backend_name(), "cuda");
  } else {
    EXPECT_STREQ(engine.backend_name(), "cpu");
    EXPECT_NE(engine.backend_note().find(why), std::string::npos) << engine.backend_note();
  }
}

TEST(BackendRegistry, UnknownEngineBackendIsBadInputListingTheKnownOnes) {
  EngineOptions opts;
  opts.backend = "gpu";
  try {
    Engine engine(default_scheduler_config(), opts);
    ADD_FAILURE() << "Engine accepted backend \"gpu\"";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("auto, cpu"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace bulkscore
