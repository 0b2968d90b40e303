#include "host/input/quantity.hpp"

#include <cstddef>
#include <limits>
#include <vector>

#include "host/common.hpp"
#include "host/input/quote.hpp"

namespace bulkscore {
namespace {

// A non-negative integer as decimal digits, most significant first. Every
// step the parser needs is one pass over the digits: multiplying by 1024,
// dividing by a power of ten (dropping digits, rounding up) and multiplying
// by one (appending zeros). Quantity strings may carry far more digits than
// 64 or 128 bits hold ("0.000000000001Ki" written with 40 zeros is still
// valid), the rounding must be exact, and a long string must cost linear
// time, not quadratic.
class Decimal {
 public:
  void push_digit(char c) { digits_.push_back(static_cast<uint8_t>(c - '0')); }

  bool is_zero() const {
    for (uint8_t d : digits_)
      if (d) return false;
    return true;
  }

  void mul_1024() {
    uint32_t carry = 0;
    for (size_t i = digits_.size(); i-- > 0;) {
      const uint32_t v = digits_[i] * 1024u + carry;
      digits_[i] = static_cast<uint8_t>(v % 10);
      carry = v / 10;
    }
    std::vector<uint8_t> head;
    for (; carry; carry /= 10) head.push_back(static_cast<uint8_t>(carry % 10));
    digits_.insert(digits_.begin(), head.rbegin(), head.rend());
  }

  // *this = ceil(*this / 10^count).
  void ceil_div_pow10(int64_t count) {
    if (count <= 0) return;
    const bool nonzero = !is_zero();
    if (static_cast<uint64_t>(count) >= digits_.size()) {
      digits_.assign(1, nonzero ? 1 : 0);  // a positive fraction below one rounds up to one
      return;
    }
    const size_t keep = digits_.size() - static_cast<size_t>(count);
    bool inexact = false;
    for (size_t i = keep; i < digits_.size(); ++i) inexact |= digits_[i] != 0;
    digits_.resize(keep);
    if (inexact) increment();
  }

  void mul_pow10(int64_t count) { digits_.insert(digits_.end(), static_cast<size_t>(count), 0); }

  // The value if it is at most `limit`.
  bool to_u64_at_most(uint64_t limit, uint64_t* out) const {
    size_t i = 0;
    while (i < digits_.size() && digits_[i] == 0) ++i;
    if (digits_.size() - i > 19) return false;
    uint64_t v = 0;
    for (; i < digits_.size(); ++i) v = v * 10 + digits_[i];  // < 10^19 < 2^64
    if (v > limit) return false;
    *out = v;
    return true;
  }

 private:
  void increment() {
    for (size_t i = digits_.size(); i-- > 0;) {
      if (digits_[i] < 9) {
        ++digits_[i];
        return;
      }
      digits_[i] = 0;
    }
    digits_.insert(digits_.begin(), 1);
  }
  std::vector<uint8_t> digits_;
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The message quotes the text as given, shortened and with control
// characters escaped, so that a hostile value cannot flood or garble a
// terminal.
[[noreturn]] void bad_quantity(std::string_view text, const char* why = nullptr) {
  std::string msg = "bad quantity " + quote_for_message(text);
  if (why != nullptr) {
    msg += ": ";
    msg += why;
  }
  throw InputError(msg);
}

// What a suffix means: value * 2^binary_exp * 10^decimal_exp.
struct SuffixValue {
  int binary_exp = 0;
  int64_t decimal_exp = 0;
};

// The suffix table of apimachinery's suffix.go, plus its e/E<int> form.
bool interpret_suffix(std::string_view s, SuffixValue* out) {
  if (s.size() <= 1) {
    const char c = s.empty() ? '\0' : s[0];
    switch (c) {
      case '\0':
        out->decimal_exp = 0;
        return true;
      case 'n':
        out->decimal_exp = -9;
        return true;
      case 'u':
        out->decimal_exp = -6;
        return true;
      case 'm':
        out->decimal_exp = -3;
        return true;
      case 'k':
        out->decimal_exp = 3;
        return true;
      case 'M':
        out->decimal_exp = 6;
        return true;
      case 'G':
        out->decimal_exp = 9;
        return true;
      case 'T':
        out->decimal_exp = 12;
        return true;
      case 'P':
        out->decimal_exp = 15;
        return true;
      case 'E':
        out->decimal_exp = 18;
        return true;
      default:
        return false;
    }
  }
  if (s.size() == 2 && s[1] == 'i') {
    switch (s[0]) {
      case 'K':
        out->binary_exp = 10;
        return true;
      case 'M':
        out->binary_exp = 20;
        return true;
      case 'G':
        out->binary_exp = 30;
        return true;
      case 'T':
        out->binary_exp = 40;
        return true;
      case 'P':
        out->binary_exp = 50;
        return true;
      case 'E':
        out->binary_exp = 60;
        return true;
      default:
        break;
    }
  }
  if (s[0] != 'e' && s[0] != 'E') return false;
  // Go's strconv.ParseInt(s[1:], 10, 64): optional sign, then digits only.
  size_t i = 1;
  bool negative = false;
  if (s[i] == '+' || s[i] == '-') {
    negative = s[i] == '-';
    ++i;
  }
  if (i == s.size()) return false;
  // Upstream keeps the exponent in an int32 scale and refuses anything past
  // +-MaxInt32 rather than truncating it.
  constexpr int64_t kMaxExp = std::numeric_limits<int32_t>::max();
  int64_t exp = 0;
  for (; i < s.size(); ++i) {
    if (!is_digit(s[i])) return false;
    exp = exp * 10 + (s[i] - '0');
    if (exp > kMaxExp) return false;
  }
  out->decimal_exp = negative ? -exp : exp;
  return true;
}

}  // namespace

int64_t parse_quantity_scaled(const std::string_view original, int scale) {
  // Quantity's JSON decoding trims surrounding white space before parsing.
  std::string_view text = original;
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  while (!text.empty() && kSpace.find(text.front()) != std::string_view::npos) text.remove_prefix(1);
  while (!text.empty() && kSpace.find(text.back()) != std::string_view::npos) text.remove_suffix(1);
  // The scanner follows parseQuantityString in apimachinery's quantity.go:
  // [+-] digits [. digits] suffix-letters [+-] digits, the whole string.
  const size_t end = text.size();
  if (end == 0) bad_quantity(original, "empty");
  size_t pos = 0;
  bool negative = false;
  if (text[pos] == '+' || text[pos] == '-') {
    negative = text[pos] == '-';
    ++pos;
  }
  const size_t num_begin = pos;
  while (pos < end && is_digit(text[pos])) ++pos;
  const std::string_view num = text.substr(num_begin, pos - num_begin);
  std::string_view denom;
  if (pos < end && text[pos] == '.') {
    ++pos;
    const size_t denom_begin = pos;
    while (pos < end && is_digit(text[pos])) ++pos;
    denom = text.substr(denom_begin, pos - denom_begin);
  }
  // Upstream reads a number with no digit at all ("Mi", ".", "-") as 0; such
  // a string is a typo, never a real amount, so bulkscore refuses it.
  if (num.empty() && denom.empty()) bad_quantity(original, "no digits");

  const size_t suffix_begin = pos;
  constexpr std::string_view kSuffixLetters = "eEinumkKMGTP";
  while (pos < end && kSuffixLetters.find(text[pos]) != std::string_view::npos) ++pos;
  if (pos < end && (text[pos] == '+' || text[pos] == '-')) ++pos;
  while (pos < end && is_digit(text[pos])) ++pos;
  if (pos != end) bad_quantity(original);

  SuffixValue suffix;
  if (!interpret_suffix(text.substr(suffix_begin), &suffix)) bad_quantity(original, "unknown suffix");

  // magnitude = digits * 2^binary_exp * 10^exp10
  Decimal magnitude;
  for (const std::string_view part : {num, denom})
    for (const char c : part) magnitude.push_digit(c);
  for (int i = 0; i < suffix.binary_exp; i += 10) magnitude.mul_1024();
  int64_t exp10 = suffix.decimal_exp - static_cast<int64_t>(denom.size());

  // ParseQuantity keeps at most nano precision, rounding the magnitude up, and
  // ScaledValue then rounds up again to the requested scale.
  constexpr int64_t kNanoExp = -9;
  if (exp10 < kNanoExp) {
    magnitude.ceil_div_pow10(kNanoExp - exp10);
    exp10 = kNanoExp;
  }
  const int64_t shift = exp10 + scale;
  if (shift < 0) {
    magnitude.ceil_div_pow10(-shift);
  } else if (!magnitude.is_zero()) {
    // 10^19 > int64 max: a non-zero value shifted that far cannot fit.
    if (shift > 19) bad_quantity(original, "out of range");
    magnitude.mul_pow10(shift);
  }

  uint64_t value = 0;
  if (!magnitude.to_u64_at_most(static_cast<uint64_t>(std::numeric_limits<int64_t>::max()), &value)) {
    bad_quantity(original, "out of range");
  }
  // Negative amounts round away from zero, as upstream's int64 path does.
  return negative ? -static_cast<int64_t>(value) : static_cast<int64_t>(value);
}

int64_t parse_resource_quantity(std::string_view name, std::string_view text) {
  return parse_quantity_scaled(text, name == "cpu" ? 3 : 0);
}

}  // namespace bulkscore
