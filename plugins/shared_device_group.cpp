#include "plugins/shared_device_group.hpp"

#include <algorithm>

#include "host/input/quote.hpp"
#include "plugins/prepare.hpp"
#include "plugins/reserve.hpp"

namespace bulkscore::plugins {

namespace {
PrepareResult reject(std::string message) {
  PrepareResult r;
  r.prefilter = Code::UnschedulableAndUnresolvable;
  r.message = std::move(message);
  return r;
}
}  // namespace

PrepareResult SharedDeviceGroup::prepare(const PrepareContext& ctx, State& st, Arena& arena) {
  PrepareResult r;
  st = State{};
  st.bound_node = -1;
  const Snapshot& snap = ctx.snapshot;
  const DeviceGroupModel& model = ctx.profile.shared_device_group_args.model;
  const std::string name = pod_device_group(ctx.pod, model);  // InputError when empty
  st.mode_key = snap.string_id(model.mode_label);
  st.mode_slot = st.mode_key == kNoId ? -1 : snap.dense_label_slot(st.mode_key);
  st.mode_value = snap.string_id(model.mode_value);
  std::vector<Need> needs;
  if (name.empty()) {
    // A pod outside groups that requests devices of a resource groups hold.
    for (const auto& [resource, amount] : ctx.requests) {
      const int32_t row = snap.group_device_row(resource);
      if (row >= 0 && amount > 0) needs.push_back(Need{row, snap.resource_index(resource), amount});
    }
    if (needs.empty()) {
      r.prefilter = Code::Skip;
      r.skip_score = true;
      return r;
    }
    st.needs = arena.push(needs);
    r.skip_score = true;
    return r;
  }
  const std::string what = "SharedDeviceGroup " + quote_for_message(name);
  const int32_t g = snap.device_group_model() ? snap.device_group_index(name) : -1;
  if (g < 0) return reject(what + " (annotation " + model.group_annotation + ") does not exist");
  const bulkscore::SharedDeviceGroup& group = snap.device_group(static_cast<uint32_t>(g));
  const Snapshot::GroupBinding& binding = snap.device_group_binding(static_cast<uint32_t>(g));
  for (const auto& [resource, count] : group.resources) {
    const auto row = static_cast<uint32_t>(snap.group_device_row(resource));
    if (binding.node < 0 && count > snap.group_device_max(row))
      return reject(what + " needs " + std::to_string(count) + " " + resource + " device(s); no node has more than " +
                    std::to_string(snap.group_device_max(row)));
    needs.push_back(Need{static_cast<int32_t>(row), snap.resource_index(resource), count});
  }
  const GroupDevices listed = pod_group_devices(ctx.pod, model);  // InputError when malformed
  if (binding.node >= 0) {
    if (!listed.empty() && listed != binding.devices)
      return reject("the pod's annotation " + model.devices_annotation + " lists " + format_group_devices(listed) +
                    " but its " + what + " holds " + format_group_devices(binding.devices) + " on node " +
                    quote_for_message(snap.node_name(static_cast<uint32_t>(binding.node))));
    st.bound_node = binding.node;
  }
  std::vector<Label> labels;
  for (const auto& [key, value] : group.node_selector) {
    const int32_t k = snap.string_id(key), v = snap.string_id(value);
    if (k == kNoId || v == kNoId) st.selector_unmatched = 1;
    labels.push_back(Label{k, k == kNoId ? -1 : snap.dense_label_slot(k), v, 0});
  }
  st.in_group = 1;
  st.spread = group.strategy == bulkscore::SharedDeviceGroup::Strategy::Spread ? 1 : 0;
  st.needs = arena.push(needs);
  st.selector = arena.push(labels);
  return r;
}

void SharedDeviceGroup::reasons(uint64_t bits, const Snapshot&, const State&, const uint8_t*, uint32_t,
                                std::vector<std::string>& out) {
  if (bits & kNotShared) out.emplace_back("node(s) were not in shared device mode");
  if (bits & kOtherNode) out.emplace_back("node(s) were not the node the pod's SharedDeviceGroup is bound to");
  if (bits & kSelector) out.emplace_back("node(s) didn't match the SharedDeviceGroup's node selector");
  if (bits & kNotEnough) out.emplace_back("node(s) didn't have enough free devices for the SharedDeviceGroup");
  if (bits & kNotEnoughOutside) out.emplace_back("node(s) didn't have enough devices outside shared device groups");
}

GroupDevices SharedDeviceGroup::choose_devices(const Snapshot& snap, uint32_t node, uint32_t g) {
  const bulkscore::SharedDeviceGroup& group = snap.device_group(g);
  GroupDevices out;
  for (const auto& [resource, count] : group.resources) {
    const auto row = static_cast<uint32_t>(snap.group_device_row(resource));
    const std::vector<int32_t> free = snap.group_free_device_ids(node, row);
    const size_t k = static_cast<size_t>(count);
    if (free.size() < k) return {};
    std::vector<int32_t> chosen;
    for (size_t i = 0; i < k; ++i)
      chosen.push_back(group.strategy == bulkscore::SharedDeviceGroup::Strategy::Spread ? free[i * free.size() / k]
                                                                                        : free[i]);
    out[resource] = std::move(chosen);
  }
  return out;
}

void SharedDeviceGroup::reserve(const ReserveContext& ctx, Reservation& out, Pod* assumed) {
  if (!ctx.groups || ctx.bound) return;
  const DeviceGroupModel& model = *ctx.groups;
  out.device_group = pod_device_group(ctx.pod, model);
  const int32_t g = out.device_group.empty() ? -1 : ctx.snap.device_group_index(out.device_group);
  if (g >= 0) {
    out.group_index = g;
    out.group_before = ctx.snap.device_group_state(static_cast<uint32_t>(g));
    const Snapshot::GroupBinding& b = out.group_before.binding;
    // Only a profile that runs the plugin binds a group: another profile's
    // choice of node never looked at shared-device mode or the selector.
    if (b.node < 0 && ctx.enabled)
      out.group_devices = choose_devices(ctx.snap, ctx.node, static_cast<uint32_t>(g));
    else if (b.node == static_cast<int32_t>(ctx.node))
      out.group_devices = b.devices;
  }
  if (!out.group_devices.empty()) {
    if (assumed) annotate_group_devices(*assumed, model, out.group_devices);
  } else if (!out.device_group.empty()) {
    // Only a profile without SharedDeviceGroup places a group's pod
    // without its group: the pod then shares nothing.
    if (assumed) {
      assumed->annotations.erase(model.devices_annotation);
      for (auto it = assumed->annotations.begin(); it != assumed->annotations.end();)
        it = it->first.rfind(model.env_annotation_prefix, 0) == 0 ? assumed->annotations.erase(it) : std::next(it);
    }
    out.warnings.push_back("placed by a profile without SharedDeviceGroup, outside SharedDeviceGroup " +
                           quote_for_message(out.device_group) + ": it shares no devices");
  }
}

void SharedDeviceGroup::unreserve(const ReserveContext&, Snapshot& snap, const Reservation& r) {
  if (r.group_index >= 0 && static_cast<uint32_t>(r.group_index) < snap.num_device_groups())
    snap.restore_device_group(static_cast<uint32_t>(r.group_index), r.group_before);
}

}  // namespace bulkscore::plugins
