#include "plugins/node_name.hpp"

#include "plugins/prepare.hpp"

namespace bulkscore::plugins {

PrepareResult NodeName::prepare(const PrepareContext& ctx, State& st, Arena&) {
  st.wants_node = !ctx.pod.node_name.empty();
  const int32_t id = st.wants_node ? ctx.snapshot.string_id(ctx.pod.node_name) : kNoId;
  st.node_name = (st.wants_node && id == kNoId) ? kUnknownNode : id;
  PrepareResult r;
  r.filter_passes_all = !st.wants_node;
  return r;
}

void NodeName::reasons(uint64_t, const Snapshot&, const State&, const uint8_t*, uint32_t,
                       std::vector<std::string>& out) {
  out.emplace_back("node(s) didn't match the requested node name");
}

}  // namespace bulkscore::plugins
