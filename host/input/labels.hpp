// Kubernetes label syntax checks (apimachinery validation), used where the
// scheduler's selector parsing rejects a requirement.
#pragma once

#include <string_view>

namespace bulkscore {

// A label value: empty, or at most 63 characters, alphanumeric at both ends,
// '-', '_', '.' inside.
bool is_valid_label_value(std::string_view v);

// A qualified name (label key): [prefix/]name, prefix a DNS subdomain of at
// most 253 characters, name as a label value but non-empty.
bool is_qualified_name(std::string_view k);

}  // namespace bulkscore
