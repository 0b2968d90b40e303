#include "host/input/yaml_reader.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include "host/common.hpp"
#include "host/input/quote.hpp"

namespace bulkscore {
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
//
// The same pass proves the stream ends (see OnDocumentStart) before LoadAll
// runs the same parser over it, and bounds the nesting (kMaxYamlDepth) where
// it starts, before yaml-cpp's own recursion guard could answer "bad file".
class StreamCheck : public YAML::EventHandler {
 public:
  explicit StreamCheck(std::string origin) : origin_(std::move(origin)) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    // yaml-cpp 0.7 starts a document at a token no node can begin with (',',
    // ']', '}' outside a flow collection: "," is a whole such stream) without
    // consuming it, reports an empty document and returns to the same token:
    // Parser::HandleNextDocument and LoadAll loop forever, LoadAll appending
    // a null document per turn until memory runs out (yaml-cpp issue #1040,
    // fixed upstream after 0.8.0). Two documents starting at the same place
    // mean no progress: refused as go-yaml refuses it.
    if (started_ && !mark.is_null() && mark.pos == last_start_.pos) {
      throw YAML::ParserException(mark, "did not find expected node content");
    }
    started_ = true;
    last_start_ = mark;
  }
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
    if (open_.size() >= kMaxYamlDepth)
      throw InputError(where(mark) + (mark.is_null() ? "" : ": column " + std::to_string(mark.column + 1)) +
                       ": mappings and lists nested more than " + std::to_string(kMaxYamlDepth) +
                       " deep (bulkscore's limit)");
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
  bool started_ = false;
  YAML::Mark last_start_ = YAML::Mark::null_mark();
  std::vector<Open> open_;
  std::unordered_map<YAML::anchor_t, uint64_t> size_;  // expanded size per completed anchor
  uint64_t decoded_ = 0;
  uint64_t from_aliases_ = 0;
};

}  // namespace

std::string yaml_error_text(const YAML::ParserException& e) {
  // yaml-cpp's recursion guard says only "bad file"; check_yaml_stream's
  // bound comes first, so this is a fallback.
  if (dynamic_cast<const YAML::DeepRecursion*>(&e))
    return "mappings and lists nested more than " + std::to_string(kMaxYamlDepth) + " deep";
  return e.msg;
}

void check_yaml_stream(const std::string& text, const std::string& origin) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  StreamCheck check(origin);
  while (parser.HandleNextDocument(check)) {
  }
}

namespace {

constexpr std::string_view kTagPrefix = "tag:yaml.org,2002:";

std::string quoted(std::string_view s) { return quote_for_message(s); }

// ---- integers as Go's strconv.ParseInt(s, 0, 64) / ParseUint(s, 0, 64) read them

struct GoInteger {
  bool negative = false;
  unsigned __int128 magnitude = 0;
  bool overflow = false;  // beyond 128 bits: certainly beyond uint64
};

int digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'z') return c - 'a' + 10;
  if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
  return 99;
}

// Base 0: an optional sign, then 0x/0X hex, 0o/0O octal, 0b/0B binary, a
// leading 0 octal, else decimal; at least one digit. Underscores were
// removed by the caller, as goyaml.v2 does before parsing.
std::optional<GoInteger> parse_go_integer(std::string_view s) {
  GoInteger out;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    out.negative = s[0] == '-';
    s.remove_prefix(1);
  }
  int base = 10;
  if (s.size() >= 2 && s[0] == '0') {
    const char p = s[1];
    if (p == 'x' || p == 'X') {
      base = 16;
      s.remove_prefix(2);
    } else if (p == 'o' || p == 'O') {
      base = 8;
      s.remove_prefix(2);
    } else if (p == 'b' || p == 'B') {
      base = 2;
      s.remove_prefix(2);
    } else {
      base = 8;
      s.remove_prefix(1);
    }
  }
  if (s.empty()) return std::nullopt;
  constexpr unsigned __int128 kMax = ~static_cast<unsigned __int128>(0);
  for (char c : s) {
    const int d = digit_value(c);
    if (d >= base) return std::nullopt;
    if (out.magnitude > (kMax - static_cast<unsigned>(d)) / static_cast<unsigned>(base)) {
      out.overflow = true;
    } else {
      out.magnitude = out.magnitude * static_cast<unsigned>(base) + static_cast<unsigned>(d);
    }
  }
  return out;
}

std::string decimal(unsigned __int128 v, bool negative) {
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  } while (v != 0);
  return negative ? "-" + digits : digits;
}

// ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ (goyaml.v2's float shape).
bool yaml_style_float(std::string_view s) {
  size_t i = 0;
  const auto digits = [&] {
    const size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  } else {
    if (digits() == 0) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

// Go's strconv.ParseFloat(s, 64) for the decimal shapes above; nullopt when
// it is out of range (Go returns an error then, and goyaml.v2 falls back to
// a string).
std::optional<double> parse_decimal_float(const std::string& s) {
  double v = 0;
  const char* first = s.data();
  if (*first == '+') ++first;  // from_chars takes '-' only
  const auto [end, ec] = std::from_chars(first, s.data() + s.size(), v);
  if (end != s.data() + s.size()) return std::nullopt;
  if (ec == std::errc::result_out_of_range) {
    // Overflow is an error in Go; underflow rounds to zero (or a denormal).
    const double huge = std::strtod(s.c_str(), nullptr);
    if (std::isinf(huge)) return std::nullopt;
    return huge;
  }
  if (ec != std::errc()) return std::nullopt;
  return v;
}

YamlScalar make_null() { return YamlScalar{}; }

YamlScalar make_bool(bool b) {
  YamlScalar s;
  s.type = YamlScalar::Type::Bool;
  s.boolean = b;
  return s;
}

YamlScalar make_string(std::string text) {
  YamlScalar s;
  s.type = YamlScalar::Type::String;
  s.text = std::move(text);
  return s;
}

YamlScalar make_float(double v) {
  YamlScalar s;
  s.type = YamlScalar::Type::Float;
  s.number = v;
  return s;
}

YamlScalar make_int(const GoInteger& g) {
  YamlScalar s;
  s.type = YamlScalar::Type::Int;
  const unsigned __int128 kInt64Max = static_cast<unsigned __int128>(std::numeric_limits<int64_t>::max());
  if (g.overflow) {
    s.big = true;
  } else if (g.negative) {
    s.big = g.magnitude > kInt64Max + 1;
  } else {
    s.big = g.magnitude > std::numeric_limits<uint64_t>::max();
  }
  if (!g.overflow) {
    s.text = decimal(g.magnitude, g.negative && g.magnitude != 0);
    if (!g.negative && g.magnitude <= kInt64Max) {
      s.integer = static_cast<int64_t>(g.magnitude);
      s.fits_int64 = true;
    } else if (g.negative && g.magnitude <= kInt64Max + 1) {
      s.integer = static_cast<int64_t>(-static_cast<__int128>(g.magnitude));
      s.fits_int64 = true;
    }
    s.number = static_cast<double>(g.magnitude) * (g.negative ? -1.0 : 1.0);
  } else {
    s.number = g.negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  return s;
}

// goyaml.v2's resolve() for an untagged plain scalar.
YamlScalar resolve_plain(const std::string& in) {
  if (in.empty()) return make_null();
  const char c = in[0];
  const bool sign_or_digit = c == '+' || c == '-' || (c >= '0' && c <= '9');
  const bool in_table = std::string_view("yYnNtTfFoO~").find(c) != std::string_view::npos;
  if (!sign_or_digit && !in_table && c != '.') return make_string(in);

  static const std::set<std::string, std::less<>> kTrue = {"y",    "Y",    "yes", "Yes", "YES", "true",
                                                           "True", "TRUE", "on",  "On",  "ON"};
  static const std::set<std::string, std::less<>> kFalse = {"n",     "N",     "no",  "No",  "NO", "false",
                                                            "False", "FALSE", "off", "Off", "OFF"};
  static const std::set<std::string, std::less<>> kNull = {"~", "null", "Null", "NULL"};
  if (kTrue.count(in)) return make_bool(true);
  if (kFalse.count(in)) return make_bool(false);
  if (kNull.count(in)) return make_null();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  for (const char* s : {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"}) {
    if (in == s) return make_float(kInf);
  }
  for (const char* s : {"-.inf", "-.Inf", "-.INF"}) {
    if (in == s) return make_float(-kInf);
  }
  for (const char* s : {".nan", ".NaN", ".NAN"}) {
    if (in == s) return make_float(std::numeric_limits<double>::quiet_NaN());
  }
  if (in_table) return make_string(in);

  if (c == '.') {
    // Go's ParseFloat on the text as it is (no '_' removal here).
    if (yaml_style_float(in)) {
      if (const std::optional<double> v = parse_decimal_float(in)) return make_float(*v);
    }
    return make_string(in);
  }

  std::string plain;
  plain.reserve(in.size());
  for (char ch : in) {
    if (ch != '_') plain += ch;
  }
  const std::optional<GoInteger> g = parse_go_integer(plain);
  const bool fits_int64 = g && !g->overflow &&
                          (g->negative ? g->magnitude <= static_cast<unsigned __int128>(1) << 63
                                       : g->magnitude < static_cast<unsigned __int128>(1) << 63);
  if (fits_int64) return make_int(*g);
  // ParseUint takes no sign: only an unsigned value up to 2^64 - 1 gets here.
  const bool has_sign = plain[0] == '+' || plain[0] == '-';
  if (g && !g->overflow && !has_sign && g->magnitude <= std::numeric_limits<uint64_t>::max()) return make_int(*g);
  if (yaml_style_float(plain)) {
    if (const std::optional<double> v = parse_decimal_float(plain)) return make_float(*v);
  }
  // A well-formed integer too large for 64 bits: goyaml.v2 keeps it as a big
  // integer (a JSON number no Go integer field accepts).
  if (g) return make_int(*g);
  return make_string(in);
}

bool resolved_as(const YamlScalar& s, std::string_view tag) {
  using T = YamlScalar::Type;
  if (tag == "bool") return s.type == T::Bool;
  if (tag == "int") return s.type == T::Int;
  if (tag == "float") return s.type == T::Float || s.type == T::Int;
  if (tag == "null") return s.type == T::Null;
  return false;
}

std::string type_text(const YamlScalar& s) {
  switch (s.type) {
    case YamlScalar::Type::Null:
      return "null";
    case YamlScalar::Type::Bool:
      return s.boolean ? "the boolean true" : "the boolean false";
    case YamlScalar::Type::Int:
      return "the integer " + s.text;
    case YamlScalar::Type::Float:
      return "a floating-point number";
    case YamlScalar::Type::String:
      return "the string " + quoted(s.text);
  }
  return "a value";
}

std::string describe(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return "null";
  if (n.IsMap()) return "a mapping";
  if (n.IsSequence()) return "a list";
  try {
    const YamlScalar s = resolve_yaml_scalar(n);
    if (s.type == YamlScalar::Type::Float) return "the number " + n.Scalar();
    return type_text(s);
  } catch (const std::invalid_argument&) {
    return quoted(n.Scalar());
  }
}

// Go's strconv.FormatFloat(v, 'g', -1, 32), which sigs.k8s.io/yaml uses to
// put a float into a string field: the shortest float32 digits, %e style
// when the exponent is below -4 or at least 6 (at least two exponent digits).
std::string go_float32_g(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, static_cast<float>(v), std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // "-1.2345e+06"
  const size_t e = sci.find('e');
  std::string mantissa = sci.substr(0, e);
  // The exponent: to_chars writes a sign and at least two digits.
  int exp = 0;
  const char* ep = sci.c_str() + e + 1;
  const bool exp_negative = *ep == '-';
  ep += (*ep == '-' || *ep == '+') ? 1 : 0;
  std::from_chars(ep, sci.c_str() + sci.size(), exp);
  if (exp_negative) exp = -exp;
  bool negative = false;
  if (!mantissa.empty() && mantissa[0] == '-') {
    negative = true;
    mantissa.erase(0, 1);
  }
  std::string digits;
  for (char c : mantissa) {
    if (c != '.') digits += c;
  }
  std::string out = negative ? "-" : "";
  if (exp < -4 || exp >= 6) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    const int a = exp < 0 ? -exp : exp;
    out += exp < 0 ? "e-" : "e+";
    if (a < 10) out += '0';
    out += std::to_string(a);
  } else if (exp < 0) {
    out += "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
  } else {
    const size_t point = static_cast<size_t>(exp) + 1;
    if (digits.size() <= point) {
      out += digits + std::string(point - digits.size(), '0');
    } else {
      out += digits.substr(0, point) + "." + digits.substr(point);
    }
  }
  return out;
}

char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace

YamlScalar resolve_yaml_plain(std::string_view text) { return resolve_plain(std::string(text)); }

YamlScalar resolve_yaml_scalar(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return make_null();
  if (!node.IsScalar()) throw std::invalid_argument("not a scalar");
  const std::string& tag = node.Tag();
  const std::string& value = node.Scalar();
  if (tag == "?") return resolve_plain(value);
  if (tag.rfind(kTagPrefix, 0) == 0) {
    const std::string_view name = std::string_view(tag).substr(kTagPrefix.size());
    if (name == "str" || name == "binary" || name == "timestamp") return make_string(value);
    if (name == "bool" || name == "int" || name == "float" || name == "null") {
      YamlScalar s = resolve_plain(value);
      if (!resolved_as(s, name)) {
        throw std::invalid_argument("cannot read " + quoted(value) + " as !!" + std::string(name));
      }
      if (name == "float" && s.type == YamlScalar::Type::Int) s = make_float(s.number);
      return s;
    }
  }
  // Quoted scalars ("!"), and tags goyaml.v2 does not resolve, stay text.
  return make_string(value);
}

std::string yaml_child(const std::string& path, std::string_view field) {
  std::string out = path;
  append_path_key(out, field);  // the field may be a key from the input
  return out;
}

std::string yaml_at(const std::string& path, size_t index) { return path + "[" + std::to_string(index) + "]"; }

YamlReader::YamlReader(std::string origin, FieldNames names, ScalarStrings strings)
    : YamlReader(std::move(origin), std::string(), names, strings) {}

YamlReader::YamlReader(std::string origin, std::string prefix, FieldNames names, ScalarStrings strings)
    : origin_(std::move(origin)), prefix_(std::move(prefix)), names_(names), strings_(strings) {}

YamlReader YamlReader::for_object(const std::string& object) const {
  return YamlReader(origin_, object + ": ", names_, strings_);
}

void YamlReader::fail(const std::string& path, const std::string& message) const {
  std::string text = origin_ + ": " + prefix_;
  if (!path.empty()) text += path + ": ";
  text += message;
  throw InputError(text);
}

void YamlReader::fail_at(const YAML::Node& node, const std::string& path, const std::string& message) const {
  const YAML::Mark mark = node.Mark();
  if (mark.line < 0) fail(path, message);
  fail(path, message + " (line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1) + ")");
}

std::vector<YAML::Node> YamlReader::load_documents(const std::string& text) const {
  std::vector<YAML::Node> docs;
  try {
    // An alias bomb is refused before any walk of the tree could expand it,
    // and a stream yaml-cpp would never finish before LoadAll starts it.
    check_yaml_stream(text, origin_);
    docs = YAML::LoadAll(text);
  } catch (const YAML::ParserException& e) {
    fail("", "malformed YAML at line " + std::to_string(e.mark.line + 1) + ", column " +
                 std::to_string(e.mark.column + 1) + ": " + yaml_error_text(e));
  } catch (const YAML::Exception& e) {
    fail("", std::string("malformed YAML: ") + e.what());
  }
  while (!docs.empty() && docs.back().IsNull()) docs.pop_back();
  return docs;
}

YAML::Node YamlReader::load_single_mapping(const std::string& text, const std::string& expected) const {
  const std::vector<YAML::Node> docs = load_documents(text);
  if (docs.empty()) fail("", "empty document: expected " + expected);
  if (docs.size() > 1) fail("", "expected one YAML document, found " + std::to_string(docs.size()));
  if (!docs.front().IsMap()) fail_at(docs.front(), "", "the document must be a mapping (" + expected + ")");
  return docs.front();
}

bool YamlReader::same_name(std::string_view a, std::string_view b) const {
  if (names_ == FieldNames::Exact) return a == b;
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  }
  return true;
}

template <typename Names>
void YamlReader::check_map_impl(const YAML::Node& n, const std::string& path, const Names& allowed) const {
  if (!n.IsMap()) fail_at(n, path, "must be a mapping, got " + describe(n));
  std::vector<std::string> seen;
  for (auto it = n.begin(); it != n.end(); ++it) {
    // A copy: the iterator hands out a temporary pair, and a reference into
    // it would dangle (AddressSanitizer: stack-use-after-scope).
    const YAML::Node key = it->first;
    if (!key.IsScalar()) fail_at(key, path, "field names must be strings");
    const std::string& name = key.Scalar();
    bool known = false;
    for (const auto& a : allowed) known = known || same_name(a, name);
    if (!known) fail_at(key, yaml_child(path, name), "unknown field");
    for (const std::string& s : seen) {
      if (same_name(s, name)) fail_at(key, yaml_child(path, name), "field given more than once");
    }
    seen.push_back(name);
  }
}

void YamlReader::check_map(const YAML::Node& n, const std::string& path,
                           std::initializer_list<std::string_view> allowed) const {
  check_map_impl(n, path, allowed);
}

void YamlReader::check_map(const YAML::Node& n, const std::string& path,
                           const std::vector<std::string>& allowed) const {
  check_map_impl(n, path, allowed);
}

YAML::Node YamlReader::field(const YAML::Node& map, std::string_view name) const {
  if (!map.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (it->first.IsScalar() && same_name(it->first.Scalar(), name)) return it->second;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

void YamlReader::check_sequence(const YAML::Node& n, const std::string& path) const {
  if (!n.IsSequence()) fail_at(n, path, "must be a list, got " + describe(n));
}

YamlScalar YamlReader::read_scalar(const YAML::Node& n, const std::string& path) const {
  if (n.IsDefined() && !n.IsNull() && !n.IsScalar()) fail_at(n, path, "must be a single value, got " + describe(n));
  try {
    return resolve_yaml_scalar(n);
  } catch (const std::invalid_argument& e) {
    fail_at(n, path, e.what());
  }
}

int64_t YamlReader::read_int(const YAML::Node& n, const std::string& path, int64_t lo, int64_t hi,
                             const char* type_name) const {
  const std::string expected = std::string("must be an integer (") + type_name + ")";
  if (!n.IsScalar()) fail_at(n, path, expected + ", got " + describe(n));
  const YamlScalar s = read_scalar(n, path);
  const std::string range = std::string("does not fit in ") + type_name + ", got " + n.Scalar();
  if (s.type == YamlScalar::Type::Int) {
    if (!s.fits_int64 || s.integer < lo || s.integer > hi) fail_at(n, path, range);
    return s.integer;
  }
  if (s.type == YamlScalar::Type::Float) {
    // The JSON decoder reads the number's JSON text: an integral float is
    // written without a fraction and fits an integer field.
    if (!std::isfinite(s.number)) fail_at(n, path, expected + ", got " + n.Scalar());
    if (std::trunc(s.number) != s.number || std::fabs(s.number) >= 1e21) {
      fail_at(n, path, expected + ", got " + describe(n));
    }
    if (s.number < static_cast<double>(lo) || s.number > static_cast<double>(hi) || s.number >= 9223372036854775808.0) {
      fail_at(n, path, range);
    }
    return static_cast<int64_t>(s.number);
  }
  fail_at(n, path, expected + ", got " + describe(n));
}

int32_t YamlReader::read_int32(const YAML::Node& n, const std::string& path) const {
  return static_cast<int32_t>(
      read_int(n, path, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), "int32"));
}

int64_t YamlReader::read_int64(const YAML::Node& n, const std::string& path) const {
  return read_int(n, path, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), "int64");
}

double YamlReader::read_number(const YAML::Node& n, const std::string& path) const {
  if (!n.IsScalar()) fail_at(n, path, "must be a number, got " + describe(n));
  const YamlScalar s = read_scalar(n, path);
  if (s.type != YamlScalar::Type::Int && s.type != YamlScalar::Type::Float) {
    fail_at(n, path, "must be a number, got " + describe(n));
  }
  // JSON has no NaN or infinity: the YAML to JSON conversion fails on them.
  if (!std::isfinite(s.number)) fail_at(n, path, "must be a finite number, got " + n.Scalar());
  return s.number;
}

bool YamlReader::read_bool(const YAML::Node& n, const std::string& path) const {
  if (!n.IsScalar()) fail_at(n, path, "must be a boolean, got " + describe(n));
  const YamlScalar s = read_scalar(n, path);
  if (s.type != YamlScalar::Type::Bool) fail_at(n, path, "must be a boolean, got " + describe(n));
  return s.boolean;
}

std::string YamlReader::read_string(const YAML::Node& n, const std::string& path) const {
  if (!n.IsScalar()) fail_at(n, path, "must be a string, got " + describe(n));
  const YamlScalar s = read_scalar(n, path);
  if (s.type == YamlScalar::Type::String) return s.text;
  if (strings_ == ScalarStrings::Convert) {
    switch (s.type) {
      case YamlScalar::Type::Bool:
        return s.boolean ? "true" : "false";
      case YamlScalar::Type::Int:
        if (!s.big) return s.text;
        break;
      case YamlScalar::Type::Float:
        return go_float32_g(s.number);
      default:
        break;
    }
  }
  fail_at(n, path, "must be a string, got " + describe(n) + " (quote it to make it a string)");
}

std::vector<std::string> YamlReader::read_string_list(const YAML::Node& n, const std::string& path) const {
  std::vector<std::string> out;
  if (yaml_absent(n)) return out;
  check_sequence(n, path);
  for (size_t i = 0; i < n.size(); ++i) out.push_back(read_string(n[i], yaml_at(path, i)));
  return out;
}

}  // namespace bulkscore
