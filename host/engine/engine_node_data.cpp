// The engine's node data calls (the NodeData plugin's columns): names to
// snapshot indices and statuses; the snapshot checks and applies the
// updates (host/snapshot/snapshot_node_data.cpp).
#include <string>
#include <vector>

#include "host/engine/engine.hpp"
#include "host/input/quote.hpp"

namespace bulkscore {
namespace {

using Update = Snapshot::NodeDataUpdate;

EventStatus status(EventCode code, std::string message) {
  EventStatus s;
  s.code = code;
  s.message = std::move(message);
  return s;
}

EventStatus unknown_node(std::string_view column, std::string_view node) {
  return status(EventCode::kNotFound, "node " + quote_for_message(node, 200) +
                                          " is not in the cluster (node data column " + quote_for_message(column) +
                                          ")");
}

}  // namespace

EventStatus Engine::set_node_filter(std::string_view column, std::string_view node, bool pass,
                                    std::string_view reason) {
  return set_node_filters(column, {NodeFilterValue{std::string(node), pass, std::string(reason)}});
}

EventStatus Engine::set_node_filters(std::string_view column, const std::vector<NodeFilterValue>& values) {
  std::vector<Update> updates(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const int32_t n = snapshot_.node_index(values[i].node);
    if (n < 0) return unknown_node(column, values[i].node);
    updates[i].node = static_cast<uint32_t>(n);
    updates[i].op = values[i].pass ? Update::Op::kPass : Update::Op::kFail;
    if (!values[i].pass)
      updates[i].reason = values[i].reason.empty() ? "node(s) didn't pass " + std::string(column) : values[i].reason;
  }
  try {
    snapshot_.update_node_data(column, Snapshot::NodeDataKind::kFilter, updates);
  } catch (const InputError& e) {
    return status(EventCode::kInvalid, e.what());
  }
  node_data_changed();
  return {};
}

EventStatus Engine::set_node_score(std::string_view column, std::string_view node, int64_t score) {
  return set_node_scores(column, {NodeScoreValue{std::string(node), score}});
}

EventStatus Engine::set_node_scores(std::string_view column, const std::vector<NodeScoreValue>& values) {
  std::vector<Update> updates(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const int32_t n = snapshot_.node_index(values[i].node);
    if (n < 0) return unknown_node(column, values[i].node);
    updates[i].node = static_cast<uint32_t>(n);
    updates[i].op = Update::Op::kScore;
    updates[i].score = values[i].score;
  }
  try {
    snapshot_.update_node_data(column, Snapshot::NodeDataKind::kScore, updates);
  } catch (const InputError& e) {
    return status(EventCode::kInvalid, e.what());
  }
  node_data_changed();
  return {};
}

EventStatus Engine::clear_node_data(std::string_view column, std::string_view node) {
  const int32_t c = snapshot_.find_node_data_column(column);
  if (c < 0) return status(EventCode::kNotFound, "node data column " + quote_for_message(column) + " does not exist");
  const int32_t n = snapshot_.node_index(node);
  if (n < 0) return unknown_node(column, node);
  Update clear;
  clear.node = static_cast<uint32_t>(n);
  snapshot_.update_node_data(static_cast<uint32_t>(c), {clear});
  node_data_changed();
  return {};
}

EventStatus Engine::clear_node_data(std::string_view column) {
  const int32_t c = snapshot_.find_node_data_column(column);
  if (c < 0) return status(EventCode::kNotFound, "node data column " + quote_for_message(column) + " does not exist");
  snapshot_.clear_node_data(static_cast<uint32_t>(c));
  node_data_changed();
  return {};
}

void Engine::node_data_changed() {
  // A change that bounded the mutation log was structural: the device
  // columns were laid out again, raising the cluster's load-time findings
  // once more (not news; dropped, as after a node removal).
  if (group_model_ || device_model_) snapshot_.take_device_warnings();
}

}  // namespace bulkscore
