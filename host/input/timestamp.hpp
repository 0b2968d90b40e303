// RFC 3339 timestamps, as metav1.Time writes them ("2026-11-26T21:37:05Z",
// with an optional fraction of a second and a numeric offset), to
// nanoseconds since the Unix epoch (host only).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace bulkscore {

// nullopt when `text` is not an RFC 3339 date-time (or is out of int64 range).
std::optional<int64_t> parse_rfc3339_ns(std::string_view text);

// The inverse, in UTC with nanoseconds ("2026-11-26T21:37:05.000000123Z";
// whole seconds without a fraction).
std::string format_rfc3339_ns(int64_t ns);

}  // namespace bulkscore
