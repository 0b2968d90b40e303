// Small string and number helpers shared by the scheduler_perf reader, the
// template interpreter and the runner (host only, internal to bench/perf).
#pragma once

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

namespace bulkscore::perf_detail {

inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

inline bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

// Paths in a workload file are relative to its folder, as upstream runs each
// config from its own folder.
inline std::string resolve_path(const std::string& base_dir, const std::string& p) {
  if (p.empty()) return p;
  std::filesystem::path path(p);
  if (path.is_absolute() || base_dir.empty()) return path.lexically_normal().string();
  return (std::filesystem::path(base_dir) / path).lexically_normal().string();
}

// Shortest decimal digits that read back as `v` (finite, non-zero), and the
// decimal exponent of the first digit: v = 0.d1d2d3... * 10^(exp10+1).
inline void shortest_digits(double v, std::string& digits, int& exp10) {
  char buf[40];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*e", prec - 1, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  // buf is "-d.ddde+XX"
  const char* p = buf;
  if (*p == '-') ++p;
  digits.clear();
  for (; *p && *p != 'e'; ++p)
    if (*p != '.') digits += *p;
  exp10 = *p == 'e' ? std::atoi(p + 1) : 0;
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
}

}  // namespace bulkscore::perf_detail
