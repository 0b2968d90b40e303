#include "host/input/resource_names.hpp"

namespace bulkscore {

bool is_hugepages_resource_name(std::string_view name) { return name.rfind("hugepages-", 0) == 0; }

bool is_extended_resource_name(std::string_view name) {
  // Native names live in kubernetes.io/ (or have no domain); quota names
  // ("requests.*") are not resources a node offers.
  if (name.find("kubernetes.io/") != std::string_view::npos) return false;
  if (name.find('/') == std::string_view::npos) return false;
  if (name.rfind("requests.", 0) == 0) return false;
  return true;
}

bool is_scalar_resource_name(std::string_view name) {
  return is_extended_resource_name(name) || is_hugepages_resource_name(name) ||
         name.find("kubernetes.io/") != std::string_view::npos || name.rfind("attachable-volumes-", 0) == 0;
}

}  // namespace bulkscore
