// Kubernetes name rules (apimachinery's util/validation), in one place: the
// config's validation and the plugins' selector parsing both use them.
//
// The *_problem functions return "" for a valid value, else what is wrong,
// worded as apimachinery words it (the first problem only); the predicates
// are the same rules as booleans.
#pragma once

#include <string>
#include <string_view>

#include "host/input/model.hpp"

namespace bulkscore {

// IsDNS1123Subdomain: at most 253 characters of lower-case alphanumerics,
// '-' and '.', each '.'-separated part starting and ending alphanumeric.
// (apimachinery puts no 63-character limit on the parts of a subdomain.)
std::string dns1123_subdomain_problem(std::string_view s);
bool is_dns1123_subdomain(std::string_view s);

// IsDNS1123Label (namespace names): at most 63 characters of lower-case
// alphanumerics and '-', starting and ending alphanumeric.
std::string dns1123_label_problem(std::string_view s);

// IsDNS1035Label (Service names): as a DNS-1123 label, but starting with a
// letter.
std::string dns1035_label_problem(std::string_view s);

// IsQualifiedName (label keys, topology keys, resource names):
// [prefix/]name, prefix a DNS-1123 subdomain, name 1..63 characters of
// alphanumerics, '-', '_', '.', starting and ending alphanumeric.
std::string qualified_name_problem(std::string_view k);
bool is_qualified_name(std::string_view k);

// IsValidLabelValue: empty, or a name part as above (at most 63 characters).
std::string label_value_problem(std::string_view v);
bool is_valid_label_value(std::string_view v);

// labels.Selector semantics of a LabelSelector whose operators are valid
// (In, NotIn, Exists, DoesNotExist): matchLabels as In with one value; an
// empty selector matches every label set.
bool selector_matches(const LabelSelector& sel, const StringMap& labels);

}  // namespace bulkscore
