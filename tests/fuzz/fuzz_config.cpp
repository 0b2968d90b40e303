// The KubeSchedulerConfiguration reader, then the profile plans the engine
// builds from what it accepted.
#include "host/engine/pod_query.hpp"
#include "host/input/config.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace bulkscore;
  const std::string text = fuzz::text_of(data, size);
  fuzz::expect_only_input_errors([&] {
    const SchedulerConfig config = parse_scheduler_config(text, "fuzz-config.yaml");
    for (const auto& profile : config.profiles) make_profile_plan(profile);
  });
  return 0;
}
