// The replay's table, CSV and gnuplot script, and its list flags.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

#include "bench/replay/replay.hpp"
#include "host/input/quote.hpp"

namespace bulkscore {
namespace {

std::string fixed(double x, int decimals) {
  if (std::isnan(x)) return "-";
  char buf[64];
  // Percentages and counts: far below the buffer's size.
  static_cast<void>(std::snprintf(buf, sizeof buf, "%.*f", decimals, x));
  return buf;
}

std::string csv_number(double x) { return std::isnan(x) ? "" : fixed(x, 4); }

std::string pad_left(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}
std::string pad_right(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string seed_text(const std::vector<uint64_t>& seeds) {
  constexpr size_t kListedSeeds = 12;
  std::string s;
  if (seeds.size() <= kListedSeeds) {
    for (size_t i = 0; i < seeds.size(); ++i) s += (i ? "," : "") + std::to_string(seeds[i]);
  } else {
    s = std::to_string(seeds.front()) + ".." + std::to_string(seeds.back());
  }
  return s + " (" + std::to_string(seeds.size()) + ")";
}

uint64_t parse_u64(const std::string& flag, const std::string& text) {
  uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec == std::errc::invalid_argument || ptr != text.data() + text.size())
    throw InputError(flag + ": expected a non-negative integer, got " + quote_for_message(text));
  if (ec == std::errc::result_out_of_range)
    throw InputError(flag + ": " + quote_for_message(text) + " is out of range 0.." +
                     std::to_string(std::numeric_limits<uint64_t>::max()));
  return v;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t at = text.find(sep, start);
    out.push_back(text.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

// A string gnuplot reads back verbatim: single quotes, a quote doubled.
std::string gnuplot_quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

}  // namespace

LookaheadOrder parse_lookahead_order(const std::string& text) {
  if (text == "score") return LookaheadOrder::Score;
  if (text == "growth") return LookaheadOrder::Growth;
  if (text == "growth-per-gpu") return LookaheadOrder::GrowthPerGpu;
  if (text == "fill") return LookaheadOrder::Fill;
  if (text == "constrained") return LookaheadOrder::Constrained;
  if (text == "decreasing") return LookaheadOrder::Decreasing;
  if (text == "decreasing-cpu") return LookaheadOrder::DecreasingCpu;
  if (text == "decreasing-gpu-pods") return LookaheadOrder::DecreasingGpuPods;
  if (text == "big-shares-first") return LookaheadOrder::BigSharesFirst;
  throw InputError("--lookahead-order: " + quote_for_message(text) +
                   ": expected score, growth, growth-per-gpu, fill, constrained, decreasing, decreasing-cpu, "
                   "decreasing-gpu-pods or big-shares-first");
}

std::vector<uint64_t> parse_seed_list(const std::string& text) {
  constexpr uint64_t kMaxSeeds = 10000;
  std::vector<uint64_t> seeds;
  // A seed given twice would run twice and count twice in the means.
  std::set<uint64_t> seen;
  const auto add = [&](uint64_t s) {
    if (!seen.insert(s).second)
      throw InputError("--seeds: seed " + std::to_string(s) + " is given twice (each seed runs once)");
    seeds.push_back(s);
  };
  for (const std::string& part : split(text, ',')) {
    const size_t dash = part.find('-');
    if (dash == std::string::npos) {
      add(parse_u64("--seeds", part));
    } else {
      const uint64_t lo = parse_u64("--seeds", part.substr(0, dash));
      const uint64_t hi = parse_u64("--seeds", part.substr(dash + 1));
      if (hi < lo) throw InputError("--seeds: empty range " + quote_for_message(part));
      if (hi - lo >= kMaxSeeds) throw InputError("--seeds: range " + quote_for_message(part) + " is too long");
      for (uint64_t s = lo;; ++s) {
        add(s);
        if (s == hi) break;
      }
    }
    if (seeds.size() > kMaxSeeds) throw InputError("--seeds: more than " + std::to_string(kMaxSeeds) + " seeds");
  }
  return seeds;
}

std::vector<int> parse_arrival_points(const std::string& text, int max_pct) {
  std::vector<int> points;
  for (const std::string& part : split(text, ',')) {
    const uint64_t v = parse_u64("--arrivals", part);
    if (v > static_cast<uint64_t>(max_pct))
      throw InputError("--arrivals: " + quote_for_message(part) + " is above " + std::to_string(max_pct) + "%");
    if (std::find(points.begin(), points.end(), static_cast<int>(v)) != points.end())
      throw InputError("--arrivals: " + std::to_string(v) + " is given twice");
    points.push_back(static_cast<int>(v));
  }
  return points;
}

std::string format_replay_table(const ReplayReportHeader& h, const std::vector<PolicySummary>& policies,
                                const std::vector<int>& arrival_points) {
  std::string t;
  t += "nodes: " + h.nodes_path + " (" + std::to_string(h.nodes) + " nodes, " + std::to_string(h.gpus) + " GPUs)\n";
  t += "pods:  " + h.pods_path + " (" + std::to_string(h.pods) + " pods, " + std::to_string(h.typical_tasks) +
       " typical tasks)\n";
  t += "inflation " + fixed(100.0 * h.inflation, 0) + "%, seeds " + seed_text(h.seeds) + ", backend " + h.backend +
       (h.tie_break == "first" ? "" : ", tie-break " + h.tie_break) + "\n\n";
  const std::vector<std::pair<std::string, size_t>> columns{
      {"policy", 11},  {"arrival%", 9},     {"alloc%", 8},        {"sd", 6},
      {"unalloc%", 9}, {"frag ratio%", 12}, {"frag amount%", 13}, {"placed", 9}};
  for (size_t i = 0; i < columns.size(); ++i)
    t += i == 0 ? pad_right(columns[i].first, columns[i].second) : pad_left(columns[i].first, columns[i].second);
  t += "\n";
  for (const PolicySummary& p : policies) {
    if (!p.error.empty()) {
      t += pad_right(p.policy, columns[0].second) + "  not run: " + p.error + "\n";
      continue;
    }
    for (int a : arrival_points) {
      const auto b = static_cast<size_t>(a);
      if (b >= p.alloc_mean.size()) continue;
      const double unalloc = std::isnan(p.alloc_mean[b]) ? p.alloc_mean[b] : 100.0 - p.alloc_mean[b];
      const std::vector<std::string> cells{p.policy,
                                           std::to_string(a),
                                           fixed(p.alloc_mean[b], 2),
                                           fixed(p.alloc_sd[b], 2),
                                           fixed(unalloc, 2),
                                           fixed(p.frag_ratio_mean[b], 1),
                                           fixed(p.frag_amount_mean[b], 2),
                                           fixed(p.placed_mean[b], 0)};
      for (size_t i = 0; i < columns.size(); ++i)
        t += i == 0 ? pad_right(cells[i], columns[i].second) : pad_left(cells[i], columns[i].second);
      t += "\n";
    }
  }
  t += "\n";
  for (const PolicySummary& p : policies) {
    if (!p.error.empty()) continue;
    const double rate = p.schedule_seconds > 0 ? static_cast<double>(p.pods) / p.schedule_seconds : 0.0;
    t += "time " + pad_right(p.policy, 11) + std::to_string(p.seeds.size()) + " seed(s), " + std::to_string(p.pods) +
         " pods: wall " + fixed(p.wall_seconds, 2) + " s, scheduling " + fixed(p.schedule_seconds, 2) + " s (" +
         fixed(rate, 0) + " pods/s)\n";
  }
  return t;
}

std::string format_replay_csv(const std::vector<PolicySummary>& policies) {
  std::string c =
      "policy,arrival_pct,alloc_pct_mean,alloc_pct_sd,unalloc_pct_mean,frag_ratio_pct_mean,frag_amount_pct_mean,"
      "placed_mean\n";
  for (const PolicySummary& p : policies) {
    if (!p.error.empty()) continue;
    for (size_t b = 0; b < p.alloc_mean.size(); ++b) {
      const double unalloc = std::isnan(p.alloc_mean[b]) ? p.alloc_mean[b] : 100.0 - p.alloc_mean[b];
      c += p.policy + "," + std::to_string(b) + "," + csv_number(p.alloc_mean[b]) + "," + csv_number(p.alloc_sd[b]) +
           "," + csv_number(unalloc) + "," + csv_number(p.frag_ratio_mean[b]) + "," +
           csv_number(p.frag_amount_mean[b]) + "," + csv_number(p.placed_mean[b]) + "\n";
    }
  }
  return c;
}

std::string replay_gnuplot_script(const std::vector<PolicySummary>& policies, const std::string& csv_text) {
  std::string s;
  s += "set terminal png size 900,600\n";
  s += "set output\n";  // no name: standard output
  s += "set datafile separator ','\n";
  // The CSV holds policy names and numbers only (format_replay_csv), never
  // a line that ends the datablock.
  s += "$replay << EOD\n" + csv_text;
  if (!csv_text.empty() && csv_text.back() != '\n') s += '\n';
  s += "EOD\n";
  s += "set title 'Unallocated GPU vs arrived workload (mean over seeds)'\n";
  s += "set xlabel 'Arrived workload (% of GPU capacity)'\n";
  s += "set ylabel 'Unallocated GPU (%)'\n";
  s += "set xrange [0:130]\nset yrange [0:*]\nset grid\nset key top right\n";
  std::string plots;
  for (const PolicySummary& p : policies) {
    if (!p.error.empty()) continue;
    // Rows of other policies (and the header) give NaN: not drawn.
    plots += std::string(plots.empty() ? "plot " : ", \\\n     ") + "$replay using 2:(strcol(1) eq " +
             gnuplot_quoted(p.policy) + " ? $5 : NaN) with lines lw 2 title " + gnuplot_quoted(p.policy);
  }
  if (plots.empty()) plots = "plot NaN notitle";
  return s + plots + "\n";
}

}  // namespace bulkscore
