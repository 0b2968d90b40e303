#include "host/input/quantity.hpp"

#include <cstddef>
#include <limits>
#include <vector>

#include "host/common.hpp"

namespace bulkscore {
namespace {

// A non-negative integer of any size, little-endian base-2^32 limbs. Quantity
// strings may carry more digits than 64 or 128 bits hold ("0.000000000001Ki"
// written with 40 zeros is still valid), and the rounding must be exact.
class BigNat {
 public:
  bool is_zero() const { return limbs_.empty(); }

  // *this = *this * mul + add
  void mul_add(uint32_t mul, uint32_t add) {
    uint64_t carry = add;
    for (uint32_t& limb : limbs_) {
      const uint64_t v = static_cast<uint64_t>(limb) * mul + carry;
      limb = static_cast<uint32_t>(v);
      carry = v >> 32;
    }
    if (carry != 0) limbs_.push_back(static_cast<uint32_t>(carry));
    trim();
  }

  // *this = *this / div, returns the remainder.
  uint32_t div_small(uint32_t div) {
    uint64_t rem = 0;
    for (size_t i = limbs_.size(); i-- > 0;) {
      const uint64_t cur = (rem << 32) | limbs_[i];
      limbs_[i] = static_cast<uint32_t>(cur / div);
      rem = cur % div;
    }
    trim();
    return static_cast<uint32_t>(rem);
  }

  // The value if it is at most `limit`.
  bool to_u64_at_most(uint64_t limit, uint64_t* out) const {
    if (limbs_.size() > 2) return false;
    uint64_t v = 0;
    for (size_t i = limbs_.size(); i-- > 0;) v = (v << 32) | limbs_[i];
    if (v > limit) return false;
    *out = v;
    return true;
  }

 private:
  void trim() {
    while (!limbs_.empty() && limbs_.back() == 0) limbs_.pop_back();
  }
  std::vector<uint32_t> limbs_;
};

// n = ceil(n / 10^count); terminates early once n is 0, so a huge count
// (from an exponent like e-2000000000) costs only as much as n has digits.
void ceil_div_pow10(BigNat& n, int64_t count) {
  bool inexact = false;
  for (int64_t i = 0; i < count && !n.is_zero(); ++i) {
    if (n.div_small(10) != 0) inexact = true;
  }
  if (inexact) n.mul_add(1, 1);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

[[noreturn]] void bad_quantity(std::string_view text, const char* why = nullptr) {
  std::string msg = "bad quantity \"";
  msg.append(text.data(), text.size());
  msg += '"';
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

int64_t parse_quantity_scaled(std::string_view text, int scale) {
  // The scanner follows parseQuantityString in apimachinery's quantity.go:
  // [+-] digits [. digits] suffix-letters [+-] digits, the whole string.
  const size_t end = text.size();
  if (end == 0) bad_quantity(text, "empty");
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
  if (num.empty() && denom.empty()) bad_quantity(text, "no digits");

  const size_t suffix_begin = pos;
  constexpr std::string_view kSuffixLetters = "eEinumkKMGTP";
  while (pos < end && kSuffixLetters.find(text[pos]) != std::string_view::npos) ++pos;
  if (pos < end && (text[pos] == '+' || text[pos] == '-')) ++pos;
  while (pos < end && is_digit(text[pos])) ++pos;
  if (pos != end) bad_quantity(text);

  SuffixValue suffix;
  if (!interpret_suffix(text.substr(suffix_begin), &suffix)) bad_quantity(text, "unknown suffix");

  // magnitude = digits * 2^binary_exp * 10^exp10
  BigNat magnitude;
  for (const std::string_view part : {num, denom}) {
    for (const char c : part) magnitude.mul_add(10, static_cast<uint32_t>(c - '0'));
  }
  for (int i = 0; i < suffix.binary_exp; i += 10) magnitude.mul_add(1024, 0);
  int64_t exp10 = suffix.decimal_exp - static_cast<int64_t>(denom.size());

  // ParseQuantity keeps at most nano precision, rounding the magnitude up, and
  // ScaledValue then rounds up again to the requested scale.
  constexpr int64_t kNanoExp = -9;
  if (exp10 < kNanoExp) {
    ceil_div_pow10(magnitude, kNanoExp - exp10);
    exp10 = kNanoExp;
  }
  const int64_t shift = exp10 + scale;
  if (shift < 0) {
    ceil_div_pow10(magnitude, -shift);
  } else if (!magnitude.is_zero()) {
    // 10^19 > int64 max: a non-zero value shifted that far cannot fit.
    if (shift > 19) bad_quantity(text, "out of range");
    for (int64_t i = 0; i < shift; ++i) magnitude.mul_add(10, 0);
  }

  uint64_t value = 0;
  if (!magnitude.to_u64_at_most(static_cast<uint64_t>(std::numeric_limits<int64_t>::max()), &value)) {
    bad_quantity(text, "out of range");
  }
  // Negative amounts round away from zero, as upstream's int64 path does.
  return negative ? -static_cast<int64_t>(value) : static_cast<int64_t>(value);
}

int64_t parse_resource_quantity(std::string_view name, std::string_view text) {
  return parse_quantity_scaled(text, name == "cpu" ? 3 : 0);
}

}  // namespace bulkscore
