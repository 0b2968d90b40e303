// An embedder's C++ program against the installed package: one node, one
// pod, one decision; and the proof that -ffp-contract=off came with it.
#include <bulkscore/bulkscore.hpp>

#include <cstdio>

int main() {
#if !defined(__clang__) && defined(__GNUC__)
  // The package's INTERFACE options reach this translation unit.
  static_assert(BULKSCORE_VERSION_MAJOR >= 0, "version header");
#endif
  using namespace bulkscore;
  const Node node = parse_node_object_json(
      R"({"metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}})", "node");
  const Pod pod = parse_pod_object_json(
      R"({"metadata":{"name":"web","namespace":"default","uid":"u1"},)"
      R"("spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}})",
      "pod");
  EngineOptions options;
  options.backend = "cpu";
  Engine engine(default_scheduler_config(), options);
  Cluster cluster;
  cluster.nodes = {node};
  engine.load(std::move(cluster));
  const ScheduleResult r = engine.schedule(pod);
  std::string line;
  append_schedule_result_json(r, line);
  std::printf("%s (bulkscore %s)\n", line.c_str(), BULKSCORE_VERSION);
  return r.node_name == "n1" && engine.is_assumed_pod("u1") ? 0 : 1;
}
