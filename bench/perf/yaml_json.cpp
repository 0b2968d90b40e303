// YAML to JSON: the YAML 1.2 core schema for plain scalars, and the one
// document loader the config reader and the object templates share.
#include "bench/perf/yaml_json.hpp"

#include "host/input/quote.hpp"
#include "host/input/yaml_reader.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <sstream>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bench/perf/perf.hpp"
#include "bench/perf/text.hpp"
#include "host/common.hpp"
#include "host/io/json_writer.hpp"

namespace bulkscore {
namespace perf_detail {
namespace {

bool all_of_class(std::string_view s, const char* cls) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::strchr(cls, c)) return false;
  return true;
}

}  // namespace

PlainKind classify_plain(std::string_view s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return PlainKind::Null;
  // Booleans as the one YAML reader resolves them (YAML 1.1, as goyaml.v2
  // under sigs.k8s.io/yaml, which scheduler_perf reads with: yes/on/y too).
  if (resolve_yaml_plain(s).type == YamlScalar::Type::Bool) return PlainKind::Bool;
  std::string_view body = s;
  if (body[0] == '+' || body[0] == '-') body.remove_prefix(1);
  if (all_of_class(body, "0123456789")) return PlainKind::Int;
  if (starts_with(s, "0o") && all_of_class(s.substr(2), "01234567")) return PlainKind::Int;
  if (starts_with(s, "0x") && all_of_class(s.substr(2), "0123456789abcdefABCDEF")) return PlainKind::Int;
  if (body == ".inf" || body == ".Inf" || body == ".INF") return PlainKind::Float;
  if (s == ".nan" || s == ".NaN" || s == ".NAN") return PlainKind::Float;
  // [-+]? ( \.[0-9]+ | [0-9]+ ( \.[0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
  size_t i = 0;
  size_t int_digits = 0, frac_digits = 0;
  while (i < body.size() && std::isdigit(static_cast<unsigned char>(body[i]))) ++i, ++int_digits;
  bool dot = false;
  if (i < body.size() && body[i] == '.') {
    dot = true;
    ++i;
    while (i < body.size() && std::isdigit(static_cast<unsigned char>(body[i]))) ++i, ++frac_digits;
  }
  if (int_digits == 0 && frac_digits == 0) return PlainKind::String;
  bool exp = false;
  if (i < body.size() && (body[i] == 'e' || body[i] == 'E')) {
    ++i;
    if (i < body.size() && (body[i] == '+' || body[i] == '-')) ++i;
    size_t ed = 0;
    while (i < body.size() && std::isdigit(static_cast<unsigned char>(body[i]))) ++i, ++ed;
    if (ed == 0) return PlainKind::String;
    exp = true;
  }
  if (i != body.size()) return PlainKind::String;
  return (dot || exp) ? PlainKind::Float : PlainKind::Int;
}

// JSON text for a plain scalar already classified Int; "" when it does not fit.
namespace {

// The digits of a 0o / 0x plain scalar as an unsigned 64-bit value.
std::optional<uint64_t> prefixed_value(std::string_view s) {
  const std::string_view digits = s.substr(2);
  uint64_t v = 0;
  const std::from_chars_result r =
      std::from_chars(digits.data(), digits.data() + digits.size(), v, s[1] == 'o' ? 8 : 16);
  if (r.ec != std::errc() || r.ptr != digits.data() + digits.size()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<int64_t> yaml_int_value(std::string_view s) {
  if (starts_with(s, "0o") || starts_with(s, "0x")) {
    const std::optional<uint64_t> u = prefixed_value(s);
    if (!u || *u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(*u);
  }
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);  // from_chars takes '-' only
  int64_t v = 0;
  const std::from_chars_result r = std::from_chars(s.data(), s.data() + s.size(), v, 10);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string int_json_text(std::string_view s) {
  if (starts_with(s, "0o") || starts_with(s, "0x")) {
    const std::optional<uint64_t> v = prefixed_value(s);
    return v ? std::to_string(*v) : "";
  }
  std::string out;
  std::string_view body = s;
  if (body[0] == '+') body.remove_prefix(1);
  if (body[0] == '-') {
    out += '-';
    body.remove_prefix(1);
  }
  while (body.size() > 1 && body[0] == '0') body.remove_prefix(1);
  out += body;
  return out;
}

// JSON text for a plain scalar classified Float; "" for inf/nan.
std::string float_json_text(std::string_view s) {
  std::string_view body = s;
  std::string out;
  if (body[0] == '+') body.remove_prefix(1);
  if (body[0] == '-') {
    out += '-';
    body.remove_prefix(1);
  }
  if (body[0] == '.' && (body.size() < 2 || !std::isdigit(static_cast<unsigned char>(body[1])))) return "";
  if (body[0] == '.') out += '0';
  for (size_t i = 0; i < body.size(); ++i) {
    out += body[i];
    if (body[i] == '.' && (i + 1 == body.size() || !std::isdigit(static_cast<unsigned char>(body[i + 1])))) out += '0';
  }
  return out;
}

int yaml_line(const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  return m.is_null() ? 0 : m.line + 1;
}

std::string at_line(const std::string& file, const YAML::Node& n) {
  const int line = yaml_line(n);
  return line > 0 ? file + ":" + std::to_string(line) : file;
}

bool is_plain(const YAML::Node& n) { return n.Tag() == "?" || n.Tag().empty(); }

bool is_str_tagged(const YAML::Node& n) {
  return n.Tag() == "!" || n.Tag() == "tag:yaml.org,2002:str" || n.Tag() == "!!str";
}

void emit_json(const YAML::Node& n, std::string& out, const std::string& origin, int depth) {
  // check_yaml_stream bounds the nesting at kMaxYamlDepth before this walk.
  if (depth > static_cast<int>(kMaxYamlDepth))
    throw InputError(at_line(origin, n) + ": mappings and lists nested more than " + std::to_string(kMaxYamlDepth) +
                     " deep");
  switch (n.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      out += "null";
      return;
    case YAML::NodeType::Scalar: {
      const std::string& s = n.Scalar();
      if (is_str_tagged(n) || !is_plain(n)) {
        JsonWriter::escape(out, s);
        return;
      }
      switch (classify_plain(s)) {
        case PlainKind::Null:
          out += "null";
          return;
        case PlainKind::Bool:
          out += resolve_yaml_plain(s).boolean ? "true" : "false";
          return;
        case PlainKind::Int: {
          const std::string t = int_json_text(s);
          if (t.empty())
            throw InputError(at_line(origin, n) + ": integer " + quote_for_message(s) + " does not fit 64 bits");
          out += t;
          return;
        }
        case PlainKind::Float: {
          const std::string t = float_json_text(s);
          if (t.empty())
            JsonWriter::escape(out, s);  // .inf / .nan have no JSON form
          else
            out += t;
          return;
        }
        case PlainKind::String:
          JsonWriter::escape(out, s);
          return;
      }
      return;
    }
    case YAML::NodeType::Sequence: {
      out += '[';
      bool first = true;
      for (const auto& item : n) {
        if (!first) out += ',';
        first = false;
        emit_json(item, out, origin, depth + 1);
      }
      out += ']';
      return;
    }
    case YAML::NodeType::Map: {
      out += '{';
      bool first = true;
      for (auto it = n.begin(); it != n.end(); ++it) {
        if (!it->first.IsScalar()) throw InputError(at_line(origin, it->first) + ": a mapping key must be a scalar");
        if (!first) out += ',';
        first = false;
        JsonWriter::escape(out, it->first.Scalar());
        out += ':';
        emit_json(it->second, out, origin, depth + 1);
      }
      out += '}';
      return;
    }
  }
}

namespace {

[[noreturn]] void throw_yaml_error(const YAML::Exception& e, const std::string& origin) {
  const int line = e.mark.is_null() ? 0 : e.mark.line + 1;
  const auto* parser = dynamic_cast<const YAML::ParserException*>(&e);
  throw InputError(origin + (line ? ":" + std::to_string(line) : "") +
                   ": invalid YAML: " + (parser ? yaml_error_text(*parser) : e.msg));
}

}  // namespace

YAML::Node load_one_document(const std::string& text, const std::string& origin) {
  std::vector<YAML::Node> docs;
  try {
    check_yaml_stream(text, origin);
    docs = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    throw_yaml_error(e, origin);
  }
  if (docs.size() != 1) throw InputError(origin + ": expected one YAML document, found " + std::to_string(docs.size()));
  return docs[0];
}

std::string describe(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Null:
      return "null";
    case YAML::NodeType::Scalar:
      // A whole file can be one scalar: quoted, shortened.
      return quote_for_message(n.Scalar());
    default:
      return "nothing";
  }
}

}  // namespace perf_detail

std::string yaml_to_json(const std::string& yaml_text, const std::string& origin) {
  const YAML::Node doc = perf_detail::load_one_document(yaml_text, origin);
  std::string out;
  perf_detail::emit_json(doc, out, origin, 0);
  return out;
}

}  // namespace bulkscore
