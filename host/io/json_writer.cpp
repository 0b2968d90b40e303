// Numbers for the JSON writer: shortest round-trip digits from std::to_chars,
// laid out as Go's encoding/json writes a float64.
#include "host/io/json_writer.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <system_error>

#include "host/common.hpp"

namespace bulkscore {

void shortest_decimal_digits(double v, std::string& digits, int& exp10) {
  // Scientific form without a precision is the shortest that round-trips:
  // "-d.ddde+XX".
  char buf[64];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  if (r.ec != std::errc()) throw Error("cannot format the number " + std::to_string(v));
  const char* p = buf;
  if (*p == '-') ++p;
  digits.clear();
  for (; p < r.ptr && *p != 'e'; ++p)
    if (*p != '.') digits += *p;
  exp10 = 0;
  if (p < r.ptr && *p == 'e') {
    ++p;
    const bool negative = *p == '-';
    if (*p == '+' || *p == '-') ++p;
    int e = 0;
    std::from_chars(p, r.ptr, e);
    exp10 = negative ? -e : e;
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
}

std::string plain_decimal(const std::string& digits, int exp10) {
  if (exp10 < 0) return "0." + std::string(static_cast<size_t>(-exp10 - 1), '0') + digits;
  const size_t int_digits = static_cast<size_t>(exp10) + 1;
  if (int_digits >= digits.size()) return digits + std::string(int_digits - digits.size(), '0');
  return digits.substr(0, int_digits) + "." + digits.substr(int_digits);
}

void JsonWriter::append_number(std::string& out, double v) {
  if (!std::isfinite(v))
    throw Error(std::string("JSON has no ") + (std::isnan(v) ? "NaN" : "infinity") + ": a value was not computed");
  if (v == 0) {
    out += std::signbit(v) ? "-0" : "0";
    return;
  }
  std::string digits;
  int exp10 = 0;
  shortest_decimal_digits(v, digits, exp10);
  if (v < 0) out += '-';
  // Go's encoding/json: exponent form below 1e-6 and from 1e21 on, written
  // "1e-7", "1.5e+21" (strconv's 'e' format with "e-07" cleaned to "e-7").
  if (exp10 < -6 || exp10 >= 21) {
    out += digits[0];
    if (digits.size() > 1) {
      out += '.';
      out.append(digits, 1, std::string::npos);
    }
    // exp10 is below -6 or at least 21 here: "e-7" as Go cleans "e-07",
    // "e+21" with its two digits.
    out += exp10 < 0 ? "e-" : "e+";
    out += std::to_string(std::abs(exp10));
    return;
  }
  out += plain_decimal(digits, exp10);
}

}  // namespace bulkscore
