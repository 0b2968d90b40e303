// YAML to JSON: the YAML 1.2 core schema for plain scalars, and the one
// document loader the config reader and the object templates share.
#include "bench/perf/yaml_json.hpp"

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
  if (depth > 200) throw InputError(at_line(origin, n) + ": document nested too deeply");
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
          if (t.empty()) throw InputError(at_line(origin, n) + ": integer " + s + " does not fit 64 bits");
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

// go-yaml's guard against alias bombs ("billion laughs"), which upstream gets
// through sigs.k8s.io/yaml: while decoding, count the nodes decoded and those
// decoded inside an alias expansion; once more than 100 come from aliases and
// more than 1,000 were decoded, the alias share may not exceed 99% (up to
// 400,000 nodes), falling linearly to 10% (from 4,000,000 nodes).
//
// yaml-cpp shares an anchored node instead of copying it, so loading is cheap
// but every walk of the tree (emit_json) expands aliases. This pass runs on
// the parser's events before the tree is built: each anchor's expanded size
// is known when its node ends, so the counts are computed, in document order,
// without expanding anything.
class AliasBudget : public YAML::EventHandler {
 public:
  explicit AliasBudget(std::string origin) : origin_(std::move(origin)) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { leaf(mark, anchor); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, const std::string&) override {
    leaf(mark, anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    const auto it = size_.find(anchor);
    // An alias inside its own anchor's node: go-yaml rejects it ("anchor value
    // contains itself"); expanding it would never end.
    if (it == size_.end()) throw InputError(where(mark) + ": an alias refers to its own anchor (a cycle)");
    // go-yaml decodes the alias node itself, then the whole anchored value.
    const uint64_t expanded = saturating_add(1, it->second);
    add_to_parent(expanded);
    decoded_ = saturating_add(decoded_, expanded);
    from_aliases_ = saturating_add(from_aliases_, it->second);
    check(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Open {
    YAML::anchor_t anchor;
    uint64_t size;  // nodes decoded for this collection so far, itself included
  };

  static uint64_t saturating_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
  std::string where(const YAML::Mark& mark) const {
    return mark.is_null() ? origin_ : origin_ + ":" + std::to_string(mark.line + 1);
  }
  void add_to_parent(uint64_t n) {
    if (!open_.empty()) open_.back().size = saturating_add(open_.back().size, n);
  }
  void leaf(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor) size_[anchor] = 1;
    add_to_parent(1);
    decoded_ = saturating_add(decoded_, 1);
    check(mark);
  }
  void open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    open_.push_back({anchor, 1});
    decoded_ = saturating_add(decoded_, 1);
    check(mark);
  }
  void close() {
    const Open done = open_.back();
    open_.pop_back();
    if (done.anchor != YAML::NullAnchor) size_[done.anchor] = done.size;
    add_to_parent(done.size);
  }
  // go-yaml's allowedAliasRatio.
  static double allowed_ratio(uint64_t decoded) {
    if (decoded <= 400000) return 0.99;
    if (decoded >= 4000000) return 0.10;
    return 0.99 - 0.89 * (static_cast<double>(decoded - 400000) / 3600000.0);
  }
  void check(const YAML::Mark& mark) const {
    if (from_aliases_ > 100 && decoded_ > 1000 &&
        static_cast<double>(from_aliases_) / static_cast<double>(decoded_) > allowed_ratio(decoded_))
      throw InputError(where(mark) + ": the document contains excessive aliasing (" + std::to_string(from_aliases_) +
                       " of " + std::to_string(decoded_) + " nodes come from aliases; refused, as go-yaml does)");
  }

  std::string origin_;
  std::vector<Open> open_;
  std::unordered_map<YAML::anchor_t, uint64_t> size_;  // expanded size per completed anchor
  uint64_t decoded_ = 0;
  uint64_t from_aliases_ = 0;
};

[[noreturn]] void throw_yaml_error(const YAML::Exception& e, const std::string& origin) {
  const int line = e.mark.is_null() ? 0 : e.mark.line + 1;
  throw InputError(origin + (line ? ":" + std::to_string(line) : "") + ": invalid YAML: " + e.msg);
}

}  // namespace

YAML::Node load_one_document(const std::string& text, const std::string& origin) {
  std::vector<YAML::Node> docs;
  try {
    // Aliases need a '*': without one there is nothing to expand.
    if (text.find('*') != std::string::npos) {
      std::istringstream in(text);
      YAML::Parser parser(in);
      AliasBudget budget(origin);
      while (parser.HandleNextDocument(budget)) {
      }
    }
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
      return "\"" + n.Scalar() + "\"";
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
