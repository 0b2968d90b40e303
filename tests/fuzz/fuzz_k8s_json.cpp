// The Kubernetes JSON reader: NodeList / PodList / List / single objects,
// and the --objects reader (Namespaces, Services, ReplicationControllers,
// ReplicaSets, StatefulSets, SharedDeviceGroups; typed lists and single
// objects). An input with a line "@@" is also read as two --objects files
// into one set, as `--objects a --objects b` reads them (duplicates across
// files).
#include "host/input/k8s_json.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace bulkscore;
  const std::string text = fuzz::text_of(data, size);
  fuzz::expect_only_input_errors([&] { parse_nodes_json(text, "fuzz-nodes.json"); });
  fuzz::expect_only_input_errors([&] { parse_pods_json(text, "fuzz-pods.json"); });
  fuzz::expect_only_input_errors([&] { parse_objects_json(text, "fuzz-objects.json"); });
  const size_t sep = text.find("\n@@\n");
  if (sep != std::string::npos) {
    fuzz::expect_only_input_errors([&] {
      ClusterObjects out;
      parse_objects_json(text.substr(0, sep), "fuzz-objects-1.json", out);
      parse_objects_json(text.substr(sep + 4), "fuzz-objects-2.json", out);
    });
  }
  return 0;
}
