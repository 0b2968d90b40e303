// `bulkscore explain`'s table: one pod's evaluation for a person, built from
// Engine::rank (the best nodes with every Score plugin's weighted score,
// the tie at the best total, the rejection histogram, named nodes' verdicts).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "host/engine/engine.hpp"

namespace bulkscore::cli {

struct ExplainTableContext {
  size_t width = 100;        // no line is wider (columns)
  uint32_t num_nodes = 0;    // nodes in the cluster
  std::string running_on;    // the pod runs on this node: explained as if pending
  // The pod's place among the pending pods (-1 when it is not pending), and
  // whether the pods before it were scheduled first (--schedule-before):
  // with the random tie-break, schedule gives the pod the draw of its place.
  int64_t pending_index = -1;
  bool scheduled_before = false;
  uint32_t top = 10;  // --top: also the preemption candidates listed
  std::vector<std::string> warnings;  // more lines for the reader (the engine's)
  // A gang member: its group's state (Engine::pod_group_status), one line.
  std::string pod_group;
};

// The table, every line at most ctx.width columns, ending with a line feed.
std::string render_explain_table(const Ranking& r, const ExplainTableContext& ctx);

// A Score plugin's column header when the full names do not fit
// ("NodeResourcesBalancedAllocation" -> "Balanced").
std::string short_plugin_name(const std::string& plugin);

}  // namespace bulkscore::cli
