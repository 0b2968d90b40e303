#include "plugins/reserve.hpp"

#include <algorithm>
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

// Whether the profile runs plugin P: its filter list for a plugin with a
// Filter, else its score list.
template <class P>
bool enabled_in(const ProfileConfig& profile) {
  const std::string name = P::kName;
  if (P::kHasFilter) return std::find(profile.filter.begin(), profile.filter.end(), name) != profile.filter.end();
  return std::any_of(profile.score.begin(), profile.score.end(), [&](const PluginEntry& e) { return e.name == name; });
}

template <class Fn, class... Ps>
void for_each_plugin(PluginList<Ps...>, Fn&& fn) {
  (fn(Ps{}), ...);
}

}  // namespace

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

void unreserve_pod(const ReserveContext& ctx, const Reservation& r) {
  // Reverse order: the pack expanded into a list of calls run backwards.
  std::vector<void (*)(const ReserveContext&, const Reservation&)> calls;
  for_each_plugin(Plugins{}, [&](auto p) {
    using P = decltype(p);
    if constexpr (HasUnreserve<P>::value)
      calls.push_back([](const ReserveContext& c0, const Reservation& res) {
        ReserveContext c = c0;
        c.enabled = enabled_in<P>(c0.profile);
        P::unreserve(c, res);
      });
  });
  for (auto it = calls.rbegin(); it != calls.rend(); ++it) (*it)(ctx, r);
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
