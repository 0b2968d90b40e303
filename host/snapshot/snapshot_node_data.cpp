// The snapshot's node data columns (the NodeData plugin; snapshot.hpp,
// "node data"): named per-node filter verdicts and scores an embedder sets,
// two kNodeRows view columns (one row per column of each kind), the reason
// texts of the filter columns, and their share of the node mutations.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "host/common.hpp"
#include "host/input/labels.hpp"
#include "host/input/quote.hpp"
#include "host/snapshot/snapshot.hpp"

namespace bulkscore {
namespace {

constexpr size_t kMaxReasonBytes = 256;

// "" when `reason` may be a reason text, else what is wrong: it goes into
// FitError messages and explain as it is, so nothing a message would
// escape (control characters, invalid UTF-8, line separators) is taken.
std::string reason_problem(std::string_view reason) {
  if (reason.empty()) return "must not be empty";
  if (reason.size() > kMaxReasonBytes)
    return "must be at most " + std::to_string(kMaxReasonBytes) + " bytes, got " + std::to_string(reason.size());
  std::string plain = "\"";
  for (const char ch : reason) {
    if (ch == '"' || ch == '\\') plain += '\\';
    plain += ch;
  }
  plain += '"';
  if (quote_for_message(reason, reason.size()) != plain)
    return "must be UTF-8 text without control characters, got " + quote_for_message(reason);
  return "";
}

const char* op_name(Snapshot::NodeDataUpdate::Op op) {
  switch (op) {
    case Snapshot::NodeDataUpdate::Op::kPass:
      return "a pass";
    case Snapshot::NodeDataUpdate::Op::kFail:
      return "a fail";
    case Snapshot::NodeDataUpdate::Op::kScore:
      return "a score";
    case Snapshot::NodeDataUpdate::Op::kClear:
      break;
  }
  return "a clear";
}

// Rows [row * n + node]: a node appended to every row, or one removed.
void append_to_rows(std::vector<uint8_t>& v, size_t rows, size_t old_n) {
  std::vector<uint8_t> out;
  out.reserve(rows * (old_n + 1));
  for (size_t r = 0; r < rows; ++r) {
    out.insert(out.end(), v.begin() + static_cast<std::ptrdiff_t>(r * old_n),
               v.begin() + static_cast<std::ptrdiff_t>((r + 1) * old_n));
    out.push_back(kNodeDataNone);
  }
  v = std::move(out);
}

void erase_from_rows(std::vector<uint8_t>& v, size_t rows, size_t old_n, size_t node) {
  size_t kept = 0;
  for (size_t i = 0; i < rows * old_n; ++i)
    if (i % old_n != node) v[kept++] = v[i];
  v.resize(kept);
}

}  // namespace

int32_t Snapshot::find_node_data_column(std::string_view name) const {
  for (size_t c = 0; c < node_data_columns_.size(); ++c)
    if (node_data_columns_[c].name == name) return static_cast<int32_t>(c);
  return -1;
}

uint32_t Snapshot::node_data_column(std::string_view name, NodeDataKind kind) {
  const int32_t found = find_node_data_column(name);
  const char* const kinds[] = {"filter", "score"};
  if (found >= 0) {
    const NodeDataColumn& col = node_data_columns_[static_cast<size_t>(found)];
    if (col.kind != kind)
      throw InputError("node data column " + quote_for_message(name) + " is a " + kinds[static_cast<int>(col.kind)] +
                       " column, not a " + kinds[static_cast<int>(kind)] + " column");
    return static_cast<uint32_t>(found);
  }
  const std::string problem = qualified_name_problem(name);
  if (!problem.empty()) throw InputError("node data column " + quote_for_message(name) + ": " + problem);
  // A default-constructed snapshot has no columns yet: start from an empty
  // build, as add_node does (which then keeps this column).
  if (label_offsets_.empty()) *this = build({}, {});
  NodeDataColumn col;
  col.name = std::string(name);
  col.kind = kind;
  std::vector<uint32_t>& rows = kind == NodeDataKind::kFilter ? node_filter_columns_ : node_score_columns_;
  std::vector<uint8_t>& data = kind == NodeDataKind::kFilter ? node_filter_data_ : node_score_data_;
  col.row = static_cast<uint32_t>(rows.size());
  if (kind == NodeDataKind::kFilter) col.reasons.resize(kMaxNodeDataReasons + 1);
  rows.push_back(static_cast<uint32_t>(node_data_columns_.size()));
  data.resize(data.size() + num_nodes_, kNodeDataNone);
  node_data_columns_.push_back(std::move(col));
  // A row more: the view columns are laid out anew (a mirror re-sends
  // them); every node is without data in it, so none is logged.
  node_data_layout_version_ = fresh_structure_version();
  return static_cast<uint32_t>(node_data_columns_.size() - 1);
}

uint8_t Snapshot::node_data_entry(uint32_t c, uint32_t node) const {
  const NodeDataColumn& col = node_data_columns_.at(c);
  const std::vector<uint8_t>& data = col.kind == NodeDataKind::kFilter ? node_filter_data_ : node_score_data_;
  return data[static_cast<size_t>(col.row) * num_nodes_ + node];
}

int32_t Snapshot::node_filter_row(std::string_view name) const {
  const int32_t c = find_node_data_column(name);
  if (c < 0 || node_data_columns_[static_cast<size_t>(c)].kind != NodeDataKind::kFilter) return -1;
  return static_cast<int32_t>(node_data_columns_[static_cast<size_t>(c)].row);
}

int32_t Snapshot::node_score_row(std::string_view name) const {
  const int32_t c = find_node_data_column(name);
  if (c < 0 || node_data_columns_[static_cast<size_t>(c)].kind != NodeDataKind::kScore) return -1;
  return static_cast<int32_t>(node_data_columns_[static_cast<size_t>(c)].row);
}

namespace {

// What applying updates to a column takes, worked out (and checked) before
// anything changes: each update's new entry, the new reason texts with the
// ids they take, and the uses of every id afterwards.
struct NodeDataPlan {
  std::vector<uint8_t> entries;
  std::vector<std::pair<std::string, uint8_t>> fresh;
  std::array<uint32_t, kMaxNodeDataReasons + 1> uses{};
};

// `row`: the column's entries (nullptr for a column about to be made: no
// node has data); `reasons`, `uses`: its reason texts and their uses.
NodeDataPlan plan_node_data(const std::string& name, Snapshot::NodeDataKind kind, const uint8_t* row,
                            const std::vector<std::string>& reasons,
                            const std::array<uint32_t, kMaxNodeDataReasons + 1>& uses,
                            const std::vector<Snapshot::NodeDataUpdate>& updates, const Snapshot& snap) {
  using Op = Snapshot::NodeDataUpdate::Op;
  const bool filter = kind == Snapshot::NodeDataKind::kFilter;
  const uint32_t num_nodes = snap.num_nodes();
  const std::string where = "node data column " + quote_for_message(name);
  std::vector<uint32_t> nodes;
  nodes.reserve(updates.size());
  for (const Snapshot::NodeDataUpdate& u : updates) {
    if (u.node >= num_nodes)
      throw InputError(where + ": node index " + std::to_string(u.node) + " is not in the snapshot (" +
                       std::to_string(num_nodes) + " nodes)");
    const std::string at = where + ", node " + quote_for_message(snap.node_name(u.node), 200);
    const bool fits = u.op == Op::kClear || (filter ? u.op != Op::kScore : u.op == Op::kScore);
    if (!fits) throw InputError(at + ": " + op_name(u.op) + " in a " + (filter ? "filter" : "score") + " column");
    if (u.op == Op::kScore && (u.score < 0 || u.score > 100))
      throw InputError(at + ": the score must be in the range [0, 100], got " + std::to_string(u.score));
    if (u.op == Op::kFail) {
      const std::string problem = reason_problem(u.reason);
      if (!problem.empty()) throw InputError(at + ": the reason " + problem);
    }
    nodes.push_back(u.node);
  }
  std::sort(nodes.begin(), nodes.end());
  const auto twice = std::adjacent_find(nodes.begin(), nodes.end());
  if (twice != nodes.end())
    throw InputError(where + ": node " + quote_for_message(snap.node_name(*twice), 200) + " is given twice");

  NodeDataPlan plan;
  plan.uses = uses;
  plan.entries.assign(updates.size(), kNodeDataNone);
  for (size_t i = 0; i < updates.size(); ++i) {
    if (updates[i].op == Op::kPass) plan.entries[i] = 0;
    if (updates[i].op == Op::kScore) plan.entries[i] = static_cast<uint8_t>(updates[i].score);
  }
  if (!filter) return plan;

  // Reason ids: a text in use keeps its id; a new text takes an id that no
  // entry holds once these updates are applied.
  for (const Snapshot::NodeDataUpdate& u : updates) {
    const uint8_t old = row ? row[u.node] : kNodeDataNone;
    if (old >= 1 && old <= kMaxNodeDataReasons) --plan.uses[old];
  }
  std::unordered_map<std::string_view, uint8_t> by_text;
  for (size_t id = 1; id < reasons.size(); ++id)
    if (!reasons[id].empty()) by_text.emplace(reasons[id], static_cast<uint8_t>(id));
  std::array<bool, kMaxNodeDataReasons + 1> needed{};
  std::unordered_map<std::string_view, size_t> fresh_index;
  for (size_t i = 0; i < updates.size(); ++i) {
    if (updates[i].op != Op::kFail) continue;
    const auto it = by_text.find(updates[i].reason);
    if (it != by_text.end()) {
      plan.entries[i] = it->second;
      needed[it->second] = true;
    } else if (fresh_index.emplace(updates[i].reason, plan.fresh.size()).second) {
      plan.fresh.emplace_back(updates[i].reason, 0);
    }
  }
  uint32_t next = 1;
  for (auto& fresh : plan.fresh) {
    while (next <= kMaxNodeDataReasons && (plan.uses[next] != 0 || needed[next])) ++next;
    if (next > kMaxNodeDataReasons)
      throw InputError(where + ": more than " + std::to_string(kMaxNodeDataReasons) +
                       " distinct reasons would be in use (a filter column holds at most that many at once)");
    fresh.second = static_cast<uint8_t>(next);
    needed[next] = true;
  }
  for (size_t i = 0; i < updates.size(); ++i)
    if (updates[i].op == Op::kFail && plan.entries[i] == kNodeDataNone)
      plan.entries[i] = plan.fresh[fresh_index.at(updates[i].reason)].second;
  for (const uint8_t entry : plan.entries)
    if (entry >= 1 && entry <= kMaxNodeDataReasons) ++plan.uses[entry];
  return plan;
}

}  // namespace

void Snapshot::update_node_data(uint32_t c, const std::vector<NodeDataUpdate>& updates) {
  NodeDataColumn& col = node_data_columns_.at(c);
  std::vector<uint8_t>& data = col.kind == NodeDataKind::kFilter ? node_filter_data_ : node_score_data_;
  const size_t base = static_cast<size_t>(col.row) * num_nodes_;
  const NodeDataPlan plan =
      plan_node_data(col.name, col.kind, data.data() + base, col.reasons, col.reason_uses, updates, *this);
  for (const auto& [text, id] : plan.fresh) col.reasons[id] = text;
  col.reason_uses = plan.uses;
  for (size_t i = 0; i < updates.size(); ++i) {
    uint8_t& entry = data[base + updates[i].node];
    if (entry == plan.entries[i]) continue;
    entry = plan.entries[i];
    identity_.log.push_back(updates[i].node);
  }
  bound_log_after_node_data();
}

uint32_t Snapshot::update_node_data(std::string_view name, NodeDataKind kind,
                                    const std::vector<NodeDataUpdate>& updates) {
  const int32_t found = find_node_data_column(name);
  if (found >= 0) {
    const auto c = static_cast<uint32_t>(found);
    node_data_column(name, kind);  // InputError for the other kind
    update_node_data(c, updates);
    return c;
  }
  // Checked in full before the column is made: an update refused leaves
  // no column behind.
  const std::string problem = qualified_name_problem(name);
  if (!problem.empty()) throw InputError("node data column " + quote_for_message(name) + ": " + problem);
  const std::vector<std::string> no_reasons(kind == NodeDataKind::kFilter ? kMaxNodeDataReasons + 1 : 0);
  plan_node_data(std::string(name), kind, nullptr, no_reasons, {}, updates, *this);
  const uint32_t c = node_data_column(name, kind);
  update_node_data(c, updates);
  return c;
}

void Snapshot::clear_node_data(uint32_t c) {
  NodeDataColumn& col = node_data_columns_.at(c);
  std::vector<uint8_t>& data = col.kind == NodeDataKind::kFilter ? node_filter_data_ : node_score_data_;
  const size_t base = static_cast<size_t>(col.row) * num_nodes_;
  for (uint32_t n = 0; n < num_nodes_; ++n) {
    if (data[base + n] == kNodeDataNone) continue;
    data[base + n] = kNodeDataNone;
    identity_.log.push_back(n);
  }
  col.reason_uses = {};
  bound_log_after_node_data();
}

void Snapshot::bound_log_after_node_data() {
  const size_t bound = std::max<size_t>(kNodeDataLogBound * num_nodes_, size_t(1) << 16);
  if (identity_.log.size() > bound) structural_change();
}

void Snapshot::node_data_add_node(uint32_t old_n) {
  append_to_rows(node_filter_data_, node_filter_columns_.size(), old_n);
  append_to_rows(node_score_data_, node_score_columns_.size(), old_n);
}

void Snapshot::node_data_remove_node(uint32_t n, uint32_t old_n) {
  for (NodeDataColumn& col : node_data_columns_) {
    if (col.kind != NodeDataKind::kFilter) continue;
    const uint8_t entry = node_filter_data_[static_cast<size_t>(col.row) * old_n + n];
    if (entry >= 1 && entry <= kMaxNodeDataReasons) --col.reason_uses[entry];
  }
  erase_from_rows(node_filter_data_, node_filter_columns_.size(), old_n, n);
  erase_from_rows(node_score_data_, node_score_columns_.size(), old_n, n);
}

Snapshot::NodeDataByName Snapshot::node_data_by_name() const {
  using Op = NodeDataUpdate::Op;
  NodeDataByName out;
  for (uint32_t c = 0; c < node_data_columns_.size(); ++c) {
    const NodeDataColumn& col = node_data_columns_[c];
    NodeDataByName::Column kept;
    kept.name = col.name;
    kept.kind = col.kind;
    for (uint32_t n = 0; n < num_nodes_; ++n) {
      const uint8_t entry = node_data_entry(c, n);
      if (entry == kNodeDataNone) continue;
      NodeDataUpdate u;
      if (col.kind == NodeDataKind::kScore) {
        u.op = Op::kScore;
        u.score = entry;
      } else if (entry == 0) {
        u.op = Op::kPass;
      } else {
        u.op = Op::kFail;
        u.reason = col.reasons[entry];
      }
      kept.nodes.push_back(node_names_[n]);
      kept.entries.push_back(std::move(u));
    }
    out.columns.push_back(std::move(kept));
  }
  return out;
}

void Snapshot::restore_node_data(const NodeDataByName& data) {
  for (const NodeDataByName::Column& kept : data.columns) {
    const uint32_t c = node_data_column(kept.name, kept.kind);
    std::vector<NodeDataUpdate> updates;
    for (size_t i = 0; i < kept.nodes.size(); ++i) {
      const int32_t n = node_index(kept.nodes[i]);
      if (n < 0) continue;
      updates.push_back(kept.entries[i]);
      updates.back().node = static_cast<uint32_t>(n);
    }
    update_node_data(c, updates);
  }
}

}  // namespace bulkscore
