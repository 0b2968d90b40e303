#include "plugins/node_unschedulable.hpp"

#include "plugins/prepare.hpp"
#include "plugins/toleration.hpp"

namespace bulkscore::plugins {

PrepareResult NodeUnschedulable::prepare(const PrepareContext& ctx, State& st, Arena&) {
  // Built once: its key is past the short-string buffer, so a taint built
  // per pod allocated per pod.
  static const Taint cordon{"node.kubernetes.io/unschedulable", "", "NoSchedule"};
  st.tolerates_unschedulable = false;
  for (const auto& t : ctx.pod.tolerations)
    if (toleration_tolerates(t, cordon)) st.tolerates_unschedulable = true;
  // No node it could fail: left out of the per-node pass (on most clusters
  // most of the time, where it was a byte loop per node and pod).
  PrepareResult r;
  r.filter_passes_all = st.tolerates_unschedulable || ctx.snapshot.cordoned_nodes() == 0;
  return r;
}

void NodeUnschedulable::reasons(uint64_t, const Snapshot&, const State&, const uint8_t*, uint32_t,
                                std::vector<std::string>& out) {
  out.emplace_back("node(s) were unschedulable");
}

}  // namespace bulkscore::plugins
