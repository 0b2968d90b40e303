#include "plugins/node_ports.hpp"

#include "plugins/prepare.hpp"

namespace bulkscore::plugins {

PrepareResult NodePorts::prepare(const PrepareContext& ctx, State& st, Arena& arena) {
  const auto wanted = pod_host_ports_lookup(ctx.pod, ctx.snapshot.strings());
  st.wanted = arena.push(wanted);
  PrepareResult r;
  if (wanted.empty()) r.prefilter = Code::Skip;
  return r;
}

void NodePorts::reasons(uint64_t, const Snapshot&, const State&, const uint8_t*, uint32_t,
                        std::vector<std::string>& out) {
  out.emplace_back("node(s) didn't have free ports for the requested pod ports");
}

}  // namespace bulkscore::plugins
