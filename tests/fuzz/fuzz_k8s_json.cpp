// The Kubernetes JSON reader: NodeList / PodList / List / single objects,
// and the --objects reader (Services, Namespaces, SharedDeviceGroups...).
#include "host/input/k8s_json.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace bulkscore;
  const std::string text = fuzz::text_of(data, size);
  fuzz::expect_only_input_errors([&] { parse_nodes_json(text, "fuzz-nodes.json"); });
  fuzz::expect_only_input_errors([&] { parse_pods_json(text, "fuzz-pods.json"); });
  fuzz::expect_only_input_errors([&] { parse_objects_json(text, "fuzz-objects.json"); });
  return 0;
}
