#include "host/cli/cli_text.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "host/input/quote.hpp"

namespace bulkscore::cli {

bool is_terminal(int fd) { return isatty(fd) == 1; }

size_t terminal_width(int fd) {
  if (!is_terminal(fd)) return 0;
  winsize ws{};
  if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (const char* columns = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const long v = std::strtol(columns, &end, 10);
    if (end && *end == '\0' && v > 0 && v < 100000) return static_cast<size_t>(v);
  }
  return 0;
}

namespace {
bool continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// The byte length of the first `columns` characters of `s` (all of it when shorter).
size_t prefix_bytes(std::string_view s, size_t columns) {
  size_t i = 0, seen = 0;
  while (i < s.size()) {
    if (!continuation_byte(s[i])) {
      if (seen == columns) break;
      ++seen;
    }
    ++i;
  }
  return i;
}
}  // namespace

size_t text_width(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += continuation_byte(c) ? 0 : 1;
  return n;
}

std::string clean_text(std::string_view s) {
  std::string out = escape_for_terminal(s);
  for (char& c : out)
    if (c == '\n' || c == '\t' || c == '\r') c = ' ';
  return out;
}

std::string fit_text(std::string_view s, size_t width) {
  if (text_width(s) <= width) return std::string(s);
  if (width <= 3) return std::string(s.substr(0, prefix_bytes(s, width)));
  return std::string(s.substr(0, prefix_bytes(s, width - 3))) + "...";
}

void append_wrapped(std::string& out, std::string_view first, std::string_view rest, std::string_view text,
                    size_t width) {
  std::string_view prefix = first;
  std::string line(prefix);
  size_t used = text_width(prefix);
  bool empty = true;   // no word on the line yet
  bool wrote = false;  // a line was written
  const auto flush = [&] {
    out += line;
    out += '\n';
    wrote = true;
    line.assign(rest);
    used = text_width(rest);
    empty = true;
  };
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    if (i >= text.size()) break;
    size_t j = text.find(' ', i);
    if (j == std::string_view::npos) j = text.size();
    std::string_view word = text.substr(i, j - i);
    i = j;
    const size_t w = text_width(word);
    const size_t need = w + (empty ? 0 : 1);
    if (used + need <= width) {
      if (!empty) line += ' ';
      line += word;
      used += need;
      empty = false;
      continue;
    }
    if (!empty) flush();
    // A word longer than a whole line: broken where the line ends.
    while (used + text_width(word) > width && width > used) {
      const size_t take = prefix_bytes(word, width - used);
      line += word.substr(0, take);
      word.remove_prefix(take);
      empty = false;
      flush();
    }
    line += word;
    used += text_width(word);
    empty = word.empty();
  }
  if (!empty || !wrote) flush();
}

void append_list_wrapped(std::string& out, std::string_view first, std::string_view rest,
                         const std::vector<std::string>& items, size_t width) {
  const auto trimmed = [](std::string s) {
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
  };
  std::string line(first);
  size_t used = text_width(first);
  if (used > width) {
    // A prefix wider than a line: wrapped on lines of its own.
    append_wrapped(out, "", rest, trimmed(line), width);
    line.assign(rest);
    used = text_width(rest);
  }
  bool empty = true;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string item = items[i] + (i + 1 < items.size() ? "," : "");
    const size_t w = text_width(item) + (empty ? 0 : 1);
    if (!empty && used + w > width) {
      out += trimmed(line) + '\n';
      line.assign(rest);
      used = text_width(rest);
      empty = true;
    }
    if (empty && used + text_width(item) > width && line != rest && text_width(rest) + text_width(item) <= width) {
      // Fits on a line of its own: the prefix stays alone.
      out += trimmed(line) + '\n';
      line.assign(rest);
      used = text_width(rest);
    }
    if (empty && used + text_width(item) > width) {
      // Too wide for any line: word-wrapped on lines of its own.
      std::string wrapped;
      append_wrapped(wrapped, line, rest, item, width);
      out += wrapped;
      line.assign(rest);
      used = text_width(rest);
      continue;
    }
    if (!empty) line += ' ';
    line += item;
    used += w;
    empty = false;
  }
  if (!empty || items.empty()) out += trimmed(line) + '\n';
}

std::string wrap_long_lines(std::string_view text, size_t width) {
  if (width < 4) width = 4;
  std::string out;
  out.reserve(text.size());
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    const bool newline = end != std::string_view::npos;
    if (!newline) end = text.size();
    std::string_view line = text.substr(start, end - start);
    bool continued = false;
    while (text_width(line) > width - (continued ? 2 : 0)) {
      const size_t take = prefix_bytes(line, width - (continued ? 2 : 0));
      if (continued) out += "  ";
      out += line.substr(0, take);
      out += '\n';
      line.remove_prefix(take);
      continued = true;
    }
    if (continued) out += "  ";
    out += line;
    if (newline) out += '\n';
    start = end + 1;
  }
  return out;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: Levenshtein plus adjacent transpositions.
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1, 0));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::vector<std::string> closest_words(std::string_view word, const std::vector<std::string>& candidates) {
  // Leading dashes are not part of what was mistyped.
  const auto bare = [](std::string_view s) {
    while (!s.empty() && s.front() == '-') s.remove_prefix(1);
    return s;
  };
  const std::string_view w = bare(word);
  if (w.empty() || w.size() > 100) return {};
  const size_t limit = std::clamp<size_t>(w.size() / 3, 1, 3);
  std::vector<std::pair<size_t, std::string>> found;
  for (const std::string& c : candidates) {
    const std::string_view cb = bare(c);
    if (cb.empty() || cb == w) continue;
    size_t d = edit_distance(w, cb);
    const bool prefix = std::min(w.size(), cb.size()) >= 3 && (cb.substr(0, w.size()) == w || w.substr(0, cb.size()) == cb);
    if (prefix) d = std::min<size_t>(d, 1);
    if (d <= limit) found.emplace_back(d, c);
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (auto& [d, c] : found)
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(std::move(c));
  return out;
}

namespace {
// Upstream's reason texts in a few words, for a one-line summary.
std::string short_reason(std::string_view reason) {
  static const std::pair<std::string_view, std::string_view> kShort[] = {
      {"node(s) didn't match Pod's node affinity/selector", "node affinity/selector"},
      {"node(s) had untolerated taint(s)", "untolerated taint"},
      {"node(s) were unschedulable", "unschedulable nodes"},
      {"node(s) didn't have free ports for the requested pod ports", "host ports"},
      {"node(s) didn't match pod topology spread constraints", "topology spread"},
      {"node(s) didn't match pod affinity rules", "pod affinity"},
      {"node(s) didn't match pod anti-affinity rules", "pod anti-affinity"},
      {"node(s) didn't satisfy existing pods anti-affinity rules", "existing pods' anti-affinity"},
      {"node(s) didn't match the requested node name", "node name"},
  };
  for (const auto& [full, brief] : kShort)
    if (reason == full) return std::string(brief);
  constexpr std::string_view kNodes = "node(s) ";
  if (reason.substr(0, kNodes.size()) == kNodes) reason.remove_prefix(kNodes.size());
  return fit_text(clean_text(reason), 60);
}
}  // namespace

std::string main_unschedulable_reason(std::string_view message) {
  constexpr std::string_view kHead = " nodes are available: ";
  const size_t at = message.find(kHead);
  if (at == std::string_view::npos) return fit_text(clean_text(message), 60);
  std::string_view rest = message.substr(at + kHead.size());
  // The Filter part ends at its period; the PostFilter part after it
  // (" no new claims to deallocate, preemption: ...") is not the reason.
  if (const size_t end = rest.find(". "); end != std::string_view::npos) rest = rest.substr(0, end + 1);
  if (!rest.empty() && rest.back() == '.') rest.remove_suffix(1);
  // "<count> <reason>" entries joined by ", "; a piece that does not start
  // with a count belongs to the previous entry (a reason with a comma), and
  // text without any count is a PreFilter rejection of every node.
  std::vector<std::pair<uint64_t, std::string>> entries;
  size_t i = 0;
  while (i <= rest.size()) {
    size_t j = rest.find(", ", i);
    if (j == std::string_view::npos) j = rest.size();
    const std::string_view piece = rest.substr(i, j - i);
    size_t digits = 0;
    while (digits < piece.size() && piece[digits] >= '0' && piece[digits] <= '9') ++digits;
    if (digits > 0 && digits < 19 && digits < piece.size() && piece[digits] == ' ') {
      entries.emplace_back(std::strtoull(std::string(piece.substr(0, digits)).c_str(), nullptr, 10),
                           std::string(piece.substr(digits + 1)));
    } else if (!entries.empty()) {
      entries.back().second += ", ";
      entries.back().second += piece;
    } else {
      return short_reason(rest);
    }
    i = j + 2;
  }
  if (entries.empty()) return short_reason(rest);
  const auto best = std::max_element(entries.begin(), entries.end(),
                                     [](const auto& a, const auto& b) { return a.first < b.first; });
  return short_reason(best->second);
}

std::string unschedulable_summary(const std::vector<std::pair<std::string, size_t>>& counts, size_t total,
                                  size_t max_groups) {
  std::vector<std::pair<std::string, size_t>> sorted = counts;
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
  std::string out = std::to_string(total) + " unschedulable: ";
  size_t other = 0;
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i >= max_groups) {
      other += sorted[i].second;
      continue;
    }
    out += (i ? ", " : "") + std::to_string(sorted[i].second) + " " + sorted[i].first;
  }
  if (other) out += ", " + std::to_string(other) + " other";
  return out;
}

std::string preemption_summary(size_t victims, size_t preemptors, int64_t pdb_violations) {
  if (preemptors == 0) return "";
  const auto pods = [](size_t n) { return std::to_string(n) + (n == 1 ? " pod" : " pods"); };
  std::string s = "preemption: " + pods(victims) + " evicted by " + pods(preemptors);
  if (pdb_violations > 0) s += ", " + std::to_string(pdb_violations) + " of them against a PodDisruptionBudget";
  return s;
}

}  // namespace bulkscore::cli
