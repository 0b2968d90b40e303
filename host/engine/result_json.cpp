#include "host/engine/result_json.hpp"

#include "host/input/device_groups.hpp"
#include "host/io/json_writer.hpp"

namespace bulkscore {
void write_shared_devices(JsonWriter& w, const std::string& group, const GroupDevices& devices) {
  if (group.empty() || devices.empty()) return;
  w.key("sharedDevices").begin_object().field("group", group);
  w.key("devices").begin_object();
  for (const auto& [resource, list] : devices) {
    w.key(resource).begin_array();
    for (int32_t d : list) w.value(static_cast<int64_t>(d));
    w.end_array();
  }
  w.end_object().key("env").begin_object();
  for (const auto& [resource, list] : devices) w.field(visible_devices_env(resource), format_device_list(list));
  w.end_object().end_object();
}

void append_schedule_result_json(const ScheduleResult& r, std::string& out) {
  JsonWriter w(out);
  w.begin_object().field("pod", r.pod);
  if (r.node >= 0) {
    w.field("node", r.node_name).field("score", r.score).field("feasibleNodes", r.feasible_nodes);
    if (!r.devices.empty()) {
      w.key("devices").begin_array();
      for (int32_t d : r.devices) w.value(static_cast<int64_t>(d));
      w.end_array();
    }
    write_shared_devices(w, r.device_group, r.group_devices);
  } else {
    w.field_null("node").field("feasibleNodes", r.feasible_nodes).field("code", code_name(r.code));
    w.field("message", r.message);
  }
  if (!r.warnings.empty()) {
    w.key("warnings").begin_array();
    for (const auto& s : r.warnings) w.value(s);
    w.end_array();
  }
  w.end_object();
}

void append_ranking_json(const Ranking& r, std::string& out) {
  JsonWriter w(out);
  w.begin_object().field("pod", r.pod);
  w.field("evaluatedNodes", r.evaluated_nodes).field("feasibleNodes", r.feasible_nodes);
  if (r.chosen.empty())
    w.field_null("chosen");
  else
    w.field("chosen", r.chosen);
  w.field("tiedAtBest", r.tied_at_best).field("tieBreak", r.tie_break == TieBreak::First ? "first" : "random");
  w.key("nodes").begin_array();
  for (const RankedNode& n : r.nodes) {
    w.begin_object().field("name", n.name).field("total", n.total);
    w.key("scores").begin_object();
    for (size_t i = 0; i < r.score_plugins.size() && i < n.raw.size(); ++i)
      w.key(r.score_plugins[i]).begin_object().field("raw", n.raw[i]).field("weighted", n.weighted[i]).end_object();
    w.end_object().end_object();
  }
  w.end_array();
  w.key("rejections").begin_array();
  for (const RejectionCount& c : r.rejections)
    w.begin_object().field("plugin", c.plugin).field("reason", c.reason).field("nodes", c.nodes).end_object();
  w.end_array();
  if (r.message.empty())
    w.field_null("message");
  else
    w.field("message", r.message);
  if (!r.warnings.empty()) {
    w.key("warnings").begin_array();
    for (const auto& s : r.warnings) w.value(s);
    w.end_array();
  }
  w.end_object();
}

}  // namespace bulkscore
