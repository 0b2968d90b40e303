// The Go text/template subset upstream's scheduler_perf templates use (host
// only, internal to bench/perf). The entry point, render_perf_template, is
// declared in perf.hpp; these are the pieces its tests and the runner share.
#pragma once

#include <string>

namespace bulkscore::perf_detail {

// A float64 as Go's fmt prints it with %v (strconv 'g', shortest): exponent
// form when the decimal exponent is below -4 or at least 6 ("1e+06").
std::string go_float_string(double v);

}  // namespace bulkscore::perf_detail
