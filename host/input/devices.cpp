#include "host/input/devices.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "host/common.hpp"
#include "host/input/pod_resources.hpp"
#include "host/input/quote.hpp"

namespace bulkscore {
namespace {

// A non-negative decimal integer without sign or spaces, at most `max`.
std::optional<int64_t> parse_decimal(const std::string& s, int64_t max) {
  if (s.empty() || s.size() > 10) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v > max) return std::nullopt;
  return v;
}

const std::string* annotation(const Pod& pod, const std::string& key) {
  if (key.empty()) return nullptr;
  const auto it = pod.annotations.find(key);
  return it == pod.annotations.end() ? nullptr : &it->second;
}

}  // namespace

void throw_bad_annotation(const Pod& pod, const std::string& key, const std::string& value, const std::string& why) {
  throw InputError(pod.origin + ": pod " + quote_for_message(pod.key()) + ": metadata.annotations[" +
                   quote_for_message(key) + "]: " + why + ", got " + quote_for_message(value));
}

DeviceDemand pod_device_demand(const Pod& pod, const DeviceModel& model) {
  DeviceDemand d;
  const std::string* count = annotation(pod, model.count_annotation);
  const std::string* milli = annotation(pod, model.milli_annotation);
  if (count) {
    const auto v = parse_decimal(*count, kMaxDevicesPerNode);
    if (!v)
      throw_bad_annotation(pod, model.count_annotation, *count,
                           "must be a decimal integer of devices in 0.." + std::to_string(kMaxDevicesPerNode));
    d.count = static_cast<int32_t>(*v);
  }
  if (milli) {
    const auto v = parse_decimal(*milli, kMaxDeviceUnits);
    if (!v || *v == 0)
      throw_bad_annotation(pod, model.milli_annotation, *milli,
                           "must be a decimal integer of units per device in 1.." + std::to_string(kMaxDeviceUnits));
    // A share without a count is a share of one device (gpushare-style
    // clusters annotate the share only).
    if (!count) d.count = 1;
    d.milli = d.count > 0 ? static_cast<int32_t>(*v) : 0;
  } else if (d.count > 0) {
    d.milli = kWholeDevice;
  }
  // Whole devices through the extended resource (nvidia.com/gpu: 2).
  const ResourceList requests = pod_requests(pod);
  const auto req = requests.find(model.count_resource);
  if (req != requests.end() && req->second > 0) {
    if ((count || milli) && d.count != req->second) {
      const std::string& key = count ? model.count_annotation : model.milli_annotation;
      throw_bad_annotation(pod, key, count ? *count : *milli,
                           "asks for " + std::to_string(d.count) +
                               " device(s), which contradicts the containers' request of " +
                               std::to_string(req->second) + " " + model.count_resource);
    }
    if (req->second > static_cast<int64_t>(kMaxDevicesPerNode))
      throw InputError(pod.origin + ": pod " + quote_for_message(pod.key()) + ": requests " +
                       std::to_string(req->second) + " " + model.count_resource + ", more than the " +
                       std::to_string(kMaxDevicesPerNode) + " devices a node may have");
    if (!count && !milli) {
      d.count = static_cast<int32_t>(req->second);
      d.milli = kWholeDevice;
    }
  }
  if (d.count == 0) d.milli = 0;
  if (const std::string* models = annotation(pod, model.model_annotation)) {
    if (d.count > 0) {
      size_t start = 0;
      while (true) {
        const size_t bar = models->find('|', start);
        std::string one = models->substr(start, bar == std::string::npos ? std::string::npos : bar - start);
        if (one.empty())
          throw_bad_annotation(pod, model.model_annotation, *models, "must list card models separated by '|'");
        d.models.push_back(std::move(one));
        if (bar == std::string::npos) break;
        start = bar + 1;
      }
      std::sort(d.models.begin(), d.models.end());
      d.models.erase(std::unique(d.models.begin(), d.models.end()), d.models.end());
    }
  }
  return d;
}

std::vector<int32_t> pod_device_indices(const Pod& pod, const DeviceModel& model) {
  std::vector<int32_t> out;
  const std::string* text = annotation(pod, model.index_annotation);
  if (!text) return out;
  size_t start = 0;
  while (true) {
    const size_t dash = text->find('-', start);
    const std::string one = text->substr(start, dash == std::string::npos ? std::string::npos : dash - start);
    const auto v = parse_decimal(one, kMaxDevicesPerNode - 1);
    if (!v)
      throw_bad_annotation(
          pod, model.index_annotation, *text,
          "must list device indices in 0.." + std::to_string(kMaxDevicesPerNode - 1) + " separated by '-'");
    if (std::find(out.begin(), out.end(), static_cast<int32_t>(*v)) != out.end())
      throw_bad_annotation(pod, model.index_annotation, *text, "lists device " + one + " twice");
    out.push_back(static_cast<int32_t>(*v));
    if (dash == std::string::npos) break;
    start = dash + 1;
  }
  return out;
}

std::vector<TypicalTask> typical_tasks(const std::vector<Pod>& pods, const DeviceModel& model, double popularity) {
  using Key = std::tuple<int64_t, int32_t, int32_t, std::vector<std::string>>;
  std::map<Key, int64_t> counts;
  for (const Pod& pod : pods) {
    const DeviceDemand d = pod_device_demand(pod, model);
    const ResourceList requests = pod_requests(pod);
    const auto cpu = requests.find("cpu");
    counts[Key{cpu == requests.end() ? 0 : cpu->second, d.milli, d.count, d.models}] += 1;
  }
  std::vector<std::pair<Key, int64_t>> groups(counts.begin(), counts.end());
  // Largest first; equal sizes: the larger key first (a total order, so
  // the list does not depend on the sort's stability).
  std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
    if (a.second != b.second) return a.second > b.second;
    return b.first < a.first;
  });
  const double wanted = popularity * static_cast<double>(pods.size());
  int64_t kept = 0;
  size_t n = 0;
  while (n < groups.size() && static_cast<double>(kept) < wanted) kept += groups[n++].second;
  std::vector<TypicalTask> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    TypicalTask t;
    std::tie(t.cpu_milli, t.milli, t.count, t.models) = groups[i].first;
    t.weight = static_cast<double>(groups[i].second) / static_cast<double>(kept);
    out.push_back(std::move(t));
  }
  return out;
}

std::string format_device_indices(const std::vector<int32_t>& indices) {
  std::string s;
  for (size_t i = 0; i < indices.size(); ++i) s += (i ? "-" : "") + std::to_string(indices[i]);
  return s;
}

}  // namespace bulkscore
