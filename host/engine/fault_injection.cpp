#include "host/engine/fault_injection.hpp"

#include <charconv>
#include <string_view>
#include <system_error>

#include "host/common.hpp"

namespace bulkscore {

namespace {

constexpr const char* kPointNames[] = {"filter", "prescore", "tie", "lists", "state", "preempt"};
static_assert(sizeof kPointNames / sizeof kPointNames[0] == static_cast<size_t>(FaultPoint::kCount));

constexpr const char* kPointWhat[] = {
    "after the filter kernels were queued",
    "after the feasible-set PreScore's arena was uploaded",
    "in the random tie-break's draw, the tied nodes' copy queued",
    "while the per-node lists were copied back",
    "growing a cache state's score lists: out of memory",
    "after the preemption dry-run kernel was queued",
};

}  // namespace

const char* fault_point_name(FaultPoint p) {
  return p < FaultPoint::kCount ? kPointNames[static_cast<size_t>(p)] : "?";
}

FaultInjection FaultInjection::parse(const char* spec) {
  FaultInjection f;
  if (!spec || !*spec) return f;
  const std::string_view s(spec);
  const size_t colon = s.find(':');
  const std::string_view n = s.substr(0, colon);
  const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), f.at);
  if (ec != std::errc() || end != n.data() + n.size() || n.empty())
    throw InputError("BULKSCORE_CUDA_FAULT_AT=\"" + std::string(s) +
                     "\": expected N or N:POINT (N a whole number, POINT one of filter, prescore, tie, lists, state, preempt)");
  if (colon == std::string_view::npos) return f;
  const std::string_view name = s.substr(colon + 1);
  for (size_t i = 0; i < static_cast<size_t>(FaultPoint::kCount); ++i)
    if (name == kPointNames[i]) {
      f.point = static_cast<FaultPoint>(i);
      return f;
    }
  throw InputError("BULKSCORE_CUDA_FAULT_AT=\"" + std::string(s) + "\": unknown point \"" + std::string(name) +
                   "\" (expected filter, prescore, tie, lists, state or preempt)");
}

std::string FaultInjection::message(const char* who) const {
  return std::string(who) + ": injected fault (BULKSCORE_CUDA_FAULT_AT=" + std::to_string(at) + ":" +
         fault_point_name(point) + ") " + kPointWhat[static_cast<size_t>(point)];
}

}  // namespace bulkscore
