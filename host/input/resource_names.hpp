// Resource-name classes as the scheduler and the API server bucket them.
#pragma once

#include <string_view>

namespace bulkscore {

// hugepages-*, extended, kubernetes.io/*, attachable-volumes-*
bool is_scalar_resource_name(std::string_view name);
// Outside kubernetes.io/, with a domain ('/'), not a quota name (requests.*).
bool is_extended_resource_name(std::string_view name);
bool is_hugepages_resource_name(std::string_view name);

}  // namespace bulkscore
