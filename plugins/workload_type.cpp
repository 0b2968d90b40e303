#include "plugins/workload_type.hpp"

#include <vector>

#include "plugins/prepare.hpp"

namespace bulkscore::plugins {

PrepareResult WorkloadType::prepare(const PrepareContext& ctx, State& st, Arena& arena) {
  const WorkloadTypeArgs& args = ctx.profile.workload_type_args;
  st = State{};
  st.cpu_threshold_milli = args.cpu_threshold_milli;

  const auto label = ctx.pod.labels.find(args.label_key);
  if (label != ctx.pod.labels.end() && label->second == args.cpu_intensive_value) {
    st.kind = Kind::CpuIntensive;
  } else if (label != ctx.pod.labels.end() && label->second == args.gpu_intensive_value) {
    st.kind = Kind::GpuIntensive;
    std::vector<uint32_t> known;
    for (const std::string& name : args.gpu_resource_names) {
      const int32_t r = ctx.snapshot.resource_index(name);
      if (r >= 0) known.push_back(static_cast<uint32_t>(r));
    }
    // None known: every node fails Filter with the GPU reason, which is the
    // message a user needs (a PreFilter rejection would not name the nodes).
    st.gpu_resources = arena.push(known);
  }

  PrepareResult result;
  if (st.kind == Kind::Other) result.prefilter = Code::Skip;
  return result;
}

void WorkloadType::reasons(uint64_t bits, const Snapshot&, const State&, const uint8_t*, uint32_t,
                           std::vector<std::string>& out) {
  if (bits & kNotEnoughCpu) out.emplace_back("node(s) didn't have enough CPU for a CPU-intensive pod");
  if (bits & kNoGpu) out.emplace_back("node(s) didn't have a GPU for a GPU-intensive pod");
}

}  // namespace bulkscore::plugins
