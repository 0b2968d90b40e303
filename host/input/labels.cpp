#include "host/input/labels.hpp"

#include <algorithm>

namespace bulkscore {
namespace {

// ASCII only, whatever the locale (std::isalnum is not).
bool is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

constexpr size_t kMaxNameLength = 63;
constexpr size_t kMaxSubdomainLength = 253;

// What a name part and a non-empty label value may hold.
constexpr const char* kNameFormat =
    "may hold only letters, digits, '-', '_' and '.', and must begin and end with a letter or digit "
    "(pattern ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])";

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool matches_name_format(std::string_view s) {
  if (s.empty() || !is_alnum(s.front()) || !is_alnum(s.back())) return false;
  for (char c : s) {
    if (!is_alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// [a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*
bool matches_subdomain_format(std::string_view s) {
  size_t start = 0;
  while (true) {
    const size_t dot = s.find('.', start);
    const std::string_view part = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (part.empty() || !is_lower_alnum(part.front()) || !is_lower_alnum(part.back())) return false;
    for (char c : part) {
      if (!is_lower_alnum(c) && c != '-') return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

std::string max_length(size_t n) { return "must be at most " + std::to_string(n) + " characters long"; }

}  // namespace

std::string dns1123_subdomain_problem(std::string_view s) {
  if (s.size() > kMaxSubdomainLength) return max_length(kMaxSubdomainLength);
  if (!matches_subdomain_format(s)) {
    return "must be a lower-case RFC 1123 subdomain: '.'-separated parts of lower-case letters, digits and '-', "
           "each beginning and ending with a letter or digit (like example.com)";
  }
  return {};
}

std::string dns1123_label_problem(std::string_view s) {
  if (s.size() > kMaxNameLength) return max_length(kMaxNameLength);
  if (s.find('.') != std::string_view::npos || !matches_subdomain_format(s)) {
    return "must be a lower-case RFC 1123 label: lower-case letters, digits and '-', beginning and ending with a "
           "letter or digit (like my-name)";
  }
  return {};
}

std::string dns1035_label_problem(std::string_view s) {
  if (s.size() > kMaxNameLength) return max_length(kMaxNameLength);
  if (s.find('.') != std::string_view::npos || !matches_subdomain_format(s) ||
      !(s.front() >= 'a' && s.front() <= 'z')) {
    return "must be a lower-case RFC 1035 label: lower-case letters, digits and '-', beginning with a letter and "
           "ending with a letter or digit (like my-name)";
  }
  return {};
}

bool is_dns1123_subdomain(std::string_view s) { return s.size() <= kMaxSubdomainLength && matches_subdomain_format(s); }

std::string qualified_name_problem(std::string_view k) {
  std::string_view name = k;
  const size_t slash = k.find('/');
  if (slash != std::string_view::npos) {
    if (k.find('/', slash + 1) != std::string_view::npos) {
      return "must be a qualified name: an optional DNS subdomain prefix and one '/', then a name (like "
             "example.com/MyName)";
    }
    const std::string_view prefix = k.substr(0, slash);
    if (prefix.empty()) return "the prefix before '/' must not be empty";
    const std::string problem = dns1123_subdomain_problem(prefix);
    if (!problem.empty()) return "the prefix before '/' " + problem;
    name = k.substr(slash + 1);
  }
  if (name.empty()) return "the name part must not be empty";
  if (name.size() > kMaxNameLength) return "the name part " + max_length(kMaxNameLength);
  if (!matches_name_format(name)) return std::string("the name part ") + kNameFormat;
  return {};
}

bool is_qualified_name(std::string_view k) { return qualified_name_problem(k).empty(); }

std::string label_value_problem(std::string_view v) {
  if (v.size() > kMaxNameLength) return max_length(kMaxNameLength);
  if (!v.empty() && !matches_name_format(v)) {
    return std::string("a non-empty label value ") + kNameFormat;
  }
  return {};
}

bool is_valid_label_value(std::string_view v) {
  return v.size() <= kMaxNameLength && (v.empty() || matches_name_format(v));
}

bool selector_matches(const LabelSelector& sel, const StringMap& labels) {
  for (const auto& [k, v] : sel.match_labels) {
    const auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  for (const auto& r : sel.match_expressions) {
    const auto it = labels.find(r.key);
    const bool has = it != labels.end();
    const bool in = has && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end();
    if (r.op == "In" && !in) return false;
    if (r.op == "NotIn" && in) return false;
    if (r.op == "Exists" && !has) return false;
    if (r.op == "DoesNotExist" && has) return false;
  }
  return true;
}

}  // namespace bulkscore
