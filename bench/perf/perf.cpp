// `bulkscore perf`: the scheduler_perf format, the workload runner, the
// throughput collector, the results file and the comparison table.
// Semantics are restated from upstream's test/integration/scheduler_perf; see
// docs/perf.md for what is honoured and how the numbers compare.
#include "bench/perf/perf.hpp"

#include <fnmatch.h>
#include <yaml-cpp/yaml.h>

#include <simdjson.h>
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "host/common.hpp"
#include "host/engine/engine.hpp"
#include "host/input/config.hpp"
#include "host/input/k8s_json.hpp"
#include "host/input/quantity.hpp"
#include "host/io/io.hpp"
#include "host/io/json_writer.hpp"

namespace bulkscore {
namespace {

// ============================================================================
// Small helpers
// ============================================================================

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

std::string resolve_path(const std::string& base_dir, const std::string& p) {
  if (p.empty()) return p;
  std::filesystem::path path(p);
  if (path.is_absolute() || base_dir.empty()) return path.lexically_normal().string();
  return (std::filesystem::path(base_dir) / path).lexically_normal().string();
}

// Shortest decimal digits that read back as `v` (finite, non-zero), and the
// decimal exponent of the first digit: v = 0.d1d2d3... * 10^(exp10+1).
void shortest_digits(double v, std::string& digits, int& exp10) {
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

// A number as JSON text, shortest round-trip form, plain notation unless the
// exponent is below -6 or at least 21 (as Go's encoding/json writes float64).
std::string json_number(double v) {
  if (!std::isfinite(v)) return "0";
  if (v == 0) return "0";
  std::string digits;
  int e;
  shortest_digits(v, digits, e);
  std::string out = v < 0 ? "-" : "";
  if (e < -6 || e >= 21) {
    out += digits[0];
    if (digits.size() > 1) out += "." + digits.substr(1);
    char eb[8];
    std::snprintf(eb, sizeof eb, "e%+03d", e);
    out += eb;
    return out;
  }
  if (e < 0) {
    out += "0." + std::string(static_cast<size_t>(-e - 1), '0') + digits;
  } else if (static_cast<size_t>(e) + 1 >= digits.size()) {
    out += digits + std::string(static_cast<size_t>(e) + 1 - digits.size(), '0');
  } else {
    out += digits.substr(0, static_cast<size_t>(e) + 1) + "." + digits.substr(static_cast<size_t>(e) + 1);
  }
  return out;
}

// A float64 as Go's fmt prints it with %v (strconv 'g', shortest): exponent
// form when the exponent is below -4 or at least 6 ("1e+06").
std::string go_float_string(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == 0) return std::signbit(v) ? "-0" : "0";
  std::string digits;
  int e;
  shortest_digits(v, digits, e);
  std::string out = v < 0 ? "-" : "";
  if (e < -4 || e >= 6) {
    out += digits[0];
    if (digits.size() > 1) out += "." + digits.substr(1);
    char eb[8];
    std::snprintf(eb, sizeof eb, "e%+03d", e);
    return out + eb;
  }
  if (e < 0) return out + "0." + std::string(static_cast<size_t>(-e - 1), '0') + digits;
  if (static_cast<size_t>(e) + 1 >= digits.size())
    return out + digits + std::string(static_cast<size_t>(e) + 1 - digits.size(), '0');
  return out + digits.substr(0, static_cast<size_t>(e) + 1) + "." + digits.substr(static_cast<size_t>(e) + 1);
}

// ============================================================================
// YAML 1.2 core schema for plain scalars
// ============================================================================

enum class PlainKind { String, Null, Bool, Int, Float };

bool all_of_class(std::string_view s, const char* cls) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::strchr(cls, c)) return false;
  return true;
}

PlainKind classify_plain(std::string_view s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return PlainKind::Null;
  if (s == "true" || s == "True" || s == "TRUE" || s == "false" || s == "False" || s == "FALSE") return PlainKind::Bool;
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
std::string int_json_text(std::string_view s) {
  if (starts_with(s, "0o") || starts_with(s, "0x")) {
    errno = 0;
    const std::string t(s.substr(2));
    const unsigned long long v = std::strtoull(t.c_str(), nullptr, s[1] == 'o' ? 8 : 16);
    if (errno == ERANGE) return "";
    return std::to_string(v);
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
          out += (s[0] == 't' || s[0] == 'T') ? "true" : "false";
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

YAML::Node load_one_document(const std::string& text, const std::string& origin) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    const int line = e.mark.is_null() ? 0 : e.mark.line + 1;
    throw InputError(origin + (line ? ":" + std::to_string(line) : "") + ": invalid YAML: " + e.msg);
  }
  if (docs.size() != 1) throw InputError(origin + ": expected one YAML document, found " + std::to_string(docs.size()));
  return docs[0];
}

// ============================================================================
// The Go text/template subset
// ============================================================================

struct TValue {
  enum class Kind { Int, Float, String, Bool } kind = Kind::Int;
  int64_t i = 0;
  double f = 0;
  std::string s;
  bool b = false;
};

std::string tvalue_print(const TValue& v) {
  switch (v.kind) {
    case TValue::Kind::Int:
      return std::to_string(v.i);
    case TValue::Kind::Float:
      return go_float_string(v.f);
    case TValue::Kind::String:
      return v.s;
    case TValue::Kind::Bool:
      return v.b ? "true" : "false";
  }
  return "";
}

class TemplateEval {
 public:
  TemplateEval(const PerfValueMap& env, std::string origin) : env_(env), origin_(std::move(origin)) {}

  std::string render(const std::string& text) {
    std::string out;
    size_t pos = 0;
    while (pos < text.size()) {
      const size_t open = text.find("{{", pos);
      if (open == std::string::npos) {
        out.append(text, pos, std::string::npos);
        break;
      }
      out.append(text, pos, open - pos);
      size_t body_start = open + 2;
      // "{{- " trims the whitespace before the action.
      if (body_start + 1 < text.size() && text[body_start] == '-' &&
          std::isspace(static_cast<unsigned char>(text[body_start + 1]))) {
        while (!out.empty() && std::isspace(static_cast<unsigned char>(out.back()))) out.pop_back();
        body_start += 1;
      }
      const size_t close = text.find("}}", body_start);
      if (close == std::string::npos) fail(text, open, "unclosed action");
      size_t body_end = close;
      bool trim_after = false;
      if (body_end >= 2 && text[body_end - 1] == '-' && std::isspace(static_cast<unsigned char>(text[body_end - 2]))) {
        trim_after = true;
        body_end -= 1;
      }
      line_ = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(open), '\n'));
      out += eval_action(text.substr(body_start, body_end - body_start));
      pos = close + 2;
      if (trim_after)
        while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
    }
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& text, size_t at, const std::string& msg) const {
    const int line =
        1 + static_cast<int>(
                std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(std::min(at, text.size())), '\n'));
    throw InputError(origin_ + ":" + std::to_string(line) + ": template: " + msg);
  }
  [[noreturn]] void fail(const std::string& msg) const {
    throw InputError(origin_ + ":" + std::to_string(line_) + ": template: " + msg);
  }

  struct Token {
    enum class Kind { Field, Ident, Number, String, LParen, RParen, End } kind = Kind::End;
    std::string text;
  };

  std::vector<Token> lex(const std::string& body) {
    std::vector<Token> toks;
    size_t i = 0;
    while (i < body.size()) {
      const char c = body[i];
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++i;
      } else if (c == '(' || c == ')') {
        toks.push_back({c == '(' ? Token::Kind::LParen : Token::Kind::RParen, std::string(1, c)});
        ++i;
      } else if (c == '.') {
        size_t j = i + 1;
        while (j < body.size() && (std::isalnum(static_cast<unsigned char>(body[j])) || body[j] == '_')) ++j;
        if (j == i + 1) fail("\".\" alone (the whole environment) is not supported");
        if (j < body.size() && body[j] == '.') fail("nested fields (" + body.substr(i) + ") are not supported");
        toks.push_back({Token::Kind::Field, body.substr(i + 1, j - i - 1)});
        i = j;
      } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                 ((c == '-' || c == '+') && i + 1 < body.size() &&
                  std::isdigit(static_cast<unsigned char>(body[i + 1])))) {
        size_t j = i + 1;
        while (j < body.size() &&
               (std::isalnum(static_cast<unsigned char>(body[j])) || body[j] == '.' || body[j] == '_' ||
                ((body[j] == '+' || body[j] == '-') && (body[j - 1] == 'e' || body[j - 1] == 'E'))))
          ++j;
        toks.push_back({Token::Kind::Number, body.substr(i, j - i)});
        i = j;
      } else if (c == '"' || c == '`') {
        std::string s;
        size_t j = i + 1;
        for (; j < body.size() && body[j] != c; ++j) {
          if (c == '"' && body[j] == '\\' && j + 1 < body.size()) {
            const char e = body[++j];
            s += e == 'n' ? '\n' : e == 't' ? '\t' : e;
          } else {
            s += body[j];
          }
        }
        if (j >= body.size()) fail("unterminated string");
        toks.push_back({Token::Kind::String, s});
        i = j + 1;
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        size_t j = i + 1;
        while (j < body.size() && (std::isalnum(static_cast<unsigned char>(body[j])) || body[j] == '_')) ++j;
        toks.push_back({Token::Kind::Ident, body.substr(i, j - i)});
        i = j;
      } else if (c == '|') {
        fail("pipelines (\"|\") are not supported");
      } else if (c == '$') {
        fail("template variables ($) are not supported");
      } else {
        fail(std::string("unexpected character '") + c + "'");
      }
    }
    toks.push_back({Token::Kind::End, ""});
    return toks;
  }

  std::string eval_action(const std::string& raw) {
    std::string body = raw;
    // Comments: {{/* ... */}}
    size_t b = body.find_first_not_of(" \t\r\n");
    if (b != std::string::npos && body.compare(b, 2, "/*") == 0) {
      if (body.find("*/", b + 2) == std::string::npos) fail("unclosed comment");
      return "";
    }
    toks_ = lex(body);
    k_ = 0;
    if (toks_[0].kind == Token::Kind::End) fail("empty action");
    if (toks_[0].kind == Token::Kind::Ident) {
      static const std::set<std::string> keywords = {"if",       "else",  "end",   "range",    "with", "define",
                                                     "template", "block", "break", "continue", "nil"};
      if (keywords.count(toks_[0].text)) fail("the \"" + toks_[0].text + "\" action is not supported");
    }
    TValue v = eval_command(Token::Kind::End);
    return tvalue_print(v);
  }

  // A command: an operand alone, or a function name followed by arguments,
  // up to `stop` (End or RParen).
  TValue eval_command(Token::Kind stop) {
    const Token& first = toks_[k_];
    if (first.kind == Token::Kind::Ident && first.text != "true" && first.text != "false") {
      const std::string fn = first.text;
      ++k_;
      std::vector<TValue> args;
      while (toks_[k_].kind != stop) {
        if (toks_[k_].kind == Token::Kind::End) fail("missing \")\"");
        args.push_back(eval_operand());
      }
      return call(fn, args);
    }
    TValue v = eval_operand();
    if (toks_[k_].kind != stop) fail("can't give argument to non-function");
    return v;
  }

  TValue eval_operand() {
    const Token t = toks_[k_++];
    switch (t.kind) {
      case Token::Kind::LParen: {
        TValue v = eval_command(Token::Kind::RParen);
        ++k_;  // ")"
        return v;
      }
      case Token::Kind::Field:
        return lookup(t.text);
      case Token::Kind::String: {
        TValue v;
        v.kind = TValue::Kind::String;
        v.s = t.text;
        return v;
      }
      case Token::Kind::Number: {
        TValue v;
        char* end = nullptr;
        errno = 0;
        const long long i = std::strtoll(t.text.c_str(), &end, 0);
        if (*end == '\0' && errno == 0) {
          v.kind = TValue::Kind::Int;
          v.i = i;
          return v;
        }
        const double f = std::strtod(t.text.c_str(), &end);
        if (*end != '\0') fail("bad number " + t.text);
        v.kind = TValue::Kind::Float;
        v.f = f;
        return v;
      }
      case Token::Kind::Ident: {
        if (t.text == "true" || t.text == "false") {
          TValue v;
          v.kind = TValue::Kind::Bool;
          v.b = t.text == "true";
          return v;
        }
        fail("function \"" + t.text + "\" used as an argument; wrap the call in parentheses");
      }
      default:
        fail("unexpected \"" + t.text + "\"");
    }
  }

  TValue lookup(const std::string& name) const {
    const auto it = env_.find(name);
    if (it == env_.end()) {
      std::string known;
      for (const auto& [k, v] : env_) known += (known.empty() ? "" : ", ") + k;
      fail("." + name + " is not defined (defined: " + known + ")");
    }
    TValue v;
    const PerfValue& p = it->second;
    switch (p.kind) {
      case PerfValue::Kind::Number:
        // Index and Count are Go ints; parameters are float64 after JSON decoding.
        if (name == "Index" || name == "Count") {
          v.kind = TValue::Kind::Int;
          v.i = static_cast<int64_t>(p.number);
        } else {
          v.kind = TValue::Kind::Float;
          v.f = p.number;
        }
        return v;
      case PerfValue::Kind::String:
        v.kind = TValue::Kind::String;
        v.s = p.text;
        return v;
      case PerfValue::Kind::Bool:
        v.kind = TValue::Kind::Bool;
        v.b = p.boolean;
        return v;
      default:
        fail("." + name + " is not a number, string or bool");
    }
  }

  double to_float(const TValue& v, const std::string& fn) const {
    switch (v.kind) {
      case TValue::Kind::Int:
        return static_cast<double>(v.i);
      case TValue::Kind::Float:
        return v.f;
      case TValue::Kind::String: {
        char* end = nullptr;
        const double f = std::strtod(v.s.c_str(), &end);
        if (!v.s.empty() && *end == '\0') return f;
        break;
      }
      case TValue::Kind::Bool:
        break;
    }
    fail(fn + ": cannot use " + tvalue_print(v) + " as a number");
  }

  TValue call(const std::string& fn, const std::vector<TValue>& args) {
    auto need = [&](size_t n) {
      if (args.size() != n)
        fail(fn + ": wants " + std::to_string(n) + " arguments, got " + std::to_string(args.size()));
    };
    auto as_int = [](double d) {
      TValue v;
      v.kind = TValue::Kind::Int;
      v.i = static_cast<int64_t>(d);  // Go's int(float64) truncates
      return v;
    };
    auto as_flt = [](double d) {
      TValue v;
      v.kind = TValue::Kind::Float;
      v.f = d;
      return v;
    };
    if (fn == "AddInt" || fn == "AddFloat" || fn == "MultiplyInt" || fn == "MultiplyFloat") {
      const bool add = fn[0] == 'A';
      double acc = add ? 0.0 : 1.0;
      for (const auto& a : args) acc = add ? acc + to_float(a, fn) : acc * to_float(a, fn);
      return fn.size() > 3 && fn.compare(fn.size() - 3, 3, "Int") == 0 ? as_int(acc) : as_flt(acc);
    }
    if (fn == "SubtractInt" || fn == "SubtractFloat") {
      need(2);
      const double d = to_float(args[0], fn) - to_float(args[1], fn);
      return fn == "SubtractInt" ? as_int(d) : as_flt(d);
    }
    if (fn == "DivideInt" || fn == "DivideFloat") {
      need(2);
      const double den = to_float(args[1], fn);
      if (den == 0) fail(fn + ": division by zero");
      const double d = to_float(args[0], fn) / den;
      return fn == "DivideInt" ? as_int(d) : as_flt(d);
    }
    if (fn == "Mod") {
      need(2);
      const int64_t a = static_cast<int64_t>(to_float(args[0], fn));
      const int64_t m = static_cast<int64_t>(to_float(args[1], fn));
      if (m == 0) fail("Mod: division by zero");
      TValue v;
      v.kind = TValue::Kind::Int;
      v.i = a % m;
      return v;
    }
    fail("function \"" + fn +
         "\" is not supported (supported: AddInt, SubtractInt, MultiplyInt, DivideInt, Mod, "
         "AddFloat, SubtractFloat, MultiplyFloat, DivideFloat)");
  }

  const PerfValueMap& env_;
  std::string origin_;
  int line_ = 1;
  std::vector<Token> toks_;
  size_t k_ = 0;
};

}  // namespace

std::string yaml_to_json(const std::string& yaml_text, const std::string& origin) {
  const YAML::Node doc = load_one_document(yaml_text, origin);
  std::string out;
  emit_json(doc, out, origin, 0);
  return out;
}

std::string render_perf_template(const std::string& text, const PerfValueMap& env, const std::string& origin) {
  TemplateEval ev(env, origin);
  return ev.render(text);
}

// ============================================================================
// Parsing performance-config.yaml
// ============================================================================

namespace {

struct ParseCtx {
  std::string file;
  std::string base_dir;
};

[[noreturn]] void fail_at(const ParseCtx& ctx, const YAML::Node& n, const std::string& where, const std::string& msg) {
  throw InputError(at_line(ctx.file, n) + ": " + where + ": " + msg);
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

// A mapping whose fields are looked up case-insensitively (as Go's
// encoding/json matches struct fields) and which rejects unknown fields (as
// upstream's strict decoding does).
class YamlObject {
 public:
  YamlObject(const ParseCtx& ctx, const YAML::Node& node, std::string where)
      : ctx_(ctx), node_(node), where_(std::move(where)) {
    if (node.IsNull()) return;
    if (!node.IsMap()) fail_at(ctx, node, where_, "expected a mapping, got " + describe(node));
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!it->first.IsScalar()) fail_at(ctx, it->first, where_, "a field name must be a scalar");
      entries_.emplace_back(it->first.Scalar(), it->second);
    }
    used_.assign(entries_.size(), false);
  }

  // The field's value, or an undefined node when absent.
  YAML::Node take(std::string_view field) {
    const std::string want = lower(field);
    for (size_t i = 0; i < entries_.size(); ++i) {
      if (lower(entries_[i].first) == want) {
        used_[i] = true;
        return entries_[i].second;
      }
    }
    return YAML::Node(YAML::NodeType::Undefined);
  }

  bool has(std::string_view field) const {
    const std::string want = lower(field);
    for (const auto& e : entries_)
      if (lower(e.first) == want) return true;
    return false;
  }

  void reject_unknown() const {
    for (size_t i = 0; i < entries_.size(); ++i)
      if (!used_[i]) fail_at(ctx_, entries_[i].second, where_, "unknown field \"" + entries_[i].first + "\"");
  }

  const std::string& where() const { return where_; }
  std::string field(std::string_view f) const { return where_ + "." + std::string(f); }
  const YAML::Node& node() const { return node_; }
  const std::vector<std::pair<std::string, YAML::Node>>& entries() const { return entries_; }

 private:
  const ParseCtx& ctx_;
  YAML::Node node_;
  std::string where_;
  std::vector<std::pair<std::string, YAML::Node>> entries_;
  std::vector<bool> used_;
};

bool present(const YAML::Node& n) { return n.IsDefined() && !n.IsNull(); }

std::string read_string(const ParseCtx& ctx, const YAML::Node& n, const std::string& where) {
  if (!present(n)) return "";
  if (!n.IsScalar()) fail_at(ctx, n, where, "expected a string, got " + describe(n));
  return n.Scalar();
}

int64_t read_int(const ParseCtx& ctx, const YAML::Node& n, const std::string& where) {
  if (!present(n)) return 0;
  if (n.IsScalar() && is_plain(n) && classify_plain(n.Scalar()) == PlainKind::Int) {
    const std::string t = int_json_text(n.Scalar());
    errno = 0;
    const long long v = std::strtoll(t.c_str(), nullptr, 10);
    if (!t.empty() && errno == 0) return v;
  }
  fail_at(ctx, n, where, "expected an integer, got " + describe(n));
}

double read_number(const ParseCtx& ctx, const YAML::Node& n, const std::string& where) {
  if (!present(n)) return 0;
  if (n.IsScalar() && is_plain(n)) {
    const PlainKind k = classify_plain(n.Scalar());
    if (k == PlainKind::Int) return std::strtod(int_json_text(n.Scalar()).c_str(), nullptr);
    if (k == PlainKind::Float) {
      const std::string t = float_json_text(n.Scalar());
      if (!t.empty()) return std::strtod(t.c_str(), nullptr);
    }
  }
  fail_at(ctx, n, where, "expected a number, got " + describe(n));
}

bool read_bool(const ParseCtx& ctx, const YAML::Node& n, const std::string& where) {
  if (!present(n)) return false;
  if (n.IsScalar() && is_plain(n) && classify_plain(n.Scalar()) == PlainKind::Bool)
    return n.Scalar()[0] == 't' || n.Scalar()[0] == 'T';
  fail_at(ctx, n, where, "expected true or false, got " + describe(n));
}

std::vector<std::string> read_string_list(const ParseCtx& ctx, const YAML::Node& n, const std::string& where) {
  std::vector<std::string> out;
  if (!present(n)) return out;
  if (!n.IsSequence()) fail_at(ctx, n, where, "expected a list, got " + describe(n));
  size_t i = 0;
  for (const auto& item : n) out.push_back(read_string(ctx, item, where + "[" + std::to_string(i++) + "]"));
  return out;
}

StringMap read_string_map(const ParseCtx& ctx, const YAML::Node& n, const std::string& where) {
  StringMap out;
  if (!present(n)) return out;
  if (!n.IsMap()) fail_at(ctx, n, where, "expected a mapping, got " + describe(n));
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string k = it->first.Scalar();
    out[k] = read_string(ctx, it->second, where + "." + k);
  }
  return out;
}

std::map<std::string, bool> read_bool_map(const ParseCtx& ctx, const YAML::Node& n, const std::string& where) {
  std::map<std::string, bool> out;
  if (!present(n)) return out;
  if (!n.IsMap()) fail_at(ctx, n, where, "expected a mapping of names to true/false, got " + describe(n));
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string k = it->first.Scalar();
    out[k] = read_bool(ctx, it->second, where + "." + k);
  }
  return out;
}

PerfValue read_value(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return PerfValue{};
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    if (is_str_tagged(n) || !is_plain(n)) return PerfValue::of_string(s);
    switch (classify_plain(s)) {
      case PlainKind::Null:
        return PerfValue{};
      case PlainKind::Bool:
        return PerfValue::of_bool(s[0] == 't' || s[0] == 'T');
      case PlainKind::Int:
        return PerfValue::of_number(std::strtod(int_json_text(s).c_str(), nullptr));
      case PlainKind::Float: {
        const std::string t = float_json_text(s);
        if (!t.empty()) return PerfValue::of_number(std::strtod(t.c_str(), nullptr));
        return PerfValue::of_string(s);
      }
      case PlainKind::String:
        return PerfValue::of_string(s);
    }
  }
  PerfValue v;
  v.kind = PerfValue::Kind::Other;
  v.text = n.IsMap() ? "a mapping" : "a list";
  return v;
}

PerfValueMap read_value_map(const ParseCtx& ctx, const YAML::Node& n, const std::string& where) {
  PerfValueMap out;
  if (!present(n)) return out;
  if (!n.IsMap()) fail_at(ctx, n, where, "expected a mapping, got " + describe(n));
  for (auto it = n.begin(); it != n.end(); ++it) out[it->first.Scalar()] = read_value(it->second);
  return out;
}

void collect_param_refs(const YAML::Node& n, std::vector<std::string>& out) {
  if (n.IsScalar()) {
    if (starts_with(n.Scalar(), "$") && n.Scalar().size() > 1) out.push_back(n.Scalar().substr(1));
  } else if (n.IsSequence()) {
    for (const auto& item : n) collect_param_refs(item, out);
  } else if (n.IsMap()) {
    for (auto it = n.begin(); it != n.end(); ++it) collect_param_refs(it->second, out);
  }
}

// Upstream's isValidCount with parameterization allowed: a count parameter
// must name a parameter ("$x"); a literal count must not be negative.
void check_count(const ParseCtx& ctx, const YAML::Node& at, const std::string& where, int64_t count,
                 const std::string& param, const char* count_field, const char* param_field) {
  if (!param.empty()) {
    if (!starts_with(param, "$") || param.size() < 2)
      fail_at(ctx, at, where + "." + param_field,
              "\"" + param + "\" must name a workload parameter, like \"$" + param + "\"");
    return;
  }
  if (count < 0) fail_at(ctx, at, where + "." + count_field, "must not be negative");
}

const std::set<std::string>& unsupported_upstream_opcodes() {
  static const std::set<std::string> ops = {
      "allocResourceClaims", "createAny",  "createResourceClaims",   "createResourceDriver",  "churn",
      "updateAny",           "deletePods", "startCollectingProfile", "stopCollectingProfile", "createPodGroups",
      "waitForPodGroups"};
  return ops;
}

PerfOp parse_create_pods(const ParseCtx& ctx, YamlObject& o, PerfOp op) {
  op.kind = PerfOpKind::CreatePods;
  op.count = read_int(ctx, o.take("count"), o.field("count"));
  op.count_param = read_string(ctx, o.take("countParam"), o.field("countParam"));
  op.count_multiplier_param = read_string(ctx, o.take("countMultiplierParam"), o.field("countMultiplierParam"));
  op.steady_state = read_bool(ctx, o.take("steadyState"), o.field("steadyState"));
  op.steady_state_param = read_string(ctx, o.take("steadyStateParam"), o.field("steadyStateParam"));
  op.duration = read_string(ctx, o.take("duration"), o.field("duration"));
  op.duration_param = read_string(ctx, o.take("durationParam"), o.field("durationParam"));
  op.collect_metrics = read_bool(ctx, o.take("collectMetrics"), o.field("collectMetrics"));
  const YAML::Node ns = o.take("namespace");
  if (present(ns)) op.namespace_name = read_string(ctx, ns, o.field("namespace"));
  const YAML::Node tpl = o.take("podTemplatePath");
  if (present(tpl))
    op.pod_template_path = resolve_path(ctx.base_dir, read_string(ctx, tpl, o.field("podTemplatePath")));
  op.skip_wait_to_completion = read_bool(ctx, o.take("skipWaitToCompletion"), o.field("skipWaitToCompletion"));
  const bool pv = present(o.take("persistentVolumeTemplatePath"));
  const bool pvc = present(o.take("persistentVolumeClaimTemplatePath"));
  op.has_volume_templates = pv || pvc;
  op.template_params = read_value_map(ctx, o.take("templateParams"), o.field("templateParams"));
  op.signature_batch_size = read_int(ctx, o.take("signatureBatchSize"), o.field("signatureBatchSize"));
  op.signature_batch_size_param =
      read_string(ctx, o.take("signatureBatchSizeParam"), o.field("signatureBatchSizeParam"));
  o.reject_unknown();

  check_count(ctx, o.node(), o.where(), op.count, op.count_param, "count", "countParam");
  check_count(ctx, o.node(), o.where(), op.signature_batch_size, op.signature_batch_size_param, "signatureBatchSize",
              "signatureBatchSizeParam");
  if (!op.count_multiplier_param.empty() && !starts_with(op.count_multiplier_param, "$"))
    fail_at(ctx, o.node(), o.field("countMultiplierParam"), "must name a workload parameter (\"$x\")");
  if (op.collect_metrics && op.skip_wait_to_completion)
    fail_at(ctx, o.node(), o.where(), "collectMetrics and skipWaitToCompletion cannot be true at the same time");
  if (op.skip_wait_to_completion && op.steady_state)
    fail_at(ctx, o.node(), o.where(), "skipWaitToCompletion and steadyState cannot be true at the same time");
  return op;
}

PerfOp parse_op(const ParseCtx& ctx, const YAML::Node& node, const std::string& where, bool nested_pods) {
  YamlObject o(ctx, node, where);
  PerfOp op;
  op.opcode = read_string(ctx, o.take("opcode"), o.field("opcode"));
  if (nested_pods) {
    if (!op.opcode.empty() && op.opcode != "createPods")
      fail_at(ctx, node, o.field("opcode"), "must be createPods, got \"" + op.opcode + "\"");
    op.opcode = "createPods";
  }
  op.origin = ctx.file + ": " + where + " (" + op.opcode + ")";
  const std::string w = where + " (" + (op.opcode.empty() ? "no opcode" : op.opcode) + ")";
  YamlObject ob(ctx, node, w);  // the same fields, with the opcode in messages
  ob.take("opcode");
  if (op.opcode.empty()) fail_at(ctx, node, where + ".opcode", "missing");

  if (op.opcode == "createNodes") {
    op.kind = PerfOpKind::CreateNodes;
    op.count = read_int(ctx, ob.take("count"), ob.field("count"));
    op.count_param = read_string(ctx, ob.take("countParam"), ob.field("countParam"));
    const YAML::Node tpl = ob.take("nodeTemplatePath");
    if (present(tpl))
      op.node_template_path = resolve_path(ctx.base_dir, read_string(ctx, tpl, ob.field("nodeTemplatePath")));
    const YAML::Node alloc = ob.take("nodeAllocatableStrategy");
    if (present(alloc)) {
      YamlObject a(ctx, alloc, ob.field("nodeAllocatableStrategy"));
      op.has_node_allocatable_strategy = true;
      op.node_allocatable = read_string_map(ctx, a.take("nodeAllocatable"), a.field("nodeAllocatable"));
      const bool csi = present(a.take("csiNodeAllocatable"));
      const bool migrated = present(a.take("migratedPlugins"));
      op.csi_node_allocatable_ignored = csi || migrated;
      a.reject_unknown();
      for (const auto& [res, q] : op.node_allocatable) {
        try {
          (void)parse_resource_quantity(res, q);
        } catch (const InputError& e) {
          fail_at(ctx, alloc, a.field("nodeAllocatable." + res), e.what());
        }
      }
    }
    const YAML::Node label = ob.take("labelNodePrepareStrategy");
    if (present(label)) {
      YamlObject l(ctx, label, ob.field("labelNodePrepareStrategy"));
      op.has_label_strategy = true;
      op.label_key = read_string(ctx, l.take("labelKey"), l.field("labelKey"));
      op.label_values = read_string_list(ctx, l.take("labelValues"), l.field("labelValues"));
      l.reject_unknown();
      if (op.label_key.empty()) fail_at(ctx, label, l.field("labelKey"), "missing");
      if (op.label_values.empty()) fail_at(ctx, label, l.field("labelValues"), "needs at least one value");
    }
    const YAML::Node uniq = ob.take("uniqueNodeLabelStrategy");
    if (present(uniq)) {
      YamlObject u(ctx, uniq, ob.field("uniqueNodeLabelStrategy"));
      op.has_unique_label_strategy = true;
      op.unique_label_key = read_string(ctx, u.take("labelKey"), u.field("labelKey"));
      u.reject_unknown();
      if (op.unique_label_key.empty()) fail_at(ctx, uniq, u.field("labelKey"), "missing");
    }
    op.template_params = read_value_map(ctx, ob.take("templateParams"), ob.field("templateParams"));
    ob.reject_unknown();
    check_count(ctx, node, w, op.count, op.count_param, "count", "countParam");
  } else if (op.opcode == "createNamespaces") {
    op.kind = PerfOpKind::CreateNamespaces;
    op.prefix = read_string(ctx, ob.take("prefix"), ob.field("prefix"));
    op.count = read_int(ctx, ob.take("count"), ob.field("count"));
    op.count_param = read_string(ctx, ob.take("countParam"), ob.field("countParam"));
    op.has_namespace_template = present(ob.take("namespaceTemplatePath"));
    ob.reject_unknown();
    check_count(ctx, node, w, op.count, op.count_param, "count", "countParam");
  } else if (op.opcode == "createPods") {
    op = parse_create_pods(ctx, ob, op);
  } else if (op.opcode == "createPodSets") {
    op.kind = PerfOpKind::CreatePodSets;
    op.count = read_int(ctx, ob.take("count"), ob.field("count"));
    op.count_param = read_string(ctx, ob.take("countParam"), ob.field("countParam"));
    op.namespace_prefix = read_string(ctx, ob.take("namespacePrefix"), ob.field("namespacePrefix"));
    const YAML::Node inner = ob.take("createPodsOp");
    if (!present(inner)) fail_at(ctx, node, ob.field("createPodsOp"), "missing");
    op.pods_op.push_back(parse_op(ctx, inner, where + ".createPodsOp", true));
    ob.reject_unknown();
    check_count(ctx, node, w, op.count, op.count_param, "count", "countParam");
  } else if (op.opcode == "barrier") {
    op.kind = PerfOpKind::Barrier;
    op.namespaces = read_string_list(ctx, ob.take("namespaces"), ob.field("namespaces"));
    op.label_selector = read_string_map(ctx, ob.take("labelSelector"), ob.field("labelSelector"));
    op.stage_requirement = read_string(ctx, ob.take("stageRequirement"), ob.field("stageRequirement"));
    ob.reject_unknown();
    if (!op.stage_requirement.empty() && op.stage_requirement != "Scheduled" && op.stage_requirement != "Attempted")
      fail_at(ctx, node, ob.field("stageRequirement"),
              "must be Scheduled or Attempted, got \"" + op.stage_requirement + "\"");
  } else if (op.opcode == "sleep") {
    op.kind = PerfOpKind::Sleep;
    op.duration = read_string(ctx, ob.take("duration"), ob.field("duration"));
    op.duration_param = read_string(ctx, ob.take("durationParam"), ob.field("durationParam"));
    ob.reject_unknown();
  } else if (op.opcode == "startCollectingMetrics") {
    op.kind = PerfOpKind::StartCollectingMetrics;
    op.name = read_string(ctx, ob.take("name"), ob.field("name"));
    op.namespaces = read_string_list(ctx, ob.take("namespaces"), ob.field("namespaces"));
    op.label_selector = read_string_map(ctx, ob.take("labelSelector"), ob.field("labelSelector"));
    ob.reject_unknown();
    if (op.namespaces.empty()) fail_at(ctx, node, ob.field("namespaces"), "cannot be empty");
  } else if (op.opcode == "stopCollectingMetrics") {
    op.kind = PerfOpKind::StopCollectingMetrics;
    ob.reject_unknown();
  } else {
    // Not run by bulkscore: keep its parameter references so that they do not
    // count as unused.
    op.kind = PerfOpKind::Unsupported;
    collect_param_refs(node, op.param_refs);
  }
  return op;
}

bool op_collects_metrics(const PerfOp& op) {
  if (op.kind == PerfOpKind::CreatePods) return op.collect_metrics;
  if (op.kind == PerfOpKind::CreatePodSets) return !op.pods_op.empty() && op.pods_op[0].collect_metrics;
  return op.kind == PerfOpKind::StopCollectingMetrics;
}

PerfWorkload parse_workload(const ParseCtx& ctx, const YAML::Node& node, const std::string& where) {
  YamlObject o(ctx, node, where);
  PerfWorkload w;
  w.name = read_string(ctx, o.take("name"), o.field("name"));
  w.origin = at_line(ctx.file, node) + ": " + where + (w.name.empty() ? "" : " (" + w.name + ")");
  const std::string wh = where + (w.name.empty() ? "" : " (" + w.name + ")");
  if (w.name.empty()) fail_at(ctx, node, where + ".name", "missing");
  w.params = read_value_map(ctx, o.take("params"), wh + ".params");
  w.labels = read_string_list(ctx, o.take("labels"), wh + ".labels");
  const YAML::Node th = o.take("threshold");
  if (present(th)) {
    if (th.IsMap()) {
      w.threshold_by_topic = true;
      for (auto it = th.begin(); it != th.end(); ++it)
        (void)read_number(ctx, it->second, wh + ".threshold." + it->first.Scalar());
    } else {
      w.threshold = read_number(ctx, th, wh + ".threshold");
      if (w.threshold < 0) fail_at(ctx, th, wh + ".threshold", "should be non-negative");
    }
  }
  o.take("thresholdMetricSelector");  // only SchedulingThroughput/Average is compared
  w.feature_gates = read_bool_map(ctx, o.take("featureGates"), wh + ".featureGates");
  o.reject_unknown();
  return w;
}

PerfTestCase parse_test_case(const ParseCtx& ctx, const YAML::Node& node, size_t index) {
  const std::string where0 = "[" + std::to_string(index) + "]";
  YamlObject probe(ctx, node, where0);
  PerfTestCase tc;
  tc.name = read_string(ctx, probe.take("name"), where0 + ".name");
  if (tc.name.empty()) fail_at(ctx, node, where0 + ".name", "missing");
  const std::string where = where0 + " (" + tc.name + ")";
  tc.origin = at_line(ctx.file, node) + ": " + where;
  YamlObject o(ctx, node, where);
  o.take("name");
  tc.feature_gates = read_bool_map(ctx, o.take("featureGates"), o.field("featureGates"));
  if (present(o.take("metricsCollectorConfig"))) tc.ignored_fields.push_back("metricsCollectorConfig");
  if (present(o.take("defaultThresholdMetricSelector"))) tc.ignored_fields.push_back("defaultThresholdMetricSelector");
  const std::string sched = read_string(ctx, o.take("schedulerConfigPath"), o.field("schedulerConfigPath"));
  tc.scheduler_config_path = resolve_path(ctx.base_dir, sched);
  const YAML::Node dpt = o.take("defaultPodTemplatePath");
  if (present(dpt))
    tc.default_pod_template_path = resolve_path(ctx.base_dir, read_string(ctx, dpt, o.field("defaultPodTemplatePath")));
  tc.labels = read_string_list(ctx, o.take("labels"), o.field("labels"));

  const YAML::Node tmpl = o.take("workloadTemplate");
  if (present(tmpl)) {
    if (!tmpl.IsSequence())
      fail_at(ctx, tmpl, o.field("workloadTemplate"), "expected a list of ops, got " + describe(tmpl));
    size_t i = 0;
    for (const auto& op : tmpl) {
      tc.ops.push_back(parse_op(ctx, op, where + ".workloadTemplate[" + std::to_string(i) + "]", false));
      ++i;
    }
  }
  const YAML::Node wls = o.take("workloads");
  if (present(wls)) {
    if (!wls.IsSequence()) fail_at(ctx, wls, o.field("workloads"), "expected a list, got " + describe(wls));
    size_t i = 0;
    std::set<std::string> names;
    for (const auto& wn : wls) {
      PerfWorkload w = parse_workload(ctx, wn, where + ".workloads[" + std::to_string(i) + "]");
      if (!names.insert(w.name).second)
        fail_at(ctx, wn, where + ".workloads[" + std::to_string(i) + "].name",
                "workload name " + w.name + " is not unique");
      tc.workloads.push_back(std::move(w));
      ++i;
    }
  }
  o.reject_unknown();
  if (tc.workloads.empty()) fail_at(ctx, node, o.field("workloads"), "no workloads defined");
  if (tc.ops.empty()) fail_at(ctx, node, o.field("workloadTemplate"), "no ops defined");
  if (std::none_of(tc.ops.begin(), tc.ops.end(), op_collects_metrics))
    fail_at(ctx, node, o.field("workloadTemplate"), "no op in the workload template collects metrics");
  return tc;
}

}  // namespace

PerfConfig parse_perf_config(const std::string& yaml_text, const std::string& origin, const std::string& base_dir) {
  const ParseCtx ctx{origin, base_dir};
  const YAML::Node doc = load_one_document(yaml_text, origin);
  PerfConfig cfg;
  cfg.path = origin;
  cfg.base_dir = base_dir;
  if (!doc.IsSequence())
    throw InputError(at_line(origin, doc) + ": expected a list of test cases, got " + describe(doc));
  std::set<std::string> names;
  size_t i = 0;
  for (const auto& tcn : doc) {
    PerfTestCase tc = parse_test_case(ctx, tcn, i);
    if (!names.insert(tc.name).second)
      throw InputError(at_line(origin, tcn) + ": [" + std::to_string(i) + "].name: " + tc.name +
                       ": name is not unique");
    cfg.test_cases.push_back(std::move(tc));
    ++i;
  }
  if (cfg.test_cases.empty()) throw InputError(origin + ": no test cases defined");
  return cfg;
}

PerfConfig load_perf_config(const std::string& path) {
  const std::string text = read_file(path);
  std::string dir = std::filesystem::path(path).parent_path().string();
  return parse_perf_config(text, path, dir);
}

// ============================================================================
// Selecting workloads
// ============================================================================

namespace {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, ',')) {
    const size_t b = cur.find_first_not_of(" \t");
    const size_t e = cur.find_last_not_of(" \t");
    if (b == std::string::npos) continue;
    out.push_back(cur.substr(b, e - b + 1));
  }
  return out;
}

bool labels_enabled(const std::vector<std::string>& selectors, const std::vector<std::string>& labels) {
  for (const std::string& sel : selectors) {
    const bool negate = sel[0] == '-';
    const std::string name = (sel[0] == '-' || sel[0] == '+') ? sel.substr(1) : sel;
    const bool has = std::find(labels.begin(), labels.end(), name) != labels.end();
    if (negate == has) return false;
  }
  return true;
}

}  // namespace

std::vector<PerfSelected> select_perf_workloads(const PerfConfig& config, const std::string& name_filter,
                                                const std::string& label_filter) {
  const std::vector<std::string> patterns = split_commas(name_filter);
  const std::vector<std::string> selectors = split_commas(label_filter);
  std::vector<bool> pattern_used(patterns.size(), false);
  std::vector<PerfSelected> out;
  for (const auto& tc : config.test_cases) {
    for (const auto& w : tc.workloads) {
      const std::string full = tc.name + "/" + w.name;
      bool match = patterns.empty();
      for (size_t i = 0; i < patterns.size(); ++i) {
        const std::string& p = patterns[i];
        if (p == tc.name || fnmatch(p.c_str(), full.c_str(), 0) == 0 ||
            (p.find('/') == std::string::npos && fnmatch(p.c_str(), tc.name.c_str(), 0) == 0)) {
          match = true;
          pattern_used[i] = true;
        }
      }
      if (!match) continue;
      std::vector<std::string> labels = tc.labels;
      labels.insert(labels.end(), w.labels.begin(), w.labels.end());
      if (!labels_enabled(selectors, labels)) continue;
      out.push_back(PerfSelected{&tc, &w});
    }
  }
  for (size_t i = 0; i < patterns.size(); ++i)
    if (!pattern_used[i]) throw InputError(config.path + ": no workload matches \"" + patterns[i] + "\"");
  return out;
}

// ============================================================================
// Throughput
// ============================================================================

PerfThroughput summarize_throughput(std::vector<double> samples) {
  PerfThroughput t;
  t.samples = samples;
  if (samples.empty()) return t;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  double sum = 0;
  for (double s : samples) sum += s;
  auto perc = [&](size_t p) { return samples[(n * p + 99) / 100 - 1]; };
  t.average = sum / static_cast<double>(n);
  t.perc50 = perc(50);
  t.perc90 = perc(90);
  t.perc95 = perc(95);
  t.perc99 = perc(99);
  return t;
}

ThroughputCollector::ThroughputCollector(int64_t start_ns, int64_t window_ns)
    : start_ns_(start_ns), window_ns_(window_ns), next_tick_ns_(start_ns + window_ns) {}

void ThroughputCollector::close_windows_before(int64_t now_ns) {
  while (now_ns >= next_tick_ns_) {
    const uint64_t fresh = scheduled_ - at_last_sample_;
    if (fresh == 0) {
      ++skipped_;
    } else {
      const double seconds = static_cast<double>(window_ns_) * (skipped_ + 1) / 1e9;
      const double rate = static_cast<double>(fresh) / seconds;
      for (uint32_t i = 0; i <= skipped_; ++i) samples_.push_back(rate);
      at_last_sample_ = scheduled_;
      skipped_ = 0;
    }
    next_tick_ns_ += window_ns_;
  }
}

void ThroughputCollector::pod_done(int64_t now_ns, bool scheduled) {
  close_windows_before(now_ns);
  if (scheduled) ++scheduled_;
}

PerfThroughput ThroughputCollector::finish(int64_t end_ns) {
  close_windows_before(end_ns);
  if (samples_.empty() && scheduled_ > 0 && end_ns > start_ns_) {
    PerfThroughput t =
        summarize_throughput({static_cast<double>(scheduled_) * 1e9 / static_cast<double>(end_ns - start_ns_)});
    t.whole_op_fallback = true;
    return t;
  }
  return summarize_throughput(samples_);
}

// ============================================================================
// Building nodes and pods from templates
// ============================================================================

namespace {

const char* const kBuiltinNodeYaml =
    "apiVersion: v1\n"
    "kind: Node\n"
    "metadata:\n"
    "  generateName: {{.Prefix}}\n"
    "status:\n"
    "  capacity: {pods: \"110\", cpu: \"4\", memory: 32Gi}\n"
    "  allocatable: {pods: \"110\", cpu: \"4\", memory: 32Gi}\n"
    "  phase: Running\n"
    "  conditions: [{type: Ready, status: \"True\"}]\n";

const char* const kBuiltinPodYaml =
    "apiVersion: v1\n"
    "kind: Pod\n"
    "metadata:\n"
    "  generateName: pod-\n"
    "spec:\n"
    "  containers:\n"
    "  - name: pause\n"
    "    image: registry.k8s.io/pause:3.10.1\n"
    "    ports: [{containerPort: 80}]\n"
    "    resources:\n"
    "      limits: {cpu: 100m, memory: 500Mi}\n"
    "      requests: {cpu: 100m, memory: 500Mi}\n";

const char* const kPlaceholderName = "bulkscore-perf-placeholder";

// apiserver's generateName alphabet; suffixes here are sequential, not random,
// so that runs are reproducible.
std::string name_suffix(uint64_t n) {
  static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string s;
  for (int i = 0; i < 5 || n > 0; ++i) {
    s += alphabet[n % 27];
    n /= 27;
  }
  std::reverse(s.begin(), s.end());
  return s;
}

template <class T>
struct ParsedObject {
  T object;
  bool has_name = false;      // metadata.name was given
  std::string generate_name;  // metadata.generateName
  bool gated = false;         // pods: spec.schedulingGates is not empty
};

// Prepares a template's YAML tree for the object parser: the name (a
// placeholder when only generateName is given) and the kind.
template <class T>
ParsedObject<T> parse_object(const std::string& yaml_text, const char* kind, const std::string& origin) {
  YAML::Node doc = load_one_document(yaml_text, origin);
  if (!doc.IsMap()) throw InputError(origin + ": expected a " + std::string(kind) + " object, got " + describe(doc));
  ParsedObject<T> out;
  YAML::Node kind_node = doc["kind"];
  if (!kind_node.IsDefined() || kind_node.IsNull()) {
    doc["kind"] = kind;
  } else if (!kind_node.IsScalar() || kind_node.Scalar() != kind) {
    throw InputError(at_line(origin, kind_node) + ": kind: expected " + kind + ", got " + describe(kind_node));
  }
  if (!doc["apiVersion"].IsDefined()) doc["apiVersion"] = "v1";
  YAML::Node meta = doc["metadata"];
  if (!meta.IsDefined() || meta.IsNull()) {
    doc["metadata"] = YAML::Node(YAML::NodeType::Map);
    meta = doc["metadata"];
  }
  if (!meta.IsMap()) throw InputError(at_line(origin, meta) + ": metadata: expected a mapping");
  const YAML::Node name = meta["name"];
  if (name.IsDefined() && name.IsScalar() && !name.Scalar().empty()) {
    out.has_name = true;
  } else {
    meta["name"] = kPlaceholderName;
  }
  const YAML::Node gen = meta["generateName"];
  if (gen.IsDefined() && gen.IsScalar()) out.generate_name = gen.Scalar();
  const YAML::Node& cdoc = doc;  // const lookups never add keys
  const YAML::Node spec = cdoc["spec"];
  if (spec.IsDefined() && spec.IsMap()) {
    const YAML::Node gates = spec["schedulingGates"];
    out.gated = gates.IsDefined() && gates.IsSequence() && gates.size() > 0;
  }
  std::string json;
  emit_json(doc, json, origin, 0);
  if constexpr (std::is_same_v<T, Node>) {
    std::vector<Node> nodes = parse_nodes_json(json, origin);
    if (nodes.size() != 1) throw InputError(origin + ": expected one Node");
    out.object = std::move(nodes[0]);
  } else {
    std::vector<Pod> pods = parse_pods_json(json, origin);
    if (pods.size() != 1) throw InputError(origin + ": expected one Pod");
    out.object = std::move(pods[0]);
  }
  return out;
}

// A template file, rendered per object when it holds {{ }} actions; parsed
// objects are cached by rendered text.
template <class T>
class ObjectTemplate {
 public:
  ObjectTemplate(std::string text, std::string origin, const char* kind)
      : text_(std::move(text)),
        origin_(std::move(origin)),
        kind_(kind),
        templated_(text_.find("{{") != std::string::npos) {}

  const ParsedObject<T>& get(const PerfValueMap& env) {
    if (!templated_) {
      if (!static_) static_ = std::make_unique<ParsedObject<T>>(parse_object<T>(text_, kind_, origin_));
      return *static_;
    }
    std::string rendered = render_perf_template(text_, env, origin_);
    auto it = cache_.find(rendered);
    if (it != cache_.end()) return it->second;
    if (cache_.size() >= 4096) cache_.clear();
    ParsedObject<T> parsed = parse_object<T>(rendered, kind_, origin_);
    return cache_.emplace(std::move(rendered), std::move(parsed)).first->second;
  }

  bool templated() const { return templated_; }

 private:
  std::string text_;
  std::string origin_;
  const char* kind_;
  bool templated_;
  std::unique_ptr<ParsedObject<T>> static_;
  std::unordered_map<std::string, ParsedObject<T>> cache_;
};

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string read_first_line_value(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (starts_with(line, key)) {
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string v = line.substr(colon + 1);
      const size_t b = v.find_first_not_of(" \t");
      return b == std::string::npos ? "" : v.substr(b);
    }
  }
  return "";
}

std::string describe_device(const std::string& backend) {
  if (backend == "cuda") {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
      const std::string model = read_first_line_value((e.path() / "information").string(), "Model");
      if (!model.empty()) return model;
    }
    return "CUDA device";
  }
  std::string model = read_first_line_value("/proc/cpuinfo", "model name");
  if (model.empty()) model = "CPU";
  const unsigned threads = std::thread::hardware_concurrency();
  if (threads) model += " (" + std::to_string(threads) + " hardware threads)";
  return model;
}

// Gates whose requested value is what bulkscore does anyway.
bool gate_matches_bulkscore(const std::string& gate, bool value) {
  // bulkscore runs a full Filter/Score cycle per pod: no batch cache.
  if (gate == "OpportunisticBatching") return !value;
  return false;
}

bool labels_match(const StringMap& labels, const StringMap& selector) {
  for (const auto& [k, v] : selector) {
    const auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  return true;
}

// ============================================================================
// The workload runner
// ============================================================================

class WorkloadRunner {
 public:
  WorkloadRunner(const PerfConfig& config, const PerfTestCase& tc, const PerfWorkload& w, const PerfRunOptions& opt)
      : config_(config), tc_(tc), w_(w), opt_(opt) {}

  PerfWorkloadResult run() {
    const int64_t wall_start = steady_ns();
    res_.test_case = tc_.name;
    res_.workload = w_.name;
    res_.feature_gates = tc_.feature_gates;
    for (const auto& [g, v] : w_.feature_gates) res_.feature_gates[g] = v;
    for (const auto& f : tc_.ignored_fields)
      res_.notes.push_back(f + " is ignored: bulkscore reports SchedulingThroughput only");
    if (w_.threshold_by_topic) res_.notes.push_back("threshold given per topic: not applied");
    for (const auto& [g, v] : res_.feature_gates)
      if (!gate_matches_bulkscore(g, v))
        res_.notes.push_back("feature gate " + g + "=" + (v ? "true" : "false") +
                             " is recorded but not modelled by bulkscore");

    std::vector<PerfOp> ops = unroll_and_patch();

    SchedulerConfig cfg = tc_.scheduler_config_path.empty() ? default_scheduler_config()
                                                            : load_scheduler_config(tc_.scheduler_config_path);
    if (opt_.percentage_of_nodes_to_score >= 0) {
      if (opt_.percentage_of_nodes_to_score > 100)
        throw InputError("percentageOfNodesToScore override must be in 0..100, got " +
                         std::to_string(opt_.percentage_of_nodes_to_score));
      for (auto& p : cfg.profiles) p.percentage_of_nodes_to_score = opt_.percentage_of_nodes_to_score;
    }
    profile_ = cfg.profiles.front();
    res_.percentage_of_nodes_to_score = profile_.percentage_of_nodes_to_score;
    EngineOptions eo;
    eo.backend = opt_.backend;
    engine_ = std::make_unique<Engine>(std::move(cfg), eo);
    res_.backend = engine_->backend_name();
    res_.backend_note = engine_->backend_note();
    res_.device = describe_device(res_.backend);
    progress_.workload = res_.full_name();

    // Bound pods are kept only when a later createNodes will rebuild the snapshot.
    last_create_nodes_ = -1;
    for (size_t i = 0; i < ops.size(); ++i)
      if (ops[i].kind == PerfOpKind::CreateNodes) last_create_nodes_ = static_cast<int64_t>(i);

    for (size_t i = 0; i < ops.size() && !res_.interrupted; ++i) run_op(ops[i], i);

    if (active_ && !res_.interrupted)
      res_.notes.push_back("startCollectingMetrics \"" + active_->name +
                           "\" was never stopped: no result for it (as upstream)");
    if (active_ && res_.interrupted) finish_measurement(*active_, true);
    res_.nodes = static_cast<uint32_t>(cluster_.nodes.size());
    res_.wall_seconds = static_cast<double>(steady_ns() - wall_start) / 1e9;
    progress_.phase = "done";
    if (opt_.on_progress) opt_.on_progress(progress_);
    return std::move(res_);
  }

 private:
  struct Active {
    std::string name;
    std::set<std::string> namespaces;
    StringMap selector;
    ThroughputCollector collector{0};
    int64_t active_ns = 0;  // scheduling time accumulated while collecting
    uint64_t attempted = 0, scheduled = 0, unschedulable = 0, errors = 0;
  };

  // ---- parameters (upstream's patchParams) ----

  const PerfValue& param(const std::string& ref, const PerfOp& op, const char* field) {
    const std::string key = ref.substr(1);
    used_params_.insert(key);
    const auto it = w_.params.find(key);
    if (it == w_.params.end())
      throw InputError(w_.origin + ": parameter " + key + " is undefined (used by " + op.origin + "." + field + ")");
    return it->second;
  }

  int64_t int_param(const std::string& ref, const PerfOp& op, const char* field) {
    const PerfValue& v = param(ref, op, field);
    if (v.kind != PerfValue::Kind::Number)
      throw InputError(w_.origin + ": parameter " + ref.substr(1) + " must be a number (used by " + op.origin + "." +
                       field + ")");
    return static_cast<int64_t>(v.number);
  }

  void patch(PerfOp& op) {
    if (!op.count_param.empty()) op.count = int_param(op.count_param, op, "countParam");
    if (!op.count_multiplier_param.empty())
      op.count *= int_param(op.count_multiplier_param, op, "countMultiplierParam");
    if (!op.signature_batch_size_param.empty())
      op.signature_batch_size = int_param(op.signature_batch_size_param, op, "signatureBatchSizeParam");
    if (!op.duration_param.empty()) {
      const PerfValue& v = param(op.duration_param, op, "durationParam");
      if (v.kind != PerfValue::Kind::String)
        throw InputError(w_.origin + ": parameter " + op.duration_param.substr(1) + " must be a duration string");
      op.duration = v.text;
    }
    if (!op.steady_state_param.empty()) {
      const PerfValue& v = param(op.steady_state_param, op, "steadyStateParam");
      if (v.kind != PerfValue::Kind::Bool)
        throw InputError(w_.origin + ": parameter " + op.steady_state_param.substr(1) + " must be true or false");
      op.steady_state = v.boolean;
    }
    for (auto& [k, v] : op.template_params) {
      if (v.kind == PerfValue::Kind::String && starts_with(v.text, "$")) v = param(v.text, op, "templateParams");
    }
    for (const auto& r : op.param_refs) used_params_.insert(r);
    if (op.count < 0)
      throw InputError(op.origin + ": count resolves to " + std::to_string(op.count) + "; must not be negative");
  }

  std::vector<PerfOp> unroll_and_patch() {
    std::vector<PerfOp> out;
    for (const PerfOp& o : tc_.ops) {
      PerfOp op = o;
      patch(op);
      if (op.kind == PerfOpKind::CreatePodSets) {
        for (int64_t i = 0; i < op.count; ++i) {
          PerfOp inner = op.pods_op[0];
          inner.namespace_name = op.namespace_prefix + "-" + std::to_string(i);
          patch(inner);
          out.push_back(std::move(inner));
        }
        if (op.count == 0) patch(op.pods_op[0]);  // its parameters still count as used
      } else {
        out.push_back(std::move(op));
      }
    }
    std::vector<std::string> unused;
    for (const auto& [k, v] : w_.params)
      if (!used_params_.count(k)) unused.push_back(k);
    if (!unused.empty()) {
      std::string list;
      for (const auto& u : unused) list += (list.empty() ? "" : " ") + u;
      throw InputError(w_.origin + ": the parameters [" + list + "] are defined but unused; check for typos");
    }
    return out;
  }

  // ---- ops ----

  void run_op(const PerfOp& op, size_t index) {
    const std::string tag = op.opcode + " (op " + std::to_string(index) + ")";
    switch (op.kind) {
      case PerfOpKind::CreateNodes:
        create_nodes(op, index);
        break;
      case PerfOpKind::CreateNamespaces:
        for (int64_t i = 0; i < op.count; ++i) namespaces_.insert(op.prefix + "-" + std::to_string(i));
        if (op.has_namespace_template)
          add_note_once(tag + ": namespaceTemplatePath ignored: bulkscore does not model namespace labels");
        break;
      case PerfOpKind::CreatePods:
        if (op.steady_state) {
          res_.not_honoured.push_back("createPods with steadyState (op " + std::to_string(index) + ")");
          add_note_once("createPods steadyState needs pod deletion, which bulkscore does not model: op skipped");
          break;
        }
        create_pods(op, index);
        break;
      case PerfOpKind::Barrier:
        break;  // every pod was attempted synchronously by its createPods op
      case PerfOpKind::Sleep:
        res_.notes.push_back(tag + ": sleep " + (op.duration.empty() ? "0s" : op.duration) +
                             " skipped: no time passes in bulkscore");
        break;
      case PerfOpKind::StartCollectingMetrics: {
        if (active_)
          throw InputError(op.origin + ": metrics collection is overlapping (a collection is already running)");
        active_ = std::make_unique<Active>();
        active_->name = op.name;
        active_->namespaces.insert(op.namespaces.begin(), op.namespaces.end());
        active_->selector = op.label_selector;
        break;
      }
      case PerfOpKind::StopCollectingMetrics:
        if (!active_) throw InputError(op.origin + ": missing startCollectingMetrics operation before stopping");
        finish_measurement(*active_, false);
        active_.reset();
        break;
      case PerfOpKind::CreatePodSets:  // unrolled before running
      case PerfOpKind::Unsupported: {
        const bool known = unsupported_upstream_opcodes().count(op.opcode) != 0;
        res_.not_honoured.push_back(tag);
        res_.notes.push_back(tag + (known ? ": not supported by bulkscore; not run" : ": unknown opcode; not run"));
        break;
      }
    }
  }

  void add_note_once(const std::string& note) {
    if (std::find(res_.notes.begin(), res_.notes.end(), note) == res_.notes.end()) res_.notes.push_back(note);
  }

  void create_nodes(const PerfOp& op, size_t index) {
    progress_.phase = "nodes";
    progress_.done = 0;
    progress_.total = static_cast<uint64_t>(op.count);
    progress_.measured = false;
    if (opt_.on_progress) opt_.on_progress(progress_);
    std::string text, origin;
    PerfValueMap env = op.template_params;
    if (op.node_template_path) {
      text = read_file(*op.node_template_path);
      origin = *op.node_template_path;
    } else {
      text = kBuiltinNodeYaml;
      origin = "built-in node (op " + std::to_string(index) + ")";
      env["Prefix"] = PerfValue::of_string("node-" + std::to_string(index) + "-");
    }
    ObjectTemplate<Node> tmpl(text, origin, "Node");
    const int n = static_cast<int>(op.count);
    if (op.has_node_allocatable_strategy && op.csi_node_allocatable_ignored)
      add_note_once(
          "nodeAllocatableStrategy: csiNodeAllocatable/migratedPlugins ignored (bulkscore has no volume plugins)");
    const int strategies =
        int(op.has_node_allocatable_strategy) + int(op.has_label_strategy) + int(op.has_unique_label_strategy);
    if (strategies > 1)
      res_.notes.push_back("createNodes (op " + std::to_string(index) +
                           "): several prepare strategies; only the first of nodeAllocatable, labelNodePrepare, "
                           "uniqueNodeLabel is applied, as upstream does");
    std::map<std::string, int64_t> allocatable;
    for (const auto& [r, q] : op.node_allocatable) allocatable[r] = parse_resource_quantity(r, q);

    cluster_.nodes.reserve(cluster_.nodes.size() + static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      env["Index"] = PerfValue::of_number(i);
      env["Count"] = PerfValue::of_number(n);
      const ParsedObject<Node>& parsed = tmpl.get(env);
      Node node = parsed.object;
      if (!parsed.has_name) node.name = parsed.generate_name + name_suffix(node_seq_++);
      if (!node_names_.insert(node.name).second)
        throw InputError(origin + ": node name \"" + node.name + "\" is used twice (createNodes op " +
                         std::to_string(index) + ", node " + std::to_string(i) +
                         "); use generateName or {{.Index}} in the name");
      // Nodes are created with the usual hostname label, as upstream's preparer does.
      node.labels["kubernetes.io/hostname"] = node.name;
      if (op.has_node_allocatable_strategy) {
        for (const auto& [r, v] : allocatable) node.allocatable[r] = v;
      } else if (op.has_label_strategy) {
        node.labels[op.label_key] = op.label_values[static_cast<size_t>(i) % op.label_values.size()];
      } else if (op.has_unique_label_strategy) {
        char buf[48];
        std::snprintf(buf, sizeof buf, "00000000-0000-4000-8000-%012" PRIx64, unique_label_seq_++);
        node.labels[op.unique_label_key] = buf;
      }
      cluster_.nodes.push_back(std::move(node));
    }
    snapshot_stale_ = true;
  }

  Pod make_pod(ObjectTemplate<Pod>& tmpl, const std::string& origin, PerfValueMap& env, int i, int n,
               const std::string& ns, const PerfOp& op, bool& gated) {
    env["Index"] = PerfValue::of_number(i);
    env["Count"] = PerfValue::of_number(n);
    const ParsedObject<Pod>& parsed = tmpl.get(env);
    gated = parsed.gated;
    Pod pod = parsed.object;
    pod.namespace_name = ns;
    if (!parsed.has_name) {
      pod.name = parsed.generate_name + name_suffix(pod_seq_++);
    } else if (!named_pods_.insert(pod.key()).second) {
      throw InputError(origin + ": pod name \"" + pod.key() + "\" is used twice (pod " + std::to_string(i) +
                       "); use generateName or {{.Index}} in the name");
    }
    pod.node_name.clear();
    if (op.signature_batch_size > 0)
      pod.labels["signature"] = "signature-label-" + std::to_string(i / op.signature_batch_size);
    return pod;
  }

  void create_pods(const PerfOp& op, size_t index) {
    const std::string ns = op.namespace_name ? *op.namespace_name : "namespace-" + std::to_string(index);
    namespaces_.insert(ns);
    std::optional<std::string> path = op.pod_template_path ? op.pod_template_path : tc_.default_pod_template_path;
    std::string text, origin;
    if (path) {
      text = read_file(*path);
      origin = *path;
    } else {
      text = kBuiltinPodYaml;
      origin = "built-in pod";
    }
    if (op.has_volume_templates)
      add_note_once(
          "createPods: persistentVolume(Claim)TemplatePath ignored: bulkscore has no volume plugins; pods are "
          "scheduled without volumes");

    const int n = static_cast<int>(op.count);
    progress_.phase = "preparing pods";
    progress_.done = 0;
    progress_.total = static_cast<uint64_t>(n);
    progress_.measured = op.collect_metrics;
    progress_.pods_per_second = 0;
    if (opt_.on_progress) opt_.on_progress(progress_);

    ObjectTemplate<Pod> tmpl(text, origin, "Pod");
    PerfValueMap env = op.template_params;
    std::vector<Pod> pods;
    pods.reserve(static_cast<size_t>(n));
    uint64_t gated = 0;
    for (int i = 0; i < n; ++i) {
      bool is_gated = false;
      Pod pod = make_pod(tmpl, origin, env, i, n, ns, op, is_gated);
      // A pod with scheduling gates never leaves the queue's PreEnqueue
      // check, upstream as here: it stays pending and is not attempted.
      if (is_gated)
        ++gated;
      else
        pods.push_back(std::move(pod));
    }
    if (gated) {
      res_.gated_pods += gated;
      res_.notes.push_back("createPods (op " + std::to_string(index) + "): " + std::to_string(gated) +
                           " pods have schedulingGates: left pending, not attempted (as upstream)");
    }
    const int to_schedule = static_cast<int>(pods.size());

    if (snapshot_stale_) {
      engine_->load(cluster_);
      snapshot_stale_ = false;
    }
    const bool keep_bound = last_create_nodes_ > static_cast<int64_t>(index);

    std::unique_ptr<Active> own;
    if (op.collect_metrics) {
      if (active_)
        throw InputError(op.origin + ": metrics collection is overlapping (a startCollectingMetrics is running)");
      own = std::make_unique<Active>();
      own->name = ns;
      own->namespaces.insert(ns);
    }
    Active* m = own ? own.get() : active_.get();

    progress_.phase = op.collect_metrics ? "measured pods" : (m ? "pods (collecting)" : "setup pods");
    const int64_t loop_start = steady_ns();
    const int64_t base = m ? m->active_ns : 0;
    const std::atomic<bool>* stop = opt_.stop;
    progress_.total = static_cast<uint64_t>(to_schedule);
    for (int i = 0; i < to_schedule; ++i) {
      if (stop && stop->load(std::memory_order_relaxed)) {
        res_.interrupted = true;
        break;
      }
      const ScheduleResult r = engine_->schedule(pods[static_cast<size_t>(i)]);
      const int64_t now = steady_ns();
      const bool placed = r.node >= 0;
      const bool counted =
          m && m->namespaces.count(ns) && labels_match(pods[static_cast<size_t>(i)].labels, m->selector);
      if (counted) {
        ++m->attempted;
        if (placed)
          ++m->scheduled;
        else if (r.code == Code::Error)
          ++m->errors;
        else
          ++m->unschedulable;
        m->collector.pod_done(base + (now - loop_start), placed);
      } else {
        ++res_.setup_pods;
        if (!placed) ++res_.setup_unschedulable;
      }
      if (placed && keep_bound) {
        Pod& p = pods[static_cast<size_t>(i)];
        p.node_name = r.node_name;
        cluster_.running_pods.push_back(std::move(p));
      }
      progress_.done = static_cast<uint64_t>(i) + 1;
      progress_.pods_per_second =
          static_cast<double>(i + 1) * 1e9 / static_cast<double>(std::max<int64_t>(1, now - loop_start));
      if (opt_.on_progress) opt_.on_progress(progress_);
    }
    if (m) m->active_ns = base + (steady_ns() - loop_start);
    if (own) finish_measurement(*own, res_.interrupted);
  }

  void finish_measurement(Active& a, bool interrupted) {
    PerfMeasurement pm;
    pm.name = res_.full_name() + "/" + a.name;
    pm.nodes = engine_->snapshot().num_nodes();
    pm.attempted = a.attempted;
    pm.scheduled = a.scheduled;
    pm.unschedulable = a.unschedulable;
    pm.errors = a.errors;
    pm.elapsed_seconds = static_cast<double>(a.active_ns) / 1e9;
    pm.throughput = a.collector.finish(a.active_ns);
    pm.overall_pods_per_second =
        a.active_ns > 0 ? static_cast<double>(a.scheduled) * 1e9 / static_cast<double>(a.active_ns) : 0;
    const double work = static_cast<double>(a.attempted) * static_cast<double>(pm.nodes);
    pm.ns_per_node_per_pod = work > 0 ? static_cast<double>(a.active_ns) / work : 0;
    if (pm.nodes > 0) {
      const uint32_t k =
          num_feasible_nodes_to_find(profile_.percentage_of_nodes_to_score, pm.nodes, !profile_.score.empty());
      pm.nodes_scored_percent = std::min(100.0, 100.0 * k / pm.nodes);
    }
    pm.threshold = w_.threshold_by_topic ? 0 : w_.threshold;
    pm.interrupted = interrupted;
    if (pm.throughput.whole_op_fallback)
      add_note_once(pm.name +
                    ": the measured op took less than one 1-second window; SchedulingThroughput is its overall rate");
    if (pm.unschedulable + pm.errors > 0)
      res_.notes.push_back(pm.name + ": " + std::to_string(pm.unschedulable + pm.errors) +
                           " measured pods could not be placed (one attempt each; upstream would retry them)");
    res_.measurements.push_back(std::move(pm));
  }

  const PerfConfig& config_;
  const PerfTestCase& tc_;
  const PerfWorkload& w_;
  const PerfRunOptions& opt_;
  PerfWorkloadResult res_;
  PerfProgress progress_;
  std::set<std::string> used_params_;
  ProfileConfig profile_;
  std::unique_ptr<Engine> engine_;
  Cluster cluster_;
  bool snapshot_stale_ = true;
  int64_t last_create_nodes_ = -1;
  std::set<std::string> namespaces_;
  std::set<std::string> node_names_;
  std::set<std::string> named_pods_;  // pods whose template fixes metadata.name
  uint64_t node_seq_ = 0;
  uint64_t pod_seq_ = 0;
  uint64_t unique_label_seq_ = 0;
  std::unique_ptr<Active> active_;
};

}  // namespace

PerfWorkloadResult run_perf_workload(const PerfConfig& config, const PerfTestCase& test_case,
                                     const PerfWorkload& workload, const PerfRunOptions& options) {
  WorkloadRunner runner(config, test_case, workload, options);
  return runner.run();
}

PerfRunResult run_perf(const PerfConfig& config, const std::vector<PerfSelected>& selected,
                       const PerfRunOptions& options) {
  PerfRunResult out;
  out.config_path = config.path;
  for (const auto& s : selected) {
    out.workloads.push_back(run_perf_workload(config, *s.test_case, *s.workload, options));
    if (out.workloads.back().interrupted) {
      out.interrupted = true;
      break;
    }
  }
  return out;
}

// ============================================================================
// The results file
// ============================================================================

namespace {

// A JSON emitter that indents with two spaces, as upstream's results files are.
class PrettyJson {
 public:
  explicit PrettyJson(std::string& out) : out_(out) {}
  PrettyJson& begin_object() {
    open('{');
    return *this;
  }
  PrettyJson& end_object() {
    close('}');
    return *this;
  }
  PrettyJson& begin_array() {
    open('[');
    return *this;
  }
  PrettyJson& end_array() {
    close(']');
    return *this;
  }
  PrettyJson& key(std::string_view k) {
    item();
    JsonWriter::escape(out_, k);
    out_ += ": ";
    after_key_ = true;
    return *this;
  }
  PrettyJson& str(std::string_view s) {
    item();
    JsonWriter::escape(out_, s);
    return *this;
  }
  PrettyJson& num(double v) {
    item();
    out_ += json_number(v);
    return *this;
  }
  PrettyJson& integer(uint64_t v) {
    item();
    out_ += std::to_string(v);
    return *this;
  }
  PrettyJson& boolean(bool b) {
    item();
    out_ += b ? "true" : "false";
    return *this;
  }

 private:
  void item() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (!first_.empty()) {
      if (!first_.back()) out_ += ',';
      first_.back() = false;
      newline();
    }
  }
  void open(char c) {
    item();
    out_ += c;
    first_.push_back(true);
  }
  void close(char c) {
    const bool empty = first_.back();
    first_.pop_back();
    if (!empty) newline();
    out_ += c;
  }
  void newline() {
    out_ += '\n';
    out_.append(first_.size() * 2, ' ');
  }
  std::string& out_;
  std::vector<bool> first_;
  bool after_key_ = false;
};

void write_item(PrettyJson& j, const std::vector<std::pair<std::string, double>>& data, const std::string& unit,
                const std::string& metric, const PerfMeasurement& m, const PerfWorkloadResult& w) {
  j.begin_object();
  j.key("data").begin_object();
  for (const auto& [k, v] : data) j.key(k).num(v);
  j.end_object();
  j.key("unit").str(unit);
  // Every item carries the same label set: perfdash shows only items that have
  // the selected value of every label.
  j.key("labels").begin_object();
  j.key("Backend").str(w.backend);
  j.key("Device").str(w.device);
  j.key("Metric").str(metric);
  j.key("Name").str(m.name);
  j.key("Nodes").str(std::to_string(m.nodes));
  j.end_object();
  j.end_object();
}

}  // namespace

std::string perf_results_json(const PerfRunResult& result) {
  std::string out;
  PrettyJson j(out);
  j.begin_object();
  j.key("version").str("v1");
  j.key("dataItems").begin_array();
  for (const auto& w : result.workloads) {
    for (const auto& m : w.measurements) {
      const PerfThroughput& t = m.throughput;
      std::vector<std::pair<std::string, double>> tp = {{"Average", t.average},
                                                        {"Perc50", t.perc50},
                                                        {"Perc90", t.perc90},
                                                        {"Perc95", t.perc95},
                                                        {"Perc99", t.perc99}};
      if (m.threshold > 0) tp.insert(tp.begin() + 1, {"AverageThreshold", m.threshold});
      write_item(j, tp, "pods/s", "SchedulingThroughput", m, w);
      write_item(j, {{"Duration", m.elapsed_seconds}}, "s", "SchedulingDuration", m, w);
      write_item(j, {{"Value", m.overall_pods_per_second}}, "pods/s", "bulkscore_overall_throughput", m, w);
      write_item(j, {{"Value", m.ns_per_node_per_pod}}, "ns", "bulkscore_ns_per_node_per_pod", m, w);
      write_item(j, {{"Percent", m.nodes_scored_percent}}, "%", "bulkscore_nodes_scored", m, w);
      write_item(j,
                 {{"Attempted", double(m.attempted)},
                  {"Errors", double(m.errors)},
                  {"Scheduled", double(m.scheduled)},
                  {"Unschedulable", double(m.unschedulable)}},
                 "pods", "bulkscore_pods", m, w);
    }
  }
  j.end_array();
  j.key("bulkscore").begin_object();
  j.key("version").str(BULKSCORE_VERSION);
  j.key("config").str(result.config_path);
  j.key("interrupted").boolean(result.interrupted);
  j.key("workloads").begin_array();
  for (const auto& w : result.workloads) {
    j.begin_object();
    j.key("name").str(w.full_name());
    j.key("backend").str(w.backend);
    j.key("backendNote").str(w.backend_note);
    j.key("device").str(w.device);
    j.key("nodes").integer(w.nodes);
    j.key("percentageOfNodesToScore").num(w.percentage_of_nodes_to_score);
    j.key("setupPods").integer(w.setup_pods);
    j.key("setupUnschedulable").integer(w.setup_unschedulable);
    j.key("gatedPods").integer(w.gated_pods);
    j.key("wallSeconds").num(w.wall_seconds);
    j.key("interrupted").boolean(w.interrupted);
    j.key("featureGates").begin_object();
    for (const auto& [g, v] : w.feature_gates) j.key(g).boolean(v);
    j.end_object();
    j.key("notHonoured").begin_array();
    for (const auto& s : w.not_honoured) j.str(s);
    j.end_array();
    j.key("notes").begin_array();
    for (const auto& s : w.notes) j.str(s);
    j.end_array();
    j.key("measurements").begin_array();
    for (const auto& m : w.measurements) {
      j.begin_object();
      j.key("name").str(m.name);
      j.key("interrupted").boolean(m.interrupted);
      j.key("wholeOpFallback").boolean(m.throughput.whole_op_fallback);
      j.key("windows").begin_array();
      for (double s : m.throughput.samples) j.num(s);
      j.end_array();
      j.end_object();
    }
    j.end_array();
    j.end_object();
  }
  j.end_array();
  j.end_object();
  j.end_object();
  out += '\n';
  return out;
}

// ============================================================================
// Comparing results files
// ============================================================================

std::vector<PerfCompareRow> parse_perf_results(const std::string& json_text, const std::string& origin) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto err = parser.parse(json_text).get(doc))
    throw InputError(origin + ": invalid JSON: " + simdjson::error_message(err));
  simdjson::dom::array items;
  if (doc["dataItems"].get_array().get(items))
    throw InputError(origin + ": dataItems: missing (not a scheduler_perf results file)");
  auto label = [](simdjson::dom::element item, const char* k) -> std::string {
    std::string_view v;
    if (item["labels"][k].get_string().get(v)) return "";
    if (v == "not applicable") return "";
    return std::string(v);
  };
  auto data = [](simdjson::dom::element item, const char* k) -> std::optional<double> {
    double v;
    if (item["data"][k].get_double().get(v)) return std::nullopt;
    return v;
  };
  std::vector<PerfCompareRow> rows;
  std::map<std::pair<std::string, std::string>, double> ns_per;
  size_t index = 0;
  for (simdjson::dom::element item : items) {
    const std::string metric = label(item, "Metric");
    if (metric == "SchedulingThroughput") {
      PerfCompareRow r;
      r.file = origin;
      r.workload = label(item, "Name");
      r.backend = label(item, "Backend");
      r.nodes = label(item, "Nodes");
      const auto avg = data(item, "Average");
      if (!avg) throw InputError(origin + ": dataItems[" + std::to_string(index) + "].data.Average: missing");
      r.average = *avg;
      r.perc50 = data(item, "Perc50").value_or(0);
      r.perc90 = data(item, "Perc90").value_or(0);
      r.perc99 = data(item, "Perc99").value_or(0);
      rows.push_back(std::move(r));
    } else if (metric == "bulkscore_ns_per_node_per_pod") {
      if (const auto v = data(item, "Value")) ns_per[{label(item, "Name"), label(item, "Backend")}] = *v;
    }
    ++index;
  }
  for (auto& r : rows) {
    const auto it = ns_per.find({r.workload, r.backend});
    if (it != ns_per.end()) r.ns_per_node_per_pod = it->second;
  }
  return rows;
}

std::vector<PerfCompareRow> read_perf_results(const std::string& path) {
  return parse_perf_results(read_file(path), path);
}

std::string format_perf_table(const std::vector<PerfCompareRow>& rows) {
  std::set<std::string> files;
  for (const auto& r : rows) files.insert(r.file);
  const bool with_file = files.size() > 1;
  std::vector<std::string> header = {"workload", "backend", "nodes", "avg pods/s", "p50", "p90", "p99", "ns/node/pod"};
  if (with_file) header.push_back("file");
  std::vector<std::vector<std::string>> cells;
  auto fmt = [](double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return std::string(buf);
  };
  for (const auto& r : rows) {
    std::vector<std::string> c = {r.workload,
                                  r.backend.empty() ? "-" : r.backend,
                                  r.nodes.empty() ? "-" : r.nodes,
                                  fmt(r.average, 1),
                                  fmt(r.perc50, 1),
                                  fmt(r.perc90, 1),
                                  fmt(r.perc99, 1),
                                  r.ns_per_node_per_pod ? fmt(*r.ns_per_node_per_pod, 3) : "-"};
    if (with_file) c.push_back(std::filesystem::path(r.file).filename().string());
    cells.push_back(std::move(c));
  }
  std::vector<size_t> width(header.size());
  for (size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const auto& c : cells)
    for (size_t i = 0; i < c.size(); ++i) width[i] = std::max(width[i], c[i].size());
  auto line = [&](const std::vector<std::string>& c) {
    std::string s;
    for (size_t i = 0; i < c.size(); ++i) {
      const bool left = i < 3 || i == 8;  // text columns left, numbers right
      const std::string pad(width[i] - c[i].size(), ' ');
      s += left ? c[i] + pad : pad + c[i];
      if (i + 1 < c.size()) s += "  ";
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string out = line(header);
  for (const auto& c : cells) out += line(c);
  return out;
}

std::string perf_compare(const std::vector<std::string>& paths) {
  std::vector<PerfCompareRow> rows;
  for (const auto& p : paths) {
    std::vector<PerfCompareRow> r = read_perf_results(p);
    rows.insert(rows.end(), r.begin(), r.end());
  }
  return format_perf_table(rows);
}

std::vector<PerfCompareRow> perf_rows(const PerfRunResult& result) {
  std::vector<PerfCompareRow> rows;
  for (const auto& w : result.workloads) {
    for (const auto& m : w.measurements) {
      PerfCompareRow r;
      r.file = result.config_path;
      r.workload = m.name;
      r.backend = w.backend;
      r.nodes = std::to_string(m.nodes);
      r.average = m.throughput.average;
      r.perc50 = m.throughput.perc50;
      r.perc90 = m.throughput.perc90;
      r.perc99 = m.throughput.perc99;
      r.ns_per_node_per_pod = m.ns_per_node_per_pod;
      rows.push_back(std::move(r));
    }
  }
  return rows;
}

}  // namespace bulkscore
