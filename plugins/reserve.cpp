#include "plugins/reserve.hpp"

#include <algorithm>
#include <string_view>
#include <type_traits>

#include "host/input/config.hpp"
#include "plugins/registry.hpp"

namespace bulkscore {

namespace {

template <class P, class = void>
struct HasReserve : std::false_type {};
template <class P>
struct HasReserve<P, std::void_t<decltype(&P::reserve)>> : std::true_type {};
template <class P, class = void>
struct HasUnreserve : std::false_type {};
template <class P>
struct HasUnreserve<P, std::void_t<decltype(&P::unreserve)>> : std::true_type {};
template <class P, class = void>
struct HasPermit : std::false_type {};
template <class P>
struct HasPermit<P, std::void_t<decltype(&P::permit)>> : std::true_type {};

template <class P, class = void>
struct HasAdjustProfile : std::false_type {};
template <class P>
struct HasAdjustProfile<P, std::void_t<decltype(&P::adjust_profile)>> : std::true_type {};
template <class P, class = void>
struct ReadsDevices : std::false_type {};
template <class P>
struct ReadsDevices<P, std::void_t<decltype(P::kReadsDevices)>> : std::bool_constant<P::kReadsDevices> {};
template <class P, class = void>
struct ReadsDeviceGroups : std::false_type {};
template <class P>
struct ReadsDeviceGroups<P, std::void_t<decltype(P::kReadsDeviceGroups)>>
    : std::bool_constant<P::kReadsDeviceGroups> {};

// Whether the profile runs plugin P: its filter list for a plugin with a
// Filter, else its score list.
template <class P>
bool enabled_in(const ProfileConfig& profile) {
  const std::string_view name = P::kName;  // not a string: reserve_pod asks on every pod
  if (P::kHasFilter) return std::find(profile.filter.begin(), profile.filter.end(), name) != profile.filter.end();
  return std::any_of(profile.score.begin(), profile.score.end(), [&](const PluginEntry& e) { return e.name == name; });
}

template <class Fn, class... Ps>
void for_each_plugin(PluginList<Ps...>, Fn&& fn) {
  (fn(Ps{}), ...);
}

}  // namespace

ProfileNeeds profile_needs(const ProfileConfig& profile) {
  ProfileNeeds out;
  for_each_plugin(Plugins{}, [&](auto p) {
    using P = decltype(p);
    if constexpr (ReadsDevices<P>::value)
      if (enabled_in<P>(profile)) out.devices = true;
    if constexpr (ReadsDeviceGroups<P>::value)
      if (enabled_in<P>(profile)) out.device_groups = true;
  });
  return out;
}

void adjust_profile(ProfileConfig& profile) {
  for_each_plugin(Plugins{}, [&](auto p) {
    using P = decltype(p);
    if constexpr (HasAdjustProfile<P>::value)
      if (enabled_in<P>(profile)) P::adjust_profile(profile);
  });
}

void reserve_pod(const ReserveContext& ctx, Reservation& out, Pod* assumed) {
  for_each_plugin(Plugins{}, [&](auto p) {
    using P = decltype(p);
    if constexpr (HasReserve<P>::value) {
      ReserveContext c = ctx;
      c.enabled = enabled_in<P>(ctx.profile);
      P::reserve(c, out, assumed);
    }
  });
}

void unreserve_pod(const ReserveContext& ctx, Snapshot& snap, const Reservation& r) {
  // Reverse order: the plugins with unreserve() listed, then called backwards.
  using Call = void (*)(const ReserveContext&, Snapshot&, const Reservation&);
  std::vector<Call> calls;
  for_each_plugin(Plugins{}, [&](auto p) {
    using P = decltype(p);
    if constexpr (HasUnreserve<P>::value)
      calls.push_back([](const ReserveContext& c0, Snapshot& s, const Reservation& res) {
        ReserveContext c = c0;
        c.enabled = enabled_in<P>(c0.profile);
        P::unreserve(c, s, res);
      });
  });
  for (auto it = calls.rbegin(); it != calls.rend(); ++it) (*it)(ctx, snap, r);
}

PermitStatus permit_pod(const ReserveContext& ctx, const Reservation& r) {
  PermitStatus out;
  for_each_plugin(Plugins{}, [&](auto p) {
    using P = decltype(p);
    if constexpr (HasPermit<P>::value) {
      if (out.code == PermitCode::kReject || !enabled_in<P>(ctx.profile)) return;
      ReserveContext c = ctx;
      c.enabled = true;
      PermitStatus s = P::permit(c, r);
      if (s.code == PermitCode::kReject || (s.code == PermitCode::kWait && out.code == PermitCode::kAllow)) out = s;
    }
  });
  return out;
}

}  // namespace bulkscore
