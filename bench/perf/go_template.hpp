// The Go text/template subset upstream's scheduler_perf templates use (host
// only, internal to bench/perf). The entry point, render_perf_template, is
// declared in perf.hpp; these are the pieces its tests and the runner share.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace bulkscore::perf_detail {

// A float64 as Go's fmt prints it with %v (strconv 'g', shortest): exponent
// form when the decimal exponent is below -4 or at least 6 ("1e+06").
std::string go_float_string(double v);

// Go's strconv number parsers with base 0, as text/template's parser applies
// them to number literals (and upstream's toFloat64 to string arguments), over
// std::from_chars. nullopt: a syntax error, or out of range.
//  * parse_go_uint / parse_go_int: ParseUint / ParseInt(text, 0, 64): an
//    optional sign (ParseInt only), the base from the prefix (0x, 0o, 0b, any
//    case; a leading 0 alone means octal), '_' only between digits or after
//    the prefix ("1_000", "0x_ff").
//  * parse_go_float: ParseFloat(text, 64): decimal or hexadecimal ("0x1p-2",
//    the p exponent required), '_' as above, "inf", "infinity" (with a sign)
//    and "nan" in any case. Overflow is out of range; underflow gives zero, as
//    in Go.
std::optional<uint64_t> parse_go_uint(std::string_view text);
std::optional<int64_t> parse_go_int(std::string_view text);
std::optional<double> parse_go_float(std::string_view text);

// Go's int(f) for a float64, where the spec leaves out-of-range values to the
// implementation: nullopt for NaN, infinities and values outside int64.
std::optional<int64_t> go_int_of_float(double f);

// Go's a % b on int64 without C++'s undefined cases: nullopt when b is zero
// (Go panics: integer divide by zero); MinInt64 % -1 is 0, as Go defines it.
std::optional<int64_t> go_int_rem(int64_t a, int64_t b);

}  // namespace bulkscore::perf_detail
