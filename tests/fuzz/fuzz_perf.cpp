// The scheduler_perf file reader, the YAML-to-JSON conversion and the Go
// template subset (arithmetic with Go's semantics: no SIGFPE, no overflow).
// The first byte picks the entry point.
#include "bench/perf/perf.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace bulkscore;
  if (size == 0) return 0;
  const std::string text = fuzz::text_of(data + 1, size - 1);
  switch (data[0] % 3) {
    case 0:
      fuzz::expect_only_input_errors([&] { parse_perf_config(text, "fuzz-perf.yaml", "/nonexistent"); });
      break;
    case 1:
      fuzz::expect_only_input_errors([&] { yaml_to_json(text, "fuzz-template.yaml"); });
      break;
    default: {
      PerfValueMap env;
      env["Index"] = PerfValue::of_number(7);
      env["Count"] = PerfValue::of_number(1000);
      env["Name"] = PerfValue::of_string("pod");
      fuzz::expect_only_input_errors([&] { render_perf_template(text, env, "fuzz-template.yaml"); });
    }
  }
  return 0;
}
