#include "host/input/device_groups.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cctype>

#include "host/common.hpp"
#include "host/input/devices.hpp"
#include "host/input/quote.hpp"

namespace bulkscore {
namespace {

void push_device(std::vector<int32_t>& out, int64_t v, const std::string& what, const std::string& where) {
  if (v < 0 || v >= static_cast<int64_t>(kMaxDevicesPerNode))
    throw InputError(where + ": device " + what + " must be an index in 0.." + std::to_string(kMaxDevicesPerNode - 1));
  if (std::find(out.begin(), out.end(), static_cast<int32_t>(v)) != out.end())
    throw InputError(where + ": device " + what + " is listed twice");
  out.push_back(static_cast<int32_t>(v));
}

}  // namespace

std::string visible_devices_env(const std::string& resource) {
  const size_t slash = resource.find('/');
  const std::string domain = slash == std::string::npos ? std::string() : resource.substr(0, slash);
  const std::string vendor = domain.substr(0, domain.find('.'));
  if (vendor == "nvidia") return "NVIDIA_VISIBLE_DEVICES";
  if (vendor == "amd") return "AMD_VISIBLE_DEVICES";
  if (vendor == "huawei") return "ASCEND_VISIBLE_DEVICES";
  std::string name = slash == std::string::npos ? resource : vendor + "_" + resource.substr(slash + 1);
  for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::toupper(c)) : '_';
  return name + "_VISIBLE_DEVICES";
}

std::string format_device_list(const std::vector<int32_t>& devices) {
  std::string out;
  for (size_t i = 0; i < devices.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(devices[i]);
  }
  return out;
}

std::vector<int32_t> parse_device_list(const std::string& text, const std::string& where) {
  std::vector<int32_t> out;
  // "": no devices (a group left with none of a resource it asks for).
  if (text.find_first_not_of(' ') == std::string::npos) return out;
  size_t at = 0;
  while (at <= text.size()) {
    size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    std::string entry = text.substr(at, end - at);
    // "0, 1" as people write it by hand.
    const size_t first = entry.find_first_not_of(' '), last = entry.find_last_not_of(' ');
    entry = first == std::string::npos ? std::string() : entry.substr(first, last - first + 1);
    const bool digits = !entry.empty() && entry.size() <= 3 &&
                        std::all_of(entry.begin(), entry.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits)
      throw InputError(where + ": device " + quote_for_message(entry) + " is not a decimal device index (in " +
                       quote_for_message(text) + ")");
    push_device(out, std::stoll(entry), quote_for_message(entry), where);
    at = end + 1;
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string format_group_devices(const GroupDevices& devices) {
  std::string out = "{";
  bool first = true;
  for (const auto& [resource, list] : devices) {
    if (!first) out += ',';
    first = false;
    // Resource names are qualified names: no character JSON must escape.
    out += '"' + resource + "\":\"" + format_device_list(list) + '"';
  }
  return out + "}";
}

GroupDevices parse_group_devices(const std::string& json, const std::string& where) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(json).get(root) != simdjson::SUCCESS)
    throw InputError(where + ": expected a JSON object of resource name to device list, got " +
                     quote_for_message(json));
  simdjson::dom::object obj;
  if (root.get_object().get(obj) != simdjson::SUCCESS)
    throw InputError(where + ": expected a JSON object of resource name to device list, got " +
                     quote_for_message(json));
  GroupDevices out;
  for (const auto field : obj) {
    const std::string resource(field.key);
    const std::string at = where + "[" + quote_for_message(resource) + "]";
    if (resource.empty()) throw InputError(where + ": an empty resource name");
    std::vector<int32_t> list;
    std::string_view text;
    simdjson::dom::array items;
    if (field.value.get_string().get(text) == simdjson::SUCCESS) {
      list = parse_device_list(std::string(text), at);
    } else if (field.value.get_array().get(items) == simdjson::SUCCESS) {
      for (const auto item : items) {
        int64_t v = 0;
        if (item.get_int64().get(v) != simdjson::SUCCESS) throw InputError(at + ": expected device indices (integers)");
        push_device(list, v, std::to_string(v), at);
      }
      std::sort(list.begin(), list.end());
    } else {
      throw InputError(at + ": expected a device list such as \"0,1\"");
    }
    if (!out.emplace(resource, std::move(list)).second) throw InputError(at + ": the resource is listed twice");
  }
  return out;
}

std::string pod_device_group(const Pod& pod, const DeviceGroupModel& model) {
  const auto it = pod.annotations.find(model.group_annotation);
  if (it == pod.annotations.end()) return {};
  if (it->second.empty())
    throw_bad_annotation(pod, model.group_annotation, it->second, "must name a SharedDeviceGroup");
  return it->second;
}

GroupDevices pod_group_devices(const Pod& pod, const DeviceGroupModel& model) {
  const auto it = pod.annotations.find(model.devices_annotation);
  if (it == pod.annotations.end()) return {};
  return parse_group_devices(it->second, pod.origin + ": pod " + quote_for_message(pod.key()) +
                                             ": metadata.annotations[" + quote_for_message(model.devices_annotation) +
                                             "]");
}

void annotate_group_devices(Pod& pod, const DeviceGroupModel& model, const GroupDevices& devices) {
  pod.annotations[model.devices_annotation] = format_group_devices(devices);
  for (const auto& [resource, list] : devices)
    pod.annotations[model.env_annotation_prefix + visible_devices_env(resource)] = format_device_list(list);
}

}  // namespace bulkscore
