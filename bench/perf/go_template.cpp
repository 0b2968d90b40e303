// The Go text/template subset upstream's scheduler_perf templates use:
// {{.Field}}, the arithmetic helpers of upstream's getTemplateFuncs (nested
// with parentheses), {{- -}} trimming and comments.
#include "bench/perf/go_template.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "bench/perf/perf.hpp"
#include "bench/perf/text.hpp"
#include "host/common.hpp"
#include "host/input/quote.hpp"
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
    // Go's %e exponent: a sign and at least two digits.
    const int a = e < 0 ? -e : e;
    out += e < 0 ? "e-" : "e+";
    if (a < 10) out += '0';
    out += std::to_string(a);
    return out;
  }
  return sign + plain_decimal(digits, e);
}

namespace {

char lower_ascii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool has_base_prefix(std::string_view s) {
  return s.size() >= 2 && s[0] == '0' &&
         (lower_ascii(s[1]) == 'b' || lower_ascii(s[1]) == 'o' || lower_ascii(s[1]) == 'x');
}

// strconv's underscoreOK: '_' only between digits, or between a base prefix
// and a digit.
bool underscore_ok(std::string_view s) {
  char saw = '^';  // ^ start, 0 digit or prefix, _ underscore, ! other
  size_t i = 0;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  bool hex = false;
  if (has_base_prefix(s)) {
    i = 2;
    saw = '0';
    hex = lower_ascii(s[1]) == 'x';
  }
  for (; i < s.size(); ++i) {
    const char c = lower_ascii(s[i]);
    if ((c >= '0' && c <= '9') || (hex && c >= 'a' && c <= 'f')) {
      saw = '0';
      continue;
    }
    if (c == '_') {
      if (saw != '0') return false;
      saw = '_';
      continue;
    }
    if (saw == '_') return false;
    saw = '!';
  }
  return saw != '_';
}

// `s` without its underscores; `had` says whether there were any.
std::string without_underscores(std::string_view s, bool& had) {
  std::string out;
  out.reserve(s.size());
  had = false;
  for (char c : s) {
    if (c == '_')
      had = true;
    else
      out += c;
  }
  return out;
}

bool equals_ignore_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (lower_ascii(a[i]) != lower_ascii(b[i])) return false;
  return true;
}

// Whether a syntactically valid decimal or hex float text (no sign, no
// underscores) is below 1 in magnitude by its digits and exponent alone:
// from_chars reports both overflow and underflow as out of range, and only
// overflow is an error in Go.
bool underflows(std::string_view s, bool hex) {
  if (hex) s.remove_prefix(2);
  long long exp = 0;
  const size_t e = s.find_first_of(hex ? "pP" : "eE");
  if (e != std::string_view::npos) {
    std::string_view t = s.substr(e + 1);
    const bool neg = !t.empty() && t[0] == '-';
    if (!t.empty() && (t[0] == '-' || t[0] == '+')) t.remove_prefix(1);
    long long v = 0;
    for (char c : t) v = std::min<long long>(v * 10 + (c - '0'), 1LL << 40);
    exp = neg ? -v : v;
    s = s.substr(0, e);
  }
  // Position of the first non-zero digit relative to the point, in digits.
  const size_t point = s.find('.');
  const std::string_view int_part = s.substr(0, point);
  const std::string_view frac = point == std::string_view::npos ? std::string_view() : s.substr(point + 1);
  long long magnitude;
  const size_t nz = int_part.find_first_not_of('0');
  if (nz != std::string_view::npos) {
    magnitude = static_cast<long long>(int_part.size() - nz);
  } else {
    const size_t fz = frac.find_first_not_of('0');
    if (fz == std::string_view::npos) return true;  // zero
    magnitude = -static_cast<long long>(fz);
  }
  return (hex ? magnitude * 4 : magnitude) + exp < 0;
}

}  // namespace

std::optional<uint64_t> parse_go_uint(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::string_view s = text;
  int base = 10;
  if (s[0] == '0') {
    if (s.size() >= 3 && has_base_prefix(s)) {
      const char p = lower_ascii(s[1]);
      base = p == 'b' ? 2 : p == 'o' ? 8 : 16;
      s.remove_prefix(2);
    } else {
      base = 8;  // a leading 0: octal
      s.remove_prefix(1);
    }
  }
  bool had_underscores = false;
  const std::string digits = without_underscores(s, had_underscores);
  if (had_underscores && !underscore_ok(text)) return std::nullopt;
  if (digits.empty()) {
    // "0" alone is octal zero; a prefix needs digits.
    if (base == 8 && s.size() == text.size() - 1) return 0;
    return std::nullopt;
  }
  uint64_t v = 0;
  const char* end = digits.data() + digits.size();
  const std::from_chars_result r = std::from_chars(digits.data(), end, v, base);
  if (r.ec != std::errc() || r.ptr != end) return std::nullopt;
  return v;
}

std::optional<int64_t> parse_go_int(std::string_view text) {
  if (text.empty()) return std::nullopt;
  bool negative = false;
  std::string_view s = text;
  if (s[0] == '+' || s[0] == '-') {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  const std::optional<uint64_t> u = parse_go_uint(s);
  if (!u) return std::nullopt;
  constexpr uint64_t kMinMagnitude = uint64_t{1} << 63;
  if (!negative) {
    if (*u >= kMinMagnitude) return std::nullopt;
    return static_cast<int64_t>(*u);
  }
  if (*u > kMinMagnitude) return std::nullopt;
  if (*u == kMinMagnitude) return std::numeric_limits<int64_t>::min();
  return -static_cast<int64_t>(*u);
}

std::optional<double> parse_go_float(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::string_view s = text;
  bool negative = false;
  const bool signed_text = s[0] == '+' || s[0] == '-';
  if (signed_text) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (equals_ignore_case(s, "inf") || equals_ignore_case(s, "infinity"))
    return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  if (!signed_text && equals_ignore_case(s, "nan")) return std::numeric_limits<double>::quiet_NaN();

  const bool hex = s.size() > 2 && s[0] == '0' && lower_ascii(s[1]) == 'x';
  // The syntax, as strconv's readFloat: digits with at most one point, at
  // least one digit, then the exponent (required for hex).
  size_t i = hex ? 2 : 0;
  bool saw_digit = false, saw_point = false;
  for (; i < s.size(); ++i) {
    const char c = lower_ascii(s[i]);
    if (c == '_') continue;
    if (c == '.') {
      if (saw_point) return std::nullopt;
      saw_point = true;
      continue;
    }
    if ((c >= '0' && c <= '9') || (hex && c >= 'a' && c <= 'f')) {
      saw_digit = true;
      continue;
    }
    break;
  }
  if (!saw_digit) return std::nullopt;
  const std::string_view mantissa = s.substr(0, i);
  bool had_underscores = false;
  std::string clean = without_underscores(mantissa, had_underscores);
  if (had_underscores && !underscore_ok(mantissa)) return std::nullopt;
  if (i < s.size()) {
    const char c = lower_ascii(s[i]);
    if (c != (hex ? 'p' : 'e')) return std::nullopt;
    clean += c;
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) clean += s[i++];
    const size_t digits_at = i;
    for (; i < s.size(); ++i) {
      if (s[i] == '_') continue;
      if (s[i] < '0' || s[i] > '9') return std::nullopt;
      clean += s[i];
    }
    if (i == digits_at) return std::nullopt;
    if (s.substr(digits_at).find('_') != std::string_view::npos) {
      // Go checks underscores over the whole number: they must sit between
      // digits of the exponent too.
      if (!underscore_ok(s.substr(digits_at))) return std::nullopt;
    }
  } else if (hex) {
    return std::nullopt;  // "hexadecimal mantissa requires a 'p' exponent"
  }
  double v = 0;
  const char* first = clean.data() + (hex ? 2 : 0);
  const char* end = clean.data() + clean.size();
  const std::from_chars_result r =
      std::from_chars(first, end, v, hex ? std::chars_format::hex : std::chars_format::general);
  if (r.ec == std::errc::result_out_of_range) {
    if (!underflows(clean, hex)) return std::nullopt;  // Go: ±Inf with ErrRange
    v = 0;
  } else if (r.ec != std::errc() || r.ptr != end) {
    return std::nullopt;
  }
  return negative ? -v : v;
}

std::optional<int64_t> go_int_of_float(double f) {
  // [-2^63, 2^63): both bounds are exact doubles; NaN fails both tests.
  if (!(f >= -0x1p63 && f < 0x1p63)) return std::nullopt;
  return static_cast<int64_t>(f);  // truncation toward zero, as Go
}

std::optional<int64_t> go_int_rem(int64_t a, int64_t b) {
  if (b == 0) return std::nullopt;
  if (b == -1) return 0;  // also MinInt64 % -1, which overflows in C++
  return a % b;
}

}  // namespace perf_detail

namespace {

using namespace perf_detail;

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

// Where Go's lexer starts a number: a digit, a sign, or a point followed by a
// digit (".5"; otherwise a point starts a field).
bool starts_number(const std::string& body, size_t i) {
  auto digit = [&](size_t k) { return k < body.size() && std::isdigit(static_cast<unsigned char>(body[k])); };
  const char c = body[i];
  if (digit(i)) return true;
  if (c == '.') return digit(i + 1);
  if (c == '+' || c == '-') return digit(i + 1) || (i + 1 < body.size() && body[i + 1] == '.' && digit(i + 2));
  return false;
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
      } else if (starts_number(body, i)) {
        // As Go's lexer: a sign, digits, '_', one point, an exponent with
        // its sign (e for decimal, p for hex); the parse decides validity.
        size_t j = i + 1;
        const bool hex = body.compare(i + (c == '-' || c == '+' ? 1 : 0), 2, "0x") == 0 ||
                         body.compare(i + (c == '-' || c == '+' ? 1 : 0), 2, "0X") == 0;
        auto exponent_mark = [hex](char e) { return hex ? (e == 'p' || e == 'P') : (e == 'e' || e == 'E'); };
        while (j < body.size() &&
               (std::isalnum(static_cast<unsigned char>(body[j])) || body[j] == '.' || body[j] == '_' ||
                ((body[j] == '+' || body[j] == '-') && exponent_mark(body[j - 1]))))
          ++j;
        toks.push_back({Token::Kind::Number, body.substr(i, j - i)});
        i = j;
      } else if (c == '.') {
        size_t j = i + 1;
        while (j < body.size() && (std::isalnum(static_cast<unsigned char>(body[j])) || body[j] == '_')) ++j;
        if (j == i + 1) fail("\".\" alone (the whole environment) is not supported");
        if (j < body.size() && body[j] == '.')
          fail("nested fields (" + quote_for_message(body.substr(i)) + ") are not supported");
        toks.push_back({Token::Kind::Field, body.substr(i + 1, j - i - 1)});
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
        fail("unexpected character " + quote_for_message(std::string(1, c)));
      }
    }
    toks.push_back({Token::Kind::End, ""});
    return toks;
  }

  static constexpr int kMaxParenDepth = 100;
  int depth_ = 0;  // parentheses open in the action being evaluated

  std::string eval_action(const std::string& body) {
    // Comments: {{/* ... */}}
    size_t b = body.find_first_not_of(" \t\r\n");
    if (b != std::string::npos && body.compare(b, 2, "/*") == 0) {
      if (body.find("*/", b + 2) == std::string::npos) fail("unclosed comment");
      return "";
    }
    toks_ = lex(body);
    k_ = 0;
    depth_ = 0;
    if (toks_[0].kind == Token::Kind::End) fail("empty action");
    if (toks_[0].kind == Token::Kind::Ident) {
      static const std::set<std::string> keywords = {"if",       "else",  "end",   "range",    "with", "define",
                                                     "template", "block", "break", "continue", "nil"};
      if (keywords.count(toks_[0].text)) fail("the " + quote_for_message(toks_[0].text) + " action is not supported");
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
        // Each level recurses: a bound keeps a hostile template from
        // exhausting the stack (a fuzzer found one).
        if (++depth_ > kMaxParenDepth)
          fail("parentheses nested more than " + std::to_string(kMaxParenDepth) + " deep");
        TValue v = eval_command(Token::Kind::RParen);
        --depth_;
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
      case Token::Kind::Number:
        return number(t.text);
      case Token::Kind::Ident: {
        if (t.text == "true" || t.text == "false") {
          TValue v;
          v.kind = TValue::Kind::Bool;
          v.b = t.text == "true";
          return v;
        }
        fail("function " + quote_for_message(t.text) + " used as an argument; wrap the call in parentheses");
      }
      default:
        fail("unexpected " + quote_for_message(t.text));
    }
  }

  TValue lookup(const std::string& name) const {
    const auto it = env_.find(name);
    if (it == env_.end()) {
      std::string known;
      for (const auto& [k, v] : env_) known += (known.empty() ? "" : ", ") + quote_for_message(k);
      fail(quote_for_message("." + name) + " is not defined (defined: " + known + ")");
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
        fail(quote_for_message("." + name) + " is not a number, string or bool");
    }
  }

  // A number literal as text/template's parser and its idealConstant make
  // it: an int when strconv.ParseInt(text, 0, 64) takes it, a float64 when
  // the text is a float (a point, an exponent; hex ints with e digits stay
  // ints); an integer that fits only uint64 overflows int; an integer-looking
  // text that fits neither is an integer overflow.
  TValue number(const std::string& text) const {
    TValue v;
    const bool float_syntax = text.find_first_of(".eEpP") != std::string::npos;
    const bool hex_int = (text.find("0x") != std::string::npos || text.find("0X") != std::string::npos) &&
                         text.find_first_of("pP") == std::string::npos;
    if (const std::optional<int64_t> i = parse_go_int(text); i && !(float_syntax && !hex_int)) {
      v.kind = TValue::Kind::Int;
      v.i = *i;
      return v;
    }
    if (!float_syntax && parse_go_uint(text)) fail(quote_for_message(text) + " overflows int");
    const std::optional<double> f = parse_go_float(text);
    if (!f) fail("illegal number syntax: " + quote_for_message(text));
    if (!float_syntax) fail("integer overflow: " + quote_for_message(text));
    v.kind = TValue::Kind::Float;
    v.f = *f;
    return v;
  }

  // Upstream's toFloat64: every numeric argument as a float64, strings
  // through strconv.ParseFloat; anything else panics ("cannot cast").
  double to_float(const TValue& v, const std::string& fn) const {
    switch (v.kind) {
      case TValue::Kind::Int:
        return static_cast<double>(v.i);
      case TValue::Kind::Float:
        return v.f;
      case TValue::Kind::String:
        if (const std::optional<double> f = parse_go_float(v.s)) return *f;
        break;
      case TValue::Kind::Bool:
        break;
    }
    // A string argument is input text: quoted.
    const std::string shown = v.kind == TValue::Kind::String ? quote_for_message(v.s) : tvalue_print(v);
    fail("error calling " + fn + ": cannot cast " + shown + " to float64");
  }

  // Go's int(f) on an upstream helper's float64 result: where Go leaves an
  // out-of-range value to the platform (amd64 gives MinInt64), this is an
  // error.
  int64_t to_int(double f, const std::string& fn) const {
    const std::optional<int64_t> i = go_int_of_float(f);
    if (!i) fail("error calling " + fn + ": " + go_float_string(f) + " does not fit Go's int (int64)");
    return *i;
  }

  // Upstream's getTemplateFuncs (test/integration/scheduler_perf): the Int
  // helpers compute in float64 and convert the result with int(); Mod
  // converts both arguments and takes Go's integer remainder. Division and
  // remainder by zero panic upstream (text/template reports the panic as an
  // error); here they are errors too.
  TValue call(const std::string& fn, const std::vector<TValue>& args) {
    auto need = [&](size_t n) {
      if (args.size() != n)
        fail("wrong number of args for " + fn + ": want " + std::to_string(n) + " got " + std::to_string(args.size()));
    };
    auto as_int = [](int64_t i) {
      TValue v;
      v.kind = TValue::Kind::Int;
      v.i = i;
      return v;
    };
    auto as_flt = [](double d) {
      TValue v;
      v.kind = TValue::Kind::Float;
      v.f = d;
      return v;
    };
    const bool int_result = fn.size() > 3 && fn.compare(fn.size() - 3, 3, "Int") == 0;
    if (fn == "AddInt" || fn == "AddFloat" || fn == "MultiplyInt" || fn == "MultiplyFloat") {
      const bool add = fn[0] == 'A';
      double acc = add ? 0.0 : 1.0;
      for (const auto& a : args) acc = add ? acc + to_float(a, fn) : acc * to_float(a, fn);
      return int_result ? as_int(to_int(acc, fn)) : as_flt(acc);
    }
    if (fn == "SubtractInt" || fn == "SubtractFloat") {
      need(2);
      const double d = to_float(args[0], fn) - to_float(args[1], fn);
      return int_result ? as_int(to_int(d, fn)) : as_flt(d);
    }
    if (fn == "DivideInt" || fn == "DivideFloat") {
      need(2);
      const double numerator = to_float(args[0], fn);
      const double denominator = to_float(args[1], fn);
      if (denominator == 0) fail("error calling " + fn + ": division by zero");
      const double d = numerator / denominator;
      return int_result ? as_int(to_int(d, fn)) : as_flt(d);
    }
    if (fn == "Mod") {
      need(2);
      const int64_t a = to_int(to_float(args[0], fn), fn);
      const int64_t b = to_int(to_float(args[1], fn), fn);
      const std::optional<int64_t> r = go_int_rem(a, b);
      if (!r) fail("error calling Mod: runtime error: integer divide by zero");
      return as_int(*r);
    }
    fail("function " + quote_for_message(fn) +
         " is not supported (supported: AddInt, SubtractInt, MultiplyInt, DivideInt, Mod, "
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
