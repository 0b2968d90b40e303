#include "plugins/seam_probe.hpp"

#include <algorithm>

#include "plugins/prepare.hpp"
#include "plugins/reserve.hpp"

namespace bulkscore::plugins {

PrepareResult SeamProbe::prepare(const PrepareContext& ctx, State& st, Arena&) {
  st = State{kNoId, -1, 0, {}, NormalizeKind::Spread};
  PrepareResult r;
  const auto it = ctx.pod.annotations.find(kAnnotation);
  if (it == ctx.pod.annotations.end()) {
    r.skip_score = true;
    return r;
  }
  if (it->second == "spread") {
    st.kind = NormalizeKind::Spread;
  } else if (it->second == "minmax") {
    st.kind = NormalizeKind::MinMax;
  } else if (it->second == "raw") {
    st.kind = NormalizeKind::None;
  } else {
    r.score_error = std::string("SeamProbe: unknown mode \"") + it->second + "\"";
    return r;
  }
  st.zone_key = ctx.snapshot.string_id("topology.kubernetes.io/zone");
  st.zone_slot = st.zone_key == kNoId ? -1 : ctx.snapshot.dense_label_slot(st.zone_key);
  return r;
}

void SeamProbe::prescore_feasible(const Snapshot& snap, State& st, Arena& arena, const uint32_t* feasible,
                                  uint32_t count) {
  const SnapshotView s = snap.view();
  std::vector<DomainCount> zones;
  if (st.zone_key != kNoId) {
    std::vector<int32_t> ids;
    ids.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
      const int32_t z = s.label_value(feasible[i], st.zone_key, st.zone_slot);
      if (z != kNoId) ids.push_back(z);
    }
    std::sort(ids.begin(), ids.end());
    for (size_t i = 0; i < ids.size();) {
      size_t j = i;
      while (j < ids.size() && ids[j] == ids[i]) ++j;
      zones.push_back(DomainCount{ids[i], 0, static_cast<int64_t>(j - i)});
      i = j;
    }
  }
  st.feasible = static_cast<int32_t>(count);
  st.zones = arena.push(zones);
}

PermitStatus SeamProbe::permit(const ReserveContext& ctx, const Reservation&) {
  PermitStatus out;
  const auto it = ctx.pod.annotations.find(kPermitAnnotation);
  if (it == ctx.pod.annotations.end()) return out;
  out.plugin = kName;
  if (it->second == "reject") {
    out.code = PermitCode::kReject;
    out.message = "probe rejects node " + ctx.snap.node_name(ctx.node);
  } else if (it->second == "wait") {
    out.code = PermitCode::kWait;
  }
  return out;
}

}  // namespace bulkscore::plugins
