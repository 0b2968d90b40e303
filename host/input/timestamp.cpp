#include "host/input/timestamp.hpp"

#include <cstdio>
#include <string>

namespace bulkscore {
namespace {

// Days from 1970-01-01 to y-m-d (proleptic Gregorian; Howard Hinnant's
// days_from_civil, written out).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool leap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned days_in_month(int64_t y, unsigned m) {
  static const unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && leap(y) ? 29 : kDays[m - 1];
}

// n digits at s[at..] as a number, or -1.
int64_t digits(std::string_view s, size_t at, size_t n) {
  if (at + n > s.size()) return -1;
  int64_t v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

}  // namespace

std::optional<int64_t> parse_rfc3339_ns(std::string_view s) {
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)
  if (s.size() < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' ||
      s[16] != ':')
    return std::nullopt;
  const int64_t y = digits(s, 0, 4), mo = digits(s, 5, 2), d = digits(s, 8, 2), h = digits(s, 11, 2),
                mi = digits(s, 14, 2), sec = digits(s, 17, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59)
    return std::nullopt;
  if (d > static_cast<int64_t>(days_in_month(y, static_cast<unsigned>(mo)))) return std::nullopt;
  size_t at = 19;
  int64_t frac_ns = 0;
  if (at < s.size() && s[at] == '.') {
    ++at;
    size_t n = 0;
    int64_t scale = 100000000;
    while (at < s.size() && s[at] >= '0' && s[at] <= '9') {
      if (n < 9) frac_ns += (s[at] - '0') * scale;
      scale /= 10;
      ++n;
      ++at;
    }
    if (n == 0) return std::nullopt;
  }
  int64_t offset_s = 0;
  if (at < s.size() && (s[at] == 'Z' || s[at] == 'z')) {
    ++at;
  } else if (at < s.size() && (s[at] == '+' || s[at] == '-')) {
    const int64_t oh = digits(s, at + 1, 2), om = digits(s, at + 4, 2);
    if (oh < 0 || oh > 23 || om < 0 || om > 59 || at + 3 >= s.size() || s[at + 3] != ':') return std::nullopt;
    offset_s = (oh * 3600 + om * 60) * (s[at] == '+' ? 1 : -1);
    at += 6;
  } else {
    return std::nullopt;
  }
  if (at != s.size()) return std::nullopt;
  const int64_t days = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  const int64_t secs = days * 86400 + h * 3600 + mi * 60 + sec - offset_s;
  // Years 0000-9999 stay far inside int64 nanoseconds only from 1678 to 2262.
  constexpr int64_t kMaxSecs = INT64_MAX / 1000000000 - 1;
  if (secs > kMaxSecs || secs < -kMaxSecs) return std::nullopt;
  return secs * 1000000000 + frac_ns;
}

std::string format_rfc3339_ns(int64_t ns) {
  int64_t secs = ns / 1000000000, rem = ns % 1000000000;
  if (rem < 0) {
    rem += 1000000000;
    --secs;
  }
  int64_t days = secs / 86400, sod = secs % 86400;
  if (sod < 0) {
    sod += 86400;
    --days;
  }
  // civil_from_days
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const auto doe = static_cast<unsigned>(days - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = static_cast<int64_t>(yoe) + era * 400 + (m <= 2 ? 1 : 0);
  char buf[64];
  const int n = std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lld", static_cast<long long>(y), m,
                              d, static_cast<long long>(sod / 3600), static_cast<long long>(sod / 60 % 60),
                              static_cast<long long>(sod % 60));
  std::string out(buf, n > 0 ? static_cast<size_t>(n) : 0);
  if (rem != 0) {
    char frac[16];
    static_cast<void>(std::snprintf(frac, sizeof frac, ".%09lld", static_cast<long long>(rem)));
    out += frac;
  }
  return out + "Z";
}

}  // namespace bulkscore
