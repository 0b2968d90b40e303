// Small string and number helpers shared by the scheduler_perf reader, the
// template interpreter and the runner (host only, internal to bench/perf).
#pragma once

#include <cctype>
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

}  // namespace bulkscore::perf_detail
