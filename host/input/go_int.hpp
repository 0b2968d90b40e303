// Go's strconv.ParseInt(s, 10, 64), the one decimal integer parser bulkscore
// uses wherever upstream parses one (node-affinity Gt/Lt values, label
// values interned by the snapshot, config scalars after YAML resolution).
#pragma once

#include <charconv>
#include <cstdint>
#include <string_view>
#include <system_error>

namespace bulkscore {

// An optional sign ('+' or '-'), then one or more decimal digits (leading
// zeros allowed), nothing else: no spaces, no underscores, no base prefix.
// False when the text is anything else or the value is outside int64; `out`
// is left alone then.
inline bool parse_go_int64(std::string_view s, int64_t& out) {
  // std::from_chars takes '-' but not '+', and would take "+-1" if we simply
  // skipped a '+'; so the sign is checked here and the digits parsed there.
  if (!s.empty() && s.front() == '+') {
    s.remove_prefix(1);
    if (!s.empty() && s.front() == '-') return false;
  }
  if (s.empty()) return false;
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 10);
  if (ec != std::errc() || end != s.data() + s.size()) return false;
  out = v;
  return true;
}

}  // namespace bulkscore
