#include "host/input/labels.hpp"

#include <cctype>

namespace bulkscore {
namespace {

bool alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?, at most 63 characters.
bool is_name_part(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  for (char c : s)
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

// RFC 1123 subdomain: lower-case labels of [a-z0-9-] joined by '.'.
bool is_dns_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    const size_t dot = s.find('.', start);
    const std::string_view label = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (label.empty() || label.size() > 63) return false;
    for (char c : label)
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
    if (label.front() == '-' || label.back() == '-') return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

}  // namespace

bool is_valid_label_value(std::string_view v) { return v.empty() || is_name_part(v); }

bool is_qualified_name(std::string_view k) {
  const size_t slash = k.find('/');
  if (slash == std::string_view::npos) return is_name_part(k);
  if (k.find('/', slash + 1) != std::string_view::npos) return false;
  return is_dns_subdomain(k.substr(0, slash)) && is_name_part(k.substr(slash + 1));
}

}  // namespace bulkscore
