// YAML to JSON for the scheduler_perf files and the object templates (host
// only, internal to bench/perf): plain scalars by the YAML 1.2 core schema,
// errors as InputError naming the file and the line.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace bulkscore::perf_detail {

// The YAML 1.2 core schema's classes of plain scalars.
enum class PlainKind { String, Null, Bool, Int, Float };
PlainKind classify_plain(std::string_view s);
// JSON text for a plain scalar already classified Int; "" when it does not fit.
std::string int_json_text(std::string_view s);
// The value of a plain scalar classified Int (decimal with an optional sign,
// 0o octal, 0x hex), over std::from_chars; nullopt when it does not fit int64.
std::optional<int64_t> yaml_int_value(std::string_view s);
// JSON text for a plain scalar classified Float; "" for inf/nan.
std::string float_json_text(std::string_view s);

// The 1-based line of a node, 0 when unknown; "file:line" (or "file").
int yaml_line(const YAML::Node& n);
std::string at_line(const std::string& file, const YAML::Node& n);
// A scalar without a tag (plain) or explicitly tagged as a string.
bool is_plain(const YAML::Node& n);
bool is_str_tagged(const YAML::Node& n);
// "a mapping", "a list", "null", the quoted scalar: for error messages.
std::string describe(const YAML::Node& n);

// Appends `n` as JSON to `out`.
void emit_json(const YAML::Node& n, std::string& out, const std::string& origin, int depth = 0);
// Parses `text`, which must hold exactly one YAML document.
YAML::Node load_one_document(const std::string& text, const std::string& origin);

}  // namespace bulkscore::perf_detail
