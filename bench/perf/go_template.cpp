// The Go text/template subset upstream's scheduler_perf templates use:
// {{.Field}}, the arithmetic helpers of upstream's getTemplateFuncs (nested
// with parentheses), {{- -}} trimming and comments.
#include "bench/perf/go_template.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "bench/perf/perf.hpp"
#include "bench/perf/text.hpp"
#include "host/common.hpp"
#include "host/io/json_writer.hpp"

namespace bulkscore {
namespace perf_detail {

// A float64 as Go's fmt prints it with %v (strconv 'g', shortest): exponent
// form when the exponent is below -4 or at least 6 ("1e+06").
std::string go_float_string(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == 0) return std::signbit(v) ? "-0" : "0";
  std::string digits;
  int e = 0;
  shortest_decimal_digits(v, digits, e);
  const std::string sign = v < 0 ? "-" : "";
  if (e < -4 || e >= 6) {
    std::string out = sign + digits[0];
    if (digits.size() > 1) out += "." + digits.substr(1);
    char eb[8];
    std::snprintf(eb, sizeof eb, "e%+03d", e);
    return out + eb;
  }
  return sign + plain_decimal(digits, e);
}

}  // namespace perf_detail

namespace {

using perf_detail::go_float_string;

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

std::string render_perf_template(const std::string& text, const PerfValueMap& env, const std::string& origin) {
  TemplateEval ev(env, origin);
  return ev.render(text);
}

}  // namespace bulkscore
