#include "plugins/node_data.hpp"

#include <string>
#include <vector>

#include "plugins/prepare.hpp"

namespace bulkscore::plugins {

PrepareResult NodeData::prepare(const PrepareContext& ctx, State& st, Arena& arena) {
  const NodeDataArgs& args = ctx.profile.node_data_args;
  st = State{};
  st.filter_row = args.filter_column.empty() ? -1 : ctx.snapshot.node_filter_row(args.filter_column);
  st.score_row = args.score_column.empty() ? -1 : ctx.snapshot.node_score_row(args.score_column);
  st.filter_column = arena.push(args.filter_column.data(), args.filter_column.size());
  st.filter_default_fails = args.filter_default_fails ? 1 : 0;
  st.score_default = static_cast<uint8_t>(args.score_default);
  switch (args.score_normalization) {
    case NodeDataNormalization::None:
      st.normalize = NormalizeKind::None;
      break;
    case NodeDataNormalization::Default:
      st.normalize = NormalizeKind::Default;
      break;
    case NodeDataNormalization::Reverse:
      st.normalize = NormalizeKind::DefaultReverse;
      break;
  }

  PrepareResult result;
  // No filter column configured, or none of that name yet with nodes
  // without data passing: every node passes, the Filter is left out.
  result.filter_passes_all = args.filter_column.empty() || (st.filter_row < 0 && !st.filter_default_fails);
  // No score column configured: nothing to score (PreScore Skip).
  result.skip_score = args.score_column.empty();
  return result;
}

void NodeData::reasons(uint64_t bits, const Snapshot& snap, const State& st, const uint8_t* arena, uint32_t,
                       std::vector<std::string>& out) {
  for (uint32_t bit = 0; bit < 63; ++bit)
    if (((bits >> bit) & 1) && st.filter_row >= 0)
      out.push_back(snap.node_filter_reason(static_cast<uint32_t>(st.filter_row), static_cast<uint8_t>(bit + 1)));
  if (bits & kNoData)
    out.push_back("node(s) had no " + std::string(st.filter_column.data(arena), st.filter_column.count) + " data");
}

}  // namespace bulkscore::plugins
