#include "host/cli/explain_table.hpp"

#include <algorithm>
#include <climits>
#include <iterator>
#include <map>

#include "host/cli/cli_text.hpp"
#include "host/input/timestamp.hpp"

namespace bulkscore::cli {

std::string short_plugin_name(const std::string& plugin) {
  static const std::map<std::string, std::string> kShort = {
      {"TaintToleration", "Taint"},       {"NodeAffinity", "NodeAff"},
      {"NodeResourcesFit", "Fit"},        {"NodeResourcesBalancedAllocation", "Balanced"},
      {"ImageLocality", "Image"},         {"PodTopologySpread", "Spread"},
      {"InterPodAffinity", "PodAff"},     {"GpuFragmentation", "FGD"},
      {"GpuBestFit", "BestFit"},          {"GpuDotProduct", "DotProd"},
      {"GpuPacking", "Packing"},          {"GpuClustering", "Cluster"},
      {"GpuRandomFit", "RandomFit"},
  };
  const auto it = kShort.find(plugin);
  return it == kShort.end() ? plugin : it->second;
}

namespace {

constexpr size_t kKeyWidth = 10;  // "feasible  "

std::string pad_left(const std::string& s, size_t w) {
  const size_t n = text_width(s);
  return n >= w ? s : std::string(w - n, ' ') + s;
}
std::string pad_right(const std::string& s, size_t w) {
  const size_t n = text_width(s);
  return n >= w ? s : s + std::string(w - n, ' ');
}

// "key       value", the value wrapped under itself.
void field(std::string& out, const std::string& key, const std::string& value, size_t width) {
  append_wrapped(out, pad_right(key, kKeyWidth), std::string(kKeyWidth, ' '), value, width);
}


// Why the chosen node: the only one, the best total, or a tie and its rule.
std::string chosen_text(const Ranking& r) {
  std::string s = clean_text(r.chosen) + ": ";
  if (r.feasible_nodes == 1) return s + "the only feasible node (upstream does not score then)";
  const std::string at = " at " + std::to_string(r.best_total);
  if (r.tied_at_best <= 1) return s + "the highest total, " + std::to_string(r.best_total);
  const std::string among = std::to_string(r.tied_at_best) + " nodes tied" + at;
  if (r.tie_break == TieBreak::First) return s + "the first (lowest node index) of " + among + " (tie-break first)";
  return s + "random among " + among + " (tie-break random, seed " + std::to_string(r.seed) + ", draw " +
         std::to_string(r.draw) + ")";
}

// How DefaultPreemption's criterion chose the nominated node, in words.
std::string decided_text(const PreemptionExplanation& p) {
  switch (p.decided_by) {
    case PreemptionCriterion::kOnlyCandidate:
      return "the only candidate";
    case PreemptionCriterion::kPdbViolations:
      return "fewest PDB violations (criterion 1 of 5)";
    case PreemptionCriterion::kHighestPriority:
      return "lowest priority of the most important victim (criterion 2 of 5)";
    case PreemptionCriterion::kPrioritySum:
      return "smallest sum of the victims' priorities, each offset by 2^31 (criterion 3 of 5)";
    case PreemptionCriterion::kVictims:
      return "fewest victims (criterion 4 of 5)";
    case PreemptionCriterion::kStartTime:
      return "latest start time among the victims of the highest priority (criterion 5 of 5)";
    case PreemptionCriterion::kNodeIndex:
      break;
  }
  const uint32_t tied = p.left_after.empty() ? 0 : p.left_after.back();
  return "the lowest node index of the " + std::to_string(tied) +
         " candidates the five criteria left tied (bulkscore's rule; upstream takes any of them)";
}

std::string start_text(int64_t ns) { return ns == INT64_MAX ? "-" : format_rfc3339_ns(ns); }

// DefaultPreemption's dry run: what it would nominate and why, and the
// best `top` candidates.
void append_preemption(std::string& out, const PreemptionExplanation& p, uint32_t top, size_t width) {
  out += '\n';
  constexpr size_t kWide = 12;  // "preemption  "
  const auto line = [&](const std::string& key, const std::string& value) {
    append_wrapped(out, pad_right(key, kWide), std::string(kWide, ' '), value, width);
  };
  if (!p.not_eligible.empty()) {
    line("preemption", "none: " + clean_text(p.not_eligible));
    return;
  }
  if (p.potential_nodes == 0) {
    line("preemption",
         "none: no node where evicting pods could help (Filter rejected every node as "
         "UnschedulableAndUnresolvable, or PreFilter rejected the pod)");
    return;
  }
  const std::string looked = std::to_string(p.dry_run_nodes) + " of " + std::to_string(p.potential_nodes) +
                             " potential nodes tried (from #" + std::to_string(p.offset + 1) +
                             " in node order, looking for " + std::to_string(p.num_candidates) + " candidates)";
  if (p.nominated_node.empty()) {
    line("preemption", "none: no candidate; " + looked);
    return;
  }
  const PreemptionCandidate& best = p.candidates.front();
  line("preemption", "nominates " + clean_text(p.nominated_node) + ", evicting " + std::to_string(best.victims.size()) +
                         (best.victims.size() == 1 ? " pod" : " pods") + " (" + std::to_string(best.pdb_violations) +
                         " PDB violations)");
  std::vector<std::string> victims;
  for (const PreemptionVictim& v : best.victims)
    victims.push_back(clean_text(v.pod) + " (priority " + std::to_string(v.priority) + ")");
  append_list_wrapped(out, pad_right("victims", kWide), std::string(kWide, ' '), victims, width);
  line("candidates", std::to_string(p.candidates.size()) + " found; " + looked);
  std::string decided = decided_text(p);
  if (p.candidates.size() > 1 && !p.left_after.empty()) {
    static const char* const kShort[] = {"PDB", "highest", "sum", "victims", "start"};
    decided += "; candidates left after each criterion:";
    for (size_t i = 0; i < p.left_after.size() && i < std::size(kShort); ++i)
      decided += std::string(i ? ", " : " ") + kShort[i] + " " + std::to_string(p.left_after[i]);
  }
  line("decided by", decided);

  // The candidates, best first.
  const size_t shown = std::min<size_t>(p.candidates.size(), std::max<uint32_t>(top, 1));
  std::vector<std::vector<std::string>> cells;
  const std::vector<std::string> header = {"#", "node", "PDB", "highest", "sum", "victims", "start"};
  for (size_t i = 0; i < shown; ++i) {
    const PreemptionCandidate& c = p.candidates[i];
    cells.push_back({std::to_string(i + 1), clean_text(c.node), std::to_string(c.pdb_violations),
                     std::to_string(c.highest_priority), std::to_string(c.priority_sum),
                     std::to_string(c.victims.size()), start_text(c.earliest_start_ns)});
  }
  std::vector<size_t> w(header.size());
  for (size_t k = 0; k < header.size(); ++k) {
    w[k] = text_width(header[k]);
    for (const auto& row : cells) w[k] = std::max(w[k], text_width(row[k]));
  }
  // The node column gives way (down to 12) before a line gets too wide.
  size_t others = 2;
  for (size_t k = 0; k < header.size(); ++k) others += k == 1 ? 0 : w[k] + 2;
  if (others + w[1] > width) w[1] = std::min(w[1], std::max<size_t>(12, width > others ? width - others : 0));
  const auto row_text = [&](char marker, const std::vector<std::string>& row) {
    std::string t = std::string(1, marker) + " ";
    for (size_t k = 0; k < row.size(); ++k) {
      const bool left = k == 1 || k + 1 == row.size();
      const std::string cell = k == 1 ? fit_text(row[k], w[k]) : row[k];
      t += (k ? "  " : "") + (left ? (k + 1 == row.size() ? cell : pad_right(cell, w[k])) : pad_left(cell, w[k]));
    }
    return t + '\n';
  };
  out += '\n';
  append_wrapped(out, "", "",
                 (shown < p.candidates.size() ? "best " + std::to_string(shown) + " of " : "") +
                     std::to_string(p.candidates.size()) + " candidates, best first (* nominated):",
                 width);
  out += row_text(' ', header);
  for (size_t i = 0; i < shown; ++i) out += row_text(i == 0 ? '*' : ' ', cells[i]);
  append_wrapped(out, "columns: ", "  ",
                 "PDB = evictions a PodDisruptionBudget forbids; highest = the most important victim's priority; "
                 "sum = the victims' priorities (compared as each + 2^31); start = the earliest start time among "
                 "the victims of the highest priority (the latest wins)",
                 width);
}

struct Row {
  bool gap = false;  // a "..." line: rows of the sorted list left out
  char marker = ' ';
  uint32_t position = 0;
  const RankedNode* node = nullptr;
};

// The top-k table (and the chosen and named nodes past it), columns split
// into blocks when they do not fit the width.
void append_score_table(std::string& out, const Ranking& r, const std::vector<Row>& rows, size_t width) {
  const size_t P = r.score_plugins.size();
  std::vector<std::vector<std::string>> cells(P);
  std::vector<std::string> totals, names, positions;
  for (const Row& row : rows) {
    if (row.gap) continue;
    for (size_t p = 0; p < P; ++p)
      cells[p].push_back(p < row.node->weighted.size() ? std::to_string(row.node->weighted[p]) : "");
    totals.push_back(std::to_string(row.node->total));
    names.push_back(clean_text(row.node->name));
    positions.push_back(std::to_string(row.position));
  }
  const auto widest = [](const std::vector<std::string>& v, size_t w) {
    for (const auto& s : v) w = std::max(w, text_width(s));
    return w;
  };
  const size_t pos_w = widest(positions, 1);
  size_t name_w = widest(names, 4);
  const size_t total_w = widest(totals, 5);
  std::vector<std::string> headers(P);
  std::vector<size_t> col_w(P);
  size_t sep = 2;
  const auto layout = [&](bool full) {
    size_t sum = 0;
    for (size_t p = 0; p < P; ++p) {
      headers[p] = full ? r.score_plugins[p] : short_plugin_name(r.score_plugins[p]);
      col_w[p] = widest(cells[p], text_width(headers[p]));
      sum += sep + col_w[p];
    }
    return sum;
  };
  // marker, space, position, two spaces, name; each column after `sep`
  // spaces (one when two do not let the row fit).
  const auto fixed = [&] { return 2 + pos_w + 2 + name_w; };
  size_t plugins_w = layout(true);
  const bool full = fixed() + plugins_w + sep + total_w <= width;
  if (!full) plugins_w = layout(false);
  if (fixed() + plugins_w + sep + total_w > width) {
    sep = 1;
    plugins_w = layout(false);
  }
  // The name column gives way first, down to 12 columns, so that at least
  // one score column fits beside it.
  const size_t widest_col = P ? *std::max_element(col_w.begin(), col_w.end()) : 0;
  if (fixed() + plugins_w + sep + total_w > width) {
    const size_t others = 2 + pos_w + 2 + sep + widest_col + sep + total_w;
    name_w = std::min(name_w, std::max<size_t>(12, width > others ? width - others : 0));
  }
  if (fixed() + sep + std::max(widest_col, total_w) > width) {
    // Too narrow for columns: a node per line, its scores wrapped below.
    size_t i = 0;
    for (const Row& row : rows) {
      if (row.gap) {
        out += "  ...\n";
        continue;
      }
      append_wrapped(out, std::string(1, row.marker) + " " + positions[i] + "  ", "    ", names[i], width);
      std::vector<std::string> items;
      for (size_t p = 0; p < P; ++p) items.push_back(short_plugin_name(r.score_plugins[p]) + " " + cells[p][i]);
      items.push_back("total " + totals[i]);
      append_list_wrapped(out, "    ", "    ", items, width);
      ++i;
    }
    for (size_t p = 0; p < P; ++p) headers[p] = short_plugin_name(r.score_plugins[p]);
  } else {
  // Blocks of plugin columns, as many as fit beside the node (at least
  // one); the total goes with the last, or alone when it does not fit there.
  std::vector<std::pair<size_t, size_t>> blocks;
  size_t last_used = fixed();
  for (size_t p = 0; p < P;) {
    size_t used = fixed(), q = p;
    while (q < P && (q == p || used + sep + col_w[q] <= width)) used += sep + col_w[q++];
    blocks.emplace_back(p, q);
    last_used = used;
    p = q;
  }
  if (blocks.empty() || last_used + sep + total_w > width) blocks.emplace_back(P, P);
  for (size_t b = 0; b < blocks.size(); ++b) {
    const auto [from, to] = blocks[b];
    const bool with_total = b + 1 == blocks.size();
    if (b > 0) out += '\n';
    std::string line = "  " + pad_left("#", pos_w) + "  " + pad_right("node", name_w);
    const std::string gap(sep, ' ');
    for (size_t p = from; p < to; ++p) line += gap + pad_left(headers[p], col_w[p]);
    if (with_total) line += gap + pad_left("total", total_w);
    out += line + '\n';
    size_t i = 0;
    for (const Row& row : rows) {
      if (row.gap) {
        out += "  " + pad_left("...", pos_w) + '\n';
        continue;
      }
      line = std::string(1, row.marker) + " " + pad_left(positions[i], pos_w) + "  " +
             pad_right(fit_text(names[i], name_w), name_w);
      for (size_t p = from; p < to; ++p) line += gap + pad_left(cells[p][i], col_w[p]);
      if (with_total) line += gap + pad_left(totals[i], total_w);
      out += line + '\n';
      ++i;
    }
  }
  }
  // What the columns are.
  if (P == 0) {
    append_wrapped(out, "", "", "the profile has no Score plugin for this pod: every total is 0", width);
    return;
  }
  std::vector<std::string> legend;
  for (size_t p = 0; p < P; ++p) {
    std::string item;
    if (headers[p] != r.score_plugins[p]) item += headers[p] + " = ";
    item += r.score_plugins[p];
    if (p < r.score_weights.size()) item += " x" + std::to_string(r.score_weights[p]);
    legend.push_back(std::move(item));
  }
  append_list_wrapped(out, "columns (normalized score x weight): ", "  ", legend, width);
}

}  // namespace

std::string render_explain_table(const Ranking& r, const ExplainTableContext& ctx) {
  const size_t width = std::max<size_t>(ctx.width, 20);
  std::string out;
  field(out, "pod", clean_text(r.pod), width);
  field(out, "profile", clean_text(r.profile), width);
  if (!ctx.pod_group.empty()) field(out, "pod group", clean_text(ctx.pod_group), width);
  if (!ctx.running_on.empty())
    field(out, "warning",
          "the pod is running on node " + clean_text(ctx.running_on) +
              "; explained as if it were pending, without its own requests on that node",
          width);
  const uint32_t n = ctx.num_nodes;
  std::string feasible = std::to_string(r.feasible_nodes) + " of " + std::to_string(n) + " nodes";
  if (r.evaluated_nodes < n && r.message.empty())
    feasible += " (" + std::to_string(r.evaluated_nodes) + " evaluated: the others are outside the PreFilterResult)";
  field(out, "feasible", feasible, width);
  if (r.chosen.empty()) {
    field(out, "chosen", "none: " + clean_text(r.message), width);
  } else {
    field(out, "chosen", chosen_text(r), width);
    // The draw is schedule's for this pod only when the pods before it
    // were scheduled first.
    if (r.tie_break == TieBreak::Random && r.tied_at_best > 1 && ctx.pending_index > 0 && !ctx.scheduled_before)
      field(out, "note",
            "schedule gives this pod draw " + std::to_string(ctx.pending_index) +
                " (its place among the pending pods) after placing the pods before it; --schedule-before "
                "explains it there",
            width);
    if (!r.devices.empty()) {
      std::string d;
      for (size_t i = 0; i < r.devices.size(); ++i) d += (i ? " " : "") + std::to_string(r.devices[i]);
      field(out, "devices", d, width);
    }
  }
  if (!r.batch.empty()) field(out, "batch", clean_text(r.batch), width);
  for (const std::string& w : r.warnings) field(out, "warning", clean_text(w), width);
  for (const std::string& w : ctx.warnings) field(out, "warning", clean_text(w), width);

  // The rejection histogram: nodes per plugin and reason.
  if (!r.rejections.empty()) {
    out += '\n';
    const uint64_t rejected = n >= r.feasible_nodes ? n - r.feasible_nodes : 0;
    field(out, "rejected",
          std::to_string(rejected) + " of " + std::to_string(n) +
              " nodes, by plugin and reason (a node can count under several reasons):",
          width);
    size_t count_w = 1, plugin_w = 6;
    for (const RejectionCount& c : r.rejections) {
      count_w = std::max(count_w, std::to_string(c.nodes).size());
      plugin_w = std::max(plugin_w, text_width(c.plugin.empty() ? "PreFilter" : c.plugin));
    }
    for (const RejectionCount& c : r.rejections) {
      const std::string plugin = clean_text(c.plugin.empty() ? "PreFilter" : c.plugin);
      const std::string head = "  " + pad_left(std::to_string(c.nodes), count_w) + "  " + pad_right(plugin, plugin_w) + "  ";
      if (text_width(head) + 24 <= width) {
        append_wrapped(out, head, std::string(text_width(head), ' '), clean_text(c.reason), width);
      } else {
        // Narrow: the reason on lines of its own below.
        append_wrapped(out, "  " + pad_left(std::to_string(c.nodes), count_w) + "  ", "    ", plugin, width);
        append_wrapped(out, "    ", "    ", clean_text(c.reason), width);
      }
    }
  }

  // The best nodes, then the chosen and named ones past them.
  if (!r.chosen.empty()) {
    std::vector<Row> rows;
    const auto marker = [&](const RankedNode& node) {
      if (node.name == r.chosen) return '*';
      return r.tied_at_best > 1 && node.total == r.best_total ? '=' : ' ';
    };
    for (size_t i = 0; i < r.nodes.size(); ++i)
      rows.push_back({false, marker(r.nodes[i]), static_cast<uint32_t>(i + 1), &r.nodes[i]});
    std::vector<std::pair<uint32_t, const RankedNode*>> extra;
    if (r.chosen_position > r.nodes.size()) extra.emplace_back(r.chosen_position, &r.chosen_node);
    std::vector<RankedNode> named_rows;
    named_rows.reserve(r.named.size());
    for (const NodeVerdictExplanation& v : r.named) {
      if (!v.node.feasible || v.position <= r.nodes.size() || v.position == r.chosen_position) continue;
      RankedNode rn;
      rn.name = v.node.name;
      rn.total = v.node.total;
      for (const auto& s : v.node.scores) {
        rn.raw.push_back(s.raw);
        rn.weighted.push_back(s.weighted);
      }
      named_rows.push_back(std::move(rn));
      extra.emplace_back(v.position, &named_rows.back());
    }
    std::sort(extra.begin(), extra.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    extra.erase(std::unique(extra.begin(), extra.end(),
                            [](const auto& a, const auto& b) { return a.first == b.first; }),
                extra.end());
    uint32_t last = static_cast<uint32_t>(r.nodes.size());
    for (const auto& [pos, node] : extra) {
      if (pos > last + 1) rows.push_back({true, ' ', 0, nullptr});
      rows.push_back({false, marker(*node), pos, node});
      last = pos;
    }
    if (!rows.empty()) {
      out += '\n';
      std::string title = r.nodes.empty() ? "of " + std::to_string(r.feasible_nodes) + " feasible nodes (* chosen"
                                          : "top " + std::to_string(r.nodes.size()) + " of " +
                                                std::to_string(r.feasible_nodes) + " feasible nodes, best first (* chosen";
      if (r.tied_at_best > 1) title += ", = tied at the best total";
      title += "):";
      append_wrapped(out, "", "", title, width);
      append_score_table(out, r, rows, width);
    }
  }

  if (r.preemption) append_preemption(out, *r.preemption, ctx.top, width);

  // The nodes asked for by name.
  if (!r.named.empty()) out += '\n';
  for (const NodeVerdictExplanation& v : r.named) {
    std::string text = clean_text(v.node.name) + ": ";
    if (!v.node.evaluated) {
      text += r.message.empty() || r.rejections.size() != 1 || r.rejections[0].nodes != n
                  ? "not evaluated: outside the PreFilterResult"
                  : "not evaluated: PreFilter rejected the pod";
    } else if (!v.node.feasible) {
      text += "rejected by " + clean_text(v.node.filter_plugin) + " (" + code_name(v.node.filter_code) + ")";
      for (size_t i = 0; i < v.node.filter_reasons.size(); ++i)
        text += (i ? ", " : ": ") + clean_text(v.node.filter_reasons[i]);
    } else {
      text += "feasible, #" + std::to_string(v.position) + " of " + std::to_string(r.feasible_nodes) + ", total " +
              std::to_string(v.node.total);
      if (v.node.name == r.chosen) text += " (chosen)";
    }
    field(out, "node", text, width);
  }
  return wrap_long_lines(out, width);
}

}  // namespace bulkscore::cli
