// Kubernetes resource.Quantity parsing, exactly as apimachinery does it.
//
// Grammar: <signedNumber><suffix>, suffix one of the binary SI (Ki Mi Gi Ti Pi
// Ei), decimal SI (n u m "" k M G T P E) or decimal exponent (e3, E-2).
// cpu is converted with MilliValue(), every other resource with Value(); both
// round up (towards +infinity) when the quantity has more precision.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace bulkscore {

// Parses `text` and returns value * 10^scale rounded up, e.g. scale 0 for
// Value(), scale 3 for MilliValue(). Throws InputError("bad quantity ...")
// on a malformed string, and on values that do not fit int64 (upstream would
// saturate; bulkscore refuses them instead: they are never real capacities).
int64_t parse_quantity_scaled(std::string_view text, int scale);

// The amount bulkscore stores for resource `name`: millicores for "cpu",
// Value() for everything else.
int64_t parse_resource_quantity(std::string_view name, std::string_view text);

}  // namespace bulkscore
