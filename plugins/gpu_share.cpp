#include "plugins/gpu_share.hpp"

#include <algorithm>

#include "host/input/pod_resources.hpp"
#include "plugins/gpu_fragmentation.hpp"
#include "plugins/prepare.hpp"
#include "plugins/reserve.hpp"
#include "host/input/config.hpp"
#include "host/input/quote.hpp"

namespace bulkscore::plugins {

PrepareResult GpuShare::prepare(const PrepareContext& ctx, State& st, Arena& arena) {
  PrepareResult r;
  // InputError for malformed annotations, naming the pod and the field.
  const DeviceDemand demand = pod_device_demand(ctx.pod, ctx.profile.gpu_share_args.model);
  st = State{};
  if (!demand.any()) {
    r.prefilter = Code::Skip;
    return r;
  }
  st.count = demand.count;
  st.milli = demand.milli;
  st.model_key = ctx.snapshot.string_id(ctx.profile.gpu_share_args.model.model_label);
  st.model_slot = st.model_key == kNoId ? -1 : ctx.snapshot.dense_label_slot(st.model_key);
  st.has_models = demand.models.empty() ? 0 : 1;
  std::vector<int32_t> ids;
  for (const std::string& m : demand.models) {
    const int32_t id = ctx.snapshot.string_id(m);
    if (id != kNoId) ids.push_back(id);  // a model no node has matches none
  }
  std::sort(ids.begin(), ids.end());
  st.models = arena.push(ids);
  return r;
}

void GpuShare::reasons(uint64_t bits, const Snapshot&, const State&, const uint8_t*, uint32_t,
                       std::vector<std::string>& out) {
  if (bits & kNoDevices) out.emplace_back("node(s) had no GPU");
  if (bits & kOtherModel) out.emplace_back("node(s) didn't have an allowed GPU card model");
  if (bits & kNotEnoughFree) out.emplace_back("node(s) didn't have enough free GPU");
}

std::vector<int32_t> GpuShare::choose_devices(const Snapshot& snap, uint32_t node, const Pod& pod,
                                              const DeviceDemand& demand, const ProfileConfig& profile) {
  DeviceSelection selection = profile.gpu_share_args.selection;
  const uint32_t count = snap.device_count(node);
  const bool share = count > 0 && is_share(demand.count, demand.milli, snap.device_units(node, 0));
  std::vector<int64_t> free(count);
  std::vector<int32_t> units(count);
  for (uint32_t d = 0; d < count; ++d) {
    free[d] = snap.device_free(node, d);
    units[d] = snap.device_units(node, d);
  }
  if (selection == DeviceSelection::Fragmentation || selection == DeviceSelection::Random) {
    if (!share) {
      selection = DeviceSelection::Best;
    } else if (selection == DeviceSelection::Random) {
      std::vector<int32_t> fitting;
      for (uint32_t d = 0; d < count; ++d)
        if (snap.device_free(node, d) >= demand.milli) fitting.push_back(static_cast<int32_t>(d));
      if (fitting.empty()) return {};
      return {fitting[mix_hash(profile.gpu_score_args.seed ^ 0x5eedull, pod.key()) % fitting.size()]};
    } else {
      std::vector<TaskShape> shapes;
      std::vector<int32_t> models;
      flatten_tasks(profile.gpu_fragmentation_args.typical_tasks, snap, shapes, models);
      const SnapshotView v = snap.view();
      const int32_t key = snap.string_id(profile.gpu_share_args.model.model_label);
      const int32_t model = key == kNoId ? kNoId : v.label_value(node, key, snap.dense_label_slot(key));
      const ResourceList requests = pod_requests(pod);
      const auto cpu = requests.find("cpu");
      int32_t device = -1;
      fgd_node_score(free.data(), units.data(), count, node_cpu_left(v, node), model,
                     cpu == requests.end() ? 0 : cpu->second, demand.count, demand.milli, shapes.data(),
                     static_cast<uint32_t>(shapes.size()), models.data(), &device);
      if (device < 0) return {};
      return {device};
    }
  }
  if (selection == DeviceSelection::Best) {
    // The rule FGD and GpuPacking take whole devices by.
    std::vector<int32_t> out;
    uint64_t taken = 0;
    for (int32_t i = 0; i < demand.count; ++i) {
      const int32_t pick = fewest_free_fitting(free.data(), units.data(), count, demand.milli, taken);
      if (pick < 0) return {};
      taken |= uint64_t(1) << pick;
      out.push_back(pick);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  struct Candidate {
    int64_t free;
    int32_t index;
  };
  std::vector<Candidate> fitting;
  for (uint32_t d = 0; d < count; ++d) {
    const int32_t need = demand.milli == kWholeDevice ? snap.device_units(node, d) : demand.milli;
    if (snap.device_free(node, d) >= need) fitting.push_back(Candidate{snap.device_free(node, d), int32_t(d)});
  }
  if (fitting.size() < static_cast<size_t>(demand.count)) return {};
  // Stable: equal keys keep index order.
  if (selection == DeviceSelection::Worst)
    std::stable_sort(fitting.begin(), fitting.end(),
                     [](const Candidate& a, const Candidate& b) { return a.free > b.free; });
  std::vector<int32_t> out;
  out.reserve(static_cast<size_t>(demand.count));
  for (int32_t i = 0; i < demand.count; ++i) out.push_back(fitting[static_cast<size_t>(i)].index);
  std::sort(out.begin(), out.end());
  return out;
}

void GpuShare::reserve(const ReserveContext& ctx, Reservation& out, Pod* assumed) {
  if (!ctx.devices) return;
  const DeviceModel& model = *ctx.devices;
  const DeviceDemand demand = pod_device_demand(ctx.pod, model);
  if (!demand.any()) return;
  if (ctx.bound && !pod_device_indices(ctx.pod, model).empty()) return;
  if (ctx.enabled) {
    out.devices = choose_devices(ctx.snap, ctx.node, ctx.pod, demand, ctx.profile);
  } else {
    const ProfileConfig defaults;
    out.devices = choose_devices(ctx.snap, ctx.node, ctx.pod, demand, defaults);
  }
  if (ctx.bound) {
    const std::string where = "running pod " + quote_for_message(ctx.pod.key()) + " on node " +
                              quote_for_message(ctx.snap.node_name(ctx.node));
    if (out.devices.empty()) {
      out.warnings.push_back(where + " asks for devices but has no " + model.index_annotation +
                             " annotation, and none are free for it there; it holds none");
      return;
    }
    if (assumed) assumed->annotations[model.index_annotation] = format_device_indices(out.devices);
    out.warnings.push_back(where + " asks for devices but has no " + model.index_annotation +
                           " annotation; it is taken to hold devices " + format_device_indices(out.devices));
    return;
  }
  if (!out.devices.empty()) {
    if (assumed) assumed->annotations[model.index_annotation] = format_device_indices(out.devices);
  } else {
    out.warnings.push_back("placed by a profile without GpuShare where no devices are free for it: it holds none");
    if (assumed) assumed->annotations.erase(model.index_annotation);
  }
}

}  // namespace bulkscore::plugins
